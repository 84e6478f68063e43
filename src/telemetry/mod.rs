//! Observability: logs on stderr and, when asked for, traces exported over OTLP.
//!
//! - **Logs**: human-readable on stderr by default, one JSON object per line with
//!   `--log-format json`. The level comes from `-v`/`-q`; `RUST_LOG` wins when set.
//! - **Traces**: every span of the run (audit, detectives, barriers, judges, LLM calls, Chief
//!   Justice, restarts) is exported with OTLP over HTTP/protobuf when
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set. Without either
//!   variable no exporter exists: spans below the log level are disabled by `tracing`'s filter
//!   and cost a relaxed atomic load.
//! - **LLM spans** follow the OpenTelemetry GenAI semantic conventions: see [`genai`].
//!
//! Standard variables honoured: `OTEL_EXPORTER_OTLP_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS` (and `..._TRACES_HEADERS`),
//! `OTEL_EXPORTER_OTLP_PROTOCOL` (and `..._TRACES_PROTOCOL`; `http/protobuf` only),
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME` (default `auditor`),
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none`.
//! `AUDITOR_TRACE_CONTENT=1` adds prompt and completion text to LLM spans.
//!
//! Header values and API keys never appear in logs, spans or error messages: configuration
//! errors name the variable and the entry, never its value, and [`redact`] scrubs known secrets
//! from any text put on a span.
//!
//! ```no_run
//! use auditor::telemetry::{self, LogFormat, LogOptions, TelemetryConfig};
//! # fn run() -> i32 { 0 }
//! fn main_with_exit_code() -> i32 {
//!     let cfg = match TelemetryConfig::from_env(LogOptions { verbose: 0, quiet: false, format: LogFormat::Text }) {
//!         Ok(cfg) => cfg,
//!         Err(e) => { eprintln!("error: {e}"); return 2; }
//!     };
//!     let guard = match telemetry::init(&cfg) {
//!         Ok(g) => g,
//!         Err(e) => { eprintln!("error: {e}"); return 2; }
//!     };
//!     let code = run();
//!     drop(guard); // flushes and shuts the exporter down before process::exit
//!     code
//! }
//! ```

pub mod genai;
pub mod stage;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::collections::HashMap;
use std::fmt;
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The service name used when neither `OTEL_SERVICE_NAME` nor a `service.name` in
/// `OTEL_RESOURCE_ATTRIBUTES` is given.
pub const DEFAULT_SERVICE_NAME: &str = "auditor";

/// How long the exporter may take to flush the last spans when the process ends.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Log format on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// What the command line says about logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOptions {
    /// `-v` count: 0 warn, 1 info, 2 debug, 3+ trace.
    pub verbose: u8,
    /// `-q`: errors only.
    pub quiet: bool,
    pub format: LogFormat,
}

impl LogOptions {
    /// The filter directive used when `RUST_LOG` is not set.
    /// The log filter without `RUST_LOG`. async-openai's own logs are off: it logs a response
    /// it cannot parse whole, at ERROR (our client reports such failures itself, bounded).
    pub fn default_directive(&self) -> &'static str {
        if self.quiet {
            return "error,async_openai=off";
        }
        match self.verbose {
            0 => "warn,async_openai=off",
            1 => "info,async_openai=off",
            2 => "debug,async_openai=off",
            _ => "trace,async_openai=off",
        }
    }
}

/// Everything [`init`] needs, resolved from the command line and the environment.
#[derive(Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    pub format: LogFormat,
    /// The stderr log filter (`RUST_LOG` when set, else from `-v`/`-q`).
    pub log_filter: String,
    /// Where the filter came from, for error messages.
    pub log_filter_source: &'static str,
    /// `None`: no exporter at all.
    pub otlp: Option<OtlpConfig>,
    /// Record prompt and completion text on LLM spans (`AUDITOR_TRACE_CONTENT=1`).
    pub trace_content: bool,
    /// Values that must never appear in telemetry (header values, API keys).
    pub secrets: Vec<String>,
}

