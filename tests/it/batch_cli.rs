//! `auditor batch` as a user runs it: the real binary, fixture repositories built with git2,
//! offline judges slowed down by the hidden `--simulate-latency-ms` so a run can be killed in
//! the middle. The store's request counters prove nothing is asked twice.

use crate::batch_support;

use batch_support::*;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn batch_cmd(root: &Path, manifest: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_auditor"));
    c.current_dir(root)
        .arg("batch")
        .arg(manifest)
        .arg("--out")
        .arg(out)
        .args(["--judges", "offline", "--progress-every", "1"])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null());
    c
}

fn run(root: &Path, manifest: &Path, out: &Path, extra: &[&str]) -> Output {
    batch_cmd(root, manifest, out, extra)
        .output()
        .expect("run auditor batch")
}

const SLOW: [&str; 6] = [
    "--concurrency",
    "2",
    "--simulate-latency-ms",
    "150",
    "--simulate-max-in-flight",
    "6",
];

/// Waits until at least one job is done and some are not, then returns.
fn wait_mid_run(child: &mut Child, out: &Path, total: i64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "the batch never reached mid-run");
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the batch ended before it could be interrupted: {status}");
        }
        if let Some(v) = StoreView::open(out) {
            let done = v.jobs_with_status("done");
            if done >= 1 && done < total {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn clean_run_asked(root: &Path, manifest: &Path) -> (i64, Vec<Vec<String>>) {
    let clean = root.join("clean");
    let o = run(root, manifest, &clean, &["--concurrency", "4"]);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(3),
        "{}",
        stderr(&o)
    );
    let v = StoreView::open(&clean).unwrap();
    let (asked, distinct, twice) = v.asked();
    assert_eq!(asked, distinct, "a clean run asks every question once");
    assert_eq!(twice, 0);
    (asked, grades(&clean).1)
}

#[test]
fn resumes_after_sigkill_without_asking_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let n = 6;
    let (manifest, commits) = cohort(root, n);
    let (clean_asked, clean_rows) = clean_run_asked(root, &manifest);
    assert_eq!(clean_asked as usize, n * rubric_len() * 3);

    let out = root.join("out");
    let mut child = batch_cmd(root, &manifest, &out, &SLOW)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_mid_run(&mut child, &out, n as i64);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let keys = |v: &StoreView, sql: &str| -> std::collections::BTreeSet<String> {
        let mut st = v.0.prepare(sql).unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let (done_before, unanswered_at_kill) = {
        let v = StoreView::open(&out).unwrap();
        let done: Vec<i64> = {
            let mut st =
                v.0.prepare("SELECT id FROM jobs WHERE status = 'done'")
                    .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        };
        let in_flight = keys(
            &v,
            "SELECT request_key FROM requests WHERE request_key NOT IN (SELECT request_key FROM responses)",
        );
        assert!(v.count("SELECT COUNT(*) FROM responses") > 0);
        (done, in_flight)
    };
    assert!(!done_before.is_empty() && done_before.len() < n);
    // In flight at the kill: at most what the running submissions had handed to the judges.
    assert!(unanswered_at_kill.len() <= 2 * rubric_len() * 3);

    let o = run(root, &manifest, &out, &SLOW);
    // every row graded; the students' missing PDF is scored, not flagged
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = StoreView::open(&out).unwrap();
    assert_eq!(v.jobs_with_status("done"), n as i64);
    // Finished work was kept: the jobs done before the kill were not run again.
    for id in &done_before {
        let runs: i64 =
            v.0.query_row("SELECT runs FROM jobs WHERE id = ?1", [id], |r| r.get(0))
                .unwrap();
        assert_eq!(
            runs, 1,
            "job {id} was done before the kill and must not be re-run"
        );
    }
    // Nothing answered was asked again: only requests in flight at the kill (handed to the
    // judge service, unanswered) may have been asked twice.
    let (asked, distinct, _) = v.asked();
    assert_eq!(distinct, clean_asked, "the same questions as a clean run");
    let twice = keys(&v, "SELECT request_key FROM requests WHERE asked > 1");
    assert!(
        twice.is_subset(&unanswered_at_kill),
        "only requests in flight at the kill may be asked again"
    );
    assert!(
        asked <= clean_asked + unanswered_at_kill.len() as i64,
        "asked {asked}, a clean run asks {clean_asked}"
    );

    let (header, rows) = grades(&out);
    assert_eq!(rows.len(), n);
    assert_eq!(
        rows, clean_rows,
        "a resumed run grades exactly like a clean one"
    );
    let c_commit = col(&header, "commit");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[col(&header, "status")], "done");
        assert_eq!(r[c_commit], commits[i]);
        assert!(out.join(format!("s{i}/report.md")).is_file());
        assert!(out.join(format!("s{i}/report.json")).is_file());
    }
    assert!(out.join("index.html").is_file() && out.join("summary.md").is_file());

    // Run again: everything is finished, nothing is asked.
    let o = run(root, &manifest, &out, &SLOW);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(StoreView::open(&out).unwrap().asked().0, asked);
    // offline judges: the summary says no model was asked (the store above: nothing re-asked)
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing was sent to a model"));
}

