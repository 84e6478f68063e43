//! `auditor batch`: grades a cohort from a manifest, durably and resumably.
//!
//! | module | role |
//! |---|---|
//! | [`manifest`] | reads the manifest (CSV or JSON Lines); bad rows reported by line, the others proceed |
//! | [`resolve`] | the commit each submission is audited at (part of its job key), before any work |
//! | [`store`] | the store interface ([`store::BatchStore`]) and its records; [`store::spec`] the choice of backend (`--store`); [`store::sqlite`] the SQLite store in the output directory: jobs, evidence, opinions, response cache, counters; [`store::postgres`] the PostgreSQL store shared by many workers: leases, heartbeat, takeover, shared cache |
//! | [`stored`] | a job's evidence as the store keeps it between the detectives and the judges |
//! | [`cache`] | the response cache as a `JudgeService` wrapper: a resumed run never asks twice |
//! | [`runner`] | N submissions at once, each in its own Coordinator; failures isolated; Ctrl-C |
//! | [`progress`] | indicatif bars on a terminal, plain periodic lines otherwise |
//! | [`outputs`] | per-submission reports, grades.csv, summary.md, index.html |
//! | [`meta`] | `DIR/batch.json`: the manifest, rubric and judges a directory is graded with (for `auditor serve`) |
//! | [`review_schema`] | the course team's append-only review history table, on both backends |
//! | [`similarity`] | cohort code similarity: fingerprints stored per submission, similarity.csv/.json/.html, the dashboard's section, `auditor similarity` |
//!
//! Re-running the same command resumes: finished submissions are skipped, unfinished ones
//! continue from their persisted evidence and cached answers, failed ones are retried.
//! `--regrade ID` / `--regrade-all` re-run finished submissions on purpose, with fresh judge
//! answers (an unfinished one is resumed either way).

pub mod cache;
pub mod isolate;
pub mod manifest;
pub mod meta;
pub mod outputs;
pub mod progress;
pub mod resolve;
pub mod review_schema;
pub mod runner;
pub mod similarity;
pub mod store;
pub mod stored;

use crate::audit::{RestartPolicy, Timeouts};
use crate::exit::{self, CliError};
use crate::interrupt::{Interrupt, OnSecond};
use crate::judges::JudgeService;
use crate::model::Judge;
use crate::rubric::LoadedRubric;
use clap::Args;
use manifest::{Manifest, Row};
use outputs::{GradeRow, RowStatus};
use runner::{Outcome, RunConfig};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use store::BatchStore;
use store::spec::StoreSpec;

/// `auditor batch MANIFEST --out DIR [--concurrency N] ...`
#[derive(Debug, Clone, Args)]
#[command(
    about = "Grade a cohort from a manifest: durable, resumable, never asks the LLM twice",
    long_about = "Grades every submission of a manifest (CSV with the header id,repo,pdf[,ref], or JSON Lines \
with the same keys). repo is an https URL, a file:// URL or a local path; pdf is a local path, \
repo:<path in the repository>, or empty (look inside the repository). Relative local paths in the \
manifest (repo and pdf) are read from the manifest's folder, not from the current directory. Everything is persisted in DIR/batch.sqlite as it happens: \
re-running the same command resumes (finished submissions skipped, unfinished ones continued, failed \
ones retried) and never asks the judges the same question twice. With --store postgres://… (or \
AUDITOR_STORE) the store is a PostgreSQL database shared by any number of workers running the same \
command on several machines: each submission is claimed by one worker under a lease, a dead \
worker's submissions are taken over, the judges' answers are shared; --status shows the cohort's \
progress, --outputs-only writes the tables from the database.\n\n\
Outputs: DIR/<id>/report.md, report.html and report.json, DIR/grades.csv (one row per manifest row), \
DIR/summary.md, DIR/index.html; unless --no-similarity, the cohort's code similarity: DIR/similarity.csv \
(pairs flagged for review), similarity.json and similarity.html (the shared fragments side by side), \
its fingerprints stored with the batch so that a resumed run fingerprints only what is new.\n\n\
Exit codes: 0 every submission graded and nothing calls for attention (a criterion left out only because no vision model was configured does not count); 2 bad input (nothing ran); \
3 some rows invalid, failed or flagged; 130 interrupted (Ctrl-C; run again to resume)."
)]
pub struct BatchArgs {
    /// The manifest: CSV (header id,repo,pdf[,ref]) or JSON Lines with the same keys. Local
    /// paths in it (repo, pdf) are read from the manifest's folder, not the current directory.
    /// With --status or --outputs-only it may be left out: the manifest of the last batch run
    /// with this --out is used.
    #[arg(
        value_name = "MANIFEST",
        required_unless_present_any = ["status", "outputs_only"]
    )]
    pub manifest: Option<PathBuf>,
    /// Output directory (created if needed); holds the store, so use the same one to resume.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Submissions graded at once (they all share the judges' one LLM limiter).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub concurrency: usize,
    /// Re-grade this submission even if it is finished (repeatable).
    #[arg(long = "regrade", value_name = "ID")]
    pub regrade: Vec<String>,
    /// Re-grade every submission.
    #[arg(long)]
    pub regrade_all: bool,
    /// Only these submissions are graded; the others stay as the store has them (`auditor
    /// review regrade ID`). Not a flag of `auditor batch`.
    #[arg(skip)]
    pub only: Option<BTreeSet<String>>,
    /// The regraded submissions are judged again from their stored evidence (the latest job of
    /// the submission holding evidence, under any rubric and judges), at its commit, without
    /// reading the repository (`auditor review regrade` without `--reaudit`). Not a flag of
    /// `auditor batch`.
    #[arg(skip)]
    pub rejudge: bool,
    /// Rubric file (default: the rubric built into the binary; never ./rubric.json, which
    /// may belong to the audited submission).
    #[arg(long, value_name = "PATH")]
    pub rubric: Option<PathBuf>,
    #[command(flatten)]
    pub panel: crate::flags::PanelArgs,
    /// Where jobs, evidence, opinions and the response cache live: "sqlite" (default:
    /// DIR/batch.sqlite) or a PostgreSQL database shared by any number of workers running the
    /// same command (each with its own --out), as a URL postgres://USER@HOST:PORT/DATABASE or
    /// libpq keywords "host=HOST user=USER dbname=DATABASE". Keep the password out of it (a
    /// command line is visible to every local user): PGPASSWORD, a password file (~/.pgpass,
    /// PGPASSFILE) or --store-file.
    #[arg(
        long,
        value_name = "sqlite|postgres://…|host=…",
        env = "AUDITOR_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// Read the store's connection string (one line, in any form --store takes) from this file:
    /// a password in it stays off the command line. Wins over --store and AUDITOR_STORE.
    #[arg(long, value_name = "PATH")]
    pub store_file: Option<PathBuf>,
    /// Print the cohort's progress from the store (done, failed, running and by which worker,
    /// not started) and exit; grades nothing. Exit 0 when every submission is done, 3 otherwise.
    #[arg(long, conflicts_with = "outputs_only")]
    pub status: bool,
    /// Write grades.csv, summary.md, index.html and missing reports from the store and exit;
    /// grades nothing.
    #[arg(long)]
    pub outputs_only: bool,
    /// Skip the cohort code similarity step (on by default: similarity.csv, .json, .html and
    /// a dashboard section; a flagged pair asks for review and never changes a score).
    #[arg(long)]
    pub no_similarity: bool,
    #[command(flatten)]
    pub similarity: similarity::SimilarityArgs,
    /// Seconds between progress lines when stderr is not a terminal.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub progress_every: u64,
    /// No progress display.
    #[arg(long)]
    pub no_progress: bool,
    /// Testing and benchmarks only, absent from release binaries (debug builds and the `sim`
    /// profile): the judges answer after this many milliseconds, as a slow LLM would.
    #[cfg(debug_assertions)]
    #[arg(long, hide = true, value_name = "MS")]
    pub simulate_latency_ms: Option<u64>,
    /// Testing and benchmarks only (like `simulate_latency_ms`): at most this many simulated
    /// requests at once.
    #[cfg(debug_assertions)]
    #[arg(long, hide = true, value_name = "N", default_value_t = 32)]
    pub simulate_max_in_flight: usize,
}

