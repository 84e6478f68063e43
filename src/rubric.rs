//! The rubric as runtime configuration: loading, validation, and routing of dimensions to the
//! detective that serves their `target_artifact`.
//!
//! The rubric is read at run time (`--rubric PATH`, else the copy compiled into the binary;
//! never a `rubric.json` of the working directory, which may be the audited submission), so
//! changing it never needs a rebuild. Validation errors name the file, the
//! dimension and the field.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// The rubric shipped inside the binary (our own `rubric.json`).
pub const EMBEDDED_RUBRIC: &str = include_str!("../rubric.json");

/// The artifact a dimension is judged on; decides which detective serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetArtifact {
    GithubRepo,
    PdfReport,
    PdfImages,
}

impl TargetArtifact {
    pub const KNOWN: [&'static str; 3] = ["github_repo", "pdf_report", "pdf_images"];

    fn parse(s: &str) -> Option<Self> {
        match s {
            "github_repo" => Some(TargetArtifact::GithubRepo),
            "pdf_report" => Some(TargetArtifact::PdfReport),
            "pdf_images" => Some(TargetArtifact::PdfImages),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TargetArtifact::GithubRepo => "github_repo",
            TargetArtifact::PdfReport => "pdf_report",
            TargetArtifact::PdfImages => "pdf_images",
        }
    }
}

/// Per-persona guidance (`judicial_logic`), present in v2-style rubrics and in ours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudicialLogic {
    pub prosecutor: String,
    pub defense: String,
    pub tech_lead: String,
}

impl JudicialLogic {
    pub fn for_judge(&self, judge: crate::model::Judge) -> &str {
        match judge {
            crate::model::Judge::Prosecutor => &self.prosecutor,
            crate::model::Judge::Defense => &self.defense,
            crate::model::Judge::TechLead => &self.tech_lead,
        }
    }
}

/// One rubric dimension (criterion).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimension {
    pub id: String,
    pub name: String,
    pub target_artifact: TargetArtifact,
    pub forensic_instruction: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judicial_logic: Option<JudicialLogic>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RubricMetadata {
    pub rubric_name: String,
    #[serde(default)]
    pub grading_target: String,
    pub version: String,
}

/// A validated rubric.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rubric {
    pub rubric_metadata: RubricMetadata,
    pub dimensions: Vec<Dimension>,
    /// Rule name → the rubric's wording of it.
    pub synthesis_rules: BTreeMap<String, String>,
}

/// Where a rubric was loaded from, and its content hash (for reproducibility and batch keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedRubric {
    pub rubric: Rubric,
    /// A path, or `<embedded>` for the copy compiled into the binary.
    pub source: String,
    /// sha256 of the rubric file's bytes, hex.
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RubricError {
    #[error("cannot read rubric {file}: {source}. Check the path given to --rubric.")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "rubric {file} is not valid JSON: {source} (line {}, column {}). Fix the syntax and run again.",
        .source.line(),
        .source.column()
    )]
    Syntax {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("rubric {file}: {location}: field `{field}` {problem}")]
    Invalid {
        file: String,
        /// `dimension 3 ("graph_orchestration")`, `rubric_metadata` or `top level`.
        location: String,
        field: String,
        problem: String,
    },
}

impl Rubric {
    /// Dimensions whose `target_artifact` is the given one (what each detective receives).
    pub fn dimensions_for(&self, target: TargetArtifact) -> Vec<Dimension> {
        self.dimensions
            .iter()
            .filter(|d| d.target_artifact == target)
            .cloned()
            .collect()
    }

    pub fn dimension(&self, id: &str) -> Option<&Dimension> {
        self.dimensions.iter().find(|d| d.id == id)
    }

    /// Parses and validates rubric JSON. `file` is used in error messages only. A UTF-8
    /// byte-order mark (Windows editors write one) is skipped.
    pub fn parse(text: &str, file: &str) -> Result<Rubric, RubricError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|source| RubricError::Syntax {
                file: file.to_string(),
                source,
            })?;
        validate(&value, file)
    }

    /// Loads the rubric: the given path, else the copy built into the binary. Never a file
    /// found in the working directory: run from inside a submission, its own `rubric.json`
    /// would grade it.
    pub fn load(path: Option<&Path>) -> Result<LoadedRubric, RubricError> {
        let (text, source) = match path {
            Some(p) => (read(p)?, p.display().to_string()),
            None => (EMBEDDED_RUBRIC.to_string(), "<embedded>".to_string()),
        };
        let rubric = Rubric::parse(&text, &source)?;
        Ok(LoadedRubric {
            rubric,
            source,
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
        })
    }
}

