//! RepoInvestigator core: sandboxed full-history clone, git forensics and tree-sitter analysis
//! of the Python (LangGraph) code. Plain blocking functions; the actor shell runs them off the
//! actor thread.
//!
//! Codemap: [`source`] (the `--repo` text, redacted once), [`clone`] (source validation, sandboxed bare clone, reading the audited tree),
//! [`error`] (why a repository cannot be audited, typed), [`history`] (git forensics), [`python`] (tree-sitter analysis: graph, state, safety,
//! structured output, judge personas, Chief Justice rules), [`evidence`] (facts → `Evidence`
//! per rubric dimension), [`facts`] (`auditor evidence` JSON and text).

pub(crate) mod clone;
pub mod error;
pub mod evidence;
pub(crate) mod facts;
pub(crate) mod history;
pub mod python;
pub(crate) mod scan;
pub(crate) mod source;

pub use error::{AnalysisError, CloneError, LimitError, RepoError, SourceError};
pub use evidence::evidence;
pub use facts::{facts_json, summary_text};
pub use source::RepoSource;

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Limits applied to a clone; each exceeded limit is a clear error or a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoLimits {
    pub clone_timeout: Duration,
    pub max_repo_bytes: u64,
    pub max_files: usize,
    pub max_file_bytes: u64,
    /// Largest report PDF extracted from the repository.
    #[serde(default = "default_max_pdf_bytes")]
    pub max_pdf_bytes: u64,
    /// Largest Python file scanned textually for dangerous calls when it is over
    /// `max_file_bytes` (too large to parse); larger ones are listed as unscanned.
    #[serde(default = "default_max_scan_bytes")]
    pub max_scan_bytes: u64,
}

fn default_max_scan_bytes() -> u64 {
    64 << 20
}

fn default_max_pdf_bytes() -> u64 {
    64 << 20
}

impl Default for RepoLimits {
    fn default() -> Self {
        RepoLimits {
            clone_timeout: Duration::from_secs(300),
            max_repo_bytes: 1 << 30,
            max_files: 50_000,
            max_file_bytes: 2 << 20,
            max_pdf_bytes: default_max_pdf_bytes(),
            max_scan_bytes: default_max_scan_bytes(),
        }
    }
}

/// What to audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoRequest {
    /// https URL, local path or `file://` URL (bare repositories included); shown redacted.
    pub source: RepoSource,
    /// Branch, tag or commit to audit; default HEAD.
    pub git_ref: Option<String>,
    /// The full hash `git_ref` was resolved to before the audit started (validation): the
    /// clone is audited at this commit, the ref is not resolved again. `None`: resolved in the
    /// clone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub limits: RepoLimits,
    /// When set, the bytes of this repo-relative file (or, with `Some("")`, of the most likely
    /// report PDF in the repository) are returned in [`RepoFacts::report_pdf`].
    pub extract_pdf: Option<String>,
}

/// A file read out of the audited commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoFile {
    pub path: String,
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// Everything the RepoInvestigator found (facts only, no scores).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepoFacts {
    pub url: String,
    pub commit: String,
    /// Every file of the audited commit, repo-relative with `/` separators, sorted.
    pub files: Vec<String>,
    /// The `--ref` asked for, if any.
    #[serde(default)]
    pub git_ref: Option<String>,
    /// Notes about skipped files or limits hit.
    pub notes: Vec<String>,
    #[serde(default)]
    pub history: history::HistoryFacts,
    /// Graphs, state, security, structured output, personas, Chief Justice.
    #[serde(default)]
    pub python: python::PythonFacts,
    /// Security findings per kind, all of them counted (`python.security.findings` keeps the
    /// first [`MAX_FINDINGS_PER_KIND`] of each kind).
    #[serde(default)]
    pub finding_counts: std::collections::BTreeMap<String, usize>,
    /// Python files neither parsed nor scanned for dangerous calls (over every size limit):
    /// the security analysis cannot vouch for them.
    #[serde(default)]
    pub unscanned_python: Vec<String>,
    #[serde(skip)]
    pub report_pdf: Option<RepoFile>,
    /// Why the report PDF the submission committed cannot be read, when that is the
    /// submission's doing (a symbolic link, a file over the size limit): the
    /// report is judged absent, a real low score with this reason, never a grader failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_pdf_unusable: Option<String>,
}

/// Cheap pre-flight check run before the graph starts (exit 2 on error): empty source,
/// malformed URL, unsupported scheme (http, ssh, ...), or a local path that does not exist.
pub fn validate_source(source: &RepoSource) -> Result<(), RepoError> {
    clone::parse_source(source).map(|_| ())
}

/// Clones into a temporary directory (removed on every path), reads the history and analyses
/// the code. Blocking.
pub fn investigate(req: &RepoRequest) -> Result<RepoFacts, RepoError> {
    investigate_in(req, None)
}

