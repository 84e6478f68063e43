//! The Chief Justice: is conflict resolution deterministic code (named rules in `if`
//! statements) or just an LLM prompt, and is the verdict written as a Markdown file with the
//! expected sections?
//!
//! The justice code is every module whose path names justice/chief/synthesis, or that defines
//! a function or class named like `chief_justice`/`ChiefJustice`. Each rule is found by an
//! `if`/`elif` statement in that code whose text matches the rule's pattern (see
//! [`RULES`]); a rule named only in a comment or a prompt string does not count.

use super::syntax::ModuleInfo;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleFact {
    pub rule: String,
    pub found: bool,
    pub location: String,
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JusticeFacts {
    /// Modules holding the Chief Justice code.
    pub modules: Vec<String>,
    pub location: Option<String>,
    /// `if`/`elif` statements in the justice code.
    pub branches: usize,
    /// The justice code calls an LLM.
    pub calls_llm: bool,
    pub rules: Vec<RuleFact>,
    /// A Markdown file is written (`.md` path and a write call) somewhere in the repository.
    pub writes_markdown: Option<String>,
    /// Report section headings found in string literals or templates, with their location.
    pub sections: Vec<(String, Option<String>)>,
    #[serde(skip)]
    pub snippet: String,
}

/// (rule id, pattern over an `if` statement's text)
pub const RULES: [(&str, &str); 5] = [
    (
        "security_override",
        r"(?is)(secur|vulnerab|os_system|shell|injection).*(\b3\b|min\s*\()|(\b3\b|min\s*\().*(secur|vulnerab)",
    ),
    (
        "fact_supremacy",
        r#"(?is)fact.?supremacy|hallucinat|overrul|not\s+[\w.\[\]"']*(evidence|fact|artifact)[\w.\[\]"']*found|(evidence|fact|artifact)\w*.*(missing|not\s+\w*\.?found|found\s*(==|is)\s*false|not\s+in\b)"#,
    ),
    (
        "functionality_weight",
        r"(?is)functionality.?weight|(tech.?lead|techlead).*(weight|architect|modular|orchestration)|(weight|architect|modular|orchestration).*(tech.?lead|techlead)",
    ),
    (
        "variance_re_evaluation",
        r"(?is)(variance|spread|max\s*\(.*\)\s*-\s*min\s*\(|score_range|\brange\b|delta|diff)[^\n]*>=?\s*[23]\b",
    ),
    ("dissent_requirement", r"(?is)dissent"),
];

pub const SECTIONS: [&str; 3] = [
    "Executive Summary",
    "Criterion Breakdown",
    "Remediation Plan",
];

fn rule_res() -> &'static Vec<Regex> {
    static R: OnceLock<Vec<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        RULES
            .iter()
            .map(|(_, p)| Regex::new(p).expect("valid regex"))
            .collect()
    })
}

fn is_justice_module(m: &ModuleInfo) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    let name = R.get_or_init(|| Regex::new(r"(?i)chief.?justice|justice|synthes").expect("valid"));
    let file = m.path.rsplit('/').next().unwrap_or(&m.path);
    name.is_match(file)
        || m.functions
            .iter()
            .any(|f| name.is_match(&f.name) && f.name.to_lowercase().contains("chief"))
        || m.classes
            .iter()
            .any(|c| c.name.to_lowercase().contains("chiefjustice"))
}