/// OTLP/HTTP export settings.
#[derive(Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// Full URL the spans are posted to (`.../v1/traces`).
    pub traces_endpoint: String,
    /// The variable the endpoint came from.
    pub endpoint_source: &'static str,
    /// Extra HTTP headers (e.g. `x-api-key` for LangSmith). Values are secrets.
    pub headers: Vec<(String, String)>,
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, parsed.
    pub resource_attributes: Vec<(String, String)>,
}

impl fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpConfig")
            .field("traces_endpoint", &redact_url(&self.traces_endpoint))
            .field("endpoint_source", &self.endpoint_source)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| format!("{k}=<redacted>"))
                    .collect::<Vec<_>>(),
            )
            .field("service_name", &self.service_name)
            .field("resource_attributes", &self.resource_attributes)
            .finish()
    }
}

impl fmt::Debug for TelemetryConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetryConfig")
            .field("format", &self.format)
            .field("log_filter", &self.log_filter)
            .field("log_filter_source", &self.log_filter_source)
            .field("otlp", &self.otlp)
            .field("trace_content", &self.trace_content)
            .field("secrets", &format!("<{} redacted>", self.secrets.len()))
            .finish()
    }
}

/// A telemetry setting that cannot be used. Messages name the variable and say how to fix
/// it; they never contain header values.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("{var}: {problem}")]
    InvalidVariable { var: &'static str, problem: String },
    #[error("{var}: {shown} is not valid UTF-8 once percent-decoded")]
    NotUtf8 {
        var: &'static str,
        shown: String,
        #[source]
        source: std::str::Utf8Error,
    },
    #[error(
        "{var}={value} is not supported: auditor exports traces with OTLP over HTTP. Set {var}=http/protobuf (or unset it) and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (usually 4318, not the gRPC port 4317)"
    )]
    UnsupportedProtocol { var: &'static str, value: String },
    #[error(
        "{source_name} is not a valid log filter ({source}): use e.g. RUST_LOG=info or RUST_LOG=auditor=debug,warn"
    )]
    InvalidLogFilter {
        source_name: &'static str,
        #[source]
        source: tracing_subscriber::filter::ParseError,
    },
    /// The exporter refused its settings. The message shows the source's text redacted (a
    /// header value may be in it): print this error, never the source's own text.
    #[error("could not set up the OTLP exporter: {}", redact(&.0.to_string()))]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
    /// The last spans were not exported. The message shows the source's text redacted: print
    /// this error, never the source's own text.
    #[error(
        "the last spans could not be sent to {endpoint}: {} (is the collector running and reachable?)",
        redact(&.source.to_string())
    )]
    Flush {
        endpoint: String,
        #[source]
        source: opentelemetry_sdk::error::OTelSdkError,
    },
    #[error("logging was already initialised in this process")]
    AlreadyInitialised,
}

impl TelemetryConfig {
    /// Resolves the configuration from the command line and the process environment.
    pub fn from_env(log: LogOptions) -> Result<Self, TelemetryError> {
        Self::from_lookup(log, |k| std::env::var(k).ok())
    }

