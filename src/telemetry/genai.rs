//! LLM spans and judge verdicts following the OpenTelemetry GenAI semantic conventions.
//!
//! One [`ChatSpan`] per request sent to a chat-completions endpoint (each retry is its own
//! span). The span is named `chat {model}` and carries
//!
//! | attribute | when |
//! |---|---|
//! | `gen_ai.operation.name` = `chat` | at start |
//! | `gen_ai.provider.name` (`openai`, `azure.ai.openai`, `ollama`, ... from the base URL) | at start |
//! | `gen_ai.request.model`, `gen_ai.request.temperature`, `gen_ai.request.max_tokens`, `gen_ai.request.seed` | at start |
//! | `server.address`, `server.port` | at start |
//! | `persona`, `criterion`, `auditor.attempt` | at start |
//! | `gen_ai.response.model`, `gen_ai.response.id`, `gen_ai.response.finish_reasons` (string array) | [`ChatSpan::record_response`] |
//! | `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` | [`ChatSpan::record_usage`] |
//! | `error.type`, span status `ERROR` | [`ChatSpan::record_error`] |
//! | `gen_ai.input.messages`, `gen_ai.output.messages` (JSON) | only with `AUDITOR_TRACE_CONTENT=1` |
//!
//! Judge verdicts are `gen_ai.evaluation.result` events ([`record_evaluation`]) with
//! `gen_ai.evaluation.name` (criterion id), `gen_ai.evaluation.score.value`,
//! `gen_ai.evaluation.explanation` (the judge's argument) and `persona`. The coordinator emits
//! one per opinion, inside its `judge` span: an LLM judge does not need to emit it again.
//!
//! Text put on a span goes through [`super::redact`], so a known API key can never leak
//! through a prompt or an error message.
//!
//! # Example (inside the LLM client)
//!
//! ```
//! use auditor::telemetry::genai::{ChatRequestInfo, ChatSpan};
//! use tracing::Instrument;
//!
//! # async fn send() -> Result<(u64, u64), std::io::Error> { Ok((1200, 180)) }
//! # async fn example() {
//! let chat = ChatSpan::start(&ChatRequestInfo {
//!     model: "gpt-4o-mini",
//!     base_url: Some("https://api.openai.com/v1"),
//!     persona: Some("Prosecutor"),
//!     criterion: Some("graph_orchestration"),
//!     temperature: Some(0.0),
//!     max_tokens: Some(1024),
//!     seed: None,
//!     attempt: 1,
//! });
//! // Prompt text is only evaluated and recorded with AUDITOR_TRACE_CONTENT=1.
//! chat.record_input_messages(|| r#"[{"role":"user","parts":[{"type":"text","content":"..."}]}]"#.to_string());
//! match send().instrument(chat.span().clone()).await {
//!     Ok((input, output)) => {
//!         chat.record_response("gpt-4o-mini-2024-07-18", Some("chatcmpl-123"), &["stop"]);
//!         chat.record_usage(input, output);
//!     }
//!     Err(e) => chat.record_error("timeout", &e.to_string()),
//! }
//! # }
//! ```

use super::{content_capture_enabled, redact};
use crate::model::JudicialOpinion;
use opentelemetry::{Array, StringValue, Value};
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The longest text recorded as one attribute (explanations, messages); longer text is cut.
pub const MAX_ATTRIBUTE_CHARS: usize = 16_384;

/// What is known about a chat request before it is sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatRequestInfo<'a> {
    pub model: &'a str,
    /// The OpenAI-compatible base URL; `None` means api.openai.com.
    pub base_url: Option<&'a str>,
    pub persona: Option<&'a str>,
    pub criterion: Option<&'a str>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<i64>,
    /// 1 for the first request, 2 for the first retry, ...
    pub attempt: u32,
}

/// An LLM call span. Cheap to clone the inner [`Span`]; dropping the last clone ends it.
#[derive(Debug, Clone)]
pub struct ChatSpan {
    span: Span,
}

