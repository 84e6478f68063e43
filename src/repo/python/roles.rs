//! What each node of a graph is, read from what it does, never from its name: a node is a
//! judge when its update writes a state key that holds opinions (a model with a `score`
//! field) or when it (or a function of the repository it calls, three calls deep) asks an LLM
//! for output bound to such a model, or when it is bound to one persona label (the
//! rubric's `"Prosecutor"`, passed as data); a detective when it writes a key that holds evidence (a
//! model with a `found` field, or a `rationale` and a `confidence`, and no score). A node
//! whose update cannot be read, or that does neither, has no role: the verdict then reads the
//! graph's shape alone.
//!
//! The model fields are the challenge's schema (`Evidence`, `JudicialOpinion`), not names the
//! student chose; the class, the state keys and the node names may be anything.

use super::effects;
use super::expr::Expr;
pub use super::graph::Role;
use super::graph::{Action, GraphFacts, GraphNode};
use super::names::Repo;
use super::persona_prompts::persona_label;
use super::schema_binding::StructuredFacts;
use super::state::{StateClass, StateFacts};
use std::collections::{BTreeMap, BTreeSet};

/// A model of opinions: it carries a score.
pub fn is_opinion_model(c: &StateClass) -> bool {
    c.fields.iter().any(|f| f.name == "score")
}

/// A model of evidence: a finding (`found`) or a rationale with a confidence, and no score.
pub fn is_evidence_model(c: &StateClass) -> bool {
    let has = |n: &str| c.fields.iter().any(|f| f.name == n);
    !is_opinion_model(c) && (has("found") || (has("rationale") && has("confidence")))
}

/// The models a type annotation names (`Annotated[Dict[str, List[Evidence]], ior]`).
fn models<'a>(state: &'a StateFacts, annotation: &str) -> impl Iterator<Item = &'a StateClass> {
    annotation
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter_map(|w| state.class(w))
        .collect::<Vec<_>>()
        .into_iter()
}

/// A schema (`JudicialOpinion`, `pkg.Opinions`) that is a model of opinions, or a model
/// holding a list of them (one batched call for every criterion).
fn opinion_schema(state: &StateFacts, schema: &str) -> bool {
    let name = schema.split(',').next().unwrap_or("").trim();
    let name = name.rsplit('.').next().unwrap_or(name);
    state.class(name).is_some_and(|c| {
        is_opinion_model(c)
            || c.fields
                .iter()
                .any(|f| models(state, &f.annotation).any(is_opinion_model))
    })
}

/// The functions `(module, def line)` that `start` runs: itself, the functions defined inside
/// it (a factory's inner node), and the repository functions they call, three calls deep.
fn reached(repo: &Repo<'_>, start: (usize, usize)) -> BTreeSet<(usize, usize)> {
    let mut seen = BTreeSet::new();
    let mut frontier = vec![start];
    for _ in 0..=3 {
        let mut next = Vec::new();
        for (m, line) in frontier {
            let module = &repo.modules[m];
            let Some(f) = module.functions.iter().find(|f| f.line == line) else {
                continue;
            };
            if !seen.insert((m, line)) {
                continue;
            }
            // nested definitions (a factory's inner function) run as part of it
            for g in &module.functions {
                if g.line > f.line && g.end_line <= f.end_line {
                    next.push((m, g.line));
                }
            }
            for c in &module.calls {
                let inside = c
                    .func
                    .and_then(|i| module.functions.get(i))
                    .is_some_and(|g| g.line == f.line);
                if !inside {
                    continue;
                }
                if let Some(callee) = c.callee.as_deref()
                    && let Some((hm, h)) = repo.function(m, callee)
                {
                    next.push((hm, h.line));
                }
            }
        }
        frontier = next;
    }
    seen
}

/// A module constant (`prosecutor_node = make_judge(...)`) of module `m` or imported into it.
fn constant<'a>(repo: &Repo<'a>, m: usize, name: &str) -> Option<(usize, &'a Expr)> {
    if let Some(v) = repo.modules[m].constants.get(name) {
        return Some((m, v));
    }
    let q = repo.qualify(m, name);
    let (module, n) = q.rsplit_once('.')?;
    let i = repo.find_module(module)?;
    repo.modules[i].constants.get(n).map(|v| (i, v))
}

/// The factory that made a node's callable (`add_node("x", x_node)` where
/// `x_node = make_judge(...)`): the function whose inner function the node runs.
fn factory(repo: &Repo<'_>, n: &GraphNode) -> Option<(usize, usize)> {
    let m = repo.modules.iter().position(|x| x.path == n.path)?;
    let c = repo.modules[m]
        .calls
        .iter()
        .find(|c| c.line == n.line && c.method == "add_node")?;
    let action = if c.args.len() >= 2 {
        c.args.get(1)
    } else {
        c.kwargs
            .iter()
            .find(|(k, _)| k == "action")
            .map(|(_, v)| v)
            .or(c.args.first())
    }?;
    let (cm, value) = constant(repo, m, &action.dotted()?)?;
    let Expr::Call { func, .. } = value else {
        return None;
    };
    let (fm, f) = repo.function(cm, &func.dotted()?)?;
    Some((fm, f.line))
}

