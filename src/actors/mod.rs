//! The actor shell: a `Coordinator` (supervisor) owning one audit, detective actors, judge
//! actors and the Chief Justice actor, exchanging typed messages. The graph's topology is in
//! `coordinator`; the audit's plain data in `audit`; a detective branch in `branch`, the
//! criterion barriers in `criteria`, judge supervision in `supervision`, the spans in
//! `spans`; pure bookkeeping in `barrier`, `routes` and `aggregate`.

pub(crate) mod aggregate;
pub(crate) mod barrier;
mod branch;
pub(crate) mod chief_justice;
pub(crate) mod coordinator;
mod criteria;
pub(crate) mod detectives;
pub(crate) mod judges;
pub(crate) mod routes;
mod spans;
mod supervision;

pub use coordinator::{CollectEvidence, Coordinator, JudgeCollected, RunAudit};
