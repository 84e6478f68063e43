//! Evidence for the rubric's report dimensions, routed by what the dimension asks for (words of
//! its id, name and forensic instruction), so other rubrics' dimensions get evidence too (v2's
//! `forensic_accuracy_docs` asks for theoretical depth *and* cross-referencing).

use super::claims::ClaimStatus;
use super::concepts::{self, Classification};
use super::paths::{ClaimedPath, MAX_LISTED, PathCounts, PathStatus};
use super::{PdfFacts, ingest};
use crate::model::{Confidence, Detective, Evidence, EvidenceKind, Measure};
use crate::rubric::{Dimension, TargetArtifact};
use std::collections::BTreeMap;

/// What a report dimension asks the DocAnalyst for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Route {
    /// Concepts explained vs. buzzwords (theoretical depth).
    pub concepts: bool,
    /// Claimed paths checked against the repository (report accuracy).
    pub paths: bool,
}

/// Routes a dimension by the words of its id, name and instruction. Image dimensions belong to
/// the VisionInspector and get no route here.
pub fn route(d: &Dimension) -> Route {
    if d.target_artifact == TargetArtifact::PdfImages {
        return Route::default();
    }
    let t = format!("{} {} {}", d.id, d.name, d.forensic_instruction).to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    Route {
        concepts: has(&[
            "theoretical",
            "depth",
            "concept",
            "buzzword",
            "keyword dropping",
            "dialectical",
            "metacognition",
        ]),
        paths: has(&[
            "file path",
            "paths",
            "cross-reference",
            "cross reference",
            "hallucinat",
            "report_accuracy",
            "report accuracy",
        ]),
    }
}

fn conf(v: f64) -> Confidence {
    Confidence::new(v).unwrap_or(Confidence::CERTAIN)
}

/// Evidence needing only the PDF: concept classification per concept the dimension names,
/// the list of claimed paths (checked later), or the best excerpts for other dimensions.
pub fn document_evidence(
    facts: &PdfFacts,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let mut out = BTreeMap::new();
    let sentences = ingest::sentences(&facts.page_text);
    let src = facts.display_name();
    for d in dimensions {
        // Repository dimensions belong to the RepoInvestigator, image ones to the VisionInspector.
        if d.target_artifact != TargetArtifact::PdfReport {
            continue;
        }
        let r = route(d);
        let mut evs = Vec::new();
        if r.concepts || r.paths {
            evs.extend(kind_evidence(facts, &d.id));
        }
        if r.concepts {
            for f in concepts::classify(&wanted_concepts(d), &sentences) {
                evs.push(concept_evidence(facts, &d.id, &f));
            }
        }
        if r.paths {
            let n = facts.claimed_paths.len();
            let mut list = facts
                .claimed_paths
                .iter()
                .take(MAX_LISTED)
                .map(|c| format!("{} (p.{})", c.path, c.page))
                .collect::<Vec<_>>()
                .join(", ");
            if n > MAX_LISTED {
                list.push_str(&format!(", and {} more", n - MAX_LISTED));
            }
            let mut e = Evidence::fact(
                format!("pdf.{}.claimed_paths", d.id),
                Detective::DocAnalyst,
                "File paths mentioned in the report are extracted for cross-referencing",
                n > 0,
                src.to_string(),
                if n > 0 {
                    format!(
                        "{} as the report writes {}, in {}; each is checked against the audited commit at the aggregation barrier, where the spellings of one file count once",
                        crate::words::count(n, "repository path", "repository paths"),
                        if n == 1 { "it" } else { "them" },
                        pages_read(facts)
                    )
                } else {
                    format!(
                        "no repository file path in {}, so none of the report's claims can be checked against the code",
                        pages_read(facts)
                    )
                },
                Confidence::CERTAIN,
            );
            if n > 0 {
                e = e.with_content(list);
            }
            evs.push(e);
        }
        if !r.concepts && !r.paths {
            // A report dimension we have no specific check for: the most relevant excerpts.
            let ex = super::excerpts(facts, &d.forensic_instruction, 1200);
            let location = ex
                .first()
                .map(|(p, _)| format!("{src} p.{p}"))
                .unwrap_or_else(|| src.to_string());
            let mut e = Evidence::fact(
                format!("pdf.{}.excerpts", d.id),
                Detective::DocAnalyst,
                format!("Report passages relevant to: {}", d.name),
                !ex.is_empty(),
                location,
                if ex.is_empty() {
                    "no passage of the report shares terms with the forensic instruction"
                        .to_string()
                } else {
                    format!(
                        "{} ranked by BM25 against the forensic instruction",
                        crate::words::count(ex.len(), "passage", "passages")
                    )
                },
                conf(0.6),
            );
            if !ex.is_empty() {
                e = e.with_content(
                    ex.iter()
                        .map(|(p, t)| format!("p.{p}: {t}"))
                        .collect::<Vec<_>>()
                        .join("\n---\n"),
                );
            }
            evs.push(e);
        }
        out.insert(d.id.clone(), evs);
    }
    out
}

