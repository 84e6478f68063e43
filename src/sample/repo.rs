//! The sample repository of `auditor sample`, built with git2 (no git CLI): dated commits with
//! files, deletions and symlinks ([`Commit`], [`build_repo`]), and a realistic LangGraph project
//! ([`sample_langgraph_project`]). The tests build their fixture repositories the same way
//! (`testkit::git`).

use git2::{Oid, Repository, RepositoryInitOptions, Signature, Time};
use std::collections::BTreeMap;
use std::path::Path;

/// One commit of a repository to build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commit {
    pub message: String,
    /// Author and committer time, unix seconds (UTC).
    pub author_time: i64,
    /// Files written by this commit: repo-relative path (`/`-separated) and content (may be
    /// empty or binary).
    pub files: Vec<(String, Vec<u8>)>,
    /// Paths removed by this commit.
    pub deletes: Vec<String>,
    /// Symlinks written by this commit: path and link target (never followed by the auditor).
    pub symlinks: Vec<(String, String)>,
}

impl Commit {
    pub fn new(message: impl Into<String>, author_time: i64) -> Self {
        Commit {
            message: message.into(),
            author_time,
            ..Commit::default()
        }
    }

    pub fn file(mut self, path: impl Into<String>, content: impl AsRef<[u8]>) -> Self {
        self.files.push((path.into(), content.as_ref().to_vec()));
        self
    }

    pub fn delete(mut self, path: impl Into<String>) -> Self {
        self.deletes.push(path.into());
        self
    }

    pub fn symlink(mut self, path: impl Into<String>, target: impl Into<String>) -> Self {
        self.symlinks.push((path.into(), target.into()));
        self
    }
}

const BLOB: i32 = 0o100644;
const LINK: i32 = 0o120000;
const TREE: i32 = 0o040000;

/// Creates a non-bare repository in `dir` (branch `main`) with the given commits, oldest
/// first, each containing every file written so far minus the deleted ones. Returns the last
/// commit's id (`Oid::ZERO_SHA1` when `commits` is empty: an empty repository).
pub fn build_repo(dir: &Path, commits: &[Commit]) -> Result<Oid, git2::Error> {
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = Repository::init_opts(dir, &opts)?;
    let mut state: BTreeMap<String, (Vec<u8>, i32)> = BTreeMap::new();
    let mut parent: Option<Oid> = None;
    for c in commits {
        for (p, content) in &c.files {
            state.insert(p.clone(), (content.clone(), BLOB));
        }
        for (p, target) in &c.symlinks {
            state.insert(p.clone(), (target.clone().into_bytes(), LINK));
        }
        for p in &c.deletes {
            state.remove(p);
        }
        let tree_id = write_tree(&repo, &state)?;
        let tree = repo.find_tree(tree_id)?;
        let sig = Signature::new(
            "Student Engineer",
            "student@example.com",
            &Time::new(c.author_time, 0),
        )?;
        let parents = match parent {
            Some(p) => vec![repo.find_commit(p)?],
            None => Vec::new(),
        };
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        let id = repo.commit(Some("HEAD"), &sig, &sig, &c.message, &tree, &refs)?;
        parent = Some(id);
    }
    Ok(parent.unwrap_or(Oid::ZERO_SHA1))
}

fn write_tree(
    repo: &Repository,
    entries: &BTreeMap<String, (Vec<u8>, i32)>,
) -> Result<Oid, git2::Error> {
    let mut tb = repo.treebuilder(None)?;
    let mut dirs: BTreeMap<&str, BTreeMap<String, (Vec<u8>, i32)>> = BTreeMap::new();
    for (path, (content, mode)) in entries {
        match path.split_once('/') {
            Some((dir, rest)) => {
                dirs.entry(dir)
                    .or_default()
                    .insert(rest.to_string(), (content.clone(), *mode));
            }
            None => {
                let blob = repo.blob(content)?;
                tb.insert(path, blob, *mode)?;
            }
        }
    }
    for (dir, sub) in dirs {
        let id = write_tree(repo, &sub)?;
        tb.insert(dir, id, TREE)?;
    }
    tb.write()
}

