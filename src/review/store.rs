//! The review's view of the batch store: the latest job of each submission (read only) and the
//! append-only review history ([`crate::batch::review_schema`]), on SQLite (`DIR/batch.sqlite`)
//! or on the PostgreSQL store several workers share. Calls are synchronous, each its own
//! statement; the server calls them off its event loop.

use super::ledger::{Entry, Kind, NewEntry};
use crate::batch::store::spec::StoreSpec;
use crate::batch::store::{JobStatus, StoreCause, StoreError};
use rusqlite::{OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The latest job of a submission (under the batch's rubric and judges, when known).
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub id: i64,
    pub submission: String,
    pub status: JobStatus,
    pub generation: u32,
    pub sidecar: Option<String>,
    pub failure: Option<String>,
    pub updated_at: String,
    /// The judge configuration of the job's key (which judges graded it).
    pub judge_config: String,
}

/// Which jobs belong to the batch (`DIR/batch.json`); `None` fields match any job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobFilter {
    pub rubric_sha256: Option<String>,
    pub judge_config: Option<String>,
}

pub trait ReviewStore: Send + Sync {
    /// Where the store is, for messages (never a password).
    fn shown(&self) -> String;
    /// The latest job of every submission in the store.
    fn latest_jobs(&self, filter: &JobFilter) -> Result<Vec<JobRow>, StoreError>;
    /// The latest job of one submission.
    fn latest_job(
        &self,
        submission: &str,
        filter: &JobFilter,
    ) -> Result<Option<JobRow>, StoreError>;
    /// Appends an entry to the history; returns it as stored.
    fn append(&self, e: &NewEntry) -> Result<Entry, StoreError>;
    /// The history of one submission, or of all, oldest first.
    fn history(&self, submission: Option<&str>) -> Result<Vec<Entry>, StoreError>;
}

/// Opens the store of a batch output directory: `DIR/batch.sqlite`, or the PostgreSQL store.
pub fn open(dir: &Path, spec: &StoreSpec) -> Result<Box<dyn ReviewStore>, StoreError> {
    match spec {
        StoreSpec::Sqlite => Ok(Box::new(SqliteReview::open(dir)?)),
        StoreSpec::Postgres { config, shown, .. } => {
            Ok(Box::new(PgReview::connect(config, shown)?))
        }
    }
}

pub struct SqliteReview {
    conn: Mutex<rusqlite::Connection>,
    path: PathBuf,
}

impl SqliteReview {
    /// Opens `DIR/batch.sqlite` (which must exist: a directory `auditor batch` wrote), adding
    /// the review table to an older store.
    pub fn open(dir: &Path) -> Result<SqliteReview, StoreError> {
        let path = dir.join(crate::batch::store::sqlite::FILE_NAME);
        if !path.is_file() {
            return Err(StoreError::new(
                path.display().to_string(),
                StoreCause::Refused("no batch store here: give the output directory of an `auditor batch` run (--out DIR), or --store postgres://… for a shared store".to_string()),
            ));
        }
        // The batch store's own checks and schema (the review table included).
        drop(crate::batch::store::sqlite::Store::open(&path)?);
        let err =
            |e: rusqlite::Error| StoreError::new(path.display().to_string(), StoreCause::Sqlite(e));
        let conn = rusqlite::Connection::open(&path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(err)?;
        Ok(SqliteReview {
            conn: Mutex::new(conn),
            path,
        })
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::new(self.path.display().to_string(), StoreCause::Sqlite(e))
    }

    fn refused(&self, why: &str) -> StoreError {
        StoreError::new(
            self.path.display().to_string(),
            StoreCause::Refused(why.to_string()),
        )
    }

    fn conn(&self) -> Result<std::sync::MutexGuard<'_, rusqlite::Connection>, StoreError> {
        self.conn
            .lock()
            .map_err(|_| self.refused("the store connection was poisoned by a panic"))
    }

