//! Batch outputs, all derived from plain [`GradeRow`]s:
//!
//! - `DIR/<id>/report.md` + `report.html` + `report.json` per graded submission (`failed.md`
//!   when it failed);
//! - `DIR/grades.csv`: one row per manifest row, in manifest order;
//! - `DIR/summary.md`: leaderboard and per-criterion distributions;
//! - `DIR/index.html`: a static dashboard (no server, no script): which judges graded, a
//!   criterion × submission heatmap with relative links to each HTML report.
//!
//! **Exactness.** Criterion scores are integers. `overall_score` is the report's overall (the
//! mean of the assessed criteria to two decimals, e.g. `3.67`, or the security cap), written with
//! Rust's shortest round-trip formatting, and `overall_exact` gives the mean as an exact fraction
//! `sum/count` of the assessed criteria (e.g. `11/3`) whenever the overall is that mean (not
//! capped).

use crate::model::{AuditReport, CriterionFlag};
use crate::report::{Sidecar, outcome};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The state of one manifest row at the end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    /// Graded: a report exists.
    Done,
    /// Could not be graded; `failed_reason` says why.
    Failed,
    /// The manifest row is invalid; `failed_reason` says why.
    Invalid,
    /// Not graded yet (the run was interrupted): run the same command again to resume.
    Pending,
}

impl RowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Done => "done",
            RowStatus::Failed => "failed",
            RowStatus::Invalid => "invalid",
            RowStatus::Pending => "pending",
        }
    }
}

/// Everything the outputs say about one manifest row.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeRow {
    pub line: usize,
    pub id: String,
    pub repo: String,
    pub git_ref: Option<String>,
    pub commit: Option<String>,
    pub status: RowStatus,
    pub overall: Option<f64>,
    /// `sum/count` of the assessed criteria when it equals `overall`.
    pub overall_exact: Option<String>,
    /// Final score by dimension id (`None`: not assessed).
    pub scores: BTreeMap<String, Option<u8>>,
    pub needs_human_review: bool,
    pub degraded: bool,
    /// The repository could not be read: the row is shown but never ranked.
    pub repo_unreadable: bool,
    /// Short flag descriptions, e.g. `evidence_missing:git_forensic_analysis`.
    pub flags: Vec<String>,
    pub failed_reason: Option<String>,
    /// The judges that graded it: `offline (deterministic rules, no LLM)` or `LLM (persona:
    /// model, ...)`; empty without a report.
    pub judges: String,
}

impl GradeRow {
    /// A row with no report (failed, invalid or pending).
    pub fn without_report(
        line: usize,
        id: &str,
        repo: &str,
        status: RowStatus,
        reason: Option<String>,
    ) -> GradeRow {
        GradeRow {
            line,
            id: id.to_string(),
            repo: repo.to_string(),
            git_ref: None,
            commit: None,
            status,
            overall: None,
            overall_exact: None,
            scores: BTreeMap::new(),
            needs_human_review: false,
            degraded: false,
            repo_unreadable: false,
            flags: vec![],
            failed_reason: reason,
            judges: String::new(),
        }
    }

