//! Supervision of judges by the coordinator: panics are caught and the judge restarted, hung
//! requests time out and are re-sent, failures past the restart intensity leave the criterion
//! flagged with no invented score. Runs the real actor graph with injected judge services.

use actix::Actor;
use auditor::actors::{Coordinator, RunAudit};
use auditor::audit::{AuditInput, PdfSource, RestartPolicy, Timeouts};
use auditor::judges::{JudgeAnswer, JudgeFault, JudgeFuture, JudgeRequest, JudgeService};
use auditor::model::{Judge, JudgeMode, JudicialOpinion, OpinionSource, Score, TokenUsage};
use auditor::repo::{RepoLimits, RepoRequest};
use auditor::rubric::Rubric;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// What the scripted judge does on the n-th call for a (persona, criterion).
#[derive(Clone, Copy, Debug)]
enum Act {
    Answer(i64),
    Panic,
    Hang,
    Crash,
    Invalid,
}

/// What to do on the n-th call for (persona, criterion).
type ScriptFn = dyn Fn(Judge, &str, u32) -> Act;

struct Scripted {
    script: Box<ScriptFn>,
    calls: RefCell<BTreeMap<(Judge, String), u32>>,
}

impl Scripted {
    fn new(script: impl Fn(Judge, &str, u32) -> Act + 'static) -> Rc<Self> {
        Rc::new(Scripted {
            script: Box::new(script),
            calls: RefCell::new(BTreeMap::new()),
        })
    }
}

struct Shared(Rc<Scripted>);

impl JudgeService for Shared {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        let n = {
            let mut calls = self.0.calls.borrow_mut();
            let c = calls
                .entry((req.persona, req.criterion_id.clone()))
                .or_insert(0);
            *c += 1;
            *c
        };
        let act = (self.0.script)(req.persona, &req.criterion_id, n);
        Box::pin(async move {
            match act {
                Act::Answer(score) => Ok(JudgeAnswer {
                    opinion: JudicialOpinion {
                        judge: req.persona,
                        criterion_id: req.criterion_id.clone(),
                        score: Score::new(score).unwrap(),
                        argument: format!(
                            "scripted {} opinion on {}",
                            req.persona, req.criterion_id
                        ),
                        cited_evidence: vec![],
                        source: OpinionSource::Llm {
                            model: "scripted".into(),
                        },
                    },
                    usage: TokenUsage {
                        input_tokens: 10,
                        output_tokens: 5,
                        cached_input_tokens: 0,
                    },
                    attempts: 1,
                }),
                Act::Panic => panic!("scripted panic"),
                Act::Hang => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    unreachable!()
                }
                Act::Crash => Err(JudgeFault::Crashed("connection refused".into())),
                Act::Invalid => Err(JudgeFault::Invalid(
                    "score 9 is out of range, 3 times".into(),
                )),
            }
        })
    }
    fn model(&self, _persona: Judge) -> Option<String> {
        Some("scripted".into())
    }
    fn mode(&self) -> JudgeMode {
        JudgeMode::Llm
    }
}

fn input(repo: &std::path::Path, judge_timeout: Duration) -> AuditInput {
    let rubric = Rubric::load(Some(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/rubrics/official-v3.0.0.json"
    ))))
    .unwrap();
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
            judge_request: judge_timeout,
        },
        restarts: RestartPolicy {
            max_restarts: 3,
            window: Duration::from_secs(60),
        },
        submission: "test".into(),
        vision: None,
    }
}

fn repo_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    std::fs::write(dir.path().join("main.py"), "print('hi')\n").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(std::path::Path::new("main.py")).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
    dir
}

async fn run(service: Rc<Scripted>, judge_timeout: Duration) -> auditor::audit::AuditOutcome {
    let repo = repo_dir();
    let coordinator = Coordinator::new(Rc::new(Shared(service))).start();
    coordinator
        .send(RunAudit(input(repo.path(), judge_timeout)))
        .await
        .unwrap()
}

