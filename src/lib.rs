//! `auditor`: audits a LangGraph project repository and its PDF report against a rubric with a
//! panel of judges, and writes a Markdown verdict with its evidence.
//!
//! Functional core, actor shell: everything outside [`actors`] is plain functions over plain
//! data; the actors only receive messages, call the core (blocking work off the actor thread)
//! and reply. See `ARCHITECTURE.md` for the codemap.

pub mod actors;
pub mod alloc;
pub mod audit;
pub mod batch;
pub(crate) mod calibrate;
pub mod cli;
pub mod console;
pub mod exit;
pub(crate) mod family;
pub(crate) mod files;
pub mod flags;
pub mod interrupt;
pub mod judges;
pub mod justice;
pub mod launch;
pub mod llm;
pub mod model;
pub mod pdf;
pub mod repo;
pub mod report;
pub mod review;
pub mod rubric;
pub mod sample;
pub mod similarity;
pub(crate) mod tally;
pub mod telemetry;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod text;
pub mod vision;
pub mod words;

#[cfg(test)]
mod layers;