    /// A graded row, from its report and evidence (the sidecar). A criterion left out only
    /// because the run had no vision model by choice is an empty cell and a flag, but asks for
    /// no human review and does not make the row degraded (as it keeps an audit's exit code 0).
    pub fn from_report(line: usize, id: &str, repo: &str, sidecar: &Sidecar) -> GradeRow {
        let report = &sidecar.report;
        let mut scores = BTreeMap::new();
        let mut flags = Vec::new();
        let mut needs_review = false;
        for c in &report.criteria {
            let score = c.final_score.filter(|_| c.is_assessed());
            scores.insert(c.dimension_id.clone(), score.map(|s| s.get()));
            if outcome::without_vision_by_choice(report, c, &sidecar.evidence) {
                let s = format!("not_assessed_no_vision_model:{}", c.dimension_id);
                if !flags.contains(&s) {
                    flags.push(s);
                }
                continue;
            }
            if score.is_none() {
                needs_review = true;
            }
            for f in &c.flags {
                let name = match f {
                    CriterionFlag::EvidenceMissing { .. } => "evidence_missing",
                    CriterionFlag::NodeFailure { .. } => "node_failure",
                    CriterionFlag::JudgeFailed { .. } => "judge_failed",
                    CriterionFlag::NeedsHumanReview { .. } => {
                        needs_review = true;
                        "needs_human_review"
                    }
                    CriterionFlag::NotAssessed { .. } => {
                        needs_review = true;
                        "not_assessed"
                    }
                };
                let s = format!("{name}:{}", c.dimension_id);
                if !flags.contains(&s) {
                    flags.push(s);
                }
            }
        }
        let assessed: Vec<u64> = report
            .criteria
            .iter()
            .filter(|c| c.is_assessed())
            .filter_map(|c| c.final_score.map(|s| u64::from(s.get())))
            .collect();
        let overall_exact = exact_mean(&assessed).filter(|(sum, n, _)| {
            report
                .overall_score
                .is_some_and(|o| o == round2(*sum as f64 / *n as f64))
        });
        GradeRow {
            line,
            id: id.to_string(),
            repo: repo.to_string(),
            git_ref: None,
            commit: report.commit.clone(),
            status: RowStatus::Done,
            overall: report.overall_score,
            overall_exact: overall_exact.map(|(_, _, s)| s),
            scores,
            needs_human_review: needs_review,
            degraded: outcome::needs_attention(&outcome::notes(report, &sidecar.evidence)),
            repo_unreadable: report.commit.is_none(),
            flags,
            failed_reason: None,
            judges: judges_of(report),
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `(sum, count, "sum/count" reduced)` of integer scores; `None` when empty.
pub fn exact_mean(scores: &[u64]) -> Option<(u64, u64, String)> {
    if scores.is_empty() {
        return None;
    }
    let sum: u64 = scores.iter().sum();
    let n = scores.len() as u64;
    let g = gcd(sum, n).max(1);
    let text = if n / g == 1 {
        format!("{}", sum / g)
    } else {
        format!("{}/{}", sum / g, n / g)
    };
    Some((sum, n, text))
}

/// `x` to two decimals, as the report's overall is.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A mean for people: two decimals at most, trailing zeros dropped (`2.67`, `3.5`, `4`).
fn mean2(x: f64) -> String {
    let s = format!("{:.2}", round2(x));
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// Shortest round-trip decimal of an `f64` (never rounded).
pub fn exact_f64(x: f64) -> String {
    format!("{x}")
}

/// The dimensions (id, name) that get a column.
pub type Columns = Vec<(String, String)>;

/// The columns of `grades.csv` before the criteria.
pub const LEADING_COLUMNS: [&str; 8] = [
    "line",
    "id",
    "repo",
    "ref",
    "commit",
    "status",
    "overall_score",
    "overall_exact",
];
/// The columns of `grades.csv` after the criteria.
pub const TRAILING_COLUMNS: [&str; 4] =
    ["needs_human_review", "degraded", "flags", "failed_reason"];

pub fn grades_csv(rows: &[GradeRow], dims: &Columns) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = LEADING_COLUMNS.iter().map(|s| s.to_string()).collect();
    header.extend(dims.iter().map(|(id, _)| id.clone()));
    header.extend(TRAILING_COLUMNS.iter().map(|s| s.to_string()));
    w.write_record(&header)?;
    for r in rows {
        let mut rec: Vec<String> = vec![
            r.line.to_string(),
            csv_cell(&r.id),
            csv_cell(&r.repo),
            csv_cell(r.git_ref.as_deref().unwrap_or_default()),
            csv_cell(r.commit.as_deref().unwrap_or_default()),
            r.status.as_str().to_string(),
            r.overall.map(exact_f64).unwrap_or_default(),
            r.overall_exact.clone().unwrap_or_default(),
        ];
        for (id, _) in dims {
            rec.push(
                r.scores
                    .get(id)
                    .copied()
                    .flatten()
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
            );
        }
        rec.push(r.needs_human_review.to_string());
        rec.push(r.degraded.to_string());
        rec.push(csv_cell(&r.flags.join(";")));
        rec.push(csv_cell(r.failed_reason.as_deref().unwrap_or_default()));
        w.write_record(&rec)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Untrusted text in a Markdown table cell (see [`crate::report::inline`]).
fn md_cell(s: &str) -> String {
    crate::report::inline(s)
}

/// A CSV cell a spreadsheet will not run as a formula: text starting with `=`, `+`, `-`, `@`,
/// a tab or a carriage return gets a leading `'` (OWASP's advice); control characters are
/// replaced.
pub fn csv_cell(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{clean}")
    } else {
        clean
    }
}

impl GradeRow {
    /// Whether the row takes part in the ranking: graded, with an overall score, from a
    /// repository the grader could read.
    pub fn ranked(&self) -> bool {
        self.status == RowStatus::Done && self.overall.is_some() && !self.repo_unreadable
    }

    /// The overall score used for ranking (unranked rows sort last).
    fn rank_score(&self) -> f64 {
        if self.ranked() {
            self.overall.unwrap_or(f64::MIN)
        } else {
            f64::MIN
        }
    }
}

/// Competition rank ("1224") of a ranked row among graded rows: ties share a rank.
fn rank_of(rows: &[&GradeRow], r: &GradeRow) -> usize {
    let mine = r.rank_score();
    1 + rows.iter().filter(|o| o.rank_score() > mine).count()
}

/// Graded rows, ranked ones best first, then the unranked ones (ties by id).
fn leaderboard(rows: &[GradeRow]) -> Vec<&GradeRow> {
    let mut graded: Vec<&GradeRow> = rows
        .iter()
        .filter(|r| r.status == RowStatus::Done)
        .collect();
    graded.sort_by(|a, b| {
        b.rank_score()
            .total_cmp(&a.rank_score())
            .then_with(|| a.id.cmp(&b.id))
    });
    graded
}

pub fn summary_md(rows: &[GradeRow], dims: &Columns, title: &str) -> String {
    let mut s = String::new();
    let count = |st: RowStatus| rows.iter().filter(|r| r.status == st).count();
    let _ = writeln!(s, "# Batch summary: {}\n", md_cell(title));
    let _ = writeln!(
        s,
        "{} manifest rows: {} graded, {} failed, {} invalid, {} pending.\n",
        rows.len(),
        count(RowStatus::Done),
        count(RowStatus::Failed),
        count(RowStatus::Invalid),
        count(RowStatus::Pending)
    );
    let _ = writeln!(s, "Judges: {}.\n", md_cell(&judges_used(rows)));
    let _ = writeln!(
        s,
        "`overall` is the report's overall score (the mean of the assessed criteria, to two decimals), `exact` that mean as a fraction.\n"
    );
    let _ = writeln!(s, "## Leaderboard\n");
    let _ = writeln!(s, "| rank | id | overall | exact | flags |");
    let _ = writeln!(s, "|---:|---|---:|---:|---|");
    let board = leaderboard(rows);
    for r in &board {
        let _ = writeln!(
            s,
            "| {} | [{}]({}/report.md) | {} | {} | {} |",
            if r.ranked() {
                rank_of(&board, r).to_string()
            } else {
                "–".to_string()
            },
            md_cell(&r.id),
            r.id,
            r.overall.map(exact_f64).unwrap_or_else(|| "n/a".into()),
            r.overall_exact.clone().unwrap_or_default(),
            md_cell(&flag_summary(r))
        );
    }
    let _ = writeln!(s, "\n## Per-criterion distributions\n");
    let _ = writeln!(
        s,
        "| criterion | 1 | 2 | 3 | 4 | 5 | not assessed | mean | exact mean |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (id, name) in dims {
        let mut hist = [0u64; 5];
        let mut na = 0;
        let mut vals = Vec::new();
        for r in rows.iter().filter(|r| r.status == RowStatus::Done) {
            match r.scores.get(id).copied().flatten() {
                Some(v) if (1..=5).contains(&v) => {
                    hist[usize::from(v - 1)] += 1;
                    vals.push(u64::from(v));
                }
                _ => na += 1,
            }
        }
        let mean = exact_mean(&vals);
        let _ = writeln!(
            s,
            "| {} (`{}`) | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_cell(name),
            id,
            hist[0],
            hist[1],
            hist[2],
            hist[3],
            hist[4],
            na,
            mean.as_ref()
                .map(|(sum, n, _)| mean2(*sum as f64 / *n as f64))
                .unwrap_or_else(|| "n/a".into()),
            mean.map(|m| m.2).unwrap_or_default()
        );
    }
    let problems: Vec<&GradeRow> = rows
        .iter()
        .filter(|r| r.status != RowStatus::Done)
        .collect();
    if !problems.is_empty() {
        let _ = writeln!(s, "\n## Not graded\n");
        let _ = writeln!(s, "| line | id | status | reason |");
        let _ = writeln!(s, "|---:|---|---|---|");
        for r in problems {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                r.line,
                md_cell(&r.id),
                r.status.as_str(),
                md_cell(r.failed_reason.as_deref().unwrap_or(""))
            );
        }
    }
    s
}

fn flag_summary(r: &GradeRow) -> String {
    let mut parts = Vec::new();
    if r.repo_unreadable {
        parts.push("not ranked: the repository could not be read".to_string());
    }
    let not_assessed = r
        .flags
        .iter()
        .filter(|f| f.starts_with("not_assessed:"))
        .count();
    if not_assessed > 0 {
        parts.push(format!("{not_assessed} not assessed"));
    }
    let similar: Vec<&str> = r
        .flags
        .iter()
        .filter_map(|f| f.strip_prefix("similar_code_with="))
        .collect();
    if !similar.is_empty() {
        parts.push(format!("shares code with {}", similar.join(", ")));
    }
    if r.needs_human_review {
        parts.push("needs human review".to_string());
    }
    if r.degraded {
        let n = r.flags.len();
        parts.push(format!(
            "degraded ({n} flag{})",
            if n == 1 { "" } else { "s" }
        ));
    }
    parts.join(", ")
}

/// The judges a report was graded by, in a few words.
fn judges_of(report: &AuditReport) -> String {
    crate::report::judges_label(&report.metadata)
}

/// The judges of the graded rows: each configuration once, with how many rows it graded when
/// there is more than one (a batch resumed with other judges).
fn judges_used(rows: &[GradeRow]) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for r in rows.iter().filter(|r| !r.judges.is_empty()) {
        match seen.iter_mut().find(|(j, _)| *j == r.judges) {
            Some((_, n)) => *n += 1,
            None => seen.push((&r.judges, 1)),
        }
    }
    match seen.as_slice() {
        [] => "none yet (no submission graded)".to_string(),
        [(j, _)] => j.to_string(),
        many => many
            .iter()
            .map(|(j, n)| {
                format!(
                    "{j} for {}",
                    crate::words::count(*n, "submission", "submissions")
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Escapes a path segment for an href (ids are restricted to safe characters; this is defence
/// in depth).
fn href_seg(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            o.push(b as char);
        } else {
            let _ = write!(o, "%{b:02X}");
        }
    }
    o
}

const HEAT: [&str; 5] = ["#d73027", "#fc8d59", "#fee08b", "#91cf60", "#1a9850"];

/// The dashboard's page: handlebars, every value escaped by handlebars' own HTML escaping, as
/// every page the tool writes (no triple-stash, no escaping by hand); the code similarity
/// section, when the batch has one, through [`SIMILARITY_SECTION_TEMPLATE`].
const DASHBOARD_TEMPLATE: &str = include_str!("templates/dashboard.html.hbs");

/// The code similarity section: the dashboard's (a partial of [`DASHBOARD_TEMPLATE`]) and
/// `similarity.html`'s (see `super::similarity`).
pub const SIMILARITY_SECTION_TEMPLATE: &str = include_str!("templates/similarity_section.html.hbs");

/// What the dashboard shows: plain text and numbers, escaped by the template; `S`: the code
/// similarity section's view.
#[derive(Serialize)]
struct Dashboard<'a, S: Serialize> {
    title: &'a str,
    count: Counts,
    judges: String,
    heat: Vec<Heat>,
    criteria: Vec<Criterion<'a>>,
    rows: Vec<DashboardRow<'a>>,
    similarity: Option<&'a S>,
}

#[derive(Serialize)]
struct Counts {
    all: usize,
    done: usize,
    failed: usize,
    invalid: usize,
    pending: usize,
}

/// One colour of the legend.
#[derive(Serialize)]
struct Heat {
    color: &'static str,
    score: usize,
}

#[derive(Serialize)]
struct Criterion<'a> {
    id: &'a str,
    name: &'a str,
}

/// One row of the table: graded rows by rank, then the others in manifest order.
#[derive(Serialize)]
struct DashboardRow<'a> {
    status: &'static str,
    /// The rank, empty for a row not ranked.
    rank: String,
    repo: &'a str,
    /// The id as a path segment of the row's links.
    href: String,
    id: &'a str,
    /// Links to the report (graded) or to `failed.md` (failed).
    report: bool,
    failed: bool,
    overall: Option<Overall>,
    cells: Vec<Cell<'a>>,
    /// Graded, nothing flagged.
    ok: bool,
    /// Graded, with these flags.
    flags: Option<String>,
    /// Not graded: why.
    reason: &'a str,
}

#[derive(Serialize)]
struct Overall {
    exact: String,
    shown: String,
}

/// A criterion's cell: its score and colour, or not assessed; `mark`: flagged.
#[derive(Serialize)]
struct Cell<'a> {
    id: &'a str,
    score: Option<u8>,
    color: &'static str,
    mark: &'static str,
}

/// The dashboard without a code similarity section.
pub fn index_html(rows: &[GradeRow], dims: &Columns, title: &str) -> Result<String, OutputError> {
    index_html_with(rows, dims, title, None::<&()>)
}

/// The dashboard, with the code similarity section after the table when `similarity` is given
/// (the view [`SIMILARITY_SECTION_TEMPLATE`] renders).
pub fn index_html_with<S: Serialize>(
    rows: &[GradeRow],
    dims: &Columns,
    title: &str,
    similarity: Option<&S>,
) -> Result<String, OutputError> {
    let mut hb = handlebars::Handlebars::new();
    hb.register_partial("similarity_section", SIMILARITY_SECTION_TEMPLATE)
        .map_err(|e| OutputError::DashboardTemplate(Box::new(e)))?;
    hb.render_template(
        DASHBOARD_TEMPLATE,
        &dashboard(rows, dims, title, similarity),
    )
    .map_err(|e| OutputError::Dashboard(Box::new(e)))
}

fn dashboard<'a, S: Serialize>(
    rows: &'a [GradeRow],
    dims: &'a Columns,
    title: &'a str,
    similarity: Option<&'a S>,
) -> Dashboard<'a, S> {
    let count = |st: RowStatus| rows.iter().filter(|r| r.status == st).count();
    let board = leaderboard(rows);
    let mut ordered: Vec<&GradeRow> = board.clone();
    ordered.extend(rows.iter().filter(|r| r.status != RowStatus::Done));
    Dashboard {
        title,
        count: Counts {
            all: rows.len(),
            done: count(RowStatus::Done),
            failed: count(RowStatus::Failed),
            invalid: count(RowStatus::Invalid),
            pending: count(RowStatus::Pending),
        },
        judges: judges_used(rows),
        heat: HEAT
            .iter()
            .enumerate()
            .map(|(i, color)| Heat {
                color,
                score: i + 1,
            })
            .collect(),
        criteria: dims
            .iter()
            .map(|(id, name)| Criterion { id, name })
            .collect(),
        rows: ordered
            .into_iter()
            .map(|r| dashboard_row(r, &board, dims))
            .collect(),
        similarity,
    }
}