/// [`investigate`] with the temporary clone directory created under `tmp_parent` (default:
/// the system temp dir). Used by tests to check the directory is always removed.
pub fn investigate_in(
    req: &RepoRequest,
    tmp_parent: Option<&std::path::Path>,
) -> Result<RepoFacts, RepoError> {
    let source = clone::parse_source(&req.source)?;
    let shown = shown_source(req, &source);
    let (_dir, repo) = clone::clone(&source, &req.limits, tmp_parent)?;
    let mut facts = RepoFacts {
        url: shown.clone(),
        git_ref: req.git_ref.clone(),
        ..RepoFacts::default()
    };
    let pinned = req.commit.as_deref().or(req.git_ref.as_deref());
    let Some(commit) = clone::resolve_commit(&repo, pinned, &shown)? else {
        facts
            .notes
            .push(format!("{shown} has no commits: nothing to audit"));
        facts.history = history::summarise(Vec::new());
        if req.extract_pdf.is_some() {
            facts
                .notes
                .push("no report PDF: the repository is empty".into());
        }
        return Ok(facts);
    };
    facts.commit = commit.id().to_string();
    let tree = commit.tree().map_err(|source| AnalysisError::TreeOf {
        commit: commit.id().to_string(),
        source,
    })?;
    let files = clone::list_files(&repo, &tree, &req.limits, &mut facts.notes)?;
    facts.files = files.iter().map(|f| f.path.clone()).collect();
    facts.history = {
        let _stage =
            crate::telemetry::stage::enter(|| format!("reading the git history of {shown}"));
        history::analyse(&repo, commit.id())?
    };
    facts.notes.extend(not_diffed_note(&facts.history));
    let code = read_code(&repo, &files, &req.limits, &mut facts);
    analyse_code(code, &shown, &mut facts);
    if let Some(wanted) = &req.extract_pdf {
        match extract_pdf(&repo, &files, wanted, &req.limits, &mut facts.notes) {
            Ok(pdf) => facts.report_pdf = pdf,
            Err(why) => {
                facts.notes.push(why.to_string());
                facts.report_pdf_unusable = Some(why.to_string());
            }
        }
    }
    Ok(facts)
}

/// How the source is shown: a local path as the caller chose to show it (a batch shows the
/// folder's name), a URL redacted.
fn shown_source(req: &RepoRequest, source: &clone::Source) -> String {
    match source {
        clone::Source::Local(_) if !req.source.expose().starts_with("file://") => {
            req.source.shown().to_string()
        }
        _ => source.display(),
    }
}

/// The note on the file versions the history left undiffed (over the diff limits), if any.
fn not_diffed_note(h: &history::HistoryFacts) -> Option<String> {
    let not_diffed: Vec<&history::CommitFact> = h
        .commits
        .iter()
        .filter(|c| !c.not_diffed.is_empty())
        .collect();
    let first = not_diffed.first()?;
    Some(format!(
        "{} in {} not diffed, their lines not counted (over {} MiB per file or {} MiB per commit); first: {} in {}",
        crate::words::count(
            not_diffed.iter().map(|c| c.not_diffed.len()).sum::<usize>(),
            "file version",
            "file versions"
        ),
        crate::words::count(not_diffed.len(), "commit", "commits"),
        history::MAX_DIFF_BLOB_BYTES >> 20,
        history::MAX_DIFF_COMMIT_BYTES >> 20,
        first.not_diffed[0],
        &first.hash[..first.hash.len().min(12)],
    ))
}

/// The code of the audited commit as read: (path, text) of each Python file and of each prompt
/// or template file, and the findings of the textual scan of Python files too large to parse.
struct CodeTexts {
    python: Vec<(String, String)>,
    other: Vec<(String, String)>,
    scanned: Vec<python::safety::Finding>,
}

/// Reads the Python, prompt and template files of the commit, in `files`' order; each file
/// skipped or read with replacement characters gets a note in `facts`.
fn read_code(
    repo: &git2::Repository,
    files: &[clone::TreeFile],
    limits: &RepoLimits,
    facts: &mut RepoFacts,
) -> CodeTexts {
    let mut code = CodeTexts {
        python: Vec::new(),
        other: Vec::new(),
        scanned: Vec::new(),
    };
    for f in files {
        let py = f.path.ends_with(".py");
        let text_like = is_prompt_or_template(&f.path);
        if !py && !text_like {
            continue;
        }
        if py && !f.symlink && f.size > limits.max_file_bytes {
            scan_large(repo, f, limits, facts, &mut code.scanned);
            continue;
        }
        let Some(text) = read_text(repo, f, limits, &mut facts.notes) else {
            continue;
        };
        if py {
            code.python.push((f.path.clone(), text));
        } else {
            code.other.push((f.path.clone(), text));
        }
    }
    code
}

