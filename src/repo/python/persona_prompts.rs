//! Judge personas: finds the Prosecutor, Defense and Tech Lead prompt texts (string constants
//! in Python, dict entries, or prompt files), each told by what its text says (the role it
//! addresses, or the one persona it names), never by the variable, key, function or file name
//! around it (a text the code pairs with a persona label, in a dict entry or a call, is that
//! persona's); compares them pairwise and checks each for the language its role calls for.
//!
//! Similarity is the share of the two prompts' text that they have in common: the share of
//! their (lower-cased) words that lie in a passage of [`PASSAGE_WORDS`] consecutive words found
//! in both. Shared passages are what copy-paste and shared templates leave; function words and
//! the topic's vocabulary, which any two prompts about judging code share, are not (a
//! word-by-word LCS put distinct, hand-written personas at 50-57%). Above 0.5 is persona
//! collusion.

use super::expr::Expr;
use super::syntax::ModuleInfo;
use crate::model::fact::Site;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Shortest text considered a prompt.
const MIN_PROMPT: usize = 60;
/// Words compared per prompt (longer prompts are compared on their first words).
const MAX_WORDS: usize = 3000;
pub const COLLUSION_THRESHOLD: f64 = 0.5;
/// A persona text shorter than this is a sentence or two, not a prompt of its own.
pub const SENTENCE_CHARS: usize = 400;
/// From this length on a persona text is a full brief (stance, duties, scoring guide).
pub const FULL_BRIEF_CHARS: usize = 1000;
/// Consecutive words a passage must have to count as shared text (fewer for shorter prompts).
pub const PASSAGE_WORDS: usize = 5;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonaPrompt {
    pub persona: String,
    pub path: String,
    pub line: usize,
    /// What names it (variable, dict key, file name).
    pub label: String,
    pub chars: usize,
    /// Sentences in the text (full stops, question and exclamation marks ending one).
    #[serde(default)]
    pub sentences: usize,
    /// The score levels (1 to 5) its scoring guide speaks of (see [`score_levels`]).
    #[serde(default)]
    pub levels: usize,
    #[serde(skip)]
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Similarity {
    pub a: String,
    pub b: String,
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Language {
    pub persona: String,
    /// What the role calls for: adversarial, forgiving or pragmatic.
    pub expected: String,
    pub matched: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PersonaFacts {
    pub prompts: Vec<PersonaPrompt>,
    pub similarity: Vec<Similarity>,
    pub collusion: bool,
    pub language: Vec<Language>,
    /// The shared prompt short persona texts are set into (a longer string with placeholders
    /// in their module): where, and its length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<(Site, usize)>,
}

pub const PERSONAS: [&str; 3] = ["Prosecutor", "Defense", "TechLead"];

fn persona_res() -> &'static [Regex; 3] {
    static R: OnceLock<[Regex; 3]> = OnceLock::new();
    R.get_or_init(|| {
        [
            Regex::new(r"(?i)prosecut").expect("valid regex"),
            Regex::new(r"(?i)defen[cs]e|defender").expect("valid regex"),
            Regex::new(r"(?i)tech[\s_\-]?lead").expect("valid regex"),
        ]
    })
}

/// The persona a prompt addresses in its opening ("You are the TECH LEAD ...", "Act as the
/// Defense"), whatever else it mentions later.
fn addressed(text: &str) -> Option<usize> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| {
        Regex::new(r"(?i)\b(you are|you're|act as|acting as|as the|role:)\s+(the\s+|an?\s+)?(\w+[\s_-]?\w*)")
            .expect("valid regex")
    });
    let head: String = text.chars().take(200).collect();
    let c = r.captures(&head)?;
    let hits = mentions(c.get(3)?.as_str());
    (hits.len() == 1).then(|| hits[0])
}

fn mentions(text: &str) -> Vec<usize> {
    persona_res()
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_match(text))
        .map(|(i, _)| i)
        .collect()
}

