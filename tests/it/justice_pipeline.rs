//! The public judicial pipeline end to end, as the actor shell uses it: offline judges →
//! Chief Justice → compose → Markdown + JSON on disk.

use auditor::judges::{EvidencePack, JudgeRequest, offline};
use auditor::justice::{compose, deliberate};
use auditor::model::fact::{Fact, GraphFact, Layer, Site};
use auditor::model::{
    AuditReport, Confidence, Detective, Evidence, EvidenceKind, Judge, JudgeFailure, JudgeMode,
    RunMetadata, TokenUsage,
};
use auditor::report;
use auditor::rubric::{EMBEDDED_RUBRIC, Rubric};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A graph fact as the RepoInvestigator files it (typed, with its statement and fix).
fn graph(f: GraphFact) -> Evidence {
    Evidence::stated(
        "repo.graph",
        Detective::RepoInvestigator,
        "StateGraph wired for parallel fan-out/fan-in with error edges",
        Fact::Graph(f),
        "https://example.org/r",
        Confidence::CERTAIN,
    )
}

fn fact(id: &str, goal: &str, found: bool, location: &str) -> Evidence {
    Evidence::fact(
        id,
        Detective::RepoInvestigator,
        goal,
        found,
        location,
        "read from the repository",
        Confidence::CERTAIN,
    )
}

#[test]
fn offline_audit_writes_a_flagged_report_with_all_ten_criteria() {
    let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").expect("embedded rubric");
    let mut evidence: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    evidence.insert(
        "graph_orchestration".into(),
        vec![
            graph(GraphFact::FanOut {
                layer: Layer::Detectives,
                branch: None,
                graph: Site::new("src/graph.py", 20),
            }),
            graph(GraphFact::FanIn {
                layer: Layer::Detectives,
                branch: None,
                join: None,
                graph: Site::new("src/graph.py", 24),
            }),
            graph(GraphFact::Definition {
                at: Some(Site::new("src/graph.py", 5)),
                state_type: Some("AgentState".into()),
                builder: "builder".into(),
                nodes: 4,
                edges: 3,
                conditional_edges: 0,
                conditional: 0,
                graphs: 1,
                files: 3,
            }),
        ],
    );
    evidence.insert(
        "safe_tool_engineering".into(),
        vec![
            fact(
                "repo.tools.tempdir",
                "clone in a temporary directory",
                true,
                "src/tools/git.py:8",
            ),
            fact(
                "repo.tools.os_system",
                "os.system with the URL",
                true,
                "src/tools/git.py:12",
            )
            .with_kind(EvidenceKind::SecurityFinding),
        ],
    );
    evidence.insert(
        "report_accuracy".into(),
        vec![fact(
            "doc.paths.verified",
            "cited paths exist",
            true,
            "report.pdf p.2",
        )],
    );
    evidence.insert(
        "swarm_visual".into(),
        vec![Evidence::missing(
            "vision.missing",
            Detective::VisionInspector,
            "classify diagrams",
            "report.pdf",
            "no image could be extracted",
        )],
    );
    let pack = Arc::new(EvidencePack {
        evidences: evidence.clone(),
        excerpts: BTreeMap::new(),
    });
    let shared = Arc::new(rubric.clone());
    let results = rubric
        .dimensions
        .iter()
        .map(|d| {
            let opinions: Vec<_> = Judge::ALL
                .iter()
                .filter(|j| !(d.id == "report_accuracy" && **j == Judge::TechLead))
                .map(|j| {
                    offline::judge(&JudgeRequest {
                        persona: *j,
                        criterion_id: d.id.clone(),
                        rubric: shared.clone(),
                        pack: pack.clone(),
                    })
                })
                .collect();
            let failures = if d.id == "report_accuracy" {
                vec![JudgeFailure {
                    judge: Judge::TechLead,
                    criterion_id: d.id.clone(),
                    reason: "judge actor restarted twice".into(),
                }]
            } else {
                vec![]
            };
            deliberate(
                d,
                &rubric.synthesis_rules,
                pack.evidence_for(&d.id),
                &opinions,
                &failures,
                vec![],
            )
        })
        .collect();
    let metadata = RunMetadata {
        auditor_version: env!("CARGO_PKG_VERSION").into(),
        rubric_name: rubric.rubric_metadata.rubric_name.clone(),
        rubric_version: rubric.rubric_metadata.version.clone(),
        rubric_source: "<embedded>".into(),
        rubric_sha256: String::new(),
        prompts: None,
        judge_mode: JudgeMode::Offline,
        judge_models: BTreeMap::new(),
        vision_model: None,
        pdf_path: Some("report.pdf".into()),
        started_at: "2026-11-22T04:00:00Z".into(),
        duration_ms: 900,
        tokens: TokenUsage::default(),
        tokens_by_persona: BTreeMap::new(),
        tokens_by_criterion: BTreeMap::new(),
        cost: None,
        judge_restarts: 0,
        judge_resends: 0,
    };
    let audit = compose(
        "file:///tmp/sample",
        Some("deadbeef".into()),
        &rubric,
        results,
        metadata,
        vec![],
        &evidence,
    );
    assert_eq!(audit.criteria.len(), 10);
    assert!(audit.overall_score.is_some_and(|s| s <= 3.0));
    assert!(!audit.is_complete());

    let dir = tempfile::tempdir().expect("tempdir");
    let md_path = dir.path().join("out/audit.md");
    let mut state = auditor::model::AuditState::default();
    state.merge(auditor::model::StateUpdate {
        evidences: evidence.clone(),
        ..Default::default()
    });
    let side = report::Sidecar::new(&audit, &state, None, None);
    let written = report::write(&side, &md_path).expect("write");
    let (md, json) = (written.markdown, written.json);
    let text = std::fs::read_to_string(md).expect("markdown");
    for section in [
        "## Executive Summary",
        "## Criterion Breakdown",
        "## Remediation Plan",
    ] {
        assert!(text.contains(section), "{section}");
    }
    assert!(text.contains("offline judges (deterministic rules, no LLM)"));
    assert!(text.contains("**JUDGE FAILED**: Tech Lead: judge actor restarted twice"));
    // swarm_visual: only evidence the grader could not collect → not assessed, no score
    assert!(text.contains("**NOT ASSESSED (grader-side, no score)**: no image could be extracted"));
    let visual = audit
        .criteria
        .iter()
        .find(|c| c.dimension_id == "swarm_visual")
        .unwrap();
    assert_eq!(visual.final_score, None);
    assert!(
        audit
            .remediation_plan
            .iter()
            .all(|r| r.dimension_id != "swarm_visual")
    );
    assert!(text.contains("**security_override**"));
    assert!(text.contains("Orchestration Fraud"));
    assert!(
        text.contains(
            "- `src/graph.py:20`: add one edge from the node before the detectives (or START) to each detective"
        ),
        "{text}"
    );
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("json")).expect("valid json");
    let back: AuditReport = serde_json::from_value(value["report"].clone()).expect("report");
    assert_eq!(back, audit);
}
