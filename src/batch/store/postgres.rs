//! The PostgreSQL batch store: one database shared by any number of workers grading one cohort.
//!
//! - **Schema** in versioned migrations ([`MIGRATIONS`]), applied at start in one transaction
//!   under an advisory lock (two workers starting together are safe), recorded in
//!   `auditor_schema_version`. A database written by a newer auditor is refused.
//! - **Jobs** keyed as on SQLite (submission, commit, rubric sha256, judge configuration);
//!   created idempotently (`INSERT … ON CONFLICT DO NOTHING`) by whichever worker reaches the
//!   submission first, claimed with `SELECT … FOR UPDATE SKIP LOCKED` under a lease
//!   (`claimed_by`, `heartbeat_at`, `lease_expires_at`). A heartbeat on a connection of its own
//!   renews this worker's leases every third of the lease. A job whose lease expired (its worker
//!   died or stalled) is taken over by the next worker that asks, which resumes from the stored
//!   evidence and the cached answers. Writes of a job's outcome are guarded by the claim: a
//!   worker that lost its lease cannot overwrite the new holder's result.
//! - **Work finished before this worker started** (failed, judge failures, `--regrade`) is
//!   redone; work a peer finished during this worker's run stands (no double grading when every
//!   worker is started with the same `--regrade-all`).
//! - **Response cache** shared: the first answer stored for a request key stays
//!   (`ON CONFLICT DO NOTHING`), every worker reads it.
//! - **Similarity fingerprints** (`auditor_fingerprints`, migration 2) per submission, commit
//!   and fingerprint configuration, shared like the cache.
//!
//! The store's calls are synchronous, like the SQLite store's: they are sent to a thread that
//! owns the connections and a small tokio runtime, and the caller waits for the reply.
//!
//! **The database going away** (a restart, a failover, a network cut) is waited out: a call
//! whose connection broke reconnects with backoff and runs again (every statement is
//! idempotent, or guarded by the claim); meanwhile the caller waits, so the worker starts no
//! submission and sends no request it could not store. The heartbeat reconnects on its own, so
//! the leases are renewed as soon as the database is back (the data, the claims included,
//! survives a restart). Past `AUDITOR_STORE_RETRY_SECS` (default 120) of absence a call fails
//! with a store error; the submission is recorded as failed only where that is possible, nothing
//! finished is lost, and the same command resumes.

use super::{
    BatchStore, Begin, CachedResponse, Counters, Job, JobKey, JobStatus, OpinionRecord, StoreCause,
    StoreError,
};
use futures::future::BoxFuture;
use std::time::Duration;
use tokio_postgres::{Client, NoTls, Row};

/// Migrations in order; version N is `MIGRATIONS[N-1]`. Never edit one that shipped: append.
pub const MIGRATIONS: &[&str] = &[
    "CREATE TABLE auditor_jobs (
        id BIGSERIAL PRIMARY KEY,
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
        overall_score DOUBLE PRECISION,
        judge_failures INTEGER NOT NULL DEFAULT 0,
        failure TEXT,
        claimed_by TEXT,
        heartbeat_at TIMESTAMPTZ,
        lease_expires_at TIMESTAMPTZ,
        finished_at TIMESTAMPTZ,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (submission, commit_sha, rubric_sha256, judge_config)
     );
     CREATE INDEX auditor_jobs_claimed ON auditor_jobs (claimed_by) WHERE status = 'running';
     CREATE TABLE auditor_opinions (
        job_id BIGINT NOT NULL REFERENCES auditor_jobs(id) ON DELETE CASCADE,
        generation INTEGER NOT NULL,
        persona TEXT NOT NULL,
        criterion_id TEXT NOT NULL,
        request_key TEXT NOT NULL,
        opinion_json TEXT NOT NULL,
        from_cache BOOLEAN NOT NULL,
        worker TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (job_id, generation, persona, criterion_id)
     );
     CREATE TABLE auditor_responses (
        request_key TEXT PRIMARY KEY,
        persona TEXT NOT NULL,
        criterion_id TEXT NOT NULL,
        model TEXT,
        opinion_json TEXT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        attempts INTEGER NOT NULL,
        hits BIGINT NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
     );
     CREATE TABLE auditor_requests (
        request_key TEXT PRIMARY KEY,
        asked BIGINT NOT NULL,
        first_asked_at TIMESTAMPTZ NOT NULL DEFAULT now()
     );",
    // 2: cohort similarity fingerprints (see `super::similarity`).
    "CREATE TABLE IF NOT EXISTS auditor_fingerprints (
        submission TEXT NOT NULL,
        commit_sha TEXT NOT NULL,
        config TEXT NOT NULL,
        data BYTEA NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (submission, commit_sha, config)
     );",
    // 3: the course team's review history (append-only).
    crate::batch::review_schema::POSTGRES,
];

