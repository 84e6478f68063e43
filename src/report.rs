//! Report rendering: Markdown through a handlebars template (escaping off, strict mode) and the
//! JSON sidecar, both written atomically.
//!
//! Judge arguments, evidence text and error messages are untrusted: before they reach the
//! template every piece is neutralised so it cannot change the Markdown structure (headings,
//! code fences, block quotes, lists, tables, raw HTML). See [`inline`].

use crate::model::{
    AuditReport, CriterionFlag, CriterionResult, Evidence, EvidenceKind, Judge, JudgeMode,
    OpinionSource, Stage,
};
use handlebars::Handlebars;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The report template shipped in the binary.
pub const DEFAULT_TEMPLATE: &str = include_str!("../prompts/report.md.hbs");

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("the report template is invalid: {0}. Fix the template (prompts/report.md.hbs).")]
    Template(#[source] Box<handlebars::TemplateError>),
    #[error("cannot render the report: {0}. The template uses a field the report does not have.")]
    Render(#[source] Box<handlebars::RenderError>),
    #[error("cannot serialise the JSON sidecar: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot write {path}: {source}. Check that the directory is writable.")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the report path {0} would make the Markdown and the JSON sidecar the same file; give a path ending in .md"
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

/// `n` with the singular or plural noun: `count(1, "criterion", "criteria")` → "1 criterion".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[derive(Serialize)]
struct View {
    repo: String,
    commit: String,
    verdict: String,
    overall: String,
    overall_line: String,
    pdf: String,
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
    flags: Vec<FlagView>,
    opinions_summary: String,
    opinions: Vec<OpinionView>,
    deciding: Vec<EvidenceView>,
    evidence: Vec<EvidenceView>,
    evidence_count: String,
    dissent: Vec<String>,
    rules: Vec<RuleView>,
    remediation: Vec<String>,
}

#[derive(Serialize)]
struct RowView {
    number: usize,
    name: String,
    score: String,
    prosecutor: String,
    defense: String,
    tech_lead: String,
    flags: String,
}

#[derive(Serialize)]
struct FindingView {
    name: String,
    score: String,
    lost: String,
    text: String,
    location: String,
}

#[derive(Serialize)]
struct EvidenceView {
    mark: &'static str,
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

fn flag_view(flag: &CriterionFlag) -> FlagView {
    match flag {
        CriterionFlag::EvidenceMissing { reason } => FlagView {
            kind: "EVIDENCE MISSING",
            text: inline(reason),
        },
        CriterionFlag::NodeFailure { stage, reason } => FlagView {
            kind: "NODE FAILURE",
            text: inline(&format!("{}: {reason}", stage_name(*stage))),
        },
        CriterionFlag::JudgeFailed { judge, reason } => FlagView {
            kind: "JUDGE FAILED",
            text: inline(&format!("{}: {reason}", judge.title())),
        },
        CriterionFlag::NeedsHumanReview { reason } => FlagView {
            kind: "NEEDS HUMAN REVIEW",
            text: inline(reason),
        },
        CriterionFlag::NotAssessed { reason } => FlagView {
            kind: "NOT ASSESSED (grader-side, no score)",
            text: inline(reason),
        },
    }
}

/// `1234 ms` → `1.2 s`, `125000 ms` → `2 min 05 s`.
fn duration(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{} s", ms / 1000, (ms % 1000) / 100)
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

fn evidence_view(e: &Evidence, places: Places, max: Option<usize>) -> EvidenceView {
    let text = crate::tally::fact_text(e);
    EvidenceView {
        mark: match (e.kind, e.found) {
            (EvidenceKind::Missing, _) => "⚪",
            _ if failing_rank(e).is_some() => "❌",
            _ => "✅",
        },
        location: location(&e.location, places),
        text: inline(&match max {
            Some(m) => crate::tally::short(text, m),
            None => text.to_string(),
        }),
    }
}

/// The findings that cost the most points: the criteria that lost the most (rubric order on a
/// tie), each with its first failing evidence; when fewer than three criteria lost points,
/// their further failing evidence fills up to three. At most five.
fn findings(report: &AuditReport, evidence: &BTreeMap<String, Vec<Evidence>>) -> Vec<FindingView> {
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
    let per: Vec<(u8, &CriterionResult, Vec<&Evidence>)> = losing
        .into_iter()
        .map(|(lost, _, c)| {
            let ev = evidence
                .get(&c.dimension_id)
                .map(|v| failing(v))
                .unwrap_or_default();
            (lost, c, ev)
        })
        .filter(|(_, _, ev)| !ev.is_empty())
        .collect();
    let finding = |lost: u8, c: &CriterionResult, e: &Evidence| FindingView {
        name: inline(&c.dimension_name),
        score: c
            .final_score
            .map(|s| format!("{}/5", s.get()))
            .unwrap_or_default(),
        lost: count(usize::from(lost), "point", "points"),
        text: inline(&format!(
            "{}{}",
            match e.kind {
                EvidenceKind::SecurityFinding => "security finding: ",
                EvidenceKind::Contradiction => "contradicted by the code: ",
                _ => "not met: ",
            },
            crate::tally::short(crate::tally::fact_text(e), 160)
        )),
        location: location(&e.location, places(report)),
    };
    let mut out: Vec<FindingView> = per
        .iter()
        .take(5)
        .map(|(lost, c, ev)| finding(*lost, c, ev[0]))
        .collect();
    for (lost, c, ev) in &per {
        for e in ev.iter().skip(1) {
            if out.len() >= 3 {
                return out;
            }
            out.push(finding(*lost, c, e));
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
        Err(_) => inline(started_at),
    }
}

fn view(report: &AuditReport, evidence: &BTreeMap<String, Vec<Evidence>>) -> View {
    let md = &report.metadata;
    let judge_mode = match md.judge_mode {
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
    };
    let tokens = match md.judge_mode {
        JudgeMode::Offline => String::new(),
        JudgeMode::Llm => {
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
                t.push_str(&format!("; {} judge restart(s)", md.judge_restarts));
            }
            t
        }
    };
    let criteria = report
        .criteria
        .iter()
        .enumerate()
        .map(|(i, c)| CriterionView {
            number: i + 1,
            name: inline(&c.dimension_name),
            id: inline(&c.dimension_id),
            score: match c.final_score {
                Some(s) => format!("{s}/5"),
                None => "not assessed".to_string(),
            },
            flags: c.flags.iter().map(flag_view).collect(),
            opinions_summary: c
                .judge_opinions
                .iter()
                .map(|o| format!("{} {}/5", o.judge.title(), o.score.get()))
                .collect::<Vec<_>>()
                .join(", "),
            deciding: if c.is_assessed() {
                evidence
                    .get(&c.dimension_id)
                    .map(|v| {
                        failing(v)
                            .into_iter()
                            .take(3)
                            .map(|e| evidence_view(e, places(report), Some(200)))
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                vec![]
            },
            evidence_count: count(
                evidence.get(&c.dimension_id).map_or(0, Vec::len),
                "item",
                "items",
            ),
            evidence: evidence
                .get(&c.dimension_id)
                .map(|v| {
                    v.iter()
                        .map(|e| evidence_view(e, places(report), Some(240)))
                        .collect()
                })
                .unwrap_or_default(),
            opinions: c
                .judge_opinions
                .iter()
                .map(|o| OpinionView {
                    judge: o.judge.title(),
                    score: o.score.get(),
                    source: match &o.source {
                        OpinionSource::Offline => "offline rules, no LLM".to_string(),
                        OpinionSource::Llm { model } => inline(&format!("LLM {model}")),
                    },
                    argument: {
                        let l = lines(&o.argument);
                        if l.is_empty() {
                            vec!["(empty argument)".to_string()]
                        } else {
                            l
                        }
                    },
                })
                .collect(),
            dissent: c.dissent_summary.as_deref().map(lines).unwrap_or_default(),
            rules: c
                .rules_applied
                .iter()
                .map(|r| RuleView {
                    rule: r.rule.as_str(),
                    detail: inline(&r.detail),
                })
                .collect(),
            remediation: lines(&c.remediation),
        })
        .collect();
    let assessed = report.criteria.iter().filter(|c| c.is_assessed()).count();
    let n = report.criteria.len();
    let overall_line = match report.overall_score {
        Some(s) => {
            let mut line = format!(
                "{s:.2}/5 over {assessed} of {}",
                count(n, "criterion", "criteria")
            );
            if assessed < n {
                line.push_str(&format!(
                    " ({} not assessed by the grader, excluded)",
                    n - assessed
                ));
            }
            line
        }
        None => format!(
            "not assessed (none of the {} could be assessed)",
            count(n, "criterion", "criteria")
        ),
    };
    let table = report
        .criteria
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let judge = |j: Judge| {
                c.judge_opinions
                    .iter()
                    .find(|o| o.judge == j)
                    .map(|o| o.score.get().to_string())
                    .unwrap_or_else(|| {
                        let failed = c.flags.iter().any(
                            |f| matches!(f, CriterionFlag::JudgeFailed { judge, .. } if *judge == j),
                        );
                        if failed { "failed" } else { "–" }.to_string()
                    })
            };
            let mut words: Vec<&str> = c.flags.iter().map(flag_word).collect();
            words.dedup();
            RowView {
                number: i + 1,
                name: inline(&c.dimension_name),
                score: match c.final_score.filter(|_| c.is_assessed()) {
                    Some(s) => format!("**{}/5**", s.get()),
                    None => "not assessed".to_string(),
                },
                prosecutor: judge(Judge::Prosecutor),
                defense: judge(Judge::Defense),
                tech_lead: judge(Judge::TechLead),
                flags: words.join(", "),
            }
        })
        .collect();
    View {
        overall_line,
        pdf: match &md.pdf_path {
            Some(p) => match p.strip_prefix("repo:") {
                Some(inside) => format!("`{}` (in the repository)", code_span(inside)),
                None => format!("`{}`", code_span(p)),
            },
            None => String::new(),
        },
        table,
        findings: findings(report, evidence),
        repo: inline(&report.repo_url),
        commit: report
            .commit
            .as_deref()
            .map(inline)
            .unwrap_or_else(|| "unknown (the repository could not be read)".to_string()),
        verdict: inline(&report.verdict),
        overall: match report.overall_score {
            Some(s) => format!("{s:.2}/5"),
            None => "not assessed".to_string(),
        },
        rubric_name: inline(&md.rubric_name),
        rubric_version: inline(&md.rubric_version),
        rubric_source: match md.rubric_source.as_str() {
            "<embedded>" => "built into auditor".to_string(),
            other => inline(other),
        },
        rubric_sha256: inline(&md.rubric_sha256),
        prompts: match &md.prompts {
            Some(p) => inline(p),
            None => "none (offline judges)".to_string(),
        },
        judge_mode: inline(&judge_mode),
        vision_model: md.vision_model.as_deref().map(inline).unwrap_or_default(),
        tokens,
        started_at: when(&md.started_at),
        duration: duration(md.duration_ms),
        auditor_version: inline(&md.auditor_version),
        summary: lines(&report.executive_summary),
        criteria,
        plan: report
            .remediation_plan
            .iter()
            .enumerate()
            .map(|(i, r)| PlanView {
                rank: i + 1,
                name: inline(&r.dimension_name),
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
                dimensions: inline(&e.dimensions.join(", ")),
                message: inline(&e.message),
            })
            .collect(),
    }
}

/// Renders the report as Markdown with `template` (handlebars, no HTML escaping, strict mode),
/// without the evidence (no findings' locations, no evidence lists).
pub fn render_markdown(report: &AuditReport, template: &str) -> Result<String, ReportError> {
    render_markdown_with(report, &BTreeMap::new(), template)
}

/// Renders the report as Markdown with `template`, with the evidence the report was built from
/// (the findings' locations, the deciding evidence and the folded evidence lists).
pub fn render_markdown_with(
    report: &AuditReport,
    evidence: &BTreeMap<String, Vec<Evidence>>,
    template: &str,
) -> Result<String, ReportError> {
    let mut hb = Handlebars::new();
    hb.register_escape_fn(handlebars::no_escape);
    hb.set_strict_mode(true);
    hb.register_template_string("report", template)
        .map_err(|e| ReportError::Template(Box::new(e)))?;
    hb.render("report", &view(report, evidence))
        .map_err(|e| ReportError::Render(Box::new(e)))
}

/// The JSON sidecar: the report plus the evidence it was built from.
pub fn sidecar(
    report: &AuditReport,
    evidence: &std::collections::BTreeMap<String, Vec<crate::model::Evidence>>,
) -> Result<serde_json::Value, ReportError> {
    Ok(serde_json::json!({
        "report": serde_json::to_value(report)?,
        "evidence": serde_json::to_value(evidence)?,
    }))
}

/// The JSON sidecar written beside a report: the report, all evidence, the judges' failures
/// and the detectives' facts (the `evidence --json` layouts of the repository and the PDF).
pub fn sidecar_json(
    report: &AuditReport,
    state: &crate::model::AuditState,
    repo_facts: Option<&crate::repo::RepoFacts>,
    pdf_facts: Option<&crate::pdf::PdfFacts>,
) -> serde_json::Value {
    serde_json::json!({
        "report": report,
        "evidence": state.evidences,
        "judge_failures": state.failures,
        "repo": repo_facts.map(crate::repo::facts_json),
        "pdf": pdf_facts.map(crate::pdf::facts_json),
    })
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    crate::files::write_atomic(path, bytes).map_err(|source| ReportError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `X.md` (rendered with [`DEFAULT_TEMPLATE`]) and `X.json` (the sidecar) beside it,
/// each atomically (temporary file in the same directory, then rename), creating parent
/// directories. Returns both paths.
pub fn write(
    report: &AuditReport,
    markdown_path: &Path,
    sidecar: &serde_json::Value,
) -> Result<(PathBuf, PathBuf), ReportError> {
    let json_path = markdown_path.with_extension("json");
    if json_path == markdown_path {
        return Err(ReportError::PathCollision(
            markdown_path.display().to_string(),
        ));
    }
    // The sidecar carries the evidence; one that does not (or not in this shape) only costs
    // the report its locations and evidence lists.
    let evidence: BTreeMap<String, Vec<Evidence>> = sidecar
        .get("evidence")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let markdown = render_markdown_with(report, &evidence, DEFAULT_TEMPLATE)?;
    let json = serde_json::to_vec_pretty(sidecar)?;
    write_atomic(markdown_path, markdown.as_bytes())?;
    write_atomic(&json_path, &json)?;
    Ok((markdown_path.to_path_buf(), json_path))
}

#[cfg(test)]
mod tests;
