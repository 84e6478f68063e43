//! Structured output: a strict JSON schema generated from a Rust type (schemars), sent as
//! `response_format: json_schema` or, for servers that reject it, as the parameters of a
//! single forced tool call; and the answer text taken back out of the response.

use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionNamedToolChoice, ChatCompletionRequestMessage,
    ChatCompletionTool, ChatCompletionToolChoiceOption, ChatCompletionTools,
    CreateChatCompletionRequest, CreateChatCompletionResponse, FunctionName, FunctionObject,
    ResponseFormat, ResponseFormatJsonSchema,
};
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// How the schema is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// `response_format: {type: json_schema, strict: true}`.
    JsonSchema,
    /// One function tool whose parameters are the schema, forced by `tool_choice`.
    ToolCall,
}

/// A named schema for one kind of answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaSpec {
    /// `[a-zA-Z0-9_-]{1,64}`: the response format name and the tool name.
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// The strict JSON schema of `T`: `$schema`/`title` removed, every object closed
/// (`additionalProperties: false`) with all its properties required, definitions inlined.
pub fn strict_schema_for<T: JsonSchema>() -> Value {
    let schema = schemars::schema_for!(T);
    let mut value = serde_json::to_value(&schema).unwrap_or(Value::Null);
    let defs = value
        .as_object_mut()
        .and_then(|o| o.remove("$defs"))
        .unwrap_or(Value::Null);
    let mut value = inline_refs(value, &defs, 0);
    make_strict(&mut value);
    if let Some(o) = value.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    value
}

fn inline_refs(value: Value, defs: &Value, depth: usize) -> Value {
    match value {
        Value::Object(mut o) => {
            if depth < 16
                && let Some(Value::String(r)) = o.get("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
                && let Some(def) = defs.get(name)
            {
                return inline_refs(def.clone(), defs, depth + 1);
            }
            let o2: Map<String, Value> = std::mem::take(&mut o)
                .into_iter()
                .map(|(k, v)| (k, inline_refs(v, defs, depth)))
                .collect();
            Value::Object(o2)
        }
        Value::Array(a) => {
            Value::Array(a.into_iter().map(|v| inline_refs(v, defs, depth)).collect())
        }
        other => other,
    }
}

/// Closes every object of a schema and requires all its properties (OpenAI strict mode).
pub fn make_strict(value: &mut Value) {
    match value {
        Value::Object(o) => {
            o.remove("format"); // e.g. "uint32": not in the strict subset
            if o.get("type").and_then(Value::as_str) == Some("object")
                || o.contains_key("properties")
            {
                let keys: Vec<Value> = o
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().map(Value::String).collect())
                    .unwrap_or_default();
                o.insert("required".into(), Value::Array(keys));
                o.insert("additionalProperties".into(), Value::Bool(false));
            }
            for v in o.values_mut() {
                make_strict(v);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(make_strict),
        _ => {}
    }
}

/// Fills the chat request's output settings for `mode`.
pub fn apply_mode(req: &mut CreateChatCompletionRequest, spec: &SchemaSpec, mode: OutputMode) {
    match mode {
        OutputMode::JsonSchema => {
            req.tools = None;
            req.tool_choice = None;
            req.response_format = Some(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: Some(spec.description.clone()),
                    name: spec.name.clone(),
                    schema: spec.schema.clone(),
                    strict: Some(true),
                },
            });
        }
        OutputMode::ToolCall => {
            req.response_format = None;
            req.tools = Some(vec![ChatCompletionTools::Function(ChatCompletionTool {
                function: FunctionObject {
                    name: spec.name.clone(),
                    description: Some(spec.description.clone()),
                    parameters: Some(spec.schema.clone()),
                    strict: Some(true),
                },
            })]);
            req.tool_choice = Some(ChatCompletionToolChoiceOption::Function(
                ChatCompletionNamedToolChoice {
                    function: FunctionName {
                        name: spec.name.clone(),
                    },
                },
            ));
        }
    }
}

/// A chat request with the given messages and output mode.
pub fn request(
    model: &str,
    messages: Vec<ChatCompletionRequestMessage>,
    spec: &SchemaSpec,
    mode: OutputMode,
) -> CreateChatCompletionRequest {
    let mut req = CreateChatCompletionRequest {
        model: model.to_string(),
        messages,
        temperature: Some(0.2),
        ..Default::default()
    };
    apply_mode(&mut req, spec, mode);
    req
}

