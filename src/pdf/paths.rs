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

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
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
}

impl PathStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PathStatus::Unchecked => "unchecked",
            PathStatus::Verified => "verified",
            PathStatus::Hallucinated => "hallucinated",
            PathStatus::Suggested => "suggested",
            PathStatus::Disclaimed => "disclaimed",
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
    /// Whether the path is a directory (`src/nodes/`).
    #[serde(default)]
    pub directory: bool,
    /// Whether every mention reads as future work (`we plan to add ...`).
    #[serde(default)]
    pub future_work: bool,
    /// Whether every mention says the file does not exist (hallucinated, renamed, removed).
    #[serde(default)]
    pub disclaimed: bool,
    /// The words just before the first mention (nearest last), when the path may be the end of
    /// a name that text extraction split at spaces.
    #[serde(skip)]
    pub preceding: Vec<String>,
}

/// File extensions of repository files a LangGraph project report talks about.
const EXTENSIONS: &str = "py|pyi|ipynb|toml|json|jsonl|yaml|yml|md|txt|lock|cfg|ini|sh|sql|csv|html|js|ts|tsx|rs|dockerfile|pdf|tex|bib|docx|png|jpe?g|svg|gif|mmd|mermaid|drawio";

/// Dotfiles a report names as part of the repository (a bare `.env` is a secret, not a claim).
const DOTFILES: &str = r"env\.(?:example|sample|template)|gitignore|gitattributes|python-version|dockerignore|pre-commit-config\.ya?ml|flake8|pylintrc|editorconfig";

/// Build files named without an extension, written with their usual capital (`a makefile` in
/// prose is not a claim that the repository has one).
const BUILD_FILES: &str =
    "Dockerfile|Containerfile|Makefile|Procfile|Justfile|Vagrantfile|Jenkinsfile";

static PATH_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(?:[A-Za-z0-9_.\-]+[/\\])*(?:\.?[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*\.(?:{EXTENSIONS})|\.(?:{DOTFILES})|\b(?-i:{BUILD_FILES}))\b(?::(\d+)(?:-\d+)?)?"
    ))
    .expect("static regex")
});

/// A bare extension (`.py`, `.json`) is a file type, not a file.
static BARE_EXTENSION_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"(?i)^\.(?:{EXTENSIONS})$")).expect("static regex"));

/// Words kept before a mention to repair a file name split at spaces.
const PRECEDING_WORDS: usize = 12;

static DIR_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\./)?(?:[A-Za-z0-9_\-]+/)+").expect("static regex"));

/// Top-level directory names that make a bare `dir/` mention a repository claim.
pub(crate) const REPO_DIRS: &[&str] = &[
    "src", "tests", "test", "reports", "report", "docs", "scripts", "audit", "app", "lib", "nodes",
    "tools", "agents", "utils", "rubric", "config", "configs",
];

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
];

/// `name` itself when, on its own, it reads as the name of a repository file (`graph.py`,
/// `.env.example`, `Dockerfile`); `None` for anything else (prose, a file type, `1.py`).
pub(crate) fn file_name_in(name: &str) -> Option<&str> {
    let m = PATH_RE.find(name)?;
    (m.start() == 0 && m.end() == name.len() && clean_path(name).is_some() && !is_prose_word(name))
        .then_some(name)
}

/// Cleans one raw match into a repo-relative path; `None` when it is not a repository path.
pub fn clean_path(raw: &str) -> Option<String> {
    let mut p = raw.replace('\\', "/");
    // `1.src/graph.py`, `2)src/...`: a list number glued in front.
    if let Some(rest) = strip_glued_number(&p) {
        p = rest;
    }
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_string();
    }
    while let Some(rest) = p.strip_prefix("../") {
        p = rest.to_string();
    }
    let p = p.trim_matches('/').to_string();
    if p.is_empty() || BARE_EXTENSION_RE.is_match(&p) {
        return None;
    }
    // Reject things like `v1.2.py`? keep; reject pure numbers before the extension (`1.py`)
    let name = p.rsplit('/').next().unwrap_or(&p);
    let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
    // (a dotfile, `.gitignore`, has an empty stem: it is a name)
    if !stem.is_empty() && stem.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    Some(p)
}

fn strip_glued_number(p: &str) -> Option<String> {
    let digits = p.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let rest = &p[digits..];
    let rest = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))?;
    if rest.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && rest.contains('/') {
        Some(rest.to_string())
    } else {
        None
    }
}

