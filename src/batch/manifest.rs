//! The cohort manifest: CSV with a header `id,repo,pdf[,ref]` (any column order; `pdf` and `ref`
//! optional; the student columns `name`, `email`, `section` optional too, read only by the
//! course team's review and exports), or JSON Lines with the same keys.
//!
//! - `pdf` is a local path (relative to the manifest's directory), `repo:<path in repository>`,
//!   `none` (the submission has no PDF report: the report criteria are judged on that absence),
//!   or empty: look for the report inside the repository, as a single audit does.
//! - `repo` is an URL (`https`, `http`, `ssh`, `git`, `file`), an scp-like `user@host:path`, or a
//!   local path (relative to the manifest's directory).
//! - A bad row (missing id, duplicate id, malformed URL, missing PDF file, ...) is reported with
//!   its line number; the other rows proceed. Only a manifest that cannot be read at all, or has a
//!   bad header, is an error for the whole batch.

use crate::audit::PdfSource;
use crate::repo::RepoSource;
use crate::repo::source::redact_text;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Output names an id may not take (they are files of the batch output directory).
pub const RESERVED_IDS: [&str; 5] = [
    "grades.csv",
    "summary.md",
    "index.html",
    "batch.sqlite",
    "batch.json",
];

/// A valid manifest row: one submission to grade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// 1-based line of the manifest where the row starts.
    pub line: usize,
    pub id: String,
    /// The repository as written in the manifest, credentials redacted.
    pub repo_shown: String,
    /// The repository to clone: an URL, or a local path made absolute (shown redacted).
    pub repo: RepoSource,
    pub pdf: PdfSource,
    /// Branch, tag or commit to audit; `None` means the repository's HEAD.
    pub git_ref: Option<String>,
}

/// A row that cannot be graded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    pub line: usize,
    /// The id, when the row had one.
    pub id: Option<String>,
    pub repo: Option<String>,
    pub reason: String,
}

/// One manifest row, in manifest order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    Ok(Submission),
    Bad(BadRow),
}

impl Row {
    pub fn line(&self) -> usize {
        match self {
            Row::Ok(s) => s.line,
            Row::Bad(b) => b.line,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub rows: Vec<Row>,
}

impl Manifest {
    pub fn submissions(&self) -> impl Iterator<Item = &Submission> {
        self.rows.iter().filter_map(|r| match r {
            Row::Ok(s) => Some(s),
            Row::Bad(_) => None,
        })
    }

    pub fn bad_rows(&self) -> impl Iterator<Item = &BadRow> {
        self.rows.iter().filter_map(|r| match r {
            Row::Bad(b) => Some(b),
            Row::Ok(_) => None,
        })
    }
}

/// The whole manifest is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read the manifest {path}: {source}. Check the path given to `auditor batch`.")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("manifest {path}: {problem}")]
    Header {
        path: String,
        #[source]
        problem: HeaderError,
    },
    #[error(
        "manifest {path} has no rows: add one line per submission (CSV with the header id,repo,pdf[,ref], or JSON Lines)"
    )]
    Empty { path: String },
}

/// What is wrong with a CSV manifest's header line.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    #[error("the header line cannot be read: {0}")]
    Unreadable(#[source] csv::Error),
    #[error(
        "line 1: unknown column {0:?}; the columns are id, repo, pdf (optional), ref (optional) and the student columns name, email, section (optional)"
    )]
    UnknownColumn(String),
    #[error("line 1: column {0:?} appears twice")]
    Twice(String),
    #[error(
        "line 1: the header has no {0:?} column; the first line must be a header such as id,repo,pdf"
    )]
    Missing(&'static str),
}

/// How to write a repository in a manifest.
const REPO_FIX: &str =
    "give an https URL (https://host/owner/repo.git), a file:// URL or a local path";
/// What one line of JSON Lines must be.
const JSONL_LINE: &str =
    "each line must be one object such as {\"id\": \"...\", \"repo\": \"...\"}";

