//! The Chief Justice: is conflict resolution deterministic code (rules in `if` branches) or
//! an LLM prompt, and is the verdict written as a Markdown file with the expected sections?
//!
//! Which branch implements which rule is read from what the branch tests and does, never from
//! the names the student chose (variables, functions, comments, strings naming a rule): the
//! identifiers of a condition are looked through to the values the function assigns them, and
//! only string literals, numbers, built-in calls and the spec's own fields (`found`,
//! `confidence`, `score`, `dissent_summary`, ...) are read.
//! - security override: the branch caps a score (`min(...)`, `x = 3`, `if x > c: x = c`) under
//!   a condition that tests for a security matter (a literal such as "security", "os.system",
//!   "injection", or the safe-tool criterion);
//! - fact supremacy: the condition reads detective evidence (`found`, `confidence`) and the
//!   branch sets a score;
//! - functionality weight: the branch weighs or takes the Tech Lead's score on an
//!   architecture/orchestration criterion;
//! - dissent requirement: a condition on the spread of the scores (`max - min`, a standard
//!   deviation) above a number, and the branch writes text (a dissent);
//! - variance re-evaluation: the same condition, and the branch re-runs something (an LLM
//!   call, a function of the repository that reads evidence or asks a model, a route to
//!   another node).
//!
//! The justice code is every module holding a function the Chief Justice node runs (a node
//! that reads the judges' opinions from the state and is no judge: `roles::synthesis`), and
//! any module where branches implement three rules or more; what a file, function or class is
//! called decides nothing.

use super::persona_prompts::persona_label;
use super::syntax::{IfInfo, ModuleInfo, enclosing_lines, indentation};
use crate::model::fact::{JusticeRule, Site};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleFact {
    pub rule: String,
    pub found: bool,
    pub location: String,
    pub snippet: String,
    /// What the branch tests and does.
    #[serde(default)]
    pub how: String,
    /// A branch that goes part of the way where the rule is not found (a spread above 2 that
    /// only re-weights the scores): where, and what it does.
    #[serde(default)]
    pub partial: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JusticeFacts {
    /// Modules holding the Chief Justice code.
    pub modules: Vec<String>,
    pub location: Option<String>,
    /// `if`/`elif` statements in the functions the Chief Justice runs (every one searched
    /// for the rules).
    pub branches: usize,
    /// The functions the Chief Justice runs (those `branches` are in).
    #[serde(default)]
    pub functions: usize,
    /// The justice code calls an LLM.
    pub calls_llm: bool,
    /// Where the justice code calls an LLM.
    #[serde(default)]
    pub llm_calls: Vec<Site>,
    /// LLM calls of the justice code whose reply is only text (read as `.content`, never
    /// bound to a schema or parsed) while the rules compute the scores: an executive summary
    /// or a remediation plan written by a model, no part of the verdict.
    #[serde(default)]
    pub prose_llm_calls: Vec<Site>,
    /// Python files of the product code searched.
    #[serde(default)]
    pub files: usize,
    pub rules: Vec<RuleFact>,
    /// A Markdown file is written (`.md` path and a write call) somewhere in the repository.
    pub writes_markdown: Option<String>,
    /// Report section headings found in string literals or templates, with their location.
    pub sections: Vec<(String, Option<String>)>,
    #[serde(skip)]
    pub snippet: String,
}

pub const SECTIONS: [&str; 3] = [
    "Executive Summary",
    "Criterion Breakdown",
    "Remediation Plan",
];

/// How each of [`SECTIONS`] may be written, as a human grader reads it: its own name, the
/// names people give it ("per-dimension results", "## Final Verdicts"), or (the breakdown) a
/// heading per criterion written in a loop (`### {criterion.dimension_name}`). `<H>` is a
/// Markdown heading's start, `<B>` a word for a breakdown's content.
const SECTION_PATTERNS: [&str; 3] = [
    r"(?i)executive[\s_-]*summary|<H>(summary|overview|overall\s+(verdict|assessment|score))\b",
    r"(?i)(criteri(on|a)|dimension|rubric)[\s_-]*breakdown|breakdown\s+(by|per)\s+(criteri(on|a)|dimension)|per[\s_-]*(criteri(on|a)|dimension)[\s_-]+<B>|<H>[^\n]*per[\s_-]*(criteri(on|a)|dimension)|<H>(criteri(on|a)|dimension)s?\s*<B>|<H>(detailed|final)\s+(scores|verdicts|results)\b|<H>[^\n{}]*\{[^}\n]*(criteri(on|a)|dimension)[^}\n]*\}",
    r"(?i)remediation[\s_-]*plan|<H>(remediation|recommendations|action\s+items|next\s+steps|improvement\s+plan)\b",
];

fn section_res() -> &'static Vec<Regex> {
    static R: OnceLock<Vec<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        SECTION_PATTERNS
            .iter()
            .map(|p| {
                let p = p.replace("<H>", r"(^|\n)\s*#+\s*[^\w\s{]*\s*").replace(
                    "<B>",
                    r"(breakdown|results|scores|verdicts|analysis|details|assessments?)\b",
                );
                Regex::new(&p).expect("valid regex")
            })
            .collect()
    })
}

