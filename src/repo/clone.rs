//! Sandboxed clone and reading of the audited commit.
//!
//! - The source is validated first ([`parse_source`]): `https://` URLs, `file://` URLs and
//!   local paths (working trees or bare repositories). Other schemes are refused.
//! - The clone is a *bare*, full-history clone into a fresh [`tempfile::TempDir`]: no working
//!   tree is ever checked out, so nothing from the target lands on disk as files, no hooks
//!   exist or run (libgit2 runs none), submodules are never fetched, and the directory is
//!   removed when the `TempDir` drops (every return path, and unwinding panics).
//! - Files are read straight from the object database of the audited commit's tree. Symlinks
//!   are never followed; huge, binary and non-UTF-8 files are skipped or decoded with a note.

use super::error::{
    AnalysisError, BlobError, CloneError, Escape, LimitError, RepoError, SourceError,
};
use super::{RepoLimits, RepoSource};
use git2::{FetchOptions, ObjectType, RemoteCallbacks, Repository, build::RepoBuilder};
use std::cell::Cell;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// A validated source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Https(url::Url),
    Local(PathBuf),
}

impl Source {
    /// What to hand to libgit2.
    fn clone_url(&self) -> String {
        match self {
            Source::Https(u) => u.to_string(),
            Source::Local(p) => p.display().to_string(),
        }
    }

    /// For messages and facts: credentials removed.
    pub fn display(&self) -> String {
        match self {
            Source::Https(u) => redact(u),
            Source::Local(p) => p.display().to_string(),
        }
    }
}

/// A URL without user name, password, query or fragment (tokens live there).
pub fn redact(u: &url::Url) -> String {
    super::source::redact_text(u.as_str()).0
}

/// Checks the source without touching the network. Messages quote the source redacted.
pub fn parse_source(source: &RepoSource) -> Result<Source, RepoError> {
    let s = source.expose().trim();
    let shown = source.shown().trim();
    if s.is_empty() {
        return Err(SourceError::Empty.into());
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("https://") {
        let u = url::Url::parse(s).map_err(|source| SourceError::Url {
            shown: shown.to_string(),
            source,
        })?;
        if u.host_str().is_none_or(str::is_empty) {
            return Err(SourceError::NoHost { url: redact(&u) }.into());
        }
        return Ok(Source::Https(u));
    }
    if lower.starts_with("file://") {
        let u = url::Url::parse(s).map_err(|source| SourceError::FileUrl {
            shown: shown.to_string(),
            source,
        })?;
        let p = u
            .to_file_path()
            .map_err(|()| SourceError::FileUrlNotAbsolute {
                shown: shown.to_string(),
            })?;
        return local(p, shown);
    }
    if let Some((scheme, _)) = s.split_once("://") {
        let shown = shown.to_string();
        return Err(if scheme.eq_ignore_ascii_case("http") {
            SourceError::PlainHttp { shown }
        } else {
            let scheme = scheme.to_string();
            SourceError::Scheme { shown, scheme }
        }
        .into());
    }
    if is_scp_like(s) {
        let shown = shown.to_string();
        return Err(SourceError::Ssh { shown }.into());
    }
    local(PathBuf::from(s), shown)
}

fn local(p: PathBuf, given: &str) -> Result<Source, RepoError> {
    let given = given.to_string();
    match std::fs::metadata(&p) {
        Ok(m) if m.is_dir() => {
            let root = std::fs::canonicalize(&p).unwrap_or(p);
            confined(&root).map_err(|escape| SourceError::GitDataOutside { given, escape })?;
            Ok(Source::Local(root))
        }
        Ok(_) => Err(SourceError::NotADirectory { given }.into()),
        Err(source) => Err(SourceError::Unreadable { given, source }.into()),
    }
}

/// Refuses a local repository whose git data lives outside `root` (which is canonical): a
/// `.git` file saying `gitdir: /elsewhere`, a `commondir` pointing out, or object alternates
/// outside. libgit2 follows all three, so a submission could be graded as another repository
/// (or read another repository's objects). Missing or unreadable files are left to libgit2.
fn confined(root: &Path) -> Result<(), Escape> {
    let inside = |base: &Path, target: &str, what: &'static str| -> Result<PathBuf, Escape> {
        let target = target.trim();
        let joined = base.join(target);
        // A target that does not exist cannot be followed; libgit2 reports it.
        let real = std::fs::canonicalize(&joined).unwrap_or(joined);
        if real.starts_with(root) {
            Ok(real)
        } else {
            Err(Escape { what, to: real })
        }
    };
    let small = |p: &Path| -> Option<String> {
        let m = std::fs::symlink_metadata(p).ok()?;
        (m.is_file() && m.len() <= 64 * 1024)
            .then(|| std::fs::read_to_string(p).ok())
            .flatten()
    };
    let dot_git = root.join(".git");
    let git_dir = match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_file() => {
            let text = small(&dot_git).unwrap_or_default();
            match text.lines().find_map(|l| l.trim().strip_prefix("gitdir:")) {
                Some(target) => inside(root, target, "its .git file (gitdir:)")?,
                None => return Ok(()),
            }
        }
        Ok(m) if m.is_symlink() => inside(
            root,
            &std::fs::read_link(&dot_git)
                .map(|t| t.display().to_string())
                .unwrap_or_default(),
            "its .git symlink",
        )?,
        Ok(_) => dot_git,
        Err(_) => root.to_path_buf(), // a bare repository
    };
    let mut object_dirs = vec![git_dir.join("objects")];
    if let Some(common) = small(&git_dir.join("commondir")) {
        let common = inside(&git_dir, &common, "its commondir")?;
        object_dirs.push(common.join("objects"));
    }
    for objects in object_dirs {
        if let Some(alternates) = small(&objects.join("info/alternates")) {
            for line in alternates.lines() {
                let line = line.trim();
                if !line.is_empty() && !line.starts_with('#') {
                    inside(&objects, line, "its objects/info/alternates")?;
                }
            }
        }
    }
    Ok(())
}

