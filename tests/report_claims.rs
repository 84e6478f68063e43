//! The report's feature claims checked against the code, through the real binary: a report that
//! says the judges run in parallel, over a repository whose graph is a linear chain, gets a
//! contradiction under report accuracy; a claim the code bears out is supported.

use assert_cmd::Command;
use auditor::testkit::git::{FixtureCommit, build_repo};
use auditor::testkit::pdf::{PageSpec, build_pdf};
use serde_json::Value;

const LINEAR_GRAPH: &str = r#"import operator
from typing import Annotated, List
from typing_extensions import TypedDict
from langgraph.graph import StateGraph, START, END


class AgentState(TypedDict):
    opinions: Annotated[List[str], operator.add]


def prosecutor(state): return {"opinions": ["p"]}
def defense(state): return {"opinions": ["d"]}
def judge(state): return {"opinions": ["j"]}


builder = StateGraph(AgentState)
builder.add_node("prosecutor", prosecutor)
builder.add_node("defense", defense)
builder.add_node("judge", judge)
builder.add_edge(START, "prosecutor")
builder.add_edge("prosecutor", "defense")
builder.add_edge("defense", "judge")
builder.add_edge("judge", END)
graph = builder.compile()
"#;

fn evidence_json(report_lines: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    build_repo(
        &repo,
        &[FixtureCommit::new("Linear judges", 1_770_000_000).file("src/graph.py", LINEAR_GRAPH)],
    )
    .unwrap();
    let pdf = dir.path().join("report.pdf");
    std::fs::write(&pdf, build_pdf(&[PageSpec::text(report_lines)]).unwrap()).unwrap();
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
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "evidence --json is JSON ({e}); stdout: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn claim<'a>(json: &'a Value, feature: &str) -> &'a Value {
    json["pdf"]["feature_claims"]
        .as_array()
        .expect("pdf.feature_claims")
        .iter()
        .find(|c| c["feature"] == feature)
        .unwrap_or_else(|| panic!("no {feature} claim in {}", json["pdf"]["feature_claims"]))
}

#[test]
fn a_parallel_claim_over_a_linear_graph_is_a_contradiction() {
    let json = evidence_json(&[
        "Architecture",
        "The Prosecutor, Defense and Judge nodes run in parallel on the same evidence.",
        "Opinions are merged with an operator.add reducer on the state.",
    ]);
    let parallel = claim(&json, "parallel_execution");
    assert_eq!(parallel["status"], "contradicted", "{parallel}");
    assert_eq!(parallel["page"], 1);
    assert_eq!(parallel["code_location"], "src/graph.py:16");
    assert!(
        parallel["code"].as_str().unwrap().contains("linear"),
        "{parallel}"
    );
    let reducers = claim(&json, "state_reducers");
    assert_eq!(reducers["status"], "supported", "{reducers}");
    assert_eq!(reducers["code_location"], "src/graph.py:8");

    // the evidence the judges and the Chief Justice see
    let evs = json["evidences"]["report_accuracy"].as_array().unwrap();
    let by_id = |id: &str| {
        evs.iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("no evidence {id}"))
    };
    let p = by_id("pdf.report_accuracy.claim.parallel_execution");
    assert_eq!(p["kind"], "contradiction", "{p}");
    // a confirmed contradiction is `found` (with `found == false` the tally would count it as
    // a check that came back clean, i.e. a requirement met)
    assert_eq!(p["found"], true);
    assert!(p["location"].as_str().unwrap().ends_with("p.1"), "{p}");
    let r = by_id("pdf.report_accuracy.claim.state_reducers");
    assert_eq!(r["kind"], "fact", "{r}");
    assert_eq!(r["found"], true);
}

#[test]
fn denied_and_planned_features_are_not_claims() {
    let json = evidence_json(&[
        "Limitations",
        "The judges do not run in parallel yet.",
        "In future work we plan to add structured output to the judges.",
    ]);
    assert_eq!(json["pdf"]["feature_claims"], serde_json::json!([]));
    let evs = json["evidences"]["report_accuracy"].as_array().unwrap();
    assert!(
        !evs.iter()
            .any(|e| e["id"].as_str().unwrap().contains(".claim.")),
        "{evs:?}"
    );
}
