//! DocAnalyst core: PDFium provisioning and ingestion, chunking, BM25 retrieval, concept
//! classification, claimed-path extraction and cross-referencing, image extraction.
//!
//! STUB: the interface below is the contract with the actor shell; the implementation is being
//! built (issue 4).

use crate::model::Evidence;
use crate::rubric::Dimension;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A diagram candidate taken from the PDF: an embedded raster image, or a page rendered because
/// it holds vector drawings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagramImage {
    pub page: u32,
    pub width: u32,
    pub height: u32,
    /// `raster` or `rendered_page`.
    pub kind: String,
    #[serde(skip)]
    pub png: Vec<u8>,
}

/// Everything the DocAnalyst found in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PdfFacts {
    /// Display name of the PDF (path given, or `repo:<path>`).
    pub source: String,
    pub pages: u32,
    pub images: Vec<DiagramImage>,
}

#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Unreadable(String),
}

/// Cheap pre-flight check (exit 2 before anything runs): the file exists and is readable.
pub fn validate_path(path: &Path) -> Result<(), PdfError> {
    if !path.is_file() {
        return Err(PdfError::Unreadable(format!(
            "PDF report {} does not exist or is not a file: check the path given to --pdf",
            path.display()
        )));
    }
    Ok(())
}

/// Reads and analyses the PDF. Blocking (PDFium).
pub fn analyse_bytes(bytes: &[u8], source: &str) -> Result<PdfFacts, PdfError> {
    let _ = bytes;
    Err(PdfError::Unavailable(format!(
        "DocAnalyst is not implemented yet ({source})"
    )))
}

/// Evidence for the `pdf_report` dimensions that needs only the PDF.
pub fn evidence(facts: &PdfFacts, dimensions: &[Dimension]) -> BTreeMap<String, Vec<Evidence>> {
    let _ = facts;
    dimensions
        .iter()
        .map(|d| (d.id.clone(), Vec::new()))
        .collect()
}

/// Evidence computed at the aggregation barrier: the report's claimed paths checked against the
/// files of the audited commit (needs both detectives' output).
pub fn cross_reference(
    facts: &mut PdfFacts,
    repo_files: &[String],
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let _ = (facts, repo_files);
    dimensions
        .iter()
        .map(|d| (d.id.clone(), Vec::new()))
        .collect()
}

/// Excerpts of the report relevant to a question, bounded in size, with page numbers.
pub fn excerpts(facts: &PdfFacts, question: &str, max_chars: usize) -> Vec<(u32, String)> {
    let _ = (facts, question, max_chars);
    Vec::new()
}

/// The JSON for `auditor evidence --json` under the key `pdf`.
pub fn facts_json(facts: &PdfFacts) -> serde_json::Value {
    serde_json::to_value(facts).unwrap_or_default()
}
