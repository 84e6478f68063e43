//! Report rendering: one view of the report, rendered as Markdown (handlebars, escaping off,
//! strict mode: what an instructor reads, the long tail left to the JSON) and as a
//! self-contained HTML page (handlebars with HTML escaping: the same structure, the long tail
//! folded), written atomically with the JSON sidecar beside them.
//!
//! Judge arguments, evidence text and error messages are untrusted: for the Markdown every piece
//! is neutralised so it cannot change the structure (headings, code fences, block quotes, lists,
//! tables, links, raw HTML; see [`inline`]); for the HTML it is plain text that the template
//! escapes (no triple-stash in `prompts/report.html.hbs`).

use crate::model::{
    AuditReport, CriterionFlag, CriterionResult, Evidence, EvidenceKind, Judge, JudgeMode,
    JudicialOpinion, OpinionSource, RunMetadata, Stage,
};
use handlebars::Handlebars;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The report template shipped in the binary.
pub const DEFAULT_TEMPLATE: &str = include_str!("../prompts/report.md.hbs");

/// The HTML rendering's template (HTML-escaping on: every value is text, never markup).
pub const HTML_TEMPLATE: &str = include_str!("../prompts/report.html.hbs");

/// How much of a judge's opinion the Markdown shows (whole sentences, about this many
/// characters); the full text is in the JSON sidecar and folded in the HTML.
const BRIEF_OPINION: usize = 320;

/// How many located fix lines of a criterion the Markdown shows, and how long each may be
/// (the HTML and the JSON have them all, whole).
const FIX_LINES: usize = 3;
const FIX_MAX: usize = 180;

/// What the untrusted text is rendered into.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Markup {
    /// Markdown: made [`inline`] (cannot open a block, a link or raw HTML).
    Markdown,
    /// HTML through handlebars' escaping: made [`plain`] here, escaped by the template.
    Html,
}

impl Markup {
    fn text(self, s: &str) -> String {
        match self {
            Markup::Markdown => inline(s),
            Markup::Html => plain(s),
        }
    }

    fn lines(self, s: &str) -> Vec<String> {
        match self {
            Markup::Markdown => lines(s),
            Markup::Html => s
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(plain)
                .collect(),
        }
    }
}

/// Untrusted text for one line of HTML (escaped afterwards by the template): whitespace
/// collapsed, control characters and bidirectional overrides replaced by `\u{FFFD}`.
fn plain(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| {
            if c.is_control() || is_bidi_control(c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// The first sentences of `text` within about `max` characters, cut after a sentence when one
/// ends in the second half, else at a word (with an ellipsis); never mid-word.
fn brief(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let head: String = one_line.chars().take(max).collect();
    let sentence_end = head
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .filter(|&i| i >= head.len() / 2)
        .last();
    match sentence_end {
        Some(i) => format!("{} …", &head[..i]),
        None => crate::tally::short(&one_line, max),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("the report template is invalid: {0}. Fix the template (prompts/report.md.hbs).")]
    Template(#[source] Box<handlebars::TemplateError>),
    #[error("cannot render the report: {0}. The template uses a field the report does not have.")]
    Render(#[source] Box<handlebars::RenderError>),
    #[error("cannot serialise the JSON sidecar: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "the stored JSON sidecar does not have the expected shape (report, evidence, judge_failures, repo, pdf): {0}. It was written by another version: grade the submission again"
    )]
    Sidecar(#[source] serde_json::Error),
    #[error("cannot write {path}: {source}. Check that the directory is writable.")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the report path {0} would make the Markdown and its JSON sidecar or HTML rendering the same file; give a path ending in .md"
    )]
    PathCollision(String),
}

/// Neutralises untrusted text for one line of Markdown: whitespace (newlines included) is
/// collapsed, backticks, `|`, brackets and backslashes are escaped (no links, no remote
/// images), `<` becomes `&lt;` (no raw HTML), control characters (ESC, BEL, ... which a
/// terminal would obey on `cat report.md`) and bidirectional overrides become `\u{FFFD}`, and a
/// leading character that would open a block (heading, quote, list, fence, setext underline,
/// table) is escaped.
pub fn inline(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(collapsed.len() + 8);
    for c in collapsed.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '`' => out.push_str("\\`"),
            '|' => out.push_str("\\|"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '<' => out.push_str("&lt;"),
            c if c.is_control() || is_bidi_control(c) => out.push('\u{FFFD}'),
            _ => out.push(c),
        }
    }
    escape_block_start(out)
}

/// Characters that reorder the text around them when displayed ("Trojan Source").
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn escape_block_start(line: String) -> String {
    let Some(first) = line.chars().next() else {
        return line;
    };
    if matches!(first, '#' | '>' | '-' | '+' | '*' | '=' | '~' | '_' | '[') {
        return format!("\\{line}");
    }
    // "1. item" / "1) item" would start an ordered list.
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        let rest = &line[digits..];
        if rest.starts_with(". ") || rest.starts_with(") ") || rest == "." || rest == ")" {
            return format!("{}\\{}", &line[..digits], rest);
        }
    }
    line
}

