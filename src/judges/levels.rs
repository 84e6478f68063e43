//! Documented level tables (1–5) for the offline judges, one per family of detective facts.
//!
//! A criterion is routed to a table by the facts the detectives filed under it (their ids:
//! `repo.history.*`, `repo.graph.*`, `pdf.<criterion>.concept.*`, ...), which the detectives
//! themselves routed by the criterion's words and target artifact. No rubric id is named here:
//! a custom rubric's criterion gets the table of the facts it receives.
//!
//! Each table turns facts into a level, from the rubric's success and failure patterns and the
//! challenge's statutes (Protocol B), calibrated on hand-graded submissions:
//!
//! | family | 1 | 2 | 3 | 4 | 5 |
//! |---|---|---|---|---|---|
//! | git history | ≤ 1 commit, or one dump | bulk: the two largest deliveries ≥ 75% of the code, the largest commit ≥ 55%, a `few_large`/`single_init_dump` pattern, commits clustered in 30 minutes, or one staged session (commits each < 10 min apart) holding ≥ 50% of the code | few commits (≤ 10), the two largest deliveries ≥ 60%, staged sessions holding ≥ a third of the code, or ≥ 40% of the commits < 2 min after the previous | iterative, > 10 commits spread over time | and no commit above 15%, no staged session, bursts < 10%, ≥ 20 commits, progression and descriptive messages |
//! | graph orchestration | no graph, or no fan-out (linear) | an unbounded loop, an unreachable node or a graph module that cannot be imported (run-time defect), or one of the two fan-out/fan-in layers missing | both layers but no error route, or another run-time defect (e.g. a node run twice) | both layers and error routes | (the Defense's argument only: nothing more is seen statically) |
//! | state | no typed state | typed state without reducers or models | models and state, reducers missing, or ≥ 2 state defects (keys dropped, whole state returned) | TypedDict/BaseModel state, Evidence and JudicialOpinion models, `operator.add` and `operator.ior` reducers, ≤ 1 defect | (Defense only) |
//! | safe tools | a confirmed raw shell call | no clone code and no sandbox | sandboxed clone with error handling, no raw shell (timeouts and URL validation unconfirmed) | and a timeout | and URL validation |
//! | structured output | free text, no opinion model | free text parsed into an opinion model | bound to the opinion schema, no retry | bound, with retry | bound, retry and the full schema (score, argument, cited evidence) |
//! | judicial nuance | no persona prompts | — | prompts that share most text (Persona Collusion), judges not in parallel, or a persona mismatch | three distinct prompts with their own language, in parallel | (Defense only) |
//! | Chief Justice | no justice code | ≤ 1 named rule (a plain average) | 2 named rules, an LLM deciding, or no Markdown report with its sections | 3 named rules | all 4 rules, deterministic, Markdown report |
//! | theoretical depth | no concept explained | 1 explained | 2–3 explained | all explained | (Defense only) |
//! | report cross-reference | > 50% of cited paths hallucinated | > 20% hallucinated or ≥ 2 contradicted claims | some hallucinated, one contradicted claim, or < 3 paths cited | ≥ 3 paths, all real, no contradiction | and ≥ 8 real paths, ≥ 3 supported claims |
//! | architecture diagram | no image and no vector drawing in the report | only a diagram typed as text (ASCII/box art, Mermaid source) | (a picture: read by a vision model, never offline) | | |
//!
//! History, in words: a commit's size is the Python lines it adds; a *delivery* joins bulk
//! commits (≥ 200 lines) less than two minutes apart; a *staged session* is a run of commits each
//! less than ten minutes after the previous, three of them adding code (pre-written code
//! committed file by file, the rubric's "timestamps clustered within minutes"). One session with
//! most of the code is a bulk upload (2); sessions holding a third of it, or most commits seconds
//! apart, are staged work (3); a figure within five points of its threshold is borderline, and the
//! verdict says so (two careful graders can differ there).
//!
//! A concept of a report read only in part and not found explained there is no verdict: it is
//! left out of the count, and the row says how many were not decided. A report whose title (or,
//! failing that, its file name) says it is the interim report caps both report tables at 3.
//!
//! The tables read the facts' `found` flags and the figures the detectives measured
//! (`Evidence::measure`), never their prose. History facts stored by an earlier version carry
//! no figures: such a criterion is judged by the tally of its facts, as a family without a table.
//!
//! Across tables: a submission that does not provide the artifact (no PDF, an unreadable PDF)
//! is at level 1; an interim report (the typed `Measure::Report` of `pdf.*.report_kind`, from
//! the report's title or file name) caps the report tables at 3.
//!
//! The personas then differ by rules, not by wording (see `offline`): the Tech Lead rules the
//! table's level; the Prosecutor charges every gap the table lists (one point lower, from
//! level 3 up); the Defense credits every strength (one point higher, up to the cap a run-time
//! defect or a statute sets).

use crate::model::{Evidence, EvidenceKind, HistoryMeasure, Measure};

pub use crate::family::Family;

