//! The sample report of `auditor sample`, a real PDF built with PDFium from page specs: pages of
//! text, embedded raster images, vector diagrams (paths only, no raster image). The tests build
//! their fixture PDFs the same way (`testkit::pdf`).

use crate::pdf::PdfError;
use crate::pdf::pdfium::with_pdfium;
use pdfium_render::prelude::*;

/// One page of a PDF to build.
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
pub(crate) const FONT_SIZE: f32 = 10.0;
const LEADING: f32 = 13.0;
pub(crate) const TOP: f32 = 800.0;
pub(crate) const LEFT: f32 = 50.0;

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

pub(crate) fn fixture_err(e: PdfiumError) -> PdfError {
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