fn dashboard_row<'a>(r: &'a GradeRow, board: &[&GradeRow], dims: &'a Columns) -> DashboardRow<'a> {
    let (report, failed) = (r.status == RowStatus::Done, r.status == RowStatus::Failed);
    let flags = if report {
        flag_summary(r)
    } else {
        String::new()
    };
    DashboardRow {
        status: r.status.as_str(),
        rank: if r.ranked() {
            rank_of(board, r).to_string()
        } else {
            String::new()
        },
        repo: &r.repo,
        href: href_seg(&r.id),
        id: if report || failed || !r.id.is_empty() {
            &r.id
        } else {
            "(no id)"
        },
        report,
        failed,
        overall: r.overall.map(|o| Overall {
            exact: exact_f64(o),
            shown: format!("{o:.2}"),
        }),
        cells: dims.iter().map(|(id, _)| cell(r, id)).collect(),
        ok: report && flags.is_empty(),
        flags: Some(flags).filter(|f| !f.is_empty()),
        reason: r.failed_reason.as_deref().unwrap_or(""),
    }
}

fn cell<'a>(r: &GradeRow, id: &'a str) -> Cell<'a> {
    // A criterion left out only because no vision model was configured is no flag (the row
    // says ok): its cell says n/a without the mark.
    let by_choice = format!("not_assessed_no_vision_model:{id}");
    let flagged = r
        .flags
        .iter()
        .any(|f| f.ends_with(&format!(":{id}")) && *f != by_choice);
    let score = r
        .scores
        .get(id)
        .copied()
        .flatten()
        .filter(|v| (1..=5).contains(v));
    Cell {
        id,
        score,
        color: score.map_or("", |v| HEAT[usize::from(v - 1)]),
        mark: if flagged { "⚑" } else { "" },
    }
}

