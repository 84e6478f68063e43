//! The prompt files of a run's LLM panel: the three personas' statutes, the rules they share
//! (the untrusted-data fence and the output contract) and the VisionInspector's (which the
//! panel's session carries to it), loaded together from `--prompts DIR` or the built-in copies.

use crate::llm::{PromptError, PromptFile, Prompts};
use crate::model::Judge;
use std::path::Path;

pub const PROSECUTOR: &str = "prosecutor.md";
pub const DEFENSE: &str = "defense.md";
pub const TECHLEAD: &str = "techlead.md";
/// Shared by the three personas.
pub const JUDGE_COMMON: &str = "judge_common.md";
/// The VisionInspector's (read by name in `vision`).
pub const VISION: &str = "vision.md";

/// The files of a prompts directory, in the order of the prompts' digest.
pub const FILES: [PromptFile; 5] = [
    PromptFile {
        name: PROSECUTOR,
        embedded: include_str!("../../prompts/prosecutor.md"),
    },
    PromptFile {
        name: DEFENSE,
        embedded: include_str!("../../prompts/defense.md"),
    },
    PromptFile {
        name: TECHLEAD,
        embedded: include_str!("../../prompts/techlead.md"),
    },
    PromptFile {
        name: JUDGE_COMMON,
        embedded: include_str!("../../prompts/judge_common.md"),
    },
    PromptFile {
        name: VISION,
        embedded: include_str!("../../prompts/vision.md"),
    },
];

/// The prompts compiled into the binary.
pub fn embedded() -> Prompts {
    Prompts::embedded(&FILES)
}

/// `dir` given: every file must be there. Else the embedded copies.
pub fn load(dir: Option<&Path>) -> Result<Prompts, PromptError> {
    Prompts::load(&FILES, dir)
}

/// The persona prompt of `judge`.
pub fn persona(prompts: &Prompts, judge: Judge) -> &str {
    prompts.text(match judge {
        Judge::Prosecutor => PROSECUTOR,
        Judge::Defense => DEFENSE,
        Judge::TechLead => TECHLEAD,
    })
}

/// The rules the three personas share.
pub fn common(prompts: &Prompts) -> &str {
    prompts.text(JUDGE_COMMON)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_personas_name_themselves() {
        let p = embedded();
        assert!(persona(&p, Judge::Prosecutor).starts_with("You are the Prosecutor"));
        assert!(persona(&p, Judge::Defense).starts_with("You are the Defense"));
        assert!(persona(&p, Judge::TechLead).starts_with("You are the TechLead"));
        assert!(common(&p).contains("UNTRUSTED"));
        assert!(!p.text(VISION).is_empty());
    }

    #[test]
    fn a_directory_overrides_every_persona() {
        let dir = tempfile::tempdir().unwrap();
        for f in FILES {
            std::fs::write(dir.path().join(f.name), format!("custom {}", f.name)).unwrap();
        }
        let p = load(Some(dir.path())).unwrap();
        assert_eq!(persona(&p, Judge::Defense), "custom defense.md");
        std::fs::remove_file(dir.path().join(TECHLEAD)).unwrap();
        let err = load(Some(dir.path())).unwrap_err().to_string();
        assert!(
            err.contains("techlead.md") && err.contains("missing"),
            "{err}"
        );
    }
}