/// String literals of a piece of code, lower-cased.
fn literals(text: &str) -> String {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| Regex::new(r#""([^"\\\n]|\\.)*"|'([^'\\\n]|\\.)*'"#).expect("valid"));
    r.find_iter(text)
        .map(|m| m.as_str().to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A condition with the identifiers it reads looked through to the values its function
/// assigns them (one level), and the module's constants.
fn words_of(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Names called in a piece of code (`name(`).
fn called(text: &str) -> Vec<&str> {
    static R: OnceLock<Regex> = OnceLock::new();
    re(r"\b([A-Za-z_]\w*)\s*\(", &R)
        .captures_iter(text)
        .filter_map(|c| c.get(1).map(|x| x.as_str()))
        .collect()
}

/// A condition (or a branch) with what it reads looked through: the lines of its function
/// that assign the locals it reads (their whole text: a comprehension's filter is part of the
/// value), the bodies of the repository's functions it calls (two levels: `if
/// flags_security(ops)` reads what `flags_security` does), and the module constants any of
/// these name.
fn expanded(modules: &[ModuleInfo], m: &ModuleInfo, f: &IfInfo, text: &str) -> String {
    expand(modules, m, f, text, true)
}

/// [`expanded`], with the bodies of called functions (`calls`) or without them.
fn expand(modules: &[ModuleInfo], m: &ModuleInfo, f: &IfInfo, text: &str, calls: bool) -> String {
    let mut out = text.to_string();
    if let Some(func) = f.func.map(|i| &m.functions[i]) {
        let words = words_of(text);
        let body = m.snippet(func.line, func.end_line, 400);
        for name in func.locals.keys().filter(|n| words.contains(&n.as_str())) {
            for line in body.lines() {
                let t = line.trim_start();
                if let Some(rest) = t.strip_prefix(name.as_str())
                    && rest.trim_start().starts_with('=')
                    && !rest.trim_start().starts_with("==")
                {
                    out.push(' ');
                    out.push_str(t);
                }
            }
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut owners: Vec<&ModuleInfo> = vec![m];
    for _ in 0..if calls { 2 } else { 0 } {
        let names: Vec<String> = called(&out)
            .into_iter()
            .filter(|n| !seen.iter().any(|s| s == n))
            .map(str::to_string)
            .collect();
        for name in names {
            seen.push(name.clone());
            // the module's own function first, else one of that name elsewhere
            let def = m
                .functions
                .iter()
                .find(|g| g.name == name)
                .map(|g| (m, g))
                .or_else(|| {
                    modules.iter().find_map(|mm| {
                        mm.functions
                            .iter()
                            .find(|g| g.name == name)
                            .map(|g| (mm, g))
                    })
                });
            if let Some((mm, g)) = def {
                out.push(' ');
                out.push_str(&mm.snippet(g.line, g.end_line, 60));
                if !owners.iter().any(|o| std::ptr::eq(*o, mm)) {
                    owners.push(mm);
                }
            }
        }
    }
    let words: Vec<String> = words_of(&out).into_iter().map(str::to_string).collect();
    for owner in owners {
        for (name, v) in &owner.constants {
            if words.iter().any(|w| w == name) {
                out.push(' ');
                out.push_str(&v.render());
            }
        }
    }
    out
}

fn re(pattern: &'static str, cell: &'static OnceLock<Regex>) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// A literal that names a security matter.
fn security_literal(lits: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        r"secur|vulnerab|os[._]system|shell|injection|unsafe|malicious|sanitiz|safe_tool|eval\(",
        &R,
    )
    .is_match(lits)
}

/// The parameters of a condition's function that the condition reads, looked through to what
/// the callers pass (`if missing: ...` in `resolve(.., missing)`, called with `missing =
/// gap(state.get("evidences"))`): each caller's argument with its locals (two steps) and the
/// bodies of the functions it calls.
/// The condition compares with a number (`max_confidence < 0.3`), as a confidence
/// threshold does.
fn threshold(condition: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(r"[<>]=?\s*\d", &R).is_match(condition)
}

fn through_params(modules: &[ModuleInfo], m: &ModuleInfo, f: &IfInfo, text: &str) -> String {
    let Some(func) = f.func.and_then(|i| m.functions.get(i)) else {
        return String::new();
    };
    let words = words_of(text);
    let skip = usize::from(
        func.params
            .first()
            .is_some_and(|p| p == "self" || p == "cls"),
    );
    let mut out = String::new();
    for (pi, p) in func.params.iter().enumerate().skip(skip) {
        if !words.contains(&p.as_str()) {
            continue;
        }
        for cm in modules {
            for c in cm.calls.iter().filter(|c| c.method == func.name) {
                let arg = c
                    .kwargs
                    .iter()
                    .find(|(k, _)| k == p)
                    .map(|(_, v)| v.render())
                    .or_else(|| c.args.get(pi - skip).map(|a| a.render()));
                let Some(arg) = arg else { continue };
                let probe = IfInfo {
                    line: c.line,
                    func: c.func,
                    condition: arg.clone(),
                    text: String::new(),
                    body: String::new(),
                };
                let once = expand(modules, cm, &probe, &arg, true);
                out.push(' ');
                out.push_str(&expand(modules, cm, &probe, &once, false));
            }
        }
    }
    out
}

/// The branch caps a score: `min(`, a small constant assigned, or a value set to a bound that
/// the branch's test (or a test inside it) holds another value above (`if x > cap: y = cap`,
/// `if s.get(k, 5) > cap: s[k] = cap`): read from the syntax of the test and of each statement,
/// whatever the names.
fn caps(condition: &str, body: &str) -> bool {
    static K: OnceLock<Regex> = OnceLock::new();
    if body.contains("min(") {
        return true;
    }
    if re(r"(^|[^=!<>])=\s*[1-3](\.0)?\s*($|\n|#|\))", &K).is_match(body) {
        return true;
    }
    let statements: Vec<super::syntax::Shape> = statements(body)
        .iter()
        .map(|s| super::syntax::shape(&as_statement(s)))
        .collect();
    // the bounds a value is tested to exceed (`x > b`, `b < x`)
    let test = super::syntax::shape(condition);
    let bounds: Vec<&str> = std::iter::once(&test)
        .chain(&statements)
        .flat_map(|s| &s.comparisons)
        .filter_map(|(a, op, b)| match op.as_str() {
            ">" | ">=" => Some(b.as_str()),
            "<" | "<=" => Some(a.as_str()),
            _ => None,
        })
        .collect();
    statements
        .iter()
        .flat_map(|s| &s.assignments)
        .any(|(_, value)| bounds.contains(&value.as_str()))
}

/// A statement as [`statements`] collapses it, made whole: a block's header (`if a > b:`) gets
/// an empty body, an `elif`/`else` header reads as an `if`.
fn as_statement(s: &str) -> String {
    let t = s.trim();
    let t = match t.strip_prefix("elif ") {
        Some(rest) => format!("if {rest}"),
        None => t.to_string(),
    };
    if t.ends_with(':') {
        format!("{t} pass")
    } else {
        t
    }
}

/// The condition reads detective evidence (the spec's `Evidence` fields).
fn reads_evidence(text: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        r#"\.found\b|\[\s*["']found["']\s*\]|get\(\s*["']found["']|\.confidence\b|\[\s*["']confidence["']\s*\]"#,
        &R,
    )
    .is_match(text)
}

/// The branch sets a value (a score, a weight): an assignment or a return of something other
/// than a literal text or a flag (a note appended or `flagged = True` sets nothing).
fn sets_score(body: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        r#"(?m)^\s*([\w.]+(\[[^\]\n]*\])?\s*([-+*/]?=)|return)\s*[^\s"'=]"#,
        &R,
    )
    .find_iter(body)
    .any(|m| {
        let rest = &body[m.end() - 1..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = &rest[word.len()..];
        let fstring =
            matches!(word.as_str(), "f" | "rf" | "fr" | "b") && after.starts_with(['"', '\'']);
        // a list or dict built of neither numbers nor scores (`paths = [p.strip() for p in
        // ..]`) sets no score
        let collection = rest.starts_with(['[', '{']) && {
            let line = rest.lines().next().unwrap_or_default();
            !line.contains("score") && !line.chars().any(|c| c.is_ascii_digit())
        };
        !fstring && !collection && !matches!(word.as_str(), "True" | "False" | "None")
    })
}

/// The condition tests the spread of scores against a number.
fn spread(text: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    static N: OnceLock<Regex> = OnceLock::new();
    static M: OnceLock<Regex> = OnceLock::new();
    // `max(..) - min(..)` (one level of brackets inside), a standard deviation or variance,
    // or `abs(a - b)`
    let spread = re(
        r"max\s*\((?:[^()]|\([^()]*\))*\)\s*-\s*min\s*\(|\babs\s*\([^()]*-[^()]*\)",
        &M,
    )
    .is_match(text)
        || re(r"\b(p?stdev|p?variance)\s*\(|\.std\(|\.var\(", &R).is_match(text)
        || bound_difference(text);
    // compared with a number or with an expression (`> (max_val * 0.2)`, `> self.threshold`)
    spread && re(r"[<>]=?\s*[\d(A-Za-z_]", &N).is_match(text)
}

/// `a - b` where the looked-through text assigns `a = max(..)` and `b = min(..)`: a spread
/// computed in steps.
fn bound_difference(text: &str) -> bool {
    static D: OnceLock<Regex> = OnceLock::new();
    re(r"\b([A-Za-z_]\w*)\s*-\s*([A-Za-z_]\w*)\b", &D)
        .captures_iter(text)
        .any(|c| {
            // `name = f(` somewhere in the text, `name` not the tail of a longer name
            let assigned = |name: &str, f: &str| {
                text.match_indices(name).any(|(i, _)| {
                    let before = text[..i].chars().next_back();
                    let fresh =
                        before.is_none_or(|ch| !(ch.is_alphanumeric() || "_.=!<>".contains(ch)));
                    let rest = text[i + name.len()..].trim_start();
                    fresh
                        && rest.strip_prefix('=').is_some_and(|r| {
                            !r.starts_with('=')
                                && r.trim_start()
                                    .strip_prefix(f)
                                    .is_some_and(|r| r.trim_start().starts_with('('))
                        })
                })
            };
            assigned(&c[1], "max") && assigned(&c[2], "min")
        })
}

/// The branch writes text (a dissent): the spec's `dissent_summary`, or a string assigned,
/// appended or returned.
fn writes_text(body: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    body.contains("dissent_summary")
        || re(
            r#"(=|\.append\(|\breturn\b|\+=)\s*\(?\s*(f|rf|fr)?["']"#,
            &R,
        )
        .is_match(body)
}

/// The branch re-runs something: an LLM call, a route to another node, or a function of the
/// repository that asks a model or reads the evidence again.
fn reruns(modules: &[ModuleInfo], m: &ModuleInfo, body: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    static CALL: OnceLock<Regex> = OnceLock::new();
    static ROUTE: OnceLock<Regex> = OnceLock::new();
    let asks = |t: &str| {
        re(
            r#"\.a?invoke\(|\bSend\(|\bCommand\(|goto\s*=|\.found\b|\[\s*["']found["']\s*\]|\.cited_evidence\b"#,
            &R,
        )
        .is_match(t)
    };
    if asks(body) || re(r#"(?m)^\s*return\s+["'][\w\s-]+["']\s*$"#, &ROUTE).is_match(body) {
        return true;
    }
    re(r"\b([A-Za-z_]\w*)\s*\(", &CALL)
        .captures_iter(body)
        .filter_map(|c| c.get(1).map(|x| x.as_str()))
        .filter(|name| {
            !matches!(
                *name,
                "min"
                    | "max"
                    | "round"
                    | "len"
                    | "sum"
                    | "abs"
                    | "int"
                    | "float"
                    | "str"
                    | "print"
                    | "sorted"
                    | "list"
                    | "dict"
                    | "set"
                    | "any"
                    | "all"
            )
        })
        .any(|name| {
            let defs = std::iter::once(m).chain(modules.iter());
            defs.flat_map(|mm| {
                mm.functions
                    .iter()
                    .filter(move |f| f.name == name)
                    .map(move |f| (mm, f))
            })
            .any(|(mm, f)| asks(&mm.snippet(f.line, f.end_line, 200)))
        })
}

/// A state key that a function of the Chief Justice's stage tests to choose the next node
/// (`if state.get("has_variance"): return "re_evaluate"`, a router's branch), with that
/// function's name.
#[derive(Debug, Clone, PartialEq)]
struct RouteFlag {
    key: String,
    router: String,
}

/// The keys the functions `synthesis` and `runs` hold test in a branch that returns a node's
/// name (a route).
fn route_flags(modules: &[ModuleInfo], synthesis: &[Def], runs: &BTreeSet<Def>) -> Vec<RouteFlag> {
    static KEY: OnceLock<Regex> = OnceLock::new();
    static ROUTE: OnceLock<Regex> = OnceLock::new();
    let mut flags: Vec<RouteFlag> = Vec::new();
    for (i, line) in synthesis.iter().chain(runs) {
        let Some(m) = modules.get(*i) else { continue };
        let Some(fi) = m.functions.iter().position(|f| f.line == *line) else {
            continue;
        };
        for b in m.ifs.iter().filter(|b| b.func == Some(fi)) {
            if !re(r#"(?m)^\s*return\s+["'][\w\s-]+["']\s*$"#, &ROUTE).is_match(&b.body) {
                continue;
            }
            let keys = re(r#"\.get\(\s*["'](\w+)["']|\[\s*["'](\w+)["']\s*\]"#, &KEY);
            for c in keys.captures_iter(&b.condition) {
                let Some(key) = c.get(1).or_else(|| c.get(2)) else {
                    continue;
                };
                let flag = RouteFlag {
                    key: key.as_str().to_string(),
                    router: m.functions[fi].name.clone(),
                };
                if !flags.contains(&flag) {
                    flags.push(flag);
                }
            }
        }
    }
    flags
}

/// A spread branch that raises a flag (`has_variance = True`) which its function hands back
/// under a state key (`return {"has_variance": has_variance}`, `state["k"] = flag`) that a
/// router of the stage tests to choose the next node: what it sets and who routes on it.
fn routed_flag(m: &ModuleInfo, f: &IfInfo, flags: &[RouteFlag]) -> Option<String> {
    let func = m.functions.get(f.func?)?;
    let text = m.snippet(func.line, func.end_line, 400);
    statements(&f.body).into_iter().find_map(|st| {
        let name = st
            .split_once('=')
            .map(|(l, _)| l)
            .or_else(|| st.split_once(".append(").map(|(l, _)| l))?
            .trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let flag = flags.iter().find(|fl| {
            let k = &fl.key;
            [
                format!("\"{k}\": {name}"),
                format!("'{k}': {name}"),
                format!("[\"{k}\"] = {name}"),
                format!("['{k}'] = {name}"),
            ]
            .iter()
            .any(|p| text.contains(p.as_str()))
        })?;
        Some(format!(
            "`{}`, handed back as `{}`, which `{}` tests to route to another node",
            super::syntax::truncate(&st, 60),
            flag.key,
            flag.router
        ))
    })
}

/// A key-like literal (no space: `"TechLead"`, `"graph_orchestration"`) naming the Tech Lead,
/// and one naming the architecture criterion (or the repository criteria it is one of:
/// `target_artifact == "github_repo"`); prose that names a rule is no rule.
fn tech_lead_on_architecture(lits: &str) -> bool {
    let keys: String = lits
        .split_whitespace()
        .filter(|w| {
            (w.starts_with('"') || w.starts_with('\''))
                && (w.ends_with('"') || w.ends_with('\''))
                && w.len() > 2
        })
        .collect::<Vec<_>>()
        .join(" ");
    let lits = keys.as_str();
    static T: OnceLock<Regex> = OnceLock::new();
    static A: OnceLock<Regex> = OnceLock::new();
    re(r"tech[\s_-]?lead", &T).is_match(lits)
        && re(r"orchestration|architect|modular|graph|github_repo", &A).is_match(lits)
}

/// The statements of a block: each line with the lines its brackets hold open, whitespace
/// collapsed.
fn statements(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut text = String::new();
    for line in body.lines() {
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(line.trim());
        if depth <= 0 {
            depth = 0;
            if !text.trim().is_empty() {
                out.push(std::mem::take(&mut text));
            }
            text.clear();
        }
    }
    if !text.trim().is_empty() {
        out.push(text);
    }
    out
}

/// A statement that sets a number from scores: an assignment or a return of arithmetic, a
/// number, `min`/`max`/`round`/`median`/... or a judge's `.score`, holding no text (a returned
/// tuple is read by its first element: `return min(3, t.score), "capped"`).
fn sets_number(statement: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    if !sets_score(statement) {
        return false;
    }
    let t = statement.trim_start();
    let value = match t.strip_prefix("return") {
        Some(rest) => {
            let mut depth = 0i32;
            let end = rest
                .char_indices()
                .find(|(_, c)| {
                    match c {
                        '(' | '[' | '{' => depth += 1,
                        ')' | ']' | '}' => depth -= 1,
                        _ => {}
                    }
                    *c == ',' && depth == 0
                })
                .map_or(rest.len(), |(i, _)| i);
            &rest[..end]
        }
        None => t.split_once('=').map_or(t, |(_, rhs)| rhs),
    };
    !value.contains(['"', '\''])
        && re(
            r"(^|[^\w])(\d|min\(|max\(|round\(|median\(|mean\(|sum\(|int\(|float\()|\.score\b|\w\s*[*/]\s*\w",
            &R,
        )
        .is_match(value)
}

/// The block only computes numbers and writes text: no loop, no `try`/`with`, and no call
/// but arithmetic built-ins, dictionary reads, text building and logging (a branch that
/// prunes a judge in a loop or calls the repository's code does more than recompute).
fn only_computes(body: &str) -> bool {
    const PLAIN: [&str; 24] = [
        "int", "float", "round", "min", "max", "sum", "len", "abs", "median", "mean", "str",
        "sorted", "append", "join", "format", "get", "values", "keys", "items", "info", "debug",
        "warning", "error", "print",
    ];
    statements(body).iter().all(|s| {
        let s = s.trim_start();
        !["for ", "while ", "try", "with ", "async ", "await "]
            .iter()
            .any(|k| s.starts_with(k))
    }) && called(&without_strings(body))
        .iter()
        .all(|c| PLAIN.contains(c))
}

/// A piece of code with its string literals emptied (words in a text are no calls).
fn without_strings(text: &str) -> String {
    static R: OnceLock<Regex> = OnceLock::new();
    re(r#""([^"\\\n]|\\.)*"|'([^'\\\n]|\\.)*'"#, &R)
        .replace_all(text, "''")
        .into_owned()
}

/// The first statement of a block that `pick` accepts, shortened (what a rule's branch does,
/// quoted).
fn first_statement(body: &str, pick: impl Fn(&str) -> bool) -> Option<String> {
    statements(body)
        .into_iter()
        .find(|s| pick(s))
        .map(|s| super::syntax::truncate(&s, 70))
}

/// `if <condition>` followed by the branch's statement that `pick` accepts, quoted.
fn quoted(shown: &str, body: &str, pick: impl Fn(&str) -> bool) -> String {
    match first_statement(body, pick) {
        Some(a) => format!("`if {shown}`: `{a}`"),
        None => format!("`if {shown}`"),
    }
}

/// A branch's test as quoted: its whitespace collapsed (a test written across lines reads as
/// one), shortened.
fn shown_condition(condition: &str) -> String {
    super::syntax::truncate(
        &condition.split_whitespace().collect::<Vec<_>>().join(" "),
        70,
    )
}

/// `if <condition>` and the statement that caps the score (`min(`, the bound the branch
/// compares with assigned, a small constant assigned), else [`quoted_score`]'s.
fn quoted_cap(shown: &str, condition: &str, body: &str) -> String {
    static C: OnceLock<Regex> = OnceLock::new();
    static K: OnceLock<Regex> = OnceLock::new();
    let bounds: Vec<String> = re(r">=?\s*([A-Za-z_][\w.]*|\d+(?:\.\d+)?)", &C)
        .captures_iter(&format!("{condition}\n{body}"))
        .map(|c| c[1].to_string())
        .collect();
    let capping = |s: &str| {
        let Some((lhs, rhs)) = s.split_once('=') else {
            return false;
        };
        let rhs = rhs.trim();
        !lhs.ends_with(['=', '!', '<', '>'])
            && !rhs.starts_with('=')
            && (rhs.contains("min(")
                || bounds.iter().any(|b| b == rhs)
                || re(r"^[1-3](\.0)?$", &K).is_match(rhs))
    };
    if first_statement(body, capping).is_some() {
        quoted(shown, body, capping)
    } else {
        quoted_score(shown, body)
    }
}

/// `if <condition>` and the statement that sets a score: one that weighs or bounds scores
/// (`*`, `/`, `min(`, `max(`) first, then one setting a number, then any.
fn quoted_score(shown: &str, body: &str) -> String {
    static W: OnceLock<Regex> = OnceLock::new();
    let weighs =
        |s: &str| sets_number(s) && re(r"\w\s*[*/]\s*[\w(]|\b(min|max)\s*\(", &W).is_match(s);
    if first_statement(body, weighs).is_some() {
        quoted(shown, body, weighs)
    } else if first_statement(body, sets_number).is_some() {
        quoted(shown, body, sets_number)
    } else {
        quoted(shown, body, sets_score)
    }
}

/// The rules a branch implements, with what it does (its test and its statement, quoted),
/// and whether it goes only part of the way (`true`: a spread above 2 that only re-weights
/// the scores is no re-evaluation).
fn rule_of(
    modules: &[ModuleInfo],
    m: &ModuleInfo,
    f: &IfInfo,
    evidence_keys: &BTreeSet<String>,
    flags: &[RouteFlag],
) -> Vec<(JusticeRule, String, bool)> {
    let branch = Branch {
        modules,
        m,
        f,
        cond: expanded(modules, m, f, &f.condition),
        shown: shown_condition(&f.condition),
    };
    let body = &f.body;
    let all_lits = format!(
        "{} {}",
        literals(&branch.cond),
        literals(&expanded(modules, m, f, body))
    );
    let mut out = branch.overriding_rules(evidence_keys);
    if tech_lead_on_architecture(&all_lits) && sets_score(body) {
        out.push((
            JusticeRule::FunctionalityWeight,
            quoted_score(&branch.shown, body),
            false,
        ));
    }
    out.extend(branch.spread_rules(flags));
    out
}

/// An `if` branch `f` of module `m` read for the rules: its condition looked through (`cond`)
/// and as shown in a report (`shown`).
struct Branch<'a> {
    modules: &'a [ModuleInfo],
    m: &'a ModuleInfo,
    f: &'a IfInfo,
    cond: String,
    shown: String,
}

impl Branch<'_> {
    /// The security override, else fact supremacy (whole, or in part: a cap on a test of what
    /// the detectives gathered, `evidence_keys`).
    fn overriding_rules(
        &self,
        evidence_keys: &BTreeSet<String>,
    ) -> Vec<(JusticeRule, String, bool)> {
        let (modules, m, f, cond, shown) = (self.modules, self.m, self.f, &self.cond, &self.shown);
        let body = &f.body;
        let lits = literals(cond);
        let mut out = Vec::new();
        // a security matter named by the condition itself (or its locals), or by a function it
        // calls that does not read the detectives' evidence: a helper that matches evidence
        // against a keyword list (one of whose topics is security) is fact supremacy
        let own = literals(&expand(modules, m, f, &f.condition, false));
        let security = caps(&f.condition, body)
            && (security_literal(&own) || (security_literal(&lits) && !reads_evidence(cond)));
        if security {
            out.push((
                JusticeRule::SecurityOverride,
                quoted_cap(shown, &f.condition, body),
                false,
            ));
        }
        // a security cap that reads the evidence is the security override, not fact supremacy;
        // the evidence read by the condition or by what the caller passes for its parameters
        // (`if max_confidence < 0.3: return 1`); a statement that only gathers the evidence
        // (`best = max(best, ev.confidence)`) sets no score
        let scoring: String = statements(body)
            .into_iter()
            .filter(|st| !reads_evidence(st))
            .collect::<Vec<_>>()
            .join("\n");
        if !security
            && sets_score(&scoring)
            && (reads_evidence(cond)
                || (threshold(&f.condition)
                    && reads_evidence(&through_params(modules, m, f, &f.condition))))
        {
            out.push((
                JusticeRule::FactSupremacy,
                quoted_score(shown, &scoring),
                false,
            ));
        } else if !security && caps(&f.condition, body) && !evidence_keys.is_empty() && {
            let through = format!("{cond} {}", through_params(modules, m, f, &f.condition));
            evidence_keys.iter().any(|k| {
                through.contains(&format!("\"{k}\"")) || through.contains(&format!("'{k}'"))
            })
        } {
            // a cap on a test of what the detectives gathered (the evidence key read, no
            // finding's `found` or `confidence`): fact supremacy in part
            out.push((
                JusticeRule::FactSupremacy,
                quoted_cap(shown, &f.condition, body),
                true,
            ));
        }
        out
    }

    /// The rules of a branch on the spread of the scores: the Tech Lead deciding, a
    /// re-evaluation (or, in part, a score only recomputed), a dissent.
    fn spread_rules(&self, flags: &[RouteFlag]) -> Vec<(JusticeRule, String, bool)> {
        let (modules, m, f, cond, shown) = (self.modules, self.m, self.f, &self.cond, &self.shown);
        let body = &f.body;
        let mut out = Vec::new();
        // the spread looked through two steps (`gap = hi - lo` after `hi = max(..)`)
        let on_spread = spread(cond) || spread(&expanded(modules, m, f, cond));
        // the Tech Lead decides where the judges disagree: the spread's branch sets the score to
        // the Tech Lead's (read through the function's locals to its persona label)
        let tech_lead_score = |s: &str| {
            tech_leads_value(s).is_some_and(|v| {
                names_tech_lead(&literals(&format!(
                    "{v} {}",
                    expand(modules, m, f, v, false)
                )))
            })
        };
        if on_spread && first_statement(body, tech_lead_score).is_some() {
            out.push((
                JusticeRule::FunctionalityWeight,
                quoted(shown, body, tech_lead_score),
                false,
            ));
        }
        if !on_spread {
            return out;
        }
        if reruns(modules, m, body) {
            out.push((
                JusticeRule::VarianceReEvaluation,
                quoted(shown, body, |l| reruns(modules, m, l)),
                false,
            ));
        } else if let Some(how) = routed_flag(m, f, flags) {
            out.push((
                JusticeRule::VarianceReEvaluation,
                format!("`if {shown}`: {how}"),
                false,
            ));
        } else if first_statement(body, sets_number).is_some() && only_computes(body) {
            out.push((
                JusticeRule::VarianceReEvaluation,
                quoted(shown, body, sets_number),
                true,
            ));
        }
        if writes_text(body) {
            out.push((
                JusticeRule::DissentRequirement,
                quoted(shown, body, writes_text),
                false,
            ));
        }
        out
    }
}

/// The value a statement sets when it is one judge's score taken whole (`final =
/// tl.score`, `return int(scores["TechLead"])`): that value's text.
fn tech_leads_value(statement: &str) -> Option<&str> {
    static R: OnceLock<Regex> = OnceLock::new();
    if !sets_score(statement) {
        return None;
    }
    let t = statement.trim();
    let value = match t.strip_prefix("return") {
        Some(rest) => rest.trim(),
        None => t.split_once('=').map(|(_, v)| v.trim())?,
    };
    re(
        r#"^(?:(?:int|round|float)\()?([A-Za-z_][\w.]*(?:\[[^\]\n]*\])?)\)?$"#,
        &R,
    )
    .captures(value)
    .and_then(|c| c.get(1))
    .map(|v| v.as_str())
}

/// A key-like literal naming the Tech Lead (`"TechLead"`, `'tech_lead'`, `"TechLeadJudge"`): a
/// persona label.
fn names_tech_lead(text: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(r#"(?i)["']tech[\s_-]?lead(?:[\s_-]?judge)?["']"#, &R).is_match(text)
}

/// The conditions of the `if`/`elif` chains line `line` of function `f` sits in (the chain
/// of an `else:` included): what decides when the line runs.
fn guards(m: &ModuleInfo, f: &super::syntax::FuncInfo, line: usize) -> Vec<String> {
    let lines: Vec<&str> = m.source.lines().collect();
    let mut out = Vec::new();
    for (n, at) in enclosing_lines(&lines, line, f.line) {
        // a parent: its chain (the `if`, `elif`s and `else` at this indentation) guards the line
        let head = lines[n].trim_start();
        if !(head.starts_with("if ") || head.starts_with("elif ") || head.starts_with("else")) {
            continue;
        }
        let mut k = n;
        loop {
            let head = lines[k].trim_start();
            if indentation(lines[k]) == at && (head.starts_with("if ") || head.starts_with("elif "))
            {
                out.push(head.to_string());
                if head.starts_with("if ") {
                    break;
                }
            }
            if k <= f.line || (indentation(lines[k]) < at && !lines[k].trim().is_empty()) {
                break;
            }
            k -= 1;
        }
    }
    out
}

/// The Tech Lead's score weighed above the other judges' in a function the Chief Justice runs:
/// a weighted sum (`p * 0.25 + d * 0.25 + t * 0.5`, the Tech Lead's term read through the
/// function's locals to a persona label) or a weights table (`{"TechLead": 0.5, "Prosecutor":
/// 0.25, ...}`) whose Tech Lead weight is the largest, on every criterion or under a test of
/// the architecture criterion (a sum under a test of another criterion is no functionality
/// weight). Location, the line, what it does.
fn tech_lead_weighted(
    modules: &[ModuleInfo],
    m: &ModuleInfo,
    f: Option<usize>,
) -> Option<(String, String, String)> {
    let func = m.functions.get(f?)?;
    let weighing = Weighing {
        modules,
        m,
        func,
        f,
    };
    weighing.weighted_sum().or_else(|| weighing.weights_table())
}

/// A function (`func`, index `f` in `m`) searched for the Tech Lead's score weighed above the
/// others'.
struct Weighing<'a> {
    modules: &'a [ModuleInfo],
    m: &'a ModuleInfo,
    func: &'a super::syntax::FuncInfo,
    f: Option<usize>,
}

impl Weighing<'_> {
    /// On which criteria the line runs: every one, or under a test of the architecture
    /// criterion; `None` under a test of another criterion.
    fn when(&self, line: usize) -> Option<&'static str> {
        let g = guards(self.m, self.func, line);
        let lits = literals(&g.join(" "));
        if lits.trim().is_empty() {
            Some("whatever the criterion")
        } else if tech_lead_on_architecture(&format!("\"techlead\" {lits}")) {
            Some("under a test of the architecture criterion")
        } else {
            None
        }
    }

    /// A term or a key looked through the function's locals (to what it names: the Tech Lead,
    /// or another judge's persona label).
    fn looked(&self, var: &str) -> String {
        let probe = IfInfo {
            line: self.func.line,
            func: self.f,
            condition: var.to_string(),
            text: String::new(),
            body: String::new(),
        };
        expand(self.modules, self.m, &probe, var, false)
    }

    /// A weighted sum (read from each statement's syntax): the Tech Lead's term multiplied by
    /// more than every other term, the others explicit weights or other judges' scores.
    fn weighted_sum(&self) -> Option<(String, String, String)> {
        let m = self.m;
        for (line, end, statement) in numbered_statements(m, self.func) {
            for (sum, terms) in super::syntax::shape(&as_statement(&statement)).sums {
                if terms.len() < 2 {
                    continue;
                }
                let Some(ti) = terms
                    .iter()
                    .position(|(t, _)| names_tech_lead(&self.looked(t)))
                else {
                    continue;
                };
                let tl = terms[ti].1;
                let others: Vec<&(String, f64)> = terms
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != ti)
                    .map(|(_, t)| t)
                    .collect();
                let explicit = |t: &str| {
                    statement.contains(&format!("{t} *")) || statement.contains(&format!("* {t}"))
                };
                let weights_given =
                    explicit(&terms[ti].0) && others.iter().all(|(t, _)| explicit(t));
                let judges_summed = others
                    .iter()
                    .any(|(t, _)| names_other_judge(&self.looked(t)));
                if !others.iter().all(|(_, w)| *w < tl) || !(weights_given || judges_summed) {
                    continue;
                }
                // the line of the Tech Lead's term (a sum written across lines)
                let term_line = (line..=end)
                    .find(|n| collapse(m.line_text(*n)).contains(&terms[ti].0))
                    .unwrap_or(line);
                let Some(scope) = self.when(term_line) else {
                    continue;
                };
                let shown: Vec<String> = others.iter().map(|(_, w)| format!("{w}")).collect();
                return Some((
                    format!("{}:{term_line}", m.path),
                    m.line_text(term_line).to_string(),
                    format!(
                        "`{}` weighs the Tech Lead's score {tl} against {}, {scope}",
                        super::syntax::truncate(&sum, 70),
                        crate::model::fact::join_and(&shown)
                    ),
                ));
            }
        }
        None
    }

    /// A weights table keyed by persona whose Tech Lead weight is above every other judge's.
    fn weights_table(&self) -> Option<(String, String, String)> {
        static TABLE: OnceLock<Regex> = OnceLock::new();
        let m = self.m;
        let body = m.snippet(self.func.line, self.func.end_line, 400);
        for table in re(r"\{[^{}]*\}", &TABLE).find_iter(&body) {
            let entries = weight_entries(table.as_str());
            let Some(tl) = entries
                .iter()
                .find(|(p, _, _)| *p == Some(2))
                .map(|(_, _, w)| *w)
            else {
                continue;
            };
            let others: Vec<f64> = entries
                .iter()
                .filter(|(p, _, _)| matches!(p, Some(0 | 1)))
                .map(|(_, _, w)| *w)
                .collect();
            let no_judge: Vec<String> = entries
                .iter()
                .filter(|(p, _, _)| p.is_none())
                .map(|(_, k, w)| format!("{k} {w}"))
                .collect();
            if others.is_empty() || !others.iter().all(|w| *w < tl) {
                continue;
            }
            let line = self.func.line + body[..table.start()].matches('\n').count();
            let Some(scope) = self.when(line) else {
                continue;
            };
            return Some((
                format!("{}:{line}", m.path),
                m.line_text(line).to_string(),
                format!(
                    "`{}` weighs the Tech Lead's score {tl} against {} for the other judges, {scope}{}",
                    super::syntax::truncate(
                        &table
                            .as_str()
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" "),
                        70
                    ),
                    crate::model::fact::join_and(
                        &others.iter().map(|w| w.to_string()).collect::<Vec<_>>()
                    ),
                    if no_judge.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (the table's {} {} no judge persona)",
                            crate::model::fact::join_and(&no_judge),
                            if no_judge.len() == 1 { "names" } else { "name" }
                        )
                    }
                ),
            ));
        }
        None
    }
}