    /// Resolves the configuration from the command line and a variable lookup (pure).
    pub fn from_lookup(
        log: LogOptions,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, TelemetryError> {
        // Per the OTel spec, an empty variable is the same as an unset one.
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        let (log_filter, log_filter_source) = match get("RUST_LOG") {
            Some(v) => (v, "RUST_LOG"),
            None => (log.default_directive().to_string(), "-v/-q"),
        };
        let trace_content = match get("AUDITOR_TRACE_CONTENT").as_deref().map(str::trim) {
            None | Some("0") | Some("false") => false,
            Some("1") | Some("true") => true,
            Some(_) => {
                return Err(TelemetryError::InvalidVariable {
                    var: "AUDITOR_TRACE_CONTENT",
                    problem: "expected 1 (record prompts and completions on LLM spans) or 0".into(),
                });
            }
        };
        let otlp = otlp_from_lookup(&get)?;
        let mut secrets: Vec<String> = otlp
            .iter()
            .flat_map(|o| o.headers.iter().map(|(_, v)| v.clone()))
            .collect();
        for var in [
            "OPENAI_API_KEY",
            "AZURE_OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "LANGSMITH_API_KEY",
            "LANGCHAIN_API_KEY",
            "LANGFUSE_SECRET_KEY",
        ] {
            if let Some(v) = get(var) {
                secrets.push(v);
            }
        }
        secrets.retain(|s| s.len() >= 4);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Ok(TelemetryConfig {
            format: log.format,
            log_filter,
            log_filter_source,
            otlp,
            trace_content,
            secrets,
        })
    }
}

fn otlp_from_lookup(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<Option<OtlpConfig>, TelemetryError> {
    if get("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if let Some(exporters) = get("OTEL_TRACES_EXPORTER") {
        let exporters = exporters.trim();
        if exporters.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        if !exporters.eq_ignore_ascii_case("otlp") {
            return Err(TelemetryError::InvalidVariable {
                var: "OTEL_TRACES_EXPORTER",
                problem: format!(
                    "\"{exporters}\" is not supported: use otlp (the default) or none"
                ),
            });
        }
    }
    let (traces_endpoint, endpoint_source) =
        if let Some(v) = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            // The signal-specific endpoint is used as is.
            (v.trim().to_string(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        } else if let Some(v) = get("OTEL_EXPORTER_OTLP_ENDPOINT") {
            (
                format!("{}/v1/traces", v.trim().trim_end_matches('/')),
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            )
        } else {
            return Ok(None);
        };
    match url::Url::parse(&traces_endpoint) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {}
        Ok(u) => {
            return Err(TelemetryError::InvalidVariable {
                var: endpoint_source,
                problem: format!(
                    "the scheme {}: is not supported: give an http:// or https:// URL, e.g. http://localhost:4318",
                    u.scheme()
                ),
            });
        }
        Err(e) => {
            return Err(TelemetryError::InvalidVariable {
                var: endpoint_source,
                problem: format!(
                    "\"{}\" is not a URL ({e}): give e.g. http://localhost:4318",
                    redact_url(&traces_endpoint)
                ),
            });
        }
    }
    for var in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(p) = get(var) {
            let p = p.trim();
            if p != "http/protobuf" {
                return Err(TelemetryError::UnsupportedProtocol {
                    var,
                    value: p.to_string(),
                });
            }
            break;
        }
    }
    let headers = match get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") {
        Some(v) => parse_headers("OTEL_EXPORTER_OTLP_TRACES_HEADERS", &v)?,
        None => match get("OTEL_EXPORTER_OTLP_HEADERS") {
            Some(v) => parse_headers("OTEL_EXPORTER_OTLP_HEADERS", &v)?,
            None => vec![],
        },
    };
    let resource_attributes = match get("OTEL_RESOURCE_ATTRIBUTES") {
        Some(v) => parse_key_values("OTEL_RESOURCE_ATTRIBUTES", &v, false)?,
        None => vec![],
    };
    let service_name = get("OTEL_SERVICE_NAME")
        .map(|s| s.trim().to_string())
        .or_else(|| {
            resource_attributes
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string());
    Ok(Some(OtlpConfig {
        traces_endpoint,
        endpoint_source,
        headers,
        service_name,
        resource_attributes,
    }))
}

/// Parses `key1=value1,key2=value2` (W3C baggage style, values percent-encoded), the format of
/// `OTEL_EXPORTER_OTLP_HEADERS`. Errors name the entry, never its value.
pub fn parse_headers(
    var: &'static str,
    raw: &str,
) -> Result<Vec<(String, String)>, TelemetryError> {
    let pairs = parse_key_values(var, raw, true)?;
    for (i, (k, _)) in pairs.iter().enumerate() {
        if !k
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return Err(TelemetryError::InvalidVariable {
                var,
                problem: format!(
                    "entry {} has the header name \"{k}\", which is not a valid HTTP header name",
                    i + 1
                ),
            });
        }
    }
    Ok(pairs)
}

