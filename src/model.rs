//! The typed audit model (the spec's `state.py`): evidence, opinions, verdicts and the audit
//! state with its merge rules (the spec's reducers).
//!
//! Invariants enforced by construction:
//! - a [`Score`] is always in `1..=5`;
//! - a [`Confidence`] is always a finite number in `0.0..=1.0`;
//! - a [`Judge`] is one of Prosecutor, Defense, TechLead;
//! - merging a [`StateUpdate`] into an [`AuditState`] never loses data: evidence is merged by
//!   dimension key (lists united, duplicates by id dropped only when identical), opinions and
//!   errors are appended.

pub mod fact;

use fact::{Fact, Stated};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A judge's score, always within `1..=5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u8")]
pub struct Score(u8);

impl Score {
    pub const MIN: Score = Score(1);
    pub const MAX: Score = Score(5);

    /// Builds a score, rejecting anything outside `1..=5`.
    pub fn new(value: i64) -> Result<Self, ModelError> {
        if (1..=5).contains(&value) {
            Ok(Score(value as u8))
        } else {
            Err(ModelError::ScoreOutOfRange(value))
        }
    }

    /// Clamps any integer into `1..=5` (for arithmetic on already valid scores).
    pub fn clamped(value: i64) -> Self {
        Score(value.clamp(1, 5) as u8)
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

impl TryFrom<i64> for Score {
    type Error = ModelError;
    fn try_from(value: i64) -> Result<Self, Self::Error> {
        Score::new(value)
    }
}

impl From<Score> for u8 {
    fn from(s: Score) -> u8 {
        s.0
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A detective's confidence in a fact, always a finite number within `0.0..=1.0`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Confidence(f64);

impl Confidence {
    pub fn new(value: f64) -> Result<Self, ModelError> {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            Ok(Confidence(value))
        } else {
            Err(ModelError::ConfidenceOutOfRange(value))
        }
    }

    /// Certain fact (read directly from the artifact).
    pub const CERTAIN: Confidence = Confidence(1.0);

    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Confidence {
    type Error = ModelError;
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Confidence::new(value)
    }
}

impl From<Confidence> for f64 {
    fn from(c: Confidence) -> f64 {
        c.0
    }
}

/// The three judge personas. Serialized exactly as the spec spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Judge {
    Prosecutor,
    Defense,
    TechLead,
}

impl Judge {
    pub const ALL: [Judge; 3] = [Judge::Prosecutor, Judge::Defense, Judge::TechLead];

    pub fn as_str(self) -> &'static str {
        match self {
            Judge::Prosecutor => "Prosecutor",
            Judge::Defense => "Defense",
            Judge::TechLead => "TechLead",
        }
    }

    /// Human title used in reports.
    pub fn title(self) -> &'static str {
        match self {
            Judge::Prosecutor => "Prosecutor",
            Judge::Defense => "Defense",
            Judge::TechLead => "Tech Lead",
        }
    }
}

impl fmt::Display for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Judge {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "Prosecutor" => Ok(Judge::Prosecutor),
            "Defense" => Ok(Judge::Defense),
            "TechLead" => Ok(Judge::TechLead),
            other => Err(ModelError::UnknownJudge(other.to_string())),
        }
    }
}

/// Which detective produced a piece of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detective {
    RepoInvestigator,
    DocAnalyst,
    VisionInspector,
    /// Produced at the aggregation barrier from more than one detective's output
    /// (e.g. the report's claimed paths checked against the repository's files).
    EvidenceAggregator,
}

impl Detective {
    pub fn as_str(self) -> &'static str {
        match self {
            Detective::RepoInvestigator => "RepoInvestigator",
            Detective::DocAnalyst => "DocAnalyst",
            Detective::VisionInspector => "VisionInspector",
            Detective::EvidenceAggregator => "EvidenceAggregator",
        }
    }
}

