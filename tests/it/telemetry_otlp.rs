//! The real binary, run on a real git repository with offline judges, exports its spans over
//! OTLP/HTTP to a local receiver when (and only when) `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
//! with the Chief Justice, barrier, detective and judge spans in one trace, and never leaks a
//! header value or an API key.

use crate::telemetry_support;

use std::collections::BTreeSet;
use telemetry_support::*;

const HEADER_SECRET: &str = "SECRET123";
const API_KEY: &str = "sk-SECRET";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audit_exports_its_graph_as_one_trace() {
    let server = otlp_receiver().await;
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args())
        .arg("-vvv")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", server.uri())
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("x-api-key={HEADER_SECRET}"),
        )
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        // An API key in the environment; offline judges never use it, but nothing may leak it.
        .env("OPENAI_API_KEY", API_KEY);
    // `--judges offline` with a key set: the key is present in the process.
    let out = run(cmd).await;
    assert_report_written(&out, ws.path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();

    let (spans, requests) = received_spans(&server).await;
    assert!(!requests.is_empty(), "no OTLP request received\n{stderr}");

    // The header is sent to the collector (that is how LangSmith authenticates) ...
    for r in &requests {
        assert_eq!(
            r.headers.get("x-api-key").and_then(|v| v.to_str().ok()),
            Some(HEADER_SECRET)
        );
    }
    // ... but neither it nor the API key appears in any exported body or on stderr.
    for r in &requests {
        let body = String::from_utf8_lossy(&r.body);
        assert!(!body.contains(HEADER_SECRET), "header value exported");
        assert!(!body.contains(API_KEY), "API key exported");
    }
    assert!(!stderr.contains(HEADER_SECRET), "header value on stderr");
    assert!(!stderr.contains(API_KEY), "API key on stderr");

    // Resource: default service name, version, OTEL_RESOURCE_ATTRIBUTES honoured.
    let first = &spans[0];
    assert_eq!(
        first.resource.get("service.name").and_then(Attr::as_str),
        Some("auditor")
    );
    assert_eq!(
        first
            .resource
            .get("deployment.environment")
            .and_then(Attr::as_str),
        Some("test")
    );
    assert!(first.resource.contains_key("service.version"));

    let names: BTreeSet<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "audit",
        "barrier detectives",
        "detective RepoInvestigator",
        "detective DocAnalyst",
        "detective VisionInspector",
        "chief_justice.deliberate",
        "chief_justice.compose",
    ] {
        assert!(names.contains(expected), "no {expected} span in {names:?}");
    }

    // One trace: every span of the run shares the audit's trace id (span context is carried
    // through the actor messages).
    let audit = spans
        .iter()
        .find(|s| s.name == "audit")
        .expect("audit span");
    assert_eq!(audit.str("submission"), Some("repo"));
    assert_eq!(audit.str("judge_mode"), Some("Offline"));
    assert!(
        audit.int("criteria_flagged").is_some(),
        "the audit span carries the outcome: {:?}",
        audit.attrs
    );
    for s in &spans {
        assert_eq!(
            s.trace_id, audit.trace_id,
            "span {} is not in the audit's trace",
            s.name
        );
    }

    // The detective barrier: 3 expected, 3 arrived; its detectives are its children.
    let det_barrier = spans
        .iter()
        .find(|s| s.name == "barrier detectives")
        .expect("detective barrier");
    assert_eq!(det_barrier.int("expected"), Some(3));
    assert_eq!(det_barrier.int("arrived"), Some(3));
    assert_eq!(det_barrier.int("timed_out"), Some(0));
    assert_eq!(det_barrier.parent_span_id, audit.span_id);
    for d in spans.iter().filter(|s| s.name.starts_with("detective ")) {
        assert_eq!(d.parent_span_id, det_barrier.span_id, "{}", d.name);
        assert!(d.str("outcome").is_some(), "{} has no outcome", d.name);
    }

    // One barrier per criterion, each with three judge spans carrying persona and criterion,
    // and each judge span with a gen_ai.evaluation.result event for its opinion.
    let criterion_barriers: Vec<_> = spans
        .iter()
        .filter(|s| s.str("barrier") == Some("criterion"))
        .collect();
    assert!(!criterion_barriers.is_empty(), "no criterion barrier span");
    for b in &criterion_barriers {
        let criterion = b.str("criterion").expect("criterion on barrier");
        assert_eq!(b.name, format!("barrier criterion {criterion}"));
        assert_eq!(b.int("expected"), Some(3));
        assert_eq!(b.int("arrived"), Some(3));
        let judges: Vec<_> = spans
            .iter()
            .filter(|s| s.str("criterion") == Some(criterion) && s.parent_span_id == b.span_id)
            .collect();
        let personas: BTreeSet<&str> = judges.iter().filter_map(|j| j.str("persona")).collect();
        assert_eq!(
            personas,
            BTreeSet::from(["Defense", "Prosecutor", "TechLead"]),
            "judges of {criterion}"
        );
        for j in judges {
            assert_eq!(j.str("submission"), Some("repo"));
            let (_, ev) = j
                .events
                .iter()
                .find(|(n, _)| n == "gen_ai.evaluation.result")
                .unwrap_or_else(|| panic!("no evaluation event on {}", j.name));
            assert_eq!(
                ev.get("gen_ai.evaluation.name").and_then(Attr::as_str),
                Some(criterion)
            );
            match ev.get("gen_ai.evaluation.score.value") {
                Some(Attr::Double(s)) => assert!((1.0..=5.0).contains(s), "score {s}"),
                other => panic!("score is {other:?}"),
            }
            assert!(ev.contains_key("gen_ai.evaluation.explanation"));
            assert_eq!(ev.get("persona").and_then(Attr::as_str), j.str("persona"));
        }
    }

    // The Chief Justice deliberates once per criterion.
    let deliberations = spans
        .iter()
        .filter(|s| s.name == "chief_justice.deliberate")
        .count();
    assert_eq!(deliberations, criterion_barriers.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_without_an_endpoint_or_when_disabled() {
    let server = otlp_receiver().await;
    let ws = workspace();

    // Every OTLP variable but the endpoint: no exporter at all.
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args())
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("x-api-key={HEADER_SECRET}"),
        )
        .env("OTEL_SERVICE_NAME", "auditor-test");
    let out = run(cmd).await;
    assert_report_written(&out, ws.path());

    // The endpoint pointing at the receiver, but the SDK disabled.
    std::fs::remove_dir_all(ws.path().join("out")).unwrap();
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", server.uri())
        .env("OTEL_SDK_DISABLED", "true");
    let out = run(cmd).await;
    assert_report_written(&out, ws.path());

    let requests = server.received_requests().await.unwrap_or_default();
    assert!(requests.is_empty(), "{} OTLP requests sent", requests.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_protocol_is_refused_before_anything_runs() {
    let server = otlp_receiver().await;
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args(audit_args())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", server.uri())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    let out = run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && stderr.contains("http/protobuf"),
        "{stderr}"
    );
    assert!(!ws.path().join("out").exists(), "nothing may run");
}
