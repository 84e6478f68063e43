//! Graph orchestration (`repo.graph.*`): the StateGraph, its two fan-out/fan-in layers and
//! the conditional routes that change the path by the state.
//!
//! A layer is read from the wiring (which node fans out, where the branches join); a route is
//! a conditional edge whose router has two or more different outcomes (it changes which nodes
//! run next). What the route tests (an error, missing evidence) is not decided here: the
//! statement says what the router chooses between, never what its names suggest.

use super::{Fix, Site, Stated, count, join_and};
use serde::{Deserialize, Serialize};

/// One of the two fan-out/fan-in layers the rubric asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Detectives,
    Judges,
}

impl Layer {
    fn noun(self) -> &'static str {
        match self {
            Layer::Detectives => "detectives",
            Layer::Judges => "judges",
        }
    }
}

/// A node fanning out to parallel branches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    pub at: Site,
    pub from: String,
    pub branches: Vec<String>,
}

/// A conditional edge whose router chooses between different sets of next nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub at: Site,
    /// The node the conditional edge leaves.
    pub source: String,
    /// The router function as written.
    pub router: String,
    /// Every set of nodes one call of the router can trigger.
    pub outcomes: Vec<Vec<String>>,
}

impl Route {
    fn said(&self) -> String {
        let outcomes: Vec<String> = self.outcomes.iter().map(|o| join_and(o)).collect();
        format!(
            "`{}` goes on to {} (router `{}`, {})",
            self.source,
            outcomes.join(" or to "),
            self.router,
            self.at
        )
    }
}

/// A conditional route the run-time analysis proves can never be taken (its router returns
/// `target` only under a test that never holds when it runs): it changes no path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadRoute {
    pub at: Site,
    pub source: String,
    pub target: String,
    /// The layer the route leaves (`None`: elsewhere in the graph).
    pub layer: Option<Layer>,
    /// Why it is never taken, as the analysis found it.
    pub why: String,
}

impl DeadRoute {
    fn said(&self) -> String {
        format!(
            "`{}` -> `{}` ({}) can never be taken: {}",
            self.source, self.target, self.at, self.why
        )
    }
}

/// Graph orchestration facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum GraphFact {
    /// A StateGraph is built (nodes added, edges wired).
    Definition {
        at: Option<Site>,
        state_type: Option<String>,
        builder: String,
        nodes: usize,
        edges: usize,
        /// Of the edges, the targets of `add_conditional_edges` calls.
        conditional_edges: usize,
        /// `add_conditional_edges` calls.
        conditional: usize,
        graphs: usize,
        /// Python files searched.
        files: usize,
    },
    /// A node fans out to the layer's nodes (they run in one superstep).
    FanOut {
        layer: Layer,
        branch: Option<Branch>,
        graph: Site,
    },
    /// The layer's branches join at one node before the next step.
    FanIn {
        layer: Layer,
        /// The fan-out whose branches should join.
        branch: Option<Branch>,
        /// (where, the joining node).
        join: Option<(Site, String)>,
        graph: Site,
    },
    /// Conditional routes that change the path by the state, after each layer: the rubric's
    /// "Evidence Missing" (after the detectives) and "Node Failure" (after the judges) edges.
    Routes {
        /// Routes leaving a detective, the detectives' join or the node that fans out to the
        /// judges.
        detectives: Vec<Route>,
        /// Routes leaving a judge or the judges' join.
        judges: Vec<Route>,
        /// Routes elsewhere in the graph.
        elsewhere: Vec<Route>,
        /// Conditional edges whose router always sends to the same nodes (a fan-out router).
        fixed: Vec<Site>,
        /// Routes that can never be taken, left out of the three lists above (a router left
        /// with one outcome is no route).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        dead: Vec<DeadRoute>,
        /// Where the fixes go: the detectives' join and the judges' join, when known.
        detectives_join: Option<(Site, String)>,
        judges_join: Option<(Site, String)>,
        graph: Site,
    },
}

impl GraphFact {
    /// Every conditional route of the graph (any layer).
    pub fn any_route(&self) -> bool {
        match self {
            GraphFact::Routes {
                detectives,
                judges,
                elsewhere,
                ..
            } => !(detectives.is_empty() && judges.is_empty() && elsewhere.is_empty()),
            _ => false,
        }
    }
}

fn layer_key(layer: Layer, what: &str) -> String {
    match (layer, what) {
        (Layer::Detectives, "out") => "detectives_fan_out".into(),
        (Layer::Detectives, _) => "evidence_fan_in".into(),
        (Layer::Judges, "out") => "judges_fan_out".into(),
        (Layer::Judges, _) => "judges_fan_in".into(),
    }
}