/// The family most of the criterion's facts belong to (run-time graph defects, filed under the
/// criterion they harm, do not vote).
pub fn family(evidence: &[Evidence]) -> Option<Family> {
    let mut votes: Vec<(Family, usize)> = Vec::new();
    for e in evidence.iter().filter(|e| !e.id.contains(".defect.")) {
        if let Some(f) = Family::of(&e.id) {
            match votes.iter_mut().find(|(g, _)| *g == f) {
                Some((_, n)) => *n += 1,
                None => votes.push((f, 1)),
            }
        }
    }
    votes.into_iter().max_by_key(|(_, n)| *n).map(|(f, _)| f)
}

/// A table's verdict on a criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub family: Family,
    /// The level of the table that applies.
    pub level: u8,
    /// Why: the table row, in words.
    pub row: String,
    /// Gaps the Prosecutor charges (fact, with its id).
    pub gaps: Vec<String>,
    /// Strengths the Defense credits.
    pub credits: Vec<String>,
    /// A ceiling no persona may argue above (a run-time defect, a statute).
    pub cap: Option<(u8, String)>,
    /// The evidence ids the level rests on.
    pub cited: Vec<String>,
}

fn find<'a>(ev: &'a [Evidence], name: &str) -> Option<&'a Evidence> {
    let suffix = format!(".{name}");
    ev.iter()
        .find(|e| e.id.ends_with(&suffix) || e.id.contains(&format!("{suffix}#")))
}

fn met(ev: &[Evidence], name: &str) -> bool {
    find(ev, name).is_some_and(|e| e.found && e.kind == EvidenceKind::Fact)
}

fn defects<'a>(ev: &'a [Evidence], kinds: &[&str]) -> Vec<&'a Evidence> {
    ev.iter()
        .filter(|e| {
            e.id.contains(".defect.")
                && !e.found
                && kinds.iter().any(|k| e.id.contains(&format!(".defect.{k}")))
        })
        .collect()
}

/// A fact in plain words for a persona's argument (its id is cited, not written out).
fn label(e: &Evidence) -> String {
    crate::tally::short(crate::tally::fact_text(e), 100)
}

struct Builder {
    family: Family,
    gaps: Vec<String>,
    credits: Vec<String>,
    cap: Option<(u8, String)>,
    cited: Vec<String>,
}

impl Builder {
    fn new(family: Family, ev: &[Evidence]) -> Self {
        let mut b = Builder {
            family,
            gaps: vec![],
            credits: vec![],
            cap: None,
            cited: vec![],
        };
        for e in ev {
            match (e.kind, e.found) {
                (EvidenceKind::Fact, true) => b.credits.push(label(e)),
                (EvidenceKind::Fact, false) => b.gaps.push(label(e)),
                (EvidenceKind::SecurityFinding | EvidenceKind::Contradiction, true) => {
                    b.gaps.push(label(e))
                }
                _ => {}
            }
            if e.kind != EvidenceKind::Missing {
                b.cited.push(e.id.clone());
            }
        }
        b
    }

    fn cap(&mut self, level: u8, why: impl Into<String>) {
        if self.cap.as_ref().is_none_or(|(c, _)| level < *c) {
            self.cap = Some((level, why.into()));
        }
    }

    fn done(self, level: u8, row: impl Into<String>) -> Level {
        let level = match &self.cap {
            Some((c, _)) => level.min(*c),
            None => level,
        };
        Level {
            family: self.family,
            level: level.clamp(1, 5),
            row: row.into(),
            gaps: self.gaps,
            credits: self.credits,
            cap: self.cap,
            cited: self.cited,
        }
    }
}

/// The level of a criterion's evidence, when its facts belong to a family with a table.
pub fn assess(evidence: &[Evidence]) -> Option<Level> {
    let fam = family(evidence);
    // The submission does not provide the artifact at all: level 1, whatever the family.
    if let Some(absent) = evidence
        .iter()
        .find(|e| e.id.contains(".absent.") && !e.found && e.kind == EvidenceKind::Fact)
    {
        let b = Builder::new(fam.unwrap_or(Family::CrossReference), evidence);
        return Some(b.done(
            1,
            format!(
                "the submission does not provide what this criterion grades: {}",
                label(absent)
            ),
        ));
    }
    let fam = fam?;
    let mut b = Builder::new(fam, evidence);
    let ev = evidence;
    Some(match fam {
        Family::History => return history(ev, b),
        Family::Graph => graph(ev, b),
        Family::State => state(ev, b),
        Family::Safety => safety(ev, b),
        Family::Structured => structured(ev, b),
        Family::Nuance => nuance(ev, b),
        Family::Justice => justice(ev, b),
        Family::Concepts | Family::CrossReference => {
            if let Some(basis) = ev.iter().find_map(|e| match &e.measure {
                Some(Measure::Report {
                    interim: true,
                    basis,
                }) => Some(basis),
                _ => None,
            }) {
                b.cap(
                    3,
                    format!(
                        "the report read is an interim report ({basis}): no final report was read"
                    ),
                );
            }
            if fam == Family::Concepts {
                concepts(ev, b)
            } else {
                cross_reference(ev, b)
            }
        }
        Family::Diagram => diagram(ev, b),
    })
}