/// What a batch run produced.
#[derive(Debug, Clone)]
pub struct BatchSummary {
    pub rows: Vec<GradeRow>,
    pub interrupted: bool,
    pub counters: store::Counters,
    /// Requests sent to the judge service in this run.
    pub asked_this_run: u64,
    pub cache_hits_this_run: u64,
    /// The judges were the offline rules: nothing was asked of any model.
    pub offline_judges: bool,
    /// `--status`: the rows are the store's view, already printed; nothing was written.
    pub status_only: bool,
    pub out: PathBuf,
    /// Pairs flagged by the code similarity step (`None`: the step did not run).
    pub similar_pairs: Option<usize>,
}

impl BatchSummary {
    pub fn exit_code(&self) -> i32 {
        if self.interrupted {
            exit::INTERRUPTED
        } else if self
            .rows
            .iter()
            .all(|r| r.status == RowStatus::Done && !r.degraded && !r.needs_human_review)
        {
            exit::OK
        } else {
            exit::INCOMPLETE
        }
    }
}

/// Why a batch could not run (nothing ran: bad input, exit 2) or stopped (the grader's own
/// failure, exit 1). Each case keeps its cause as the source.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("--concurrency {0} is out of range: give a number from 1 to 1024")]
    Concurrency(usize),
    #[error(transparent)]
    Rubric(#[from] crate::rubric::RubricError),
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    #[error("manifest {}: no valid row to grade (see the errors above)", .0.display())]
    NoValidRow(PathBuf),
    #[error("{}: line {line} ({id}): ref {git_ref:?}: {source}", manifest.display())]
    UnknownRef {
        manifest: PathBuf,
        line: usize,
        id: String,
        git_ref: String,
        #[source]
        source: Box<resolve::ResolveError>,
    },
    #[error(transparent)]
    SimilarityOptions(#[from] similarity::OptionsError),
    #[error("--regrade {0}: no submission with this id in the manifest")]
    UnknownId(String),
    #[error("cannot create the output directory {}: {source}", dir.display())]
    OutputDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "another `auditor batch` is running with --out {}: wait for it to finish, or use another directory",
        .0.display()
    )]
    Busy(PathBuf),
    #[error(transparent)]
    StoreSpec(#[from] store::spec::SpecError),
    /// The store could not be opened (bad input: the store given).
    #[error(transparent)]
    StoreOpen(store::StoreError),
    #[error(
        "{} was graded with another {what} than this regrade would use: regrading only {only} would split the cohort; regrade every submission (--all) to change it",
        out.display()
    )]
    SplitCohort {
        out: PathBuf,
        what: &'static str,
        only: String,
    },
    #[error(
        "no manifest given, and no batch has run with --out {} yet to take it from: give the manifest (auditor batch MANIFEST --out {} ...)",
        .0.display(),
        .0.display()
    )]
    NoManifest(PathBuf),
    /// The store failed while the batch ran (exit 1).
    #[error(transparent)]
    Store(store::StoreError),
    #[error(transparent)]
    Meta(#[from] meta::MetaError),
    #[error(transparent)]
    Interrupt(#[from] crate::interrupt::InterruptError),
    #[error(transparent)]
    Outputs(#[from] outputs::OutputError),
}

impl BatchError {
    /// Found before anything ran: the input is to fix (exit 2); otherwise the grader's own
    /// failure (exit 1).
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            BatchError::Store(_)
                | BatchError::Meta(_)
                | BatchError::Interrupt(_)
                | BatchError::Outputs(_)
        )
    }
}

