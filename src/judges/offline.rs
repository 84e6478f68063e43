//! Deterministic offline judges: score from the criterion's evidence alone, so the audit runs
//! with no API key. Same request → same opinion.
//!
//! Each persona reads the same [`Tally`] of detective facts through its own lens:
//! - **Prosecutor** (strict): the share of requirements met maps to 1..5 with no benefit of
//!   the doubt; a confirmed security finding means 1, a contradiction or missing evidence caps
//!   at 2; Protocol B statutes ("Orchestration Fraud", "Hallucination Liability") apply when
//!   the facts they need are present.
//! - **Defense** (generous): rewards what is present (any met requirement is worth at least 2)
//!   and, for repository criteria, an iterative git history ("Statute of Effort"); it cannot
//!   argue above 3 against a security finding, a contradiction, or mostly unmet requirements.
//! - **TechLead** (pragmatic): 1, 3 or 5 from the artefacts; "Security Negligence" is 1,
//!   "Technical Debt" (untyped state) is at most 3.
//!
//! When a criterion's only evidence is `Missing` (or there is none), every persona answers 1
//! and says plainly that the evidence is missing; the Chief Justice flags it.
//!
//! Statutes recognise which requirement a fact is about from the fact's id and goal (written
//! by the detectives), never from any judge's prose.

use super::JudgeRequest;
use crate::justice::facts::{self, Tally};
use crate::justice::is_orchestration_dimension;
use crate::model::{Evidence, Judge, JudicialOpinion, OpinionSource, Score};

const LIST_MAX: usize = 6;

/// Topics that identify the fan-out / parallelism requirements of graph orchestration.
const PARALLEL_TOPICS: &[&str] = &["fan_out", "fan-out", "fan out", "parallel", "linear"];
/// Topics that identify structured-output requirements.
const STRUCTURED_TOPICS: &[&str] = &[
    "structured",
    "schema",
    "pydantic",
    "with_structured_output",
    "bind_tools",
    "json",
];
/// Topics that identify persona-separation requirements.
const PERSONA_TOPICS: &[&str] = &["persona", "distinct", "prompt"];
/// Topics that identify typed-state requirements.
const TYPED_STATE_TOPICS: &[&str] = &["basemodel", "pydantic", "typeddict", "typed"];

/// The offline opinion of `req.persona` on `req.criterion_id`.
pub fn judge(req: &JudgeRequest) -> JudicialOpinion {
    let evidence = req.evidence();
    let tally = Tally::of(evidence);
    let (score, argument, cited) = if tally.only_missing() {
        missing_opinion(req.persona, &tally)
    } else {
        match req.persona {
            Judge::Prosecutor => prosecutor(req, &tally),
            Judge::Defense => defense(req, &tally),
            Judge::TechLead => tech_lead(req, &tally),
        }
    };
    JudicialOpinion {
        judge: req.persona,
        criterion_id: req.criterion_id.clone(),
        score: Score::clamped(score),
        argument,
        cited_evidence: dedup(cited),
        source: OpinionSource::Offline,
    }
}

fn dedup(ids: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(ids.len());
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn missing_opinion(persona: Judge, t: &Tally) -> (i64, String, Vec<String>) {
    let what = if t.missing.is_empty() {
        "no evidence at all was collected for this criterion".to_string()
    } else {
        let reasons: Vec<String> = t
            .missing
            .iter()
            .map(|e| {
                format!(
                    "{} ({}) [{}]",
                    facts::short(&e.rationale, 120),
                    e.location,
                    e.id
                )
            })
            .collect();
        format!(
            "the detectives could not collect it: {}",
            reasons.join("; ")
        )
    };
    let lens = match persona {
        Judge::Prosecutor => "Nothing can be verified, so nothing can be credited",
        Judge::Defense => "There is nothing I can credit without evidence",
        Judge::TechLead => "No artefact could be inspected",
    };
    (
        1,
        format!(
            "Evidence missing: {what}. {lens}; score 1 pending evidence, this criterion needs human review."
        ),
        facts::ids(&t.missing),
    )
}

fn requirement_summary(t: &Tally) -> String {
    let passed = t.passed();
    let mut s = format!("{} of {} requirements met", passed.len(), t.requirements());
    if !passed.is_empty() {
        s.push_str(&format!("; met: {}", facts::describe(&passed, LIST_MAX)));
    }
    if !t.unmet.is_empty() {
        s.push_str(&format!(
            "; not met: {}",
            facts::describe_located(&t.unmet, LIST_MAX)
        ));
    }
    s.push('.');
    s
}

fn adverse_summary(t: &Tally) -> String {
    let mut s = String::new();
    if !t.security.is_empty() {
        s.push_str(&format!(
            " Confirmed security finding: {}.",
            facts::describe_located(&t.security, LIST_MAX)
        ));
    }
    if !t.contradictions.is_empty() {
        s.push_str(&format!(
            " Contradicted by the repository: {}.",
            facts::describe_located(&t.contradictions, LIST_MAX)
        ));
    }
    if !t.missing.is_empty() {
        s.push_str(&format!(
            " Evidence missing: {}.",
            facts::describe_located(&t.missing, LIST_MAX)
        ));
    }
    s
}

fn unmet_about<'a>(t: &Tally<'a>, words: &[&str]) -> Vec<&'a Evidence> {
    t.unmet
        .iter()
        .copied()
        .filter(|e| facts::about(e, words))
        .collect()
}

