//! Command-line interface: argument parsing, pre-flight validation of every input (exit 2
//! before anything runs), running the actor graph, writing the report, exit codes.
//!
//! Exit codes: 0 complete report; 1 internal failure; 2 bad input, nothing run; 3 report
//! written but something calls for attention (see `report::outcome`: a criterion flagged or
//! not assessed because of a failure; one left out only because the run had no vision model by
//! choice does not count).

use crate::audit::PdfSource;
use crate::exit;
use crate::exit::CliError;
use crate::flags::{self, PanelArgs};
use crate::interrupt::OnSecond;
use crate::launch::AuditBuilder;
use crate::model::AuditReport;
use crate::repo::RepoSource;
use crate::rubric::Rubric;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(
    name = "auditor",
    version,
    about = "Audits a LangGraph project (Git repository + PDF report) against a rubric with a panel of judges",
    long_about = "Audits a Git repository and its PDF architecture report against a rubric.\n\
        Detectives collect facts, three judges (Prosecutor, Defense, TechLead) give opinions on every \
        criterion, and a deterministic Chief Justice writes a Markdown verdict with a JSON sidecar.\n\n\
        Exit codes: 0 complete report; 1 internal failure; 2 bad input (nothing run); \
        3 report written but some criteria could not be assessed.",
    after_help = "Audit one submission (the default command; `auditor --repo ...` is `auditor audit --repo ...`):\n  \
        auditor --repo <URL|PATH> [--pdf <PATH>] [--output <FILE.md|DIR>]\n    \
        --repo    the repository: an https URL, a local path or a file:// URL\n    \
        --pdf     the PDF report (default: the report PDF inside the repository)\n    \
        --output  the Markdown report (its HTML and JSON beside it); default: audit/report-<owner>-<project>-<time>.md\n\n\
        Every option: `auditor audit --help`. A cohort: `auditor batch --help`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub log: LogArgs,
}

/// `auditor --repo ...` means `auditor audit --repo ...`: insert the default subcommand when
/// the first argument after the global log options (`-v`, `-q`, `--log-format`) is an option
/// other than help/version, so that `auditor --log-format json batch ...` still names its
/// subcommand.
pub fn with_default_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let text = |i: usize| args.get(i).and_then(|a| a.to_str()).unwrap_or("");
    let mut i = 1;
    loop {
        let a = text(i);
        let verbose = a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| c == 'v');
        if verbose || matches!(a, "--verbose" | "-q" | "--quiet") || a.starts_with("--log-format=")
        {
            i += 1;
        } else if a == "--log-format" {
            i += 2;
        } else {
            break;
        }
    }
    let first = text(i);
    let passthrough = ["-h", "--help", "-V", "--version"];
    if first.starts_with('-') && !passthrough.contains(&first) {
        args.insert(1, "audit".into());
    }
    args
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Audit a repository and its PDF report (the default command).
    Audit(AuditArgs),
    /// Run the detectives only and print what they found (no judges, no API key).
    Evidence(EvidenceArgs),
    /// Grade a cohort from a manifest: durable, resumable, never asks the LLM twice.
    Batch(crate::batch::BatchArgs),
    /// Find the submissions of a cohort that share code beyond the starter code (flags pairs
    /// for review; never scores).
    Similarity(crate::batch::similarity::SimilarityCommand),
    /// Write a sample submission to try auditor on: a small LangGraph project with dated
    /// commits (OUT/repo) and its PDF report (OUT/report.pdf).
    Sample(SampleArgs),
    /// Compare the auditor's grades (a batch output directory or its grades.csv) with a
    /// human's (CSV id,criterion,score): agreement, weighted kappa, bias, confusion tables.
    Calibrate(CalibrateArgs),
    /// The course team's review of a batch: override a criterion's score with a reason, mark
    /// reviewed, comment for the student, read the history.
    Review(crate::review::ReviewArgs),
    /// Export a reviewed batch: Canvas or Moodle gradebook CSV, per-criterion CSV, or the
    /// per-student feedback files (overrides and comments applied).
    Export(crate::review::ExportArgs),
    /// Serve a batch's review as a local web app (cohort heatmap, submission pages,
    /// overrides, exports); the first stdout line is the URL with its access token.
    Serve(crate::review::ServeArgs),
    /// Internal: `auditor batch` collects one submission's evidence in a child process.
    #[command(name = "__collect", hide = true)]
    Collect,
}

