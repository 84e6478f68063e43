use super::*;
use crate::judges::{EvidencePack, JudgeRequest, offline};
use crate::model::{
    Confidence, Detective, EvidenceKind, JudgeMode, OpinionSource, Stage, TokenUsage,
};
use crate::rubric::{EMBEDDED_RUBRIC, TargetArtifact};
use std::sync::Arc;

fn dim(id: &str, name: &str) -> Dimension {
    Dimension {
        id: id.into(),
        name: name.into(),
        target_artifact: TargetArtifact::GithubRepo,
        forensic_instruction: "look".into(),
        success_pattern: Some("Two fan-out/fan-in stages.".into()),
        failure_pattern: None,
        judicial_logic: None,
    }
}

fn rules() -> BTreeMap<String, String> {
    [
        "security_override",
        "fact_supremacy",
        "functionality_weight",
        "dissent_requirement",
        "variance_re_evaluation",
    ]
    .iter()
    .map(|r| (r.to_string(), "wording".to_string()))
    .collect()
}

fn fact_c(id: &str, found: bool, confidence: f64) -> Evidence {
    Evidence::fact(
        id,
        Detective::RepoInvestigator,
        format!("requirement {id}"),
        found,
        format!("src/graph.py:{}", 10 + id.len()),
        format!("rationale for {id}"),
        Confidence::new(confidence).unwrap(),
    )
}

fn fact(id: &str, found: bool) -> Evidence {
    fact_c(id, found, 1.0)
}

fn security(id: &str, found: bool) -> Evidence {
    fact(id, found).with_kind(EvidenceKind::SecurityFinding)
}

fn contradiction(id: &str) -> Evidence {
    fact(id, true).with_kind(EvidenceKind::Contradiction)
}

fn missing(id: &str) -> Evidence {
    Evidence::missing(
        id,
        Detective::DocAnalyst,
        "read the report",
        "report.pdf",
        "PDF unreadable",
    )
}

fn op(judge: Judge, criterion: &str, score: i64, cited: &[&str]) -> JudicialOpinion {
    JudicialOpinion {
        judge,
        criterion_id: criterion.into(),
        score: Score::new(score).unwrap(),
        argument: format!("{judge} says {score}"),
        cited_evidence: cited.iter().map(|s| s.to_string()).collect(),
        source: OpinionSource::Offline,
    }
}

/// Three opinions on `c`, each citing every evidence id.
fn three(c: &str, scores: [i64; 3], evidence: &[Evidence]) -> Vec<JudicialOpinion> {
    let ids: Vec<&str> = evidence.iter().map(|e| e.id.as_str()).collect();
    Judge::ALL
        .iter()
        .zip(scores)
        .map(|(j, s)| op(*j, c, s, &ids))
        .collect()
}

fn fired(r: &CriterionResult, rule: Rule) -> bool {
    r.rules_applied.iter().any(|a| a.rule == rule)
}

fn detail(r: &CriterionResult, rule: Rule) -> String {
    r.rules_applied
        .iter()
        .find(|a| a.rule == rule)
        .map(|a| a.detail.clone())
        .unwrap_or_default()
}

fn run(d: &Dimension, evidence: &[Evidence], opinions: &[JudicialOpinion]) -> CriterionResult {
    deliberate(d, &rules(), evidence, opinions, &[], vec![])
}

fn score_of(r: &CriterionResult) -> Option<u8> {
    r.final_score.map(Score::get)
}

#[test]
fn security_override_table() {
    let d = dim("safe_tool_engineering", "Safe Tool Engineering");
    // (evidence, scores, fires, final)
    let cases: Vec<(Vec<Evidence>, [i64; 3], bool, u8)> = vec![
        (
            vec![fact("a", true), security("s", true)],
            [5, 5, 5],
            true,
            3,
        ),
        (
            vec![fact("a", true), security("s", true)],
            [2, 2, 2],
            true,
            2,
        ),
        (
            vec![fact("a", true), security("s", false)],
            [5, 5, 5],
            false,
            5,
        ),
        (vec![fact("a", true)], [5, 5, 5], false, 5),
    ];
    for (i, (ev, scores, fires, expected)) in cases.into_iter().enumerate() {
        let r = run(&d, &ev, &three(&d.id, scores, &ev));
        assert_eq!(fired(&r, Rule::SecurityOverride), fires, "case {i}");
        assert_eq!(score_of(&r), Some(expected), "case {i}");
        if fires {
            assert!(
                detail(&r, Rule::SecurityOverride).contains("src/graph.py"),
                "case {i}"
            );
        }
    }
}

/// (evidence, scores P/D/T, rule fires, final score)
type Case = (Vec<Evidence>, [i64; 3], bool, Option<u8>);

