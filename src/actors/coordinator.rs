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

use super::barrier::Barrier;
use super::branch::{self, Branch, NoPdf, PdfBytes};
use super::chief_justice::{ChiefJustice, Compose, Deliberate};
use super::criteria::CriterionBarriers;
use super::detectives::{
    AnalyseReport, DocAnalyst, DocOutput, InspectDiagrams, InvestigateRepo, RepoInvestigator,
    RepoOutput, VisionInspector, VisionOutput,
};
use super::spans::{self, Release};
use super::supervision::{JudgePanel, Supervised};
use super::{aggregate, routes};
use crate::audit::{AuditInput, AuditOutcome, Collected, PdfSource};
use crate::judges::{EvidencePack, JudgeRequest, JudgeService};
use crate::model::{
    AuditReport, AuditState, CriterionResult, Detective, Judge, RunMetadata, TokenUsage,
};
use crate::repo::RepoRequest;
use crate::rubric::{Dimension, Rubric, TargetArtifact};
use actix::prelude::*;
use futures::future::LocalBoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

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
            let started = Started::now();
            let span = spans::audit(
                &msg.input.submission,
                &msg.input.repo.source.to_string(),
                None,
            );
            judge_and_rule(msg.input, service, rubric, started, msg.collected)
                .instrument(span)
                .await
        })
    }
}

/// When the audit started: for its duration and its metadata.
struct Started {
    at: Instant,
    /// RFC 3339, seconds.
    rfc3339: String,
}

impl Started {
    fn now() -> Self {
        Started {
            at: Instant::now(),
            rfc3339: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }
}

async fn run_graph(input: AuditInput, service: Rc<dyn JudgeService>) -> AuditOutcome {
    let started = Started::now();
    let span = spans::audit(
        &input.submission,
        &input.repo.source.to_string(),
        Some(&format!("{:?}", service.mode())),
    );
    let outcome = async move {
        let rubric: Arc<Rubric> = Arc::new(input.rubric.rubric.clone());
        let prepare = service.prepare(rubric.clone());
        let collected = collect_and_prepare(&input, &rubric, prepare).await;
        judge_and_rule(input, service, rubric, started, collected).await
    }
    .instrument(span.clone())
    .await;
    spans::record_audit(&span, &outcome.report);
    outcome
}

/// The detectives, and meanwhile the judge service's preparation (the prompt-cache warm-up):
/// its tokens are added to the collected usage.
async fn collect_and_prepare(
    input: &AuditInput,
    rubric: &Arc<Rubric>,
    prepare: LocalBoxFuture<'static, TokenUsage>,
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

/// One detective's branch arrives at the detective barrier. The barrier expects each of the
/// three once, so a refusal is the coordinator's own bug: logged, never dropped (the barrier
/// then stays incomplete, and its release says how many arrived).
fn arrive(barrier: &mut Barrier<Detective, ()>, detective: Detective) {
    if let Err(refusal) = barrier.arrive(detective, ()) {
        tracing::error!(
            detective = detective.as_str(),
            %refusal,
            "the detective barrier refused an arrival (a bug of the coordinator)"
        );
    }
}

/// START → the three detectives → the detective barrier → the EvidenceAggregator.
async fn collect_evidence(input: &AuditInput, rubric: &Arc<Rubric>) -> Collected {
    // ---- fan-out to the detectives -----------------------------------------------------------
    let fanout = Fanout::start(input, rubric);
    let mut barrier: Barrier<Detective, ()> = Barrier::new([
        Detective::RepoInvestigator,
        Detective::DocAnalyst,
        Detective::VisionInspector,
    ]);
    let spans = DetectiveSpans::open(&input.submission, barrier.expected_len());
    let (repo_branch, pdf) = fanout.investigate_repo(&spans.repo).await;
    let (doc_branch, vision_branch) = fanout.read_report(&pdf, &spans.doc, &spans.vision).await;
    let branches = Branches {
        repo: repo_branch,
        doc: doc_branch,
        vision: vision_branch,
    };
    let barrier_span = spans.detectives_done();
    let release = Release {
        arrived: 0,
        failed: branches.failed(),
        timed_out: fanout.timeouts.get(),
    };

    // ---- detective barrier ---------------------------------------------------------------------
    let mut state = AuditState::default();
    let (repo, doc, vision) = branches.merge(&mut state, &mut barrier, &fanout.served);
    release_detective_barrier(&barrier_span, &barrier, release);
    drop(barrier_span);
    let mut usage: BTreeMap<String, TokenUsage> = BTreeMap::new();
    if let Some(v) = vision.filter(|v| v.usage != TokenUsage::default()) {
        usage.insert("VisionInspector".to_string(), v.usage);
    }

    // ---- EvidenceAggregator (plain data, on the blocking pool) ----------------------------------
    let aggregated =
        aggregate_on_blocking_pool(state, repo.map(|o| o.facts), doc.map(|o| o.facts), rubric)
            .await;
    let aggregate::Aggregated {
        state,
        repo_facts,
        pdf_facts,
        excerpts,
    } = aggregated;
    for line in routes::grader_failures(state.evidences()) {
        tracing::warn!(submission = %input.submission, "{line}");
    }
    if let Some(line) = routes::not_inspected_by_choice(state.evidences()) {
        tracing::info!(submission = %input.submission, "{line}");
    }
    let pack = Arc::new(EvidencePack {
        evidences: state.evidences().clone(),
        excerpts,
    });
    drop(fanout);
    Collected {
        state,
        repo_facts,
        pdf_facts,
        pdf_name: pdf.ok().map(|(_, name): PdfBytes| name),
        pack,
        usage,
    }
}

/// The dimensions each detective serves (by the rubric's `target_artifact`).
struct Served {
    repo: Vec<Dimension>,
    doc: Vec<Dimension>,
    vision: Vec<Dimension>,
}

/// The detectives' fan-out for one audit: their actors, the dimensions each serves, and the
/// timeouts counted under the detective barrier's time limit.
struct Fanout<'a> {
    input: &'a AuditInput,
    rubric: &'a Arc<Rubric>,
    served: Served,
    repo: Addr<RepoInvestigator>,
    doc: Addr<DocAnalyst>,
    vision: Addr<VisionInspector>,
    timeouts: Cell<usize>,
}

/// The detective barrier's span and, under it, each detective's.
struct DetectiveSpans {
    barrier: tracing::Span,
    repo: tracing::Span,
    doc: tracing::Span,
    vision: tracing::Span,
}

impl DetectiveSpans {
    fn open(submission: &str, expected: usize) -> Self {
        let barrier = spans::barrier("detectives", None, expected, submission);
        DetectiveSpans {
            repo: spans::detective(&barrier, Detective::RepoInvestigator, submission),
            doc: spans::detective(&barrier, Detective::DocAnalyst, submission),
            vision: spans::detective(&barrier, Detective::VisionInspector, submission),
            barrier,
        }
    }

