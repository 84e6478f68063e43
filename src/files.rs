//! Writing output files: atomically (a temporary file in the same directory, synced, then
//! renamed over the target), readable like any document (0644, not the temporary file's 0600),
//! and never through a symbolic link: a relative path's directories must be directories (a
//! submission audited from inside may have committed `audit` as a link to anywhere).

use std::io::Write;
use std::path::{Component, Path};

/// Refuses a relative `path` whose existing directories (below the current directory) include
/// a symbolic link, or which is itself one: writing there would land wherever the link points.
/// An absolute path is taken as its author wrote it.
pub fn check_no_links(path: &Path) -> std::io::Result<()> {
    if path.is_absolute() {
        return Ok(());
    }
    no_links_below(Path::new(""), path)
}

/// [`check_no_links`] for `path` relative to `base`.
fn no_links_below(base: &Path, path: &Path) -> std::io::Result<()> {
    let mut at = base.to_path_buf();
    for part in path.components() {
        match part {
            Component::Normal(name) => at.push(name),
            Component::CurDir => continue,
            // `..` leaves the directory the path was meant for: only its own components count
            _ => {
                at.push(part.as_os_str());
                continue;
            }
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default();
                let shown = at.strip_prefix(base).unwrap_or(&at);
                return Err(std::io::Error::other(format!(
                    "{} is a symbolic link{target}",
                    shown.display()
                )));
            }
            Ok(_) => {}
            // the rest does not exist yet: it will be created as directories
            Err(_) => break,
        }
    }
    Ok(())
}

/// Writes `contents` to `path` atomically; creates the parent directory. Refuses to write
/// through a symbolic link ([`check_no_links`]).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    check_no_links(path)?;
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(contents)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    #[test]
    fn a_link_in_a_relative_path_is_never_written_through() {
        use std::path::Path;
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(dir.path().join("out/sub")).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("audit")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("out/link.md")).unwrap();
        let check = |p: &str| super::no_links_below(dir.path(), Path::new(p));
        let e = check("audit/report.md").unwrap_err().to_string();
        assert!(e.starts_with("audit is a symbolic link (to "), "{e}");
        assert!(check("./out/link.md").is_err(), "the file itself");
        assert!(
            check("out/sub/new/report.md").is_ok(),
            "directories to create"
        );
        assert!(check("out/report.md").is_ok());
        assert!(
            super::check_no_links(&dir.path().join("audit/x.md")).is_ok(),
            "absolute"
        );
    }

    #[test]
    fn outputs_are_replaced_whole_and_readable_by_others() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/grades.csv");
        super::write_atomic(&p, b"old").unwrap();
        super::write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644);
        }
    }
}
