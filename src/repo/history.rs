//! Git forensics over the full history of the audited commit.
//!
//! Rules (documented here and in `auditor evidence` output):
//! - **lines** of a commit are the Python lines (`.py`, `.pyi`) it adds, diffed against its
//!   first parent (the empty tree for a root commit), a file it moves (git's rename
//!   detection: 50% similar or more) counted by the lines it changes, never as new; a history
//!   without Python falls back to
//!   every code file (see [`is_code`]). Merge commits are counted but their lines are not (they
//!   repeat their branches' work), and a commit repeated with the same author time, message and
//!   line count (the same history merged twice) counts once.
//! - **deliveries**: commits of at least [`BULK_LINES`] lines that land less than
//!   [`BULK_GAP_SECONDS`] after one another are one delivery — pre-written code committed file
//!   by file (nobody writes hundreds of lines in a minute); commits that add no lines neither
//!   join nor interrupt them. Every other commit is a delivery of its own: small commits seconds
//!   apart stay separate, they read as small steps.
//! - **pattern**:
//!   - `single_init_dump`: one commit, or one delivery adds ≥ 90% of all lines;
//!   - `few_large`: three commits or fewer, or the two largest deliveries add ≥
//!     [`FEW_LARGE_TOP2`] of all lines;
//!   - `iterative`: anything else.
//! - **staged sessions**: runs of non-merge commits, each less than [`SESSION_GAP_SECONDS`]
//!   after the previous one, holding at least [`SESSION_MIN_COMMITS`] commits that add lines
//!   (commits that add none neither join nor break a run). Code written over hours arrives
//!   in commits hours apart; a run of commits minutes apart that carries much of the code is
//!   pre-written code committed file by file (the rubric's "timestamps clustered within
//!   minutes"), however many commits it is cut into. Each session's share of all lines is
//!   kept; `staged_share` is their sum.
//! - **clustered**: two or more commits, all within [`CLUSTER_SECONDS`] of the first.
//! - **bursts**: the share of consecutive commits less than [`BURST_GAP_SECONDS`] apart
//!   (measured from four commits). Merges are left out when their message says so (`Merge
//!   ...`, as git and forges write it); a merge with a hand-typed message counts as a commit
//!   (the level tables were calibrated so).
//! - **progression**: each commit is tagged with the phases of what it adds (setup: the
//!   project files whose names the tooling fixes, `requirements.txt`, `pyproject.toml`,
//!   `.env.example`; tools: Python lines it adds that import or call what forensic tools are
//!   made of (`subprocess`, `tempfile`, `git`, `ast`, a PDF library, `@tool`); graph: Python
//!   lines it adds that import LangGraph or wire a graph (`StateGraph(`, `.add_node(`,
//!   `.add_edge(`, `Send(`)). Neither the commit's message nor what the student called a file
//!   or directory (`tools/`, `graph.py`) decides anything: a commit "add nodes" that adds empty
//!   files builds nothing. A setup file counts only when the commit adds lines to it or
//!   deletes it: empty placeholder files (a scaffold) tag no phase. The story
//!   holds when all three phases occur and their first commits come in the order
//!   setup ≤ tools ≤ graph, not all in one commit.

use super::error::{AnalysisError, RepoError};
use git2::{DiffOptions, Repository, Sort};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

pub const CLUSTER_SECONDS: i64 = 30 * 60;
/// Consecutive commits closer than this (author time) are a burst.
pub const BURST_GAP_SECONDS: i64 = 120;
/// A commit at least this large (lines added) can be part of a bulk delivery.
pub const BULK_LINES: usize = 200;
/// Bulk commits closer than this (author time) are one delivery.
pub const BULK_GAP_SECONDS: i64 = 120;
/// Share of all lines held by the two largest deliveries from which the history is `few_large`.
pub const FEW_LARGE_TOP2: f64 = 0.55;
/// Commits closer than this (author time) belong to one working session.
pub const SESSION_GAP_SECONDS: i64 = 10 * 60;
/// Commits adding lines a session needs to count as staged.
pub const SESSION_MIN_COMMITS: usize = 3;

