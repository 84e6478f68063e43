//! Name resolution across the repository and static evaluation of [`Expr`]s: imports and
//! aliases (`from langgraph.graph import StateGraph as SG`), module and class constants
//! (also imported ones), loop variables, `START`/`END`/`"__start__"`, `Send(...)`, function
//! references and their return statements.

use super::expr::Expr;
use super::syntax::{FuncInfo, LoopCtx, ModuleInfo};
use std::collections::HashMap;

/// Most evaluation environments produced for one call by nested loops.
const MAX_ENVS: usize = 256;
/// Deepest recursion through constants and router functions.
const MAX_EVAL_DEPTH: usize = 12;

/// A statically known value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Str(String),
    Start,
    End,
    /// A reference to a function (LangGraph uses its `__name__` as node name).
    Func(String),
    List(Vec<Val>),
    Dict(Vec<(Val, Val)>),
    /// `Send("node", state)`.
    Send(Box<Val>),
    /// Any one of these (conditional expressions, several assignments).
    Alt(Vec<Val>),
    Bool(bool),
    Unknown(String),
}

impl Val {
    /// Node names this value denotes, as spelt in the code (`START`/`END` for the constants).
    /// Returns `Err(text)` for the parts that are not statically known.
    pub fn node_names(&self, out: &mut Vec<String>, unknown: &mut Vec<String>) {
        match self {
            Val::Str(s) => out.push(s.clone()),
            Val::Start => out.push("START".into()),
            Val::End => out.push("END".into()),
            Val::Func(f) => out.push(f.clone()),
            Val::List(items) | Val::Alt(items) => {
                for i in items {
                    i.node_names(out, unknown);
                }
            }
            Val::Send(v) => v.node_names(out, unknown),
            Val::Dict(pairs) => {
                for (_, v) in pairs {
                    v.node_names(out, unknown);
                }
            }
            Val::Bool(b) => unknown.push(b.to_string()),
            Val::Unknown(t) => unknown.push(t.clone()),
        }
    }

    /// Items when iterated (`for x in val`).
    pub fn iterate(&self) -> Option<Vec<Val>> {
        match self {
            Val::List(items) => Some(items.clone()),
            Val::Dict(pairs) => Some(pairs.iter().map(|(k, _)| k.clone()).collect()),
            _ => None,
        }
    }
}

/// Loop and comprehension bindings in effect while evaluating.
pub type Env = Vec<(String, Val)>;

/// Where an expression is evaluated: module `m`, loop bindings `env`, enclosing function
/// `func`, at depth `d` (the parts of [`Repo::eval`]'s arguments its steps pass on).
#[derive(Clone, Copy)]
struct At<'a> {
    m: usize,
    env: &'a Env,
    func: Option<&'a FuncInfo>,
    d: usize,
}

/// The repository's modules plus indexes for cross-module lookups.
pub struct Repo<'a> {
    pub modules: &'a [ModuleInfo],
    by_module: HashMap<&'a str, usize>,
    /// Every dotted suffix of every module name (`nodes.judges`, `judges`) → modules.
    by_suffix: HashMap<&'a str, Vec<usize>>,
    funcs_by_name: HashMap<&'a str, Vec<(usize, usize)>>,
}

