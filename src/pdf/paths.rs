//! Repository paths the report claims, and their check against the audited commit's files.
//!
//! Extraction handles the shapes real reports have: backticked or plain, `./` prefixes, line
//! numbers (`src/graph.py:42`), trailing punctuation, list numbers glued on either side
//! (`judges.py.1`, `1.src/graph.py`), Windows separators, URLs (skipped). The page text is
//! normalised first (one word per line, hyphenation and paths split after `/` are repaired by
//! [`super::ingest::normalise_page`]).
//!
//! Claims include dotfiles (`.env.example`, `.github/workflows/ci.yml`) and documents and images
//! (`reports/final_report.pdf`, `.tex`, `.png`, `.mmd`).
//!
//! Matching is exact and repo-relative; a claim that is a unique path-component suffix of a repo
//! file (`nodes/judges.py` for `src/nodes/judges.py`) is verified and says so. A path that exists
//! in the repository is never called hallucinated. A file name that text extraction split at a
//! space or an underscore (`src/tools/repo tools.py`, `Final Report.pdf` in a long name) is
//! matched, with the words before it, to the repository file it spells; a fragment of a longer
//! path is never reported as a path of its own.

use super::file_names::{PATH_RE, REPO_DIRS, clean_path, is_prose_word};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Status of a claimed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathStatus {
    /// Not yet checked against the repository (before the aggregation barrier, or no file list).
    Unchecked,
    /// The file (or directory) exists in the audited commit.
    Verified,
    /// The report claims it but the audited commit has no such file.
    Hallucinated,
    /// Absent, but the report presents it as future work.
    Suggested,
    /// Absent, and the report itself says so (`the peer claimed src/x.py, no such file`,
    /// `tools/git.py was renamed`): a mention, not a claim that it exists.
    Disclaimed,
    /// Named as another team's file (`the peer's graph.py`) or inside a quoted example
    /// (`e.g., "Invalid syntax in src/broken.py"`): the report does not cite it as part of this
    /// project, whether or not the audited commit has a file of that name.
    Mentioned,
}

/// Why a path the report names is no claim about this project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotClaimed {
    /// Another team's file: `the peer's git_tools.py`.
    OtherTeam,
    /// Inside a quoted example: `e.g., "Invalid Python syntax in src/broken_module.py"`.
    Example,
}

impl PathStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PathStatus::Unchecked => "unchecked",
            PathStatus::Verified => "verified",
            PathStatus::Hallucinated => "hallucinated",
            PathStatus::Suggested => "suggested",
            PathStatus::Disclaimed => "disclaimed",
            PathStatus::Mentioned => "mentioned",
        }
    }
}

/// One path the report mentions (first occurrence; `pages` lists every page it appears on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimedPath {
    /// Repo-relative, `/`-separated, without `./` or line numbers.
    pub path: String,
    pub status: PathStatus,
    /// Page of the first mention.
    pub page: u32,
    /// The sentence around the first mention.
    pub context: String,
    /// Line number given with the path (`src/graph.py:42`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Every page mentioning it.
    #[serde(default)]
    pub pages: Vec<u32>,
    /// The repository file it was matched to when that differs from `path` (suffix match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// The report's other spellings of the same repository file (`graph.py` beside
    /// `src/graph.py`): merged into this claim, one file (see [`merge_duplicates`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spellings: Vec<String>,
    /// Whether the path is a directory (`src/nodes/`).
    #[serde(default)]
    pub directory: bool,
    /// Whether every mention reads as future work (`we plan to add ...`).
    #[serde(default)]
    pub future_work: bool,
    /// Whether every mention says the file does not exist (hallucinated, renamed, removed).
    #[serde(default)]
    pub disclaimed: bool,
    /// Set when no mention cites it as part of this project: each names another team's file or
    /// sits in a quoted example (the first mention's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_claimed: Option<NotClaimed>,
    /// The words just before the first mention (nearest last), when the path may be the end of
    /// a name that text extraction split at spaces.
    #[serde(skip)]
    pub preceding: Vec<String>,
    /// Whether a line break (not a space) separates the mention from `preceding`: a name
    /// wrapped inside a table cell (`src/tools/repo_t` / `ools.py`) continues without a space.
    #[serde(skip)]
    pub preceding_wrapped: bool,
}

/// Words kept before a mention to repair a file name split at spaces.
const PRECEDING_WORDS: usize = 12;

static DIR_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\./)?(?:[A-Za-z0-9_\-]+/)+").expect("static regex"));

/// Words that present a file as future work rather than as something built.
const FUTURE_CUES: &[&str] = &[
    "future work",
    "we plan",
    "we will",
    "will add",
    "will be added",
    "will create",
    "will implement",
    "will be implemented",
    "could add",
    "could be added",
    "would add",
    "planned",
    "next step",
    "next steps",
    "to be added",
    "not yet",
    "todo",
    "roadmap",
    "propose",
    "proposed",
    "should be added",
    "intend to",
    "in a future",
    "[new]",
    "(new)",
    "new file",
    "to be created",
];

/// Bytes looked at on either side of a mention (its token, its sentence, the words before
/// it): the work per mention is bounded whatever the page holds (a page of paths with no
/// sentence end would otherwise be re-read for each of them).
const WINDOW: usize = 600;