/// A literal of the text is another judge's persona label (the Prosecutor's or the Defense's).
fn names_other_judge(text: &str) -> bool {
    literal_values(text)
        .iter()
        .any(|l| matches!(persona_label(l), Some(0 | 1)))
}

/// The entries of a weights table: (persona: 2 for the Tech Lead, 0 or 1 for the other
/// judges, none for a key that names no judge; key; weight). The rule is the Tech Lead
/// outweighing the other judges, so a weight given to what is no judge (a debate's moderator)
/// is not compared.
fn weight_entries(table: &str) -> Vec<(Option<usize>, String, f64)> {
    static ENTRY: OnceLock<Regex> = OnceLock::new();
    re(
        r#"["']([A-Za-z][\w\s-]*)["']\s*:\s*(\d+(?:\.\d+)?|\.\d+)\b"#,
        &ENTRY,
    )
    .captures_iter(table)
    .filter_map(|c| {
        let persona = if names_tech_lead(&format!("\"{}\"", &c[1])) {
            Some(2)
        } else {
            persona_label(&c[1])
        };
        Some((persona, c[1].to_string(), c[2].parse::<f64>().ok()?))
    })
    .collect()
}

/// The string literals' values in a piece of code (`"TechLead"` -> `TechLead`).
fn literal_values(text: &str) -> Vec<String> {
    static R: OnceLock<Regex> = OnceLock::new();
    re(r#""((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'"#, &R)
        .captures_iter(text)
        .filter_map(|c| {
            c.get(1)
                .or_else(|| c.get(2))
                .map(|x| x.as_str().to_string())
        })
        .collect()
}

/// A piece of code with its whitespace collapsed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The statements of a function (its `def` line excluded), each with the lines it starts and
/// ends on, as [`statements`] collapses them.
fn numbered_statements(
    m: &ModuleInfo,
    func: &super::syntax::FuncInfo,
) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut text = String::new();
    let mut start = 0;
    for n in func.line + 1..=func.end_line {
        let line = m.line_text(n);
        if text.is_empty() {
            start = n;
        }
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(line.trim());
        if depth <= 0 {
            depth = 0;
            if !text.trim().is_empty() {
                out.push((start, n, std::mem::take(&mut text)));
            }
            text.clear();
        }
    }
    out
}

