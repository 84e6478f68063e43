//! Feature claims: sentences in which the report says the project *does* something the code can
//! confirm or contradict ("the three judges run in parallel", "state uses `operator.add`
//! reducers", "the clone happens in a `tempfile` sandbox"). The rubric's report-accuracy
//! dimension asks for exactly this check ("Claims parallel execution but code shows linear
//! flow").
//!
//! [`extract`] finds the claims in the report's sentences (pure text work, at ingestion);
//! [`check`] compares each with the RepoInvestigator's facts at the aggregation barrier.
//!
//! A sentence is a claim when it names the feature by one of its cue phrases, and is not
//! negated ("we did not parallelise"), future work ("we plan to add reducers") or a question.
//! Only the first claiming sentence per feature is kept (with the count of the others): one
//! verdict per feature, quoted with its page.
//!
//! Two claims are checked against the detectives' own measurements, not just their presence:
//! - a **prompt overlap** figure ("our persona prompts share 12% of their text") is contradicted
//!   when the RepoInvestigator measured at least [`OVERLAP_TOLERANCE`] more between two
//!   persona prompts;
//! - **reducers** named for fields ("evidences are merged with `operator.add`") are
//!   contradicted when the state declares another reducer for that field (a report that swaps
//!   what `state.py` declares).

use super::ingest::Sentence;
use crate::repo::python::PythonFacts;
use crate::repo::python::graph::{DeadRoute, GraphFacts, Router};
use serde::{Deserialize, Serialize};

/// A feature the report can claim and the code facts can settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// Branches of the graph run at once (fan-out).
    ParallelExecution,
    /// Parallel branches are joined again (fan-in / aggregation node).
    FanIn,
    /// LLM output bound to a schema (`with_structured_output`, `bind_tools`).
    StructuredOutput,
    /// State fields with reducers (`operator.add`, `operator.ior`, `add_messages`).
    StateReducers,
    /// Repositories cloned inside a temporary directory.
    SandboxedClone,
    /// The final verdict comes from deterministic rules, not from an LLM.
    DeterministicSynthesis,
    /// A figure for the text the persona prompts share.
    PromptOverlap,
    /// An LLM call is made again when its reply is invalid (or the request fails).
    StructuredRetry,
    /// The Chief Justice lets detective evidence overrule a judge (fact supremacy).
    FactSupremacy,
    /// The graph routes with conditional edges (`add_conditional_edges`, `Command`).
    ConditionalEdges,
    /// Commands run through a shell (`os.system`, `os.popen`, `shell=True`): claimed only by a
    /// sentence that says the project uses or calls one ("git operations use raw os.system()"),
    /// never by one that says it looks for them.
    RawShell,
    /// Classes inherit from a named base class ("all judge nodes inherit from a BaseJudge").
    Inheritance,
    /// The Chief Justice caps a score on a security matter ("Rule of Security", "security
    /// override").
    SecurityOverride,
    /// The final score is computed by an LLM, not by code ("the node uses a simple LLM prompt
    /// to average scores rather than Pythonic rules"): claimed only by a sentence that has an
    /// LLM compute the scores or the verdict (see `llm_synthesis`).
    LlmSynthesis,
}

impl Feature {
    pub const ALL: [Feature; 14] = [
        Feature::ParallelExecution,
        Feature::FanIn,
        Feature::StructuredOutput,
        Feature::StateReducers,
        Feature::SandboxedClone,
        Feature::DeterministicSynthesis,
        Feature::PromptOverlap,
        Feature::StructuredRetry,
        Feature::FactSupremacy,
        Feature::ConditionalEdges,
        Feature::RawShell,
        Feature::Inheritance,
        Feature::SecurityOverride,
        Feature::LlmSynthesis,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Feature::ParallelExecution => "parallel_execution",
            Feature::FanIn => "fan_in",
            Feature::StructuredOutput => "structured_output",
            Feature::StateReducers => "state_reducers",
            Feature::SandboxedClone => "sandboxed_clone",
            Feature::DeterministicSynthesis => "deterministic_synthesis",
            Feature::PromptOverlap => "prompt_overlap",
            Feature::StructuredRetry => "structured_retry",
            Feature::FactSupremacy => "fact_supremacy",
            Feature::ConditionalEdges => "conditional_edges",
            Feature::RawShell => "raw_shell",
            Feature::Inheritance => "inheritance",
            Feature::SecurityOverride => "security_override",
            Feature::LlmSynthesis => "llm_synthesis",
        }
    }

    /// What the report claims, in words.
    pub fn label(self) -> &'static str {
        match self {
            Feature::ParallelExecution => "parallel execution (fan-out)",
            Feature::FanIn => "a fan-in / aggregation point",
            Feature::StructuredOutput => "structured LLM output",
            Feature::StateReducers => "state reducers",
            Feature::SandboxedClone => "cloning in a temporary sandbox",
            Feature::DeterministicSynthesis => "deterministic synthesis rules",
            Feature::PromptOverlap => "a figure for the text the persona prompts share",
            Feature::StructuredRetry => "LLM calls retried when they fail",
            Feature::FactSupremacy => {
                "a fact supremacy rule (detective evidence overrules a judge)"
            }
            Feature::ConditionalEdges => "conditional edges (routing)",
            Feature::RawShell => "commands run through a shell (os.system, os.popen, shell=True)",
            Feature::Inheritance => "classes inheriting from a base class it names",
            Feature::SecurityOverride => {
                "a security override rule (a security flaw caps the score)"
            }
            Feature::LlmSynthesis => "a final score computed by an LLM rather than by code",
        }
    }

    /// Phrases (lower case) that name the feature in a sentence.
    fn cues(self) -> &'static [&'static str] {
        match self {
            Feature::ParallelExecution => &[
                "in parallel",
                "run parallel",
                "parallel execution",
                "parallel branches",
                "parallel judges",
                "parallel detectives",
                "parallel nodes",
                "parallelism",
                "parallelize",
                "parallelise",
                "concurrently",
                "simultaneously",
                "fan-out",
                "fan out",
                "fans out",
            ],
            Feature::FanIn => &[
                "fan-in",
                "fan in",
                "fans in",
                "aggregation node",
                "aggregator node",
                "synchronization node",
                "synchronisation node",
                "barrier",
            ],
            Feature::StructuredOutput => &[
                "with_structured_output",
                "structured output",
                "bind_tools",
                "structured outputs",
            ],
            Feature::StateReducers => &["reducer", "operator.add", "operator.ior", "add_messages"],
            Feature::SandboxedClone => &[
                "tempfile",
                "temporarydirectory",
                "temporary directory",
                "temp directory",
                "sandboxed clone",
                "sandboxed cloning",
                "cloned into a sandbox",
                "clone into a sandbox",
            ],
            Feature::DeterministicSynthesis => &[
                "deterministic rule",
                "deterministic logic",
                "deterministic synthesis",
                "deterministic python",
                "hardcoded rule",
                "hard-coded rule",
                "hardcoded deterministic",
                "hard-coded deterministic",
            ],
            // Decided by `overlap_figure`, not by cue phrases.
            Feature::PromptOverlap => &[],
            // Only in a sentence about the LLM calls (see `RETRY_SUBJECTS`).
            Feature::StructuredRetry => &[
                "retry",
                "retries",
                "retried",
                "retrying",
                "re-try",
                "re-prompt",
                "reprompt",
            ],
            Feature::FactSupremacy => &["fact supremacy", "fact-supremacy", "rule of evidence"],
            Feature::ConditionalEdges => &[
                "conditional edge",
                "add_conditional_edges",
                "conditional routing",
                "conditionally routed",
                "conditional route",
            ],
            // A claim only after a verb of use (see `uses_shell`); denied by these.
            Feature::RawShell => &["os.system", "os.popen", "shell=true", "shell = true"],
            // Decided by `inherited_bases`, on the sentence as written.
            Feature::Inheritance => &[],
            Feature::SecurityOverride => &[
                "rule of security",
                "security override",
                "security-override",
                "security_override",
                "security cap",
            ],
            // Decided by `llm_synthesis`.
            Feature::LlmSynthesis => &[],
        }
    }

    /// Whether the report's denial of the feature ("No evidence of tempfile.TemporaryDirectory()",
    /// "no raw os.system") is checked: a feature named by a code symbol or a rule's name, whose
    /// presence the code shows at one line. A denial of a broader feature ("the judges do not
    /// run in parallel", "no conditional edges for API failures") is often about one part of
    /// it and is never checked.
    fn deniable(self) -> bool {
        matches!(
            self,
            Feature::SandboxedClone
                | Feature::FactSupremacy
                | Feature::SecurityOverride
                | Feature::DeterministicSynthesis
                | Feature::RawShell
        )
    }
}

/// Settled at the aggregation barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    #[default]
    Unchecked,
    /// The code facts show the feature.
    Supported,
    /// The code facts show the opposite, or nothing of the kind.
    Contradicted,
}

impl ClaimStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Unchecked => "unchecked",
            ClaimStatus::Supported => "supported",
            ClaimStatus::Contradicted => "contradicted",
        }
    }
}

/// A claim's status, the reason it is given, and the place in the code it rests on (`path:line`).
type Verdict = (ClaimStatus, String, Option<String>);

/// A feature the report claims (or denies), where, and (after [`check`]) what the code says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureClaim {
    pub feature: Feature,
    /// The report says the project does *not* have the feature ("No evidence of
    /// tempfile.TemporaryDirectory() for isolation"): contradicted when the code shows it,
    /// otherwise left unchecked (see [`Feature::deniable`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub denied: bool,
    pub page: u32,
    /// The first claiming sentence, truncated.
    pub quote: String,
    /// How many sentences claim it.
    pub mentions: usize,
    #[serde(default)]
    pub status: ClaimStatus,
    /// What the code facts show, in one sentence.
    #[serde(default)]
    pub code: String,
    /// `path:line` of the deciding code fact, when there is one.
    #[serde(default)]
    pub code_location: Option<String>,
    /// The figure claimed, in percent (prompt overlap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
    /// Every claiming sentence (page, text), for checks that read each one (reducers).
    #[serde(skip)]
    pub sentences: Vec<(u32, String)>,
}

/// Percentage points by which the measured prompt overlap may exceed a claimed figure (the
/// report may have measured another way) before the claim is contradicted.
pub const OVERLAP_TOLERANCE: f64 = 5.0;

/// Claiming sentences kept per feature for sentence-level checks.
const MAX_SENTENCES: usize = 30;

/// The overlap figure a sentence claims for the persona prompts: the smallest percentage in a
/// sentence about prompts or personas and their shared text (the others are thresholds).
fn overlap_figure(lower: &str) -> Option<f64> {
    use std::sync::LazyLock;
    static PCT: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"(\d{1,3}(?:\.\d+)?)\s*(?:%|percent\b)").expect("static regex")
    });
    let about_prompts = lower.contains("prompt") || lower.contains("persona");
    let about_overlap = [
        "overlap",
        "similar",
        "share",
        "in common",
        "collusion",
        "identical",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // A rule or a threshold ("if prompts share more than 50%"), or someone else's prompts
    // ("the peer's prompts shared 90%"), is no figure for this repository's prompts.
    let padded = format!(" {lower}");
    let not_ours = [
        " if ",
        " when",
        "whenever",
        "more than",
        "above",
        "exceed",
        "threshold",
        "flag",
        "should",
        "must",
        "would",
        "peer",
    ]
    .iter()
    .any(|w| padded.contains(w));
    if !about_prompts || !about_overlap || not_ours {
        return None;
    }
    PCT.captures_iter(lower)
        .filter_map(|c| c[1].parse::<f64>().ok())
        .filter(|v| *v <= 100.0)
        .min_by(f64::total_cmp)
}

/// Words that, shortly before a cue, turn the sentence into a denial.
const NEGATIONS: &[&str] = &[
    " not ",
    "n't ",
    " no ",
    "never ",
    "without ",
    "instead of ",
    "lack",
    "rather than ",
    "neither ",
    " nor ",
    "missing",
    "gaps ",
    "gap:",
];

/// Words that make the sentence a plan, not a claim about what was built.
const FUTURE: &[&str] = &[
    "future work",
    "we plan",
    "we will",
    "will add",
    "will be added",
    "will implement",
    "could add",
    "could be added",
    "would add",
    "planned",
    "next step",
    "not yet",
    "todo",
    "roadmap",
    "intend to",
    "in a future",
    "should be added",
    "would be",
    "could be",
    "recommend",
    "suggest",
    "propose",
];

/// Verbs that, first in a sentence (after bullets, numbers and labels like `High:`), make it
/// an instruction ("Add conditional edges for node failure"), not a claim about the code.
const IMPERATIVES: &[&str] = &[
    "add",
    "implement",
    "create",
    "update",
    "use",
    "introduce",
    "harden",
    "define",
    "wire",
    "replace",
    "consider",
    "ensure",
    "make",
    "move",
    "refactor",
    "fix",
    "adopt",
    "switch",
    "extend",
    "enable",
    "write",
    "integrate",
    "improve",
    "migrate",
];

/// Whether a sentence (lower case) is an instruction: its first word, past list markers and
/// short labels (`•`, `(2)`, `3.`, `High:`, `P1`), is an imperative verb.
fn imperative(s: &str) -> bool {
    let labels = ["high", "medium", "low", "step", "priority"];
    s.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .find(|w| {
            w.chars().any(char::is_alphabetic)
                && !labels.contains(w)
                && !(w.len() <= 3
                    && w.starts_with('p')
                    && w[1..].chars().all(|c| c.is_ascii_digit()))
        })
        .is_some_and(|w| IMPERATIVES.contains(&w))
}