/// The largest char boundary of `text` at or below `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `text` at or above `i`.
fn ceil_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The part of `text` around `start..end` within [`WINDOW`] bytes on each side, and the
/// offset of its first byte in `text`.
fn window(text: &str, start: usize, end: usize) -> (&str, usize) {
    let s = floor_boundary(text, start.saturating_sub(WINDOW));
    let e = ceil_boundary(text, end.saturating_add(WINDOW));
    (&text[s..e], s)
}

/// The whitespace-delimited token around `start..end` of `text` (within [`WINDOW`]).
fn token_around(text: &str, start: usize, end: usize) -> &str {
    let (text, off) = window(text, start, end);
    let (start, end) = (start - off, end - off);
    let s = text[..start]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let e = text[end..]
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
        .map(|(i, _)| end + i)
        .unwrap_or(text.len());
    &text[s..e]
}

/// `C:\Users\...\state.py`, `/home/me/x.py`, `~/x.py`: a path on someone's machine, not in the
/// repository.
fn is_absolute(token: &str) -> bool {
    let t = token.trim_start_matches(['`', '"', '\'', '(', '[', '<']);
    let b = t.as_bytes();
    (b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/'))
        || t.starts_with('~')
        || t.starts_with("/home/")
        || t.starts_with("/Users/")
        || t.starts_with("/tmp/")
        || t.contains("/.../")
        || t.contains("\\...\\")
}

fn is_url(token: &str) -> bool {
    let t = token.to_ascii_lowercase();
    t.contains("://") || t.contains("www.") || t.contains("github.com") || t.contains('@')
}

/// Characters of a mention's sentence kept as its context.
const CONTEXT_CHARS: usize = 240;

/// The sentence of `text` around `start..end` as written (looked for within a few hundred
/// bytes: bounded work per mention).
fn sentence_around(text: &str, start: usize, end: usize) -> &str {
    use memchr::{memmem, memrchr, memrchr3};
    let from = floor_boundary(text, start.saturating_sub(CONTEXT_CHARS + 60));
    let to = ceil_boundary(text, end.saturating_add(CONTEXT_CHARS + 60));
    let (text, start, end) = (&text[from..to], start - from, end - from);
    let b = text.as_bytes();
    // (byte searches: the bytes sought are ASCII, so every hit is a char boundary)
    let last_end = memrchr3(b'.', b'!', b'?', &b[..start]).max(memrchr(b'\n', &b[..start]));
    let flat_start = last_end
        .map(|i| {
            // a dot inside a file name is not a sentence end
            if b[i] == b'\n' || b.get(i + 1).is_some_and(u8::is_ascii_whitespace) {
                i + 1
            } else {
                memrchr(b'\n', &b[..i]).map(|j| j + 1).unwrap_or(0)
            }
        })
        .unwrap_or(0);
    let rest = &b[end..];
    let flat_end = memmem::find(rest, b". ")
        .or_else(|| memmem::find(rest, b".\n"))
        .map(|i| end + i + 1)
        .unwrap_or(text.len())
        .min(
            memmem::find(rest, b"\n\n")
                .map(|i| end + i)
                .unwrap_or(text.len()),
        );
    &text[flat_start..flat_end.max(flat_start)]
}

/// A sentence with its whitespace collapsed, at most [`CONTEXT_CHARS`] characters.
fn collapse(sentence: &str) -> String {
    let mut flat = sentence
        .split_whitespace()
        .flat_map(|w| std::iter::once(' ').chain(w.chars()))
        .skip(1);
    let s: String = flat.by_ref().take(CONTEXT_CHARS).collect();
    if flat.next().is_some() {
        // as ever: 237 characters and an ellipsis
        let mut cut: String = s.chars().take(CONTEXT_CHARS - 3).collect();
        cut.push_str("...");
        cut
    } else {
        s
    }
}

/// Words saying a mentioned file does not exist.
const NEGATION_CUES: &[&str] = &[
    "hallucinat",
    "does not exist",
    "doesn't exist",
    "did not exist",
    "not exist",
    "no such file",
    "non-existent",
    "nonexistent",
    "renamed",
    "was removed",
    "were removed",
    "deleted",
    "found no",
];

/// One case-insensitive pattern for a list of cues (one pass over a sentence, not one per cue).
fn any_of(cues: &[&str]) -> Regex {
    // the words of a cue may be split by any whitespace in the raw sentence
    let alternatives: Vec<String> = cues
        .iter()
        .map(|c| {
            c.split(' ')
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(r"\s+")
        })
        .collect();
    Regex::new(&format!("(?i){}", alternatives.join("|"))).expect("static regex")
}

static NEGATION_RE: LazyLock<Regex> = LazyLock::new(|| any_of(NEGATION_CUES));
static FUTURE_RE: LazyLock<Regex> = LazyLock::new(|| any_of(FUTURE_CUES));

fn is_disclaimer(context: &str) -> bool {
    NEGATION_RE.is_match(context)
}

fn is_future(context: &str) -> bool {
    FUTURE_RE.is_match(context)
}

/// Distinct claimed paths kept with their sentence and the words before them; later ones
/// (a report listing thousands of paths) keep their path, pages and cues only, and are still
/// checked and counted.
pub const MAX_DETAILED: usize = 2000;

/// Every repository path the (normalised) pages mention, deduplicated, in order of first mention.
/// Linear in the text: each mention is looked at within a bounded window, and duplicates are
/// found by hashing.
pub fn extract(pages: &[String]) -> Vec<ClaimedPath> {
    let mut out: Vec<ClaimedPath> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, text) in pages.iter().enumerate() {
        let page = i as u32 + 1;
        // spans of the file mentions, in increasing order (the regex finds them left to right)
        let mut seen_spans: Vec<(usize, usize)> = Vec::new();
        // Names drawn in a directory tree are claimed with the path the tree gives them.
        let trees = super::tree::read(text);
        for m in PATH_RE.captures_iter(text) {
            let Some(whole) = m.get(0) else { continue };
            if trees.covers(whole.start()) {
                continue;
            }
            let token = token_around(text, whole.start(), whole.end());
            if is_url(token) || is_absolute(token) {
                continue;
            }
            let file = &text[whole.start()..whole.end()];
            let file = file.split(':').next().unwrap_or(file);
            let Some(path) = clean_path(file) else {
                continue;
            };
            let bare = !path.contains('/');
            // A bare dotted word is only a claim for unambiguous file extensions.
            if bare && is_prose_word(&path) {
                continue;
            }
            let line = m.get(1).and_then(|l| l.as_str().parse().ok());
            let ctx = || sentence_around(text, whole.start(), whole.end());
            seen_spans.push((whole.start(), whole.end()));
            let before = out.len();
            let mention = Mention {
                directory: false,
                not_claimed: not_claimed(text, whole.start()),
            };
            add(&mut out, &mut index, path, page, ctx, line, mention);
            if out.len() > before
                && out.len() <= MAX_DETAILED
                && let Some(c) = out.last_mut()
            {
                (c.preceding, c.preceding_wrapped) = preceding_words(text, whole.start());
            }
        }
        for f in &trees.files {
            let line = || &text[f.line.clone()];
            add(
                &mut out,
                &mut index,
                f.path.clone(),
                page,
                line,
                None,
                Mention {
                    directory: false,
                    not_claimed: None,
                },
            );
        }
        for m in DIR_RE.find_iter(text) {
            if trees.covers(m.start()) {
                continue;
            }
            // the first file span ending after this match starts: does it overlap?
            let k = seen_spans.partition_point(|&(_, e)| e <= m.start());
            if seen_spans.get(k).is_some_and(|&(s, _)| s < m.end()) {
                continue;
            }
            // the next character must not continue a path (then it was a file, handled above)
            let next = text[m.end()..].chars().next();
            if next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let prev = text[..m.start()].chars().next_back();
            if prev.is_some_and(|c| c.is_alphanumeric() || c == '/' || c == '.' || c == '_') {
                continue;
            }
            let token = token_around(text, m.start(), m.end());
            if is_url(token) {
                continue;
            }
            let Some(path) = clean_path(m.as_str()) else {
                continue;
            };
            let first = path.split('/').next().unwrap_or("");
            if !REPO_DIRS.contains(&first.to_ascii_lowercase().as_str()) {
                continue;
            }
            let ctx = || sentence_around(text, m.start(), m.end());
            let mention = Mention {
                directory: true,
                not_claimed: not_claimed(text, m.start()),
            };
            add(&mut out, &mut index, path, page, ctx, None, mention);
        }
    }
    out
}

