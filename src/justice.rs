//! The Chief Justice: deterministic synthesis of the three opinions per criterion (security
//! override, fact supremacy, functionality weight, dissent requirement, variance
//! re-evaluation) and composition of the final [`AuditReport`].
//!
//! STUB: being built (issue 2).
