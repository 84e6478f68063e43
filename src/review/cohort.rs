//! The cohort as the course team sees it: each submission's latest report from the store, its
//! review history folded in, the final scores (an override where there is one, the auditor's
//! score otherwise) and the filters of the cohort page.

use super::ledger::{self, Entry, EntryError, NewEntry, Override, ReviewState};
use super::store::{JobFilter, JobRow, ReviewStore};
use super::{ManifestProblem, ReviewError};
use crate::batch::meta::BatchMeta;
use crate::batch::outputs::GradeRow;
use crate::batch::store::JobStatus;
use crate::report::Sidecar;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The student columns of a manifest row (empty when the manifest has none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Student {
    pub name: String,
    pub email: String,
    pub section: String,
}

/// One criterion of a submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionView {
    pub id: String,
    pub name: String,
    /// The auditor's score (`None`: not assessed, or no report).
    pub auto: Option<u8>,
    /// The auditor flagged this criterion.
    pub auto_flagged: bool,
    pub overridden: Option<Override>,
    /// The override's score, else the auditor's.
    pub final_score: Option<u8>,
    /// The auditor's score changed since the override was made (a regrade): look again.
    pub changed_under: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Done,
    Failed,
    Running,
    Pending,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Running => "running",
            Status::Pending => "pending",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SubmissionView {
    pub id: String,
    pub student: Student,
    pub status: Status,
    pub failure: Option<String>,
    pub job_id: Option<i64>,
    pub commit: Option<String>,
    pub auto_overall: Option<f64>,
    /// Which judges gave the automatic scores (from the job's key), e.g. "offline judges".
    pub judges: String,
    pub final_overall: Option<f64>,
    pub criteria: Vec<CriterionView>,
    /// The auditor asked for a human's review (a criterion not assessed or flagged so).
    pub auditor_asks_review: bool,
    /// The auditor's flags, e.g. `judge_failed:git_forensic_analysis`.
    pub flags: Vec<String>,
    pub review: ReviewState,
    pub overridden: bool,
    pub changed_under: bool,
    pub not_assessed: bool,
    #[serde(skip)]
    pub sidecar: Option<Arc<Sidecar>>,
}

impl SubmissionView {
    pub fn reviewed(&self) -> bool {
        self.review.reviewed.is_some()
    }

    /// Still wants a human: the auditor asked, or an override's automatic score changed, and
    /// nobody marked it reviewed since.
    pub fn needs_review(&self) -> bool {
        (self.auditor_asks_review || self.changed_under || self.status == Status::Failed)
            && !self.reviewed()
    }

    pub fn flagged(&self) -> bool {
        !self.flags.is_empty() || self.changed_under
    }

    pub fn criterion(&self, id: &str) -> Option<&CriterionView> {
        self.criteria.iter().find(|c| c.id == id)
    }
}

/// The cohort page's filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    All,
    NeedsReview,
    Flagged,
    NotAssessed,
    Failed,
    Overridden,
    Reviewed,
}