impl<'a> Repo<'a> {
    pub fn new(modules: &'a [ModuleInfo]) -> Self {
        let mut by_module = HashMap::new();
        let mut funcs_by_name: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
        let mut by_suffix: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, m) in modules.iter().enumerate() {
            by_module.insert(m.module.as_str(), i);
            let name = m.module.as_str();
            for (pos, _) in name.match_indices('.') {
                by_suffix.entry(&name[pos + 1..]).or_default().push(i);
            }
            for (j, f) in m.functions.iter().enumerate() {
                funcs_by_name
                    .entry(f.name.as_str())
                    .or_default()
                    .push((i, j));
            }
        }
        Repo {
            modules,
            by_module,
            by_suffix,
            funcs_by_name,
        }
    }

    /// Qualified name of a dotted local name: the first segment goes through the imports.
    pub fn qualify(&self, m: usize, dotted: &str) -> String {
        let module = &self.modules[m];
        let (head, rest) = match dotted.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (dotted, None),
        };
        let base = module
            .imports
            .get(head)
            .cloned()
            .unwrap_or_else(|| head.to_string());
        match rest {
            Some(r) => format!("{base}.{r}"),
            None => base,
        }
    }

    /// The last segment of `dotted`'s qualified name in module `m` (`system` for `os.system`,
    /// and for `sh` after `from os import system as sh`), without building that name.
    pub fn last_segment<'s>(&'s self, m: usize, dotted: &'s str) -> &'s str {
        match dotted.rsplit_once('.') {
            Some((_, last)) => last,
            None => {
                let base = self.modules[m]
                    .imports
                    .get(dotted)
                    .map_or(dotted, String::as_str);
                base.rsplit('.').next().unwrap_or(base)
            }
        }
    }

    /// Is `dotted` (as written in module `m`) the library name `target` (e.g.
    /// `langgraph.graph.StateGraph`)? Accepts the bare name when it is not imported at all
    /// (star imports, notebooks turned into modules), and any module path ending in the
    /// same attribute from the same top-level package.
    pub fn is(&self, m: usize, dotted: &str, targets: &[&str]) -> bool {
        // Every match below ends with the target's last segment: reject the rest without
        // building the qualified name (this runs for every call of the repository).
        let q_last = self.last_segment(m, dotted);
        if !targets
            .iter()
            .any(|t| t.rsplit('.').next().unwrap_or(t) == q_last)
        {
            return false;
        }
        let q = self.qualify(m, dotted);
        targets.iter().any(|t| {
            if q == *t {
                return true;
            }
            let (t_pkg, t_name) = match t.rsplit_once('.') {
                Some(x) => x,
                None => return q == *t,
            };
            let top = t_pkg.split('.').next().unwrap_or(t_pkg);
            match q.rsplit_once('.') {
                Some((q_pkg, q_name)) => q_name == t_name && q_pkg.split('.').next() == Some(top),
                None => {
                    q == t_name
                        && !self.defines(m, &q)
                        && self.modules[m]
                            .imports
                            .iter()
                            .any(|(k, v)| k.starts_with('*') && v.split('.').next() == Some(top))
                }
            }
        })
    }

    /// Whether module `m` itself defines `name` (function, class or constant).
    fn defines(&self, m: usize, name: &str) -> bool {
        let module = &self.modules[m];
        module.constants.contains_key(name)
            || module.functions.iter().any(|f| f.name == name)
            || module.classes.iter().any(|c| c.name == name)
    }

    /// The module a qualified module path names (exact, then suffix match either way).
    pub fn find_module(&self, path: &str) -> Option<usize> {
        if let Some(i) = self.by_module.get(path) {
            return Some(*i);
        }
        // a module whose name ends with `.path`
        let mut found: Option<usize> = match self.by_suffix.get(path).map(Vec::as_slice) {
            Some([one]) => Some(*one),
            Some(_) => return None,
            None => None,
        };
        // `path` ends with `.module` (the import names a package prefix we don't have)
        for (pos, _) in path.match_indices('.') {
            if let Some(i) = self.by_module.get(&path[pos + 1..]) {
                if found.is_some_and(|f| f != *i) {
                    return None;
                }
                found = Some(*i);
                break;
            }
        }
        found
    }

    /// Looks up a constant visible in module `m` under the dotted name (local, class-level,
    /// or imported from another module of the repository).
    pub fn constant(&self, m: usize, dotted: &str) -> Option<(usize, &'a Expr)> {
        let module = &self.modules[m];
        if let Some(e) = module.constants.get(dotted) {
            return Some((m, e));
        }
        let q = self.qualify(m, dotted);
        let mut parts: Vec<&str> = q.split('.').collect();
        // Try `pkg.mod.NAME` and `pkg.mod.Class.NAME`.
        for take in [1usize, 2] {
            if parts.len() <= take {
                continue;
            }
            let name = parts[parts.len() - take..].join(".");
            let modpath = parts[..parts.len() - take].join(".");
            if let Some(i) = self.find_module(&modpath)
                && let Some(e) = self.modules[i].constants.get(&name)
            {
                return Some((i, e));
            }
        }
        // A class constant of a class defined elsewhere and imported by name.
        if parts.len() == 2 {
            let class_q = self.qualify(m, parts[0]);
            if let Some((modpath, class)) = class_q.rsplit_once('.')
                && let Some(i) = self.find_module(modpath)
                && let Some(e) = self.modules[i]
                    .constants
                    .get(&format!("{class}.{}", parts[1]))
            {
                return Some((i, e));
            }
        }
        parts.clear();
        None
    }

    /// Looks up a function visible in module `m` (local, imported, or unique in the repo).
    pub fn function(&self, m: usize, dotted: &str) -> Option<(usize, &'a FuncInfo)> {
        let module = &self.modules[m];
        if !dotted.contains('.')
            && let Some(f) = module.function(dotted)
        {
            return Some((m, f));
        }
        let q = self.qualify(m, dotted);
        if let Some((modpath, name)) = q.rsplit_once('.') {
            if let Some(i) = self.find_module(modpath)
                && let Some(f) = self.modules[i].function(name)
            {
                return Some((i, f));
            }
            // `self.route` / `obj.route`: a method name defined in this module.
            if let Some(f) = module.function(name) {
                return Some((m, f));
            }
        }
        let name = q.rsplit('.').next().unwrap_or(&q);
        match self.funcs_by_name.get(name).map(Vec::as_slice) {
            Some([(i, j)]) => Some((*i, &self.modules[*i].functions[*j])),
            _ => None,
        }
    }

    /// Evaluates an expression in module `m` with loop bindings `env`, inside function `func`
    /// (for its locals), to a static value.
    pub fn eval(
        &self,
        m: usize,
        e: &Expr,
        env: &Env,
        func: Option<&FuncInfo>,
        depth: usize,
    ) -> Val {
        if depth > MAX_EVAL_DEPTH {
            return Val::Unknown(e.render());
        }
        let d = depth + 1;
        match e {
            Expr::Str { value, fstring } => {
                if *fstring {
                    Val::Unknown(e.render())
                } else if value == "__start__" {
                    Val::Start
                } else if value == "__end__" {
                    Val::End
                } else {
                    Val::Str(value.clone())
                }
            }
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Name(n) => self.eval_name(m, n, env, func, d),
            Expr::Attr(obj, attr) => {
                if attr == "value" || attr == "name" {
                    // `Nodes.REPO.value` (enum members)
                    let inner = self.eval(m, obj, env, func, d);
                    if !matches!(inner, Val::Unknown(_)) {
                        return inner;
                    }
                }
                match e.dotted() {
                    Some(dotted) => self.eval_dotted(m, &dotted, env, d),
                    None => Val::Unknown(e.render()),
                }
            }
            Expr::List(items) => Val::List(
                items
                    .iter()
                    .map(|i| self.eval(m, i, env, func, d))
                    .collect(),
            ),
            Expr::Dict(pairs) => Val::Dict(
                pairs
                    .iter()
                    .map(|(k, v)| (self.eval(m, k, env, func, d), self.eval(m, v, env, func, d)))
                    .collect(),
            ),
            Expr::Alt(alts) => {
                Val::Alt(alts.iter().map(|a| self.eval(m, a, env, func, d)).collect())
            }
            Expr::BinOp { op, left, right } if op == "+" => {
                match (
                    self.eval(m, left, env, func, d),
                    self.eval(m, right, env, func, d),
                ) {
                    (Val::List(mut a), Val::List(b)) => {
                        a.extend(b);
                        Val::List(a)
                    }
                    (Val::Str(a), Val::Str(b)) => Val::Str(a + &b),
                    _ => Val::Unknown(e.render()),
                }
            }
            Expr::Comp { elt, vars, iter } => {
                self.eval_comp(At { m, env, func, d }, elt, vars, iter)
            }
            Expr::Call { func: f, args, .. } => self.eval_call(At { m, env, func, d }, e, f, args),
            _ => Val::Unknown(e.render()),
        }
    }

    /// A name: a loop binding, else a local of `func` (all its assigned values, and what is
    /// appended to it), else a module-level name.
    fn eval_name(&self, m: usize, n: &str, env: &Env, func: Option<&FuncInfo>, d: usize) -> Val {
        if let Some((_, v)) = env.iter().rev().find(|(k, _)| k == n) {
            return v.clone();
        }
        let Some((f, vals)) = func.and_then(|f| Some((f, f.locals.get(n)?))) else {
            return self.eval_dotted(m, n, env, d);
        };
        // Other locals are visible in the assigned values (`paths = [entry, END]`); the name
        // itself is not (`x = x + [...]` stays unknown, no recursion).
        let mut inner = env.clone();
        inner.push((n.to_string(), Val::Unknown(n.to_string())));
        let mut alts: Vec<Val> = vals
            .iter()
            .map(|v| self.eval(m, v, &inner, Some(f), d))
            .collect();
        if let Some(extra) = f.appends.get(n) {
            let extra: Vec<Val> = extra
                .iter()
                .map(|v| self.eval(m, v, env, Some(f), d))
                .collect();
            let mut items = Vec::new();
            for a in &alts {
                if let Val::List(l) = a {
                    items.extend(l.iter().cloned());
                }
            }
            items.extend(extra);
            return Val::List(items);
        }
        if alts.len() == 1 {
            alts.remove(0)
        } else {
            Val::Alt(alts)
        }
    }

    /// `[elt for vars in iter]`: one element per item when the iteration is known; otherwise
    /// the element's shape (e.g. `Send("judge", x)`), twice.
    fn eval_comp(&self, at: At<'_>, elt: &Expr, vars: &[String], iter: &Expr) -> Val {
        let At { m, env, func, d } = at;
        let it = self.eval(m, iter, env, func, d);
        match it.iterate() {
            Some(items) => {
                let mut out = Vec::new();
                for item in items {
                    let mut env2 = env.clone();
                    bind(&mut env2, vars, item);
                    out.push(self.eval(m, elt, &env2, func, d));
                }
                Val::List(out)
            }
            None => {
                let mut env2 = env.clone();
                for v in vars {
                    env2.push((v.clone(), Val::Unknown(v.clone())));
                }
                let one = self.eval(m, elt, &env2, func, d);
                Val::List(vec![one.clone(), one])
            }
        }
    }

    /// A call `e` of `f` with `args`: LangGraph's `Send`, a dict's `items`, `keys`, `values`,
    /// and the builtins that rebuild a sequence; anything else is unknown.
    fn eval_call(&self, at: At<'_>, e: &Expr, f: &Expr, args: &[Expr]) -> Val {
        let At { m, env, func, d } = at;
        let callee = f.dotted().unwrap_or_default();
        if self.is(
            m,
            &callee,
            &["langgraph.types.Send", "langgraph.constants.Send"],
        ) {
            let target = args
                .first()
                .map(|a| self.eval(m, a, env, func, d))
                .unwrap_or(Val::Unknown("Send()".into()));
            return Val::Send(Box::new(target));
        }
        if let Expr::Attr(obj, method) = f
            && let Val::Dict(pairs) = self.eval(m, obj, env, func, d)
        {
            match method.as_str() {
                "items" => {
                    return Val::List(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Val::List(vec![k, v]))
                            .collect(),
                    );
                }
                "keys" => return Val::List(pairs.into_iter().map(|(k, _)| k).collect()),
                "values" => return Val::List(pairs.into_iter().map(|(_, v)| v).collect()),
                _ => {}
            }
        }
        let arg = |i: usize| self.eval(m, &args[i], env, func, d);
        match callee.as_str() {
            "list" | "tuple" | "sorted" | "set" if args.len() == 1 => {
                let v = arg(0);
                match v.iterate() {
                    Some(items) => Val::List(items),
                    None => v,
                }
            }
            "enumerate" if args.len() == 1 => match arg(0).iterate() {
                Some(items) => Val::List(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| Val::List(vec![Val::Str(i.to_string()), x]))
                        .collect(),
                ),
                None => Val::Unknown(e.render()),
            },
            "zip" if args.len() >= 2 => {
                let cols: Vec<Option<Vec<Val>>> =
                    (0..args.len()).map(|i| arg(i).iterate()).collect();
                if cols.iter().any(Option::is_none) {
                    return Val::Unknown(e.render());
                }
                let cols: Vec<Vec<Val>> = cols.into_iter().flatten().collect();
                let n = cols.iter().map(Vec::len).min().unwrap_or(0);
                Val::List(
                    (0..n)
                        .map(|i| Val::List(cols.iter().map(|c| c[i].clone()).collect()))
                        .collect(),
                )
            }
            _ => Val::Unknown(e.render()),
        }
    }

    fn eval_dotted(&self, m: usize, dotted: &str, env: &Env, depth: usize) -> Val {
        if self.is(
            m,
            dotted,
            &["langgraph.graph.START", "langgraph.constants.START"],
        ) {
            return Val::Start;
        }
        if self.is(
            m,
            dotted,
            &["langgraph.graph.END", "langgraph.constants.END"],
        ) {
            return Val::End;
        }
        if let Some((i, e)) = self.constant(m, dotted) {
            return self.eval(i, e, env, None, depth + 1);
        }
        if let Some((_, f)) = self.function(m, dotted) {
            return Val::Func(f.name.clone());
        }
        Val::Unknown(dotted.to_string())
    }

    /// Every binding environment for a call nested in `loops` (outermost first), capped.
    /// `func`: the function the loops sit in, whose locals they may iterate over (a list built
    /// by literals and `.append`s).
    pub fn loop_envs(&self, m: usize, loops: &[LoopCtx], func: Option<&FuncInfo>) -> Vec<Env> {
        let mut envs: Vec<Env> = vec![Vec::new()];
        for l in loops {
            let mut next = Vec::new();
            for env in &envs {
                let it = self.eval(m, &l.iter, env, func, 0);
                match it.iterate() {
                    Some(items) if !items.is_empty() => {
                        for item in items {
                            let mut e2 = env.clone();
                            bind(&mut e2, &l.vars, item);
                            next.push(e2);
                            if next.len() >= MAX_ENVS {
                                break;
                            }
                        }
                    }
                    _ => {
                        let mut e2 = env.clone();
                        for v in &l.vars {
                            e2.push((
                                v.clone(),
                                Val::Unknown(format!("{v} (loop over {})", l.iter.render())),
                            ));
                        }
                        next.push(e2);
                    }
                }
            }
            envs = next;
        }
        envs
    }

    /// What a router function can return, evaluated: every `return` value.
    pub fn router_returns(&self, m: usize, name: &str) -> Option<(usize, &'a FuncInfo, Vec<Val>)> {
        let (i, f) = self.function(m, name)?;
        let vals = f
            .returns
            .iter()
            .map(|r| self.eval(i, r, &Vec::new(), Some(f), 0))
            .collect();
        Some((i, f, vals))
    }
}

