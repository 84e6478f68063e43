//! Whether the passages that explain a concept are about *this* implementation: the names of
//! code they give (`src/graph.py`, `evidence_aggregator`, `ChiefJusticeNode`,
//! `state.opinions`) looked up in the repository: its files and directories, the classes,
//! functions and module- or class-level names its Python code defines (imports aside), its
//! graph nodes and its state fields. A name is compared as the code writes it, case, `_` and
//! `-` aside (`DocAnalyst` names the node `doc_analyst`); a name the project only imports
//! (`StateGraph`, `TypedDict`) is no part of its own code, unless the code uses it in a role of
//! its own: a reducer its state schema declares (`operator.ior` for `AgentState.evidences`) is
//! that field's reducer.
//!
//! A concept explained in generic terms (a textbook definition, the challenge's own names for
//! parts the code does not have) is explained, but not in terms of this implementation: the
//! theoretical-depth table keeps its top level for explanations tied to the code.

use super::concepts::Explaining;
use crate::repo::python::PythonFacts;

/// A part of the repository's code that a report names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodePart {
    /// As the report writes it.
    pub named: String,
    /// What it is in the code: "file", "directory", "class", "function", "graph node",
    /// "state field", "module-level name", "reducer of the state field".
    pub what: &'static str,
    /// The name in the code (`doc_analyst` for `DocAnalyst`), or the path.
    pub code_name: String,
    /// Where: a path, or `path:line`.
    pub at: String,
}

impl CodePart {
    /// "`evidence_aggregator` (a graph node, src/graph.py:40)", "`DocAnalyst` (the graph node
    /// `doc_analyst`, src/graph.py:26)", "`src/graph.py` (a file of the repository)".
    pub fn describe(&self) -> String {
        if self.at == self.named {
            format!("`{}` (a {} of the repository)", self.named, self.what)
        } else if self.code_name != self.named && !matches!(self.what, "file" | "directory") {
            format!(
                "`{}` (the {} `{}`, {})",
                self.named, self.what, self.code_name, self.at
            )
        } else {
            format!("`{}` (a {}, {})", self.named, self.what, self.at)
        }
    }
}

/// How much of the code the names were looked up in, for a negative statement.
pub fn searched(files: &[String], code: &PythonFacts) -> String {
    let nodes: usize = code.graphs.iter().map(|g| g.nodes.len()).sum();
    let fields: usize = code
        .state
        .typed_dicts
        .iter()
        .chain(&code.state.pydantic_models)
        .map(|c| c.fields.len())
        .sum();
    format!(
        "{}, {}, {}, {}",
        crate::words::count(files.len(), "file", "files"),
        crate::words::count(code.symbols.classes.len(), "class", "classes"),
        crate::words::count(
            code.symbols.defined.len(),
            "function or module-level name",
            "functions and module-level names"
        ),
        crate::words::count(
            nodes + fields,
            "graph node or state field",
            "graph nodes and state fields"
        ),
    )
}

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// File extensions that make a name without a slash a file name (`graph.py`).
const FILE_EXTENSIONS: &[&str] = &[
    ".py", ".json", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".ini",
];

/// The file or directory of the repository a path names: itself, a file it ends
/// (`nodes/judges.py`, `judges.py`), or a directory holding files (`audit/`).
fn path_part(named: &str, files: &[String]) -> Option<CodePart> {
    let p = named.split("::").next().unwrap_or(named);
    let p = p
        .trim_start_matches("./")
        .trim_end_matches(['.', ',', ':', ';']);
    let dir = p.ends_with('/');
    let p = p.trim_end_matches('/');
    let lower = p.to_lowercase();
    let is_file_name = FILE_EXTENSIONS.iter().any(|e| lower.ends_with(e));
    if p.is_empty() || !(dir || p.contains('/') || is_file_name) {
        return None;
    }
    let part = |what, at: &String| CodePart {
        named: named.to_string(),
        what,
        code_name: at.clone(),
        at: at.clone(),
    };
    if !dir {
        if let Some(f) = files
            .iter()
            .find(|f| f.as_str() == p || f.ends_with(&format!("/{p}")))
        {
            return Some(part("file", f));
        }
    }
    let prefix = format!("{p}/");
    files
        .iter()
        .find(|f| f.starts_with(&prefix) || f.contains(&format!("/{prefix}")))
        .map(|f| {
            let at = match f.find(&prefix) {
                Some(i) => f[..i + p.len()].to_string(),
                None => p.to_string(),
            };
            part("directory", &at)
        })
}

