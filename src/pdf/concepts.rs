//! Theoretical depth: where each rubric concept appears and whether the report explains how the
//! architecture does it, or merely drops the word.
//!
//! The concepts come from the dimension's forensic instruction (its quoted terms), with
//! [`DEFAULT_CONCEPTS`] as the fallback. An occurrence is **explained** when its sentence (plus
//! the following sentence of the same page when it continues the thought) is running prose that
//! ties the concept to components of the architecture (nodes, edges, judges, state, reducers,
//! files ...) and says how (via, by, in parallel, merges, ...). It is a **buzzword** in a list
//! item, a heading, a short fragment, or prose with no such ties.

use super::ingest::Sentence;
use regex::Regex;
use serde::{Deserialize, Serialize};

/// Used when the instruction quotes no terms.
pub const DEFAULT_CONCEPTS: &[&str] = &[
    "Dialectical Synthesis",
    "Fan-In / Fan-Out",
    "Metacognition",
    "State Synchronization",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    /// Described in a substantive architectural explanation.
    Explained,
    /// Mentioned only as a word: list, title, summary, no mechanism ("Keyword Dropping").
    Buzzword,
    /// Not mentioned at all.
    Absent,
}

impl Classification {
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::Explained => "explained",
            Classification::Buzzword => "buzzword",
            Classification::Absent => "absent",
        }
    }
}

/// The verdict for one concept: the best occurrence (explained first, then the first mention).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConceptFinding {
    pub concept: String,
    pub classification: Classification,
    /// Page of the quoted occurrence (0 when absent).
    pub page: u32,
    /// The sentence(s) quoted.
    pub quote: String,
    /// How many times it appears.
    #[serde(default)]
    pub mentions: u32,
    /// Pages with a mention.
    #[serde(default)]
    pub pages: Vec<u32>,
}

/// The quoted terms of a forensic instruction (`'Dialectical Synthesis'`, `"Metacognition"`),
/// without the ones that are clearly labels rather than concepts (`'Keyword Dropping'`).
pub fn concepts_from_instruction(instruction: &str) -> Vec<String> {
    let re = Regex::new(r#"'([^']{3,40})'|"([^"]{3,40})"|“([^”]{3,40})”|‘([^’]{3,40})’"#)
        .expect("static regex");
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(instruction) {
        let Some(term) = (1..=4).find_map(|i| c.get(i)) else {
            continue;
        };
        let t = term.as_str().trim();
        let lower = t.to_lowercase();
        // Labels the instruction asks us to *apply*, not concepts to look for.
        if lower.contains("dropping")
            || lower.contains("misleading")
            || lower.contains("hallucinat")
            || lower.starts_with("we ")
            || t.contains('.')
            || t.split_whitespace().count() > 5
        {
            continue;
        }
        if !out.iter().any(|o| o.eq_ignore_ascii_case(t)) {
            out.push(t.to_string());
        }
    }
    out
}

/// Patterns that find a concept in text: its words separated by spaces, hyphens or slashes,
/// British or American spelling; `A / B` terms are also found by each half.
fn patterns(concept: &str) -> Vec<Regex> {
    let mut variants = vec![concept.to_string()];
    if concept.contains('/') {
        variants.extend(concept.split('/').map(|s| s.trim().to_string()));
    }
    variants
        .iter()
        .filter_map(|v| {
            let words: Vec<String> = v
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| {
                    let w = regex::escape(&w.to_lowercase());
                    w.replace("ization", "i[sz]ation")
                        .replace("ize", "i[sz]e")
                        .replace("isation", "i[sz]ation")
                })
                .collect();
            if words.is_empty() {
                return None;
            }
            Regex::new(&format!(r"(?i)\b{}\b", words.join(r"[\s\-/]*"))).ok()
        })
        .collect()
}

/// Words tying a sentence to the architecture.
const COMPONENT_CUES: &[&str] = &[
    "node",
    "edge",
    "graph",
    "judge",
    "prosecutor",
    "defense",
    "defence",
    "tech lead",
    "techlead",
    "chief justice",
    "detective",
    "investigator",
    "analyst",
    "aggregat",
    "reducer",
    "state",
    "operator.",
    "add_edge",
    "add_conditional",
    "send(",
    "barrier",
    "branch",
    "parallel",
    "concurrent",
    "persona",
    "opinion",
    "evidence",
    "rubric",
    "score",
    "verdict",
    "synthes",
    "stategraph",
    ".py",
    "pydantic",
    "typeddict",
    "merge",
    "langgraph",
];

