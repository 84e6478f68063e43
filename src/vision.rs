//! VisionInspector core: asks a vision-capable model about each diagram of the report.
//!
//! Each diagram goes to the vision model (`AUDITOR_VISION_MODEL`, by default the judges' own
//! model) as a base64 PNG data URL with a strict structured answer ([`VisionAnswer`]). A model
//! that rejects the image request for good (HTTP 400: no image support) is not asked again in
//! the run; the diagram criteria then carry one `Missing` evidence naming the rejection. The answers become evidence for every `pdf_images`
//! dimension: one classification per diagram and one fact per requirement of the swarm
//! visual (parallel detectives, evidence aggregation, parallel judges, synthesis).

use crate::llm::LlmSession;
use crate::llm::structured::{SchemaSpec, strict_schema_for};
use crate::llm::{self, AskError};
use crate::model::{Confidence, Detective, Evidence, TokenUsage};
use crate::pdf::DiagramImage;
use crate::pdf::images::Diagrams;
use crate::rubric::Dimension;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestMessageContentPartImage,
    ChatCompletionRequestMessageContentPartText, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, ChatCompletionRequestUserMessageContentPart, ImageUrl,
};
use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The VisionInspector's prompt file in the session's prompt set (the panel loads it with the
/// judges' files: `judges::prompts`).
pub const PROMPT_FILE: &str = "vision.md";

/// What kind of picture a diagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiagramType {
    LanggraphStateMachine,
    SequenceDiagram,
    GenericFlowchart,
    Screenshot,
    Other,
}

impl DiagramType {
    pub fn as_str(self) -> &'static str {
        match self {
            DiagramType::LanggraphStateMachine => "langgraph_state_machine",
            DiagramType::SequenceDiagram => "sequence_diagram",
            DiagramType::GenericFlowchart => "generic_flowchart",
            DiagramType::Screenshot => "screenshot",
            DiagramType::Other => "other",
        }
    }

    /// Whether this is an architecture diagram at all.
    pub fn is_diagram(self) -> bool {
        matches!(
            self,
            DiagramType::LanggraphStateMachine
                | DiagramType::SequenceDiagram
                | DiagramType::GenericFlowchart
        )
    }
}

/// The vision model's structured answer about one image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VisionAnswer {
    pub diagram_type: DiagramType,
    pub shows_parallel_detectives: bool,
    pub shows_evidence_aggregation: bool,
    pub shows_parallel_judges: bool,
    pub shows_synthesis: bool,
    pub flow_description: String,
}

/// The four requirements of the swarm visual, with the answer field that states each.
const REQUIREMENTS: [(&str, &str); 4] = [
    (
        "parallel_detectives",
        "the diagram shows the detectives running in parallel (fan-out)",
    ),
    (
        "evidence_aggregation",
        "the diagram shows evidence aggregation (fan-in) before the judges",
    ),
    (
        "parallel_judges",
        "the diagram shows Prosecutor, Defense and TechLead in parallel",
    ),
    (
        "synthesis",
        "the diagram shows a final synthesis step (Chief Justice)",
    ),
];

fn shows(a: &VisionAnswer, requirement: &str) -> bool {
    match requirement {
        "parallel_detectives" => a.shows_parallel_detectives,
        "evidence_aggregation" => a.shows_evidence_aggregation,
        "parallel_judges" => a.shows_parallel_judges,
        "synthesis" => a.shows_synthesis,
        _ => false,
    }
}

/// Confidence in a vision model's reading of a picture.
fn model_confidence() -> Confidence {
    Confidence::new(0.7).unwrap_or(Confidence::CERTAIN)
}

fn page_loc(page: u32) -> String {
    format!("report.pdf p.{page}")
}

fn pages_loc(images: &[&DiagramImage]) -> String {
    if images.is_empty() {
        return "report.pdf".into();
    }
    let pages: Vec<String> = images.iter().map(|i| format!("p.{}", i.page)).collect();
    format!("report.pdf {}", pages.join(", "))
}

fn no_diagram(dimensions: &[Dimension]) -> BTreeMap<String, Vec<Evidence>> {
    without_images(&Diagrams::default(), dimensions)
}