/// A file's text: `None` (with a note, except for a symbolic link that cannot be read) when it
/// cannot be read or is binary; invalid UTF-8 is replaced (with a note).
fn read_text(
    repo: &git2::Repository,
    f: &clone::TreeFile,
    limits: &RepoLimits,
    notes: &mut Vec<String>,
) -> Option<String> {
    let bytes = match clone::read_blob(repo, f, limits.max_file_bytes) {
        Ok(b) => b,
        Err(note) => {
            if !f.symlink {
                notes.push(note.to_string());
            }
            return None;
        }
    };
    if clone::is_binary(&bytes) {
        notes.push(format!("{}: binary content, not analysed", f.path));
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            notes.push(format!(
                "{}: not valid UTF-8; analysed with replacement characters",
                f.path
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    })
}

/// Analyses the code read (`python`), adds the textual scan's findings, caps the findings per
/// kind and notes what the analysis noted and the files with syntax errors.
fn analyse_code(code: CodeTexts, shown: &str, facts: &mut RepoFacts) {
    let CodeTexts {
        python: sources,
        other: texts,
        scanned,
    } = code;
    facts.python = {
        let _stage = crate::telemetry::stage::enter(|| {
            format!(
                "analysing the {} of {shown} (graph wiring, state, run-time simulation)",
                crate::words::count(sources.len(), "Python file", "Python files")
            )
        });
        python::analyse(sources, &texts)
    };
    facts.python.security.findings.extend(scanned);
    cap_findings(facts);
    facts.notes.extend(facts.python.notes.iter().cloned());
    for p in &facts.python.files_with_syntax_errors {
        facts.notes.push(format!(
            "{p}: Python syntax errors (parsed with error recovery; facts may be partial)"
        ));
    }
}

/// Security findings kept per kind; the others are counted (a line of 150,000 `os.system`
/// calls must not become 150,000 pieces of evidence).
pub const MAX_FINDINGS_PER_KIND: usize = 20;

fn cap_findings(facts: &mut RepoFacts) {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    facts.python.security.findings.retain(|f| {
        let n = counts.entry(f.kind.clone()).or_default();
        *n += 1;
        *n <= MAX_FINDINGS_PER_KIND
    });
    for (kind, n) in &counts {
        if *n > MAX_FINDINGS_PER_KIND {
            facts.notes.push(format!(
                "{n} security findings of kind {kind}: the first {MAX_FINDINGS_PER_KIND} are kept as evidence, all are counted"
            ));
        }
    }
    facts.finding_counts = counts;
}

/// A Python file too large to parse: scanned textually for dangerous calls (see [`scan`]), or,
/// over `max_scan_bytes`, recorded as unscanned. Either way the note says so.
fn scan_large(
    repo: &git2::Repository,
    f: &clone::TreeFile,
    limits: &RepoLimits,
    facts: &mut RepoFacts,
    findings: &mut Vec<python::safety::Finding>,
) {
    let over = format!(
        "{}: {} bytes, over the single-file limit ({} bytes); not parsed",
        f.path, f.size, limits.max_file_bytes
    );
    let bytes = match clone::read_blob(repo, f, limits.max_scan_bytes) {
        Ok(b) => b,
        Err(_) => {
            facts.notes.push(format!(
                "{over}, and over the scan limit ({} bytes): NOT scanned for shell or eval calls",
                limits.max_scan_bytes
            ));
            facts.unscanned_python.push(f.path.clone());
            return;
        }
    };
    let s = scan::scan(&f.path, &bytes);
    facts.notes.push(format!(
        "{over}; scanned textually for shell and eval calls: {} found{}",
        s.matches,
        if s.matches > s.findings.len() {
            format!(" (the first {} kept)", s.findings.len())
        } else {
            String::new()
        }
    ));
    findings.extend(s.findings);
}

/// Non-Python text files that can hold judge prompts or report templates.
fn is_prompt_or_template(path: &str) -> bool {
    let lower = path.to_lowercase();
    let ext = lower.rsplit('.').next().unwrap_or("");
    let textual = matches!(
        ext,
        "txt" | "md" | "j2" | "jinja" | "jinja2" | "prompt" | "yaml" | "yml" | "tmpl" | "hbs"
    );
    textual
        && (lower.contains("prompt")
            || lower.contains("template")
            || lower.contains("persona")
            || lower.contains("prosecut")
            || lower.contains("defen")
            || lower.contains("tech"))
}

/// `wanted`: a repo-relative path, or `""` for the most likely report PDF. `Ok(None)`: no report
/// taken (the reason is in `notes`); `Err`: the submission's report exists but is unusable by
/// its own doing (a symbolic link, over the size limit), with the reason (an empty file is
/// read, and judged absent by the DocAnalyst).
fn extract_pdf(
    repo: &git2::Repository,
    files: &[clone::TreeFile],
    wanted: &str,
    limits: &RepoLimits,
    notes: &mut Vec<String>,
) -> Result<Option<RepoFile>, UnusableReport> {
    let chosen = if wanted.is_empty() {
        let mut pdfs: Vec<&clone::TreeFile> = files
            .iter()
            .filter(|f| f.path.to_lowercase().ends_with(".pdf"))
            .collect();
        // a real file before a link, then the likeliest name
        pdfs.sort_by_key(|f| (f.symlink, std::cmp::Reverse(pdf_rank(&f.path))));
        match pdfs.first() {
            Some(f) => *f,
            None => {
                notes.push("no PDF file in the repository: no report to analyse".into());
                return Ok(None);
            }
        }
    } else {
        let w = wanted.trim_start_matches("./");
        match files.iter().find(|f| f.path == w) {
            Some(f) => f,
            None => {
                notes.push(format!(
                    "report PDF {wanted:?} is not in the audited commit"
                ));
                return Ok(None);
            }
        }
    };
    if let Some(why) = unusable_report(chosen, limits.max_pdf_bytes) {
        return Err(why);
    }
    match clone::read_blob(repo, chosen, limits.max_pdf_bytes) {
        Ok(bytes) => Ok(Some(RepoFile {
            path: chosen.path.clone(),
            bytes,
        })),
        Err(note) => {
            notes.push(note.to_string());
            Ok(None)
        }
    }
}

/// Why the committed report cannot be read, when the submission made it so (the report is
/// judged absent, with this reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnusableReport {
    #[error(
        "the report {0} is a symbolic link, not a file: a link is never followed out of the \
         submission, so there is no report to read (commit the PDF itself)"
    )]
    Symlink(String),
    #[error(
        "the report {path} is {} MB, over the {} MB a report may weigh: it is not read \
         (compress its images or split it)",
        .size >> 20,
        .max >> 20
    )]
    TooLarge { path: String, size: u64, max: u64 },
}

