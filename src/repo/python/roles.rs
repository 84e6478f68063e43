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
use super::syntax::ClassInfo;
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
                let Some(callee) = c.callee.as_deref() else {
                    continue;
                };
                if let Some((hm, h)) = repo.function(m, callee) {
                    next.push((hm, h.line));
                } else if let Some((hm, class)) = class(repo, m, callee) {
                    // a class it builds (`Bench().settle(state)`): its methods run too
                    let prefix = format!("{}.", class.name);
                    next.extend(
                        repo.modules[hm]
                            .functions
                            .iter()
                            .filter(|g| g.qualname.starts_with(&prefix))
                            .map(|g| (hm, g.line)),
                    );
                }
            }
        }
        frontier = next;
    }
    seen
}

/// The repository's class a call in module `m` names (`Bench`, `bench.Bench`), if any.
fn class<'a>(repo: &Repo<'a>, m: usize, dotted: &str) -> Option<(usize, &'a ClassInfo)> {
    if let Some(c) = repo.modules[m].classes.iter().find(|c| c.name == dotted) {
        return Some((m, c));
    }
    let q = repo.qualify(m, dotted);
    let (modpath, name) = q.rsplit_once('.')?;
    let i = repo.find_module(modpath)?;
    repo.modules[i]
        .classes
        .iter()
        .find(|c| c.name == name)
        .map(|c| (i, c))
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
    let (m, action) = add_node_action(repo, n)?;
    let (cm, value) = constant(repo, m, &action.dotted()?)?;
    let Expr::Call { func, .. } = value else {
        return None;
    };
    let (fm, f) = repo.function(cm, &func.dotted()?)?;
    Some((fm, f.line))
}

/// The add_node call of a node and the expression it passes as the node's callable.
fn add_node_action<'a>(repo: &Repo<'a>, n: &GraphNode) -> Option<(usize, &'a Expr)> {
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
    Some((m, action))
}

