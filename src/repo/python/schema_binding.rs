//! Structured output: `.with_structured_output(X)` and `.bind_tools([X])` calls, the bound
//! schema, and whether a retry surrounds them.
//!
//! The bound runnable is followed to where it is invoked: through the name or attribute it is
//! assigned to (`self.llm` in any method of the class and of the classes inheriting from it),
//! the function that returns it and its callers, a chain it is piped into (`prompt | s`), and
//! the parameter of a function of the repository it is passed to. Each invocation is judged
//! on its own: a retry loop around it; a second call of the model, bound or not, in the
//! handler of its `try` that catches an invalid reply (`ValidationError`,
//! `OutputParserException`, `ValueError`, `Exception`); a function of the repository it is
//! handed to (in a lambda, a nested function or as a bound method) that calls what it is given
//! again in a loop after a failure, whatever that function is called. Where what holds the
//! bound runnable is given the unbound model instead, the binding is recorded as skipped.
//!
//! A call counts as retried when it is made again after a failure: its invocation sits in a
//! `try` inside a `while` loop or a `for` over `range(...)` (a loop over criteria is not a
//! retry), or is made again in the `except` handler, or its function carries a retry
//! decorator (a retry library's, or one of the repository that loops around a `try`), or the
//! runnable is wrapped by `.with_retry(...)`, or its graph node has a `RetryPolicy`, or another
//! function of the module invokes in such a loop. A `try`/`except` alone is error handling;
//! the client's `max_retries=` re-sends failed requests, never an invalid reply: both are
//! recorded apart. Parsers applied to the reply text (`PydanticOutputParser`,
//! `model_validate_json`) and JSON cut out of it with a regex are recorded too.

use super::expr::Expr;
use super::names::Repo;
use super::syntax::{CallInfo, FuncInfo, ModuleInfo, enclosing_lines, indentation};
use crate::model::fact::{Retry, Site};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredCall {
    pub path: String,
    pub line: usize,
    pub method: String,
    pub schema: String,
    /// The call is made again on failure (`retry_by`).
    pub retry: bool,
    pub snippet: String,
    #[serde(skip)]
    pub function_snippet: String,
    /// `method="json_mode"`.
    #[serde(default)]
    pub json_mode: bool,
    /// What makes it again on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_by: Option<Retry>,
    /// The client's request retries (`max_retries=` on its constructor): (where, value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<(Site, String)>,
    /// A `try` around it (or its invocation) that does not make it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handled: Option<Site>,
    /// Where what holds the bound runnable is given the unbound model instead: its
    /// invocations may run without the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Site>,
    /// The judge nodes of the main graph that run the binding (when no invocation was read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<String>,
    /// Where the bound runnable is invoked, followed from the binding through the variables,
    /// attributes and returns that hold it (empty when no invocation was read: the binding
    /// then stands for the call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invoked: Vec<Invoked>,
}

/// One invocation of a bound runnable and what makes it again on failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invoked {
    pub at: Site,
    /// The judge nodes of the main graph that run it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_by: Option<Retry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handled: Option<Site>,
    /// Made once per item of a collection: inside a `for` loop or comprehension that is no
    /// retry (not over `range(..)`, not a `while`), or in a function called so (two calls up).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_item: bool,
    /// Where a failed reply is read from free text instead (JSON cut out with a regex in an
    /// `except` clause of the invoking function): the API does not enforce the schema there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_text: Option<Site>,
    /// The reply, held in a name, then written like a dict (`opinion["judge"] = ...`): each
    /// such write, where and the target as written. (What the binding returns decides whether
    /// that fails.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item_written: Vec<(Site, String)>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StructuredFacts {
    pub calls: Vec<StructuredCall>,
    pub used: bool,
    /// Schema-derived parsers applied to the reply text (`PydanticOutputParser`,
    /// `model_validate_json`, ...): (where, callee).
    #[serde(default)]
    pub parsers: Vec<(Site, String)>,
    /// `json.loads` in a function that cuts the text with a regex: (where, callee).
    #[serde(default)]
    pub json_text: Vec<(Site, String)>,
    /// Python files of the product code searched.
    #[serde(default)]
    pub files: usize,
}

const INVOKE: &[&str] = &["invoke", "ainvoke", "batch", "abatch"];
const PARSERS: &[&str] = &[
    "langchain_core.output_parsers.PydanticOutputParser",
    "langchain.output_parsers.PydanticOutputParser",
    "langchain_core.output_parsers.JsonOutputParser",
    "langchain.output_parsers.OutputFixingParser",
    "langchain.output_parsers.RetryOutputParser",
    "langchain_core.output_parsers.PydanticToolsParser",
];
const RETRY_LIBS: &[&str] = &["tenacity", "backoff", "retrying", "retry"];

fn site(module: &ModuleInfo, line: usize) -> Site {
    Site::new(module.path.clone(), line)
}

/// Attempts in all of the `for .. in range(..)` retry loop around call `c`, when its bounds are
/// numbers (literals or constants of the repository, `+`/`-` between them): `range(3)` is 3,
/// `range(1, MAX + 1)` is `MAX`.
fn loop_attempts(repo: &Repo<'_>, m: usize, c: &CallInfo) -> Option<u32> {
    let Expr::Call { func, args, .. } = &c.loops.last()?.iter else {
        return None;
    };
    if func.dotted().as_deref() != Some("range") || c.in_while {
        return None;
    }
    let n = match args.as_slice() {
        [stop] => number_of(repo, m, stop)?,
        [start, stop] => number_of(repo, m, stop)?.checked_sub(number_of(repo, m, start)?)?,
        _ => return None,
    };
    u32::try_from(n).ok()
}

/// A `for` loop around call `c` that makes one attempt only (`range(1)`): no retry.
fn single_pass(repo: &Repo<'_>, m: usize, c: &CallInfo) -> bool {
    loop_attempts(repo, m, c).is_some_and(|n| n < 2)
}

/// The whole number an expression stands for: a literal, a constant, a sum or difference.
fn number_of(repo: &Repo<'_>, m: usize, e: &Expr) -> Option<i64> {
    match e {
        Expr::Num(n) => n.parse().ok(),
        Expr::Name(_) | Expr::Attr(..) => match repo.constant(m, &e.dotted()?)?.1 {
            Expr::Num(n) => n.parse().ok(),
            _ => None,
        },
        Expr::BinOp { left, op, right } if op == "+" || op == "-" => {
            let (l, r) = (number_of(repo, m, left)?, number_of(repo, m, right)?);
            if op == "+" {
                l.checked_add(r)
            } else {
                l.checked_sub(r)
            }
        }
        _ => None,
    }
}

/// A loop that goes round again after a failure: a `while`, or a `for` over `range(...)`
/// (a loop over criteria or items is not a retry), around a `try` holding the call.
fn retry_loop(c: &CallInfo) -> bool {
    c.in_try
        && (c.in_while
            || c.loops.last().is_some_and(|l| {
                matches!(&l.iter, Expr::Call { func, .. } if func.dotted().as_deref() == Some("range"))
            }))
}

/// A decorator that retries: from a retry library, or a function of the repository that
/// loops around a `try`.
fn retry_decorator(repo: &Repo<'_>, m: usize, decorator: &str) -> bool {
    let name: String = decorator
        .trim_start_matches('@')
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    if name.is_empty() {
        return false;
    }
    let q = repo.qualify(m, &name);
    // a retry library (a module of the repository called `retry` is the student's, not it)
    if RETRY_LIBS.iter().any(|l| {
        q.split('.').next() == Some(*l)
            && repo.find_module(l).is_none()
            && repo.modules[m]
                .imports
                .values()
                .any(|v| v.split('.').next() == Some(*l))
    }) {
        return true;
    }
    let Some((wm, f)) = repo.function(m, &name) else {
        return false;
    };
    // the decorator's own body or the wrapper it defines
    repo.modules[wm]
        .functions
        .iter()
        .filter(|g| g.line >= f.line && g.end_line <= f.end_line)
        .any(|g| g.has_loop && g.has_try)
}