/// The history's figures, as the RepoInvestigator measured them (on `repo.history.commit_count`).
fn history_measure(ev: &[Evidence]) -> Option<&HistoryMeasure> {
    ev.iter()
        .filter(|e| e.id.contains(".history."))
        .find_map(|e| match &e.measure {
            Some(Measure::History(m)) => Some(m),
            _ => None,
        })
}

/// Thresholds of the history table and the band around each within which a verdict is
/// borderline (two careful graders can differ there).
const BORDERLINE: f64 = 0.05;
const BULK_TOP2: f64 = 0.75;
const BULK_LARGEST: f64 = 0.55;
const BULK_SESSION: f64 = 0.5;
const THIN_TOP2: f64 = 0.6;
const STAGED: f64 = 1.0 / 3.0;
const BURSTS: f64 = 0.4;

/// `None` when the history facts carry no figures (evidence stored by an earlier version):
/// the criterion is then judged by the tally of its facts, like a family without a table.
fn history(ev: &[Evidence], mut b: Builder) -> Option<Level> {
    let m = history_measure(ev)?;
    let commits = m.commits;
    let pattern = m.pattern.as_str();
    let (largest, top2) = (m.largest_commit_share, m.top2_share);
    let bursts = m.burst_share.unwrap_or(0.0);
    let staged = m.staged_share.unwrap_or(0.0);
    let (session, session_commits, session_minutes) = m.largest_session.unwrap_or((0.0, 0, 0));
    let spread = met(ev, "timing");
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    // the figures near a threshold, in words
    let near = |x: f64, t: f64| (x - t).abs() <= BORDERLINE;
    let mut borderline: Vec<String> = Vec::new();
    if near(top2, crate::repo::history::FEW_LARGE_TOP2) {
        borderline.push(format!(
            "the two largest deliveries hold {} of the code, near the {} from which a history is few_large",
            pct(top2),
            pct(crate::repo::history::FEW_LARGE_TOP2)
        ));
    }
    if near(session, BULK_SESSION) {
        borderline.push(format!(
            "the largest staged session holds {}, near the half from which it is a bulk upload",
            pct(session)
        ));
    }
    if near(staged, STAGED) {
        borderline.push(format!(
            "staged sessions hold {} of the code, near the third from which the history reads as staged",
            pct(staged)
        ));
    }
    if near(bursts, BURSTS) {
        borderline.push(format!(
            "{} of the commits come less than two minutes after the previous one, near the {} threshold",
            pct(bursts),
            pct(BURSTS)
        ));
    }
    if !borderline.is_empty() {
        b.gaps.push(format!(
            "borderline, two careful graders can differ by a point here: {}",
            borderline.join("; ")
        ));
    }
    if commits <= 1 || pattern == "single_init_dump" {
        return Some(b.done(
            1,
            "a single commit or one dump of the code: no history to read",
        ));
    }
    if pattern == "few_large" || top2 >= BULK_TOP2 || largest >= BULK_LARGEST || !spread {
        b.gaps.push(format!(
            "bulk upload: the largest commit holds {} of the code, the two largest deliveries {} (pattern {pattern})",
            pct(largest),
            pct(top2)
        ));
        return Some(b.done(
            2,
            "the code arrived in a few bulk commits (failure pattern: bulk upload)",
        ));
    }
    if session >= BULK_SESSION {
        b.gaps.push(format!(
            "staged upload: {session_commits} commits within {session_minutes} minutes, each less than ten minutes after the previous, hold {} of the code",
            pct(session)
        ));
        return Some(b.done(
            2,
            "most of the code was committed in one sitting, file by file (failure pattern: timestamps clustered within minutes)",
        ));
    }
    if commits <= 10 || top2 >= THIN_TOP2 || staged >= STAGED || bursts >= BURSTS {
        if staged >= STAGED {
            b.gaps.push(format!(
                "{} of the code arrived in staged sessions (runs of commits minutes apart)",
                pct(staged)
            ));
        }
        if bursts >= BURSTS {
            b.gaps.push(format!(
                "{} of the commits come less than two minutes after the previous one",
                pct(bursts)
            ));
        }
        return Some(b.done(
            3,
            format!(
                "iterative but thin or staged: {commits} commits, the two largest deliveries hold {}, staged sessions {}",
                pct(top2),
                pct(staged)
            ),
        ));
    }
    if commits >= 20
        && largest <= 0.15
        && met(ev, "progression")
        && met(ev, "messages")
        && bursts < 0.1
        && session == 0.0
    {
        return Some(b.done(
            5,
            "atomic, step-by-step history with a visible progression and descriptive messages",
        ));
    }
    Some(b.done(
        4,
        format!(
            "iterative history: {commits} commits over time, no dominant commit (the largest holds {})",
            pct(largest)
        ),
    ))
}

