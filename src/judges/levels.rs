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
//! | state | no typed state | typed state without reducers or models | models and state, reducers missing, or ≥ 2 state defects (keys dropped, whole state returned) | TypedDict/BaseModel state, Evidence and JudicialOpinion models, `operator.add` and `operator.ior` reducers (or functions of the repository that keep both values of a list or a dict), ≤ 1 defect | (Defense only) |
//! | safe tools | a confirmed raw shell call | a command through a shell, no clone code, a clone outside a temporary directory; or a level lost below | a sandboxed clone whose failure is handled | and one of the four safeguards (a timeout on the clone, the URL checked before it, its failures told apart, the directory removed) | and three of them; a single-commit clone or a clone deleted before it is read costs a level (never below 2); a missing error handling counts one safeguard less |
//! | structured output | free text, no schema | JSON cut out of free text with a regex, or a bound schema that is not an opinion | a schema's parser on the reply text, or bound to the opinion schema with no call made again when the reply is invalid (a `try` alone, the client's `max_retries`) | bound, made again on failure (a retry loop, a retry decorator, a second call in the handler, `.with_retry`, a node `RetryPolicy`) | and the full schema (score, argument, cited evidence), not JSON mode |
//! | judicial nuance | no persona prompts | some missing, or Persona Collusion (the prompts share more than half their text) | a persona of a sentence or two (< 400 chars, in a shared prompt or not), one call for every criterion, a persona not speaking its role (each costs a level from 5 for full briefs, from 4 for shorter prompts), free-text replies or a persona mismatch (at most 3) | three distinct prompts, each speaking its role; full briefs not run in parallel or not validated; a judge missing its rubric instructions (at most 4) | full briefs (≥ 1000 chars each), asked per criterion, in parallel, with structured (bound or schema-parsed) replies |
//! | Chief Justice | no justice code | ≤ 1 of the five rules implemented in code (read from what a branch tests and does, or a weighted sum) | 2–3 rules, an LLM in the verdict, or no Markdown report with its sections | 4 rules | all 5 (security override, fact supremacy, functionality weight, dissent, variance re-evaluation), deterministic, Markdown report |
//! | theoretical depth | no concept explained | 1 explained | 2–3 explained, or all explained with one in generic terms only (no explaining passage names a file, class, function, graph node or state field the repository has) | all explained (the decided ones, for a report read in part), each in the names of the repository's own code | (Defense only) |
//! | report cross-reference | > 50% of cited paths hallucinated | > 20% hallucinated or ≥ 3 contradicted claims | some hallucinated, one or two contradicted claims, or < 3 paths cited | ≥ 3 paths, all real, no contradiction | and ≥ 8 real paths, ≥ 3 supported claims |
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
//! The tables read the typed facts (`Evidence::fact`, one exhaustive `match` per family: a
//! renamed or dropped fact does not compile), the facts' `found` flags and the figures the
//! detectives measured (`Evidence::measure`), never their prose. Facts of a typed family that
//! carry no typed fact (evidence stored by an earlier version) are judged by their tally. History facts stored by an earlier version carry
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

use crate::model::fact::{
    Fact, GraphFact, JusticeFact, JusticeRule, Layer, Merge, Model, NuanceFact, SafetyFact, Site,
    StateFact, Stated, StructuredFact,
};
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
    /// The conditions of the next level the facts fail, each with its measured figure (empty
    /// where the table has no figures to say: [`asks`] says what the next level asks).
    pub short_of: Vec<String>,
    /// The submission lacks the artifact the criterion grades: level 1 without reading any
    /// table (`family` is then only a guess from the evidence and is not named).
    pub absent: bool,
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

/// A fact in plain words for a persona's argument (its id is cited, not written out): the
/// typed fact's statement, else the detective's rationale.
fn label(e: &Evidence) -> String {
    match &e.fact {
        Some(f) => crate::tally::short(&f.statement(), 100),
        None => crate::tally::short(&crate::tally::fact_text(e), 100),
    }
}

struct Builder {
    family: Family,
    gaps: Vec<String>,
    credits: Vec<String>,
    cap: Option<(u8, String)>,
    cited: Vec<String>,
    short_of: Vec<String>,
}