/// Up to [`PRECEDING_WORDS`] whitespace-separated words right before `start` (nearest last),
/// when the mention directly follows a space or a line break (a name split by text extraction
/// or wrapped in a table cell continues there), and whether it was a line break; empty
/// otherwise.
fn preceding_words(text: &str, start: usize) -> (Vec<String>, bool) {
    let before = &text[floor_boundary(text, start.saturating_sub(WINDOW))..start];
    let wrapped = before.ends_with(['\n', '\r']);
    if !wrapped && !before.ends_with([' ', '\u{a0}']) {
        return (Vec::new(), false);
    }
    let mut words: Vec<String> = before
        .split_whitespace()
        .rev()
        .take(PRECEDING_WORDS)
        .map(|w| w.trim_start_matches(['`', '"', '\'', '(', '[']).to_string())
        .collect();
    words.reverse();
    (words, wrapped)
}

/// What a mention is: a directory or a file, and why it is no claim, if it is none.
struct Mention {
    directory: bool,
    not_claimed: Option<NotClaimed>,
}

/// Possessives that give a file to another team (lower case, as written before the path).
const OTHER_TEAM: &[&str] = &[
    "peer's",
    "peer\u{2019}s",
    "peers'",
    "peers\u{2019}",
    "other team's",
    "other team\u{2019}s",
    "another team's",
    "another team\u{2019}s",
];

/// Words that introduce an example (lower case).
const EXAMPLE_CUES: &[&str] = &["e.g.", "for example", "for instance", "such as", "i.e."];