#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// The auditor's grades: an `auditor batch` output directory, or its grades.csv.
    #[arg(value_name = "GRADES")]
    pub grades: PathBuf,
    /// The human's grades: CSV with the columns id, criterion, score (others ignored; a
    /// justification column is quoted beside the largest disagreements). Criteria may be
    /// given by id or by name.
    #[arg(value_name = "HUMAN_CSV")]
    pub human: PathBuf,
    /// Rubric whose criterion names are matched (default: the rubric built into auditor).
    #[arg(long, value_name = "PATH")]
    pub rubric: Option<PathBuf>,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// How many of the largest disagreements to list.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,
}

use crate::telemetry::LogFormat;

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(arg: LogFormatArg) -> LogFormat {
        match arg {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// More log output on stderr (-v info, -vv debug, -vvv trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value = "text", global = true)]
    pub log_format: LogFormatArg,
}

#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// Repository to audit: an https URL, a local path or a file:// URL.
    #[arg(long, value_name = "URL")]
    pub repo: String,
    /// The PDF report. Without it, the report is looked for inside the repository
    /// (reports/final_report.pdf, else the most likely report PDF).
    #[arg(long, value_name = "PATH")]
    pub pdf: Option<PathBuf>,
    /// Branch, tag or commit to audit (default: the repository's HEAD).
    #[arg(long = "ref", value_name = "REF")]
    pub git_ref: Option<String>,
    /// Rubric file (default: the rubric built into the binary; never ./rubric.json, which
    /// may belong to the audited submission).
    #[arg(long, value_name = "PATH")]
    pub rubric: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Where to write the report: a .md file (the JSON goes beside it as .json) or a
    /// directory. Default: a new file under audit/.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub panel: PanelArgs,
}

#[derive(Debug, Clone, Args)]
pub struct SampleArgs {
    /// Directory to create (must not exist yet, or be empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct EvidenceArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print one JSON object instead of a human-readable listing.
    #[arg(long)]
    pub json: bool,
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let argv = with_default_command(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(argv.clone()) {
        Ok(cli) => cli,
        Err(mut e) => {
            use clap::error::{ContextKind, ContextValue};
            if e.kind() == clap::error::ErrorKind::UnknownArgument
                && e.get(ContextKind::SuggestedArg).is_none()
                && let Some(flag) = similar_flag(&e, &argv)
            {
                e.insert(ContextKind::SuggestedArg, ContextValue::String(flag));
            }
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => exit::BAD_INPUT,
            };
        }
    };
    let format = LogFormat::from(cli.log.log_format);
    // The guard flushes and shuts the span exporter down when dropped. It lives in this
    // function, so it is dropped on every path below (success, error, Ctrl-C, and unwinding
    // from a panic) before `main.rs` calls `process::exit`, which runs no destructors.
    // A batch finishes what is in flight on the first Ctrl-C; the evidence child of a batch
    // ignores Ctrl-C (its parent decides); every other command stops at once.
    let on_interrupt = match cli.command {
        Command::Batch(_) => Some(OnSecond::Count),
        Command::Collect => None,
        _ => Some(OnSecond::Exit),
    };
    let telemetry = match init_telemetry(&cli.log, on_interrupt) {
        Ok(guard) => guard,
        Err(e) => {
            print_error(format, e.prefix(), &e.to_string());
            return e.exit_code();
        }
    };
    let result = match cli.command {
        Command::Audit(args) => run_audit(args),
        Command::Evidence(args) => run_evidence(args),
        Command::Batch(args) => crate::batch::run_batch(args),
        Command::Similarity(args) => crate::batch::similarity::run_command(args),
        Command::Sample(args) => run_sample(args),
        Command::Calibrate(args) => run_calibrate(args),
        Command::Review(args) => crate::review::run_review(args, cli.log.quiet),
        Command::Export(args) => crate::review::run_export(args, cli.log.quiet),
        Command::Serve(args) => crate::review::server::run_serve(args),
        Command::Collect => Ok(crate::batch::isolate::child_main()),
    };
    let code = match &result {
        Ok(code) => *code,
        Err(e) => e.exit_code(),
    };
    // The outcome is decided here, once: a signal before this point makes the run
    // interrupted (130) even if its outputs were written; one after it changes nothing.
    let decided = crate::interrupt::finish(code);
    if let Err(e) = &result {
        print_error(format, e.prefix(), &e.to_string());
    }
    if decided != code {
        print_error(
            format,
            "interrupted",
            "Ctrl-C arrived before the run had finished; what was written is complete",
        );
    }
    drop(telemetry);
    decided
}

