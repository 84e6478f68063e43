//! Typed facts: what a detective established about the submission, with the lines it rests on.
//!
//! A statement of the report (a detective's rationale, an offline judge's sentence, the
//! deciding evidence, a fix) is rendered from one of these, never from words in another
//! sentence or in a fact id. One enum per family of facts ([`SafetyFact`], ...), gathered in
//! [`Fact`] and attached to [`super::Evidence`] (`Evidence::fact`); the level tables read them
//! with exhaustive matches, so a renamed or dropped fact does not compile.
//!
//! Every fact states:
//! - [`Stated::key`]: the id segment it is filed under (`timeout`, `rule.fact_supremacy`): the
//!   dotted ids stay at the edges (JSON sidecar, prompts, batch store);
//! - [`Stated::holds`]: whether the requirement holds (the evidence's `found`);
//! - [`Stated::statement`]: one sentence; a positive one cites the lines it rests on, a negative
//!   one says what was searched ("none of the 6 subprocess and git calls in 3 files passes a
//!   timeout");
//! - [`Stated::proof`]: those lines (the first is the evidence's location);
//! - [`Stated::fix`]: for a requirement that does not hold, what to change, where, and to what.
//!
//! A new family (report, history, ...) adds its enum, a variant of [`Fact`] and the arms of
//! [`Fact`]'s dispatch below: nothing else reads the variants' fields but the family's level
//! table.

use crate::words::count;
pub use graph::{Branch, DeadRoute, GraphFact, Layer, Route};
use serde::{Deserialize, Serialize};
pub use state::{Merge, Model, StateClass, StateFact};
use std::fmt;

pub mod graph;
pub mod state;

/// A line of the submission.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Site {
    pub path: String,
    pub line: usize,
}

impl Site {
    pub fn new(path: impl Into<String>, line: usize) -> Self {
        Site {
            path: path.into(),
            line,
        }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path, self.line)
    }
}

/// A call of the submission: where it is and its callee as written (`subprocess.run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub at: Site,
    pub callee: String,
}

impl Call {
    pub fn new(at: Site, callee: impl Into<String>) -> Self {
        Call {
            at,
            callee: callee.into(),
        }
    }
}

/// What the student can change: where, and the change (what, to what).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    pub at: Option<Site>,
    pub change: String,
}

impl Fix {
    fn at(at: &Site, change: impl Into<String>) -> Self {
        Fix {
            at: Some(at.clone()),
            change: change.into(),
        }
    }

    fn anywhere(change: impl Into<String>) -> Self {
        Fix {
            at: None,
            change: change.into(),
        }
    }

    /// `path:line: change` (the remediation's line shape), or the change alone.
    pub fn line(&self) -> String {
        match &self.at {
            Some(at) => format!("{at}: {}", self.change),
            None => self.change.clone(),
        }
    }
}

/// What every typed fact says about itself (see the module docs).
pub trait Stated {
    fn key(&self) -> String;
    fn holds(&self) -> bool;
    fn statement(&self) -> String;
    fn proof(&self) -> Vec<Site>;
    fn fix(&self) -> Option<Fix>;
}

/// A typed fact of one family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", content = "fact", rename_all = "snake_case")]
pub enum Fact {
    Safety(SafetyFact),
    Structured(StructuredFact),
    Nuance(NuanceFact),
    Justice(JusticeFact),
    Graph(GraphFact),
    State(StateFact),
}

impl Fact {
    fn stated(&self) -> &dyn Stated {
        match self {
            Fact::Safety(f) => f,
            Fact::Structured(f) => f,
            Fact::Nuance(f) => f,
            Fact::Justice(f) => f,
            Fact::Graph(f) => f,
            Fact::State(f) => f,
        }
    }
}

impl Stated for Fact {
    fn key(&self) -> String {
        self.stated().key()
    }
    fn holds(&self) -> bool {
        self.stated().holds()
    }
    fn statement(&self) -> String {
        self.stated().statement()
    }
    fn proof(&self) -> Vec<Site> {
        self.stated().proof()
    }
    fn fix(&self) -> Option<Fix> {
        self.stated().fix()
    }
}

/// Up to `max` sites, then "and N more".
pub fn sites(list: &[Site], max: usize) -> String {
    first_of(list.iter().map(Site::to_string).collect(), max)
}

/// `a`, `a and b`, `a, b and c`.
pub fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn in_files(n: usize) -> String {
    count(n, "Python file", "Python files")
}

// ---------------------------------------------------------------- safe tool engineering

/// A clone of a repository (a git library's clone, or a `git clone` command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clone {
    pub call: Call,
    /// The temporary directory it clones into (`TemporaryDirectory`, `mkdtemp`).
    pub sandbox: Option<Site>,
    /// The command is a list of arguments (no shell parses it).
    pub list_args: bool,
    /// The repository's own wrapper the command goes through (`path:line qualname`).
    pub via: Option<String>,
    /// Where a failure of the clone is caught or checked (`try`, `check=True`, a return code).
    pub handled: Option<Site>,
}

/// A subprocess, git or network call and the timeout it passes, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct External {
    pub call: Call,
    pub timeout: Option<String>,
    /// The call clones a repository.
    pub clone: bool,
}

/// A clone limited to the last commits (`--depth 1`, `depth=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shallow {
    pub at: Site,
    pub depth: String,
    /// The depth is added on one branch only (`if not full_history:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<ShallowBranch>,
}

/// The branch of the code that adds a clone's depth, when the clone runs without it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShallowBranch {
    pub at: Site,
    /// The branch's line as written (`if not full_history:`).
    pub branch: String,
    /// Whether the defaults of the parameters it tests take it (`None`: they do not decide).
    pub by_default: Option<bool>,
    /// Those parameters and their defaults, as written.
    pub defaults: Vec<(String, String)>,
}

impl Shallow {
    /// The clone is shallow when it runs as it is called by default (or whenever it runs).
    pub fn by_default(&self) -> bool {
        self.only
            .as_ref()
            .is_none_or(|b| b.by_default != Some(false))
    }

