//! Report rendering: Markdown through a handlebars template (escaping off), and the JSON
//! sidecar.
//!
//! STUB: being built (issue 2).

use crate::model::AuditReport;
use std::path::{Path, PathBuf};

pub const DEFAULT_TEMPLATE: &str = "# Audit\n";

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{0}")]
    Template(String),
    #[error("{0}")]
    Io(String),
}

pub fn render_markdown(report: &AuditReport, template: &str) -> Result<String, ReportError> {
    let _ = report;
    Ok(template.to_string())
}

pub fn write(
    report: &AuditReport,
    markdown_path: &Path,
    sidecar: &serde_json::Value,
) -> Result<(PathBuf, PathBuf), ReportError> {
    let md = render_markdown(report, DEFAULT_TEMPLATE)?;
    let json_path = markdown_path.with_extension("json");
    std::fs::write(markdown_path, md).map_err(|e| ReportError::Io(e.to_string()))?;
    std::fs::write(&json_path, sidecar.to_string()).map_err(|e| ReportError::Io(e.to_string()))?;
    Ok((markdown_path.to_path_buf(), json_path))
}