/// 2026-02-02 09:00 UTC.
pub const SAMPLE_START: i64 = 1_770_022_800;
const HOUR: i64 = 3600;

/// A small, realistic LangGraph "Automaton Auditor" project over eight dated commits
/// (setup → tools → graph → judges → justice): typed state with reducers, detectives fanning
/// out from `START` into an `evidence_aggregator`, judges fanning out and back into the
/// `chief_justice`, conditional error edges, a sandboxed clone with `subprocess.run`,
/// structured judge output with retry, distinct persona prompts and deterministic rules.
pub fn sample_langgraph_project() -> Vec<Commit> {
    vec![
        Commit::new(
            "Set up project: pyproject, env example, README",
            SAMPLE_START,
        )
        .file("pyproject.toml", SAMPLE_PYPROJECT)
        .file(
            ".env.example",
            "OPENAI_API_KEY=\nLANGCHAIN_API_KEY=\nLANGCHAIN_TRACING_V2=true\n",
        )
        .file(".gitignore", ".env\n__pycache__/\n.venv/\naudit/\n")
        .file("README.md", SAMPLE_README)
        .file("src/__init__.py", ""),
        Commit::new(
            "Add typed state: Evidence, JudicialOpinion and AgentState reducers",
            SAMPLE_START + 3 * HOUR,
        )
        .file("src/state.py", SAMPLE_STATE),
        Commit::new(
            "Add sandboxed repo tools: clone in a temp dir, git log extraction",
            SAMPLE_START + 26 * HOUR,
        )
        .file("src/tools/__init__.py", "")
        .file("src/tools/repo_tools.py", SAMPLE_REPO_TOOLS),
        Commit::new(
            "Add PDF doc tools with chunked querying",
            SAMPLE_START + 30 * HOUR,
        )
        .file("src/tools/doc_tools.py", SAMPLE_DOC_TOOLS),
        Commit::new(
            "Add detective nodes producing Evidence objects",
            SAMPLE_START + 50 * HOUR,
        )
        .file("src/nodes/__init__.py", "")
        .file("src/nodes/detectives.py", SAMPLE_DETECTIVES),
        Commit::new(
            "Wire the graph: detectives fan-out and evidence aggregator fan-in",
            SAMPLE_START + 54 * HOUR,
        )
        .file("src/graph.py", SAMPLE_GRAPH_V1),
        Commit::new(
            "Add judges with distinct personas and structured output",
            SAMPLE_START + 74 * HOUR,
        )
        .file("src/nodes/judges.py", SAMPLE_JUDGES),
        Commit::new(
            "Add Chief Justice rules, judge fan-out and error edges in the graph",
            SAMPLE_START + 78 * HOUR,
        )
        .file("src/nodes/justice.py", SAMPLE_JUSTICE)
        .file("src/graph.py", SAMPLE_GRAPH),
    ]
}

const SAMPLE_PYPROJECT: &str = r####"[project]
name = "automaton-auditor"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = [
    "langgraph>=0.2",
    "langchain-openai>=0.2",
    "pydantic>=2.7",
    "pypdf>=4.0",
]
"####;

const SAMPLE_README: &str = "# Automaton Auditor\n\nA LangGraph swarm of detectives and judges that audits a repository and its report.\n\n```\nuv sync\nuv run python -m src.graph https://github.com/owner/repo report.pdf\n```\n";

const SAMPLE_STATE: &str = r####""""Typed state shared by every node of the auditor graph."""
import operator
from typing import Annotated, Dict, List, Literal, Optional

from pydantic import BaseModel, Field
from typing_extensions import TypedDict


class Evidence(BaseModel):
    goal: str = Field(description="The forensic objective")
    found: bool = Field(description="Whether the artifact exists")
    content: Optional[str] = None
    location: str = Field(description="File path or commit hash")
    rationale: str
    confidence: float = Field(ge=0.0, le=1.0)


class JudicialOpinion(BaseModel):
    judge: Literal["Prosecutor", "Defense", "TechLead"]
    criterion_id: str
    score: int = Field(ge=1, le=5)
    argument: str
    cited_evidence: List[str]


