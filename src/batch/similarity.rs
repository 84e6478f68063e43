//! Cohort similarity in a batch, and `auditor similarity`: which submissions share code beyond
//! the starter code (the method: [`crate::similarity`]).
//!
//! - **Incremental.** A submission's fingerprints are stored in the batch store, keyed by
//!   (submission, commit, fingerprint configuration): a resumed or regraded batch reads them
//!   back and fingerprints only what is new (each repository is cloned once more for it, at
//!   the graded commit, and only then).
//! - **Outputs.** `similarity.csv` (`a,b,similarity,shared_tokens,longest_fragment_tokens`: the
//!   flagged pairs, most similar first), `similarity.json` (the whole [`CohortReport`]: every
//!   submission, its nearest neighbour, the flagged pairs with their fragments side by side,
//!   `path:line` and the lines quoted: what a review app shows) and `similarity.html` (the same
//!   for a reader); the batch dashboard gets a section ([`section_view`], rendered by the dashboard's template).
//! - **What a flag is.** A flagged pair asks a person to look; it never changes a score, and no
//!   text calls it anything but shared code.

use super::outputs::{SIMILARITY_SECTION_TEMPLATE, csv_cell};
use super::store::BatchStore;
use crate::repo::{RepoError, RepoSource};
use crate::similarity::compare::{Entry, NotCompared, Pair};
use crate::similarity::{self, CohortReport, Fingerprints, Limits, Options, codec, read};
use clap::Args;
use handlebars::Handlebars;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The similarity settings shared by `auditor batch` and `auditor similarity`.
#[derive(Debug, Clone, Args)]
pub struct SimilarityArgs {
    /// The challenge's template (its starter code): a local path (a git repository or a plain
    /// directory) or an https URL. None of its code ever counts as shared.
    #[arg(long, value_name = "PATH|URL")]
    pub template: Option<String>,
    /// A pair of submissions at or above this similarity (0 to 1: twice the fingerprints they
    /// share over the fingerprints of both) is flagged for review.
    #[arg(
        long,
        visible_alias = "threshold",
        value_name = "FRACTION",
        default_value_t = 0.5
    )]
    pub similarity_threshold: f64,
    /// Code found in more than this share of the cohort (and in more than 2 submissions) is
    /// common code and never counts.
    #[arg(
        long,
        visible_alias = "max-share",
        value_name = "FRACTION",
        default_value_t = 0.2
    )]
    pub similarity_max_share: f64,
}

impl Default for SimilarityArgs {
    fn default() -> Self {
        let o = Options::default();
        SimilarityArgs {
            template: None,
            similarity_threshold: o.threshold,
            similarity_max_share: o.max_share,
        }
    }
}

impl SimilarityArgs {
    /// Checks the values before anything runs (bad input).
    pub fn validate(&self) -> Result<Options, OptionsError> {
        for (name, value) in [
            ("--similarity-threshold", self.similarity_threshold),
            ("--similarity-max-share", self.similarity_max_share),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(OptionsError::OutOfRange { name, value });
            }
        }
        if let Some(t) = &self.template {
            template_source(t)?;
        }
        Ok(Options {
            threshold: self.similarity_threshold,
            max_share: self.similarity_max_share,
            ..Options::default()
        })
    }
}

/// Where a submission's code is.
#[derive(Debug, Clone)]
pub enum Place {
    /// A repository at a commit (fingerprints stored under it).
    Repo { source: RepoSource, commit: String },
    /// A working tree on disk (never stored).
    Dir(PathBuf),
}

#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub place: Place,
}

