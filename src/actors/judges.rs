//! Judge actors: one per persona, run under an actix `Supervisor` by the coordinator.
//!
//! Each request is answered by the injected [`JudgeService`] (offline rules or an LLM). A panic
//! inside the service is caught here (actix does not supervise panics): the reply says the
//! judge crashed and the actor stops, so its `Supervisor` restarts it. Requests still in flight
//! on the stopped actor are answered with `MailboxError::Closed`; the coordinator re-sends them.

use crate::judges::{JudgeAnswer, JudgeFault, JudgeRequest, JudgeService};
use crate::model::Judge;
use actix::prelude::*;
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use tracing::Instrument;

pub struct JudgeActor {
    persona: Judge,
    service: Rc<dyn JudgeService>,
    /// Times this actor was restarted by its supervisor.
    restarts: u32,
}

impl JudgeActor {
    pub fn new(persona: Judge, service: Rc<dyn JudgeService>) -> Self {
        JudgeActor {
            persona,
            service,
            restarts: 0,
        }
    }
}

impl Actor for JudgeActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // All criterion requests for this persona are sent at once.
        ctx.set_mailbox_capacity(4096);
    }
}

impl Supervised for JudgeActor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // The actor holds no per-request state; only the count survives a restart.
        self.restarts += 1;
        tracing::warn!(persona = %self.persona, restarts = self.restarts, "judge restarted");
    }
}

/// Rule on one criterion. The span is the coordinator's `judge` span: the service runs inside
/// it, so its own spans (e.g. LLM `chat` spans) are children of it (actix messages carry no
/// span context).
#[derive(Message)]
#[rtype(result = "Result<JudgeAnswer, JudgeFault>")]
pub struct Adjudicate(pub JudgeRequest, pub tracing::Span);

/// Ask the judge to stop so its supervisor restarts it (used after a timeout: the request in
/// flight is abandoned and will be re-sent).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Restart;

impl Handler<Adjudicate> for JudgeActor {
    type Result = ResponseActFuture<Self, Result<JudgeAnswer, JudgeFault>>;

    fn handle(&mut self, msg: Adjudicate, _ctx: &mut Self::Context) -> Self::Result {
        let persona = self.persona;
        let criterion = msg.0.criterion_id.clone();
        if msg.0.persona != persona {
            let fault = JudgeFault::Invalid(
                format!("request for {} sent to the {persona} actor", msg.0.persona).into(),
            );
            return Box::pin(actix::fut::ready(Err(fault)));
        }
        // Build the future inside catch_unwind too: a service may panic before returning one.
        let service = self.service.clone();
        let span = msg.1;
        let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| {
            span.in_scope(|| service.judge(msg.0))
        })) {
            Ok(fut) => fut,
            Err(payload) => {
                let fault = JudgeFault::Panicked(
                    format!(
                        "{persona} panicked on {criterion}: {}",
                        describe_panic(&payload)
                    )
                    .into(),
                );
                let stop_then_reply = actix::fut::ready(Err(fault));
                return Box::pin(ActorFutureExt::map(
                    stop_then_reply,
                    |r, _act, ctx: &mut Context<Self>| {
                        ctx.stop();
                        r
                    },
                ));
            }
        };
        Box::pin(
            AssertUnwindSafe(fut.instrument(span))
                .catch_unwind()
                .into_actor(self)
                .map(move |outcome, _act, ctx| match outcome {
                    Ok(answer) => answer,
                    Err(payload) => {
                        ctx.stop();
                        Err(JudgeFault::Panicked(
                            format!(
                                "{persona} panicked on {criterion}: {}",
                                describe_panic(&payload)
                            )
                            .into(),
                        ))
                    }
                }),
        )
    }
}

impl Handler<Restart> for JudgeActor {
    type Result = ();

    fn handle(&mut self, _msg: Restart, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

fn describe_panic(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
