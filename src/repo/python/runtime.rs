//! Run-time semantics of a resolved LangGraph graph: which nodes one invocation runs and how
//! often, and the defects that follow (GUIDE §8).
//!
//! LangGraph runs a `StateGraph` in supersteps. Every node triggered in step k runs in step k;
//! a plain edge `a -> c` triggers `c` in step k+1 whenever `a` ran in step k (several plain
//! edges whose sources ran in the same step trigger `c` once); `add_edge([a, b], c)` waits
//! until both ran; a router (conditional edge, `Send`, `Command`) triggers one of its outcomes,
//! and every outcome is considered (a router whose test the known values decide takes only the
//! outcome they allow: literals a node sets, and counters a node sets to their value plus one,
//! followed from the invocation's literal). Each `Send` is a task of its own: a node sent to
//! and also triggered by an edge runs twice in that superstep. A node's update is filtered by the state schema (keys the
//! schema does not declare are dropped), but the router attached to that node still sees it.
//!
//! Defect kinds (`repo.graph.defects[]`):
//! - `duplicate_execution`: a node runs more than once in one invocation — triggered in two
//!   supersteps by plain edges (two entry points, branches of different lengths), re-run as a
//!   bystander of a loop (a retry edge that re-runs siblings), or a node that can end the run
//!   re-run by a loop;
//! - `unreachable_node`: added but never triggered from `START`, or only through a route whose
//!   condition tests a key nothing sets;
//! - `unbounded_loop`: a cycle with no exit, or whose exits test only keys that no node of the
//!   cycle writes, so it runs until the recursion limit;
//! - `undeclared_state_key`: a node's update holds a key the schema does not declare;
//! - `unknown_state_key`: a router or node reads a key that nothing can set (declared but neither
//!   written nor in the graph's input, see [`super::inputs`]; undeclared, so dropped even from the
//!   input; or a key of a dict field that nothing puts into it, see [`super::dict_keys`]); a
//!   router's route taken only when such a read finds something can never be taken;
//! - `whole_state_return`: a node re-sends the current value of a list with an appending
//!   reducer while it holds items (the whole state, a copy of it, `state["xs"] + [x]`, or a
//!   local bound to the list, possibly grown in place first): the list is appended to itself;
//! - `concurrent_write`: two writes to a field without a reducer in one superstep (LangGraph
//!   raises `InvalidUpdateError`), one defect per set of writers;
//! - `persona_mismatch` and `rubric_logic_lookup` (see [`super::persona_names`]);
//! - `import_error` (beyond the issue's list): the graph's module imports a name that the
//!   repository module it names does not define, so the graph cannot even be imported.
//!
//! A false defect costs a student marks: where the code does not let us decide (unresolved
//! wiring, a node whose function cannot be read, an unknown schema), the analysis stays silent
//! and says why in `runtime_notes`.

use super::dict_keys;
use super::effects::{self, Effects};
use super::graph::{Action, DeadRoute, Defect, EmptyField, GraphFacts, KeyCause};
use super::inputs::{self, Inputs};
use super::names::Repo;
use super::state::StateFacts;
use super::supersteps::{BUDGET, Explored, MAX_CHOICES, Machine, NodeWrites, RouterSpec};
use std::collections::{BTreeMap, BTreeSet};

/// Largest graph analysed (a student graph has tens of nodes; a crafted one may have
/// thousands, and the cycle search is quadratic).
const MAX_NODES: usize = 400;

/// Reducers whose update is appended to the current value (so re-sending the value doubles it).
fn appends(reducer: &str) -> bool {
    let r = reducer.rsplit('.').next().unwrap_or(reducer);
    matches!(r, "add" | "add_messages" | "concat" | "iadd")
}

/// The schema's declared fields (own and inherited) and their reducers; `None` when the schema
/// cannot be read completely.
fn schema(
    repo: &Repo<'_>,
    state: &StateFacts,
    graph_module: Option<usize>,
    name: &str,
) -> Option<(BTreeSet<String>, BTreeMap<String, String>)> {
    let mut fields = BTreeSet::new();
    let mut reducers = BTreeMap::new();
    let mut todo = vec![name.rsplit('.').next().unwrap_or(name).to_string()];
    let mut seen = BTreeSet::new();
    while let Some(cls) = todo.pop() {
        if !seen.insert(cls.clone()) {
            continue;
        }
        let c = class_named(repo, state, graph_module, &cls)?;
        fields.extend(c.fields.iter().map(|f| f.name.clone()));
        for f in &c.fields {
            if let Some(r) = &f.reducer {
                reducers.insert(f.name.clone(), r.clone());
            }
        }
        for r in state.reducers.iter().filter(|r| r.class == cls) {
            fields.insert(r.field.clone());
            reducers.insert(r.field.clone(), r.reducer.clone());
        }
        let info = repo
            .modules
            .iter()
            .find(|m| m.path == c.path)?
            .classes
            .iter()
            .find(|k| k.name == cls)?;
        for b in &info.bases {
            let simple = b.rsplit('.').next().unwrap_or(b);
            match simple {
                "TypedDict" | "BaseModel" | "Generic" | "object" => {}
                "MessagesState" => {
                    fields.insert("messages".into());
                    reducers.insert("messages".into(), "add_messages".into());
                }
                _ if b.contains('[') => {}
                other => todo.push(other.to_string()),
            }
        }
    }
    Some((fields, reducers))
}

/// The state class `name` as the graph's module sees it: the only class of that name, or the
/// one its imports (or its own definitions) point to; `None` when that cannot be told.
fn class_named<'s>(
    repo: &Repo<'_>,
    state: &'s StateFacts,
    graph_module: Option<usize>,
    name: &str,
) -> Option<&'s super::state::StateClass> {
    let all: Vec<&super::state::StateClass> = state
        .typed_dicts
        .iter()
        .chain(&state.pydantic_models)
        .filter(|c| c.name == name)
        .collect();
    if all.len() <= 1 {
        return all.first().copied();
    }
    let m = graph_module?;
    let qualified = repo.qualify(m, name);
    let module = qualified
        .rsplit_once('.')
        .and_then(|(module, _)| repo.find_module(module))
        .unwrap_or(m);
    let path = &repo.modules[module].path;
    all.into_iter().find(|c| &c.path == path)
}

struct Ctx<'a, 'r> {
    repo: &'a Repo<'r>,
    g: &'a GraphFacts,
    /// Effects of each node's function, `None` when it cannot be read.
    effects: BTreeMap<&'a str, Option<Effects>>,
    /// Effects of each router function (aligned with `g.routers`), read once.
    routers: Vec<Option<Effects>>,
    declared: Option<BTreeSet<String>>,
    reducers: BTreeMap<String, String>,
    /// What the graph's invocations pass, when every one of them can be read.
    inputs: Option<Inputs>,
}

impl Ctx<'_, '_> {
    fn node_loc(&self, n: &str) -> String {
        self.g
            .nodes
            .iter()
            .find(|x| x.name == n)
            .map_or_else(|| self.g.location(), |x| format!("{}:{}", x.path, x.line))
    }

    fn effects_loc(&self, n: &str, line: usize) -> String {
        match self
            .g
            .nodes
            .iter()
            .find(|x| x.name == n)
            .and_then(|x| x.action.as_ref())
        {
            Some(Action::Func { module, .. }) => {
                format!("{}:{line}", self.repo.modules[*module].path)
            }
            _ => self.node_loc(n),
        }
    }

    /// Whether the field's reducer appends the update to the current value: `operator.add` and
    /// its kin, or a repository function that returns its two arguments added (`left + right`).
    fn appending(&self, field: &str) -> bool {
        let Some(r) = self.reducers.get(field) else {
            return false;
        };
        if appends(r) {
            return true;
        }
        let Some(gm) = self.repo.modules.iter().position(|m| m.path == self.g.path) else {
            return false;
        };
        let Some((_, f)) = self.repo.function(gm, r) else {
            return false;
        };
        let params: Vec<&String> = f.params.iter().filter(|p| *p != "self").collect();
        let [a, b] = params[..] else { return false };
        !f.returns.is_empty()
            && f.returns.iter().all(|ret| match ret {
                super::expr::Expr::BinOp { op, left, right } => {
                    op == "+"
                        && super::graph::mentions_word(&left.render(), a)
                        && super::graph::mentions_word(&right.render(), b)
                }
                _ => false,
            })
    }

    fn all_known(&self) -> bool {
        self.effects
            .values()
            .all(|e| e.as_ref().is_some_and(|e| e.known))
    }

    fn router_effects(&self, r: &super::graph::Router) -> Option<&Effects> {
        let i = self.g.routers.iter().position(|x| std::ptr::eq(x, r))?;
        self.routers[i].as_ref()
    }
}

/// What the run-time analysis found for one graph.
pub struct Analysis {
    pub defects: Vec<Defect>,
    /// What could not be decided, and why the analysis stayed silent on it.
    pub notes: Vec<String>,
    /// Run counts, reachability and every loop bound were decided (no silence on them).
    pub decided: bool,
    /// The nodes that really join branches (triggered by several nodes in one run), when the
    /// simulation could decide it.
    pub fan_in: Option<BTreeSet<String>>,
    /// Conditional routes that can never be taken.
    pub dead: Dead,
    /// Reducer fields that hold nothing in any run.
    pub empty: Vec<EmptyField>,
}

pub fn analyse(repo: &Repo<'_>, g: &GraphFacts, state: &StateFacts) -> Analysis {
    let mut notes = Vec::new();
    if g.nodes.len() > MAX_NODES || g.edges.len() > 4 * MAX_NODES {
        notes.push(format!(
            "{} nodes and {} edges: more than the run-time analysis takes on ({MAX_NODES} nodes); run counts, reachability, loop bounds and state keys not checked",
            g.nodes.len(),
            g.edges.len()
        ));
        return Analysis {
            defects: Vec::new(),
            notes,
            decided: false,
            fan_in: None,
            dead: Vec::new(),
            empty: Vec::new(),
        };
    }
    let graph_module = repo.modules.iter().position(|m| m.path == g.path);
    let (declared, reducers) = match g
        .state_type
        .as_deref()
        .and_then(|s| schema(repo, state, graph_module, s))
    {
        Some((d, r)) => (Some(d), r),
        None => {
            notes.push(format!(
                "state schema `{}` could not be read completely: state keys not checked",
                g.state_type.as_deref().unwrap_or("?")
            ));
            (None, BTreeMap::new())
        }
    };
    let mut memo = effects::Memo::new();
    let effects = node_effects(repo, g, &mut memo);
    notes.extend(computed_key_notes(repo, g, &effects));
    let routers = g
        .routers
        .iter()
        .map(|r| {
            let (m, line) = r.func?;
            let f = repo.modules[m].functions.iter().find(|f| f.line == line)?;
            Some(effects::of_function_memo(repo, m, f, &mut memo))
        })
        .collect();
    let ctx = Ctx {
        repo,
        g,
        effects,
        routers,
        declared,
        reducers,
        inputs: inputs::of_graph(repo, g),
    };
    let mut defects = Vec::new();
    defects.extend(broken_imports(repo, graph_module));
    defects.extend(undeclared_keys(&ctx));
    let (unknown, dead) = unknown_keys(&ctx, repo, &mut notes);
    defects.extend(unknown);
    let (loop_defects, loops_decided, stuck) = loops(&ctx, &mut notes);
    let sim = simulate(&ctx, &dead, &stuck, &mut notes);
    // a loop no run enters never runs (its nodes are reported unreachable)
    defects.extend(loop_defects.into_iter().filter(|d| {
        sim.reached
            .as_ref()
            .is_none_or(|r| d.nodes.iter().any(|n| r.contains(n)))
    }));
    for d in sim.defects {
        // a loop the static check already reported is not reported twice
        if d.kind == "unbounded_loop"
            && defects
                .iter()
                .any(|x| x.kind == d.kind && x.nodes == d.nodes)
        {
            continue;
        }
        defects.push(d);
    }
    if !sim.doubling_decided {
        defects.extend(whole_state(&ctx));
    }
    let empty = empty_fields(&ctx, repo);
    Analysis {
        defects,
        notes,
        decided: loops_decided && sim.fan_in.is_some(),
        fan_in: sim.fan_in,
        dead,
        empty,
    }
}

/// The effects of each node's function (a node that passes the state on writes it whole; a
/// wrapped function's effects are completed by its wrapper's), `None` when it cannot be read.
fn node_effects<'g>(
    repo: &Repo<'_>,
    g: &'g GraphFacts,
    memo: &mut effects::Memo,
) -> BTreeMap<&'g str, Option<Effects>> {
    let mut effects = BTreeMap::new();
    for n in &g.nodes {
        let e = match &n.action {
            Some(Action::Identity) => Some(Effects {
                whole_state: Some(n.line),
                known: true,
                ..Effects::default()
            }),
            Some(Action::Func {
                module,
                line,
                wrapper,
                ..
            }) => repo.modules[*module]
                .functions
                .iter()
                .find(|f| f.line == *line)
                .map(|f| effects::of_function_memo(repo, *module, f, memo))
                .map(|e| match wrapper {
                    Some((wm, wl)) => {
                        let w = repo.modules[*wm]
                            .functions
                            .iter()
                            .find(|f| f.line == *wl)
                            .map(|f| effects::of_function_memo(repo, *wm, f, memo));
                        effects::wrapped(e, w)
                    }
                    None => e,
                }),
            None => None,
        };
        effects.insert(n.name.as_str(), e);
    }
    effects
}

/// A note for each node that writes the state under a key computed at run time: which keys it
/// sets is not known.
fn computed_key_notes(
    repo: &Repo<'_>,
    g: &GraphFacts,
    effects: &BTreeMap<&str, Option<Effects>>,
) -> Vec<String> {
    let mut notes = Vec::new();
    for (n, e) in effects {
        let Some(e) = e.as_ref() else { continue };
        if let Some(line) = e.computed_key {
            let at = match g
                .nodes
                .iter()
                .find(|x| x.name == *n)
                .and_then(|x| x.action.as_ref())
            {
                Some(Action::Func { module, .. }) => {
                    format!("{}:{line}", repo.modules[*module].path)
                }
                _ => format!("line {line}"),
            };
            notes.push(if e.computed_dict {
                format!(
                    "{n} writes the state under a key computed at run time ({at}): which keys it sets is not known, so no key is called unset on its account"
                )
            } else {
                format!(
                    "{n} writes the state under a key computed at run time ({at}): which keys it sets is not known, so no top-level key is called unset on its account (each value it writes so is a list, string or number literal, which puts no entry into a dict field)"
                )
            });
        }
    }
    notes
}

/// The schema's fields declared with a reducer that hold nothing in any run, when that can be
/// decided: a dict field whose every source of keys is read and gives none (see
/// [`dict_field`]); a list (or other) field that the input does not give (or gives empty),
/// that no node writes (a re-send of its current value aside), whose every node's update is
/// read, and that nothing in the repository changes in place. A field written only by nodes
/// that never run is not listed (the analysis stays on the safe side).
fn empty_fields(ctx: &Ctx, repo: &Repo<'_>) -> Vec<EmptyField> {
    let (Some(declared), Some(inputs)) = (&ctx.declared, &ctx.inputs) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (f, reducer) in &ctx.reducers {
        if !declared.contains(f) {
            continue;
        }
        let why = if dict_keys::merges(reducer) {
            match dict_field(ctx, repo, f) {
                Some(field) if field.keys().is_empty() => field.why_empty(),
                _ => continue,
            }
        } else {
            let written = ctx.effects.values().flatten().any(|e| {
                e.writes.contains_key(f) && !e.resends.contains_key(f)
                    || e.fills.contains_key(f)
                    || e.adds.contains(f)
            });
            if !ctx.all_known()
                || written
                || inputs.keys.get(f).copied().unwrap_or(false)
                || list_changed_in_place(repo, f)
            {
                continue;
            }
            let resenders: Vec<&str> = ctx
                .effects
                .iter()
                .filter(|(_, e)| {
                    e.as_ref()
                        .is_some_and(|e| e.whole_state.is_some() || e.resends.contains_key(f))
                })
                .map(|(n, _)| *n)
                .collect();
            format!(
                "nothing ever puts an item into `{f}` (the graph's input {}; no node writes it{}; nothing changes it in place)",
                if inputs.keys.contains_key(f) {
                    "gives it empty"
                } else {
                    "does not give it"
                },
                match resenders.as_slice() {
                    [] => String::new(),
                    [one] => format!(" ({one} only re-sends its current value)"),
                    many => format!(" ({} only re-send its current value)", many.join(", ")),
                }
            )
        };
        out.push(EmptyField {
            field: f.clone(),
            reducer: reducer.clone(),
            why,
        });
    }
    out
}

