//! PDFium provisioning and binding.
//!
//! Order of lookup (first hit wins, an explicit override that fails is an error, never a silent
//! fallback):
//! 1. `PDFIUM_DYNAMIC_LIB_PATH`: a `libpdfium.so` file, or a directory that holds one;
//! 2. the cache: `$XDG_CACHE_HOME/auditor/pdfium-<wheel version>/libpdfium.so` (else
//!    `~/.cache/auditor/...`), verified by sha256;
//! 3. a fetch: `python3 -m pip download` of the `pypdfium2` wheel (never installed), the `.so`
//!    unzipped from it, its sha256 verified, then moved into the cache with an atomic rename (so
//!    several test processes provisioning at once are safe: each writes its own temporary file,
//!    the rename is atomic and the content identical).
//!
//! The library is bound once per process ([`OnceLock`]); PDFium is single-threaded, so every use
//! goes through [`with_pdfium`], which serialises callers with a global mutex.

use super::PdfError;
use pdfium_render::prelude::Pdfium;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The `pypdfium2` wheel that carries the PDFium build we verified (PDFium 159.0.8149).
pub const PYPDFIUM2_VERSION: &str = "5.15.2";
/// sha256 of `pypdfium2_raw/libpdfium.so` in that wheel.
pub const LIBPDFIUM_SHA256: &str =
    "c76dc0f7839644bfa7c3e3107a6068df714e339c861bb7d4519907b821d427f9";
/// The environment variable that overrides the lookup.
pub const ENV_OVERRIDE: &str = "PDFIUM_DYNAMIC_LIB_PATH";
const LIB_NAME: &str = "libpdfium.so";
const WHEEL_MEMBER: &str = "pypdfium2_raw/libpdfium.so";

/// Why PDFium is not available: each says what was tried and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    /// `PDFIUM_DYNAMIC_LIB_PATH` names no library file.
    #[error(
        "{ENV_OVERRIDE} is set to {given} but {candidate} is not a file. Fix: point {ENV_OVERRIDE} at a \
         libpdfium.so file or the directory holding it, or unset it to let auditor fetch PDFium \
         itself (needs python3 with pip)."
    )]
    BadOverride { given: String, candidate: String },
    /// Neither the cache nor a fetch gave a verified library.
    #[error(
        "PDFium (libpdfium.so) is needed to read PDF reports and could not be provisioned: {step}. \
         Tried: ${ENV_OVERRIDE} (not set), the cache {cache} (absent or invalid), and fetching the \
         pypdfium2=={PYPDFIUM2_VERSION} wheel with `python3 -m pip download`. \
         Fix: install Python 3 with pip (e.g. `apt-get install python3-pip`) and network access to PyPI, \
         or set {ENV_OVERRIDE} to a libpdfium.so file or to the directory that holds it."
    )]
    NotProvisioned {
        cache: String,
        #[source]
        step: Step,
    },
    /// The library was found but does not load.
    #[error(
        "cannot load PDFium from {path}: {source}. Fix: set {ENV_OVERRIDE} to a working libpdfium.so for \
         this platform, or delete the file to have it fetched again."
    )]
    NotLoaded {
        path: String,
        #[source]
        source: pdfium_render::prelude::PdfiumError,
    },
}

