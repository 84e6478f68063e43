//! `auditor calibrate`: the auditor's grades against a human's, per criterion and overall.
//!
//! Inputs: the auditor's `grades.csv` (from `auditor batch`; a batch output directory stands for
//! its `grades.csv`) and a human CSV `id,criterion,score` (extra columns ignored, except a
//! `justification`/`comment`/`note` column, quoted beside the largest disagreements). The human's
//! criteria are matched to the auditor's columns by id, else by name, else by the words they
//! share (`git_forensics` → `git_forensic_analysis`, `report_quality` → `report_accuracy`); a
//! criterion that matches no column, or two equally, is reported, never guessed.
//!
//! Figures, over the pairs both graded (a criterion the auditor did not assess is counted apart,
//! never as a disagreement): exact agreement, agreement within one point, quadratic-weighted
//! Cohen's kappa on the 1–5 scale, mean signed difference auditor − human (bias) and the 5×5
//! confusion table (rows: human, columns: auditor).
//!
//! Pure functions over plain data; the CLI reads the files and prints.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A column of `grades.csv` that is not a criterion.
fn is_fixed_column(h: &str) -> bool {
    use crate::batch::outputs::{LEADING_COLUMNS, TRAILING_COLUMNS};
    LEADING_COLUMNS.contains(&h) || TRAILING_COLUMNS.contains(&h)
}

/// A bad input file: what, where, how to fix.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// The CSV header of `file` cannot be read.
    #[error("{file}: cannot read the header: {source}")]
    Header {
        file: String,
        #[source]
        source: csv::Error,
    },
    /// A CSV row of `file` cannot be read.
    #[error("{file}: line {line}: {source}")]
    Row {
        file: String,
        line: usize,
        #[source]
        source: csv::Error,
    },
    /// Human criteria that match no criterion of the auditor's, or several.
    #[error(
        "human grades: {}. Name each criterion by the auditor's criterion id (the grades.csv columns) or its rubric name",
        words(.0)
    )]
    Unmatched(Vec<Unmatched>),
    /// Anything else wrong with a file's content, said in full.
    #[error("{0}")]
    Content(String),
}

/// The texts of `problems`, one after the other.
fn words(problems: &[Unmatched]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A human criterion that names none of the auditor's criteria, or several equally.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unmatched {
    #[error(
        "criterion {criterion:?} matches several criteria equally ({}): use the criterion id",
        .tied.join(", ")
    )]
    Ambiguous {
        criterion: String,
        tied: Vec<String>,
    },
    #[error(
        "criterion {criterion:?} matches none of the auditor's criteria ({})",
        .columns.join(", ")
    )]
    NoMatch {
        criterion: String,
        columns: Vec<String>,
    },
}

/// The auditor's grades: criterion column ids, and by submission id the score of each
/// criterion (`None`: not assessed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditorGrades {
    pub criteria: Vec<String>,
    pub rows: BTreeMap<String, BTreeMap<String, Option<u8>>>,
}

/// One human grade.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanGrade {
    pub line: usize,
    pub id: String,
    pub criterion: String,
    pub score: u8,
    pub note: Option<String>,
}

fn score_of(raw: &str, what: &str) -> Result<Option<u8>, CalibrateError> {
    let t = raw.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<u8>() {
        Ok(v) if (1..=5).contains(&v) => Ok(Some(v)),
        _ => Err(CalibrateError::Content(format!(
            "{what}: score {t:?} is not an integer from 1 to 5"
        ))),
    }
}

