//! The async-openai client: a reqwest 0.13 client carrying the request timeout, a transport
//! that captures non-success responses (status, `Retry-After`, raw body) before async-openai
//! parses them, and one bounded retry loop under the global limiter.

use super::config::{ConfigError, LlmConfig, Problem};
use super::limiter::Limiter;
use super::retry::{self, BodyTooLarge, Failure, HttpStatusError, RetryPolicy, Unrebuildable};
use crate::telemetry::genai::{ChatRequestInfo, ChatSpan};
use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat::{CreateChatCompletionRequest, CreateChatCompletionResponse};
use std::time::Duration;
use tracing::Instrument;

/// A chat completion and what it cost.
#[derive(Debug, Clone)]
pub struct Completion {
    pub response: CreateChatCompletionResponse,
    /// HTTP requests sent (1 + transport retries).
    pub requests: u32,
}

/// A request that failed for good.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct CallError {
    pub failure: Failure,
    /// HTTP requests sent before giving up.
    pub requests: u32,
    pub message: String,
}

/// The client shared by every judge and the vision inspector (cheap to clone).
#[derive(Clone)]
pub struct LlmClient {
    client: Client<OpenAIConfig>,
    limiter: Limiter,
    policy: RetryPolicy,
    endpoint: String,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("endpoint", &self.endpoint)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Builds the reqwest client (with the timeout) and the async-openai client over it.
pub fn build(cfg: &LlmConfig) -> Result<LlmClient, ConfigError> {
    let timeout = format!("{:?}", cfg.timeout);
    let http = reqwest::Client::builder()
        .timeout(cfg.timeout)
        .connect_timeout(cfg.timeout.min(Duration::from_secs(10)))
        .build()
        .map_err(|e| {
            ConfigError::because("AUDITOR_LLM_TIMEOUT", &timeout, Problem::HttpClient(e))
        })?;
    let mut oa = OpenAIConfig::new().with_api_key(cfg.api_key.clone().unwrap_or_default());
    if let Some(base) = &cfg.base_url {
        oa = oa.with_api_base(base.clone());
    }
    let transport = tower::service_fn(move |factory: HttpRequestFactory| {
        let http = http.clone();
        async move { send(&http, factory).await }
    });
    let client = Client::with_config(oa).with_http_service(transport);
    Ok(LlmClient {
        client,
        limiter: super::limiter::Limiter::new(cfg.max_concurrency, cfg.rpm),
        policy: RetryPolicy {
            max_retries: cfg.max_retries,
            base: cfg.backoff_base,
            cap: cfg.backoff_cap,
            max_retry_after: cfg.max_retry_after,
        },
        endpoint: cfg.endpoint().to_string(),
    })
}

/// One HTTP attempt. A non-success status becomes an [`HttpStatusError`] (boxed into
/// `OpenAIError::Boxed`) so the retry loop sees the status, `Retry-After` and body whatever
/// their format.
/// Largest response body read from the LLM endpoint; a larger one is refused unread (a
/// hostile or broken server can answer with gigabytes; a judge's answer is a few KiB, a
/// description of a diagram a few more).
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// Bytes of an error body kept for the error message.
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

async fn send(
    http: &reqwest::Client,
    factory: HttpRequestFactory,
) -> Result<reqwest::Response, OpenAIError> {
    let request = factory.build().await?;
    let response = http.execute(request).await.map_err(OpenAIError::Reqwest)?;
    let status = response.status();
    if status.is_success() {
        // Read here, bounded, and hand async-openai a response rebuilt from the bytes.
        let mut builder = http::Response::builder().status(status);
        for (k, v) in response.headers() {
            builder = builder.header(k, v);
        }
        let (body, complete) = read_capped(response, MAX_RESPONSE_BYTES).await?;
        if !complete {
            return Err(OpenAIError::Boxed(Box::new(BodyTooLarge {
                limit: MAX_RESPONSE_BYTES,
            })));
        }
        let rebuilt = builder
            .body(body)
            .map_err(|e| OpenAIError::Boxed(Box::new(Unrebuildable(e))))?;
        return Ok(reqwest::Response::from(rebuilt));
    }
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry::parse_retry_after(v, chrono::Utc::now()));
    let (body, _) = read_capped(response, MAX_ERROR_BODY_BYTES)
        .await
        .unwrap_or_default();
    Err(OpenAIError::Boxed(Box::new(HttpStatusError {
        status: status.as_u16(),
        retry_after,
        body: String::from_utf8_lossy(&body).into_owned(),
    })))
}

