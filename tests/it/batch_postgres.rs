//! `auditor batch --store postgres://…`: several workers (the real binary, as separate
//! processes) on one cohort, against a throwaway PostgreSQL server (tests/pg_support) and the
//! local OpenAI-compatible test server (tests/llm_support). Every submission graded once, a
//! worker SIGKILLed mid-run taken over, requests bounded, enqueue idempotent, passwords never
//! printed. Skipped, with a message, only when the PostgreSQL server binaries are absent.

use crate::batch_support::*;
use crate::llm_support;
use crate::pg_support::{PASSWORD, Pg};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How the judges answer in a test.
#[derive(Clone)]
enum Judges {
    /// Offline rules slowed down to `ms` per request (no LLM).
    Offline { ms: u64 },
    /// LLM judges at this base URL, at most `max` requests in flight per worker.
    Llm { base: String, max: usize },
}

fn batch(
    root: &Path,
    manifest: &Path,
    out: &Path,
    store: Option<&str>,
    worker: &str,
    judges: &Judges,
    extra: &[&str],
) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_auditor"));
    c.current_dir(root)
        .arg("batch")
        .arg(manifest)
        .arg("--out")
        .arg(out)
        .args(["--progress-every", "1", "--concurrency", "2"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AUDITOR_STORE")
        .env("AUDITOR_WORKER_ID", worker)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(s) = store {
        c.args(["--store", s]);
    }
    match judges {
        Judges::Offline { ms } => {
            c.args(["--judges", "offline"]);
            if *ms > 0 {
                c.args(["--simulate-latency-ms", &ms.to_string()]);
            }
        }
        Judges::Llm { base, max } => {
            c.args(["--judges", "llm"])
                .env("OPENAI_BASE_URL", base)
                .env("OPENAI_API_KEY", "sk-test")
                .env("AUDITOR_MODEL", llm_support::MODEL)
                .env("AUDITOR_VISION_MODEL", "off")
                .env("AUDITOR_LLM_WARMUP", "0")
                .env("AUDITOR_MAX_CONCURRENCY", max.to_string());
        }
    }
    c.args(extra);
    c
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn graded(o: &Output) {
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "the batch did not finish: {}",
        text(o)
    );
    assert!(!text(o).contains(PASSWORD), "the password was printed");
}

/// Waits for a child on the blocking pool (the test's runtime serves the LLM test server).
async fn wait(child: Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().expect("wait for auditor"))
        .await
        .unwrap()
}

/// Judge requests the LLM test server received.
async fn judge_requests(server: &wiremock::MockServer) -> usize {
    llm_support::bodies(server)
        .await
        .iter()
        .filter(|b| llm_support::persona_of(b).is_some())
        .count()
}

/// A clean run of the cohort on the SQLite default store with one worker: the judge requests
/// a cohort needs, and its grades (id → overall).
async fn clean_run(root: &Path, manifest: &Path) -> (usize, Vec<(String, String)>) {
    let server =
        llm_support::server(llm_support::Script::new(vec![llm_support::Step::Answer])).await;
    let judges = Judges::Llm {
        base: format!("{}/v1", server.uri()),
        max: 4,
    };
    let out = root.join("clean");
    let o = wait(
        batch(root, manifest, &out, None, "clean", &judges, &[])
            .spawn()
            .unwrap(),
    )
    .await;
    graded(&o);
    assert!(
        out.join("batch.sqlite").exists(),
        "the default store is SQLite"
    );
    (judge_requests(&server).await, overall(&out))
}

/// grades.csv as (id, overall_score), sorted by id.
fn overall(out: &Path) -> Vec<(String, String)> {
    let (h, rows) = grades(out);
    let (id, ov, st) = (col(&h, "id"), col(&h, "overall_score"), col(&h, "status"));
    let mut v: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            assert_eq!(r[st], "done", "{r:?}");
            (r[id].clone(), r[ov].clone())
        })
        .collect();
    v.sort();
    v
}