#[derive(Debug, thiserror::Error)]
pub enum SimilarityError {
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error("the template {shown}: {source}")]
    Template {
        shown: String,
        #[source]
        source: CodeError,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the similarity pages' templates: {0}")]
    HtmlTemplate(#[source] Box<handlebars::TemplateError>),
    #[error("cannot build the similarity pages: {0}")]
    Html(#[source] Box<handlebars::RenderError>),
}

/// Why a submission's (or the template's) code could not be fingerprinted.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error(transparent)]
    Template(#[from] OptionsError),
    #[error(transparent)]
    Read(#[from] read::ReadError),
    #[error(transparent)]
    Parse(#[from] similarity::ParseError),
}

/// Why the similarity options cannot be used (bad input, before anything runs).
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    #[error("{name} {value} is out of range: give a number from 0 to 1")]
    OutOfRange { name: &'static str, value: f64 },
    /// The template is checked as a repository source; its message names the template.
    #[error("--template: {}", .0.to_string().replace("--repo", "the path"))]
    Template(#[source] RepoError),
}

fn template_source(t: &str) -> Result<RepoSource, OptionsError> {
    let source = RepoSource::new(t.to_string());
    crate::repo::validate_source(&source).map_err(OptionsError::Template)?;
    Ok(source)
}

/// A template's k-grams: a git repository (at HEAD) or a plain directory.
fn template_kgrams(t: &str, limits: &Limits) -> Result<(HashSet<u64>, String), SimilarityError> {
    let shown = RepoSource::new(t.to_string()).shown().to_string();
    let kgrams = || -> Result<HashSet<u64>, CodeError> {
        let source = template_source(t)?;
        let plain_dir = Path::new(t).is_dir() && git2::Repository::open(t).is_err();
        let sources = if plain_dir {
            read::from_dir(Path::new(t), limits)?.0
        } else {
            read::from_commit(&source, None, limits)?.0
        };
        Ok(similarity::compare::template_kgrams(&sources, limits)?)
    };
    match kgrams() {
        Ok(set) => Ok((set, shown)),
        Err(source) => Err(SimilarityError::Template { shown, source }),
    }
}

/// Fingerprints of one target, read from its place (blocking).
fn compute(t: &Target, limits: &Limits) -> Result<Fingerprints, CodeError> {
    let (sources, notes) = match &t.place {
        Place::Repo { source, commit } => {
            let (s, _, n) = read::from_commit(source, Some(commit), limits)?;
            (s, n)
        }
        Place::Dir(d) => read::from_dir(d, limits)?,
    };
    Ok(similarity::fingerprint(sources, limits, notes)?)
}

fn stored(
    store: Option<&dyn BatchStore>,
    t: &Target,
    config: &str,
    with_texts: bool,
) -> Option<Fingerprints> {
    let (Some(store), Place::Repo { commit, .. }) = (store, &t.place) else {
        return None;
    };
    let bytes = match store.fingerprints(&t.id, commit, config) {
        Ok(b) => b?,
        Err(e) => {
            tracing::warn!(submission = %t.id, error = %e, "stored fingerprints unreadable");
            return None;
        }
    };
    match codec::decode(&bytes, with_texts) {
        Ok(f) => Some(f),
        Err(e) => {
            tracing::warn!(submission = %t.id, error = %e, "fingerprinting again");
            None
        }
    }
}

/// How a similarity run went, for the caller's summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub from_store: usize,
    pub fingerprinted: usize,
}

/// Fingerprints every target (from the store when it holds them; else read, fingerprinted and
/// stored, unless `compute` is false), compares the cohort and quotes the flagged pairs'
/// fragments. `say` receives progress lines.
pub fn run(
    targets: &[Target],
    mut not_compared: Vec<NotCompared>,
    store: Option<&dyn BatchStore>,
    args: &SimilarityArgs,
    compute_missing: bool,
    say: &dyn Fn(&str),
) -> Result<(CohortReport, Counts), SimilarityError> {
    let opts = args.validate()?;
    let limits = Limits::default();
    let prints = Fingerprinter {
        targets,
        store,
        config: similarity::config_key(&limits),
        limits,
    };
    let template = match &args.template {
        Some(t) => Some(template_kgrams(t, &prints.limits)?),
        None => None,
    };
    let mut counts = Counts::default();
    let mut have: Vec<Option<Fingerprints>> =
        targets.iter().map(|t| prints.stored(t, false)).collect();
    counts.from_store = have.iter().filter(|h| h.is_some()).count();
    let missing: Vec<usize> = (0..targets.len()).filter(|i| have[*i].is_none()).collect();
    if !missing.is_empty() && compute_missing {
        say(&format!(
            "Similarity: fingerprinting {} ({} already stored)",
            crate::words::count(missing.len(), "submission", "submissions"),
            counts.from_store
        ));
    }
    if compute_missing {
        for (i, reason) in prints.compute_missing(&missing, &mut have, &mut counts) {
            not_compared.push(NotCompared {
                id: targets[i].id.clone(),
                reason: format!("its code could not be read: {reason}"),
            });
        }
    } else {
        for (i, h) in have.iter().enumerate() {
            if h.is_none() {
                not_compared.push(NotCompared {
                    id: targets[i].id.clone(),
                    reason: "no fingerprints stored for its graded commit (run the batch without --outputs-only to compute them)".into(),
                });
            }
        }
    }
    let mut report = compare_present(targets, have, template.as_ref(), not_compared, &opts);
    similarity::compare::quote(&mut report, &mut |id| {
        let t = targets.iter().find(|t| t.id == id)?;
        prints
            .stored(t, true)
            .or_else(|| compute(t, &prints.limits).ok())
    });
    Ok((report, counts))
}

/// Where a run's fingerprints come from: the store, or the targets' code read within `limits`.
struct Fingerprinter<'a> {
    targets: &'a [Target],
    store: Option<&'a dyn BatchStore>,
    limits: Limits,
    /// The settings the fingerprints are stored under ([`similarity::config_key`]).
    config: String,
}

impl Fingerprinter<'_> {
    /// A target's stored fingerprints, if the store holds readable ones.
    fn stored(&self, t: &Target, with_texts: bool) -> Option<Fingerprints> {
        stored(self.store, t, &self.config, with_texts)
    }

    /// Fingerprints the targets `missing` (their places in `have`, filled in), storing each,
    /// in chunks: the texts of a chunk are stored, then dropped (bounded memory). The targets
    /// whose code could not be read, and why.
    fn compute_missing(
        &self,
        missing: &[usize],
        have: &mut [Option<Fingerprints>],
        counts: &mut Counts,
    ) -> Vec<(usize, CodeError)> {
        let mut failed: Vec<(usize, CodeError)> = Vec::new();
        let (targets, limits) = (self.targets, &self.limits);
        let chunk = rayon::current_num_threads().max(1) * 2;
        for part in missing.chunks(chunk) {
            let done: Vec<(usize, Result<Fingerprints, CodeError>)> = part
                .par_iter()
                .map(|&i| (i, compute(&targets[i], limits)))
                .collect();
            for (i, r) in done {
                match r {
                    Ok(mut fp) => {
                        self.save(&targets[i], &fp);
                        fp.texts = None;
                        counts.fingerprinted += 1;
                        have[i] = Some(fp);
                    }
                    Err(e) => failed.push((i, e)),
                }
            }
        }
        failed
    }

    /// Keeps a target's fingerprints (with their texts) in the store, if there is one and the
    /// target is a commit; a failure is logged, the run goes on.
    fn save(&self, t: &Target, fp: &Fingerprints) {
        if let (Some(store), Place::Repo { commit, .. }) = (self.store, &t.place)
            && let Err(e) = store.save_fingerprints(&t.id, commit, &self.config, &codec::encode(fp))
        {
            tracing::warn!(submission = %t.id, error = %e, "fingerprints not stored");
        }
    }
}

/// Compares the targets that have fingerprints (`have`, by target).
fn compare_present(
    targets: &[Target],
    have: Vec<Option<Fingerprints>>,
    template: Option<&(HashSet<u64>, String)>,
    not_compared: Vec<NotCompared>,
    opts: &Options,
) -> CohortReport {
    let present: Vec<(usize, Fingerprints)> = have
        .into_iter()
        .enumerate()
        .filter_map(|(i, h)| h.map(|f| (i, f)))
        .collect();
    let entries: Vec<Entry> = present
        .iter()
        .map(|(i, fp)| Entry {
            id: &targets[*i].id,
            commit: match &targets[*i].place {
                Place::Repo { commit, .. } => Some(commit.as_str()),
                Place::Dir(_) => None,
            },
            fp,
        })
        .collect();
    similarity::compare(
        &entries,
        template.map(|(set, shown)| (set, shown.clone())),
        not_compared,
        opts,
    )
}

/// The columns of `similarity.csv`.
pub const CSV_COLUMNS: [&str; 5] = [
    "a",
    "b",
    "similarity",
    "shared_tokens",
    "longest_fragment_tokens",
];

fn ratio(x: f64) -> String {
    format!("{x:.4}")
}

/// `similarity.csv`: the flagged pairs, most similar first; every text cell safe from
/// spreadsheet formulas.
pub fn csv(report: &CohortReport) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    for p in report.flagged() {
        w.write_record([
            csv_cell(&p.a),
            csv_cell(&p.b),
            ratio(p.similarity),
            p.shared_tokens.to_string(),
            p.longest_fragment_tokens.to_string(),
        ])?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn method_line(r: &CohortReport) -> String {
    let m = &r.method;
    format!(
        "Python code as tree-sitter tokens (names, strings and numbers normalised, comments dropped), \
         fingerprints of {k}-token sequences chosen by winnowing (window {w}); {tpl}code found in more than {c} submissions left out as common ({ic} fingerprints); \
         a pair is flagged at {t} similarity or more (twice the fingerprints both have, over all the fingerprints of the two) when it shares at least {min} tokens.",
        k = m.k,
        w = m.window,
        tpl = match &m.template {
            Some(t) => format!(
                "the template {} left out ({} fingerprints); ",
                t, r.ignored_template
            ),
            None => "no template given; ".to_string(),
        },
        c = m.common_above,
        ic = r.ignored_common,
        t = pct(m.threshold),
        min = m.min_shared_tokens,
    )
}

/// What a flag is, said wherever flags are shown.
pub const WHAT_A_FLAG_IS: &str = "A flagged pair shares code beyond the template and the code common to the cohort: a person should look at the fragments. A flag changes no score and is no verdict.";

/// The similarity page (its section: [`SIMILARITY_SECTION_TEMPLATE`]): handlebars, every value
/// escaped by handlebars' own HTML escaping (no triple-stash).
const PAGE_TEMPLATE: &str = include_str!("templates/similarity.html.hbs");

/// What the section shows (the dashboard's, and the page's without its heading).
#[derive(Serialize)]
pub struct SectionView<'a> {
    heading: bool,
    compared: String,
    sharing: String,
    flagged: String,
    what: &'static str,
    not_compared: &'a [NotCompared],
    /// The flagged pairs, numbered from 1.
    pairs: Vec<PairView<'a>>,
    threshold: String,
    /// Without a flagged pair: the most similar pair, if any.
    nearest: Option<NearestPair<'a>>,
}

#[derive(Serialize)]
struct PairView<'a> {
    n: usize,
    a: &'a str,
    b: &'a str,
    similarity: String,
    a_in_b: String,
    b_in_a: String,
    shared_tokens: u64,
    longest: u64,
    fragments_total: usize,
    fragments_shown: usize,
    fragments: Vec<FragmentView<'a>>,
}

#[derive(Serialize)]
struct FragmentView<'a> {
    tokens: u64,
    left: SpanView<'a>,
    right: SpanView<'a>,
}