/// Whether any module of the repository may change the value of `field` in place as a list or
/// a dict (`x["field"].append(..)`, `x.field += ..`, `x["field"][0] = ..`, or the same on a
/// local bound to it). Read from the text, over-approximated: a `true` only makes the analysis
/// silent.
fn list_changed_in_place(repo: &Repo<'_>, field: &str) -> bool {
    if dict_keys::changed_in_place(repo, field) {
        return true;
    }
    let f = regex::escape(field);
    let read = format!(r#"(?:\.get\(\s*["']{f}["'][^)\n]*\)|\[\s*["']{f}["']\s*\]|\.{f}\b)"#);
    let mutate = r"\s*(?:\+=|\*=|\.(?:append|extend|insert|remove|sort|reverse)\()";
    let (Ok(direct), Ok(alias)) = (
        regex::Regex::new(&format!("{read}{mutate}")),
        regex::Regex::new(&format!(
            r"(?m)^\s*(\w+)\s*(?::[^=\n]*)?=\s*[\w.]+{read}\s*$"
        )),
    ) else {
        return true;
    };
    repo.modules.iter().any(|m| {
        direct.is_match(&m.source)
            || alias.captures_iter(&m.source).any(|c| {
                regex::Regex::new(&format!(r"\b{}{mutate}", regex::escape(&c[1])))
                    .map_or(true, |re| re.is_match(&m.source))
            })
    })
}

/// `import_error`: the graph's module imports a name from a module of the repository that
/// defines no such name, so importing the graph raises `ImportError` and nothing runs.
/// Silent when the target module could define it in a way not read here (a star import,
/// `__getattr__`, `globals()`, recovered syntax errors).
fn broken_imports(repo: &Repo<'_>, graph_module: Option<usize>) -> Vec<Defect> {
    let Some(gm) = graph_module else {
        return Vec::new();
    };
    let module = &repo.modules[gm];
    let mut out = Vec::new();
    for (local, qualified) in &module.imports {
        if local.starts_with('*') {
            continue;
        }
        let Some((from, name)) = qualified.rsplit_once('.') else {
            continue;
        };
        let Some(t) = repo.find_module(from) else {
            continue;
        };
        let target = &repo.modules[t];
        if t == gm
            || target.module != from
            || repo.find_module(qualified).is_some()
            || target.syntax_errors
            || target.truncated
            || target.imports.keys().any(|k| k.starts_with('*'))
            || defines(&target.source, name)
        {
            continue;
        }
        let line = module
            .source
            .lines()
            .position(|l| l.contains("import") && super::graph::mentions_word(l, name))
            .map_or(1, |i| i + 1);
        out.push(Defect {
            cause: None,
            fields_only: false,
            kind: "import_error".into(),
            nodes: vec![local.clone()],
            location: format!("{}:{line}", module.path),
            detail: format!(
                "{} imports `{name}` from {}, which defines no such name: importing the graph raises ImportError, so the graph cannot run at all",
                module.path, target.path
            ),
        });
    }
    out
}

/// Whether module source defines `name` at any level: `def`, `class`, an assignment, an
/// import, or a dynamic definition that cannot be ruled out.
fn defines(source: &str, name: &str) -> bool {
    if source.contains("__getattr__") || source.contains("globals()") {
        return true;
    }
    source.lines().any(|l| {
        let t = l.trim_start();
        let code = t.split('#').next().unwrap_or("");
        let after_kw = |kw: &str| {
            code.strip_prefix(kw)
                .map(|r| r.trim_start())
                .is_some_and(|r| {
                    r.starts_with(name)
                        && !r[name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
        };
        after_kw("def ")
            || after_kw("async def ")
            || after_kw("class ")
            || ((code.starts_with("import ") || code.starts_with("from "))
                && super::graph::mentions_word(code, name))
            || (code.starts_with(name) && {
                let rest = code[name.len()..].trim_start();
                rest.starts_with('=') && !rest.starts_with("==")
                    || rest.starts_with(':')
                    || rest.starts_with(',')
            })
            || (code.contains('=') && !code.starts_with("if ") && {
                // tuple targets `a, name = ...`
                let lhs = code.split('=').next().unwrap_or("");
                lhs.contains(',') && super::graph::mentions_word(lhs, name)
            })
    })
}

/// `` `a` `` or `` `a` and `b` `` or `` `a`, `b` and `c` ``.
fn keys_text(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// Keys a node's update holds that the schema does not declare: one defect per return (the
/// keys written by the same nodes at the same lines), naming every such key it holds.
fn undeclared_keys(ctx: &Ctx) -> Vec<Defect> {
    let Some(declared) = &ctx.declared else {
        return Vec::new();
    };
    let mut by_key: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
    for (n, e) in &ctx.effects {
        let Some(e) = e else { continue };
        for (k, line) in &e.writes {
            if !declared.contains(k) {
                by_key.entry(k).or_default().push((n, *line));
            }
        }
    }
    // the keys each set of writes (the same nodes, at the same lines) holds
    type Writes<'a> = Vec<(&'a str, usize)>;
    let mut by_writes: BTreeMap<Writes, Vec<&str>> = BTreeMap::new();
    for (k, writers) in by_key {
        by_writes.entry(writers).or_default().push(k);
    }
    // in the order of their first key
    let mut groups: Vec<(Writes, Vec<&str>)> = by_writes.into_iter().collect();
    groups.sort_by(|a, b| a.1.first().cmp(&b.1.first()));
    groups
        .into_iter()
        .map(|(writers, keys)| {
            let nodes: Vec<String> = writers.iter().map(|(n, _)| n.to_string()).collect();
            let one = keys.len() == 1;
            let reads_any = |e: &Effects| keys.iter().any(|k| e.reads.contains_key(*k));
            let readers: Vec<&str> = ctx
                .g
                .routers
                .iter()
                .filter(|r| nodes.contains(&r.source))
                .filter(|r| ctx.router_effects(r).is_some_and(&reads_any))
                .map(|r| r.router.as_str())
                .collect();
            let mut detail = format!(
                "{} {} the {} {}, which the state schema `{}` does not declare: LangGraph drops {} from the state, so no later node sees {}",
                nodes.join(", "),
                crate::words::form(nodes.len(), "returns", "return"),
                crate::words::form(keys.len(), "key", "keys"),
                keys_text(&keys),
                ctx.g.state_type.as_deref().unwrap_or("?"),
                if one { "it" } else { "them" },
                if one { "it" } else { "them" },
            );
            if !readers.is_empty() {
                detail.push_str(&format!(
                    " (only the router {} attached to the writing node still receives {})",
                    readers.join(", "),
                    if one { "it" } else { "them" },
                ));
            }
            let node_readers: Vec<(&str, Vec<&str>)> = ctx
                .effects
                .iter()
                .filter(|(r, _)| !nodes.iter().any(|n| n == *r))
                .filter_map(|(r, e)| {
                    let e = e.as_ref()?;
                    let read: Vec<&str> = keys
                        .iter()
                        .copied()
                        .filter(|k| e.reads.contains_key(*k))
                        .collect();
                    (!read.is_empty()).then_some((*r, read))
                })
                .collect();
            if one && !node_readers.is_empty() {
                let names: Vec<&str> = node_readers.iter().map(|(r, _)| *r).collect();
                detail.push_str(&format!(
                    "; {} {} it and never {} the value",
                    names.join(", "),
                    crate::words::form(names.len(), "reads", "read"),
                    crate::words::form(names.len(), "sees", "see")
                ));
            } else if !node_readers.is_empty() {
                let each: Vec<String> = node_readers
                    .iter()
                    .map(|(r, read)| format!("{r} reads {}", keys_text(read)))
                    .collect();
                detail.push_str(&format!(
                    "; {}, and never {} the value",
                    each.join(", "),
                    crate::words::form(node_readers.len(), "sees", "see")
                ));
            }
            Defect {
                fields_only: false,
                kind: "undeclared_state_key".into(),
                cause: Some(KeyCause::Undeclared {
                    keys: keys.iter().map(|k| k.to_string()).collect(),
                }),
                location: ctx.effects_loc(writers[0].0, writers[0].1),
                nodes,
                detail,
            }
        })
        .collect()
}

/// Router outcomes that can never be taken: (router source, target), with the key they test.
type Dead = Vec<DeadRoute>;

/// The keys nodes and routers read that nothing sets (a declared key no node writes and the
/// input does not give, an undeclared key, an entry of a dict field nothing puts into it): one
/// defect per key; and the routes that can never be taken: those such keys guard, then those
/// taken only when an entry that is always filled is empty ([`filled_routes`]).
fn unknown_keys(ctx: &Ctx, repo: &Repo<'_>, notes: &mut Vec<String>) -> (Vec<Defect>, Dead) {
    let Some(declared) = &ctx.declared else {
        return (Vec::new(), Vec::new());
    };
    let settable = Settable::new(ctx, declared);
    let mut reads = UnsetReads::default();
    reads.routers_read_unset(ctx, repo, &settable);
    reads.nodes_read_unset(ctx, &settable);
    reads.missing_entries(ctx, repo);
    if settable.inputs.is_none() {
        notes.push(
            "the graph's input keys are not known (no invocation of the compiled graph seen, or one whose input is not a literal dict): declared keys that no node writes are assumed to be inputs".into(),
        );
    }
    let passed = inputs::passed_somewhere(repo, ctx.g);
    let UnsetReads {
        by_key,
        sub_why,
        sub_of,
        mut dead,
    } = reads;
    let said = UnsetKeys {
        ctx,
        declared,
        passed: &passed,
        sub_why: &sub_why,
        sub_of: &sub_of,
    };
    let defects = by_key
        .into_iter()
        .map(|(k, (nodes, location))| said.defect(k, nodes, location, &mut dead))
        .collect::<Vec<Defect>>();
    dead.extend(filled_routes(ctx, repo));
    (defects, dead)
}

/// Which state keys can hold a value when read.
struct Settable<'s> {
    declared: &'s BTreeSet<String>,
    /// keys some node writes into the state (declared ones only: others are dropped)
    written: BTreeSet<&'s str>,
    inputs: Option<&'s BTreeMap<String, bool>>,
    /// every node's update could be read
    complete: bool,
}

impl<'s> Settable<'s> {
    fn new(ctx: &'s Ctx, declared: &'s BTreeSet<String>) -> Self {
        let written = ctx
            .effects
            .values()
            .flatten()
            .flat_map(|e| e.writes.keys().map(String::as_str))
            .filter(|k| declared.contains(*k))
            .collect();
        Settable {
            declared,
            written,
            inputs: ctx.inputs.as_ref().map(|i| &i.keys),
            complete: ctx.all_known(),
        }
    }

    /// A declared key some node writes, or one the graph's input may give.
    fn can_be_set(&self, k: &str) -> bool {
        if !self.declared.contains(k) {
            return false;
        }
        if self.written.contains(k) {
            return true;
        }
        // a declared key nobody writes may still be an input, unless the inputs are known
        // and every node's update could be read
        !(self.complete && self.inputs.is_some_and(|i| !i.contains_key(k)))
    }
}

/// The reads of keys nothing sets, as they are gathered.
#[derive(Default)]
struct UnsetReads {
    /// each key (or `field["entry"]`): its readers and where it is first read
    by_key: BTreeMap<String, (Vec<String>, String)>,
    /// keys of a dict field that nothing ever puts into it: why
    sub_why: BTreeMap<String, String>,
    /// the (field, entry) of each such key's label (`info["k"]`)
    sub_of: BTreeMap<String, (String, String)>,
    /// the routes guarded by such a key (their `why` completed by [`UnsetKeys::defect`])
    dead: Dead,
}

impl UnsetReads {
    /// The keys routers read that nothing sets (nor their own node writes), and the routes
    /// they guard.
    fn routers_read_unset(&mut self, ctx: &Ctx, repo: &Repo<'_>, settable: &Settable) {
        for r in &ctx.g.routers {
            let Some(e) = ctx.router_effects(r) else {
                continue;
            };
            let own = ctx
                .effects
                .get(r.source.as_str())
                .and_then(|x| x.as_ref())
                .map(|x| x.writes.clone())
                .unwrap_or_default();
            for (k, line) in &e.reads {
                if settable.can_be_set(k) || own.contains_key(k) {
                    continue;
                }
                let entry = self.by_key.entry(k.clone()).or_insert_with(|| {
                    let (m, _) = r.func.unwrap_or((0, 0));
                    (Vec::new(), format!("{}:{line}", repo.modules[m].path))
                });
                entry.0.push(format!("{} (router {})", r.source, r.router));
                for t in guarded_targets(ctx, r, k) {
                    // `why` is completed once the key's defect is made
                    self.dead.push(DeadRoute {
                        source: r.source.clone(),
                        why: format!("router {} (on {}) returns `{t}`", r.router, r.source),
                        target: t,
                        key: k.clone(),
                    });
                }
            }
        }
    }

    /// The keys nodes read that nothing sets, but for those some node writes and the schema
    /// drops (their readers are named by the undeclared-key defect).
    fn nodes_read_unset(&mut self, ctx: &Ctx, settable: &Settable) {
        let dropped: BTreeSet<&str> = ctx
            .effects
            .values()
            .flatten()
            .flat_map(|e| e.writes.keys().map(String::as_str))
            .collect();
        for (n, e) in &ctx.effects {
            let Some(e) = e else { continue };
            for (k, line) in &e.reads {
                if settable.can_be_set(k)
                    || e.writes.contains_key(k)
                    || dropped.contains(k.as_str())
                {
                    continue;
                }
                // a key read only as an optional extra by the node that also could not be written
                self.by_key
                    .entry(k.clone())
                    .or_insert_with(|| {
                        let at = e.read_in.get(k).cloned();
                        (Vec::new(), at.unwrap_or_else(|| ctx.effects_loc(n, *line)))
                    })
                    .0
                    .push(n.to_string());
            }
        }
    }

    /// The keys of a dict field that nothing ever puts into it, read by a router (with the
    /// routes they guard) or by a node the state starts (not one a `Send` starts with its
    /// own payload).
    fn missing_entries(&mut self, ctx: &Ctx, repo: &Repo<'_>) {
        // nodes some `Send` starts with a payload other than the state its router received
        let sent_to: BTreeSet<&str> = ctx
            .g
            .sends
            .iter()
            .flat_map(|(i, o)| {
                o.values()
                    .flatten()
                    .filter(move |n| !sends_state(ctx, *i, n))
            })
            .map(String::as_str)
            .collect();
        let mut fields: BTreeMap<String, Option<dict_keys::Field>> = BTreeMap::new();
        let mut absent = |f: &str, k: &str| -> Option<String> {
            let field = fields
                .entry(f.to_string())
                .or_insert_with(|| dict_field(ctx, repo, f));
            let field = field.as_ref()?;
            (!field.keys().contains(k)).then(|| field.why_absent(k))
        };
        for r in &ctx.g.routers {
            let Some(e) = ctx.router_effects(r) else {
                continue;
            };
            for ((f, k), line) in &e.sub_reads {
                let Some(why) = absent(f, k) else { continue };
                let label = format!("{f}[\"{k}\"]");
                let entry = self.by_key.entry(label.clone()).or_insert_with(|| {
                    let (m, _) = r.func.unwrap_or((0, 0));
                    (Vec::new(), format!("{}:{line}", repo.modules[m].path))
                });
                entry.0.push(format!("{} (router {})", r.source, r.router));
                self.sub_why.insert(label.clone(), why);
                self.sub_of.insert(label.clone(), (f.clone(), k.clone()));
                for t in empty_guarded_targets(ctx, r, f, k, true) {
                    self.dead.push(DeadRoute {
                        source: r.source.clone(),
                        why: format!("router {} (on {}) returns `{t}`", r.router, r.source),
                        target: t,
                        key: label.clone(),
                    });
                }
            }
        }
        for (n, e) in &ctx.effects {
            let Some(e) = e else { continue };
            // a node a `Send` starts reads the payload it is sent, not the state
            if sent_to.contains(n) {
                continue;
            }
            for ((f, k), line) in &e.sub_reads {
                let Some(why) = absent(f, k) else { continue };
                let label = format!("{f}[\"{k}\"]");
                self.by_key
                    .entry(label.clone())
                    .or_insert_with(|| (Vec::new(), ctx.effects_loc(n, *line)))
                    .0
                    .push(n.to_string());
                self.sub_why.insert(label.clone(), why);
                self.sub_of.insert(label, (f.clone(), k.clone()));
            }
        }
    }
}

/// What is known to say why a key read is never set.
struct UnsetKeys<'u, 'a, 'r> {
    ctx: &'u Ctx<'a, 'r>,
    declared: &'u BTreeSet<String>,
    /// keys the graph's input gives somewhere, with where
    passed: &'u BTreeMap<String, String>,
    sub_why: &'u BTreeMap<String, String>,
    sub_of: &'u BTreeMap<String, (String, String)>,
}

impl UnsetKeys<'_, '_, '_> {
    /// The defect of the key `k` its `nodes` read (first at `location`); the routes it guards
    /// in `dead` get their `why` completed.
    fn defect(&self, k: String, nodes: Vec<String>, location: String, dead: &mut Dead) -> Defect {
        let writers: Vec<&str> = self
            .ctx
            .effects
            .iter()
            .filter(|(_, e)| e.as_ref().is_some_and(|e| e.writes.contains_key(&k)))
            .map(|(n, _)| *n)
            .collect();
        let cause = self.cause(&k, &writers);
        let why = self.why(&k, &writers, nodes.len());
        // said of the router alone (the defect's `why` may speak of every reader)
        let route_why = if !self.sub_why.contains_key(&k)
            && !self.declared.contains(&k)
            && !writers.is_empty()
        {
            format!(
                "is not declared in the state schema, so what {} {} under it is dropped and the router never sees it",
                writers.join(", "),
                crate::words::form(writers.len(), "returns", "return"),
            )
        } else {
            why.clone()
        };
        let mut dead_here: Vec<String> = Vec::new();
        for d in dead
            .iter_mut()
            .filter(|d| d.key == k && !d.why.contains(" only when "))
        {
            d.why = format!(
                "{} only when `{k}` holds a value, and `{k}` {route_why}",
                d.why
            );
            dead_here.push(format!("{} -> {}", d.source, d.target));
        }
        let mut detail = format!(
            "{} {} the key `{k}`, which {why}",
            nodes.join(", "),
            crate::words::form(nodes.len(), "reads", "read")
        );
        if !dead_here.is_empty() {
            detail.push_str(&format!(
                "; the {} {} guarded by it can never be taken",
                crate::words::form(dead_here.len(), "route", "routes"),
                dead_here.join(", ")
            ));
        }
        Defect {
            fields_only: false,
            kind: "unknown_state_key".into(),
            cause: Some(cause),
            nodes,
            location,
            detail,
        }
    }

    /// Why the key `k` (written by `writers`) is never set, as a cause.
    fn cause(&self, k: &str, writers: &[&str]) -> KeyCause {
        if let Some((field, entry)) = self.sub_of.get(k) {
            KeyCause::MissingEntry {
                field: field.clone(),
                entry: entry.clone(),
            }
        } else if self.declared.contains(k) {
            KeyCause::NeverWritten { key: k.to_string() }
        } else if writers.is_empty()
            && let Some(at) = self.passed.get(k)
        {
            KeyCause::InputDropped {
                key: k.to_string(),
                at: at.to_string(),
            }
        } else if writers.is_empty() {
            KeyCause::Unset { key: k.to_string() }
        } else {
            KeyCause::WrittenDropped {
                key: k.to_string(),
                writers: writers.iter().map(|w| w.to_string()).collect(),
            }
        }
    }

    /// Why the key `k` (written by `writers`, read by `readers` nodes) is never set, as the
    /// end of a sentence ("which ...").
    fn why(&self, k: &str, writers: &[&str], readers: usize) -> String {
        if let Some(why) = self.sub_why.get(k) {
            why.clone()
        } else if self.declared.contains(k) {
            "is declared but no node writes it and the graph's input does not provide it"
                .to_string()
        } else if writers.is_empty()
            && let Some(at) = self.passed.get(k)
        {
            format!(
                "is not declared in the state schema: the graph's input gives it ({at}), but LangGraph drops input keys the schema does not declare, and no node sets it"
            )
        } else if writers.is_empty() {
            "is not declared in the state schema and no node sets it".to_string()
        } else {
            format!(
                "is not declared in the state schema, so what {} {} under it is dropped before {} run",
                writers.join(", "),
                crate::words::form(writers.len(), "returns", "return"),
                crate::words::form(readers, "it", "they")
            )
        }
    }
}

/// The dict field `f` when the keys it can ever hold are known (see [`dict_keys`]): declared,
/// always a dict (a merging reducer starts it as `{}`, or every invocation passes a dict
/// literal), every node's update read, every write of it a dict literal or a re-send, nothing
/// changing it in place.
fn dict_field<'c>(ctx: &'c Ctx, repo: &Repo<'_>, f: &str) -> Option<dict_keys::Field<'c>> {
    let declared = ctx.declared.as_ref()?;
    let inputs = ctx.inputs.as_ref()?;
    // a node whose only unknown is a key computed at run time that is never given a dict
    // puts no key into a dict field (what it writes there is a list, a string or a number)
    let readable = ctx.effects.values().all(|e| {
        e.as_ref().is_some_and(|e| {
            e.known || (e.known_but_computed && e.computed_key.is_some() && !e.computed_dict)
        })
    });
    if !declared.contains(f) || !readable {
        return None;
    }
    let from_input = match inputs.dict_keys.get(f) {
        Some(Some(keys)) => keys.clone(),
        Some(None) => return None,
        None => BTreeSet::new(),
    };
    let always_dict = match ctx.reducers.get(f) {
        Some(r) => dict_keys::merges(r),
        // without a reducer the field holds what was written last: a dict only when every
        // invocation passes one
        None => inputs.always.contains(f) && matches!(inputs.dict_keys.get(f), Some(Some(_))),
    };
    if !always_dict {
        return None;
    }
    let mut writers = Vec::new();
    let mut resenders = Vec::new();
    for (n, e) in &ctx.effects {
        let e = e.as_ref()?;
        if e.writes.contains_key(f) {
            writers.push((*n, e.dict_writes.get(f)?.clone()?));
        } else if e.whole_state.is_some() {
            resenders.push(*n);
        }
    }
    if dict_keys::changed_in_place(repo, f) {
        return None;
    }
    let name = declared.get(f)?;
    Some(dict_keys::Field {
        name,
        from_input,
        writers,
        resenders,
    })
}

/// Whether every `Send` to `node` in the function of router `i` passes the state the router
/// received (`Send("judge", state)`), read from its text; `false` when it cannot be told.
fn sends_state(ctx: &Ctx, i: usize, node: &str) -> bool {
    let Some((m, line)) = ctx.g.routers.get(i).and_then(|r| r.func) else {
        return false;
    };
    let module = &ctx.repo.modules[m];
    let Some(f) = module.functions.iter().find(|f| f.line == line) else {
        return false;
    };
    let Some(param) = f.params.iter().find(|p| *p != "self" && *p != "cls") else {
        return false;
    };
    let body: Vec<&str> = module
        .source
        .lines()
        .skip(f.line)
        .take(f.end_line.saturating_sub(f.line))
        .collect();
    let sends = body
        .iter()
        .map(|l| l.matches("Send(").count())
        .sum::<usize>();
    let Ok(re) = regex::Regex::new(&format!(
        r#"Send\(\s*["']{}["']\s*,\s*{}\s*\)"#,
        regex::escape(node),
        regex::escape(param)
    )) else {
        return false;
    };
    let to_node = body.iter().map(|l| re.find_iter(l).count()).sum::<usize>();
    // every Send of the function is such a literal one (none to a computed node)
    to_node > 0 && {
        let Ok(any_literal) = regex::Regex::new(r#"Send\(\s*["'][^"']+["']\s*,\s*(\w+)\s*\)"#)
        else {
            return false;
        };
        let literal: Vec<String> = body
            .iter()
            .flat_map(|l| any_literal.captures_iter(l).map(|c| c[1].to_string()))
            .collect();
        literal.len() == sends && literal.iter().all(|a| a == param)
    }
}

/// Routes a router takes only when the read of `f["k"]` finds nothing, while a node that runs
/// before every run of the router's source (or is that source) always fills `f["k"]` with
/// items, and every other update of `f` that gives `k` gives it items too: `f` merges updates
/// key by key (`operator.ior`), so once filled the key keeps items. Checked against real
/// LangGraph (1.2.24) by the differential test.
fn filled_routes(ctx: &Ctx, repo: &Repo<'_>) -> Vec<DeadRoute> {
    let mut out = Vec::new();
    // a node a `Send` starts runs on its payload: not followed
    let sent: BTreeSet<&str> = ctx
        .g
        .sends
        .values()
        .flat_map(|o| o.values().flatten())
        .map(String::as_str)
        .collect();
    for r in &ctx.g.routers {
        let Some(e) = ctx.router_effects(r) else {
            continue;
        };
        if sent.contains(r.source.as_str()) {
            continue;
        }
        for (f, k) in e.sub_reads.keys() {
            if !ctx.reducers.get(f).is_some_and(|x| dict_keys::merges(x)) {
                continue;
            }
            let Some(field) = dict_field(ctx, repo, f) else {
                continue;
            };
            let writers: Vec<&str> = field
                .writers
                .iter()
                .filter(|(_, ks)| ks.contains(k))
                .map(|(n, _)| *n)
                .collect();
            let fill_line = |n: &str| -> Option<usize> {
                let e = ctx.effects.get(n)?.as_ref()?;
                e.filled_subs
                    .get(f)?
                    .contains(k)
                    .then(|| e.writes.get(f).copied())?
            };
            if writers.is_empty() || writers.iter().any(|n| fill_line(n).is_none()) {
                continue;
            }
            let Some(w) = writers
                .iter()
                .find(|w| **w == r.source || dominates(ctx.g, w, &r.source))
            else {
                continue;
            };
            let label = format!("{f}[\"{k}\"]");
            let at = ctx.effects_loc(w, fill_line(w).unwrap_or(0));
            let before = if *w == r.source {
                format!(
                    "{w} itself always fills it with items ({at}) and its router sees that update"
                )
            } else {
                format!(
                    "{w} always fills it with items ({at}) and runs before every run of {}",
                    r.source
                )
            };
            let others = if writers.len() > 1 {
                "; every other update of it gives it items too"
            } else {
                ""
            };
            for t in empty_guarded_targets(ctx, r, f, k, false) {
                out.push(DeadRoute {
                    source: r.source.clone(),
                    why: format!(
                        "router {} (on {}) returns `{t}` only when `{label}` is empty, and {before}{others}; `{f}` merges updates key by key, so the key keeps its items",
                        r.router, r.source
                    ),
                    target: t,
                    key: label.clone(),
                });
            }
        }
    }
    out
}

/// Whether every path from START to `n` passes through `w` (plain edges, router outcomes,
/// join legs): `n` runs only after `w` has run.
fn dominates(g: &GraphFacts, w: &str, n: &str) -> bool {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo = vec!["START"];
    while let Some(x) = todo.pop() {
        for t in g.successors(x) {
            if t != w && seen.insert(t) {
                todo.push(t);
            }
        }
    }
    !seen.contains(n) && g.has_node(n) && w != "START"
}

/// Whether the router's returns, read in source order with `value` deciding the conditions
/// it can, never return `target`: every return of it before the first one surely taken sits
/// under a condition known to be false. A return whose conditions are not all decided may be
/// taken (a return of `target` then makes it possible) or not (the next ones are read too).
fn never_returned(
    b: &Branches,
    r: &super::graph::Router,
    target: &str,
    value: &dyn Fn(&str) -> Option<bool>,
) -> bool {
    for (conds, ret) in &b.returns {
        let decided: Vec<Option<bool>> = conds
            .iter()
            .map(|(c, positive)| {
                if c == "<block>" {
                    None
                } else {
                    value(c).map(|v| v == *positive)
                }
            })
            .collect();
        if decided.contains(&Some(false)) {
            continue;
        }
        let sure = decided.iter().all(|d| *d == Some(true));
        if b.target(ret, r).as_deref() == Some(target) {
            return false;
        }
        if sure {
            return true;
        }
    }
    // the function may end without a return of `target`
    true
}

/// Targets a router returns only on one side of a test of the read of `f["k"]` (a local bound
/// to `state.get("f", {}).get("k", [])` tested for items, `any(...)` over it, its `len`). With
/// `when_absent` true, the targets whose every return sits under a condition that is false on
/// an empty value (taken only when the key holds items); with it false, those whose every
/// return sits under a condition that is false when the key holds truthy items (taken only
/// when it is empty). Every other return of the router must name a target.
fn empty_guarded_targets(
    ctx: &Ctx,
    r: &super::graph::Router,
    f: &str,
    k: &str,
    when_absent: bool,
) -> Vec<String> {
    let Some(b) = router_branches(ctx, r) else {
        return Vec::new();
    };
    let Some((m, line)) = r.func else {
        return Vec::new();
    };
    let Some(func) = ctx.repo.modules[m]
        .functions
        .iter()
        .find(|x| x.line == line)
    else {
        return Vec::new();
    };
    let p = b.param.as_str();
    let bound: BTreeSet<&str> = func
        .locals
        .iter()
        .filter(|(_, vs)| {
            matches!(vs.as_slice(), [v] if dict_keys::empty_sub_get(v, p) == Some((f.to_string(), k.to_string())))
        })
        .map(|(l, _)| l.as_str())
        .collect();
    if bound.is_empty() {
        return Vec::new();
    }
    let is_v = |t: &str| bound.contains(t);
    if b.returns.iter().any(|(_, ret)| b.target(ret, r).is_none()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for t in &r.targets {
        let rets: Vec<&(Vec<(String, bool)>, String)> = b
            .returns
            .iter()
            .filter(|(_, ret)| b.target(ret, r).as_deref() == Some(t.as_str()))
            .collect();
        let never = !rets.is_empty()
            && if when_absent {
                rets.iter().all(|(conds, _)| {
                    conds.iter().any(|(c, positive)| {
                        c != "<block>" && dict_keys::when_empty(c, &is_v) == Some(!*positive)
                    })
                })
            } else {
                never_returned(&b, r, t, &|c| dict_keys::when_filled(c, &is_v))
            };
        if never {
            out.push(t.clone());
        }
    }
    out
}

/// Targets a router returns only under a truthy test of `key` (`if state.get("error"): return
/// "error_node"`).
fn guarded_targets(ctx: &Ctx, r: &super::graph::Router, key: &str) -> Vec<String> {
    let Some((m, fline)) = r.func else {
        return Vec::new();
    };
    let module = &ctx.repo.modules[m];
    let Some(f) = module.functions.iter().find(|f| f.line == fline) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in module
        .ifs
        .iter()
        .filter(|i| i.line > f.line && i.line <= f.end_line)
    {
        let c = i.condition.trim();
        let tests = c.contains(&format!("\"{key}\"")) || c.contains(&format!("'{key}'"));
        if !tests || c.starts_with("not ") || c.contains("is None") || c.contains("==") {
            continue;
        }
        let first_branch: Vec<&str> = i
            .text
            .lines()
            .skip(1)
            .take_while(|l| {
                let t = l.trim_start();
                !(t.starts_with("else") || t.starts_with("elif"))
            })
            .collect();
        for l in first_branch {
            let t = l.trim();
            if let Some(v) = t.strip_prefix("return ") {
                let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
                if r.targets.iter().any(|x| x == v) {
                    out.push(v.to_string());
                }
            }
        }
    }
    out
}

fn whole_state(ctx: &Ctx) -> Vec<Defect> {
    let doubled: Vec<&str> = ctx
        .reducers
        .iter()
        .filter(|(f, _)| ctx.appending(f))
        .map(|(f, _)| f.as_str())
        .collect();
    if doubled.is_empty() {
        return Vec::new();
    }
    // (node, line, what it re-sends: None for the whole state)
    let nodes: Vec<(&str, usize, Option<Vec<&str>>)> = ctx
        .effects
        .iter()
        .filter_map(|(n, e)| {
            let e = e.as_ref()?;
            if let Some(l) = e.whole_state {
                return Some((*n, l, None));
            }
            let keys: Vec<(&str, usize)> = e
                .resends
                .iter()
                .filter(|(k, _)| doubled.contains(&k.as_str()))
                .map(|(k, l)| (k.as_str(), *l))
                .collect();
            let line = keys.first()?.1;
            Some((*n, line, Some(keys.into_iter().map(|(k, _)| k).collect())))
        })
        .collect();
    if nodes.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = nodes.iter().map(|(n, _, _)| n.to_string()).collect();
    let what = nodes
        .iter()
        .map(|(n, l, keys)| match keys {
            None => format!(
                "{n} returns the whole incoming state ({})",
                ctx.effects_loc(n, *l)
            ),
            Some(ks) => format!(
                "{n} re-sends the current value of {} ({})",
                ks.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                ctx.effects_loc(n, *l)
            ),
        })
        .collect::<Vec<_>>()
        .join("; ");
    vec![Defect {
        cause: None,
        fields_only: nodes.iter().all(|(_, _, keys)| keys.is_some()),
        kind: "whole_state_return".into(),
        location: ctx.effects_loc(nodes[0].0, nodes[0].1),
        detail: format!(
            "{what}: the appending reducer of {} adds the current list to itself whenever it already holds items, so it doubles at each such node",
            doubled
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        nodes: names,
    }]
}

/// Strongly connected components with a cycle (Tarjan, iterative enough for small graphs).
fn cycles(g: &GraphFacts) -> Vec<BTreeSet<String>> {
    // a node literally named START or END cannot be told from the constants: not a cycle
    let names: Vec<&str> = g
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .filter(|n| *n != "START" && *n != "END")
        .collect();
    let succ = |n: &str| -> Vec<&str> {
        g.edges
            .iter()
            .filter(|e| e.from == n)
            .map(|e| e.to.as_str())
            .collect()
    };
    // reachability closure (graphs are small: tens of nodes)
    let mut reach: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for n in &names {
        let mut seen = BTreeSet::new();
        let mut stack = succ(n);
        while let Some(x) = stack.pop() {
            if seen.insert(x) {
                stack.extend(succ(x));
            }
        }
        reach.insert(n, seen);
    }
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for n in &names {
        if !reach[n].contains(n) {
            continue;
        }
        let scc: BTreeSet<String> = names
            .iter()
            .filter(|m| reach[*m].contains(n) && reach[n].contains(*m))
            .map(|m| m.to_string())
            .collect();
        if !out.contains(&scc) {
            out.push(scc);
        }
    }
    out
}

/// A loop whose exit condition never changes: the cycle and the indexes of its exit routers.
type Stuck = Vec<(BTreeSet<String>, Vec<usize>)>;

/// The unbounded loops, whether every cycle's bound could be decided, and the loops whose exits
/// can never be taken.
fn loops(ctx: &Ctx, notes: &mut Vec<String>) -> (Vec<Defect>, bool, Stuck) {
    let mut out = Vec::new();
    let mut stuck = Vec::new();
    let mut decided = true;
    for scc in cycles(ctx.g) {
        match loop_bound(ctx, &scc) {
            LoopBound::Leaves => {}
            LoopBound::Undecided(note) => {
                notes.push(note);
                decided = false;
            }
            LoopBound::Unbounded(defect, exits) => {
                out.push(defect);
                if let Some(indexes) = exits {
                    stuck.push((scc, indexes));
                }
            }
        }
    }
    (out, decided, stuck)
}

/// What is decided of a cycle's bound.
enum LoopBound {
    /// It may leave (or it has no conditional exit but nothing can be said of it).
    Leaves,
    /// Not decided: the note saying why.
    Undecided(String),
    /// It never leaves: the defect, and the indexes of its exit routers when it has some.
    Unbounded(Defect, Option<Vec<usize>>),
}

/// Whether the cycle `scc` may leave: it has a conditional exit, and something that runs while
/// it runs changes what the exits test.
fn loop_bound(ctx: &Ctx, scc: &BTreeSet<String>) -> LoopBound {
    let g = ctx.g;
    let exits: Vec<&super::graph::Router> = g
        .routers
        .iter()
        .filter(|r| scc.contains(&r.source))
        .filter(|r| {
            r.outcomes
                .iter()
                .any(|o| !o.iter().all(|t| scc.contains(t)))
        })
        .collect();
    let members: Vec<String> = scc.iter().cloned().collect();
    if exits.is_empty() {
        return without_exit(ctx, scc, members);
    }
    // every node that runs while the cycle runs (its own, and what they trigger without
    // leaving it: a plain edge out of the cycle re-runs its target at every pass) must be
    // readable to claim that nothing changes what the exits test
    let running = while_cycling(g, scc);
    let cycle_effects: Vec<&Effects> = running
        .iter()
        .filter_map(|n| ctx.effects.get(n.as_str()).and_then(|e| e.as_ref()))
        .collect();
    if cycle_effects.len() != running.len() || cycle_effects.iter().any(|e| !e.known) {
        return LoopBound::Undecided(format!(
            "cycle {}: a node's update could not be read, loop bound not checked",
            members.join(" -> ")
        ));
    }
    let Some(tested) = exit_keys(ctx, &exits) else {
        return LoopBound::Undecided(format!(
            "cycle {}: its exit condition could not be read, loop bound not checked",
            members.join(" -> ")
        ));
    };
    if tested
        .iter()
        .any(|k| changes_exit(ctx, scc, &exits, &cycle_effects, k))
    {
        return LoopBound::Leaves;
    }
    // a node outside the cycle that may run while it runs (on a branch beside it, not
    // only before it nor only after it leaves) may change what the exits test
    if let Some(w) = concurrent_writer(ctx, scc, &running, &tested) {
        return LoopBound::Undecided(format!(
            "cycle {}: its exit tests a key that `{w}` writes, and `{w}` may run while the cycle runs (on a branch beside it): loop bound not checked",
            members.join(" -> ")
        ));
    }
    let indexes = exits
        .iter()
        .filter_map(|r| g.routers.iter().position(|x| std::ptr::eq(x, *r)))
        .collect();
    LoopBound::Unbounded(stuck_loop(scc, members, &exits, &tested), Some(indexes))
}

/// A cycle with no router out of it: unbounded unless a conditional edge leaves it or some
/// edge of the graph could not be resolved.
fn without_exit(ctx: &Ctx, scc: &BTreeSet<String>, members: Vec<String>) -> LoopBound {
    let g = ctx.g;
    let plain_out = g
        .edges
        .iter()
        .any(|e| scc.contains(&e.from) && !scc.contains(&e.to) && e.conditional);
    if plain_out || !g.unresolved.is_empty() {
        return LoopBound::Leaves;
    }
    LoopBound::Unbounded(
        Defect {
            cause: None,
            fields_only: false,
            kind: "unbounded_loop".into(),
            location: ctx.node_loc(&members[0]),
            detail: format!(
                "the cycle {} has no conditional exit: once entered it runs until LangGraph's recursion limit (GraphRecursionError)",
                members.join(" -> ")
            ),
            nodes: members,
        },
        None,
    )
}

/// The state keys the exit routers test, `None` when one of them cannot be read or they test
/// none.
fn exit_keys(ctx: &Ctx, exits: &[&super::graph::Router]) -> Option<BTreeSet<String>> {
    let mut tested: BTreeSet<String> = BTreeSet::new();
    let mut readable = true;
    for r in exits {
        match ctx.router_effects(r) {
            Some(e) if e.known || !e.reads.is_empty() => tested.extend(e.reads.keys().cloned()),
            _ => readable = false,
        }
    }
    (readable && !tested.is_empty()).then_some(tested)
}

/// Whether what the nodes running in the cycle `scc` write (`cycle_effects`) may change how
/// the `exits` decide on the key `k`.
fn changes_exit(
    ctx: &Ctx,
    scc: &BTreeSet<String>,
    exits: &[&super::graph::Router],
    cycle_effects: &[&Effects],
    k: &str,
) -> bool {
    let writers: Vec<&&Effects> = cycle_effects
        .iter()
        .filter(|e| e.writes.contains_key(k) || (e.whole_state.is_some() && ctx.appending(k)))
        .collect();
    if writers.is_empty() {
        return false;
    }
    // written only as one constant (`{"attempts": 1}`): once written, the exits decide
    // the same way at every pass; it changes only if that decision leaves the cycle
    let constants: BTreeSet<Option<&String>> = writers.iter().map(|e| e.constants.get(k)).collect();
    let [Some(c)] = constants.into_iter().collect::<Vec<_>>()[..] else {
        return true;
    };
    exits.iter().any(
        |r| match router_branches(ctx, r).and_then(|b| b.decide(k, c, r)) {
            Some(targets) => targets.iter().any(|t| !scc.contains(t)),
            None => true,
        },
    )
}

/// The defect of a cycle whose exit condition (the keys `tested` by its `exits`) never
/// changes.
fn stuck_loop(
    scc: &BTreeSet<String>,
    members: Vec<String>,
    exits: &[&super::graph::Router],
    tested: &BTreeSet<String>,
) -> Defect {
    let never: Vec<String> = exits
        .iter()
        .flat_map(|r| r.outcomes.iter().flatten())
        .filter(|t| !scc.contains(*t) && *t != "END")
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let r = exits[0];
    let mut detail = format!(
        "the cycle {} leaves only through router {} (on {}), which tests {}; no node of the cycle (or that it triggers) writes {}, so the exit condition never changes: once the router chooses to stay in the cycle it stays, and the loop runs until LangGraph's recursion limit (GraphRecursionError)",
        members.join(" -> "),
        r.router,
        r.source,
        tested
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if tested.len() == 1 {
            "it"
        } else {
            "any of them"
        }
    );
    if !never.is_empty() {
        detail.push_str(&format!(
            "; from then on {} {} never reached",
            never.join(", "),
            crate::words::form(never.len(), "is", "are")
        ));
    }
    Defect {
        cause: None,
        fields_only: false,
        kind: "unbounded_loop".into(),
        location: format!("{}:{}", r.path, r.line),
        nodes: members,
        detail,
    }
}

/// A node outside `running` (the cycle `scc` and what it triggers) that writes one of `keys`
/// and may run while the cycle runs: it is reached from START by a path that avoids the
/// cycle (so not only after the cycle leaves), and START still reaches the cycle without it
/// (so it does not always run before the cycle starts).
fn concurrent_writer(
    ctx: &Ctx,
    scc: &BTreeSet<String>,
    running: &BTreeSet<String>,
    keys: &BTreeSet<String>,
) -> Option<String> {
    let g = ctx.g;
    let reach = |blocked: &dyn Fn(&str) -> bool| -> BTreeSet<String> {
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut todo = vec!["START".to_string()];
        while let Some(n) = todo.pop() {
            let next = g.edges.iter().filter(|e| e.from == n).map(|e| &e.to).chain(
                g.joins
                    .iter()
                    .filter(|j| j.from.contains(&n))
                    .map(|j| &j.to),
            );
            for t in next {
                if !blocked(t) && seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let beside = reach(&|n: &str| scc.contains(n));
    ctx.effects
        .iter()
        .filter(|(n, _)| !running.contains(**n) && beside.contains(**n))
        .filter(|(_, e)| {
            e.as_ref().is_none_or(|e| {
                keys.iter().any(|k| {
                    e.writes.contains_key(k) || (e.whole_state.is_some() && ctx.appending(k))
                })
            })
        })
        .map(|(n, _)| n.to_string())
        .find(|w| reach(&|n: &str| n == w).iter().any(|n| scc.contains(n)))
}

/// The nodes that run while the cycle `scc` keeps running: its own, and those they trigger
/// (plain edges, join legs, router outcomes that also keep a node of the cycle running), and so
/// on. A router outcome that only leaves the cycle ends it and is not followed.
fn while_cycling(g: &GraphFacts, scc: &BTreeSet<String>) -> BTreeSet<String> {
    let mut seen: BTreeSet<String> = scc.clone();
    let mut todo: Vec<String> = scc.iter().cloned().collect();
    while let Some(n) = todo.pop() {
        let mut next: Vec<&String> = Vec::new();
        for e in g.edges.iter().filter(|e| !e.conditional && e.from == n) {
            next.push(&e.to);
        }
        for j in g.joins.iter().filter(|j| j.from.contains(&n)) {
            next.push(&j.to);
        }
        // a node of the cycle with a plain edge back into it keeps the cycle running whatever
        // its routers choose
        let kept_by_edge = g
            .edges
            .iter()
            .any(|e| !e.conditional && e.from == n && scc.contains(&e.to));
        for r in g.routers.iter().filter(|r| r.source == n) {
            for o in &r.outcomes {
                if !scc.contains(&n) || kept_by_edge || o.iter().any(|t| scc.contains(t)) {
                    next.extend(o.iter());
                }
            }
        }
        for t in next {
            if t != "END" && seen.insert(t.clone()) {
                todo.push(t.clone());
            }
        }
    }
    seen
}

/// The `if` chain of a router function, read line by line: each `return` with the conditions
/// that must hold (or not) for it to be reached.
struct Branches {
    /// (conditions: (text, must be true), returned expression text), in source order
    returns: Vec<(Vec<(String, bool)>, String)>,
    /// The router's state parameter.
    param: String,
    /// Its path map (what it returns → the node).
    path_map: Vec<(String, String)>,
}

fn router_branches(ctx: &Ctx, r: &super::graph::Router) -> Option<Branches> {
    let (m, line) = r.func?;
    let module = &ctx.repo.modules[m];
    let f = module.functions.iter().find(|f| f.line == line)?;
    let param = f
        .params
        .iter()
        .find(|p| *p != "self" && *p != "cls")?
        .clone();
    let mut returns = Vec::new();
    // (indent, condition, positive) of the enclosing blocks
    let mut stack: Vec<(usize, String, bool)> = Vec::new();
    // conditions of the if/elif chain at each indent, for `elif`/`else`
    let mut chain: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for l in module
        .source
        .lines()
        .skip(f.line)
        .take(f.end_line.saturating_sub(f.line))
    {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let ind = l.len() - l.trim_start().len();
        stack.retain(|(i, _, _)| *i < ind);
        chain.retain(|i, _| *i <= ind);
        if let Some(c) = t.strip_prefix("if ").and_then(|c| c.strip_suffix(':')) {
            chain.insert(ind, vec![c.trim().to_string()]);
            stack.push((ind, c.trim().to_string(), true));
        } else if let Some(c) = t.strip_prefix("elif ").and_then(|c| c.strip_suffix(':')) {
            let prev = chain.entry(ind).or_default();
            for p in prev.iter() {
                stack.push((ind, p.clone(), false));
            }
            stack.push((ind, c.trim().to_string(), true));
            prev.push(c.trim().to_string());
        } else if t == "else:" {
            for p in chain.get(&ind).cloned().unwrap_or_default() {
                stack.push((ind, p, false));
            }
        } else if let Some(v) = t.strip_prefix("return ") {
            let conds = stack.iter().map(|(_, c, p)| (c.clone(), *p)).collect();
            returns.push((conds, v.trim().to_string()));
        } else if t.ends_with(':') {
            // a loop, `with`, `try`: returns inside it are not read
            stack.push((ind, "<block>".into(), true));
        }
    }
    let index = ctx.g.routers.iter().position(|x| std::ptr::eq(x, r));
    let path_map = index
        .and_then(|i| ctx.g.path_maps.get(&i).cloned())
        .unwrap_or_default();
    Some(Branches {
        returns,
        param,
        path_map,
    })
}

impl Branches {
    /// The node a returned expression names, through the router's path map.
    fn target(&self, ret: &str, r: &super::graph::Router) -> Option<String> {
        let v = ret.trim();
        if v == "END" {
            return Some("END".into());
        }
        let lit = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))?;
        if let Some((_, node)) = self.path_map.iter().find(|(k, _)| k == lit) {
            return Some(node.clone());
        }
        r.targets.iter().any(|t| t == lit).then(|| lit.to_string())
    }

    /// The key a truthy test of which every return of `target` sits under.
    fn guard_of(&self, target: &str, r: &super::graph::Router) -> Option<String> {
        let rets: Vec<&(Vec<(String, bool)>, String)> = self
            .returns
            .iter()
            .filter(|(_, v)| self.target(v, r).as_deref() == Some(target))
            .collect();
        if rets.is_empty() {
            return None;
        }
        let mut key: Option<String> = None;
        for (conds, _) in rets {
            let k = conds
                .iter()
                .filter(|(_, positive)| *positive)
                .find_map(|(c, _)| self.truthy_key(c))?;
            if key.as_ref().is_some_and(|x| *x != k) {
                return None;
            }
            key = Some(k);
        }
        key
    }

    /// `state.get("k")`, `state["k"]`, `state.k` (optionally `... and more`): the key tested.
    fn truthy_key(&self, cond: &str) -> Option<String> {
        let first = cond.split(" and ").next()?.trim();
        self.key_of(first)
            .filter(|(_, rest)| rest.is_empty())
            .map(|(k, _)| k)
    }

    /// A leading read of a state key: (key, what follows it).
    fn key_of<'c>(&self, text: &'c str) -> Option<(String, &'c str)> {
        let p = &self.param;
        let rest = text.strip_prefix(p.as_str())?;
        let quoted = |s: &'c str| -> Option<(String, &'c str)> {
            let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let end = s[1..].find(q)? + 1;
            Some((s[1..end].to_string(), &s[end + 1..]))
        };
        if let Some(r) = rest.strip_prefix(".get(") {
            let (k, after) = quoted(r.trim_start())?;
            let close = after.find(')')?;
            return Some((k, after[close + 1..].trim()));
        }
        if let Some(r) = rest.strip_prefix('[') {
            let (k, after) = quoted(r.trim_start())?;
            let after = after.trim_start().strip_prefix(']')?;
            return Some((k, after.trim()));
        }
        let r = rest.strip_prefix('.')?;
        let end = r
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        Some((r[..end].to_string(), r[end..].trim()))
    }

    /// Evaluates a condition with `key` holding the literal `value`; `None` when it depends on
    /// anything else.
    fn eval(&self, cond: &str, key: &str, value: &str) -> Option<bool> {
        let c = cond.trim();
        if let Some(inner) = c.strip_prefix("not ") {
            return self.eval(inner, key, value).map(|b| !b);
        }
        let (k, rest) = self.key_of(c)?;
        if k != key {
            return None;
        }
        let truthy = |v: &str| !matches!(v, "0" | "0.0" | "False" | "None" | "\"\"" | "''");
        if rest.is_empty() {
            return Some(truthy(value));
        }
        let ops = ["<=", ">=", "==", "!=", "<", ">"];
        let op = ops.iter().find(|o| rest.starts_with(**o))?;
        let rhs = rest[op.len()..].trim();
        // two plain string literals compared for equality
        let plain = |s: &str| -> Option<String> {
            let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let inner = s.strip_prefix(q)?.strip_suffix(q)?;
            (!inner.contains(['\\', '"', '\''])).then(|| inner.to_string())
        };
        if let (Some(a), Some(b)) = (plain(value), plain(rhs)) {
            return match *op {
                "==" => Some(a == b),
                "!=" => Some(a != b),
                _ => None,
            };
        }
        let num = |s: &str| -> Option<f64> {
            match s {
                "True" => Some(1.0),
                "False" => Some(0.0),
                _ => s.parse().ok(),
            }
        };
        let (a, b) = (num(value)?, num(rhs)?);
        Some(match *op {
            "<=" => a <= b,
            ">=" => a >= b,
            "==" => a == b,
            "!=" => a != b,
            "<" => a < b,
            _ => a > b,
        })
    }

    /// Evaluates a condition from the values known for certain; `None` when it reads anything
    /// else.
    fn eval_known(&self, cond: &str, values: &BTreeMap<String, String>) -> Option<bool> {
        let c = cond.trim();
        let bare = c.strip_prefix("not ").unwrap_or(c).trim();
        let (k, _) = self.key_of(bare)?;
        let v = values.get(&k)?;
        self.eval(c, &k, v)
    }

    /// The nodes the router can return given the values known for certain: every return whose
    /// conditions may hold, up to the first whose conditions all hold. `None` when a return
    /// that may be taken does not name one node, or falls in a block not read.
    fn possible(
        &self,
        values: &BTreeMap<String, String>,
        r: &super::graph::Router,
    ) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for (conds, ret) in &self.returns {
            let mut sure = true;
            let mut excluded = false;
            for (c, positive) in conds {
                if c == "<block>" {
                    return None;
                }
                match self.eval_known(c, values) {
                    Some(b) if b != *positive => {
                        excluded = true;
                        break;
                    }
                    Some(_) => {}
                    None => sure = false,
                }
            }
            if excluded {
                continue;
            }
            out.push(self.target(ret, r)?);
            if sure {
                return Some(out);
            }
        }
        // it may fall off its end: not read
        None
    }

    /// What the router returns when `key` holds `value`: the first return whose conditions all
    /// hold; `None` when a condition before it cannot be decided.
    fn decide(&self, key: &str, value: &str, r: &super::graph::Router) -> Option<Vec<String>> {
        for (conds, ret) in &self.returns {
            let mut all = true;
            for (c, positive) in conds {
                if c == "<block>" {
                    return None;
                }
                if self.eval(c, key, value)? != *positive {
                    all = false;
                    break;
                }
            }
            if all {
                return self.target(ret, r).map(|t| vec![t]);
            }
        }
        None
    }
}

/// What the simulation found, beside the defects it reports itself.
struct Simulated {
    defects: Vec<Defect>,
    fan_in: Option<BTreeSet<String>>,
    /// Whether the doubling of appending fields was decided by the simulation.
    doubling_decided: bool,
    /// The nodes some run reaches, when every run was explored.
    reached: Option<BTreeSet<String>>,
}

/// The keys of `e`'s update that the state keeps.
fn kept<'e>(ctx: &Ctx, e: &'e Effects) -> impl Iterator<Item = &'e String> {
    let declared = ctx.declared.clone();
    e.writes
        .keys()
        .filter(move |k| declared.as_ref().is_none_or(|d| d.contains(*k)))
}

