//! The embedded SQLite store: one database (`DIR/batch.sqlite`, WAL) holding
//!
//! - **jobs**: one per submission, keyed by (id, audited commit, rubric sha256, judge
//!   configuration), with its status (`running`, `done`, `failed`), its evidence (persisted right
//!   after the detectives) and its final report (the JSON sidecar);
//! - **opinions**: every judge opinion of a job, persisted as it arrives;
//! - **responses**: the judge response cache, keyed by the sha256 of the full judge request
//!   (see [`crate::batch::cache`]);
//! - **requests**: how many times each request key was actually sent to the judge service
//!   (the "never asks twice" counter);
//! - **similarity_fingerprints**: each submission's code fingerprints at a commit (see
//!   [`crate::batch::similarity`]), so that a resumed batch fingerprints only what is new.
//!
//! Every write is its own transaction, so a process crash (even SIGKILL) loses at most the
//! requests in flight. `synchronous` is `NORMAL` by default (WAL: a commit survives any process
//! crash; an OS crash or power loss may roll back the last few commits, i.e. re-ask a few
//! answers, never corrupt the store); set `AUDITOR_BATCH_SYNC=full` to fsync every commit
//! (slower: three commits per judge request on the System's thread).

use super::{
    BatchStore, Begin, CachedResponse, Counters, Job, JobKey, JobStatus, OpinionRecord, StoreCause,
    StoreError,
};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "batch.sqlite";
const SCHEMA_VERSION: i64 = 1;

/// The tables of schema version 1.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS jobs (
                id INTEGER PRIMARY KEY,
                submission TEXT NOT NULL,
                commit_sha TEXT NOT NULL,
                rubric_sha256 TEXT NOT NULL,
                judge_config TEXT NOT NULL,
                repo TEXT NOT NULL,
                git_ref TEXT,
                status TEXT NOT NULL,
                generation INTEGER NOT NULL DEFAULT 0,
                runs INTEGER NOT NULL DEFAULT 0,
                evidence_json TEXT,
                sidecar_json TEXT,
                overall_score REAL,
                judge_failures INTEGER NOT NULL DEFAULT 0,
                failure TEXT,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                UNIQUE (submission, commit_sha, rubric_sha256, judge_config)
             );
             CREATE TABLE IF NOT EXISTS opinions (
                job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
                generation INTEGER NOT NULL,
                persona TEXT NOT NULL,
                criterion_id TEXT NOT NULL,
                request_key TEXT NOT NULL,
                opinion_json TEXT NOT NULL,
                from_cache INTEGER NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (job_id, generation, persona, criterion_id)
             );
             CREATE TABLE IF NOT EXISTS responses (
                request_key TEXT PRIMARY KEY,
                persona TEXT NOT NULL,
                criterion_id TEXT NOT NULL,
                model TEXT,
                opinion_json TEXT NOT NULL,
                input_tokens INTEGER NOT NULL,
                output_tokens INTEGER NOT NULL,
                attempts INTEGER NOT NULL,
                hits INTEGER NOT NULL DEFAULT 0,
                created_at TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS requests (
                request_key TEXT PRIMARY KEY,
                asked INTEGER NOT NULL,
                first_asked_at TEXT NOT NULL
             );";

const SIMILARITY_SCHEMA: &str = "CREATE TABLE IF NOT EXISTS similarity_fingerprints (
    submission TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    config TEXT NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (submission, commit_sha, config)
);";

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// An SQLite error while the store at `path` is opened.
fn open_error(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + Copy + '_ {
    move |e| StoreError::new(path.display().to_string(), StoreCause::SqliteOpen(e))
}

/// The `synchronous` setting of the store, from `AUDITOR_BATCH_SYNC` ("normal", the default,
/// or "full").
fn sync_setting(path: &Path) -> Result<&'static str, StoreError> {
    match std::env::var("AUDITOR_BATCH_SYNC").ok().as_deref() {
        None | Some("") | Some("normal") => Ok("NORMAL"),
        Some("full") => Ok("FULL"),
        Some(other) => Err(StoreError::new(
            path.display().to_string(),
            StoreCause::Setting {
                name: "AUDITOR_BATCH_SYNC",
                value: other.to_string(),
                expected: "use \"normal\" (default) or \"full\"",
            },
        )),
    }
}

