//! The graph's failure routes, as pure functions over the state.
//!
//! - "evidence missing": a detective ran but could not read its artifact (no PDF, unreadable
//!   PDF, no vision model). Its dimensions receive an explicit `Missing` evidence and are judged
//!   on that absence; the Chief Justice flags them.
//! - "node failure": a detective failed or timed out. Same as above, plus an [`AuditError`]
//!   naming the stage, which becomes a `NodeFailure` flag on each affected criterion.
//!
//! Nothing is silently skipped: [`fill_gaps`] gives every dimension that received no evidence
//! at all an explicit `Missing` evidence.

use crate::model::{AuditError, CriterionFlag, Detective, Evidence, Stage, StateUpdate};
use crate::rubric::{Dimension, Rubric};

/// The stage of the graph a detective is.
pub fn stage_of(detective: Detective) -> Stage {
    match detective {
        Detective::RepoInvestigator => Stage::RepoInvestigator,
        Detective::DocAnalyst => Stage::DocAnalyst,
        Detective::VisionInspector => Stage::VisionInspector,
        Detective::EvidenceAggregator => Stage::EvidenceAggregator,
    }
}

fn missing_evidence(
    detective: Detective,
    dimensions: &[Dimension],
    reason: &str,
    fix: &str,
) -> StateUpdate {
    let mut update = StateUpdate::default();
    for d in dimensions {
        update.evidences.insert(
            d.id.clone(),
            vec![
                Evidence::missing(
                    format!("{}.missing.{}", prefix(detective), d.id),
                    detective,
                    format!("Collect the evidence for \"{}\"", d.name),
                    artifact_location(d),
                    reason.to_string(),
                )
                .with_fix(fix),
            ],
        );
    }
    update
}

/// Route "evidence missing": the detective ran but the grader could not read its artifact
/// (clone failure, PDFium unavailable, a limit of ours). The criteria are not assessed.
pub fn evidence_missing(
    detective: Detective,
    dimensions: &[Dimension],
    reason: &str,
    fix: &str,
) -> StateUpdate {
    missing_evidence(detective, dimensions, reason, fix)
}

/// Route "artifact absent": the submission does not provide the artifact (no PDF report, a
/// corrupt PDF). Not the grader's failure: each dimension gets a `Fact` that is not met, and
/// is judged (and scored) on that absence.
pub fn artifact_absent(
    detective: Detective,
    dimensions: &[Dimension],
    reason: &str,
) -> StateUpdate {
    let mut update = StateUpdate::default();
    for d in dimensions {
        update.evidences.insert(
            d.id.clone(),
            vec![crate::model::Evidence::fact(
                format!("{}.absent.{}", prefix(detective), d.id),
                detective,
                match d.target_artifact {
                    crate::rubric::TargetArtifact::PdfImages => {
                        "The submission provides a readable PDF report (its diagrams are read from it)"
                            .to_string()
                    }
                    _ => format!("The submission provides a readable {}", artifact_location(d)),
                },
                false,
                artifact_location(d),
                reason.to_string(),
                crate::model::Confidence::CERTAIN,
            )],
        );
    }
    update
}

/// Route "node failure": the detective failed (error, panic or timeout).
pub fn node_failure(detective: Detective, dimensions: &[Dimension], reason: &str) -> StateUpdate {
    let mut update = missing_evidence(
        detective,
        dimensions,
        reason,
        "re-run the audit with -v; if the detective fails again, report it with the log: this is a failure of the grader",
    );
    update.errors.push(AuditError {
        stage: stage_of(detective),
        dimensions: dimensions.iter().map(|d| d.id.clone()).collect(),
        message: format!("{detective} failed: {reason}"),
    });
    update
}

