//! LangGraph wiring: `StateGraph(...)` constructions and every call that builds them
//! (`add_node`, `add_edge` incl. the list form, `add_conditional_edges` with path maps, lists
//! or routers, `set_entry_point`, `set_finish_point`, `set_conditional_entry_point`,
//! `add_sequence`, `Send`, loops over literal lists or constants), resolved into a graph with
//! fan-out and fan-in points.
//!
//! Definitions (documented in the JSON too):
//! - **fan-out**: a node (or `START`) that leads to two or more nodes *at once*: two or more
//!   plain edges, or a conditional edge whose router returns a list of nodes or `Send`s;
//! - **fan-in**: a node with two or more distinct predecessors (`START` excluded);
//! - **branching pattern**: a fan-out whose branches meet again at a fan-in node (the join);
//! - **linear**: no fan-out and no node with more than one successor, every argument resolved;
//! - routing done by nodes with `Command` (`destinations=`, `-> Command[Literal[...]]`,
//!   `Command(goto=...)`) and an endpoint chosen when the graph is built (`a if x else b`, a
//!   variable set in both branches of an `if`) are conditional edges.

use super::expr::Expr;
use super::names::{Repo, Val};
use super::syntax::CallInfo;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

const GRAPH_CLASSES: &[&str] = &["langgraph.graph.StateGraph", "langgraph.graph.MessageGraph"];
const GRAPH_METHODS: &[&str] = &[
    "add_node",
    "add_edge",
    "add_conditional_edges",
    "set_entry_point",
    "set_finish_point",
    "set_conditional_entry_point",
    "add_sequence",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    pub name: String,
    pub path: String,
    pub line: usize,
    /// What the node runs, when it could be resolved (not serialized: module indexes).
    #[serde(skip)]
    pub action: Option<Action>,
}

/// The callable a node runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A function of the repository: (module index, line of its `def`), with the string
    /// literals a wrapping lambda or `partial` passes to it (`lambda s: judge(s, "Defense")`).
    Func {
        module: usize,
        line: usize,
        bound: Vec<String>,
        /// The nested function a wrapper factory returned around it (`safe(node_fn, ...)`
        /// returning `def wrapper(state): ... return node_fn(state)`): (module, line of its
        /// `def`). Its own returns (an error path) add to what the node does.
        wrapper: Option<(usize, usize)>,
    },
    /// `lambda s: s`: returns its input unchanged.
    Identity,
}

/// `add_edge([a, b], c)`: `c` runs once every source has run (a barrier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Join {
    pub from: Vec<String>,
    pub to: String,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphEdge {
    pub from: String,
    pub to: String,
    pub conditional: bool,
    pub path: String,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanOut {
    pub from: String,
    pub to: Vec<String>,
    /// `edges`, `router_list` or `send` (joined with `+` when mixed).
    pub via: String,
    pub location: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanIn {
    pub to: String,
    pub from: Vec<String>,
    /// Every predecessor is joined by a plain (unconditional) edge: a real barrier.
    pub synchronized: bool,
    pub location: String,
}

/// A fan-out whose branches meet again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branching {
    pub from: String,
    pub branches: Vec<String>,
    pub join: Option<String>,
    pub location: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Router {
    pub source: String,
    pub router: String,
    pub targets: Vec<String>,
    /// The router can return several nodes at once (a list or `Send`s).
    pub parallel: bool,
    /// Every set of nodes one call of the router can trigger (each `return`, each path-map
    /// value; a list or `Send`s is one outcome of several nodes).
    #[serde(default)]
    pub outcomes: Vec<Vec<String>>,
    /// Where the router function is defined (module index, line of its `def`).
    #[serde(skip)]
    pub func: Option<(usize, usize)>,
    pub path: String,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undefined {
    pub name: String,
    pub path: String,
    pub line: usize,
}

/// What a node is, read from what it does (see `super::roles`), never from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Writes opinions into the state (or asks an LLM for them).
    Judge,
    /// Writes evidence into the state.
    Detective,
}

/// A run-time defect of a graph, found by [`super::runtime`] (its kinds are listed there): plain
/// data, kept with the graph's facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Defect {
    pub kind: String,
    pub nodes: Vec<String>,
    pub location: String,
    pub detail: String,
    /// `whole_state_return` only: no node returns the whole state; each re-sends the current
    /// value of an appending reducer field (`return {"errors": state["errors"]}`). The kind
    /// stays the same (the doubling is the same); the report names it apart.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fields_only: bool,
    /// A state-key defect's cause, for its fix (`None` for the other kinds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<KeyCause>,
}

/// Why a key is undeclared or never set (see [`super::runtime`]): what its fix must change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum KeyCause {
    /// `undeclared_state_key`: the keys one return of the node writes that the schema does not
    /// declare.
    Undeclared { keys: Vec<String> },
    /// An entry of a declared dict field that nothing puts into it (`evidences["general"]`).
    MissingEntry { field: String, entry: String },
    /// A declared key that no node writes and the graph's input does not give.
    NeverWritten { key: String },
    /// A key the schema does not declare that the graph's input gives (at `at`): dropped.
    InputDropped { key: String, at: String },
    /// A key the schema does not declare that nodes write: dropped.
    WrittenDropped { key: String, writers: Vec<String> },
    /// A key the schema does not declare that nothing gives.
    Unset { key: String },
    /// A key its writers write only after its readers have read it (or on other paths);
    /// `declared`: the schema declares it (else what they write is dropped too).
    WrittenLater {
        key: String,
        writers: Vec<String>,
        declared: bool,
    },
}

/// A conditional route that can never be taken (see [`super::runtime`]): its router returns
/// `target` only under a test of `key` that never holds when the router runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadRoute {
    /// The node the router leaves from.
    pub source: String,
    pub target: String,
    /// The key the router tests (`error`, `info["k0"]`).
    pub key: String,
    /// Why the test never holds, a sentence about what the code does.
    pub why: String,
}

