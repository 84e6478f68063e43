use super::*;
use crate::justice::{compose, deliberate, tests::offline_audit};
use crate::model::{
    AuditError, Confidence, Detective, Evidence, EvidenceKind, Judge, JudgeFailure,
    JudicialOpinion, RunMetadata, Score, TokenUsage,
};
use crate::rubric::{EMBEDDED_RUBRIC, Rubric};
use std::collections::BTreeMap;

fn fact(id: &str, found: bool) -> Evidence {
    Evidence::fact(
        id,
        Detective::RepoInvestigator,
        format!("requirement {id}"),
        found,
        "src/graph.py:7",
        "seen in the AST",
        Confidence::CERTAIN,
    )
}

fn metadata(mode: JudgeMode) -> RunMetadata {
    RunMetadata {
        auditor_version: "0.1.0".into(),
        rubric_name: "Automaton Auditor Bench Rubric".into(),
        rubric_version: "1.0.0".into(),
        rubric_source: "<embedded>".into(),
        rubric_sha256: String::new(),
        prompts: None,
        judge_mode: mode,
        judge_models: BTreeMap::new(),
        vision_model: None,
        pdf_path: None,
        started_at: "2026-11-22T04:00:00Z".into(),
        duration_ms: 125_000,
        tokens: TokenUsage {
            input_tokens: 1000,
            output_tokens: 200,
            cached_input_tokens: 600,
        },
        tokens_by_persona: BTreeMap::new(),
        tokens_by_criterion: BTreeMap::new(),
        cost: None,
        judge_restarts: 0,
        judge_resends: 0,
    }
}

fn evidence() -> BTreeMap<String, Vec<Evidence>> {
    let mut m = BTreeMap::new();
    m.insert(
        "graph_orchestration".to_string(),
        vec![
            fact("graph.fan_out", true),
            fact("graph.fan_in", false),
            fact("graph.errors", false),
        ],
    );
    m.insert(
        "safe_tool_engineering".to_string(),
        vec![
            fact("tools.tempdir", true),
            fact("tools.os_system", true).with_kind(EvidenceKind::SecurityFinding),
        ],
    );
    m.insert(
        "theoretical_depth".to_string(),
        vec![Evidence::missing(
            "doc.missing",
            Detective::DocAnalyst,
            "read the report",
            "report.pdf",
            "the PDF has 0 bytes",
        )],
    );
    m.insert(
        "git_forensic_analysis".to_string(),
        vec![fact("git.count", true), fact("git.progression", true)],
    );
    m
}

fn offline_report() -> AuditReport {
    let ev = evidence();
    let (rubric, results) = offline_audit(&ev);
    compose(
        "https://github.com/acme/auditor",
        Some("0123abcd".into()),
        &rubric,
        results,
        metadata(JudgeMode::Offline),
        vec![],
        &ev,
    )
}

fn section_positions(md: &str) -> Vec<usize> {
    [
        "## Executive Summary",
        "## Criterion Breakdown",
        "## Remediation Plan",
    ]
    .iter()
    .map(|h| {
        md.find(&format!("\n{h}\n"))
            .unwrap_or_else(|| panic!("no {h}:\n{md}"))
    })
    .collect()
}

#[test]
fn renders_the_three_sections_in_order_with_every_criterion() {
    let report = offline_report();
    let md = render_markdown(&report, DEFAULT_TEMPLATE).unwrap();
    let pos = section_positions(&md);
    assert!(pos[0] < pos[1] && pos[1] < pos[2], "{md}");
    assert!(
        md.contains("offline judges (deterministic rules, no LLM)"),
        "{md}"
    );
    assert!(md.contains("0123abcd"));
    assert!(md.contains("Automaton Auditor Bench Rubric v1.0.0"));
    assert!(md.contains("2 min 05 s"));
    assert!(
        !md.contains("**Tokens:**"),
        "no tokens line for offline judges"
    );
    assert!(!md.contains("## Errors"));
    for c in &report.criteria {
        assert!(
            md.contains(&format!(". {}\n", c.dimension_name)),
            "{}",
            c.dimension_name
        );
    }
    // three criteria have facts; the others (no evidence, or only evidence the grader could
    // not collect) are not assessed and keep no opinion
    assert_eq!(md.matches("(offline rules, no LLM)").count(), 9);
    assert_eq!(md.matches("Cited evidence:").count(), 9);
    assert_eq!(md.matches("**Final score: not assessed**").count(), 7);
}