/// A node bound to one judge persona: `partial(judge, persona="Defense")`, a lambda passing
/// `"Defense"`, or a node function that calls a function of the repository with a persona
/// label (`return judge_node(state, "Prosecutor")`). The label is data the code passes (the
/// rubric's vocabulary), not a name.
fn persona_bound(repo: &Repo<'_>, n: &GraphNode, (m, line): (usize, usize)) -> bool {
    if let Some(Action::Func { bound, .. }) = &n.action
        && bound.iter().any(|b| persona_label(b).is_some())
    {
        return true;
    }
    let module = &repo.modules[m];
    module.calls.iter().any(|c| {
        c.func
            .and_then(|i| module.functions.get(i))
            .is_some_and(|f| f.line == line)
            && c.args
                .iter()
                .chain(c.kwargs.iter().map(|(_, v)| v))
                .any(|a| a.as_str().and_then(persona_label).is_some())
            && c.callee
                .as_deref()
                .is_some_and(|d| repo.function(m, d).is_some())
    })
}

/// Which role's output a state key of `g` holds: opinions (a type naming a model with a
/// `score`) or evidence, by the type the state declares for it, never by the key's name.
fn key_role(g: &GraphFacts, state: &StateFacts, key: &str) -> Option<Role> {
    let schema = g.state_type.as_deref().and_then(|t| state.class(t))?;
    let field = schema.fields.iter().find(|f| f.name == key)?;
    let mut judge = false;
    let mut detective = false;
    for m in models(state, &field.annotation) {
        judge |= is_opinion_model(m);
        detective |= is_evidence_model(m);
    }
    match (judge, detective) {
        (true, false) => Some(Role::Judge),
        (false, true) => Some(Role::Detective),
        _ => None,
    }
}

/// The Chief Justice's code, read from what it does: the functions `(module, def line)` run by
/// the nodes of `g` that read the state key holding the judges' opinions and are no judge
/// themselves (with the repository functions they call, three calls deep). Empty when the
/// state declares no such key or no node function reads it.
pub fn synthesis(repo: &Repo<'_>, g: &GraphFacts, state: &StateFacts) -> BTreeSet<(usize, usize)> {
    let mut memo = effects::Memo::new();
    let mut out = BTreeSet::new();
    for n in &g.nodes {
        if g.roles.get(&n.name) == Some(&Role::Judge) {
            continue;
        }
        let Some(Action::Func { module, line, .. }) = &n.action else {
            continue;
        };
        let Some(f) = repo.modules[*module]
            .functions
            .iter()
            .find(|f| f.line == *line)
        else {
            continue;
        };
        let e = effects::of_function_memo(repo, *module, f, &mut memo);
        if e.reads
            .keys()
            .any(|k| key_role(g, state, k) == Some(Role::Judge))
        {
            out.extend(reached(repo, (*module, *line)));
        }
    }
    out
}

/// The role of every node of `g` whose update writes opinions or evidence, or that asks for
/// opinions from an LLM.
pub fn analyse(
    repo: &Repo<'_>,
    g: &GraphFacts,
    state: &StateFacts,
    structured: &StructuredFacts,
) -> BTreeMap<String, Role> {
    let key_role = |key: &str| key_role(g, state, key);
    // the functions holding an LLM call bound to the opinion schema
    let asks_opinions: BTreeSet<(usize, usize)> = structured
        .calls
        .iter()
        .filter(|c| opinion_schema(state, &c.schema))
        .filter_map(|c| {
            let (m, module) = repo
                .modules
                .iter()
                .enumerate()
                .find(|(_, x)| x.path == c.path)?;
            let f = module
                .functions
                .iter()
                .filter(|f| f.line <= c.line && c.line <= f.end_line)
                .max_by_key(|f| f.line)?;
            Some((m, f.line))
        })
        .collect();
    let mut memo = effects::Memo::new();
    let mut roles = BTreeMap::new();
    for n in &g.nodes {
        let (start, e) = match &n.action {
            Some(Action::Func { module, line, .. }) => {
                let Some(f) = repo.modules[*module]
                    .functions
                    .iter()
                    .find(|f| f.line == *line)
                else {
                    continue;
                };
                let e = effects::of_function_memo(repo, *module, f, &mut memo);
                ((*module, *line), e)
            }
            Some(Action::Identity) => continue,
            // a callable made by a factory: what the factory's inner function asks for
            None => match factory(repo, n) {
                Some(start) => (start, effects::Effects::default()),
                None => continue,
            },
        };
        // what it writes and does not read back (an aggregator re-filing the evidence it
        // reads is no detective; a Chief Justice reading the opinions is no judge)
        let written: Vec<Role> = e
            .writes
            .keys()
            .filter(|k| !e.reads.contains_key(*k))
            .filter_map(|k| key_role(k))
            .collect();
        let judge = written.contains(&Role::Judge)
            || reached(repo, start)
                .iter()
                .any(|x| asks_opinions.contains(x))
            || persona_bound(repo, n, start);
        let detective = written.contains(&Role::Detective);
        // a node writing both (an aggregator re-filing everything) is neither
        match (judge, detective) {
            (true, false) => {
                roles.insert(n.name.clone(), Role::Judge);
            }
            (false, true) => {
                roles.insert(n.name.clone(), Role::Detective);
            }
            _ => {}
        }
    }
    roles
}
