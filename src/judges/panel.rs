//! Setting up the judge panel for a run: which judges, their prompts and concurrency (a plain
//! [`PanelConfig`]: the command line's flags are turned into it by `flags`), the LLM
//! configuration from the environment, and what decides the judges' answers (the fingerprint in
//! a batch's job key).

use super::llm::{LlmJudges, PersonaModels};
use super::{JudgeService, OfflineJudges, prompts};
use crate::llm::{ConfigError, LlmConfig, LlmSession, PromptError, Prompts};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// Which judges rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JudgesChoice {
    /// LLM judges when an LLM endpoint is configured, else offline judges.
    #[default]
    Auto,
    /// LLM judges; an error when no endpoint is configured.
    Llm,
    /// Deterministic offline judges (no LLM).
    Offline,
}

/// How the judges are set up (the same for `audit` and `batch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PanelConfig {
    pub judges: JudgesChoice,
    /// Directory with the prompt files (`None`: the prompts built into the binary).
    pub prompts: Option<PathBuf>,
    /// LLM requests in flight at once, overriding `AUDITOR_MAX_CONCURRENCY`.
    pub max_concurrency: Option<u32>,
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
    /// Before a run: whether something answers at the LLM endpoint (always, for the offline
    /// judges), so that a dead endpoint stops the run with one message (bad input) instead of
    /// a report of criteria that could not be judged.
    pub fn check_endpoint(&self) -> Result<(), crate::llm::EndpointError> {
        match &self.endpoint {
            Some(endpoint) => crate::llm::check_endpoint(endpoint, Duration::from_secs(10)),
            None => Ok(()),
        }
    }
}

/// Why the panel could not be set up: bad input, said before anything runs.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Prompts(#[from] PromptError),
    /// LLM judges asked for, and no endpoint configured (the command says which flag asked).
    #[error(
        "the LLM judges need an LLM endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server other than OpenAI)"
    )]
    NoEndpoint,
}

/// The judge panel for the chosen mode, with the LLM configuration read from `env`.
pub fn set_up(
    args: &PanelConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Panel, PanelError> {
    let mut config = LlmConfig::from_env(&env)?;
    if let Some(n) = args.max_concurrency {
        config.max_concurrency = n as usize;
    }
    let use_llm = match args.judges {
        JudgesChoice::Offline => false,
        JudgesChoice::Auto => config.is_configured(),
        JudgesChoice::Llm if !config.is_configured() => return Err(PanelError::NoEndpoint),
        JudgesChoice::Llm => true,
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
        let panel = set_up(&PanelConfig::default(), env(&[])).unwrap();
        assert_eq!(panel.service.mode(), crate::model::JudgeMode::Offline);
        assert!(panel.vision.is_none() && panel.judge_timeout.is_none());
        assert!(panel.fingerprint.starts_with("offline/"));
    }

    #[test]
    fn llm_without_an_endpoint_is_bad_input() {
        let args = PanelConfig {
            judges: JudgesChoice::Llm,
            ..PanelConfig::default()
        };
        let err = set_up(&args, env(&[])).err().expect("an error");
        assert!(matches!(err, PanelError::NoEndpoint), "{err}");
        assert!(
            !err.to_string().contains("--judges"),
            "the command names its flags: {err}"
        );
    }

    #[test]
    fn an_llm_panel_shares_its_session_with_vision_and_fingerprints_the_models() {
        let vars = [
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("AUDITOR_VISION_MODEL", "eyes"),
        ];
        let panel = set_up(&PanelConfig::default(), env(&vars)).unwrap();
        assert_eq!(panel.service.mode(), crate::model::JudgeMode::Llm);
        let vision = panel.vision.expect("a vision session");
        assert_eq!(vision.config().vision_model.as_deref(), Some("eyes"));
        assert!(panel.judge_timeout.is_some());
        let other = set_up(
            &PanelConfig::default(),
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