#[test]
fn flags_rules_dissent_and_remediation_are_visible() {
    let report = offline_report();
    let md = render_markdown(&report, DEFAULT_TEMPLATE).unwrap();
    assert!(
        md.contains("⚠️ **NOT ASSESSED (grader-side, no score)**: the PDF has 0 bytes"),
        "{md}"
    );
    assert!(md.contains("Fix (for whoever runs the grader)"), "{md}");
    assert!(md.contains("**security_override**"), "{md}");
    assert!(md.contains("**functionality_weight**"), "{md}");
    assert!(md.contains("src/graph.py:7: implement"), "{md}");
    // the plan puts the most points to gain first
    let plan = &md[md.find("## Remediation Plan").unwrap()..];
    let first = report.remediation_plan[0].dimension_name.clone();
    assert!(plan.contains(&format!("1. **{first}**")), "{plan}");
}

#[test]
fn not_assessed_criteria_failed_judges_dissent_and_errors_render() {
    let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
    let d = rubric.dimension("judicial_nuance").unwrap();
    let ev = vec![fact("j.a", true), fact("j.b", true), fact("j.c", false)];
    let op = |judge, score, cited: &[&str]| JudicialOpinion {
        judge,
        criterion_id: d.id.clone(),
        score: Score::new(score).unwrap(),
        argument: "# Injected heading\n```\nfence\n- list\n1. ordered\n<script>x</script> | pipe"
            .into(),
        cited_evidence: cited.iter().map(|s| s.to_string()).collect(),
        source: OpinionSource::Llm {
            model: "model-x".into(),
        },
    };
    let ops = vec![
        op(Judge::Prosecutor, 1, &["j.c"]),
        op(Judge::Defense, 5, &["j.a", "j.b"]),
    ];
    let failures = vec![JudgeFailure {
        judge: Judge::TechLead,
        criterion_id: d.id.clone(),
        reason: "reply was free text three times".into(),
    }];
    let nuance = deliberate(d, &rubric.synthesis_rules, &ev, &ops, &failures, vec![]);
    assert!(nuance.dissent_summary.is_some());
    let mut md_meta = metadata(JudgeMode::Llm);
    md_meta
        .judge_models
        .insert("prosecutor".into(), "model-x".into());
    let report = compose(
        "repo",
        None,
        &rubric,
        vec![nuance],
        md_meta,
        vec![AuditError {
            stage: Stage::DocAnalyst,
            dimensions: vec!["theoretical_depth".into()],
            message: "## not a heading\nPDF unreadable".into(),
        }],
        &BTreeMap::new(),
    );
    let md = render_markdown(&report, DEFAULT_TEMPLATE).unwrap();
    assert!(md.contains("LLM judges (prosecutor: model-x)"), "{md}");
    assert!(
        md.contains("**Tokens:** 1000 input (600 cached), 200 output"),
        "{md}"
    );
    assert!(md.contains("**Final score: not assessed**"), "{md}");
    assert!(
        md.contains("⚠️ **JUDGE FAILED**: Tech Lead: reply was free text"),
        "{md}"
    );
    assert!(
        md.contains("⚠️ **NOT ASSESSED (grader-side, no score)**"),
        "{md}"
    );
    assert!(md.contains("#### Dissent\n\n> Defense (5)"), "{md}");
    assert!(md.contains("## Errors\n"), "{md}");
    assert!(
        md.contains("- **DocAnalyst** (theoretical\\_depth)")
            || md.contains("- **DocAnalyst** (theoretical_depth)"),
        "{md}"
    );
    // untrusted text cannot open blocks
    assert_eq!(md.matches("\n## ").count(), 4, "{md}");
    assert!(!md.contains("```"), "{md}");
    assert!(!md.contains("<script>"), "{md}");
    assert!(md.contains("> \\# Injected heading"), "{md}");
    assert!(md.contains("> \\- list"), "{md}");
    assert!(md.contains("> 1\\. ordered"), "{md}");
    assert!(md.contains("\\| pipe"), "{md}");
    assert!(md.contains("\\## not a heading PDF unreadable"), "{md}");
    assert!(md.contains("(LLM model-x)"), "{md}");
}

