//! The Python files of a submission, read within [`Limits`]: from a commit of a repository
//! (a sandboxed bare clone, as the RepoInvestigator makes: nothing checked out, nothing run) or
//! from a directory (a working tree already cloned). Files under hidden directories, virtual
//! environments, `site-packages` and `node_modules` are not the student's code and are skipped;
//! symlinks are never followed.

use super::{Limits, SourceFile};
use crate::repo::clone;
use crate::repo::{AnalysisError, RepoError, RepoLimits, RepoSource};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("{path}: {source}")]
    Dir {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Directories whose Python files are someone else's code (or a cache).
fn vendored(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.iter().any(|p| {
        p.starts_with('.')
            || matches!(
                *p,
                "venv" | "env" | "site-packages" | "node_modules" | "__pycache__"
            )
    })
}

/// Keeps the files the limits allow, in path order; notes the others.
struct Budget<'a> {
    limits: &'a Limits,
    bytes: u64,
    files: usize,
    over_files: usize,
    over_total: usize,
    vendored: usize,
    notes: Vec<String>,
}

impl<'a> Budget<'a> {
    fn new(limits: &'a Limits) -> Self {
        Budget {
            limits,
            bytes: 0,
            files: 0,
            over_files: 0,
            over_total: 0,
            vendored: 0,
            notes: Vec::new(),
        }
    }

    /// Whether a Python file of `size` bytes at `path` is to be read.
    fn admit(&mut self, path: &str, size: u64) -> bool {
        if vendored(path) {
            self.vendored += 1;
            return false;
        }
        if size > self.limits.max_file_bytes {
            self.notes.push(format!(
                "{path}: {size} bytes, over the limit of {} bytes per file; left out",
                self.limits.max_file_bytes
            ));
            return false;
        }
        if self.files >= self.limits.max_files {
            self.over_files += 1;
            return false;
        }
        if self.bytes + size > self.limits.max_total_bytes {
            self.over_total += 1;
            return false;
        }
        self.files += 1;
        self.bytes += size;
        true
    }

    fn finish(mut self) -> Vec<String> {
        if self.vendored > 0 {
            self.notes.push(format!(
                "{} under hidden directories, virtual environments or package directories skipped (not the student's code)",
                crate::words::count(self.vendored, "Python file", "Python files")
            ));
        }
        if self.over_files > 0 {
            self.notes.push(format!(
                "{} left out past the limit of {}",
                crate::words::count(self.over_files, "Python file", "Python files"),
                crate::words::count(self.limits.max_files, "file", "files")
            ));
        }
        if self.over_total > 0 {
            self.notes.push(format!(
                "{} left out past the limit of {} bytes in all",
                crate::words::count(self.over_total, "Python file", "Python files"),
                self.limits.max_total_bytes
            ));
        }
        self.notes
    }
}

fn text_of(path: &str, bytes: Vec<u8>, notes: &mut Vec<String>) -> Option<String> {
    if clone::is_binary(&bytes) {
        notes.push(format!("{path}: binary content; left out"));
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// The Python files of `source` at `commit` (a full hash or any ref; `None`: HEAD), with the
/// commit read and notes. Blocking: clones into a temporary directory removed on return.
pub fn from_commit(
    source: &RepoSource,
    commit: Option<&str>,
    limits: &Limits,
) -> Result<(Vec<SourceFile>, String, Vec<String>), ReadError> {
    let repo_limits = RepoLimits::default();
    let parsed = clone::parse_source(source)?;
    let shown = parsed.display();
    let (_dir, repo) = clone::clone(&parsed, &repo_limits, None)?;
    let Some(c) = clone::resolve_commit(&repo, commit, &shown)? else {
        return Ok((
            Vec::new(),
            String::new(),
            vec![format!("{shown} has no commits")],
        ));
    };
    let id = c.id().to_string();
    let tree = c
        .tree()
        .map_err(|source| AnalysisError::TreeOf {
            commit: id.to_string(),
            source,
        })
        .map_err(RepoError::from)?;
    let mut notes = Vec::new();
    let files = clone::list_files(&repo, &tree, &repo_limits, &mut notes)?;
    notes.clear(); // submodule and symlink notes are the audit's business
    let mut budget = Budget::new(limits);
    let mut out = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.path.ends_with(".py") && !f.symlink)
    {
        if !budget.admit(&f.path, f.size) {
            continue;
        }
        match clone::read_blob(&repo, f, limits.max_file_bytes) {
            Ok(bytes) => {
                if let Some(text) = text_of(&f.path, bytes, &mut budget.notes) {
                    out.push(SourceFile {
                        path: f.path.clone(),
                        text,
                    });
                }
            }
            Err(note) => budget.notes.push(note.to_string()),
        }
    }
    notes.extend(budget.finish());
    Ok((out, id, notes))
}

/// Entries visited in a directory at most (a directory of a million empty files must not keep
/// the walk busy).
const MAX_DIR_ENTRIES: usize = 200_000;

/// The Python files under `root` (a working tree), in path order. Symlinks are not followed.
pub fn from_dir(root: &Path, limits: &Limits) -> Result<(Vec<SourceFile>, Vec<String>), ReadError> {
    let io = |p: &Path, e: std::io::Error| ReadError::Dir {
        path: p.display().to_string(),
        source: e,
    };
    let mut found: Vec<(String, std::path::PathBuf, u64)> = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    let mut visited = 0usize;
    let mut notes = Vec::new();
    while let Some((dir, rel)) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| io(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io(&dir, e))?;
            visited += 1;
            if visited > MAX_DIR_ENTRIES {
                notes.push(format!(
                    "more than {MAX_DIR_ENTRIES} entries under {}: the rest is not read",
                    root.display()
                ));
                stack.clear();
                break;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') {
                    stack.push((entry.path(), path));
                }
            } else if kind.is_file() && name.ends_with(".py") {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
                found.push((path, entry.path(), size));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut budget = Budget::new(limits);
    budget.notes = notes;
    let mut out = Vec::new();
    for (path, full, size) in found {
        if !budget.admit(&path, size) {
            continue;
        }
        let bytes = read_bounded(&full, limits.max_file_bytes).map_err(|e| io(&full, e))?;
        if let Some(text) = text_of(&path, bytes, &mut budget.notes) {
            out.push(SourceFile { path, text });
        }
    }
    Ok((out, budget.finish()))
}

/// At most `max` bytes of a file (it may have grown since it was listed).
fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(max).read_to_end(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_directories_are_recognised() {
        assert!(vendored(".venv/lib/x.py"));
        assert!(vendored("a/site-packages/b.py"));
        assert!(vendored("venv/x.py"));
        assert!(!vendored("src/venv.py"));
        assert!(!vendored("src/nodes/judges.py"));
    }

    #[test]
    fn a_directory_is_read_within_the_limits() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let full = d.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, t).unwrap();
        };
        w("src/a.py", "a = 1\n");
        w("src/b.py", "b = 2\n");
        w("big.py", &"x = 1\n".repeat(100));
        w(".venv/lib/c.py", "c = 3\n");
        w("notes.txt", "no\n");
        let limits = Limits {
            max_files: 1,
            max_file_bytes: 100,
            ..Limits::default()
        };
        let (files, notes) = from_dir(d.path(), &limits).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/a.py"]);
        let all = notes.join("\n");
        assert!(all.contains("big.py: 600 bytes"), "{all}");
        assert!(
            all.contains("1 Python file left out past the limit of 1 file"),
            "{all}"
        );
    }
}