/// Polls `cond` every 20 ms for at most 120 s, failing if `child` ends first.
fn wait_until(child: &mut Child, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the worker ended ({status}) before {what}");
        }
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts worker-a on `db` with `judges` (`lease` seconds, or the default) and returns once it
/// holds a job whose evidence is stored: a worker caught mid-job.
fn worker_a_mid_job(
    pg: &Pg,
    db: &str,
    root: &Path,
    manifest: &Path,
    url: &str,
    judges: &Judges,
    lease: Option<&str>,
) -> Child {
    let mut cmd = batch(
        root,
        manifest,
        &root.join("a"),
        Some(url),
        "worker-a",
        judges,
        &[],
    );
    if let Some(secs) = lease {
        cmd.env("AUDITOR_BATCH_LEASE_SECS", secs);
    }
    let mut a = cmd.spawn().unwrap();
    wait_until(&mut a, "worker-a holds a job with evidence", || {
        pg.try_count(
            db,
            "SELECT count(*) FROM auditor_jobs WHERE claimed_by = 'worker-a' AND status = 'running' AND evidence_json IS NOT NULL",
        )
        .is_some_and(|n| n >= 1)
    });
    a
}

fn setup(n: usize) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let (manifest, _) = cohort(root.path(), n);
    (root, manifest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_grade_every_submission_exactly_once_with_the_answers_of_a_clean_run() {
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(6);
    let root = root.path();
    let (clean_asked, clean_grades) = clean_run(root, &manifest).await;
    assert!(clean_asked > 0);

    let server = llm_support::server(llm_support::Script::new(vec![
        llm_support::Step::AnswerAfter(Duration::from_millis(60)),
    ]))
    .await;
    let judges = Judges::Llm {
        base: format!("{}/v1", server.uri()),
        max: 4,
    };
    let url = pg.create_db("two");
    let (out_a, out_b) = (root.join("a"), root.join("b"));
    let a = batch(
        root,
        &manifest,
        &out_a,
        Some(&url),
        "worker-a",
        &judges,
        &[],
    )
    .spawn()
    .unwrap();
    let b = batch(
        root,
        &manifest,
        &out_b,
        Some(&url),
        "worker-b",
        &judges,
        &[],
    )
    .spawn()
    .unwrap();
    let (oa, ob) = (wait(a).await, wait(b).await);
    graded(&oa);
    graded(&ob);

    let q = |sql: &str| pg.count("two", sql);
    assert_eq!(q("SELECT count(*) FROM auditor_jobs"), 6, "one job per row");
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'"),
        6
    );
    assert_eq!(
        q("SELECT max(runs) FROM auditor_jobs"),
        1,
        "no submission was graded twice"
    );
    assert_eq!(
        q("SELECT count(DISTINCT claimed_by) FROM auditor_jobs"),
        2,
        "both workers graded part of the cohort"
    );
    assert_eq!(
        q("SELECT count(*) FROM auditor_schema_version"),
        auditor::batch::store::postgres::MIGRATIONS.len() as i64,
        "the migrations applied once though both workers started together"
    );
    // every judge question asked once across both workers, as in a clean run
    assert_eq!(judge_requests(&server).await, clean_asked);
    assert_eq!(
        q("SELECT count(*) FROM auditor_requests WHERE asked > 1"),
        0
    );
    assert_eq!(
        q("SELECT COALESCE(sum(asked), 0) FROM auditor_requests"),
        clean_asked as i64
    );
    // each worker writes the whole cohort's tables from the store, as the clean run grades it
    assert_eq!(overall(&out_a), clean_grades);
    assert_eq!(overall(&out_b), clean_grades);
    for i in 0..6 {
        assert!(out_a.join(format!("s{i}/report.md")).exists());
        assert!(out_b.join(format!("s{i}/report.json")).exists());
    }

    // --status: progress from the store, nothing graded, no password
    let st = batch(
        root,
        &manifest,
        &root.join("status"),
        Some(&url),
        "status",
        &judges,
        &["--status"],
    )
    .output()
    .unwrap();
    assert_eq!(st.status.code(), Some(0), "{}", text(&st));
    let so = String::from_utf8_lossy(&st.stdout);
    assert!(so.contains("6 submissions: 6 done, 0 failed"), "{so}");
    assert!(so.contains("postgres:***@127.0.0.1"), "{so}");
    assert!(!text(&st).contains(PASSWORD));
    // --outputs-only: the tables and every report from the store alone
    let third = root.join("third");
    let oo = batch(
        root,
        &manifest,
        &third,
        Some(&url),
        "outputs",
        &judges,
        &["--outputs-only"],
    )
    .output()
    .unwrap();
    graded(&oo);
    assert_eq!(overall(&third), clean_grades);
    assert!(third.join("s3/report.md").exists());
    assert!(third.join("index.html").exists() && third.join("summary.md").exists());
    assert_eq!(judge_requests(&server).await, clean_asked, "nothing asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_run_is_taken_over_and_nothing_is_asked_beyond_its_requests_in_flight()
{
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(6);
    let root = root.path();
    let (clean_asked, clean_grades) = clean_run(root, &manifest).await;

    let server = llm_support::server(llm_support::Script::new(vec![
        llm_support::Step::AnswerAfter(Duration::from_millis(150)),
    ]))
    .await;
    const IN_FLIGHT: usize = 4;
    let judges = Judges::Llm {
        base: format!("{}/v1", server.uri()),
        max: IN_FLIGHT,
    };
    let url = pg.create_db("killed");
    let q = |sql: &str| pg.count("killed", sql);
    let mut a = batch(
        root,
        &manifest,
        &root.join("a"),
        Some(&url),
        "worker-a",
        &judges,
        &[],
    )
    .env("AUDITOR_BATCH_LEASE_SECS", "2")
    .spawn()
    .unwrap();
    let b = batch(
        root,
        &manifest,
        &root.join("b"),
        Some(&url),
        "worker-b",
        &judges,
        &[],
    )
    .env("AUDITOR_BATCH_LEASE_SECS", "2")
    .spawn()
    .unwrap();
    // mid-job: worker-a holds a job with some of its opinions stored
    wait_until(&mut a, "worker-a is mid-job", || {
        pg.try_count(
            "killed",
            "SELECT count(*) FROM auditor_jobs j WHERE claimed_by = 'worker-a' AND status = 'running'
             AND EXISTS (SELECT 1 FROM auditor_opinions o WHERE o.job_id = j.id)",
        )
        .is_some_and(|n| n >= 1)
    });
    a.kill().expect("SIGKILL worker-a");
    let _ = a.wait();
    let held = pg.psql(
        "killed",
        "SELECT string_agg(id::text, ',') FROM auditor_jobs WHERE claimed_by = 'worker-a' AND status = 'running'",
    );
    assert!(!held.is_empty(), "worker-a held jobs at the kill");
    let ob = wait(b).await;
    graded(&ob);

    assert_eq!(q("SELECT count(*) FROM auditor_jobs"), 6);
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'"),
        6
    );
    assert_eq!(
        q(&format!(
            "SELECT count(*) FROM auditor_jobs WHERE id IN ({held}) AND claimed_by = 'worker-b' AND runs = 2"
        )),
        held.split(',').count() as i64,
        "every job worker-a held was taken over by worker-b, once"
    );
    assert_eq!(
        q(&format!(
            "SELECT max(runs) FROM auditor_jobs WHERE id NOT IN ({held})"
        )),
        1,
        "the others were graded once"
    );
    assert!(
        q(&format!(
            "SELECT count(*) FROM auditor_opinions WHERE job_id IN ({held}) AND worker = 'worker-b' AND from_cache"
        )) >= 1,
        "the takeover resumed from the answers worker-a had stored"
    );
    let asked = judge_requests(&server).await;
    assert!(
        asked <= clean_asked + IN_FLIGHT,
        "{asked} judge requests: more than a clean run ({clean_asked}) plus the {IN_FLIGHT} that could be in flight at the kill"
    );
    assert!(asked >= clean_asked);
    assert_eq!(overall(&root.join("b")), clean_grades);
}

#[test]
fn a_dead_workers_lease_expires_and_the_next_worker_takes_its_jobs_over() {
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(4);
    let root = root.path();
    let url = pg.create_db("lease");
    let q = |sql: &str| pg.count("lease", sql);
    let slow = Judges::Offline { ms: 150 };
    let mut a = worker_a_mid_job(&pg, "lease", root, &manifest, &url, &slow, Some("3"));
    a.kill().expect("SIGKILL worker-a");
    let _ = a.wait();
    let held = pg.psql(
        "lease",
        "SELECT string_agg(id::text, ',') FROM auditor_jobs WHERE claimed_by = 'worker-a' AND status = 'running'",
    );
    assert!(!held.is_empty());

    // --status sees the dead worker's claim until its lease runs out
    let st = batch(
        root,
        &manifest,
        &root.join("status"),
        Some(&url),
        "status",
        &slow,
        &["--status"],
    )
    .output()
    .unwrap();
    assert_eq!(st.status.code(), Some(3), "not finished: {}", text(&st));
    let so = String::from_utf8_lossy(&st.stdout);
    assert!(so.contains("(worker worker-a, lease"), "{so}");

    let b = batch(
        root,
        &manifest,
        &root.join("b"),
        Some(&url),
        "worker-b",
        &slow,
        &[],
    )
    .env("AUDITOR_BATCH_LEASE_SECS", "3")
    .output()
    .unwrap();
    graded(&b);
    let be = String::from_utf8_lossy(&b.stderr);
    assert!(
        be.contains("held by other workers: waiting"),
        "worker-b waited for the lease: {be}"
    );
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'"),
        4
    );
    assert_eq!(
        q(&format!(
            "SELECT count(*) FROM auditor_jobs WHERE id IN ({held}) AND claimed_by = 'worker-b' AND runs = 2"
        )),
        held.split(',').count() as i64
    );
    let (_, rows) = grades(&root.join("b"));
    assert_eq!(rows.len(), 4);

    // the same command again: enqueue is idempotent, nothing graded again
    let again = batch(
        root,
        &manifest,
        &root.join("b"),
        Some(&url),
        "worker-c",
        &slow,
        &[],
    )
    .output()
    .unwrap();
    graded(&again);
    assert_eq!(q("SELECT count(*) FROM auditor_jobs"), 4);
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE claimed_by = 'worker-c'"),
        0
    );
    assert_eq!(
        q("SELECT sum(runs) FROM auditor_jobs"),
        4 + held.split(',').count() as i64
    );
}

