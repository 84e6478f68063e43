//! Theoretical depth through the real binary, on generated PDFs: a report explained only past
//! the pages the grader reads (issue 25, item 6) is no confident absence: the concept is
//! evidence missing, and the text says how many pages were read of how many.

use assert_cmd::Command;
use auditor::testkit::git::{FixtureCommit, build_repo};
use auditor::testkit::pdf::{PageSpec, build_pdf};
use serde_json::Value;

fn evidence(pages: &[PageSpec]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    build_repo(
        &repo,
        &[FixtureCommit::new("Graph", 1_770_000_000).file("src/graph.py", "x = 1\n")],
    )
    .unwrap();
    let pdf = dir.path().join("report.pdf");
    let bytes = build_pdf(pages).unwrap();
    assert!(
        bytes.len() < 400_000,
        "the fixture stays small: {} bytes",
        bytes.len()
    );
    std::fs::write(&pdf, bytes).unwrap();
    let out = Command::cargo_bin("auditor")
        .unwrap()
        .env_remove("OPENAI_API_KEY")
        .env_remove("AUDITOR_VISION_MODEL")
        .args(["evidence", "--json", "--repo"])
        .arg(&repo)
        .arg("--pdf")
        .arg(&pdf)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).expect("evidence --json is JSON")
}

fn concept<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["evidences"]["theoretical_depth"]
        .as_array()
        .expect("theoretical_depth evidence")
        .iter()
        .find(|e| {
            e["id"]
                .as_str()
                .is_some_and(|i| i.ends_with(&format!(".concept.{name}")))
        })
        .unwrap_or_else(|| panic!("no {name} in {}", json["evidences"]["theoretical_depth"]))
}

const EXPLAINED: &[&str] = &[
    "2.3 Metacognition",
    "The ChiefJustice node re-evaluates the judges' opinions: when their scores differ by more than two, it routes the criterion back to the judges and compares the evidence each one cited.",
    "The variance check in src/nodes/justice.py reads every JudicialOpinion and writes a dissent.",
];

#[test]
fn a_concept_explained_past_the_pages_read_is_no_confident_absence() {
    // pages 1-2 carry enough text to be a text report; the explanation sits on page 1001
    let filler: Vec<String> = (0..55)
        .map(|i| format!("Line {i} of the introduction describes the project and its goals in plain words for the reader."))
        .collect();
    let mut pages = vec![PageSpec::text(&filler), PageSpec::text(&filler)];
    pages.extend((0..998).map(|_| PageSpec::default()));
    pages.push(PageSpec::text(EXPLAINED));
    let json = evidence(&pages);
    let meta = concept(&json, "metacognition");
    assert_eq!(meta["kind"], "missing", "{meta}");
    let why = meta["rationale"].as_str().unwrap();
    assert!(why.contains("the first 1000 of its 1001 pages"), "{why}");
    assert!(!why.contains("does not appear anywhere"), "{why}");
    assert_eq!(json["pdf"]["total_pages"], 1001);

    // the same explanation within the pages read is explained, with its page
    let json = evidence(&[PageSpec::text(&filler), PageSpec::text(EXPLAINED)]);
    let meta = concept(&json, "metacognition");
    assert_eq!(
        (meta["kind"].as_str(), meta["found"].as_bool()),
        (Some("fact"), Some(true)),
        "{meta}"
    );
    assert!(
        meta["location"].as_str().unwrap().ends_with("p.2"),
        "{meta}"
    );
    // and a concept absent from a report read whole is a confident absence
    let dialectics = concept(&json, "dialectical_synthesis");
    assert_eq!(dialectics["kind"], "fact");
    assert!(
        dialectics["rationale"]
            .as_str()
            .unwrap()
            .contains("does not appear anywhere in the text of the 2 pages of the report"),
        "{dialectics}"
    );
}
