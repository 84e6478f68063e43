//! What reads as the name of a repository file in a report: the extensions, dotfiles and build
//! files a project report names, the top-level directories that make a `dir/` mention a claim,
//! and the cleaning of one raw mention into a repo-relative path. Shared by the path claims
//! (`paths`) and the directory trees drawn in reports (`tree`); imports neither.

use regex::Regex;
use std::sync::LazyLock;

/// File extensions of repository files a LangGraph project report talks about.
const EXTENSIONS: &str = "py|pyi|ipynb|toml|json|jsonl|yaml|yml|md|txt|lock|cfg|ini|sh|sql|csv|html|js|ts|tsx|rs|dockerfile|pdf|tex|bib|docx|png|jpe?g|svg|gif|mmd|mermaid|drawio";

/// Dotfiles a report names as part of the repository (a bare `.env` is a secret, not a claim).
const DOTFILES: &str = r"env\.(?:example|sample|template)|gitignore|gitattributes|python-version|dockerignore|pre-commit-config\.ya?ml|flake8|pylintrc|editorconfig";

/// Build files named without an extension, written with their usual capital (`a makefile` in
/// prose is not a claim that the repository has one).
const BUILD_FILES: &str =
    "Dockerfile|Containerfile|Makefile|Procfile|Justfile|Vagrantfile|Jenkinsfile";

pub(super) static PATH_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(?:[A-Za-z0-9_.\-]+[/\\])*(?:\.?[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*\.(?:{EXTENSIONS})|\.(?:{DOTFILES})|\b(?-i:{BUILD_FILES}))\b(?::(\d+)(?:-\d+)?)?"
    ))
    .expect("static regex")
});

/// A bare extension (`.py`, `.json`) is a file type, not a file.
static BARE_EXTENSION_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"(?i)^\.(?:{EXTENSIONS})$")).expect("static regex"));

/// Top-level directory names that make a bare `dir/` mention a repository claim.
pub(super) const REPO_DIRS: &[&str] = &[
    "src", "tests", "test", "reports", "report", "docs", "scripts", "audit", "app", "lib", "nodes",
    "tools", "agents", "utils", "rubric", "config", "configs",
];

/// `name` itself when, on its own, it reads as the name of a repository file (`graph.py`,
/// `.env.example`, `Dockerfile`); `None` for anything else (prose, a file type, `1.py`).
pub(super) fn file_name_in(name: &str) -> Option<&str> {
    let m = PATH_RE.find(name)?;
    (m.start() == 0 && m.end() == name.len() && clean_path(name).is_some() && !is_prose_word(name))
        .then_some(name)
}

/// Cleans one raw match into a repo-relative path; `None` when it is not a repository path.
pub(super) fn clean_path(raw: &str) -> Option<String> {
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

/// Bare `word.ext` tokens that are usually prose, not files (`Node.js`, `README` is fine).
pub(super) fn is_prose_word(p: &str) -> bool {
    let lower = p.to_ascii_lowercase();
    let ext = lower.rsplit('.').next().unwrap_or("");
    matches!(ext, "js" | "ts" | "tsx" | "html" | "csv" | "sql" | "rs")
        || ["node.js", "next.js", "vue.js", "react.js", "d3.js"].contains(&lower.as_str())
}
