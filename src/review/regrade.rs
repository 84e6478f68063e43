//! Grading again, the overrides kept: `auditor review regrade DIR [ID|--all]` and the app's
//! regrade button. A regrade is a batch run (the same launcher, runner and judges as `auditor
//! batch`) over the batch's manifest into the same directory and store, with the chosen
//! submissions forced: judged again from their stored evidence (after a rubric or prompt change;
//! the repository is not read), or audited again (`--reaudit`: the manifest's ref resolved anew,
//! the evidence collected afresh). The review history is never touched: an override stays, and
//! one whose automatic score changed under it is flagged by [`super::cohort`].
//!
//! The app starts the regrade as a child process (`auditor review regrade`, the store passed in
//! its environment, never on its command line), one at a time, its output in `DIR/regrade.log`;
//! [`Runner`] keeps its status for the pages and the API.

use super::BatchDir;
use crate::batch::BatchArgs;
use crate::exit::CliError;
use clap::ValueEnum;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// What `auditor review regrade` (and the app's regrade) is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// One submission; `None`: all.
    pub only: Option<String>,
    pub rubric: Option<PathBuf>,
    pub prompts: Option<PathBuf>,
    pub judges: Option<crate::flags::JudgesArg>,
    pub reaudit: bool,
    pub concurrency: usize,
}

/// `DIR/batch.json` names judges this version does not know (`reason`: clap's own words, the
/// only form it gives them in).
#[derive(Debug, thiserror::Error)]
#[error("{}: judges {judges:?}: {reason}", crate::batch::meta::FILE_NAME)]
struct UnknownJudges {
    judges: String,
    reason: String,
}

/// The batch run a regrade is: `auditor batch` over the batch's manifest (from `DIR/batch.json`)
/// into the same directory and store, the chosen submissions forced, judged from their stored
/// evidence unless `reaudit`. The review history is not touched.
pub fn regrade_args(batch: &BatchDir, plan: &Plan) -> Result<BatchArgs, CliError> {
    let meta = crate::batch::meta::read(&batch.dir)
        .map_err(CliError::bad_input)?
        .ok_or_else(|| {
            CliError::bad_input(format!(
                "{} has no {}: it is not a directory written by `auditor batch` of this version (run the batch again with --out {})",
                batch.dir.display(),
                crate::batch::meta::FILE_NAME,
                batch.dir.display()
            ))
        })?;
    let judges = match plan.judges {
        Some(j) => j,
        None => <crate::flags::JudgesArg as ValueEnum>::from_str(&meta.judges, true).map_err(
            |reason| {
                CliError::bad_input(UnknownJudges {
                    judges: meta.judges.clone(),
                    reason,
                })
            },
        )?,
    };
    let mut args = BatchArgs {
        manifest: Some(meta.manifest.clone()),
        out: batch.dir.clone(),
        concurrency: plan.concurrency.max(1),
        regrade: Vec::new(),
        regrade_all: plan.only.is_none(),
        only: None,
        rejudge: !plan.reaudit,
        rubric: plan.rubric.clone().or(meta.rubric.clone()),
        panel: crate::flags::PanelArgs {
            judges,
            prompts: plan.prompts.clone().or(meta.prompts.clone()),
            max_concurrency: None,
        },
        store: batch.store.clone(),
        store_file: None,
        status: false,
        outputs_only: false,
        no_similarity: false,
        similarity: Default::default(),
        progress_every: 10,
        no_progress: false,
        #[cfg(debug_assertions)]
        simulate_latency_ms: None,
        #[cfg(debug_assertions)]
        simulate_max_in_flight: 32,
    };
    if let Some(id) = &plan.only {
        args.regrade = vec![id.clone()];
        args.only = Some([id.clone()].into_iter().collect());
    }
    Ok(args)
}

/// `auditor review regrade`: the batch run, then what became of the overrides.
pub fn run(batch: &BatchDir, plan: Plan) -> Result<i32, CliError> {
    let args = regrade_args(batch, &plan)?;
    let code = crate::batch::run_batch(args)?;
    if code == crate::exit::INTERRUPTED {
        return Ok(code);
    }
    let cohort = batch.open()?.cohort()?;
    let (mut kept, mut changed) = (0, Vec::new());
    for s in &cohort.submissions {
        for c in &s.criteria {
            if c.overridden.is_some() {
                kept += 1;
                if c.changed_under {
                    changed.push(format!("{}:{}", s.id, c.id));
                }
            }
        }
    }
    crate::console::say!(
        "Regrade ({}): {kept} overrides kept; {} whose automatic score changed, flagged for a second look{}{}",
        if plan.reaudit {
            "audited again"
        } else {
            "judged again from the stored evidence"
        },
        changed.len(),
        if changed.is_empty() { "" } else { ": " },
        changed.join(", ")
    );
    Ok(code)
}

/// The regrade log in the batch directory (the child's stdout and stderr).
pub const LOG_FILE: &str = "regrade.log";

