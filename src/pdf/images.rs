//! Diagram candidates for the VisionInspector, told from pages of text by what the page holds:
//! - a **raster** diagram: an embedded image at least `min_side` pixels on both sides and shown
//!   over at least `min_image_area` of the page (icons, logos and bullets are skipped); decoded
//!   and re-encoded as PNG;
//! - a **vector drawing**: a page without such an image whose path objects include connectors
//!   (open, stroked, unfilled paths with a curve or a diagonal segment, at least 8 pt long) or
//!   arrowheads (small closed filled shapes of diagonal segments), at least `min_connectors` of
//!   them, over at least `min_drawing_area` of the page: rendered to PNG. A page of text draws
//!   only fills behind its text (code-block and inline-code backgrounds, rounded or not, table
//!   cells, rules, list bullets): none of them is a connector, so it is never a drawing;
//! - a **text drawing** ([`text_drawing`]): a diagram typed as characters (box-drawing or ASCII
//!   art, diagram source such as Mermaid). It is rendered text, not a diagram: recorded with its
//!   page, never rendered nor sent to a vision model.
//!
//! Everything is capped: count, pixels (declared, checked before decoding), pages scanned.

use super::DiagramImage;
use image::DynamicImage;
use pdfium_render::prelude::*;
use serde::{Deserialize, Serialize};

/// Limits on what is extracted from one document.
#[derive(Debug, Clone, Copy)]
pub struct ImageCaps {
    /// Most diagram images returned per document (raster + rendered).
    pub max_images: usize,
    /// Most pages rendered for vector drawings.
    pub max_rendered_pages: usize,
    /// Longest side of a returned PNG, in pixels (larger images are scaled down).
    pub max_side: u32,
    /// Images smaller than this on either side are icons or decorations.
    pub min_side: u32,
    /// A page needs at least this many connectors and arrowheads to hold a vector drawing.
    pub min_connectors: usize,
    /// Share of the page an embedded image must cover to be a diagram candidate.
    pub min_image_area: f32,
    /// Share of the page the connectors' bounding box must cover to be a drawing.
    pub min_drawing_area: f32,
    /// Pages scanned for images (the first N).
    pub max_pages_scanned: usize,
    /// Most pixels an embedded image may declare to be decoded: the size is read from the
    /// image's dictionary before anything is decoded (a 1 MB PDF can declare 20000x20000).
    pub max_pixels: u64,
}

impl Default for ImageCaps {
    fn default() -> Self {
        ImageCaps {
            max_images: 8,
            max_rendered_pages: 4,
            max_side: 1600,
            min_side: 64,
            min_connectors: 3,
            min_image_area: 0.02,
            min_drawing_area: 0.02,
            max_pages_scanned: 200,
            max_pixels: 25_000_000,
        }
    }
}

/// What one page holds.
#[derive(Debug, Default, Clone, Copy)]
pub struct PageInventory {
    /// Raster images at least `min_side` on both sides and shown over `min_image_area`.
    pub rasters: usize,
    /// Vector path objects (including inside form XObjects).
    pub paths: usize,
    /// Open, stroked, unfilled paths with a curve or a diagonal segment, at least
    /// [`CONNECTOR_MIN_PT`] long: the edges of a drawing. Text pages fill shapes behind their
    /// text (backgrounds, cells, bullets) and stroke straight rules: never connectors.
    pub connectors: usize,
    /// Small closed, filled shapes made of diagonal straight segments: arrowheads.
    pub arrowheads: usize,
    /// The bounding box of the connectors and arrowheads (left, bottom, right, top), in points.
    pub drawing_box: Option<[f32; 4]>,
    /// The page's area, in square points.
    pub page_area: f32,
    /// Images declaring more than `max_pixels` (whatever their shape): never decoded, and the
    /// page is not rendered (rendering would decode them).
    pub oversized: usize,
}

/// Shortest extent of a connector, and longest of an arrowhead, in points.
pub const CONNECTOR_MIN_PT: f32 = 8.0;

/// Pixels an image object declares (its dictionary's width x height; nothing decoded).
fn declared_pixels(img: &PdfPageImageObject) -> (i32, i32, u64) {
    let w = img.width().unwrap_or(0);
    let h = img.height().unwrap_or(0);
    (
        w,
        h,
        u64::from(w.unsigned_abs()) * u64::from(h.unsigned_abs()),
    )
}

