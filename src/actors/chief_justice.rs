//! The Chief Justice actor: a thin shell over [`crate::justice`]'s deterministic rules.

use crate::justice;
use crate::model::{
    AuditError, AuditReport, AuditState, CriterionFlag, CriterionResult, Evidence, JudgeFailure,
    JudicialOpinion, RunMetadata,
};
use crate::rubric::{Dimension, Rubric};
use actix::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct ChiefJustice;

impl Actor for ChiefJustice {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(1024);
    }
}

/// Rule on one criterion once its barrier has released.
#[derive(Message)]
#[rtype(result = "CriterionResult")]
pub struct Deliberate {
    pub dimension: Dimension,
    pub synthesis_rules: Arc<BTreeMap<String, String>>,
    pub evidence: Vec<Evidence>,
    pub opinions: Vec<JudicialOpinion>,
    pub failures: Vec<JudgeFailure>,
    pub upstream_flags: Vec<CriterionFlag>,
    /// The coordinator's span (actix messages carry no span context).
    pub parent: tracing::Span,
}

impl Deliberate {
    /// Deliberation on `dimension` over what the state holds for it: its evidence, the
    /// judges' opinions and failures, and the flags of upstream errors.
    pub fn from_state(
        dimension: Dimension,
        synthesis_rules: Arc<BTreeMap<String, String>>,
        state: &AuditState,
        parent: tracing::Span,
    ) -> Self {
        let id = dimension.id.clone();
        Deliberate {
            evidence: state.evidence_for(&id).to_vec(),
            opinions: state.opinions_for(&id).cloned().collect(),
            failures: state
                .failures()
                .iter()
                .filter(|f| f.criterion_id == id)
                .cloned()
                .collect(),
            upstream_flags: super::routes::upstream_flags(state.errors(), &id),
            dimension,
            synthesis_rules,
            parent,
        }
    }
}

impl Handler<Deliberate> for ChiefJustice {
    type Result = MessageResult<Deliberate>;

    fn handle(&mut self, msg: Deliberate, _ctx: &mut Self::Context) -> Self::Result {
        let span = tracing::info_span!(
            parent: &msg.parent,
            "chief_justice.deliberate",
            criterion = %msg.dimension.id,
            opinions = msg.opinions.len() as i64,
            failures = msg.failures.len() as i64,
            final_score = tracing::field::Empty,
            rules_applied = tracing::field::Empty,
        );
        let _entered = span.enter();
        let result = justice::deliberate(
            &msg.dimension,
            &msg.synthesis_rules,
            &msg.evidence,
            &msg.opinions,
            &msg.failures,
            msg.upstream_flags,
        );
        if let Some(score) = result.final_score {
            span.record("final_score", i64::from(score.get()));
        }
        span.record("rules_applied", result.rules_applied.len() as i64);
        MessageResult(result)
    }
}

/// Write the verdict from every criterion's result.
#[derive(Message)]
#[rtype(result = "AuditReport")]
pub struct Compose {
    pub repo_url: String,
    pub commit: Option<String>,
    pub rubric: Arc<Rubric>,
    pub results: Vec<CriterionResult>,
    pub metadata: RunMetadata,
    pub errors: Vec<AuditError>,
    pub evidence: BTreeMap<String, Vec<Evidence>>,
    /// The coordinator's span (actix messages carry no span context).
    pub parent: tracing::Span,
}

impl Handler<Compose> for ChiefJustice {
    type Result = MessageResult<Compose>;

    fn handle(&mut self, msg: Compose, _ctx: &mut Self::Context) -> Self::Result {
        let _span = tracing::info_span!(
            parent: &msg.parent,
            "chief_justice.compose",
            criteria = msg.results.len() as i64
        )
        .entered();
        MessageResult(justice::compose(
            &msg.repo_url,
            msg.commit,
            &msg.rubric,
            msg.results,
            msg.metadata,
            msg.errors,
            &msg.evidence,
        ))
    }
}