/// Packages whose clients talk to a model (the first segment of an imported name).
const MODEL_LIBS: &[&str] = &[
    "openai",
    "anthropic",
    "groq",
    "mistralai",
    "google",
    "vertexai",
    "cohere",
    "ollama",
    "litellm",
    "together",
    "fireworks",
    "huggingface_hub",
];

/// The client's request retries set in the repository (`ChatOpenAI(max_retries=3)`): a
/// constructor imported from a model library (`langchain*`, `openai`, ...), whatever it is
/// called; a class of the repository is not taken for one.
fn transport(repo: &Repo<'_>, prefer: usize) -> Option<(Site, String)> {
    let find = |m: usize| {
        let module = &repo.modules[m];
        module.calls.iter().find_map(|c| {
            let v = c.kwargs.iter().find(|(k, _)| k == "max_retries")?;
            let callee = c.callee.as_deref()?;
            let head = callee.split('.').next().unwrap_or(callee);
            // imported into the module (a name it defines or never imports is not a library's)
            let q = module.imports.get(head)?;
            let top = q.split('.').next().unwrap_or(q);
            let client = (top.starts_with("langchain") || MODEL_LIBS.contains(&top))
                && repo.find_module(top).is_none();
            client.then(|| (site(module, c.line), v.1.render()))
        })
    };
    find(prefer).or_else(|| (0..repo.modules.len()).find_map(find))
}

/// How deep a bound runnable is followed through the functions that return it.
const FOLLOW_DEPTH: usize = 3;

/// Where a value is held: a name local to a function (and the functions nested in it), an
/// attribute of a method's first parameter (`self.llm`) in a class and the classes that
/// inherit from it, or a module-level name.
#[derive(Debug, Clone, PartialEq)]
struct Holder {
    m: usize,
    scope: Held,
}

#[derive(Debug, Clone, PartialEq)]
enum Held {
    /// A local name of the function (index into the module's functions).
    Local { func: usize, name: String },
    /// An attribute of the instance, in the class whose `class` line this is.
    Attr { class: usize, attr: String },
    /// A module-level name.
    Module { name: String },
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The class (by its line) a function is a method of, and the method's first parameter (the
/// instance, whatever it is called); for a function nested in a method, that method's.
fn method_of(module: &ModuleInfo, func: usize) -> Option<(usize, &str)> {
    let f = module.functions.get(func)?;
    let method = module
        .functions
        .iter()
        .filter(|g| g.line <= f.line && f.end_line <= g.end_line && g.qualname != g.name)
        .min_by_key(|g| g.line)?;
    let class = module
        .classes
        .iter()
        .filter(|c| c.line <= method.line && method.end_line <= c.end_line)
        .max_by_key(|c| c.line)?;
    Some((class.line, method.params.first()?.as_str()))
}

/// The holder a target written in function `func` of module `m` names (`s`, `self.llm`).
fn holder(repo: &Repo<'_>, m: usize, func: Option<usize>, target: &str) -> Option<Holder> {
    let module = &repo.modules[m];
    let scope = if is_identifier(target) {
        match func {
            Some(f) => Held::Local {
                func: f,
                name: target.to_string(),
            },
            None => Held::Module {
                name: target.to_string(),
            },
        }
    } else {
        let (obj, attr) = target.split_once('.')?;
        let (class, this) = method_of(module, func?)?;
        if obj != this || !is_identifier(attr) {
            return None;
        }
        Held::Attr {
            class,
            attr: attr.to_string(),
        }
    };
    Some(Holder { m, scope })
}

/// Whether `text`, written in function `func` of module `cm`, names what `h` holds.
fn names(repo: &Repo<'_>, h: &Holder, cm: usize, func: Option<usize>, text: &str) -> bool {
    let module = &repo.modules[cm];
    match &h.scope {
        Held::Local { func: home, name } => {
            cm == h.m
                && text == name
                && func.is_some_and(|g| {
                    let (f, inner) = (&module.functions[*home], &module.functions[g]);
                    g == *home || (f.line < inner.line && inner.end_line <= f.end_line)
                })
        }
        Held::Module { name } => cm == h.m && text == name,
        Held::Attr { class, attr } => {
            let Some((k, this)) = func.and_then(|g| method_of(module, g)) else {
                return false;
            };
            let Some((obj, a)) = text.split_once('.') else {
                return false;
            };
            if obj != this || a != attr {
                return false;
            }
            if cm == h.m && k == *class {
                return true;
            }
            // a class that inherits from it
            let Some(base) = repo.modules[h.m].classes.iter().find(|x| x.line == *class) else {
                return false;
            };
            module.classes.iter().any(|x| {
                x.line == k
                    && x.bases
                        .iter()
                        .any(|b| repo.qualify(cm, b).rsplit('.').next() == Some(base.name.as_str()))
            })
        }
    }
}

/// The calls of the repository that call function `fi` of module `m`.
fn callers<'r>(repo: &Repo<'r>, m: usize, fi: usize) -> Vec<(usize, &'r CallInfo)> {
    let f = &repo.modules[m].functions[fi];
    let mut out = Vec::new();
    for (qm, module) in repo.modules.iter().enumerate() {
        for q in module.calls.iter().filter(|q| q.method == f.name) {
            if q.callee
                .as_deref()
                .and_then(|d| repo.function(qm, d))
                .is_some_and(|(fm, g)| fm == m && g.line == f.line)
            {
                out.push((qm, q));
            }
        }
    }
    out
}

/// The holders of the value call `c` (of module `m`) makes: the target it is assigned to, and,
/// when its function returns it (directly or through a local name), the holders of every
/// call of that function, `FOLLOW_DEPTH` calls deep.
fn holders_of(repo: &Repo<'_>, m: usize, c: &CallInfo, depth: usize, out: &mut Vec<Holder>) {
    let module = &repo.modules[m];
    let mut returned = c.returned;
    if let Some(t) = &c.assigned_to
        && let Some(h) = holder(repo, m, c.func, t)
    {
        if let (Held::Local { func, name }, false) = (&h.scope, returned) {
            returned = module.functions[*func]
                .returns
                .iter()
                .any(|e| matches!(e, Expr::Name(n) if n == name));
        }
        if !out.contains(&h) {
            out.push(h);
        }
    }
    if returned
        && depth < FOLLOW_DEPTH
        && let Some(fi) = c.func
    {
        for (qm, q) in callers(repo, m, fi) {
            holders_of(repo, qm, q, depth + 1, out);
        }
    }
}