impl PageInventory {
    /// Whether the page holds a vector drawing worth rendering: enough connectors and
    /// arrowheads (one connector at least), spread over enough of the page.
    pub fn has_drawing(&self, caps: &ImageCaps) -> bool {
        let marks = self.connectors + self.arrowheads;
        let area = self
            .drawing_box
            .map(|[l, b, r, t]| (r - l).max(0.0) * (t - b).max(0.0))
            .unwrap_or(0.0);
        self.connectors >= 1
            && marks >= caps.min_connectors
            && self.page_area > 0.0
            && area / self.page_area >= caps.min_drawing_area
    }
}

/// How a path object is drawn, from its segments and paint: a connector, an arrowhead, or
/// neither (a fill behind text, a rule, a cell, a bullet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stroke {
    Connector,
    Arrowhead,
    Other,
}

fn stroke_of(path: &PdfPagePathObject, extent: f32) -> Stroke {
    let segments = path.segments();
    let mut prev: Option<(f32, f32)> = None;
    let (mut curve, mut diagonal, mut closed) = (false, false, false);
    for seg in segments.iter().take(500) {
        let (x, y) = (seg.x().value, seg.y().value);
        closed |= seg.is_close();
        match seg.segment_type() {
            PdfPathSegmentType::BezierTo => curve = true,
            PdfPathSegmentType::LineTo => {
                if let Some((px, py)) = prev
                    && (x - px).abs() > 0.5
                    && (y - py).abs() > 0.5
                {
                    diagonal = true;
                }
            }
            _ => {}
        }
        prev = Some((x, y));
    }
    let filled = !matches!(path.fill_mode(), Ok(PdfPathFillMode::None) | Err(_));
    let stroked = path.is_stroked().unwrap_or(false);
    if (curve || diagonal) && stroked && !filled && !closed && extent >= CONNECTOR_MIN_PT {
        Stroke::Connector
    } else if diagonal && !curve && closed && filled && extent < CONNECTOR_MIN_PT {
        Stroke::Arrowhead
    } else {
        Stroke::Other
    }
}

/// (left, bottom, right, top) of an object on the page.
fn bounds_of(obj: &PdfPageObject) -> Option<[f32; 4]> {
    let r = obj.bounds().ok()?.to_rect();
    Some([
        r.left().value,
        r.bottom().value,
        r.right().value,
        r.top().value,
    ])
}

fn union(a: Option<[f32; 4]>, b: [f32; 4]) -> [f32; 4] {
    match a {
        None => b,
        Some([l, bo, r, t]) => [l.min(b[0]), bo.min(b[1]), r.max(b[2]), t.max(b[3])],
    }
}