/// A field of the state schema declared with a reducer that nothing ever puts a value into
/// (decided by [`super::runtime`]): in every run it holds nothing, so its reducer never merges
/// anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmptyField {
    pub field: String,
    pub reducer: String,
    /// Why it stays empty, a sentence about what the code does ("nothing ever puts an entry
    /// into `evidences` (the graph's input gives it no key; no node writes it; ...)").
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GraphFacts {
    pub path: String,
    pub line: usize,
    /// The variable the builder is bound to (`builder`, `self.graph`).
    pub builder: String,
    pub state_type: Option<String>,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// List-form edges (`add_edge([a, b], c)`): real barriers.
    #[serde(default)]
    pub joins: Vec<Join>,
    pub fan_out: Vec<FanOut>,
    pub fan_in: Vec<FanIn>,
    pub branchings: Vec<Branching>,
    pub routers: Vec<Router>,
    pub linear: bool,
    /// Edge endpoints that were never added as nodes.
    pub undefined_nodes: Vec<Undefined>,
    /// Arguments that could not be resolved statically (`path:line: text`).
    pub unresolved: Vec<String>,
    /// The source block that builds the graph.
    pub snippet: String,
    pub end_line: usize,
    /// What breaks at run time (see [`super::runtime`]).
    #[serde(default)]
    pub defects: Vec<Defect>,
    /// What the run-time analysis could not decide, and why it stayed silent.
    #[serde(default)]
    pub runtime_notes: Vec<String>,
    /// The run-time analysis decided run counts, reachability and every loop bound.
    #[serde(default)]
    pub runtime_decided: bool,
    /// Conditional routes that can never be taken (decided by the run-time analysis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dead_routes: Vec<DeadRoute>,
    /// Fields declared with a reducer that hold nothing in any run (decided by the run-time
    /// analysis; a field it cannot decide is not listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_fields: Vec<EmptyField>,
    /// The role of each node that writes opinions or evidence (see [`super::roles`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, Role>,
    /// Plain edges added one by one (`add_edge(a, c)`, entry and finish points, sequences):
    /// such an edge triggers `c` after every run of `a` even when `a -> c` is also a leg of an
    /// `add_edge([a, b], c)` join.
    #[serde(skip)]
    pub single_edges: BTreeSet<(String, String)>,
    /// Each router's path map (by index in `routers`): what it returns → the node it names.
    #[serde(skip)]
    pub path_maps: BTreeMap<usize, Vec<(String, String)>>,
    /// Each router's outcomes made of `Send`s (by index in `routers`, then outcome index): the
    /// nodes each one sends to. A `Send` is a task of its own: a node sent to and also triggered
    /// by an edge (or sent to twice) runs twice in that superstep.
    #[serde(skip)]
    pub sends: BTreeMap<usize, BTreeMap<usize, Vec<String>>>,
}

impl GraphFacts {
    pub fn location(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }

    pub fn has_node(&self, n: &str) -> bool {
        self.nodes.iter().any(|x| x.name == n)
    }

    fn size(&self) -> usize {
        self.nodes.len() + self.edges.len()
    }

    /// The nodes `x` hands over to: its edges, its routers' targets and the joins it is a
    /// source of. (The builder adds an edge for each router target and each leg of a join, so
    /// the last two name no other node; they repeat some.)
    pub fn successors<'g>(&'g self, x: &'g str) -> impl Iterator<Item = &'g str> + 'g {
        self.edges
            .iter()
            .filter(move |e| e.from == x)
            .map(|e| e.to.as_str())
            .chain(
                self.routers
                    .iter()
                    .filter(move |r| r.source == x)
                    .flat_map(|r| r.targets.iter().map(String::as_str)),
            )
            .chain(
                self.joins
                    .iter()
                    .filter(move |j| j.from.iter().any(|f| f == x))
                    .map(|j| j.to.as_str()),
            )
    }
}

/// Key of a builder under construction: (module, receiver, line of its `StateGraph(...)`,
/// 0 when the construction is not seen, e.g. a builder passed to a helper).
type BuilderKey = (usize, String, usize);

/// A `StateGraph(...)` construction: (module, receiver, line, enclosing function).
type Construction = (usize, String, usize, Option<usize>);

/// The construction a method call on `recv` belongs to: the one bound to the same name in the
/// same module, and when the name is bound several times (a variable reassigned to a new
/// `StateGraph`), the latest one before the call, in the same function if there is one.
/// `local` holds the module's constructions only (a repository can have hundreds of graphs).
fn construction_for<'c>(
    local: &[&'c Construction],
    recv: &str,
    c: &CallInfo,
) -> Option<&'c Construction> {
    let same: Vec<&Construction> = local
        .iter()
        .copied()
        .filter(|(_, r, _, _)| r == recv)
        .collect();
    if same.len() <= 1 {
        return same.first().copied();
    }
    let before = |k: &&&Construction| k.2 <= c.line;
    same.iter()
        .filter(|k| k.3 == c.func)
        .filter(before)
        .max_by_key(|k| k.2)
        .or_else(|| same.iter().filter(before).max_by_key(|k| k.2))
        .or(same.first())
        .copied()
}

/// All graphs in the repository, the largest first.
pub fn analyse(repo: &Repo<'_>) -> Vec<GraphFacts> {
    let (mut builders, constructions) = constructed(repo);
    let key_of = |k: &Construction| -> BuilderKey { (k.0, k.1.clone(), k.2) };
    let mut by_module: BTreeMap<usize, Vec<&Construction>> = BTreeMap::new();
    for k in &constructions {
        by_module.entry(k.0).or_default().push(k);
    }
    for (m, module) in repo.modules.iter().enumerate() {
        let uses_langgraph = module.imports.values().any(|v| v.starts_with("langgraph"));
        let foreign = foreign_receivers(repo, m);
        let local: &[&Construction] = by_module.get(&m).map_or(&[], Vec::as_slice);
        for c in &module.calls {
            if !GRAPH_METHODS.contains(&c.method.as_str()) {
                continue;
            }
            let Some(recv) = &c.receiver else { continue };
            let key = if let Some(k) = construction_for(local, recv, c) {
                key_of(k)
            } else if builders.contains_key(&(m, recv.clone(), 0)) {
                (m, recv.clone(), 0)
            } else if foreign.contains(recv.as_str()) {
                continue;
            } else if local.len() == 1 {
                key_of(local[0])
            } else if constructions.len() == 1 && uses_langgraph {
                key_of(&constructions[0])
            } else if uses_langgraph {
                (m, recv.clone(), 0)
            } else {
                continue;
            };
            let b = builders
                .entry(key)
                .or_insert_with(|| Builder::new(repo, m, c.line, recv.clone(), None));
            if b.graph.path == module.path {
                b.first_line = b.first_line.min(c.line);
                b.last_line = b.last_line.max(c.line);
            }
            let func = c.func.and_then(|i| module.functions.get(i));
            for env in repo.loop_envs(m, &c.loops, func) {
                b.apply(repo, m, c, &env);
            }
        }
    }
    let mut graphs: Vec<GraphFacts> = builders
        .into_values()
        .map(|b| {
            let first = b.first_line;
            let last = b.last_line;
            let module = b.module;
            let mut g = b.finish();
            if let Some(module) = repo.modules.get(module) {
                g.snippet = module.snippet(first, last, 80);
            }
            g.end_line = last;
            g
        })
        .filter(|g| g.size() > 0 || g.state_type.is_some())
        .collect();
    graphs.sort_by(|a, b| b.size().cmp(&a.size()).then(a.path.cmp(&b.path)));
    graphs
}

