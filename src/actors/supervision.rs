//! Judge supervision: the panel of judge actors of one audit, each under an actix
//! `Supervisor`, and the OTP-style handling of one request: a judge that crashes or times out
//! is restarted and the request re-sent, within the persona's restart intensity; past it, or
//! after an invalid answer, the opinion is recorded as failed (the criterion is flagged).

use super::barrier::RestartIntensity;
use super::judges::{Adjudicate, JudgeActor, Restart};
use super::spans;
use crate::audit::RestartPolicy;
use crate::judges::{JudgeAnswer, JudgeFault, JudgeRequest, JudgeService, Reason};
use crate::model::Judge;
use actix::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// How many times a request is re-sent to a judge that stopped with it in flight before the
/// opinion is given up.
const MAX_RESENDS_ON_CLOSED: u32 = 16;

/// The judges of one audit, supervised, with their restart budgets.
pub(super) struct JudgePanel {
    addrs: BTreeMap<Judge, Addr<JudgeActor>>,
    budgets: Rc<RefCell<BTreeMap<Judge, RestartIntensity>>>,
    counters: Rc<Counters>,
    timeout: Duration,
}

/// Restarts and re-sends across the panel (reported in the run metadata).
#[derive(Default)]
struct Counters {
    restarts: Cell<u32>,
    resends: Cell<u32>,
}

/// How one supervised request ended: the answer or why there is none, and whether it timed
/// out at least once.
pub(super) struct Supervised {
    pub result: Result<JudgeAnswer, NoOpinion>,
    pub timed_out: bool,
}

/// Why a supervised request ended without an opinion (the recorded failure's reason).
#[derive(Debug, thiserror::Error)]
pub(super) enum NoOpinion {
    /// The judge answered, never validly: final.
    #[error(transparent)]
    Invalid(Reason),
    /// The judge kept stopping with the request in flight.
    #[error("{persona} kept stopping while working on {criterion}: unresolved, needs human review")]
    KeptStopping { persona: Judge, criterion: String },
    /// The judge failed once more past its restart intensity.
    #[error("{0}; restart intensity exceeded: unresolved, needs human review")]
    PastIntensity(#[source] Failure),
}

/// One attempt that failed in a way a restart may mend.
#[derive(Debug, thiserror::Error)]
pub(super) enum Failure {
    /// The judge crashed or panicked.
    #[error(transparent)]
    Fault(Reason),
    /// No answer within the time allowed.
    #[error("{persona} did not answer within {}s", .timeout.as_secs())]
    TimedOut { persona: Judge, timeout: Duration },
}

impl JudgePanel {
    /// Starts one supervised judge actor per persona; `timeout`: per request attempt.
    pub(super) fn start(
        service: &Rc<dyn JudgeService>,
        restarts: RestartPolicy,
        timeout: Duration,
    ) -> Self {
        let addrs = Judge::ALL
            .into_iter()
            .map(|persona| {
                let svc = service.clone();
                let addr = actix::Supervisor::start(move |_| JudgeActor::new(persona, svc));
                (persona, addr)
            })
            .collect();
        let budgets = Judge::ALL
            .into_iter()
            .map(|j| {
                (
                    j,
                    RestartIntensity::new(restarts.max_restarts, restarts.window),
                )
            })
            .collect();
        JudgePanel {
            addrs,
            budgets: Rc::new(RefCell::new(budgets)),
            counters: Rc::new(Counters::default()),
            timeout,
        }
    }

    /// Judge restarts so far.
    pub(super) fn restarts(&self) -> u32 {
        self.counters.restarts.get()
    }

    /// Requests re-sent so far.
    pub(super) fn resends(&self) -> u32 {
        self.counters.resends.get()
    }

    /// Asks the request's persona, supervised (see [`supervised_request`]). The future owns
    /// what it needs, so many can be in flight at once.
    pub(super) fn ask(
        &self,
        req: JudgeRequest,
        span: tracing::Span,
    ) -> impl Future<Output = Supervised> + 'static {
        let addr = self.addrs[&req.persona].clone();
        supervised_request(
            addr,
            req,
            self.budgets.clone(),
            self.counters.clone(),
            self.timeout,
            span,
        )
    }
}

/// Sends one request to a supervised judge: restarts it on crash or timeout and re-sends,
/// within the persona's restart intensity. Runs in `span` (the `judge` span), which the judge
/// actor also runs the service in.
async fn supervised_request(
    addr: Addr<JudgeActor>,
    req: JudgeRequest,
    budgets: Rc<RefCell<BTreeMap<Judge, RestartIntensity>>>,
    counters: Rc<Counters>,
    timeout: Duration,
    span: tracing::Span,
) -> Supervised {
    let persona = req.persona;
    let criterion = req.criterion_id.clone();
    let judge_span = span.clone();
    let mut timeouts = 0u32;
    let result = async {
        let mut closed = 0u32;
        loop {
            let (fault, restart) = match addr
                .send(Adjudicate(req.clone(), judge_span.clone()))
                .timeout(timeout)
                .await
            {
                Ok(Ok(answer)) => return Ok(answer),
                Ok(Err(JudgeFault::Invalid(reason))) => {
                    tracing::warn!(%reason, "judge gave no valid opinion");
                    return Err(NoOpinion::Invalid(reason));
                }
                Ok(Err(JudgeFault::Crashed(reason))) => (Failure::Fault(reason), false),
                Ok(Err(JudgeFault::Panicked(reason))) => {
                    counters.restarts.set(counters.restarts.get() + 1);
                    (Failure::Fault(reason), true)
                }
                Err(MailboxError::Timeout) => {
                    addr.do_send(Restart);
                    timeouts += 1;
                    counters.restarts.set(counters.restarts.get() + 1);
                    (Failure::TimedOut { persona, timeout }, true)
                }
                Err(MailboxError::Closed) => {
                    // The actor was restarted while this request was in flight: re-send.
                    closed += 1;
                    counters.resends.set(counters.resends.get() + 1);
                    tracing::info!(
                        resends = closed,
                        "judge stopped with the request in flight; re-sending"
                    );
                    if closed > MAX_RESENDS_ON_CLOSED {
                        return Err(NoOpinion::KeptStopping {
                            persona,
                            criterion: criterion.clone(),
                        });
                    }
                    continue;
                }
            };
            let allowed = budgets
                .borrow_mut()
                .get_mut(&persona)
                .map(|b| b.allow(Instant::now()))
                .unwrap_or(false);
            if restart {
                // A zero-length marker span per restart, so trace viewers show each one.
                let _restart = tracing::info_span!(
                    "judge.restart",
                    %persona,
                    criterion = %criterion,
                    fault = %crate::telemetry::redact(&fault.to_string()),
                    within_intensity = allowed,
                    restarts_total = i64::from(counters.restarts.get()),
                )
                .entered();
            }
            if !allowed {
                tracing::error!(%fault, "restart intensity exceeded");
                return Err(NoOpinion::PastIntensity(fault));
            }
            tracing::warn!(%fault, "judge failed; re-sending the request");
            counters.resends.set(counters.resends.get() + 1);
        }
    }
    .instrument(span.clone())
    .await;
    span.in_scope(|| match &result {
        Ok(answer) => {
            span.record("score", i64::from(answer.opinion.score.get()));
            crate::telemetry::genai::record_opinion(&answer.opinion);
        }
        Err(reason) => spans::record_error(&span, "no_opinion", &reason.to_string()),
    });
    if timeouts > 0 {
        span.record("timeouts", i64::from(timeouts));
    }
    Supervised {
        result,
        timed_out: timeouts > 0,
    }
}