#[test]
fn workers_started_together_migrate_once_and_enqueue_each_job_once() {
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(5);
    let root = root.path();
    let url = pg.create_db("race");
    let fast = Judges::Offline { ms: 0 };
    // the third worker connects through the server's Unix socket
    let socket = format!(
        "postgres:///race?host={}&port={}&user=postgres",
        pg.dir().display(),
        pg.port
    );
    let children: Vec<Child> = (0..3)
        .map(|i| {
            batch(
                root,
                &manifest,
                &root.join(format!("w{i}")),
                Some(if i == 2 { &socket } else { &url }),
                &format!("w{i}"),
                &fast,
                &[],
            )
            .spawn()
            .unwrap()
        })
        .collect();
    for c in children {
        graded(&c.wait_with_output().unwrap());
    }
    let q = |sql: &str| pg.count("race", sql);
    assert_eq!(
        q("SELECT count(*) FROM auditor_schema_version"),
        auditor::batch::store::postgres::MIGRATIONS.len() as i64
    );
    assert_eq!(q("SELECT count(*) FROM auditor_jobs"), 5);
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'"),
        5
    );
    assert_eq!(q("SELECT max(runs) FROM auditor_jobs"), 1);
    assert_eq!(
        q("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'auditor batch'"),
        0,
        "every worker closed its connections"
    );
    for i in 0..3 {
        assert_eq!(grades(&root.join(format!("w{i}"))).1.len(), 5);
    }
}

