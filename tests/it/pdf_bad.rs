//! Bad PDFs: each gets a clear error naming the file and saying how to fix it, never a panic;
//! a very large document is analysed within bounds.

use auditor::pdf::{PdfError, analyse_bytes, analyse_path, validate_path};
use auditor::testkit::pdf::{
    PageSpec, build_pdf, encrypted_pdf, long_report, sample_report, truncated,
};

#[test]
fn zero_bytes_is_empty() {
    let e = analyse_bytes(b"", "reports/final_report.pdf", &[]).unwrap_err();
    assert!(matches!(e, PdfError::Empty(_)), "{e:?}");
    let m = e.to_string();
    assert!(
        m.contains("reports/final_report.pdf") && m.contains("0 bytes"),
        "{m}"
    );
}

#[test]
fn a_word_document_is_not_a_pdf() {
    let e = analyse_bytes(
        b"PK\x03\x04\x14\x00\x06\x00word/document.xml",
        "report.pdf",
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(&e, PdfError::NotAPdf(m) if m.contains("ZIP") && m.contains("report.pdf")),
        "{e:?}"
    );
}

#[test]
fn an_encrypted_pdf_says_so() {
    let e = analyse_bytes(&encrypted_pdf(), "secret.pdf", &[]).unwrap_err();
    assert!(
        matches!(&e, PdfError::Encrypted(m) if m.contains("secret.pdf") && m.contains("password")),
        "{e:?}"
    );
}

#[test]
fn a_truncated_pdf_is_corrupt() {
    let good = build_pdf(&sample_report()).unwrap();
    for keep in [64, good.len() / 3] {
        let e = analyse_bytes(&truncated(&good, keep), "cut.pdf", &[]);
        match e {
            Err(PdfError::Corrupt(m)) => {
                assert!(m.contains("cut.pdf") && m.contains("again"), "{m}")
            }
            // PDFium repairs some truncations; then what was read must still be sound
            Ok(f) => assert!(
                f.pages >= 1 && f.pages <= 4,
                "keep={keep}: {} pages",
                f.pages
            ),
            Err(other) => panic!("keep={keep}: unexpected {other:?}"),
        }
    }
    let e = analyse_bytes(&truncated(&good, 64), "cut.pdf", &[]).unwrap_err();
    assert!(matches!(e, PdfError::Corrupt(_)), "{e:?}");
}

#[test]
fn garbage_after_the_header_is_corrupt() {
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend((0..4000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
    let e = analyse_bytes(&bytes, "noise.pdf", &[]).unwrap_err();
    assert!(matches!(e, PdfError::Corrupt(_)), "{e:?}");
}

#[test]
fn five_hundred_pages_are_analysed_within_bounds() {
    let mut pages = long_report(500);
    // a drawing on many pages: rendering must stop at its cap
    for p in pages.iter_mut().step_by(10) {
        p.vector_diagram = true;
    }
    let bytes = build_pdf(&pages).unwrap();
    let facts = analyse_bytes(&bytes, "huge.pdf", &[]).unwrap();
    assert_eq!(facts.pages, 500);
    assert_eq!(facts.page_text.len(), 500);
    assert!(facts.images.len() <= 4, "{}", facts.images.len());
    assert!(
        facts.notes.iter().any(|n| n.contains("caps")),
        "{:?}",
        facts.notes
    );
    assert_eq!(facts.claimed_paths.len(), 1);
    assert_eq!(facts.claimed_paths[0].pages.len(), 500);
    let ex = auditor::pdf::excerpts(&facts, "dialectical synthesis", 2000);
    assert!(ex.iter().map(|(_, t)| t.chars().count()).sum::<usize>() <= 2000);
}

#[test]
fn validate_then_analyse_a_file_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(
        &path,
        build_pdf(&[PageSpec::text(&["See src/graph.py for the graph."])]).unwrap(),
    )
    .unwrap();
    validate_path(&path).unwrap();
    let facts = analyse_path(&path, &[]).unwrap();
    assert_eq!(facts.claimed_paths[0].path, "src/graph.py");
    let missing = dir.path().join("nope.pdf");
    assert!(matches!(
        analyse_path(&missing, &[]),
        Err(PdfError::Unreadable(_))
    ));
}