/// Routers whose choice depends on the input alone: they read only keys no node writes and call
/// nothing but pure builtins. Returns the id of each router's function (shared by attachments).
fn fixed_routers(ctx: &Ctx) -> Vec<Option<usize>> {
    let written: BTreeSet<&str> = ctx
        .effects
        .values()
        .flatten()
        .flat_map(|e| e.writes.keys().map(String::as_str))
        .collect();
    let whole = ctx
        .effects
        .values()
        .flatten()
        .any(|e| e.whole_state.is_some());
    let mut ids: Vec<(usize, usize)> = Vec::new();
    ctx.g
        .routers
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let e = ctx.routers[i].as_ref()?;
            let (m, line) = r.func?;
            if !ctx.all_known() || whole || e.reads.is_empty() {
                return None;
            }
            if e.reads.keys().any(|k| written.contains(k.as_str())) {
                return None;
            }
            let module = &ctx.repo.modules[m];
            let fi = module.functions.iter().position(|f| f.line == line)?;
            const PURE: &[&str] = &[
                "get",
                "len",
                "str",
                "int",
                "float",
                "bool",
                "isinstance",
                "lower",
                "upper",
                "strip",
                "startswith",
                "endswith",
                "Send",
                "any",
                "all",
                "keys",
                "values",
                "items",
            ];
            if module
                .calls
                .iter()
                .filter(|c| c.func == Some(fi))
                .any(|c| !PURE.contains(&c.method.as_str()))
            {
                return None;
            }
            // attachments of one function share the choice only when their outcomes agree
            let same = ctx
                .g
                .routers
                .iter()
                .filter(|x| x.func == r.func)
                .all(|x| x.outcomes == r.outcomes);
            if !same {
                return None;
            }
            let id = ids.iter().position(|x| *x == (m, line)).unwrap_or_else(|| {
                ids.push((m, line));
                ids.len() - 1
            });
            Some(id)
        })
        .collect()
}

