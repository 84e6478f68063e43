//! The GenAI helpers, used the way the LLM client uses them (real HTTP calls to a local
//! OpenAI-compatible server), export spans that follow the OpenTelemetry GenAI conventions to
//! a local OTLP receiver. Prompt text is not recorded without `AUDITOR_TRACE_CONTENT=1`.
//! (One test per file: the subscriber is global to the process.)

mod telemetry_support;

use telemetry_support::genai::{PROMPT_MARKER, scenario};
use telemetry_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_spans_carry_the_genai_attributes_and_no_content_by_default() {
    let (spans, bodies) = scenario(false).await;
    let judge = spans
        .iter()
        .find(|s| s.name == "judge")
        .expect("judge span");
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    assert_eq!(
        chats.len(),
        2,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );

    let ok = chats
        .iter()
        .find(|s| s.str("error.type").is_none())
        .expect("the successful call");
    assert_eq!(
        ok.parent_span_id, judge.span_id,
        "chat is a child of the judge span"
    );
    assert_eq!(ok.kind, 3, "SPAN_KIND_CLIENT");
    assert_eq!(ok.str("gen_ai.operation.name"), Some("chat"));
    assert_eq!(ok.str("gen_ai.provider.name"), Some("openai"));
    assert_eq!(ok.str("gen_ai.request.model"), Some("gpt-test"));
    assert_eq!(ok.str("gen_ai.response.model"), Some("gpt-test-2026-01-01"));
    assert_eq!(ok.str("gen_ai.response.id"), Some("chatcmpl-42"));
    assert_eq!(ok.int("gen_ai.usage.input_tokens"), Some(1200));
    assert_eq!(ok.int("gen_ai.usage.output_tokens"), Some(180));
    assert_eq!(ok.int("gen_ai.request.max_tokens"), Some(512));
    assert_eq!(
        ok.attrs.get("gen_ai.response.finish_reasons"),
        Some(&Attr::Array(vec![Attr::Str("stop".into())]))
    );
    assert_eq!(ok.str("server.address"), Some("127.0.0.1"));
    assert!(ok.int("server.port").is_some_and(|p| p > 0));
    assert_eq!(ok.str("persona"), Some("Prosecutor"));
    assert_eq!(ok.str("criterion"), Some("graph_orchestration"));
    assert_ne!(ok.status_code, 2);

    let failed = chats
        .iter()
        .find(|s| s.str("error.type").is_some())
        .expect("the failed call");
    assert_eq!(failed.str("error.type"), Some("http_429"));
    assert_eq!(failed.status_code, 2, "STATUS_CODE_ERROR");

    let (_, ev) = judge
        .events
        .iter()
        .find(|(n, _)| n == "gen_ai.evaluation.result")
        .expect("evaluation event");
    assert_eq!(
        ev.get("gen_ai.evaluation.name").and_then(Attr::as_str),
        Some("graph_orchestration")
    );
    assert_eq!(
        ev.get("gen_ai.evaluation.score.value"),
        Some(&Attr::Double(4.0))
    );
    assert_eq!(ev.get("persona").and_then(Attr::as_str), Some("Prosecutor"));

    for s in &chats {
        assert!(!s.attrs.contains_key("gen_ai.input.messages"));
        assert!(!s.attrs.contains_key("gen_ai.output.messages"));
    }
    for b in &bodies {
        assert!(!b.contains(PROMPT_MARKER), "prompt exported without opt-in");
        assert!(!b.contains("sk-SECRET"), "API key exported");
    }
}