impl fmt::Display for Detective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What class of fact a piece of evidence is. The Chief Justice's rules are driven by these
/// classes (never by words in a judge's prose).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// An ordinary fact: `found` says whether what the forensic instruction looks for exists.
    Fact,
    /// A confirmed security finding in the audited code (e.g. `os.system` with a built string).
    /// With `found == true` it triggers the security override.
    SecurityFinding,
    /// A claim made by the report that the repository contradicts (e.g. a hallucinated path).
    /// With `found == true` (the contradiction was found) it feeds fact supremacy.
    Contradiction,
    /// Evidence the *grader* could not collect: a detective crashed or timed out, the
    /// repository could not be cloned, PDFium is unavailable, no vision model is configured, a
    /// limit of ours was hit. Always `found == false`; never counts against the student. A
    /// criterion whose only evidence is `Missing` is not assessed (no score, excluded from the
    /// overall). What the *student* failed to provide (no PDF in the repository, a corrupt PDF,
    /// no diagram) is an ordinary `Fact` with `found == false`: a real low score.
    Missing,
}

/// One fact collected by a detective, with a location a reader can check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Unique id within one audit, e.g. `repo.graph.fan_out.1`. Judges cite these.
    pub id: String,
    pub detective: Detective,
    pub kind: EvidenceKind,
    /// The forensic objective being investigated.
    pub goal: String,
    /// Whether the artifact exists (a fact, not an opinion).
    pub found: bool,
    /// Extracted code snippet or text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// `path:line`, `path`, a commit hash or `report.pdf p.3`.
    pub location: String,
    /// Why the detective believes this.
    pub rationale: String,
    pub confidence: Confidence,
    /// For `Missing` evidence: what the person running the grader can do so that this
    /// evidence can be collected (set a vision model, install PDFium, raise a limit, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The figures the detective measured, typed, for the level tables (which read these,
    /// never the rationale). Evidence stored by an earlier version has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
    /// The typed fact this evidence states (see [`fact`]): its `found`, `location` and
    /// `rationale` are rendered from it, and the level tables, the offline judges and the fixes
    /// read it. Evidence stored by an earlier version, and families not typed yet, have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<Fact>,
}

/// Figures behind a fact, as the detective measured them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "of", rename_all = "snake_case")]
pub enum Measure {
    /// A git history (on `repo.history.commit_count`).
    History(HistoryMeasure),
    /// Which report was read (on `pdf.<criterion>.report_kind`): the interim one, and what
    /// says so (the title on p.1, or the file name).
    Report { interim: bool, basis: String },
    /// The Chief Justice code (on `repo.justice.deterministic`).
    Justice {
        /// Named rules implemented as branches (the dissent requirement aside).
        named_rules: usize,
        /// Whether the justice code calls an LLM.
        calls_llm: bool,
    },
    /// A path the report mentions (on `pdf.<criterion>.path.<n>`): `claimed` when the report
    /// presents it as part of the project (verified or hallucinated), not when it proposes it
    /// as future work or says it is absent.
    Path { claimed: bool },
    /// A doubling list (on `repo.graph.defect.whole_state_return.<n>`) where no node returns
    /// the whole state: each re-sends the current value of a reducer field.
    FieldsResent,
    /// The keys one return drops (on `repo.graph.defect.undeclared_state_key.<n>`): one defect
    /// names them all, each key is a state defect of its own for the level table.
    KeysDropped { keys: usize },
}

/// A git history in figures (see `repo::history` for the rules).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryMeasure {
    /// Commits reachable from the audited commit, merges included.
    pub commits: usize,
    pub merges: usize,
    /// `single_init_dump`, `few_large`, `iterative` or `empty`.
    pub pattern: String,
    /// Share of the lines added by the largest commit (0..=1).
    pub largest_commit_share: f64,
    /// Share of the lines added by the two largest deliveries (0..=1).
    pub top2_share: f64,
    /// Share of consecutive commits (merges named as merges aside) less than two minutes
    /// apart; `None` under four of them.
    pub burst_share: Option<f64>,
    /// Share of the lines added in staged sessions (runs of commits minutes apart, see
    /// `repo::history`); `None` in evidence stored by an earlier version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_share: Option<f64>,
    /// The largest staged session: its share of the lines, commits and minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_session: Option<(f64, usize, i64)>,
}

