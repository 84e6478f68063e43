//! What leaves the review: gradebook CSVs for Canvas and Moodle, a per-criterion CSV, and the
//! per-student feedback files (the report with the overrides and the comment applied). Plain
//! functions over the [`Cohort`]; every text cell is neutralised against spreadsheet formulas.
//!
//! - **Canvas** (a gradebook import, as Canvas's own gradebook export lays it out): the columns
//!   `Student, ID, SIS User ID, SIS Login ID, Section`, then one column per assignment
//!   (`Name` or `Name (canvas assignment id)`); a second row `Points Possible`. `ID` (Canvas's
//!   own user id) is left empty: Canvas then matches the row by `SIS User ID` (the manifest's
//!   id) or `SIS Login ID` (its email). Canvas turns any other column into a new assignment, so
//!   the auditor's own score is not in this file (it is in the per-criterion CSV).
//! - **Moodle** (grade import from a CSV file): one identifier column to map (`Email address`,
//!   or `ID number`), the grade column, the auditor's grade beside it (map it to "ignore") and a
//!   `Feedback` column (map it to the item's feedback).
//! - **Per criterion**: every criterion's final and automatic score, who overrode it, and the
//!   review marks.

use super::cohort::{Cohort, Status, SubmissionView};
use crate::batch::outputs::csv_cell;
use std::fmt::Write as _;

/// The grade a gradebook receives: the mean of the final criterion scores (1-5), two decimals.
pub fn grade(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_default()
}

fn finish(w: csv::Writer<Vec<u8>>) -> Result<String, csv::Error> {
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn graded(c: &Cohort) -> impl Iterator<Item = &SubmissionView> {
    c.submissions
        .iter()
        .filter(|s| s.status == Status::Done || s.overridden)
}

pub fn canvas(c: &Cohort, assignment: &str) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        &csv_cell(assignment),
    ])?;
    w.write_record(["    Points Possible", "", "", "", "", "5.00"])?;
    for s in graded(c) {
        w.write_record([
            csv_cell(&s.student.name),
            String::new(),
            csv_cell(&s.id),
            csv_cell(&s.student.email),
            csv_cell(&s.student.section),
            grade(s.final_overall),
        ])?;
    }
    finish(w)
}

pub fn moodle(c: &Cohort, assignment: &str) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let item = csv_cell(assignment);
    w.write_record([
        "Email address".to_string(),
        "ID number".into(),
        "Full name".into(),
        "Section".into(),
        item.clone(),
        format!("{item} (auditor)"),
        "Feedback".into(),
    ])?;
    for s in graded(c) {
        w.write_record([
            csv_cell(&s.student.email),
            csv_cell(&s.id),
            csv_cell(&s.student.name),
            csv_cell(&s.student.section),
            grade(s.final_overall),
            grade(s.auto_overall),
            csv_cell(
                &s.review
                    .comment
                    .as_ref()
                    .map(|c| c.text.replace(['\r', '\n'], " "))
                    .unwrap_or_default(),
            ),
        ])?;
    }
    finish(w)
}

pub fn criteria(c: &Cohort) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "id",
        "name",
        "email",
        "section",
        "status",
        "final_overall",
        "auditor_overall",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (id, _) in &c.criteria {
        header.push(id.clone());
        header.push(format!("{id}:auditor"));
        header.push(format!("{id}:overridden_by"));
    }
    header.extend(["reviewed_by", "needs_review", "flags"].map(String::from));
    w.write_record(&header)?;
    for s in &c.submissions {
        let mut rec = vec![
            csv_cell(&s.id),
            csv_cell(&s.student.name),
            csv_cell(&s.student.email),
            csv_cell(&s.student.section),
            s.status.as_str().to_string(),
            grade(s.final_overall),
            grade(s.auto_overall),
        ];
        for (id, _) in &c.criteria {
            let v = s.criterion(id);
            let n = |x: Option<u8>| x.map(|v| v.to_string()).unwrap_or_default();
            rec.push(n(v.and_then(|v| v.final_score)));
            rec.push(n(v.and_then(|v| v.auto)));
            rec.push(csv_cell(
                v.and_then(|v| v.overridden.as_ref())
                    .map(|o| o.by.as_str())
                    .unwrap_or(""),
            ));
        }
        rec.push(csv_cell(
            s.review
                .reviewed
                .as_ref()
                .map(|m| m.by.as_str())
                .unwrap_or(""),
        ));
        rec.push(s.needs_review().to_string());
        let mut flags = s.flags.clone();
        for c in s.criteria.iter().filter(|c| c.changed_under) {
            flags.push(format!("auto_score_changed_under_override:{}", c.id));
        }
        rec.push(csv_cell(&flags.join(";")));
        w.write_record(&rec)?;
    }
    finish(w)
}

