//! Facts → `Evidence`, one per requirement of each dimension's success pattern.
//!
//! Routing: the seven official v3 `github_repo` ids map to one fact family each
//! (`crate::family`, the table the level tables are routed by too). Any other id (v2 rubrics,
//! custom rubrics) is routed by words in its name and forensic instruction, possibly to several
//! families; a dimension no family matches gets one explicit `found = false` fact. Each family's
//! facts carry ids of that family (`repo.history.*`, `repo.security.*`, ...).

use super::RepoFacts;
use super::python::graph::{Branching, GraphFacts, KeyCause};
use super::python::persona_prompts::PERSONAS;
use super::python::roles::{self, Role};
use crate::family::Family;
use crate::model::fact::{
    self, Bound, Branch, Call, DeadRoute, Fact, GraphFact, ItemWrite, JusticeFact, JusticeRule,
    Layer, Merge, Model, NuanceFact, Overlap, Prompt, Retried, Route, SafetyFact, Site, StateClass,
    StateFact, StructuredFact,
};
use crate::model::{Confidence, Detective, Evidence, HistoryMeasure, Measure};
use crate::rubric::Dimension;
use std::collections::BTreeMap;

/// The words of a dimension (name and forensic instruction) that call for each family of the
/// repository's facts (`Family::REPO`).
const TRIGGERS: [(Family, &[&str]); 7] = [
    (Family::History, &["git log", "commit", "history"]),
    (
        Family::Graph,
        &[
            "stategraph",
            "fan-out",
            "fan-in",
            "fan out",
            "parallel",
            "add_edge",
            "conditional edge",
            "orchestration",
        ],
    ),
    (
        Family::State,
        &[
            "pydantic",
            "typeddict",
            "reducer",
            "basemodel",
            "agentstate",
            "state model",
            "state.py",
        ],
    ),
    (
        Family::Safety,
        &[
            "os.system",
            "sandbox",
            "clone",
            "subprocess",
            "security",
            "tempfile",
        ],
    ),
    (
        Family::Structured,
        &["structured", "bind_tools", "json output"],
    ),
    (Family::Nuance, &["persona", "prompt", "prosecutor"]),
    (
        Family::Justice,
        &["chief justice", "chiefjustice", "synthesis", "justice.py"],
    ),
];

/// The families of facts a dimension is served by.
pub fn families(d: &Dimension) -> Vec<Family> {
    let fixed = match d.id.as_str() {
        "git_forensic_analysis" => Some(Family::History),
        "state_management_rigor" => Some(Family::State),
        "graph_orchestration" => Some(Family::Graph),
        "safe_tool_engineering" => Some(Family::Safety),
        "structured_output_enforcement" => Some(Family::Structured),
        "judicial_nuance" => Some(Family::Nuance),
        "chief_justice_synthesis" => Some(Family::Justice),
        _ => None,
    };
    if let Some(t) = fixed {
        return vec![t];
    }
    let text = format!("{} {}", d.name, d.forensic_instruction).to_lowercase();
    TRIGGERS
        .iter()
        .filter(|(_, words)| words.iter().any(|w| text.contains(w)))
        .map(|(t, _)| *t)
        .collect()
}

/// The facts of one family (the DocAnalyst's families have none here).
fn family_facts(facts: &RepoFacts, family: Family) -> Vec<Evidence> {
    match family {
        Family::History => history(facts),
        Family::Graph => graph(facts),
        Family::State => state(facts),
        Family::Safety => safety(facts),
        Family::Structured => structured(facts),
        Family::Nuance => nuance(facts),
        Family::Justice => justice(facts),
        Family::Concepts | Family::CrossReference | Family::Diagram => vec![],
    }
}

fn conf(x: f64) -> Confidence {
    Confidence::new(x).unwrap_or(Confidence::CERTAIN)
}

fn fact(
    id: &str,
    goal: &str,
    found: bool,
    location: impl Into<String>,
    rationale: impl Into<String>,
    c: f64,
) -> Evidence {
    Evidence::fact(
        id,
        Detective::RepoInvestigator,
        goal,
        found,
        location,
        rationale,
        conf(c),
    )
}