    fn jobs(&self, submission: Option<&str>, f: &JobFilter) -> Result<Vec<JobRow>, StoreError> {
        let c = self.conn()?;
        let mut st = c
            .prepare(
                "SELECT j.id, j.submission, j.status, j.generation, j.sidecar_json, j.failure, j.updated_at, j.judge_config
                 FROM jobs j WHERE (?3 IS NULL OR j.submission = ?3) AND j.id = (
                    SELECT k.id FROM jobs k WHERE k.submission = j.submission
                       AND (?1 IS NULL OR k.rubric_sha256 = ?1) AND (?2 IS NULL OR k.judge_config = ?2)
                    ORDER BY k.updated_at DESC, k.id DESC LIMIT 1)
                 ORDER BY j.submission",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![f.rubric_sha256, f.judge_config, submission], |r| {
                Ok(JobRow {
                    id: r.get(0)?,
                    submission: r.get(1)?,
                    status: JobStatus::parse(&r.get::<_, String>(2)?),
                    generation: r.get(3)?,
                    sidecar: r.get(4)?,
                    failure: r.get(5)?,
                    updated_at: r.get(6)?,
                    judge_config: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

fn entry_of_sqlite(r: &rusqlite::Row) -> rusqlite::Result<Entry> {
    let kind: String = r.get(2)?;
    Ok(Entry {
        id: r.get(0)?,
        submission: r.get(1)?,
        kind: Kind::parse(&kind).unwrap_or(Kind::Comment),
        criterion: r.get(3)?,
        score: r.get::<_, Option<i64>>(4)?.map(|s| s.clamp(0, 255) as u8),
        auto_score: r.get::<_, Option<i64>>(5)?.map(|s| s.clamp(0, 255) as u8),
        job_id: r.get(6)?,
        text: r.get(7)?,
        by: r.get(8)?,
        at: r.get(9)?,
    })
}

const ENTRY_COLS: &str =
    "id, submission, kind, criterion_id, score, auto_score, job_id, text, by_name, created_at";

impl ReviewStore for SqliteReview {
    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    fn latest_jobs(&self, filter: &JobFilter) -> Result<Vec<JobRow>, StoreError> {
        self.jobs(None, filter)
    }

    fn latest_job(
        &self,
        submission: &str,
        filter: &JobFilter,
    ) -> Result<Option<JobRow>, StoreError> {
        Ok(self.jobs(Some(submission), filter)?.pop())
    }

    fn append(&self, e: &NewEntry) -> Result<Entry, StoreError> {
        let c = self.conn()?;
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        c.execute(
            "INSERT INTO review_history (submission, kind, criterion_id, score, auto_score, job_id, text, by_name, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                e.submission,
                e.kind.as_str(),
                e.criterion,
                e.score,
                e.auto_score,
                e.job_id,
                e.text,
                e.by,
                at
            ],
        )
        .map_err(|x| self.err(x))?;
        let id = c.last_insert_rowid();
        c.query_row(
            &format!("SELECT {ENTRY_COLS} FROM review_history WHERE id = ?1"),
            params![id],
            entry_of_sqlite,
        )
        .optional()
        .map_err(|x| self.err(x))?
        .ok_or_else(|| self.refused("an entry just appended cannot be read back"))
    }

    fn history(&self, submission: Option<&str>) -> Result<Vec<Entry>, StoreError> {
        let c = self.conn()?;
        let mut st = c
            .prepare(&format!(
                "SELECT {ENTRY_COLS} FROM review_history WHERE (?1 IS NULL OR submission = ?1) ORDER BY id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![submission], entry_of_sqlite)
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

/// The PostgreSQL store: its own connection, on a small runtime of its own (the calls block
/// the calling thread, never an event loop: the server calls them on its blocking pool).
pub struct PgReview {
    rt: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
    shown: String,
}

fn pg_detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(&format!(": {inner}"));
                src = inner.source();
            }
            s
        }
    }
}

impl PgReview {
    /// Connects; the batch store's migrations (the review table among them) are applied first.
    pub fn connect(config: &tokio_postgres::Config, shown: &str) -> Result<PgReview, StoreError> {
        let err = |cause: StoreCause| StoreError::new(shown, cause);
        // Applies the migrations under the batch store's advisory lock, then closes.
        let opts = crate::batch::store::postgres::PgOptions::from_env().map_err(err)?;
        drop(crate::batch::store::postgres::PgStore::connect(
            config, shown, opts,
        )?);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("review-postgres")
            .enable_all()
            .build()
            .map_err(|e| {
                err(StoreCause::System {
                    doing: "cannot start a runtime",
                    source: e,
                })
            })?;
        let mut cfg = config.clone();
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(Duration::from_secs(15));
        }
        cfg.application_name("auditor serve");
        let client = rt.block_on(async {
            let (client, conn) = cfg
                .connect(tokio_postgres::NoTls)
                .await
                .map_err(|e| {
                    err(StoreCause::Postgres {
                        doing: Some("cannot connect"),
                        detail: pg_detail(&e),
                        source: e,
                    })
                })?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::warn!(error = %pg_detail(&e), "the review's PostgreSQL connection closed");
                }
            });
            Ok::<_, StoreError>(client)
        })?;
        Ok(PgReview {
            rt,
            client,
            shown: shown.to_string(),
        })
    }

    fn err(&self, e: tokio_postgres::Error) -> StoreError {
        StoreError::new(
            self.shown.clone(),
            StoreCause::Postgres {
                doing: None,
                detail: pg_detail(&e),
                source: e,
            },
        )
    }