/// Reads the auditor's `grades.csv` (text). `source` names the file in errors.
pub fn parse_grades(text: &str, source: &str) -> Result<AuditorGrades, CalibrateError> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header: Vec<String> = r
        .headers()
        .map_err(|e| CalibrateError::Header {
            file: source.to_string(),
            source: e,
        })?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let id_col = header.iter().position(|h| h == "id").ok_or_else(|| {
        CalibrateError::Content(format!(
            "{source}: no `id` column: give the grades.csv written by `auditor batch` (or its output directory)"
        ))
    })?;
    let status_col = header.iter().position(|h| h == "status");
    let criteria: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.is_empty() && !is_fixed_column(h))
        .map(|(i, h)| (i, h.clone()))
        .collect();
    if criteria.is_empty() {
        return Err(CalibrateError::Content(format!(
            "{source}: no criterion column (expected one column per rubric criterion, as `auditor batch` writes them)"
        )));
    }
    let mut out = AuditorGrades {
        criteria: criteria.iter().map(|(_, c)| c.clone()).collect(),
        rows: BTreeMap::new(),
    };
    for (n, rec) in r.records().enumerate() {
        let line = n + 2;
        let rec = rec.map_err(|e| CalibrateError::Row {
            file: source.to_string(),
            line,
            source: e,
        })?;
        let id = rec.get(id_col).unwrap_or("").trim().to_string();
        if id.is_empty() {
            continue;
        }
        // Rows that were not graded (failed, invalid, pending) hold no scores.
        if status_col.is_some_and(|c| rec.get(c).is_some_and(|s| s.trim() != "done")) {
            out.rows.entry(id).or_default();
            continue;
        }
        let mut scores = BTreeMap::new();
        for (i, c) in &criteria {
            let what = format!("{source}: line {line}, column {c}");
            scores.insert(c.clone(), score_of(rec.get(*i).unwrap_or(""), &what)?);
        }
        out.rows.insert(id, scores);
    }
    Ok(out)
}

/// Reads the human CSV (`id,criterion,score`, any column order, extra columns ignored).
pub fn parse_human(text: &str, source: &str) -> Result<Vec<HumanGrade>, CalibrateError> {
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = r
        .headers()
        .map_err(|e| CalibrateError::Header {
            file: source.to_string(),
            source: e,
        })?
        .iter()
        .map(|h| h.trim().to_lowercase())
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(id_col), Some(crit_col), Some(score_col)) =
        (col("id"), col("criterion"), col("score"))
    else {
        return Err(CalibrateError::Content(format!(
            "{source}: the header must have the columns id, criterion and score (found: {}); one row per submission and criterion",
            header.join(", ")
        )));
    };
    let note_col = ["justification", "comment", "note", "notes"]
        .iter()
        .find_map(|n| col(n));
    let mut out = Vec::new();
    for (n, rec) in r.records().enumerate() {
        let line = n + 2;
        let rec = rec.map_err(|e| CalibrateError::Row {
            file: source.to_string(),
            line,
            source: e,
        })?;
        let id = rec.get(id_col).unwrap_or("").trim().to_string();
        let criterion = rec.get(crit_col).unwrap_or("").trim().to_string();
        if id.is_empty() && criterion.is_empty() {
            continue;
        }
        let what = format!("{source}: line {line}");
        let Some(score) = score_of(rec.get(score_col).unwrap_or(""), &what)? else {
            continue;
        };
        if id.is_empty() || criterion.is_empty() {
            return Err(CalibrateError::Content(format!(
                "{what}: id and criterion must not be empty"
            )));
        }
        out.push(HumanGrade {
            line,
            id,
            criterion,
            score,
            note: note_col
                .and_then(|c| rec.get(c))
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
        });
    }
    Ok(out)
}

/// Lower-case word stems of an id or name (`Git Forensic Analysis` → git, forensic, analysis;
/// a final `s` is dropped so `forensics` meets `forensic`).
fn stems(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(|w| {
            let w = w.to_ascii_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if stem.len() >= 3 => stem.to_string(),
                _ => w,
            }
        })
        .collect()
}