#[test]
fn fact_supremacy_table() {
    let d = dim("chief_justice_synthesis", "Chief Justice");
    let mostly_unmet = vec![
        fact("a", true),
        fact("b", false),
        fact("c", false),
        fact("d", false),
    ];
    let half_unmet = vec![
        fact("a", true),
        fact("b", true),
        fact("c", false),
        fact("d", false),
    ];
    let unmet_low_conf = vec![
        fact("a", true),
        fact_c("b", false, 0.5),
        fact_c("c", false, 0.5),
        fact_c("d", false, 0.5),
    ];
    let all_met = vec![fact("a", true), fact("b", true), fact("c", true)];
    let with_contradiction = vec![fact("a", true), contradiction("x")];
    let with_missing = vec![fact("a", true), missing("m")];
    // (evidence, scores P/D/T, fires, final)
    let cases: Vec<Case> = vec![
        (mostly_unmet.clone(), [1, 5, 1], true, Some(1)),
        (mostly_unmet, [1, 3, 1], false, Some(2)), // (1+3+1)/3 = 1.67 → 2
        (half_unmet, [2, 4, 3], false, Some(3)),
        (unmet_low_conf, [2, 4, 2], false, Some(3)), // 2.67 → 3
        (all_met.clone(), [1, 5, 5], true, Some(5)),
        (all_met, [2, 5, 5], false, Some(4)),           // 4.0
        (with_contradiction, [2, 4, 3], true, Some(3)), // (2+3)/2 = 2.5 → 3 (half-up)
        // evidence the grader could not collect never overrules a judge
        (with_missing, [2, 4, 2], false, Some(3)),
    ];
    for (i, (ev, scores, fires, expected)) in cases.into_iter().enumerate() {
        let r = run(&d, &ev, &three(&d.id, scores, &ev));
        assert_eq!(
            fired(&r, Rule::FactSupremacy),
            fires,
            "case {i}: {:?}",
            r.rules_applied
        );
        assert_eq!(score_of(&r), expected, "case {i}");
        // the report reads these texts: plain language, no evidence ids in brackets
        for a in &r.rules_applied {
            assert!(!a.detail.contains('['), "case {i}: {}", a.detail);
        }
    }
}

#[test]
fn every_opinion_overruled_the_facts_decide_and_a_human_reviews() {
    let d = dim("chief_justice_synthesis", "Chief Justice");
    let ev = vec![fact("a", false), fact("b", false), fact("c", true)];
    let r = run(&d, &ev, &three(&d.id, [4, 5, 4], &ev));
    // 1 of 3 requirements met: 1 + 4/3 = 2.33 → 2. The criterion is never dropped (dropping it
    // would let judges who all contradict the facts lift the overall score).
    assert_eq!(score_of(&r), Some(2));
    assert!(
        r.rules_applied
            .iter()
            .any(|a| a.rule == Rule::FactSupremacy
                && a.detail.contains("follows the detectives' facts")),
        "{:?}",
        r.rules_applied
    );
    assert!(
        r.flags
            .iter()
            .any(|f| matches!(f, CriterionFlag::NeedsHumanReview { .. }))
    );
}

#[test]
fn functionality_weight_table() {
    let ev = vec![fact("a", true), fact("b", true), fact("c", false)];
    // P=1, D=3, T=5: plain mean 3; with the Tech Lead doubled (1+3+10)/4 = 3.5 → 4.
    let cases = [
        (
            dim("graph_orchestration", "Graph Orchestration Architecture"),
            true,
            4,
        ),
        (
            dim("langgraph_architecture", "LangGraph Orchestration Rigor"),
            true,
            4,
        ),
        (dim("arch", "LangGraph Architecture"), true, 4),
        (
            dim("judicial_nuance", "Judicial Nuance and Dialectics"),
            false,
            3,
        ),
        (
            dim("swarm_visual", "Architectural Diagram Analysis"),
            false,
            3,
        ),
    ];
    for (d, fires, expected) in cases {
        let r = run(&d, &ev, &three(&d.id, [1, 3, 5], &ev));
        assert_eq!(fired(&r, Rule::FunctionalityWeight), fires, "{}", d.id);
        assert_eq!(score_of(&r), Some(expected), "{}", d.id);
    }
}

#[test]
fn variance_boundary_two_does_not_fire_three_does() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true), fact("b", true), fact("c", false)];
    let cases = [
        ([1, 3, 3], false),
        ([3, 5, 4], false),
        ([1, 4, 4], true),
        ([1, 5, 3], true),
    ];
    for (scores, fires) in cases {
        let r = run(&d, &ev, &three(&d.id, scores, &ev));
        assert_eq!(fired(&r, Rule::VarianceReEvaluation), fires, "{scores:?}");
        assert_eq!(fired(&r, Rule::DissentRequirement), fires, "{scores:?}");
        assert_eq!(r.dissent_summary.is_some(), fires, "{scores:?}");
    }
}