/// A file version larger than this is not diffed (its lines are not counted): a few hundred
/// KB of pack can hold a 200 MB compressible blob, and diffing it costs many times its size.
pub const MAX_DIFF_BLOB_BYTES: u64 = 4 << 20;
/// Bytes of file versions diffed per commit; the files past it are not diffed.
pub const MAX_DIFF_COMMIT_BYTES: u64 = 64 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitFact {
    pub hash: String,
    /// Author time, unix seconds.
    pub timestamp: i64,
    /// RFC 3339 author date.
    pub date: String,
    /// First line of the message.
    pub message: String,
    pub files_changed: usize,
    pub insertions: usize,
    pub deletions: usize,
    pub code_lines_added: usize,
    /// Python lines added (0 for a merge).
    #[serde(default)]
    pub python_lines_added: usize,
    pub merge: bool,
    /// Phases this commit touches: setup, tools, graph.
    pub phases: Vec<String>,
    /// Files of this commit not diffed (over [`MAX_DIFF_BLOB_BYTES`] or past
    /// [`MAX_DIFF_COMMIT_BYTES`]): their lines are not counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_diffed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HistoryFacts {
    pub commit_count: usize,
    pub merge_count: usize,
    /// `single_init_dump`, `few_large`, `iterative` or `empty`.
    pub pattern: String,
    /// Which lines the shares count: `python` or `code` (no Python in the history).
    pub lines_counted: String,
    /// Lines added over the history (non-merge, repeated commits once).
    pub lines_added: usize,
    /// Share of all lines added by the single largest commit.
    pub largest_commit_share: f64,
    /// Share added by the two largest deliveries (bulk commits seconds apart count as one).
    pub top2_share: f64,
    /// Bulk deliveries of two or more commits (see the module docs).
    pub bulk_deliveries: Vec<BulkDelivery>,
    /// Staged sessions (see the module docs), the largest share first.
    #[serde(default)]
    pub staged: Vec<StagedSession>,
    /// Share of all lines added in staged sessions.
    #[serde(default)]
    pub staged_share: f64,
    pub clustered: bool,
    /// Share of consecutive commits (in history order, merges named `Merge ...` left out)
    /// less than [`BURST_GAP_SECONDS`] apart; `None` under four of them.
    #[serde(default)]
    pub burst_share: Option<f64>,
    /// Seconds between the first and last commit.
    pub span_seconds: i64,
    /// Index (in `commits`) of the first commit of each phase.
    pub first_setup: Option<usize>,
    pub first_tools: Option<usize>,
    pub first_graph: Option<usize>,
    pub progression: bool,
    /// Oldest first (like `git log --reverse`).
    pub commits: Vec<CommitFact>,
}

/// Two or more bulk commits that landed seconds apart.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BulkDelivery {
    /// Commit hashes, oldest first.
    pub commits: Vec<String>,
    pub lines: usize,
    /// Seconds from the first to the last of them.
    pub seconds: i64,
}

/// A run of commits minutes apart that adds code (see the module docs).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StagedSession {
    /// Hashes of the commits that add lines, oldest first.
    pub commits: Vec<String>,
    /// RFC 3339 author date of the first.
    pub from: String,
    /// Seconds from the first to the last of them.
    pub seconds: i64,
    pub lines: usize,
    /// Share of all lines added.
    pub share: f64,
}

/// Python files, whose added lines make the pattern.
pub fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

/// Source-code files whose added lines count when a history has no Python.
pub fn is_code(path: &str) -> bool {
    let ext = path.rsplit('.').next().unwrap_or("");
    matches!(
        ext,
        "py" | "pyi"
            | "rs"
            | "js"
            | "ts"
            | "tsx"
            | "jsx"
            | "go"
            | "java"
            | "sh"
            | "toml"
            | "cfg"
            | "ini"
            | "yaml"
            | "yml"
            | "sql"
    ) && !path.ends_with(".lock")
}

