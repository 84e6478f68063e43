//! Run-time defects of a student's graph, through the binary: `auditor evidence --json` on a
//! fixture git repository lists them under `repo.graph.defects[]` and as evidence under the
//! dimension they harm; a correct graph lists none.

use assert_cmd::Command;
use auditor::testkit::git::{FixtureCommit, build_repo};
use serde_json::Value;

const STATE: &str = "import operator\nfrom typing import Annotated, TypedDict\n\nclass AgentState(TypedDict):\n    repo_url: str\n    report: str\n    opinions: Annotated[list, operator.add]\n";

fn evidence(graph: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    build_repo(
        dir.path(),
        &[FixtureCommit::new("graph", 1_700_000_000)
            .file("src/state.py", STATE)
            .file("src/graph.py", graph)],
    )
    .unwrap();
    let out = Command::cargo_bin("auditor")
        .unwrap()
        .current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .args(["evidence", "--repo", ".", "--json", "-q"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn fan_in_nodes(j: &Value) -> Vec<&str> {
    j["repo"]["graph"]["fan_in"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["to"].as_str().unwrap())
        .collect()
}

const HEADER: &str = "from langgraph.graph import StateGraph, START, END\nfrom src.state import AgentState\n\ndef work(state):\n    return {'opinions': ['x']}\n\ndef setup(state):\n    state['scratch'] = 1\n    return state\n\n";

#[test]
fn defects_are_listed_with_kind_nodes_location_and_detail_and_become_evidence() {
    let j = evidence(&format!(
        "{HEADER}g = StateGraph(AgentState)\ng.add_node('setup', setup)\nfor n in ['a', 'b', 'c', 'agg', 'orphan']:\n    g.add_node(n, work)\ng.add_edge(START, 'setup')\ng.add_edge('setup', 'a')\ng.add_edge('setup', 'b')\ng.add_edge('b', 'c')\ng.add_edge('a', 'agg')\ng.add_edge('c', 'agg')\ng.add_edge('agg', END)\n"
    ));
    let defects = j["repo"]["graph"]["defects"].as_array().expect("defects");
    let find = |kind: &str| {
        defects
            .iter()
            .find(|d| d["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {defects:?}"))
    };
    let dup = find("duplicate_execution");
    assert_eq!(dup["nodes"], serde_json::json!(["agg"]));
    assert!(
        dup["location"]
            .as_str()
            .unwrap()
            .starts_with("src/graph.py:")
    );
    assert!(
        dup["detail"]
            .as_str()
            .unwrap()
            .contains("runs more than once")
    );
    assert_eq!(
        find("unreachable_node")["nodes"],
        serde_json::json!(["orphan"])
    );
    let undeclared = find("undeclared_state_key");
    assert_eq!(undeclared["nodes"], serde_json::json!(["setup"]));
    assert!(undeclared["detail"].as_str().unwrap().contains("`scratch`"));
    assert_eq!(
        find("whole_state_return")["nodes"],
        serde_json::json!(["setup"])
    );
    // the same defects are evidence under the dimension they harm
    let ids = |dim: &str| -> Vec<String> {
        j["evidences"][dim]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    let graph = ids("graph_orchestration");
    assert!(graph.contains(&"repo.graph.defect.duplicate_execution.1".to_string()));
    assert!(graph.contains(&"repo.graph.defect.unreachable_node.1".to_string()));
    assert!(!graph.contains(&"repo.graph.runtime".to_string()));
    let state = ids("state_management_rigor");
    assert!(state.contains(&"repo.graph.defect.undeclared_state_key.1".to_string()));
    assert!(state.contains(&"repo.graph.defect.whole_state_return.1".to_string()));
}

#[test]
fn a_correct_graph_has_no_defect_and_a_clean_run_fact() {
    let j = evidence(&format!(
        "{HEADER}g = StateGraph(AgentState)\nfor n in ['a', 'b', 'c', 'agg']:\n    g.add_node(n, work)\ng.add_edge(START, 'a')\ng.add_edge(START, 'b')\ng.add_edge('b', 'c')\ng.add_edge(['a', 'c'], 'agg')\ng.add_edge('agg', END)\n"
    ));
    assert_eq!(j["repo"]["graph"]["defects"], serde_json::json!([]));
    let graph: Vec<&str> = j["evidences"]["graph_orchestration"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert!(graph.contains(&"repo.graph.runtime"), "{graph:?}");
}

#[test]
fn a_plain_edge_and_a_conditional_edge_from_start_are_a_fan_out() {
    let j = evidence(&format!(
        "{HEADER}def pick(state):\n    if state.get('report'):\n        return 'doc'\n    return 'vision'\ng = StateGraph(AgentState)\nfor n in ['repo', 'doc', 'vision', 'agg']:\n    g.add_node(n, work)\ng.add_edge(START, 'repo')\ng.add_conditional_edges(START, pick)\ng.add_edge('repo', 'agg')\ng.add_edge('doc', 'agg')\ng.add_edge('vision', 'agg')\ng.add_edge('agg', END)\n"
    ));
    let fan_out = j["repo"]["graph"]["fan_out"].as_array().unwrap();
    assert_eq!(fan_out.len(), 1, "{fan_out:?}");
    assert_eq!(fan_out[0]["from"], "START");
    assert_eq!(fan_out[0]["via"], "edges+router");
    // the plain target and one of the router's choices run in the same superstep
    let to = fan_out[0]["to"].as_array().unwrap();
    assert_eq!(to.len(), 2, "{to:?}");
    assert!(to.contains(&Value::from("repo")));
}

#[test]
fn nodes_added_in_a_loop_over_a_file_read_at_run_time_are_one_node_per_item() {
    let j = evidence(&format!(
        "{HEADER}import json\nrubric = json.load(open('rubric.json'))\ng = StateGraph(AgentState)\ng.add_node('entry', work)\ng.add_node('aggregate', work)\ng.add_edge(START, 'entry')\nfor dim in rubric['dimensions']:\n    g.add_node(dim['id'], work)\n    g.add_edge('entry', dim['id'])\n    g.add_edge(dim['id'], 'aggregate')\ng.add_edge('aggregate', END)\n"
    ));
    let graph = &j["repo"]["graph"];
    assert_eq!(graph["unresolved"], serde_json::json!([]));
    let fan_out = graph["fan_out"].as_array().unwrap();
    assert_eq!(fan_out.len(), 1, "{fan_out:?}");
    assert_eq!(fan_out[0]["from"], "entry");
    assert_eq!(
        fan_out[0]["to"],
        serde_json::json!([r#"dim["id"] (each of rubric["dimensions"])"#])
    );
    assert_eq!(graph["fan_in"][0]["to"], "aggregate");
    assert_eq!(graph["defects"], serde_json::json!([]));
}

#[test]
fn a_node_reached_by_exclusive_routes_is_not_a_fan_in() {
    // evidence -> (router) prosecutor | chief; prosecutor -> chief: chief has two
    // predecessors, but one run takes one route or the other, never both
    let j = evidence(&format!(
        "{HEADER}def ok(state):\n    return bool(state.get('report'))\ng = StateGraph(AgentState)\nfor n in ['a', 'b', 'evidence', 'prosecutor', 'chief']:\n    g.add_node(n, work)\ng.add_edge(START, 'a')\ng.add_edge(START, 'b')\ng.add_edge(['a', 'b'], 'evidence')\ng.add_conditional_edges('evidence', ok, {{True: 'prosecutor', False: 'chief'}})\ng.add_edge('prosecutor', 'chief')\ng.add_edge('chief', END)\n"
    ));
    let fan_in = fan_in_nodes(&j);
    assert_eq!(fan_in, vec!["evidence"]);
}

#[test]
fn an_error_handler_the_branches_may_route_to_is_not_their_join() {
    // the handler ends the run; the join goes on to the judge: told by what runs after each,
    // whatever they are called (the same graph with the two names swapped)
    for (join, handler) in [("agg", "error_node"), ("error_node", "agg")] {
        let j = evidence(&format!(
            "{HEADER}def route(state):\n    if state.get('report'):\n        return '{handler}'\n    return '{join}'\ng = StateGraph(AgentState)\nfor n in ['repo', 'doc', 'agg', 'error_node', 'judge']:\n    g.add_node(n, work)\nfor n in ['repo', 'doc']:\n    g.add_edge(START, n)\n    g.add_conditional_edges(n, route)\ng.add_edge('{join}', 'judge')\ng.add_edge('judge', END)\ng.add_edge('{handler}', END)\n"
        ));
        let fan_in = fan_in_nodes(&j);
        assert_eq!(fan_in, vec![join], "join {join}, handler {handler}");
    }
}

/// `auditor evidence --json` on a repository holding `graph`, in a process whose address space
/// and CPU time are limited (`prlimit`): `None` when the process did not finish within them.
fn evidence_limited(graph: &str, address_space: u64, cpu_seconds: u64) -> Option<Value> {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    build_repo(
        dir.path(),
        &[FixtureCommit::new("graph", 1_700_000_000).file("src/graph.py", graph)],
    )
    .unwrap();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("auditor"));
    cmd.current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .args(["evidence", "--repo", ".", "--json", "-q"]);
    // SAFETY: only setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let set = |what, n: u64| {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                if libc::setrlimit(what, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            };
            set(libc::RLIMIT_AS, address_space)?;
            set(libc::RLIMIT_CPU, cpu_seconds)
        });
    }
    let out = cmd.output().unwrap();
    if !out.status.success() {
        eprintln!(
            "auditor ended with {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .rev()
                .take(400)
                .collect::<String>()
                .chars()
                .rev()
                .collect::<String>()
        );
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

#[test]
fn many_conditional_entries_stop_the_simulation_at_its_budget_within_a_memory_limit() {
    // issue 25 item 1: twelve routers on START with four outcomes each (4^12 combinations of
    // entry choices) were all built before any budget applied (15 GB)
    let mut src = String::from(
        "from typing import TypedDict\nfrom langgraph.graph import StateGraph, START, END\nclass S(TypedDict):\n    repo_url: str\n    choice: str\ndef work(state):\n    return {'repo_url': 'x'}\n",
    );
    for i in 0..12 {
        src.push_str(&format!("def r{i}(state):\n"));
        for j in 0..3 {
            src.push_str(&format!(
                "    if state.get('choice') == '{i}_{j}':\n        return 'a{j}'\n"
            ));
        }
        src.push_str("    return 'a3'\n");
    }
    src.push_str("g = StateGraph(S)\n");
    for j in 0..4 {
        src.push_str(&format!(
            "g.add_node('a{j}', work)\ng.add_edge('a{j}', END)\n"
        ));
    }
    for i in 0..12 {
        src.push_str(&format!("g.add_conditional_edges(START, r{i})\n"));
    }
    let j = evidence_limited(&src, 1_500_000_000, 60)
        .expect("the audit finishes within 1.5 GB of address space");
    let graph = &j["repo"]["graph"];
    assert_eq!(graph["nodes"].as_array().map(Vec::len), Some(4));
    let notes = graph["runtime_notes"].to_string();
    assert!(notes.contains("too many run paths"), "{notes}");
    // the budget means silence, never a guess
    assert_eq!(graph["defects"], serde_json::json!([]));
}

#[test]
fn a_node_with_hundreds_of_helper_returns_is_read_in_linear_time() {
    // issue 25 item 2: every `return helper(state)` re-read its helper (and the helper's
    // helpers) without a memo, at a cost of the cube of the lines
    let n = 600;
    let mut src = String::from(
        "from typing import TypedDict\nfrom langgraph.graph import StateGraph, START, END\nclass S(TypedDict):\n    repo_url: str\n    report: str\n",
    );
    for h in 0..5 {
        src.push_str(&format!("def helper_{h}(state):\n"));
        for i in 0..n / 5 {
            src.push_str(&format!(
                "    if state.get('flag_{h}_{i}'):\n        return helper_{}(state)\n",
                (h + 1) % 5
            ));
        }
        src.push_str("    return {'report': 'x'}\n");
    }
    src.push_str("def work(state):\n");
    for i in 0..n {
        src.push_str(&format!(
            "    if state.get('k{i}') == 'value number {i}':\n        return helper_{}(state)\n",
            i % 5
        ));
    }
    src.push_str("    return {'report': 'done'}\ng = StateGraph(S)\ng.add_node('work', work)\ng.add_edge(START, 'work')\ng.add_edge('work', END)\n");
    let j = evidence_limited(&src, 1_500_000_000, 15)
        .expect("the audit finishes within 15 s of CPU time");
    let graph = &j["repo"]["graph"];
    assert_eq!(graph["nodes"], serde_json::json!(["work"]));
    // the node's update was read through its helpers: it writes only `report`
    assert!(
        !graph["defects"]
            .to_string()
            .contains("undeclared_state_key"),
        "{}",
        graph["defects"]
    );
}
