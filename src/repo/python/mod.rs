//! Python analysis with tree-sitter over the whole repository.
//!
//! Pipeline: every `.py` file is parsed in parallel (rayon) into a plain [`ModuleInfo`]
//! ([`syntax`]); the modules are then indexed for cross-module name resolution ([`names`])
//! and each fact family is computed from them: [`graph`], [`state`], [`safety`],
//! [`schema_binding`] (structured output), [`persona_prompts`] (judge personas) and
//! [`conflict_rules`] (the Chief Justice's deterministic rules); the main graph's run-time
//! defects come from [`runtime`] (superstep semantics over the resolved wiring and each
//! node's [`effects`] on the state) and [`persona_names`]; [`roles`] tells judges and
//! detectives apart by what their updates write, never by their names.

pub(crate) mod conflict_rules;
pub(crate) mod dict_keys;
pub(crate) mod effects;
pub(crate) mod expr;
pub mod graph;
pub(crate) mod inputs;
pub(crate) mod names;
pub(crate) mod persona_names;
pub(crate) mod persona_prompts;
pub(crate) mod roles;
pub(crate) mod runtime;
pub(crate) mod safety;
pub(crate) mod schema_binding;
pub(crate) mod state;
pub(crate) mod supersteps;
pub mod syntax;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use syntax::ModuleInfo;

/// Every fact the Python analysis produces.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PythonFacts {
    pub files_parsed: usize,
    /// Files tree-sitter parsed with recovered syntax errors (facts from them may be partial).
    pub files_with_syntax_errors: Vec<String>,
    pub graphs: Vec<graph::GraphFacts>,
    pub state: state::StateFacts,
    pub security: safety::SecurityFacts,
    pub structured_output: schema_binding::StructuredFacts,
    pub personas: persona_prompts::PersonaFacts,
    pub justice: conflict_rules::JusticeFacts,
    /// Things the analysis could not do (parser failures, walk limits).
    pub notes: Vec<String>,
    /// The classes and names the project defines and imports.
    #[serde(default)]
    pub symbols: Symbols,
}

/// The classes the project defines and the other names it binds, for checking what a report
/// says about its code ("all judges inherit from a BaseJudge"). Bounded: at most
/// [`MAX_SYMBOLS`] of each.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Symbols {
    pub classes: Vec<ClassSymbol>,
    /// Names bound at module or class level, functions, and imports (the local name and the
    /// last segment of what it imports), sorted, distinct.
    pub names: Vec<String>,
    /// Some module imports `*`: the names it binds are not known.
    pub star_import: bool,
    /// More symbols than [`MAX_SYMBOLS`]: the lists are incomplete.
    pub truncated: bool,
    /// The functions and module- or class-level names the project defines itself (imports
    /// aside), with where, for checking which names a report gives are the code's own.
    #[serde(default)]
    pub defined: Vec<NameSymbol>,
}

/// A function, method or module- or class-level name the project defines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NameSymbol {
    pub name: String,
    pub path: String,
    /// 1-based; 0 when the line of an assignment could not be told.
    pub line: usize,
    /// A function or method (`def`), else an assigned name.
    pub function: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSymbol {
    pub name: String,
    pub path: String,
    pub line: usize,
    /// Base classes as written (`BaseJudge`, `pydantic.BaseModel`).
    pub bases: Vec<String>,
}

/// Most classes and most names kept in [`Symbols`].
pub const MAX_SYMBOLS: usize = 20_000;

impl Symbols {
    fn of(modules: &[ModuleInfo]) -> Symbols {
        let mut out = Symbols::default();
        let mut names = std::collections::BTreeSet::new();
        for m in modules {
            for c in &m.classes {
                if out.classes.len() < MAX_SYMBOLS {
                    out.classes.push(ClassSymbol {
                        name: c.name.clone(),
                        path: m.path.clone(),
                        line: c.line,
                        bases: c.bases.clone(),
                    });
                } else {
                    out.truncated = true;
                }
            }
            let bound = m
                .imports
                .iter()
                .flat_map(|(local, qualified)| {
                    [
                        local.as_str(),
                        qualified.rsplit('.').next().unwrap_or(qualified),
                    ]
                })
                .chain(
                    m.constants
                        .keys()
                        .map(|k| k.rsplit('.').next().unwrap_or(k)),
                )
                .chain(m.functions.iter().map(|f| f.name.as_str()));
            for f in &m.functions {
                if out.defined.len() < MAX_SYMBOLS {
                    out.defined.push(NameSymbol {
                        name: f.name.clone(),
                        path: m.path.clone(),
                        line: f.line,
                        function: true,
                    });
                } else {
                    out.truncated = true;
                }
            }
            for k in m.constants.keys() {
                let name = k.rsplit('.').next().unwrap_or(k);
                if out.defined.len() < MAX_SYMBOLS {
                    out.defined.push(NameSymbol {
                        name: name.to_string(),
                        path: m.path.clone(),
                        line: assignment_line(&m.source, name),
                        function: false,
                    });
                } else {
                    out.truncated = true;
                }
            }
            for n in bound {
                if n.starts_with('*') {
                    out.star_import = true;
                } else if names.len() < MAX_SYMBOLS {
                    names.insert(n.to_string());
                } else {
                    out.truncated = true;
                }
            }
        }
        out.names = names.into_iter().collect();
        out
    }