/// Neutralises untrusted multi-line text: each non-empty line is made [`inline`] (so it keeps
/// its line but cannot open a block); empty lines are dropped.
pub fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(inline)
        .collect()
}

use crate::words::count;

#[derive(Serialize)]
struct View {
    repo: String,
    commit: String,
    verdict: String,
    overall: String,
    /// The PDF read, as a code span's content (empty: none).
    pdf_path: String,
    pdf_in_repo: bool,
    table: Vec<RowView>,
    findings: Vec<FindingView>,
    rubric_name: String,
    rubric_version: String,
    rubric_source: String,
    rubric_sha256: String,
    prompts: String,
    judge_mode: String,
    vision_model: String,
    tokens: String,
    started_at: String,
    duration: String,
    auditor_version: String,
    summary: Vec<String>,
    criteria: Vec<CriterionView>,
    plan: Vec<PlanView>,
    errors: Vec<ErrorView>,
}

#[derive(Serialize)]
struct CriterionView {
    number: usize,
    name: String,
    id: String,
    score: String,
    /// 1..=5, 0 when not assessed (the HTML colours by it).
    level: u8,
    flags: Vec<FlagView>,
    opinions_summary: String,
    opinions: Vec<OpinionView>,
    deciding: Vec<EvidenceView>,
    evidence: Vec<EvidenceView>,
    evidence_count: String,
    dissent: Vec<String>,
    rules: Vec<RuleView>,
    /// The fix lines, grouped by instruction, and the rubric's target: in the Markdown the first
    /// few, shortened; in the HTML all of them, whole.
    fix: Vec<FixView>,
    /// "and N more fixes ..." when the Markdown leaves some out.
    fix_more: String,
}

#[derive(Serialize)]
struct FixView {
    /// Where, each as a code span's content (none: the line names no place in the
    /// submission; several: the same instruction at each).
    locations: Vec<String>,
    text: String,
}

#[derive(Serialize)]
struct RowView {
    number: usize,
    name: String,
    /// `3/5` or `not assessed`.
    score: String,
    /// 1..=5, 0 when not assessed.
    level: u8,
    prosecutor: String,
    defense: String,
    tech_lead: String,
    flags: String,
}

#[derive(Serialize)]
struct FindingView {
    number: usize,
    name: String,
    score: String,
    lost: String,
    text: String,
    location: String,
}

#[derive(Serialize)]
struct EvidenceView {
    mark: &'static str,
    /// `bad`, `good` or `missing` (the HTML's class).
    class: &'static str,
    location: String,
    text: String,
}

#[derive(Serialize)]
struct FlagView {
    kind: &'static str,
    text: String,
}

#[derive(Serialize)]
struct OpinionView {
    judge: &'static str,
    score: u8,
    source: String,
    /// A few sentences (the Markdown's).
    brief: String,
    /// The whole argument, one entry per line (the HTML folds it).
    argument: Vec<String>,
}

#[derive(Serialize)]
struct RuleView {
    rule: &'static str,
    detail: String,
}

#[derive(Serialize)]
struct PlanView {
    rank: usize,
    name: String,
    impact: String,
    /// The criterion's number in the breakdown, where its fix is.
    number: usize,
}

#[derive(Serialize)]
struct ErrorView {
    stage: &'static str,
    dimensions: String,
    message: String,
}

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::RepoInvestigator => "RepoInvestigator",
        Stage::DocAnalyst => "DocAnalyst",
        Stage::VisionInspector => "VisionInspector",
        Stage::EvidenceAggregator => "EvidenceAggregator",
        Stage::Judge => "Judge",
        Stage::ChiefJustice => "ChiefJustice",
        Stage::Report => "Report",
    }
}