/// The part of the code a single identifier names, compared case, `_` and `-` aside.
fn symbol_part(named: &str, word: &str, code: &PythonFacts) -> Option<CodePart> {
    let key = norm(word);
    if key.len() < 3 {
        return None;
    }
    let part = |what, code_name: &str, at: String| CodePart {
        named: named.to_string(),
        what,
        code_name: code_name.to_string(),
        at,
    };
    if let Some(n) = code
        .graphs
        .iter()
        .flat_map(|g| &g.nodes)
        .find(|n| norm(&n.name) == key)
    {
        return Some(part(
            "graph node",
            &n.name,
            format!("{}:{}", n.path, n.line),
        ));
    }
    if let Some(c) = code.symbols.classes.iter().find(|c| norm(&c.name) == key) {
        return Some(part("class", &c.name, format!("{}:{}", c.path, c.line)));
    }
    if let Some(f) = code
        .symbols
        .defined
        .iter()
        .find(|f| f.function && norm(&f.name) == key)
    {
        return Some(part("function", &f.name, format!("{}:{}", f.path, f.line)));
    }
    if let Some((class, f)) = code
        .state
        .typed_dicts
        .iter()
        .chain(&code.state.pydantic_models)
        .find_map(|c| {
            c.fields
                .iter()
                .find(|f| norm(&f.name) == key)
                .map(|f| (c, f))
        })
    {
        return Some(part(
            "state field",
            &format!("{}.{}", class.name, f.name),
            format!("{}:{}", class.path, f.line),
        ));
    }
    code.symbols
        .defined
        .iter()
        .find(|f| !f.function && f.line > 0 && norm(&f.name) == key)
        .map(|f| {
            part(
                "module-level name",
                &f.name,
                format!("{}:{}", f.path, f.line),
            )
        })
}

/// The reducer of a state field that `piece` names (`operator.ior`, `add_messages`): the code
/// uses it in the role of its own state schema's reducer, whether it defines or imports it.
/// Compared as the code writes it, case and `_` aside, with or without its `operator.` module.
fn reducer_part(piece: &str, code: &PythonFacts) -> Option<CodePart> {
    let bare = |s: &str| {
        let lower = s.to_lowercase();
        norm(lower.strip_prefix("operator.").unwrap_or(&lower))
    };
    let key = bare(piece);
    // a bare `add` or `or_` in prose is a word, not the reducer
    if key.len() < 3 || (!piece.contains('.') && key.len() < 5) {
        return None;
    }
    let r = code
        .state
        .reducers
        .iter()
        .find(|r| bare(&r.reducer) == key)?;
    Some(CodePart {
        named: piece.to_string(),
        what: "reducer of the state field",
        code_name: format!("{}.{}", r.class, r.field),
        at: format!("{}:{}", r.path, r.line),
    })
}