    /// `` `full_history` defaults to `False` `` for the parameters the branch tests.
    fn defaults_text(b: &ShallowBranch) -> String {
        b.defaults
            .iter()
            .map(|(p, v)| format!("`{p}` defaults to `{v}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A clone whose temporary directory is removed when its function returns, while the
/// function hands the path to its caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlyRemoval {
    pub clone: Site,
    /// The temporary directory that is removed (`with` or a local object).
    pub sandbox: Site,
    pub function: String,
}

/// Safe tool engineering (`repo.security.*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum SafetyFact {
    /// Every clone runs in a temporary directory.
    Sandbox { clones: Vec<Clone>, files: usize },
    /// Every clone's failure is caught or checked.
    CloneErrors { clones: Vec<Clone> },
    /// The clone's failures are told apart (authentication, not found, ...): the places that
    /// test the error for a kind.
    ErrorKinds { clones: Vec<Site>, tests: Vec<Site> },
    /// A timeout on every subprocess, git and network call.
    Timeouts { calls: Vec<External>, files: usize },
    /// The URL is checked (a regex, `urlparse`, an allow-list) before the clone.
    UrlCheck {
        clones: Vec<Site>,
        checks: Vec<Site>,
    },
    /// The temporary directory is removed (`with`, `rmtree`, `.cleanup()`).
    Cleanup {
        clones: Vec<Site>,
        removals: Vec<Site>,
        /// A clone's directory goes away when its function returns, before it is read (a
        /// removal in that function is that same early removal, not a cleanup).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        early: bool,
    },
    /// The clone's directory lives while it is read.
    Lifetime {
        clones: Vec<Site>,
        early: Vec<EarlyRemoval>,
    },
    /// The clone keeps the history (no `--depth 1`): the git-history analysis needs it.
    FullHistory {
        clones: Vec<Site>,
        shallow: Vec<Shallow>,
    },
    /// No shell runs a command: no `os.system`, `os.popen`, `shell=True`.
    NoShell {
        files: usize,
        subprocess: usize,
        /// The raw shell calls kept (the first of each kind).
        shells: Vec<Site>,
        /// Every raw shell call counted (more than kept when they explode).
        #[serde(default)]
        counted: usize,
        /// Python files too large to parse or scan.
        unscanned: Vec<String>,
    },
    /// A confirmed security finding (a `SecurityFinding`: `found` means confirmed).
    Finding {
        n: usize,
        at: Site,
        kind: String,
        detail: String,
    },
}

fn clone_sites(clones: &[Clone]) -> Vec<Site> {
    clones.iter().map(|c| c.call.at.clone()).collect()
}

fn no_clone(files: usize) -> String {
    format!(
        "no clone of a repository (git.Repo.clone_from, pygit2, dulwich, or a `git clone` command) in the {}",
        files_of(files)
    )
}

fn files_of(n: usize) -> String {
    if n == 1 {
        "Python file".into()
    } else {
        format!("{n} Python files")
    }
}

// ------------------------------------------------ the statements of the safety facts, one per case

/// Whether every clone runs in a temporary directory, naming the ones that do not.
fn sandbox_statement(clones: &[Clone], files: usize) -> String {
    if clones.is_empty() {
        return no_clone(files);
    }
    let inside: Vec<&Clone> = clones.iter().filter(|c| c.sandbox.is_some()).collect();
    let outside: Vec<Site> = clones
        .iter()
        .filter(|c| c.sandbox.is_none())
        .map(|c| c.call.at.clone())
        .collect();
    let via = clones
        .iter()
        .find_map(|c| c.via.as_ref())
        .map(|w| format!(", through the repository's own wrapper {w}"))
        .unwrap_or_default();
    if outside.is_empty() {
        format!(
            "{} in a temporary directory: {}{via}",
            if clones.len() == 1 {
                "the clone runs".to_string()
            } else {
                format!("all {} clones run", clones.len())
            },
            join_and(
                &inside
                    .iter()
                    .take(3)
                    .map(|c| format!(
                        "{} at {} (directory made at {})",
                        c.call.callee,
                        c.call.at,
                        c.sandbox.as_ref().map(Site::to_string).unwrap_or_default()
                    ))
                    .collect::<Vec<_>>()
            )
        )
    } else {
        format!(
            "{} of {} {} no temporary directory: {}",
            outside.len(),
            count(clones.len(), "clone", "clones"),
            crate::words::form(outside.len(), "uses", "use"),
            sites(&outside, 3)
        )
    }
}

/// Whether every clone's failure is caught or checked, naming the ones that are not.
fn clone_errors_statement(clones: &[Clone]) -> String {
    if clones.is_empty() {
        return "no clone, so no clone failure to handle".into();
    }
    let unhandled: Vec<Site> = clones
        .iter()
        .filter(|c| c.handled.is_none())
        .map(|c| c.call.at.clone())
        .collect();
    if unhandled.is_empty() {
        format!(
            "the clone's failure is caught or checked: {}",
            join_and(
                &clones
                    .iter()
                    .take(3)
                    .map(|c| format!(
                        "{} handled at {}",
                        c.call.at,
                        c.handled.as_ref().map(Site::to_string).unwrap_or_default()
                    ))
                    .collect::<Vec<_>>()
            )
        )
    } else {
        format!(
            "{} of {}: no try, check=True or return-code test around it ({})",
            count(
                unhandled.len(),
                "clone fails unhandled",
                "clones fail unhandled"
            ),
            clones.len(),
            sites(&unhandled, 3)
        )
    }
}

/// How many tests tell the clone's failures apart by kind.
fn error_kinds_statement(clones: &[Site], tests: &[Site]) -> String {
    match tests.len() {
        _ if clones.is_empty() => "no clone, so no clone error to classify".into(),
        0 => format!(
            "the clone's failures are not told apart by cause (an authentication failure from a missing repository): no test of git's error text or of a particular exit code in the {} holding the {} at {}",
            crate::words::form(clones.len(), "function", "functions"),
            count(clones.len(), "clone", "clones"),
            sites(clones, 3)
        ),
        1 => format!(
            "one kind of clone failure is singled out ({}); the others share one handling",
            tests[0]
        ),
        n => format!(
            "clone failures are told apart by kind ({n} tests of the error: {})",
            sites(tests, 3)
        ),
    }
}

/// Whether every subprocess, git and network call passes a timeout, naming the ones that do not.
fn timeouts_statement(calls: &[External], files: usize) -> String {
    let clones: Vec<&External> = calls.iter().filter(|c| c.clone).collect();
    let without: Vec<&External> = calls.iter().filter(|c| c.timeout.is_none()).collect();
    if calls.is_empty() {
        return format!(
            "no subprocess, git or network call in the {}",
            files_of(files)
        );
    }
    if without.is_empty() {
        let mut listed: Vec<String> = calls
            .iter()
            .take(3)
            .map(|c| {
                format!(
                    "{} at {} (timeout={})",
                    c.call.callee,
                    c.call.at,
                    c.timeout.as_deref().unwrap_or_default()
                )
            })
            .collect();
        if calls.len() > 3 {
            listed.push(format!("{} more", calls.len() - 3));
        }
        return format!(
            "every one of the {} passes a timeout: {}",
            count(
                calls.len(),
                "subprocess, git and network call",
                "subprocess, git and network calls"
            ),
            join_and(&listed)
        );
    }
    let timed_clones: Vec<&&External> = clones.iter().filter(|c| c.timeout.is_some()).collect();
    let head = if clones.is_empty() {
        String::new()
    } else if timed_clones.len() == clones.len() {
        format!(
            "the clone passes a timeout ({}); ",
            join_and(
                &timed_clones
                    .iter()
                    .take(2)
                    .map(|c| format!(
                        "timeout={} at {}",
                        c.timeout.as_deref().unwrap_or_default(),
                        c.call.at
                    ))
                    .collect::<Vec<_>>()
            )
        )
    } else {
        String::new()
    };
    let listed: Vec<Site> = without.iter().map(|c| c.call.at.clone()).collect();
    if without.len() == calls.len() {
        format!(
            "{head}none of the {} in {} passes a timeout ({})",
            count(
                calls.len(),
                "subprocess, git and network call",
                "subprocess, git and network calls"
            ),
            files_of(files),
            sites(&listed, 3)
        )
    } else {
        format!(
            "{head}{} of the {} {} no timeout: {}",
            without.len(),
            count(
                calls.len(),
                "subprocess, git and network call",
                "subprocess, git and network calls"
            ),
            crate::words::form(without.len(), "passes", "pass"),
            join_and(
                &without
                    .iter()
                    .take(3)
                    .map(|c| format!("{} at {}", c.call.callee, c.call.at))
                    .chain((without.len() > 3).then(|| format!("{} more", without.len() - 3)),)
                    .collect::<Vec<_>>()
            )
        )
    }
}

/// Whether the URL is checked before the clone.
fn url_check_statement(clones: &[Site], checks: &[Site]) -> String {
    if clones.is_empty() {
        "no clone, so no URL to check".into()
    } else if checks.is_empty() {
        format!(
            "the URL reaches the clone unchecked: no regex match, urlparse or allow-list test before the {} at {} (its function and its callers searched)",
            count(clones.len(), "clone", "clones"),
            sites(clones, 3)
        )
    } else {
        format!(
            "the URL is checked before the clone at {}: {}",
            sites(clones, 2),
            sites(checks, 3)
        )
    }
}

/// Whether the clone's temporary directory is removed, and when.
fn cleanup_statement(clones: &[Site], removals: &[Site], early: bool) -> String {
    if clones.is_empty() {
        "no clone, so no clone directory to remove".into()
    } else if removals.is_empty() && early {
        format!(
            "the clone's directory is not removed after it is read: it goes away when its function returns, before the reading ({} at {}); no `with` block, rmtree or .cleanup() in the functions that call the cloning function, or that they call, removes it later",
            count(clones.len(), "clone", "clones"),
            sites(clones, 3)
        )
    } else if removals.is_empty() {
        format!(
            "the clone's temporary directory is never removed: no `with` block, rmtree or .cleanup() in the functions that clone or call the cloning function, or that they call, for the {} at {}",
            count(clones.len(), "clone", "clones"),
            sites(clones, 3)
        )
    } else {
        format!(
            "the clone's temporary directory is removed at {}",
            sites(removals, 3)
        )
    }
}

/// Whether the clone's directory outlives the function that makes it.
fn lifetime_statement(clones: &[Site], early: &[EarlyRemoval]) -> String {
    if clones.is_empty() {
        "no clone".into()
    } else if let Some(e) = early.first() {
        format!(
            "the clone at {} is deleted when `{}` returns (its temporary directory at {} is removed then), before the caller reads it",
            e.clone, e.function, e.sandbox
        )
    } else {
        format!(
            "the clone's directory outlives the function that makes it ({})",
            sites(clones, 2)
        )
    }
}

/// Whether the clone keeps the whole history, or how a depth cuts it (and on which branch).
fn full_history_statement(clones: &[Site], shallow: &[Shallow]) -> String {
    if clones.is_empty() {
        "no clone".into()
    } else if let Some(s) = shallow.first() {
        // a depth given by a name or an expression is said as written, never guessed
        let kept = match s.depth.parse::<usize>() {
            Ok(n) => count(n, "commit", "commits"),
            Err(_) => format!("`{}` commits", s.depth),
        };
        let sees = if s.depth == "1" {
            "a single commit"
        } else {
            "a truncated history"
        };
        match &s.only {
            None => format!(
                "the clone at {} keeps only the last {kept} (depth {}): the git-history analysis sees {sees}",
                s.at, s.depth,
            ),
            Some(b) if b.by_default == Some(true) => format!(
                "the clone at {} keeps only the last {kept} (depth {}) by default: the depth is added under `{}` at {}, which the defaults take ({}); the git-history analysis then sees {sees}",
                s.at,
                s.depth,
                b.branch,
                b.at,
                Shallow::defaults_text(b)
            ),
            Some(b) if b.by_default == Some(false) => format!(
                "the clone at {} keeps the whole history by default: the depth {} is added only under `{}` at {}, which the defaults do not take ({})",
                s.at,
                s.depth,
                b.branch,
                b.at,
                Shallow::defaults_text(b)
            ),
            Some(b) => format!(
                "the clone at {} keeps only the last {kept} (depth {}) when `{}` at {} is taken: the git-history analysis then sees {sees}",
                s.at, s.depth, b.branch, b.at
            ),
        }
    } else {
        format!(
            "the clone keeps the whole history (no --depth or depth= at {})",
            sites(clones, 3)
        )
    }
}

/// The raw shell calls, or what was searched for them.
fn no_shell_statement(
    files: usize,
    subprocess: usize,
    shells: &[Site],
    counted: usize,
    unscanned: &[String],
) -> String {
    if !shells.is_empty() {
        format!(
            "{} (os.system, os.popen or shell=True): {}",
            count(
                counted.max(shells.len()),
                "raw shell call",
                "raw shell calls"
            ),
            sites(shells, 3)
        )
    } else if !unscanned.is_empty() {
        format!(
            "not verified: {} too large to parse or scan ({}); no os.system, os.popen or shell=True in the {} parsed",
            count(unscanned.len(), "Python file", "Python files"),
            unscanned.join(", "),
            files
        )
    } else {
        format!(
            "no os.system, os.popen or shell=True in {} ({} without a shell)",
            in_files(files),
            count(subprocess, "subprocess call", "subprocess calls")
        )
    }
}

/// How to give the call to `callee` a timeout (a GitPython clone takes none: through `git clone`).
fn timeout_change(callee: &str) -> String {
    if callee.ends_with("clone_from") || callee.ends_with("clone_repository") {
        format!(
            "the `{callee}` takes no timeout (GitPython hands its keyword arguments to `git clone` as options): run `git clone` through `subprocess.run([...], timeout=120)` and catch `subprocess.TimeoutExpired`"
        )
    } else if callee.starts_with("requests.") {
        format!(
            "pass `timeout=` to the `{callee}` (e.g. `timeout=30`, and catch `requests.Timeout`)"
        )
    } else if callee.starts_with("httpx.") {
        format!(
            "pass `timeout=` to the `{callee}` (e.g. `timeout=30`, and catch `httpx.TimeoutException`)"
        )
    } else if callee.starts_with("subprocess.") {
        format!(
            "pass `timeout=` to the `{callee}` (e.g. `timeout=120`, and catch `subprocess.TimeoutExpired`)"
        )
    } else {
        format!("pass `timeout=` to the `{callee}` (e.g. `timeout=30`)")
    }
}

/// Where the clone is cut to its last commits by default, and how to keep the whole history.
fn full_history_fix(shallow: &[Shallow]) -> Option<Fix> {
    let s = shallow.iter().find(|s| s.by_default())?;
    Some(match &s.only {
        None => Fix::at(
            &s.at,
            "clone the whole history: drop `--depth`/`depth=` so the git-history analysis sees every commit",
        ),
        Some(b) if b.by_default == Some(true) => Fix::at(
            &b.at,
            format!(
                "make the whole history the default: add the depth only when a shallow clone is asked for (today `{}` adds it unless told otherwise), so the git-history analysis sees every commit",
                b.branch
            ),
        ),
        Some(b) => Fix::at(
            &b.at,
            format!(
                "clone the whole history whenever the history is analysed: the depth added under `{}` cuts it to the last commits",
                b.branch
            ),
        ),
    })
}

impl Stated for SafetyFact {
    fn key(&self) -> String {
        match self {
            SafetyFact::Sandbox { .. } => "sandboxed_clone".into(),
            SafetyFact::CloneErrors { .. } => "error_handling".into(),
            SafetyFact::ErrorKinds { .. } => "auth_errors".into(),
            SafetyFact::Timeouts { .. } => "timeout".into(),
            SafetyFact::UrlCheck { .. } => "url_validation".into(),
            SafetyFact::Cleanup { .. } => "cleanup".into(),
            SafetyFact::Lifetime { .. } => "clone_lifetime".into(),
            SafetyFact::FullHistory { .. } => "full_clone".into(),
            SafetyFact::NoShell { .. } => "no_raw_shell".into(),
            SafetyFact::Finding { n, .. } => format!("finding.{n}"),
        }
    }

    fn holds(&self) -> bool {
        match self {
            SafetyFact::Sandbox { clones, .. } => {
                !clones.is_empty() && clones.iter().all(|c| c.sandbox.is_some())
            }
            SafetyFact::CloneErrors { clones } => {
                !clones.is_empty() && clones.iter().all(|c| c.handled.is_some())
            }
            SafetyFact::ErrorKinds { tests, .. } => tests.len() >= 2,
            SafetyFact::Timeouts { calls, .. } => {
                calls.iter().any(|c| c.clone) && calls.iter().all(|c| c.timeout.is_some())
            }
            SafetyFact::UrlCheck { clones, checks } => !clones.is_empty() && !checks.is_empty(),
            SafetyFact::Cleanup {
                clones, removals, ..
            } => !clones.is_empty() && !removals.is_empty(),
            SafetyFact::Lifetime { clones, early } => !clones.is_empty() && early.is_empty(),
            SafetyFact::FullHistory { clones, shallow } => {
                !clones.is_empty() && !shallow.iter().any(Shallow::by_default)
            }
            SafetyFact::NoShell {
                files,
                shells,
                unscanned,
                ..
            } => *files > 0 && shells.is_empty() && unscanned.is_empty(),
            // a finding is confirmed: the evidence's `found` (kind SecurityFinding)
            SafetyFact::Finding { .. } => true,
        }
    }

    fn statement(&self) -> String {
        match self {
            SafetyFact::Sandbox { clones, files } => sandbox_statement(clones, *files),
            SafetyFact::CloneErrors { clones } => clone_errors_statement(clones),
            SafetyFact::ErrorKinds { clones, tests } => error_kinds_statement(clones, tests),
            SafetyFact::Timeouts { calls, files } => timeouts_statement(calls, *files),
            SafetyFact::UrlCheck { clones, checks } => url_check_statement(clones, checks),
            SafetyFact::Cleanup {
                clones,
                removals,
                early,
            } => cleanup_statement(clones, removals, *early),
            SafetyFact::Lifetime { clones, early } => lifetime_statement(clones, early),
            SafetyFact::FullHistory { clones, shallow } => full_history_statement(clones, shallow),
            SafetyFact::NoShell {
                files,
                subprocess,
                shells,
                counted,
                unscanned,
            } => no_shell_statement(*files, *subprocess, shells, *counted, unscanned),
            SafetyFact::Finding {
                at, kind, detail, ..
            } => format!("{kind} at {at}: {detail}"),
        }
    }

    fn proof(&self) -> Vec<Site> {
        match self {
            SafetyFact::Sandbox { clones, .. } => clones
                .iter()
                .flat_map(|c| std::iter::once(c.call.at.clone()).chain(c.sandbox.clone()))
                .collect(),
            SafetyFact::CloneErrors { clones } => {
                let mut v: Vec<Site> = clones
                    .iter()
                    .filter(|c| c.handled.is_none())
                    .map(|c| c.call.at.clone())
                    .collect();
                v.extend(clones.iter().filter_map(|c| c.handled.clone()));
                if v.is_empty() {
                    v = clone_sites(clones);
                }
                v
            }
            SafetyFact::ErrorKinds { clones, tests } => {
                tests.iter().chain(clones).cloned().collect()
            }
            SafetyFact::Timeouts { calls, .. } => {
                let mut v: Vec<Site> = calls
                    .iter()
                    .filter(|c| c.timeout.is_none())
                    .map(|c| c.call.at.clone())
                    .collect();
                v.extend(
                    calls
                        .iter()
                        .filter(|c| c.timeout.is_some())
                        .map(|c| c.call.at.clone()),
                );
                v
            }
            SafetyFact::UrlCheck { clones, checks } => {
                checks.iter().chain(clones).cloned().collect()
            }
            SafetyFact::Cleanup {
                clones, removals, ..
            } => removals.iter().chain(clones).cloned().collect(),
            SafetyFact::Lifetime { clones, early } => early
                .iter()
                .map(|e| e.clone.clone())
                .chain(clones.iter().cloned())
                .collect(),
            SafetyFact::FullHistory { clones, shallow } => shallow
                .iter()
                .map(|s| s.at.clone())
                .chain(clones.iter().cloned())
                .collect(),
            SafetyFact::NoShell { shells, .. } => shells.clone(),
            SafetyFact::Finding { at, .. } => vec![at.clone()],
        }
    }

    fn fix(&self) -> Option<Fix> {
        if self.holds() && !matches!(self, SafetyFact::Finding { .. }) {
            return None;
        }
        Some(match self {
            SafetyFact::Sandbox { clones, .. } => match clones.iter().find(|c| c.sandbox.is_none())
            {
                Some(c) => Fix::at(
                    &c.call.at,
                    format!(
                        "clone into a temporary directory: wrap the `{}` in `with tempfile.TemporaryDirectory() as d:` and clone into `d`",
                        c.call.callee
                    ),
                ),
                None => Fix::anywhere(
                    "add a clone function that runs `subprocess.run([\"git\", \"clone\", url, d], check=True, capture_output=True, timeout=120)` inside `with tempfile.TemporaryDirectory() as d:`",
                ),
            },
            SafetyFact::CloneErrors { clones } => {
                let c = clones.iter().find(|c| c.handled.is_none())?;
                Fix::at(
                    &c.call.at,
                    format!(
                        "check the `{}`'s failure: pass `check=True` and catch `subprocess.CalledProcessError` (GitPython: `git.GitCommandError`), or test its `returncode`",
                        c.call.callee
                    ),
                )
            }
            SafetyFact::ErrorKinds { clones, .. } => Fix::at(
                clones.first()?,
                "tell the clone's failures apart: test the error output for an authentication failure and for a missing repository, and raise a distinct error for each",
            ),
            SafetyFact::Timeouts { calls, .. } => {
                let c = calls
                    .iter()
                    .find(|c| c.timeout.is_none() && c.clone)
                    .or_else(|| calls.iter().find(|c| c.timeout.is_none()))?;
                let more = calls.iter().filter(|c| c.timeout.is_none()).count() - 1;
                let callee = c.call.callee.as_str();
                let how = timeout_change(callee);
                Fix::at(
                    &c.call.at,
                    format!(
                        "{how}{}",
                        if more > 0 {
                            format!(
                                "; {} without one",
                                count(more, "other call is", "other calls are")
                            )
                        } else {
                            String::new()
                        }
                    ),
                )
            }
            SafetyFact::UrlCheck { clones, .. } => Fix::at(
                clones.first()?,
                "check the URL before the clone: parse it with `urllib.parse.urlparse`, require the `https` scheme and an allowed host (e.g. github.com), and reject anything else",
            ),
            SafetyFact::Cleanup { clones, .. } => Fix::at(
                clones.first()?,
                "remove the clone's temporary directory when the audit is done: `with tempfile.TemporaryDirectory()` around the work, or `shutil.rmtree(path)` in a `finally:`",
            ),
            SafetyFact::Lifetime { early, .. } => {
                let e = early.first()?;
                Fix::at(
                    &e.clone,
                    format!(
                        "keep the temporary directory made at {} alive while the clone is read: return the `TemporaryDirectory` object (or do the reading inside its `with` block) instead of its path from `{}`",
                        e.sandbox, e.function
                    ),
                )
            }
            SafetyFact::FullHistory { shallow, .. } => full_history_fix(shallow)?,
            SafetyFact::NoShell {
                shells, unscanned, ..
            } => match shells.first() {
                Some(s) => Fix::at(
                    s,
                    "run the command as a list of arguments with `subprocess.run([...], shell=False, check=True, timeout=...)` instead of a shell",
                ),
                None if !unscanned.is_empty() => return None,
                None => return None,
            },
            SafetyFact::Finding { at, kind, .. } => Fix::at(
                at,
                format!(
                    "replace the {kind} call: run the command as a list of arguments with `subprocess.run([...], check=True, timeout=...)`, never a shell string or `eval`/`exec`"
                ),
            ),
        })
    }
}

// ---------------------------------------------------------------- structured output

/// A call that binds an LLM's output to a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    pub call: Call,
    /// `with_structured_output` or `bind_tools`.
    pub method: String,
    /// The schema as written.
    pub schema: String,
    /// `method="json_mode"`: the reply is JSON, the schema only describes it.
    #[serde(default)]
    pub json_mode: bool,
    /// Where what holds the bound runnable is given the unbound model instead
    /// (`self.llm = self.raw_llm` on another branch): the calls through it may run unbound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Site>,
}

/// How a structured call is made again when it fails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Retry {
    /// A loop around the call that goes round again after a failure (`attempts` in all, when
    /// its `range(..)` says).
    Loop {
        at: Site,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempts: Option<u32>,
    },
    /// A retry decorator on its function (`tenacity.retry`, `backoff.on_exception`).
    Decorator { at: Site, decorator: String },
    /// `.with_retry(...)` on the runnable.
    WithRetry { at: Site },
    /// The call is made again in its `except` handler (`unbound`: the model is asked again
    /// without the schema binding, its reply read after).
    Reinvoked {
        at: Site,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unbound: bool,
    },
    /// A LangGraph `RetryPolicy` on the node that makes the call.
    NodePolicy { at: Site },
    /// The call is handed (in a lambda, a nested function or as a bound method) to a function
    /// of the repository that calls what it is given again in a loop after a failure.
    Helper { at: Site, helper: String },
}