/// A flag of the command being parsed one typo away from the unknown one (`--pfd` →
/// `--pdf`): a swap of two neighbouring letters, one letter added, dropped or changed (two for
/// longer flags). clap's own suggestion misses swapped letters in short words.
fn similar_flag(e: &clap::Error, argv: &[std::ffi::OsString]) -> Option<String> {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue};
    let ContextValue::String(given) = e.get(ContextKind::InvalidArg)? else {
        return None;
    };
    let given = given.strip_prefix("--")?.split('=').next()?.to_string();
    let root = Cli::command();
    let sub = argv
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find_map(|a| root.find_subcommand(a).cloned());
    let cmd = sub.as_ref().unwrap_or(&root);
    let longs = cmd
        .get_arguments()
        .chain(root.get_arguments())
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long());
    let allowed = if given.chars().count() <= 4 { 1 } else { 2 };
    longs
        .map(|l| (typo_distance(&given, l), l))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, l)| format!("--{l}"))
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters each count one.
fn typo_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Logs on stderr, OTLP export when configured, and Ctrl-C handling (`None`: no handler).
fn init_telemetry(
    log: &LogArgs,
    on_interrupt: Option<OnSecond>,
) -> Result<crate::telemetry::TelemetryGuard, CliError> {
    use crate::telemetry::{LogOptions, TelemetryConfig};
    let cfg = TelemetryConfig::from_env(LogOptions {
        verbose: log.verbose,
        quiet: log.quiet,
        format: log.log_format.into(),
    })
    .map_err(CliError::bad_input)?;
    let guard = crate::telemetry::init(&cfg).map_err(CliError::bad_input)?;
    if let Some(on_second) = on_interrupt {
        crate::interrupt::listen(on_second).map_err(CliError::bad_input)?;
    }
    Ok(guard)
}

/// An error for the user on stderr: a plain line, or one JSON object with `--log-format json`
/// (so that every stderr line parses as JSON).
fn print_error(format: LogFormat, prefix: &str, message: &str) {
    crate::telemetry::print_to_user(
        format,
        tracing::Level::ERROR,
        &format!("{prefix}: {message}"),
    );
}

/// Validates the audited source (everything, before anything runs) into an audit's builder.
fn prepare(source: &SourceArgs) -> Result<AuditBuilder, CliError> {
    let rubric = Rubric::load(source.rubric.as_deref()).map_err(CliError::bad_input)?;
    // The boundary: from here on the source is shown redacted everywhere (see RepoSource).
    let repo = RepoSource::new(source.repo.as_str());
    crate::repo::validate_source(&repo).map_err(CliError::bad_input)?;
    let pdf = match &source.pdf {
        Some(path) => {
            crate::pdf::validate_path(path).map_err(CliError::bad_input)?;
            PdfSource::File(path.clone())
        }
        None => PdfSource::InRepo(None),
    };
    // The ref is resolved once, here: the clone is audited at the commit found (the ref is
    // not resolved again, so the audit cannot land on a branch that moved since).
    let mut commit = None;
    if let Some(r) = &source.git_ref {
        if r.trim().is_empty() {
            return Err(CliError::bad_input(
                "--ref is empty: give a branch, tag or commit",
            ));
        }
        // An unknown ref is bad input, said before anything runs; so is a repository that
        // cannot be read (nothing could be assessed: one message, no report).
        match crate::batch::resolve::resolve(&repo, Some(r)) {
            Ok(c) => commit = Some(c),
            Err(crate::batch::resolve::ResolveError::UnknownRef(e)) => {
                return Err(CliError::bad_input(format!("--ref {r}: {e}")));
            }
            Err(crate::batch::resolve::ResolveError::Unreachable(e)) => {
                return Err(unreadable_repo(&e));
            }
        }
    } else {
        check_reachable(&repo)?;
    }
    Ok(AuditBuilder::new(repo, Arc::new(rubric))
        .git_ref(source.git_ref.clone())
        .commit(commit)
        .pdf(pdf))
}

