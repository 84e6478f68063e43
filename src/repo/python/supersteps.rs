//! The superstep machine of [`super::runtime`]: one LangGraph invocation explored over every
//! router choice the code allows, step by step, within a budget that holds from the first step.
//!
//! A machine state is the set of nodes triggered for the next superstep, what each `add_edge([a,
//! b], c)` join has seen, the state keys that may hold a value, and the choice already made by
//! each router whose decision is fixed for the run. Per superstep the exploration records which
//! node ran and what triggered it, two writes to a field without a reducer, a re-sent appending
//! field that may already hold items, and the keys each reader could see; the states it reaches
//! form a graph, and a state from which no path reaches the end is a loop that never ends.
//!
//! What a router may choose:
//! - an outcome guarded by a truthy test of a key (`if state.get("error"): return "handler"`)
//!   only when the key may hold a value when the router runs (the state before the step plus
//!   what its own node returned, undeclared keys included);
//! - a router whose function only reads keys no node writes and calls nothing but a few pure
//!   builtins decides on the input alone: each of its runs in one invocation makes the same
//!   choice.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Supersteps (and router combinations) explored over all paths before the simulation gives up.
pub const BUDGET: usize = 40_000;
/// Router choices combined in one superstep before the simulation gives up.
pub const MAX_CHOICES: usize = 256;

/// Given the values known for certain (key -> literal), the outcomes a router can choose;
/// `None` when its code does not let them be told apart.
pub type Pick<'g> = Box<dyn Fn(&BTreeMap<String, String>) -> Option<BTreeSet<usize>> + 'g>;

/// One router attached to one node.
pub struct RouterSpec<'g> {
    /// The outcomes the known values allow (see [`Pick`]).
    pub pick: Option<Pick<'g>>,
    pub outcomes: Vec<Vec<&'g str>>,
    /// Per outcome: the nodes it sends to with `Send` (each a task of its own; empty: none).
    pub sends: Vec<Vec<&'g str>>,
    /// Per outcome: the key whose truthy test guards it.
    pub guards: Vec<Option<String>>,
    /// The router's choice is fixed for the run (an id shared by the attachments of one function).
    pub fixed: Option<usize>,
    /// Keys the router reads.
    pub reads: Vec<String>,
    /// Index in `GraphFacts::routers`.
    pub index: usize,
}

/// What each node does to the state, as the machine needs it.
#[derive(Default)]
pub struct NodeWrites {
    /// Declared keys the node's update writes (kept by the state).
    pub declared: BTreeSet<String>,
    /// Every key of its update, undeclared ones too (its own router still sees them).
    pub all: BTreeSet<String>,
    /// Returns the whole state (re-writes every key the state holds).
    pub whole: bool,
    /// Appending fields whose current value the update re-sends.
    pub resends: BTreeSet<String>,
    /// Appending fields the node grows in place before re-sending them (so they hold items
    /// when re-sent, whatever they held before).
    pub fills: BTreeSet<String>,
    /// Re-sent appending fields to which the update adds items (`state["xs"] + [x]`).
    pub adds: BTreeSet<String>,
    /// Keys the node reads.
    pub reads: BTreeSet<String>,
    /// Declared keys every run of the node sets to one literal.
    pub settled: BTreeMap<String, String>,
    /// Declared keys every run of the node sets to their own value plus this integer.
    pub stepped: BTreeMap<String, i64>,
}

/// Largest counter value followed: past it the value is taken as unknown (a counter that
/// nothing bounds would otherwise make every pass of a loop a new state).
const MAX_COUNT: i64 = 64;

impl NodeWrites {
    /// The value key `k` holds for certain after this node wrote it, from `before` (the
    /// values known for certain when the node ran); `None` when it is not known.
    fn value_of(&self, k: &str, before: &BTreeMap<String, String>) -> Option<String> {
        if let Some(v) = self.settled.get(k) {
            return Some(v.clone());
        }
        let step = self.stepped.get(k)?;
        let now: i64 = before.get(k)?.parse().ok()?;
        let next = now.checked_add(*step)?;
        (next.abs() <= MAX_COUNT).then(|| next.to_string())
    }
}