impl Builder {
    fn new(family: Family, ev: &[Evidence]) -> Self {
        let mut b = Builder {
            family,
            gaps: vec![],
            credits: vec![],
            cap: None,
            cited: vec![],
            short_of: vec![],
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
            short_of: self.short_of,
            absent: false,
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
        return Some(Level {
            absent: true,
            ..b.done(
                1,
                format!(
                    "the submission does not provide what this criterion grades: {}",
                    label(absent)
                ),
            )
        });
    }
    let fam = fam?;
    let mut b = Builder::new(fam, evidence);
    let ev = evidence;
    Some(match fam {
        Family::History => return history(ev, b),
        Family::Graph => return graph(ev, b),
        Family::State => return state(ev, b),
        Family::Safety => return safety(ev, b),
        Family::Structured => return structured(ev, b),
        Family::Nuance => return nuance(ev, b),
        Family::Justice => return justice(ev, b),
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

/// What the family's table asks for at `level`, as something a student can do (the cell of
/// the module's table); `None` where no fact lifts a criterion to that level (above the
/// table's top: a 5 only the Defense argues, or a diagram read by a vision model).
pub fn asks(family: Family, level: u8) -> Option<&'static str> {
    Some(match (family, level) {
        (Family::History, 2) => "more than one commit: not a single dump of the code",
        (Family::History, 3) => {
            "no bulk upload: the two largest deliveries under 75% of the code, the largest commit under 55%, the commits spread over time and no single sitting holding half of the code"
        }
        (Family::History, 4) => {
            "more than 10 commits spread over time: the two largest deliveries under 60% of the code, staged sessions under a third of it, fewer than 40% of the commits within two minutes of the previous one"
        }
        (Family::History, 5) => {
            "at least 20 commits, none adding more than 15% of the code, no staged session, fewer than 10% of the commits within two minutes of the previous one, a visible progression and descriptive messages"
        }
        (Family::Graph, 2) => "a fan-out: nodes that run in parallel",
        (Family::Graph, 3) => {
            "both fan-out/fan-in layers: the detectives and the judges each run in parallel and join"
        }
        (Family::Graph, 4) => {
            "a conditional edge that changes the path by the state (missing evidence, a failed node)"
        }
        (Family::Graph, 5) => {
            "a conditional route after each layer: missing evidence after the detectives, a failed judge after the judges"
        }
        (Family::State, 2) => "a TypedDict or BaseModel state",
        (Family::State, 3) => {
            "Pydantic models for the evidence and the opinions, or reducers on the collections parallel nodes write"
        }
        (Family::State, 4) => {
            "Evidence and JudicialOpinion models held in the state with operator.add and operator.ior reducers, and at most one run-time state defect"
        }
        (Family::Safety, 2) => "no raw shell call built from input",
        (Family::Safety, 3) => {
            "the repository cloned without a shell into a temporary directory, the clone's failure handled"
        }
        (Family::Safety, 4) => {
            "one of the four safeguards on the clone: a timeout, the URL checked before it, its failures told apart, the directory removed"
        }
        (Family::Safety, 5) => {
            "three of the four safeguards on the clone (a timeout, the URL checked before it, its failures told apart, the directory removed), its failure handled, the full history cloned and read before the directory is removed"
        }
        (Family::Structured, 2) => "a schema for the judges' output",
        (Family::Structured, 3) => {
            "the opinion schema bound to the judges' calls, or a schema's parser reading the reply"
        }
        (Family::Structured, 4) => {
            "the opinion schema bound to the judges' calls, and a call made again when its reply is invalid (a retry loop, a retry decorator, `.with_retry`, a node `RetryPolicy`)"
        }
        (Family::Structured, 5) => {
            "every judge call bound by the API to the full opinion schema (score, argument, cited evidence; not JSON mode) and made again on failure"
        }
        (Family::Nuance, 2) => "persona prompts for the judges",
        (Family::Nuance, 3) => "a distinct prompt for each of the three personas",
        (Family::Nuance, 4) => {
            "three distinct persona prompts, each speaking its role, asked with structured replies"
        }
        (Family::Nuance, 5) => {
            "full persona briefs (1000 characters or more each), asked per criterion, in parallel, with structured replies"
        }
        (Family::Justice, 2) => "Chief Justice code",
        (Family::Justice, 3) => {
            "two of the five rules in code (security override, fact supremacy, functionality weight, dissent, variance re-evaluation)"
        }
        (Family::Justice, 4) => {
            "four of the five rules in code, a deterministic verdict and a Markdown report with its sections"
        }
        (Family::Justice, 5) => {
            "all five rules in code (security override, fact supremacy, functionality weight, dissent, variance re-evaluation), a deterministic verdict and a Markdown report"
        }
        (Family::Concepts, 2) => "one concept of the rubric explained",
        (Family::Concepts, 3) => "two concepts of the rubric explained",
        (Family::Concepts, 4) => {
            "every concept explained, each in the names of the repository's own code (a file, class, function, graph node or state field)"
        }
        (Family::CrossReference, 2) => {
            "at most half of the cited paths missing from the repository"
        }
        (Family::CrossReference, 3) => {
            "at most a fifth of the cited paths missing from the repository and fewer than 3 claims the code contradicts"
        }
        (Family::CrossReference, 4) => {
            "at least 3 cited paths, every one of them in the repository, and no claim the code contradicts"
        }
        (Family::CrossReference, 5) => {
            "at least 8 cited paths that exist and at least 3 feature claims the code supports"
        }
        (Family::Diagram, 2) => "an architecture diagram in the report",
        _ => return None,
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
    let f = HistoryFigures::read(history_measure(ev)?, ev);
    let HistoryFigures {
        commits,
        pattern,
        largest,
        top2,
        bursts,
        staged,
        session,
        session_commits,
        session_minutes,
        spread,
    } = f;
    if let Some(gap) = f.borderline() {
        b.gaps.push(gap);
    }
    if commits <= 1 || pattern == "single_init_dump" {
        return Some(b.done(
            1,
            "a single commit or one dump of the code: no history to read",
        ));
    }
    if pattern == "few_large" || top2 >= BULK_TOP2 || largest >= BULK_LARGEST || !spread {
        b.short_of = f.short_of_bulk();
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
        b.short_of = f.short_of_bulk();
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
        b.short_of = f.short_of_thin();
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
    b.short_of = f.short_of_atomic(ev);
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

/// A share in percent, rounded (`42%`).
fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The texts of the conditions that do not hold (the next level's conditions the figures fail,
/// each with its figure).
fn failing(conditions: Vec<(bool, String)>) -> Vec<String> {
    conditions
        .into_iter()
        .filter(|(holds, _)| !holds)
        .map(|(_, text)| text)
        .collect()
}

/// The figures the history table reads, taken once from the measure (a share not measured
/// counts as 0).
#[derive(Clone, Copy)]
struct HistoryFigures<'a> {
    commits: usize,
    pattern: &'a str,
    /// The share of the code the largest commit adds.
    largest: f64,
    /// The share of the code the two largest deliveries add.
    top2: f64,
    /// The share of the commits less than two minutes after the previous one.
    bursts: f64,
    /// The share of the code that arrived in staged sessions.
    staged: f64,
    /// The largest staged session: its share of the code, its commits, its minutes.
    session: f64,
    session_commits: usize,
    session_minutes: i64,
    /// The commits are spread over time (the `timing` fact is met).
    spread: bool,
}

impl<'a> HistoryFigures<'a> {
    fn read(m: &'a HistoryMeasure, ev: &[Evidence]) -> Self {
        let (session, session_commits, session_minutes) = m.largest_session.unwrap_or((0.0, 0, 0));
        HistoryFigures {
            commits: m.commits,
            pattern: m.pattern.as_str(),
            largest: m.largest_commit_share,
            top2: m.top2_share,
            bursts: m.burst_share.unwrap_or(0.0),
            staged: m.staged_share.unwrap_or(0.0),
            session,
            session_commits,
            session_minutes,
            spread: met(ev, "timing"),
        }
    }

    /// The figures near a threshold, in words, as a gap (two careful graders can differ there).
    fn borderline(self) -> Option<String> {
        let HistoryFigures {
            top2,
            session,
            staged,
            bursts,
            ..
        } = self;
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
        (!borderline.is_empty()).then(|| {
            format!(
                "borderline, two careful graders can differ by a point here: {}",
                borderline.join("; ")
            )
        })
    }

    /// What a bulk or staged upload lacks for the next level.
    fn short_of_bulk(self) -> Vec<String> {
        let HistoryFigures {
            top2,
            largest,
            pattern,
            spread,
            session,
            ..
        } = self;
        failing(vec![
            (
                top2 < BULK_TOP2,
                format!(
                    "the two largest deliveries under 75% of the code (here {})",
                    pct(top2)
                ),
            ),
            (
                largest < BULK_LARGEST,
                format!("the largest commit under 55% (here {})", pct(largest)),
            ),
            (
                pattern != "few_large",
                format!("no few-large-commits pattern (here {pattern})"),
            ),
            (
                spread,
                "commits spread over time, not within 30 minutes".to_string(),
            ),
            (
                session < BULK_SESSION,
                format!(
                    "no sitting holding half of the code (here {})",
                    pct(session)
                ),
            ),
        ])
    }

    /// What a thin or staged history lacks for the next level.
    fn short_of_thin(self) -> Vec<String> {
        let HistoryFigures {
            commits,
            top2,
            staged,
            bursts,
            ..
        } = self;
        failing(vec![
            (
                commits > 10,
                format!("more than 10 commits (here {commits})"),
            ),
            (
                top2 < THIN_TOP2,
                format!(
                    "the two largest deliveries under 60% of the code (here {})",
                    pct(top2)
                ),
            ),
            (
                staged < STAGED,
                format!(
                    "staged sessions under a third of the code (here {})",
                    pct(staged)
                ),
            ),
            (
                bursts < BURSTS,
                format!(
                    "under 40% of the commits within two minutes of the previous one (here {})",
                    pct(bursts)
                ),
            ),
        ])
    }

    /// What an iterative history lacks for the top level (atomic, step by step).
    fn short_of_atomic(self, ev: &[Evidence]) -> Vec<String> {
        let HistoryFigures {
            commits,
            largest,
            bursts,
            session,
            ..
        } = self;
        failing(vec![
            (
                commits >= 20,
                format!("at least 20 commits (here {commits})"),
            ),
            (
                largest <= 0.15,
                format!(
                    "no commit adding more than 15% of the code (here {})",
                    pct(largest)
                ),
            ),
            (
                bursts < 0.1,
                format!(
                    "under 10% of the commits within two minutes of the previous one (here {})",
                    pct(bursts)
                ),
            ),
            (
                session == 0.0,
                format!("no staged session (the largest holds {})", pct(session)),
            ),
            (met(ev, "progression"), "a visible progression".to_string()),
            (
                met(ev, "messages"),
                "descriptive commit messages".to_string(),
            ),
        ])
    }
}

/// The graph facts, each read once (an exhaustive match: a fact added to [`GraphFact`] must
/// be read here).
#[derive(Default)]
struct Graph {
    defined: bool,
    detectives: (bool, bool),
    judges: (bool, bool),
    /// Conditional routes after (the detectives, the judges), and anywhere.
    routes: (bool, bool, bool),
}

fn graph_facts(facts: &[&GraphFact]) -> Graph {
    let mut g = Graph::default();
    for f in facts {
        match f {
            GraphFact::Definition { .. } => g.defined = f.holds(),
            GraphFact::FanOut { layer, .. } => match layer {
                Layer::Detectives => g.detectives.0 = f.holds(),
                Layer::Judges => g.judges.0 = f.holds(),
            },
            GraphFact::FanIn { layer, .. } => match layer {
                Layer::Detectives => g.detectives.1 = f.holds(),
                Layer::Judges => g.judges.1 = f.holds(),
            },
            GraphFact::Routes {
                detectives, judges, ..
            } => g.routes = (!detectives.is_empty(), !judges.is_empty(), f.any_route()),
        }
    }
    g
}

/// Graph orchestration: no graph or a linear one is 1; one of the two fan-out/fan-in layers
/// 2; both 3; and a conditional route that changes the path by the state 4; a route after
/// each layer (missing evidence after the detectives, a failed judge after the judges) 5. A
/// run-time defect caps it (2 when the graph cannot work as wired, 3 otherwise).
fn graph(ev: &[Evidence], mut b: Builder) -> Option<Level> {
    let facts = typed(ev, |f| match f {
        Fact::Graph(x) => Some(x),
        _ => None,
    });
    if facts.is_empty() {
        return None;
    }
    let g = graph_facts(&facts);
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
    if !g.defined {
        return Some(b.done(1, "no StateGraph is built"));
    }
    if !met(ev, "not_linear") && !g.detectives.0 {
        return Some(b.done(
            1,
            "a purely linear flow: no parallel branch (Orchestration Fraud)",
        ));
    }
    let layers = [g.detectives.0 && g.detectives.1, g.judges.0 && g.judges.1];
    if !(layers[0] && layers[1]) {
        return Some(b.done(
            2,
            "only one of the two fan-out/fan-in layers (detectives, judges) exists",
        ));
    }
    Some(match g.routes {
        (true, true, _) => b.done(
            5,
            "both fan-out/fan-in layers, each followed by a conditional route that changes the path by the state (the routes are named in the evidence)",
        ),
        (_, _, true) => b.done(
            4,
            "both fan-out/fan-in layers and a conditional route, but not after each layer",
        ),
        _ => b.done(
            3,
            "both fan-out/fan-in layers, but no conditional edge that changes the path by the state (missing evidence, node failure)",
        ),
    })
}

/// The state facts, each read once (an exhaustive match: a fact added to [`StateFact`] must
/// be read here).
#[derive(Default)]
struct State {
    defined: bool,
    /// (Evidence, JudicialOpinion) models.
    models: (bool, bool),
    /// The state holds (evidence, opinions).
    holds: (bool, bool),
    /// (operator.add, operator.ior) reducers.
    reducers: (bool, bool),
}

fn state_facts(facts: &[&StateFact]) -> State {
    let mut s = State::default();
    for f in facts {
        match f {
            StateFact::Definition { .. } => s.defined = f.holds(),
            StateFact::Model { model, .. } => match model {
                Model::Evidence => s.models.0 = f.holds(),
                Model::Opinion => s.models.1 = f.holds(),
            },
            StateFact::Holds { model, .. } => match model {
                Model::Evidence => s.holds.0 = f.holds(),
                Model::Opinion => s.holds.1 = f.holds(),
            },
            StateFact::Reducer { merge, .. } => match merge {
                Merge::Add => s.reducers.0 = f.holds(),
                Merge::Ior => s.reducers.1 = f.holds(),
            },
        }
    }
    s
}

fn state(ev: &[Evidence], mut b: Builder) -> Option<Level> {
    let facts = typed(ev, |f| match f {
        Fact::State(x) => Some(x),
        _ => None,
    });
    if facts.is_empty() {
        return None;
    }
    let s = state_facts(&facts);
    let ds = defects(
        ev,
        &[
            "undeclared_state_key",
            "unknown_state_key",
            "whole_state_return",
        ],
    );
    if !s.defined {
        return Some(b.done(1, "no TypedDict or BaseModel state: plain dicts"));
    }
    let models = s.models.0 && s.models.1;
    let reducers = s.reducers.0 && s.reducers.1;
    let any_reducer = s.reducers.0 || s.reducers.1;
    if !models && !any_reducer {
        return Some(b.done(
            2,
            "a typed state, but no Pydantic models and no reducers: parallel writes overwrite each other",
        ));
    }
    // a return that drops several keys is a defect per key
    let count: usize = ds
        .iter()
        .map(|d| match d.measure {
            Some(Measure::KeysDropped { keys }) => keys,
            _ => 1,
        })
        .sum();
    if count >= 2 {
        b.cap(
            3,
            format!(
                "{} run-time state defects ({}): {}",
                count,
                state_defect_kinds(&ds),
                ds.iter()
                    .take(3)
                    .map(|d| label(d))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        );
    }
    if !models || !reducers || !s.holds.0 || !s.holds.1 {
        return Some(b.done(
            3,
            "typed state and models, but the reducers or the evidence/opinion collections are incomplete",
        ));
    }
    Some(b.done(
        4,
        "typed state with Evidence and JudicialOpinion models, and reducers that keep parallel writes (lists concatenated, dicts merged)",
    ))
}

/// The typed facts of a family among a criterion's evidence.
fn typed<'a, T>(ev: &'a [Evidence], pick: impl Fn(&'a Fact) -> Option<&'a T>) -> Vec<&'a T> {
    ev.iter()
        .filter_map(|e| e.fact.as_ref())
        .filter_map(pick)
        .collect()
}

/// The safe-tool facts, each read once (an exhaustive match: a fact added to
/// [`SafetyFact`] must be read here).
#[derive(Default)]
struct Safety<'a> {
    clones: usize,
    sandboxed: bool,
    handled: bool,
    kinds: bool,
    /// Every clone passes a timeout.
    timed: bool,
    url: bool,
    cleanup: bool,
    early: Option<&'a SafetyFact>,
    single_commit: Option<&'a SafetyFact>,
    shell: bool,
    findings: Vec<&'a SafetyFact>,
}

fn safety_facts<'a>(facts: &[&'a SafetyFact]) -> Safety<'a> {
    let mut s = Safety::default();
    for f in facts {
        match f {
            SafetyFact::Sandbox { clones, .. } => {
                s.clones = clones.len();
                s.sandboxed = f.holds();
            }
            SafetyFact::CloneErrors { .. } => s.handled = f.holds(),
            SafetyFact::ErrorKinds { .. } => s.kinds = f.holds(),
            SafetyFact::Timeouts { calls, .. } => {
                s.timed = calls.iter().any(|c| c.clone)
                    && calls
                        .iter()
                        .filter(|c| c.clone)
                        .all(|c| c.timeout.is_some());
            }
            SafetyFact::UrlCheck { .. } => s.url = f.holds(),
            SafetyFact::Cleanup { .. } => s.cleanup = f.holds(),
            SafetyFact::Lifetime { early, .. } => {
                if !early.is_empty() {
                    s.early = Some(f);
                }
            }
            SafetyFact::FullHistory { shallow, .. } => {
                if shallow
                    .iter()
                    .any(|x| x.depth.trim() == "1" && x.by_default())
                {
                    s.single_commit = Some(f);
                }
            }
            SafetyFact::NoShell { shells, .. } => s.shell = !shells.is_empty(),
            SafetyFact::Finding { .. } => s.findings.push(f),
        }
    }
    s
}

/// Safe tools: a sandboxed clone whose failure is handled is the base (3); the safeguards a
/// careful grader looks for (a timeout on the clone, the URL checked before it, its failures
/// told apart, the directory removed) lift it: one to 4, three to 5 (a missing error
/// handling takes one away); a clone of a single commit (the git forensics see nothing) or a
/// clone deleted before it is read costs a level, never below 2; a confirmed raw shell call
/// is 1.
fn safety(ev: &[Evidence], mut b: Builder) -> Option<Level> {
    let facts = typed(ev, |f| match f {
        Fact::Safety(x) => Some(x),
        _ => None,
    });
    if facts.is_empty() {
        return None;
    }
    let s = safety_facts(&facts);
    if let Some(f) = s.findings.first() {
        b.cap(
            1,
            format!(
                "Security Negligence: a confirmed raw shell call: {}",
                f.statement()
            ),
        );
        return Some(b.done(1, "a raw shell call with built input"));
    }
    if s.shell {
        return Some(b.done(2, "a command runs through a shell"));
    }
    if s.clones == 0 {
        return Some(b.done(2, "no clone code: nothing sandboxes the audited repository"));
    }
    if !s.sandboxed {
        return Some(b.done(2, "a repository is cloned outside any temporary directory"));
    }
    let safeguards = [
        (s.timed, "a timeout on the clone"),
        (s.url, "the URL checked before it"),
        (s.kinds, "its failures told apart"),
        (s.cleanup, "the directory removed"),
    ];
    let held: Vec<&str> = safeguards
        .iter()
        .filter(|(h, _)| *h)
        .map(|(_, w)| *w)
        .collect();
    let lacking: Vec<&str> = safeguards
        .iter()
        .filter(|(h, _)| !*h)
        .map(|(_, w)| *w)
        .collect();
    let score = held.len() as i32 - i32::from(!s.handled);
    let mut level: i32 = 3 + i32::from(score >= 1) + i32::from(score >= 3);
    let mut defects: Vec<String> = Vec::new();
    if let Some(f) = s.single_commit {
        level -= 1;
        defects.push(f.statement());
    }
    if let Some(f) = s.early {
        level -= 1;
        defects.push(f.statement());
    }
    let level = level.clamp(2, 5) as u8;
    let mut row = format!(
        "a sandboxed clone{}; {} of the four safeguards ({})",
        if s.handled {
            " whose failure is handled"
        } else {
            " whose failure is not handled"
        },
        held.len(),
        if held.is_empty() {
            format!(
                "none: {}",
                crate::model::fact::join_and(
                    &lacking.iter().map(|w| w.to_string()).collect::<Vec<_>>()
                )
            )
        } else {
            crate::model::fact::join_and(&held.iter().map(|w| w.to_string()).collect::<Vec<_>>())
        }
    );
    if !defects.is_empty() {
        row.push_str(&format!(
            "; one level less for {}",
            crate::model::fact::join_and(
                &defects
                    .iter()
                    .map(|d| crate::tally::short(d, 90))
                    .collect::<Vec<_>>()
            )
        ));
    }
    Some(b.done(level, row))
}

/// The structured-output facts, each read once.
#[derive(Default)]
struct Structured {
    /// Calls bound to a schema the API enforces (not JSON mode).
    bound: bool,
    json_mode: bool,
    parsers: bool,
    json_text: bool,
    opinion: bool,
    batched: bool,
    fields: bool,
    retried: bool,
    /// No binding always holds: what holds each is also given the unbound model.
    skipped: bool,
}

fn structured_facts(facts: &[&StructuredFact]) -> Structured {
    let mut s = Structured::default();
    for f in facts {
        match f {
            StructuredFact::Binding {
                bound,
                parsers,
                json_text,
                ..
            } => {
                s.bound = bound.iter().any(|b| !b.json_mode && b.skipped.is_none());
                s.json_mode = bound.iter().any(|b| b.json_mode);
                s.skipped = !s.bound && bound.iter().any(|b| b.skipped.is_some());
                s.parsers = !parsers.is_empty();
                s.json_text = !json_text.is_empty();
            }
            StructuredFact::OpinionSchema { batched, .. } => {
                s.opinion = f.holds();
                s.batched = *batched;
            }
            StructuredFact::SchemaFields { .. } => s.fields = f.holds(),
            StructuredFact::Retry { .. } => s.retried = f.holds(),
        }
    }
    s
}

/// Structured output, from the rubric's Tech Lead: bound schema plus retry is 5, a schema
/// without retry 3, free text 1; a reply parsed by a schema's parser is 3, JSON cut out of
/// free text 2; bound but not to an opinion 2; bound with retry but the opinion's fields
/// incomplete 4.
fn structured(ev: &[Evidence], b: Builder) -> Option<Level> {
    let facts = typed(ev, |f| match f {
        Fact::Structured(x) => Some(x),
        _ => None,
    });
    if facts.is_empty() {
        return None;
    }
    let s = structured_facts(&facts);
    Some(if !(s.bound || s.json_mode || s.skipped) {
        if s.parsers {
            b.done(
                3,
                "no binding: the reply text is parsed into the opinion model by a schema's parser",
            )
        } else if s.json_text {
            b.done(
                2,
                "no binding: JSON is cut out of the reply text with a regex",
            )
        } else {
            b.done(1, "judges' output is free text with no schema at all")
        }
    } else if !s.opinion {
        b.done(
            2,
            "structured output is used, but no bound schema is an opinion with a score",
        )
    } else if !s.retried {
        b.done(
            3,
            "bound to the opinion schema, but a judge call is not made again when its reply is invalid",
        )
    } else if !s.fields || !s.bound {
        b.done(
            4,
            if s.bound {
                "bound to the opinion schema with retry; the opinion's score/argument/cited_evidence fields are not all there"
            } else if s.skipped {
                "bound to the opinion schema with retry, but on another path the judges' calls go to the unbound model (the API does not enforce the schema there)"
            } else {
                "an opinion schema in JSON mode (not enforced by the API), with retry"
            },
        )
    } else {
        b.done(
            5,
            "the judges' calls are bound to the full opinion schema and made again on failure",
        )
    })
}

/// The judicial-nuance facts, each read once.
#[derive(Default)]
struct Nuance<'a> {
    prompts: bool,
    found: usize,
    /// No collusion (or nothing to compare).
    distinct: bool,
    language: usize,
    /// A persona reduced to a short text set into one shared prompt.
    sentence: Option<&'a NuanceFact>,
    /// Every persona has a full brief.
    full: bool,
    batched: Option<&'a NuanceFact>,
    parallel: bool,
    structured: bool,
}

fn nuance_facts<'a>(facts: &[&'a NuanceFact]) -> Nuance<'a> {
    let mut n = Nuance {
        distinct: true,
        ..Nuance::default()
    };
    for f in facts {
        match f {
            NuanceFact::Prompts { found, .. } => {
                n.prompts = f.holds();
                n.found = found.len();
            }
            NuanceFact::Collusion { .. } => n.distinct = f.holds(),
            NuanceFact::Language { .. } => n.language += usize::from(f.holds()),
            NuanceFact::OwnPrompts {
                prompts, sentence, ..
            } => {
                n.full = f.holds();
                // a persona of a sentence or two, set into a shared template or not
                if prompts.iter().any(|p| p.chars < *sentence) {
                    n.sentence = Some(f);
                }
            }
            NuanceFact::PerCriterion { .. } => {
                if !f.holds() {
                    n.batched = Some(f);
                }
            }
            NuanceFact::Parallel { .. } => n.parallel = f.holds(),
            NuanceFact::Structured { .. } => n.structured = f.holds(),
        }
    }
    n
}

