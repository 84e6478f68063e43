//! An audit with LLM judges against a local OpenAI-compatible server, exporting to a local
//! OTLP receiver: every judge request is a `chat {model}` span carrying the GenAI attributes,
//! nested in its judge span, and the API key appears nowhere.

use crate::llm_support;
use crate::telemetry_support;

use telemetry_support::{auditor, otlp_receiver, received_spans, run, workspace};

const API_KEY: &str = "sk-SECRET-llm-audit-key";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_calls_are_exported_as_genai_chat_spans() {
    let llm = llm_support::server(llm_support::Script::new(vec![llm_support::Step::Answer])).await;
    let otlp = otlp_receiver().await;
    let ws = workspace();
    let mut cmd = auditor(ws.path());
    cmd.args([
        "--repo",
        "repo",
        "--pdf",
        "report.pdf",
        "--judges",
        "llm",
        "--output",
        "out/report.md",
    ])
    .env("OPENAI_BASE_URL", format!("{}/v1", llm.uri()))
    .env("OPENAI_API_KEY", API_KEY)
    .env("AUDITOR_MODEL", llm_support::MODEL)
    .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.uri());
    let out = run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(matches!(out.status.code(), Some(0) | Some(3)), "{stderr}");

    let (spans, requests) = received_spans(&otlp).await;
    let chats: Vec<_> = spans
        .iter()
        .filter(|s| s.name == format!("chat {}", llm_support::MODEL))
        .collect();
    let parent_name = |c: &&&telemetry_support::FlatSpan| {
        spans
            .iter()
            .find(|p| p.span_id == c.parent_span_id)
            .map(|p| p.name.clone())
            .unwrap_or_default()
    };
    let (judge_chats, other): (Vec<_>, Vec<_>) = chats
        .iter()
        .partition(|c| parent_name(c).starts_with("judge "));
    assert_eq!(judge_chats.len(), 30, "one chat span per judge request");
    // besides them, only the prompt-cache warm-up (the sample report has no diagram)
    assert_eq!(
        other.len(),
        1,
        "{:?}",
        other.iter().map(parent_name).collect::<Vec<_>>()
    );
    assert_eq!(parent_name(&other[0]), "prompt_cache_warm_up");
    for c in &judge_chats {
        assert_eq!(c.str("gen_ai.operation.name"), Some("chat"));
        assert_eq!(c.str("gen_ai.request.model"), Some(llm_support::MODEL));
        assert!(
            c.int("gen_ai.usage.input_tokens").is_some_and(|t| t > 0),
            "{c:?}"
        );
        assert!(c.int("gen_ai.usage.output_tokens").is_some());
        // nested in a judge span of the same trace
        let parent = spans
            .iter()
            .find(|p| p.span_id == c.parent_span_id)
            .expect("chat span has an exported parent");
        assert!(
            parent.name.starts_with("judge "),
            "parent is {}",
            parent.name
        );
    }
    assert!(spans.iter().any(|s| s.name == "chief_justice.compose"));
    for r in &requests {
        assert!(
            !String::from_utf8_lossy(&r.body).contains(API_KEY),
            "the API key leaked into an OTLP export"
        );
    }
    assert!(!stderr.contains(API_KEY));
}
