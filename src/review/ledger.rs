//! The review ledger: the course team's append-only history of a submission (overrides,
//! reviewed marks, comments) and what it comes to now. Plain functions over plain data.
//!
//! - An override keeps the automatic score beside it: the entry records the auditor's score
//!   the reviewer saw, and the report's score is never changed in the store.
//! - The latest override of a criterion stands; the earlier ones stay in the history.
//! - An override whose automatic score changed since it was made (a regrade) is flagged for a
//!   second look: it still stands, but the reviewer decided on another automatic score.

use serde::Serialize;
use std::collections::BTreeMap;

/// The most a reason, a comment or a name may hold (characters).
pub const MAX_REASON: usize = 4_000;
pub const MAX_COMMENT: usize = 20_000;
pub const MAX_NAME: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Override,
    Reviewed,
    Unreviewed,
    Comment,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Override => "override",
            Kind::Reviewed => "reviewed",
            Kind::Unreviewed => "unreviewed",
            Kind::Comment => "comment",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "override" => Kind::Override,
            "reviewed" => Kind::Reviewed,
            "unreviewed" => Kind::Unreviewed,
            "comment" => Kind::Comment,
            _ => return None,
        })
    }
}

/// An entry to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    pub submission: String,
    pub kind: Kind,
    pub criterion: Option<String>,
    pub score: Option<u8>,
    /// The auditor's score of the criterion when the override was made.
    pub auto_score: Option<u8>,
    /// The job whose report the reviewer saw.
    pub job_id: Option<i64>,
    /// The reason of an override, or the comment.
    pub text: String,
    pub by: String,
}

/// An entry of the history, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub id: i64,
    pub submission: String,
    pub kind: Kind,
    pub criterion: Option<String>,
    pub score: Option<u8>,
    pub auto_score: Option<u8>,
    pub job_id: Option<i64>,
    pub text: String,
    pub by: String,
    /// RFC 3339, UTC.
    pub at: String,
}

/// The override of a criterion that stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Override {
    pub entry: i64,
    pub score: u8,
    /// The auditor's score when the override was made.
    pub auto_score_then: Option<u8>,
    pub reason: String,
    pub by: String,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mark {
    pub by: String,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comment {
    pub text: String,
    pub by: String,
    pub at: String,
}

/// What a submission's history comes to now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReviewState {
    /// The standing override of each criterion (by criterion id).
    pub overrides: BTreeMap<String, Override>,
    /// Marked reviewed (and not unmarked since).
    pub reviewed: Option<Mark>,
    /// The latest comment for the student (an empty one withdraws it).
    pub comment: Option<Comment>,
    pub entries: usize,
}

/// Folds a submission's entries (in the store's order) into its state.
pub fn fold<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> ReviewState {
    let mut s = ReviewState::default();
    for e in entries {
        s.entries += 1;
        match e.kind {
            Kind::Override => {
                if let (Some(c), Some(score)) = (&e.criterion, e.score) {
                    s.overrides.insert(
                        c.clone(),
                        Override {
                            entry: e.id,
                            score,
                            auto_score_then: e.auto_score,
                            reason: e.text.clone(),
                            by: e.by.clone(),
                            at: e.at.clone(),
                        },
                    );
                }
            }
            Kind::Reviewed => {
                s.reviewed = Some(Mark {
                    by: e.by.clone(),
                    at: e.at.clone(),
                })
            }
            Kind::Unreviewed => s.reviewed = None,
            Kind::Comment => {
                s.comment = (!e.text.trim().is_empty()).then(|| Comment {
                    text: e.text.clone(),
                    by: e.by.clone(),
                    at: e.at.clone(),
                })
            }
        }
    }
    s
}

/// Why an entry was refused (the API's 400, the CLI's exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("score {0:?} is not valid: give a whole number from 1 to 5")]
    BadScore(String),
    #[error("unknown criterion {given:?}: the criteria are {known}")]
    UnknownCriterion { given: String, known: String },
    #[error("a reason is required: say why the score changes (it is kept in the history)")]
    EmptyReason,
    #[error("say who you are (--by NAME, or the by field): every entry records who made it")]
    EmptyBy,
    #[error("{what} is too long ({len} characters; at most {max})")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
}