/// Key of the advisory lock that serialises migrations (any constant unique to this tool).
const MIGRATION_LOCK: i64 = 0x6175_6469_746f_7231; // "auditor1"

/// Settings of a PostgreSQL worker.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// How long a claim lasts without a heartbeat (`AUDITOR_BATCH_LEASE_SECS`, default 60).
    pub lease: Duration,
    /// This worker's name in `claimed_by` (`AUDITOR_WORKER_ID`, default host:pid:random).
    pub worker: String,
    /// How long a call waits for the database to come back (`AUDITOR_STORE_RETRY_SECS`,
    /// default 120).
    pub retry_for: Duration,
}

impl PgOptions {
    pub fn from_env() -> Result<PgOptions, StoreCause> {
        let lease = match std::env::var("AUDITOR_BATCH_LEASE_SECS").ok().as_deref() {
            None | Some("") => Duration::from_secs(60),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(s) if (0.5..=86_400.0).contains(&s) => Duration::from_secs_f64(s),
                _ => {
                    return Err(StoreCause::Setting {
                        name: "AUDITOR_BATCH_LEASE_SECS",
                        value: v.to_string(),
                        expected: "give seconds from 0.5 to 86400 (default 60)",
                    });
                }
            },
        };
        let worker = match std::env::var("AUDITOR_WORKER_ID").ok() {
            Some(w) if !w.trim().is_empty() => w.trim().to_string(),
            _ => default_worker_id(),
        };
        let retry_for = match std::env::var("AUDITOR_STORE_RETRY_SECS").ok().as_deref() {
            None | Some("") => Duration::from_secs(120),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(s) if (0.0..=86_400.0).contains(&s) => Duration::from_secs_f64(s),
                _ => {
                    return Err(StoreCause::Setting {
                        name: "AUDITOR_STORE_RETRY_SECS",
                        value: v.to_string(),
                        expected: "give seconds from 0 to 86400 (default 120)",
                    });
                }
            },
        };
        Ok(PgOptions {
            lease,
            worker,
            retry_for,
        })
    }
}

fn default_worker_id() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // truncates, and we stop at the first NUL.
    let host = if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "host".into()
    };
    format!(
        "{host}:{}:{:04x}",
        std::process::id(),
        rand::random::<u16>()
    )
}

type Cmd = Box<dyn for<'a> FnOnce(&'a mut Conn) -> BoxFuture<'a, ()> + Send>;
type PgResult<T> = Result<T, StoreCause>;

/// Why a statement failed: the connection is gone (run it again on a new one), or the
/// statement itself failed (final).
enum Fail {
    Gone(tokio_postgres::Error),
    Other(tokio_postgres::Error),
}

impl Fail {
    fn of(e: tokio_postgres::Error) -> Fail {
        if connection_lost(&e) {
            Fail::Gone(e)
        } else {
            Fail::Other(e)
        }
    }
}

/// PostgreSQL's refusal, while doing `doing` if said.
fn refusal(doing: Option<&'static str>, e: tokio_postgres::Error) -> StoreCause {
    StoreCause::Postgres {
        doing,
        detail: pg_detail(&e),
        source: e,
    }
}

/// Whether `e` means the connection is gone (closed, reset, the server shutting down or
/// starting up), not that the statement failed.
fn connection_lost(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03");
    }
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        if inner.is::<std::io::Error>() {
            return true;
        }
        src = inner.source();
    }
    false
}

/// The store thread's connection: reconnected, with backoff, when the database went away.
struct Conn {
    config: tokio_postgres::Config,
    client: Option<Client>,
    /// Since when the database has been unreachable (`None`: it is there).
    away_since: Option<std::time::Instant>,
    retry_for: Duration,
}