class AgentState(TypedDict):
    repo_url: str
    pdf_path: str
    rubric_dimensions: List[Dict]
    evidences: Annotated[Dict[str, List[Evidence]], operator.ior]
    opinions: Annotated[List[JudicialOpinion], operator.add]
    errors: Annotated[List[str], operator.add]
    final_report: str
"####;

const SAMPLE_REPO_TOOLS: &str = r####""""Sandboxed git tools: nothing is ever cloned into the working directory."""
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List


class CloneError(RuntimeError):
    pass


def clone_repo(repo_url: str) -> tempfile.TemporaryDirectory:
    """Clone the full history into a fresh temporary directory."""
    if not repo_url.startswith("https://"):
        raise CloneError(f"refusing non-https URL: {repo_url}")
    tmp = tempfile.TemporaryDirectory(prefix="auditor-")
    try:
        subprocess.run(
            ["git", "clone", "--quiet", repo_url, tmp.name],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.CalledProcessError as exc:
        tmp.cleanup()
        if "Authentication failed" in exc.stderr:
            raise CloneError(f"authentication failed for {repo_url}") from exc
        if "not found" in exc.stderr:
            raise CloneError(f"repository not found: {repo_url}") from exc
        raise CloneError(f"git clone failed: {exc.stderr.strip()}") from exc
    return tmp


def extract_git_history(path: str) -> List[Dict[str, str]]:
    result = subprocess.run(
        ["git", "log", "--reverse", "--pretty=format:%H|%aI|%s"],
        cwd=path,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    commits = []
    for line in result.stdout.splitlines():
        sha, date, message = line.split("|", 2)
        commits.append({"hash": sha, "timestamp": date, "message": message})
    return commits


def list_python_files(path: str) -> List[Path]:
    return sorted(Path(path).rglob("*.py"))
"####;

const SAMPLE_DOC_TOOLS: &str = r####""""PDF ingestion with chunked querying (RAG-lite)."""
from typing import List

from pypdf import PdfReader


def load_chunks(pdf_path: str, size: int = 1200) -> List[str]:
    reader = PdfReader(pdf_path)
    text = "\n".join(page.extract_text() or "" for page in reader.pages)
    return [text[i : i + size] for i in range(0, len(text), size)]


def query(chunks: List[str], terms: List[str]) -> List[str]:
    lowered = [t.lower() for t in terms]
    return [c for c in chunks if any(t in c.lower() for t in lowered)]
"####;

const SAMPLE_DETECTIVES: &str = r####""""Detective nodes: they collect facts, never opinions."""
from src.state import AgentState, Evidence
from src.tools.doc_tools import load_chunks, query
from src.tools.repo_tools import clone_repo, extract_git_history


def repo_investigator(state: AgentState) -> dict:
    try:
        tmp = clone_repo(state["repo_url"])
    except Exception as exc:  # reported, never swallowed
        return {"errors": [f"repo_investigator: {exc}"]}
    with tmp:
        commits = extract_git_history(tmp.name)
    evidence = Evidence(
        goal="git history",
        found=len(commits) > 3,
        content="\n".join(c["message"] for c in commits),
        location=commits[-1]["hash"] if commits else state["repo_url"],
        rationale=f"{len(commits)} commits",
        confidence=1.0,
    )
    return {"evidences": {"git_forensic_analysis": [evidence]}}


def doc_analyst(state: AgentState) -> dict:
    chunks = load_chunks(state["pdf_path"])
    hits = query(chunks, ["Dialectical Synthesis", "Fan-In", "Metacognition"])
    evidence = Evidence(
        goal="theoretical depth",
        found=bool(hits),
        content=hits[0] if hits else None,
        location=state["pdf_path"],
        rationale=f"{len(hits)} chunks mention the key concepts",
        confidence=0.8,
    )
    return {"evidences": {"theoretical_depth": [evidence]}}


def vision_inspector(state: AgentState) -> dict:
    evidence = Evidence(
        goal="architecture diagram",
        found=False,
        location=state["pdf_path"],
        rationale="image analysis disabled in this run",
        confidence=0.5,
    )
    return {"evidences": {"swarm_visual": [evidence]}}


def evidence_aggregator(state: AgentState) -> dict:
    missing = [d["id"] for d in state["rubric_dimensions"] if d["id"] not in state["evidences"]]
    if missing:
        return {"errors": [f"evidence missing for {', '.join(missing)}"]}
    return {}
"####;

const SAMPLE_GRAPH_V1: &str = r####"from langgraph.graph import END, START, StateGraph

from src.nodes.detectives import doc_analyst, evidence_aggregator, repo_investigator, vision_inspector
from src.state import AgentState

builder = StateGraph(AgentState)
builder.add_node("repo_investigator", repo_investigator)
builder.add_node("doc_analyst", doc_analyst)
builder.add_node("vision_inspector", vision_inspector)
builder.add_node("evidence_aggregator", evidence_aggregator)
builder.add_edge(START, "repo_investigator")
builder.add_edge(START, "doc_analyst")
builder.add_edge(START, "vision_inspector")
builder.add_edge(["repo_investigator", "doc_analyst", "vision_inspector"], "evidence_aggregator")
builder.add_edge("evidence_aggregator", END)
graph = builder.compile()
"####;

const SAMPLE_GRAPH: &str = r####""""The auditor graph: detectives in parallel, an aggregation barrier, judges in parallel,
then the Chief Justice."""
from langgraph.graph import END, START, StateGraph

from src.nodes.detectives import doc_analyst, evidence_aggregator, repo_investigator, vision_inspector
from src.nodes.judges import defense, prosecutor, tech_lead
from src.nodes.justice import chief_justice
from src.state import AgentState

DETECTIVES = ["repo_investigator", "doc_analyst", "vision_inspector"]
JUDGES = ["prosecutor", "defense", "tech_lead"]


def route_after_aggregation(state: AgentState) -> list[str] | str:
    """Judges run in parallel on the same evidence; missing evidence stops the audit."""
    if state.get("errors"):
        return "handle_missing_evidence"
    return JUDGES


def handle_missing_evidence(state: AgentState) -> dict:
    return {"final_report": "Audit stopped: " + "; ".join(state["errors"])}


def route_after_judges(state: AgentState) -> str:
    """A judge that gave no valid opinion stops the audit before the verdict."""
    if state.get("errors"):
        return "handle_judge_failure"
    return "chief_justice"


def handle_judge_failure(state: AgentState) -> dict:
    return {"final_report": "Audit stopped before the verdict: " + "; ".join(state["errors"])}


def build_graph():
    builder = StateGraph(AgentState)
    builder.add_node("repo_investigator", repo_investigator)
    builder.add_node("doc_analyst", doc_analyst)
    builder.add_node("vision_inspector", vision_inspector)
    builder.add_node("evidence_aggregator", evidence_aggregator)
    builder.add_node("handle_missing_evidence", handle_missing_evidence)
    builder.add_node("prosecutor", prosecutor)
    builder.add_node("defense", defense)
    builder.add_node("tech_lead", tech_lead)
    builder.add_node("judges_done", lambda state: {})
    builder.add_node("handle_judge_failure", handle_judge_failure)
    builder.add_node("chief_justice", chief_justice)

    for name in DETECTIVES:
        builder.add_edge(START, name)
    builder.add_edge(DETECTIVES, "evidence_aggregator")
    builder.add_conditional_edges(
        "evidence_aggregator",
        route_after_aggregation,
        JUDGES + ["handle_missing_evidence"],
    )
    builder.add_edge(JUDGES, "judges_done")
    builder.add_conditional_edges(
        "judges_done",
        route_after_judges,
        ["chief_justice", "handle_judge_failure"],
    )
    builder.add_edge("handle_missing_evidence", END)
    builder.add_edge("handle_judge_failure", END)
    builder.add_edge("chief_justice", END)
    return builder.compile()


graph = build_graph()
"####;

const SAMPLE_JUDGES: &str = r####""""The dialectical bench: three personas judge the same evidence in parallel."""
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from pydantic import ValidationError

from src.state import AgentState, JudicialOpinion

PROSECUTOR_PROMPT = """You are the Prosecutor in a code audit. Trust no one and assume vibe coding.
Your job is to find gaps, security flaws and laziness. Look for missing error handling, raw shell
calls, linear graphs pretending to be parallel and reports that claim features the code lacks.
Be adversarial: cite the specific evidence that proves each charge and score harshly.
Charges you bring when the evidence shows them: Orchestration Fraud (a linear graph described as
parallel), Hallucination Liability (judges whose free text is never validated), Security
Negligence (a shell string built from user input), Persona Collusion (prompts that are copies).
Scoring guide: 1 when a charge is proven, 2 when the core requirement is missing, 3 when it
exists but is brittle or untested, 4 only when you looked hard and found a single minor gap,
and never 5: leave the praise to the Defense. Name every gap you charge with its evidence id.
When the evidence for a criterion is missing, say so and score it as unproven, not as met."""

DEFENSE_PROMPT = """You are the Defense attorney for the student. Reward effort and intent:
read the git history for signs of struggle and iteration, and value creative workarounds
even when the final code is imperfect. Highlight strengths the others overlook and argue for
the spirit of the work, citing the evidence that supports a generous score.
What you credit: an iterative history with descriptive messages, partial implementations that
show the engineer understood the goal, defensive code around fragile tools, honest reports
that name their own gaps. What you concede: a confirmed security finding caps your argument at
3, and missing evidence cannot be argued into existence.
Scoring guide: 5 when the intent is fully realised, 4 when a real attempt falls short in
details, 3 when the idea is visible but the execution is thin, 2 when only traces remain, and 1
only when nothing was attempted. Cite the evidence id of every strength you credit.
When the Prosecutor's charge rests on a misread fact, show the evidence that refutes it."""

TECH_LEAD_PROMPT = """You are the Tech Lead. Ignore the drama and ask whether it actually works.
Judge architectural soundness, maintainability and practical viability: are reducers used
correctly, is the state typed, are tools isolated and would you merge this code into a real
project? Give a realistic, pragmatic score and concrete technical remediation.
What you weigh: whether parallel branches really merge through reducers, whether errors have a
route, whether the tools run sandboxed with timeouts, whether the judges' output is validated
before it reaches the state, and how much technical debt a maintainer would inherit.
Scoring guide: 5 when you would merge it as is, 4 when it works with minor refactoring, 3 when
it works but is brittle, 2 when it barely runs, 1 when it does not work. You are the
tie-breaker between the Prosecutor and the Defense: end with the one change that matters most.
Prefer facts you can point to (a file and a line) over any impression of the code's style, its names or its comments."""

MAX_ATTEMPTS = 3
llm = ChatOpenAI(model="gpt-4o-mini", temperature=0.2)


def _judge(persona: str, system_prompt: str, state: AgentState) -> dict:
    structured = llm.with_structured_output(JudicialOpinion)
    opinions = []
    for dimension in state["rubric_dimensions"]:
        evidence = state["evidences"].get(dimension["id"], [])
        messages = [
            SystemMessage(content=system_prompt),
            HumanMessage(content=f"Criterion {dimension['id']}: {dimension['name']}\nEvidence: {evidence}"),
        ]
        for attempt in range(MAX_ATTEMPTS):
            try:
                opinion = structured.invoke(messages)
                opinions.append(opinion.model_copy(update={"judge": persona, "criterion_id": dimension["id"]}))
                break
            except ValidationError:
                if attempt == MAX_ATTEMPTS - 1:
                    return {"errors": [f"{persona} gave no valid opinion for {dimension['id']}"]}
    return {"opinions": opinions}


def prosecutor(state: AgentState) -> dict:
    return _judge("Prosecutor", PROSECUTOR_PROMPT, state)


def defense(state: AgentState) -> dict:
    return _judge("Defense", DEFENSE_PROMPT, state)


def tech_lead(state: AgentState) -> dict:
    return _judge("TechLead", TECH_LEAD_PROMPT, state)
"####;

const SAMPLE_JUSTICE: &str = r####""""Chief Justice: deterministic synthesis rules, no LLM."""
from pathlib import Path
from statistics import mean

from src.state import AgentState

REPORT_PATH = Path("audit/report.md")


def _re_evaluate(final: int, scores: dict, evidences: list) -> int:
    """Judges more than 2 apart: re-read the evidence and let the facts decide between them."""
    found = sum(1 for e in evidences if e.found)
    if not evidences or 2 * found < len(evidences):
        return min(final, scores.get("Prosecutor", final))
    return max(final, scores.get("TechLead", final))


def _final_score(criterion_id: str, opinions: list, evidences: list) -> tuple:
    scores = {o.judge: o.score for o in opinions}
    final = round(mean(scores.values()))
    notes = []
    if any("security" in e.goal.lower() and e.found for e in evidences):
        final = min(final, 3)
        notes.append("security_override: confirmed security flaw caps the score at 3")
    if not any(e.found for e in evidences) and scores.get("Defense", 0) > final:
        final = min(final, scores.get("Prosecutor", final))
        notes.append("fact_supremacy: the Defense is overruled, the evidence is missing")
    if criterion_id == "graph_orchestration" and scores.get("TechLead", 0) >= 4:
        final = scores["TechLead"]
        notes.append("functionality_weight: the Tech Lead's verdict carries the highest weight")
    if max(scores.values()) - min(scores.values()) > 2:
        final = _re_evaluate(final, scores, evidences)
        notes.append("variance_re_evaluation: judges disagree by more than 2, evidence re-read")
        notes.append("dissent: " + "; ".join(f"{j} gave {s}" for j, s in scores.items()))
    return final, notes


def chief_justice(state: AgentState) -> dict:
    lines = ["# Audit Report", "", "## Executive Summary", ""]
    breakdown = ["## Criterion Breakdown", ""]
    remediation = ["## Remediation Plan", ""]
    for dimension in state["rubric_dimensions"]:
        cid = dimension["id"]
        opinions = [o for o in state["opinions"] if o.criterion_id == cid]
        final, notes = _final_score(cid, opinions, state["evidences"].get(cid, []))
        breakdown.append(f"### {dimension['name']}: {final}/5")
        breakdown.extend(f"- {n}" for n in notes)
        if final < 4:
            remediation.append(f"- {dimension['name']}: see the Prosecutor's charges")
    report = "\n".join(lines + breakdown + [""] + remediation)
    REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
    REPORT_PATH.write_text(report, encoding="utf-8")
    return {"final_report": report}
"####;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_dated_history_with_deletes_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let head = build_repo(
            dir.path(),
            &[
                Commit::new("one", 1_000).file("a/b.txt", "x").file("c", ""),
                Commit::new("two", 2_000)
                    .delete("c")
                    .symlink("l", "../../etc"),
            ],
        )
        .unwrap();
        let repo = Repository::open(dir.path()).unwrap();
        let c = repo.find_commit(head).unwrap();
        assert_eq!(c.message(), Ok("two"));
        assert_eq!(c.author().when().seconds(), 2_000);
        let tree = c.tree().unwrap();
        assert!(tree.get_path(Path::new("a/b.txt")).is_ok());
        assert!(tree.get_path(Path::new("c")).is_err());
        assert_eq!(tree.get_path(Path::new("l")).unwrap().filemode(), LINK);
        assert_eq!(c.parent_count(), 1);
    }

    #[test]
    fn empty_fixture_is_an_empty_repository() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(build_repo(dir.path(), &[]).unwrap(), Oid::ZERO_SHA1);
        assert!(Repository::open(dir.path()).unwrap().head().is_err());
    }

    #[test]
    fn sample_project_has_eight_dated_commits() {
        let commits = sample_langgraph_project();
        assert_eq!(commits.len(), 8);
        assert!(
            commits
                .windows(2)
                .all(|w| w[0].author_time < w[1].author_time)
        );
    }
}