const QUOTE_MAX: usize = 300;

/// Fewest words (tokens with a letter) of a claiming sentence.
const MIN_WORDS: usize = 3;

/// Whether a sentence can claim anything: not a question, not a plan, not an instruction. `s`
/// is lower case.
pub(super) fn affirmative(s: &str) -> bool {
    !s.trim_end().ends_with('?') && !FUTURE.iter().any(|f| s.contains(f)) && !imperative(s)
}

/// The clause a cue at byte `at` sits in, up to the cue: from the last list marker or clause
/// mark before it (`:`, `;`, `•`, ` - `, `|`, `(2)`, `2)`), or the sentence start.
fn clause_before(padded: &str, at: usize) -> &str {
    let head = &padded[..at];
    let mut start = 0;
    for mark in [":", ";", "•", " - ", "|", ") "] {
        if let Some(i) = head.rfind(mark) {
            // `f(x) calls` is no list marker: a `)` counts only after a number
            if mark == ") "
                && !head[..i].chars().next_back().is_some_and(|c| {
                    c.is_ascii_digit()
                        || c.is_ascii_lowercase() && i >= 2 && head.as_bytes()[i - 2] == b'('
                })
            {
                continue;
            }
            start = start.max(i + mark.len());
        }
    }
    &head[start..]
}

/// The byte ranges (in `padded`, the sentence lower-cased after one space) of the CamelCase
/// names of `text` (`RetryPolicyStore`, `JudgeRouter`): a cue inside one is part of a name the
/// student chose, not a word of the sentence. Empty when lower-casing moved the bytes.
fn camel_names(text: &str, padded: &str) -> Vec<(usize, usize)> {
    if padded.len() != text.len() + 1 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = None;
    let bytes = text.as_bytes();
    for i in 0..=bytes.len() {
        let word = i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_');
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(from)) => {
                let t = &text[from..i];
                let camel = t
                    .chars()
                    .zip(t.chars().skip(1))
                    .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
                if camel {
                    out.push((from + 1, i + 1));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether `padded` (an affirmative sentence, lower case, after one space) claims `feature`;
/// `names`: the CamelCase names in it (see [`camel_names`]), in which no cue counts.
fn claims(padded: &str, feature: Feature, names: &[(usize, usize)]) -> bool {
    feature.cues().iter().any(|cue| {
        padded.match_indices(cue).any(|(at, _)| {
            if names.iter().any(|(a, b)| *a <= at && at < *b) {
                return false;
            }
            // The 40 bytes before the cue (at a char boundary) must not deny it.
            let mut from = at.saturating_sub(40);
            while !padded.is_char_boundary(from) {
                from -= 1;
            }
            let before = &padded[from..at];
            !NEGATIONS.iter().any(|n| before.contains(n)) && !imperative(clause_before(padded, at))
        })
    })
}

/// Words that make a retry sentence one about the LLM calls (lower case).
const RETRY_SUBJECTS: &[&str] = &[
    "llm",
    "judge",
    "structured",
    "opinion",
    "pars",
    "malformed",
    "invalid",
    "validat",
    "schema",
    "model call",
    "model's",
];

/// Words that make a retry claim one about failed requests, which the client's own
/// `max_retries=` answers (lower case).
const REQUEST_RETRY: &[&str] = &[
    "max_retries",
    "request",
    "network",
    "rate limit",
    "rate-limit",
    "timeout",
    "transient",
    "connection",
    "api error",
];

/// Every feature the report claims, with its first claiming sentence. `criteria`: the names of
/// the rubric's criteria (a sentence that names one claims nothing by those words).
pub fn extract(sentences: &[Sentence], criteria: &[String]) -> Vec<FeatureClaim> {
    let criteria: Vec<String> = criteria.iter().filter_map(|n| criterion_name(n)).collect();
    let mut out: Vec<FeatureClaim> = Vec::new();
    // The section a sentence is in is about another team's repository ("3.3 Peer Audit
    // Findings (What Our Agent Discovered in Their Repo)"): its sentences claim nothing about
    // this one.
    let mut other_repo = false;
    let mut in_heading = false;
    // the heading of the section a sentence is in, lower case
    let mut section = String::new();
    // the sentences just before it on its page, lower case (a finding's "Location:" or
    // "Goal:" lines, its section's title): what it is about
    let mut recent: std::collections::VecDeque<(u32, String)> = std::collections::VecDeque::new();
    // the block whose last sentence left a quotation open (it goes on in the next sentence)
    let mut open_quote: Option<u32> = None;
    for s in sentences {
        let lower = s.text.to_lowercase();
        // what the report says in its own words: quoted sentences (a peer's finding, a prompt,
        // an example message) are someone else's words, and claim nothing about this code
        let (own, still_open) = unquoted(&s.text, open_quote == Some(s.block));
        open_quote = still_open.then_some(s.block);
        let own_lower = own.to_lowercase();
        let context = {
            let mut c = section.clone();
            for (_, t) in recent.iter().filter(|(p, _)| *p == s.page) {
                c.push(' ');
                c.push_str(t);
            }
            c
        };
        if recent.len() == CONTEXT_SENTENCES {
            recent.pop_front();
        }
        recent.push_back((s.page, crate::repo::python::syntax::truncate(&lower, 200)));
        // A line of code read as a heading ("Annotated[Dict[str, List[Evidence]], ...]") opens
        // no section.
        if s.heading && !s.text.contains(['[', ']', '{', '}', '=', '_']) {
            let about_other = about_another_repository(&lower);
            other_repo = if in_heading {
                other_repo || about_other
            } else {
                about_other
            };
            in_heading = true;
            section = lower.clone();
            // Headings name a topic; they claim nothing.
            continue;
        }
        in_heading = false;
        if s.heading {
            continue;
        }
        // Short fragments ("• Fan-In / Fan-Out" in a table of contents) name a topic too.
        let words = s
            .text
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count();
        if words < MIN_WORDS
            || other_repo
            || about_another_repository(&lower)
            || !affirmative(&lower)
        {
            continue;
        }
        let padded = without_criterion_names(&format!(" {own_lower}"), &criteria);
        let names = camel_names(&own, &padded);
        let figure = overlap_figure(&own_lower);
        for feature in Feature::ALL {
            let claimed = match feature {
                Feature::PromptOverlap => figure.is_some(),
                Feature::StructuredRetry => {
                    claims(&padded, feature, &names)
                        && RETRY_SUBJECTS.iter().any(|w| lower.contains(w))
                }
                Feature::RawShell => uses_shell(&padded),
                Feature::LlmSynthesis => llm_synthesis(&padded, &context),
                Feature::Inheritance => !inherited_bases(&own).is_empty(),
                _ => claims(&padded, feature, &names),
            };
            // a denial that lists the feature after other terms ('No evidence of "Variance",
            // "Rule of Security" or "Fact Supremacy"') denies it, however far the denial's
            // words are from it
            let denied = feature.deniable()
                && !LOOKS_FOR.iter().any(|w| lower.contains(w))
                && denies(&padded, feature);
            let claimed = claimed && !denied;
            if !claimed && !denied {
                continue;
            }
            note_claim(&mut out, feature, denied, s, figure);
        }
    }
    out.sort_by_key(|c| (c.feature, c.denied));
    out
}

/// A sentence that claims (or denies) `feature`: one more mention of the claim already found
/// (its sentence kept up to `MAX_SENTENCES`, the lowest overlap figure quoted), or a new claim.
fn note_claim(
    out: &mut Vec<FeatureClaim>,
    feature: Feature,
    denied: bool,
    s: &Sentence,
    figure: Option<f64>,
) {
    match out
        .iter_mut()
        .find(|c| c.feature == feature && c.denied == denied)
    {
        Some(c) => {
            c.mentions += 1;
            if c.sentences.len() < MAX_SENTENCES {
                c.sentences.push((s.page, s.text.clone()));
            }
            // The lowest figure claimed is the one to check.
            if let (Some(old), Some(new)) = (c.figure, figure)
                && feature == Feature::PromptOverlap
                && new < old
            {
                c.figure = Some(new);
                c.page = s.page;
                c.quote = crate::repo::python::syntax::truncate(s.text.trim(), QUOTE_MAX);
            }
        }
        None => out.push(FeatureClaim {
            feature,
            denied,
            page: s.page,
            quote: crate::repo::python::syntax::truncate(s.text.trim(), QUOTE_MAX),
            mentions: 1,
            status: ClaimStatus::Unchecked,
            code: String::new(),
            code_location: None,
            figure: if feature == Feature::PromptOverlap {
                figure
            } else {
                None
            },
            sentences: vec![(s.page, s.text.clone())],
        }),
    }
}

/// Fewest words of a closed quotation that is someone else's sentence, not a term in quotes
/// ("parallel execution").
const QUOTED_WORDS: usize = 4;

/// `text` with its quotations blanked out (as many spaces as bytes: positions hold): a
/// quotation of [`QUOTED_WORDS`] words or more, one still open at the end of the sentence, or
/// one closed in it that began before it (a quoted passage runs over several sentences); `open`
/// says the sentence starts inside a quotation. A straight quote opens after a space or an
/// opening bracket and closes before a space or punctuation. Also returns whether a quotation
/// is still open at its end.
fn unquoted(text: &str, open: bool) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    // the quotation being read: where it starts in `out`, and whether it began before `text`
    let mut inside: Option<(usize, bool)> = open.then_some((0, true));
    let blank = |out: &mut String, from: usize| {
        let n = out.len() - from;
        out.truncate(from);
        out.extend(std::iter::repeat_n(' ', n));
    };
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let opening = match c {
            '\u{201c}' => Some(true),
            '\u{201d}' => Some(false),
            '"' if prev.is_none_or(|p| p.is_whitespace() || "([{:-\u{2014}".contains(p)) => {
                Some(true)
            }
            '"' if next.is_none_or(|n| n.is_whitespace() || ".,;:!?)]}-\u{2014}".contains(n)) => {
                Some(false)
            }
            '"' => Some(inside.is_none()),
            _ => None,
        };
        out.push(c);
        match (opening, inside) {
            (Some(true), None) => inside = Some((out.len() - c.len_utf8(), false)),
            (Some(false), Some((from, before))) => {
                let words = out[from..]
                    .split_whitespace()
                    .filter(|w| w.chars().any(char::is_alphabetic))
                    .count();
                if before || words >= QUOTED_WORDS {
                    blank(&mut out, from);
                }
                inside = None;
            }
            // a quotation closed that began in an earlier sentence
            (Some(false), None) => blank(&mut out, 0),
            _ => {}
        }
    }
    let still_open = inside.is_some();
    if let Some((from, _)) = inside {
        blank(&mut out, from);
    }
    (out, still_open)
}

/// The base classes a sentence says classes inherit from, as the code would name them
/// ("inherit from a BaseJudge", "subclasses of judges.BaseJudge" → `BaseJudge`): a name with an
/// inner capital, not denied shortly before ("do not inherit from ...").
fn inherited_bases(text: &str) -> Vec<String> {
    use std::sync::LazyLock;
    static BASE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?i:\binherit(?:s|ed|ing)?\s+from|\bsubclass(?:es|ed)?(?:\s+of)?|\bderive[sd]?\s+from)\s+(?i:(?:a|an|the|one|common|shared|same|single|abstract|base)\s+)*[`'\x22]?([A-Za-z_][\w.]*)",
        )
        .expect("static regex")
    });
    let lower = text.to_lowercase();
    let padded = format!(" {lower}");
    let mut out: Vec<String> = Vec::new();
    for c in BASE.captures_iter(text) {
        let (Some(all), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let mut from = (all.start() + 1).saturating_sub(40);
        while !padded.is_char_boundary(from) {
            from -= 1;
        }
        let before = &padded[from..all.start() + 1];
        if NEGATIONS.iter().any(|n| before.contains(n)) {
            continue;
        }
        let name = name.as_str().trim_end_matches('.');
        let last = name.rsplit('.').next().unwrap_or(name);
        let inner_capital = last
            .chars()
            .zip(last.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        if inner_capital && !out.iter().any(|o| o == last) {
            out.push(last.to_string());
        }
    }
    out
}

/// An inheritance claim against the classes the code defines: contradicted by the first
/// sentence naming a base that nothing in the project defines or imports (every file read),
/// supported when a class lists the base, unchecked otherwise.
fn inheritance_verdict(claim: &mut FeatureClaim, code: &PythonFacts) -> Verdict {
    let complete = code.files_parsed > 0 && code.notes.is_empty();
    let mut supported = None;
    for (page, sentence) in &claim.sentences {
        for base in inherited_bases(sentence) {
            let sub = code.symbols.classes.iter().find(|c| {
                c.bases
                    .iter()
                    .any(|b| b.rsplit('.').next().unwrap_or(b) == base)
            });
            if let Some(c) = sub {
                supported.get_or_insert((
                    ClaimStatus::Supported,
                    format!(
                        "class {} ({}:{}) inherits from {base}",
                        c.name, c.path, c.line
                    ),
                    Some(format!("{}:{}", c.path, c.line)),
                ));
            } else if complete && code.symbols.binds(&base) == Some(false) {
                claim.page = *page;
                claim.quote = crate::repo::python::syntax::truncate(sentence.trim(), QUOTE_MAX);
                return (
                    ClaimStatus::Contradicted,
                    format!(
                        "no class, function, assignment or import in the {} of the project is named {base}",
                        crate::words::count(code.files_parsed, "Python file", "Python files")
                    ),
                    None,
                );
            }
        }
    }
    supported.unwrap_or((
        ClaimStatus::Unchecked,
        "the base class named is bound in the code, but no class lists it as a base".into(),
        None,
    ))
}

/// A rubric criterion's name as a sentence of the report names it: lower case, without a
/// trailing parenthetical ("Theoretical Depth (Documentation)" -> "theoretical depth"); `None`
/// when nothing is left. A sentence naming a criterion ("Rubric Dimension: Structured Output
/// Enforcement") names it; it claims no feature.
fn criterion_name(name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let bare = lower
        .trim_end()
        .strip_suffix(')')
        .and_then(|s| s.rfind('(').map(|i| &s[..i]))
        .unwrap_or(&lower)
        .trim();
    (!bare.is_empty()).then(|| bare.to_string())
}

/// A criterion's name as tables and lists shorten it: its first two words ("structured
/// output" for "structured output enforcement", "Structured Output 1 5 1 1"); a name of two
/// words or fewer is its own short form.
fn short_criterion_name(name: &str) -> String {
    name.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `lower` with each criterion name (see [`criterion_name`]) blanked out (as many spaces as
/// bytes: positions hold). A sentence that names two or more criteria (a table of scores, a
/// list of the dimensions) has their shortened names blanked too (see
/// [`short_criterion_name`]): there "Structured Output" names a criterion, not a feature of
/// the code.
fn without_criterion_names(lower: &str, names: &[String]) -> String {
    let shorts: Vec<String> = names.iter().map(|n| short_criterion_name(n)).collect();
    let mentioned = names
        .iter()
        .zip(&shorts)
        .filter(|(full, short)| {
            !full.is_empty() && (lower.contains(full.as_str()) || lower.contains(short.as_str()))
        })
        .count();
    let mut out = lower.to_string();
    let mut blank = |name: &str| {
        if name.is_empty() {
            return;
        }
        while let Some(i) = out.find(name) {
            out.replace_range(i..i + name.len(), &" ".repeat(name.len()));
        }
    };
    for name in names {
        blank(name);
    }
    if mentioned >= 2 {
        for name in &shorts {
            blank(name);
        }
    }
    out
}

/// Words of a sentence about another team's repository (a peer audit), lower case.
fn about_another_repository(lower: &str) -> bool {
    let whose = [
        "their ",
        "peer's ",
        "peer’s ",
        "other team's ",
        "another team's ",
    ];
    let what = ["repo", "code", "project", "codebase"];
    // the peer's anything ("The peer's Judge nodes returned freeform text"), or the audit of a
    // peer's repository ("Findings from Auditing Peer Repository")
    let peer = [
        "peer's ",
        "peer’s ",
        "peers' ",
        "peer repo",
        "auditing peer",
        "auditing the peer",
        "auditing a peer",
    ];
    peer.iter().any(|p| lower.contains(p))
        || whose
            .iter()
            .any(|w| what.iter().any(|t| lower.contains(&format!("{w}{t}"))))
}

/// Words that make a denial one about what a check looks for ("runs AST-based verification:
/// ... (no os.system calls)"), not about the code (lower case).
const LOOKS_FOR: &[&str] = &[
    "verif",
    "check",
    "scan",
    "detect",
    "flag",
    "look for",
    "looks for",
    "search",
    "grep",
];

/// Whether `padded` (lower case) says the project runs commands through a shell: a verb of use
/// right before `os.system`, `os.popen` or `shell=True` ("git operations use raw os.system()
/// calls"), not denied, avoided or looked for shortly before ("scans for code that uses
/// os.system", "avoid calling os.system").
fn uses_shell(padded: &str) -> bool {
    use std::sync::LazyLock;
    static USE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?:^|[^a-z])(?:uses?|used|using|calls?|called|calling|relies on|rely on|runs? through|invokes?|via)\s+(?:(?:the|a|raw|plain|direct|bare)\s+)*(?:os\.system|os\.popen|subprocess\.\w+\([^)]*shell\s*=\s*true)",
        )
        .expect("static regex")
    });
    const AWAY: &[&str] = &[
        "avoid",
        "instead of",
        "rather than",
        "replac",
        "eliminat",
        "remov",
        "ban",
        "prohibit",
        "forbid",
        "flag",
        "detect",
        "scan",
        "search",
        "look for",
        "looks for",
        "check",
        "find ",
        "finds ",
        "grep",
        "if ",
        "whether",
    ];
    USE.find_iter(padded).any(|m| {
        let mut from = m.start().saturating_sub(60);
        while !padded.is_char_boundary(from) {
            from -= 1;
        }
        let before = &padded[from..m.start()];
        !NEGATIONS.iter().any(|n| before.contains(n))
            && !AWAY.iter().any(|w| before.contains(w))
            && !imperative(clause_before(padded, m.start() + 1))
    })
}

/// Sentences before a sentence (on its page) read as its context.
const CONTEXT_SENTENCES: usize = 6;

/// Whether `padded` (lower case) has an LLM compute the final scores: an LLM (a prompt, a
/// model) followed in the same clause by a verb of computing a score and its object ("uses a
/// simple LLM prompt to average scores", "an LLM decides the final verdict"), not denied
/// shortly before ("does not use an LLM to ..."), in a sentence about the synthesis (Chief
/// Justice, synthesis, verdict, final score), or whose `context` is (its section's heading and
/// the sentences just before it, lower case).
fn llm_synthesis(padded: &str, context: &str) -> bool {
    use std::sync::LazyLock;
    static LLM: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"\b(?:llm|language model|gpt[\w.-]*|model|prompt)s?\b[^.;:]{0,60}?\b(?:averag|aggregat|combin|synthesi[sz]|decid|comput|resolv|reconcil|merg|determin|calculat|produc|assign|set)\w*\s+(?:the\s+|all\s+|their\s+|its\s+)?(?:final\s+|overall\s+|judges'\s+|judge\s+)?(?:scores?|verdicts?|opinions|rulings?|judgments?|judgements?)\b",
        )
        .expect("static regex")
    });
    const ABOUT: &[&str] = &[
        "chief justice",
        "chiefjustice",
        "chief_justice",
        "synthesis",
        "justice node",
        "verdict",
        "final score",
    ];
    let about = |t: &str| ABOUT.iter().any(|w| t.contains(w));
    (about(padded) || about(context))
        && LLM.find_iter(padded).any(|m| {
            let mut from = m.start().saturating_sub(40);
            while !padded.is_char_boundary(from) {
                from -= 1;
            }
            let before = &padded[from..m.start()];
            !NEGATIONS.iter().any(|n| before.contains(n))
                && !LOOKS_FOR.iter().any(|w| before.contains(w))
                && !imperative(clause_before(padded, m.start()))
        })
}

/// Whether `padded` (lower case) denies `feature` outright: a cue right after a denial ("no
/// evidence of", "does not use", "lacks", "no"), perhaps after an article or the other terms
/// it is listed with, quoted or of a few words each ('No evidence of "Rule of Security" or
/// "Fact Supremacy"', "no timeout, tempfile or os.system": each is denied), and
/// not modifying another noun ("no temporary directory cleanup" denies a cleanup). A sentence
/// that supposes ("if", "would", "could", "without reducers ...") denies nothing.
fn denies(padded: &str, feature: Feature) -> bool {
    use std::sync::LazyLock;
    static DENIAL: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r#"(?:^|[^a-z'])(?:no evidence of|no sign of|no use of|no trace of|does not use|do not use|doesn't use|don't use|never uses?|lacks?|lack of|there (?:is|are) no|no)\s+(?:(?:a|an|the|any|raw)\s+)?(?:(?:["'“‘][^"'”’]{1,40}["'”’]|[\w.()-]+(?:\s+[\w.()-]+){0,2})\s*(?:,|\bor\b|\bnor\b|\band\b)\s*)*["'“‘`]?$"#,
        )
        .expect("static regex")
    });
    const MODIFIED: &[&str] = &[
        "cleanup",
        "clean-up",
        "removal",
        "deletion",
        "leak",
        "leaks",
        "path",
        "paths",
        "name",
        "names",
        "reuse",
        "permission",
        "permissions",
        "limit",
        "limits",
        "size",
    ];
    let supposes = [" if ", " would ", " could ", " without "]
        .iter()
        .any(|w| padded.contains(w));
    !supposes
        && feature.cues().iter().any(|cue| {
            padded.match_indices(cue).any(|(at, _)| {
                let before = clause_before(padded, at);
                let after = padded[at + cue.len()..]
                    .trim_start_matches(|c: char| "()`'\"”’".contains(c))
                    .trim_start();
                let next = after
                    .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                    .next()
                    .unwrap_or("");
                DENIAL.is_match(before) && !MODIFIED.contains(&next)
            })
        })
}

