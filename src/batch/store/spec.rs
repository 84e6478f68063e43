//! Which store a batch uses (`--store`, `AUDITOR_STORE`, `--store-file`), opened; a connection
//! string is shown only redacted.

use super::postgres::{PgOptions, PgStore};
use super::sqlite::Store;
use super::{BatchStore, StoreError};
use std::path::{Path, PathBuf};

/// Which store a batch uses, from `--store` / `AUDITOR_STORE` / `--store-file`.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// `DIR/batch.sqlite` in the output directory.
    Sqlite,
    /// A PostgreSQL connection (parsed, the password included, for the driver; shown redacted).
    Postgres {
        config: Box<tokio_postgres::Config>,
        shown: String,
        /// The password was written in the connection string itself (visible wherever the
        /// string is: a command line, a shell history), not taken from `PGPASSWORD` or a file.
        inline_password: bool,
    },
}

impl std::fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// What the store's connection string looks like, for the errors (never the text itself).
const STORE_FORMS: &str = "\"sqlite\" (the default: DIR/batch.sqlite), a PostgreSQL URL \
postgres://USER@HOST:PORT/DATABASE, or libpq keywords \"host=HOST port=PORT user=USER dbname=DATABASE\" \
(the password from PGPASSWORD, a password file ~/.pgpass or PGPASSFILE, or the string read from --store-file)";

/// Why the store given cannot be used. No message repeats the connection string (it may hold a
/// password); `whence` says where it came from.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("--store-file {}: cannot read it: {source}", path.display())]
    StoreFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--store-file {}: the file holds no connection string: write one line, {STORE_FORMS}", path.display())]
    EmptyStoreFile { path: PathBuf },
    #[error(
        "{whence} must be {STORE_FORMS}; the value given is neither (not repeated here: it may hold a password)"
    )]
    Neither { whence: String },
    #[error(
        "{whence}: the PostgreSQL connection string cannot be parsed ({source}): write {STORE_FORMS}{hint}"
    )]
    Unparsable {
        whence: String,
        hint: &'static str,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error(
        "{whence}: the PostgreSQL URL cannot be parsed: write it as postgres://USER@HOST:PORT/DATABASE \
(percent-encode special characters)"
    )]
    Url { whence: String },
    #[error("password file {}: cannot read it: {source}", path.display())]
    PasswordFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl StoreSpec {
    /// Parses the `--store` text: empty or `sqlite` → SQLite; `postgres://` or `postgresql://`
    /// → PostgreSQL. The error never repeats the text (it may hold a password).
    pub fn parse(text: Option<&str>) -> Result<StoreSpec, SpecError> {
        Self::resolve(text, None, |_| None)
    }

    /// The store from `--store` / `AUDITOR_STORE` (`text`) or `--store-file` (`file`, which
    /// wins: a connection string kept out of the command line), with the password, when the
    /// string has none, from `PGPASSWORD` or the password file (`PGPASSFILE`, else
    /// `~/.pgpass`), as libpq does. `env` reads the environment. No error repeats the string.
    pub fn resolve(
        text: Option<&str>,
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<StoreSpec, SpecError> {
        let from_file;
        let (t, whence) = match file {
            Some(path) => {
                from_file =
                    std::fs::read_to_string(path).map_err(|source| SpecError::StoreFile {
                        path: path.to_path_buf(),
                        source,
                    })?;
                let line = from_file
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('#'))
                    .unwrap_or("");
                if line.is_empty() {
                    let path = path.to_path_buf();
                    return Err(SpecError::EmptyStoreFile { path });
                }
                (line, format!("--store-file {}", path.display()))
            }
            None => (
                text.map(str::trim).unwrap_or(""),
                "--store (or AUDITOR_STORE)".to_string(),
            ),
        };
        if t.is_empty() || t.eq_ignore_ascii_case("sqlite") {
            return Ok(StoreSpec::Sqlite);
        }
        let url_form = t.starts_with("postgres://") || t.starts_with("postgresql://");
        let keyword_form = !url_form && looks_like_keywords(t);
        if !url_form && !keyword_form {
            return Err(SpecError::Neither { whence });
        }
        let mut config: tokio_postgres::Config =
            t.parse()
                .map_err(|source: tokio_postgres::Error| SpecError::Unparsable {
                    whence: whence.clone(),
                    hint: if url_form {
                        "; percent-encode special characters in a URL"
                    } else {
                        "; quote a value holding spaces in single quotes"
                    },
                    source,
                })?;
        let shown = if url_form {
            redact_url(t).ok_or(SpecError::Url { whence })?
        } else {
            shown_keywords(&config)
        };
        let inline_password = config.get_password().is_some() && file.is_none();
        if config.get_password().is_none() {
            if let Some(pw) = env("PGPASSWORD").filter(|p| !p.is_empty()) {
                config.password(pw);
            } else if let Some(pw) = passfile_password(&config, &env)? {
                config.password(pw);
            }
        }
        Ok(StoreSpec::Postgres {
            config: Box::new(config),
            shown,
            inline_password,
        })
    }

    /// The store for messages: a path, or the connection with its password replaced.
    pub fn shown(&self) -> String {
        match self {
            StoreSpec::Sqlite => "sqlite (DIR/batch.sqlite)".into(),
            StoreSpec::Postgres { shown, .. } => shown.clone(),
        }
    }

    /// Whether the connection string itself carried the password.
    pub fn inline_password(&self) -> bool {
        matches!(
            self,
            StoreSpec::Postgres {
                inline_password: true,
                ..
            }
        )
    }

    /// Opens the store (`out` holds the SQLite file).
    pub fn open(&self, out: &Path) -> Result<Box<dyn BatchStore>, StoreError> {
        match self {
            StoreSpec::Sqlite => Ok(Box::new(Store::open_in(out)?)),
            StoreSpec::Postgres { config, shown, .. } => Ok(Box::new(PgStore::connect(
                config,
                shown,
                PgOptions::from_env().map_err(|cause| StoreError::new(shown.clone(), cause))?,
            )?)),
        }
    }
}