fn met_about<'a>(t: &Tally<'a>, words: &[&str]) -> Vec<&'a Evidence> {
    t.met
        .iter()
        .copied()
        .filter(|e| facts::about(e, words))
        .collect()
}

fn prosecutor(req: &JudgeRequest, t: &Tally) -> (i64, String, Vec<String>) {
    let ratio = t.ratio().unwrap_or(0.0);
    let mut score = if t.failed().is_empty() {
        5
    } else if ratio >= 0.8 {
        4
    } else if ratio >= 0.6 {
        3
    } else if ratio >= 0.4 {
        2
    } else {
        1
    };
    let mut charges = Vec::new();
    let mut cited = Vec::new();
    if !t.security.is_empty() {
        score = 1;
        charges.push("Security Negligence: a confirmed security finding means score 1".to_string());
    }
    if !t.contradictions.is_empty() && score > 2 {
        score = 2;
        charges.push("a contradicted claim caps the score at 2".to_string());
    }
    if !t.missing.is_empty() && score > 2 {
        score = 2;
        charges.push("unverifiable evidence caps the score at 2".to_string());
    }
    if is_orchestration_dimension(req.dimension()) {
        let unmet = unmet_about(t, PARALLEL_TOPICS);
        if !unmet.is_empty()
            && met_about(t, &["fan_out", "fan-out", "fan out", "parallel"]).is_empty()
        {
            if score > 1 {
                score = 1;
            }
            charges.push(format!(
                "Orchestration Fraud (Statute of Orchestration): no parallel fan-out was found ({}), maximum score 1",
                facts::describe(&unmet, LIST_MAX)
            ));
            cited.extend(facts::ids(&unmet));
        }
    }
    if matches!(
        req.criterion_id.as_str(),
        "judicial_nuance" | "structured_output_enforcement"
    ) {
        let unmet = unmet_about(t, STRUCTURED_TOPICS);
        if !unmet.is_empty() {
            if score > 2 {
                score = 2;
            }
            charges.push(format!(
                "Hallucination Liability (Statute of Orchestration): judge output is not validated as structured data ({}), maximum score 2",
                facts::describe(&unmet, LIST_MAX)
            ));
            cited.extend(facts::ids(&unmet));
        }
    }
    cited.extend(facts::ids(&t.unmet));
    cited.extend(facts::ids(&t.security));
    cited.extend(facts::ids(&t.contradictions));
    cited.extend(facts::ids(&t.missing));
    if cited.is_empty() {
        cited.extend(facts::ids(&t.passed()));
    }
    let mut argument = format!("Strict reading: {}", requirement_summary(t));
    argument.push_str(&adverse_summary(t));
    if charges.is_empty() {
        if t.failed().is_empty() {
            argument.push_str(" I find no gap to charge.");
        } else {
            argument.push_str(" Every missing requirement counts against the defendant.");
        }
    } else {
        argument.push_str(&format!(" Charges: {}.", charges.join("; ")));
    }
    argument.push_str(&format!(" Score {score}."));
    (score, argument, cited)
}