/// The step of provisioning that failed.
#[derive(Debug, thiserror::Error)]
pub enum Step {
    #[error("cannot create {path}: {source}")]
    CreateCache {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// Every interpreter tried, and how each failed.
    #[error("{}", .0.join("; "))]
    NoWheel(Vec<String>),
    #[error("cannot open {wheel}: {source}")]
    OpenWheel {
        wheel: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{wheel} is not a valid wheel: {source}")]
    NotAWheel {
        wheel: String,
        #[source]
        source: zip::result::ZipError,
    },
    #[error("{member} not found in {wheel}: {source}")]
    NoMember {
        member: String,
        wheel: String,
        #[source]
        source: zip::result::ZipError,
    },
    #[error("cannot unzip {member}: {source}")]
    Unzip {
        member: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{WHEEL_MEMBER} from {wheel} has sha256 {hash}, expected {LIBPDFIUM_SHA256}")]
    WrongHash { wheel: String, hash: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot install {path}: {source}")]
    Install {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Where to look for the library, and how to fetch it. Plain data so tests can point it anywhere.
#[derive(Debug, Clone)]
pub struct Provisioning {
    /// Value of `PDFIUM_DYNAMIC_LIB_PATH`, if set.
    pub override_path: Option<PathBuf>,
    /// Directory holding the verified `libpdfium.so`.
    pub cache_dir: PathBuf,
    /// Python interpreters to try for `-m pip download`, in order.
    pub pythons: Vec<String>,
}

impl Provisioning {
    /// The configuration from the environment.
    pub fn from_env() -> Self {
        let override_path = std::env::var_os(ENV_OVERRIDE)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .unwrap_or_else(std::env::temp_dir);
        Provisioning {
            override_path,
            cache_dir: base
                .join("auditor")
                .join(format!("pdfium-{PYPDFIUM2_VERSION}")),
            pythons: vec!["python3".into(), "python".into()],
        }
    }

    /// Finds or fetches the library and returns its path.
    pub fn locate(&self) -> Result<PathBuf, Unavailable> {
        if let Some(p) = &self.override_path {
            return resolve_override(p);
        }
        let cached = self.cache_dir.join(LIB_NAME);
        if cached.is_file() {
            match sha256_file(&cached) {
                Ok(h) if h == LIBPDFIUM_SHA256 => return Ok(cached),
                // A corrupt or foreign file in *our* cache: replace it below.
                _ => {
                    tracing::warn!(path = %cached.display(), "cached libpdfium.so fails its sha256 check; fetching it again");
                }
            }
        }
        self.fetch_into_cache()
    }

    fn fetch_into_cache(&self) -> Result<PathBuf, Unavailable> {
        self.fetch().map_err(|step| Unavailable::NotProvisioned {
            cache: self.cache_dir.join(LIB_NAME).display().to_string(),
            step,
        })
    }

    fn fetch(&self) -> Result<PathBuf, Step> {
        std::fs::create_dir_all(&self.cache_dir).map_err(|source| Step::CreateCache {
            path: self.cache_dir.display().to_string(),
            source,
        })?;
        let tmp = tempfile::TempDir::new_in(&self.cache_dir).map_err(Step::TempDir)?;
        let mut attempts = Vec::new();
        let mut wheel = None;
        for python in &self.pythons {
            let out = Command::new(python)
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary=:all:",
                    "--platform",
                    "manylinux_2_17_x86_64",
                    "--python-version",
                    "3.11",
                    "--disable-pip-version-check",
                    "--quiet",
                    &format!("pypdfium2=={PYPDFIUM2_VERSION}"),
                    "-d",
                ])
                .arg(tmp.path())
                .output();
            match out {
                Err(e) => attempts.push(format!("`{python}` could not be started ({e})")),
                Ok(o) if !o.status.success() => {
                    let err = String::from_utf8_lossy(&o.stderr);
                    let last = err.lines().last().unwrap_or("").trim();
                    attempts.push(format!(
                        "`{python} -m pip download` failed ({}): {last}",
                        o.status
                    ));
                }
                Ok(_) => {
                    wheel = find_wheel(tmp.path());
                    if wheel.is_some() {
                        break;
                    }
                    attempts.push(format!("`{python} -m pip download` produced no wheel"));
                }
            }
        }
        let Some(wheel) = wheel else {
            return Err(Step::NoWheel(attempts));
        };
        let bytes = extract_member(&wheel, WHEEL_MEMBER)?;
        let hash = hex::encode(Sha256::digest(&bytes));
        if hash != LIBPDFIUM_SHA256 {
            return Err(Step::WrongHash {
                wheel: wheel.display().to_string(),
                hash,
            });
        }
        let staged = tmp.path().join(LIB_NAME);
        std::fs::write(&staged, &bytes).map_err(|source| Step::Write {
            path: staged.display().to_string(),
            source,
        })?;
        let target = self.cache_dir.join(LIB_NAME);
        // Atomic on the same file system: concurrent provisioners each rename identical bytes.
        std::fs::rename(&staged, &target).map_err(|source| Step::Install {
            path: target.display().to_string(),
            source,
        })?;
        tracing::info!(path = %target.display(), "provisioned libpdfium.so from the pypdfium2 wheel");
        Ok(target)
    }
}

fn resolve_override(p: &Path) -> Result<PathBuf, Unavailable> {
    let candidate = if p.is_dir() {
        p.join(LIB_NAME)
    } else {
        p.to_path_buf()
    };
    if candidate.is_file() {
        Ok(candidate)
    } else {
        Err(Unavailable::BadOverride {
            given: p.display().to_string(),
            candidate: candidate.display().to_string(),
        })
    }
}

fn find_wheel(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
}

fn extract_member(wheel: &Path, member: &str) -> Result<Vec<u8>, Step> {
    let shown = || wheel.display().to_string();
    let file = std::fs::File::open(wheel).map_err(|source| Step::OpenWheel {
        wheel: shown(),
        source,
    })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|source| Step::NotAWheel {
        wheel: shown(),
        source,
    })?;
    let mut entry = zip.by_name(member).map_err(|source| Step::NoMember {
        member: member.to_string(),
        wheel: shown(),
        source,
    })?;
    let mut out = Vec::with_capacity(entry.size() as usize);
    entry.read_to_end(&mut out).map_err(|source| Step::Unzip {
        member: member.to_string(),
        source,
    })?;
    Ok(out)
}

fn sha256_file(p: &Path) -> std::io::Result<String> {
    Ok(hex::encode(Sha256::digest(std::fs::read(p)?)))
}

struct Bound {
    pdfium: Pdfium,
}

/// The bound library, or why there is none (the same error for every later call).
static PDFIUM: OnceLock<Result<Mutex<Bound>, Arc<Unavailable>>> = OnceLock::new();

fn bind() -> Result<Mutex<Bound>, Arc<Unavailable>> {
    let path = Provisioning::from_env().locate()?;
    let bindings = Pdfium::bind_to_library(&path).map_err(|source| Unavailable::NotLoaded {
        path: path.display().to_string(),
        source,
    })?;
    tracing::debug!(path = %path.display(), "bound PDFium");
    Ok(Mutex::new(Bound {
        pdfium: Pdfium::new(bindings),
    }))
}

/// Runs `f` with the process-wide PDFium instance, serialised with every other PDFium user.
/// A panic inside `f` (a bug in a binding, a hostile PDF) is caught and reported as a corrupt
/// document instead of tearing the caller down.
pub fn with_pdfium<R>(f: impl FnOnce(&Pdfium) -> Result<R, PdfError>) -> Result<R, PdfError> {
    let bound = match PDFIUM.get_or_init(bind) {
        Ok(m) => m,
        Err(e) => return Err(PdfError::Unavailable(e.clone())),
    };
    let guard = bound.lock().unwrap_or_else(|p| p.into_inner());
    let pdfium = &guard.pdfium;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(pdfium))).unwrap_or_else(|_| {
        Err(PdfError::Corrupt(
            "PDFium failed while reading this document (internal panic caught); the PDF is probably \
             damaged. Re-export it from the original document."
                .into(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_to_missing_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = Provisioning {
            override_path: Some(dir.path().join("nope.so")),
            cache_dir: dir.path().join("cache"),
            pythons: vec![],
        };
        let e = p.locate().unwrap_err().to_string();
        assert!(e.contains(ENV_OVERRIDE), "{e}");
        assert!(e.contains("nope.so"), "{e}");
    }

    #[test]
    fn override_directory_resolves_to_the_library_inside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LIB_NAME), b"x").unwrap();
        let p = Provisioning {
            override_path: Some(dir.path().to_path_buf()),
            cache_dir: dir.path().join("cache"),
            pythons: vec![],
        };
        assert_eq!(p.locate().unwrap(), dir.path().join(LIB_NAME));
    }

    #[test]
    fn failed_fetch_names_what_was_tried_and_how_to_fix_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = Provisioning {
            override_path: None,
            cache_dir: dir.path().join("cache"),
            pythons: vec!["/nonexistent/python3-for-test".into()],
        };
        let e = p.locate().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/python3-for-test"), "{e}");
        assert!(e.contains("pip"), "{e}");
        assert!(e.contains(ENV_OVERRIDE), "{e}");
        assert!(!dir.path().join("cache").join(LIB_NAME).exists());
    }

    #[test]
    fn a_cached_file_with_a_wrong_hash_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join(LIB_NAME), b"not pdfium").unwrap();
        let p = Provisioning {
            override_path: None,
            cache_dir: cache,
            pythons: vec!["/nonexistent/python3-for-test".into()],
        };
        // falls through to the fetch, which fails here: the bad file is never returned
        assert!(p.locate().is_err());
    }
}