impl Evidence {
    /// A fact with a location. `content` can be added with [`Evidence::with_content`].
    pub fn fact(
        id: impl Into<String>,
        detective: Detective,
        goal: impl Into<String>,
        found: bool,
        location: impl Into<String>,
        rationale: impl Into<String>,
        confidence: Confidence,
    ) -> Self {
        Evidence {
            id: id.into(),
            detective,
            kind: EvidenceKind::Fact,
            goal: goal.into(),
            found,
            content: None,
            location: location.into(),
            rationale: rationale.into(),
            confidence,
            fix: None,
            measure: None,
            fact: None,
        }
    }

    /// The evidence that states a typed fact, filed as `{prefix}.{key}`: `found` is whether it
    /// holds (for a security finding: confirmed), the location its first line of proof (else
    /// `searched`, the place that was searched), the rationale its statement.
    pub fn stated(
        prefix: &str,
        detective: Detective,
        goal: impl Into<String>,
        fact: Fact,
        searched: impl Into<String>,
        confidence: Confidence,
    ) -> Self {
        let location = fact
            .proof()
            .first()
            .map(ToString::to_string)
            .unwrap_or_else(|| searched.into());
        let kind = match &fact {
            Fact::Safety(fact::SafetyFact::Finding { .. }) => EvidenceKind::SecurityFinding,
            _ => EvidenceKind::Fact,
        };
        Evidence {
            id: format!("{prefix}.{}", fact.key()),
            detective,
            kind,
            goal: goal.into(),
            found: fact.holds(),
            content: None,
            location,
            rationale: fact.statement(),
            confidence,
            fix: None,
            measure: None,
            fact: Some(fact),
        }
    }

    /// The explicit absence of evidence for a dimension (the "evidence missing" path).
    pub fn missing(
        id: impl Into<String>,
        detective: Detective,
        goal: impl Into<String>,
        location: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Evidence {
            id: id.into(),
            detective,
            kind: EvidenceKind::Missing,
            goal: goal.into(),
            found: false,
            content: None,
            location: location.into(),
            rationale: reason.into(),
            confidence: Confidence::CERTAIN,
            fix: None,
            measure: None,
            fact: None,
        }
    }

    /// What the grader's operator can do to collect this evidence (for `Missing` evidence).
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    pub fn with_kind(mut self, kind: EvidenceKind) -> Self {
        self.kind = kind;
        self
    }

    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.content = Some(content.into());
        self
    }

    /// The same evidence with the figures it rests on.
    pub fn with_measure(mut self, measure: Measure) -> Self {
        self.measure = Some(measure);
        self
    }
}

/// One judge's structured opinion on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudicialOpinion {
    pub judge: Judge,
    pub criterion_id: String,
    pub score: Score,
    pub argument: String,
    pub cited_evidence: Vec<String>,
    /// Who produced it: the offline rules or a named model.
    #[serde(default)]
    pub source: OpinionSource,
}

/// Where an opinion came from, shown in the report so nobody mistakes offline rules for a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OpinionSource {
    /// Deterministic offline judge (no LLM involved).
    #[default]
    Offline,
    /// An LLM answered; `model` is the model that produced it.
    Llm { model: String },
}

/// A judge that could not deliver a valid opinion for a criterion (after retries/restarts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeFailure {
    pub judge: Judge,
    pub criterion_id: String,
    pub reason: String,
}

/// Which stage of the graph an error came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    RepoInvestigator,
    DocAnalyst,
    VisionInspector,
    EvidenceAggregator,
    Judge,
    ChiefJustice,
    Report,
}

/// An error recorded in the state (never swallowed, always shown in the report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditError {
    pub stage: Stage,
    /// Dimensions affected, if known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimensions: Vec<String>,
    pub message: String,
}

/// A partial update returned by one branch of the graph; merged by [`AuditState::merge`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateUpdate {
    pub evidences: BTreeMap<String, Vec<Evidence>>,
    pub opinions: Vec<JudicialOpinion>,
    pub failures: Vec<JudgeFailure>,
    pub errors: Vec<AuditError>,
}

