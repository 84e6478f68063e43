//! The real binary on fixture repositories and fixture PDFs built here: the three report
//! sections, every criterion with three opinions, the JSON sidecar, official rubrics accepted
//! unchanged, the report found inside the repository, degraded paths, and LLM judges against
//! a local OpenAI-compatible server.

use crate::llm_support;

use assert_cmd::Command;
use auditor::testkit::{git, pdf};
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The sample LangGraph project and its report, as a student would submit them.
    fn sample() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        git::build_repo(&dir.path().join("repo"), &git::sample_langgraph_project()).unwrap();
        let bytes = pdf::build_pdf(&pdf::sample_report()).unwrap();
        std::fs::write(dir.path().join("report.pdf"), bytes).unwrap();
        Fixture { dir }
    }
    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }
    fn pdf(&self) -> PathBuf {
        self.dir.path().join("report.pdf")
    }
    fn out(&self) -> PathBuf {
        self.dir.path().join("out/report.md")
    }
}

fn auditor() -> Command {
    let mut cmd = Command::cargo_bin("auditor").unwrap();
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AUDITOR_VISION_MODEL")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT");
    cmd
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sidecar(md: &Path) -> Value {
    let text = std::fs::read_to_string(md.with_extension("json")).expect("JSON sidecar written");
    serde_json::from_str(&text).expect("sidecar is JSON")
}

fn fixture_rubric(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rubrics")
        .join(name)
}

