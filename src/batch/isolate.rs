//! Batch isolation: each submission's evidence is collected in a child process (`auditor
//! __collect`, hidden) under a memory limit, so a submission that crashes the detectives or
//! exhausts memory (PDFium, libgit2, tree-sitter all parse hostile bytes) ends as that row's
//! failure while the rest of the cohort is graded.
//!
//! The parent writes a [`CollectRequest`] to the child's stdin (credentials never appear on a
//! command line), the child prints the collected evidence in the store's JSON form on stdout.
//! The child ignores SIGINT (the batch handles Ctrl-C: those in flight finish), dies with its
//! parent (`PR_SET_PDEATHSIG`), and has `RLIMIT_AS` set to the limit (never above the limit the
//! process already has: a container's or `ulimit -v`'s stays).
//! The judges still run in the parent (one LLM limiter, one response cache).

use crate::actors::PdfSource;
use crate::launch::AuditBuilder;
use crate::repo::RepoSource;
use crate::rubric::{LoadedRubric, Rubric};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The hidden subcommand the child runs.
pub const SUBCOMMAND: &str = "__collect";

/// Default address-space limit of a child, MiB (`AUDITOR_BATCH_MEMORY_LIMIT_MB`, 0: none).
pub const DEFAULT_LIMIT_MB: u64 = 4096;

/// How children are run.
#[derive(Debug, Clone)]
pub struct Isolation {
    /// Address-space limit in bytes; `None`: no limit.
    pub memory_limit: Option<u64>,
    /// The judges' prompts directory (the child builds its own vision client from it).
    pub prompts: Option<PathBuf>,
}

impl Isolation {
    /// From `AUDITOR_BATCH_MEMORY_LIMIT_MB`; `Ok(None)` when `AUDITOR_BATCH_ISOLATION=0`.
    pub fn from_env(prompts: Option<PathBuf>) -> Result<Option<Isolation>, String> {
        if matches!(
            std::env::var("AUDITOR_BATCH_ISOLATION").ok().as_deref(),
            Some("0") | Some("off") | Some("false")
        ) {
            return Ok(None);
        }
        let mb = match std::env::var("AUDITOR_BATCH_MEMORY_LIMIT_MB") {
            Ok(v) if !v.trim().is_empty() => v.trim().parse::<u64>().map_err(|_| {
                format!("AUDITOR_BATCH_MEMORY_LIMIT_MB={v:?} is not a number of MiB (0: no limit)")
            })?,
            _ => DEFAULT_LIMIT_MB,
        };
        Ok(Some(Isolation {
            memory_limit: (mb > 0).then_some(mb << 20),
            prompts,
        }))
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
pub async fn collect(iso: &Isolation, req: &CollectRequest) -> Result<String, String> {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the auditor executable to isolate the run: {e}"))?;
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
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the isolated evidence collection: {e}"))?;
    let body = serde_json::to_vec(req).map_err(|e| format!("cannot encode the request: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&body)
            .await
            .map_err(|e| format!("cannot send the request to the isolated process: {e}"))?;
    }
    let wait = req.detectives_timeout + Duration::from_secs(60);
    let out = match tokio::time::timeout(wait, child.wait_with_output()).await {
        Ok(r) => r.map_err(|e| format!("the isolated evidence collection failed: {e}"))?,
        Err(_) => {
            return Err(format!(
                "collecting the evidence took longer than {} s: stopped",
                wait.as_secs()
            ));
        }
    };
    if out.status.success() {
        return String::from_utf8(out.stdout)
            .map_err(|e| format!("the isolated process answered with invalid UTF-8: {e}"));
    }
    Err(describe_failure(iso, &out.status, &out.stderr))
}

/// The limit a child gets when `asked` is asked for and the process has `have`: each of the
/// soft and hard limits only ever lowered.
fn clamp_limit(asked: libc::rlim_t, have: libc::rlimit) -> libc::rlimit {
    libc::rlimit {
        rlim_cur: asked.min(have.rlim_cur),
        rlim_max: asked.min(have.rlim_max),
    }
}

/// The address-space limit a child actually runs under (bytes; `None`: none), for messages.
fn effective_limit(asked: Option<u64>) -> Option<u64> {
    let mut have = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: getrlimit writes into the struct it is given.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut have) } == 0;
    let own = (known && have.rlim_cur != libc::RLIM_INFINITY).then_some(have.rlim_cur);
    match (asked, own) {
        (Some(a), Some(o)) => Some(a.min(o)),
        (a, o) => a.or(o),
    }
}

fn describe_failure(iso: &Isolation, status: &std::process::ExitStatus, stderr: &[u8]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let limit = effective_limit(iso.memory_limit)
        .map(|b| format!("{} MiB", b >> 20))
        .unwrap_or_else(|| "no limit".into());
    let what = match status.signal() {
        Some(libc::SIGKILL) => "was killed (out of memory, or by the system)".to_string(),
        Some(libc::SIGABRT) => {
            format!("aborted (memory limit of {limit} reached, or an internal error)")
        }
        Some(libc::SIGSEGV) | Some(libc::SIGBUS) => "crashed (invalid memory access)".into(),
        Some(s) => format!("was stopped by signal {s}"),
        None => format!("exited with code {}", status.code().unwrap_or(-1)),
    };
    let text = String::from_utf8_lossy(stderr);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        // Plain text, one line: each output escapes it its own way (failed.md, CSV, HTML).
        .map(|l| {
            l.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(300)
                .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
                .collect::<String>()
        })
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    format!(
        "collecting the evidence of this submission {what}{last}. It ran in its own process: the other submissions are not affected"
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
    fault_injection(&req.submission);
    let vision = if req.vision {
        let args = crate::judges::panel::PanelArgs {
            judges: crate::judges::panel::JudgesArg::Llm,
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
    match super::runner::to_stored(&collected) {
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