/// A node whose callable is a wrapper called in place (`add_node("x", safe(judge, "Defense",
/// {...}))`): the function of the repository it wraps (the first argument that is one), and
/// whether the call passes a persona label.
fn wrapped(repo: &Repo<'_>, n: &GraphNode) -> Option<((usize, usize), bool)> {
    let (m, action) = add_node_action(repo, n)?;
    let Expr::Call { args, kwargs, .. } = action else {
        return None;
    };
    let all = || args.iter().chain(kwargs.iter().map(|(_, v)| v));
    let (fm, f) = all().find_map(|a| repo.function(m, &a.dotted()?))?;
    let persona = all().any(|a| a.as_str().and_then(persona_label).is_some());
    Some(((fm, f.line), persona))
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
    if wrapped(repo, n).is_some_and(|(_, persona)| persona) {
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

/// The state keys holding the detectives' evidence (typed with an evidence model).
pub fn evidence_keys(g: &GraphFacts, state: &StateFacts) -> BTreeSet<String> {
    typed_keys(g, state, Role::Detective)
}

/// The keys of the graph's state schema whose type holds `role`'s model (opinions for the
/// judges, evidence for the detectives).
fn typed_keys(g: &GraphFacts, state: &StateFacts, role: Role) -> BTreeSet<String> {
    g.state_type
        .as_deref()
        .and_then(|t| state.class(t))
        .map(|c| {
            c.fields
                .iter()
                .filter(|f| key_role(g, state, &f.name) == Some(role))
                .map(|f| f.name.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// A function of the repository: (module index, line of its `def`).
pub type Def = (usize, usize);

/// The Chief Justice's code, read from what it does: the functions `(module, def line)` run by
/// the nodes of `g` that read the state key holding the judges' opinions and are no judge
/// themselves; when no node function is read reading it, the nodes after the judges that hand
/// the whole state to other code (`ChiefJustice().synthesize(state)`). Returned: those node
/// functions (in the graph's order) and every repository function they run, three calls deep,
/// with the routers that leave those nodes (and what they run).
/// Empty when the graph has no judges and no key typed to hold opinions.
pub fn synthesis(repo: &Repo<'_>, g: &GraphFacts, state: &StateFacts) -> (Vec<Def>, BTreeSet<Def>) {
    let mut memo = effects::Memo::new();
    let judge = |n: &str| g.roles.get(n) == Some(&Role::Judge);
    // the keys holding opinions: typed so, or written by a judge (a node that asks an LLM for
    // opinions or is bound to a persona)
    let mut opinions = typed_keys(g, state, Role::Judge);
    for n in g.nodes.iter().filter(|n| judge(&n.name)) {
        if let Some(e) = node_effects(repo, n, &mut memo) {
            opinions.extend(e.writes.keys().cloned());
        }
    }
    // the nodes the judges lead to, in the order they are reached (the Chief Justice runs after
    // the judges: a node before them that reads the opinions, to reset or log them, is not it)
    let mut after: Vec<&str> = Vec::new();
    let mut todo: Vec<&str> = g
        .nodes
        .iter()
        .filter(|n| judge(&n.name))
        .map(|n| n.name.as_str())
        .collect();
    while let Some(x) = todo.pop() {
        for e in g.edges.iter().filter(|e| e.from == x) {
            if judge(&e.to) || after.contains(&e.to.as_str()) {
                continue;
            }
            after.push(e.to.as_str());
            todo.push(e.to.as_str());
        }
    }
    let mut readers: Vec<(bool, (usize, usize), &str)> = Vec::new();
    for n in g.nodes.iter().filter(|n| !judge(&n.name)) {
        let (Some(start), Some(e)) = (runs(repo, n), node_effects(repo, n, &mut memo)) else {
            continue;
        };
        if e.reads.keys().any(|k| opinions.contains(k))
            && !readers.iter().any(|(_, s, _)| *s == start)
        {
            readers.push((after.contains(&n.name.as_str()), start, n.name.as_str()));
        }
    }
    let downstream = readers.iter().any(|(a, _, _)| *a);
    let readers: Vec<((usize, usize), &str)> = readers
        .into_iter()
        .filter(|(a, _, _)| *a || !downstream)
        .map(|(_, s, name)| (s, name))
        .collect();
    let mut nodes: Vec<(usize, usize)> = readers.iter().map(|(s, _)| *s).collect();
    let mut names: Vec<&str> = readers.iter().map(|(_, name)| *name).collect();
    if nodes.is_empty() {
        // the nodes the judges lead to that pass the state whole to code not read here
        for name in &after {
            let Some(n) = g.nodes.iter().find(|n| n.name == *name) else {
                continue;
            };
            if let Some(start) = runs(repo, n)
                && passes_state(repo, start)
                && !nodes.contains(&start)
            {
                nodes.push(start);
                names.push(name);
            }
        }
    }
    let mut reach = BTreeSet::new();
    for start in &nodes {
        reach.extend(reached(repo, *start));
    }
    // the routers that leave those nodes choose the stage's next step (a re-run when the
    // judges disagree): they run as part of it
    for r in g
        .routers
        .iter()
        .filter(|r| names.contains(&r.source.as_str()))
    {
        if let Some(func) = r.func {
            reach.extend(reached(repo, func));
        }
    }
    (nodes, reach)
}

/// The function hands its first parameter (the state) whole to a call.
fn passes_state(repo: &Repo<'_>, (m, line): (usize, usize)) -> bool {
    let module = &repo.modules[m];
    let Some((i, f)) = module
        .functions
        .iter()
        .enumerate()
        .find(|(_, f)| f.line == line)
    else {
        return false;
    };
    let Some(state) = f.params.iter().find(|p| p.as_str() != "self") else {
        return false;
    };
    module.calls.iter().any(|c| {
        c.func == Some(i)
            && c.args
                .iter()
                .chain(c.kwargs.iter().map(|(_, v)| v))
                .any(|a| matches!(a, Expr::Name(n) if n == state))
    })
}

/// What a node's function reads and writes, when it runs a function of the repository.
fn node_effects(
    repo: &Repo<'_>,
    n: &GraphNode,
    memo: &mut effects::Memo,
) -> Option<effects::Effects> {
    let (module, line) = runs(repo, n)?;
    let f = repo.modules[module]
        .functions
        .iter()
        .find(|f| f.line == line)?;
    Some(effects::of_function_memo(repo, module, f, memo))
}

/// The function of the repository a node runs: its resolved action, the function a wrapper
/// called in `add_node` wraps, or the `__call__` of the instance it is given.
fn runs(repo: &Repo<'_>, n: &GraphNode) -> Option<(usize, usize)> {
    match &n.action {
        Some(Action::Func { module, line, .. }) => Some((*module, *line)),
        Some(Action::Identity) => None,
        None => wrapped(repo, n)
            .map(|(f, _)| f)
            .or_else(|| callable_instance(repo, n)),
    }
}

/// A node given an instance of a class of the repository (`add_node("p", Prosecutor())`, or a
/// module constant holding one): LangGraph runs the instance's `__call__`, the class's own or
/// one it inherits from a class of the repository. Its `(module, def line)`.
fn callable_instance(repo: &Repo<'_>, n: &GraphNode) -> Option<(usize, usize)> {
    let (m, action) = add_node_action(repo, n)?;
    let (cm, value) = match action {
        Expr::Name(name) => constant(repo, m, name)?,
        other => (m, other),
    };
    let Expr::Call { func, .. } = value else {
        return None;
    };
    let mut todo = vec![class(repo, cm, &func.dotted()?)?];
    let mut seen = 0;
    while let Some((hm, c)) = todo.pop() {
        seen += 1;
        if seen > 16 {
            break;
        }
        let method = format!("{}.__call__", c.name);
        if let Some(f) = repo.modules[hm]
            .functions
            .iter()
            .find(|f| f.qualname == method && c.line <= f.line && f.line <= c.end_line)
        {
            return Some((hm, f.line));
        }
        todo.extend(c.bases.iter().rev().filter_map(|b| class(repo, hm, b)));
    }
    None
}

/// The judge nodes of `g` (in the graph's order; the Chief Justice's nodes `synthesis` left
/// out) whose functions run the code at each `(path, line)`: the node's own function, or one
/// it reaches three calls deep.
fn judges_running(
    repo: &Repo<'_>,
    g: &GraphFacts,
    synthesis: &[Def],
    sites: &[(&str, usize)],
) -> Vec<Vec<String>> {
    let judges: Vec<(&str, BTreeSet<Def>)> = g
        .nodes
        .iter()
        .filter(|n| g.roles.get(&n.name) == Some(&Role::Judge))
        .filter_map(|n| {
            let start = runs(repo, n).or_else(|| factory(repo, n))?;
            (!synthesis.contains(&start)).then(|| (n.name.as_str(), reached(repo, start)))
        })
        .collect();
    sites
        .iter()
        .map(|(path, line)| {
            let Some(m) = repo.modules.iter().position(|x| x.path == *path) else {
                return Vec::new();
            };
            let Some(f) = repo.modules[m]
                .functions
                .iter()
                .filter(|f| f.line <= *line && *line <= f.end_line)
                .max_by_key(|f| f.line)
            else {
                return Vec::new();
            };
            judges
                .iter()
                .filter(|(_, reach)| reach.contains(&(m, f.line)))
                .map(|(n, _)| n.to_string())
                .collect()
        })
        .collect()
}

/// Fills in which judge nodes of graph `g` (not the Chief Justice's nodes `synthesis`) make
/// each structured call: each invocation, or the binding when no invocation was read.
pub fn cover(repo: &Repo<'_>, g: &GraphFacts, synthesis: &[Def], facts: &mut StructuredFacts) {
    let mut sites: Vec<(String, usize)> = Vec::new();
    for c in &facts.calls {
        sites.push((c.path.clone(), c.line));
        sites.extend(c.invoked.iter().map(|i| (i.at.path.clone(), i.at.line)));
    }
    let refs: Vec<(&str, usize)> = sites.iter().map(|(p, l)| (p.as_str(), *l)).collect();
    let mut judges = judges_running(repo, g, synthesis, &refs).into_iter();
    for c in &mut facts.calls {
        c.judges = judges.next().unwrap_or_default();
        for i in &mut c.invoked {
            i.judges = judges.next().unwrap_or_default();
        }
    }
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
    let asks_opinions = opinion_askers(repo, state, structured);
    let mut memo = effects::Memo::new();
    let mut roles = BTreeMap::new();
    // what each judge reads and writes, and whether it writes opinions or is bound to a persona
    // (a node after other judges that reads their opinions and writes none of their keys is
    // their Chief Justice, whatever model it asks for)
    let mut judge_reads: BTreeMap<String, JudgeIo> = BTreeMap::new();
    // what each node whose update is read reads
    let mut node_reads: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for n in &g.nodes {
        let Some((start, e)) = started(repo, n, &mut memo) else {
            continue;
        };
        // what it writes and does not read back (an aggregator re-filing the evidence it
        // reads is no detective; a Chief Justice reading the opinions is no judge)
        let written: Vec<Role> = e
            .writes
            .keys()
            .filter(|k| !e.reads.contains_key(*k))
            .filter_map(|k| key_role(k))
            .collect();
        node_reads.insert(n.name.clone(), e.reads.keys().cloned().collect());
        let writes_opinions = written.contains(&Role::Judge);
        let bound = persona_bound(repo, n, start);
        let judge = writes_opinions
            || bound
            || reached(repo, start)
                .iter()
                .any(|x| asks_opinions.contains(x));
        let detective = written.contains(&Role::Detective);
        // a node writing both (an aggregator re-filing everything) is neither
        match (judge, detective) {
            (true, false) => {
                roles.insert(n.name.clone(), Role::Judge);
                judge_reads.insert(
                    n.name.clone(),
                    (
                        writes_opinions || bound,
                        e.reads.keys().cloned().collect(),
                        e.writes.keys().cloned().collect(),
                    ),
                );
            }
            (false, true) => {
                roles.insert(n.name.clone(), Role::Detective);
            }
            _ => {}
        }
    }
    let typed = typed_keys(g, state, Role::Judge);
    for name in chief_justices(g, &judge_reads, &typed) {
        roles.remove(&name);
    }
    // where the graph decides the layers, a layer is what its fan-out runs in parallel: a
    // node that writes opinions or evidence but runs only after the layer's consumer (a debate
    // the Chief Justice routes to) or never reaches it (an error branch taken instead of the
    // judges) is no member of the layer, and not reported as left out of its fan-out
    let mut opinions = typed;
    for (name, (_, _, writes)) in &judge_reads {
        if roles.get(name) == Some(&Role::Judge) {
            opinions.extend(writes.iter().cloned());
        }
    }
    let chief: BTreeSet<String> = node_reads
        .iter()
        .filter(|(n, reads)| {
            roles.get(*n) != Some(&Role::Judge) && reads.iter().any(|k| opinions.contains(k))
        })
        .map(|(n, _)| n.clone())
        .collect();
    off_layer(g, &mut roles, Role::Judge, &chief);
    let judges: BTreeSet<String> = roles
        .iter()
        .filter(|(_, r)| **r == Role::Judge)
        .map(|(n, _)| n.clone())
        .collect();
    off_layer(g, &mut roles, Role::Detective, &judges);
    roles
}

/// What a judge node does: whether it surely judges (writes opinions or is bound to a
/// persona), the keys it reads, the keys it writes.
type JudgeIo = (bool, BTreeSet<String>, BTreeSet<String>);

/// The functions holding an LLM call bound to the opinion schema: (module, line of the `def`).
fn opinion_askers(
    repo: &Repo<'_>,
    state: &StateFacts,
    structured: &StructuredFacts,
) -> BTreeSet<(usize, usize)> {
    structured
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
        .collect()
}

/// Where node `n` starts (module, line of the function it runs) and what its update does;
/// `None` for a node that passes the state on or whose function cannot be found.
fn started(
    repo: &Repo<'_>,
    n: &GraphNode,
    memo: &mut effects::Memo,
) -> Option<((usize, usize), effects::Effects)> {
    match &n.action {
        Some(Action::Func { module, line, .. }) => {
            let f = repo.modules[*module]
                .functions
                .iter()
                .find(|f| f.line == *line)?;
            let e = effects::of_function_memo(repo, *module, f, memo);
            Some(((*module, *line), e))
        }
        Some(Action::Identity) => None,
        // a callable made by a factory: what the factory's inner function asks for; a
        // wrapper called in place: what the function it wraps does; an instance of a
        // class: what its `__call__` does
        None => match (factory(repo, n), runs(repo, n)) {
            (Some(start), _) => Some((start, effects::Effects::default())),
            (None, Some(start)) => node_effects(repo, n, memo).map(|e| (start, e)),
            (None, None) => None,
        },
    }
}

/// The judges that are their Chief Justice: a judge not surely one that reads what other
/// judges before it write (or the opinion keys the schema types, `typed`), and writes none of
/// what they write.
fn chief_justices(
    g: &GraphFacts,
    judge_reads: &BTreeMap<String, JudgeIo>,
    typed: &BTreeSet<String>,
) -> Vec<String> {
    judge_reads
        .iter()
        .filter(|(name, (certain, reads, writes))| {
            let before: Vec<&BTreeSet<String>> = judge_reads
                .iter()
                .filter(|(other, _)| other != name && leads_to(g, other, name))
                .map(|(_, (_, _, w))| w)
                .collect();
            let theirs = |k: &String| typed.contains(k) || before.iter().any(|w| w.contains(k));
            !certain
                && !before.is_empty()
                && reads.iter().any(theirs)
                && !writes.iter().any(|k| before.iter().any(|w| w.contains(k)))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The nodes reached from `from` along [`GraphFacts::successors`], never through `blocked`
/// (`from` itself included).
fn reach<'a>(g: &'a GraphFacts, from: &'a str, blocked: &BTreeSet<String>) -> BTreeSet<&'a str> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo = vec![from];
    while let Some(x) = todo.pop() {
        if !seen.insert(x) {
            continue;
        }
        for y in g.successors(x) {
            if !blocked.contains(y) {
                todo.push(y);
            }
        }
    }
    seen
}

/// The nodes of `role` outside the fan-out that runs two or more of them in parallel that
/// the graph places elsewhere: reached from START only through one of `consumers` (the
/// nodes that read the layer's output: the Chief Justice for the judges, the judges for the
/// detectives), or reaching none of them. Their role is dropped. Nothing changes when no
/// fan-out runs two of the role, when nothing consumes the layer, or when START's reach is
/// not read (the layer's own nodes not reached).
fn off_layer(
    g: &GraphFacts,
    roles: &mut BTreeMap<String, Role>,
    role: Role,
    consumers: &BTreeSet<String>,
) {
    let has = |roles: &BTreeMap<String, Role>, n: &str| roles.get(n) == Some(&role);
    let Some(layer) = g
        .fan_out
        .iter()
        .find(|f| f.to.iter().filter(|n| has(roles, n)).count() >= 2)
    else {
        return;
    };
    if consumers.is_empty() {
        return;
    }
    let members: Vec<&str> = layer
        .to
        .iter()
        .filter(|n| has(roles, n))
        .map(String::as_str)
        .collect();
    let before = reach(g, "START", consumers);
    if !members.iter().all(|m| before.contains(m)) {
        return;
    }
    let off: Vec<String> = roles
        .iter()
        .filter(|(n, r)| **r == role && !members.contains(&n.as_str()))
        .filter(|(n, _)| {
            let feeds = reach(g, n, &BTreeSet::new())
                .iter()
                .any(|x| consumers.contains(*x));
            !before.contains(n.as_str()) || !feeds
        })
        .map(|(n, _)| n.clone())
        .collect();
    for n in off {
        roles.remove(&n);
    }
}

/// A node of `g` leads to another along its edges and its routers' targets.
fn leads_to(g: &GraphFacts, from: &str, to: &str) -> bool {
    reach(g, from, &BTreeSet::new())
        .into_iter()
        .any(|x| g.successors(x).any(|y| y == to))
}