fn defense(req: &JudgeRequest, t: &Tally) -> (i64, String, Vec<String>) {
    let ratio = t.ratio().unwrap_or(0.0);
    let passed = t.passed();
    let mut score = if passed.is_empty() {
        1
    } else {
        (1 + (4.0 * ratio).ceil() as i64).max(2)
    };
    let mut notes = Vec::new();
    let mut cited = facts::ids(&passed);
    // Statute of Effort: an iterative history speaks for the engineer on repository criteria.
    let on_repo = req
        .dimension()
        .map(|d| d.target_artifact == crate::rubric::TargetArtifact::GithubRepo)
        .unwrap_or(false);
    if on_repo && req.criterion_id != "git_forensic_analysis" && !passed.is_empty() {
        let history = Tally::of(req.pack.evidence_for("git_forensic_analysis"));
        let history_passed = history.passed();
        if 2 * history_passed.len() > history.requirements() {
            score += 1;
            notes.push(format!(
                "Statute of Effort: the git history shows iterative work ({} of {} history requirements met: {}), +1",
                history_passed.len(),
                history.requirements(),
                facts::describe(&history_passed, 3)
            ));
            cited.extend(facts::ids(&history_passed));
        }
    }
    // Statute of Effort, Role Separation: distinct personas earn partial credit on judicial
    // nuance even when the synthesis lacks rigor.
    if req.criterion_id == "judicial_nuance" && score < 3 {
        let personas = met_about(t, PERSONA_TOPICS);
        if !personas.is_empty() {
            score = 3;
            notes.push(format!(
                "Statute of Effort (Role Separation): the personas are distinct ({}), so partial credit 3",
                facts::describe(&personas, LIST_MAX)
            ));
        }
    }
    let mut ceiling = 5;
    if !t.security.is_empty() {
        ceiling = 3;
        notes.push("I cannot argue above 3 against a confirmed security finding".into());
    }
    if !t.contradictions.is_empty() {
        ceiling = ceiling.min(3);
        notes.push("I concede the contradiction, so at most 3".into());
    }
    if t.mostly_unmet() {
        ceiling = ceiling.min(3);
        notes.push("effort cannot replace most requirements being absent, so at most 3".into());
    }
    score = score.min(ceiling);
    cited.extend(facts::ids(&t.security));
    cited.extend(facts::ids(&t.contradictions));
    cited.extend(facts::ids(&t.missing));
    if cited.is_empty() {
        cited.extend(facts::ids(&t.unmet));
    }
    let mut argument = if passed.is_empty() {
        format!(
            "Generous reading, but nothing is present to credit: {}",
            requirement_summary(t)
        )
    } else {
        format!(
            "Generous reading: credit what exists. {}",
            requirement_summary(t)
        )
    };
    argument.push_str(&adverse_summary(t));
    if !notes.is_empty() {
        argument.push_str(&format!(" {}.", notes.join("; ")));
    }
    argument.push_str(&format!(" Score {score}."));
    (score, argument, cited)
}

