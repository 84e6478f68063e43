//! DocAnalyst core: PDFium provisioning and ingestion, chunking, BM25 retrieval, concept
//! classification, claimed-path extraction and cross-referencing, image extraction.
//!
//! Codemap (one role per module):
//! - [`pdfium`]: find/fetch `libpdfium.so`, bind once, serialise all PDFium work;
//! - [`ingest`]: text normalisation, sentences, chunking (pure);
//! - [`retrieval`]: BM25 over chunks (pure);
//! - [`concepts`]: rubric concepts explained vs. buzzwords (pure);
//! - [`paths`]: claimed repository paths and their check against the repo's files (pure);
//!   [`tree`] reads directory trees drawn in the report back into paths; both take what reads as
//!   a repository file name from [`file_names`] (pure);
//! - [`claims`]: feature claims ("the judges run in parallel") and their check against the
//!   RepoInvestigator's code facts (pure);
//! - [`images`]: raster images and rendered vector-drawing pages (PDFium); the DocAnalyst gets
//!   them from [`analyse_bytes`], the VisionInspector alone from [`extract_diagrams`] (no text
//!   facts built), both through the same [`images::DiagramScan`];
//! - [`evidence`]: [`Evidence`] for the rubric's `pdf_report` dimensions (pure).
//!
//! Invariants: PDFium is touched only inside [`pdfium::with_pdfium`]; everything after
//! [`analyse_bytes`] works on plain [`PdfFacts`]; a path present in the repository is never
//! `hallucinated`; nothing here panics on input.

pub(crate) mod claims;
pub(crate) mod concepts;
pub(crate) mod evidence;
pub(crate) mod file_names;
pub mod images;
pub(crate) mod ingest;
pub mod kind;
pub(crate) mod paths;
pub mod pdfium;
pub(crate) mod retrieval;
pub(crate) mod ties;
pub(crate) mod tree;

pub use concepts::{Classification, ConceptFinding};
pub use ingest::{Chunk, ChunkBy};
pub use paths::{ClaimedPath, PathCounts, PathStatus};

use crate::model::Evidence;
use crate::rubric::Dimension;
use pdfium_render::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

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
    /// Pages read (their text is in `page_text`).
    pub pages: u32,
    /// Pages of the document (more than `pages` when the reading stopped at
    /// [`MAX_TEXT_PAGES`]); 0 in facts stored by an earlier version: read as `pages`.
    #[serde(default)]
    pub total_pages: u32,
    /// Normalised text of each page (index 0 = page 1).
    #[serde(default)]
    pub page_text: Vec<String>,
    /// Retrieval chunks with their page numbers.
    #[serde(default)]
    pub chunks: Vec<Chunk>,
    /// The default concepts, classified (dimension-specific concepts are classified in
    /// [`evidence`]).
    #[serde(default)]
    pub concepts: Vec<ConceptFinding>,
    /// Paths the report mentions; `unchecked` until [`cross_reference`], which keeps at most
    /// [`paths::MAX_LISTED`] of them (the hallucinated ones first) and counts them all in
    /// `path_counts`.
    #[serde(default)]
    pub claimed_paths: Vec<ClaimedPath>,
    /// Every claimed path counted by status, once checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_counts: Option<paths::PathCounts>,
    /// Features the report claims; `unchecked` until [`cross_check_claims`].
    #[serde(default)]
    pub feature_claims: Vec<claims::FeatureClaim>,
    pub images: Vec<DiagramImage>,
    /// Pages whose text holds a diagram typed as characters (never rendered as a diagram).
    #[serde(default)]
    pub text_drawings: Vec<images::TextDrawing>,
    /// Final or interim, and what says so.
    #[serde(default)]
    pub kind: kind::KindBasis,
    /// What a reader should know about the extraction (caps hit, pages skipped, ...).
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub index: retrieval::Bm25Index,
}

impl PdfFacts {
    /// The name used in evidence locations: `reports/final_report.pdf p.3`.
    pub fn display_name(&self) -> &str {
        display_name(&self.source)
    }

    /// Pages of the document (`pages` for facts stored without the count).
    pub fn document_pages(&self) -> u32 {
        self.total_pages.max(self.pages)
    }

    /// Whether the text of every page was read.
    pub fn read_whole(&self) -> bool {
        self.pages >= self.document_pages()
    }

