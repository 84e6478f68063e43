//! Detective actors: thin shells that run the detectives' blocking core off the actor thread
//! (a thread of its own, abandoned on Ctrl-C: [`crate::interrupt::off_thread`]) and reply with
//! facts and evidence. A panic in the core becomes an error
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
    /// The grader could not read the artifact (clone or network failure, PDFium unavailable,
    /// a limit of ours): "evidence missing", the criteria are not assessed. `fix` says what
    /// whoever runs the grader can do about it.
    #[error("{reason}")]
    Unreadable { reason: String, fix: String },
    /// The submission does not provide a usable artifact (no report PDF, a corrupt or empty
    /// PDF): a real shortcoming of the student's work, judged as such.
    #[error("{0}")]
    Absent(String),
    /// The detective itself crashed: "node failure".
    #[error("{0}")]
    Crashed(String),
}

impl DetectiveError {
    /// A repository the grader could not read: a failure on the grader's side.
    pub fn from_repo(e: crate::repo::RepoError) -> Self {
        use crate::repo::RepoError;
        let fix = match &e {
            RepoError::Clone(_) | RepoError::InvalidSource(_) => {
                "check that the repository URL and ref are right and reachable from this machine (network, credentials), then re-run"
            }
            RepoError::Limit(_) => {
                "the submission exceeds one of the grader's limits (size, file count, clone time): assess it by hand, or raise the limit (RepoLimits) and re-run"
            }
            RepoError::Analysis(_) => {
                "re-run the audit with -v; if the analysis fails again, report it with the log: this is a failure of the grader"
            }
        };
        DetectiveError::Unreadable {
            reason: e.to_string(),
            fix: fix.to_string(),
        }
    }

    /// A PDF that could not be analysed: the grader's failure (PDFium unavailable, a limit of
    /// ours, a file it could not read) or the student's (not a PDF, empty, encrypted, corrupt,
    /// no text).
    pub fn from_pdf(e: &crate::pdf::PdfError) -> Self {
        use crate::pdf::PdfError;
        let reason = e.to_string();
        match e {
            PdfError::Unavailable(_) => DetectiveError::Unreadable {
                reason,
                fix: "install PDFium: let auditor fetch it (python3 with pip and network access), or set PDFIUM_DYNAMIC_LIB_PATH to a libpdfium.so; then re-run".into(),
            },
            PdfError::TooLarge(_) => DetectiveError::Unreadable {
                reason,
                fix: "the PDF exceeds the grader's size limit: read the report by hand, or raise the limit and re-run".into(),
            },
            PdfError::Unreadable(_) => DetectiveError::Unreadable {
                reason,
                fix: "check that the PDF file exists and is readable by the user running auditor, then re-run".into(),
            },
            PdfError::Empty(_)
            | PdfError::NotAPdf(_)
            | PdfError::Encrypted(_)
            | PdfError::Corrupt(_)
            | PdfError::NoText { .. } => DetectiveError::Absent(format!(
                "the submitted PDF report cannot be read: {reason}"
            )),
        }
    }
}

/// Runs blocking work on a thread of its own (abandoned on Ctrl-C, so the audit stops at
/// once); a panic becomes a `Crashed` error.
async fn off_thread<T: Send + 'static>(
    who: &'static str,
    work: impl FnOnce() -> Result<T, DetectiveError> + Send + 'static,
) -> Result<T, DetectiveError> {
    let work = move || {
        crate::interrupt::test_stall(who);
        work()
    };
    match crate::interrupt::off_thread(who, work).await {
        Ok(result) => result,
        Err(panic) => Err(DetectiveError::Crashed(format!("{who} crashed: {panic}"))),
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
            let _stage = crate::telemetry::stage::enter(|| {
                format!("reading the repository {}", msg.request.source)
            });
            let facts = repo::investigate(&msg.request).map_err(DetectiveError::from_repo)?;
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
    /// The names of every criterion of the rubric (a sentence of the report naming one claims
    /// no feature by those words).
    pub criteria: Vec<String>,
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
            let _stage = crate::telemetry::stage::enter(|| {
                format!(
                    "reading the report {} ({} bytes)",
                    msg.source,
                    msg.pdf.len()
                )
            });
            let facts = pdf::analyse_bytes(&msg.pdf, &msg.source, &msg.criteria)
                .map_err(|e| DetectiveError::from_pdf(&e))?;
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
    pub vision: Option<crate::llm::LlmSession>,
    /// The coordinator's span for this handling (actix messages carry no span context).
    pub parent: tracing::Span,
}

#[derive(Debug, Clone)]
pub struct VisionOutput {
    pub evidence: EvidenceMap,
    /// Tokens the vision model used (counted in the audit's totals).
    pub usage: crate::model::TokenUsage,
}

impl Handler<InspectDiagrams> for VisionInspector {
    type Result = ResponseFuture<Result<VisionOutput, DetectiveError>>;

    fn handle(&mut self, msg: InspectDiagrams, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(async move {
            let pdf = msg.pdf.clone();
            let source = msg.source.clone();
            let parent = msg.parent.clone();
            let diagrams = off_thread("VisionInspector", move || {
                let _span =
                    tracing::info_span!(parent: &parent, "vision_inspector", source = %source)
                        .entered();
                let _stage = crate::telemetry::stage::enter(|| {
                    format!("extracting the diagrams of {source} ({} bytes)", pdf.len())
                });
                pdf::extract_diagrams(&pdf, &source).map_err(|e| DetectiveError::from_pdf(&e))
            })
            .await?;
            let images = &diagrams.images;
            let (evidence, usage) = match &msg.vision {
                _ if images.is_empty() => (
                    crate::vision::without_images(&diagrams, &msg.dimensions),
                    crate::model::TokenUsage::default(),
                ),
                Some(v) => crate::vision::inspect(v, images, &msg.dimensions).await,
                None => (
                    crate::vision::evidence_without_model(images, &msg.dimensions),
                    crate::model::TokenUsage::default(),
                ),
            };
            Ok(VisionOutput { evidence, usage })
        })
    }
}
