//! The batch store: the interface the runner, the cache wrapper and the outputs see
//! ([`BatchStore`]), the records it keeps, and its two backends; [`spec`] chooses one.
//!
//! - **SQLite** (the default, nothing to set up): `DIR/batch.sqlite` in the output directory
//!   ([`sqlite::Store`]); one machine, one worker per directory.
//! - **PostgreSQL** (`--store postgres://…` or `AUDITOR_STORE`): a shared database
//!   ([`postgres::PgStore`]); any number of workers on any number of machines run the same
//!   command on one cohort; jobs are claimed under a lease, the response cache is shared.
//!
//! The runner, the cache wrapper and the outputs see only this trait. A connection string
//! carries a password: it is shown only as [`spec::StoreSpec::shown`] (password replaced by `***`).

pub mod postgres;
pub mod spec;
pub mod sqlite;

/// What the batch needs from its store. Calls are synchronous (the SQLite store is embedded; the
/// PostgreSQL store runs its connection on a thread of its own), each its own transaction.
pub trait BatchStore {
    /// Where the store is, for messages (never a password).
    fn shown(&self) -> String;
    fn job(&self, id: i64) -> Result<Option<Job>, StoreError>;
    /// The most recently updated job of a submission under this rubric and judge configuration.
    fn latest_job(
        &self,
        submission: &str,
        rubric_sha256: &str,
        judge_config: &str,
    ) -> Result<Option<Job>, StoreError>;
    /// The most recently updated job of a submission that holds evidence, under any rubric
    /// and judge configuration (a regrade judges it again: `auditor review regrade`).
    fn latest_with_evidence(&self, submission: &str) -> Result<Option<Job>, StoreError>;
    /// Finds or creates (idempotently) the job for `key` and claims it when there is work.
    fn begin_job(
        &self,
        key: &JobKey,
        repo: &str,
        git_ref: Option<&str>,
        regrade: bool,
    ) -> Result<Begin, StoreError>;
    fn save_evidence(&self, job_id: i64, evidence_json: &str) -> Result<(), StoreError>;
    fn finish_job(
        &self,
        job_id: i64,
        sidecar_json: &str,
        overall: Option<f64>,
        judge_failures: u32,
    ) -> Result<(), StoreError>;
    fn fail_job(&self, job_id: i64, reason: &str) -> Result<(), StoreError>;
    fn record_opinion(&self, o: &OpinionRecord) -> Result<(), StoreError>;
    fn opinion_count(&self, job_id: i64) -> Result<u64, StoreError>;
    /// Looks a response up; a hit is counted.
    fn cached_response(&self, key: &str) -> Result<Option<CachedResponse>, StoreError>;
    /// Stores an answer (the first answer stored for a key stays, on PostgreSQL).
    fn put_response(
        &self,
        key: &str,
        persona: &str,
        criterion_id: &str,
        model: Option<&str>,
        response: &CachedResponse,
    ) -> Result<(), StoreError>;
    /// Counts one request actually sent to the judge service (before it is sent).
    fn note_request(&self, key: &str) -> Result<(), StoreError>;
    fn counters(&self) -> Result<Counters, StoreError>;
    /// A submission's stored similarity fingerprints at a commit, under a fingerprint
    /// configuration ([`crate::similarity::config_key`]).
    fn fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
    ) -> Result<Option<Vec<u8>>, StoreError>;
    /// Stores them (replacing what was stored under the same key).
    fn save_fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
        data: &[u8],
    ) -> Result<(), StoreError>;
    /// Jobs claimed by a live worker other than this one: `(submission, worker, seconds left on
    /// its lease)` (`--status`). None on SQLite.
    fn leases(&self) -> Result<Vec<(String, String, f64)>, StoreError> {
        Ok(Vec::new())
    }
    /// Hands this worker's unfinished claims back (the end of a run; a shared store only).
    fn release_claims(&self) {}
    /// How long to wait before asking again for a job another worker holds.
    fn poll_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs(1)
    }
}

/// A store call that failed: the store (its file, or its connection string redacted) and why.
#[derive(Debug, thiserror::Error)]
#[error("batch store {path}: {cause}")]
pub struct StoreError {
    pub path: String,
    #[source]
    pub cause: StoreCause,
}

impl StoreError {
    pub fn new(path: impl Into<String>, cause: StoreCause) -> StoreError {
        StoreError {
            path: path.into(),
            cause,
        }
    }
}