/// Why an answer is not the one asked for. Phrased to be fed back to the model.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("the response has no choices")]
    NoChoices,
    #[error("you refused to answer ({0})")]
    Refused(String),
    #[error("the answer was empty")]
    Empty,
    /// The first characters of the answer.
    #[error("the answer was free text, not the JSON object required (it began: {0:?})")]
    FreeText(String),
    #[error("the answer is not valid JSON for the schema: {0}")]
    Schema(#[source] serde_json::Error),
    /// The caller's validation refused the parsed answer (its reason, for the model).
    #[error("{0}")]
    Rejected(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The answer text of a response: the forced tool call's arguments, else the message content
/// (servers differ in which they use).
pub fn answer_text(resp: &CreateChatCompletionResponse) -> Result<String, AnswerError> {
    let choice = resp.choices.first().ok_or(AnswerError::NoChoices)?;
    let msg = &choice.message;
    if let Some(calls) = &msg.tool_calls {
        for call in calls {
            if let ChatCompletionMessageToolCalls::Function(f) = call {
                return Ok(f.function.arguments.clone());
            }
        }
    }
    if let Some(text) = msg.content.as_deref().filter(|t| !t.trim().is_empty()) {
        return Ok(text.to_string());
    }
    if let Some(refusal) = &msg.refusal {
        return Err(AnswerError::Refused(refusal.clone()));
    }
    Err(AnswerError::Empty)
}

/// Parses the answer as `T`. A JSON object wrapped in a Markdown code fence is accepted;
/// anything else that is not exactly the JSON object is rejected with a reason.
pub fn parse_answer<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, AnswerError> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|s| s.strip_suffix("```"))
        .map(str::trim)
        .unwrap_or(t);
    if !t.starts_with('{') {
        return Err(AnswerError::FreeText(t.chars().take(80).collect()));
    }
    serde_json::from_str(t).map_err(AnswerError::Schema)
}

/// Usage of a response as our type.
pub fn usage_of(resp: &CreateChatCompletionResponse) -> crate::model::TokenUsage {
    resp.usage
        .as_ref()
        .map(|u| crate::model::TokenUsage {
            input_tokens: u64::from(u.prompt_tokens),
            output_tokens: u64::from(u.completion_tokens),
            cached_input_tokens: u
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .map(u64::from)
                .unwrap_or(0),
        })
        .unwrap_or_default()
}

/// A text a model wrote, cut to `max` characters at a word boundary with a note saying how much
/// it wrote (what a model may say is bounded: an argument is a few paragraphs, not megabytes);
/// unchanged when it fits.
pub fn cut_text(text: String, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let head = &text[..end];
    // the last whole word, unless that drops most of the text (one endless word)
    let head = match head.rfind(char::is_whitespace) {
        Some(i) if i > end / 2 => &head[..i],
        _ => head,
    }
    .trim_end();
    format!(
        "{head} [cut: the model wrote {total} characters; the first {} are kept]",
        head.chars().count()
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_text_is_cut_at_a_word_and_says_so() {
        assert_eq!(super::cut_text("short".into(), 10), "short");
        let cut = super::cut_text("één twee drie vier".into(), 9);
        assert_eq!(
            cut,
            "één twee [cut: the model wrote 18 characters; the first 8 are kept]"
        );
        let word = super::cut_text("x".repeat(50), 10);
        assert!(word.starts_with(&"x".repeat(10)), "{word}");
    }
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        a: u32,
        b: Option<String>,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        inner: Inner,
        list: Vec<Inner>,
    }

    #[test]
    fn schema_is_strict_and_self_contained() {
        let s = strict_schema_for::<Outer>();
        let text = s.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!text.contains("$schema"), "{text}");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"].as_array().unwrap().len(), 3);
        assert_eq!(s["properties"]["inner"]["additionalProperties"], false);
        assert_eq!(
            s["properties"]["list"]["items"]["required"],
            serde_json::json!(["a", "b"])
        );
    }

    #[test]
    fn answers_in_a_code_fence_parse_and_free_text_does_not() {
        #[derive(Debug, serde::Deserialize)]
        struct A {
            x: i32,
        }
        assert_eq!(parse_answer::<A>("```json\n{\"x\": 3}\n```").unwrap().x, 3);
        assert_eq!(parse_answer::<A>(" {\"x\": 4} ").unwrap().x, 4);
        assert!(
            parse_answer::<A>("I think the score is 4")
                .unwrap_err()
                .to_string()
                .contains("free text")
        );
        assert!(parse_answer::<A>("{\"x\": \"four\"}").is_err());
    }

    #[test]
    fn modes_set_response_format_or_a_forced_tool() {
        let spec = SchemaSpec {
            name: "answer".into(),
            description: "d".into(),
            schema: serde_json::json!({"type":"object"}),
        };
        let r = request("m", vec![], &spec, OutputMode::JsonSchema);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["response_format"]["type"], "json_schema");
        assert_eq!(v["response_format"]["json_schema"]["strict"], true);
        assert!(v.get("tools").is_none());
        let r = request("m", vec![], &spec, OutputMode::ToolCall);
        let v = serde_json::to_value(&r).unwrap();
        assert!(v.get("response_format").is_none());
        assert_eq!(v["tools"][0]["function"]["name"], "answer");
        assert_eq!(v["tool_choice"]["function"]["name"], "answer");
    }
}