/// `git@github.com:owner/repo.git`
fn is_scp_like(s: &str) -> bool {
    match s.split_once(':') {
        Some((host, rest)) => {
            host.contains('@') && !host.contains('/') && !rest.starts_with('\\') && host.len() > 1
        }
        None => false,
    }
}

/// Clones `source` (full history, bare) into a new temporary directory.
pub fn clone(
    source: &Source,
    limits: &RepoLimits,
    tmp_parent: Option<&Path>,
) -> Result<(tempfile::TempDir, Repository), RepoError> {
    set_network_timeouts(limits);
    let mut b = tempfile::Builder::new();
    b.prefix("auditor-repo-");
    let dir = match tmp_parent {
        Some(p) => b.tempdir_in(p),
        None => b.tempdir(),
    }
    .map_err(CloneError::TempDir)?;
    let target = dir.path().join("repo.git");
    let started = Instant::now();
    let timed_out = Cell::new(false);
    let too_big = Cell::new(false);
    let mut callbacks = RemoteCallbacks::new();
    callbacks.transfer_progress(|p| {
        if started.elapsed() > limits.clone_timeout {
            timed_out.set(true);
            return false;
        }
        if p.received_bytes() as u64 > limits.max_repo_bytes {
            too_big.set(true);
            return false;
        }
        true
    });
    let mut fetch = FetchOptions::new();
    fetch.remote_callbacks(callbacks);
    fetch.download_tags(git2::AutotagOption::All);
    let result = RepoBuilder::new()
        .bare(true)
        .fetch_options(fetch)
        .clone(&source.clone_url(), &target);
    let shown = source.display();
    let repo = match result {
        Ok(r) => r,
        Err(_) if timed_out.get() => return Err(too_slow(shown, limits).into()),
        Err(_) if too_big.get() => {
            let max = limits.max_repo_bytes;
            return Err(LimitError::Download { shown, max }.into());
        }
        Err(e) => return Err(clone_error(source, &e).into()),
    };
    if started.elapsed() > limits.clone_timeout {
        return Err(too_slow(shown, limits).into());
    }
    let size = dir_size(dir.path());
    if size > limits.max_repo_bytes {
        let max = limits.max_repo_bytes;
        return Err(LimitError::Cloned { shown, size, max }.into());
    }
    Ok((dir, repo))
}

fn too_slow(shown: String, limits: &RepoLimits) -> LimitError {
    let secs = limits.clone_timeout.as_secs();
    LimitError::CloneTimeout { shown, secs }
}