/// Judicial nuance: three distinct prompts, each speaking its role, are 4; Persona Collusion
/// is 2; a persona reduced to a sentence in a shared prompt, or one call answering every
/// criterion, costs a level each; full briefs for every persona, asked per criterion, in
/// parallel and structured are 5.
fn nuance(ev: &[Evidence], mut b: Builder) -> Option<Level> {
    let facts = typed(ev, |f| match f {
        Fact::Nuance(x) => Some(x),
        _ => None,
    });
    if facts.is_empty() {
        return None;
    }
    let n = nuance_facts(&facts);
    if !n.prompts {
        return Some(if n.found == 0 {
            b.done(1, "no persona prompts: a single grader")
        } else {
            b.done(2, "persona prompts are missing for some judges")
        });
    }
    let mismatch = defects(ev, &["persona_mismatch"]);
    if let Some(d) = mismatch.first() {
        b.cap(
            3,
            format!("a persona is wired or named inconsistently: {}", label(d)),
        );
    }
    // a judge that misses the rubric's per-persona instructions still speaks its own brief:
    // a defect, not a collapse of the personas
    if let Some(d) = defects(ev, &["rubric_logic_lookup"]).first() {
        b.cap(
            4,
            format!("a judge gets no rubric instructions: {}", label(d)),
        );
    }
    if !n.distinct {
        return Some(b.done(
            2,
            "the three prompts share most of their text (Persona Collusion)",
        ));
    }
    if !n.structured {
        b.cap(
            3,
            "the judges' replies are neither bound to a schema nor parsed by a schema's parser (loosely typed: at most 3)",
        );
    }
    // full briefs start from 5, short prompts from 4; each weakness costs a level
    let mut level: i32 = if n.full { 5 } else { 4 };
    let mut why: Vec<String> = Vec::new();
    if let Some(f) = n.sentence {
        level -= 1;
        why.push(crate::tally::short(&f.statement(), 100));
    }
    if let Some(f) = n.batched {
        level -= 1;
        why.push(crate::tally::short(&f.statement(), 100));
    }
    if n.language < 3 {
        level -= 1;
        why.push("not every persona speaks its role (adversarial, forgiving, pragmatic)".into());
    }
    if level == 5 {
        if n.parallel && n.structured {
            return Some(b.done(
                5,
                "three distinct, full persona briefs, asked per criterion, in parallel, with structured replies",
            ));
        }
        level = 4;
        why.push(if n.parallel {
            "the replies are not validated opinions".to_string()
        } else {
            "the graph does not run the judges in parallel".to_string()
        });
    }
    let level = level.clamp(2, 4) as u8;
    Some(b.done(
        level,
        if why.is_empty() {
            "three distinct, conflicting personas, each speaking its role".to_string()
        } else if n.full {
            format!(
                "three distinct, full persona briefs, but {}",
                why.join("; ")
            )
        } else {
            format!("distinct personas, but {}", why.join("; "))
        },
    ))
}