/// Why the mention at `start` of `text` is no claim about this project: the possessive of
/// another team right before it ("the peer's git_tools.py"), or an open quotation that an
/// example cue introduces ('e.g., "Invalid Python syntax in src/broken_module.py"').
fn not_claimed(text: &str, start: usize) -> Option<NotClaimed> {
    let from = floor_boundary(text, start.saturating_sub(200));
    let before = &text[from..start];
    // within its paragraph
    let before = before.rsplit("\n\n").next().unwrap_or(before);
    let near = before
        .trim_end()
        .trim_end_matches(['`', '"', '\'', '(', '\u{201c}'])
        .trim_end()
        .to_lowercase();
    if OTHER_TEAM.iter().any(|p| near.ends_with(p)) {
        return Some(NotClaimed::OtherTeam);
    }
    // the quotation the mention is in: the last quote mark before it opens one
    let quotes: Vec<(usize, char)> = before
        .char_indices()
        .filter(|(_, c)| matches!(c, '"' | '\u{201c}' | '\u{201d}'))
        .collect();
    let &(at, mark) = quotes.last()?;
    // a straight quote opens after a space or an opening bracket
    let prev = before[..at].chars().next_back();
    let opens = mark == '\u{201c}'
        || (mark == '"' && prev.is_none_or(|p| p.is_whitespace() || "([{:".contains(p)));
    if !opens {
        return None;
    }
    let lead = before[floor_boundary(before, at.saturating_sub(30))..at].to_lowercase();
    EXAMPLE_CUES
        .iter()
        .any(|c| lead.contains(c))
        .then_some(NotClaimed::Example)
}

fn add<'t>(
    out: &mut Vec<ClaimedPath>,
    index: &mut HashMap<String, usize>,
    path: String,
    page: u32,
    sentence: impl FnOnce() -> &'t str,
    line: Option<u32>,
    mention: Mention,
) {
    let Mention {
        directory,
        not_claimed,
    } = mention;
    if let Some(&i) = index.get(&path) {
        let existing = &mut out[i];
        if existing.pages.last() != Some(&page) {
            existing.pages.push(page);
        }
        // a path is claimed as soon as one mention claims it, and is quoted where it is
        let first_claim = existing.not_claimed.is_some() && not_claimed.is_none();
        existing.not_claimed = existing.not_claimed.and(not_claimed);
        // a cue holds only if every mention has it: read this one's sentence only if needed
        if existing.future_work || existing.disclaimed || first_claim {
            let sentence = sentence();
            existing.future_work &= is_future(sentence);
            existing.disclaimed &= is_disclaimer(sentence);
            if first_claim && !existing.context.is_empty() {
                existing.page = page;
                existing.context = collapse(sentence);
                existing.line = line;
            }
        }
        if existing.line.is_none() {
            existing.line = line;
        }
        return;
    }
    let sentence = sentence();
    let future = is_future(sentence);
    let disclaimed = is_disclaimer(sentence);
    index.insert(path.clone(), out.len());
    let context = if out.len() < MAX_DETAILED {
        collapse(sentence)
    } else {
        String::new()
    };
    out.push(ClaimedPath {
        path,
        status: PathStatus::Unchecked,
        page,
        context,
        line,
        pages: vec![page],
        matched: None,
        spellings: Vec::new(),
        directory,
        future_work: future,
        disclaimed,
        not_claimed,
        preceding: Vec::new(),
        preceding_wrapped: false,
    });
}

/// Claimed paths listed one by one in the evidence and kept in the facts after the check
/// (every one is checked and counted in [`PathCounts`]).
pub const MAX_LISTED: usize = 60;

/// How many claimed paths the check found of each status (all of them, listed or not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathCounts {
    pub total: usize,
    pub verified: usize,
    pub hallucinated: usize,
    pub suggested: usize,
    pub disclaimed: usize,
    /// Named as another team's file or in an example, not claimed (0 in counts stored by an
    /// earlier version).
    #[serde(default)]
    pub mentioned: usize,
    pub unchecked: usize,
}

impl PathCounts {
    pub fn of(claims: &[ClaimedPath]) -> PathCounts {
        let mut n = PathCounts {
            total: claims.len(),
            ..PathCounts::default()
        };
        for c in claims {
            match c.status {
                PathStatus::Verified => n.verified += 1,
                PathStatus::Hallucinated => n.hallucinated += 1,
                PathStatus::Suggested => n.suggested += 1,
                PathStatus::Disclaimed => n.disclaimed += 1,
                PathStatus::Mentioned => n.mentioned += 1,
                PathStatus::Unchecked => n.unchecked += 1,
            }
        }
        n
    }
}