impl From<BatchError> for CliError {
    fn from(e: BatchError) -> Self {
        if e.is_bad_input() {
            CliError::bad_input(e)
        } else {
            CliError::internal(e)
        }
    }
}

/// Entry point of `auditor batch`: the exit code of a run that went through (0, 3 or 130), or
/// why it could not run.
pub fn run_batch(args: BatchArgs) -> Result<i32, CliError> {
    crate::alloc::prefer_low_memory();
    let panel = crate::flags::set_up_panel(&args.panel)?;
    if !args.status && !args.outputs_only {
        crate::flags::check_endpoint(&panel)?;
    }
    let service = panel.service;
    #[cfg(debug_assertions)]
    let service: Rc<dyn JudgeService> = match args.simulate_latency_ms {
        Some(ms) => Rc::new(cache::SimulatedLatency {
            inner: service,
            delay: Duration::from_millis(ms),
            limiter: Rc::new(tokio::sync::Semaphore::new(
                args.simulate_max_in_flight.max(1),
            )),
        }),
        None => service,
    };
    let isolation = isolate::Isolation::from_env(args.panel.prompts.clone(), args.concurrency)
        .map_err(CliError::bad_input)?;
    let setup = JudgeSetup {
        isolation,
        vision: panel.vision,
        judge_timeout: panel
            .judge_timeout
            .unwrap_or(Timeouts::default().judge_request),
        fingerprint: panel.fingerprint,
    };
    let summary = run_batch_inner(&args, service, setup, true)?;
    print_summary(&summary);
    Ok(summary.exit_code())
}

/// The judge configuration part of the job key: what decides the judges' answers besides the
/// request itself.
pub fn judge_config(service: &dyn JudgeService) -> String {
    let models: Vec<String> = Judge::ALL
        .iter()
        .map(|j| format!("{}={}", j.as_str(), service.model(*j).unwrap_or_default()))
        .collect();
    format!(
        "auditor={};mode={:?};{}",
        env!("CARGO_PKG_VERSION"),
        service.mode(),
        models.join(",")
    )
}

/// Holds `DIR/.batch.lock` for the run (two batches on one directory would fight): an SQLite
/// file kept under an exclusive transaction, released by the OS even when the process is killed.
struct DirLock(#[allow(dead_code)] rusqlite::Connection);

fn lock_dir(out: &Path) -> Result<DirLock, BatchError> {
    let path = out.join(".batch.lock");
    let cannot = |source: rusqlite::Error| BatchError::Lock {
        path: path.clone(),
        source,
    };
    let conn = rusqlite::Connection::open(&path).map_err(cannot)?;
    conn.busy_timeout(Duration::from_millis(0))
        .map_err(cannot)?;
    match conn.execute_batch("BEGIN EXCLUSIVE") {
        Ok(()) => Ok(DirLock(conn)),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseBusy
                || e.code == rusqlite::ErrorCode::DatabaseLocked =>
        {
            Err(BatchError::Busy(out.to_path_buf()))
        }
        Err(e) => Err(cannot(e)),
    }
}

/// Runs a batch with the given judge service (the CLI's, or a test's). Prints bad rows and
/// progress to stderr unless `show_progress` is false.
pub fn run_batch_with(
    args: &BatchArgs,
    service: Rc<dyn JudgeService>,
    show_progress: bool,
) -> Result<BatchSummary, BatchError> {
    let setup = JudgeSetup {
        isolation: None,
        vision: None,
        judge_timeout: Timeouts::default().judge_request,
        fingerprint: String::new(),
    };
    run_batch_inner(args, service, setup, show_progress)
}

/// How the judges were set up, beyond the service itself.
struct JudgeSetup {
    /// Evidence collected in a child process per submission (the CLI only).
    isolation: Option<isolate::Isolation>,
    vision: Option<crate::llm::LlmSession>,
    judge_timeout: Duration,
    /// Prompts and settings that decide the answers (part of the job key and cache key).
    fingerprint: String,
}

/// A batch's plan, validated (the flags, the rubric, the manifest and what it names) and
/// settled (the output directory, the store, the run's configuration), then its execution:
/// the submissions graded, the outputs written.
fn run_batch_inner(
    args: &BatchArgs,
    service: Rc<dyn JudgeService>,
    setup: JudgeSetup,
    show_progress: bool,
) -> Result<BatchSummary, BatchError> {
    let Plan {
        rubric,
        manifest_path,
        manifest,
    } = plan(args)?;
    let out = output_dir(args, &manifest_path)?;
    // --status only reads: it may run beside the worker that uses this directory.
    let _lock = if args.status {
        None
    } else {
        Some(lock_dir(&out)?)
    };
    let store = open_store(args, &out)?;
    let cfg = Rc::new(run_config(args, service.as_ref(), setup, rubric, &out));
    refuse_split_cohort(args, &out, &cfg)?;
    if !args.status {
        write_meta(args, &manifest_path, &out, &cfg)?;
    }
    if args.status || args.outputs_only {
        let offline = service.mode() == crate::model::JudgeMode::Offline;
        return from_store(
            args,
            &manifest_path,
            &manifest,
            store.as_ref(),
            &cfg,
            &out,
            offline,
        );
    }
    let offline_judges = service.mode() == crate::model::JudgeMode::Offline;
    let graded = grade(args, &manifest, service, &store, &cfg, show_progress)?;
    let mut rows = grade_rows(
        &manifest,
        &graded.outcomes,
        store.as_ref(),
        &cfg,
        graded.interrupted,
    );
    let section = if graded.interrupted {
        None
    } else {
        similarity_step(
            args,
            &manifest,
            &mut rows,
            store.as_ref(),
            &out,
            true,
            show_progress,
        )
    };
    write_outputs(&manifest_path, &rows, &cfg, &out, section.as_ref())?;
    // The counters are for the summary line only: a store that cannot be read now costs that
    // line, not the run (what was graded is in the store and in the outputs).
    let counters = store.counters().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read the store's request counters");
        store::Counters::default()
    });
    Ok(BatchSummary {
        rows,
        interrupted: graded.interrupted,
        counters,
        asked_this_run: graded.stats.llm_asked.get(),
        cache_hits_this_run: graded.stats.cache_hits.get(),
        offline_judges,
        status_only: false,
        out,
        similar_pairs: section.map(|r| r.flagged().count()),
    })
}

