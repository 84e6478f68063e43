//! OpenAI-compatible LLM access: configuration from the environment, client with a request
//! timeout, structured output, retries with backoff, global concurrency and rate limits.
//!
//! STUB: being built (issue 5).
