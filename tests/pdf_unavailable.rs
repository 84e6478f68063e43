//! In its own process (it sets the environment before PDFium is bound): a broken
//! `PDFIUM_DYNAMIC_LIB_PATH` is a clear error for every call, never a panic nor a silent fallback.

use auditor::pdf::{PdfError, analyse_bytes};

#[test]
fn a_broken_override_is_a_clear_error_for_every_call() {
    // SAFETY: this file holds a single test, so no other thread reads the environment.
    unsafe { std::env::set_var("PDFIUM_DYNAMIC_LIB_PATH", "/nonexistent/libpdfium.so") };
    for _ in 0..2 {
        match analyse_bytes(b"%PDF-1.7\n", "report.pdf", &[]) {
            Err(PdfError::Unavailable(e)) => {
                let m = e.to_string();
                assert!(m.contains("PDFIUM_DYNAMIC_LIB_PATH"), "{m}");
                assert!(m.contains("/nonexistent/libpdfium.so"), "{m}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }
}
