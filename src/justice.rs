//! The Chief Justice: deterministic synthesis of the three opinions per criterion (security
//! override, fact supremacy, functionality weight, dissent requirement, variance
//! re-evaluation) and composition of the final [`AuditReport`].
//!
//! STUB: being built (issue 2).

use crate::model::{
    AuditError, AuditReport, CriterionFlag, CriterionResult, Evidence, JudgeFailure,
    JudicialOpinion, RunMetadata,
};
use crate::rubric::{Dimension, Rubric};
use std::collections::BTreeMap;

/// The verdict on one criterion.
pub fn deliberate(
    dimension: &Dimension,
    synthesis_rules: &BTreeMap<String, String>,
    evidence: &[Evidence],
    opinions: &[JudicialOpinion],
    failures: &[JudgeFailure],
    upstream_flags: Vec<CriterionFlag>,
) -> CriterionResult {
    let _ = (synthesis_rules, evidence, failures);
    CriterionResult {
        dimension_id: dimension.id.clone(),
        dimension_name: dimension.name.clone(),
        final_score: opinions.first().map(|o| o.score),
        judge_opinions: opinions.to_vec(),
        dissent_summary: None,
        remediation: String::new(),
        rules_applied: vec![],
        flags: upstream_flags,
    }
}

/// The final report.
pub fn compose(
    repo_url: &str,
    commit: Option<String>,
    rubric: &Rubric,
    results: Vec<CriterionResult>,
    metadata: RunMetadata,
    errors: Vec<AuditError>,
    evidence: &BTreeMap<String, Vec<Evidence>>,
) -> AuditReport {
    let _ = (rubric, evidence);
    AuditReport {
        repo_url: repo_url.to_string(),
        commit,
        verdict: String::new(),
        executive_summary: String::new(),
        overall_score: None,
        criteria: results,
        remediation_plan: vec![],
        metadata,
        errors,
    }
}
