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
    /// What the quoted passage says about the code (none for a keyword list or no mention).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<PassageContent>,
    /// The concept's mechanism, in words, when the explaining passage was found by it rather
    /// than by the concept's name ("reducers that merge the parallel writes into the state").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
    /// Every passage found explaining the concept (the quoted one first, then in the order of
    /// the report; at most [`MAX_EXPLAINING`]): its page and the names of code it gives, for
    /// checking at the aggregation barrier which of them the repository has (`pdf::ties`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explaining: Vec<Explaining>,
}

/// A passage that explains a concept: where, and the names of code it gives as the code would
/// write them (`src/graph.py`, `evidence_aggregator`, `ChiefJusticeNode`, `state.opinions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explaining {
    pub page: u32,
    pub names: Vec<String>,
    /// Capitalised words of the passage, and runs of two joined (`Prosecutor`, `TechLead` for
    /// "Tech Lead"): a graph node declared with exactly that name is named by the passage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub titles: Vec<String>,
}

/// Most explaining passages kept per concept.
pub const MAX_EXPLAINING: usize = 12;

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

/// A concept's mechanism as the challenge's spec defines it, for a report that explains the
/// mechanism without naming the concept ("State Reducers: we use operator.ior for the evidence
/// dictionary ..., so parallel updates are merged rather than overwritten" explains State
/// Synchronization). A passage is found by one of the `cues` in its first sentence, and counts
/// only when it explains how the code does it ([`PassageContent::explains`]) and says each of
/// the things in `with` (the reducers' parallel writes, the join after the parallel branches,
/// the opposing persona and the synthesis). Such a passage is no mention of the name: it never
/// makes the concept a buzzword.
struct Mechanism {
    what: &'static str,
    cues: Vec<Regex>,
    with: Vec<Regex>,
    /// `with` must be said by the cue's own sentence ("operator.ior merges the parallel
    /// writes"), not anywhere in its passage.
    local: bool,
}

