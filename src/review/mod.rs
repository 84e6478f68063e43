//! The course team's side of a batch: `auditor review` (override a criterion's score with a
//! reason, mark reviewed, comment, read the history), `auditor export` (Canvas, Moodle,
//! per-criterion CSV, feedback files) and `auditor serve` (the same in a local web app).
//!
//! | module | role |
//! |---|---|
//! | [`ledger`] | the append-only history and what it comes to (standing overrides, marks, comment); entries checked |
//! | [`store`] | the history and the latest jobs in the batch store (SQLite in DIR, or PostgreSQL) |
//! | [`cohort`] | each submission's auditor scores, overrides and final scores; the cohort page's filters |
//! | [`export`] | Canvas, Moodle and per-criterion CSVs; feedback files with overrides and comment applied |
//! | [`regrade`] | grading again with the overrides kept: from the stored evidence or a new audit; the app's child process |
//! | [`server`] | `auditor serve`: pages, JSON API, token and CSRF checks (actix-web) |
//!
//! The automatic score is never overwritten: an override is a history entry that keeps the
//! auditor's score it replaced; a regrade changes the automatic score under it and flags it.

pub mod cohort;
pub mod export;
pub mod ledger;
pub mod regrade;
pub mod server;
pub mod store;

use crate::batch::store::spec::StoreSpec;
use crate::exit::CliError;
use clap::{Args, Subcommand, ValueEnum};
use cohort::Reviewer;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error(transparent)]
    Store(#[from] crate::batch::store::StoreError),
    #[error(transparent)]
    Entry(#[from] ledger::EntryError),
    #[error("no submission {0:?} in this batch")]
    UnknownSubmission(String),
    #[error(transparent)]
    Meta(#[from] crate::batch::meta::MetaError),
    #[error("manifest {path}: {problem}")]
    Manifest {
        path: String,
        #[source]
        problem: ManifestProblem,
    },
    #[error("the batch's rubric: {0}")]
    Rubric(#[source] crate::rubric::RubricError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    #[error("cannot build the CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What is wrong with the manifest the review reads its students from.
#[derive(Debug, thiserror::Error)]
pub enum ManifestProblem {
    #[error("{0}")]
    Unreadable(#[source] std::io::Error),
    #[error("the header cannot be read: {0}")]
    Header(#[source] csv::Error),
    #[error("the header has no id column")]
    NoId,
}

impl ReviewError {
    /// Whether the user can fix it (exit 2) or it is the store's or the machine's (exit 1).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ReviewError::Entry(_)
                | ReviewError::UnknownSubmission(_)
                | ReviewError::Meta(_)
                | ReviewError::Manifest { .. }
                | ReviewError::Rubric(_)
        )
    }
}

impl From<ReviewError> for CliError {
    fn from(e: ReviewError) -> Self {
        if e.is_bad_input() {
            CliError::bad_input(e)
        } else {
            CliError::internal(e)
        }
    }
}

/// Where the batch is: its output directory and its store.
#[derive(Debug, Clone, Args)]
pub struct BatchDir {
    /// The output directory of `auditor batch` (--out DIR).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The batch's store: "sqlite" (default: DIR/batch.sqlite) or the PostgreSQL URL the
    /// workers shared.
    #[arg(
        long,
        value_name = "sqlite|postgres://…",
        env = "AUDITOR_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
}

impl BatchDir {
    pub fn open(&self) -> Result<Reviewer, CliError> {
        // The password, when the string has none, from PGPASSWORD or the password file, as
        // `auditor batch` reads it.
        let spec = StoreSpec::resolve(self.store.as_deref(), None, |k| std::env::var(k).ok())
            .map_err(CliError::bad_input)?;
        let store = store::open(&self.dir, &spec).map_err(CliError::bad_input)?;
        Ok(Reviewer::new(&self.dir, store)?)
    }
}

/// `auditor review …`
#[derive(Debug, Clone, Args)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub action: ReviewAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ReviewAction {
    /// Override the auditor's score of one criterion (the auditor's score is kept beside it).
    Override {
        #[command(flatten)]
        batch: BatchDir,
        /// The submission's id (the manifest's).
        #[arg(value_name = "ID")]
        id: String,
        /// The criterion's id (or its name).
        #[arg(value_name = "CRITERION")]
        criterion: String,
        /// The score, 1 to 5.
        #[arg(value_name = "SCORE")]
        score: String,
        /// Why (required; kept in the history).
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// Who (default: $USER).
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Mark a submission reviewed (or, with --undo, not reviewed).
    Mark {
        #[command(flatten)]
        batch: BatchDir,
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long)]
        undo: bool,
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Set the comment for the student (an empty text withdraws it).
    Comment {
        #[command(flatten)]
        batch: BatchDir,
        #[arg(value_name = "ID")]
        id: String,
        #[arg(value_name = "TEXT")]
        text: String,
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Grade again, keeping every override: judge each submission again from its stored
    /// evidence (after a rubric or prompt change; the repository is not read), or audit it
    /// again (--reaudit). An override whose automatic score changed under it is flagged for a
    /// second look.
    Regrade {
        #[command(flatten)]
        batch: BatchDir,
        /// The submission to regrade (the manifest's id).
        #[arg(
            value_name = "ID",
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        id: Option<String>,
        /// Regrade every submission of the batch's manifest.
        #[arg(long)]
        all: bool,
        /// Judge under this rubric from now on (default: the batch's rubric file, read again).
        /// Changing the rubric needs --all: one rubric per cohort.
        #[arg(long, value_name = "FILE")]
        rubric: Option<PathBuf>,
        /// The judges' prompt directory (default: the batch's). Changing it needs --all.
        #[arg(long, value_name = "DIR")]
        prompts: Option<PathBuf>,
        /// Which judges (default: the batch's). auto: LLM judges when OPENAI_API_KEY or
        /// OPENAI_BASE_URL is set, else the offline judges (the report says which).
        #[arg(long, value_enum)]
        judges: Option<crate::flags::JudgesArg>,
        /// Audit again: resolve the manifest's ref (a newer commit is taken), read the
        /// repository and collect the evidence afresh, then judge.
        #[arg(long)]
        reaudit: bool,
        /// Submissions graded at once.
        #[arg(long, value_name = "N", default_value_t = 4)]
        concurrency: usize,
    },
    /// Print a submission's review history, oldest first.
    History {
        #[command(flatten)]
        batch: BatchDir,
        #[arg(value_name = "ID")]
        id: String,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Canvas gradebook import CSV.
    Canvas,
    /// Moodle grade import CSV.
    Moodle,
    /// Every criterion's final and automatic score.
    Criteria,
    /// Per-student feedback files DIR/<id>/feedback.md and feedback.html.
    Feedback,
}

/// `auditor export DIR --format …`
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub batch: BatchDir,
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// The assignment's column name (Canvas: "Name" or "Name (assignment id)").
    #[arg(long, value_name = "NAME", default_value = "Auditor")]
    pub assignment: String,
    /// Where to write the CSV (default: stdout). Feedback files go to DIR/<id>/ (or OUT/<id>/).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `auditor serve DIR [--store URL] [--bind ADDR]`
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub batch: BatchDir,
    /// Address to listen on (port 0: a free port). Anyone who can reach it still needs the
    /// token printed at start.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub bind: String,
}

fn by_or_user(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .unwrap_or_default()
}

/// `auditor review ...`. `quiet` (`-q`): a recorded entry is not confirmed on stdout (errors
/// are still printed; `history` prints what it was asked for).
pub fn run_review(args: ReviewArgs, quiet: bool) -> Result<i32, CliError> {
    let confirm = |line: String| {
        if !quiet {
            crate::console::say!("{line}");
        }
    };
    match args.action {
        ReviewAction::Override {
            batch,
            id,
            criterion,
            score,
            reason,
            by,
        } => {
            let score = ledger::parse_score(&score).map_err(CliError::bad_input)?;
            let r = batch.open()?;
            let e = r.record_override(&id, &criterion, score, &reason, &by_or_user(by))?;
            confirm(format!(
                "{}: {} overridden to {} by {} (the auditor's score {} kept beside it; history entry {})",
                id,
                e.criterion.as_deref().unwrap_or(""),
                score,
                e.by,
                e.auto_score
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "none: not assessed".into()),
                e.id
            ));
        }
        ReviewAction::Mark {
            batch,
            id,
            undo,
            by,
        } => {
            let r = batch.open()?;
            let e = r.mark(&id, !undo, &by_or_user(by))?;
            confirm(format!("{id}: {} by {}", e.kind.as_str(), e.by));
        }
        ReviewAction::Comment {
            batch,
            id,
            text,
            by,
        } => {
            let r = batch.open()?;
            let e = r.comment(&id, &text, &by_or_user(by))?;
            confirm(format!("{id}: comment recorded by {}", e.by));
        }
        ReviewAction::Regrade {
            batch,
            id,
            all,
            rubric,
            prompts,
            judges,
            reaudit,
            concurrency,
        } => {
            let plan = regrade::Plan {
                only: if all { None } else { id },
                rubric,
                prompts,
                judges,
                reaudit,
                concurrency,
            };
            return regrade::run(&batch, plan);
        }
        ReviewAction::History { batch, id, json } => {
            let r = batch.open()?;
            for e in r.history(&id)? {
                if json {
                    crate::console::say!("{}", serde_json::to_string(&e).unwrap_or_default());
                } else {
                    crate::console::say!("{}", history_line(&e));
                }
            }
        }
    }
    Ok(crate::exit::OK)
}

/// One history entry as a line of text (control characters replaced).
pub fn history_line(e: &ledger::Entry) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let what = match e.kind {
        ledger::Kind::Override => format!(
            "override {} = {} (auditor: {}): {}",
            clean(e.criterion.as_deref().unwrap_or("")),
            e.score.map(|s| s.to_string()).unwrap_or_default(),
            e.auto_score
                .map(|s| s.to_string())
                .unwrap_or_else(|| "not assessed".into()),
            clean(&e.text)
        ),
        ledger::Kind::Reviewed => "marked reviewed".into(),
        ledger::Kind::Unreviewed => "marked not reviewed".into(),
        ledger::Kind::Comment if e.text.is_empty() => "comment withdrawn".into(),
        ledger::Kind::Comment => format!("comment: {}", clean(&e.text)),
    };
    format!("#{} {} {}: {what}", e.id, e.at, clean(&e.by))
}

/// `auditor export ...`. `quiet` (`-q`): the feedback files written are not confirmed on stdout
/// (a CSV without `--out` is the output itself: always printed).
pub fn run_export(args: ExportArgs, quiet: bool) -> Result<i32, CliError> {
    let r = args.batch.open()?;
    let cohort = r.cohort()?;
    let text = match args.format {
        ExportFormat::Canvas => {
            export::canvas(&cohort, &args.assignment).map_err(ReviewError::from)?
        }
        ExportFormat::Moodle => {
            export::moodle(&cohort, &args.assignment).map_err(ReviewError::from)?
        }
        ExportFormat::Criteria => export::criteria(&cohort).map_err(ReviewError::from)?,
        ExportFormat::Feedback => {
            let root = args.out.clone().unwrap_or_else(|| args.batch.dir.clone());
            let n = write_feedback(&cohort, &root)?;
            if !quiet {
                crate::console::say!(
                    "Feedback files: {n} submissions, in {}/<id>/feedback.md and feedback.html",
                    root.display()
                );
            }
            return Ok(crate::exit::OK);
        }
    };
    match &args.out {
        Some(p) => crate::files::write_atomic(p, text.as_bytes()).map_err(|source| {
            CliError::from(ReviewError::Write {
                path: p.display().to_string(),
                source,
            })
        })?,
        None => print!("{text}"),
    }
    Ok(crate::exit::OK)
}

/// Writes `ROOT/<id>/feedback.md` and `feedback.html` of every graded submission; returns
/// how many.
pub fn write_feedback(cohort: &cohort::Cohort, root: &Path) -> Result<usize, ReviewError> {
    let mut n = 0;
    for s in &cohort.submissions {
        if crate::batch::manifest::check_id(&s.id).is_err() {
            continue;
        }
        let Some((md, html)) = export::feedback(s)? else {
            continue;
        };
        let dir = root.join(&s.id);
        for (name, text) in [("feedback.md", md), ("feedback.html", html)] {
            let p = dir.join(name);
            crate::files::write_atomic(&p, text.as_bytes()).map_err(|source| {
                ReviewError::Write {
                    path: p.display().to_string(),
                    source,
                }
            })?;
        }
        n += 1;
    }
    Ok(n)
}