/// A repository that cannot be opened or reached is bad input: one message, exit 2, no
/// report (nothing of it could be assessed). Asked once, for at most 60 s; a remote that does
/// not answer by then is left to the audit's own clone limits.
fn check_reachable(repo: &RepoSource) -> Result<(), CliError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let probe = repo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(crate::batch::resolve::reach(&probe));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Err(e)) => Err(unreadable_repo(&e)),
        _ => Ok(()),
    }
}

fn unreadable_repo(e: &crate::batch::resolve::Unreachable) -> CliError {
    CliError::bad_input(format!(
        "--repo: {e}. Nothing was audited: check the URL or path (and the network, or credentials for a private repository)"
    ))
}

/// The optional price table: AUDITOR_PRICE_INPUT_PER_MTOK and AUDITOR_PRICE_OUTPUT_PER_MTOK
/// (currency units per million tokens). Both or neither; a bad value is bad input.
fn price_from_env() -> Result<Option<crate::llm::Price>, CliError> {
    let read = |name: &str| -> Result<Option<f64>, CliError> {
        match std::env::var(name) {
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(CliError::bad_input(format!(
                    "{name}={v:?} is not a price: give a non-negative number (currency units per million tokens)"
                ))),
            },
            Err(_) => Ok(None),
        }
    };
    match (
        read("AUDITOR_PRICE_INPUT_PER_MTOK")?,
        read("AUDITOR_PRICE_OUTPUT_PER_MTOK")?,
    ) {
        (None, None) => Ok(None),
        (Some(i), Some(o)) => Ok(Some(crate::llm::Price {
            input_per_mtok: i,
            output_per_mtok: o,
        })),
        _ => Err(CliError::bad_input(
            "set both AUDITOR_PRICE_INPUT_PER_MTOK and AUDITOR_PRICE_OUTPUT_PER_MTOK, or neither",
        )),
    }
}

/// Resolves `--output` to the Markdown file to write. `repo`: the redacted source.
pub fn resolve_output(output: Option<&Path>, repo: &str, now: &str) -> Result<PathBuf, CliError> {
    let file_name = format!("report-{}-{now}.md", slug(repo));
    match output {
        None => Ok(PathBuf::from("audit").join(file_name)),
        Some(p) if p.extension().is_some_and(|e| e == "md") => {
            if p.is_dir() {
                Ok(p.join(file_name))
            } else {
                Ok(p.to_path_buf())
            }
        }
        Some(p) if p.is_dir() || p.extension().is_none() => Ok(p.join(file_name)),
        Some(p) if p.exists() => Err(CliError::bad_input(format!(
            "--output {} is an existing file that is not a .md file: give a .md file or a directory",
            p.display()
        ))),
        Some(p) => Err(CliError::bad_input(format!(
            "--output {} has the extension .{}: give a .md file (the JSON goes beside it) or a directory",
            p.display(),
            p.extension()
                .map(|e| e.to_string_lossy())
                .unwrap_or_default()
        ))),
    }
}

/// A short file-name-safe name for a repository source.
/// Names that say nothing about whose work a directory holds (a mirror's `.../owner+project/repo`).
const GENERIC_DIRS: &[&str] = &[
    "repo",
    "repository",
    "src",
    "code",
    "project",
    "submission",
    "checkout",
    "clone",
    "workspace",
];

