//! State management (`repo.state.*`): the graph's state class, the Pydantic models of
//! evidence and opinions, the state's collections of them and their reducers.

use super::{Fix, Site, Stated, count};
use serde::{Deserialize, Serialize};

/// The two models the rubric names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Evidence,
    Opinion,
}

impl Model {
    fn name(self) -> &'static str {
        match self {
            Model::Evidence => "Evidence",
            Model::Opinion => "JudicialOpinion",
        }
    }
}

/// The two reducers the rubric names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Merge {
    /// `operator.add`: lists concatenated.
    Add,
    /// `operator.ior`: dicts merged.
    Ior,
}

impl Merge {
    fn op(self) -> &'static str {
        match self {
            Merge::Add => "operator.add",
            Merge::Ior => "operator.ior",
        }
    }
}

/// The state class: where, its name and kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateClass {
    pub at: Site,
    pub name: String,
    /// `typed_dict` or `pydantic`.
    pub kind: String,
}

/// State management facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum StateFact {
    /// The state is a TypedDict or a Pydantic model.
    Definition {
        state: Option<StateClass>,
        fields: Vec<String>,
        files: usize,
    },
    /// A Pydantic model of evidence or of an opinion.
    Model {
        model: Model,
        /// (where, its name, its fields).
        found: Option<(Site, String, usize)>,
        /// Models searched.
        searched: usize,
        state: Option<Site>,
    },
    /// The state keeps a collection of the model.
    Holds {
        model: Model,
        /// (where, field, annotation).
        field: Option<(Site, String, String)>,
        state: Option<StateClass>,
    },
    /// A state field is reduced with `operator.add` / `operator.ior`.
    Reducer {
        merge: Merge,
        /// (where, class, field).
        field: Option<(Site, String, String)>,
        /// The repository's own reducer function that keeps both values as `merge` does
        /// (`merge_dicts` on a dict field), when the field is not annotated with `merge` itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        via: Option<String>,
        /// Other reducers of the state (class.field=reducer).
        others: Vec<String>,
        state: Option<StateClass>,
    },
}

impl Stated for StateFact {
    fn key(&self) -> String {
        match self {
            StateFact::Definition { .. } => "definition".into(),
            StateFact::Model { model, .. } => match model {
                Model::Evidence => "evidence_model".into(),
                Model::Opinion => "opinion_model".into(),
            },
            StateFact::Holds { model, .. } => match model {
                Model::Evidence => "holds_evidence".into(),
                Model::Opinion => "holds_opinions".into(),
            },
            StateFact::Reducer { merge, .. } => match merge {
                Merge::Add => "reducer_add".into(),
                Merge::Ior => "reducer_ior".into(),
            },
        }
    }

    fn holds(&self) -> bool {
        match self {
            StateFact::Definition { state, .. } => state.is_some(),
            StateFact::Model { found, .. } => found.is_some(),
            StateFact::Holds { field, .. } => field.is_some(),
            StateFact::Reducer { field, .. } => field.is_some(),
        }
    }

    fn statement(&self) -> String {
        match self {
            StateFact::Definition {
                state,
                fields,
                files,
            } => match state {
                Some(c) => format!(
                    "state class {} ({}) at {} with fields {}",
                    c.name,
                    c.kind,
                    c.at,
                    fields.join(", ")
                ),
                None => format!(
                    "no TypedDict or pydantic BaseModel class in the {}",
                    count(*files, "Python file", "Python files")
                ),
            },
            StateFact::Model {
                model,
                found,
                searched,
                ..
            } => match found {
                Some((at, name, fields)) => format!(
                    "{name} is a pydantic BaseModel with {} at {at}",
                    count(*fields, "typed field", "typed fields")
                ),
                None => format!(
                    "no pydantic model for {} among the {}",
                    model.name(),
                    count(*searched, "pydantic model", "pydantic models")
                ),
            },
            StateFact::Holds {
                model,
                field,
                state,
            } => {
                let what = match model {
                    Model::Evidence => "a collection of Evidence",
                    Model::Opinion => "a list of JudicialOpinion",
                };
                match (field, state) {
                    (Some((at, name, ann)), Some(c)) => {
                        format!("{}.{name}: {ann} holds {what} ({at})", c.name)
                    }
                    (Some((at, name, ann)), None) => format!("{name}: {ann} holds {what} ({at})"),
                    (None, Some(c)) => format!(
                        "none of the fields of {} ({}) is typed with {what}",
                        c.name, c.at
                    ),
                    (None, None) => format!("no state class to hold {what}"),
                }
            }
            StateFact::Reducer {
                merge,
                field,
                via,
                others,
                state,
            } => match field {
                Some((at, class, name)) => match via {
                    Some(f) => format!(
                        "{class}.{name} is Annotated with reducer `{f}` ({at}), a function of the repository that keeps both the current value and the update, as {} does",
                        merge.op()
                    ),
                    None => format!(
                        "{class}.{name} is Annotated with reducer {} ({at})",
                        merge.op()
                    ),
                },
                None => format!(
                    "no Annotated field {}uses {}{}",
                    match state {
                        Some(c) => format!("of {} ", c.name),
                        None => String::new(),
                    },
                    merge.op(),
                    if others.is_empty() {
                        String::new()
                    } else {
                        format!(" (reducers present: {})", others.join(", "))
                    }
                ),
            },
        }
    }