fn clone_error(source: &Source, e: &git2::Error) -> CloneError {
    use git2::{ErrorClass, ErrorCode};
    let shown = source.display();
    // libgit2 may quote the URL it was given, credentials included.
    let msg = RepoSource::new(source.clone_url()).scrub(e.message());
    let auth = e.code() == ErrorCode::Auth
        || msg.contains("401")
        || msg.contains("403")
        || msg.to_lowercase().contains("authentication");
    if auth {
        return CloneError::Auth { shown };
    }
    match e.class() {
        ErrorClass::Net | ErrorClass::Http | ErrorClass::Ssl | ErrorClass::Os
            if shown.starts_with("https://") =>
        {
            CloneError::Network {
                shown,
                message: msg,
            }
        }
        _ => CloneError::NotARepository {
            shown,
            message: msg,
        },
    }
}

fn set_network_timeouts(limits: &RepoLimits) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let ms = limits.clone_timeout.as_millis().min(i32::MAX as u128) as i32;
    ONCE.call_once(|| {
        // SAFETY: global libgit2 options, written once before any clone of this process
        // uses them; they only bound how long a stalled connection may block.
        unsafe {
            let _ = git2::opts::set_server_connect_timeout_in_milliseconds(ms.min(60_000));
            let _ = git2::opts::set_server_timeout_in_milliseconds(ms);
        }
    });
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map(|m| m.len()).unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}