fn parse_key_values(
    var: &'static str,
    raw: &str,
    secret_values: bool,
) -> Result<Vec<(String, String)>, TelemetryError> {
    let mut out = Vec::new();
    for (i, entry) in raw.split(',').enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let shown = if secret_values {
            format!("entry {}", i + 1)
        } else {
            format!("entry {} (\"{entry}\")", i + 1)
        };
        let Some((k, v)) = entry.split_once('=') else {
            return Err(TelemetryError::InvalidVariable {
                var,
                problem: format!(
                    "{shown} is not of the form key=value: separate entries with commas, e.g. {var}=key1=value1,key2=value2"
                ),
            });
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(TelemetryError::InvalidVariable {
                var,
                problem: format!("{shown} has an empty key"),
            });
        }
        let v = percent_encoding::percent_decode_str(v.trim())
            .decode_utf8()
            .map_err(|source| TelemetryError::NotUtf8 {
                var,
                shown: shown.clone(),
                source,
            })?;
        out.push((k.to_string(), v.into_owned()));
    }
    Ok(out)
}

/// A URL without its user info, query and fragment (which may carry credentials).
pub fn redact_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) => {
            let had_secret = !u.username().is_empty() || u.password().is_some();
            let _ = u.set_username("");
            let _ = u.set_password(None);
            let had_query = u.query().is_some() || u.fragment().is_some();
            u.set_query(None);
            u.set_fragment(None);
            let mut s = u.to_string();
            if had_secret || had_query {
                s.push_str(" (credentials/query redacted)");
            }
            s
        }
        Err(_) => "<unparsable URL>".to_string(),
    }
}

static SECRETS: OnceLock<Vec<String>> = OnceLock::new();
static TRACE_CONTENT: AtomicBool = AtomicBool::new(false);

/// `text` with every known secret (OTLP header values, API keys from the environment) replaced
/// by `[REDACTED]`. Use it on any free text put on a span or a log line.
pub fn redact(text: &str) -> std::borrow::Cow<'_, str> {
    redact_with(text, SECRETS.get().map(Vec::as_slice).unwrap_or(&[]))
}

fn redact_with<'a>(text: &'a str, secrets: &[String]) -> std::borrow::Cow<'a, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    for s in secrets {
        if !s.is_empty() && out.contains(s.as_str()) {
            out = std::borrow::Cow::Owned(out.replace(s.as_str(), "[REDACTED]"));
        }
    }
    out
}

/// Whether prompt and completion text may be recorded on spans (`AUDITOR_TRACE_CONTENT=1`).
pub fn content_capture_enabled() -> bool {
    TRACE_CONTENT.load(Ordering::Relaxed)
}

/// Flushes and shuts down the span exporter when dropped (or on [`TelemetryGuard::shutdown`]).
/// Keep it alive for the whole run and drop it before `process::exit`.
#[must_use = "dropping the guard shuts the exporter down: keep it until the end of main"]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
    /// The traces endpoint, redacted, for error messages.
    endpoint: String,
}

impl TelemetryGuard {
    /// Flushes the spans still buffered and shuts the exporter down. Idempotent.
    pub fn shutdown(&mut self) -> Result<(), TelemetryError> {
        match self.provider.take() {
            None => Ok(()),
            Some(p) => shutdown_provider(&p).map_err(|source| TelemetryError::Flush {
                endpoint: self.endpoint.clone(),
                source,
            }),
        }
    }
}

fn shutdown_provider(p: &SdkTracerProvider) -> opentelemetry_sdk::error::OTelSdkResult {
    // Shutting the batch processor down exports what is still queued, bounded by the timeout
    // (a collector that does not answer cannot hold the process for long).
    p.shutdown_with_timeout(SHUTDOWN_TIMEOUT)
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::warn!(error = %redact(&e.to_string()), "traces were not fully exported");
        }
    }
}