/// Every dimension of the rubric that has no evidence at all gets an explicit `Missing` one.
pub fn fill_gaps(
    evidences: &std::collections::BTreeMap<String, Vec<Evidence>>,
    rubric: &Rubric,
) -> StateUpdate {
    let mut update = StateUpdate::default();
    for d in &rubric.dimensions {
        if evidences.get(&d.id).is_none_or(Vec::is_empty) {
            update.evidences.insert(
                d.id.clone(),
                vec![
                    Evidence::missing(
                        format!("aggregator.missing.{}", d.id),
                        Detective::EvidenceAggregator,
                        format!("Collect the evidence for \"{}\"", d.name),
                        artifact_location(d),
                        "no detective produced evidence for this dimension: no detective collects facts for a criterion worded like this one",
                    )
                    .with_fix("reword the criterion's name or forensic instruction with the words the detectives route by (see ARCHITECTURE.md), or assess it by hand"),
                ],
            );
        }
    }
    update
}

/// Flags a criterion carries from failures upstream of the judges.
pub fn upstream_flags(errors: &[AuditError], dimension_id: &str) -> Vec<CriterionFlag> {
    errors
        .iter()
        .filter(|e| e.dimensions.iter().any(|d| d == dimension_id))
        .map(|e| CriterionFlag::NodeFailure {
            stage: e.stage,
            reason: e.message.clone(),
        })
        .collect()
}

fn prefix(detective: Detective) -> &'static str {
    match detective {
        Detective::RepoInvestigator => "repo",
        Detective::DocAnalyst => "pdf",
        Detective::VisionInspector => "vision",
        Detective::EvidenceAggregator => "aggregator",
    }
}

fn artifact_location(d: &Dimension) -> String {
    match d.target_artifact {
        crate::rubric::TargetArtifact::GithubRepo => "repository".into(),
        crate::rubric::TargetArtifact::PdfReport => "PDF report".into(),
        crate::rubric::TargetArtifact::PdfImages => "PDF report images".into(),
    }
}

/// One line per distinct grader-side failure (evidence the grader could not collect): what,
/// which criteria it leaves unassessed, and the fix. Logged at warn, the default level.
/// Diagrams left uninspected because no vision model was configured are a choice, not a
/// failure: see [`not_inspected_by_choice`].
pub fn grader_failures(
    evidences: &std::collections::BTreeMap<String, Vec<Evidence>>,
) -> Vec<String> {
    let mut by_reason: Vec<(String, Option<String>, Vec<String>)> = Vec::new();
    for (dim, list) in evidences {
        for e in list.iter().filter(|e| {
            e.kind == crate::model::EvidenceKind::Missing && !crate::vision::without_model(e)
        }) {
            let reason = crate::tally::short(&e.rationale, 300);
            match by_reason.iter_mut().find(|(r, _, _)| *r == reason) {
                Some((_, _, dims)) => {
                    if !dims.contains(dim) {
                        dims.push(dim.clone())
                    }
                }
                None => by_reason.push((reason, e.fix.clone(), vec![dim.clone()])),
            }
        }
    }
    by_reason
        .into_iter()
        .map(|(reason, fix, dims)| {
            format!(
                "grader-side failure, not the student's ({}): {reason}{}",
                dims.join(", "),
                fix.map(|f| format!(" — fix: {f}")).unwrap_or_default()
            )
        })
        .collect()
}

/// The notice for a run made without a vision model (offline judges, or
/// `AUDITOR_VISION_MODEL=off`): which criteria's diagrams were not inspected and how to
/// inspect them. Logged at info: the operator chose it. `None` when a vision model ran.
pub fn not_inspected_by_choice(
    evidences: &std::collections::BTreeMap<String, Vec<Evidence>>,
) -> Option<String> {
    let dims: Vec<&str> = evidences
        .iter()
        .filter(|(_, list)| list.iter().any(crate::vision::without_model))
        .map(|(dim, _)| dim.as_str())
        .collect();
    (!dims.is_empty()).then(|| {
        format!(
            "diagrams not inspected ({}): no vision model configured (set AUDITOR_VISION_MODEL \
             to a vision-capable model, with OPENAI_API_KEY or OPENAI_BASE_URL, to inspect them)",
            dims.join(", ")
        )
    })
}

