//! Logs on stderr: `--log-format json` prints only JSON objects, one per line, at every
//! verbosity and on errors; the exported spans do not depend on the stderr log level.

use crate::telemetry_support;

use telemetry_support::*;

fn json_lines(stderr: &str) -> Vec<serde_json::Value> {
    stderr
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("stderr line is not JSON ({e}): {line}"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line() {
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args()).args(["--log-format", "json", "-vv"]);
    let out = run(cmd).await;
    assert_report_written(&out, ws.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = json_lines(&stderr);
    assert!(
        lines.len() >= 3,
        "expected debug logs with -vv, got:\n{stderr}"
    );
    for l in &lines {
        assert!(l.get("level").and_then(|v| v.as_str()).is_some(), "{l}");
        assert!(l.get("timestamp").is_some(), "{l}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["message"] == "detective barrier released"),
        "{stderr}"
    );
    // The summary stays on stdout, as plain text.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Report:"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_errors_are_json_too() {
    let ws = workspace();
    // A bad telemetry setting and a bad input: both reported as JSON lines, exit 2.
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args())
        .args(["--log-format", "json"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = json_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["level"], "ERROR");
    let msg = lines[0]["fields"]["message"].as_str().unwrap_or("");
    assert!(msg.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{msg}");

    let mut cmd = auditor(ws.path());
    cmd.args(["--log-format", "json", "--judges", "llm"]).args([
        "--repo",
        "repo",
        "--pdf",
        "report.pdf",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = json_lines(&stderr);
    assert!(!lines.is_empty(), "an error must be reported");
}

/// `auditor batch` reports its errors like every command: with `--log-format json`, a bad
/// manifest row and the error that ends the run are JSON lines too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_errors_are_json_too() {
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args([
        "batch",
        "missing.csv",
        "--out",
        "out",
        "--log-format",
        "json",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = json_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["level"], "ERROR");
    let msg = lines[0]["fields"]["message"].as_str().unwrap_or("");
    assert!(
        msg.starts_with("error: ") && msg.contains("missing.csv"),
        "{msg}"
    );

    // One bad row (no repo), no valid one: the row's error, then the run's.
    std::fs::write(ws.path().join("m.csv"), "id,repo,pdf\ns1,,\n").expect("manifest");
    let mut cmd = auditor(ws.path());
    cmd.args(["--log-format", "json", "batch", "m.csv", "--out", "out"])
        .args(["--judges", "offline"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = json_lines(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    let row = lines[0]["fields"]["message"].as_str().unwrap_or("");
    assert!(row.contains("m.csv: line 2"), "{row}");
    let end = lines[1]["fields"]["message"].as_str().unwrap_or("");
    assert!(end.contains("no valid row"), "{end}");

    // Without --log-format json, the same errors are plain lines.
    let mut cmd = auditor(ws.path());
    cmd.args(["batch", "m.csv", "--out", "out", "--judges", "offline"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().all(|l| !l.starts_with('{')), "{stderr}");
    assert!(
        stderr.contains("error: manifest m.csv: no valid row"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_stderr_still_exports_every_span() {
    let server = otlp_receiver().await;
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args())
        .args(["--log-format", "json", "-q"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", server.uri());
    let out = run(cmd).await;
    assert_report_written(&out, ws.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for l in json_lines(&stderr) {
        assert_eq!(l["level"], "ERROR", "-q prints errors only: {l}");
    }
    let (spans, _) = received_spans(&server).await;
    assert!(spans.iter().any(|s| s.name == "audit"));
    assert!(spans.iter().any(|s| s.name == "chief_justice.compose"));
    assert!(
        spans
            .iter()
            .flat_map(|s| &s.events)
            .any(|(n, _)| n == "gen_ai.evaluation.result"),
        "judge verdicts are exported whatever the stderr level"
    );
}
