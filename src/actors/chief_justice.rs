//! The Chief Justice actor: a thin shell over [`crate::justice`]'s deterministic rules.

use crate::justice;
use crate::model::{
    AuditError, AuditReport, CriterionFlag, CriterionResult, Evidence, JudgeFailure,
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
}

impl Handler<Deliberate> for ChiefJustice {
    type Result = MessageResult<Deliberate>;

    fn handle(&mut self, msg: Deliberate, _ctx: &mut Self::Context) -> Self::Result {
        let _span = tracing::info_span!("chief_justice.deliberate", criterion = %msg.dimension.id)
            .entered();
        MessageResult(justice::deliberate(
            &msg.dimension,
            &msg.synthesis_rules,
            &msg.evidence,
            &msg.opinions,
            &msg.failures,
            msg.upstream_flags,
        ))
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
}

impl Handler<Compose> for ChiefJustice {
    type Result = MessageResult<Compose>;

    fn handle(&mut self, msg: Compose, _ctx: &mut Self::Context) -> Self::Result {
        let _span = tracing::info_span!("chief_justice.compose").entered();
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