#[test]
fn inline_neutralises_block_starts_and_code() {
    let cases = [
        ("# title", "\\# title"),
        ("> quote", "\\> quote"),
        ("---", "\\---"),
        ("=====", "\\====="),
        ("~~~rust", "\\~~~rust"),
        ("```", "\\`\\`\\`"),
        ("12. item", "12\\. item"),
        ("3) item", "3\\) item"),
        ("2026 was fine", "2026 was fine"),
        ("a\n# b", "a # b"),
        ("x <img src=y>", "x &lt;img src=y>"),
        ("a | b", "a \\| b"),
        ("src/graph.py:12 -> fan-in", "src/graph.py:12 -> fan-in"),
        (
            "fix ![t](https://evil.example/p.png) [x](https://e.example)",
            "fix !\\[t\\](https://evil.example/p.png) \\[x\\](https://e.example)",
        ),
        ("[start", "\\[start"),
        (
            "bell\u{7}esc\u{1b}[31mred",
            "bell\u{FFFD}esc\u{FFFD}\\[31mred",
        ),
        ("a\u{202E}b\u{2066}c", "a\u{FFFD}b\u{FFFD}c"),
    ];
    for (input, expected) in cases {
        assert_eq!(inline(input), expected, "{input:?}");
    }
    assert_eq!(lines("one\n\n  # two  \n"), vec!["one", "\\# two"]);
}

#[test]
fn strict_mode_rejects_unknown_fields_and_bad_templates() {
    let report = offline_report();
    assert!(matches!(
        render_markdown(&report, "{{no_such_field}}"),
        Err(ReportError::Render(_))
    ));
    assert!(matches!(
        render_markdown(&report, "{{#each criteria}}"),
        Err(ReportError::Template(_))
    ));
    // escaping is off: characters HTML escaping would mangle survive
    let md = render_markdown(&report, "{{judge_mode}} & {{repo}}").unwrap();
    assert_eq!(
        md,
        "offline judges (deterministic rules, no LLM) & https://github.com/acme/auditor"
    );
}

#[test]
fn write_creates_dirs_and_both_files_atomically() {
    let report = offline_report();
    let dir = tempfile::tempdir().unwrap();
    let md_path = dir.path().join("nested/deeper/audit.md");
    let side = sidecar(&report, &evidence()).unwrap();
    let (md, json) = write(&report, &md_path, &side).unwrap();
    assert_eq!(md, md_path);
    assert_eq!(json, dir.path().join("nested/deeper/audit.json"));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Criterion Breakdown"));
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let back: AuditReport = serde_json::from_value(value["report"].clone()).unwrap();
    assert_eq!(back, report);
    assert_eq!(
        value["evidence"]["theoretical_depth"][0]["id"],
        "doc.missing"
    );
    // no temporary files left behind
    let entries = std::fs::read_dir(dir.path().join("nested/deeper"))
        .unwrap()
        .count();
    assert_eq!(entries, 2);
    // overwriting works
    write(&report, &md_path, &side).unwrap();
}

#[test]
fn write_refuses_a_json_markdown_path_and_reports_unwritable_dirs() {
    let report = offline_report();
    let dir = tempfile::tempdir().unwrap();
    let e = write(&report, &dir.path().join("x.json"), &serde_json::json!({})).unwrap_err();
    assert!(matches!(e, ReportError::PathCollision(_)), "{e}");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let e = write(&report, &blocker.join("sub/r.md"), &serde_json::json!({})).unwrap_err();
    assert!(e.to_string().contains("cannot write"), "{e}");
}
