//! Shared by the telemetry tests: a local OTLP/HTTP receiver (wiremock), decoding of the
//! protobuf bodies it received, and fixtures (a git repository, a small valid PDF).
#![allow(dead_code)]

pub mod genai;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use prost::Message;
use std::collections::BTreeMap;
use std::path::Path;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// An attribute value, simplified.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    Array(Vec<Attr>),
    Other,
}

impl Attr {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attr::Int(i) => Some(*i),
            _ => None,
        }
    }
}

fn attr(v: &Option<AnyValue>) -> Attr {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => Attr::Str(s.clone()),
        Some(Value::IntValue(i)) => Attr::Int(*i),
        Some(Value::DoubleValue(d)) => Attr::Double(*d),
        Some(Value::BoolValue(b)) => Attr::Bool(*b),
        Some(Value::ArrayValue(a)) => {
            Attr::Array(a.values.iter().map(|v| attr(&Some(v.clone()))).collect())
        }
        _ => Attr::Other,
    }
}

fn attrs(kvs: &[KeyValue]) -> BTreeMap<String, Attr> {
    kvs.iter()
        .map(|kv| (kv.key.clone(), attr(&kv.value)))
        .collect()
}

/// One exported span, flattened with its resource.
#[derive(Debug, Clone)]
pub struct FlatSpan {
    pub name: String,
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub parent_span_id: Vec<u8>,
    pub attrs: BTreeMap<String, Attr>,
    pub events: Vec<(String, BTreeMap<String, Attr>)>,
    pub resource: BTreeMap<String, Attr>,
    /// `status.code`: 0 unset, 1 ok, 2 error.
    pub status_code: i32,
    /// `SpanKind`: 1 internal, 3 client.
    pub kind: i32,
}

impl FlatSpan {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Attr::as_str)
    }
    pub fn int(&self, key: &str) -> Option<i64> {
        self.attrs.get(key).and_then(Attr::as_int)
    }
}

/// A wiremock server answering 200 to `POST /v1/traces`.
pub async fn otlp_receiver() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

/// Every span in every OTLP request the server received. Panics (test failure) on a body
/// that is not an OTLP protobuf trace export.
pub async fn received_spans(server: &MockServer) -> (Vec<FlatSpan>, Vec<wiremock::Request>) {
    let requests = server.received_requests().await.unwrap_or_default();
    let mut spans = Vec::new();
    for r in &requests {
        assert_eq!(r.url.path(), "/v1/traces");
        let ct = r
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert_eq!(ct, "application/x-protobuf", "OTLP http/protobuf");
        let export = ExportTraceServiceRequest::decode(r.body.as_slice())
            .expect("body is an OTLP ExportTraceServiceRequest");
        for rs in export.resource_spans {
            let resource = rs
                .resource
                .as_ref()
                .map(|r| attrs(&r.attributes))
                .unwrap_or_default();
            for ss in rs.scope_spans {
                for s in ss.spans {
                    spans.push(FlatSpan {
                        name: s.name.clone(),
                        trace_id: s.trace_id.clone(),
                        span_id: s.span_id.clone(),
                        parent_span_id: s.parent_span_id.clone(),
                        attrs: attrs(&s.attributes),
                        events: s
                            .events
                            .iter()
                            .map(|e| (e.name.clone(), attrs(&e.attributes)))
                            .collect(),
                        resource: resource.clone(),
                        status_code: s.status.as_ref().map(|st| st.code).unwrap_or(0),
                        kind: s.kind,
                    });
                }
            }
        }
    }
    (spans, requests)
}

/// A git repository with one Python file and one commit.
pub fn git_repo(dir: &Path) {
    let repo = git2::Repository::init(dir).expect("git init");
    std::fs::write(
        dir.join("main.py"),
        "from langgraph.graph import StateGraph\nprint('hi')\n",
    )
    .expect("write file");
    let mut index = repo.index().expect("index");
    index.add_path(Path::new("main.py")).expect("add");
    let tree = repo
        .find_tree(index.write_tree().expect("write tree"))
        .expect("tree");
    let sig = git2::Signature::now("t", "t@example.com").expect("signature");
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .expect("commit");
}

/// A one-page PDF with a line of text, built by the shared fixture builder (PDFium).
pub fn tiny_pdf(text: &str) -> Vec<u8> {
    auditor::testkit::pdf::build_pdf(&[auditor::testkit::pdf::PageSpec {
        lines: vec![text.to_string()],
        ..Default::default()
    }])
    .expect("fixture PDF")
}

/// A workspace with `repo/` (a git repository) and `report.pdf`.
pub fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(ws.path().join("repo")).expect("mkdir");
    git_repo(&ws.path().join("repo"));
    std::fs::write(
        ws.path().join("report.pdf"),
        tiny_pdf("Architecture report: StateGraph with parallel judges"),
    )
    .expect("write pdf");
    ws
}

/// The `auditor` binary, with a clean environment as far as telemetry and LLMs go.
pub fn auditor(cwd: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_auditor"));
    cmd.current_dir(cwd);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "RUST_LOG",
        "AUDITOR_TRACE_CONTENT",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The arguments of an offline audit of the workspace.
pub fn audit_args() -> Vec<&'static str> {
    vec![
        "--repo",
        "repo",
        "--pdf",
        "report.pdf",
        "--judges",
        "offline",
        "--output",
        "out/report.md",
    ]
}

/// Runs a blocking command off the async runtime (the wiremock server keeps serving).
pub async fn run(mut cmd: std::process::Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("run auditor"))
        .await
        .expect("join")
}

/// The run wrote a report (complete, or with flagged criteria while detectives are stubs).
pub fn assert_report_written(out: &std::process::Output, ws: &Path) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "exit {:?}\nstderr:\n{stderr}",
        out.status.code()
    );
    assert!(ws.join("out/report.md").is_file(), "stderr:\n{stderr}");
}