#[test]
fn offline_audit_writes_three_sections_ten_criteria_three_opinions_each() {
    let f = Fixture::sample();
    let (code, stdout, stderr) = run(auditor()
        .arg("--repo")
        .arg(f.repo())
        .arg("--pdf")
        .arg(f.pdf())
        .arg("--output")
        .arg(f.out()));
    // No vision model is configured, by choice (an offline run): the diagram criterion is not
    // assessed and said so on stdout, but a complete offline run is not a failure: exit 0.
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("offline"), "{stdout}");
    assert!(
        stdout.contains("Architectural Diagram Analysis: not assessed: no vision model configured"),
        "{stdout}"
    );
    assert!(!stdout.contains("Exit code 3"), "{stdout}");
    // a choice is not reported as a failure on stderr (a warning at the default level)
    assert!(
        !stderr.contains("grader-side failure") && !stderr.contains("WARN"),
        "{stderr}"
    );

    let md = std::fs::read_to_string(f.out()).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        for p in [f.out(), f.out().with_extension("json")] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "{} is readable like any document", p.display());
        }
    }
    let exec = md.find("## Executive Summary").expect("executive summary");
    let breakdown = md
        .find("## Criterion Breakdown")
        .expect("criterion breakdown");
    let plan = md.find("## Remediation Plan").expect("remediation plan");
    assert!(exec < breakdown && breakdown < plan, "sections in order");
    // the table of every criterion is within the report's first 40 lines
    let top: Vec<&str> = md.lines().take(40).collect();
    assert!(
        top.iter()
            .any(|l| l.starts_with("| # | Criterion | Final | Prosecutor | Defense | Tech Lead |")),
        "{md}"
    );
    assert!(
        md.contains("offline judges"),
        "the report says the judges were offline"
    );

    let json = sidecar(&f.out());
    let criteria = json["report"]["criteria"].as_array().unwrap();
    assert_eq!(criteria.len(), 10);
    for c in criteria {
        let opinions = c["judge_opinions"].as_array().unwrap();
        if c["dimension_id"] == "swarm_visual" {
            // No vision model (the default): the diagrams cannot be judged. Not assessed,
            // with the reason and the fix for the grader, out of the overall and the plan.
            assert_eq!(c["status"], "not_assessed", "{c}");
            assert!(c["final_score"].is_null());
            assert!(opinions.is_empty(), "no judge is asked about nothing");
            let fix = c["not_assessed"]["fix"].as_str().unwrap();
            assert!(fix.contains("AUDITOR_VISION_MODEL"), "{fix}");
            assert!(md.contains("NOT ASSESSED"));
            continue;
        }
        assert_eq!(c["status"], "assessed", "{c}");
        let name = c["dimension_name"].as_str().unwrap();
        assert!(
            top.iter()
                .any(|l| l.contains(&format!(" | {name} | **{}/5** |", c["final_score"]))),
            "{name} has its row with its score in the top table"
        );
        let judges: Vec<&str> = opinions
            .iter()
            .map(|o| o["judge"].as_str().unwrap())
            .collect();
        assert_eq!(judges.len(), 3, "{}", c["dimension_id"]);
        for j in ["Prosecutor", "Defense", "TechLead"] {
            assert!(judges.contains(&j), "{} lacks {j}", c["dimension_id"]);
        }
        assert!(md.contains(c["dimension_name"].as_str().unwrap()));
    }
    assert_eq!(json["report"]["metadata"]["judge_mode"], "offline");
    let verdict = json["report"]["verdict"].as_str().unwrap();
    assert!(verdict.contains("over 9 of 10"), "{verdict}");
    let scored: Vec<f64> = criteria
        .iter()
        .filter_map(|c| c["final_score"].as_f64())
        .collect();
    let mean = scored.iter().sum::<f64>() / scored.len() as f64;
    assert_eq!(
        json["report"]["overall_score"].as_f64(),
        Some((mean * 100.0).round() / 100.0),
        "the overall is the mean of the assessed criteria only"
    );
    assert!(
        json["report"]["remediation_plan"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["dimension_id"] != "swarm_visual"),
        "not in the student's remediation plan"
    );
    // no vision model by choice: said on stdout (above), not warned about as a failure
    assert!(!stderr.contains("grader-side failure"), "{stderr}");
    // facts come from the audited repository, at the audited commit
    let head = git2::Repository::open(f.repo())
        .unwrap()
        .head()
        .unwrap()
        .target()
        .unwrap();
    assert_eq!(json["report"]["commit"], head.to_string());
    assert!(json["repo"]["history"]["commit_count"].as_u64().unwrap() >= 5);
    // the report's hallucinated path is caught, the real ones verified
    let paths = json["pdf"]["claimed_paths"].as_array().unwrap();
    let status = |p: &str| {
        paths
            .iter()
            .find(|c| c["path"] == p)
            .map(|c| c["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status("src/graph.py").as_deref(), Some("verified"));
    assert_eq!(
        status("src/tools/vision_tools.py").as_deref(),
        Some("hallucinated")
    );
    // the diagram criterion is flagged, with the reason
    let swarm = criteria
        .iter()
        .find(|c| c["dimension_id"] == "swarm_visual")
        .unwrap();
    assert!(!swarm["flags"].as_array().unwrap().is_empty());
    assert!(
        md.contains("AUDITOR_VISION_MODEL"),
        "the report says how to enable diagrams"
    );
}

#[test]
fn official_rubrics_are_accepted_unchanged() {
    let f = Fixture::sample();
    for (name, dims) in [("official-v3.0.0.json", 10), ("official-v2.0.0.json", 4)] {
        let out = f.dir.path().join(format!("out-{name}.md"));
        let (code, stdout, stderr) = run(auditor()
            .arg("--repo")
            .arg(f.repo())
            .arg("--pdf")
            .arg(f.pdf())
            .arg("--rubric")
            .arg(fixture_rubric(name))
            .arg("--output")
            .arg(&out));
        assert!(code == 0 || code == 3, "{name}: {code}\n{stdout}\n{stderr}");
        let json = sidecar(&out);
        assert_eq!(
            json["report"]["criteria"].as_array().unwrap().len(),
            dims,
            "{name}"
        );
        for c in json["report"]["criteria"].as_array().unwrap() {
            let expected = if c["status"] == "not_assessed" { 0 } else { 3 };
            assert_eq!(c["judge_opinions"].as_array().unwrap().len(), expected);
        }
    }
}

#[test]
fn without_pdf_the_report_inside_the_repository_is_used_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let report = pdf::build_pdf(&pdf::sample_report()).unwrap();
    let mut commits = git::sample_langgraph_project();
    let last = commits.pop().unwrap();
    commits.push(last.file("reports/final_report.pdf", report));
    git::build_repo(&dir.path().join("repo"), &commits).unwrap();
    let out = dir.path().join("r.md");
    let (code, stdout, stderr) = run(auditor()
        .arg("--repo")
        .arg(dir.path().join("repo"))
        .arg("--output")
        .arg(&out));
    assert!(code == 0 || code == 3, "{stdout}\n{stderr}");
    let json = sidecar(&out);
    assert_eq!(
        json["report"]["metadata"]["pdf_path"],
        "repo:reports/final_report.pdf"
    );
    assert!(json["pdf"]["pages"].as_u64().unwrap() >= 1);
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.contains("reports/final_report.pdf"),
        "the report names the PDF used"
    );
}