/// Settles every claim against the code facts.
pub fn check(claims: &mut [FeatureClaim], code: &PythonFacts) {
    for c in claims {
        let (status, text, location) = verdict(c, code);
        c.status = status;
        c.code = text;
        c.code_location = location;
    }
}

/// Reducer names as reports write them, normalised to the code's spelling.
const REDUCER_WORDS: [(&str, &str); 6] = [
    ("operator.add", "operator.add"),
    ("operator.ior", "operator.ior"),
    ("operator.or_", "operator.or_"),
    ("add_messages", "add_messages"),
    ("operator.iadd", "operator.add"),
    ("operator.concat", "operator.add"),
];

/// (field, reducer) pairs a sentence states for the given state fields: a field followed
/// closely by a reducer name with no other field in between (`evidences use operator.ior`,
/// `opinions: Annotated[list, operator.add]`).
fn stated_reducers(sentence: &str, fields: &[&str]) -> Vec<(String, String)> {
    const WINDOW: usize = 60;
    let lower = sentence.to_lowercase();
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut mentions: Vec<(usize, usize, &str)> = Vec::new();
    for f in fields {
        let fl = f.to_lowercase();
        for (at, _) in lower.match_indices(&fl) {
            let end = at + fl.len();
            if is_word(lower[..at].chars().next_back()) || is_word(lower[end..].chars().next()) {
                continue;
            }
            mentions.push((at, end, f));
        }
    }
    mentions.sort_unstable();
    let mut out = Vec::new();
    for (i, (_, end, field)) in mentions.iter().enumerate() {
        let stop = mentions
            .get(i + 1)
            .map(|m| m.0)
            .unwrap_or(lower.len())
            .min(end + WINDOW);
        if stop <= *end || !lower.is_char_boundary(stop) {
            continue;
        }
        let window = &lower[*end..stop];
        let found = REDUCER_WORDS
            .iter()
            .filter_map(|(w, norm)| window.find(w).map(|at| (at, *norm)))
            .min_by_key(|(at, _)| *at);
        if let Some((_, reducer)) = found {
            out.push((field.to_string(), reducer.to_string()));
        }
    }
    out
}

/// A reducer the report names for a field that the state declares with another one.
fn reducer_swap(claim: &FeatureClaim, code: &PythonFacts) -> Option<(u32, String, String)> {
    let declared = &code.state.reducers;
    let fields: Vec<&str> = declared.iter().map(|r| r.field.as_str()).collect();
    for (page, sentence) in &claim.sentences {
        for (field, said) in stated_reducers(sentence, &fields) {
            let Some(r) = declared.iter().find(|r| r.field == field) else {
                continue;
            };
            if r.reducer != said && REDUCER_WORDS.iter().any(|(_, n)| *n == r.reducer) {
                return Some((
                    *page,
                    crate::repo::python::syntax::truncate(sentence.trim(), QUOTE_MAX),
                    format!(
                        "the report gives {field} the reducer {said}, but {}.{field} is declared with {} ({}:{})",
                        r.class, r.reducer, r.path, r.line
                    ),
                ));
            }
        }
    }
    None
}

/// A retry claim against the schema-bound LLM calls: supported when one is made again after a
/// failure (a loop, a retry decorator, `.with_retry()`, a `RetryPolicy`), or, for a claim about
/// failed requests, when the client re-sends them (`max_retries=`). Without a schema-bound call
/// the analysis does not follow the calls, so the claim stays unchecked.
fn retry_verdict(claim: &FeatureClaim, code: &PythonFacts) -> Verdict {
    let calls = &code.structured_output.calls;
    let at = |c: &crate::repo::python::schema_binding::StructuredCall| {
        Some(format!("{}:{}", c.path, c.line))
    };
    if let Some(c) = calls.iter().find(|c| c.retry_by.is_some()) {
        return (
            ClaimStatus::Supported,
            format!(
                "the structured call at {}:{} is made again when it fails",
                c.path, c.line
            ),
            at(c),
        );
    }
    let lower = claim.quote.to_lowercase();
    let about_requests = REQUEST_RETRY.iter().any(|w| lower.contains(w));
    if about_requests
        && let Some(c) = calls.iter().find(|c| c.transport.is_some())
        && let Some((site, value)) = &c.transport
    {
        return (
            ClaimStatus::Supported,
            format!("the client re-sends failed requests: max_retries={value} at {site}"),
            at(c),
        );
    }
    let Some(first) = calls.first() else {
        return (
            ClaimStatus::Unchecked,
            "no schema-bound LLM call was found to check a retry on".into(),
            None,
        );
    };
    let transport = calls
        .iter()
        .find_map(|c| c.transport.as_ref())
        .map(|(site, value)| {
            format!(" (the client's max_retries={value} at {site} re-sends failed requests, not invalid replies)")
        })
        .unwrap_or_default();
    let mut sites: Vec<String> = calls
        .iter()
        .take(3)
        .map(|c| format!("{}:{}", c.path, c.line))
        .collect();
    if calls.len() > 3 {
        sites.push(format!("{} more", calls.len() - 3));
    }
    let which = if calls.len() == 1 {
        format!("the schema-bound LLM call at {} is not", sites[0])
    } else {
        format!(
            "none of the {} schema-bound LLM calls ({}) is",
            calls.len(),
            sites.join(", ")
        )
    };
    (
        ClaimStatus::Contradicted,
        format!(
            "{which} made again when it fails: no loop, retry decorator, .with_retry() or RetryPolicy around {}{transport}",
            if calls.len() == 1 {
                "it"
            } else {
                "any of them"
            }
        ),
        at(first),
    )
}