/// Writes a file atomically (temporary file + rename), so a crash never leaves half a file.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    crate::files::write_atomic(path, contents)
}

/// Why an output of the batch could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the report of {id}: {source}")]
    Report {
        id: String,
        #[source]
        source: crate::report::ReportError,
    },
    #[error("cannot build grades.csv: {0}")]
    Csv(#[source] csv::Error),
    #[error("cannot build index.html: {0}")]
    Dashboard(#[source] Box<handlebars::RenderError>),
    #[error("cannot build index.html: {0}")]
    DashboardTemplate(#[source] Box<handlebars::TemplateError>),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The directory of a submission's outputs.
pub fn submission_dir(out: &Path, id: &str) -> PathBuf {
    out.join(id)
}

/// Writes `report.md`, `report.html` and `report.json` of a graded submission (and removes a
/// stale `failed.md`).
pub fn write_report(
    out: &Path,
    id: &str,
    sidecar: &crate::report::Sidecar,
) -> Result<(), OutputError> {
    let dir = submission_dir(out, id);
    std::fs::create_dir_all(&dir).map_err(|source| OutputError::CreateDir {
        dir: dir.clone(),
        source,
    })?;
    crate::report::write(sidecar, &dir.join("report.md")).map_err(|source| {
        OutputError::Report {
            id: id.to_string(),
            source,
        }
    })?;
    let _ = std::fs::remove_file(dir.join("failed.md"));
    Ok(())
}

/// Writes `failed.md` for a submission that could not be graded (and removes a stale report,
/// so no output shows a grade the store does not stand behind).
/// Writes `failed.md`. `remove_reports`: the failure replaces the submission's report (its
/// grading failed); `false` keeps an existing report (the batch store failed, not the
/// submission: a good report is never deleted for that).
pub fn write_failure(
    out: &Path,
    id: &str,
    repo: &str,
    reason: &str,
    remove_reports: bool,
) -> Result<(), OutputError> {
    let dir = submission_dir(out, id);
    let (repo, reason) = (crate::report::inline(repo), crate::report::inline(reason));
    let text = format!(
        "# {id}: not graded\n\nRepository: {repo}\n\nReason: {reason}\n\nFix the cause and run the same `auditor batch` command again: failed submissions are retried.\n"
    );
    let path = dir.join("failed.md");
    write_atomic(&path, text.as_bytes()).map_err(|source| OutputError::Write { path, source })?;
    if remove_reports {
        let _ = std::fs::remove_file(dir.join("report.md"));
        let _ = std::fs::remove_file(dir.join("report.json"));
        let _ = std::fs::remove_file(dir.join("report.html"));
    }
    Ok(())
}

/// Writes grades.csv, summary.md and index.html, the dashboard with its code similarity
/// section when there is one (see [`index_html_with`]).
pub fn write_tables_with<S: Serialize>(
    out: &Path,
    rows: &[GradeRow],
    dims: &Columns,
    title: &str,
    similarity: Option<&S>,
) -> Result<(), OutputError> {
    let csv = grades_csv(rows, dims).map_err(OutputError::Csv)?;
    let files = [
        ("grades.csv", csv),
        ("summary.md", summary_md(rows, dims, title)),
        (
            "index.html",
            index_html_with(rows, dims, title, similarity)?,
        ),
    ];
    for (name, text) in files {
        let path = out.join(name);
        write_atomic(&path, text.as_bytes())
            .map_err(|source| OutputError::Write { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims() -> Columns {
        vec![
            ("a".into(), "Alpha".into()),
            ("b".into(), "Beta <b>".into()),
            ("c".into(), "Gamma".into()),
        ]
    }

    fn graded(id: &str, scores: [Option<u8>; 3], overall: Option<f64>) -> GradeRow {
        let mut r = GradeRow::without_report(2, id, "https://h/o/r.git", RowStatus::Done, None);
        for (k, v) in ["a", "b", "c"].iter().zip(scores) {
            r.scores.insert(k.to_string(), v);
        }
        let vals: Vec<u64> = scores.iter().flatten().map(|v| u64::from(*v)).collect();
        r.overall = overall;
        r.overall_exact = exact_mean(&vals).map(|m| m.2);
        r
    }

    fn sidecar_of(
        report: AuditReport,
        evidence: BTreeMap<String, Vec<crate::model::Evidence>>,
    ) -> Sidecar {
        Sidecar {
            report,
            evidence,
            judge_failures: vec![],
            repo: None,
            pdf: None,
        }
    }

    #[test]
    fn no_vision_model_by_choice_is_an_empty_cell_without_review_or_degradation() {
        use crate::report::outcome::tests::{no_model, report};
        let (r, ev) = report(vec![no_model()], None, vec![]);
        let row = GradeRow::from_report(2, "s1", "repo", &sidecar_of(r, ev));
        assert_eq!(row.scores.get("swarm_visual"), Some(&None));
        assert!(!row.needs_human_review, "{row:?}");
        assert!(!row.degraded, "{row:?}");
        assert!(
            row.flags
                .contains(&"not_assessed_no_vision_model:swarm_visual".to_string()),
            "{:?}",
            row.flags
        );
    }

    #[test]
    fn a_vision_model_that_failed_asks_for_review() {
        use crate::report::outcome::tests::report;
        let rejected = crate::model::Evidence::missing(
            "vision.swarm_visual.rejected",
            crate::model::Detective::VisionInspector,
            "classify the diagrams",
            "report.pdf p.2",
            "the model m rejected the image request",
        );
        let (r, ev) = report(vec![rejected], Some("m"), vec![]);
        let row = GradeRow::from_report(2, "s1", "repo", &sidecar_of(r, ev));
        assert_eq!(row.scores.get("swarm_visual"), Some(&None));
        assert!(row.needs_human_review, "{row:?}");
        assert!(row.degraded, "{row:?}");
    }

    #[test]
    fn exact_fractions_and_floats() {
        assert_eq!(exact_mean(&[4, 4, 3]).unwrap().2, "11/3");
        assert_eq!(exact_mean(&[4, 2]).unwrap().2, "3");
        assert_eq!(exact_mean(&[]), None);
        assert_eq!(exact_f64(11.0 / 3.0), "3.6666666666666665");
        assert_eq!(exact_f64(4.0), "4");
        let back: f64 = exact_f64(11.0 / 3.0).parse().unwrap();
        assert_eq!(back, 11.0 / 3.0);
    }

    #[test]
    fn csv_cells_are_never_formulas() {
        for (input, expected) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "' =1"),
            ("s1", "s1"),
            ("a\u{1b}[31m", "a [31m"),
        ] {
            assert_eq!(csv_cell(input), expected, "{input:?}");
        }
    }

    #[test]
    fn csv_has_every_row_and_exact_scores() {
        let rows = vec![
            graded("s1", [Some(4), Some(4), Some(3)], Some(11.0 / 3.0)),
            GradeRow::without_report(
                3,
                "s2",
                "r",
                RowStatus::Failed,
                Some("clone failed, \"x\"".into()),
            ),
            GradeRow::without_report(4, "", "", RowStatus::Invalid, Some("missing id".into())),
        ];
        let csv = grades_csv(&rows, &dims()).unwrap();
        let mut rd = csv::Reader::from_reader(csv.as_bytes());
        let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            &header[6..11],
            ["overall_score", "overall_exact", "a", "b", "c"]
        );
        let recs: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(recs.len(), 3);
        assert_eq!(&recs[0][6], "3.6666666666666665");
        assert_eq!(&recs[0][7], "11/3");
        assert_eq!(&recs[1][5], "failed");
        assert_eq!(&recs[1][14], "clone failed, \"x\"");
        assert_eq!(&recs[2][5], "invalid");
    }

    #[test]
    fn summary_and_dashboard() {
        let rows = vec![
            graded("low", [Some(1), Some(2), None], Some(1.5)),
            graded("high", [Some(5), Some(5), Some(4)], Some(14.0 / 3.0)),
            graded("high2", [Some(4), Some(5), Some(5)], Some(14.0 / 3.0)),
            GradeRow::without_report(
                5,
                "bad<id>",
                "r",
                RowStatus::Failed,
                Some("<script>".into()),
            ),
        ];
        let md = summary_md(&rows, &dims(), "t");
        let high = md.find("[high]").unwrap();
        let low = md.find("[low]").unwrap();
        assert!(high < low, "leaderboard best first:\n{md}");
        assert!(
            md.contains("| 1 | [high]") && md.contains("| 1 | [high2]"),
            "ties share a rank:\n{md}"
        );
        assert!(md.contains("| 3 | [low]"), "{md}");
        assert!(
            md.contains("| Alpha (`a`) | 1 | 0 | 0 | 1 | 1 | 0 | 3.33 | 10/3 |"),
            "{md}"
        );
        assert!(
            md.contains("| Gamma (`c`) | 0 | 0 | 0 | 1 | 1 | 1 | 4.5 | 9/2 |"),
            "{md}"
        );
        let html = index_html(&rows, &dims(), "t").unwrap();
        assert!(html.contains("href=\"high/report.html\""));
        assert!(html.contains("href=\"high/report.md\""));
        assert!(
            html.contains("<b>Judges:</b> none yet (no submission graded)."),
            "the rows here carry no judges: {html}"
        );
        let mut mixed = rows.clone();
        mixed[0].judges = "offline judges (deterministic rules, no LLM)".into();
        mixed[1].judges = "LLM judges (prosecutor: <m>)".into();
        mixed[2].judges = "offline judges (deterministic rules, no LLM)".into();
        let html = index_html(&mixed, &dims(), "t").unwrap();
        assert!(
            html.contains("<b>Judges:</b> offline judges (deterministic rules, no LLM) for 2 submissions; LLM judges (prosecutor: &lt;m&gt;) for 1 submission."),
            "{html}"
        );
        assert!(html.contains("Beta &lt;b&gt;"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("bad%3Cid%3E/failed.md"));
        assert_eq!(html.matches("<tr class=").count(), 4);
        // the one escaping of every page the tool writes: handlebars' own (quotes, `=` and
        // backticks too, which an unquoted attribute would need)
        let hostile = index_html(&rows, &dims(), "t' onload=`x`").unwrap();
        assert!(
            hostile.contains("t&#x27; onload&#x3D;&#x60;x&#x60;"),
            "{hostile}"
        );
    }

    #[test]
    fn a_row_whose_repository_could_not_be_read_is_shown_but_never_ranked() {
        let mut unreadable = graded("zz", [None, None, Some(1)], Some(1.0));
        unreadable.repo_unreadable = true;
        unreadable.needs_human_review = true;
        unreadable.flags = vec!["not_assessed:a".into(), "not_assessed:b".into()];
        let rows = vec![
            graded("x", [Some(2), Some(3), Some(4)], Some(3.0)),
            unreadable,
            graded("y", [Some(1), Some(1), Some(2)], Some(4.0 / 3.0)),
        ];
        let dims: Columns = ["a", "b", "c"]
            .iter()
            .map(|d| (d.to_string(), d.to_uppercase()))
            .collect();
        let md = summary_md(&rows, &dims, "t");
        assert!(md.contains("| 1 | [x]"), "{md}");
        assert!(md.contains("| 2 | [y]"), "{md}");
        assert!(md.contains("| – | [zz]"), "{md}");
        assert!(
            md.contains("not ranked: the repository could not be read"),
            "{md}"
        );
        assert!(md.contains("2 not assessed"), "{md}");
        let html = index_html(&rows, &dims, "t").unwrap();
        assert!(html.contains("a: not assessed\">n/a"), "{html}");
        let csv = grades_csv(&rows, &dims).unwrap();
        let zz = csv.lines().find(|l| l.contains(",zz,")).unwrap();
        assert!(zz.contains(",,,1,true,"), "empty cells, needs review: {zz}");
    }
}