pub fn analyse(repo: &Repository, head: git2::Oid) -> Result<HistoryFacts, RepoError> {
    let err = |e: git2::Error| RepoError::from(AnalysisError::History(e));
    let mut walk = repo.revwalk().map_err(err)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME | Sort::REVERSE)
        .map_err(err)?;
    walk.push(head).map_err(err)?;
    let mut commits = Vec::new();
    for oid in walk {
        let oid = oid.map_err(err)?;
        let c = repo.find_commit(oid).map_err(err)?;
        let tree = c.tree().map_err(err)?;
        let parent_tree = match c.parent(0) {
            Ok(p) => Some(p.tree().map_err(err)?),
            Err(_) => None,
        };
        let mut opts = DiffOptions::new();
        opts.context_lines(0);
        let mut diff = repo
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))
            .map_err(err)?;
        let mut budget = DiffBudget::new(repo);
        // A file moved (renamed, with or without edits) counts by the lines it changes, not
        // as a new file: a move writes nothing. Files are compared by content only when the
        // added and deleted versions fit the diff limits; past them, only unchanged moves are
        // recognised (by object id, no blob read).
        let mut find = git2::DiffFindOptions::new();
        find.renames(true).rename_limit(1000);
        if !budget.may_compare(&diff) {
            find.exact_match_only(true);
        }
        diff.find_similar(Some(&mut find)).map_err(err)?;
        let mut insertions = 0;
        let mut deletions = 0;
        let mut code = 0;
        let mut python = 0;
        let mut paths = Vec::new();
        let mut does = Does::default();
        let mut not_diffed = Vec::new();
        for i in 0..diff.deltas().len() {
            let Some(delta) = diff.get_delta(i) else {
                continue;
            };
            let path = delta
                .new_file()
                .path()
                .or(delta.old_file().path())
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let deleted = delta.status() == git2::Delta::Deleted;
            let mut added = 0;
            let diffed = budget.allows(&delta);
            if !diffed {
                not_diffed.push(path.clone());
            } else if let Ok(Some(patch)) = git2::Patch::from_diff(&diff, i)
                && let Ok((_, add, del)) = patch.line_stats()
            {
                insertions += add;
                deletions += del;
                added = add;
                if is_code(&path) {
                    code += add;
                }
                if is_python(&path) {
                    python += add;
                    does.read(&patch);
                }
            }
            // An empty placeholder file says nothing about what the commit built (a file too
            // large to diff is no placeholder).
            if added > 0 || deleted || !diffed {
                paths.push(path);
            }
        }
        let message = c
            .summary_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let merge = c.parent_count() > 1;
        let timestamp = c.author().when().seconds();
        commits.push(CommitFact {
            hash: oid.to_string(),
            timestamp,
            date: chrono::DateTime::from_timestamp(timestamp, 0)
                .map(|d| d.to_rfc3339())
                .unwrap_or_default(),
            message,
            files_changed: diff.deltas().len(),
            insertions,
            deletions,
            code_lines_added: if merge { 0 } else { code },
            python_lines_added: if merge { 0 } else { python },
            merge,
            phases: phases(&paths, does),
            not_diffed,
        });
    }
    Ok(summarise(commits))
}

/// What a commit may still diff: sizes are read from the object headers (no blob is
/// inflated to decide).
struct DiffBudget<'r> {
    odb: Option<git2::Odb<'r>>,
    left: u64,
}

impl<'r> DiffBudget<'r> {
    fn new(repo: &'r Repository) -> DiffBudget<'r> {
        DiffBudget {
            odb: repo.odb().ok(),
            left: MAX_DIFF_COMMIT_BYTES,
        }
    }

    fn size(&self, id: git2::Oid) -> u64 {
        if id.is_zero() {
            return 0;
        }
        match &self.odb {
            Some(odb) => odb
                .read_header(id)
                .map(|(n, _)| n as u64)
                .unwrap_or(u64::MAX),
            None => u64::MAX,
        }
    }

    /// Whether the added and deleted files of a diff may be compared with one another by
    /// content (rename detection): each within [`MAX_DIFF_BLOB_BYTES`], together within
    /// [`MAX_DIFF_COMMIT_BYTES`].
    fn may_compare(&self, diff: &git2::Diff<'_>) -> bool {
        let mut total: u64 = 0;
        for d in diff.deltas() {
            let id = match d.status() {
                git2::Delta::Added => d.new_file().id(),
                git2::Delta::Deleted => d.old_file().id(),
                _ => continue,
            };
            let size = self.size(id);
            if size > MAX_DIFF_BLOB_BYTES {
                return false;
            }
            total = total.saturating_add(size);
            if total > MAX_DIFF_COMMIT_BYTES {
                return false;
            }
        }
        true
    }

    /// Whether this file change may be diffed; takes its bytes from the budget if so.
    fn allows(&mut self, delta: &git2::DiffDelta<'_>) -> bool {
        let bytes = [delta.old_file().id(), delta.new_file().id()].map(|id| self.size(id));
        if bytes.iter().any(|b| *b > MAX_DIFF_BLOB_BYTES) {
            return false;
        }
        let total = bytes[0] + bytes[1];
        if total > self.left {
            return false;
        }
        self.left -= total;
        true
    }
}

/// What the Python lines a commit adds do, for its phases (see the module docs): read from
/// the APIs they import or call, never from the names of the files that hold them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Does {
    tools: bool,
    graph: bool,
}