/// Why the committed report cannot be read, when the submission made it so.
fn unusable_report(f: &clone::TreeFile, max: u64) -> Option<UnusableReport> {
    let path = f.path.clone();
    if f.symlink {
        Some(UnusableReport::Symlink(path))
    } else if f.size > max {
        let size = f.size;
        Some(UnusableReport::TooLarge { path, size, max })
    } else {
        None
    }
}

/// Higher is more likely the final report.
fn pdf_rank(path: &str) -> (u8, u8, u8) {
    let lower = path.to_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    let exact = u8::from(lower == "reports/final_report.pdf");
    let in_reports = u8::from(lower.starts_with("reports/") || lower.starts_with("report/"));
    let name = if file.contains("final") {
        3
    } else if file.contains("report") {
        2
    } else if file.contains("interim") {
        1
    } else {
        0
    };
    (exact, name, in_reports)
}

#[cfg(test)]
mod tests {
    use super::pdf_rank;

    #[test]
    fn a_report_over_the_size_limit_or_a_link_is_the_submissions_doing() {
        let file = |size: u64, symlink: bool| super::clone::TreeFile {
            path: "reports/final_report.pdf".into(),
            oid: git2::Oid::ZERO_SHA1,
            size,
            symlink,
        };
        let max = super::default_max_pdf_bytes();
        assert_eq!(super::unusable_report(&file(1 << 20, false), max), None);
        let big = super::unusable_report(&file(205 << 20, false), max).unwrap();
        assert!(
            big.to_string().contains("is 205 MB, over the 64 MB"),
            "{big}"
        );
        let link = super::unusable_report(&file(20, true), max).unwrap();
        assert!(link.to_string().contains("is a symbolic link"), "{link}");
    }

    /// The PDF `extract_pdf` takes when none was named.
    fn likeliest<'a>(paths: &[&'a str]) -> &'a str {
        let mut v = paths.to_vec();
        v.sort_by_key(|p| std::cmp::Reverse(pdf_rank(p)));
        v[0]
    }

    #[test]
    fn the_report_is_the_conventional_path_then_the_likeliest_name() {
        assert_eq!(
            likeliest(&["docs/a.pdf", "reports/final_report.pdf", "final.pdf"]),
            "reports/final_report.pdf"
        );
        assert_eq!(
            likeliest(&[
                "tests/fixtures/report.pdf",
                "docs/paper.pdf",
                "reports/Interim Report.pdf"
            ]),
            "reports/Interim Report.pdf"
        );
        assert_eq!(
            likeliest(&["docs/paper.pdf", "Final-Submission.PDF"]),
            "Final-Submission.PDF"
        );
    }
}
