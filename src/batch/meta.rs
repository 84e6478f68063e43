//! `DIR/batch.json`: what a batch output directory was graded from (the manifest, the rubric,
//! the judges), written when a batch starts, so that `auditor serve` and `auditor export` can
//! find the cohort's manifest (its student columns) and pick the store's jobs of this batch.
//! No secret is written: the store is not named (its URL may carry a password).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "batch.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchMeta {
    /// The manifest, as an absolute path.
    pub manifest: PathBuf,
    /// The rubric file given with `--rubric` (absolute), or `None` for the built-in rubric.
    pub rubric: Option<PathBuf>,
    pub rubric_sha256: String,
    /// The judge configuration part of the job key.
    pub judge_config: String,
    /// `--judges` as given (`auto`, `offline`, `llm`).
    pub judges: String,
    /// The judges' prompt directory given with `--prompts` (absolute), `None` for the built-in
    /// prompts.
    #[serde(default)]
    pub prompts: Option<PathBuf>,
    /// The manifest's file name (the dashboard's title).
    pub title: String,
}

#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a batch description written by auditor: {source}")]
    Parse {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Writes `DIR/batch.json` (atomically).
pub fn write(dir: &Path, meta: &BatchMeta) -> Result<(), MetaError> {
    let path = dir.join(FILE_NAME);
    let text = serde_json::to_vec_pretty(meta).map_err(|e| MetaError::Parse {
        path: path.display().to_string(),
        source: e,
    })?;
    crate::files::write_atomic(&path, &text).map_err(|source| MetaError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Reads `DIR/batch.json`; `Ok(None)` when the directory has none (written by an older
/// auditor).
pub fn read(dir: &Path) -> Result<Option<BatchMeta>, MetaError> {
    let path = dir.join(FILE_NAME);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(MetaError::Read {
                path: path.display().to_string(),
                source,
            });
        }
    };
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|source| MetaError::Parse {
            path: path.display().to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_absent() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        let m = BatchMeta {
            manifest: "/c/cohort.csv".into(),
            rubric: None,
            rubric_sha256: "abc".into(),
            judge_config: "offline".into(),
            judges: "offline".into(),
            prompts: None,
            title: "cohort.csv".into(),
        };
        write(dir.path(), &m).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(m));
        std::fs::write(dir.path().join(FILE_NAME), "{").unwrap();
        assert!(read(dir.path()).is_err());
    }
}