/// The conditional routes after each layer (or elsewhere), the conditional edges that always
/// send to the same nodes, and the routes that can never be taken.
fn routes_statement(
    detectives: &[Route],
    judges: &[Route],
    elsewhere: &[Route],
    fixed: &[Site],
    dead: &[DeadRoute],
) -> String {
    let all: Vec<&Route> = detectives.iter().chain(judges).chain(elsewhere).collect();
    let dead_in = |layer: Option<Layer>| dead.iter().any(|d| d.layer == layer);
    // "none leaves ..." is true only of routes that can be taken
    let none = |layer: Layer| {
        if dead_in(Some(layer)) {
            "none that can be taken"
        } else {
            "none"
        }
    };
    let dead_said = dead_routes_said(dead);
    let said = |rs: &[Route]| {
        rs.iter()
            .take(2)
            .map(Route::said)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let fixed_said = if fixed.is_empty() {
        String::new()
    } else {
        format!(
            "; {} always {} to the same nodes",
            count(fixed.len(), "conditional edge", "conditional edges"),
            if fixed.len() == 1 { "sends" } else { "send" }
        )
    };
    let text = match (detectives.is_empty(), judges.is_empty()) {
        (false, false) => format!(
            "conditional routes after both layers: after the detectives {}; after the judges {}",
            said(detectives),
            said(judges)
        ),
        (false, true) => format!(
            "no conditional route after the judges ({} leaves a judge or the judges' join){fixed_said}; after the detectives {}",
            none(Layer::Judges),
            said(detectives)
        ),
        (true, false) => format!(
            "no conditional route after the detectives ({} leaves a detective, the detectives' join or the node that fans out to the judges){fixed_said}; after the judges {}",
            none(Layer::Detectives),
            said(judges)
        ),
        (true, true) if !all.is_empty() => format!(
            "no conditional route{} after the detectives or the judges{fixed_said}; outside the two layers {}",
            if dead_in(Some(Layer::Detectives)) || dead_in(Some(Layer::Judges)) {
                " that can be taken"
            } else {
                ""
            },
            said(elsewhere)
        ),
        (true, true) if !fixed.is_empty() => format!(
            "no conditional route changes the path by the state: {} always {} to the same nodes (a fan-out router)",
            count(fixed.len(), "conditional edge", "conditional edges"),
            if fixed.len() == 1 { "sends" } else { "send" }
        ),
        (true, true) if !dead.is_empty() => {
            "no conditional route that can be taken changes the path by the state".into()
        }
        (true, true) => "no add_conditional_edges call in the graph: every path is fixed".into(),
    };
    format!("{text}{dead_said}")
}

/// The first two routes that can never be taken and how many more (`; ...`), or nothing.
fn dead_routes_said(dead: &[DeadRoute]) -> String {
    if dead.is_empty() {
        String::new()
    } else {
        let more = dead.len().saturating_sub(2);
        format!(
            "; {}{}",
            dead.iter()
                .take(2)
                .map(DeadRoute::said)
                .collect::<Vec<_>>()
                .join("; "),
            if more > 0 {
                format!(
                    "; and {more} more {} that can never be taken",
                    if more == 1 { "route" } else { "routes" }
                )
            } else {
                String::new()
            }
        )
    }
}

/// For each layer without a route, the first of its routes that can never be taken: that
/// route is the fix (its router is where to look), not a new conditional edge.
fn dead_without_route<'a>(
    detectives: &[Route],
    judges: &[Route],
    dead: &'a [DeadRoute],
) -> Vec<&'a DeadRoute> {
    [Layer::Detectives, Layer::Judges]
        .into_iter()
        .filter(|layer| match layer {
            Layer::Detectives => detectives.is_empty(),
            Layer::Judges => judges.is_empty(),
        })
        .filter_map(|layer| dead.iter().find(|d| d.layer == Some(layer)))
        .collect()
}

/// Where and how to add the route after the detectives: at their join (or the graph).
fn detectives_route_fix(join: &Option<(Site, String)>, graph: &Site) -> (Site, String) {
    let (site, node) = match join {
        Some((s, n)) => (s.clone(), format!("`{n}`")),
        None => (graph.clone(), "the evidence aggregator".to_string()),
    };
    (
        site,
        format!(
            "replace the plain edges out of {node} with `add_conditional_edges({node}, router, ...)` whose router sends the run past the judges (to the report or END) when the evidence it needs is missing"
        ),
    )
}

/// Where and how to add the route after the judges: at their join (or the graph).
fn judges_route_fix(join: &Option<(Site, String)>, graph: &Site) -> (Site, String) {
    let (site, join) = match join {
        Some((s, n)) => (s.clone(), format!(" (the judges join at `{n}`)")),
        None => (graph.clone(), String::new()),
    };
    (
        site,
        format!(
            "add a conditional edge between the judges and the verdict{join}: its router sends a failed or invalid judge run to a fallback node"
        ),
    )
}

