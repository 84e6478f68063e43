//! LLM configuration read from the environment (a lookup function, so tests need no process
//! environment).

use std::fmt;
use std::time::Duration;

/// Model used when `AUDITOR_MODEL` is not set.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// Request timeout when `AUDITOR_LLM_TIMEOUT` is not set.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
/// Requests in flight at once when `AUDITOR_MAX_CONCURRENCY` is not set (3 personas × 10
/// criteria fit in one round).
pub const DEFAULT_MAX_CONCURRENCY: usize = 32;
/// Transport retries per request when `AUDITOR_LLM_MAX_RETRIES` is not set.
pub const DEFAULT_MAX_RETRIES: u32 = 4;
/// Answers asked of a judge before its opinion is recorded as failed.
pub const DEFAULT_MAX_ANSWER_ATTEMPTS: u32 = 3;

/// Everything needed to talk to an OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct LlmConfig {
    /// `OPENAI_API_KEY`. Never printed (see the `Debug` impl).
    pub api_key: Option<String>,
    /// `OPENAI_BASE_URL`, e.g. `http://localhost:11434/v1`; `None` means api.openai.com.
    pub base_url: Option<String>,
    /// `AUDITOR_MODEL`: the model asked when the caller names no other.
    pub model: String,
    /// `AUDITOR_VISION_MODEL`: the model that reads the report's diagrams. Unset: the judges'
    /// model (`AUDITOR_MODEL`); `off` (or `none`): the diagrams are not inspected (the evidence
    /// says so).
    pub vision_model: Option<String>,
    /// `AUDITOR_LLM_WARMUP` (`1`/`0`, default on): before the judges, one short request carrying
    /// the shared prompt prefix is sent while the detectives run, so the provider's prefix cache
    /// is populated when the judges' requests arrive.
    pub warm_up: bool,
    /// `AUDITOR_LLM_TIMEOUT` (seconds, fractions allowed): the whole request, body included.
    pub timeout: Duration,
    /// `AUDITOR_MAX_CONCURRENCY`: requests in flight at once, across all judges and vision.
    pub max_concurrency: usize,
    /// `AUDITOR_RPM`: optional requests-per-minute limit.
    pub rpm: Option<u32>,
    /// `AUDITOR_LLM_MAX_RETRIES`: transport retries per request (429, 5xx, timeouts).
    pub max_retries: u32,
    /// Answers asked for one question (free text or invalid answers are asked again with the
    /// error fed back) before `AskError::Invalid`.
    pub max_answer_attempts: u32,
    /// Base and cap of the exponential backoff (full jitter).
    pub backoff_base: Duration,
    pub backoff_cap: Duration,
    /// Longest `Retry-After` honoured; a server asking for more fails the request.
    pub max_retry_after: Duration,
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("vision_model", &self.vision_model)
            .field("warm_up", &self.warm_up)
            .field("timeout", &self.timeout)
            .field("max_concurrency", &self.max_concurrency)
            .field("rpm", &self.rpm)
            .field("max_retries", &self.max_retries)
            .field("max_answer_attempts", &self.max_answer_attempts)
            .finish_non_exhaustive()
    }
}

/// An environment variable with an unusable value.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {variable}={value:?} is invalid: {problem}")]
pub struct ConfigError {
    pub variable: String,
    pub value: String,
    #[source]
    pub problem: Problem,
}

/// What is wrong with a variable's value.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// Said in words (the value itself is the whole cause).
    #[error("{0}")]
    Said(String),
    /// The value is not a URL.
    #[error("not a URL ({0}); expected e.g. http://localhost:11434/v1")]
    NotAUrl(#[source] url::ParseError),
    /// The HTTP client cannot be built with the value (the timeout).
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
}

impl ConfigError {
    pub fn new(variable: &str, value: &str, problem: impl Into<String>) -> Self {
        ConfigError::because(variable, value, Problem::Said(problem.into()))
    }

