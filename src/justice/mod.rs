//! The Chief Justice: deterministic synthesis of the three opinions per criterion
//! ([`deliberate`]) and composition of the final [`AuditReport`] ([`compose`]).
//!
//! Pure functions over plain data. Every rule is driven by detective facts (evidence kinds,
//! `found`, confidence) and by opinion scores and citations, never by words in a judge's prose.
//!
//! # The five rules, as implemented
//! - **security_override**: a confirmed `SecurityFinding` (found) among the criterion's evidence
//!   caps that criterion's final score at 3. The rubric says security flaws "cap the total
//!   score": [`compose`] also caps the *overall* score at 3 when any confirmed security finding
//!   exists anywhere in the audit.
//! - **fact_supremacy**: an opinion whose score the facts contradict is overruled (weight 0):
//!   a score ≥ 4 while most requirements are unmet with high confidence, or while a
//!   contradiction or missing evidence is on file; a score of 1 while every requirement is met
//!   with high confidence and nothing adverse is known.
//! - **functionality_weight**: on the graph orchestration criterion (id `graph_orchestration`,
//!   or a dimension whose id/name speaks of graph orchestration or LangGraph architecture, e.g.
//!   v2's `langgraph_architecture`) the Tech Lead's opinion counts double.
//! - **variance_re_evaluation**: when max − min of the scores exceeds 2, each opinion's
//!   citations are re-examined against the criterion's evidence: citing no valid evidence id,
//!   or citing only evidence that contradicts its score, halves its weight.
//! - **dissent_requirement**: when max − min exceeds 2, a dissent summary names the highest
//!   and lowest judges, their scores and the facts each cited, and how it was resolved.
//!
//! The final score is the weighted mean of the opinions, rounded half-up in exact integer
//! arithmetic (2.5 → 3, 2.49 → 2), clamped to 1..=5, then capped by the security override.
//! Judge failures flag the criterion; with no valid opinion the final score is `None` and the
//! criterion is flagged for human review: never a silent fallback. When every opinion was
//! overruled by fact supremacy, the facts decide (share of requirements met mapped onto 1..=5)
//! and the criterion is flagged for human review: a panel that contradicts the facts
//! unanimously (say, obeying an injected "score 5") can neither set the score nor drop the
//! criterion from the overall score.
//! The five rules are the Chief Justice's standing rules and apply under every rubric; a rule
//! the rubric does not name is marked as such in its detail.

use crate::judges::levels;
use crate::model::fact::Stated;
use crate::model::{
    AuditError, AuditReport, CriterionFlag, CriterionResult, Evidence, EvidenceKind, Judge,
    JudgeFailure, JudicialOpinion, RemediationItem, Rule, RuleApplication, RunMetadata, Score,
};
use crate::rubric::{Dimension, Rubric};
use crate::tally::{self as facts, Tally};
use crate::words::count;
use std::collections::BTreeMap;

/// Weight units: 4 = normal weight (integers keep the arithmetic exact).
const NORMAL_WEIGHT: u32 = 4;
/// Score cap of the security override.
pub const SECURITY_CAP: u8 = 3;
/// Spread (max − min) above which dissent and re-evaluation are required.
pub const VARIANCE_THRESHOLD: u8 = 2;

/// Whether a dimension is the graph orchestration / architecture criterion (functionality
/// weight). Decided from the rubric's id and name, not from any judge's prose.
pub fn is_orchestration_dimension(dimension: Option<&Dimension>) -> bool {
    let Some(d) = dimension else { return false };
    let id = d.id.to_lowercase();
    let name = d.name.to_lowercase();
    if id == "graph_orchestration" || id == "langgraph_architecture" {
        return true;
    }
    let graphish = |s: &str| s.contains("graph") && !s.contains("graphic");
    (graphish(&id) || graphish(&name))
        && ["orchestration", "architecture"]
            .iter()
            .any(|w| id.contains(w) || name.contains(w))
}

struct Weighed<'a> {
    opinion: &'a JudicialOpinion,
    weight: u32,
}

fn rule_detail(rules: &BTreeMap<String, String>, rule: Rule, detail: String) -> RuleApplication {
    let detail = if rules.contains_key(rule.as_str()) {
        detail
    } else {
        format!("{detail} (standing rule of the Chief Justice; this rubric does not name it)")
    };
    RuleApplication { rule, detail }
}

