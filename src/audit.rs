//! The plain data of one audit: what goes in ([`AuditInput`] and its limits), what the
//! detectives collected ([`Collected`]) and what comes out ([`AuditOutcome`]). No actor, no
//! behaviour: the coordinator, the CLI and the batch runner all speak in these types.

use crate::judges::EvidencePack;
use crate::model::{AuditReport, AuditState, TokenUsage};
use crate::pdf::PdfFacts;
use crate::repo::{RepoFacts, RepoRequest};
use crate::rubric::LoadedRubric;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the PDF report comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PdfSource {
    /// A file on disk.
    File(PathBuf),
    /// A file inside the audited repository; `None` means "find the most likely report".
    InRepo(Option<String>),
    /// The submission has no PDF report (said by whoever runs the grader, e.g. a manifest's
    /// `pdf` = `none`): the report criteria are judged on that absence.
    NoReport,
}

/// Time limits of the graph.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// How long the detective barrier waits for all three detectives.
    pub detectives: Duration,
    /// How long one judge request may take (including the judge's own retries).
    pub judge_request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            detectives: Duration::from_secs(900),
            judge_request: Duration::from_secs(300),
        }
    }
}

/// OTP-style restart intensity per judge.
#[derive(Debug, Clone, Copy)]
pub struct RestartPolicy {
    pub max_restarts: u32,
    pub window: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 5,
            window: Duration::from_secs(60),
        }
    }
}

/// One audit to run.
#[derive(Debug, Clone)]
pub struct AuditInput {
    pub repo: RepoRequest,
    pub pdf: PdfSource,
    pub rubric: Arc<LoadedRubric>,
    pub timeouts: Timeouts,
    pub restarts: RestartPolicy,
    /// Label of the submission (batch id), carried in spans.
    pub submission: String,
    /// The vision-capable model client for the VisionInspector; `None`: diagrams are not
    /// inspected and the evidence says so.
    pub vision: Option<crate::llm::LlmSession>,
}

/// Everything one audit produced.
#[derive(Debug, Clone)]
pub struct AuditOutcome {
    pub report: AuditReport,
    pub state: AuditState,
    pub repo_facts: Option<RepoFacts>,
    pub pdf_facts: Option<PdfFacts>,
}

/// What the detectives and the aggregation step produced: everything the judges will see.
#[derive(Debug, Clone)]
pub struct Collected {
    pub state: AuditState,
    pub repo_facts: Option<RepoFacts>,
    pub pdf_facts: Option<PdfFacts>,
    /// Name of the PDF that was analysed (a path or `repo:<path>`), if one could be read.
    pub pdf_name: Option<String>,
    pub pack: Arc<EvidencePack>,
    /// LLM tokens used before the judges (vision model, prompt-cache warm-up), by user
    /// (`VisionInspector`, `warm-up`): counted in the audit's totals.
    pub usage: BTreeMap<String, TokenUsage>,
}