/// The graphs the repository constructs (a call of a LangGraph graph class), each with a
/// builder keyed by (module, receiver, line); and every construction in call order.
fn constructed(repo: &Repo<'_>) -> (BTreeMap<BuilderKey, Builder>, Vec<Construction>) {
    let mut builders: BTreeMap<BuilderKey, Builder> = BTreeMap::new();
    let mut constructions: Vec<Construction> = Vec::new();
    for (m, module) in repo.modules.iter().enumerate() {
        for c in &module.calls {
            let Some(callee) = &c.callee else { continue };
            if repo.is(m, callee, GRAPH_CLASSES) {
                let recv = c.assigned_to.clone().unwrap_or_else(|| "<unbound>".into());
                let state = c
                    .args
                    .first()
                    .or_else(|| kwarg(c, "state_schema"))
                    .map(Expr::render);
                constructions.push((m, recv.clone(), c.line, c.func));
                builders
                    .entry((m, recv.clone(), c.line))
                    .or_insert_with(|| Builder::new(repo, m, c.line, recv, state));
            }
        }
    }
    (builders, constructions)
}

/// The receivers of module `m` assigned from some other constructor (e.g. networkx graphs):
/// not ours.
fn foreign_receivers<'r>(repo: &'r Repo<'_>, m: usize) -> BTreeSet<&'r str> {
    repo.modules[m]
        .calls
        .iter()
        .filter(|c| {
            c.assigned_to.is_some()
                && c.method != "compile"
                && c.callee
                    .as_deref()
                    .is_some_and(|cl| !repo.is(m, cl, GRAPH_CLASSES))
        })
        .filter_map(|c| c.assigned_to.as_deref())
        .collect()
}

fn kwarg<'c>(c: &'c CallInfo, name: &str) -> Option<&'c Expr> {
    c.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// The i-th positional argument or the keyword argument `name`.
fn arg<'c>(c: &'c CallInfo, i: usize, name: &str) -> Option<&'c Expr> {
    c.args.get(i).or_else(|| kwarg(c, name))
}

#[derive(Default)]
struct Builder {
    graph: GraphFacts,
    /// Index of the module `graph.path` names.
    module: usize,
    first_line: usize,
    last_line: usize,
    /// (from, to) → (conditional, line)
    edges: Vec<(String, String, bool, usize)>,
    /// Parallel targets by source from routers that return lists or `Send`s.
    parallel: HashMap<String, (BTreeSet<String>, String, usize)>,
}

impl Builder {
    /// The builder of a graph first seen at `line` of module `m`, built on the receiver
    /// `builder`, with its state schema when the construction names one.
    fn new(
        repo: &Repo<'_>,
        m: usize,
        line: usize,
        builder: String,
        state_type: Option<String>,
    ) -> Builder {
        Builder {
            graph: GraphFacts {
                path: repo.modules[m].path.clone(),
                line,
                builder,
                state_type,
                ..GraphFacts::default()
            },
            module: m,
            first_line: line,
            last_line: line,
            ..Builder::default()
        }
    }

    fn names(&mut self, repo: &Repo<'_>, m: usize, c: &CallInfo, v: &Val) -> Vec<String> {
        let mut out = Vec::new();
        let mut unknown = Vec::new();
        v.node_names(&mut out, &mut unknown);
        for u in unknown {
            // a name built from the variable of a loop over values not known statically
            // (`for dim in rubric["dimensions"]: add_node(dim["id"], ...)`) stands for one
            // node per item: kept as one symbolic node so the wiring stays analysable
            let base = u.split(" (loop over ").next().unwrap_or(&u).to_string();
            let dynamic = |l: &&super::syntax::LoopCtx| {
                l.vars.iter().any(|var| mentions_word(&base, var))
                    || repo
                        .eval(
                            m,
                            &l.iter,
                            &Vec::new(),
                            c.func.and_then(|i| repo.modules[m].functions.get(i)),
                            0,
                        )
                        .iterate()
                        .is_none()
            };
            if let Some(l) = c.loops.iter().find(dynamic) {
                out.push(format!("{base} (each of {})", l.iter.render()));
                continue;
            }
            self.graph.unresolved.push(format!(
                "{}:{}: `{}` is not statically known",
                repo.modules[m].path, c.line, u
            ));
        }
        out
    }

    fn edge(&mut self, from: String, to: String, conditional: bool, line: usize) {
        if !self
            .edges
            .iter()
            .any(|(f, t, cond, _)| *f == from && *t == to && *cond == conditional)
        {
            self.edges.push((from, to, conditional, line));
        }
    }

    fn node(&mut self, name: String, path: &str, line: usize) {
        if !self.graph.has_node(&name) {
            self.graph.nodes.push(GraphNode {
                name,
                path: path.to_string(),
                line,
                action: None,
            });
        }
    }

    fn set_action(&mut self, name: &str, action: Option<Action>) {
        if let Some(n) = self.graph.nodes.iter_mut().find(|n| n.name == name)
            && n.action.is_none()
        {
            n.action = action;
        }
    }

    /// Records that `source` can start `targets` at once (a router or `Command` returning a
    /// list of nodes, or `Send`s).
    fn record_parallel(
        &mut self,
        source: &str,
        send: bool,
        targets: impl IntoIterator<Item = String>,
        line: usize,
    ) {
        let via = if send { "send" } else { "router_list" };
        let entry = self
            .parallel
            .entry(source.to_string())
            .or_insert_with(|| (BTreeSet::new(), via.to_string(), line));
        entry.0.extend(targets);
    }

