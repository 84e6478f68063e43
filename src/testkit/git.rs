//! Git fixture repositories for tests and benchmarks, built as the sample's ([`build_repo`]).

pub use crate::sample::repo::{
    Commit as FixtureCommit, SAMPLE_START, build_repo, sample_langgraph_project,
};