/// The calls of the product code (tests aside) that run a command through a shell.
fn shell_calls(code: &PythonFacts) -> impl Iterator<Item = &crate::repo::python::safety::Finding> {
    code.security.findings.iter().filter(|f| {
        matches!(
            f.kind.as_str(),
            "os_system" | "os_popen" | "subprocess_shell"
        ) && !crate::repo::python::safety::is_test(&f.path)
    })
}

/// The claim that the project runs commands through a shell, where no such call was found:
/// contradicted when every Python file was read (and says what the clones run through),
/// unchecked otherwise.
fn no_shell_call(code: &PythonFacts) -> Verdict {
    let files = code.security.files;
    if files == 0 || !code.notes.is_empty() {
        return (
            ClaimStatus::Unchecked,
            "not every Python file of the project could be read for shell calls".into(),
            None,
        );
    }
    let clones = &code.security.clone_calls;
    let through = match clones.first() {
        Some(c) => format!(
            "; {} through {}{} ({}:{})",
            if clones.len() == 1 {
                "the clone runs".to_string()
            } else {
                format!("the {} clones run, the first", clones.len())
            },
            if c.callee.is_empty() {
                "its call"
            } else {
                c.callee.as_str()
            },
            if c.list_args {
                " with a list of arguments"
            } else {
                ""
            },
            c.path,
            c.line
        ),
        None => String::new(),
    };
    (
        ClaimStatus::Contradicted,
        format!(
            "none of the {} of the product code (tests aside) calls os.system or os.popen or passes shell=True{through}",
            crate::words::count(files, "Python file", "Python files")
        ),
        clones.first().map(|c| format!("{}:{}", c.path, c.line)),
    )
}

/// A denial of a feature ([`Feature::deniable`]): contradicted when the code shows the feature
/// at a line; otherwise unchecked (the detectives' silence is no proof that the report is right).
fn denial_verdict(feature: Feature, code: &PythonFacts) -> Verdict {
    let unchecked = || {
        (
            ClaimStatus::Unchecked,
            "a denial is reported only when the code contradicts it".to_string(),
            None,
        )
    };
    let j = &code.justice;
    match feature {
        Feature::SandboxedClone => match code
            .security
            .clone_calls
            .iter()
            .find_map(|c| c.sandbox_at.as_ref().map(|at| (c, at)))
        {
            Some((c, at)) => (
                ClaimStatus::Contradicted,
                format!(
                    "the clone ({}{}:{}) runs inside the temporary directory made at {}",
                    if c.callee.is_empty() {
                        String::new()
                    } else {
                        format!("{} at ", c.callee)
                    },
                    c.path,
                    c.line,
                    if at.path == c.path {
                        format!("line {}", at.line)
                    } else {
                        at.to_string()
                    }
                ),
                Some(at.to_string()),
            ),
            None => unchecked(),
        },
        Feature::FactSupremacy => match j
            .rules
            .iter()
            .find(|r| r.rule == "fact_supremacy" && r.found)
        {
            Some(r) => (
                ClaimStatus::Contradicted,
                format!("the justice code has a fact supremacy branch: {}", r.how),
                Some(r.location.clone()),
            ),
            None => unchecked(),
        },
        Feature::SecurityOverride => match security_branch(code) {
            Some(r) => (
                ClaimStatus::Contradicted,
                format!(
                    "the justice code caps the score on a security matter: {}",
                    r.how
                ),
                Some(r.location.clone()),
            ),
            None => unchecked(),
        },
        Feature::DeterministicSynthesis => match j.rules.iter().find(|r| r.found) {
            Some(r) if j.branches > 0 => (
                ClaimStatus::Contradicted,
                format!(
                    "the rule '{}' is an if/elif branch of the justice code: {}",
                    r.rule, r.how
                ),
                Some(r.location.clone()),
            ),
            _ => unchecked(),
        },
        Feature::RawShell => match shell_calls(code).next() {
            Some(f) => (
                ClaimStatus::Contradicted,
                format!(
                    "{} at {}:{}: {}",
                    f.snippet.trim(),
                    f.path,
                    f.line,
                    f.detail
                ),
                Some(format!("{}:{}", f.path, f.line)),
            ),
            None => unchecked(),
        },
        _ => unchecked(),
    }
}

/// The branch of the justice code that caps a score on a security matter, if any.
fn security_branch(code: &PythonFacts) -> Option<&crate::repo::python::conflict_rules::RuleFact> {
    code.justice
        .rules
        .iter()
        .find(|r| r.rule == "security_override" && r.found)
}

/// The claim that an LLM computes the final score, against where the justice code computes
/// it: supported by an LLM call of the justice code whose reply is more than text; contradicted
/// when its branches set the scores and every LLM call it makes is read as text only (a
/// summary, no part of the score) or there is none; unchecked otherwise.
fn llm_synthesis_verdict(code: &PythonFacts) -> Verdict {
    let j = &code.justice;
    if let Some(at) = j.llm_calls.first() {
        return (
            ClaimStatus::Supported,
            format!("the justice code asks an LLM at {at}"),
            Some(at.to_string()),
        );
    }
    // the rules that set a score (the dissent writes text)
    let dissent = crate::model::fact::JusticeRule::DissentRequirement.id();
    let rules: Vec<&crate::repo::python::conflict_rules::RuleFact> = j
        .rules
        .iter()
        .filter(|r| r.found && r.rule != dissent)
        .collect();
    let Some(first) = rules.first() else {
        return (
            ClaimStatus::Unchecked,
            if j.modules.is_empty() {
                "no Chief Justice / synthesis code was found to check it against".into()
            } else {
                "no branch of the justice code was read as setting the score".into()
            },
            None,
        );
    };
    let prose = match j.prose_llm_calls.as_slice() {
        [] => format!("; it calls no LLM ({} searched)", j.modules.join(", ")),
        [one] => format!("; its one LLM call ({one}) is read as text only, no part of the score"),
        many => format!(
            "; its {} LLM calls ({}) are read as text only, no part of the score",
            many.len(),
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    (
        ClaimStatus::Contradicted,
        format!(
            "the justice code sets the scores in Python branches: {} at {}{}{prose}",
            first.how,
            first.location,
            if rules.len() > 1 {
                format!(
                    " and {} more ({})",
                    rules.len() - 1,
                    rules[1..]
                        .iter()
                        .map(|r| r.location.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            }
        ),
        Some(first.location.clone()),
    )
}

/// The nodes of `nodes` that can run: those the run-time analysis did not find unreachable
/// (a branch into a node that never runs is no parallel branch). A fan-out or a fan-in is
/// kept when two of its nodes run, or when none was found unreachable (a node added once per
/// item of a list stands for several).
fn running<'a>(g: &GraphFacts, nodes: &'a [String]) -> Vec<&'a str> {
    nodes
        .iter()
        .filter(|n| {
            !g.defects
                .iter()
                .any(|d| d.kind == "unreachable_node" && d.nodes.contains(n))
        })
        .map(String::as_str)
        .collect()
}

/// Words that name the judges (lower case).
const JUDGE_WORDS: &[&str] = &[
    "judge",
    "judicial",
    "prosecutor",
    "defense",
    "defence",
    "tech lead",
    "techlead",
];

/// Bytes on either side of a cue of parallelism in which the judges are named.
const JUDGES_NEAR: usize = 60;

/// Whether a claiming sentence says that the judges run in parallel: the clause of a cue of
/// parallelism (from the clause mark before it to the one after it, within [`JUDGES_NEAR`]
/// bytes of it) names the judges and no detective.
fn judges_in_parallel(sentence: &str) -> bool {
    // CamelCase names (`ChiefJustice`, `DetectiveHub`) are names, not words: blanked
    let mut own = format!(" {sentence}");
    for (a, b) in camel_names(sentence, &own.to_lowercase()) {
        own.replace_range(a..b, &" ".repeat(b - a));
    }
    let padded = own.to_lowercase();
    Feature::ParallelExecution.cues().iter().any(|cue| {
        padded.match_indices(cue).any(|(at, _)| {
            let before = clause_before(&padded, at);
            let mut from = before.len().saturating_sub(JUDGES_NEAR);
            while !before.is_char_boundary(from) {
                from += 1;
            }
            let before = &before[from..];
            let after = &padded[at..];
            let mut end = after
                .find([';', '.', '(', '•', '|'])
                .unwrap_or(after.len())
                .min(cue.len() + JUDGES_NEAR);
            while !after.is_char_boundary(end) {
                end -= 1;
            }
            // its prose words: a name the student chose (`chief_justice`, `DetectiveNode`)
            // says nothing of what the node is
            let clause = format!("{before}{}", &after[..end]);
            let prose: String = clause
                .split_whitespace()
                .filter(|w| !w.contains(['_', '.']))
                .collect::<Vec<_>>()
                .join(" ");
            JUDGE_WORDS.iter().any(|w| prose.contains(w)) && !prose.contains("detective")
        })
    })
}

/// A claim that the judges run in parallel, decided by the judges' own fan-out: supported when
/// a node (or a router) sends to two or more judge nodes at once, contradicted when the graph
/// has judge nodes (by what they write, see `repo::python::roles`) and none does. `None`: no
/// sentence claims it of the judges, or the code's judges are not known.
fn judges_parallel_verdict(claim: &mut FeatureClaim, code: &PythonFacts) -> Option<Verdict> {
    use crate::repo::python::graph::Role;
    let (page, sentence) = claim
        .sentences
        .iter()
        .find(|(_, t)| judges_in_parallel(t))?
        .clone();
    let (g, judges) = code.graphs.iter().find_map(|g| {
        let judges: Vec<&str> = g
            .roles
            .iter()
            .filter(|(_, r)| **r == Role::Judge)
            .map(|(n, _)| n.as_str())
            .collect();
        (judges.len() >= 2).then_some((g, judges))
    })?;
    claim.page = page;
    claim.quote = crate::repo::python::syntax::truncate(sentence.trim(), QUOTE_MAX);
    let of_judges = |to: &[String]| -> Vec<String> {
        running(g, to)
            .into_iter()
            .filter(|n| judges.contains(n))
            .map(str::to_string)
            .collect()
    };
    if let Some((f, to)) = g.fan_out.iter().find_map(|f| {
        let to = of_judges(&f.to);
        (to.len() >= 2).then_some((f, to))
    }) {
        return Some((
            ClaimStatus::Supported,
            format!(
                "'{}' fans out to the judges {} ({})",
                f.from,
                to.join(", "),
                f.via
            ),
            Some(f.location.clone()),
        ));
    }
    if let Some((r, to)) = g.routers.iter().filter(|r| r.parallel).find_map(|r| {
        let to = of_judges(&r.targets);
        (to.len() >= 2).then_some((r, to))
    }) {
        return Some((
            ClaimStatus::Supported,
            format!(
                "the router '{}' after '{}' sends to the judges {} in parallel (Send or a list)",
                r.router,
                r.source,
                to.join(", ")
            ),
            Some(format!("{}:{}", r.path, r.line)),
        ));
    }
    // wiring not read statically may still fan out to them
    if !g.unresolved.is_empty() {
        return None;
    }
    Some((
        ClaimStatus::Contradicted,
        format!(
            "the judges do not run in parallel: no node of the graph built at {} fans out to two or more of the judge nodes {} and no router sends to them at once",
            g.location(),
            judges.join(", ")
        ),
        Some(g.location()),
    ))
}

/// A claim about the graph, where the RepoInvestigator found none.
fn no_graph_found() -> Verdict {
    (
        ClaimStatus::Contradicted,
        "the RepoInvestigator found no LangGraph StateGraph in the code".into(),
        None,
    )
}

/// A claim about the Chief Justice, where no synthesis code was found.
fn no_justice_found() -> Verdict {
    (
        ClaimStatus::Contradicted,
        "no Chief Justice / synthesis code was found".into(),
        None,
    )
}

/// The graphs' verdict on a reducer field: what keeps it empty in every run, when every graph
/// found it so (see `GraphFacts::empty_fields`); `None` when some graph may put a value into
/// it, or none was read.
fn empty_in_every_graph<'a>(code: &'a PythonFacts, field: &str) -> Option<&'a str> {
    let mut why = None;
    for g in &code.graphs {
        let e = g.empty_fields.iter().find(|e| e.field == field)?;
        why = why.or(Some(e.why.as_str()));
    }
    why
}