/// Matches a human criterion to one of the auditor's criteria: same id, else same name (from
/// `names`: id → name), else the most shared words with the id and name, when unique.
pub fn match_criterion(
    criterion: &str,
    columns: &[String],
    names: &BTreeMap<String, String>,
) -> Result<String, Unmatched> {
    let c = criterion.trim();
    if let Some(id) = columns.iter().find(|id| id.eq_ignore_ascii_case(c)) {
        return Ok(id.clone());
    }
    if let Some(id) = columns.iter().find(|id| {
        names
            .get(*id)
            .is_some_and(|n| n.trim().eq_ignore_ascii_case(c))
    }) {
        return Ok(id.clone());
    }
    let mine = stems(c);
    let mut scored: Vec<(usize, &String)> = columns
        .iter()
        .map(|id| {
            let mut theirs = stems(id);
            if let Some(n) = names.get(id) {
                theirs.extend(stems(n));
            }
            (mine.iter().filter(|w| theirs.contains(w)).count(), id)
        })
        .collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    match scored.as_slice() {
        [(best, id), rest @ ..] if *best > 0 && rest.first().is_none_or(|(n, _)| n < best) => {
            Ok((*id).clone())
        }
        [(best, _), ..] if *best > 0 => Err(Unmatched::Ambiguous {
            criterion: c.to_string(),
            tied: scored
                .iter()
                .filter(|(n, _)| n == best)
                .map(|(_, id)| (*id).clone())
                .collect(),
        }),
        _ => Err(Unmatched::NoMatch {
            criterion: c.to_string(),
            columns: columns.to_vec(),
        }),
    }
}

/// Agreement figures over a set of (human, auditor) pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Pairs graded by both.
    pub n: usize,
    pub exact: Option<f64>,
    pub within_one: Option<f64>,
    /// Quadratic-weighted Cohen's kappa on the 1–5 scale (`None`: undefined, e.g. no pair, or
    /// both graders always gave the same single score).
    pub kappa: Option<f64>,
    /// Mean of auditor − human.
    pub bias: Option<f64>,
    pub mean_auditor: Option<f64>,
    pub mean_human: Option<f64>,
    /// `confusion[h-1][a-1]`: pairs the human scored `h` and the auditor `a`.
    pub confusion: [[usize; 5]; 5],
    /// Criteria the human graded but the auditor did not assess (excluded from the figures).
    pub not_assessed: usize,
}

/// Quadratic-weighted Cohen's kappa of a 5×5 confusion table (rows: rater A, columns: rater B):
/// `1 − Σ w·O / Σ w·E` with `w = (i−j)²/(k−1)²` and `E` the product of the margins over `n`.
pub fn quadratic_kappa(confusion: &[[usize; 5]; 5]) -> Option<f64> {
    let n: usize = confusion.iter().flatten().sum();
    if n == 0 {
        return None;
    }
    let rows: Vec<f64> = confusion
        .iter()
        .map(|r| r.iter().sum::<usize>() as f64)
        .collect();
    let cols: Vec<f64> = (0..5)
        .map(|j| confusion.iter().map(|r| r[j]).sum::<usize>() as f64)
        .collect();
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..5 {
        for j in 0..5 {
            let w = ((i as f64 - j as f64) / 4.0).powi(2);
            observed += w * confusion[i][j] as f64;
            expected += w * rows[i] * cols[j] / n as f64;
        }
    }
    if expected == 0.0 {
        return None;
    }
    Some(1.0 - observed / expected)
}

