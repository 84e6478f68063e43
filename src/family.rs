//! Fact families, said once: which family a detective fact belongs to, by a segment of its id
//! (`repo.history.commit_count`, `repo.security.timeout`, `pdf.<criterion>.concept.x`,
//! `pdf.<criterion>.path.3`). The first segment after the detective's that names a family
//! decides: `repo.personas.structured_output` (whether the persona prompts ask for structured
//! output) is a judicial-nuance fact.
//!
//! The RepoInvestigator files each family's facts under these ids (`repo::evidence`: a
//! dimension's words choose the families it is served by), and the offline judges' level tables
//! are routed by the same table (`judges::levels`: a criterion is judged on the family most of
//! its facts belong to). No rubric id is named here.

/// A family of detective facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    History,
    Graph,
    State,
    Safety,
    Structured,
    Nuance,
    Justice,
    Concepts,
    CrossReference,
    Diagram,
}

/// Each family with the id segments of its facts.
const TABLE: [(Family, &[&str]); 10] = [
    (Family::History, &["history"]),
    (Family::Graph, &["graph"]),
    (Family::State, &["state"]),
    (Family::Safety, &["security"]),
    (Family::Structured, &["structured_output"]),
    (Family::Nuance, &["personas"]),
    (Family::Justice, &["justice"]),
    // `pdf.<criterion>.concept.x`; `pdf.<criterion>.tie.x`: whether its explanation names the
    // repository's code
    (Family::Concepts, &["concept", "tie"]),
    // `pdf.<criterion>.path.N`, `pdf.<criterion>.paths.summary`
    (Family::CrossReference, &["path", "paths"]),
    // `vision.<criterion>.no_diagram`, `vision.<criterion>.text_drawing`: what the scan found
    // when no picture could be inspected
    (Family::Diagram, &["no_diagram", "text_drawing"]),
];

impl Family {
    /// The families of the repository's facts (the RepoInvestigator's), in table order.
    pub const REPO: [Family; 7] = [
        Family::History,
        Family::Graph,
        Family::State,
        Family::Safety,
        Family::Structured,
        Family::Nuance,
        Family::Justice,
    ];

    /// The family in words.
    pub fn name(self) -> &'static str {
        match self {
            Family::History => "git history",
            Family::Graph => "graph orchestration",
            Family::State => "state management",
            Family::Safety => "safe tool engineering",
            Family::Structured => "structured output",
            Family::Nuance => "judicial nuance",
            Family::Justice => "Chief Justice synthesis",
            Family::Concepts => "theoretical depth",
            Family::CrossReference => "report cross-reference",
            Family::Diagram => "architecture diagram",
        }
    }

    /// The family a fact belongs to, by its id; `None` for a fact of no family
    /// (`repo.unrouted`, `pdf.<criterion>.claim.*`, ...).
    pub fn of(id: &str) -> Option<Family> {
        // `id#2`: a different fact under a taken id (see `AuditState::merge`)
        let id = id.split('#').next().unwrap_or(id);
        id.split('.').skip(1).find_map(|segment| {
            TABLE
                .iter()
                .find(|(_, segments)| segments.contains(&segment))
                .map(|(f, _)| *f)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_family() {
        assert_eq!(
            Family::of("repo.history.commit_count"),
            Some(Family::History)
        );
        assert_eq!(
            Family::of("repo.history.commit_count#2"),
            Some(Family::History)
        );
        assert_eq!(
            Family::of("repo.graph.defect.unbounded_loop.0"),
            Some(Family::Graph)
        );
        assert_eq!(Family::of("repo.security.timeout"), Some(Family::Safety));
        assert_eq!(
            Family::of("repo.structured_output.retry"),
            Some(Family::Structured)
        );
        assert_eq!(Family::of("repo.personas.distinct"), Some(Family::Nuance));
        assert_eq!(
            Family::of("repo.justice.rule.fact_supremacy"),
            Some(Family::Justice)
        );
        assert_eq!(
            Family::of("pdf.my_custom_id.concept.metacognition"),
            Some(Family::Concepts)
        );
        assert_eq!(Family::of("pdf.x.path.0"), Some(Family::CrossReference));
        assert_eq!(
            Family::of("pdf.x.paths.summary"),
            Some(Family::CrossReference)
        );
        assert_eq!(Family::of("pdf.x.claim.fan_in"), None);
        assert_eq!(Family::of("repo.unrouted"), None);
        // a word inside a segment is not the segment
        assert_eq!(Family::of("repo.historyish"), None);
        assert_eq!(Family::of("pdf.x.claimed_paths"), None);
        // the first segment that names a family decides
        assert_eq!(
            Family::of("repo.personas.structured_output"),
            Some(Family::Nuance)
        );
    }

    #[test]
    fn every_family_has_one_row_and_a_segment_names_one_family() {
        for (f, _) in TABLE {
            assert_eq!(TABLE.iter().filter(|(g, _)| *g == f).count(), 1);
        }
        let segments: Vec<&str> = TABLE.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        let mut unique = segments.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), segments.len());
    }
}