fn graph(ev: &[Evidence], mut b: Builder) -> Level {
    let hard = defects(ev, &["import_error", "unbounded_loop", "unreachable_node"]);
    let soft = defects(
        ev,
        &[
            "duplicate_execution",
            "undeclared_state_key",
            "unknown_state_key",
            "whole_state_return",
        ],
    );
    if let Some(d) = hard.first() {
        b.cap(
            2,
            format!(
                "a run-time defect stops the graph from working as wired: {}",
                label(d)
            ),
        );
    } else if let Some(d) = soft.first() {
        b.cap(3, format!("a run-time defect of the graph: {}", label(d)));
    }
    if !met(ev, "definition") {
        return b.done(1, "no StateGraph is built");
    }
    if !met(ev, "not_linear") && !met(ev, "detectives_fan_out") {
        return b.done(
            1,
            "a purely linear flow: no parallel branch (Orchestration Fraud)",
        );
    }
    let layers = [
        met(ev, "detectives_fan_out") && met(ev, "evidence_fan_in"),
        met(ev, "judges_fan_out") && met(ev, "judges_fan_in"),
    ];
    if !(layers[0] && layers[1]) {
        return b.done(
            2,
            "only one of the two fan-out/fan-in layers (detectives, judges) exists",
        );
    }
    if !met(ev, "error_edges") {
        return b.done(
            3,
            "both fan-out/fan-in layers, but no conditional edge for missing evidence or node failure",
        );
    }
    b.done(
        4,
        "both fan-out/fan-in layers and conditional edges for the error states",
    )
}