/// A claim of state reducers, decided by what the reducers do at run time, not only by their
/// declaration: the reducers a claiming sentence speaks of (by the field's name, or by the
/// reducer's: "merged via operator.ior"), or every declared one when it names none. Contradicted
/// when a reducer it speaks of belongs to a field that nothing ever puts a value into (the
/// nodes' updates go to keys the schema drops, say): that reducer never merges anything.
fn reducer_verdict(claim: &mut FeatureClaim, code: &PythonFacts) -> Verdict {
    use crate::repo::python::state::Reducer;
    let declared = &code.state.reducers;
    let Some(first) = declared.first() else {
        return (
            ClaimStatus::Contradicted,
            "no state field is annotated with a reducer (`Annotated[..., reducer]`)".into(),
            None,
        );
    };
    let at = |r: &Reducer| Some(format!("{}:{}", r.path, r.line));
    // the reducers each claiming sentence speaks of
    let spoken = |sentence: &str| -> Vec<&Reducer> {
        let lower = sentence.to_lowercase();
        let said: Vec<&str> = REDUCER_WORDS
            .iter()
            .filter(|(w, _)| lower.contains(w))
            .map(|(_, n)| *n)
            .collect();
        declared
            .iter()
            .filter(|r| {
                said.contains(&r.reducer.as_str())
                    || crate::repo::python::graph::mentions_word(&lower, &r.field.to_lowercase())
            })
            .collect()
    };
    for (page, sentence) in &claim.sentences {
        for r in spoken(sentence) {
            if let Some(why) = empty_in_every_graph(code, &r.field) {
                claim.page = *page;
                claim.quote = crate::repo::python::syntax::truncate(sentence.trim(), QUOTE_MAX);
                return (
                    ClaimStatus::Contradicted,
                    format!(
                        "{}.{} is declared with the reducer {}, yet {why}: the reducer never merges anything",
                        r.class, r.field, r.reducer
                    ),
                    at(r),
                );
            }
        }
    }
    let named = claim.sentences.iter().any(|(_, t)| !spoken(t).is_empty());
    // a claim of reducers in general: contradicted when every declared one stays empty
    if !named
        && declared
            .iter()
            .all(|r| empty_in_every_graph(code, &r.field).is_some())
    {
        let why = empty_in_every_graph(code, &first.field).unwrap_or_default();
        return (
            ClaimStatus::Contradicted,
            format!(
                "{}.{} is declared with the reducer {}, yet {why}: the reducer never merges anything{}",
                first.class,
                first.field,
                first.reducer,
                if declared.len() > 1 {
                    format!(
                        ", and the same holds for the other {}",
                        crate::words::count(declared.len() - 1, "reducer", "reducers")
                    )
                } else {
                    String::new()
                }
            ),
            at(first),
        );
    }
    let r = declared
        .iter()
        .find(|r| empty_in_every_graph(code, &r.field).is_none())
        .unwrap_or(first);
    (
        ClaimStatus::Supported,
        format!("{}.{} uses the reducer {}", r.class, r.field, r.reducer),
        at(r),
    )
}

/// A claim of conditional routing, decided by the routes that can be taken: a conditional edge
/// whose other routes the run-time analysis found can never be taken (`GraphFacts::dead_routes`)
/// always sends the run the same way and routes nothing. Contradicted when a claiming sentence
/// names both ends of a route that can never be taken ("routes to error_handler if evidence is
/// missing"), or when no router has two routes that can be taken while some route is dead;
/// supported by a router with two or more routes that can be taken.
fn conditional_verdict(claim: &mut FeatureClaim, code: &PythonFacts) -> Verdict {
    let routers: Vec<(&GraphFacts, &Router)> = code
        .graphs
        .iter()
        .flat_map(|g| g.routers.iter().map(move |r| (g, r)))
        .collect();
    for (page, sentence) in &claim.sentences {
        if let Some((g, r, d)) = dead_route_named(sentence, &routers) {
            claim.page = *page;
            claim.quote = crate::repo::python::syntax::truncate(sentence.trim(), QUOTE_MAX);
            return dead_route_verdict(g, r, d);
        }
    }
    let live =
        |g: &GraphFacts, r: &Router| r.targets.iter().filter(|t| !route_is_dead(g, r, t)).count();
    let pick = routers.iter().find(|(g, r)| live(g, r) >= 2).or_else(|| {
        routers
            .iter()
            .find(|(g, r)| !g.dead_routes.iter().any(|d| d.source == r.source))
    });
    match (pick, routers.first()) {
        (Some((_, r)), _) => (
            ClaimStatus::Supported,
            format!(
                "'{}' is routed by {} to {}",
                r.source,
                r.router,
                r.targets.join(", ")
            ),
            Some(format!("{}:{}", r.path, r.line)),
        ),
        // every router has a route that can never be taken and at most one that can
        (None, Some(_)) => first_dead_route_verdict(&routers),
        (None, None) => no_router_verdict(code),
    }
}

/// The run-time analysis found that `r` can never send the run to `target`.
fn route_is_dead(g: &GraphFacts, r: &Router, target: &str) -> bool {
    g.dead_routes
        .iter()
        .any(|d| d.source == r.source && d.target == target)
}

/// The first route, among the routers' own, that can never be taken and whose two ends
/// `sentence` names.
fn dead_route_named<'a>(
    sentence: &str,
    routers: &[(&'a GraphFacts, &'a Router)],
) -> Option<(&'a GraphFacts, &'a Router, &'a DeadRoute)> {
    let named = |text: &str, name: &str| {
        crate::repo::python::graph::mentions_word(&text.to_lowercase(), &name.to_lowercase())
    };
    routers.iter().find_map(|&(g, r)| {
        g.dead_routes
            .iter()
            .find(|d| {
                d.source == r.source
                    && r.targets.contains(&d.target)
                    && named(sentence, &d.source)
                    && named(sentence, &d.target)
            })
            .map(|d| (g, r, d))
    })
}

/// Contradicted by a route of the conditional edge that can never be taken (and, when one route
/// is left, where the run always goes).
fn dead_route_verdict(g: &GraphFacts, r: &Router, d: &DeadRoute) -> Verdict {
    let live: Vec<&str> = r
        .targets
        .iter()
        .filter(|t| !route_is_dead(g, r, t))
        .map(String::as_str)
        .collect();
    let always = match live.as_slice() {
        [one] => format!(" (the run always goes to {one})"),
        _ => String::new(),
    };
    (
        ClaimStatus::Contradicted,
        format!(
            "the route {} -> {} of the conditional edge at {}:{} can never be taken: {}{always}",
            d.source, d.target, r.path, r.line, d.why
        ),
        Some(format!("{}:{}", r.path, r.line)),
    )
}

/// With no router that routes: the first of their routes that can never be taken.
fn first_dead_route_verdict(routers: &[(&GraphFacts, &Router)]) -> Verdict {
    match routers.iter().find_map(|&(g, r)| {
        g.dead_routes
            .iter()
            .find(|d| d.source == r.source && r.targets.contains(&d.target))
            .map(|d| (g, r, d))
    }) {
        Some((g, r, d)) => dead_route_verdict(g, r, d),
        None => (
            ClaimStatus::Unchecked,
            "no route of the graph's conditional edges was found that can be taken, nor one that cannot".into(),
            None,
        ),
    }
}

/// With no router at all: no graph, a conditional edge that could not be read (it may still
/// route), or graphs without any conditional edge or `Command`.
fn no_router_verdict(code: &PythonFacts) -> Verdict {
    if code.graphs.is_empty() {
        return no_graph_found();
    }
    if code
        .graphs
        .iter()
        .flat_map(|g| &g.unresolved)
        .any(|u| u.contains("conditional"))
    {
        return (
            ClaimStatus::Unchecked,
            "a conditional edge of the graph could not be read statically".into(),
            None,
        );
    }
    let where_: Vec<String> = code.graphs.iter().map(|g| g.location()).collect();
    (
        ClaimStatus::Contradicted,
        format!(
            "no graph routes conditionally: the {} built at {} {} no add_conditional_edges call and no node returning a Command",
            if where_.len() == 1 { "graph" } else { "graphs" },
            where_.join(", "),
            if where_.len() == 1 { "has" } else { "have" }
        ),
        where_.first().cloned(),
    )
}

/// A claim of parallel execution: a fan-out to two or more running nodes, or a router that sends in parallel.
fn parallel_verdict(code: &PythonFacts) -> Verdict {
    let no_graph = code.graphs.is_empty();
    match code.graphs.iter().find_map(|g| {
        g.fan_out.iter().find_map(|f| {
            let to = running(g, &f.to);
            (to.len() >= 2 || (!to.is_empty() && to.len() == f.to.len())).then_some((f, to))
        })
    }) {
        Some((f, to)) => (
            ClaimStatus::Supported,
            format!("'{}' fans out to {} ({})", f.from, to.join(", "), f.via),
            Some(f.location.clone()),
        ),
        // `[Send("worker", s) for s in items]`: one node, run once per item, at once
        None if let Some(r) = code
            .graphs
            .iter()
            .flat_map(|g| &g.routers)
            .find(|r| r.parallel) =>
        {
            (
                ClaimStatus::Supported,
                format!(
                    "the router '{}' after '{}' sends to {} in parallel (Send or a list)",
                    r.router,
                    r.source,
                    r.targets.join(", ")
                ),
                Some(format!("{}:{}", r.path, r.line)),
            )
        }
        None if no_graph => no_graph_found(),
        None => {
            let g = &code.graphs[0];
            (
                ClaimStatus::Contradicted,
                format!(
                    "no graph fans out: the graph built at {} is {}",
                    g.location(),
                    if g.linear {
                        "a linear chain"
                    } else {
                        "without any node leading to two or more nodes at once"
                    }
                ),
                Some(g.location()),
            )
        }
    }
}

/// A claim of fan-in: a node joined from two or more running predecessors.
fn fan_in_verdict(code: &PythonFacts) -> Verdict {
    let no_graph = code.graphs.is_empty();
    match code.graphs.iter().find_map(|g| {
        g.fan_in.iter().find_map(|f| {
            let from = running(g, &f.from);
            (from.len() >= 2 || (!from.is_empty() && from.len() == f.from.len()))
                .then_some((f, from))
        })
    }) {
        Some((f, from)) => (
            ClaimStatus::Supported,
            format!("'{}' joins {}", f.to, from.join(", ")),
            Some(f.location.clone()),
        ),
        None if no_graph => no_graph_found(),
        None => (
            ClaimStatus::Contradicted,
            format!(
                "no node of the graph at {} is joined from two or more predecessors",
                code.graphs[0].location()
            ),
            Some(code.graphs[0].location()),
        ),
    }
}

/// A claim of structured output: a call that binds the LLM to a schema.
fn structured_output_verdict(code: &PythonFacts) -> Verdict {
    match code.structured_output.calls.first() {
        Some(c) => (
            ClaimStatus::Supported,
            format!("`.{}({})` is called", c.method, c.schema),
            Some(format!("{}:{}", c.path, c.line)),
        ),
        None => (
            ClaimStatus::Contradicted,
            "no `.with_structured_output(...)` or `.bind_tools(...)` call in the code".into(),
            None,
        ),
    }
}

/// A claim of sandboxed cloning: every clone call inside a temporary directory.
fn sandboxed_clone_verdict(code: &PythonFacts) -> Verdict {
    let calls = &code.security.clone_calls;
    match calls.iter().find(|c| !c.sandboxed) {
        Some(c) => (
            ClaimStatus::Contradicted,
            "a repository is cloned outside any temporary directory".into(),
            Some(format!("{}:{}", c.path, c.line)),
        ),
        None => match calls.first() {
            Some(c) => (
                ClaimStatus::Supported,
                format!(
                    "every clone call ({}) runs inside a temporary directory",
                    calls.len()
                ),
                Some(format!("{}:{}", c.path, c.line)),
            ),
            None => (
                ClaimStatus::Contradicted,
                "the code has no recognisable clone call (git CLI, GitPython, pygit2, dulwich)"
                    .into(),
                None,
            ),
        },
    }
}

/// A claimed overlap of the persona prompts (`figure`, in percent) against the one measured.
fn prompt_overlap_verdict(figure: Option<f64>, code: &PythonFacts) -> Verdict {
    let p = &code.personas;
    let measured = p
        .similarity
        .iter()
        .max_by(|a, b| a.share.total_cmp(&b.share));
    let at = p.prompts.first().map(|x| format!("{}:{}", x.path, x.line));
    match (figure, measured) {
        (Some(claimed), Some(m)) => {
            let measured_pct = m.share * 100.0;
            let text = format!(
                "the RepoInvestigator measured {measured_pct:.0}% shared text between the {} and {} prompts (the report says {claimed:.0}%)",
                m.a, m.b
            );
            if measured_pct >= claimed + OVERLAP_TOLERANCE {
                (ClaimStatus::Contradicted, text, at)
            } else {
                (ClaimStatus::Supported, text, at)
            }
        }
        // Nothing measured: the claim can be neither confirmed nor refuted.
        _ => (
            ClaimStatus::Unchecked,
            "fewer than two persona prompts were found to compare".into(),
            None,
        ),
    }
}

