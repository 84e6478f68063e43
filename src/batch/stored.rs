//! The evidence of a job as the store keeps it between the detectives and the judges (a batch
//! resumes from it; the isolated evidence child prints it).

use crate::audit::Collected;
use crate::judges::EvidencePack;
use crate::model::AuditState;
use crate::pdf::PdfFacts;
use crate::repo::RepoFacts;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Why the evidence could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    #[error("cannot serialise the evidence: {0}")]
    Write(#[source] serde_json::Error),
    #[error("the persisted evidence cannot be read back: {0}")]
    Read(#[source] serde_json::Error),
}

/// The evidence of a job as persisted after the detectives.
#[derive(Debug, Serialize, Deserialize)]
struct StoredCollected {
    state: AuditState,
    repo_facts: Option<RepoFacts>,
    pdf_facts: Option<PdfFacts>,
    pdf_name: Option<String>,
    pack: EvidencePack,
    /// LLM tokens used before the judges (vision, warm-up).
    #[serde(default)]
    usage: std::collections::BTreeMap<String, crate::model::TokenUsage>,
}

/// The evidence as JSON, for the store.
pub fn to_stored(c: &Collected) -> Result<String, StoredError> {
    serde_json::to_string(&StoredCollected {
        state: c.state.clone(),
        repo_facts: c.repo_facts.clone(),
        pdf_facts: c.pdf_facts.clone(),
        pdf_name: c.pdf_name.clone(),
        pack: (*c.pack).clone(),
        usage: c.usage.clone(),
    })
    .map_err(StoredError::Write)
}

/// The evidence read back from the store.
pub fn from_stored(json: &str) -> Result<Collected, StoredError> {
    let s: StoredCollected = serde_json::from_str(json).map_err(StoredError::Read)?;
    Ok(Collected {
        state: s.state,
        repo_facts: s.repo_facts,
        pdf_facts: s.pdf_facts,
        pdf_name: s.pdf_name,
        pack: Arc::new(s.pack),
        usage: s.usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_evidence_round_trips_to_a_fixed_point() {
        let mut pack = EvidencePack::default();
        pack.evidences.insert(
            "d".into(),
            vec![crate::model::Evidence::fact(
                "e",
                crate::model::Detective::RepoInvestigator,
                "g",
                true,
                "a.py:1",
                "r",
                crate::model::Confidence::new(0.1 + 0.2).unwrap(),
            )],
        );
        let c = Collected {
            state: AuditState::default(),
            repo_facts: None,
            pdf_facts: None,
            pdf_name: Some("repo:r.pdf".into()),
            pack: Arc::new(pack),
            usage: Default::default(),
        };
        let json = to_stored(&c).unwrap();
        let back = from_stored(&json).unwrap();
        assert_eq!(to_stored(&back).unwrap(), json);
        assert_eq!(back.pdf_name.as_deref(), Some("repo:r.pdf"));
        assert!(from_stored("{").is_err());
    }
}