/// Words saying how it is done.
const MECHANISM_CUES: &[&str] = &[
    "implement",
    "execut",
    "via ",
    "through",
    " by ",
    "using",
    " uses ",
    "use ",
    "when ",
    "then",
    "each ",
    "which ",
    "so that",
    "ensur",
    "merg",
    "combin",
    "rout",
    "dispatch",
    "runs",
    "run ",
    "fan",
    "collect",
    "resolv",
    "evaluat",
    "reconcil",
    "compar",
    "wait",
    "because",
    "where ",
    "after",
    "before",
    "in order to",
    "before ",
];

fn cue_count(text: &str, cues: &[&str]) -> usize {
    let t = text.to_lowercase();
    cues.iter().filter(|c| t.contains(*c)).count()
}

/// Words of `text` within `radius` words of the first match of `pat` (the whole text when it
/// is short). Long "sentences" are usually code blocks or tables run together.
fn window(text: &str, pat: &Regex, radius: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= 2 * radius + 1 {
        return words.join(" ");
    }
    let at = pat.find(text).map(|m| m.start()).unwrap_or(0);
    let idx = text[..at].split_whitespace().count();
    let from = idx.saturating_sub(radius);
    let to = (idx + radius).min(words.len());
    words[from..to].join(" ")
}

fn strong(text: &str) -> bool {
    text.split_whitespace().count() >= 10
        && cue_count(text, COMPONENT_CUES) >= 2
        && cue_count(text, MECHANISM_CUES) >= 1
}