    /// Routing done by the node itself with `Command`: the `destinations=` of `add_node`, the
    /// `-> Command[Literal[...]]` annotation of its function, and the `goto=` of the
    /// `Command(...)`s it returns (a list of `Send`s or of several nodes is a fan-out).
    /// Recorded as conditional edges, like LangGraph draws them.
    fn command_routes(
        &mut self,
        repo: &Repo<'_>,
        m: usize,
        c: &CallInfo,
        node: &str,
        action: Option<&Expr>,
        destinations: Option<Val>,
    ) {
        let mut declared: Vec<Val> = destinations.into_iter().collect();
        let mut gotos: Vec<Val> = Vec::new();
        let func = action
            .and_then(Expr::dotted)
            .and_then(|d| repo.function(m, &d));
        if let Some((fm, f)) = func {
            if let Some(Expr::Subscript(head, params)) = &f.return_type
                && head.dotted().is_some_and(|h| is_command(repo, fm, &h))
            {
                for p in params {
                    if let Expr::Subscript(lit, items) = p
                        && lit.dotted().is_some_and(|l| l.ends_with("Literal"))
                    {
                        let vals = items
                            .iter()
                            .map(|i| repo.eval(fm, i, &Vec::new(), Some(f), 0))
                            .collect();
                        declared.push(Val::List(vals));
                    }
                }
            }
            for r in &f.returns {
                if let Expr::Call { func: callee, kwargs, .. } = r
                    && callee.dotted().is_some_and(|h| is_command(repo, fm, &h))
                    // `graph=Command.PARENT`: routing in the parent graph, not this one
                    && !kwargs.iter().any(|(k, _)| k == "graph")
                    && let Some((_, goto)) = kwargs.iter().find(|(k, _)| k == "goto")
                {
                    gotos.push(repo.eval(fm, goto, &Vec::new(), Some(f), 0));
                }
            }
        }
        if declared.is_empty() && gotos.is_empty() {
            return;
        }
        let mut targets: Vec<String> = Vec::new();
        let mut unknown = Vec::new();
        for v in declared.iter().chain(&gotos) {
            v.node_names(&mut targets, &mut unknown);
        }
        if declared.is_empty() {
            for u in unknown {
                self.graph.unresolved.push(format!(
                    "{}:{}: `Command(goto={u})` of node `{node}` is not statically known",
                    repo.modules[m].path, c.line
                ));
            }
        }
        let mut seen = BTreeSet::new();
        targets.retain(|t| seen.insert(t.clone()));
        for t in &targets {
            self.edge(node.to_string(), t.clone(), true, c.line);
        }
        let mut parallel_keys: Vec<Val> = Vec::new();
        for g in &gotos {
            collect_parallel(g, &mut parallel_keys);
        }
        let mut parallel_targets = Vec::new();
        let mut unk = Vec::new();
        Val::List(parallel_keys).node_names(&mut parallel_targets, &mut unk);
        let parallel = !parallel_targets.is_empty();
        if parallel {
            let send = gotos.iter().any(has_send);
            self.record_parallel(node, send, parallel_targets.clone(), c.line);
        }
        let router = func.map_or_else(|| "Command".to_string(), |(_, f)| f.name.clone());
        let mut outcomes: Vec<Vec<String>> = targets.iter().map(|t| vec![t.clone()]).collect();
        if parallel {
            let mut p = parallel_targets.clone();
            p.sort();
            p.dedup();
            outcomes.push(p);
        }
        self.graph.routers.push(Router {
            source: node.to_string(),
            router: format!("{router} (Command)"),
            targets,
            parallel,
            outcomes,
            func: func.map(|(fm, f)| (fm, f.line)),
            path: repo.modules[m].path.clone(),
            line: c.line,
        });
    }

    /// One call of the graph builder: `add_node`, `add_edge`, the entry and finish points,
    /// `add_sequence`, `add_conditional_edges` (and the conditional entry point).
    fn apply(&mut self, repo: &Repo<'_>, m: usize, c: &CallInfo, env: &Vec<(String, Val)>) {
        let func = c.func.map(|f| &repo.modules[m].functions[f]);
        let ev = |e: &Expr| repo.eval(m, e, env, func, 0);
        match c.method.as_str() {
            "add_node" => self.add_node(repo, m, c, env, &ev),
            "add_edge" => self.add_edge(repo, m, c, &ev),
            "set_entry_point" => self.set_point(repo, m, c, &ev, true),
            "set_finish_point" => self.set_point(repo, m, c, &ev, false),
            "add_sequence" => self.add_sequence(repo, m, c, &ev),
            "add_conditional_edges" | "set_conditional_entry_point" => {
                self.add_conditional_edges(repo, m, c, &ev)
            }
            _ => {}
        }
    }

    /// `add_node("name", f)`, `add_node(f)`, `action=f`: the node, its action, and the routes
    /// of the `Command`s it returns.
    fn add_node(
        &mut self,
        repo: &Repo<'_>,
        m: usize,
        c: &CallInfo,
        env: &[(String, Val)],
        ev: &dyn Fn(&Expr) -> Val,
    ) {
        let Some(first) = arg(c, 0, "node") else {
            return;
        };
        let v = ev(first);
        let v = match v {
            // add_node(runnable) where the runnable is a compiled subgraph or object
            Val::Unknown(t) if c.args.len() == 1 => Val::Unknown(t),
            other => other,
        };
        let names = self.names(repo, m, c, &v);
        let path = repo.modules[m].path.clone();
        for n in &names {
            self.node(n.clone(), &path, c.line);
        }
        // The node's action: `add_node("name", f)`, `add_node(f)`, `action=f`.
        let action = if c.args.len() >= 2 {
            c.args.get(1)
        } else {
            kwarg(c, "action").or(c.args.first())
        };
        let dest = kwarg(c, "destinations").map(ev);
        let resolved = action.and_then(|a| match a {
            // a loop variable (`for name, fn in [("a", a), ...]`): the function it is
            // bound to in this pass, never a function that happens to share its name
            Expr::Name(v) if env.iter().any(|(k, _)| k == v) => match ev(a) {
                Val::Func(f) => node_action(repo, m, &Expr::Name(f)),
                _ => None,
            },
            a => node_action(repo, m, a),
        });
        for n in &names {
            self.set_action(n, resolved.clone());
        }
        for n in names {
            self.command_routes(repo, m, c, &n, action, dest.clone());
        }
    }

    /// `add_edge(a, b)`; `add_edge([a, b], c)` is a join (`c` waits for both).
    fn add_edge(&mut self, repo: &Repo<'_>, m: usize, c: &CallInfo, ev: &dyn Fn(&Expr) -> Val) {
        let (Some(a), Some(b)) = (arg(c, 0, "start_key"), arg(c, 1, "end_key")) else {
            return;
        };
        let (va, vb) = (ev(a), ev(b));
        let chosen = is_choice(&va) || is_choice(&vb);
        let froms = self.names(repo, m, c, &va);
        let tos = self.names(repo, m, c, &vb);
        let join = matches!(va, Val::List(_)) && froms.len() >= 2;
        if join {
            for t in &tos {
                self.graph.joins.push(Join {
                    from: froms.clone(),
                    to: t.clone(),
                    line: c.line,
                });
            }
        }
        for f in &froms {
            for t in &tos {
                self.edge(f.clone(), t.clone(), chosen, c.line);
                if !join && !chosen {
                    self.graph.single_edges.insert((f.clone(), t.clone()));
                }
            }
        }
    }

