//! RepoInvestigator end to end on real git repositories built in temp dirs: the sample
//! LangGraph project, repository edge cases, limits, refs, and the evidence/JSON contract.

use auditor::repo::{self, RepoError, RepoFacts, RepoLimits, RepoRequest};
use auditor::rubric::Rubric;
use auditor::testkit::git::{FixtureCommit, SAMPLE_START, build_repo, sample_langgraph_project};
use std::path::Path;

fn request(source: &str) -> RepoRequest {
    RepoRequest {
        source: source.into(),
        git_ref: None,
        commit: None,
        limits: RepoLimits::default(),
        extract_pdf: None,
    }
}

fn run(dir: &Path) -> Result<RepoFacts, RepoError> {
    repo::investigate(&request(dir.to_str().unwrap()))
}

fn sample() -> (tempfile::TempDir, RepoFacts) {
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &sample_langgraph_project()).unwrap();
    let facts = run(dir.path()).unwrap();
    (dir, facts)
}

#[test]
fn sample_project_history() {
    let (_d, f) = sample();
    assert_eq!(f.history.commit_count, 8);
    assert_eq!(f.history.pattern, "iterative", "{:?}", f.history);
    assert!(f.history.progression);
    assert!(!f.history.clustered);
    assert_eq!(f.history.commits[0].timestamp, SAMPLE_START);
    assert_eq!(
        f.history.commits[0].message,
        "Set up project: pyproject, env example, README"
    );
    assert_eq!(f.commit.len(), 40);
    assert!(f.files.contains(&"src/nodes/judges.py".to_string()));
    assert!(f.files.windows(2).all(|w| w[0] < w[1]), "files sorted");
}

#[test]
fn sample_project_graph() {
    let (_d, f) = sample();
    let g = &f.python.graphs[0];
    assert_eq!(g.path, "src/graph.py");
    assert_eq!(g.state_type.as_deref(), Some("AgentState"));
    assert_eq!(g.nodes.len(), 11);
    let fo: Vec<(&str, Vec<&str>)> = g
        .fan_out
        .iter()
        .map(|x| (x.from.as_str(), x.to.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        fo,
        vec![
            (
                "START",
                vec!["repo_investigator", "doc_analyst", "vision_inspector"]
            ),
            (
                "evidence_aggregator",
                vec!["defense", "prosecutor", "tech_lead"]
            ),
        ]
    );
    let fi: Vec<&str> = g.fan_in.iter().map(|x| x.to.as_str()).collect();
    assert_eq!(fi, vec!["evidence_aggregator", "judges_done"]);
    assert!(g.undefined_nodes.is_empty(), "{:?}", g.undefined_nodes);
    assert!(g.unresolved.is_empty(), "{:?}", g.unresolved);
    assert!(!g.linear);
}

#[test]
fn sample_project_state_security_structured_personas_justice() {
    let (_d, f) = sample();
    let p = &f.python;
    let reducers: Vec<(&str, &str)> = p
        .state
        .reducers
        .iter()
        .map(|r| (r.field.as_str(), r.reducer.as_str()))
        .collect();
    assert_eq!(
        reducers,
        vec![
            ("evidences", "operator.ior"),
            ("opinions", "operator.add"),
            ("errors", "operator.add")
        ]
    );
    let models: Vec<&str> = p
        .state
        .pydantic_models
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(models, vec!["Evidence", "JudicialOpinion"]);
    assert!(p.security.findings.is_empty(), "{:?}", p.security.findings);
    assert!(p.security.sandboxed_clone);
    assert!(p.structured_output.used);
    assert_eq!(p.structured_output.calls[0].schema, "JudicialOpinion");
    assert!(p.structured_output.calls[0].retry);
    assert_eq!(p.personas.prompts.len(), 3);
    assert!(!p.personas.collusion, "{:?}", p.personas.similarity);
    assert!(
        p.justice.rules.iter().all(|r| r.found),
        "{:?}",
        p.justice.rules
    );
    assert!(!p.justice.calls_llm);
    assert!(p.justice.writes_markdown.is_some());
}

#[test]
fn every_official_dimension_gets_evidence_and_the_sample_meets_them() {
    let (_d, f) = sample();
    for file in ["official-v3.0.0.json", "official-v2.0.0.json"] {
        let text = std::fs::read_to_string(format!("tests/fixtures/rubrics/{file}")).unwrap();
        let r = Rubric::parse(&text, file).unwrap();
        let dims = r.dimensions_for(auditor::rubric::TargetArtifact::GithubRepo);
        let ev = repo::evidence(&f, &dims);
        for d in &dims {
            let list = &ev[&d.id];
            assert!(!list.is_empty(), "{file}: {} has no evidence", d.id);
            let missing: Vec<&str> = list
                .iter()
                .filter(|e| !e.found)
                .map(|e| e.id.as_str())
                .collect();
            assert!(missing.is_empty(), "{file}: {}: unmet {missing:?}", d.id);
            for e in list {
                assert!(!e.location.is_empty() && !e.rationale.is_empty(), "{e:?}");
            }
        }
    }
}

#[test]
fn unknown_dimensions_are_routed_by_words_or_get_an_explicit_fact() {
    let (_d, f) = sample();
    let text = r#"{"rubric_metadata":{"rubric_name":"r","version":"1"},
      "dimensions":[
        {"id":"x_hist","name":"Commit hygiene","target_artifact":"github_repo","forensic_instruction":"Read the git log."},
        {"id":"x_none","name":"Colour scheme","target_artifact":"github_repo","forensic_instruction":"Look at the logo."}],
      "synthesis_rules":{"security_override":"cap"}}"#;
    let r = Rubric::parse(text, "custom.json").unwrap();
    let ev = repo::evidence(&f, &r.dimensions);
    assert!(
        ev["x_hist"]
            .iter()
            .any(|e| e.id == "repo.history.commit_count")
    );
    assert_eq!(ev["x_none"].len(), 1);
    assert!(!ev["x_none"][0].found);
}