/// What a batch grades, checked before anything is written.
struct Plan {
    rubric: LoadedRubric,
    manifest_path: PathBuf,
    manifest: Manifest,
}

/// The flags, the rubric and the manifest checked (its bad rows said, the others kept), and
/// what the manifest and flags name: refs that exist, ids in the manifest.
fn plan(args: &BatchArgs) -> Result<Plan, BatchError> {
    if args.concurrency == 0 || args.concurrency > 1024 {
        return Err(BatchError::Concurrency(args.concurrency));
    }
    let rubric: LoadedRubric = crate::rubric::Rubric::load(args.rubric.as_deref())?;
    let manifest_path = manifest_path(args)?;
    let manifest: Manifest = manifest::load(&manifest_path)?;
    for bad in manifest.bad_rows() {
        crate::telemetry::print_for_user(
            tracing::Level::ERROR,
            &format!(
                "{}: line {}: {} (row not graded; the others proceed)",
                manifest_path.display(),
                bad.line,
                bad.reason
            ),
        );
    }
    let ids: BTreeSet<String> = manifest.submissions().map(|s| s.id.clone()).collect();
    if manifest.submissions().next().is_none() {
        return Err(BatchError::NoValidRow(manifest_path));
    }
    // An unknown ref is bad input: said before anything runs, naming the refs that exist.
    for sub in manifest.submissions() {
        if let Some(r) = &sub.git_ref {
            if let Err(source @ resolve::ResolveError::UnknownRef(_)) =
                resolve::resolve(&sub.repo, Some(r))
            {
                return Err(BatchError::UnknownRef {
                    manifest: manifest_path,
                    line: sub.line,
                    id: sub.id.clone(),
                    git_ref: r.clone(),
                    source: Box::new(source),
                });
            }
        }
    }
    if !args.no_similarity && !args.status {
        args.similarity.validate()?;
    }
    for r in args.regrade.iter().chain(args.only.iter().flatten()) {
        if !ids.contains(r) {
            return Err(BatchError::UnknownId(r.clone()));
        }
    }
    Ok(Plan {
        rubric,
        manifest_path,
        manifest,
    })
}

/// `--out`, created and made absolute; a run that grades records its manifest there (for a
/// later `--status` or `--outputs-only` without one).
fn output_dir(args: &BatchArgs, manifest_path: &Path) -> Result<PathBuf, BatchError> {
    std::fs::create_dir_all(&args.out).map_err(|source| BatchError::OutputDir {
        dir: args.out.clone(),
        source,
    })?;
    let out = std::fs::canonicalize(&args.out).unwrap_or_else(|_| args.out.clone());
    if !args.status && !args.outputs_only {
        remember_manifest(&out, manifest_path);
    }
    Ok(out)
}

/// The store `--store` names (SQLite in `out` by default), with a warning when its password
/// is written on the command line.
fn open_store(args: &BatchArgs, out: &Path) -> Result<Rc<dyn BatchStore>, BatchError> {
    let spec = StoreSpec::resolve(args.store.as_deref(), args.store_file.as_deref(), |k| {
        std::env::var(k).ok()
    })?;
    if spec.inline_password() && store_on_command_line() {
        crate::telemetry::print_for_user(
            tracing::Level::WARN,
            "--store: the password written in the connection string is visible to every local user (the process list) while the batch runs: \
leave it out and set PGPASSWORD, use a password file (~/.pgpass or PGPASSFILE, mode 600), or give the string with --store-file",
        );
    }
    Ok(Rc::from(spec.open(out).map_err(BatchError::StoreOpen)?))
}

/// The runner's configuration: the flags, the rubric and the judges' set-up (their
/// configuration is part of every job key).
fn run_config(
    args: &BatchArgs,
    service: &dyn JudgeService,
    setup: JudgeSetup,
    rubric: LoadedRubric,
    out: &Path,
) -> RunConfig {
    let judge_config = if setup.fingerprint.is_empty() {
        judge_config(service)
    } else {
        format!("{};{}", judge_config(service), setup.fingerprint)
    };
    RunConfig {
        out: out.to_path_buf(),
        concurrency: args.concurrency,
        regrade_all: args.regrade_all,
        regrade: args.regrade.iter().cloned().collect(),
        rejudge: args.rejudge,
        rubric: Arc::new(rubric),
        judge_config,
        timeouts: Timeouts {
            judge_request: setup.judge_timeout,
            ..Timeouts::default()
        },
        restarts: RestartPolicy::default(),
        vision: setup.vision,
        resolve_timeout: Duration::from_secs(120),
        isolation: setup.isolation,
    }
}