    /// Every detective has ended: their spans close, the barrier's stays open.
    fn detectives_done(self) -> tracing::Span {
        drop((self.repo, self.doc, self.vision));
        self.barrier
    }
}

/// What the RepoInvestigator is asked: the audit's repository, and the report's path inside
/// it when the PDF is to be taken from there (empty: the most likely report).
fn repo_request(input: &AuditInput) -> RepoRequest {
    let mut request = input.repo.clone();
    if let PdfSource::InRepo(path) = &input.pdf {
        request.extract_pdf = Some(path.clone().unwrap_or_default());
    }
    request
}

impl<'a> Fanout<'a> {
    fn start(input: &'a AuditInput, rubric: &'a Arc<Rubric>) -> Self {
        Fanout {
            input,
            rubric,
            served: Served {
                repo: rubric.dimensions_for(TargetArtifact::GithubRepo),
                doc: rubric.dimensions_for(TargetArtifact::PdfReport),
                vision: rubric.dimensions_for(TargetArtifact::PdfImages),
            },
            repo: RepoInvestigator.start(),
            doc: DocAnalyst.start(),
            vision: VisionInspector.start(),
            timeouts: Cell::new(0),
        }
    }

    /// The RepoInvestigator; the PDF comes from a file meanwhile, or from the repository after
    /// it.
    async fn investigate_repo(
        &self,
        span: &tracing::Span,
    ) -> (Branch<RepoOutput>, Result<PdfBytes, NoPdf>) {
        let msg = InvestigateRepo {
            request: repo_request(self.input),
            dimensions: self.served.repo.clone(),
            parent: span.clone(),
        };
        let t = self.input.timeouts.detectives;
        let investigate = branch::ask(&self.repo, msg, t, "RepoInvestigator", &self.timeouts)
            .instrument(span.clone());
        match &self.input.pdf {
            PdfSource::File(path) => futures::join!(investigate, branch::pdf_from_file(path)),
            PdfSource::NoReport => (
                investigate.await,
                Err(NoPdf::Absent(
                    "the submission has no PDF report (as stated for this submission)".into(),
                )),
            ),
            PdfSource::InRepo(wanted) => {
                // The report lives in the repository: the paperwork detectives wait for it.
                let repo_branch = investigate.await;
                let pdf = branch::pdf_from_repo(&repo_branch, |o| &o.facts, wanted.as_deref());
                (repo_branch, pdf)
            }
        }
    }

