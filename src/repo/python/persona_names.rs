//! `persona_mismatch`: a persona name the code produces or compares with differs from the one
//! the other side uses, so a rule never fires or an opinion fails validation;
//! `rubric_logic_lookup`: a judge's per-persona rubric logic is looked up with a key the rubric
//! does not have, so that judge gets no rubric instructions.
//!
//! Three checks, each only when both sides are literal in the code:
//! - a name given as `judge=` / `"judge": ...` that the schema's `Literal` does not accept;
//! - a comparison `judge == "X"` where no judge is ever named X;
//! - a lookup of the rubric's per-persona logic with a transformed name (`persona.lower()`)
//!   that yields a key the rubric does not have (`"TechLead".lower()` is `techlead`, the
//!   rubric's key is `tech_lead`).

use super::graph::Defect;
use super::names::Repo;
use super::state::StateFacts;
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The rubric's `judicial_logic` keys (v2 and v3).
const RUBRIC_KEYS: &[&str] = &["prosecutor", "defense", "tech_lead"];

fn persona_like(s: &str) -> bool {
    let l = s.to_lowercase();
    ["prosecut", "defen", "tech"].iter().any(|p| l.contains(p)) && s.len() <= 30
}

fn literal_values(annotation: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r#"["']([^"']+)["']"#).expect("regex"));
    if !annotation.contains("Literal[") {
        return Vec::new();
    }
    re.captures_iter(annotation)
        .map(|c| c[1].to_string())
        .collect()
}

pub fn analyse(repo: &Repo<'_>, state: &StateFacts) -> Vec<Defect> {
    let mut out = Vec::new();
    let (accepted, accepted_at) = accepted_names(state);
    let produced = produced_names(repo);
    if !accepted.is_empty() {
        out.extend(unaccepted_name(&accepted, &accepted_at, &produced));
    }
    let mut known: BTreeSet<String> = accepted.clone();
    known.extend(produced.iter().map(|(n, _)| n.clone()));
    let compared = compared_names(repo);
    let looked_up = rubric_lookups(repo);
    // without a Literal, the names the code gives judges are known only when a whole panel is
    // named literally (a name built elsewhere could make the compared one real)
    let distinct_produced: BTreeSet<&str> = produced.iter().map(|(n, _)| n.as_str()).collect();
    if !accepted.is_empty() || distinct_produced.len() >= 3 {
        out.extend(unknown_compared_name(&compared, &known));
    }
    if let Some((replace, at)) = looked_up.first() {
        out.extend(missing_rubric_keys(*replace, at, &known));
    }
    out
}

/// The names the schema accepts for a judge (a `judge` field's `Literal` of persona names),
/// and where (the last such field).
fn accepted_names(state: &StateFacts) -> (BTreeSet<String>, String) {
    let mut accepted: BTreeSet<String> = BTreeSet::new();
    let mut accepted_at = String::new();
    for c in state.typed_dicts.iter().chain(&state.pydantic_models) {
        for f in &c.fields {
            if f.name == "judge" {
                let vals = literal_values(&f.annotation);
                if vals.iter().any(|v| persona_like(v)) {
                    accepted.extend(vals);
                    accepted_at = format!("{}:{}", c.path, f.line);
                }
            }
        }
    }
    (accepted, accepted_at)
}

/// The names the code gives a judge (`judge=` / `"judge": ...` with a literal persona name),
/// each with where.
fn produced_names(repo: &Repo<'_>) -> Vec<(String, String)> {
    let mut produced: Vec<(String, String)> = Vec::new();
    for m in repo.modules {
        for c in &m.calls {
            for (k, v) in &c.kwargs {
                if k == "judge"
                    && let Some(s) = v.as_str()
                    && persona_like(s)
                {
                    produced.push((s.to_string(), format!("{}:{}", m.path, c.line)));
                }
            }
        }
        for s in &m.strings {
            if s.label == "judge" && persona_like(&s.text) && !s.fstring {
                produced.push((s.text.clone(), format!("{}:{}", m.path, s.line)));
            }
        }
    }
    produced
}

/// The (name, where) pairs whose name is not in `set`, a run of one name kept once.
fn outside<'a>(pairs: &'a [(String, String)], set: &BTreeSet<String>) -> Vec<&'a (String, String)> {
    let mut out: Vec<&(String, String)> = pairs.iter().filter(|(n, _)| !set.contains(n)).collect();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// The names the code gives a judge that the schema (`accepted` at `accepted_at`) does not