fn flag_view(flag: &CriterionFlag, m: Markup) -> FlagView {
    match flag {
        CriterionFlag::EvidenceMissing { reason } => FlagView {
            kind: "EVIDENCE MISSING",
            text: m.text(reason),
        },
        CriterionFlag::NodeFailure { stage, reason } => FlagView {
            kind: "NODE FAILURE",
            text: m.text(&format!("{}: {reason}", stage_name(*stage))),
        },
        CriterionFlag::JudgeFailed { judge, reason } => FlagView {
            kind: "JUDGE FAILED",
            text: m.text(&format!("{}: {reason}", judge.title())),
        },
        CriterionFlag::NeedsHumanReview { reason } => FlagView {
            kind: "NEEDS HUMAN REVIEW",
            text: m.text(reason),
        },
        CriterionFlag::NotAssessed { reason } => FlagView {
            kind: "NOT ASSESSED (grader-side, no score)",
            text: m.text(reason),
        },
    }
}

/// The fix lines of a criterion: a line that starts with a place in the submission
/// (`/abs/repo/src/a.py:3: implement ...`) shows it the way the report's locations are shown
/// (`src/a.py:3`) apart from the instruction. `brief`: the instruction is shortened (never
/// mid-word) to the given length, and to the instruction alone (without what the detective
/// found) where its location is among the given deciding evidence, which says it already.
fn fixes(remediation: &str, places: Places, m: Markup, brief: (usize, &[String])) -> Vec<FixView> {
    remediation
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let ours = |loc: &str| {
                let repo = places.repo.trim_end_matches('/');
                (!repo.is_empty() && loc.starts_with(repo))
                    || places
                        .pdf
                        .is_some_and(|p| !p.is_empty() && loc.starts_with(p))
                    || (!loc.contains(' ') && loc.contains(['/', '.']))
                    || (loc.len() == 40 && loc.chars().all(|c| c.is_ascii_hexdigit()))
            };
            let (location_text, rest) = match line.split_once(": ") {
                Some((loc, rest)) if ours(loc) => (location(loc, places), rest),
                _ => (String::new(), line),
            };
            let (n, shown) = brief;
            // the rubric's target (what good looks like) may run a little longer than a fix
            let n = if rest.starts_with("Target:") {
                n.max(FIX_MAX + 40)
            } else {
                n
            };
            let rest = if shown.contains(&location_text) {
                instruction(rest)
            } else {
                rest
            };
            // a sentence ending in a shortened quotation does not end twice ("on…." → "on…")
            let rest = crate::tally::short(rest, n).replace("….", "…");
            FixView {
                locations: if location_text.is_empty() {
                    vec![]
                } else {
                    vec![location_text]
                },
                text: m.text(&rest),
            }
        })
        .collect()
}

/// The same instruction at several places becomes one line naming each place once, at the
/// first line's position.
fn grouped(lines: Vec<FixView>) -> Vec<FixView> {
    let mut out: Vec<FixView> = Vec::new();
    for f in lines {
        match out.iter_mut().find(|g| g.text == f.text) {
            Some(g) => {
                for l in f.locations {
                    if !g.locations.contains(&l) {
                        g.locations.push(l);
                    }
                }
            }
            None => out.push(f),
        }
    }
    out
}

/// The instruction of a fix line without what the detective found (`implement "X"; the
/// detective found: ...` → `implement "X"`; `make ... agree: "X" (...)` → `make ... agree: "X"`);
/// a line of another shape is kept whole.
fn instruction(rest: &str) -> &str {
    if let Some((head, _)) = rest.split_once("; the detective found: ") {
        return head;
    }
    match rest.find("\" (") {
        Some(i) => &rest[..=i],
        None => rest,
    }
}

/// `1234 ms` → `1.2 s` (rounded, as the summary on stdout says it), `125000 ms` → `2 min 05 s`.
fn duration(ms: u64) -> String {
    if ms < 59_950 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// The few words a flag shows in the criteria table.
fn flag_word(flag: &CriterionFlag) -> &'static str {
    match flag {
        CriterionFlag::EvidenceMissing { .. } => "evidence missing",
        CriterionFlag::NodeFailure { .. } => "detective failed",
        CriterionFlag::JudgeFailed { .. } => "judge failed",
        CriterionFlag::NeedsHumanReview { .. } => "needs review",
        CriterionFlag::NotAssessed { .. } => "not assessed (grader-side)",
    }
}