/// Parses a score given as text ("4", " 4 ").
pub fn parse_score(text: &str) -> Result<u8, EntryError> {
    match text.trim().parse::<i64>() {
        Ok(n) if (1..=5).contains(&n) => Ok(n as u8),
        _ => Err(EntryError::BadScore(text.chars().take(40).collect())),
    }
}

/// A score given as a JSON value (a number 1-5, or its text).
pub fn score_of_json(v: &serde_json::Value) -> Result<u8, EntryError> {
    match v {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) if (1..=5).contains(&i) => Ok(i as u8),
            _ => Err(EntryError::BadScore(n.to_string())),
        },
        serde_json::Value::String(s) => parse_score(s),
        other => Err(EntryError::BadScore(
            other.to_string().chars().take(40).collect(),
        )),
    }
}

fn bounded(what: &'static str, text: &str, max: usize) -> Result<String, EntryError> {
    let len = text.chars().count();
    if len > max {
        return Err(EntryError::TooLong { what, len, max });
    }
    Ok(text.to_string())
}

fn who(by: &str) -> Result<String, EntryError> {
    let by = by.trim();
    if by.is_empty() {
        return Err(EntryError::EmptyBy);
    }
    bounded("the name", by, MAX_NAME)
}

/// The criterion named by `given` (its id, or its name ignoring case) among `criteria`
/// (id, name).
pub fn find_criterion<'a>(
    criteria: &'a [(String, String)],
    given: &str,
) -> Result<&'a str, EntryError> {
    let g = given.trim();
    criteria
        .iter()
        .find(|(id, _)| id == g)
        .or_else(|| criteria.iter().find(|(_, n)| n.eq_ignore_ascii_case(g)))
        .map(|(id, _)| id.as_str())
        .ok_or_else(|| EntryError::UnknownCriterion {
            given: g.chars().take(80).collect(),
            known: criteria
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// An override as a reviewer proposes it.
#[derive(Debug, Clone, Copy)]
pub struct Proposed<'a> {
    pub criterion: &'a str,
    pub score: u8,
    pub reason: &'a str,
    pub by: &'a str,
}

/// An override entry, checked: a known criterion, a score 1-5, a reason, a name. `auto_score`
/// gives the auditor's score of a criterion in the report the reviewer saw (job `job_id`).
pub fn override_entry(
    submission: &str,
    criteria: &[(String, String)],
    p: Proposed<'_>,
    auto_score: impl Fn(&str) -> Option<u8>,
    job_id: Option<i64>,
) -> Result<NewEntry, EntryError> {
    let criterion = find_criterion(criteria, p.criterion)?;
    if !(1..=5).contains(&p.score) {
        return Err(EntryError::BadScore(p.score.to_string()));
    }
    let reason = p.reason.trim();
    if reason.is_empty() {
        return Err(EntryError::EmptyReason);
    }
    Ok(NewEntry {
        submission: submission.to_string(),
        kind: Kind::Override,
        criterion: Some(criterion.to_string()),
        score: Some(p.score),
        auto_score: auto_score(criterion),
        job_id,
        text: bounded("the reason", reason, MAX_REASON)?,
        by: who(p.by)?,
    })
}

/// A reviewed (or not reviewed any more) mark.
pub fn mark_entry(submission: &str, reviewed: bool, by: &str) -> Result<NewEntry, EntryError> {
    Ok(NewEntry {
        submission: submission.to_string(),
        kind: if reviewed {
            Kind::Reviewed
        } else {
            Kind::Unreviewed
        },
        criterion: None,
        score: None,
        auto_score: None,
        job_id: None,
        text: String::new(),
        by: who(by)?,
    })
}

/// A comment for the student (empty: the comment is withdrawn).
pub fn comment_entry(submission: &str, text: &str, by: &str) -> Result<NewEntry, EntryError> {
    Ok(NewEntry {
        submission: submission.to_string(),
        kind: Kind::Comment,
        criterion: None,
        score: None,
        auto_score: None,
        job_id: None,
        text: bounded("the comment", text.trim(), MAX_COMMENT)?,
        by: who(by)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64, kind: Kind, criterion: Option<&str>, score: Option<u8>, text: &str) -> Entry {
        Entry {
            id,
            submission: "s".into(),
            kind,
            criterion: criterion.map(String::from),
            score,
            auto_score: Some(2),
            job_id: Some(1),
            text: text.into(),
            by: "ta".into(),
            at: format!("t{id}"),
        }
    }

    #[test]
    fn the_latest_override_stands_and_marks_and_comments_fold() {
        let h = vec![
            entry(1, Kind::Override, Some("a"), Some(4), "first"),
            entry(2, Kind::Reviewed, None, None, ""),
            entry(3, Kind::Override, Some("a"), Some(5), "second"),
            entry(4, Kind::Comment, None, None, "well done"),
            entry(5, Kind::Override, Some("b"), Some(1), "b"),
            entry(6, Kind::Unreviewed, None, None, ""),
        ];
        let s = fold(&h);
        assert_eq!(s.overrides["a"].score, 5);
        assert_eq!(s.overrides["a"].reason, "second");
        assert_eq!(s.overrides["b"].score, 1);
        assert_eq!(s.reviewed, None);
        assert_eq!(s.comment.as_ref().unwrap().text, "well done");
        assert_eq!(s.entries, 6);
        let s = fold(&h[..2]);
        assert_eq!(s.reviewed.unwrap().at, "t2");
        let mut withdrawn = h.clone();
        withdrawn.push(entry(7, Kind::Comment, None, None, " "));
        assert_eq!(fold(&withdrawn).comment, None);
    }

    #[test]
    fn overrides_are_checked() {
        let crit = vec![
            ("a".to_string(), "Alpha".to_string()),
            ("b".to_string(), "Beta".to_string()),
        ];
        let p = |criterion, score, reason, by| Proposed {
            criterion,
            score,
            reason,
            by,
        };
        let ok = override_entry(
            "s",
            &crit,
            p("alpha", 4, " why ", "ta"),
            |_| Some(2),
            Some(7),
        )
        .unwrap();
        assert_eq!(ok.criterion.as_deref(), Some("a"));
        assert_eq!(
            (ok.score, ok.auto_score, ok.text.as_str()),
            (Some(4), Some(2), "why")
        );
        assert!(matches!(
            override_entry("s", &crit, p("zeta", 4, "r", "ta"), |_| None, None),
            Err(EntryError::UnknownCriterion { .. })
        ));
        let e = override_entry("s", &crit, p("a", 4, "  ", "ta"), |_| None, None).unwrap_err();
        assert_eq!(e, EntryError::EmptyReason);
        assert_eq!(
            override_entry("s", &crit, p("a", 4, "r", " "), |_| None, None).unwrap_err(),
            EntryError::EmptyBy
        );
        assert!(matches!(
            override_entry("s", &crit, p("a", 6, "r", "ta"), |_| None, None),
            Err(EntryError::BadScore(_))
        ));
        assert_eq!(parse_score(" 3 "), Ok(3));
        for bad in ["0", "6", "3.5", "x", ""] {
            assert!(parse_score(bad).is_err(), "{bad}");
        }
        assert_eq!(score_of_json(&serde_json::json!(5)), Ok(5));
        assert!(score_of_json(&serde_json::json!(4.5)).is_err());
        assert!(score_of_json(&serde_json::json!(null)).is_err());
        let long = "x".repeat(MAX_REASON + 1);
        assert!(matches!(
            override_entry("s", &crit, p("a", 4, &long, "ta"), |_| None, None),
            Err(EntryError::TooLong { .. })
        ));
    }
}