/// The course staff's part of a feedback file: the comment, then each override with the
/// auditor's score beside it.
fn staff_section_md(s: &SubmissionView) -> String {
    let mut out = String::from("# Feedback from the course staff\n\n");
    if let Some(c) = &s.review.comment {
        for l in c.text.lines() {
            let _ = writeln!(out, "> {}", crate::report::inline(l));
        }
        let _ = writeln!(out, "\n— {}\n", crate::report::inline(&c.by));
    }
    let overridden: Vec<_> = s
        .criteria
        .iter()
        .filter(|c| c.overridden.is_some())
        .collect();
    if !overridden.is_empty() {
        let _ = writeln!(
            out,
            "| criterion | auditor's score | staff's score | reason |"
        );
        let _ = writeln!(out, "|---|---:|---:|---|");
        for c in overridden {
            if let Some(o) = &c.overridden {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    crate::report::inline(&c.name),
                    c.auto
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "not assessed".into()),
                    o.score,
                    crate::report::inline(&o.reason)
                );
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Final score: {} (mean of the criteria, 1-5). The auditor's report follows, with the staff's scores in place of the auditor's where they differ.\n\n---\n",
        grade(s.final_overall)
    );
    out
}

/// The course staff's part of a feedback page (`templates/staff_section.html.hbs`): the comment, then each
/// override with the auditor's score beside it. Every value escaped by handlebars, as on the
/// review's own pages.
const STAFF_SECTION_TEMPLATE: &str = include_str!("templates/staff_section.html.hbs");

/// What the staff section shows.
#[derive(serde::Serialize)]
struct StaffSection<'a> {
    comment: Option<&'a crate::review::ledger::Comment>,
    overrides: Vec<StaffOverride<'a>>,
    final_score: String,
}

/// One overridden criterion in the staff section.
#[derive(serde::Serialize)]
struct StaffOverride<'a> {
    name: &'a str,
    /// The auditor's score, or "not assessed".
    auto: String,
    score: u8,
    reason: &'a str,
}

fn staff_section_html(s: &SubmissionView) -> Result<String, crate::report::ReportError> {
    use crate::report::ReportError;
    let mut hb = handlebars::Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_template_string("staff", STAFF_SECTION_TEMPLATE.trim_end())
        .map_err(|e| ReportError::Template(Box::new(e)))?;
    let view = StaffSection {
        comment: s.review.comment.as_ref(),
        overrides: s
            .criteria
            .iter()
            .filter_map(|c| {
                let o = c.overridden.as_ref()?;
                Some(StaffOverride {
                    name: &c.name,
                    auto: c
                        .auto
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "not assessed".into()),
                    score: o.score,
                    reason: &o.reason,
                })
            })
            .collect(),
        final_score: grade(s.final_overall),
    };
    hb.render("staff", &view)
        .map_err(|e| ReportError::Render(Box::new(e)))
}