impl Does {
    fn read(&mut self, patch: &git2::Patch<'_>) {
        for h in 0..patch.num_hunks() {
            let Ok(n) = patch.num_lines_in_hunk(h) else {
                continue;
            };
            for l in 0..n {
                if self.tools && self.graph {
                    return;
                }
                let Ok(line) = patch.line_in_hunk(h, l) else {
                    continue;
                };
                if line.origin() == '+' {
                    self.line(&String::from_utf8_lossy(line.content()));
                }
            }
        }
    }

    fn line(&mut self, line: &str) {
        static TOOLS: OnceLock<Regex> = OnceLock::new();
        static GRAPH: OnceLock<Regex> = OnceLock::new();
        let tools = TOOLS.get_or_init(|| {
            Regex::new(
                r"^\s*(?:import|from)\s+(?:subprocess|tempfile|git|ast|pypdf|PyPDF2|fitz|pymupdf|pdfplumber|docling|pdf2image|tree_sitter|langchain_core\.tools|langchain\.tools)\b|\b(?:subprocess|tempfile|ast)\.\w+\s*\(|\bclone_from\s*\(|^\s*@tool\b",
            )
            .expect("valid regex")
        });
        let graph = GRAPH.get_or_init(|| {
            Regex::new(
                r"^\s*(?:import|from)\s+langgraph\b|\bStateGraph\s*\(|\.add_(?:node|edge|conditional_edges)\s*\(|\.set_entry_point\s*\(|\bSend\s*\(",
            )
            .expect("valid regex")
        });
        self.tools |= tools.is_match(line);
        self.graph |= graph.is_match(line);
    }
}

fn phases(paths: &[String], does: Does) -> Vec<String> {
    let mut out = Vec::new();
    let setup = paths.iter().any(|p| {
        let file = p.rsplit('/').next().unwrap_or(p).to_lowercase();
        matches!(
            file.as_str(),
            "pyproject.toml"
                | "requirements.txt"
                | "setup.py"
                | "setup.cfg"
                | ".env.example"
                | "uv.lock"
                | "poetry.lock"
                | ".gitignore"
                | "readme.md"
                | ".python-version"
        )
    });
    let (tools, graph) = (does.tools, does.graph);
    if setup {
        out.push("setup".to_string());
    }
    if tools {
        out.push("tools".to_string());
    }
    if graph {
        out.push("graph".to_string());
    }
    out
}

/// Pattern, clustering and progression from the per-commit facts.
/// Share of consecutive commits, in history order, less than [`BURST_GAP_SECONDS`] apart,
/// merges named as merges (`Merge ...`) left out (`None` under four such commits).
fn burst_share(commits: &[CommitFact]) -> Option<f64> {
    let times: Vec<i64> = commits
        .iter()
        .filter(|c| !c.message.starts_with("Merge "))
        .map(|c| c.timestamp)
        .collect();
    if times.len() < 4 {
        return None;
    }
    let gaps = times.len() - 1;
    let bursts = times
        .windows(2)
        .filter(|w| w[1].saturating_sub(w[0]) < BURST_GAP_SECONDS)
        .count();
    Some(bursts as f64 / gaps as f64)
}

