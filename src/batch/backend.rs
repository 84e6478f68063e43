//! The batch store interface ([`BatchStore`]) and the choice of its backend.
//!
//! - **SQLite** (the default, nothing to set up): `DIR/batch.sqlite` in the output directory
//!   ([`super::store::Store`]); one machine, one worker per directory.
//! - **PostgreSQL** (`--store postgres://…` or `AUDITOR_STORE`): a shared database
//!   ([`super::postgres::PgStore`]); any number of workers on any number of machines run the same
//!   command on one cohort; jobs are claimed under a lease, the response cache is shared.
//!
//! The runner, the cache wrapper and the outputs see only this trait. A connection string
//! carries a password: it is shown only as [`StoreSpec::shown`] (password replaced by `***`).

use super::store::{
    Begin, CachedResponse, Counters, Job, JobKey, OpinionRecord, Store, StoreError,
};
use std::path::Path;

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

impl BatchStore for Store {
    fn shown(&self) -> String {
        self.path().display().to_string()
    }
    fn job(&self, id: i64) -> Result<Option<Job>, StoreError> {
        Store::job(self, id)
    }
    fn latest_job(&self, s: &str, r: &str, j: &str) -> Result<Option<Job>, StoreError> {
        Store::latest_job(self, s, r, j)
    }
    fn begin_job(
        &self,
        key: &JobKey,
        repo: &str,
        git_ref: Option<&str>,
        regrade: bool,
    ) -> Result<Begin, StoreError> {
        Store::begin_job(self, key, repo, git_ref, regrade)
    }
    fn save_evidence(&self, job_id: i64, evidence_json: &str) -> Result<(), StoreError> {
        Store::save_evidence(self, job_id, evidence_json)
    }
    fn finish_job(
        &self,
        job_id: i64,
        sidecar_json: &str,
        overall: Option<f64>,
        judge_failures: u32,
    ) -> Result<(), StoreError> {
        Store::finish_job(self, job_id, sidecar_json, overall, judge_failures)
    }
    fn fail_job(&self, job_id: i64, reason: &str) -> Result<(), StoreError> {
        Store::fail_job(self, job_id, reason)
    }
    fn record_opinion(&self, o: &OpinionRecord) -> Result<(), StoreError> {
        Store::record_opinion(self, o)
    }
    fn opinion_count(&self, job_id: i64) -> Result<u64, StoreError> {
        Store::opinion_count(self, job_id)
    }
    fn cached_response(&self, key: &str) -> Result<Option<CachedResponse>, StoreError> {
        Store::cached_response(self, key)
    }
    fn put_response(
        &self,
        key: &str,
        persona: &str,
        criterion_id: &str,
        model: Option<&str>,
        response: &CachedResponse,
    ) -> Result<(), StoreError> {
        Store::put_response(self, key, persona, criterion_id, model, response)
    }
    fn note_request(&self, key: &str) -> Result<(), StoreError> {
        Store::note_request(self, key)
    }
    fn counters(&self) -> Result<Counters, StoreError> {
        Store::counters(self)
    }
    fn fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Store::fingerprints(self, submission, commit, config)
    }
    fn save_fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
        data: &[u8],
    ) -> Result<(), StoreError> {
        Store::save_fingerprints(self, submission, commit, config, data)
    }
}

/// Which store a batch uses, from `--store` / `AUDITOR_STORE`.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// `DIR/batch.sqlite` in the output directory.
    Sqlite,
    /// A PostgreSQL connection URL (kept whole for the driver; shown redacted).
    Postgres { url: String, shown: String },
}

impl std::fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl StoreSpec {
    /// Parses the `--store` text: empty or `sqlite` → SQLite; `postgres://` or `postgresql://`
    /// → PostgreSQL. The error never repeats the text (it may hold a password).
    pub fn parse(text: Option<&str>) -> Result<StoreSpec, String> {
        let t = text.map(str::trim).unwrap_or("");
        if t.is_empty() || t.eq_ignore_ascii_case("sqlite") {
            return Ok(StoreSpec::Sqlite);
        }
        if !(t.starts_with("postgres://") || t.starts_with("postgresql://")) {
            return Err(format!(
                "--store (or AUDITOR_STORE) must be \"sqlite\" (the default: DIR/batch.sqlite) or a PostgreSQL URL \
postgres://USER:PASSWORD@HOST:PORT/DATABASE; got a value starting with {:?}",
                t.chars()
                    .take_while(|c| *c != ':')
                    .take(16)
                    .collect::<String>()
            ));
        }
        let shown = redact_url(t).ok_or_else(|| {
            "--store: the PostgreSQL URL cannot be parsed: write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE \
(percent-encode special characters in the password)"
                .to_string()
        })?;
        Ok(StoreSpec::Postgres {
            url: t.to_string(),
            shown,
        })
    }

    /// The store for messages: a path, or the URL with its password replaced.
    pub fn shown(&self) -> String {
        match self {
            StoreSpec::Sqlite => "sqlite (DIR/batch.sqlite)".into(),
            StoreSpec::Postgres { shown, .. } => shown.clone(),
        }
    }

    /// Opens the store (`out` holds the SQLite file).
    pub fn open(&self, out: &Path) -> Result<Box<dyn BatchStore>, StoreError> {
        match self {
            StoreSpec::Sqlite => Ok(Box::new(Store::open_in(out)?)),
            StoreSpec::Postgres { url, shown } => Ok(Box::new(super::postgres::PgStore::connect(
                url,
                shown,
                super::postgres::PgOptions::from_env().map_err(|detail| StoreError {
                    path: shown.clone(),
                    detail,
                })?,
            )?)),
        }
    }
}

/// The URL with its password (and any `password=` query parameter) replaced by `***`.
pub fn redact_url(text: &str) -> Option<String> {
    let mut u = url::Url::parse(text).ok()?;
    if u.password().is_some() {
        u.set_password(Some("***")).ok()?;
    }
    if u.query().is_some() {
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| {
                let v = if k.eq_ignore_ascii_case("password") {
                    "***".to_string()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        u.query_pairs_mut().clear().extend_pairs(pairs);
    }
    Some(u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_passwords_never_show() {
        assert_eq!(StoreSpec::parse(None).unwrap(), StoreSpec::Sqlite);
        assert_eq!(
            StoreSpec::parse(Some(" sqlite ")).unwrap(),
            StoreSpec::Sqlite
        );
        let s = StoreSpec::parse(Some(
            "postgres://grader:s3cr%40t@db.example:5433/cohort?password=other&application_name=x",
        ))
        .unwrap();
        let shown = s.shown();
        assert!(!shown.contains("s3cr"), "{shown}");
        assert!(!shown.contains("other"), "{shown}");
        assert!(
            shown.contains("grader:***@db.example:5433/cohort"),
            "{shown}"
        );
        assert!(shown.contains("application_name=x"), "{shown}");
        assert!(!format!("{s:?}").contains("s3cr"));
        let e = StoreSpec::parse(Some("mysql://u:topsecret@h/d")).unwrap_err();
        assert!(!e.contains("topsecret"), "{e}");
        assert!(e.contains("postgres://"), "{e}");
    }
}