impl Retry {
    pub fn at(&self) -> &Site {
        match self {
            Retry::Loop { at, .. }
            | Retry::Decorator { at, .. }
            | Retry::WithRetry { at }
            | Retry::Reinvoked { at, .. }
            | Retry::NodePolicy { at }
            | Retry::Helper { at, .. } => at,
        }
    }

    /// What it is, in a few words (`a retry loop`).
    pub fn kind(&self) -> &'static str {
        match self {
            Retry::Loop { .. } => "a retry loop around the call",
            Retry::Decorator { .. } => "a retry decorator",
            Retry::WithRetry { .. } => ".with_retry()",
            Retry::Reinvoked { .. } => "a second call in its except handler",
            Retry::NodePolicy { .. } => "a RetryPolicy on its node",
            Retry::Helper { .. } => "a helper that calls it again",
        }
    }

    /// The attempts in all it makes, when the code says: a loop's `range(..)`, or two for a
    /// second call in the handler.
    pub fn attempts(&self) -> Option<u32> {
        match self {
            Retry::Loop { attempts, .. } => *attempts,
            Retry::Reinvoked { .. } => Some(2),
            _ => None,
        }
    }

    /// What makes the call at `call` again, as said after it.
    fn said_for(&self, call: &Site) -> String {
        match self {
            Retry::Loop { at, attempts } if at == call => {
                format!("a retry loop around it{}", in_all(*attempts))
            }
            _ => self.said(),
        }
    }

    fn said(&self) -> String {
        match self {
            Retry::Loop { at, attempts } => format!("a retry loop at {at}{}", in_all(*attempts)),
            Retry::Decorator { at, decorator } => format!("{decorator} at {at}"),
            Retry::WithRetry { at } => format!(".with_retry() at {at}"),
            Retry::Reinvoked { at, unbound: false } => {
                format!("a second call in its except handler at {at}")
            }
            Retry::Reinvoked { at, unbound: true } => {
                format!("the model asked again without the binding in its except handler at {at}")
            }
            Retry::NodePolicy { at } => format!("a RetryPolicy on its node at {at}"),
            Retry::Helper { at, helper } => {
                format!("{helper}(), which calls it again in a loop at {at}")
            }
        }
    }
}