#[test]
fn a_bad_or_unreachable_store_is_bad_input_and_its_password_is_never_shown() {
    let (root, manifest) = setup(1);
    let root = root.path();
    let fast = Judges::Offline { ms: 0 };
    let secret = "hunter2-Very-Secret";
    for (store, expect) in [
        (
            format!("mysql://grader:{secret}@db.example/cohort"),
            "must be \"sqlite\"",
        ),
        // port 1 on the loopback: nothing listens there
        (
            format!("postgres://grader:{secret}@127.0.0.1:1/cohort"),
            "cannot connect",
        ),
    ] {
        for via_env in [false, true] {
            let mut c = batch(root, &manifest, &root.join("out"), None, "w", &fast, &[]);
            if via_env {
                c.env("AUDITOR_STORE", &store);
            } else {
                c.args(["--store", &store]);
            }
            let o = c.output().unwrap();
            let t = text(&o);
            assert_eq!(o.status.code(), Some(2), "{t}");
            assert!(t.contains(expect), "{t}");
            assert!(!t.contains(secret), "the password was printed: {t}");
        }
    }
    // the help shows the variable, never its value
    let h = Command::new(env!("CARGO_BIN_EXE_auditor"))
        .args(["batch", "--help"])
        .env("AUDITOR_STORE", format!("postgres://u:{secret}@h/d"))
        .output()
        .unwrap();
    let t = text(&h);
    assert!(t.contains("AUDITOR_STORE"), "{t}");
    assert!(!t.contains(secret), "{t}");
}