/// Whether `t` reads as libpq `keyword=value` pairs (the first word is a keyword and `=`).
fn looks_like_keywords(t: &str) -> bool {
    let first = t.split_whitespace().next().unwrap_or("");
    match first.split_once('=') {
        Some((k, _)) => !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        None => false,
    }
}

/// A keyword/value connection for messages: host, port, user, database; never the password.
fn shown_keywords(c: &tokio_postgres::Config) -> String {
    let mut parts = Vec::new();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .collect();
    if !hosts.is_empty() {
        parts.push(format!("host={}", hosts.join(",")));
    }
    if !c.get_ports().is_empty() {
        let ports: Vec<String> = c.get_ports().iter().map(u16::to_string).collect();
        parts.push(format!("port={}", ports.join(",")));
    }
    if let Some(u) = c.get_user() {
        parts.push(format!("user={u}"));
    }
    if let Some(d) = c.get_dbname() {
        parts.push(format!("dbname={d}"));
    }
    if c.get_password().is_some() {
        parts.push("password=***".into());
    }
    parts.join(" ")
}

/// The password for `c` from the password file, as libpq reads it: `PGPASSFILE`, else
/// `~/.pgpass`; lines `host:port:database:user:password` (`*` matches anything, `\:` and `\\`
/// escape); the first line that matches wins. A file readable by group or others is ignored,
/// with a warning, as libpq does. `Ok(None)`: no file, or no line matches.
fn passfile_password(
    c: &tokio_postgres::Config,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, SpecError> {
    let path = match env("PGPASSFILE").filter(|p| !p.is_empty()) {
        Some(p) => std::path::PathBuf::from(p),
        None => match env("HOME").filter(|h| !h.is_empty()) {
            Some(h) => Path::new(&h).join(".pgpass"),
            None => return Ok(None),
        },
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(
            file = %path.display(),
            "the password file is readable by group or others: ignored (chmod 600 it), as libpq does"
        );
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|source| SpecError::PasswordFile {
        path: path.clone(),
        source,
    })?;
    let host = match c.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = c.get_user().unwrap_or("").to_string();
    let db = c
        .get_dbname()
        .map(String::from)
        .unwrap_or_else(|| user.clone());
    let want = [host.as_str(), port.as_str(), db.as_str(), user.as_str()];
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_passfile_line(line);
        if fields.len() != 5 {
            continue;
        }
        let matches = fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w || (w.starts_with('/') && f == "localhost"));
        if matches {
            return Ok(Some(fields[4].clone()));
        }
    }
    Ok(None)
}

/// One password-file line split on unescaped `:` (`\:` and `\\` unescaped).
fn split_passfile_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                if let (Some(next), Some(f)) = (chars.next(), fields.last_mut()) {
                    f.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => {
                if let Some(f) = fields.last_mut() {
                    f.push(ch);
                }
            }
        }
    }
    fields
}

