//! Resolves the commit a submission will be audited at, before any work starts: it is part of
//! the job key (a new commit is a new job) and is then pinned for the clone, so the evidence is
//! collected at exactly that commit. Blocking (git2): run it on the blocking pool.
//!
//! - a local path or `file://` URL is opened directly (any ref or commit, short hashes too);
//! - a remote is asked for its refs (`ls-remote`, no clone): `HEAD`, a branch, a tag (peeled),
//!   a full ref name, or a full 40-character commit hash (taken as given; the clone checks it).

use crate::repo::RepoSource;
use std::path::PathBuf;

fn is_full_hash(s: &str) -> bool {
    s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// The local path of a source, if it is local.
fn local_path(source: &str) -> Option<PathBuf> {
    if let Some(rest) = source.strip_prefix("file://") {
        return Some(PathBuf::from(rest));
    }
    if source.contains("://") {
        return None;
    }
    if let Some((userhost, path)) = source.split_once(':') {
        if !userhost.is_empty() && !path.is_empty() && !userhost.contains('/') {
            return None; // scp-like remote
        }
    }
    Some(PathBuf::from(source))
}

/// Why a commit could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The ref does not exist in the repository: bad input. The message names the refs that
    /// exist.
    #[error("{0}")]
    UnknownRef(String),
    /// The repository could not be opened or reached.
    #[error("{0}")]
    Unreachable(String),
}

/// The full commit hash to audit. Messages quote the source redacted (libgit2's own messages
/// scrubbed of its credentials).
pub fn resolve_commit(repo: &RepoSource, git_ref: Option<&str>) -> Result<String, String> {
    resolve(repo, git_ref).map_err(|e| e.to_string())
}

/// Branch and tag names, for "the refs that exist" (at most 20, then "and N more").
fn ref_list(names: impl Iterator<Item = String>) -> String {
    let mut names: Vec<String> = names
        .filter(|n| n != "HEAD" && !n.ends_with("^{}"))
        .map(|n| {
            n.strip_prefix("refs/heads/")
                .or_else(|| n.strip_prefix("refs/tags/"))
                .map(str::to_string)
                .unwrap_or(n)
        })
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return "the repository has no branch or tag".into();
    }
    let more = names.len().saturating_sub(20);
    names.truncate(20);
    let mut s = format!("refs that exist: {}", names.join(", "));
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// The remote-tracking branches of a local repository (`refs/remotes/origin/dev` as
/// `origin/dev`), for "the refs that exist": a clone of that repository does not fetch them, so
/// the text says how to make one a branch (`spec` first when one of them is named so).
fn remote_branches(names: &[String], spec: &str, path: &std::path::Path) -> String {
    let mut remotes: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_prefix("refs/remotes/"))
        .filter(|n| !n.ends_with("/HEAD"))
        .collect();
    if remotes.is_empty() {
        return String::new();
    }
    remotes.sort();
    let named = remotes
        .iter()
        .find(|r| r.split_once('/').is_some_and(|(_, b)| b == spec))
        .copied();
    let more = remotes.len().saturating_sub(20);
    remotes.truncate(20);
    let mut s = format!(
        "; remote-tracking branches there (a clone of it does not fetch them): {}",
        remotes.join(", ")
    );
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    let (branch, from) = match named {
        Some(r) => (spec.to_string(), r.to_string()),
        None => {
            let r = remotes[0];
            let b = r.split_once('/').map(|(_, b)| b).unwrap_or(r);
            (b.to_string(), r.to_string())
        }
    };
    s.push_str(&format!(
        " (to audit {from}, make it a branch first: git -C {} branch {branch} {from})",
        path.display()
    ));
    s
}

/// [`resolve_commit`] with the kind of failure: an unknown ref is bad input.
pub fn resolve(repo: &RepoSource, git_ref: Option<&str>) -> Result<String, ResolveError> {
    resolve_raw(repo.expose(), repo.shown(), git_ref).map_err(|e| match e {
        ResolveError::UnknownRef(m) => ResolveError::UnknownRef(repo.scrub(&m)),
        ResolveError::Unreachable(m) => ResolveError::Unreachable(repo.scrub(&m)),
    })
}