#[test]
fn dissent_names_both_sides_scores_and_facts() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![
        fact("met.one", true),
        fact("met.two", true),
        fact("gap", false),
    ];
    let ops = vec![
        op(Judge::Prosecutor, &d.id, 1, &["gap"]),
        op(Judge::Defense, &d.id, 5, &["met.one", "met.two"]),
        op(Judge::TechLead, &d.id, 3, &["met.one", "gap"]),
    ];
    let r = run(&d, &ev, &ops);
    let s = r.dissent_summary.expect("dissent required");
    assert!(s.contains("Defense (5)"), "{s}");
    assert!(s.contains("Prosecutor (1)"), "{s}");
    assert!(s.contains("requirement gap (not met)"), "{s}");
    assert!(s.contains("requirement met.one (met)"), "{s}");
    assert!(!s.contains('['), "plain language, no evidence ids: {s}");
    assert!(
        s.contains("Tech Lead (3)") || s.contains("TechLead (3)"),
        "{s}"
    );
    assert!(s.contains("Resolution: the Chief Justice rules 3"), "{s}");
}

#[test]
fn variance_re_evaluation_halves_opinions_citing_nothing_valid() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true), fact("b", true), fact("c", false)];
    // P cites an id that is not evidence: weight 2 against 4 + 4.
    // (2·1 + 4·5 + 4·4) / 10 = 3.8 → 4; unweighted it would be 3.33 → 3.
    let ops = vec![
        op(Judge::Prosecutor, &d.id, 1, &["invented.id"]),
        op(Judge::Defense, &d.id, 5, &["a", "b"]),
        op(Judge::TechLead, &d.id, 4, &["a", "b", "c"]),
    ];
    let r = run(&d, &ev, &ops);
    assert_eq!(score_of(&r), Some(4));
    let det = detail(&r, Rule::VarianceReEvaluation);
    assert!(
        det.contains("Prosecutor (1): cites no valid evidence id"),
        "{det}"
    );
    assert!(det.contains("invented.id"), "{det}");
    assert!(det.contains("Defense (5): 2 valid citations"), "{det}");
}

#[test]
fn variance_re_evaluation_halves_opinions_whose_citations_contradict_their_score() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true), fact("b", true), fact("c", false)];
    // D gives 5 citing only the unmet requirement: weight 2.
    // (4·1 + 2·5 + 4·2) / 10 = 2.2 → 2; unweighted (1+5+2)/3 = 2.67 → 3.
    let ops = vec![
        op(Judge::Prosecutor, &d.id, 1, &["c"]),
        op(Judge::Defense, &d.id, 5, &["c"]),
        op(Judge::TechLead, &d.id, 2, &["a", "c"]),
    ];
    let r = run(&d, &ev, &ops);
    assert_eq!(score_of(&r), Some(2));
    assert!(
        detail(&r, Rule::VarianceReEvaluation).contains("Defense (5): every cited fact is against"),
        "{:?}",
        r.rules_applied
    );
}

#[test]
fn no_opinions_gives_no_score_and_needs_human_review() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true)];
    let failures: Vec<JudgeFailure> = Judge::ALL
        .iter()
        .map(|j| JudgeFailure {
            judge: *j,
            criterion_id: d.id.clone(),
            reason: format!("{j} timed out after 3 retries"),
        })
        .collect();
    let r = deliberate(&d, &rules(), &ev, &[], &failures, vec![]);
    assert_eq!(r.final_score, None);
    let failed: Vec<Judge> = r
        .flags
        .iter()
        .filter_map(|f| match f {
            CriterionFlag::JudgeFailed { judge, reason } => {
                assert!(reason.contains("timed out"), "{reason}");
                Some(*judge)
            }
            _ => None,
        })
        .collect();
    assert_eq!(failed, Judge::ALL.to_vec());
    assert!(r.flags.iter().any(
        |f| matches!(f, CriterionFlag::NotAssessed { reason } if reason.contains("timed out"))
    ));
    assert_eq!(r.status, crate::model::CriterionStatus::NotAssessed);
    assert!(
        r.not_assessed
            .as_ref()
            .unwrap()
            .fix
            .contains("OPENAI_BASE_URL")
    );
    assert!(!r.is_clean());
}