/// A claim of fact supremacy: a branch of the justice code where detective evidence overrules a judge.
fn fact_supremacy_verdict(code: &PythonFacts) -> Verdict {
    let j = &code.justice;
    match j
        .rules
        .iter()
        .find(|r| r.rule == "fact_supremacy" && r.found)
    {
        Some(r) => (
            ClaimStatus::Supported,
            format!("the justice code has a fact supremacy branch: {}", r.how),
            Some(r.location.clone()),
        ),
        None if j.modules.is_empty() => no_justice_found(),
        None => (
            ClaimStatus::Contradicted,
            format!(
                "no branch where detective evidence overrules a judge: none of the {} if/elif branches of the justice code ({}) does it",
                j.branches,
                j.modules.join(", ")
            ),
            j.location.clone(),
        ),
    }
}

/// A claim of a security override: a branch of the justice code that caps the score.
fn security_override_verdict(code: &PythonFacts) -> Verdict {
    match security_branch(code) {
        Some(r) => (
            ClaimStatus::Supported,
            format!(
                "the justice code caps the score on a security matter: {}",
                r.how
            ),
            Some(r.location.clone()),
        ),
        // a cap the branches do not show plainly (a table of rules, a helper) may still be
        // there: the claim is confirmed, never refuted, by the branches read
        None => (
            ClaimStatus::Unchecked,
            "no branch of the justice code was read as capping a score on a security matter".into(),
            None,
        ),
    }
}

/// A claim of a raw shell call: the first one found.
fn raw_shell_verdict(code: &PythonFacts) -> Verdict {
    match shell_calls(code).next() {
        Some(f) => (
            ClaimStatus::Supported,
            format!(
                "{} at {}:{}: {}",
                f.snippet.trim(),
                f.path,
                f.line,
                f.detail
            ),
            Some(format!("{}:{}", f.path, f.line)),
        ),
        None => no_shell_call(code),
    }
}

/// A claim of deterministic synthesis: a rule of the justice code implemented as an if/elif branch.
fn deterministic_synthesis_verdict(code: &PythonFacts) -> Verdict {
    let j = &code.justice;
    match j.rules.iter().find(|r| r.found) {
        Some(r) if !j.calls_llm || j.branches > 0 => (
            ClaimStatus::Supported,
            format!(
                "the rule '{}' is an if/elif branch{}",
                r.rule,
                if j.calls_llm {
                    " (the synthesis code also calls an LLM)"
                } else {
                    ""
                }
            ),
            Some(r.location.clone()),
        ),
        _ if j.modules.is_empty() => no_justice_found(),
        _ => (
            ClaimStatus::Contradicted,
            if j.calls_llm {
                "the synthesis code asks an LLM and implements none of the rules as branches".into()
            } else {
                "the synthesis code implements none of the rules as branches".into()
            },
            j.location.clone(),
        ),
    }
}

