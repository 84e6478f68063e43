//! RepoInvestigator speed (issue 3 targets, release build on the 2-core machine):
//! - `analyse_1000_python_files`: tree-sitter analysis of a generated 1,000-file repository
//!   (about 7 MB of Python), target ≤ 1 s;
//! - `investigate_50_files_50_commits`: clone + history + analysis of a typical local
//!   submission, target ≤ 150 ms;
//! - `parse_only_1000_python_files`: tree-sitter parsing alone of the same files (the floor);
//! - `investigate_1000_files`: the same end to end on the 1,000-file repository (for the record).
//!
//! Run: `cargo bench --bench repo_investigate`.

use auditor::repo::{self, RepoLimits, RepoRequest};
use auditor::testkit::git::{FixtureCommit, build_repo};
use criterion::{Criterion, criterion_group, criterion_main};
use std::cell::OnceCell;
use std::hint::black_box;
use std::time::Duration;

/// A realistic ~6.9 KB LangGraph-style module (nine node functions), varied by `i`. It had 18
/// functions (12.7 KB), twice the size of real submissions' modules (GUIDE: 6.7 MB per 1,000 files).
fn module(i: usize) -> String {
    let mut s = format!(
        "\"\"\"Generated module {i}.\"\"\"\nimport operator\nimport subprocess\nimport tempfile\nfrom typing import Annotated, Dict, List, Optional\n\nfrom langgraph.graph import END, START, StateGraph\nfrom pydantic import BaseModel, Field\nfrom typing_extensions import TypedDict\n\nNODES_{i} = [\"a_{i}\", \"b_{i}\", \"c_{i}\"]\n\n\nclass Evidence{i}(BaseModel):\n    goal: str\n    found: bool\n    location: str = Field(description=\"where\")\n    confidence: float = 1.0\n\n\nclass State{i}(TypedDict):\n    evidences: Annotated[Dict[str, List[Evidence{i}]], operator.ior]\n    opinions: Annotated[List[str], operator.add]\n    errors: List[str]\n\n\nPROMPT_{i} = \"\"\"You are a careful reviewer number {i}. Look at the evidence, cite ids, and\nexplain your reasoning step by step before giving a score between one and five.\"\"\"\n\n\n"
    );
    for f in 0..9 {
        s.push_str(&format!(
            "def node_{i}_{f}(state: State{i}) -> dict:\n    results = []\n    for item in state.get(\"errors\", []):\n        if item.startswith(\"fatal\"):\n            results.append({{\"kind\": \"fatal\", \"text\": item[6:]}})\n        elif \"warn\" in item:\n            results.append({{\"kind\": \"warning\", \"text\": item}})\n        else:\n            results.append({{\"kind\": \"info\", \"text\": item.strip()}})\n    with tempfile.TemporaryDirectory() as tmp:\n        out = subprocess.run([\"git\", \"log\", \"--oneline\"], cwd=tmp, capture_output=True, text=True)\n    total = sum(len(r[\"text\"]) for r in results) + len(out.stdout)\n    return {{\"opinions\": [f\"node {f} saw {{total}} characters\"]}}\n\n\n"
        ));
    }
    s.push_str(&format!(
        "def build_{i}():\n    b = StateGraph(State{i})\n    for n in NODES_{i}:\n        b.add_node(n, node_{i}_0)\n        b.add_edge(START, n)\n    b.add_node(\"join_{i}\", node_{i}_1)\n    b.add_edge(NODES_{i}, \"join_{i}\")\n    b.add_edge(\"join_{i}\", END)\n    return b.compile()\n"
    ));
    s
}

fn sources(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| (format!("src/pkg{}/mod_{i}.py", i % 20), module(i)))
        .collect()
}

fn request(dir: &std::path::Path) -> RepoRequest {
    RepoRequest {
        source: dir.to_str().unwrap_or_default().into(),
        git_ref: None,
        commit: None,
        limits: RepoLimits::default(),
        extract_pdf: None,
    }
}

fn benches(c: &mut Criterion) {
    // Each fixture is built inside its benchmark's closure, which criterion only runs when the
    // benchmark is selected: `perf stat`/callgrind of one benchmark measure only its own setup.
    let mut g = c.benchmark_group("repo");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    // criterion calls each closure once per sample: the fixtures are built on the first call.
    let big_cell = OnceCell::new();
    g.bench_function("analyse_1000_python_files", |b| {
        let big = big_cell.get_or_init(|| {
            let big = sources(1000);
            let bytes: usize = big.iter().map(|(_, s)| s.len()).sum();
            eprintln!("generated repository: 1000 files, {bytes} bytes of Python");
            big
        });
        b.iter(|| black_box(repo::python::analyse(big.clone(), &[])))
    });

    // The floor under `analyse_1000_python_files`: tree-sitter parsing alone, same threads.
    g.bench_function("parse_only_1000_python_files", |b| {
        let big = big_cell.get_or_init(|| sources(1000));
        b.iter(|| {
            use rayon::prelude::*;
            let nodes: u64 = big
                .par_iter()
                .map_init(
                    || auditor::repo::python::syntax::new_parser().expect("parser"),
                    |p, (_, src)| {
                        p.parse(src, None)
                            .map_or(0, |t| t.root_node().descendant_count() as u64)
                    },
                )
                .sum();
            black_box(nodes)
        })
    });

    // typical submission: 50 Python files over 50 commits
    let typical_cell = OnceCell::new();
    g.bench_function("investigate_50_files_50_commits", |b| {
        let (_typical, req) = typical_cell.get_or_init(|| {
            let typical = tempfile::tempdir().expect("temp dir");
            let files = sources(50);
            let commits: Vec<FixtureCommit> = files
                .iter()
                .enumerate()
                .map(|(i, (p, s))| {
                    FixtureCommit::new(format!("Add module {i}"), 1_770_000_000 + i as i64 * 3_600)
                        .file(p.clone(), s)
                })
                .collect();
            build_repo(typical.path(), &commits).expect("fixture repo");
            let req = request(typical.path());
            (typical, req)
        });
        b.iter(|| black_box(repo::investigate(req).expect("investigate")))
    });

    let large_cell = OnceCell::new();
    g.bench_function("investigate_1000_files", |b| {
        let (_large, req) = large_cell.get_or_init(|| {
            let big = sources(1000);
            let large = tempfile::tempdir().expect("temp dir");
            let mut one = FixtureCommit::new("everything", 1_770_000_000);
            for (p, s) in &big {
                one = one.file(p.clone(), s);
            }
            build_repo(large.path(), &[one]).expect("fixture repo");
            let req = request(large.path());
            (large, req)
        });
        b.iter(|| black_box(repo::investigate(req).expect("investigate")))
    });
    g.finish();
}

criterion_group!(repo_benches, benches);
criterion_main!(repo_benches);