/// The figures of a list of (human, auditor) pairs plus a count of unassessed ones.
pub fn agreement(pairs: &[(u8, u8)], not_assessed: usize) -> Agreement {
    let mut confusion = [[0usize; 5]; 5];
    for (h, a) in pairs {
        confusion[usize::from(h - 1)][usize::from(a - 1)] += 1;
    }
    let n = pairs.len();
    let share = |f: &dyn Fn(i32) -> bool| {
        (n > 0).then(|| {
            pairs
                .iter()
                .filter(|(h, a)| f(i32::from(*a) - i32::from(*h)))
                .count() as f64
                / n as f64
        })
    };
    let mean =
        |f: &dyn Fn(&(u8, u8)) -> f64| (n > 0).then(|| pairs.iter().map(f).sum::<f64>() / n as f64);
    Agreement {
        n,
        exact: share(&|d| d == 0),
        within_one: share(&|d| d.abs() <= 1),
        kappa: quadratic_kappa(&confusion),
        bias: mean(&|(h, a)| f64::from(*a) - f64::from(*h)),
        mean_auditor: mean(&|(_, a)| f64::from(*a)),
        mean_human: mean(&|(h, _)| f64::from(*h)),
        confusion,
        not_assessed,
    }
}

/// One disagreement between the two graders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    pub id: String,
    pub criterion: String,
    pub auditor: u8,
    pub human: u8,
    /// auditor − human.
    pub difference: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_note: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub overall: Agreement,
    /// By criterion id, in the auditor's column order.
    pub criteria: Vec<(String, Agreement)>,
    /// Largest |auditor − human| first.
    pub disagreements: Vec<Disagreement>,
    /// How each human criterion was matched (human name → criterion id), when not by id.
    pub matched: BTreeMap<String, String>,
    /// Human grades for submissions the auditor has no row for.
    pub unknown_submissions: Vec<String>,
    /// Submissions in the auditor's grades the human did not grade.
    pub ungraded_by_human: Vec<String>,
    /// Human grades whose submission the auditor could not grade at all (failed rows).
    pub submissions: usize,
}

/// Compares the grades. `names`: criterion id → name (from the rubric), for matching.
pub fn calibrate(
    auditor: &AuditorGrades,
    human: &[HumanGrade],
    names: &BTreeMap<String, String>,
    top: usize,
) -> Result<Calibration, CalibrateError> {
    let mut matched = BTreeMap::new();
    let mut problems = Vec::new();
    let mut by_criterion: BTreeMap<String, (Vec<(u8, u8)>, usize)> = BTreeMap::new();
    let mut all_pairs = Vec::new();
    let mut all_na = 0;
    let mut disagreements = Vec::new();
    let mut unknown = Vec::new();
    let mut unknown_seen = std::collections::HashSet::new();
    let mut seen = std::collections::BTreeSet::new();
    for g in human {
        let id = match match_criterion(&g.criterion, &auditor.criteria, names) {
            Ok(id) => id,
            Err(e) => {
                if !problems.contains(&e) {
                    problems.push(e);
                }
                continue;
            }
        };
        if !id.eq_ignore_ascii_case(&g.criterion) {
            matched.insert(g.criterion.clone(), id.clone());
        }
        if !seen.insert((g.id.clone(), id.clone())) {
            return Err(CalibrateError::Content(format!(
                "human grades: line {}: {} is graded twice on {id}",
                g.line, g.id
            )));
        }
        let Some(row) = auditor.rows.get(&g.id) else {
            if unknown_seen.insert(g.id.as_str()) {
                unknown.push(g.id.clone());
            }
            continue;
        };
        let entry = by_criterion.entry(id.clone()).or_default();
        match row.get(&id).copied().flatten() {
            Some(a) => {
                entry.0.push((g.score, a));
                all_pairs.push((g.score, a));
                let d = i32::from(a) - i32::from(g.score);
                if d != 0 {
                    disagreements.push(Disagreement {
                        id: g.id.clone(),
                        criterion: id,
                        auditor: a,
                        human: g.score,
                        difference: d,
                        human_note: g.note.clone(),
                    });
                }
            }
            None => {
                entry.1 += 1;
                all_na += 1;
            }
        }
    }
    if !problems.is_empty() {
        return Err(CalibrateError::Unmatched(problems));
    }
    disagreements.sort_by(|a, b| {
        b.difference
            .abs()
            .cmp(&a.difference.abs())
            .then_with(|| a.id.cmp(&b.id))
            .then_with(|| a.criterion.cmp(&b.criterion))
    });
    disagreements.truncate(top);
    let graded: std::collections::BTreeSet<&String> = human.iter().map(|g| &g.id).collect();
    Ok(Calibration {
        overall: agreement(&all_pairs, all_na),
        criteria: auditor
            .criteria
            .iter()
            .filter_map(|c| {
                by_criterion
                    .get(c)
                    .map(|(pairs, na)| (c.clone(), agreement(pairs, *na)))
            })
            .collect(),
        disagreements,
        matched,
        unknown_submissions: unknown,
        ungraded_by_human: auditor
            .rows
            .keys()
            .filter(|id| !graded.contains(id))
            .cloned()
            .collect(),
        submissions: auditor.rows.keys().filter(|id| graded.contains(id)).count(),
    })
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.0}%", v * 100.0))
        .unwrap_or_else(|| "n/a".into())
}

