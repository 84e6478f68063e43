//! The actor shell: a `Coordinator` (supervisor) owning one audit, detective actors, judge
//! actors and the Chief Justice actor, exchanging typed messages. The graph's topology is in
//! [`coordinator`]; its pure bookkeeping in [`barrier`] and [`routes`].

pub mod aggregate;
pub mod audit;
pub mod barrier;
mod branch;
pub mod chief_justice;
pub mod coordinator;
mod criteria;
pub mod detectives;
pub mod judges;
pub mod routes;
mod spans;
mod supervision;

pub use audit::{AuditInput, AuditOutcome, Collected, PdfSource, RestartPolicy, Timeouts};
pub use coordinator::{CollectEvidence, Coordinator, JudgeCollected, RunAudit};
