//! A neutral tally of a criterion's evidence, shared by the offline judges, the Chief Justice,
//! the report and the DocAnalyst's claim checks, so all read the detectives' facts the same way.
//! Plain functions over `model::Evidence`: this module imports nothing else from the crate.
//!
//! Convention (see `Evidence`): one `Fact` per requirement of the dimension's success pattern,
//! `found == true` when the requirement is met. A `SecurityFinding` or `Contradiction` with
//! `found == true` is confirmed and counts as a failed requirement (and triggers its own rule);
//! with `found == false` it is a check that came back clean and counts as a passed requirement.
//! `Missing` marks evidence a detective could not collect and is not a requirement.

use crate::model::{Evidence, EvidenceKind};
pub use crate::text::short;

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

    /// Requirements that hold: facts found, and security / contradiction checks that came
    /// back clean.
    pub fn passed(&self) -> Vec<&'a Evidence> {
        self.met.iter().chain(&self.cleared).copied().collect()
    }

    /// Requirements that fail: facts not found, confirmed security findings and confirmed
    /// contradictions.
    pub fn failed(&self) -> Vec<&'a Evidence> {
        self.unmet
            .iter()
            .chain(&self.security)
            .chain(&self.contradictions)
            .copied()
            .collect()
    }

    /// Number of requirements (passed + failed).
    pub fn requirements(&self) -> usize {
        self.met.len()
            + self.cleared.len()
            + self.unmet.len()
            + self.security.len()
            + self.contradictions.len()
    }

    /// Whether the only thing known is that evidence is missing (or nothing at all).
    pub fn only_missing(&self) -> bool {
        self.requirements() == 0
    }

    /// Share of requirements passed, weighted by confidence (counts when all confidences are
    /// 0). `None` when there is no requirement.
    pub fn ratio(&self) -> Option<f64> {
        if self.requirements() == 0 {
            return None;
        }
        let w = |v: &[&Evidence]| v.iter().map(|e| e.confidence.get()).sum::<f64>();
        let (p, f) = (w(&self.passed()), w(&self.failed()));
        if p + f > 0.0 {
            Some(p / (p + f))
        } else {
            Some(self.passed().len() as f64 / self.requirements() as f64)
        }
    }

    /// Failed requirements established with high confidence.
    pub fn failed_high_confidence(&self) -> usize {
        self.failed()
            .iter()
            .filter(|e| e.confidence.get() >= HIGH_CONFIDENCE)
            .count()
    }

    /// More than half of the requirements fail with high confidence.
    pub fn mostly_unmet(&self) -> bool {
        self.requirements() > 0 && 2 * self.failed_high_confidence() > self.requirements()
    }

    /// Every requirement holds with high confidence and no evidence is missing.
    pub fn all_met_cleanly(&self) -> bool {
        self.requirements() > 0
            && self.failed().is_empty()
            && self
                .passed()
                .iter()
                .all(|e| e.confidence.get() >= HIGH_CONFIDENCE)
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

/// The facts in plain words (see [`fact_text`]), at most `max`, then "and N more". No
/// evidence ids: these texts are read in the report (the ids are in the JSON sidecar).
pub fn describe(list: &[&Evidence], max: usize) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(max)
        .map(|e| short(&fact_text(e), 120))
        .collect();
    if list.len() > max {
        parts.push(format!("and {} more", list.len() - max));
    }
    parts.join("; ")
}

/// `fact at location` items (for prosecutors and remediation: where to look), no ids.
pub fn describe_located(list: &[&Evidence], max: usize) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(max)
        .map(|e| format!("{} at {}", short(&fact_text(e), 120), e.location))
        .collect();
    if list.len() > max {
        parts.push(format!("and {} more", list.len() - max));
    }
    parts.join("; ")
}

