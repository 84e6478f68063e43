use super::*;
use crate::justice::{compose, deliberate, tests::offline_audit};
use crate::model::{
    AuditError, AuditState, Confidence, Detective, Evidence, EvidenceKind, Judge, JudgeFailure,
    JudicialOpinion, RunMetadata, Score, StateUpdate, TokenUsage,
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
    assert!(md.contains("started 2026-11-22 04:00:00 UTC"), "{md}");
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
    let opinion_lines = md
        .lines()
        .filter(|l| {
            Judge::ALL
                .iter()
                .any(|j| l.starts_with(&format!("- **{} ", j.title())) && l.contains("/5:** "))
        })
        .count();
    assert_eq!(opinion_lines, 9, "{md}");
    assert_eq!(md.matches("**Final score: not assessed**").count(), 7);
    // the opinions come after the top of the report, never in it; the long tail (full
    // opinions, all evidence) is not in the Markdown but folded in the HTML
    let breakdown = md.find("## Criterion Breakdown").unwrap();
    assert!(md.find("\n**Judges:**\n").unwrap() > breakdown, "{md}");
    assert!(!md.contains("<details>"), "{md}");
    let html = render_html(&report, &evidence()).unwrap();
    assert_eq!(html.matches("<summary>Judges' full opinions").count(), 3);
    assert_eq!(
        html.matches("<details>").count(),
        html.matches("</details>").count()
    );
    assert_eq!(html.matches("(offline rules, no LLM)").count(), 9);
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
    assert!(md.contains("- `src/graph.py:7`: implement"), "{md}");
    // the plan puts the most points to gain first
    let plan = &md[md.find("## Remediation Plan").unwrap()..];
    let first = report.remediation_plan[0].dimension_name.clone();
    assert!(plan.contains(&format!("1. **{first}**")), "{plan}");
    // ... and points at the criterion whose fix it is
    let number = report
        .criteria
        .iter()
        .position(|c| c.dimension_name == first)
        .unwrap()
        + 1;
    assert!(
        plan.contains(&format!("1. **{first}** (criterion {number}): up to")),
        "{plan}"
    );
    assert!(md.contains(&format!("### {number}. {first}\n")), "{md}");
    // rules applied are named where the criterion is decided
    assert!(md.contains("**Rules that decided it:**"), "{md}");
}