/// The audit state shared by the graph. Its fields are private: it changes only by
/// [`AuditState::merge`] (loss-free) and [`AuditState::replace_unverifiable`] (a dimension whose
/// evidence cannot be checked holds only that); everything else reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditState {
    /// Evidence by dimension id.
    evidences: BTreeMap<String, Vec<Evidence>>,
    opinions: Vec<JudicialOpinion>,
    failures: Vec<JudgeFailure>,
    errors: Vec<AuditError>,
}

impl AuditState {
    /// Evidence by dimension id.
    pub fn evidences(&self) -> &BTreeMap<String, Vec<Evidence>> {
        &self.evidences
    }

    /// The judges' opinions, in arrival order.
    pub fn opinions(&self) -> &[JudicialOpinion] {
        &self.opinions
    }

    /// The judges that could not deliver an opinion, in arrival order.
    pub fn failures(&self) -> &[JudgeFailure] {
        &self.failures
    }

    /// The graph's errors, in arrival order.
    pub fn errors(&self) -> &[AuditError] {
        &self.errors
    }

    /// Replaces what `dimension` holds with `evidence`: the dimension's evidence cannot be
    /// checked (the report's claims about a repository that could not be read), so it holds only
    /// that, never a branch's word for it. The one change besides [`AuditState::merge`].
    pub fn replace_unverifiable(&mut self, dimension: String, evidence: Vec<Evidence>) {
        self.evidences.insert(dimension, evidence);
    }

    /// Merges a partial update without loss (the spec's reducers, made loss-free):
    /// - evidence is merged by dimension key; when two branches write the same key, both
    ///   lists are kept. An evidence whose id is already present is dropped only when it is
    ///   identical; a *different* evidence under a taken id is kept under a fresh id
    ///   (`id#2`, `id#3`, ...), so no branch can overwrite another's fact;
    /// - opinions, judge failures and errors are appended in arrival order.
    pub fn merge(&mut self, update: StateUpdate) {
        for (dimension, incoming) in update.evidences {
            let list = self.evidences.entry(dimension).or_default();
            // Linear in the evidence count: ids are looked up, not scanned for.
            let mut ids: std::collections::HashMap<String, Vec<usize>> =
                std::collections::HashMap::with_capacity(list.len() + incoming.len());
            for (i, e) in list.iter().enumerate() {
                ids.entry(e.id.clone()).or_default().push(i);
            }
            for mut ev in incoming {
                // Evidence equal to one already merged has a taken id (its own or `id#n`).
                let same = |at: &Vec<usize>| at.iter().any(|&i| list[i] == ev);
                if ids.get(&ev.id).is_some_and(same) {
                    continue;
                }
                if ids.contains_key(&ev.id) {
                    let base = ev.id.clone();
                    let mut n = 2;
                    while ids.contains_key(&format!("{base}#{n}")) {
                        n += 1;
                    }
                    ev.id = format!("{base}#{n}");
                }
                ids.entry(ev.id.clone()).or_default().push(list.len());
                list.push(ev);
            }
        }
        self.opinions.extend(update.opinions);
        self.failures.extend(update.failures);
        self.errors.extend(update.errors);
    }

    /// All evidence for one dimension (empty when none).
    pub fn evidence_for(&self, dimension_id: &str) -> &[Evidence] {
        self.evidences
            .get(dimension_id)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Opinions for one criterion.
    pub fn opinions_for<'a>(
        &'a self,
        criterion_id: &'a str,
    ) -> impl Iterator<Item = &'a JudicialOpinion> + 'a {
        self.opinions
            .iter()
            .filter(move |o| o.criterion_id == criterion_id)
    }
}

/// A named synthesis rule of the Chief Justice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    SecurityOverride,
    FactSupremacy,
    FunctionalityWeight,
    DissentRequirement,
    VarianceReEvaluation,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::SecurityOverride => "security_override",
            Rule::FactSupremacy => "fact_supremacy",
            Rule::FunctionalityWeight => "functionality_weight",
            Rule::DissentRequirement => "dissent_requirement",
            Rule::VarianceReEvaluation => "variance_re_evaluation",
        }
    }
}