#[derive(Serialize)]
struct SpanView<'a> {
    path: &'a str,
    from: u32,
    to: u32,
    excerpt: &'a str,
}

#[derive(Serialize)]
struct NearestPair<'a> {
    a: &'a str,
    b: &'a str,
    similarity: String,
}

/// What the page shows besides the section.
#[derive(Serialize)]
struct PageView<'a> {
    title: &'a str,
    method: String,
    section: SectionView<'a>,
    submissions: Vec<SubmissionView<'a>>,
}

#[derive(Serialize)]
struct SubmissionView<'a> {
    id: &'a str,
    files: usize,
    tokens: u64,
    own_fingerprints: usize,
    nearest: Option<NearestOf<'a>>,
    /// Empty: nobody.
    flagged_with: String,
    notes: String,
}

#[derive(Serialize)]
struct NearestOf<'a> {
    id: &'a str,
    similarity: String,
}

pub fn section_view(r: &CohortReport, heading: bool) -> SectionView<'_> {
    let pairs: Vec<PairView> = r
        .flagged()
        .enumerate()
        .map(|(i, p)| PairView {
            n: i + 1,
            a: &p.a,
            b: &p.b,
            similarity: pct(p.similarity),
            a_in_b: pct(p.a_in_b),
            b_in_a: pct(p.b_in_a),
            shared_tokens: p.shared_tokens,
            longest: p.longest_fragment_tokens,
            fragments_total: p.fragments_total,
            fragments_shown: p.fragments.len(),
            fragments: p
                .fragments
                .iter()
                .map(|f| FragmentView {
                    tokens: f.tokens,
                    left: span_view(&f.a),
                    right: span_view(&f.b),
                })
                .collect(),
        })
        .collect();
    let nearest = r
        .submissions
        .iter()
        .filter_map(|s| s.nearest.as_ref().map(|n| (s, n)))
        .max_by(|x, y| x.1.similarity.total_cmp(&y.1.similarity))
        .map(|(s, n)| NearestPair {
            a: &s.id,
            b: &n.id,
            similarity: pct(n.similarity),
        });
    SectionView {
        heading,
        compared: crate::words::count(r.submissions.len(), "submission", "submissions"),
        sharing: crate::words::count(r.pairs_sharing, "pair", "pairs"),
        flagged: crate::words::count(pairs.len(), "pair", "pairs"),
        what: WHAT_A_FLAG_IS,
        not_compared: &r.not_compared,
        pairs,
        threshold: pct(r.method.threshold),
        nearest,
    }
}