/// The report's file-name stem, from the repository (already redacted: no secret can reach
/// it): `owner-project` for a URL, the directory's name for a local path, its parent's when
/// the directory has a generic name.
fn slug(repo: &str) -> String {
    let local = Path::new(repo.strip_prefix("file://").unwrap_or(repo));
    if let Ok(path) = std::fs::canonicalize(local) {
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(last) = name(&path) {
            let generic = GENERIC_DIRS.contains(&last.to_ascii_lowercase().as_str());
            let parent = path.parent().and_then(name);
            return match parent {
                Some(p) if generic => crate::text::file_stem(&p),
                _ => crate::text::file_stem(&last),
            };
        }
    }
    let trimmed = repo.trim_end_matches('/').trim_end_matches(".git");
    let without_scheme = trimmed.split_once("://").map_or(trimmed, |(_, rest)| rest);
    let mut parts: Vec<&str> = without_scheme
        .split(['/', '\\', ':'])
        .filter(|p| !p.is_empty())
        .collect();
    // drop the host of a URL; keep owner and project
    if trimmed.contains("://") && parts.len() > 1 {
        parts.remove(0);
    }
    let tail: Vec<&str> = parts.iter().rev().take(2).rev().copied().collect();
    let url = trimmed.contains("://") || trimmed.contains('@');
    match tail.as_slice() {
        [] => "repo".into(),
        [one] => crate::text::file_stem(one),
        [owner, project] if url => crate::text::file_stem(&format!("{owner}-{project}")),
        [parent, last] if GENERIC_DIRS.contains(&last.to_ascii_lowercase().as_str()) => {
            crate::text::file_stem(parent)
        }
        [_, last] => crate::text::file_stem(last),
        _ => "repo".into(),
    }
}

fn run_audit(args: AuditArgs) -> Result<i32, CliError> {
    let audit = prepare(&args.source)?;
    let panel = flags::set_up_panel(&args.panel)?;
    flags::check_endpoint(&panel)?;
    let input = audit
        .vision(panel.vision)
        .judge_timeout(panel.judge_timeout)
        .build();
    let now = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let md_path = resolve_output(args.output.as_deref(), input.repo.source.shown(), &now)?;
    check_writable(&md_path)?;

    let price = price_from_env()?;
    let mut outcome = crate::launch::run(input, panel.service)?;
    if crate::interrupt::was_interrupted() {
        return Err(CliError::Interrupted);
    }
    if let Some(price) = price {
        outcome.report.metadata.cost = Some(price.cost(outcome.report.metadata.tokens));
    }
    let sidecar = crate::report::Sidecar::new(
        &outcome.report,
        &outcome.state,
        outcome.repo_facts.as_ref(),
        outcome.pdf_facts.as_ref(),
    );
    let written = crate::report::write(&sidecar, &md_path)
        .map_err(|e| CliError::internal_while("could not write the report", e))?;
    let notes = crate::report::outcome::notes(&outcome.report, outcome.state.evidences());
    print_summary(&outcome.report, &written, &notes);
    // Exit 3 when something calls for attention; a criterion left out only because the run
    // had no vision model by choice is reported but keeps 0 (see report::outcome).
    Ok(if crate::report::outcome::needs_attention(&notes) {
        exit::INCOMPLETE
    } else {
        exit::OK
    })
}