    /// `set_entry_point(n)` (an edge from START, `entry`) or `set_finish_point(n)` (an edge to
    /// END).
    fn set_point(
        &mut self,
        repo: &Repo<'_>,
        m: usize,
        c: &CallInfo,
        ev: &dyn Fn(&Expr) -> Val,
        entry: bool,
    ) {
        let Some(a) = arg(c, 0, "key") else { return };
        let v = ev(a);
        let chosen = is_choice(&v);
        for n in self.names(repo, m, c, &v) {
            let (from, to) = if entry {
                ("START".to_string(), n)
            } else {
                (n, "END".to_string())
            };
            if !chosen {
                self.graph.single_edges.insert((from.clone(), to.clone()));
            }
            self.edge(from, to, chosen, c.line);
        }
    }

    /// `add_sequence([a, b, ...])` (or `[("a", f), ...]`): the nodes and an edge between each
    /// two that follow each other.
    fn add_sequence(&mut self, repo: &Repo<'_>, m: usize, c: &CallInfo, ev: &dyn Fn(&Expr) -> Val) {
        let Some(a) = arg(c, 0, "nodes") else { return };
        let items = match ev(a) {
            Val::List(items) => items,
            other => vec![other],
        };
        let path = repo.modules[m].path.clone();
        let mut prev: Option<String> = None;
        for item in items {
            let name = match &item {
                Val::List(pair) if !pair.is_empty() => pair[0].clone(),
                other => other.clone(),
            };
            let names = self.names(repo, m, c, &name);
            if let Some(n) = names.into_iter().next() {
                self.node(n.clone(), &path, c.line);
                if let Some(p) = prev.take() {
                    self.graph.single_edges.insert((p.clone(), n.clone()));
                    self.edge(p, n.clone(), false, c.line);
                }
                prev = Some(n);
            }
        }
    }

    /// `add_conditional_edges(source, path, path_map)` or
    /// `set_conditional_entry_point(path, path_map)`: a router per source, with its targets,
    /// its outcomes (one target, or the targets it sends to in parallel), its `Send`s and its
    /// path map.
    fn add_conditional_edges(
        &mut self,
        repo: &Repo<'_>,
        m: usize,
        c: &CallInfo,
        ev: &dyn Fn(&Expr) -> Val,
    ) {
        let path = repo.modules[m].path.clone();
        let entry = c.method == "set_conditional_entry_point";
        let (sources, path_arg, map_arg) = if entry {
            (
                vec!["START".to_string()],
                arg(c, 0, "path"),
                arg(c, 1, "path_map"),
            )
        } else {
            let s = arg(c, 0, "source").map(ev);
            let s = match s {
                Some(v) => self.names(repo, m, c, &v),
                None => Vec::new(),
            };
            (s, arg(c, 1, "path"), arg(c, 2, "path_map"))
        };
        let (router_name, returns, router_func) = router_of(repo, m, path_arg, ev);
        let map = map_arg.map(ev);
        let mut parallel_keys: Vec<Val> = Vec::new();
        for r in &returns {
            collect_parallel(r, &mut parallel_keys);
        }
        let lookup = |key: &Val| -> Val {
            if let Some(Val::Dict(pairs)) = &map
                && let Some((_, v)) = pairs.iter().find(|(k, _)| k == key)
            {
                return v.clone();
            }
            key.clone()
        };
        let targets: Vec<String> = match &map {
            Some(Val::Dict(pairs)) => {
                let vals: Vec<Val> = pairs.iter().map(|(_, v)| v.clone()).collect();
                self.names(repo, m, c, &Val::List(vals))
            }
            Some(v @ Val::List(_)) => self.names(repo, m, c, v),
            Some(other) => self.names(repo, m, c, other),
            None if returns.is_empty() => {
                self.graph.unresolved.push(format!(
                    "{path}:{}: router `{router_name}` has no path map and its returns could not be read",
                    c.line
                ));
                Vec::new()
            }
            None => self.names(repo, m, c, &Val::Alt(returns.clone())),
        };
        let parallel_targets: Vec<String> = {
            let mapped: Vec<Val> = parallel_keys.iter().map(lookup).collect();
            let mut out = Vec::new();
            let mut unk = Vec::new();
            Val::List(mapped).node_names(&mut out, &mut unk);
            out
        };
        let parallel = !parallel_targets.is_empty();
        let outcomes = router_outcomes(&returns, &lookup, &targets, &parallel_targets);
        let sends = router_sends(&returns, &lookup, &outcomes);
        let path_map = path_map_of(map.as_ref());
        for s in &sources {
            for t in &targets {
                self.edge(s.clone(), t.clone(), true, c.line);
            }
            if parallel {
                let send = returns.iter().any(has_send);
                self.record_parallel(s, send, parallel_targets.iter().cloned(), c.line);
            }
            if !path_map.is_empty() {
                self.graph
                    .path_maps
                    .insert(self.graph.routers.len(), path_map.clone());
            }
            if !sends.is_empty() {
                self.graph
                    .sends
                    .insert(self.graph.routers.len(), sends.clone());
            }
            self.graph.routers.push(Router {
                source: s.clone(),
                router: router_name.clone(),
                targets: targets.clone(),
                parallel,
                outcomes: outcomes.clone(),
                func: router_func,
                path: path.clone(),
                line: c.line,
            });
        }
    }

    fn finish(mut self) -> GraphFacts {
        let path = self.graph.path.clone();
        let mut g = self.graph;
        g.edges = self
            .edges
            .iter()
            .map(|(f, t, cond, line)| GraphEdge {
                from: f.clone(),
                to: t.clone(),
                conditional: *cond,
                path: path.clone(),
                line: *line,
            })
            .collect();
        undefined_endpoints(&mut g);
        // fan-out
        let mut sources: Vec<String> = Vec::new();
        for e in &g.edges {
            if !sources.contains(&e.from) {
                sources.push(e.from.clone());
            }
        }
        for s in &sources {
            let parallel = self.parallel.remove(s);
            if let Some(f) = fan_out(&g, s, parallel, &path) {
                g.fan_out.push(f);
            }
        }
        // fan-in
        let mut targets: Vec<String> = Vec::new();
        for e in &g.edges {
            if !targets.contains(&e.to) {
                targets.push(e.to.clone());
            }
        }
        for t in &targets {
            if t == "END" || t == "START" {
                continue;
            }
            if let Some(f) = fan_in(&g, t, &path) {
                g.fan_in.push(f);
            }
        }
        // linear
        let branching = sources.iter().any(|s| {
            let succ: BTreeSet<&str> = g
                .edges
                .iter()
                .filter(|e| &e.from == s)
                .map(|e| e.to.as_str())
                .collect();
            succ.len() > 1
        });
        // nothing can be said of a graph whose wiring is not (fully) known
        g.linear =
            g.fan_out.is_empty() && !branching && !g.edges.is_empty() && g.unresolved.is_empty();
        g.branchings = branchings(&g);
        g
    }
}