fn mechanism(concept: &str) -> Option<Mechanism> {
    let key = concept
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase()
        .replace("isation", "ization");
    let (what, cues, with, local): (&str, &[&str], &[&str], bool) = match key.as_str() {
        // spec: reducers (`operator.add`, `operator.ior`) so parallel agents do not overwrite
        // each other's data
        "statesynchronization" => (
            "reducers that merge the parallel writes into the state",
            &[
                r"\breducers?\b",
                r"\boperator\.(?:add|ior|or_|iadd)\b",
                r"\badd_messages\b",
            ],
            &[
                r"\b(?:merg|combin|concatenat|append|accumulat|union|overwrit|parallel|concurren|simultaneous)",
            ],
            true,
        ),
        // spec: branches from one node run concurrently; a synchronization node collects them
        "faninfanout" => (
            "branches that run in parallel and are joined again",
            &[
                r"\bin parallel\b",
                r"\bconcurrently\b",
                r"\bsimultaneously\b",
                r"\bparallel (?:branch|node|detective|judge)",
            ],
            &[r"\b(?:aggregat|barrier|join|synchroni[sz]|collect|waits?\b|converg)"],
            true,
        ),
        // spec: opposed personas judge the same evidence; the Chief Justice resolves the conflict
        "dialecticalsynthesis" => (
            "opposed judge personas whose conflict a synthesis step resolves",
            &[r"\bprosecutor\b"],
            &[
                r"\bdefen[cs]e\b",
                r"\b(?:resolv|reconcil|overrul|overrid|weigh|tie-break|adjudicat|dissent)",
            ],
            false,
        ),
        // spec: the ability to think about thinking: the system evaluating its own evaluation
        "metacognition" => (
            "the system evaluating its own evaluation",
            &[
                r"\bthinking about thinking\b",
                r"\b(?:evaluat|assess|judg|critiqu|review)\w*\s+(?:its|their)\s+own\b",
                r"\bself-(?:evaluat|assess|reflect|correct|critiq)",
            ],
            &[],
            true,
        ),
        _ => return None,
    };
    let re = |p: &&str| Regex::new(&format!("(?i){p}")).ok();
    Some(Mechanism {
        what,
        cues: cues.iter().filter_map(re).collect(),
        with: with.iter().filter_map(re).collect(),
        local,
    })
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
        // an arrow states an edge of the graph (`a -> b, c`)
        "->",
        "\u{2192}",
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

/// Nouns naming parts of an agent graph's code (a part is also any identifier: `DocAnalyst`,
/// `evidence_aggregator`, `operator.add`, `src/graph.py`, `Send(`, `PROSECUTOR_PROMPT`).
const PART_NOUNS: &[&str] = &[
    "node",
    "edge",
    "graph",
    "state",
    "reducer",
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
    "inspector",
    "aggregator",
    "prompt",
    "llm",
    "schema",
    "router",
    "branch",
    "barrier",
    "persona",
    "opinion",
    "evidence",
    "rubric",
    "score",
    "verdict",
    "pydantic",
    "typeddict",
    "langgraph",
    "loop",
    "retry",
    "variance",
    "dissent",
    "rule",
    "tool",
    "function",
    "module",
    "class",
    "agent",
    "dictionary",
];

/// Verbs saying what the code does, in their base form; their inflections count too
/// (`merges`, `merged`, `merging`, `capped`, `applies`).
const ACTION_VERBS: &[&str] = &[
    "use",
    "call",
    "run",
    "execute",
    "implement",
    "merge",
    "combine",
    "route",
    "send",
    "dispatch",
    "fan",
    "collect",
    "wait",
    "compare",
    "evaluate",
    "check",
    "validate",
    "compute",
    "calculate",
    "apply",
    "override",
    "overrule",
    "cap",
    "write",
    "read",
    "return",
    "append",
    "reduce",
    "trigger",
    "loop",
    "retry",
    "assess",
    "detect",
    "penalize",
    "penalise",
    "distinguish",
    "analyze",
    "analyse",
    "flag",
    "aggregate",
    "synchronize",
    "synchronise",
    "join",
    "spawn",
    "invoke",
    "parse",
    "extract",
    "cross-reference",
    "resolve",
    "reconcile",
    "weigh",
    "re-weight",
    "propagate",
    "consolidate",
    "decide",
    "scan",
    "clone",
    "emit",
    "instruct",
    "deliberate",
    "adjudicate",
    "perform",
    "branch",
    "bind",
    "convert",
    "store",
    "update",
    "re-run",
    "rerun",
    "re-evaluate",
    "forward",
    "receive",
    "produce",
    "generate",
    "enforce",
    "ensure",
    "prevent",
    "catch",
    "handle",
    "select",
    "filter",
    "load",
    "build",
    "compile",
    "wire",
    "connect",
    "split",
    "iterate",
    "repeat",
    "audit",
    "cite",
    "verify",
    "trace",
    "dedupe",
    "fan-out",
    "fan-in",
    "fans-out",
];

/// Every inflection of [`ACTION_VERBS`], lower case.
fn action_forms() -> &'static std::collections::HashMap<String, &'static str> {
    static FORMS: std::sync::OnceLock<std::collections::HashMap<String, &'static str>> =
        std::sync::OnceLock::new();
    FORMS.get_or_init(|| {
        let mut m = std::collections::HashMap::new();
        for v in ACTION_VERBS {
            let v: &'static str = v;
            let mut forms = vec![
                v.to_string(),
                format!("{v}s"),
                format!("{v}es"),
                format!("{v}ed"),
                format!("{v}d"),
                format!("{v}ing"),
            ];
            if let Some(stem) = v.strip_suffix('e') {
                forms.push(format!("{stem}ing"));
            }
            if let Some(stem) = v.strip_suffix('y') {
                forms.push(format!("{stem}ies"));
                forms.push(format!("{stem}ied"));
            }
            // run -> running, cap -> capped
            let b = v.as_bytes();
            if b.len() >= 3
                && !b"aeiouwxy".contains(&b[b.len() - 1])
                && b"aeiou".contains(&b[b.len() - 2])
                && !b"aeiou".contains(&b[b.len() - 3])
            {
                let last = b[b.len() - 1] as char;
                forms.push(format!("{v}{last}ed"));
                forms.push(format!("{v}{last}ing"));
            }
            for f in forms {
                m.entry(f).or_insert(v);
            }
        }
        m.insert("ran".into(), "run");
        m.insert("wrote".into(), "write");
        m.insert("sent".into(), "send");
        m.insert("built".into(), "build");
        m
    })
}

/// Words that carry no content (for word counts).
fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// An identifier of code written in the text: CamelCase with an inner capital, snake_case,
/// a dotted name or a path, a call, or an upper-case constant with underscores.
fn identifier(token: &str) -> Option<String> {
    let call = token.find('(').is_some_and(|i| {
        i > 0
            && token[..i]
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    });
    let t = token.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    let t = t.split('(').next().unwrap_or(t);
    if t.chars().count() < 3 || !t.chars().next().is_some_and(char::is_alphabetic) {
        return None;
    }
    let inner_capital = t
        .chars()
        .zip(t.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let word = |p: &str| p.len() >= 2 && p.chars().all(|c| c.is_alphanumeric() || c == '_');
    let snake = t.contains('_') && t.split('_').filter(|p| !p.is_empty()).count() >= 2;
    let dotted = !t.contains('/') && t.split('.').count() >= 2 && t.split('.').all(word);
    let path = t.contains('/')
        && t.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_./-".contains(c))
        && (t.rsplit('/').next().is_some_and(|f| f.contains('.')) || t.matches('/').count() >= 2);
    (inner_capital || snake || dotted || path || (call && word(t))).then(|| t.to_string())
}

/// What a passage says about the code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageContent {
    pub words: usize,
    pub sentences: usize,
    /// The parts of the code it names (identifiers, components), distinct, in order.
    pub parts: Vec<String>,
    /// The actions of the code it describes (verb stems), distinct, in order.
    pub actions: Vec<String>,
    /// How many of the parts are named as the code names them (a path, a class, a function,
    /// a node: `src/graph.py`, `ChiefJustice`, `evidence_aggregator`), not as prose nouns.
    #[serde(default)]
    pub identifiers: usize,
    /// It opens with a statement: a sentence that ends like one, neither an instruction nor a
    /// plan (a table row run together, "Add a conditional edge ..." or "we will ..." is none).
    #[serde(default)]
    pub statement: bool,
    /// The names of code it gives as the code would write them (the identifiers among
    /// `parts`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Capitalised words and runs of two joined (see [`Explaining::titles`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub titles: Vec<String>,
}

/// Sentences longer than this are tables or code run together: only the words around the
/// concept (or the first ones) are read.
const LONG_SENTENCE: usize = 80;

impl PassageContent {
    pub(crate) fn of(texts: &[String]) -> PassageContent {
        let mut c = PassageContent {
            sentences: texts.len(),
            statement: texts.first().is_some_and(|t| {
                let t = t.trim_end();
                t.ends_with(['.', '!', ';']) && super::claims::affirmative(&t.to_lowercase())
            }),
            ..PassageContent::default()
        };
        for text in texts {
            c.words += words(text);
            // the nouns are read in the prose around the identifiers, not inside them: a path
            // `graph_tools/x.py` or a name `judge_helper` is one part (itself), whatever
            // words the student built it from
            let mut prose = String::with_capacity(text.len());
            let mut previous: Option<String> = None;
            for token in text.split_whitespace() {
                let word = token.trim_matches(|ch: char| !ch.is_alphanumeric());
                let title = word.len() >= 3
                    && word.chars().next().is_some_and(char::is_uppercase)
                    && word.chars().all(char::is_alphanumeric);
                if title {
                    if !c.titles.iter().any(|t| t == word) {
                        c.titles.push(word.to_string());
                    }
                    if let Some(p) = previous.as_deref() {
                        let joined = format!("{p}{word}");
                        if !c.titles.contains(&joined) {
                            c.titles.push(joined);
                        }
                    }
                }
                previous = (title && word.len() == token.len()).then(|| word.to_string());
                if let Some(id) = identifier(token) {
                    if !c.parts.iter().any(|p| p.eq_ignore_ascii_case(&id)) {
                        c.names.push(id.clone());
                        c.parts.push(id);
                        c.identifiers += 1;
                    }
                } else {
                    prose.push_str(&token.to_lowercase());
                    prose.push(' ');
                }
            }
            for noun in PART_NOUNS {
                if contains_word_start(&prose, noun)
                    && !c.parts.iter().any(|p| p.eq_ignore_ascii_case(noun))
                {
                    c.parts.push((*noun).to_string());
                }
            }
            for token in prose.split(|c: char| !(c.is_alphanumeric() || c == '-')) {
                if let Some(verb) = action_forms().get(token.trim_matches('-'))
                    && !c.actions.iter().any(|a| a == verb)
                {
                    c.actions.push((*verb).to_string());
                }
            }
        }
        c
    }

    /// Whether the passage explains a mechanism of the code: enough text (two sentences and
    /// 25 words, or 40 words), naming at least three parts of the code and two things they do;
    /// or one dense statement (15 words or more, ending like a sentence, neither an instruction
    /// nor a plan) naming four parts of the code, one of them as the code names it (a file, a
    /// node, a class), and two things they do ("Prosecutor,
    /// Defense, Tech Lead run in parallel; Chief Justice (src/justice.py) applies weighted
    /// synthesis").
    pub fn explains(&self) -> bool {
        let enough = (self.sentences >= 2 && self.words >= 25) || self.words >= 40;
        let broad = enough && self.parts.len() >= 3 && self.actions.len() >= 2;
        let dense = self.statement
            && self.words >= 15
            && self.identifiers >= 1
            && self.parts.len() >= 4
            && self.actions.len() >= 2;
        broad || dense
    }

    fn weight(&self) -> usize {
        self.parts.len().min(6) + self.actions.len().min(6) + self.sentences.min(4)
    }

    /// In words: "5 sentences naming DocAnalyst, LLM, chunks and more, saying what they do (uses,
    /// distinguishes, penalizes)".
    pub fn describe(&self) -> String {
        let parts: Vec<&str> = self.parts.iter().take(5).map(String::as_str).collect();
        let actions: Vec<&str> = self.actions.iter().take(4).map(String::as_str).collect();
        format!(
            "{} of {} words naming {} {}{} and {} ({})",
            crate::words::count(self.sentences, "sentence", "sentences"),
            self.words,
            crate::words::count(self.parts.len(), "part of the code", "parts of the code"),
            if parts.is_empty() {
                String::new()
            } else {
                format!("({}", parts.join(", "))
            },
            if parts.is_empty() {
                String::new()
            } else if self.parts.len() > parts.len() {
                ", ...)".to_string()
            } else {
                ")".to_string()
            },
            crate::words::count(self.actions.len(), "action", "actions"),
            if actions.is_empty() {
                "none".to_string()
            } else {
                actions.join(", ")
            }
        )
    }
}

/// Whether `word` starts a word of `lower` (a lower-cased text).
fn contains_word_start(lower: &str, word: &str) -> bool {
    lower.match_indices(word).any(|(i, _)| {
        lower[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The text of a sentence as read for its content: the words around the mention in a long one.
fn read(s: &Sentence, pat: Option<&Regex>) -> String {
    if words(&s.text) <= LONG_SENTENCE {
        return s.text.clone();
    }
    match pat {
        Some(p) => window(&s.text, p, 35),
        None => s
            .text
            .split_whitespace()
            .take(60)
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Most sentences a passage holds.
const PASSAGE_SENTENCES: usize = 12;

/// The passage a mention at `i` belongs to:
/// - a heading or a short label ("Metacognition (concrete mapping).") introduces the section
///   that follows it, up to the next heading (on the next page too);
/// - a mention in a list item opens its item, and the items after it that keep naming the
///   concept ("Fan-Out: ...", "Synchronization: ... (fan-in)", "Second Fan-Out/In: ...");
/// - a mention in prose opens the rest of its paragraph, and the list items a paragraph ending
///   with ':' introduces.
fn passage(sentences: &[Sentence], i: usize, pat: &Regex, all: &[Regex]) -> Vec<String> {
    let s = &sentences[i];
    let near = |n: &&Sentence| !n.heading && n.page <= s.page + 1;
    // a bullet that text extraction left on a line of its own is no sentence of the passage
    let worded = |n: &&Sentence| n.text.chars().any(char::is_alphanumeric);
    let mut out = Vec::new();
    if s.heading || (words(&s.text) < 8 && !s.item) {
        for n in sentences[i + 1..]
            .iter()
            .take_while(near)
            .filter(worded)
            .take(PASSAGE_SENTENCES)
        {
            out.push(read(n, None));
        }
        return out;
    }
    out.push(read(s, Some(pat)));
    let mut block = s.block;
    let mut lead_in = s.text.trim_end().ends_with(':');
    let mut listing = false;
    for n in sentences[i + 1..]
        .iter()
        .take_while(near)
        .filter(worded)
        .take(PASSAGE_SENTENCES - 1)
    {
        if n.block != block {
            let next = if s.item {
                n.item && all.iter().any(|p| p.is_match(&n.text))
            } else {
                n.item && (lead_in || listing)
            };
            if !next {
                break;
            }
            listing = !s.item;
            block = n.block;
        }
        lead_in = n.text.trim_end().ends_with(':');
        out.push(read(n, None));
    }
    out
}

/// Whether the mention at `at` is one of several quoted terms of its sentence ("keyword
/// search for "Dialectical Synthesis", "Fan-In", "Metacognition""): the word is named, not
/// used.
fn in_quoted_list(text: &str, at: usize) -> bool {
    let quotes: Vec<usize> = text
        .char_indices()
        .filter(|(_, c)| *c == '"')
        .map(|(i, _)| i)
        .collect();
    let spans: Vec<(usize, usize)> = quotes
        .chunks(2)
        .filter(|p| p.len() == 2)
        .map(|p| (p[0], p[1]))
        .collect();
    spans.len() >= 3 && spans.iter().any(|(a, b)| *a < at && at < *b)
}

/// One occurrence of a concept: where, and what its passage says (`None`: a keyword list).
struct Occurrence {
    page: u32,
    quote: String,
    content: Option<PassageContent>,
}

fn occurrence(
    sentences: &[Sentence],
    i: usize,
    pat: &Regex,
    own: &[Regex],
    others: &[Vec<Regex>],
) -> Occurrence {
    let s = &sentences[i];
    let at = pat.find(&s.text).map(|m| m.start()).unwrap_or(0);
    let named = others
        .iter()
        .filter(|ps| ps.iter().any(|p| p.is_match(&s.text)))
        .count();
    // A line that lists keywords, quotes several terms, or names three of the concepts in one
    // sentence ("grounded in three core concepts: (1) Dialectical Synthesis via ..., (2)
    // Fan-In/Fan-Out ..., (3) Metacognition ..."): a summary, about none of them. A chain of
    // four steps or more ("Detectives produce evidence merged via operator.ior → EvidenceAggregator
    // validates → Judges ...") lists the steps of a flow: it says what follows what, not how
    // the code does any of them.
    if in_keyword_list(&s.text, at)
        || in_quoted_list(&s.text, at)
        || named >= 2
        || arrow_chain(&s.text, at)
    {
        return Occurrence {
            page: s.page,
            quote: window(&s.text, pat, 35),
            content: None,
        };
    }
    let body = passage(sentences, i, pat, own);
    let content = PassageContent::of(&body);
    let quote = if s.heading || words(&s.text) < 8 {
        format!("{}: {}", s.text, body.join(" "))
    } else {
        body.join(" ")
    };
    Occurrence {
        page: s.page,
        quote,
        content: Some(content),
    }
}

/// Whether the mention at `at` sits in a chain of steps joined by arrows (`a → b → c → d`):
/// three arrows or more in its clause (between semicolons). Edges listed one by one
/// (`setup -> scan; collect -> critic`) name the wiring of the code, and a statement that
/// introduces a chain ("fan-out implemented in graph.py: a -> b -> c -> d") says where: neither
/// is a chain the mention sits in.
fn arrow_chain(text: &str, at: usize) -> bool {
    const ARROWS: [&str; 5] = ["\u{2192}", "->", "\u{21d2}", "=>", "\u{27f6}"];
    let at = at.min(text.len());
    let start = text[..at].rfind(';').map_or(0, |i| i + 1);
    let end = text[at..].find(';').map_or(text.len(), |i| at + i);
    let clause = &text[start..end];
    let arrows = ARROWS
        .iter()
        .map(|a| clause.matches(a).count())
        .sum::<usize>();
    let first_arrow = ARROWS
        .iter()
        .filter_map(|a| clause.find(a))
        .min()
        .unwrap_or(clause.len());
    // the mention in a lead-in ending with ':' before the chain
    let lead_in = clause[..first_arrow]
        .rfind(':')
        .is_some_and(|colon| at - start < colon);
    arrows >= 3 && !lead_in
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

/// Classifies each concept over the report's sentences: **explained** when a passage explains a
/// mechanism of the code ([`PassageContent::explains`]; the fullest such passage is quoted); otherwise a
/// **buzzword** (quoted at its fullest passage, or its first mention), or **absent**.
pub fn classify(concepts: &[String], sentences: &[Sentence]) -> Vec<ConceptFinding> {
    let all: Vec<Vec<Regex>> = concepts.iter().map(|c| patterns(c)).collect();
    concepts
        .iter()
        .enumerate()
        .map(|(k, concept)| {
            let pats = &all[k];
            let others: Vec<Vec<Regex>> = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, p)| p.clone())
                .collect();
            let mut mentions = 0;
            let mut pages: Vec<u32> = Vec::new();
            let mut explained: Option<(Occurrence, PassageContent)> = None;
            let mut fullest: Option<(Occurrence, usize)> = None;
            let mut first: Option<Occurrence> = None;
            let mech = mechanism(concept);
            let mut by_mechanism: Option<(Occurrence, PassageContent)> = None;
            // every explaining passage (page, names), by its name and by its mechanism
            let mut by_name: Vec<Explaining> = Vec::new();
            let mut by_mech: Vec<Explaining> = Vec::new();
            for (i, s) in sentences.iter().enumerate() {
                let hits = pats
                    .iter()
                    .map(|p| p.find_iter(&s.text).count())
                    .max()
                    .unwrap_or(0);
                if hits == 0 {
                    if let Some(m) = &mech
                        && let Some((occ, c)) = mechanism_occurrence(sentences, i, m, &others)
                    {
                        note_explaining(&mut by_mech, occ.page, &c);
                        if by_mechanism
                            .as_ref()
                            .is_none_or(|(_, best)| c.weight() > best.weight())
                        {
                            by_mechanism = Some((occ, c));
                        }
                    }
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
                let occ = occurrence(sentences, i, hit, pats, &others);
                match occ.content.clone() {
                    // the fullest explanation is quoted (a summary on p.1 that merely says the
                    // layer is wired is not the section that explains it)
                    Some(c) if c.explains() => {
                        note_explaining(&mut by_name, occ.page, &c);
                        if explained
                            .as_ref()
                            .is_none_or(|(_, best)| c.weight() > best.weight())
                        {
                            explained = Some((occ, c));
                        }
                    }
                    Some(c) => {
                        let w = c.weight();
                        if fullest.as_ref().is_none_or(|(_, best)| w > *best) {
                            fullest = Some((occ, w));
                        } else if first.is_none() {
                            first = Some(occ);
                        }
                    }
                    None => {
                        if first.is_none() {
                            first = Some(occ);
                        }
                    }
                }
            }
            let mut how = None;
            if explained.is_none()
                && let Some(found) = by_mechanism
            {
                how = mech.as_ref().map(|m| m.what.to_string());
                explained = Some(found);
            }
            let explaining = explaining_passages(by_name, by_mech, explained.as_ref());
            let (classification, occ, content) = classified(explained, fullest, first);
            ConceptFinding {
                concept: concept.clone(),
                classification,
                page: occ.as_ref().map(|o| o.page).unwrap_or(0),
                quote: occ.map(|o| trim_quote(&o.quote)).unwrap_or_default(),
                mentions,
                pages,
                content,
                mechanism: how,
                explaining: if classification == Classification::Explained {
                    explaining
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

/// Note an explaining passage (its page and names) once, up to `MAX_EXPLAINING`.
fn note_explaining(list: &mut Vec<Explaining>, page: u32, c: &PassageContent) {
    if list.len() < MAX_EXPLAINING && !list.iter().any(|e| e.page == page && e.names == c.names) {
        list.push(Explaining {
            page,
            names: c.names.clone(),
            titles: c.titles.clone(),
        });
    }
}

/// The passages explaining a concept: those naming it, then those explaining its mechanism
/// (which explain the concept too), up to `MAX_EXPLAINING`; the quoted passage first.
fn explaining_passages(
    by_name: Vec<Explaining>,
    by_mech: Vec<Explaining>,
    explained: Option<&(Occurrence, PassageContent)>,
) -> Vec<Explaining> {
    let mut explaining = by_name;
    for e in by_mech {
        if explaining.len() < MAX_EXPLAINING && !explaining.contains(&e) {
            explaining.push(e);
        }
    }
    if let Some((o, c)) = explained
        && let Some(at) = explaining
            .iter()
            .position(|e| e.page == o.page && e.names == c.names)
    {
        let quoted = explaining.remove(at);
        explaining.insert(0, quoted);
    }
    explaining
}

/// Explained by the best explaining passage; else a buzzword, quoted from its fullest passage
/// (or its first mention); else absent.
fn classified(
    explained: Option<(Occurrence, PassageContent)>,
    fullest: Option<(Occurrence, usize)>,
    first: Option<Occurrence>,
) -> (Classification, Option<Occurrence>, Option<PassageContent>) {
    match (explained, fullest, first) {
        (Some((o, c)), _, _) => (Classification::Explained, Some(o), Some(c)),
        (None, Some((o, _)), _) => {
            let c = o.content.clone();
            (Classification::Buzzword, Some(o), c)
        }
        (None, None, Some(o)) => (Classification::Buzzword, Some(o), None),
        (None, None, None) => (Classification::Absent, None, None),
    }
}

/// A passage opened at sentence `i` by a cue of the concept's mechanism that explains how the
/// code does it and says what the mechanism needs (see [`Mechanism`]); never an instruction,
/// a plan, a keyword list or a reference list.
fn mechanism_occurrence(
    sentences: &[Sentence],
    i: usize,
    m: &Mechanism,
    others: &[Vec<Regex>],
) -> Option<(Occurrence, PassageContent)> {
    let s = &sentences[i];
    let cue = m.cues.iter().find(|p| p.is_match(&s.text))?;
    let lower = s.text.to_lowercase();
    // an entry of a reference list ("Reducers and Parallel Execution. https://...") cites
    // someone else's text
    let reference = lower.contains("http://") || lower.contains("https://");
    // "Without reducers, the writes would overwrite each other" says why, not how
    let padded = format!(" {lower} ");
    let supposes = [" would ", " could ", " if "]
        .iter()
        .any(|w| padded.contains(w));
    if s.heading || reference || supposes || !super::claims::affirmative(&lower) {
        return None;
    }
    let occ = occurrence(sentences, i, cue, &m.cues, others);
    let c = occ.content.clone()?;
    let said = if m.local { &s.text } else { &occ.quote };
    (c.explains() && m.with.iter().all(|w| w.is_match(said))).then_some((occ, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::ingest::sentences;

    fn defaults() -> Vec<String> {
        DEFAULT_CONCEPTS.iter().map(|s| s.to_string()).collect()
    }

    fn classified(concept: &str, text: &str) -> Classification {
        let s = sentences(&[text.to_string()]);
        classify(&defaults(), &s)
            .into_iter()
            .find(|f| f.concept == concept)
            .map(|f| f.classification)
            .unwrap_or(Classification::Absent)
    }

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

    /// The section a heading opens explains the concept when it says how the code does it,
    /// whatever its vocabulary: here the DocAnalyst's own mechanism, no graph words at all.
    #[test]
    fn a_section_that_says_how_the_code_does_it_is_explained() {
        let page = "2.3 Metacognition (Self-Correcting Forensics)\nThe system practices metacognition by auditing its own \"Theoretical Depth.\" The DocAnalyst uses an LLM to distinguish between keyword dropping and substantive explanation within the report. By analyzing 1200-character context chunks around keywords, the system assesses whether it explains how a pattern is implemented or merely lists features. If it detects a lack of depth, it penalizes its own score.\n3. High-Fidelity Graph Orchestration";
        let s = sentences(&[page.to_string()]);
        let c = classify(&["Metacognition".to_string()], &s);
        assert_eq!(c[0].classification, Classification::Explained, "{c:?}");
        assert!(
            c[0].quote.starts_with("2.3 Metacognition"),
            "{}",
            c[0].quote
        );
        let content = c[0].content.as_ref().unwrap();
        assert!(
            content.parts.iter().any(|p| p == "DocAnalyst"),
            "{content:?}"
        );
        assert!(
            content.actions.iter().any(|a| a == "penalize"),
            "{content:?}"
        );
        assert!(content.sentences >= 3);
        // the same heading over a textbook definition: no part of the code, nothing it does
        let textbook = "2.3 Metacognition\nMetacognition in multi-agent systems is thinking about thinking. It is a well-known idea of cognitive science that helps people learn and adapt over time.\n3. Next";
        assert_eq!(
            classified("Metacognition", textbook),
            Classification::Buzzword
        );
    }

    #[test]
    fn a_term_label_opens_its_paragraph_and_the_list_it_introduces() {
        let text = "Dialectical Synthesis - The system does not average opinions. Three judge personas deliberate on the same evidence, and a deterministic Chief Justice resolves their conflict with hardcoded rules. This is done in src/nodes/judges.py through three system prompts:\n- Prosecutor scans for security flaws and lazy shortcuts.\n- Defense highlights effort and creative workarounds.";
        assert_eq!(
            classified("Dialectical Synthesis", text),
            Classification::Explained
        );
        // items that keep naming the concept form one passage
        let items = "Key Parallelism Features:\n● Fan-Out: START node branches to three Detective nodes executing concurrently.\n● Synchronization: EvidenceAggregator waits for all detectives to complete (fan-in).\n● Second Fan-Out/In: Evidence branches to Judge nodes, followed by synchronization for ChiefJustice synthesis.\n● Conditional Edges: error paths route failed nodes.";
        assert_eq!(
            classified("Fan-In / Fan-Out", items),
            Classification::Explained
        );
    }

    #[test]
    fn a_one_line_mention_a_summary_a_keyword_list_and_a_quoted_list_are_keyword_dropping() {
        // one line pointing at a file, or naming the parts without saying what they do: not
        // enough to explain anything
        for bullet in [
            "- Dialectical synthesis: see src/justice/synthesis.py and the persona prompts of the three judges for the details.",
            "- Dialectical synthesis: Prosecutor, Defense and Tech Lead personas, with the Chief Justice in src/justice/synthesis.py.",
        ] {
            let bullets = format!(
                "2. Architecture\n{bullet}\n- Grounding: StructuredOpinion in src/judges/base.py enforces the JSON schema and prunes citations, so that every judge answer is validated before it is used by the graph."
            );
            assert_eq!(
                classified("Dialectical Synthesis", &bullets),
                Classification::Buzzword,
                "{bullet}"
            );
        }
        // an executive summary naming three concepts in one sentence is about none of them
        let summary = "Architectural Approach: The design is grounded in three core concepts: (1) Dialectical Synthesis via three adversarial judge personas (Prosecutor, Defense, Tech Lead) with deterministic resolution rules; (2) Fan-In/Fan-Out parallelism with typed state reducers ensuring safe concurrent updates; and (3) Metacognition through evidence-quality rules that evaluate the judges.";
        for c in ["Dialectical Synthesis", "Metacognition", "Fan-In / Fan-Out"] {
            assert_eq!(classified(c, summary), Classification::Buzzword, "{c}");
        }
        let listed = "Key concepts: Metacognition, Dialectical Synthesis, Fan-In / Fan-Out, State Synchronization, all implemented across the graph nodes and the judges, which run in parallel via LangGraph edges and merge their evidence through reducers.";
        assert_eq!(
            classified("Metacognition", listed),
            Classification::Buzzword
        );
        // the words as search terms of the student's tool, not concepts of its design
        let quoted = "The DocAnalyst parses the PDF, extracts text, and runs keyword search for rubric-relevant terms (e.g. \"Dialectical Synthesis\", \"Fan-In\", \"Metacognition\"). It then scores each term by the words around it and writes the scores into the state.";
        assert_eq!(
            classified("Metacognition", quoted),
            Classification::Buzzword
        );
        assert_eq!(
            classified("Metacognition", "Nothing here."),
            Classification::Absent
        );
    }

    /// One dense statement that names the code's parts as the code names them and says what
    /// they do explains the concept, however short the passage; an instruction, a plan or a
    /// table row of the same words does not.
    #[test]
    fn one_dense_statement_tied_to_the_code_explains_a_concept() {
        let dense = [
            (
                "Dialectical Synthesis",
                "3. Design\n- Dialectical synthesis: the critic, advocate and architect judges run in parallel; the arbiter node (src/court/arbiter.py) merges their scores with weighted rules.\n- Tracing: spans are exported.",
            ),
            (
                "Fan-In / Fan-Out",
                "3. Design\n- Parallel fan-out/fan-in wired in app/flow.py: setup -> code_scan, pdf_scan; collect_all -> critic, advocate; critic -> verdict -> publish.\n- Tracing: spans are exported.",
            ),
        ];
        for (concept, text) in dense {
            let s = sentences(&[text.to_string()]);
            let f = classify(&defaults(), &s)
                .into_iter()
                .find(|f| f.concept == concept)
                .unwrap();
            assert_eq!(f.classification, Classification::Explained, "{f:?}");
            assert!(f.mechanism.is_none(), "found by its name: {f:?}");
            let c = f.content.unwrap();
            assert_eq!(c.sentences, 1, "{c:?}");
            assert!(c.identifiers >= 1, "{c:?}");
        }
        for not_a_statement in [
            // an instruction
            "3. Next steps\n- Add parallel fan-out/fan-in in app/flow.py: setup -> code_scan, pdf_scan; collect_all -> critic, advocate; critic -> verdict -> publish.\n- Tracing: spans are exported.",
            // a table row run together
            "Status\nParallel fan-out/fan-in (app/flow.py) Complete Detective layer (code_scan, pdf_scan, image_scan) Complete Judicial layer (critic, advocate) Complete\n3. Next",
        ] {
            assert_eq!(
                classified("Fan-In / Fan-Out", not_a_statement),
                Classification::Buzzword,
                "{not_a_statement}"
            );
        }
    }

    /// The spec's mechanism of a concept, explained in terms of the code without the concept's
    /// name, explains the concept; the mechanism's words in a list, an instruction, a sentence
    /// that does not say what they do for it, or a reference list do not, and are no mention.
    #[test]
    fn a_mechanism_explained_without_the_name_explains_the_concept() {
        let reducers = "Orchestration\n- Barrier node (collect_all): this is where the scanners' branches join before the judges start.\n- Typed updates: parallel writes are made safe by Annotated type hints in the FlowState. We use operator.ior for the findings dictionary and operator.add for the verdicts list, so that concurrent updates are merged rather than overwritten.";
        let s = sentences(&[reducers.to_string()]);
        let f = classify(&defaults(), &s)
            .into_iter()
            .find(|f| f.concept == "State Synchronization")
            .unwrap();
        assert_eq!(f.classification, Classification::Explained, "{f:?}");
        assert_eq!(f.mentions, 0);
        assert!(f.pages.is_empty());
        assert_eq!(
            f.mechanism.as_deref(),
            Some("reducers that merge the parallel writes into the state")
        );
        assert!(f.quote.contains("operator.ior"), "{}", f.quote);
        for not_explained in [
            // listed
            "Key features: reducers, operator.add, typed state, retries.",
            // an instruction
            "- Add Annotated reducers (operator.ior, operator.add) to FlowState in app/state.py so that the scanners' parallel writes are merged rather than overwritten by the last branch.",
            // the words, but not what they do for parallel writes
            "The scanner parses app/state.py and app/flow.py with ast.walk() and records every Annotated field whose reducer is operator.add in the facts list it returns to the judges.",
            // a reference list
            "[1] LangGraph. Reducers and parallel execution: merging concurrent writes. https://langchain-ai.github.io/langgraph/concepts/low_level/#reducers (2024).",
        ] {
            let s = sentences(&[not_explained.to_string()]);
            let f = classify(&defaults(), &s)
                .into_iter()
                .find(|f| f.concept == "State Synchronization")
                .unwrap();
            assert_eq!(
                f.classification,
                Classification::Absent,
                "{not_explained}: {f:?}"
            );
        }
        // a concept named only in a title keeps its verdict of keyword dropping unless a passage
        // explains its mechanism
        let titled = "Contents: State Synchronization, Metacognition, Dialectical Synthesis.\nThe scanner reads app/state.py.";
        assert_eq!(
            classified("State Synchronization", titled),
            Classification::Buzzword
        );
        let both = format!("{titled}\n{reducers}");
        let s = sentences(&[both]);
        let f = classify(&defaults(), &s)
            .into_iter()
            .find(|f| f.concept == "State Synchronization")
            .unwrap();
        assert_eq!(f.classification, Classification::Explained, "{f:?}");
        assert_eq!(f.mentions, 1);
        assert!(f.mechanism.is_some());
    }

    #[test]
    fn spelling_variants_of_a_concept_are_the_concept() {
        let explained = "State synchronisation happens in the aggregator node: the reducers merge the evidence of the parallel detective branches so no update is lost. The operator.ior reducer on the evidences field combines the dictionaries each detective returns.";
        assert_eq!(
            classified("State Synchronization", explained),
            Classification::Explained
        );
        let reversed = "Synchronisation of the state is done by operator.add reducers, which merge the opinions each judge node returns in parallel. The ChiefJustice node then reads the merged list.";
        assert_eq!(
            classified("State Synchronization", reversed),
            Classification::Explained
        );
        let meta = "Meta-cognition is implemented by the chief justice node, which evaluates the judges' scores and routes a criterion back when they disagree. The re-evaluation reads the cited evidence again.";
        assert_eq!(classified("Metacognition", meta), Classification::Explained);
        assert_eq!(
            classified("State Synchronization", "Synchronisation of stuff."),
            Classification::Absent
        );
    }

    #[test]
    fn long_blocks_are_read_around_the_mention() {
        let pages = vec![format!(
            "{} Dialectical Synthesis {}",
            "filler ".repeat(200),
            "word ".repeat(200)
        )];
        let s = sentences(&pages);
        let c = classify(&["Dialectical Synthesis".to_string()], &s);
        assert_eq!(c[0].classification, Classification::Buzzword);
        assert!(
            c[0].quote.split_whitespace().count() <= 70,
            "{}",
            c[0].quote
        );
        assert!(c[0].quote.contains("Dialectical Synthesis"));
    }

    #[test]
    fn identifiers_are_parts_of_the_code_and_prose_words_are_not() {
        for t in [
            "DocAnalyst",
            "evidence_aggregator",
            "operator.add",
            "src/graph.py",
            "Send(",
            "PROSECUTOR_PROMPT",
        ] {
            assert!(identifier(t).is_some(), "{t}");
        }
        for t in ["Fan-In/Fan-Out", "and/or", "e.g.", "Hello", "(1)", "3.5"] {
            assert!(identifier(t).is_none(), "{t}");
        }
    }

    /// A heading's section is read past bullets that text extraction left on lines of their
    /// own, and past a label that opens a wrapped sentence: the section explains the concept
    /// and names the code it explains it by.
    #[test]
    fn a_heading_section_is_read_past_stray_bullets_and_a_wrapped_label() {
        let page = "Dialectical Synthesis\nThree Judge Personas: The system instantiates three\nJudgeAgent objects, each configured with distinct system prompts:\n\u{2022}\nProsecutor: \"You are a strict code reviewer. Flag all risks.\" Each judge uses .with_structured_output(JudicialOpinion) to return a typed opinion.\n\u{2022}\nThe chief_justice_node applies explicit conflict-resolution rules to the three opinions.\nFan-In / Fan-Out";
        let s = sentences(&[page.to_string()]);
        let c = classify(&["Dialectical Synthesis".to_string()], &s);
        assert_eq!(c[0].classification, Classification::Explained, "{c:?}");
        let names = &c[0].explaining[0].names;
        assert!(names.iter().any(|n| n == "JudgeAgent"), "{names:?}");
        assert!(names.iter().any(|n| n == "chief_justice_node"), "{names:?}");
    }

    /// A chain of arrows lists the steps of a flow: no explanation of how the code does any of
    /// them, whatever mechanism words it holds.
    #[test]
    fn an_arrow_chain_explains_nothing() {
        let chain = "2.2 Data Flow\nrepo_url + pdf_path \u{2192} AgentState (TypedDict) \u{2192} Detectives produce Dict[str, List[Evidence]] merged via operator.ior \u{2192} EvidenceAggregator validates \u{2192} Judges produce List[JudicialOpinion] appended via operator.add \u{2192} ChiefJustice applies synthesis rules \u{2192} Markdown file written to audit/report.md.";
        assert_eq!(
            classified("State Synchronization", chain),
            Classification::Absent
        );
        // a statement that introduces the edges says where the code does it
        let wiring = "3. Design\n- Parallel fan-out/fan-in wired in app/flow.py: setup -> code_scan, pdf_scan; collect_all -> critic, advocate; critic -> review -> verdict -> publish.\n- Tracing: spans are exported.";
        assert_eq!(
            classified("Fan-In / Fan-Out", wiring),
            Classification::Explained
        );
        // the same steps said in sentences explain it
        let prose = "2.2 Data Flow\nThe detectives run in parallel and each returns a dictionary of evidence; the operator.ior reducer on AgentState.evidences merges these parallel writes instead of overwriting them. The judges append their opinions through operator.add, so no update is lost.";
        assert_eq!(
            classified("State Synchronization", prose),
            Classification::Explained
        );
    }
}