/// Runs the graph in supersteps over every router choice: a plan (the machine built from the
/// wiring and what each node function reads and writes, and the state an invocation starts
/// with), its execution (the exploration), then each kind of defect read from what the
/// exploration recorded.
fn simulate(
    ctx: &Ctx,
    dead: &Dead,
    stuck: &[(BTreeSet<String>, Vec<usize>)],
    notes: &mut Vec<String>,
) -> Simulated {
    let mut sim = Simulated {
        defects: Vec::new(),
        fan_in: None,
        doubling_decided: false,
        reached: None,
    };
    if let Some(why) = not_simulated(ctx.g) {
        notes.push(why.into());
        return sim;
    }
    let appending: BTreeSet<String> = ctx
        .reducers
        .iter()
        .filter(|(f, _)| ctx.appending(f))
        .map(|(f, _)| f.clone())
        .collect();
    let cyc = cycles(ctx.g);
    let machine = machine(ctx, dead, stuck, &appending, &cyc);
    let (start_keys, filled, start_values) = start(ctx, &appending);
    let ex = machine.explore(start_keys, filled, start_values);
    if !ex.complete {
        notes.push(format!(
            "too many run paths to explore (more than {MAX_CHOICES} router combinations in one superstep or {BUDGET} supersteps in all): run counts, reachability, concurrent writes and loop ends not checked"
        ));
        return sim;
    }
    sim.doubling_decided = true;
    sim.reached = Some(ex.reached.clone());
    let out = &mut sim.defects;
    unreachable_nodes(ctx, dead, &ex, out);
    endless_loops(ctx, &machine, &cyc, stuck, &ex, out);
    concurrent_writes(ctx, &ex, out);
    doubling_lists(ctx, &ex, out);
    unseen_keys(ctx, machine.track, &ex, out);
    duplicate_executions(ctx, &cyc, &ex, out);
    sim.fan_in = Some(ex.joins);
    sim
}