    /// The paperwork detectives, on the PDF (both at once), or the route without one.
    async fn read_report(
        &self,
        pdf: &Result<PdfBytes, NoPdf>,
        doc_span: &tracing::Span,
        vision_span: &tracing::Span,
    ) -> (Branch<DocOutput>, Branch<VisionOutput>) {
        let (bytes, name) = match pdf {
            Ok(pdf) => pdf,
            Err(no_pdf) => {
                let (outcome, error) = no_pdf.outcome();
                for span in [doc_span, vision_span] {
                    spans::record_not_asked(span, outcome, error);
                }
                return (no_pdf.branch(), no_pdf.branch());
            }
        };
        let doc = AnalyseReport {
            pdf: bytes.clone(),
            source: name.clone(),
            dimensions: self.served.doc.clone(),
            criteria: self
                .rubric
                .dimensions
                .iter()
                .map(|d| d.name.clone())
                .collect(),
            parent: doc_span.clone(),
        };
        let vision = InspectDiagrams {
            pdf: bytes.clone(),
            source: name.clone(),
            dimensions: self.served.vision.clone(),
            vision: self.input.vision.clone(),
            parent: vision_span.clone(),
        };
        let t = self.input.timeouts.detectives;
        futures::join!(
            branch::ask(&self.doc, doc, t, "DocAnalyst", &self.timeouts)
                .instrument(doc_span.clone()),
            branch::ask(&self.vision, vision, t, "VisionInspector", &self.timeouts)
                .instrument(vision_span.clone())
        )
    }
}

/// How the three detective branches ended.
struct Branches {
    repo: Branch<RepoOutput>,
    doc: Branch<DocOutput>,
    vision: Branch<VisionOutput>,
}

impl Branches {
    /// The branches that ended without a result.
    fn failed(&self) -> usize {
        [
            self.repo.is_done(),
            self.doc.is_done(),
            self.vision.is_done(),
        ]
        .iter()
        .filter(|done| !**done)
        .count()
    }

