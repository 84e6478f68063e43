//! Differential test of the run-time defects against real LangGraph.
//!
//! `tests/differential/langgraph_oracle.py` generates programs from a seed (joins
//! `add_edge([a, b], c)`, a plain edge beside a join's leg, plain and conditional edges with
//! path maps and lists, `Send`, `set_entry_point` and a second entry, conditional entries,
//! counter loops whose counter is incremented, written as a constant, written outside the loop or
//! not at all, routers on input keys (two sources sharing one router: correlated runs), guards on
//! flags written before or after the router runs (or never, or under an undeclared key),
//! `operator.add` and custom reducers, a dict field under a merging reducer whose keys nodes and
//! routers read (`state.get("info", {}).get("k2", [])`, some keys never put into it, routes taken
//! only when one holds items), whole-state returns and `state["log"] + [x]` re-sent into
//! the reducer, reducer-less fields written by parallel nodes, reads of declared, undeclared and
//! unwritten keys) and runs each one under the real `langgraph` (pinned by `.ci/run`), every
//! combination of the routers' input values (a counter that no node writes is such an input: it
//! starts at 0 and at its router's threshold), with every node and router wrapped to record what it
//! read (and whether it was there), what it returned and in which superstep. The same program is
//! read by the auditor through the library (`repo::python::analyse`), and the two are compared
//! per defect kind.
//!
//! What each kind means on both sides (the report's definitions, decided by what LangGraph did):
//! - `duplicate_execution`: in some run a node runs in two different supersteps while it is on
//!   no cycle of the wiring (every plain edge, join leg and router outcome): re-running a node of
//!   a loop is iteration, not a defect. Scored per program: the auditor names the root causes
//!   (not what runs again after them), so its claim is right when every node it names did run
//!   twice.
//! - `unreachable_node`: a node that runs in no run (whatever stops it: no path from `START`, a
//!   guard that can never hold, a loop before it that never ends). Scored per node.
//! - `unbounded_loop`: some run ends with `GraphRecursionError` (or grows without bound); the
//!   nodes are those that kept running. Scored per program: right when a node it names kept
//!   running.
//! - `undeclared_state_key`: a node's update holds a key that is not a channel of the graph (LangGraph
//!   drops it). Scored per node.
//! - `unknown_state_key`: a node or router reads a key (or a key of the dict field, `info["k"]`)
//!   that is absent every time it runs; for a
//!   reader that never runs, a key that is in no state of any run. A reader that never runs whose
//!   key does appear somewhere is not scored; a node reading a key it writes itself (a
//!   read-modify-write with a default), or a router reading a key its own node writes (it sees
//!   that node's update), is not counted; a reader of a key whose writes the oracle dropped after
//!   an `InvalidUpdateError` (see `concurrent_write`) is not scored. Scored per reader (a router
//!   by its source node).
//! - `whole_state_return`: a node re-sends the current, non-empty value of an appending reducer's
//!   field (a whole-state return, `state["log"] + [x]`, `{"log": state["log"]}`), so the list
//!   doubles. Observed, not inferred from the values: the node is asked again with the list
//!   replaced by markers, and re-sends it when the markers come back at the head of its update.
//!   A node that never runs is not scored. Scored per node.
//! - `concurrent_write`: some run raises `InvalidUpdateError` (two writes to a field without a
//!   reducer in one superstep: two nodes, or one node run as two tasks by a `Send` beside an
//!   edge or another `Send` to it); the nodes are the writers of that step. Scored per program: right
//!   when a node it names is one of them. The run is then repeated with that key's writes dropped,
//!   so the other kinds are decided past the crash (programs where the key steers a router are
//!   left out of the run-count kinds).
//!
//! Precision = right claims / claims, recall = right claims / true defects. The target (issue 21)
//! is 0.98 / 0.95 for every kind: met on 500 programs of seeds 1, 2 and 3 (the floors hold on all three). The test
//! fails below the floors (a little under what the analysis reaches today, so a regression
//! fails) and prints any gap to the target. `AUDITOR_PYTHON` names the Python with `langgraph` (default
//! `python3`); without `langgraph` the test says so loudly and passes, unless
//! `AUDITOR_REQUIRE_LANGGRAPH=1` (set by `.ci/run`), which makes it fail.
//! `AUDITOR_DIFFERENTIAL_PROGRAMS` (default 500), `AUDITOR_DIFFERENTIAL_SEED` (default 1) and
//! `AUDITOR_DIFFERENTIAL_OUT` (keep the programs and truths there) help when a kind regresses.

use auditor::repo::python::analyse;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const KINDS: &[&str] = &[
    "duplicate_execution",
    "unreachable_node",
    "unbounded_loop",
    "undeclared_state_key",
    "unknown_state_key",
    "whole_state_return",
    "concurrent_write",
];