/// Why one row of a manifest is not graded (the others proceed). Its text is the row's reason.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    #[error(
        "expected {width} fields like the header, found {found}; quote fields that contain commas"
    )]
    Fields { width: usize, found: usize },
    #[error("not a valid CSV row: {0}")]
    Csv(#[source] csv::Error),
    #[error("not valid JSON: {0}; {JSONL_LINE}")]
    Json(#[source] serde_json::Error),
    #[error("not a JSON object; {JSONL_LINE}")]
    NotAnObject,
    #[error(
        "unknown key {0:?}; the keys are id, repo, pdf (optional), ref (optional) and the student keys name, email, section (optional)"
    )]
    UnknownKey(String),
    #[error("key {key:?} must be a string, found {found}")]
    NotAString { key: String, found: String },
    #[error(transparent)]
    Id(#[from] IdError),
    #[error(
        "duplicate id {id:?} (first used on line {first}); ids must be unique (case-insensitively: each names an output directory)"
    )]
    Duplicate { id: String, first: usize },
    #[error("missing repo: give an https URL, a file:// URL or a local path")]
    MissingRepo,
    #[error("malformed repository {0:?}: it contains whitespace")]
    RepoWhitespace(String),
    #[error("malformed repository URL {shown:?}: {problem}; {REPO_FIX}")]
    RepoUrl {
        shown: String,
        #[source]
        problem: UrlError,
    },
    #[error(
        "pdf \"repo:\" has no path: write repo:reports/final.pdf, or leave pdf empty to look inside the repository"
    )]
    PdfNoPath,
    #[error(
        "pdf {0:?}: the path inside the repository must be relative, with '/' separators and no '..'"
    )]
    PdfPath(String),
    #[error(
        "pdf {} does not exist or is not a file: give an existing file (a relative path in a manifest is read from the manifest's folder, not the current directory), repo:<path in the repository>, or leave pdf empty to look inside the repository",
        .0.display()
    )]
    PdfMissing(PathBuf),
    #[error("ref {0:?} contains whitespace; give a branch, tag or commit hash")]
    RefWhitespace(String),
}

/// Why an id cannot name a submission's output directory.
#[derive(Debug, thiserror::Error)]
pub enum IdError {
    #[error("missing id: every row needs a unique id (it names the output directory)")]
    Missing,
    /// The id's first 20 characters.
    #[error("id {0:?}... is longer than 100 characters")]
    TooLong(String),
    #[error(
        "id {0:?} may contain only ASCII letters, digits, '.', '_', '-', '@' and '+', and must not start with '.' (it names the output directory)"
    )]
    Characters(String),
    #[error("id {0:?} is the name of a batch output file; choose another id")]
    Reserved(String),
}

/// What is wrong with a repository URL of a manifest.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    #[error("unsupported scheme {0:?}")]
    Scheme(String),
    #[error("{0}")]
    Parse(#[source] url::ParseError),
    #[error("no host")]
    NoHost,
    #[error("no repository path after the host")]
    NoRepositoryPath,
    #[error("no path")]
    NoPath,
    #[error("expected \"{0}://\" after the scheme")]
    NoSlashes(String),
}

const COLUMNS: [&str; 4] = ["id", "repo", "pdf", "ref"];
/// Optional student columns: the batch ignores them; the course team's review and exports
/// (`auditor serve`, `auditor export`) show and use them.
pub const STUDENT_COLUMNS: [&str; 3] = ["name", "email", "section"];

/// Reads a manifest file. `.jsonl`/`.ndjson` are JSON Lines, `.csv` is CSV; any other name is
/// JSON Lines when its first non-blank character is `{`, else CSV.
pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let base = std::fs::canonicalize(&base).unwrap_or(base);
    let name = path.display().to_string();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let jsonl = match ext.as_deref() {
        Some("jsonl") | Some("ndjson") => true,
        Some("csv") => false,
        _ => text.trim_start().starts_with('{'),
    };
    let manifest = if jsonl {
        parse_jsonl(&text, &base)
    } else {
        parse_csv(&text, &base, &name)?
    };
    if manifest.rows.is_empty() {
        return Err(ManifestError::Empty { path: name });
    }
    Ok(manifest)
}

