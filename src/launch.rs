//! One way to set up and launch an audit, whoever asks: `auditor audit` and `auditor evidence`,
//! and each submission of `auditor batch` (in process, or in its isolated evidence child).
//!
//! [`AuditBuilder`] assembles the [`AuditInput`] (the defaults live here, once); [`run`] and
//! [`collect_evidence`] start a coordinator in a fresh actix system and stop it on Ctrl-C;
//! [`Launched`] starts one in the system already running (a batch grades many submissions in
//! one), asked for the evidence and then for the judgement.

use crate::actors::{CollectEvidence, Coordinator, JudgeCollected, RunAudit};
use crate::audit::{AuditInput, AuditOutcome, Collected, PdfSource, RestartPolicy, Timeouts};
use crate::exit::CliError;
use crate::judges::JudgeService;
use crate::llm::LlmSession;
use crate::repo::{RepoLimits, RepoRequest, RepoSource};
use crate::rubric::LoadedRubric;
use actix::Actor;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Assembles one audit's input. Defaults: the repository's HEAD, the report PDF found inside
/// the repository, no vision model, default timeouts and restart policy, the submission
/// labelled by its (redacted) source.
#[derive(Debug, Clone)]
pub struct AuditBuilder {
    input: AuditInput,
}

impl AuditBuilder {
    pub fn new(repo: RepoSource, rubric: Arc<LoadedRubric>) -> Self {
        AuditBuilder {
            input: AuditInput {
                submission: repo.shown().to_string(),
                repo: RepoRequest {
                    source: repo,
                    git_ref: None,
                    commit: None,
                    limits: RepoLimits::default(),
                    extract_pdf: None,
                },
                pdf: PdfSource::InRepo(None),
                rubric,
                timeouts: Timeouts::default(),
                restarts: RestartPolicy::default(),
                vision: None,
            },
        }
    }

    /// The branch, tag or commit to audit (`None`: HEAD).
    pub fn git_ref(mut self, git_ref: Option<String>) -> Self {
        self.input.repo.git_ref = git_ref;
        self
    }

    /// The full commit hash the ref was already resolved to: the clone is audited at it,
    /// without resolving the ref again.
    pub fn commit(mut self, commit: Option<String>) -> Self {
        self.input.repo.commit = commit;
        self
    }

    pub fn pdf(mut self, pdf: PdfSource) -> Self {
        self.input.pdf = pdf;
        self
    }

    /// The label carried in spans and logs (a batch's submission id).
    pub fn submission(mut self, label: impl Into<String>) -> Self {
        self.input.submission = label.into();
        self
    }

    /// The VisionInspector's LLM session (the judge panel's); `None`: diagrams are not
    /// inspected and the evidence says so.
    pub fn vision(mut self, vision: Option<LlmSession>) -> Self {
        self.input.vision = vision;
        self
    }

    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.input.timeouts = timeouts;
        self
    }

    /// The judge panel's worst case for one request (`None`: keep the current timeout).
    pub fn judge_timeout(mut self, timeout: Option<Duration>) -> Self {
        if let Some(t) = timeout {
            self.input.timeouts.judge_request = t;
        }
        self
    }

    pub fn detectives_timeout(mut self, timeout: Duration) -> Self {
        self.input.timeouts.detectives = timeout;
        self
    }

    pub fn restarts(mut self, restarts: RestartPolicy) -> Self {
        self.input.restarts = restarts;
        self
    }

    pub fn build(self) -> AuditInput {
        self.input
    }
}

/// Runs the whole graph once in a fresh actix system. On Ctrl-C the system is dropped (the
/// graph's futures with it, so their spans end) and the result is [`CliError::Interrupted`].
pub fn run(input: AuditInput, judges: Rc<dyn JudgeService>) -> Result<AuditOutcome, CliError> {
    on_a_coordinator(judges, RunAudit(input))
}

/// Runs the detectives only (the offline judges are never asked), as [`run`] does.
pub fn collect_evidence(input: AuditInput) -> Result<Collected, CliError> {
    on_a_coordinator(
        Rc::new(crate::judges::OfflineJudges),
        CollectEvidence(input),
    )
}

fn on_a_coordinator<M>(judges: Rc<dyn JudgeService>, msg: M) -> Result<M::Result, CliError>
where
    M: actix::Message + Send + 'static,
    M::Result: Send,
    Coordinator: actix::Handler<M>,
{
    let system = actix::System::new();
    system.block_on(async move {
        let coordinator = Coordinator::new(judges).start();
        tokio::select! {
            biased;
            _ = crate::interrupt::interrupted() => Err(CliError::Interrupted),
            r = coordinator.send(msg) => {
                r.map_err(|e| CliError::internal_while("the coordinator stopped", e))
            }
        }
    })
    // `system` is dropped here: on Ctrl-C the graph's futures are dropped and their spans end.
}

/// An audit launched in the actix system already running: its coordinator, started here. The
/// caller collects the evidence (or reads it back from a store), then has it judged.
pub struct Launched {
    coordinator: actix::Addr<Coordinator>,
}

impl Launched {
    /// Starts the audit's coordinator with its judges. Must be called inside an actix system.
    pub fn start(judges: Rc<dyn JudgeService>) -> Launched {
        Launched {
            coordinator: Coordinator::new(judges).start(),
        }
    }

    /// Runs the detectives only.
    pub async fn collect_evidence(
        &self,
        input: AuditInput,
    ) -> Result<Collected, actix::MailboxError> {
        self.coordinator.send(CollectEvidence(input)).await
    }

    /// Runs the judges and the Chief Justice on evidence collected before.
    pub async fn judge(
        &self,
        input: AuditInput,
        collected: Collected,
    ) -> Result<AuditOutcome, actix::MailboxError> {
        self.coordinator
            .send(JudgeCollected { input, collected })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rubric() -> Arc<LoadedRubric> {
        Arc::new(crate::rubric::Rubric::load(None).expect("the built-in rubric"))
    }

    #[test]
    fn defaults_label_the_submission_by_its_redacted_source() {
        let input = AuditBuilder::new(
            RepoSource::new("https://user:s3cret@example.com/a/b.git"),
            rubric(),
        )
        .build();
        assert!(!input.submission.contains("s3cret"), "{}", input.submission);
        assert_eq!(input.submission, input.repo.source.shown());
        assert_eq!(input.repo.git_ref, None);
        assert_eq!(input.pdf, PdfSource::InRepo(None));
        assert!(input.vision.is_none());
        assert_eq!(
            input.timeouts.judge_request,
            Timeouts::default().judge_request
        );
    }

    #[test]
    fn settings_are_applied_and_no_judge_timeout_keeps_the_default() {
        let input = AuditBuilder::new(RepoSource::new("/tmp/x"), rubric())
            .git_ref(Some("abc123".into()))
            .pdf(PdfSource::NoReport)
            .submission("s1")
            .judge_timeout(None)
            .detectives_timeout(Duration::from_secs(7))
            .build();
        assert_eq!(input.repo.git_ref.as_deref(), Some("abc123"));
        assert_eq!(input.pdf, PdfSource::NoReport);
        assert_eq!(input.submission, "s1");
        assert_eq!(input.timeouts.detectives, Duration::from_secs(7));
        assert_eq!(
            input.timeouts.judge_request,
            Timeouts::default().judge_request
        );
        let longer = AuditBuilder::new(RepoSource::new("/tmp/x"), rubric())
            .judge_timeout(Some(Duration::from_secs(999)))
            .build();
        assert_eq!(longer.timeouts.judge_request, Duration::from_secs(999));
    }
}