/// What the scan says when it found no image and no vector drawing: the pages scanned, and
/// the pages whose text holds a typed diagram (rendered text, not a diagram). Nothing found in
/// a partly scanned report is no confident absence: it is evidence missing, naming the pages
/// not scanned.
pub fn without_images(
    diagrams: &Diagrams,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let src = if diagrams.source.is_empty() {
        "report.pdf"
    } else {
        diagrams.source.as_str()
    };
    let scanned = if diagrams.pages == 0 {
        "the report".to_string()
    } else if diagrams.scanned >= diagrams.pages {
        format!(
            "the {} of the report",
            crate::words::count(diagrams.pages as usize, "page", "pages")
        )
    } else {
        format!(
            "the first {} of the report's {} scanned",
            crate::words::count(diagrams.scanned as usize, "page", "pages"),
            diagrams.pages
        )
    };
    let goal = "Find an architecture diagram in the report";
    let one = |d: &Dimension| -> Evidence {
        if let Some(first) = diagrams.text_drawings.first() {
            let pages: Vec<String> = diagrams
                .text_drawings
                .iter()
                .map(|t| format!("p.{}", t.page))
                .collect();
            let kinds: Vec<&str> = {
                let mut k: Vec<&str> = diagrams
                    .text_drawings
                    .iter()
                    .map(|t| t.kind.label())
                    .collect();
                k.dedup();
                k
            };
            return Evidence::fact(
                format!("vision.{}.text_drawing", d.id),
                Detective::VisionInspector,
                goal,
                false,
                format!("{src} p.{}", first.page),
                format!(
                    "no embedded image and no vector drawing in {scanned}; {} {} {}: rendered text, not a diagram",
                    pages.join(", "),
                    crate::words::form(pages.len(), "holds", "hold"),
                    kinds.join(" and ")
                ),
                Confidence::CERTAIN,
            )
            .with_content(
                diagrams
                    .text_drawings
                    .iter()
                    .map(|t| format!("p.{}: {} ({} lines)", t.page, t.kind.label(), t.lines))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
            .with_fix(format!(
                "replace the text drawing on p.{} by a picture of the graph (an exported image, e.g. LangGraph's draw_mermaid_png(), or a vector drawing) that shows the parallel branches",
                first.page
            ));
        }
        let rationale = format!(
            "no diagram in {scanned}: no embedded image (at least 64 pixels a side, over 2% of the page) and no vector drawing (connectors or arrowheads)"
        );
        if diagrams.pages > 0 && diagrams.scanned < diagrams.pages {
            return Evidence::missing(
                format!("vision.{}.no_diagram", d.id),
                Detective::VisionInspector,
                goal,
                src.to_string(),
                format!(
                    "{rationale}; pages {}-{} were not scanned (a limit of the grader), so this is no confident absence",
                    diagrams.scanned + 1,
                    diagrams.pages
                ),
            )
            .with_fix("assess the diagrams of the pages not scanned by hand");
        }
        Evidence::fact(
            format!("vision.{}.no_diagram", d.id),
            Detective::VisionInspector,
            goal,
            false,
            src.to_string(),
            rationale,
            Confidence::CERTAIN,
        )
        .with_fix("add an architecture diagram of the StateGraph (an exported image or a vector drawing) that shows the parallel branches")
    };
    dimensions
        .iter()
        .map(|d| (d.id.clone(), vec![one(d)]))
        .collect()
}

/// Whether `e` is the evidence [`evidence_without_model`] records: diagrams left uninspected
/// because no vision model was configured (a choice, not a grader failure).
pub fn without_model(e: &Evidence) -> bool {
    e.detective == Detective::VisionInspector && e.id.ends_with(".no_model")
}

/// Evidence for the `pdf_images` dimensions. Without a vision model the evidence says so
/// (kind `Missing`), and the dimension takes the "evidence missing" path.
pub fn evidence_without_model(
    images: &[DiagramImage],
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    if images.is_empty() {
        return no_diagram(dimensions);
    }
    let refs: Vec<&DiagramImage> = images.iter().collect();
    dimensions
        .iter()
        .map(|d| {
            (
                d.id.clone(),
                vec![Evidence::missing(
                    format!("vision.{}.no_model", d.id),
                    Detective::VisionInspector,
                    "Classify the report's diagrams and check the parallel flow",
                    pages_loc(&refs),
                    format!(
                        "no vision model configured: {} found in the report {} not inspected",
                        crate::words::count(images.len(), "diagram", "diagrams"),
                        crate::words::form(images.len(), "was", "were")
                    ),
                )
                .with_fix(
                    "set AUDITOR_VISION_MODEL to a vision-capable model (with OPENAI_API_KEY or \
                     OPENAI_BASE_URL) and re-run, or assess the diagrams by hand",
                )],
            )
        })
        .collect()
}

/// What to do when the vision model failed on a diagram.
const VISION_FIX: &str = "check the vision model's endpoint and name (AUDITOR_VISION_MODEL) and re-run; the log with -v shows each failed request";

/// Evidence for the `pdf_images` dimensions when the vision model rejected the image request
/// (HTTP 400 and the like: the model takes no images): the criterion is not assessed, with the
/// reason. Not retried, and the model is not sent images again in the run.
pub fn evidence_model_rejected(
    images: &[DiagramImage],
    dimensions: &[Dimension],
    model: &str,
    reason: &str,
) -> BTreeMap<String, Vec<Evidence>> {
    let refs: Vec<&DiagramImage> = images.iter().collect();
    dimensions
        .iter()
        .map(|d| {
            (
                d.id.clone(),
                vec![
                    Evidence::missing(
                        format!("vision.{}.model_rejected", d.id),
                        Detective::VisionInspector,
                        "Classify the report's diagrams and check the parallel flow",
                        pages_loc(&refs),
                        format!(
                            "the model {model} rejected the image request ({reason}): {} of \
                             the report {} not inspected",
                            crate::words::count(images.len(), "diagram", "diagrams"),
                            crate::words::form(images.len(), "was", "were")
                        ),
                    )
                    .with_fix(
                        "set AUDITOR_VISION_MODEL to a vision-capable model and re-run, or \
                         assess the diagrams by hand",
                    ),
                ],
            )
        })
        .collect()
}

/// The data URL of a PNG.
pub fn data_url(png: &[u8]) -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

/// The messages for one image.
pub fn vision_messages(system: &str, image: &DiagramImage) -> Vec<ChatCompletionRequestMessage> {
    vec![
        ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
            content: ChatCompletionRequestSystemMessageContent::Text(system.trim().to_string()),
            name: None,
        }),
        ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
            content: ChatCompletionRequestUserMessageContent::Array(vec![
                ChatCompletionRequestUserMessageContentPart::Text(
                    ChatCompletionRequestMessageContentPartText {
                        text: format!(
                            "Image from page {} of the report ({}x{}, {}). Classify it and \
                             describe the flow; answer with only the JSON object.",
                            image.page, image.width, image.height, image.kind
                        ),
                        prompt_cache_breakpoint: None,
                    },
                ),
                ChatCompletionRequestUserMessageContentPart::ImageUrl(
                    ChatCompletionRequestMessageContentPartImage {
                        image_url: ImageUrl {
                            url: data_url(&image.png),
                            detail: None,
                        },
                        prompt_cache_breakpoint: None,
                    },
                ),
            ]),
            name: None,
        }),
    ]
}

