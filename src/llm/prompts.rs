//! Prompt files read at run time, so they can be edited without a rebuild: a directory given
//! by the caller (`--prompts DIR`), else the copies compiled into the binary (never a
//! `./prompts` of the working directory, which may be the audited submission). Which files make
//! a set, and what each one says, is the caller's business: this module only loads them.

use std::path::{Path, PathBuf};

/// A prompt file: its name in a prompts directory and the copy compiled into the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptFile {
    pub name: &'static str,
    pub embedded: &'static str,
}

/// A loaded set of prompt files, in the order they were listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    texts: Vec<(&'static str, String)>,
    /// A directory, or `<embedded>`.
    source: String,
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
    /// The copies of `files` compiled into the binary.
    pub fn embedded(files: &[PromptFile]) -> Prompts {
        Prompts {
            texts: files
                .iter()
                .map(|f| (f.name, f.embedded.to_string()))
                .collect(),
            source: "<embedded>".into(),
        }
    }

    /// `dir` given: every one of `files` must be there, not empty. Else the embedded copies.
    pub fn load(files: &[PromptFile], dir: Option<&Path>) -> Result<Prompts, PromptError> {
        match dir {
            Some(d) => Self::from_dir(files, d),
            None => Ok(Self::embedded(files)),
        }
    }

    /// The text of the file `name`; empty when the set has no such file.
    pub fn text(&self, name: &str) -> &str {
        self.texts
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, t)| t.as_str())
    }

    /// A directory, or `<embedded>`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Where the prompts come from and a digest of their text, for the report:
    /// `built into auditor (sha256 0123abcd4567)` or `/path/to/prompts (sha256 ...)`.
    pub fn describe(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for (_, text) in &self.texts {
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

    fn from_dir(files: &[PromptFile], dir: &Path) -> Result<Prompts, PromptError> {
        if !dir.is_dir() {
            return Err(PromptError::NotADirectory(dir.to_path_buf()));
        }
        let mut texts = Vec::with_capacity(files.len());
        for f in files {
            let path = dir.join(f.name);
            if !path.is_file() {
                return Err(PromptError::Missing {
                    path,
                    files: files.iter().map(|f| f.name).collect::<Vec<_>>().join(", "),
                });
            }
            let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Read {
                path: path.clone(),
                source,
            })?;
            if text.trim().is_empty() {
                return Err(PromptError::Empty { path });
            }
            texts.push((f.name, text));
        }
        Ok(Prompts {
            texts,
            source: dir.display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: [PromptFile; 2] = [
        PromptFile {
            name: "a.md",
            embedded: "built-in a",
        },
        PromptFile {
            name: "b.md",
            embedded: "built-in b",
        },
    ];

    #[test]
    fn embedded_copies_by_name() {
        let p = Prompts::load(&FILES, None).unwrap();
        assert_eq!(p.text("b.md"), "built-in b");
        assert_eq!(p.text("c.md"), "");
        assert!(p.describe().starts_with("built into auditor (sha256 "));
    }

    #[test]
    fn a_directory_overrides_and_a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for f in FILES {
            std::fs::write(dir.path().join(f.name), format!("custom {}", f.name)).unwrap();
        }
        let p = Prompts::load(&FILES, Some(dir.path())).unwrap();
        assert_eq!(p.text("a.md"), "custom a.md");
        assert_eq!(p.source(), dir.path().display().to_string());
        assert_ne!(p.describe(), Prompts::embedded(&FILES).describe());

        std::fs::remove_file(dir.path().join("b.md")).unwrap();
        let err = Prompts::load(&FILES, Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("b.md") && err.contains("missing") && err.contains("a.md, b.md"),
            "{err}"
        );

        std::fs::write(dir.path().join("b.md"), "  \n").unwrap();
        let err = Prompts::load(&FILES, Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("empty"), "{err}");

        let err = Prompts::load(&FILES, Some(&dir.path().join("nope")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a directory"), "{err}");
    }
}
