//! Real PDFs built with PDFium for tests, benchmarks and demos: pages of text, embedded raster
//! images, vector diagrams (paths only, no raster image), and deliberately bad PDFs.

use crate::pdf::PdfError;
use crate::pdf::pdfium::with_pdfium;
use pdfium_render::prelude::*;

/// One page of a fixture PDF.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageSpec {
    /// Lines of text, top to bottom. Lines longer than [`WRAP`] characters are word-wrapped;
    /// an empty string is a blank line (a paragraph break).
    pub lines: Vec<String>,
    /// An embedded raster image of this many pixels (width, height), drawn in the lower half.
    pub raster_image: Option<(u32, u32)>,
    /// A LangGraph-style architecture diagram drawn with vector paths (rectangles and lines)
    /// in the lower half, no raster image.
    pub vector_diagram: bool,
}

impl PageSpec {
    /// A page of text lines.
    pub fn text<S: AsRef<str>>(lines: &[S]) -> Self {
        PageSpec {
            lines: lines.iter().map(|l| l.as_ref().to_string()).collect(),
            ..Default::default()
        }
    }
}

/// Characters per line before word-wrapping.
pub const WRAP: usize = 95;
const FONT_SIZE: f32 = 10.0;
const LEADING: f32 = 13.0;
const TOP: f32 = 800.0;
const LEFT: f32 = 50.0;