/// The raw fields of one row, before validation.
#[derive(Debug, Default)]
struct RawRow {
    id: Option<String>,
    repo: Option<String>,
    pdf: Option<String>,
    git_ref: Option<String>,
}

/// Parses CSV text. `base` resolves relative paths; `name` is used in error messages.
pub fn parse_csv(text: &str, base: &Path, name: &str) -> Result<Manifest, ManifestError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header_err = |problem: HeaderError| ManifestError::Header {
        path: name.to_string(),
        problem,
    };
    let headers = reader
        .headers()
        .map_err(|e| header_err(HeaderError::Unreadable(e)))?
        .clone();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        let h = h.trim_start_matches('\u{feff}').trim().to_ascii_lowercase();
        let Some(known) = COLUMNS
            .iter()
            .chain(STUDENT_COLUMNS.iter())
            .find(|c| **c == h)
        else {
            return Err(header_err(HeaderError::UnknownColumn(h)));
        };
        if index.insert(known, i).is_some() {
            return Err(header_err(HeaderError::Twice(h)));
        }
    }
    for required in ["id", "repo"] {
        if !index.contains_key(required) {
            return Err(header_err(HeaderError::Missing(required)));
        }
    }
    let width = headers.len();
    let mut v = Validator::new(base);
    let mut record = csv::StringRecord::new();
    loop {
        let line_hint = reader.position().line() as usize;
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record
                    .position()
                    .map(|p| p.line() as usize)
                    .unwrap_or(line_hint);
                if record.len() == 1 && record.get(0).is_some_and(str::is_empty) {
                    continue;
                }
                if record.len() != width {
                    v.bad(
                        line,
                        RawRow::default(),
                        RowError::Fields {
                            width,
                            found: record.len(),
                        },
                    );
                    continue;
                }
                let get = |c: &str| {
                    index
                        .get(c)
                        .and_then(|i| record.get(*i))
                        .map(str::to_string)
                };
                let raw = RawRow {
                    id: get("id"),
                    repo: get("repo"),
                    pdf: get("pdf"),
                    git_ref: get("ref"),
                };
                v.row(line, raw);
            }
            Err(e) => {
                let line = e.position().map(|p| p.line() as usize).unwrap_or(line_hint);
                let io = matches!(e.kind(), csv::ErrorKind::Io(_));
                v.bad(line, RawRow::default(), RowError::Csv(e));
                if io {
                    break;
                }
            }
        }
    }
    Ok(v.finish())
}

/// Parses JSON Lines text: one object per line with the keys id, repo, pdf, ref.
pub fn parse_jsonl(text: &str, base: &Path) -> Manifest {
    let mut v = Validator::new(base);
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(trimmed) {
            Ok(v) => v,
            Err(e) => {
                v.bad(line_no, RawRow::default(), RowError::Json(e));
                continue;
            }
        };
        let Some(obj) = value.as_object() else {
            v.bad(line_no, RawRow::default(), RowError::NotAnObject);
            continue;
        };
        let mut raw = RawRow::default();
        let mut problem = None;
        for (k, val) in obj {
            if STUDENT_COLUMNS.contains(&k.as_str()) {
                continue;
            }
            if !COLUMNS.contains(&k.as_str()) {
                problem = Some(RowError::UnknownKey(k.clone()));
                continue;
            }
            let text = match val {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) if k == "id" => Some(n.to_string()),
                other => {
                    problem = Some(RowError::NotAString {
                        key: k.clone(),
                        found: other.to_string(),
                    });
                    continue;
                }
            };
            match k.as_str() {
                "id" => raw.id = text,
                "repo" => raw.repo = text,
                "pdf" => raw.pdf = text,
                _ => raw.git_ref = text,
            }
        }
        match problem {
            Some(p) => v.bad(line_no, raw, p),
            None => v.row(line_no, raw),
        }
    }
    v.finish()
}

/// Validates rows in order, remembering ids for the duplicate check.
struct Validator<'a> {
    base: &'a Path,
    seen: BTreeMap<String, usize>,
    rows: Vec<Row>,
}

impl<'a> Validator<'a> {
    fn new(base: &'a Path) -> Self {
        Validator {
            base,
            seen: BTreeMap::new(),
            rows: Vec::new(),
        }
    }

