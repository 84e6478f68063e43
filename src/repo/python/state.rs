//! State definitions: `TypedDict` and pydantic `BaseModel` classes (directly or through
//! other classes of the repository), their fields, and `Annotated[..., reducer]` fields with
//! the reducer resolved (`operator.add`, `operator.ior`, `add_messages`, a named function).

use super::expr::Expr;
use super::names::Repo;
use super::syntax::ClassInfo;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    #[serde(rename = "type")]
    pub annotation: String,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reducer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateClass {
    pub name: String,
    /// `typed_dict` or `pydantic`.
    pub kind: String,
    pub path: String,
    pub line: usize,
    pub fields: Vec<Field>,
    #[serde(skip)]
    pub snippet: String,
}

impl StateClass {
    pub fn location(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reducer {
    pub class: String,
    pub field: String,
    /// `operator.add`, `operator.ior`, `add_messages`, or the function's name.
    pub reducer: String,
    pub path: String,
    pub line: usize,
    /// A function of the repository whose body reads both the current value and the update
    /// (it keeps both, as `operator.add` and `operator.ior` do; `lambda a, b: b` does not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merges: bool,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StateFacts {
    pub typed_dicts: Vec<StateClass>,
    pub pydantic_models: Vec<StateClass>,
    pub reducers: Vec<Reducer>,
}

impl StateFacts {
    pub fn class(&self, name: &str) -> Option<&StateClass> {
        self.typed_dicts
            .iter()
            .chain(&self.pydantic_models)
            .find(|c| c.name == name)
    }
}

const TYPED_DICT: &[&str] = &[
    "typing.TypedDict",
    "typing_extensions.TypedDict",
    "langgraph.graph.MessagesState",
    "langgraph.graph.message.MessagesState",
];
const BASE_MODEL: &[&str] = &["pydantic.BaseModel", "pydantic.v1.BaseModel"];
/// LangGraph's state with `messages: Annotated[list[AnyMessage], add_messages]` built in.
const MESSAGES_STATE: &[&str] = &[
    "langgraph.graph.MessagesState",
    "langgraph.graph.message.MessagesState",
];

pub fn analyse(repo: &Repo<'_>) -> StateFacts {
    let (kinds, with_messages) = state_kinds(repo);
    let mut facts = StateFacts::default();
    for (m, module) in repo.modules.iter().enumerate() {
        for c in &module.classes {
            let Some(kind) = kinds.get(&(m, c.name.as_str())) else {
                continue;
            };
            let inherits_messages = with_messages.contains(&(m, c.name.as_str()));
            let (sc, reducers) = state_class(repo, m, c, kind, inherits_messages);
            facts.reducers.extend(reducers);
            if *kind == "typed_dict" {
                facts.typed_dicts.push(sc);
            } else {
                facts.pydantic_models.push(sc);
            }
        }
    }
    facts
}

/// A class of the repository: (module, class name).
type ClassKey<'r> = (usize, &'r str);

/// Every state class by (module, class): `typed_dict` or `pydantic`; and those deriving
/// (transitively) from MessagesState (they inherit its reducer).
///
/// Every class is classified by its bases, following repository classes transitively. Keyed
/// by (module, class): a `@dataclass Configuration` is not pydantic because another module
/// has a `Configuration(BaseModel)`. A base is looked up in its own module first, then by
/// name.
fn state_kinds<'r>(
    repo: &'r Repo<'_>,
) -> (BTreeMap<ClassKey<'r>, &'static str>, BTreeSet<ClassKey<'r>>) {
    let mut kinds: BTreeMap<ClassKey, &'static str> = BTreeMap::new();
    let mut with_messages: BTreeSet<ClassKey> = BTreeSet::new();
    for _round in 0..6 {
        let mut changed = false;
        for (m, module) in repo.modules.iter().enumerate() {
            for c in &module.classes {
                if kinds.contains_key(&(m, c.name.as_str())) {
                    continue;
                }
                if let Some(k) = kind_by_bases(repo, m, &c.bases, &kinds) {
                    let inherits_messages = c.bases.iter().any(|b| {
                        let simple = b.rsplit('.').next().unwrap_or(b);
                        repo.is(m, b, MESSAGES_STATE)
                            || with_messages.contains(&(m, simple))
                            || with_messages.iter().any(|(_, n)| *n == simple)
                    });
                    if inherits_messages {
                        with_messages.insert((m, c.name.as_str()));
                    }
                    kinds.insert((m, c.name.as_str()), k);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (kinds, with_messages)
}

/// The kind of a class of module `m` from its first base that decides one: TypedDict,
/// pydantic's BaseModel, or a class already classified (`kinds`).
fn kind_by_bases(
    repo: &Repo<'_>,
    m: usize,
    bases: &[String],
    kinds: &BTreeMap<ClassKey, &'static str>,
) -> Option<&'static str> {
    bases.iter().find_map(|b| {
        if repo.is(m, b, TYPED_DICT) {
            Some("typed_dict")
        } else if repo.is(m, b, BASE_MODEL) || repo.qualify(m, b).ends_with(".BaseModel") {
            Some("pydantic")
        } else {
            let simple = b.rsplit('.').next().unwrap_or(b);
            kinds.get(&(m, simple)).copied().or_else(|| {
                kinds
                    .iter()
                    .find(|((_, n), _)| *n == simple)
                    .map(|(_, k)| *k)
            })
        }
    })
}

/// The state class `c` of module `m` and its reducers: the `messages` field it inherits from
/// MessagesState (unless it declares its own), then its fields.
fn state_class(
    repo: &Repo<'_>,
    m: usize,
    c: &ClassInfo,
    kind: &str,
    inherits_messages: bool,
) -> (StateClass, Vec<Reducer>) {
    let module = &repo.modules[m];
    let mut reducers = Vec::new();
    let mut fields = Vec::new();
    if inherits_messages && !c.fields.iter().any(|f| f.name == "messages") {
        reducers.push(Reducer {
            class: c.name.clone(),
            field: "messages".into(),
            reducer: "add_messages".into(),
            path: module.path.clone(),
            line: c.line,
            merges: false,
        });
        fields.push(Field {
            name: "messages".into(),
            annotation: "Annotated[list[AnyMessage], add_messages] (inherited from MessagesState)"
                .into(),
            line: c.line,
            reducer: Some("add_messages".into()),
        });
    }
    for f in &c.fields {
        let reducer = reducer_of(repo, m, &f.annotation);
        if let Some(r) = &reducer {
            reducers.push(Reducer {
                class: c.name.clone(),
                field: f.name.clone(),
                reducer: r.clone(),
                path: module.path.clone(),
                line: f.line,
                merges: reducer_function(repo, m, &f.annotation)
                    .is_some_and(|(fm, func)| reads_both(repo, fm, func)),
            });
        }
        fields.push(Field {
            name: f.name.clone(),
            annotation: f.annotation_text.clone(),
            line: f.line,
            reducer,
        });
    }
    let sc = StateClass {
        name: c.name.clone(),
        kind: kind.to_string(),
        path: module.path.clone(),
        line: c.line,
        fields,
        snippet: module.snippet(c.line, c.end_line, 40),
    };
    (sc, reducers)
}

/// The reducer expression of an `Annotated[T, reducer]` annotation, also inside a wrapper
/// (`Optional[Annotated[...]]`).
fn reducer_expr<'e>(repo: &Repo<'_>, m: usize, ann: &'e Expr) -> Option<&'e Expr> {
    let Expr::Subscript(head, items) = ann else {
        return None;
    };
    let head = head.dotted()?;
    if !repo.is(
        m,
        &head,
        &["typing.Annotated", "typing_extensions.Annotated"],
    ) && head != "Annotated"
    {
        // Optional[Annotated[...]] and similar wrappers
        return items.iter().find_map(|i| reducer_expr(repo, m, i));
    }
    items.get(1..)?.last()
}

/// The reducer of an `Annotated[T, reducer]` annotation, resolved to a readable name.
fn reducer_of(repo: &Repo<'_>, m: usize, ann: &Expr) -> Option<String> {
    Some(match reducer_expr(repo, m, ann)? {
        Expr::Lambda(_) => "lambda".to_string(),
        other => match other.dotted() {
            Some(d) => {
                let q = repo.qualify(m, &d);
                if q.starts_with("operator.") {
                    q
                } else if q.ends_with("add_messages") {
                    "add_messages".to_string()
                } else {
                    q.rsplit('.').next().unwrap_or(&q).to_string()
                }
            }
            None => other.render(),
        },
    })
}

/// The repository's function an `Annotated[..., f]` field names as its reducer.
fn reducer_function<'a>(
    repo: &Repo<'a>,
    m: usize,
    ann: &Expr,
) -> Option<(usize, &'a super::syntax::FuncInfo)> {
    repo.function(m, &reducer_expr(repo, m, ann)?.dotted()?)
}

/// A reducer function whose body reads both of its first two parameters (the current value
/// and the update): it keeps both. Read from the body's words, below the `def` line.
fn reads_both(repo: &Repo<'_>, m: usize, func: &super::syntax::FuncInfo) -> bool {
    let params: Vec<&str> = func
        .params
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "self" && *p != "cls")
        .take(2)
        .collect();
    if params.len() < 2 || func.returns.is_empty() {
        return false;
    }
    let source = &repo.modules[m].source;
    let body: Vec<&str> = source
        .lines()
        .skip(func.line)
        .take(func.end_line.saturating_sub(func.line))
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect();
    params.iter().all(|p| {
        body.iter().any(|l| {
            l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == *p)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    #[test]
    fn reducers_resolve_through_aliases() {
        let src = "import operator as op\nfrom operator import ior\nfrom typing import Annotated, TypedDict\nfrom pydantic import BaseModel\nfrom langgraph.graph.message import add_messages\nclass Base(BaseModel):\n    x: int\nclass Evidence(Base):\n    found: bool\nclass S(TypedDict):\n    a: Annotated[list, op.add]\n    b: Annotated[dict, ior]\n    c: Annotated[list, add_messages]\n    d: Annotated[list, merge]\n    e: list\n";
        let ms = vec![parse_module("src/state.py", src.into()).unwrap()];
        let f = analyse(&Repo::new(&ms));
        let names: Vec<&str> = f.pydantic_models.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["Base", "Evidence"]);
        let r: Vec<(&str, &str)> = f
            .reducers
            .iter()
            .map(|r| (r.field.as_str(), r.reducer.as_str()))
            .collect();
        assert_eq!(
            r,
            vec![
                ("a", "operator.add"),
                ("b", "operator.ior"),
                ("c", "add_messages"),
                ("d", "merge")
            ]
        );
    }

    #[test]
    fn a_reducer_of_the_repository_merges_when_it_reads_both_values() {
        let src = "from typing import Annotated, TypedDict\ndef merge_dicts(left, right):\n    res = dict(left or {})\n    for k, v in (right or {}).items():\n        res[k] = res.get(k, []) + v\n    return res\ndef keep_last(old, new):\n    return new\nclass S(TypedDict):\n    a: Annotated[dict, merge_dicts]\n    b: Annotated[dict, keep_last]\n";
        let ms = vec![parse_module("src/state.py", src.into()).unwrap()];
        let f = analyse(&Repo::new(&ms));
        let r: Vec<(&str, bool)> = f
            .reducers
            .iter()
            .map(|r| (r.reducer.as_str(), r.merges))
            .collect();
        assert_eq!(r, vec![("merge_dicts", true), ("keep_last", false)]);
    }

    #[test]
    fn annotated_without_reducer_metadata_is_not_a_reducer() {
        let src = "from typing import Annotated, TypedDict\nclass S(TypedDict):\n    a: Annotated[list]\n    b: List[int]\n";
        let ms = vec![parse_module("s.py", src.into()).unwrap()];
        let f = analyse(&Repo::new(&ms));
        assert!(f.reducers.is_empty(), "{:?}", f.reducers);
        assert_eq!(f.typed_dicts.len(), 1);
    }

    #[test]
    fn a_comment_inside_annotated_is_not_the_reducer() {
        let src = "import operator\nfrom typing import Annotated, Dict, List, TypedDict\nclass AgentState(TypedDict):\n    evidences: Annotated[\n        Dict[str, list],\n        operator.ior  # dict merge: keeps every key\n    ]\n    opinions: Annotated[List[str], operator.add]  # appended\n";
        let ms =
            vec![crate::repo::python::syntax::parse_module("src/state.py", src.into()).unwrap()];
        let f = analyse(&Repo::new(&ms));
        let got: Vec<(&str, &str)> = f
            .reducers
            .iter()
            .map(|r| (r.field.as_str(), r.reducer.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![("evidences", "operator.ior"), ("opinions", "operator.add")]
        );
    }
}