fn first_lines(md: &str, n: usize) -> String {
    md.lines().take(n).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_top_40_lines_hold_the_verdict_the_table_what_was_audited_and_located_findings() {
    let ev = evidence();
    let mut report = offline_report();
    report.metadata.pdf_path = Some("/tmp/sub/reports/final.pdf".into());
    let md = render_markdown_with(&report, &ev, DEFAULT_TEMPLATE).unwrap();
    let top = first_lines(&md, 40);
    assert!(
        top.contains(&format!(
            "**Verdict:** {}",
            report.verdict.trim_end_matches('.')
        )),
        "{top}"
    );
    let assessed = report.criteria.iter().filter(|c| c.is_assessed()).count();
    // one sentence says the verdict with the score; no second line repeats it
    let score = format!("{:.2}/5", report.overall_score.unwrap());
    assert!(
        report.verdict.contains(&format!(
            "{score} over {assessed} of {} criteria",
            report.criteria.len()
        )),
        "{}",
        report.verdict
    );
    assert_eq!(top.matches(&score).count(), 1, "{top}");
    assert!(!top.contains("Overall score"), "{top}");
    // one table, every criterion in it, in the rubric's order, with the three judges' scores
    assert_eq!(
        md.matches("| # | Criterion | Final | Prosecutor | Defense | Tech Lead | Flags |")
            .count(),
        1
    );
    for (i, c) in report.criteria.iter().enumerate() {
        let row = top
            .lines()
            .find(|l| l.starts_with(&format!("| {} | {} | ", i + 1, c.dimension_name)))
            .unwrap_or_else(|| panic!("no row for {} in\n{top}", c.dimension_name));
        match c.final_score.filter(|_| c.is_assessed()) {
            Some(s) => {
                assert!(row.contains(&format!("| **{}/5** |", s.get())), "{row}");
                for j in Judge::ALL {
                    let o = c.judge_opinions.iter().find(|o| o.judge == j).unwrap();
                    assert!(row.contains(&format!("| {} |", o.score.get())), "{row}");
                }
            }
            None => assert!(
                row.contains("| not assessed |") && row.ends_with("| not assessed (grader-side) |"),
                "{row}"
            ),
        }
    }
    // what was audited: repository, commit, the PDF read, rubric and source, judges
    for needle in [
        "**Repository:** https://github.com/acme/auditor at commit 0123abcd",
        "**PDF read:** `/tmp/sub/reports/final.pdf`",
        "**Rubric:** Automaton Auditor Bench Rubric v1.0.0 (built into auditor",
        "**Judges:** offline judges (deterministic rules, no LLM)",
    ] {
        assert!(top.contains(needle), "{needle} not in\n{top}");
    }
    // the findings that cost the most points, located: the security finding first, then the
    // graph's missing requirements
    let findings: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("**Findings that cost the most points:**"))
        .skip(1)
        .take_while(|l| l.starts_with("- "))
        .collect();
    assert!((1..=5).contains(&findings.len()), "{top}");
    assert!(
        findings.iter().all(|f| f.ends_with("at `src/graph.py:7`")),
        "{findings:?}"
    );
    let costliest = report
        .criteria
        .iter()
        .filter(|c| c.is_assessed())
        .min_by_key(|c| c.final_score)
        .unwrap();
    assert!(
        findings[0].starts_with(&format!("- **{}**", costliest.dimension_name)),
        "{findings:?}"
    );
    // each says what kind of failure it is: the security finding is called one
    assert!(
        findings
            .iter()
            .any(|f| f.contains("Safe Tool Engineering") && f.contains("): security finding: ")),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(|f| f.contains("): not met: ")),
        "{findings:?}"
    );
    // the deciding evidence is shown located; the evidence, complete, is folded in the HTML
    assert!(
        md.contains("- ❌ `src/graph.py:7`: seen in the AST"),
        "{md}"
    );
    let html = render_html(&report, &ev).unwrap();
    assert!(
        html.contains("<summary>All evidence (3 items)</summary>"),
        "{html}"
    );
}

#[test]
fn counts_are_singular_or_plural_and_dates_are_to_the_second() {
    assert_eq!(count(1, "criterion", "criteria"), "1 criterion");
    assert_eq!(count(0, "criterion", "criteria"), "0 criteria");
    assert_eq!(count(2, "point", "points"), "2 points");
    assert_eq!(
        when("2026-11-23T03:20:33.044377811+00:00"),
        "2026-11-23 03:20:33 UTC"
    );
    assert_eq!(when("2026-11-23T05:20:33+02:00"), "2026-11-23 03:20:33 UTC");
    assert_eq!(when("yesterday"), "yesterday");

    let report = offline_report();
    let md = render_markdown_with(&report, &evidence(), DEFAULT_TEMPLATE).unwrap();
    for wrong in [
        "1 criteria",
        "1 points",
        "1 items",
        "(s) ",
        "criterion are",
        "1 of 10 criteria carry ",
    ] {
        assert!(!md.contains(wrong), "{wrong:?} in\n{md}");
    }
    for item in &report.remediation_plan {
        let points = if item.impact == 1 { "point" } else { "points" };
        assert!(
            md.contains(&format!("up to {} {points} to gain", item.impact)),
            "{md}"
        );
    }
    let html = render_html(&report, &evidence()).unwrap();
    assert!(
        html.contains("(1 item)") || html.contains("items)"),
        "{html}"
    );
    for wrong in ["1 items", "(s) "] {
        assert!(!html.contains(wrong), "{wrong:?} in\n{html}");
    }
}