/// The report's directory is created and proved writable before the (possibly paid) audit
/// runs: a file is created in it and removed. The report is never written through a symbolic
/// link (a submission audited from inside may have committed `audit` as one), and its three
/// file names must fit the file system.
fn check_writable(md_path: &Path) -> Result<(), CliError> {
    let parent = md_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::files::check_no_links(md_path).map_err(|e| {
        CliError::bad_input(format!(
            "{e}: the report is never written through a link. Remove the link or choose another --output"
        ))
    })?;
    std::fs::create_dir_all(parent).map_err(|e| {
        CliError::bad_input(format!(
            "cannot create the output directory {}: {e}. Choose another --output",
            parent.display()
        ))
    })?;
    tempfile::Builder::new()
        .prefix(".auditor-write-check-")
        .tempfile_in(parent)
        .map_err(|e| {
            CliError::bad_input(format!(
                "cannot write the report in {}: {e}. Choose a writable --output",
                parent.display()
            ))
        })?;
    if md_path.is_dir() {
        return Err(CliError::bad_input(format!(
            "--output {} is a directory where the report file would go: choose another --output",
            md_path.display()
        )));
    }
    // the longest of the three names (`.html`); a lookup creates nothing
    if let Err(e) = std::fs::symlink_metadata(md_path.with_extension("html"))
        && e.raw_os_error() == Some(libc::ENAMETOOLONG)
    {
        return Err(CliError::bad_input(format!(
            "--output {}: the file name is too long for the file system ({e}). Choose a shorter --output",
            md_path.display()
        )));
    }
    Ok(())
}