/// ` (N attempts in all)` when the count is known.
fn in_all(attempts: Option<u32>) -> String {
    attempts.map_or_else(String::new, |n| {
        format!(" ({} in all)", count(n as usize, "attempt", "attempts"))
    })
}

impl Retried {
    /// Made again once only: two attempts in all, as its retry says.
    pub fn once(&self) -> bool {
        self.retry
            .as_ref()
            .and_then(Retry::attempts)
            .is_some_and(|n| n <= 2)
    }
}

/// One structured call and what makes it again on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retried {
    pub call: Site,
    pub retry: Option<Retry>,
    /// The client's own request retries (`max_retries=3` on the constructor): they re-send a
    /// failed request, never an invalid reply.
    pub transport: Option<(Site, String)>,
    /// A `try`/`except` around the call without a second attempt (error handling).
    pub handled: Option<Site>,
    /// The judge nodes that make the call (empty when the graph does not tell).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<String>,
    /// Where a failed reply is read from free text instead (JSON cut out with a regex in the
    /// call's failure path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_text: Option<Site>,
}

/// A judge's reply written like a dict: (the write, the target as written, the structured
/// call whose reply it is).
pub type ItemWrite = (Site, String, Site);

/// Structured output (`repo.structured_output.*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum StructuredFact {
    /// How the LLM's reply becomes data: bound to a schema, parsed by a schema's parser, or
    /// JSON pulled out of the text.
    Binding {
        bound: Vec<Bound>,
        /// `PydanticOutputParser`, `model_validate_json` on the reply text, ...
        parsers: Vec<Call>,
        /// `json.loads` of text cut out with a regex.
        json_text: Vec<Call>,
        files: usize,
    },
    /// A bound schema that is an opinion (a `score` field, or a list of such models).
    OpinionSchema {
        bound: Vec<Bound>,
        /// The bound schema that is an opinion and where its class is.
        opinion: Option<(String, Site)>,
        /// It holds a list of opinions: one call answers every criterion.
        batched: bool,
    },
    /// The opinion model's fields: score, argument, cited evidence.
    SchemaFields {
        model: Option<(String, Site)>,
        have: Vec<String>,
        missing: Vec<String>,
    },
    /// Every structured call made again on failure.
    Retry { calls: Vec<Retried> },
    /// A judge's reply, an instance of the Pydantic opinion model, written like a dict
    /// afterwards: item assignment raises `TypeError` on a model, so the judge fails each time.
    /// Said only where some reply is (the check has nothing to say otherwise).
    ItemWrites {
        model: String,
        writes: Vec<ItemWrite>,
    },
}

// ------------------------------------------ the statements of the structured-output facts

/// The first `n` items joined ("a, b and c"), and how many more there are ("a, b, c and 2 more").
fn first_of(mut items: Vec<String>, n: usize) -> String {
    if items.len() > n {
        let more = items.len() - n;
        items.truncate(n);
        items.push(format!("{more} more"));
    }
    join_and(&items)
}

/// How the LLM's reply becomes data: the calls bound to a schema, else the parsers of the reply
/// text, else the JSON cut out of it, else what was searched.
fn binding_statement(
    bound: &[Bound],
    parsers: &[Call],
    json_text: &[Call],
    files: usize,
) -> String {
    let listed = |v: &[Call]| {
        first_of(
            v.iter()
                .map(|c| format!("{} at {}", c.callee, c.at))
                .collect(),
            3,
        )
    };
    if !bound.is_empty() {
        let json = bound.iter().filter(|b| b.json_mode).count();
        // a binding skipped on another path first: it is what the fact is about
        let skipped = bound
            .iter()
            .find_map(|b| b.skipped.as_ref())
            .map(|s| format!("on another path the unbound model is used instead (at {s}); "))
            .unwrap_or_default();
        format!(
            "{skipped}{} bound to a schema: {}{}",
            count(bound.len(), "LLM call", "LLM calls"),
            first_of(
                bound
                    .iter()
                    .map(|b| format!(
                        "{}({}{}) at {}{}",
                        b.method,
                        b.schema,
                        if b.json_mode { ", json_mode" } else { "" },
                        b.call.at,
                        b.skipped
                            .as_ref()
                            .map(|s| format!(
                                " (what holds it is given the unbound model instead at {s})"
                            ))
                            .unwrap_or_default()
                    ))
                    .collect(),
                3,
            ),
            if json == bound.len() {
                " (JSON mode: the schema is not enforced by the API)"
            } else {
                ""
            }
        )
    } else if !parsers.is_empty() {
        format!(
            "no call binds the LLM to a schema; the reply text is parsed into a model afterwards: {}",
            listed(parsers)
        )
    } else if !json_text.is_empty() {
        format!(
            "no call binds the LLM to a schema; JSON is cut out of the reply text: {}",
            listed(json_text)
        )
    } else {
        format!(
            "no .with_structured_output(), .bind_tools() or output parser in the {}: the LLM's reply is free text",
            files_of(files)
        )
    }
}

/// Whether every structured call is made again on failure (and by what), the handlers that
/// catch the error without a second attempt, the graph nodes covered, and the client's own
/// request retries.
/// The fix of [`StructuredFact::Retry`]: a call made once, a free-text recovery, or a call made
/// again once only.
fn retry_fix(calls: &[Retried]) -> Option<Fix> {
    Some(match calls.iter().find(|c| c.retry.is_none()) {
        Some(c) => Fix::at(
            &c.call,
            "make the structured call again when the reply is invalid: loop up to 3 attempts around its `.invoke` and go round again on `ValidationError`/`OutputParserException` (or `.with_retry(stop_after_attempt=3)` on the runnable)",
        ),
        None if calls.iter().any(|c| c.from_text.is_some()) => Fix::at(
            calls.iter().find_map(|c| c.from_text.as_ref())?,
            "drop the free-text recovery: when the bound call fails, make it again (or record the failure) instead of cutting JSON out of a plain reply, whose schema the API does not enforce",
        ),
        None => {
            let once: Vec<Site> = calls
                .iter()
                .filter(|c| c.once())
                .map(|c| c.call.clone())
                .collect();
            Fix::at(
                once.first()?,
                format!(
                    "give {} more than one second chance: up to 3 attempts in all (`for attempt in range(3)` around its `.invoke`, going round again on `ValidationError`/`OutputParserException`, or `.with_retry(stop_after_attempt=3)` on the runnable)",
                    if once.len() == 1 {
                        "the call".to_string()
                    } else {
                        format!("each of the calls at {}", sites(&once, 3))
                    }
                ),
            )
        }
    })
}

