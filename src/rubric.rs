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
    #[error(
        "rubric {file}: {source}: name each field once (remove the repeated one, or rename it)"
    )]
    Repeated {
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
        validate(text, file)
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

/// The rubric file as serde reads it: every field typed by what the rubric needs there, and
/// anything else found there told by its JSON kind, so that validation can say what was wrong,
/// where, and how to fix it (serde's own messages would not). Fields the rubric does not use are
/// ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawRubric {
    rubric_metadata: Object<RawMetadata>,
    dimensions: Array<Object<RawDimension>>,
    synthesis_rules: Object<Entries>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawMetadata {
    rubric_name: Text,
    grading_target: Text,
    version: Text,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawDimension {
    id: Text,
    name: Text,
    target_artifact: Text,
    forensic_instruction: Text,
    success_pattern: Text,
    failure_pattern: Text,
    judicial_logic: Object<RawJudicialLogic>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawJudicialLogic {
    prosecutor: Text,
    defense: Text,
    tech_lead: Text,
}

/// Where a string is expected: absent, a string, or the kind of JSON found instead.
#[derive(Debug, Default)]
enum Text {
    #[default]
    Absent,
    Str(String),
    Other(&'static str),
}

/// An object of strings, its entries in the file's order (a repeated key keeps its first place
/// and its last value, as `serde_json`'s map does).
#[derive(Debug, Default)]
struct Entries(Vec<(String, Text)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Entries, A::Error> {
                let mut out: Vec<(String, Text)> = Vec::new();
                let mut at: std::collections::HashMap<String, usize> = Default::default();
                while let Some((k, v)) = map.next_entry::<String, Text>()? {
                    match at.get(&k) {
                        Some(&i) => out[i].1 = v,
                        None => {
                            at.insert(k.clone(), out.len());
                            out.push((k, v));
                        }
                    }
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Where an object is expected: absent, the object read as `T`, or the kind found instead.
#[derive(Debug, Default)]
enum Object<T> {
    #[default]
    Absent,
    Is(T),
    Other(&'static str),
}

/// Where an array is expected: absent, its items read as `T`, or the kind found instead.
#[derive(Debug, Default)]
enum Array<T> {
    #[default]
    Absent,
    Is(Vec<T>),
    Other(&'static str),
}

/// The visitor methods of the JSON kinds a visitor does not expect: each gives the kind's name
/// (an array or an object found instead is read through and dropped).
macro_rules! other_kinds {
    ($out:expr, [$($kind:ident),*]) => {
        $(other_kinds!(@one $out, $kind);)*
    };
    (@one $out:expr, null) => {
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($out("null"))
        }
    };
    (@one $out:expr, bool) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($out("a boolean"))
        }
    };
    (@one $out:expr, number) => {
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($out("a number"))
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($out("a number"))
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($out("a number"))
        }
    };
    (@one $out:expr, string) => {
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($out("a string"))
        }
    };
    (@one $out:expr, array) => {
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            serde::de::Visitor::visit_seq(serde::de::IgnoredAny, seq)?;
            Ok($out("an array"))
        }
    };
    (@one $out:expr, object) => {
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            serde::de::Visitor::visit_map(serde::de::IgnoredAny, map)?;
            Ok($out("an object"))
        }
    };
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text, E> {
                Ok(Text::Str(s.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Text, E> {
                Ok(Text::Str(s))
            }
            other_kinds!(Text::Other, [null, bool, number, array, object]);
        }
        d.deserialize_any(V)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Object<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Object::Is)
            }
            other_kinds!(Object::Other, [null, bool, number, string, array]);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Array<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Array<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Array<T>, A::Error> {
                Vec::<T>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Array::Is)
            }
            other_kinds!(Array::Other, [null, bool, number, string, object]);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Where in the rubric file a value was read: the file and the location (`top level`,
/// `rubric_metadata`, `dimension 3 ("graph_orchestration")`, …).
struct Place<'a> {
    file: &'a str,
    location: &'a str,
}

impl Place<'_> {
    fn invalid(&self, field: &str, problem: impl Into<String>) -> RubricError {
        invalid(self.file, self.location, field, problem)
    }

    /// A string that must be given and not blank.
    fn required(&self, field: &str, value: Text) -> Result<String, RubricError> {
        match value {
            Text::Absent => Err(self.invalid(field, "is missing (it is required)")),
            Text::Str(s) if s.trim().is_empty() => Err(self.invalid(field, "is empty")),
            Text::Str(s) => Ok(s),
            Text::Other(kind) => {
                Err(self.invalid(field, format!("must be a string, found {kind}")))
            }
        }
    }

    /// A string that may be left out (or `null`).
    fn optional(&self, field: &str, value: Text) -> Result<Option<String>, RubricError> {
        match value {
            Text::Absent | Text::Other("null") => Ok(None),
            Text::Str(s) => Ok(Some(s)),
            Text::Other(kind) => {
                Err(self.invalid(field, format!("must be a string, found {kind}")))
            }
        }
    }
}

/// The rubric file read into the raw types (only a syntax error or a repeated field fails
/// here: the raw types take any JSON value), then checked.
fn validate(text: &str, file: &str) -> Result<Rubric, RubricError> {
    let raw: Object<RawRubric> = serde_json::from_str(text).map_err(|source| {
        let file = file.to_string();
        // The raw types take any value: the data errors left are a field given twice.
        match source.classify() {
            serde_json::error::Category::Data => RubricError::Repeated { file, source },
            _ => RubricError::Syntax { file, source },
        }
    })?;
    let Object::Is(raw) = raw else {
        return Err(invalid(
            file,
            "top level",
            "(root)",
            "must be a JSON object",
        ));
    };
    let top = Place {
        file,
        location: "top level",
    };
    Ok(Rubric {
        rubric_metadata: metadata(&top, raw.rubric_metadata)?,
        dimensions: dimensions(&top, raw.dimensions)?,
        synthesis_rules: synthesis_rules(&top, raw.synthesis_rules)?,
    })
}

fn metadata(top: &Place, raw: Object<RawMetadata>) -> Result<RubricMetadata, RubricError> {
    let meta = match raw {
        Object::Is(m) => m,
        Object::Other(kind) => {
            return Err(top.invalid(
                "rubric_metadata",
                format!("must be an object, found {kind}"),
            ));
        }
        Object::Absent => {
            return Err(top.invalid("rubric_metadata", "is missing (it is required)"));
        }
    };
    let at = Place {
        file: top.file,
        location: "rubric_metadata",
    };
    Ok(RubricMetadata {
        rubric_name: at.required("rubric_name", meta.rubric_name)?,
        grading_target: at
            .optional("grading_target", meta.grading_target)?
            .unwrap_or_default(),
        version: at.required("version", meta.version)?,
    })
}

fn dimensions(
    top: &Place,
    raw: Array<Object<RawDimension>>,
) -> Result<Vec<Dimension>, RubricError> {
    let dims = match raw {
        Array::Is(a) if a.is_empty() => {
            return Err(top.invalid(
                "dimensions",
                "is empty (at least one dimension is required)",
            ));
        }
        Array::Is(a) => a,
        Array::Other(kind) => {
            return Err(top.invalid("dimensions", format!("must be an array, found {kind}")));
        }
        Array::Absent => return Err(top.invalid("dimensions", "is missing (it is required)")),
    };
    let mut seen = HashSet::new();
    dims.into_iter()
        .enumerate()
        .map(|(i, d)| dimension(top.file, i + 1, d, &mut seen))
        .collect()
}

/// Dimension `n` (counted from 1); `seen` holds the ids of the dimensions before it.
fn dimension(
    file: &str,
    n: usize,
    raw: Object<RawDimension>,
    seen: &mut HashSet<String>,
) -> Result<Dimension, RubricError> {
    let numbered = format!("dimension {n}");
    let Object::Is(d) = raw else {
        return Err(invalid(file, &numbered, "(dimension)", "must be an object"));
    };
    let id = Place {
        file,
        location: &numbered,
    }
    .required("id", d.id)?;
    let loc = format!("dimension {n} ({id:?})");
    let at = Place {
        file,
        location: &loc,
    };
    if !seen.insert(id.clone()) {
        return Err(at.invalid(
            "id",
            format!("duplicates the id of an earlier dimension: ids must be unique ({id:?})"),
        ));
    }
    Ok(Dimension {
        name: at.required("name", d.name)?,
        target_artifact: target_artifact(&at, d.target_artifact)?,
        forensic_instruction: at.required("forensic_instruction", d.forensic_instruction)?,
        success_pattern: at.optional("success_pattern", d.success_pattern)?,
        failure_pattern: at.optional("failure_pattern", d.failure_pattern)?,
        judicial_logic: judicial_logic(&at, d.judicial_logic)?,
        id,
    })
}

fn target_artifact(at: &Place, raw: Text) -> Result<TargetArtifact, RubricError> {
    let raw = at.required("target_artifact", raw)?;
    TargetArtifact::parse(&raw).ok_or_else(|| {
        at.invalid(
            "target_artifact",
            format!(
                "has unknown value {raw:?}; expected one of {}",
                TargetArtifact::KNOWN.join(", ")
            ),
        )
    })
}

fn judicial_logic(
    at: &Place,
    raw: Object<RawJudicialLogic>,
) -> Result<Option<JudicialLogic>, RubricError> {
    match raw {
        Object::Absent | Object::Other("null") => Ok(None),
        Object::Is(jl) => {
            let loc = format!("{} judicial_logic", at.location);
            let jat = Place {
                file: at.file,
                location: &loc,
            };
            Ok(Some(JudicialLogic {
                prosecutor: jat.required("prosecutor", jl.prosecutor)?,
                defense: jat.required("defense", jl.defense)?,
                tech_lead: jat.required("tech_lead", jl.tech_lead)?,
            }))
        }
        Object::Other(kind) => Err(at.invalid(
            "judicial_logic",
            format!("must be an object with prosecutor, defense and tech_lead, found {kind}"),
        )),
    }
}

fn synthesis_rules(
    top: &Place,
    raw: Object<Entries>,
) -> Result<BTreeMap<String, String>, RubricError> {
    let rules = match raw {
        Object::Is(Entries(rules)) if rules.is_empty() => {
            return Err(top.invalid(
                "synthesis_rules",
                "is empty (name at least one rule, e.g. security_override)",
            ));
        }
        Object::Is(Entries(rules)) => rules,
        Object::Other(kind) => {
            return Err(top.invalid(
                "synthesis_rules",
                format!("must be an object, found {kind}"),
            ));
        }
        Object::Absent => {
            return Err(top.invalid("synthesis_rules", "is missing (it is required)"));
        }
    };
    let at = Place {
        file: top.file,
        location: "synthesis_rules",
    };
    rules
        .into_iter()
        .map(|(k, v)| match v {
            Text::Str(s) => Ok((k, s)),
            Text::Other(kind) => Err(at.invalid(&k, format!("must be a string, found {kind}"))),
            Text::Absent => Err(at.invalid(&k, "is missing (it is required)")),
        })
        .collect()
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
    fn a_value_of_the_wrong_kind_is_named_by_its_kind() {
        let e = err(&with_dimension(
            r#"{"id":"a","name":3,"target_artifact":"github_repo","forensic_instruction":"x"}"#,
        ));
        assert_eq!(
            e,
            "rubric my.json: dimension 1 (\"a\"): field `name` must be a string, found a number"
        );
        let e = err(r#"{"rubric_metadata":null}"#);
        assert_eq!(
            e,
            "rubric my.json: top level: field `rubric_metadata` must be an object, found null"
        );
        let e = err("[1, 2]");
        assert_eq!(
            e,
            "rubric my.json: top level: field `(root)` must be a JSON object"
        );
        let e = err(&with_dimension(r#"["a"]"#));
        assert_eq!(
            e,
            "rubric my.json: dimension 1: field `(dimension)` must be an object"
        );
        // a null optional field is absent; a null judicial_logic too
        let ok = with_dimension(
            r#"{"id":"a","name":"A","target_artifact":"pdf_report","forensic_instruction":"x",
                "success_pattern":null,"judicial_logic":null,"unused":[1,{"b":2}]}"#,
        );
        let r = Rubric::parse(&ok, "my.json").unwrap();
        assert_eq!(r.dimensions[0].success_pattern, None);
        assert_eq!(r.dimensions[0].judicial_logic, None);
    }

    #[test]
    fn the_first_bad_synthesis_rule_in_the_file_is_named() {
        let e = err(r#"{"rubric_metadata":{"rubric_name":"r","version":"1"},
                "dimensions":[{"id":"a","name":"A","target_artifact":"pdf_report","forensic_instruction":"x"}],
                "synthesis_rules":{"zeta":1,"alpha":true,"ok":"x"}}"#);
        assert_eq!(
            e,
            "rubric my.json: synthesis_rules: field `zeta` must be a string, found a number"
        );
    }

    #[test]
    fn a_field_given_twice_is_named_with_its_line() {
        let e = err(&with_dimension(
            r#"{"id":"a","id":"b","name":"A","target_artifact":"pdf_report","forensic_instruction":"x"}"#,
        ));
        assert!(
            e.starts_with("rubric my.json: duplicate field `id` at line 2")
                && e.ends_with("name each field once (remove the repeated one, or rename it)"),
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