#[test]
fn ctrl_c_finishes_what_is_in_flight_and_the_next_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let n = 6;
    let (manifest, _) = cohort(root, n);
    let out = root.join("out");
    let mut child = batch_cmd(root, &manifest, &out, &SLOW)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_mid_run(&mut child, &out, n as i64);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("Ctrl-C"), "{}", stderr(&o));

    let v = StoreView::open(&out).unwrap();
    assert_eq!(
        v.jobs_with_status("running"),
        0,
        "in-flight submissions were finished"
    );
    let done = v.jobs_with_status("done");
    assert!(done >= 1 && done < n as i64, "{done} done");
    let (header, rows) = grades(&out);
    assert_eq!(rows.len(), n, "grades.csv has every row, even interrupted");
    let st = col(&header, "status");
    assert_eq!(
        rows.iter().filter(|r| r[st] == "pending").count() as i64,
        n as i64 - done
    );
    drop(v);

    let o = run(root, &manifest, &out, &SLOW);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = StoreView::open(&out).unwrap();
    assert_eq!(v.jobs_with_status("done"), n as i64);
    let (asked, distinct, twice) = v.asked();
    assert_eq!(
        (asked, twice),
        (distinct, 0),
        "a graceful stop never asks twice"
    );
    assert_eq!(distinct as usize, n * rubric_len() * 3);
    let (_, rows) = grades(&out);
    assert!(rows.iter().all(|r| r[st] == "done"));
}

#[test]
fn bad_rows_and_failing_clones_are_reported_and_the_others_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for i in 0..2 {
        let d = root.join(format!("repos/s{i}"));
        std::fs::create_dir_all(&d).unwrap();
        student_repo(&d, &format!("s{i}"));
    }
    std::fs::create_dir_all(root.join("not-a-repo")).unwrap();
    let manifest = root.join("m.csv");
    std::fs::write(
        &manifest,
        "id,repo,pdf,ref\n\
         s0,repos/s0,,\n\
         ,repos/s1,,\n\
         s0,repos/s1,,\n\
         bad-url,htps://example.org/x.git,,\n\
         refused,http://127.0.0.1:9/nothing.git,,\n\
         notrepo,not-a-repo,,\n\
         s1,repos/s1,,\n",
    )
    .unwrap();
    let out = root.join("out");
    let o = run(root, &manifest, &out, &["--concurrency", "3"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("line 3: missing id"), "{err}");
    assert!(
        err.contains("line 4: duplicate id \"s0\" (first used on line 2)"),
        "{err}"
    );
    assert!(err.contains("line 5: malformed repository URL"), "{err}");

    let (header, rows) = grades(&out);
    assert_eq!(rows.len(), 7, "one row per manifest row");
    let (line, id, st, why) = (
        col(&header, "line"),
        col(&header, "id"),
        col(&header, "status"),
        col(&header, "failed_reason"),
    );
    let by_line: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r[line].as_str(),
                r[id].as_str(),
                r[st].as_str(),
                r[why].as_str(),
            )
        })
        .collect();
    assert_eq!(by_line[0].2, "done");
    assert_eq!(
        (by_line[1].0, by_line[1].1, by_line[1].2),
        ("3", "", "invalid")
    );
    assert_eq!(by_line[2].2, "invalid");
    assert_eq!(by_line[3].2, "invalid");
    for (i, expect) in [
        (4, "cannot reach the repository"),
        (5, "cannot open the repository"),
    ] {
        assert_eq!(by_line[i].2, "failed", "{:?}", by_line[i]);
        assert!(by_line[i].3.contains(expect), "{:?}", by_line[i]);
        let failed_md = out.join(by_line[i].1).join("failed.md");
        assert!(failed_md.is_file(), "{} missing", failed_md.display());
    }
    assert_eq!(by_line[6].2, "done");
    assert!(out.join("s1/report.md").is_file());
    let v = StoreView::open(&out).unwrap();
    assert_eq!(v.jobs_with_status("failed"), 2);
    let reason: String =
        v.0.query_row(
            "SELECT failure FROM jobs WHERE submission = 'refused'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(reason.contains("cannot reach the repository"), "{reason}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("href=\"s0/report.md\"") && html.contains("href=\"refused/failed.md\""));
}