fn tech_lead(req: &JudgeRequest, t: &Tally) -> (i64, String, Vec<String>) {
    let ratio = t.ratio().unwrap_or(0.0);
    let mut score = if ratio >= 0.8 {
        5
    } else if ratio >= 0.4 {
        3
    } else {
        1
    };
    let mut rulings = Vec::new();
    if !t.security.is_empty() {
        score = 1;
        rulings.push(
            "Security Negligence (Statute of Engineering): a confirmed security finding overrides all effort points, score 1"
                .to_string(),
        );
    }
    if (!t.contradictions.is_empty() || !t.missing.is_empty()) && score > 3 {
        score = 3;
        rulings.push("the artefacts cannot all be verified, so at most 3".into());
    }
    if req.criterion_id == "state_management_rigor" {
        let untyped = unmet_about(t, TYPED_STATE_TOPICS);
        if !untyped.is_empty() && score > 3 {
            score = 3;
            rulings.push(format!(
                "Technical Debt (Pydantic Rigor vs. Dict Soups): state is not typed ({}), score 3",
                facts::describe(&untyped, LIST_MAX)
            ));
        } else if !untyped.is_empty() {
            rulings.push(format!(
                "Technical Debt noted: state is not typed ({})",
                facts::describe(&untyped, LIST_MAX)
            ));
        }
    }
    let verdict = match score {
        5 => "it works and is maintainable",
        4 => "it works with minor gaps",
        3 => "it works but is brittle",
        2 => "it barely works",
        _ => "it does not meet the standard",
    };
    let mut cited = facts::ids(&t.met);
    cited.extend(facts::ids(&t.unmet));
    cited.extend(facts::ids(&t.security));
    cited.extend(facts::ids(&t.contradictions));
    cited.extend(facts::ids(&t.missing));
    cited.extend(facts::ids(&t.cleared));
    let mut argument = format!("Looking at the artefacts: {}", requirement_summary(t));
    argument.push_str(&adverse_summary(t));
    if !rulings.is_empty() {
        argument.push_str(&format!(" {}.", rulings.join("; ")));
    }
    argument.push_str(&format!(" Pragmatically {verdict}: score {score}."));
    (score, argument, cited)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judges::EvidencePack;
    use crate::model::{Confidence, Detective, EvidenceKind};
    use crate::rubric::{EMBEDDED_RUBRIC, Rubric};
    use std::sync::Arc;

    fn fact(id: &str, goal: &str, found: bool) -> Evidence {
        Evidence::fact(
            id,
            Detective::RepoInvestigator,
            goal,
            found,
            format!("src/graph.py:{}", id.len()),
            "read from the AST",
            Confidence::CERTAIN,
        )
    }

    fn request(
        persona: Judge,
        criterion: &str,
        evidence: Vec<Evidence>,
        extra: Vec<(&str, Vec<Evidence>)>,
    ) -> JudgeRequest {
        let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
        let mut pack = EvidencePack::default();
        pack.evidences.insert(criterion.to_string(), evidence);
        for (k, v) in extra {
            pack.evidences.insert(k.to_string(), v);
        }
        JudgeRequest {
            persona,
            criterion_id: criterion.to_string(),
            rubric: Arc::new(rubric),
            pack: Arc::new(pack),
        }
    }

    fn graph_facts(met: usize, total: usize) -> Vec<Evidence> {
        let goals = [
            "detectives fan out",
            "evidence aggregation fan-in",
            "judges fan out",
            "judges fan in",
            "conditional edges for errors",
        ];
        (0..total)
            .map(|i| fact(&format!("repo.graph.{i}"), goals[i % goals.len()], i < met))
            .collect()
    }

    fn score(req: &JudgeRequest) -> u8 {
        judge(req).score.get()
    }

    #[test]
    fn personas_order_strict_pragmatic_generous_on_partial_evidence() {
        // 3 of 5 requirements met (the unmet ones are judges fan-in and conditional edges).
        let ev = graph_facts(3, 5);
        let p = score(&request(
            Judge::Prosecutor,
            "graph_orchestration",
            ev.clone(),
            vec![],
        ));
        let t = score(&request(
            Judge::TechLead,
            "graph_orchestration",
            ev.clone(),
            vec![],
        ));
        let d = score(&request(Judge::Defense, "graph_orchestration", ev, vec![]));
        assert_eq!((p, t, d), (3, 3, 4));
    }

    #[test]
    fn arguments_name_the_facts_and_cite_ids() {
        let ev = graph_facts(3, 5);
        for persona in Judge::ALL {
            let o = judge(&request(persona, "graph_orchestration", ev.clone(), vec![]));
            assert!(o.argument.len() >= 50, "{}", o.argument);
            assert!(
                o.argument.contains("3 of 5 requirements met"),
                "{}",
                o.argument
            );
            assert!(!o.cited_evidence.is_empty());
            for id in &o.cited_evidence {
                assert!(ev.iter().any(|e| &e.id == id), "{id} is not evidence");
            }
            assert_eq!(o.source, OpinionSource::Offline);
        }
        let p = judge(&request(
            Judge::Prosecutor,
            "graph_orchestration",
            ev,
            vec![],
        ));
        assert!(p.argument.contains("repo.graph.4"), "{}", p.argument);
        assert!(p.argument.contains("src/graph.py"), "{}", p.argument);
    }

    #[test]
    fn prosecutor_charges_orchestration_fraud_for_a_linear_graph() {
        let ev = vec![
            fact("repo.graph.builder", "StateGraph builder found", true),
            fact("repo.graph.fan_out.detectives", "detectives fan out", false),
            fact("repo.graph.fan_out.judges", "judges fan out", false),
            fact("repo.graph.typed", "nodes are typed", true),
            fact("repo.graph.errors", "conditional edges for errors", true),
        ];
        let o = judge(&request(
            Judge::Prosecutor,
            "graph_orchestration",
            ev.clone(),
            vec![],
        ));
        assert_eq!(o.score.get(), 1);
        assert!(o.argument.contains("Orchestration Fraud"), "{}", o.argument);
        // the same facts on another criterion carry no orchestration charge
        let o = judge(&request(Judge::Prosecutor, "judicial_nuance", ev, vec![]));
        assert!(!o.argument.contains("Orchestration Fraud"));
    }

    #[test]
    fn prosecutor_charges_hallucination_liability_for_free_text_judges() {
        let ev = vec![
            fact("repo.judges.personas", "three distinct personas", true),
            fact("repo.judges.parallel", "judges run in parallel", true),
            fact("repo.judges.distinct", "prompts share less than half", true),
            fact(
                "repo.judges.schema",
                "structured output bound to a schema",
                false,
            ),
        ];
        let o = judge(&request(Judge::Prosecutor, "judicial_nuance", ev, vec![]));
        assert_eq!(o.score.get(), 2);
        assert!(
            o.argument.contains("Hallucination Liability"),
            "{}",
            o.argument
        );
    }

    #[test]
    fn security_finding_pushes_prosecutor_and_tech_lead_to_1_and_caps_defense() {
        let mut ev = vec![
            fact("repo.tools.tempdir", "clone in a temporary directory", true),
            fact(
                "repo.tools.subprocess",
                "subprocess with checked return codes",
                true,
            ),
        ];
        ev.push(
            fact("repo.tools.os_system", "os.system with URL", true)
                .with_kind(EvidenceKind::SecurityFinding),
        );
        let p = judge(&request(
            Judge::Prosecutor,
            "safe_tool_engineering",
            ev.clone(),
            vec![],
        ));
        let t = judge(&request(
            Judge::TechLead,
            "safe_tool_engineering",
            ev.clone(),
            vec![],
        ));
        let d = judge(&request(
            Judge::Defense,
            "safe_tool_engineering",
            ev,
            vec![],
        ));
        assert_eq!((p.score.get(), t.score.get(), d.score.get()), (1, 1, 3));
        assert!(
            p.cited_evidence
                .contains(&"repo.tools.os_system".to_string())
        );
        assert!(t.argument.contains("Security Negligence"), "{}", t.argument);
    }

    #[test]
    fn contradiction_caps_prosecutor_at_2() {
        let ev = vec![
            fact("doc.paths.verified", "cited paths exist", true),
            fact("doc.paths.claims", "feature claims match code", true),
            fact(
                "doc.paths.hallucinated.0",
                "src/tools/ast_parser.py exists",
                true,
            )
            .with_kind(EvidenceKind::Contradiction),
        ];
        let p = judge(&request(
            Judge::Prosecutor,
            "report_accuracy",
            ev.clone(),
            vec![],
        ));
        let d = judge(&request(Judge::Defense, "report_accuracy", ev, vec![]));
        assert_eq!(p.score.get(), 2);
        assert_eq!(d.score.get(), 3);
        assert!(p.argument.contains("Contradicted"), "{}", p.argument);
    }

    #[test]
    fn tech_lead_rules_technical_debt_for_untyped_state() {
        let ev = vec![
            fact(
                "repo.state.reducers",
                "operator.add reducer on opinions",
                true,
            ),
            fact("repo.state.ior", "operator.ior reducer on evidence", true),
            fact(
                "repo.state.collections",
                "state holds evidence and opinions",
                true,
            ),
            fact(
                "repo.state.models",
                "Evidence is a Pydantic BaseModel",
                true,
            ),
            fact("repo.state.typed", "AgentState is a TypedDict", false),
        ];
        let o = judge(&request(
            Judge::TechLead,
            "state_management_rigor",
            ev,
            vec![],
        ));
        assert_eq!(o.score.get(), 3);
        assert!(o.argument.contains("Technical Debt"), "{}", o.argument);
    }

    #[test]
    fn tech_lead_uses_a_1_3_5_scale() {
        for (met, expected) in [(0, 1), (1, 1), (2, 3), (3, 3), (4, 5), (5, 5)] {
            let o = judge(&request(
                Judge::TechLead,
                "chief_justice_synthesis",
                graph_facts(met, 5),
                vec![],
            ));
            assert_eq!(o.score.get(), expected, "{met} of 5");
        }
    }

    #[test]
    fn defense_rewards_an_iterative_history() {
        let history = vec![
            fact("repo.git.count", "more than 3 commits", true),
            fact("repo.git.progression", "setup -> tools -> graph", true),
            fact("repo.git.spread", "commits spread over time", true),
        ];
        let ev = graph_facts(3, 5);
        let without = score(&request(
            Judge::Defense,
            "graph_orchestration",
            ev.clone(),
            vec![],
        ));
        let with = judge(&request(
            Judge::Defense,
            "graph_orchestration",
            ev,
            vec![("git_forensic_analysis", history)],
        ));
        assert_eq!(with.score.get(), without + 1);
        assert!(
            with.argument.contains("Statute of Effort"),
            "{}",
            with.argument
        );
        assert!(with.cited_evidence.contains(&"repo.git.count".to_string()));
    }

    #[test]
    fn defense_cannot_argue_high_when_most_requirements_are_absent() {
        let history = vec![
            fact("repo.git.count", "more than 3 commits", true),
            fact("repo.git.progression", "setup -> tools -> graph", true),
        ];
        let o = judge(&request(
            Judge::Defense,
            "chief_justice_synthesis",
            graph_facts(2, 5),
            vec![("git_forensic_analysis", history)],
        ));
        assert!(o.score.get() <= 3, "{}", o.argument);
    }

    #[test]
    fn only_missing_evidence_gets_score_1_saying_so_from_all_three() {
        let ev = vec![Evidence::missing(
            "doc.missing",
            Detective::DocAnalyst,
            "read the report",
            "report.pdf",
            "the PDF could not be opened: file is empty",
        )];
        for persona in Judge::ALL {
            let o = judge(&request(persona, "theoretical_depth", ev.clone(), vec![]));
            assert_eq!(o.score.get(), 1);
            assert!(o.argument.starts_with("Evidence missing"), "{}", o.argument);
            assert!(o.argument.contains("file is empty"), "{}", o.argument);
            assert_eq!(o.cited_evidence, vec!["doc.missing".to_string()]);
        }
        let o = judge(&request(
            Judge::Defense,
            "theoretical_depth",
            vec![],
            vec![],
        ));
        assert_eq!(o.score.get(), 1);
        assert!(o.argument.contains("no evidence at all"), "{}", o.argument);
    }

    #[test]
    fn defense_claims_role_separation_on_judicial_nuance() {
        let ev = vec![
            fact("repo.judges.personas", "three distinct personas", true),
            fact("repo.judges.parallel", "judges run in parallel", false),
            fact(
                "repo.judges.schema",
                "structured output bound to a schema",
                false,
            ),
            fact("repo.justice.rules", "deterministic synthesis rules", false),
        ];
        let o = judge(&request(
            Judge::Defense,
            "judicial_nuance",
            ev.clone(),
            vec![],
        ));
        assert_eq!(o.score.get(), 3, "{}", o.argument);
        assert!(o.argument.contains("Role Separation"), "{}", o.argument);
        let mut no_personas = ev;
        no_personas[0].found = false;
        let o = judge(&request(
            Judge::Defense,
            "judicial_nuance",
            no_personas,
            vec![],
        ));
        assert_eq!(o.score.get(), 1, "{}", o.argument);
    }

    #[test]
    fn clean_checks_count_as_requirements_met() {
        let ev = vec![
            fact("repo.tools.tempdir", "clone in a temporary directory", true),
            fact("repo.tools.no_os_system", "no os.system call", false)
                .with_kind(EvidenceKind::SecurityFinding),
        ];
        for persona in Judge::ALL {
            let o = judge(&request(
                persona,
                "safe_tool_engineering",
                ev.clone(),
                vec![],
            ));
            assert_eq!(o.score.get(), 5, "{}", o.argument);
            assert!(
                o.argument.contains("2 of 2 requirements met"),
                "{}",
                o.argument
            );
        }
    }

    #[test]
    fn hallucinated_paths_count_against_verified_ones() {
        let mut ev: Vec<Evidence> = (0..3)
            .map(|i| fact(&format!("doc.path.verified.{i}"), "path exists", true))
            .collect();
        ev.push(
            fact(
                "doc.path.hallucinated.0",
                "src/tools/ast_parser.py exists",
                true,
            )
            .with_kind(EvidenceKind::Contradiction),
        );
        let o = judge(&request(Judge::TechLead, "report_accuracy", ev, vec![]));
        assert!(
            o.argument.contains("3 of 4 requirements met"),
            "{}",
            o.argument
        );
        assert_eq!(o.score.get(), 3);
    }

    #[test]
    fn judges_are_deterministic() {
        let ev = graph_facts(2, 5);
        for persona in Judge::ALL {
            let a = judge(&request(persona, "graph_orchestration", ev.clone(), vec![]));
            let b = judge(&request(persona, "graph_orchestration", ev.clone(), vec![]));
            assert_eq!(a, b);
        }
    }

    #[test]
    fn all_requirements_met_gives_top_marks() {
        let ev = graph_facts(5, 5);
        for persona in Judge::ALL {
            assert_eq!(
                score(&request(persona, "graph_orchestration", ev.clone(), vec![])),
                5
            );
        }
    }
}