/// Whether a piece of evidence counts against the criterion: a requirement not found, or a
/// confirmed security finding or contradiction. Evidence the grader could not collect never
/// does. The rank orders them (security and contradictions first).
fn failing_rank(e: &Evidence) -> Option<u8> {
    match e.kind {
        EvidenceKind::SecurityFinding if e.found => Some(0),
        EvidenceKind::Contradiction if e.found => Some(1),
        EvidenceKind::Fact if !e.found => Some(2),
        _ => None,
    }
}

fn failing(evidence: &[Evidence]) -> Vec<&Evidence> {
    let mut f: Vec<(u8, usize, &Evidence)> = evidence
        .iter()
        .enumerate()
        .filter_map(|(i, e)| failing_rank(e).map(|r| (r, i, e)))
        .collect();
    f.sort_by_key(|(r, i, _)| (*r, *i));
    f.into_iter().map(|(_, _, e)| e).collect()
}

/// Where the report's locations point: the audited repository and the PDF that was read.
#[derive(Clone, Copy)]
struct Places<'a> {
    repo: &'a str,
    pdf: Option<&'a str>,
}

/// A location as a reader checks it: a path inside the audited repository relative to it (the
/// PDF too when it is in the repository), a PDF outside it by its file name (`report.pdf p.3`), a commit hash shortened; for a code span (no
/// backticks, one line).
fn location(loc: &str, places: Places) -> String {
    let repo = places.repo.trim_end_matches('/');
    let loc = loc.trim();
    let pdf = places.pdf.filter(|p| !p.is_empty() && loc.starts_with(p));
    let in_repo = loc
        .strip_prefix(repo)
        .filter(|_| !repo.is_empty())
        .and_then(|r| r.strip_prefix('/'));
    let rel = if let Some(rest) = in_repo {
        rest.to_string()
    } else if let Some(pdf) = pdf {
        let name = Path::new(pdf)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| pdf.to_string());
        format!("{name}{}", &loc[pdf.len()..])
    } else if !repo.is_empty() && loc == repo {
        "(repository)".to_string()
    } else if loc.len() == 40 && loc.chars().all(|c| c.is_ascii_hexdigit()) {
        format!("commit {}", &loc[..12])
    } else {
        loc.to_string()
    };
    code_span(&rel)
}

/// Untrusted text for inside a code span: one line, no backtick (it would close the span),
/// no control or bidirectional characters. Nothing else is interpreted inside a code span.
fn code_span(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() || is_bidi_control(c) => '\u{FFFD}',
            c => c,
        })
        .collect()
}

fn evidence_view(e: &Evidence, places: Places, max: Option<usize>, m: Markup) -> EvidenceView {
    let text = crate::tally::fact_text(e);
    let (mark, class) = match (e.kind, e.found) {
        (EvidenceKind::Missing, _) => ("⚪", "missing"),
        _ if failing_rank(e).is_some() => ("❌", "bad"),
        _ => ("✅", "good"),
    };
    EvidenceView {
        mark,
        class,
        location: location(&e.location, places),
        text: m.text(&match max {
            Some(m) => crate::tally::short(&text, m),
            None => text.to_string(),
        }),
    }
}