/// The endpoints of the graph's edges that are no node (START and END aside), each once, where
/// first used.
fn undefined_endpoints(g: &mut GraphFacts) {
    for e in &g.edges {
        for n in [&e.from, &e.to] {
            if n != "START"
                && n != "END"
                && !g.has_node(n)
                && !g.undefined_nodes.iter().any(|u| &u.name == n)
            {
                g.undefined_nodes.push(Undefined {
                    name: n.clone(),
                    path: e.path.clone(),
                    line: e.line,
                });
            }
        }
    }
}

/// The nodes `s` starts at once, when two or more: its plain edges' targets, with the widest
/// outcome of its routers when they start several nodes at once (`parallel`: how and where
/// the builder saw that) or beside a plain edge (both fire in the same superstep).
fn fan_out(
    g: &GraphFacts,
    s: &str,
    parallel: Option<(BTreeSet<String>, String, usize)>,
    path: &str,
) -> Option<FanOut> {
    let mut to: Vec<String> = Vec::new();
    let mut line = usize::MAX;
    for e in g.edges.iter().filter(|e| e.from == s && !e.conditional) {
        // a node literally named START looks like an edge from START to itself
        if e.to != "END" && e.to != s && !to.contains(&e.to) {
            to.push(e.to.clone());
            line = line.min(e.line);
        }
    }
    // a symbolic per-item node stands for several nodes
    let width = |v: &[String]| v.len() + v.iter().filter(|t| is_per_item(t)).count();
    let plain = width(&to);
    let mut via = Vec::new();
    if plain >= 2 {
        via.push("edges".to_string());
    }
    // what one call of the source's routers can start at once: the largest outcome
    let routed: Vec<&Router> = g.routers.iter().filter(|r| r.source == s).collect();
    let widest: Option<&Vec<String>> = routed
        .iter()
        .flat_map(|r| r.outcomes.iter())
        .filter(|o| o.iter().any(|t| t != "END"))
        .max_by_key(|o| o.len());
    if let Some((_, how, l)) = parallel
        && let Some(w) = widest.filter(|w| w.len() >= 2)
    {
        for t in w {
            if t != "END" && !to.contains(t) {
                to.push(t.clone());
            }
        }
        via.push(how);
        line = line.min(l);
    } else if plain >= 1
        && let Some(w) = widest
    {
        // a plain edge and a conditional edge from the same node both fire: the plain
        // target and the router's choice run in the same superstep
        let before = to.len();
        for t in w {
            if t != "END" && !to.contains(t) {
                to.push(t.clone());
            }
        }
        if to.len() > before {
            via.push("edges+router".to_string());
            if let Some(r) = routed.first() {
                line = line.min(r.line);
            }
        }
    }
    (width(&to) >= 2 && !via.is_empty()).then(|| FanOut {
        from: s.to_string(),
        to,
        via: via.join("+"),
        location: format!("{path}:{line}"),
    })
}

/// The nodes with an edge into `t` (START aside), when two or more: synchronized when two or
/// more of them are plain edges.
fn fan_in(g: &GraphFacts, t: &str, path: &str) -> Option<FanIn> {
    let preds: Vec<&GraphEdge> = g
        .edges
        .iter()
        .filter(|e| e.to == t && e.from != "START")
        .collect();
    let mut from: Vec<String> = Vec::new();
    for e in &preds {
        if !from.contains(&e.from) {
            from.push(e.from.clone());
        }
    }
    let width = from.len() + from.iter().filter(|f| is_per_item(f)).count();
    if width < 2 {
        return None;
    }
    let plain: BTreeSet<&str> = preds
        .iter()
        .filter(|e| !e.conditional)
        .map(|e| e.from.as_str())
        .collect();
    let line = preds.iter().map(|e| e.line).min().unwrap_or(0);
    let plain_width = plain.len() + plain.iter().filter(|f| is_per_item(f)).count();
    Some(FanIn {
        to: t.to_string(),
        synchronized: plain_width >= 2,
        from,
        location: format!("{path}:{line}"),
    })
}

/// The router given as `path`: its name, the values it returns (a lambda's body; none when
/// its function cannot be read) and its function (module, line of the `def`).
fn router_of(
    repo: &Repo<'_>,
    m: usize,
    path: Option<&Expr>,
    ev: &dyn Fn(&Expr) -> Val,
) -> (String, Vec<Val>, Option<(usize, usize)>) {
    match path {
        Some(Expr::Lambda(body)) => ("lambda".to_string(), vec![ev(body)], None),
        Some(p) => {
            let name = p.dotted().unwrap_or_else(|| p.render());
            match repo.router_returns(m, &name) {
                Some((fm, f, vals)) => (f.name.clone(), vals, Some((fm, f.line))),
                None => (name, Vec::new(), None),
            }
        }
        None => ("?".to_string(), Vec::new(), None),
    }
}

/// A router's path map as (key, node) pairs: its string and boolean keys, each with the first
/// node its value names.
fn path_map_of(map: Option<&Val>) -> Vec<(String, String)> {
    let Some(Val::Dict(pairs)) = map else {
        return Vec::new();
    };
    pairs
        .iter()
        .filter_map(|(k, v)| {
            let mut names = Vec::new();
            let mut unk = Vec::new();
            v.node_names(&mut names, &mut unk);
            let key = match k {
                Val::Str(s) => s.clone(),
                Val::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                _ => return None,
            };
            Some((key, names.into_iter().next()?))
        })
        .collect()
}

/// For each outcome of [`router_outcomes`] that a `return` of `Send`s makes, the nodes it
/// sends to (a node twice when two `Send`s name it).
fn router_sends(
    returns: &[Val],
    lookup: &dyn Fn(&Val) -> Val,
    outcomes: &[Vec<String>],
) -> BTreeMap<usize, Vec<String>> {
    fn alternatives(v: &Val, out: &mut Vec<Val>) {
        match v {
            Val::Alt(items) => items.iter().for_each(|i| alternatives(i, out)),
            other => out.push(other.clone()),
        }
    }
    let mut alts = Vec::new();
    returns.iter().for_each(|r| alternatives(r, &mut alts));
    let mut out = BTreeMap::new();
    for a in &alts {
        let items: Vec<&Val> = match a {
            Val::List(items) => items.iter().collect(),
            other => vec![other],
        };
        let mut all = Vec::new();
        let mut sent = Vec::new();
        for i in items {
            let (v, is_send) = match i {
                Val::Send(t) => (lookup(t), true),
                other => (lookup(other), false),
            };
            let mut names = Vec::new();
            let mut unknown = Vec::new();
            v.node_names(&mut names, &mut unknown);
            if !unknown.is_empty() {
                return BTreeMap::new();
            }
            if is_send {
                sent.extend(names.iter().cloned());
            }
            all.extend(names);
        }
        if sent.is_empty() {
            continue;
        }
        all.sort();
        all.dedup();
        if let Some(i) = outcomes.iter().position(|o| *o == all) {
            out.entry(i).or_insert(sent);
        }
    }
    out
}

