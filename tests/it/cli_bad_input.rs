//! Bad input is caught before the graph starts: exit code 2 and a message that says what,
//! where and how to fix it. Runs the real binary.

use assert_cmd::Command;
use std::path::Path;

fn auditor(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("auditor").expect("binary built");
    cmd.current_dir(cwd)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    cmd
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A directory holding a minimal valid PDF header file and an initialised git repository.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path().join("repo")).unwrap();
    dir
}

#[test]
fn missing_repo_path_exits_2_and_names_the_path() {
    let ws = workspace();
    std::fs::write(ws.path().join("r.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    let out = auditor(ws.path())
        .args([
            "--repo",
            "does/not/exist",
            "--pdf",
            "r.pdf",
            "--judges",
            "offline",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("does/not/exist"),
        "{}",
        stderr_of(&out)
    );
    assert!(
        !ws.path().join("audit").exists(),
        "nothing may run on bad input"
    );
}

#[test]
fn malformed_url_exits_2() {
    let ws = workspace();
    for url in [
        "https://",
        "htp:/example.com/x",
        "ftp://example.com/repo.git",
    ] {
        let out = auditor(ws.path())
            .args(["--repo", url, "--judges", "offline"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{url}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains("--repo") || stderr_of(&out).contains(url),
            "{}",
            stderr_of(&out)
        );
    }
}

#[test]
fn missing_pdf_exits_2_and_names_the_flag() {
    let ws = workspace();
    let out = auditor(ws.path())
        .args([
            "--repo",
            "repo",
            "--pdf",
            "missing.pdf",
            "--judges",
            "offline",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("missing.pdf") && err.contains("--pdf"),
        "{err}"
    );
}

#[test]
fn empty_and_non_pdf_files_exit_2() {
    let ws = workspace();
    std::fs::write(ws.path().join("empty.pdf"), b"").unwrap();
    std::fs::write(ws.path().join("notes.pdf"), b"just some text, not a PDF").unwrap();
    for f in ["empty.pdf", "notes.pdf"] {
        let out = auditor(ws.path())
            .args(["--repo", "repo", "--pdf", f, "--judges", "offline"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{f}: {}", stderr_of(&out));
        assert!(stderr_of(&out).contains(f), "{}", stderr_of(&out));
    }
}

#[test]
fn invalid_rubric_exits_2_naming_file_dimension_and_field() {
    let ws = workspace();
    std::fs::write(ws.path().join("r.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    std::fs::write(
        ws.path().join("bad.json"),
        r#"{"rubric_metadata":{"rubric_name":"x","version":"1"},
            "dimensions":[{"id":"a","name":"A","target_artifact":"github_repo"}],
            "synthesis_rules":{"security_override":"cap"}}"#,
    )
    .unwrap();
    let out = auditor(ws.path())
        .args([
            "--repo", "repo", "--pdf", "r.pdf", "--rubric", "bad.json", "--judges", "offline",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("bad.json") && err.contains("\"a\"") && err.contains("forensic_instruction"),
        "{err}"
    );

    std::fs::write(ws.path().join("broken.json"), "{ not json").unwrap();
    let out = auditor(ws.path())
        .args([
            "--repo",
            "repo",
            "--pdf",
            "r.pdf",
            "--rubric",
            "broken.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("line 1"), "{}", stderr_of(&out));

    let out = auditor(ws.path())
        .args(["--repo", "repo", "--pdf", "r.pdf", "--rubric", "nope.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("nope.json"), "{}", stderr_of(&out));
}

#[test]
fn llm_judges_without_endpoint_exit_2() {
    let ws = workspace();
    std::fs::write(ws.path().join("r.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    let out = auditor(ws.path())
        .args(["--repo", "repo", "--pdf", "r.pdf", "--judges", "llm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("OPENAI_API_KEY"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn output_with_wrong_extension_exits_2() {
    let ws = workspace();
    std::fs::write(ws.path().join("r.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    let out = auditor(ws.path())
        .args([
            "--repo",
            "repo",
            "--pdf",
            "r.pdf",
            "--judges",
            "offline",
            "--output",
            "report.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("report.txt"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn unknown_flag_exits_2() {
    let ws = workspace();
    let out = auditor(ws.path())
        .args(["--repo", "repo", "--frobnicate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unknown_ref_exits_2_naming_the_refs_that_exist() {
    let ws = tempfile::tempdir().unwrap();
    let repo = ws.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    auditor::testkit::git::build_repo(&repo, &auditor::testkit::git::sample_langgraph_project())
        .unwrap();
    let head = git2::Repository::open(&repo).unwrap();
    let branch = head.head().unwrap().shorthand().unwrap().to_string();
    let url = format!("file://{}", repo.display());
    for source in ["repo", url.as_str()] {
        let out = auditor(ws.path())
            .args([
                "--repo",
                source,
                "--ref",
                "no-such-tag",
                "--judges",
                "offline",
            ])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{source}: {err}");
        assert!(
            err.contains("no-such-tag") && err.contains("refs that exist"),
            "{source}: {err}"
        );
        assert!(
            err.contains(&branch),
            "{source}: names the existing branch {branch}: {err}"
        );
        assert!(
            !ws.path().join("audit").exists(),
            "{source}: nothing may run on bad input"
        );
    }
}

#[test]
fn a_known_ref_is_audited_at_the_commit_it_names() {
    let ws = tempfile::tempdir().unwrap();
    let repo = ws.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    auditor::testkit::git::build_repo(&repo, &auditor::testkit::git::sample_langgraph_project())
        .unwrap();
    // a tag on an older commit: the audit must land there, not on HEAD
    let git = git2::Repository::open(&repo).unwrap();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    let older = head.parent(0).unwrap().parent(0).unwrap();
    git.tag_lightweight("v1", older.as_object(), false).unwrap();
    let url = format!("file://{}", repo.display());
    for source in ["repo", url.as_str()] {
        let out = auditor(ws.path())
            .args(["evidence", "--repo", source, "--ref", "v1", "--json", "-q"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{source}: {err}");
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{source}: {e}: {err}"));
        assert_eq!(json["repo"]["commit"], older.id().to_string(), "{source}");
        assert_eq!(json["repo"]["ref"], "v1", "{source}");
        assert_eq!(
            json["repo"]["history"]["commit_count"], 6,
            "{source}: the history of the tagged commit"
        );
    }
}

#[test]
fn the_top_level_help_shows_the_main_jobs_options() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--help", "-h"] {
        let out = auditor(dir.path()).arg(flag).output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        for option in ["--repo", "--pdf", "--output"] {
            assert!(help.contains(option), "{flag}: no {option} in\n{help}");
        }
    }
}

#[test]
fn an_unknown_ref_names_the_remote_tracking_branch_it_may_mean() {
    let ws = tempfile::tempdir().unwrap();
    let repo = ws.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    auditor::testkit::git::build_repo(&repo, &auditor::testkit::git::sample_langgraph_project())
        .unwrap();
    // a clone whose `dev` exists only as the remote-tracking branch origin/dev
    let git = git2::Repository::open(&repo).unwrap();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    git.reference("refs/remotes/origin/dev", head.id(), false, "test")
        .unwrap();
    let out = auditor(ws.path())
        .args(["--repo", "repo", "--ref", "dev", "--judges", "offline"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("origin/dev"), "lists the remote branch: {err}");
    assert!(err.contains("branch dev origin/dev"), "says how: {err}");
}

/// OPENAI_BASE_URL left pointing where nothing listens: checked once before the audit, one
/// message with the way out (`--judges offline`), exit 2, no report; a batch likewise.
#[test]
fn an_llm_endpoint_where_nothing_answers_stops_before_the_audit() {
    let ws = workspace();
    std::fs::write(ws.path().join("r.pdf"), b"%PDF-1.4\n%%EOF\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    for judges in ["llm", "auto"] {
        let out = auditor(ws.path())
            .args(["--repo", "repo", "--pdf", "r.pdf", "--judges", judges])
            .args(["--output", "out/report.md"])
            .env("OPENAI_BASE_URL", &base)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{judges}: {err}");
        assert_eq!(
            err.lines().filter(|l| !l.trim().is_empty()).count(),
            1,
            "{judges}: one message: {err}"
        );
        assert!(err.contains(&base), "{judges}: names the endpoint: {err}");
        assert!(err.contains("--judges offline"), "{judges}: {err}");
        assert!(!ws.path().join("out").exists(), "{judges}: no report");
    }
    std::fs::write(ws.path().join("cohort.csv"), "id,repo\ns,repo\n").unwrap();
    let out = auditor(ws.path())
        .args(["batch", "cohort.csv", "--out", "grades", "--judges", "llm"])
        .env("OPENAI_BASE_URL", &base)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--judges offline"), "{err}");
    assert!(!ws.path().join("grades/grades.csv").exists(), "{err}");
}

/// `auditor sample` says how to run this very binary (a build under target/ is not on the
/// PATH), and the sample repository's files are there to open at the lines a report cites.
#[test]
fn the_sample_names_a_runnable_program_and_its_files_can_be_opened() {
    let ws = tempfile::tempdir().unwrap();
    let out = auditor(ws.path())
        .args(["sample", "--out", "s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Audit it with: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let program = line.split(" --repo ").next().unwrap();
    assert!(
        Path::new(program).is_file(),
        "{program:?} is not a program that exists: {stdout}"
    );
    let tools = ws.path().join("s/repo/src/tools/repo_tools.py");
    let text =
        std::fs::read_to_string(&tools).unwrap_or_else(|e| panic!("{}: {e}", tools.display()));
    assert!(text.lines().count() >= 18, "{text}");
}

#[test]
fn a_flag_with_two_letters_swapped_gets_a_did_you_mean() {
    let ws = workspace();
    let out = auditor(ws.path())
        .args(["--repo", "repo", "--pfd", "r.pdf"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("'--pdf'"), "{err}");
    let out = auditor(ws.path())
        .args(["batch", "m.csv", "--out", "o", "--regarde-all"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(err.contains("'--regrade-all'"), "{err}");
}