    fn proof(&self) -> Vec<Site> {
        match self {
            StateFact::Definition { state, .. } => state.iter().map(|c| c.at.clone()).collect(),
            StateFact::Model { found, state, .. } => match found {
                Some((at, ..)) => vec![at.clone()],
                None => state.iter().cloned().collect(),
            },
            StateFact::Holds { field, state, .. } | StateFact::Reducer { field, state, .. } => {
                match (field, state) {
                    (Some((at, ..)), _) => vec![at.clone()],
                    (None, Some(c)) => vec![c.at.clone()],
                    (None, None) => vec![],
                }
            }
        }
    }

    fn fix(&self) -> Option<Fix> {
        if self.holds() {
            return None;
        }
        let place = |state: &Option<StateClass>, change: String| match state {
            Some(c) => Fix::at(&c.at, change),
            None => Fix::anywhere(change),
        };
        Some(match self {
            StateFact::Definition { .. } => Fix::anywhere(
                "declare the graph's state as `class AgentState(TypedDict)` with one typed field per key the nodes read or write, and build the graph with `StateGraph(AgentState)`",
            ),
            StateFact::Model { model, state, .. } => {
                let change = match model {
                    Model::Evidence => "declare `class Evidence(BaseModel)` with typed fields (`goal: str`, `found: bool`, `location: str`, `rationale: str`, `confidence: float = Field(ge=0, le=1)`) and have the detectives return Evidence objects",
                    Model::Opinion => "declare `class JudicialOpinion(BaseModel)` with `judge: Literal[\"Prosecutor\", \"Defense\", \"TechLead\"]`, `score: int = Field(ge=1, le=5)`, `argument: str`, `cited_evidence: list[str]`, and have the judges return it",
                };
                match state {
                    Some(at) => Fix::at(at, change),
                    None => Fix::anywhere(change),
                }
            }
            StateFact::Holds { model, state, .. } => place(
                state,
                match model {
                    Model::Evidence => "add a state field `evidences: Annotated[dict[str, list[Evidence]], operator.ior]` and have the detectives write their Evidence there".into(),
                    Model::Opinion => "add a state field `opinions: Annotated[list[JudicialOpinion], operator.add]` and have each judge write its opinions there".into(),
                },
            ),
            StateFact::Reducer { merge, state, .. } => place(
                state,
                match merge {
                    Merge::Add => "annotate the list fields that parallel nodes write (the opinions) with `Annotated[list[...], operator.add]`, so their writes are concatenated instead of overwritten".into(),
                    Merge::Ior => "annotate the dict fields that parallel nodes write (the evidence by detective or criterion) with `Annotated[dict[...], operator.ior]`, so their writes are merged instead of overwritten".into(),
                },
            ),
        })
    }
}

/// A state fact filed under `key` that holds or not, for the tests of the readers.
#[cfg(test)]
pub fn example(key: &str, holds: bool) -> StateFact {
    let at = Site::new("src/state.py", 10);
    let class = StateClass {
        at: at.clone(),
        name: "AgentState".into(),
        kind: "typed_dict".into(),
    };
    let model = |k: &str| {
        if k.contains("evidence") {
            Model::Evidence
        } else {
            Model::Opinion
        }
    };
    let field = holds.then(|| (at.clone(), "AgentState".to_string(), "x".to_string()));
    match key {
        "definition" => StateFact::Definition {
            state: holds.then(|| class.clone()),
            fields: vec!["x".into()],
            files: 3,
        },
        "evidence_model" | "opinion_model" => StateFact::Model {
            model: model(key),
            found: holds.then(|| (at.clone(), "M".to_string(), 4)),
            searched: 2,
            state: Some(at),
        },
        "holds_evidence" | "holds_opinions" => StateFact::Holds {
            model: model(key),
            field,
            state: Some(class),
        },
        _ => StateFact::Reducer {
            merge: if key == "reducer_ior" {
                Merge::Ior
            } else {
                Merge::Add
            },
            field,
            via: None,
            others: vec![],
            state: Some(class),
        },
    }
}