pub struct Machine<'g> {
    /// Nodes on some cycle of the wiring (re-running them is iteration).
    pub cyclic: BTreeSet<&'g str>,
    pub plain: BTreeMap<&'g str, Vec<&'g str>>,
    pub joins: Vec<(BTreeSet<&'g str>, &'g str)>,
    pub routers: BTreeMap<&'g str, Vec<RouterSpec<'g>>>,
    pub nodes: BTreeMap<&'g str, NodeWrites>,
    /// Keys tracked as "may hold a value" (none when the schema or the inputs are unknown: then
    /// every key is assumed present and no guard is dead).
    pub track: bool,
    /// Fields without a reducer (two writes in one step crash the run).
    pub no_reducer: BTreeSet<String>,
    /// Fields with an appending reducer.
    pub appending: BTreeSet<String>,
}

/// One machine state: what runs in the next superstep and everything that decides what
/// follows. Each distinct state is expanded once.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Step<'g> {
    /// The nodes of the superstep, each with the distinct nodes that triggered it.
    active: BTreeMap<&'g str, BTreeSet<&'g str>>,
    seen: Vec<BTreeSet<&'g str>>,
    written: BTreeSet<String>,
    /// Appending fields that may hold items.
    filled: BTreeSet<String>,
    /// Keys whose value is known for certain in this run (a literal every writer so far set).
    values: BTreeMap<String, String>,
    fixed: BTreeMap<usize, usize>,
    /// Nodes on no cycle that already ran in this invocation.
    ran: BTreeSet<&'g str>,
    /// Nodes of `active` that run as two tasks or more in this superstep (a `Send` to a node
    /// that an edge or another `Send` also triggers).
    twice: BTreeSet<&'g str>,
}

#[derive(Default)]
pub struct Explored<'g> {
    pub reached: BTreeSet<String>,
    /// Nodes some run of which is triggered by two or more distinct nodes at once (or by a
    /// per-item node): the real fan-ins.
    pub joins: BTreeSet<String>,
    /// node on no cycle → what triggered it when it ran again after a first run
    pub dups: BTreeMap<String, BTreeSet<String>>,
    /// node → what triggered its first runs
    pub first: BTreeMap<String, BTreeSet<String>>,
    /// field → nodes that write it in one superstep (a crash), with an example step
    pub concurrent: BTreeMap<String, BTreeSet<String>>,
    /// node → appending fields it re-sends while they may hold items
    pub doubling: BTreeMap<String, BTreeSet<String>>,
    /// (reader, key) → whether the key could hold a value in some run of the reader; readers
    /// are nodes, and routers as `(source, router index)` rendered `source#index`
    pub visible: BTreeMap<(String, String), bool>,
    /// Nodes active in states from which no run can end.
    pub endless: BTreeSet<String>,
    pub complete: bool,
    budget_left: usize,
    ids: HashMap<Step<'g>, usize>,
    edges: Vec<Vec<usize>>,
    terminal: Vec<bool>,
    active_of: Vec<Vec<String>>,
}

/// Per node: triggered by an edge or a plain router return, and the `Send`s to it.
type Tasks<'g> = BTreeMap<&'g str, (bool, usize)>;

/// One combination of router choices so far: the nodes triggered (each with what triggered
/// it), the fixed routers' choices, and each node's tasks.
type Combo<'g> = (
    BTreeMap<&'g str, BTreeSet<&'g str>>,
    BTreeMap<usize, usize>,
    Tasks<'g>,
);