/// The part of the repository's code a name from a report names, if any: a path (file or
/// directory), else its identifiers (`Annotated[List[JudicialOpinion` → `JudicialOpinion`;
/// `state.opinions` → `opinions`, then `state`).
pub fn code_part(named: &str, files: &[String], code: &PythonFacts) -> Option<CodePart> {
    if let Some(p) = path_part(named, files) {
        return Some(p);
    }
    if named.contains('/') {
        return None;
    }
    for piece in named
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|p| !p.is_empty())
    {
        let segments: Vec<&str> = piece.split('.').filter(|s| !s.is_empty()).collect();
        let (Some(last), Some(first)) = (segments.last(), segments.first()) else {
            continue;
        };
        // a reducer the state schema declares, imported or not (`operator.ior`)
        if let Some(p) = reducer_part(piece, code) {
            return Some(p);
        }
        let mut tries = vec![*last];
        if first != last {
            tries.push(first);
        }
        for word in tries {
            // `RepoInvestigator's`: the possessive is no part of the name
            let word = word
                .strip_suffix("'s")
                .or_else(|| word.strip_suffix("\u{2019}s"))
                .unwrap_or(word);
            let shown = piece
                .strip_suffix("'s")
                .or_else(|| piece.strip_suffix("\u{2019}s"))
                .unwrap_or(piece);
            if let Some(p) = symbol_part(shown, word, code) {
                return Some(p);
            }
        }
    }
    None
}