impl Conn {
    /// A live client: the current one, or a new connection, retried with backoff for as long
    /// as the database has been away less than `retry_for`.
    async fn take(&mut self) -> PgResult<Client> {
        if let Some(c) = self.client.take() {
            if !c.is_closed() {
                return Ok(c);
            }
            self.went_away("the connection closed");
        }
        let mut pause = Duration::from_millis(100);
        loop {
            let since = *self.away_since.get_or_insert_with(std::time::Instant::now);
            match open_client(&self.config, Duration::from_secs(5)).await {
                Ok(c) => {
                    if self.away_since.take().is_some() {
                        tracing::warn!(
                            after_secs = format!("{:.1}", since.elapsed().as_secs_f64()),
                            "reconnected to the PostgreSQL store: work goes on"
                        );
                    }
                    return Ok(c);
                }
                Err(e) => {
                    if since.elapsed() >= self.retry_for {
                        return Err(StoreCause::Unreachable {
                            waited_secs: since.elapsed().as_secs_f64(),
                            limit_secs: self.retry_for.as_secs_f64(),
                            source: Box::new(e),
                        });
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    fn went_away(&mut self, detail: &str) {
        if self.away_since.is_none() {
            self.away_since = Some(std::time::Instant::now());
            tracing::warn!(
                error = %detail,
                "the PostgreSQL store went away: reconnecting (waiting up to {:.0} s; no new work meanwhile)",
                self.retry_for.as_secs_f64()
            );
        }
    }

    /// Runs `f` on a live connection; once more on a new one each time the connection broke
    /// under it (within `retry_for`).
    async fn run<T>(
        &mut self,
        f: &(dyn Fn(Client) -> BoxFuture<'static, (Client, Result<T, Fail>)> + Send + Sync),
    ) -> PgResult<T> {
        loop {
            let client = self.take().await?;
            let (client, r) = f(client).await;
            match r {
                Ok(v) => {
                    self.client = Some(client);
                    return Ok(v);
                }
                Err(Fail::Other(e)) => {
                    self.client = Some(client);
                    return Err(refusal(None, e));
                }
                Err(Fail::Gone(e)) => {
                    drop(client);
                    self.went_away(&pg_detail(&e));
                }
            }
        }
    }
}

pub struct PgStore {
    tx: Option<tokio::sync::mpsc::UnboundedSender<Cmd>>,
    thread: Option<std::thread::JoinHandle<()>>,
    shown: String,
    worker: String,
    lease: Duration,
    /// The database's clock when this worker started (seconds since the epoch).
    started: f64,
    /// Whether this worker claimed any job (only then are claims released at the end: a
    /// `--status` run never touches a worker's claims).
    claimed: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("store", &self.shown)
            .field("worker", &self.worker)
            .finish()
    }
}

fn pg_detail(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(&format!(": {inner}"));
        src = inner.source();
    }
    if s.contains("TLS") || s.contains("tls") {
        s.push_str(" (this auditor connects without TLS: use sslmode=disable over a trusted network, a Unix socket, or an SSH tunnel)");
    }
    s
}

async fn open_client(config: &tokio_postgres::Config, timeout: Duration) -> PgResult<Client> {
    let mut cfg = config.clone();
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(timeout);
    }
    if cfg.get_application_name().is_none() {
        cfg.application_name("auditor batch");
    }
    let (client, conn) = cfg
        .connect(NoTls)
        .await
        .map_err(|e| refusal(Some("cannot connect"), e))?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %pg_detail(&e), "the PostgreSQL connection closed");
        }
    });
    Ok(client)
}