/// Regrading some submissions (`--only`) under another rubric or other judges would split the
/// cohort between two keys: the review shows one.
fn refuse_split_cohort(args: &BatchArgs, out: &Path, cfg: &RunConfig) -> Result<(), BatchError> {
    let (Some(only), false) = (&args.only, args.status || args.outputs_only) else {
        return Ok(());
    };
    if let Ok(Some(old)) = meta::read(out)
        && (old.rubric_sha256 != cfg.rubric.sha256 || old.judge_config != cfg.judge_config)
    {
        let what = if old.rubric_sha256 != cfg.rubric.sha256 {
            "rubric"
        } else {
            "judges (mode, models or prompts)"
        };
        return Err(BatchError::SplitCohort {
            out: out.to_path_buf(),
            what,
            only: only.iter().cloned().collect::<Vec<_>>().join(", "),
        });
    }
    Ok(())
}

/// What this directory is graded from, for `auditor serve` and `auditor export`.
fn write_meta(
    args: &BatchArgs,
    manifest_path: &Path,
    out: &Path,
    cfg: &RunConfig,
) -> Result<(), BatchError> {
    let meta = meta::BatchMeta {
        manifest: std::fs::canonicalize(manifest_path)
            .unwrap_or_else(|_| manifest_path.to_path_buf()),
        rubric: args
            .rubric
            .as_ref()
            .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone())),
        rubric_sha256: cfg.rubric.sha256.clone(),
        judge_config: cfg.judge_config.clone(),
        judges: format!("{:?}", args.panel.judges).to_lowercase(),
        prompts: args
            .panel
            .prompts
            .as_ref()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
        title: manifest_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    Ok(meta::write(out, &meta)?)
}

/// How the grading of a batch went.
struct Graded {
    /// Every manifest submission's outcome, in manifest order (with `--only`, the others as
    /// the store has them).
    outcomes: Vec<Outcome>,
    stats: Rc<progress::Stats>,
    interrupted: bool,
}

/// Grades the submissions (all, or those of `--only`) in one actix System, then gives the
/// store's unfinished claims back.
fn grade(
    args: &BatchArgs,
    manifest: &Manifest,
    service: Rc<dyn JudgeService>,
    store: &Rc<dyn BatchStore>,
    cfg: &Rc<RunConfig>,
    show_progress: bool,
) -> Result<Graded, BatchError> {
    let stats = Rc::new(progress::Stats::default());
    stats
        .offline
        .set(service.mode() == crate::model::JudgeMode::Offline);
    let cache = cache::CacheShared::new(
        store.clone(),
        service,
        stats.clone(),
        cfg.judge_config.clone(),
    );
    let subs: Vec<manifest::Submission> = manifest
        .submissions()
        .filter(|s| args.only.as_ref().is_none_or(|o| o.contains(&s.id)))
        .cloned()
        .collect();
    let ids: Vec<String> = subs.iter().map(|s| s.id.clone()).collect();
    let display = Rc::new(progress::Display::auto(
        subs.len() as u64,
        Duration::from_secs(args.progress_every.max(1)),
        !show_progress || args.no_progress,
    ));
    // The process's Ctrl-C count (listening from here on if the CLI did not already).
    let interrupt: Rc<Interrupt> = Rc::new(crate::interrupt::listen(OnSecond::Count)?);

    let system = actix::System::new();
    let outcomes = system.block_on({
        let cfg = cfg.clone();
        let store = store.clone();
        let interrupt = interrupt.clone();
        async move {
            let listener = {
                let interrupt = interrupt.clone();
                let display = display.clone();
                actix::spawn(async move {
                    interrupt.reached(1).await;
                    display.println(
                        "Ctrl-C: no new submission is started; those in flight finish and are saved (Ctrl-C again to stop now). Run the same command again to resume.",
                    );
                })
            };
            let outcomes = runner::run(&subs, cfg, store, cache, display, interrupt).await;
            listener.abort();
            outcomes
        }
    });
    drop(system);
    // Unfinished claims (an interrupted run) go back to the other workers now, not when their
    // leases expire. Explicit: an interrupted run may leave the store referenced (requests
    // that never completed), so it is not left to the store's drop.
    store.release_claims();
    let interrupted = interrupt.count() > 0;
    let outcomes = match &args.only {
        None => outcomes,
        // The others as the store has them, in manifest order.
        Some(_) => {
            let mut graded: std::collections::HashMap<String, Outcome> =
                ids.into_iter().zip(outcomes).collect();
            manifest
                .submissions()
                .zip(outcomes_from_store(manifest, store.as_ref(), cfg)?)
                .map(|(sub, (stored, _))| graded.remove(&sub.id).unwrap_or(stored))
                .collect()
        }
    };
    Ok(Graded {
        outcomes,
        stats,
        interrupted,
    })
}

/// Where `DIR` records the manifest of the last batch run in it (for `--status` and
/// `--outputs-only` without a manifest).
const MANIFEST_NOTE: &str = ".batch-manifest";

fn remember_manifest(out: &Path, manifest: &Path) {
    let abs = std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    if let Err(e) = crate::files::write_atomic(
        &out.join(MANIFEST_NOTE),
        format!("{}\n", abs.display()).as_bytes(),
    ) {
        tracing::warn!(error = %e, "could not record the manifest's path in the output directory");
    }
}

/// The manifest given, or (`--status`, `--outputs-only` without one) the one recorded in DIR
/// by the last batch run there.
fn manifest_path(args: &BatchArgs) -> Result<PathBuf, BatchError> {
    if let Some(m) = &args.manifest {
        return Ok(m.clone());
    }
    let note = args.out.join(MANIFEST_NOTE);
    match std::fs::read_to_string(&note) {
        Ok(text) if !text.trim().is_empty() => Ok(PathBuf::from(text.trim_end_matches('\n'))),
        _ => Err(BatchError::NoManifest(args.out.clone())),
    }
}