#[test]
fn facts_json_has_the_documented_layout() {
    let (_d, f) = sample();
    let j = repo::facts_json(&f);
    for ptr in [
        "/url",
        "/commit",
        "/history/commit_count",
        "/history/pattern",
        "/history/commits/0/hash",
        "/history/commits/0/timestamp",
        "/history/commits/0/message",
        "/graph/nodes/0",
        "/graph/edges/0/from",
        "/graph/edges/0/to",
        "/graph/edges/0/conditional",
        "/graph/fan_out/0/from",
        "/graph/fan_out/0/to/0",
        "/graph/fan_in/0/to",
        "/graph/fan_in/0/from/0",
        "/state/typed_dicts/0/name",
        "/state/pydantic_models/0/name",
        "/state/reducers/0/class",
        "/state/reducers/0/field",
        "/state/reducers/0/reducer",
        "/security/findings",
        "/security/sandboxed_clone",
        "/structured_output/calls/0/path",
        "/structured_output/calls/0/line",
        "/structured_output/calls/0/method",
        "/structured_output/calls/0/schema",
        "/structured_output/used",
    ] {
        assert!(j.pointer(ptr).is_some(), "missing {ptr} in {j:#}");
    }
    assert_eq!(
        j.pointer("/history/commit_count"),
        Some(&serde_json::json!(8))
    );
    let text = repo::summary_text(&f);
    assert!(
        text.contains("fan-out: START -> [repo_investigator, doc_analyst, vision_inspector]"),
        "{text}"
    );
}

#[test]
fn refs_branches_tags_and_commits_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let head = build_repo(dir.path(), &sample_langgraph_project()).unwrap();
    let r = git2::Repository::open(dir.path()).unwrap();
    let first = r
        .find_commit(head)
        .unwrap()
        .parent(0)
        .unwrap()
        .parent(0)
        .unwrap();
    r.branch("older", &first, false).unwrap();
    r.tag_lightweight("v0", first.as_object(), false).unwrap();
    for git_ref in ["older", "v0", &first.id().to_string()[..10]] {
        let mut req = request(dir.path().to_str().unwrap());
        req.git_ref = Some(git_ref.to_string());
        let f = repo::investigate(&req).unwrap();
        assert_eq!(f.commit, first.id().to_string(), "{git_ref}");
        assert_eq!(f.history.commit_count, 6, "{git_ref}");
    }
    let mut req = request(dir.path().to_str().unwrap());
    req.git_ref = Some("no-such-branch".into());
    let e = repo::investigate(&req).unwrap_err().to_string();
    assert!(e.contains("no-such-branch") && e.contains("older"), "{e}");
}

