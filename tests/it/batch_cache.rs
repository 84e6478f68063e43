//! The batch store and response cache, in process, with a counting judge service wrapped
//! around the offline judges: cache hits, `--regrade`, new commits, and isolation between
//! submissions.

use crate::batch_support;

use auditor::batch::{BatchArgs, run_batch_with};
use auditor::flags::{JudgesArg, PanelArgs};
use auditor::judges::{JudgeFuture, JudgeRequest, JudgeService, OfflineJudges};
use auditor::model::{Judge, JudgeMode};
use batch_support::*;
use std::cell::Cell;
use std::path::Path;
use std::rc::Rc;

/// Offline judges that count every request they receive.
struct Counting {
    calls: Rc<Cell<usize>>,
}

impl JudgeService for Counting {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        self.calls.set(self.calls.get() + 1);
        OfflineJudges.judge(req)
    }
    fn model(&self, _: Judge) -> Option<String> {
        None
    }
    fn mode(&self) -> JudgeMode {
        JudgeMode::Offline
    }
}

fn args(manifest: &Path, out: &Path) -> BatchArgs {
    BatchArgs {
        manifest: Some(manifest.to_path_buf()),
        out: out.to_path_buf(),
        concurrency: 3,
        regrade: vec![],
        regrade_all: false,
        only: None,
        rejudge: false,
        rubric: None,
        panel: PanelArgs {
            judges: JudgesArg::Offline,
            ..PanelArgs::default()
        },
        store: None,
        store_file: None,
        status: false,
        outputs_only: false,
        no_similarity: false,
        similarity: Default::default(),
        progress_every: 10,
        no_progress: true,
        #[cfg(debug_assertions)]
        simulate_latency_ms: None,
        #[cfg(debug_assertions)]
        simulate_max_in_flight: 32,
    }
}

fn run(a: &BatchArgs, calls: &Rc<Cell<usize>>) -> auditor::batch::BatchSummary {
    run_batch_with(
        a,
        Rc::new(Counting {
            calls: calls.clone(),
        }),
        false,
    )
    .expect("batch runs")
}

#[test]
fn repeated_runs_and_regrades_ask_only_what_is_needed() {
    let tmp = tempfile::tempdir().unwrap();
    let (manifest, _) = cohort(tmp.path(), 3);
    let out = tmp.path().join("out");
    let per_sub = rubric_len() * 3;
    let calls = Rc::new(Cell::new(0));
    let a = args(&manifest, &out);

    let s = run(&a, &calls);
    assert_eq!(calls.get(), 3 * per_sub);
    assert_eq!(s.asked_this_run as usize, 3 * per_sub);
    assert!(
        s.rows
            .iter()
            .all(|r| r.status == auditor::batch::outputs::RowStatus::Done)
    );

    // The same command again: everything is finished, nothing is asked.
    let s = run(&a, &calls);
    assert_eq!(calls.get(), 3 * per_sub);
    assert_eq!(s.asked_this_run, 0);

    // --regrade s1: only s1 is asked again, with fresh answers.
    let mut r = a.clone();
    r.regrade = vec!["s1".into()];
    let s = run(&r, &calls);
    assert_eq!(calls.get(), 4 * per_sub);
    assert_eq!(s.cache_hits_this_run, 0);
    let v = StoreView::open(&out).unwrap();
    assert_eq!(
        v.count("SELECT generation FROM jobs WHERE submission = 's1'"),
        1
    );
    assert_eq!(
        v.count("SELECT SUM(generation) FROM jobs WHERE submission <> 's1'"),
        0
    );
    drop(v);

    // --regrade-all: everyone.
    let mut all = a.clone();
    all.regrade_all = true;
    run(&all, &calls);
    assert_eq!(calls.get(), 7 * per_sub);

    // An unfinished job (a crash after its judges answered) resumes from the cache alone.
    {
        let c = rusqlite::Connection::open(out.join("batch.sqlite")).unwrap();
        c.execute(
            "UPDATE jobs SET status = 'running', sidecar_json = NULL WHERE submission = 's2'",
            [],
        )
        .unwrap();
    }
    let before = calls.get();
    let s = run(&a, &calls);
    assert_eq!(calls.get(), before, "every answer came from the cache");
    assert_eq!(s.cache_hits_this_run as usize, per_sub);
    assert_eq!(s.rows.len(), 3);
}