/// What a fact says: the statement of its typed fact, else its rationale (what the detective
/// found), else its goal. Goals are often shared by every requirement of a dimension;
/// rationales are specific.
pub fn fact_text(e: &Evidence) -> std::borrow::Cow<'_, str> {
    use crate::model::fact::Stated;
    if let Some(f) = &e.fact {
        return std::borrow::Cow::Owned(f.statement());
    }
    std::borrow::Cow::Borrowed(if e.rationale.trim().is_empty() {
        &e.goal
    } else {
        &e.rationale
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::{Confidence, Detective};

    fn ev(id: &str, kind: EvidenceKind, found: bool, confidence: f64) -> Evidence {
        Evidence::fact(
            id,
            Detective::RepoInvestigator,
            "goal",
            found,
            "src/x.py:1",
            "why",
            Confidence::new(confidence).unwrap(),
        )
        .with_kind(kind)
    }

    #[test]
    fn tally_classifies_every_kind() {
        use EvidenceKind::*;
        let list = vec![
            ev("met", Fact, true, 1.0),
            ev("unmet", Fact, false, 1.0),
            ev("sec", SecurityFinding, true, 1.0),
            ev("sec.clear", SecurityFinding, false, 1.0),
            ev("contra", Contradiction, true, 1.0),
            ev("contra.clear", Contradiction, false, 1.0),
            ev("miss", Missing, false, 1.0),
        ];
        let t = Tally::of(&list);
        let passed: Vec<String> = ids(&t.passed());
        let failed: Vec<String> = ids(&t.failed());
        assert_eq!(passed, ["met", "sec.clear", "contra.clear"]);
        assert_eq!(failed, ["unmet", "sec", "contra"]);
        assert_eq!(ids(&t.missing), ["miss"]);
        assert_eq!(t.requirements(), 6);
        assert_eq!(t.ratio(), Some(0.5));
        assert!(!t.mostly_unmet());
        assert!(t.adverse());
        assert!(!t.only_missing());
    }

    #[test]
    fn ratio_is_weighted_by_confidence_and_majority_needs_high_confidence() {
        use EvidenceKind::*;
        let list = vec![
            ev("a", Fact, true, 1.0),
            ev("b", Fact, false, 0.5),
            ev("c", Fact, false, 0.5),
        ];
        let t = Tally::of(&list);
        assert_eq!(t.ratio(), Some(0.5));
        assert!(!t.mostly_unmet(), "low-confidence gaps are not established");
        let list = vec![
            ev("a", Fact, true, 1.0),
            ev("b", Fact, false, 0.9),
            ev("c", Fact, false, 0.7),
        ];
        assert!(Tally::of(&list).mostly_unmet());
        assert_eq!(Tally::of(&[]).ratio(), None);
        assert!(Tally::of(&[ev("m", Missing, false, 1.0)]).only_missing());
    }

    #[test]
    fn all_met_cleanly_requires_high_confidence_and_nothing_missing() {
        use EvidenceKind::*;
        assert!(
            Tally::of(&[
                ev("a", Fact, true, 0.9),
                ev("s", SecurityFinding, false, 1.0)
            ])
            .all_met_cleanly()
        );
        assert!(!Tally::of(&[ev("a", Fact, true, 0.5)]).all_met_cleanly());
        assert!(
            !Tally::of(&[ev("a", Fact, true, 1.0), ev("m", Missing, false, 1.0)]).all_met_cleanly()
        );
        assert!(!Tally::of(&[]).all_met_cleanly());
    }

    #[test]
    fn short_cuts_on_char_boundaries() {
        assert_eq!(short("a  b\nc", 10), "a b c");
        assert_eq!(short("ééééé", 3), "éé…");
    }

    #[test]
    fn short_cuts_at_a_word_boundary() {
        assert_eq!(short("one two three four", 12), "one two…");
        assert_eq!(short("one two, three four", 10), "one two…");
        assert_eq!(short("one two three", 8), "one two…");
        assert_eq!(
            short("the reducer of `errors` is lost in graph", 25),
            "the reducer of `errors`…"
        );
    }
}