/// `raw` is given to libgit2 only; messages name `source` (redacted).
fn resolve_raw(raw: &str, source: &str, git_ref: Option<&str>) -> Result<String, ResolveError> {
    match local_path(raw) {
        Some(path) => {
            let repo = git2::Repository::open(&path).map_err(|e| {
                ResolveError::Unreachable(format!(
                    "cannot open the repository {}: {}; check that the path is a Git repository",
                    path.display(),
                    e.message()
                ))
            })?;
            let spec = git_ref.unwrap_or("HEAD");
            let known = || {
                let names = repo
                    .references()
                    .map(|refs| {
                        refs.flatten()
                            .filter_map(|r| r.name().ok().map(str::to_string))
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                let local = names
                    .iter()
                    .filter(|n| n.starts_with("refs/heads/") || n.starts_with("refs/tags/"))
                    .cloned();
                let mut s = ref_list(local);
                s.push_str(&remote_branches(&names, spec, &path));
                s
            };
            let obj = repo.revparse_single(spec).map_err(|e| {
                let msg = format!(
                    "ref {spec:?} not found in {}: {}; {}. Give one of them, or a commit hash",
                    path.display(),
                    e.message(),
                    known()
                );
                if git_ref.is_some() {
                    ResolveError::UnknownRef(msg)
                } else {
                    ResolveError::Unreachable(msg)
                }
            })?;
            let commit = obj.peel_to_commit().map_err(|e| {
                ResolveError::UnknownRef(format!(
                    "ref {spec:?} of {} is not a commit: {}; {}",
                    path.display(),
                    e.message(),
                    known()
                ))
            })?;
            Ok(commit.id().to_string())
        }
        None => {
            if let Some(r) = git_ref.filter(|r| is_full_hash(r)) {
                return Ok(r.to_ascii_lowercase());
            }
            let mut remote = git2::Remote::create_detached(raw).map_err(|e| {
                ResolveError::Unreachable(format!(
                    "invalid repository URL {source}: {}",
                    e.message()
                ))
            })?;
            remote.connect(git2::Direction::Fetch).map_err(|e| {
                ResolveError::Unreachable(format!(
                    "cannot reach the repository {source}: {}",
                    e.message()
                ))
            })?;
            let heads: Vec<(String, String)> = remote
                .list()
                .map_err(|e| {
                    ResolveError::Unreachable(format!(
                        "cannot list the refs of {source}: {}",
                        e.message()
                    ))
                })?
                .iter()
                .map(|h| (h.name().to_string(), h.oid().to_string()))
                .collect();
            pick_ref(&heads, git_ref).ok_or_else(|| match git_ref {
                None => ResolveError::Unreachable(format!(
                    "the repository {source} has no HEAD (is it empty?)"
                )),
                Some(r) => ResolveError::UnknownRef(format!(
                    "ref {r:?} is not a branch or tag of {source}; {}. A commit must be given as its full 40-character hash",
                    ref_list(heads.iter().map(|(n, _)| n.clone()))
                )),
            })
        }
    }
}

/// Whether the repository can be read at all: a local one opened, a remote one answering
/// `ls-remote`. `Err` says why not (the source redacted). An empty repository can be read (it
/// is the student's, and is judged as such).
pub fn reach(repo: &RepoSource) -> Result<(), String> {
    let raw = repo.expose();
    let shown = repo.shown();
    let r = match local_path(raw) {
        Some(path) => git2::Repository::open(&path).map(drop).map_err(|e| {
            format!(
                "cannot open the repository {}: {}; check that the path is a Git repository",
                path.display(),
                e.message()
            )
        }),
        None => git2::Remote::create_detached(raw)
            .map_err(|e| format!("invalid repository URL {shown}: {}", e.message()))
            .and_then(|mut remote| {
                remote
                    .connect(git2::Direction::Fetch)
                    .map_err(|e| format!("cannot reach the repository {shown}: {}", e.message()))?;
                remote
                    .list()
                    .map(drop)
                    .map_err(|e| format!("cannot list the refs of {shown}: {}", e.message()))
            }),
    };
    r.map_err(|m| repo.scrub(&m))
}

/// Picks the commit of `git_ref` (default HEAD) among advertised refs; a peeled tag
/// (`refs/tags/x^{}`) wins over the tag object.
pub fn pick_ref(heads: &[(String, String)], git_ref: Option<&str>) -> Option<String> {
    let find = |name: &str| {
        heads
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, oid)| oid.clone())
    };
    let Some(r) = git_ref else {
        return find("HEAD");
    };
    find(&format!("refs/heads/{r}"))
        .or_else(|| find(&format!("refs/tags/{r}^{{}}")))
        .or_else(|| find(&format!("refs/tags/{r}")))
        .or_else(|| find(&format!("{r}^{{}}")))
        .or_else(|| find(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_picked_like_git_does() {
        let heads = vec![
            ("HEAD".to_string(), "h".to_string()),
            ("refs/heads/main".to_string(), "h".to_string()),
            ("refs/heads/dev".to_string(), "d".to_string()),
            ("refs/tags/v1".to_string(), "tagobj".to_string()),
            ("refs/tags/v1^{}".to_string(), "tagged".to_string()),
        ];
        assert_eq!(pick_ref(&heads, None).as_deref(), Some("h"));
        assert_eq!(pick_ref(&heads, Some("dev")).as_deref(), Some("d"));
        assert_eq!(pick_ref(&heads, Some("v1")).as_deref(), Some("tagged"));
        assert_eq!(
            pick_ref(&heads, Some("refs/heads/dev")).as_deref(),
            Some("d")
        );
        assert_eq!(pick_ref(&heads, Some("nope")), None);
    }

    #[test]
    fn local_sources() {
        assert_eq!(local_path("file:///a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(local_path("/a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(local_path("https://h/o/r.git"), None);
        assert_eq!(local_path("git@h:o/r.git"), None);
        let e = resolve_commit(&"/definitely/not/here".into(), None).unwrap_err();
        assert!(e.contains("cannot open the repository"), "{e}");
    }
}
