//! The EvidenceAggregator step, a pure function over plain data: the report's claimed paths
//! and feature claims cross-referenced with the repository (or, when the repository could not
//! be read, marked as not checkable), every criterion given evidence or an explicit absence,
//! and the report excerpts retrieved per criterion. The coordinator runs it on tokio's
//! blocking pool, never on an actor thread (a crafted submission can make it heavy).

use super::routes;
use crate::judges::Excerpt;
use crate::model::{AuditState, StateUpdate};
use crate::pdf::PdfFacts;
use crate::repo::RepoFacts;
use crate::rubric::{Rubric, TargetArtifact};
use std::collections::BTreeMap;

/// What the aggregation hands back: the state with the cross-reference evidence merged, the
/// facts (the PDF's claims now carry their statuses) and the excerpts per criterion.
pub struct Aggregated {
    pub state: AuditState,
    pub repo_facts: Option<RepoFacts>,
    pub pdf_facts: Option<PdfFacts>,
    pub excerpts: BTreeMap<String, Vec<Excerpt>>,
}

pub fn aggregate(
    mut state: AuditState,
    repo_facts: Option<RepoFacts>,
    mut pdf_facts: Option<PdfFacts>,
    rubric: &Rubric,
) -> Aggregated {
    let doc_dims = rubric.dimensions_for(TargetArtifact::PdfReport);
    match (pdf_facts.as_mut(), repo_facts.as_ref()) {
        (Some(pdf), None) => {
            // The repository could not be read: what the report claims about it cannot be
            // checked. The cross-reference criteria hold only that (grader side: not
            // assessed), never the report's word for it.
            for (dimension, unchecked) in crate::pdf::cross_reference(pdf, &[], &doc_dims) {
                state.replace_unverifiable(dimension, unchecked);
            }
            state.merge(StateUpdate {
                evidences: crate::pdf::cross_check_concepts(pdf, None, &doc_dims),
                ..Default::default()
            });
        }
        (Some(pdf), Some(repo)) => {
            let cross = crate::pdf::cross_reference(pdf, &repo.files, &doc_dims);
            state.merge(StateUpdate {
                evidences: cross,
                ..Default::default()
            });
            let claims = crate::pdf::cross_check_claims(pdf, &repo.python, &doc_dims);
            state.merge(StateUpdate {
                evidences: claims,
                ..Default::default()
            });
            let ties =
                crate::pdf::cross_check_concepts(pdf, Some((&repo.files, &repo.python)), &doc_dims);
            state.merge(StateUpdate {
                evidences: ties,
                ..Default::default()
            });
        }
        (None, _) => {}
    }
    let gaps = routes::fill_gaps(state.evidences(), rubric);
    state.merge(gaps);
    let mut excerpts: BTreeMap<String, Vec<Excerpt>> = BTreeMap::new();
    if let Some(pdf) = pdf_facts.as_ref() {
        for d in &rubric.dimensions {
            let question = format!("{} {}", d.name, d.forensic_instruction);
            let found: Vec<Excerpt> = crate::pdf::excerpts(pdf, &question, 1500)
                .into_iter()
                .map(|(page, text)| Excerpt { page, text })
                .collect();
            if !found.is_empty() {
                excerpts.insert(d.id.clone(), found);
            }
        }
    }
    Aggregated {
        state,
        repo_facts,
        pdf_facts,
        excerpts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EvidenceKind;

    fn rubric() -> Rubric {
        Rubric::parse(
            &std::fs::read_to_string(format!(
                "{}/tests/fixtures/rubrics/official-v3.0.0.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
            "official-v3.0.0.json",
        )
        .unwrap()
    }

    #[test]
    fn without_the_repository_the_report_is_not_taken_at_its_word() {
        let rubric = rubric();
        let pdf = PdfFacts::from_pages(
            "report.pdf",
            &["The judges live in src/nodes/judges.py and run in parallel.".into()],
            &[],
        );
        let mut state = AuditState::default();
        // what the PDF alone said about the cross-reference criterion
        state.merge(StateUpdate {
            evidences: crate::pdf::evidence(&pdf, &rubric.dimensions),
            ..Default::default()
        });
        let a = aggregate(state, None, Some(pdf), &rubric);
        let accuracy = &a.state.evidences()["report_accuracy"];
        assert!(!accuracy.is_empty());
        assert!(
            accuracy.iter().all(|e| e.kind == EvidenceKind::Missing),
            "{accuracy:?}"
        );
        // every criterion has evidence or an explicit absence
        for d in &rubric.dimensions {
            assert!(a.state.evidences().contains_key(&d.id), "{}", d.id);
        }
    }

    #[test]
    fn without_a_report_every_criterion_still_gets_evidence_or_an_absence() {
        let rubric = rubric();
        let a = aggregate(AuditState::default(), None, None, &rubric);
        assert!(a.excerpts.is_empty());
        for d in &rubric.dimensions {
            assert!(a.state.evidences().contains_key(&d.id), "{}", d.id);
        }
    }
}
