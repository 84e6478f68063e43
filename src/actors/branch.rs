//! A detective branch of the graph: asking a detective actor within the barrier's time limit,
//! how the branch ended ([`Branch`]), where the paperwork detectives get the PDF from, and how
//! each ending enters the state through its failure route ([`super::routes`]).

use super::detectives::DetectiveError;
use super::routes;
use super::spans;
use crate::model::{AuditState, Detective, Evidence, StateUpdate};
use crate::repo::RepoFacts;
use crate::rubric::Dimension;
use actix::prelude::*;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The PDF's bytes and the name shown for it (a path or `repo:<path>`).
pub(super) type PdfBytes = (Arc<Vec<u8>>, String);

/// How a detective branch ended.
pub(super) enum Branch<T> {
    Done(T),
    /// The grader could not read the artifact: "evidence missing" (reason, fix for the
    /// grader's operator). The affected criteria are not assessed.
    Missing(String, String),
    /// The submission does not provide the artifact (or an unusable one): a real low score.
    Absent(String),
    /// The detective crashed or timed out: "node failure".
    Failed(String),
}

impl<T> Branch<T> {
    pub(super) fn is_done(&self) -> bool {
        matches!(self, Branch::Done(_))
    }

    /// The branch's result, its evidence merged into `state`; an ending without a result takes
    /// its failure route for `dims`.
    pub(super) fn merge(
        self,
        state: &mut AuditState,
        who: Detective,
        dims: &[Dimension],
        evidence: impl FnOnce(&mut T) -> BTreeMap<String, Vec<Evidence>>,
    ) -> Option<T> {
        match self {
            Branch::Done(mut out) => {
                state.merge(StateUpdate {
                    evidences: evidence(&mut out),
                    ..Default::default()
                });
                return Some(out);
            }
            Branch::Missing(reason, fix) => {
                state.merge(routes::evidence_missing(who, dims, &reason, &fix));
                if who == Detective::RepoInvestigator {
                    state.merge(routes::repo_error(dims, &reason));
                }
            }
            Branch::Absent(reason) => state.merge(routes::artifact_absent(who, dims, &reason)),
            Branch::Failed(reason) => state.merge(routes::node_failure(who, dims, &reason)),
        }
        None
    }
}

/// Asks a detective, within `timeout`; a timeout is counted in `timeouts`. The ending is
/// recorded on the current span (the `detective` span this future is instrumented with).
pub(super) async fn ask<M, A, T>(
    addr: &Addr<A>,
    msg: M,
    timeout: Duration,
    who: &str,
    timeouts: &Cell<usize>,
) -> Branch<T>
where
    A: Actor<Context = Context<A>> + Handler<M>,
    M: Message<Result = Result<T, DetectiveError>> + Send + 'static,
    T: Send + 'static,
{
    let (branch, outcome) = match addr.send(msg).timeout(timeout).await {
        Ok(Ok(v)) => (Branch::Done(v), "done"),
        Ok(Err(DetectiveError::Unreadable { reason, fix })) => {
            (Branch::Missing(reason, fix), "evidence_missing")
        }
        Ok(Err(DetectiveError::Absent(e))) => (Branch::Absent(e), "artifact_absent"),
        Ok(Err(DetectiveError::Crashed(e))) => (Branch::Failed(e), "node_failure"),
        Err(MailboxError::Timeout) => {
            timeouts.set(timeouts.get() + 1);
            (
                Branch::Failed(format!(
                    "{who} did not answer within {}s (detective barrier timeout)",
                    timeout.as_secs()
                )),
                "timed_out",
            )
        }
        Err(MailboxError::Closed) => (
            Branch::Failed(format!("{who} stopped unexpectedly")),
            "node_failure",
        ),
    };
    let error = match &branch {
        Branch::Done(_) | Branch::Absent(_) => None,
        Branch::Missing(e, _) | Branch::Failed(e) => Some(e.as_str()),
    };
    spans::record_detective(&tracing::Span::current(), outcome, error);
    branch
}

/// Why there is no PDF to read.
pub(super) enum NoPdf {
    /// The submission has no report: a real shortcoming, judged as such.
    Absent(String),
    /// The grader could not get it: reason, fix.
    Missing(String, String),
}

impl NoPdf {
    /// The paperwork detectives' branch when there is no PDF (both end the same way).
    pub(super) fn branch<T>(&self) -> Branch<T> {
        match self {
            NoPdf::Missing(reason, fix) => Branch::Missing(reason.clone(), fix.clone()),
            NoPdf::Absent(reason) => Branch::Absent(reason.clone()),
        }
    }

    /// The `outcome` recorded on the paperwork detectives' spans, and whether it is an error.
    pub(super) fn outcome(&self) -> (&'static str, bool) {
        match self {
            NoPdf::Missing(..) => ("evidence_missing", true),
            NoPdf::Absent(_) => ("artifact_absent", false),
        }
    }
}

/// The PDF given to the grader as a file (read on the blocking pool, size-bounded).
pub(super) async fn pdf_from_file(path: &Path) -> Result<PdfBytes, NoPdf> {
    let file = path.to_path_buf();
    let read =
        crate::interrupt::off_thread("pdf-read", move || crate::pdf::read_bounded(&file)).await;
    let name = path.display().to_string();
    let reason = match read {
        Ok(Ok(b)) => return Ok((Arc::new(b), name)),
        Ok(Err(e)) => e.to_string(),
        Err(e) => format!("cannot read PDF report {name}: {e}"),
    };
    Err(NoPdf::Missing(
        reason,
        "check that the PDF given to the grader exists and is readable, then re-run".into(),
    ))
}

/// The PDF the RepoInvestigator took from the repository (`wanted`: the path asked for, `None`
/// for "the most likely report"), or why there is none.
pub(super) fn pdf_from_repo<T>(
    repo: &Branch<T>,
    facts: impl Fn(&T) -> &RepoFacts,
    wanted: Option<&str>,
) -> Result<PdfBytes, NoPdf> {
    match repo {
        Branch::Done(out) => {
            let facts = facts(out);
            match &facts.report_pdf {
                Some(f) => Ok((Arc::new(f.bytes.clone()), format!("repo:{}", f.path))),
                None if facts.report_pdf_unusable.is_some() => Err(NoPdf::Absent(
                    facts.report_pdf_unusable.clone().unwrap_or_default(),
                )),
                None if wanted.is_none()
                    && !facts
                        .files
                        .iter()
                        .any(|f| f.to_lowercase().ends_with(".pdf")) =>
                {
                    Err(NoPdf::Absent(
                        "the repository holds no PDF file at the audited commit, so there is no report to read".into(),
                    ))
                }
                None => Err(NoPdf::Missing(
                    format!(
                        "the report PDF could not be taken from the repository: {}",
                        facts
                            .notes
                            .iter()
                            .filter(|n| n.contains("PDF") || n.contains("pdf"))
                            .cloned()
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                    "check the report's path inside the repository (manifest pdf = repo:<path>), or give the PDF with --pdf, then re-run".into(),
                )),
            }
        }
        Branch::Missing(reason, fix) => Err(NoPdf::Missing(
            format!(
                "no PDF report was given (--pdf) and the repository could not be read: {reason}"
            ),
            fix.clone(),
        )),
        _ => Err(NoPdf::Missing(
            "no PDF report was given (--pdf) and the repository could not be read".to_string(),
            "re-run the audit with -v to see the RepoInvestigator's error".into(),
        )),
    }
}
