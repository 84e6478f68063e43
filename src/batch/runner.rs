//! Runs the submissions of a batch: up to N at once, each in its own `Coordinator` actor (its
//! own state: nothing leaks from one submission to the next), all sharing the one judge service
//! (and so its one LLM limiter) through per-job [`CachedJudges`] wrappers.
//!
//! Per submission: resolve the audited commit → find or create its job in the store → skip it
//! when already done → collect evidence (or restore the persisted evidence) and persist it →
//! judge (opinions persisted as they arrive, answers cached) → persist the report → write its
//! files. Any failure (unreachable repository, store error, a crashed coordinator, even a panic)
//! ends that submission as `failed` with its reason; the others go on.
//!
//! On a shared store (PostgreSQL) another worker may hold a submission under a live lease: the
//! store answers [`Begin::Busy`], the submission is set aside, and the runner comes back to the
//! set-aside ones in further passes (every `poll_interval`) until each is done or failed, by this
//! worker or another, or its holder's lease expired and this worker took it over.
//!
//! Ctrl-C: the first one stops starting submissions and lets those in flight finish; a second
//! one stops at once (what the in-flight ones had done is already in the store). Either way the
//! outputs are written and the next run resumes.

use super::cache::{CacheShared, CachedJudges};
use super::manifest::Submission;
use super::outputs;
use super::progress::{Display, Stats};
use super::resolve::{self, ResolveError};
use super::store::BatchStore;
use super::store::{Begin, Job, JobKey, JobStatus};
use super::stored::{from_stored, to_stored};
use crate::audit::{AuditInput, AuditOutcome, Collected, RestartPolicy, Timeouts};
use crate::interrupt::Interrupt;
use crate::launch::{AuditBuilder, Launched};
use crate::rubric::LoadedRubric;
use futures::{FutureExt, StreamExt};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the runner needs besides the submissions.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub out: PathBuf,
    pub concurrency: usize,
    pub regrade_all: bool,
    pub regrade: BTreeSet<String>,
    /// A regraded submission is judged again from its stored evidence (the latest job holding
    /// evidence, any rubric and judges), at that job's commit; the repository is not read. A
    /// submission without stored evidence is audited as usual.
    pub rejudge: bool,
    pub rubric: Arc<LoadedRubric>,
    /// Describes the judges (mode, models, auditor version): part of the job key.
    pub judge_config: String,
    pub timeouts: Timeouts,
    pub restarts: RestartPolicy,
    /// The VisionInspector's model client, when diagrams are judged.
    pub vision: Option<crate::llm::LlmSession>,
    /// How long resolving a submission's commit may take.
    pub resolve_timeout: Duration,
    /// Evidence collected in a child process per submission (the CLI); `None`: in process.
    pub isolation: Option<super::isolate::Isolation>,
}

/// How one submission ended in this run.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Graded; `skipped` when it was already done in an earlier run.
    Done {
        job_id: i64,
        skipped: bool,
    },
    Failed {
        job_id: Option<i64>,
        reason: String,
    },
    /// Not reached: the run was interrupted.
    Pending,
    /// Held by another worker under a live lease (a shared store); asked again in the next
    /// pass. Never returned by [`run`].
    Busy {
        holder: String,
    },
}

struct Ctx {
    cfg: Rc<RunConfig>,
    store: Rc<dyn BatchStore>,
    cache: Rc<CacheShared>,
    stats: Rc<Stats>,
    display: Rc<Display>,
    interrupt: Rc<Interrupt>,
    /// Commits resolved in an earlier pass, by submission id (a held submission is asked again).
    commits: RefCell<HashMap<String, Result<String, NoCommit>>>,
}

/// Why a submission's commit is not known: its job fails with this reason.
#[derive(Debug, Clone, thiserror::Error)]
enum NoCommit {
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error("resolving the commit crashed: {0}")]
    Crashed(#[source] Arc<tokio::task::JoinError>),
    #[error("the repository did not answer within {}s", .0.as_secs())]
    TimedOut(Duration),
}