    /// Whether the project binds `name` anywhere (a class, a function, an assignment, an
    /// import), as far as the lists tell: `None` when they cannot (a `*` import, truncated).
    pub fn binds(&self, name: &str) -> Option<bool> {
        if self.classes.iter().any(|c| c.name == name) || self.names.iter().any(|n| n == name) {
            Some(true)
        } else if self.star_import || self.truncated {
            None
        } else {
            Some(false)
        }
    }
}

/// The first line (1-based) that assigns `name` at its start (`NAME = ...`, `NAME: T = ...`,
/// indented for a class-level name); 0 when none does.
fn assignment_line(source: &str, name: &str) -> usize {
    source
        .lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(name)
                .map(str::trim_start)
                .is_some_and(|rest| {
                    rest.starts_with(':') || rest.starts_with('=') && !rest.starts_with("==")
                })
        })
        .map_or(0, |i| i + 1)
}

/// Analyses Python sources (`(repo-relative path, text)`) plus non-Python text files that may
/// hold prompts or report templates.
pub fn analyse(sources: Vec<(String, String)>, texts: &[(String, String)]) -> PythonFacts {
    let results: Vec<Result<ModuleInfo, syntax::ParseError>> = sources
        .into_par_iter()
        .map(|(path, text)| syntax::parse_module(&path, text))
        .collect();
    let mut modules = Vec::with_capacity(results.len());
    let mut notes = Vec::new();
    for r in results {
        match r {
            Ok(m) => modules.push(m),
            Err(e) => notes.push(e.to_string()),
        }
    }
    let facts = analyse_modules(&modules, texts, notes);
    // Hundreds of thousands of small allocations for a large repository: freed on both cores.
    modules.into_par_iter().for_each(drop);
    facts
}

fn analyse_modules(
    modules: &[ModuleInfo],
    texts: &[(String, String)],
    mut notes: Vec<String>,
) -> PythonFacts {
    for m in modules {
        if m.truncated {
            notes.push(format!(
                "{}: nesting deeper than the analysis walks; some facts in this file may be missing",
                m.path
            ));
        }
    }
    let repo = names::Repo::new(modules);
    // The two largest passes (graph and safety walk every call) on separate threads.
    let ((mut graphs, (state, personas)), (security, mut structured_output)) = rayon::join(
        || {
            rayon::join(
                || graph::analyse(&repo),
                || {
                    (
                        state::analyse(&repo),
                        persona_prompts::analyse(modules, texts),
                    )
                },
            )
        },
        || rayon::join(|| safety::analyse(&repo), || schema_binding::analyse(&repo)),
    );
    // the main graph (the largest) is the one the verdict reads; the others keep their wiring
    if let Some(g) = graphs.first_mut() {
        let a = runtime::analyse(&repo, g, &state);
        g.defects = a.defects;
        g.runtime_notes = a.notes;
        g.runtime_decided = a.decided;
        g.dead_routes = a.dead;
        g.empty_fields = a.empty;
        // one resolved graph for every consumer: a node reached by exclusive routes (one or
        // the other, never both in a run) is not a fan-in
        if let Some(joins) = a.fan_in {
            // a failure handler that parallel branches may route to (a side exit of their
            // routers) is not where they join
            let handler = |f: &graph::FanIn| graph::side_exit(g, &f.to);
            let handlers: Vec<String> = g
                .fan_in
                .iter()
                .filter(|f| handler(f))
                .map(|f| f.to.clone())
                .collect();
            g.fan_in
                .retain(|f| joins.contains(&f.to) && !handlers.contains(&f.to));
            g.branchings = graph::branchings(g);
        }
    }
    if let Some(main) = graphs.first_mut() {
        main.defects.extend(persona_names::analyse(&repo, &state));
    }
    for g in &mut graphs {
        g.roles = roles::analyse(&repo, g, &state, &structured_output);
    }
    // the Chief Justice's code: what the node reading the judges' opinions runs
    let (synthesis, runs) = graphs
        .first()
        .map(|g| roles::synthesis(&repo, g, &state))
        .unwrap_or_default();
    // which judges of the main graph (not the Chief Justice) make each structured call
    if let Some(g) = graphs.first() {
        roles::cover(&repo, g, &synthesis, &mut structured_output);
    }
    let evidence_keys = graphs
        .first()
        .map(|g| roles::evidence_keys(g, &state))
        .unwrap_or_default();
    let justice = conflict_rules::analyse(modules, texts, &synthesis, &runs, &evidence_keys);
    PythonFacts {
        files_parsed: modules.len(),
        files_with_syntax_errors: modules
            .iter()
            .filter(|m| m.syntax_errors)
            .map(|m| m.path.clone())
            .collect(),
        graphs,
        state,
        security,
        structured_output,
        personas,
        justice,
        notes,
        symbols: Symbols::of(modules),
    }
}