/// One rule that fired on a criterion, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleApplication {
    pub rule: Rule,
    pub detail: String,
}

/// Something a reader must know about a criterion's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "flag", rename_all = "snake_case")]
pub enum CriterionFlag {
    /// The detective for this dimension produced no usable evidence.
    EvidenceMissing { reason: String },
    /// A graph node failed while working on this dimension.
    NodeFailure { stage: Stage, reason: String },
    /// A judge could not deliver a valid opinion.
    JudgeFailed { judge: Judge, reason: String },
    /// No verdict could be reached automatically.
    NeedsHumanReview { reason: String },
    /// The grader could not assess the criterion (see `CriterionResult::not_assessed`).
    NotAssessed { reason: String },
}

/// The Chief Justice's verdict on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    pub dimension_id: String,
    pub dimension_name: String,
    /// `None` when the criterion could not be assessed (no valid opinion): never a silent
    /// fallback score.
    pub final_score: Option<Score>,
    pub judge_opinions: Vec<JudicialOpinion>,
    /// Required when the judges' scores differ by more than 2.
    pub dissent_summary: Option<String>,
    /// Specific, file-level instructions.
    pub remediation: String,
    pub rules_applied: Vec<RuleApplication>,
    pub flags: Vec<CriterionFlag>,
    /// `assessed`, or `not_assessed` when the grader could not score the criterion.
    #[serde(default)]
    pub status: CriterionStatus,
    /// Why the criterion was not assessed and how the grader's operator can fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_assessed: Option<NotAssessed>,
}

/// Whether a criterion received a score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CriterionStatus {
    #[default]
    Assessed,
    /// The grader could not assess it (a failure on the grader's side, not the student's):
    /// no score, excluded from the overall and from the remediation plan.
    NotAssessed,
}

/// Why a criterion could not be assessed, and the fix (for whoever runs the grader).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotAssessed {
    pub reason: String,
    pub fix: String,
}

impl CriterionResult {
    /// A criterion the grader could not assess: no score, the reason and the fix.
    pub fn not_assessed(
        dimension_id: impl Into<String>,
        dimension_name: impl Into<String>,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        let (reason, fix) = (reason.into(), fix.into());
        CriterionResult {
            dimension_id: dimension_id.into(),
            dimension_name: dimension_name.into(),
            final_score: None,
            judge_opinions: vec![],
            dissent_summary: None,
            remediation: format!(
                "Not assessed by the grader (no fault of the student): {reason}\nFix (for whoever runs the grader): {fix}"
            ),
            rules_applied: vec![],
            flags: vec![CriterionFlag::NotAssessed {
                reason: reason.clone(),
            }],
            status: CriterionStatus::NotAssessed,
            not_assessed: Some(NotAssessed { reason, fix }),
        }
    }

    /// Whether the criterion received a score.
    pub fn is_assessed(&self) -> bool {
        self.status == CriterionStatus::Assessed && self.final_score.is_some()
    }

    /// Whether this criterion was assessed without any flag.
    pub fn is_clean(&self) -> bool {
        self.final_score.is_some() && self.flags.is_empty()
    }
}

/// How the judges were run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeMode {
    Offline,
    Llm,
}

/// Token usage of LLM calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those the provider read from its prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`; 0 when it does not say).
    #[serde(default)]
    pub cached_input_tokens: u64,
}

impl TokenUsage {
    pub fn add(&mut self, other: TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
    }
}