/// Binds loop variables to an item (tuple unpacking when there are several names).
fn bind(env: &mut Env, vars: &[String], item: Val) {
    if vars.len() == 1 {
        env.push((vars[0].clone(), item));
        return;
    }
    match item {
        Val::List(parts) if parts.len() == vars.len() => {
            for (v, p) in vars.iter().zip(parts) {
                env.push((v.clone(), p));
            }
        }
        other => {
            for v in vars {
                env.push((v.clone(), Val::Unknown(format!("{v} from {other:?}"))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    fn modules(files: &[(&str, &str)]) -> Vec<ModuleInfo> {
        files
            .iter()
            .map(|(p, s)| parse_module(p, s.to_string()).unwrap())
            .collect()
    }

    #[test]
    fn constants_resolve_across_modules_and_classes() {
        let ms = modules(&[
            (
                "src/names.py",
                "REPO = 'repo_investigator'\nclass N:\n    DOC = 'doc_analyst'\nALL = [REPO, N.DOC]\n",
            ),
            ("src/graph.py", "from src.names import ALL, REPO as R, N\n"),
        ]);
        let repo = Repo::new(&ms);
        let v = repo.eval(1, &Expr::Name("ALL".into()), &Vec::new(), None, 0);
        assert_eq!(
            v,
            Val::List(vec![
                Val::Str("repo_investigator".into()),
                Val::Str("doc_analyst".into())
            ])
        );
        let v = repo.eval(1, &Expr::Name("R".into()), &Vec::new(), None, 0);
        assert_eq!(v, Val::Str("repo_investigator".into()));
        let n = Expr::Attr(Box::new(Expr::Name("N".into())), "DOC".into());
        assert_eq!(
            repo.eval(1, &n, &Vec::new(), None, 0),
            Val::Str("doc_analyst".into())
        );
    }

    #[test]
    fn start_end_by_alias_and_string() {
        let ms = modules(&[(
            "g.py",
            "from langgraph.graph import START as S, END\nfrom langgraph import graph as lg\n",
        )]);
        let repo = Repo::new(&ms);
        let ev = |e: Expr| repo.eval(0, &e, &Vec::new(), None, 0);
        assert_eq!(ev(Expr::Name("S".into())), Val::Start);
        assert_eq!(ev(Expr::Name("END".into())), Val::End);
        assert_eq!(
            ev(Expr::Attr(Box::new(Expr::Name("lg".into())), "END".into())),
            Val::End
        );
        assert_eq!(
            ev(Expr::Str {
                value: "__start__".into(),
                fstring: false
            }),
            Val::Start
        );
    }

    #[test]
    fn a_local_definition_named_like_a_library_symbol_is_not_that_symbol() {
        let ms = modules(&[("g.py", "def StateGraph(x):\n    return x\n")]);
        let repo = Repo::new(&ms);
        assert!(!repo.is(0, "StateGraph", &["langgraph.graph.StateGraph"]));
        let ms = modules(&[("g.py", "from langgraph.graph import *\n")]);
        let repo = Repo::new(&ms);
        assert!(repo.is(0, "StateGraph", &["langgraph.graph.StateGraph"]));
    }
}
