//! The Coordinator: the supervisor that owns one audit and holds the graph's topology.
//!
//! ```text
//! START ─┬─ RepoInvestigator ─┐
//!        ├─ DocAnalyst ───────┼─ detective barrier ─ EvidenceAggregator
//!        └─ VisionInspector ──┘        (cross-reference, gap filling, excerpts)
//!                                                   │
//!              ┌── Prosecutor ──┐                   │  one request per
//!              ├── Defense ─────┼─ barrier per ─────┘  (criterion × persona),
//!              └── TechLead ────┘  criterion           all in flight
//!                                     │
//!                         ChiefJustice (deliberate each criterion, compose) ─ END
//! ```
//!
//! Failure routes: a detective that errors takes the "evidence missing" route, one that crashes
//! or times out the "node failure" route ([`super::routes`]). A judge that crashes or times out
//! is restarted by its `Supervisor` and the request re-sent, within the restart intensity; past
//! it, or after invalid answers, the opinion is recorded as failed and the criterion flagged.

use super::barrier::{Barrier, RestartIntensity};
use super::chief_justice::{ChiefJustice, Compose, Deliberate};
use super::detectives::{
    AnalyseReport, DetectiveError, DocAnalyst, DocOutput, InspectDiagrams, InvestigateRepo,
    RepoInvestigator, RepoOutput, VisionInspector, VisionOutput,
};
use super::judges::{Adjudicate, JudgeActor, Restart};
use super::routes;
use crate::judges::{EvidencePack, JudgeAnswer, JudgeFault, JudgeRequest, JudgeService};
use crate::model::{
    AuditReport, AuditState, CriterionResult, Detective, Judge, JudgeFailure, RunMetadata,
    StateUpdate, TokenUsage,
};
use crate::pdf::PdfFacts;
use crate::repo::{RepoFacts, RepoRequest};
use crate::rubric::{LoadedRubric, Rubric, TargetArtifact};
use actix::prelude::*;
use futures::stream::{FuturesUnordered, StreamExt};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

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

/// Why there is no PDF to read.
enum NoPdf {
    /// The submission has no report: a real shortcoming, judged as such.
    Absent(String),
    /// The grader could not get it: reason, fix.
    Missing(String, String),
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

/// The supervisor of one audit.
pub struct Coordinator {
    judges: Rc<dyn JudgeService>,
}

impl Coordinator {
    pub fn new(judges: Rc<dyn JudgeService>) -> Self {
        Coordinator { judges }
    }
}

impl Actor for Coordinator {
    type Context = Context<Self>;
}

/// Run the whole graph once.
#[derive(Message)]
#[rtype(result = "AuditOutcome")]
pub struct RunAudit(pub AuditInput);

impl Handler<RunAudit> for Coordinator {
    type Result = ResponseFuture<AuditOutcome>;

