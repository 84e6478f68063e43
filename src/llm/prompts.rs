//! The judges' and the vision inspector's prompts, read at run time so they can be edited
//! without a rebuild: `--prompts DIR`, else the copies compiled into the binary (never a
//! `./prompts` of the working directory, which may be the audited submission).

use crate::model::Judge;
use std::path::{Path, PathBuf};

/// The prompt files, by name.
pub const FILES: [&str; 5] = [
    "prosecutor.md",
    "defense.md",
    "techlead.md",
    "judge_common.md",
    "vision.md",
];

const EMBEDDED: [&str; 5] = [
    include_str!("../../prompts/prosecutor.md"),
    include_str!("../../prompts/defense.md"),
    include_str!("../../prompts/techlead.md"),
    include_str!("../../prompts/judge_common.md"),
    include_str!("../../prompts/vision.md"),
];

/// The loaded prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    pub prosecutor: String,
    pub defense: String,
    pub techlead: String,
    /// Shared by the three personas: the untrusted-data fence rules and the output contract.
    pub judge_common: String,
    pub vision: String,
    /// A directory, or `<embedded>`.
    pub source: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error(
        "prompt file {path} is missing: the prompts directory must contain {files}. Copy the \
         missing file from the auditor's prompts/ directory, or drop --prompts to use the \
         built-in prompts."
    )]
    Missing { path: PathBuf, files: String },
    #[error("cannot read prompt file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("prompt file {path} is empty: write the prompt, or delete the file's directory")]
    Empty { path: PathBuf },
    #[error("prompts directory {0} does not exist or is not a directory (check --prompts)")]
    NotADirectory(PathBuf),
}

impl Prompts {
    /// The prompts compiled into the binary.
    pub fn embedded() -> Prompts {
        let [prosecutor, defense, techlead, judge_common, vision] = EMBEDDED.map(String::from);
        Prompts {
            prosecutor,
            defense,
            techlead,
            judge_common,
            vision,
            source: "<embedded>".into(),
        }
    }

    /// `dir` given: every file must be there. Else the embedded copies.
    pub fn load(dir: Option<&Path>) -> Result<Prompts, PromptError> {
        match dir {
            Some(d) => Self::from_dir(d),
            None => Ok(Self::embedded()),
        }
    }

    /// Where the prompts come from and a digest of their text, for the report:
    /// `built into auditor (sha256 0123abcd4567)` or `/path/to/prompts (sha256 ...)`.
    pub fn describe(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for text in [
            &self.prosecutor,
            &self.defense,
            &self.techlead,
            &self.judge_common,
            &self.vision,
        ] {
            h.update(text.as_bytes());
            h.update([0]);
        }
        let digest = hex::encode(h.finalize());
        let source = match self.source.as_str() {
            "<embedded>" => "built into auditor",
            dir => dir,
        };
        format!("{source} (sha256 {})", &digest[..12])
    }

    fn from_dir(dir: &Path) -> Result<Prompts, PromptError> {
        if !dir.is_dir() {
            return Err(PromptError::NotADirectory(dir.to_path_buf()));
        }
        let mut texts = Vec::with_capacity(FILES.len());
        for f in FILES {
            let path = dir.join(f);
            if !path.is_file() {
                return Err(PromptError::Missing {
                    path,
                    files: FILES.join(", "),
                });
            }
            let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Read {
                path: path.clone(),
                source,
            })?;
            if text.trim().is_empty() {
                return Err(PromptError::Empty { path });
            }
            texts.push(text);
        }
        let mut it = texts.into_iter();
        let mut next = || it.next().unwrap_or_default();
        Ok(Prompts {
            prosecutor: next(),
            defense: next(),
            techlead: next(),
            judge_common: next(),
            vision: next(),
            source: dir.display().to_string(),
        })
    }

    /// The persona prompt of `judge`.
    pub fn persona(&self, judge: Judge) -> &str {
        match judge {
            Judge::Prosecutor => &self.prosecutor,
            Judge::Defense => &self.defense,
            Judge::TechLead => &self.techlead,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_personas_name_themselves() {
        let p = Prompts::embedded();
        assert!(p.prosecutor.starts_with("You are the Prosecutor"));
        assert!(p.defense.starts_with("You are the Defense"));
        assert!(p.techlead.starts_with("You are the TechLead"));
        assert!(p.judge_common.contains("UNTRUSTED"));
    }

    #[test]
    fn a_directory_overrides_and_a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for f in FILES {
            std::fs::write(dir.path().join(f), format!("custom {f}")).unwrap();
        }
        let p = Prompts::load(Some(dir.path())).unwrap();
        assert_eq!(p.persona(Judge::Defense), "custom defense.md");
        assert_eq!(p.source, dir.path().display().to_string());

        std::fs::remove_file(dir.path().join("techlead.md")).unwrap();
        let err = Prompts::load(Some(dir.path())).unwrap_err().to_string();
        assert!(
            err.contains("techlead.md") && err.contains("missing"),
            "{err}"
        );

        std::fs::write(dir.path().join("techlead.md"), "  \n").unwrap();
        let err = Prompts::load(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("empty"), "{err}");

        let err = Prompts::load(Some(&dir.path().join("nope")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a directory"), "{err}");
    }
}