/// Longest flow description kept (characters); a longer one is cut, and says so.
const MAX_DESCRIPTION_CHARS: usize = 4000;

/// A vision answer without a description of the flow. Phrased to be fed back to the model.
#[derive(Debug, thiserror::Error)]
#[error("\"flow_description\" is empty: describe the flow as drawn")]
struct NoDescription;

fn validate_answer(mut a: VisionAnswer) -> Result<VisionAnswer, NoDescription> {
    if a.flow_description.trim().chars().count() < 10 {
        return Err(NoDescription);
    }
    a.flow_description =
        crate::llm::structured::cut_text(a.flow_description, MAX_DESCRIPTION_CHARS);
    Ok(a)
}

/// Asks the vision model about every image (all in flight, bounded by the global limiter)
/// and turns the answers into evidence, with the tokens used. Without a vision model, see
/// [`evidence_without_model`].
pub async fn inspect(
    llm: &LlmSession,
    images: &[DiagramImage],
    dimensions: &[Dimension],
) -> (BTreeMap<String, Vec<Evidence>>, TokenUsage) {
    let none = TokenUsage::default();
    let Some(model) = llm.config().vision_model.clone() else {
        return (evidence_without_model(images, dimensions), none);
    };
    if images.is_empty() {
        return (no_diagram(dimensions), none);
    }
    if let Some(reason) = llm.vision_rejected(&model) {
        return (
            evidence_model_rejected(images, dimensions, &model, &reason),
            none,
        );
    }
    let spec = SchemaSpec {
        name: "diagram_analysis".into(),
        description: "Classification and flow of one architecture diagram".into(),
        schema: strict_schema_for::<VisionAnswer>(),
    };
    let asks = images.iter().map(|image| {
        let messages = vision_messages(llm.prompts().text(PROMPT_FILE), image);
        let spec = &spec;
        let model = &model;
        async move {
            let r = llm::ask(llm, model, messages, spec, validate_answer, |err| {
                format!(
                    "Your previous answer was rejected: {err}. Answer again about the image \
                         on page {}, with only the JSON object required.",
                    image.page
                )
            })
            .await;
            match r {
                Ok(asked) => {
                    llm.usage().record(
                        "VisionInspector",
                        &format!("p.{}", image.page),
                        asked.usage,
                    );
                    (Ok((asked.value, asked.model)), asked.usage, false)
                }
                Err(e) => {
                    let usage = e.usage();
                    let rejected = matches!(e, AskError::Transport { rejected: true, .. });
                    llm.usage()
                        .record("VisionInspector", &format!("p.{}", image.page), usage);
                    (Err(e), usage, rejected)
                }
            }
        }
    });
    let mut usage = TokenUsage::default();
    let mut results = Vec::with_capacity(images.len());
    let mut rejection = None;
    for (result, u, rejected) in futures::future::join_all(asks).await {
        usage.add(u);
        if rejected && rejection.is_none() {
            rejection = result.as_ref().err().map(ToString::to_string);
        }
        results.push(result);
    }
    if let Some(reason) = rejection
        && results.iter().all(Result::is_err)
    {
        tracing::warn!(
            model,
            "the vision model rejected the image request; diagrams are not inspected in this run: {reason}"
        );
        llm.note_vision_rejected(&model, &reason);
        return (
            evidence_model_rejected(images, dimensions, &model, &reason),
            usage,
        );
    }
    (evidence_from_answers(images, &results, dimensions), usage)
}

