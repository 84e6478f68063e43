//! Cohort similarity: which submissions share code beyond the starter code.
//!
//! The method of MOSS and Dolos: each submission's Python code becomes normalised tree-sitter
//! tokens ([`tokens`]: every identifier one token, every literal one token), its k-grams are
//! hashed and a few are selected by winnowing ([`winnow`]: k = 23 tokens, window 17, Dolos'
//! defaults), and the cohort's fingerprints are indexed ([`compare`]) to score every pair:
//! the share of each one's fingerprints found in the other, the tokens they share and their
//! longest shared fragment, with `path:line` ranges on both sides.
//!
//! Starter code never counts: fingerprints of an optional template repository, and those
//! found in more than a set share of the cohort, are left out before anything is compared.
//! A pair above the threshold is flagged for a person to look at; nothing here scores.
//!
//! | module | role |
//! |---|---|
//! | [`tokens`] | Python source → normalised tokens (iterative walk, bounded count) |
//! | [`winnow`] | k-gram hashes, winnowing |
//! | [`read`] | the Python files of a submission: from a commit (sandboxed clone) or a directory, within limits |
//! | [`codec`] | a submission's fingerprints as bytes, for the batch store |
//! | [`compare`] | the index over the cohort, pair scores, fragments, the JSON shape ([`compare::CohortReport`]) |

pub mod codec;
pub mod compare;
pub mod read;
pub mod tokens;
pub mod winnow;

pub use crate::repo::python::syntax::ParseError;
pub use compare::{CohortReport, Options, compare};

use serde::{Deserialize, Serialize};

/// Tokens per k-gram (Dolos' default).
pub const K: usize = 23;
/// Winnowing window in k-grams (Dolos' default).
pub const WINDOW: usize = 17;

/// What is read of one submission: hostile input, bounded by what is declared and what is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Python files fingerprinted (the first ones in path order).
    pub max_files: usize,
    /// A larger Python file is skipped (with a note).
    pub max_file_bytes: u64,
    /// Python bytes read in all; files past it are skipped (with a note).
    pub max_total_bytes: u64,
    /// Tokens fingerprinted in all; the rest is left out (with a note).
    pub max_tokens: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 2_000,
            max_file_bytes: 1 << 20,
            max_total_bytes: 16 << 20,
            max_tokens: 400_000,
        }
    }
}

/// Everything that decides a submission's fingerprints: stored fingerprints made under another
/// configuration are made again.
pub fn config_key(limits: &Limits) -> String {
    format!(
        "similarity-v1;tree-sitter-python-0.25;k={K};w={WINDOW};files={};file_bytes={};total_bytes={};tokens={}",
        limits.max_files, limits.max_file_bytes, limits.max_total_bytes, limits.max_tokens
    )
}

/// One Python file of a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Relative to the submission's root, `/`-separated.
    pub path: String,
    pub text: String,
}

/// A file that was fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub tokens: u32,
}

/// A submission's fingerprints, with the texts its fragments are quoted from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fingerprints {
    pub files: Vec<FileEntry>,
    pub tokens: u64,
    /// What was left out, and why (limits, unreadable files).
    pub notes: Vec<String>,
    /// In file order, then token order.
    pub prints: Vec<winnow::Print>,
    /// The texts of `files` (same order), when kept; fragments are quoted from them.
    pub texts: Option<Vec<String>>,
}

/// Fingerprints of a submission's Python files (already read within [`Limits`]). Files
/// tree-sitter gives up on are noted and left out.
pub fn fingerprint(
    sources: Vec<SourceFile>,
    limits: &Limits,
    mut notes: Vec<String>,
) -> Result<Fingerprints, ParseError> {
    let mut parser = tokens::parser()?;
    let mut fp = Fingerprints::default();
    let mut texts = Vec::new();
    let mut budget = limits.max_tokens;
    let mut left_out = Vec::new();
    for src in sources {
        if budget == 0 {
            left_out.push(src.path);
            continue;
        }
        let Some(toks) = tokens::tokenize(&mut parser, &src.text, budget) else {
            notes.push(format!("{}: could not be parsed; left out", src.path));
            continue;
        };
        budget -= toks.len();
        if budget == 0 {
            notes.push(format!(
                "{}: the token limit ({}) was reached in this file; what follows is left out",
                src.path, limits.max_tokens
            ));
        }
        let file = fp.files.len() as u32;
        winnow::fingerprint_file(&toks, file, fp.tokens as u32, K, WINDOW, &mut fp.prints);
        fp.tokens += toks.len() as u64;
        fp.files.push(FileEntry {
            path: src.path,
            tokens: toks.len() as u32,
        });
        texts.push(src.text);
    }
    if let Some(first) = left_out.first() {
        notes.push(format!(
            "{} left out after the token limit ({}), first {first}",
            crate::words::count(left_out.len(), "Python file", "Python files"),
            limits.max_tokens
        ));
    }
    fp.notes = notes;
    fp.texts = Some(texts);
    Ok(fp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_limit_bounds_what_a_submission_of_junk_costs() {
        let junk = "x = (a + b) * [c, d]\n".repeat(5_000); // 13 tokens a line
        let sources: Vec<SourceFile> = (0..4)
            .map(|i| SourceFile {
                path: format!("junk{i}.py"),
                text: junk.clone(),
            })
            .collect();
        let limits = Limits {
            max_tokens: 100_000,
            ..Limits::default()
        };
        let fp = fingerprint(sources, &limits, Vec::new()).unwrap();
        assert_eq!(fp.tokens, 100_000);
        assert_eq!(fp.files.len(), 2, "{:?}", fp.files);
        assert!(fp.prints.len() < 100_000 / 5, "{}", fp.prints.len());
        let notes = fp.notes.join("\n");
        assert!(
            notes.contains("junk1.py: the token limit (100000) was reached"),
            "{notes}"
        );
        assert!(
            notes.contains("2 Python files left out after the token limit"),
            "{notes}"
        );
    }
}
