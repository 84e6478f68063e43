//! A neutral tally of a criterion's evidence, shared by the offline judges and the Chief
//! Justice so both read the detectives' facts the same way.
//!
//! Convention (see `Evidence`): one `Fact` per requirement of the dimension's success pattern,
//! `found == true` when the requirement is met. `SecurityFinding` and `Contradiction` count only
//! when `found == true` (confirmed); with `found == false` they are checks that came back clean.
//! `Missing` marks evidence a detective could not collect.

use crate::model::{Evidence, EvidenceKind};

/// Confidence at or above which a fact is treated as established.
pub const HIGH_CONFIDENCE: f64 = 0.7;

/// The evidence of one criterion, sorted into classes.
#[derive(Debug, Clone, Default)]
pub struct Tally<'a> {
    /// Requirements met (`Fact`, found).
    pub met: Vec<&'a Evidence>,
    /// Requirements not met (`Fact`, not found).
    pub unmet: Vec<&'a Evidence>,
    /// Confirmed security findings.
    pub security: Vec<&'a Evidence>,
    /// Confirmed contradictions between report and repository.
    pub contradictions: Vec<&'a Evidence>,
    /// Security / contradiction checks that came back clean.
    pub cleared: Vec<&'a Evidence>,
    /// Evidence that could not be collected.
    pub missing: Vec<&'a Evidence>,
}

impl<'a> Tally<'a> {
    pub fn of(evidence: &'a [Evidence]) -> Self {
        let mut t = Tally::default();
        for e in evidence {
            match (e.kind, e.found) {
                (EvidenceKind::Fact, true) => t.met.push(e),
                (EvidenceKind::Fact, false) => t.unmet.push(e),
                (EvidenceKind::SecurityFinding, true) => t.security.push(e),
                (EvidenceKind::Contradiction, true) => t.contradictions.push(e),
                (EvidenceKind::SecurityFinding | EvidenceKind::Contradiction, false) => {
                    t.cleared.push(e)
                }
                (EvidenceKind::Missing, _) => t.missing.push(e),
            }
        }
        t
    }

    /// Number of requirements (met + unmet facts).
    pub fn requirements(&self) -> usize {
        self.met.len() + self.unmet.len()
    }

    /// Whether the only thing known is that evidence is missing (or nothing at all).
    pub fn only_missing(&self) -> bool {
        self.requirements() == 0
            && self.security.is_empty()
            && self.contradictions.is_empty()
            && self.cleared.is_empty()
    }

    /// Share of requirements met, weighted by confidence (counts when all confidences are 0).
    /// `None` when there is no requirement.
    pub fn ratio(&self) -> Option<f64> {
        if self.requirements() == 0 {
            return None;
        }
        let w = |v: &[&Evidence]| v.iter().map(|e| e.confidence.get()).sum::<f64>();
        let (m, u) = (w(&self.met), w(&self.unmet));
        if m + u > 0.0 {
            Some(m / (m + u))
        } else {
            Some(self.met.len() as f64 / self.requirements() as f64)
        }
    }

    /// Unmet requirements established with high confidence.
    pub fn unmet_high_confidence(&self) -> usize {
        self.unmet
            .iter()
            .filter(|e| e.confidence.get() >= HIGH_CONFIDENCE)
            .count()
    }

    /// More than half of the requirements are unmet with high confidence.
    pub fn mostly_unmet(&self) -> bool {
        self.requirements() > 0 && 2 * self.unmet_high_confidence() > self.requirements()
    }

    /// Every requirement is met with high confidence and nothing adverse is known.
    pub fn all_met_cleanly(&self) -> bool {
        self.requirements() > 0
            && self.unmet.is_empty()
            && self
                .met
                .iter()
                .all(|e| e.confidence.get() >= HIGH_CONFIDENCE)
            && self.security.is_empty()
            && self.contradictions.is_empty()
            && self.missing.is_empty()
    }

    /// Any adverse fact: a confirmed security finding, a contradiction or missing evidence.
    pub fn adverse(&self) -> bool {
        !self.security.is_empty() || !self.contradictions.is_empty() || !self.missing.is_empty()
    }
}

/// Ids of a list of evidence.
pub fn ids(list: &[&Evidence]) -> Vec<String> {
    list.iter().map(|e| e.id.clone()).collect()
}

/// `goal (id)` items, at most `max`, then "and N more".
pub fn describe(list: &[&Evidence], max: usize) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(max)
        .map(|e| format!("{} [{}]", short(&e.goal, 90), e.id))
        .collect();
    if list.len() > max {
        parts.push(format!("and {} more", list.len() - max));
    }
    parts.join("; ")
}

/// `goal at location [id]` items (for prosecutors and remediation: where to look).
pub fn describe_located(list: &[&Evidence], max: usize) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(max)
        .map(|e| format!("{} at {} [{}]", short(&e.goal, 90), e.location, e.id))
        .collect();
    if list.len() > max {
        parts.push(format!("and {} more", list.len() - max));
    }
    parts.join("; ")
}

/// One line, at most `max` characters (on a char boundary), with an ellipsis when cut.
pub fn short(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// Lower-cased id + goal, for recognising which requirement a fact is about.
pub fn topic(e: &Evidence) -> String {
    format!("{} {}", e.id, e.goal).to_lowercase()
}

/// Whether the fact's id or goal is about any of the given topics.
pub fn about(e: &Evidence, words: &[&str]) -> bool {
    let t = topic(e);
    words.iter().any(|w| t.contains(w))
}