/// Facts about the run itself (not about the audited project).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMetadata {
    pub auditor_version: String,
    pub rubric_name: String,
    pub rubric_version: String,
    pub rubric_source: String,
    /// sha256 of the rubric file's bytes (which rubric exactly).
    #[serde(default)]
    pub rubric_sha256: String,
    pub judge_mode: JudgeMode,
    /// The judges' prompts: where they come from and their digest; `None` for offline judges.
    #[serde(default)]
    pub prompts: Option<String>,
    /// Model per persona (empty for offline judges).
    pub judge_models: BTreeMap<String, String>,
    pub vision_model: Option<String>,
    pub pdf_path: Option<String>,
    pub started_at: String,
    pub duration_ms: u64,
    pub tokens: TokenUsage,
    #[serde(default)]
    pub tokens_by_persona: BTreeMap<String, TokenUsage>,
    #[serde(default)]
    pub tokens_by_criterion: BTreeMap<String, TokenUsage>,
    /// Cost of the tokens, when a price table is configured (AUDITOR_PRICE_INPUT_PER_MTOK,
    /// AUDITOR_PRICE_OUTPUT_PER_MTOK, in currency units per million tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Judge actors restarted by their supervisor (panics, timeouts).
    #[serde(default)]
    pub judge_restarts: u32,
    /// Judge requests sent again after a failure or a restart.
    #[serde(default)]
    pub judge_resends: u32,
}

/// The final verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    pub repo_url: String,
    /// The audited commit, when the repository could be read.
    pub commit: Option<String>,
    pub verdict: String,
    pub executive_summary: String,
    /// Mean of the assessed criteria's final scores; `None` when none could be assessed.
    pub overall_score: Option<f64>,
    pub criteria: Vec<CriterionResult>,
    pub remediation_plan: Vec<RemediationItem>,
    pub metadata: RunMetadata,
    pub errors: Vec<AuditError>,
}

impl AuditReport {
    /// Whether every criterion was assessed without flags (exit code 0) or not (exit code 3).
    pub fn is_complete(&self) -> bool {
        self.criteria.iter().all(CriterionResult::is_clean)
    }
}

/// One step of the consolidated remediation plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemediationItem {
    pub dimension_id: String,
    pub dimension_name: String,
    /// Points that can be gained (5 − final score), the ordering key.
    pub impact: u8,
    pub action: String,
}