    /// The value of `variable` is unusable because of `problem`.
    pub fn because(variable: &str, value: &str, problem: Problem) -> Self {
        ConfigError {
            variable: variable.to_string(),
            value: value.to_string(),
            problem,
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            api_key: None,
            base_url: None,
            model: DEFAULT_MODEL.to_string(),
            vision_model: None,
            warm_up: true,
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            rpm: None,
            max_retries: DEFAULT_MAX_RETRIES,
            max_answer_attempts: DEFAULT_MAX_ANSWER_ATTEMPTS,
            backoff_base: Duration::from_millis(500),
            backoff_cap: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl LlmConfig {
    /// Reads the configuration through `lookup` (use `|k| std::env::var(k).ok()` in the CLI).
    /// Empty values count as unset.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<LlmConfig, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let mut cfg = LlmConfig {
            api_key: get("OPENAI_API_KEY"),
            ..LlmConfig::default()
        };
        if let Some(url) = get("OPENAI_BASE_URL") {
            let parsed = url::Url::parse(&url)
                .map_err(|e| ConfigError::because("OPENAI_BASE_URL", &url, Problem::NotAUrl(e)))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ConfigError::new(
                    "OPENAI_BASE_URL",
                    &url,
                    "the scheme must be http or https",
                ));
            }
            cfg.base_url = Some(url.trim_end_matches('/').to_string());
        }
        if let Some(m) = get("AUDITOR_MODEL") {
            cfg.model = m;
        }
        cfg.vision_model = match get("AUDITOR_VISION_MODEL") {
            Some(v) if matches!(v.to_ascii_lowercase().as_str(), "off" | "none") => None,
            Some(v) => Some(v),
            None => Some(cfg.model.clone()),
        };
        if let Some(v) = get("AUDITOR_LLM_WARMUP") {
            cfg.warm_up = match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "on" | "yes" => true,
                "0" | "false" | "off" | "no" => false,
                _ => {
                    return Err(ConfigError::new(
                        "AUDITOR_LLM_WARMUP",
                        &v,
                        "expected 1 (send one prefix request first) or 0 (do not)",
                    ));
                }
            };
        }
        if let Some(v) = get("AUDITOR_LLM_TIMEOUT") {
            cfg.timeout = parse_timeout(&v)?;
        }
        if let Some(v) = get("AUDITOR_MAX_CONCURRENCY") {
            cfg.max_concurrency = parse_positive("AUDITOR_MAX_CONCURRENCY", &v, 10_000)? as usize;
        }
        if let Some(v) = get("AUDITOR_RPM") {
            cfg.rpm = Some(parse_positive("AUDITOR_RPM", &v, 1_000_000)? as u32);
        }
        if let Some(v) = get("AUDITOR_LLM_MAX_RETRIES") {
            cfg.max_retries = v.parse::<u32>().ok().filter(|n| *n <= 20).ok_or_else(|| {
                ConfigError::new(
                    "AUDITOR_LLM_MAX_RETRIES",
                    &v,
                    "expected a whole number from 0 to 20",
                )
            })?;
        }
        Ok(cfg)
    }

    /// Whether an LLM endpoint is configured (a key or a base URL): `--judges auto` uses the
    /// LLM judges only then.
    pub fn is_configured(&self) -> bool {
        self.api_key.is_some() || self.base_url.is_some()
    }

    /// The endpoint in use, for messages and the report.
    pub fn endpoint(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or("https://api.openai.com/v1")
    }
}

/// Why nothing answers at an LLM endpoint (the endpoint shown without credentials).
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("the LLM endpoint is not a URL ({0})")]
    NotAUrl(#[source] url::ParseError),
    #[error("the LLM endpoint {0} has no host")]
    NoHost(url::Url),
    #[error("the LLM endpoint {0} has no port")]
    NoPort(url::Url),
    #[error("the LLM endpoint {shown} cannot be found: {source}")]
    Unresolved {
        shown: url::Url,
        #[source]
        source: std::io::Error,
    },
    #[error("the LLM endpoint {0} cannot be found: no address")]
    NoAddress(url::Url),
    #[error("nothing answers at the LLM endpoint {shown}: {source}")]
    NoAnswer {
        shown: url::Url,
        #[source]
        source: std::io::Error,
    },
}

/// Checks once, before a run, that something answers at the endpoint: a TCP connection to its
/// host and port within `timeout` (no request is sent, nothing is paid). `Err` says what failed,
/// with the endpoint shown without credentials.
pub fn check_endpoint(endpoint: &str, timeout: Duration) -> Result<(), EndpointError> {
    use std::net::{TcpStream, ToSocketAddrs};
    let url = url::Url::parse(endpoint).map_err(EndpointError::NotAUrl)?;
    let mut shown = url.clone();
    // Neither can fail on a URL with a host; a URL without one is refused just below.
    let _ = shown.set_password(None);
    let _ = shown.set_username("");
    shown.set_query(None);
    let Some(host) = url.host_str() else {
        return Err(EndpointError::NoHost(shown));
    };
    let Some(port) = url.port_or_known_default() else {
        return Err(EndpointError::NoPort(shown));
    };
    let addrs: Vec<std::net::SocketAddr> =
        match (host.trim_matches(['[', ']']), port).to_socket_addrs() {
            Ok(addrs) => addrs.collect(),
            Err(source) => return Err(EndpointError::Unresolved { shown, source }),
        };
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(source) => EndpointError::NoAnswer { shown, source },
        None => EndpointError::NoAddress(shown),
    })
}

