//! The graph's input: what the repository's invocations of the compiled graph pass to it.
//!
//! An invocation is a call of `invoke`, `ainvoke`, `stream` or `astream` whose receiver is the
//! compiled graph: a value made by `.compile()` on the graph's builder (or on a call of the
//! function that builds it), followed through locals, module names, imports, `self.` attributes
//! and the returns of repository functions. Which calls are the graph's is decided by where
//! their receiver comes from, never by the names of the keys they pass (a tool's or a chain's
//! `.invoke({...})` is not the graph's input).
//!
//! The input is known only when every invocation of the graph passes a literal dict (written in
//! the call, or a local of the calling function assigned once from a dict literal and never
//! changed by key): one invocation whose argument cannot be read makes the input unknown, and
//! callers then assume that any declared key may be given.

use super::effects;
use super::expr::Expr;
use super::graph::GraphFacts;
use super::names::Repo;
use super::syntax::{CallInfo, FuncInfo, ModuleInfo};
use std::collections::{BTreeMap, BTreeSet};

/// Deepest chain of names, calls and attributes followed to a `.compile()`.
const MAX_DEPTH: usize = 6;

/// The graph's invocations and the literal dict each one passes (`None`: not a readable
/// literal dict).
fn invocations<'r>(repo: &Repo<'r>, g: &GraphFacts) -> Vec<Option<&'r Expr>> {
    graph_calls(repo, g)
        .into_iter()
        .map(|(module, c)| input_dict(module, c))
        .collect()
}

/// The calls that invoke or stream the compiled graph `g` (their receiver traced back to its
/// `.compile()`), with their module.
fn graph_calls<'r>(repo: &Repo<'r>, g: &GraphFacts) -> Vec<(&'r ModuleInfo, &'r CallInfo)> {
    let mut out = Vec::new();
    for (m, module) in repo.modules.iter().enumerate() {
        for c in &module.calls {
            if !matches!(
                c.method.as_str(),
                "invoke" | "ainvoke" | "stream" | "astream"
            ) {
                continue;
            }
            let Some(receiver) = c.receiver.as_deref().and_then(receiver_expr) else {
                continue;
            };
            let func = c.func.and_then(|f| module.functions.get(f));
            if compiles(repo, g, m, func, &receiver, 0) {
                out.push((module, c));
            }
        }
    }
    out
}

/// The receiver's text as an expression: a dotted name, or a call of one without arguments
/// (`build_graph().invoke(...)`).
fn receiver_expr(text: &str) -> Option<Expr> {
    let t = text.trim();
    let dotted = |s: &str| -> Option<Expr> {
        let mut parts = s.split('.');
        let first = parts.next()?;
        let ok = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !ok(first) {
            return None;
        }
        let mut e = Expr::Name(first.to_string());
        for p in parts {
            if !ok(p) {
                return None;
            }
            e = Expr::Attr(Box::new(e), p.to_string());
        }
        Some(e)
    };
    match t.strip_suffix("()") {
        Some(callee) => Some(Expr::Call {
            func: Box::new(dotted(callee)?),
            args: Vec::new(),
            kwargs: Vec::new(),
        }),
        None => dotted(t),
    }
}

/// Whether `e`, evaluated in module `m` (inside `func`), is the graph `g` compiled.
fn compiles(
    repo: &Repo<'_>,
    g: &GraphFacts,
    m: usize,
    func: Option<&FuncInfo>,
    e: &Expr,
    depth: usize,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let d = depth + 1;
    let module = &repo.modules[m];
    match e {
        Expr::Call { func: callee, .. } => match callee.as_ref() {
            Expr::Attr(target, method) if method == "compile" => {
                is_builder(repo, g, m, func, target, d)
            }
            // a repository function that returns the compiled graph
            other => {
                let Some(name) = other.dotted() else {
                    return false;
                };
                let Some((fm, f)) = repo.function(m, &name) else {
                    return false;
                };
                f.returns
                    .iter()
                    .any(|r| compiles(repo, g, fm, Some(f), r, d))
            }
        },
        Expr::Name(n) => {
            if let Some(f) = func
                && let Some(values) = f.locals.get(n)
            {
                return values.iter().any(|v| compiles(repo, g, m, func, v, d));
            }
            if let Some(v) = module.constants.get(n) {
                return compiles(repo, g, m, None, v, d);
            }
            // imported from another module of the repository
            repo.constant(m, n)
                .is_some_and(|(cm, v)| cm != m && compiles(repo, g, cm, None, v, d))
        }
        // `self.app`: an attribute some method of the module assigns
        Expr::Attr(obj, attr) if matches!(obj.as_ref(), Expr::Name(s) if s == "self") => {
            let target = format!("self.{attr}");
            module.functions.iter().any(|f| {
                f.attributes
                    .iter()
                    .any(|(t, v, _)| *t == target && compiles(repo, g, m, Some(f), v, d))
            })
        }
        _ => false,
    }
}