/// Installs the global subscriber: the stderr log layer, plus the OpenTelemetry layer when
/// `cfg.otlp` is set. Call once, before any work, and keep the guard until the end.
pub fn init(cfg: &TelemetryConfig) -> Result<TelemetryGuard, TelemetryError> {
    type Boxed = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(&cfg.log_filter)
        .map_err(|source| TelemetryError::InvalidLogFilter {
            source_name: cfg.log_filter_source,
            source,
        })?;
    let _ = USER_FORMAT.set(cfg.format);
    let ansi = cfg.format == LogFormat::Text
        && std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let fmt_layer: Boxed = match cfg.format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .fmt_fields(TextFields)
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };
    let mut layers: Vec<Boxed> = vec![fmt_layer];
    let mut provider = None;
    if let Some(otlp) = &cfg.otlp {
        let p = build_provider(otlp)?;
        let tracer = p.tracer("auditor");
        // The exported spans do not depend on the stderr level: everything the auditor
        // instruments at info and above.
        let otel_filter = tracing_subscriber::filter::Targets::new()
            .with_target("auditor", tracing::Level::INFO)
            // Judge verdicts are debug events on stderr (verbose) but always exported.
            .with_target("auditor::telemetry::genai", tracing::Level::DEBUG);
        layers.push(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(otel_filter)
                .boxed(),
        );
        provider = Some(p);
    }
    tracing_subscriber::registry()
        .with(layers)
        .try_init()
        .map_err(|_| TelemetryError::AlreadyInitialised)?;
    let _ = SECRETS.set(cfg.secrets.clone());
    TRACE_CONTENT.store(cfg.trace_content, Ordering::Relaxed);
    if let (Some(otlp), Some(_)) = (&cfg.otlp, &provider) {
        tracing::info!(
            endpoint = %redact_url(&otlp.traces_endpoint),
            service = %otlp.service_name,
            headers = ?otlp.headers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            content = cfg.trace_content,
            "exporting traces over OTLP/HTTP"
        );
    }
    if let Some(p) = &provider {
        FLUSH_BEFORE_EXIT.get_or_init(|| p.clone());
    }
    Ok(TelemetryGuard {
        provider,
        endpoint: cfg
            .otlp
            .as_ref()
            .map(|o| redact_url(&o.traces_endpoint))
            .unwrap_or_default(),
    })
}

fn build_provider(otlp: &OtlpConfig) -> Result<SdkTracerProvider, TelemetryError> {
    let headers: HashMap<String, String> = otlp.headers.iter().cloned().collect();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(otlp.traces_endpoint.clone())
        .with_headers(headers)
        .build()
        .map_err(TelemetryError::Exporter)?;
    let resource = Resource::builder_empty()
        .with_detector(Box::new(
            opentelemetry_sdk::resource::TelemetryResourceDetector,
        ))
        .with_attributes(
            otlp.resource_attributes
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        )
        .with_attributes([KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))])
        .with_service_name(otlp.service_name.clone())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// Human-readable fields: like tracing-subscriber's default, without the `otel.*` fields that
/// only steer the exporter (span name, kind, status).
struct TextFields;

