//! Security facts: calls that run a shell or evaluate code, and how repositories are cloned.
//!
//! A finding is reported only for a *call* whose callee resolves to the dangerous function:
//! `os.system`, `os.popen`, `subprocess.*` with a literal `shell=True` (and
//! `subprocess.getoutput`/`getstatusoutput`, which always use a shell),
//! `asyncio.create_subprocess_shell`, the builtins `eval`/`exec` (not shadowed by a local
//! definition or import; `ast.literal_eval` and `model.eval()` are not), plus
//! `string_built_shell_command` when such a shell call's command is built at run time (f-string,
//! `+`, `%`, `.format`). Strings and comments never produce findings (they are not calls).
//! `subprocess.run([...])` without `shell=True` is not a finding.
//!
//! A clone is a call whose command is `git clone ...`: a list literal, or a local variable
//! assigned one, given to `subprocess`/`os` directly or to the repository's own wrapper (a
//! function that passes one of its parameters to `subprocess` as the command, like
//! `run(cmd)` → `subprocess.run(cmd, ...)`). It is sandboxed when it sits in a
//! `with tempfile.TemporaryDirectory()` or its function makes a temp dir (`mkdtemp`, ...).

use super::expr::Expr;
use super::names::Repo;
use super::syntax::{CallInfo, FuncInfo, ModuleInfo};
use crate::model::fact::Site;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: String,
    pub path: String,
    pub line: usize,
    pub snippet: String,
    /// Why this is a problem, in one sentence.
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloneCall {
    pub path: String,
    pub line: usize,
    pub snippet: String,
    /// Inside `with tempfile.TemporaryDirectory()` or a function that makes a temp dir.
    pub sandboxed: bool,
    /// Inside `try`, with `check=True`, or the function checks `returncode`.
    pub error_handled: bool,
    /// The enclosing function catches or mentions authentication failures.
    pub auth_handled: bool,
    pub function: Option<String>,
    /// The command is a list of arguments (no shell parses it).
    #[serde(default)]
    pub list_args: bool,
    /// The repository's own wrapper the command goes through (`path:line qualname`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(skip)]
    pub function_snippet: String,
    /// The callee as written (`subprocess.run`, `Repo.clone_from`, the wrapper's name).
    #[serde(default)]
    pub callee: String,
    /// Where its temporary directory is made (the `TemporaryDirectory`/`mkdtemp` call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_at: Option<Site>,
    /// Where its failure is caught or checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handled_at: Option<Site>,
    /// The timeout it passes (its own `timeout=`, or its wrapper's), as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// `--depth N` / `depth=N`, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<String>,
    /// Checks of the URL made before it (in its function or a caller's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub url_checks: Vec<Site>,
    /// Tests of its error for a kind (authentication, not found, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_tests: Vec<Site>,
    /// Its temporary directory is removed when its function returns, while the function
    /// returns the path: (the directory's site, the function).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_early: Option<(Site, String)>,
}

/// A subprocess, git or network call and the timeout it passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalCall {
    pub at: Site,
    pub callee: String,
    pub timeout: Option<String>,
    pub clone: bool,
}

/// A function of the repository that runs one of its parameters as a command.
struct Wrapper {
    module: usize,
    func: usize,
    /// Index of the parameter given to `subprocess` as the command.
    param: usize,
    shell: bool,
    /// Where this function hands the command on (to `subprocess`, or to another wrapper).
    line: usize,
    /// Words put before the parameter on the way (`["git"] + args` → `git`).
    prefix: Vec<String>,
    /// The `subprocess`/`os` call the command finally reaches (module, line).
    shell_call: (usize, usize),
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SecurityFacts {
    pub findings: Vec<Finding>,
    /// At least one clone call and every clone call sandboxed.
    pub sandboxed_clone: bool,
    pub clone_calls: Vec<CloneCall>,
    /// `subprocess` calls without a shell (the safe form), for the record.
    pub subprocess_calls: usize,
    /// Every subprocess, git and network call of the product code (tests aside).
    #[serde(default)]
    pub externals: Vec<ExternalCall>,
    /// Where a directory is removed (`shutil.rmtree`, `.cleanup()`, the exit of a
    /// `with tempfile.TemporaryDirectory()` holding a clone).
    #[serde(default)]
    pub removals: Vec<Site>,
    /// Python files of the product code (tests aside) searched.
    #[serde(default)]
    pub files: usize,
    /// Clones whose `--depth` is added only on one branch of an `if` (see [`ShallowOnly`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shallow_only: Vec<ShallowOnly>,
}

/// A clone made shallow on one branch only: its command gets `--depth` inside an `if` (or
/// `else`) that the clone itself is not in (`if not full_history: cmd.extend(["--depth", "1"])`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShallowOnly {
    /// The clone call.
    pub clone: Site,
    /// The branch's line.
    pub at: Site,
    /// The branch's line as written (`if not full_history:`).
    pub branch: String,
    /// Whether the branch is taken with the defaults of the function's parameters it tests
    /// (`None`: they do not decide it).
    pub by_default: Option<bool>,
    /// Those parameters and their defaults, as written.
    pub defaults: Vec<(String, String)>,
}

const SUBPROCESS: &[&str] = &[
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
];
const TEMP: &[&str] = &[
    "tempfile.TemporaryDirectory",
    "tempfile.mkdtemp",
    "tempfile.TemporaryFile",
];

/// The last segments of every shell-running target checked below.
const SHELL_LAST_NAMES: &[&str] = &[
    "system",
    "popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "getoutput",
    "getstatusoutput",
    "create_subprocess_shell",
];

fn kw<'c>(c: &'c CallInfo, name: &str) -> Option<&'c Expr> {
    c.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

pub fn analyse(repo: &Repo<'_>) -> SecurityFacts {
    let mut facts = SecurityFacts::default();
    let wrappers = wrappers(repo);
    for (m, module) in repo.modules.iter().enumerate() {
        let builtin = |name: &str| {
            !module.imports.contains_key(name)
                && !module.functions.iter().any(|f| f.name == name)
                && !module.constants.contains_key(name)
        };
        for c in &module.calls {
            let Some(callee) = c.callee.as_deref() else {
                continue;
            };
            let mut push = |kind: &str, detail: String| {
                facts.findings.push(Finding {
                    kind: kind.to_string(),
                    path: module.path.clone(),
                    line: c.line,
                    snippet: c.snippet.clone(),
                    detail,
                });
            };
            let mut shell = false;
            // Every shell target below ends in one of these names; the other calls (nearly
            // all of them) need no name resolution.
            let shell_candidate = SHELL_LAST_NAMES.contains(&repo.last_segment(m, callee));
            let is = |targets: &[&str]| shell_candidate && repo.is(m, callee, targets);
            if is(&["os.system"]) {
                push(
                    "os_system",
                    "os.system runs its argument through the shell with no error handling".into(),
                );
                shell = true;
            } else if is(&["os.popen"]) {
                push(
                    "os_popen",
                    "os.popen runs its argument through the shell".into(),
                );
                shell = true;
            } else if is(SUBPROCESS) {
                facts.subprocess_calls += 1;
                if matches!(kw(c, "shell"), Some(Expr::Bool(true))) {
                    push(
                        "subprocess_shell",
                        "subprocess with shell=True runs the command through the shell".into(),
                    );
                    shell = true;
                }
            } else if is(&["subprocess.getoutput", "subprocess.getstatusoutput"])
                || is(&["asyncio.create_subprocess_shell"])
            {
                push(
                    "subprocess_shell",
                    format!("{callee} always runs the command through the shell"),
                );
                shell = true;
            } else if callee == "eval" && builtin("eval") {
                push("eval", "eval executes a string as Python code".into());
            } else if callee == "exec" && builtin("exec") {
                push("exec", "exec executes a string as Python code".into());
            }
            // Only a shell call's command matters (checked for shell calls alone).
            let built = || {
                c.args
                    .first()
                    .or_else(|| kw(c, "args"))
                    .or_else(|| kw(c, "cmd"))
                    .is_some_and(Expr::is_built_string)
            };
            if shell && built() {
                push(
                    "string_built_shell_command",
                    "the shell command is built from strings at run time (injection risk)".into(),
                );
            }
        }
        // clone calls
        for c in &module.calls {
            let Some(cmd) = clone_command(repo, m, c, &wrappers) else {
                continue;
            };
            let call = clone_call(repo, m, c, cmd);
            if call.depth.is_some()
                && let Some(only) = shallow_only(module, c)
            {
                facts.shallow_only.push(only);
            }
            facts.clone_calls.push(call);
        }
    }
    facts.files = repo.modules.iter().filter(|m| !is_test(&m.path)).count();
    facts.externals = externals(repo, &facts.clone_calls);
    facts.removals = removals(repo, &facts.clone_calls);
    facts.sandboxed_clone =
        !facts.clone_calls.is_empty() && facts.clone_calls.iter().all(|c| c.sandboxed);
    facts
}