/// What the app's last regrade is doing, or did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Status {
    pub running: bool,
    /// Whether any regrade was started since the app started.
    pub started: bool,
    /// "all submissions" or the submission's id.
    pub what: String,
    /// "judged again from the stored evidence" or "audited again".
    pub how: String,
    pub by: String,
    pub started_at: String,
    pub finished_at: String,
    /// The regrade's exit code (0: all graded; 3: graded, some failed or asking for review;
    /// 2: refused, nothing ran; 1: an error; 130: interrupted).
    pub exit_code: Option<i32>,
    /// What the exit code means.
    pub outcome: String,
    /// The end of the log (at most 4 KiB).
    pub log_tail: String,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("a regrade is already running ({0}): wait for it to finish")]
    Busy(String),
    #[error("cannot start the regrade: {0}")]
    Spawn(#[source] std::io::Error),
}

/// Starts regrades as child processes, one at a time, and keeps the last one's status.
pub struct Runner {
    exe: PathBuf,
    dir: PathBuf,
    /// The store as the app was given it (`--store` or `AUDITOR_STORE`), passed to the child in
    /// `AUDITOR_STORE`; `None`: the SQLite store in DIR.
    store: Option<String>,
    status: Arc<Mutex<Status>>,
}

fn outcome_of(code: Option<i32>) -> String {
    match code {
        Some(0) => "every submission graded".into(),
        Some(3) => "graded; some submissions failed or ask for review".into(),
        Some(2) => "refused: nothing ran (see the log)".into(),
        Some(130) => "interrupted".into(),
        Some(c) => format!("failed (exit code {c}; see the log)"),
        None => "killed by a signal".into(),
    }
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%d %H:%M:%S UTC")
        .to_string()
}

impl Runner {
    pub fn new(exe: PathBuf, dir: &Path, store: Option<String>) -> Runner {
        Runner {
            exe,
            dir: dir.to_path_buf(),
            store,
            status: Arc::new(Mutex::new(Status::default())),
        }
    }

    /// The last regrade's status, with the end of its log.
    pub fn status(&self) -> Status {
        let mut s = match self.status.lock() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        };
        if s.started {
            s.log_tail = log_tail(&self.dir.join(LOG_FILE), 4096);
        }
        s
    }

    /// Starts `auditor review regrade DIR [--all | -- ID] [--reaudit]`; returns at once.
    pub fn start(&self, only: Option<&str>, reaudit: bool, by: &str) -> Result<Status, StartError> {
        let mut st = match self.status.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        if st.running {
            return Err(StartError::Busy(st.what.clone()));
        }
        let log = std::fs::File::create(self.dir.join(LOG_FILE)).map_err(StartError::Spawn)?;
        let log2 = log.try_clone().map_err(StartError::Spawn)?;
        let mut c = Command::new(&self.exe);
        c.arg("review").arg("regrade").arg(&self.dir);
        if reaudit {
            c.arg("--reaudit");
        }
        match only {
            None => {
                c.arg("--all");
            }
            // After `--`: an id is never taken for a flag.
            Some(id) => {
                c.arg("--").arg(id);
            }
        }
        match &self.store {
            Some(s) => c.env("AUDITOR_STORE", s),
            None => c.env_remove("AUDITOR_STORE"),
        };
        c.stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2));
        let mut child = c.spawn().map_err(StartError::Spawn)?;
        *st = Status {
            running: true,
            started: true,
            what: only
                .map(|i| i.chars().take(80).collect())
                .unwrap_or_else(|| "all submissions".into()),
            how: if reaudit {
                "audited again".into()
            } else {
                "judged again from the stored evidence".into()
            },
            by: by.chars().take(80).collect(),
            started_at: now(),
            ..Status::default()
        };
        let started = st.clone();
        drop(st);
        let status = self.status.clone();
        std::thread::Builder::new()
            .name("regrade-wait".into())
            .spawn(move || {
                let code = child.wait().ok().and_then(|e| e.code());
                let mut s = match status.lock() {
                    Ok(s) => s,
                    Err(p) => p.into_inner(),
                };
                s.running = false;
                s.exit_code = code;
                s.outcome = outcome_of(code);
                s.finished_at = now();
            })
            .map_err(StartError::Spawn)?;
        Ok(started)
    }
}

/// The last `max` bytes of a file, from a line start, as text.
fn log_tail(path: &Path, max: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(max);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    if f.take(max).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    match (from > 0, text.find('\n')) {
        (true, Some(i)) => text[i + 1..].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_tail_starts_at_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l");
        std::fs::write(&p, "first line\nsecond\nthird\n").unwrap();
        assert_eq!(log_tail(&p, 1000), "first line\nsecond\nthird\n");
        assert_eq!(log_tail(&p, 10), "third\n");
        assert_eq!(log_tail(&dir.path().join("none"), 10), "");
        assert_eq!(
            outcome_of(Some(3)),
            "graded; some submissions failed or ask for review"
        );
    }
}