#[test]
fn a_stalled_worker_loses_its_lease_and_its_late_result_is_refused() {
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(3);
    let root = root.path();
    let url = pg.create_db("stall");
    let q = |sql: &str| pg.count("stall", sql);
    let slow = Judges::Offline { ms: 100 };
    let a = worker_a_mid_job(&pg, "stall", root, &manifest, &url, &slow, Some("2"));
    // SIGSTOP: the worker and its heartbeat freeze, as on a machine that stalls
    // SAFETY: kill(2) with a pid this test spawned.
    assert_eq!(unsafe { libc::kill(a.id() as i32, libc::SIGSTOP) }, 0);
    let held = pg.psql(
        "stall",
        "SELECT string_agg(id::text, ',') FROM auditor_jobs WHERE claimed_by = 'worker-a' AND status = 'running'",
    );
    let b = batch(
        root,
        &manifest,
        &root.join("b"),
        Some(&url),
        "worker-b",
        &slow,
        &[],
    )
    .env("AUDITOR_BATCH_LEASE_SECS", "2")
    .output()
    .unwrap();
    graded(&b);
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'"),
        3
    );
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(a.id() as i32, libc::SIGCONT) }, 0);
    let oa = a.wait_with_output().unwrap();
    let ta = text(&oa);
    assert!(
        ta.contains("this worker no longer holds job"),
        "worker-a was told it lost the job: {ta}"
    );
    // worker-b's grade stands: the jobs stay done, claimed by worker-b, graded by it
    assert_eq!(
        q(&format!(
            "SELECT count(*) FROM auditor_jobs WHERE id IN ({held}) AND claimed_by = 'worker-b' AND status = 'done'"
        )),
        held.split(',').count() as i64
    );
    // and worker-a's tables show the cohort as the store has it: every row done
    let (h, rows) = grades(&root.join("a"));
    let st = col(&h, "status");
    assert!(rows.iter().all(|r| r[st] == "done"), "{rows:?}");
    assert_eq!(rows.len(), 3);
    for i in 0..3 {
        assert!(root.join(format!("a/s{i}/report.md")).exists());
    }
}