/// The entries of a rule table read as branches: a list of `(condition, action)` pairs that a
/// function walks with `for c, a in table: if c(...): return a(...)` (first match wins). Each
/// entry is one `if`: its condition the condition's code (a lambda's expression, or a call of
/// the function it names, which [`expanded`] reads), its block the action's code (a lambda's
/// expression with the bodies of the repository's functions it calls, or the body of the
/// function it names); `text` is the entry as written.
fn rule_tables(modules: &[ModuleInfo], m: &ModuleInfo) -> Vec<IfInfo> {
    static FOR: OnceLock<Regex> = OnceLock::new();
    let mut out = Vec::new();
    for (fi, func) in m.functions.iter().enumerate() {
        let body = m.snippet(func.line, func.end_line, 400);
        for c in re(
            r"(?m)^\s*for\s+([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s+in\s+([A-Za-z_]\w*)\s*:",
            &FOR,
        )
        .captures_iter(&body)
        {
            let (cond, action, table) = (&c[1], &c[2], &c[3]);
            // the loop tests the condition and applies the action
            let after = &body[c.get(0).map_or(0, |x| x.end())..];
            let calls_both =
                after.contains(&format!("if {cond}(")) && after.contains(&format!("{action}("));
            if !calls_both {
                continue;
            }
            let assigned = Regex::new(&format!(
                r"(?m)^\s*{}\s*(:[^=\n]*)?=\s*\[",
                regex::escape(table)
            ));
            let Some(start) = assigned
                .ok()
                .and_then(|r| r.find(&body).map(|x| x.end() - 1))
            else {
                continue;
            };
            for (offset, pair) in pairs(&body[start..]) {
                let [c_text, a_text] = pair;
                let line = func.line + body[..start + offset].matches('\n').count();
                let lambda = |t: &str| {
                    t.trim()
                        .strip_prefix("lambda")
                        .and_then(|r| r.split_once(':'))
                        .map(|(_, e)| e.trim().to_string())
                };
                let condition =
                    lambda(&c_text).unwrap_or_else(|| format!("{}(...)", c_text.trim()));
                let named_body = |name: &str| {
                    std::iter::once(m).chain(modules.iter()).find_map(|mm| {
                        mm.functions
                            .iter()
                            .find(|g| g.name == name)
                            .map(|g| mm.snippet(g.line + 1, g.end_line, 60))
                    })
                };
                let block = match lambda(&a_text) {
                    Some(e) => {
                        let mut b = format!("return {e}");
                        for name in called(&e) {
                            if let Some(t) = named_body(name) {
                                b.push('\n');
                                b.push_str(&t);
                            }
                        }
                        b
                    }
                    None => named_body(a_text.trim()).unwrap_or_default(),
                };
                out.push(IfInfo {
                    line,
                    func: Some(fi),
                    condition,
                    text: format!("({}, {})", c_text.trim(), a_text.trim())
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    body: block,
                });
            }
        }
    }
    out
}

/// The two-element tuples of a list literal (`text` starts at its `[`), with their offset in
/// `text`.
fn pairs(text: &str) -> Vec<(usize, [String; 2])> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = None;
    let mut parts: Vec<String> = Vec::new();
    let mut part = String::new();
    let mut quote: Option<char> = None;
    for (i, ch) in text.char_indices() {
        if let Some(q) = quote {
            if ch == q {
                quote = None;
            }
            if depth >= 2 {
                part.push(ch);
            }
            continue;
        }
        match ch {
            '"' | '\'' => {
                quote = Some(ch);
                if depth >= 2 {
                    part.push(ch);
                }
            }
            '[' | '(' | '{' => {
                depth += 1;
                if depth == 2 && ch == '(' {
                    start = Some(i);
                    parts.clear();
                    part.clear();
                } else if depth > 2 {
                    part.push(ch);
                }
            }
            ']' | ')' | '}' => {
                if depth == 2 && ch == ')' {
                    if let Some(s) = start.take() {
                        parts.push(std::mem::take(&mut part));
                        // a lambda's parameters hold commas: its pieces joined up to its `:`
                        let mut items: Vec<String> = Vec::new();
                        let mut open_lambda = false;
                        for p in parts.drain(..) {
                            match items.last_mut() {
                                Some(last) if open_lambda => {
                                    last.push(',');
                                    last.push_str(&p);
                                }
                                _ => items.push(p.clone()),
                            }
                            let last = items.last().map_or("", |l| l.as_str());
                            open_lambda =
                                last.trim_start().starts_with("lambda") && !last.contains(':');
                        }
                        items.retain(|i| !i.trim().is_empty());
                        if let [a, b] = &items[..] {
                            out.push((s, [a.clone(), b.clone()]));
                        }
                    }
                } else if depth > 2 {
                    part.push(ch);
                }
                depth -= 1;
                if depth <= 0 {
                    break;
                }
            }
            ',' if depth == 2 => parts.push(std::mem::take(&mut part)),
            _ if depth >= 2 => part.push(ch),
            _ => {}
        }
    }
    out
}