/// Evidence from the per-image answers (`results[i]` belongs to `images[i]`): one
/// classification per image and one fact per requirement, for each dimension.
pub fn evidence_from_answers(
    images: &[DiagramImage],
    results: &[Result<(VisionAnswer, String), AskError>],
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let answered: Vec<Answered> = images
        .iter()
        .zip(results)
        .filter_map(|(img, r)| r.as_ref().ok().map(|(a, m)| (img, a, m.as_str())))
        .collect();
    let mut out = BTreeMap::new();
    for d in dimensions {
        let mut evs = Vec::new();
        for (n, (img, r)) in images.iter().zip(results).enumerate() {
            evs.push(classification(&d.id, n, img, r));
        }
        for (req, goal) in REQUIREMENTS {
            evs.push(requirement(&d.id, req, goal, images, &answered));
        }
        out.insert(d.id.clone(), evs);
    }
    out
}

/// An image the vision model answered about: the image, the answer, the model.
type Answered<'a> = (&'a DiagramImage, &'a VisionAnswer, &'a str);

/// The classification of the `n`-th image (`vision.<dimension>.diagram.<n+1>`) from the vision
/// model's answer `r`, or why the model could not inspect it.
fn classification(
    dimension: &str,
    n: usize,
    img: &DiagramImage,
    r: &Result<(VisionAnswer, String), AskError>,
) -> Evidence {
    let id = format!("vision.{dimension}.diagram.{}", n + 1);
    let goal = format!("Classify the diagram on page {}", img.page);
    match r {
        Ok((a, model)) => Evidence::fact(
            id,
            Detective::VisionInspector,
            goal,
            a.diagram_type.is_diagram(),
            page_loc(img.page),
            format!(
                "{} ({}x{} {}) classified as {} by {model}; shows: parallel detectives \
                 {}, evidence aggregation {}, parallel judges {}, synthesis {}",
                if a.diagram_type.is_diagram() {
                    "an architecture diagram"
                } else {
                    "not an architecture diagram"
                },
                img.width,
                img.height,
                img.kind,
                a.diagram_type.as_str(),
                a.shows_parallel_detectives,
                a.shows_evidence_aggregation,
                a.shows_parallel_judges,
                a.shows_synthesis
            ),
            model_confidence(),
        )
        .with_content(a.flow_description.clone()),
        Err(e) => Evidence::missing(
            id,
            Detective::VisionInspector,
            goal,
            page_loc(img.page),
            format!("the vision model could not inspect this image: {e}"),
        )
        .with_fix(VISION_FIX),
    }
}

