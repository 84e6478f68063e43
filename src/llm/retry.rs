//! Which failures are worth another try, and how long to wait before it.
//!
//! async-openai's own retry layer is replaced (see `client.rs`) because it does not retry a
//! 429 with a non-JSON body nor a timeout; here every HTTP failure is classified from its
//! status, headers and body, so the policy is one bounded loop:
//! - 429 honours `Retry-After` (seconds or HTTP date), capped by `max_retry_after`;
//!   a 429 saying `insufficient_quota` is permanent;
//! - 5xx, 408, timeouts, connection errors, a 429 without `Retry-After` and malformed
//!   success bodies back off exponentially with full jitter;
//! - other 4xx are permanent (bad key, unknown model, bad request).

use async_openai::error::OpenAIError;
use std::time::Duration;

/// The server answered with a body over `limit` bytes (the client's cap): not retried.
#[derive(Debug, thiserror::Error)]
#[error("the response body is larger than {} MiB: not read", limit >> 20)]
pub struct BodyTooLarge {
    pub limit: usize,
}

/// A successful response that could not be rebuilt from the bytes read (the HTTP types refused
/// its status or a header): not retried.
#[derive(Debug, thiserror::Error)]
#[error("cannot rebuild the response: {0}")]
pub struct Unrebuildable(#[source] pub http::Error);

/// A non-success HTTP response, captured before async-openai parses (and loses) it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("HTTP {status}: {}", snippet(body))]
pub struct HttpStatusError {
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub body: String,
}

fn snippet(body: &str) -> String {
    let t = body.trim();
    if t.is_empty() {
        return "(empty body)".into();
    }
    let mut s: String = t.chars().take(300).collect();
    if t.chars().count() > 300 {
        s.push('…');
    }
    s
}

/// What to do about a failed request.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Retry after the server's `Retry-After`, or backoff when it gave none.
    RateLimited {
        retry_after: Option<Duration>,
        detail: String,
    },
    /// Retry with backoff (5xx, timeouts, connection errors, malformed bodies).
    Transient { detail: String },
    /// Retrying cannot help.
    Permanent { detail: String },
    /// The server does not support `response_format: json_schema` (switch to tool calling).
    SchemaUnsupported { detail: String },
}

impl Failure {
    pub fn detail(&self) -> &str {
        match self {
            Failure::RateLimited { detail, .. }
            | Failure::Transient { detail }
            | Failure::Permanent { detail }
            | Failure::SchemaUnsupported { detail } => detail,
        }
    }
}

/// Classifies an error returned by the async-openai client.
pub fn classify(err: &OpenAIError) -> Failure {
    match err {
        OpenAIError::Boxed(inner) => {
            if let Some(h) = inner.downcast_ref::<HttpStatusError>() {
                return classify_status(h);
            }
            if let Some(r) = inner.downcast_ref::<reqwest::Error>() {
                return classify_reqwest(r);
            }
            if inner.is::<BodyTooLarge>() || inner.is::<Unrebuildable>() {
                return Failure::Permanent {
                    detail: inner.to_string(),
                };
            }
            Failure::Transient {
                detail: inner.to_string(),
            }
        }
        OpenAIError::Reqwest(r) => classify_reqwest(r),
        OpenAIError::ApiError(api) => classify_status(&HttpStatusError {
            status: api.status_code.as_u16(),
            retry_after: None,
            body: api.api_error.to_string(),
        }),
        OpenAIError::JSONDeserialize(e, body) => Failure::Transient {
            detail: format!(
                "the server's response is not a chat completion ({e}): {}",
                snippet(body)
            ),
        },
        OpenAIError::StreamError(e) => Failure::Transient {
            detail: e.to_string(),
        },
        other => Failure::Permanent {
            detail: other.to_string(),
        },
    }
}

fn classify_reqwest(e: &reqwest::Error) -> Failure {
    let detail = if e.is_timeout() {
        format!("request timed out ({e}); raise AUDITOR_LLM_TIMEOUT if the model is slow")
    } else if e.is_connect() {
        format!("cannot connect to the LLM endpoint ({e}); check OPENAI_BASE_URL")
    } else {
        format!("HTTP transport error: {e}")
    };
    if e.is_builder() {
        Failure::Permanent { detail }
    } else {
        Failure::Transient { detail }
    }
}

/// Classifies a non-success HTTP status.
pub fn classify_status(h: &HttpStatusError) -> Failure {
    let detail = h.to_string();
    let body = h.body.to_ascii_lowercase();
    match h.status {
        429 if body.contains("insufficient_quota") => Failure::Permanent {
            detail: format!("{detail} (the account has no quota left: check billing)"),
        },
        429 => Failure::RateLimited {
            retry_after: h.retry_after,
            detail,
        },
        400 | 404 | 415 | 422 | 501
            if body.contains("response_format")
                || body.contains("json_schema")
                || body.contains("structured output") =>
        {
            Failure::SchemaUnsupported { detail }
        }
        408 | 409 | 425 | 500..=599 => Failure::Transient { detail },
        401 | 403 => Failure::Permanent {
            detail: format!("{detail} (check OPENAI_API_KEY)"),
        },
        404 => Failure::Permanent {
            detail: format!("{detail} (check OPENAI_BASE_URL and the model name)"),
        },
        _ => Failure::Permanent { detail },
    }
}

