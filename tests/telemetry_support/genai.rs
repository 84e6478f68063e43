//! A GenAI scenario run in-process: real HTTP calls to a local OpenAI-compatible server
//! through the helpers, a verdict, the spans exported to a local OTLP receiver.

use super::*;
use auditor::telemetry::genai::{self, ChatRequestInfo, ChatSpan, Evaluation};
use auditor::telemetry::{self, LogFormat, LogOptions, TelemetryConfig};
use tracing::Instrument;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const PROMPT_MARKER: &str = "PROMPT-MARKER-7f3a";

/// One chat call through the helpers, as the LLM client does it.
pub async fn chat_call(llm: &MockServer, model: &str, route: &str) {
    let base_url = format!("{}/v1", llm.uri());
    let chat = ChatSpan::start(&ChatRequestInfo {
        model,
        base_url: Some(&base_url),
        persona: Some("Prosecutor"),
        criterion: Some("graph_orchestration"),
        temperature: Some(0.0),
        max_tokens: Some(512),
        seed: None,
        attempt: 1,
    });
    let prompt = format!("Judge this. {PROMPT_MARKER} (key sk-SECRET pasted by mistake)");
    chat.record_input_messages(|| {
        serde_json::json!([{ "role": "user", "parts": [{ "type": "text", "content": prompt }] }])
            .to_string()
    });
    let response = reqwest::Client::new()
        .post(format!("{base_url}/{route}"))
        .bearer_auth("sk-SECRET")
        .json(&serde_json::json!({ "model": model, "messages": [{ "role": "user", "content": prompt }] }))
        .send()
        .instrument(chat.span().clone())
        .await
        .expect("request");
    if !response.status().is_success() {
        let status = response.status().as_u16();
        chat.record_error(
            &format!("http_{status}"),
            &format!("the provider answered {status} for key sk-SECRET"),
        );
        return;
    }
    let body: serde_json::Value = response.json().await.expect("json");
    let finish: Vec<&str> = body["choices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["finish_reason"].as_str())
        .collect();
    chat.record_response(
        body["model"].as_str().unwrap_or(model),
        body["id"].as_str(),
        &finish,
    );
    chat.record_usage(
        body["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        body["usage"]["completion_tokens"].as_u64().unwrap_or(0),
    );
    chat.record_output_messages(|| body["choices"][0]["message"].to_string());
}

pub async fn llm_server() -> MockServer {
    let llm = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-42",
            "object": "chat.completion",
            "model": "gpt-test-2026-01-01",
            "choices": [{ "index": 0, "finish_reason": "stop",
                          "message": { "role": "assistant", "content": "{\"score\": 4}" } }],
            "usage": { "prompt_tokens": 1200, "completion_tokens": 180, "total_tokens": 1380 }
        })))
        .mount(&llm)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/rate-limited"))
        .respond_with(ResponseTemplate::new(429))
        .mount(&llm)
        .await;
    llm
}

pub fn config(otlp: &str, content: bool) -> TelemetryConfig {
    let otlp = otlp.to_string();
    TelemetryConfig::from_lookup(
        LogOptions {
            verbose: 0,
            quiet: true,
            format: LogFormat::Text,
        },
        |k| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(otlp.clone()),
            "OPENAI_API_KEY" => Some("sk-SECRET".into()),
            "AUDITOR_TRACE_CONTENT" if content => Some("1".into()),
            _ => None,
        },
    )
    .expect("config")
}

/// Runs one successful call, one failed call and a verdict inside a judge span; returns the
/// exported spans and the raw bodies.
pub async fn scenario(content: bool) -> (Vec<FlatSpan>, Vec<String>) {
    let otlp = otlp_receiver().await;
    let llm = llm_server().await;
    let guard = telemetry::init(&config(&otlp.uri(), content)).expect("init");
    // Exported spans are those of the `auditor` crate (its targets), like the coordinator's.
    let judge = tracing::info_span!(
        target: "auditor::actors::coordinator",
        "judge",
        persona = "Prosecutor",
        criterion = "graph_orchestration"
    );
    async {
        chat_call(&llm, "gpt-test", "chat/completions").await;
        chat_call(&llm, "gpt-test", "rate-limited").await;
        genai::record_evaluation(&Evaluation {
            name: "graph_orchestration",
            score: 4.0,
            explanation: "fan-out and fan-in are both present",
            persona: "Prosecutor",
        });
    }
    .instrument(judge)
    .await;
    // Dropping the guard flushes (blocking HTTP): off the async threads.
    tokio::task::spawn_blocking(move || drop(guard))
        .await
        .expect("join");
    let (spans, requests) = received_spans(&otlp).await;
    let bodies = requests
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    (spans, bodies)
}
