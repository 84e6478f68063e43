//! The Chief Justice: is conflict resolution deterministic code (named rules in `if`
//! statements) or just an LLM prompt, and is the verdict written as a Markdown file with the
//! expected sections?
//!
//! The justice code is every module whose path names justice/chief/synthesis, or that defines
//! a function or class named like `chief_justice`/`ChiefJustice`. Each rule is found by an
//! `if`/`elif` statement in that code whose text matches the rule's pattern (see
//! [`RULES`]); a rule named only in a comment or a prompt string does not count.
//!
//! The security override is also found as a *cap* under a security condition, whatever the
//! variables are called: an `if` that caps a score (`min(...)`, `if x > y: x = y`, a `cap`
//! variable) whose condition, body, enclosing function name, the locals its condition reads,
//! or the few lines just above it (the comment naming the rule) speak of security
//! (`security`, `vulnerab`, `os.system`, `shell`, `injection`, `unsafe`, `safe_tool`,
//! `malicious`).

use super::syntax::{IfInfo, ModuleInfo};
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

fn rule_res() -> &'static Vec<Regex> {
    static R: OnceLock<Vec<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        RULES
            .iter()
            .map(|(_, p)| Regex::new(p).expect("valid regex"))
            .collect()
    })
}

/// Lines above an `if` read for the comment that names its rule.
const CONTEXT_LINES: usize = 4;

fn security_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)secur|vulnerab|os[._]system|shell|injection|unsafe|safe_tool|malicious")
            .expect("valid")
    })
}

/// The `if` statement caps a score: `min(`, a `cap` name, or `if x > y: x = y`.
fn caps_a_score(text: &str) -> bool {
    static R: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (simple, assign) = R.get_or_init(|| {
        (
            Regex::new(r"(?i)\bmin\s*\(|\bcap(ped|s)?\b|_cap\b|\bcap_").expect("valid"),
            Regex::new(
                r"(?m)\bif\s+([\w.\[\]]+)\s*>=?\s*([\w.]+)\s*:\s*\n?\s*([\w.\[\]]+)\s*=\s*([\w.]+)",
            )
            .expect("valid"),
        )
    });
    simple.is_match(text)
        || assign
            .captures_iter(text)
            .any(|c| c[1] == c[3] && c[2] == c[4])
}

/// A capping `if` under a security condition (see the module docs).
fn security_cap(m: &ModuleInfo, f: &IfInfo) -> bool {
    if !caps_a_score(&f.text) {
        return false;
    }
    let sec = security_re();
    if sec.is_match(&f.text) {
        return true;
    }
    let above = (f.line.saturating_sub(CONTEXT_LINES)..f.line)
        .filter(|l| *l >= 1)
        .any(|l| sec.is_match(m.line_text(l)));
    let func = f.func.map(|i| &m.functions[i]);
    above
        || func.is_some_and(|func| {
            sec.is_match(&func.name)
                || func.locals.iter().any(|(name, values)| {
                    f.condition.contains(name.as_str())
                        && values.iter().any(|v| sec.is_match(&v.render()))
                })
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
            let mut hits = m.ifs.iter().filter(|f| {
                res[i].is_match(&f.text) || *rule == "security_override" && security_cap(m, f)
            });
            // The innermost statement names the rule best (an outer `if` holds its text too).
            let hit = if *rule == "security_override" {
                hits.min_by_key(|f| f.text.len())
            } else {
                hits.next()
            };
            hit.map(|f| {
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
    for (section, re) in SECTIONS.iter().zip(section_res()) {
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

    fn security_override(src: &str) -> Option<String> {
        let ms = vec![parse_module("src/nodes/justice.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        let r = f
            .rules
            .iter()
            .find(|r| r.rule == "security_override")
            .unwrap();
        r.found.then(|| r.location.clone())
    }

    #[test]
    fn a_cap_under_a_security_condition_is_the_security_override_whatever_the_names() {
        // The flag is computed from security findings; the cap is min().
        let src = "def chief_justice(state):\n    flagged = any(e.kind == 'os_system' for e in state['evidences'])\n    score = average(state)\n    if flagged:\n        score = min(score, 3)\n    return score\n";
        assert_eq!(
            security_override(src).as_deref(),
            Some("src/nodes/justice.py:4")
        );
        // `if x > cap: x = cap` introduced by a comment naming the rule.
        let src = "def synthesize(opinions):\n    final = mean(opinions)\n    # Rule of Security: critical findings cap the dimension\n    if bad_tools or violation:\n        if final > ceiling:\n            final = ceiling\n    return final\n";
        assert_eq!(
            security_override(src).as_deref(),
            Some("src/nodes/justice.py:5")
        );
        // A cap variable in a function named for the rule.
        let src = "def apply_security_rule(p, final):\n    if p.score <= 2 and final > limit_cap:\n        return limit_cap\n    return final\n";
        assert!(security_override(src).is_some());
    }

    #[test]
    fn other_caps_and_mere_mentions_are_not_the_security_override() {
        // A cap for another rule.
        let src = "def chief_justice(state):\n    score = mean(state)\n    # Rule of Hallucination: invented paths cap report accuracy\n    if hallucinated_paths:\n        score = min(score, 2)\n    return score\n";
        assert_eq!(security_override(src), None);
        // Security named, nothing capped.
        let src = "def chief_justice(state):\n    notes = []\n    if 'security' in state['summary']:\n        notes.append('security was discussed')\n    return notes\n";
        assert_eq!(security_override(src), None);
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