/// The commit to audit: `git_ref` (branch, tag or commit) or HEAD. `Ok(None)` for a
/// repository without any commit.
pub fn resolve_commit<'r>(
    repo: &'r Repository,
    git_ref: Option<&str>,
    shown: &str,
) -> Result<Option<git2::Commit<'r>>, RepoError> {
    let branches = || -> String {
        let mut names: Vec<String> = repo
            .references()
            .map(|refs| {
                refs.flatten()
                    .filter_map(|r| r.shorthand().ok().map(str::to_string))
                    .filter(|n| !n.ends_with("/HEAD"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names.dedup();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    };
    match git_ref {
        Some(r) => {
            let candidates = [
                format!("refs/remotes/origin/{r}"),
                format!("refs/tags/{r}"),
                format!("refs/heads/{r}"),
                r.to_string(),
            ];
            for c in &candidates {
                if let Ok(obj) = repo.revparse_single(c)
                    && let Ok(commit) = obj.peel_to_commit()
                {
                    return Ok(Some(commit));
                }
            }
            Err(SourceError::UnknownRef {
                git_ref: r.to_string(),
                shown: shown.to_string(),
                refs: branches(),
            }
            .into())
        }
        None => {
            let has_refs = repo
                .references()
                .map(|mut refs| refs.any(|r| r.is_ok()))
                .unwrap_or(false);
            match repo.head() {
                Ok(h) => h.peel_to_commit().map(Some).map_err(|source| {
                    let shown = shown.to_string();
                    CloneError::HeadNotACommit { shown, source }.into()
                }),
                Err(_) if !has_refs => Ok(None),
                Err(_) => Err(SourceError::NoHead {
                    shown: shown.to_string(),
                    refs: branches(),
                }
                .into()),
            }
        }
    }
}

/// One entry of the audited tree.
#[derive(Debug, Clone)]
pub struct TreeFile {
    pub path: String,
    pub oid: git2::Oid,
    pub size: u64,
    pub symlink: bool,
}

/// Lists the commit's tree (files and symlinks), noting submodules and outward symlinks.
pub fn list_files(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    limits: &RepoLimits,
    notes: &mut Vec<String>,
) -> Result<Vec<TreeFile>, RepoError> {
    let mut files = Vec::new();
    let mut too_many = false;
    let odb = repo.odb().map_err(AnalysisError::ObjectDatabase)?;
    let walked = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
        let path = format!("{dir}{name}");
        match entry.kind() {
            Some(ObjectType::Blob) => {
                if files.len() >= limits.max_files {
                    too_many = true;
                    return git2::TreeWalkResult::Abort;
                }
                let size = odb
                    .read_header(entry.id())
                    .map(|(s, _)| s as u64)
                    .unwrap_or(0);
                let symlink = entry.filemode() == 0o120000;
                files.push(TreeFile {
                    path,
                    oid: entry.id(),
                    size,
                    symlink,
                });
            }
            Some(ObjectType::Commit) => notes.push(format!(
                "{path}: git submodule, not fetched (submodules are never recursed)"
            )),
            _ => {}
        }
        git2::TreeWalkResult::Ok
    });
    if too_many {
        let max = limits.max_files;
        return Err(LimitError::Files { max }.into());
    }
    walked.map_err(AnalysisError::Tree)?;
    for f in files.iter().filter(|f| f.symlink) {
        let target = repo
            .find_blob(f.oid)
            .map(|b| String::from_utf8_lossy(b.content()).into_owned())
            .unwrap_or_default();
        if escapes(&f.path, &target) {
            notes.push(format!(
                "{}: symlink pointing outside the repository ({target}); never followed",
                f.path
            ));
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Does a symlink at `path` with `target` resolve outside the repository root?
pub fn escapes(path: &str, target: &str) -> bool {
    let t = Path::new(target);
    if t.is_absolute() || target.starts_with('~') {
        return true;
    }
    let mut depth: i64 = path.matches('/').count() as i64;
    for c in t.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return true,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// The bytes of a blob when it is a regular file within the size limit.
pub fn read_blob(repo: &Repository, f: &TreeFile, max: u64) -> Result<Vec<u8>, BlobError> {
    let path = f.path.clone();
    if f.symlink {
        return Err(BlobError::Symlink { path });
    }
    if f.size > max {
        let size = f.size;
        return Err(BlobError::TooLarge { path, size, max });
    }
    repo.find_blob(f.oid)
        .map(|b| b.content().to_vec())
        .map_err(|source| BlobError::Unreadable { path, source })
}

/// Binary content: a NUL byte in the first 8 KiB (git's own heuristic).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|b| *b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_validated_without_network() {
        assert!(matches!(
            parse_source(&"https://github.com/o/r".into()).unwrap(),
            Source::Https(_)
        ));
        for bad in [
            "",
            "   ",
            "http://github.com/o/r",
            "ssh://git@github.com/o/r",
            "git@github.com:o/r.git",
            "/definitely/not/here",
            "https://",
        ] {
            let e = parse_source(&bad.into()).unwrap_err().to_string();
            assert!(!e.is_empty(), "{bad}");
        }
        let e = parse_source(&"https://user:s3cret@github.com/o r%".into()).map(|s| s.display());
        if let Ok(shown) = e {
            assert!(!shown.contains("s3cret"));
        }
        let e = parse_source(&"ftp://user:s3cret@host/x".into())
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret"), "{e}");
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(
            parse_source(&d.path().to_str().unwrap().into()),
            Ok(Source::Local(_))
        ));
        let url = url::Url::from_file_path(d.path()).unwrap();
        assert!(matches!(
            parse_source(&url.as_str().into()),
            Ok(Source::Local(_))
        ));
    }

    #[test]
    fn credentials_are_redacted() {
        let u = url::Url::parse("https://user:tok@github.com/o/r?token=x").unwrap();
        assert_eq!(redact(&u), "https://github.com/o/r");
    }

    #[test]
    fn git_data_outside_the_given_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let other = d.path().join("other");
        git2::Repository::init(&other).unwrap();
        let root = d.path().join("sub");
        std::fs::create_dir(&root).unwrap();
        let given = |p: &Path| parse_source(&p.to_str().unwrap().into());

        std::fs::write(root.join(".git"), "gitdir: ../other/.git\n").unwrap();
        let e = given(&root).unwrap_err().to_string();
        assert!(e.contains("gitdir") && e.contains("outside"), "{e}");

        // Inside the directory: fine (a worktree-like layout).
        git2::Repository::init_bare(root.join("inner.git")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: inner.git\n").unwrap();
        assert!(given(&root).is_ok());

        // A bare repository borrowing another repository's objects.
        let bare = d.path().join("bare.git");
        git2::Repository::init_bare(&bare).unwrap();
        std::fs::create_dir_all(bare.join("objects/info")).unwrap();
        std::fs::write(
            bare.join("objects/info/alternates"),
            format!("{}\n", other.join(".git/objects").display()),
        )
        .unwrap();
        let e = given(&bare).unwrap_err().to_string();
        assert!(e.contains("alternates"), "{e}");

        // A commondir pointing out.
        let wt = d.path().join("wt");
        std::fs::create_dir_all(wt.join(".git")).unwrap();
        std::fs::write(wt.join(".git/commondir"), "../../other/.git\n").unwrap();
        let e = given(&wt).unwrap_err().to_string();
        assert!(e.contains("commondir"), "{e}");
    }

    #[test]
    fn symlink_escape_is_detected() {
        assert!(escapes("link", "/etc/passwd"));
        assert!(escapes("a/link", "../../x"));
        assert!(!escapes("a/link", "../b/x"));
        assert!(!escapes("a/link", "b"));
    }
}