#[test]
fn one_failed_judge_is_flagged_and_the_others_decide() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true), fact("b", false)];
    let ops = vec![
        op(Judge::Defense, &d.id, 3, &["a"]),
        op(Judge::TechLead, &d.id, 2, &["a", "b"]),
        // an opinion about another criterion is ignored
        op(Judge::Prosecutor, "other", 1, &["a"]),
    ];
    let failures = vec![JudgeFailure {
        judge: Judge::Prosecutor,
        criterion_id: d.id.clone(),
        reason: "invalid JSON twice".into(),
    }];
    let r = deliberate(&d, &rules(), &ev, &ops, &failures, vec![]);
    assert_eq!(score_of(&r), Some(3)); // 2.5 rounds half-up
    assert_eq!(r.judge_opinions.len(), 2);
    assert_eq!(
        r.flags,
        vec![CriterionFlag::JudgeFailed {
            judge: Judge::Prosecutor,
            reason: "invalid JSON twice".into()
        }]
    );
}

#[test]
fn a_silent_judge_is_flagged_too() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true)];
    let ops = three(&d.id, [4, 4, 4], &ev)[..2].to_vec();
    let r = run(&d, &ev, &ops);
    assert!(r.flags.iter().any(|f| matches!(
        f,
        CriterionFlag::JudgeFailed { judge: Judge::TechLead, reason } if reason.contains("no opinion")
    )));
}

#[test]
fn rounding_is_half_up_and_exact() {
    let d = dim("judicial_nuance", "Judicial Nuance");
    let ev = vec![fact("a", true), fact("b", false)];
    for (scores, expected) in [
        ([2, 3, 2], 2),
        ([2, 3, 3], 3),
        ([3, 4, 4], 4),
        ([1, 2, 2], 2),
    ] {
        let r = run(&d, &ev, &three(&d.id, scores, &ev));
        assert_eq!(score_of(&r), Some(expected), "{scores:?}");
    }
}

#[test]
fn only_grader_side_missing_evidence_means_not_assessed_with_reason_and_fix() {
    let d = dim("theoretical_depth", "Theoretical Depth");
    let ev = vec![missing("doc.missing").with_fix("install PDFium")];
    let r = run(&d, &ev, &three(&d.id, [1, 1, 1], &ev));
    assert_eq!(r.final_score, None);
    assert_eq!(r.status, crate::model::CriterionStatus::NotAssessed);
    let na = r.not_assessed.as_ref().unwrap();
    assert!(na.reason.contains("PDF unreadable"), "{}", na.reason);
    assert_eq!(na.fix, "install PDFium");
    assert!(r.flags.iter().any(|f| matches!(
        f,
        CriterionFlag::NotAssessed { reason } if reason.contains("PDF unreadable")
    )));
    assert!(
        r.judge_opinions.is_empty(),
        "opinions on nothing are not kept"
    );
    assert!(
        r.remediation.contains("no fault of the student"),
        "{}",
        r.remediation
    );
    assert!(!r.is_assessed());
    assert!(!r.is_clean());
}

#[test]
fn partly_missing_evidence_is_judged_on_the_facts_without_penalty() {
    let d = dim("report_accuracy", "Report Accuracy");
    let ev = vec![fact("a", true), fact("b", true), missing("m")];
    let r = run(&d, &ev, &three(&d.id, [5, 5, 5], &ev));
    assert_eq!(score_of(&r), Some(5));
    assert!(!fired(&r, Rule::FactSupremacy));
    assert!(
        r.flags
            .iter()
            .any(|f| matches!(f, CriterionFlag::EvidenceMissing { .. }))
    );
    assert!(
        !r.remediation.contains("PDF unreadable"),
        "{}",
        r.remediation
    );
}

#[test]
fn rules_absent_from_the_rubric_are_marked_as_standing_rules() {
    let d = dim("safe_tool_engineering", "Safe Tool Engineering");
    let ev = vec![fact("a", true), security("s", true)];
    let r = deliberate(
        &d,
        &BTreeMap::new(),
        &ev,
        &three(&d.id, [3, 3, 3], &ev),
        &[],
        vec![],
    );
    assert!(detail(&r, Rule::SecurityOverride).contains("standing rule"));
    let r = run(&d, &ev, &three(&d.id, [3, 3, 3], &ev));
    assert!(!detail(&r, Rule::SecurityOverride).contains("standing rule"));
}

