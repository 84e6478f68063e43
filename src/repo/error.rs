//! Why a repository could not be audited, typed: the four kinds an audit reports differently
//! ([`RepoError`]), each with its own cases and the cause kept as the error's source. Every
//! message says what was wrong, where, and how to fix it; a source's text is part of it where
//! the user needs it (the command prints one line).

use std::path::PathBuf;

/// Why the repository could not be audited.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The source or the ref given is not one that can be audited (bad input).
    #[error(transparent)]
    InvalidSource(#[from] SourceError),
    /// The clone failed.
    #[error(transparent)]
    Clone(#[from] CloneError),
    /// A declared limit was reached (time, size, file count).
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// The cloned repository could not be read.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
}

/// The source or the ref given cannot be audited. Sources are quoted redacted.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("--repo is empty: give an https URL, a local path or a file:// URL")]
    Empty,
    #[error(
        "--repo {shown:?} is not a valid URL ({source}); expected e.g. https://github.com/owner/repo"
    )]
    Url {
        shown: String,
        #[source]
        source: url::ParseError,
    },
    #[error("--repo {url} has no host; expected e.g. https://github.com/owner/repo")]
    NoHost { url: String },
    #[error("--repo {shown:?} is not a valid file:// URL ({source})")]
    FileUrl {
        shown: String,
        #[source]
        source: url::ParseError,
    },
    #[error(
        "--repo {shown:?}: a file:// URL must name an absolute local path (file:///path/to/repo)"
    )]
    FileUrlNotAbsolute { shown: String },
    #[error("--repo {shown}: use https:// instead (plain http is refused)")]
    PlainHttp { shown: String },
    #[error(
        "--repo {shown}: scheme {scheme:?} is not supported; use an https URL, a local path or a file:// URL"
    )]
    Scheme { shown: String, scheme: String },
    #[error(
        "--repo {shown:?} looks like an SSH address; SSH is not supported: use the https URL of the repository"
    )]
    Ssh { shown: String },
    #[error(
        "--repo {given:?}: {escape}; a local repository must keep its git data inside the \
         directory given (audit the other repository by its own path if that is meant)"
    )]
    GitDataOutside {
        given: String,
        #[source]
        escape: Escape,
    },
    #[error("--repo {given:?} is a file, not a repository directory")]
    NotADirectory { given: String },
    #[error(
        "--repo {given:?}: local path cannot be read ({source}); check the path, or give an https URL"
    )]
    Unreadable {
        given: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--ref {git_ref:?} is not a branch, tag or commit of {shown} (refs: {refs})")]
    UnknownRef {
        git_ref: String,
        shown: String,
        refs: String,
    },
    #[error("HEAD of {shown} does not point to a commit (refs: {refs}); choose one with --ref")]
    NoHead { shown: String, refs: String },
}

/// A local repository's git data reaches outside its directory (`what`: which file says so).
#[derive(Debug, thiserror::Error)]
#[error("{what} points outside the directory, to {}", to.display())]
pub struct Escape {
    pub what: &'static str,
    pub to: PathBuf,
}

/// The clone failed. libgit2's message is kept scrubbed of credentials (`message`); the raw
/// error is not kept, as it may quote the URL with its credentials.
#[derive(Debug, thiserror::Error)]
pub enum CloneError {
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    #[error(
        "authentication failed for {shown}: the repository is private or does not exist. \
         Check the URL; only public repositories can be audited over https"
    )]
    Auth { shown: String },
    #[error("network error while cloning {shown}: {message}. Check the URL and the connection")]
    Network { shown: String, message: String },
    #[error(
        "cannot clone {shown}: {message}. Is it a git repository (a working tree or a bare repository)?"
    )]
    NotARepository { shown: String, message: String },
    #[error("HEAD of {shown} is not a commit: {}", source.message())]
    HeadNotACommit {
        shown: String,
        #[source]
        source: git2::Error,
    },
}

/// A declared limit was reached.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error(
        "cloning {shown} took longer than the clone timeout ({secs} s); raise the timeout or check the network"
    )]
    CloneTimeout { shown: String, secs: u64 },
    #[error("{shown} is larger than the repository size limit ({max} bytes)")]
    Download { shown: String, max: u64 },
    #[error("{shown} is {size} bytes once cloned, over the repository size limit ({max} bytes)")]
    Cloned { shown: String, size: u64, max: u64 },
    #[error(
        "the audited commit has more than {max} files (file-count limit); audit a smaller repository or raise the limit"
    )]
    Files { max: usize },
}

/// The cloned repository could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("cannot open the object database: {0}")]
    ObjectDatabase(#[source] git2::Error),
    #[error("cannot read the commit's tree: {0}")]
    Tree(#[source] git2::Error),
    #[error("cannot read the tree of {commit}: {source}")]
    TreeOf {
        commit: String,
        #[source]
        source: git2::Error,
    },
    #[error("cannot read the history: {0}")]
    History(#[source] git2::Error),
}

/// Why one file of the tree is not read (a note of the audit, not a failure).
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("{path}: symlink, not followed")]
    Symlink { path: String },
    #[error("{path}: {size} bytes, over the single-file limit ({max} bytes); not analysed")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("{path}: cannot read blob: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: git2::Error,
    },
}