/// Whether `--store` was given on this process's command line (not through `AUDITOR_STORE`).
fn store_on_command_line() -> bool {
    std::env::args_os().any(|a| {
        let a = a.to_string_lossy();
        a == "--store" || a.starts_with("--store=")
    })
}

/// How each manifest submission stands in the store (latest job under this rubric and judge
/// configuration), as the runner's outcomes.
fn outcomes_from_store(
    manifest: &Manifest,
    store: &dyn BatchStore,
    cfg: &RunConfig,
) -> Result<Vec<(Outcome, Option<store::Job>)>, BatchError> {
    manifest
        .submissions()
        .map(|sub| {
            let job = store
                .latest_job(&sub.id, &cfg.rubric.sha256, &cfg.judge_config)
                .map_err(BatchError::Store)?;
            let outcome = match &job {
                Some(j) if j.status == store::JobStatus::Done => Outcome::Done {
                    job_id: j.id,
                    skipped: true,
                },
                Some(j) if j.status == store::JobStatus::Failed => Outcome::Failed {
                    job_id: Some(j.id),
                    reason: j.failure.clone().unwrap_or_default(),
                },
                _ => Outcome::Pending,
            };
            Ok((outcome, job))
        })
        .collect()
}

/// `--status` (print the cohort's progress) and `--outputs-only` (write the tables and missing
/// reports): from the store alone, grading nothing.
fn from_store(
    args: &BatchArgs,
    manifest_path: &Path,
    manifest: &Manifest,
    store: &dyn BatchStore,
    cfg: &RunConfig,
    out: &Path,
    offline_judges: bool,
) -> Result<BatchSummary, BatchError> {
    let states = outcomes_from_store(manifest, store, cfg)?;
    let counters = store.counters().map_err(BatchError::Store)?;
    if args.status {
        let leases = store.leases().map_err(BatchError::Store)?;
        let progress = Progress::of(manifest, &states, &leases);
        progress.print(manifest_path, manifest, store, &counters, offline_judges);
        return Ok(BatchSummary {
            rows: progress.rows,
            interrupted: false,
            counters,
            asked_this_run: 0,
            cache_hits_this_run: 0,
            offline_judges,
            status_only: true,
            out: out.to_path_buf(),
            similar_pairs: None,
        });
    }
    let outcomes: Vec<Outcome> = states.into_iter().map(|(o, _)| o).collect();
    let mut rows = grade_rows(manifest, &outcomes, store, cfg, false);
    let section = similarity_step(args, manifest, &mut rows, store, out, false, true);
    write_outputs(manifest_path, &rows, cfg, out, section.as_ref())?;
    Ok(BatchSummary {
        rows,
        interrupted: false,
        counters,
        asked_this_run: 0,
        cache_hits_this_run: 0,
        offline_judges,
        status_only: false,
        out: out.to_path_buf(),
        similar_pairs: section.map(|r| r.flagged().count()),
    })
}

/// The cohort's progress for `--status`: a row per submission (no report), the counts, and a
/// line per failed or unfinished submission.
struct Progress {
    rows: Vec<GradeRow>,
    done: usize,
    failed: usize,
    running: usize,
    waiting: usize,
    lines: Vec<String>,
}

impl Progress {
    /// `states`: each valid row's outcome and job in the store; `leases`: (submission, worker,
    /// seconds left) of the live leases.
    fn of(
        manifest: &Manifest,
        states: &[(Outcome, Option<store::Job>)],
        leases: &[(String, String, f64)],
    ) -> Self {
        let mut rows = Vec::new();
        let (mut done, mut failed, mut running, mut waiting) = (0, 0, 0, 0);
        let mut lines = Vec::new();
        for (sub, (outcome, job)) in manifest.submissions().zip(states) {
            let status = match outcome {
                Outcome::Done { .. } => {
                    done += 1;
                    RowStatus::Done
                }
                Outcome::Failed { reason, .. } => {
                    failed += 1;
                    lines.push(format!("  failed   {}: {reason}", sub.id));
                    RowStatus::Failed
                }
                _ if job.is_some() => {
                    running += 1;
                    match leases.iter().find(|(s, _, _)| s == &sub.id) {
                        Some((_, worker, left)) => lines.push(format!(
                            "  running  {} (worker {worker}, lease {left:.0}s left)",
                            sub.id
                        )),
                        None => lines.push(format!(
                            "  unfinished {} (no live worker holds it: the next worker resumes it)",
                            sub.id
                        )),
                    }
                    RowStatus::Pending
                }
                _ => {
                    waiting += 1;
                    RowStatus::Pending
                }
            };
            rows.push(GradeRow::without_report(
                sub.line,
                &sub.id,
                &sub.repo_shown,
                status,
                None,
            ));
        }
        Progress {
            rows,
            done,
            failed,
            running,
            waiting,
            lines,
        }
    }

    /// The progress on stdout, with the judges' requests of all workers and runs.
    fn print(
        &self,
        manifest_path: &Path,
        manifest: &Manifest,
        store: &dyn BatchStore,
        counters: &store::Counters,
        offline_judges: bool,
    ) {
        let Progress {
            done,
            failed,
            running,
            waiting,
            ..
        } = self;
        crate::console::say!(
            "Cohort {} in {}: {} submissions: {done} done, {failed} failed, {running} started and unfinished, {waiting} not started ({} invalid rows)",
            manifest_path.display(),
            store.shown(),
            self.rows.len(),
            manifest.bad_rows().count()
        );
        for l in &self.lines {
            crate::console::say!("{l}");
        }
        if offline_judges {
            crate::console::say!(
                "Judges: offline (deterministic rules, no LLM): nothing was sent to a model"
            );
        } else {
            crate::console::say!(
                "Judges, all workers and runs: {} requests sent ({} asked more than once), {} answers from the cache",
                counters.asked,
                counters.asked_more_than_once,
                counters.cache_hits
            );
        }
    }
}

