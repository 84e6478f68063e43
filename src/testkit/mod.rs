//! Builders for test fixtures (git repositories with dated commits, PDFs made with PDFium),
//! shared by integration tests and benchmarks. Compiled for them only: the `testkit` feature,
//! which the crate's dev-dependency on itself turns on (`auditor sample` builds with
//! [`crate::sample`], which the builders reuse).

pub mod git;
pub mod pdf;