const WORDS: [(&str, &[&str]); 3] = [
    (
        "adversarial",
        &[
            "adversar", "critic", "gap", "flaw", "secur", "lazy", "lazi", "skeptic", "scepti",
            "harsh", "strict", "trust no", "vulnerab", "scrutin", "prosecut", "penal", "charge",
        ],
    ),
    (
        "forgiving",
        &[
            "reward",
            "effort",
            "intent",
            "creativ",
            "workaround",
            "generous",
            "forgiv",
            "charitab",
            "spirit",
            "strength",
            "benefit of the doubt",
            "lenien",
            "struggle",
        ],
    ),
    (
        "pragmatic",
        &[
            "architect",
            "maintainab",
            "practical",
            "pragmatic",
            "viab",
            "sound",
            "modular",
            "clean",
            "works",
            "technical debt",
            "realistic",
        ],
    ),
];

struct Candidate {
    persona: usize,
    score: u8,
    prompt: PersonaPrompt,
}

/// A persona label as data (`"Prosecutor"`, `"tech_lead"`, `"Tech Lead"`): the rubric's
/// vocabulary, the value the code files an opinion under.
pub fn persona_label(s: &str) -> Option<usize> {
    let norm: String = s
        .chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    match norm.as_str() {
        "prosecutor" => Some(0),
        "defense" | "defence" | "defender" => Some(1),
        "techlead" => Some(2),
        _ => None,
    }
}

/// The string a value stands for: a literal, or a module constant (of this module or
/// imported from another).
fn resolve(modules: &[ModuleInfo], m: usize, e: &Expr) -> Option<String> {
    match e {
        Expr::Str {
            value,
            fstring: false,
        } => Some(value.clone()),
        Expr::Name(n) => {
            let module = &modules[m];
            if let Some(v) = module.constants.get(n) {
                return v.as_str().map(str::to_string);
            }
            let (from, name) = module.imports.get(n)?.rsplit_once('.')?;
            modules
                .iter()
                .find(|x| x.module == from || x.module.ends_with(&format!(".{from}")))
                .and_then(|x| x.constants.get(name))
                .and_then(|v| v.as_str().map(str::to_string))
        }
        _ => None,
    }
}

