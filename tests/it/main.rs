//! The integration tests, compiled as one test binary (one link of the library and its
//! dependencies instead of one per file). A file here is a module; the shared fixtures are
//! included once below.
//!
//! Kept apart, each in its own process (`tests/*.rs`), are the tests that change
//! process-wide state: `telemetry_actors`, `telemetry_genai` and `telemetry_genai_content`
//! install the global tracing subscriber, `telemetry_interrupt` installs the Ctrl-C handler
//! and re-runs its own binary, and `pdf_unavailable` sets the environment before PDFium is
//! bound.

#[path = "../batch_support/mod.rs"]
mod batch_support;
#[path = "../llm_support/mod.rs"]
mod llm_support;
#[path = "../pg_support/mod.rs"]
mod pg_support;
#[path = "../review_support/mod.rs"]
mod review_support;
#[path = "../telemetry_support/mod.rs"]
mod telemetry_support;

mod audit_end_to_end;
mod batch_cache;
mod batch_cli;
mod batch_postgres;
mod cli_bad_input;
mod graph_differential;
mod graph_runtime;
mod hostile;
mod injection;
mod justice_pipeline;
mod llm_judges;
mod pdf_bad;
mod pdf_ingest;
mod pdf_provision;
mod renaming;
mod repo_idioms;
mod repo_investigate;
mod report_claims;
mod report_depth;
mod report_html;
mod review_browser;
mod review_cli;
mod review_http;
mod similarity;
mod supervision;
mod telemetry_llm_audit;
mod telemetry_logs;
mod telemetry_otlp;
mod vision_inspect;