fn parse_timeout(v: &str) -> Result<Duration, ConfigError> {
    let secs: f64 = v.parse().map_err(|_| {
        ConfigError::new(
            "AUDITOR_LLM_TIMEOUT",
            v,
            "expected a number of seconds, e.g. 60 or 2.5",
        )
    })?;
    if !secs.is_finite() || secs <= 0.0 || secs > 3600.0 {
        return Err(ConfigError::new(
            "AUDITOR_LLM_TIMEOUT",
            v,
            "the timeout must be more than 0 and at most 3600 seconds",
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_positive(var: &str, v: &str, max: u64) -> Result<u64, ConfigError> {
    v.parse::<u64>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| ConfigError::new(var, v, format!("expected a whole number from 1 to {max}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        let cfg = LlmConfig::from_env(env(&[])).unwrap();
        assert!(!cfg.is_configured());
        assert_eq!(cfg.model, DEFAULT_MODEL);
        assert_eq!(cfg.timeout, Duration::from_secs(60));
        assert_eq!(cfg.rpm, None);
        // vision by default: the judges' model reads the diagrams
        assert_eq!(cfg.vision_model.as_deref(), Some(DEFAULT_MODEL));
        assert!(cfg.warm_up);
        let cfg = LlmConfig::from_env(env(&[("AUDITOR_MODEL", "m")])).unwrap();
        assert_eq!(cfg.vision_model.as_deref(), Some("m"));
        let cfg = LlmConfig::from_env(env(&[
            ("AUDITOR_VISION_MODEL", "OFF"),
            ("AUDITOR_LLM_WARMUP", "0"),
        ]))
        .unwrap();
        assert_eq!(cfg.vision_model, None);
        assert!(!cfg.warm_up);
    }

    #[test]
    fn reads_every_variable() {
        let cfg = LlmConfig::from_env(env(&[
            ("OPENAI_BASE_URL", "http://localhost:8080/v1/"),
            ("AUDITOR_MODEL", "m"),
            ("AUDITOR_VISION_MODEL", "v"),
            ("AUDITOR_LLM_TIMEOUT", "2.5"),
            ("AUDITOR_MAX_CONCURRENCY", "7"),
            ("AUDITOR_RPM", "120"),
            ("AUDITOR_LLM_MAX_RETRIES", "0"),
        ]))
        .unwrap();
        assert!(cfg.is_configured());
        assert_eq!(cfg.base_url.as_deref(), Some("http://localhost:8080/v1"));
        assert_eq!(cfg.model, "m");
        assert_eq!(cfg.vision_model.as_deref(), Some("v"));
        assert_eq!(cfg.timeout, Duration::from_millis(2500));
        assert_eq!(cfg.max_concurrency, 7);
        assert_eq!(cfg.rpm, Some(120));
        assert_eq!(cfg.max_retries, 0);
    }

    #[test]
    fn key_alone_configures_and_is_never_printed() {
        let cfg = LlmConfig::from_env(env(&[("OPENAI_API_KEY", "sk-secret")])).unwrap();
        assert!(cfg.is_configured());
        assert!(!format!("{cfg:?}").contains("sk-secret"));
    }

    #[test]
    fn invalid_values_name_the_variable() {
        for (var, val) in [
            ("AUDITOR_LLM_TIMEOUT", "soon"),
            ("AUDITOR_LLM_TIMEOUT", "0"),
            ("AUDITOR_LLM_TIMEOUT", "-3"),
            ("AUDITOR_MAX_CONCURRENCY", "0"),
            ("AUDITOR_MAX_CONCURRENCY", "many"),
            ("AUDITOR_RPM", "1.5"),
            ("AUDITOR_LLM_MAX_RETRIES", "-1"),
            ("AUDITOR_LLM_WARMUP", "maybe"),
            ("OPENAI_BASE_URL", "localhost:8080"),
            ("OPENAI_BASE_URL", "ftp://x/v1"),
        ] {
            let err = LlmConfig::from_env(env(&[(var, val)])).unwrap_err();
            assert_eq!(err.variable, var);
            let msg = err.to_string();
            assert!(msg.contains(var) && msg.contains(val), "{msg}");
        }
    }

    #[test]
    fn empty_values_count_as_unset() {
        let cfg =
            LlmConfig::from_env(env(&[("OPENAI_API_KEY", " "), ("AUDITOR_RPM", "")])).unwrap();
        assert!(!cfg.is_configured());
        assert_eq!(cfg.rpm, None);
    }
}
