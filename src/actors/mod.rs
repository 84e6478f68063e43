//! The actor shell: a `Coordinator` (supervisor) owning one audit, detective actors, judge
//! actors and the Chief Justice actor, exchanging typed messages. The graph's topology is in
//! [`coordinator`]; its pure bookkeeping in [`barrier`] and [`routes`].

pub mod aggregate;
pub mod barrier;
pub mod chief_justice;
pub mod coordinator;
pub mod detectives;
pub mod judges;
pub mod routes;

pub use coordinator::{
    AuditInput, AuditOutcome, CollectEvidence, Collected, Coordinator, JudgeCollected, PdfSource,
    RestartPolicy, RunAudit, Timeouts,
};