    fn bad(&mut self, line: usize, raw: RawRow, reason: RowError) {
        self.rows.push(Row::Bad(BadRow {
            line,
            id: raw
                .id
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            repo: raw
                .repo
                .map(|s| redact_text(s.trim()).0)
                .filter(|s| !s.is_empty()),
            reason: reason.to_string(),
        }));
    }

    fn row(&mut self, line: usize, raw: RawRow) {
        match self.validate(line, &raw) {
            Ok(sub) => {
                self.seen.insert(sub.id.to_lowercase(), line);
                self.rows.push(Row::Ok(sub));
            }
            Err(reason) => self.bad(line, raw, reason),
        }
    }

    fn validate(&self, line: usize, raw: &RawRow) -> Result<Submission, RowError> {
        let id = raw.id.as_deref().map(str::trim).unwrap_or("");
        check_id(id)?;
        if let Some(first) = self.seen.get(&id.to_lowercase()) {
            let (id, first) = (id.to_string(), *first);
            return Err(RowError::Duplicate { id, first });
        }
        let repo_raw = raw.repo.as_deref().map(str::trim).unwrap_or("");
        let checked = check_repo(repo_raw, self.base)?;
        let repo = if !repo_raw.contains("://") && Path::new(&checked).is_absolute() {
            // A local repository: cloned from its absolute path, shown (in the reports a
            // student reads) by its folder's name, never by the grader's machine path.
            let name = Path::new(&checked)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| repo_raw.to_string());
            RepoSource::with_shown(checked, name)
        } else {
            RepoSource::new(checked)
        };
        let pdf = check_pdf(raw.pdf.as_deref().map(str::trim).unwrap_or(""), self.base)?;
        let git_ref = match raw.git_ref.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(r) if r.chars().any(char::is_whitespace) => {
                return Err(RowError::RefWhitespace(r.to_string()));
            }
            Some(r) => Some(r.to_string()),
        };
        Ok(Submission {
            line,
            id: id.to_string(),
            repo_shown: redact_text(repo_raw).0,
            repo,
            pdf,
            git_ref,
        })
    }

    fn finish(self) -> Manifest {
        Manifest { rows: self.rows }
    }
}

/// An id names the submission's output directory: a safe file name.
pub fn check_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() {
        return Err(IdError::Missing);
    }
    if id.len() > 100 {
        return Err(IdError::TooLong(id.chars().take(20).collect()));
    }
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '+');
    if !id.chars().all(ok_char) || id.starts_with('.') {
        return Err(IdError::Characters(id.to_string()));
    }
    if RESERVED_IDS.iter().any(|r| r.eq_ignore_ascii_case(id)) {
        return Err(IdError::Reserved(id.to_string()));
    }
    Ok(())
}

const URL_SCHEMES: [&str; 6] = ["https", "http", "ssh", "git", "file", "git+ssh"];

/// Whether a manifest's `repo` text is a relative local path (read from the manifest's folder).
pub fn is_relative_local(written: &str) -> bool {
    let scp_like = written
        .split_once(':')
        .is_some_and(|(u, p)| !u.is_empty() && !p.is_empty() && !u.contains('/'));
    !written.is_empty() && !written.contains("://") && !scp_like && Path::new(written).is_relative()
}