#[test]
fn csv_scores_are_exactly_the_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (manifest, _) = cohort(root, 2);
    let out = root.join("out");
    let o = run(root, &manifest, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (header, rows) = grades(&out);
    let rubric = auditor::rubric::Rubric::load(None).unwrap().rubric;
    for r in &rows {
        let id = &r[col(&header, "id")];
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(id).join("report.json")).unwrap(),
        )
        .unwrap();
        let report = &json["report"];
        match report["overall_score"].as_f64() {
            Some(x) => {
                let written: f64 = r[col(&header, "overall_score")].parse().unwrap();
                assert_eq!(written.to_bits(), x.to_bits(), "overall of {id} rounded");
            }
            None => assert_eq!(r[col(&header, "overall_score")], ""),
        }
        for d in &rubric.dimensions {
            let c = report["criteria"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["dimension_id"] == d.id.as_str())
                .unwrap();
            let expect = c["final_score"]
                .as_u64()
                .map(|v| v.to_string())
                .unwrap_or_default();
            assert_eq!(r[col(&header, &d.id)], expect, "{id} {}", d.id);
        }
        // The students committed no PDF: the report criteria are scored on that absence (the
        // student's shortcoming), so nothing is degraded or left for review.
        assert_eq!(r[col(&header, "degraded")], "false");
        assert_eq!(r[col(&header, "needs_human_review")], "false");
    }
}

#[test]
fn a_second_batch_on_the_same_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (manifest, _) = cohort(root, 2);
    let out = root.join("out");
    let mut child = batch_cmd(root, &manifest, &out, &SLOW)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while StoreView::open(&out).is_none() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = run(root, &manifest, &out, &[]);
    let finished_first = child.try_wait().unwrap().is_some();
    child.kill().ok();
    child.wait().unwrap();
    if !finished_first {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("another `auditor batch` is running"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_the_next_run_resumes_the_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let n = 4;
    let (manifest, _) = cohort(root, n);
    let out = root.join("out");
    let slow = [
        "--concurrency",
        "2",
        "--simulate-latency-ms",
        "400",
        "--simulate-max-in-flight",
        "4",
    ];
    let mut child = batch_cmd(root, &manifest, &out, &slow)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_mid_run(&mut child, &out, n as i64);
    for _ in 0..2 {
        let ok = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("second Ctrl-C"), "{}", stderr(&o));
    let v = StoreView::open(&out).unwrap();
    assert!(
        v.jobs_with_status("running") >= 1,
        "stopped with work in flight"
    );
    let unanswered = v.count(
        "SELECT COUNT(*) FROM requests WHERE request_key NOT IN (SELECT request_key FROM responses)",
    );
    drop(v);
    let (header, rows) = grades(&out);
    assert_eq!(rows.len(), n);
    assert!(rows.iter().any(|r| r[col(&header, "status")] == "pending"));

    let o = run(root, &manifest, &out, &slow);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = StoreView::open(&out).unwrap();
    assert_eq!(v.jobs_with_status("done"), n as i64);
    let (asked, distinct, twice) = v.asked();
    assert_eq!(distinct as usize, n * rubric_len() * 3);
    assert!(twice <= unanswered && asked <= distinct + unanswered);
}

#[test]
fn an_unknown_ref_in_the_manifest_is_bad_input_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let d = root.join("repos/s0");
    std::fs::create_dir_all(&d).unwrap();
    student_repo(&d, "s0");
    let manifest = root.join("m.csv");
    std::fs::write(
        &manifest,
        "id,repo,pdf,ref\ns0,repos/s0,,\nnoref,repos/s0,,no-such-branch\n",
    )
    .unwrap();
    let out = root.join("out");
    let o = run(root, &manifest, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("line 3") && err.contains("no-such-branch") && err.contains("refs that exist"),
        "{err}"
    );
    assert!(!out.join("grades.csv").exists(), "nothing ran");
}