/// A claim checked against the code: a denial by its own rule; a reducer claim naming the
/// reducers the other way round, and judges said to run in parallel, before the feature's rule;
/// then one rule per feature.
fn verdict(claim: &mut FeatureClaim, code: &PythonFacts) -> Verdict {
    let feature = claim.feature;
    if claim.denied {
        return denial_verdict(feature, code);
    }
    if feature == Feature::StateReducers
        && let Some((page, quote, text)) = reducer_swap(claim, code)
    {
        claim.page = page;
        claim.quote = quote;
        let at = code
            .state
            .reducers
            .first()
            .map(|r| format!("{}:{}", r.path, r.line));
        return (ClaimStatus::Contradicted, text, at);
    }
    if feature == Feature::ParallelExecution
        && let Some(v) = judges_parallel_verdict(claim, code)
    {
        return v;
    }
    match feature {
        Feature::ParallelExecution => parallel_verdict(code),
        Feature::FanIn => fan_in_verdict(code),
        Feature::StructuredOutput => structured_output_verdict(code),
        Feature::StateReducers => reducer_verdict(claim, code),
        Feature::SandboxedClone => sandboxed_clone_verdict(code),
        Feature::PromptOverlap => prompt_overlap_verdict(claim.figure, code),
        Feature::StructuredRetry => retry_verdict(claim, code),
        Feature::FactSupremacy => fact_supremacy_verdict(code),
        Feature::ConditionalEdges => conditional_verdict(claim, code),
        Feature::Inheritance => inheritance_verdict(claim, code),
        Feature::SecurityOverride => security_override_verdict(code),
        Feature::LlmSynthesis => llm_synthesis_verdict(code),
        Feature::RawShell => raw_shell_verdict(code),
        Feature::DeterministicSynthesis => deterministic_synthesis_verdict(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claims extracted with the criterion names of the challenge's rubric (official v3).
    fn extract(sentences: &[Sentence]) -> Vec<FeatureClaim> {
        let rubric = crate::rubric::Rubric::parse(
            &std::fs::read_to_string(format!(
                "{}/tests/fixtures/rubrics/official-v3.0.0.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
            "official-v3.0.0.json",
        )
        .unwrap();
        let names: Vec<String> = rubric.dimensions.iter().map(|d| d.name.clone()).collect();
        super::extract(sentences, &names)
    }

    fn sentences(texts: &[&str]) -> Vec<Sentence> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Sentence {
                page: 2,
                text: t.to_string(),
                list_or_title: false,
                heading: false,
                block: i as u32,
                item: false,
            })
            .collect()
    }

    fn features(texts: &[&str]) -> Vec<Feature> {
        extract(&sentences(texts))
            .into_iter()
            .map(|c| c.feature)
            .collect()
    }

    #[test]
    fn affirmative_sentences_are_claims() {
        assert_eq!(
            features(&["The three judges run in parallel on the same evidence."]),
            vec![Feature::ParallelExecution]
        );
        assert_eq!(
            features(&["Evidence is merged with operator.ior reducers at the aggregation node."]),
            vec![Feature::FanIn, Feature::StateReducers]
        );
        assert_eq!(
            features(&["Judges use with_structured_output(JudicialOpinion)."]),
            vec![Feature::StructuredOutput]
        );
        assert_eq!(
            features(&["We clone the target into a tempfile.TemporaryDirectory."]),
            vec![Feature::SandboxedClone]
        );
        assert_eq!(
            features(&["The Chief Justice applies hardcoded rules, not an LLM vote."]),
            vec![Feature::DeterministicSynthesis]
        );
    }

    #[test]
    fn denials_plans_and_questions_are_not_claims() {
        assert!(features(&["The judges do not run in parallel yet."]).is_empty());
        assert!(features(&["We never used reducers."]).is_empty());
        assert!(features(&["In future work we plan to run detectives in parallel."]).is_empty());
        assert!(features(&["Should the judges run in parallel?"]).is_empty());
        assert!(features(&["Our graph is sequential and easy to follow."]).is_empty());
    }

    #[test]
    fn headings_and_fragments_are_not_claims() {
        assert!(features(&["• Fan-In / Fan-Out", "Parallel execution"]).is_empty());
        let mut heading = sentences(&["Judges run in parallel on every criterion"]);
        heading[0].heading = true;
        assert!(extract(&heading).is_empty());
    }

    #[test]
    fn first_sentence_is_quoted_and_later_ones_counted() {
        let c = extract(&sentences(&[
            "Detectives run in parallel.",
            "Judges also run concurrently.",
        ]));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].quote, "Detectives run in parallel.");
        assert_eq!(c[0].mentions, 2);
        assert_eq!(c[0].page, 2);
    }

    #[test]
    fn claims_are_checked_against_the_code_facts() {
        use crate::repo::python::graph::{FanOut, GraphFacts};
        let mut claims = extract(&sentences(&[
            "Detectives run in parallel.",
            "State uses reducers.",
        ]));
        let linear = PythonFacts {
            graphs: vec![GraphFacts {
                path: "src/graph.py".into(),
                line: 7,
                linear: true,
                ..GraphFacts::default()
            }],
            ..PythonFacts::default()
        };
        check(&mut claims, &linear);
        assert_eq!(claims[0].status, ClaimStatus::Contradicted);
        assert!(claims[0].code.contains("linear"), "{}", claims[0].code);
        assert_eq!(claims[0].code_location.as_deref(), Some("src/graph.py:7"));
        assert_eq!(claims[1].status, ClaimStatus::Contradicted);

        let mut parallel = linear.clone();
        parallel.graphs[0].linear = false;
        parallel.graphs[0].fan_out.push(FanOut {
            from: "START".into(),
            to: vec!["repo".into(), "doc".into()],
            via: "edges".into(),
            location: "src/graph.py:12".into(),
        });
        check(&mut claims, &parallel);
        assert_eq!(claims[0].status, ClaimStatus::Supported);
        assert_eq!(claims[0].code_location.as_deref(), Some("src/graph.py:12"));

        // a map of `Send`s to one worker node runs in parallel too
        let mut map = linear.clone();
        map.graphs[0].linear = false;
        map.graphs[0]
            .routers
            .push(crate::repo::python::graph::Router {
                source: "plan".into(),
                router: "assign_workers".into(),
                targets: vec!["write_section".into()],
                parallel: true,
                outcomes: vec![vec!["write_section".into()]],
                func: None,
                path: "src/graph.py".into(),
                line: 30,
            });
        check(&mut claims, &map);
        assert_eq!(claims[0].status, ClaimStatus::Supported);
        assert_eq!(claims[0].code_location.as_deref(), Some("src/graph.py:30"));
    }

    use crate::model::fact::Site;

    #[test]
    fn instructions_and_gaps_are_not_claims() {
        assert!(
            features(&["High: Add conditional edges for node failure in src/graph.py."]).is_empty()
        );
        assert!(
            features(&["Missing: Conditional edges for auto-retry on API failure."]).is_empty()
        );
        assert!(
            features(&["• Use .with_structured_output(JudicialOpinion) at each judge node."])
                .is_empty()
        );
        assert!(
            features(&["To deploy it: (1) add caching, (2) harden the judges with LLM retries."])
                .is_empty()
        );
        assert!(
            features(&[
                "Remaining gaps (e.g. conditional edges for evidence missing) are documented."
            ])
            .is_empty()
        );
        // a statement in the third person stays a claim
        assert_eq!(
            features(&[
                "The aggregator uses a conditional edge to route failures to error_handler."
            ]),
            vec![Feature::ConditionalEdges]
        );
    }

    #[test]
    fn retry_rule_and_routing_claims_are_checked_against_the_code_facts() {
        use crate::repo::python::conflict_rules::{JusticeFacts, RuleFact};
        use crate::repo::python::graph::{GraphFacts, Router};
        use crate::repo::python::schema_binding::{StructuredCall, StructuredFacts};
        let mut claims = extract(&sentences(&[
            "Retry logic re-prompts the judge when its output is malformed.",
            "The Chief Justice applies fact supremacy: evidence overrules the Defense.",
            "A conditional edge routes failed detectives to error_handler.",
            "We retried the deployment twice.",
        ]));
        assert_eq!(
            claims.iter().map(|c| c.feature).collect::<Vec<_>>(),
            vec![
                Feature::StructuredRetry,
                Feature::FactSupremacy,
                Feature::ConditionalEdges
            ],
            "a retry not about the LLM calls is no claim"
        );
        let call = StructuredCall {
            path: "src/nodes/judges.py".into(),
            line: 40,
            method: "with_structured_output".into(),
            schema: "JudicialOpinion".into(),
            retry: false,
            snippet: String::new(),
            function_snippet: String::new(),
            json_mode: false,
            retry_by: None,
            transport: Some((Site::new("src/llm.py", 9), "3".into())),
            handled: None,
            skipped: None,
            judges: Vec::new(),
            invoked: Vec::new(),
        };
        let mut code = PythonFacts {
            graphs: vec![GraphFacts {
                path: "src/graph.py".into(),
                line: 7,
                ..GraphFacts::default()
            }],
            structured_output: StructuredFacts {
                calls: vec![call],
                ..StructuredFacts::default()
            },
            justice: JusticeFacts {
                modules: vec!["src/nodes/justice.py".into()],
                location: Some("src/nodes/justice.py:10".into()),
                branches: 4,
                ..JusticeFacts::default()
            },
            ..PythonFacts::default()
        };
        check(&mut claims, &code);
        assert!(
            claims.iter().all(|c| c.status == ClaimStatus::Contradicted),
            "{claims:?}"
        );
        assert!(
            claims[0]
                .code
                .contains("src/nodes/judges.py:40 is not made again when it fails: no loop"),
            "{}",
            claims[0].code
        );
        assert!(
            claims[0].code.contains(
                "max_retries=3 at src/llm.py:9 re-sends failed requests, not invalid replies"
            ),
            "{}",
            claims[0].code
        );
        assert!(
            claims[1].code.contains("none of the 4 if/elif branches"),
            "{}",
            claims[1].code
        );
        assert!(
            claims[2].code.contains("no add_conditional_edges call"),
            "{}",
            claims[2].code
        );

        code.structured_output.calls[0].retry_by = Some(crate::model::fact::Retry::NodePolicy {
            at: Site::new("src/graph.py", 12),
        });
        code.justice.rules.push(RuleFact {
            rule: "fact_supremacy".into(),
            found: true,
            location: "src/nodes/justice.py:22".into(),
            snippet: String::new(),
            how: "`if not ev.found` lowers the Defense score".into(),
            partial: None,
        });
        code.graphs[0].routers.push(Router {
            source: "aggregator".into(),
            router: "route".into(),
            targets: vec!["judges".into(), "error_handler".into()],
            parallel: false,
            outcomes: vec![],
            func: None,
            path: "src/graph.py".into(),
            line: 30,
        });
        check(&mut claims, &code);
        assert!(
            claims.iter().all(|c| c.status == ClaimStatus::Supported),
            "{claims:?}"
        );
        assert_eq!(claims[2].code_location.as_deref(), Some("src/graph.py:30"));
    }

    #[test]
    fn a_route_or_a_reducer_claim_is_checked_against_what_the_graph_does_at_run_time() {
        use crate::repo::python::graph::{DeadRoute, EmptyField, GraphFacts, Router};
        use crate::repo::python::state::{Reducer, StateFacts};
        let reducer = |field: &str, reducer: &str, line| Reducer {
            class: "AgentState".into(),
            field: field.into(),
            reducer: reducer.into(),
            path: "src/state.py".into(),
            line,
            merges: false,
        };
        let mut code = PythonFacts {
            graphs: vec![GraphFacts {
                path: "src/graph.py".into(),
                line: 7,
                routers: vec![Router {
                    source: "aggregate".into(),
                    router: "check".into(),
                    targets: vec!["judges".into(), "error_handler".into()],
                    parallel: false,
                    outcomes: vec![],
                    func: None,
                    path: "src/graph.py".into(),
                    line: 30,
                }],
                dead_routes: vec![DeadRoute {
                    source: "aggregate".into(),
                    target: "error_handler".into(),
                    key: "error".into(),
                    why: "router check (on aggregate) returns `error_handler` only when `error` holds a value, and no node writes it".into(),
                }],
                empty_fields: vec![EmptyField {
                    field: "evidences".into(),
                    reducer: "operator.ior".into(),
                    why: "nothing ever puts an entry into `evidences` (no node writes it)".into(),
                }],
                ..GraphFacts::default()
            }],
            state: StateFacts {
                reducers: vec![
                    reducer("evidences", "operator.ior", 9),
                    reducer("opinions", "operator.add", 10),
                ],
                ..StateFacts::default()
            },
            ..PythonFacts::default()
        };
        let verdict = |texts: &[&str], code: &PythonFacts| {
            let mut claims = extract(&sentences(texts));
            check(&mut claims, code);
            claims
                .into_iter()
                .map(|c| (c.feature, c.status, c.code))
                .collect::<Vec<_>>()
        };
        // the route the report describes can never be taken
        let v = verdict(
            &["A conditional edge from aggregate routes to error_handler if evidence is missing."],
            &code,
        );
        assert_eq!(v[0].1, ClaimStatus::Contradicted, "{v:?}");
        assert!(
            v[0].2.starts_with("the route aggregate -> error_handler of the conditional edge at src/graph.py:30 can never be taken: router check")
                && v[0].2.ends_with("(the run always goes to judges)"),
            "{}",
            v[0].2
        );
        // a claim of routing in general: the only router can take one route only
        let v = verdict(&["The graph uses conditional edges for routing."], &code);
        assert_eq!(v[0].1, ClaimStatus::Contradicted, "{v:?}");
        // a route that can be taken supports it
        code.graphs[0].dead_routes.clear();
        let v = verdict(
            &["A conditional edge from aggregate routes to error_handler if evidence is missing."],
            &code,
        );
        assert_eq!(v[0].1, ClaimStatus::Supported, "{v:?}");

        // reducers: the one the sentence names merges nothing
        let merged = ["Detectives produce evidence merged via operator.ior into the state."];
        let v = verdict(&merged, &code);
        assert_eq!(v[0].0, Feature::StateReducers);
        assert_eq!(v[0].1, ClaimStatus::Contradicted, "{v:?}");
        assert!(
            v[0].2.starts_with("AgentState.evidences is declared with the reducer operator.ior, yet nothing ever puts an entry into `evidences`"),
            "{}",
            v[0].2
        );
        // the one it names is filled; a claim of reducers in general holds while one merges
        let v = verdict(&["Judges' opinions are appended via operator.add."], &code);
        assert_eq!(v[0].1, ClaimStatus::Supported, "{v:?}");
        assert!(v[0].2.starts_with("AgentState.opinions"), "{}", v[0].2);
        let v = verdict(&["The state uses reducers for parallel writes."], &code);
        assert_eq!(v[0].1, ClaimStatus::Supported, "{v:?}");
        // a field written in some graph is not empty
        code.graphs[0].empty_fields.clear();
        assert_eq!(verdict(&merged, &code)[0].1, ClaimStatus::Supported);
    }

    #[test]
    fn a_table_or_list_of_criteria_claims_no_feature_by_their_names() {
        assert!(
            features(&[
                "Git Forensic Analysis 1 5 1 1 State Management Rigor 1 5 1 1 Structured Output 1 5 1 1"
            ])
            .is_empty()
        );
        assert!(
            features(&["It lifts Structured Output, Judicial Nuance and Report Accuracy."])
                .is_empty()
        );
        assert_eq!(
            features(&["Structured output is enforced on every judge call."]),
            vec![Feature::StructuredOutput]
        );
        // another cue of the sentence still counts
        assert_eq!(
            features(&[
                "Safe Tool and Structured Output pass: judges call with_structured_output(Opinion)."
            ]),
            vec![Feature::StructuredOutput]
        );
    }

    /// The code facts of a project whose clone runs in a temporary directory through a list
    /// of arguments, whose justice code has a fact supremacy branch, and that has no shell call.
    fn sandboxed_project() -> PythonFacts {
        use crate::repo::python::conflict_rules::{JusticeFacts, RuleFact};
        use crate::repo::python::safety::{CloneCall, SecurityFacts};
        PythonFacts {
            security: SecurityFacts {
                clone_calls: vec![CloneCall {
                    path: "app/git_ops.py".into(),
                    line: 23,
                    snippet: String::new(),
                    sandboxed: true,
                    error_handled: true,
                    auth_handled: false,
                    function: Some("fetch".into()),
                    list_args: true,
                    via: None,
                    function_snippet: String::new(),
                    callee: "subprocess.run".into(),
                    sandbox_at: Some(Site::new("app/git_ops.py", 18)),
                    handled_at: None,
                    timeout: None,
                    depth: None,
                    url_checks: vec![],
                    error_tests: vec![],
                    removed_early: None,
                }],
                files: 7,
                ..SecurityFacts::default()
            },
            justice: JusticeFacts {
                modules: vec!["app/verdict.py".into()],
                location: Some("app/verdict.py:10".into()),
                branches: 6,
                rules: vec![
                    RuleFact {
                        rule: "fact_supremacy".into(),
                        found: true,
                        location: "app/verdict.py:31".into(),
                        snippet: String::new(),
                        how: "`if not ev.found` lowers the Defense score".into(),
                        partial: None,
                    },
                    RuleFact {
                        rule: "security_override".into(),
                        found: true,
                        location: "app/verdict.py:40".into(),
                        snippet: String::new(),
                        how: "`if is_sec_flaw`: `final = min(final, 3.0)`".into(),
                        partial: None,
                    },
                ],
                calls_llm: true,
                prose_llm_calls: vec![Site::new("app/verdict.py", 65)],
                ..JusticeFacts::default()
            },
            ..PythonFacts::default()
        }
    }

    /// A report's own findings about its code ("uses raw os.system()", "No evidence of
    /// tempfile.TemporaryDirectory()", "No evidence of ... 'Fact Supremacy'") are claims, and
    /// the code that shows the opposite at a line contradicts them.
    #[test]
    fn a_report_s_findings_about_its_own_code_are_checked_against_it() {
        let mut claims = extract(&sentences(&[
            "Findings: Failure. Repository operations use raw os.system() calls rather than safe subprocesses.",
            "Rationale: No evidence of tempfile.TemporaryDirectory() for isolation.",
            "Rationale: No evidence of \"Rule of Security\" or \"Fact Supremacy\" hardcoded logic.",
        ]));
        assert_eq!(
            claims
                .iter()
                .map(|c| (c.feature, c.denied))
                .collect::<Vec<_>>(),
            vec![
                (Feature::SandboxedClone, true),
                (Feature::FactSupremacy, true),
                (Feature::RawShell, false),
                // one sentence denying two rules denies each
                (Feature::SecurityOverride, true),
            ]
        );
        check(&mut claims, &sandboxed_project());
        assert!(
            claims.iter().all(|c| c.status == ClaimStatus::Contradicted),
            "{claims:?}"
        );
        assert_eq!(
            claims[0].code,
            "the clone (subprocess.run at app/git_ops.py:23) runs inside the temporary directory made at line 18"
        );
        assert!(
            claims[1].code.contains("`if not ev.found`"),
            "{}",
            claims[1].code
        );
        assert_eq!(
            claims[1].code_location.as_deref(),
            Some("app/verdict.py:31")
        );
        assert_eq!(
            claims[2].code,
            "none of the 7 Python files of the product code (tests aside) calls os.system or os.popen or passes shell=True; the clone runs through subprocess.run with a list of arguments (app/git_ops.py:23)"
        );
        assert_eq!(
            claims[3].code,
            "the justice code caps the score on a security matter: `if is_sec_flaw`: `final = min(final, 3.0)`"
        );
        assert_eq!(
            claims[3].code_location.as_deref(),
            Some("app/verdict.py:40")
        );

        // The code agrees with them: a shell call supports the claim; a denial the code does
        // not contradict stays unchecked (the detectives' silence proves nothing).
        let mut code = PythonFacts::default();
        code.security.files = 3;
        code.security
            .findings
            .push(crate::repo::python::safety::Finding {
                kind: "os_system".into(),
                path: "app/git_ops.py".into(),
                line: 9,
                snippet: "os.system(cmd)".into(),
                detail: "os.system runs its argument through the shell".into(),
            });
        check(&mut claims, &code);
        assert_eq!(
            claims.iter().map(|c| c.status).collect::<Vec<_>>(),
            vec![
                ClaimStatus::Unchecked,
                ClaimStatus::Unchecked,
                ClaimStatus::Supported,
                ClaimStatus::Unchecked,
            ]
        );
        // a shell call in a test file is none of the product's; a file the parser could not
        // read leaves the claim unchecked
        code.security.findings[0].path = "tests/test_git.py".into();
        check(&mut claims, &code);
        assert_eq!(claims[2].status, ClaimStatus::Contradicted);
        code.notes.push("app/big.py: could not be parsed".into());
        check(&mut claims, &code);
        assert_eq!(claims[2].status, ClaimStatus::Unchecked);
    }

    /// "The node uses a simple LLM prompt to average scores rather than Pythonic rules", in the
    /// report's Chief Justice section, claims an LLM computes the verdict: contradicted by
    /// justice code whose branches set the scores and whose one LLM call writes text only;
    /// supported by an LLM call whose reply is the verdict. A denial, or a prompt outside the
    /// synthesis, claims nothing.
    #[test]
    fn a_claim_that_an_llm_computes_the_verdict_is_checked_where_the_score_is_computed() {
        let mut section = sentences(&[
            "7. Chief Justice Synthesis Engine",
            "Findings: Failure. The current node uses a simple LLM prompt to average scores rather than Pythonic rules.",
        ]);
        section[0].heading = true;
        let mut claims = extract(&section);
        assert_eq!(
            claims.iter().map(|c| c.feature).collect::<Vec<_>>(),
            vec![Feature::LlmSynthesis],
            "{claims:?}"
        );
        // the finding's context says what it is about, its title not read as a heading
        let finding = extract(&sentences(&[
            "7. Chief Justice Synthesis Engine",
            "Final Verdict: 1/5 (Missing Feature)",
            "Findings: Failure.",
            "The current node uses a simple LLM prompt to average scores rather than Pythonic rules.",
        ]));
        assert_eq!(
            finding.iter().map(|c| c.feature).collect::<Vec<_>>(),
            vec![Feature::LlmSynthesis]
        );
        check(&mut claims, &sandboxed_project());
        assert_eq!(claims[0].status, ClaimStatus::Contradicted);
        assert_eq!(
            claims[0].code,
            "the justice code sets the scores in Python branches: `if not ev.found` lowers the Defense score at app/verdict.py:31 and 1 more (app/verdict.py:40); its one LLM call (app/verdict.py:65) is read as text only, no part of the score"
        );
        assert_eq!(
            claims[0].code_location.as_deref(),
            Some("app/verdict.py:31")
        );
        // an LLM call whose reply is the verdict supports it
        let mut code = sandboxed_project();
        code.justice.llm_calls = vec![Site::new("app/verdict.py", 20)];
        check(&mut claims, &code);
        assert_eq!(claims[0].status, ClaimStatus::Supported);
        assert_eq!(
            claims[0].code,
            "the justice code asks an LLM at app/verdict.py:20"
        );
        // no justice code: nothing to check it against
        check(&mut claims, &PythonFacts::default());
        assert_eq!(claims[0].status, ClaimStatus::Unchecked);

        for text in [
            "The ChiefJusticeNode does NOT use an LLM to compute the final scores.",
            "The Prosecutor prompt asks the model to produce scores for each criterion.",
            "Use an LLM prompt to average the scores in the Chief Justice.",
        ] {
            assert!(
                !features(&[text]).contains(&Feature::LlmSynthesis),
                "{text}"
            );
        }
        // a denial listing several terms denies each of them
        let denied: Vec<(Feature, bool)> = extract(&sentences(&[
            "Rationale: No evidence of \"Variance\", \"Rule of Security\" or \"Fact Supremacy\" logic.",
            "There is no timeout, retry or tempfile sandbox around the clone.",
        ]))
        .iter()
        .map(|c| (c.feature, c.denied))
        .collect();
        assert_eq!(
            denied,
            vec![
                (Feature::SandboxedClone, true),
                (Feature::FactSupremacy, true),
                (Feature::SecurityOverride, true),
            ]
        );
        // a Chief Justice sentence says it by itself
        assert!(
            features(&["In our Chief Justice, a GPT-4o call decides the final verdict."])
                .contains(&Feature::LlmSynthesis)
        );
    }

    /// A base class the report says classes inherit from is looked up in the classes and names
    /// the parsed code binds: named by nothing, the claim is contradicted.
    #[test]
    fn an_inheritance_claim_is_checked_against_the_classes_of_the_code() {
        let sources = |star: bool| {
            vec![
                (
                    "app/base.py".to_string(),
                    "from pydantic import BaseModel\n\nclass JudgeBase(BaseModel):\n    score: int\n"
                        .to_string(),
                ),
                (
                    "app/judges.py".to_string(),
                    format!(
                        "{}from app.base import JudgeBase\n\nclass Critic(JudgeBase):\n    pass\n",
                        if star { "from app.util import *\n" } else { "" }
                    ),
                ),
            ]
        };
        let code = crate::repo::python::analyse(sources(false), &[]);
        let verdict = |text: &str, code: &PythonFacts| {
            let mut c = extract(&sentences(&[text]));
            check(&mut c, code);
            c.into_iter()
                .find(|c| c.feature == Feature::Inheritance)
                .map(|c| (c.status, c.code))
        };
        let (status, text) = verdict(
            "All judge nodes inherit from a BaseJudge that enforces the schema.",
            &code,
        )
        .unwrap();
        assert_eq!(status, ClaimStatus::Contradicted);
        assert_eq!(
            text,
            "no class, function, assignment or import in the 2 Python files of the project is named BaseJudge"
        );
        assert_eq!(
            verdict("The critics inherit from the JudgeBase class.", &code),
            Some((
                ClaimStatus::Supported,
                "class Critic (app/judges.py:3) inherits from JudgeBase".to_string()
            ))
        );
        assert_eq!(
            verdict(
                "The opinion models are subclasses of pydantic.BaseModel.",
                &code
            )
            .map(|v| v.0),
            Some(ClaimStatus::Supported)
        );
        // denied, or a name the code may bind without saying (a `*` import): no verdict
        assert_eq!(
            verdict("The judges do not inherit from a BaseJudge.", &code),
            None
        );
        let star = crate::repo::python::analyse(sources(true), &[]);
        assert_eq!(
            verdict("All judge nodes inherit from a BaseJudge.", &star).map(|v| v.0),
            Some(ClaimStatus::Unchecked)
        );
    }

    #[test]
    fn a_criterion_is_named_as_the_loaded_rubric_names_it() {
        let text =
            "Rubric Dimension: Structured Output Enforcement, Judicial Nuance and Dialectics";
        // without the rubric's names, the words read as claims
        assert!(!super::extract(&sentences(&[text]), &[]).is_empty());
        // a rubric that names these criteria (its parenthetical aside): no claim
        let names = [
            "Structured Output Enforcement (Pydantic)".to_string(),
            "JUDICIAL NUANCE AND DIALECTICS".to_string(),
        ];
        assert!(super::extract(&sentences(&[text]), &names).is_empty());
        assert_eq!(
            criterion_name("Theoretical Depth (Documentation)").as_deref(),
            Some("theoretical depth")
        );
        // nothing left to look for: never blanks anything (nor loops)
        assert_eq!(criterion_name(" (Documentation) "), None);
        assert!(!super::extract(&sentences(&[text]), &["()".to_string()]).is_empty());
    }

    #[test]
    fn looking_for_a_feature_supposing_it_or_another_team_s_code_is_no_claim_about_it() {
        for text in [
            // what a check looks for
            "The security scanner flags code that uses os.system.",
            "It runs AST verification on the codebase (no os.system calls, typed state).",
            // an instruction
            "Avoid calling os.system: pass a list of arguments to subprocess.run.",
            // another noun denied
            "There is no temporary directory cleanup after a failed run.",
            // a supposition
            "Without a tempfile sandbox, a hostile repository could write anywhere.",
            // a broader feature, often denied in part
            "The judges do not run in parallel.",
            // a criterion named
            "Rubric Dimension: Structured Output Enforcement, Judicial Nuance and Dialectics",
            // what the peer's code does
            "Unstructured Judge Output: The peer's Judge nodes returned freeform text rather than structured Pydantic models bound with with_structured_output.",
        ] {
            assert!(
                extract(&sentences(&[text])).is_empty(),
                "{text}: {:?}",
                extract(&sentences(&[text]))
            );
        }
        // a section about another team's repository, up to the next section
        let mut peer = sentences(&[
            "3.3 Peer Audit Findings (What Our Agent Discovered in",
            "Their Repo)",
            "No sandboxed cloning: the clone lands in the working directory.",
            "Annotated[Dict[str, List[Evidence]], operator.ior]",
            "Their tools use raw os.system() calls for git.",
            "4. Our Design",
            "Our tools use raw os.system() calls for git.",
        ]);
        for i in [0, 1, 3, 5] {
            peer[i].heading = true;
        }
        assert_eq!(
            extract(&peer)
                .iter()
                .map(|c| (c.feature, c.denied, c.quote.as_str()))
                .collect::<Vec<_>>(),
            vec![(
                Feature::RawShell,
                false,
                "Our tools use raw os.system() calls for git."
            )]
        );
    }

    /// A cue inside a CamelCase name the student chose is part of the name, not a word of the
    /// sentence: "each judge returns a RetryPolicyStore" claims no retry.
    #[test]
    fn a_cue_inside_a_camel_case_name_claims_nothing() {
        assert!(
            !features(&["Each judge returns a structured RetryXabcdefg object to the bench."])
                .contains(&Feature::StructuredRetry)
        );
        assert!(
            features(&["Each judge call is retried with the structured schema when it fails."])
                .contains(&Feature::StructuredRetry)
        );
        assert!(
            !features(&["The JudgeFanOutRouter object holds the scores of the bench."])
                .contains(&Feature::ParallelExecution)
        );
    }

    #[test]
    fn overlap_figures_are_read_from_sentences_about_prompts_only() {
        assert_eq!(
            overlap_figure("the persona prompts share 12% of their text, well under 50%"),
            Some(12.0)
        );
        assert_eq!(
            overlap_figure("if two persona prompts share more than 50% of text, we flag collusion"),
            None
        );
        assert_eq!(
            overlap_figure("persona collusion: the peer's judge prompts shared 90% identical text"),
            None
        );
        assert_eq!(
            overlap_figure("prompt similarity stays below 30 percent"),
            Some(30.0)
        );
        assert_eq!(overlap_figure("test coverage is 85%"), None);
        assert_eq!(overlap_figure("the prompts are distinct"), None);
    }

    #[test]
    fn reducers_are_paired_with_the_field_they_follow() {
        let fields = ["evidences", "opinions"];
        assert_eq!(
            stated_reducers(
                "evidences are merged with operator.ior, while opinions use operator.add",
                &fields
            ),
            vec![
                ("evidences".to_string(), "operator.ior".to_string()),
                ("opinions".to_string(), "operator.add".to_string())
            ]
        );
        // Fields listed together are not paired with a reducer named after the others.
        assert_eq!(
            stated_reducers("evidences and opinions have reducers", &fields),
            vec![]
        );
        // A field name inside another word is not a mention.
        assert!(stated_reducers("all_opinions_raw uses operator.add", &fields).is_empty());
    }

    /// A graph whose judges run `in_parallel` (fanned out from the aggregator) or one after
    /// another, with three detectives joined at the aggregator, one of which nothing leads to.
    fn courtroom(in_parallel: bool) -> PythonFacts {
        let state = "import operator\nfrom typing import Annotated, List, TypedDict\nfrom pydantic import BaseModel\n\nclass Evidence(BaseModel):\n    found: bool\n\nclass Opinion(BaseModel):\n    score: int\n\nclass State(TypedDict):\n    evidences: Annotated[List[Evidence], operator.add]\n    opinions: Annotated[List[Opinion], operator.add]\n";
        let wiring = if in_parallel {
            "for j in ['prosecutor', 'defense', 'tech_lead']:\n    g.add_edge('aggregator', j)\n    g.add_edge(j, 'justice')\n"
        } else {
            "g.add_edge('aggregator', 'prosecutor')\ng.add_edge('prosecutor', 'defense')\ng.add_edge('defense', 'tech_lead')\ng.add_edge('tech_lead', 'justice')\n"
        };
        let graph = format!(
            "from langgraph.graph import StateGraph, START, END\nfrom app.state import State, Evidence, Opinion\n\ndef repo(s):\n    return {{'evidences': [Evidence(found=True)]}}\n\ndef doc(s):\n    return {{'evidences': [Evidence(found=True)]}}\n\ndef vision(s):\n    return {{'evidences': [Evidence(found=True)]}}\n\ndef aggregator(s):\n    return {{}}\n\ndef prosecutor(s):\n    return {{'opinions': [Opinion(score=1)]}}\n\ndef defense(s):\n    return {{'opinions': [Opinion(score=5)]}}\n\ndef tech_lead(s):\n    return {{'opinions': [Opinion(score=3)]}}\n\ndef justice(s):\n    return {{}}\n\ng = StateGraph(State)\ng.add_node('repo', repo)\ng.add_node('doc', doc)\ng.add_node('vision', vision)\ng.add_node('aggregator', aggregator)\ng.add_node('prosecutor', prosecutor)\ng.add_node('defense', defense)\ng.add_node('tech_lead', tech_lead)\ng.add_node('justice', justice)\ng.add_edge(START, 'repo')\ng.add_edge(START, 'doc')\ng.add_edge('repo', 'aggregator')\ng.add_edge('doc', 'aggregator')\ng.add_edge('vision', 'aggregator')\n{wiring}g.add_edge('justice', END)\napp = g.compile()\n"
        );
        crate::repo::python::analyse(
            vec![
                ("app/state.py".to_string(), state.to_string()),
                ("app/graph.py".to_string(), graph),
            ],
            &[],
        )
    }

    /// "The judges run in parallel" is decided by the judges' own fan-out, not by the
    /// detectives'; a fan-in is stated with the nodes that run.
    #[test]
    fn a_claim_of_parallel_judges_is_decided_by_the_judges_fan_out() {
        let text = [
            "The detectives collect evidence from the repository and the report.",
            "The aggregator node fans out to three judges that execute concurrently.",
            "The aggregator is the fan-in node where the detectives' evidence is joined.",
        ];
        let verdict = |code: &PythonFacts, feature: Feature| {
            let mut c = extract(&sentences(&text));
            check(&mut c, code);
            c.into_iter().find(|c| c.feature == feature).unwrap()
        };
        let sequential = courtroom(false);
        assert!(
            sequential.graphs[0]
                .fan_out
                .iter()
                .any(|f| f.from == "START"),
            "the detectives fan out: {:?}",
            sequential.graphs[0].fan_out
        );
        let p = verdict(&sequential, Feature::ParallelExecution);
        assert_eq!(p.status, ClaimStatus::Contradicted, "{p:?}");
        assert!(p.quote.contains("three judges"), "{p:?}");
        assert!(
            p.code.contains("the judges do not run in parallel"),
            "{p:?}"
        );
        let parallel = courtroom(true);
        let p = verdict(&parallel, Feature::ParallelExecution);
        assert_eq!(p.status, ClaimStatus::Supported, "{p:?}");
        assert!(p.code.contains("fans out to the judges"), "{p:?}");
        // the join is stated with the detectives that run: `vision` has no way in
        let f = verdict(&parallel, Feature::FanIn);
        assert_eq!(f.status, ClaimStatus::Supported, "{f:?}");
        assert!(f.code.contains("joins repo, doc"), "{f:?}");
        assert!(!f.code.contains("vision"), "{f:?}");
        // a sentence about the detectives alone is decided as before
        let mut c = extract(&sentences(&["The three detectives run in parallel."]));
        check(&mut c, &sequential);
        assert_eq!(c[0].status, ClaimStatus::Supported, "{c:?}");
    }

    /// A quotation is someone else's words (a peer's finding, a prompt, an example message):
    /// the cues inside it claim nothing about this code, over several sentences too.
    #[test]
    fn a_quoted_finding_is_no_claim_of_the_report() {
        let quoted = [
            "- Description: \"Your report claims deterministic rules, but your chief_justice_node calls an LLM with the prompt 'decide the final score'.",
            "The judges run in parallel, it says.\"",
        ];
        assert!(features(&quoted).is_empty(), "{:?}", features(&quoted));
        // the same words in the report's own voice
        let own = [
            "Our chief_justice_node calls an LLM with the prompt 'decide the final score'.",
            "The judges run in parallel, it says.",
        ];
        assert_eq!(
            features(&own),
            vec![Feature::ParallelExecution, Feature::LlmSynthesis]
        );
        // a term in quotes is still the report's own word
        assert_eq!(
            features(&["The three judges run \"in parallel\" on the same evidence."]),
            vec![Feature::ParallelExecution]
        );
    }
}