/// What else holds the runnable the holders hold: a local or attribute assigned a chain it is
/// piped into (`chain = prompt | s`) or a wrapper of it (`s.with_config(...)`), and the
/// parameter of a function of the repository it is passed to (`run(chain, ...)`), `FOLLOW_DEPTH`
/// steps.
fn derived(repo: &Repo<'_>, out: &mut Vec<Holder>) {
    fn mentions(e: &Expr, pred: &dyn Fn(&str) -> bool) -> bool {
        match e {
            Expr::BinOp { op, left, right } if op == "|" => {
                mentions(left, pred) || mentions(right, pred)
            }
            Expr::Call { func, .. } => matches!(func.as_ref(), Expr::Attr(obj, m)
                if matches!(m.as_str(), "with_retry" | "with_config" | "with_fallbacks")
                    && mentions(obj, pred)),
            e => e.dotted().is_some_and(|d| pred(&d)),
        }
    }
    let mut done = 0;
    for _ in 0..FOLLOW_DEPTH {
        let start = out.len();
        let mut more: Vec<Holder> = Vec::new();
        for h in &out[done..] {
            let module = &repo.modules[h.m];
            // assignments in the functions that see it
            for (gi, g) in module.functions.iter().enumerate() {
                let held = |d: &str| names(repo, h, h.m, Some(gi), d);
                for (name, values) in &g.locals {
                    if values.iter().any(|v| mentions(v, &held))
                        && let Some(x) = holder(repo, h.m, Some(gi), name)
                    {
                        more.push(x);
                    }
                }
                for (t, v, _) in &g.attributes {
                    if mentions(v, &held)
                        && let Some(x) = holder(repo, h.m, Some(gi), t)
                    {
                        more.push(x);
                    }
                }
            }
            // handed to a function of the repository: its parameter holds it
            for c in &module.calls {
                let Some(callee) = c.callee.as_deref() else {
                    continue;
                };
                for (arg, a) in arguments(c) {
                    if !a.dotted().is_some_and(|d| names(repo, h, h.m, c.func, &d)) {
                        continue;
                    }
                    let Some((fm, f)) = repo.function(h.m, callee) else {
                        continue;
                    };
                    let skip = usize::from(c.receiver.is_some() && f.qualname != f.name);
                    let param = match &arg {
                        Arg::At(i) => f.params.get(i + skip),
                        Arg::Kw(k) => f.params.iter().find(|p| *p == k),
                    };
                    let fi = repo.modules[fm]
                        .functions
                        .iter()
                        .position(|g| g.line == f.line);
                    if let (Some(p), Some(fi)) = (param, fi) {
                        more.push(Holder {
                            m: fm,
                            scope: Held::Local {
                                func: fi,
                                name: p.clone(),
                            },
                        });
                    }
                }
            }
        }
        for x in more {
            if !out.contains(&x) {
                out.push(x);
            }
        }
        done = start;
        if out.len() == start {
            break;
        }
    }
}

/// The holders of the model a binding call is made on (`llm` in `llm.with_structured_output`);
/// when that is a parameter of the function that binds, the arguments its callers pass.
fn raw_holders(repo: &Repo<'_>, m: usize, c: &CallInfo) -> Vec<Holder> {
    let Some(r) = c.receiver.as_deref() else {
        return Vec::new();
    };
    let module = &repo.modules[m];
    let param = c.func.and_then(|fi| {
        let f = &module.functions[fi];
        let skip = usize::from(f.qualname != f.name);
        f.params
            .iter()
            .skip(skip)
            .position(|p| p == r)
            .map(|i| (fi, i, skip))
    });
    let mut out: Vec<Holder> = holder(repo, m, c.func, r).into_iter().collect();
    // kept on the instance too (`self.base = base`)
    if let Some(fi) = c.func {
        out.extend(
            module.functions[fi]
                .attributes
                .iter()
                .filter(|(_, v, _)| v.dotted().as_deref() == Some(r))
                .filter_map(|(t, _, _)| holder(repo, m, c.func, t)),
        );
    }
    let Some((fi, i, skip)) = param else {
        return out;
    };
    let name = &module.functions[fi].params[i + skip];
    out.extend(callers(repo, m, fi).into_iter().filter_map(|(qm, q)| {
        let arg = q
            .args
            .get(i)
            .or_else(|| q.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v))?;
        holder(repo, qm, q.func, &arg.dotted()?)
    }));
    out
}

/// Where what holds the bound runnable is given the unbound model instead
/// (`self.llm = self.raw_llm` beside `self.llm = self.bind(...)`): its invocations may then
/// run without the schema.
fn skipped(repo: &Repo<'_>, bound: &[Holder], raw: &[Holder]) -> Option<Site> {
    bound.iter().find_map(|h| {
        let module = &repo.modules[h.m];
        let Held::Attr { attr, .. } = &h.scope else {
            return None;
        };
        module
            .functions
            .iter()
            .enumerate()
            .flat_map(|(gi, g)| g.attributes.iter().map(move |a| (gi, a)))
            .find(|(gi, (t, v, _))| {
                t.split_once('.').is_some_and(|(_, a)| a == attr)
                    && names(repo, h, h.m, Some(*gi), t)
                    && v.dotted()
                        .is_some_and(|d| raw.iter().any(|r| names(repo, r, h.m, Some(*gi), &d)))
            })
            .map(|(_, (_, _, line))| site(module, *line))
    })
}

/// The tests a line of `module` runs under, innermost first: each enclosing `if`/`elif`'s
/// condition (whitespace collapsed) and whether the line is in its `else:` block.
fn branches_of(module: &ModuleInfo, line: usize) -> Vec<(String, bool)> {
    let lines: Vec<&str> = module.source.lines().collect();
    let cond = |h: &str| {
        h.trim_end_matches(':')
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    for (n, level) in enclosing_lines(&lines, line, 0) {
        let head = lines[n].trim();
        if let Some(c) = head
            .strip_prefix("if ")
            .or_else(|| head.strip_prefix("elif "))
        {
            out.push((cond(c), false));
        } else if head.starts_with("else") {
            // the `if` this `else` closes: the nearest one above at the same indentation
            if let Some(c) = lines[..n].iter().rev().find_map(|u| {
                (indentation(u) == level)
                    .then(|| u.trim().strip_prefix("if "))
                    .flatten()
            }) {
                out.push((cond(c), true));
            }
        }
    }
    out
}

/// One use of a bound runnable: a call invoking it, or a call handing its invoke method to a
/// function (`helper(s.invoke, p)`, argument `handed`).
struct Use<'r> {
    m: usize,
    call: &'r CallInfo,
    handed: Option<Arg>,
}

/// The call is made once per item of a collection: inside a `for` loop or a comprehension
/// over something other than `range(..)` (a retry's attempts), or inside a function that is
/// itself called so, `depth` calls up.
fn per_item(repo: &Repo<'_>, m: usize, call: &CallInfo, depth: usize) -> bool {
    looped(&repo.modules[m], call) || (depth > 0 && called_per_item(repo, m, call.func, depth))
}

/// The call sits in a `for` loop or a comprehension over something other than `range(..)`.
fn looped(module: &ModuleInfo, call: &CallInfo) -> bool {
    let range = |e: &Expr| matches!(e, Expr::Call { func, .. } if func.dotted().as_deref() == Some("range"));
    // a comprehension on the call's line (`[judge(c) for c in criteria]`)
    let text = module.line_text(call.line);
    call.loops.iter().any(|l| !range(&l.iter))
        || (text.contains(" for ") && !text.contains("in range("))
}

/// Function `func` of module `m` is run once per item: handed to other code
/// (`executor.map(judge_one, criteria)`, `submit`, `gather`: how often it runs is not read
/// here, so it is not taken for a single run; a graph node runs once per visit, its routes and
/// `Send`s are read from the graph), or called per item, `depth` calls up. Each calling function
/// is followed once, however many calls it makes.
fn called_per_item(repo: &Repo<'_>, m: usize, func: Option<usize>, depth: usize) -> bool {
    let Some(f) = func.and_then(|i| repo.modules[m].functions.get(i)) else {
        return false;
    };
    let handed =
        |e: &Expr| matches!(e.dotted(), Some(d) if d.rsplit('.').next() == Some(f.name.as_str()));
    let mut callers: Vec<(usize, Option<usize>)> = Vec::new();
    for (cm, mm) in repo.modules.iter().enumerate() {
        for c in &mm.calls {
            if c.method != "add_node"
                && c.args
                    .iter()
                    .chain(c.kwargs.iter().map(|(_, v)| v))
                    .any(handed)
            {
                return true;
            }
            if c.method == f.name && !(cm == m && c.func == func) {
                if looped(mm, c) {
                    return true;
                }
                if !callers.contains(&(cm, c.func)) {
                    callers.push((cm, c.func));
                }
            }
        }
    }
    depth > 1
        && callers
            .into_iter()
            .any(|(cm, cf)| called_per_item(repo, cm, cf, depth - 1))
}

/// Which argument of a call: a position or a keyword.
#[derive(Debug, Clone)]
enum Arg {
    At(usize),
    Kw(String),
}

/// The arguments of a call with their position.
fn arguments(c: &CallInfo) -> impl Iterator<Item = (Arg, &Expr)> {
    c.args
        .iter()
        .enumerate()
        .map(|(i, a)| (Arg::At(i), a))
        .chain(c.kwargs.iter().map(|(k, v)| (Arg::Kw(k.clone()), v)))
}