#[test]
fn locations_are_relative_to_the_repository_and_the_pdf() {
    let places = Places {
        repo: "/tmp/x/repo",
        pdf: Some("/tmp/x/report.pdf"),
    };
    assert_eq!(location("/tmp/x/repo/src/a.py:3", places), "src/a.py:3");
    assert_eq!(location("/tmp/x/repo", places), "(repository)");
    assert_eq!(location("/tmp/x/report.pdf p.2", places), "report.pdf p.2");
    assert_eq!(
        location("c656610ec893d03099cc9bb5d3b14acf85cf2b73", places),
        "commit c656610ec893"
    );
    assert_eq!(location("a`b\nc", places), "a'b c");
    let inside = Places {
        repo: "/tmp/x/repo",
        pdf: Some("/tmp/x/repo/reports/final.pdf"),
    };
    assert_eq!(
        location("/tmp/x/repo/reports/final.pdf p.4", inside),
        "reports/final.pdf p.4"
    );
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
    assert!(md.contains("**Dissent:**\n> Defense (5)"), "{md}");
    // the table shows the failed judge as failed, and the flag in a few words
    let row = md
        .lines()
        .find(|l| l.contains(&format!(" | {} | ", d.name)))
        .unwrap_or_else(|| panic!("no row for {}:\n{md}", d.name));
    assert!(row.contains("| 1 | 5 | failed |"), "{row}");
    assert!(row.contains("judge failed"), "{row}");
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
    // the opinion, in brief, on one line that opens nothing
    assert!(
        md.contains(
            "- **Prosecutor 1/5:** \\# Injected heading \\`\\`\\` fence - list 1. ordered &lt;script>x&lt;/script> \\| pipe\n"
        ),
        "{md}"
    );
    assert!(md.contains("\\## not a heading PDF unreadable"), "{md}");
    // the HTML keeps the opinion's lines, as text
    let html = render_html(&report, &BTreeMap::new()).unwrap();
    assert!(html.contains("<p># Injected heading</p>"), "{html}");
    assert!(
        html.contains("<p>&lt;script&gt;x&lt;/script&gt; | pipe</p>"),
        "{html}"
    );
    assert!(!html.contains("<script>"), "{html}");
    assert!(html.contains("(LLM model-x)"), "{html}");
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
fn write_creates_dirs_and_the_three_files_atomically() {
    let report = offline_report();
    let dir = tempfile::tempdir().unwrap();
    let md_path = dir.path().join("nested/deeper/audit.md");
    let mut state = AuditState::default();
    state.merge(StateUpdate {
        evidences: evidence(),
        ..Default::default()
    });
    let side = Sidecar::new(&report, &state, None, None);
    let Written {
        markdown: md,
        json,
        html,
    } = write(&side, &md_path).unwrap();
    assert_eq!(md, md_path);
    assert_eq!(json, dir.path().join("nested/deeper/audit.json"));
    assert_eq!(html, dir.path().join("nested/deeper/audit.html"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(
        page.contains("seen in the AST"),
        "the HTML carries the evidence"
    );
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
    assert_eq!(entries, 3);
    // the file written is the one typed shape: it parses back whole
    let parsed = Sidecar::parse(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(parsed.report, report);
    assert_eq!(&parsed.evidence, state.evidences());
    // overwriting works
    write(&side, &md_path).unwrap();
}

#[test]
fn a_sidecar_of_another_shape_is_an_error_not_an_empty_report() {
    let report = offline_report();
    let good = Sidecar::new(&report, &AuditState::default(), None, None)
        .to_json()
        .unwrap();
    assert!(Sidecar::parse(&good).is_ok());
    let mut other: serde_json::Value = serde_json::from_str(&good).unwrap();
    other["evidence"] = serde_json::json!([{"id": "x"}]);
    let e = Sidecar::parse(&other.to_string()).unwrap_err();
    assert!(
        matches!(e, ReportError::Sidecar(_)) && e.to_string().contains("expected shape"),
        "{e}"
    );
    let e = Sidecar::parse(r#"{"report": {}}"#).unwrap_err();
    assert!(matches!(e, ReportError::Sidecar(_)), "{e}");
}

#[test]
fn write_refuses_a_json_markdown_path_and_reports_unwritable_dirs() {
    let report = offline_report();
    let side = Sidecar::new(&report, &AuditState::default(), None, None);
    let dir = tempfile::tempdir().unwrap();
    for bad in ["x.json", "x.html"] {
        let e = write(&side, &dir.path().join(bad)).unwrap_err();
        assert!(matches!(e, ReportError::PathCollision(_)), "{e}");
    }
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let e = write(&side, &blocker.join("sub/r.md")).unwrap_err();
    assert!(e.to_string().contains("cannot write"), "{e}");
}

#[test]
fn the_html_template_escapes_every_value_and_references_nothing_outside() {
    // a triple-stash would insert a value unescaped
    assert!(
        !HTML_TEMPLATE.contains("{{{"),
        "unescaped value in the HTML template"
    );
    for outside in [
        "http:", "https:", "//", "<script", "<link", "@import", "url(",
    ] {
        let hits: Vec<&str> = HTML_TEMPLATE
            .lines()
            .filter(|l| l.contains(outside) && !l.trim_start().starts_with("/*"))
            .collect();
        assert!(hits.is_empty(), "{outside} in the HTML template: {hits:?}");
    }
    // a value is escaped where it lands
    let mut report = offline_report();
    report.verdict = "<img src=x onerror=alert(1)> & \"quoted\"".into();
    let html = render_html(&report, &evidence()).unwrap();
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains("&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt; &amp; &quot;quoted&quot;"),
        "{html}"
    );
}

#[test]
fn a_long_opinion_is_shown_in_whole_sentences_never_cut_mid_word() {
    let sentence = "The graph fans out to three judges and joins them before the Chief Justice.";
    let long = [sentence; 8].join(" ");
    let b = brief(&long, BRIEF_OPINION);
    assert!(b.chars().count() <= BRIEF_OPINION + 2, "{b}");
    assert!(b.ends_with("Justice. …"), "cut after a sentence: {b}");
    assert!(b.starts_with(sentence));
    // one long sentence: cut at a word, with an ellipsis
    let words = "word ".repeat(200);
    let b = brief(&words, 50);
    assert!(b.ends_with("word…"), "{b}");
    // short enough: whole, on one line
    assert_eq!(brief("Fine.\nDone.", 50), "Fine. Done.");
}

#[test]
fn the_verdict_sentence_says_what_the_score_leaves_out_once() {
    let ev = evidence();
    let mut report = offline_report();
    let (id, name) = (
        report.criteria[0].dimension_id.clone(),
        report.criteria[0].dimension_name.clone(),
    );
    report.criteria[0] =
        CriterionResult::not_assessed(id, name, "no image could be extracted", "re-run");
    let md = render_markdown_with(&report, &ev, DEFAULT_TEMPLATE).unwrap();
    let top = first_lines(&md, 40);
    let left_out = report.criteria.iter().filter(|c| !c.is_assessed()).count();
    assert!(left_out > 0);
    let line = top
        .lines()
        .find(|l| l.starts_with("**Verdict:**"))
        .expect("a verdict line");
    assert!(
        line.ends_with(&format!(
            "({left_out} not assessed by the grader, excluded)."
        )),
        "{line}"
    );
    assert_eq!(
        top.matches("not assessed by the grader").count(),
        1,
        "{top}"
    );
}

#[test]
fn a_criterion_listed_twice_in_the_findings_counts_its_points_once_and_durations_round() {
    let ev = evidence();
    let mut report = offline_report();
    report.metadata.duration_ms = 60;
    let md = render_markdown_with(&report, &ev, DEFAULT_TEMPLATE).unwrap();
    let graph = report
        .criteria
        .iter()
        .find(|c| c.dimension_id == "graph_orchestration")
        .unwrap();
    let listed: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with(&format!("- **{}** (", graph.dimension_name)))
        .collect();
    assert!(
        listed.len() >= 2,
        "the fixture lists it twice: {listed:?}\n{md}"
    );
    assert_eq!(
        listed.iter().filter(|l| l.contains(" lost)")).count(),
        1,
        "{listed:?}"
    );
    // as the summary on stdout rounds it: 60 ms is 0.1 s, not 0.0 s
    assert!(md.contains("took 0.1 s"), "{md}");
    let html = render_html(&report, &ev).unwrap();
    assert!(html.contains("took 0.1 s"));
}