/// Whether `e` (the receiver of a `.compile()`) is the builder of `g`: its variable in the
/// scope that builds `g`, or a call of the repository function that builds `g`.
fn is_builder(
    repo: &Repo<'_>,
    g: &GraphFacts,
    m: usize,
    func: Option<&FuncInfo>,
    e: &Expr,
    depth: usize,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let module = &repo.modules[m];
    let builds_g = |path: &str, f: Option<&FuncInfo>| -> bool {
        path == g.path
            && match f {
                Some(f) => f.line <= g.line && g.line <= f.end_line,
                None => !repo.modules[m]
                    .functions
                    .iter()
                    .any(|f| f.line <= g.line && g.line <= f.end_line),
            }
    };
    match e {
        Expr::Name(n) if *n == g.builder => builds_g(&module.path, func),
        Expr::Attr(..) if e.dotted().as_deref() == Some(g.builder.as_str()) => {
            // `self.graph.compile()` in a method: the class whose method builds `g`
            module.path == g.path
        }
        Expr::Name(n) => {
            // a local bound to a call of the building function (`b = build(); b.compile()`)
            func.and_then(|f| f.locals.get(n)).is_some_and(|values| {
                values
                    .iter()
                    .any(|v| is_builder(repo, g, m, func, v, depth + 1))
            })
        }
        Expr::Call { func: callee, .. } => {
            let Some(name) = callee.dotted() else {
                return false;
            };
            repo.function(m, &name).is_some_and(|(fm, f)| {
                let path = &repo.modules[fm].path;
                builds_g(path, Some(f))
                    && f.returns
                        .iter()
                        .any(|r| matches!(r, Expr::Name(n) if *n == g.builder))
            })
        }
        _ => false,
    }
}

/// The literal dict a call's first argument is: written in the call, or a local of the calling
/// function assigned once from a dict literal and never changed by key afterwards
/// (`initial = {...}; graph.invoke(initial)`).
fn input_dict<'m>(m: &'m ModuleInfo, c: &'m CallInfo) -> Option<&'m Expr> {
    match c.args.first()? {
        d @ Expr::Dict(_) => Some(d),
        Expr::Name(local) => {
            // a local of the calling function, or a module-level name (`if __name__ ...`)
            let (d, lines): (&Expr, Vec<&str>) = match c.func {
                Some(fi) => {
                    let f = m.functions.get(fi)?;
                    let [d @ Expr::Dict(_)] = f.locals.get(local)?.as_slice() else {
                        return None;
                    };
                    let body = m
                        .source
                        .lines()
                        .skip(f.line)
                        .take(f.end_line.saturating_sub(f.line))
                        .collect();
                    (d, body)
                }
                None => {
                    let d @ Expr::Dict(_) = m.constants.get(local)? else {
                        return None;
                    };
                    // assigned once at module level
                    let assigned = regex::Regex::new(&format!(
                        r"^{}\s*(?::[^=]*)?=[^=]",
                        regex::escape(local)
                    ))
                    .ok()?;
                    if m.source
                        .lines()
                        .filter(|l| assigned.is_match(l.trim_start()))
                        .count()
                        != 1
                    {
                        return None;
                    }
                    (d, m.source.lines().collect())
                }
            };
            // `initial["k"] = v`, `initial.update(..)`: keys the literal does not show
            let changed = regex::Regex::new(&format!(
                r"\b{}\s*(?:\[|\.(?:update|setdefault|pop)\()",
                regex::escape(local)
            ))
            .ok()?;
            (!lines.into_iter().any(|l| changed.is_match(l))).then_some(d)
        }
        _ => None,
    }
}

/// Keys some invocation of the graph passes in a literal dict, each with where (`path:line` of
/// the first such invocation), even when other invocations cannot be read.
pub fn passed_somewhere(repo: &Repo<'_>, g: &GraphFacts) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (module, c) in graph_calls(repo, g) {
        if let Some(Expr::Dict(pairs)) = input_dict(module, c) {
            for k in pairs.iter().filter_map(|(k, _)| k.as_str()) {
                out.entry(k.to_string())
                    .or_insert_with(|| format!("{}:{}", module.path, c.line));
            }
        }
    }
    out
}

/// What the graph's invocations pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    /// Every key some invocation passes, with whether its value may hold items (anything but
    /// an empty literal list, dict, tuple or string, or `None`).
    pub keys: BTreeMap<String, bool>,
    /// Keys every invocation passes with one and the same literal value (its text).
    pub literals: BTreeMap<String, String>,
    /// For each key some invocation passes, the keys of the dict literals passed under it
    /// (`None` when some invocation passes anything but a dict literal with literal keys).
    pub dict_keys: BTreeMap<String, Option<BTreeSet<String>>>,
    /// Keys every invocation passes.
    pub always: BTreeSet<String>,
}