    /// Builds facts from page texts (already extracted): normalisation, chunks, index, concepts,
    /// claimed paths. Pure; [`analyse_bytes`] calls it after PDFium extraction. `criteria`: the
    /// names of the rubric's criteria (a sentence naming one claims no feature by those words).
    pub fn from_pages(source: &str, raw_pages: &[String], criteria: &[String]) -> PdfFacts {
        let page_text: Vec<String> = raw_pages
            .iter()
            .map(|p| ingest::normalise_page(p))
            .collect();
        let chunks = ingest::chunk(&page_text, ChunkBy::default());
        let index = retrieval::Bm25Index::build(&chunks);
        let sentences = ingest::sentences(&page_text);
        let defaults: Vec<String> = concepts::DEFAULT_CONCEPTS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let concepts = concepts::classify(&defaults, &sentences);
        let claimed_paths = paths::extract(&page_text);
        let feature_claims = claims::extract(&sentences, criteria);
        let kind = kind::decide(page_text.first().map(String::as_str).unwrap_or(""), source);
        PdfFacts {
            source: source.to_string(),
            pages: raw_pages.len() as u32,
            total_pages: raw_pages.len() as u32,
            page_text,
            chunks,
            concepts,
            claimed_paths,
            path_counts: None,
            feature_claims,
            images: Vec::new(),
            text_drawings: Vec::new(),
            kind,
            notes: Vec::new(),
            index,
        }
    }
}

/// The name used in evidence locations for a PDF given as `source` (path, or `repo:<path>`).
pub fn display_name(source: &str) -> &str {
    let s = source.strip_prefix("repo:").unwrap_or(source);
    if s.is_empty() { "report.pdf" } else { s }
}

/// Why the PDF file given could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    #[error(
        "PDF report {0} does not exist: check the path given to --pdf (a relative path is read from the current directory, not from the repository; leave --pdf out to read the report inside the repository)"
    )]
    Missing(String),
    #[error("PDF report {0} is not a file (a directory?): give the path of the .pdf file to --pdf")]
    NotAFile(String),
    /// Opening or reading failed (`hint`: what to check, or nothing).
    #[error("PDF report {shown} cannot be read: {source}{hint}")]
    Io {
        shown: String,
        hint: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// Why a PDF could not be analysed. Messages say what, where and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// PDFium could not be found, fetched or loaded (shared: every later call fails the same way).
    #[error(transparent)]
    Unavailable(Arc<pdfium::Unavailable>),
    /// The file is missing or cannot be read.
    #[error(transparent)]
    Unreadable(Unreadable),
    #[error("{0}")]
    Empty(String),
    #[error("{0}")]
    NotAPdf(String),
    #[error("{0}")]
    Encrypted(String),
    #[error("{0}")]
    Corrupt(String),
    #[error("{0}")]
    TooLarge(String),
    /// No extractable text (scanned or image-only). The diagram images found are kept so the
    /// VisionInspector can still look at them.
    #[error("{message}")]
    NoText {
        message: String,
        pages: u32,
        images: Vec<DiagramImage>,
    },
}

impl PdfError {
    /// A short machine-readable name (`not_a_pdf`, `encrypted`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            PdfError::Unavailable(_) => "pdfium_unavailable",
            PdfError::Unreadable(_) => "unreadable",
            PdfError::Empty(_) => "empty",
            PdfError::NotAPdf(_) => "not_a_pdf",
            PdfError::Encrypted(_) => "encrypted",
            PdfError::Corrupt(_) => "corrupt",
            PdfError::TooLarge(_) => "too_large",
            PdfError::NoText { .. } => "no_text",
        }
    }
}

/// Largest PDF accepted, in bytes.
pub const MAX_BYTES: usize = 200 * 1024 * 1024;
/// Pages whose text is read; later pages are skipped with a note.
pub const MAX_TEXT_PAGES: u32 = 1000;
/// Fewer extractable letters than this per page on average means "no text" (a scan with page
/// numbers only).
const MIN_LETTERS_PER_PAGE: usize = 5;

fn header_ok(head: &[u8]) -> bool {
    head.windows(5).any(|w| w == b"%PDF-")
}

