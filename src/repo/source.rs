//! The repository source as the user gave it (`--repo`, a manifest's `repo` column), redacted
//! once, at the boundary.
//!
//! A source can carry credentials: `https://user:token@host/o/r`, `...?private_token=...`,
//! a `#fragment`. [`RepoSource`] keeps the raw text private and shows only the redacted form:
//! `Display`, `Debug` and `Serialize` all print [`RepoSource::shown`], so a source that reaches
//! a report, a file name, a log line, a span attribute or the batch store cannot leak. Only
//! [`RepoSource::expose`] gives the raw text, and only libgit2 (clone, ls-remote) gets it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A repository source whose credentials never leave this type except through
/// [`RepoSource::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct RepoSource {
    raw: String,
    shown: String,
    /// The secret parts of `raw` (user name, password, query, fragment), scrubbed from any
    /// message that quotes them (libgit2 errors may quote the URL).
    secrets: Vec<String>,
}

impl RepoSource {
    pub fn new(raw: impl Into<String>) -> RepoSource {
        let raw = raw.into();
        let (shown, secrets) = redact_text(&raw);
        RepoSource {
            raw,
            shown,
            secrets,
        }
    }

    /// A source shown as `shown` instead of its raw text (a batch shows a local repository by
    /// its folder's name: the grader's machine paths never reach a student's report).
    pub fn with_shown(raw: impl Into<String>, shown: impl Into<String>) -> RepoSource {
        let raw = raw.into();
        let (_, secrets) = redact_text(&raw);
        RepoSource {
            raw,
            shown: shown.into(),
            secrets,
        }
    }

    /// The source without credentials: for messages, reports, file names, logs and spans.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The raw source, credentials included: only for libgit2.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// `msg` with the raw source and every secret part of it replaced by the redacted form.
    pub fn scrub(&self, msg: &str) -> String {
        let mut out = msg.replace(&self.raw, &self.shown);
        for s in &self.secrets {
            out = out.replace(s.as_str(), "***");
        }
        out
    }
}

impl From<&str> for RepoSource {
    fn from(s: &str) -> Self {
        RepoSource::new(s)
    }
}

impl From<String> for RepoSource {
    fn from(s: String) -> Self {
        RepoSource::new(s)
    }
}

impl fmt::Display for RepoSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for RepoSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RepoSource({:?})", self.shown)
    }
}

impl Serialize for RepoSource {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.shown)
    }
}

impl<'de> Deserialize<'de> for RepoSource {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(RepoSource::new)
    }
}

/// Shorter parts (`u`, `1`) are removed from the shown form but not scrubbed from messages,
/// where they would mangle ordinary words.
const MIN_SECRET: usize = 6;

/// The redacted form of a source and the secret parts removed from it. A URL (any scheme
/// other than `file`) loses its user name, password, query and fragment; text that only
/// looks like a URL loses whatever sits between `://` and `@`, and after `?` or `#`; a local
/// path is kept as is.
pub fn redact_text(s: &str) -> (String, Vec<String>) {
    let mut secrets = Vec::new();
    let mut keep = |part: &str| {
        let part = part.trim_start_matches([':', '?', '#', '&', '=']);
        if part.len() >= MIN_SECRET && !secrets.iter().any(|s: &String| s == part) {
            secrets.push(part.to_string());
        }
    };
    if let Ok(u) = url::Url::parse(s.trim()) {
        if u.scheme() != "file" && u.has_host() {
            keep(u.username());
            if let Some(p) = u.password() {
                keep(p);
            }
            if let Some(q) = u.query() {
                keep(q);
                for (_, v) in u.query_pairs() {
                    keep(&v);
                }
            }
            if let Some(f) = u.fragment() {
                keep(f);
            }
            let mut clean = u.clone();
            let _ = clean.set_username("");
            let _ = clean.set_password(None);
            clean.set_query(None);
            clean.set_fragment(None);
            return (clean.to_string(), secrets);
        }
        if u.scheme() == "file" {
            if let Some(q) = u.query() {
                keep(q);
            }
            let mut clean = u.clone();
            clean.set_query(None);
            clean.set_fragment(None);
            return (clean.to_string(), secrets);
        }
    }
    let Some(i) = s.find("://") else {
        return (s.to_string(), secrets);
    };
    let (head, rest) = s.split_at(i + 3);
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    if end < rest.len() {
        keep(&rest[end..]);
    }
    let mut rest = &rest[..end];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    if let Some(at) = rest[..authority_end].rfind('@') {
        for part in rest[..at].split(':') {
            keep(part);
        }
        rest = &rest[at + 1..];
    }
    (format!("{head}{rest}"), secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_shown() {
        let s = RepoSource::new("https://alice:s3cretpw@github.com/o/r.git?token=t0k3n#frag");
        assert_eq!(s.shown(), "https://github.com/o/r.git");
        assert_eq!(s.to_string(), "https://github.com/o/r.git");
        let debug = format!("{s:?}");
        assert!(
            !debug.contains("s3cret") && !debug.contains("t0k3n"),
            "{debug}"
        );
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"https://github.com/o/r.git\"");
        assert!(s.expose().contains("s3cretpw"));
    }

    #[test]
    fn messages_are_scrubbed() {
        let s = RepoSource::new("https://alice-bot:s3cretpw@github.com/o/r?private_token=t0k3n42");
        let msg = format!(
            "failed to fetch {} (user alice-bot, token t0k3n42, pass s3cretpw)",
            s.expose()
        );
        let clean = s.scrub(&msg);
        for secret in ["s3cretpw", "t0k3n42", "alice-bot"] {
            assert!(!clean.contains(secret), "{clean}");
        }
        assert!(clean.contains("https://github.com/o/r"), "{clean}");
    }

    #[test]
    fn unparsable_urls_are_redacted_by_text() {
        let (shown, secrets) = redact_text("https://bob:pw12345@exa mple.com/x y?k=v");
        assert_eq!(shown, "https://exa mple.com/x y");
        assert!(secrets.contains(&"pw12345".to_string()));
        assert_eq!(redact_text("ftp://u:p4ss@h/x").0, "ftp://h/x");
    }

    #[test]
    fn local_paths_are_kept() {
        for p in ["/tmp/my repo", "./checkout", "repos/s1", "C:\\x"] {
            assert_eq!(RepoSource::new(p).shown(), p);
        }
        assert_eq!(
            RepoSource::new("file:///srv/git/p.git").shown(),
            "file:///srv/git/p.git"
        );
    }
}