/// Applies the missing migrations in one transaction, under an advisory lock.
async fn migrate(c: &mut Client) -> PgResult<()> {
    let e = |e: tokio_postgres::Error| refusal(Some("migrating the schema"), e);
    let tx = c.transaction().await.map_err(e)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(e)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS auditor_schema_version (
            version INTEGER PRIMARY KEY,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await
    .map_err(e)?;
    let have: Option<i32> = tx
        .query_one("SELECT max(version) FROM auditor_schema_version", &[])
        .await
        .map_err(e)?
        .try_get(0)
        .map_err(e)?;
    let have = have.unwrap_or(0).max(0) as usize;
    if have > MIGRATIONS.len() {
        return Err(StoreCause::Refused(format!(
            "the database holds schema version {have}, newer than the version {} this auditor knows: use the auditor version that wrote it, or another database",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(have) {
        tx.batch_execute(sql).await.map_err(e)?;
        tx.execute(
            "INSERT INTO auditor_schema_version (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )
        .await
        .map_err(e)?;
    }
    tx.commit().await.map_err(e)
}

/// Renews this worker's leases every third of the lease, on a connection of its own, which it
/// opens again (once per beat) while the database is away.
async fn heartbeat(
    config: tokio_postgres::Config,
    client: Client,
    worker: String,
    lease: Duration,
) {
    let every = (lease / 3).max(Duration::from_millis(100));
    let secs = lease.as_secs_f64();
    let mut client = Some(client);
    loop {
        tokio::time::sleep(every).await;
        let c = match client.take().filter(|c| !c.is_closed()) {
            Some(c) => c,
            None => match open_client(&config, every.max(Duration::from_secs(1))).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!(error = %e, "the heartbeat cannot reach the database yet");
                    continue;
                }
            },
        };
        match c
            .execute(
                "UPDATE auditor_jobs SET heartbeat_at = now(), lease_expires_at = now() + make_interval(secs => $2)
                 WHERE claimed_by = $1 AND status = 'running'",
                &[&worker, &secs],
            )
            .await
        {
            Ok(_) => client = Some(c),
            Err(e) if connection_lost(&e) => {
                tracing::debug!(error = %pg_detail(&e), "the heartbeat lost its connection");
            }
            Err(e) => {
                tracing::warn!(error = %pg_detail(&e), "could not renew this worker's leases");
                client = Some(c);
            }
        }
    }
}

fn job_from_row(r: &Row) -> Result<Job, tokio_postgres::Error> {
    let status: String = r.try_get("status")?;
    Ok(Job {
        id: r.try_get("id")?,
        key: JobKey {
            submission: r.try_get("submission")?,
            commit: r.try_get("commit_sha")?,
            rubric_sha256: r.try_get("rubric_sha256")?,
            judge_config: r.try_get("judge_config")?,
        },
        repo: r.try_get("repo")?,
        git_ref: r.try_get("git_ref")?,
        status: JobStatus::parse(&status),
        generation: r.try_get::<_, i32>("generation")?.max(0) as u32,
        runs: r.try_get::<_, i32>("runs")?.max(0) as u32,
        evidence: r.try_get("evidence_json")?,
        sidecar: r.try_get("sidecar_json")?,
        failure: r.try_get("failure")?,
        judge_failures: r.try_get::<_, i32>("judge_failures")?.max(0) as u32,
    })
}

const JOB_COLS: &str = "id, submission, commit_sha, rubric_sha256, judge_config, repo, git_ref, status, generation, runs, evidence_json, sidecar_json, failure, judge_failures";

struct Claim<'a> {
    key: &'a JobKey,
    repo: &'a str,
    git_ref: Option<&'a str>,
    regrade: bool,
    worker: &'a str,
    lease: f64,
    started: f64,
}

async fn begin(c: &mut Client, a: Claim<'_>) -> Result<Begin, tokio_postgres::Error> {
    let tx = c.transaction().await?;
    tx.execute(
        "INSERT INTO auditor_jobs (submission, commit_sha, rubric_sha256, judge_config, repo, git_ref, status)
         VALUES ($1, $2, $3, $4, $5, $6, 'queued')
         ON CONFLICT (submission, commit_sha, rubric_sha256, judge_config) DO NOTHING",
        &[&a.key.submission, &a.key.commit, &a.key.rubric_sha256, &a.key.judge_config, &a.repo, &a.git_ref],
    )
    .await?;
    let row = tx
        .query_opt(
            &format!(
                "SELECT {JOB_COLS}, claimed_by,
                    (status = 'running' AND claimed_by IS DISTINCT FROM $5 AND lease_expires_at > now()) AS held,
                    (finished_at IS NOT NULL AND finished_at < to_timestamp($6)) AS before_me
                 FROM auditor_jobs
                 WHERE submission = $1 AND commit_sha = $2 AND rubric_sha256 = $3 AND judge_config = $4
                 FOR UPDATE SKIP LOCKED"
            ),
            &[&a.key.submission, &a.key.commit, &a.key.rubric_sha256, &a.key.judge_config, &a.worker, &a.started],
        )
        .await?;
    let Some(row) = row else {
        // Another worker is claiming it at this very moment.
        tx.commit().await?;
        return Ok(Begin::Busy {
            holder: "another worker".into(),
        });
    };
    let job = job_from_row(&row)?;
    let held: bool = row.try_get("held")?;
    let before_me: bool = row.try_get("before_me")?;
    if held {
        tx.commit().await?;
        let holder: Option<String> = row.try_get("claimed_by")?;
        return Ok(Begin::Busy {
            holder: holder.unwrap_or_else(|| "another worker".into()),
        });
    }
    let finished = matches!(job.status, JobStatus::Done | JobStatus::Failed);
    let redo =
        before_me && (a.regrade || job.status == JobStatus::Failed || job.judge_failures > 0);
    if finished && !redo {
        tx.commit().await?;
        return Ok(Begin::Finished(job));
    }
    let fresh = finished && a.regrade;
    let row = tx
        .query_one(
            &format!(
                "UPDATE auditor_jobs SET status = 'running', runs = runs + 1, failure = NULL,
                    generation = generation + CASE WHEN $2 THEN 1 ELSE 0 END,
                    evidence_json = CASE WHEN $2 THEN NULL ELSE evidence_json END,
                    sidecar_json = CASE WHEN $2 THEN NULL ELSE sidecar_json END,
                    overall_score = CASE WHEN $2 THEN NULL ELSE overall_score END,
                    repo = $3, git_ref = $4, claimed_by = $5, heartbeat_at = now(),
                    lease_expires_at = now() + make_interval(secs => $6), finished_at = NULL,
                    updated_at = now()
                 WHERE id = $1 RETURNING {JOB_COLS}"
            ),
            &[&job.id, &fresh, &a.repo, &a.git_ref, &a.worker, &a.lease],
        )
        .await?;
    let job = job_from_row(&row)?;
    tx.commit().await?;
    Ok(Begin::Work(job))
}

impl PgStore {
    /// Connects (two connections: one for the work, one for the heartbeat), applies the
    /// migrations and starts the heartbeat.
    pub fn connect(
        config: &tokio_postgres::Config,
        shown: &str,
        opts: PgOptions,
    ) -> Result<PgStore, StoreError> {
        let err = |cause: StoreCause| StoreError::new(shown, cause);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Cmd>();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<PgResult<f64>>(1);
        let (config, worker, lease, retry_for) = (
            config.clone(),
            opts.worker.clone(),
            opts.lease,
            opts.retry_for,
        );
        let thread = std::thread::Builder::new()
            .name("batch-postgres".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(StoreCause::System {
                            doing: "cannot start a runtime",
                            source: e,
                        }));
                        return;
                    }
                };
                rt.block_on(async move {
                    let setup = async {
                        let mut client = open_client(&config, Duration::from_secs(15)).await?;
                        migrate(&mut client).await?;
                        let started: f64 = client
                            .query_one("SELECT extract(epoch FROM now())::float8", &[])
                            .await
                            .and_then(|r| r.try_get(0))
                            .map_err(|e| refusal(None, e))?;
                        let beat = open_client(&config, Duration::from_secs(15)).await?;
                        Ok::<_, StoreCause>((client, beat, started))
                    };
                    let (client, beat, started) = match setup.await {
                        Ok(v) => v,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(started));
                    let hb = tokio::spawn(heartbeat(config.clone(), beat, worker, lease));
                    let mut conn = Conn {
                        config,
                        client: Some(client),
                        away_since: None,
                        retry_for,
                    };
                    while let Some(cmd) = rx.recv().await {
                        cmd(&mut conn).await;
                    }
                    hb.abort();
                });
            })
            .map_err(|e| {
                err(StoreCause::System {
                    doing: "cannot start the store thread",
                    source: e,
                })
            })?;
        let started = match ready_rx.recv() {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(err(e));
            }
            Err(_) => {
                let _ = thread.join();
                return Err(err(StoreCause::Refused(
                    "the store thread stopped while connecting".into(),
                )));
            }
        };
        Ok(PgStore {
            tx: Some(tx),
            thread: Some(thread),
            shown: shown.to_string(),
            worker: opts.worker,
            lease: opts.lease,
            started,
            claimed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn worker(&self) -> &str {
        &self.worker
    }

    fn err(&self, cause: StoreCause) -> StoreError {
        StoreError::new(self.shown.clone(), cause)
    }

    /// Runs `f` on the store thread with the connection and waits for its result; `f` runs
    /// again on a new connection when the database went away under it (see the module docs).
    fn call<T: Send + 'static>(
        &self,
        f: impl Fn(Client) -> BoxFuture<'static, (Client, Result<T, Fail>)> + Send + Sync + 'static,
    ) -> Result<T, StoreError> {
        let (rtx, rrx) = std::sync::mpsc::sync_channel::<PgResult<T>>(1);
        let cmd: Cmd = Box::new(move |conn: &mut Conn| {
            Box::pin(async move {
                let r = conn.run(&f).await;
                let _ = rtx.send(r);
            })
        });
        let gone = || {
            self.err(StoreCause::Refused(
                "the PostgreSQL store thread stopped".into(),
            ))
        };
        self.tx
            .as_ref()
            .ok_or_else(gone)?
            .send(cmd)
            .map_err(|_| gone())?;
        rrx.recv().map_err(|_| gone())?.map_err(|c| self.err(c))
    }

    /// Executes one statement; returns the rows it touched.
    fn exec(
        &self,
        sql: &'static str,
        params: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>>,
    ) -> Result<u64, StoreError> {
        let params = std::sync::Arc::new(params);
        self.call(move |c| {
            let params = params.clone();
            Box::pin(async move {
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
                    .collect();
                let r = c.execute(sql, &refs).await.map_err(Fail::of);
                (c, r)
            })
        })
    }

    fn query_jobs(
        &self,
        sql: String,
        params: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>>,
    ) -> Result<Vec<Job>, StoreError> {
        let params = std::sync::Arc::new(params);
        let sql = std::sync::Arc::new(sql);
        self.call(move |c| {
            let (params, sql) = (params.clone(), sql.clone());
            Box::pin(async move {
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
                    .collect();
                let r = match c.query(sql.as_str(), &refs).await {
                    Ok(rows) => rows
                        .iter()
                        .map(job_from_row)
                        .collect::<Result<Vec<Job>, _>>()
                        .map_err(Fail::of),
                    Err(e) => Err(Fail::of(e)),
                };
                (c, r)
            })
        })
    }

    fn lost(&self, job_id: i64) -> StoreError {
        self.err(StoreCause::Refused(format!(
            "this worker no longer holds job {job_id}: its lease ({:.1}s without a heartbeat) expired and another worker took the job over; that worker's result stands",
            self.lease.as_secs_f64()
        )))
    }
}