/// accept.
fn unaccepted_name(
    accepted: &BTreeSet<String>,
    accepted_at: &str,
    produced: &[(String, String)],
) -> Option<Defect> {
    let bad = outside(produced, accepted);
    let (_, at) = bad.first()?;
    let names: Vec<String> = bad.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    Some(Defect {
        cause: None,
        fields_only: false,
        kind: "persona_mismatch".into(),
        nodes: bad.iter().map(|(n, _)| n.clone()).collect(),
        location: at.clone(),
        detail: format!(
            "the code names a judge {} but the schema ({accepted_at}) accepts only {}: that opinion fails validation",
            names.join(", "),
            accepted
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The persona names a judge's name is compared with (`judge == "X"`, comments left out),
/// each with where.
fn compared_names(repo: &Repo<'_>) -> Vec<(String, String)> {
    static CMP: OnceLock<Regex> = OnceLock::new();
    let cmp = CMP.get_or_init(|| {
        Regex::new(r#"\bjudge["']?\s*(?:,\s*["'][^"']*["']\s*)?\)?\]?\s*==\s*["']([^"']+)["']"#)
            .expect("regex")
    });
    let mut compared: Vec<(String, String)> = Vec::new();
    for m in repo.modules {
        for (i, line) in m.source.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            for c in cmp.captures_iter(code) {
                if persona_like(&c[1]) {
                    compared.push((c[1].to_string(), format!("{}:{}", m.path, i + 1)));
                }
            }
        }
    }
    compared
}

/// The lookups of the rubric's per-persona logic with a lower-cased name: whether spaces are
/// also replaced by `_`, and where.
fn rubric_lookups(repo: &Repo<'_>) -> Vec<(bool, String)> {
    static LOOKUP: OnceLock<Regex> = OnceLock::new();
    let lookup = LOOKUP.get_or_init(|| {
        Regex::new(
            r#"(?:judicial_logic|rubric_logic)\b[^\n]*?(?:\.get\(|\[)\s*\n?\s*([A-Za-z_][\w.]*)\.lower\(\)(\.replace\(\s*["'] ["']\s*,\s*["']_["']\s*\))?"#,
        )
        .expect("regex")
    });
    let mut looked_up: Vec<(bool, String)> = Vec::new();
    for m in repo.modules {
        for c in lookup.captures_iter(&m.source) {
            // the line the match starts on (a match starting mid-line is on that line)
            let line = m.source[..c.get(0).map_or(0, |x| x.start())]
                .matches('\n')
                .count()
                + 1;
            looked_up.push((c.get(2).is_some(), format!("{}:{line}", m.path)));
        }
    }
    looked_up
}

/// The names a judge's name is compared with that no judge is named (`known`).
fn unknown_compared_name(
    compared: &[(String, String)],
    known: &BTreeSet<String>,
) -> Option<Defect> {
    let bad = outside(compared, known);
    let (_, at) = bad.first()?;
    Some(Defect {
        cause: None,
        fields_only: false,
        kind: "persona_mismatch".into(),
        nodes: bad.iter().map(|(n, _)| n.clone()).collect(),
        location: at.clone(),
        detail: format!(
            "the code compares a judge's name with {} but judges are named {}: the rule never fires",
            bad.iter()
                .map(|(n, _)| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", "),
            known
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The judges (`known`) whose lower-cased name (spaces made `_` when `replace`) is no key of
/// the rubric's per-persona logic, the lookup being at `at`.
fn missing_rubric_keys(replace: bool, at: &str, known: &BTreeSet<String>) -> Option<Defect> {
    let missing: Vec<(String, String)> = known
        .iter()
        .map(|n| {
            let mut k = n.to_lowercase();
            if replace {
                k = k.replace(' ', "_");
            }
            (n.clone(), k)
        })
        .filter(|(_, k)| !RUBRIC_KEYS.contains(&k.as_str()))
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(Defect {
        cause: None,
        fields_only: false,
        kind: "rubric_logic_lookup".into(),
        nodes: missing.iter().map(|(n, _)| n.clone()).collect(),
        location: at.to_string(),
        detail: format!(
            "the rubric's per-persona logic is looked up with the lower-cased name ({}), but the rubric's keys are {}: that judge gets no rubric instructions",
            missing
                .iter()
                .map(|(n, k)| format!("\"{n}\" -> \"{k}\""))
                .collect::<Vec<_>>()
                .join(", "),
            RUBRIC_KEYS.join(", ")
        ),
    })
}