/// The fix of [`StructuredFact::ItemWrites`]: each field set as an attribute.
fn item_writes_fix(model: &str, writes: &[ItemWrite]) -> Option<Fix> {
    let (at, _, _) = writes.first()?;
    // `opinion["judge"]` -> `opinion.judge`, when the key is a name
    let attributes: Option<Vec<String>> = writes
        .iter()
        .map(|(_, target, _)| {
            let (obj, key) = target.split_once('[')?;
            let key = key.trim_end_matches(']').trim_matches(['"', '\'']);
            (!key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .then(|| format!("`{obj}.{key} = ...`"))
        })
        .collect();
    Some(Fix::at(
        at,
        match attributes {
            Some(a) => format!(
                "set {} as {} ({}): the reply is a {model} (a Pydantic model), which does not support item assignment",
                if a.len() == 1 {
                    "the field"
                } else {
                    "the fields"
                },
                if a.len() == 1 {
                    "an attribute"
                } else {
                    "attributes"
                },
                join_and(&a)
            ),
            None => format!(
                "set the fields as attributes, or build a new opinion (`model_copy(update=...)`): the reply is a {model} (a Pydantic model), which does not support item assignment"
            ),
        },
    ))
}

/// What [`StructuredFact::ItemWrites`] says: each reply written like a dict, and what follows.
fn item_writes_statement(model: &str, writes: &[ItemWrite]) -> String {
    if writes.is_empty() {
        return format!("no reply of a judge's structured call ({model}) is written like a dict");
    }
    format!(
        "the reply of a judge's structured call is a {model} (a Pydantic model), yet it is written like a dict: {}; a model does not support item assignment, so the judge raises TypeError there each time it runs",
        first_of(
            writes
                .iter()
                .map(|(at, target, call)| format!("`{target} = ...` at {at} (the reply of {call})"))
                .collect(),
            3
        )
    )
}

fn retry_statement(calls: &[Retried]) -> String {
    if calls.is_empty() {
        return "no LLM call bound to a schema, so no structured call to retry (a loop around a plain call is not read as one)".into();
    }
    let retried: Vec<&Retried> = calls.iter().filter(|c| c.retry.is_some()).collect();
    let not: Vec<&Retried> = calls.iter().filter(|c| c.retry.is_none()).collect();
    let transport = calls.iter().find_map(|c| c.transport.as_ref());
    let handled = not.iter().find_map(|c| c.handled.as_ref());
    let mut s = retried_or_not(calls, &retried, &not);
    if let (false, Some(h)) = (not.is_empty(), handled) {
        s.push_str(&format!(
            "; the try/except at {h} handles the error without a second attempt"
        ));
    }
    s.push_str(&judges_covered(&retried, &not));
    if let Some((at, value)) = transport {
        s.push_str(&format!(
            "; the client's max_retries={value} at {at} re-sends failed requests, not invalid replies"
        ));
    }
    s
}

/// Which structured calls are made again on failure (and by what), and which are not.
fn retried_or_not(calls: &[Retried], retried: &[&Retried], not: &[&Retried]) -> String {
    let not_sites: Vec<Site> = not.iter().map(|c| c.call.clone()).collect();
    if not.is_empty() {
        let once = retried.iter().filter(|c| c.once()).count();
        format!(
            "{} made again on failure{}: {}",
            match calls.len() {
                1 => "the structured call is".to_string(),
                2 => "both structured calls are".to_string(),
                n => format!("all {n} structured calls are"),
            },
            // the gap first, so that a shortened line does not read as a strength
            match (once, calls.len()) {
                (0, _) => String::new(),
                (1, 1) => ", once only (two attempts in all)".to_string(),
                (o, n) if o == n => ", each once only (two attempts in all)".to_string(),
                (o, _) => format!(", {o} of them once only (two attempts in all)"),
            } + &retried
                .iter()
                .find_map(|c| c.from_text.as_ref())
                .map(|at| format!(
                    ", but a failed reply is read from free text instead (JSON cut out of a plain reply with a regex at {at}: the API does not enforce the schema there)"
                ))
                .unwrap_or_default(),
            join_and(
                &retried
                    .iter()
                    .take(3)
                    .map(|c| format!(
                        "{} by {}",
                        c.call,
                        c.retry
                            .as_ref()
                            .map(|r| r.said_for(&c.call))
                            .unwrap_or_default()
                    ))
                    .collect::<Vec<_>>()
            )
        )
    } else if calls.len() == 1 {
        format!(
            "the structured call at {} is not made again when it fails (no loop, retry decorator, .with_retry() or second call in its handler)",
            not_sites[0]
        )
    } else if not.len() == calls.len() {
        format!(
            "none of the {} structured calls is made again when it fails ({}; no loop, retry decorator, .with_retry() or second call in a handler)",
            calls.len(),
            sites(&not_sites, 3)
        )
    } else {
        format!(
            "{} of the {} structured calls {} not made again when {} ({}); {}",
            not.len(),
            calls.len(),
            crate::words::form(not.len(), "is", "are"),
            crate::words::form(not.len(), "it fails", "they fail"),
            sites(&not_sites, 3),
            join_and(
                &retried
                    .iter()
                    .take(2)
                    .map(|c| format!(
                        "{} is, by {}",
                        c.call,
                        c.retry
                            .as_ref()
                            .map(|r| r.said_for(&c.call))
                            .unwrap_or_default()
                    ))
                    .collect::<Vec<_>>()
            )
        )
    }
}

/// The judge nodes whose calls are made again and those whose calls are not, when the graph
/// tells (`; graph nodes covered: ...`), or nothing.
fn judges_covered(retried: &[&Retried], not: &[&Retried]) -> String {
    let mut covered: Vec<&str> = Vec::new();
    for c in retried {
        for j in &c.judges {
            if !covered.contains(&j.as_str()) {
                covered.push(j);
            }
        }
    }
    let mut left: Vec<&str> = Vec::new();
    for c in not {
        for j in &c.judges {
            if !covered.contains(&j.as_str()) && !left.contains(&j.as_str()) {
                left.push(j);
            }
        }
    }
    let named = |v: &[&str]| join_and(&v.iter().map(|j| format!("`{j}`")).collect::<Vec<_>>());
    match (covered.is_empty(), left.is_empty()) {
        (false, true) => format!(
            "; graph {} covered: {}",
            if covered.len() == 1 { "node" } else { "nodes" },
            named(&covered)
        ),
        (false, false) => format!(
            "; graph {} covered: {}; not: {}",
            if covered.len() == 1 { "node" } else { "nodes" },
            named(&covered),
            named(&left)
        ),
        (true, false) => format!(
            "; made by the graph {} {}",
            if left.len() == 1 { "node" } else { "nodes" },
            named(&left)
        ),
        (true, true) => String::new(),
    }
}

impl Stated for StructuredFact {
    fn key(&self) -> String {
        match self {
            StructuredFact::Binding { .. } => "used".into(),
            StructuredFact::OpinionSchema { .. } => "opinion_schema".into(),
            StructuredFact::SchemaFields { .. } => "schema_fields".into(),
            StructuredFact::Retry { .. } => "retry".into(),
            StructuredFact::ItemWrites { .. } => "item_writes".into(),
        }
    }

    fn holds(&self) -> bool {
        match self {
            StructuredFact::Binding { bound, .. } => {
                bound.iter().any(|b| !b.json_mode && b.skipped.is_none())
            }
            StructuredFact::OpinionSchema { opinion, .. } => opinion.is_some(),
            StructuredFact::SchemaFields { model, missing, .. } => {
                model.is_some() && missing.is_empty()
            }
            StructuredFact::Retry { calls } => {
                !calls.is_empty()
                    && calls.iter().all(|c| c.retry.is_some())
                    && calls.iter().all(|c| !c.once() && c.from_text.is_none())
            }
            StructuredFact::ItemWrites { writes, .. } => writes.is_empty(),
        }
    }

    fn statement(&self) -> String {
        match self {
            StructuredFact::Binding {
                bound,
                parsers,
                json_text,
                files,
            } => binding_statement(bound, parsers, json_text, *files),
            StructuredFact::OpinionSchema {
                bound,
                opinion,
                batched,
            } => match opinion {
                Some((name, at)) => format!(
                    "the bound schema {name} (class at {at}) {}",
                    if *batched {
                        "holds a list of opinions: one call answers every criterion"
                    } else {
                        "is one opinion with a score"
                    }
                ),
                None if bound.is_empty() => "no schema is bound to an LLM call".into(),
                None => format!(
                    "none of the bound schemas ({}) is a model with a score field",
                    join_and(
                        &bound
                            .iter()
                            .take(3)
                            .map(|b| format!("{} at {}", b.schema, b.call.at))
                            .collect::<Vec<_>>()
                    )
                ),
            },
            StructuredFact::SchemaFields {
                model,
                have,
                missing,
            } => match model {
                Some((name, at)) if missing.is_empty() => {
                    format!("{name} at {at} has {}", join_and(have))
                }
                Some((name, at)) => format!(
                    "{name} at {at} lacks {}{}",
                    join_and(missing),
                    if have.is_empty() {
                        String::new()
                    } else {
                        format!(" (has {})", join_and(have))
                    }
                ),
                None => "no opinion model with score, argument and cited_evidence fields".into(),
            },
            StructuredFact::Retry { calls } => retry_statement(calls),
            StructuredFact::ItemWrites { model, writes } => item_writes_statement(model, writes),
        }
    }

    fn proof(&self) -> Vec<Site> {
        match self {
            StructuredFact::Binding {
                bound,
                parsers,
                json_text,
                ..
            } => bound
                .iter()
                .map(|b| b.call.at.clone())
                .chain(parsers.iter().map(|c| c.at.clone()))
                .chain(json_text.iter().map(|c| c.at.clone()))
                .collect(),
            StructuredFact::OpinionSchema { bound, opinion, .. } => opinion
                .iter()
                .map(|(_, at)| at.clone())
                .chain(bound.iter().map(|b| b.call.at.clone()))
                .collect(),
            StructuredFact::SchemaFields { model, .. } => {
                model.iter().map(|(_, at)| at.clone()).collect()
            }
            StructuredFact::Retry { calls } => {
                let mut v: Vec<Site> = calls
                    .iter()
                    .filter(|c| c.retry.is_none())
                    .map(|c| c.call.clone())
                    .collect();
                v.extend(
                    calls
                        .iter()
                        .filter_map(|c| c.retry.as_ref().map(|r| r.at().clone())),
                );
                v
            }
            StructuredFact::ItemWrites { writes, .. } => {
                writes.iter().map(|(at, _, _)| at.clone()).collect()
            }
        }
    }

    fn fix(&self) -> Option<Fix> {
        if self.holds() {
            return None;
        }
        Some(match self {
            StructuredFact::Binding {
                bound,
                parsers,
                json_text,
                ..
            } => match (bound.first(), parsers.first().or(json_text.first())) {
                (
                    Some(Bound {
                        skipped: Some(at),
                        method,
                        schema,
                        ..
                    }),
                    _,
                ) => Fix::at(
                    at,
                    format!(
                        "keep the judges' calls bound here too: give it `{method}({schema}, method=\"json_mode\")` (or the model with `.with_retry()` and a schema's parser) instead of the unbound model"
                    ),
                ),
                (Some(b), _) => Fix::at(
                    &b.call.at,
                    format!(
                        "bind the schema itself: call `{}({})` without `method=\"json_mode\"` (the default or `method=\"function_calling\"`), so the API enforces it",
                        b.method, b.schema
                    ),
                ),
                (None, Some(c)) => Fix::at(
                    &c.at,
                    "bind the judge's LLM to the opinion model: `llm.with_structured_output(JudicialOpinion)` instead of parsing the reply text",
                ),
                (None, None) => Fix::anywhere(
                    "call each judge through `llm.with_structured_output(JudicialOpinion)` so its reply is a validated opinion",
                ),
            },
            StructuredFact::OpinionSchema { bound, .. } => match bound.first() {
                Some(b) => Fix::at(
                    &b.call.at,
                    format!(
                        "bind the opinion model (score, argument, cited_evidence) instead of {}",
                        b.schema
                    ),
                ),
                None => Fix::anywhere(
                    "bind each judge's LLM to the opinion model: `llm.with_structured_output(JudicialOpinion)`",
                ),
            },
            StructuredFact::SchemaFields { model, missing, .. } => match model {
                Some((name, at)) => Fix::at(
                    at,
                    format!(
                        "add {} to {name} (`score: int = Field(ge=1, le=5)`, `argument: str`, `cited_evidence: list[str]`)",
                        join_and(&missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>())
                    ),
                ),
                None => Fix::anywhere(
                    "define the opinion model: `class JudicialOpinion(BaseModel)` with `score: int = Field(ge=1, le=5)`, `argument: str`, `cited_evidence: list[str]`",
                ),
            },
            StructuredFact::Retry { calls } => retry_fix(calls)?,
            StructuredFact::ItemWrites { model, writes } => item_writes_fix(model, writes)?,
        })
    }
}

// ---------------------------------------------------------------- judicial nuance

/// A persona's prompt text and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    pub persona: String,
    pub at: Site,
    pub chars: usize,
    #[serde(default)]
    pub sentences: usize,
    /// The score levels (1 to 5) its scoring guide gives a meaning; three or more are a guide.
    #[serde(default)]
    pub levels: usize,
}

impl Prompt {
    /// It has a scoring guide (three or more of the five levels given a meaning).
    pub fn guides(&self) -> bool {
        self.levels >= 3
    }

    fn said(&self) -> String {
        format!(
            "{} at {}, {} and {} chars{}",
            self.persona,
            self.at,
            count(self.sentences, "sentence", "sentences"),
            self.chars,
            if self.guides() {
                format!(", a scoring guide of {} levels", self.levels)
            } else {
                String::new()
            }
        )
    }
}

/// Two prompts and the share of their text in common passages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    pub a: String,
    pub b: String,
    pub share: f64,
}

