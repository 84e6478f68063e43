//! Report rendering: Markdown through a handlebars template (escaping off), and the JSON
//! sidecar.
//!
//! STUB: being built (issue 2).