/// The staged sessions of a history (see the module docs), the largest share first.
fn staged_sessions(
    commits: &[CommitFact],
    total: usize,
    lines: impl Fn(&CommitFact) -> usize,
) -> Vec<StagedSession> {
    let mut seen = std::collections::HashSet::new();
    let mut ordered: Vec<&CommitFact> = commits
        .iter()
        .filter(|c| !c.merge)
        .filter(|c| seen.insert((c.timestamp, &c.message, lines(c))))
        .collect();
    ordered.sort_by_key(|c| c.timestamp);
    let mut runs: Vec<Vec<&CommitFact>> = Vec::new();
    for c in ordered {
        match runs.last_mut() {
            Some(run)
                if run.last().is_some_and(|p| {
                    c.timestamp.saturating_sub(p.timestamp) < SESSION_GAP_SECONDS
                }) =>
            {
                run.push(c)
            }
            _ => runs.push(vec![c]),
        }
    }
    let mut out: Vec<StagedSession> = runs
        .into_iter()
        .filter_map(|run| {
            let code: Vec<&CommitFact> = run.into_iter().filter(|c| lines(c) > 0).collect();
            if code.len() < SESSION_MIN_COMMITS || total == 0 {
                return None;
            }
            let added: usize = code.iter().map(|c| lines(c)).sum();
            let (first, last) = (code.first()?, code.last()?);
            Some(StagedSession {
                commits: code.iter().map(|c| c.hash.clone()).collect(),
                from: first.date.clone(),
                seconds: last.timestamp.saturating_sub(first.timestamp),
                lines: added,
                share: added as f64 / total as f64,
            })
        })
        .collect();
    out.sort_by(|a, b| b.share.total_cmp(&a.share));
    out
}

