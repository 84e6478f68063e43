//! Command-line flags shared by several commands (`auditor audit` and `auditor batch`): the
//! judge panel's, turned into the plain [`PanelConfig`] the layers below take; the errors of
//! setting it up get the flags' names here, where the flags are known.

use crate::exit::CliError;
use crate::judges::panel::{self, JudgesChoice, Panel, PanelConfig, PanelError};
use crate::llm::EndpointError;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Which judges rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JudgesArg {
    /// LLM judges when OPENAI_API_KEY or OPENAI_BASE_URL is set, else offline judges.
    Auto,
    /// LLM judges; an error when no API key or base URL is configured.
    Llm,
    /// Deterministic offline judges (no LLM).
    Offline,
}

/// How the judges are set up (shared by `audit` and `batch`).
#[derive(Debug, Clone, Args)]
pub struct PanelArgs {
    /// Which judges rule.
    #[arg(long, value_enum, default_value = "auto")]
    pub judges: JudgesArg,
    /// Directory with the judges' prompt files (default: the prompts built into the binary;
    /// never ./prompts, which may belong to the audited submission).
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// LLM requests in flight at once, across all judges (and, in a batch, all submissions);
    /// overrides AUDITOR_MAX_CONCURRENCY.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrency: Option<u32>,
}

impl Default for PanelArgs {
    fn default() -> Self {
        PanelArgs {
            judges: JudgesArg::Auto,
            prompts: None,
            max_concurrency: None,
        }
    }
}

impl PanelArgs {
    /// The panel's configuration the flags say.
    pub fn config(&self) -> PanelConfig {
        PanelConfig {
            judges: match self.judges {
                JudgesArg::Auto => JudgesChoice::Auto,
                JudgesArg::Llm => JudgesChoice::Llm,
                JudgesArg::Offline => JudgesChoice::Offline,
            },
            prompts: self.prompts.clone(),
            max_concurrency: self.max_concurrency,
        }
    }
}

/// The panel the flags ask for, with the LLM configuration from the process environment; an
/// error is bad input, said in the flags' terms.
pub fn set_up_panel(args: &PanelArgs) -> Result<Panel, CliError> {
    panel::set_up(&args.config(), |k| std::env::var(k).ok()).map_err(panel_error)
}

fn panel_error(e: PanelError) -> CliError {
    match e {
        PanelError::NoEndpoint => CliError::bad_input(
            "--judges llm needs an LLM endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server other than OpenAI), or use --judges offline",
        ),
        e => CliError::bad_input(e),
    }
}

/// Before a run: an LLM endpoint where nothing answers stops it with one message (bad input),
/// which says how to grade without a model.
pub fn check_endpoint(panel: &Panel) -> Result<(), CliError> {
    panel
        .check_endpoint()
        .map_err(|e| CliError::bad_input(EndpointDown(e)))
}

/// No LLM endpoint answers: what to do about it, in the flags' terms.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0}. Start the server, or fix OPENAI_BASE_URL; to grade without a model, run with --judges offline"
)]
struct EndpointDown(#[source] EndpointError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_reaches_the_panel_config() {
        let args = PanelArgs {
            judges: JudgesArg::Offline,
            prompts: Some("p".into()),
            max_concurrency: Some(3),
        };
        assert_eq!(
            args.config(),
            PanelConfig {
                judges: JudgesChoice::Offline,
                prompts: Some("p".into()),
                max_concurrency: Some(3),
            }
        );
        assert_eq!(PanelArgs::default().config(), PanelConfig::default());
        let llm = PanelArgs {
            judges: JudgesArg::Llm,
            ..PanelArgs::default()
        };
        assert_eq!(llm.config().judges, JudgesChoice::Llm);
    }

    #[test]
    fn a_missing_endpoint_names_the_flags() {
        let err = panel_error(PanelError::NoEndpoint);
        assert_eq!(err.exit_code(), crate::exit::BAD_INPUT);
        let text = err.to_string();
        assert!(
            text.starts_with("--judges llm needs an LLM endpoint")
                && text.ends_with("or use --judges offline"),
            "{text}"
        );
    }
}
