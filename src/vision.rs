//! VisionInspector core: asks a vision-capable model about each diagram of the report.
//!
//! STUB: being built (issue 4/5).

use crate::model::Evidence;
use crate::pdf::DiagramImage;
use crate::rubric::Dimension;
use std::collections::BTreeMap;

/// Evidence for the `pdf_images` dimensions. Without a vision model the evidence says so
/// (kind `Missing`), and the dimension takes the "evidence missing" path.
pub fn evidence_without_model(
    images: &[DiagramImage],
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let _ = images;
    dimensions
        .iter()
        .map(|d| (d.id.clone(), Vec::new()))
        .collect()
}