fn span_view(s: &similarity::compare::Span) -> SpanView<'_> {
    SpanView {
        path: &s.path,
        from: s.line_from,
        to: s.line_to,
        excerpt: s.excerpt.as_deref().unwrap_or("(text not available)"),
    }
}

fn templates() -> Result<Handlebars<'static>, SimilarityError> {
    let mut hb = Handlebars::new();
    hb.register_template_string("similarity_section", SIMILARITY_SECTION_TEMPLATE)
        .map_err(|e| SimilarityError::HtmlTemplate(Box::new(e)))?;
    hb.register_template_string("similarity", PAGE_TEMPLATE)
        .map_err(|e| SimilarityError::HtmlTemplate(Box::new(e)))?;
    Ok(hb)
}

/// `similarity.html`: the method, the flagged pairs with their fragments side by side, every
/// submission's nearest neighbour. Self-contained; every byte of a submission is escaped text.
pub fn page_html(r: &CohortReport, title: &str) -> Result<String, SimilarityError> {
    let page = PageView {
        title,
        method: method_line(r),
        section: section_view(r, false),
        submissions: r
            .submissions
            .iter()
            .map(|s| SubmissionView {
                id: &s.id,
                files: s.files,
                tokens: s.tokens,
                own_fingerprints: s.own_fingerprints,
                nearest: s.nearest.as_ref().map(|n| NearestOf {
                    id: &n.id,
                    similarity: pct(n.similarity),
                }),
                flagged_with: s.flagged_with.join(", "),
                notes: s.notes.join("; "),
            })
            .collect(),
    };
    templates()?
        .render("similarity", &page)
        .map_err(|e| SimilarityError::Html(Box::new(e)))
}

