//! Batch isolation: each submission's evidence is collected in a child process (`auditor
//! __collect`, hidden) under a memory limit, so a submission that crashes the detectives or
//! exhausts memory (PDFium, libgit2, tree-sitter all parse hostile bytes) ends as that row's
//! failure while the rest of the cohort is graded.
//!
//! The parent writes a [`CollectRequest`] to the child's stdin (credentials never appear on a
//! command line), the child prints the collected evidence in the store's JSON form on stdout.
//! The child ignores SIGINT (the batch handles Ctrl-C: those in flight finish), dies with its
//! parent (`PR_SET_PDEATHSIG`), and has `RLIMIT_AS` set to its share of the batch's budget.
//! The judges still run in the parent (one LLM limiter, one response cache).
//!
//! Memory: the batch has one budget (`AUDITOR_BATCH_MEMORY_LIMIT_MB`, default
//! [`DEFAULT_BUDGET_MB`]), divided in equal shares: one per child in flight and one for the
//! parent (judging, rendering, the store: bounded work per submission). At most as many
//! children run at once as the budget holds shares of [`MIN_CHILD_MB`] (fewer than
//! `--concurrency` when it is small); a row waits for a share before its child starts. So K
//! hostile rows in flight cost at most the budget, whatever they hold.

use crate::audit::PdfSource;
use crate::launch::AuditBuilder;
use crate::repo::RepoSource;
use crate::rubric::{LoadedRubric, Rubric};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The hidden subcommand the child runs.
pub const SUBCOMMAND: &str = "__collect";

/// Default memory budget of a whole batch, MiB (`AUDITOR_BATCH_MEMORY_LIMIT_MB`, 0: none).
pub const DEFAULT_BUDGET_MB: u64 = 8192;
/// Smallest share of the budget a child is started with, MiB.
pub const MIN_CHILD_MB: u64 = 512;

/// How children are run.
#[derive(Debug, Clone)]
pub struct Isolation {
    /// A child's address-space limit in bytes (its share of the budget); `None`: no limit.
    pub memory_limit: Option<u64>,
    /// The batch's budget in MiB (0: none), for the messages.
    pub budget_mb: u64,
    /// Children allowed in flight at once (the shares of the budget).
    pub children: usize,
    slots: std::sync::Arc<tokio::sync::Semaphore>,
    /// The judges' prompts directory (the child builds its own vision client from it).
    pub prompts: Option<PathBuf>,
}

/// Why the batch's memory budget cannot be used (bad input, before anything runs).
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    #[error(
        "AUDITOR_BATCH_MEMORY_LIMIT_MB={0:?} is not a number of MiB (the whole batch's memory budget; 0: no limit)"
    )]
    NotANumber(String),
    #[error(
        "AUDITOR_BATCH_MEMORY_LIMIT_MB={mb} cannot hold one submission's evidence collection and the batch itself ({MIN_CHILD_MB} MiB each): give at least {} (MiB, the whole batch's budget)",
        2 * MIN_CHILD_MB
    )]
    TooSmall { mb: u64 },
}