/// The calls of the repository that invoke what the holders hold, or hand its invoke method
/// to another function.
fn uses<'r>(repo: &Repo<'r>, holders: &[Holder]) -> Vec<Use<'r>> {
    let mut out: Vec<Use<'r>> = Vec::new();
    for (cm, module) in repo.modules.iter().enumerate() {
        if super::safety::is_test(&module.path) {
            continue;
        }
        for c in &module.calls {
            let held = |text: &str| holders.iter().any(|h| names(repo, h, cm, c.func, text));
            if INVOKE.contains(&c.method.as_str()) && c.receiver.as_deref().is_some_and(held) {
                out.push(Use {
                    m: cm,
                    call: c,
                    handed: None,
                });
            } else if let Some((arg, _)) = arguments(c).find(|(_, a)| {
                matches!(a, Expr::Attr(obj, meth)
                    if INVOKE.contains(&meth.as_str()) && obj.dotted().is_some_and(|d| held(&d)))
            }) {
                out.push(Use {
                    m: cm,
                    call: c,
                    handed: Some(arg),
                });
            }
        }
    }
    out
}

/// Whether an `except` clause's types catch a reply that fails to parse or validate (a bare
/// `except:` and `Exception` catch it too).
fn catches_invalid(types: &str) -> bool {
    const CAUGHT: &[&str] = &[
        "ValidationError",
        "OutputParserException",
        "ValueError",
        "JSONDecodeError",
        "Exception",
        "BaseException",
    ];
    types.trim().is_empty()
        || types
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| CAUGHT.contains(&w))
}

/// Whether expression `e` holds a call of `method` on `receiver` (a lambda's body).
fn calls_in(e: &Expr, receiver: &str, method: &str) -> bool {
    match e {
        Expr::Call { func, args, kwargs } => {
            matches!(func.as_ref(), Expr::Attr(obj, m)
                if m == method && obj.dotted().as_deref() == Some(receiver))
                || calls_in(func, receiver, method)
                || args.iter().any(|a| calls_in(a, receiver, method))
                || kwargs.iter().any(|(_, a)| calls_in(a, receiver, method))
        }
        Expr::Lambda(b) => calls_in(b, receiver, method),
        Expr::Attr(o, _) => calls_in(o, receiver, method),
        Expr::Alt(v) | Expr::List(v) => v.iter().any(|a| calls_in(a, receiver, method)),
        Expr::BinOp { left, right, .. } => {
            calls_in(left, receiver, method) || calls_in(right, receiver, method)
        }
        _ => false,
    }
}

/// A function of the repository that `h` calls, given a callable as argument `arg`, which it
/// calls again in a loop after a failure (a `try` in a `while` or a `for` over `range`): what
/// the code does, whatever the function is called.
fn helper_loop(repo: &Repo<'_>, m: usize, h: &CallInfo, arg: &Arg) -> Option<Retry> {
    let (hm, f) = repo.function(m, h.callee.as_deref()?)?;
    let skip = usize::from(h.receiver.is_some() && f.qualname != f.name);
    let param = match arg {
        Arg::At(i) => f.params.get(i + skip)?,
        Arg::Kw(k) => f.params.iter().find(|p| *p == k)?,
    };
    let module = &repo.modules[hm];
    let fi = module.functions.iter().position(|g| g.line == f.line)?;
    module
        .calls
        .iter()
        .find(|c| {
            c.func == Some(fi)
                && c.receiver.is_none()
                && c.callee.as_deref() == Some(param.as_str())
                && retry_loop(c)
        })
        .map(|c| Retry::Helper {
            at: site(module, c.line),
            helper: f.name.clone(),
        })
}

/// The call that hands invocation `o` to another function: in a lambda (`helper(lambda:
/// s.invoke(p))`) or as a nested function (`def attempt(): ...; helper(attempt)`).
fn handed_in<'r>(module: &'r ModuleInfo, o: &CallInfo) -> Option<(&'r CallInfo, Arg)> {
    let recv = o.receiver.as_deref()?;
    let lambda = module.calls.iter().find_map(|h| {
        if h.func != o.func || h.line > o.line {
            return None;
        }
        arguments(h)
            .find(|(_, a)| matches!(a, Expr::Lambda(b) if calls_in(b, recv, &o.method)))
            .map(|(arg, _)| (h, arg))
    });
    if lambda.is_some() {
        return lambda;
    }
    let g = &module.functions[o.func?];
    let outer = module
        .functions
        .iter()
        .position(|f| f.line < g.line && g.end_line <= f.end_line)?;
    module.calls.iter().find_map(|h| {
        if h.func != Some(outer) {
            return None;
        }
        arguments(h)
            .find(|(_, a)| matches!(a, Expr::Name(n) if *n == g.name))
            .map(|(arg, _)| (h, arg))
    })
}

/// What makes one use of a bound runnable again on failure, read from the code around it: a
/// retry loop around it, a second call of the model (bound or not) in the handler of the
/// `try` around it for an invalid reply, a function it is handed to that calls it again in a
/// loop, a retry decorator on its function, `.with_retry()` on what holds it, or a
/// `RetryPolicy` on its node.
fn use_retry(
    repo: &Repo<'_>,
    u: &Use<'_>,
    bound: &[Holder],
    raw: &[Holder],
    policies: &[(String, Site)],
) -> Option<Retry> {
    let module = &repo.modules[u.m];
    let o = u.call;
    if u.handed.is_none() && retry_loop(o) && !single_pass(repo, u.m, o) {
        return Some(Retry::Loop {
            at: site(module, o.line),
            attempts: loop_attempts(repo, u.m, o),
        });
    }
    if let Some(t) = o.try_line {
        let again = |r: &CallInfo, hs: &[Holder]| {
            INVOKE.contains(&r.method.as_str())
                && r.receiver
                    .as_deref()
                    .is_some_and(|x| hs.iter().any(|h| names(repo, h, u.m, r.func, x)))
        };
        if let Some(r) = module.calls.iter().find(|r| {
            r.func == o.func
                && r.handler
                    .as_ref()
                    .is_some_and(|(l, types)| *l == t && catches_invalid(types))
                && (again(r, bound) || again(r, raw))
        }) {
            return Some(Retry::Reinvoked {
                at: site(module, r.line),
                unbound: !again(r, bound),
            });
        }
    }
    let handed = match &u.handed {
        Some(arg) => Some((o, arg.clone())),
        None => handed_in(module, o),
    };
    if let Some((h, arg)) = handed
        && let Some(r) = helper_loop(repo, u.m, h, &arg)
    {
        return Some(r);
    }
    let f = o.func.map(|fi| &module.functions[fi])?;
    if let Some(d) = f.decorators.iter().find(|d| retry_decorator(repo, u.m, d)) {
        return Some(Retry::Decorator {
            at: site(module, f.line),
            decorator: super::syntax::truncate(d, 60),
        });
    }
    if let Some(w) = module.calls.iter().find(|w| {
        w.method == "with_retry"
            && w.receiver
                .as_deref()
                .is_some_and(|x| bound.iter().any(|h| names(repo, h, u.m, w.func, x)))
    }) {
        return Some(Retry::WithRetry {
            at: site(module, w.line),
        });
    }
    node_policy(repo, f, policies)
}

/// A `RetryPolicy` on the node that runs function `f`: the node itself, or a node whose
/// function calls it.
fn node_policy(repo: &Repo<'_>, f: &FuncInfo, policies: &[(String, Site)]) -> Option<Retry> {
    let nodes: Vec<&str> = std::iter::once(f.name.as_str())
        .chain(repo.modules.iter().flat_map(|mm| {
            mm.calls
                .iter()
                .filter(|k| k.method == f.name)
                .filter_map(|k| k.func.map(|g| mm.functions[g].name.as_str()))
        }))
        .collect();
    policies
        .iter()
        .find(|(n, _)| nodes.contains(&n.as_str()))
        .map(|(_, at)| Retry::NodePolicy { at: at.clone() })
}