/// Checks the repository and returns what to clone (local paths made absolute).
pub fn check_repo(repo: &str, base: &Path) -> Result<String, RowError> {
    let shown = redact_text(repo).0;
    if repo.is_empty() {
        return Err(RowError::MissingRepo);
    }
    if repo.chars().any(char::is_whitespace) {
        return Err(RowError::RepoWhitespace(shown));
    }
    let url_error = |problem: UrlError| RowError::RepoUrl {
        shown: shown.clone(),
        problem,
    };
    if let Some((scheme, _)) = repo.split_once("://") {
        let scheme_l = scheme.to_ascii_lowercase();
        if !URL_SCHEMES.contains(&scheme_l.as_str()) {
            return Err(url_error(UrlError::Scheme(scheme.to_string())));
        }
        let url = url::Url::parse(repo).map_err(|e| url_error(UrlError::Parse(e)))?;
        if scheme_l != "file" && url.host_str().is_none_or(str::is_empty) {
            return Err(url_error(UrlError::NoHost));
        }
        if scheme_l != "file" && url.path().trim_matches('/').is_empty() {
            return Err(url_error(UrlError::NoRepositoryPath));
        }
        if scheme_l == "file" && url.path().is_empty() {
            return Err(url_error(UrlError::NoPath));
        }
        return Ok(repo.to_string());
    }
    if let Some((scheme, _)) = repo.split_once(':') {
        if URL_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Err(url_error(UrlError::NoSlashes(scheme.to_string())));
        }
        // scp-like `user@host:owner/repo.git`
        let (userhost, path) = repo.split_once(':').unwrap_or_default();
        if !userhost.is_empty() && !path.is_empty() && !userhost.contains('/') {
            return Ok(repo.to_string());
        }
    }
    let p = Path::new(repo);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    Ok(abs.display().to_string())
}