pub fn analyse(modules: &[ModuleInfo], texts: &[(String, String)]) -> JusticeFacts {
    let mut facts = JusticeFacts::default();
    let justice: Vec<&ModuleInfo> = modules.iter().filter(|m| is_justice_module(m)).collect();
    facts.modules = justice.iter().map(|m| m.path.clone()).collect();
    if let Some(m) = justice.first() {
        let (line, end) = m
            .functions
            .iter()
            .find(|f| {
                f.name.to_lowercase().contains("chief") || f.name.to_lowercase().contains("justice")
            })
            .map(|f| (f.line, f.end_line))
            .or_else(|| {
                m.classes
                    .iter()
                    .find(|c| c.name.to_lowercase().contains("justice"))
                    .map(|c| (c.line, c.end_line))
            })
            .unwrap_or((1, 60));
        facts.location = Some(format!("{}:{line}", m.path));
        facts.snippet = m.snippet(line, end, 60);
    }
    let res = rule_res();
    for (i, (rule, _)) in RULES.iter().enumerate() {
        let hit = justice.iter().find_map(|m| {
            m.ifs.iter().find(|f| res[i].is_match(&f.text)).map(|f| {
                (
                    format!("{}:{}", m.path, f.line),
                    m.line_text(f.line).to_string(),
                )
            })
        });
        // The dissent requirement is satisfied by code that writes a dissent summary too.
        let hit = hit.or_else(|| {
            (*rule == "dissent_requirement")
                .then(|| {
                    justice.iter().find_map(|m| {
                        m.calls
                            .iter()
                            .find(|c| res[i].is_match(&c.snippet))
                            .map(|c| (format!("{}:{}", m.path, c.line), c.snippet.clone()))
                    })
                })
                .flatten()
        });
        facts.rules.push(RuleFact {
            rule: rule.to_string(),
            found: hit.is_some(),
            location: hit.as_ref().map(|h| h.0.clone()).unwrap_or_else(|| {
                facts
                    .modules
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "(no justice code)".into())
            }),
            snippet: hit.map(|h| h.1).unwrap_or_default(),
        });
    }
    facts.branches = justice.iter().map(|m| m.ifs.len()).sum();
    facts.calls_llm = justice.iter().any(|m| {
        m.calls.iter().any(|c| {
            matches!(
                c.method.as_str(),
                "invoke" | "ainvoke" | "with_structured_output" | "predict" | "generate"
            )
        })
    });
    for m in modules {
        let md = m.strings.iter().any(|s| s.text.contains(".md"));
        if !md {
            continue;
        }
        if let Some(c) = m.calls.iter().find(|c| {
            c.method == "write_text"
                || (c.method == "open"
                    && c.args
                        .get(1)
                        .and_then(|a| a.as_str())
                        .is_some_and(|mode| mode.contains('w')))
        }) {
            facts.writes_markdown = Some(format!("{}:{}", m.path, c.line));
            break;
        }
    }
    for section in SECTIONS {
        let needle = section.to_lowercase();
        let loc = modules
            .iter()
            .find_map(|m| {
                m.strings
                    .iter()
                    .find(|s| s.text.to_lowercase().contains(&needle))
                    .map(|s| format!("{}:{}", m.path, s.line))
            })
            .or_else(|| {
                texts.iter().find_map(|(p, t)| {
                    t.lines()
                        .position(|l| l.to_lowercase().contains(&needle))
                        .map(|i| format!("{p}:{}", i + 1))
                })
            });
        facts.sections.push((section.to_string(), loc));
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    #[test]
    fn deterministic_rules_are_found_in_if_statements() {
        let src = r###"
def chief_justice(state):
    scores = [o.score for o in state["opinions"]]
    final = round(sum(scores) / len(scores))
    if any(e.kind == "security" for e in state["evidences"]):
        final = min(final, 3)
    if not evidence.found and defense.score > 3:
        final = prosecutor.score
    if max(scores) - min(scores) > 2:
        final = re_evaluate(state)
    if tech_lead.score >= 4 and criterion == "graph_orchestration":
        final = tech_lead.score
    path = "audit/report.md"
    with open(path, "w") as f:
        f.write("## Executive Summary")
"###;
        let ms = vec![parse_module("src/nodes/justice.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        let found: Vec<(&str, bool)> = f.rules.iter().map(|r| (r.rule.as_str(), r.found)).collect();
        assert_eq!(
            found,
            vec![
                ("security_override", true),
                ("fact_supremacy", true),
                ("functionality_weight", true),
                ("variance_re_evaluation", true),
                ("dissent_requirement", false)
            ]
        );
        assert!(!f.calls_llm);
        assert_eq!(
            f.writes_markdown.as_deref(),
            Some("src/nodes/justice.py:14")
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
}