pub fn analyse(repo: &Repo<'_>) -> StructuredFacts {
    let mut out = StructuredFacts::default();
    let policies = retry_policies(repo);
    for (m, module) in repo.modules.iter().enumerate() {
        if super::safety::is_test(&module.path) {
            continue;
        }
        out.files += 1;
        parsers(repo, m, &mut out);
        let around = Around {
            // a function of the module that invokes in a retry loop
            module_loop: module
                .calls
                .iter()
                .find(|c| {
                    INVOKE.contains(&c.method.as_str()) && retry_loop(c) && !single_pass(repo, m, c)
                })
                .map(|c| (site(module, c.line), loop_attempts(repo, m, c))),
            // `s = llm.with_structured_output(X)` ... `s.with_retry(...)`: the retry wraps `s`
            // only
            retried: module
                .calls
                .iter()
                .filter(|c| c.method == "with_retry")
                .filter_map(|c| c.receiver.as_deref().map(|r| (r, c.line)))
                .collect(),
            policies: &policies,
        };
        for c in &module.calls {
            let method = c.method.as_str();
            if method != "with_structured_output" && method != "bind_tools" {
                continue;
            }
            if c.receiver.is_none() {
                continue;
            }
            out.calls.push(binding(repo, m, c, &around));
        }
    }
    out.used = !out.calls.is_empty();
    out
}

/// Nodes with a RetryPolicy: the function names given to `add_node(..., retry=...)`.
fn retry_policies(repo: &Repo<'_>) -> Vec<(String, Site)> {
    let mut policies: Vec<(String, Site)> = Vec::new();
    for module in repo.modules {
        for c in &module.calls {
            if c.method == "add_node"
                && c.kwargs
                    .iter()
                    .any(|(k, _)| k == "retry" || k == "retry_policy")
                && let Some(node) = c.args.get(1).or_else(|| c.args.first())
                && let Some(d) = node.dotted()
            {
                let last = d.rsplit('.').next().unwrap_or(&d).to_string();
                policies.push((last, site(module, c.line)));
            }
        }
    }
    policies
}

/// The parsers of module `m`'s replies (`PydanticOutputParser`, `model_validate_json`, ...),
/// and `json.loads` in a function that also searches the text with a regular expression.
fn parsers(repo: &Repo<'_>, m: usize, out: &mut StructuredFacts) {
    let module = &repo.modules[m];
    for c in &module.calls {
        let Some(callee) = c.callee.as_deref() else {
            continue;
        };
        if repo.is(m, callee, PARSERS)
            || (matches!(c.method.as_str(), "model_validate_json" | "parse_raw")
                && c.receiver.is_some())
        {
            out.parsers.push((site(module, c.line), callee.to_string()));
        }
        if json_from_text(repo, m, c) {
            out.json_text
                .push((site(module, c.line), callee.to_string()));
        }
    }
}

/// `json.loads` in a function that cuts text with a regex: JSON read out of free text.
fn json_from_text(repo: &Repo<'_>, m: usize, c: &CallInfo) -> bool {
    let module = &repo.modules[m];
    c.callee
        .as_deref()
        .is_some_and(|callee| repo.is(m, callee, &["json.loads"]))
        && c.func.is_some()
        && module.calls.iter().any(|o| {
            o.func == c.func
                && o.callee.as_deref().is_some_and(|cl| {
                    repo.is(
                        m,
                        cl,
                        &[
                            "re.search",
                            "re.findall",
                            "re.match",
                            "re.sub",
                            "re.finditer",
                        ],
                    )
                })
        })
}

/// `include_raw=` given (not `False`): the binding returns a dict of the raw and parsed replies.
fn include_raw(binding: &CallInfo) -> bool {
    binding
        .kwargs
        .iter()
        .any(|(k, v)| k == "include_raw" && !matches!(v, Expr::Bool(false)))
}

/// The reply of call `c`, assigned to a name, written like a dict afterwards in the same
/// function (`opinion["judge"] = ...`): where, and the target as written, for each write.
/// Not when the name is assigned more than once (`opinion = opinion.model_dump()`) or its type
/// is tested (`isinstance(opinion, dict)`, `hasattr`): the write may then be a dict's.
fn item_written(module: &ModuleInfo, c: &CallInfo) -> Vec<(Site, String)> {
    let (Some(name), Some(fi)) = (c.assigned_to.as_deref(), c.func) else {
        return Vec::new();
    };
    let f = &module.functions[fi];
    let once = f.locals.get(name).is_some_and(|v| v.len() == 1);
    let tested = module.calls.iter().any(|o| {
        o.func == Some(fi)
            && matches!(o.method.as_str(), "isinstance" | "hasattr" | "type")
            && matches!(o.args.first(), Some(Expr::Name(n)) if n == name)
    });
    if !once || tested {
        return Vec::new();
    }
    f.item_writes
        .iter()
        .filter(|(obj, _, line)| obj == name && *line > c.line)
        .map(|(_, target, line)| (site(module, *line), target.clone()))
        .collect()
}

/// A failed reply read from free text instead: JSON cut out with a regex in an `except`
/// clause of the function that invokes the bound runnable (`func` of module `m`).
fn from_text(repo: &Repo<'_>, m: usize, func: Option<usize>) -> Option<Site> {
    func?;
    let module = &repo.modules[m];
    module
        .calls
        .iter()
        .find(|c| c.func == func && c.in_except && json_from_text(repo, m, c))
        .map(|c| site(module, c.line))
}

/// What a module holds that retries a binding made in it.
struct Around<'a> {
    /// A function of the module that invokes in a retry loop: where, and its attempts.
    module_loop: Option<(Site, Option<u32>)>,
    /// `s.with_retry(...)`: the variable retried, and the line.
    retried: Vec<(&'a str, usize)>,
    /// Nodes with a RetryPolicy (see [`retry_policies`]).
    policies: &'a [(String, Site)],
}

/// The binding `c` of module `m` (`llm.with_structured_output(X)`, `bind_tools`): its schema,
/// what retries it, what handles its failure, and where the bound runnable is invoked.
fn binding(repo: &Repo<'_>, m: usize, c: &CallInfo, around: &Around) -> StructuredCall {
    let module = &repo.modules[m];
    let func = c.func.map(|f| &module.functions[f]);
    // the invocations of the bound runnable in the same function
    let invokes: Vec<&CallInfo> = module
        .calls
        .iter()
        .filter(|o| o.func == c.func && INVOKE.contains(&o.method.as_str()) && o.line >= c.line)
        .collect();
    let mut retry_by = binding_retry(repo, m, c, func, &invokes, around);
    let mut handled = c
        .try_line
        .or_else(|| invokes.iter().find_map(|o| o.try_line))
        .map(|l| site(module, l));
    // the bound runnable followed to where it is invoked
    let mut bound = Vec::new();
    holders_of(repo, m, c, 0, &mut bound);
    derived(repo, &mut bound);
    let holders = Holders {
        bound,
        raw: raw_holders(repo, m, c),
    };
    let skipped_at = skipped(repo, &holders.bound, &holders.raw);
    let invoked = invocations(
        repo,
        m,
        c,
        &holders,
        skipped_at.as_ref(),
        retry_by.as_ref(),
        around,
    );
    if retry_by.is_none() && !invoked.is_empty() && invoked.iter().all(|i| i.retry_by.is_some()) {
        retry_by = invoked[0].retry_by.clone();
    }
    if handled.is_none() {
        handled = invoked.iter().find_map(|i| i.handled.clone());
    }
    StructuredCall {
        path: module.path.clone(),
        line: c.line,
        method: c.method.clone(),
        schema: schema_text(c),
        retry: retry_by.is_some(),
        snippet: c.snippet.clone(),
        function_snippet: func
            .map(|f| module.snippet(f.line, f.end_line, 40))
            .unwrap_or_else(|| c.snippet.clone()),
        json_mode: c
            .kwargs
            .iter()
            .any(|(k, v)| k == "method" && v.as_str() == Some("json_mode")),
        retry_by,
        transport: transport(repo, m),
        handled,
        skipped: skipped_at,
        judges: Vec::new(),
        invoked,
    }
}

