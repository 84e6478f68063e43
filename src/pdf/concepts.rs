//! Theoretical depth: where each rubric concept appears and whether the report explains how the
//! architecture does it, or merely drops the word.
//!
//! The concepts come from the dimension's forensic instruction (its quoted terms), with
//! [`DEFAULT_CONCEPTS`] as the fallback. An occurrence is **explained** when its sentence (plus
//! the following sentence of the same page when it continues the thought) is running prose that
//! ties the concept to components of the architecture (nodes, edges, judges, state, reducers,
//! files ...) and says how (via, by, in parallel, merges, ...). It is a **buzzword** in a list
//! item, a heading, a short fragment, prose with no such ties, or a line that lists keywords
//! (three or more short comma- or bullet-separated items around the mention), however many
//! words follow the list.
//!
//! A concept is found in its spelling variants: British or American (`synchronisation`),
//! inflected (`synchronised`, `dialectic`, `metacognitive`, `meta-cognition`), its words
//! joined by spaces, hyphens or slashes or in the reverse order (`synchronisation of state`).

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

/// The regex of one word of a concept, accepting its spelling variants.
fn word_pattern(w: &str) -> String {
    let w = w.to_lowercase();
    let (stem, tail) = if let Some(stem) = w
        .strip_suffix("ization")
        .or_else(|| w.strip_suffix("isation"))
    {
        (stem.to_string(), "i[sz](?:ations?|e|ed|es|ing)")
    } else if let Some(stem) = w.strip_suffix("ize").or_else(|| w.strip_suffix("ise")) {
        (stem.to_string(), "i[sz](?:e|ed|es|ing|ations?)")
    } else if let Some(stem) = w.strip_suffix("ical") {
        (stem.to_string(), "ic(?:al)?")
    } else if let Some(stem) = w.strip_suffix("ition") {
        (stem.to_string(), "iti(?:ons?|ve)")
    } else {
        (w.clone(), "s?")
    };
    let mut stem = regex::escape(&stem);
    if let Some(rest) = stem.strip_prefix("meta")
        && !rest.is_empty()
    {
        stem = format!("meta[\\s\\-]?{rest}");
    }
    format!("{stem}{tail}")
}

/// Patterns that find a concept in text: its words (in their spelling variants, see
/// [`word_pattern`]) separated by spaces, hyphens or slashes, or two words in the reverse order
/// joined by "of" (`synchronisation of the state`); `A / B` terms are also found by each half.
fn patterns(concept: &str) -> Vec<Regex> {
    let mut variants = vec![concept.to_string()];
    if concept.contains('/') {
        variants.extend(concept.split('/').map(|s| s.trim().to_string()));
    }
    let mut out = Vec::new();
    for v in &variants {
        let words: Vec<String> = v
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(word_pattern)
            .collect();
        if words.is_empty() {
            continue;
        }
        out.extend(Regex::new(&format!(r"(?i)\b{}\b", words.join(r"[\s\-/]*"))).ok());
        if let [a, b] = words.as_slice() {
            out.extend(Regex::new(&format!(r"(?i)\b{b}\s+of\s+(?:the\s+)?(?:\w+\s+)?{a}\b")).ok());
        }
    }
    out
}

/// Whether the mention at `at` sits in a line that lists keywords: three or more short items
/// (at most four words each, none saying how anything is done) separated by commas,
/// semicolons, bullets or pipes, one of them the mention, whatever prose follows the list.
fn in_keyword_list(text: &str, at: usize) -> bool {
    const SEPARATORS: &[char] = &[',', ';', '\u{2022}', '\u{b7}', '|', '\u{25cf}'];
    let mut items: Vec<(usize, &str)> = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if SEPARATORS.contains(&c) {
            items.push((start, &text[start..i]));
            start = i + c.len_utf8();
        }
    }
    items.push((start, &text[start..]));
    // "Key concepts: A, B and C": the label and a final "and" do not lengthen an item.
    let words = |item: &str| {
        let item = item.rsplit(':').next().unwrap_or(item);
        item.split_whitespace()
            .filter(|w| !matches!(w.to_lowercase().as_str(), "and" | "or" | "&"))
            .count()
    };
    // Words that make an item a clause rather than a keyword.
    const VERBS: &[&str] = &[
        " is ",
        " are ",
        " was ",
        " were ",
        " uses ",
        " use ",
        " using ",
        " via ",
        " by ",
        " through ",
        " runs ",
        " run ",
        " merges ",
        " sends ",
        " implement",
        " when ",
        " which ",
        " then ",
    ];
    let short =
        |item: &str| (1..=4).contains(&words(item)) && cue_count(&format!(" {item} "), VERBS) == 0;
    let Some(idx) = items.iter().rposition(|(s, _)| *s <= at) else {
        return false;
    };
    if !short(items[idx].1) {
        return false;
    }
    let left = items[..idx]
        .iter()
        .rev()
        .take_while(|(_, t)| short(t))
        .count();
    let right = items[idx + 1..]
        .iter()
        .take_while(|(_, t)| short(t))
        .count();
    left + right + 1 >= 3
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
    if pat
        .find(&s.text)
        .is_some_and(|m| in_keyword_list(&s.text, m.start()))
    {
        return (false, own);
    }
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

    fn classified(concept: &str, text: &str) -> Classification {
        let s = sentences(&[text.to_string()]);
        classify(&[concept.to_string()], &s)[0].classification
    }

    #[test]
    fn spelling_variants_of_a_concept_are_the_concept() {
        let explained = "State synchronisation happens in the aggregator node: the reducers merge the evidence of the parallel detective branches so no update is lost.";
        assert_eq!(
            classified("State Synchronization", explained),
            Classification::Explained
        );
        let reversed = "Synchronisation of the state is done by operator.add reducers, which merge the opinions each judge node returns in parallel.";
        assert_eq!(
            classified("State Synchronization", reversed),
            Classification::Explained
        );
        let inflected = "The graph is dialectic: the Prosecutor and Defense judge nodes argue, then the Chief Justice node merges their opinions via deterministic rules.";
        assert_eq!(
            classified("Dialectical Synthesis", inflected),
            Classification::Absent
        );
        let meta = "Meta-cognition is implemented by the chief justice node, which evaluates the judges' scores and routes a criterion back when they disagree.";
        assert_eq!(classified("Metacognition", meta), Classification::Explained);
        assert_eq!(
            classified("Metacognition", "Synchronisation of stuff."),
            Classification::Absent
        );
    }

    #[test]
    fn a_line_that_lists_keywords_is_keyword_dropping_however_long() {
        let listed = "Key concepts: Metacognition, Dialectical Synthesis, Fan-In / Fan-Out, State Synchronization, all implemented across the graph nodes and the judges, which run in parallel via LangGraph edges and merge their evidence through reducers.";
        for c in [
            "Metacognition",
            "Dialectical Synthesis",
            "State Synchronization",
        ] {
            assert_eq!(classified(c, listed), Classification::Buzzword, "{c}");
        }
        // Prose that names three things in a row is not a keyword list.
        let prose = "The graph uses fan-out, and the Prosecutor, Defense and TechLead judge nodes run in parallel on the same state before the aggregator merges them.";
        assert_eq!(
            classified("Fan-In / Fan-Out", prose),
            Classification::Explained
        );
    }
}
