//! What a node or router function does to the graph's state, read from its source: the keys it
//! reads, the keys its update writes (a returned dict, `Command(update=...)`, or in-place
//! assignments to the state it returns), and whether it returns the whole state.
//!
//! Static and conservative: `known` is false when a return value cannot be read (a helper's
//! result, an object), and callers stay silent on what they cannot decide.
//!
//! Helpers called with the state (`return helper(state)`) are followed two levels deep through
//! a memo ([`Memo`]): each function is read once per depth, so a node with hundreds of such
//! returns costs what its lines cost.

use super::expr::Expr;
use super::names::Repo;
use super::syntax::{FuncInfo, ModuleInfo};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Attribute names of a state object that are methods or pydantic internals, not fields.
const NOT_FIELDS: &[&str] = &[
    "get",
    "copy",
    "update",
    "keys",
    "items",
    "values",
    "setdefault",
    "pop",
    "model_dump",
    "model_copy",
    "dict",
    "json",
    "model_fields",
    "model_fields_set",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effects {
    /// Keys read from the state, with the line of the first read.
    pub reads: BTreeMap<String, usize>,
    /// Keys in the update the function returns, with the line that sets them.
    pub writes: BTreeMap<String, usize>,
    /// Line of a `return state` (the whole incoming state returned as the update).
    pub whole_state: Option<usize>,
    /// Every return value could be read.
    pub known: bool,
    /// Keys whose update re-sends the current value (`{"xs": state["xs"] + [x]}`,
    /// `{"xs": state["xs"]}`): under an appending reducer the list doubles.
    pub resends: BTreeMap<String, usize>,
    /// Keys whose list the function grows in place (`state["xs"].append(x)`, or through a local
    /// bound to it: `xs = state["xs"]; xs.append(x)`) before it re-sends it (see `resends`):
    /// the list then holds items when it is re-sent, whatever it held before.
    pub fills: BTreeMap<String, usize>,
    /// Re-sent keys whose update adds items to the current value (`state["xs"] + [x]`): after
    /// the node the list holds items, although it doubles only when it held some before.
    pub adds: std::collections::BTreeSet<String>,
    /// Keys whose every write is one and the same literal (`{"attempts": 1}`), with its text.
    pub constants: BTreeMap<String, String>,
    /// The keys of `constants` that every return of the function writes, each a plain dict
    /// literal of this function (no helper, no whole-state return): after the node runs, the
    /// key holds that literal whatever path the function took.
    pub settled: BTreeMap<String, String>,
    /// Keys that every return of the function sets to their current value plus one and the
    /// same integer (`{"attempts": state["attempts"] + 1}`), each in a plain dict literal of
    /// this function: after the node runs, the key holds what it held plus that step.
    pub stepped: BTreeMap<String, i64>,
    /// For a key every return of the function writes as a plain dict literal of this function
    /// (see `settled`), the keys of that dict whose value every such write gives as a literal
    /// with items, each of them truthy (`{"info": {"k0": ["n0"]}}`): after the node runs, under
    /// a merging reducer, those keys hold items whatever path the function took.
    pub filled_subs: BTreeMap<String, std::collections::BTreeSet<String>>,
    /// For a written key, the keys of the dict every write of it holds, when each write is a
    /// dict literal with literal keys or a re-send of the key's current value (no new keys):
    /// a `dict` field written only so holds no other keys. A written key missing here, or
    /// mapped to `None`, may hold anything.
    pub dict_writes: BTreeMap<String, Option<std::collections::BTreeSet<String>>>,
    /// Reads of one key of a dict field (`state.get("f", {}).get("k", [])`,
    /// `state["f"]["k"]`, `state.f.get("k")`): (field, key) with the line of the first read.
    pub sub_reads: BTreeMap<(String, String), usize>,
    /// Reads made inside a function called with the state (see `reads`, whose line is then
    /// the call's): where the read itself is, `path:line`.
    pub read_in: BTreeMap<String, String>,
    /// The line of an update written under a key computed at run time (`{key: v}`,
    /// `out[key] = v` on the returned dict, `state[key] = v` before a whole-state return): the
    /// keys the function writes are then not known (`known` is false).
    pub computed_key: Option<usize>,
    /// Some value written under a computed key may be a dict (anything but a list, string or
    /// number literal): it might then put keys into a dict field.
    pub computed_dict: bool,
    /// Every return value could be read apart from the keys computed at run time.
    pub known_but_computed: bool,
}

/// Effects already read, by (module, line of the `def`, depth of helper calls).
pub type Memo = std::collections::HashMap<(usize, usize, usize), Effects>;

/// The first parameter that is not `self`/`cls`, from the `def` line(s).
fn state_param(module: &ModuleInfo, f: &FuncInfo) -> Option<String> {
    let text: String = module
        .source
        .lines()
        .skip(f.line.saturating_sub(1))
        .take(8)
        .collect::<Vec<_>>()
        .join(" ");
    let start = text.find(&format!("{}(", f.name))? + f.name.len() + 1;
    let params = &text[start..];
    let end = params.find(')').unwrap_or(params.len());
    params[..end]
        .split(',')
        .map(|p| {
            p.split([':', '='])
                .next()
                .unwrap_or("")
                .trim()
                .trim_start_matches('*')
        })
        .find(|p| !p.is_empty() && *p != "self" && *p != "cls")
        .map(str::to_string)
}

fn body(module: &ModuleInfo, f: &FuncInfo) -> Vec<(usize, String)> {
    module
        .source
        .lines()
        .enumerate()
        .skip(f.line)
        .take(f.end_line.saturating_sub(f.line))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

/// Whether the body's last statement at its own indentation is a `return` or `raise` (no path
/// falls off the end and returns `None`). A one-line body ends in a return when it is one.
fn ends_in_return(lines: &[(usize, String)]) -> bool {
    let code: Vec<&str> = lines
        .iter()
        .map(|(_, l)| l.as_str())
        .filter(|l| {
            let t = l.trim_start();
            !t.is_empty() && !t.starts_with('#')
        })
        .collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let Some(base) = code.iter().map(|l| indent(l)).min() else {
        return false;
    };
    code.iter()
        .rev()
        .find(|l| indent(l) == base && !l.trim_start().starts_with([')', ']', '}']))
        .is_some_and(|l| {
            let t = l.trim_start();
            t.starts_with("return") || t.starts_with("raise")
        })
}

struct Patterns {
    get: Regex,
    sub: Regex,
    attr: Regex,
    getattr: Regex,
    /// A read of one key of a dict field (see [`Effects::sub_reads`]); group 6 is an
    /// assignment after it (a write, not a read).
    sub_read: Regex,
}

/// The patterns for a parameter name, compiled once per name (almost always `state`).
fn patterns(p: &str) -> std::sync::Arc<Patterns> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Patterns>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() > 64 {
        c.clear();
    }
    c.entry(p.to_string())
        .or_insert_with(|| Arc::new(compile(p)))
        .clone()
}

fn compile(p: &str) -> Patterns {
    let p = regex::escape(p);
    Patterns {
        get: Regex::new(&format!(r#"\b{p}\.get\(\s*["'](\w+)["']"#)).expect("regex"),
        sub: Regex::new(&format!(
            r#"\b{p}\[\s*["'](\w+)["']\s*\](\s*(?:=[^=]|\+=|-=|\|=)|\.(?:append|extend|update)\()?"#
        ))
        .expect("regex"),
        attr: Regex::new(&format!(
            r#"\b{p}\.([A-Za-z_]\w*)\b(\s*(?:=[^=]|\+=|-=|\|=)|\.(?:append|extend|update)\()?(\s*\()?"#
        ))
        .expect("regex"),
        getattr: Regex::new(&format!(r#"getattr\(\s*{p}\s*,\s*["'](\w+)["']"#)).expect("regex"),
        sub_read: Regex::new(&format!(
            r#"\b{p}(?:\.get\(\s*["'](\w+)["']\s*(?:,\s*(?:\{{\}}|dict\(\)|None)\s*)?\)|\[\s*["'](\w+)["']\s*\]|\.([A-Za-z_]\w*))(?:\.get\(\s*["'](\w+)["']|\[\s*["'](\w+)["']\s*\](\s*(?:=[^=]|\+=|\|=))?)"#
        ))
        .expect("regex"),
    }
}

/// Whether byte `pos` of a line sits inside a string literal (quotes scanned left to right,
/// backslash escapes skipped; f-strings and triple quotes approximated).
fn in_string(code: &str, pos: usize) -> bool {
    let mut open: Option<char> = None;
    let mut escaped = false;
    for c in code[..pos].chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (c, open) {
            ('\\', Some(_)) => escaped = true,
            ('"' | '\'', None) => open = Some(c),
            (q, Some(o)) if q == o => open = None,
            _ => {}
        }
    }
    open.is_some()
}

fn return_whole(line: &str, p: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^\s*return\s+(?:dict\()?\{?\s*(?:\*\*)?([A-Za-z_]\w*)").expect("regex")
    });
    re.captures(line).is_some_and(|c| {
        &c[1] == p && {
            let rest = line.trim_start().trim_start_matches("return").trim();
            // `return state`, `return state.copy()`, `return dict(state)`, `return {**state, ...}`
            rest == p
                || rest.starts_with(&format!("{p}.copy("))
                || rest.starts_with(&format!("{p}.model_copy("))
                || rest.starts_with(&format!("dict({p})"))
                || rest.starts_with(&format!("{{**{p}"))
        }
    })
}

/// The effects of function `f` of module `m`, following two levels of helper calls that
/// receive the state (`return helper(state)`).
#[cfg(test)]
pub fn of_function(repo: &Repo<'_>, m: usize, f: &FuncInfo) -> Effects {
    of_function_memo(repo, m, f, &mut Memo::new())
}

/// [`of_function`] through a memo shared by every node and router of a graph.
pub fn of_function_memo(repo: &Repo<'_>, m: usize, f: &FuncInfo, memo: &mut Memo) -> Effects {
    of_function_depth(repo, m, f, 0, memo)
}

fn of_function_depth(
    repo: &Repo<'_>,
    m: usize,
    f: &FuncInfo,
    depth: usize,
    memo: &mut Memo,
) -> Effects {
    if let Some(e) = memo.get(&(m, f.line, depth)) {
        return e.clone();
    }
    let e = read_function(repo, m, f, depth, memo);
    memo.insert((m, f.line, depth), e.clone());
    e
}

/// Reads function `f` of module `m` in named steps: the state's keys its lines read and assign,
/// what the helpers it calls with the state read, what its returns write, in-place writes a
/// whole-state return sends, then what follows from them all (see [`Body::conclude`]).
fn read_function(
    repo: &Repo<'_>,
    m: usize,
    f: &FuncInfo,
    depth: usize,
    memo: &mut Memo,
) -> Effects {
    let module = &repo.modules[m];
    let Some(p) = state_param(module, f) else {
        return Effects::default();
    };
    let b = Body {
        repo,
        m,
        f,
        lines: body(module, f),
        p,
        depth,
    };
    let mut e = Effects {
        known: true,
        ..Effects::default()
    };
    let access = b.accesses(&mut e);
    if depth < 2 {
        b.helper_reads(&mut e, memo);
    }
    let returned = b.returns(&mut e, memo);
    if e.whole_state.is_some() {
        for (k, n) in &access.inplace {
            e.writes.entry(k.clone()).or_insert(*n);
        }
        // `state[key] = v` with a key computed at run time, then the whole state returned
        b.computed_writes(&mut e, &b.p);
    }
    b.conclude(e, returned, &access)
}

/// One function body being read (see [`read_function`]).
struct Body<'b, 'r> {
    repo: &'b Repo<'r>,
    m: usize,
    f: &'b FuncInfo,
    /// The state parameter's name.
    p: String,
    /// The body's lines, numbered from 1.
    lines: Vec<(usize, String)>,
    /// How deep in helper calls with the state this function is read.
    depth: usize,
}

/// The state's keys the lines of a body access in place.
struct Accesses {
    /// Keys assigned or grown in place (`state["k"] = v`, `+= v`, `.append(v)`), with the
    /// first line.
    inplace: BTreeMap<String, usize>,
    /// Keys the function rebinds (`state["k"] = v`): a later `state["k"]` is that new value.
    assigned: std::collections::BTreeSet<String>,
}

/// What the returns of a body send.
struct Returned {
    vals: Values,
    /// Returns that are plain dict literals of this function (for `settled`).
    dict_returns: usize,
}

impl Body<'_, '_> {
    /// The keys each line reads from the state (`state.get("k")`, `getattr(state, "k")`,
    /// `state["f"]["k"]`, `state["k"]`, `state.k`), assigns or grows in place, and a
    /// whole-state return.
    fn accesses(&self, e: &mut Effects) -> Accesses {
        let pats = patterns(&self.p);
        let mut inplace: BTreeMap<String, usize> = BTreeMap::new();
        let mut assigned = std::collections::BTreeSet::new();
        for (n, l) in &self.lines {
            let code = l.split('#').next().unwrap_or("");
            let quoted = |c: &regex::Captures| in_string(code, c.get(0).map_or(0, |x| x.start()));
            for c in pats.get.captures_iter(code) {
                if quoted(&c) {
                    continue;
                }
                e.reads.entry(c[1].to_string()).or_insert(*n);
            }
            for c in pats.getattr.captures_iter(code) {
                if quoted(&c) {
                    continue;
                }
                e.reads.entry(c[1].to_string()).or_insert(*n);
            }
            for c in pats.sub_read.captures_iter(code) {
                if quoted(&c) || c.get(6).is_some() {
                    continue;
                }
                let field = c
                    .get(1)
                    .or(c.get(2))
                    .or(c.get(3))
                    .map_or("", |x| x.as_str());
                let key = c.get(4).or(c.get(5)).map_or("", |x| x.as_str());
                e.sub_reads
                    .entry((field.to_string(), key.to_string()))
                    .or_insert(*n);
            }
            let accesses = (pats.sub.captures_iter(code).map(|c| (c, false)))
                .chain(pats.attr.captures_iter(code).map(|c| (c, true)));
            for (c, attribute) in accesses {
                let key = c[1].to_string();
                let method_or_internal =
                    attribute && (c.get(3).is_some() || NOT_FIELDS.contains(&key.as_str()));
                if quoted(&c) || method_or_internal {
                    continue;
                }
                // `state["k"]` reads; `= v` writes; `+= v`, `.append(v)` read and write
                let assign = c.get(2).map(|w| w.as_str().trim_start().starts_with('='));
                if assign != Some(true) {
                    e.reads.entry(key.clone()).or_insert(*n);
                }
                if assign == Some(true) {
                    assigned.insert(key.clone());
                }
                if assign.is_some() {
                    inplace.entry(key).or_insert(*n);
                }
            }
            if return_whole(code, &self.p) {
                e.whole_state.get_or_insert(*n);
            }
        }
        Accesses { inplace, assigned }
    }

    /// A function called with the state reads what it reads (`report = build(state)`,
    /// `ChiefJustice().synthesize(state)`), whatever becomes of its result.
    fn helper_reads(&self, e: &mut Effects, memo: &mut Memo) {
        let (repo, m, f) = (self.repo, self.m, self.f);
        let module = &repo.modules[m];
        let fi = module.functions.iter().position(|x| x.line == f.line);
        for c in module
            .calls
            .iter()
            .filter(|c| fi.is_some() && c.func == fi)
            .filter(|c| c.args.first() == Some(&Expr::Name(self.p.clone())))
        {
            let Some((hm, h)) = callee(repo, m, f, c) else {
                continue;
            };
            if hm == m && h.line == f.line {
                continue;
            }
            let inner = of_function_depth(repo, hm, h, self.depth + 1, memo);
            read_through(
                e,
                inner.reads,
                &inner.read_in,
                &repo.modules[hm].path,
                c.line,
            );
            for (k, _) in inner.sub_reads {
                e.sub_reads.entry(k).or_insert(c.line);
            }
        }
    }

    /// The line of the first `return` containing `needle`, else the `def` line.
    fn return_line(&self, needle: &str) -> usize {
        self.lines
            .iter()
            .filter(|(_, l)| l.trim_start().starts_with("return"))
            .find(|(_, l)| l.contains(needle))
            .map_or(self.f.line, |(n, _)| *n)
    }

    /// What each return value writes: a dict literal, a local bound to one, a
    /// `Command(update=...)`, `dict(k=v)`, a helper's update; anything else makes the
    /// effects not known.
    fn returns(&self, e: &mut Effects, memo: &mut Memo) -> Returned {
        let p = &self.p;
        let mut vals = Values::default();
        let mut dict_returns = 0usize;
        for r in &self.f.returns {
            match r {
                Expr::Name(n) if n == p => {}
                Expr::Dict(pairs) => {
                    let pairs = unalias(pairs, self.f, p);
                    update(e, &mut vals, &pairs, p, self.return_line("{"));
                    dict_returns += 1;
                }
                Expr::None => {}
                Expr::Name(local) => self.returned_local(e, &mut vals, local),
                Expr::Call { func, args, kwargs } => {
                    self.returned_call(e, &mut vals, func, args, kwargs, memo)
                }
                _ => e.known = false,
            }
        }
        Returned { vals, dict_returns }
    }

    /// A returned local: each value bound to it, and the keys set on it
    /// (`result["key"] = value`).
    fn returned_local(&self, e: &mut Effects, vals: &mut Values, local: &str) {
        let p = &self.p;
        let values = match self.f.locals.get(local).map(Vec::as_slice) {
            Some(values) if !values.is_empty() => values,
            _ => {
                e.known = false;
                return;
            }
        };
        let line = self.return_line(local);
        for v in values {
            match v {
                Expr::Dict(pairs) => {
                    let pairs = unalias(pairs, self.f, p);
                    update(e, vals, &pairs, p, line);
                }
                Expr::Name(n) if n == p => {
                    e.whole_state.get_or_insert(line);
                }
                // `new = dict(state)` / `state.copy()`: a copy of the whole state
                v if copies_state(v, p) => {
                    e.whole_state.get_or_insert(line);
                }
                _ => e.known = false,
            }
        }
        // `result["key"] = value` on the returned local
        let re = Regex::new(&format!(
            r#"\b{}\[\s*["'](\w+)["']\s*\]\s*=[^=]"#,
            regex::escape(local)
        ))
        .expect("regex");
        for (n, l) in &self.lines {
            for c in re.captures_iter(l) {
                e.writes.entry(c[1].to_string()).or_insert(*n);
                vals.subs.insert(c[1].to_string(), None);
            }
        }
        // `result[key] = value` with a key computed at run time
        self.computed_writes(e, local);
    }

    /// Lines that set a key computed at run time on `name` (`name[key] = value`).
    fn computed_writes(&self, e: &mut Effects, name: &str) {
        let computed_re = Regex::new(&format!(
            r#"\b{}\[\s*[^"'\s\]].*?\]\s*=([^=].*)$"#,
            regex::escape(name)
        ))
        .expect("regex");
        for (n, l) in &self.lines {
            if let Some(c) = computed_re.captures(l.split('#').next().unwrap_or("")) {
                e.computed_key.get_or_insert(*n);
                e.computed_dict |= !not_a_dict(&c[1]);
            }
        }
    }

    /// A returned call: `Command(update={...})`, a copy of the state, `dict(k=v)`, or a helper
    /// of the repository called with the state (followed two levels deep).
    fn returned_call(
        &self,
        e: &mut Effects,
        vals: &mut Values,
        func: &Expr,
        args: &[Expr],
        kwargs: &[(String, Expr)],
        memo: &mut Memo,
    ) {
        let p = &self.p;
        let name = func.dotted().unwrap_or_default();
        let last = name.rsplit('.').next().unwrap_or("");
        let state_first = args.first() == Some(&Expr::Name(p.clone()));
        if last == "Command" {
            if let Some((_, Expr::Dict(pairs))) = kwargs.iter().find(|(k, _)| k == "update") {
                update(e, vals, pairs, p, self.return_line("Command"));
            }
        } else if (last == "copy" || last == "model_copy") && name == format!("{p}.{last}")
            || (last == "dict" && state_first)
        {
            // whole state, already seen in the text
        } else if last == "dict" {
            for (k, _) in kwargs {
                e.writes
                    .entry(k.clone())
                    .or_insert(self.return_line("dict("));
                vals.subs.insert(k.clone(), None);
            }
            if !args.is_empty() {
                e.known = false;
            }
        } else if self.depth < 2
            && state_first
            && let Some((hm, h)) = self.repo.function(self.m, &name)
        {
            let inner = of_function_depth(self.repo, hm, h, self.depth + 1, memo);
            self.returned_helper(e, vals, inner, &self.repo.modules[hm].path, last);
        } else {
            e.known = false;
        }
    }

    /// The update a helper returns (its effects `inner`, read in the file at `path`), returned
    /// as this function's own by the call `return last(state)`.
    fn returned_helper(
        &self,
        e: &mut Effects,
        vals: &mut Values,
        inner: Effects,
        path: &str,
        last: &str,
    ) {
        for (k, sub) in inner.dict_writes {
            merge_sub(&mut vals.subs, &k, sub);
        }
        for k in inner.writes.keys() {
            vals.subs.entry(k.clone()).or_insert(None);
        }
        e.sub_reads.extend(inner.sub_reads);
        e.writes.extend(inner.writes);
        read_through(e, inner.reads, &inner.read_in, path, self.return_line(last));
        e.resends.extend(inner.resends);
        e.fills.extend(inner.fills);
        e.adds.extend(inner.adds);
        for (k, c) in inner.constants {
            vals.literal(&k, Some(c));
        }
        if e.whole_state.is_none() && inner.whole_state.is_some() {
            e.whole_state = Some(self.return_line(last));
        }
        e.known &= inner.known;
    }

    /// What follows from the reads and writes found: whether keys computed at run time leave
    /// the update unknown, re-sent and grown lists, constants, the dict keys of each write,
    /// and what every return settles.
    fn conclude(&self, mut e: Effects, returned: Returned, access: &Accesses) -> Effects {
        let Returned { vals, dict_returns } = returned;
        e.known_but_computed = e.known;
        if e.computed_key.is_some() {
            e.known = false;
        }
        // a key rebound before it is returned (`state["k"] = new; return {"k": state["k"]}`)
        // sends the new value, not the one the node received
        e.resends.extend(
            vals.resends
                .into_iter()
                .filter(|(k, _)| !access.assigned.contains(k)),
        );
        e.adds.extend(
            vals.adds
                .into_iter()
                .filter(|k| !access.assigned.contains(k)),
        );
        let fills = self.fills(&e);
        e.fills.extend(fills);
        e.constants = vals
            .literals
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .filter(|(k, _)| e.writes.contains_key(k))
            .collect();
        // dict keys: every write of the key went through a dict literal or a re-send read here
        // (a whole-state return re-sends each key it holds; keys it assigned in place are not
        // read)
        e.dict_writes = e
            .writes
            .keys()
            .map(|k| {
                let sub = match vals.subs.get(k) {
                    Some(sub) => sub.clone(),
                    None if e.whole_state.is_some() && !access.inplace.contains_key(k) => {
                        Some(std::collections::BTreeSet::new())
                    }
                    None => None,
                };
                (k.clone(), sub)
            })
            .collect();
        // a key also written by a helper whose value was not read is not known to be constant
        for k in e.writes.keys() {
            if !vals.seen.contains(k) {
                e.constants.remove(k);
            }
        }
        if e.known
            && e.whole_state.is_none()
            && !self.f.returns.is_empty()
            && dict_returns == self.f.returns.len()
            && ends_in_return(&self.lines)
        {
            let every_return = |k: &String| vals.count.get(k) == Some(&dict_returns);
            e.settled = e
                .constants
                .iter()
                .filter(|(k, _)| every_return(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            e.stepped = vals
                .steps
                .iter()
                .filter_map(|(k, v)| Some((k, (*v)?)))
                .filter(|(k, _)| every_return(k))
                .map(|(k, v)| (k.clone(), v))
                .collect();
            e.filled_subs = vals
                .filled
                .iter()
                .filter(|(k, _)| every_return(k))
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
        }
        e
    }

    /// Lists grown in place before they are re-sent: `state["k"].append(..)`, or through the
    /// local the update re-sends (`xs = state["k"]` ... `xs.append(..)`) (a whole-state return
    /// re-sends every key it holds), with the line that grows each.
    fn fills(&self, e: &Effects) -> Vec<(String, usize)> {
        let (f, p) = (self.f, &self.p);
        let resent: Vec<&String> = if e.whole_state.is_some() {
            e.resends.keys().chain(e.writes.keys()).collect()
        } else {
            e.resends.keys().collect()
        };
        resent
            .into_iter()
            .filter_map(|k| {
                let mut names: Vec<String> = f
                    .locals
                    .iter()
                    .filter(|(_, vs)| {
                        vs.len() == 1
                            && !matches!(vs[0], Expr::BinOp { .. })
                            && reads_own(&vs[0], p, k)
                    })
                    .map(|(l, _)| format!(r"\b{}\b", regex::escape(l)))
                    .collect();
                names.push(format!(
                    r#"\b{}\[\s*["']{}["']\s*\]"#,
                    regex::escape(p),
                    regex::escape(k)
                ));
                let re = Regex::new(&format!(
                    r"(?:{})\s*(?:\.(?:append|extend|insert)\(|\+=)",
                    names.join("|")
                ))
                .ok()?;
                self.lines
                    .iter()
                    .find(|(_, l)| re.is_match(l.split('#').next().unwrap_or("")))
                    .map(|(n, _)| (k.clone(), *n))
            })
            .collect()
    }
}

/// One dict an update sends, at `line`: its keys written, its values read for what they say.
fn update(e: &mut Effects, vals: &mut Values, pairs: &[(Expr, Expr)], p: &str, line: usize) {
    if computed(pairs) {
        e.computed_key.get_or_insert(line);
        e.computed_dict |= computed_dict(pairs);
    }
    dict_keys(pairs, &mut e.writes, line);
    vals.add(pairs, p, line);
}

/// The reads of a helper called at `line` (read in the file at `path`; where the helper's own
/// helpers read, `read_in`), added to `e` as reads of that line, each key's first read kept.
fn read_through(
    e: &mut Effects,
    reads: BTreeMap<String, usize>,
    read_in: &BTreeMap<String, String>,
    path: &str,
    line: usize,
) {
    for (k, l) in reads {
        if e.reads.contains_key(&k) {
            continue;
        }
        let at = read_in
            .get(&k)
            .cloned()
            .unwrap_or_else(|| format!("{path}:{l}"));
        e.read_in.insert(k.clone(), at);
        e.reads.insert(k, line);
    }
}

/// What a node does when its function runs inside a wrapper (see
/// [`super::graph::Action::Func`]'s `wrapper`): the reads and writes of both; never `known`
/// (the wrapper's own returns, such as an error path, are not followed), so nothing is claimed
/// complete, constant or settled from it.
pub fn wrapped(inner: Effects, wrapper: Option<Effects>) -> Effects {
    let mut e = inner;
    if let Some(w) = wrapper {
        for (k, l) in w.reads {
            e.reads.entry(k).or_insert(l);
        }
        for (k, l) in w.sub_reads {
            e.sub_reads.entry(k).or_insert(l);
        }
        for (k, l) in w.writes {
            e.writes.entry(k).or_insert(l);
        }
        e.whole_state = e.whole_state.or(w.whole_state);
    }
    e.known = false;
    e.constants.clear();
    e.settled.clear();
    e.stepped.clear();
    for v in e.dict_writes.values_mut() {
        *v = None;
    }
    for k in e.writes.keys() {
        e.dict_writes.insert(k.clone(), None);
    }
    e
}

/// The repository function a call runs: a function or method by its dotted name, a method of
/// the class of a local bound to a constructor call (`cj = ChiefJustice(); cj.synthesize(s)`
/// or `ChiefJustice().synthesize(s)`), or `self.method` in the caller's class.
fn callee<'r>(
    repo: &Repo<'r>,
    m: usize,
    f: &FuncInfo,
    c: &super::syntax::CallInfo,
) -> Option<(usize, &'r FuncInfo)> {
    let method = |class: &str, name: &str| -> Option<(usize, &'r FuncInfo)> {
        let q = format!("{class}.{name}");
        let mut found = repo.modules.iter().enumerate().flat_map(|(i, md)| {
            md.functions
                .iter()
                .filter(|x| x.qualname == q)
                .map(move |x| (i, x))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    };
    let receiver = c.receiver.as_deref().map(str::trim);
    match receiver {
        None => repo.function(m, c.callee.as_deref()?),
        Some("self") => {
            let (class, _) = f.qualname.rsplit_once('.')?;
            method(class, &c.method)
        }
        Some(r) => {
            // `Class().method(s)` or a local bound once to `Class(...)`
            let class_call = |e: &Expr| -> Option<String> {
                let Expr::Call { func, .. } = e else {
                    return None;
                };
                let d = func.dotted()?;
                Some(d.rsplit('.').next().unwrap_or(&d).to_string())
            };
            let class = if let Some(ctor) = r.strip_suffix("()") {
                Some(ctor.rsplit('.').next().unwrap_or(ctor).to_string())
            } else {
                match f.locals.get(r).map(Vec::as_slice) {
                    Some([v]) => class_call(v),
                    _ => None,
                }
            };
            match class {
                Some(cls)
                    if repo
                        .modules
                        .iter()
                        .any(|md| md.classes.iter().any(|k| k.name == cls)) =>
                {
                    method(&cls, &c.method)
                }
                // `module.func(s)` through an import; any other object's method is not read
                _ if repo.modules[m].imports.contains_key(r) => {
                    repo.function(m, c.callee.as_deref()?)
                }
                _ => None,
            }
        }
    }
}

/// What the values of an update say: re-sent current values and literal-only keys.
#[derive(Default)]
struct Values {
    resends: BTreeMap<String, usize>,
    adds: std::collections::BTreeSet<String>,
    /// key -> the one literal every write gives it (`None`: some write is not that literal)
    literals: BTreeMap<String, Option<String>>,
    seen: std::collections::BTreeSet<String>,
    /// key -> how many dict literals of the function's returns write it
    count: BTreeMap<String, usize>,
    /// key -> the one step every write adds to the key's own value (`None`: some write is not
    /// such an increment)
    steps: BTreeMap<String, Option<i64>>,
    /// key -> the keys of the dict literal every write gives it (see [`Effects::dict_writes`])
    subs: BTreeMap<String, Option<std::collections::BTreeSet<String>>>,
    /// key -> the keys of its dict literal that every write fills with items (see
    /// [`Effects::filled_subs`]; empty as soon as one write is no dict literal)
    filled: BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Values {
    fn add(&mut self, pairs: &[(Expr, Expr)], p: &str, line: usize) {
        for (k, v) in pairs {
            let Some(k) = k.as_str() else { continue };
            *self.count.entry(k.to_string()).or_default() += 1;
            if reads_own(v, p, k) {
                self.resends.entry(k.to_string()).or_insert(line);
                if matches!(v, Expr::BinOp { .. }) {
                    self.adds.insert(k.to_string());
                }
            }
            let sub = match v {
                Expr::Dict(items) => items
                    .iter()
                    .map(|(sk, _)| sk.as_str().map(str::to_string))
                    .collect::<Option<std::collections::BTreeSet<String>>>(),
                v if !matches!(v, Expr::BinOp { .. }) && reads_own(v, p, k) => {
                    Some(std::collections::BTreeSet::new())
                }
                _ => None,
            };
            merge_sub(&mut self.subs, k, sub);
            let full: std::collections::BTreeSet<String> = match v {
                Expr::Dict(items) => items
                    .iter()
                    .filter(|(_, sv)| has_truthy_items(sv))
                    .filter_map(|(sk, _)| sk.as_str().map(str::to_string))
                    .collect(),
                _ => std::collections::BTreeSet::new(),
            };
            match self.filled.get_mut(k) {
                Some(have) => have.retain(|x| full.contains(x)),
                None => {
                    self.filled.insert(k.to_string(), full);
                }
            }
            let step = increment(v, p, k);
            let entry = self.steps.entry(k.to_string()).or_insert(step);
            if *entry != step {
                *entry = None;
            }
            self.literal(k, literal(v));
        }
    }

    fn literal(&mut self, k: &str, lit: Option<String>) {
        self.seen.insert(k.to_string());
        let entry = self.literals.entry(k.to_string()).or_insert(lit.clone());
        if *entry != lit {
            *entry = None;
        }
    }
}

/// Adds one write's dict keys to what `subs` holds for `k` (`None` absorbs).
fn merge_sub(
    subs: &mut BTreeMap<String, Option<std::collections::BTreeSet<String>>>,
    k: &str,
    sub: Option<std::collections::BTreeSet<String>>,
) {
    let entry = subs
        .entry(k.to_string())
        .or_insert_with(|| Some(std::collections::BTreeSet::new()));
    match (entry.as_mut(), sub) {
        (Some(have), Some(more)) => have.extend(more),
        _ => *entry = None,
    }
}

/// A list, tuple or set literal with items, each a truthy literal (a non-empty string, a
/// number other than 0, `True`), or a non-empty string literal.
fn has_truthy_items(v: &Expr) -> bool {
    let truthy = |x: &Expr| match x {
        Expr::Str { value, .. } => !value.is_empty(),
        Expr::Num(n) => n.parse::<f64>().is_ok_and(|f| f != 0.0),
        Expr::Bool(b) => *b,
        _ => false,
    };
    match v {
        Expr::List(items) => !items.is_empty() && items.iter().all(truthy),
        Expr::Str { value, .. } => !value.is_empty(),
        _ => false,
    }
}

/// The text of a literal value as the run-time analysis compares it (`3`, `True`, `"v0"`,
/// `None`); `None` for anything else.
pub fn literal(v: &Expr) -> Option<String> {
    match v {
        Expr::Num(n) => Some(n.clone()),
        Expr::Bool(b) => Some(if *b { "True" } else { "False" }.into()),
        Expr::Str {
            value,
            fstring: false,
        } => Some(format!("{value:?}")),
        Expr::None => Some("None".into()),
        _ => None,
    }
}

/// `dict(state)`, `state.copy()`, `state.model_copy()`, `copy.copy(state)`,
/// `copy.deepcopy(state)`: a copy of the whole state.
fn copies_state(v: &Expr, p: &str) -> bool {
    let Expr::Call { func, args, .. } = v else {
        return false;
    };
    let name = func.dotted().unwrap_or_default();
    let state = Expr::Name(p.to_string());
    match name.as_str() {
        "dict" | "copy.copy" | "copy.deepcopy" | "deepcopy" => args.first() == Some(&state),
        _ => args.is_empty() && (name == format!("{p}.copy") || name == format!("{p}.model_copy")),
    }
}

/// The update's values with each local bound once to the key's own current value
/// (`xs = state.get("xs", [])` ... `{"xs": xs}`) replaced by that value: re-sending the local
/// re-sends the state's list.
fn unalias(pairs: &[(Expr, Expr)], f: &FuncInfo, p: &str) -> Vec<(Expr, Expr)> {
    pairs
        .iter()
        .map(|(k, v)| {
            let own = match (k.as_str(), v) {
                (Some(key), Expr::Name(local)) if local != p => f
                    .locals
                    .get(local)
                    .filter(|vs| vs.len() == 1 && reads_own(&vs[0], p, key))
                    .map(|vs| vs[0].clone()),
                _ => None,
            };
            (k.clone(), own.unwrap_or_else(|| v.clone()))
        })
        .collect()
}

/// `state["k"]`, `state.get("k", ...)`, `state.k`, or one of them `+ ...`: the key's own value.
fn reads_own(v: &Expr, p: &str, k: &str) -> bool {
    let own = |e: &Expr| match e {
        Expr::Subscript(obj, idx) => {
            matches!(&**obj, Expr::Name(n) if n == p)
                && idx.first().and_then(Expr::as_str) == Some(k)
        }
        Expr::Call { func, args, .. } => {
            matches!(&**func, Expr::Attr(obj, m) if m == "get" && matches!(&**obj, Expr::Name(n) if n == p))
                && args.first().and_then(Expr::as_str) == Some(k)
        }
        Expr::Attr(obj, a) => a == k && matches!(&**obj, Expr::Name(n) if n == p),
        _ => false,
    };
    match v {
        Expr::BinOp { op, left, .. } if op == "+" => own(left) || reads_own(left, p, k),
        other => own(other),
    }
}

/// `state["k"] + 1` (or `state.get("k", 0) + 1`, `state.k + 1`, `- 1`): the integer added to
/// the key's own value.
fn increment(v: &Expr, p: &str, k: &str) -> Option<i64> {
    let Expr::BinOp { op, left, right } = v else {
        return None;
    };
    let Expr::Num(n) = &**right else { return None };
    let n: i64 = n.parse().ok()?;
    let own = match &**left {
        Expr::Subscript(obj, idx) => {
            matches!(&**obj, Expr::Name(x) if x == p)
                && idx.len() == 1
                && idx.first().and_then(Expr::as_str) == Some(k)
        }
        Expr::Call { func, args, .. } => {
            matches!(&**func, Expr::Attr(obj, m) if m == "get" && matches!(&**obj, Expr::Name(x) if x == p))
                && args.first().and_then(Expr::as_str) == Some(k)
                && matches!(args.get(1), None | Some(Expr::Num(_)))
        }
        Expr::Attr(obj, a) => a == k && matches!(&**obj, Expr::Name(x) if x == p),
        _ => false,
    };
    match op.as_str() {
        "+" if own => Some(n),
        "-" if own => Some(-n),
        _ => None,
    }
}

/// Whether a value written under a computed key may be a dict: anything but a list, string or
/// number literal.
fn computed_dict(pairs: &[(Expr, Expr)]) -> bool {
    pairs.iter().any(|(k, v)| {
        k.as_str().is_none()
            && !matches!(
                v,
                Expr::List(_) | Expr::Str { .. } | Expr::Num(_) | Expr::Bool(_) | Expr::None
            )
    })
}

/// Whether the text of an assigned value is a list, string or number literal (`[ev]`, `"x"`,
/// `3`): no dict.
fn not_a_dict(rhs: &str) -> bool {
    let t = rhs.trim_start();
    t.starts_with('[')
        || t.starts_with('"')
        || t.starts_with('\'')
        || t.starts_with(|c: char| c.is_ascii_digit())
}

/// Whether a dict literal has a key computed at run time (a name, a call, an f-string: not a
/// plain string literal).
fn computed(pairs: &[(Expr, Expr)]) -> bool {
    pairs.iter().any(|(k, _)| k.as_str().is_none())
}

fn dict_keys(pairs: &[(Expr, Expr)], out: &mut BTreeMap<String, usize>, line: usize) {
    for (k, _) in pairs {
        if let Some(s) = k.as_str() {
            out.entry(s.to_string()).or_insert(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    fn effects(src: &str, func: &str) -> Effects {
        let ms = vec![parse_module("src/nodes.py", src.to_string()).unwrap()];
        let repo = Repo::new(&ms);
        let f = ms[0].function(func).expect("function");
        of_function(&repo, 0, f)
    }

    #[test]
    fn a_key_computed_at_run_time_makes_the_update_unknown() {
        let e = effects(
            "def node(state):\n    out = {}\n    for d in state['dims']:\n        out[d['id']] = [d]\n    return out\n",
            "node",
        );
        assert_eq!(e.computed_key, Some(4));
        assert!(
            !e.known && e.known_but_computed && !e.computed_dict,
            "{e:?}"
        );
        let e = effects(
            "def node(state):\n    key = 'report'\n    return {key: {'a': 1}}\n",
            "node",
        );
        assert!(
            e.computed_key.is_some() && !e.known && e.computed_dict,
            "{e:?}"
        );
        let e = effects("def node(state):\n    return {'report': 'x'}\n", "node");
        assert!(e.computed_key.is_none() && e.known, "{e:?}");
    }

    #[test]
    fn returned_dict_keys_are_writes_and_gets_are_reads() {
        let e = effects(
            "def node(state: AgentState) -> dict:\n    url = state['repo_url']\n    if state.get('errors'):\n        return {'errors': []}\n    return {'evidences': {}, 'has_fatal_error': False}\n",
            "node",
        );
        assert!(e.known);
        assert_eq!(
            e.writes.keys().collect::<Vec<_>>(),
            ["errors", "evidences", "has_fatal_error"]
        );
        assert_eq!(e.reads.keys().collect::<Vec<_>>(), ["errors", "repo_url"]);
        assert_eq!(e.whole_state, None);
    }

    #[test]
    fn in_place_assignments_count_only_when_the_state_is_returned() {
        let e = effects(
            "def setup(state):\n    state['pdf_chunks'] = load()\n    state['opinions'].append(1)\n    return state\n",
            "setup",
        );
        assert_eq!(e.whole_state, Some(4));
        assert!(e.writes.contains_key("pdf_chunks"));
        assert!(e.writes.contains_key("opinions"));
        let e = effects(
            "def setup(state):\n    state['pdf_chunks'] = load()\n    return {'x': 1}\n",
            "setup",
        );
        assert_eq!(e.whole_state, None);
        assert!(!e.writes.contains_key("pdf_chunks"));
    }

    #[test]
    fn pydantic_attributes_and_command_updates() {
        let e = effects(
            "def judge(state: AgentState):\n    if state.retries > 2:\n        return Command(goto='end', update={'retries': state.retries + 1})\n    x = state.model_dump()\n    return {'opinions': [x]}\n",
            "judge",
        );
        assert!(e.reads.contains_key("retries"));
        assert!(!e.reads.contains_key("model_dump"));
        assert!(e.writes.contains_key("retries") && e.writes.contains_key("opinions"));
    }

    #[test]
    fn a_copy_of_the_state_returned_through_a_local_is_a_whole_state_return() {
        for copy in ["dict(state)", "state.copy()", "copy.deepcopy(state)"] {
            let e = effects(
                &format!(
                    "def agg(state):\n    new = {copy}\n    new['summary'] = 1\n    return new\n"
                ),
                "agg",
            );
            assert_eq!(e.whole_state, Some(4), "{copy}");
            assert!(e.known && e.writes.contains_key("summary"), "{copy}");
        }
    }

    #[test]
    fn a_local_bound_to_a_list_of_the_state_is_re_sent_and_grown_in_place() {
        let e = effects(
            "def agg(state):\n    errs = state.get('errors', [])\n    if x:\n        errs.append('e')\n    return {'errors': errs}\n",
            "agg",
        );
        assert!(e.resends.contains_key("errors"));
        assert_eq!(e.fills.get("errors"), Some(&4));
        // a new list (`list(...)`, `+`) is not the state's: growing it leaves the state alone
        let e = effects(
            "def agg(state):\n    errs = state['errors'] + []\n    errs.append('e')\n    return {'errors': errs}\n",
            "agg",
        );
        assert!(e.resends.contains_key("errors") && e.fills.is_empty());
        assert!(e.adds.contains("errors"));
    }

    #[test]
    fn a_key_rebound_in_the_state_before_it_is_returned_is_no_re_send() {
        let e = effects(
            "def judge(state):\n    ops = make()\n    state['opinions'] = ops\n    return {'opinions': state['opinions']}\n",
            "judge",
        );
        assert!(e.writes.contains_key("opinions"));
        assert!(e.resends.is_empty(), "{:?}", e.resends);
    }

    #[test]
    fn a_counter_set_to_its_value_plus_one_on_every_return_is_stepped() {
        let e = effects(
            "def n(state):\n    if x:\n        return {'count': state['count'] + 1}\n    return {'count': state.get('count', 0) + 1, 'y': 2}\n",
            "n",
        );
        assert_eq!(e.stepped.get("count"), Some(&1));
        let e = effects(
            "def n(state):\n    if x:\n        return {'count': state['count'] + 1}\n    return {'y': 2}\n",
            "n",
        );
        assert!(e.stepped.is_empty());
    }

    #[test]
    fn an_awaited_helper_called_with_the_state_is_followed() {
        let ms = vec![
            parse_module(
                "src/nodes.py",
                "async def helper(state, who):\n    return {'opinions': [who]}\nasync def judge(state):\n    return await helper(state, 'p')\n".to_string(),
            )
            .unwrap(),
        ];
        let repo = Repo::new(&ms);
        let e = of_function(&repo, 0, ms[0].function("judge").expect("judge"));
        assert!(e.known && e.writes.contains_key("opinions"), "{e:?}");
    }

    #[test]
    fn a_state_key_spelt_inside_a_string_with_escaped_quotes_is_no_read() {
        let e = effects(
            "def judge(state):\n    p = (\n        \"cite [\\\"src/state.py\\\"]\"\n    )\n    return {'x': state['repo_url']}\n",
            "judge",
        );
        assert_eq!(e.reads.keys().collect::<Vec<_>>(), ["repo_url"]);
    }

    #[test]
    fn an_unreadable_return_is_not_known() {
        let e = effects("def n(state):\n    return make_update(1)\n", "n");
        assert!(!e.known);
    }
}