/// Judicial nuance (`repo.personas.*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum NuanceFact {
    /// A prompt for each of the three personas.
    Prompts {
        found: Vec<Prompt>,
        missing: Vec<String>,
    },
    /// The prompts share at most the threshold of their text (no Persona Collusion).
    Collusion {
        pairs: Vec<Overlap>,
        threshold: f64,
        at: Site,
    },
    /// A persona's prompt speaks its role (adversarial, forgiving, pragmatic).
    Language {
        persona: String,
        expected: String,
        matched: Vec<String>,
        at: Option<Site>,
    },
    /// Each persona has a full brief of its own (its stance, duties and scoring guide), not a
    /// short instruction or a short text set into one shared prompt.
    OwnPrompts {
        prompts: Vec<Prompt>,
        /// The shared template short persona texts are set into, when one was found.
        template: Option<(Site, usize)>,
        /// Under this many characters a persona text set into a template is a mere part of it.
        sentence: usize,
        /// From this many characters on a persona text is a full brief.
        full: usize,
    },
    /// The judges are asked once per criterion, not once for every criterion together.
    PerCriterion {
        /// The call that answers every criterion at once (a list of opinions).
        batched: Option<Site>,
        /// The call that gives one opinion per judge run for all the criteria (a one-opinion
        /// schema asked once per run: no loop over the criteria, no fan-out per criterion).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overall: Option<Site>,
        calls: Vec<Site>,
    },
    /// The graph fans out to the judges.
    Parallel {
        fan_out: Option<(Site, String, Vec<String>)>,
        graph: Option<Site>,
    },
    /// The judges' replies are bound to a schema, or parsed into one by a schema-derived
    /// parser (`PydanticOutputParser`, `model_validate_json`).
    Structured {
        bound: Option<Site>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parsed: Option<Site>,
    },
}

fn persona_key(persona: &str) -> &'static str {
    match persona {
        "Prosecutor" => "prosecutor_language",
        "Defense" => "defense_language",
        _ => "tech_lead_language",
    }
}

// --------------------------------------------------- the statements of the nuance facts

/// The persona prompts found, or the personas without one (and what was searched).
fn prompts_statement(found: &[Prompt], missing: &[String]) -> String {
    let listed = join_and(
        &found
            .iter()
            .map(|p| format!("{} at {} ({} chars)", p.persona, p.at, p.chars))
            .collect::<Vec<_>>(),
    );
    if missing.is_empty() {
        format!("persona prompts: {listed}")
    } else if found.is_empty() {
        format!(
            "no prompt found for {} (string constants, persona-keyed entries and prompt files searched)",
            join_and(missing)
        )
    } else {
        format!(
            "no prompt found for {} (found: {listed})",
            join_and(missing)
        )
    }
}

/// The pair of persona prompts that share the most text, against the rubric's threshold
/// (`distinct`: under it).
fn collusion_statement(pairs: &[Overlap], threshold: f64, distinct: bool) -> String {
    let Some(top) = pairs.iter().max_by(|a, b| a.share.total_cmp(&b.share)) else {
        return "fewer than two persona prompts to compare".into();
    };
    let others: Vec<String> = pairs
        .iter()
        .filter(|p| !std::ptr::eq(*p, top))
        .map(|p| format!("{}/{} {:.0}%", p.a, p.b, p.share * 100.0))
        .collect();
    let figure = format!(
        "the {} and {} prompts share {:.0}% of their text{}",
        top.a,
        top.b,
        top.share * 100.0,
        if others.is_empty() {
            String::new()
        } else {
            format!(" (other pairs: {})", others.join(", "))
        }
    );
    if distinct {
        format!(
            "Distinct personas: {figure}, under the rubric's {:.0}%",
            threshold * 100.0
        )
    } else {
        format!(
            "Persona Collusion: {figure}, over the rubric's {:.0}%",
            threshold * 100.0
        )
    }
}

/// Whether each persona has a full brief of its own, or short texts set into one shared prompt.
fn own_prompts_statement(
    prompts: &[Prompt],
    template: &Option<(Site, usize)>,
    sentence: usize,
    full: usize,
) -> String {
    let said = |v: &[&Prompt]| join_and(&v.iter().map(|p| p.said()).collect::<Vec<_>>());
    let short: Vec<&Prompt> = prompts.iter().filter(|p| p.chars < full).collect();
    let set_in: Vec<&Prompt> = prompts.iter().filter(|p| p.chars < sentence).collect();
    match template {
        Some((at, chars)) if !set_in.is_empty() => format!(
            "{} short {} set into one shared prompt of {chars} chars at {at} ({})",
            if set_in.len() == 1 {
                format!("the {} persona is a", set_in[0].persona)
            } else {
                format!("{} personas are", set_in.len())
            },
            crate::words::form(set_in.len(), "text", "texts"),
            said(&set_in)
        ),
        _ if !short.is_empty() => format!(
            "{} shorter than a full brief ({}), under the {full} chars the table takes for one",
            if short.len() == 1 {
                format!("the {} prompt is", short[0].persona)
            } else {
                format!("{} prompts are", short.len())
            },
            said(&short)
        ),
        _ => format!(
            "each persona has a full brief of its own ({})",
            said(&prompts.iter().collect::<Vec<_>>())
        ),
    }
}

impl Stated for NuanceFact {
    fn key(&self) -> String {
        match self {
            NuanceFact::Prompts { .. } => "prompts".into(),
            NuanceFact::Collusion { .. } => "collusion".into(),
            NuanceFact::Language { persona, .. } => persona_key(persona).into(),
            NuanceFact::OwnPrompts { .. } => "own_prompts".into(),
            NuanceFact::PerCriterion { .. } => "per_criterion".into(),
            NuanceFact::Parallel { .. } => "parallel_judges".into(),
            NuanceFact::Structured { .. } => "structured_output".into(),
        }
    }

    fn holds(&self) -> bool {
        match self {
            NuanceFact::Prompts { missing, .. } => missing.is_empty(),
            NuanceFact::Collusion {
                pairs, threshold, ..
            } => pairs.iter().all(|p| p.share <= *threshold),
            NuanceFact::Language { matched, .. } => !matched.is_empty(),
            NuanceFact::OwnPrompts { prompts, full, .. } => {
                !prompts.is_empty() && prompts.iter().all(|p| p.chars >= *full)
            }
            NuanceFact::PerCriterion {
                batched, overall, ..
            } => batched.is_none() && overall.is_none(),
            NuanceFact::Parallel { fan_out, .. } => fan_out.is_some(),
            NuanceFact::Structured { bound, parsed } => bound.is_some() || parsed.is_some(),
        }
    }

    fn statement(&self) -> String {
        match self {
            NuanceFact::Prompts { found, missing } => prompts_statement(found, missing),
            NuanceFact::Collusion {
                pairs, threshold, ..
            } => collusion_statement(pairs, *threshold, self.holds()),
            NuanceFact::Language {
                persona,
                expected,
                matched,
                at,
            } => match at {
                Some(at) if matched.is_empty() => {
                    format!("the {persona} prompt at {at} has none of the {expected} role's words")
                }
                Some(at) => format!(
                    "the {persona} prompt at {at} speaks its {expected} role: {}",
                    matched.join(", ")
                ),
                None => format!("no {persona} prompt found"),
            },
            NuanceFact::OwnPrompts {
                prompts,
                template,
                sentence,
                full,
            } => own_prompts_statement(prompts, template, *sentence, *full),
            NuanceFact::PerCriterion {
                batched,
                overall,
                calls,
            } => match (batched, overall) {
                (Some(at), _) => format!(
                    "each judge answers every criterion in one call: the reply at {at} is a list of opinions"
                ),
                (None, Some(at)) => format!(
                    "each judge gives one opinion for all the criteria: the call at {at} is made once per run, not per criterion (searched: loops and comprehensions around it and its callers, routes and `Send` fan-outs to the judges)"
                ),
                (None, None) => format!(
                    "each judge is asked for one opinion per call ({}); no call was found answering every criterion at once or made once for all of them",
                    sites(calls, 3)
                ),
            },
            NuanceFact::Parallel { fan_out, .. } => match fan_out {
                Some((at, from, to)) => {
                    format!("`{from}` fans out to the judges {} at {at}", to.join(", "))
                }
                None => "no fan-out to two or more judge nodes in the graph".into(),
            },
            NuanceFact::Structured { bound, parsed } => match (bound, parsed) {
                (Some(at), _) => format!("the judges' replies are bound to a schema at {at}"),
                (None, Some(at)) => format!(
                    "the judges' replies are parsed into a schema at {at} (a schema-derived parser, not bound by the API)"
                ),
                (None, None) => "the judges' replies are free text (no structured output call and no schema-derived parser)".into(),
            },
        }
    }

    fn proof(&self) -> Vec<Site> {
        match self {
            NuanceFact::Prompts { found, .. } => found.iter().map(|p| p.at.clone()).collect(),
            NuanceFact::Collusion { at, .. } => vec![at.clone()],
            NuanceFact::Language { at, .. } => at.iter().cloned().collect(),
            NuanceFact::OwnPrompts {
                prompts, template, ..
            } => prompts
                .iter()
                .map(|p| p.at.clone())
                .chain(template.iter().map(|(at, _)| at.clone()))
                .collect(),
            NuanceFact::PerCriterion {
                batched,
                overall,
                calls,
            } => batched
                .iter()
                .chain(overall)
                .chain(calls)
                .cloned()
                .collect(),
            NuanceFact::Parallel { fan_out, graph } => fan_out
                .iter()
                .map(|(at, _, _)| at.clone())
                .chain(graph.iter().cloned())
                .collect(),
            NuanceFact::Structured { bound, parsed } => {
                bound.iter().chain(parsed).cloned().collect()
            }
        }
    }