/// A test of the submission (its tests are not its tools).
pub(crate) fn is_test(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    path.split('/').any(|seg| seg == "tests" || seg == "test")
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file == "conftest.py"
}

fn site(module: &ModuleInfo, line: usize) -> Site {
    Site::new(module.path.clone(), line)
}

/// The index of a function of module `m`.
fn func_index(repo: &Repo<'_>, m: usize, f: &FuncInfo) -> Option<usize> {
    repo.modules[m]
        .functions
        .iter()
        .position(|g| std::ptr::eq(g, f))
}

/// The calls of the repository to function `fi` of module `m`: (module, call).
fn callers<'a>(repo: &Repo<'a>, m: usize, fi: usize) -> Vec<(usize, &'a CallInfo)> {
    let name = repo.modules[m].functions[fi].name.as_str();
    let mut out = Vec::new();
    for (k, module) in repo.modules.iter().enumerate() {
        for c in &module.calls {
            let Some(callee) = c.callee.as_deref() else {
                continue;
            };
            if c.method != name && callee != name {
                continue;
            }
            if let Some((wm, f)) = repo.function(k, callee)
                && wm == m
                && func_index(repo, wm, f) == Some(fi)
                && !(k == m && c.func == Some(fi))
            {
                out.push((k, c));
            }
        }
    }
    out
}

/// The timeout a call passes, as written (`timeout=`, GitPython's `kill_after_timeout=`).
fn timeout_of(c: &CallInfo) -> Option<String> {
    kw(c, "timeout")
        .or_else(|| kw(c, "kill_after_timeout"))
        .filter(|v| !matches!(v, Expr::None))
        .map(|v| crate::repo::python::syntax::truncate(&v.render(), 40))
}

/// What [`clone_command`] found.
struct CloneCmd {
    list_args: bool,
    via: Option<String>,
    /// The wrapper's own subprocess call (module, line).
    wrapper_call: Option<(usize, usize)>,
    /// The command's words (a list command), for `--depth`.
    words: Vec<String>,
    lib: bool,
}

/// The depth a clone is limited to, as written.
fn depth_of(c: &CallInfo, cmd: &CloneCmd) -> Option<String> {
    if cmd.lib {
        if let Some(d) = kw(c, "depth") {
            return Some(d.render());
        }
        if let Some(Expr::List(items)) = kw(c, "multi_options") {
            let words: Vec<String> = items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect();
            return depth_in(&words);
        }
        return None;
    }
    depth_in(&cmd.words)
}

fn depth_in(words: &[String]) -> Option<String> {
    for (i, w) in words.iter().enumerate() {
        if let Some(d) = w.strip_prefix("--depth=") {
            return Some(d.to_string());
        }
        if w == "--depth" {
            return Some(words.get(i + 1).cloned().unwrap_or_else(|| "?".into()));
        }
    }
    None
}

const URL_CHECKS: &[&str] = &[
    "re.match",
    "re.fullmatch",
    "re.search",
    "urllib.parse.urlparse",
    "urllib.parse.urlsplit",
    "validators.url",
];

