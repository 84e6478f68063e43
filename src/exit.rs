//! The process exit codes, defined once for every command.
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