/// Writes `similarity.csv`, `similarity.json` and `similarity.html` into `out`.
pub fn write(out: &Path, r: &CohortReport, title: &str) -> Result<(), SimilarityError> {
    let w = |name: &str, bytes: &[u8]| {
        let path = out.join(name);
        crate::files::write_atomic(&path, bytes).map_err(|source| SimilarityError::Write {
            path: path.display().to_string(),
            source,
        })
    };
    let csv = csv(r).map_err(|e| SimilarityError::Write {
        path: out.join("similarity.csv").display().to_string(),
        source: std::io::Error::other(e),
    })?;
    w("similarity.csv", csv.as_bytes())?;
    let json = serde_json::to_vec_pretty(r).map_err(|e| SimilarityError::Write {
        path: out.join("similarity.json").display().to_string(),
        source: std::io::Error::other(e),
    })?;
    w("similarity.json", &json)?;
    w("similarity.html", page_html(r, title)?.as_bytes())?;
    Ok(())
}

/// The flag a graded row gets for each submission it forms a flagged pair with.
pub fn row_flag(other: &str) -> String {
    format!("similar_code_with={other}")
}

/// `auditor similarity MANIFEST|DIR`
#[derive(Debug, Clone, Args)]
#[command(
    about = "Find the submissions of a cohort that share code beyond the starter code (flags for review; never scores)",
    long_about = "Compares the Python code of every submission of a cohort with every other: normalised \
tree-sitter tokens, fingerprints of 23-token sequences chosen by winnowing (the method of MOSS and Dolos), \
the template's code (--template) and code common to much of the cohort left out. A pair at or above the \
threshold is flagged for a person to review; nothing is scored.\n\n\
INPUT is one of:\n  \
- a manifest (as for `auditor batch`): each repository is read at its ref (default HEAD); with --out \
pointing at the batch's output directory, the fingerprints the batch stored are reused;\n  \
- an `auditor batch` output directory (it has grades.csv): the graded commits, with the fingerprints \
the batch stored (the others are read again from the repository column);\n  \
- a directory with one working tree per submission (e.g. a classroom's clones): each subdirectory is a \
submission named after it.\n\n\
Outputs in --out (default: the batch directory given as INPUT): similarity.csv \
(a,b,similarity,shared_tokens,longest_fragment_tokens: the flagged pairs, most similar first), \
similarity.json (every pair's fragments side by side with path:line, for a review app) and similarity.html.\n\n\
Exit codes: 0 nothing flagged and every submission compared; 2 bad input; 3 some pair flagged or some \
submission not compared."
)]
pub struct SimilarityCommand {
    /// A manifest, an `auditor batch` output directory, or a directory of working trees.
    #[arg(value_name = "MANIFEST|DIR")]
    pub input: PathBuf,
    /// Where to write similarity.csv, .json and .html (default: INPUT when it is a batch
    /// output directory; required otherwise). With a manifest, its batch store (if any) keeps
    /// the fingerprints.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub similarity: SimilarityArgs,
    /// The batch store holding fingerprints: "sqlite" (default: OUT/batch.sqlite) or a
    /// PostgreSQL URL (as for `auditor batch`). Not used for a directory of working trees.
    #[arg(
        long,
        value_name = "sqlite|postgres://…",
        env = "AUDITOR_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
}