/// The functions of the Chief Justice: those its node runs (`synthesis`), those of the justice
/// code that hold a rule branch and the Chief Justice's own function (`located`: where the
/// Chief Justice was found, path and line); then, transitively (four calls deep), the
/// repository's functions they call. An LLM call of a judge or a detective that shares a
/// module with the Chief Justice is not the Chief Justice's.
fn justice_call_tree<'a>(
    modules: &'a [ModuleInfo],
    justice: &[&(&'a ModuleInfo, Vec<RuleAt>)],
    located: Option<(&str, usize)>,
    synthesis: &[Def],
    runs: &BTreeSet<Def>,
) -> Vec<(&'a ModuleInfo, Option<usize>)> {
    let mut tree: Vec<(&ModuleInfo, Option<usize>)> = Vec::new();
    // what the Chief Justice's node runs (`roles::synthesis`: its functions, the methods of a
    // class it builds), wherever they are
    for (i, line) in synthesis.iter().chain(runs) {
        let Some(m) = modules.get(*i) else { continue };
        if let Some(f) = m.functions.iter().position(|f| f.line == *line)
            && !tree
                .iter()
                .any(|(tm, tf)| std::ptr::eq(*tm, m) && *tf == Some(f))
        {
            tree.push((m, Some(f)));
        }
    }
    for (m, rules) in justice {
        let index = modules.iter().position(|x| x.path == m.path);
        for (i, f) in m.functions.iter().enumerate() {
            let holds_rule = rules
                .iter()
                .any(|(_, line, _, _)| f.line <= *line && *line <= f.end_line);
            let is_located = located.is_some_and(|(path, line)| path == m.path && f.line == line);
            let is_node = index.is_some_and(|x| synthesis.contains(&(x, f.line)));
            let known = tree
                .iter()
                .any(|(tm, tf)| std::ptr::eq(*tm, *m) && *tf == Some(i));
            if (holds_rule || is_located || is_node) && !known {
                tree.push((m, Some(i)));
            }
        }
    }
    let mut frontier = tree.clone();
    for _ in 0..4 {
        let mut next = Vec::new();
        for (m, f) in &frontier {
            for c in m.calls.iter().filter(|c| encloses(m, *f, c.func)) {
                if c.receiver.as_deref().is_some_and(|r| r != "self") {
                    continue;
                }
                let callee = std::iter::once(*m).chain(modules.iter()).find_map(|mm| {
                    mm.functions
                        .iter()
                        .position(|g| g.name == c.method)
                        .map(|i| (mm, Some(i)))
                });
                if let Some((mm, g)) = callee {
                    if !tree
                        .iter()
                        .any(|(tm, tg)| std::ptr::eq(*tm, mm) && *tg == g)
                    {
                        tree.push((mm, g));
                        next.push((mm, g));
                    }
                }
            }
        }
        frontier = next;
    }
    tree
}

/// A call that writes a file: `write_text`, or `open` with a writing mode.
fn writes_file(c: &super::syntax::CallInfo) -> bool {
    c.method == "write_text"
        || (c.method == "open"
            && c.args
                .get(1)
                .or_else(|| c.kwargs.iter().find(|(k, _)| k == "mode").map(|(_, v)| v))
                .and_then(|a| a.as_str())
                .is_some_and(|mode| mode.contains('w')))
}

/// Code whose innermost function is `inner` belongs to `f`: the same function or one defined
/// inside it (`None`: the module's top level).
fn encloses(m: &ModuleInfo, f: Option<usize>, inner: Option<usize>) -> bool {
    match f {
        None => inner.is_none(),
        Some(i) => {
            inner == Some(i)
                || m.functions.get(i).is_some_and(|g| {
                    inner.is_some_and(|j| {
                        m.functions
                            .get(j)
                            .is_some_and(|h| g.line < h.line && h.end_line <= g.end_line)
                    })
                })
        }
    }
}

/// The model's reply is only text: the function reads it as `<reply>.content` and binds no
/// schema, parses nothing (`with_structured_output`, an output parser, `json.loads`,
/// `model_validate`, `int(...)`/`float(...)` of the content).
fn replies_as_text(m: &ModuleInfo, f: Option<usize>, c: &super::syntax::CallInfo) -> bool {
    static DATA: OnceLock<Regex> = OnceLock::new();
    let Some(reply) = c.assigned_to.as_deref() else {
        return false;
    };
    let body = match f.and_then(|i| m.functions.get(i)) {
        Some(g) => m.snippet(g.line, g.end_line, 400),
        None => m.line_text(c.line).to_string(),
    };
    let data = re(
        r"with_structured_output|OutputParser|json\.loads|model_validate|parse_obj|parse_raw|\b(int|float)\(\s*[\w.]*content",
        &DATA,
    );
    body.contains(&format!("{reply}.content")) && !data.is_match(&body)
}

/// A rule a branch implements: the rule, the branch's line, what it does, and whether it goes
/// only part of the way.
type RuleAt = (JusticeRule, usize, String, bool);

/// A function of the repository: (module index, line of its `def`).
type Def = (usize, usize);

/// The rules the branches of one module implement.
type ModuleRules<'a> = (&'a ModuleInfo, Vec<RuleAt>);

/// A rule found: where (`path:line`), the line, and what the branch does.
type Hit = (String, String, String);

/// `synthesis`: the functions of the Chief Justice node (read from what the graph's nodes do:
/// `roles::synthesis`), `runs`: every function they run. The justice code is the modules of
/// `synthesis`, then those of `runs` where a branch implements a rule, then any module whose
/// branches implement three rules or more.
pub fn analyse(
    modules: &[ModuleInfo],
    texts: &[(String, String)],
    synthesis: &[Def],
    runs: &BTreeSet<Def>,
    evidence_keys: &BTreeSet<String>,
) -> JusticeFacts {
    let mut facts = JusticeFacts::default();
    let product: Vec<&ModuleInfo> = modules
        .iter()
        .filter(|m| !super::safety::is_test(&m.path))
        .collect();
    facts.files = product.len();
    let flags = route_flags(modules, synthesis, runs);
    let by_module: Vec<ModuleRules> = product
        .iter()
        .map(|m| (*m, rules_of_module(modules, m, evidence_keys, &flags)))
        .collect();
    let owned = justice_code(modules, &by_module, synthesis, runs);
    let justice: Vec<&ModuleRules> = owned.iter().collect();
    facts.modules = justice.iter().map(|(m, _)| m.path.clone()).collect();
    if let Some((m, rules)) = justice.first() {
        let (line, end) = chief_justice_lines(modules, m, rules, synthesis, runs);
        facts.location = Some(format!("{}:{line}", m.path));
        facts.snippet = m.snippet(line, end, 60);
    }
    let located = facts
        .location
        .as_deref()
        .and_then(|l| l.rsplit_once(':'))
        .and_then(|(p, n)| n.parse::<usize>().ok().map(|n| (p, n)));
    let tree = justice_call_tree(modules, &justice, located, synthesis, runs);
    facts.functions = tree.len();
    facts.branches = tree
        .iter()
        .map(|(m, f)| m.ifs.iter().filter(|i| encloses(m, *f, i.func)).count())
        .sum();
    let searched = searched_rules(&justice, &tree, &by_module);
    for rule in JusticeRule::ALL {
        let fact = rule_fact(modules, rule, &searched, &justice, &tree, &facts.modules);
        facts.rules.push(fact);
    }
    let rules_set_scores = facts
        .rules
        .iter()
        .any(|r| r.found && r.rule != JusticeRule::DissentRequirement.id());
    (facts.llm_calls, facts.prose_llm_calls) = llm_calls(tree, rules_set_scores);
    facts.calls_llm = !facts.llm_calls.is_empty() || !facts.prose_llm_calls.is_empty();
    facts.writes_markdown = markdown_written(modules);
    facts.sections = section_locations(modules, texts);
    facts
}

/// The rules of a module: those of its branches, then those of its rule tables (each said of
/// the table's entry).
fn rules_of_module(
    modules: &[ModuleInfo],
    m: &ModuleInfo,
    evidence_keys: &BTreeSet<String>,
    flags: &[RouteFlag],
) -> Vec<RuleAt> {
    let mut rules: Vec<RuleAt> = m
        .ifs
        .iter()
        .flat_map(|f| {
            rule_of(modules, m, f, evidence_keys, flags)
                .into_iter()
                .map(move |(r, how, partial)| (r, f.line, how, partial))
        })
        .collect();
    for entry in rule_tables(modules, m) {
        let shown = format!("`if {}`", shown_condition(&entry.condition));
        for (r, how, partial) in rule_of(modules, m, &entry, evidence_keys, flags) {
            let how = how.replacen(
                &shown,
                &format!(
                    "the rule table's entry `{}`",
                    super::syntax::truncate(&entry.text, 70)
                ),
                1,
            );
            rules.push((r, entry.line, how, partial));
        }
    }
    rules
}

/// How many distinct rules the branches implement whole.
fn distinct_rules(rules: &[RuleAt]) -> usize {
    rules
        .iter()
        .filter(|(_, _, _, partial)| !partial)
        .map(|(r, _, _, _)| *r)
        .collect::<BTreeSet<JusticeRule>>()
        .len()
}

/// The justice code, a module once: the modules of `synthesis`, then those of `runs` where a
/// branch implements a rule (in both, only the branches of the functions the node runs), then
/// any module whose branches implement three rules or more; the modules with a whole rule
/// first.
fn justice_code<'a>(
    modules: &[ModuleInfo],
    by_module: &[ModuleRules<'a>],
    synthesis: &[Def],
    runs: &BTreeSet<Def>,
) -> Vec<ModuleRules<'a>> {
    let module_of = |i: usize| {
        modules
            .get(i)
            .and_then(|x| by_module.iter().find(|(m, _)| m.path == x.path))
    };
    // in a module the Chief Justice's node runs, only the branches of the functions it runs
    // (a detective or an aggregator beside it in the module is not the Chief Justice)
    let ran: Vec<(&str, usize, usize)> = synthesis
        .iter()
        .chain(runs)
        .filter_map(|(i, line)| {
            let m = modules.get(*i)?;
            let f = m.functions.iter().find(|f| f.line == *line)?;
            Some((m.path.as_str(), f.line, f.end_line))
        })
        .collect();
    let mut owned: Vec<ModuleRules> = Vec::new();
    let candidates = synthesis
        .iter()
        .filter_map(|(i, _)| module_of(*i))
        .map(|e| scope(e, &ran))
        .chain(
            runs.iter()
                .filter_map(|(i, _)| module_of(*i))
                .map(|e| scope(e, &ran))
                .filter(|(_, rules)| !rules.is_empty()),
        )
        .chain(
            by_module
                .iter()
                .filter(|(_, rules)| distinct_rules(rules) >= 3)
                .cloned(),
        );
    for c in candidates {
        if !owned.iter().any(|j| j.0.path == c.0.path) {
            owned.push(c);
        }
    }
    // where the rules are first: a node that only gathers the opinions (a join that logs
    // them) is not where the Chief Justice decides
    owned.sort_by_key(|(_, rules)| !rules.iter().any(|(_, _, _, partial)| !partial));
    owned
}

/// The rules of a module kept to the branches inside the functions `ran` (path, first and
/// last line).
fn scope<'a>(entry: &ModuleRules<'a>, ran: &[(&str, usize, usize)]) -> ModuleRules<'a> {
    let (m, rules) = entry;
    let rules = rules
        .iter()
        .filter(|(_, line, _, _)| {
            ran.iter()
                .any(|(p, a, b)| *p == m.path && a <= line && line <= b)
        })
        .cloned()
        .collect();
    (*m, rules)
}

/// Where the Chief Justice is in its first module `m` (first and last line): the function of
/// its first rule branch (what it does), else the first function its node runs in `m`, else
/// lines 1 to 60.
fn chief_justice_lines(
    modules: &[ModuleInfo],
    m: &ModuleInfo,
    rules: &[RuleAt],
    synthesis: &[Def],
    runs: &BTreeSet<Def>,
) -> (usize, usize) {
    let by_rule = rules
        .iter()
        .filter(|(_, _, _, partial)| !partial)
        .map(|(_, line, _, _)| *line)
        .min()
        .and_then(|line| {
            m.functions
                .iter()
                .filter(|f| f.line <= line && line <= f.end_line)
                .min_by_key(|f| f.end_line - f.line)
        })
        .map(|f| (f.line, f.end_line));
    by_rule
        .or_else(|| {
            // the first function the Chief Justice node runs in this module
            synthesis
                .iter()
                .chain(runs)
                .filter(|(i, _)| modules.get(*i).is_some_and(|x| x.path == m.path))
                .find_map(|(_, line)| m.functions.iter().find(|f| f.line == *line))
                .map(|f| (f.line, f.end_line))
        })
        .unwrap_or((1, 60))
}