/// The first explaining passage whose names include parts of the repository's code: its page
/// and those parts (every one, in the passage's order).
pub fn tied(
    passages: &[Explaining],
    files: &[String],
    code: &PythonFacts,
) -> Option<(u32, Vec<CodePart>)> {
    passages.iter().find_map(|p| {
        let mut parts: Vec<CodePart> = p
            .names
            .iter()
            .filter_map(|n| code_part(n, files, code))
            .collect();
        // a graph node declared with a capitalised name, written as that word ("The
        // Prosecutor", "the Tech Lead" for `TechLead`)
        for t in &p.titles {
            if let Some(n) = code
                .graphs
                .iter()
                .flat_map(|g| &g.nodes)
                .find(|n| n.name == *t)
                && !parts
                    .iter()
                    .any(|x| x.what == "graph node" && x.code_name == n.name)
            {
                parts.push(CodePart {
                    named: t.clone(),
                    what: "graph node",
                    code_name: n.name.clone(),
                    at: format!("{}:{}", n.path, n.line),
                });
            }
        }
        (!parts.is_empty()).then_some((p.page, parts))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small project: a graph with two nodes, a typed state, a node function and a class.
    pub(crate) fn project() -> (Vec<String>, PythonFacts) {
        let graph = "from langgraph.graph import StateGraph\nfrom src.nodes.detectives import doc_analyst\nfrom src.state import AgentState\n\nbuilder = StateGraph(AgentState)\nbuilder.add_node(\"doc_analyst\", doc_analyst)\nbuilder.add_node(\"evidence_aggregator\", lambda s: s)\nbuilder.add_edge(\"doc_analyst\", \"evidence_aggregator\")\ngraph = builder.compile()\n";
        let state = "import operator\nfrom typing import Annotated, TypedDict\n\nclass AgentState(TypedDict):\n    evidences: Annotated[dict, operator.ior]\n    opinions: Annotated[list, operator.add]\n";
        let nodes =
            "def doc_analyst(state):\n    return {}\n\nclass ChiefJustice:\n    RULES = 3\n";
        let sources: Vec<(String, String)> = vec![
            ("src/graph.py".into(), graph.into()),
            ("src/state.py".into(), state.into()),
            ("src/nodes/detectives.py".into(), nodes.into()),
        ];
        let mut files: Vec<String> = sources.iter().map(|(p, _)| p.clone()).collect();
        files.push("rubric/week2_rubric.json".into());
        (files, crate::repo::python::analyse(sources, &[]))
    }

    fn what(named: &str) -> Option<(&'static str, String)> {
        let (files, code) = project();
        code_part(named, &files, &code).map(|p| (p.what, p.at))
    }

    #[test]
    fn a_name_is_a_part_of_the_code_when_the_repository_defines_it() {
        assert_eq!(what("src/graph.py"), Some(("file", "src/graph.py".into())));
        assert_eq!(what("graph.py"), Some(("file", "src/graph.py".into())));
        assert_eq!(what("nodes/"), Some(("directory", "src/nodes".into())));
        assert_eq!(
            what("rubric/week2_rubric.json"),
            Some(("file", "rubric/week2_rubric.json".into()))
        );
        // the node as prose writes it, compared case and `_` aside
        assert_eq!(
            what("DocAnalyst"),
            Some(("graph node", "src/graph.py:6".into()))
        );
        assert_eq!(
            what("evidence_aggregator"),
            Some(("graph node", "src/graph.py:7".into()))
        );
        assert_eq!(
            what("ChiefJustice"),
            Some(("class", "src/nodes/detectives.py:4".into()))
        );
        assert_eq!(
            what("state.opinions"),
            Some(("state field", "src/state.py:6".into()))
        );
        assert_eq!(
            what("ChiefJustice.RULES"),
            Some(("module-level name", "src/nodes/detectives.py:5".into()))
        );
        assert_eq!(
            what("Annotated[List[AgentState"),
            Some(("class", "src/state.py:4".into()))
        );
        // what the project only imports, or never defines, is no part of its own code
        // a reducer of the state schema, though imported, is the code's own reducer
        assert_eq!(
            what("operator.ior"),
            Some(("reducer of the state field", "src/state.py:5".into()))
        );
        let (files, code) = project();
        assert_eq!(
            code_part("operator.add", &files, &code).map(|p| p.describe()),
            Some(
                "`operator.add` (the reducer of the state field `AgentState.opinions`, src/state.py:6)"
                    .into()
            )
        );
        for name in [
            "StateGraph",
            "operator.or_",
            "add",
            "RepoInvestigator",
            "src/nodes/judges.py",
            "judges.py",
            "TypedDict",
        ] {
            assert_eq!(what(name), None, "{name}");
        }
    }

    #[test]
    fn a_node_declared_with_a_capitalised_name_is_named_by_that_word() {
        let code = |prosecutor: &str| {
            crate::repo::python::analyse(
                vec![(
                    "src/graph.py".into(),
                    format!(
                        "from langgraph.graph import StateGraph\n\ndef p(s):\n    return {{}}\n\nb = StateGraph(dict)\nb.add_node(\"{prosecutor}\", p)\nb.add_node(\"TechLead\", p)\nb.add_edge(\"{prosecutor}\", \"TechLead\")\n"
                    ),
                )],
                &[],
            )
        };
        let c = super::super::concepts::PassageContent::of(&[
            "The Prosecutor and the Tech Lead argue, and the score is settled.".to_string(),
        ]);
        assert!(c.titles.contains(&"TechLead".to_string()), "{:?}", c.titles);
        let passage = Explaining {
            page: 2,
            names: vec![],
            titles: c.titles.clone(),
        };
        let (_, parts) = tied(std::slice::from_ref(&passage), &[], &code("Prosecutor")).unwrap();
        let named: Vec<&str> = parts.iter().map(|p| p.code_name.as_str()).collect();
        assert_eq!(named, vec!["Prosecutor", "TechLead"]);
        // a node written in lower case is not named by a capitalised word of prose
        let (_, parts) = tied(std::slice::from_ref(&passage), &[], &code("prosecutor")).unwrap();
        assert_eq!(parts.len(), 1);
        let plain = Explaining {
            page: 2,
            names: vec![],
            titles: vec!["Prosecutor".into()],
        };
        assert_eq!(tied(&[plain], &[], &code("prosecutor")), None);
    }

    #[test]
    fn a_passage_is_tied_when_one_of_its_names_is_a_part_of_the_code() {
        let (files, code) = project();
        let generic = Explaining {
            page: 2,
            names: vec!["RepoInvestigator".into(), "StateGraph".into()],
            titles: vec!["Evidence".into(), "Aggregator".into()],
        };
        let named = Explaining {
            page: 5,
            names: vec!["EvidenceAggregator".into(), "operator.add".into()],
            titles: vec![],
        };
        assert_eq!(tied(std::slice::from_ref(&generic), &files, &code), None);
        let (page, parts) = tied(&[generic, named], &files, &code).unwrap();
        assert_eq!(page, 5);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].code_name, "AgentState.opinions");
        assert_eq!(
            parts[0].describe(),
            "`EvidenceAggregator` (the graph node `evidence_aggregator`, src/graph.py:7)"
        );
    }
}
