//! The judicial layer's core: what a judge is asked ([`JudgeRequest`]) and the two ways of
//! answering it: deterministic [`offline`] rules, or an LLM ([`llm`]); [`panel`] sets the judges
//! up for a run.

pub(crate) mod levels;
pub mod llm;
pub mod offline;
pub mod panel;
pub mod prompts;

use crate::model::{Evidence, EvidenceKind, Judge};
use crate::rubric::{Dimension, Rubric};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A passage of the PDF report relevant to a criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    pub page: u32,
    pub text: String,
}

/// Everything the detectives found, by criterion. Each judge request shows only the part that
/// concerns its criterion ([`EvidencePack::focused`]).
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

    /// What a judge of `criterion_id` is shown: the criterion's own evidence, its report
    /// excerpts (each text once), and the facts of other criteria that can change its verdict.
    pub fn focused(&self, criterion_id: &str) -> FocusedEvidence<'_> {
        let own: Vec<&Evidence> = self.evidence_for(criterion_id).iter().collect();
        let mut seen_ids: BTreeSet<&str> = own.iter().map(|e| e.id.as_str()).collect();
        let mut cross = Vec::new();
        for (dim, evs) in &self.evidences {
            if dim == criterion_id {
                continue;
            }
            for e in evs {
                if is_cross_criterion_fact(e) && seen_ids.insert(e.id.as_str()) {
                    cross.push((dim.as_str(), e));
                }
            }
        }
        let mut seen_text: BTreeSet<&str> = BTreeSet::new();
        let excerpts = self
            .excerpts
            .get(criterion_id)
            .map(|xs| {
                xs.iter()
                    .filter(|x| seen_text.insert(x.text.trim()))
                    .collect()
            })
            .unwrap_or_default();
        FocusedEvidence {
            own,
            cross,
            excerpts,
        }
    }
}

/// Whether a fact of one criterion can change the verdict on another: a confirmed security
/// finding (it caps the overall score), a confirmed contradiction between report and code, or a
/// defect of the graph's run-time behaviour (`repo.graph.defect.*`).
pub fn is_cross_criterion_fact(e: &Evidence) -> bool {
    (e.found
        && matches!(
            e.kind,
            EvidenceKind::SecurityFinding | EvidenceKind::Contradiction
        ))
        || e.id.starts_with("repo.graph.defect.")
}

/// The evidence one judge request shows (see [`EvidencePack::focused`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FocusedEvidence<'a> {
    /// The criterion's own evidence, in the pack's order.
    pub own: Vec<&'a Evidence>,
    /// Cross-criterion facts, with the criterion they were filed under.
    pub cross: Vec<(&'a str, &'a Evidence)>,
    /// The criterion's report excerpts, duplicates removed.
    pub excerpts: Vec<&'a Excerpt>,
}

impl FocusedEvidence<'_> {
    /// Every id shown, i.e. every id the judge may cite.
    pub fn ids(&self) -> BTreeSet<String> {
        self.own
            .iter()
            .copied()
            .chain(self.cross.iter().map(|(_, e)| *e))
            .map(|e| e.id.clone())
            .collect()
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

/// A judge's answer: the opinion and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeAnswer {
    pub opinion: crate::model::JudicialOpinion,
    pub usage: crate::model::TokenUsage,
    /// Requests sent to obtain it (1 when the first answer was valid; 0 offline).
    pub attempts: u32,
}

/// Why a judge produced no opinion.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JudgeFault {
    /// The judge answered, but never validly within its retry budget: final, the opinion is
    /// recorded as failed (a restart would not help).
    #[error(transparent)]
    Invalid(Reason),
    /// The judge could not answer (transport failure after retries, timeout, crash): the
    /// supervisor restarts it and re-sends the request, within its restart intensity.
    #[error(transparent)]
    Crashed(Reason),
    /// The judge panicked (caught by its actor, which is then restarted by its supervisor).
    #[error(transparent)]
    Panicked(Reason),
}

/// What a [`JudgeFault`] says: the LLM judge's error (its cause kept), or a fault found by the
/// shell, in words. `Clone`: a batch's cached request may be awaited by several audits.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Reason {
    #[error(transparent)]
    Llm(#[from] llm::JudgeError),
    #[error("{0}")]
    Said(String),
}

impl From<String> for Reason {
    fn from(said: String) -> Self {
        Reason::Said(said)
    }
}

impl From<&str> for Reason {
    fn from(said: &str) -> Self {
        Reason::Said(said.to_string())
    }
}

/// The future a judge service returns. Not `Send`: it runs on the judge actor's thread.
pub type JudgeFuture = futures::future::LocalBoxFuture<'static, Result<JudgeAnswer, JudgeFault>>;

/// Something that can rule on a [`JudgeRequest`]: the offline rules or an LLM.
pub trait JudgeService: 'static {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture;
    /// The model used for a persona, `None` for offline rules.
    fn model(&self, persona: Judge) -> Option<String>;
    fn mode(&self) -> crate::model::JudgeMode;
    /// Where the judges' prompts come from, with their digest; `None`: no prompts (offline).
    fn prompts(&self) -> Option<String> {
        None
    }

    /// Prepares the judge requests of an audit under `rubric` while the detectives run (the
    /// LLM judges warm the provider's prompt cache); returns the tokens it used.
    fn prepare(
        &self,
        _rubric: Arc<Rubric>,
    ) -> futures::future::LocalBoxFuture<'static, crate::model::TokenUsage> {
        Box::pin(futures::future::ready(crate::model::TokenUsage::default()))
    }
}

/// The deterministic offline judges as a [`JudgeService`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineJudges;

impl JudgeService for OfflineJudges {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        let opinion = offline::judge(&req);
        Box::pin(futures::future::ready(Ok(JudgeAnswer {
            opinion,
            usage: crate::model::TokenUsage::default(),
            attempts: 0,
        })))
    }

    fn model(&self, _persona: Judge) -> Option<String> {
        None
    }

    fn mode(&self) -> crate::model::JudgeMode {
        crate::model::JudgeMode::Offline
    }
}

impl JudgeService for llm::LlmJudges {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        let judges = self.clone();
        Box::pin(async move {
            judges.judge(&req).await.map_err(|e| match e {
                llm::JudgeError::Transport { .. } => JudgeFault::Crashed(e.into()),
                llm::JudgeError::Invalid { .. } | llm::JudgeError::UnknownCriterion { .. } => {
                    JudgeFault::Invalid(e.into())
                }
            })
        })
    }

    fn model(&self, persona: Judge) -> Option<String> {
        Some(llm::LlmJudges::model_for(self, persona).to_string())
    }

    fn mode(&self) -> crate::model::JudgeMode {
        crate::model::JudgeMode::Llm
    }

    fn prompts(&self) -> Option<String> {
        Some(llm::LlmJudges::prompts(self).describe())
    }

    fn prepare(
        &self,
        rubric: Arc<Rubric>,
    ) -> futures::future::LocalBoxFuture<'static, crate::model::TokenUsage> {
        let judges = self.clone();
        Box::pin(async move { judges.warm_up(&rubric).await })
    }
}