/// What reaches a student carries no path of the grader's machine: a manifest in one folder
/// naming repositories in another (`../subs/NAME`) gives reports titled by the repository's
/// folder name, and no report file holds the absolute path.
#[test]
fn reports_hold_no_path_of_the_graders_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let repo = root.join("subs/alice");
    std::fs::create_dir_all(&repo).unwrap();
    student_repo(&repo, "alice");
    std::fs::create_dir_all(root.join("batch")).unwrap();
    let manifest = root.join("batch/m.csv");
    std::fs::write(&manifest, "id,repo,pdf\nalice,../subs/alice,\n").unwrap();
    let out = root.join("out");
    let o = run(root, &manifest, &out, &[]);
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "{}",
        stderr(&o)
    );
    let md = std::fs::read_to_string(out.join("alice/report.md")).unwrap();
    assert!(
        md.starts_with("# Audit report: alice\n"),
        "{}",
        md.lines().next().unwrap_or("")
    );
    let machine = root.display().to_string();
    for f in ["report.md", "report.html", "report.json"] {
        let text = std::fs::read_to_string(out.join("alice").join(f)).unwrap();
        assert!(
            !text.contains(&machine),
            "{f} holds the grader's path {machine}: {}",
            text.lines()
                .find(|l| l.contains(&machine))
                .unwrap_or_default()
        );
    }
}

/// `batch --status` (and `--outputs-only`) without the manifest: the one of the last batch
/// run with that --out; none yet is bad input that says what to give.
#[test]
fn status_without_the_manifest_uses_the_last_batchs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (manifest, _) = cohort(root, 2);
    let out = root.join("out");
    let o = run(root, &manifest, &out, &[]);
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "{}",
        stderr(&o)
    );
    let status = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_auditor"))
            .current_dir(root)
            .args(["batch", "--status", "--out"])
            .arg(dir)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .args(["--judges", "offline"])
            .output()
            .unwrap()
    };
    let s = status(&out);
    let text = String::from_utf8_lossy(&s.stdout);
    assert_eq!(s.status.code(), Some(0), "{text}{}", stderr(&s));
    assert!(text.contains("2 submissions: 2 done"), "{text}");
    let none = status(&root.join("never-used"));
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(
        stderr(&none).contains("give the manifest"),
        "{}",
        stderr(&none)
    );
}