/// At most `cap` bytes of the body, and whether that was all of it (chunks stop being read
/// past the cap).
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), OpenAIError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(OpenAIError::Reqwest)? {
        if body.len() + chunk.len() > cap {
            body.extend_from_slice(&chunk[..cap - body.len()]);
            return Ok((body, false));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, true))
}

fn record_outcome(
    chat: &ChatSpan,
    result: &Result<async_openai::types::chat::CreateChatCompletionResponse, OpenAIError>,
) {
    match result {
        Ok(resp) => {
            let reasons: Vec<String> = resp
                .choices
                .iter()
                .filter_map(|c| c.finish_reason.map(|r| format!("{r:?}").to_lowercase()))
                .collect();
            let reasons: Vec<&str> = reasons.iter().map(String::as_str).collect();
            chat.record_response(&resp.model, Some(&resp.id), &reasons);
            if let Some(u) = &resp.usage {
                chat.record_usage(u64::from(u.prompt_tokens), u64::from(u.completion_tokens));
            }
            chat.record_output_messages(|| {
                serde_json::to_string(&resp.choices.iter().map(|c| &c.message).collect::<Vec<_>>())
                    .unwrap_or_default()
            });
        }
        Err(e) => {
            let kind = match retry::classify(e) {
                Failure::RateLimited { .. } => "http_429".to_string(),
                Failure::Transient { .. } => "transient".to_string(),
                Failure::Permanent { .. } => "rejected".to_string(),
                Failure::SchemaUnsupported { .. } => "schema_unsupported".to_string(),
            };
            chat.record_error(&kind, &e.to_string());
        }
    }
}

impl LlmClient {
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Sends a chat completion with bounded retries; each attempt holds one limiter permit.
    pub async fn complete(
        &self,
        req: &CreateChatCompletionRequest,
    ) -> Result<Completion, CallError> {
        let mut requests = 0u32;
        let mut retry = 0u32;
        loop {
            let result = {
                let _permit = self.limiter.acquire().await;
                requests += 1;
                let chat = ChatSpan::start(&ChatRequestInfo {
                    model: &req.model,
                    base_url: Some(&self.endpoint),
                    temperature: req.temperature.map(f64::from),
                    max_tokens: req.max_completion_tokens,
                    attempt: requests,
                    ..ChatRequestInfo::default()
                });
                chat.record_input_messages(|| {
                    serde_json::to_string(&req.messages).unwrap_or_default()
                });
                let result = self
                    .client
                    .chat()
                    .create(req.clone())
                    .instrument(chat.span().clone())
                    .await;
                record_outcome(&chat, &result);
                result
            };
            let err = match result {
                Ok(response) => return Ok(Completion { response, requests }),
                Err(e) => e,
            };
            let failure = retry::classify(&err);
            let give_up = |why: String| CallError {
                message: format!(
                    "{} after {} to {} (model {}): {why}",
                    match failure {
                        Failure::RateLimited { .. } => "rate limited",
                        Failure::Transient { .. } => "LLM request failed",
                        Failure::Permanent { .. } => "LLM request rejected",
                        Failure::SchemaUnsupported { .. } => "structured output unsupported",
                    },
                    crate::words::count(requests as usize, "request", "requests"),
                    self.endpoint,
                    req.model,
                ),
                failure: failure.clone(),
                requests,
            };
            if retry >= self.policy.max_retries
                && !matches!(
                    failure,
                    Failure::Permanent { .. } | Failure::SchemaUnsupported { .. }
                )
            {
                return Err(give_up(format!(
                    "{} (no retries left: AUDITOR_LLM_MAX_RETRIES={})",
                    failure.detail(),
                    self.policy.max_retries
                )));
            }
            let delay =
                match retry::delay_before_retry(&self.policy, retry, &failure, rand::random()) {
                    Ok(d) => d,
                    Err(retry::NoRetry::NotRetryable) => {
                        return Err(give_up(failure.detail().to_string()));
                    }
                    Err(why) => return Err(give_up(format!("{}; {why}", failure.detail()))),
                };
            tracing::warn!(
                model = %req.model,
                retry = retry + 1,
                delay_ms = delay.as_millis() as u64,
                "LLM request failed, retrying: {}",
                failure.detail()
            );
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }
}
