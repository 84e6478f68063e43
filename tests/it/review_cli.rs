//! `auditor review` and `auditor export` as a course team runs them on a graded batch (real
//! git repositories, the real binary, the offline judges).

use crate::review_support::*;
use std::collections::BTreeMap;
use std::path::Path;

/// The per-criterion CSV as rows of (column → value), by submission id.
fn criteria_csv(out: &Path) -> (Vec<String>, BTreeMap<String, BTreeMap<String, String>>) {
    let (code, text, err) = auditor(&["export", out.to_str().unwrap(), "--format", "criteria"]);
    assert_eq!(code, 0, "{err}");
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let mut rows = BTreeMap::new();
    for r in rd.records() {
        let r = r.unwrap();
        let m: BTreeMap<String, String> = header
            .iter()
            .cloned()
            .zip(r.iter().map(String::from))
            .collect();
        rows.insert(m["id"].clone(), m);
    }
    (header, rows)
}

/// A criterion of `row` the auditor scored below 5 (so an override to 5 changes it).
pub fn scored_below_five(header: &[String], row: &BTreeMap<String, String>) -> String {
    header
        .iter()
        .filter_map(|h| h.strip_suffix(":auditor"))
        .find(|c| {
            row[&format!("{c}:auditor")]
                .parse::<u8>()
                .is_ok_and(|s| s < 5)
        })
        .expect("a criterion scored below 5")
        .to_string()
}

