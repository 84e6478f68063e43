//! The judicial layer's core: what a judge is asked ([`JudgeRequest`]) and the two ways of
//! answering it: deterministic [`offline`] rules, or an LLM ([`llm`]).

pub mod llm;
pub mod offline;

use crate::model::{Evidence, Judge};
use crate::rubric::{Dimension, Rubric};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A passage of the PDF report relevant to a criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    pub page: u32,
    pub text: String,
}

/// Everything the judges see, identical for the three personas (and for every criterion, so
/// the prompt prefix is stable and providers' prompt caches hit).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvidencePack {
    /// Evidence by dimension id.
    pub evidences: BTreeMap<String, Vec<Evidence>>,
    /// Report excerpts by dimension id.
    pub excerpts: BTreeMap<String, Vec<Excerpt>>,
}

impl EvidencePack {
    pub fn evidence_for(&self, dimension_id: &str) -> &[Evidence] {
        self.evidences
            .get(dimension_id)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Every evidence id in the pack (what an opinion may cite).
    pub fn all_ids(&self) -> impl Iterator<Item = &str> {
        self.evidences.values().flatten().map(|e| e.id.as_str())
    }
}

/// One question to one judge: "persona, rule on this criterion".
#[derive(Debug, Clone)]
pub struct JudgeRequest {
    pub persona: Judge,
    pub criterion_id: String,
    pub rubric: Arc<Rubric>,
    pub pack: Arc<EvidencePack>,
}

impl JudgeRequest {
    /// The dimension being judged. Requests are only built for ids of the rubric.
    pub fn dimension(&self) -> Option<&Dimension> {
        self.rubric.dimension(&self.criterion_id)
    }

    /// The evidence of the criterion under judgment.
    pub fn evidence(&self) -> &[Evidence] {
        self.pack.evidence_for(&self.criterion_id)
    }
}