fn read(path: &Path) -> Result<String, RubricError> {
    std::fs::read_to_string(path).map_err(|source| RubricError::Read {
        file: path.display().to_string(),
        source,
    })
}

fn invalid(file: &str, location: &str, field: &str, problem: impl Into<String>) -> RubricError {
    RubricError::Invalid {
        file: file.to_string(),
        location: location.to_string(),
        field: field.to_string(),
        problem: problem.into(),
    }
}

fn required_str(
    obj: &serde_json::Map<String, serde_json::Value>,
    file: &str,
    location: &str,
    field: &str,
) -> Result<String, RubricError> {
    match obj.get(field) {
        None => Err(invalid(
            file,
            location,
            field,
            "is missing (it is required)",
        )),
        Some(serde_json::Value::String(s)) if s.trim().is_empty() => {
            Err(invalid(file, location, field, "is empty"))
        }
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(invalid(
            file,
            location,
            field,
            format!("must be a string, found {}", json_kind(other)),
        )),
    }
}

fn optional_str(
    obj: &serde_json::Map<String, serde_json::Value>,
    file: &str,
    location: &str,
    field: &str,
) -> Result<Option<String>, RubricError> {
    match obj.get(field) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(
            file,
            location,
            field,
            format!("must be a string, found {}", json_kind(other)),
        )),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn validate(value: &serde_json::Value, file: &str) -> Result<Rubric, RubricError> {
    let top = value
        .as_object()
        .ok_or_else(|| invalid(file, "top level", "(root)", "must be a JSON object"))?;

    let meta = match top.get("rubric_metadata") {
        Some(serde_json::Value::Object(m)) => m,
        Some(other) => {
            return Err(invalid(
                file,
                "top level",
                "rubric_metadata",
                format!("must be an object, found {}", json_kind(other)),
            ));
        }
        None => {
            return Err(invalid(
                file,
                "top level",
                "rubric_metadata",
                "is missing (it is required)",
            ));
        }
    };
    let rubric_metadata = RubricMetadata {
        rubric_name: required_str(meta, file, "rubric_metadata", "rubric_name")?,
        grading_target: optional_str(meta, file, "rubric_metadata", "grading_target")?
            .unwrap_or_default(),
        version: required_str(meta, file, "rubric_metadata", "version")?,
    };

    let dims = match top.get("dimensions") {
        Some(serde_json::Value::Array(a)) if a.is_empty() => {
            return Err(invalid(
                file,
                "top level",
                "dimensions",
                "is empty (at least one dimension is required)",
            ));
        }
        Some(serde_json::Value::Array(a)) => a,
        Some(other) => {
            return Err(invalid(
                file,
                "top level",
                "dimensions",
                format!("must be an array, found {}", json_kind(other)),
            ));
        }
        None => {
            return Err(invalid(
                file,
                "top level",
                "dimensions",
                "is missing (it is required)",
            ));
        }
    };

    let mut seen = HashSet::new();
    let mut dimensions = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let n = i + 1;
        let obj = d.as_object().ok_or_else(|| {
            invalid(
                file,
                &format!("dimension {n}"),
                "(dimension)",
                "must be an object",
            )
        })?;
        let id = required_str(obj, file, &format!("dimension {n}"), "id")?;
        let loc = format!("dimension {n} ({id:?})");
        if !seen.insert(id.clone()) {
            return Err(invalid(
                file,
                &loc,
                "id",
                format!("duplicates the id of an earlier dimension: ids must be unique ({id:?})"),
            ));
        }
        let name = required_str(obj, file, &loc, "name")?;
        let target_raw = required_str(obj, file, &loc, "target_artifact")?;
        let target_artifact = TargetArtifact::parse(&target_raw).ok_or_else(|| {
            invalid(
                file,
                &loc,
                "target_artifact",
                format!(
                    "has unknown value {target_raw:?}; expected one of {}",
                    TargetArtifact::KNOWN.join(", ")
                ),
            )
        })?;
        let forensic_instruction = required_str(obj, file, &loc, "forensic_instruction")?;
        let success_pattern = optional_str(obj, file, &loc, "success_pattern")?;
        let failure_pattern = optional_str(obj, file, &loc, "failure_pattern")?;
        let judicial_logic = match obj.get("judicial_logic") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Object(jl)) => {
                let jloc = format!("{loc} judicial_logic");
                Some(JudicialLogic {
                    prosecutor: required_str(jl, file, &jloc, "prosecutor")?,
                    defense: required_str(jl, file, &jloc, "defense")?,
                    tech_lead: required_str(jl, file, &jloc, "tech_lead")?,
                })
            }
            Some(other) => {
                return Err(invalid(
                    file,
                    &loc,
                    "judicial_logic",
                    format!(
                        "must be an object with prosecutor, defense and tech_lead, found {}",
                        json_kind(other)
                    ),
                ));
            }
        };
        dimensions.push(Dimension {
            id,
            name,
            target_artifact,
            forensic_instruction,
            success_pattern,
            failure_pattern,
            judicial_logic,
        });
    }

    let synthesis_rules = match top.get("synthesis_rules") {
        Some(serde_json::Value::Object(rules)) if rules.is_empty() => {
            return Err(invalid(
                file,
                "top level",
                "synthesis_rules",
                "is empty (name at least one rule, e.g. security_override)",
            ));
        }
        Some(serde_json::Value::Object(rules)) => {
            let mut out = BTreeMap::new();
            for (k, v) in rules {
                match v {
                    serde_json::Value::String(s) => {
                        out.insert(k.clone(), s.clone());
                    }
                    other => {
                        return Err(invalid(
                            file,
                            "synthesis_rules",
                            k,
                            format!("must be a string, found {}", json_kind(other)),
                        ));
                    }
                }
            }
            out
        }
        Some(other) => {
            return Err(invalid(
                file,
                "top level",
                "synthesis_rules",
                format!("must be an object, found {}", json_kind(other)),
            ));
        }
        None => {
            return Err(invalid(
                file,
                "top level",
                "synthesis_rules",
                "is missing (it is required)",
            ));
        }
    };

    Ok(Rubric {
        rubric_metadata,
        dimensions,
        synthesis_rules,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_rubric_is_valid_with_ten_dimensions_and_judicial_logic() {
        let r = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
        assert_eq!(r.dimensions.len(), 10);
        assert!(r.dimensions.iter().all(|d| d.judicial_logic.is_some()));
        for rule in [
            "security_override",
            "fact_supremacy",
            "functionality_weight",
            "dissent_requirement",
            "variance_re_evaluation",
        ] {
            assert!(r.synthesis_rules.contains_key(rule), "missing {rule}");
        }
    }

    fn with_dimension(dim: &str) -> String {
        format!(
            r#"{{"rubric_metadata":{{"rubric_name":"r","version":"1"}},
               "dimensions":[{dim}],
               "synthesis_rules":{{"security_override":"cap"}}}}"#
        )
    }

    fn err(text: &str) -> String {
        Rubric::parse(text, "my.json").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_file_dimension_and_field() {
        let e = err(&with_dimension(
            r#"{"id":"a","name":"A","target_artifact":"github_repo"}"#,
        ));
        assert!(e.contains("my.json"), "{e}");
        assert!(e.contains("dimension 1 (\"a\")"), "{e}");
        assert!(e.contains("forensic_instruction"), "{e}");
    }

    #[test]
    fn unknown_target_artifact_is_rejected() {
        let e = err(&with_dimension(
            r#"{"id":"a","name":"A","target_artifact":"slides","forensic_instruction":"x"}"#,
        ));
        assert!(e.contains("target_artifact") && e.contains("slides"), "{e}");
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let d =
            r#"{"id":"a","name":"A","target_artifact":"github_repo","forensic_instruction":"x"}"#;
        let e = err(&with_dimension(&format!("{d},{d}")));
        assert!(e.contains("dimension 2") && e.contains("unique"), "{e}");
    }

    #[test]
    fn incomplete_judicial_logic_is_rejected() {
        let e = err(&with_dimension(
            r#"{"id":"a","name":"A","target_artifact":"pdf_report","forensic_instruction":"x",
                "judicial_logic":{"prosecutor":"p","defense":"d"}}"#,
        ));
        assert!(e.contains("tech_lead"), "{e}");
    }

    #[test]
    fn missing_synthesis_rules_are_rejected() {
        let e = err(r#"{"rubric_metadata":{"rubric_name":"r","version":"1"},
                "dimensions":[{"id":"a","name":"A","target_artifact":"pdf_report","forensic_instruction":"x"}]}"#);
        assert!(
            e.contains("synthesis_rules") && e.contains("missing"),
            "{e}"
        );
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = err("{\n  \"rubric_metadata\": ,\n}");
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn dimensions_are_routed_by_target_artifact() {
        let r = Rubric::parse(EMBEDDED_RUBRIC, "rubric.json").unwrap();
        assert_eq!(r.dimensions_for(TargetArtifact::GithubRepo).len(), 7);
        assert_eq!(r.dimensions_for(TargetArtifact::PdfReport).len(), 2);
        assert_eq!(r.dimensions_for(TargetArtifact::PdfImages).len(), 1);
    }
}
