//! The spans of the graph and what is recorded on them: one `audit` span per run, a
//! `barrier` span per fan-in point (the detective barrier, one per criterion), a `detective`
//! span per detective and a `judge` span per judge request. Built here so the coordinator reads
//! as topology; the names and fields are what trace viewers and the telemetry tests see.

use crate::model::{AuditReport, Detective, Judge};
use tracing::field::Empty;

/// The span of one audit (`resumed`: judging evidence collected by an earlier run).
pub(super) fn audit(submission: &str, repo: &str, judge_mode: Option<&str>) -> tracing::Span {
    match judge_mode {
        Some(mode) => tracing::info_span!(
            "audit",
            submission = %submission,
            repo = %repo,
            judge_mode = %mode,
            overall_score = Empty,
            criteria_flagged = Empty,
        ),
        None => tracing::info_span!(
            "audit",
            submission = %submission,
            repo = %repo,
            resumed = true
        ),
    }
}

/// Records the report's overall score and flagged criteria on the `audit` span.
pub(super) fn record_audit(span: &tracing::Span, report: &AuditReport) {
    if let Some(score) = report.overall_score {
        span.record("overall_score", score);
    }
    let flagged = report.criteria.iter().filter(|c| !c.is_clean()).count();
    span.record("criteria_flagged", flagged as i64);
}

/// The span of one detective's handling of its message (a child of the detective barrier).
pub(super) fn detective(
    barrier: &tracing::Span,
    who: Detective,
    submission: &str,
) -> tracing::Span {
    tracing::info_span!(
        parent: barrier,
        "detective",
        "otel.name" = %format!("detective {who}"),
        detective = %who,
        submission = %submission,
        outcome = Empty,
        "error.type" = Empty,
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
    )
}

/// Records how a detective ended on its span; `error`: the reason, when it is a failure.
pub(super) fn record_detective(span: &tracing::Span, outcome: &str, error: Option<&str>) {
    span.record("outcome", outcome);
    if let Some(e) = error {
        record_error(span, outcome, e);
    }
}

/// Records the ending of a detective that was never asked (there was no PDF for it):
/// `error` marks the outcome as an error type, without a status (nothing ran).
pub(super) fn record_not_asked(span: &tracing::Span, outcome: &str, error: bool) {
    span.record("outcome", outcome);
    if error {
        span.record("error.type", outcome);
    }
}

/// The span of a fan-in point, open from the fan-out to the release.
pub(super) fn barrier(
    name: &str,
    criterion: Option<&str>,
    expected: usize,
    submission: &str,
) -> tracing::Span {
    let span = tracing::info_span!(
        "barrier",
        "otel.name" = %match criterion {
            Some(c) => format!("barrier {name} {c}"),
            None => format!("barrier {name}"),
        },
        barrier = %name,
        criterion = Empty,
        submission = %submission,
        expected = expected as i64,
        arrived = Empty,
        failed = Empty,
        timed_out = Empty,
    );
    if let Some(c) = criterion {
        span.record("criterion", c);
    }
    span
}

/// What a barrier saw when it released.
pub(super) struct Release {
    pub arrived: usize,
    pub failed: usize,
    pub timed_out: usize,
}

/// Records a barrier's release on its span.
pub(super) fn record_release(span: &tracing::Span, r: &Release) {
    span.record("arrived", r.arrived as i64);
    span.record("failed", r.failed as i64);
    span.record("timed_out", r.timed_out as i64);
}

/// The span of one judge request (a child of its criterion's barrier), which the judge actor
/// also runs the service in.
pub(super) fn judge(
    barrier: &tracing::Span,
    persona: Judge,
    criterion: &str,
    submission: &str,
) -> tracing::Span {
    tracing::info_span!(
        parent: barrier,
        "judge",
        "otel.name" = %format!("judge {persona} {criterion}"),
        %persona,
        criterion = %criterion,
        submission = %submission,
        score = Empty,
        timeouts = Empty,
        "error.type" = Empty,
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
    )
}

/// Marks a span as failed: error type, status, and the (redacted) reason.
pub(super) fn record_error(span: &tracing::Span, error_type: &str, reason: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
    span.record(
        "otel.status_description",
        crate::telemetry::redact(reason).as_ref(),
    );
}