fn bad(e: impl Into<crate::exit::BoxError>) -> crate::exit::CliError {
    crate::exit::CliError::bad_input(e)
}

/// An input or output place of `auditor similarity` that cannot be used.
#[derive(Debug, thiserror::Error)]
enum PlaceError {
    #[error("cannot read {}: {source}", .path.display())]
    ReadDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {}: {source}", .path.display())]
    OpenCsv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("{}: {source}", .path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("{}: cannot be read ({source})", .path.display())]
    Input {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create {}: {source}", .path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One submission per line of `grades.csv` that has a commit; the others not compared.
fn from_grades(dir: &Path) -> Result<(Vec<Target>, Vec<NotCompared>), crate::exit::CliError> {
    let path = dir.join("grades.csv");
    let csv_error = |source| {
        bad(PlaceError::Csv {
            path: path.clone(),
            source,
        })
    };
    let mut reader = csv::Reader::from_path(&path).map_err(|source| {
        bad(PlaceError::OpenCsv {
            path: path.clone(),
            source,
        })
    })?;
    let headers = reader.headers().map_err(csv_error)?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| bad(format!("{}: no column {name:?}", path.display())))
    };
    let (id, repo, commit, status) = (col("id")?, col("repo")?, col("commit")?, col("status")?);
    let mut targets = Vec::new();
    let mut not = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(csv_error)?;
        let get = |i: usize| rec.get(i).unwrap_or("").to_string();
        let (i, c) = (get(id), get(commit));
        if i.is_empty() {
            continue;
        }
        if c.is_empty() {
            not.push(NotCompared {
                id: i,
                reason: format!("no graded commit (status {})", get(status)),
            });
            continue;
        }
        targets.push(Target {
            id: i,
            place: Place::Repo {
                source: RepoSource::new(get(repo)),
                commit: c,
            },
        });
    }
    Ok((targets, not))
}

