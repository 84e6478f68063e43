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
    // a confirmed contradiction: the tally counts it against the report, not as a clean check
    assert_eq!(p["found"], true);
    assert_eq!(
        p["goal"],
        "The report's claim of parallel execution (fan-out)"
    );
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

const STATE: &str = r#"import operator
from typing import Annotated, Dict, List
from typing_extensions import TypedDict


class AgentState(TypedDict):
    evidences: Annotated[Dict[str, list], operator.ior]
    opinions: Annotated[List[str], operator.add]
"#;

/// Three persona prompts that share most of their text (one sentence each differs).
fn judges_py() -> String {
    let common = "Read the evidence for the criterion below, cite the evidence ids you rely on, \
                  give a score from one to five and a short argument grounded in the code, \
                  and answer with the JSON schema of a judicial opinion only.";
    format!(
        "PROSECUTOR_PROMPT = \"You are the Prosecutor: look for gaps and security flaws. {common}\"\n\
         DEFENSE_PROMPT = \"You are the Defense: reward effort and intent. {common}\"\n\
         TECH_LEAD_PROMPT = \"You are the Tech Lead: judge maintainability. {common}\"\n"
    )
}

fn evidence_json_for(files: &[(&str, String)], report_lines: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let mut commit = FixtureCommit::new("State and judges", 1_770_000_000);
    for (path, text) in files {
        commit = commit.file(*path, text.as_str());
    }
    build_repo(&repo, &[commit]).unwrap();
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
    serde_json::from_slice(&out.stdout).expect("evidence --json is JSON")
}

fn evidence<'a>(json: &'a Value, id: &str) -> &'a Value {
    json["evidences"]["report_accuracy"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no evidence {id}"))
}

#[test]
fn claims_the_detectives_measurements_contradict_are_contradictions() {
    let files = [
        ("src/state.py", STATE.to_string()),
        ("src/nodes/judges.py", judges_py()),
    ];
    let json = evidence_json_for(
        &files,
        &[
            "State",
            "The evidences field uses operator.add and the opinions field uses operator.ior.",
            "Our three persona prompts share only 10% of their text.",
        ],
    );
    let reducers = claim(&json, "state_reducers");
    assert_eq!(reducers["status"], "contradicted", "{reducers}");
    assert!(
        reducers["code"]
            .as_str()
            .unwrap()
            .contains("evidences the reducer operator.add, but AgentState.evidences is declared with operator.ior"),
        "{reducers}"
    );
    let overlap = claim(&json, "prompt_overlap");
    assert_eq!(overlap["status"], "contradicted", "{overlap}");
    assert_eq!(overlap["figure"], 10.0);
    let e = evidence(&json, "pdf.report_accuracy.claim.prompt_overlap");
    assert_eq!(
        (e["kind"].as_str(), e["found"].as_bool()),
        (Some("contradiction"), Some(true))
    );
    assert!(e["rationale"].as_str().unwrap().contains("measured"), "{e}");

    // The same report telling the truth.
    let json = evidence_json_for(
        &files,
        &[
            "State",
            "The evidences field uses operator.ior and the opinions field uses operator.add.",
            "Our three persona prompts share about 90% of their text.",
        ],
    );
    assert_eq!(claim(&json, "state_reducers")["status"], "supported");
    let overlap = claim(&json, "prompt_overlap");
    assert_eq!(overlap["status"], "supported", "{overlap}");
    let e = evidence(&json, "pdf.report_accuracy.claim.prompt_overlap");
    assert_eq!(
        (e["kind"].as_str(), e["found"].as_bool()),
        (Some("fact"), Some(true))
    );
}

const JUDGES_NO_RETRY: &str = r#"from langchain_openai import ChatOpenAI
from pydantic import BaseModel


class JudicialOpinion(BaseModel):
    score: int
    argument: str


llm = ChatOpenAI(model="gpt-4o", max_retries=3)


def prosecutor(state):
    try:
        opinion = llm.with_structured_output(JudicialOpinion).invoke(state["prompt"])
    except Exception:
        opinion = JudicialOpinion(score=1, argument="failed")
    return {"opinions": [opinion]}
"#;

const JUSTICE_AVERAGE: &str = r#"def chief_justice(state):
    scores = [o.score for o in state["opinions"]]
    if not scores:
        return {"final": 1}
    return {"final": round(sum(scores) / len(scores))}
"#;

#[test]
fn retries_fact_supremacy_and_routing_the_code_lacks_are_contradictions_and_plans_are_not_claims() {
    let files = [
        ("src/graph.py", LINEAR_GRAPH.to_string()),
        ("src/nodes/judges.py", JUDGES_NO_RETRY.to_string()),
        ("src/nodes/justice.py", JUSTICE_AVERAGE.to_string()),
    ];
    let json = evidence_json_for(
        &files,
        &[
            "Architecture",
            "A retry loop re-prompts each judge when its structured output is malformed.",
            "The Chief Justice applies fact supremacy: detective evidence overrules the Defense.",
            "High: Add conditional edges for node failure in src/graph.py.",
            "A conditional edge routes failed detectives to an error handler.",
        ],
    );
    let retry = claim(&json, "structured_retry");
    assert_eq!(retry["status"], "contradicted", "{retry}");
    let code = retry["code"].as_str().unwrap();
    assert!(
        code.contains("src/nodes/judges.py:15 is not made again when it fails")
            && code.contains("max_retries=3"),
        "{retry}"
    );
    let rule = claim(&json, "fact_supremacy");
    assert_eq!(rule["status"], "contradicted", "{rule}");
    let routing = claim(&json, "conditional_edges");
    assert_eq!(routing["status"], "contradicted", "{routing}");
    assert!(
        routing["quote"]
            .as_str()
            .unwrap()
            .starts_with("A conditional edge routes"),
        "the instruction on the last line is no claim: {routing}"
    );
    let e = evidence(&json, "pdf.report_accuracy.claim.conditional_edges");
    assert_eq!(
        (e["kind"].as_str(), e["found"].as_bool()),
        (Some("contradiction"), Some(true))
    );
}
