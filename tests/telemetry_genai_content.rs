//! With `AUDITOR_TRACE_CONTENT=1`, prompts and completions are recorded on LLM spans, with
//! known secrets redacted. (Its own file: the subscriber and the opt-in are per process.)

mod telemetry_support;

use telemetry_support::Attr;
use telemetry_support::genai as genai_scenario;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_is_recorded_on_opt_in_and_secrets_are_redacted() {
    let (spans, bodies) = genai_scenario::scenario(true).await;
    let ok = spans
        .iter()
        .find(|s| s.name == "chat gpt-test" && s.str("error.type").is_none())
        .expect("the successful call");
    let input = ok
        .attrs
        .get("gen_ai.input.messages")
        .and_then(Attr::as_str)
        .expect("prompt recorded");
    assert!(input.contains(genai_scenario::PROMPT_MARKER), "{input}");
    assert!(input.contains("[REDACTED]"), "{input}");
    let output = ok
        .attrs
        .get("gen_ai.output.messages")
        .and_then(Attr::as_str)
        .expect("completion recorded");
    assert!(output.contains("score"), "{output}");
    for b in &bodies {
        assert!(!b.contains("sk-SECRET"), "API key exported");
    }
}