/// The target of issue 21: precision and recall for every kind.
const TARGET: (f64, f64) = (0.98, 0.95);

/// (kind, precision, recall) reached on 500 programs of seeds 1, 2 and 3, a little below the
/// lowest of the three measured figures; raise them as the analysis improves.
const FLOORS: &[(&str, f64, f64)] = &[
    ("concurrent_write", 0.98, 0.985),
    ("duplicate_execution", 0.98, 0.985),
    ("unbounded_loop", 0.98, 0.955),
    ("undeclared_state_key", 0.99, 0.955),
    ("unknown_state_key", 0.98, 0.955),
    ("unreachable_node", 0.99, 0.98),
    ("whole_state_return", 0.99, 0.99),
];

#[derive(Default, Clone)]
struct Score {
    tp: usize,
    fp: usize,
    fn_: usize,
    /// Programs that hold this kind (ground truth).
    programs: usize,
    misses: Vec<String>,
    false_alarms: Vec<String>,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

fn strings(v: &Value, key: &str) -> BTreeSet<String> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The node a reported name stands for (`n3 (router route_1)` is the router on `n3`).
fn node_of(name: &str) -> String {
    name.split(" (router ").next().unwrap_or(name).to_string()
}

fn oracle(out: &Path, count: usize, seed: u64) -> Option<Value> {
    // reuse the programs of an earlier run (AUDITOR_DIFFERENTIAL_OUT) while working on a kind
    if std::env::var("AUDITOR_DIFFERENTIAL_REUSE").is_ok_and(|v| v == "1")
        && let Ok(s) = std::fs::read_to_string(out.join("summary.json"))
    {
        return serde_json::from_str(&s).ok();
    }
    let python = std::env::var("AUDITOR_PYTHON").unwrap_or_else(|_| "python3".into());
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/differential/langgraph_oracle.py");
    let run = Command::new(&python)
        .arg(&script)
        .args(["--seed", &seed.to_string(), "--count", &count.to_string()])
        .arg("--out")
        .arg(out)
        .output();
    let required = std::env::var("AUDITOR_REQUIRE_LANGGRAPH").is_ok_and(|v| v == "1");
    let missing = |why: String| {
        let msg = format!(
            "\n!!!!!!!!\n!!! graph_differential: NOT RUN: {why}\n!!! install it (`pip install langgraph==1.2.24`) or set AUDITOR_PYTHON to a Python that has it\n!!!!!!!!\n"
        );
        assert!(
            !required,
            "{msg}(AUDITOR_REQUIRE_LANGGRAPH=1 makes this an error)"
        );
        eprintln!("{msg}");
    };
    match run {
        Err(e) => {
            missing(format!("cannot start `{python}`: {e}"));
            None
        }
        Ok(o) if o.status.code() == Some(3) => {
            missing(format!(
                "`{python}` has no langgraph ({})",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            None
        }
        Ok(o) => {
            assert!(
                o.status.success(),
                "the oracle failed: {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            eprintln!("{}", String::from_utf8_lossy(&o.stdout).trim());
            let summary = std::fs::read_to_string(out.join("summary.json")).expect("summary");
            Some(serde_json::from_str(&summary).expect("summary json"))
        }
    }
}

#[test]
fn run_time_defects_agree_with_real_langgraph() {
    let count: usize = std::env::var("AUDITOR_DIFFERENTIAL_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let seed: u64 = std::env::var("AUDITOR_DIFFERENTIAL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let tmp = tempfile::tempdir().unwrap();
    let out = std::env::var("AUDITOR_DIFFERENTIAL_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| tmp.path().to_path_buf());
    std::fs::create_dir_all(&out).unwrap();
    let Some(summary) = oracle(&out, count, seed) else {
        return;
    };
    let made = summary["programs"].as_u64().unwrap_or(0) as usize;
    let left_out = summary["left_out"].as_array().map_or(0, Vec::len);
    assert!(made >= count, "only {made} of {count} programs ran");
    // a generator that cannot run its own programs tests nothing
    assert!(
        left_out * 50 <= made,
        "{left_out} programs left out: {summary}"
    );
    let mut scores: BTreeMap<&str, Score> = KINDS.iter().map(|k| (*k, Score::default())).collect();
    let only = std::env::var("AUDITOR_DIFFERENTIAL_ONLY").ok();
    for i in 0..made {
        if only.as_ref().is_some_and(|o| *o != format!("p{i}")) {
            continue;
        }
        let dir = out.join(format!("p{i}"));
        let src = std::fs::read_to_string(dir.join("graph.py")).unwrap();
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap())
                .unwrap();
        let facts = analyse(vec![("graph.py".into(), src)], &[]);
        if only.is_some()
            && let Some(g) = facts.graphs.first()
        {
            eprintln!(
                "notes: {:#?}\ndefects: {:#?}\ntruth: {truth:#}",
                g.runtime_notes, g.defects
            );
        }
        let mut reported: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        if let Some(g) = facts.graphs.first() {
            for d in &g.defects {
                if let Some(k) = KINDS.iter().find(|k| **k == d.kind) {
                    reported
                        .entry(k)
                        .or_default()
                        .extend(d.nodes.iter().map(|n| node_of(n)));
                }
            }
        }
        let exact = truth["control_exact"].as_bool().unwrap_or(true);
        let label = format!("p{i} (seed {})", truth["seed"]);
        for kind in KINDS {
            if !exact
                && matches!(
                    *kind,
                    "duplicate_execution" | "unreachable_node" | "unbounded_loop"
                )
            {
                continue;
            }
            let t = strings(&truth, kind);
            let dont = strings(&truth, &format!("{kind}_dont_care"));
            let a = reported.get(kind).cloned().unwrap_or_default();
            let s = scores.get_mut(kind).unwrap();
            if !t.is_empty() {
                s.programs += 1;
            }
            match *kind {
                "duplicate_execution" | "unbounded_loop" | "concurrent_write" => {
                    let right = !a.is_empty()
                        && !t.is_empty()
                        && if *kind == "duplicate_execution" {
                            a.is_subset(&t)
                        } else {
                            !a.is_disjoint(&t)
                        };
                    if !a.is_empty() {
                        if right {
                            s.tp += 1;
                        } else {
                            s.fp += 1;
                            s.false_alarms
                                .push(format!("{label}: said {a:?}, truth {t:?}"));
                        }
                    }
                    if !t.is_empty() && !right {
                        s.fn_ += 1;
                        s.misses.push(format!("{label}: truth {t:?}, said {a:?}"));
                    }
                }
                _ => {
                    s.tp += a.intersection(&t).count();
                    let wrong: Vec<&String> = a
                        .iter()
                        .filter(|n| !t.contains(*n) && !dont.contains(*n))
                        .collect();
                    let missed: Vec<&String> = t.iter().filter(|n| !a.contains(*n)).collect();
                    s.fp += wrong.len();
                    s.fn_ += missed.len();
                    if !wrong.is_empty() {
                        s.false_alarms
                            .push(format!("{label}: said {wrong:?}, truth {t:?}"));
                    }
                    if !missed.is_empty() {
                        s.misses
                            .push(format!("{label}: missed {missed:?}, said {a:?}"));
                    }
                }
            }
        }
    }
    let mut table = format!(
        "\n{made} programs under langgraph {} (seed {seed}; {left_out} generated programs left out)\n{:<22} {:>9} {:>5} {:>5} {:>5} {:>9} {:>7}\n",
        summary["langgraph"].as_str().unwrap_or("?"),
        "kind",
        "programs",
        "tp",
        "fp",
        "fn",
        "precision",
        "recall"
    );
    for (k, s) in &scores {
        table.push_str(&format!(
            "{k:<22} {:>9} {:>5} {:>5} {:>5} {:>9.3} {:>7.3}\n",
            s.programs,
            s.tp,
            s.fp,
            s.fn_,
            s.precision(),
            s.recall()
        ));
    }
    // AUDITOR_DIFFERENTIAL_SHOW=n prints n disagreements of each sort (default 4)
    let show: usize = std::env::var("AUDITOR_DIFFERENTIAL_SHOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    for (k, s) in &scores {
        for m in s.false_alarms.iter().take(show) {
            table.push_str(&format!("  false alarm {k}: {m}\n"));
        }
        for m in s.misses.iter().take(show) {
            table.push_str(&format!("  miss {k}: {m}\n"));
        }
    }
    eprintln!("{table}");
    let short: Vec<&str> = scores
        .iter()
        .filter(|(_, s)| s.precision() < TARGET.0 || s.recall() < TARGET.1)
        .map(|(k, _)| *k)
        .collect();
    if !short.is_empty() {
        eprintln!(
            "NOT YET: below the target precision {} / recall {} for {short:?}",
            TARGET.0, TARGET.1
        );
    }
    if only.is_some() {
        return;
    }
    let failing: Vec<String> = FLOORS
        .iter()
        .filter(|(k, p, r)| {
            let s = &scores[k];
            s.precision() < *p || s.recall() < *r
        })
        .map(|(k, p, r)| format!("{k} (floor {p}/{r})"))
        .collect();
    assert!(failing.is_empty(), "below the floors: {failing:?}{table}");
}