/// The schema a binding is given, as written (several tools joined by commas).
fn schema_text(c: &CallInfo) -> String {
    let schema_expr = c.args.first().or_else(|| {
        c.kwargs
            .iter()
            .find(|(k, _)| k == "schema" || k == "tools")
            .map(|(_, v)| v)
    });
    match schema_expr {
        Some(Expr::List(items)) => items
            .iter()
            .map(|i| i.render())
            .collect::<Vec<_>>()
            .join(", "),
        Some(e) => e.render(),
        None => String::new(),
    }
}

/// What retries binding `c` where it is made, first found first: a retry loop around it or
/// its invocations, a second invocation in the handler of their `try`, a retry decorator on
/// its function, `with_retry`, a RetryPolicy on the node that runs its function, a retry loop
/// elsewhere in the module.
fn binding_retry(
    repo: &Repo<'_>,
    m: usize,
    c: &CallInfo,
    func: Option<&FuncInfo>,
    invokes: &[&CallInfo],
    around: &Around,
) -> Option<Retry> {
    let module = &repo.modules[m];
    let looped = invokes
        .iter()
        .copied()
        .find(|o| retry_loop(o))
        .or_else(|| retry_loop(c).then_some(c));
    if let Some(looped) = looped.filter(|l| !single_pass(repo, m, l)) {
        return Some(Retry::Loop {
            at: site(module, looped.line),
            attempts: loop_attempts(repo, m, looped),
        });
    }
    if (c.in_try || invokes.iter().any(|o| o.in_try))
        && let Some(again) = invokes.iter().find(|o| o.in_except)
    {
        return Some(Retry::Reinvoked {
            at: site(module, again.line),
            unbound: false,
        });
    }
    if let Some(f) = func
        && let Some(d) = f.decorators.iter().find(|d| retry_decorator(repo, m, d))
    {
        return Some(Retry::Decorator {
            at: site(module, f.line),
            decorator: super::syntax::truncate(d, 60),
        });
    }
    let with_retry = if c.chained.as_deref() == Some("with_retry") {
        Some(c.line)
    } else {
        c.assigned_to.as_deref().and_then(|v| {
            around
                .retried
                .iter()
                .find(|(r, _)| *r == v)
                .map(|(_, l)| *l)
        })
    };
    if let Some(line) = with_retry {
        return Some(Retry::WithRetry {
            at: site(module, line),
        });
    }
    if let Some(f) = func
        && let Some(policy) = node_policy(repo, f, around.policies)
    {
        return Some(policy);
    }
    around
        .module_loop
        .as_ref()
        .map(|(at, attempts)| Retry::Loop {
            at: at.clone(),
            attempts: *attempts,
        })
}

/// What holds what a binding makes.
struct Holders {
    /// The bound runnable, followed through variables, attributes, returns and arguments.
    bound: Vec<Holder>,
    /// The unbound model.
    raw: Vec<Holder>,
}