pub fn summarise(commits: Vec<CommitFact>) -> HistoryFacts {
    let n = commits.len();
    let mut h = HistoryFacts {
        commit_count: n,
        merge_count: commits.iter().filter(|c| c.merge).count(),
        ..HistoryFacts::default()
    };
    if n == 0 {
        h.pattern = "empty".into();
        return h;
    }
    let python = commits.iter().any(|c| c.python_lines_added > 0);
    h.lines_counted = if python { "python" } else { "code" }.into();
    let lines = |c: &CommitFact| {
        if python {
            c.python_lines_added
        } else {
            c.code_lines_added
        }
    };
    // Non-merge commits that add lines, in author-time order, a repeated commit once.
    let mut seen = std::collections::HashSet::new();
    let mut counted: Vec<&CommitFact> = commits
        .iter()
        .filter(|c| !c.merge && lines(c) > 0)
        .filter(|c| seen.insert((c.timestamp, &c.message, lines(c))))
        .collect();
    counted.sort_by_key(|c| c.timestamp);
    let mut deliveries: Vec<(Vec<&CommitFact>, usize)> = Vec::new();
    let mut previous_bulk: Option<i64> = None;
    for c in counted.iter().copied() {
        let bulk = lines(c) >= BULK_LINES;
        match deliveries.last_mut() {
            Some((group, total))
                if bulk && previous_bulk.is_some_and(|t| c.timestamp - t < BULK_GAP_SECONDS) =>
            {
                group.push(c);
                *total += lines(c);
            }
            _ => deliveries.push((vec![c], lines(c))),
        }
        previous_bulk = bulk.then_some(c.timestamp);
    }
    h.bulk_deliveries = deliveries
        .iter()
        .filter(|(group, _)| group.len() > 1)
        .map(|(group, total)| BulkDelivery {
            commits: group.iter().map(|c| c.hash.clone()).collect(),
            lines: *total,
            seconds: group.last().map(|c| c.timestamp).unwrap_or(0)
                - group.first().map(|c| c.timestamp).unwrap_or(0),
        })
        .collect();
    let mut sizes: Vec<usize> = deliveries.iter().map(|(_, total)| *total).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let total: usize = sizes.iter().sum();
    h.lines_added = total;
    if total > 0 {
        let largest_commit = counted.iter().map(|c| lines(c)).max().unwrap_or(0);
        h.largest_commit_share = largest_commit as f64 / total as f64;
        h.top2_share = sizes.iter().take(2).sum::<usize>() as f64 / total as f64;
    } else {
        h.largest_commit_share = if n == 1 { 1.0 } else { 0.0 };
        h.top2_share = if n <= 2 { 1.0 } else { 0.0 };
    }
    let largest_delivery_share = if total > 0 {
        sizes[0] as f64 / total as f64
    } else {
        h.largest_commit_share
    };
    h.pattern = if n == 1 || largest_delivery_share >= 0.9 {
        "single_init_dump"
    } else if n <= 3 || h.top2_share >= FEW_LARGE_TOP2 {
        "few_large"
    } else {
        "iterative"
    }
    .to_string();
    h.staged = staged_sessions(&commits, total, |c| lines(c));
    h.staged_share = h.staged.iter().fold(0.0, |a, s| a + s.share);
    let first = commits.iter().map(|c| c.timestamp).min().unwrap_or(0);
    let last = commits.iter().map(|c| c.timestamp).max().unwrap_or(0);
    // Saturating: author times are whatever the submission wrote (i64::MIN .. i64::MAX).
    h.span_seconds = last.saturating_sub(first);
    h.clustered = n >= 2 && h.span_seconds <= CLUSTER_SECONDS;
    h.burst_share = burst_share(&commits);
    let first_of = |p: &str| commits.iter().position(|c| c.phases.iter().any(|x| x == p));
    h.first_setup = first_of("setup");
    h.first_tools = first_of("tools");
    h.first_graph = first_of("graph");
    h.progression = match (h.first_setup, h.first_tools, h.first_graph) {
        (Some(s), Some(t), Some(g)) => s <= t && t <= g && s < g,
        _ => false,
    };
    h.commits = commits;
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(ts: i64, code: usize, phases: &[&str]) -> CommitFact {
        CommitFact {
            hash: format!("{ts:040}"),
            timestamp: ts,
            date: String::new(),
            message: "m".into(),
            files_changed: 1,
            insertions: code,
            deletions: 0,
            code_lines_added: code,
            python_lines_added: code,
            merge: false,
            phases: phases.iter().map(|s| s.to_string()).collect(),
            not_diffed: Vec::new(),
        }
    }

    const HOUR: i64 = 3_600;

    #[test]
    fn bursts_are_consecutive_commits_under_two_minutes_apart_merges_aside() {
        let h = summarise(vec![c(0, 10, &[]), c(30, 10, &[]), c(HOUR, 10, &[])]);
        assert_eq!(h.burst_share, None, "under four commits");
        let mut merge = c(HOUR + 10, 0, &[]);
        merge.merge = true;
        merge.message = "Merge pull request #1 from a/b".into();
        let h = summarise(vec![
            c(0, 10, &[]),
            c(30, 10, &[]),
            c(HOUR, 10, &[]),
            merge,
            c(HOUR + 119, 10, &[]),
            c(2 * HOUR, 10, &[]),
        ]);
        // five commits besides the merge, four gaps: 30 s and 119 s are bursts
        assert_eq!(h.burst_share, Some(0.5));
    }

    #[test]
    fn patterns_follow_the_documented_rule() {
        assert_eq!(summarise(vec![c(0, 100, &[])]).pattern, "single_init_dump");
        assert_eq!(
            summarise(vec![
                c(0, 950, &[]),
                c(99_999, 20, &[]),
                c(199_999, 30, &[]),
                c(299_999, 1, &[])
            ])
            .pattern,
            "single_init_dump"
        );
        assert_eq!(
            summarise(vec![c(0, 10, &[]), c(9_000, 10, &[])]).pattern,
            "few_large"
        );
        let many: Vec<CommitFact> = (0..12)
            .map(|i| c(i * 7_200, 10 + i as usize, &[]))
            .collect();
        let h = summarise(many);
        assert_eq!(h.pattern, "iterative");
        assert!(!h.clustered);
        assert_eq!(summarise(vec![]).pattern, "empty");
    }

    /// Ten commits hours apart: two of `big` lines, eight of 100.
    fn two_big_among_ten(big: usize) -> Vec<CommitFact> {
        (0..10)
            .map(|i| c(i * HOUR, if i == 2 || i == 6 { big } else { 100 }, &[]))
            .collect()
    }

    #[test]
    fn two_largest_commits_decide_few_large_at_55_percent() {
        // 2 × 500 of 1800 lines = 56%.
        let h = summarise(two_big_among_ten(500));
        assert!((h.top2_share - 1000.0 / 1800.0).abs() < 1e-9);
        assert_eq!(h.pattern, "few_large");
        // 2 × 450 of 1700 lines = 53%.
        let h = summarise(two_big_among_ten(450));
        assert_eq!(h.pattern, "iterative", "{}", h.top2_share);
    }

    #[test]
    fn bulk_commits_seconds_apart_are_one_delivery() {
        // Four commits of 400 lines, 40 s apart, then commits hours apart (700, 7 × 200, 100):
        // the two largest commits hold 1100/3800 = 29%, the delivery and the 700 hold 61%.
        let mut commits: Vec<CommitFact> = (0..4).map(|i| c(i * 40, 400, &[])).collect();
        commits.extend((1..=8).map(|i| c(i * HOUR, if i == 1 { 700 } else { 200 }, &[])));
        commits.push(c(10 * HOUR, 100, &[]));
        let h = summarise(commits);
        assert_eq!(h.bulk_deliveries.len(), 1);
        assert_eq!(h.bulk_deliveries[0].commits.len(), 4);
        assert_eq!(h.bulk_deliveries[0].lines, 1600);
        assert_eq!(h.bulk_deliveries[0].seconds, 120);
        assert!((h.top2_share - 2300.0 / 3800.0).abs() < 1e-9);
        assert_eq!(h.pattern, "few_large");
    }

    #[test]
    fn small_commits_seconds_apart_stay_small_steps() {
        // The same 1600 lines in sixteen commits of 100, 30 s apart, then the same tail.
        let mut commits: Vec<CommitFact> = (0..16).map(|i| c(i * 30, 100, &[])).collect();
        commits.extend((1..=8).map(|i| c(i * HOUR, if i == 1 { 700 } else { 200 }, &[])));
        commits.push(c(10 * HOUR, 100, &[]));
        let h = summarise(commits);
        assert!(h.bulk_deliveries.is_empty());
        assert_eq!(h.pattern, "iterative", "{}", h.top2_share);
        // Bulk commits too far apart are separate deliveries as well.
        let mut commits: Vec<CommitFact> = (0..4).map(|i| c(i * 600, 400, &[])).collect();
        commits.extend((1..=8).map(|i| c(i * HOUR, if i == 1 { 700 } else { 200 }, &[])));
        commits.push(c(10 * HOUR, 100, &[]));
        let h = summarise(commits);
        assert!(h.bulk_deliveries.is_empty());
        assert_eq!(h.pattern, "iterative", "{}", h.top2_share);
    }

    #[test]
    fn a_repeated_commit_counts_once_and_merges_not_at_all() {
        // Two copies of one 600-line commit (same time, message and size) among steps of 100.
        let mut commits = vec![c(0, 600, &[]), c(0, 600, &[])];
        commits.extend((1..=10).map(|i| c(i * HOUR, 100, &[])));
        let mut merge = c(11 * HOUR, 5_000, &[]);
        merge.merge = true;
        merge.python_lines_added = 0;
        merge.code_lines_added = 0;
        commits.push(merge);
        let h = summarise(commits);
        assert_eq!(h.lines_added, 1600);
        assert!(h.bulk_deliveries.is_empty());
        assert_eq!(h.pattern, "iterative", "{}", h.top2_share);
        assert_eq!(h.commit_count, 13);
    }

    #[test]
    fn python_lines_decide_and_other_code_only_without_python() {
        let mut commits = two_big_among_ten(100);
        // A 5000-line YAML file changes nothing while there is Python.
        commits[0].code_lines_added = 5_000;
        let h = summarise(commits.clone());
        assert_eq!(h.lines_counted, "python");
        assert_eq!(h.pattern, "iterative");
        for c in &mut commits {
            c.python_lines_added = 0;
        }
        let h = summarise(commits);
        assert_eq!(h.lines_counted, "code");
        assert_eq!(h.pattern, "few_large", "{}", h.top2_share);
    }

    #[test]
    fn extreme_timestamps_do_not_overflow() {
        let h = summarise(vec![c(i64::MIN, 1, &[]), c(i64::MAX, 1, &[])]);
        assert_eq!(h.span_seconds, i64::MAX);
        assert!(!h.clustered, "a span of -1 s would read as a bulk upload");
    }

    #[test]
    fn clustering_and_progression() {
        let h = summarise(vec![
            c(0, 1, &["setup"]),
            c(60, 1, &["tools"]),
            c(120, 1, &["graph"]),
        ]);
        assert!(h.clustered);
        assert!(h.progression);
        let h = summarise(vec![
            c(0, 1, &["graph"]),
            c(4_000, 1, &["tools"]),
            c(8_000, 1, &["setup"]),
        ]);
        assert!(!h.clustered);
        assert!(!h.progression);
    }
}
