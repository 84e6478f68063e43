//! OpenAI-compatible LLM access: configuration from the environment, client with a request
//! timeout, structured output, retries with backoff, global concurrency and rate limits, and
//! token accounting.
//!
//! Layers, bottom up:
//! - [`client`]: one HTTP attempt through async-openai over a reqwest client with the timeout;
//!   [`retry`] decides what is retried and how long to wait; [`limiter`] bounds requests in
//!   flight (and per minute) across the whole run.
//! - [`structured`]: the strict JSON schema of an answer type, sent as `response_format` or as
//!   a forced tool call.
//! - [`ask`]: one structured question: send, parse, validate; an invalid answer is asked again
//!   with the validation error fed back, a bounded number of times.
//! - [`session`]: one run's LLM access (client and limiter, configuration, prompts, token
//!   ledger), shared by the LLM judges (`judges::llm`) and the VisionInspector (`vision`),
//!   which build their prompts and validators on top.
//!
//! This layer knows nothing of judges, vision or actors: it never imports them.

pub mod client;
pub(crate) mod config;
pub(crate) mod limiter;
pub mod prompts;
pub(crate) mod retry;
pub(crate) mod session;
pub(crate) mod structured;

pub use client::{CallError, LlmClient};
pub use config::{ConfigError, EndpointError, LlmConfig, check_endpoint};
pub use limiter::{Limiter, Price, UsageLedger};
pub use prompts::{PromptError, PromptFile, Prompts};
pub use session::LlmSession;

use crate::model::TokenUsage;
use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent,
};
use std::sync::atomic::{AtomicBool, Ordering};
use structured::{OutputMode, SchemaSpec};

/// A validated answer and what it took.
#[derive(Debug, Clone)]
pub struct Asked<U> {
    pub value: U,
    /// Tokens of every request made for this answer (rejected answers included).
    pub usage: TokenUsage,
    /// HTTP requests sent (transport retries and re-asked answers included).
    pub requests: u32,
    /// Model answers received (1 when the first answer was valid).
    pub answers: u32,
    /// The model that produced the answer (from the response, else the one asked).
    pub model: String,
}

/// Why no valid answer could be had.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AskError {
    /// Every answer was free text or failed validation.
    #[error(
        "no valid answer after {} ({}); last answer rejected: {last_error}",
        crate::words::count(*.answers as usize, "answer", "answers"),
        crate::words::count(*.requests as usize, "request", "requests")
    )]
    Invalid {
        last_error: String,
        answers: u32,
        requests: u32,
        usage: TokenUsage,
    },
    /// The endpoint failed after retries, or rejected the request for good.
    #[error("{message}")]
    Transport {
        message: String,
        requests: u32,
        usage: TokenUsage,
        /// The server rejected the request for good (e.g. HTTP 400: a model that takes no
        /// images); asking again cannot help.
        rejected: bool,
    },
}

impl AskError {
    /// Tokens of every request made before giving up.
    pub fn usage(&self) -> TokenUsage {
        match self {
            AskError::Invalid { usage, .. } | AskError::Transport { usage, .. } => *usage,
        }
    }
}

/// Remembers that the server rejected `response_format: json_schema`, so later requests go
/// straight to tool calling.
#[derive(Debug, Default)]
pub struct ModeSwitch {
    tool_calls: AtomicBool,
}

impl ModeSwitch {
    pub fn mode(&self) -> OutputMode {
        if self.tool_calls.load(Ordering::Relaxed) {
            OutputMode::ToolCall
        } else {
            OutputMode::JsonSchema
        }
    }

    fn fall_back(&self) {
        self.tool_calls.store(true, Ordering::Relaxed);
    }
}