/// Relative paths in a manifest are read from the manifest's folder: the help says so, and
/// so does the error of a path that is not there.
#[test]
fn relative_manifest_paths_are_said_to_be_read_from_the_manifests_folder() {
    let help = Command::new(env!("CARGO_BIN_EXE_auditor"))
        .args(["batch", "--help"])
        .output()
        .unwrap();
    let h = String::from_utf8_lossy(&help.stdout);
    assert!(h.contains("read from the manifest's folder"), "{h}");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (_, _) = cohort(root, 1);
    std::fs::create_dir_all(root.join("lists")).unwrap();
    let manifest = root.join("lists/m.csv");
    // written as if relative to the current directory (root), where the folders are
    std::fs::write(
        &manifest,
        "id,repo,pdf\ns0,repos/s0,\ns1,repos/s0,report.pdf\n",
    )
    .unwrap();
    std::fs::write(root.join("report.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    let o = run(root, &manifest, &root.join("out"), &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let (h, rows) = grades(&root.join("out"));
    let why = col(&h, "failed_reason");
    for r in &rows {
        assert!(
            r[why].contains("read from the manifest's folder"),
            "{r:?}\n{err}"
        );
    }
}

/// An offline batch of the sample submission says what its numbers and marks mean: no LLM
/// figure (nothing was sent), the overall's exact fraction whenever the overall is the mean,
/// means to two decimals, and no flag mark on a cell the row calls ok.
#[test]
fn an_offline_batch_says_what_its_numbers_and_marks_mean() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let s = Command::new(env!("CARGO_BIN_EXE_auditor"))
        .args(["sample", "--out"])
        .arg(root.join("sample"))
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", stderr(&s));
    let manifest = root.join("m.csv");
    std::fs::write(
        &manifest,
        "id,repo,pdf\nalice,sample/repo,sample/report.pdf\n",
    )
    .unwrap();
    let out = root.join("out");
    let o = run(root, &manifest, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains(" asked,"), "no LLM figure offline: {err}");
    let status = run(root, &manifest, &out, &["--status"]);
    let st = String::from_utf8_lossy(&status.stdout);
    assert!(!st.contains("requests sent"), "{st}");
    assert!(st.contains("nothing was sent to a model"), "{st}");

    let (h, rows) = grades(&out);
    let (overall, exact) = (col(&h, "overall_score"), col(&h, "overall_exact"));
    let o: f64 = rows[0][overall].parse().unwrap();
    let (num, den) = rows[0][exact]
        .split_once('/')
        .map(|(a, b)| (a.parse::<f64>().unwrap(), b.parse::<f64>().unwrap()))
        .unwrap_or_else(|| {
            (
                rows[0][exact].parse().expect("overall_exact is filled"),
                1.0,
            )
        });
    assert_eq!(((num / den) * 100.0).round() / 100.0, o, "{:?}", rows[0]);

    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let long = summary
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| w.split_once('.').is_some_and(|(_, d)| d.len() > 2));
    assert_eq!(
        long, None,
        "a number with more than two decimals: {summary}"
    );

    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let row = html
        .lines()
        .find(|l| l.contains("alice/report.html"))
        .unwrap_or_else(|| panic!("{html}"));
    assert!(row.contains("<span class=\"ok\">ok</span>"), "{row}");
    assert!(
        !row.contains('⚑'),
        "a flag mark in a row that says ok: {row}"
    );
}

/// Under an address-space limit below the children's default (a container, `ulimit -v`,
/// `prlimit --as`), the evidence children keep the limit the process has (a hard limit cannot
/// be raised): every row is graded.
#[test]
fn a_batch_under_an_address_space_limit_below_the_childrens_grades_every_row() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (manifest, _) = cohort(root, 2);
    let out = root.join("out");
    let mut cmd = batch_cmd(root, &manifest, &out, &[]);
    // 3 GiB, soft and hard, as `prlimit --as=3221225472` sets it
    let limit: libc::rlim_t = 3 << 30;
    // SAFETY: only setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let err = stderr(&o);
    assert!(matches!(o.status.code(), Some(0) | Some(3)), "{err}");
    let (h, rows) = grades(&out);
    let st = col(&h, "status");
    assert!(rows.iter().all(|r| r[st] == "done"), "{rows:?}\n{err}");
}

/// A child that fails with a message holding backticks (Rust's panic hint): the reason is
/// kept as plain text, so the dashboard and grades.csv show it without Markdown escapes.
#[test]
fn a_failure_reason_reaches_the_dashboard_without_markdown_escapes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (manifest, _) = cohort(root, 2);
    let out = root.join("out");
    let o = batch_cmd(root, &manifest, &out, &[])
        .env("AUDITOR_TEST_COLLECT_FAULT", "panic:s1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let (h, rows) = grades(&out);
    let why = &rows[1][col(&h, "failed_reason")];
    assert!(why.contains("injected fault"), "{why}");
    assert!(!why.contains("\\`"), "{why}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("injected fault"), "{html}");
    assert!(
        !html.contains("\\`"),
        "a Markdown escape in the HTML: {html}"
    );
}
