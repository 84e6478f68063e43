//! Deterministic offline judges: score from evidence alone, so the audit runs with no API key.
//!
//! STUB: being built (issue 2).

use super::JudgeRequest;
use crate::model::{JudicialOpinion, OpinionSource, Score};

/// The offline opinion of `req.persona` on `req.criterion_id`.
pub fn judge(req: &JudgeRequest) -> JudicialOpinion {
    JudicialOpinion {
        judge: req.persona,
        criterion_id: req.criterion_id.clone(),
        score: Score::clamped(3),
        argument: "offline judge not implemented yet".into(),
        cited_evidence: req.evidence().iter().map(|e| e.id.clone()).collect(),
        source: OpinionSource::Offline,
    }
}