#[test]
fn remediation_is_file_level_and_ends_with_the_target() {
    let d = dim("graph_orchestration", "Graph");
    let mut gap = fact("repo.graph.fan_in", false);
    gap.location = "src/graph.py:42".into();
    gap.goal = "judges fan in before the Chief Justice".into();
    let ev = vec![fact("a", true), gap];
    let r = run(&d, &ev, &three(&d.id, [3, 3, 3], &ev));
    let lines: Vec<&str> = r.remediation.lines().collect();
    assert!(
        lines[0]
            .starts_with("src/graph.py:42: implement \"judges fan in before the Chief Justice\""),
        "{}",
        r.remediation
    );
    assert_eq!(lines.last(), Some(&"Target: Two fan-out/fan-in stages."));
    let ok = vec![fact("a", true)];
    let r = run(&d, &ok, &three(&d.id, [5, 5, 5], &ok));
    assert_eq!(
        r.remediation,
        "No change required: all 1 requirements are met."
    );
    // every requirement met, but the level reading holds the score at 3: the student is told
    // it stays at 3 and what the target is, never "no change required"
    let r = run(&d, &ok, &three(&d.id, [3, 3, 3], &ok));
    assert!(
        !r.remediation.contains("No change required"),
        "{}",
        r.remediation
    );
    assert!(
        r.remediation.starts_with(
            "No check of the detectives fails; the judges' reasons above hold the score at 3/5."
        ),
        "{}",
        r.remediation
    );
    assert!(
        !r.remediation.contains("every requirement"),
        "{}",
        r.remediation
    );
    assert!(
        r.remediation
            .ends_with("Target: Two fan-out/fan-in stages."),
        "{}",
        r.remediation
    );
}

#[test]
fn a_criterion_no_check_fails_is_told_what_the_next_level_of_its_table_asks() {
    // two cited paths, both real: level 3 of the cross-reference table (fewer than 3 cited)
    let d = dim("report_accuracy", "Report accuracy");
    let ev = vec![
        fact("pdf.report_accuracy.path.1", true),
        fact("pdf.report_accuracy.path.2", true),
    ];
    let r = run(&d, &ev, &three(&d.id, [3, 3, 3], &ev));
    assert!(
        r.remediation.starts_with(
            "Level 4 of the report cross-reference table asks for at least 3 cited paths that exist (here 2).\n"
        ),
        "{}",
        r.remediation
    );
    // every concept explained in the code's names: the table's top; nothing to fix
    let d = dim("theoretical_depth", "Depth");
    let ev = vec![
        fact("pdf.theoretical_depth.concept.fan_in", true),
        fact("pdf.theoretical_depth.tie.fan_in", true),
        fact("pdf.theoretical_depth.concept.metacognition", true),
        fact("pdf.theoretical_depth.tie.metacognition", true),
    ];
    let r = run(&d, &ev, &three(&d.id, [4, 4, 4], &ev));
    assert!(
        r.remediation.starts_with(
            "Nothing to fix: every check of the detectives passes; 4/5 is the most the theoretical depth table gives from facts alone"
        ),
        "{}",
        r.remediation
    );
    // the judges hold it below the level of the facts: their reasons, not the table's
    let r = run(&d, &ev, &three(&d.id, [3, 3, 3], &ev));
    assert!(
        r.remediation
            .starts_with("No check of the detectives fails"),
        "{}",
        r.remediation
    );
}

fn metadata(mode: JudgeMode) -> RunMetadata {
    RunMetadata {
        auditor_version: "0.1.0".into(),
        rubric_name: "r".into(),
        rubric_version: "1".into(),
        rubric_source: "<embedded>".into(),
        rubric_sha256: String::new(),
        prompts: None,
        judge_mode: mode,
        judge_models: BTreeMap::new(),
        vision_model: None,
        pdf_path: None,
        started_at: "2026-01-01T00:00:00Z".into(),
        duration_ms: 1234,
        tokens: TokenUsage::default(),
        tokens_by_persona: BTreeMap::new(),
        tokens_by_criterion: BTreeMap::new(),
        cost: None,
        judge_restarts: 0,
        judge_resends: 0,
    }
}

/// Runs the real offline judges and the Chief Justice over the embedded rubric.
pub(crate) fn offline_audit(
    evidence: &BTreeMap<String, Vec<Evidence>>,
) -> (Rubric, Vec<CriterionResult>) {
    let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
    let pack = Arc::new(EvidencePack {
        evidences: evidence.clone(),
        excerpts: BTreeMap::new(),
    });
    let shared = Arc::new(rubric.clone());
    let results = rubric
        .dimensions
        .iter()
        .map(|d| {
            let opinions: Vec<JudicialOpinion> = Judge::ALL
                .iter()
                .map(|j| {
                    offline::judge(&JudgeRequest {
                        persona: *j,
                        criterion_id: d.id.clone(),
                        rubric: shared.clone(),
                        pack: pack.clone(),
                    })
                })
                .collect();
            deliberate(
                d,
                &rubric.synthesis_rules,
                pack.evidence_for(&d.id),
                &opinions,
                &[],
                vec![],
            )
        })
        .collect();
    (rubric, results)
}

