//! What a finished run means for the person who started it: one line for each criterion that
//! is not assessed or is flagged, saying why, and whether the run calls for attention (exit
//! code 3).
//!
//! The rule: a criterion left unassessed **only because the run was deliberately made without a
//! vision model** (an offline run, or `AUDITOR_VISION_MODEL=off`: its only evidence is the
//! VisionInspector's "no vision model configured") is reported, but does not call for
//! attention: the operator chose it, and the report says so. Everything else does: a grader
//! failure (clone, PDFium, a vision model that failed or rejected the images, a detective that
//! crashed), a judge that failed, a criterion that needs human review, an error recorded in the
//! run.

use crate::model::{AuditReport, CriterionFlag, CriterionResult, Evidence, EvidenceKind};
use std::collections::BTreeMap;

/// One criterion (or run error) the person who ran the audit should know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The criterion's name, or the stage of a run error.
    pub subject: String,
    /// "not assessed", "flagged" or "error".
    pub what: &'static str,
    /// Why, in one line.
    pub why: String,
    /// Left out by the operator's choice (no vision model): reported, not a reason for exit 3.
    pub by_choice: bool,
}

impl Note {
    /// `Architectural Diagram Analysis: not assessed: no vision model configured (...)`.
    pub fn line(&self) -> String {
        let mut l = super::plain(&format!("{}: {}: {}", self.subject, self.what, self.why));
        if self.by_choice {
            l.push_str(" (no vision model in this run, by choice: not counted as a failure)");
        }
        l
    }
}

/// Whether the criterion is unassessed only because no vision model was configured for the
/// run: its evidence is exactly the VisionInspector's `vision.<id>.no_model` statement, the
/// report names no vision model, and nothing else (no judge, no detective) failed on it.
fn without_vision_by_choice(
    report: &AuditReport,
    c: &CriterionResult,
    evidence: &BTreeMap<String, Vec<Evidence>>,
) -> bool {
    let Some(ev) = evidence.get(&c.dimension_id) else {
        return false;
    };
    report.metadata.vision_model.is_none()
        && !c.is_assessed()
        && !ev.is_empty()
        && ev
            .iter()
            .all(|e| e.kind == EvidenceKind::Missing && e.id.ends_with(".no_model"))
        && c.flags.iter().all(|f| {
            matches!(
                f,
                CriterionFlag::NotAssessed { .. } | CriterionFlag::EvidenceMissing { .. }
            )
        })
}

fn flag_reason(f: &CriterionFlag) -> String {
    match f {
        CriterionFlag::EvidenceMissing { reason } => format!("evidence missing: {reason}"),
        CriterionFlag::NodeFailure { stage, reason } => {
            format!("{} failed: {reason}", super::stage_name(*stage))
        }
        CriterionFlag::JudgeFailed { judge, reason } => {
            format!("the {} failed: {reason}", judge.title())
        }
        CriterionFlag::NeedsHumanReview { reason } => format!("needs human review: {reason}"),
        CriterionFlag::NotAssessed { reason } => reason.clone(),
    }
}

/// The notes of a finished run, in the rubric's order, then the run's errors.
pub fn notes(report: &AuditReport, evidence: &BTreeMap<String, Vec<Evidence>>) -> Vec<Note> {
    let mut out = Vec::new();
    for c in &report.criteria {
        if c.is_clean() {
            continue;
        }
        let assessed = c.is_assessed();
        let why = match (&c.not_assessed, assessed) {
            (Some(na), false) => na.reason.clone(),
            _ => {
                let mut reasons: Vec<String> = Vec::new();
                for f in &c.flags {
                    let r = flag_reason(f);
                    if !reasons.contains(&r) {
                        reasons.push(r);
                    }
                }
                if reasons.is_empty() {
                    "no score was reached".to_string()
                } else {
                    reasons.join("; ")
                }
            }
        };
        out.push(Note {
            subject: c.dimension_name.clone(),
            what: if assessed { "flagged" } else { "not assessed" },
            why: crate::justice::facts::short(&why, 200),
            by_choice: without_vision_by_choice(report, c, evidence),
        });
    }
    for e in &report.errors {
        out.push(Note {
            subject: super::stage_name(e.stage).to_string(),
            what: "error",
            why: crate::justice::facts::short(&e.message, 200),
            by_choice: false,
        });
    }
    out
}

/// Whether any note calls for attention (the run's exit code is then 3).
pub fn needs_attention(notes: &[Note]) -> bool {
    notes.iter().any(|n| !n.by_choice)
}