/// Checks the `pdf` field.
pub fn check_pdf(pdf: &str, base: &Path) -> Result<PdfSource, RowError> {
    if pdf.is_empty() {
        return Ok(PdfSource::InRepo(None));
    }
    if pdf.eq_ignore_ascii_case("none") {
        return Ok(PdfSource::NoReport);
    }
    if let Some(inner) = pdf.strip_prefix("repo:") {
        let inner = inner.trim();
        if inner.is_empty() {
            return Err(RowError::PdfNoPath);
        }
        let p = Path::new(inner);
        let safe = p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !safe || inner.contains('\\') {
            return Err(RowError::PdfPath(pdf.to_string()));
        }
        return Ok(PdfSource::InRepo(Some(inner.to_string())));
    }
    let p = Path::new(pdf);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    if !abs.is_file() {
        return Err(RowError::PdfMissing(abs));
    }
    Ok(PdfSource::File(abs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> PathBuf {
        PathBuf::from("/base")
    }

    fn reasons(m: &Manifest) -> Vec<(usize, String)> {
        m.bad_rows().map(|b| (b.line, b.reason.clone())).collect()
    }

    #[test]
    fn csv_rows_with_all_pdf_forms() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.pdf"), b"%PDF").unwrap();
        let text = "id,repo,pdf,ref\n\
            a,https://github.com/x/a.git,,\n\
            b,https://github.com/x/b.git,repo:reports/final.pdf,main\n\
            c,./local/c,r.pdf,v1.0\n";
        let m = parse_csv(text, dir.path(), "m.csv").unwrap();
        let subs: Vec<&Submission> = m.submissions().collect();
        assert_eq!(subs.len(), 3, "{:?}", reasons(&m));
        assert_eq!(subs[0].pdf, PdfSource::InRepo(None));
        assert_eq!(subs[0].git_ref, None);
        assert_eq!(subs[0].line, 2);
        assert_eq!(
            subs[1].pdf,
            PdfSource::InRepo(Some("reports/final.pdf".into()))
        );
        assert_eq!(subs[1].git_ref.as_deref(), Some("main"));
        assert_eq!(subs[2].pdf, PdfSource::File(dir.path().join("r.pdf")));
        assert_eq!(
            subs[2].repo.expose(),
            dir.path().join("./local/c").display().to_string()
        );
        assert_eq!(subs[2].line, 4);
    }

    #[test]
    fn bad_rows_are_reported_by_line_and_the_others_proceed() {
        let text = "id,repo,pdf\n\
            ok1,https://h/x/a.git,\n\
            ,https://h/x/b.git,\n\
            ok1,https://h/x/c.git,\n\
            bad url,https://h/x/d.git,\n\
            u1,htps://h/x.git,\n\
            u2,https:/h/x.git,\n\
            u3,https://,\n\
            p1,https://h/x/e.git,missing.pdf\n\
            p2,https://h/x/f.git,repo:../etc/passwd\n\
            f1,https://h/x/g.git\n\
            ok2,git@github.com:x/ok2.git,\n";
        let m = parse_csv(text, &base(), "m.csv").unwrap();
        let ok: Vec<&str> = m.submissions().map(|s| s.id.as_str()).collect();
        assert_eq!(ok, vec!["ok1", "ok2"]);
        let bad = reasons(&m);
        let lines: Vec<usize> = bad.iter().map(|b| b.0).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert!(bad[0].1.contains("missing id"));
        assert!(
            bad[1]
                .1
                .contains("duplicate id \"ok1\" (first used on line 2)")
        );
        assert!(bad[2].1.contains("may contain only"));
        assert!(bad[3].1.contains("unsupported scheme"));
        assert!(bad[4].1.contains("expected \"https://\""));
        assert!(bad[5].1.contains("malformed repository URL"));
        assert!(bad[6].1.contains("does not exist"));
        assert!(bad[7].1.contains("no '..'"));
        assert!(bad[8].1.contains("expected 3 fields"));
        assert_eq!(m.rows.len(), 11);
    }

    #[test]
    fn csv_header_problems_are_errors_for_the_whole_manifest() {
        let e = parse_csv("id,repository\nx,y\n", &base(), "m.csv").unwrap_err();
        assert!(
            e.to_string().contains("unknown column \"repository\""),
            "{e}"
        );
        let e = parse_csv("id,pdf\nx,y\n", &base(), "m.csv").unwrap_err();
        assert!(e.to_string().contains("no \"repo\" column"), "{e}");
    }

    #[test]
    fn csv_columns_in_any_order_and_quoted_fields() {
        let m = parse_csv("repo,id\n\"https://h/o/r.git\",\"s-1\"\n", &base(), "m.csv").unwrap();
        let s: Vec<&Submission> = m.submissions().collect();
        assert_eq!(s[0].id, "s-1");
        assert_eq!(s[0].repo.expose(), "https://h/o/r.git");
    }

    #[test]
    fn jsonl_rows() {
        let text = "{\"id\":\"a\",\"repo\":\"https://h/o/a.git\",\"pdf\":\"repo:r.pdf\",\"ref\":\"dev\"}\n\
            \n\
            {\"id\":7,\"repo\":\"/abs/repo\",\"pdf\":null}\n\
            [1,2]\n\
            {\"id\":\"x\",\"repo\":\"https://h/o/x.git\",\"extra\":1}\n\
            {not json\n\
            {\"id\":\"a\",\"repo\":\"https://h/o/b.git\"}\n";
        let m = parse_jsonl(text, &base());
        let ok: Vec<(usize, &str)> = m.submissions().map(|s| (s.line, s.id.as_str())).collect();
        assert_eq!(ok, vec![(1, "a"), (3, "7")]);
        let s: Vec<&Submission> = m.submissions().collect();
        assert_eq!(s[0].git_ref.as_deref(), Some("dev"));
        assert_eq!(s[0].pdf, PdfSource::InRepo(Some("r.pdf".into())));
        let lines: Vec<usize> = m.bad_rows().map(|b| b.line).collect();
        assert_eq!(lines, vec![4, 5, 6, 7]);
        assert!(reasons(&m)[1].1.contains("unknown key \"extra\""));
        assert!(reasons(&m)[3].1.contains("duplicate id"));
    }

    #[test]
    fn ids_are_safe_directory_names() {
        assert!(check_id("alice.smith@uni-x+1").is_ok());
        assert!(check_id("..").is_err());
        assert!(check_id("a/b").is_err());
        assert!(check_id("index.html").is_err());
        assert!(check_id("").is_err());
    }

    #[test]
    fn load_detects_format_and_rejects_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.txt");
        std::fs::write(&p, "{\"id\":\"a\",\"repo\":\"https://h/o/a.git\"}\n").unwrap();
        assert_eq!(load(&p).unwrap().submissions().count(), 1);
        let e = dir.path().join("e.csv");
        std::fs::write(&e, "id,repo\n").unwrap();
        assert!(matches!(load(&e), Err(ManifestError::Empty { .. })));
        assert!(matches!(
            load(&dir.path().join("nope.csv")),
            Err(ManifestError::Read { .. })
        ));
    }
}
