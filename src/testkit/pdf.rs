//! Real PDFs built with PDFium for tests and benchmarks: the sample's page specs
//! ([`build_pdf`]), plus tables, scans and deliberately bad PDFs.

pub use crate::sample::report::{PageSpec, WRAP, build_pdf, sample_report};

use crate::pdf::PdfError;
use crate::pdf::pdfium::with_pdfium;
use crate::sample::report::{FONT_SIZE, LEFT, TOP, fixture_err};
use pdfium_render::prelude::*;

/// A one-page PDF with a text table drawn as axis-aligned cell rectangles and a shaded code
/// block: many vector paths, but no drawing (must not be rendered as a diagram).
pub fn table_pdf(rows: usize) -> Result<Vec<u8>, PdfError> {
    with_pdfium(|pdfium| {
        let mut doc = pdfium.create_new_pdf().map_err(fixture_err)?;
        let font = doc.fonts_mut().helvetica();
        let mut page = doc
            .pages_mut()
            .create_page_at_end(PdfPagePaperSize::a4())
            .map_err(fixture_err)?;
        page.set_content_regeneration_strategy(PdfPageContentRegenerationStrategy::Manual);
        let grey = PdfColor::new(120, 120, 120, 255);
        let shade = PdfColor::new(240, 240, 240, 255);
        let objs = page.objects_mut();
        objs.create_text_object(
            PdfPoints::new(LEFT),
            PdfPoints::new(TOP),
            "Table 1: metrics of the run.",
            font,
            PdfPoints::new(FONT_SIZE),
        )
        .map_err(fixture_err)?;
        for r in 0..rows {
            let y = TOP - 30.0 - 20.0 * r as f32;
            for (c, x) in [LEFT, LEFT + 200.0].into_iter().enumerate() {
                objs.create_path_object_rect(
                    PdfRect::new_from_values(y - 6.0, x, y + 14.0, x + 200.0),
                    Some(grey),
                    Some(PdfPoints::new(0.5)),
                    Some(shade),
                )
                .map_err(fixture_err)?;
                objs.create_text_object(
                    PdfPoints::new(x + 4.0),
                    PdfPoints::new(y),
                    format!("row {r} col {c}"),
                    font,
                    PdfPoints::new(FONT_SIZE),
                )
                .map_err(fixture_err)?;
            }
        }
        objs.create_path_object_line(
            PdfPoints::new(LEFT),
            PdfPoints::new(100.0),
            PdfPoints::new(545.0),
            PdfPoints::new(100.0),
            grey,
            PdfPoints::new(1.0),
        )
        .map_err(fixture_err)?;
        page.regenerate_content().map_err(fixture_err)?;
        doc.save_to_bytes().map_err(fixture_err)
    })
}

/// A PDF whose pages hold only a raster image each (a scan): no extractable text.
pub fn image_only_pdf(pages: usize) -> Result<Vec<u8>, PdfError> {
    let specs: Vec<PageSpec> = (0..pages)
        .map(|_| PageSpec {
            raster_image: Some((400, 300)),
            ..Default::default()
        })
        .collect();
    build_pdf(&specs)
}

/// A hand-written PDF with a standard security handler whose password is unknown (random
/// `/O` and `/U` entries): PDFium reports it as password-protected.
pub fn encrypted_pdf() -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>".to_string(),
        format!(
            "<< /Filter /Standard /V 1 /R 2 /O <{}> /U <{}> /P -44 >>",
            "5a".repeat(32),
            "c3".repeat(32)
        ),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R /Encrypt 4 0 R /ID [<{id}> <{id}>] >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1,
            id = "0123456789abcdef0123456789abcdef"
        )
        .as_bytes(),
    );
    out
}

/// A hand-written one-page PDF drawing one grey image that declares `width` x `height`
/// pixels, all black, run-length encoded (128 pixels per 2 bytes): an image bomb of
/// `width * height` bytes once decoded, in a file 64 times smaller. The page also holds two
/// lines of text and six diagonal strokes (a vector drawing, so the page is worth rendering).
pub fn image_bomb_pdf(width: u32, height: u32) -> Vec<u8> {
    let pixels = u64::from(width) * u64::from(height);
    let mut data = Vec::with_capacity((pixels / 64 + 3) as usize);
    let mut left = pixels;
    while left > 0 {
        let n = left.min(128);
        data.push((257 - n) as u8);
        data.push(0);
        left -= n;
    }
    data.push(128); // end of data
    let content = b"q 180 0 0 180 10 10 cm /Im0 Do Q\n\
        BT /F1 9 Tf 10 190 Td (Architecture report: the detectives run in parallel.) Tj ET\n\
        BT /F1 9 Tf 10 178 Td (Figure 1 shows the StateGraph and its fan-in.) Tj ET\n\
        10 10 m 60 90 l S 20 10 m 70 90 l S 30 10 m 80 90 l S\n\
        40 10 m 90 90 l S 50 10 m 100 90 l S 60 10 m 110 90 l S\n";
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im0 5 0 R >> /Font << /F1 6 0 R >> >> /Contents 4 0 R >>".to_vec(),
    ];
    let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(content);
    stream.extend_from_slice(b"\nendstream");
    objects.push(stream);
    let mut image = format!(
        "<< /Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /RunLengthDecode /Length {} >>\nstream\n",
        data.len()
    )
    .into_bytes();
    image.extend_from_slice(&data);
    image.extend_from_slice(b"\nendstream");
    objects.push(image);
    objects.push(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec());
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// The first `keep` bytes of a valid PDF (a broken download).
pub fn truncated(bytes: &[u8], keep: usize) -> Vec<u8> {
    bytes[..keep.min(bytes.len())].to_vec()
}

/// Pages of filler prose for size tests and benchmarks (`n` pages of about 45 lines each),
/// with a path and a concept here and there.
pub fn long_report(n: usize) -> Vec<PageSpec> {
    (0..n)
        .map(|p| {
            let mut lines = vec![format!("Section {} of the architecture report", p + 1)];
            for l in 0..44 {
                lines.push(match l % 11 {
                    3 => format!("The judge node in src/nodes/judges.py scores criterion {l} in parallel with the others."),
                    7 => "Dialectical Synthesis is implemented by three judge personas whose opinions the chief justice merges.".to_string(),
                    _ => format!("Paragraph {l} on page {}: the detectives collect evidence, the aggregator waits at a barrier, the state is merged with reducers.", p + 1),
                });
            }
            PageSpec::text(&lines)
        })
        .collect()
}