    fn jobs(&self, submission: Option<&str>, f: &JobFilter) -> Result<Vec<JobRow>, StoreError> {
        let rows = self
            .rt
            .block_on(self.client.query(
                "SELECT DISTINCT ON (submission) id, submission, status, generation, sidecar_json, failure,
                    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), judge_config
                 FROM auditor_jobs
                 WHERE ($1::text IS NULL OR rubric_sha256 = $1) AND ($2::text IS NULL OR judge_config = $2)
                   AND ($3::text IS NULL OR submission = $3)
                 ORDER BY submission, updated_at DESC, id DESC",
                &[&f.rubric_sha256, &f.judge_config, &submission],
            ))
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                Ok(JobRow {
                    id: r.try_get(0)?,
                    submission: r.try_get(1)?,
                    status: JobStatus::parse(&r.try_get::<_, String>(2)?),
                    generation: r.try_get::<_, i32>(3)?.max(0) as u32,
                    sidecar: r.try_get(4)?,
                    failure: r.try_get(5)?,
                    updated_at: r.try_get(6)?,
                    judge_config: r.try_get(7)?,
                })
            })
            .collect::<Result<Vec<_>, tokio_postgres::Error>>()
            .map_err(|e| self.err(e))
    }
}

const PG_ENTRY_COLS: &str =
    "id, submission, kind, criterion_id, score, auto_score, job_id, text, by_name,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

fn entry_of_pg(r: &tokio_postgres::Row) -> Result<Entry, tokio_postgres::Error> {
    let kind: String = r.try_get(2)?;
    Ok(Entry {
        id: r.try_get(0)?,
        submission: r.try_get(1)?,
        kind: Kind::parse(&kind).unwrap_or(Kind::Comment),
        criterion: r.try_get(3)?,
        score: r
            .try_get::<_, Option<i32>>(4)?
            .map(|s| s.clamp(0, 255) as u8),
        auto_score: r
            .try_get::<_, Option<i32>>(5)?
            .map(|s| s.clamp(0, 255) as u8),
        job_id: r.try_get(6)?,
        text: r.try_get(7)?,
        by: r.try_get(8)?,
        at: r.try_get(9)?,
    })
}

impl ReviewStore for PgReview {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    fn latest_jobs(&self, filter: &JobFilter) -> Result<Vec<JobRow>, StoreError> {
        self.jobs(None, filter)
    }

    fn latest_job(
        &self,
        submission: &str,
        filter: &JobFilter,
    ) -> Result<Option<JobRow>, StoreError> {
        Ok(self.jobs(Some(submission), filter)?.pop())
    }

    fn append(&self, e: &NewEntry) -> Result<Entry, StoreError> {
        let score = e.score.map(i32::from);
        let auto = e.auto_score.map(i32::from);
        let row = self
            .rt
            .block_on(self.client.query_one(
                &format!(
                    "INSERT INTO auditor_review_history (submission, kind, criterion_id, score, auto_score, job_id, text, by_name)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {PG_ENTRY_COLS}"
                ),
                &[
                    &e.submission,
                    &e.kind.as_str(),
                    &e.criterion,
                    &score,
                    &auto,
                    &e.job_id,
                    &e.text,
                    &e.by,
                ],
            ))
            .map_err(|x| self.err(x))?;
        entry_of_pg(&row).map_err(|x| self.err(x))
    }

    fn history(&self, submission: Option<&str>) -> Result<Vec<Entry>, StoreError> {
        let rows = self
            .rt
            .block_on(self.client.query(
                &format!(
                    "SELECT {PG_ENTRY_COLS} FROM auditor_review_history WHERE ($1::text IS NULL OR submission = $1) ORDER BY id"
                ),
                &[&submission],
            ))
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(entry_of_pg)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::store::JobKey;
    use crate::batch::store::sqlite::Store;

    #[test]
    fn sqlite_history_is_append_only_and_jobs_are_the_latest() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            SqliteReview::open(dir.path()).is_err(),
            "no store: an error"
        );
        let s = Store::open_in(dir.path()).unwrap();
        let key = |c: &str| JobKey {
            submission: "s1".into(),
            commit: c.into(),
            rubric_sha256: "r".into(),
            judge_config: "j".into(),
        };
        s.begin_job(&key("c1"), "repo", None, false).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        s.begin_job(&key("c2"), "repo", None, false).unwrap();
        let r = SqliteReview::open(dir.path()).unwrap();
        let jobs = r.latest_jobs(&JobFilter::default()).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].id, 2);
        let other = JobFilter {
            rubric_sha256: Some("other".into()),
            judge_config: None,
        };
        assert!(r.latest_jobs(&other).unwrap().is_empty());
        let e = super::super::ledger::comment_entry("s1", "<b>hi</b>", "ta").unwrap();
        let a = r.append(&e).unwrap();
        let b = r.append(&e).unwrap();
        assert!(b.id > a.id);
        assert_eq!(r.history(Some("s1")).unwrap().len(), 2);
        assert_eq!(r.history(Some("s2")).unwrap().len(), 0);
        let c = r.conn().unwrap();
        for sql in [
            "UPDATE review_history SET score = 5",
            "DELETE FROM review_history",
        ] {
            let e = c.execute(sql, []).unwrap_err().to_string();
            assert!(e.contains("append-only"), "{sql}: {e}");
        }
    }
}
