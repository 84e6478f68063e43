//! Final or interim: what the report says it is. Decided from the document first (its title:
//! the first lines of page 1 naming an "interim" or a "final" report), then from its file name
//! (`interim_report.pdf`, `Final Report.pdf`); a report that says neither is `Unknown`, and no
//! statement is made about it. The repository's other PDFs are named too, so a reader sees
//! when a final report was committed beside the interim one that was read.

use serde::{Deserialize, Serialize};

/// Which report the document is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    Final,
    Interim,
    #[default]
    Unknown,
}

/// What decided the kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindBasis {
    pub kind: ReportKind,
    /// `title` (page 1 says so) or `file_name`; empty when unknown.
    pub from: String,
    /// The words that say so ("Interim Report", "interim_report.pdf").
    pub quote: String,
}

/// Lines of page 1 read as its title block.
const TITLE_LINES: usize = 12;

fn says(text: &str) -> ReportKind {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .any(|w| matches!(*w, "interim" | "intrim" | "midterm"))
    {
        ReportKind::Interim
    } else if words
        .windows(2)
        .any(|w| w[0] == "final" && matches!(w[1], "report" | "submission" | "version"))
        || words.first() == Some(&"final")
    {
        ReportKind::Final
    } else {
        ReportKind::Unknown
    }
}

/// The kind of the report whose first page is `first_page` (normalised text) and whose file
/// is `source` (a path, or `repo:<path>`).
pub fn decide(first_page: &str, source: &str) -> KindBasis {
    for line in first_page
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(TITLE_LINES)
    {
        // a title line, not a sentence that happens to mention an interim deadline
        if line.split_whitespace().count() <= 12 {
            let kind = says(line);
            if kind != ReportKind::Unknown {
                return KindBasis {
                    kind,
                    from: "title".into(),
                    quote: line.chars().take(120).collect(),
                };
            }
        }
    }
    let path = source.strip_prefix("repo:").unwrap_or(source);
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let kind = says(file.trim_end_matches(".pdf").trim_end_matches(".PDF"));
    if kind == ReportKind::Unknown {
        return KindBasis::default();
    }
    KindBasis {
        kind,
        from: "file_name".into(),
        quote: file.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_decides_then_the_file_name() {
        let k = decide(
            "TRP1 Week 2\nInterim Report: The Automaton Auditor\nby A. B.",
            "repo:reports/final_report.pdf",
        );
        assert_eq!((k.kind, k.from.as_str()), (ReportKind::Interim, "title"));
        let k = decide(
            "Week 2 Final Report (Alignment - Take 7)\nDate: 2026-03-01",
            "x.pdf",
        );
        assert_eq!((k.kind, k.from.as_str()), (ReportKind::Final, "title"));
        let k = decide(
            "The Automaton Auditor\nArchitecture",
            "repo:reports/Interim_Report.pdf",
        );
        assert_eq!(
            (k.kind, k.from.as_str()),
            (ReportKind::Interim, "file_name")
        );
        assert_eq!(k.quote, "Interim_Report.pdf");
        let k = decide("The Automaton Auditor", "repo:reports/report.pdf");
        assert_eq!(k.kind, ReportKind::Unknown);
        // a sentence of the body that mentions the interim submission is no title
        let k = decide(
            "The Automaton Auditor\nSince the interim submission on 25 February we rewired the judges to run in parallel.",
            "repo:reports/final_report.pdf",
        );
        assert_eq!((k.kind, k.from.as_str()), (ReportKind::Final, "file_name"));
    }
}
