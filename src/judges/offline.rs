//! Deterministic offline judges: score from the criterion's evidence alone, so the audit runs
//! with no API key. Same request → same opinion.
//!
//! A criterion whose facts belong to a family with a level table (git history, graph
//! orchestration, state, safe tools, structured output, judicial nuance, Chief Justice,
//! theoretical depth, report cross-reference; see [`levels`], routed by the facts, never by a
//! rubric id) is read through that table, and the personas differ by rules:
//! - **Tech Lead** (pragmatic): the table's level; notes "Security Negligence" and
//!   "Technical Debt" where they apply.
//! - **Prosecutor** (strict): charges each gap the facts show, one point below the table from
//!   level 3 up; names "Orchestration Fraud" (linear graph) and "Hallucination Liability"
//!   (free-text judges with no schema at all) where the table lands on them.
//! - **Defense** (generous): credits each strength ("Statute of Effort"), one point above the
//!   table, never above the cap a run-time defect or a statute sets.
//!
//! Any other criterion gets the generic reading: the share of requirements met, strict for the
//! Prosecutor, generous for the Defense, 1/3/5 for the Tech Lead; a confirmed security finding
//! or a contradiction caps it.
//!
//! When a criterion's only evidence is evidence the grader could not collect (`Missing`), the
//! criterion is not assessed and no judge is asked; if one is asked anyway, every persona
//! answers 1 and says the evidence is missing.

use super::JudgeRequest;
use super::levels::{self, Family, Level};
use crate::model::{Judge, JudicialOpinion, OpinionSource, Score};
use crate::tally::{self as facts, Tally};