/// Why a store call failed. A database's own error is kept as the source; its text is shown
/// too, since the user reads the one line printed.
#[derive(Debug, thiserror::Error)]
pub enum StoreCause {
    /// SQLite refused a call.
    #[error("{0}")]
    Sqlite(#[source] rusqlite::Error),
    /// SQLite refused while the store was being opened: the file may be corrupt.
    #[error("{0}. If the file is corrupt, move it away to start the batch afresh.")]
    SqliteOpen(#[source] rusqlite::Error),
    /// PostgreSQL refused: `detail` is its message and SQLSTATE code (or the connection's error
    /// chain), after what was being done, if said.
    #[error("{}{detail}", .doing.map(|d| format!("{d}: ")).unwrap_or_default())]
    Postgres {
        doing: Option<&'static str>,
        detail: String,
        #[source]
        source: tokio_postgres::Error,
    },
    /// The database stayed unreachable for longer than the store waits.
    #[error(
        "the database has been unreachable for {waited_secs:.0} s (AUDITOR_STORE_RETRY_SECS={limit_secs:.0}): {source}"
    )]
    Unreachable {
        waited_secs: f64,
        limit_secs: f64,
        #[source]
        source: Box<StoreCause>,
    },
    /// The system refused a thread or a runtime the store needs.
    #[error("{doing}: {source}")]
    System {
        doing: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A setting of the environment out of its range.
    #[error("{name}={value:?} is not valid: {expected}")]
    Setting {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// The store cannot be used as it is (a corrupt file, a schema of another version, a job
    /// lost to another worker, the store's thread gone): the message says what to do.
    #[error("{0}")]
    Refused(String),
}

/// What identifies a job: a new commit, rubric or judge configuration is a new job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobKey {
    pub submission: String,
    /// The audited commit (`""` when the repository could not be reached).
    pub commit: String,
    pub rubric_sha256: String,
    pub judge_config: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    Running,
    Done,
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> JobStatus {
        match s {
            "done" => JobStatus::Done,
            "failed" => JobStatus::Failed,
            _ => JobStatus::Running,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub key: JobKey,
    pub repo: String,
    pub git_ref: Option<String>,
    pub status: JobStatus,
    /// Bumped by `--regrade`: part of every cache key, so a regrade asks afresh.
    pub generation: u32,
    /// Runs that worked on this job (1 for a clean run).
    pub runs: u32,
    pub evidence: Option<String>,
    pub sidecar: Option<String>,
    pub failure: Option<String>,
    /// Judge requests that gave no opinion in the job's report (retried on the next run).
    pub judge_failures: u32,
}

/// What `begin_job` decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Begin {
    /// The job is finished (done) and not to be regraded: skip it.
    Finished(Job),
    /// Work to do: a new job, an unfinished one to resume, a failed one to retry or a regrade.
    Work(Job),
    /// Another worker holds the job under a live lease (a shared PostgreSQL store only): ask
    /// again later.
    Busy { holder: String },
}

/// One judge opinion of a job, as stored when it arrives.
#[derive(Debug, Clone, Copy)]
pub struct OpinionRecord<'a> {
    pub job_id: i64,
    /// The job's generation (a regrade starts a new one).
    pub generation: u32,
    pub persona: &'a str,
    pub criterion_id: &'a str,
    /// The response-cache key of the request that produced it.
    pub request_key: &'a str,
    pub opinion_json: &'a str,
    /// Whether the answer came from the response cache.
    pub from_cache: bool,
}

/// A cached judge answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedResponse {
    pub opinion_json: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub attempts: u32,
}

/// Store-wide counters (they survive restarts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests sent to the judge service, all runs together.
    pub asked: u64,
    /// Distinct request keys ever sent.
    pub distinct_asked: u64,
    /// Request keys sent more than once (a request in flight at a crash, or a regrade).
    pub asked_more_than_once: u64,
    /// Answers served from the cache.
    pub cache_hits: u64,
    /// Answers in the cache.
    pub responses: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn a_store_error_says_which_store_and_why_and_keeps_the_cause() {
        let e = StoreError::new(
            "/out/batch.sqlite",
            StoreCause::SqliteOpen(rusqlite::Error::QueryReturnedNoRows),
        );
        assert_eq!(
            e.to_string(),
            "batch store /out/batch.sqlite: Query returned no rows. If the file is corrupt, move it away to start the batch afresh."
        );
        let cause = e.source().expect("the cause");
        assert!(
            cause
                .source()
                .expect("SQLite's error")
                .is::<rusqlite::Error>()
        );
        let setting = StoreError::new(
            "postgres://u:***@h/db",
            StoreCause::Setting {
                name: "AUDITOR_BATCH_LEASE_SECS",
                value: "0".into(),
                expected: "give seconds from 0.5 to 86400 (default 60)",
            },
        );
        assert_eq!(
            setting.to_string(),
            "batch store postgres://u:***@h/db: AUDITOR_BATCH_LEASE_SECS=\"0\" is not valid: give seconds from 0.5 to 86400 (default 60)"
        );
        let away = StoreCause::Unreachable {
            waited_secs: 120.4,
            limit_secs: 120.0,
            source: Box::new(StoreCause::Refused("gone".into())),
        };
        assert_eq!(
            away.to_string(),
            "the database has been unreachable for 120 s (AUDITOR_STORE_RETRY_SECS=120): gone"
        );
        assert!(away.source().is_some());
    }
}
