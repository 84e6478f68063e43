//! A submission is hostile input, and so is what a course team pastes on the command line.
//! Each test runs the real binary on something crafted by the test itself: credentials in
//! `--repo`, configuration planted in the audited tree, a `.git` file pointing elsewhere, ...

mod batch_support;
mod telemetry_support;

use std::path::Path;
use telemetry_support::*;

const USER: &str = "alice-bot";
const PASSWORD: &str = "PaSsW0rdXyZ";
const TOKEN: &str = "t0k3nQwErTy";

/// An https source with credentials in every place they are found in practice; the port is
/// closed, so the clone fails at once (no network).
fn secret_url() -> String {
    format!("https://{USER}:{PASSWORD}@127.0.0.1:9/owner/project.git?private_token={TOKEN}#{TOKEN}")
}

fn assert_no_secret(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in [PASSWORD, TOKEN, USER] {
        assert!(
            !text.contains(secret),
            "{what} contains the secret {secret:?}:\n{}",
            text.chars().take(4000).collect::<String>()
        );
    }
}

/// Every file under `dir` (names and contents).
fn assert_no_secret_in_tree(dir: &Path) {
    for entry in walk(dir) {
        assert_no_secret("a file name", entry.to_string_lossy().as_bytes());
        if entry.is_file() {
            let bytes = std::fs::read(&entry).unwrap();
            assert_no_secret(&entry.display().to_string(), &bytes);
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_repo_reach_no_output() {
    let server = otlp_receiver().await;
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args(["--repo", &secret_url()])
        .args(["--pdf", "report.pdf", "--judges", "offline"])
        // A directory: the report's file name is made from the source.
        .args(["--output", "out"])
        .args(["-vvv", "--log-format", "json"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", server.uri());
    let out = run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "stderr:\n{stderr}");
    let reports = walk(&ws.path().join("out"));
    assert_eq!(reports.len(), 2, "report.md and report.json: {reports:?}");
    let md = reports
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .expect("a .md report");
    let md_text = std::fs::read_to_string(md).unwrap();
    assert!(
        md_text.contains("https://127.0.0.1:9/owner/project.git"),
        "the report names the repository, redacted:\n{md_text}"
    );
    assert_no_secret_in_tree(&ws.path().join("out"));
    assert_no_secret("stdout", &out.stdout);
    assert_no_secret("stderr", &out.stderr);
    let (spans, requests) = received_spans(&server).await;
    assert!(!spans.is_empty(), "no spans exported\n{stderr}");
    for r in &requests {
        assert_no_secret("an OTLP export", &r.body);
    }
}

#[test]
fn credentials_in_a_manifest_reach_no_batch_output() {
    let root = tempfile::tempdir().unwrap();
    let good = root.path().join("repos/good");
    std::fs::create_dir_all(&good).unwrap();
    batch_support::student_repo(&good, "good");
    let manifest = root.path().join("cohort.csv");
    std::fs::write(
        &manifest,
        format!(
            "id,repo,pdf\ns1,repos/good,\ns2,{},\ns3,\"http://{USER}:{PASSWORD}@h/o/r\",\n",
            secret_url()
        ),
    )
    .unwrap();
    let out_dir = root.path().join("grades");
    let out = auditor(root.path())
        .arg("batch")
        .arg(&manifest)
        .arg("--out")
        .arg(&out_dir)
        .args(["--judges", "offline", "-vv", "--progress-every", "1"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let csv = std::fs::read_to_string(out_dir.join("grades.csv")).expect("grades.csv");
    assert!(
        csv.contains("https://127.0.0.1:9/owner/project.git"),
        "{csv}\n{stderr}"
    );
    assert_no_secret_in_tree(&out_dir);
    assert_no_secret("stdout", &out.stdout);
    assert_no_secret("stderr", &out.stderr);
}
