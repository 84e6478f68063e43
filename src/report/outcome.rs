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
/// Whether a criterion is left out only because the run had no vision model by choice (its only
/// evidence is "no vision model configured"): reported, but nothing calls for attention.
pub fn without_vision_by_choice(
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
            why: crate::tally::short(&why, 200),
            by_choice: without_vision_by_choice(report, c, evidence),
        });
    }
    for e in &report.errors {
        out.push(Note {
            subject: super::stage_name(e.stage).to_string(),
            what: "error",
            why: crate::tally::short(&e.message, 200),
            by_choice: false,
        });
    }
    out
}

/// Whether any note calls for attention (the run's exit code is then 3).
pub fn needs_attention(notes: &[Note]) -> bool {
    notes.iter().any(|n| !n.by_choice)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::justice::compose;
    use crate::model::{AuditError, Detective, Judge, JudgeMode, RunMetadata, Stage, TokenUsage};
    use crate::rubric::{EMBEDDED_RUBRIC, Rubric};

    fn metadata(vision_model: Option<&str>) -> RunMetadata {
        RunMetadata {
            auditor_version: "0.1.0".into(),
            rubric_name: "r".into(),
            rubric_version: "1".into(),
            rubric_source: "<embedded>".into(),
            rubric_sha256: String::new(),
            prompts: None,
            judge_mode: JudgeMode::Offline,
            judge_models: BTreeMap::new(),
            vision_model: vision_model.map(str::to_string),
            pdf_path: None,
            started_at: "2026-11-23T04:00:00Z".into(),
            duration_ms: 1,
            tokens: TokenUsage::default(),
            tokens_by_persona: BTreeMap::new(),
            tokens_by_criterion: BTreeMap::new(),
            cost: None,
            judge_restarts: 0,
            judge_resends: 0,
        }
    }

    /// A report where `swarm_visual` is not assessed with `evidence` as its only evidence, and
    /// every other criterion assessed and clean.
    pub(crate) fn report(
        evidence: Vec<Evidence>,
        vision_model: Option<&str>,
        errors: Vec<AuditError>,
    ) -> (AuditReport, BTreeMap<String, Vec<Evidence>>) {
        let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
        let mut results = Vec::new();
        for d in &rubric.dimensions {
            if d.id == "swarm_visual" {
                let mut r = CriterionResult::not_assessed(
                    &d.id,
                    &d.name,
                    "no vision model configured: 1 diagram found in the report was not inspected",
                    "set AUDITOR_VISION_MODEL",
                );
                r.flags.push(CriterionFlag::EvidenceMissing {
                    reason: "vision evidence missing".into(),
                });
                results.push(r);
            } else {
                let mut r = CriterionResult::not_assessed(&d.id, &d.name, "x", "y");
                r.status = crate::model::CriterionStatus::Assessed;
                r.final_score = crate::model::Score::new(4).ok();
                r.not_assessed = None;
                r.flags.clear();
                results.push(r);
            }
        }
        let mut ev = BTreeMap::new();
        ev.insert("swarm_visual".to_string(), evidence);
        let report = compose(
            "repo",
            Some("abc".into()),
            &rubric,
            results,
            metadata(vision_model),
            errors,
            &ev,
        );
        (report, ev)
    }

    pub(crate) fn no_model() -> Evidence {
        Evidence::missing(
            "vision.swarm_visual.no_model",
            Detective::VisionInspector,
            "classify the diagrams",
            "report.pdf p.2",
            "no vision model configured",
        )
    }

    #[test]
    fn a_run_without_a_vision_model_by_choice_is_reported_but_needs_no_attention() {
        let (r, ev) = report(vec![no_model()], None, vec![]);
        let n = notes(&r, &ev);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].by_choice);
        assert_eq!(n[0].what, "not assessed");
        assert!(
            n[0].line()
                .starts_with("Architectural Diagram Analysis: not assessed: no vision model"),
            "{}",
            n[0].line()
        );
        assert!(!needs_attention(&n));
    }

    #[test]
    fn grader_failures_flags_and_errors_need_attention() {
        // the vision model was configured and rejected the images: a failure, not a choice
        let rejected = Evidence::missing(
            "vision.swarm_visual.rejected",
            Detective::VisionInspector,
            "classify the diagrams",
            "report.pdf p.2",
            "the model m rejected the image request",
        );
        let (r, ev) = report(vec![rejected], Some("m"), vec![]);
        let n = notes(&r, &ev);
        assert!(!n[0].by_choice);
        assert!(needs_attention(&n));
        // the same "no model" evidence while the report names a vision model is not a choice
        let (r, ev) = report(vec![no_model()], Some("m"), vec![]);
        assert!(needs_attention(&notes(&r, &ev)));
        // a flagged criterion (a judge failed) beside the by-choice one
        let (mut r, ev) = report(vec![no_model()], None, vec![]);
        r.criteria[0].flags.push(CriterionFlag::JudgeFailed {
            judge: Judge::Defense,
            reason: "free text three times".into(),
        });
        let n = notes(&r, &ev);
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].what, "flagged");
        assert!(
            n[0].why.contains("the Defense failed: free text"),
            "{}",
            n[0].why
        );
        assert!(needs_attention(&n));
        // an error recorded in the run
        let (r, ev) = report(
            vec![no_model()],
            None,
            vec![AuditError {
                stage: Stage::DocAnalyst,
                dimensions: vec![],
                message: "PDF \u{1b}[2Junreadable".into(),
            }],
        );
        let n = notes(&r, &ev);
        assert!(needs_attention(&n));
        let last = n.last().unwrap().line();
        assert!(last.starts_with("DocAnalyst: error: PDF"), "{last}");
        assert!(
            !last.contains('\u{1b}'),
            "no terminal escape reaches stdout"
        );
    }
}