/// Where the runnable bound by `c` is invoked, each place once, in path and line order, with
/// what retries and handles it there; a second call in the handler of another's `try` (its
/// re-attempt) and an invocation under the test that hands over the unbound model instead
/// (`skipped_at`) left out. `retry_by`: what retries the binding where it is made.
fn invocations(
    repo: &Repo<'_>,
    m: usize,
    c: &CallInfo,
    holders: &Holders,
    skipped_at: Option<&Site>,
    retry_by: Option<&Retry>,
    around: &Around,
) -> Vec<Invoked> {
    let module = &repo.modules[m];
    let method = c.method.as_str();
    let mut found = uses(repo, &holders.bound);
    if let Some(chained) = c.chained.as_deref().filter(|x| INVOKE.contains(x))
        && let Some(o) = module.calls.iter().find(|o| {
            o.func == c.func
                && o.method == chained
                && o.line >= c.line
                && o.receiver.as_deref().is_some_and(|r| r.contains(method))
        })
    {
        found.push(Use {
            m,
            call: o,
            handed: None,
        });
    }
    // a second call in the handler of another's `try` is that call's re-attempt
    let again = |u: &Use<'_>| {
        found.iter().any(|o| {
            o.m == u.m
                && o.call.func == u.call.func
                && o.call.try_line.is_some()
                && u.call.handler.as_ref().map(|(l, _)| *l) == o.call.try_line
        })
    };
    // what holds the bound runnable is given the unbound model under a test: an invocation
    // under the same test runs the unbound model (no structured call)
    let unbound_when: Vec<(String, bool)> = skipped_at
        .and_then(|at| {
            let sm = repo.modules.iter().find(|x| x.path == at.path)?;
            branches_of(sm, at.line).into_iter().next()
        })
        .into_iter()
        .collect();
    let unbound_only = |u: &Use<'_>| {
        let mine = branches_of(&repo.modules[u.m], u.call.line);
        unbound_when.iter().any(|w| mine.contains(w))
    };
    let mut invoked: Vec<Invoked> = Vec::new();
    for u in found.iter().filter(|u| !again(u) && !unbound_only(u)) {
        let at = site(&repo.modules[u.m], u.call.line);
        if invoked.iter().any(|i| i.at == at) {
            continue;
        }
        let by = use_retry(repo, u, &holders.bound, &holders.raw, around.policies).or_else(|| {
            // what was found for the binding holds for an invocation beside it
            (u.m == m && u.call.func == c.func)
                .then(|| retry_by.cloned())
                .flatten()
        });
        invoked.push(Invoked {
            at,
            judges: Vec::new(),
            retry_by: by,
            handled: u.call.try_line.map(|l| site(&repo.modules[u.m], l)),
            per_item: per_item(repo, u.m, u.call, 2),
            from_text: from_text(repo, u.m, u.call.func),
            item_written: if include_raw(c) {
                Vec::new()
            } else {
                item_written(&repo.modules[u.m], u.call)
            },
        });
    }
    invoked.sort_by(|a, b| (&a.at.path, a.at.line).cmp(&(&b.at.path, b.at.line)));
    invoked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    fn facts(src: &str) -> StructuredFacts {
        let ms = vec![parse_module("src/nodes/judges.py", src.into()).unwrap()];
        analyse(&Repo::new(&ms))
    }

    #[test]
    fn with_structured_output_in_a_retry_loop() {
        let f = facts(
            "def judge(llm, p):\n    s = llm.with_structured_output(JudicialOpinion)\n    for attempt in range(3):\n        try:\n            return s.invoke(p)\n        except ValidationError:\n            continue\n",
        );
        assert!(f.used);
        assert_eq!(f.calls[0].schema, "JudicialOpinion");
        assert!(f.calls[0].retry);
    }

    #[test]
    fn bind_tools_without_retry() {
        let f = facts(
            "def judge(llm, p):\n    return llm.bind_tools([JudicialOpinion, Other]).invoke(p)\n",
        );
        assert_eq!(f.calls[0].method, "bind_tools");
        assert_eq!(f.calls[0].schema, "JudicialOpinion, Other");
        assert!(!f.calls[0].retry);
        assert!(!facts("def judge(llm, p):\n    return llm.invoke(p)\n").used);
    }

    fn by(src: &str) -> Option<Retry> {
        facts(src).calls[0].retry_by.clone()
    }

    #[test]
    fn a_reply_written_like_a_dict() {
        let judge = |extra: &str, kw: &str| {
            format!(
                "def judge(llm, p, name):\n    chain = llm.with_structured_output(JudicialOpinion{kw})\n    opinion = chain.invoke(p)\n{extra}    opinion[\"judge\"] = name\n    return opinion\n"
            )
        };
        let written = |src: String| facts(&src).calls[0].invoked[0].item_written.clone();
        assert_eq!(
            written(judge("", "")),
            vec![(
                Site::new("src/nodes/judges.py", 4),
                "opinion[\"judge\"]".to_string()
            )]
        );
        // every write is said
        assert_eq!(
            written(judge("    opinion[\"criterion_id\"] = p\n", "")).len(),
            2
        );
        // a reply made a dict first, a type test, or include_raw (a dict of raw and parsed)
        assert!(written(judge("    opinion = opinion.model_dump()\n", "")).is_empty());
        assert!(
            written(judge(
                "    if isinstance(opinion, dict):\n        pass\n",
                ""
            ))
            .is_empty()
        );
        assert!(written(judge("", ", include_raw=True")).is_empty());
    }

    #[test]
    fn a_failed_reply_read_from_free_text_in_the_handler() {
        let body = "    s = llm.with_structured_output(JudicialOpinion)\n    for attempt in range(3):\n        try:\n            return s.invoke(p)\n        except Exception:\n            raw = llm.invoke(p)\n";
        let parse = "m = re.search(r'{.*}', raw.content)\n            return JudicialOpinion(**json.loads(m.group(0)))\n";
        let recovered = format!("import json, re\ndef judge(llm, p):\n{body}            {parse}");
        let f = facts(&recovered);
        let i = &f.calls[0].invoked;
        assert_eq!(i.len(), 1, "{i:?}");
        assert_eq!(i[0].from_text, Some(Site::new("src/nodes/judges.py", 10)));
        // the same parsing outside the failure path is no recovery of this call
        let apart = format!(
            "import json, re\ndef judge(llm, p):\n{body}            continue\n\ndef read(raw):\n    {}",
            parse.replace("            ", "    ")
        );
        let f = facts(&apart);
        assert_eq!(f.calls[0].invoked[0].from_text, None);
        assert!(!f.json_text.is_empty());
    }

    #[test]
    fn a_try_alone_is_error_handling_and_max_retries_is_the_transport() {
        let src = "from langchain_openai import ChatOpenAI\ndef judge(p):\n    llm = ChatOpenAI(model='m', max_retries=3)\n    s = llm.with_structured_output(JudicialOpinion)\n    try:\n        return s.invoke(p)\n    except Exception:\n        return None\n";
        let f = facts(src);
        let c = &f.calls[0];
        assert_eq!(c.retry_by, None);
        assert!(!c.retry);
        assert_eq!(c.handled, Some(Site::new("src/nodes/judges.py", 5)));
        assert_eq!(
            c.transport,
            Some((Site::new("src/nodes/judges.py", 3), "3".into()))
        );
        // a loop over the criteria, a try per criterion: no second attempt
        let src = "def judge(llm, dims):\n    s = llm.with_structured_output(JudicialOpinion)\n    out = []\n    for d in dims:\n        try:\n            out.append(s.invoke(d))\n        except Exception:\n            out.append(None)\n    return out\n";
        assert_eq!(by(src), None);
    }

    #[test]
    fn retries_that_make_the_call_again() {
        let w = "def judge(llm, p):\n    s = llm.with_structured_output(JudicialOpinion)\n    attempt = 0\n    while attempt < 3:\n        try:\n            return s.invoke(p)\n        except ValueError:\n            attempt += 1\n";
        assert!(matches!(by(w), Some(Retry::Loop { attempts: None, .. })));
        // the attempts a `for` loop makes, read from its range
        let ranged = |head: &str, range: &str| {
            format!(
                "{head}def judge(llm, p):\n    s = llm.with_structured_output(JudicialOpinion)\n    for attempt in {range}:\n        try:\n            return s.invoke(p)\n        except ValueError:\n            continue\n"
            )
        };
        let attempts = |src: String| match by(&src) {
            Some(Retry::Loop { attempts, .. }) => attempts,
            other => panic!("{other:?}"),
        };
        assert_eq!(attempts(ranged("", "range(2)")), Some(2));
        assert_eq!(
            attempts(ranged("MAX_RETRIES = 3\n", "range(1, MAX_RETRIES + 1)")),
            Some(3)
        );
        assert_eq!(attempts(ranged("", "range(n)")), None);
        // a loop of one attempt makes nothing again
        let one = by(&ranged("", "range(1)"));
        assert!(one.is_none(), "{one:?}");
        // numbers a submission writes to overflow are no count (and no panic)
        assert_eq!(
            attempts(ranged(
                "",
                "range(0 - 9223372036854775807 - 1, 9223372036854775807)"
            )),
            None
        );
        let again = "def judge(llm, p):\n    s = llm.with_structured_output(JudicialOpinion)\n    try:\n        return s.invoke(p)\n    except ValueError:\n        return s.invoke(p + ' Reply with valid JSON.')\n";
        assert!(matches!(by(again), Some(Retry::Reinvoked { .. })));
        let tenacity = "from tenacity import retry, stop_after_attempt\n@retry(stop=stop_after_attempt(3))\ndef judge(llm, p):\n    return llm.with_structured_output(JudicialOpinion).invoke(p)\n";
        assert!(matches!(by(tenacity), Some(Retry::Decorator { .. })));
        let policy = "from langgraph.types import RetryPolicy\ndef judge(state):\n    return llm.with_structured_output(JudicialOpinion).invoke(state)\ndef build(g):\n    g.add_node('judge', judge, retry=RetryPolicy(max_attempts=3))\n";
        assert_eq!(
            by(policy),
            Some(Retry::NodePolicy {
                at: Site::new("src/nodes/judges.py", 5)
            })
        );
        // a function named for a retry that calls once is no retry
        let named = "def retry_with_backoff(llm, p):\n    return llm.with_structured_output(JudicialOpinion).invoke(p)\n";
        assert_eq!(by(named), None);
        // nor a decorator of the student's own module called `retry` that calls once
        let own = "def retry(f):\n    return f\n";
        let judge = "from retry import retry\n@retry\ndef judge(llm, p):\n    return llm.with_structured_output(JudicialOpinion).invoke(p)\n";
        let ms = vec![
            parse_module("retry.py", own.into()).unwrap(),
            parse_module("src/nodes/judges.py", judge.into()).unwrap(),
        ];
        assert_eq!(analyse(&Repo::new(&ms)).calls[0].retry_by, None);
    }

    /// The invocations of the first binding: (line, retry).
    fn invoked(ms: &[ModuleInfo]) -> Vec<(usize, Option<Retry>)> {
        analyse(&Repo::new(ms)).calls[0]
            .invoked
            .iter()
            .map(|i| (i.at.line, i.retry_by.clone()))
            .collect()
    }

    fn one(path: &str, src: &str) -> Vec<ModuleInfo> {
        vec![parse_module(path, src.into()).unwrap()]
    }

    #[test]
    fn a_bound_model_kept_on_the_instance_is_followed_to_a_helper_that_loops() {
        // bound in a factory method, kept on the instance, invoked in a lambda handed to a
        // module function that calls what it is given again in a loop
        let src = "\
def call_with_backoff(thunk, tries=4):
    for n in range(tries):
        try:
            return thunk()
        except Exception:
            time.sleep(n)

class Grader:
    def __init__(me, chat):
        me.out = me.make(chat)

    def make(me, chat):
        return chat.with_structured_output(Verdict)

    def grade(me, text):
        reply = call_with_backoff(lambda: me.out.invoke(text), tries=2)
        return reply
";
        let got = invoked(&one("app/grader.py", src));
        assert_eq!(
            got,
            vec![(
                16,
                Some(Retry::Helper {
                    at: Site::new("app/grader.py", 4),
                    helper: "call_with_backoff".into()
                })
            )]
        );
        let f = facts(src);
        assert!(f.calls[0].retry, "every invocation is retried");
        // a function that calls what it is given once is no retry, whatever its name
        let once = src.replace(
            "    for n in range(tries):\n        try:\n            return thunk()\n        except Exception:\n            time.sleep(n)\n",
            "    try:\n        return thunk()\n    except Exception:\n        return None\n",
        );
        let once = once.replace("call_with_backoff", "retry_with_backoff");
        assert_eq!(invoked(&one("app/grader.py", &once)), vec![(15, None)]);
    }

    #[test]
    fn a_nested_function_or_a_bound_method_handed_to_a_looping_method() {
        let nested = "\
class Panel:
    def setup(this, model):
        this.judge = model.with_structured_output(Opinion)

    def again(this, work, limit=3):
        left = limit
        while left:
            try:
                return work()
            except ValueError:
                left -= 1

    def ask(this, p):
        def attempt():
            return this.judge.invoke(p)
        return this.again(attempt)
";
        assert_eq!(
            invoked(&one("judges/panel.py", nested)),
            vec![(
                15,
                Some(Retry::Helper {
                    at: Site::new("judges/panel.py", 9),
                    helper: "again".into()
                })
            )]
        );
        let handed = "\
def repeat(fn, arg):
    for _ in range(3):
        try:
            return fn(arg)
        except Exception:
            pass

def ask(model, p):
    bound = model.bind_tools([Opinion])
    return repeat(bound.invoke, p)
";
        assert_eq!(
            invoked(&one("judges/ask.py", handed)),
            vec![(
                10,
                Some(Retry::Helper {
                    at: Site::new("judges/ask.py", 4),
                    helper: "repeat".into()
                })
            )]
        );
    }

    #[test]
    fn the_unbound_model_asked_again_in_the_handler_of_an_invalid_reply() {
        let src = "\
from pydantic import ValidationError
class Bench:
    def __init__(self, base):
        self.base = base
        self.typed = base.with_structured_output(Ruling)

    def rule(self, msgs):
        try:
            return self.typed.invoke(msgs)
        except ValidationError:
            text = self.base.invoke(msgs + ['JSON only'])
            return Ruling.model_validate_json(text.content)
";
        let ms = one("court/bench.py", src);
        assert_eq!(
            invoked(&ms),
            vec![(
                9,
                Some(Retry::Reinvoked {
                    at: Site::new("court/bench.py", 11),
                    unbound: true
                })
            )]
        );
        // a handler for another error is no re-attempt of an invalid reply
        let other = src.replace("except ValidationError:", "except KeyError:");
        assert_eq!(invoked(&one("court/bench.py", &other)), vec![(9, None)]);
        // the bound runnable asked again in its handler: one call, made again
        let bound = src.replace("self.base.invoke(msgs", "self.typed.invoke(msgs");
        let f = facts(&bound);
        assert_eq!(f.calls[0].invoked.len(), 1);
        assert_eq!(
            f.calls[0].invoked[0].retry_by,
            Some(Retry::Reinvoked {
                at: Site::new("src/nodes/judges.py", 11),
                unbound: false
            })
        );
    }

    #[test]
    fn an_attribute_bound_in_a_base_class_is_followed_into_its_subclasses() {
        let base = "\
class Base:
    def __init__(self, llm):
        self.s = llm.with_structured_output(Opinion)
";
        let sub = "\
from agents.base import Base
class Critic(Base):
    def run(self, p):
        return self.s.invoke(p)
class Other:
    def run(self, p):
        return self.s.invoke(p)
";
        let ms = vec![
            parse_module("agents/base.py", base.into()).unwrap(),
            parse_module("agents/critic.py", sub.into()).unwrap(),
        ];
        let f = analyse(&Repo::new(&ms));
        let at: Vec<Site> = f.calls[0].invoked.iter().map(|i| i.at.clone()).collect();
        assert_eq!(at, vec![Site::new("agents/critic.py", 4)]);
    }

    #[test]
    fn a_runnable_piped_into_a_chain_and_passed_to_a_function_that_loops() {
        let src = "\
def attempt_many(runnable, n=3):
    for i in range(n):
        try:
            return runnable.invoke({})
        except Exception:
            continue

def ruling(model, prompt):
    typed = model.with_structured_output(Ruling)
    pipeline = prompt | typed
    return attempt_many(pipeline)
";
        assert_eq!(
            invoked(&one("core/rule.py", src)),
            vec![(
                4,
                Some(Retry::Loop {
                    at: Site::new("core/rule.py", 4),
                    attempts: None,
                })
            )]
        );
        // the chain invoked once, no loop: not made again, cited where it is invoked
        let once = "\
def ruling(model, prompt):
    pipeline = prompt | model.bind_tools([Ruling])
    out = pipeline.invoke({})
    return out
";
        assert_eq!(invoked(&one("core/rule.py", once)), vec![(3, None)]);
    }

    #[test]
    fn a_holder_given_the_unbound_model_on_another_branch_is_recorded() {
        let src = "\
class Assessor:
    def __init__(self, client, plain):
        self.client = client
        if plain:
            self.runner = self.client
        else:
            self.runner = self.client.with_structured_output(Score)

    def assess(self, p):
        return self.runner.invoke(p)
";
        let f = facts(src);
        assert_eq!(
            f.calls[0].skipped,
            Some(Site::new("src/nodes/judges.py", 5))
        );
        assert_eq!(f.calls[0].invoked[0].at.line, 10);
        // always bound: nothing skipped
        let always = src.replace("self.runner = self.client\n", "self.runner = None\n");
        assert_eq!(facts(&always).calls[0].skipped, None);
    }

    #[test]
    fn an_invocation_under_the_test_that_gives_the_unbound_model_is_no_structured_call() {
        let src = "\
class Assessor:
    def __init__(self, client, plain):
        self.client = client
        self.plain = plain
        if self.plain:
            self.runner = self.client
        else:
            self.runner = self.client.with_structured_output(Score)

    def assess(self, p):
        if self.plain:
            return self.runner.invoke(p + ' as JSON')
        return self.runner.invoke(p)
";
        let f = facts(src);
        assert_eq!(
            f.calls[0].skipped,
            Some(Site::new("src/nodes/judges.py", 6))
        );
        let at: Vec<usize> = f.calls[0].invoked.iter().map(|i| i.at.line).collect();
        assert_eq!(at, vec![13]);
        // under another test: both invocations may run the bound runnable
        let other = src.replace(
            "        if self.plain:\n            return",
            "        if p:\n            return",
        );
        let at: Vec<usize> = facts(&other).calls[0]
            .invoked
            .iter()
            .map(|i| i.at.line)
            .collect();
        assert_eq!(at, vec![12, 13]);
    }

    #[test]
    fn max_retries_is_read_on_a_model_librarys_client_by_its_import_not_its_name() {
        let with = |import: &str, ctor: &str| {
            let src = format!(
                "{import}\ndef judge(p):\n    c = {ctor}(model='m', max_retries=4)\n    return c.with_structured_output(Opinion).invoke(p)\n"
            );
            facts(&src).calls[0].transport.clone()
        };
        let at = Some((Site::new("src/nodes/judges.py", 3), "4".into()));
        assert_eq!(with("from langchain_groq import ChatGroq", "ChatGroq"), at);
        assert_eq!(
            with("from anthropic import Anthropic as Client", "Client"),
            at
        );
        assert_eq!(with("import openai", "openai.OpenAI"), at);
        // a class of the repository named like a client, or a name never imported: not one
        assert_eq!(with("class ChatModel:\n    pass", "ChatModel"), None);
        assert_eq!(with("", "ChatOpenAI"), None);
    }

    #[test]
    fn parsers_and_json_cut_from_text_are_recorded() {
        let src = "import json, re\nfrom langchain_core.output_parsers import PydanticOutputParser\ndef judge(llm, p):\n    parser = PydanticOutputParser(pydantic_object=JudicialOpinion)\n    return parser.parse(llm.invoke(p).content)\ndef other(llm, p):\n    text = llm.invoke(p).content\n    m = re.search(r'\\{.*\\}', text)\n    return json.loads(m.group(0))\n";
        let f = facts(src);
        assert!(!f.used);
        assert_eq!(f.parsers.len(), 1);
        assert_eq!(f.parsers[0].0, Site::new("src/nodes/judges.py", 4));
        assert_eq!(f.json_text[0].0, Site::new("src/nodes/judges.py", 9));
    }
}