fn print_summary(
    report: &AuditReport,
    written: &crate::report::Written,
    notes: &[crate::report::outcome::Note],
) {
    crate::console::say!("Report: {}", written.markdown.display());
    crate::console::say!("HTML:   {}", written.html.display());
    crate::console::say!("JSON:   {}", written.json.display());
    match report.overall_score {
        Some(_) => crate::console::say!("Verdict: {}", report.verdict),
        None => crate::console::say!("{}", report.verdict),
    }
    crate::console::say!(
        "Judges: {}",
        match report.metadata.judge_mode {
            crate::model::JudgeMode::Offline => "offline (deterministic rules, no LLM)".to_string(),
            crate::model::JudgeMode::Llm => report
                .metadata
                .judge_models
                .iter()
                .map(|(p, m)| format!("{p}={m}"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    );
    for c in &report.criteria {
        let score = c
            .final_score
            .map(|s| s.to_string())
            .unwrap_or_else(|| "-".into());
        let flag = if c.is_clean() {
            ""
        } else if c.is_assessed() {
            "  [flagged]"
        } else {
            "  [not assessed]"
        };
        crate::console::say!("  {score}  {}{flag}", c.dimension_name);
    }
    if report.metadata.tokens.input_tokens + report.metadata.tokens.output_tokens > 0 {
        crate::console::say!(
            "Tokens: {} in ({} cached), {} out",
            report.metadata.tokens.input_tokens,
            report.metadata.tokens.cached_input_tokens,
            report.metadata.tokens.output_tokens
        );
    }
    crate::console::say!(
        "Duration: {:.1} s",
        report.metadata.duration_ms as f64 / 1000.0
    );
    for n in notes {
        crate::console::say!("{}", n.line());
    }
    let attention = notes.iter().filter(|n| !n.by_choice).count();
    if attention > 0 {
        crate::console::say!(
            "Exit code 3: {} (see the report).",
            crate::words::count(
                attention,
                "item above needs attention",
                "items above need attention"
            )
        );
    }
}

fn run_evidence(args: EvidenceArgs) -> Result<i32, CliError> {
    let input = prepare(&args.source)?.build();
    let prepared_source = input.repo.source.clone();
    let collected = crate::launch::collect_evidence(input)?;
    if args.json {
        let mut repo = collected
            .repo_facts
            .as_ref()
            .map(crate::repo::facts_json)
            .unwrap_or(serde_json::Value::Null);
        if repo.is_null() {
            repo = serde_json::json!({ "url": prepared_source.shown(), "error": first_error(&collected, crate::model::Stage::RepoInvestigator) });
        }
        let pdf = collected
            .pdf_facts
            .as_ref()
            .map(crate::pdf::facts_json)
            .unwrap_or(serde_json::Value::Null);
        let out = serde_json::json!({
            "repo": repo,
            "pdf": pdf,
            "evidences": collected.state.evidences(),
            "errors": collected.state.errors(),
        });
        crate::console::say!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(CliError::internal)?
        );
    } else {
        if let Some(repo) = &collected.repo_facts {
            crate::console::say!("{}", crate::repo::summary_text(repo));
        }
        for (dim, evs) in collected.state.evidences() {
            crate::console::say!("\n== {dim}");
            for e in evs {
                crate::console::say!(
                    "  [{}] {} — {} ({})",
                    if e.found { "found" } else { "absent" },
                    e.goal,
                    e.location,
                    e.rationale
                );
            }
        }
        for e in collected.state.errors() {
            tracing::error!(stage = ?e.stage, "{}", e.message);
        }
    }
    let degraded = !collected.state.errors().is_empty()
        || collected
            .state
            .evidences()
            .values()
            .flatten()
            .any(|e| e.kind == crate::model::EvidenceKind::Missing);
    Ok(if degraded { exit::INCOMPLETE } else { exit::OK })
}

fn first_error(collected: &crate::audit::Collected, stage: crate::model::Stage) -> Option<String> {
    collected
        .state
        .errors()
        .iter()
        .find(|e| e.stage == stage)
        .map(|e| e.message.clone())
        .or_else(|| {
            collected
                .state
                .evidences()
                .values()
                .flatten()
                .find(|e| {
                    e.kind == crate::model::EvidenceKind::Missing
                        && e.detective == crate::model::Detective::RepoInvestigator
                })
                .map(|e| e.rationale.clone())
        })
}

fn run_sample(args: SampleArgs) -> Result<i32, CliError> {
    let out = &args.out;
    if out.exists()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(CliError::bad_input(format!(
            "--out {} already exists and is not empty: choose a new directory",
            out.display()
        )));
    }
    let repo_dir = out.join("repo");
    std::fs::create_dir_all(&repo_dir)
        .map_err(|e| CliError::bad_input(format!("cannot create {}: {e}", repo_dir.display())))?;
    let head = crate::sample::repo::build_repo(
        &repo_dir,
        &crate::sample::repo::sample_langgraph_project(),
    )
    .map_err(|e| CliError::internal_while("could not build the sample repository", e))?;
    let pdf = crate::sample::report::build_pdf(&crate::sample::report::sample_report())
        .map_err(|e| CliError::internal_while("could not build the sample report", e))?;
    let pdf_path = out.join("report.pdf");
    std::fs::write(&pdf_path, pdf)
        .map_err(|e| CliError::internal_while(format!("cannot write {}", pdf_path.display()), e))?;
    // The files of HEAD in the working tree: a report's `path:line` can be opened there.
    git2::Repository::open(&repo_dir)
        .and_then(|r| r.checkout_head(Some(git2::build::CheckoutBuilder::new().force())))
        .map_err(|e| CliError::internal_while("could not check out the sample repository", e))?;
    crate::console::say!("Sample repository: {} (HEAD {head})", repo_dir.display());
    crate::console::say!("Sample report:     {}", pdf_path.display());
    crate::console::say!(
        "Audit it with: {} --repo {} --pdf {}",
        this_program(),
        repo_dir.display(),
        pdf_path.display()
    );
    Ok(exit::OK)
}

/// How to run this very program again: `auditor` when that is how it was started (found on the
/// PATH), else its full path (a build under target/ is not on the PATH).
fn this_program() -> String {
    let invoked = std::env::args_os().next().unwrap_or_default();
    if !invoked.to_string_lossy().contains('/') {
        return invoked.to_string_lossy().into_owned();
    }
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| invoked.to_string_lossy().into_owned())
}