#[test]
fn a_corrupt_submitted_pdf_is_the_students_and_is_judged_as_unreadable() {
    let f = Fixture::sample();
    let bytes = std::fs::read(f.pdf()).unwrap();
    let broken = f.dir.path().join("broken.pdf");
    std::fs::write(&broken, pdf::truncated(&bytes, bytes.len() / 3)).unwrap();
    let (code, stdout, stderr) = run(auditor()
        .arg("--repo")
        .arg(f.repo())
        .arg("--pdf")
        .arg(&broken)
        .arg("--output")
        .arg(f.out()));
    assert!(code == 0 || code == 3, "{stdout}\n{stderr}");
    let json = sidecar(&f.out());
    for c in json["report"]["criteria"].as_array().unwrap() {
        let id = c["dimension_id"].as_str().unwrap();
        if ["theoretical_depth", "report_accuracy", "swarm_visual"].contains(&id) {
            // what the student submitted cannot be read: a real low score with the reason,
            // not a grader failure
            assert_eq!(c["status"], "assessed", "{id}: {c}");
            assert_eq!(c["final_score"], 1, "{id}: {c}");
            assert!(
                c["remediation"]
                    .as_str()
                    .unwrap()
                    .contains("cannot be read"),
                "{id}: {c}"
            );
        }
    }
    // the code criteria were still judged on real facts
    let graph = json["report"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["dimension_id"] == "graph_orchestration")
        .unwrap();
    assert!(graph["final_score"].as_u64().is_some());
}

/// A repository that cannot be read (a path that is no Git repository, a URL where nothing
/// answers) is bad input: one message naming it, exit 2, no report, nothing paid for.
#[test]
fn a_repository_that_cannot_be_read_is_bad_input_with_one_message_and_no_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.py"), "print(1)\n").unwrap();
    // a port nothing listens on: bound, then released
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = format!("https://127.0.0.1:{port}/student/project.git");
    let f = Fixture::sample();
    for repo in [dir.path().display().to_string(), dead] {
        let (code, stdout, stderr) = run(auditor()
            .arg("--repo")
            .arg(&repo)
            .arg("--pdf")
            .arg(f.pdf())
            .arg("--output")
            .arg(f.out()));
        assert_eq!(code, 2, "{repo}: {code}\n{stdout}\n{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(
            stderr.lines().filter(|l| !l.trim().is_empty()).count(),
            1,
            "{repo}: one message: {stderr}"
        );
        assert!(stderr.contains("Nothing was audited"), "{stderr}");
        assert!(!f.out().exists(), "{repo}: no report");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_judges_answer_every_criterion_from_their_own_requests() {
    let server =
        llm_support::server(llm_support::Script::new(vec![llm_support::Step::Answer])).await;
    let f = Fixture::sample();
    let base = format!("{}/v1", server.uri());
    let (repo, pdf_path, out) = (f.repo(), f.pdf(), f.out());
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        run(auditor()
            .env("OPENAI_BASE_URL", base)
            .env("OPENAI_API_KEY", "sk-test")
            .env("AUDITOR_MODEL", llm_support::MODEL)
            .env("AUDITOR_PRICE_INPUT_PER_MTOK", "2.5")
            .env("AUDITOR_PRICE_OUTPUT_PER_MTOK", "10")
            .arg("--repo")
            .arg(repo)
            .arg("--pdf")
            .arg(pdf_path)
            .arg("--output")
            .arg(out))
    })
    .await
    .unwrap();
    assert!(code == 0 || code == 3, "{stdout}\n{stderr}");
    let bodies = llm_support::bodies(&server).await;
    let judge_bodies: Vec<&Value> = bodies
        .iter()
        .filter(|b| llm_support::persona_of(b).is_some())
        .collect();
    assert_eq!(
        judge_bodies.len(),
        27,
        "one request per criterion × persona, except the diagrams (no vision model: not assessed)"
    );
    let json = sidecar(&f.out());
    assert_eq!(json["report"]["metadata"]["judge_mode"], "llm");
    for c in json["report"]["criteria"].as_array().unwrap() {
        let id = c["dimension_id"].as_str().unwrap();
        for o in c["judge_opinions"].as_array().unwrap() {
            assert_eq!(o["source"]["type"], "llm");
            let persona = o["judge"].as_str().unwrap();
            // the server answers as the persona named in the request's own system message
            let expected = match persona {
                "Prosecutor" => 2,
                "Defense" => 4,
                _ => 3,
            };
            assert_eq!(o["score"], expected, "{id}/{persona}");
        }
    }
    assert!(
        json["report"]["metadata"]["tokens"]["input_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn a_closed_stdout_does_not_turn_a_finished_audit_into_a_panic() {
    // `auditor … | head -1`: the reader is gone before the summary is printed.
    let f = Fixture::sample();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_auditor"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AUDITOR_VISION_MODEL")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .arg("--repo")
        .arg(f.repo())
        .arg("--pdf")
        .arg(f.pdf())
        .arg("--output")
        .arg(f.out())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(f.out().exists(), "the report is written all the same");
}