fn sample_evidence(with_security: bool) -> BTreeMap<String, Vec<Evidence>> {
    let mut m = BTreeMap::new();
    m.insert(
        "git_forensic_analysis".to_string(),
        vec![fact("git.count", true), fact("git.progression", true)],
    );
    m.insert(
        "graph_orchestration".to_string(),
        vec![fact("graph.fan_out", true), fact("graph.fan_in", false)],
    );
    let mut tools = vec![fact("tools.tempdir", true)];
    if with_security {
        tools.push(security("tools.os_system", true));
    }
    m.insert("safe_tool_engineering".to_string(), tools);
    m.insert(
        "theoretical_depth".to_string(),
        vec![missing("doc.missing")],
    );
    for id in [
        "state_management_rigor",
        "structured_output_enforcement",
        "judicial_nuance",
        "chief_justice_synthesis",
        "report_accuracy",
        "swarm_visual",
    ] {
        m.insert(id.to_string(), vec![fact(&format!("{id}.x"), true)]);
    }
    m
}

#[test]
fn compose_orders_remediation_by_impact_and_says_judges_were_offline() {
    let ev = sample_evidence(false);
    let (rubric, results) = offline_audit(&ev);
    let report = compose(
        "https://example.com/r.git",
        Some("abc123".into()),
        &rubric,
        results,
        metadata(JudgeMode::Offline),
        vec![],
        &ev,
    );
    assert_eq!(report.criteria.len(), 10);
    let impacts: Vec<u8> = report.remediation_plan.iter().map(|r| r.impact).collect();
    let mut sorted = impacts.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(impacts, sorted);
    // theoretical_depth could not be assessed (grader-side): not in the student's plan
    assert!(
        report
            .remediation_plan
            .iter()
            .all(|r| r.dimension_id != "theoretical_depth")
    );
    assert_eq!(
        report.remediation_plan[0].dimension_id,
        "graph_orchestration"
    );
    assert!(
        report.verdict.contains("over 9 of 10"),
        "{}",
        report.verdict
    );
    // the summary does not repeat what the report's header shows (repository, commit, judges)
    for shown in ["abc123", "offline judges", "Audit of"] {
        assert!(
            !report.executive_summary.contains(shown),
            "{shown}: {}",
            report.executive_summary
        );
    }
    assert_eq!(report.commit.as_deref(), Some("abc123"));
    assert_eq!(report.metadata.judge_mode, JudgeMode::Offline);
    let assessed: Vec<f64> = report
        .criteria
        .iter()
        .filter_map(|c| c.final_score.map(|s| f64::from(s.get())))
        .collect();
    let mean = assessed.iter().sum::<f64>() / assessed.len() as f64;
    assert_eq!(report.overall_score, Some((mean * 100.0).round() / 100.0));
    assert!(!report.is_complete()); // theoretical_depth is not assessed
}

#[test]
fn compose_caps_the_overall_score_on_a_confirmed_security_finding() {
    let ev = sample_evidence(true);
    let (rubric, results) = offline_audit(&ev);
    let tools = results
        .iter()
        .find(|r| r.dimension_id == "safe_tool_engineering")
        .unwrap();
    assert!(fired(tools, Rule::SecurityOverride));
    assert!(score_of(tools).unwrap() <= 3);
    let report = compose(
        "repo",
        None,
        &rubric,
        results,
        metadata(JudgeMode::Offline),
        vec![],
        &ev,
    );
    assert_eq!(report.overall_score, Some(3.0));
    assert!(
        report.executive_summary.contains("Security override"),
        "{}",
        report.executive_summary
    );
    assert!(report.executive_summary.contains("tools.os_system"));
}

#[test]
fn compose_never_drops_a_dimension_and_reports_no_verdict_when_nothing_was_assessed() {
    let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
    let mut md = metadata(JudgeMode::Llm);
    md.judge_models.insert("prosecutor".into(), "gpt-x".into());
    let report = compose(
        "repo",
        None,
        &rubric,
        vec![],
        md,
        vec![AuditError {
            stage: Stage::Judge,
            dimensions: vec![],
            message: "endpoint down".into(),
        }],
        &BTreeMap::new(),
    );
    assert_eq!(report.criteria.len(), 10);
    assert_eq!(report.overall_score, None);
    assert!(report.verdict.starts_with("No verdict"));
    assert!(!report.executive_summary.contains("gpt-x"));
    assert!(report.executive_summary.contains("1 error occurred"));
    assert!(report.remediation_plan.iter().all(|r| r.impact == 4));
}

const OFFICIAL_V2: &str = include_str!("../../tests/fixtures/rubrics/official-v2.0.0.json");
const OFFICIAL_V3: &str = include_str!("../../tests/fixtures/rubrics/official-v3.0.0.json");

