//! Builders for test fixtures (git repositories with dated commits, PDFs made with PDFium),
//! shared by unit tests, integration tests, benchmarks and `auditor sample`.

pub mod git;
pub mod pdf;
