//! Span context crosses the actor boundaries: a judge service (as the LLM judges will be) that
//! opens GenAI `chat` spans inside its future gets them parented to the coordinator's `judge`
//! span, and a judge that panics shows up as a `judge.restart` span. Runs the real actor graph
//! in-process with OTLP export to a local receiver (one test: the subscriber is per process).

mod telemetry_support;

use actix::Actor;
use auditor::actors::{Coordinator, RunAudit};
use auditor::audit::{AuditInput, PdfSource, RestartPolicy, Timeouts};
use auditor::judges::{JudgeAnswer, JudgeFuture, JudgeRequest, JudgeService};
use auditor::model::{Judge, JudgeMode, JudicialOpinion, OpinionSource, Score, TokenUsage};
use auditor::repo::{RepoLimits, RepoRequest};
use auditor::rubric::Rubric;
use auditor::telemetry::genai::{ChatRequestInfo, ChatSpan};
use auditor::telemetry::{self, LogFormat, LogOptions, TelemetryConfig};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use telemetry_support::*;

const PANICKY: (Judge, &str) = (Judge::Prosecutor, "graph_orchestration");

/// Answers 4 everywhere through a "chat" call; panics on the first request of `PANICKY`.
#[derive(Default)]
struct ChattyJudges {
    calls: RefCell<BTreeMap<(Judge, String), u32>>,
}

impl JudgeService for ChattyJudges {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        let n = {
            let mut calls = self.calls.borrow_mut();
            let c = calls
                .entry((req.persona, req.criterion_id.clone()))
                .or_insert(0);
            *c += 1;
            *c
        };
        Box::pin(async move {
            let chat = ChatSpan::start(&ChatRequestInfo {
                model: "scripted-model",
                base_url: Some("http://localhost:11434/v1"),
                persona: Some(req.persona.as_str()),
                criterion: Some(&req.criterion_id),
                attempt: n,
                ..Default::default()
            });
            if (req.persona, req.criterion_id.as_str()) == PANICKY && n == 1 {
                panic!("scripted panic");
            }
            chat.record_response("scripted-model", Some("r-1"), &["stop"]);
            chat.record_usage(100, 10);
            Ok(JudgeAnswer {
                opinion: JudicialOpinion {
                    judge: req.persona,
                    criterion_id: req.criterion_id.clone(),
                    score: Score::new(4).expect("valid score"),
                    argument: "scripted".into(),
                    cited_evidence: vec![],
                    source: OpinionSource::Llm {
                        model: "scripted-model".into(),
                    },
                },
                usage: TokenUsage {
                    input_tokens: 100,
                    output_tokens: 10,
                    cached_input_tokens: 0,
                },
                attempts: 1,
            })
        })
    }
    fn model(&self, _persona: Judge) -> Option<String> {
        Some("scripted-model".into())
    }
    fn mode(&self) -> JudgeMode {
        JudgeMode::Llm
    }
}

fn input(repo: &std::path::Path) -> AuditInput {
    let rubric = Rubric::load(Some(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/rubrics/official-v3.0.0.json"
    ))))
    .expect("rubric fixture");
    AuditInput {
        repo: RepoRequest {
            source: repo.display().to_string().into(),
            git_ref: None,
            commit: None,
            limits: RepoLimits::default(),
            extract_pdf: None,
        },
        pdf: PdfSource::NoReport,
        rubric: Arc::new(rubric),
        timeouts: Timeouts {
            detectives: Duration::from_secs(120),
            judge_request: Duration::from_secs(30),
        },
        restarts: RestartPolicy {
            max_restarts: 3,
            window: Duration::from_secs(60),
        },
        submission: "sub-7".into(),
        vision: None,
    }
}

#[actix::test]
async fn llm_spans_nest_under_judge_spans_and_restarts_are_spans() {
    let server = otlp_receiver().await;
    let uri = server.uri();
    let cfg = TelemetryConfig::from_lookup(
        LogOptions {
            verbose: 0,
            quiet: true,
            format: LogFormat::Text,
        },
        |k| (k == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| uri.clone()),
    )
    .expect("config");
    let guard = telemetry::init(&cfg).expect("init");

    let repo = tempfile::tempdir().expect("tempdir");
    git_repo(repo.path());
    let coordinator = Coordinator::new(Rc::new(ChattyJudges::default())).start();
    let out = coordinator
        .send(RunAudit(input(repo.path())))
        .await
        .expect("audit");
    assert!(
        out.state.failures().is_empty(),
        "{:?}",
        out.state.failures()
    );
    drop(coordinator);
    // Flushing is blocking HTTP: off the actix thread.
    tokio::task::spawn_blocking(move || drop(guard))
        .await
        .expect("join");

    let (spans, _) = received_spans(&server).await;
    let audit = spans
        .iter()
        .find(|s| s.name == "audit")
        .expect("audit span");
    let chats: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "chat scripted-model")
        .collect();
    // 10 criteria x 3 personas, plus the request that panicked.
    assert_eq!(chats.len(), 31, "chat spans");
    for c in &chats {
        assert_eq!(
            c.trace_id, audit.trace_id,
            "chat span outside the audit trace"
        );
        assert_eq!(c.str("gen_ai.provider.name"), Some("ollama"));
        let parent = spans
            .iter()
            .find(|s| s.span_id == c.parent_span_id)
            .expect("chat span has an exported parent");
        assert!(
            parent.name.starts_with("judge "),
            "parent is {}",
            parent.name
        );
        assert_eq!(parent.str("persona"), c.str("persona"));
        assert_eq!(parent.str("criterion"), c.str("criterion"));
        assert_eq!(parent.str("submission"), Some("sub-7"));
    }
    let done = chats
        .iter()
        .filter(|c| c.int("gen_ai.usage.input_tokens") == Some(100))
        .count();
    assert_eq!(done, 30);

    let restart = spans
        .iter()
        .find(|s| s.name == "judge.restart")
        .expect("a judge.restart span");
    assert_eq!(restart.str("persona"), Some("Prosecutor"));
    assert_eq!(restart.str("criterion"), Some("graph_orchestration"));
    assert_eq!(
        restart.attrs.get("within_intensity"),
        Some(&Attr::Bool(true))
    );
    assert!(
        restart
            .str("fault")
            .is_some_and(|f| f.contains("scripted panic")),
        "{:?}",
        restart.attrs
    );
}