#[test]
fn bare_repositories_and_file_urls_are_sources() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &sample_langgraph_project()).unwrap();
    let bare = tempfile::tempdir().unwrap();
    git2::build::RepoBuilder::new()
        .bare(true)
        .clone(dir.path().to_str().unwrap(), &bare.path().join("b.git"))
        .unwrap();
    let f = run(&bare.path().join("b.git")).unwrap();
    assert_eq!(f.history.commit_count, 8);
    let url = url::Url::from_file_path(dir.path()).unwrap();
    let f = repo::investigate(&request(url.as_str())).unwrap();
    assert_eq!(f.history.commit_count, 8);
}

#[test]
fn empty_repository_gives_empty_facts_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &[]).unwrap();
    let f = run(dir.path()).unwrap();
    assert_eq!(f.history.commit_count, 0);
    assert_eq!(f.history.pattern, "empty");
    assert!(f.files.is_empty());
    assert!(
        f.notes.iter().any(|n| n.contains("no commits")),
        "{:?}",
        f.notes
    );
    let text = std::fs::read_to_string("tests/fixtures/rubrics/official-v3.0.0.json").unwrap();
    let r = Rubric::parse(&text, "v3").unwrap();
    let ev = repo::evidence(
        &f,
        &r.dimensions_for(auditor::rubric::TargetArtifact::GithubRepo),
    );
    for (d, l) in &ev {
        assert!(!l.is_empty(), "{d}");
        let met: Vec<&str> = l
            .iter()
            .filter(|e| e.found)
            .map(|e| e.id.as_str())
            .collect();
        assert!(met.is_empty(), "{d}: {met:?}");
    }
}

#[test]
fn a_commit_resolved_before_the_clone_is_the_one_audited() {
    // The ref was resolved during validation; the clone does not resolve it again.
    let dir = tempfile::tempdir().unwrap();
    let head = build_repo(
        dir.path(),
        &[
            FixtureCommit::new("init", 1_000).file("a.py", "x = 1\n"),
            FixtureCommit::new("more", 90_000).file("b.py", "y = 2\n"),
        ],
    )
    .unwrap();
    let git = git2::Repository::open(dir.path()).unwrap();
    let first = git.find_commit(head).unwrap().parent_id(0).unwrap();
    let mut req = request(dir.path().to_str().unwrap());
    req.git_ref = Some("main".into());
    req.commit = Some(first.to_string());
    let f = repo::investigate(&req).unwrap();
    assert_eq!(f.commit, first.to_string());
    assert_eq!(f.git_ref.as_deref(), Some("main"));
    assert_eq!(f.history.commit_count, 1);
    // without it, the ref is resolved in the clone
    req.commit = None;
    assert_eq!(repo::investigate(&req).unwrap().commit, head.to_string());
}

#[test]
fn missing_head_is_a_clear_error_naming_the_branches() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(
        dir.path(),
        &[FixtureCommit::new("init", 1_000).file("a.py", "x = 1\n")],
    )
    .unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/gone\n").unwrap();
    match run(dir.path()) {
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("--ref") && e.contains("main"), "{e}");
        }
        Ok(f) => panic!("HEAD is dangling, yet audited {}", f.commit),
    }
}