/// One submission per subdirectory (hidden ones aside), named after it.
fn from_working_trees(dir: &Path) -> Result<Vec<Target>, crate::exit::CliError> {
    let mut targets = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|source| {
        bad(PlaceError::ReadDir {
            path: dir.to_path_buf(),
            source,
        })
    })?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        targets.push(Target {
            id: name,
            place: Place::Dir(e.path()),
        });
    }
    targets.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(targets)
}

/// Entry point of `auditor similarity`.
pub fn run_command(args: SimilarityCommand) -> Result<i32, crate::exit::CliError> {
    crate::alloc::prefer_low_memory();
    args.similarity.validate().map_err(bad)?;
    let plan = Plan::of(&args)?;
    let store: Option<Box<dyn BatchStore>> = if plan.use_store {
        let spec = super::store::spec::StoreSpec::parse(args.store.as_deref()).map_err(bad)?;
        let dir = std::fs::canonicalize(&plan.out).unwrap_or_else(|_| plan.out.clone());
        Some(spec.open(&dir).map_err(bad)?)
    } else {
        None
    };
    let say = |line: &str| crate::telemetry::print_for_user(tracing::Level::INFO, line);
    let (report, counts) = run(
        &plan.targets,
        plan.not_compared,
        store.as_deref(),
        &args.similarity,
        true,
        &say,
    )
    .map_err(|e| match e {
        SimilarityError::Template { .. } | SimilarityError::Options(_) => bad(e),
        SimilarityError::Write { .. }
        | SimilarityError::HtmlTemplate(_)
        | SimilarityError::Html(_) => crate::exit::CliError::internal(e),
    })?;
    write(&plan.out, &report, &plan.title).map_err(crate::exit::CliError::internal)?;
    print_summary(&report, &counts, &plan.out);
    Ok(
        if report.flagged().next().is_none() && report.not_compared.is_empty() {
            crate::exit::OK
        } else {
            crate::exit::INCOMPLETE
        },
    )
}

/// What `auditor similarity` was asked, checked: where the outputs go (created), the
/// submissions to compare and those that cannot be, and whether a batch store keeps the
/// fingerprints.
struct Plan {
    out: PathBuf,
    /// The dashboard's title: the input's file name.
    title: String,
    targets: Vec<Target>,
    not_compared: Vec<NotCompared>,
    use_store: bool,
}