    fn fix(&self) -> Option<Fix> {
        if self.holds() {
            return None;
        }
        Some(match self {
            NuanceFact::Prompts { missing, .. } => Fix::anywhere(format!(
                "write a system prompt of its own for {}",
                join_and(missing)
            )),
            NuanceFact::Collusion { pairs, at, .. } => {
                let top = pairs.iter().max_by(|a, b| a.share.total_cmp(&b.share))?;
                Fix::at(
                    at,
                    format!(
                        "rewrite the {} and {} prompts so they share less than half their text: give each its own charge, evidence focus and scoring guide",
                        top.a, top.b
                    ),
                )
            }
            NuanceFact::Language {
                persona,
                expected,
                at,
                ..
            } => match at {
                Some(at) => Fix::at(
                    at,
                    format!(
                        "make the {persona} prompt {expected}: say what this role looks for and how it scores"
                    ),
                ),
                None => Fix::anywhere(format!("write the {persona}'s prompt")),
            },
            NuanceFact::OwnPrompts { prompts, full, .. } => {
                let p = prompts
                    .iter()
                    .filter(|p| p.chars < *full)
                    .min_by_key(|p| p.chars)?;
                Fix::at(
                    &p.at,
                    if p.guides() {
                        format!(
                            "the {}'s brief ({} chars, with a scoring guide) is under the {full} chars the table takes for a full brief; no other part of a brief is checked",
                            p.persona, p.chars
                        )
                    } else {
                        format!(
                            "give the {} a scoring guide per level (1 to 5) and a fuller brief ({} chars; a full brief has {full} or more)",
                            p.persona, p.chars
                        )
                    },
                )
            }
            NuanceFact::PerCriterion {
                batched, overall, ..
            } => match (batched, overall) {
                (Some(at), _) => Fix::at(
                    at,
                    "ask each judge about one criterion per call (bind one opinion, fan out per criterion) instead of one call that answers every criterion",
                ),
                (None, Some(at)) => Fix::at(
                    at,
                    "ask each judge for one opinion per criterion: make this call once for each of the rubric's dimensions (a loop over them, or a fan-out per criterion) instead of once per run",
                ),
                (None, None) => return None,
            },
            NuanceFact::Parallel { graph, .. } => match graph {
                Some(at) => Fix::at(
                    at,
                    "fan out from one node to the three judge nodes (`add_edge(source, judge)` for each) so they run in parallel on the same evidence",
                ),
                None => Fix::anywhere(
                    "run the three judges as parallel nodes of the graph on the same evidence",
                ),
            },
            NuanceFact::Structured { .. } => Fix::anywhere(
                "bind each judge's LLM to the opinion model: `llm.with_structured_output(JudicialOpinion)`",
            ),
        })
    }
}

// ---------------------------------------------------------------- Chief Justice

/// The Chief Justice's rules, as the code implements them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JusticeRule {
    /// A security fact caps a score.
    SecurityOverride,
    /// Detective evidence overrules a judge.
    FactSupremacy,
    /// The Tech Lead weighs more on the architecture criterion.
    FunctionalityWeight,
    /// Scores more than 2 apart write a dissent.
    DissentRequirement,
    /// Scores more than 2 apart trigger a re-read or a re-run.
    VarianceReEvaluation,
}

impl JusticeRule {
    pub const ALL: [JusticeRule; 5] = [
        JusticeRule::SecurityOverride,
        JusticeRule::FactSupremacy,
        JusticeRule::FunctionalityWeight,
        JusticeRule::DissentRequirement,
        JusticeRule::VarianceReEvaluation,
    ];

    pub fn id(self) -> &'static str {
        match self {
            JusticeRule::SecurityOverride => "security_override",
            JusticeRule::FactSupremacy => "fact_supremacy",
            JusticeRule::FunctionalityWeight => "functionality_weight",
            JusticeRule::DissentRequirement => "dissent_requirement",
            JusticeRule::VarianceReEvaluation => "variance_re_evaluation",
        }
    }

    pub fn from_id(id: &str) -> Option<JusticeRule> {
        JusticeRule::ALL.into_iter().find(|r| r.id() == id)
    }

    /// What the branch does, in words.
    pub fn meaning(self) -> &'static str {
        match self {
            JusticeRule::SecurityOverride => "a security fact caps the score",
            JusticeRule::FactSupremacy => "detective evidence overrules a judge",
            JusticeRule::FunctionalityWeight => {
                "the Tech Lead weighs more on the architecture criterion"
            }
            JusticeRule::DissentRequirement => "a score spread above 2 writes a dissent",
            JusticeRule::VarianceReEvaluation => {
                "a score spread above 2 triggers a re-evaluation of the evidence the judges cited"
            }
        }
    }

    /// What a branch that goes only part of the way does (see `JusticeFact::Rule::partial`).
    pub fn partial_meaning(self) -> &'static str {
        match self {
            JusticeRule::FactSupremacy => {
                "a branch caps the score on a test of what the detectives gathered, without reading a finding (`found`, `confidence`)"
            }
            JusticeRule::VarianceReEvaluation => {
                "the spread's branch sets the score without re-reading the evidence or asking a judge again"
            }
            _ => "a branch goes part of the way",
        }
    }

    /// What a branch must do to implement the rule: what the search looked for.
    pub fn searched(self) -> &'static str {
        match self {
            JusticeRule::SecurityOverride => "caps a score under a test of a security matter",
            JusticeRule::FactSupremacy => {
                "reads a detective's finding (`found`, `confidence`) and sets a score"
            }
            JusticeRule::FunctionalityWeight => {
                "weighs the Tech Lead's score above the others' on the architecture criterion, and no weighted sum or weights table does"
            }
            JusticeRule::DissentRequirement => "tests the scores' spread and writes a text",
            JusticeRule::VarianceReEvaluation => {
                "tests the scores' spread and re-reads the evidence, calls a model or routes to another node"
            }
        }
    }

    fn fix(self) -> &'static str {
        match self {
            JusticeRule::SecurityOverride => {
                "add a branch that caps the criterion's score at 3 when a detective's security finding is confirmed (e.g. `if any(e.found and e.kind == \"security\" for e in evidence): score = min(score, 3)`)"
            }
            JusticeRule::FactSupremacy => {
                "add a branch that reads the detectives' evidence and overrules a judge who credits what was not found (e.g. the Defense scores high while every fact of the criterion has `found=False`: take the Prosecutor's score)"
            }
            JusticeRule::FunctionalityWeight => {
                "weigh the Tech Lead's score more on the architecture criterion (e.g. `if criterion == \"graph_orchestration\": weights[\"TechLead\"] = 2`)"
            }
            JusticeRule::DissentRequirement => {
                "when the scores differ by more than 2, write a dissent summary that states both sides"
            }
            JusticeRule::VarianceReEvaluation => {
                "when the scores differ by more than 2, re-evaluate: re-read the cited evidence or ask the judges again before deciding"
            }
        }
    }
}

/// The Chief Justice (`repo.justice.*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum JusticeFact {
    /// The Chief Justice's code.
    Code {
        at: Option<Site>,
        modules: Vec<String>,
        files: usize,
    },
    /// Deterministic rules decide: how many, and the LLM calls of the justice code.
    Deterministic {
        /// Rules that set a score (the dissent writes text).
        rules: usize,
        branches: usize,
        /// The functions the Chief Justice runs (those `branches` are in).
        #[serde(default)]
        functions: usize,
        /// LLM calls that take part in the verdict (their reply is data: bound to a schema,
        /// parsed, or returned as the verdict).
        llm: Vec<Site>,
        /// LLM calls that only write text (a summary, a plan) while the rules compute the
        /// scores.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        prose_llm: Vec<Site>,
        /// Where the justice code is (where a fix goes).
        code: Option<Site>,
    },
    /// One rule: the branch that implements it (what it tests and does).
    Rule {
        rule: JusticeRule,
        branch: Option<Site>,
        /// What the branch tests and does, in a few words.
        how: String,
        /// Branches searched.
        searched: usize,
        /// The functions those branches are in (the functions the Chief Justice runs).
        #[serde(default)]
        functions: usize,
        /// Where the rule is not found: a branch that goes part of the way (a spread above 2
        /// that sets the score without re-reading the evidence or asking a judge again; a cap
        /// on a test of what the detectives gathered that reads no finding), and what it does
        /// (its test and statement, quoted).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial: Option<(Site, String)>,
        code: Option<Site>,
    },
    /// The verdict is written to a Markdown file.
    MarkdownFile {
        write: Option<Site>,
        code: Option<Site>,
    },
    /// The report's sections.
    Sections {
        have: Vec<(String, Site)>,
        missing: Vec<String>,
        code: Option<Site>,
    },
}

impl Stated for JusticeFact {
    fn key(&self) -> String {
        match self {
            JusticeFact::Code { .. } => "code".into(),
            JusticeFact::Deterministic { .. } => "deterministic".into(),
            JusticeFact::Rule { rule, .. } => format!("rule.{}", rule.id()),
            JusticeFact::MarkdownFile { .. } => "markdown_file".into(),
            JusticeFact::Sections { .. } => "report_sections".into(),
        }
    }

    fn holds(&self) -> bool {
        match self {
            JusticeFact::Code { at, .. } => at.is_some(),
            JusticeFact::Deterministic { rules, .. } => *rules > 0,
            JusticeFact::Rule { branch, .. } => branch.is_some(),
            JusticeFact::MarkdownFile { write, .. } => write.is_some(),
            JusticeFact::Sections { have, missing, .. } => !have.is_empty() && missing.is_empty(),
        }
    }

    fn statement(&self) -> String {
        match self {
            JusticeFact::Code { at, modules, files } => match at {
                Some(at) => format!("Chief Justice code at {at} (in {})", modules.join(", ")),
                None => format!(
                    "no Chief Justice code: no module, function or class of synthesis in the {}",
                    files_of(*files)
                ),
            },
            JusticeFact::Deterministic {
                rules,
                branches,
                functions,
                llm,
                prose_llm,
                ..
            } => format!(
                "{}{}, {}; {}",
                count(*branches, "if/elif branch", "if/elif branches"),
                match functions {
                    0 => " of the justice code".to_string(),
                    n => format!(
                        " in the {} the Chief Justice runs",
                        count(*n, "function", "functions")
                    ),
                },
                match rules {
                    1 => "1 rule that sets a score".to_string(),
                    n => format!("{n} rules that set a score"),
                },
                match (llm.is_empty(), prose_llm.is_empty()) {
                    (true, true) => "no LLM call in the justice code".to_string(),
                    (false, true) => format!(
                        "an LLM's reply takes part in the verdict at {}",
                        sites(llm, 2)
                    ),
                    (true, false) => format!(
                        "an LLM only writes text at {} (its reply is read as text; the rules compute the scores)",
                        sites(prose_llm, 2)
                    ),
                    (false, false) => format!(
                        "an LLM's reply takes part in the verdict at {}, and an LLM only writes text at {}",
                        sites(llm, 2),
                        sites(prose_llm, 2)
                    ),
                }
            ),
            JusticeFact::Rule {
                rule,
                branch,
                how,
                searched,
                functions,
                partial,
                ..
            } => match (branch, partial) {
                (Some(at), _) => format!("{} at {at}: {how}", rule.id()),
                (None, Some((_, how))) => format!(
                    "{} only in part: {} ({how})",
                    rule.id(),
                    rule.partial_meaning()
                ),
                (None, None) => format!(
                    "no branch where {}: none of the {}{} {}",
                    rule.meaning(),
                    count(*searched, "if/elif branch", "if/elif branches"),
                    match functions {
                        0 => " of the justice code".to_string(),
                        n => format!(
                            " in the {} the Chief Justice runs",
                            count(*n, "function", "functions")
                        ),
                    },
                    rule.searched()
                ),
            },
            JusticeFact::MarkdownFile { write, .. } => match write {
                Some(at) => format!("the report is written to a .md file at {at}"),
                None => "no write call beside a .md path was found: the verdict is not seen written to a Markdown file (a path given at run time is not followed)".into(),
            },
            JusticeFact::Sections { have, missing, .. } => format!(
                "report sections present: {}; missing: {}",
                if have.is_empty() {
                    "none".to_string()
                } else {
                    join_and(
                        &have
                            .iter()
                            .map(|(s, at)| format!("{s} ({at})"))
                            .collect::<Vec<_>>(),
                    )
                },
                if missing.is_empty() {
                    "none".to_string()
                } else {
                    join_and(missing)
                }
            ),
        }
    }