    /// Each branch's evidence merged into `state` (or its failure route taken), arriving at
    /// the detective barrier in turn; the detectives' outputs, taken of their evidence.
    fn merge(
        self,
        state: &mut AuditState,
        barrier: &mut Barrier<Detective, ()>,
        served: &Served,
    ) -> (Option<RepoOutput>, Option<DocOutput>, Option<VisionOutput>) {
        let repo = self
            .repo
            .merge(state, Detective::RepoInvestigator, &served.repo, |o| {
                std::mem::take(&mut o.evidence)
            });
        arrive(barrier, Detective::RepoInvestigator);
        let doc = self
            .doc
            .merge(state, Detective::DocAnalyst, &served.doc, |o| {
                std::mem::take(&mut o.evidence)
            });
        arrive(barrier, Detective::DocAnalyst);
        let vision = self
            .vision
            .merge(state, Detective::VisionInspector, &served.vision, |o| {
                std::mem::take(&mut o.evidence)
            });
        arrive(barrier, Detective::VisionInspector);
        debug_assert!(barrier.is_complete());
        (repo, doc, vision)
    }
}

/// The detective barrier is released: recorded on its span and logged.
fn release_detective_barrier(
    barrier_span: &tracing::Span,
    barrier: &Barrier<Detective, ()>,
    release: Release,
) {
    let release = Release {
        arrived: barrier.arrived_len(),
        ..release
    };
    spans::record_release(barrier_span, &release);
    barrier_span.in_scope(|| {
        tracing::info!(
            expected = barrier.expected_len() as i64,
            arrived = release.arrived as i64,
            failed = release.failed as i64,
            timed_out = release.timed_out as i64,
            "detective barrier released"
        )
    });
}

/// [`aggregate::aggregate`] off the actor thread. If it fails (a bug in the aggregation), every
/// criterion is flagged (node failure), never scored on partial evidence.
async fn aggregate_on_blocking_pool(
    state: AuditState,
    repo_facts: Option<crate::repo::RepoFacts>,
    pdf_facts: Option<crate::pdf::PdfFacts>,
    rubric: &Arc<Rubric>,
) -> aggregate::Aggregated {
    let for_aggregation = rubric.clone();
    let aggregated = crate::interrupt::off_thread("EvidenceAggregator", move || {
        let _stage = crate::telemetry::stage::enter(|| {
            "cross-referencing the report with the repository (evidence aggregation)".into()
        });
        aggregate::aggregate(state, repo_facts, pdf_facts, &for_aggregation)
    })
    .await;
    aggregated.unwrap_or_else(|e| {
        let mut state = AuditState::default();
        state.merge(routes::node_failure(
            Detective::EvidenceAggregator,
            &rubric.dimensions,
            &format!("the evidence aggregation failed: {e}"),
        ));
        aggregate::Aggregated {
            state,
            repo_facts: None,
            pdf_facts: None,
            excerpts: BTreeMap::new(),
        }
    })
}

/// The judges (one barrier per criterion, every request in flight at once) → the Chief Justice
/// (deliberate each criterion as it is released, then compose the report) → END.
async fn judge_and_rule(
    input: AuditInput,
    service: Rc<dyn JudgeService>,
    rubric: Arc<Rubric>,
    started: Started,
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
    let panel = JudgePanel::start(&service, input.restarts, input.timeouts.judge_request);
    let mut barriers = CriterionBarriers::new(&rubric.dimensions, &input.submission);
    let court = Court {
        input: &input,
        service: &service,
        rubric: &rubric,
        panel,
        chief,
        audit_span: tracing::Span::current(),
        synthesis_rules: Arc::new(rubric.synthesis_rules.clone()),
    };
    let (deliberations, mut in_flight) = court.fan_out(&state, &pack, &mut barriers);

    // ---- criterion barriers: each released criterion goes to the Chief Justice ----------------
    let mut tokens = Tokens::default();
    for (who, u) in before_judges {
        tokens.add(&who, None, u);
    }
    while let Some((criterion, persona, Supervised { result, timed_out })) = in_flight.next().await
    {
        if let Ok(answer) = &result {
            tokens.add(persona.as_str(), Some(&criterion), answer.usage);
        }
        if let Some(update) = barriers.arrive(&criterion, persona, result, timed_out) {
            state.merge(update);
            deliberations.push(court.deliberate(&criterion, &state));
        }
    }
    let ordered = in_rubric_order(&rubric, deliberated(deliberations).await);

    // ---- the report ---------------------------------------------------------------------------
    let metadata = court.metadata(started, pdf_name, tokens);
    let commit = repo_facts.as_ref().map(|f| f.commit.clone());
    let report = court.report(commit, ordered, metadata, &state).await;
    drop(court);

    AuditOutcome {
        report,
        state,
        repo_facts,
        pdf_facts,
    }
}

/// A criterion's deliberation by the Chief Justice, in flight.
type Deliberation = LocalBoxFuture<'static, Result<CriterionResult, MailboxError>>;

/// A judge's answer in flight: the criterion, the persona, the supervised result.
type Answer = LocalBoxFuture<'static, (String, Judge, Supervised)>;

/// The judging half of one audit: the judge panel and the Chief Justice, and what they are
/// asked with.
struct Court<'a> {
    input: &'a AuditInput,
    service: &'a Rc<dyn JudgeService>,
    rubric: &'a Arc<Rubric>,
    panel: JudgePanel,
    chief: Addr<ChiefJustice>,
    /// The audit's span: the parent of every deliberation and of the composition.
    audit_span: tracing::Span,
    synthesis_rules: Arc<BTreeMap<String, String>>,
}