/// Grades the submissions; the result is aligned with `subs`. Must run inside an actix System.
pub async fn run(
    subs: &[Submission],
    cfg: Rc<RunConfig>,
    store: Rc<dyn BatchStore>,
    cache: Rc<CacheShared>,
    display: Rc<Display>,
    interrupt: Rc<Interrupt>,
) -> Vec<Outcome> {
    let stats = cache.stats.clone();
    stats.total.set(subs.len() as u64);
    let ctx = Rc::new(Ctx {
        cfg: cfg.clone(),
        store,
        cache,
        stats: stats.clone(),
        display: display.clone(),
        interrupt: interrupt.clone(),
        commits: RefCell::new(HashMap::new()),
    });
    let results: Rc<RefCell<Vec<Outcome>>> =
        Rc::new(RefCell::new(vec![Outcome::Pending; subs.len()]));
    let started = Instant::now();

    // Passes over the submissions: the first over all of them, the next ones over those another
    // worker held (a shared store), until none is held or the run is interrupted.
    let all = {
        let ctx = ctx.clone();
        let results = results.clone();
        async move {
            let mut todo: Vec<usize> = (0..subs.len()).collect();
            let mut told = false;
            loop {
                let busy = pass(subs, &todo, &ctx, &results, started).await;
                if busy.is_empty() || ctx.interrupt.count() > 0 {
                    break;
                }
                if !told {
                    ctx.display.println(&format!(
                        "{} submission(s) held by other workers: waiting for them to finish, or for their leases to expire to take them over",
                        busy.len()
                    ));
                    told = true;
                }
                tokio::select! {
                    _ = tokio::time::sleep(ctx.store.poll_interval()) => {}
                    _ = ctx.interrupt.reached(1) => {}
                }
                todo = busy;
            }
        }
    };
    let ticker = async {
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            display.update(&stats, started, false);
        }
    };
    tokio::select! {
        _ = all => {}
        _ = interrupt.reached(2) => {
            display.println("second Ctrl-C: stopping now; what was done is saved, the next run resumes");
        }
        _ = ticker => {}
    }
    display.update(&stats, started, true);
    display.finish();
    results
        .take()
        .into_iter()
        .map(|o| match o {
            Outcome::Busy { .. } => Outcome::Pending,
            o => o,
        })
        .collect()
}

/// One pass over the submissions `todo` (indices into `subs`), `concurrency` at once; returns
/// those another worker holds.
async fn pass(
    subs: &[Submission],
    todo: &[usize],
    ctx: &Rc<Ctx>,
    results: &RefCell<Vec<Outcome>>,
    started: Instant,
) -> Vec<usize> {
    let mut busy = Vec::new();
    futures::stream::iter(todo.iter().copied())
        .map(|i| {
            let ctx = ctx.clone();
            let sub = subs[i].clone();
            async move {
                if ctx.interrupt.count() > 0 {
                    return (i, Outcome::Pending);
                }
                ctx.stats.started();
                let job_cell = Rc::new(Cell::new(None));
                let outcome = std::panic::AssertUnwindSafe(grade_one(&sub, &ctx, &job_cell))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|panic| {
                        let msg = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "unknown panic".into());
                        let reason = format!("internal error while grading: {msg}");
                        fail(&ctx, &sub, job_cell.get(), &reason)
                    });
                match &outcome {
                    Outcome::Busy { .. } => ctx.stats.set_aside(),
                    Outcome::Done { skipped, .. } => ctx.stats.finished(true, *skipped),
                    _ => ctx.stats.finished(false, false),
                }
                if let Outcome::Failed { reason, .. } = &outcome {
                    ctx.display
                        .println(&format!("{}: failed: {reason}", sub.id));
                }
                ctx.display.update(&ctx.stats, started, false);
                (i, outcome)
            }
        })
        .buffer_unordered(ctx.cfg.concurrency.max(1))
        .for_each(|(i, o)| {
            if matches!(o, Outcome::Busy { .. }) {
                busy.push(i);
            }
            results.borrow_mut()[i] = o;
            futures::future::ready(())
        })
        .await;
    busy.sort_unstable();
    busy
}

/// The submission failed: `reason` recorded with its job and written as its `failed.md`.
fn fail(
    ctx: &Ctx,
    sub: &Submission,
    job_id: Option<i64>,
    reason: impl std::fmt::Display,
) -> Outcome {
    failed(ctx, sub, job_id, &reason.to_string(), true)
}

