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

/// Why a commit could not be resolved. Every text quotes the source redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The ref does not exist in the repository: bad input. The message names the refs that
    /// exist.
    #[error(transparent)]
    UnknownRef(UnknownRef),
    /// The repository could not be opened or reached.
    #[error(transparent)]
    Unreachable(Unreachable),
}

/// A ref the repository does not have (`refs`: the refs that exist, in words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownRef {
    #[error("{0}")]
    NotFound(RefNotFound),
    #[error("ref {spec:?} of {repo} is not a commit: {source}; {refs}")]
    NotACommit {
        spec: String,
        repo: String,
        refs: String,
        #[source]
        source: GitError,
    },
    #[error(
        "ref {git_ref:?} is not a branch or tag of {repo}; {refs}. A commit must be given as its full 40-character hash"
    )]
    NotAdvertised {
        git_ref: String,
        repo: String,
        refs: String,
    },
}

/// A ref not found in a local repository (`refs`: the refs that exist, in words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ref {spec:?} not found in {repo}: {source}; {refs}. Give one of them, or a commit hash")]
pub struct RefNotFound {
    spec: String,
    repo: String,
    refs: String,
    #[source]
    source: GitError,
}

/// A repository that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreachable {
    #[error("cannot open the repository {path}: {source}; check that the path is a Git repository")]
    CannotOpen {
        path: String,
        #[source]
        source: GitError,
    },
    /// A local repository without the `HEAD` asked for by default.
    #[error("{0}")]
    NoHead(RefNotFound),
    #[error("invalid repository URL {repo}: {source}")]
    InvalidUrl {
        repo: String,
        #[source]
        source: GitError,
    },
    #[error("cannot reach the repository {repo}: {source}")]
    NoAnswer {
        repo: String,
        #[source]
        source: GitError,
    },
    #[error("cannot list the refs of {repo}: {source}")]
    NoRefs {
        repo: String,
        #[source]
        source: GitError,
    },
    #[error("the repository {repo} has no HEAD (is it empty?)")]
    EmptyRemote { repo: String },
}

/// libgit2's error: its code and class, and its message scrubbed of the source's credentials
/// (the raw error is not kept: its text may hold them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GitError {
    pub code: git2::ErrorCode,
    pub class: git2::ErrorClass,
    message: String,
}

impl GitError {
    fn scrubbed(e: &git2::Error, repo: &RepoSource) -> Self {
        GitError {
            code: e.code(),
            class: e.class(),
            message: repo.scrub(e.message()),
        }
    }
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

/// The full commit hash to audit. Texts quote the source redacted (libgit2's own messages
/// scrubbed of its credentials); an unknown ref is bad input.
pub fn resolve(repo: &RepoSource, git_ref: Option<&str>) -> Result<String, ResolveError> {
    let raw = repo.expose();
    let shown = || repo.shown().to_string();
    let git = |e: &git2::Error| GitError::scrubbed(e, repo);
    match local_path(raw) {
        Some(path) => {
            let opened = git2::Repository::open(&path).map_err(|e| Unreachable::CannotOpen {
                path: repo.scrub(&path.display().to_string()),
                source: git(&e),
            });
            let local = opened.map_err(ResolveError::Unreachable)?;
            let spec = git_ref.unwrap_or("HEAD");
            let known = || {
                let names = local
                    .references()
                    .map(|refs| {
                        refs.flatten()
                            .filter_map(|r| r.name().ok().map(str::to_string))
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                let heads_and_tags = names
                    .iter()
                    .filter(|n| n.starts_with("refs/heads/") || n.starts_with("refs/tags/"))
                    .cloned();
                let mut s = ref_list(heads_and_tags);
                s.push_str(&remote_branches(&names, spec, &path));
                repo.scrub(&s)
            };
            let shown_path = || repo.scrub(&path.display().to_string());
            let obj = local.revparse_single(spec).map_err(|e| {
                let missing = RefNotFound {
                    spec: repo.scrub(spec),
                    repo: shown_path(),
                    refs: known(),
                    source: git(&e),
                };
                if git_ref.is_some() {
                    ResolveError::UnknownRef(UnknownRef::NotFound(missing))
                } else {
                    ResolveError::Unreachable(Unreachable::NoHead(missing))
                }
            })?;
            let commit = obj.peel_to_commit().map_err(|e| {
                ResolveError::UnknownRef(UnknownRef::NotACommit {
                    spec: repo.scrub(spec),
                    repo: shown_path(),
                    refs: known(),
                    source: git(&e),
                })
            })?;
            Ok(commit.id().to_string())
        }
        None => {
            if let Some(r) = git_ref.filter(|r| is_full_hash(r)) {
                return Ok(r.to_ascii_lowercase());
            }
            let heads = list_remote(repo).map_err(ResolveError::Unreachable)?;
            pick_ref(&heads, git_ref).ok_or_else(|| match git_ref {
                None => ResolveError::Unreachable(Unreachable::EmptyRemote { repo: shown() }),
                Some(r) => ResolveError::UnknownRef(UnknownRef::NotAdvertised {
                    git_ref: repo.scrub(r),
                    repo: shown(),
                    refs: repo.scrub(&ref_list(heads.iter().map(|(n, _)| n.clone()))),
                }),
            })
        }
    }
}

/// The refs a remote advertises (`ls-remote`): name and commit.
fn list_remote(repo: &RepoSource) -> Result<Vec<(String, String)>, Unreachable> {
    let shown = || repo.shown().to_string();
    let mut remote =
        git2::Remote::create_detached(repo.expose()).map_err(|e| Unreachable::InvalidUrl {
            repo: shown(),
            source: GitError::scrubbed(&e, repo),
        })?;
    remote
        .connect(git2::Direction::Fetch)
        .map_err(|e| Unreachable::NoAnswer {
            repo: shown(),
            source: GitError::scrubbed(&e, repo),
        })?;
    let heads = remote.list().map_err(|e| Unreachable::NoRefs {
        repo: shown(),
        source: GitError::scrubbed(&e, repo),
    })?;
    Ok(heads
        .iter()
        .map(|h| (h.name().to_string(), h.oid().to_string()))
        .collect())
}

/// Whether the repository can be read at all: a local one opened, a remote one answering
/// `ls-remote`. An empty repository can be read (it is the student's, and is judged as such).
pub fn reach(repo: &RepoSource) -> Result<(), Unreachable> {
    match local_path(repo.expose()) {
        Some(path) => {
            git2::Repository::open(&path)
                .map(drop)
                .map_err(|e| Unreachable::CannotOpen {
                    path: repo.scrub(&path.display().to_string()),
                    source: GitError::scrubbed(&e, repo),
                })
        }
        None => list_remote(repo).map(drop),
    }
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
        let e = resolve(&"/definitely/not/here".into(), None).unwrap_err();
        assert!(
            matches!(e, ResolveError::Unreachable(Unreachable::CannotOpen { .. })),
            "{e:?}"
        );
        assert!(e.to_string().contains("cannot open the repository"), "{e}");
    }
}