/// The cohort similarity step (unless `--no-similarity`): fingerprints from the store or
/// computed (`compute`: not for `--outputs-only`), similarity.csv/.json/.html written, the rows
/// of flagged pairs flagged for review (their scores untouched). Returns the cohort's report
/// (the dashboard shows its section). A failure here is reported and leaves the grades alone.
fn similarity_step(
    args: &BatchArgs,
    manifest: &Manifest,
    rows: &mut [GradeRow],
    store: &dyn BatchStore,
    out: &Path,
    compute: bool,
    show_progress: bool,
) -> Option<crate::similarity::compare::CohortReport> {
    if args.no_similarity {
        return None;
    }
    let mut targets = Vec::new();
    let mut not_compared = Vec::new();
    for sub in manifest.submissions() {
        let row = rows.iter().find(|r| r.line == sub.line && r.id == sub.id);
        match row.and_then(|r| r.commit.clone()).filter(|c| !c.is_empty()) {
            Some(commit) => targets.push(similarity::Target {
                id: sub.id.clone(),
                place: similarity::Place::Repo {
                    source: sub.repo.clone(),
                    commit,
                },
            }),
            None => not_compared.push(crate::similarity::compare::NotCompared {
                id: sub.id.clone(),
                reason: format!(
                    "no graded commit (status {})",
                    row.map(|r| r.status.as_str()).unwrap_or("pending")
                ),
            }),
        }
    }
    let say = |line: &str| {
        if show_progress {
            crate::telemetry::print_for_user(tracing::Level::INFO, line);
        }
    };
    let report = match similarity::run(
        &targets,
        not_compared,
        Some(store),
        &args.similarity,
        compute,
        &say,
    ) {
        Ok((report, _)) => report,
        Err(e) => {
            crate::telemetry::print_for_user(
                tracing::Level::ERROR,
                &format!("code similarity not computed: {e} (the grades are not affected)"),
            );
            return None;
        }
    };
    let title = manifest_path(args)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if let Err(e) = similarity::write(out, &report, &title) {
        crate::telemetry::print_for_user(tracing::Level::ERROR, &e.to_string());
        return None;
    }
    for p in report.flagged() {
        for (me, other) in [(&p.a, &p.b), (&p.b, &p.a)] {
            for r in rows.iter_mut().filter(|r| &r.id == me) {
                let flag = similarity::row_flag(other);
                if !r.flags.contains(&flag) {
                    r.flags.push(flag);
                }
                r.needs_human_review = true;
            }
        }
    }
    Some(report)
}

fn write_outputs(
    manifest_path: &Path,
    rows: &[GradeRow],
    cfg: &RunConfig,
    out: &Path,
    similarity: Option<&crate::similarity::compare::CohortReport>,
) -> Result<(), BatchError> {
    let dims: outputs::Columns = cfg
        .rubric
        .rubric
        .dimensions
        .iter()
        .map(|d| (d.id.clone(), d.name.clone()))
        .collect();
    let title = manifest_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(outputs::write_tables_with(
        out,
        rows,
        &dims,
        &title,
        similarity
            .map(|r| similarity::section_view(r, true))
            .as_ref(),
    )?)
}