/// Why the graph cannot be run in supersteps, when it cannot.
fn not_simulated(g: &GraphFacts) -> Option<&'static str> {
    if !g.unresolved.is_empty() {
        return Some(
            "some wiring is not statically known: run counts and reachability not checked",
        );
    }
    if g.routers.iter().any(|r| r.outcomes.is_empty()) {
        return Some(
            "a router's outcomes could not be read: run counts and reachability not checked",
        );
    }
    None
}

/// The superstep machine of the graph: its plain edges, joins, routers and what each node
/// writes.
fn machine<'c>(
    ctx: &'c Ctx,
    dead: &Dead,
    stuck: &[(BTreeSet<String>, Vec<usize>)],
    appending: &BTreeSet<String>,
    cyc: &[BTreeSet<String>],
) -> Machine<'c> {
    let g = ctx.g;
    let no_reducer: BTreeSet<String> = ctx
        .declared
        .iter()
        .flatten()
        .filter(|k| !ctx.reducers.contains_key(*k))
        .cloned()
        .collect();
    let joins = g
        .joins
        .iter()
        .map(|j| (j.from.iter().map(String::as_str).collect(), j.to.as_str()))
        .collect();
    Machine {
        cyclic: g
            .nodes
            .iter()
            .map(|n| n.name.as_str())
            .filter(|n| cyc.iter().any(|c| c.contains(*n)))
            .collect(),
        plain: plain_edges(g),
        joins,
        routers: router_specs(ctx, dead, stuck),
        nodes: node_writes(ctx, appending),
        track: ctx.declared.is_some() && ctx.inputs.is_some() && ctx.all_known(),
        no_reducer,
        appending: appending.clone(),
    }
}

/// Each node's plain successors: the edges that are not a router's, a leg of a join only when
/// an edge of its own also leads there, never `START -> START`.
fn plain_edges(g: &GraphFacts) -> BTreeMap<&str, Vec<&str>> {
    let mut plain: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in g.edges.iter().filter(|e| !e.conditional) {
        let leg = g
            .joins
            .iter()
            .any(|j| j.to == e.to && j.from.contains(&e.from));
        let single = g.single_edges.contains(&(e.from.clone(), e.to.clone()));
        if (leg && !single) || (e.from == "START" && e.to == "START") {
            continue;
        }
        plain
            .entry(e.from.as_str())
            .or_default()
            .push(e.to.as_str());
    }
    plain
}

/// The routers whose choice is fixed for the run, by index (an id shared by the attachments
/// of one function): those that decide on the input alone ([`fixed_routers`]), and the exit of
/// a loop whose condition no node of the loop changes, which decides the same way at every
/// pass: once it chooses to stay, it stays (its first choice may still leave).
fn fixed_choices(ctx: &Ctx, stuck: &[(BTreeSet<String>, Vec<usize>)]) -> Vec<Option<usize>> {
    let mut fixed = fixed_routers(ctx);
    let mut next_id = fixed.iter().flatten().max().map_or(0, |m| m + 1);
    for (_, rs) in stuck {
        for i in rs {
            if fixed[*i].is_none() {
                fixed[*i] = Some(next_id);
                next_id += 1;
            }
        }
    }
    fixed
}

/// Each node's routers as the machine runs them.
fn router_specs<'c>(
    ctx: &'c Ctx,
    dead: &Dead,
    stuck: &[(BTreeSet<String>, Vec<usize>)],
) -> BTreeMap<&'c str, Vec<RouterSpec<'c>>> {
    let fixed = fixed_choices(ctx, stuck);
    let mut routers: BTreeMap<&str, Vec<RouterSpec>> = BTreeMap::new();
    for (i, r) in ctx.g.routers.iter().enumerate() {
        routers
            .entry(r.source.as_str())
            .or_default()
            .push(router_spec(ctx, dead, i, fixed[i]));
    }
    routers
}

/// Router `i` as the machine runs it: the outcomes that can be taken (a route known never to
/// be taken left out, unless none would be left), the key guarding each, which outcomes the
/// values known for certain allow, the nodes each sends to.
fn router_spec<'c>(ctx: &'c Ctx, dead: &Dead, i: usize, fixed: Option<usize>) -> RouterSpec<'c> {
    let g = ctx.g;
    let r = &g.routers[i];
    let mut kept_outcomes: Vec<&Vec<String>> = r
        .outcomes
        .iter()
        .filter(|o| {
            !(o.len() == 1
                && dead
                    .iter()
                    .any(|d| d.source == r.source && d.target == o[0]))
        })
        .collect();
    if kept_outcomes.is_empty() {
        kept_outcomes = r.outcomes.iter().collect();
    }
    let branches = router_branches(ctx, r);
    let guards = kept_outcomes
        .iter()
        .map(|o| match o.as_slice() {
            [t] => branches.as_ref().and_then(|b| b.guard_of(t, r)),
            _ => None,
        })
        .collect();
    let pick: Option<super::supersteps::Pick> = branches.map(|b| {
        let outcomes: Vec<Vec<String>> = kept_outcomes.iter().map(|o| o.to_vec()).collect();
        Box::new(move |values: &BTreeMap<String, String>| {
            let mut out = BTreeSet::new();
            for t in b.possible(values, r)? {
                match outcomes.iter().position(|o| o.len() == 1 && o[0] == t) {
                    Some(i) => {
                        out.insert(i);
                    }
                    // an outcome already known never to be taken
                    None if r.outcomes.iter().any(|o| o.len() == 1 && o[0] == t) => {}
                    None => return None,
                }
            }
            Some(out)
        }) as super::supersteps::Pick
    });
    RouterSpec {
        pick,
        outcomes: kept_outcomes
            .iter()
            .map(|o| o.iter().map(String::as_str).collect())
            .collect(),
        sends: kept_outcomes
            .iter()
            .map(|o| {
                let at = r.outcomes.iter().position(|x| x == *o);
                at.and_then(|at| g.sends.get(&i)?.get(&at))
                    .map(|ns| ns.iter().map(String::as_str).collect())
                    .unwrap_or_default()
            })
            .collect(),
        guards,
        fixed,
        reads: ctx.routers[i]
            .as_ref()
            .map(|e| e.reads.keys().cloned().collect())
            .unwrap_or_default(),
        index: i,
    }
}