fn describe_non_pdf(head: &[u8]) -> &'static str {
    let lower: Vec<u8> = head.iter().take(64).map(u8::to_ascii_lowercase).collect();
    if head.starts_with(b"PK\x03\x04") {
        "it is a ZIP container (a .docx, .pptx or .zip?)"
    } else if lower.windows(5).any(|w| w == b"<html") || lower.windows(9).any(|w| w == b"<!doctype")
    {
        "it is an HTML page (a download link saved instead of the file?)"
    } else if head.starts_with(b"\x89PNG") || head.starts_with(b"\xff\xd8\xff") {
        "it is an image, not a PDF"
    } else if head.iter().take(256).all(|b| b.is_ascii()) {
        "it looks like plain text"
    } else {
        "its first bytes are not the PDF signature %PDF-"
    }
}

/// Cheap pre-flight check (exit 2 before anything runs): the file exists, is readable, is not
/// empty and starts like a PDF.
pub fn validate_path(path: &Path) -> Result<(), PdfError> {
    let shown = path.display();
    if !path.exists() {
        return Err(PdfError::Unreadable(Unreadable::Missing(shown.to_string())));
    }
    if !path.is_file() {
        return Err(PdfError::Unreadable(Unreadable::NotAFile(
            shown.to_string(),
        )));
    }
    let mut f = std::fs::File::open(path).map_err(|source| {
        PdfError::Unreadable(Unreadable::Io {
            shown: shown.to_string(),
            hint: ". Check its permissions",
            source,
        })
    })?;
    too_large(
        f.metadata().map(|m| m.len()).unwrap_or(0),
        &shown.to_string(),
    )?;
    let mut head = vec![0u8; 1024];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(source) => {
                return Err(PdfError::Unreadable(Unreadable::Io {
                    shown: shown.to_string(),
                    hint: "",
                    source,
                }));
            }
        }
    }
    head.truncate(n);
    if head.is_empty() {
        return Err(PdfError::Empty(format!(
            "PDF report {shown} is empty (0 bytes): the upload or export failed; export the report again"
        )));
    }
    if !header_ok(&head) {
        return Err(PdfError::NotAPdf(format!(
            "{shown} is not a PDF: {}. Export the report as PDF and pass that file to --pdf",
            describe_non_pdf(&head)
        )));
    }
    Ok(())
}

/// Validates, reads and analyses a PDF file (see [`analyse_bytes`]). Blocking (PDFium).
pub fn analyse_path(path: &Path, criteria: &[String]) -> Result<PdfFacts, PdfError> {
    validate_path(path)?;
    let bytes = read_bounded(path)?;
    analyse_bytes(&bytes, &path.display().to_string(), criteria)
}

fn too_large(len: u64, source: &str) -> Result<(), PdfError> {
    if len > MAX_BYTES as u64 {
        return Err(PdfError::TooLarge(format!(
            "PDF report {source} is {} MB, above the {} MB limit: compress its images or split it",
            len / (1024 * 1024),
            MAX_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// Reads a PDF file, never more than [`MAX_BYTES`]: the size is checked before reading, and
/// the read stops past the limit (the file may grow meanwhile). Blocking.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, PdfError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let unreadable = |source| {
        PdfError::Unreadable(Unreadable::Io {
            shown: shown.clone(),
            hint: "",
            source,
        })
    };
    let f = std::fs::File::open(path).map_err(unreadable)?;
    let len = f.metadata().map_err(unreadable)?.len();
    too_large(len, &shown)?;
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    too_large(bytes.len() as u64, &shown)?;
    Ok(bytes)
}

fn load_error(source: &str, e: PdfiumError) -> PdfError {
    match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
            PdfError::Encrypted(format!(
                "{source} is encrypted (password-protected) and cannot be read. Export or save the \
                 report without a password and run again"
            ))
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
            PdfError::Encrypted(format!(
                "{source} uses an unsupported security handler (encryption). Save it without \
                 encryption and run again"
            ))
        }
        other => PdfError::Corrupt(format!(
            "{source} is damaged and PDFium cannot open it ({other:?}): the file is probably \
             truncated or corrupt. Download or export the report again"
        )),
    }
}

/// Reads and analyses the PDF. Blocking (PDFium). `criteria`: the names of the rubric's
/// criteria, as the rubric writes them (see [`PdfFacts::from_pages`]).
pub fn analyse_bytes(
    bytes: &[u8],
    source: &str,
    criteria: &[String],
) -> Result<PdfFacts, PdfError> {
    analyse_bytes_with(bytes, source, &images::ImageCaps::default(), criteria)
}

/// Rejects what is not worth handing to PDFium: no bytes, too many bytes, no PDF signature.
fn check_bytes(bytes: &[u8], source: &str) -> Result<(), PdfError> {
    if bytes.is_empty() {
        return Err(PdfError::Empty(format!(
            "PDF report {source} is empty (0 bytes): the upload or export failed; export the report again"
        )));
    }
    too_large(bytes.len() as u64, source)?;
    let head = &bytes[..bytes.len().min(1024)];
    if !header_ok(head) {
        return Err(PdfError::NotAPdf(format!(
            "{source} is not a PDF: {}. Export the report as PDF",
            describe_non_pdf(head)
        )));
    }
    Ok(())
}

/// Opens the document; returns it with its page count (never 0).
fn open<'a>(
    pdfium: &'a Pdfium,
    bytes: &'a [u8],
    source: &str,
) -> Result<(PdfDocument<'a>, u32), PdfError> {
    let doc = pdfium
        .load_pdf_from_byte_slice(bytes, None)
        .map_err(|e| load_error(source, e))?;
    let total = doc.pages().len() as u32;
    if total == 0 {
        return Err(PdfError::Corrupt(format!(
            "{source} has no pages: the file is probably truncated or corrupt. Export the report again"
        )));
    }
    Ok((doc, total))
}