/// Each of `combos` grown by every `allowed` choice of router `r` on node `a` (but the one its
/// fixed choice excludes); `None` past [`MAX_CHOICES`].
fn choose<'g>(
    combos: &[Combo<'g>],
    a: &'g str,
    r: &RouterSpec<'g>,
    allowed: &[usize],
) -> Option<Vec<Combo<'g>>> {
    let mut grown = Vec::new();
    for (c, fixed, tasks) in combos {
        let chosen = r.fixed.and_then(|id| fixed.get(&id).copied());
        for &i in allowed {
            if chosen.is_some_and(|x| x != i) {
                continue;
            }
            let mut c = c.clone();
            let mut tasks = tasks.clone();
            let sent = r.sends.get(i).map_or(&[][..], Vec::as_slice);
            for t in &r.outcomes[i] {
                c.entry(t).or_default().insert(a);
                if !sent.contains(t) {
                    tasks.entry(t).or_default().0 = true;
                }
            }
            for t in sent {
                tasks.entry(t).or_default().1 += 1;
            }
            let mut fixed = fixed.clone();
            if let Some(id) = r.fixed {
                fixed.insert(id, i);
            }
            grown.push((c, fixed, tasks));
        }
        if grown.len() > MAX_CHOICES {
            return None;
        }
    }
    Some(grown)
}

impl<'g> Machine<'g> {
    fn writes_of(&self, n: &str) -> Option<&NodeWrites> {
        self.nodes.get(n)
    }