/// The outcomes of a router: one per alternative of each `return` (a list or `Send`s is one
/// outcome of several nodes), mapped through the path map. When a return cannot be read, every
/// target alone (and the parallel set, if any) is an outcome: every choice is considered.
fn router_outcomes(
    returns: &[Val],
    lookup: &dyn Fn(&Val) -> Val,
    targets: &[String],
    parallel_targets: &[String],
) -> Vec<Vec<String>> {
    fn alternatives(v: &Val, out: &mut Vec<Val>) {
        match v {
            Val::Alt(items) => items.iter().for_each(|i| alternatives(i, out)),
            other => out.push(other.clone()),
        }
    }
    let mut alts = Vec::new();
    returns.iter().for_each(|r| alternatives(r, &mut alts));
    let mut outcomes: Vec<Vec<String>> = Vec::new();
    let mut known = !alts.is_empty();
    for a in &alts {
        let items: Vec<Val> = match a {
            Val::List(items) => items
                .iter()
                .map(|i| match i {
                    Val::Send(t) => lookup(t),
                    other => lookup(other),
                })
                .collect(),
            Val::Send(t) => vec![lookup(t)],
            other => vec![lookup(other)],
        };
        let mut names = Vec::new();
        let mut unknown = Vec::new();
        Val::List(items).node_names(&mut names, &mut unknown);
        if !unknown.is_empty() {
            known = false;
            break;
        }
        names.sort();
        names.dedup();
        if !outcomes.contains(&names) {
            outcomes.push(names);
        }
    }
    if known {
        return outcomes;
    }
    let mut out: Vec<Vec<String>> = targets.iter().map(|t| vec![t.clone()]).collect();
    if !parallel_targets.is_empty() {
        let mut p = parallel_targets.to_vec();
        p.sort();
        p.dedup();
        out.push(p);
    }
    out
}

/// The callable `add_node` was given: a repository function (directly, through a lambda that
/// calls it, or `functools.partial`), or the identity lambda.
fn node_action(repo: &Repo<'_>, m: usize, e: &Expr) -> Option<Action> {
    let literals = |args: &[Expr], kwargs: &[(String, Expr)]| -> Vec<String> {
        args.iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect()
    };
    match e {
        Expr::Lambda(body) => match body.as_ref() {
            Expr::Name(_) => Some(Action::Identity),
            Expr::Call { func, args, kwargs } => {
                let name = func.dotted()?;
                let (fm, f) = repo.function(m, &name)?;
                Some(Action::Func {
                    module: fm,
                    line: f.line,
                    bound: literals(args, kwargs),
                    wrapper: None,
                })
            }
            _ => None,
        },
        Expr::Call { func, args, kwargs }
            if func.dotted().is_some_and(|d| d.ends_with("partial")) =>
        {
            let name = args.first()?.dotted()?;
            let (fm, f) = repo.function(m, &name)?;
            Some(Action::Func {
                module: fm,
                line: f.line,
                bound: literals(&args[1..], kwargs),
                wrapper: None,
            })
        }
        Expr::Call { func, args, kwargs } => wrapped(repo, m, func, args, kwargs),
        other => {
            let name = other.dotted()?;
            let (fm, f) = repo.function(m, &name)?;
            Some(Action::Func {
                module: fm,
                line: f.line,
                bound: Vec::new(),
                wrapper: None,
            })
        }
    }
}

/// `factory(node_fn, ...)` where the repository function `factory` returns a function nested
/// in it that calls one of `factory`'s parameters with its own state argument: the node runs
/// that argument's function, inside the nested one.
fn wrapped(
    repo: &Repo<'_>,
    m: usize,
    func: &Expr,
    args: &[Expr],
    kwargs: &[(String, Expr)],
) -> Option<Action> {
    let (fm, factory) = repo.function(m, &func.dotted()?)?;
    let module = &repo.modules[fm];
    let [Expr::Name(inner)] = factory.returns.as_slice() else {
        return None;
    };
    let (ci, closure) = module.functions.iter().enumerate().find(|(_, x)| {
        x.name == *inner && x.line > factory.line && x.end_line <= factory.end_line
    })?;
    let state = closure
        .params
        .iter()
        .find(|p| *p != "self" && *p != "cls")?;
    let params: Vec<&String> = factory.params.iter().filter(|p| *p != "self").collect();
    // the factory's parameter the nested function calls with its state
    let called = module.calls.iter().find_map(|c| {
        (c.func == Some(ci)
            && c.receiver.is_none()
            && c.args.first() == Some(&Expr::Name(state.clone())))
        .then(|| params.iter().position(|p| **p == c.method))
        .flatten()
    })?;
    let arg = kwargs
        .iter()
        .find(|(k, _)| *k == *params[called])
        .map(|(_, v)| v)
        .or_else(|| args.get(called))?;
    let (wm, w) = repo.function(m, &arg.dotted()?)?;
    Some(Action::Func {
        module: wm,
        line: w.line,
        bound: Vec::new(),
        wrapper: Some((fm, closure.line)),
    })
}

/// `Command` from `langgraph.types` (or a bare `Command` when its import is not seen).
fn is_command(repo: &Repo<'_>, m: usize, dotted: &str) -> bool {
    repo.is(m, dotted, &["langgraph.types.Command"]) || dotted == "Command"
}

/// A value that is one of several nodes chosen when the graph is built (`a if x else b`, a
/// variable assigned in both branches of an `if`): the edges it makes are never taken together.
fn is_choice(v: &Val) -> bool {
    match v {
        Val::Alt(items) => {
            let mut out = Vec::new();
            let mut unk = Vec::new();
            Val::Alt(items.clone()).node_names(&mut out, &mut unk);
            out.sort();
            out.dedup();
            out.len() > 1
        }
        _ => false,
    }
}

fn collect_parallel(v: &Val, out: &mut Vec<Val>) {
    match v {
        Val::List(items) if items.len() >= 2 || items.iter().any(|i| matches!(i, Val::Send(_))) => {
            for i in items {
                match i {
                    Val::Send(t) => out.push((**t).clone()),
                    other => out.push(other.clone()),
                }
            }
        }
        Val::Send(t) => out.push((**t).clone()),
        Val::Alt(alts) => {
            for a in alts {
                collect_parallel(a, out);
            }
        }
        _ => {}
    }
}

fn has_send(v: &Val) -> bool {
    match v {
        Val::Send(_) => true,
        Val::List(items) | Val::Alt(items) => items.iter().any(has_send),
        _ => false,
    }
}