fn num(x: Option<f64>, signed: bool) -> String {
    // A value that rounds to zero is printed as zero, never "-0.00".
    let x = x.map(|v| if (v * 100.0).round() == 0.0 { 0.0 } else { v });
    match x {
        Some(v) if signed => format!("{v:+.2}"),
        Some(v) => format!("{v:.2}"),
        None => "n/a".into(),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn confusion_md(out: &mut String, c: &[[usize; 5]; 5]) {
    let _ = writeln!(out, "| human ↓ / auditor → | 1 | 2 | 3 | 4 | 5 |");
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|");
    for (i, row) in c.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(j, v)| match (v, i == j) {
                (0, _) => "·".to_string(),
                (v, true) => format!("**{v}**"),
                (v, false) => v.to_string(),
            })
            .collect();
        let _ = writeln!(out, "| **{}** | {} |", i + 1, cells.join(" | "));
    }
}

/// Submissions named in a list of the Markdown (the JSON has them all).
const LISTED: usize = 50;

/// The first [`LISTED`] ids, and how many more.
fn listed(ids: &[String]) -> String {
    let mut s = ids
        .iter()
        .take(LISTED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > LISTED {
        s.push_str(&format!(" and {} more (see --json)", ids.len() - LISTED));
    }
    s
}

/// The comparison as Markdown, for a reader: the headline figures, one line per criterion,
/// the largest disagreements, then the confusion tables.
pub fn markdown(c: &Calibration, names: &BTreeMap<String, String>) -> String {
    let mut s = String::new();
    md_headline(&mut s, c);
    md_by_criterion(&mut s, c, names);
    md_disagreements(&mut s, c);
    md_matched(&mut s, c);
    md_not_compared(&mut s, c);
    md_confusion_tables(&mut s, c);
    s
}

/// The title, what was compared, and the overall figures.
fn md_headline(s: &mut String, c: &Calibration) {
    let o = &c.overall;
    let _ = writeln!(s, "# Calibration: auditor vs human grades\n");
    let _ = writeln!(
        s,
        "{} submissions graded by both; {} criterion grades compared; {} not assessed by the auditor (left out of every figure).\n",
        c.submissions, o.n, o.not_assessed
    );
    let _ = writeln!(
        s,
        "**Overall:** exact {} · within one point {} · quadratic-weighted κ {} · bias {} (auditor − human; mean auditor {}, mean human {})\n",
        pct(o.exact),
        pct(o.within_one),
        num(o.kappa, false),
        num(o.bias, true),
        num(o.mean_auditor, false),
        num(o.mean_human, false)
    );
}

/// One line per criterion (names from `names`, by id), a lean of over half a point marked.
fn md_by_criterion(s: &mut String, c: &Calibration, names: &BTreeMap<String, String>) {
    let _ = writeln!(s, "## By criterion\n");
    let _ = writeln!(
        s,
        "| criterion | n | exact | within 1 | κ | bias | auditor mean | human mean | not assessed |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (id, a) in &c.criteria {
        let name = names
            .get(id)
            .map(|n| format!("{} (`{id}`)", cell(n)))
            .unwrap_or_else(|| format!("`{id}`"));
        let lean = match a.bias {
            Some(b) if b.abs() > 0.5 => " ⚠",
            _ => "",
        };
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {}{lean} | {} | {} | {} |",
            a.n,
            pct(a.exact),
            pct(a.within_one),
            num(a.kappa, false),
            num(a.bias, true),
            num(a.mean_auditor, false),
            num(a.mean_human, false),
            a.not_assessed
        );
    }
    let _ = writeln!(
        s,
        "\n⚠ marks a criterion whose mean bias exceeds half a point: a systematic lean.\n"
    );
}