fn state(ev: &[Evidence], mut b: Builder) -> Level {
    let ds = defects(
        ev,
        &[
            "undeclared_state_key",
            "unknown_state_key",
            "whole_state_return",
        ],
    );
    if !met(ev, "definition") {
        return b.done(1, "no TypedDict or BaseModel state: plain dicts");
    }
    let models = met(ev, "evidence_model") && met(ev, "opinion_model");
    let reducers = met(ev, "reducer_add") && met(ev, "reducer_ior");
    let any_reducer = met(ev, "reducer_add") || met(ev, "reducer_ior");
    if !models && !any_reducer {
        return b.done(
            2,
            "a typed state, but no Pydantic models and no reducers: parallel writes overwrite each other",
        );
    }
    if ds.len() >= 2 {
        b.cap(
            3,
            format!(
                "{} run-time state defects (keys dropped by the schema, whole state returned): {}",
                ds.len(),
                ds.iter()
                    .take(3)
                    .map(|d| label(d))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        );
    }
    if !models || !reducers || !met(ev, "holds_evidence") || !met(ev, "holds_opinions") {
        return b.done(
            3,
            "typed state and models, but the reducers or the evidence/opinion collections are incomplete",
        );
    }
    b.done(
        4,
        "typed state with Evidence and JudicialOpinion models and operator.add / operator.ior reducers",
    )
}

fn safety(ev: &[Evidence], mut b: Builder) -> Level {
    let findings: Vec<&Evidence> = ev
        .iter()
        .filter(|e| e.kind == EvidenceKind::SecurityFinding && e.found)
        .collect();
    if let Some(f) = findings.first() {
        b.cap(
            1,
            format!(
                "Security Negligence: a confirmed raw shell call: {}",
                label(f)
            ),
        );
        return b.done(1, "a raw shell call with built input");
    }
    let sandboxed = met(ev, "sandboxed_clone");
    let handled = met(ev, "error_handling");
    let topic = |w: &str| {
        ev.iter()
            .any(|e| e.found && e.kind == EvidenceKind::Fact && crate::tally::about(e, &[w]))
    };
    if !sandboxed && !handled {
        let no_shell = met(ev, "no_raw_shell");
        return b.done(
            if no_shell { 3 } else { 2 },
            if no_shell {
                "no raw shell call, but the clone code or its sandbox could not be confirmed"
            } else {
                "no sandboxed clone and no error handling"
            },
        );
    }
    if !(sandboxed && handled) {
        return b.done(
            3,
            "clone code found, but either the sandbox or the error handling is missing",
        );
    }
    let timeout = topic("timeout");
    let validated = topic("validat");
    b.done(
        3 + u8::from(timeout) + u8::from(timeout && validated),
        "sandboxed clone with error handling and no raw shell; timeouts and URL validation are what lift it further",
    )
}

fn structured(ev: &[Evidence], b: Builder) -> Level {
    let used = met(ev, "used");
    let schema = met(ev, "opinion_schema");
    let retry = met(ev, "retry");
    let fields = met(ev, "schema_fields");
    if !used {
        return if fields {
            b.done(
                2,
                "no structured-output binding: free text parsed into an opinion model (Hallucination Liability)",
            )
        } else {
            b.done(1, "judges' output is free text with no schema at all")
        };
    }
    if !schema {
        return b.done(
            2,
            "structured output is used, but not bound to a JudicialOpinion schema",
        );
    }
    if !retry {
        return b.done(
            3,
            "bound to the opinion schema, but no retry on malformed output",
        );
    }
    if !fields {
        return b.done(
            4,
            "bound to the opinion schema with retry; the schema's score/argument/cited_evidence fields are not all confirmed",
        );
    }
    b.done(
        5,
        "every judge call bound to the JudicialOpinion schema, validated, with retry",
    )
}

fn nuance(ev: &[Evidence], mut b: Builder) -> Level {
    let language = [
        "prosecutor_language",
        "defense_language",
        "tech_lead_language",
    ]
    .iter()
    .filter(|n| met(ev, n))
    .count();
    if !met(ev, "prompts") {
        return if language == 0 {
            b.done(1, "no persona prompts: a single grader")
        } else {
            b.done(2, "persona prompts are missing for some judges")
        };
    }
    let mismatch = defects(ev, &["persona_mismatch"]);
    if let Some(d) = mismatch.first() {
        b.cap(
            3,
            format!("a persona is wired or named inconsistently: {}", label(d)),
        );
    }
    // `collusion` holds when the prompts share at most the rubric's 50% (older evidence:
    // `distinct`)
    if !met(ev, "collusion") && !met(ev, "distinct") {
        return b.done(
            3,
            "the three prompts share most of their text (Persona Collusion)",
        );
    }
    if !met(ev, "parallel_judges") {
        return b.done(
            3,
            "distinct personas, but the judges do not run in parallel on the same evidence",
        );
    }
    if language < 3 {
        return b.done(
            3,
            "distinct prompts, but not every persona speaks its role (adversarial, forgiving, pragmatic)",
        );
    }
    b.done(
        4,
        "three distinct, conflicting personas running in parallel on the same evidence",
    )
}

fn justice(ev: &[Evidence], mut b: Builder) -> Level {
    if !met(ev, "code") {
        return b.done(1, "no Chief Justice code");
    }
    let rules = [
        "rule.security_override",
        "rule.fact_supremacy",
        "rule.functionality_weight",
        "rule.variance_re_evaluation",
    ]
    .iter()
    .filter(|r| met(ev, r))
    .count();
    let llm = find(ev, "deterministic").is_some_and(|e| {
        matches!(
            e.measure,
            Some(Measure::Justice {
                calls_llm: true,
                ..
            })
        )
    });
    if llm {
        b.cap(3, "an LLM takes part in the Chief Justice's verdict");
    }
    if !(met(ev, "markdown_file") && met(ev, "report_sections")) {
        b.cap(
            3,
            "the verdict is not written as a Markdown report with its sections",
        );
    }
    let level = match rules {
        0 | 1 => 2,
        2 => 3,
        3 => 4,
        _ => 5,
    };
    b.done(
        level,
        format!("{rules} of the 4 named synthesis rules are deterministic code"),
    )
}

fn concepts(ev: &[Evidence], b: Builder) -> Level {
    let concepts: Vec<&Evidence> = ev.iter().filter(|e| e.id.contains(".concept.")).collect();
    // a concept of a report read in part, not found explained: no verdict either way
    let undecided = concepts
        .iter()
        .filter(|e| e.kind == EvidenceKind::Missing)
        .count();
    let decided = concepts.len() - undecided;
    let explained = concepts
        .iter()
        .filter(|e| e.found && e.kind == EvidenceKind::Fact)
        .count();
    let level = if explained == 0 {
        1
    } else if explained == 1 {
        2
    } else if explained < decided {
        3
    } else {
        4
    };
    b.done(
        level,
        format!(
            "{explained} of {} concepts explained in terms of the code (others missing or keyword dropping){}",
            concepts.len(),
            if undecided > 0 {
                format!(
                    "; {} not decided: the report was read only in part",
                    crate::words::count(undecided, "concept", "concepts")
                )
            } else {
                String::new()
            }
        ),
    )
}

/// The diagram table, when no picture could be inspected: nothing at all (1), or only a
/// diagram typed as text (2). A picture is read by a vision model, never by this table.
fn diagram(ev: &[Evidence], b: Builder) -> Level {
    if ev
        .iter()
        .any(|e| e.id.ends_with(".text_drawing") && e.kind == EvidenceKind::Fact)
    {
        return b.done(
            2,
            "the report draws its architecture only as text (ASCII or box art, or diagram source), not as a diagram",
        );
    }
    b.done(1, "no architecture diagram in the report")
}

fn cross_reference(ev: &[Evidence], b: Builder) -> Level {
    let paths: Vec<&Evidence> = ev
        .iter()
        .filter(|e| e.id.contains(".path.") && e.kind != EvidenceKind::Missing)
        .collect();
    let hallucinated = paths
        .iter()
        .filter(|e| e.kind == EvidenceKind::Contradiction && e.found)
        .count();
    let verified = paths
        .iter()
        .filter(|e| e.kind == EvidenceKind::Fact && e.found)
        .count();
    let claims: Vec<&Evidence> = ev.iter().filter(|e| e.id.contains(".claim.")).collect();
    let contradicted = claims
        .iter()
        .filter(|e| e.kind == EvidenceKind::Contradiction && e.found)
        .count();
    let supported = claims
        .iter()
        .filter(|e| e.kind == EvidenceKind::Fact && e.found)
        .count();
    let share = if verified + hallucinated == 0 {
        0.0
    } else {
        hallucinated as f64 / (verified + hallucinated) as f64
    };
    let what = format!(
        "{} {}, {hallucinated} hallucinated; {} supported, {contradicted} contradicted",
        crate::words::count(verified, "cited path", "cited paths"),
        crate::words::form(verified, "exists", "exist"),
        crate::words::count(supported, "feature claim", "feature claims"),
    );
    let level = if share > 0.5 {
        1
    } else if share > 0.2 || contradicted >= 2 {
        2
    } else if hallucinated > 0 || contradicted == 1 || verified < 3 {
        3
    } else if verified >= 8 && supported >= 3 {
        5
    } else {
        4
    };
    b.done(level, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Confidence, Detective};

    fn f(id: &str, found: bool) -> Evidence {
        Evidence::fact(
            id,
            Detective::RepoInvestigator,
            "goal",
            found,
            "src/x.py:1",
            format!("fact {id}"),
            Confidence::CERTAIN,
        )
    }

    fn with(id: &str, found: bool, rationale: &str) -> Evidence {
        Evidence {
            rationale: rationale.into(),
            ..f(id, found)
        }
    }

    fn defect(kind: &str) -> Evidence {
        f(&format!("repo.graph.defect.{kind}.0"), false)
    }

    fn level(ev: &[Evidence]) -> u8 {
        assess(ev).unwrap().level
    }

    /// A history whose consecutive commits are `gaps` seconds apart.
    fn history(commits: usize, largest: u32, top2: u32, gaps: &[i64]) -> Vec<Evidence> {
        let bursts = gaps.iter().filter(|g| **g < 120).count();
        let m = HistoryMeasure {
            commits,
            merges: 0,
            pattern: "iterative".into(),
            largest_commit_share: f64::from(largest) / 100.0,
            top2_share: f64::from(top2) / 100.0,
            burst_share: (gaps.len() >= 3).then(|| bursts as f64 / gaps.len() as f64),
            staged_share: Some(0.0),
            largest_session: None,
        };
        vec![
            f("repo.history.commit_count", commits > 3).with_measure(Measure::History(m)),
            f("repo.history.pattern", true),
            f("repo.history.progression", true),
            f("repo.history.timing", true),
            f("repo.history.messages", true),
        ]
    }

    #[test]
    fn routing_follows_the_facts_not_the_rubric_id() {
        assert_eq!(
            family(&[
                f("repo.graph.definition", true),
                defect("duplicate_execution")
            ]),
            Some(Family::Graph)
        );
        assert_eq!(
            family(&[
                f("repo.state.definition", true),
                defect("whole_state_return")
            ]),
            Some(Family::State)
        );
        assert_eq!(
            family(&[f("pdf.my_custom_id.concept.metacognition", true)]),
            Some(Family::Concepts)
        );
        assert_eq!(
            family(&[f("pdf.x.path.0", true), f("pdf.x.claim.fan_in", true)]),
            Some(Family::CrossReference)
        );
        assert_eq!(family(&[f("repo.unrouted", false)]), None);
    }

    #[test]
    fn history_table() {
        let day = 86_400;
        let slow = [day / 4; 25];
        // bulk upload: the three largest commits hold most of the code
        assert_eq!(level(&history(12, 56, 96, &slow[..11])), 2);
        assert_eq!(level(&history(13, 71, 92, &slow[..12])), 2);
        // most commits seconds apart, no session holding most of the code: staged work
        let burst: Vec<i64> = (0..17).map(|i| if i % 4 == 0 { day } else { 30 }).collect();
        assert_eq!(level(&history(18, 24, 50, &burst)), 3);
        // one staged session holding most of the code: a bulk upload, however many commits
        let mut staged = history(18, 24, 50, &burst);
        if let Some(Measure::History(m)) = &mut staged[0].measure {
            m.staged_share = Some(0.62);
            m.largest_session = Some((0.62, 11, 34));
        }
        let l = assess(&staged).unwrap();
        assert_eq!(l.level, 2, "{}", l.row);
        assert!(
            l.gaps
                .iter()
                .any(|g| g.contains("11 commits within 34 minutes")),
            "{:?}",
            l.gaps
        );
        // a figure near a threshold says it is borderline
        let mut near = history(29, 16, 43, &slow[..24]);
        if let Some(Measure::History(m)) = &mut near[0].measure {
            m.staged_share = Some(0.32);
            m.largest_session = Some((0.32, 3, 10));
        }
        let l = assess(&near).unwrap();
        assert_eq!(l.level, 4);
        assert!(
            l.gaps.iter().any(|g| g.starts_with("borderline")),
            "{:?}",
            l.gaps
        );
        // iterative but thin
        assert_eq!(level(&history(9, 26, 62, &slow[..8])), 3);
        // iterative
        assert_eq!(level(&history(29, 16, 43, &slow[..24])), 4);
        // atomic, no dominant commit
        assert_eq!(level(&history(25, 10, 25, &slow[..24])), 5);
        // one dump
        assert_eq!(level(&history(1, 100, 100, &[])), 1);
    }

    #[test]
    fn history_facts_without_figures_are_judged_by_their_tally() {
        // evidence stored by an earlier version: the same facts, no figures
        let mut old = history(25, 10, 25, &[86_400; 24]);
        for e in &mut old {
            e.measure = None;
        }
        assert_eq!(family(&old), Some(Family::History));
        assert_eq!(assess(&old), None);
        // the rationale is never read: a text that once parsed as "1 commit" changes nothing
        let mut ev = history(25, 10, 25, &[86_400; 24]);
        ev[0].rationale = "1 commit (0 merges) reachable".into();
        ev[1].rationale = "pattern single_init_dump: the largest commit adds 100%".into();
        assert_eq!(level(&ev), 5);
    }

    fn graph(extra: &[Evidence], unmet: &[&str]) -> Vec<Evidence> {
        let mut v: Vec<Evidence> = [
            "definition",
            "detectives_fan_out",
            "evidence_fan_in",
            "judges_fan_out",
            "judges_fan_in",
            "error_edges",
            "not_linear",
            "well_formed",
        ]
        .iter()
        .map(|n| f(&format!("repo.graph.{n}"), !unmet.contains(n)))
        .collect();
        v.extend(extra.iter().cloned());
        v
    }

    #[test]
    fn graph_table_caps_on_run_time_defects() {
        assert_eq!(level(&graph(&[], &[])), 4);
        assert_eq!(level(&graph(&[], &["error_edges"])), 3);
        assert_eq!(level(&graph(&[defect("duplicate_execution")], &[])), 3);
        let l = assess(&graph(&[defect("unbounded_loop")], &[])).unwrap();
        assert_eq!(l.level, 2);
        assert!(l.cap.unwrap().1.contains("unbounded_loop"));
        assert_eq!(level(&graph(&[defect("unreachable_node")], &[])), 2);
        assert_eq!(level(&graph(&[defect("import_error")], &[])), 2);
        assert_eq!(level(&graph(&[], &["judges_fan_out", "judges_fan_in"])), 2);
        assert_eq!(
            level(&graph(&[], &["not_linear", "detectives_fan_out"])),
            1,
            "linear"
        );
        assert_eq!(level(&graph(&[], &["definition"])), 1);
    }

    fn state(unmet: &[&str], extra: &[Evidence]) -> Vec<Evidence> {
        let mut v: Vec<Evidence> = [
            "definition",
            "evidence_model",
            "opinion_model",
            "holds_evidence",
            "holds_opinions",
            "reducer_add",
            "reducer_ior",
        ]
        .iter()
        .map(|n| f(&format!("repo.state.{n}"), !unmet.contains(n)))
        .collect();
        v.extend(extra.iter().cloned());
        v
    }

    #[test]
    fn state_table() {
        assert_eq!(level(&state(&[], &[])), 4);
        assert_eq!(level(&state(&[], &[defect("whole_state_return")])), 4);
        assert_eq!(
            level(&state(
                &[],
                &[defect("undeclared_state_key"), defect("whole_state_return")]
            )),
            3
        );
        assert_eq!(level(&state(&["reducer_add", "reducer_ior"], &[])), 3);
        assert_eq!(
            level(&state(
                &[
                    "reducer_add",
                    "reducer_ior",
                    "evidence_model",
                    "opinion_model"
                ],
                &[]
            )),
            2
        );
        assert_eq!(level(&state(&["definition"], &[])), 1);
    }

    #[test]
    fn safety_table() {
        let base = |unmet: &[&str]| -> Vec<Evidence> {
            [
                "sandboxed_clone",
                "error_handling",
                "auth_errors",
                "no_raw_shell",
            ]
            .iter()
            .map(|n| f(&format!("repo.security.{n}"), !unmet.contains(n)))
            .collect()
        };
        assert_eq!(level(&base(&[])), 3);
        assert_eq!(level(&base(&["sandboxed_clone", "error_handling"])), 3);
        assert_eq!(
            level(&base(&[
                "sandboxed_clone",
                "error_handling",
                "no_raw_shell"
            ])),
            2
        );
        let mut timed = base(&[]);
        timed.push(with("repo.security.timeout", true, "clone under a timeout"));
        assert_eq!(level(&timed), 4);
        let mut shell = base(&[]);
        shell.push(f("repo.security.finding.0", true).with_kind(EvidenceKind::SecurityFinding));
        assert_eq!(level(&shell), 1);
    }

    #[test]
    fn structured_table() {
        let s = |unmet: &[&str]| -> Vec<Evidence> {
            ["used", "opinion_schema", "schema_fields", "retry"]
                .iter()
                .map(|n| f(&format!("repo.structured_output.{n}"), !unmet.contains(n)))
                .collect()
        };
        assert_eq!(level(&s(&[])), 5);
        assert_eq!(level(&s(&["schema_fields"])), 4);
        assert_eq!(level(&s(&["retry"])), 3);
        assert_eq!(level(&s(&["used", "opinion_schema", "retry"])), 2);
        assert_eq!(
            level(&s(&["used", "opinion_schema", "retry", "schema_fields"])),
            1
        );
    }

    #[test]
    fn nuance_table_caps_on_collusion_and_mismatch() {
        let n = |unmet: &[&str], extra: &[Evidence]| -> Vec<Evidence> {
            let mut v: Vec<Evidence> = [
                "prompts",
                "collusion",
                "prosecutor_language",
                "defense_language",
                "tech_lead_language",
                "parallel_judges",
                "structured_output",
            ]
            .iter()
            .map(|x| f(&format!("repo.personas.{x}"), !unmet.contains(x)))
            .collect();
            v.extend(extra.iter().cloned());
            v
        };
        // the collusion figure, as the RepoInvestigator states it: found = no collusion
        assert_eq!(level(&n(&[], &[])), 4);
        assert_eq!(level(&n(&["collusion"], &[])), 3);
        // evidence stored by an earlier version (a resumed batch) says `distinct`
        let older = |found: bool| -> Vec<Evidence> {
            let mut v = n(&["collusion"], &[]);
            v.retain(|e| !e.id.ends_with(".collusion"));
            v.push(f("repo.personas.distinct", found));
            v
        };
        assert_eq!(level(&older(true)), 4);
        assert_eq!(level(&older(false)), 3);
        assert_eq!(level(&n(&["parallel_judges"], &[])), 3);
        assert_eq!(level(&n(&[], &[defect("persona_mismatch")])), 3);
        assert_eq!(
            level(&n(
                &[
                    "prompts",
                    "collusion",
                    "prosecutor_language",
                    "defense_language",
                    "tech_lead_language"
                ],
                &[]
            )),
            1
        );
    }

    #[test]
    fn justice_table() {
        let j = |rules: &[&str], extra: &[&str]| -> Vec<Evidence> {
            let mut v = vec![
                f("repo.justice.code", true),
                with(
                    "repo.justice.deterministic",
                    true,
                    "12 if/elif branches; no LLM call",
                ),
                f("repo.justice.markdown_file", !extra.contains(&"no_md")),
                f("repo.justice.report_sections", true),
            ];
            for r in [
                "security_override",
                "fact_supremacy",
                "functionality_weight",
                "variance_re_evaluation",
            ] {
                v.push(f(&format!("repo.justice.rule.{r}"), rules.contains(&r)));
            }
            v
        };
        let all = [
            "security_override",
            "fact_supremacy",
            "functionality_weight",
            "variance_re_evaluation",
        ];
        assert_eq!(level(&j(&all, &[])), 5);
        assert_eq!(level(&j(&all[..3], &[])), 4);
        assert_eq!(level(&j(&all[..2], &[])), 3);
        assert_eq!(level(&j(&all[..1], &[])), 2);
        assert_eq!(
            level(&j(&all, &["no_md"])),
            3,
            "no Markdown report caps at 3"
        );
        let mut llm = j(&all, &[]);
        llm[1].measure = Some(Measure::Justice {
            named_rules: 4,
            calls_llm: true,
        });
        assert_eq!(level(&llm), 3);
        // the prose alone is not read
        let mut prose = j(&all, &[]);
        prose[1].rationale = "4 named rules; the justice code also calls an LLM".into();
        assert_eq!(level(&prose), 5);
    }

    #[test]
    fn report_tables() {
        let c = |n: usize, of: usize| -> Vec<Evidence> {
            (0..of)
                .map(|i| f(&format!("pdf.d.concept.c{i}"), i < n))
                .collect()
        };
        assert_eq!(level(&c(0, 4)), 1);
        assert_eq!(level(&c(1, 4)), 2);
        assert_eq!(level(&c(3, 4)), 3);
        assert_eq!(level(&c(4, 4)), 4);
        let mut interim = c(4, 4);
        interim[0].location = "repo:reports/interim-report.pdf p.2".into();
        assert_eq!(
            level(&interim),
            4,
            "a location is no statement of the report's kind"
        );
        interim.push(f("pdf.d.report_kind", false).with_measure(Measure::Report {
            interim: true,
            basis: "its title on p.1 reads \"Interim Report\"".into(),
        }));
        assert_eq!(level(&interim), 3, "an interim report caps at 3");
        // a concept of a report read in part is no verdict
        let mut partial = c(3, 3);
        partial.push(f("pdf.d.concept.c9", false).with_kind(EvidenceKind::Missing));
        let l = assess(&partial).unwrap();
        assert_eq!(l.level, 4, "{}", l.row);
        assert!(l.row.contains("1 concept not decided"), "{}", l.row);

        let x = |ok: usize, bad: usize, contra: usize| -> Vec<Evidence> {
            let mut v: Vec<Evidence> = (0..ok)
                .map(|i| f(&format!("pdf.d.path.{i}"), true))
                .collect();
            v.extend((0..bad).map(|i| {
                f(&format!("pdf.d.path.h{i}"), true).with_kind(EvidenceKind::Contradiction)
            }));
            v.extend((0..contra).map(|i| {
                f(&format!("pdf.d.claim.c{i}"), true).with_kind(EvidenceKind::Contradiction)
            }));
            v.extend((0..3).map(|i| f(&format!("pdf.d.claim.s{i}"), true)));
            v
        };
        assert_eq!(level(&x(7, 20, 0)), 1);
        assert_eq!(level(&x(8, 4, 3)), 2);
        assert_eq!(level(&x(13, 2, 0)), 3);
        assert_eq!(level(&x(7, 0, 1)), 3);
        assert_eq!(level(&x(1, 0, 0)), 3, "almost nothing cited");
        assert_eq!(level(&x(4, 0, 0)), 4);
        assert_eq!(level(&x(9, 0, 0)), 5);
    }

    #[test]
    fn an_absent_artifact_is_level_1_in_every_table() {
        let ev = vec![f("pdf.absent.theoretical_depth", false)];
        let l = assess(&ev).unwrap();
        assert_eq!(l.level, 1);
        assert!(l.row.contains("does not provide"), "{}", l.row);
    }
}