/// The findings that cost the most points: the criteria that lost the most (rubric order on a
/// tie), each with its first failing evidence; when fewer than three criteria lost points,
/// their further failing evidence fills up to three. At most five.
fn findings(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
    m: Markup,
) -> Vec<FindingView> {
    let mut losing: Vec<(u8, usize, &CriterionResult)> = report
        .criteria
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_assessed())
        .filter_map(|(i, c)| {
            let lost = 5 - c.final_score?.get();
            (lost > 0).then_some((lost, i, c))
        })
        .collect();
    losing.sort_by_key(|(lost, i, _)| (std::cmp::Reverse(*lost), *i));
    // A finding is located: a criterion that lost points without a failing piece of evidence
    // (the judges' readings averaged down) has nothing to point at and is not listed.
    let per: Vec<(u8, usize, &CriterionResult, Vec<&Evidence>)> = losing
        .into_iter()
        .map(|(lost, i, c)| {
            let ev = evidence
                .get(&c.dimension_id)
                .map(|v| failing(v))
                .unwrap_or_default();
            (lost, i, c, ev)
        })
        .filter(|(_, _, _, ev)| !ev.is_empty())
        .collect();
    let finding = |lost: u8, i: usize, c: &CriterionResult, e: &Evidence| FindingView {
        number: i + 1,
        name: m.text(&c.dimension_name),
        score: c
            .final_score
            .map(|s| format!("{}/5", s.get()))
            .unwrap_or_default(),
        lost: count(usize::from(lost), "point", "points"),
        text: m.text(&format!(
            "{}{}",
            match e.kind {
                EvidenceKind::SecurityFinding => "security finding: ",
                EvidenceKind::Contradiction => "contradicted by the code: ",
                _ => "not met: ",
            },
            crate::tally::short(&crate::tally::fact_text(e), 160)
        )),
        location: location(&e.location, places(report)),
    };
    let mut out: Vec<FindingView> = per
        .iter()
        .take(5)
        .map(|(lost, i, c, ev)| finding(*lost, *i, c, ev[0]))
        .collect();
    for (lost, i, c, ev) in &per {
        for e in ev.iter().skip(1) {
            if out.len() >= 3 {
                return out;
            }
            // A further finding of a criterion already listed: its points were counted once.
            let mut more = finding(*lost, *i, c, e);
            more.lost.clear();
            out.push(more);
        }
    }
    out
}

fn places(report: &AuditReport) -> Places<'_> {
    Places {
        repo: &report.repo_url,
        pdf: report.metadata.pdf_path.as_deref(),
    }
}

/// RFC 3339 to the second, in UTC (`2026-11-23 03:20:33 UTC`); anything else as given.
fn when(started_at: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(started_at) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string(),
        Err(_) => plain(started_at),
    }
}

/// The judges a report was graded by, in a few words: "offline judges (…)" or "LLM judges
/// (Prosecutor: model, …)". Plain text; each rendering escapes it.
pub fn judges_label(md: &RunMetadata) -> String {
    match md.judge_mode {
        JudgeMode::Offline => "offline judges (deterministic rules, no LLM)".to_string(),
        JudgeMode::Llm => {
            let models: Vec<String> = md
                .judge_models
                .iter()
                .map(|(p, m)| format!("{p}: {m}"))
                .collect();
            if models.is_empty() {
                "LLM judges".to_string()
            } else {
                format!("LLM judges ({})", models.join(", "))
            }
        }
    }
}

/// The report as both renderings show it (`m` decides what is shortened and how text is
/// neutralised): the top block, the table, the findings, one view per criterion, the plan and
/// the errors.
fn view(report: &AuditReport, evidence: &BTreeMap<String, Vec<Evidence>>, m: Markup) -> View {
    let md = &report.metadata;
    View {
        pdf_path: md
            .pdf_path
            .as_deref()
            .map(|p| code_span(p.strip_prefix("repo:").unwrap_or(p)))
            .unwrap_or_default(),
        pdf_in_repo: md
            .pdf_path
            .as_deref()
            .is_some_and(|p| p.starts_with("repo:")),
        table: report
            .criteria
            .iter()
            .enumerate()
            .map(|(i, c)| row_view(report, evidence, i, c, m))
            .collect(),
        findings: findings(report, evidence, m),
        repo: m.text(&report.repo_url),
        commit: report
            .commit
            .as_deref()
            .map(inline)
            .unwrap_or_else(|| "unknown (the repository could not be read)".to_string()),
        verdict: m.text(&verdict_line(report)),
        overall: match report.overall_score {
            Some(s) => format!("{s:.2}/5"),
            None => "not assessed".to_string(),
        },
        rubric_name: m.text(&md.rubric_name),
        rubric_version: m.text(&md.rubric_version),
        rubric_source: match md.rubric_source.as_str() {
            "<embedded>" => "built into auditor".to_string(),
            other => m.text(other),
        },
        rubric_sha256: m.text(&md.rubric_sha256),
        prompts: match &md.prompts {
            Some(p) => m.text(p),
            None => "none (offline judges)".to_string(),
        },
        judge_mode: m.text(&judges_label(md)),
        vision_model: md.vision_model.as_deref().map(inline).unwrap_or_default(),
        tokens: tokens_line(md),
        started_at: when(&md.started_at),
        duration: duration(md.duration_ms),
        auditor_version: m.text(&md.auditor_version),
        summary: m.lines(&report.executive_summary),
        criteria: report
            .criteria
            .iter()
            .enumerate()
            .map(|(i, c)| criterion_view(report, evidence, i, c, m))
            .collect(),
        plan: report
            .remediation_plan
            .iter()
            .enumerate()
            .map(|(i, r)| PlanView {
                rank: i + 1,
                name: m.text(&r.dimension_name),
                impact: count(usize::from(r.impact), "point", "points"),
                number: report
                    .criteria
                    .iter()
                    .position(|c| c.dimension_id == r.dimension_id)
                    .map_or(0, |p| p + 1),
            })
            .collect(),
        errors: report
            .errors
            .iter()
            .map(|e| ErrorView {
                stage: stage_name(e.stage),
                dimensions: m.text(&e.dimensions.join(", ")),
                message: m.text(&e.message),
            })
            .collect(),
    }
}