/// The graph's input, when it is known: at least one invocation of the graph is seen and each
/// passes a literal dict. `None` otherwise.
pub fn of_graph(repo: &Repo<'_>, g: &GraphFacts) -> Option<Inputs> {
    let dicts: Vec<&Expr> = invocations(repo, g).into_iter().collect::<Option<_>>()?;
    if dicts.is_empty() {
        return None;
    }
    let mut inputs = Inputs::default();
    let mut seen: BTreeMap<String, (usize, Option<String>)> = BTreeMap::new();
    for d in &dicts {
        let Expr::Dict(pairs) = d else { continue };
        for (k, v) in pairs {
            let Some(k) = k.as_str() else {
                // `**other`, a computed key: keys the literal does not show
                return None;
            };
            let empty = match v {
                Expr::List(items) => items.is_empty(),
                Expr::Dict(items) => items.is_empty(),
                Expr::Str { value, .. } => value.is_empty(),
                Expr::None => true,
                _ => false,
            };
            *inputs.keys.entry(k.to_string()).or_insert(false) |= !empty;
            let lit = effects::literal(v);
            let e = seen.entry(k.to_string()).or_insert((0, lit.clone()));
            e.0 += 1;
            if e.1 != lit {
                e.1 = None;
            }
            let sub = match v {
                Expr::Dict(items) => items
                    .iter()
                    .map(|(sk, _)| sk.as_str().map(str::to_string))
                    .collect::<Option<BTreeSet<String>>>(),
                _ => None,
            };
            let entry = inputs
                .dict_keys
                .entry(k.to_string())
                .or_insert_with(|| Some(BTreeSet::new()));
            match (entry.as_mut(), sub) {
                (Some(have), Some(more)) => have.extend(more),
                _ => *entry = None,
            }
        }
    }
    for (k, (count, lit)) in seen {
        // a key some invocation does not pass is not known
        if count != dicts.len() {
            continue;
        }
        if let Some(lit) = lit {
            inputs.literals.insert(k.clone(), lit);
        }
        inputs.always.insert(k);
    }
    Some(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    fn inputs(files: &[(&str, &str)]) -> Option<Inputs> {
        let mods: Vec<ModuleInfo> = files
            .iter()
            .map(|(p, s)| parse_module(p, s.to_string()).expect("parses"))
            .collect();
        let repo = Repo::new(&mods);
        let graphs = crate::repo::python::graph::analyse(&repo);
        of_graph(&repo, graphs.first()?)
    }

    const GRAPH: &str = "from langgraph.graph import StateGraph, START, END\nfrom typing import TypedDict\nclass S(TypedDict):\n    a: str\n    b: dict\ndef n(state):\n    return {}\ndef build():\n    builder = StateGraph(S)\n    builder.add_node('n', n)\n    builder.add_edge(START, 'n')\n    builder.add_edge('n', END)\n    return builder\n";

    #[test]
    fn the_graphs_invocation_is_told_by_its_receiver_not_by_key_names() {
        // a tool's invoke with a literal dict is not the graph's input, whatever its keys
        let src = format!(
            "{GRAPH}def tool_call(tool):\n    return tool.invoke({{'repo_url': 'x', 'pdf_path': 'y'}})\ndef main():\n    app = build().compile()\n    return app.invoke({{'a': 'u', 'b': {{}}}})\n"
        );
        let i = inputs(&[("g.py", &src)]).expect("known");
        assert_eq!(
            i.keys.keys().cloned().collect::<Vec<_>>(),
            vec!["a".to_string(), "b".to_string()]
        );
        assert_eq!(i.dict_keys.get("b"), Some(&Some(BTreeSet::new())));
        assert_eq!(i.dict_keys.get("a"), Some(&None));
        assert_eq!(i.literals.get("a").map(String::as_str), Some("\"u\""));
    }

    #[test]
    fn compiled_graph_followed_through_functions_and_imports() {
        let graph = format!(
            "{GRAPH}def create():\n    graph = build().compile()\n    return graph\napp = create()\n"
        );
        let main =
            "from g import app\ndef run():\n    state = {'a': 'u'}\n    return app.invoke(state)\n";
        let i = inputs(&[("g.py", &graph), ("main.py", main)]).expect("known");
        assert_eq!(i.keys.len(), 1);
        assert!(i.keys.contains_key("a"));
    }

    #[test]
    fn an_invocation_whose_input_cannot_be_read_makes_the_input_unknown() {
        let src = format!(
            "{GRAPH}def main(payload):\n    app = build().compile()\n    app.invoke({{'a': 'u'}})\n    return app.invoke(payload)\n"
        );
        assert_eq!(inputs(&[("g.py", &src)]), None);
        // no invocation at all: unknown too
        assert_eq!(inputs(&[("g.py", GRAPH)]), None);
    }
}