/// A damaged store must stop the batch before any row is touched: used anyway, it loses jobs
/// and answers (and a run would redo, or mis-record, finished work).
fn check_integrity(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let err = open_error(path);
    let check: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(err)?;
    if check != "ok" {
        return Err(StoreError::new(
            path.display().to_string(),
            StoreCause::Refused(format!(
                "the batch store is corrupt ({check}). Move {} away (the reports already written stay in place) and run the same command again to regrade",
                path.display()
            )),
        ));
    }
    Ok(())
}

/// Records the schema version in a new store; refuses a store of another version.
fn check_schema_version(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let err = open_error(path);
    let version: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(err)?;
    match version {
        None => {
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                params![SCHEMA_VERSION.to_string()],
            )
            .map_err(err)?;
        }
        Some(v) if v == SCHEMA_VERSION.to_string() => {}
        Some(v) => {
            return Err(StoreError::new(
                path.display().to_string(),
                StoreCause::Refused(format!(
                    "schema version {v} is not the version {SCHEMA_VERSION} this auditor writes; use another --out directory or the auditor version that wrote it"
                )),
            ));
        }
    }
    Ok(())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339()
}

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open_in(dir: &Path) -> Result<Store, StoreError> {
        Store::open(&dir.join(FILE_NAME))
    }

    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let err = open_error(path);
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        let sync = sync_setting(path)?;
        conn.pragma_update(None, "synchronous", sync).map_err(err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        check_integrity(&conn, path)?;
        conn.execute_batch(SCHEMA).map_err(err)?;
        // Added after schema version 1 shipped: additive, so the version stays.
        conn.execute_batch(SIMILARITY_SCHEMA).map_err(err)?;
        conn.execute_batch(crate::batch::review_schema::SQLITE)
            .map_err(err)?;
        check_schema_version(&conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn refused(&self, why: String) -> StoreError {
        StoreError::new(self.path.display().to_string(), StoreCause::Refused(why))
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::new(self.path.display().to_string(), StoreCause::Sqlite(e))
    }

    fn job_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
        let status: String = r.get("status")?;
        Ok(Job {
            id: r.get("id")?,
            key: JobKey {
                submission: r.get("submission")?,
                commit: r.get("commit_sha")?,
                rubric_sha256: r.get("rubric_sha256")?,
                judge_config: r.get("judge_config")?,
            },
            repo: r.get("repo")?,
            git_ref: r.get("git_ref")?,
            status: JobStatus::parse(&status),
            generation: r.get("generation")?,
            runs: r.get("runs")?,
            evidence: r.get("evidence_json")?,
            sidecar: r.get("sidecar_json")?,
            failure: r.get("failure")?,
            judge_failures: r.get("judge_failures")?,
        })
    }

    pub fn job(&self, id: i64) -> Result<Option<Job>, StoreError> {
        self.conn
            .query_row("SELECT * FROM jobs WHERE id = ?1", params![id], |r| {
                Self::job_from_row(r)
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    fn find(&self, key: &JobKey) -> Result<Option<Job>, StoreError> {
        self.conn
            .query_row(
                "SELECT * FROM jobs WHERE submission = ?1 AND commit_sha = ?2 AND rubric_sha256 = ?3 AND judge_config = ?4",
                params![key.submission, key.commit, key.rubric_sha256, key.judge_config],
                Self::job_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The most recently updated job of a submission under this rubric and judge configuration
    /// (for rows this run did not reach).
    pub fn latest_job(
        &self,
        submission: &str,
        rubric_sha256: &str,
        judge_config: &str,
    ) -> Result<Option<Job>, StoreError> {
        self.conn
            .query_row(
                "SELECT * FROM jobs WHERE submission = ?1 AND rubric_sha256 = ?2 AND judge_config = ?3 ORDER BY updated_at DESC, id DESC LIMIT 1",
                params![submission, rubric_sha256, judge_config],
                Self::job_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The most recently updated job of a submission that holds evidence, whatever its rubric
    /// and judge configuration.
    pub fn latest_with_evidence(&self, submission: &str) -> Result<Option<Job>, StoreError> {
        self.conn
            .query_row(
                "SELECT * FROM jobs WHERE submission = ?1 AND evidence_json IS NOT NULL ORDER BY updated_at DESC, id DESC LIMIT 1",
                params![submission],
                Self::job_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Finds or creates the job for `key` and decides what to do with it:
    /// - done and not regraded → [`Begin::Finished`];
    /// - done or failed and regraded → generation bumped, evidence, report and failure cleared;
    /// - failed, or done with judge failures → retried (evidence and cached answers kept, so
    ///   only what failed is asked again);
    /// - running (unfinished: a crash or Ctrl-C) → resumed, regrade or not.
    pub fn begin_job(
        &self,
        key: &JobKey,
        repo: &str,
        git_ref: Option<&str>,
        regrade: bool,
    ) -> Result<Begin, StoreError> {
        let ts = now();
        let Some(job) = self.find(key)? else {
            self.conn
                .execute(
                    "INSERT INTO jobs (submission, commit_sha, rubric_sha256, judge_config, repo, git_ref, status, generation, runs, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', 0, 1, ?7, ?7)",
                    params![key.submission, key.commit, key.rubric_sha256, key.judge_config, repo, git_ref, ts],
                )
                .map_err(|e| self.err(e))?;
            let id = self.conn.last_insert_rowid();
            return Ok(Begin::Work(self.job(id)?.ok_or_else(|| {
                self.refused("a job just inserted cannot be read back".into())
            })?));
        };
        let finished = matches!(job.status, JobStatus::Done | JobStatus::Failed);
        if job.status == JobStatus::Done && !regrade && job.judge_failures == 0 {
            return Ok(Begin::Finished(job));
        }
        if regrade && finished {
            self.conn
                .execute(
                    "UPDATE jobs SET status = 'running', generation = generation + 1, runs = runs + 1,
                        evidence_json = NULL, sidecar_json = NULL, overall_score = NULL, failure = NULL,
                        repo = ?2, git_ref = ?3, updated_at = ?4 WHERE id = ?1",
                    params![job.id, repo, git_ref, ts],
                )
                .map_err(|e| self.err(e))?;
        } else {
            self.conn
                .execute(
                    "UPDATE jobs SET status = 'running', runs = runs + 1, failure = NULL,
                        repo = ?2, git_ref = ?3, updated_at = ?4 WHERE id = ?1",
                    params![job.id, repo, git_ref, ts],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(Begin::Work(self.job(job.id)?.ok_or_else(|| {
            self.refused(format!("job {} disappeared", job.id))
        })?))
    }

    /// Persists the evidence collected by the detectives (right after the detective barrier).
    pub fn save_evidence(&self, job_id: i64, evidence_json: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE jobs SET evidence_json = ?2, updated_at = ?3 WHERE id = ?1",
                params![job_id, evidence_json, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn finish_job(
        &self,
        job_id: i64,
        sidecar_json: &str,
        overall: Option<f64>,
        judge_failures: u32,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE jobs SET status = 'done', sidecar_json = ?2, overall_score = ?3, judge_failures = ?4, failure = NULL, updated_at = ?5 WHERE id = ?1",
                params![job_id, sidecar_json, overall, judge_failures, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn fail_job(&self, job_id: i64, reason: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE jobs SET status = 'failed', failure = ?2, updated_at = ?3 WHERE id = ?1",
                params![job_id, reason, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Records one opinion of a job as it arrives.
    pub fn record_opinion(&self, o: &OpinionRecord) -> Result<(), StoreError> {
        let OpinionRecord {
            job_id,
            generation,
            persona,
            criterion_id,
            request_key,
            opinion_json,
            from_cache,
        } = *o;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO opinions (job_id, generation, persona, criterion_id, request_key, opinion_json, from_cache, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![job_id, generation, persona, criterion_id, request_key, opinion_json, from_cache, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Opinions recorded for a job's current generation.
    pub fn opinion_count(&self, job_id: i64) -> Result<u64, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM opinions o JOIN jobs j ON j.id = o.job_id WHERE o.job_id = ?1 AND o.generation = j.generation",
                params![job_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// Looks a response up; a hit is counted.
    pub fn cached_response(&self, key: &str) -> Result<Option<CachedResponse>, StoreError> {
        let found = self
            .conn
            .query_row(
                "SELECT opinion_json, input_tokens, output_tokens, attempts FROM responses WHERE request_key = ?1",
                params![key],
                |r| {
                    Ok(CachedResponse {
                        opinion_json: r.get(0)?,
                        input_tokens: r.get::<_, i64>(1)? as u64,
                        output_tokens: r.get::<_, i64>(2)? as u64,
                        attempts: r.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if found.is_some() {
            self.conn
                .execute(
                    "UPDATE responses SET hits = hits + 1 WHERE request_key = ?1",
                    params![key],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(found)
    }

    pub fn put_response(
        &self,
        key: &str,
        persona: &str,
        criterion_id: &str,
        model: Option<&str>,
        response: &CachedResponse,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO responses (request_key, persona, criterion_id, model, opinion_json, input_tokens, output_tokens, attempts, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT(request_key) DO UPDATE SET opinion_json = excluded.opinion_json,
                    input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
                    attempts = excluded.attempts, created_at = excluded.created_at",
                params![
                    key,
                    persona,
                    criterion_id,
                    model,
                    response.opinion_json,
                    response.input_tokens as i64,
                    response.output_tokens as i64,
                    response.attempts,
                    now()
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Counts one request actually sent to the judge service (before it is sent).
    pub fn note_request(&self, key: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO requests (request_key, asked, first_asked_at) VALUES (?1, 1, ?2)
                 ON CONFLICT(request_key) DO UPDATE SET asked = asked + 1",
                params![key, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .query_row(
                "SELECT data FROM similarity_fingerprints WHERE submission = ?1 AND commit_sha = ?2 AND config = ?3",
                params![submission, commit, config],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn save_fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
        data: &[u8],
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO similarity_fingerprints (submission, commit_sha, config, data, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![submission, commit, config, data, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn counters(&self) -> Result<Counters, StoreError> {
        self.conn
            .query_row(
                "SELECT
                    (SELECT COALESCE(SUM(asked), 0) FROM requests),
                    (SELECT COUNT(*) FROM requests),
                    (SELECT COUNT(*) FROM requests WHERE asked > 1),
                    (SELECT COALESCE(SUM(hits), 0) FROM responses),
                    (SELECT COUNT(*) FROM responses)",
                [],
                |r| {
                    Ok(Counters {
                        asked: r.get::<_, i64>(0)? as u64,
                        distinct_asked: r.get::<_, i64>(1)? as u64,
                        asked_more_than_once: r.get::<_, i64>(2)? as u64,
                        cache_hits: r.get::<_, i64>(3)? as u64,
                        responses: r.get::<_, i64>(4)? as u64,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}

impl BatchStore for Store {
    fn shown(&self) -> String {
        self.path().display().to_string()
    }
    fn job(&self, id: i64) -> Result<Option<Job>, StoreError> {
        Store::job(self, id)
    }
    fn latest_with_evidence(&self, submission: &str) -> Result<Option<Job>, StoreError> {
        Store::latest_with_evidence(self, submission)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, commit: &str) -> JobKey {
        JobKey {
            submission: id.into(),
            commit: commit.into(),
            rubric_sha256: "r".into(),
            judge_config: "offline".into(),
        }
    }

    fn work(b: Begin) -> Job {
        match b {
            Begin::Work(j) => j,
            other => panic!("expected work, got {other:?}"),
        }
    }

    #[test]
    fn job_lifecycle_resume_retry_and_regrade() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open_in(dir.path()).unwrap();
        let j = work(s.begin_job(&key("a", "c1"), "repo", None, false).unwrap());
        assert_eq!((j.status, j.generation, j.runs), (JobStatus::Running, 0, 1));
        s.save_evidence(j.id, "{\"e\":1}").unwrap();
        // unfinished (a crash): resumed with its evidence, regrade or not
        let r = work(s.begin_job(&key("a", "c1"), "repo", None, true).unwrap());
        assert_eq!((r.id, r.generation, r.runs), (j.id, 0, 2));
        assert_eq!(r.evidence.as_deref(), Some("{\"e\":1}"));
        // done with a judge failure: retried, same generation
        s.finish_job(j.id, "{}", Some(3.5), 1).unwrap();
        let r = work(s.begin_job(&key("a", "c1"), "repo", None, false).unwrap());
        assert_eq!((r.generation, r.runs), (0, 3));
        s.finish_job(j.id, "{}", Some(3.5), 0).unwrap();
        assert!(matches!(
            s.begin_job(&key("a", "c1"), "repo", None, false).unwrap(),
            Begin::Finished(_)
        ));
        // regrade of a finished job: new generation, evidence cleared
        let g = work(s.begin_job(&key("a", "c1"), "repo", None, true).unwrap());
        assert_eq!((g.id, g.generation, g.evidence.clone()), (j.id, 1, None));
        // failed: retried with what it had
        s.save_evidence(g.id, "ev").unwrap();
        s.fail_job(g.id, "boom").unwrap();
        let f = work(s.begin_job(&key("a", "c1"), "repo", None, false).unwrap());
        assert_eq!(
            (f.generation, f.evidence.as_deref(), f.failure),
            (1, Some("ev"), None)
        );
        // a new commit is a new job
        let n = work(s.begin_job(&key("a", "c2"), "repo", None, false).unwrap());
        assert_ne!(n.id, j.id);
        assert_eq!(
            s.latest_job("a", "r", "offline").unwrap().map(|j| j.id),
            Some(n.id)
        );
    }

    #[test]
    fn responses_requests_and_counters_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open_in(dir.path()).unwrap();
            assert_eq!(s.cached_response("k").unwrap(), None);
            s.note_request("k").unwrap();
            let resp = CachedResponse {
                opinion_json: "{}".into(),
                input_tokens: 10,
                output_tokens: 2,
                attempts: 1,
            };
            s.put_response("k", "Prosecutor", "c", Some("m"), &resp)
                .unwrap();
            assert_eq!(s.cached_response("k").unwrap(), Some(resp));
            s.note_request("k2").unwrap();
            s.note_request("k2").unwrap();
        }
        let s = Store::open_in(dir.path()).unwrap();
        assert_eq!(
            s.counters().unwrap(),
            Counters {
                asked: 3,
                distinct_asked: 2,
                asked_more_than_once: 1,
                cache_hits: 1,
                responses: 1
            }
        );
    }

    fn opinion<'a>(
        job_id: i64,
        persona: &'a str,
        request_key: &'a str,
        from_cache: bool,
    ) -> OpinionRecord<'a> {
        OpinionRecord {
            job_id,
            generation: 0,
            persona,
            criterion_id: "c",
            request_key,
            opinion_json: "{}",
            from_cache,
        }
    }

    #[test]
    fn fingerprints_are_stored_by_submission_commit_and_configuration() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open_in(dir.path()).unwrap();
            assert_eq!(s.fingerprints("a", "c1", "v1").unwrap(), None);
            s.save_fingerprints("a", "c1", "v1", b"one").unwrap();
            s.save_fingerprints("a", "c1", "v1", b"two").unwrap();
        }
        let s = Store::open_in(dir.path()).unwrap();
        assert_eq!(
            s.fingerprints("a", "c1", "v1").unwrap().as_deref(),
            Some(&b"two"[..])
        );
        assert_eq!(s.fingerprints("a", "c2", "v1").unwrap(), None);
        assert_eq!(s.fingerprints("a", "c1", "v2").unwrap(), None);
    }

    #[test]
    fn opinions_are_recorded_once_per_generation() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open_in(dir.path()).unwrap();
        let j = work(s.begin_job(&key("a", "c1"), "repo", None, false).unwrap());
        s.record_opinion(&opinion(j.id, "Prosecutor", "k", false))
            .unwrap();
        s.record_opinion(&opinion(j.id, "Prosecutor", "k", true))
            .unwrap();
        s.record_opinion(&opinion(j.id, "Defense", "k2", false))
            .unwrap();
        assert_eq!(s.opinion_count(j.id).unwrap(), 2);
    }
}