impl Stated for GraphFact {
    fn key(&self) -> String {
        match self {
            GraphFact::Definition { .. } => "definition".into(),
            GraphFact::FanOut { layer, .. } => layer_key(*layer, "out"),
            GraphFact::FanIn { layer, .. } => layer_key(*layer, "in"),
            GraphFact::Routes { .. } => "error_edges".into(),
        }
    }

    fn holds(&self) -> bool {
        match self {
            GraphFact::Definition { at, .. } => at.is_some(),
            GraphFact::FanOut { branch, .. } => branch.is_some(),
            GraphFact::FanIn { join, .. } => join.is_some(),
            GraphFact::Routes {
                detectives, judges, ..
            } => !detectives.is_empty() && !judges.is_empty(),
        }
    }

    fn statement(&self) -> String {
        match self {
            GraphFact::Definition {
                at,
                state_type,
                builder,
                nodes,
                edges,
                conditional_edges,
                conditional,
                graphs,
                files,
            } => match at {
                Some(at) => format!(
                    "StateGraph({}) bound to `{builder}` at {at}: {}, {}{}{}",
                    state_type.as_deref().unwrap_or("?"),
                    count(*nodes, "node", "nodes"),
                    count(*edges, "edge", "edges"),
                    if *conditional > 0 {
                        format!(
                            " ({conditional_edges} of them the targets of {})",
                            count(
                                *conditional,
                                "add_conditional_edges call",
                                "add_conditional_edges calls"
                            )
                        )
                    } else {
                        String::new()
                    },
                    if *graphs > 1 {
                        format!("; {graphs} graphs in total")
                    } else {
                        String::new()
                    }
                ),
                None => format!(
                    "no StateGraph construction and no add_node/add_edge calls in the {}",
                    count(*files, "Python file", "Python files")
                ),
            },
            GraphFact::FanOut { layer, branch, .. } => match branch {
                Some(b) => format!(
                    "{} fan-out at {}: `{}` fans out to {}",
                    layer.noun(),
                    b.at,
                    b.from,
                    join_and(&b.branches)
                ),
                None => format!(
                    "{} fan-out: no node of the graph leads to two or more of them at once (plain edges, routers returning lists and Send calls searched)",
                    layer.noun()
                ),
            },
            GraphFact::FanIn {
                layer,
                branch,
                join,
                ..
            } => match (branch, join) {
                (Some(b), Some((at, j))) => format!(
                    "{} fan-in at {at}: the branches from `{}` join at `{j}`",
                    layer.noun(),
                    b.from
                ),
                (Some(b), None) => format!(
                    "{} fan-in: the branches from `{}` ({}) never meet at one node",
                    layer.noun(),
                    b.from,
                    join_and(&b.branches)
                ),
                (None, _) => format!(
                    "{} fan-in: no fan-out of the {} to join",
                    layer.noun(),
                    layer.noun()
                ),
            },
            GraphFact::Routes {
                detectives,
                judges,
                elsewhere,
                fixed,
                dead,
                ..
            } => routes_statement(detectives, judges, elsewhere, fixed, dead),
        }
    }

    fn proof(&self) -> Vec<Site> {
        match self {
            GraphFact::Definition { at, .. } => at.iter().cloned().collect(),
            GraphFact::FanOut { branch, graph, .. } => match branch {
                Some(b) => vec![b.at.clone()],
                None => vec![graph.clone()],
            },
            GraphFact::FanIn {
                branch,
                join,
                graph,
                ..
            } => match (join, branch) {
                (Some((at, _)), _) => vec![at.clone()],
                (None, Some(b)) => vec![b.at.clone()],
                (None, None) => vec![graph.clone()],
            },
            GraphFact::Routes {
                detectives,
                judges,
                elsewhere,
                fixed,
                dead,
                graph,
                ..
            } => {
                let mut v: Vec<Site> = detectives
                    .iter()
                    .chain(judges)
                    .chain(elsewhere)
                    .map(|r| r.at.clone())
                    .collect();
                v.extend(fixed.iter().cloned());
                v.extend(dead.iter().map(|d| d.at.clone()));
                if v.is_empty() {
                    v.push(graph.clone());
                }
                v
            }
        }
    }