#[test]
fn official_rubrics_are_deliberated_with_the_offline_judges() {
    for (text, file, orchestration) in [
        (
            OFFICIAL_V2,
            "official-v2.0.0.json",
            "langgraph_architecture",
        ),
        (OFFICIAL_V3, "official-v3.0.0.json", "graph_orchestration"),
    ] {
        let rubric = Rubric::parse(text, file).unwrap();
        let shared = Arc::new(rubric.clone());
        let mut pack = EvidencePack::default();
        for d in &rubric.dimensions {
            pack.evidences.insert(
                d.id.clone(),
                vec![
                    fact(&format!("{}.a", d.id), true),
                    fact(&format!("{}.b", d.id), false),
                ],
            );
        }
        let pack = Arc::new(pack);
        for d in &rubric.dimensions {
            let opinions: Vec<JudicialOpinion> = Judge::ALL
                .iter()
                .map(|j| {
                    offline::judge(&JudgeRequest {
                        persona: *j,
                        criterion_id: d.id.clone(),
                        rubric: shared.clone(),
                        pack: pack.clone(),
                    })
                })
                .collect();
            let r = deliberate(
                d,
                &rubric.synthesis_rules,
                pack.evidence_for(&d.id),
                &opinions,
                &[],
                vec![],
            );
            assert!(r.final_score.is_some(), "{file} {}", d.id);
            assert!(r.flags.is_empty(), "{file} {}: {:?}", d.id, r.flags);
            assert_eq!(
                fired(&r, Rule::FunctionalityWeight),
                d.id == orchestration,
                "{file} {}",
                d.id
            );
            if d.id == orchestration && file.contains("v2") {
                // v2 does not name functionality_weight: applied as a standing rule, and said so
                assert!(detail(&r, Rule::FunctionalityWeight).contains("standing rule"));
            }
        }
    }
}

fn scored(name: &str, score: i64) -> CriterionResult {
    CriterionResult {
        dimension_id: name.to_lowercase(),
        dimension_name: name.into(),
        final_score: Some(Score::new(score).unwrap()),
        judge_opinions: vec![],
        dissent_summary: None,
        remediation: String::new(),
        rules_applied: vec![],
        flags: vec![],
        status: Default::default(),
        not_assessed: None,
    }
}

#[test]
fn ties_are_never_called_the_strongest() {
    let results: Vec<CriterionResult> = [("A", 5), ("B", 5), ("C", 5), ("D", 5), ("E", 3)]
        .iter()
        .map(|(n, s)| scored(n, *s))
        .collect();
    let refs: Vec<&CriterionResult> = results.iter().collect();
    assert_eq!(extreme(&refs, 5), "4 criteria at 5/5");
    assert_eq!(extreme(&refs, 3), "E (3/5)");
    assert_eq!(extreme(&refs[2..], 5), "C, D (5/5 each)");
}

#[test]
fn the_summary_names_ties_as_ties_and_counts_in_the_right_number() {
    let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
    let scores = [5, 5, 5, 5, 4, 4, 3, 3, 3, 2];
    let results: Vec<CriterionResult> = rubric
        .dimensions
        .iter()
        .zip(scores)
        .map(|(d, s)| {
            let mut r = scored(&d.name, s);
            r.dimension_id = d.id.clone();
            r
        })
        .collect();
    let mut flagged = results.clone();
    flagged[9].flags.push(CriterionFlag::NeedsHumanReview {
        reason: "scores too far apart".into(),
    });
    let report = compose(
        "repo",
        Some("abc".into()),
        &rubric,
        flagged,
        metadata(JudgeMode::Offline),
        vec![],
        &BTreeMap::new(),
    );
    let s = &report.executive_summary;
    assert!(s.contains("Strongest: 4 criteria at 5/5."), "{s}");
    assert!(
        s.contains(&format!("Weakest: {} (2/5).", rubric.dimensions[9].name)),
        "{s}"
    );
    assert!(
        s.contains("1 of the 10 scored criteria carries flags"),
        "{s}"
    );
    assert!(!s.contains("(s)"), "{s}");
    assert!(
        report.verdict.contains("over 10 of 10 criteria."),
        "{}",
        report.verdict
    );

    // all equal: neither a strongest nor a weakest
    let equal: Vec<CriterionResult> = results
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.final_score = Some(Score::new(4).unwrap());
            r
        })
        .collect();
    let report = compose(
        "repo",
        None,
        &rubric,
        equal,
        metadata(JudgeMode::Offline),
        vec![],
        &BTreeMap::new(),
    );
    assert!(
        !report.executive_summary.contains("Strongest"),
        "{}",
        report.executive_summary
    );
    assert!(
        !report.executive_summary.contains("carr"),
        "no flag sentence without flags"
    );
}