/// Texts the code binds to a persona label: a dict entry keyed by the label
/// (`{"Prosecutor": PROSECUTOR_PROMPT}`) or a call given the label and the text together
/// (`make_judge("Defense", DEFENSE_PROMPT)`). What the code pairs, not what it is named.
fn bound(modules: &[ModuleInfo]) -> Vec<(usize, String)> {
    fn walk(modules: &[ModuleInfo], m: usize, e: &Expr, out: &mut Vec<(usize, String)>) {
        match e {
            Expr::Dict(pairs) => {
                for (k, v) in pairs {
                    if let Some(p) = k.as_str().and_then(persona_label)
                        && let Some(t) = resolve(modules, m, v)
                    {
                        out.push((p, t));
                    }
                    walk(modules, m, v, out);
                }
            }
            Expr::Call { args, kwargs, .. } => {
                let values: Vec<&Expr> = args.iter().chain(kwargs.iter().map(|(_, v)| v)).collect();
                call(modules, m, &values, out);
                for v in values {
                    walk(modules, m, v, out);
                }
            }
            Expr::List(xs) | Expr::Alt(xs) => xs.iter().for_each(|x| walk(modules, m, x, out)),
            _ => {}
        }
    }
    fn call(modules: &[ModuleInfo], m: usize, values: &[&Expr], out: &mut Vec<(usize, String)>) {
        let labels: Vec<usize> = values
            .iter()
            .filter_map(|v| v.as_str().and_then(persona_label))
            .collect();
        if let [p] = labels.as_slice() {
            for v in values {
                if v.as_str().and_then(persona_label).is_none()
                    && let Some(t) = resolve(modules, m, v)
                {
                    out.push((*p, t));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (m, module) in modules.iter().enumerate() {
        // test code is not the product: its opinions and fixtures are no prompts
        if super::safety::is_test(&module.path) {
            continue;
        }
        for v in module.constants.values() {
            walk(modules, m, v, &mut out);
        }
        for f in &module.functions {
            for v in f.locals.values().flatten() {
                walk(modules, m, v, &mut out);
            }
        }
        for c in &module.calls {
            let values: Vec<&Expr> = c
                .args
                .iter()
                .chain(c.kwargs.iter().map(|(_, v)| v))
                .collect();
            call(modules, m, &values, &mut out);
            for v in values {
                walk(modules, m, v, &mut out);
            }
        }
    }
    out
}

/// `texts`: non-Python text files that may hold prompts (path, content).
pub fn analyse(modules: &[ModuleInfo], texts: &[(String, String)]) -> PersonaFacts {
    let mut cands = string_candidates(modules);
    cands.extend(file_candidates(texts));
    let mut facts = PersonaFacts {
        prompts: best_per_persona(&cands),
        ..PersonaFacts::default()
    };
    facts.similarity = pairwise_similarity(&facts.prompts);
    facts.collusion = facts
        .similarity
        .iter()
        .any(|s| s.share > COLLUSION_THRESHOLD);
    facts.template = shared_template(modules, &facts.prompts);
    facts.language = role_language(&facts.prompts);
    facts
}

/// The string constants of the product code that are a persona's prompt, each with how surely
/// (4: the string a persona's name is bound to; 3: it addresses the role; 2: it names one
/// persona only, early on).
fn string_candidates(modules: &[ModuleInfo]) -> Vec<Candidate> {
    let mut cands: Vec<Candidate> = Vec::new();
    let bound = bound(modules);
    for m in modules.iter().filter(|m| !super::safety::is_test(&m.path)) {
        for s in &m.strings {
            if s.docstring || s.text.len() < MIN_PROMPT {
                continue;
            }
            // The persona is read from the text itself (the role it addresses, or the only
            // persona it names), never from the variable, key or function around it: those
            // are names the student chose.
            let head: String = s.text.chars().take(300).collect();
            let head_hits = mentions(&head);
            let all_hits = mentions(&s.text);
            let tied: Vec<usize> = bound
                .iter()
                .filter(|(_, t)| *t == s.text)
                .map(|(p, _)| *p)
                .collect();
            let (persona, score) =
                if let Some(p) = tied.first().filter(|p| tied.iter().all(|q| q == *p)) {
                    (*p, 4)
                } else if let Some(p) = addressed(&s.text) {
                    (p, 3)
                } else if head_hits.len() == 1 && all_hits.len() == 1 {
                    (head_hits[0], 2)
                } else {
                    continue;
                };
            // counted on the string's value: `\n` in the source is a line end of the prompt
            let value = escapes_decoded(&s.text);
            cands.push(Candidate {
                persona,
                score,
                prompt: PersonaPrompt {
                    persona: PERSONAS[persona].to_string(),
                    path: m.path.clone(),
                    line: s.line,
                    label: if s.label.is_empty() {
                        s.scope.trim().to_string()
                    } else {
                        s.label.clone()
                    },
                    chars: value.chars().count(),
                    sentences: sentences(&value),
                    levels: score_levels(&value),
                    text: s.text.clone(),
                },
            });
        }
    }
    cands
}

/// The prompt files (`prompts/prosecutor.md`) whose text addresses one persona, or names only
/// one persona early on; the persona is read from the text, not the file's name.
fn file_candidates(texts: &[(String, String)]) -> Vec<Candidate> {
    let mut cands = Vec::new();
    for (path, text) in texts {
        let file = path.rsplit('/').next().unwrap_or(path);
        let head: String = text.chars().take(300).collect();
        let hits = match addressed(text) {
            Some(p) => vec![p],
            None if mentions(text).len() == 1 => mentions(&head),
            None => Vec::new(),
        };
        if hits.len() == 1 && text.len() >= MIN_PROMPT {
            cands.push(Candidate {
                persona: hits[0],
                score: 3,
                prompt: PersonaPrompt {
                    persona: PERSONAS[hits[0]].to_string(),
                    path: path.clone(),
                    line: 1,
                    label: file.to_string(),
                    chars: text.chars().count(),
                    sentences: sentences(text),
                    levels: score_levels(text),
                    text: text.clone(),
                },
            });
        }
    }
    cands
}

/// Each persona's prompt: its surest candidate, the longest among equals.
fn best_per_persona(cands: &[Candidate]) -> Vec<PersonaPrompt> {
    (0..3)
        .filter_map(|p| {
            cands.iter().filter(|c| c.persona == p).max_by(|a, b| {
                a.score
                    .cmp(&b.score)
                    .then(a.prompt.chars.cmp(&b.prompt.chars))
            })
        })
        .map(|c| c.prompt.clone())
        .collect()
}

/// The share of text each pair of prompts has in common.
fn pairwise_similarity(prompts: &[PersonaPrompt]) -> Vec<Similarity> {
    let mut out = Vec::new();
    for i in 0..prompts.len() {
        for j in i + 1..prompts.len() {
            out.push(Similarity {
                a: prompts[i].persona.clone(),
                b: prompts[j].persona.clone(),
                share: similarity(&prompts[i].text, &prompts[j].text),
            });
        }
    }
    out
}

/// The shared prompt short persona texts are set into: the longest string with placeholders
/// in their modules, at least twice the longest short text (and 300 chars).
fn shared_template(modules: &[ModuleInfo], prompts: &[PersonaPrompt]) -> Option<(Site, usize)> {
    let short: Vec<&PersonaPrompt> = prompts
        .iter()
        .filter(|p| p.chars < SENTENCE_CHARS)
        .collect();
    let longest = short.iter().map(|p| p.chars).max()?;
    modules
        .iter()
        .filter(|m| short.iter().any(|p| p.path == m.path))
        .flat_map(|m| {
            m.strings
                .iter()
                .filter(|s| {
                    !s.docstring && s.text.contains('{') && s.text.len() >= 2 * longest.max(150)
                })
                .map(move |s| (Site::new(m.path.clone(), s.line), s.text.chars().count()))
        })
        .max_by_key(|(_, n)| *n)
}

/// The words of its role each prompt speaks (adversarial, forgiving, pragmatic).
fn role_language(prompts: &[PersonaPrompt]) -> Vec<Language> {
    prompts
        .iter()
        .map(|p| {
            let idx = PERSONAS.iter().position(|x| *x == p.persona).unwrap_or(0);
            let (expected, words) = WORDS[idx];
            let lower = p.text.to_lowercase();
            Language {
                persona: p.persona.clone(),
                expected: expected.to_string(),
                matched: words
                    .iter()
                    .filter(|w| lower.contains(**w))
                    .map(|w| w.to_string())
                    .collect(),
            }
        })
        .collect()
}

/// The value of a Python string literal's content: the escapes a prompt is written with
/// (`\n`, `\t`, `\r`, quotes, backslash, a backslash-newline continuation) decoded; any other
/// escape kept as written. (A raw string's backslashes are decoded too: rare in a prompt.)
fn escapes_decoded(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\\') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(q @ ('\\' | '\'' | '"')) => out.push(q),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Sentences of a text: stops (`.`, `!`, `?`, or one inside a closing quote) followed by a
/// space or the end, or a line that leads in with a colon (`Use the rubric below:`); a line of a list (`- `, `* `, or a numbered step `1. `, whose marker is no
/// stop) is one sentence when no stop ends it, and its stops when some do (a bullet counted
/// once); at least one for a non-empty text.
pub fn sentences(text: &str) -> usize {
    let stops = |line: &str| -> usize {
        let chars: Vec<char> = line.chars().collect();
        chars
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                let end = |j: usize| chars.get(j).is_none_or(|n| n.is_whitespace());
                matches!(c, '.' | '!' | '?')
                    // `end.` or a stop inside a closing quote: `"Pragmatic Truth."`
                    && (end(i + 1)
                        || chars
                            .get(i + 1)
                            .is_some_and(|q| matches!(q, '"' | '\'' | '\u{201d}'))
                            && end(i + 2))
                    && chars
                        .get(i.wrapping_sub(1))
                        .is_some_and(|p| {
                            // after a word, a bracket or a closing quote (`the 'Spirit of the Law'.`)
                            p.is_alphanumeric() || matches!(p, ')' | '"' | '\'' | '\u{2019}' | '\u{201d}')
                        })
            })
            .count()
    };
    let n: usize = text
        .trim()
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let bullet = t.starts_with("- ") || t.starts_with("* ");
            // a numbered step's marker (`1.`, `2)`) is no stop
            let step = numbered_step(t);
            let s = stops(step.unwrap_or(l)) + usize::from(lead_in(t));
            if bullet || step.is_some() {
                s.max(1)
            } else {
                s
            }
        })
        .sum();
    n.max(usize::from(!text.trim().is_empty()))
}