/// The offline opinion of `req.persona` on `req.criterion_id`.
pub fn judge(req: &JudgeRequest) -> JudicialOpinion {
    let evidence = req.evidence();
    let tally = Tally::of(evidence);
    let (score, argument, cited) = if tally.only_missing() {
        missing_opinion(req.persona, &tally)
    } else if let Some(level) = levels::assess(evidence) {
        from_level(req.persona, &level, &tally)
    } else {
        match req.persona {
            Judge::Prosecutor => prosecutor(&tally),
            Judge::Defense => defense(&tally),
            Judge::TechLead => tech_lead(&tally),
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

/// One persona's reading of a level table (see [`levels`]): the Tech Lead rules the table's
/// level; the Prosecutor charges the gaps the facts show (one point lower, from level 3 up);
/// the Defense credits the strengths (one point higher, never above the cap a run-time defect
/// or a statute sets).
///
/// Each persona says only what its own lens adds, in a few sentences: the Tech Lead states the
/// table's level and why, the Prosecutor the gaps it charges, the Defense the strengths it
/// credits (the shared table row is not repeated three times).
fn from_level(persona: Judge, l: &Level, t: &Tally) -> (i64, String, Vec<String>) {
    let (score, a) = match persona {
        Judge::TechLead => tech_lead_on_level(l, t),
        Judge::Prosecutor => prosecutor_on_level(l),
        Judge::Defense => defense_on_level(l),
    };
    let mut cited = l.cited.clone();
    if cited.is_empty() {
        cited = facts::ids(&t.passed());
    }
    (score, tidy(&a.join(" ")), cited)
}

/// The Tech Lead on a level table: the table's level and why (its row, its cap), the statutes
/// that apply, and a verdict on how well it works. (score, sentences)
fn tech_lead_on_level(l: &Level, t: &Tally) -> (i64, Vec<String>) {
    let mut a: Vec<String> = Vec::new();
    a.push(if l.absent {
        format!("Level {}: {}.", l.level, l.row)
    } else {
        format!(
            "Level {} of the {} table: {}.",
            l.level,
            l.family.name(),
            l.row
        )
    });
    if let Some((c, why)) = &l.cap {
        a.push(format!("Capped at {c}: {}.", facts::short(why, 120)));
    }
    if !t.security.is_empty() {
        a.push("Security Negligence (Statute of Engineering): a confirmed security finding overrides effort.".into());
    }
    // only the level-2 row says the reducers are missing
    if l.family == Family::State && l.level <= 2 {
        a.push("Technical Debt (Pydantic Rigor vs. Dict Soups): the state does not keep parallel writes safe.".into());
    }
    a.push(
        match l.level {
            5 => "It works and is maintainable.",
            // no gap the facts show: "minor gaps" would be a claim without a fact
            4 if l.gaps.is_empty() => "It works.",
            4 => "It works, with minor gaps.",
            3 => "It works but is brittle.",
            2 => "It barely works.",
            _ => "It does not meet the standard.",
        }
        .into(),
    );
    (i64::from(l.level), a)
}

/// The Prosecutor on a level table: the statutes the table lands on, and one point below the
/// table's level for the gaps the facts show, from level 3 up. (score, sentences)
fn prosecutor_on_level(l: &Level) -> (i64, Vec<String>) {
    let level = i64::from(l.level);
    let mut a: Vec<String> = Vec::new();
    let charge = level >= 3 && !l.gaps.is_empty();
    if l.family == Family::Graph && l.level == 1 {
        a.push(
            "Orchestration Fraud (Statute of Orchestration): no parallel fan-out, maximum score 1."
                .into(),
        );
    }
    // the statute's charge: free text with no schema at all (JSON cut out of the
    // text may still be validated by hand, which the table does not read)
    if l.family == Family::Structured && l.level <= 1 {
        a.push("Hallucination Liability (Statute of Orchestration): judge output is not validated as structured data, maximum score 2.".into());
    }
    if charge {
        a.push(format!(
            "One point below the table's level {} for {}: {}.",
            l.level,
            crate::words::count(l.gaps.len(), "gap", "gaps"),
            listed(&l.gaps, 2)
        ));
    } else if l.gaps.is_empty() {
        a.push(format!(
            "No gap to charge: I hold it to the table's level {}.",
            l.level
        ));
    } else {
        a.push(format!(
            "Level {} already counts the gaps ({}); I charge nothing more.",
            l.level,
            listed(&l.gaps, 1)
        ));
    }
    (if charge { level - 1 } else { level }, a)
}

/// The Defense on a level table: one point above the table's level for the strengths the
/// facts show, never above the cap (nor 5). (score, sentences)
fn defense_on_level(l: &Level) -> (i64, Vec<String>) {
    let level = i64::from(l.level);
    let cap = l.cap.as_ref().map(|(c, _)| i64::from(*c)).unwrap_or(5);
    let mut a: Vec<String> = Vec::new();
    let credit = !l.credits.is_empty() && level < cap.min(5);
    if credit {
        a.push(format!(
            "Statute of Effort: one point above the table's level {} for what exists: {}.",
            l.level,
            listed(&l.credits, 1)
        ));
    } else if level >= cap && l.cap.is_some() {
        let why = l.cap.as_ref().map(|(_, w)| w.as_str()).unwrap_or_default();
        a.push(format!(
            "I cannot argue above the cap of {cap} the facts set ({}).",
            facts::short(why, 100)
        ));
    } else if l.credits.is_empty() {
        a.push(format!(
            "Nothing is present that I could credit above the table's level {}.",
            l.level
        ));
    } else {
        a.push(format!(
            "Level {} is already the top: nothing more to credit.",
            l.level
        ));
    }
    (if credit { level + 1 } else { level }, a)
}

/// A sentence that ends on a shortened item ends once: "on…." → "on…".
fn tidy(text: &str) -> String {
    text.replace("….", "…")
}

/// The first `n` items (each at most 64 characters, cut at a word) joined with "; ", and how
/// many more there are.
fn listed(items: &[String], n: usize) -> String {
    let mut s = items
        .iter()
        .take(n)
        .map(|i| facts::short(i, 64))
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > n {
        s.push_str(&format!("; and {} more", items.len() - n));
    }
    s
}

fn requirement_count(t: &Tally) -> String {
    format!(
        "{} of {} met",
        t.passed().len(),
        crate::words::count(t.requirements(), "requirement", "requirements")
    )
}

/// Up to `max` facts in plain words (no ids: the opinion cites them), then "and N more";
/// `located` adds where each was found (for the gaps the Prosecutor charges).
fn said(list: &[&crate::model::Evidence], max: usize, located: bool) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(max)
        .map(|e| {
            let text = facts::short(&facts::fact_text(e), 100);
            if located {
                format!("{text} ({})", e.location)
            } else {
                text
            }
        })
        .collect();
    if list.len() > max {
        parts.push(format!("and {} more", list.len() - max));
    }
    parts.join("; ")
}

// ---- Generic reading: facts of no family with a level table (e.g. a custom rubric's
// criterion the detectives answer with one plain fact). The share of requirements met is the
// table; the Tech Lead states it, the Prosecutor names what is missing, the Defense what is
// there.

fn prosecutor(t: &Tally) -> (i64, String, Vec<String>) {
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
    let mut a: Vec<String> = Vec::new();
    if !t.unmet.is_empty() {
        a.push(format!(
            "Each missing requirement counts against it: {}.",
            said(&t.unmet, 3, true)
        ));
    }
    if !t.security.is_empty() {
        score = 1;
        a.push(format!(
            "Security Negligence: {} means score 1.",
            said(&t.security, 2, true)
        ));
    }
    if !t.contradictions.is_empty() && score > 2 {
        score = 2;
        a.push(format!(
            "The code contradicts the report ({}), which caps it at 2.",
            said(&t.contradictions, 2, true)
        ));
    }
    if a.is_empty() {
        a.push("Every requirement is met: I find no gap to charge.".into());
    }
    let mut cited = facts::ids(&t.unmet);
    cited.extend(facts::ids(&t.security));
    cited.extend(facts::ids(&t.contradictions));
    if cited.is_empty() {
        cited.extend(facts::ids(&t.passed()));
    }
    (score, tidy(&a.join(" ")), cited)
}

fn defense(t: &Tally) -> (i64, String, Vec<String>) {
    let ratio = t.ratio().unwrap_or(0.0);
    let passed = t.passed();
    let mut score = if passed.is_empty() {
        1
    } else {
        (1 + (4.0 * ratio).ceil() as i64).max(2)
    };
    let mut notes = Vec::new();
    let mut cited = facts::ids(&passed);
    let mut ceiling = 5;
    if !t.security.is_empty() {
        ceiling = 3;
        notes.push("I cannot argue above 3 against a confirmed security finding".to_string());
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
    if cited.is_empty() {
        cited.extend(facts::ids(&t.unmet));
    }
    let mut a = if passed.is_empty() {
        "Nothing is present that I could credit.".to_string()
    } else {
        format!("Credit for what exists: {}.", said(&passed, 3, false))
    };
    if !notes.is_empty() {
        a.push_str(&format!(" {}.", notes.join("; ")));
    }
    (score, tidy(&a), cited)
}

fn tech_lead(t: &Tally) -> (i64, String, Vec<String>) {
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
            "Security Negligence (Statute of Engineering): a confirmed security finding overrides all effort points"
                .to_string(),
        );
    }
    if !t.contradictions.is_empty() && score > 3 {
        score = 3;
        rulings.push("the report and the code disagree, so at most 3".into());
    }
    let verdict = match score {
        5 => "it works and is maintainable",
        4 => "it works, with minor gaps",
        3 => "it works but is brittle",
        2 => "it barely works",
        _ => "it does not meet the standard",
    };
    let mut cited = facts::ids(&t.met);
    cited.extend(facts::ids(&t.unmet));
    cited.extend(facts::ids(&t.security));
    cited.extend(facts::ids(&t.contradictions));
    cited.extend(facts::ids(&t.cleared));
    let mut a = format!("{}.", requirement_count(t));
    if !rulings.is_empty() {
        a.push_str(&format!(" {}.", rulings.join("; ")));
    }
    a.push_str(&format!(" Pragmatically {verdict}."));
    (score, a, cited)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judges::EvidencePack;
    use crate::model::{Confidence, Detective, Evidence, EvidenceKind};
    use crate::rubric::{EMBEDDED_RUBRIC, Rubric};
    use std::sync::Arc;

    fn fact(id: &str, goal: &str, found: bool) -> Evidence {
        Evidence::fact(
            id,
            Detective::RepoInvestigator,
            goal,
            found,
            format!("src/graph.py:{}", id.len()),
            format!("read from the AST: {id}"),
            Confidence::CERTAIN,
        )
    }

    fn request(persona: Judge, criterion: &str, evidence: Vec<Evidence>) -> JudgeRequest {
        let rubric = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
        let mut pack = EvidencePack::default();
        pack.evidences.insert(criterion.to_string(), evidence);
        JudgeRequest {
            persona,
            criterion_id: criterion.to_string(),
            rubric: Arc::new(rubric),
            pack: Arc::new(pack),
        }
    }

    /// Facts of no family: the generic reading applies.
    fn generic(met: usize, total: usize) -> Vec<Evidence> {
        (0..total)
            .map(|i| {
                fact(
                    &format!("custom.req.{i}"),
                    &format!("requirement {i}"),
                    i < met,
                )
            })
            .collect()
    }

    fn scores(criterion: &str, ev: &[Evidence]) -> (u8, u8, u8) {
        let s = |p| judge(&request(p, criterion, ev.to_vec())).score.get();
        (s(Judge::Prosecutor), s(Judge::Defense), s(Judge::TechLead))
    }

    fn graph(unmet: &[&str], extra: Vec<Evidence>) -> Vec<Evidence> {
        let mut v: Vec<Evidence> = [
            "definition",
            "detectives_fan_out",
            "evidence_fan_in",
            "judges_fan_out",
            "judges_fan_in",
            "error_edges",
            "not_linear",
        ]
        .iter()
        .map(|n| match *n {
            "not_linear" => fact(
                &format!("repo.graph.{n}"),
                "graph wired",
                !unmet.contains(n),
            ),
            _ => Evidence::stated(
                "repo.graph",
                Detective::RepoInvestigator,
                "graph wired",
                crate::model::fact::Fact::Graph(crate::model::fact::graph::example(
                    n,
                    !unmet.contains(n),
                )),
                "https://example.org/r",
                Confidence::CERTAIN,
            ),
        })
        .collect();
        v.extend(extra);
        v
    }

    #[test]
    fn personas_read_the_level_table_by_their_own_rules() {
        // level 3: both layers, no error route
        let ev = graph(&["error_edges"], vec![]);
        assert_eq!(scores("graph_orchestration", &ev), (2, 4, 3));
        let t = judge(&request(Judge::TechLead, "graph_orchestration", ev.clone()));
        assert!(
            t.argument
                .contains("Level 3 of the graph orchestration table"),
            "{}",
            t.argument
        );
        let p = judge(&request(
            Judge::Prosecutor,
            "graph_orchestration",
            ev.clone(),
        ));
        // the gap it charges, in words (the id is cited, not written into the text)
        assert!(
            p.argument.contains("One point below")
                && p.argument
                    .contains("no add_conditional_edges call in the graph"),
            "{}",
            p.argument
        );
        assert!(
            p.cited_evidence
                .contains(&"repo.graph.error_edges".to_string())
        );
        let d = judge(&request(Judge::Defense, "graph_orchestration", ev));
        assert!(d.argument.contains("Statute of Effort"), "{}", d.argument);
        // each lens says what it adds: only the Tech Lead states the table's row
        assert!(!p.argument.contains(&t.argument), "{}", p.argument);
        let row = t.argument.split(": ").nth(1).unwrap_or_default();
        assert!(!row.is_empty());
        for other in [&p.argument, &d.argument] {
            assert!(!other.contains(row), "the table row repeated: {other}");
            assert!(other.len() < 400, "a few sentences: {other}");
        }
    }

    #[test]
    fn the_defense_cannot_argue_above_a_run_time_defect_cap() {
        let ev = graph(
            &[],
            vec![fact(
                "repo.graph.defect.unbounded_loop.0",
                "graph runs as wired",
                false,
            )],
        );
        let (p, d, t) = scores("graph_orchestration", &ev);
        assert_eq!((p, d, t), (2, 2, 2));
        let d = judge(&request(Judge::Defense, "graph_orchestration", ev));
        assert!(d.argument.contains("cap of 2"), "{}", d.argument);
    }

    #[test]
    fn statutes_are_named_where_the_table_lands_on_them() {
        let linear = graph(
            &[
                "detectives_fan_out",
                "evidence_fan_in",
                "judges_fan_out",
                "judges_fan_in",
                "not_linear",
            ],
            vec![],
        );
        let p = judge(&request(Judge::Prosecutor, "graph_orchestration", linear));
        assert_eq!(p.score.get(), 1);
        assert!(p.argument.contains("Orchestration Fraud"), "{}", p.argument);
        use crate::model::fact::{Call, Fact, Site, StructuredFact};
        let typed = |x: StructuredFact| {
            Evidence::stated(
                "repo.structured_output",
                Detective::RepoInvestigator,
                "bound",
                Fact::Structured(x),
                "https://example.org/r",
                Confidence::CERTAIN,
            )
        };
        // JSON cut out of free text
        let free_text = vec![
            typed(StructuredFact::Binding {
                bound: vec![],
                parsers: vec![],
                json_text: vec![Call::new(Site::new("src/judges.py", 9), "json.loads")],
                files: 3,
            }),
            typed(StructuredFact::Retry { calls: vec![] }),
        ];
        let p = judge(&request(
            Judge::Prosecutor,
            "structured_output_enforcement",
            free_text,
        ));
        assert_eq!(p.score.get(), 2);
        // JSON cut out of the text may be validated by hand: no charge of unvalidated output
        assert!(
            !p.argument.contains("Hallucination Liability"),
            "{}",
            p.argument
        );
        // free text with no schema at all: charged
        let no_schema = vec![
            typed(StructuredFact::Binding {
                bound: vec![],
                parsers: vec![],
                json_text: vec![],
                files: 3,
            }),
            typed(StructuredFact::Retry { calls: vec![] }),
        ];
        let p = judge(&request(
            Judge::Prosecutor,
            "structured_output_enforcement",
            no_schema,
        ));
        assert_eq!(p.score.get(), 1);
        assert!(
            p.argument.contains("Hallucination Liability"),
            "{}",
            p.argument
        );
        let state = |n: &str, holds: bool| {
            Evidence::stated(
                "repo.state",
                Detective::RepoInvestigator,
                "typed state",
                Fact::State(crate::model::fact::state::example(n, holds)),
                "https://example.org/r",
                Confidence::CERTAIN,
            )
        };
        let untyped = vec![
            state("definition", true),
            state("evidence_model", false),
            state("opinion_model", false),
            state("reducer_add", false),
            state("reducer_ior", false),
        ];
        let t = judge(&request(Judge::TechLead, "state_management_rigor", untyped));
        assert_eq!(t.score.get(), 2);
        assert!(t.argument.contains("Technical Debt"), "{}", t.argument);
    }

    #[test]
    fn an_absent_artifact_is_1_from_every_persona() {
        let ev = vec![fact(
            "pdf.absent.theoretical_depth",
            "a readable PDF report",
            false,
        )];
        assert_eq!(scores("theoretical_depth", &ev), (1, 1, 1));
        // no table was read: none is named (the evidence cannot tell which one it would be)
        let t = judge(&request(Judge::TechLead, "theoretical_depth", ev)).argument;
        assert!(
            t.starts_with("Level 1: the submission does not provide") && !t.contains(" table:"),
            "{t}"
        );
    }

    #[test]
    fn generic_reading_orders_strict_pragmatic_generous() {
        let ev = generic(3, 5);
        assert_eq!(scores("graph_orchestration", &ev), (3, 4, 3));
        let said = |p| judge(&request(p, "graph_orchestration", ev.clone())).argument;
        let (p, d, t) = (
            said(Judge::Prosecutor),
            said(Judge::Defense),
            said(Judge::TechLead),
        );
        assert!(t.contains("3 of 5 requirements met"), "{t}");
        // the Prosecutor names what is missing, the Defense what is there
        assert!(
            p.contains("custom.req.3") && !p.contains("custom.req.0"),
            "{p}"
        );
        assert!(
            d.contains("custom.req.0") && !d.contains("custom.req.3"),
            "{d}"
        );
        for persona in Judge::ALL {
            let o = judge(&request(persona, "graph_orchestration", ev.clone()));
            assert!(!o.cited_evidence.is_empty());
            for id in &o.cited_evidence {
                assert!(ev.iter().any(|e| &e.id == id), "{id} is not evidence");
            }
            assert_eq!(o.source, OpinionSource::Offline);
        }
        for (met, expected) in [(0, 1), (1, 1), (2, 3), (3, 3), (4, 5), (5, 5)] {
            let o = judge(&request(Judge::TechLead, "x", generic(met, 5)));
            assert_eq!(o.score.get(), expected, "{met} of 5");
        }
        assert_eq!(scores("x", &generic(5, 5)), (5, 5, 5));
    }

    #[test]
    fn security_finding_pushes_prosecutor_and_tech_lead_to_1_and_caps_defense() {
        let mut ev = generic(2, 2);
        ev.push(
            fact("custom.os_system", "os.system with URL", true)
                .with_kind(EvidenceKind::SecurityFinding),
        );
        assert_eq!(scores("x", &ev), (1, 3, 1));
        use crate::model::fact::{self as fact, Call, Fact, SafetyFact, Site};
        let typed = |x: SafetyFact| {
            Evidence::stated(
                "repo.security",
                Detective::RepoInvestigator,
                "sandbox",
                Fact::Safety(x),
                "https://example.org/r",
                Confidence::CERTAIN,
            )
        };
        let clone = fact::Clone {
            call: Call::new(Site::new("src/tools.py", 4), "subprocess.run"),
            sandbox: Some(Site::new("src/tools.py", 3)),
            list_args: true,
            via: None,
            handled: Some(Site::new("src/tools.py", 4)),
        };
        let tools = vec![
            typed(SafetyFact::Sandbox {
                clones: vec![clone.clone()],
                files: 2,
            }),
            typed(SafetyFact::CloneErrors {
                clones: vec![clone],
            }),
            typed(SafetyFact::Finding {
                n: 0,
                at: Site::new("src/tools.py", 9),
                kind: "os_system".into(),
                detail: "os.system runs its argument through the shell".into(),
            }),
        ];
        assert_eq!(scores("safe_tool_engineering", &tools), (1, 1, 1));
    }

    #[test]
    fn contradiction_caps_the_generic_reading() {
        let mut ev = generic(2, 2);
        ev.push(
            fact("custom.claim", "claim matches code", true).with_kind(EvidenceKind::Contradiction),
        );
        let (p, d, _) = scores("x", &ev);
        assert_eq!((p, d), (2, 3));
    }

    #[test]
    fn clean_checks_count_as_requirements_met() {
        let ev = vec![
            fact("custom.tempdir", "clone in a temporary directory", true),
            fact("custom.no_os_system", "no os.system call", false)
                .with_kind(EvidenceKind::SecurityFinding),
        ];
        assert_eq!(scores("x", &ev), (5, 5, 5));
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
            let o = judge(&request(persona, "theoretical_depth", ev.clone()));
            assert_eq!(o.score.get(), 1);
            assert!(o.argument.starts_with("Evidence missing"), "{}", o.argument);
            assert!(o.argument.contains("file is empty"), "{}", o.argument);
            assert_eq!(o.cited_evidence, vec!["doc.missing".to_string()]);
        }
    }

    #[test]
    fn judges_are_deterministic() {
        for ev in [generic(2, 5), graph(&["error_edges"], vec![])] {
            for persona in Judge::ALL {
                let a = judge(&request(persona, "graph_orchestration", ev.clone()));
                let b = judge(&request(persona, "graph_orchestration", ev.clone()));
                assert_eq!(a, b);
            }
        }
    }
}