/// The tokens the LLM judges used, per persona, the cost and the judge restarts; empty for
/// offline judges.
fn tokens_line(md: &RunMetadata) -> String {
    if md.judge_mode == JudgeMode::Offline {
        return String::new();
    }
    let mut t = format!(
        "{} input ({} cached), {} output",
        md.tokens.input_tokens, md.tokens.cached_input_tokens, md.tokens.output_tokens
    );
    if !md.tokens_by_persona.is_empty() {
        let per: Vec<String> = md
            .tokens_by_persona
            .iter()
            .map(|(p, u)| format!("{p}: {}+{}", u.input_tokens, u.output_tokens))
            .collect();
        t.push_str(&format!(" ({})", per.join(", ")));
    }
    if let Some(cost) = md.cost {
        t.push_str(&format!("; cost {cost:.4}"));
    }
    if md.judge_restarts > 0 {
        t.push_str(&format!(
            "; {}",
            count(
                md.judge_restarts as usize,
                "judge restart",
                "judge restarts"
            )
        ));
    }
    t
}

/// One sentence: the verdict with its score, and what the score leaves out.
fn verdict_line(report: &AuditReport) -> String {
    let assessed = report.criteria.iter().filter(|c| c.is_assessed()).count();
    let n = report.criteria.len();
    match report.overall_score {
        Some(_) if assessed < n => format!(
            "{} ({} not assessed by the grader, excluded).",
            report.verdict.trim_end().trim_end_matches('.'),
            n - assessed
        ),
        _ => report.verdict.clone(),
    }
}

/// Criterion `c` (number `i + 1`) in the table: its score, each judge's, its flags in a word.
fn row_view(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
    i: usize,
    c: &CriterionResult,
    m: Markup,
) -> RowView {
    let judge = |j: Judge| {
        c.judge_opinions
            .iter()
            .find(|o| o.judge == j)
            .map(|o| o.score.get().to_string())
            .unwrap_or_else(|| {
                let failed = c
                    .flags
                    .iter()
                    .any(|f| matches!(f, CriterionFlag::JudgeFailed { judge, .. } if *judge == j));
                if failed { "failed" } else { "–" }.to_string()
            })
    };
    let mut words: Vec<&str> = if outcome::without_vision_by_choice(report, c, evidence) {
        vec!["not assessed (no vision model)"]
    } else {
        c.flags.iter().map(flag_word).collect()
    };
    words.dedup();
    RowView {
        number: i + 1,
        name: m.text(&c.dimension_name),
        score: match c.final_score.filter(|_| c.is_assessed()) {
            Some(s) => format!("{}/5", s.get()),
            None => "not assessed".to_string(),
        },
        level: c
            .final_score
            .filter(|_| c.is_assessed())
            .map_or(0, |s| s.get()),
        prosecutor: judge(Judge::Prosecutor),
        defense: judge(Judge::Defense),
        tech_lead: judge(Judge::TechLead),
        flags: words.join(", "),
    }
}