#[test]
fn odd_files_are_noted_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let mut huge = b"x = 1\n".repeat(2_000);
    huge.extend_from_slice(b"import os\nos.system('boom')\n");
    build_repo(
        dir.path(),
        &[FixtureCommit::new("add odd files", 1_000)
            .file("src/latin1.py", b"# caf\xe9\nimport os\nos.system('ls')\n")
            .file("src/blob.py", b"\x00\x01\x02binary")
            .file("src/huge.py", huge)
            .file("src/empty.py", b"")
            .file("img.png", b"\x89PNG\r\n\x1a\n\x00\x00")
            .symlink("escape", "../../../etc/passwd")
            .symlink("inside", "src/empty.py")],
    )
    .unwrap();
    let mut req = request(dir.path().to_str().unwrap());
    req.limits.max_file_bytes = 4_096;
    let f = repo::investigate(&req).unwrap();
    let notes = f.notes.join("\n");
    assert!(notes.contains("src/latin1.py: not valid UTF-8"), "{notes}");
    assert!(notes.contains("src/blob.py: binary"), "{notes}");
    assert!(
        notes.contains("src/huge.py") && notes.contains("single-file limit"),
        "{notes}"
    );
    assert!(
        notes.contains("escape: symlink pointing outside"),
        "{notes}"
    );
    assert!(!notes.contains("inside"), "{notes}");
    assert_eq!(f.files.len(), 7);
    // the non-UTF-8 file is still analysed; the huge one is not parsed but scanned textually
    let found: Vec<(&str, usize)> = f
        .python
        .security
        .findings
        .iter()
        .map(|x| (x.path.as_str(), x.line))
        .collect();
    assert_eq!(found, vec![("src/latin1.py", 3), ("src/huge.py", 2002)]);
    assert!(
        f.python.security.findings[1]
            .detail
            .contains("textual scan")
    );
}

#[test]
fn limits_are_clear_errors_and_the_temp_dir_is_always_removed() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &sample_langgraph_project()).unwrap();
    let parent = tempfile::tempdir().unwrap();
    let mut req = request(dir.path().to_str().unwrap());
    req.limits.max_files = 3;
    let e = repo::investigate_in(&req, Some(parent.path())).unwrap_err();
    assert!(
        matches!(e, RepoError::Limit(_)) && e.to_string().contains("more than 3 files"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    let mut req = request(dir.path().to_str().unwrap());
    req.limits.max_repo_bytes = 1_000;
    let e = repo::investigate_in(&req, Some(parent.path())).unwrap_err();
    assert!(matches!(e, RepoError::Limit(_)), "{e}");
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    repo::investigate_in(&request(dir.path().to_str().unwrap()), Some(parent.path())).unwrap();
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
}

#[test]
fn bad_sources_are_refused_before_anything_runs() {
    for bad in [
        "",
        "http://github.com/a/b",
        "git@github.com:a/b.git",
        "/no/such/dir/anywhere",
    ] {
        let e = repo::validate_source(&bad.into()).unwrap_err();
        assert!(matches!(e, RepoError::InvalidSource(_)), "{bad}: {e}");
    }
    let not_git = tempfile::tempdir().unwrap();
    let e = run(not_git.path()).unwrap_err().to_string();
    assert!(e.contains("cannot clone"), "{e}");
}

#[test]
fn report_pdf_is_extracted_by_path_or_found() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(
        dir.path(),
        &[FixtureCommit::new("docs", 1_000)
            .file("docs/interim.pdf", b"%PDF-1.4 interim")
            .file("reports/final_report.pdf", b"%PDF-1.4 final")
            .file("reports/notes.pdf", b"%PDF-1.4 notes")],
    )
    .unwrap();
    let mut req = request(dir.path().to_str().unwrap());
    req.extract_pdf = Some(String::new());
    let f = repo::investigate(&req).unwrap();
    let pdf = f.report_pdf.unwrap();
    assert_eq!(pdf.path, "reports/final_report.pdf");
    assert_eq!(pdf.bytes, b"%PDF-1.4 final");
    req.extract_pdf = Some("docs/interim.pdf".into());
    assert_eq!(
        repo::investigate(&req).unwrap().report_pdf.unwrap().bytes,
        b"%PDF-1.4 interim"
    );
    req.extract_pdf = Some("nope.pdf".into());
    let f = repo::investigate(&req).unwrap();
    assert!(f.report_pdf.is_none());
    assert!(f.notes.iter().any(|n| n.contains("nope.pdf")));
}