/// The largest disagreements, or that there are none.
fn md_disagreements(s: &mut String, c: &Calibration) {
    let _ = writeln!(s, "## Largest disagreements\n");
    if c.disagreements.is_empty() {
        let _ = writeln!(s, "None: every compared grade agrees exactly.\n");
    } else {
        let _ = writeln!(
            s,
            "| submission | criterion | auditor | human | diff | human's note |"
        );
        let _ = writeln!(s, "|---|---|---:|---:|---:|---|");
        for d in &c.disagreements {
            let _ = writeln!(
                s,
                "| {} | `{}` | {} | {} | {:+} | {} |",
                cell(&d.id),
                d.criterion,
                d.auditor,
                d.human,
                d.difference,
                cell(d.human_note.as_deref().unwrap_or(""))
            );
        }
        let _ = writeln!(s);
    }
}

/// The human's criteria matched to ours by name, if any.
fn md_matched(s: &mut String, c: &Calibration) {
    if !c.matched.is_empty() {
        let _ = writeln!(s, "## Criteria matched by name\n");
        for (h, id) in &c.matched {
            let _ = writeln!(s, "- `{}` → `{id}`", cell(h));
        }
        let _ = writeln!(s);
    }
}

/// The submissions graded by one side only, if any.
fn md_not_compared(s: &mut String, c: &Calibration) {
    if !c.unknown_submissions.is_empty() || !c.ungraded_by_human.is_empty() {
        let _ = writeln!(s, "## Not compared\n");
        if !c.unknown_submissions.is_empty() {
            let _ = writeln!(
                s,
                "- graded by the human, absent from the auditor's grades: {}",
                cell(&listed(&c.unknown_submissions))
            );
        }
        if !c.ungraded_by_human.is_empty() {
            let _ = writeln!(
                s,
                "- graded by the auditor, not by the human: {}",
                cell(&listed(&c.ungraded_by_human))
            );
        }
        let _ = writeln!(s);
    }
}