/// The URL with its password (and any `password=` query parameter) replaced by `***`.
pub fn redact_url(text: &str) -> Option<String> {
    let mut u = url::Url::parse(text).ok()?;
    if u.password().is_some() {
        u.set_password(Some("***")).ok()?;
    }
    if u.query().is_some() {
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| {
                let v = if k.eq_ignore_ascii_case("password") {
                    "***".to_string()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        u.query_pairs_mut().clear().extend_pairs(pairs);
    }
    Some(u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_passwords_never_show() {
        assert_eq!(StoreSpec::parse(None).unwrap(), StoreSpec::Sqlite);
        assert_eq!(
            StoreSpec::parse(Some(" sqlite ")).unwrap(),
            StoreSpec::Sqlite
        );
        let s = StoreSpec::parse(Some(
            "postgres://grader:s3cr%40t@db.example:5433/cohort?password=other&application_name=x",
        ))
        .unwrap();
        let shown = s.shown();
        assert!(!shown.contains("s3cr"), "{shown}");
        assert!(!shown.contains("other"), "{shown}");
        assert!(
            shown.contains("grader:***@db.example:5433/cohort"),
            "{shown}"
        );
        assert!(shown.contains("application_name=x"), "{shown}");
        assert!(!format!("{s:?}").contains("s3cr"));
        let e = StoreSpec::parse(Some("mysql://u:topsecret@h/d")).unwrap_err();
        assert!(!e.to_string().contains("topsecret"), "{e}");
        assert!(e.to_string().contains("postgres://"), "{e}");
        assert!(s.inline_password());
    }

    fn password(s: &StoreSpec) -> Option<String> {
        match s {
            StoreSpec::Postgres { config, .. } => config
                .get_password()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            StoreSpec::Sqlite => None,
        }
    }

    #[test]
    fn libpq_keywords_are_accepted_and_their_password_never_shows() {
        let s = StoreSpec::parse(Some(
            "host=db.example port=5433 user=grader password='s3 cret' dbname=cohort",
        ))
        .unwrap();
        let shown = s.shown();
        assert_eq!(
            shown,
            "host=db.example port=5433 user=grader dbname=cohort password=***"
        );
        assert!(!format!("{s:?}").contains("s3"));
        assert_eq!(password(&s).as_deref(), Some("s3 cret"));
        // a keyword string that does not parse: the error never quotes it
        let e = StoreSpec::parse(Some("host=db password=topsecret port=notaport")).unwrap_err();
        assert!(!e.to_string().contains("topsecret"), "{e}");
        let e = StoreSpec::parse(Some("topsecret-host")).unwrap_err();
        assert!(!e.to_string().contains("topsecret"), "{e}");
        assert!(e.to_string().contains("host=HOST"), "{e}");
    }

    #[test]
    fn the_password_comes_from_pgpassword_or_the_password_file() {
        let env = |pairs: Vec<(&'static str, String)>| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
        };
        let s = StoreSpec::resolve(
            Some("host=h user=u dbname=d"),
            None,
            env(vec![("PGPASSWORD", "from-env".into())]),
        )
        .unwrap();
        assert_eq!(password(&s).as_deref(), Some("from-env"));
        assert!(!s.inline_password());

        let dir = tempfile::tempdir().unwrap();
        let pass = dir.path().join("pgpass");
        std::fs::write(
            &pass,
            "# comment\nother:5432:*:u:wrong\nh:5432:d:u:pa\\:ss\n*:*:*:*:fallback\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o600)).unwrap();
        let file_env = || env(vec![("PGPASSFILE", pass.display().to_string())]);
        let s = StoreSpec::resolve(Some("postgres://u@h/d"), None, file_env()).unwrap();
        assert_eq!(password(&s).as_deref(), Some("pa:ss"));
        let s = StoreSpec::resolve(Some("host=x user=y"), None, file_env()).unwrap();
        assert_eq!(password(&s).as_deref(), Some("fallback"));
        // a password file others can read is ignored, as libpq does
        std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o644)).unwrap();
        let s = StoreSpec::resolve(Some("postgres://u@h/d"), None, file_env()).unwrap();
        assert_eq!(password(&s), None);

        // --store-file: the string read from a file wins, and is not "inline"
        let store_file = dir.path().join("store");
        std::fs::write(
            &store_file,
            "\n# the cohort's database\npostgres://u:pw@h/d\n",
        )
        .unwrap();
        let s = StoreSpec::resolve(Some("sqlite"), Some(&store_file), |_| None).unwrap();
        assert_eq!(password(&s).as_deref(), Some("pw"));
        assert!(!s.inline_password());
        assert_eq!(s.shown(), "postgres://u:***@h/d");
    }
}