/// [`analyse_bytes`] with explicit image caps.
pub fn analyse_bytes_with(
    bytes: &[u8],
    source: &str,
    caps: &images::ImageCaps,
    criteria: &[String],
) -> Result<PdfFacts, PdfError> {
    check_bytes(bytes, source)?;
    let (raw_pages, diagrams, mut notes) = pdfium::with_pdfium(|pdfium| {
        let (doc, total) = open(pdfium, bytes, source)?;
        let mut notes = Vec::new();
        let read = total.min(MAX_TEXT_PAGES);
        if read < total {
            notes.push(format!(
                "only the first {read} of {total} pages were read (limit {MAX_TEXT_PAGES})"
            ));
        }
        let mut raw_pages = Vec::with_capacity(read as usize);
        let mut scan = images::DiagramScan::default();
        for (i, page) in doc.pages().iter().enumerate().take(read as usize) {
            let page_no = i as u32 + 1;
            let text = match page.text() {
                Ok(t) => t.all(),
                Err(e) => {
                    notes.push(format!(
                        "page {page_no}: text could not be extracted ({e:?})"
                    ));
                    String::new()
                }
            };
            if images::DiagramScan::scans(i, caps) {
                scan.page(&page, page_no, caps, || images::text_drawing(&text));
            }
            raw_pages.push(text);
        }
        let (diagrams, mut scan_notes) = scan.finish(total, caps);
        notes.append(&mut scan_notes);
        Ok((raw_pages, diagrams, notes))
    })?;
    let text_chars: usize = raw_pages
        .iter()
        .map(|p| p.chars().filter(|c| c.is_alphabetic()).count())
        .sum();
    if text_chars < MIN_LETTERS_PER_PAGE * raw_pages.len().max(1) {
        return Err(PdfError::NoText {
            message: format!(
                "{source} has no extractable text ({} pages, {text_chars} letters): it is scanned or \
                 image-only. Export the report from its source document (not a scan or a screenshot), \
                 or run OCR on it first",
                raw_pages.len()
            ),
            pages: raw_pages.len() as u32,
            images: diagrams.images,
        });
    }
    let mut facts = PdfFacts::from_pages(source, &raw_pages, criteria);
    facts.total_pages = diagrams.pages;
    facts.images = diagrams.images;
    facts.text_drawings = diagrams.text_drawings;
    facts.notes.append(&mut notes);
    Ok(facts)
}

/// The report's diagram candidates only (what the VisionInspector needs): the same images,
/// caps and order as [`analyse_bytes`]' `images`, and the same typed diagrams, without
/// building the text facts. A page's text is extracted only when it has neither a raster image
/// nor a vector drawing (to look for a diagram typed as text). An image-only (scanned) PDF
/// yields its images. Blocking (PDFium). Notes on the scan (caps hit, undecodable images) are
/// logged at debug level.
pub fn extract_diagrams(bytes: &[u8], source: &str) -> Result<images::Diagrams, PdfError> {
    let (diagrams, notes) = extract_diagrams_with(bytes, source, &images::ImageCaps::default())?;
    for note in &notes {
        tracing::debug!(source, note = note.as_str(), "diagram extraction");
    }
    Ok(diagrams)
}