/// Which report was read, when the document says (see [`super::kind`]): the final one (met) or
/// an interim one (not met). A report that says neither gets no statement.
fn kind_evidence(facts: &PdfFacts, dimension: &str) -> Option<Evidence> {
    use super::kind::ReportKind;
    let k = &facts.kind;
    let interim = match k.kind {
        ReportKind::Unknown => return None,
        ReportKind::Interim => true,
        ReportKind::Final => false,
    };
    let src = facts.display_name();
    let (location, basis) = if k.from == "title" {
        (
            format!("{src} p.1"),
            format!("its title on p.1 reads \"{}\"", k.quote),
        )
    } else {
        (src.to_string(), format!("its file name is {}", k.quote))
    };
    let e = Evidence::fact(
        format!("pdf.{dimension}.report_kind"),
        Detective::DocAnalyst,
        "The report read is the final report, not the interim one",
        !interim,
        location,
        if interim {
            format!("the report read is an interim report: {basis}")
        } else {
            format!("the report read is the final report: {basis}")
        },
        conf(0.9),
    )
    .with_measure(crate::model::Measure::Report {
        interim,
        basis: basis.clone(),
    });
    Some(if interim {
        e.with_fix("submit the final report as a PDF in the repository (reports/final_report.pdf)")
    } else {
        e
    })
}

/// What was read of the report, for a sentence: "the 12 pages of the report", "the first 1000
/// of its 1200 pages (pages 1001-1200 were not read)".
pub fn pages_read(facts: &PdfFacts) -> String {
    let total = facts.document_pages();
    if facts.read_whole() {
        format!(
            "the {} of the report",
            crate::words::count(total as usize, "page", "pages")
        )
    } else {
        format!(
            "the first {} of its {total} pages (pages {}-{total} were not read: the grader reads at most {})",
            facts.pages,
            facts.pages + 1,
            super::MAX_TEXT_PAGES
        )
    }
}

/// The concepts a theoretical-depth dimension names (its instruction's quoted terms), or the
/// default ones.
fn wanted_concepts(d: &Dimension) -> Vec<String> {
    let wanted = concepts::concepts_from_instruction(&d.forensic_instruction);
    if wanted.is_empty() {
        concepts::DEFAULT_CONCEPTS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        wanted
    }
}

/// The id of the fact that says whether a concept's explanation is tied to the code.
fn tie_id(dimension: &str, concept: &str) -> String {
    format!("pdf.{dimension}.tie.{}", crate::text::ident(concept))
}

fn tie_goal(concept: &str) -> String {
    format!(
        "'{concept}' is explained in terms of this implementation: the explaining passage names parts of the repository's code"
    )
}

/// Each concept the report explains, with the theoretical-depth dimension that asks for it.
fn explained<'d>(
    facts: &PdfFacts,
    dimensions: &'d [Dimension],
) -> Vec<(&'d Dimension, concepts::ConceptFinding)> {
    let sentences = ingest::sentences(&facts.page_text);
    dimensions
        .iter()
        .filter(|d| d.target_artifact == TargetArtifact::PdfReport && route(d).concepts)
        .flat_map(|d| {
            concepts::classify(&wanted_concepts(d), &sentences)
                .into_iter()
                .filter(|f| f.classification == Classification::Explained)
                .map(move |f| (d, f))
        })
        .collect()
}