// ---- one rule at a time, over a `Case` -------------------------------------------------------

fn case<'a>(
    d: &'a Dimension,
    rules: &'a BTreeMap<String, String>,
    evidence: &'a [Evidence],
    opinions: &'a [JudicialOpinion],
) -> super::Case<'a> {
    super::Case {
        dimension: d,
        synthesis_rules: rules,
        evidence,
        tally: Tally::of(evidence),
        received: received_opinions(&d.id, opinions),
    }
}

fn weighed<'a>(c: &super::Case<'a>) -> Vec<Weighed<'a>> {
    c.received
        .iter()
        .map(|o| Weighed {
            opinion: o,
            weight: NORMAL_WEIGHT,
        })
        .collect()
}

#[test]
fn security_override_alone_caps_only_above_the_cap_and_is_silent_without_a_finding() {
    let d = dim("safe_tool_engineering", "Safe Tools");
    let r = rules();
    let with = [fact("a", true), security("s", true)];
    let c = case(&d, &r, &with, &[]);
    let (score, rule) = security_override(&c, Some(5)).expect("a confirmed finding");
    assert_eq!(score, Some(SECURITY_CAP));
    assert_eq!(rule.rule, Rule::SecurityOverride);
    assert_eq!(security_override(&c, Some(2)).unwrap().0, Some(2));
    assert_eq!(security_override(&c, None).unwrap().0, None);
    let cleared = [fact("a", true), security("s", false)];
    assert!(security_override(&case(&d, &r, &cleared, &[]), Some(5)).is_none());
}

#[test]
fn fact_supremacy_alone_zeroes_only_the_contradicted_opinions() {
    let d = dim("state_management_rigor", "State");
    let r = rules();
    let ev = [fact("a", false), fact("b", false), fact("c", false)];
    let ops = [
        op(Judge::Prosecutor, &d.id, 1, &["a"]),
        op(Judge::Defense, &d.id, 5, &["a"]),
        op(Judge::TechLead, &d.id, 2, &["a"]),
    ];
    let c = case(&d, &r, &ev, &ops);
    let mut w = weighed(&c);
    let overruled = fact_supremacy(&c, &mut w);
    assert_eq!(overruled.len(), 1, "{overruled:?}");
    assert!(
        overruled[0].starts_with("Defense (5) overruled"),
        "{overruled:?}"
    );
    let weights: Vec<(Judge, u32)> = w.iter().map(|w| (w.opinion.judge, w.weight)).collect();
    assert_eq!(
        weights,
        vec![
            (Judge::Prosecutor, NORMAL_WEIGHT),
            (Judge::Defense, 0),
            (Judge::TechLead, NORMAL_WEIGHT)
        ]
    );
}

#[test]
fn functionality_weight_alone_doubles_the_tech_lead_unless_overruled() {
    let d = dim("graph_orchestration", "Graph Orchestration");
    let r = rules();
    let ev = [fact("a", true)];
    let ops = three(&d.id, [3, 3, 4], &ev);
    let c = case(&d, &r, &ev, &ops);
    let mut w = weighed(&c);
    assert!(functionality_weight(&c, &mut w).is_some());
    let tech = w
        .iter()
        .find(|w| w.opinion.judge == Judge::TechLead)
        .unwrap();
    assert_eq!(tech.weight, 2 * NORMAL_WEIGHT);

    let mut w = weighed(&c);
    for x in w.iter_mut().filter(|w| w.opinion.judge == Judge::TechLead) {
        x.weight = 0;
    }
    assert!(
        functionality_weight(&c, &mut w).is_none(),
        "an overruled Tech Lead stays at 0"
    );
    let other = dim("state_management_rigor", "State");
    let c = case(&other, &r, &ev, &ops);
    assert!(functionality_weight(&c, &mut weighed(&c)).is_none());
}

#[test]
fn weighted_mean_rounds_half_up_and_has_no_score_without_weight() {
    let d = dim("x", "X");
    let r = rules();
    let ev = [fact("a", true)];
    let ops = [
        op(Judge::Prosecutor, "x", 2, &["a"]),
        op(Judge::Defense, "x", 3, &["a"]),
    ];
    let c = case(&d, &r, &ev, &ops);
    let mut w = weighed(&c);
    assert_eq!(weighted_mean(&w), Some(3), "2.5 rounds up");
    w[1].weight = NORMAL_WEIGHT / 2;
    assert_eq!(weighted_mean(&w), Some(2), "2.33 rounds down");
    for x in w.iter_mut() {
        x.weight = 0;
    }
    assert_eq!(weighted_mean(&w), None);
}
