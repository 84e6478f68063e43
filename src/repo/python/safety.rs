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
use super::syntax::{CallInfo, ModuleInfo};
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
}

/// A function of the repository that runs one of its parameters as a command.
struct Wrapper {
    module: usize,
    func: usize,
    /// Index of the parameter given to `subprocess` as the command.
    param: usize,
    shell: bool,
    line: usize,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SecurityFacts {
    pub findings: Vec<Finding>,
    /// At least one clone call and every clone call sandboxed.
    pub sandboxed_clone: bool,
    pub clone_calls: Vec<CloneCall>,
    /// `subprocess` calls without a shell (the safe form), for the record.
    pub subprocess_calls: usize,
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
            let Some((list_args, via)) = clone_command(repo, m, c, &wrappers) else {
                continue;
            };
            let func = c.func.map(|f| &module.functions[f]);
            let in_with = c.withs.iter().any(|w| repo.is(m, w, TEMP));
            let func_makes_temp = c.func.is_some_and(|fi| {
                module.calls.iter().any(|o| {
                    o.func == Some(fi) && o.callee.as_deref().is_some_and(|cl| repo.is(m, cl, TEMP))
                })
            });
            let body = func
                .map(|f| module.snippet(f.line, f.end_line, 200))
                .unwrap_or_default();
            let error_handled = c.in_try
                || matches!(kw(c, "check"), Some(Expr::Bool(true)))
                || body.contains("returncode")
                || func.is_some_and(|f| f.has_try);
            let lower = body.to_lowercase();
            let auth_handled = func.is_some_and(|f| {
                f.excepts
                    .iter()
                    .any(|e| e.contains("GitCommandError") || e.contains("CalledProcessError"))
            }) && (lower.contains("auth")
                || lower.contains("permission")
                || lower.contains("credential")
                || lower.contains("stderr"));
            facts.clone_calls.push(CloneCall {
                path: module.path.clone(),
                line: c.line,
                snippet: c.snippet.clone(),
                sandboxed: in_with || func_makes_temp,
                error_handled,
                auth_handled,
                function: func.map(|f| f.qualname.clone()),
                list_args,
                via,
                function_snippet: func
                    .map(|f| module.snippet(f.line, f.end_line, 40))
                    .unwrap_or_default(),
            });
        }
    }
    facts.sandboxed_clone =
        !facts.clone_calls.is_empty() && facts.clone_calls.iter().all(|c| c.sandboxed);
    facts
}

/// The command a `subprocess`/`os` call runs: its first argument, or `args=`/`cmd=`.
fn command(c: &CallInfo) -> Option<&Expr> {
    c.args
        .first()
        .or_else(|| kw(c, "args"))
        .or_else(|| kw(c, "cmd"))
        .or_else(|| kw(c, "command"))
}

/// Functions that hand one of their parameters to `subprocess`/`os` as the command.
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
            let Some(Expr::Name(name)) = command(c) else {
                continue;
            };
            let f = &module.functions[fi];
            if f.locals.contains_key(name) {
                continue;
            }
            if let Some(param) = f.params.iter().position(|p| p == name) {
                out.push(Wrapper {
                    module: m,
                    func: fi,
                    param,
                    shell: matches!(kw(c, "shell"), Some(Expr::Bool(true)))
                        || !repo.is(m, callee, SUBPROCESS),
                    line: c.line,
                });
            }
        }
    }
    out
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
/// is `git clone ...`; `Some(list_args)` when it is.
fn git_clone_command(module: &ModuleInfo, c: &CallInfo, cmd: &Expr) -> Option<bool> {
    let values: Vec<&Expr> = match cmd {
        Expr::Name(v) => c
            .func
            .and_then(|fi| module.functions[fi].locals.get(v))
            .map(|vals| vals.iter().collect())
            .unwrap_or_default(),
        other => vec![other],
    };
    values.into_iter().find_map(|cmd| match cmd {
        Expr::List(items) => {
            let words: Vec<&str> = items.iter().filter_map(Expr::as_str).collect();
            (words.windows(2).any(|w| w[0] == "git" && w[1] == "clone")
                || words.first().is_some_and(|w| w.ends_with("git")) && words.contains(&"clone"))
            .then_some(true)
        }
        other => other.render().contains("git clone").then_some(false),
    })
}

/// A call that clones a git repository: `git.Repo.clone_from`, `pygit2.clone_repository`,
/// `dulwich.porcelain.clone`, or a subprocess/os call whose command is `git clone`, directly
/// or through one of the repository's wrappers. Returns (list arguments, the wrapper).
fn clone_command(
    repo: &Repo<'_>,
    m: usize,
    c: &CallInfo,
    wrappers: &[Wrapper],
) -> Option<(bool, Option<String>)> {
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
        return Some((true, None));
    }
    if SHELL_LAST_NAMES.contains(&last) && shellish(repo, m, callee) {
        let list = git_clone_command(module, c, command(c)?)?;
        let shell =
            matches!(kw(c, "shell"), Some(Expr::Bool(true))) || !repo.is(m, callee, SUBPROCESS);
        return Some((list && !shell, None));
    }
    if wrappers.is_empty() {
        return None;
    }
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
    let list = git_clone_command(module, c, arg)?;
    Some((
        list && !w.shell,
        Some(format!(
            "{}:{} {}",
            repo.modules[wm].path, w.line, f.qualname
        )),
    ))
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
}