/// Criterion `c` (number `i + 1`) in the breakdown: its score and flags, the deciding
/// evidence, the opinions, dissent and rules, and the fix lines.
fn criterion_view(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
    i: usize,
    c: &CriterionResult,
    m: Markup,
) -> CriterionView {
    let own = evidence.get(&c.dimension_id);
    // the failing evidence that decides an assessed criterion: its first three
    let deciding: Vec<&Evidence> = if c.is_assessed() {
        own.map(|v| failing(v).into_iter().take(3).collect())
            .unwrap_or_default()
    } else {
        vec![]
    };
    let (fix, fix_more) = fix_view(report, c, &deciding, m);
    CriterionView {
        number: i + 1,
        name: m.text(&c.dimension_name),
        id: m.text(&c.dimension_id),
        score: match c.final_score {
            Some(s) => format!("{s}/5"),
            None => "not assessed".to_string(),
        },
        level: c
            .final_score
            .filter(|_| c.is_assessed())
            .map_or(0, |s| s.get()),
        flags: c.flags.iter().map(|f| flag_view(f, m)).collect(),
        opinions_summary: c
            .judge_opinions
            .iter()
            .map(|o| format!("{} {}/5", o.judge.title(), o.score.get()))
            .collect::<Vec<_>>()
            .join(", "),
        deciding: deciding
            .iter()
            .map(|e| {
                let max = (m == Markup::Markdown).then_some(160);
                evidence_view(e, places(report), max, m)
            })
            .collect(),
        evidence_count: count(own.map_or(0, Vec::len), "item", "items"),
        evidence: own
            .map(|v| {
                v.iter()
                    .map(|e| evidence_view(e, places(report), None, m))
                    .collect()
            })
            .unwrap_or_default(),
        opinions: c
            .judge_opinions
            .iter()
            .map(|o| opinion_view(o, m))
            .collect(),
        dissent: c
            .dissent_summary
            .as_deref()
            .map(|d| m.lines(d))
            .unwrap_or_default(),
        rules: c
            .rules_applied
            .iter()
            .map(|r| RuleView {
                rule: r.rule.as_str(),
                detail: m.text(&r.detail),
            })
            .collect(),
        fix,
        fix_more,
    }
}

fn opinion_view(o: &JudicialOpinion, m: Markup) -> OpinionView {
    OpinionView {
        judge: o.judge.title(),
        score: o.score.get(),
        source: match &o.source {
            OpinionSource::Offline => "offline rules, no LLM".to_string(),
            OpinionSource::Llm { model } => m.text(&format!("LLM {model}")),
        },
        brief: {
            let b = m.text(&brief(&o.argument, BRIEF_OPINION));
            if b.is_empty() {
                "(empty argument)".to_string()
            } else {
                b
            }
        },
        argument: {
            let l = m.lines(&o.argument);
            if l.is_empty() {
                vec!["(empty argument)".to_string()]
            } else {
                l
            }
        },
    }
}

/// A criterion's fix lines, grouped by instruction, then the rubric's target (the Markdown:
/// the first [`FIX_LINES`] groups, each shortened, the locations of the `deciding` evidence
/// shown already left out; the HTML: all of them, whole), and "and N more ..." when the
/// Markdown leaves groups out.
fn fix_view(
    report: &AuditReport,
    c: &CriterionResult,
    deciding: &[&Evidence],
    m: Markup,
) -> (Vec<FixView>, String) {
    let shown: Vec<String> = deciding
        .iter()
        .map(|e| location(&e.location, places(report)))
        .collect();
    let max = match m {
        Markup::Markdown => FIX_MAX,
        Markup::Html => usize::MAX,
    };
    let all = fixes(&c.remediation, places(report), m, (max, &shown));
    let (target, located): (Vec<FixView>, Vec<FixView>) = all
        .into_iter()
        .partition(|f| f.locations.is_empty() && f.text.starts_with("Target:"));
    let grouped = grouped(located);
    let groups = grouped.len();
    let keep = match m {
        Markup::Markdown => FIX_LINES,
        Markup::Html => usize::MAX,
    };
    let fix = grouped.into_iter().take(keep).chain(target).collect();
    let more = if m == Markup::Markdown && groups > FIX_LINES {
        format!(
            "and {} more, listed in the HTML rendering and the JSON sidecar",
            groups - FIX_LINES
        )
    } else {
        String::new()
    };
    (fix, more)
}

/// Renders the report as Markdown with `template` (handlebars, no HTML escaping, strict mode),
/// without the evidence (no findings' locations, no evidence lists).
pub fn render_markdown(report: &AuditReport, template: &str) -> Result<String, ReportError> {
    render_markdown_with(report, &BTreeMap::new(), template)
}