fn run_calibrate(args: CalibrateArgs) -> Result<i32, CliError> {
    use crate::calibrate;
    let grades_path = if args.grades.is_dir() {
        args.grades.join("grades.csv")
    } else {
        args.grades.clone()
    };
    let read = |p: &Path, what: &str| {
        std::fs::read_to_string(p).map_err(|e| {
            CliError::bad_input(format!(
                "cannot read {what} {}: {e}; give {}",
                p.display(),
                if what == "the auditor's grades" {
                    "an `auditor batch` output directory or its grades.csv"
                } else {
                    "a CSV file with the columns id, criterion, score"
                }
            ))
        })
    };
    let grades_text = read(&grades_path, "the auditor's grades")?;
    let human_text = read(&args.human, "the human grades")?;
    let rubric = Rubric::load(args.rubric.as_deref()).map_err(CliError::bad_input)?;
    let (grades_source, human_source) = (
        grades_path.display().to_string(),
        args.human.display().to_string(),
    );
    let (top, json) = (args.top, args.json);
    // The comparison runs where it can be abandoned: the first Ctrl-C exits at once.
    let work = move || -> Result<String, CliError> {
        crate::interrupt::test_stall("calibrate");
        let grades =
            calibrate::parse_grades(&grades_text, &grades_source).map_err(CliError::bad_input)?;
        let human =
            calibrate::parse_human(&human_text, &human_source).map_err(CliError::bad_input)?;
        let names: std::collections::BTreeMap<String, String> = rubric
            .rubric
            .dimensions
            .iter()
            .map(|d| (d.id.clone(), d.name.clone()))
            .collect();
        let result =
            calibrate::calibrate(&grades, &human, &names, top).map_err(CliError::bad_input)?;
        if json {
            serde_json::to_string_pretty(&result).map_err(CliError::internal)
        } else {
            Ok(calibrate::markdown(&result, &names).trim_end().to_string())
        }
    };
    match crate::interrupt::unless_interrupted("calibrate", work) {
        Ok(Some(text)) => crate::console::say!("{}", text?),
        Ok(None) => return Err(CliError::Interrupted),
        Err(e) => return Err(CliError::internal_while("the calibration stopped", e)),
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_command_is_audit_after_the_global_options_too() {
        let with = |args: &[&str]| -> Vec<String> {
            let full = std::iter::once("auditor").chain(args.iter().copied());
            with_default_command(full.map(Into::into).collect())
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(with(&["--repo", "r"]), ["auditor", "audit", "--repo", "r"]);
        assert_eq!(
            with(&["-vv", "--log-format", "json", "--repo", "r"]),
            [
                "auditor",
                "audit",
                "-vv",
                "--log-format",
                "json",
                "--repo",
                "r"
            ]
        );
        assert_eq!(
            with(&["--log-format", "json", "batch", "m.csv"]),
            ["auditor", "--log-format", "json", "batch", "m.csv"]
        );
        assert_eq!(with(&["-q", "evidence"]), ["auditor", "-q", "evidence"]);
        assert_eq!(with(&["--help"]), ["auditor", "--help"]);
        assert_eq!(with(&[]), ["auditor"]);
        let parsed = Cli::try_parse_from(with(&[
            "--log-format",
            "json",
            "batch",
            "m.csv",
            "--out",
            "o",
        ]))
        .expect("a global option before the subcommand");
        assert!(matches!(parsed.command, Command::Batch(_)));
        assert_eq!(parsed.log.log_format, LogFormatArg::Json);
    }

    #[test]
    fn output_resolution() {
        let now = "T";
        assert_eq!(
            resolve_output(None, "https://github.com/a/b.git", now).unwrap(),
            PathBuf::from("audit/report-a-b-T.md")
        );
        assert_eq!(
            resolve_output(Some(Path::new("out/x.md")), "r", now).unwrap(),
            PathBuf::from("out/x.md")
        );
        assert_eq!(
            resolve_output(Some(Path::new("out/dir")), "/tmp/proj/", now).unwrap(),
            PathBuf::from("out/dir/report-proj-T.md")
        );
        assert!(resolve_output(Some(Path::new("out/x.txt")), "r", now).is_err());
    }

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(slug("https://github.com/a/b.git"), "a-b");
        assert_eq!(slug("file:///tmp/my repo"), "my-repo");
        assert_eq!(slug(""), "repo");
        assert_eq!(slug("https://host/"), "host");
    }

    #[test]
    fn a_mirror_named_repo_is_named_for_its_owner_and_project() {
        let dir = tempfile::tempdir().unwrap();
        let mirror = dir.path().join("someone+their-auditor/repo");
        std::fs::create_dir_all(&mirror).unwrap();
        assert_eq!(slug(mirror.to_str().unwrap()), "someone-their-auditor");
        let plain = dir.path().join("their-auditor");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(slug(plain.to_str().unwrap()), "their-auditor");
    }
}