/// A report kept in the store that cannot be read back.
#[derive(Debug, thiserror::Error)]
#[error("stored report unreadable: {0}")]
struct StoredReportError(#[source] crate::report::ReportError);

fn report_of(sidecar: &str) -> Result<crate::report::Sidecar, StoredReportError> {
    crate::report::Sidecar::parse(sidecar).map_err(StoredReportError)
}

/// One [`GradeRow`] per manifest row, from this run's outcomes and the store. Reports missing
/// on disk (a crash between the store and the file) are written again.
fn grade_rows(
    manifest: &Manifest,
    outcomes: &[Outcome],
    store: &dyn BatchStore,
    cfg: &RunConfig,
    interrupted: bool,
) -> Vec<GradeRow> {
    let mut outcomes = outcomes.iter();
    let mut rows = Vec::new();
    for row in &manifest.rows {
        let sub = match row {
            Row::Bad(b) => {
                rows.push(invalid_row(b, cfg));
                continue;
            }
            Row::Ok(s) => s,
        };
        let outcome = outcomes.next().cloned().unwrap_or(Outcome::Pending);
        rows.push(match graded_from(&outcome, sub, store, cfg) {
            GradedFrom::Failed { reason, commit } => {
                let mut r = GradeRow::without_report(
                    sub.line,
                    &sub.id,
                    &sub.repo_shown,
                    RowStatus::Failed,
                    Some(reason),
                );
                r.git_ref = sub.git_ref.clone();
                r.commit = commit;
                r
            }
            GradedFrom::Store(stored) => stored_row(sub, *stored, cfg, interrupted),
        });
    }
    rows
}

/// A row of the manifest that is not valid. One that became invalid keeps no report of an
/// earlier run beside its `invalid` status: failed.md says why it is not graded now.
fn invalid_row(b: &manifest::BadRow, cfg: &RunConfig) -> GradeRow {
    if let Some(id) = b.id.as_deref().filter(|id| manifest::check_id(id).is_ok())
        && outputs::submission_dir(&cfg.out, id)
            .join("report.md")
            .exists()
        && let Err(e) = outputs::write_failure(
            &cfg.out,
            id,
            b.repo.as_deref().unwrap_or(""),
            &format!("this row of the manifest is invalid now: {}", b.reason),
            true,
        )
    {
        tracing::warn!("{e}");
    }
    GradeRow::without_report(
        b.line,
        b.id.as_deref().unwrap_or(""),
        b.repo.as_deref().unwrap_or(""),
        RowStatus::Invalid,
        Some(b.reason.clone()),
    )
}

/// Where a valid row's grade comes from.
enum GradedFrom {
    /// The job failed in this run and no other worker graded it: why, and the commit it was
    /// at (if the store holds the job).
    Failed {
        reason: String,
        commit: Option<String>,
    },
    /// The store's job, if any (boxed: a job is large).
    Store(Box<StoredJob>),
}

/// A row's job in the store.
struct StoredJob {
    /// The job graded (this run or, `stale`, an earlier one), if there is one.
    job: Option<store::Job>,
    /// Graded in an earlier run, not re-checked in this one.
    stale: bool,
    /// Why the store could not be read back, if it could not.
    unread: Option<String>,
}

/// The grade of a row, by its outcome in this run: the job it ended with, another worker's
/// if this one lost it, or for a row this run did not reach, its latest graded job.
fn graded_from(
    outcome: &Outcome,
    sub: &manifest::Submission,
    store: &dyn BatchStore,
    cfg: &RunConfig,
) -> GradedFrom {
    let (job, stale, unread) = match outcome {
        Outcome::Done { job_id, .. } => match store.job(*job_id) {
            Ok(j) => (j, false, None),
            Err(e) => (None, false, Some(e.to_string())),
        },
        Outcome::Failed { job_id, reason } => {
            let stored = job_id.and_then(|id| store.job(id).ok().flatten());
            if let Some(j) = stored.filter(|j| j.status == store::JobStatus::Done) {
                // This worker lost the job (its lease expired) and another worker graded
                // it: that grade stands (a shared store).
                (Some(j), false, None)
            } else {
                return GradedFrom::Failed {
                    reason: reason.clone(),
                    commit: job_id
                        .and_then(|id| store.job(id).ok().flatten())
                        .map(|j| j.key.commit)
                        .filter(|c| !c.is_empty()),
                };
            }
        }
        Outcome::Pending | Outcome::Busy { .. } => (
            store
                .latest_job(&sub.id, &cfg.rubric.sha256, &cfg.judge_config)
                .ok()
                .flatten()
                .filter(|j| j.status == store::JobStatus::Done),
            true,
            None,
        ),
    };
    GradedFrom::Store(Box::new(StoredJob { job, stale, unread }))
}

/// A row from its stored job: its report's grades (the report written again if it is missing
/// on disk), failed if the report cannot be read, pending if there is no graded job.
fn stored_row(
    sub: &manifest::Submission,
    stored: StoredJob,
    cfg: &RunConfig,
    interrupted: bool,
) -> GradeRow {
    let StoredJob { job, stale, unread } = stored;
    let graded = job
        .as_ref()
        .and_then(|j| j.sidecar.as_deref())
        .map(report_of);
    let mut r = match graded {
        Some(Ok(sidecar)) => {
            let md = outputs::submission_dir(&cfg.out, &sub.id).join("report.md");
            if !md.exists() || !md.with_extension("json").exists() {
                if let Err(e) = outputs::write_report(&cfg.out, &sub.id, &sidecar) {
                    tracing::error!(error = %e, "could not write a report");
                }
            }
            let mut r = GradeRow::from_report(sub.line, &sub.id, &sub.repo_shown, &sidecar);
            if stale {
                r.flags.push(if interrupted {
                    "stale: graded in an earlier run, not re-checked in this interrupted run".into()
                } else {
                    "stale: graded in an earlier run, not re-checked".into()
                });
            }
            r
        }
        Some(Err(reason)) => GradeRow::without_report(
            sub.line,
            &sub.id,
            &sub.repo_shown,
            RowStatus::Failed,
            Some(reason.to_string()),
        ),
        None => GradeRow::without_report(
            sub.line,
            &sub.id,
            &sub.repo_shown,
            RowStatus::Pending,
            Some(match unread {
                Some(e) => format!(
                    "graded and stored, but the store could not be read back now ({e}): run the same command with --outputs-only when it is reachable"
                ),
                None => {
                    "not graded yet: the run was interrupted; run the same command again to resume"
                        .into()
                }
            }),
        ),
    };
    r.git_ref = sub.git_ref.clone();
    if r.commit.is_none() {
        r.commit = job.map(|j| j.key.commit).filter(|c| !c.is_empty());
    }
    r
}

fn print_summary(s: &BatchSummary) {
    if s.status_only {
        return;
    }
    let count = |st: RowStatus| s.rows.iter().filter(|r| r.status == st).count();
    crate::console::say!(
        "Batch: {} rows: {} graded, {} failed, {} invalid, {} pending{}",
        s.rows.len(),
        count(RowStatus::Done),
        count(RowStatus::Failed),
        count(RowStatus::Invalid),
        count(RowStatus::Pending),
        if s.interrupted {
            " (interrupted: run the same command again to resume)"
        } else {
            ""
        }
    );
    if s.offline_judges {
        crate::console::say!(
            "Judges: offline (deterministic rules, no LLM): nothing was sent to a model"
        );
    } else {
        crate::console::say!(
            "Judges: {} requests sent in this run, {} answers from the cache",
            s.asked_this_run,
            s.cache_hits_this_run
        );
    }
    crate::console::say!("Grades:    {}", s.out.join("grades.csv").display());
    crate::console::say!("Summary:   {}", s.out.join("summary.md").display());
    crate::console::say!("Dashboard: {}", s.out.join("index.html").display());
    if let Some(n) = s.similar_pairs {
        crate::console::say!(
            "Similarity: {} ({} flagged for review)",
            s.out.join("similarity.html").display(),
            crate::words::count(n, "pair", "pairs")
        );
    }
}
