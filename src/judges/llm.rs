//! LLM judges: prompt construction, structured output, validation and bounded retries.
//!
//! STUB: being built (issue 5).