/// What each node whose function was read does to the state, as the machine needs it.
fn node_writes<'c>(ctx: &'c Ctx, appending: &BTreeSet<String>) -> BTreeMap<&'c str, NodeWrites> {
    let declared = |k: &String| ctx.declared.as_ref().is_some_and(|d| d.contains(k));
    let mut nodes: BTreeMap<&str, NodeWrites> = BTreeMap::new();
    for (n, e) in &ctx.effects {
        let Some(e) = e else { continue };
        nodes.insert(
            n,
            NodeWrites {
                declared: kept(ctx, e).cloned().collect(),
                all: e.writes.keys().cloned().collect(),
                whole: e.whole_state.is_some(),
                resends: e
                    .resends
                    .keys()
                    .filter(|k| appending.contains(*k))
                    .cloned()
                    .collect(),
                fills: e
                    .fills
                    .keys()
                    .filter(|k| appending.contains(*k))
                    .cloned()
                    .collect(),
                adds: e
                    .adds
                    .iter()
                    .filter(|k| appending.contains(*k))
                    .cloned()
                    .collect(),
                reads: e.reads.keys().cloned().collect(),
                settled: e
                    .settled
                    .iter()
                    .filter(|(k, _)| declared(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                stepped: e
                    .stepped
                    .iter()
                    .filter(|(k, _)| declared(k))
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
            },
        );
    }
    nodes
}

/// The state an invocation starts with: the declared keys the invocations give, the appending
/// fields they give with items (all of them when the invocations are not known), and the
/// values known for certain: the graph's own keys (some node writes them) start at the literal
/// the invocation gives; a key only the caller gives is input and may hold anything.
fn start(
    ctx: &Ctx,
    appending: &BTreeSet<String>,
) -> (BTreeSet<String>, BTreeSet<String>, BTreeMap<String, String>) {
    let (start_keys, filled) = match ctx.inputs.as_ref().map(|i| &i.keys) {
        Some(i) => (
            i.keys()
                .filter(|k| ctx.declared.as_ref().is_some_and(|d| d.contains(*k)))
                .cloned()
                .collect(),
            i.iter()
                .filter(|(k, full)| **full && appending.contains(*k))
                .map(|(k, _)| k.clone())
                .collect(),
        ),
        None => (BTreeSet::new(), appending.clone()),
    };
    let written_by_nodes: BTreeSet<&str> = ctx
        .effects
        .values()
        .flatten()
        .flat_map(|e| e.writes.keys().map(String::as_str))
        .collect();
    let start_values: BTreeMap<String, String> = if let Some(i) = &ctx.inputs {
        i.literals
            .clone()
            .into_iter()
            .filter(|(k, _)| written_by_nodes.contains(k.as_str()))
            .collect()
    } else {
        BTreeMap::new()
    };
    (start_keys, filled, start_values)
}

/// Nodes added to the graph that no run reaches.
fn unreachable_nodes(ctx: &Ctx, dead: &Dead, ex: &Explored, out: &mut Vec<Defect>) {
    let g = ctx.g;
    let mut unreachable: Vec<String> = g
        .nodes
        .iter()
        .map(|n| n.name.clone())
        .filter(|n| n != "START" && n != "END" && !ex.reached.contains(n))
        .collect();
    unreachable.sort();
    for n in unreachable {
        let guarded: Vec<&DeadRoute> = dead.iter().filter(|d| d.target == n).collect();
        let detail = if let Some(d) = guarded.first() {
            format!(
                "`{n}` is added to the graph but never runs: its route from {} can never be taken ({})",
                d.source, d.why
            )
        } else if !g.edges.iter().any(|e| e.to == n) {
            format!(
                "`{n}` is added to the graph but no edge, router or entry point leads to it: it never runs"
            )
        } else {
            format!(
                "`{n}` is added to the graph but no run from START triggers it (every route to it is guarded by a key no node has written when its router runs, or starts from a node that never runs): it never runs"
            )
        };
        out.push(Defect {
            cause: None,
            fields_only: false,
            kind: "unreachable_node".into(),
            location: ctx.node_loc(&n),
            nodes: vec![n],
            detail,
        });
    }
}

/// Loops no run can leave (those found stuck before the simulation are reported already).
fn endless_loops(
    ctx: &Ctx,
    machine: &Machine,
    cyc: &[BTreeSet<String>],
    stuck: &[(BTreeSet<String>, Vec<usize>)],
    ex: &Explored,
    out: &mut Vec<Defect>,
) {
    for scc in cyc {
        if !scc.iter().any(|n| ex.endless.contains(n)) || stuck.iter().any(|(s, _)| s == scc) {
            continue;
        }
        let members: Vec<String> = scc.iter().cloned().collect();
        let plain_cycle = plain_cycle_in(machine, scc);
        let why = if plain_cycle {
            "its plain edges lead back into it whatever its routers choose, so once entered it runs until LangGraph's recursion limit (GraphRecursionError)"
        } else {
            "no choice its routers can make leads out of it (a router that decides on the input alone makes the same choice at every pass), so it runs until LangGraph's recursion limit (GraphRecursionError)"
        };
        out.push(Defect {
            cause: None,
            fields_only: false,
            kind: "unbounded_loop".into(),
            location: ctx.node_loc(&members[0]),
            detail: format!("the cycle {} never ends: {why}", members.join(" -> ")),
            nodes: members,
        });
    }
}

/// Two writes to a field without a reducer in one superstep: one defect per set of writers,
/// with every key they collide on.
fn concurrent_writes(ctx: &Ctx, ex: &Explored, out: &mut Vec<Defect>) {
    let mut by_writers: BTreeMap<&BTreeSet<String>, Vec<&str>> = BTreeMap::new();
    for (k, writers) in &ex.concurrent {
        by_writers.entry(writers).or_default().push(k.as_str());
    }
    for (writers, keys) in by_writers {
        let ws: Vec<String> = writers.iter().cloned().collect();
        let names = match ws.as_slice() {
            [a] => a.clone(),
            [a, b] => format!("{a} and {b}"),
            _ => format!("{} and {}", ws[..ws.len() - 1].join(", "), ws[ws.len() - 1]),
        };
        let keys_text = keys
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        // where each writer sets the first key (a whole-state return: where it returns)
        let cites: Vec<String> = ws
            .iter()
            .filter_map(|w| {
                let e = ctx.effects.get(w.as_str())?.as_ref()?;
                let line = e.writes.get(keys[0]).copied().or(e.whole_state)?;
                Some(format!("{w} at {}", ctx.effects_loc(w, line)))
            })
            .collect();
        let cited = if cites.is_empty() {
            String::new()
        } else {
            format!(" ({})", cites.join(", "))
        };
        out.push(Defect {
            cause: None,
            fields_only: false,
            kind: "concurrent_write".into(),
            location: ctx.node_loc(&ws[0]),
            detail: format!(
                "{names} {} {} {keys_text}{cited}, which {} no reducer, and in some run {}: LangGraph raises InvalidUpdateError (\"Can receive only one value per step\") and the run stops",
                crate::words::form(ws.len(), "writes", "write"),
                crate::words::form(keys.len(), "the key", "the keys"),
                crate::words::form(keys.len(), "has", "have"),
                if ws.len() == 1 {
                    "it runs as two tasks in one superstep (a `Send` to it beside an edge or another `Send` that also triggers it)"
                } else {
                    "two of them run in the same superstep"
                },
            ),
            nodes: ws,
        });
    }
}

/// Appending fields re-sent while they hold items: one defect naming each node with its own
/// fields, how it re-sends them and where.
fn doubling_lists(ctx: &Ctx, ex: &Explored, out: &mut Vec<Defect>) {
    if ex.doubling.is_empty() {
        return;
    }
    let names: Vec<String> = ex.doubling.keys().cloned().collect();
    let who = ex
        .doubling
        .iter()
        .map(|(n, fs)| resent_by(ctx, n, fs))
        .collect::<Vec<_>>()
        .join("; ");
    let first = &names[0];
    let line = ctx
        .effects
        .get(first.as_str())
        .and_then(|e| e.as_ref())
        .and_then(|e| e.whole_state.or_else(|| e.resends.values().next().copied()));
    out.push(Defect {
        cause: None,
        fields_only: ex.doubling.keys().all(|n| {
            ctx.effects
                .get(n.as_str())
                .and_then(|e| e.as_ref())
                .is_some_and(|e| e.whole_state.is_none())
        }),
        kind: "whole_state_return".into(),
        location: line.map_or_else(|| ctx.node_loc(first), |l| ctx.effects_loc(first, l)),
        detail: format!(
            "{who}: in some run the re-sent list already holds items at that point, and its appending reducer adds the list to itself, so it doubles at each such node"
        ),
        nodes: names,
    });
}

/// How node `n` re-sends the appending fields `fs`, and where.
fn resent_by(ctx: &Ctx, n: &str, fs: &BTreeSet<String>) -> String {
    let fields = fs
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let at = |l: usize| ctx.effects_loc(n, l);
    match ctx.effects.get(n).and_then(|e| e.as_ref()) {
        Some(e) if e.whole_state.is_some() => format!(
            "{n} returns the whole incoming state{}, which re-sends {fields}",
            e.whole_state
                .map_or(String::new(), |l| format!(" ({})", at(l)))
        ),
        Some(e) => {
            let line = fs.iter().find_map(|f| e.resends.get(f)).copied();
            let grown = fs.iter().find_map(|f| e.fills.get(f)).copied();
            format!(
                "{n} re-sends the current value of {fields}{}{}",
                line.map_or(String::new(), |l| format!(" ({})", at(l))),
                grown.map_or(String::new(), |l| format!(
                    " after appending to it in place ({})",
                    at(l)
                ))
            )
        }
        None => format!("{n} re-sends the current value of {fields}"),
    }
}

/// Keys a reader never sees although some node writes them (it runs before its writers); only
/// when the machine tracked which keys may hold a value.
fn unseen_keys(ctx: &Ctx, track: bool, ex: &Explored, out: &mut Vec<Defect>) {
    let g = ctx.g;
    let writes = |n: &str, k: &str| {
        ctx.effects
            .get(n)
            .and_then(|e| e.as_ref())
            .is_some_and(|e| e.writes.contains_key(k))
    };
    let mut unseen: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for ((reader, k), seen) in &ex.visible {
        if *seen || !track {
            continue;
        }
        let (name, own) = match reader.split_once('#') {
            Some((src, i)) => {
                let i: usize = i.parse().unwrap_or(0);
                (
                    format!("{src} (router {})", g.routers[i].router),
                    writes(src, k),
                )
            }
            None => (reader.clone(), writes(reader, k)),
        };
        if own {
            continue;
        }
        unseen.entry(k.as_str()).or_default().push(name);
    }
    for (k, readers) in unseen {
        let writers: Vec<&str> = ctx
            .effects
            .iter()
            .filter(|(_, e)| e.as_ref().is_some_and(|e| e.writes.contains_key(k)))
            .map(|(n, _)| *n)
            .collect();
        if writers.is_empty() {
            continue; // nothing sets it: the static check names it
        }
        let first = node_of_reader(&readers[0]);
        out.push(Defect {
            cause: Some(KeyCause::WrittenLater {
                key: k.to_string(),
                writers: writers.iter().map(|w| w.to_string()).collect(),
                declared: ctx.declared.as_ref().is_some_and(|d| d.contains(k)),
            }),
            fields_only: false,
            kind: "unknown_state_key".into(),
            location: ctx.node_loc(first),
            detail: format!(
                "{} {} the key `{k}` before any node has written it: every time {} {}, `{k}` is not in the state yet ({} {} it only later or on other paths)",
                readers.join(", "),
                crate::words::form(readers.len(), "reads", "read"),
                crate::words::form(readers.len(), "it", "they"),
                crate::words::form(readers.len(), "runs", "run"),
                writers.join(", "),
                crate::words::form(writers.len(), "writes", "write"),
            ),
            nodes: readers,
        });
    }
}

/// Duplicate executions: a node re-run as part of a loop is iteration, not a defect (the
/// machine records second runs of nodes on no cycle only); reports the nodes whose second runs
/// are not all triggered by other such nodes (the root causes), and lists what runs again
/// after them.
fn duplicate_executions(ctx: &Ctx, cyc: &[BTreeSet<String>], ex: &Explored, out: &mut Vec<Defect>) {
    let on_cycle = |n: &str| -> bool { cyc.iter().any(|c| c.contains(n)) };
    let dup_nodes: BTreeSet<&str> = ex.dups.keys().map(String::as_str).collect();
    let roots: Vec<(&String, &BTreeSet<String>)> = ex
        .dups
        .iter()
        .filter(|(_, by)| !by.iter().all(|b| dup_nodes.contains(b.as_str())))
        .collect();
    let root_names: BTreeSet<&str> = roots.iter().map(|(n, _)| n.as_str()).collect();
    for (n, again) in roots {
        let first: Vec<&String> = ex.first.get(n).into_iter().flatten().collect();
        let after: Vec<&str> = dup_nodes
            .iter()
            .copied()
            .filter(|d| !root_names.contains(d))
            .collect();
        let why = if first.iter().any(|b| *b == "START") && !again.iter().any(|b| b == "START") {
            "it is an entry point and is also triggered again by an edge"
        } else if again.iter().any(|b| on_cycle(b)) {
            "a loop re-triggers it although it is not part of the loop (a retry that re-runs its siblings, or a plain edge out of a loop)"
        } else {
            "its plain incoming edges come from branches that finish in different supersteps (only add_edge([a, b], node) waits for all of them)"
        };
        let mut detail = format!(
            "`{n}` runs more than once in one invocation: first after {}, then again in a later superstep after {}; {why}",
            first
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" + "),
            again
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" + "),
        );
        if !after.is_empty() {
            detail.push_str(&format!(
                "; what follows runs again too: {}",
                after.join(", ")
            ));
        }
        out.push(Defect {
            cause: None,
            fields_only: false,
            kind: "duplicate_execution".into(),
            location: ctx.node_loc(n),
            nodes: vec![n.clone()],
            detail,
        });
    }
}

fn node_of_reader(r: &str) -> &str {
    r.split(" (router ").next().unwrap_or(r)
}