#[actix::test]
async fn a_panicking_judge_is_restarted_and_its_request_resent() {
    let svc = Scripted::new(|persona, criterion, n| {
        if persona == Judge::Prosecutor && criterion == "graph_orchestration" && n == 1 {
            Act::Panic
        } else {
            Act::Answer(3)
        }
    });
    let out = run(svc.clone(), Duration::from_secs(30)).await;
    assert_eq!(out.state.opinions().len(), 30, "every opinion arrives");
    assert!(
        out.state.failures().is_empty(),
        "{:?}",
        out.state.failures()
    );
    assert!(out.report.metadata.judge_restarts >= 1);
    let asked = svc.calls.borrow()[&(Judge::Prosecutor, "graph_orchestration".to_string())];
    assert_eq!(asked, 2, "the request in flight was re-sent once");
    // each (persona, criterion) pair answered exactly once in the final state
    let pairs: BTreeSet<(Judge, String)> = out
        .state
        .opinions()
        .iter()
        .map(|o| (o.judge, o.criterion_id.clone()))
        .collect();
    assert_eq!(pairs.len(), 30);
}

#[actix::test]
async fn a_hung_judge_times_out_and_is_restarted() {
    let svc = Scripted::new(|persona, criterion, n| {
        if persona == Judge::Defense && criterion == "judicial_nuance" && n == 1 {
            Act::Hang
        } else {
            Act::Answer(4)
        }
    });
    let out = run(svc.clone(), Duration::from_millis(300)).await;
    assert_eq!(out.state.opinions().len(), 30);
    assert!(out.report.metadata.judge_restarts >= 1);
    assert!(svc.calls.borrow()[&(Judge::Defense, "judicial_nuance".to_string())] >= 2);
}

#[actix::test]
async fn a_judge_that_always_fails_leaves_flagged_criteria_and_no_invented_score() {
    let svc = Scripted::new(|persona, _criterion, _n| {
        if persona == Judge::TechLead {
            Act::Crash
        } else {
            Act::Answer(2)
        }
    });
    let out = run(svc.clone(), Duration::from_secs(30)).await;
    assert_eq!(
        out.state.opinions().len(),
        20,
        "only the two healthy personas answered"
    );
    assert!(
        out.state
            .opinions()
            .iter()
            .all(|o| o.judge != Judge::TechLead)
    );
    assert_eq!(out.state.failures().len(), 10);
    assert!(
        out.state
            .failures()
            .iter()
            .all(|f| f.judge == Judge::TechLead)
    );
    assert!(
        out.state
            .failures()
            .iter()
            .any(|f| f.reason.contains("restart intensity"))
    );
    // bounded: at most the restart budget plus one first try per criterion
    let total: u32 = svc
        .calls
        .borrow()
        .iter()
        .filter(|((j, _), _)| *j == Judge::TechLead)
        .map(|(_, n)| *n)
        .sum();
    assert!(total <= 10 + 3, "TechLead was asked {total} times");
    assert!(!out.report.is_complete());
    for c in &out.report.criteria {
        assert!(c.judge_opinions.iter().all(|o| o.judge != Judge::TechLead));
        assert!(
            !c.flags.is_empty() || c.final_score.is_none(),
            "{} not flagged",
            c.dimension_id
        );
    }
}

#[actix::test]
async fn an_invalid_answer_is_recorded_as_failed_without_restart() {
    let svc = Scripted::new(|persona, criterion, _n| {
        if persona == Judge::Prosecutor && criterion == "safe_tool_engineering" {
            Act::Invalid
        } else {
            Act::Answer(3)
        }
    });
    let out = run(svc.clone(), Duration::from_secs(30)).await;
    assert_eq!(out.state.opinions().len(), 29);
    assert_eq!(out.state.failures().len(), 1);
    assert_eq!(out.report.metadata.judge_restarts, 0);
    assert_eq!(
        svc.calls.borrow()[&(Judge::Prosecutor, "safe_tool_engineering".to_string())],
        1
    );
}