/// Whether some inspected diagram shows the requirement `req`
/// (`vision.<dimension>.flow.<req>`); missing when no image could be inspected.
fn requirement(
    dimension: &str,
    req: &str,
    goal: &str,
    images: &[DiagramImage],
    answered: &[Answered],
) -> Evidence {
    let id = format!("vision.{dimension}.flow.{req}");
    if answered.is_empty() {
        return Evidence::missing(
            id,
            Detective::VisionInspector,
            goal,
            pages_loc(&images.iter().collect::<Vec<_>>()),
            "no diagram could be inspected by the vision model (see the per-diagram \
                     evidence)",
        )
        .with_fix(VISION_FIX);
    }
    let showing: Vec<&DiagramImage> = answered
        .iter()
        .filter(|(_, a, _)| shows(a, req))
        .map(|(i, _, _)| *i)
        .collect();
    let inspected: Vec<&DiagramImage> = answered.iter().map(|(i, _, _)| *i).collect();
    let found = !showing.is_empty();
    Evidence::fact(
        id,
        Detective::VisionInspector,
        goal,
        found,
        if found {
            pages_loc(&showing)
        } else {
            pages_loc(&inspected)
        },
        if found {
            format!(
                "the vision model saw it in {} of {} inspected {}",
                showing.len(),
                inspected.len(),
                crate::words::form(inspected.len(), "diagram", "diagrams")
            )
        } else {
            format!(
                "none of the {} inspected {} shows it according to the vision model",
                inspected.len(),
                crate::words::form(inspected.len(), "diagram", "diagrams")
            )
        },
        model_confidence(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EvidenceKind;

    fn dims() -> Vec<Dimension> {
        crate::rubric::Rubric::parse(crate::rubric::EMBEDDED_RUBRIC, "<embedded>")
            .unwrap()
            .dimensions_for(crate::rubric::TargetArtifact::PdfImages)
    }

    fn img(page: u32) -> DiagramImage {
        DiagramImage {
            page,
            width: 800,
            height: 600,
            kind: "raster".into(),
            png: vec![0x89, b'P', b'N', b'G'],
        }
    }

    fn answer(par_det: bool, judges: bool) -> VisionAnswer {
        VisionAnswer {
            diagram_type: DiagramType::LanggraphStateMachine,
            shows_parallel_detectives: par_det,
            shows_evidence_aggregation: true,
            shows_parallel_judges: judges,
            shows_synthesis: false,
            flow_description: "START fans out to three detectives".into(),
        }
    }

    #[test]
    fn without_model_says_so_and_counts_diagrams() {
        let d = dims();
        let ev = evidence_without_model(&[img(3), img(5)], &d);
        let e = &ev["swarm_visual"][0];
        assert_eq!(e.kind, EvidenceKind::Missing);
        assert!(!e.found);
        assert!(e.rationale.contains("no vision model") && e.rationale.contains('2'));
        assert!(e.fix.as_deref().unwrap().contains("AUDITOR_VISION_MODEL"));
        assert_eq!(e.location, "report.pdf p.3, p.5");
    }

    #[test]
    fn no_images_is_a_fact_not_missing() {
        let ev = evidence_without_model(&[], &dims());
        let e = &ev["swarm_visual"][0];
        assert_eq!(e.kind, EvidenceKind::Fact);
        assert!(!e.found);
        assert!(e.rationale.contains("no diagram in the report"));
    }

    #[test]
    fn answers_become_one_fact_per_requirement() {
        let images = [img(2), img(4), img(6)];
        let results = vec![
            Ok((answer(true, false), "vm".to_string())),
            Ok((answer(false, true), "vm".to_string())),
            Err(AskError::Transport {
                message: "HTTP 500".into(),
                requests: 1,
                usage: TokenUsage::default(),
                rejected: false,
            }),
        ];
        let ev = evidence_from_answers(&images, &results, &dims());
        let evs = &ev["swarm_visual"];
        assert_eq!(evs.len(), 3 + 4);
        let by = |suffix: &str| evs.iter().find(|e| e.id.ends_with(suffix)).unwrap();
        assert_eq!(by("diagram.3").kind, EvidenceKind::Missing);
        assert_eq!(by("diagram.1").location, "report.pdf p.2");
        assert_eq!(
            by("diagram.1").content.as_deref(),
            Some("START fans out to three detectives")
        );
        let det = by("flow.parallel_detectives");
        assert!(det.found);
        assert_eq!(det.location, "report.pdf p.2");
        assert!(by("flow.parallel_judges").found);
        assert_eq!(by("flow.parallel_judges").location, "report.pdf p.4");
        let syn = by("flow.synthesis");
        assert!(!syn.found);
        assert_eq!(syn.location, "report.pdf p.2, p.4");
        let ids: std::collections::BTreeSet<&str> = evs.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids.len(), evs.len(), "ids are unique");
    }

    #[test]
    fn vision_schema_lists_the_diagram_types() {
        let s = strict_schema_for::<VisionAnswer>();
        let t = s["properties"]["diagram_type"].to_string();
        for k in [
            "langgraph_state_machine",
            "sequence_diagram",
            "generic_flowchart",
            "screenshot",
            "other",
        ] {
            assert!(t.contains(k), "{t}");
        }
        assert_eq!(s["additionalProperties"], false);
    }
}