#[test]
fn bulk_upload_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (0..500).map(|i| format!("x{i} = {i}\n")).collect();
    build_repo(
        dir.path(),
        &[
            FixtureCommit::new("init", 1_000).file("src/all.py", &big),
            FixtureCommit::new("readme", 1_060).file("README.md", "hi"),
            FixtureCommit::new("fix", 1_120).file("src/b.py", "y = 1\n"),
        ],
    )
    .unwrap();
    let f = run(dir.path()).unwrap();
    assert_eq!(f.history.pattern, "single_init_dump");
    assert!(f.history.clustered);
}

fn py_lines(n: usize, tag: &str) -> String {
    (0..n).map(|i| format!("{tag}_{i} = {i}\n")).collect()
}

#[test]
fn placeholder_scaffold_does_not_break_the_progression() {
    // The first commit creates empty tools/ and graph files: a scaffold, not the tools or the
    // graph. The story setup → tools → graph is told by the commits that fill them.
    let scaffold = |ts: i64, with_placeholders: bool| {
        let c = FixtureCommit::new("chore: scaffold", ts)
            .file("pyproject.toml", "[project]\nname = \"x\"\n")
            .file("src/state.py", py_lines(20, "s"));
        if with_placeholders {
            c.file("src/tools/repo_tools.py", "")
                .file("src/graph.py", "")
                .file("src/nodes/__init__.py", "")
        } else {
            c
        }
    };
    // what a commit's lines do tells its phase (a clone through `subprocess`, a graph wired
    // with `StateGraph`), not what its files are called
    let tools = |n: usize| format!("import subprocess\n{}", py_lines(n, "t"));
    let graph = |n: usize| {
        format!(
            "from langgraph.graph import StateGraph\n{}g = StateGraph(dict)\ng.add_node('a', len)\n",
            py_lines(n, "g")
        )
    };
    let rest = |base: i64| {
        vec![
            FixtureCommit::new("feat: clone sandbox", base + 7_200)
                .file("src/tools/repo_tools.py", tools(60)),
            FixtureCommit::new("feat: detectives", base + 14_400)
                .file("src/nodes/detectives.py", py_lines(80, "d")),
            FixtureCommit::new("feat: wire it", base + 21_600).file("src/graph.py", graph(40)),
        ]
    };
    for placeholders in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut commits = vec![scaffold(10_000, placeholders)];
        commits.extend(rest(10_000));
        build_repo(dir.path(), &commits).unwrap();
        let h = run(dir.path()).unwrap().history;
        assert!(h.progression, "placeholders={placeholders}: {h:?}");
        assert_eq!(h.first_tools, Some(1));
        assert_eq!(h.first_graph, Some(3));
    }
    // A first commit that really holds tools and graph code is the whole story at once.
    let dir = tempfile::tempdir().unwrap();
    let mut commits = vec![
        scaffold(10_000, false)
            .file("src/tools/repo_tools.py", tools(10))
            .file("src/graph.py", graph(10)),
    ];
    commits.extend(rest(10_000));
    build_repo(dir.path(), &commits).unwrap();
    assert!(!run(dir.path()).unwrap().history.progression);
    // files named after the phases hold no phase: plain lines in `tools/` and `graph.py`
    let dir = tempfile::tempdir().unwrap();
    let commits = vec![
        scaffold(10_000, false),
        FixtureCommit::new("feat: part one", 17_200)
            .file("src/tools/repo_tools.py", py_lines(60, "t")),
        FixtureCommit::new("feat: part two", 24_400).file("src/graph.py", py_lines(40, "g")),
    ];
    build_repo(dir.path(), &commits).unwrap();
    let h = run(dir.path()).unwrap().history;
    assert_eq!((h.first_tools, h.first_graph), (None, None), "{h:?}");
}

