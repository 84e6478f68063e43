//! One run's LLM access, shared by the judges and the VisionInspector: the HTTP client (with
//! the run's one limiter), the configuration, the prompts, the token ledger, the output-mode
//! switch and what vision models rejected. Cheap to clone: the state is shared.

use super::{ConfigError, LlmClient, LlmConfig, ModeSwitch, Prompts, UsageLedger};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

struct Inner {
    client: LlmClient,
    config: LlmConfig,
    prompts: Prompts,
    ledger: UsageLedger,
    switch: ModeSwitch,
    /// Vision models that rejected an image request in this run, with the reason.
    vision_rejected: Mutex<BTreeMap<String, String>>,
}

/// The run's LLM access (see the module docs).
#[derive(Clone)]
pub struct LlmSession {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LlmSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSession")
            .field("config", &self.inner.config)
            .field("prompts", &self.inner.prompts.source())
            .finish_non_exhaustive()
    }
}

impl LlmSession {
    pub fn new(config: LlmConfig, prompts: Prompts) -> Result<Self, ConfigError> {
        let client = super::client::build(&config)?;
        Ok(LlmSession {
            inner: Arc::new(Inner {
                client,
                config,
                prompts,
                ledger: UsageLedger::default(),
                switch: ModeSwitch::default(),
                vision_rejected: Mutex::default(),
            }),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.inner.config
    }

    pub fn prompts(&self) -> &Prompts {
        &self.inner.prompts
    }

    pub fn client(&self) -> &LlmClient {
        &self.inner.client
    }

    /// Token usage of the run so far, by user (persona, `VisionInspector`, `warm-up`) and item.
    pub fn usage(&self) -> &UsageLedger {
        &self.inner.ledger
    }

    /// Whether answers are asked for with `response_format` or a forced tool call.
    pub fn switch(&self) -> &ModeSwitch {
        &self.inner.switch
    }

    /// Why `model` rejected an image request earlier in this run, if it did.
    pub fn vision_rejected(&self, model: &str) -> Option<String> {
        self.inner
            .vision_rejected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(model)
            .cloned()
    }

    /// Remembers that `model` rejects image requests: it is not sent images again this run.
    pub fn note_vision_rejected(&self, model: &str, reason: &str) {
        self.inner
            .vision_rejected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(model.to_string())
            .or_insert_with(|| reason.to_string());
    }
}
