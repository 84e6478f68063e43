//! Setting up the judge panel for a run: the `--judges`, `--prompts` and `--max-concurrency`
//! flags (shared by `auditor audit` and `auditor batch`), the LLM configuration from the
//! environment, and what decides the judges' answers (the fingerprint in a batch's job key).

use super::llm::{LlmJudges, PersonaModels};
use super::{JudgeService, OfflineJudges, prompts};
use crate::llm::{ConfigError, LlmConfig, LlmSession, PromptError, Prompts};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

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

/// The judges chosen for a run, and the vision model's access when LLMs are in use.
pub struct Panel {
    pub service: Rc<dyn JudgeService>,
    /// The LLM session the VisionInspector shares with the judges (same limiter and ledger),
    /// when a vision model is configured.
    pub vision: Option<LlmSession>,
    /// Longest an LLM judge request may take, the judge's own retries included; `None` for
    /// the offline judges (the default timeout applies).
    pub judge_timeout: Option<Duration>,
    /// What decides the judges' answers besides the request: mode, models, prompts, settings.
    pub fingerprint: String,
    /// The LLM endpoint the judges ask, `None` for the offline judges.
    pub endpoint: Option<String>,
}

impl Panel {
    /// Before a run: an LLM endpoint where nothing answers stops it with one message (bad
    /// input), instead of a report of criteria that could not be judged.
    pub fn check_endpoint(&self) -> Result<(), String> {
        let Some(endpoint) = &self.endpoint else {
            return Ok(());
        };
        crate::llm::check_endpoint(endpoint, Duration::from_secs(10)).map_err(|e| {
            format!(
                "{e}. Start the server, or fix OPENAI_BASE_URL; to grade without a model, run with --judges offline"
            )
        })
    }
}

/// Why the panel could not be set up: bad input, said before anything runs.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Prompts(#[from] PromptError),
    #[error(
        "--judges llm needs an LLM endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server other than OpenAI), or use --judges offline"
    )]
    NoEndpoint,
}

/// The judge panel for the chosen mode, with the LLM configuration read from `env`.
pub fn set_up(args: &PanelArgs, env: impl Fn(&str) -> Option<String>) -> Result<Panel, PanelError> {
    let mut config = LlmConfig::from_env(&env)?;
    if let Some(n) = args.max_concurrency {
        config.max_concurrency = n as usize;
    }
    let use_llm = match args.judges {
        JudgesArg::Offline => false,
        JudgesArg::Auto => config.is_configured(),
        JudgesArg::Llm if !config.is_configured() => return Err(PanelError::NoEndpoint),
        JudgesArg::Llm => true,
    };
    if !use_llm {
        return Ok(Panel {
            service: Rc::new(OfflineJudges),
            vision: None,
            judge_timeout: None,
            fingerprint: format!("offline/{}", env!("CARGO_PKG_VERSION")),
            endpoint: None,
        });
    }
    let prompts = prompts::load(args.prompts.as_deref())?;
    let models = PersonaModels::from_env(&env);
    let fingerprint = fingerprint(&config, &models, &prompts);
    // Worst case for one judge request: every answer attempt retried on transport errors,
    // each waiting for the timeout and the longest backoff.
    let per_call = config.timeout + config.backoff_cap;
    let judge_timeout = per_call * (config.max_retries + 1) * config.max_answer_attempts.max(1)
        + Duration::from_secs(30);
    let vision_configured = config.vision_model.is_some();
    let endpoint = Some(config.endpoint().to_string());
    let judges = LlmJudges::new(config, models, prompts)?;
    Ok(Panel {
        endpoint,
        vision: vision_configured.then(|| judges.session().clone()),
        service: Rc::new(judges),
        judge_timeout: Some(judge_timeout),
        fingerprint,
    })
}

/// What decides an LLM panel's answers besides the request: models, prompts, settings.
fn fingerprint(config: &LlmConfig, models: &PersonaModels, prompts: &Prompts) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for j in crate::model::Judge::ALL {
        h.update(j.as_str());
        h.update(models.model_for(j, config));
        h.update(prompts::persona(prompts, j));
    }
    h.update(prompts::common(prompts));
    h.update(prompts.text(prompts::VISION));
    h.update(config.vision_model.as_deref().unwrap_or(""));
    h.update(config.max_answer_attempts.to_le_bytes());
    format!("llm/{}", hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn auto_without_an_endpoint_is_offline() {
        let panel = set_up(&PanelArgs::default(), env(&[])).unwrap();
        assert_eq!(panel.service.mode(), crate::model::JudgeMode::Offline);
        assert!(panel.vision.is_none() && panel.judge_timeout.is_none());
        assert!(panel.fingerprint.starts_with("offline/"));
    }

    #[test]
    fn llm_without_an_endpoint_is_bad_input() {
        let args = PanelArgs {
            judges: JudgesArg::Llm,
            ..PanelArgs::default()
        };
        let err = set_up(&args, env(&[])).err().expect("an error");
        assert!(matches!(err, PanelError::NoEndpoint), "{err}");
        assert!(err.to_string().contains("--judges offline"), "{err}");
    }

    #[test]
    fn an_llm_panel_shares_its_session_with_vision_and_fingerprints_the_models() {
        let vars = [
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("AUDITOR_VISION_MODEL", "eyes"),
        ];
        let panel = set_up(&PanelArgs::default(), env(&vars)).unwrap();
        assert_eq!(panel.service.mode(), crate::model::JudgeMode::Llm);
        let vision = panel.vision.expect("a vision session");
        assert_eq!(vision.config().vision_model.as_deref(), Some("eyes"));
        assert!(panel.judge_timeout.is_some());
        let other = set_up(
            &PanelArgs::default(),
            env(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]),
        )
        .unwrap();
        assert!(panel.fingerprint.starts_with("llm/"));
        assert_ne!(
            panel.fingerprint, other.fingerprint,
            "the vision model is part of it"
        );
    }
}