impl Court<'_> {
    /// Asks the Chief Justice to deliberate on a criterion, on the state as it is now.
    fn deliberate(&self, criterion: &str, state: &AuditState) -> Deliberation {
        let dimension = self
            .rubric
            .dimension(criterion)
            .cloned()
            .expect("criterion from rubric");
        let msg = Deliberate::from_state(
            dimension,
            self.synthesis_rules.clone(),
            state,
            self.audit_span.clone(),
        );
        let chief = self.chief.clone();
        Box::pin(async move { chief.send(msg).await })
    }

    /// Every request of every criterion in flight at once (one per persona), each under its
    /// criterion's barrier; a criterion with nothing to judge skips its barrier and goes to the
    /// Chief Justice at once.
    fn fan_out(
        &self,
        state: &AuditState,
        pack: &Arc<EvidencePack>,
        barriers: &mut CriterionBarriers,
    ) -> (FuturesUnordered<Deliberation>, FuturesUnordered<Answer>) {
        let deliberations = FuturesUnordered::new();
        let in_flight = FuturesUnordered::new();
        for d in &self.rubric.dimensions {
            // Nothing to judge: the grader could not collect any evidence for this criterion.
            // No judge is asked (no tokens spent on it); the Chief Justice records it as not
            // assessed, with the reason and the fix.
            let evidence = state.evidence_for(&d.id);
            if crate::justice::unassessable(evidence, &crate::tally::Tally::of(evidence)).is_some()
            {
                barriers.skip(&d.id);
                deliberations.push(self.deliberate(&d.id, state));
                continue;
            }
            for persona in Judge::ALL {
                let req = JudgeRequest {
                    persona,
                    criterion_id: d.id.clone(),
                    rubric: self.rubric.clone(),
                    pack: pack.clone(),
                };
                let submission = &self.input.submission;
                let span = spans::judge(&barriers.span(&d.id), persona, &d.id, submission);
                let answer = self.panel.ask(req, span);
                let criterion = d.id.clone();
                in_flight
                    .push(Box::pin(async move { (criterion, persona, answer.await) }) as Answer);
            }
        }
        (deliberations, in_flight)
    }

    /// The run's metadata: the rubric and judges it was made with, its time and its tokens.
    fn metadata(&self, started: Started, pdf_name: Option<String>, tokens: Tokens) -> RunMetadata {
        let (input, service, rubric) = (self.input, self.service, self.rubric);
        RunMetadata {
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
            started_at: started.rfc3339,
            duration_ms: started.at.elapsed().as_millis() as u64,
            tokens: tokens.total,
            tokens_by_persona: tokens.by_persona,
            tokens_by_criterion: tokens.by_criterion,
            cost: None,
            judge_restarts: self.panel.restarts(),
            judge_resends: self.panel.resends(),
        }
    }

    /// The report, composed by the Chief Justice (or, if the actor cannot answer, by the same
    /// pure function here).
    async fn report(
        &self,
        commit: Option<String>,
        results: Vec<CriterionResult>,
        metadata: RunMetadata,
        state: &AuditState,
    ) -> AuditReport {
        let repo_url = self.input.repo.source.shown();
        let compose = Compose {
            repo_url: repo_url.to_string(),
            commit: commit.clone(),
            rubric: self.rubric.clone(),
            results: results.clone(),
            metadata: metadata.clone(),
            errors: state.errors().to_vec(),
            evidence: state.evidences().clone(),
            parent: self.audit_span.clone(),
        };
        compose_report(&self.chief, compose, || {
            crate::justice::compose(
                repo_url,
                commit,
                self.rubric,
                results,
                metadata,
                state.errors().to_vec(),
                state.evidences(),
            )
        })
        .await
    }
}

/// The Chief Justice's results by criterion, as the deliberations end.
async fn deliberated(
    mut deliberations: FuturesUnordered<Deliberation>,
) -> BTreeMap<String, CriterionResult> {
    let mut results: BTreeMap<String, CriterionResult> = BTreeMap::new();
    while let Some(r) = deliberations.next().await {
        match r {
            Ok(result) => {
                results.insert(result.dimension_id.clone(), result);
            }
            Err(e) => tracing::error!(error = %e, "Chief Justice did not answer"),
        }
    }
    results
}

/// The criteria's results in rubric order, never a criterion silently dropped.
fn in_rubric_order(
    rubric: &Rubric,
    mut results: BTreeMap<String, CriterionResult>,
) -> Vec<CriterionResult> {
    rubric
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
        .collect()
}

/// The Chief Justice composes the report; if the actor cannot answer, `fallback` runs the same
/// pure function here.
async fn compose_report(
    chief: &Addr<ChiefJustice>,
    compose: Compose,
    fallback: impl FnOnce() -> AuditReport,
) -> AuditReport {
    match chief.send(compose).await {
        Ok(report) => report,
        Err(e) => {
            tracing::error!(error = %e, "Chief Justice could not compose the report");
            fallback()
        }
    }
}

/// LLM tokens of one audit: in total, by user (persona, `VisionInspector`, `warm-up`) and by
/// criterion (judges only).
#[derive(Default)]
struct Tokens {
    total: TokenUsage,
    by_persona: BTreeMap<String, TokenUsage>,
    by_criterion: BTreeMap<String, TokenUsage>,
}

impl Tokens {
    fn add(&mut self, who: &str, criterion: Option<&str>, usage: TokenUsage) {
        self.total.add(usage);
        self.by_persona
            .entry(who.to_string())
            .or_default()
            .add(usage);
        if let Some(c) = criterion {
            self.by_criterion
                .entry(c.to_string())
                .or_default()
                .add(usage);
        }
    }
}