/// The confusion tables: all criteria, then each criterion.
fn md_confusion_tables(s: &mut String, c: &Calibration) {
    let o = &c.overall;
    let _ = writeln!(s, "## Confusion tables\n");
    let _ = writeln!(
        s,
        "Rows: the human's score; columns: the auditor's. The diagonal is exact agreement.\n"
    );
    let _ = writeln!(s, "### All criteria\n");
    confusion_md(s, &o.confusion);
    for (id, a) in &c.criteria {
        let _ = writeln!(s, "\n### `{id}`\n");
        confusion_md(s, &a.confusion);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(spec: &[((u8, u8), usize)]) -> Vec<(u8, u8)> {
        spec.iter()
            .flat_map(|(p, n)| std::iter::repeat_n(*p, *n))
            .collect()
    }

    #[test]
    fn a_value_that_rounds_to_zero_prints_as_zero() {
        assert_eq!(num(Some(-0.001), false), "0.00");
        assert_eq!(num(Some(-0.0), false), "0.00");
        assert_eq!(num(Some(-0.004), true), "+0.00");
        assert_eq!(num(Some(-0.3), false), "-0.30");
    }

    #[test]
    fn kappa_matches_the_textbook_example() {
        // Wikipedia, "Cohen's kappa", worked example: 50 proposals, both readers say yes on
        // 20, no on 15, A yes / B no on 5, A no / B yes on 10: κ = 0.4. With two categories,
        // quadratic weights are 0 on the diagonal and one constant off it, so the weighted
        // kappa equals the unweighted one: scores 2 (yes) and 1 (no) on the 1–5 scale.
        let p = pairs(&[((2, 2), 20), ((2, 1), 5), ((1, 2), 10), ((1, 1), 15)]);
        let a = agreement(&p, 0);
        assert!((a.kappa.unwrap() - 0.4).abs() < 1e-12, "{:?}", a.kappa);
        assert_eq!(a.n, 50);
        assert!((a.exact.unwrap() - 0.7).abs() < 1e-12);
    }

    #[test]
    fn kappa_weighs_distance_quadratically() {
        // Hand computation: pairs (1,1) (2,3) (3,3) (5,4). Rows (human) 1,1,1,0,1 ; columns
        // (auditor) 1,0,2,1,0 ; n = 4. Observed Σw·O = (1² + 1²)/16 = 2/16.
        // Expected Σw·E = Σ_ij (i−j)²·r_i·c_j / (16·4) = 54/64 (r = rows, c = columns).
        // κ = 1 − (2/16)/(54/64) = 1 − 8/54 = 23/27.
        let a = agreement(&[(1, 1), (2, 3), (3, 3), (5, 4)], 0);
        assert!(
            (a.kappa.unwrap() - 23.0 / 27.0).abs() < 1e-12,
            "{:?}",
            a.kappa
        );
        assert_eq!(a.exact, Some(0.5));
        assert_eq!(a.within_one, Some(1.0));
        assert_eq!(a.bias, Some(0.0));
        // perfect agreement over several scores is 1; constant raters are undefined
        assert_eq!(agreement(&[(1, 1), (4, 4)], 0).kappa, Some(1.0));
        assert_eq!(agreement(&[(3, 3), (3, 3)], 0).kappa, None);
        assert_eq!(agreement(&[], 2).kappa, None);
        // systematic disagreement is worse than chance
        assert!(
            agreement(&[(1, 5), (5, 1), (2, 4), (4, 2)], 0)
                .kappa
                .unwrap()
                < 0.0
        );
    }

    #[test]
    fn bias_is_auditor_minus_human_and_confusion_rows_are_the_human() {
        let a = agreement(&[(2, 5), (2, 4), (3, 3)], 1);
        assert!((a.bias.unwrap() - 5.0 / 3.0).abs() < 1e-12);
        assert_eq!(a.confusion[1][4], 1);
        assert_eq!(a.confusion[1][3], 1);
        assert_eq!(a.confusion[2][2], 1);
        assert_eq!(a.not_assessed, 1);
        assert_eq!(a.within_one, Some(1.0 / 3.0));
    }

    fn names() -> BTreeMap<String, String> {
        [
            ("git_forensic_analysis", "Git Forensic Analysis"),
            ("report_accuracy", "Report Accuracy (Cross-Reference)"),
            ("theoretical_depth", "Theoretical Depth (Documentation)"),
            ("swarm_visual", "Architectural Diagram Analysis"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    #[test]
    fn human_criteria_match_by_id_name_or_shared_words() {
        let cols: Vec<String> = names().keys().cloned().collect();
        let n = names();
        assert_eq!(
            match_criterion("swarm_visual", &cols, &n).unwrap(),
            "swarm_visual"
        );
        assert_eq!(
            match_criterion("Architectural Diagram Analysis", &cols, &n).unwrap(),
            "swarm_visual"
        );
        assert_eq!(
            match_criterion("git_forensics", &cols, &n).unwrap(),
            "git_forensic_analysis"
        );
        assert_eq!(
            match_criterion("report_quality", &cols, &n).unwrap(),
            "report_accuracy"
        );
        let e = match_criterion("analysis", &cols, &n)
            .unwrap_err()
            .to_string();
        assert!(e.contains("several"), "{e}");
        let e = match_criterion("cooking", &cols, &n)
            .unwrap_err()
            .to_string();
        assert!(e.contains("matches none"), "{e}");
    }

    const GRADES: &str = "line,id,repo,ref,commit,status,overall_score,overall_exact,git_forensic_analysis,report_accuracy,swarm_visual,needs_human_review,degraded,flags,failed_reason\n\
        1,a,r,,c,done,3,3,5,2,,true,true,not_assessed:swarm_visual,\n\
        2,b,r,,c,done,2,2,2,3,1,false,false,,\n\
        3,c,r,,,failed,,,,,,false,false,,clone failed\n";

    #[test]
    fn grades_and_human_files_are_compared() {
        let g = parse_grades(GRADES, "grades.csv").unwrap();
        assert_eq!(
            g.criteria,
            ["git_forensic_analysis", "report_accuracy", "swarm_visual"]
        );
        assert_eq!(g.rows["a"]["swarm_visual"], None);
        assert!(g.rows["c"].is_empty());
        let h = parse_human(
            "id,criterion,score,justification,extra\n\
             a,git_forensics,2,bulk upload,x\n\
             a,report_quality,2,,\n\
             a,swarm_visual,3,,\n\
             b,git_forensics,2,,\n\
             b,report_quality,4,,\n\
             b,swarm_visual,1,,\n\
             c,git_forensics,1,,\n\
             z,git_forensics,1,,\n",
            "human.csv",
        )
        .unwrap();
        let c = calibrate(&g, &h, &names(), 10).unwrap();
        assert_eq!(c.overall.n, 5);
        assert_eq!(c.overall.not_assessed, 2, "a's swarm_visual and failed c");
        assert_eq!(c.overall.exact, Some(3.0 / 5.0));
        assert_eq!(c.disagreements[0].id, "a");
        assert_eq!(c.disagreements[0].difference, 3);
        assert_eq!(
            c.disagreements[0].human_note.as_deref(),
            Some("bulk upload")
        );
        assert_eq!(c.matched["git_forensics"], "git_forensic_analysis");
        assert_eq!(c.unknown_submissions, ["z"]);
        let md = markdown(&c, &names());
        assert!(
            md.contains("| Git Forensic Analysis (`git_forensic_analysis`) | 2 | 50% | 50% |"),
            "{md}"
        );
        assert!(md.contains("+1.50 ⚠"), "{md}");
        assert!(
            md.contains("| a | `git_forensic_analysis` | 5 | 2 | +3 | bulk upload |"),
            "{md}"
        );
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["overall"]["n"], 5);
    }

    #[test]
    fn bad_files_say_what_and_where() {
        let e = parse_human("who,what\n", "h.csv").unwrap_err().to_string();
        assert!(
            e.contains("h.csv") && e.contains("id, criterion and score"),
            "{e}"
        );
        let e = parse_human("id,criterion,score\na,x,7\n", "h.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("1 to 5"), "{e}");
        let e = parse_grades("a,b\n1,2\n", "g.csv").unwrap_err().to_string();
        assert!(e.contains("no `id` column"), "{e}");
        let g = parse_grades(GRADES, "g.csv").unwrap();
        let h = parse_human("id,criterion,score\na,cooking,2\n", "h.csv").unwrap();
        let e = calibrate(&g, &h, &names(), 5).unwrap_err().to_string();
        assert!(e.contains("cooking") && e.contains("matches none"), "{e}");
        let h = parse_human(
            "id,criterion,score\na,swarm_visual,2\na,swarm_visual,3\n",
            "h.csv",
        )
        .unwrap();
        let e = calibrate(&g, &h, &names(), 5).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
    }
}
