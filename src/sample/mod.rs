//! `auditor sample`: a small LangGraph project ([`repo`]) and its architecture report
//! ([`report`]), built from code so that a newcomer can run an audit at once.

pub mod repo;
pub mod report;
