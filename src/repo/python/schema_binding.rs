//! Structured output: `.with_structured_output(X)` and `.bind_tools([X])` calls, the bound
//! schema, and whether a retry surrounds them.
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
use super::syntax::{CallInfo, ModuleInfo};
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

/// The client's request retries set in the repository (`ChatOpenAI(max_retries=3)`).
fn transport(repo: &Repo<'_>, prefer: usize) -> Option<(Site, String)> {
    let find = |m: usize| {
        let module = &repo.modules[m];
        module.calls.iter().find_map(|c| {
            let v = c.kwargs.iter().find(|(k, _)| k == "max_retries")?;
            let callee = c.callee.as_deref()?;
            let q = repo.qualify(m, callee);
            let client = q.starts_with("langchain")
                || q.starts_with("openai")
                || q.rsplit('.').next().is_some_and(|l| l.starts_with("Chat"));
            client.then(|| (site(module, c.line), v.1.render()))
        })
    };
    find(prefer).or_else(|| (0..repo.modules.len()).find_map(find))
}

pub fn analyse(repo: &Repo<'_>) -> StructuredFacts {
    let mut out = StructuredFacts::default();
    // nodes with a RetryPolicy: the function names given to `add_node(..., retry=...)`
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
    for (m, module) in repo.modules.iter().enumerate() {
        if super::safety::is_test(&module.path) {
            continue;
        }
        out.files += 1;
        // a function of the module that invokes in a retry loop
        let module_loop = module
            .calls
            .iter()
            .find(|c| INVOKE.contains(&c.method.as_str()) && retry_loop(c))
            .map(|c| site(module, c.line));
        // `s = llm.with_structured_output(X)` ... `s.with_retry(...)`: the retry wraps `s` only
        let retried: Vec<(&str, usize)> = module
            .calls
            .iter()
            .filter(|c| c.method == "with_retry")
            .filter_map(|c| c.receiver.as_deref().map(|r| (r, c.line)))
            .collect();
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
            if repo.is(m, callee, &["json.loads"])
                && let Some(fi) = c.func
                && module.calls.iter().any(|o| {
                    o.func == Some(fi)
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
            {
                out.json_text
                    .push((site(module, c.line), callee.to_string()));
            }
        }
        for c in &module.calls {
            let method = c.method.as_str();
            if method != "with_structured_output" && method != "bind_tools" {
                continue;
            }
            if c.receiver.is_none() {
                continue;
            }
            let schema_expr = c.args.first().or_else(|| {
                c.kwargs
                    .iter()
                    .find(|(k, _)| k == "schema" || k == "tools")
                    .map(|(_, v)| v)
            });
            let schema = match schema_expr {
                Some(Expr::List(items)) => items
                    .iter()
                    .map(|i| i.render())
                    .collect::<Vec<_>>()
                    .join(", "),
                Some(e) => e.render(),
                None => String::new(),
            };
            let json_mode = c
                .kwargs
                .iter()
                .any(|(k, v)| k == "method" && v.as_str() == Some("json_mode"));
            let func = c.func.map(|f| &module.functions[f]);
            // the invocations of the bound runnable in the same function
            let invokes: Vec<&CallInfo> = module
                .calls
                .iter()
                .filter(|o| {
                    o.func == c.func && INVOKE.contains(&o.method.as_str()) && o.line >= c.line
                })
                .collect();
            let mut retry_by = None;
            if retry_loop(c) || invokes.iter().any(|o| retry_loop(o)) {
                let at = invokes
                    .iter()
                    .find(|o| retry_loop(o))
                    .map_or(c.line, |o| o.line);
                retry_by = Some(Retry::Loop {
                    at: site(module, at),
                });
            }
            if retry_by.is_none()
                && (c.in_try || invokes.iter().any(|o| o.in_try))
                && let Some(again) = invokes.iter().find(|o| o.in_except)
            {
                retry_by = Some(Retry::Reinvoked {
                    at: site(module, again.line),
                });
            }
            if retry_by.is_none()
                && let Some(f) = func
                && let Some(d) = f.decorators.iter().find(|d| retry_decorator(repo, m, d))
            {
                retry_by = Some(Retry::Decorator {
                    at: site(module, f.line),
                    decorator: super::syntax::truncate(d, 60),
                });
            }
            if retry_by.is_none()
                && let Some(line) = if c.chained.as_deref() == Some("with_retry") {
                    Some(c.line)
                } else {
                    c.assigned_to
                        .as_deref()
                        .and_then(|v| retried.iter().find(|(r, _)| *r == v).map(|(_, l)| *l))
                }
            {
                retry_by = Some(Retry::WithRetry {
                    at: site(module, line),
                });
            }
            if retry_by.is_none()
                && let Some(f) = func
            {
                // the node itself, or a node that calls this function
                let nodes: Vec<&str> = std::iter::once(f.name.as_str())
                    .chain(repo.modules.iter().flat_map(|mm| {
                        mm.calls
                            .iter()
                            .filter(|k| k.method == f.name)
                            .filter_map(|k| k.func.map(|g| mm.functions[g].name.as_str()))
                    }))
                    .collect();
                if let Some((_, at)) = policies.iter().find(|(n, _)| nodes.contains(&n.as_str())) {
                    retry_by = Some(Retry::NodePolicy { at: at.clone() });
                }
            }
            if retry_by.is_none()
                && let Some(at) = &module_loop
            {
                retry_by = Some(Retry::Loop { at: at.clone() });
            }
            let handled = c
                .try_line
                .or_else(|| invokes.iter().find_map(|o| o.try_line))
                .map(|l| site(module, l));
            out.calls.push(StructuredCall {
                path: module.path.clone(),
                line: c.line,
                method: method.to_string(),
                schema,
                retry: retry_by.is_some(),
                snippet: c.snippet.clone(),
                function_snippet: func
                    .map(|f| module.snippet(f.line, f.end_line, 40))
                    .unwrap_or_else(|| c.snippet.clone()),
                json_mode,
                retry_by,
                transport: transport(repo, m),
                handled,
            });
        }
    }
    out.used = !out.calls.is_empty();
    out
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
        assert!(matches!(by(w), Some(Retry::Loop { .. })));
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