/// Errors building model values.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("score {0} is out of range: a score must be an integer from 1 to 5")]
    ScoreOutOfRange(i64),
    #[error("confidence {0} is out of range: a confidence must be a number from 0.0 to 1.0")]
    ConfidenceOutOfRange(f64),
    #[error("unknown judge {0:?}: expected one of Prosecutor, Defense, TechLead")]
    UnknownJudge(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_stored_without_figures_still_loads_and_figures_round_trip() {
        let old = r#"{"id":"repo.history.commit_count","detective":"repo_investigator","kind":"fact","goal":"g","found":true,"location":"abc","rationale":"12 commits","confidence":1.0}"#;
        let e: Evidence = serde_json::from_str(old).expect("old evidence loads");
        assert_eq!(e.measure, None);
        let m =
            ev("repo.history.commit_count", true).with_measure(Measure::History(HistoryMeasure {
                commits: 12,
                merges: 1,
                pattern: "iterative".into(),
                largest_commit_share: 0.25,
                top2_share: 0.4,
                burst_share: Some(0.1),
                staged_share: None,
                largest_session: None,
            }));
        let back: Evidence = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }

    fn ev(id: &str, found: bool) -> Evidence {
        Evidence::fact(
            id,
            Detective::RepoInvestigator,
            "goal",
            found,
            "src/graph.py:1",
            "because",
            Confidence::CERTAIN,
        )
    }

    fn opinion(judge: Judge, criterion: &str, score: i64) -> JudicialOpinion {
        JudicialOpinion {
            judge,
            criterion_id: criterion.into(),
            score: Score::new(score).unwrap(),
            argument: "argument".into(),
            cited_evidence: vec![],
            source: OpinionSource::Offline,
        }
    }

    #[test]
    fn score_rejects_out_of_range() {
        assert!(Score::new(0).is_err());
        assert!(Score::new(6).is_err());
        assert!(Score::new(-1).is_err());
        for s in 1..=5 {
            assert_eq!(Score::new(s).unwrap().get() as i64, s);
        }
        assert!(serde_json::from_str::<Score>("7").is_err());
        assert!(serde_json::from_str::<Score>("2.5").is_err());
        assert_eq!(serde_json::from_str::<Score>("4").unwrap().get(), 4);
    }

    #[test]
    fn confidence_rejects_out_of_range() {
        assert!(Confidence::new(-0.01).is_err());
        assert!(Confidence::new(1.01).is_err());
        assert!(Confidence::new(f64::NAN).is_err());
        assert!(Confidence::new(0.0).is_ok());
        assert!(Confidence::new(1.0).is_ok());
        assert!(serde_json::from_str::<Confidence>("1.5").is_err());
    }

    #[test]
    fn judge_is_one_of_three() {
        assert_eq!("TechLead".parse::<Judge>().unwrap(), Judge::TechLead);
        assert!("Grader".parse::<Judge>().is_err());
        assert!(serde_json::from_str::<Judge>("\"Grader\"").is_err());
        assert_eq!(
            serde_json::to_string(&Judge::Defense).unwrap(),
            "\"Defense\""
        );
    }

    #[test]
    fn opinion_with_invalid_score_does_not_deserialize() {
        let json = r#"{"judge":"Prosecutor","criterion_id":"x","score":9,"argument":"a","cited_evidence":[]}"#;
        assert!(serde_json::from_str::<JudicialOpinion>(json).is_err());
    }

    #[test]
    fn merge_unites_evidence_of_different_keys() {
        let mut state = AuditState::default();
        let mut a = StateUpdate::default();
        a.evidences.insert("graph".into(), vec![ev("g1", true)]);
        let mut b = StateUpdate::default();
        b.evidences.insert("docs".into(), vec![ev("d1", true)]);
        state.merge(a);
        state.merge(b);
        assert_eq!(state.evidence_for("graph").len(), 1);
        assert_eq!(state.evidence_for("docs").len(), 1);
    }

    #[test]
    fn two_branches_writing_the_same_key_lose_nothing() {
        let mut state = AuditState::default();
        let mut a = StateUpdate::default();
        a.evidences
            .insert("graph".into(), vec![ev("g1", true), ev("shared", true)]);
        let mut b = StateUpdate::default();
        // same key, one new id, one id already taken by *different* evidence
        b.evidences
            .insert("graph".into(), vec![ev("g2", false), ev("shared", false)]);
        state.merge(a);
        state.merge(b);
        let ids: Vec<&str> = state
            .evidence_for("graph")
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, vec!["g1", "shared", "g2", "shared#2"]);
        assert!(state.evidence_for("graph")[1].found);
        assert!(!state.evidence_for("graph")[3].found);
    }

    #[test]
    fn identical_evidence_from_two_branches_is_kept_once() {
        let mut state = AuditState::default();
        let mut a = StateUpdate::default();
        a.evidences.insert("graph".into(), vec![ev("g1", true)]);
        state.merge(a.clone());
        state.merge(a);
        assert_eq!(state.evidence_for("graph").len(), 1);
    }

    #[test]
    fn opinions_failures_and_errors_are_appended() {
        let mut state = AuditState::default();
        state.merge(StateUpdate {
            opinions: vec![opinion(Judge::Prosecutor, "c", 1)],
            errors: vec![AuditError {
                stage: Stage::DocAnalyst,
                dimensions: vec![],
                message: "e1".into(),
            }],
            ..Default::default()
        });
        state.merge(StateUpdate {
            opinions: vec![
                opinion(Judge::Prosecutor, "c", 1),
                opinion(Judge::Defense, "c", 5),
            ],
            failures: vec![JudgeFailure {
                judge: Judge::TechLead,
                criterion_id: "c".into(),
                reason: "timeout".into(),
            }],
            errors: vec![AuditError {
                stage: Stage::Judge,
                dimensions: vec!["c".into()],
                message: "e2".into(),
            }],
            ..Default::default()
        });
        // identical opinions from two branches are both kept: appended, never deduplicated
        assert_eq!(state.opinions.len(), 3);
        assert_eq!(state.opinions_for("c").count(), 3);
        assert_eq!(state.failures.len(), 1);
        let msgs: Vec<&str> = state.errors.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(msgs, vec!["e1", "e2"]);
    }
}
