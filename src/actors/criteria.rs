//! The judges' fan-in: one barrier per criterion, expecting the three personas, with its span
//! open from the fan-out to the release. A released criterion's answers become opinions or
//! recorded failures in the state.

use super::barrier::Barrier;
use super::spans::{self, Release};
use super::supervision::NoOpinion;
use crate::judges::JudgeAnswer;
use crate::model::{Judge, JudgeFailure, StateUpdate};
use crate::rubric::Dimension;
use std::collections::BTreeMap;

type Answer = Result<JudgeAnswer, NoOpinion>;

/// One criterion's barrier, its span and how many of its requests timed out.
struct Pending {
    barrier: Barrier<Judge, Answer>,
    span: tracing::Span,
    timed_out: usize,
}

/// The open criterion barriers of one audit.
pub(super) struct CriterionBarriers {
    open: BTreeMap<String, Pending>,
}

impl CriterionBarriers {
    /// A barrier (and its span) for every dimension.
    pub(super) fn new(dimensions: &[Dimension], submission: &str) -> Self {
        let open = dimensions
            .iter()
            .map(|d| {
                let pending = Pending {
                    barrier: Barrier::new(Judge::ALL),
                    span: spans::barrier("criterion", Some(&d.id), Judge::ALL.len(), submission),
                    timed_out: 0,
                };
                (d.id.clone(), pending)
            })
            .collect();
        CriterionBarriers { open }
    }

    /// Closes a criterion no judge is asked about.
    pub(super) fn skip(&mut self, criterion: &str) {
        self.open.remove(criterion);
    }

    /// The span of an open criterion (the parent of its judge requests).
    pub(super) fn span(&self, criterion: &str) -> tracing::Span {
        self.open
            .get(criterion)
            .map(|p| p.span.clone())
            .unwrap_or_else(tracing::Span::none)
    }

    /// One persona's answer arrives. When it completes the criterion, the barrier is released
    /// (recorded on its span) and the answers are returned as an update to the state.
    pub(super) fn arrive(
        &mut self,
        criterion: &str,
        persona: Judge,
        answer: Answer,
        timed_out: bool,
    ) -> Option<StateUpdate> {
        let pending = self.open.get_mut(criterion)?;
        if timed_out {
            pending.timed_out += 1;
        }
        if let Err(e) = pending.barrier.arrive(persona, answer) {
            tracing::error!(%criterion, %persona, error = %e, "barrier refused an arrival");
            return None;
        }
        if !pending.barrier.is_complete() {
            return None;
        }
        let Pending {
            barrier,
            span,
            timed_out,
        } = self.open.remove(criterion)?;
        let (arrived, _missing) = barrier.release();
        let release = Release {
            arrived: arrived.len(),
            failed: arrived.values().filter(|r| r.is_err()).count(),
            timed_out,
        };
        spans::record_release(&span, &release);
        span.in_scope(|| {
            tracing::info!(
                %criterion,
                arrived = release.arrived as i64,
                failed = release.failed as i64,
                timed_out = release.timed_out as i64,
                "criterion barrier released"
            )
        });
        let mut update = StateUpdate::default();
        for (judge, r) in arrived {
            match r {
                Ok(answer) => update.opinions.push(answer.opinion),
                Err(reason) => update.failures.push(JudgeFailure {
                    judge,
                    criterion_id: criterion.to_string(),
                    reason: reason.to_string(),
                }),
            }
        }
        Some(update)
    }
}