/// A call that checks a text against a pattern or parses a URL: `re.match`, `urlparse`, a
/// compiled pattern's `.match`, or a function of the repository that makes one of these.
fn checks_url(repo: &Repo<'_>, m: usize, c: &CallInfo, depth: usize) -> bool {
    let Some(callee) = c.callee.as_deref() else {
        return false;
    };
    if repo.is(m, callee, URL_CHECKS) {
        return true;
    }
    if matches!(c.method.as_str(), "match" | "fullmatch" | "search")
        && let Some(recv) = c.receiver.as_deref()
        && let Some((_, Expr::Call { func, .. })) = repo.constant(m, recv)
        && func.dotted().is_some_and(|d| d.ends_with("compile"))
    {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let Some((wm, f)) = repo.function(m, callee) else {
        return false;
    };
    let Some(fi) = func_index(repo, wm, f) else {
        return false;
    };
    repo.modules[wm]
        .calls
        .iter()
        .filter(|o| o.func == Some(fi))
        .any(|o| checks_url(repo, wm, o, depth - 1))
        || repo.modules[wm]
            .ifs
            .iter()
            .filter(|i| i.func == Some(fi))
            .any(|i| scheme_test(&i.condition))
}

/// An `if` that tests a URL's scheme or host: `.startswith("https://")`, `"github.com" in`.
fn scheme_test(condition: &str) -> bool {
    let c = condition;
    (c.contains("startswith(") || c.contains(" in ") || c.contains("endswith("))
        && (c.contains("://") || c.contains("git@") || c.contains("github.com"))
}

/// The URL checks made before line `line` of function `fi` (its calls and `if`s).
fn url_checks_before(repo: &Repo<'_>, m: usize, fi: usize, line: usize) -> Vec<Site> {
    let module = &repo.modules[m];
    let mut out: Vec<Site> = module
        .calls
        .iter()
        .filter(|o| o.func == Some(fi) && o.line < line && checks_url(repo, m, o, 2))
        .map(|o| site(module, o.line))
        .collect();
    out.extend(
        module
            .ifs
            .iter()
            .filter(|i| i.func == Some(fi) && i.line < line && scheme_test(&i.condition))
            .map(|i| site(module, i.line)),
    );
    out.sort();
    out.dedup();
    out
}

/// `if`s that test an error's text for a kind: a string literal tested with `in`,
/// `startswith` or a regex.
fn kind_tests(repo: &Repo<'_>, m: usize, fi: usize, after: usize, depth: usize) -> Vec<Site> {
    let module = &repo.modules[m];
    let f = &module.functions[fi];
    let literal = |cond: &str| {
        (cond.contains('"') || cond.contains('\''))
            && (cond.contains(" in ") || cond.contains("startswith(") || cond.contains("search("))
    };
    let mut out: Vec<Site> = module
        .ifs
        .iter()
        .filter(|i| i.func == Some(fi) && i.line > after && literal(&i.condition))
        .map(|i| site(module, i.line))
        .collect();
    if depth > 0 {
        // a function of the repository handed the error after the clone (`classify(err)`)
        for c in module
            .calls
            .iter()
            .filter(|c| c.func == Some(fi) && c.line > after && !c.args.is_empty())
        {
            let Some(callee) = c.callee.as_deref() else {
                continue;
            };
            if let Some((wm, g)) = repo.function(m, callee)
                && !std::ptr::eq(g, f)
                && let Some(gi) = func_index(repo, wm, g)
            {
                out.extend(kind_tests(repo, wm, gi, 0, depth - 1));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The temporary directory a call sits in: an enclosing `with`, a temp dir its function
/// makes, or (one level up) one its caller makes or sits in.
fn sandbox_of(repo: &Repo<'_>, m: usize, c: &CallInfo) -> Option<Site> {
    if let Some(at) = module_temp(repo, m, c.func, c.line) {
        return Some(at);
    }
    let fi = c.func?;
    callers(repo, m, fi)
        .into_iter()
        .find_map(|(k, call)| module_temp(repo, k, call.func, call.line))
}

/// The temp dir of function `fi` of module `m` in use at `line`: its last temp-dir call at or
/// before `line` (a `with` item counts, a temp dir made later in the function too), either
/// `tempfile`'s own or a function of the repository that makes one and hands it back (a
/// `@contextmanager` that yields it, a function that returns it), cited where `tempfile` is
/// called.
fn module_temp(repo: &Repo<'_>, m: usize, fi: Option<usize>, line: usize) -> Option<Site> {
    let fi = fi?;
    let module = &repo.modules[m];
    let temps: Vec<(usize, Site)> = module
        .calls
        .iter()
        .filter(|o| o.func == Some(fi))
        .filter_map(|o| {
            let callee = o.callee.as_deref()?;
            if repo.is(m, callee, TEMP) {
                return Some((o.line, site(module, o.line)));
            }
            temp_factory(repo, m, callee).map(|at| (o.line, at))
        })
        .collect();
    temps
        .iter()
        .filter(|(l, _)| *l <= line)
        .max_by_key(|(l, _)| *l)
        .or_else(|| temps.iter().min_by_key(|(l, _)| *l))
        .map(|(_, at)| at.clone())
}

/// Where `tempfile` makes the temp dir that the repository's function `callee` hands back:
/// a `@contextmanager` (it yields) or a function with a `return` value, whose body calls
/// `tempfile` itself.
fn temp_factory(repo: &Repo<'_>, m: usize, callee: &str) -> Option<Site> {
    let (fm, f) = repo.function(m, callee)?;
    let hands_back =
        !f.returns.is_empty() || f.decorators.iter().any(|d| d.ends_with("contextmanager"));
    if !hands_back {
        return None;
    }
    let ffi = func_index(repo, fm, f)?;
    let module = &repo.modules[fm];
    module
        .calls
        .iter()
        .find(|o| {
            o.func == Some(ffi) && o.callee.as_deref().is_some_and(|cl| repo.is(fm, cl, TEMP))
        })
        .map(|o| site(module, o.line))
}

/// Where a clone's failure is caught or checked: the `try` around it, `check=True`, a
/// return-code test after it, or a caller's `try`.
fn handled_at(repo: &Repo<'_>, m: usize, c: &CallInfo) -> Option<Site> {
    let module = &repo.modules[m];
    if let Some(t) = c.try_line {
        return Some(site(module, t));
    }
    if matches!(kw(c, "check"), Some(Expr::Bool(true))) {
        return Some(site(module, c.line));
    }
    let fi = c.func?;
    if let Some(i) = module
        .ifs
        .iter()
        .find(|i| i.func == Some(fi) && i.line > c.line && i.condition.contains("returncode"))
    {
        return Some(site(module, i.line));
    }
    callers(repo, m, fi)
        .into_iter()
        .find_map(|(k, call)| call.try_line.map(|t| site(&repo.modules[k], t)))
}

/// A clone whose temporary directory goes when its function returns, while the function
/// returns the path: `with TemporaryDirectory() as d: ... return d`, or a local
/// `TemporaryDirectory()` object neither returned nor kept.
fn removed_early(repo: &Repo<'_>, m: usize, c: &CallInfo) -> Option<(Site, String)> {
    let module = &repo.modules[m];
    let fi = c.func?;
    let f = &module.functions[fi];
    if f.returns.iter().all(|r| matches!(r, Expr::None)) {
        return None;
    }
    let td = |o: &CallInfo| {
        o.func == Some(fi)
            && o.callee
                .as_deref()
                .is_some_and(|cl| repo.is(m, cl, &["tempfile.TemporaryDirectory"]))
    };
    let dir = module
        .calls
        .iter()
        .rev()
        .find(|o| td(o) && o.line <= c.line)?;
    let mentions = |e: &Expr, name: &str| {
        let r = e.render();
        r.split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
            .any(|w| w == name)
    };
    // paths derived from a name, one assignment deep (`os.path.join(d, name)`, `f"{d}/x"`)
    let path_of = |e: &Expr, name: &str| {
        mentions(e, name)
            && match e {
                Expr::Call { func, .. } => func.dotted().is_some_and(|d| {
                    matches!(
                        d.as_str(),
                        "os.path.join"
                            | "Path"
                            | "pathlib.Path"
                            | "str"
                            | "os.path.abspath"
                            | "os.path.realpath"
                    )
                }),
                Expr::Str { fstring, .. } => *fstring,
                Expr::BinOp { .. } => true,
                _ => false,
            }
    };
    let derived = |name: &str| -> Vec<String> {
        let mut v = vec![name.to_string()];
        for (local, values) in &f.locals {
            if values.iter().any(|e| path_of(e, name)) {
                v.push(local.clone());
            }
        }
        v
    };
    let body = module.snippet(f.line, f.end_line, 400);
    if c.withs
        .iter()
        .any(|w| repo.is(m, w, &["tempfile.TemporaryDirectory"]))
    {
        // `with tempfile.TemporaryDirectory() as d:` on the directory's line
        let text = module.line_text(dir.line);
        let target = text.split(" as ").nth(1)?;
        let target: String = target
            .chars()
            .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
            .collect();
        if target.is_empty() {
            return None;
        }
        let names = derived(&target);
        let returned = f.returns.iter().any(|r| {
            names.iter().any(|n| {
                matches!(r, Expr::Name(x) if x == n)
                    || path_of(r, n)
                    || matches!(r, Expr::List(items) if items.iter().any(|i| matches!(i, Expr::Name(x) if x == n)))
            })
        });
        return returned.then(|| (site(module, dir.line), f.qualname.clone()));
    }
    // `tmp = tempfile.TemporaryDirectory()`: the object is finalised on return unless it is
    // returned or kept (stored in a container, an attribute, a global)
    let obj = dir.assigned_to.as_deref()?;
    let kept = f.returns.iter().any(|r| match r {
        Expr::Name(n) => n == obj,
        Expr::List(items) => items.iter().any(|i| matches!(i, Expr::Name(n) if n == obj)),
        _ => false,
    }) || body.lines().any(|l| {
        let t = l.trim();
        let stores = t.contains(&format!("= {obj}"))
            && !t.starts_with(&format!("{obj} ="))
            && (t.contains('[') || t.contains('.'));
        let hands = t.contains(&format!("({obj})")) || t.contains(&format!("({obj},"));
        let yields = t.starts_with("yield");
        stores || hands || yields
    });
    (!kept).then(|| (site(module, dir.line), f.qualname.clone()))
}

fn clone_call(repo: &Repo<'_>, m: usize, c: &CallInfo, cmd: CloneCmd) -> CloneCall {
    let module = &repo.modules[m];
    let func = c.func.map(|f| &module.functions[f]);
    let sandbox_at = sandbox_of(repo, m, c);
    let handled = handled_at(repo, m, c);
    let body = func
        .map(|f| module.snippet(f.line, f.end_line, 200))
        .unwrap_or_default();
    let lower = body.to_lowercase();
    let auth_handled = func.is_some_and(|f| {
        f.excepts
            .iter()
            .any(|e| e.contains("GitCommandError") || e.contains("CalledProcessError"))
    }) && (lower.contains("auth")
        || lower.contains("permission")
        || lower.contains("credential")
        || lower.contains("stderr"));
    let timeout = timeout_of(c).or_else(|| {
        let (wm, line) = cmd.wrapper_call?;
        repo.modules[wm]
            .calls
            .iter()
            .find(|o| {
                o.line == line
                    && o.callee
                        .as_deref()
                        .is_some_and(|cl| repo.is(wm, cl, SUBPROCESS))
            })
            .and_then(timeout_of)
    });
    let mut url_checks = Vec::new();
    if let Some(fi) = c.func {
        url_checks = url_checks_before(repo, m, fi, c.line);
        for (k, call) in callers(repo, m, fi) {
            if let Some(ki) = call.func {
                url_checks.extend(url_checks_before(repo, k, ki, call.line));
            }
        }
    }
    url_checks.sort();
    url_checks.dedup();
    let error_tests = c
        .func
        .map(|fi| kind_tests(repo, m, fi, c.line, 1))
        .unwrap_or_default();
    CloneCall {
        path: module.path.clone(),
        line: c.line,
        snippet: c.snippet.clone(),
        sandboxed: sandbox_at.is_some(),
        error_handled: handled.is_some(),
        auth_handled: auth_handled || error_tests.len() >= 2,
        function: func.map(|f| f.qualname.clone()),
        list_args: cmd.list_args,
        via: cmd.via.clone(),
        function_snippet: func
            .map(|f| module.snippet(f.line, f.end_line, 40))
            .unwrap_or_default(),
        callee: c.callee.clone().unwrap_or_else(|| c.method.clone()),
        sandbox_at,
        handled_at: handled,
        timeout,
        depth: depth_of(c, &cmd),
        url_checks,
        error_tests,
        removed_early: removed_early(repo, m, c),
    }
}

const NETWORK: &[&str] = &[
    "requests.get",
    "requests.post",
    "requests.put",
    "requests.patch",
    "requests.delete",
    "requests.head",
    "requests.request",
    "httpx.get",
    "httpx.post",
    "httpx.request",
    "urllib.request.urlopen",
    "asyncio.create_subprocess_exec",
];

/// Every subprocess, git and network call of the product code, with the timeout it passes.
fn externals(repo: &Repo<'_>, clones: &[CloneCall]) -> Vec<ExternalCall> {
    let mut out = Vec::new();
    for (m, module) in repo.modules.iter().enumerate() {
        if is_test(&module.path) {
            continue;
        }
        for c in &module.calls {
            let Some(callee) = c.callee.as_deref() else {
                continue;
            };
            let clone = clones
                .iter()
                .find(|k| k.path == module.path && k.line == c.line);
            let external = repo.is(m, callee, SUBPROCESS) || repo.is(m, callee, NETWORK);
            if !external && clone.is_none() {
                continue;
            }
            // a wrapper's own call is counted once, at the wrapper
            let timeout = match clone {
                Some(k) => k.timeout.clone(),
                None => timeout_of(c),
            };
            out.push(ExternalCall {
                at: site(module, c.line),
                callee: callee.to_string(),
                timeout,
                clone: clone.is_some(),
            });
        }
    }
    out
}

/// Where the repository removes a directory: `shutil.rmtree`, a `.cleanup()`, or the exit of
/// the `with tempfile.TemporaryDirectory()` a clone runs in.
fn removals(repo: &Repo<'_>, clones: &[CloneCall]) -> Vec<Site> {
    let near = near_clones(repo, clones);
    let clone_files: Vec<&str> = clones.iter().map(|k| k.path.as_str()).collect();
    // a function whose clone's directory goes away too early: a removal there removes that
    // directory, which is charged as the defect, not credited as its cleanup
    let early: Vec<(&str, &str)> = clones
        .iter()
        .filter(|k| k.removed_early.is_some())
        .filter_map(|k| Some((k.path.as_str(), k.function.as_deref()?)))
        .collect();
    let mut out = Vec::new();
    for (m, module) in repo.modules.iter().enumerate() {
        if is_test(&module.path) {
            continue;
        }
        for c in &module.calls {
            let rm = c
                .callee
                .as_deref()
                .is_some_and(|cl| repo.is(m, cl, &["shutil.rmtree"]))
                || (c.method == "cleanup" && c.receiver.is_some() && c.args.is_empty());
            if !rm {
                continue;
            }
            let func = c.func.and_then(|i| module.functions.get(i));
            if func.is_some_and(|f| early.contains(&(module.path.as_str(), f.qualname.as_str()))) {
                continue;
            }
            let counts = match c.func {
                Some(f) => near.contains(&(m, f)),
                // module-level code of a file that clones
                None => clone_files.contains(&module.path.as_str()),
            };
            if counts {
                out.push(site(module, c.line));
            }
        }
    }
    out.extend(registry_removals(repo, clones));
    out.extend(temporary_directory_exits(repo, clones));
    out.sort();
    out.dedup();
    out
}

/// The functions (module, index) that clone (or make a clone's temporary directory), the
/// functions that call them, and the functions those call, sorted: a removal there can remove
/// the clone (one elsewhere removes something else: a folder of page images).
fn near_clones(repo: &Repo<'_>, clones: &[CloneCall]) -> Vec<(usize, usize)> {
    let mut near: Vec<(usize, usize)> = Vec::new();
    for k in clones {
        for (path, line) in [(k.path.as_str(), k.line)]
            .into_iter()
            .chain(k.sandbox_at.iter().map(|s| (s.path.as_str(), s.line)))
        {
            if let Some(m) = repo.modules.iter().position(|x| x.path == path)
                && let Some(f) = repo.modules[m]
                    .functions
                    .iter()
                    .position(|f| f.line <= line && line <= f.end_line)
            {
                near.push((m, f));
            }
        }
    }
    let calls = own_calls(repo);
    let cloning = near.clone();
    near.extend(
        calls
            .iter()
            .filter(|(_, callee)| cloning.contains(callee))
            .map(|(caller, _)| *caller),
    );
    let users = near.clone();
    near.extend(
        calls
            .iter()
            .filter(|(caller, _)| users.contains(caller))
            .map(|(_, callee)| *callee),
    );
    near.sort();
    near.dedup();
    near
}

/// Each function's calls of the repository's own functions, resolved once: (caller, callee),
/// each a (module, function index).
fn own_calls(repo: &Repo<'_>) -> Vec<((usize, usize), (usize, usize))> {
    let mut calls: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for (m, module) in repo.modules.iter().enumerate() {
        for c in &module.calls {
            let (Some(f), Some(callee)) = (c.func, c.callee.as_deref()) else {
                continue;
            };
            let Some((fm, g)) = repo.function(m, callee) else {
                continue;
            };
            if let Some(gi) = repo.modules[fm]
                .functions
                .iter()
                .position(|x| x.line == g.line)
            {
                calls.push(((m, f), (fm, gi)));
            }
        }
    }
    calls
}

/// The exits of the `with tempfile.TemporaryDirectory()` blocks clones run in (and whose
/// directory does not go away too early).
fn temporary_directory_exits(repo: &Repo<'_>, clones: &[CloneCall]) -> Vec<Site> {
    let mut out = Vec::new();
    for k in clones {
        if let (Some(at), true) = (&k.sandbox_at, k.removed_early.is_none())
            && let Some(m) = repo.modules.iter().position(|x| x.path == at.path)
            && repo.modules[m].calls.iter().any(|o| {
                o.line == at.line
                    && o.callee
                        .as_deref()
                        .is_some_and(|cl| repo.is(m, cl, &["tempfile.TemporaryDirectory"]))
                    && repo.modules[m]
                        .line_text(o.line)
                        .trim_start()
                        .starts_with("with ")
            })
        {
            out.push(at.clone());
        }
    }
    out
}

/// Removals of a clone's temporary directory kept in a module-level container: the function
/// that makes the directory puts the object (or the path) into a list or set of its module
/// (`_dirs.append(tmp)`), and a function of that module that the product code calls (or hands
/// to `atexit.register`) removes every item of it (`for d in _dirs: d.cleanup()`,
/// `shutil.rmtree(d)`, `_dirs.pop().cleanup()`). Whatever the names are, the directory is
/// removed once that function runs. A directory removed when its function returns (see
/// [`removed_early`]) is never credited here.
fn registry_removals(repo: &Repo<'_>, clones: &[CloneCall]) -> Vec<Site> {
    // (module, container) a clone's directory is put into
    let mut registries: Vec<(usize, String)> = Vec::new();
    for k in clones.iter().filter(|k| k.removed_early.is_none()) {
        let Some(at) = &k.sandbox_at else { continue };
        let Some(m) = repo.modules.iter().position(|x| x.path == at.path) else {
            continue;
        };
        let module = &repo.modules[m];
        let Some(dir) = module.calls.iter().find(|o| {
            o.line == at.line && o.callee.as_deref().is_some_and(|cl| repo.is(m, cl, TEMP))
        }) else {
            continue;
        };
        let (Some(fi), Some(obj)) = (dir.func, dir.assigned_to.as_deref()) else {
            continue;
        };
        let f = &module.functions[fi];
        for c in module.calls.iter().filter(|c| {
            c.func == Some(fi)
                && matches!(c.method.as_str(), "append" | "add" | "insert")
                && c.args
                    .iter()
                    .any(|a| matches!(a, Expr::Name(n) if n == obj))
        }) {
            let Some(recv) = c.receiver.as_deref() else {
                continue;
            };
            if module.constants.contains_key(recv) && !f.locals.contains_key(recv) {
                registries.push((m, recv.to_string()));
            }
        }
    }
    registries.sort();
    registries.dedup();
    let mut out = Vec::new();
    for (m, container) in registries {
        let module = &repo.modules[m];
        for c in &module.calls {
            let Some(gi) = c.func else { continue };
            // the item removed: the receiver of `.cleanup()`, or rmtree's argument
            let item = if c.method == "cleanup" && c.args.is_empty() {
                c.receiver.clone()
            } else if c
                .callee
                .as_deref()
                .is_some_and(|cl| repo.is(m, cl, &["shutil.rmtree"]))
            {
                c.args.first().map(|a| a.render())
            } else {
                None
            };
            let Some(item) = item else { continue };
            let item = item.strip_suffix(".name").unwrap_or(&item);
            let of_container = item.starts_with(&format!("{container}.pop("))
                || item.starts_with(&format!("{container}["))
                || c.loops.iter().any(|l| {
                    l.vars.iter().any(|v| v == item)
                        && matches!(&l.iter, Expr::Name(n) if *n == container)
                });
            if !of_container {
                continue;
            }
            let g = &module.functions[gi];
            let called = callers(repo, m, gi)
                .iter()
                .any(|(k, _)| !is_test(&repo.modules[*k].path))
                || repo.modules.iter().enumerate().any(|(k, other)| {
                    !is_test(&other.path)
                        && other.calls.iter().any(|o| {
                            o.callee
                                .as_deref()
                                .is_some_and(|cl| repo.is(k, cl, &["atexit.register"]))
                                && matches!(o.args.first(), Some(Expr::Name(n))
                                    if repo.function(k, n).is_some_and(|(fm, h)| fm == m && std::ptr::eq(h, g)))
                        })
                });
            if called {
                out.push(site(module, c.line));
            }
        }
    }
    out
}

/// The branch that makes clone `c` shallow, when its `--depth` is added to the command's list
/// (`cmd.extend(["--depth", "1"])`) inside an `if`, `elif` or `else` that the clone is not in.
fn shallow_only(module: &ModuleInfo, c: &CallInfo) -> Option<ShallowOnly> {
    let fi = c.func?;
    let f = &module.functions[fi];
    let names: Vec<&str> = c
        .args
        .iter()
        .chain(c.kwargs.iter().map(|(_, v)| v))
        .filter_map(|a| match a {
            Expr::Name(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    let depth_word = |e: &Expr| {
        let r = e.render();
        r.contains("--depth")
    };
    let adds = module.calls.iter().find(|o| {
        o.func == Some(fi)
            && o.line < c.line
            && matches!(o.method.as_str(), "extend" | "append" | "insert")
            && o.receiver.as_deref().is_some_and(|r| names.contains(&r))
            && o.args.iter().any(depth_word)
    })?;
    let lines: Vec<&str> = module.source.lines().collect();
    let floor = f.line.saturating_sub(1);
    let branch_of = |line: usize| -> Option<usize> {
        super::syntax::enclosing_lines(&lines, line, floor)
            .map(|(i, _)| i)
            .find(|i| {
                let t = lines[*i].trim_start();
                t.starts_with("if ") || t.starts_with("elif ") || t.starts_with("else:")
            })
    };
    let b = branch_of(adds.line)?;
    // the clone in that same branch is shallow whenever it runs
    if super::syntax::enclosing_lines(&lines, c.line, floor).any(|(i, _)| i == b) {
        return None;
    }
    let text = lines[b].trim();
    let text = text.split(" #").next().unwrap_or(text).trim_end();
    let mut defaults = Vec::new();
    let by_default = text
        .strip_prefix("if ")
        .and_then(|t| t.strip_suffix(':'))
        .and_then(|cond| holds_by_default(cond.trim(), f, &mut defaults));
    Some(ShallowOnly {
        clone: site(module, c.line),
        at: site(module, b + 1),
        branch: crate::repo::python::syntax::truncate(text, 120),
        by_default,
        defaults,
    })
}

/// Whether a condition over the function's parameters holds with their defaults: `p`,
/// `not p`, `p is None`, `p is not None`; `None` when it is anything else or a parameter it
/// tests has no literal default. The parameters read are pushed to `read`.
fn holds_by_default(cond: &str, f: &FuncInfo, read: &mut Vec<(String, String)>) -> Option<bool> {
    let cond = cond.trim();
    if let Some(rest) = cond.strip_prefix("not ") {
        return holds_by_default(rest, f, read).map(|b| !b);
    }
    if let Some(inner) = cond.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
        return holds_by_default(inner, f, read);
    }
    let ident = |t: &str| {
        !t.is_empty()
            && !t.starts_with(|ch: char| ch.is_ascii_digit())
            && t.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
    };
    let mut default = |name: &str| -> Option<Expr> {
        if !ident(name) || !f.params.iter().any(|p| p == name) {
            return None;
        }
        let v = f.defaults.get(name)?;
        read.push((name.to_string(), v.render()));
        Some(v.clone())
    };
    if let Some(name) = cond.strip_suffix(" is not None") {
        return Some(!matches!(default(name.trim())?, Expr::None));
    }
    if let Some(name) = cond.strip_suffix(" is None") {
        return Some(matches!(default(name.trim())?, Expr::None));
    }
    match default(cond)? {
        Expr::Bool(b) => Some(b),
        Expr::None => Some(false),
        Expr::Num(n) => Some(n.parse::<f64>().ok()? != 0.0),
        Expr::Str {
            value,
            fstring: false,
        } => Some(!value.is_empty()),
        _ => None,
    }
}

/// The command a `subprocess`/`os` call runs: its first argument, or `args=`/`cmd=`.
fn command(c: &CallInfo) -> Option<&Expr> {
    c.args
        .first()
        .or_else(|| kw(c, "args"))
        .or_else(|| kw(c, "cmd"))
        .or_else(|| kw(c, "command"))
}

/// Functions that hand one of their parameters to `subprocess`/`os` as the command, directly
/// or through another such function (`run_git(args)` → `run(["git"] + args)` →
/// `subprocess.run(cmd, ...)`), possibly after passing it through a call of its own
/// (`cmd = normalize(cmd)`).
fn wrappers(repo: &Repo<'_>) -> Vec<Wrapper> {
    let mut out = Vec::new();
    for (m, module) in repo.modules.iter().enumerate() {
        for c in &module.calls {
            let (Some(fi), Some(callee)) = (c.func, c.callee.as_deref()) else {
                continue;
            };
            if !SHELL_LAST_NAMES.contains(&repo.last_segment(m, callee))
                || !shellish(repo, m, callee)
            {
                continue;
            }
            let Some((param, prefix)) =
                command(c).and_then(|e| param_command(&module.functions[fi], e))
            else {
                continue;
            };
            out.push(Wrapper {
                module: m,
                func: fi,
                param,
                shell: matches!(kw(c, "shell"), Some(Expr::Bool(true)))
                    || !repo.is(m, callee, SUBPROCESS),
                line: c.line,
                prefix,
                shell_call: (m, c.line),
            });
        }
    }
    // wrappers of wrappers, a few levels deep
    for _ in 0..4 {
        let mut found = Vec::new();
        for (m, module) in repo.modules.iter().enumerate() {
            for c in &module.calls {
                let (Some(fi), Some(callee)) = (c.func, c.callee.as_deref()) else {
                    continue;
                };
                if out.iter().any(|w| w.module == m && w.func == fi) {
                    continue;
                }
                let Some((w, arg)) = wrapper_arg(repo, m, c, callee, &out) else {
                    continue;
                };
                let Some((param, prefix)) = param_command(&module.functions[fi], arg) else {
                    continue;
                };
                if found
                    .iter()
                    .any(|x: &Wrapper| x.module == m && x.func == fi)
                {
                    continue;
                }
                found.push(Wrapper {
                    module: m,
                    func: fi,
                    param,
                    shell: w.shell,
                    line: c.line,
                    prefix: w.prefix.iter().cloned().chain(prefix).collect(),
                    shell_call: w.shell_call,
                });
            }
        }
        if found.is_empty() {
            break;
        }
        out.extend(found);
    }
    out
}

/// The wrapper a call reaches, and the expression it passes as the wrapper's command.
fn wrapper_arg<'w, 'c>(
    repo: &Repo<'_>,
    m: usize,
    c: &'c CallInfo,
    callee: &str,
    wrappers: &'w [Wrapper],
) -> Option<(&'w Wrapper, &'c Expr)> {
    let (wm, f) = repo.function(m, callee)?;
    let w = wrappers
        .iter()
        .find(|w| w.module == wm && std::ptr::eq(&repo.modules[wm].functions[w.func], f))?;
    // A method called on an object does not pass `self`.
    let skip = usize::from(
        c.receiver.is_some() && f.params.first().is_some_and(|p| p == "self" || p == "cls"),
    );
    let arg = w
        .param
        .checked_sub(skip)
        .and_then(|i| c.args.get(i))
        .or_else(|| kw(c, &f.params[w.param]))?;
    Some((w, arg))
}

/// Which parameter of `f` an expression passes on as a command, and the literal words put
/// before it: `cmd`, `["git"] + args`, or a local assigned one of those (every value of it).
/// A parameter reassigned only through a call of itself (`cmd = normalize(cmd)`) is still
/// that parameter.
fn param_command(f: &FuncInfo, e: &Expr) -> Option<(usize, Vec<String>)> {
    let param_of = |name: &str| f.params.iter().position(|p| p == name);
    let passes_through = |name: &str| {
        f.locals.get(name).is_none_or(|vals| {
            vals.iter().all(|v| match v {
                Expr::Call { args, .. } => matches!(args.first(), Some(Expr::Name(n)) if n == name),
                Expr::Name(n) => n == name,
                _ => false,
            })
        })
    };
    let direct = |e: &Expr| -> Option<(usize, Vec<String>)> {
        match e {
            Expr::Name(n) => param_of(n)
                .filter(|_| passes_through(n))
                .map(|i| (i, vec![])),
            Expr::BinOp { op, left, right } if op == "+" => {
                let (Expr::List(items), Expr::Name(n)) = (left.as_ref(), right.as_ref()) else {
                    return None;
                };
                let words: Option<Vec<String>> = items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect();
                Some((param_of(n).filter(|_| passes_through(n))?, words?))
            }
            _ => None,
        }
    };
    if let Some(found) = direct(e) {
        return Some(found);
    }
    let Expr::Name(local) = e else {
        return None;
    };
    if param_of(local).is_some() {
        return None;
    }
    let vals = f.locals.get(local)?;
    let first = direct(vals.first()?)?;
    vals.iter()
        .all(|v| direct(v).as_ref() == Some(&first))
        .then_some(first)
}

fn shellish(repo: &Repo<'_>, m: usize, callee: &str) -> bool {
    repo.is(m, callee, SUBPROCESS)
        || repo.is(
            m,
            callee,
            &["os.system", "os.popen", "subprocess.getoutput"],
        )
}

/// Whether a command (a literal, or a local variable of the calling function assigned one)
/// is `git clone ...`; `Some((list_args, words))` when it is.
fn git_clone_command(
    module: &ModuleInfo,
    c: &CallInfo,
    cmd: &Expr,
    prefix: &[String],
) -> Option<(bool, Vec<String>)> {
    let values: Vec<&Expr> = match cmd {
        Expr::Name(v) => c
            .func
            .and_then(|fi| module.functions[fi].locals.get(v))
            .map(|vals| vals.iter().collect())
            .unwrap_or_default(),
        other => vec![other],
    };
    let appended: Vec<String> = match cmd {
        Expr::Name(v) => c
            .func
            .and_then(|fi| module.functions[fi].appends.get(v))
            .map(|vals| {
                vals.iter()
                    .filter_map(|e| e.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        _ => vec![],
    };
    values.into_iter().find_map(|cmd| match cmd {
        Expr::List(items) => {
            let words: Vec<&str> = prefix
                .iter()
                .map(String::as_str)
                .chain(items.iter().filter_map(Expr::as_str))
                .collect();
            (words.windows(2).any(|w| w[0] == "git" && w[1] == "clone")
                || words.first().is_some_and(|w| w.ends_with("git")) && words.contains(&"clone"))
            .then(|| {
                let mut all: Vec<String> = prefix
                    .iter()
                    .cloned()
                    .chain(
                        items
                            .iter()
                            .map(|i| i.as_str().map(str::to_string).unwrap_or_else(|| i.render())),
                    )
                    .collect();
                all.extend(appended.iter().cloned());
                (true, all)
            })
        }
        other => {
            let text = format!("{} {}", prefix.join(" "), other.render());
            text.contains("git clone")
                .then(|| (false, text.split_whitespace().map(str::to_string).collect()))
        }
    })
}

/// A call that clones a git repository: `git.Repo.clone_from`, `pygit2.clone_repository`,
/// `dulwich.porcelain.clone`, or a subprocess/os call whose command is `git clone`, directly
/// or through one of the repository's wrappers.
fn clone_command(
    repo: &Repo<'_>,
    m: usize,
    c: &CallInfo,
    wrappers: &[Wrapper],
) -> Option<CloneCmd> {
    let callee = c.callee.as_deref()?;
    let module = &repo.modules[m];
    // Name resolution only for calls whose last name segment can match (nearly none do).
    let last = repo.last_segment(m, callee);
    let clone_named = matches!(last, "clone_repository" | "clone" | "clone_from");
    if c.method == "clone_from"
        || clone_named
            && repo.is(
                m,
                callee,
                &[
                    "pygit2.clone_repository",
                    "dulwich.porcelain.clone",
                    "git.Repo.clone_from",
                ],
            )
    {
        return Some(CloneCmd {
            list_args: true,
            via: None,
            wrapper_call: None,
            words: vec![],
            lib: true,
        });
    }
    if SHELL_LAST_NAMES.contains(&last) && shellish(repo, m, callee) {
        let (list, words) = git_clone_command(module, c, command(c)?, &[])?;
        let shell =
            matches!(kw(c, "shell"), Some(Expr::Bool(true))) || !repo.is(m, callee, SUBPROCESS);
        return Some(CloneCmd {
            list_args: list && !shell,
            via: None,
            wrapper_call: None,
            words,
            lib: false,
        });
    }
    if wrappers.is_empty() {
        return None;
    }
    let (w, arg) = wrapper_arg(repo, m, c, callee, wrappers)?;
    let (list, words) = git_clone_command(module, c, arg, &w.prefix)?;
    let f = &repo.modules[w.module].functions[w.func];
    Some(CloneCmd {
        list_args: list && !w.shell,
        via: Some(format!(
            "{}:{} {}",
            repo.modules[w.module].path, w.line, f.qualname
        )),
        wrapper_call: Some(w.shell_call),
        words,
        lib: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    fn facts(src: &str) -> SecurityFacts {
        facts_of(&[("src/tools/repo_tools.py", src)])
    }

    fn facts_of(files: &[(&str, &str)]) -> SecurityFacts {
        let ms: Vec<_> = files
            .iter()
            .map(|(p, src)| parse_module(p, (*src).into()).unwrap())
            .collect();
        analyse(&Repo::new(&ms))
    }

    const WRAPPER: &str = "import subprocess\n\ndef run(cmd, cwd=None):\n    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)\n";

    fn kinds(src: &str) -> Vec<String> {
        facts(src).findings.into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn positives() {
        assert_eq!(kinds("import os\nos.system('ls')\n"), vec!["os_system"]);
        assert_eq!(
            kinds("import os\nos.system(f'git clone {url}')\n"),
            vec!["os_system", "string_built_shell_command"]
        );
        assert_eq!(
            kinds("from os import popen\npopen('ls')\n"),
            vec!["os_popen"]
        );
        assert_eq!(
            kinds("import subprocess as sp\nsp.run('git clone ' + url, shell=True)\n"),
            vec!["subprocess_shell", "string_built_shell_command"]
        );
        assert_eq!(kinds("x = eval(s)\n"), vec!["eval"]);
        assert_eq!(kinds("exec(code)\n"), vec!["exec"]);
    }

    #[test]
    fn negatives() {
        assert!(
            kinds("import subprocess\nsubprocess.run(['git', 'clone', url, d], check=True)\n")
                .is_empty()
        );
        assert!(kinds("import subprocess\nsubprocess.run(cmd, shell=False)\n").is_empty());
        assert!(kinds("import ast\nast.literal_eval(s)\nmodel.eval()\n").is_empty());
        assert!(kinds("# os.system('rm -rf /')\ns = \"eval(x) and os.system\"\n").is_empty());
        assert!(kinds("def eval(x):\n    return x\neval(1)\n").is_empty());
        assert!(kinds("import mylib\nmylib.system('x')\n").is_empty());
    }

    #[test]
    fn clone_in_temporary_directory_is_sandboxed() {
        let f = facts(
            "import subprocess, tempfile\ndef clone(url):\n    with tempfile.TemporaryDirectory() as d:\n        try:\n            subprocess.run(['git', 'clone', url, d], check=True, capture_output=True)\n        except subprocess.CalledProcessError as e:\n            raise RuntimeError(f'auth failed: {e.stderr}')\n",
        );
        assert!(f.sandboxed_clone);
        assert!(f.clone_calls[0].error_handled && f.clone_calls[0].auth_handled);
        let f = facts("import os\ndef clone(url):\n    os.system('git clone ' + url)\n");
        assert!(!f.sandboxed_clone);
        assert_eq!(f.clone_calls.len(), 1);
    }

    #[test]
    fn clone_through_the_repositorys_own_wrapper_is_a_list_argument_clone() {
        let caller = "import tempfile\nfrom src.tools import safety\n\ndef clone_repo(url):\n    tmp = tempfile.mkdtemp(prefix='audit_')\n    result = safety.run([\"git\", \"clone\", url, tmp])\n    if result.returncode != 0:\n        raise RuntimeError(result.stderr)\n    return tmp\n";
        let f = facts_of(&[
            ("src/tools/safety.py", WRAPPER),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert_eq!(f.clone_calls.len(), 1, "{f:?}");
        let c = &f.clone_calls[0];
        assert!(f.sandboxed_clone && c.sandboxed && c.list_args && c.error_handled);
        assert_eq!(c.via.as_deref(), Some("src/tools/safety.py:4 run"));
        assert_eq!(c.line, 6);
        // The same with a TemporaryDirectory, a keyword argument and a method wrapper.
        let wrapper = "import subprocess\nclass Shell:\n    def run(self, command):\n        return subprocess.run(command, check=True)\n";
        let caller = "import tempfile\nfrom src.shell import Shell\ndef clone(url):\n    with tempfile.TemporaryDirectory() as d:\n        shell = Shell()\n        shell.run(command=['git', 'clone', url, d])\n";
        let f = facts_of(&[
            ("src/shell.py", wrapper),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert!(f.sandboxed_clone, "{f:?}");
    }

    #[test]
    fn clone_through_a_wrapper_of_a_wrapper_that_puts_git_in_front() {
        // `run_git(args)` → `run(["git"] + args)` → `cmd = normalize(cmd)` →
        // `subprocess.run(cmd, timeout=...)`: the call site names only `clone ...`.
        let executor = "import subprocess\nclass Executor:\n    @staticmethod\n    def normalize(command):\n        return list(command)\n\n    @staticmethod\n    def run(command, cwd=None, timeout=None):\n        command = Executor.normalize(command)\n        return subprocess.run(command, cwd=cwd, timeout=timeout, shell=False)\n\n    @staticmethod\n    def run_git(git_args, cwd=None, timeout=None):\n        command = ['git'] + git_args\n        return Executor.run(command, cwd=cwd, timeout=timeout)\n";
        let caller = "import tempfile\nfrom src.tools.executor import Executor\ndef clone(url):\n    with tempfile.TemporaryDirectory() as d:\n        Executor.run_git(['clone', '--depth', '1', url, d], cwd=d, timeout=60)\n";
        let f = facts_of(&[
            ("src/tools/executor.py", executor),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert_eq!(f.clone_calls.len(), 1, "{f:?}");
        let c = &f.clone_calls[0];
        assert!(c.sandboxed && c.list_args, "{c:?}");
        assert_eq!(c.line, 5);
        assert_eq!(c.depth.as_deref(), Some("1"));
        assert_eq!(c.timeout.as_deref(), Some("60"));
        assert_eq!(
            c.via.as_deref(),
            Some("src/tools/executor.py:15 Executor.run_git")
        );
        // The same wrapper running `git log` is no clone; a parameter replaced by something
        // else than a call of itself is no longer the caller's command.
        let caller = "from src.tools.executor import Executor\ndef log(p):\n    Executor.run_git(['log', '--oneline'], cwd=p)\n";
        let f = facts_of(&[
            ("src/tools/executor.py", executor),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert!(f.clone_calls.is_empty(), "{f:?}");
        let fixed = "import subprocess\ndef run(cmd):\n    cmd = ['git', 'status']\n    subprocess.run(cmd)\n";
        let caller = "from src.tools.safety import run\ndef clone(url, d):\n    run(['git', 'clone', url, d])\n";
        let f = facts_of(&[
            ("src/tools/safety.py", fixed),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert!(f.clone_calls.is_empty(), "{f:?}");
    }

    #[test]
    fn a_temp_dir_made_by_the_repositorys_own_context_manager_sandboxes_the_clone() {
        let sandbox = "import subprocess, tempfile\nfrom contextlib import contextmanager\n\n@contextmanager\ndef scratch():\n    with tempfile.TemporaryDirectory(prefix='a_') as d:\n        yield d\n\ndef clone(url):\n    with scratch() as d:\n        subprocess.run(['git', 'clone', url, d], timeout=30)\n";
        let f = facts_of(&[("src/tools/sandbox.py", sandbox)]);
        assert!(f.sandboxed_clone, "{f:?}");
        let at = f.clone_calls[0].sandbox_at.as_ref().map(|s| s.line);
        assert_eq!(at, Some(6), "cited where tempfile makes it");
        assert!(f.removals.iter().any(|r| r.line == 6), "{:?}", f.removals);
        // A helper that makes a temp dir and neither yields nor returns it is no sandbox.
        let leaky = "import subprocess, tempfile\n\ndef scratch():\n    tempfile.mkdtemp()\n\ndef clone(url, d):\n    scratch()\n    subprocess.run(['git', 'clone', url, d], timeout=30)\n";
        let f = facts_of(&[("src/tools/sandbox.py", leaky)]);
        assert!(!f.sandboxed_clone, "{f:?}");
    }

    #[test]
    fn wrapper_clones_that_are_not_sandboxed_or_not_clones_say_so() {
        // No temp dir: a clone, but not sandboxed.
        let caller = "from src.tools.safety import run\ndef clone_repo(url, dest):\n    run(['git', 'clone', url, dest])\n";
        let f = facts_of(&[
            ("src/tools/safety.py", WRAPPER),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert_eq!(f.clone_calls.len(), 1);
        assert!(!f.sandboxed_clone && f.clone_calls[0].list_args);
        // A wrapper that runs a shell: the clone is not a list-argument clone.
        let shell =
            "import subprocess\ndef run(cmd):\n    return subprocess.run(cmd, shell=True)\n";
        let caller = "import tempfile\nfrom src.tools.safety import run\ndef clone_repo(url):\n    d = tempfile.mkdtemp()\n    run(['git', 'clone', url, d])\n";
        let f = facts_of(&[
            ("src/tools/safety.py", shell),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert!(f.clone_calls[0].sandboxed && !f.clone_calls[0].list_args);
        // Other commands through the wrapper, and a function running its own fixed command, are
        // no clones.
        let caller = "from src.tools.safety import run\nimport subprocess\ndef log(p):\n    run(['git', 'log', '--oneline'])\ndef fixed(url):\n    cmd = ['git', 'status']\n    subprocess.run(cmd)\n";
        let f = facts_of(&[
            ("src/tools/safety.py", WRAPPER),
            ("src/tools/repo_tools.py", caller),
        ]);
        assert!(f.clone_calls.is_empty(), "{f:?}");
    }

    #[test]
    fn clone_command_held_in_a_local_variable() {
        let f = facts(
            "import subprocess, tempfile\ndef clone(url):\n    tmp = tempfile.TemporaryDirectory()\n    git_cmd = ['git', 'clone', '--depth', '1', url, tmp.name]\n    result = subprocess.run(git_cmd, timeout=300, check=False)\n    return result.returncode\n",
        );
        assert_eq!(f.clone_calls.len(), 1, "{f:?}");
        assert!(f.sandboxed_clone && f.clone_calls[0].list_args);
    }

    #[test]
    fn timeouts_url_checks_error_kinds_and_cleanup_are_read_from_the_code() {
        let validators = "import re\nfrom urllib.parse import urlparse\n\ndef is_ok(u):\n    return bool(re.match(r'^https://github\\.com/[\\w.-]+/[\\w.-]+$', u))\n";
        let tools = "import shutil, subprocess, tempfile\nfrom src.v import is_ok\n\ndef clone(url):\n    if not is_ok(url):\n        raise ValueError(url)\n    d = tempfile.mkdtemp()\n    try:\n        subprocess.run(['git', 'clone', url, d], check=True, capture_output=True, timeout=120)\n    except subprocess.CalledProcessError as e:\n        err = e.stderr.lower()\n        if 'authentication' in err:\n            raise PermissionError(url)\n        elif 'not found' in err:\n            raise LookupError(url)\n        raise\n    finally:\n        pass\n    return d\n\ndef log(d):\n    return subprocess.run(['git', 'log'], cwd=d, capture_output=True)\n\ndef done(d):\n    shutil.rmtree(d)\n";
        // the node that clones, reads and removes; a removal no clone reaches removes
        // something else (a folder of page images)
        let node = "import shutil\nfrom src.tools.git import clone, log, done\n\ndef investigate(url):\n    d = clone(url)\n    log(d)\n    done(d)\n\ndef pages(folder):\n    shutil.rmtree(folder)\n";
        let f = facts_of(&[
            ("src/v.py", validators),
            ("src/tools/git.py", tools),
            ("src/nodes.py", node),
        ]);
        let c = &f.clone_calls[0];
        assert_eq!(c.timeout.as_deref(), Some("120"));
        assert_eq!(c.url_checks, vec![Site::new("src/tools/git.py", 5)]);
        assert_eq!(
            c.error_tests,
            vec![
                Site::new("src/tools/git.py", 12),
                Site::new("src/tools/git.py", 14)
            ]
        );
        assert_eq!(c.sandbox_at, Some(Site::new("src/tools/git.py", 7)));
        assert_eq!(c.handled_at, Some(Site::new("src/tools/git.py", 8)));
        assert_eq!(c.depth, None);
        assert_eq!(c.removed_early, None);
        assert_eq!(f.removals, vec![Site::new("src/tools/git.py", 25)]);
        // the clone passes a timeout, the `git log` does not
        let timed: Vec<(usize, bool, bool)> = f
            .externals
            .iter()
            .map(|x| (x.at.line, x.timeout.is_some(), x.clone))
            .collect();
        assert_eq!(timed, vec![(9, true, true), (22, false, false)]);
    }

    #[test]
    fn a_directory_kept_in_a_module_list_that_a_called_function_empties_is_removed() {
        // the clone is a tool handed to an agent (no Python caller); its directory object is
        // kept in a module-level list, which a function of the module removes item by item
        let tools = "import subprocess, tempfile, shutil\nfrom pathlib import Path\n\n_held = []\n\ndef grab(u):\n    box = tempfile.TemporaryDirectory()\n    _held.append(box)\n    p = Path(box.name)\n    subprocess.run(['git', 'clone', u, str(p)], check=True, timeout=60)\n    return str(p)\n\ndef sweep():\n    global _held\n    for item in _held:\n        try:\n            item.cleanup()\n        except Exception:\n            pass\n    _held = []\n";
        let node =
            "from src.tools.t import sweep\n\ndef gather(state):\n    sweep()\n    return {}\n";
        let f = facts_of(&[("src/tools/t.py", tools), ("src/nodes/n.py", node)]);
        assert_eq!(f.clone_calls[0].removed_early, None);
        assert_eq!(f.removals, vec![Site::new("src/tools/t.py", 17)]);
        // paths from `mkdtemp` in a set, removed with rmtree at exit
        let paths = "import atexit, shutil, subprocess, tempfile\n\n_made = set()\n\ndef grab(u):\n    d = tempfile.mkdtemp()\n    _made.add(d)\n    subprocess.run(['git', 'clone', u, d], check=True)\n    return d\n\ndef bye():\n    while _made:\n        shutil.rmtree(_made.pop())\n\natexit.register(bye)\n";
        assert_eq!(
            facts_of(&[("src/tools/t.py", paths)]).removals,
            vec![Site::new("src/tools/t.py", 13)]
        );
        // the same function, never called (or called by a test only): nothing removes them
        let test = "from src.tools.t import sweep\n\ndef test_sweep():\n    sweep()\n";
        let f = facts_of(&[("src/tools/t.py", tools), ("tests/test_t.py", test)]);
        assert_eq!(f.removals, vec![]);
        // a list of the function's own is not the module's
        let local = tools.replace("    box = tempfile", "    _held = []\n    box = tempfile");
        let f = facts_of(&[("src/tools/t.py", &local), ("src/nodes/n.py", node)]);
        assert_eq!(f.removals, vec![]);
        // a loop over another list removes something else
        let other = tools.replace("for item in _held", "for item in _pages");
        let f = facts_of(&[("src/tools/t.py", &other), ("src/nodes/n.py", node)]);
        assert_eq!(f.removals, vec![]);
    }

    #[test]
    fn a_depth_added_on_one_branch_only_says_which_and_whether_the_defaults_take_it() {
        let src = |sig: &str, cond: &str| {
            format!(
                "import subprocess, tempfile\ndef clone(url, {sig}):\n    d = tempfile.mkdtemp()\n    cmd = ['git', 'clone']\n    if {cond}:\n        cmd.extend(['--depth', '1'])  # fast\n    cmd.extend([url, d])\n    subprocess.run(cmd, check=True, timeout=60)\n    return d\n"
            )
        };
        let f = facts(&src("full: bool = False", "not full"));
        assert_eq!(f.clone_calls[0].depth.as_deref(), Some("1"));
        assert_eq!(
            f.shallow_only,
            vec![ShallowOnly {
                clone: Site::new("src/tools/repo_tools.py", 8),
                at: Site::new("src/tools/repo_tools.py", 5),
                branch: "if not full:".into(),
                by_default: Some(true),
                defaults: vec![("full".into(), "False".into())],
            }]
        );
        let by_default = |sig: &str, cond: &str| facts(&src(sig, cond)).shallow_only[0].by_default;
        assert_eq!(by_default("shallow=False", "shallow"), Some(false));
        assert_eq!(by_default("depth=None", "depth is not None"), Some(false));
        assert_eq!(by_default("full=True", "not full"), Some(false));
        // no default, or a test of something else: the defaults do not decide
        assert_eq!(by_default("full", "not full"), None);
        assert_eq!(by_default("full=False", "os.environ.get('FULL')"), None);
        // the clone inside the same branch is shallow whenever it runs
        let inside = "import subprocess\ndef clone(url, full=False):\n    cmd = ['git', 'clone']\n    if not full:\n        cmd.extend(['--depth', '1', url])\n        subprocess.run(cmd, check=True)\n";
        let f = facts(inside);
        assert_eq!(f.clone_calls[0].depth.as_deref(), Some("1"));
        assert_eq!(f.shallow_only, vec![]);
    }

    #[test]
    fn a_clone_deleted_when_its_function_returns_and_a_shallow_clone() {
        // `with TemporaryDirectory() as d: ... return d`: gone before the caller reads it
        let f = facts(
            "import subprocess, tempfile\ndef clone(url):\n    with tempfile.TemporaryDirectory() as tmp:\n        subprocess.run(['git', 'clone', '--depth', '1', url, tmp], check=True)\n        return tmp\n",
        );
        let c = &f.clone_calls[0];
        assert_eq!(
            c.removed_early,
            Some((Site::new("src/tools/repo_tools.py", 3), "clone".into()))
        );
        assert_eq!(c.depth.as_deref(), Some("1"));
        // a local TemporaryDirectory whose path alone is returned
        let f = facts(
            "import tempfile\nfrom git import Repo\ndef clone(url):\n    tmp = tempfile.TemporaryDirectory()\n    Repo.clone_from(url, tmp.name, depth=1)\n    return tmp.name\n",
        );
        assert!(f.clone_calls[0].removed_early.is_some());
        assert_eq!(f.clone_calls[0].depth.as_deref(), Some("1"));
        // its `.cleanup()` on failure removes that same directory: no cleanup of a clone that
        // is read
        let f = facts(
            "import tempfile\nfrom git import Repo\ndef clone(url):\n    tmp = tempfile.TemporaryDirectory()\n    try:\n        Repo.clone_from(url, tmp.name)\n    except Exception:\n        tmp.cleanup()\n        raise\n    return tmp.name\n",
        );
        assert!(f.clone_calls[0].removed_early.is_some());
        assert_eq!(f.removals, vec![]);
        // kept: the object is returned, or stored
        for keep in [
            "    return tmp\n",
            "    _DIRS[url] = tmp\n    return tmp.name\n",
        ] {
            let src = format!(
                "import tempfile\nfrom git import Repo\n_DIRS = {{}}\ndef clone(url):\n    tmp = tempfile.TemporaryDirectory()\n    Repo.clone_from(url, tmp.name)\n{keep}"
            );
            assert_eq!(facts(&src).clone_calls[0].removed_early, None, "{keep}");
        }
        // the work done inside the `with`: nothing returned from it
        let f = facts(
            "import subprocess, tempfile\ndef audit(url):\n    with tempfile.TemporaryDirectory() as tmp:\n        subprocess.run(['git', 'clone', url, tmp], check=True)\n        facts = read(tmp)\n    return facts\n",
        );
        assert_eq!(f.clone_calls[0].removed_early, None);
    }
}