fn judge_list(items: &[(Judge, u8)]) -> String {
    items
        .iter()
        .map(|(j, s)| format!("{} ({s})", j.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A score from facts alone: the share of requirements met (0.0..=1.0) mapped onto 1..=5,
/// rounded half-up.
fn facts_score(ratio: f64) -> u8 {
    (1.0 + 4.0 * ratio.clamp(0.0, 1.0) + 0.5)
        .floor()
        .clamp(1.0, 5.0) as u8
}

/// What every rule reads: the criterion, its evidence and the facts they state, the rubric's
/// rule texts, and the opinions delivered on it (one per judge, in judge order).
struct Case<'a> {
    dimension: &'a Dimension,
    synthesis_rules: &'a BTreeMap<String, String>,
    evidence: &'a [Evidence],
    tally: Tally<'a>,
    received: Vec<&'a JudicialOpinion>,
}

impl Case<'_> {
    fn rule(&self, rule: Rule, detail: String) -> RuleApplication {
        rule_detail(self.synthesis_rules, rule, detail)
    }

    /// The lowest and the highest score delivered, and the spread between them.
    fn score_range(&self) -> (u8, u8, u8) {
        let scores = self.received.iter().map(|o| o.score.get());
        let min = scores.clone().min().unwrap_or(0);
        let max = scores.max().unwrap_or(0);
        (min, max, max - min)
    }
}

/// The Chief Justice's verdict on one criterion. See the module docs for the rules; they run
/// here in the order their inputs require (the security cap applies to the weighted score, and
/// the dissent summary names the resolution) and are listed in the module docs' order.
pub fn deliberate(
    dimension: &Dimension,
    synthesis_rules: &BTreeMap<String, String>,
    evidence: &[Evidence],
    opinions: &[JudicialOpinion],
    failures: &[JudgeFailure],
    upstream_flags: Vec<CriterionFlag>,
) -> CriterionResult {
    let tally = Tally::of(evidence);
    if let Some((reason, fix)) = unassessable(evidence, &tally) {
        let mut result = CriterionResult::not_assessed(&dimension.id, &dimension.name, reason, fix);
        result.flags.extend(upstream_flags);
        return result;
    }
    let case = Case {
        dimension,
        synthesis_rules,
        evidence,
        tally,
        received: received_opinions(&dimension.id, opinions),
    };
    let mut flags = upstream_flags;
    flags.extend(judge_failure_flags(&case, failures));
    flags.extend(evidence_missing_flag(&case, &flags));
    let judge_opinions: Vec<JudicialOpinion> = case.received.iter().map(|o| (*o).clone()).collect();

    if case.received.is_empty() {
        return no_valid_opinion(dimension, failures, flags);
    }

    let mut weighed: Vec<Weighed> = case
        .received
        .iter()
        .map(|o| Weighed {
            opinion: o,
            weight: NORMAL_WEIGHT,
        })
        .collect();
    let mut rules_applied = Vec::new();
    let overruled = fact_supremacy(&case, &mut weighed);
    if !overruled.is_empty() {
        rules_applied.push(case.rule(
            Rule::FactSupremacy,
            format!(
                "{}; overruled opinions carry no weight.",
                overruled.join("; ")
            ),
        ));
    }
    rules_applied.extend(functionality_weight(&case, &mut weighed));
    rules_applied.extend(variance_re_evaluation(&case, &mut weighed));

    let weighted = match weighted_mean(&weighed) {
        Some(s) => Some(s),
        None => facts_decide(&case, &overruled).map(|(s, rule, flag)| {
            rules_applied.push(rule);
            flags.push(flag);
            s
        }),
    };
    let final_score = match security_override(&case, weighted) {
        Some((capped, rule)) => {
            rules_applied.insert(0, rule);
            capped
        }
        None => weighted,
    };
    let dissent_summary =
        dissent_requirement(&case, &overruled, final_score).map(|(text, rule)| {
            rules_applied.push(rule);
            text
        });

    let Some(final_score) = final_score else {
        let mut result = CriterionResult::not_assessed(
            &dimension.id,
            &dimension.name,
            "every opinion was overruled or lost its weight, so no score can be given",
            JUDGE_FIX,
        );
        result.flags.splice(0..0, flags);
        result.judge_opinions = judge_opinions;
        result.rules_applied = rules_applied;
        return result;
    };
    CriterionResult {
        dimension_id: dimension.id.clone(),
        dimension_name: dimension.name.clone(),
        final_score: Some(Score::clamped(i64::from(final_score))),
        judge_opinions,
        dissent_summary,
        remediation: remediation_at(&case, final_score),
        rules_applied,
        flags,
        status: crate::model::CriterionStatus::Assessed,
        not_assessed: None,
    }
}

/// One opinion per judge, for this criterion only (the first one delivered counts), in judge
/// order.
fn received_opinions<'a>(
    criterion: &str,
    opinions: &'a [JudicialOpinion],
) -> Vec<&'a JudicialOpinion> {
    let mut received: Vec<&JudicialOpinion> = Vec::new();
    for o in opinions.iter().filter(|o| o.criterion_id == criterion) {
        if !received.iter().any(|r| r.judge == o.judge) {
            received.push(o);
        }
    }
    received.sort_by_key(|o| o.judge);
    received
}