/// Parses a `Retry-After` header: delta-seconds (fractions tolerated) or an HTTP date.
pub fn parse_retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let delta = date.with_timezone(&chrono::Utc) - now;
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

/// Bounds of the retry loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub base: Duration,
    pub cap: Duration,
    pub max_retry_after: Duration,
}

/// Why a failure is not retried.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoRetry {
    /// The failure is permanent (or the schema is not supported).
    #[error("not retryable")]
    NotRetryable,
    /// The server asked to wait longer than this run accepts.
    #[error(
        "the server asked to wait {:.0} s (Retry-After), more than the {:.0} s this \
         run accepts; lower AUDITOR_RPM or AUDITOR_MAX_CONCURRENCY",
        .after.as_secs_f64(),
        .max.as_secs_f64()
    )]
    WaitTooLong { after: Duration, max: Duration },
}

/// The wait before retry number `retry` (0-based) after `failure`; `Err` when the failure
/// must not be retried. `unit` is a uniform random number in `[0, 1)` (full jitter).
pub fn delay_before_retry(
    policy: &RetryPolicy,
    retry: u32,
    failure: &Failure,
    unit: f64,
) -> Result<Duration, NoRetry> {
    let backoff = || {
        let exp = policy
            .base
            .saturating_mul(2u32.saturating_pow(retry.min(20)))
            .min(policy.cap);
        exp.mul_f64(unit.clamp(0.0, 1.0))
    };
    match failure {
        Failure::RateLimited {
            retry_after: Some(after),
            ..
        } => {
            if *after > policy.max_retry_after {
                Err(NoRetry::WaitTooLong {
                    after: *after,
                    max: policy.max_retry_after,
                })
            } else {
                Ok(*after)
            }
        }
        Failure::RateLimited {
            retry_after: None, ..
        }
        | Failure::Transient { .. } => Ok(backoff()),
        Failure::Permanent { .. } | Failure::SchemaUnsupported { .. } => Err(NoRetry::NotRetryable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 5,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(60),
        }
    }

    fn status(status: u16, body: &str, retry_after: Option<u64>) -> Failure {
        classify_status(&HttpStatusError {
            status,
            retry_after: retry_after.map(Duration::from_secs),
            body: body.into(),
        })
    }

    #[test]
    fn statuses_are_classified() {
        assert!(matches!(
            status(429, "Too Many Requests", Some(3)),
            Failure::RateLimited {
                retry_after: Some(d),
                ..
            } if d == Duration::from_secs(3)
        ));
        assert!(matches!(
            status(429, r#"{"error":{"code":"insufficient_quota"}}"#, None),
            Failure::Permanent { .. }
        ));
        assert!(matches!(status(503, "", None), Failure::Transient { .. }));
        assert!(matches!(
            status(401, "bad key", None),
            Failure::Permanent { .. }
        ));
        assert!(matches!(
            status(
                400,
                r#"{"error":{"message":"response_format json_schema is not supported"}}"#,
                None
            ),
            Failure::SchemaUnsupported { .. }
        ));
        assert!(matches!(
            status(400, "context length exceeded", None),
            Failure::Permanent { .. }
        ));
    }

    #[test]
    fn retry_after_is_honoured_and_bounded() {
        let p = policy();
        let f = status(429, "", Some(7));
        assert_eq!(
            delay_before_retry(&p, 0, &f, 0.5).unwrap(),
            Duration::from_secs(7)
        );
        let f = status(429, "", Some(600));
        assert!(
            delay_before_retry(&p, 0, &f, 0.5)
                .unwrap_err()
                .to_string()
                .contains("600")
        );
    }

    #[test]
    fn backoff_is_full_jitter_exponential_and_capped() {
        let p = policy();
        let f = Failure::Transient { detail: "x".into() };
        assert_eq!(delay_before_retry(&p, 0, &f, 0.0).unwrap(), Duration::ZERO);
        assert_eq!(
            delay_before_retry(&p, 0, &f, 1.0).unwrap(),
            Duration::from_millis(100)
        );
        assert_eq!(
            delay_before_retry(&p, 3, &f, 1.0).unwrap(),
            Duration::from_millis(800)
        );
        assert_eq!(
            delay_before_retry(&p, 3, &f, 0.5).unwrap(),
            Duration::from_millis(400)
        );
        assert_eq!(delay_before_retry(&p, 30, &f, 1.0).unwrap(), p.cap);
        let f = Failure::Permanent { detail: "x".into() };
        assert!(delay_before_retry(&p, 0, &f, 0.5).is_err());
    }

    #[test]
    fn retry_after_parses_seconds_and_dates() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 2026 00:00:05 GMT", now),
            Some(Duration::from_secs(5))
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }
}