/// Renders the report as Markdown with `template`, with the evidence the report was built from
/// (the findings' locations and the deciding evidence; the complete evidence is the JSON's).
pub fn render_markdown_with(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
    template: &str,
) -> Result<String, ReportError> {
    render(
        report,
        evidence,
        template,
        Markup::Markdown,
        handlebars::no_escape,
    )
}

/// Renders the report as one self-contained HTML page ([`HTML_TEMPLATE`]: inline CSS, no
/// script, nothing fetched), the same structure as the Markdown with the long tail (full
/// opinions, all evidence) folded. Every value goes through handlebars' HTML escaping.
pub fn render_html(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
) -> Result<String, ReportError> {
    render(
        report,
        evidence,
        HTML_TEMPLATE,
        Markup::Html,
        handlebars::html_escape,
    )
}

fn render(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
    template: &str,
    markup: Markup,
    escape: fn(&str) -> String,
) -> Result<String, ReportError> {
    let mut hb = Handlebars::new();
    hb.register_escape_fn(escape);
    hb.set_strict_mode(true);
    hb.register_template_string("report", template)
        .map_err(|e| ReportError::Template(Box::new(e)))?;
    hb.render("report", &view(report, evidence, markup))
        .map_err(|e| ReportError::Render(Box::new(e)))
}

/// The JSON sidecar written beside a report (`X.json`, and a batch's store): the report, all
/// evidence, the judges' failures and the detectives' facts (the `evidence --json` layouts of
/// the repository and the PDF). One typed shape: the renderer takes its evidence from here,
/// and a stored sidecar that does not parse into it is an error, never an empty report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sidecar {
    pub report: AuditReport,
    pub evidence: BTreeMap<String, Vec<Evidence>>,
    pub judge_failures: Vec<crate::model::JudgeFailure>,
    pub repo: Option<serde_json::Value>,
    pub pdf: Option<serde_json::Value>,
}

impl Sidecar {
    /// The sidecar of a finished audit.
    pub fn new(
        report: &AuditReport,
        state: &crate::model::AuditState,
        repo_facts: Option<&crate::repo::RepoFacts>,
        pdf_facts: Option<&crate::pdf::PdfFacts>,
    ) -> Self {
        Sidecar {
            report: report.clone(),
            evidence: state.evidences().clone(),
            judge_failures: state.failures().to_vec(),
            repo: repo_facts.map(crate::repo::facts_json),
            pdf: pdf_facts.map(crate::pdf::facts_json),
        }
    }

    /// A sidecar read back (a batch's store): the same shape, or an error saying it is not.
    pub fn parse(text: &str) -> Result<Self, ReportError> {
        serde_json::from_str(text).map_err(ReportError::Sidecar)
    }

    /// As one line of JSON (a batch's store).
    pub fn to_json(&self) -> Result<String, ReportError> {
        Ok(serde_json::to_string(self)?)
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    crate::files::write_atomic(path, bytes).map_err(|source| ReportError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The files [`write`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub markdown: PathBuf,
    pub json: PathBuf,
    pub html: PathBuf,
}

/// Writes `X.md` (rendered with [`DEFAULT_TEMPLATE`]), `X.json` (the sidecar) and `X.html`
/// ([`render_html`]) beside it, each atomically (temporary file in the same directory, then
/// rename), creating parent directories. Both renderings take the sidecar's typed evidence.
pub fn write(sidecar: &Sidecar, markdown_path: &Path) -> Result<Written, ReportError> {
    let json_path = markdown_path.with_extension("json");
    let html_path = markdown_path.with_extension("html");
    if json_path == markdown_path || html_path == markdown_path {
        return Err(ReportError::PathCollision(
            markdown_path.display().to_string(),
        ));
    }
    let markdown = render_markdown_with(&sidecar.report, &sidecar.evidence, DEFAULT_TEMPLATE)?;
    let html = render_html(&sidecar.report, &sidecar.evidence)?;
    let json = serde_json::to_vec_pretty(sidecar)?;
    write_atomic(markdown_path, markdown.as_bytes())?;
    write_atomic(&json_path, &json)?;
    write_atomic(&html_path, html.as_bytes())?;
    Ok(Written {
        markdown: markdown_path.to_path_buf(),
        json: json_path,
        html: html_path,
    })
}

pub mod outcome;

#[cfg(test)]
mod tests;