#[test]
fn status_and_outputs_only_read_the_sqlite_default_store_too() {
    let (root, manifest) = setup(2);
    let root = root.path();
    let out = root.join("out");
    let fast = Judges::Offline { ms: 0 };
    let status = || {
        batch(root, &manifest, &out, None, "w", &fast, &["--status"])
            .output()
            .unwrap()
    };
    let before = status();
    assert_eq!(before.status.code(), Some(3), "{}", text(&before));
    assert!(
        String::from_utf8_lossy(&before.stdout).contains("2 submissions: 0 done"),
        "{}",
        text(&before)
    );
    graded(
        &batch(root, &manifest, &out, None, "w", &fast, &[])
            .output()
            .unwrap(),
    );
    let after = status();
    assert_eq!(after.status.code(), Some(0), "{}", text(&after));
    assert!(String::from_utf8_lossy(&after.stdout).contains("2 submissions: 2 done"));
    // the tables and a lost report come back from the store alone
    std::fs::remove_file(out.join("grades.csv")).unwrap();
    std::fs::remove_file(out.join("s1/report.md")).unwrap();
    graded(
        &batch(root, &manifest, &out, None, "w", &fast, &["--outputs-only"])
            .output()
            .unwrap(),
    );
    assert_eq!(grades(&out).1.len(), 2);
    assert!(out.join("s1/report.md").exists());
}

#[test]
fn a_worker_stopped_with_ctrl_c_hands_its_claims_back_at_once() {
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(4);
    let root = root.path();
    let url = pg.create_db("sigint");
    let q = |sql: &str| pg.count("sigint", sql);
    let slow = Judges::Offline { ms: 300 };
    // the default lease (60 s): a takeover without the hand-back would wait for it
    let a = worker_a_mid_job(&pg, "sigint", root, &manifest, &url, &slow, None);
    // two Ctrl-C: stop now
    for _ in 0..2 {
        // SAFETY: kill(2) with a pid this test spawned.
        assert_eq!(unsafe { libc::kill(a.id() as i32, libc::SIGINT) }, 0);
        std::thread::sleep(Duration::from_millis(100));
    }
    let oa = a.wait_with_output().unwrap();
    assert_eq!(oa.status.code(), Some(130), "{}", text(&oa));
    let unfinished = q("SELECT count(*) FROM auditor_jobs WHERE status = 'running'");
    assert!(unfinished >= 1, "worker-a stopped mid-job");
    assert_eq!(
        q(
            "SELECT count(*) FROM auditor_jobs WHERE status = 'running' AND lease_expires_at > now()"
        ),
        0,
        "every claim of worker-a was handed back"
    );
    let b = batch(
        root,
        &manifest,
        &root.join("b"),
        Some(&url),
        "worker-b",
        &slow,
        &[],
    )
    .output()
    .unwrap();
    graded(&b);
    assert!(
        !String::from_utf8_lossy(&b.stderr).contains("held by other workers"),
        "{}",
        text(&b)
    );
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'"),
        4
    );
}