/// A flag per judge that failed, or that neither answered nor reported a failure.
fn judge_failure_flags(case: &Case, failures: &[JudgeFailure]) -> Vec<CriterionFlag> {
    let criterion = &case.dimension.id;
    Judge::ALL
        .into_iter()
        .filter(|judge| !case.received.iter().any(|o| o.judge == *judge))
        .map(|judge| {
            let reasons: Vec<&str> = failures
                .iter()
                .filter(|f| f.judge == judge && &f.criterion_id == criterion)
                .map(|f| f.reason.as_str())
                .collect();
            let reason = if reasons.is_empty() {
                "no opinion was delivered for this criterion".to_string()
            } else {
                reasons.join("; ")
            };
            CriterionFlag::JudgeFailed { judge, reason }
        })
        .collect()
}

/// The "evidence missing" flag, unless `flags` already has one (from upstream).
fn evidence_missing_flag(case: &Case, flags: &[CriterionFlag]) -> Option<CriterionFlag> {
    if flags
        .iter()
        .any(|f| matches!(f, CriterionFlag::EvidenceMissing { .. }))
    {
        return None;
    }
    if case.evidence.is_empty() {
        return Some(CriterionFlag::EvidenceMissing {
            reason: "no evidence was collected for this criterion".into(),
        });
    }
    if case.tally.missing.is_empty() {
        return None;
    }
    let reason = case
        .tally
        .missing
        .iter()
        .map(|e| {
            format!(
                "{} ({}): {}",
                facts::short(&e.goal, 80),
                e.location,
                facts::short(&e.rationale, 160)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(CriterionFlag::EvidenceMissing { reason })
}

/// No judge delivered a valid opinion: not assessed, with the judges' reasons.
fn no_valid_opinion(
    dimension: &Dimension,
    failures: &[JudgeFailure],
    flags: Vec<CriterionFlag>,
) -> CriterionResult {
    let reasons: Vec<String> = failures
        .iter()
        .filter(|f| f.criterion_id == dimension.id)
        .map(|f| format!("{}: {}", f.judge.as_str(), facts::short(&f.reason, 200)))
        .collect();
    let mut result = CriterionResult::not_assessed(
        &dimension.id,
        &dimension.name,
        format!(
            "no judge delivered a valid opinion{}",
            if reasons.is_empty() {
                String::new()
            } else {
                format!(" ({})", reasons.join("; "))
            }
        ),
        JUDGE_FIX,
    );
    result.flags.splice(0..0, flags);
    result
}

/// **security_override**: a confirmed security finding caps the score at [`SECURITY_CAP`].
/// `None` when the criterion has no confirmed finding; else the (capped) score and the rule.
fn security_override(case: &Case, weighted: Option<u8>) -> Option<(Option<u8>, RuleApplication)> {
    if case.tally.security.is_empty() {
        return None;
    }
    let findings = facts::describe_located(&case.tally.security, 4);
    let (score, detail) = match weighted {
        Some(s) if s > SECURITY_CAP => (
            Some(SECURITY_CAP),
            format!(
                "confirmed security finding {findings}: the weighted score {s} is capped at {SECURITY_CAP}, overriding effort points."
            ),
        ),
        Some(s) => (
            Some(s),
            format!(
                "confirmed security finding {findings}: cap {SECURITY_CAP} applied; the weighted score {s} is already within it."
            ),
        ),
        None => (
            None,
            format!(
                "confirmed security finding {findings}: cap {SECURITY_CAP} stands for any score a reviewer gives."
            ),
        ),
    };
    Some((score, case.rule(Rule::SecurityOverride, detail)))
}

/// **fact_supremacy**: an opinion whose score the facts contradict loses its weight. Returns
/// one line per overruled opinion.
fn fact_supremacy(case: &Case, weighed: &mut [Weighed]) -> Vec<String> {
    let tally = &case.tally;
    let mut overruled = Vec::new();
    for w in weighed.iter_mut() {
        let s = w.opinion.score.get();
        let reason = if s >= 4 && tally.mostly_unmet() {
            Some(format!(
                "{} of {} requirements are unmet with high confidence ({})",
                tally.failed_high_confidence(),
                tally.requirements(),
                facts::describe(&tally.failed(), 4)
            ))
        } else if s >= 4 && !tally.contradictions.is_empty() {
            Some(format!(
                "the repository contradicts the report ({})",
                facts::describe(&tally.contradictions, 4)
            ))
        } else if s == 1 && tally.all_met_cleanly() {
            Some(format!(
                "all {} requirements are met with high confidence ({})",
                tally.requirements(),
                facts::describe(&tally.passed(), 4)
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            w.weight = 0;
            overruled.push(format!(
                "{} ({s}) overruled: {reason}",
                w.opinion.judge.as_str()
            ));
        }
    }
    overruled
}

/// **fact_supremacy**, when every opinion was overruled: the facts decide (the share of
/// requirements met, mapped onto 1..=5) and a human reviews. Dropping the criterion instead
/// would let judges who all contradict the facts (e.g. obeying an injected "score 5") lift the
/// overall score by removing the criterion from it. `None` when nothing was overruled (the
/// opinions lost their weight otherwise) or there are no requirements.
fn facts_decide(case: &Case, overruled: &[String]) -> Option<(u8, RuleApplication, CriterionFlag)> {
    let ratio = case.tally.ratio()?;
    if overruled.is_empty() {
        return None;
    }
    let s = facts_score(ratio);
    let rule = case.rule(
        Rule::FactSupremacy,
        format!(
            "every opinion was overruled: the score follows the detectives' facts ({} of {} requirements met) = {s}.",
            case.tally.passed().len(),
            case.tally.requirements()
        ),
    );
    let flag = CriterionFlag::NeedsHumanReview {
        reason: format!(
            "every judge's opinion contradicted the facts; the score {s} follows the facts alone"
        ),
    };
    Some((s, rule, flag))
}

/// **functionality_weight**: on the graph orchestration criterion the Tech Lead's opinion
/// (unless overruled) counts double.
fn functionality_weight(case: &Case, weighed: &mut [Weighed]) -> Option<RuleApplication> {
    if !is_orchestration_dimension(Some(case.dimension)) {
        return None;
    }
    let w = weighed
        .iter_mut()
        .find(|w| w.opinion.judge == Judge::TechLead && w.weight > 0)?;
    w.weight *= 2;
    Some(case.rule(
        Rule::FunctionalityWeight,
        format!(
            "graph orchestration criterion: the Tech Lead's score {} counts double in the weighted mean.",
            w.opinion.score
        ),
    ))
}

/// **variance_re_evaluation**: when the spread exceeds [`VARIANCE_THRESHOLD`], each opinion's
/// citations are re-examined; citing no valid evidence id, or only evidence against its score,
/// halves its weight.
fn variance_re_evaluation(case: &Case, weighed: &mut [Weighed]) -> Option<RuleApplication> {
    let (min, max, spread) = case.score_range();
    if spread <= VARIANCE_THRESHOLD {
        return None;
    }
    let notes: Vec<String> = weighed
        .iter_mut()
        .map(|w| re_examine(w, case.evidence))
        .collect();
    Some(case.rule(
        Rule::VarianceReEvaluation,
        format!(
            "scores range from {min} to {max} (spread {spread} > {VARIANCE_THRESHOLD}); cited evidence re-examined: {}.",
            notes.join("; ")
        ),
    ))
}

/// One opinion's citations re-examined (see [`variance_re_evaluation`]): its weight halved or
/// kept, and a note saying which and why.
fn re_examine(w: &mut Weighed, evidence: &[Evidence]) -> String {
    let o = w.opinion;
    let valid: Vec<&Evidence> = o
        .cited_evidence
        .iter()
        .filter_map(|id| evidence.iter().find(|e| &e.id == id))
        .collect();
    let s = o.score.get();
    if w.weight == 0 {
        return format!("{} ({s}): already overruled by the facts", o.judge.as_str());
    }
    if valid.is_empty() {
        w.weight /= 2;
        return format!(
            "{} ({s}): cites no valid evidence id of this criterion (cited: {}), weight halved",
            o.judge.as_str(),
            if o.cited_evidence.is_empty() {
                "nothing".to_string()
            } else {
                o.cited_evidence.join(", ")
            }
        );
    }
    let adverse = |e: &&Evidence| {
        (!e.found && e.kind == EvidenceKind::Fact)
            || e.kind == EvidenceKind::Missing
            || (e.found
                && matches!(
                    e.kind,
                    EvidenceKind::SecurityFinding | EvidenceKind::Contradiction
                ))
    };
    let favourable = |e: &&Evidence| {
        (e.found && e.kind == EvidenceKind::Fact)
            || (!e.found
                && matches!(
                    e.kind,
                    EvidenceKind::SecurityFinding | EvidenceKind::Contradiction
                ))
    };
    if s >= 4 && valid.iter().all(adverse) {
        w.weight /= 2;
        format!(
            "{} ({s}): every cited fact is against a high score ({}), weight halved",
            o.judge.as_str(),
            facts::describe(&valid, 4)
        )
    } else if s <= 2 && valid.iter().all(favourable) {
        w.weight /= 2;
        format!(
            "{} ({s}): every cited fact supports the requirement ({}), weight halved",
            o.judge.as_str(),
            facts::describe(&valid, 4)
        )
    } else {
        let met = valid.iter().filter(|e| favourable(e)).count();
        format!(
            "{} ({s}): {} valid citations ({} favourable, {} adverse) consistent with its score, weight kept",
            o.judge.as_str(),
            valid.len(),
            met,
            valid.len() - met
        )
    }
}

/// **dissent_requirement**: when the spread exceeds [`VARIANCE_THRESHOLD`], a summary naming
/// the highest and lowest judges, their scores, the facts each relied on and the resolution.
fn dissent_requirement(
    case: &Case,
    overruled: &[String],
    final_score: Option<u8>,
) -> Option<(String, RuleApplication)> {
    let (min, max, spread) = case.score_range();
    if spread <= VARIANCE_THRESHOLD {
        return None;
    }
    let h = case.received.iter().find(|o| o.score.get() == max)?;
    let l = case.received.iter().find(|o| o.score.get() == min)?;
    let others: Vec<(Judge, u8)> = case
        .received
        .iter()
        .filter(|o| o.judge != h.judge && o.judge != l.judge)
        .map(|o| (o.judge, o.score.get()))
        .collect();
    let resolution = match final_score {
        Some(s) => format!("the Chief Justice rules {s}"),
        None => "no score could be given; a human must review".to_string(),
    };
    let mut text = format!(
        "{} ({}) and {} ({}) disagree by {spread} points. {} relied on {}. {} relied on {}.",
        h.judge.title(),
        h.score,
        l.judge.title(),
        l.score,
        h.judge.title(),
        cited_facts(h, case.evidence),
        l.judge.title(),
        cited_facts(l, case.evidence),
    );
    if !others.is_empty() {
        text.push_str(&format!(" Also sitting: {}.", judge_list(&others)));
    }
    if !overruled.is_empty() {
        text.push_str(&format!(" Facts decided: {}.", overruled.join("; ")));
    }
    text.push_str(&format!(" Resolution: {resolution}."));
    let rule = case.rule(
        Rule::DissentRequirement,
        format!(
            "spread {spread} > {VARIANCE_THRESHOLD} between {} ({}) and {} ({}): dissent summary written.",
            h.judge.as_str(),
            h.score,
            l.judge.as_str(),
            l.score
        ),
    );
    Some((text, rule))
}

/// The weighted mean of the opinions, rounded half-up with integers:
/// floor((2·Σws + Σw) / (2·Σw)), clamped to 1..=5; `None` when no opinion carries weight.
fn weighted_mean(weighed: &[Weighed]) -> Option<u8> {
    let total_weight: u32 = weighed.iter().map(|w| w.weight).sum();
    if total_weight == 0 {
        return None;
    }
    let num: u32 = weighed
        .iter()
        .map(|w| w.weight * u32::from(w.opinion.score.get()))
        .sum();
    Some(((2 * num + total_weight) / (2 * total_weight)).clamp(1, 5) as u8)
}

/// The remediation for a criterion scored `final_score`. No check of the detectives fails but
/// the score is below 5: the level the facts reach says why, and what the next level asks
/// (never "no change required" beside a 3, never a fix for nothing).
fn remediation_at(case: &Case, final_score: u8) -> String {
    let tally = &case.tally;
    if final_score < 5 && tally.failed().is_empty() && tally.requirements() > 0 {
        let mut lines = vec![held_at(case.evidence, final_score)];
        if let Some(p) = &case.dimension.success_pattern {
            lines.push(format!("Target: {}", facts::short(p, 400)));
        }
        lines.join("\n")
    } else {
        remediation(case.dimension, tally)
    }
}

/// Why a criterion none of whose checks fails stays at `final_score`: the level its facts
/// reach in their family's table and what the next level asks; at the table's top, that
/// nothing is left to fix from the facts.
fn held_at(evidence: &[Evidence], final_score: u8) -> String {
    let Some(level) = levels::assess(evidence).filter(|l| !l.absent && l.level == final_score)
    else {
        return format!(
            "No check of the detectives fails; the judges' reasons above hold the score at {final_score}/5."
        );
    };
    let table = level.family.name();
    if let Some((cap, why)) = level.cap.as_ref().filter(|(c, _)| *c == final_score) {
        return format!(
            "{}: the {table} table gives at most {cap}/5 while it holds.",
            upper_first(why)
        );
    }
    let next = final_score + 1;
    if !level.short_of.is_empty() {
        return format!(
            "Level {next} of the {table} table asks for {}.",
            crate::model::fact::join_and(&level.short_of)
        );
    }
    match levels::asks(level.family, next) {
        Some(asks) => format!("Level {next} of the {table} table asks for {asks}."),
        None => format!(
            "Nothing to fix: every check of the detectives passes; {final_score}/5 is the most the {table} table gives from facts alone (a 5 is a reader's call against the target)."
        ),
    }
}

/// `text` with its first letter in upper case.
fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// What to do when no judge could give a valid opinion (for whoever runs the grader).
const JUDGE_FIX: &str = "check the judges' LLM endpoint and model (OPENAI_BASE_URL, OPENAI_API_KEY, AUDITOR_MODEL; the log with -v shows each failed request) and re-run the audit, or use --judges offline";

/// What to do when evidence could not be collected and the detective gave no fix.
const EVIDENCE_FIX: &str =
    "re-run the audit with -v to see the detective's error; if it recurs, report it with the log";

/// `Some((reason, fix))` when the criterion cannot be assessed: none of its evidence is a
/// requirement (met or not); only evidence the grader could not collect, or none at all.
pub fn unassessable(evidence: &[Evidence], tally: &Tally) -> Option<(String, String)> {
    if tally.requirements() > 0 {
        return None;
    }
    if evidence.is_empty() {
        return Some((
            "no evidence was collected for this criterion".into(),
            EVIDENCE_FIX.into(),
        ));
    }
    let mut reasons: Vec<String> = Vec::new();
    let mut fixes: Vec<String> = Vec::new();
    for e in &tally.missing {
        let r = facts::short(&e.rationale, 240);
        if !reasons.contains(&r) {
            reasons.push(r);
        }
        let f = e.fix.clone().unwrap_or_else(|| EVIDENCE_FIX.to_string());
        if !fixes.contains(&f) {
            fixes.push(f);
        }
    }
    Some((reasons.join("; "), fixes.join("; ")))
}

/// The facts an opinion cited, by goal where the evidence is known.
fn cited_facts(o: &JudicialOpinion, evidence: &[Evidence]) -> String {
    if o.cited_evidence.is_empty() {
        return "no evidence at all".into();
    }
    let (known, unknown): (Vec<&String>, Vec<&String>) = o
        .cited_evidence
        .iter()
        .partition(|id| evidence.iter().any(|e| &e.id == *id));
    let known: Vec<&Evidence> = known
        .iter()
        .filter_map(|id| evidence.iter().find(|e| &e.id == *id))
        .collect();
    let mut parts = Vec::new();
    if !known.is_empty() {
        let described: Vec<String> = known
            .iter()
            .take(4)
            .map(|e| {
                let state = match (e.kind, e.found) {
                    (EvidenceKind::Fact, true) => "met",
                    (EvidenceKind::Fact, false) => "not met",
                    (EvidenceKind::SecurityFinding, true) => "security finding",
                    (EvidenceKind::Contradiction, true) => "contradiction",
                    (EvidenceKind::Missing, _) => "missing",
                    (_, false) => "cleared",
                };
                format!("{} ({state})", facts::short(&e.goal, 70))
            })
            .collect();
        parts.push(described.join("; "));
        if known.len() > 4 {
            parts.push(format!("and {} more", known.len() - 4));
        }
    }
    if !unknown.is_empty() {
        parts.push(format!(
            "{} not among this criterion's evidence",
            crate::words::count(unknown.len(), "cited item", "cited items")
        ));
    }
    parts.join("; ")
}

/// File-level remediation from the evidence, ending with the rubric's success pattern.
/// One instruction per line. A typed fact gives its own fix (what to change, where, to what);
/// evidence without one (families not typed yet, evidence stored by an earlier version) is
/// named with what the detective found.
fn remediation(dimension: &Dimension, t: &Tally) -> String {
    let mut lines = Vec::new();
    let typed = |e: &Evidence| e.fact.as_ref().and_then(|f| f.fix()).map(|f| f.line());
    for e in &t.security {
        lines.push(typed(e).unwrap_or_else(|| {
            format!(
                "{}: fix the security finding \"{}\" ({}).",
                e.location,
                facts::short(&e.goal, 100),
                facts::short(&e.rationale, 160)
            )
        }));
    }
    for e in &t.contradictions {
        lines.push(format!(
            "{}: make the report and the code agree: \"{}\" ({}).",
            e.location,
            facts::short(&e.goal, 100),
            facts::short(&e.rationale, 160)
        ));
    }
    for e in &t.unmet {
        if let (None, Some(fix)) = (&e.fact, &e.fix) {
            // a detective's own fix for an untyped fact (what to change, where, to what)
            lines.push(format!("{}: {fix}", e.location));
            continue;
        }
        if e.fact.is_some() {
            // a typed fact that holds no fix (nothing the student can change) says nothing here
            if let Some(l) = typed(e) {
                lines.push(l);
            }
            continue;
        }
        lines.push(format!(
            "{}: implement \"{}\"; the detective found: {}.",
            e.location,
            facts::short(&e.goal, 100),
            facts::short(&e.rationale, 160)
        ));
    }
    // Evidence the grader could not collect is not the student's to fix: it is flagged on the
    // criterion (with the fix for the grader's operator), never put in the remediation.
    if lines.is_empty() {
        return format!(
            "No change required: all {} requirements are met.",
            t.requirements()
        );
    }
    if let Some(p) = &dimension.success_pattern {
        lines.push(format!("Target: {}", facts::short(p, 400)));
    }
    lines.join("\n")
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The criteria at `score`, for "Strongest" / "Weakest": one is named, up to three are listed,
/// more are counted ("7 criteria at 5/5").
fn extreme(assessed: &[&CriterionResult], score: u8) -> String {
    let names: Vec<&str> = assessed
        .iter()
        .filter(|c| c.final_score.map(Score::get) == Some(score))
        .map(|c| c.dimension_name.as_str())
        .collect();
    match names.len() {
        1 => format!("{} ({score}/5)", names[0]),
        2 | 3 => format!("{} ({score}/5 each)", names.join(", ")),
        k => format!("{k} criteria at {score}/5"),
    }
}

/// Composes the final report: overall score (mean of the assessed criteria, capped at 3 when
/// any confirmed security finding exists), verdict, executive summary and a remediation plan
/// ordered by impact (most points to gain first: 5 − final score; ties keep the rubric's
/// order; a criterion the grader could not assess is left out: it is not the student's to fix). The overall score is rounded to two
/// decimals. A rubric dimension without a result is added as "not assessed" with a
/// human-review flag, never dropped.
pub fn compose(
    repo_url: &str,
    commit: Option<String>,
    rubric: &Rubric,
    results: Vec<CriterionResult>,
    metadata: RunMetadata,
    errors: Vec<AuditError>,
    evidence: &BTreeMap<String, Vec<Evidence>>,
) -> AuditReport {
    let criteria = in_rubric_order(rubric, results);
    let assessed: Vec<&CriterionResult> = criteria.iter().filter(|c| c.is_assessed()).collect();
    let mean = mean_score(&assessed);
    let security: Vec<&Evidence> = evidence
        .values()
        .flatten()
        .filter(|e| e.kind == EvidenceKind::SecurityFinding && e.found)
        .collect();
    let cap = f64::from(SECURITY_CAP);
    let overall_score = match mean {
        Some(m) if !security.is_empty() && m > cap => Some(cap),
        other => other,
    };
    let verdict = verdict(overall_score, assessed.len(), criteria.len());
    let summary = summary(
        &criteria,
        &assessed,
        (mean, overall_score),
        &security,
        &errors,
    );
    let remediation_plan = remediation_plan(&criteria);
    AuditReport {
        repo_url: repo_url.to_string(),
        commit,
        verdict,
        executive_summary: summary,
        overall_score,
        criteria,
        remediation_plan,
        metadata,
        errors,
    }
}

/// Every rubric dimension once: a dimension without a result is added as not assessed (never
/// dropped), in the rubric's order; results for ids outside the rubric go last.
fn in_rubric_order(rubric: &Rubric, results: Vec<CriterionResult>) -> Vec<CriterionResult> {
    let mut criteria = results;
    for d in &rubric.dimensions {
        if !criteria.iter().any(|c| c.dimension_id == d.id) {
            criteria.push(CriterionResult::not_assessed(
                &d.id,
                &d.name,
                "the Chief Justice received no result for this criterion",
                EVIDENCE_FIX,
            ));
        }
    }
    let position = |id: &str| {
        rubric
            .dimensions
            .iter()
            .position(|d| d.id == id)
            .unwrap_or(usize::MAX)
    };
    criteria.sort_by_key(|c| position(&c.dimension_id));
    criteria
}

/// The mean of the assessed criteria's final scores, rounded to two decimals (`None`: none).
fn mean_score(assessed: &[&CriterionResult]) -> Option<f64> {
    if assessed.is_empty() {
        return None;
    }
    let sum: u32 = assessed
        .iter()
        .filter_map(|c| c.final_score)
        .map(|s| u32::from(s.get()))
        .sum();
    Some(round2(f64::from(sum) / assessed.len() as f64))
}

/// The verdict's band and overall score over `assessed` of the `n` criteria.
fn verdict(overall_score: Option<f64>, assessed: usize, n: usize) -> String {
    match overall_score {
        None => format!(
            "No verdict: none of the {n} criteria could be assessed automatically; a human must review the evidence."
        ),
        Some(s) => {
            let band = if s >= 4.5 {
                "Exemplary"
            } else if s >= 3.5 {
                "Competent"
            } else if s >= 2.5 {
                "Developing"
            } else {
                "Insufficient"
            };
            format!(
                "{band}: overall {s:.2}/5 over {assessed} of {n} {}.",
                if n == 1 { "criterion" } else { "criteria" }
            )
        }
    }
}

/// The executive summary: what the scores mean (strongest and weakest, the security cap, what
/// was not assessed, flags, errors). The repository, commit, rubric and judges are the report's
/// metadata, shown above it.
fn summary(
    criteria: &[CriterionResult],
    assessed: &[&CriterionResult],
    (mean, overall_score): (Option<f64>, Option<f64>),
    security: &[&Evidence],
    errors: &[AuditError],
) -> String {
    let mut summary = String::new();
    // Strongest / weakest only mean something with at least two assessed criteria and two
    // different scores; a tie is named as a tie, never as one "strongest" criterion.
    let scores: Vec<u8> = assessed
        .iter()
        .filter_map(|c| c.final_score.map(Score::get))
        .collect();
    if let (Some(&hi), Some(&lo)) = (scores.iter().max(), scores.iter().min()) {
        if assessed.len() >= 2 && hi > lo {
            summary.push_str(&format!(
                "Strongest: {}. Weakest: {}. ",
                extreme(assessed, hi),
                extreme(assessed, lo)
            ));
        }
    }
    if let (Some(m), Some(s)) = (mean, overall_score) {
        if s < m {
            summary.push_str(&format!(
                "Security override: {} ({}) cap the overall score at {SECURITY_CAP} (mean of criteria {m:.2}). ",
                count(security.len(), "confirmed security finding", "confirmed security findings"),
                facts::describe_located(security, 3)
            ));
        } else if !security.is_empty() {
            summary.push_str(&format!(
                "{} ({}); the overall cap of {SECURITY_CAP} holds. ",
                count(
                    security.len(),
                    "confirmed security finding",
                    "confirmed security findings"
                ),
                facts::describe_located(security, 3)
            ));
        }
    }
    let not_assessed: Vec<String> = criteria
        .iter()
        .filter(|c| !c.is_assessed())
        .map(|c| match &c.not_assessed {
            Some(na) => format!("{} ({})", c.dimension_name, facts::short(&na.reason, 200)),
            None => c.dimension_name.clone(),
        })
        .collect();
    if !not_assessed.is_empty() {
        summary.push_str(&format!(
            "Not assessed (on the grader's side, not the student's; excluded from the overall, fix given in the breakdown): {}. ",
            not_assessed.join("; ")
        ));
    }
    // Criteria not assessed are named in the sentence above; this one counts the scored ones.
    let flagged = criteria
        .iter()
        .filter(|c| c.is_assessed() && !c.flags.is_empty())
        .count();
    if flagged > 0 {
        summary.push_str(&format!(
            "{flagged} of the {} scored criteria {} flags (missing evidence, failed judges or review needed); see the breakdown. ",
            assessed.len(),
            if flagged == 1 { "carries" } else { "carry" }
        ));
    }
    if !errors.is_empty() {
        summary.push_str(&format!(
            "{} occurred during the run; see Errors. ",
            count(errors.len(), "error", "errors")
        ));
    }
    summary.trim_end().to_string()
}

/// The remediation plan: each assessed criterion below 5, most points to gain first (ties keep
/// the rubric's order). A criterion the grader could not assess is not the student's to fix.
fn remediation_plan(criteria: &[CriterionResult]) -> Vec<RemediationItem> {
    let mut plan: Vec<(usize, RemediationItem)> = criteria
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let impact = 5 - c.final_score.filter(|_| c.is_assessed())?.get();
            (impact > 0).then(|| {
                (
                    i,
                    RemediationItem {
                        dimension_id: c.dimension_id.clone(),
                        dimension_name: c.dimension_name.clone(),
                        impact,
                        action: c.remediation.clone(),
                    },
                )
            })
        })
        .collect();
    plan.sort_by_key(|(i, item)| (std::cmp::Reverse(item.impact), *i));
    plan.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
pub(crate) mod tests;