/// [`extract_diagrams`] with explicit image caps; also returns the notes on the scan.
pub fn extract_diagrams_with(
    bytes: &[u8],
    source: &str,
    caps: &images::ImageCaps,
) -> Result<(images::Diagrams, Vec<String>), PdfError> {
    check_bytes(bytes, source)?;
    pdfium::with_pdfium(|pdfium| {
        let (doc, total) = open(pdfium, bytes, source)?;
        let scanned = (total.min(MAX_TEXT_PAGES) as usize).min(caps.max_pages_scanned);
        let mut scan = images::DiagramScan::default();
        for (i, page) in doc.pages().iter().enumerate().take(scanned) {
            scan.page(&page, i as u32 + 1, caps, || {
                page.text()
                    .ok()
                    .and_then(|t| images::text_drawing(&t.all()))
            });
        }
        let (mut diagrams, notes) = scan.finish(total, caps);
        diagrams.source = display_name(source).to_string();
        Ok((diagrams, notes))
    })
}

/// Evidence for the `pdf_report` dimensions that needs only the PDF.
pub fn evidence(facts: &PdfFacts, dimensions: &[Dimension]) -> BTreeMap<String, Vec<Evidence>> {
    evidence::document_evidence(facts, dimensions)
}

/// Evidence computed at the aggregation barrier: the report's claimed paths checked against the
/// files of the audited commit (needs both detectives' output). Sets each claimed path's status.
pub fn cross_reference(
    facts: &mut PdfFacts,
    repo_files: &[String],
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    paths::check(&mut facts.claimed_paths, repo_files);
    paths::merge_duplicates(&mut facts.claimed_paths);
    let counts = paths::PathCounts::of(&facts.claimed_paths);
    if counts.total > paths::MAX_LISTED {
        facts.notes.push(format!(
            "the report names {} repository paths: every one was checked against the audited commit and counted; {} are listed (the hallucinated ones first)",
            counts.total,
            paths::MAX_LISTED
        ));
    }
    facts.path_counts = Some(counts);
    paths::keep_listed(&mut facts.claimed_paths);
    evidence::path_evidence(facts, repo_files.is_empty(), dimensions)
}

/// Evidence computed at the aggregation barrier: the report's feature claims checked against
/// the RepoInvestigator's code facts. Sets each claim's status.
pub fn cross_check_claims(
    facts: &mut PdfFacts,
    code: &crate::repo::python::PythonFacts,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    claims::check(&mut facts.feature_claims, code);
    evidence::claim_evidence(facts, dimensions)
}

/// Evidence computed at the aggregation barrier: whether each concept the report explains is
/// explained in the names of the repository's own code (`ties`); without the repository
/// (`code` = `None`), that it could not be checked.
pub fn cross_check_concepts(
    facts: &PdfFacts,
    repo: Option<(&[String], &crate::repo::python::PythonFacts)>,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    match repo {
        Some((files, code)) => evidence::tie_evidence(facts, files, code, dimensions),
        None => evidence::tie_unchecked(facts, dimensions),
    }
}

/// Excerpts of the report relevant to a question, bounded in size, with page numbers.
pub fn excerpts(facts: &PdfFacts, question: &str, max_chars: usize) -> Vec<(u32, String)> {
    if facts.index.len() == facts.chunks.len() {
        retrieval::excerpts(&facts.index, &facts.chunks, question, max_chars)
    } else {
        // facts deserialised without their index: build it for this query
        let index = retrieval::Bm25Index::build(&facts.chunks);
        retrieval::excerpts(&index, &facts.chunks, question, max_chars)
    }
}