impl ChatSpan {
    /// Creates the `chat {model}` span (child of the current span). It is not entered: wrap
    /// the request future with `.instrument(chat.span().clone())`.
    pub fn start(req: &ChatRequestInfo<'_>) -> ChatSpan {
        let (address, port) = server_of(req.base_url);
        let span = tracing::info_span!(
            "chat",
            "otel.name" = %format!("chat {}", req.model),
            "otel.kind" = "client",
            "otel.status_code" = Empty,
            "otel.status_description" = Empty,
            "gen_ai.operation.name" = "chat",
            "gen_ai.provider.name" = provider_name(req.base_url),
            "gen_ai.request.model" = %req.model,
            "gen_ai.request.temperature" = Empty,
            "gen_ai.request.max_tokens" = Empty,
            "gen_ai.request.seed" = Empty,
            "server.address" = %address,
            "server.port" = i64::from(port),
            persona = Empty,
            criterion = Empty,
            "auditor.attempt" = i64::from(req.attempt),
            "gen_ai.response.model" = Empty,
            "gen_ai.response.id" = Empty,
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "error.type" = Empty,
            "gen_ai.input.messages" = Empty,
            "gen_ai.output.messages" = Empty,
        );
        if let Some(t) = req.temperature {
            span.record("gen_ai.request.temperature", t);
        }
        if let Some(m) = req.max_tokens {
            span.record("gen_ai.request.max_tokens", i64::from(m));
        }
        if let Some(s) = req.seed {
            span.record("gen_ai.request.seed", s);
        }
        if let Some(p) = req.persona {
            span.record("persona", p);
        }
        if let Some(c) = req.criterion {
            span.record("criterion", c);
        }
        ChatSpan { span }
    }

    pub fn span(&self) -> &Span {
        &self.span
    }

    /// The model that answered, the response id and the finish reasons (one per choice).
    pub fn record_response(&self, model: &str, id: Option<&str>, finish_reasons: &[&str]) {
        self.span.record("gen_ai.response.model", model);
        if let Some(id) = id {
            self.span.record("gen_ai.response.id", id);
        }
        // A string array, as the conventions require (a tracing field cannot hold one).
        let reasons: Vec<StringValue> = finish_reasons
            .iter()
            .map(|r| StringValue::from(r.to_string()))
            .collect();
        self.span.set_attribute(
            "gen_ai.response.finish_reasons",
            Value::Array(Array::String(reasons)),
        );
    }

    /// Token usage reported by the provider.
    pub fn record_usage(&self, input_tokens: u64, output_tokens: u64) {
        // Integers reach OTLP as ints only when recorded as i64 (tracing-opentelemetry 0.34
        // records u64 fields as strings).
        self.span
            .record("gen_ai.usage.input_tokens", saturating_i64(input_tokens));
        self.span
            .record("gen_ai.usage.output_tokens", saturating_i64(output_tokens));
    }

    /// Marks the call failed. `error_type` is a short low-cardinality class (`timeout`,
    /// `rate_limited`, `http_500`, `invalid_response`, ...); `message` is redacted.
    pub fn record_error(&self, error_type: &str, message: &str) {
        self.span.record("error.type", error_type);
        self.span.record("otel.status_code", "ERROR");
        self.span
            .record("otel.status_description", truncate(&redact(message)));
    }

    /// Records the prompt (JSON, conventions' `gen_ai.input.messages` shape) only when
    /// `AUDITOR_TRACE_CONTENT=1`; otherwise `messages` is not even called.
    pub fn record_input_messages(&self, messages: impl FnOnce() -> String) {
        if content_capture_enabled() {
            self.span
                .record("gen_ai.input.messages", truncate(&redact(&messages())));
        }
    }

    /// Records the completion (JSON) only when `AUDITOR_TRACE_CONTENT=1`.
    pub fn record_output_messages(&self, messages: impl FnOnce() -> String) {
        if content_capture_enabled() {
            self.span
                .record("gen_ai.output.messages", truncate(&redact(&messages())));
        }
    }
}

/// One judge verdict on one criterion.
#[derive(Debug, Clone, Copy)]
pub struct Evaluation<'a> {
    /// The criterion id (`gen_ai.evaluation.name`).
    pub name: &'a str,
    pub score: f64,
    /// The judge's argument (`gen_ai.evaluation.explanation`).
    pub explanation: &'a str,
    pub persona: &'a str,
}

/// Emits a `gen_ai.evaluation.result` event on the current span (a debug event on stderr;
/// always exported when OTLP export is on).
pub fn record_evaluation(ev: &Evaluation<'_>) {
    let explanation = truncate(&redact(ev.explanation));
    tracing::debug!(
        "gen_ai.evaluation.name" = %ev.name,
        "gen_ai.evaluation.score.value" = ev.score,
        "gen_ai.evaluation.explanation" = %explanation,
        persona = %ev.persona,
        "gen_ai.evaluation.result"
    );
}