impl Plan {
    fn of(args: &SimilarityCommand) -> Result<Plan, crate::exit::CliError> {
        let input = &args.input;
        let meta = std::fs::metadata(input).map_err(|source| {
            bad(PlaceError::Input {
                path: input.clone(),
                source,
            })
        })?;
        let batch_dir = meta.is_dir() && input.join("grades.csv").is_file();
        let out = match (&args.out, batch_dir) {
            (Some(o), _) => o.clone(),
            (None, true) => input.clone(),
            (None, false) => {
                return Err(bad(format!(
                    "--out DIR is needed: {} is not an `auditor batch` output directory",
                    input.display()
                )));
            }
        };
        std::fs::create_dir_all(&out).map_err(|source| {
            bad(PlaceError::Create {
                path: out.clone(),
                source,
            })
        })?;
        let title = input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (targets, not_compared, use_store) = if meta.is_file() {
            let (t, n) = from_manifest(input)?;
            (t, n, true)
        } else if batch_dir {
            let (t, n) = from_grades(input)?;
            (t, n, true)
        } else {
            (from_working_trees(input)?, Vec::new(), false)
        };
        if targets.is_empty() {
            return Err(bad(format!(
                "{}: no submission to compare",
                input.display()
            )));
        }
        Ok(Plan {
            out,
            title,
            targets,
            not_compared,
            use_store,
        })
    }
}

/// The manifest's submissions at their resolved commits (resolved in parallel); a row that
/// is not valid is said on stderr, a repository that cannot be read is not compared.
fn from_manifest(input: &Path) -> Result<(Vec<Target>, Vec<NotCompared>), crate::exit::CliError> {
    let manifest = super::manifest::load(input).map_err(bad)?;
    let mut not = Vec::new();
    for b in manifest.bad_rows() {
        crate::telemetry::print_for_user(
            tracing::Level::ERROR,
            &format!(
                "{}: line {}: {} (row not compared; the others proceed)",
                input.display(),
                b.line,
                b.reason
            ),
        );
    }
    let subs: Vec<super::manifest::Submission> = manifest.submissions().cloned().collect();
    let resolved: Vec<Result<String, super::resolve::ResolveError>> = subs
        .par_iter()
        .map(|s| super::resolve::resolve(&s.repo, s.git_ref.as_deref()))
        .collect();
    let mut targets = Vec::new();
    for (s, r) in subs.into_iter().zip(resolved) {
        match r {
            Ok(commit) => targets.push(Target {
                id: s.id,
                place: Place::Repo {
                    source: s.repo,
                    commit,
                },
            }),
            Err(e) => not.push(NotCompared {
                id: s.id,
                reason: format!("its repository could not be read: {e}"),
            }),
        }
    }
    Ok((targets, not))
}

/// The summary on stdout: counts, the first ten flagged pairs, what was not compared, where
/// the outputs are.
fn print_summary(report: &CohortReport, counts: &Counts, out: &Path) {
    let flagged: Vec<&Pair> = report.flagged().collect();
    crate::console::say!(
        "Compared {} ({} fingerprinted now, {} from the store){}: {} flagged for review",
        crate::words::count(report.submissions.len(), "submission", "submissions"),
        counts.fingerprinted,
        counts.from_store,
        if report.not_compared.is_empty() {
            String::new()
        } else {
            format!(", {} not compared", report.not_compared.len())
        },
        crate::words::count(flagged.len(), "pair", "pairs"),
    );
    for p in flagged.iter().take(10) {
        crate::console::say!(
            "  {} and {}: {} similar, {} shared tokens, longest fragment {} tokens",
            crate::report::inline(&p.a),
            crate::report::inline(&p.b),
            pct(p.similarity),
            p.shared_tokens,
            p.longest_fragment_tokens
        );
    }
    for n in &report.not_compared {
        crate::console::say!(
            "  not compared: {}: {}",
            crate::report::inline(&n.id),
            crate::report::inline(&n.reason)
        );
    }
    crate::console::say!("Similarity: {}", out.join("similarity.html").display());
    crate::console::say!("Pairs:      {}", out.join("similarity.csv").display());
}