    /// Every combination of router choices for the nodes of `step.active`; `None` past
    /// [`MAX_CHOICES`].
    fn next(&self, step: &Step<'g>) -> Option<Vec<Step<'g>>> {
        let (base, seen) = self.pulled(step);
        let (written, filled) = self.written_after(step);
        let values = self.values_after(step);
        let mut ran = step.ran.clone();
        ran.extend(step.active.keys().filter(|a| !self.cyclic.contains(*a)));
        let pulled: Tasks<'g> = base.keys().map(|t| (*t, (true, 0))).collect();
        let mut combos: Vec<Combo<'g>> = vec![(base, step.fixed.clone(), pulled)];
        for a in step.active.keys() {
            for r in self.routers.get(a).into_iter().flatten() {
                if r.outcomes.is_empty() {
                    continue;
                }
                let allowed = self.allowed_outcomes(step, a, r);
                combos = choose(&combos, a, r, &allowed)?;
            }
        }
        Some(
            combos
                .into_iter()
                .map(|(mut c, fixed, tasks)| {
                    c.remove("END");
                    c.remove("START");
                    let twice = tasks
                        .iter()
                        .filter(|(n, (pull, push))| {
                            c.contains_key(**n) && usize::from(*pull) + push >= 2
                        })
                        .map(|(n, _)| *n)
                        .collect();
                    Step {
                        active: c,
                        seen: seen.clone(),
                        written: written.clone(),
                        filled: filled.clone(),
                        values: values.clone(),
                        fixed,
                        ran: ran.clone(),
                        twice,
                    }
                })
                .collect(),
        )
    }

    /// What the plain edges out of `step.active` trigger, each with the nodes that triggered
    /// it, joins whose every source has now run included; and the joins' sources seen so far
    /// after the step.
    fn pulled(
        &self,
        step: &Step<'g>,
    ) -> (BTreeMap<&'g str, BTreeSet<&'g str>>, Vec<BTreeSet<&'g str>>) {
        let mut base: BTreeMap<&'g str, BTreeSet<&'g str>> = BTreeMap::new();
        for a in step.active.keys() {
            for t in self.plain.get(a).into_iter().flatten() {
                base.entry(t).or_default().insert(a);
            }
        }
        let mut seen = step.seen.clone();
        for (i, (from, to)) in self.joins.iter().enumerate() {
            seen[i].extend(step.active.keys().filter(|a| from.contains(*a)));
            if seen[i].len() == from.len() {
                base.entry(to).or_default().extend(from.iter().copied());
                seen[i].clear();
            }
        }
        (base, seen)
    }

    /// The declared keys written, and the appending fields that may hold items, after the
    /// nodes of `step` ran.
    fn written_after(&self, step: &Step<'g>) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut written = step.written.clone();
        let mut filled = step.filled.clone();
        for a in step.active.keys() {
            if let Some(w) = self.writes_of(a) {
                written.extend(w.declared.iter().cloned());
                for f in &w.declared {
                    if self.appending.contains(f)
                        && (!w.resends.contains(f)
                            || step.filled.contains(f)
                            || w.fills.contains(f)
                            || w.adds.contains(f))
                    {
                        filled.insert(f.clone());
                    }
                }
            }
        }
        (written, filled)
    }

    /// The outcomes router `r` of node `a` may choose after `step`: those whose guard key can
    /// hold a value (all of them when none can), narrowed to what the router picks from the
    /// values it sees (the state before the step plus its own node's update) when that leaves
    /// some.
    fn allowed_outcomes(&self, step: &Step<'g>, a: &str, r: &RouterSpec<'g>) -> Vec<usize> {
        let own = self.writes_of(a).map(|w| &w.all);
        let visible =
            |k: &str| !self.track || step.written.contains(k) || own.is_some_and(|o| o.contains(k));
        let mut allowed: Vec<usize> = (0..r.outcomes.len())
            .filter(|i| r.guards[*i].as_deref().is_none_or(visible))
            .collect();
        if allowed.is_empty() {
            allowed = (0..r.outcomes.len()).collect();
        }
        // what the router sees: the state before the step plus its own node's update
        if self.track
            && let Some(pick) = &r.pick
        {
            let mut seen_values = step.values.clone();
            if let Some(w) = self.writes_of(a) {
                for k in &w.all {
                    match w.value_of(k, &step.values) {
                        Some(v) => seen_values.insert(k.clone(), v),
                        None => seen_values.remove(k),
                    };
                }
            }
            if let Some(possible) = pick(&seen_values) {
                let narrowed: Vec<usize> = allowed
                    .iter()
                    .copied()
                    .filter(|i| possible.contains(i))
                    .collect();
                if !narrowed.is_empty() {
                    allowed = narrowed;
                }
            }
        }
        allowed
    }

    /// The values known for certain after the nodes of `step` ran: a key keeps a literal when
    /// every node of the step that writes it sets that same literal; a whole-state return
    /// re-sends what the state holds and changes nothing.
    fn values_after(&self, step: &Step<'g>) -> BTreeMap<String, String> {
        let mut values = step.values.clone();
        let mut set: BTreeMap<&str, BTreeSet<Option<String>>> = BTreeMap::new();
        for a in step.active.keys() {
            if let Some(w) = self.writes_of(a) {
                for k in &w.declared {
                    set.entry(k.as_str())
                        .or_default()
                        .insert(w.value_of(k, &step.values));
                }
            }
        }
        for (k, vs) in set {
            match vs.into_iter().collect::<Vec<_>>().as_slice() {
                [Some(v)] => values.insert(k.to_string(), v.clone()),
                _ => values.remove(k),
            };
        }
        values
    }

    /// What happens within one superstep: crashes, doubling lists, what readers see.
    fn observe(&self, step: &Step<'g>, out: &mut Explored<'g>) {
        let visible = |k: &str| !self.track || step.written.contains(k);
        let mut writers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for a in step.active.keys() {
            let Some(w) = self.writes_of(a) else { continue };
            for k in &w.reads {
                let e = out
                    .visible
                    .entry((a.to_string(), k.clone()))
                    .or_insert(false);
                *e |= visible(k);
            }
            let mut keys: BTreeSet<&str> = w
                .declared
                .iter()
                .map(String::as_str)
                .filter(|k| self.no_reducer.contains(*k))
                .collect();
            if w.whole && self.track {
                keys.extend(
                    step.written
                        .iter()
                        .map(String::as_str)
                        .filter(|k| self.no_reducer.contains(*k)),
                );
            }
            for k in keys {
                writers.entry(k).or_default().push(a);
                if step.twice.contains(a) {
                    writers.entry(k).or_default().push(a);
                }
            }
            for f in &w.resends {
                if step.filled.contains(f) || w.fills.contains(f) {
                    out.doubling
                        .entry(a.to_string())
                        .or_default()
                        .insert(f.clone());
                }
            }
            if w.whole {
                for f in &self.appending {
                    if step.filled.contains(f) || w.fills.contains(f) {
                        out.doubling
                            .entry(a.to_string())
                            .or_default()
                            .insert(f.clone());
                    }
                }
            }
            for r in self.routers.get(a).into_iter().flatten() {
                let own = &w.all;
                for k in &r.reads {
                    let e = out
                        .visible
                        .entry((format!("{a}#{}", r.index), k.clone()))
                        .or_insert(false);
                    *e |= visible(k) || own.contains(k);
                }
            }
        }
        for (k, ws) in writers {
            if ws.len() >= 2 {
                out.concurrent
                    .entry(k.to_string())
                    .or_default()
                    .extend(ws.iter().map(|w| w.to_string()));
            }
        }
    }

    /// What one superstep records: reached nodes, joins, second runs.
    fn record(&self, step: &Step<'g>, out: &mut Explored<'g>) {
        for (n, by) in &step.active {
            out.reached.insert(n.to_string());
            if by.len() >= 2 || by.iter().any(|b| super::graph::is_per_item(b)) {
                out.joins.insert(n.to_string());
            }
            let by: BTreeSet<String> = by.iter().map(|b| b.to_string()).collect();
            if step.ran.contains(n) {
                out.dups.entry(n.to_string()).or_default().extend(by);
            } else {
                out.first.entry(n.to_string()).or_default().extend(by);
            }
        }
        self.observe(step, out);
    }

    /// Explores every run from `START`, with `inputs` the keys the input gives (`filled`: the
    /// appending ones that may hold items). Each distinct state is expanded once; the budget
    /// counts states and router combinations from the first step on.
    pub fn explore(
        &self,
        inputs: BTreeSet<String>,
        filled: BTreeSet<String>,
        values: BTreeMap<String, String>,
    ) -> Explored<'g> {
        let mut out = Explored {
            budget_left: BUDGET,
            complete: true,
            ..Explored::default()
        };
        let start = Step {
            active: BTreeMap::from([("START", BTreeSet::new())]),
            seen: vec![BTreeSet::new(); self.joins.len()],
            written: inputs,
            filled,
            values,
            fixed: BTreeMap::new(),
            ran: BTreeSet::new(),
            twice: BTreeSet::new(),
        };
        let Some(firsts) = self.next(&start) else {
            out.complete = false;
            return out;
        };
        let mut todo: Vec<(Step<'g>, Option<usize>)> =
            firsts.into_iter().map(|s| (s, None)).collect();
        while let Some((step, parent)) = todo.pop() {
            if out.budget_left == 0 {
                out.complete = false;
                break;
            }
            let n = out.ids.len();
            let id = *out.ids.entry(step.clone()).or_insert(n);
            if let Some(p) = parent
                && !out.edges[p].contains(&id)
            {
                out.edges[p].push(id);
            }
            if id != n {
                continue; // expanded already
            }
            out.budget_left -= 1;
            out.edges.push(Vec::new());
            out.terminal.push(step.active.is_empty());
            out.active_of
                .push(step.active.keys().map(|s| s.to_string()).collect());
            self.record(&step, &mut out);
            if step.active.is_empty() {
                continue;
            }
            match self.next(&step) {
                None => {
                    out.complete = false;
                    break;
                }
                Some(nexts) => {
                    out.budget_left = out.budget_left.saturating_sub(nexts.len() / 8);
                    todo.extend(nexts.into_iter().map(|s| (s, Some(id))));
                }
            }
        }
        if out.complete {
            // states from which no run ends
            let n = out.edges.len();
            let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n];
            for (a, bs) in out.edges.iter().enumerate() {
                for b in bs {
                    rev[*b].push(a);
                }
            }
            let mut ends = vec![false; n];
            let mut stack: Vec<usize> = (0..n).filter(|i| out.terminal[*i]).collect();
            for i in &stack {
                ends[*i] = true;
            }
            while let Some(x) = stack.pop() {
                for p in &rev[x] {
                    if !ends[*p] {
                        ends[*p] = true;
                        stack.push(*p);
                    }
                }
            }
            for (i, ended) in ends.iter().enumerate() {
                if !ended {
                    out.endless.extend(out.active_of[i].iter().cloned());
                }
            }
        }
        out.ids.clear();
        out
    }
}