/// Asks `model` one structured question and validates the answer.
///
/// `messages` end with the question; on an invalid answer, the answer and `feedback(error)`
/// (a user message that must restate the question's key facts) are appended and the
/// question is asked again, at most `max_answer_attempts` times (the session's config). The
/// session's client sends, and its output mode switch is shared by every question.
pub async fn ask<T, U, E>(
    session: &LlmSession,
    model: &str,
    mut messages: Vec<ChatCompletionRequestMessage>,
    spec: &SchemaSpec,
    validate: impl Fn(T) -> Result<U, E>,
    feedback: impl Fn(&str) -> String,
) -> Result<Asked<U>, AskError>
where
    T: serde::de::DeserializeOwned,
    E: std::error::Error + Send + Sync + 'static,
{
    let (client, switch) = (session.client(), session.switch());
    let max_answers = session.config().max_answer_attempts;
    let mut usage = TokenUsage::default();
    let mut requests = 0u32;
    let mut answers = 0u32;
    let mut last_error = String::new();
    let mut fell_back = false;
    while answers < max_answers.max(1) {
        let mode = switch.mode();
        let req = structured::request(model, messages.clone(), spec, mode);
        let completion = match client.complete(&req).await {
            Ok(c) => c,
            Err(e) => {
                requests += e.requests;
                if matches!(e.failure, retry::Failure::SchemaUnsupported { .. })
                    && mode == OutputMode::JsonSchema
                    && !fell_back
                {
                    tracing::warn!(
                        model,
                        "the server rejected response_format json_schema; falling back to tool calling: {}",
                        e.failure.detail()
                    );
                    switch.fall_back();
                    fell_back = true;
                    continue;
                }
                return Err(AskError::Transport {
                    rejected: matches!(e.failure, retry::Failure::Permanent { .. }),
                    message: e.message,
                    requests,
                    usage,
                });
            }
        };
        requests += completion.requests;
        answers += 1;
        usage.add(structured::usage_of(&completion.response));
        let (text, outcome) = match structured::answer_text(&completion.response) {
            Ok(t) => {
                let outcome = structured::parse_answer::<T>(&t).and_then(|v| {
                    validate(v).map_err(|e| structured::AnswerError::Rejected(Box::new(e)))
                });
                (t, outcome)
            }
            Err(e) => (String::new(), Err(e)),
        };
        match outcome {
            Ok(value) => {
                let answered_by = if completion.response.model.trim().is_empty() {
                    model.to_string()
                } else {
                    completion.response.model.clone()
                };
                return Ok(Asked {
                    value,
                    usage,
                    requests,
                    answers,
                    model: answered_by,
                });
            }
            Err(err) => {
                tracing::warn!(model, answer = answers, "answer rejected: {err}");
                let previous: String = text.chars().take(4000).collect();
                if !previous.trim().is_empty() {
                    messages.push(ChatCompletionRequestMessage::Assistant(
                        ChatCompletionRequestAssistantMessage {
                            content: Some(ChatCompletionRequestAssistantMessageContent::Text(
                                previous,
                            )),
                            ..Default::default()
                        },
                    ));
                }
                let err = err.to_string();
                messages.push(user_message(feedback(&err)));
                last_error = err;
            }
        }
    }
    Err(AskError::Invalid {
        last_error,
        answers,
        requests,
        usage,
    })
}

/// A plain-text user message.
pub fn user_message(text: String) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
        content: ChatCompletionRequestUserMessageContent::Text(text),
        name: None,
    })
}

#[cfg(test)]
mod tests {
    use super::AskError;

    #[test]
    fn an_invalid_answer_counts_its_answers_and_requests_in_words() {
        let one = AskError::Invalid {
            last_error: "not JSON".into(),
            answers: 1,
            requests: 1,
            usage: Default::default(),
        }
        .to_string();
        assert!(one.contains("after 1 answer (1 request);"), "{one}");
        let more = AskError::Invalid {
            last_error: "not JSON".into(),
            answers: 2,
            requests: 3,
            usage: Default::default(),
        }
        .to_string();
        assert!(more.contains("after 2 answers (3 requests);"), "{more}");
        assert!(!one.contains("(s)") && !more.contains("(s)"));
    }
}