/// The kinds of the state defects found, in words, each once.
fn state_defect_kinds(ds: &[&Evidence]) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for d in ds {
        let words = if d.id.contains(".defect.undeclared_state_key") {
            "keys dropped by the schema"
        } else if d.id.contains(".defect.unknown_state_key") {
            "keys read that no node writes"
        } else if d.id.contains(".defect.whole_state_return")
            && matches!(d.measure, Some(Measure::FieldsResent))
        {
            "reducer fields re-sent"
        } else if d.id.contains(".defect.whole_state_return") {
            "the whole state returned"
        } else if d.id.contains(".defect.concurrent_write") {
            "two writes to a key without a reducer in one step"
        } else {
            continue;
        };
        if !kinds.contains(&words) {
            kinds.push(words);
        }
    }
    kinds.join(", ")
}

/// The Chief Justice facts, each read once.
#[derive(Default)]
struct Justice {
    code: bool,
    llm: bool,
    rules: Vec<JusticeRule>,
    /// Rules not found, where a branch goes part of the way.
    partial: Vec<(JusticeRule, Site)>,
    markdown: bool,
    sections: bool,
}

fn justice_facts(facts: &[&JusticeFact]) -> Justice {
    let mut j = Justice::default();
    for f in facts {
        match f {
            JusticeFact::Code { .. } => j.code = f.holds(),
            JusticeFact::Deterministic { llm, .. } => j.llm = !llm.is_empty(),
            JusticeFact::Rule { rule, partial, .. } => {
                if f.holds() {
                    j.rules.push(*rule);
                } else if let Some((at, _)) = partial {
                    j.partial.push((*rule, at.clone()));
                }
            }
            JusticeFact::MarkdownFile { .. } => j.markdown = f.holds(),
            JusticeFact::Sections { .. } => j.sections = f.holds(),
        }
    }
    j
}

