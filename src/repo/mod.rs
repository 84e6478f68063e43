//! RepoInvestigator core: sandboxed full-history clone, git forensics and tree-sitter analysis
//! of the Python (LangGraph) code. Plain blocking functions; the actor shell runs them off the
//! actor thread.
//!
//! STUB: the interface below is the contract with the actor shell; the implementation is being
//! built (issue 3).

use crate::model::Evidence;
use crate::rubric::Dimension;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Limits applied to a clone; each exceeded limit is a clear error or a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoLimits {
    pub clone_timeout: Duration,
    pub max_repo_bytes: u64,
    pub max_files: usize,
    pub max_file_bytes: u64,
}

impl Default for RepoLimits {
    fn default() -> Self {
        RepoLimits {
            clone_timeout: Duration::from_secs(300),
            max_repo_bytes: 1 << 30,
            max_files: 50_000,
            max_file_bytes: 2 << 20,
        }
    }
}

/// What to audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoRequest {
    /// https URL, local path or `file://` URL (bare repositories included).
    pub source: String,
    /// Branch, tag or commit to audit; default HEAD.
    pub git_ref: Option<String>,
    pub limits: RepoLimits,
    /// When set, the bytes of this repo-relative file (or, with `Some("")`, of the most likely
    /// report PDF in the repository) are returned in [`RepoFacts::report_pdf`].
    pub extract_pdf: Option<String>,
}

/// A file read out of the audited commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoFile {
    pub path: String,
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// Everything the RepoInvestigator found (facts only, no scores).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoFacts {
    pub url: String,
    pub commit: String,
    /// Every file of the audited commit, repo-relative with `/` separators, sorted.
    pub files: Vec<String>,
    /// Notes about skipped files or limits hit.
    pub notes: Vec<String>,
    #[serde(skip)]
    pub report_pdf: Option<RepoFile>,
}

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("{0}")]
    InvalidSource(String),
    #[error("{0}")]
    Clone(String),
    #[error("{0}")]
    Limit(String),
    #[error("{0}")]
    Analysis(String),
}

/// Cheap pre-flight check run before the graph starts (exit 2 on error): a malformed URL or a
/// local path that does not exist.
pub fn validate_source(source: &str) -> Result<(), RepoError> {
    if source.trim().is_empty() {
        return Err(RepoError::InvalidSource(
            "--repo is empty: give an https URL, a local path or a file:// URL".into(),
        ));
    }
    Ok(())
}

/// Clones into a temporary directory (removed on every path), reads the history and analyses
/// the code. Blocking.
pub fn investigate(req: &RepoRequest) -> Result<RepoFacts, RepoError> {
    Err(RepoError::Analysis(format!(
        "RepoInvestigator is not implemented yet (source {})",
        req.source
    )))
}

/// Turns facts into evidence for the given `github_repo` dimensions, keyed by dimension id.
pub fn evidence(facts: &RepoFacts, dimensions: &[Dimension]) -> BTreeMap<String, Vec<Evidence>> {
    let _ = facts;
    dimensions
        .iter()
        .map(|d| (d.id.clone(), Vec::new()))
        .collect()
}

/// The JSON for `auditor evidence --json` under the key `repo`.
pub fn facts_json(facts: &RepoFacts) -> serde_json::Value {
    serde_json::to_value(facts).unwrap_or_default()
}