/// Whether a sentence (with its continuation) explains the concept; returns the quote.
fn explains(sentences: &[Sentence], i: usize, pat: &Regex) -> (bool, String) {
    let s = &sentences[i];
    if s.heading {
        // A heading followed by prose about it: the section explains the concept.
        let body: Vec<&Sentence> = sentences[i + 1..]
            .iter()
            .take_while(|n| n.page == s.page && !n.heading)
            .filter(|n| !n.list_or_title)
            .take(3)
            .collect();
        let text = body
            .iter()
            .map(|n| n.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let quote = format!("{}: {}", s.text, text);
        return (strong(&text), quote);
    }
    let own = window(&s.text, pat, 35);
    if s.list_or_title && own.split_whitespace().count() < 14 {
        // A list item may still carry an explanation ("• Fan-out: the graph sends ... via Send").
        return (false, own);
    }
    if strong(&own) {
        return (true, own);
    }
    if let Some(n) = sentences.get(i + 1)
        && n.page == s.page
        && !n.list_or_title
    {
        let first = n
            .text
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_lowercase();
        if matches!(
            first.as_str(),
            "it" | "this" | "these" | "they" | "here" | "each" | "the" | "our" | "we" | "in"
        ) {
            let both = format!("{own} {}", n.text);
            if strong(&both) {
                return (true, both);
            }
        }
    }
    (false, own)
}

fn trim_quote(q: &str) -> String {
    if q.chars().count() > 400 {
        let mut c: String = q.chars().take(397).collect();
        c.push_str("...");
        c
    } else {
        q.to_string()
    }
}

/// Classifies each concept over the report's sentences.
pub fn classify(concepts: &[String], sentences: &[Sentence]) -> Vec<ConceptFinding> {
    concepts
        .iter()
        .map(|concept| {
            let pats = patterns(concept);
            let mut first: Option<(u32, String)> = None;
            let mut best: Option<(u32, String)> = None;
            let mut mentions = 0;
            let mut pages: Vec<u32> = Vec::new();
            for (i, s) in sentences.iter().enumerate() {
                let hits = pats
                    .first()
                    .map(|p| p.find_iter(&s.text).count())
                    .unwrap_or(0)
                    .max(
                        pats.iter()
                            .skip(1)
                            .map(|p| p.find_iter(&s.text).count())
                            .max()
                            .unwrap_or(0),
                    );
                if hits == 0 {
                    continue;
                }
                mentions += hits as u32;
                if !pages.contains(&s.page) {
                    pages.push(s.page);
                }
                let hit = pats
                    .iter()
                    .find(|p| p.is_match(&s.text))
                    .unwrap_or(&pats[0]);
                if first.is_none() {
                    first = Some((s.page, window(&s.text, hit, 35)));
                }
                if best.is_none() {
                    let (ok, quote) = explains(sentences, i, hit);
                    if ok {
                        best = Some((s.page, quote));
                    }
                }
            }
            let (classification, (page, quote)) = match (best, first) {
                (Some(b), _) => (Classification::Explained, b),
                (None, Some(f)) => (Classification::Buzzword, f),
                (None, None) => (Classification::Absent, (0, String::new())),
            };
            ConceptFinding {
                concept: concept.clone(),
                classification,
                page,
                quote: trim_quote(&quote),
                mentions,
                pages,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::ingest::sentences;

    #[test]
    fn quoted_terms_of_the_official_instruction_are_the_concepts() {
        let i = "Search the PDF report for these specific terms: 'Dialectical Synthesis', 'Fan-In / Fan-Out', 'Metacognition', 'State Synchronization'. Flag terms that appear without supporting explanation as 'Keyword Dropping'.";
        assert_eq!(
            concepts_from_instruction(i),
            vec![
                "Dialectical Synthesis",
                "Fan-In / Fan-Out",
                "Metacognition",
                "State Synchronization"
            ]
        );
        let v2 = "Verify mentions of 'Dialectical Synthesis' and 'Metacognition'. Cross-reference claims made in the PDF (e.g., 'We implemented parallel Judges')";
        assert_eq!(
            concepts_from_instruction(v2),
            vec!["Dialectical Synthesis", "Metacognition"]
        );
    }

    #[test]
    fn explained_listed_and_absent_are_told_apart() {
        let pages = vec![
            "Executive Summary\nOur system uses Metacognition and Dialectical Synthesis.\n\nKey Concepts\n• Metacognition\n• State Synchronisation\n\nDialectical Synthesis is implemented by three judge nodes, Prosecutor, Defense and TechLead, that run in parallel on the same evidence; the Chief Justice node then merges their opinions with deterministic rules.".to_string(),
            "The graph fans out: fan-out happens in src/graph.py where add_edge sends the state to every detective node in parallel, and the aggregator node is the fan-in barrier.".to_string(),
        ];
        let s = sentences(&pages);
        let c = classify(
            &DEFAULT_CONCEPTS
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            &s,
        );
        let by = |n: &str| c.iter().find(|f| f.concept == n).unwrap();
        assert_eq!(
            by("Dialectical Synthesis").classification,
            Classification::Explained
        );
        assert!(
            by("Dialectical Synthesis")
                .quote
                .contains("three judge nodes")
        );
        assert_eq!(by("Dialectical Synthesis").mentions, 2);
        assert_eq!(
            by("Fan-In / Fan-Out").classification,
            Classification::Explained
        );
        assert_eq!(by("Fan-In / Fan-Out").page, 2);
        assert_eq!(by("Metacognition").classification, Classification::Buzzword);
        assert_eq!(by("Metacognition").page, 1);
        assert_eq!(
            by("State Synchronization").classification,
            Classification::Buzzword
        );
        let c = classify(&["Reflexion".to_string()], &s);
        assert_eq!(c[0].classification, Classification::Absent);
    }

    #[test]
    fn a_heading_followed_by_an_explanation_is_explained_and_long_blocks_are_windowed() {
        let pages = vec![
            "2.1 Metacognition
The chief justice node evaluates the judges' own evaluation quality: when their scores differ by more than two it routes the criterion back for re-evaluation.
2.2 State Synchronization
2.3 Other".to_string(),
            format!("{} Dialectical Synthesis {}", "filler ".repeat(200), "word ".repeat(200)),
        ];
        let s = sentences(&pages);
        let c = classify(
            &[
                "Metacognition".to_string(),
                "State Synchronization".to_string(),
                "Dialectical Synthesis".to_string(),
            ],
            &s,
        );
        assert_eq!(c[0].classification, Classification::Explained);
        assert!(
            c[0].quote
                .starts_with("2.1 Metacognition: The chief justice"),
            "{}",
            c[0].quote
        );
        assert_eq!(c[1].classification, Classification::Buzzword);
        assert_eq!(c[2].classification, Classification::Buzzword);
        assert!(
            c[2].quote.split_whitespace().count() <= 70,
            "{}",
            c[2].quote
        );
        assert!(c[2].quote.contains("Dialectical Synthesis"));
    }
}