impl<'writer> tracing_subscriber::fmt::FormatFields<'writer> for TextFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(
        &self,
        mut writer: tracing_subscriber::fmt::format::Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut visitor = TextVisitor {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct TextVisitor<'a, 'w> {
    writer: &'a mut tracing_subscriber::fmt::format::Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl tracing::field::Visit for TextVisitor<'_, '_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        let name = field.name();
        if self.result.is_err() || name.starts_with("otel.") {
            return;
        }
        let sep = if self.first { "" } else { " " };
        self.first = false;
        self.result = if name == "message" {
            write!(self.writer, "{sep}{value:?}")
        } else {
            write!(self.writer, "{sep}{name}={value:?}")
        };
    }
}

// ---------------------------------------------------------------------------------------------
// Messages for the user outside the log macros

static USER_FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// A message for the user on stderr that is not a log event (an error that ends the command,
/// a manifest row that is not graded): the plain text, or with `--log-format json` one JSON
/// object in the logs' shape, so that every stderr line parses as JSON.
pub fn print_to_user(format: LogFormat, level: tracing::Level, text: &str) {
    match format {
        LogFormat::Text => eprintln!("{text}"),
        LogFormat::Json => eprintln!(
            "{}",
            serde_json::json!({
                "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                "level": level.as_str(),
                "fields": { "message": text },
                "target": "auditor::cli",
            })
        ),
    }
}

/// [`print_to_user`] in the format [`init`] was given (plain text before it).
pub fn print_for_user(level: tracing::Level, text: &str) {
    print_to_user(
        USER_FORMAT.get().copied().unwrap_or(LogFormat::Text),
        level,
        text,
    );
}

// ---------------------------------------------------------------------------------------------
// Exit at once (a second Ctrl-C: see `crate::interrupt`)

static FLUSH_BEFORE_EXIT: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Sends the finished spans (at most 2 s) before the process exits without running
/// destructors (a second Ctrl-C). Does nothing without an exporter.
pub fn flush_before_exit() {
    if let Some(p) = FLUSH_BEFORE_EXIT.get() {
        let _ = p.shutdown_with_timeout(Duration::from_secs(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn opts() -> LogOptions {
        LogOptions {
            verbose: 0,
            quiet: false,
            format: LogFormat::Text,
        }
    }

    fn cfg(vars: &[(&str, &str)]) -> Result<TelemetryConfig, TelemetryError> {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TelemetryConfig::from_lookup(opts(), |k| map.get(k).cloned())
    }

    #[test]
    fn no_endpoint_means_no_exporter() {
        let c = cfg(&[("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=abc")]).unwrap();
        assert!(c.otlp.is_none());
        let c = cfg(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "  ")]).unwrap();
        assert!(c.otlp.is_none(), "an empty variable is unset");
    }

    #[test]
    fn generic_endpoint_gets_the_traces_path_and_signal_endpoint_is_used_as_is() {
        let c = cfg(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318/")]).unwrap();
        let o = c.otlp.unwrap();
        assert_eq!(o.traces_endpoint, "http://localhost:4318/v1/traces");
        assert_eq!(o.service_name, "auditor");
        let c = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://wrong:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://api.smith.langchain.com/otel/v1/traces",
            ),
        ])
        .unwrap();
        assert_eq!(
            c.otlp.unwrap().traces_endpoint,
            "https://api.smith.langchain.com/otel/v1/traces"
        );
    }

    #[test]
    fn disabled_sdk_or_none_exporter_means_no_exporter() {
        let c = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ])
        .unwrap();
        assert!(c.otlp.is_none());
        let c = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ])
        .unwrap();
        assert!(c.otlp.is_none());
        let e = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
            ("OTEL_TRACES_EXPORTER", "zipkin"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("OTEL_TRACES_EXPORTER"), "{e}");
    }

    #[test]
    fn grpc_and_json_protocols_are_clear_errors() {
        for p in ["grpc", "http/json"] {
            let e = cfg(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4317"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", p),
            ])
            .unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(p) && msg.contains("http/protobuf"), "{msg}");
        }
        let ok = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(ok.is_ok(), "the signal-specific protocol wins");
    }

    #[test]
    fn bad_endpoints_name_the_variable() {
        let e = cfg(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")]).unwrap_err();
        assert!(e.to_string().contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{e}");
        let e = cfg(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "not a url")]).unwrap_err();
        assert!(
            e.to_string().contains("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            "{e}"
        );
    }

    #[test]
    fn headers_are_parsed_decoded_and_never_shown() {
        let c = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-api-key=lsv2_SECRET%3D1, Langsmith-Project = audits",
            ),
        ])
        .unwrap();
        let o = c.otlp.clone().unwrap();
        assert_eq!(
            o.headers,
            vec![
                ("x-api-key".to_string(), "lsv2_SECRET=1".to_string()),
                ("Langsmith-Project".to_string(), "audits".to_string())
            ]
        );
        let debug = format!("{c:?}");
        assert!(!debug.contains("lsv2_SECRET"), "{debug}");
        assert!(debug.contains("x-api-key"), "{debug}");
        assert!(c.secrets.contains(&"lsv2_SECRET=1".to_string()));

        let e = cfg(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=ok,TOPSECRETVALUE"),
        ])
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("entry 2"), "{msg}");
        assert!(!msg.contains("TOPSECRETVALUE"), "{msg}");
    }

    #[test]
    fn service_name_precedence() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318");
        let c = cfg(&[base, ("OTEL_RESOURCE_ATTRIBUTES", "service.name=a,team=x")]).unwrap();
        let o = c.otlp.unwrap();
        assert_eq!(o.service_name, "a");
        assert_eq!(o.resource_attributes[1], ("team".into(), "x".into()));
        let c = cfg(&[
            base,
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=a"),
            ("OTEL_SERVICE_NAME", "b"),
        ])
        .unwrap();
        assert_eq!(c.otlp.unwrap().service_name, "b");
        let e = cfg(&[base, ("OTEL_RESOURCE_ATTRIBUTES", "novalue")]).unwrap_err();
        assert!(e.to_string().contains("OTEL_RESOURCE_ATTRIBUTES"), "{e}");
    }

    #[test]
    fn rust_log_wins_over_flags() {
        let c = cfg(&[("RUST_LOG", "auditor=debug")]).unwrap();
        assert_eq!(c.log_filter, "auditor=debug");
        let c = cfg(&[]).unwrap();
        assert_eq!(c.log_filter, "warn,async_openai=off");
        let q = LogOptions {
            quiet: true,
            ..opts()
        };
        assert_eq!(q.default_directive(), "error,async_openai=off");
        let v = LogOptions {
            verbose: 2,
            ..opts()
        };
        assert_eq!(v.default_directive(), "debug,async_openai=off");
    }

    #[test]
    fn trace_content_must_be_explicit() {
        assert!(!cfg(&[]).unwrap().trace_content);
        assert!(
            cfg(&[("AUDITOR_TRACE_CONTENT", "1")])
                .unwrap()
                .trace_content
        );
        assert!(cfg(&[("AUDITOR_TRACE_CONTENT", "yes please")]).is_err());
    }

    #[test]
    fn api_keys_are_secrets_and_redacted() {
        let c = cfg(&[("OPENAI_API_KEY", "sk-SECRET")]).unwrap();
        assert_eq!(c.secrets, vec!["sk-SECRET".to_string()]);
        assert_eq!(
            redact_with("key sk-SECRET used", &c.secrets),
            "key [REDACTED] used"
        );
        assert_eq!(redact_with("clean", &c.secrets), "clean");
    }

    #[test]
    fn text_logs_hide_exporter_only_fields() {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buf(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0
                    .lock()
                    .map_err(|_| std::io::ErrorKind::Other)?
                    .extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let writer = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .fmt_fields(TextFields)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!(
                "barrier",
                "otel.name" = "barrier detectives",
                barrier = "detectives",
                arrived = tracing::field::Empty
            );
            span.record("arrived", 3);
            span.in_scope(|| tracing::info!(kind = "x", "released"));
        });
        let out = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert!(
            out.contains("barrier{barrier=\"detectives\" arrived=3}"),
            "{out}"
        );
        assert!(out.contains("released kind=\"x\""), "{out}");
        assert!(!out.contains("otel."), "{out}");
    }

    #[test]
    fn urls_lose_credentials() {
        let r = redact_url("https://user:pw@host:4318/v1/traces?key=abc");
        assert!(!r.contains("pw") && !r.contains("abc"), "{r}");
        assert!(r.starts_with("https://host:4318/v1/traces"), "{r}");
    }
}