/// The Chief Justice: the rules the code implements (of the five: security override, fact
/// supremacy, functionality weight, dissent, variance re-evaluation): one or none is 2, two or
/// three 3, four 4, all five 5; an LLM in the verdict, or no Markdown report with its
/// sections, caps at 3.
fn justice(ev: &[Evidence], mut b: Builder) -> Option<Level> {
    let facts = typed(ev, |f| match f {
        Fact::Justice(x) => Some(x),
        _ => None,
    });
    if facts.is_empty() {
        return None;
    }
    let j = justice_facts(&facts);
    if !j.code {
        return Some(b.done(1, "no Chief Justice code"));
    }
    if j.llm {
        b.cap(3, "an LLM takes part in the Chief Justice's verdict");
    }
    if !(j.markdown && j.sections) {
        b.cap(
            3,
            "the verdict is not written as a Markdown report with its sections",
        );
    }
    let n = j.rules.len();
    let level = match n {
        0 | 1 => 2,
        2 | 3 => 3,
        4 => 4,
        _ => 5,
    };
    Some(b.done(
        level,
        format!(
                "{n} of the 5 rules {} implemented in code{}{}",
                if n == 1 { "is" } else { "are" },
                if n == 0 {
                    String::new()
                } else {
                    format!(
                        " ({})",
                        j.rules
                            .iter()
                            .map(|r| r.id())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
                j.partial
                    .iter()
                    .map(|(r, at)| format!(
                        "; {} only in part: {} (at {at})",
                        r.id(),
                        r.partial_meaning()
                    ))
                    .collect::<String>()
            ),
    ))
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
    // the top level asks for explanations of this implementation: an explaining passage that
    // names parts of the repository's code (`pdf.<criterion>.tie.<concept>`)
    let tie_of = |concept: &Evidence| {
        let id = concept.id.split('#').next().unwrap_or(&concept.id);
        let tie = id.replacen(".concept.", ".tie.", 1);
        ev.iter().find(|e| e.id == tie)
    };
    let explained_ones = concepts
        .iter()
        .filter(|e| e.found && e.kind == EvidenceKind::Fact);
    let tied = explained_ones
        .clone()
        .filter(|c| tie_of(c).is_some_and(|t| t.found && t.kind == EvidenceKind::Fact))
        .count();
    let unchecked = explained_ones
        .filter(|c| tie_of(c).is_none_or(|t| t.kind == EvidenceKind::Missing))
        .count();
    let level = if explained == 0 {
        1
    } else if explained == 1 {
        2
    } else if explained < decided || tied < explained {
        3
    } else {
        4
    };
    b.done(
        level,
        format!(
            "{explained} of {} concepts explained (others missing or keyword dropping){}{}{}",
            concepts.len(),
            if explained == 0 {
                String::new()
            } else {
                format!(
                    ", {tied} of them in the names of the repository's own code (its files, classes, functions, graph nodes, state fields)"
                )
            },
            if unchecked > 0 {
                format!(
                    "; {} not checked against the code",
                    crate::words::count(unchecked, "explanation", "explanations")
                )
            } else {
                String::new()
            },
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
    // a path proposed as future work or said to be absent is mentioned, not cited as built
    let verified = paths
        .iter()
        .filter(|e| {
            e.kind == EvidenceKind::Fact
                && e.found
                && !matches!(e.measure, Some(Measure::Path { claimed: false }))
        })
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
    // the claims the checker read (a claim it did not check is in neither count)
    let what = format!(
        "{} {}, {hallucinated} hallucinated; of the feature claims checked against the code, {supported} supported, {contradicted} contradicted",
        crate::words::count(verified, "cited path", "cited paths"),
        crate::words::form(verified, "exists", "exist"),
    );
    let level = if share > 0.5 {
        1
    } else if share > 0.2 || contradicted >= 3 {
        2
    } else if hallucinated > 0 || contradicted > 0 || verified < 3 {
        3
    } else if verified >= 8 && supported >= 3 {
        5
    } else {
        4
    };
    let mut b = b;
    let next: Vec<(bool, String)> = match level {
        3 => vec![
            (
                hallucinated == 0,
                format!("no cited path missing from the repository (here {hallucinated})"),
            ),
            (
                contradicted == 0,
                format!("no claim the code contradicts (here {contradicted})"),
            ),
            (
                verified >= 3,
                format!("at least 3 cited paths that exist (here {verified})"),
            ),
        ],
        4 => vec![
            (
                verified >= 8,
                format!("at least 8 cited paths that exist (here {verified})"),
            ),
            (
                supported >= 3,
                format!("at least 3 feature claims the code supports (here {supported})"),
            ),
        ],
        _ => vec![],
    };
    b.short_of = next
        .into_iter()
        .filter(|(holds, _)| !holds)
        .map(|(_, t)| t)
        .collect();
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
        // the next level's conditions the figures fail, each with its figure
        assert_eq!(
            l.short_of,
            [
                "no commit adding more than 15% of the code (here 16%)",
                "no staged session (the largest holds 32%)"
            ]
        );
        // iterative but thin
        let l = assess(&history(9, 26, 62, &slow[..8])).unwrap();
        assert_eq!(l.level, 3);
        assert_eq!(
            l.short_of,
            [
                "more than 10 commits (here 9)",
                "the two largest deliveries under 60% of the code (here 62%)"
            ]
        );
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
        .map(|n| typed_graph(n, !unmet.contains(n)))
        .collect();
        v.extend(extra.iter().cloned());
        v
    }

    /// A graph fact as the detective files it: typed where the family has a type.
    fn typed_graph(n: &str, holds: bool) -> Evidence {
        match n {
            "not_linear" | "well_formed" => f(&format!("repo.graph.{n}"), holds),
            _ => Evidence::stated(
                "repo.graph",
                Detective::RepoInvestigator,
                "goal",
                Fact::Graph(crate::model::fact::graph::example(n, holds)),
                "https://example.org/r",
                Confidence::CERTAIN,
            ),
        }
    }

    #[test]
    fn graph_table_caps_on_run_time_defects() {
        assert_eq!(level(&graph(&[], &[])), 5);
        assert_eq!(level(&graph(&[], &["error_edges"])), 3);
        // a conditional route after one layer only: 4
        let mut one = graph(&[], &["error_edges"]);
        for e in &mut one {
            if let Some(Fact::Graph(GraphFact::Routes { detectives, .. })) = &mut e.fact {
                detectives.push(crate::model::fact::Route {
                    at: crate::model::fact::Site::new("src/graph.py", 3),
                    source: "agg".into(),
                    router: "r".into(),
                    outcomes: vec![vec!["x".into()], vec!["y".into()]],
                });
            }
        }
        let l = assess(&one).unwrap();
        assert_eq!(l.level, 4, "{}", l.row);
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
        .map(|n| {
            Evidence::stated(
                "repo.state",
                Detective::RepoInvestigator,
                "goal",
                Fact::State(crate::model::fact::state::example(n, !unmet.contains(n))),
                "https://example.org/r",
                Confidence::CERTAIN,
            )
        })
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
        // one return that drops two keys: two state defects
        assert_eq!(
            level(&state(
                &[],
                &[defect("undeclared_state_key").with_measure(Measure::KeysDropped { keys: 2 })]
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

    use crate::model::fact::{
        self as fact, Bound, Call, External, Overlap, Prompt, Retried, Retry, Shallow, Site,
    };

    fn typed(prefix: &str, x: Fact) -> Evidence {
        Evidence::stated(
            prefix,
            Detective::RepoInvestigator,
            "goal",
            x,
            "https://example.org/repo",
            Confidence::CERTAIN,
        )
    }

    fn site(line: usize) -> Site {
        Site::new("src/tools/repo.py", line)
    }

    /// A sandboxed clone whose failure is handled, with the given safeguards.
    fn safe(
        timeout: bool,
        url: bool,
        kinds: bool,
        cleanup: bool,
        depth: Option<&str>,
    ) -> Vec<Evidence> {
        let clone = fact::Clone {
            call: Call::new(site(10), "subprocess.run"),
            sandbox: Some(site(8)),
            list_args: true,
            via: None,
            handled: Some(site(9)),
        };
        let s = |x: SafetyFact| typed("repo.security", Fact::Safety(x));
        vec![
            s(SafetyFact::Sandbox {
                clones: vec![clone.clone()],
                files: 3,
            }),
            s(SafetyFact::CloneErrors {
                clones: vec![clone],
            }),
            s(SafetyFact::ErrorKinds {
                clones: vec![site(10)],
                tests: if kinds {
                    vec![site(12), site(14)]
                } else {
                    vec![]
                },
            }),
            s(SafetyFact::Timeouts {
                calls: vec![External {
                    call: Call::new(site(10), "subprocess.run"),
                    timeout: timeout.then(|| "120".to_string()),
                    clone: true,
                }],
                files: 3,
            }),
            s(SafetyFact::UrlCheck {
                clones: vec![site(10)],
                checks: if url { vec![site(5)] } else { vec![] },
            }),
            s(SafetyFact::Cleanup {
                clones: vec![site(10)],
                removals: if cleanup { vec![site(20)] } else { vec![] },
                early: false,
            }),
            s(SafetyFact::Lifetime {
                clones: vec![site(10)],
                early: vec![],
            }),
            s(SafetyFact::FullHistory {
                clones: vec![site(10)],
                shallow: depth
                    .map(|d| Shallow {
                        at: site(10),
                        depth: d.into(),
                        only: None,
                    })
                    .into_iter()
                    .collect(),
            }),
            s(SafetyFact::NoShell {
                files: 3,
                subprocess: 1,
                shells: vec![],
                counted: 0,
                unscanned: vec![],
            }),
        ]
    }

    #[test]
    fn safety_table_reads_the_safeguards() {
        assert_eq!(level(&safe(false, false, false, false, None)), 3);
        assert_eq!(level(&safe(true, false, false, false, None)), 4);
        assert_eq!(level(&safe(true, true, false, true, None)), 5);
        assert_eq!(level(&safe(true, true, true, true, None)), 5);
        // a single-commit clone costs a level, never below 2
        assert_eq!(level(&safe(true, false, false, true, Some("1"))), 3);
        assert_eq!(level(&safe(false, false, false, false, Some("1"))), 2);
        // a timeout and a URL check where the code has them: no "what lifts it further"
        let l = assess(&safe(true, true, false, true, None)).unwrap();
        assert!(!l.row.contains("lift"), "{}", l.row);
        assert!(l.row.contains("a timeout on the clone"), "{}", l.row);
        // a confirmed finding is 1
        let mut ev = safe(true, true, true, true, None);
        ev.push(typed(
            "repo.security",
            Fact::Safety(SafetyFact::Finding {
                n: 0,
                at: site(3),
                kind: "os_system".into(),
                detail: "os.system runs its argument through the shell".into(),
            }),
        ));
        assert_eq!(ev.last().unwrap().kind, EvidenceKind::SecurityFinding);
        assert_eq!(level(&ev), 1);
        // no clone at all
        let none = vec![typed(
            "repo.security",
            Fact::Safety(SafetyFact::Sandbox {
                clones: vec![],
                files: 2,
            }),
        )];
        assert_eq!(level(&none), 2);
    }

    fn structured(bound: bool, opinion: bool, retry: Option<Retry>, fields: bool) -> Vec<Evidence> {
        let b = Bound {
            call: Call::new(site(30), "with_structured_output"),
            method: "with_structured_output".into(),
            schema: "JudicialOpinion".into(),
            json_mode: false,
            skipped: None,
        };
        let s = |x: StructuredFact| typed("repo.structured_output", Fact::Structured(x));
        vec![
            s(StructuredFact::Binding {
                bound: if bound { vec![b.clone()] } else { vec![] },
                parsers: vec![],
                json_text: vec![],
                files: 4,
            }),
            s(StructuredFact::OpinionSchema {
                bound: if bound { vec![b] } else { vec![] },
                opinion: opinion.then(|| ("JudicialOpinion".to_string(), site(3))),
                batched: false,
            }),
            s(StructuredFact::SchemaFields {
                model: Some(("JudicialOpinion".into(), site(3))),
                have: vec!["score".into()],
                missing: if fields {
                    vec![]
                } else {
                    vec!["argument".into()]
                },
            }),
            s(StructuredFact::Retry {
                calls: vec![Retried {
                    call: site(30),
                    retry,
                    transport: Some((site(2), "3".into())),
                    handled: Some(site(29)),
                    judges: vec![],
                }],
            }),
        ]
    }

    #[test]
    fn structured_table_tells_retry_from_error_handling() {
        let looped = Some(Retry::Loop { at: site(28) });
        assert_eq!(level(&structured(true, true, looped.clone(), true)), 5);
        assert_eq!(level(&structured(true, true, looped.clone(), false)), 4);
        // a try/except and the client's max_retries are no retry
        let ev = structured(true, true, None, true);
        assert_eq!(level(&ev), 3);
        let said = &ev[3].rationale;
        assert!(
            said.contains("max_retries=3 at src/tools/repo.py:2"),
            "{said}"
        );
        assert!(said.contains("is not made again when it fails"), "{said}");
        assert!(
            said.contains("try/except at src/tools/repo.py:29"),
            "{said}"
        );
        assert_eq!(level(&structured(true, false, looped.clone(), true)), 2);
        assert_eq!(level(&structured(false, false, None, false)), 1);
        // what holds the bound model is given the unbound one on another path: 4, and the
        // binding is the gap, with its fix where the unbound model is given
        let mut ev = structured(true, true, looped, true);
        if let Some(Fact::Structured(StructuredFact::Binding { bound, .. })) = &ev[0].fact {
            let mut bound = bound.clone();
            bound[0].skipped = Some(site(12));
            ev[0] = typed(
                "repo.structured_output",
                Fact::Structured(StructuredFact::Binding {
                    bound,
                    parsers: vec![],
                    json_text: vec![],
                    files: 4,
                }),
            );
        }
        assert!(!ev[0].found);
        assert!(
            ev[0]
                .rationale
                .contains("given the unbound model instead at src/tools/repo.py:12"),
            "{}",
            ev[0].rationale
        );
        assert_eq!(level(&ev), 4);
    }

    fn nuance(chars: usize, share: f64, batched: bool) -> Vec<Evidence> {
        let s = |x: NuanceFact| typed("repo.personas", Fact::Nuance(x));
        let prompts: Vec<Prompt> = ["Prosecutor", "Defense", "TechLead"]
            .iter()
            .enumerate()
            .map(|(i, p)| Prompt {
                persona: p.to_string(),
                at: site(40 + i),
                chars,
                sentences: 3,
                levels: 0,
            })
            .collect();
        let mut v = vec![
            s(NuanceFact::Collusion {
                pairs: vec![Overlap {
                    a: "Prosecutor".into(),
                    b: "Defense".into(),
                    share,
                }],
                threshold: 0.5,
                at: site(40),
            }),
            s(NuanceFact::Prompts {
                found: prompts.clone(),
                missing: vec![],
            }),
            s(NuanceFact::OwnPrompts {
                prompts,
                template: (chars < 400).then(|| (site(90), 2000)),
                sentence: 400,
                full: 1000,
            }),
            s(NuanceFact::PerCriterion {
                batched: batched.then(|| site(60)),
                overall: None,
                calls: vec![site(60)],
            }),
            s(NuanceFact::Parallel {
                fan_out: Some((
                    site(70),
                    "aggregator".into(),
                    vec!["prosecutor".into(), "defense".into()],
                )),
                graph: Some(site(65)),
            }),
            s(NuanceFact::Structured {
                bound: Some(site(60)),
                parsed: None,
            }),
        ];
        for (p, w) in [
            ("Prosecutor", "adversarial"),
            ("Defense", "forgiving"),
            ("TechLead", "pragmatic"),
        ] {
            v.push(s(NuanceFact::Language {
                persona: p.into(),
                expected: w.into(),
                matched: vec!["gap".into()],
                at: Some(site(40)),
            }));
        }
        v
    }

    #[test]
    fn nuance_table_reads_briefs_batching_and_collusion() {
        assert_eq!(level(&nuance(2000, 0.1, false)), 5);
        assert_eq!(level(&nuance(900, 0.1, false)), 4);
        // full briefs answered in one call for every criterion: one level from 5
        assert_eq!(level(&nuance(2000, 0.1, true)), 4);
        assert_eq!(level(&nuance(900, 0.1, true)), 3);
        // a persona of a sentence or two costs a level, in a shared template or not
        assert_eq!(level(&nuance(200, 0.1, false)), 3);
        assert_eq!(level(&nuance(200, 0.1, true)), 2);
        let mut lone = nuance(200, 0.1, false);
        for e in &mut lone {
            if let Some(Fact::Nuance(NuanceFact::OwnPrompts { template, .. })) = e.fact.as_mut() {
                *template = None;
            }
        }
        assert_eq!(level(&lone), 3);
        assert_eq!(level(&nuance(2000, 0.8, false)), 2);
        let mut free = nuance(2000, 0.1, false);
        free.retain(|e| !e.id.ends_with(".structured_output"));
        free.push(typed(
            "repo.personas",
            Fact::Nuance(NuanceFact::Structured {
                bound: None,
                parsed: None,
            }),
        ));
        assert_eq!(level(&free), 3, "free-text judges are at most 3");
        // replies parsed into the opinion model by a schema-derived parser are typed
        let mut parsed = nuance(2000, 0.1, false);
        parsed.retain(|e| !e.id.ends_with(".structured_output"));
        parsed.push(typed(
            "repo.personas",
            Fact::Nuance(NuanceFact::Structured {
                bound: None,
                parsed: Some(site(61)),
            }),
        ));
        assert_eq!(level(&parsed), 5, "parsed replies are not free text");
        let mut mismatch = nuance(2000, 0.1, false);
        mismatch.push(f("repo.graph.defect.persona_mismatch.0", false));
        assert_eq!(level(&mismatch), 3);
        // a judge missing its rubric instructions still has its own brief: at most 4
        let mut lookup = nuance(2000, 0.1, false);
        lookup.push(f("repo.graph.defect.rubric_logic_lookup.0", false));
        assert_eq!(level(&lookup), 4);
    }

    #[test]
    fn justice_table_counts_the_rules_the_branches_implement() {
        let j = |rules: &[JusticeRule], md: bool, llm: bool| -> Vec<Evidence> {
            let s = |x: JusticeFact| typed("repo.justice", Fact::Justice(x));
            let mut v = vec![
                s(JusticeFact::Code {
                    at: Some(site(1)),
                    modules: vec!["src/justice.py".into()],
                    files: 4,
                }),
                s(JusticeFact::Deterministic {
                    rules: rules.len(),
                    branches: 9,
                    functions: 2,
                    llm: if llm { vec![site(50)] } else { vec![] },
                    prose_llm: vec![],
                    code: Some(site(1)),
                }),
                s(JusticeFact::MarkdownFile {
                    write: md.then(|| site(80)),
                    code: Some(site(1)),
                }),
                s(JusticeFact::Sections {
                    have: vec![("Executive Summary".into(), site(81))],
                    missing: vec![],
                    code: Some(site(1)),
                }),
            ];
            for r in JusticeRule::ALL {
                v.push(s(JusticeFact::Rule {
                    rule: r,
                    branch: rules.contains(&r).then(|| site(10)),
                    how: "`if x`: `score = min(score, 3)`".into(),
                    searched: 9,
                    functions: 2,
                    partial: None,
                    code: Some(site(1)),
                }));
            }
            v
        };
        let all = JusticeRule::ALL;
        assert_eq!(level(&j(&all, true, false)), 5);
        assert_eq!(level(&j(&all[..4], true, false)), 4);
        assert_eq!(level(&j(&all[..3], true, false)), 3);
        assert_eq!(level(&j(&all[..1], true, false)), 2);
        assert_eq!(
            level(&j(&all, false, false)),
            3,
            "no Markdown report caps at 3"
        );
        assert_eq!(
            level(&j(&all, true, true)),
            3,
            "an LLM in the verdict caps at 3"
        );
        // the rationale is never read
        let mut prose = j(&all[..1], true, false);
        for e in &mut prose {
            e.rationale =
                "security_override fact_supremacy functionality_weight implemented".into();
        }
        assert_eq!(level(&prose), 2);
        // a model that only writes the summary's text, while the rules compute the scores,
        // takes no part in the verdict
        let mut text_only = j(&all, true, false);
        for e in &mut text_only {
            if let Some(Fact::Justice(JusticeFact::Deterministic { prose_llm, .. })) =
                e.fact.as_mut()
            {
                prose_llm.push(site(60));
            }
        }
        assert_eq!(
            level(&text_only),
            5,
            "an LLM writing only text does not cap"
        );
    }

    #[test]
    fn untyped_facts_of_a_typed_family_are_judged_by_their_tally() {
        // evidence stored by an earlier version: the same ids, no typed fact
        let old: Vec<Evidence> = ["sandboxed_clone", "error_handling", "no_raw_shell"]
            .iter()
            .map(|n| f(&format!("repo.security.{n}"), true))
            .collect();
        assert_eq!(family(&old), Some(Family::Safety));
        assert_eq!(assess(&old), None);
    }

    #[test]
    fn report_tables() {
        // n of `of` concepts explained, each in the names of the repository's code
        let c = |n: usize, of: usize| -> Vec<Evidence> {
            let mut v: Vec<Evidence> = (0..of)
                .map(|i| f(&format!("pdf.d.concept.c{i}"), i < n))
                .collect();
            v.extend((0..n).map(|i| f(&format!("pdf.d.tie.c{i}"), true)));
            v
        };
        assert_eq!(level(&c(0, 4)), 1);
        assert_eq!(level(&c(1, 4)), 2);
        assert_eq!(level(&c(3, 4)), 3);
        assert_eq!(level(&c(4, 4)), 4);
        // every concept explained, one of them only in generic terms: not the top level
        let mut generic = c(4, 4);
        generic.retain(|e| e.id != "pdf.d.tie.c2");
        generic.push(f("pdf.d.tie.c2", false));
        let l = assess(&generic).unwrap();
        assert_eq!(l.level, 3, "{}", l.row);
        assert!(
            l.row
                .contains("3 of them in the names of the repository's own code"),
            "{}",
            l.row
        );
        // an explanation not checked against the code (repository unread) is no tie
        let mut unread = c(4, 4);
        unread.retain(|e| e.id != "pdf.d.tie.c0");
        unread.push(f("pdf.d.tie.c0", false).with_kind(EvidenceKind::Missing));
        let l = assess(&unread).unwrap();
        assert_eq!(l.level, 3, "{}", l.row);
        assert!(l.row.contains("1 explanation not checked"), "{}", l.row);
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
        // paths proposed as future work are no cited paths
        let mut proposed = x(2, 0, 0);
        proposed.extend((0..7).map(|i| {
            f(&format!("pdf.d.path.p{i}"), true).with_measure(Measure::Path { claimed: false })
        }));
        assert_eq!(level(&proposed), 3, "two cited paths, seven proposed");
    }

    #[test]
    fn an_absent_artifact_is_level_1_in_every_table() {
        let ev = vec![f("pdf.absent.theoretical_depth", false)];
        let l = assess(&ev).unwrap();
        assert_eq!(l.level, 1);
        assert!(l.row.contains("does not provide"), "{}", l.row);
    }
}