/// The feedback files of a graded submission: (Markdown, HTML). `None` without a report.
pub fn feedback(
    s: &SubmissionView,
) -> Result<Option<(String, String)>, crate::report::ReportError> {
    let Some(sidecar) = &s.sidecar else {
        return Ok(None);
    };
    let mut report = sidecar.report.clone();
    for c in report.criteria.iter_mut() {
        if let Some(o) = s
            .criterion(&c.dimension_id)
            .and_then(|v| v.overridden.as_ref())
            && let Ok(score) = crate::model::Score::new(i64::from(o.score))
        {
            c.final_score = Some(score);
            c.status = crate::model::CriterionStatus::Assessed;
            c.not_assessed = None;
        }
    }
    report.overall_score = s.final_overall;
    let md = crate::report::render_markdown_with(
        &report,
        &sidecar.evidence,
        crate::report::DEFAULT_TEMPLATE,
    )?;
    let html = crate::report::render_html(&report, &sidecar.evidence)?;
    let staff = staff_section_html(s)?;
    let html = match html.find("<body>") {
        Some(i) => format!("{}{staff}{}", &html[..i + 6], &html[i + 6..]),
        None => format!("{staff}{html}"),
    };
    Ok(Some((format!("{}{md}", staff_section_md(s)), html)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::cohort::{CriterionView, Student};
    use crate::review::ledger::{Comment, Override, ReviewState};

    fn sub(id: &str, auto: Option<u8>, over: Option<u8>) -> SubmissionView {
        let overridden = over.map(|s| Override {
            entry: 1,
            score: s,
            auto_score_then: auto,
            reason: "=cmd|' /C calc'!A0".into(),
            by: "@ta".into(),
            at: "t".into(),
        });
        let final_score = over.or(auto);
        SubmissionView {
            id: id.into(),
            judges: String::new(),
            student: Student {
                name: "Doe, Jane".into(),
                email: "j@x.org".into(),
                section: "A".into(),
            },
            status: Status::Done,
            failure: None,
            job_id: Some(1),
            commit: None,
            auto_overall: auto.map(f64::from),
            final_overall: final_score.map(f64::from),
            criteria: vec![CriterionView {
                id: "a".into(),
                name: "Alpha".into(),
                auto,
                auto_flagged: false,
                overridden: overridden.clone(),
                final_score,
                changed_under: false,
            }],
            auditor_asks_review: false,
            flags: vec![],
            review: ReviewState {
                comment: Some(Comment {
                    text: "-good\nwork".into(),
                    by: "ta".into(),
                    at: "t".into(),
                }),
                ..ReviewState::default()
            },
            overridden: overridden.is_some(),
            changed_under: false,
            not_assessed: false,
            sidecar: None,
        }
    }

    fn cohort() -> Cohort {
        Cohort {
            title: "t".into(),
            criteria: vec![("a".into(), "Alpha".into())],
            submissions: vec![sub("s1", Some(2), Some(4)), sub("s2", Some(3), None)],
        }
    }

    fn rows(text: &str) -> Vec<Vec<String>> {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect()
    }

    #[test]
    fn canvas_has_its_columns_and_the_final_grade() {
        let r = rows(&canvas(&cohort(), "Lab 3 (1234)").unwrap());
        assert_eq!(
            r[0],
            [
                "Student",
                "ID",
                "SIS User ID",
                "SIS Login ID",
                "Section",
                "Lab 3 (1234)"
            ]
        );
        assert_eq!(r[1][0], "    Points Possible");
        assert_eq!(r[2], ["Doe, Jane", "", "s1", "j@x.org", "A", "4.00"]);
        assert_eq!(r[3][5], "3.00");
    }

    #[test]
    fn moodle_keeps_the_auditors_grade_and_the_feedback() {
        let r = rows(&moodle(&cohort(), "Lab 3").unwrap());
        assert_eq!(
            r[0],
            [
                "Email address",
                "ID number",
                "Full name",
                "Section",
                "Lab 3",
                "Lab 3 (auditor)",
                "Feedback"
            ]
        );
        assert_eq!(r[1][4..], ["4.00", "2.00", "'-good work"]);
    }

    #[test]
    fn criteria_csv_has_final_auditor_and_who() {
        let r = rows(&criteria(&cohort()).unwrap());
        let h = &r[0];
        let at = |n: &str| h.iter().position(|x| x == n).unwrap();
        assert_eq!(r[1][at("a")], "4");
        assert_eq!(r[1][at("a:auditor")], "2");
        assert_eq!(r[1][at("a:overridden_by")], "'@ta");
        assert_eq!(r[2][at("a")], "3");
        assert_eq!(r[2][at("a:overridden_by")], "");
    }

    #[test]
    fn the_staff_section_escapes_every_value_and_lists_the_overrides() {
        let mut v = sub("s1", Some(2), Some(4));
        if let Some(c) = v.review.comment.as_mut() {
            c.text = "<script>alert(1)</script>\nsecond line".into();
            c.by = "a&b".into();
        }
        v.criteria[0].name = "Alpha \"quoted\"".into();
        let html = staff_section_html(&v).unwrap();
        assert_eq!(
            html,
            "<section style=\"border:2px solid #2a6;padding:0.5em 1em;margin:1em 0\"><h1>Feedback from the course staff</h1>\
<blockquote style=\"white-space:pre-wrap\">&lt;script&gt;alert(1)&lt;/script&gt;\nsecond line</blockquote><p>— a&amp;b</p>\
<table><tr><th>criterion</th><th>auditor's score</th><th>staff's score</th><th>reason</th></tr>\
<tr><td>Alpha &quot;quoted&quot;</td><td>2</td><td>4</td><td>&#x3D;cmd|&#x27; /C calc&#x27;!A0</td></tr></table>\
<p>Final score: <b>4.00</b> (mean of the criteria, 1-5). The auditor's report follows, with the staff's scores in place of the auditor's where they differ.</p></section>"
        );
        v.review.comment = None;
        v.criteria[0].overridden = None;
        v.criteria[0].auto = None;
        let html = staff_section_html(&v).unwrap();
        assert!(
            !html.contains("<blockquote") && !html.contains("<table>"),
            "{html}"
        );
    }
}
