//! Git forensics over the full history of the audited commit.
//!
//! Rules (documented here and in `auditor evidence` output):
//! - **lines** of a commit are the lines it adds to *code* files (see [`is_code`]), diffed
//!   against its first parent (the empty tree for a root commit). Merge commits are counted
//!   but their lines are not (they repeat their branches' work).
//! - **pattern**:
//!   - `single_init_dump`: one commit, or one commit adds ≥ 90% of all code lines;
//!   - `few_large`: three commits or fewer, or the three largest commits add ≥ 80% of all
//!     code lines while the history has fewer than ten commits;
//!   - `iterative`: anything else.
//! - **clustered**: two or more commits, all within [`CLUSTER_SECONDS`] of the first.
//! - **progression**: each commit is tagged with the phases its paths and message touch
//!   (setup: project files, `requirements`, `pyproject`, `.env.example`, messages like
//!   "init"/"setup"; tools: `tools/` paths or "tool" in the message; graph: `graph.py`,
//!   `nodes/`, or "graph"/"node" in the message). The story holds when all three phases occur
//!   and their first commits come in the order setup ≤ tools ≤ graph, not all in one commit.

use super::RepoError;
use git2::{DiffOptions, Repository, Sort};
use serde::{Deserialize, Serialize};

pub const CLUSTER_SECONDS: i64 = 30 * 60;

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
    /// Share of all code lines added by the single largest commit.
    pub largest_commit_share: f64,
    /// Share added by the three largest commits.
    pub top3_share: f64,
    pub clustered: bool,
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

/// Source-code files whose added lines count towards the pattern.
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
    let err = |e: git2::Error| RepoError::Analysis(format!("cannot read the history: {e}"));
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
        let diff = repo
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))
            .map_err(err)?;
        let mut insertions = 0;
        let mut deletions = 0;
        let mut code = 0;
        let mut paths = Vec::new();
        let mut budget = DiffBudget::new(repo);
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
            if !budget.allows(&delta) {
                not_diffed.push(path.clone());
            } else if let Ok(Some(patch)) = git2::Patch::from_diff(&diff, i)
                && let Ok((_, add, del)) = patch.line_stats()
            {
                insertions += add;
                deletions += del;
                if is_code(&path) {
                    code += add;
                }
            }
            paths.push(path);
        }
        let message = c
            .summary_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let full_message = String::from_utf8_lossy(c.message_bytes()).into_owned();
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
            merge,
            phases: phases(&paths, &full_message),
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

fn phases(paths: &[String], message: &str) -> Vec<String> {
    let msg = message.to_lowercase();
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
    }) || [
        "init",
        "setup",
        "set up",
        "scaffold",
        "environment",
        "bootstrap",
        "project structure",
    ]
    .iter()
    .any(|w| msg.contains(w));
    let tools = paths
        .iter()
        .any(|p| p.contains("tools/") || p.contains("_tools"))
        || msg.contains("tool");
    let graph = paths
        .iter()
        .any(|p| p.ends_with("graph.py") || p.contains("nodes/"))
        || ["graph", "node", "orchestrat", "fan-out", "fan out", "edge"]
            .iter()
            .any(|w| msg.contains(w));
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
    let mut sizes: Vec<usize> = commits.iter().map(|c| c.code_lines_added).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let total: usize = sizes.iter().sum();
    if total > 0 {
        h.largest_commit_share = sizes[0] as f64 / total as f64;
        h.top3_share = sizes.iter().take(3).sum::<usize>() as f64 / total as f64;
    } else {
        h.largest_commit_share = if n == 1 { 1.0 } else { 0.0 };
        h.top3_share = if n <= 3 { 1.0 } else { 0.0 };
    }
    h.pattern = if n == 1 || h.largest_commit_share >= 0.9 {
        "single_init_dump"
    } else if n <= 3 || (h.top3_share >= 0.8 && n < 10) {
        "few_large"
    } else {
        "iterative"
    }
    .to_string();
    let first = commits.iter().map(|c| c.timestamp).min().unwrap_or(0);
    let last = commits.iter().map(|c| c.timestamp).max().unwrap_or(0);
    // Saturating: author times are whatever the submission wrote (i64::MIN .. i64::MAX).
    h.span_seconds = last.saturating_sub(first);
    h.clustered = n >= 2 && h.span_seconds <= CLUSTER_SECONDS;
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
            merge: false,
            phases: phases.iter().map(|s| s.to_string()).collect(),
            not_diffed: Vec::new(),
        }
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