impl Drop for PgStore {
    /// Hands the claims back (if [`BatchStore::release_claims`] was not called), then closes
    /// the connections.
    fn drop(&mut self) {
        self.release_claims();
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

type Params = Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>>;

impl BatchStore for PgStore {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    fn job(&self, id: i64) -> Result<Option<Job>, StoreError> {
        let params: Params = vec![Box::new(id)];
        Ok(self
            .query_jobs(
                format!("SELECT {JOB_COLS} FROM auditor_jobs WHERE id = $1"),
                params,
            )?
            .pop())
    }

    fn latest_job(
        &self,
        submission: &str,
        rubric_sha256: &str,
        judge_config: &str,
    ) -> Result<Option<Job>, StoreError> {
        let params: Params = vec![
            Box::new(submission.to_string()),
            Box::new(rubric_sha256.to_string()),
            Box::new(judge_config.to_string()),
        ];
        Ok(self
            .query_jobs(
                format!(
                    "SELECT {JOB_COLS} FROM auditor_jobs WHERE submission = $1 AND rubric_sha256 = $2 AND judge_config = $3
                     ORDER BY updated_at DESC, id DESC LIMIT 1"
                ),
                params,
            )?
            .pop())
    }

    fn latest_with_evidence(&self, submission: &str) -> Result<Option<Job>, StoreError> {
        let params: Params = vec![Box::new(submission.to_string())];
        Ok(self
            .query_jobs(
                format!(
                    "SELECT {JOB_COLS} FROM auditor_jobs WHERE submission = $1 AND evidence_json IS NOT NULL
                     ORDER BY updated_at DESC, id DESC LIMIT 1"
                ),
                params,
            )?
            .pop())
    }

    fn begin_job(
        &self,
        key: &JobKey,
        repo: &str,
        git_ref: Option<&str>,
        regrade: bool,
    ) -> Result<Begin, StoreError> {
        let (key, repo, git_ref) = (key.clone(), repo.to_string(), git_ref.map(String::from));
        let (worker, lease, started) =
            (self.worker.clone(), self.lease.as_secs_f64(), self.started);
        let begun = self.call(move |mut c| {
            let (key, repo, git_ref, worker) =
                (key.clone(), repo.clone(), git_ref.clone(), worker.clone());
            Box::pin(async move {
                let r = begin(
                    &mut c,
                    Claim {
                        key: &key,
                        repo: &repo,
                        git_ref: git_ref.as_deref(),
                        regrade,
                        worker: &worker,
                        lease,
                        started,
                    },
                )
                .await
                .map_err(Fail::of);
                (c, r)
            })
        })?;
        if matches!(begun, Begin::Work(_)) {
            self.claimed
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(begun)
    }

    fn save_evidence(&self, job_id: i64, evidence_json: &str) -> Result<(), StoreError> {
        let n = self.exec(
            "UPDATE auditor_jobs SET evidence_json = $2, updated_at = now()
             WHERE id = $1 AND claimed_by = $3 AND status = 'running'",
            vec![
                Box::new(job_id),
                Box::new(evidence_json.to_string()),
                Box::new(self.worker.clone()),
            ],
        )?;
        if n == 0 {
            return Err(self.lost(job_id));
        }
        Ok(())
    }

    fn finish_job(
        &self,
        job_id: i64,
        sidecar_json: &str,
        overall: Option<f64>,
        judge_failures: u32,
    ) -> Result<(), StoreError> {
        // The second clause: a finish sent again after the database went away, whose first
        // commit had gone through.
        let n = self.exec(
            "UPDATE auditor_jobs SET status = 'done', sidecar_json = $2, overall_score = $3, judge_failures = $4,
                failure = NULL, finished_at = now(), updated_at = now()
             WHERE id = $1 AND claimed_by = $5
               AND (status = 'running' OR (status = 'done' AND sidecar_json = $2))",
            vec![
                Box::new(job_id),
                Box::new(sidecar_json.to_string()),
                Box::new(overall),
                Box::new(judge_failures.min(i32::MAX as u32) as i32),
                Box::new(self.worker.clone()),
            ],
        )?;
        if n == 0 {
            return Err(self.lost(job_id));
        }
        Ok(())
    }

    fn fail_job(&self, job_id: i64, reason: &str) -> Result<(), StoreError> {
        let n = self.exec(
            "UPDATE auditor_jobs SET status = 'failed', failure = $2, finished_at = now(), updated_at = now()
             WHERE id = $1 AND claimed_by = $3
               AND (status = 'running' OR (status = 'failed' AND failure = $2))",
            vec![
                Box::new(job_id),
                Box::new(reason.to_string()),
                Box::new(self.worker.clone()),
            ],
        )?;
        if n == 0 {
            return Err(self.lost(job_id));
        }
        Ok(())
    }

    fn record_opinion(&self, o: &OpinionRecord) -> Result<(), StoreError> {
        let OpinionRecord {
            job_id,
            generation,
            persona,
            criterion_id,
            request_key,
            opinion_json,
            from_cache,
        } = *o;
        self.exec(
            "INSERT INTO auditor_opinions (job_id, generation, persona, criterion_id, request_key, opinion_json, from_cache, worker)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (job_id, generation, persona, criterion_id) DO UPDATE SET
                request_key = excluded.request_key, opinion_json = excluded.opinion_json,
                from_cache = excluded.from_cache, worker = excluded.worker, created_at = now()",
            vec![
                Box::new(job_id),
                Box::new(generation.min(i32::MAX as u32) as i32),
                Box::new(persona.to_string()),
                Box::new(criterion_id.to_string()),
                Box::new(request_key.to_string()),
                Box::new(opinion_json.to_string()),
                Box::new(from_cache),
                Box::new(self.worker.clone()),
            ],
        )
        .map(drop)
    }

    fn opinion_count(&self, job_id: i64) -> Result<u64, StoreError> {
        self.call(move |c| {
            Box::pin(async move {
                let r = c
                    .query_one(
                        "SELECT COUNT(*) FROM auditor_opinions o JOIN auditor_jobs j ON j.id = o.job_id
                         WHERE o.job_id = $1 AND o.generation = j.generation",
                        &[&job_id],
                    )
                    .await
                    .and_then(|r| r.try_get::<_, i64>(0))
                    .map(|n| n.max(0) as u64)
                    .map_err(Fail::of);
                (c, r)
            })
        })
    }

    fn cached_response(&self, key: &str) -> Result<Option<CachedResponse>, StoreError> {
        let key = key.to_string();
        self.call(move |c| {
            let key = key.clone();
            Box::pin(async move {
                let r = async {
                    let Some(row) = c
                        .query_opt(
                            "UPDATE auditor_responses SET hits = hits + 1 WHERE request_key = $1
                             RETURNING opinion_json, input_tokens, output_tokens, attempts",
                            &[&key],
                        )
                        .await?
                    else {
                        return Ok(None);
                    };
                    Ok(Some(CachedResponse {
                        opinion_json: row.try_get(0)?,
                        input_tokens: row.try_get::<_, i64>(1)?.max(0) as u64,
                        output_tokens: row.try_get::<_, i64>(2)?.max(0) as u64,
                        attempts: row.try_get::<_, i32>(3)?.max(0) as u32,
                    }))
                }
                .await
                .map_err(Fail::of);
                (c, r)
            })
        })
    }

    fn put_response(
        &self,
        key: &str,
        persona: &str,
        criterion_id: &str,
        model: Option<&str>,
        response: &CachedResponse,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO auditor_responses (request_key, persona, criterion_id, model, opinion_json, input_tokens, output_tokens, attempts)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (request_key) DO NOTHING",
            vec![
                Box::new(key.to_string()),
                Box::new(persona.to_string()),
                Box::new(criterion_id.to_string()),
                Box::new(model.map(String::from)),
                Box::new(response.opinion_json.clone()),
                Box::new(response.input_tokens.min(i64::MAX as u64) as i64),
                Box::new(response.output_tokens.min(i64::MAX as u64) as i64),
                Box::new(response.attempts.min(i32::MAX as u32) as i32),
            ],
        )
        .map(drop)
    }

    fn note_request(&self, key: &str) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO auditor_requests (request_key, asked) VALUES ($1, 1)
             ON CONFLICT (request_key) DO UPDATE SET asked = auditor_requests.asked + 1",
            vec![Box::new(key.to_string())],
        )
        .map(drop)
    }