/// A line that ends by leading into what follows with a colon, in a sentence, not a heading:
/// its last clause (after the line's last stop) has three words or more, neither in capitals
/// nor in title case (`Read it. Use the rubric below:`; not `INSTRUCTIONS:`, `Scoring guide:`,
/// `Judicial Logic for this criterion:` or `YOUR DUTIES for each criterion:`).
fn lead_in(line: &str) -> bool {
    let t = line.trim_end();
    let Some(body) = t.strip_suffix(':') else {
        return false;
    };
    let body = [". ", "! ", "? "]
        .iter()
        .filter_map(|s| body.rfind(s).map(|i| &body[i + 2..]))
        .min_by_key(|rest| rest.len())
        .unwrap_or(body);
    let words: Vec<&str> = body.split_whitespace().collect();
    let capital = |w: &str| w.chars().next().is_some_and(char::is_uppercase);
    words.len() >= 3
        && words[0].chars().any(char::is_lowercase)
        && !capital(words[1])
        && !body.starts_with('#')
}

/// The text of a numbered step after its marker (`1. read`, `12) cite`), if the line is one.
fn numbered_step(line: &str) -> Option<&str> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = line[digits..].strip_prefix(['.', ')'])?;
    rest.starts_with([' ', '\t']).then_some(rest)
}