/// Evidence computed at the aggregation barrier, one per concept the report explains: whether
/// an explaining passage names parts of the repository's own code (files, classes, functions,
/// graph nodes, state fields; see `pdf::ties`), or only generic ones.
pub fn tie_evidence(
    facts: &PdfFacts,
    files: &[String],
    code: &crate::repo::python::PythonFacts,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let mut out: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    let src = facts.display_name();
    for (d, f) in explained(facts, dimensions) {
        let id = tie_id(&d.id, &f.concept);
        let e = match super::ties::tied(&f.explaining, files, code) {
            Some((page, parts)) => Evidence::fact(
                id,
                Detective::DocAnalyst,
                tie_goal(&f.concept),
                true,
                format!("{src} p.{page}"),
                format!(
                    "the passage on p.{page} that explains '{}' names {} of the repository's code: {}",
                    f.concept,
                    crate::words::count(parts.len(), "part", "parts"),
                    parts
                        .iter()
                        .take(5)
                        .map(super::ties::CodePart::describe)
                        .chain((parts.len() > 5).then(|| format!("and {} more", parts.len() - 5)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                conf(0.8),
            ),
            None => {
                let mut pages: Vec<u32> = f.explaining.iter().map(|e| e.page).collect();
                pages.sort_unstable();
                pages.dedup();
                let mut names: Vec<&str> = Vec::new();
                for n in f.explaining.iter().flat_map(|e| &e.names) {
                    if !names.contains(&n.as_str()) {
                        names.push(n);
                    }
                }
                let one = pages.len() <= 1;
                let given = if names.is_empty() {
                    format!(
                        "{} no file, class or function at all",
                        if one { "names" } else { "name" }
                    )
                } else {
                    format!(
                        "{} {}{}, which the repository's code does not define",
                        if one { "names" } else { "name" },
                        names
                            .iter()
                            .take(6)
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if names.len() > 6 { ", ..." } else { "" }
                    )
                };
                let first = pages.first().copied().unwrap_or(f.page);
                Evidence::fact(
                        id,
                        Detective::DocAnalyst,
                        tie_goal(&f.concept),
                        false,
                        format!("{src} p.{first}"),
                        format!(
                            "a generic explanation: {} that {} '{}' {given} (searched: {})",
                            if one {
                                format!("the passage on p.{first}")
                            } else {
                                format!("the passages on pages {}", join_pages(&pages))
                            },
                            if one { "explains" } else { "explain" },
                            f.concept,
                            super::ties::searched(files, code),
                        ),
                        conf(0.75),
                    )
                    .with_fix(format!(
                        "on p.{first}, say which of the repository's files, functions or graph nodes do '{}', by the names the code gives them",
                        f.concept
                    ))
            }
        };
        out.entry(d.id.clone()).or_default().push(e);
    }
    out
}

/// Without a readable repository: no explanation can be checked against the code (evidence
/// missing, grader side).
pub fn tie_unchecked(
    facts: &PdfFacts,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let mut out: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    let src = facts.display_name();
    for (d, f) in explained(facts, dimensions) {
        out.entry(d.id.clone()).or_default().push(
                Evidence::missing(
                    tie_id(&d.id, &f.concept),
                    Detective::DocAnalyst,
                    tie_goal(&f.concept),
                    format!("{src} p.{}", f.page),
                    format!(
                        "the passage on p.{} that explains '{}' could not be checked against the code: the repository was not read",
                        f.page, f.concept
                    ),
                )
                .with_fix("audit again once the repository can be cloned"),
            );
    }
    out
}

/// The evidence for one concept of a theoretical-depth dimension. Explained: where, and what
/// the passage says about the code. Not explained in a report read whole: a buzzword (its
/// fullest passage and what it lacks) or absent (the pages searched). Not explained in a report
/// read in part: no confident verdict (the pages not read may explain it): evidence missing,
/// saying what was read.
fn concept_evidence(facts: &PdfFacts, dimension: &str, f: &concepts::ConceptFinding) -> Evidence {
    let src = facts.display_name();
    let id = format!("pdf.{dimension}.concept.{}", crate::text::ident(&f.concept));
    let goal = format!(
        "'{}' is explained in a substantive architectural explanation, not dropped as a keyword",
        f.concept
    );
    let times = crate::words::count(f.mentions as usize, "time", "times");
    let quoted = |e: Evidence| {
        if f.quote.is_empty() {
            e
        } else {
            e.with_content(format!("p.{}: \"{}\"", f.page, f.quote))
        }
    };
    if f.classification != Classification::Explained && !facts.read_whole() {
        return quoted(partly_read_evidence(facts, f, id, goal));
    }
    let e = match f.classification {
        Classification::Explained => Evidence::fact(
            id,
            Detective::DocAnalyst,
            goal,
            true,
            format!("{src} p.{}", f.page),
            explained_said(f),
            conf(0.8),
        ),
        Classification::Buzzword => Evidence::fact(
            id,
            Detective::DocAnalyst,
            goal,
            false,
            format!("{src} p.{}", f.page),
            format!(
                "Keyword Dropping: '{}' appears {times} (pages {}) only in titles, lists or passages that do not say how the code does it{}",
                f.concept,
                join_pages(&f.pages),
                passage(f, "the fullest has")
            ),
            conf(0.75),
        )
        .with_fix(format!(
            "on p.{}, explain how the code does '{}': name the nodes, functions or files involved and what they do",
            f.page, f.concept
        )),
        Classification::Absent => Evidence::fact(
            id,
            Detective::DocAnalyst,
            goal,
            false,
            src.to_string(),
            format!(
                "'{}' does not appear anywhere in the text of {}",
                f.concept,
                pages_read(facts)
            ),
            conf(0.95),
        )
        .with_fix(format!(
            "add a section on '{}' that says how the code does it, naming the nodes, functions or files involved",
            f.concept
        )),
    };
    quoted(e)
}

/// A concept not explained in the pages read of a report read in part: no confident verdict,
/// evidence missing that says what was read and what to read by hand.
fn partly_read_evidence(
    facts: &PdfFacts,
    f: &concepts::ConceptFinding,
    id: String,
    goal: String,
) -> Evidence {
    let src = facts.display_name();
    let times = crate::words::count(f.mentions as usize, "time", "times");
    let seen = match f.classification {
        Classification::Buzzword => format!(
            "'{}' appears {times} (pages {}) only in titles, lists or passages that do not say how the code does it",
            f.concept,
            join_pages(&f.pages)
        ),
        _ => format!("'{}' does not appear", f.concept),
    };
    Evidence::missing(
        id,
        Detective::DocAnalyst,
        goal,
        src.to_string(),
        format!(
            "{seen} in {}: the pages not read may explain it, so this is no confident verdict",
            pages_read(facts)
        ),
    )
    .with_fix(format!(
        "read pages {}-{} of the report by hand for '{}'",
        facts.pages + 1,
        facts.document_pages(),
        f.concept
    ))
}

/// Where and how a passage explains the concept: by its name, or by its mechanism without
/// naming it.
fn explained_said(f: &concepts::ConceptFinding) -> String {
    let times = crate::words::count(f.mentions as usize, "time", "times");
    match &f.mechanism {
        None => format!(
            "'{}' appears {times} (pages {}); on p.{} a passage says how the code does it{}",
            f.concept,
            join_pages(&f.pages),
            f.page,
            passage(f, "it has")
        ),
        Some(what) => format!(
            "{}; on p.{} a passage says how the code does its mechanism ({what}) without naming it{}",
            if f.mentions == 0 {
                format!("'{}' is not named", f.concept)
            } else {
                format!(
                    "'{}' appears {times} (pages {}) only in titles, lists or passages that do not say how the code does it",
                    f.concept,
                    join_pages(&f.pages)
                )
            },
            f.page,
            passage(f, "it has")
        ),
    }
}

/// What the concept's passage has (`; {what} on p.N: ...`), or nothing without one.
fn passage(f: &concepts::ConceptFinding, what: &str) -> String {
    f.content
        .as_ref()
        .map(|c| format!("; {what} on p.{}: {}", f.page, c.describe()))
        .unwrap_or_default()
}

fn join_pages(p: &[u32]) -> String {
    p.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// The evidence for one checked path. Its goal names the claim and reads right in every list a
/// report prints it in ("met: ...", "Contradicted by the repository: ...", remediation quotes);
/// the rationale starts with the verdict (`Verified:`, `Hallucinated:`, `Suggested:`,
/// `Disclaimed:`).
pub fn path_fact(c: &ClaimedPath, id: String, location: String) -> Evidence {
    let (what, kind) = if c.directory {
        ("Directory", "directory")
    } else {
        ("Path", "file")
    };
    let p = &c.path;
    let fact = |goal: String, rationale: String, c: f64| {
        Evidence::fact(
            id.clone(),
            Detective::EvidenceAggregator,
            goal,
            true,
            location.clone(),
            rationale,
            conf(c),
        )
    };
    let claimed = matches!(c.status, PathStatus::Verified | PathStatus::Hallucinated);
    let e = match c.status {
        PathStatus::Verified => fact(
            format!("{what} '{p}' claimed by the report exists in the repository"),
            format!(
                "Verified: '{p}' is in the audited commit{}{}",
                match &c.matched {
                    Some(m) => format!(" (matched as {m})"),
                    None => String::new(),
                },
                also_written(c)
            ),
            if c.matched.is_some() { 0.9 } else { 1.0 },
        ),
        PathStatus::Hallucinated => fact(
            format!("{what} '{p}' claimed by the report"),
            format!(
                "Hallucinated: the audited commit has no {kind} '{p}' (nor any {kind} ending \
                 with it), yet the report presents it as part of the project"
            ),
            0.95,
        )
        .with_kind(EvidenceKind::Contradiction),
        PathStatus::Suggested => fact(
            format!("{what} '{p}' mentioned by the report as future work, not claimed as built"),
            format!(
                "Suggested: '{p}' is not in the audited commit, and the report presents it as \
                 future work, not as built"
            ),
            0.7,
        ),
        PathStatus::Disclaimed => fact(
            format!("{what} '{p}' mentioned by the report as absent, not claimed to exist"),
            format!(
                "Disclaimed: '{p}' is not in the audited commit, and the report itself says so \
                 (it discusses the missing or renamed file rather than claiming it)"
            ),
            0.7,
        ),
        PathStatus::Mentioned => fact(
            format!("{what} '{p}' named by the report, not cited as part of the project"),
            match c.not_claimed {
                Some(super::paths::NotClaimed::Example) => format!(
                    "Mentioned: '{p}' is written inside a quoted example, not cited as a {kind} of the project"
                ),
                _ => format!(
                    "Mentioned: the report gives '{p}' to another team's repository, not to this project"
                ),
            },
            0.7,
        ),
        PathStatus::Unchecked => Evidence::missing(
            id,
            Detective::EvidenceAggregator,
            format!("{what} '{p}' claimed by the report, checked against the repository"),
            location,
            format!("'{p}' was not checked against the audited commit's files"),
        )
        .with_fix("re-run the audit so that the repository's file list is available"),
    };
    e.with_measure(Measure::Path { claimed })
}

/// The report's other spellings of the file, merged into this claim: " (also written
/// 'graph.py')", or nothing.
fn also_written(c: &ClaimedPath) -> String {
    if c.spellings.is_empty() {
        return String::new();
    }
    format!(
        " (also written {})",
        c.spellings
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The report dimensions that ask for the report to be cross-referenced with the repository.
fn cross_reference_dimensions(dimensions: &[Dimension]) -> impl Iterator<Item = &Dimension> {
    dimensions
        .iter()
        .filter(|d| d.target_artifact == TargetArtifact::PdfReport && route(d).paths)
}

/// Evidence from the cross-reference (claimed paths already checked): one per claimed path and
/// a summary, for every dimension that asks for cross-referencing.
pub fn path_evidence(
    facts: &PdfFacts,
    no_repo_files: bool,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let mut out = BTreeMap::new();
    let src = facts.display_name();
    for d in cross_reference_dimensions(dimensions) {
        let mut evs = Vec::new();
        if no_repo_files {
            evs.push(Evidence::missing(
                format!("pdf.{}.paths.unchecked", d.id),
                Detective::EvidenceAggregator,
                "Claimed paths cross-referenced with the repository",
                src.to_string(),
                format!(
                    "the repository's file list is unavailable (the RepoInvestigator could not read the audited commit), so the {} the report mentions could not be checked",
                    crate::words::count(
                        facts.path_counts.map_or(facts.claimed_paths.len(), |n| n.total),
                        "path",
                        "paths"
                    )
                ),
            ).with_fix("make the repository readable by the grader (see the RepoInvestigator's error) and re-run"));
            out.insert(d.id.clone(), evs);
            continue;
        }
        for (i, c) in facts.claimed_paths.iter().enumerate() {
            let e = path_fact(
                c,
                format!("pdf.{}.path.{i}", d.id),
                format!("{src} p.{}", c.page),
            );
            evs.push(if c.context.is_empty() {
                e
            } else {
                e.with_content(format!("p.{}: \"{}\"", c.page, c.context))
            });
        }
        let n = facts
            .path_counts
            .unwrap_or_else(|| PathCounts::of(&facts.claimed_paths));
        let names = |status: PathStatus, count: usize| {
            let listed: Vec<String> = facts
                .claimed_paths
                .iter()
                .filter(|c| c.status == status)
                .map(|c| format!("{}{}", c.path, also_written(c)))
                .collect();
            let more = count.saturating_sub(listed.len());
            match (listed.is_empty(), more) {
                (true, 0) => "-".to_string(),
                (true, m) => format!("{m} not listed"),
                (false, 0) => listed.join(", "),
                (false, m) => format!("{}, and {m} more", listed.join(", ")),
            }
        };
        evs.push(
            Evidence::fact(
                format!("pdf.{}.paths.summary", d.id),
                Detective::EvidenceAggregator,
                "Every file path the report claims exists in the repository (zero hallucinated paths)",
                n.verified > 0 && n.hallucinated == 0,
                src.to_string(),
                if n.total == 0 {
                    "the report mentions no repository path: nothing to verify".to_string()
                } else {
                    format!(
                        "{} verified, {} hallucinated, {} suggested as future work, {} said by the report not to exist, {}of {} mentioned",
                        n.verified,
                        n.hallucinated,
                        n.suggested,
                        n.disclaimed,
                        if n.mentioned > 0 {
                            format!("{} another team's file or in a quoted example, ", n.mentioned)
                        } else {
                            String::new()
                        },
                        crate::words::count(n.total, "path", "paths")
                    )
                },
                Confidence::CERTAIN,
            )
            .with_content(format!(
                "Verified: {}\nHallucinated: {}",
                names(PathStatus::Verified, n.verified),
                names(PathStatus::Hallucinated, n.hallucinated)
            )),
        );
        out.insert(d.id.clone(), evs);
    }
    out
}

/// Evidence for the report's feature claims (after [`super::claims::check`]), for the dimensions
/// that cross-reference the report with the code. A contradicted claim is a confirmed
/// `Contradiction` (`found`): the Chief Justice's fact supremacy then outranks any judge who
/// believed the report.
pub fn claim_evidence(
    facts: &PdfFacts,
    dimensions: &[Dimension],
) -> BTreeMap<String, Vec<Evidence>> {
    let mut out = BTreeMap::new();
    let src = facts.display_name();
    for d in cross_reference_dimensions(dimensions) {
        let mut evs = Vec::new();
        for c in facts
            .feature_claims
            .iter()
            .filter(|c| c.status != ClaimStatus::Unchecked)
        {
            let code_at = c
                .code_location
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let supported = c.status == ClaimStatus::Supported;
            // A denial ("No evidence of tempfile.TemporaryDirectory()") is its own claim.
            let (id, claim, claims) = if c.denied {
                (
                    format!("pdf.{}.claim.no_{}", d.id, c.feature.as_str()),
                    format!("denial of {}", c.feature.label()),
                    "denies",
                )
            } else {
                (
                    format!("pdf.{}.claim.{}", d.id, c.feature.as_str()),
                    format!("claim of {}", c.feature.label()),
                    "claims",
                )
            };
            // A contradiction is a confirmed finding (`found`), like a hallucinated path: the
            // goal names the claim, the rationale the verdict.
            let e = Evidence::fact(
                id,
                Detective::EvidenceAggregator,
                if supported {
                    format!("The report's {claim} matches the code evidence")
                } else {
                    format!("The report's {claim}")
                },
                true,
                format!("{src} p.{}", c.page),
                match c.status {
                    ClaimStatus::Supported => format!(
                        "Supported: the report {claims} {} and the code shows it: {}{code_at}",
                        c.feature.label(),
                        c.code
                    ),
                    _ => format!(
                        "Contradicted: the report {claims} {}, but {}{code_at}",
                        c.feature.label(),
                        c.code
                    ),
                },
                conf(if c.code_location.is_some() {
                    0.85
                } else {
                    0.75
                }),
            )
            .with_content(format!("p.{}: \"{}\"", c.page, c.quote));
            evs.push(if c.status == ClaimStatus::Contradicted {
                // A confirmed contradiction is `found` (see `EvidenceKind::Contradiction`):
                // with `found == false` it would read as a check that came back clean.
                Evidence {
                    found: true,
                    ..e.with_kind(EvidenceKind::Contradiction)
                }
            } else {
                e
            });
        }
        if !evs.is_empty() {
            out.insert(d.id.clone(), evs);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::Rubric;

    #[test]
    fn a_contradicted_claim_is_a_confirmed_contradiction_and_a_supported_one_a_met_fact() {
        use super::super::claims::{ClaimStatus, Feature, FeatureClaim};
        let mut facts =
            PdfFacts::from_pages("report.pdf", &["The judges run in parallel.".into()], &[]);
        let claim = |feature, status| FeatureClaim {
            feature,
            denied: false,
            page: 1,
            quote: "q".into(),
            mentions: 1,
            status,
            code: "what the code shows".into(),
            code_location: None,
            figure: None,
            sentences: Vec::new(),
        };
        facts.feature_claims = vec![
            claim(Feature::ParallelExecution, ClaimStatus::Supported),
            claim(Feature::StructuredOutput, ClaimStatus::Contradicted),
            // the report's denial, which the code contradicts: its own claim, said as a denial
            FeatureClaim {
                denied: true,
                ..claim(Feature::SandboxedClone, ClaimStatus::Contradicted)
            },
        ];
        let v3 = rubric("official-v3.0.0.json");
        let ev = claim_evidence(&facts, &v3.dimensions);
        let all: Vec<&Evidence> = ev.values().flatten().collect();
        let tally = crate::tally::Tally::of(&all.iter().map(|e| (*e).clone()).collect::<Vec<_>>())
            .contradictions
            .len();
        assert!(
            tally >= 1,
            "the contradicted claim must count as a contradiction"
        );
        assert!(
            tally >= 2,
            "the contradicted denial must count as a contradiction"
        );
        for e in all {
            if e.id.ends_with("claim.no_sandboxed_clone") {
                assert_eq!((e.kind, e.found), (EvidenceKind::Contradiction, true));
                assert_eq!(
                    e.rationale,
                    "Contradicted: the report denies cloning in a temporary sandbox, but what the code shows"
                );
                assert_eq!(
                    e.goal,
                    "The report's denial of cloning in a temporary sandbox"
                );
            } else if e.id.ends_with("structured_output") {
                assert_eq!((e.kind, e.found), (EvidenceKind::Contradiction, true));
            } else {
                assert_eq!((e.kind, e.found), (EvidenceKind::Fact, true));
            }
        }
    }

    fn rubric(file: &str) -> Rubric {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/rubrics/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        Rubric::parse(&text, file).unwrap()
    }

    #[test]
    fn v3_and_v2_dimensions_are_routed() {
        let v3 = rubric("official-v3.0.0.json");
        let r = |id: &str, rb: &Rubric| route(rb.dimension(id).unwrap());
        assert_eq!(
            r("theoretical_depth", &v3),
            Route {
                concepts: true,
                paths: false
            }
        );
        assert_eq!(
            r("report_accuracy", &v3),
            Route {
                concepts: false,
                paths: true
            }
        );
        assert_eq!(r("swarm_visual", &v3), Route::default());
        let v2 = rubric("official-v2.0.0.json");
        assert_eq!(
            r("forensic_accuracy_docs", &v2),
            Route {
                concepts: true,
                paths: true
            }
        );
    }

    /// An explanation is of this implementation when its passage names parts of the
    /// repository's code; the same passage against a repository without them is generic.
    #[test]
    fn an_explanation_is_tied_to_the_code_by_the_names_the_repository_defines() {
        let v3 = rubric("official-v3.0.0.json");
        let dims = v3.dimensions_for(TargetArtifact::PdfReport);
        let facts = PdfFacts::from_pages(
            "repo:reports/final_report.pdf",
            &[
                "Intro.".into(),
                "Dialectical Synthesis is implemented by three judge nodes in src/nodes/judges.py that run in parallel; the chief justice merges their opinions. The ChiefJustice node applies deterministic rules to them.".into(),
            ],
            &[],
        );
        let project = |justice: &str| {
            let sources = vec![("src/nodes/justice.py".to_string(), justice.to_string())];
            let files: Vec<String> = sources.iter().map(|(p, _)| p.clone()).collect();
            (files, crate::repo::python::analyse(sources, &[]))
        };
        let tie = |files: &[String], code| {
            let ev = tie_evidence(&facts, files, code, &dims);
            let td = &ev["theoretical_depth"];
            assert_eq!(td.len(), 1, "one per explained concept: {td:?}");
            td[0].clone()
        };
        let (files, code) = project("class ChiefJustice:\n    pass\n");
        let e = tie(&files, &code);
        assert_eq!(e.id, "pdf.theoretical_depth.tie.dialectical_synthesis");
        assert!(e.found, "{}", e.rationale);
        assert_eq!(e.location, "reports/final_report.pdf p.2");
        assert!(
            e.rationale.contains(
                "the passage on p.2 that explains 'Dialectical Synthesis' names 1 part of the repository's code: `ChiefJustice` (a class, src/nodes/justice.py:1)"
            ),
            "{}",
            e.rationale
        );
        let (files, code) = project("def synthesise(opinions):\n    return opinions\n");
        let e = tie(&files, &code);
        assert!(!e.found, "{}", e.rationale);
        assert!(
            e.rationale.starts_with("a generic explanation: the passage on p.2 that explains 'Dialectical Synthesis' names `src/nodes/judges.py`, `ChiefJustice`, which the repository's code does not define (searched: 1 file, 0 classes, 1 function or module-level name, 0 graph nodes and state fields)"),
            "{}",
            e.rationale
        );
        assert!(e.fix.as_deref().is_some_and(|f| f.contains("on p.2")));
        // without the repository: not checked (grader side), never a verdict
        let ev = tie_unchecked(&facts, &dims);
        assert_eq!(ev["theoretical_depth"][0].kind, EvidenceKind::Missing);
    }

    #[test]
    fn concept_and_path_evidence_for_the_official_rubric() {
        let v3 = rubric("official-v3.0.0.json");
        let dims = v3.dimensions_for(TargetArtifact::PdfReport);
        let mut facts = PdfFacts::from_pages(
            "repo:reports/final_report.pdf",
            &[
                "Key Concepts\n• Metacognition\n\nDialectical Synthesis is implemented by three judge nodes in src/nodes/judges.py that run in parallel; the chief justice merges their opinions. The ChiefJustice node applies deterministic rules to them.\nWe also wrote src/tools/vision_tools.py.".into(),
            ],
            &[],
        );
        let ev = document_evidence(&facts, &dims);
        let td = &ev["theoretical_depth"];
        assert_eq!(
            td.iter().filter(|e| e.id.contains(".concept.")).count(),
            4,
            "one evidence per concept named in the instruction"
        );
        let kind = td.iter().find(|e| e.id.ends_with(".report_kind")).unwrap();
        assert!(kind.found, "final_report.pdf: {}", kind.rationale);
        assert!(
            kind.rationale.contains("final_report.pdf"),
            "{}",
            kind.rationale
        );
        let ds = td
            .iter()
            .find(|e| e.id == "pdf.theoretical_depth.concept.dialectical_synthesis")
            .unwrap();
        assert!(ds.found);
        assert_eq!(ds.location, "reports/final_report.pdf p.1");
        let meta = td.iter().find(|e| e.id.ends_with("metacognition")).unwrap();
        assert!(!meta.found);
        assert!(meta.rationale.contains("Keyword Dropping"));

        let files = vec![
            "src/nodes/judges.py".to_string(),
            "src/graph.py".to_string(),
        ];
        facts
            .claimed_paths
            .iter()
            .for_each(|c| assert_eq!(c.status, PathStatus::Unchecked));
        let ev = crate::pdf::cross_reference(&mut facts, &files, &dims);
        let ra = &ev["report_accuracy"];
        let judges = ra
            .iter()
            .find(|e| {
                e.content.as_deref().unwrap_or("").contains("judges.py") && e.id.contains(".path.")
            })
            .unwrap();
        assert_eq!((judges.kind, judges.found), (EvidenceKind::Fact, true));
        let vision = ra
            .iter()
            .find(|e| e.goal.contains("vision_tools.py"))
            .unwrap();
        assert_eq!(
            (vision.kind, vision.found),
            (EvidenceKind::Contradiction, true)
        );
        let summary = ra.iter().find(|e| e.id.ends_with("paths.summary")).unwrap();
        assert!(!summary.found);
        assert!(!ev.contains_key("theoretical_depth"));

        let ev = crate::pdf::cross_reference(&mut facts, &[], &dims);
        assert_eq!(ev["report_accuracy"][0].kind, EvidenceKind::Missing);
    }
    #[test]
    fn path_goals_and_rationales_read_right_for_every_status() {
        let v3 = rubric("official-v3.0.0.json");
        let dims = v3.dimensions_for(TargetArtifact::PdfReport);
        let mut facts = PdfFacts::from_pages(
            "report.pdf",
            &["We use src/graph.py. The src/tools/vision_tools.py module parses images. In future work we plan to add src/tools/cache.py. The peer's PDF claimed src/advanced_judges.py existed, but we found no such file.".into()],
            &[],
        );
        let files = vec!["src/graph.py".to_string(), "README.md".to_string()];
        let ev = crate::pdf::cross_reference(&mut facts, &files, &dims);
        let by_path = |p: &str| {
            ev["report_accuracy"]
                .iter()
                .find(|e| e.id.contains(".path.") && e.goal.contains(&format!("'{p}'")))
                .unwrap_or_else(|| panic!("no evidence for {p}"))
        };
        let verified = by_path("src/graph.py");
        assert_eq!((verified.kind, verified.found), (EvidenceKind::Fact, true));
        assert_eq!(
            verified.goal,
            "Path 'src/graph.py' claimed by the report exists in the repository"
        );
        assert!(
            verified.rationale.starts_with("Verified: "),
            "{}",
            verified.rationale
        );

        // printed as "Contradicted by the repository: <goal> at <location>": the goal must not
        // say the file exists
        let halluc = by_path("src/tools/vision_tools.py");
        assert_eq!(
            (halluc.kind, halluc.found),
            (EvidenceKind::Contradiction, true)
        );
        assert_eq!(
            halluc.goal,
            "Path 'src/tools/vision_tools.py' claimed by the report"
        );
        assert!(
            halluc.rationale.starts_with("Hallucinated: ")
                && halluc
                    .rationale
                    .contains("has no file 'src/tools/vision_tools.py'"),
            "{}",
            halluc.rationale
        );

        for (p, verdict) in [
            ("src/tools/cache.py", "Suggested: "),
            ("src/advanced_judges.py", "Disclaimed: "),
        ] {
            let e = by_path(p);
            assert_eq!((e.kind, e.found), (EvidenceKind::Fact, true), "{p}");
            assert!(!e.goal.contains("exists"), "{p}: {}", e.goal);
            assert!(e.goal.contains("not claimed"), "{p}: {}", e.goal);
            assert!(e.rationale.starts_with(verdict), "{p}: {}", e.rationale);
            assert!(e.rationale.contains("not in the audited commit"), "{p}");
        }
        // no goal of a non-verified path claims existence
        for e in ev["report_accuracy"]
            .iter()
            .filter(|e| e.id.contains(".path."))
        {
            assert_eq!(
                e.goal.contains("exists"),
                e.rationale.starts_with("Verified: "),
                "{}: {}",
                e.goal,
                e.rationale
            );
        }
    }
}
