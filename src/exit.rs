//! How a command ends: the process exit codes, defined once, and [`CliError`], the one error
//! type a command returns, which carries its exit code and keeps the source chain.
//!
//! | code | meaning |
//! |---|---|
//! | [`OK`] (0) | complete: every criterion assessed, nothing flagged |
//! | [`INTERNAL`] (1) | internal failure: a bug or an environment problem of the grader's |
//! | [`BAD_INPUT`] (2) | bad input: nothing ran; the message says what to fix |
//! | [`INCOMPLETE`] (3) | the report (or a batch's outputs) was written, with flagged criteria or rows |
//! | [`INTERRUPTED`] (130) | stopped by Ctrl-C or SIGTERM (128 + SIGINT) |
//!
//! A leaf module: it imports nothing from the crate.

use std::error::Error;
use std::fmt;

/// Complete: every criterion assessed, nothing flagged.
pub const OK: i32 = 0;
/// Internal failure (a bug, or an environment problem on the grader's side).
pub const INTERNAL: i32 = 1;
/// Bad input: found before anything ran.
pub const BAD_INPUT: i32 = 2;
/// Written, but some criteria (or batch rows) could not be fully assessed: flagged.
pub const INCOMPLETE: i32 = 3;
/// Stopped by Ctrl-C or SIGTERM (128 + SIGINT); spans are flushed before exit.
pub const INTERRUPTED: i32 = 130;

/// Any error, boxed (a `String` converts too).
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// Why a command failed, with its exit code. The message shown to the user is the error's
/// own (it says what, where and how to fix); the source chain is kept for logs and callers.
#[derive(Debug)]
pub enum CliError {
    /// Bad input, found before anything ran (exit 2).
    BadInput(BoxError),
    /// The grader's own failure (exit 1).
    Internal(BoxError),
    /// Stopped by Ctrl-C before anything was written (exit 130).
    Interrupted,
}

impl CliError {
    /// Bad input (exit 2).
    pub fn bad_input(error: impl Into<BoxError>) -> Self {
        CliError::BadInput(error.into())
    }

    /// An internal failure (exit 1).
    pub fn internal(error: impl Into<BoxError>) -> Self {
        CliError::Internal(error.into())
    }

    /// An internal failure while doing `what`: shown as "`what`: `source`", with `source`
    /// kept as the error's source.
    pub fn internal_while(what: impl Into<String>, source: impl Into<BoxError>) -> Self {
        CliError::Internal(Box::new(Context {
            what: what.into(),
            source: source.into(),
        }))
    }

    /// The process exit code of this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::BadInput(_) => BAD_INPUT,
            CliError::Internal(_) => INTERNAL,
            CliError::Interrupted => INTERRUPTED,
        }
    }

    /// How the message is introduced on stderr: `error`, `internal error` or `interrupted`.
    pub fn prefix(&self) -> &'static str {
        match self {
            CliError::BadInput(_) => "error",
            CliError::Internal(_) => "internal error",
            CliError::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::BadInput(e) | CliError::Internal(e) => e.fmt(f),
            CliError::Interrupted => f.write_str("no report was written"),
        }
    }
}

impl Error for CliError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            CliError::BadInput(e) | CliError::Internal(e) => e.source(),
            CliError::Interrupted => None,
        }
    }
}

/// What was being done when an error happened, in front of the error itself.
#[derive(Debug)]
struct Context {
    what: String,
    source: BoxError,
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl Error for Context {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("disk full")]
    struct Io;

    #[test]
    fn each_failure_has_its_exit_code_and_prefix() {
        let bad = CliError::bad_input("--ref is empty: give a branch, tag or commit");
        assert_eq!((bad.exit_code(), bad.prefix()), (BAD_INPUT, "error"));
        assert_eq!(
            bad.to_string(),
            "--ref is empty: give a branch, tag or commit"
        );
        let internal = CliError::internal(Io);
        assert_eq!(
            (internal.exit_code(), internal.prefix()),
            (INTERNAL, "internal error")
        );
        let stopped = CliError::Interrupted;
        assert_eq!(
            (stopped.exit_code(), stopped.prefix()),
            (INTERRUPTED, "interrupted")
        );
        assert_eq!(stopped.to_string(), "no report was written");
    }

    #[test]
    fn context_is_shown_in_front_and_the_source_is_kept() {
        let e = CliError::internal_while("could not write the report", Io);
        assert_eq!(e.to_string(), "could not write the report: disk full");
        let source = e.source().expect("the source is kept");
        assert_eq!(source.to_string(), "disk full");
        assert!(source.downcast_ref::<Io>().is_some());
    }
}