/// Whether the plain edges among `scc` form a cycle (it then re-triggers itself forever).
fn plain_cycle_in(machine: &Machine, scc: &BTreeSet<String>) -> bool {
    let succ = |n: &str| -> Vec<&str> {
        machine
            .plain
            .get(n)
            .into_iter()
            .flatten()
            .copied()
            .filter(|t| scc.contains(*t))
            .collect()
    };
    scc.iter().any(|start| {
        let mut seen = BTreeSet::new();
        let mut stack = succ(start);
        while let Some(x) = stack.pop() {
            if x == start {
                return true;
            }
            if seen.insert(x) {
                stack.extend(succ(x));
            }
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use super::Defect;
    use crate::repo::python::analyse;

    const STATE: &str = "import operator\nfrom typing import Annotated, TypedDict\n\nclass AgentState(TypedDict):\n    repo_url: str\n    count: int\n    report: str\n    evidences: Annotated[dict, operator.ior]\n    opinions: Annotated[list, operator.add]\n";

    const HEADER: &str = "from langgraph.graph import StateGraph, START, END\nfrom langgraph.types import Send\nfrom src.state import AgentState\n\ndef node(state):\n    return {'opinions': ['x']}\n\n";

    fn defects(graph: &str) -> Vec<Defect> {
        let facts = analyse(
            vec![
                ("src/state.py".into(), STATE.into()),
                ("src/graph.py".into(), format!("{HEADER}{graph}")),
            ],
            &[],
        );
        facts.graphs.first().expect("a graph").defects.clone()
    }

    fn kinds(d: &[Defect]) -> Vec<(&str, Vec<&str>)> {
        d.iter()
            .map(|d| {
                (
                    d.kind.as_str(),
                    d.nodes.iter().map(String::as_str).collect(),
                )
            })
            .collect()
    }

    const TEXTBOOK: &str = "g = StateGraph(AgentState)\nfor n in ['repo', 'doc', 'vision', 'agg', 'p', 'd', 't', 'chief']:\n    g.add_node(n, node)\nfor n in ['repo', 'doc', 'vision']:\n    g.add_edge(START, n)\n    g.add_edge(n, 'agg')\nfor n in ['p', 'd', 't']:\n    g.add_edge('agg', n)\n    g.add_edge(n, 'chief')\ng.add_edge('chief', END)\n";

    #[test]
    fn a_textbook_graph_has_no_defect() {
        assert_eq!(kinds(&defects(TEXTBOOK)), vec![]);
    }

    #[test]
    fn branches_of_different_lengths_joined_by_plain_edges_run_the_join_twice() {
        let wiring = "g = StateGraph(AgentState)\nfor n in ['a', 'b', 'c', 'agg', 'judge']:\n    g.add_node(n, node)\ng.add_edge(START, 'a')\ng.add_edge(START, 'b')\ng.add_edge('b', 'c')\n";
        let d = defects(&format!(
            "{wiring}g.add_edge('a', 'agg')\ng.add_edge('c', 'agg')\ng.add_edge('agg', 'judge')\ng.add_edge('judge', END)\n"
        ));
        assert_eq!(kinds(&d), vec![("duplicate_execution", vec!["agg"])]);
        assert!(d[0].detail.contains("judge"), "{}", d[0].detail);
        assert_eq!(d[0].location, "src/graph.py:10");
        // the list form waits for both branches: one run
        let d = defects(&format!(
            "{wiring}g.add_edge(['a', 'c'], 'agg')\ng.add_edge('agg', 'judge')\ng.add_edge('judge', END)\n"
        ));
        assert_eq!(kinds(&d), vec![]);
    }

    #[test]
    fn two_entry_points_reaching_one_node_run_it_twice() {
        let d = defects(
            "g = StateGraph(AgentState)\ng.add_node('a', node)\ng.add_node('b', node)\ng.set_entry_point('a')\ng.add_edge(START, 'b')\ng.add_edge('b', 'a')\ng.add_edge('a', END)\n",
        );
        assert_eq!(kinds(&d), vec![("duplicate_execution", vec!["a"])]);
        assert!(d[0].detail.contains("entry point"), "{}", d[0].detail);
    }

    #[test]
    fn a_retry_edge_that_restarts_the_fan_out_re_runs_the_siblings() {
        let d = defects(
            "def fan(state):\n    return [Send('p', state), Send('d', state)]\ndef check(state):\n    if state.get('opinions'):\n        return 'agg'\n    return 'fanout'\ng = StateGraph(AgentState)\nfor n in ['fanout', 'p', 'd', 'agg']:\n    g.add_node(n, node)\ng.add_edge(START, 'fanout')\ng.add_conditional_edges('fanout', fan)\ng.add_edge('p', 'agg')\ng.add_conditional_edges('d', check)\ng.add_edge('agg', END)\n",
        );
        let k = kinds(&d);
        assert!(k.contains(&("duplicate_execution", vec!["p"])), "{k:?}");
        assert!(!k.iter().any(|(_, n)| n.contains(&"d")), "{k:?}");
    }

    #[test]
    fn a_node_without_incoming_edge_and_a_route_on_a_key_nobody_sets_are_unreachable() {
        let d = defects(&format!(
            "{TEXTBOOK}g.add_node('orphan', node)\ng.add_edge('orphan', 'agg')\n"
        ));
        assert_eq!(kinds(&d), vec![("unreachable_node", vec!["orphan"])]);
        let d = defects(
            "def route(state):\n    if state.get('error'):\n        return 'handler'\n    return 'chief'\ng = StateGraph(AgentState)\nfor n in ['work', 'handler', 'chief']:\n    g.add_node(n, node)\ng.add_edge(START, 'work')\ng.add_conditional_edges('work', route)\ng.add_edge('handler', END)\ng.add_edge('chief', END)\n",
        );
        let k = kinds(&d);
        assert!(k.contains(&("unreachable_node", vec!["handler"])), "{k:?}");
        assert!(
            k.iter().any(|(kind, _)| *kind == "unknown_state_key"),
            "{k:?}"
        );
        assert!(d.iter().any(|x| x.detail.contains("`error`")));
    }

    #[test]
    fn a_loop_whose_counter_nothing_increments_is_unbounded_and_one_that_counts_is_not() {
        let loop_ = |body: &str| {
            format!(
                "def work(state):\n    {body}\ndef again(state):\n    if state['count'] < 3:\n        return 'work'\n    return 'done'\ng = StateGraph(AgentState)\ng.add_node('work', work)\ng.add_node('done', node)\ng.add_edge(START, 'work')\ng.add_conditional_edges('work', again)\ng.add_edge('done', END)\n"
            )
        };
        let d = defects(&loop_("return {'report': 'again'}"));
        // once the router stays it stays; its first choice may still leave (`count` comes
        // from the input), so `done` is not unreachable
        assert_eq!(kinds(&d), vec![("unbounded_loop", vec!["work"])]);
        assert!(d[0].detail.contains("`count`"), "{}", d[0].detail);
        let d = defects(&loop_("return {'count': state['count'] + 1}"));
        assert_eq!(kinds(&d), vec![]);
        // a cycle of plain edges has no exit at all
        let d = defects(
            "g = StateGraph(AgentState)\ng.add_node('a', node)\ng.add_node('b', node)\ng.add_edge(START, 'a')\ng.add_edge('a', 'b')\ng.add_edge('b', 'a')\n",
        );
        assert_eq!(kinds(&d), vec![("unbounded_loop", vec!["a", "b"])]);
    }

    const INVOKE: &str =
        "app = g.compile()\napp.invoke({'repo_url': 'u', 'count': 0, 'opinions': []})\n";

    fn empty_fields(graph: &str) -> Vec<(String, String)> {
        let facts = analyse(
            vec![
                ("src/state.py".into(), STATE.into()),
                ("src/graph.py".into(), format!("{HEADER}{graph}")),
            ],
            &[],
        );
        facts
            .graphs
            .first()
            .expect("a graph")
            .empty_fields
            .iter()
            .map(|e| (e.field.clone(), e.why.clone()))
            .collect()
    }

    #[test]
    fn a_reducer_field_whose_writers_the_schema_drops_holds_nothing_in_any_run() {
        // the detectives return their evidence under keys the schema does not declare: the
        // `evidences` reducer never merges anything; the judges do fill `opinions`
        let nodes = "def repo(state):\n    return {'repo_evidence': [1]}\ndef doc(state):\n    return {'doc_evidence': [2]}\ndef agg(state):\n    return state\n";
        let wiring = "g = StateGraph(AgentState)\ng.add_node('repo', repo)\ng.add_node('doc', doc)\ng.add_node('agg', agg)\ng.add_node('judge', node)\ng.add_edge(START, 'repo')\ng.add_edge(START, 'doc')\ng.add_edge(['repo', 'doc'], 'agg')\ng.add_edge('agg', 'judge')\ng.add_edge('judge', END)\n";
        let empty = empty_fields(&format!("{nodes}{wiring}{INVOKE}"));
        assert_eq!(
            empty.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
            vec!["evidences"],
            "{empty:?}"
        );
        assert!(
            empty[0]
                .1
                .contains("no node writes it (agg returns the whole state"),
            "{}",
            empty[0].1
        );
        // a detective that writes the field fills it
        let writes = nodes.replace("'doc_evidence': [2]", "'evidences': {'doc': [2]}");
        assert_eq!(empty_fields(&format!("{writes}{wiring}{INVOKE}")), vec![]);
        // an input that may not be known leaves it undecided
        assert_eq!(empty_fields(&format!("{nodes}{wiring}")), vec![]);
        // a list field nothing appends to holds nothing either, unless something grows it
        let no_judge = wiring.replace("g.add_node('judge', node)", "g.add_node('judge', agg)");
        let empty = empty_fields(&format!("{nodes}{no_judge}{INVOKE}"));
        assert_eq!(
            empty.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
            vec!["evidences", "opinions"],
            "{empty:?}"
        );
        let grown = format!("{nodes}def grow(s):\n    s['opinions'].append(1)\n    return {{}}\n");
        assert_eq!(
            empty_fields(&format!("{grown}{no_judge}{INVOKE}"))
                .iter()
                .map(|(f, _)| f.as_str())
                .collect::<Vec<_>>(),
            vec!["evidences"]
        );
    }

    #[test]
    fn a_counter_a_node_increments_is_followed_so_its_router_chooses_what_langgraph_chooses() {
        // `work` retries itself while count < limit and triggers `after` at every run
        let retry = |limit: u32| {
            format!(
                "def work(state):\n    return {{'count': state['count'] + 1}}\ndef again(state):\n    if state['count'] < {limit}:\n        return 'work'\n    return END\ng = StateGraph(AgentState)\ng.add_node('work', work)\ng.add_node('after', node)\ng.add_edge(START, 'work')\ng.add_edge('work', 'after')\ng.add_conditional_edges('work', again)\ng.add_edge('after', END)\n{INVOKE}"
            )
        };
        // count is 1 when the router first runs: it ends the run, `after` runs once
        assert_eq!(kinds(&defects(&retry(1))), vec![]);
        // three passes of `work`, so `after` runs three times
        assert_eq!(
            kinds(&defects(&retry(3))),
            vec![("duplicate_execution", vec!["after"])]
        );
    }

    #[test]
    fn a_loop_whose_exit_key_a_triggered_node_increments_is_not_stuck() {
        let d = defects(&format!(
            "def bump(state):\n    return {{'count': state['count'] + 1}}\ndef again(state):\n    if state['count'] < 2:\n        return 'a'\n    return END\ng = StateGraph(AgentState)\ng.add_node('a', node)\ng.add_node('b', node)\ng.add_node('bump', bump)\ng.add_edge(START, 'a')\ng.add_edge('a', 'b')\ng.add_edge('a', 'bump')\ng.add_conditional_edges('b', again)\n{INVOKE}"
        ));
        assert!(
            !d.iter().any(|d| d.kind == "unbounded_loop"),
            "{:#?}",
            kinds(&d)
        );
    }

    #[test]
    fn a_loop_whose_exit_key_a_node_beside_it_writes_is_not_decided_stuck() {
        // `bump` runs on a branch beside the loop `a -> a` (from START, not through it) and
        // changes `count` while `a` loops: LangGraph ends the loop once `count` reaches 2
        let beside = format!(
            "def bump(state):\n    return {{'count': state['count'] + 1}}\ndef again(state):\n    if state['count'] < 2:\n        return 'a'\n    return END\ng = StateGraph(AgentState)\ng.add_node('a', node)\ng.add_node('s', node)\ng.add_node('bump', bump)\ng.add_edge(START, 'a')\ng.add_edge(START, 's')\ng.add_edge('s', 'bump')\ng.add_edge('bump', 'bump2')\ng.add_node('bump2', bump)\ng.add_conditional_edges('a', again)\n{INVOKE}"
        );
        let d = defects(&beside);
        assert!(
            !d.iter().any(|d| d.kind == "unbounded_loop"),
            "{:#?}",
            kinds(&d)
        );
        // the same writer strictly before the loop (every path to it passes through it):
        // the exit decides the same way at every pass
        let before = beside
            .replace("g.add_edge(START, 'a')\n", "")
            .replace("g.add_edge('bump', 'bump2')", "g.add_edge('bump2', 'a')")
            .replace(
                "g.add_edge('s', 'bump')",
                "g.add_edge('s', 'bump')\ng.add_edge('bump', 'bump2')",
            );
        let d = defects(&before);
        assert!(
            d.iter().any(|d| d.kind == "unbounded_loop"),
            "{:#?}",
            kinds(&d)
        );
    }

    #[test]
    fn a_send_beside_an_edge_to_the_same_node_runs_it_twice_in_one_superstep() {
        let d = defects(&format!(
            "def write(state):\n    return {{'report': 'r'}}\ndef fan(state):\n    return [Send('w', state), Send('other', state)]\ng = StateGraph(AgentState)\ng.add_node('a', node)\ng.add_node('w', write)\ng.add_node('other', node)\ng.add_edge(START, 'a')\ng.add_edge('a', 'w')\ng.add_conditional_edges('a', fan)\ng.add_edge('w', END)\ng.add_edge('other', END)\n{INVOKE}"
        ));
        assert_eq!(kinds(&d), vec![("concurrent_write", vec!["w"])]);
        assert!(
            d[0].detail.starts_with("w writes the key `report`")
                && d[0].detail.contains("two tasks in one superstep"),
            "{}",
            d[0].detail
        );
    }

    #[test]
    fn a_list_plus_items_fills_it_so_a_later_whole_state_return_doubles_it() {
        let d = defects(&format!(
            "def add(state):\n    return {{'opinions': state['opinions'] + ['x']}}\ndef whole(state):\n    return state\ng = StateGraph(AgentState)\ng.add_node('add', add)\ng.add_node('whole', whole)\ng.add_edge(START, 'add')\ng.add_edge('add', 'whole')\ng.add_edge('whole', END)\n{INVOKE}"
        ));
        // `add` re-sends the empty input list (no doubling); `whole` re-sends one item
        assert_eq!(kinds(&d), vec![("whole_state_return", vec!["whole"])]);
    }

    #[test]
    fn a_list_grown_in_place_through_a_local_and_re_sent_doubles() {
        let d = defects(&format!(
            "def agg(state):\n    errs = state.get('opinions', [])\n    if not state.get('repo_url'):\n        errs.append('missing')\n    return {{'opinions': errs}}\ng = StateGraph(AgentState)\ng.add_node('agg', agg)\ng.add_edge(START, 'agg')\ng.add_edge('agg', END)\n{INVOKE}"
        ));
        assert_eq!(kinds(&d), vec![("whole_state_return", vec!["agg"])]);
    }

    #[test]
    fn the_input_is_read_through_a_local_dict_passed_to_invoke() {
        let graph = |invoke: &str| {
            format!(
                "def reader(state):\n    return {{'opinions': [state['report']]}}\ng = StateGraph(AgentState)\ng.add_node('reader', reader)\ng.add_edge(START, 'reader')\ng.add_edge('reader', END)\napp = g.compile()\ndef main():\n{invoke}"
            )
        };
        // `report` is declared, no node writes it and the input does not give it
        let d = defects(&graph(
            "    initial = {'repo_url': 'u', 'opinions': []}\n    app.invoke(initial)\n",
        ));
        assert_eq!(kinds(&d), vec![("unknown_state_key", vec!["reader"])]);
        // a local changed by key after its literal may give it: not decided
        let d = defects(&graph(
            "    initial = {'repo_url': 'u', 'opinions': []}\n    initial['report'] = 'r'\n    app.invoke(initial)\n",
        ));
        assert_eq!(kinds(&d), vec![]);
    }

    #[test]
    fn a_key_of_a_dict_field_nothing_puts_into_it_is_unknown_and_its_route_dead() {
        // the detective writes `general` at the top level (dropped), never into `evidences`:
        // the router's read always finds the empty default, so `error_handler` never runs
        let graph = |detective: &str, extra: &str| {
            format!(
                "def det(state):\n    {detective}\ndef agg(state):\n    {extra}\n    return {{}}\ndef check(state):\n    evs = state.get('evidences', {{}}).get('general', [])\n    if any(not e for e in evs):\n        return 'error_handler'\n    return 'judges'\ndef error_handler(state):\n    return {{'report': 'failed'}}\ndef judges(state):\n    return {{'opinions': ['o']}}\ng = StateGraph(AgentState)\ng.add_node('det', det)\ng.add_node('agg', agg)\ng.add_node('error_handler', error_handler)\ng.add_node('judges', judges)\ng.add_edge(START, 'det')\ng.add_edge('det', 'agg')\ng.add_conditional_edges('agg', check, {{'error_handler': 'error_handler', 'judges': 'judges'}})\ng.add_edge('error_handler', END)\ng.add_edge('judges', END)\napp = g.compile()\ndef main():\n    return app.invoke({{'repo_url': 'u', 'evidences': {{}}, 'opinions': [], 'count': 0, 'report': ''}})\n"
            )
        };
        let d = defects(&graph("return {'general': ['x']}", "pass"));
        let k = kinds(&d);
        assert!(
            k.contains(&("unreachable_node", vec!["error_handler"])),
            "{k:?}"
        );
        let unknown = d
            .iter()
            .find(|x| x.kind == "unknown_state_key")
            .expect("unknown key");
        assert_eq!(unknown.nodes, vec!["agg (router check)"]);
        assert!(
            unknown.detail.contains("`evidences[\"general\"]`")
                && unknown.detail.contains("agg -> error_handler"),
            "{}",
            unknown.detail
        );
        assert_eq!(unknown.location, "src/graph.py:14");
        // a node that puts `general` into `evidences`: the route can be taken
        let d = defects(&graph("return {'evidences': {'general': ['x']}}", "pass"));
        assert_eq!(kinds(&d), vec![], "{d:?}");
        // a node that may change the dict in place: not decided
        let d = defects(&graph(
            "return {'general': ['x']}",
            "state['evidences'].setdefault('general', [])",
        ));
        assert!(
            !d.iter()
                .any(|x| x.kind == "unreachable_node" || x.kind == "unknown_state_key"),
            "{d:?}"
        );
    }

    #[test]
    fn a_route_taken_only_when_a_key_an_earlier_node_always_fills_is_empty_is_dead() {
        // `det` runs before `agg` and always puts items under `general`; `evidences` merges
        // key by key, so `agg`'s router never finds it empty: `error_handler` never runs
        let graph = |detective: &str, extra: &str, test: &str| {
            format!(
                "def det(state):\n    {detective}\ndef agg(state):\n    {extra}\n    return {{}}\ndef check(state):\n    evs = state.get('evidences', {{}}).get('general', [])\n    if {test}:\n        return 'judges'\n    return 'error_handler'\ndef error_handler(state):\n    return {{'report': 'failed'}}\ndef judges(state):\n    return {{'opinions': ['o']}}\ng = StateGraph(AgentState)\ng.add_node('det', det)\ng.add_node('agg', agg)\ng.add_node('error_handler', error_handler)\ng.add_node('judges', judges)\ng.add_edge(START, 'det')\ng.add_edge('det', 'agg')\ng.add_conditional_edges('agg', check, {{'error_handler': 'error_handler', 'judges': 'judges'}})\ng.add_edge('error_handler', END)\ng.add_edge('judges', END)\napp = g.compile()\ndef main():\n    return app.invoke({{'repo_url': 'u', 'evidences': {{}}, 'opinions': [], 'count': 0, 'report': ''}})\n"
            )
        };
        let fills = "return {'evidences': {'general': ['x']}}";
        for test in ["evs", "any(e for e in evs)", "len(evs) > 0"] {
            let d = defects(&graph(fills, "pass", test));
            assert_eq!(
                kinds(&d),
                vec![("unreachable_node", vec!["error_handler"])],
                "{test}: {d:?}"
            );
            assert!(
                d[0].detail
                    .contains("det always fills it with items (src/graph.py:"),
                "{}",
                d[0].detail
            );
        }
        // what the items hold decides `any(not e.found ...)`: not decided
        let d = defects(&graph(fills, "pass", "not any(not e for e in evs)"));
        assert_eq!(kinds(&d), vec![], "{d:?}");
        // an empty list, a write on one path only, another node emptying it: the route can
        // be taken
        for (det, extra) in [
            ("return {'evidences': {'general': []}}", "pass"),
            (
                "if state['repo_url']:\n        return {'evidences': {'general': ['x']}}\n    return {}",
                "pass",
            ),
            (fills, "return {'evidences': {'general': []}}"),
        ] {
            let d = defects(&graph(det, extra, "evs"));
            assert_eq!(kinds(&d), vec![], "{det} / {extra}: {d:?}");
        }
    }

    #[test]
    fn a_route_guarded_by_a_declared_key_no_node_writes_and_the_input_lacks_is_dead() {
        // `report` is declared, only read: LangGraph leaves it unset, so `handler` never runs
        let graph = |invoke: &str| {
            format!(
                "def check(state):\n    if state.get('report'):\n        return 'handler'\n    return 'judge'\ndef handler(state):\n    return {{'opinions': ['failed']}}\ng = StateGraph(AgentState)\ng.add_node('work', node)\ng.add_node('handler', handler)\ng.add_node('judge', node)\ng.add_edge(START, 'work')\ng.add_conditional_edges('work', check, {{'handler': 'handler', 'judge': 'judge'}})\ng.add_edge('handler', END)\ng.add_edge('judge', END)\napp = g.compile()\n{invoke}"
            )
        };
        let d = defects(&graph(
            "def main():\n    return app.invoke({'repo_url': 'u', 'opinions': []})\n",
        ));
        let k = kinds(&d);
        assert!(
            k.contains(&("unreachable_node", vec!["handler"]))
                && k.contains(&("unknown_state_key", vec!["work (router check)"])),
            "{k:?}"
        );
        let why = &d
            .iter()
            .find(|x| x.kind == "unreachable_node")
            .expect("unreachable")
            .detail;
        assert!(
            why.contains("`report` is declared but no node writes it and the graph's input does not provide it"),
            "{why}"
        );
        // the input gives it: the route can be taken
        let d = defects(&graph(
            "def main():\n    return app.invoke({'repo_url': 'u', 'opinions': [], 'report': 'x'})\n",
        ));
        assert_eq!(kinds(&d), vec![], "{d:?}");
        // no invocation seen: it may be an input, not decided
        let d = defects(&graph(""));
        assert_eq!(kinds(&d), vec![], "{d:?}");
    }

    #[test]
    fn nodes_added_in_a_loop_over_name_function_pairs_run_their_functions() {
        // `fn` is the loop's variable: each pass adds the function it is bound to
        let graph = |writer: &str| {
            format!(
                "def a(state):\n    return {{'opinions': ['a']}}\ndef b(state):\n    {writer}\ndef c(state):\n    return {{'opinions': [state['report']]}}\ndef fn(state):\n    return {{'report': 'x'}}\ng = StateGraph(AgentState)\nfor name, fn in [('a', a), ('b', b), ('c', c)]:\n    g.add_node(name, fn)\nfor x, y in [(START, 'a'), ('a', 'b'), ('b', 'c'), ('c', END)]:\n    g.add_edge(x, y)\napp = g.compile()\ndef main():\n    return app.invoke({{'repo_url': 'u', 'opinions': []}})\n"
            )
        };
        // `b` writes an undeclared key: read through the loop, it is reported; `report` (read
        // by `c`) is written by no node added to the graph (`fn` is a loop variable here)
        let d = defects(&graph("return {'extra': 1}"));
        assert_eq!(
            kinds(&d),
            vec![
                ("undeclared_state_key", vec!["b"]),
                ("unknown_state_key", vec!["c"])
            ],
            "{d:?}"
        );
        // `b` writes `report` under a computed key: `c`'s read is not called unset, and a
        // note says why
        let facts = analyse(
            vec![
                ("src/state.py".into(), STATE.into()),
                (
                    "src/graph.py".into(),
                    format!(
                        "{HEADER}{}",
                        graph("key = 'report'\n    return {key: 'done'}")
                    ),
                ),
            ],
            &[],
        );
        let g = facts.graphs.first().expect("a graph");
        assert_eq!(kinds(&g.defects), vec![], "{:?}", g.defects);
        assert!(
            g.runtime_notes.iter().any(|n| n
                .starts_with("b writes the state under a key computed at run time (src/graph.py:")),
            "{:?}",
            g.runtime_notes
        );
        // the same with `state[key] = v` before a whole-state return
        let d = defects(&graph(
            "key = 'report'\n    state[key] = 'done'\n    return state",
        ));
        assert!(!d.iter().any(|x| x.kind == "unknown_state_key"), "{d:?}");
    }

    #[test]
    fn the_graphs_input_is_its_invocation_whatever_the_keys_are_called() {
        // keys with no `repo` or `pdf` in their names: still the graph's input, so `report`
        // (declared, written by no node, not passed) is known to be missing
        let graph = "def reader(state):\n    return {'opinions': [state['report']]}\ng = StateGraph(AgentState)\ng.add_node('reader', reader)\ng.add_edge(START, 'reader')\ng.add_edge('reader', END)\napp = g.compile()\ndef main():\n    return app.invoke({'count': 0, 'opinions': []})\n";
        let d = defects(graph);
        assert_eq!(kinds(&d), vec![("unknown_state_key", vec!["reader"])]);
        // a tool's `.invoke` with a literal dict is not the graph's input: nothing is known
        let tool = graph.replace("app.invoke(", "search_tool.invoke(");
        assert_eq!(kinds(&defects(&tool)), vec![]);
    }

    #[test]
    fn reads_through_a_wrapper_and_a_method_called_with_the_state_are_reads() {
        let graph = "class Judge:\n    def decide(self, state):\n        src = state.get('pdf_source', 'x')\n        return {'report': src}\ndef judge_node(state):\n    result = Judge().decide(state)\n    return result\ndef safe(fn, name):\n    def wrapper(state):\n        try:\n            return fn(state)\n        except Exception as e:\n            return {'report': str(e)}\n    return wrapper\ng = StateGraph(AgentState)\ng.add_node('judge', safe(judge_node, 'Judge'))\ng.add_edge(START, 'judge')\ng.add_edge('judge', END)\napp = g.compile()\ndef main():\n    return app.invoke({'repo_url': 'u', 'pdf_source': 'p.pdf', 'opinions': []})\n";
        let d = defects(graph);
        assert_eq!(
            kinds(&d),
            vec![("unknown_state_key", vec!["judge"])],
            "{d:?}"
        );
        // said where the read is, and that the input's key is dropped
        assert_eq!(d[0].location, "src/graph.py:10");
        assert!(
            d[0].detail
                .contains("graph's input gives it (src/graph.py:28)"),
            "{}",
            d[0].detail
        );
    }

    #[test]
    fn keys_outside_the_schema_are_dropped_and_keys_nobody_sets_are_unknown() {
        let g = |ret: &str, read: &str| {
            format!(
                "def first(state):\n    return {ret}\ndef second(state):\n    x = state.get('{read}')\n    return {{'report': 'done'}}\ng = StateGraph(AgentState)\ng.add_node('first', first)\ng.add_node('second', second)\ng.add_edge(START, 'first')\ng.add_edge('first', 'second')\ng.add_edge('second', END)\n"
            )
        };
        let d = defects(&g("{'repo_path': '/tmp/x'}", "repo_url"));
        assert_eq!(kinds(&d), vec![("undeclared_state_key", vec!["first"])]);
        assert!(d[0].detail.contains("`repo_path`"));
        assert_eq!(d[0].location, "src/graph.py:9");
        // declared: nothing to say
        let d = defects(&g("{'report': '/tmp/x'}", "repo_url"));
        assert_eq!(kinds(&d), vec![]);
        // read but neither declared nor written by anyone
        let d = defects(&g("{'report': '/tmp/x'}", "forensic_tasks"));
        assert_eq!(kinds(&d), vec![("unknown_state_key", vec!["second"])]);
    }

    #[test]
    fn one_return_with_two_undeclared_keys_is_one_defect_naming_both() {
        use super::KeyCause;
        let g = |ret: &str| {
            format!(
                "def first(state):\n    if state.get('repo_url'):\n        return {ret}\n    return {{'report': 'x', 'meta': 2}}\ndef second(state):\n    return {{'report': state.get('meta')}}\ng = StateGraph(AgentState)\ng.add_node('first', first)\ng.add_node('second', second)\ng.add_edge(START, 'first')\ng.add_edge('first', 'second')\ng.add_edge('second', END)\n"
            )
        };
        // `meta` and `rules` written by the same return: one defect
        let d = defects(&g("{'meta': 1, 'rules': {}, 'report': 'y'}"));
        assert_eq!(
            kinds(&d),
            vec![("undeclared_state_key", vec!["first"])],
            "{d:?}"
        );
        assert_eq!(
            d[0].cause,
            Some(KeyCause::Undeclared {
                keys: vec!["meta".into(), "rules".into()]
            })
        );
        assert!(
            d[0].detail.starts_with(
                "first returns the keys `meta` and `rules`, which the state schema `AgentState` does not declare: LangGraph drops them"
            ),
            "{}",
            d[0].detail
        );
        assert!(
            d[0].detail.contains("second reads `meta`"),
            "{}",
            d[0].detail
        );
    }

    #[test]
    fn an_unknown_key_says_why_it_is_never_set() {
        use super::KeyCause;
        let g = |read: &str, write: &str, input: &str| {
            format!(
                "def first(state):\n    return {write}\ndef second(state):\n    x = {read}\n    return {{'report': 'done'}}\ng = StateGraph(AgentState)\ng.add_node('first', first)\ng.add_node('second', second)\ng.add_edge(START, 'first')\ng.add_edge('first', 'second')\ng.add_edge('second', END)\napp = g.compile()\ndef main():\n    return app.invoke({input})\n"
            )
        };
        let cause = |read: &str, write: &str, input: &str| {
            defects(&g(read, write, input))
                .into_iter()
                .find(|d| d.kind == "unknown_state_key")
                .and_then(|d| d.cause)
        };
        // declared, never written, not given
        assert_eq!(
            cause("state.get('count')", "{'report': 'a'}", "{'repo_url': 'u'}"),
            Some(KeyCause::NeverWritten {
                key: "count".into()
            })
        );
        // undeclared, given by the input
        assert_eq!(
            cause(
                "state.get('pdf')",
                "{'report': 'a'}",
                "{'repo_url': 'u', 'pdf': 'p'}"
            ),
            Some(KeyCause::InputDropped {
                key: "pdf".into(),
                at: "src/graph.py:21".into()
            })
        );
        // an entry of a declared dict field that nothing puts in
        assert_eq!(
            cause(
                "state['evidences']['general']",
                "{'evidences': {'repo': [1]}}",
                "{'repo_url': 'u', 'evidences': {}}"
            ),
            Some(KeyCause::MissingEntry {
                field: "evidences".into(),
                entry: "general".into()
            })
        );
    }

    #[test]
    fn each_node_that_doubles_a_list_is_named_with_the_lists_it_doubles() {
        let state = "import operator\nfrom typing import Annotated, TypedDict\n\nclass AgentState(TypedDict):\n    errors: Annotated[list, operator.add]\n    opinions: Annotated[list, operator.add]\n";
        let graph = "from langgraph.graph import StateGraph, START, END\nfrom src.state import AgentState\n\ndef fail(state):\n    return {'errors': ['e']}\ndef again(state):\n    return {'errors': state['errors'] + ['x']}\ndef judge(state):\n    return {'opinions': ['o']}\ndef echo(state):\n    return state\n\ng = StateGraph(AgentState)\ng.add_node('fail', fail)\ng.add_node('again', again)\ng.add_node('judge', judge)\ng.add_node('echo', echo)\ng.add_edge(START, 'fail')\ng.add_edge('fail', 'again')\ng.add_edge('again', 'judge')\ng.add_edge('judge', 'echo')\ng.add_edge('echo', END)\n";
        let facts = analyse(
            vec![
                ("src/state.py".into(), state.into()),
                ("src/graph.py".into(), graph.into()),
            ],
            &[],
        );
        let d = &facts.graphs[0].defects;
        let w: Vec<&Defect> = d
            .iter()
            .filter(|d| d.kind == "whole_state_return")
            .collect();
        assert_eq!(w.len(), 1, "{d:?}");
        // `opinions` is still empty when `again` re-sends `errors`
        assert!(
            w[0].detail
                .contains("again re-sends the current value of `errors` (src/graph.py:7);")
                && w[0].detail.contains(
                    "echo returns the whole incoming state (src/graph.py:11), which re-sends `errors`, `opinions`"
                ),
            "{}",
            w[0].detail
        );
        // one node returns the whole state: not a field re-sent only
        assert!(!w[0].fields_only);
        // without it, only a reducer field re-sent: the kind stays, the report names it apart
        let graph = graph.replace(
            "g.add_edge('judge', 'echo')\ng.add_edge('echo', END)",
            "g.add_edge('judge', END)",
        );
        let facts = analyse(
            vec![
                ("src/state.py".into(), state.into()),
                ("src/graph.py".into(), graph),
            ],
            &[],
        );
        let w: Vec<&Defect> = facts.graphs[0]
            .defects
            .iter()
            .filter(|d| d.kind == "whole_state_return")
            .collect();
        assert_eq!(w.len(), 1, "{:?}", facts.graphs[0].defects);
        assert!(w[0].fields_only, "{}", w[0].detail);
    }

    #[test]
    fn returning_the_whole_state_doubles_add_reducer_lists_only_when_there_is_one() {
        let d = defects(&TEXTBOOK.replace("g.add_node(n, node)", "g.add_node(n, lambda s: s)"));
        let k = kinds(&d);
        assert_eq!(k.len(), 1, "{k:?}");
        assert_eq!(k[0].0, "whole_state_return");
        assert!(d[0].detail.contains("`opinions`"));
        // the same graph over a state without an appending reducer is harmless
        let facts = analyse(
            vec![
                (
                    "src/state.py".into(),
                    "from typing import TypedDict\nclass AgentState(TypedDict):\n    report: str\n"
                        .into(),
                ),
                (
                    "src/graph.py".into(),
                    format!(
                        "{HEADER}{}",
                        TEXTBOOK.replace("g.add_node(n, node)", "g.add_node(n, lambda s: s)")
                    ),
                ),
            ],
            &[],
        );
        assert_eq!(facts.graphs[0].defects, vec![]);
    }

    #[test]
    fn importing_a_name_the_module_does_not_define_breaks_the_graph() {
        let with = |nodes: &str| {
            let graph = "from langgraph.graph import StateGraph, START, END\nfrom src.state import AgentState\nfrom src.nodes import work, vision_inspector\ng = StateGraph(AgentState)\ng.add_node('work', work)\ng.add_node('vision', vision_inspector)\ng.add_edge(START, 'work')\ng.add_edge('work', 'vision')\ng.add_edge('vision', END)\n";
            let facts = analyse(
                vec![
                    ("src/state.py".into(), STATE.into()),
                    ("src/nodes.py".into(), nodes.into()),
                    ("src/graph.py".into(), graph.into()),
                ],
                &[],
            );
            kinds(&facts.graphs[0].defects)
                .into_iter()
                .map(|(k, n)| (k.to_string(), n.join(",")))
                .collect::<Vec<_>>()
        };
        let renamed = "def work(state):\n    return {'report': 'x'}\ndef vision_cheinspector(state):\n    tasks = state.get('vision_inspector')\n    return {'report': 'y'}\n";
        assert_eq!(
            with(renamed),
            vec![("import_error".to_string(), "vision_inspector".to_string())]
        );
        let defined = "def work(state):\n    return {'report': 'x'}\nasync def vision_inspector(state):\n    return {'report': 'y'}\n";
        assert_eq!(with(defined), vec![]);
        let reexported = "from src.vision import inspect as vision_inspector\ndef work(state):\n    return {'report': 'x'}\n";
        assert!(with(reexported).iter().all(|(k, _)| k != "import_error"));
    }

    #[test]
    fn the_schema_is_the_class_the_graph_imports_when_two_share_a_name() {
        let graph = "from langgraph.graph import StateGraph, START, END\nfrom src.state import AgentState\ndef first(state):\n    return {'report': 'x'}\ng = StateGraph(AgentState)\ng.add_node('first', first)\ng.add_edge(START, 'first')\ng.add_edge('first', END)\n";
        let old = "from typing import TypedDict\nclass AgentState(TypedDict):\n    other: str\n";
        let facts = analyse(
            vec![
                ("legacy/state.py".into(), old.into()),
                ("src/state.py".into(), STATE.into()),
                ("src/graph.py".into(), graph.into()),
            ],
            &[],
        );
        assert_eq!(facts.graphs[0].defects, vec![]);
    }

    #[test]
    fn persona_names_outside_the_schema_literal_or_the_rubric_keys_mismatch() {
        let with = |judges: &str| {
            analyse(
                vec![
                    (
                        "src/state.py".into(),
                        format!("{STATE}\nfrom typing import Literal\nfrom pydantic import BaseModel\nclass JudicialOpinion(BaseModel):\n    judge: Literal['Prosecutor', 'Defense', 'TechLead']\n    score: int\n"),
                    ),
                    ("src/judges.py".into(), judges.to_string()),
                    ("src/graph.py".into(), format!("{HEADER}{TEXTBOOK}")),
                ],
                &[],
            )
            .graphs[0]
                .defects
                .clone()
        };
        let d = with(
            "from src.state import JudicialOpinion\ndef t(s):\n    return JudicialOpinion(judge='Tech Lead', score=3)\n",
        );
        assert_eq!(kinds(&d), vec![("persona_mismatch", vec!["Tech Lead"])]);
        let d = with(
            "from src.state import JudicialOpinion\ndef t(s):\n    return JudicialOpinion(judge='TechLead', score=3)\n",
        );
        assert_eq!(kinds(&d), vec![]);
        let d = with("def rule(ops):\n    return [o for o in ops if o.judge == 'Prosecution']\n");
        assert_eq!(kinds(&d), vec![("persona_mismatch", vec!["Prosecution"])]);
        // no Literal and one literal name: the other names may be built elsewhere, say nothing
        let one = |produced: &str| {
            let src = format!("def a(o):\n    {produced}\n    return o.judge == 'Prosecution'\n");
            let ms = vec![crate::repo::python::syntax::parse_module("src/j.py", src).unwrap()];
            let repo = crate::repo::python::names::Repo::new(&ms);
            let state = crate::repo::python::state::analyse(&repo);
            super::super::persona_names::analyse(&repo, &state).len()
        };
        assert_eq!(one("x = Opinion(judge='Prosecutor')"), 0);
        assert_eq!(
            one(
                "x = [Opinion(judge='Prosecutor'), Opinion(judge='Defense'), Opinion(judge='TechLead')]"
            ),
            1
        );
        let d = with(
            "def logic(dim, persona):\n    return dim['judicial_logic'].get(persona.lower(), '')\n",
        );
        assert_eq!(kinds(&d), vec![("rubric_logic_lookup", vec!["TechLead"])]);
        // located on the line the lookup starts (mid-line, after `x = `)
        let d = with(
            "def logic(dim, persona):\n    y = 1\n    x = dim['judicial_logic'].get(persona.lower(), '')\n    return x\n",
        );
        let at: Vec<&str> = d.iter().map(|d| d.location.as_str()).collect();
        assert_eq!(at, ["src/judges.py:3"]);
        let d =
            with("def logic(dim, persona):\n    return dim['judicial_logic'].get(persona, '')\n");
        assert_eq!(kinds(&d), vec![]);
    }
}

#[cfg(test)]
mod limits {
    use crate::repo::python::analyse;

    #[test]
    fn a_huge_graph_is_not_analysed_and_says_so() {
        let lines: String = (0..600)
            .map(|i| format!("g.add_node('n{i}', f)\ng.add_edge(START, 'n{i}')\n"))
            .collect();
        let src =
            format!("from langgraph.graph import StateGraph, START\ng = StateGraph(dict)\n{lines}");
        let facts = analyse(vec![("g.py".into(), src)], &[]);
        let g = &facts.graphs[0];
        assert_eq!(g.nodes.len(), 600);
        assert!(g.defects.is_empty());
        assert!(
            g.runtime_notes.iter().any(|n| n.contains("not checked")),
            "{:?}",
            g.runtime_notes
        );
    }
}