#[test]
fn a_new_commit_is_a_new_job_and_identical_submissions_share_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (_, commits) = cohort(root, 2);
    // "twin" is the very same repository and commit as s0 (a copied submission).
    let manifest = root.join("m.jsonl");
    std::fs::write(
        &manifest,
        "{\"id\":\"s0\",\"repo\":\"repos/s0\"}\n{\"id\":\"twin\",\"repo\":\"repos/s0\"}\n{\"id\":\"s1\",\"repo\":\"repos/s1\"}\n",
    )
    .unwrap();
    let out = root.join("out");
    let per_sub = rubric_len() * 3;
    let calls = Rc::new(Cell::new(0));
    let mut a = args(&manifest, &out);
    a.concurrency = 1;
    let s = run(&a, &calls);
    assert_eq!(
        calls.get(),
        2 * per_sub,
        "the twin's questions were answered once"
    );
    assert_eq!(s.cache_hits_this_run as usize, per_sub);

    let head = new_commit(&root.join("repos/s1"));
    assert_ne!(head, commits[1]);
    let s = run(&a, &calls);
    // (With today's stub detectives the evidence does not depend on the commit, so the new
    // job's identical questions are answered from the cache: at most one more submission's.)
    assert!(calls.get() <= 3 * per_sub);
    let v = StoreView::open(&out).unwrap();
    assert_eq!(
        v.count("SELECT COUNT(*) FROM jobs WHERE submission = 's1'"),
        2
    );
    assert_eq!(
        v.count("SELECT COUNT(*) FROM jobs WHERE submission = 's1' AND status = 'done'"),
        2
    );
    assert_eq!(
        v.count("SELECT SUM(runs) FROM jobs WHERE submission IN ('s0', 'twin')"),
        2,
        "unchanged submissions are not graded again"
    );
    let row = s.rows.iter().find(|r| r.id == "s1").unwrap();
    assert_eq!(row.commit.as_deref(), Some(head.as_str()));
}

#[test]
fn submissions_do_not_leak_into_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let (manifest, commits) = cohort(tmp.path(), 4);
    let out = tmp.path().join("out");
    let calls = Rc::new(Cell::new(0));
    run(&args(&manifest, &out), &calls);
    for i in 0..4 {
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("s{i}/report.json"))).unwrap(),
        )
        .unwrap();
        let text = json.to_string();
        // a local repository is shown by its folder's name (no grader path in a report)
        assert_eq!(
            json["report"]["repo_url"],
            format!("s{i}"),
            "s{i} is about its own repo"
        );
        assert!(text.contains(&commits[i]), "s{i} is at its own commit");
        for j in (0..4).filter(|j| *j != i) {
            assert!(
                !text.contains(&commits[j]) && !text.contains(&format!("\"s{j}\"")),
                "s{i}'s report mentions s{j}"
            );
        }
        let opinions = json["report"]["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["judge_opinions"].as_array().map(Vec::len).unwrap_or(0))
            .sum::<usize>();
        assert_eq!(
            opinions,
            rubric_len() * 3,
            "s{i} has exactly its own opinions"
        );
    }
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (manifest, _) = cohort(tmp.path(), 1);
    let out = tmp.path().join("out");
    let calls = Rc::new(Cell::new(0));
    let mut a = args(&manifest, &out);
    a.regrade = vec!["nobody".into()];
    let e = run_batch_with(
        &a,
        Rc::new(Counting {
            calls: calls.clone(),
        }),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("--regrade nobody"), "{e}");
    let mut a = args(&manifest, &out);
    a.concurrency = 0;
    assert!(run_batch_with(&a, Rc::new(OfflineJudges), false).is_err());
    let bad = tmp.path().join("bad.csv");
    std::fs::write(&bad, "id,repository\nx,y\n").unwrap();
    let e = run_batch_with(&args(&bad, &out), Rc::new(OfflineJudges), false).unwrap_err();
    assert!(e.to_string().contains("unknown column"), "{e}");
    assert_eq!(calls.get(), 0);
    assert!(!out.join("batch.sqlite").exists(), "nothing ran");
}

/// Offline judges whose Prosecutor gives no valid answer while `broken` is set.
struct Flaky {
    calls: Rc<Cell<usize>>,
    broken: Rc<Cell<bool>>,
}

impl JudgeService for Flaky {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        self.calls.set(self.calls.get() + 1);
        if self.broken.get() && req.persona == Judge::Prosecutor {
            return Box::pin(futures::future::ready(Err(
                auditor::judges::JudgeFault::Invalid("no valid opinion".into()),
            )));
        }
        OfflineJudges.judge(req)
    }
    fn model(&self, _: Judge) -> Option<String> {
        None
    }
    fn mode(&self) -> JudgeMode {
        JudgeMode::Offline
    }
}

#[test]
fn judge_failures_are_asked_again_on_the_next_run_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let (manifest, _) = cohort(tmp.path(), 2);
    let out = tmp.path().join("out");
    let dims = rubric_len();
    let calls = Rc::new(Cell::new(0));
    let broken = Rc::new(Cell::new(true));
    let svc = || {
        Rc::new(Flaky {
            calls: calls.clone(),
            broken: broken.clone(),
        })
    };
    let a = args(&manifest, &out);
    let s = run_batch_with(&a, svc(), false).unwrap();
    assert_eq!(calls.get(), 2 * dims * 3);
    assert!(s.rows.iter().all(|r| r.degraded));
    broken.set(false);
    let s = run_batch_with(&a, svc(), false).unwrap();
    assert_eq!(
        calls.get(),
        2 * dims * 3 + 2 * dims,
        "only the failed Prosecutor requests"
    );
    assert_eq!(s.cache_hits_this_run as usize, 2 * dims * 2);
    let v = StoreView::open(&out).unwrap();
    assert_eq!(v.count("SELECT SUM(judge_failures) FROM jobs"), 0);
    // Now complete: a third run asks nothing.
    drop(v);
    run_batch_with(&a, svc(), false).unwrap();
    assert_eq!(calls.get(), 2 * dims * 3 + 2 * dims);
}