    fn proof(&self) -> Vec<Site> {
        match self {
            JusticeFact::Code { at, .. } => at.iter().cloned().collect(),
            JusticeFact::Deterministic { llm, prose_llm, .. } => {
                llm.iter().chain(prose_llm).cloned().collect()
            }
            JusticeFact::Rule {
                branch, partial, ..
            } => branch
                .iter()
                .chain(partial.iter().map(|(at, _)| at))
                .cloned()
                .collect(),
            JusticeFact::MarkdownFile { write, .. } => write.iter().cloned().collect(),
            JusticeFact::Sections { have, .. } => have.iter().map(|(_, at)| at.clone()).collect(),
        }
    }

    fn fix(&self) -> Option<Fix> {
        if self.holds() {
            return None;
        }
        let at = |code: &Option<Site>, change: String| Fix {
            at: code.clone(),
            change,
        };
        Some(match self {
            JusticeFact::Code { .. } => Fix::anywhere(
                "write the Chief Justice as deterministic code (a node that applies named rules to the three opinions)",
            ),
            JusticeFact::Deterministic { code, .. } => at(
                code,
                "decide the final score with deterministic rules in code (if/elif branches over the opinions and the evidence), not an LLM".into(),
            ),
            JusticeFact::Rule {
                rule,
                partial: Some((site, _)),
                ..
            } => Fix {
                at: Some(site.clone()),
                change: format!("{}: {}", rule.partial_meaning(), rule.fix()),
            },
            JusticeFact::Rule { rule, code, .. } => at(code, rule.fix().into()),
            JusticeFact::MarkdownFile { code, .. } => at(
                code,
                "write the verdict to a Markdown file (e.g. `Path(\"audit/report.md\").write_text(markdown)`)".into(),
            ),
            JusticeFact::Sections { missing, code, .. } => at(
                code,
                format!(
                    "add the report's missing {}: {}",
                    crate::words::form(missing.len(), "section", "sections"),
                    join_and(missing)
                ),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(line: usize) -> Site {
        Site::new("tools/git.py", line)
    }

    #[test]
    fn a_depth_added_on_one_branch_is_said_with_the_branch_and_the_defaults() {
        let fact = |by_default: Option<bool>| SafetyFact::FullHistory {
            clones: vec![site(27)],
            shallow: vec![Shallow {
                at: site(27),
                depth: "1".into(),
                only: Some(ShallowBranch {
                    at: site(23),
                    branch: "if not full_history:".into(),
                    by_default,
                    defaults: vec![("full_history".into(), "False".into())],
                }),
            }],
        };
        let taken = fact(Some(true));
        assert!(!taken.holds());
        assert_eq!(
            taken.statement(),
            "the clone at tools/git.py:27 keeps only the last 1 commit (depth 1) by default: the depth is added under `if not full_history:` at tools/git.py:23, which the defaults take (`full_history` defaults to `False`); the git-history analysis then sees a single commit"
        );
        // a depth given by a name is said as written, never read as one commit
        let named = SafetyFact::FullHistory {
            clones: vec![site(27)],
            shallow: vec![Shallow {
                at: site(27),
                depth: "depth".into(),
                only: None,
            }],
        };
        assert!(
            named.statement().starts_with(
                "the clone at tools/git.py:27 keeps only the last `depth` commits (depth depth)"
            ),
            "{}",
            named.statement()
        );
        let fix = taken.fix().unwrap();
        assert_eq!(fix.at, Some(site(23)));
        assert!(
            fix.change.starts_with("make the whole history the default"),
            "{}",
            fix.change
        );
        // the defaults do not take it: the clone keeps the history as it is called
        let not_taken = fact(Some(false));
        assert!(not_taken.holds());
        assert!(
            not_taken
                .statement()
                .contains("keeps the whole history by default"),
            "{}",
            not_taken.statement()
        );
        assert!(not_taken.fix().is_none());
        // undecided: said under which branch
        let open = fact(None);
        assert!(!open.holds());
        assert!(
            open.statement()
                .contains("when `if not full_history:` at tools/git.py:23 is taken"),
            "{}",
            open.statement()
        );
        assert!(!open.fix().unwrap().change.contains("default"));
    }

    #[test]
    fn a_short_persona_brief_is_asked_only_for_what_it_lacks() {
        let prompt = |levels: usize| Prompt {
            persona: "Prosecutor".into(),
            at: site(12),
            chars: 734,
            sentences: 13,
            levels,
        };
        let own = |levels: usize| NuanceFact::OwnPrompts {
            prompts: vec![prompt(levels)],
            template: None,
            sentence: 400,
            full: 1000,
        };
        // a scoring guide of five levels: the statement says so, the fix never asks for one
        let guided = own(5);
        assert_eq!(
            guided.statement(),
            "the Prosecutor prompt is shorter than a full brief (Prosecutor at tools/git.py:12, 13 sentences and 734 chars, a scoring guide of 5 levels), under the 1000 chars the table takes for one"
        );
        let fix = guided.fix().expect("a fix").line();
        assert!(
            fix.starts_with("tools/git.py:12: the Prosecutor's brief (734 chars, with a scoring guide) is under the 1000 chars")
                && !fix.contains("give the Prosecutor"),
            "{fix}"
        );
        // no guide: the fix asks for one
        let fix = own(0).fix().expect("a fix").line();
        assert!(
            fix.contains("give the Prosecutor a scoring guide per level"),
            "{fix}"
        );
    }

    fn external(line: usize, timeout: Option<&str>, clone: bool) -> External {
        External {
            call: Call::new(site(line), "subprocess.run"),
            timeout: timeout.map(str::to_string),
            clone,
        }
    }

    #[test]
    fn a_negative_says_what_was_searched_and_a_positive_cites_its_lines() {
        let none = SafetyFact::Timeouts {
            calls: vec![external(31, None, true), external(40, None, false)],
            files: 3,
        };
        assert!(!none.holds());
        assert_eq!(
            none.statement(),
            "none of the 2 subprocess, git and network calls in 3 Python files passes a timeout (tools/git.py:31 and tools/git.py:40)"
        );
        let fix = none.fix().expect("a fix");
        assert_eq!(
            fix.line(),
            "tools/git.py:31: pass `timeout=` to the `subprocess.run` (e.g. `timeout=120`, and catch `subprocess.TimeoutExpired`); 1 other call is without one"
        );
        let all = SafetyFact::Timeouts {
            calls: vec![external(31, Some("120"), true)],
            files: 3,
        };
        assert!(all.holds());
        assert!(
            all.statement()
                .contains("subprocess.run at tools/git.py:31 (timeout=120)")
        );
        assert_eq!(all.fix(), None, "no fix for what holds");
        // the clone timed, another call not: said as it is
        let part = SafetyFact::Timeouts {
            calls: vec![external(31, Some("120"), true), external(40, None, false)],
            files: 3,
        };
        assert_eq!(
            part.statement(),
            "the clone passes a timeout (timeout=120 at tools/git.py:31); 1 of the 2 subprocess, git and network calls passes no timeout: subprocess.run at tools/git.py:40"
        );
        assert_eq!(part.fix().and_then(|f| f.at), Some(site(40)));
        // GitPython's clone takes no timeout: the fix says what to use instead
        let gitpython = SafetyFact::Timeouts {
            calls: vec![External {
                call: Call::new(site(42), "git.Repo.clone_from"),
                timeout: None,
                clone: true,
            }],
            files: 1,
        };
        let fix = gitpython.fix().expect("a fix").line();
        assert!(
            fix.contains("takes no timeout") && fix.contains("subprocess.run([...], timeout=120)"),
            "{fix}"
        );
        // more than three without: the list says how many it leaves out
        let many = SafetyFact::Timeouts {
            calls: (1..=5)
                .map(|l| external(l * 10, None, false))
                .chain([external(60, Some("5"), false)])
                .collect(),
            files: 3,
        };
        assert!(
            many.statement().ends_with(
                "subprocess.run at tools/git.py:10, subprocess.run at tools/git.py:20, subprocess.run at tools/git.py:30 and 2 more"
            ),
            "{}",
            many.statement()
        );
    }

    #[test]
    fn every_fact_that_holds_has_no_fix_and_every_one_that_fails_has_one() {
        let clone = Clone {
            call: Call::new(site(31), "subprocess.run"),
            sandbox: Some(site(30)),
            list_args: true,
            via: None,
            handled: Some(site(29)),
        };
        let facts: Vec<(Fact, bool)> = vec![
            (
                Fact::Safety(SafetyFact::UrlCheck {
                    clones: vec![site(31)],
                    checks: vec![site(25)],
                }),
                true,
            ),
            (
                Fact::Safety(SafetyFact::UrlCheck {
                    clones: vec![site(31)],
                    checks: vec![],
                }),
                false,
            ),
            (
                Fact::Safety(SafetyFact::Sandbox {
                    clones: vec![clone.clone()],
                    files: 2,
                }),
                true,
            ),
            (
                Fact::Structured(StructuredFact::Retry {
                    calls: vec![Retried {
                        call: site(50),
                        retry: None,
                        transport: Some((site(10), "3".into())),
                        handled: Some(site(49)),
                        judges: vec![],
                        from_text: None,
                    }],
                }),
                false,
            ),
            (
                Fact::Justice(JusticeFact::Rule {
                    rule: JusticeRule::FactSupremacy,
                    branch: None,
                    how: String::new(),
                    searched: 7,
                    functions: 3,
                    partial: None,
                    code: Some(site(1)),
                }),
                false,
            ),
        ];
        for (f, holds) in facts {
            assert_eq!(f.holds(), holds, "{}", f.statement());
            assert_eq!(f.fix().is_some(), !holds, "{}", f.statement());
            if let Some(fix) = f.fix() {
                assert!(fix.at.is_some(), "a fix says where: {}", fix.change);
            }
        }
    }

    #[test]
    fn typed_facts_round_trip_and_older_evidence_loads() {
        let f = Fact::Justice(JusticeFact::Rule {
            rule: JusticeRule::SecurityOverride,
            branch: Some(site(12)),
            how: "`if flagged`: `score = min(score, 3)`".into(),
            searched: 9,
            functions: 2,
            partial: None,
            code: Some(site(1)),
        });
        let json = serde_json::to_string(&f).unwrap();
        assert!(json.contains(r#""family":"justice""#), "{json}");
        let back: Fact = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        assert_eq!(f.key(), "rule.security_override");
    }
}
