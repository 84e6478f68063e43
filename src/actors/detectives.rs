//! Detective actors: thin shells that run the detectives' blocking core off the actor thread
//! (`spawn_blocking`) and reply with facts and evidence. A panic in the core becomes an error
//! reply, never a dead actor system.

use crate::model::Evidence;
use crate::pdf::{self, PdfFacts};
use crate::repo::{self, RepoFacts, RepoRequest};
use crate::rubric::Dimension;
use actix::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Evidence keyed by dimension id.
pub type EvidenceMap = BTreeMap<String, Vec<Evidence>>;

/// Why a detective produced no facts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DetectiveError {
    /// Its artifact could not be read (clone failed, PDF corrupt, ...): "evidence missing".
    #[error("{0}")]
    Unreadable(String),
    /// The detective itself crashed: "node failure".
    #[error("{0}")]
    Crashed(String),
}

/// Runs blocking work on tokio's blocking pool; a panic becomes a `Crashed` error.
async fn off_thread<T: Send + 'static>(
    who: &'static str,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, DetectiveError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(DetectiveError::Unreadable),
        Err(join) => Err(DetectiveError::Crashed(format!(
            "{who} crashed: {}",
            panic_message(join)
        ))),
    }
}

fn panic_message(join: tokio::task::JoinError) -> String {
    if join.is_panic() {
        let payload = join.into_panic();
        if let Some(s) = payload.downcast_ref::<&str>() {
            return format!("panic: {s}");
        }
        if let Some(s) = payload.downcast_ref::<String>() {
            return format!("panic: {s}");
        }
        "panic".to_string()
    } else {
        "task cancelled".to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// RepoInvestigator

/// The code detective.
#[derive(Debug, Default)]
pub struct RepoInvestigator;

impl Actor for RepoInvestigator {
    type Context = Context<Self>;
}

/// Clone and analyse the repository; evidence for the given `github_repo` dimensions.
#[derive(Message)]
#[rtype(result = "Result<RepoOutput, DetectiveError>")]
pub struct InvestigateRepo {
    pub request: RepoRequest,
    pub dimensions: Vec<Dimension>,
    /// The coordinator's span for this handling (actix messages carry no span context).
    pub parent: tracing::Span,
}

#[derive(Debug, Clone)]
pub struct RepoOutput {
    pub facts: RepoFacts,
    pub evidence: EvidenceMap,
}

impl Handler<InvestigateRepo> for RepoInvestigator {
    type Result = ResponseFuture<Result<RepoOutput, DetectiveError>>;

    fn handle(&mut self, msg: InvestigateRepo, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(off_thread("RepoInvestigator", move || {
            let _span =
                tracing::info_span!(parent: &msg.parent, "repo_investigator", source = %msg.request.source)
                    .entered();
            let facts = repo::investigate(&msg.request).map_err(|e| e.to_string())?;
            let evidence = repo::evidence(&facts, &msg.dimensions);
            Ok(RepoOutput { facts, evidence })
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// DocAnalyst

/// The paperwork detective.
#[derive(Debug, Default)]
pub struct DocAnalyst;

impl Actor for DocAnalyst {
    type Context = Context<Self>;
}

/// Ingest and analyse the PDF report; evidence for the given `pdf_report` dimensions.
#[derive(Message)]
#[rtype(result = "Result<DocOutput, DetectiveError>")]
pub struct AnalyseReport {
    pub pdf: Arc<Vec<u8>>,
    pub source: String,
    pub dimensions: Vec<Dimension>,
    /// The coordinator's span for this handling (actix messages carry no span context).
    pub parent: tracing::Span,
}

#[derive(Debug, Clone)]
pub struct DocOutput {
    pub facts: PdfFacts,
    pub evidence: EvidenceMap,
}

impl Handler<AnalyseReport> for DocAnalyst {
    type Result = ResponseFuture<Result<DocOutput, DetectiveError>>;

    fn handle(&mut self, msg: AnalyseReport, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(off_thread("DocAnalyst", move || {
            let _span =
                tracing::info_span!(parent: &msg.parent, "doc_analyst", source = %msg.source)
                    .entered();
            let facts = pdf::analyse_bytes(&msg.pdf, &msg.source).map_err(|e| e.to_string())?;
            let evidence = pdf::evidence(&facts, &msg.dimensions);
            Ok(DocOutput { facts, evidence })
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// VisionInspector

/// The diagram detective.
#[derive(Debug, Default)]
pub struct VisionInspector;

impl Actor for VisionInspector {
    type Context = Context<Self>;
}

/// Extract the report's diagrams and have them judged by a vision model, if one is configured.
#[derive(Message)]
#[rtype(result = "Result<VisionOutput, DetectiveError>")]
pub struct InspectDiagrams {
    pub pdf: Arc<Vec<u8>>,
    pub source: String,
    pub dimensions: Vec<Dimension>,
    pub vision: Option<crate::judges::llm::LlmJudges>,
    /// The coordinator's span for this handling (actix messages carry no span context).
    pub parent: tracing::Span,
}

#[derive(Debug, Clone)]
pub struct VisionOutput {
    pub diagrams: usize,
    pub evidence: EvidenceMap,
}

impl Handler<InspectDiagrams> for VisionInspector {
    type Result = ResponseFuture<Result<VisionOutput, DetectiveError>>;

    fn handle(&mut self, msg: InspectDiagrams, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(async move {
            let pdf = msg.pdf.clone();
            let source = msg.source.clone();
            let parent = msg.parent.clone();
            let images = off_thread("VisionInspector", move || {
                let _span =
                    tracing::info_span!(parent: &parent, "vision_inspector", source = %source)
                        .entered();
                pdf::extract_diagrams(&pdf, &source).map_err(|e| e.to_string())
            })
            .await?;
            let evidence = match &msg.vision {
                Some(v) => crate::vision::inspect(v, &images, &msg.dimensions).await,
                None => crate::vision::evidence_without_model(&images, &msg.dimensions),
            };
            Ok(VisionOutput {
                diagrams: images.len(),
                evidence,
            })
        })
    }
}