fn count_objects<'a>(
    objects: impl Iterator<Item = PdfPageObject<'a>>,
    caps: &ImageCaps,
    inv: &mut PageInventory,
    depth: u32,
) {
    for obj in objects {
        match obj.object_type() {
            PdfPageObjectType::Path => {
                inv.paths += 1;
                let bounds = bounds_of(&obj);
                let extent = bounds.map(|[l, b, r, t]| (r - l).max(t - b)).unwrap_or(0.0);
                let stroke = obj
                    .as_path_object()
                    .map(|p| stroke_of(p, extent))
                    .unwrap_or(Stroke::Other);
                match stroke {
                    Stroke::Connector => inv.connectors += 1,
                    Stroke::Arrowhead => inv.arrowheads += 1,
                    Stroke::Other => {}
                }
                if stroke != Stroke::Other
                    && let Some(b) = bounds
                {
                    inv.drawing_box = Some(union(inv.drawing_box, b));
                }
            }
            PdfPageObjectType::Image => {
                if let Some(img) = obj.as_image_object() {
                    let (w, h, pixels) = declared_pixels(img);
                    if pixels > caps.max_pixels {
                        inv.oversized += 1;
                    }
                    if w >= caps.min_side as i32
                        && h >= caps.min_side as i32
                        && shown_area(&obj) >= caps.min_image_area * inv.page_area
                    {
                        inv.rasters += 1;
                    }
                }
            }
            PdfPageObjectType::XObjectForm if depth < 3 => {
                if let Some(form) = obj.as_x_object_form_object() {
                    count_objects(form.iter(), caps, inv, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// The area an object covers on the page, in square points.
fn shown_area(obj: &PdfPageObject) -> f32 {
    bounds_of(obj)
        .map(|[l, b, r, t]| (r - l).max(0.0) * (t - b).max(0.0))
        .unwrap_or(0.0)
}

/// Counts the significant raster images, the vector paths and the drawing strokes of a page.
pub fn inventory(page: &PdfPage, caps: &ImageCaps) -> PageInventory {
    let mut inv = PageInventory {
        page_area: page.width().value * page.height().value,
        ..PageInventory::default()
    };
    count_objects(page.objects().iter(), caps, &mut inv, 0);
    inv
}

/// How a diagram was typed as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextDrawingKind {
    /// Drawn with characters: box-drawing characters (`┌─┐ │ ▼`), or ASCII art (lines made
    /// mostly of `|`, `+`, `--->`, `\`, `/`).
    Art,
    /// The source of a diagram, not its picture: Mermaid (`flowchart LR`, `A --> B`).
    Source,
}

impl TextDrawingKind {
    /// In words, for a sentence ("a diagram drawn in text characters").
    pub fn label(self) -> &'static str {
        match self {
            TextDrawingKind::Art => {
                "a diagram drawn with text characters (ASCII or box-drawing art)"
            }
            TextDrawingKind::Source => "the source text of a diagram (Mermaid), not its picture",
        }
    }
}

/// A page whose text holds a typed diagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextDrawing {
    pub page: u32,
    pub kind: TextDrawingKind,
    /// Lines of the page that belong to it.
    pub lines: usize,
}

/// Box-drawing characters on a page from which the page holds box-drawing art.
const BOX_CHARS: usize = 12;
/// Lines of ASCII art (or of diagram source edges) from which a page holds a typed diagram.
const ART_LINES: usize = 4;

fn is_box_char(c: char) -> bool {
    matches!(c, '\u{2500}'..='\u{257F}' | '\u{25B2}'..='\u{25C4}')
}

/// Characters that draw: box-drawing, arrows, and the ASCII ones art is made of.
fn is_drawing_char(c: char) -> bool {
    is_box_char(c)
        || matches!(c, '\u{2190}'..='\u{21FF}')
        || matches!(
            c,
            '|' | '+' | '-' | '=' | '>' | '<' | '^' | '\\' | '/' | '_' | '*'
        )
}

/// A line that draws rather than says: at least 30% of its non-space characters draw (a lone
/// `v` or `V` is a downward arrow), and one of them is a vertical stroke, a corner or an arrow
/// head (a rule of dashes alone is not art).
fn art_line(line: &str) -> bool {
    let mut chars = 0;
    let mut drawing = 0;
    let mut structure = false;
    for token in line.split_whitespace() {
        if token == "v" || token == "V" {
            chars += 1;
            drawing += 1;
            structure = true;
            continue;
        }
        for c in token.chars() {
            chars += 1;
            if is_drawing_char(c) {
                drawing += 1;
                structure |= !matches!(c, '-' | '=' | '_' | '*' | '\u{2500}' | '\u{2550}');
            }
        }
    }
    chars > 0 && drawing * 10 >= chars * 3 && structure
}

/// A Mermaid edge (`A --> B`, `A -.-> B`, `A ==> B`, `A -->|label| B`): a line that starts
/// with a node id and links it with Mermaid's arrow (ASCII art starts with its strokes).
fn source_edge(line: &str) -> bool {
    let t = line.trim_start();
    t.chars().next().is_some_and(char::is_alphanumeric)
        && [" --> ", " ==> ", " -.-> ", " -->|", " ->> ", " --- "]
            .iter()
            .any(|e| t.contains(e))
}

fn source_header(line: &str) -> bool {
    let t = line.trim();
    let mut words = t.split_whitespace();
    match (words.next(), words.next()) {
        (Some("graph" | "flowchart"), Some(dir)) => {
            matches!(dir, "TD" | "TB" | "LR" | "RL" | "BT" | "TD;" | "LR;")
        }
        (Some(w), _) => matches!(
            w,
            "sequenceDiagram" | "stateDiagram" | "stateDiagram-v2" | "classDiagram"
        ),
        _ => false,
    }
}

/// Whether a page's text holds a typed diagram, and which kind: box-drawing characters
/// ([`BOX_CHARS`] or more), lines of ASCII art ([`ART_LINES`] or more, see [`art_line`]), or
/// diagram source (a Mermaid header with two edges, or [`ART_LINES`] edges). Prose that lists
/// edges with arrows ("A → B (parallel branch)") is prose, not a drawing.
pub fn text_drawing(text: &str) -> Option<(TextDrawingKind, usize)> {
    let box_lines = text
        .lines()
        .filter(|l| l.chars().filter(|c| is_box_char(*c)).count() >= 2)
        .count();
    let boxes = text.chars().filter(|c| is_box_char(*c)).count();
    if boxes >= BOX_CHARS {
        return Some((TextDrawingKind::Art, box_lines.max(1)));
    }
    let edges = text.lines().filter(|l| source_edge(l)).count();
    let header = text.lines().any(source_header);
    if header && edges >= 2 {
        return Some((TextDrawingKind::Source, edges + 1));
    }
    // A source edge (`A --> B`) is no line of art.
    let art = text
        .lines()
        .filter(|l| art_line(l) && !source_edge(l))
        .count();
    if art >= ART_LINES {
        return Some((TextDrawingKind::Art, art));
    }
    if edges >= ART_LINES {
        return Some((TextDrawingKind::Source, edges));
    }
    None
}

/// Why an image of the report could not be made into a PNG (a note of the document, not a
/// failure).
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The embedded image could not be decoded.
    #[error("{0}")]
    Decode(#[source] PdfiumError),
    #[error("rendering failed: {0}")]
    Render(#[source] PdfiumError),
    #[error("PNG encoding failed: {0}")]
    Png(#[source] image::ImageError),
}

fn to_png(img: DynamicImage, max_side: u32) -> Result<(Vec<u8>, u32, u32), ImageError> {
    let img = if img.width() > max_side || img.height() > max_side {
        img.resize(max_side, max_side, image::imageops::FilterType::Triangle)
    } else {
        img
    };
    let (w, h) = (img.width(), img.height());
    let mut buf = std::io::Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png)
        .map_err(ImageError::Png)?;
    Ok((buf.into_inner(), w, h))
}

/// Decodes the page's significant raster images into `out` (up to the cap).
pub fn extract_rasters(
    page: &PdfPage,
    page_no: u32,
    caps: &ImageCaps,
    out: &mut Vec<DiagramImage>,
    notes: &mut Vec<String>,
) {
    let page_area = page.width().value * page.height().value;
    for obj in page.objects().iter() {
        if out.len() >= caps.max_images {
            return;
        }
        let Some(img) = obj.as_image_object() else {
            continue;
        };
        let (w, h, pixels) = declared_pixels(img);
        if w < caps.min_side as i32
            || h < caps.min_side as i32
            || shown_area(&obj) < caps.min_image_area * page_area
        {
            continue;
        }
        if pixels > caps.max_pixels {
            notes.push(format!(
                "page {page_no}: an embedded image declares {w}x{h} pixels, over the decoding cap ({} pixels): not decoded",
                caps.max_pixels
            ));
            continue;
        }
        // The processed image applies masks and filters; fall back to the raw bitmap.
        let decoded = img.get_raw_image();
        match decoded
            .map_err(ImageError::Decode)
            .and_then(|i| to_png(i, caps.max_side))
        {
            Ok((png, width, height)) => out.push(DiagramImage {
                page: page_no,
                width,
                height,
                kind: "raster".into(),
                png,
            }),
            Err(e) => notes.push(format!(
                "page {page_no}: an embedded image ({w}x{h}) could not be decoded: {e}"
            )),
        }
    }
}

/// The diagram scan of one document, page by page: [`crate::pdf::analyse_bytes`] and
/// [`crate::pdf::extract_diagrams`] both feed their pages through it, so they find the same
/// images with the same caps and notes.
#[derive(Debug, Default)]
pub struct DiagramScan {
    pub images: Vec<DiagramImage>,
    /// Pages whose text holds a typed diagram (never rendered).
    pub text_drawings: Vec<TextDrawing>,
    pub notes: Vec<String>,
    /// Pages scanned.
    pub scanned: u32,
    rendered: usize,
    capped: bool,
}

/// What the scan of one document found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagrams {
    /// The document's name in locations (`reports/final_report.pdf`).
    pub source: String,
    /// Raster images and rendered vector drawings, in page order.
    pub images: Vec<DiagramImage>,
    /// Pages whose text holds a typed diagram: rendered text, not a diagram.
    pub text_drawings: Vec<TextDrawing>,
    /// Pages scanned for diagrams.
    pub scanned: u32,
    /// Pages of the document.
    pub pages: u32,
}

impl DiagramScan {
    /// Whether page `index` (0-based) is within the pages scanned for diagrams.
    pub fn scans(index: usize, caps: &ImageCaps) -> bool {
        index < caps.max_pages_scanned
    }

    /// Scans one page: its significant raster images are extracted; a page without any is
    /// rendered when it holds a vector drawing. A page with neither is asked `typed` (whether
    /// its text holds a typed diagram, see [`text_drawing`]), so a caller that has not
    /// extracted the page's text yet does it only when needed; such a page is recorded, never
    /// rendered.
    pub fn page(
        &mut self,
        page: &PdfPage,
        page_no: u32,
        caps: &ImageCaps,
        typed: impl FnOnce() -> Option<(TextDrawingKind, usize)>,
    ) {
        self.scanned = self.scanned.max(page_no);
        if self.images.len() >= caps.max_images {
            self.capped = true;
            return;
        }
        let inv = inventory(page, caps);
        if inv.rasters > 0 {
            extract_rasters(page, page_no, caps, &mut self.images, &mut self.notes);
        } else if inv.has_drawing(caps) {
            if inv.oversized > 0 {
                self.notes.push(format!(
                    "page {page_no}: not rendered: it holds an image declaring more than {} pixels",
                    caps.max_pixels
                ));
                return;
            }
            if self.rendered >= caps.max_rendered_pages {
                self.capped = true;
                return;
            }
            match render_page(page, page_no, caps) {
                Ok(img) => {
                    self.images.push(img);
                    self.rendered += 1;
                }
                Err(e) => self.notes.push(format!("page {page_no}: {e}")),
            }
        } else if let Some((kind, lines)) = typed() {
            self.text_drawings.push(TextDrawing {
                page: page_no,
                kind,
                lines,
            });
        }
    }

    /// What the scan found and its notes (`total_pages`: pages of the document).
    pub fn finish(mut self, total_pages: u32, caps: &ImageCaps) -> (Diagrams, Vec<String>) {
        if self.capped {
            self.notes.push(format!(
                "diagram extraction stopped at its caps ({} images, {} rendered pages)",
                caps.max_images, caps.max_rendered_pages
            ));
        }
        if total_pages as usize > caps.max_pages_scanned {
            self.notes.push(format!(
                "only the first {} pages were scanned for diagrams",
                caps.max_pages_scanned
            ));
        }
        (
            Diagrams {
                source: String::new(),
                images: self.images,
                text_drawings: self.text_drawings,
                scanned: self.scanned,
                pages: total_pages,
            },
            self.notes,
        )
    }
}

/// Renders the page to a PNG (used for pages drawn with vector graphics).
pub fn render_page(
    page: &PdfPage,
    page_no: u32,
    caps: &ImageCaps,
) -> Result<DiagramImage, ImageError> {
    let config = PdfRenderConfig::new()
        .set_target_width(caps.max_side.min(1400) as i32)
        .set_maximum_height(caps.max_side as i32);
    let bitmap = page
        .render_with_config(&config)
        .map_err(ImageError::Render)?;
    let img = bitmap.as_image().map_err(ImageError::Render)?;
    let (png, width, height) = to_png(img, caps.max_side)?;
    Ok(DiagramImage {
        page: page_no,
        width,
        height,
        kind: "rendered_page".into(),
        png,
    })
}

#[cfg(test)]
mod tests {
    use super::{TextDrawingKind, text_drawing};

    #[test]
    fn box_drawing_and_ascii_art_are_typed_drawings_and_prose_arrows_are_not() {
        let boxes = "START\n│\n▼\nctx\n├──────┬──────┐\n▼ ▼ ▼\na b c\n└──────┴──────┘";
        assert_eq!(text_drawing(boxes).map(|d| d.0), Some(TextDrawingKind::Art));
        let ascii = "START\n|\n|---> RepoInvestigator ----\\\n|---> DocAnalyst -----+---> EvidenceAggregator\n|---> VisionInspector -/\n        |\n        v\n   ChiefJustice";
        assert_eq!(text_drawing(ascii).map(|d| d.0), Some(TextDrawingKind::Art));
        let edges = "The graph:\n- ContextBuilder → RepoInvestigator (parallel branch 1)\n- ContextBuilder → DocAnalyst (parallel branch 2)\n- ContextBuilder → VisionInspector (parallel branch 3)\n- RepoInvestigator → EvidenceAggregator\n- DocAnalyst → EvidenceAggregator\n- VisionInspector → EvidenceAggregator → Prosecutor → Defense → TechLead";
        assert_eq!(text_drawing(edges), None, "an edge list in prose");
        let prose = "We use a self-audit (see src/graph.py) and a fan-out/fan-in pattern.\n----------\nA - B - C, then d <- e.";
        assert_eq!(text_drawing(prose), None);
        let mermaid = "flowchart TD\n  START --> repo[RepoInvestigator]\n  START --> doc[DocAnalyst]\n  repo --> agg";
        assert_eq!(
            text_drawing(mermaid).map(|d| d.0),
            Some(TextDrawingKind::Source)
        );
    }
}