/// Why a child process did not collect a submission's evidence. Its text goes to `failed.md`
/// and `grades.csv`.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("cannot find the auditor executable to isolate the run: {0}")]
    Executable(#[source] std::io::Error),
    #[error("the batch's memory budget is closed: {0}")]
    BudgetClosed(#[source] tokio::sync::AcquireError),
    #[error("cannot start the isolated evidence collection: {0}")]
    Start(#[source] std::io::Error),
    #[error("cannot encode the request: {0}")]
    Encode(#[source] serde_json::Error),
    #[error("cannot send the request to the isolated process: {0}")]
    Send(#[source] std::io::Error),
    #[error("the isolated evidence collection failed: {0}")]
    Wait(#[source] std::io::Error),
    #[error("collecting the evidence took longer than {0} s: stopped")]
    TimedOut(u64),
    #[error("the isolated process answered with invalid UTF-8: {0}")]
    Utf8(#[source] std::string::FromUtf8Error),
    /// The child failed: what (the memory limit, a crash), during which stage, what to do.
    #[error("{0}")]
    Failed(String),
}

impl Isolation {
    /// From `AUDITOR_BATCH_MEMORY_LIMIT_MB` (the batch's budget) and `--concurrency`;
    /// `Ok(None)` when `AUDITOR_BATCH_ISOLATION=0`.
    pub fn from_env(
        prompts: Option<PathBuf>,
        concurrency: usize,
    ) -> Result<Option<Isolation>, BudgetError> {
        if matches!(
            std::env::var("AUDITOR_BATCH_ISOLATION").ok().as_deref(),
            Some("0") | Some("off") | Some("false")
        ) {
            return Ok(None);
        }
        let mb = match std::env::var("AUDITOR_BATCH_MEMORY_LIMIT_MB") {
            Ok(v) if !v.trim().is_empty() => v
                .trim()
                .parse::<u64>()
                .map_err(|_| BudgetError::NotANumber(v.clone()))?,
            _ => DEFAULT_BUDGET_MB,
        };
        Isolation::with_budget(mb, concurrency, prompts).map(Some)
    }

    /// The budget `mb` (0: none) divided among at most `concurrency` children and the parent.
    pub fn with_budget(
        mb: u64,
        concurrency: usize,
        prompts: Option<PathBuf>,
    ) -> Result<Isolation, BudgetError> {
        let concurrency = concurrency.max(1);
        let (children, memory_limit) = if mb == 0 {
            (concurrency, None)
        } else {
            let shares = mb / MIN_CHILD_MB;
            if shares < 2 {
                return Err(BudgetError::TooSmall { mb });
            }
            let children = concurrency.min((shares - 1) as usize);
            (children, Some((mb / (children as u64 + 1)) << 20))
        };
        Ok(Isolation {
            memory_limit,
            budget_mb: mb,
            children,
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(children)),
            prompts,
        })
    }

    /// The memory limit, said for a person: `1638 MiB (a share of the batch's 8192 MiB)`.
    fn limit_text(&self) -> String {
        match self.memory_limit {
            Some(b) => format!(
                "{} MiB (one share of the batch's {} MiB budget, divided among {} and the batch itself)",
                b >> 20,
                self.budget_mb,
                crate::words::count(
                    self.children,
                    "submission in flight",
                    "submissions in flight"
                )
            ),
            None => "no limit".into(),
        }
    }
}

/// What the child needs to collect one submission's evidence.
#[derive(Serialize, Deserialize)]
pub struct CollectRequest {
    pub submission: String,
    /// The source as the manifest gave it (credentials included: sent through a pipe only).
    pub repo: String,
    /// How the source is shown (a local repository: its folder's name).
    #[serde(default)]
    pub repo_shown: Option<String>,
    pub git_ref: String,
    pub pdf: PdfSource,
    pub rubric: Rubric,
    pub rubric_source: String,
    pub rubric_sha256: String,
    pub detectives_timeout: Duration,
    /// Whether diagrams are judged by a vision model (the child builds its own client).
    pub vision: bool,
    pub prompts: Option<PathBuf>,
}

/// Collects the evidence in a child process; returns the store's JSON form of it, or why the
/// child failed.
pub async fn collect(iso: &Isolation, req: &CollectRequest) -> Result<String, CollectError> {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;
    let exe = std::env::current_exe().map_err(CollectError::Executable)?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg(SUBCOMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let limit = iso.memory_limit;
    // SAFETY: only async-signal-safe calls (prctl, signal, setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            if let Some(bytes) = limit {
                // Never raised: a limit the process already has (a container, `ulimit -v`)
                // stays, only a larger one is lowered (raising a hard limit is refused).
                let mut have = libc::rlimit {
                    rlim_cur: libc::RLIM_INFINITY,
                    rlim_max: libc::RLIM_INFINITY,
                };
                if libc::getrlimit(libc::RLIMIT_AS, &mut have) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let lim = clamp_limit(bytes as libc::rlim_t, have);
                if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    // a share of the budget first: no more children in flight than the budget holds
    let _share = iso
        .slots
        .acquire()
        .await
        .map_err(CollectError::BudgetClosed)?;
    let mut child = cmd.spawn().map_err(CollectError::Start)?;
    let body = serde_json::to_vec(req).map_err(CollectError::Encode)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&body).await.map_err(CollectError::Send)?;
    }
    let wait = req.detectives_timeout + Duration::from_secs(60);
    let out = match tokio::time::timeout(wait, child.wait_with_output()).await {
        Ok(r) => r.map_err(CollectError::Wait)?,
        Err(_) => return Err(CollectError::TimedOut(wait.as_secs())),
    };
    if out.status.success() {
        return String::from_utf8(out.stdout).map_err(CollectError::Utf8);
    }
    Err(CollectError::Failed(describe_failure(
        iso,
        &out.status,
        &out.stderr,
    )))
}

/// The limit a child gets when `asked` is asked for and the process has `have`: each of the
/// soft and hard limits only ever lowered (a hard limit cannot be raised).
fn clamp_limit(asked: libc::rlim_t, have: libc::rlimit) -> libc::rlimit {
    libc::rlimit {
        rlim_cur: asked.min(have.rlim_cur),
        rlim_max: asked.min(have.rlim_max),
    }
}

/// Lines of a child's stderr that say it ran out of memory (Rust's allocation failure, a
/// thread that could not get its stack, errno ENOMEM).
const OUT_OF_MEMORY: &[&str] = &[
    "memory allocation of",
    "out of memory",
    "Cannot allocate memory",
    "failed to spawn thread",
];

/// What happened to a child, for `failed.md` and `grades.csv`: what (the memory limit, a
/// crash), during which stage (the child's stage markers), and what to do. Plain text: the
/// writers escape it once for their format.
fn describe_failure(iso: &Isolation, status: &std::process::ExitStatus, stderr: &[u8]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let text = String::from_utf8_lossy(stderr);
    let (stages, lines) = crate::telemetry::stage::in_progress(&text);
    let lines: Vec<&str> = lines
        .into_iter()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    let oom_line: Option<&str> = lines
        .iter()
        .find(|l| OUT_OF_MEMORY.iter().any(|m| l.contains(m)))
        .copied();
    let limited = iso.memory_limit.is_some();
    let oom = limited && (oom_line.is_some() || matches!(status.signal(), Some(libc::SIGKILL)));
    let during = if stages.is_empty() {
        String::new()
    } else {
        format!(" while {}", stages.join(" and "))
    };
    let plain = |l: &str| -> String {
        l.chars()
            .filter(|c| !c.is_control())
            .take(300)
            .collect::<String>()
    };
    if oom {
        let detail = oom_line
            .map(|l| format!(" ({})", plain(l)))
            .unwrap_or_default();
        return format!(
            "collecting the evidence of this submission ran out of memory{during}: it reached its limit of {}{detail}. It ran in its own process: the other submissions are not affected. To grade it, give the batch more memory (AUDITOR_BATCH_MEMORY_LIMIT_MB, now {} MiB) or fewer submissions at once (--concurrency: each gets a larger share), then run the same batch command again",
            iso.limit_text(),
            iso.budget_mb
        );
    }
    let what = match status.signal() {
        Some(libc::SIGKILL) => "was killed (out of memory, or by the system)".to_string(),
        Some(libc::SIGABRT) => "aborted (an internal error)".to_string(),
        Some(libc::SIGSEGV) | Some(libc::SIGBUS) => "crashed (invalid memory access)".into(),
        Some(s) => format!("was stopped by signal {s}"),
        None => format!("exited with code {}", status.code().unwrap_or(-1)),
    };
    // a panic's message, else the last line
    let last = lines
        .iter()
        .position(|l| l.contains("panicked at"))
        .and_then(|i| lines.get(i + 1))
        .or(lines.last())
        .copied()
        .map(|l| format!(": {}", plain(l)))
        .unwrap_or_default();
    format!(
        "collecting the evidence of this submission {what}{during}{last}. It ran in its own process: the other submissions are not affected. Run the same batch command again to retry it; if it fails the same way, audit it alone with -v to see the collection's log"
    )
}

/// The child: reads a [`CollectRequest`] on stdin, prints the evidence JSON on stdout.
pub fn child_main() -> i32 {
    use std::io::Read;
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().take(256 << 20).read_to_end(&mut body) {
        eprintln!("cannot read the request: {e}");
        return 1;
    }
    let req: CollectRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("invalid request: {e}");
            return 1;
        }
    };
    crate::telemetry::stage::announce();
    fault_injection(&req.submission);
    let vision = if req.vision {
        let args = crate::judges::panel::PanelConfig {
            judges: crate::judges::panel::JudgesChoice::Llm,
            prompts: req.prompts.clone(),
            max_concurrency: None,
        };
        match crate::judges::panel::set_up(&args, |k| std::env::var(k).ok()) {
            Ok(p) => p.vision,
            Err(e) => {
                eprintln!("{e}");
                return 1;
            }
        }
    } else {
        None
    };
    let rubric = Arc::new(LoadedRubric {
        rubric: req.rubric,
        source: req.rubric_source,
        sha256: req.rubric_sha256,
    });
    let source = match req.repo_shown {
        Some(shown) => RepoSource::with_shown(req.repo, shown),
        None => RepoSource::new(req.repo),
    };
    let input = AuditBuilder::new(source, rubric)
        .git_ref(Some(req.git_ref))
        .pdf(req.pdf)
        .submission(req.submission)
        .detectives_timeout(req.detectives_timeout)
        .vision(vision)
        .build();
    // No Ctrl-C handler in the child (it ignores SIGINT): only its parent stops it.
    let collected = match crate::launch::collect_evidence(input) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    match super::stored::to_stored(&collected) {
        Ok(json) => {
            println!("{json}");
            0
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// Testing only, absent from release binaries (compiled with debug assertions only):
/// `AUDITOR_TEST_COLLECT_FAULT=abort:ID` makes the child for submission ID abort, `panic:ID`
/// panic, `oom:ID`
/// makes it allocate until the memory limit stops it (how a submission that crashes PDFium or
/// exhausts memory looks from the parent).
#[cfg(debug_assertions)]
fn fault_injection(submission: &str) {
    let Ok(spec) = std::env::var("AUDITOR_TEST_COLLECT_FAULT") else {
        return;
    };
    for part in spec.split(',') {
        match part.split_once(':') {
            Some(("abort", id)) if id == submission => std::process::abort(),
            Some(("panic", id)) if id == submission => panic!("injected fault"),
            Some(("oom", id)) if id == submission => {
                let mut hog: Vec<Vec<u8>> = Vec::new();
                loop {
                    hog.push(vec![1u8; 64 << 20]);
                    std::hint::black_box(&hog);
                }
            }
            _ => {}
        }
    }
}

#[cfg(not(debug_assertions))]
fn fault_injection(_submission: &str) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn the_budget_is_divided_among_the_children_in_flight_and_the_batch() {
        let iso = Isolation::with_budget(8192, 4, None).unwrap();
        assert_eq!((iso.children, iso.memory_limit), (4, Some(1638 << 20)));
        let iso = Isolation::with_budget(1536, 16, None).unwrap();
        assert_eq!((iso.children, iso.memory_limit), (2, Some(512 << 20)));
        let iso = Isolation::with_budget(0, 3, None).unwrap();
        assert_eq!((iso.children, iso.memory_limit), (3, None));
        assert!(Isolation::with_budget(1000, 1, None).is_err());
    }

    #[test]
    fn a_child_out_of_memory_says_so_during_which_stage_and_what_to_do() {
        let iso = Isolation::with_budget(2048, 3, None).unwrap();
        let stderr = "auditor-stage: + reading the repository r\n\
                      auditor-stage: + reading the report repo:report.pdf (9 bytes)\n\
                      auditor-stage: - reading the repository r\n\
                      thread 'x' panicked at src/a.rs:1:1:\n\
                      failed to spawn thread: Os { code: 11 }\n\
                      note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        let why = describe_failure(
            &iso,
            &ExitStatusExt::from_raw(libc::SIGABRT),
            stderr.as_bytes(),
        );
        assert!(
            why.starts_with(
                "collecting the evidence of this submission ran out of memory while reading the report repo:report.pdf (9 bytes): it reached its limit of 512 MiB"
            ),
            "{why}"
        );
        assert!(
            why.contains("AUDITOR_BATCH_MEMORY_LIMIT_MB, now 2048 MiB"),
            "{why}"
        );
        assert!(
            !why.contains("RUST_BACKTRACE") && !why.contains('`'),
            "{why}"
        );
        // a crash that is not about memory keeps the panic's message
        let crash = "thread 'x' panicked at src/a.rs:1:1:\nindex out of bounds\nnote: run with `RUST_BACKTRACE=1` x\n";
        let why = describe_failure(&iso, &ExitStatusExt::from_raw(1 << 8), crash.as_bytes());
        assert!(why.contains(": index out of bounds."), "{why}");
    }
}