/// Shortest distance from `start` to every reachable node.
fn distances(g: &GraphFacts, start: &str) -> HashMap<String, usize> {
    let mut d = HashMap::new();
    let mut q = VecDeque::new();
    d.insert(start.to_string(), 0);
    q.push_back(start.to_string());
    while let Some(n) = q.pop_front() {
        let dn = d[&n];
        for s in g.successors(&n) {
            if !d.contains_key(s) {
                d.insert(s.to_string(), dn + 1);
                q.push_back(s.to_string());
            }
        }
    }
    d
}

/// Whether `text` mentions the identifier `word` (not as part of a longer identifier).
pub(crate) fn mentions_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// A symbolic node standing for one node per item of a loop (see `Builder::names`).
pub fn is_per_item(name: &str) -> bool {
    name.ends_with(')') && name.contains(" (each of ")
}

/// Every edge into `name` is a router's outcome: a router decides whether it runs.
fn conditional_only(g: &GraphFacts, name: &str) -> bool {
    let mut into = g.edges.iter().filter(|e| e.to == name).peekable();
    into.peek().is_some() && into.all(|e| e.conditional)
}

/// How much of the graph runs after `name` (the nodes reachable from it).
fn onward(g: &GraphFacts, name: &str) -> usize {
    distances(g, name).len()
}

/// A side exit of the routers that lead to `name`, read from what the graph does after it,
/// never from its name: every edge into it is a router's outcome, and one of those routers
/// has another outcome from which more of the graph runs (a failure handler beside the way on).
pub(crate) fn side_exit(g: &GraphFacts, name: &str) -> bool {
    if !conditional_only(g, name) {
        return false;
    }
    let here = onward(g, name);
    g.edges.iter().filter(|e| e.to == name).any(|e| {
        g.edges
            .iter()
            .filter(|o| o.conditional && o.from == e.from && o.to != name && o.to != "END")
            .any(|o| onward(g, &o.to) > here)
    })
}

/// Where a node is added to the graph (its first `add_node`): a tie broken by the code's
/// order, not by names.
fn defined_at(g: &GraphFacts, name: &str) -> (String, usize) {
    g.nodes
        .iter()
        .find(|n| n.name == name)
        .map(|n| (n.path.clone(), n.line))
        .unwrap_or_default()
}

/// How a candidate join ranks (lowest first): a side exit last, then the summed distance from
/// the branches, then where the node is added.
type JoinCost = (bool, usize, (String, usize));

/// For each fan-out, the nearest fan-in node reached from two or more of its branches,
/// ordered by distance from `START`.
pub(crate) fn branchings(g: &GraphFacts) -> Vec<Branching> {
    let from_start = distances(g, "START");
    let fan_in: BTreeSet<&str> = g.fan_in.iter().map(|f| f.to.as_str()).collect();
    let mut out: Vec<(usize, Branching)> = g
        .fan_out
        .iter()
        .map(|fo| {
            let reach: Vec<HashMap<String, usize>> =
                fo.to.iter().map(|t| distances(g, t)).collect();
            let mut best: Option<(JoinCost, String)> = None;
            let mut candidates: BTreeSet<&String> = BTreeSet::new();
            for r in &reach {
                candidates.extend(r.keys());
            }
            for c in candidates {
                if c == "END" || fo.to.contains(c) || !fan_in.contains(c.as_str()) {
                    continue;
                }
                let hits: Vec<usize> = reach.iter().filter_map(|r| r.get(c).copied()).collect();
                // a symbolic per-item branch stands for several branches
                let per_item = fo
                    .to
                    .iter()
                    .zip(&reach)
                    .filter(|(t, r)| is_per_item(t) && r.contains_key(c))
                    .count();
                if hits.len() + per_item >= 2 {
                    // a side exit reached from every branch (a failure handler) is not where
                    // they join; ties go to the node added first
                    let cost = (
                        side_exit(g, c),
                        hits.iter().sum::<usize>(),
                        defined_at(g, c),
                    );
                    if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                        best = Some((cost, c.clone()));
                    }
                }
            }
            let depth = from_start.get(&fo.from).copied().unwrap_or(usize::MAX);
            (
                depth,
                Branching {
                    from: fo.from.clone(),
                    branches: fo.to.clone(),
                    join: best.map(|(_, n)| n),
                    location: fo.location.clone(),
                },
            )
        })
        .collect();
    out.sort_by_key(|(d, _)| *d);
    out.into_iter().map(|(_, b)| b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    fn graph(src: &str) -> GraphFacts {
        let ms = vec![parse_module("src/graph.py", src.to_string()).unwrap()];
        let repo = Repo::new(&ms);
        analyse(&repo).into_iter().next().expect("a graph")
    }

    const HEADER: &str =
        "from langgraph.graph import StateGraph, START, END\nfrom src.state import AgentState\n";

    #[test]
    fn fan_out_and_fan_in_through_plain_edges_and_list_form() {
        let g = graph(&format!(
            "{HEADER}b = StateGraph(AgentState)\nfor n in ['repo', 'doc']:\n    b.add_node(n, lambda s: s)\nb.add_node('agg', f)\nb.add_edge(START, 'repo')\nb.add_edge('__start__', 'doc')\nb.add_edge(['repo', 'doc'], 'agg')\nb.add_edge('agg', END)\n"
        ));
        assert_eq!(g.state_type.as_deref(), Some("AgentState"));
        assert_eq!(g.fan_out.len(), 1);
        assert_eq!(g.fan_out[0].from, "START");
        assert_eq!(g.fan_out[0].to, vec!["repo", "doc"]);
        assert_eq!(g.fan_in[0].to, "agg");
        assert!(g.fan_in[0].synchronized);
        assert_eq!(g.branchings[0].join.as_deref(), Some("agg"));
        assert!(!g.linear);
        assert!(g.undefined_nodes.is_empty(), "{:?}", g.undefined_nodes);
    }

    #[test]
    fn router_returning_sends_is_a_fan_out() {
        let g = graph(&format!(
            "{HEADER}from langgraph.types import Send\nJUDGES = ['prosecutor', 'defense', 'tech_lead']\ndef route(state):\n    if state.get('errors'):\n        return 'error_handler'\n    return [Send(j, state) for j in JUDGES]\nb = StateGraph(AgentState)\nb.add_node('agg', f)\nb.add_conditional_edges('agg', route)\n"
        ));
        let fo = &g.fan_out[0];
        assert_eq!(fo.from, "agg");
        assert_eq!(fo.via, "send");
        assert_eq!(fo.to, vec!["defense", "prosecutor", "tech_lead"]);
        assert!(
            g.edges
                .iter()
                .any(|e| e.to == "error_handler" && e.conditional)
        );
    }
}