fn wrap(line: &str) -> Vec<String> {
    if line.chars().count() <= WRAP {
        return vec![line.to_string()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for w in line.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > WRAP {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn fixture_err(e: PdfiumError) -> PdfError {
    PdfError::Corrupt(format!("building a fixture PDF failed: {e:?}"))
}

fn pattern_image(w: u32, h: u32) -> image::DynamicImage {
    let img = image::RgbImage::from_fn(w.max(1), h.max(1), |x, y| {
        // boxes and arrows-like stripes: not a flat colour, so it is a real picture
        let in_box = (x / 40 + y / 40) % 2 == 0;
        if in_box {
            image::Rgb([30, (x % 256) as u8, (y % 256) as u8])
        } else {
            image::Rgb([240, 240, 200])
        }
    });
    image::DynamicImage::ImageRgb8(img)
}

fn draw_diagram<'a>(page: &mut PdfPage<'a>, font: PdfFontToken) -> Result<(), PdfiumError> {
    let black = PdfColor::new(0, 0, 0, 255);
    let fill = PdfColor::new(220, 230, 250, 255);
    let objs = page.objects_mut();
    let boxes: &[(&str, f32, f32)] = &[
        ("START", 260.0, 340.0),
        ("RepoInvestigator", 90.0, 290.0),
        ("DocAnalyst", 260.0, 290.0),
        ("VisionInspector", 430.0, 290.0),
        ("EvidenceAggregator", 260.0, 235.0),
        ("Prosecutor", 90.0, 180.0),
        ("Defense", 260.0, 180.0),
        ("TechLead", 430.0, 180.0),
        ("ChiefJustice", 260.0, 125.0),
        ("END", 260.0, 70.0),
    ];
    for (label, x, y) in boxes {
        objs.create_path_object_rect(
            PdfRect::new_from_values(*y, *x, y + 28.0, x + 110.0),
            Some(black),
            Some(PdfPoints::new(1.0)),
            Some(fill),
        )?;
        objs.create_text_object(
            PdfPoints::new(x + 6.0),
            PdfPoints::new(y + 10.0),
            *label,
            font,
            PdfPoints::new(8.0),
        )?;
    }
    // fan-out START -> detectives, fan-in -> aggregator, fan-out -> judges, fan-in -> justice
    let edges: &[(usize, usize)] = &[
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 4),
        (2, 4),
        (3, 4),
        (4, 5),
        (4, 6),
        (4, 7),
        (5, 8),
        (6, 8),
        (7, 8),
        (8, 9),
    ];
    for &(a, b) in edges {
        let (_, ax, ay) = boxes[a];
        let (_, bx, by) = boxes[b];
        objs.create_path_object_line(
            PdfPoints::new(ax + 55.0),
            PdfPoints::new(ay),
            PdfPoints::new(bx + 55.0),
            PdfPoints::new(by + 28.0),
            black,
            PdfPoints::new(1.0),
        )?;
    }
    Ok(())
}

/// Builds a PDF with PDFium from page specs and returns its bytes.
pub fn build_pdf(pages: &[PageSpec]) -> Result<Vec<u8>, PdfError> {
    with_pdfium(|pdfium| {
        let mut doc = pdfium.create_new_pdf().map_err(fixture_err)?;
        let font = doc.fonts_mut().helvetica();
        for spec in pages {
            let mut page = doc
                .pages_mut()
                .create_page_at_end(PdfPagePaperSize::a4())
                .map_err(fixture_err)?;
            // Regenerate the content stream once per page, not after every object.
            page.set_content_regeneration_strategy(PdfPageContentRegenerationStrategy::Manual);
            let has_figure = spec.raster_image.is_some() || spec.vector_diagram;
            let bottom = if has_figure { 390.0 } else { 40.0 };
            let mut y = TOP;
            for line in spec.lines.iter().flat_map(|l| wrap(l)) {
                if y < bottom {
                    break;
                }
                if !line.trim().is_empty() {
                    page.objects_mut()
                        .create_text_object(
                            PdfPoints::new(LEFT),
                            PdfPoints::new(y),
                            line,
                            font,
                            PdfPoints::new(FONT_SIZE),
                        )
                        .map_err(fixture_err)?;
                }
                y -= LEADING;
            }
            if let Some((w, h)) = spec.raster_image {
                let img = pattern_image(w, h);
                let width = 400.0_f32;
                let height = width * h.max(1) as f32 / w.max(1) as f32;
                page.objects_mut()
                    .create_image_object(
                        PdfPoints::new(LEFT + 50.0),
                        PdfPoints::new(60.0),
                        &img,
                        Some(PdfPoints::new(width)),
                        Some(PdfPoints::new(height.min(300.0))),
                    )
                    .map_err(fixture_err)?;
            }
            if spec.vector_diagram {
                draw_diagram(&mut page, font).map_err(fixture_err)?;
            }
            page.regenerate_content().map_err(fixture_err)?;
        }
        doc.save_to_bytes().map_err(fixture_err)
    })
}

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

/// A realistic 4-page architecture report of a LangGraph auditor. It mentions `src/state.py`,
/// `src/graph.py`, `src/nodes/judges.py`, `src/nodes/justice.py`, `src/tools/repo_tools.py`
/// and `src/tools/vision_tools.py` (which a typical project does not have), explains
/// Dialectical Synthesis and Fan-In / Fan-Out, explains the reducers that merge the parallel
/// branches' writes (State Synchronization, without the name), lists Metacognition only as a
/// buzzword, and has a vector architecture diagram on page 2.
pub fn sample_report() -> Vec<PageSpec> {
    let p1 = PageSpec::text(&[
        "Automaton Auditor: Architecture Report",
        "",
        "Executive Summary",
        "This report describes our Digital Courtroom, a LangGraph swarm that audits a repository and its report.",
        "Key concepts of the system:",
        "• Metacognition",
        "• Dialectical Synthesis",
        "• Fan-In / Fan-Out",
        "",
        "State Management",
        "The shared state is defined in src/state.py as a TypedDict with Pydantic models for Evidence and JudicialOpinion. The evidences field uses operator.ior as its reducer and the opinions field uses operator.add, so parallel branches never overwrite each other.",
    ]);
    let p2 = PageSpec {
        lines: vec![
            "Graph Orchestration".into(),
            "The StateGraph is built in `src/graph.py`. Fan-out happens at START, where add_edge sends the state to the RepoInvestigator, DocAnalyst and VisionInspector nodes in parallel; fan-in happens at the EvidenceAggregator node, which waits for all three detectives before the judges run. The judges fan out again from the aggregator and fan in at the ChiefJustice node.".into(),
            "Figure 1 shows the graph.".into(),
        ],
        raster_image: None,
        vector_diagram: true,
    };
    let p3 = PageSpec::text(&[
        "The Judicial Layer",
        "Dialectical Synthesis is implemented through three judge personas defined in src/nodes/judges.py: the Prosecutor, the Defense and the TechLead each receive the same evidence and return a structured JudicialOpinion, and their conflicting scores are reconciled by deterministic rules in src/nodes/justice.py rather than by averaging.",
        "",
        "Forensic Tools",
        "The repository is cloned into a temporary directory by src/tools/repo_tools.py, which also reads the git history. Diagrams are extracted from the report by src/tools/vision_tools.py and classified by a vision model.",
    ]);
    let p4 = PageSpec::text(&[
        "Reflection",
        "Our design embraces Metacognition.",
        "In future work we plan to add src/tools/cache.py to avoid cloning the same repository twice.",
    ]);
    vec![p1, p2, p3, p4]
}