    fn handle(&mut self, msg: RunAudit, _ctx: &mut Self::Context) -> Self::Result {
        let service = self.judges.clone();
        Box::pin(run_graph(msg.0, service))
    }
}

/// The PDF's bytes and the name shown for it (a path or `repo:<path>`).
type PdfBytes = (Arc<Vec<u8>>, String);

/// How a detective branch ended.
enum Branch<T> {
    Done(T),
    /// The grader could not read the artifact: "evidence missing" (reason, fix for the
    /// grader's operator). The affected criteria are not assessed.
    Missing(String, String),
    /// The submission does not provide the artifact (or an unusable one): a real low score.
    Absent(String),
    /// The detective crashed or timed out: "node failure".
    Failed(String),
}

async fn ask<M, A, T>(
    addr: &Addr<A>,
    msg: M,
    timeout: Duration,
    who: &str,
    timeouts: &Cell<usize>,
) -> Branch<T>
where
    A: Actor<Context = Context<A>> + Handler<M>,
    M: Message<Result = Result<T, DetectiveError>> + Send + 'static,
    T: Send + 'static,
{
    let (branch, outcome) = match addr.send(msg).timeout(timeout).await {
        Ok(Ok(v)) => (Branch::Done(v), "done"),
        Ok(Err(DetectiveError::Unreadable { reason, fix })) => {
            (Branch::Missing(reason, fix), "evidence_missing")
        }
        Ok(Err(DetectiveError::Absent(e))) => (Branch::Absent(e), "artifact_absent"),
        Ok(Err(DetectiveError::Crashed(e))) => (Branch::Failed(e), "node_failure"),
        Err(MailboxError::Timeout) => (
            {
                timeouts.set(timeouts.get() + 1);
                Branch::Failed(format!(
                    "{who} did not answer within {}s (detective barrier timeout)",
                    timeout.as_secs()
                ))
            },
            "timed_out",
        ),
        Err(MailboxError::Closed) => (
            Branch::Failed(format!("{who} stopped unexpectedly")),
            "node_failure",
        ),
    };
    // Recorded on the `detective` span this future is instrumented with.
    let span = tracing::Span::current();
    span.record("outcome", outcome);
    match &branch {
        Branch::Done(_) | Branch::Absent(_) => {}
        Branch::Missing(e, _) | Branch::Failed(e) => {
            span.record("error.type", outcome);
            span.record("otel.status_code", "ERROR");
            span.record(
                "otel.status_description",
                crate::telemetry::redact(e).as_ref(),
            );
        }
    }
    branch
}

/// The span of one detective's handling of its message (a child of the detective barrier).
fn detective_span(barrier: &tracing::Span, who: Detective, submission: &str) -> tracing::Span {
    tracing::info_span!(
        parent: barrier,
        "detective",
        "otel.name" = %format!("detective {who}"),
        detective = %who,
        submission = %submission,
        outcome = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        "otel.status_code" = tracing::field::Empty,
        "otel.status_description" = tracing::field::Empty,
    )
}

/// The span of a fan-in point, open from the fan-out to the release.
fn barrier_span(
    name: &str,
    criterion: Option<&str>,
    expected: usize,
    submission: &str,
) -> tracing::Span {
    let span = tracing::info_span!(
        "barrier",
        "otel.name" = %match criterion {
            Some(c) => format!("barrier {name} {c}"),
            None => format!("barrier {name}"),
        },
        barrier = %name,
        criterion = tracing::field::Empty,
        submission = %submission,
        expected = expected as i64,
        arrived = tracing::field::Empty,
        failed = tracing::field::Empty,
        timed_out = tracing::field::Empty,
    );
    if let Some(c) = criterion {
        span.record("criterion", c);
    }
    span
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

/// Run the detectives and the aggregation step only (for `auditor evidence`).
#[derive(Message)]
#[rtype(result = "Collected")]
pub struct CollectEvidence(pub AuditInput);

impl Handler<CollectEvidence> for Coordinator {
    type Result = ResponseFuture<Collected>;

    fn handle(&mut self, msg: CollectEvidence, _ctx: &mut Self::Context) -> Self::Result {
        let judges = self.judges.clone();
        Box::pin(async move {
            let rubric: Arc<Rubric> = Arc::new(msg.0.rubric.rubric.clone());
            let span = tracing::info_span!(
                "collect_evidence",
                submission = %msg.0.submission,
                repo = %msg.0.repo.source
            );
            let prepare = judges.prepare(rubric.clone());
            collect_and_prepare(&msg.0, &rubric, prepare)
                .instrument(span)
                .await
        })
    }
}

/// Run the judges and the Chief Justice on evidence already collected (e.g. evidence that a
/// batch run persisted before a crash).
#[derive(Message)]
#[rtype(result = "AuditOutcome")]
pub struct JudgeCollected {
    pub input: AuditInput,
    pub collected: Collected,
}

impl Handler<JudgeCollected> for Coordinator {
    type Result = ResponseFuture<AuditOutcome>;

    fn handle(&mut self, msg: JudgeCollected, _ctx: &mut Self::Context) -> Self::Result {
        let service = self.judges.clone();
        Box::pin(async move {
            let rubric: Arc<Rubric> = Arc::new(msg.input.rubric.rubric.clone());
            let started = Instant::now();
            let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let span = tracing::info_span!(
                "audit",
                submission = %msg.input.submission,
                repo = %msg.input.repo.source,
                resumed = true
            );
            judge_and_rule(
                msg.input,
                service,
                rubric,
                started,
                started_at,
                msg.collected,
            )
            .instrument(span)
            .await
        })
    }
}

async fn run_graph(input: AuditInput, service: Rc<dyn JudgeService>) -> AuditOutcome {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let span = tracing::info_span!(
        "audit",
        submission = %input.submission,
        repo = %input.repo.source,
        judge_mode = ?service.mode(),
        overall_score = tracing::field::Empty,
        criteria_flagged = tracing::field::Empty,
    );
    let outcome = async move {
        let rubric: Arc<Rubric> = Arc::new(input.rubric.rubric.clone());
        let prepare = service.prepare(rubric.clone());
        let collected = collect_and_prepare(&input, &rubric, prepare).await;
        judge_and_rule(input, service, rubric, started, started_at, collected).await
    }
    .instrument(span.clone())
    .await;
    if let Some(score) = outcome.report.overall_score {
        span.record("overall_score", score);
    }
    let flagged = outcome
        .report
        .criteria
        .iter()
        .filter(|c| !c.is_clean())
        .count();
    span.record("criteria_flagged", flagged as i64);
    outcome
}

/// The detectives, and meanwhile the judge service's preparation (the prompt-cache warm-up):
/// its tokens are added to the collected usage.
async fn collect_and_prepare(
    input: &AuditInput,
    rubric: &Arc<Rubric>,
    prepare: futures::future::LocalBoxFuture<'static, TokenUsage>,
) -> Collected {
    let (mut collected, warm_up) = futures::join!(collect_evidence(input, rubric), prepare);
    if warm_up != TokenUsage::default() {
        collected
            .usage
            .entry("warm-up".to_string())
            .or_default()
            .add(warm_up);
    }
    collected
}

async fn collect_evidence(input: &AuditInput, rubric: &Arc<Rubric>) -> Collected {
    let repo_dims = rubric.dimensions_for(TargetArtifact::GithubRepo);
    let doc_dims = rubric.dimensions_for(TargetArtifact::PdfReport);
    let vision_dims = rubric.dimensions_for(TargetArtifact::PdfImages);
    let mut state = AuditState::default();

    // ---- fan-out to the detectives -----------------------------------------------------------
    let repo_addr = RepoInvestigator.start();
    let doc_addr = DocAnalyst.start();
    let vision_addr = VisionInspector.start();
    let t = input.timeouts.detectives;
    let mut barrier: Barrier<Detective, ()> = Barrier::new([
        Detective::RepoInvestigator,
        Detective::DocAnalyst,
        Detective::VisionInspector,
    ]);
    let submission = input.submission.as_str();
    let barrier_span = barrier_span("detectives", None, barrier.expected_len(), submission);
    let repo_span = detective_span(&barrier_span, Detective::RepoInvestigator, submission);
    let doc_span = detective_span(&barrier_span, Detective::DocAnalyst, submission);
    let vision_span = detective_span(&barrier_span, Detective::VisionInspector, submission);
    let timeouts = Cell::new(0usize);

    let mut repo_request = input.repo.clone();
    if let PdfSource::InRepo(path) = &input.pdf {
        repo_request.extract_pdf = Some(path.clone().unwrap_or_default());
    }
    let repo_msg = InvestigateRepo {
        request: repo_request,
        dimensions: repo_dims.clone(),
        parent: repo_span.clone(),
    };

    let (repo_branch, pdf_bytes): (Branch<RepoOutput>, Result<PdfBytes, NoPdf>) = match &input.pdf {
        PdfSource::File(path) => {
            let repo_fut = ask(&repo_addr, repo_msg, t, "RepoInvestigator", &timeouts)
                .instrument(repo_span.clone());
            let file = path.clone();
            let read = tokio::task::spawn_blocking(move || crate::pdf::read_bounded(&file));
            let (repo_branch, bytes) = futures::join!(repo_fut, read);
            let name = path.display().to_string();
            let bytes = match bytes {
                Ok(Ok(b)) => Ok((Arc::new(b), name.clone())),
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(format!("cannot read PDF report {name}: {e}")),
            }
            .map_err(|e| {
                NoPdf::Missing(
                    e,
                    "check that the PDF given to the grader exists and is readable, then re-run"
                        .into(),
                )
            });
            (repo_branch, bytes)
        }
        PdfSource::NoReport => {
            let repo_branch = ask(&repo_addr, repo_msg, t, "RepoInvestigator", &timeouts)
                .instrument(repo_span.clone())
                .await;
            (
                repo_branch,
                Err(NoPdf::Absent(
                    "the submission has no PDF report (as stated for this submission)".into(),
                )),
            )
        }
        PdfSource::InRepo(wanted) => {
            // The report lives in the repository: the paperwork detectives wait for it.
            let repo_branch = ask(&repo_addr, repo_msg, t, "RepoInvestigator", &timeouts)
                .instrument(repo_span.clone())
                .await;
            let bytes = match &repo_branch {
                Branch::Done(out) => match &out.facts.report_pdf {
                    Some(f) => Ok((Arc::new(f.bytes.clone()), format!("repo:{}", f.path))),
                    None if wanted.is_none()
                        && !out
                            .facts
                            .files
                            .iter()
                            .any(|f| f.to_lowercase().ends_with(".pdf")) =>
                    {
                        Err(NoPdf::Absent(
                            "the repository holds no PDF file at the audited commit, so there is no report to read".into(),
                        ))
                    }
                    None => Err(NoPdf::Missing(
                        format!(
                            "the report PDF could not be taken from the repository: {}",
                            out.facts
                                .notes
                                .iter()
                                .filter(|n| n.contains("PDF") || n.contains("pdf"))
                                .cloned()
                                .collect::<Vec<_>>()
                                .join("; ")
                        ),
                        "check the report's path inside the repository (manifest pdf = repo:<path>), or give the PDF with --pdf, then re-run".into(),
                    )),
                },
                Branch::Missing(reason, fix) => Err(NoPdf::Missing(
                    format!(
                        "no PDF report was given (--pdf) and the repository could not be read: {reason}"
                    ),
                    fix.clone(),
                )),
                _ => Err(NoPdf::Missing(
                    "no PDF report was given (--pdf) and the repository could not be read"
                        .to_string(),
                    "re-run the audit with -v to see the RepoInvestigator's error".into(),
                )),
            };
            (repo_branch, bytes)
        }
    };

    let (doc_branch, vision_branch): (Branch<DocOutput>, Branch<VisionOutput>) = match &pdf_bytes {
        Ok((bytes, name)) => {
            let doc = ask(
                &doc_addr,
                AnalyseReport {
                    pdf: bytes.clone(),
                    source: name.clone(),
                    dimensions: doc_dims.clone(),
                    parent: doc_span.clone(),
                },
                t,
                "DocAnalyst",
                &timeouts,
            )
            .instrument(doc_span.clone());
            let vision = ask(
                &vision_addr,
                InspectDiagrams {
                    pdf: bytes.clone(),
                    source: name.clone(),
                    dimensions: vision_dims.clone(),
                    vision: input.vision.clone(),
                    parent: vision_span.clone(),
                },
                t,
                "VisionInspector",
                &timeouts,
            )
            .instrument(vision_span.clone());
            futures::join!(doc, vision)
        }
        Err(NoPdf::Missing(reason, fix)) => {
            for span in [&doc_span, &vision_span] {
                span.record("outcome", "evidence_missing");
                span.record("error.type", "evidence_missing");
            }
            (
                Branch::Missing(reason.clone(), fix.clone()),
                Branch::Missing(reason.clone(), fix.clone()),
            )
        }
        Err(NoPdf::Absent(reason)) => {
            for span in [&doc_span, &vision_span] {
                span.record("outcome", "artifact_absent");
            }
            (
                Branch::Absent(reason.clone()),
                Branch::Absent(reason.clone()),
            )
        }
    };
    drop((repo_span, doc_span, vision_span));
    let timed_out = timeouts.get();
    let failed = [
        !matches!(&repo_branch, Branch::Done(_)),
        !matches!(&doc_branch, Branch::Done(_)),
        !matches!(&vision_branch, Branch::Done(_)),
    ]
    .iter()
    .filter(|t| **t)
    .count();

    // ---- detective barrier ---------------------------------------------------------------------
    let mut repo_facts = None;
    match repo_branch {
        Branch::Done(out) => {
            state.merge(StateUpdate {
                evidences: out.evidence,
                ..Default::default()
            });
            repo_facts = Some(out.facts);
        }
        Branch::Missing(reason, fix) => {
            state.merge(routes::evidence_missing(
                Detective::RepoInvestigator,
                &repo_dims,
                &reason,
                &fix,
            ));
            state.merge(repo_error(&repo_dims, &reason));
        }
        Branch::Absent(reason) => state.merge(routes::artifact_absent(
            Detective::RepoInvestigator,
            &repo_dims,
            &reason,
        )),
        Branch::Failed(reason) => state.merge(routes::node_failure(
            Detective::RepoInvestigator,
            &repo_dims,
            &reason,
        )),
    }
    let _ = barrier.arrive(Detective::RepoInvestigator, ());
    let mut pdf_facts = None;
    match doc_branch {
        Branch::Done(out) => {
            state.merge(StateUpdate {
                evidences: out.evidence,
                ..Default::default()
            });
            pdf_facts = Some(out.facts);
        }
        Branch::Missing(reason, fix) => state.merge(routes::evidence_missing(
            Detective::DocAnalyst,
            &doc_dims,
            &reason,
            &fix,
        )),
        Branch::Absent(reason) => state.merge(routes::artifact_absent(
            Detective::DocAnalyst,
            &doc_dims,
            &reason,
        )),
        Branch::Failed(reason) => state.merge(routes::node_failure(
            Detective::DocAnalyst,
            &doc_dims,
            &reason,
        )),
    }
    let _ = barrier.arrive(Detective::DocAnalyst, ());
    let mut usage: BTreeMap<String, TokenUsage> = BTreeMap::new();
    match vision_branch {
        Branch::Done(out) => {
            if out.usage != TokenUsage::default() {
                usage.insert("VisionInspector".to_string(), out.usage);
            }
            state.merge(StateUpdate {
                evidences: out.evidence,
                ..Default::default()
            })
        }
        Branch::Missing(reason, fix) => state.merge(routes::evidence_missing(
            Detective::VisionInspector,
            &vision_dims,
            &reason,
            &fix,
        )),
        Branch::Absent(reason) => state.merge(routes::artifact_absent(
            Detective::VisionInspector,
            &vision_dims,
            &reason,
        )),
        Branch::Failed(reason) => state.merge(routes::node_failure(
            Detective::VisionInspector,
            &vision_dims,
            &reason,
        )),
    }
    let _ = barrier.arrive(Detective::VisionInspector, ());
    debug_assert!(barrier.is_complete());
    barrier_span.record("arrived", barrier.arrived_len() as i64);
    barrier_span.record("failed", failed as i64);
    barrier_span.record("timed_out", timed_out as i64);
    barrier_span.in_scope(|| {
        tracing::info!(
            expected = barrier.expected_len() as i64,
            arrived = barrier.arrived_len() as i64,
            failed = failed as i64,
            timed_out = timed_out as i64,
            "detective barrier released"
        )
    });
    drop(barrier_span);

    // ---- EvidenceAggregator (plain data, on the blocking pool) ----------------------------------
    let for_aggregation = rubric.clone();
    let aggregated = tokio::task::spawn_blocking(move || {
        super::aggregate::aggregate(state, repo_facts, pdf_facts, &for_aggregation)
    })
    .await;
    let super::aggregate::Aggregated {
        state,
        repo_facts,
        pdf_facts,
        excerpts,
    } = match aggregated {
        Ok(a) => a,
        Err(e) => {
            // a bug in the aggregation: every criterion is flagged (node failure), never
            // scored on partial evidence
            let mut state = AuditState::default();
            state.merge(routes::node_failure(
                Detective::EvidenceAggregator,
                &rubric.dimensions,
                &format!("the evidence aggregation failed: {e}"),
            ));
            super::aggregate::Aggregated {
                state,
                repo_facts: None,
                pdf_facts: None,
                excerpts: BTreeMap::new(),
            }
        }
    };
    for line in routes::grader_failures(&state.evidences) {
        tracing::warn!(submission = %input.submission, "{line}");
    }
    let pack = Arc::new(EvidencePack {
        evidences: state.evidences.clone(),
        excerpts,
    });
    drop((repo_addr, doc_addr, vision_addr));
    Collected {
        state,
        repo_facts,
        pdf_facts,
        pdf_name: pdf_bytes.ok().map(|(_, name)| name),
        pack,
        usage,
    }
}

#[allow(clippy::too_many_arguments)]
async fn judge_and_rule(
    input: AuditInput,
    service: Rc<dyn JudgeService>,
    rubric: Arc<Rubric>,
    started: Instant,
    started_at: String,
    collected: Collected,
) -> AuditOutcome {
    let Collected {
        mut state,
        repo_facts,
        pdf_facts,
        pdf_name,
        pack,
        usage: before_judges,
    } = collected;

    // ---- fan-out to the judges, one barrier per criterion ----------------------------------------
    let chief = ChiefJustice.start();
    let mut judge_addrs: BTreeMap<Judge, Addr<JudgeActor>> = BTreeMap::new();
    for persona in Judge::ALL {
        let svc = service.clone();
        judge_addrs.insert(
            persona,
            actix::Supervisor::start(move |_| JudgeActor::new(persona, svc)),
        );
    }
    let budgets: Rc<RefCell<BTreeMap<Judge, RestartIntensity>>> = Rc::new(RefCell::new(
        Judge::ALL
            .iter()
            .map(|j| {
                (
                    *j,
                    RestartIntensity::new(input.restarts.max_restarts, input.restarts.window),
                )
            })
            .collect(),
    ));
    let counters = Rc::new(Counters::default());

    let mut barriers: BTreeMap<String, Barrier<Judge, Result<JudgeAnswer, String>>> = rubric
        .dimensions
        .iter()
        .map(|d| (d.id.clone(), Barrier::new(Judge::ALL)))
        .collect();
    let audit_span = tracing::Span::current();
    let submission = input.submission.clone();
    // One span per criterion barrier, open from the fan-out to the release; the three judge
    // requests of the criterion are its children.
    let mut barrier_spans: BTreeMap<String, (tracing::Span, usize)> = rubric
        .dimensions
        .iter()
        .map(|d| {
            (
                d.id.clone(),
                (
                    barrier_span("criterion", Some(&d.id), Judge::ALL.len(), &submission),
                    0,
                ),
            )
        })
        .collect();
    let synthesis_rules = Arc::new(rubric.synthesis_rules.clone());
    let mut deliberations = FuturesUnordered::new();
    let mut in_flight = FuturesUnordered::new();
    for d in &rubric.dimensions {
        // Nothing to judge: the grader could not collect any evidence for this criterion.
        // No judge is asked (no tokens spent on it); the Chief Justice records it as not
        // assessed, with the reason and the fix.
        let evidence = state.evidence_for(&d.id);
        if crate::justice::unassessable(evidence, &crate::tally::Tally::of(evidence)).is_some() {
            barriers.remove(&d.id);
            barrier_spans.remove(&d.id);
            let msg = Deliberate {
                dimension: d.clone(),
                synthesis_rules: synthesis_rules.clone(),
                evidence: evidence.to_vec(),
                opinions: vec![],
                failures: vec![],
                upstream_flags: routes::upstream_flags(&state.errors, &d.id),
                parent: audit_span.clone(),
            };
            let chief = chief.clone();
            deliberations.push(Box::pin(async move { chief.send(msg).await })
                as futures::future::LocalBoxFuture<'static, _>);
            continue;
        }
        for persona in Judge::ALL {
            let req = JudgeRequest {
                persona,
                criterion_id: d.id.clone(),
                rubric: rubric.clone(),
                pack: pack.clone(),
            };
            let addr = judge_addrs[&persona].clone();
            let budgets = budgets.clone();
            let counters = counters.clone();
            let timeout = input.timeouts.judge_request;
            let span = tracing::info_span!(
                parent: &barrier_spans[&d.id].0,
                "judge",
                "otel.name" = %format!("judge {persona} {}", d.id),
                %persona,
                criterion = %d.id,
                submission = %submission,
                score = tracing::field::Empty,
                timeouts = tracing::field::Empty,
                "error.type" = tracing::field::Empty,
                "otel.status_code" = tracing::field::Empty,
                "otel.status_description" = tracing::field::Empty,
            );
            in_flight.push(async move {
                let (result, timed_out) =
                    supervised_request(addr, req, budgets, counters, timeout, span).await;
                (d.id.clone(), persona, result, timed_out)
            });
        }
    }

    let mut tokens = TokenUsage::default();
    let mut tokens_by_persona: BTreeMap<String, TokenUsage> = BTreeMap::new();
    for (who, u) in before_judges {
        tokens.add(u);
        tokens_by_persona.entry(who).or_default().add(u);
    }
    let mut tokens_by_criterion: BTreeMap<String, TokenUsage> = BTreeMap::new();
    while let Some((criterion, persona, result, timed_out)) = in_flight.next().await {
        if timed_out {
            if let Some((_, n)) = barrier_spans.get_mut(&criterion) {
                *n += 1;
            }
        }
        if let Ok(answer) = &result {
            tokens.add(answer.usage);
            tokens_by_persona
                .entry(persona.as_str().to_string())
                .or_default()
                .add(answer.usage);
            tokens_by_criterion
                .entry(criterion.clone())
                .or_default()
                .add(answer.usage);
        }
        let Some(b) = barriers.get_mut(&criterion) else {
            continue;
        };
        if let Err(e) = b.arrive(persona, result) {
            tracing::error!(%criterion, %persona, error = %e, "barrier refused an arrival");
            continue;
        }
        if b.is_complete() {
            let b = barriers.remove(&criterion).expect("barrier present");
            let (span, timed_out) = barrier_spans
                .remove(&criterion)
                .unwrap_or_else(|| (tracing::Span::none(), 0));
            let (arrived, _missing) = b.release();
            let failed = arrived.values().filter(|r| r.is_err()).count();
            span.record("arrived", arrived.len() as i64);
            span.record("failed", failed as i64);
            span.record("timed_out", timed_out as i64);
            span.in_scope(|| {
                tracing::info!(
                    %criterion,
                    arrived = arrived.len() as i64,
                    failed = failed as i64,
                    timed_out = timed_out as i64,
                    "criterion barrier released"
                )
            });
            drop(span);
            let mut update = StateUpdate::default();
            for (judge, r) in arrived {
                match r {
                    Ok(answer) => update.opinions.push(answer.opinion),
                    Err(reason) => update.failures.push(JudgeFailure {
                        judge,
                        criterion_id: criterion.clone(),
                        reason,
                    }),
                }
            }
            state.merge(update);
            let dimension = rubric
                .dimension(&criterion)
                .cloned()
                .expect("criterion from rubric");
            let msg = Deliberate {
                dimension,
                synthesis_rules: synthesis_rules.clone(),
                evidence: state.evidence_for(&criterion).to_vec(),
                opinions: state.opinions_for(&criterion).cloned().collect(),
                failures: state
                    .failures
                    .iter()
                    .filter(|f| f.criterion_id == criterion)
                    .cloned()
                    .collect(),
                upstream_flags: routes::upstream_flags(&state.errors, &criterion),
                parent: audit_span.clone(),
            };
            let chief = chief.clone();
            deliberations.push(Box::pin(async move { chief.send(msg).await }));
        }
    }

    let mut results: BTreeMap<String, CriterionResult> = BTreeMap::new();
    while let Some(r) = deliberations.next().await {
        match r {
            Ok(result) => {
                results.insert(result.dimension_id.clone(), result);
            }
            Err(e) => tracing::error!(error = %e, "Chief Justice did not answer"),
        }
    }
    // Rubric order, and never a criterion silently dropped.
    let ordered: Vec<CriterionResult> = rubric
        .dimensions
        .iter()
        .map(|d| {
            results.remove(&d.id).unwrap_or_else(|| {
                CriterionResult::not_assessed(
                    &d.id,
                    &d.name,
                    "the Chief Justice could not deliberate on this criterion",
                    "re-run the audit with -v and report the log: this is a failure of the grader",
                )
            })
        })
        .collect();

    let metadata = RunMetadata {
        auditor_version: env!("CARGO_PKG_VERSION").to_string(),
        rubric_name: rubric.rubric_metadata.rubric_name.clone(),
        rubric_version: rubric.rubric_metadata.version.clone(),
        rubric_source: input.rubric.source.clone(),
        rubric_sha256: input.rubric.sha256.clone(),
        judge_mode: service.mode(),
        prompts: service.prompts(),
        judge_models: Judge::ALL
            .iter()
            .filter_map(|j| service.model(*j).map(|m| (j.as_str().to_string(), m)))
            .collect(),
        vision_model: input
            .vision
            .as_ref()
            .and_then(|v| v.config().vision_model.clone()),
        pdf_path: pdf_name,
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        tokens,
        tokens_by_persona,
        tokens_by_criterion,
        cost: None,
        judge_restarts: counters.restarts.get(),
        judge_resends: counters.resends.get(),
    };
    let report = match chief
        .send(Compose {
            repo_url: input.repo.source.shown().to_string(),
            commit: repo_facts.as_ref().map(|f| f.commit.clone()),
            rubric: rubric.clone(),
            results: ordered.clone(),
            metadata: metadata.clone(),
            errors: state.errors.clone(),
            evidence: state.evidences.clone(),
            parent: audit_span.clone(),
        })
        .await
    {
        Ok(report) => report,
        Err(e) => {
            tracing::error!(error = %e, "Chief Justice could not compose the report");
            crate::justice::compose(
                input.repo.source.shown(),
                repo_facts.as_ref().map(|f| f.commit.clone()),
                &rubric,
                ordered,
                metadata,
                state.errors.clone(),
                &state.evidences,
            )
        }
    };

    drop((judge_addrs, chief));

    AuditOutcome {
        report,
        state,
        repo_facts,
        pdf_facts,
    }
}

/// A repository that could not be read is recorded as an error too (exit code 3 either way).
fn repo_error(dims: &[crate::rubric::Dimension], reason: &str) -> StateUpdate {
    StateUpdate {
        errors: vec![crate::model::AuditError {
            stage: crate::model::Stage::RepoInvestigator,
            dimensions: dims.iter().map(|d| d.id.clone()).collect(),
            message: format!("the repository could not be investigated: {reason}"),
        }],
        ..Default::default()
    }
}

#[derive(Default)]
struct Counters {
    restarts: Cell<u32>,
    resends: Cell<u32>,
}

/// Sends one request to a supervised judge: restarts it on crash or timeout and re-sends,
/// within the persona's restart intensity. `Err` carries the reason the opinion failed; the
/// flag says whether the request timed out at least once. Runs in `span` (the `judge` span),
/// which the judge actor also runs the service in.
async fn supervised_request(
    addr: Addr<JudgeActor>,
    req: JudgeRequest,
    budgets: Rc<RefCell<BTreeMap<Judge, RestartIntensity>>>,
    counters: Rc<Counters>,
    timeout: Duration,
    span: tracing::Span,
) -> (Result<JudgeAnswer, String>, bool) {
    let persona = req.persona;
    let criterion = req.criterion_id.clone();
    let judge_span = span.clone();
    let mut timeouts = 0u32;
    let result = async {
        let mut closed = 0u32;
        loop {
            let (fault, restart) = match addr
                .send(Adjudicate(req.clone(), judge_span.clone()))
                .timeout(timeout)
                .await
            {
                Ok(Ok(answer)) => return Ok(answer),
                Ok(Err(JudgeFault::Invalid(reason))) => {
                    tracing::warn!(%reason, "judge gave no valid opinion");
                    return Err(reason);
                }
                Ok(Err(JudgeFault::Crashed(reason))) => (reason, false),
                Ok(Err(JudgeFault::Panicked(reason))) => {
                    counters.restarts.set(counters.restarts.get() + 1);
                    (reason, true)
                }
                Err(MailboxError::Timeout) => {
                    addr.do_send(Restart);
                    timeouts += 1;
                    counters.restarts.set(counters.restarts.get() + 1);
                    (
                        format!("{persona} did not answer within {}s", timeout.as_secs()),
                        true,
                    )
                }
                Err(MailboxError::Closed) => {
                    // The actor was restarted while this request was in flight: re-send.
                    closed += 1;
                    counters.resends.set(counters.resends.get() + 1);
                    tracing::info!(resends = closed, "judge stopped with the request in flight; re-sending");
                    if closed > 16 {
                        return Err(format!(
                            "{persona} kept stopping while working on {criterion}: unresolved, needs human review"
                        ));
                    }
                    continue;
                }
            };
            let allowed = budgets
                .borrow_mut()
                .get_mut(&persona)
                .map(|b| b.allow(Instant::now()))
                .unwrap_or(false);
            if restart {
                // A zero-length marker span per restart, so trace viewers show each one.
                let _restart = tracing::info_span!(
                    "judge.restart",
                    %persona,
                    criterion = %criterion,
                    fault = %crate::telemetry::redact(&fault),
                    within_intensity = allowed,
                    restarts_total = i64::from(counters.restarts.get()),
                )
                .entered();
            }
            if !allowed {
                tracing::error!(%fault, "restart intensity exceeded");
                return Err(format!(
                    "{fault}; restart intensity exceeded: unresolved, needs human review"
                ));
            }
            tracing::warn!(%fault, "judge failed; re-sending the request");
            counters.resends.set(counters.resends.get() + 1);
        }
    }
    .instrument(span.clone())
    .await;
    span.in_scope(|| match &result {
        Ok(answer) => {
            span.record("score", i64::from(answer.opinion.score.get()));
            crate::telemetry::genai::record_opinion(&answer.opinion);
        }
        Err(reason) => {
            span.record("error.type", "no_opinion");
            span.record("otel.status_code", "ERROR");
            span.record(
                "otel.status_description",
                crate::telemetry::redact(reason).as_ref(),
            );
        }
    });
    if timeouts > 0 {
        span.record("timeouts", i64::from(timeouts));
    }
    (result, timeouts > 0)
}
