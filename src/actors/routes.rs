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

fn missing_evidence(detective: Detective, dimensions: &[Dimension], reason: &str) -> StateUpdate {
    let mut update = StateUpdate::default();
    for d in dimensions {
        update.evidences.insert(
            d.id.clone(),
            vec![Evidence::missing(
                format!("{}.missing.{}", prefix(detective), d.id),
                detective,
                format!("Collect the evidence for \"{}\"", d.name),
                artifact_location(d),
                reason.to_string(),
            )],
        );
    }
    update
}

/// Route "evidence missing": the detective ran but its artifact could not be read.
pub fn evidence_missing(
    detective: Detective,
    dimensions: &[Dimension],
    reason: &str,
) -> StateUpdate {
    missing_evidence(detective, dimensions, reason)
}

/// Route "node failure": the detective failed (error, panic or timeout).
pub fn node_failure(detective: Detective, dimensions: &[Dimension], reason: &str) -> StateUpdate {
    let mut update = missing_evidence(detective, dimensions, reason);
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
                vec![Evidence::missing(
                    format!("aggregator.missing.{}", d.id),
                    Detective::EvidenceAggregator,
                    format!("Collect the evidence for \"{}\"", d.name),
                    artifact_location(d),
                    "no detective produced evidence for this dimension",
                )],
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
        let update = evidence_missing(Detective::VisionInspector, &dims, "no vision model");
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
        ));
        let gaps = fill_gaps(&state.evidences, &r);
        assert_eq!(gaps.evidences.len(), r.dimensions.len() - repo_dims.len());
        state.merge(gaps);
        assert!(
            r.dimensions
                .iter()
                .all(|d| !state.evidence_for(&d.id).is_empty())
        );
    }
}