#[test]
fn a_moved_file_counts_by_the_lines_it_changes() {
    let big = py_lines(300, "a");
    let small = py_lines(100, "b");
    let mut edited = small.clone();
    edited.push_str(&py_lines(5, "c"));
    let commits = vec![
        FixtureCommit::new("feat: a and b", 10_000)
            .file("src/a.py", &big)
            .file("src/b.py", &small),
        // moved unchanged: no line is new
        FixtureCommit::new("refactor: move a", 20_000)
            .delete("src/a.py")
            .file("src/pkg/a.py", &big),
        // moved with five lines added: five new lines
        FixtureCommit::new("refactor: move b", 30_000)
            .delete("src/b.py")
            .file("lib/b.py", &edited),
        FixtureCommit::new("feat: d", 40_000).file("src/d.py", py_lines(20, "d")),
    ];
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &commits).unwrap();
    let h = run(dir.path()).unwrap().history;
    let added: Vec<usize> = h.commits.iter().map(|c| c.python_lines_added).collect();
    assert_eq!(added, vec![400, 0, 5, 20], "{h:?}");
    assert_eq!(h.lines_added, 425);
    assert_eq!(h.commits[1].deletions, 0);
}

#[test]
fn a_commit_message_tags_no_phase() {
    // "add nodes, graph and tools" with six empty files builds nothing; "graph" in the message
    // of plain lines neither
    let commits = vec![
        FixtureCommit::new("init: project setup", 10_000)
            .file("pyproject.toml", "[project]\nname = \"x\"\n"),
        FixtureCommit::new("feat: add nodes, graph and tools", 20_000)
            .file("src/nodes/a.py", "")
            .file("src/nodes/b.py", "")
            .file("src/tools/t.py", ""),
        FixtureCommit::new("feat: graph orchestration node edges", 30_000)
            .file("src/util.py", py_lines(30, "u")),
        FixtureCommit::new("feat: clone", 40_000).file(
            "src/tools/t.py",
            format!("import subprocess\n{}", py_lines(30, "t")),
        ),
        FixtureCommit::new("wip", 50_000).file(
            "src/g.py",
            "from langgraph.graph import StateGraph\ng = StateGraph(dict)\n",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &commits).unwrap();
    let h = run(dir.path()).unwrap().history;
    let phases: Vec<Vec<String>> = h.commits.iter().map(|c| c.phases.clone()).collect();
    assert_eq!(
        phases,
        vec![
            vec!["setup".to_string()],
            vec![],
            vec![],
            vec!["tools".to_string()],
            vec!["graph".to_string()],
        ]
    );
    assert_eq!(
        (h.first_setup, h.first_tools, h.first_graph),
        (Some(0), Some(3), Some(4))
    );
    assert!(h.progression);
}

#[test]
fn bulk_commits_seconds_apart_read_as_few_large() {
    // One file per commit, but three of them are hundreds of lines committed 40 s apart.
    let mut commits = vec![FixtureCommit::new("init", 10_000).file("README.md", "x")];
    for (i, n) in [400, 500, 600].iter().enumerate() {
        commits.push(
            FixtureCommit::new(format!("feat: part {i}"), 20_000 + 40 * i as i64)
                .file(format!("src/part{i}.py"), py_lines(*n, "p")),
        );
    }
    for i in 0..8 {
        commits.push(
            FixtureCommit::new(format!("fix: step {i}"), 40_000 + 3_600 * i as i64)
                .file(format!("src/step{i}.py"), py_lines(150, "s")),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &commits).unwrap();
    let h = run(dir.path()).unwrap().history;
    assert_eq!(h.lines_counted, "python");
    assert_eq!(h.lines_added, 2_700);
    assert_eq!(h.bulk_deliveries.len(), 1, "{h:?}");
    assert_eq!(h.bulk_deliveries[0].lines, 1_500);
    assert_eq!(h.pattern, "few_large");

    // The same lines spread over hours are steps, whatever their size.
    let mut spread = vec![FixtureCommit::new("init", 10_000).file("README.md", "x")];
    for (i, n) in [400, 500, 600].iter().enumerate() {
        spread.push(
            FixtureCommit::new(format!("feat: part {i}"), 20_000 + 3_600 * i as i64)
                .file(format!("src/part{i}.py"), py_lines(*n, "p")),
        );
    }
    spread.extend(commits.into_iter().skip(4));
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path(), &spread).unwrap();
    let h = run(dir.path()).unwrap().history;
    assert!(h.bulk_deliveries.is_empty());
    assert_eq!(h.pattern, "iterative", "{}", h.top2_share);
}