/// The database restarted twice mid-batch (`pg_ctl restart`: every connection ended): the
/// worker waits for it, reconnects, keeps its claims and finishes every submission once, with
/// the grades of a clean run and no judge request beyond a clean run's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_survives_two_database_restarts_and_pays_for_nothing_twice() {
    let Some(pg) = Pg::start() else { return };
    let (root, manifest) = setup(6);
    let root = root.path();
    let (clean_asked, clean_grades) = clean_run(root, &manifest).await;

    let server = llm_support::server(llm_support::Script::new(vec![
        llm_support::Step::AnswerAfter(Duration::from_millis(300)),
    ]))
    .await;
    let judges = Judges::Llm {
        base: format!("{}/v1", server.uri()),
        max: 4,
    };
    let url = pg.create_db("restarted");
    let q = |sql: &str| pg.try_count("restarted", sql);
    let mut a = batch(
        root,
        &manifest,
        &root.join("a"),
        Some(&url),
        "worker-a",
        &judges,
        &[],
    )
    .env("AUDITOR_BATCH_LEASE_SECS", "3")
    .spawn()
    .unwrap();
    let mid_job = "SELECT count(*) FROM auditor_jobs j WHERE status = 'running'
         AND EXISTS (SELECT 1 FROM auditor_opinions o WHERE o.job_id = j.id)";
    wait_until(&mut a, "worker-a is mid-job", || {
        q(mid_job).is_some_and(|n| n >= 1)
    });
    pg.restart();
    let done_then = loop {
        if let Some(n) = q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'") {
            break n;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        done_then < 6,
        "the batch ended before the first restart was over"
    );
    wait_until(
        &mut a,
        "worker-a is mid-job after the first restart",
        || {
            q("SELECT count(*) FROM auditor_jobs WHERE status = 'done'")
                .is_some_and(|n| n > done_then)
                && q(mid_job).is_some_and(|n| n >= 1)
        },
    );
    pg.restart();
    let o = wait(a).await;
    graded(&o);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("reconnected to the PostgreSQL store"),
        "the worker says it reconnected: {t}"
    );
    assert_eq!(
        q("SELECT count(*) FROM auditor_jobs WHERE status = 'done' AND runs = 1"),
        Some(6),
        "every submission graded once, by this worker, its claims kept: {t}"
    );
    assert_eq!(overall(&root.join("a")), clean_grades, "{t}");
    let asked = judge_requests(&server).await;
    assert_eq!(
        asked, clean_asked,
        "a batch whose database restarted twice asks what a clean run asks: {t}"
    );
}

/// libpq keywords are accepted; the password reaches a server that checks it from PGPASSWORD,
/// a password file or --store-file; one written on the command line works but is warned
/// about; none is ever printed.
#[test]
fn keyword_strings_and_passwords_kept_off_the_command_line_reach_the_server() {
    let Some(pg) = Pg::start_with_password() else {
        return;
    };
    pg.create_db("kv");
    let (root, manifest) = setup(1);
    let root = root.path();
    let fast = Judges::Offline { ms: 0 };
    let kv = format!("host=127.0.0.1 port={} user=postgres dbname=kv", pg.port);
    let run = |name: &str, store: &[&str], env: &[(&str, &str)]| {
        let mut c = batch(root, &manifest, &root.join(name), None, name, &fast, store);
        c.env_remove("PGPASSWORD")
            .env_remove("PGPASSFILE")
            .env("HOME", root);
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        let t = text(&o);
        assert!(!t.contains(PASSWORD), "the password was printed: {t}");
        (o.status.code(), t)
    };
    // no password anywhere: the server refuses, bad input, nothing printed of the string's secrets
    let (code, t) = run("none", &["--store", &kv], &[]);
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("password"), "{t}");
    assert!(t.contains("host=127.0.0.1"), "the store is named: {t}");
    // PGPASSWORD
    let (code, t) = run("env", &["--store", &kv], &[("PGPASSWORD", PASSWORD)]);
    assert_eq!(code, Some(0), "{t}");
    assert!(!t.contains("visible to every local user"), "{t}");
    // a password file (PGPASSFILE, mode 600)
    let passfile = root.join("pgpass");
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{}:kv:postgres:{PASSWORD}\n", pg.port),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let pf = passfile.display().to_string();
    let (code, t) = run("file", &["--store", &kv], &[("PGPASSFILE", &pf)]);
    assert_eq!(code, Some(0), "{t}");
    // --store-file holding a URL with the password
    let store_file = root.join("store.conf");
    std::fs::write(&store_file, format!("{}\n", pg.url("kv"))).unwrap();
    let sf = store_file.display().to_string();
    let (code, t) = run("storefile", &["--store-file", &sf], &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(!t.contains("visible to every local user"), "{t}");
    // on the command line: it works, and the worker says why not to do it
    let url = pg.url("kv");
    let (code, t) = run("inline", &["--store", &url], &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("visible to every local user"), "{t}");
    assert!(t.contains("PGPASSWORD"), "{t}");
    assert_eq!(
        pg.count(
            "kv",
            "SELECT count(*) FROM auditor_jobs WHERE status = 'done'"
        ),
        1
    );
}