/// The JSON for `auditor evidence --json` under the key `pdf`.
pub fn facts_json(facts: &PdfFacts) -> serde_json::Value {
    serde_json::json!({
        "source": facts.source,
        "pages": facts.pages,
        "chunks": facts.chunks.len(),
        "claimed_paths_not_listed": facts.claimed_paths.len().saturating_sub(paths::MAX_LISTED),
        "path_counts": facts.path_counts,
        "claimed_paths": facts.claimed_paths.iter().take(paths::MAX_LISTED).map(|c| {
            let mut v = serde_json::json!({
                "path": c.path,
                "status": c.status.as_str(),
                "page": c.page,
                "context": c.context,
            });
            if let Some(l) = c.line { v["line"] = l.into(); }
            if let Some(m) = &c.matched { v["matched"] = m.clone().into(); }
            if c.directory { v["directory"] = true.into(); }
            v
        }).collect::<Vec<_>>(),
        "feature_claims": facts.feature_claims.iter().map(|c| {
            let mut v = serde_json::json!({
                "feature": c.feature.as_str(),
                "status": c.status.as_str(),
                "page": c.page,
                "quote": c.quote,
                "mentions": c.mentions,
                "code": c.code,
                "code_location": c.code_location,
            });
            if let Some(f) = c.figure { v["figure"] = f.into(); }
            if c.denied { v["denied"] = true.into(); }
            v
        }).collect::<Vec<_>>(),
        "concepts": facts.concepts.iter().map(|c| {
            let mut v = serde_json::json!({
                "concept": c.concept,
                "classification": c.classification.as_str(),
                "page": c.page,
                "quote": c.quote,
                "mentions": c.mentions,
            });
            if let Some(content) = &c.content {
                v["passage"] = serde_json::json!({
                    "sentences": content.sentences,
                    "words": content.words,
                    "code_parts": content.parts,
                    "actions": content.actions,
                });
            }
            v
        }).collect::<Vec<_>>(),
        "images": facts.images.iter().map(|i| serde_json::json!({
            "page": i.page,
            "width": i.width,
            "height": i.height,
            "kind": i.kind,
        })).collect::<Vec<_>>(),
        "text_drawings": facts.text_drawings,
        "kind": facts.kind,
        "total_pages": facts.document_pages(),
        "notes": facts.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_path_rejects_missing_empty_and_non_pdf_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pdf");
        assert!(
            matches!(validate_path(&missing), Err(PdfError::Unreadable(m)) if m.to_string().contains("does not exist"))
        );
        assert!(matches!(
            validate_path(dir.path()),
            Err(PdfError::Unreadable(Unreadable::NotAFile(_)))
        ));
        let empty = dir.path().join("empty.pdf");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(validate_path(&empty), Err(PdfError::Empty(m)) if m.contains("0 bytes")));
        let html = dir.path().join("report.pdf");
        std::fs::write(&html, b"<!DOCTYPE html><html>").unwrap();
        assert!(matches!(validate_path(&html), Err(PdfError::NotAPdf(m)) if m.contains("HTML")));
        let ok = dir.path().join("ok.pdf");
        std::fs::write(&ok, b"%PDF-1.7\n...").unwrap();
        assert!(validate_path(&ok).is_ok());
    }

    #[test]
    fn from_pages_builds_every_fact_with_page_numbers() {
        let facts = PdfFacts::from_pages(
            "r.pdf",
            &[
                "Intro\nThe judges live in src/nodes/judges.py.".into(),
                "Dialectical Synthesis is implemented by three judge nodes that run in parallel and the chief justice merges their opinions. The ChiefJustice node applies deterministic rules to the three opinions.".into(),
            ],
            &[],
        );
        assert_eq!(facts.pages, 2);
        assert_eq!(facts.claimed_paths[0].path, "src/nodes/judges.py");
        assert_eq!(facts.claimed_paths[0].page, 1);
        let ds = facts
            .concepts
            .iter()
            .find(|c| c.concept == "Dialectical Synthesis")
            .unwrap();
        assert_eq!((ds.classification, ds.page), (Classification::Explained, 2));
        let ex = excerpts(&facts, "how is dialectical synthesis implemented", 500);
        assert_eq!(ex[0].0, 2);
        let j = facts_json(&facts);
        assert_eq!(j["claimed_paths"][0]["status"], "unchecked");
        assert_eq!(j["pages"], 2);
    }

    #[test]
    fn arbitrary_text_never_panics_the_pure_pipeline() {
        let alphabet: Vec<char> = "ab Z0./\\_-:`\"'\n\r\t\u{00A0}\u{1680}\u{3000}\u{00AD}\u{FB01}\u{2019}é漢•→│▼.py src/ C:\\ https:// 1."
            .chars()
            .collect();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..300 {
            let mut page = String::new();
            for _ in 0..(seed % 400) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                page.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            let mut facts = PdfFacts::from_pages("x.pdf", &[page.clone(), page], &[]);
            let files = vec!["src/graph.py".to_string(), "a.py".to_string()];
            paths::check(&mut facts.claimed_paths, &files);
            let _ = excerpts(&facts, "src graph py", 100);
            let _ = facts_json(&facts);
        }
    }
}