/// Keeps at most [`MAX_LISTED`] claims, in their order: the hallucinated ones first (what a
/// reader must see), then the others by first mention.
pub fn keep_listed(claims: &mut Vec<ClaimedPath>) {
    if claims.len() <= MAX_LISTED {
        return;
    }
    let mut keep = vec![false; claims.len()];
    let mut room = MAX_LISTED;
    for pass_hallucinated in [true, false] {
        for (i, c) in claims.iter().enumerate() {
            if room == 0 {
                break;
            }
            if !keep[i] && (c.status == PathStatus::Hallucinated) == pass_hallucinated {
                keep[i] = true;
                room -= 1;
            }
        }
    }
    let mut i = 0;
    claims.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// Normalises repository file paths for matching (`/` separators, no `./`).
fn norm_repo(p: &str) -> String {
    let p = p.replace('\\', "/");
    p.trim_start_matches("./").trim_matches('/').to_string()
}

/// Every proper path-component suffix of a set of paths (`b/c.py` and `c.py` of `a/b/c.py`):
/// how many paths end with it and the first three, for lookups in constant time.
#[derive(Default)]
struct Suffixes<'a>(HashMap<&'a str, (usize, Vec<&'a str>)>);

impl<'a> Suffixes<'a> {
    fn of(paths: impl Iterator<Item = &'a str>) -> Self {
        let mut map: HashMap<&'a str, (usize, Vec<&'a str>)> = HashMap::new();
        for p in paths {
            for (i, _) in p.match_indices('/') {
                let e = map.entry(&p[i + 1..]).or_default();
                e.0 += 1;
                if e.1.len() < 3 {
                    e.1.push(p);
                }
            }
        }
        Suffixes(map)
    }

    /// The paths ending with `/tail`: how many, and the first three.
    fn ending_with(&self, tail: &str) -> (usize, &[&'a str]) {
        self.0
            .get(tail)
            .map_or((0, &[][..]), |(n, first)| (*n, first.as_slice()))
    }
}

/// The repository's files, indexed for the checks.
struct RepoIndex<'a> {
    files: HashSet<&'a str>,
    file_suffixes: Suffixes<'a>,
    /// lower-cased path → the first file spelled so
    lower: HashMap<String, &'a str>,
    dirs: HashSet<&'a str>,
    dir_suffixes: Suffixes<'a>,
}

impl<'a> RepoIndex<'a> {
    fn new(files: &'a [String]) -> Self {
        let mut lower = HashMap::new();
        for f in files {
            lower.entry(f.to_lowercase()).or_insert(f.as_str());
        }
        let dirs: HashSet<&'a str> = files
            .iter()
            .flat_map(|f| f.match_indices('/').map(move |(i, _)| &f[..i]))
            .collect();
        RepoIndex {
            files: files.iter().map(String::as_str).collect(),
            file_suffixes: Suffixes::of(files.iter().map(String::as_str)),
            lower,
            dir_suffixes: Suffixes::of(dirs.iter().copied()),
            dirs,
        }
    }

    /// A file exactly, or as the path-component suffix of exactly one file.
    fn file_exists(&self, cand: &str) -> bool {
        self.files.contains(cand) || self.file_suffixes.ending_with(cand).0 == 1
    }
}

/// Sets the status of each claimed path from the repository's files. An empty file list leaves
/// every status `unchecked` (nothing can be concluded). Linear in the claims and the files
/// (suffixes are looked up in an index, never searched for).
pub fn check(claims: &mut [ClaimedPath], repo_files: &[String]) {
    if repo_files.is_empty() {
        for c in claims.iter_mut() {
            c.status = PathStatus::Unchecked;
            c.matched = None;
        }
        return;
    }
    let files: Vec<String> = repo_files.iter().map(|f| norm_repo(f)).collect();
    let repo = RepoIndex::new(&files);
    for c in claims.iter_mut() {
        c.matched = None;
        if c.not_claimed.is_some() {
            c.status = PathStatus::Mentioned;
            continue;
        }
        if !c.directory {
            rejoin_split_name(c, &repo);
        }
        let p = c.path.as_str();
        let found = if c.directory {
            if repo.dirs.contains(p) {
                Some(None)
            } else {
                match repo.dir_suffixes.ending_with(p) {
                    (0, _) => None,
                    (1, first) => Some(first.first().map(|d| d.to_string())),
                    (n, _) => Some(Some(format!("{n} directories end with {p}/"))),
                }
            }
        } else if repo.files.contains(p) {
            Some(None)
        } else {
            match repo.file_suffixes.ending_with(p) {
                // A case difference only (`Readme.md`): the file exists.
                (0, _) => repo
                    .lower
                    .get(&p.to_lowercase())
                    .map(|f| Some(f.to_string())),
                (1, first) => Some(first.first().map(|f| f.to_string())),
                (n, first) => Some(Some(format!(
                    "{n} files end with {p}: {}",
                    first.join(", ")
                ))),
            }
        };
        c.status = match found {
            Some(m) => {
                c.matched = m;
                PathStatus::Verified
            }
            None if c.disclaimed => PathStatus::Disclaimed,
            None if c.future_work => PathStatus::Suggested,
            None => PathStatus::Hallucinated,
        };
    }
}

/// Puts back the words text extraction split from a file name: when the words before the
/// mention, joined to it by a space, an underscore, a hyphen or nothing, spell a repository
/// file (exactly or as its path-component suffix), the claim is that file. Otherwise, when
/// the word just before is a path that runs into the mention (`src/tools/repo tools.py`), the
/// claim is the whole text the report wrote, not its last fragment. A name wrapped at a line
/// end (`src/tools/repo_t` / `ools.py` in a table cell) is joined the same way.
fn rejoin_split_name(c: &mut ClaimedPath, repo: &RepoIndex<'_>) {
    if c.preceding.is_empty() {
        return;
    }
    let words: Vec<String> = c
        .preceding
        .iter()
        .map(|w| w.trim_start_matches("./").to_string())
        .collect();
    for k in 1..=words.len() {
        let tail = &words[words.len() - k..];
        if tail.iter().any(|w| w.is_empty() || is_url(w)) {
            break;
        }
        for sep in [" ", "_", "-", ""] {
            let cand = format!("{}{sep}{}", tail.join(sep), c.path);
            if repo.file_exists(&cand) {
                c.path = cand;
                c.preceding.clear();
                return;
            }
        }
    }
    let last = &words[words.len() - 1];
    let path_like = last.contains('/')
        && last.ends_with(|ch: char| ch.is_alphanumeric())
        && last
            .chars()
            .all(|ch| ch.is_alphanumeric() || "/_-.".contains(ch));
    // Across a line break only a join that spells a repository file is taken: a line ending
    // in a directory (`src/nodes`) may well be followed by a line naming another file.
    if path_like && !c.path.contains('/') && !c.preceding_wrapped {
        c.path = format!("{last} {}", c.path);
    }
    c.preceding.clear();
}

/// Claims that [`check`] resolved to the same path are one claim (pages united): the same
/// spelling twice, or two spellings of one repository file (`base_judge.py` matched as
/// `src/agents/judges/base_judge.py` beside that full path), kept under the spelling that is the
/// file's path with the others in `spellings`. A path not found that is the tail of exactly one
/// longer claimed path (`report_peer_abc.md`, `reports/report_peer_abc.md` beside
/// `audit/reports/report_peer_abc.md`) is a mention of that path, not a claim of its own.
pub fn merge_duplicates(claims: &mut Vec<ClaimedPath>) {
    let mut out: Vec<ClaimedPath> = Vec::with_capacity(claims.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    for mut c in claims.drain(..) {
        // a verified file is keyed by the repository file it resolved to
        let key = match (&c.status, &c.matched) {
            (PathStatus::Verified, Some(m)) if !c.directory => m.clone(),
            _ => c.path.clone(),
        };
        if let Some(&i) = index.get(&key) {
            let kept = &mut out[i];
            if kept.path != c.path {
                // the spelling that is the file's own path leads
                if kept.matched.is_some() && c.matched.is_none() {
                    std::mem::swap(kept, &mut c);
                    kept.spellings = std::mem::take(&mut c.spellings);
                }
                if !kept.spellings.contains(&c.path) && kept.path != c.path {
                    kept.spellings.push(c.path.clone());
                }
                for s in std::mem::take(&mut c.spellings) {
                    if !kept.spellings.contains(&s) && kept.path != s {
                        kept.spellings.push(s);
                    }
                }
            }
            unite_pages(kept, &c);
            continue;
        }
        index.insert(key, out.len());
        out.push(c);
    }
    // Each fragment goes where every longer claim ending with it goes (each of those already
    // resolved: longer paths first), when that is one place. Linear in the total length of the
    // paths: a claim is a candidate for each of its path-component suffixes.
    let mut target: Vec<usize> = (0..out.len()).collect();
    {
        let mut by_tail: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, c) in out.iter().enumerate().filter(|(_, c)| !c.directory) {
            for (i, _) in c.path.match_indices('/') {
                by_tail.entry(&c.path[i + 1..]).or_default().push(j);
            }
        }
        let mut order: Vec<usize> = (0..out.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(out[i].path.len()));
        for i in order {
            let c = &out[i];
            // (another team's file of the same name is theirs, not a mention of this one)
            let fragment = !c.directory
                && !matches!(
                    c.status,
                    PathStatus::Verified | PathStatus::Unchecked | PathStatus::Mentioned
                );
            let Some(longer) = by_tail.get(c.path.as_str()).filter(|_| fragment) else {
                continue;
            };
            let mut places = longer.iter().map(|&j| target[j]);
            if let Some(first) = places.next()
                && places.all(|t| t == first)
            {
                target[i] = first;
            }
        }
    }
    let mut kept: Vec<Option<ClaimedPath>> = out.into_iter().map(Some).collect();
    for i in 0..kept.len() {
        let t = target[i];
        if t != i
            && let Some(c) = kept[i].take()
            && let Some(longer) = kept[t].as_mut()
        {
            unite_pages(longer, &c);
        }
    }
    *claims = kept.into_iter().flatten().collect();
}

fn unite_pages(into: &mut ClaimedPath, from: &ClaimedPath) {
    into.pages.extend_from_slice(&from.pages);
    into.pages.sort_unstable();
    into.pages.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<String> {
        extract(&[text.to_string()])
            .into_iter()
            .map(|c| c.path)
            .collect()
    }

    #[test]
    fn every_shape_of_path_is_extracted_cleanly() {
        assert_eq!(
            paths("The graph lives in `src/graph.py`."),
            vec!["src/graph.py"]
        );
        assert_eq!(paths("see ./src/state.py, then"), vec!["src/state.py"]);
        assert_eq!(paths("at src/graph.py:42 we"), vec!["src/graph.py"]);
        assert_eq!(
            paths("1. src/nodes/judges.py.1 Next"),
            vec!["src/nodes/judges.py"]
        );
        assert_eq!(
            paths("1.src/nodes/justice.py"),
            vec!["src/nodes/justice.py"]
        );
        assert_eq!(
            paths(r"src\tools\repo_tools.py;"),
            vec!["src/tools/repo_tools.py"]
        );
        assert_eq!(paths("(src/state.py)."), vec!["src/state.py"]);
        assert_eq!(
            paths("\"pyproject.toml\" and rubric.json!"),
            vec!["pyproject.toml", "rubric.json"]
        );
        assert_eq!(paths("the src/nodes/ package"), vec!["src/nodes"]);
    }

    #[test]
    fn urls_prose_and_numbers_are_not_paths() {
        assert!(paths("see https://github.com/x/y/blob/main/src/graph.py for it").is_empty());
        assert!(paths("built with Node.js and version 1.2 e.g. this").is_empty());
        assert!(paths("input/output and/or either/or").is_empty());
        assert!(paths(r"it split C:\Users\...\state.py on the colon").is_empty());
        assert!(paths("see /home/me/project/src/graph.py or ~/x/graph.py").is_empty());
        // multi-byte whitespace around a path
        assert_eq!(
            paths("a\u{1680}src/graph.py\u{1680}b"),
            vec!["src/graph.py"]
        );
    }

    #[test]
    fn line_numbers_are_kept_and_duplicates_merged() {
        let c = extract(&["src/graph.py:42 here".into(), "again src/graph.py".into()]);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].line, Some(42));
        assert_eq!(c[0].pages, vec![1, 2]);
    }

    fn checked(text: &str, files: &[&str]) -> Vec<(String, PathStatus)> {
        let mut c = extract(&[text.to_string()]);
        let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        check(&mut c, &files);
        c.into_iter().map(|c| (c.path, c.status)).collect()
    }

    #[test]
    fn exact_suffix_missing_and_future_paths() {
        let files = [
            "src/nodes/judges.py",
            "src/graph.py",
            "README.md",
            "src/tools/__init__.py",
        ];
        let r = checked(
            "We use src/graph.py and nodes/judges.py. The src/tools/vision_tools.py module parses images. In future work we plan to add src/tools/cache.py.",
            &files,
        );
        assert_eq!(
            r,
            vec![
                ("src/graph.py".into(), PathStatus::Verified),
                ("nodes/judges.py".into(), PathStatus::Verified),
                ("src/tools/vision_tools.py".into(), PathStatus::Hallucinated),
                ("src/tools/cache.py".into(), PathStatus::Suggested),
            ]
        );
        // a file marked as one to create in a remediation table is proposed, not claimed
        let r = checked(
            "Gap: No unit tests exist. File tests/test_repo_tools.py [NEW]",
            &files,
        );
        assert_eq!(
            r,
            vec![("tests/test_repo_tools.py".into(), PathStatus::Suggested)]
        );
        // bare file names are matched on a path-component boundary only
        let r = checked("see ges.py and judges.py", &files);
        assert_eq!(
            r,
            vec![
                ("ges.py".into(), PathStatus::Hallucinated),
                ("judges.py".into(), PathStatus::Verified)
            ]
        );
    }

    #[test]
    fn a_file_the_report_says_does_not_exist_is_disclaimed_not_hallucinated() {
        let r = checked(
            "The peer's PDF claimed src/advanced_judges.py existed, but we found no such file. The PDF referenced tools/git.py but it was renamed to git_tools.py.",
            &["src/tools/git_tools.py"],
        );
        assert_eq!(
            r,
            vec![
                ("src/advanced_judges.py".into(), PathStatus::Disclaimed),
                ("tools/git.py".into(), PathStatus::Disclaimed),
                ("git_tools.py".into(), PathStatus::Verified),
            ]
        );
    }

    #[test]
    fn an_existing_path_is_never_hallucinated_even_in_future_tense() {
        let r = checked("we plan to improve src/graph.py", &["src/graph.py"]);
        assert_eq!(r, vec![("src/graph.py".into(), PathStatus::Verified)]);
    }

    #[test]
    fn no_repo_files_means_unchecked() {
        let r = checked("src/graph.py", &[]);
        assert_eq!(r, vec![("src/graph.py".into(), PathStatus::Unchecked)]);
    }

    fn resolved(text: &str, files: &[&str]) -> Vec<(String, PathStatus)> {
        let mut c = extract(&[text.to_string()]);
        let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        check(&mut c, &files);
        merge_duplicates(&mut c);
        c.into_iter().map(|c| (c.path, c.status)).collect()
    }

    #[test]
    fn dotfiles_and_documents_are_claims_file_types_are_not() {
        assert_eq!(
            paths(
                "Copy .env.example to .env; CI runs .github/workflows/ci.yml and .pre-commit-config.yaml."
            ),
            vec![
                ".env.example",
                ".github/workflows/ci.yml",
                ".pre-commit-config.yaml"
            ]
        );
        assert_eq!(
            paths("README.md Setup guide\n.gitignore Security rules\n.dockerignore too"),
            vec!["README.md", ".gitignore", ".dockerignore"]
        );
        // Build files without an extension, as written; prose about one is not a claim.
        assert_eq!(
            paths("└ see the Dockerfile and docker/Makefile; a makefile would help"),
            vec!["Dockerfile", "docker/Makefile"]
        );
        assert_eq!(
            paths(
                "The report is reports/final_report.pdf (source report/main.tex, figure docs/graph.png)."
            ),
            vec![
                "reports/final_report.pdf",
                "report/main.tex",
                "docs/graph.png"
            ]
        );
        assert!(paths("every .py and .json file, and .env").is_empty());
        let r = resolved(
            "See .env.example and .github/workflows/ci.yml.",
            &[".env.example", ".github/workflows/ci.yml"],
        );
        assert!(r.iter().all(|(_, s)| *s == PathStatus::Verified), "{r:?}");
    }

    #[test]
    fn two_spellings_of_one_repository_file_are_one_cited_path() {
        let files: Vec<String> = ["src/agents/judges/base_judge.py", "src/graph.py"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut c = extract(&[
            "The judges share src/agents/judges/base_judge.py.".to_string(),
            "In base_judge.py the call is retried; graph.py wires it, and so does src/graph.py."
                .to_string(),
        ]);
        check(&mut c, &files);
        merge_duplicates(&mut c);
        let got: Vec<(&str, Vec<&str>, Vec<u32>)> = c
            .iter()
            .map(|c| {
                (
                    c.path.as_str(),
                    c.spellings.iter().map(String::as_str).collect(),
                    c.pages.clone(),
                )
            })
            .collect();
        // kept under the spelling that is the file's path, whichever came first
        assert_eq!(
            got,
            vec![
                (
                    "src/agents/judges/base_judge.py",
                    vec!["base_judge.py"],
                    vec![1, 2]
                ),
                ("src/graph.py", vec!["graph.py"], vec![2]),
            ]
        );
        assert!(
            c.iter()
                .all(|c| c.status == PathStatus::Verified && c.matched.is_none())
        );
        assert_eq!(PathCounts::of(&c).verified, 2);
    }

    #[test]
    fn a_name_split_by_text_extraction_is_matched_to_the_file_it_spells() {
        let files = [
            "src/tools/repo_tools.py",
            "reports/Jane Doe Week 2 Final Report.pdf",
        ];
        assert_eq!(
            resolved(
                "The sandbox lives in src/tools/repo tools.py today.",
                &files
            ),
            vec![("src/tools/repo_tools.py".into(), PathStatus::Verified)]
        );
        assert_eq!(
            resolved(
                "Our report reports/Jane Doe Week 2 Final Report.pdf explains it.",
                &files
            ),
            vec![(
                "reports/Jane Doe Week 2 Final Report.pdf".into(),
                PathStatus::Verified
            )]
        );
        // No such file: the claim is what the report wrote, never its last fragment alone.
        assert_eq!(
            resolved(
                "The sandbox lives in src/tools/git runner.py today.",
                &files
            ),
            vec![("src/tools/git runner.py".into(), PathStatus::Hallucinated)]
        );
        // Wrapped at a table cell's line end without a hyphen: the name runs on.
        assert_eq!(
            resolved(
                "Ensure src/tools/repo_t\nools.py is scanned correctly.",
                &files
            ),
            vec![("src/tools/repo_tools.py".into(), PathStatus::Verified)]
        );
        // A line ending in a directory, then a line naming another file: two mentions.
        let r = resolved(
            "Sources live in src/tools\nrepo_tools.py holds the clone.",
            &files,
        );
        assert!(
            r.contains(&("repo_tools.py".into(), PathStatus::Verified)),
            "{r:?}"
        );
        let r = resolved("The graph is in src/nodes\nmain.py starts it.", &files);
        assert!(
            r.contains(&("main.py".into(), PathStatus::Hallucinated)),
            "{r:?}"
        );
        // Prose before a real bare name changes nothing.
        assert_eq!(
            resolved("we wrote repo_tools.py first", &files),
            vec![("repo_tools.py".into(), PathStatus::Verified)]
        );
    }

    #[test]
    fn a_fragment_of_a_longer_claimed_path_is_not_a_claim_of_its_own() {
        let r = resolved(
            "The peer report audit/received/peer_report.md scored us 85. Its author (received/peer_report.md) and peer_report.md again.",
            &["src/graph.py"],
        );
        assert_eq!(
            r,
            vec![(
                "audit/received/peer_report.md".into(),
                PathStatus::Hallucinated
            )]
        );
        // Two longer candidates: the bare name stays (it is not clear which one it means).
        let r = resolved("see a/x.md and b/x.md and x.md", &["src/graph.py"]);
        assert_eq!(r.len(), 3);
    }

    /// A file given to another team, or written inside a quoted example, is named, not cited
    /// as part of this project: whether or not the audited commit has a file of that name.
    #[test]
    fn another_team_s_file_and_a_quoted_example_are_mentioned_not_claimed() {
        let files = ["src/tools/git_tools.py", "src/graph.py"];
        let text = "Errors are logged: AST parse errors (e.g., \"Invalid Python syntax in\nsrc/broken_module.py\") end the run.\n\n- Description: Peer's git_tools.py clones repos into the working directory. We found no parallel fan-out in the peer\u{2019}s src/graph.py.\n\nOur own src/graph.py wires the nodes.";
        let got = checked(text, &files);
        assert!(
            got.contains(&("src/broken_module.py".into(), PathStatus::Mentioned)),
            "{got:?}"
        );
        assert!(
            got.contains(&("git_tools.py".into(), PathStatus::Mentioned)),
            "{got:?}"
        );
        // a path is claimed as soon as one mention claims it, and quoted there
        assert!(
            got.contains(&("src/graph.py".into(), PathStatus::Verified)),
            "{got:?}"
        );
        let graph = extract(&[text.to_string()])
            .into_iter()
            .find(|c| c.path == "src/graph.py")
            .unwrap();
        assert!(
            graph.context.starts_with("Our own src/graph.py"),
            "{}",
            graph.context
        );
        // the same names in the report's own voice
        let own = checked(
            "Our git_tools.py clones repos. Errors such as a parse error in src/broken_module.py end the run.",
            &files,
        );
        assert!(
            own.contains(&("git_tools.py".into(), PathStatus::Verified)),
            "{own:?}"
        );
        assert!(
            own.contains(&("src/broken_module.py".into(), PathStatus::Hallucinated)),
            "{own:?}"
        );
    }
}