impl Filter {
    pub const ALL: [Filter; 7] = [
        Filter::All,
        Filter::NeedsReview,
        Filter::Flagged,
        Filter::NotAssessed,
        Filter::Failed,
        Filter::Overridden,
        Filter::Reviewed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::NeedsReview => "needs_review",
            Filter::Flagged => "flagged",
            Filter::NotAssessed => "not_assessed",
            Filter::Failed => "failed",
            Filter::Overridden => "overridden",
            Filter::Reviewed => "reviewed",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::NeedsReview => "needs review",
            Filter::Flagged => "flagged",
            Filter::NotAssessed => "not assessed",
            Filter::Failed => "failed",
            Filter::Overridden => "overridden",
            Filter::Reviewed => "reviewed",
        }
    }

    pub fn parse(s: &str) -> Option<Filter> {
        Filter::ALL.into_iter().find(|f| f.as_str() == s)
    }

    pub fn keeps(self, s: &SubmissionView) -> bool {
        match self {
            Filter::All => true,
            Filter::NeedsReview => s.needs_review(),
            Filter::Flagged => s.flagged(),
            Filter::NotAssessed => s.not_assessed,
            Filter::Failed => s.status == Status::Failed,
            Filter::Overridden => s.overridden,
            Filter::Reviewed => s.reviewed(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cohort {
    pub title: String,
    /// (id, name) of every criterion column.
    pub criteria: Vec<(String, String)>,
    pub submissions: Vec<SubmissionView>,
}

/// Mean of the scores given, `None` when there is none.
pub fn mean(scores: impl IntoIterator<Item = u8>) -> Option<f64> {
    let v: Vec<u8> = scores.into_iter().collect();
    (!v.is_empty()).then(|| v.iter().map(|s| f64::from(*s)).sum::<f64>() / v.len() as f64)
}

/// One submission's view from its latest job, report and history (a plain function).
pub fn view(
    id: &str,
    student: Student,
    columns: &[(String, String)],
    job: Option<&JobRow>,
    graded: Option<(&Arc<Sidecar>, &GradeRow)>,
    history: &[&Entry],
) -> SubmissionView {
    let review = ledger::fold(history.iter().copied());
    let status = match job.map(|j| j.status) {
        None => Status::Pending,
        Some(JobStatus::Done) if graded.is_some() => Status::Done,
        Some(JobStatus::Done) | Some(JobStatus::Failed) => Status::Failed,
        Some(JobStatus::Running) => Status::Running,
    };
    let mut columns: Vec<(String, String)> = columns.to_vec();
    if let Some((sc, _)) = graded {
        for c in &sc.report.criteria {
            if !columns.iter().any(|(id, _)| id == &c.dimension_id) {
                columns.push((c.dimension_id.clone(), c.dimension_name.clone()));
            }
        }
    }
    let criteria: Vec<CriterionView> = columns
        .iter()
        .map(|(cid, name)| {
            let auto = graded.and_then(|(_, row)| row.scores.get(cid).copied().flatten());
            let auto_flagged = graded.is_some_and(|(_, row)| {
                row.flags.iter().any(|f| {
                    f.ends_with(&format!(":{cid}"))
                        && !f.starts_with("not_assessed_no_vision_model")
                })
            });
            let overridden = review.overrides.get(cid).cloned();
            let changed_under = overridden
                .as_ref()
                .is_some_and(|o| graded.is_some() && o.auto_score_then != auto);
            CriterionView {
                id: cid.clone(),
                name: name.clone(),
                auto,
                auto_flagged,
                final_score: overridden.as_ref().map(|o| o.score).or(auto),
                overridden,
                changed_under,
            }
        })
        .collect();
    let overridden = criteria.iter().any(|c| c.overridden.is_some());
    let changed_under = criteria.iter().any(|c| c.changed_under);
    let not_assessed = status == Status::Done && criteria.iter().any(|c| c.final_score.is_none());
    let final_overall = if status == Status::Done || overridden {
        mean(criteria.iter().filter_map(|c| c.final_score))
    } else {
        None
    };
    SubmissionView {
        id: id.to_string(),
        student,
        status,
        failure: job.and_then(|j| j.failure.clone()).or_else(|| {
            (status == Status::Failed
                && graded.is_none()
                && job.is_some_and(|j| j.status == JobStatus::Done))
            .then(|| "the stored report cannot be read".to_string())
        }),
        job_id: job.map(|j| j.id),
        commit: graded.and_then(|(sc, _)| sc.report.commit.clone()),
        auto_overall: graded.and_then(|(sc, _)| sc.report.overall_score),
        judges: job
            .map(|j| judges_label(&j.judge_config))
            .unwrap_or_default(),
        final_overall,
        auditor_asks_review: graded.is_some_and(|(_, r)| r.needs_human_review || r.degraded),
        flags: graded.map(|(_, r)| r.flags.clone()).unwrap_or_default(),
        review,
        overridden,
        changed_under,
        not_assessed,
        criteria,
        sidecar: graded.map(|(sc, _)| sc.clone()),
    }
}

/// Which judges a job's judge configuration names: the offline judges (rules over the
/// detectives' facts, no model) or the LLM judges with their model(s).
pub fn judges_label(judge_config: &str) -> String {
    if judge_config.contains("mode=Offline") || judge_config.contains(";offline/") {
        return "offline judges (rules over the facts, no model)".into();
    }
    let mut models: Vec<&str> = judge_config
        .split([';', ','])
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| matches!(*k, "prosecutor" | "defense" | "tech_lead"))
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
        .collect();
    models.sort_unstable();
    models.dedup();
    if models.is_empty() {
        "LLM judges".into()
    } else {
        format!("LLM judges ({})", models.join(", "))
    }
}

/// Reads the student columns (id, name, email, section) of a manifest, in manifest order.
/// Rows without an id are skipped; the batch reports those.
pub fn read_students(path: &Path) -> Result<Vec<(String, Student)>, ReviewError> {
    let bad = |problem: ManifestProblem| ReviewError::Manifest {
        path: path.display().to_string(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(ManifestProblem::Unreadable(e)))?;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let jsonl = match ext.as_deref() {
        Some("jsonl") | Some("ndjson") => true,
        Some("csv") => false,
        _ => text.trim_start().starts_with('{'),
    };
    let mut out: Vec<(String, Student)> = Vec::new();
    if jsonl {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(line)
            else {
                continue;
            };
            let get = |k: &str| match o.get(k) {
                Some(serde_json::Value::String(s)) => s.trim().to_string(),
                Some(serde_json::Value::Number(n)) => n.to_string(),
                _ => String::new(),
            };
            let id = get("id");
            if !id.is_empty() {
                out.push((
                    id,
                    Student {
                        name: get("name"),
                        email: get("email"),
                        section: get("section"),
                    },
                ));
            }
        }
        return Ok(out);
    }
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = rd
        .headers()
        .map_err(|e| bad(ManifestProblem::Header(e)))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').trim().to_ascii_lowercase())
        .collect();
    let col = |n: &str| headers.iter().position(|h| h == n);
    let (id, name, email, section) = (col("id"), col("name"), col("email"), col("section"));
    let Some(id) = id else {
        return Err(bad(ManifestProblem::NoId));
    };
    for rec in rd.records().flatten() {
        let get = |i: Option<usize>| i.and_then(|i| rec.get(i)).unwrap_or("").to_string();
        let sid = get(Some(id));
        if !sid.is_empty() {
            out.push((
                sid,
                Student {
                    name: get(name),
                    email: get(email),
                    section: get(section),
                },
            ));
        }
    }
    Ok(out)
}

struct Parsed {
    updated_at: String,
    sidecar: Arc<Sidecar>,
    row: GradeRow,
}

/// What the batch's description (`DIR/batch.json`) says: which jobs are the batch's, its
/// students, its criteria. Read again whenever the file changed (a regrade under a new rubric
/// or other judges rewrites it).
pub struct Setup {
    /// The file's bytes it was read from (`None`: no file).
    raw: Option<Vec<u8>>,
    pub meta: Option<BatchMeta>,
    pub title: String,
    filter: JobFilter,
    students: Vec<(String, Student)>,
    columns: Vec<(String, String)>,
}

impl Setup {
    fn read(dir: &Path, raw: Option<Vec<u8>>) -> Result<Setup, ReviewError> {
        let meta = crate::batch::meta::read(dir)?;
        let students = match &meta {
            Some(m) => read_students(&m.manifest)?,
            None => Vec::new(),
        };
        let rubric = crate::rubric::Rubric::load(meta.as_ref().and_then(|m| m.rubric.as_deref()))
            .map_err(ReviewError::Rubric)?;
        let columns = rubric
            .rubric
            .dimensions
            .iter()
            .map(|d| (d.id.clone(), d.name.clone()))
            .collect();
        Ok(Setup {
            raw,
            title: meta
                .as_ref()
                .map(|m| m.title.clone())
                .unwrap_or_else(|| dir.display().to_string()),
            filter: JobFilter {
                rubric_sha256: meta.as_ref().map(|m| m.rubric_sha256.clone()),
                judge_config: meta.as_ref().map(|m| m.judge_config.clone()),
            },
            meta,
            students,
            columns,
        })
    }
}

/// A batch opened for review: its store, its description (`DIR/batch.json`), its students.
pub struct Reviewer {
    pub store: Box<dyn ReviewStore>,
    pub dir: PathBuf,
    setup: Mutex<Arc<Setup>>,
    parsed: Mutex<HashMap<i64, Arc<Parsed>>>,
}

fn meta_bytes(dir: &Path) -> Option<Vec<u8>> {
    std::fs::read(dir.join(crate::batch::meta::FILE_NAME)).ok()
}

impl Reviewer {
    pub fn new(dir: &Path, store: Box<dyn ReviewStore>) -> Result<Reviewer, ReviewError> {
        let setup = Setup::read(dir, meta_bytes(dir))?;
        Ok(Reviewer {
            store,
            dir: dir.to_path_buf(),
            setup: Mutex::new(Arc::new(setup)),
            parsed: Mutex::new(HashMap::new()),
        })
    }

    /// The batch's description, read again when `DIR/batch.json` changed since (a file being
    /// rewritten, or one that does not read, leaves the last good one in place).
    pub fn setup(&self) -> Arc<Setup> {
        let now = meta_bytes(&self.dir);
        let current = match self.setup.lock() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        };
        if now.is_none() || now == current.raw {
            return current;
        }
        match Setup::read(&self.dir, now) {
            Ok(fresh) => {
                let fresh = Arc::new(fresh);
                if let Ok(mut s) = self.setup.lock() {
                    *s = fresh.clone();
                }
                fresh
            }
            Err(e) => {
                tracing::warn!(error = %e, "the batch's description changed and cannot be read: the last one stays");
                current
            }
        }
    }

    fn parse(&self, job: &JobRow) -> Option<Arc<Parsed>> {
        if job.status != JobStatus::Done {
            return None;
        }
        if let Ok(cache) = self.parsed.lock()
            && let Some(p) = cache.get(&job.id)
            && p.updated_at == job.updated_at
        {
            return Some(p.clone());
        }
        let sidecar = Sidecar::parse(job.sidecar.as_deref()?).ok()?;
        let row = GradeRow::from_report(0, &job.submission, "", &sidecar);
        let p = Arc::new(Parsed {
            updated_at: job.updated_at.clone(),
            sidecar: Arc::new(sidecar),
            row,
        });
        if let Ok(mut cache) = self.parsed.lock() {
            cache.insert(job.id, p.clone());
        }
        Some(p)
    }

    fn build(
        &self,
        setup: &Setup,
        id: &str,
        student: Student,
        job: Option<&JobRow>,
        history: &[&Entry],
    ) -> SubmissionView {
        let parsed = job.and_then(|j| self.parse(j));
        view(
            id,
            student,
            &setup.columns,
            job,
            parsed.as_ref().map(|p| (&p.sidecar, &p.row)),
            history,
        )
    }

    /// Every submission: the manifest's in its order, then any other the store holds.
    pub fn cohort(&self) -> Result<Cohort, ReviewError> {
        let setup = self.setup();
        let jobs = self.store.latest_jobs(&setup.filter)?;
        let history = self.store.history(None)?;
        let mut by_sub: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
        for e in &history {
            by_sub.entry(e.submission.as_str()).or_default().push(e);
        }
        let jobs: BTreeMap<&str, &JobRow> =
            jobs.iter().map(|j| (j.submission.as_str(), j)).collect();
        let mut ids: Vec<(String, Student)> = setup.students.clone();
        for j in jobs.keys() {
            if !ids.iter().any(|(i, _)| i == j) {
                ids.push((j.to_string(), Student::default()));
            }
        }
        let submissions = ids
            .into_iter()
            .map(|(id, st)| {
                let h = by_sub.get(id.as_str()).cloned().unwrap_or_default();
                self.build(&setup, &id, st, jobs.get(id.as_str()).copied(), &h)
            })
            .collect();
        Ok(Cohort {
            title: setup.title.clone(),
            criteria: setup.columns.clone(),
            submissions,
        })
    }

    /// One submission (an id of the manifest or of the store).
    pub fn submission(&self, id: &str) -> Result<SubmissionView, ReviewError> {
        let setup = self.setup();
        let job = self.store.latest_job(id, &setup.filter)?;
        let student = setup
            .students
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.clone());
        if job.is_none() && student.is_none() {
            return Err(ReviewError::UnknownSubmission(
                id.chars().take(80).collect(),
            ));
        }
        let history = self.store.history(Some(id))?;
        let h: Vec<&Entry> = history.iter().collect();
        Ok(self.build(&setup, id, student.unwrap_or_default(), job.as_ref(), &h))
    }

    pub fn history(&self, id: &str) -> Result<Vec<Entry>, ReviewError> {
        self.submission(id)?;
        Ok(self.store.history(Some(id))?)
    }

    fn criteria_of(&self, s: &SubmissionView) -> Vec<(String, String)> {
        s.criteria
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect()
    }

    /// Records an override (checked: a known criterion, a score 1-5, a reason, a name).
    pub fn record_override(
        &self,
        id: &str,
        criterion: &str,
        score: u8,
        reason: &str,
        by: &str,
    ) -> Result<Entry, ReviewError> {
        let s = self.submission(id)?;
        let e = ledger::override_entry(
            id,
            &self.criteria_of(&s),
            ledger::Proposed {
                criterion,
                score,
                reason,
                by,
            },
            |c| s.criterion(c).and_then(|c| c.auto),
            s.job_id,
        )?;
        self.append(e)
    }

    pub fn mark(&self, id: &str, reviewed: bool, by: &str) -> Result<Entry, ReviewError> {
        self.submission(id)?;
        self.append(ledger::mark_entry(id, reviewed, by)?)
    }

    pub fn comment(&self, id: &str, text: &str, by: &str) -> Result<Entry, ReviewError> {
        self.submission(id)?;
        self.append(ledger::comment_entry(id, text, by)?)
    }

    fn append(&self, e: NewEntry) -> Result<Entry, ReviewError> {
        Ok(self.store.append(&e)?)
    }

    /// The score check of the API and the CLI.
    pub fn score(text: &str) -> Result<u8, EntryError> {
        ledger::parse_score(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn students_from_csv_and_jsonl() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        std::fs::write(
            &p,
            "id,repo,Name,email,section\ns1,r,\"Doe, Jane\",j@x.org,A\n,r,x,y,z\ns2,r,,,\n",
        )
        .unwrap();
        let s = read_students(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].1.name, "Doe, Jane");
        assert_eq!(s[0].1.section, "A");
        assert_eq!(s[1], ("s2".into(), Student::default()));
        let p = dir.path().join("m.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"s1\",\"repo\":\"r\",\"email\":\"a@b\"}\nnot json\n",
        )
        .unwrap();
        let s = read_students(&p).unwrap();
        assert_eq!(
            s,
            vec![(
                "s1".into(),
                Student {
                    email: "a@b".into(),
                    ..Student::default()
                }
            )]
        );
    }

    #[test]
    fn filters_and_means() {
        assert_eq!(mean([4, 5]), Some(4.5));
        assert_eq!(mean([]), None);
        for f in Filter::ALL {
            assert_eq!(Filter::parse(f.as_str()), Some(f));
        }
        let cols = vec![("a".to_string(), "A".to_string())];
        let e = Entry {
            id: 1,
            submission: "s".into(),
            kind: ledger::Kind::Override,
            criterion: Some("a".into()),
            score: Some(5),
            auto_score: Some(2),
            job_id: None,
            text: "r".into(),
            by: "ta".into(),
            at: "t".into(),
        };
        let v = view("s", Student::default(), &cols, None, None, &[&e]);
        assert_eq!(v.status, Status::Pending);
        assert_eq!(v.criteria[0].final_score, Some(5));
        assert!(
            !v.criteria[0].changed_under,
            "no report: nothing changed under it"
        );
        assert!(Filter::Overridden.keeps(&v));
        assert!(!Filter::Reviewed.keeps(&v));
    }
}