    fn counters(&self) -> Result<Counters, StoreError> {
        self.call(move |c| {
            Box::pin(async move {
                let r = async {
                    let row = c
                        .query_one(
                            "SELECT
                                (SELECT COALESCE(SUM(asked), 0)::bigint FROM auditor_requests),
                                (SELECT COUNT(*) FROM auditor_requests),
                                (SELECT COUNT(*) FROM auditor_requests WHERE asked > 1),
                                (SELECT COALESCE(SUM(hits), 0)::bigint FROM auditor_responses),
                                (SELECT COUNT(*) FROM auditor_responses)",
                            &[],
                        )
                        .await?;
                    let n = |i: usize| row.try_get::<_, i64>(i).map(|v| v.max(0) as u64);
                    Ok(Counters {
                        asked: n(0)?,
                        distinct_asked: n(1)?,
                        asked_more_than_once: n(2)?,
                        cache_hits: n(3)?,
                        responses: n(4)?,
                    })
                }
                .await
                .map_err(Fail::of);
                (c, r)
            })
        })
    }

    fn fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (submission, commit, config) = (
            submission.to_string(),
            commit.to_string(),
            config.to_string(),
        );
        self.call(move |c| {
            let (submission, commit, config) = (submission.clone(), commit.clone(), config.clone());
            Box::pin(async move {
                let r = c
                    .query_opt(
                        "SELECT data FROM auditor_fingerprints WHERE submission = $1 AND commit_sha = $2 AND config = $3",
                        &[&submission, &commit, &config],
                    )
                    .await
                    .and_then(|row| row.map(|r| r.try_get::<_, Vec<u8>>(0)).transpose())
                    .map_err(Fail::of);
                (c, r)
            })
        })
    }

    fn save_fingerprints(
        &self,
        submission: &str,
        commit: &str,
        config: &str,
        data: &[u8],
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO auditor_fingerprints (submission, commit_sha, config, data) VALUES ($1, $2, $3, $4)
             ON CONFLICT (submission, commit_sha, config) DO UPDATE SET data = excluded.data, created_at = now()",
            vec![
                Box::new(submission.to_string()),
                Box::new(commit.to_string()),
                Box::new(config.to_string()),
                Box::new(data.to_vec()),
            ],
        )
        .map(drop)
    }

    fn leases(&self) -> Result<Vec<(String, String, f64)>, StoreError> {
        self.call(move |c| {
            Box::pin(async move {
                let r = async {
                    let rows = c
                        .query(
                            "SELECT submission, COALESCE(claimed_by, ''), extract(epoch FROM lease_expires_at - now())::float8
                             FROM auditor_jobs WHERE status = 'running' AND lease_expires_at > now()
                             ORDER BY submission",
                            &[],
                        )
                        .await?;
                    rows.iter()
                        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
                        .collect::<Result<Vec<_>, tokio_postgres::Error>>()
                }
                .await
                .map_err(Fail::of);
                (c, r)
            })
        })
    }

    /// Gives up this worker's unfinished claims at once (an interrupted run), so another
    /// worker need not wait for the leases to expire. Only a worker that claimed something
    /// touches claims: a `--status` run never does.
    fn release_claims(&self) {
        if !self
            .claimed
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        if let Err(e) = self.exec(
            "UPDATE auditor_jobs SET lease_expires_at = now() WHERE claimed_by = $1 AND status = 'running'",
            vec![Box::new(self.worker.clone())],
        ) {
            tracing::warn!(error = %e, "could not hand this worker's claims back");
        }
    }

    fn poll_interval(&self) -> Duration {
        (self.lease / 4).clamp(Duration::from_millis(100), Duration::from_secs(2))
    }
}