/// Turns facts into evidence for the given `github_repo` dimensions, keyed by dimension id.
pub fn evidence(facts: &RepoFacts, dimensions: &[Dimension]) -> BTreeMap<String, Vec<Evidence>> {
    let mut out = BTreeMap::new();
    for d in dimensions {
        let mut list = Vec::new();
        let ts = families(d);
        for t in &ts {
            list.extend(family_facts(facts, *t));
        }
        if ts.is_empty() {
            list.push(fact(
                "repo.unrouted",
                &d.name,
                false,
                facts.url.clone(),
                format!(
                    "the RepoInvestigator has no fact family for dimension {:?}: its name and forensic instruction call for none of {}",
                    d.id,
                    Family::REPO.map(Family::name).join(", ")
                ),
                1.0,
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        list.retain(|e: &Evidence| seen.insert(e.id.clone()));
        out.insert(d.id.clone(), list);
    }
    out
}

fn short(h: &str) -> &str {
    h.get(..7).unwrap_or(h)
}

/// What breaks the set-up → tools → graph order of a history: a phase no commit reaches, or
/// the first commit of a later phase before the first of an earlier one.
fn progression_gap(h: &super::history::HistoryFacts) -> Option<String> {
    let phases = [
        ("set-up", h.first_setup),
        ("tools", h.first_tools),
        ("graph", h.first_graph),
    ];
    let hash = |i: usize| {
        h.commits
            .get(i)
            .map(|c| short(&c.hash).to_string())
            .unwrap_or_default()
    };
    if let Some((name, _)) = phases.iter().find(|(_, i)| i.is_none()) {
        return Some(format!("no commit was read as adding the {name}"));
    }
    for (a, (na, ia)) in phases.iter().enumerate() {
        for (nb, ib) in &phases[a + 1..] {
            if let (Some(ia), Some(ib)) = (ia, ib)
                && ib < ia
            {
                return Some(format!(
                    "the first {nb} commit {} came before the first {na} commit {}",
                    hash(*ib),
                    hash(*ia)
                ));
            }
        }
    }
    (h.first_setup == h.first_graph).then(|| {
        format!(
            "the set-up and the graph arrived in one commit {}",
            h.first_graph.map(hash).unwrap_or_default()
        )
    })
}

/// The goal of the history facts (`repo.history.*`).
const HISTORY_GOAL: &str = "Git history shows iterative progression";

fn history(f: &RepoFacts) -> Vec<Evidence> {
    let h = &f.history;
    let loc = if f.commit.is_empty() {
        f.url.clone()
    } else {
        f.commit.clone()
    };
    let goal = HISTORY_GOAL;
    let mut v = vec![
        commit_count(h, loc.clone()),
        fact(
            "repo.history.pattern",
            goal,
            h.pattern == "iterative",
            loc.clone(),
            pattern_rationale(h),
            0.9,
        ),
    ];
    v.push(progression(h, loc.clone()));
    v.push(fact(
        "repo.history.timing",
        goal,
        h.commit_count >= 2 && !h.clustered,
        loc.clone(),
        format!(
            "first to last commit: {} minutes{}",
            h.span_seconds / 60,
            if h.clustered {
                " — clustered within 30 minutes (bulk upload)"
            } else {
                ""
            }
        ),
        1.0,
    ));
    v.push(messages(h, loc));
    v
}

/// How many commits the history has (`repo.history.commit_count`), with the listing of the
/// first 80 and the history's measure.
fn commit_count(h: &super::history::HistoryFacts, loc: String) -> Evidence {
    let listing: Vec<String> = h
        .commits
        .iter()
        .take(80)
        .map(|c| format!("{} {} {}", short(&c.hash), c.date, c.message))
        .collect();
    fact(
        "repo.history.commit_count",
        HISTORY_GOAL,
        h.commit_count > 3,
        loc,
        format!(
            "{} ({}) reachable from the audited commit (full history, not shallow); more than 3 are expected",
            crate::words::count(h.commit_count, "commit", "commits"),
            crate::words::count(h.merge_count, "merge", "merges")
        ),
        1.0,
    )
    .with_content(listing.join("\n"))
    .with_measure(Measure::History(HistoryMeasure {
        commits: h.commit_count,
        merges: h.merge_count,
        pattern: h.pattern.clone(),
        largest_commit_share: h.largest_commit_share,
        top2_share: h.top2_share,
        burst_share: h.burst_share,
        staged_share: Some(h.staged_share),
        largest_session: h
            .staged
            .first()
            .map(|s| (s.share, s.commits.len(), s.seconds / 60)),
    }))
}

/// Whether the set-up, the tools and the graph arrived in that order
/// (`repo.history.progression`), with the fix when they did not.
fn progression(h: &super::history::HistoryFacts, loc: String) -> Evidence {
    let phase = |i: Option<usize>| {
        i.and_then(|i| h.commits.get(i))
            .map(|c| format!("{} {:?}", short(&c.hash), c.message))
            .unwrap_or_else(|| "none".into())
    };
    let progression = fact(
        "repo.history.progression",
        HISTORY_GOAL,
        h.progression,
        loc,
        format!(
            "first setup commit: {}; first tools commit: {}; first graph commit: {} (read from what each commit adds: project files such as requirements.txt, Python lines that import or call forensic tools (subprocess, tempfile, git, ast, a PDF library, @tool), LangGraph wiring; never from its message)",
            phase(h.first_setup),
            phase(h.first_tools),
            phase(h.first_graph)
        ),
        0.8,
    );
    match progression_gap(h) {
        Some(gap) if !h.progression => progression.with_fix(format!(
            "{gap}: in the next project, commit in steps a reader can follow, the set-up, then the tools, then the graph"
        )),
        _ => progression,
    }
}

/// Whether most commit messages are descriptive (`repo.history.messages`).
fn messages(h: &super::history::HistoryFacts, loc: String) -> Evidence {
    let meaningful = h
        .commits
        .iter()
        .filter(|c| meaningful_message(&c.message))
        .count();
    let share = if h.commit_count == 0 {
        0.0
    } else {
        meaningful as f64 / h.commit_count as f64
    };
    fact(
        "repo.history.messages",
        HISTORY_GOAL,
        h.commit_count > 0 && share >= 0.7,
        loc,
        format!(
            "{meaningful} of {} commit messages are descriptive (≥ 10 characters and not just 'update', 'wip', 'fix', 'init')",
            h.commit_count
        ),
        0.8,
    )
}

/// Why the history got its pattern, with the rule's thresholds.
fn pattern_rationale(h: &crate::repo::history::HistoryFacts) -> String {
    use crate::repo::history::{BULK_GAP_SECONDS, BULK_LINES, FEW_LARGE_TOP2};
    let bulk: Vec<String> = h
        .bulk_deliveries
        .iter()
        .map(|b| {
            format!(
                "{} commits of ≥{BULK_LINES} lines within {} s ({}…, {} lines)",
                b.commits.len(),
                b.seconds,
                b.commits.first().map(|c| short(c)).unwrap_or(""),
                b.lines
            )
        })
        .collect();
    format!(
        "pattern {}: {} {} lines added; the largest commit adds {:.0}%, the two largest deliveries {:.0}%{} (single_init_dump: one commit or one delivery ≥90%; few_large: ≤3 commits or the two largest deliveries ≥{:.0}%, where bulk commits of ≥{BULK_LINES} lines less than {BULK_GAP_SECONDS} s apart are one delivery)",
        h.pattern,
        h.lines_added,
        h.lines_counted,
        h.largest_commit_share * 100.0,
        h.top2_share * 100.0,
        if bulk.is_empty() {
            String::new()
        } else {
            format!("; bulk deliveries: {}", bulk.join("; "))
        },
        FEW_LARGE_TOP2 * 100.0
    )
}

fn meaningful_message(m: &str) -> bool {
    let t = m.trim().to_lowercase();
    t.len() >= 10
        && ![
            "update",
            "updates",
            "wip",
            "fix",
            "fixes",
            "init",
            "initial commit",
            "first commit",
            "commit",
            "changes",
            "add files via upload",
        ]
        .contains(&t.as_str())
}

/// The branches of `b` whose update writes `role`'s state (see `python::roles`): what the
/// node does, never its name.
fn count(g: &GraphFacts, b: &Branching, role: Role) -> usize {
    b.branches
        .iter()
        .filter(|n| g.roles.get(*n) == Some(&role))
        .count()
}

/// A fan-out that leaves out some of the layer's own nodes: they run before or after the
/// others, not in parallel with them (a failed requirement, only said when it happens).
fn partial(
    g: &GraphFacts,
    b: Option<&Branching>,
    role: Role,
    layer: &str,
    id: &str,
    goal: &str,
) -> Option<Evidence> {
    let b = b?;
    let has = |n: &str| g.roles.get(n) == Some(&role);
    let inside: Vec<&str> = b
        .branches
        .iter()
        .filter(|n| has(n))
        .map(String::as_str)
        .collect();
    let outside: Vec<&str> = g
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .filter(|n| has(n) && !inside.contains(n))
        .filter(|n| {
            !g.defects
                .iter()
                .any(|d| d.kind == "unreachable_node" && d.nodes.iter().any(|x| x == n))
        })
        // run before or after the others: on a path with them (a node the graph takes
        // instead of the fan-out, a skip route, is no member left out)
        .filter(|n| inside.iter().any(|i| reaches(g, n, i) || reaches(g, i, n)))
        .collect();
    if inside.len() < 2 || outside.is_empty() {
        return None;
    }
    Some(fact(
        id,
        goal,
        false,
        b.location.clone(),
        format!(
            "partial {layer} fan-out: only {} run in parallel (from `{}`); {} {} in another superstep, not on the same input at the same time",
            inside.join(", "),
            b.from,
            outside.join(", "),
            crate::words::form(outside.len(), "runs", "run")
        ),
        0.8,
    )
    .with_fix(format!(
        "fan out to {} and {} from one node (one `add_edge` from it to each) and remove the edges that run {} before or after the others, so the whole layer runs in one superstep on the same input",
        outside.join(", "),
        inside.join(", "),
        if outside.len() == 1 { "it" } else { "them" }
    )))
}

/// Node `to` is reached from node `from` along the graph's edges, routes and joins.
fn reaches(g: &GraphFacts, from: &str, to: &str) -> bool {
    let mut seen: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    let mut todo: Vec<&str> = g.successors(from).collect();
    while let Some(x) = todo.pop() {
        if x == to {
            return true;
        }
        if seen.insert(x) {
            todo.extend(g.successors(x));
        }
    }
    false
}

/// (detectives branching, judges branching) of a graph.
fn patterns(g: &GraphFacts) -> (Option<&Branching>, Option<&Branching>) {
    let is_judges = |b: &&Branching| count(g, b, Role::Judge) >= 2;
    let det = g
        .branchings
        .iter()
        .find(|b| !is_judges(b) && count(g, b, Role::Detective) >= 2)
        .or_else(|| g.branchings.iter().find(|b| !is_judges(b)));
    let jud = g.branchings.iter().find(is_judges).or_else(|| {
        g.branchings
            .iter()
            .find(|b| Some(*b) != det && det.is_some_and(|d| d.join.is_some()))
    });
    (det, jud)
}

/// Run-time defect kinds (see `python::runtime`) by the dimension they harm.
const GRAPH_DEFECTS: &[&str] = &[
    "import_error",
    "duplicate_execution",
    "unreachable_node",
    "unbounded_loop",
];
const STATE_DEFECTS: &[&str] = &[
    "undeclared_state_key",
    "unknown_state_key",
    "whole_state_return",
    "concurrent_write",
];
const NUANCE_DEFECTS: &[&str] = &["persona_mismatch", "rubric_logic_lookup"];

/// The main graph's run-time defects of `kinds`, each a failed requirement
/// `repo.graph.defect.<kind>.<n>`.
fn defects(f: &RepoFacts, kinds: &[&str], goal: &str) -> Vec<Evidence> {
    let Some(g) = f.python.graphs.first() else {
        return Vec::new();
    };
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    g.defects
        .iter()
        .filter(|d| kinds.contains(&d.kind.as_str()))
        .map(|d| {
            let n = counts.entry(d.kind.as_str()).or_default();
            *n += 1;
            // the kind as printed: a reducer field re-sent is no whole state returned
            let resent = d.kind == "whole_state_return" && d.fields_only;
            let mut e = fact(
                &format!("repo.graph.defect.{}.{n}", d.kind),
                goal,
                false,
                d.location.clone(),
                format!(
                    "run-time defect ({}): {}",
                    if resent {
                        "reducer field re-sent".to_string()
                    } else {
                        d.kind.replace('_', " ")
                    },
                    d.detail
                ),
                0.9,
            );
            if resent {
                e.measure = Some(crate::model::Measure::FieldsResent);
                return e.with_fix(format!(
                    "return only the keys the node changes from {} (a pass-through returns `{{}}`): a reducer field it returns with the value it read is added to itself",
                    on_nodes("the node", &d.nodes)
                ));
            }
            if let Some(KeyCause::Undeclared { keys }) = &d.cause
                && keys.len() > 1
            {
                e.measure = Some(crate::model::Measure::KeysDropped { keys: keys.len() });
            }
            match defect_fix(&d.kind, &d.nodes, d.fields_only, d.cause.as_ref()) {
                Some(fix) => e.with_fix(fix),
                None => e,
            }
        })
        .collect()
}

/// `what` followed by the nodes named, in backquotes.
fn on_nodes(what: &str, nodes: &[String]) -> String {
    if nodes.is_empty() {
        what.to_string()
    } else {
        format!(
            "{what} ({})",
            nodes
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// `` `a` `` or `` `a` and `b` ``.
fn quoted_list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|k| format!("`{k}`")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// What to change for a run-time defect of `kind` on `nodes` (the defect's location says where).
/// `fields_only`: a `whole_state_return` that re-sends a reducer field's current value, not the
/// whole state. `cause`: why a state key is undeclared or never set, when the defect says.
fn defect_fix(
    kind: &str,
    nodes: &[String],
    fields_only: bool,
    cause: Option<&KeyCause>,
) -> Option<String> {
    cause_fix(kind, nodes, cause).or_else(|| kind_fix(kind, nodes, fields_only))
}

/// The fix for a state-key defect whose cause the defect says (the keys undeclared; the entry,
/// key or input never written, dropped or written later); `None` for any other.
fn cause_fix(kind: &str, nodes: &[String], cause: Option<&KeyCause>) -> Option<String> {
    let on = |what: &str| on_nodes(what, nodes);
    match (kind, cause) {
        ("undeclared_state_key", Some(KeyCause::Undeclared { keys })) if !keys.is_empty() => {
            let one = keys.len() == 1;
            Some(format!(
                "declare {} {} in the state schema (with a reducer if parallel nodes write {}), or return {} under {} the schema declares and the readers read, from {}",
                if one { "the key" } else { "the keys" },
                quoted_list(keys),
                if one { "it" } else { "them" },
                if one { "the value" } else { "the values" },
                if one { "a key" } else { "keys" },
                on("the node")
            ))
        }
        ("unknown_state_key", Some(KeyCause::MissingEntry { field, entry })) => Some(format!(
            "have a node that runs before {} put a `{entry}` entry into `{field}` (e.g. return `{{\"{field}\": {{\"{entry}\": ...}}}}`), or read an entry some node puts there; `{field}` itself is declared",
            on("the reader")
        )),
        ("unknown_state_key", Some(KeyCause::NeverWritten { key })) => Some(format!(
            "have a node that runs before {} write `{key}` (return it in its update), or give it in the graph's input; `{key}` is declared already",
            on("the reader")
        )),
        ("unknown_state_key", Some(KeyCause::InputDropped { key, at })) => Some(format!(
            "declare `{key}` in the state schema: the graph's input gives it ({at}), but LangGraph drops input keys the schema does not declare, so {} never sees it",
            on("the reader")
        )),
        ("unknown_state_key", Some(KeyCause::WrittenDropped { key, writers })) => Some(format!(
            "declare `{key}` in the state schema: {} {} it, but LangGraph drops what the schema does not declare, so {} never sees it",
            quoted_list(writers),
            if writers.len() == 1 {
                "writes"
            } else {
                "write"
            },
            on("the reader")
        )),
        (
            "unknown_state_key",
            Some(KeyCause::WrittenLater {
                key,
                writers,
                declared,
            }),
        ) => {
            let order = format!(
                "make {} run before {} on every path that reaches it (an edge from the writer to the reader)",
                quoted_list(writers),
                on("the reader")
            );
            Some(if *declared {
                format!("{order}, or give `{key}` a value in the graph's input")
            } else {
                format!(
                    "declare `{key}` in the state schema (what {} {} under it is dropped otherwise), and {order}",
                    quoted_list(writers),
                    if writers.len() == 1 {
                        "writes"
                    } else {
                        "write"
                    },
                )
            })
        }
        _ => None,
    }
}

/// The fix for a run-time defect of `kind` whatever its cause (`None`: a kind with no fix).
fn kind_fix(kind: &str, nodes: &[String], fields_only: bool) -> Option<String> {
    let on = |what: &str| on_nodes(what, nodes);
    Some(match kind {
        "import_error" => "make the import resolve: import the name from the module that defines it, or define it there, so the graph's module can be imported".into(),
        "duplicate_execution" => format!(
            "remove the extra edge or router outcome that triggers {} a second time in one invocation (a node reached by a join and by a plain edge runs twice)",
            on("the node")
        ),
        "unreachable_node" => format!(
            "give {} a route that can be taken (an edge, or a router outcome whose test can hold: a node must write the key it tests), or remove it from the graph",
            on("the node")
        ),
        "unbounded_loop" => format!(
            "make the loop able to end: the node inside it must change the value its router tests (e.g. increment the counter it compares) or the router must stop after a bound; loop through {}",
            on("the nodes")
        ),
        "undeclared_state_key" => format!(
            "declare the key in the state schema (with a reducer if parallel nodes write it), or return the value under a key the schema declares and the readers read, from {}",
            on("the node")
        ),
        "unknown_state_key" => format!(
            "declare the key {} read in the state schema and have a node write it before it is read",
            on("the node")
        ),
        "whole_state_return" if fields_only => format!(
            "send only the new items of the reducer field from {} (`{{\"<field>\": [new_item]}}`), never its current value: the reducer adds what is sent to what is there, so the list doubles",
            on("the node")
        ),
        "whole_state_return" => format!(
            "return only the keys the node changes from {} (a pass-through returns `{{}}`), never the whole state: the reducer fields re-sent are added again",
            on("the node")
        ),
        "persona_mismatch" => format!(
            "name each judge one way everywhere (the names the opinion schema accepts, the code gives and the rules compare) in {}",
            on("the judge")
        ),
        "rubric_logic_lookup" => format!(
            "look the rubric's per-persona logic up with the rubric's own keys in {}",
            on("the judge")
        ),
        _ => return None,
    })
}

/// The clean result of the run-time simulation, when it could decide everything.
fn runs_as_wired(g: &GraphFacts) -> Option<Evidence> {
    let decided = g.runtime_decided;
    let clean = !g
        .defects
        .iter()
        .any(|d| GRAPH_DEFECTS.contains(&d.kind.as_str()));
    (decided && clean).then(|| {
        fact(
            "repo.graph.runtime",
            "StateGraph wired for parallel fan-out/fan-in with error edges",
            true,
            g.location(),
            "simulated in supersteps over every router outcome: each node runs at most once per invocation, every node is reachable from START and every loop can exit",
            0.8,
        )
    })
}

/// `path:line` as a [`Site`] (a location without a line is line 0).
fn site(loc: &str) -> Site {
    match loc.rsplit_once(':') {
        Some((p, l)) if l.parse::<usize>().is_ok() => Site::new(p, l.parse().unwrap_or(0)),
        _ => Site::new(loc, 0),
    }
}

/// The layer a router leaves: the judges' when its source is a judge branch or the judges'
/// join; the detectives' when it is a detective branch, the detectives' join or the node the
/// judges fan out from; else none.
fn router_layer(source: &str, det: Option<&Branching>, jud: Option<&Branching>) -> Option<Layer> {
    let on = |b: Option<&Branching>, also: Option<&str>| {
        b.is_some_and(|b| {
            b.branches.iter().any(|x| x == source)
                || b.join.as_deref() == Some(source)
                || also == Some(source)
        })
    };
    if on(jud, None) {
        Some(Layer::Judges)
    } else if on(det, jud.map(|j| j.from.as_str())) {
        Some(Layer::Detectives)
    } else {
        None
    }
}

/// A router's distinct outcomes (each a sorted set of targets), less the single-target ones
/// the run-time analysis proves are `never` chosen; when none was read and the router does not
/// fan out, each path-map target is one outcome.
fn live_outcomes(
    r: &crate::repo::python::graph::Router,
    never: &[&crate::repo::python::graph::DeadRoute],
) -> Vec<Vec<String>> {
    let mut outcomes: Vec<Vec<String>> = r
        .outcomes
        .iter()
        .filter(|o| !(o.len() == 1 && never.iter().any(|d| d.target == o[0])))
        .map(|o| {
            let mut o = o.clone();
            o.sort();
            o.dedup();
            o
        })
        .collect();
    outcomes.sort();
    outcomes.dedup();
    if outcomes.is_empty() && !r.parallel {
        // the router's returns were not read: each path-map target is one outcome
        outcomes = r.targets.iter().map(|t| vec![t.clone()]).collect();
        outcomes.sort();
        outcomes.dedup();
    }
    outcomes
}

/// The conditional routes of a graph: routers whose outcomes differ, by the layer they leave.
fn routes(g: &GraphFacts, det: Option<&Branching>, jud: Option<&Branching>) -> GraphFact {
    let graph = site(&g.location());
    let mut detectives = Vec::new();
    let mut judges = Vec::new();
    let mut elsewhere = Vec::new();
    let mut fixed = Vec::new();
    let mut dead = Vec::new();
    for r in &g.routers {
        let at = Site::new(r.path.clone(), r.line);
        let layer = router_layer(&r.source, det, jud);
        // an outcome the run-time analysis proves is never chosen changes no path
        let never: Vec<&crate::repo::python::graph::DeadRoute> = g
            .dead_routes
            .iter()
            .filter(|d| d.source == r.source)
            .collect();
        let outcomes = live_outcomes(r, &never);
        let dropped: Vec<&&crate::repo::python::graph::DeadRoute> = never
            .iter()
            .filter(|d| r.outcomes.iter().any(|o| o.len() == 1 && o[0] == d.target))
            .collect();
        dead.extend(dropped.iter().map(|d| DeadRoute {
            at: at.clone(),
            source: d.source.clone(),
            target: d.target.clone(),
            layer,
            why: d.why.clone(),
        }));
        if outcomes.len() < 2 {
            if dropped.is_empty() {
                fixed.push(at);
            }
            continue;
        }
        let route = Route {
            at,
            source: r.source.clone(),
            router: r.router.clone(),
            outcomes,
        };
        match layer {
            Some(Layer::Judges) => judges.push(route),
            Some(Layer::Detectives) => detectives.push(route),
            None => elsewhere.push(route),
        }
    }
    GraphFact::Routes {
        detectives,
        judges,
        elsewhere,
        fixed,
        dead,
        // where the fix goes: the first plain edge out of the join, else the join itself
        detectives_join: join_site(g, det, true),
        judges_join: join_site(g, jud, false),
        graph,
    }
}

/// The goal of the graph facts (`repo.graph.*`).
const GRAPH_GOAL: &str = "StateGraph wired for parallel fan-out/fan-in with error edges";

/// A typed graph fact (`repo.graph.*`).
fn graph_fact(f: &RepoFacts, x: GraphFact, c: f64) -> Evidence {
    stated("repo.graph", GRAPH_GOAL, Fact::Graph(x), f, c)
}

fn graph(f: &RepoFacts) -> Vec<Evidence> {
    let goal = GRAPH_GOAL;
    let typed = |x: GraphFact, c: f64| graph_fact(f, x, c);
    let Some(g) = f.python.graphs.first() else {
        return vec![typed(
            GraphFact::Definition {
                at: None,
                state_type: None,
                builder: String::new(),
                nodes: 0,
                edges: 0,
                conditional_edges: 0,
                conditional: 0,
                graphs: 0,
                files: f.python.files_parsed,
            },
            1.0,
        )];
    };
    let loc = g.location();
    let graph_site = site(&loc);
    let mut v = vec![
        typed(
            GraphFact::Definition {
                at: Some(graph_site.clone()),
                state_type: g.state_type.clone(),
                builder: g.builder.clone(),
                nodes: g.nodes.len(),
                edges: g.edges.len(),
                conditional_edges: g.edges.iter().filter(|e| e.conditional).count(),
                conditional: g.routers.len(),
                graphs: f.python.graphs.len(),
                files: f.python.files_parsed,
            },
            1.0,
        )
        .with_content(g.snippet.clone()),
    ];
    let (det, jud) = patterns(g);
    let fan_out = |layer: Layer, b: Option<&Branching>| {
        typed(
            GraphFact::FanOut {
                layer,
                branch: branch(b),
                graph: graph_site.clone(),
            },
            0.9,
        )
    };
    let fan_in = |layer: Layer, b: Option<&Branching>| {
        typed(
            GraphFact::FanIn {
                layer,
                branch: branch(b),
                join: join_site(g, b, false),
                graph: graph_site.clone(),
            },
            0.9,
        )
    };
    v.push(fan_out(Layer::Detectives, det));
    v.push(fan_in(Layer::Detectives, det));
    v.push(fan_out(Layer::Judges, jud));
    v.extend(partial(
        g,
        det,
        Role::Detective,
        "detectives",
        "repo.graph.detectives_partial",
        goal,
    ));
    v.extend(partial(
        g,
        jud,
        Role::Judge,
        "judges",
        "repo.graph.judges_partial",
        goal,
    ));
    v.push(fan_in(Layer::Judges, jud));
    v.push(typed(routes(g, det, jud), 0.85));
    v.push(not_linear(g));
    v.push(well_formed(g));
    v.extend(defects(f, GRAPH_DEFECTS, goal));
    if let Some(clean) = runs_as_wired(g) {
        v.push(clean);
    }
    v
}

/// A branching as a typed [`Branch`].
fn branch(b: Option<&Branching>) -> Option<Branch> {
    b.map(|b| Branch {
        at: site(&b.location),
        from: b.from.clone(),
        branches: b.branches.clone(),
    })
}

/// Where a branching joins, and the join node: with `first_edge_out`, the first plain edge out
/// of the join (where a fix goes); else, and when there is none, the fan-in into the join,
/// else the branching itself.
fn join_site(
    g: &GraphFacts,
    b: Option<&Branching>,
    first_edge_out: bool,
) -> Option<(Site, String)> {
    b.and_then(|b| {
        b.join.as_ref().map(|j| {
            let leaving = g
                .edges
                .iter()
                .filter(|e| first_edge_out && &e.from == j && !e.conditional)
                .min_by_key(|e| (e.path.clone(), e.line))
                .map(|e| format!("{}:{}", e.path, e.line));
            let at = leaving.unwrap_or_else(|| {
                g.fan_in
                    .iter()
                    .find(|x| &x.to == j)
                    .map(|x| x.location.clone())
                    .unwrap_or_else(|| b.location.clone())
            });
            (site(&at), j.clone())
        })
    })
}

/// Whether the graph fans out at all (`repo.graph.not_linear`), with its fan-out and fan-in
/// points, or why parallelism cannot be established.
fn not_linear(g: &GraphFacts) -> Evidence {
    let names = |v: &[String]| v.join(", ");
    fact(
        "repo.graph.not_linear",
        GRAPH_GOAL,
        !g.fan_out.is_empty(),
        g.location(),
        if g.fan_out.is_empty() && !g.unresolved.is_empty() {
            format!(
                "no fan-out found, but part of the wiring is built from values not known statically ({}): parallelism cannot be established from the code",
                g.unresolved.first().map(String::as_str).unwrap_or("")
            )
        } else if g.fan_out.is_empty() {
            "no fan-out: the graph runs its nodes one after another".to_string()
        } else {
            format!(
                "fan-out points: {}; fan-in points: {}",
                g.fan_out
                    .iter()
                    .map(|x| format!("{} → [{}]", x.from, names(&x.to)))
                    .collect::<Vec<_>>()
                    .join("; "),
                g.fan_in
                    .iter()
                    .map(|x| format!("[{}] → {}", names(&x.from), x.to))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        },
        if g.fan_out.is_empty() && !g.unresolved.is_empty() {
            0.3
        } else {
            1.0
        },
    )
}

/// Whether every edge endpoint is a node of the graph (`repo.graph.well_formed`).
fn well_formed(g: &GraphFacts) -> Evidence {
    match g.undefined_nodes.first() {
        None => fact(
            "repo.graph.well_formed",
            GRAPH_GOAL,
            true,
            g.location(),
            "every edge endpoint is a node added to the graph (or START/END)",
            0.9,
        ),
        Some(u) => fact(
            "repo.graph.well_formed",
            GRAPH_GOAL,
            false,
            format!("{}:{}", u.path, u.line),
            format!(
                "edges reference nodes never added: {}",
                g.undefined_nodes
                    .iter()
                    .map(|u| format!("{} ({}:{})", u.name, u.path, u.line))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            0.9,
        ),
    }
}

fn state(f: &RepoFacts) -> Vec<Evidence> {
    let s = &f.python.state;
    let goal = "Typed state with Pydantic models and reducers";
    let core = core_state(f);
    let typed = |x: StateFact, c: f64| stated("repo.state", goal, Fact::State(x), f, c);
    let class = core.map(|c| StateClass {
        at: at(&c.path, c.line),
        name: c.name.clone(),
        kind: c.kind.clone(),
    });
    let mut v = vec![typed(
        StateFact::Definition {
            state: class.clone(),
            fields: core
                .map(|c| c.fields.iter().map(|x| x.name.clone()).collect())
                .unwrap_or_default(),
            files: f.python.files_parsed,
        },
        1.0,
    )];
    if let Some(c) = core {
        if let Some(e) = v.last_mut() {
            *e = e.clone().with_content(c.snippet.clone());
        }
    }
    // the models are told by their fields (the challenge's schema), never by their names
    for model in [Model::Evidence, Model::Opinion] {
        let is = model_test(model);
        let m = s.pydantic_models.iter().find(|c| is(c));
        let e = typed(
            StateFact::Model {
                model,
                found: m.map(|c| (at(&c.path, c.line), c.name.clone(), c.fields.len())),
                searched: s.pydantic_models.len(),
                state: class.as_ref().map(|c| c.at.clone()),
            },
            1.0,
        );
        v.push(match m {
            Some(c) => e.with_content(c.snippet.clone()),
            None => e,
        });
    }
    // a field holds evidence or opinions when its type names such a model
    let names_model = |annotation: &str, is: fn(&super::python::state::StateClass) -> bool| {
        annotation
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter_map(|w| s.class(w))
            .any(is)
    };
    for model in [Model::Evidence, Model::Opinion] {
        let is = model_test(model);
        let field = core.and_then(|c| {
            c.fields
                .iter()
                .find(|x| names_model(&x.annotation, is))
                .map(|x| (at(&c.path, x.line), x.name.clone(), x.annotation.clone()))
        });
        v.push(typed(
            StateFact::Holds {
                model,
                field,
                state: class.clone(),
            },
            0.9,
        ));
    }
    for (merge, name) in [(Merge::Add, "operator.add"), (Merge::Ior, "operator.ior")] {
        v.push(typed(reducer(s, merge, name, class.clone()), 1.0));
    }
    v.extend(defects(f, STATE_DEFECTS, goal));
    v
}

/// The graph's state class: the state type of the first graph that names one, else the first
/// TypedDict with a reducer, else the first TypedDict.
fn core_state(f: &RepoFacts) -> Option<&super::python::state::StateClass> {
    let s = &f.python.state;
    let graph_state = f
        .python
        .graphs
        .iter()
        .find_map(|g| g.state_type.as_deref())
        .map(|t| t.rsplit('.').next().unwrap_or(t).to_string());
    graph_state
        .as_deref()
        .and_then(|n| s.class(n))
        .or_else(|| {
            s.typed_dicts
                .iter()
                .find(|c| c.fields.iter().any(|x| x.reducer.is_some()))
        })
        .or_else(|| s.typed_dicts.first())
}

/// How a class is told to be the `model` (by its fields; see `python::roles`).
fn model_test(model: Model) -> fn(&super::python::state::StateClass) -> bool {
    match model {
        Model::Evidence => roles::is_evidence_model,
        Model::Opinion => roles::is_opinion_model,
    }
}

/// The reducer that merges as `merge` (`name`: `operator.add` or `operator.ior`): the field
/// annotated with it, else the repository's own function that keeps both values of a
/// container of the same kind (`merge_dicts` on a dict field).
fn reducer(
    s: &super::python::state::StateFacts,
    merge: Merge,
    name: &str,
    state: Option<StateClass>,
) -> StateFact {
    let own = s.reducers.iter().find(|r| r.reducer == name);
    let custom = own.is_none().then(|| {
        s.reducers
            .iter()
            .find(|r| r.merges && holds_dict(s, r) == Some(merge == Merge::Ior))
    });
    let r = own.or(custom.flatten());
    StateFact::Reducer {
        merge,
        via: custom.flatten().map(|r| r.reducer.clone()),
        field: r.map(|r| (at(&r.path, r.line), r.class.clone(), r.field.clone())),
        others: s
            .reducers
            .iter()
            .map(|r| format!("{}.{}={}", r.class, r.field, r.reducer))
            .collect(),
        state,
    }
}

/// The container a reducer field's annotation holds: a dict (`Some(true)`, merged by
/// operator.ior), a list (`Some(false)`, concatenated by operator.add), else `None`.
fn holds_dict(
    s: &super::python::state::StateFacts,
    r: &super::python::state::Reducer,
) -> Option<bool> {
    let ann = s
        .class(&r.class)
        .and_then(|c| c.fields.iter().find(|x| x.name == r.field))
        .map(|x| x.annotation.as_str())
        .unwrap_or("");
    let inner = ann.strip_prefix("Annotated[").unwrap_or(ann).trim_start();
    let head: String = inner
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let head = head.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match head.as_str() {
        "dict" | "mapping" | "mutablemapping" | "defaultdict" => Some(true),
        "list" | "sequence" => Some(false),
        _ => None,
    }
}

/// The evidence stating a typed fact of a repository family.
fn stated(prefix: &str, goal: &str, fact: Fact, f: &RepoFacts, c: f64) -> Evidence {
    Evidence::stated(
        prefix,
        Detective::RepoInvestigator,
        goal,
        fact,
        f.url.clone(),
        conf(c),
    )
}

fn at(path: &str, line: usize) -> Site {
    Site::new(path, line)
}

fn safety(f: &RepoFacts) -> Vec<Evidence> {
    let s = &f.python.security;
    let goal = "Sandboxed git operations without raw shell calls";
    let fact = |x: SafetyFact, c: f64| stated("repo.security", goal, Fact::Safety(x), f, c);
    let clones = clone_facts(s);
    let sites: Vec<Site> = clones.iter().map(|c| c.call.at.clone()).collect();
    let union = |pick: &dyn Fn(&super::python::safety::CloneCall) -> Vec<Site>| {
        let mut v: Vec<Site> = s.clone_calls.iter().flat_map(pick).collect();
        v.sort();
        v.dedup();
        v
    };
    let files = s.files.max(usize::from(f.python.files_parsed > 0));
    let mut v = Vec::new();
    let mut sandbox = fact(
        SafetyFact::Sandbox {
            clones: clones.clone(),
            files,
        },
        0.9,
    );
    if let Some(c) = s.clone_calls.first() {
        sandbox = sandbox.with_content(c.function_snippet.clone());
    }
    v.push(sandbox);
    v.push(fact(SafetyFact::CloneErrors { clones }, 0.8));
    v.push(fact(
        SafetyFact::ErrorKinds {
            clones: sites.clone(),
            tests: union(&|c| c.error_tests.clone()),
        },
        0.7,
    ));
    v.push(fact(
        SafetyFact::Timeouts {
            calls: s
                .externals
                .iter()
                .map(|x| fact::External {
                    call: Call::new(x.at.clone(), x.callee.clone()),
                    timeout: x.timeout.clone(),
                    clone: x.clone,
                })
                .collect(),
            files,
        },
        0.85,
    ));
    v.push(fact(
        SafetyFact::UrlCheck {
            clones: sites.clone(),
            checks: union(&|c| c.url_checks.clone()),
        },
        0.8,
    ));
    v.push(fact(
        SafetyFact::Cleanup {
            clones: sites.clone(),
            removals: s.removals.clone(),
            early: s.clone_calls.iter().any(|c| c.removed_early.is_some()),
        },
        0.7,
    ));
    v.push(fact(
        SafetyFact::Lifetime {
            clones: sites.clone(),
            early: early_removals(s),
        },
        0.8,
    ));
    v.push(fact(
        SafetyFact::FullHistory {
            clones: sites,
            shallow: shallow_clones(s),
        },
        0.9,
    ));
    v.push(fact(no_shell(f), 1.0));
    for (i, x) in s.findings.iter().enumerate() {
        v.push(
            fact(
                SafetyFact::Finding {
                    n: i,
                    at: at(&x.path, x.line),
                    kind: x.kind.clone(),
                    detail: x.detail.clone(),
                },
                1.0,
            )
            .with_content(x.snippet.clone()),
        );
    }
    v
}

/// The clone calls as typed facts: where, its sandbox, list arguments, through what, handled.
fn clone_facts(s: &super::python::safety::SecurityFacts) -> Vec<fact::Clone> {
    s.clone_calls
        .iter()
        .map(|c| fact::Clone {
            call: Call::new(at(&c.path, c.line), c.callee.clone()),
            sandbox: c.sandbox_at.clone(),
            list_args: c.list_args,
            via: c.via.clone(),
            handled: c.handled_at.clone(),
        })
        .collect()
}

/// The clones whose temporary directory is removed when their function returns, while the
/// function returns its path.
fn early_removals(s: &super::python::safety::SecurityFacts) -> Vec<fact::EarlyRemoval> {
    s.clone_calls
        .iter()
        .filter_map(|c| {
            c.removed_early
                .as_ref()
                .map(|(dir, func)| fact::EarlyRemoval {
                    clone: at(&c.path, c.line),
                    sandbox: dir.clone(),
                    function: func.clone(),
                })
        })
        .collect()
}

/// The shallow clones (a depth given), each with the `if` branch that alone makes it shallow,
/// when one does.
fn shallow_clones(s: &super::python::safety::SecurityFacts) -> Vec<fact::Shallow> {
    s.clone_calls
        .iter()
        .filter_map(|c| {
            c.depth.as_ref().map(|d| {
                let clone = at(&c.path, c.line);
                let only =
                    s.shallow_only
                        .iter()
                        .find(|o| o.clone == clone)
                        .map(|o| fact::ShallowBranch {
                            at: o.at.clone(),
                            branch: o.branch.clone(),
                            by_default: o.by_default,
                            defaults: o.defaults.clone(),
                        });
                fact::Shallow {
                    at: clone,
                    depth: d.clone(),
                    only,
                }
            })
        })
        .collect()
}

/// The raw shell calls (every finding but `eval`/`exec`), those kept and those counted.
fn no_shell(f: &RepoFacts) -> SafetyFact {
    let s = &f.python.security;
    let shells: Vec<Site> = s
        .findings
        .iter()
        .filter(|x| x.kind != "eval" && x.kind != "exec")
        .map(|x| at(&x.path, x.line))
        .collect();
    let counted = f
        .finding_counts
        .iter()
        .filter(|(k, _)| *k != "eval" && *k != "exec")
        .map(|(_, n)| n)
        .sum();
    SafetyFact::NoShell {
        files: f.python.files_parsed,
        subprocess: s.subprocess_calls,
        shells,
        counted,
        unscanned: f.unscanned_python.clone(),
    }
}

/// The opinion model a bound schema names: a class with a `score` field, or one holding a
/// list of such (one call for every criterion). (name, where, batched)
fn opinion_model<'a>(
    f: &'a RepoFacts,
    schema: &str,
) -> Option<(&'a super::python::state::StateClass, bool)> {
    let state = &f.python.state;
    let name = schema.split(',').next().unwrap_or("").trim();
    let name = name.rsplit('.').next().unwrap_or(name);
    let class = state.class(name)?;
    if class.fields.iter().any(|x| x.name == "score") {
        return Some((class, false));
    }
    // a list of opinions: a field whose type names a class with a score
    class.fields.iter().find_map(|x| {
        let inner = x
            .annotation
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter_map(|w| state.class(w))
            .find(|c| c.fields.iter().any(|y| y.name == "score"))?;
        Some((inner, true))
    })
}

fn structured(f: &RepoFacts) -> Vec<Evidence> {
    let s = &f.python.structured_output;
    let goal = "Judge LLM output bound to the JudicialOpinion schema, with retry";
    let fact = |x: StructuredFact, c: f64| {
        stated("repo.structured_output", goal, Fact::Structured(x), f, c)
    };
    let bound: Vec<Bound> = s
        .calls
        .iter()
        .map(|c| Bound {
            call: Call::new(at(&c.path, c.line), c.method.clone()),
            method: c.method.clone(),
            schema: c.schema.clone(),
            json_mode: c.json_mode,
            skipped: c.skipped.clone(),
        })
        .collect();
    let calls = |v: &[(Site, String)]| -> Vec<Call> {
        v.iter()
            .map(|(s, c)| Call::new(s.clone(), c.clone()))
            .collect()
    };
    let mut used = fact(
        StructuredFact::Binding {
            bound: bound.clone(),
            parsers: calls(&s.parsers),
            json_text: calls(&s.json_text),
            files: s.files,
        },
        1.0,
    );
    if let Some(c) = s.calls.first() {
        used = used.with_content(c.function_snippet.clone());
    }
    let mut v = vec![used];
    // the opinion schema: the first bound schema that is an opinion model
    let opinion = s
        .calls
        .iter()
        .find_map(|c| opinion_model(f, &c.schema).map(|(m, batched)| (c, m, batched)));
    v.push(fact(
        StructuredFact::OpinionSchema {
            bound: bound.clone(),
            opinion: opinion.map(|(c, m, _)| {
                (
                    c.schema.split(',').next().unwrap_or("").trim().to_string(),
                    at(&m.path, m.line),
                )
            }),
            batched: opinion.is_some_and(|(_, _, b)| b),
        },
        0.9,
    ));
    let model = opinion
        .map(|(_, m, _)| m)
        .or_else(|| f.python.state.class("JudicialOpinion"));
    let need = ["score", "argument", "cited_evidence"];
    let field_for = |n: &str| opinion_field(model, n);
    v.push(fact(
        StructuredFact::SchemaFields {
            model: model.map(|m| (m.name.clone(), at(&m.path, m.line))),
            have: need.iter().filter_map(|n| field_for(n)).collect(),
            missing: need
                .iter()
                .filter(|n| field_for(n).is_none())
                .map(|n| n.to_string())
                .collect(),
        },
        0.9,
    ));
    let calls = judge_calls(f);
    // a reply the judge cannot use decides the level: said before the retries
    if let Some((model, writes)) = item_writes(f, &calls) {
        v.push(fact(StructuredFact::ItemWrites { model, writes }, 0.9));
    }
    v.push(fact(StructuredFact::Retry { calls }, 0.8));
    v
}

/// The field of the opinion `model` that serves as the needed field `n`, as the model writes
/// it: the citations may be `cited_evidence_ids` or `evidence_refs` (a list of evidence), the
/// argument may be a `reasoning` text.
fn opinion_field(model: Option<&super::python::state::StateClass>, n: &str) -> Option<String> {
    let m = model?;
    let list = |a: &str| {
        let a = a.to_lowercase();
        a.starts_with("list") || a.starts_with("sequence") || a.starts_with("tuple")
    };
    m.fields
        .iter()
        .find(|x| x.name == n)
        .or_else(|| match n {
            "cited_evidence" => m.fields.iter().find(|x| {
                let name = x.name.to_lowercase();
                (name.contains("evidence") || name.contains("citation")) && list(&x.annotation)
            }),
            "argument" => m.fields.iter().find(|x| {
                matches!(
                    x.name.as_str(),
                    "reasoning" | "rationale" | "justification" | "explanation"
                ) && x.annotation.trim() == "str"
            }),
            _ => None,
        })
        .map(|x| x.name.clone())
}

/// The judges' LLM calls, each where it is invoked (the binding when no invocation was read),
/// once, with its retry, transport and handling. The judges' calls are those binding an
/// opinion model (every call when none does); where the graph's judge nodes are seen running
/// some of them, a call no judge node runs (a debate the Chief Justice routes to, asking for
/// one more opinion) is no judge's.
fn judge_calls(f: &RepoFacts) -> Vec<Retried> {
    let s = &f.python.structured_output;
    let judges: Vec<&super::python::schema_binding::StructuredCall> = {
        let op: Vec<_> = s
            .calls
            .iter()
            .filter(|c| opinion_model(f, &c.schema).is_some())
            .collect();
        if op.is_empty() {
            s.calls.iter().collect()
        } else {
            op
        }
    };
    let mut calls: Vec<Retried> = Vec::new();
    for c in &judges {
        let each: Vec<Retried> = if c.invoked.is_empty() {
            vec![Retried {
                call: at(&c.path, c.line),
                retry: c.retry_by.clone(),
                transport: c.transport.clone(),
                handled: c.handled.clone(),
                judges: c.judges.clone(),
                from_text: None,
            }]
        } else {
            c.invoked
                .iter()
                .map(|i| Retried {
                    call: i.at.clone(),
                    retry: i.retry_by.clone(),
                    transport: c.transport.clone(),
                    handled: i.handled.clone(),
                    judges: i.judges.clone(),
                    from_text: i.from_text.clone(),
                })
                .collect()
        };
        for r in each {
            if !calls.iter().any(|x| x.call == r.call) {
                calls.push(r);
            }
        }
    }
    if calls.iter().any(|c| !c.judges.is_empty()) {
        calls.retain(|c| !c.judges.is_empty());
    }
    calls
}

/// The goal of the judge-persona facts (`repo.personas.*`).
const NUANCE_GOAL: &str = "Distinct, conflicting judge personas running in parallel";

/// A judge-persona fact (`repo.personas.*`).
fn persona_fact(f: &RepoFacts, x: NuanceFact, c: f64) -> Evidence {
    stated("repo.personas", NUANCE_GOAL, Fact::Nuance(x), f, c)
}

/// The judges' replies that are instances of a Pydantic opinion model and are written like a
/// dict afterwards (`opinion["judge"] = ...`), with the model's name; `None` when there are none.
fn item_writes(f: &RepoFacts, calls: &[Retried]) -> Option<(String, Vec<ItemWrite>)> {
    let mut model = None;
    let mut writes: Vec<ItemWrite> = Vec::new();
    for c in &f.python.structured_output.calls {
        // the reply is the opinion model itself (not a list of opinions), a Pydantic model
        let Some((class, false)) = opinion_model(f, &c.schema) else {
            continue;
        };
        if class.kind != "pydantic" {
            continue;
        }
        for i in c
            .invoked
            .iter()
            .filter(|i| calls.iter().any(|r| r.call == i.at))
        {
            for (at, target) in &i.item_written {
                if !writes.iter().any(|(w, _, _)| w == at) {
                    model.get_or_insert_with(|| class.name.clone());
                    writes.push((at.clone(), target.clone(), i.at.clone()));
                }
            }
        }
    }
    Some((model?, writes))
}

fn nuance(f: &RepoFacts) -> Vec<Evidence> {
    let p = &f.python.personas;
    let fact = |x: NuanceFact, c: f64| persona_fact(f, x, c);
    let mut v = Vec::new();
    let prompt = |x: &super::python::persona_prompts::PersonaPrompt| Prompt {
        persona: x.persona.clone(),
        at: at(&x.path, x.line),
        chars: x.chars,
        sentences: x.sentences,
        levels: x.levels,
    };
    let found: Vec<Prompt> = p.prompts.iter().map(prompt).collect();
    let missing: Vec<String> = PERSONAS
        .iter()
        .filter(|n| !p.prompts.iter().any(|x| x.persona == **n))
        .map(|n| n.to_string())
        .collect();
    v.extend(collusion(f, &found));
    v.push(fact(
        NuanceFact::Prompts {
            found: found.clone(),
            missing,
        },
        0.85,
    ));
    v.extend(persona_languages(f));
    if !found.is_empty() {
        v.push(fact(
            NuanceFact::OwnPrompts {
                prompts: found.clone(),
                template: p.template.clone(),
                sentence: super::python::persona_prompts::SENTENCE_CHARS,
                full: super::python::persona_prompts::FULL_BRIEF_CHARS,
            },
            0.75,
        ));
    }
    v.extend(per_criterion(f));
    v.push(judges_in_parallel(f));
    let s = &f.python.structured_output;
    v.push(fact(
        NuanceFact::Structured {
            bound: s.calls.first().map(|c| at(&c.path, c.line)),
            parsed: s.parsers.first().map(|(site, _)| site.clone()),
        },
        0.9,
    ));
    v.extend(defects(f, NUANCE_DEFECTS, NUANCE_GOAL));
    v
}

/// The collusion figure the rubric asks for, first in the list so that every summary of this
/// dimension quotes it. With fewer than two prompts (`found`) nothing can be compared, and the
/// missing prompts are already the next fact.
fn collusion(f: &RepoFacts, found: &[Prompt]) -> Option<Evidence> {
    let p = &f.python.personas;
    let first = found.first()?;
    if p.similarity.is_empty() {
        return None;
    }
    Some(Evidence {
        goal: "Persona prompts share at most 50% of their text (no Persona Collusion)".into(),
        ..persona_fact(
            f,
            NuanceFact::Collusion {
                pairs: p
                    .similarity
                    .iter()
                    .map(|x| Overlap {
                        a: x.a.clone(),
                        b: x.b.clone(),
                        share: x.share,
                    })
                    .collect(),
                threshold: super::python::persona_prompts::COLLUSION_THRESHOLD,
                at: first.at.clone(),
            },
            0.95,
        )
    })
}

/// Each persona's prompt language: the words its lens expects and those its prompt has.
fn persona_languages(f: &RepoFacts) -> Vec<Evidence> {
    let p = &f.python.personas;
    PERSONAS
        .into_iter()
        .map(|persona| {
            let pr = p.prompts.iter().find(|x| x.persona == persona);
            let lang = p.language.iter().find(|x| x.persona == persona);
            let e = persona_fact(
                f,
                NuanceFact::Language {
                    persona: persona.to_string(),
                    expected: lang.map(|l| l.expected.clone()).unwrap_or_default(),
                    matched: lang.map(|l| l.matched.clone()).unwrap_or_default(),
                    at: pr.map(|x| at(&x.path, x.line)),
                },
                if pr.is_some() { 0.75 } else { 0.85 },
            );
            match pr {
                Some(pr) => e.with_content(super::python::syntax::truncate(&pr.text, 600)),
                None => e,
            }
        })
        .collect()
}

/// One call per criterion, or one call for every criterion (a list of opinions bound): said
/// when some structured-output call binds an opinion model.
fn per_criterion(f: &RepoFacts) -> Option<Evidence> {
    let s = &f.python.structured_output;
    let (c, _) = s
        .calls
        .iter()
        .find_map(|c| opinion_model(f, &c.schema).map(|(_, b)| (c, b)))
        .filter(|(_, b)| *b)
        .or_else(|| {
            s.calls
                .iter()
                .find_map(|c| opinion_model(f, &c.schema).map(|(_, b)| (c, b)))
        })?;
    let batched = opinion_model(f, &c.schema).is_some_and(|(_, b)| b);
    // one opinion per judge run: every invocation of a one-opinion schema is made once
    // per run of its function (no loop over items, no caller looping), and the graph
    // neither routes to a judge (a loop over the criteria, a fan-out with `Send`) nor
    // fans out to one with `Send`
    let routed_to_judge = f.python.graphs.iter().any(|g| {
        let judge = |n: &String| g.roles.get(n) == Some(&Role::Judge);
        g.routers.iter().any(|r| r.targets.iter().any(judge))
            || g.fan_out
                .iter()
                .any(|x| x.via.contains("send") && x.to.iter().any(judge))
    });
    let single: Vec<&super::python::schema_binding::Invoked> = s
        .calls
        .iter()
        .filter(|k| opinion_model(f, &k.schema).is_some_and(|(_, b)| !b))
        .flat_map(|k| &k.invoked)
        .collect();
    let overall =
        (!batched && !routed_to_judge && !single.is_empty() && single.iter().all(|i| !i.per_item))
            .then(|| single[0].at.clone());
    Some(persona_fact(
        f,
        NuanceFact::PerCriterion {
            batched: batched.then(|| at(&c.path, c.line)),
            overall,
            calls: s
                .calls
                .iter()
                .filter(|k| opinion_model(f, &k.schema).is_some())
                .map(|k| at(&k.path, k.line))
                .collect(),
        },
        0.8,
    ))
}

/// The judges in parallel: the first fan-out (of any graph) to two or more judge nodes, or to
/// one with `Send`.
fn judges_in_parallel(f: &RepoFacts) -> Evidence {
    let mut par = None;
    for g in &f.python.graphs {
        let judge = |n: &String| g.roles.get(n) == Some(&Role::Judge);
        if let Some(fo) = g.fan_out.iter().find(|x| {
            x.to.iter().filter(|n| judge(n)).count() >= 2
                || (x.via.contains("send") && x.to.iter().any(judge))
        }) {
            par = Some(fo.clone());
            break;
        }
    }
    persona_fact(
        f,
        NuanceFact::Parallel {
            fan_out: par.map(|fo| {
                let site = fo
                    .location
                    .rsplit_once(':')
                    .and_then(|(p, l)| l.parse().ok().map(|l| at(p, l)))
                    .unwrap_or_else(|| at(&fo.location, 0));
                (site, fo.from.clone(), fo.to.clone())
            }),
            graph: f.python.graphs.first().and_then(|g| {
                g.location()
                    .rsplit_once(':')
                    .and_then(|(p, l)| l.parse().ok().map(|l| at(p, l)))
            }),
        },
        0.85,
    )
}

fn justice(f: &RepoFacts) -> Vec<Evidence> {
    let j = &f.python.justice;
    let goal = "Deterministic Chief Justice rules and a Markdown report";
    let fact = |x: JusticeFact, c: f64| stated("repo.justice", goal, Fact::Justice(x), f, c);
    let code = j.location.as_ref().and_then(|l| {
        l.rsplit_once(':')
            .and_then(|(p, n)| n.parse().ok().map(|n| at(p, n)))
    });
    let mut v = vec![{
        let e = fact(
            JusticeFact::Code {
                at: code.clone(),
                modules: j.modules.clone(),
                files: j.files,
            },
            0.9,
        );
        if code.is_some() {
            e.with_content(j.snippet.clone())
        } else {
            e
        }
    }];
    let rules_found = j
        .rules
        .iter()
        .filter(|r| r.found && r.rule != "dissent_requirement")
        .count();
    v.push(
        fact(
            JusticeFact::Deterministic {
                rules: rules_found,
                branches: j.branches,
                functions: j.functions,
                llm: j.llm_calls.clone(),
                prose_llm: j.prose_llm_calls.clone(),
                code: code.clone(),
            },
            0.85,
        )
        .with_measure(Measure::Justice {
            named_rules: rules_found,
            calls_llm: j.calls_llm,
        }),
    );
    for r in &j.rules {
        let Some(rule) = JusticeRule::from_id(&r.rule) else {
            continue;
        };
        let branch = r.found.then(|| {
            r.location
                .rsplit_once(':')
                .and_then(|(p, n)| n.parse().ok().map(|n| at(p, n)))
        });
        v.push(fact(
            JusticeFact::Rule {
                rule,
                branch: branch.flatten(),
                how: r.how.clone(),
                searched: j.branches,
                functions: j.functions,
                partial: r.partial.as_ref().and_then(|(l, how)| {
                    l.rsplit_once(':')
                        .and_then(|(p, n)| n.parse().ok().map(|n| (at(p, n), how.clone())))
                }),
                code: code.clone(),
            },
            0.8,
        ));
    }
    let site_of = |l: &str| {
        l.rsplit_once(':')
            .and_then(|(p, n)| n.parse().ok().map(|n| at(p, n)))
    };
    v.push(fact(
        JusticeFact::MarkdownFile {
            write: j.writes_markdown.as_deref().and_then(site_of),
            code: code.clone(),
        },
        0.8,
    ));
    v.push(fact(
        JusticeFact::Sections {
            have: j
                .sections
                .iter()
                .filter_map(|(s, l)| l.as_deref().and_then(site_of).map(|at| (s.clone(), at)))
                .collect(),
            missing: j
                .sections
                .iter()
                .filter(|(_, l)| l.is_none())
                .map(|(s, _)| s.clone())
                .collect(),
            code,
        },
        0.8,
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_history_out_of_order_is_fixed_by_what_came_first() {
        use crate::repo::history::{CommitFact, HistoryFacts};
        let commit = |hash: &str| CommitFact {
            hash: hash.into(),
            timestamp: 0,
            date: String::new(),
            message: String::new(),
            files_changed: 1,
            insertions: 1,
            deletions: 0,
            code_lines_added: 1,
            python_lines_added: 1,
            merge: false,
            phases: vec![],
            not_diffed: vec![],
        };
        let mut h = HistoryFacts {
            commits: ["aaaaaaa1", "bbbbbbb2", "ccccccc3"]
                .into_iter()
                .map(commit)
                .collect(),
            first_setup: Some(0),
            first_tools: Some(2),
            first_graph: Some(1),
            ..HistoryFacts::default()
        };
        let gap = progression_gap(&h).expect("the graph came first");
        assert!(
            gap.contains("the first graph commit bbbbbbb")
                && gap.contains("first tools commit ccccccc"),
            "{gap}"
        );
        h.first_tools = None;
        assert_eq!(
            progression_gap(&h).as_deref(),
            Some("no commit was read as adding the tools")
        );
        h.first_tools = Some(1);
        h.first_graph = Some(2);
        assert_eq!(progression_gap(&h), None);
        h.first_setup = Some(2);
        h.first_tools = Some(2);
        assert!(progression_gap(&h).is_some_and(|g| g.contains("one commit")));
    }

    #[test]
    fn each_familys_facts_carry_ids_of_that_family() {
        let facts = RepoFacts::default();
        for family in Family::REPO {
            let v = family_facts(&facts, family);
            assert!(!v.is_empty(), "{family:?} files no fact");
            for e in v {
                assert_eq!(Family::of(&e.id), Some(family), "{}", e.id);
            }
        }
    }

    #[test]
    fn an_opinion_models_citations_are_found_under_the_name_it_gives_them() {
        let schema = |citations: &str| {
            let f = RepoFacts {
                python: crate::repo::python::analyse(
                    vec![(
                        "src/state.py".into(),
                        format!(
                            "from typing import List\nfrom pydantic import BaseModel\n\nclass JudicialOpinion(BaseModel):\n    score: int\n    argument: str\n    {citations}\n"
                        ),
                    )],
                    &[],
                ),
                ..RepoFacts::default()
            };
            family_facts(&f, Family::Structured)
                .into_iter()
                .find(|e| e.id.ends_with("schema_fields"))
                .expect("the schema's fields")
        };
        let ids = schema("cited_evidence_ids: List[str]");
        assert!(ids.found, "{}", ids.rationale);
        assert!(
            ids.rationale.contains("cited_evidence_ids"),
            "{}",
            ids.rationale
        );
        // a text that names evidence is no list of citations
        let text = schema("evidence_note: str");
        assert!(!text.found, "{}", text.rationale);
        assert!(
            text.rationale.contains("lacks cited_evidence"),
            "{}",
            text.rationale
        );
    }

    #[test]
    fn a_return_that_drops_two_keys_is_one_defect_counting_two() {
        let f = RepoFacts {
            python: crate::repo::python::analyse(
                vec![(
                    "src/graph.py".into(),
                    "import operator\nfrom typing import Annotated, TypedDict\nfrom langgraph.graph import StateGraph, START, END\n\nclass AgentState(TypedDict):\n    repo_url: str\n    opinions: Annotated[list, operator.add]\n\ndef build(state):\n    return {'meta': {}, 'rules': {}, 'opinions': []}\ndef judge(state):\n    return {'opinions': ['o']}\ng = StateGraph(AgentState)\ng.add_node('build', build)\ng.add_node('judge', judge)\ng.add_edge(START, 'build')\ng.add_edge('build', 'judge')\ng.add_edge('judge', END)\n".into(),
                )],
                &[],
            ),
            ..RepoFacts::default()
        };
        let dropped: Vec<Evidence> = family_facts(&f, Family::State)
            .into_iter()
            .filter(|e| e.id.contains(".defect.undeclared_state_key"))
            .collect();
        assert_eq!(dropped.len(), 1, "{dropped:?}");
        assert_eq!(
            dropped[0].measure,
            Some(crate::model::Measure::KeysDropped { keys: 2 })
        );
    }

    #[test]
    fn a_state_key_fix_asks_for_what_its_cause_lacks() {
        let nodes = vec!["reader".to_string()];
        let fix = |kind: &str, cause: KeyCause| defect_fix(kind, &nodes, false, Some(&cause));
        let undeclared = fix(
            "undeclared_state_key",
            KeyCause::Undeclared {
                keys: vec!["meta".into(), "rules".into()],
            },
        )
        .unwrap();
        assert!(
            undeclared.starts_with("declare the keys `meta` and `rules` in the state schema"),
            "{undeclared}"
        );
        // an entry of a declared field: write that entry, nothing to declare
        let entry = fix(
            "unknown_state_key",
            KeyCause::MissingEntry {
                field: "evidences".into(),
                entry: "general".into(),
            },
        )
        .unwrap();
        assert!(
            entry.contains("put a `general` entry into `evidences`")
                && !entry.starts_with("declare"),
            "{entry}"
        );
        // given by the input: declaring it suffices, no node need write it
        let input = fix(
            "unknown_state_key",
            KeyCause::InputDropped {
                key: "pdf_source".into(),
                at: "src/main.py:246".into(),
            },
        )
        .unwrap();
        assert!(
            input.starts_with("declare `pdf_source` in the state schema: the graph's input gives it (src/main.py:246)")
                && !input.contains("write"),
            "{input}"
        );
        // declared but never written: write it, nothing to declare
        let never = fix(
            "unknown_state_key",
            KeyCause::NeverWritten {
                key: "count".into(),
            },
        )
        .unwrap();
        assert!(
            never.contains("write `count`") && !never.starts_with("declare"),
            "{never}"
        );
        // nothing gives it anywhere: declare it and have a node write it
        let unset = fix("unknown_state_key", KeyCause::Unset { key: "x".into() }).unwrap();
        assert!(unset.starts_with("declare the key"), "{unset}");
        // written, but after it is read: order the nodes (and declare it when it is not)
        let later = |declared: bool| {
            fix(
                "unknown_state_key",
                KeyCause::WrittenLater {
                    key: "repo_path".into(),
                    writers: vec!["repo".into()],
                    declared,
                },
            )
            .unwrap()
        };
        assert!(
            later(true).starts_with("make `repo` run before the reader (`reader`)"),
            "{}",
            later(true)
        );
        assert!(
            later(false).starts_with("declare `repo_path` in the state schema (what `repo` writes under it is dropped otherwise), and make `repo` run before"),
            "{}",
            later(false)
        );
    }

    #[test]
    fn a_route_that_can_never_be_taken_is_no_route_after_its_layer() {
        // each judge's router tests `error`, which no node can set (undeclared: what
        // `handler` returns under it is dropped): the route after the judges is dead
        let facts = |state_extra: &str, judge_extra: &str| RepoFacts {
            python: crate::repo::python::analyse(
                vec![(
                    "src/graph.py".into(),
                    format!(
                        "import operator\nfrom typing import Annotated, TypedDict\nfrom langgraph.graph import StateGraph, START, END\n\nclass AgentState(TypedDict):\n    repo_url: str\n    evidences: Annotated[dict, operator.ior]\n    opinions: Annotated[list, operator.add]\n{state_extra}\ndef detective(state):\n    return {{'evidences': {{'d': ['x']}}}}\ndef agg(state):\n    return {{}}\ndef judge(state):\n    return {{'opinions': ['o']{judge_extra}}}\ndef chief(state):\n    return {{}}\ndef handler(state):\n    return {{'error': True}}\ndef check(state):\n    if state.get('error'):\n        return 'handler'\n    return 'chief'\ndef gate(state):\n    if state['evidences']:\n        return 'p'\n    return 'handler'\ng = StateGraph(AgentState)\nfor n in ['a', 'b']:\n    g.add_node(n, detective)\ng.add_node('agg', agg)\nfor n in ['p', 'd']:\n    g.add_node(n, judge)\ng.add_node('chief', chief)\ng.add_node('handler', handler)\ng.add_edge(START, 'a')\ng.add_edge(START, 'b')\ng.add_edge(['a', 'b'], 'agg')\ng.add_conditional_edges('agg', gate, {{'p': 'p', 'handler': 'handler'}})\ng.add_edge('agg', 'd')\ng.add_conditional_edges('p', check, {{'handler': 'handler', 'chief': 'chief'}})\ng.add_conditional_edges('d', check, {{'handler': 'handler', 'chief': 'chief'}})\ng.add_edge('chief', END)\ng.add_edge('handler', END)\napp = g.compile()\ndef main():\n    return app.invoke({{'repo_url': 'u', 'evidences': {{}}, 'opinions': []}})\n"
                    ),
                )],
                &[],
            ),
            ..RepoFacts::default()
        };
        let routes = |f: &RepoFacts| {
            family_facts(f, Family::Graph)
                .into_iter()
                .find(|e| matches!(e.fact, Some(Fact::Graph(GraphFact::Routes { .. }))))
                .expect("the routes fact")
        };
        let dead = routes(&facts("", ""));
        assert!(!dead.found, "{}", dead.rationale);
        assert!(
            dead.rationale.contains("none that can be taken leaves a judge")
                && dead.rationale.contains("`p` -> `handler` (src/graph.py:")
                && dead.rationale.contains("`error` is not declared in the state schema, so what handler returns under it is dropped"),
            "{}",
            dead.rationale
        );
        // declared and written by a judge: the route can be taken
        let live = routes(&facts("    error: bool\n", ", 'error': False"));
        assert!(live.found, "{}", live.rationale);
        assert!(!live.rationale.contains("never"), "{}", live.rationale);
    }

    #[test]
    fn a_reducer_field_re_sent_is_not_called_a_whole_state_return() {
        use crate::repo::python::graph::Defect;
        use crate::repo::python::graph::GraphFacts;
        let defect = |fields_only: bool| {
            let mut f = RepoFacts::default();
            f.python.graphs = vec![GraphFacts {
                defects: vec![Defect {
                    cause: None,
                    fields_only,
                    kind: "whole_state_return".into(),
                    nodes: vec!["tidy".into()],
                    location: "src/flow.py:12".into(),
                    detail: "tidy re-sends the current value of `notes` (src/flow.py:12)".into(),
                }],
                ..GraphFacts::default()
            }];
            defects(&f, STATE_DEFECTS, "goal").remove(0)
        };
        let resent = defect(true);
        assert_eq!(resent.id, "repo.graph.defect.whole_state_return.1");
        assert!(
            resent
                .rationale
                .starts_with("run-time defect (reducer field re-sent): tidy"),
            "{}",
            resent.rationale
        );
        assert_eq!(resent.measure, Some(crate::model::Measure::FieldsResent));
        let fix = resent.fix.clone().unwrap_or_default();
        assert!(!fix.contains("whole state"), "{fix}");
        let whole = defect(false);
        assert!(
            whole
                .rationale
                .starts_with("run-time defect (whole state return): tidy"),
            "{}",
            whole.rationale
        );
        assert_eq!(whole.measure, None);
    }

    // ---- renaming what the student named changes no fact and no score

    const FIXTURE: &[(&str, &str)] = &[
        (
            "src/utils/url_rules.py",
            "import re\n\nALLOWED_HOST = r'^https://github\\.com/[\\w.-]+/[\\w.-]+$'\n\n\ndef looks_valid(candidate):\n    return bool(re.match(ALLOWED_HOST, candidate))\n",
        ),
        (
            "src/tools/git_ops.py",
            "import shutil\nimport subprocess\nimport tempfile\n\nfrom src.utils.url_rules import looks_valid\n\n\ndef fetch_repo(repo_url):\n    if not looks_valid(repo_url):\n        raise ValueError('bad url')\n    workdir = tempfile.mkdtemp(prefix='audit_')\n    try:\n        subprocess.run(['git', 'clone', repo_url, workdir], check=True, capture_output=True, timeout=120)\n    except subprocess.CalledProcessError as failure:\n        message = failure.stderr.lower()\n        if 'authentication' in message:\n            raise PermissionError('auth')\n        elif 'not found' in message:\n            raise LookupError('missing')\n        raise\n    return workdir\n\n\ndef history_of(workdir):\n    return subprocess.run(['git', 'log', '--oneline'], cwd=workdir, capture_output=True)\n\n\ndef drop_repo(workdir):\n    shutil.rmtree(workdir)\n",
        ),
        (
            "src/nodes/inquiry.py",
            "from src.tools.git_ops import fetch_repo, history_of, drop_repo\n\n\ndef investigate(state):\n    workdir = fetch_repo(state['repo_url'])\n    history_of(workdir)\n    drop_repo(workdir)\n    return {}\n",
        ),
        (
            "src/state_defs.py",
            "from pydantic import BaseModel\n\n\nclass Verdict(BaseModel):\n    judge: str\n    score: int\n    argument: str\n    cited_evidence: list[str]\n",
        ),
        (
            "src/nodes/courtroom.py",
            "from src.state_defs import Verdict\n\nHARSH = 'You are the Prosecutor. Trust no one: look for gaps, security flaws and laziness in the evidence, and charge every missing requirement.'\nKIND = 'You are the Defense attorney. Reward effort and intent, credit creative workarounds and the spirit of the work.'\nPRACTICAL = 'You are the Tech Lead. Judge architectural soundness, maintainability and practical viability of the code.'\n\n\ndef ask_model(client, brief, material):\n    bound_client = client.with_structured_output(Verdict)\n    for attempt_no in range(3):\n        try:\n            return bound_client.invoke(brief + material)\n        except ValueError:\n            continue\n    return None\n",
        ),
        (
            "src/nodes/supreme.py",
            "def decide(state, client):\n    ops = state['opinions']\n    tl = next(o for o in ops if o.judge == 'TechLead')\n    points = [o.score for o in ops]\n    outcome = round(sum(points) / len(points))\n    if any(e.kind == 'security' for e in state['evidences']):\n        outcome = min(outcome, 3)\n    if not state['evidences'][0].found and points[1] > 3:\n        outcome = points[0]\n    if max(points) - min(points) > 2:\n        note = f'dissent: {max(points)} against {min(points)}'\n    if tl.score >= 4 and state['criterion'] == 'graph_orchestration':\n        outcome = tl.score\n    with open('audit/report.md', 'w') as sink:\n        sink.write('## Executive Summary')\n    return outcome\n",
        ),
    ];

    /// Identifiers the student chose in [`FIXTURE`] (functions, variables, constants, classes,
    /// parameters, files and folders); the spec's own names (`score`, `found`, `opinions`) and
    /// the libraries' stay.
    const CHOSEN: &[&str] = &[
        "inquiry",
        "investigate",
        "url_rules",
        "ALLOWED_HOST",
        "looks_valid",
        "candidate",
        "git_ops",
        "fetch_repo",
        "repo_url",
        "workdir",
        "failure",
        "message",
        "history_of",
        "drop_repo",
        "state_defs",
        "Verdict",
        "courtroom",
        "HARSH",
        "KIND",
        "PRACTICAL",
        "ask_model",
        "client",
        "brief",
        "material",
        "bound_client",
        "attempt_no",
        "supreme",
        "decide",
        "ops",
        "tl",
        "points",
        "outcome",
        "note",
        "sink",
        "utils",
        "tools",
        "nodes",
    ];

    /// Renames whole identifiers outside string literals (and in module paths and file names).
    fn rename(text: &str, map: &BTreeMap<&str, String>) -> String {
        let mut out = String::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' || c == '"' {
                // a string literal (f-strings here interpolate nothing renamed but `points`,
                // whose use in the dissent text changes no fact): copied as is
                let q = c;
                out.push(c);
                i += 1;
                while i < chars.len() && chars[i] != q {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        out.push(chars[i]);
                        i += 1;
                    }
                    out.push(chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    out.push(chars[i]);
                    i += 1;
                }
            } else if c.is_alphabetic() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push_str(map.get(word.as_str()).map_or(word.as_str(), String::as_str));
            } else {
                out.push(c);
                i += 1;
            }
        }
        out
    }

    fn rename_path(path: &str, map: &BTreeMap<&str, String>) -> String {
        path.split('/')
            .map(|seg| {
                let (stem, ext) = seg.split_once('.').unwrap_or((seg, ""));
                let stem = map.get(stem).map_or(stem, String::as_str);
                if ext.is_empty() {
                    stem.to_string()
                } else {
                    format!("{stem}.{ext}")
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Every fact of the four typed families as (id, found, kind, proof lines with their file
    /// mapped back) and each criterion's level.
    type Seen = (
        Vec<(String, bool, String, Vec<(String, usize)>)>,
        Vec<Option<u8>>,
    );

    fn seen(files: &[(String, String)], back: &dyn Fn(&str) -> String) -> Seen {
        use crate::model::fact::Stated;
        let python = crate::repo::python::analyse(files.to_vec(), &[]);
        let facts = RepoFacts {
            url: "https://github.com/o/r".into(),
            python,
            ..RepoFacts::default()
        };
        let rubric = crate::rubric::Rubric::parse(crate::rubric::EMBEDDED_RUBRIC, "rubric.json")
            .expect("rubric");
        let dims: Vec<Dimension> = rubric
            .dimensions
            .iter()
            .filter(|d| {
                matches!(
                    d.id.as_str(),
                    "safe_tool_engineering"
                        | "structured_output_enforcement"
                        | "judicial_nuance"
                        | "chief_justice_synthesis"
                )
            })
            .cloned()
            .collect();
        assert_eq!(dims.len(), 4);
        let ev = evidence(&facts, &dims);
        let mut all = Vec::new();
        let mut levels = Vec::new();
        for d in &dims {
            let list = &ev[&d.id];
            levels.push(crate::judges::levels::assess(list).map(|l| l.level));
            for e in list {
                let proof = e
                    .fact
                    .as_ref()
                    .map(|f| f.proof().iter().map(|s| (back(&s.path), s.line)).collect())
                    .unwrap_or_default();
                all.push((e.id.clone(), e.found, format!("{:?}", e.kind), proof));
            }
        }
        (all, levels)
    }

    #[test]
    fn renaming_what_the_student_named_changes_no_fact_and_no_score() {
        let original: Vec<(String, String)> = FIXTURE
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let (facts, levels) = seen(&original, &|p| p.to_string());
        // the fixture states what it should: every typed fact is there, and the tables read it
        assert!(levels.iter().all(Option::is_some), "{levels:?}");
        let found = |id: &str| facts.iter().find(|f| f.0 == id).map(|f| f.1);
        for (id, holds) in [
            ("repo.security.timeout", false), // the `git log` passes none
            ("repo.security.url_validation", true),
            ("repo.security.auth_errors", true),
            ("repo.security.cleanup", true),
            ("repo.structured_output.retry", true),
            ("repo.structured_output.opinion_schema", true),
            ("repo.justice.rule.security_override", true),
            ("repo.justice.rule.fact_supremacy", true),
            ("repo.justice.rule.functionality_weight", true),
            ("repo.justice.rule.dissent_requirement", true),
            ("repo.justice.rule.variance_re_evaluation", false),
            ("repo.personas.prompts", true),
        ] {
            assert_eq!(found(id), Some(holds), "{id}: {facts:?}");
        }
        // seeded renamings: every chosen name replaced, consistently, by names of other lengths
        let mut seed: u64 = 0x5eed;
        for round in 0..6 {
            let mut map: BTreeMap<&str, String> = BTreeMap::new();
            for (k, name) in CHOSEN.iter().enumerate() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = 1 + (seed >> 59) as usize;
                map.insert(*name, format!("{}{k}_{round}", "q".repeat(len)));
            }
            let renamed: Vec<(String, String)> = original
                .iter()
                .map(|(p, t)| (rename_path(p, &map), rename(t, &map)))
                .collect();
            let back: BTreeMap<String, String> = original
                .iter()
                .zip(&renamed)
                .map(|((p, _), (q, _))| (q.clone(), p.clone()))
                .collect();
            let again = seen(&renamed, &|p| {
                back.get(p).cloned().unwrap_or_else(|| p.to_string())
            });
            assert_eq!(again.1, levels, "round {round}: the levels changed");
            assert_eq!(again.0, facts, "round {round}: the facts changed");
        }
    }
}