/// A repository that could not be read is recorded as an error too (exit code 3 either way).
pub fn repo_error(dims: &[Dimension], reason: &str) -> StateUpdate {
    StateUpdate {
        errors: vec![AuditError {
            stage: Stage::RepoInvestigator,
            dimensions: dims.iter().map(|d| d.id.clone()).collect(),
            message: format!("the repository could not be investigated: {reason}"),
        }],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AuditState, EvidenceKind};
    use crate::rubric::EMBEDDED_RUBRIC;

    fn rubric() -> Rubric {
        Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap()
    }

    #[test]
    fn node_failure_flags_every_affected_dimension() {
        let r = rubric();
        let dims = r.dimensions_for(crate::rubric::TargetArtifact::PdfReport);
        let update = node_failure(Detective::DocAnalyst, &dims, "PDF is corrupt");
        assert_eq!(update.evidences.len(), dims.len());
        for d in &dims {
            let ev = &update.evidences[&d.id][0];
            assert_eq!(ev.kind, EvidenceKind::Missing);
            assert!(!ev.found);
            assert!(ev.rationale.contains("corrupt"));
            let flags = upstream_flags(&update.errors, &d.id);
            assert_eq!(flags.len(), 1);
        }
        assert!(upstream_flags(&update.errors, "git_forensic_analysis").is_empty());
    }

    #[test]
    fn evidence_missing_records_no_error() {
        let r = rubric();
        let dims = r.dimensions_for(crate::rubric::TargetArtifact::PdfImages);
        let update = evidence_missing(
            Detective::VisionInspector,
            &dims,
            "no vision model",
            "set one",
        );
        assert!(update.errors.is_empty());
        assert_eq!(update.evidences.len(), 1);
    }

    #[test]
    fn fill_gaps_covers_only_dimensions_without_evidence() {
        let r = rubric();
        let mut state = AuditState::default();
        let repo_dims = r.dimensions_for(crate::rubric::TargetArtifact::GithubRepo);
        state.merge(evidence_missing(
            Detective::RepoInvestigator,
            &repo_dims,
            "x",
            "fix",
        ));
        let gaps = fill_gaps(state.evidences(), &r);
        assert_eq!(gaps.evidences.len(), r.dimensions.len() - repo_dims.len());
        state.merge(gaps);
        assert!(
            r.dimensions
                .iter()
                .all(|d| !state.evidence_for(&d.id).is_empty())
        );
    }

    #[test]
    fn one_line_per_grader_side_failure_with_its_fix() {
        let r = rubric();
        let dims = r.dimensions_for(crate::rubric::TargetArtifact::GithubRepo);
        let mut state = AuditState::default();
        state.merge(evidence_missing(
            Detective::RepoInvestigator,
            &dims,
            "clone failed",
            "check the URL",
        ));
        let lines = grader_failures(state.evidences());
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("clone failed") && lines[0].contains("fix: check the URL"));
        assert!(lines[0].contains("graph_orchestration"));
        let absent = artifact_absent(Detective::DocAnalyst, &dims[..1], "no PDF");
        let e = &absent.evidences[&dims[0].id][0];
        assert_eq!(e.kind, EvidenceKind::Fact);
        assert!(!e.found, "the student's absence is a requirement not met");
        assert!(grader_failures(&absent.evidences).is_empty());
        assert_eq!(not_inspected_by_choice(state.evidences()), None);
    }

    #[test]
    fn no_vision_model_by_choice_is_a_notice_not_a_failure() {
        let r = rubric();
        let dims = r.dimensions_for(crate::rubric::TargetArtifact::PdfImages);
        let image = crate::pdf::DiagramImage {
            page: 2,
            width: 800,
            height: 600,
            kind: "raster".into(),
            png: vec![0x89, b'P', b'N', b'G'],
        };
        let evidences = crate::vision::evidence_without_model(&[image], &dims);
        assert!(
            grader_failures(&evidences).is_empty(),
            "a choice, not a failure"
        );
        let notice = not_inspected_by_choice(&evidences).expect("said");
        assert!(
            notice.starts_with("diagrams not inspected (")
                && notice.contains("no vision model configured")
                && notice.contains("AUDITOR_VISION_MODEL")
                && notice.contains(&dims[0].id),
            "{notice}"
        );
    }
}
