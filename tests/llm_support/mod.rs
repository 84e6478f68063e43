//! A local OpenAI-compatible chat completions server (wiremock) for the LLM tests and the
//! benchmark: it answers every judge request correctly for the persona and criterion that
//! request asked about (read from the request itself), or plays a scripted sequence of faults.
#![allow(dead_code)]

use auditor::judges::llm::{LlmJudges, PersonaModels};
use auditor::judges::{EvidencePack, Excerpt, JudgeRequest};
use auditor::llm::LlmConfig;
use auditor::model::{Confidence, Detective, Evidence, Judge};
use auditor::rubric::Rubric;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const MODEL: &str = "test-model";

/// A chat completion whose message content is `content`.
pub fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000u32,
        "model": MODEL,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}

/// A chat completion answering with a tool call carrying `arguments`.
pub fn tool_call_completion(name: &str, arguments: &str) -> Value {
    json!({
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 1_700_000_000u32,
        "model": MODEL,
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments}
                }]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}

/// The system message text of a request body.
pub fn system_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "system"))
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// The last message's text.
pub fn last_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// The texts of every message of a request body, in order.
pub fn message_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| match &m["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(""),
                    _ => String::new(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The persona the request names: the latest message that begins "You are the X" (the
/// persona's statute, after the shared prefix and the evidence).
pub fn persona_of(body: &Value) -> Option<Judge> {
    message_texts(body).iter().rev().find_map(|t| {
        let rest = t.strip_prefix("You are the ")?;
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
        match word.as_str() {
            "Prosecutor" => Some(Judge::Prosecutor),
            "Defense" => Some(Judge::Defense),
            "TechLead" => Some(Judge::TechLead),
            _ => None,
        }
    })
}

/// The criterion id the request asks about: "... criterion `id`" in its latest message saying so.
pub fn criterion_of(body: &Value) -> Option<String> {
    message_texts(body).iter().rev().find_map(|t| {
        let start = t.find("criterion `")? + "criterion `".len();
        let len = t[start..].find('`')?;
        Some(t[start..start + len].to_string())
    })
}

/// The criterion's own evidence ids listed in the question ("Its own evidence ids: a, b.").
pub fn own_ids_of(body: &Value) -> Vec<String> {
    message_texts(body)
        .iter()
        .rev()
        .find_map(|t| {
            let start = t.find("Its own evidence ids: ")? + "Its own evidence ids: ".len();
            let end = t[start..].find(". ")?;
            Some(
                t[start..start + end]
                    .split(", ")
                    .map(str::trim)
                    .filter(|i| !i.is_empty() && !i.contains(' '))
                    .map(str::to_string)
                    .collect(),
            )
        })
        .unwrap_or_default()
}

/// The schema of the request (response_format or tool parameters).
pub fn schema_of(body: &Value) -> Value {
    if !body["response_format"].is_null() {
        body["response_format"]["json_schema"]["schema"].clone()
    } else {
        body["tools"][0]["function"]["parameters"].clone()
    }
}

/// A valid opinion JSON for what `body` asks (citing the criterion's first own id).
pub fn valid_opinion(body: &Value) -> String {
    let persona = persona_of(body).unwrap_or(Judge::TechLead);
    let criterion = criterion_of(body).unwrap_or_default();
    let cite: Vec<String> = own_ids_of(body).into_iter().take(1).collect();
    let score = match persona {
        Judge::Prosecutor => 2,
        Judge::Defense => 4,
        Judge::TechLead => 3,
    };
    json!({
        "judge": persona.as_str(),
        "criterion_id": criterion,
        "score": score,
        "argument": format!(
            "As the {} I find that the evidence for {criterion} shows the detectives fan out \
             from START but the judges run in sequence, which only partly meets the pattern.",
            persona.as_str()
        ),
        "cited_evidence": cite,
    })
    .to_string()
}

/// One scripted step of the server.
#[derive(Clone)]
pub enum Step {
    /// Answer correctly for the request (content or tool call, as the request asks).
    Answer,
    /// Answer with this JSON built from the request (e.g. a wrong score).
    AnswerWith(fn(&Value) -> String),
    /// A fixed response.
    Fixed(ResponseTemplate),
    /// A correct answer after a delay.
    AnswerAfter(Duration),
}

/// Plays `steps` in order (the last one repeats), recording each request's arrival time.
pub struct Script {
    steps: Vec<Step>,
    next: AtomicUsize,
    pub arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Script {
    pub fn new(steps: Vec<Step>) -> Self {
        Script {
            steps,
            next: AtomicUsize::new(0),
            arrivals: Arc::default(),
        }
    }
}

fn answer_response(body: &Value, content: String) -> ResponseTemplate {
    let value = if body["tools"].is_array() {
        let name = body["tools"][0]["function"]["name"]
            .as_str()
            .unwrap_or("answer");
        tool_call_completion(name, &content)
    } else {
        completion(&content)
    };
    ResponseTemplate::new(200).set_body_json(value)
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.arrivals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Instant::now());
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        let step = self.steps[i.min(self.steps.len() - 1)].clone();
        let body: Value = request.body_json().unwrap_or(Value::Null);
        match step {
            Step::Answer => answer_response(&body, valid_opinion(&body)),
            Step::AnswerWith(f) => answer_response(&body, f(&body)),
            Step::Fixed(t) => t,
            Step::AnswerAfter(d) => answer_response(&body, valid_opinion(&body)).set_delay(d),
        }
    }
}

/// Starts a server playing `script` on POST /v1/chat/completions.
pub async fn server(script: Script) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(script)
        .mount(&server)
        .await;
    server
}

/// A config pointing at `server` with fast backoff.
pub fn config(server: &MockServer, extra: &[(&str, &str)]) -> LlmConfig {
    let mut env: HashMap<String, String> = HashMap::new();
    env.insert("OPENAI_BASE_URL".into(), format!("{}/v1", server.uri()));
    env.insert("OPENAI_API_KEY".into(), "sk-test".into());
    env.insert("AUDITOR_MODEL".into(), MODEL.into());
    for (k, v) in extra {
        env.insert(k.to_string(), v.to_string());
    }
    let mut cfg = LlmConfig::from_env(|k| env.get(k).cloned()).expect("valid test config");
    cfg.backoff_base = Duration::from_millis(20);
    cfg.backoff_cap = Duration::from_millis(200);
    cfg
}

pub fn judges(cfg: LlmConfig) -> LlmJudges {
    judges_with_models(cfg, PersonaModels::default())
}

/// The judges with their own models (`PersonaModels::from_env`).
pub fn judges_with_models(cfg: LlmConfig, models: PersonaModels) -> LlmJudges {
    LlmJudges::new(cfg, models, auditor::judges::prompts::embedded()).expect("client builds")
}

pub fn rubric() -> Arc<Rubric> {
    Arc::new(Rubric::parse(auditor::rubric::EMBEDDED_RUBRIC, "<embedded>").expect("rubric"))
}

/// A small pack: one fact for graph_orchestration and git_forensic_analysis, one excerpt.
pub fn pack() -> EvidencePack {
    let mut p = EvidencePack::default();
    p.evidences.insert(
        "graph_orchestration".into(),
        vec![
            Evidence::fact(
                "repo.graph.fan_out.0",
                Detective::RepoInvestigator,
                "Detectives fan out from one node",
                true,
                "src/graph.py:12",
                "three add_edge calls from START",
                Confidence::CERTAIN,
            ),
            Evidence::fact(
                "repo.graph.judges_fan_out.0",
                Detective::RepoInvestigator,
                "Judges fan out from the aggregator",
                false,
                "src/graph.py:20",
                "judges are chained",
                Confidence::CERTAIN,
            ),
        ],
    );
    p.evidences.insert(
        "git_forensic_analysis".into(),
        vec![Evidence::fact(
            "repo.git.commits.0",
            Detective::RepoInvestigator,
            "More than 3 commits with progression",
            true,
            "a1b2c3d",
            "14 commits over 3 days",
            Confidence::CERTAIN,
        )],
    );
    p.excerpts.insert(
        "theoretical_depth".into(),
        vec![Excerpt {
            page: 3,
            text: "The detectives run in parallel and join at the aggregator.".into(),
        }],
    );
    p
}

pub fn request(persona: Judge, criterion: &str, pack: Arc<EvidencePack>) -> JudgeRequest {
    JudgeRequest {
        persona,
        criterion_id: criterion.into(),
        rubric: rubric(),
        pack,
    }
}

/// Bodies of every request the server received, in order.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| r.body_json().unwrap_or(Value::Null))
        .collect()
}

/// The largest number of requests that arrived within any window of `window` (with a server
/// that answers after `delay > window`, the number of requests in flight together).
pub fn max_in_window(arrivals: &[Instant], window: Duration) -> usize {
    let mut sorted = arrivals.to_vec();
    sorted.sort();
    let mut best = 0;
    for (i, t) in sorted.iter().enumerate() {
        let n = sorted[i..]
            .iter()
            .take_while(|u| u.duration_since(*t) < window)
            .count();
        best = best.max(n);
    }
    best
}