/// The whitespace-delimited token around `start..end` of `text`.
fn token_around(text: &str, start: usize, end: usize) -> &str {
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

/// The sentence of `text` around byte offset `at`, at most ~240 characters.
fn context_around(text: &str, start: usize, end: usize) -> String {
    let flat_start = text[..start]
        .rfind(['.', '!', '?', '\n'])
        .map(|i| {
            // a dot inside a file name is not a sentence end
            if text[i + 1..].starts_with(char::is_whitespace) || &text[i..i + 1] == "\n" {
                i + 1
            } else {
                text[..i].rfind(['\n']).map(|j| j + 1).unwrap_or(0)
            }
        })
        .unwrap_or(0);
    let rest = &text[end..];
    let flat_end = rest
        .find(". ")
        .or_else(|| rest.find(".\n"))
        .map(|i| end + i + 1)
        .unwrap_or(text.len())
        .min(
            text[end..]
                .find("\n\n")
                .map(|i| end + i)
                .unwrap_or(text.len()),
        );
    let s: String = text[flat_start..flat_end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if s.chars().count() > 240 {
        let mut cut: String = s.chars().take(237).collect();
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

fn is_disclaimer(context: &str) -> bool {
    let c = context.to_lowercase();
    NEGATION_CUES.iter().any(|cue| c.contains(cue))
}

fn is_future(context: &str) -> bool {
    let c = context.to_lowercase();
    FUTURE_CUES.iter().any(|cue| c.contains(cue))
}

/// Every repository path the (normalised) pages mention, deduplicated, in order of first mention.
pub fn extract(pages: &[String]) -> Vec<ClaimedPath> {
    let mut out: Vec<ClaimedPath> = Vec::new();
    for (i, text) in pages.iter().enumerate() {
        let page = i as u32 + 1;
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
            let ctx = context_around(text, whole.start(), whole.end());
            seen_spans.push((whole.start(), whole.end()));
            let before = out.len();
            add(&mut out, path, page, ctx, line, false);
            if out.len() > before
                && let Some(c) = out.last_mut()
            {
                c.preceding = preceding_words(text, whole.start());
            }
        }
        for f in &trees.files {
            let context = text[f.line.clone()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            add(&mut out, f.path.clone(), page, context, None, false);
        }
        for m in DIR_RE.find_iter(text) {
            if trees.covers(m.start()) {
                continue;
            }
            if seen_spans
                .iter()
                .any(|&(s, e)| m.start() < e && m.end() > s)
            {
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
            let ctx = context_around(text, m.start(), m.end());
            add(&mut out, path, page, ctx, None, true);
        }
    }
    out
}

/// Up to [`PRECEDING_WORDS`] whitespace-separated words right before `start` (nearest last),
/// when the mention directly follows a space (a name split by text extraction continues
/// there); empty otherwise.
fn preceding_words(text: &str, start: usize) -> Vec<String> {
    let before = &text[..start];
    if !before.ends_with([' ', '\u{a0}']) {
        return Vec::new();
    }
    let mut words: Vec<String> = before
        .split_whitespace()
        .rev()
        .take(PRECEDING_WORDS)
        .map(|w| w.trim_start_matches(['`', '"', '\'', '(', '[']).to_string())
        .collect();
    words.reverse();
    words
}

/// Bare `word.ext` tokens that are usually prose, not files (`Node.js`, `README` is fine).
fn is_prose_word(p: &str) -> bool {
    let lower = p.to_ascii_lowercase();
    let ext = lower.rsplit('.').next().unwrap_or("");
    matches!(ext, "js" | "ts" | "tsx" | "html" | "csv" | "sql" | "rs")
        || ["node.js", "next.js", "vue.js", "react.js", "d3.js"].contains(&lower.as_str())
}

fn add(
    out: &mut Vec<ClaimedPath>,
    path: String,
    page: u32,
    context: String,
    line: Option<u32>,
    directory: bool,
) {
    let future = is_future(&context);
    let disclaimed = is_disclaimer(&context);
    if let Some(existing) = out.iter_mut().find(|c| c.path == path) {
        if !existing.pages.contains(&page) {
            existing.pages.push(page);
        }
        existing.future_work &= future;
        existing.disclaimed &= disclaimed;
        if existing.line.is_none() {
            existing.line = line;
        }
        return;
    }
    out.push(ClaimedPath {
        path,
        status: PathStatus::Unchecked,
        page,
        context,
        line,
        pages: vec![page],
        matched: None,
        directory,
        future_work: future,
        disclaimed,
        preceding: Vec::new(),
    });
}

/// Normalises repository file paths for matching (`/` separators, no `./`).
fn norm_repo(p: &str) -> String {
    let p = p.replace('\\', "/");
    p.trim_start_matches("./").trim_matches('/').to_string()
}

/// Sets the status of each claimed path from the repository's files. An empty file list leaves
/// every status `unchecked` (nothing can be concluded).
pub fn check(claims: &mut [ClaimedPath], repo_files: &[String]) {
    if repo_files.is_empty() {
        for c in claims.iter_mut() {
            c.status = PathStatus::Unchecked;
            c.matched = None;
        }
        return;
    }
    let files: Vec<String> = repo_files.iter().map(|f| norm_repo(f)).collect();
    let exact: HashSet<&str> = files.iter().map(String::as_str).collect();
    let lower: HashSet<String> = files.iter().map(|f| f.to_lowercase()).collect();
    let mut dirs: HashSet<String> = HashSet::new();
    for f in &files {
        let mut acc = String::new();
        let parts: Vec<&str> = f.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            dirs.insert(acc.clone());
        }
    }
    for c in claims.iter_mut() {
        c.matched = None;
        if !c.directory {
            rejoin_split_name(c, &files, &exact);
        }
        let p = c.path.as_str();
        let found = if c.directory {
            if dirs.contains(p) {
                Some(None)
            } else {
                let suffix = format!("/{p}");
                let hits: Vec<&String> = dirs.iter().filter(|d| d.ends_with(&suffix)).collect();
                if hits.len() == 1 {
                    Some(Some(hits[0].clone()))
                } else if hits.len() > 1 {
                    Some(Some(format!("{} directories end with {p}/", hits.len())))
                } else {
                    None
                }
            }
        } else if exact.contains(p) {
            Some(None)
        } else {
            let suffix = format!("/{p}");
            let hits: Vec<&String> = files.iter().filter(|f| f.ends_with(&suffix)).collect();
            match hits.len() {
                0 => {
                    // A case difference only (`Readme.md`): the file exists.
                    let lp = p.to_lowercase();
                    if lower.contains(&lp) {
                        files
                            .iter()
                            .find(|f| f.to_lowercase() == lp)
                            .map(|f| Some(f.clone()))
                    } else {
                        None
                    }
                }
                1 => Some(Some(hits[0].clone())),
                n => Some(Some(format!(
                    "{n} files end with {p}: {}",
                    hits.iter()
                        .take(3)
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
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
/// claim is the whole text the report wrote, not its last fragment.
fn rejoin_split_name(c: &mut ClaimedPath, files: &[String], exact: &HashSet<&str>) {
    if c.preceding.is_empty() {
        return;
    }
    let words: Vec<String> = c
        .preceding
        .iter()
        .map(|w| w.trim_start_matches("./").to_string())
        .collect();
    let exists = |cand: &str| {
        exact.contains(cand) || {
            let suffix = format!("/{cand}");
            files.iter().filter(|f| f.ends_with(&suffix)).count() == 1
        }
    };
    for k in 1..=words.len() {
        let tail = &words[words.len() - k..];
        if tail.iter().any(|w| w.is_empty() || is_url(w)) {
            break;
        }
        for sep in [" ", "_", "-", ""] {
            let cand = format!("{}{sep}{}", tail.join(sep), c.path);
            if exists(&cand) {
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
    if path_like && !c.path.contains('/') {
        c.path = format!("{last} {}", c.path);
    }
    c.preceding.clear();
}

/// Claims that [`check`] resolved to the same path are one claim (pages united), and a path
/// not found that is the tail of exactly one longer claimed path (`report_peer_abc.md`,
/// `reports/report_peer_abc.md` beside `audit/reports/report_peer_abc.md`) is a mention of
/// that path, not a claim of its own.
pub fn merge_duplicates(claims: &mut Vec<ClaimedPath>) {
    let mut out: Vec<ClaimedPath> = Vec::with_capacity(claims.len());
    for c in claims.drain(..) {
        if let Some(first) = out.iter_mut().find(|o| o.path == c.path) {
            unite_pages(first, &c);
            continue;
        }
        out.push(c);
    }
    let mut i = 0;
    while i < out.len() {
        let c = &out[i];
        let fragment =
            !c.directory && !matches!(c.status, PathStatus::Verified | PathStatus::Unchecked);
        let suffix = format!("/{}", c.path);
        let longer: Vec<usize> = (0..out.len())
            .filter(|&j| j != i && !out[j].directory && out[j].path.ends_with(&suffix))
            .collect();
        if fragment && longer.len() == 1 {
            let c = out.remove(i);
            let j = if longer[0] > i {
                longer[0] - 1
            } else {
                longer[0]
            };
            unite_pages(&mut out[j], &c);
            continue;
        }
        i += 1;
    }
    *claims = out;
}

fn unite_pages(into: &mut ClaimedPath, from: &ClaimedPath) {
    for p in &from.pages {
        if !into.pages.contains(p) {
            into.pages.push(*p);
        }
    }
    into.pages.sort_unstable();
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
}
