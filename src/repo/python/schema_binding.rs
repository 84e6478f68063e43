//! Structured output: `.with_structured_output(X)` and `.bind_tools([X])` calls, the bound
//! schema, and whether a retry surrounds them.
//!
//! A call counts as retried when, in its enclosing function, it sits in a loop or `try`, the
//! function has a `retry` decorator (tenacity) or loops around a `try`, or the call is chained
//! with `.with_retry(...)` (directly or through the variable it is assigned to); or when the
//! module wraps the invocation in such a loop elsewhere (a function that loops around a `try`
//! calling `.invoke`).

use super::names::Repo;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredCall {
    pub path: String,
    pub line: usize,
    pub method: String,
    pub schema: String,
    pub retry: bool,
    pub snippet: String,
    #[serde(skip)]
    pub function_snippet: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StructuredFacts {
    pub calls: Vec<StructuredCall>,
    pub used: bool,
}

pub fn analyse(repo: &Repo<'_>) -> StructuredFacts {
    let mut out = StructuredFacts::default();
    for module in repo.modules {
        let module_retry_loop = module.functions.iter().enumerate().any(|(i, f)| {
            (f.has_loop && f.has_try)
                && module.calls.iter().any(|c| {
                    c.func == Some(i)
                        && c.in_loop
                        && matches!(c.method.as_str(), "invoke" | "ainvoke")
                })
        }) || module.imports.values().any(|v| v.starts_with("tenacity"));
        // `s = llm.with_structured_output(X)` ... `s.with_retry(...)`: the retry wraps `s` only
        let retried: Vec<&str> = module
            .calls
            .iter()
            .filter(|c| c.method == "with_retry")
            .filter_map(|c| c.receiver.as_deref())
            .collect();
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
                Some(super::expr::Expr::List(items)) => items
                    .iter()
                    .map(|i| i.render())
                    .collect::<Vec<_>>()
                    .join(", "),
                Some(e) => e.render(),
                None => String::new(),
            };
            let func = c.func.map(|f| &module.functions[f]);
            let retry = c.in_loop
                || c.in_try
                || c.chained.as_deref() == Some("with_retry")
                || c.assigned_to
                    .as_deref()
                    .is_some_and(|v| retried.contains(&v))
                || func.is_some_and(|f| {
                    f.decorators.iter().any(|d| d.contains("retry")) || (f.has_loop && f.has_try)
                })
                || module_retry_loop;
            out.calls.push(StructuredCall {
                path: module.path.clone(),
                line: c.line,
                method: method.to_string(),
                schema,
                retry,
                snippet: c.snippet.clone(),
                function_snippet: func
                    .map(|f| module.snippet(f.line, f.end_line, 40))
                    .unwrap_or_else(|| c.snippet.clone()),
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
}