/// Every branch counted is searched: the justice code's rules first, then those of the other
/// functions the Chief Justice runs (a helper in another module it calls).
fn searched_rules<'a>(
    justice: &[&ModuleRules<'a>],
    tree: &[(&'a ModuleInfo, Option<usize>)],
    by_module: &[ModuleRules<'a>],
) -> Vec<ModuleRules<'a>> {
    let mut searched: Vec<ModuleRules> = justice.iter().map(|(m, r)| (*m, r.clone())).collect();
    for (m, f) in tree {
        let Some((_, rules)) = by_module.iter().find(|(bm, _)| bm.path == m.path) else {
            continue;
        };
        let inside: Vec<RuleAt> = rules
            .iter()
            .filter(|(_, line, _, _)| {
                m.ifs
                    .iter()
                    .any(|i| i.line == *line && encloses(m, *f, i.func))
            })
            .filter(|r| {
                !searched
                    .iter()
                    .any(|(sm, sr)| sm.path == m.path && sr.contains(r))
            })
            .cloned()
            .collect();
        if inside.is_empty() {
            continue;
        }
        match searched.iter_mut().find(|(sm, _)| sm.path == m.path) {
            Some((_, sr)) => sr.extend(inside),
            None => searched.push((*m, inside)),
        }
    }
    searched
}

/// The first branch of `searched` implementing `rule` whole (`partial` false) or only part
/// of the way.
fn rule_found(searched: &[ModuleRules], rule: JusticeRule, partial: bool) -> Option<Hit> {
    searched.iter().find_map(|(m, rules)| {
        rules
            .iter()
            .find(|(r, _, _, p)| *r == rule && *p == partial)
            .map(|(_, line, how, _)| {
                (
                    format!("{}:{line}", m.path),
                    m.line_text(*line).to_string(),
                    how.clone(),
                )
            })
    })
}

/// What is found of `rule`: a branch implementing it, else (the dissent requirement) a
/// conditional expression on the spread, else (the functionality weight) the Tech Lead
/// weighed above the others; a branch going part of the way only when nothing is found.
/// Nothing found is cited at the first justice module (`justice_modules`).
fn rule_fact(
    modules: &[ModuleInfo],
    rule: JusticeRule,
    searched: &[ModuleRules],
    justice: &[&ModuleRules],
    tree: &[(&ModuleInfo, Option<usize>)],
    justice_modules: &[String],
) -> RuleFact {
    let mut hit = rule_found(searched, rule, false);
    if hit.is_none() && rule == JusticeRule::DissentRequirement {
        hit = justice
            .iter()
            .find_map(|(m, _)| conditional_dissent(modules, m));
    }
    // the Tech Lead's score weighed above the others' in a weighted sum or a weights table
    if hit.is_none() && rule == JusticeRule::FunctionalityWeight {
        hit = tree
            .iter()
            .find_map(|(m, f)| tech_lead_weighted(modules, m, *f));
    }
    let partial = if hit.is_none() {
        rule_found(searched, rule, true).map(|(at, _, how)| (at, how))
    } else {
        None
    };
    RuleFact {
        rule: rule.id().to_string(),
        found: hit.is_some(),
        location: hit.as_ref().map(|h| h.0.clone()).unwrap_or_else(|| {
            justice_modules
                .first()
                .cloned()
                .unwrap_or_else(|| "(no justice code)".into())
        }),
        snippet: hit.as_ref().map(|h| h.1.clone()).unwrap_or_default(),
        how: hit.map(|h| h.2).unwrap_or_default(),
        partial,
    }
}

/// The first line of `m` where a dissent is written by a conditional expression on the spread
/// (`x if spread > 2 else None`).
fn conditional_dissent(modules: &[ModuleInfo], m: &ModuleInfo) -> Option<Hit> {
    m.source.lines().enumerate().find_map(|(i, l)| {
        if !(l.contains(" if ") && l.contains(" else ")) {
            return None;
        }
        // the line with what it reads looked through: the spread computed in a
        // local, the dissent written by a function it calls
        let probe = IfInfo {
            line: i + 1,
            func: m
                .functions
                .iter()
                .enumerate()
                .filter(|(_, f)| f.line <= i + 1 && i < f.end_line)
                .max_by_key(|(_, f)| f.line)
                .map(|(fi, _)| fi),
            condition: l.to_string(),
            text: String::new(),
            body: String::new(),
        };
        let seen = expanded(modules, m, &probe, l);
        (spread(&seen) && writes_text(&seen)).then(|| {
            (
                format!("{}:{}", m.path, i + 1),
                l.trim().to_string(),
                format!(
                    "a conditional expression on the spread writes a dissent: `{}`",
                    super::syntax::truncate(l.trim(), 70)
                ),
            )
        })
    })
}

/// The model calls of the functions the Chief Justice runs, a site once, sorted: those whose
/// reply takes part in the verdict, and those whose reply is only text while the rules set the
/// scores (`rules_set_scores`).
fn llm_calls(
    tree: Vec<(&ModuleInfo, Option<usize>)>,
    rules_set_scores: bool,
) -> (Vec<Site>, Vec<Site>) {
    let (mut llm, mut prose): (Vec<Site>, Vec<Site>) = (Vec::new(), Vec::new());
    for (m, f) in tree {
        for c in m.calls.iter().filter(|c| encloses(m, f, c.func)) {
            if !matches!(
                c.method.as_str(),
                "invoke" | "ainvoke" | "with_structured_output" | "predict" | "generate"
            ) {
                continue;
            }
            let site = Site::new(m.path.clone(), c.line);
            if llm.contains(&site) || prose.contains(&site) {
                continue;
            }
            if rules_set_scores && replies_as_text(m, f, c) {
                prose.push(site);
            } else {
                llm.push(site);
            }
        }
    }
    llm.sort();
    prose.sort();
    (llm, prose)
}

/// Where a Markdown file is written: the first module holding a `.md` string and a call that
/// writes a file, or handing arguments to a function of the repository that writes one.
fn markdown_written(modules: &[ModuleInfo]) -> Option<String> {
    for m in modules {
        let md = m.strings.iter().any(|s| s.text.contains(".md"));
        if !md {
            continue;
        }
        if let Some(c) = m.calls.iter().find(|c| writes_file(c)) {
            return Some(format!("{}:{}", m.path, c.line));
        }
        // the .md path handed to a function of the repository that writes a file
        // (`render_report(report, "audit/report.md")` in main.py, the `open(.., "w")` in the
        // report module): cited where the path is handed over
        let writer = |name: &str| {
            modules.iter().any(|mm| {
                mm.functions.iter().enumerate().any(|(i, f)| {
                    f.name == name
                        && mm
                            .calls
                            .iter()
                            .any(|c| writes_file(c) && encloses(mm, Some(i), c.func))
                })
            })
        };
        if let Some(c) = m
            .calls
            .iter()
            .find(|c| c.receiver.is_none() && !c.args.is_empty() && writer(&c.method))
        {
            return Some(format!("{}:{}", m.path, c.line));
        }
    }
    None
}

/// Each of [`SECTIONS`] with where it is first written: a string literal of the code, else a
/// line of the other texts.
fn section_locations(
    modules: &[ModuleInfo],
    texts: &[(String, String)],
) -> Vec<(String, Option<String>)> {
    SECTIONS
        .iter()
        .zip(section_res())
        .map(|(section, re)| {
            let loc = modules
                .iter()
                .find_map(|m| {
                    m.strings
                        .iter()
                        .find(|s| re.is_match(&s.text))
                        .map(|s| format!("{}:{}", m.path, s.line))
                })
                .or_else(|| {
                    texts.iter().find_map(|(p, t)| {
                        t.lines()
                            .position(|l| re.is_match(l))
                            .map(|i| format!("{p}:{}", i + 1))
                    })
                });
            (section.to_string(), loc)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    /// The functions the test's graph would run as its Chief Justice node (the graph is not
    /// part of these tests): `chief_justice` or `decide` where the fixture defines one, else
    /// every function of its first module.
    fn node(ms: &[ModuleInfo]) -> Vec<Def> {
        let named: Vec<Def> = ms
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                m.functions
                    .iter()
                    .filter(|f| f.name == "chief_justice" || f.name == "decide")
                    .map(move |f| (i, f.line))
            })
            .collect();
        if !named.is_empty() {
            return named;
        }
        ms.first()
            .map(|m| m.functions.iter().map(|f| (0, f.line)).collect())
            .unwrap_or_default()
    }

    fn analyse(ms: &[ModuleInfo], texts: &[(String, String)]) -> JusticeFacts {
        super::analyse(ms, texts, &node(ms), &BTreeSet::new(), &BTreeSet::new())
    }

    fn found(f: &JusticeFacts) -> Vec<(&str, bool)> {
        f.rules.iter().map(|r| (r.rule.as_str(), r.found)).collect()
    }

    #[test]
    fn deterministic_rules_are_read_from_what_the_branches_test_and_do() {
        let src = r###"
def re_evaluate(state, llm):
    return llm.invoke(state["opinions"])

def chief_justice(state, llm):
    ops = state["opinions"]
    tech_lead = next(o for o in ops if o.judge == "TechLead")
    scores = [o.score for o in ops]
    final = round(sum(scores) / len(scores))
    if any(e.kind == "security" for e in state["evidences"]):
        final = min(final, 3)
    if not evidence.found and defense.score > 3:
        final = prosecutor.score
    if max(scores) - min(scores) > 2:
        final = re_evaluate(state, llm)
    if max(scores) - min(scores) > 2:
        dissent = f"Prosecutor {scores[0]} vs Defense {scores[1]}"
    if tech_lead.score >= 4 and criterion == "graph_orchestration":
        final = tech_lead.score
    path = "audit/report.md"
    with open(path, "w") as f:
        f.write("## Executive Summary")
"###;
        let ms = vec![parse_module("src/nodes/justice.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        assert_eq!(
            found(&f),
            vec![
                ("security_override", true),
                ("fact_supremacy", true),
                ("functionality_weight", true),
                ("dissent_requirement", true),
                ("variance_re_evaluation", true),
            ]
        );
        let at = |rule: &str| {
            f.rules
                .iter()
                .find(|r| r.rule == rule)
                .map(|r| r.location.clone())
                .unwrap_or_default()
        };
        // each rule on the branch that does it
        assert_eq!(at("security_override"), "src/nodes/justice.py:10");
        assert_eq!(at("fact_supremacy"), "src/nodes/justice.py:12");
        assert_eq!(at("variance_re_evaluation"), "src/nodes/justice.py:14");
        assert_eq!(at("dissent_requirement"), "src/nodes/justice.py:16");
        assert_eq!(at("functionality_weight"), "src/nodes/justice.py:18");
        assert!(f.calls_llm);
        assert_eq!(
            f.writes_markdown.as_deref(),
            Some("src/nodes/justice.py:21")
        );
        assert!(f.sections[0].1.is_some() && f.sections[1].1.is_none());
    }

    #[test]
    fn an_llm_prompt_is_not_a_rule() {
        let src = "PROMPT = 'Apply the security override: cap at 3. Apply fact supremacy.'\ndef chief_justice(state, llm):\n    return llm.invoke(PROMPT)\n";
        let ms = vec![parse_module("src/nodes/justice.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        assert!(f.rules.iter().all(|r| !r.found));
        assert!(f.calls_llm);
    }

    #[test]
    fn a_model_that_only_writes_text_takes_no_part_in_the_verdict() {
        // the rules compute the score; the model writes the summary's prose
        let src = r###"
def summary(results, llm):
    response = llm.invoke("Write an executive summary of " + str(results))
    return response.content

def chief_justice(state, llm):
    scores = [o.score for o in state["opinions"]]
    final = round(sum(scores) / len(scores))
    if any(e.kind == "security" for e in state["evidences"]):
        final = min(final, 3)
    return {"final": final, "summary": summary(final, llm)}
"###;
        let ms = vec![parse_module("src/nodes/justice.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        assert!(f.llm_calls.is_empty(), "{:?}", f.llm_calls);
        assert_eq!(
            f.prose_llm_calls,
            vec![Site::new("src/nodes/justice.py", 3)]
        );
        // a reply bound to a schema is data: it takes part in the verdict
        let bound = src.replace(
            "response = llm.invoke(",
            "response = llm.with_structured_output(Verdict).invoke(",
        );
        let ms = vec![parse_module("src/nodes/justice.py", bound).unwrap()];
        let f = analyse(&ms, &[]);
        assert!(f.prose_llm_calls.is_empty());
        assert!(!f.llm_calls.is_empty());
        // without a rule computing the scores, the model's text is the verdict
        let no_rule = src.replace("final = min(final, 3)", "print(final)");
        let ms = vec![parse_module("src/nodes/justice.py", no_rule).unwrap()];
        let f = analyse(&ms, &[]);
        assert_eq!(f.llm_calls, vec![Site::new("src/nodes/justice.py", 3)]);
    }

    #[test]
    fn a_judges_model_call_beside_the_chief_justice_is_not_the_chief_justices() {
        // judges and the Chief Justice in one module: only the Chief Justice's calls count
        let src = r###"
def prosecutor(state, llm):
    return {"opinions": [llm.with_structured_output(Opinion).invoke(state["evidence"])]}

def helper(state):
    return [o.score for o in state["opinions"]]

def chief_justice(state):
    scores = helper(state)
    final = round(sum(scores) / len(scores))
    if any(e.kind == "security" for e in state["evidences"]):
        final = min(final, 3)
    return {"final": final}
"###;
        let ms = vec![parse_module("src/nodes/courtroom.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        assert_eq!(f.modules, vec!["src/nodes/courtroom.py".to_string()]);
        assert!(!f.calls_llm, "{:?}", f.llm_calls);
        // the Chief Justice calling the model through a helper is found
        let via = src.replace(
            "return [o.score for o in state[\"opinions\"]]",
            "return prosecutor(state, LLM)[\"opinions\"]",
        );
        let ms = vec![parse_module("src/nodes/courtroom.py", via).unwrap()];
        let f = analyse(&ms, &[]);
        assert_eq!(f.llm_calls, vec![Site::new("src/nodes/courtroom.py", 3)]);
    }

    #[test]
    fn a_markdown_path_handed_to_a_writing_function_is_a_markdown_report() {
        let writer = "def render(report, path):\n    tmp = path + '.tmp'\n    with open(tmp, 'w') as f:\n        f.write(report)\n";
        let main = "from report import render\n\ndef main(state):\n    out = 'audit/audit_report.md'\n    render(state['final'], out)\n";
        let ms = vec![
            parse_module("src/report.py", writer.into()).unwrap(),
            parse_module("main.py", main.into()).unwrap(),
        ];
        assert_eq!(
            analyse(&ms, &[]).writes_markdown.as_deref(),
            Some("main.py:5")
        );
        // a function of that name that writes nothing is no writer
        let quiet = writer.replace("open(tmp, 'w')", "open(tmp)");
        let ms = vec![
            parse_module("src/report.py", quiet).unwrap(),
            parse_module("main.py", main.into()).unwrap(),
        ];
        assert_eq!(analyse(&ms, &[]).writes_markdown, None);
    }

    #[test]
    fn the_chief_justice_nodes_function_comes_before_a_detective_named_for_it() {
        let detective = "def collect_chief_justice_evidence(repo, llm):\n    if repo:\n        text = llm.invoke('look at ' + repo).content\n    return text\n";
        let justice = "def decide(ops, evidences):\n    final = round(sum(o.score for o in ops) / 3)\n    if any(e.kind == 'security' for e in evidences):\n        final = min(final, 3)\n    return final\n";
        let ms = vec![
            parse_module("src/nodes/detectives.py", detective.into()).unwrap(),
            parse_module("src/nodes/justice.py", justice.into()).unwrap(),
        ];
        let f = analyse(&ms, &[]);
        assert_eq!(f.location.as_deref(), Some("src/nodes/justice.py:1"));
        // the detective's branch and model call are not the Chief Justice's
        assert_eq!(f.branches, 1);
        assert!(!f.calls_llm);
    }

    #[test]
    fn a_helper_matching_found_evidence_against_topic_keywords_is_fact_supremacy() {
        let src = r###"
def supported(evidences, criterion):
    topics = {"safe": ["sandbox", "security"], "graph": ["edge", "node"]}
    for ev in evidences:
        if not ev.found:
            continue
        if any(t in ev.goal for t in topics.get(criterion, [])):
            return True
    return False

def chief_justice(defense, evidences, criterion, score):
    if defense.score >= 4:
        if not supported(evidences, criterion):
            score = min(score, 2)
    return score
"###;
        assert_eq!(
            rule_at(src, "fact_supremacy"),
            Some("src/nodes/justice.py:13".into())
        );
        assert_eq!(rule_at(src, "security_override"), None);
    }

    #[test]
    fn only_the_functions_the_chief_justice_runs_are_its_code() {
        // an aggregator beside the Chief Justice caps a score on a security word: not a rule of
        // the Chief Justice, whose node runs `decide` only
        let src = "def aggregate(state, score):\n    if 'security' in state['notes']:\n        score = min(score, 3)\n    return score\n\ndef decide(ops):\n    final = round(sum(o.score for o in ops) / 3)\n    return final\n";
        let ms = vec![parse_module("src/graph.py", src.into()).unwrap()];
        let decide = ms[0]
            .functions
            .iter()
            .find(|f| f.name == "decide")
            .unwrap()
            .line;
        let f = super::analyse(&ms, &[], &[(0, decide)], &BTreeSet::new(), &BTreeSet::new());
        assert!(f.rules.iter().all(|r| !r.found), "{:?}", f.rules);
        assert_eq!(f.location.as_deref(), Some("src/graph.py:6"));
    }

    fn rule_at(src: &str, rule: &str) -> Option<String> {
        let ms = vec![parse_module("src/nodes/justice.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        let r = f.rules.iter().find(|r| r.rule == rule).unwrap();
        r.found.then(|| r.location.clone())
    }

    #[test]
    fn a_cap_under_a_security_condition_is_the_security_override_whatever_the_names() {
        // The flag is computed from security findings; the cap is min().
        let src = "def chief_justice(state):\n    flagged = any(e.kind == 'os_system' for e in state['evidences'])\n    score = average(state)\n    if flagged:\n        score = min(score, 3)\n    return score\n";
        assert_eq!(
            rule_at(src, "security_override").as_deref(),
            Some("src/nodes/justice.py:4")
        );
        // `if x > cap: x = cap` under a condition on the Prosecutor's security words.
        let src = "def f7(opinions):\n    final = mean(opinions)\n    if 'security' in opinions[0].argument:\n        if final > 3:\n            final = 3\n    return final\n";
        assert!(rule_at(src, "security_override").is_some());
        // a named cap on a score read from a table: `if s.get(k, 5) > cap: s[k] = cap`
        let src = "def f8(opinions, scores, cap):\n    for op in opinions:\n        if 'shell=True' in op.argument:\n            if scores.get(op.criterion_id, 5) > cap:\n                scores[op.criterion_id] = cap\n    return scores\n";
        assert_eq!(
            rule_at(src, "security_override").as_deref(),
            Some("src/nodes/justice.py:3")
        );
        let how = rule(src, "security_override").how;
        assert!(
            how.contains("`if 'shell=True' in op.argument`: `scores[op.criterion_id] = cap`"),
            "{how}"
        );
        // raised to the bound rather than capped at it: no cap
        let other = src.replace(") > cap", ") < cap");
        assert_eq!(rule_at(&other, "security_override"), None);
        // the bound computed by a helper that tests the Prosecutor's words for a security
        // matter, another value compared with it, the score set to it (the test written
        // across lines; a statement after the capping one)
        let src = "def lim(ops):\n    for o in ops:\n        if o.score <= 2 and 'unsafe' in o.argument.lower():\n            return 2.0\n    return None\n\ndef decide(ops):\n    w = mean(ops)\n    z = w\n    k = lim(ops)\n    if (k is not None\n            and w > k):\n        z = k\n        msg = f'capped at {k}'\n    return z\n";
        assert_eq!(
            rule_at(src, "security_override").as_deref(),
            Some("src/nodes/justice.py:11")
        );
        let how = rule(src, "security_override").how;
        assert!(how.contains("`z = k`"), "{how}");
        // the value raised to the bound, or set to something else: no cap
        assert_eq!(
            rule_at(&src.replace("w > k", "w < k"), "security_override"),
            None
        );
        assert_eq!(
            rule_at(&src.replace("z = k\n", "z = w\n"), "security_override"),
            None
        );
    }

    #[test]
    fn names_comments_and_other_caps_are_not_the_security_override() {
        // A comment and a function named for the rule: nothing tests a security matter.
        let src = "def apply_security_rule(p, final):\n    # Rule of Security: critical findings cap the dimension\n    if p.score <= 2 and final > limit_cap:\n        return limit_cap\n    return final\n";
        assert_eq!(rule_at(src, "security_override"), None);
        // A cap for another rule.
        let src = "def chief_justice(state):\n    score = mean(state)\n    if state['hallucinated_paths']:\n        score = min(score, 2)\n    return score\n";
        assert_eq!(rule_at(src, "security_override"), None);
        // Security named, nothing capped.
        let src = "def chief_justice(state):\n    notes = []\n    if 'security' in state['summary']:\n        notes.append('security was discussed')\n    return notes\n";
        assert_eq!(rule_at(src, "security_override"), None);
    }

    #[test]
    fn a_dissent_is_not_a_re_evaluation_and_a_flag_is_not_fact_supremacy() {
        // the Markdown writer that prints the dissent is no rule; a spread that only writes
        // text is the dissent requirement, not a re-evaluation
        let src = "def chief_justice(ops):\n    spread = max(o.score for o in ops) - min(o.score for o in ops)\n    if spread > 2:\n        note = f'dissent: {spread}'\n    return note\n\ndef write(report):\n    if report.dissent_summary:\n        out.write(report.dissent_summary)\n";
        assert_eq!(
            rule_at(src, "dissent_requirement").as_deref(),
            Some("src/nodes/justice.py:3")
        );
        assert_eq!(rule_at(src, "variance_re_evaluation"), None);
        // evidence read, but only a flag raised
        let src = "def chief_justice(ops, evidence):\n    if all(not e.found for e in evidence):\n        flags.append('evidence missing')\n    return flags\n";
        assert_eq!(rule_at(src, "fact_supremacy"), None);
    }

    #[test]
    fn a_rule_described_in_a_dict_of_prose_is_no_rule() {
        let src = "def chief_justice(state):\n    rules = state.get('rules')\n    if not rules:\n        rules = {'functionality_weight': 'Tech Lead assessment carries highest weight for architecture criteria.'}\n    return rules\n";
        assert_eq!(rule_at(src, "functionality_weight"), None);
    }

    #[test]
    fn a_dissent_written_in_parentheses_across_lines_is_the_dissent_requirement() {
        let src = "def chief_justice(p, d, t):\n    spread = max(p, d, t) - min(\n        p, d, t\n    )\n    if spread > 2:\n        dissent = (\n            f\"disagreement {spread}\"\n        )\n    return dissent\n";
        assert_eq!(
            rule_at(src, "dissent_requirement").as_deref(),
            Some("src/nodes/justice.py:5")
        );
    }

    #[test]
    fn a_dissent_written_by_a_function_a_conditional_expression_calls_is_the_dissent_requirement() {
        let src = "def summarize(ops):\n    lines = [f\"{o.judge}: {o.score}\" for o in ops]\n    return \"\\n\".join(lines)\n\ndef chief_justice(ops):\n    scores = [o.score for o in ops]\n    variance = max(scores) - min(scores)\n    dissent = summarize(ops) if variance > 2 else None\n    return dissent\n";
        assert_eq!(
            rule_at(src, "dissent_requirement").as_deref(),
            Some("src/nodes/justice.py:8")
        );
        // a number chosen on the spread writes no dissent
        let number = src.replace("summarize(ops) if", "min(scores) if");
        assert_eq!(rule_at(&number, "dissent_requirement"), None);
    }

    fn rule(src: &str, rule: &str) -> RuleFact {
        let ms = vec![parse_module("src/nodes/bench.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        f.rules.into_iter().find(|r| r.rule == rule).unwrap()
    }

    #[test]
    fn a_list_of_paths_built_from_found_evidence_sets_no_score() {
        // a table of the paths the detectives found is no fact supremacy
        let src = "def table(evs):\n    rows = []\n    for ev in evs:\n        if ev.found and ev.location:\n            paths = [p.strip() for p in ev.location.split('|') if p.strip()]\n            rows.extend(paths)\n    return rows\n";
        assert!(!rule(src, "fact_supremacy").found);
        // a found finding lowering a score is
        let src =
            "def decide(ev, s):\n    if not ev.found and s > 3:\n        s = 3\n    return s\n";
        assert!(rule(src, "fact_supremacy").found);
        let src = "def decide(ev, s):\n    if not ev.found:\n        s = [min(x, 3) for x in s]\n    return s\n";
        assert!(rule(src, "fact_supremacy").found);
    }

    #[test]
    fn a_spread_that_only_recomputes_the_score_is_no_re_evaluation_and_says_so() {
        // the spread above 2 blends the scores toward their median: nothing is re-read
        let src = "def decide(votes):\n    xs = [v.score for v in votes]\n    gap = max(xs) - min(xs)\n    blended = sum(xs) / len(xs)\n    if gap > 2:\n        mid = median(xs)\n        blended = mid * 0.6 + blended * 0.4\n    return round(blended)\n";
        let r = rule(src, "variance_re_evaluation");
        assert!(!r.found);
        let (at, how) = r.partial.expect("the branch that goes part of the way");
        assert_eq!(at, "src/nodes/bench.py:5");
        assert_eq!(how, "`if gap > 2`: `mid = median(xs)`");
        // asking a model again on the spread is the re-evaluation, not a partial one
        let src = "def decide(votes, llm):\n    xs = [v.score for v in votes]\n    if max(xs) - min(xs) > 2:\n        votes = llm.invoke(votes)\n    return votes\n";
        let r = rule(src, "variance_re_evaluation");
        assert!(r.found && r.partial.is_none(), "{r:?}");
        // a spread that only writes a text is no partial re-evaluation either
        let src = "def decide(votes):\n    xs = [v.score for v in votes]\n    if max(xs) - min(xs) > 2:\n        note = f'judges split: {xs}'\n    return note\n";
        assert_eq!(rule(src, "variance_re_evaluation").partial, None);
        // a spread computed in steps, whose branch prunes a judge in a loop: more than a
        // recomputed score, so no claim that it only recomputes
        let src = "def decide(votes, conf):\n    hi = max(votes.values())\n    lo = min(votes.values())\n    gap = hi - lo\n    if gap > 1.5:\n        note = f'split ({gap})'\n        mid = sorted(votes.values())[1]\n        for j, v in votes.items():\n            if abs(v - mid) > 1 and conf < 0.4:\n                votes.pop(j)\n    return votes, note\n";
        assert_eq!(
            rule(src, "dissent_requirement").location,
            "src/nodes/bench.py:5"
        );
        assert_eq!(rule(src, "variance_re_evaluation").partial, None);
        // a condition whose looked-through locals hold a max and a min but no spread
        let src = "def decide(c):\n    s = max(1, min(5, c.score - 1))\n    if c.final >= 4 and s <= 2:\n        c.final -= 1\n        c.notes.append('coherence')\n    return c\n";
        let r = rule(src, "variance_re_evaluation");
        assert_eq!(r.partial, None);
        assert!(!rule(src, "dissent_requirement").found);
    }

    #[test]
    fn the_tech_lead_weighed_highest_in_a_sum_is_the_functionality_weight() {
        // weighed highest on every criterion, its score found through the persona label
        let src = "def decide(votes, crit):\n    a = next(v.score for v in votes if v.judge == 'Prosecutor')\n    b = next(v.score for v in votes if v.judge == 'Defense')\n    c = next(v.score for v in votes if v.judge == 'TechLead')\n    if max(a, b, c) - min(a, b, c) > 2:\n        s = a * 0.4 + b * 0.2 + c * 0.4\n    else:\n        s = (a * 0.25\n             + b * 0.25\n             + c * 0.5)\n    return round(s)\n";
        let r = rule(src, "functionality_weight");
        assert!(r.found, "{r:?}");
        assert_eq!(r.location, "src/nodes/bench.py:10");
        assert!(
            r.how
                .contains("0.5 against 0.25 and 0.25, whatever the criterion"),
            "{}",
            r.how
        );
        // tied with the Prosecutor: no more weight
        let tied = src
            .replace("c * 0.5", "c * 0.25")
            .replace("a * 0.25", "a * 0.5");
        assert!(!rule(&tied, "functionality_weight").found);
        // weighed highest only on another criterion: no functionality weight
        let other = "def decide(votes, crit):\n    a = next(v.score for v in votes if v.judge == 'Prosecutor')\n    c = next(v.score for v in votes if v.judge == 'TechLead')\n    if crit == 'report_accuracy':\n        s = a * 0.3 + c * 0.7\n    else:\n        s = (a + c) / 2\n    return s\n";
        assert!(!rule(other, "functionality_weight").found);
        // a weights table keyed by persona
        let table = "def decide(votes):\n    w = {'TechLead': 2, 'Prosecutor': 1, 'Defense': 1}\n    return sum(w[v.judge] * v.score for v in votes) / 4\n";
        assert!(rule(table, "functionality_weight").found);
        // a weight for what is no judge persona is not compared with the Tech Lead's, and
        // the statement says so
        let moderated = table.replace("'Defense': 1}", "'Defense': 1, 'Moderator': 3}");
        let r = rule(&moderated, "functionality_weight");
        assert!(r.found, "{r:?}");
        assert!(
            r.how.contains("2 against 1 and 1 for the other judges, whatever the criterion (the table's Moderator 3 names no judge persona)"),
            "{}",
            r.how
        );
        // the Tech Lead outweighed by another judge: none
        let outweighed = table.replace("'Defense': 1", "'Defense': 3");
        assert!(!rule(&outweighed, "functionality_weight").found);
    }

    #[test]
    fn a_sum_of_the_judges_scores_counting_the_tech_lead_more_is_the_functionality_weight() {
        // the others' terms carry no number (weight 1), the Tech Lead's a 2
        let src = "def decide(ops):\n    by = {o.judge: o.score for o in ops}\n    x = by.get('Prosecutor', 3)\n    y = by.get('Defense', 3)\n    z = by.get('TechLead', 3)\n    s = (x + y + (z * 2)) / 4\n    return round(s)\n";
        let r = rule(src, "functionality_weight");
        assert!(r.found, "{r:?}");
        assert_eq!(r.location, "src/nodes/bench.py:6");
        assert!(
            r.how
                .contains("`x + y + (z * 2)` weighs the Tech Lead's score 2 against 1 and 1, whatever the criterion"),
            "{}",
            r.how
        );
        // the same weight for all: no functionality weight
        assert!(!rule(&src.replace("(z * 2)", "z"), "functionality_weight").found);
        // the Tech Lead's score doubled and something that is no judge's score added: none
        let bonus = src.replace("(x + y + (z * 2)) / 4", "z * 2 + len(ops)");
        assert!(!rule(&bonus, "functionality_weight").found);
    }

    #[test]
    fn the_tech_leads_score_deciding_a_split_bench_is_the_functionality_weight() {
        let src = "def decide(ops):\n    scores = [o.score for o in ops]\n    tl = next((o for o in ops if o.agent == 'TechLeadJudge'), None)\n    final = sum(scores) / len(scores)\n    spread = max(scores) - min(scores)\n    if spread >= 2 and tl:\n        final = tl.score\n    return final\n";
        let r = rule(src, "functionality_weight");
        assert!(r.found, "{r:?}");
        assert_eq!(r.location, "src/nodes/bench.py:6");
        assert!(r.how.contains("`final = tl.score`"), "{}", r.how);
        // another judge's score deciding: no functionality weight
        let other = src.replace("'TechLeadJudge'", "'Prosecutor'");
        assert!(!rule(&other, "functionality_weight").found);
        // a sum in the spread's branch in which the Tech Lead weighs no more: none either
        let sum = src.replace("final = tl.score", "final = (tl.score + scores[0]) / 2");
        assert!(!rule(&sum, "functionality_weight").found);
    }

    #[test]
    fn every_branch_counted_is_searched_and_a_rule_says_what_its_branch_does() {
        // a helper in another module the Chief Justice calls holds the security cap: it is
        // searched (and counted) like the node's own branches
        let ms = vec![
            parse_module(
                "src/nodes/bench.py",
                "from src.caps import clamp\n\ndef decide(votes, findings):\n    s = sum(v.score for v in votes) / 3\n    if len(votes) > 3:\n        s = s\n    return clamp(s, findings)\n".into(),
            )
            .unwrap(),
            parse_module(
                "src/caps.py",
                "def clamp(s, findings):\n    if any('shell' in f for f in findings):\n        return min(s, 3)\n    return s\n".into(),
            )
            .unwrap(),
        ];
        let f = super::analyse(
            &ms,
            &[],
            &[(0, 3)],
            &BTreeSet::from([(1, 1)]),
            &BTreeSet::new(),
        );
        assert_eq!((f.branches, f.functions), (2, 2));
        let r = f
            .rules
            .iter()
            .find(|r| r.rule == "security_override")
            .unwrap();
        assert_eq!(r.location, "src/caps.py:2");
        assert_eq!(
            r.how,
            "`if any('shell' in f for f in findings)`: `return min(s, 3)`"
        );
    }

    #[test]
    fn a_cap_on_what_the_detectives_gathered_is_fact_supremacy_in_part() {
        // the flag is a parameter; its caller computes it from the evidence key of the state
        let src = "def gap(found):\n    return not found\n\nclass Bench:\n    def settle(self, state):\n        bag = state.get('clues', {})\n        short = gap(bag)\n        return self.score(state['votes'], short)\n\n    def score(self, votes, short):\n        s = sum(v.score for v in votes) / 3\n        if short:\n            s = min(s, 3)\n        return s\n";
        let ms = vec![parse_module("src/nodes/bench.py", src.into()).unwrap()];
        let keys = BTreeSet::from(["clues".to_string()]);
        let f = super::analyse(&ms, &[], &[(0, 5)], &BTreeSet::from([(0, 10)]), &keys);
        let r = f.rules.iter().find(|r| r.rule == "fact_supremacy").unwrap();
        assert!(!r.found);
        assert_eq!(
            r.partial.as_ref().map(|(at, _)| at.as_str()),
            Some("src/nodes/bench.py:12")
        );
        // not a key of the detectives' evidence: nothing to say
        let f = super::analyse(
            &ms,
            &[],
            &[(0, 5)],
            &BTreeSet::from([(0, 10)]),
            &BTreeSet::from(["votes".to_string()]),
        );
        let r = f.rules.iter().find(|r| r.rule == "fact_supremacy").unwrap();
        assert_eq!(r.partial, None);
    }

    #[test]
    fn a_table_of_condition_and_action_pairs_is_read_as_branches() {
        let src = "def _risky(p, d, t, c):\n    return 'injection' in p.argument.lower()\n\ndef _cap(p, d, t, c):\n    return min(3, t.score), 'capped'\n\ndef _settle(p, d, t, c):\n    return t.score, 'tech lead'\n\ndef resolve(p, d, t, c):\n    \"\"\"Apply the rules in order.\"\"\"\n    rules: list = [\n        (_risky, lambda p, d, t, c: _cap(p, d, t, c)),\n        (\n            lambda p, d, t, c: max([p.score, d.score, t.score]) - min([p.score, d.score, t.score]) > 2,\n            _settle,\n        ),\n    ]\n    for cond, act in rules:\n        if cond(p, d, t, c):\n            return act(p, d, t, c)\n    return t.score, 'default'\n";
        let ms = vec![parse_module("src/nodes/bench.py", src.into()).unwrap()];
        let f = super::analyse(&ms, &[], &[(0, 10)], &BTreeSet::new(), &BTreeSet::new());
        let r = |id: &str| f.rules.iter().find(|r| r.rule == id).unwrap().clone();
        let sec = r("security_override");
        assert!(sec.found, "{:?}", f.rules);
        assert_eq!(sec.location, "src/nodes/bench.py:13");
        assert!(
            sec.how.starts_with(
                "the rule table's entry `(_risky, lambda p, d, t, c: _cap(p, d, t, c))`"
            ),
            "{}",
            sec.how
        );
        // the spread's entry only takes the Tech Lead's score: no re-evaluation
        let var = r("variance_re_evaluation");
        assert!(!var.found);
        assert_eq!(
            var.partial.map(|(at, _)| at).as_deref(),
            Some("src/nodes/bench.py:14")
        );
    }

    fn sections(src: &str) -> Vec<bool> {
        let ms = vec![parse_module("src/report.py", src.into()).unwrap()];
        analyse(&ms, &[])
            .sections
            .iter()
            .map(|(_, l)| l.is_some())
            .collect()
    }

    #[test]
    fn sections_a_grader_reads_as_the_rubrics_count() {
        let per_dimension = "def render(r):\n    out = '## Overview\\n' + r.summary\n    out += '## Per-Dimension Results\\n'\n    out += '## Recommendations\\n'\n    return out\n";
        assert_eq!(sections(per_dimension), vec![true, true, true]);
        let looped = "def render(f, report):\n    f.write(f\"## Executive Summary\\n{report.executive_summary}\\n\")\n    for criterion in report.criteria:\n        f.write(f\"### {criterion.dimension_name}\\n\")\n        f.write(f\"#### Remediation\\n{criterion.remediation}\\n\")\n";
        assert_eq!(sections(looped), vec![true, true, true]);
        let verdicts = "def render():\n    return '## \u{1f4ca} Final Verdicts\\n' + 'Breakdown by criterion follows.'\n";
        assert!(sections(verdicts)[1]);
    }

    #[test]
    fn words_in_prompts_and_keys_are_not_sections() {
        let src = "PROMPT = 'Give one score per criterion and a remediation for each.'\nKEYS = {'remediation': '', 'summary_text': ''}\n";
        assert_eq!(sections(src), vec![false, false, false]);
    }
}