/// The score levels (1 to 5) a prompt's scoring guide speaks of: a line that opens with a level
/// (`- Score 1: ...`, `3 = ...`, `**5** - ...`, `1-2: ...`; not a numbered step `1. read`) or a
/// level given a meaning (`a score of 5 means`). A guide of three or more levels is a scoring guide.
pub fn score_levels(text: &str) -> usize {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let line = LINE.get_or_init(|| {
        Regex::new(
            r"(?mi)^[ \t]*(?:[-*\x{2022}][ \t]*)?(?:\*\*)?(?:score[ \t]*(?:of[ \t]*)?)?([1-5])(?:[ \t]*[-\x{2013}][ \t]*([1-5]))?(?:[ \t]*/[ \t]*5)?(?:\*\*)?[ \t]*(?:[:=\x{2013}\x{2014}]|-[ \t])",
        )
        .expect("regex")
    });
    static MEANS: OnceLock<Regex> = OnceLock::new();
    let means = MEANS.get_or_init(|| {
        Regex::new(r"(?i)\bscore[ \t]+(?:of[ \t]+)?([1-5])\b(?:[ \t]*/[ \t]*5)?[ \t]*(?:means|is|for|if|when|:|=)")
            .expect("regex")
    });
    let mut seen = [false; 6];
    for c in line.captures_iter(text).chain(means.captures_iter(text)) {
        let from: usize = c[1].parse().unwrap_or(0);
        let to: usize = c
            .get(2)
            .and_then(|m| m.as_str().parse().ok())
            .unwrap_or(from);
        let (low, high) = (from.min(to).max(1), from.max(to).min(5));
        if low <= high {
            seen[low..=high].iter_mut().for_each(|s| *s = true);
        }
    }
    seen[1..].iter().filter(|s| **s).count()
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(MAX_WORDS)
        .map(str::to_lowercase)
        .collect()
}

