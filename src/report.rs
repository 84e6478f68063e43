//! Report rendering: Markdown through a handlebars template (escaping off, strict mode) and the
//! JSON sidecar, both written atomically.
//!
//! Judge arguments, evidence text and error messages are untrusted: before they reach the
//! template every piece is neutralised so it cannot change the Markdown structure (headings,
//! code fences, block quotes, lists, tables, raw HTML). See [`inline`].

use crate::model::{AuditReport, CriterionFlag, JudgeMode, OpinionSource, Stage};
use handlebars::Handlebars;
use serde::Serialize;
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

#[derive(Serialize)]
struct View {
    repo: String,
    commit: String,
    verdict: String,
    overall: String,
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
    opinions: Vec<OpinionView>,
    dissent: Vec<String>,
    rules: Vec<RuleView>,
    remediation: Vec<String>,
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
    cited: String,
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
    id: String,
    impact: u8,
    actions: Vec<String>,
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

fn view(report: &AuditReport) -> View {
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
                    cited: if o.cited_evidence.is_empty() {
                        "none".to_string()
                    } else {
                        inline(&o.cited_evidence.join(", "))
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
    View {
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
        started_at: inline(&md.started_at),
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
                id: inline(&r.dimension_id),
                impact: r.impact,
                actions: lines(&r.action),
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

/// Renders the report as Markdown with `template` (handlebars, no HTML escaping, strict mode).
pub fn render_markdown(report: &AuditReport, template: &str) -> Result<String, ReportError> {
    let mut hb = Handlebars::new();
    hb.register_escape_fn(handlebars::no_escape);
    hb.set_strict_mode(true);
    hb.register_template_string("report", template)
        .map_err(|e| ReportError::Template(Box::new(e)))?;
    hb.render("report", &view(report))
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
    let markdown = render_markdown(report, DEFAULT_TEMPLATE)?;
    let json = serde_json::to_vec_pretty(sidecar)?;
    write_atomic(markdown_path, markdown.as_bytes())?;
    write_atomic(&json_path, &json)?;
    Ok((markdown_path.to_path_buf(), json_path))
}

#[cfg(test)]
mod tests;
