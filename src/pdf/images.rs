//! Diagram candidates for the VisionInspector: embedded raster images (decoded, re-encoded as
//! PNG, icons skipped) and pages drawn with vector paths but holding no raster image (rendered
//! to PNG). Everything is capped: count, pixels (declared, checked before decoding), pages
//! scanned.

use super::DiagramImage;
use image::DynamicImage;
use pdfium_render::prelude::*;

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
    /// A page needs at least this many vector path objects to count as holding a drawing.
    pub min_paths: usize,
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
            min_paths: 6,
            max_pages_scanned: 200,
            max_pixels: 25_000_000,
        }
    }
}

/// What one page holds.
#[derive(Debug, Default, Clone, Copy)]
pub struct PageInventory {
    /// Raster images at least `min_side` on both sides.
    pub rasters: usize,
    /// Vector path objects (including inside form XObjects).
    pub paths: usize,
    /// Path objects with a diagonal line or a curve: arrows, connectors, shapes. Tables, rules and
    /// code-block backgrounds are axis-aligned only, so a page of them is not a drawing.
    pub shaped_paths: usize,
    /// Images declaring more than `max_pixels` (whatever their shape): never decoded, and the
    /// page is not rendered (rendering would decode them).
    pub oversized: usize,
}

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
    /// Whether the page holds a vector drawing worth rendering.
    pub fn has_drawing(&self, caps: &ImageCaps) -> bool {
        self.paths >= caps.min_paths && self.shaped_paths >= 2
    }
}

fn is_shaped(path: &PdfPagePathObject) -> bool {
    let segments = path.segments();
    let mut prev: Option<(f32, f32)> = None;
    for seg in segments.iter().take(500) {
        let (x, y) = (seg.x().value, seg.y().value);
        match seg.segment_type() {
            PdfPathSegmentType::BezierTo => return true,
            PdfPathSegmentType::LineTo => {
                if let Some((px, py)) = prev
                    && (x - px).abs() > 0.5
                    && (y - py).abs() > 0.5
                {
                    return true;
                }
            }
            _ => {}
        }
        prev = Some((x, y));
    }
    false
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
                if obj.as_path_object().is_some_and(is_shaped) {
                    inv.shaped_paths += 1;
                }
            }
            PdfPageObjectType::Image => {
                if let Some(img) = obj.as_image_object() {
                    let (w, h, pixels) = declared_pixels(img);
                    if pixels > caps.max_pixels {
                        inv.oversized += 1;
                    }
                    if w >= caps.min_side as i32 && h >= caps.min_side as i32 {
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

/// Counts the significant raster images and the vector paths of a page.
pub fn inventory(page: &PdfPage, caps: &ImageCaps) -> PageInventory {
    let mut inv = PageInventory::default();
    count_objects(page.objects().iter(), caps, &mut inv, 0);
    inv
}

/// Whether a page's text holds a diagram drawn with box-drawing characters and arrows
/// (`│ ▼ ├──┐`), which reports paste from Markdown: rendered like a vector drawing.
pub fn is_text_diagram(text: &str) -> bool {
    text.chars()
        .filter(|c| {
            matches!(c, '\u{2500}'..='\u{259F}' | '\u{25B2}'..='\u{25C4}' | '\u{2190}'..='\u{21FF}')
        })
        .count()
        >= 12
}

fn to_png(img: DynamicImage, max_side: u32) -> Result<(Vec<u8>, u32, u32), String> {
    let img = if img.width() > max_side || img.height() > max_side {
        img.resize(max_side, max_side, image::imageops::FilterType::Triangle)
    } else {
        img
    };
    let (w, h) = (img.width(), img.height());
    let mut buf = std::io::Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png)
        .map_err(|e| format!("PNG encoding failed: {e}"))?;
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
    for obj in page.objects().iter() {
        if out.len() >= caps.max_images {
            return;
        }
        let Some(img) = obj.as_image_object() else {
            continue;
        };
        let (w, h, pixels) = declared_pixels(img);
        if w < caps.min_side as i32 || h < caps.min_side as i32 {
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
            .map_err(|e| e.to_string())
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
    pub notes: Vec<String>,
    rendered: usize,
    capped: bool,
}

impl DiagramScan {
    /// Whether page `index` (0-based) is within the pages scanned for diagrams.
    pub fn scans(index: usize, caps: &ImageCaps) -> bool {
        index < caps.max_pages_scanned
    }

    /// Scans one page: its significant raster images are extracted; a page without any is
    /// rendered when it holds a vector drawing or a text diagram. `text_art` is asked only
    /// then, so a caller that has not extracted the page's text yet does it only when needed.
    pub fn page(
        &mut self,
        page: &PdfPage,
        page_no: u32,
        caps: &ImageCaps,
        text_art: impl FnOnce() -> bool,
    ) {
        if self.images.len() >= caps.max_images {
            self.capped = true;
            return;
        }
        let inv = inventory(page, caps);
        if inv.rasters > 0 {
            extract_rasters(page, page_no, caps, &mut self.images, &mut self.notes);
        } else if inv.has_drawing(caps) || text_art() {
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
        }
    }

    /// The images found and the notes on the scan (`total_pages`: pages of the document).
    pub fn finish(
        mut self,
        total_pages: u32,
        caps: &ImageCaps,
    ) -> (Vec<DiagramImage>, Vec<String>) {
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
        (self.images, self.notes)
    }
}

/// Renders the page to a PNG (used for pages drawn with vector graphics).
pub fn render_page(page: &PdfPage, page_no: u32, caps: &ImageCaps) -> Result<DiagramImage, String> {
    let config = PdfRenderConfig::new()
        .set_target_width(caps.max_side.min(1400) as i32)
        .set_maximum_height(caps.max_side as i32);
    let bitmap = page
        .render_with_config(&config)
        .map_err(|e| format!("rendering failed: {e}"))?;
    let img = bitmap
        .as_image()
        .map_err(|e| format!("rendering failed: {e}"))?;
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
    #[test]
    fn box_drawing_art_is_a_diagram_and_prose_arrows_are_not() {
        let art = "START\n│\n▼\nctx\n├──────┬──────┐\n▼ ▼ ▼\na b c\n└──────┴──────┘";
        assert!(super::is_text_diagram(art));
        assert!(!super::is_text_diagram("a → b → c, then d ← e"));
    }
}