    fn fix(&self) -> Option<Fix> {
        if self.holds() {
            return None;
        }
        Some(match self {
            GraphFact::Definition { .. } => Fix::anywhere(
                "build the graph with `StateGraph(AgentState)`: add the detectives, the aggregator, the judges and the Chief Justice with `add_node`, wire them with `add_edge`, and `compile()` it",
            ),
            GraphFact::FanOut { layer, graph, .. } => Fix::at(
                graph,
                match layer {
                    Layer::Detectives => {
                        "add one edge from the node before the detectives (or START) to each detective, so they run in the same superstep"
                    }
                    Layer::Judges => {
                        "add one edge from the evidence aggregator to each of the three judges, so they run in the same superstep on the same evidence"
                    }
                },
            ),
            GraphFact::FanIn {
                layer,
                branch,
                graph,
                ..
            } => match branch {
                Some(b) => Fix::at(
                    &b.at,
                    format!(
                        "join the branches of `{}` at one node that runs once all of them are done: `add_edge([{}], <{}>)`",
                        b.from,
                        b.branches
                            .iter()
                            .map(|n| format!("\"{n}\""))
                            .collect::<Vec<_>>()
                            .join(", "),
                        match layer {
                            Layer::Detectives => "the evidence aggregator",
                            Layer::Judges => "the Chief Justice",
                        }
                    ),
                ),
                None => Fix::at(
                    graph,
                    format!(
                        "fan the {} out first, then join their branches at one node",
                        layer.noun()
                    ),
                ),
            },
            GraphFact::Routes {
                detectives,
                judges,
                dead,
                detectives_join,
                judges_join,
                graph,
                ..
            } => {
                let mut parts: Vec<String> = Vec::new();
                let mut at: Option<Site> = None;
                let dead_layers = dead_without_route(detectives, judges, dead);
                for d in &dead_layers {
                    at.get_or_insert(d.at.clone());
                    parts.push(format!(
                        "the route `{}` -> `{}` at {} can never be taken: have its router test what a node before it writes into a declared key",
                        d.source, d.target, d.at
                    ));
                }
                let fixed_there = |layer| dead_layers.iter().any(|d| d.layer == Some(layer));
                if detectives.is_empty() && !fixed_there(Layer::Detectives) {
                    let (site, change) = detectives_route_fix(detectives_join, graph);
                    at.get_or_insert(site);
                    parts.push(change);
                }
                if judges.is_empty() && !fixed_there(Layer::Judges) {
                    let (site, change) = judges_route_fix(judges_join, graph);
                    at.get_or_insert(site);
                    parts.push(change);
                }
                Fix {
                    at,
                    change: parts.join("; "),
                }
            }
        })
    }
}

/// A graph fact filed under `key` that holds or not, for the tests of the readers.
#[cfg(test)]
pub fn example(key: &str, holds: bool) -> GraphFact {
    let at = Site::new("src/graph.py", 10);
    let branch = Branch {
        at: at.clone(),
        from: "a".into(),
        branches: vec!["b".into(), "c".into()],
    };
    let route = Route {
        at: at.clone(),
        source: "agg".into(),
        router: "route".into(),
        outcomes: vec![vec!["b".into()], vec!["end".into()]],
    };
    let layer = |k: &str| {
        if k.starts_with("judges") {
            Layer::Judges
        } else {
            Layer::Detectives
        }
    };
    match key {
        "definition" => GraphFact::Definition {
            at: holds.then(|| at.clone()),
            state_type: Some("AgentState".into()),
            builder: "builder".into(),
            nodes: 8,
            edges: 10,
            conditional_edges: 2,
            conditional: 1,
            graphs: 1,
            files: 3,
        },
        "detectives_fan_out" | "judges_fan_out" => GraphFact::FanOut {
            layer: layer(key),
            branch: holds.then(|| branch.clone()),
            graph: at.clone(),
        },
        "evidence_fan_in" | "judges_fan_in" => GraphFact::FanIn {
            layer: layer(key),
            branch: Some(branch.clone()),
            join: holds.then(|| (at.clone(), "join".to_string())),
            graph: at.clone(),
        },
        // "error_edges" holding: a route after each layer; not: none at all
        _ => GraphFact::Routes {
            detectives: if holds { vec![route.clone()] } else { vec![] },
            judges: if holds { vec![route] } else { vec![] },
            elsewhere: vec![],
            fixed: vec![],
            dead: vec![],
            detectives_join: Some((at.clone(), "agg".into())),
            judges_join: Some((at.clone(), "cj".into())),
            graph: at,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_that_can_never_be_taken_is_the_fix_not_a_new_edge() {
        let mut f = example("error_edges", false);
        if let GraphFact::Routes { dead, .. } = &mut f {
            dead.push(DeadRoute {
                at: Site::new("src/graph.py", 102),
                source: "agg".into(),
                target: "error_handler".into(),
                layer: Some(Layer::Detectives),
                why: "its guard reads a key nothing sets".into(),
            });
        }
        let fix = f.fix().expect("a fix").line();
        assert!(
            fix.contains(
                "the route `agg` -> `error_handler` at src/graph.py:102 can never be taken"
            ) && !fix.contains("replace the plain edges out of"),
            "{fix}"
        );
        // the judges' layer has no route at all: a new conditional edge is the fix there
        assert!(
            fix.contains(
                "add a conditional edge between the judges and the verdict (the judges join at `cj`)"
            ),
            "{fix}"
        );
    }
}