/// The audit's coordinator stopped while doing something (a mailbox error).
#[derive(Debug, thiserror::Error)]
#[error("the coordinator stopped while {0}: {1}")]
struct CoordinatorStopped(&'static str, #[source] actix::MailboxError);

/// The store failed, not the submission: recorded as a failure, its report kept.
fn store_fail(
    ctx: &Ctx,
    sub: &Submission,
    job_id: Option<i64>,
    e: impl std::fmt::Display,
) -> Outcome {
    failed(ctx, sub, job_id, &format!("batch store error: {e}"), false)
}

fn failed(
    ctx: &Ctx,
    sub: &Submission,
    job_id: Option<i64>,
    reason: &str,
    remove_reports: bool,
) -> Outcome {
    if let Some(id) = job_id {
        if let Err(e) = ctx.store.fail_job(id, reason) {
            tracing::error!(error = %e, "could not record a failure");
        }
    }
    if let Err(e) = outputs::write_failure(
        &ctx.cfg.out,
        &sub.id,
        &sub.repo_shown,
        reason,
        remove_reports,
    ) {
        tracing::error!(error = %e, "could not write failed.md");
    }
    Outcome::Failed {
        job_id,
        reason: reason.to_string(),
    }
}

/// How a step of [`grade_one`] ended the submission early: the outcome it ended with (failed,
/// skipped as done, held by another worker).
type Step<T> = Result<T, Outcome>;

/// A re-judgement's starting point: the evidence of the submission's latest job holding some,
/// and the commit it was collected at.
struct Prior {
    commit: String,
    evidence: String,
}

/// Grades one submission: its plan (the stored evidence to judge again, the commit, the job),
/// then its execution (the evidence, the judgement, the report stored and written).
async fn grade_one(sub: &Submission, ctx: &Ctx, job_cell: &Cell<Option<i64>>) -> Outcome {
    match grade_steps(sub, ctx, job_cell).await {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

async fn grade_steps(sub: &Submission, ctx: &Ctx, job_cell: &Cell<Option<i64>>) -> Step<Outcome> {
    let cfg = &ctx.cfg;
    let regrade = cfg.regrade_all || cfg.regrade.contains(&sub.id);
    let prior = prior_evidence(sub, ctx, regrade)?;
    let commit = commit_of(sub, ctx, prior.as_ref()).await;
    let job = begin(sub, ctx, &commit, regrade)?;
    job_cell.set(Some(job.id));
    if let Some(prior) = &prior {
        adopt_prior(sub, ctx, &job, prior)?;
    }
    let commit = pinned(sub, ctx, &job, commit)?;
    tracing::info!(submission = %sub.id, %commit, job = job.id, generation = job.generation, "grading");

    let service = Rc::new(CachedJudges {
        shared: ctx.cache.clone(),
        job_id: job.id,
        generation: job.generation,
    });
    let audit = Launched::start(service);
    let input = AuditBuilder::new(sub.repo.clone(), cfg.rubric.clone())
        // Pinned: the evidence is collected at exactly the commit of the job key.
        .git_ref(Some(commit.clone()))
        .pdf(sub.pdf.clone())
        .submission(sub.id.clone())
        .timeouts(cfg.timeouts)
        .restarts(cfg.restarts)
        .vision(cfg.vision.clone())
        .build();
    let collected = evidence(sub, ctx, &job, prior.as_ref(), &audit, &input, &commit).await?;
    let outcome = audit
        .judge(input, collected)
        .await
        .map_err(|e| fail(ctx, sub, Some(job.id), CoordinatorStopped("judging", e)))?;
    drop(audit);
    record(sub, ctx, &job, &outcome)
}

/// A re-judgement's stored evidence (`None` unless the submission is regraded with
/// `rejudge`, or when no job of it holds evidence).
fn prior_evidence(sub: &Submission, ctx: &Ctx, regrade: bool) -> Step<Option<Prior>> {
    if !(regrade && ctx.cfg.rejudge) {
        return Ok(None);
    }
    match ctx.store.latest_with_evidence(&sub.id) {
        Ok(p) => Ok(p.and_then(|j| {
            Some(Prior {
                commit: j.key.commit,
                evidence: j.evidence?,
            })
        })),
        Err(e) => Err(store_fail(ctx, sub, None, e)),
    }
}

/// The commit to grade: the prior evidence's, else one resolved in an earlier pass, else
/// resolved now (within `resolve_timeout`) and remembered for the next passes.
async fn commit_of(sub: &Submission, ctx: &Ctx, prior: Option<&Prior>) -> Result<String, NoCommit> {
    let known = prior
        .map(|p| Ok(p.commit.clone()))
        .or_else(|| ctx.commits.borrow().get(&sub.id).cloned());
    if let Some(commit) = known {
        return commit;
    }
    let timeout = ctx.cfg.resolve_timeout;
    let source = sub.repo.clone();
    let git_ref = sub.git_ref.clone();
    let resolved = tokio::time::timeout(
        timeout,
        tokio::task::spawn_blocking(move || resolve::resolve(&source, git_ref.as_deref())),
    )
    .await;
    let commit = match resolved {
        Ok(Ok(r)) => r.map_err(NoCommit::Resolve),
        Ok(Err(e)) => Err(NoCommit::Crashed(Arc::new(e))),
        Err(_) => Err(NoCommit::TimedOut(timeout)),
    };
    ctx.commits
        .borrow_mut()
        .insert(sub.id.clone(), commit.clone());
    commit
}

/// The submission's job in the store, when there is work to do on it; otherwise how it ends:
/// done already (skipped), failed in another worker, held by another worker.
fn begin(
    sub: &Submission,
    ctx: &Ctx,
    commit: &Result<String, NoCommit>,
    regrade: bool,
) -> Step<Job> {
    let cfg = &ctx.cfg;
    let key = JobKey {
        submission: sub.id.clone(),
        commit: commit.clone().unwrap_or_default(),
        rubric_sha256: cfg.rubric.sha256.clone(),
        judge_config: cfg.judge_config.clone(),
    };
    match ctx
        .store
        .begin_job(&key, sub.repo.shown(), sub.git_ref.as_deref(), regrade)
    {
        Ok(Begin::Finished(job)) if job.status == JobStatus::Failed => {
            // Failed in another worker during this worker's run (a shared store): it stands.
            let reason = job
                .failure
                .clone()
                .unwrap_or_else(|| "failed in another worker".into());
            if let Err(e) =
                outputs::write_failure(&cfg.out, &sub.id, &sub.repo_shown, &reason, true)
            {
                tracing::error!(error = %e, "could not write failed.md");
            }
            Err(Outcome::Failed {
                job_id: Some(job.id),
                reason,
            })
        }
        Ok(Begin::Busy { holder }) => Err(Outcome::Busy { holder }),
        Ok(Begin::Finished(job)) => Err(Outcome::Done {
            job_id: job.id,
            skipped: true,
        }),
        Ok(Begin::Work(job)) => Ok(job),
        Err(e) => Err(store_fail(ctx, sub, None, e)),
    }
}

/// The regrade cleared the job's evidence (or the job is new): the stored evidence is this
/// job's now, persisted before any judge is asked, so a resumed run reads it too.
fn adopt_prior(sub: &Submission, ctx: &Ctx, job: &Job, prior: &Prior) -> Step<()> {
    if job.evidence.as_deref() != Some(prior.evidence.as_str()) {
        if let Err(e) = ctx.store.save_evidence(job.id, &prior.evidence) {
            return Err(store_fail(ctx, sub, Some(job.id), e));
        }
    }
    tracing::info!(submission = %sub.id, job = job.id, "judged again from the stored evidence");
    Ok(())
}

/// The commit the job is graded at; without one, the job fails with the reason.
fn pinned(
    sub: &Submission,
    ctx: &Ctx,
    job: &Job,
    commit: Result<String, NoCommit>,
) -> Step<String> {
    let reason = match commit {
        Ok(commit) => return Ok(commit),
        Err(reason) => reason,
    };
    let reason = if super::manifest::is_relative_local(&sub.repo_shown) {
        format!(
            "{reason} (a relative path in a manifest is read from the manifest's folder, not the current directory)"
        )
    } else {
        reason.to_string()
    };
    Err(fail(ctx, sub, Some(job.id), reason))
}

/// Evidence: restored when a previous run persisted it, else collected and persisted. The
/// judges always see the evidence as read back from the store, so the cache keys of a
/// resumed run are the very same as the first run's.
async fn evidence(
    sub: &Submission,
    ctx: &Ctx,
    job: &Job,
    prior: Option<&Prior>,
    audit: &Launched,
    input: &AuditInput,
    commit: &str,
) -> Step<Collected> {
    let restored = prior
        .map(|p| p.evidence.as_str())
        .or(job.evidence.as_deref())
        .and_then(|json| match from_stored(json) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(submission = %sub.id, error = %e, "collecting the evidence again");
                None
            }
        });
    if let Some(collected) = restored {
        return Ok(collected);
    }
    let json = match &ctx.cfg.isolation {
        Some(iso) => collect_isolated(sub, ctx, job, iso, commit).await?,
        None => collect_in_process(sub, ctx, job, audit, input).await?,
    };
    if let Err(e) = ctx.store.save_evidence(job.id, &json) {
        return Err(store_fail(ctx, sub, Some(job.id), e));
    }
    from_stored(&json).map_err(|e| fail(ctx, sub, Some(job.id), e))
}

/// The evidence collected in a child process, as stored JSON.
async fn collect_isolated(
    sub: &Submission,
    ctx: &Ctx,
    job: &Job,
    iso: &super::isolate::Isolation,
    commit: &str,
) -> Step<String> {
    let cfg = &ctx.cfg;
    let req = super::isolate::CollectRequest {
        submission: sub.id.clone(),
        repo: sub.repo.expose().to_string(),
        repo_shown: Some(sub.repo.shown().to_string()),
        git_ref: commit.to_string(),
        pdf: sub.pdf.clone(),
        rubric: cfg.rubric.rubric.clone(),
        rubric_source: cfg.rubric.source.clone(),
        rubric_sha256: cfg.rubric.sha256.clone(),
        detectives_timeout: cfg.timeouts.detectives,
        vision: cfg.vision.is_some(),
        prompts: iso.prompts.clone(),
    };
    match super::isolate::collect(iso, &req).await {
        Ok(json) => Ok(json),
        // The child's error may quote the repository's address: shown redacted.
        Err(e) => Err(fail(ctx, sub, Some(job.id), sub.repo.scrub(&e.to_string()))),
    }
}

/// The evidence collected by the audit's own coordinator, as stored JSON.
async fn collect_in_process(
    sub: &Submission,
    ctx: &Ctx,
    job: &Job,
    audit: &Launched,
    input: &AuditInput,
) -> Step<String> {
    let fresh = audit.collect_evidence(input.clone()).await.map_err(|e| {
        fail(
            ctx,
            sub,
            Some(job.id),
            CoordinatorStopped("collecting evidence", e),
        )
    })?;
    to_stored(&fresh).map_err(|e| fail(ctx, sub, Some(job.id), e))
}

/// The judged submission's report stored (the job finished) and written.
fn record(sub: &Submission, ctx: &Ctx, job: &Job, outcome: &AuditOutcome) -> Step<Outcome> {
    let sidecar = crate::report::Sidecar::new(
        &outcome.report,
        &outcome.state,
        outcome.repo_facts.as_ref(),
        outcome.pdf_facts.as_ref(),
    );
    let judge_failures = outcome.state.failures().len() as u32;
    if judge_failures > 0 {
        ctx.display.println(&format!(
            "{}: {judge_failures} judge requests gave no opinion (flagged in the report); the next run asks them again",
            sub.id
        ));
    }
    let stored = sidecar
        .to_json()
        .map_err(|e| store_fail(ctx, sub, Some(job.id), e))?;
    if let Err(e) = ctx.store.finish_job(
        job.id,
        &stored,
        outcome.report.overall_score,
        judge_failures,
    ) {
        return Err(store_fail(ctx, sub, Some(job.id), e));
    }
    if let Err(e) = outputs::write_report(&ctx.cfg.out, &sub.id, &sidecar) {
        // The report is in the store; the output stage writes it again.
        tracing::error!(submission = %sub.id, error = %e, "could not write the report files");
    }
    Ok(Outcome::Done {
        job_id: job.id,
        skipped: false,
    })
}