/// [`record_evaluation`] for a judicial opinion.
pub fn record_opinion(opinion: &JudicialOpinion) {
    record_evaluation(&Evaluation {
        name: &opinion.criterion_id,
        score: f64::from(opinion.score.get()),
        explanation: &opinion.argument,
        persona: opinion.judge.as_str(),
    });
}

/// `gen_ai.provider.name` for an OpenAI-compatible base URL: the well-known value of the
/// conventions when the host is recognised, `ollama` for its default port, else `openai` (the
/// API spoken; `server.address` tells the host).
pub fn provider_name(base_url: Option<&str>) -> &'static str {
    let Some(url) = base_url.and_then(|u| url::Url::parse(u).ok()) else {
        return "openai";
    };
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    let ends = |suffix: &str| host == suffix || host.ends_with(&format!(".{suffix}"));
    if ends("openai.azure.com") || ends("services.ai.azure.com") {
        "azure.ai.openai"
    } else if ends("openai.com") {
        "openai"
    } else if ends("openrouter.ai") {
        "openrouter"
    } else if ends("groq.com") {
        "groq"
    } else if ends("mistral.ai") {
        "mistral_ai"
    } else if ends("deepseek.com") {
        "deepseek"
    } else if ends("x.ai") {
        "x_ai"
    } else if ends("perplexity.ai") {
        "perplexity"
    } else if ends("anthropic.com") {
        "anthropic"
    } else if ends("generativelanguage.googleapis.com") {
        "gcp.gemini"
    } else if ends("aiplatform.googleapis.com") {
        "gcp.vertex_ai"
    } else if url.port() == Some(11434) {
        "ollama"
    } else {
        "openai"
    }
}

/// `server.address` and `server.port` of a base URL (`api.openai.com:443` by default).
pub fn server_of(base_url: Option<&str>) -> (String, u16) {
    match base_url.and_then(|u| url::Url::parse(u).ok()) {
        Some(u) => (
            u.host_str().unwrap_or("").to_string(),
            u.port_or_known_default().unwrap_or(443),
        ),
        None => ("api.openai.com".to_string(), 443),
    }
}

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn truncate(text: &str) -> String {
    crate::text::cut_marked(text, MAX_ATTRIBUTE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_from_base_urls() {
        assert_eq!(provider_name(None), "openai");
        assert_eq!(provider_name(Some("https://api.openai.com/v1")), "openai");
        assert_eq!(
            provider_name(Some("https://my.openai.azure.com/openai/deployments/x")),
            "azure.ai.openai"
        );
        assert_eq!(
            provider_name(Some("https://openrouter.ai/api/v1")),
            "openrouter"
        );
        assert_eq!(provider_name(Some("http://localhost:11434/v1")), "ollama");
        assert_eq!(provider_name(Some("http://127.0.0.1:8000/v1")), "openai");
        assert_eq!(provider_name(Some("https://notopenai.com/v1")), "openai");
        assert_eq!(provider_name(Some("https://evilx.ai/v1")), "openai");
        assert_eq!(provider_name(Some("https://api.x.ai/v1")), "x_ai");
    }

    #[test]
    fn server_address_and_port() {
        assert_eq!(server_of(None), ("api.openai.com".into(), 443));
        assert_eq!(
            server_of(Some("http://localhost:11434/v1")),
            ("localhost".into(), 11434)
        );
        assert_eq!(
            server_of(Some("http://vllm.internal/v1")),
            ("vllm.internal".into(), 80)
        );
    }

    #[test]
    fn long_text_is_cut() {
        let long = "é".repeat(MAX_ATTRIBUTE_CHARS + 10);
        let cut = truncate(&long);
        assert!(cut.ends_with("[truncated]"));
        assert_eq!(
            cut.chars().filter(|c| *c == 'é').count(),
            MAX_ATTRIBUTE_CHARS
        );
        assert_eq!(truncate("short"), "short");
    }

    #[test]
    fn content_is_not_evaluated_without_opt_in() {
        // No subscriber and no init: capture is off, so the closure must not run.
        let chat = ChatSpan::start(&ChatRequestInfo {
            model: "m",
            ..Default::default()
        });
        chat.record_input_messages(|| panic!("prompt evaluated without AUDITOR_TRACE_CONTENT"));
        chat.record_output_messages(|| panic!("completion evaluated without opt-in"));
    }
}