#[test]
fn override_history_and_exports_keep_the_auditors_score() {
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 2, None);
    let dir = out.to_str().unwrap();
    let (header, before) = criteria_csv(&out);
    let crit = scored_below_five(&header, &before["s1"]);
    let auto = before["s1"][&format!("{crit}:auditor")].clone();

    // Refused, with the reason, exit 2: nothing recorded.
    for (args, says) in [
        (vec!["7", "--reason", "r"], "score \"7\" is not valid"),
        (vec!["4", "--reason", "  "], "a reason is required"),
    ] {
        let mut a = vec!["review", "override", dir, "s1", crit.as_str()];
        a.extend(args);
        a.extend(["--by", "ta"]);
        let (code, _, err) = auditor(&a);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(says), "{err}");
    }
    let (code, _, err) = auditor(&[
        "review", "override", dir, "s1", "no_such", "4", "--reason", "r", "--by", "ta",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown criterion \"no_such\""), "{err}");
    assert!(err.contains(&crit), "the known criteria are named: {err}");
    let (code, _, err) = auditor(&[
        "review", "override", dir, "nobody", &crit, "4", "--reason", "r", "--by", "ta",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no submission \"nobody\""), "{err}");

    let (code, said, err) = auditor(&[
        "review",
        "override",
        dir,
        "s1",
        &crit,
        "5",
        "--reason",
        "the retry does re-invoke the model (tools/llm.py:40)",
        "--by",
        "Ada TA",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        said.contains(&format!("the auditor's score {auto} kept")),
        "{said}"
    );
    // -q: the entry is recorded without a word on stdout; a refusal is still told
    let (code, said, err) = auditor(&[
        "-q",
        "review",
        "comment",
        dir,
        "s1",
        "Well argued.",
        "--by",
        "Ada TA",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(said.is_empty() && err.is_empty(), "{said}{err}");
    let (code, said, err) = auditor(&[
        "-q", "review", "override", dir, "s1", &crit, "7", "--reason", "r", "--by", "ta",
    ]);
    assert_eq!(code, 2);
    assert!(
        said.is_empty() && err.contains("score \"7\" is not valid"),
        "{said}{err}"
    );

    let (_, history, _) = auditor(&["review", "history", dir, "s1"]);
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 2, "{history}");
    assert!(
        lines[0].contains(&format!("override {crit} = 5 (auditor: {auto})")),
        "{history}"
    );
    assert!(lines[0].contains("Ada TA"), "{history}");
    assert!(lines[1].contains("comment: Well argued."), "{history}");
    assert!(auditor(&["review", "history", dir, "s0"]).1.is_empty());

    let (_, after) = criteria_csv(&out);
    assert_eq!(after["s1"][&crit], "5");
    assert_eq!(
        after["s1"][&format!("{crit}:auditor")],
        auto,
        "the auditor's score is kept"
    );
    assert_eq!(after["s1"][&format!("{crit}:overridden_by")], "Ada TA");
    assert_eq!(after["s0"], before["s0"], "another submission is untouched");
    assert_ne!(after["s1"]["final_overall"], before["s1"]["final_overall"]);
    assert_eq!(
        after["s1"]["auditor_overall"],
        before["s1"]["auditor_overall"]
    );

    let (code, canvas, err) = auditor(&[
        "export",
        dir,
        "--format",
        "canvas",
        "--assignment",
        "Lab 3 (1234)",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines = canvas.lines();
    assert_eq!(
        lines.next(),
        Some("Student,ID,SIS User ID,SIS Login ID,Section,Lab 3 (1234)")
    );
    assert_eq!(lines.next(), Some("    Points Possible,,,,,5.00"));
    let s1 = lines.find(|l| l.contains(",s1,")).expect("s1's row");
    assert_eq!(
        s1,
        format!(
            "\"Doe, Student 1\",,s1,s1@example.org,B,{}",
            after["s1"]["final_overall"]
        )
    );

    let file = tmp.path().join("moodle.csv");
    let (code, _, err) = auditor(&[
        "export",
        dir,
        "--format",
        "moodle",
        "--assignment",
        "Lab 3",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let moodle = std::fs::read_to_string(&file).unwrap();
    assert!(
        moodle.starts_with(
            "Email address,ID number,Full name,Section,Lab 3,Lab 3 (auditor),Feedback\n"
        ),
        "{moodle}"
    );
    assert!(
        moodle.contains(&format!(
            "s1@example.org,s1,\"Doe, Student 1\",B,{},{},Well argued.",
            after["s1"]["final_overall"], before["s1"]["final_overall"]
        )),
        "{moodle}"
    );

    let (code, said, err) = auditor(&["export", dir, "--format", "feedback"]);
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("2 submissions"), "{said}");
    let md = std::fs::read_to_string(out.join("s1/feedback.md")).unwrap();
    assert!(md.contains("Well argued."), "{md}");
    assert!(md.contains("the retry does re-invoke the model"), "{md}");
    let html = std::fs::read_to_string(out.join("s0/feedback.html")).unwrap();
    assert!(!html.contains(SCRIPT), "a commit message stays text");
}

/// `auditor review regrade` judges again from the stored evidence: under a new rubric (one
/// criterion renamed), with the repository gone (it is not read), the override kept; a new
/// rubric for one submission only is refused (it would split the cohort).
#[test]
fn a_regrade_judges_the_stored_evidence_under_a_new_rubric_and_keeps_the_override() {
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 1, None);
    let dir = out.to_str().unwrap();
    let (header, rows) = criteria_csv(&out);
    let crit = scored_below_five(&header, &rows["s0"]);
    let auto = rows["s0"][&format!("{crit}:auditor")].clone();
    let (code, _, err) = auditor(&[
        "review",
        "override",
        dir,
        "s0",
        &crit,
        "5",
        "--reason",
        "seen in class",
        "--by",
        "ta",
    ]);
    assert_eq!(code, 0, "{err}");

    let mut rubric: serde_json::Value =
        serde_json::from_str(auditor::rubric::EMBEDDED_RUBRIC).unwrap();
    rubric["rubric_metadata"]["version"] = "2.0-regrade".into();
    for d in rubric["dimensions"].as_array_mut().unwrap() {
        if d["id"] == crit.as_str() {
            d["name"] = "Renamed for the regrade".into();
        }
    }
    let new_rubric = tmp.path().join("rubric-v2.json");
    std::fs::write(&new_rubric, rubric.to_string()).unwrap();
    let sha_before = std::fs::read_to_string(out.join("batch.json")).unwrap();
    std::fs::remove_dir_all(tmp.path().join("repos/s0")).unwrap();

    let (code, _, err) = auditor(&[
        "review",
        "regrade",
        dir,
        "s0",
        "--rubric",
        new_rubric.to_str().unwrap(),
    ]);
    assert_eq!(
        code, 2,
        "one submission under a new rubric is refused: {err}"
    );
    assert!(err.contains("--all"), "{err}");

    let (code, said, err) = auditor(&[
        "review",
        "regrade",
        dir,
        "--all",
        "--rubric",
        new_rubric.to_str().unwrap(),
    ]);
    assert!(matches!(code, 0 | 3), "{code}: {err}");
    assert!(
        said.contains("judged again from the stored evidence): 1 overrides kept; 0 whose automatic score changed"),
        "{said}"
    );
    assert_ne!(
        std::fs::read_to_string(out.join("batch.json")).unwrap(),
        sha_before,
        "the batch is under the new rubric now"
    );
    let report = std::fs::read_to_string(out.join("s0/report.json")).unwrap();
    assert!(
        report.contains("Renamed for the regrade"),
        "judged under the new rubric"
    );
    let (_, rows) = criteria_csv(&out);
    assert_eq!(
        rows["s0"]["status"], "done",
        "graded without the repository"
    );
    assert_eq!(rows["s0"][&crit], "5", "the override stays");
    assert_eq!(
        rows["s0"][&format!("{crit}:auditor")],
        auto,
        "same evidence, same score"
    );
    let (_, history, _) = auditor(&["review", "history", dir, "s0"]);
    assert_eq!(history.lines().count(), 1, "{history}");

    // Auditing again needs the repository: now gone, the submission fails, the override stays.
    let (code, _, _) = auditor(&["review", "regrade", dir, "s0", "--reaudit"]);
    assert_eq!(code, 3);
    let (_, rows) = criteria_csv(&out);
    assert_eq!(rows["s0"]["status"], "failed");
}