/// Share of common text between two prompts, in `0..=1` (see the module docs).
pub fn similarity(a: &str, b: &str) -> f64 {
    use std::collections::HashSet;
    let a = words(a);
    let b = words(b);
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let n = PASSAGE_WORDS.min(a.len()).min(b.len());
    if n == 0 {
        return 0.0;
    }
    let grams =
        |w: &[String]| -> HashSet<Vec<String>> { w.windows(n).map(<[String]>::to_vec).collect() };
    // Words of `x` covered by a passage that also occurs in the other prompt.
    let covered = |x: &[String], other: &HashSet<Vec<String>>| {
        let mut hit = vec![false; x.len()];
        for (i, g) in x.windows(n).enumerate() {
            if other.contains(g) {
                hit[i..i + n].iter_mut().for_each(|h| *h = true);
            }
        }
        hit.iter().filter(|h| **h).count()
    };
    let (ga, gb) = (grams(&a), grams(&b));
    (covered(&a, &gb) + covered(&b, &ga)) as f64 / (a.len() + b.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::python::syntax::parse_module;

    #[test]
    fn a_scoring_guide_is_the_score_levels_its_lines_give_a_meaning() {
        let guide = "Scoring Guidelines:\n- Score 1: Critical failures\n- Score 2: Major gaps\n- Score 3: Basic\n- Score 4: Solid\n- Score 5: Flawless\n";
        assert_eq!(score_levels(guide), 5);
        assert_eq!(
            score_levels("Scoring:\n1 = Hazard.\n3 = Works.\n5 = Master Thinker.\n"),
            3
        );
        assert_eq!(score_levels("**1-2**: broken\n**5** - flawless\n"), 3);
        assert_eq!(
            score_levels(
                "Give a score of 5 when every check passes; a score of 1 means nothing works."
            ),
            2
        );
        // numbers that are not score levels: a list of steps, a count
        assert_eq!(
            score_levels(
                "You are the Prosecutor. Look for 3 things in 10 files.\nSteps:\n1. read\n2. charge\n3. cite\n"
            ),
            0
        );
        assert_eq!(
            score_levels("You are the Prosecutor. Trust no one; look for 3 flaws in 10 files."),
            0
        );
    }

    #[test]
    fn a_bullet_that_ends_with_a_stop_is_one_sentence_not_two() {
        // 1 + 1 + 2 (bullets ended by their stops) + 1 (a bullet without a stop) + 1
        let text = "You are the judge.\nYour motto: \"Pragmatic Truth.\"\nRules:\n- Read the evidence. Cite it.\n- Never guess\nRemember the rules.";
        assert_eq!(sentences(text), 6);
        assert_eq!(sentences("- one.\n- two.\n- three."), 3);
        assert_eq!(sentences("- one\n- two"), 2);
        assert_eq!(sentences("no stop"), 1);
        // numbered steps: the marker is no stop
        assert_eq!(
            sentences(
                "Do this:\n1. Read the code.\n2. Cite it, then score 3.\n3) Never guess\n10. Done. Stop."
            ),
            5
        );
        assert_eq!(sentences("1.5 is a number. Next."), 2);
        // a lead-in that ends with a colon is a sentence; a heading is not
        assert_eq!(
            sentences(
                "Use the rubric below:\nINSTRUCTIONS:\nYOUR DUTIES for each criterion:\nJudicial Logic for this criterion:\n1. Read it."
            ),
            2
        );
        assert_eq!(
            sentences("Be fair. Cite it. Use the rubric below:\n{rubric}"),
            3
        );
        assert_eq!(
            sentences("Reward Effort and Intent. Look for the 'Spirit of the Law'."),
            2
        );
        assert_eq!(sentences("  "), 0);
    }

    #[test]
    fn similarity_is_the_share_of_text_in_common_passages() {
        assert!((similarity("a b c d", "a b c d") - 1.0).abs() < 1e-9);
        assert!((similarity("a b c d e f", "a b c d e z") - 10.0 / 12.0).abs() < 1e-9);
        assert_eq!(similarity("a b c d", "a b x y"), 0.0);
        assert_eq!(similarity("a b", "c d"), 0.0);
        // A shared ten-word passage in two nineteen-word prompts: ten words of nineteen.
        let shared = "read the evidence and cite every id you rely on";
        let a = format!(
            "{shared} prosecutor hunts gaps flaws laziness shortcuts missing tests charges"
        );
        let b = format!(
            "defense rewards effort intent creative workarounds spirit attempts learning {shared}"
        );
        assert!(
            (similarity(&a, &b) - 10.0 / 19.0).abs() < 1e-9,
            "{}",
            similarity(&a, &b)
        );
        // The same words in another order share no passage: distinct prose, not collusion.
        let c = "you are the judge and the score of the evidence is yours to give to the code";
        let d = "give the code the score you judge the evidence is to yours and of the are";
        assert!(similarity(c, d) < 0.3, "{}", similarity(c, d));
    }

    #[test]
    fn prompts_found_by_variable_and_dict_key_and_compared() {
        let src = r#"
PROSECUTOR_PROMPT = """You are the Prosecutor. Trust no one. Look for gaps, security flaws and laziness in the evidence."""
PERSONAS = {
    "Defense": "You are the Defense attorney. Reward effort and intent, and creative workarounds.",
    "TechLead": "You are the Tech Lead. Judge architectural soundness, maintainability and practical viability.",
}
RUBRIC = "The Prosecutor, the Defense and the TechLead each score every criterion independently of each other."
"#;
        let ms = vec![parse_module("src/nodes/judges.py", src.into()).unwrap()];
        let f = analyse(&ms, &[]);
        let names: Vec<&str> = f.prompts.iter().map(|p| p.persona.as_str()).collect();
        assert_eq!(names, vec!["Prosecutor", "Defense", "TechLead"]);
        assert!(!f.collusion, "{:?}", f.similarity);
        assert!(
            f.language.iter().all(|l| !l.matched.is_empty()),
            "{:?}",
            f.language
        );
    }

    #[test]
    fn a_prompt_written_with_escapes_is_counted_by_its_value() {
        // the same prompt, once in a triple-quoted string and once in one line with `\n` escapes
        let lines = "You are the Prosecutor. Trust no one.\nSteps:\n- Read the evidence.\n- Cite it\nScoring:\n1 = Hazard.\n3 = Works.\n5 = Flawless.";
        let escaped = lines.replace('\n', "\\n");
        let src = format!("PROMPT = \"{escaped}\"\nOTHER = \"\"\"{lines}\"\"\"\n");
        let ms = vec![parse_module("src/judges.py", src).unwrap()];
        let f = analyse(&ms, &[]);
        assert_eq!(f.prompts.len(), 1);
        let p = &f.prompts[0];
        // 2 + 0 + 1 + 1 (a bullet without a stop) + 0 + 1 + 1 + 1; as in the triple-quoted one
        assert_eq!((p.sentences, p.levels), (7, 3), "{p:?}");
        assert_eq!(p.chars, lines.chars().count());
        assert_eq!(escapes_decoded(r"a\'b\\c\qd"), r"a'b\c\qd");
    }

    #[test]
    fn a_test_files_opinions_are_no_prompts() {
        let src = "def get_system_prompt():\n    return \"\"\"You are the PROSECUTOR in a code quality tribunal. Trust no one. Look for security flaws, gaps and laziness in every piece of evidence.\"\"\"\n";
        let test = "def test_merge():\n    ops = [Opinion(judge=\"Prosecutor\", argument=\"Architecture is functional but lacks parallel execution patterns entirely.\")]\n";
        let ms = vec![
            parse_module("src/agents/judges/prosecutor.py", src.into()).unwrap(),
            parse_module("tests/test_formatters.py", test.into()).unwrap(),
        ];
        let f = analyse(&ms, &[]);
        let at: Vec<(&str, &str)> = f
            .prompts
            .iter()
            .map(|p| (p.persona.as_str(), p.path.as_str()))
            .collect();
        assert_eq!(at, vec![("Prosecutor", "src/agents/judges/prosecutor.py")]);
    }

    #[test]
    fn near_identical_prompts_are_collusion() {
        let base = "Evaluate the evidence for the criterion and give a score from 1 to 5 with an argument citing evidence ids carefully.";
        let src = format!(
            "PROSECUTOR = 'You are the prosecutor. {base}'\nDEFENSE = 'You are the defense. {base}'\nTECH_LEAD = 'You are the tech lead. {base}'\n"
        );
        let ms = vec![parse_module("src/nodes/judges.py", src).unwrap()];
        let f = analyse(&ms, &[]);
        assert_eq!(f.prompts.len(), 3);
        assert!(f.collusion);
    }
}
