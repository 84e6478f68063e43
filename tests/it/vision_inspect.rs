//! VisionInspector against a real local HTTP server speaking the OpenAI chat completions API.

use crate::llm_support;

use auditor::model::{Detective, EvidenceKind};
use auditor::pdf::DiagramImage;
use auditor::rubric::TargetArtifact;
use auditor::vision;
use base64::Engine;
use llm_support::*;
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

fn png(seed: u8) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let img = image::RgbImage::from_fn(8, 6, |x, y| image::Rgb([seed, x as u8 * 20, y as u8 * 30]));
    img.write_to(&mut buf, image::ImageFormat::Png).unwrap();
    buf.into_inner()
}

fn diagram(page: u32, seed: u8) -> DiagramImage {
    DiagramImage {
        page,
        width: 8,
        height: 6,
        kind: "raster".into(),
        png: png(seed),
    }
}

fn dims() -> Vec<auditor::rubric::Dimension> {
    rubric().dimensions_for(TargetArtifact::PdfImages)
}

fn state_machine_answer(_: &Value) -> String {
    json!({
        "diagram_type": "langgraph_state_machine",
        "shows_parallel_detectives": true,
        "shows_evidence_aggregation": true,
        "shows_parallel_judges": false,
        "shows_synthesis": true,
        "flow_description": "START fans out to RepoInvestigator, DocAnalyst and VisionInspector, which join at EvidenceAggregator; the judges then run one after another into ChiefJustice."
    })
    .to_string()
}

#[tokio::test]
async fn each_diagram_is_sent_as_a_data_url_and_the_answer_becomes_evidence() {
    let server = server(Script::new(vec![Step::AnswerWith(state_machine_answer)])).await;
    let judges = judges(config(&server, &[("AUDITOR_VISION_MODEL", "vision-model")]));
    let images = [diagram(2, 1), diagram(5, 2)];
    let (ev, usage) = vision::inspect(judges.session(), &images, &dims()).await;
    assert_eq!(
        usage.input_tokens, 200,
        "the vision tokens are returned for the totals"
    );

    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    let mut urls: Vec<String> = Vec::new();
    for body in &sent {
        assert_eq!(body["model"], "vision-model");
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
        let parts = body["messages"][1]["content"]
            .as_array()
            .expect("content parts");
        let url = parts
            .iter()
            .find(|p| p["type"] == "image_url")
            .and_then(|p| p["image_url"]["url"].as_str())
            .expect("an image part")
            .to_string();
        urls.push(url);
    }
    for img in &images {
        let expected = format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&img.png)
        );
        assert!(
            urls.contains(&expected),
            "diagram of page {} not sent",
            img.page
        );
    }

    let evs = &ev["swarm_visual"];
    assert!(
        evs.iter()
            .all(|e| e.detective == Detective::VisionInspector)
    );
    let by = |suffix: &str| {
        evs.iter()
            .find(|e| e.id.ends_with(suffix))
            .unwrap_or_else(|| panic!("no evidence {suffix}"))
    };
    let d1 = by("diagram.1");
    assert!(d1.found && d1.kind == EvidenceKind::Fact);
    assert_eq!(d1.location, "report.pdf p.2");
    assert!(d1.rationale.contains("langgraph_state_machine"));
    assert!(
        d1.content
            .as_deref()
            .unwrap()
            .contains("EvidenceAggregator")
    );
    assert!(by("flow.parallel_detectives").found);
    assert!(by("flow.evidence_aggregation").found);
    assert!(by("flow.synthesis").found);
    let judges_ev = by("flow.parallel_judges");
    assert!(!judges_ev.found);
    assert_eq!(judges_ev.location, "report.pdf p.2, p.5");
    assert_eq!(
        judges.usage().by_persona()["VisionInspector"].input_tokens,
        200
    );
}

#[tokio::test]
async fn a_failing_vision_endpoint_gives_missing_evidence_not_facts() {
    let server = server(Script::new(vec![Step::Fixed(
        ResponseTemplate::new(500).set_body_string("boom"),
    )]))
    .await;
    let judges = judges(config(
        &server,
        &[
            ("AUDITOR_VISION_MODEL", "vision-model"),
            ("AUDITOR_LLM_MAX_RETRIES", "1"),
        ],
    ));
    let (ev, _) = vision::inspect(judges.session(), &[diagram(4, 3)], &dims()).await;
    let evs = &ev["swarm_visual"];
    assert!(!evs.is_empty());
    assert!(
        evs.iter()
            .all(|e| e.kind == EvidenceKind::Missing && !e.found)
    );
    assert!(evs[0].rationale.contains("500"), "{}", evs[0].rationale);
}

#[tokio::test]
async fn by_default_the_judges_model_reads_the_diagrams() {
    let server = server(Script::new(vec![Step::AnswerWith(state_machine_answer)])).await;
    let judges = judges(config(&server, &[]));
    let (ev, _) = vision::inspect(judges.session(), &[diagram(1, 1)], &dims()).await;
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], MODEL);
    assert!(ev["swarm_visual"][0].found);
}

#[tokio::test]
async fn a_model_that_rejects_images_is_asked_once_and_the_criterion_says_why() {
    let server = server(Script::new(vec![Step::Fixed(
        ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "Invalid content type. image_url is only supported by certain models.",
            "type": "invalid_request_error"
        }})),
    )]))
    .await;
    let judges = judges(config(&server, &[]));
    let (ev, _) = vision::inspect(judges.session(), &[diagram(3, 1)], &dims()).await;
    assert_eq!(bodies(&server).await.len(), 1, "a rejection is not retried");
    let evs = &ev["swarm_visual"];
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].kind, EvidenceKind::Missing);
    assert!(evs[0].id.ends_with("model_rejected"));
    assert!(
        evs[0].rationale.contains("rejected the image request") && evs[0].rationale.contains("400"),
        "{}",
        evs[0].rationale
    );
    assert!(
        evs[0]
            .fix
            .as_deref()
            .unwrap()
            .contains("AUDITOR_VISION_MODEL")
    );
    // the next audit of the run does not send images to that model again
    let (again, _) =
        vision::inspect(judges.session(), &[diagram(1, 2), diagram(2, 3)], &dims()).await;
    assert_eq!(bodies(&server).await.len(), 1);
    assert!(again["swarm_visual"][0].id.ends_with("model_rejected"));
}

#[tokio::test]
async fn with_vision_off_nothing_is_sent_and_the_evidence_says_so() {
    let server = server(Script::new(vec![Step::AnswerWith(state_machine_answer)])).await;
    let judges = judges(config(&server, &[("AUDITOR_VISION_MODEL", "off")]));
    let (ev, _) = vision::inspect(
        judges.session(),
        &[diagram(1, 1), diagram(2, 2), diagram(3, 3)],
        &dims(),
    )
    .await;
    assert!(bodies(&server).await.is_empty());
    let e = &ev["swarm_visual"][0];
    assert_eq!(e.kind, EvidenceKind::Missing);
    assert!(e.rationale.contains("no vision model") && e.rationale.contains("3 diagram"));
    assert!(e.fix.as_deref().unwrap().contains("AUDITOR_VISION_MODEL"));
}
