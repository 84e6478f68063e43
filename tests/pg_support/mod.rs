//! A throwaway PostgreSQL server for the tests, from Debian's `postgresql` package: `initdb`
//! into a temporary directory, `pg_ctl start` on a free 127.0.0.1 port (and a Unix socket in the
//! same directory), stopped and removed on drop. `psql` runs the tests' queries.
//!
//! initdb refuses to run as root: when the tests run as root (here and in CI) the server runs
//! as the `postgres` system user (created by the package) through `runuser`, in a directory
//! owned by that user.
//!
//! [`Pg::start`] returns `None`, after printing what is missing, only when the server binaries
//! are absent (`/usr/lib/postgresql/*/bin/initdb`): install the `postgresql` package.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The password in every test URL: the server trusts local connections and ignores it, the
/// tests check it is never printed.
pub const PASSWORD: &str = "pw-Secret-4711";

pub struct Pg {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
    as_postgres: bool,
}

/// How the server authenticates connections over TCP.
#[derive(Clone, Copy, PartialEq)]
pub enum Auth {
    /// Every local connection is trusted (the password is ignored).
    Trust,
    /// The `postgres` user must give [`PASSWORD`] (scram-sha-256) over TCP.
    Password,
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding initdb, pg_ctl and psql.
pub fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.split('.').next()?.parse().ok()?;
            let bin = e.path().join("bin");
            ["initdb", "pg_ctl", "psql"]
                .iter()
                .all(|b| bin.join(b).is_file())
                .then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

impl Pg {
    /// Starts a server, or prints why not and returns `None` when the binaries are absent.
    pub fn start() -> Option<Pg> {
        Self::start_with(Auth::Trust)
    }

    /// Starts a server that checks passwords over TCP ([`Auth::Password`]).
    pub fn start_with_password() -> Option<Pg> {
        Self::start_with(Auth::Password)
    }

    fn start_with(auth: Auth) -> Option<Pg> {
        let Some(bin) = bin_dir() else {
            eprintln!(
                "SKIPPED: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb, pg_ctl, psql): install the `postgresql` package to run this test"
            );
            return None;
        };
        // SAFETY: geteuid has no preconditions.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::Builder::new()
            .prefix("auditor-pg-")
            .tempdir()
            .expect("temp dir");
        if as_postgres {
            let st = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("run chown");
            assert!(
                st.success(),
                "chown to the postgres user failed (is the postgresql package's `postgres` user there?)"
            );
        }
        let pg = Pg {
            bin,
            dir,
            port: free_port(),
            as_postgres,
        };
        let data = pg.data();
        let mut initdb = pg.tool("initdb");
        initdb.arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
            "--locale=C",
        ]);
        match auth {
            Auth::Trust => {
                initdb.arg("--auth=trust");
            }
            Auth::Password => {
                let pwfile = pg.dir.path().join("pwfile");
                std::fs::write(&pwfile, format!("{PASSWORD}\n")).expect("write the pwfile");
                if as_postgres {
                    let _ = Command::new("chown")
                        .arg("postgres:postgres")
                        .arg(&pwfile)
                        .status();
                }
                initdb
                    .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
                    .arg(format!("--pwfile={}", pwfile.display()));
            }
        }
        let out = initdb.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50",
            pg.port,
            pg.dir.path().display()
        );
        let out = pg
            .tool("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-o", &opts, "-w", "-t", "60", "-l"])
            .arg(pg.dir.path().join("server.log"))
            .arg("start")
            .stdout(Stdio::piped())
            .output()
            .expect("run pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(pg.dir.path().join("server.log")).unwrap_or_default()
        );
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        };
        c.current_dir(self.dir.path()).stdin(Stdio::null());
        c
    }

    /// A connection URL (with [`PASSWORD`]) to a database of this server.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{db}",
            self.port
        )
    }

    /// A fresh database.
    pub fn create_db(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    /// Runs SQL with psql; returns the unaligned output (rows on lines, columns split by '|').
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db])
            .args(["-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// One number from a query.
    pub fn count(&self, db: &str, sql: &str) -> i64 {
        let s = self.psql(db, sql);
        s.parse()
            .unwrap_or_else(|_| panic!("{sql:?} gave {s:?}, not a number"))
    }

    /// One number from a query, or `None` when it fails (e.g. before the schema exists).
    pub fn try_count(&self, db: &str, sql: &str) -> Option<i64> {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db])
            .args(["-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// Restarts the server (`pg_ctl restart -m fast`: every connection is ended, the data
    /// stays), as an administrator or a failover would mid-run; returns once it accepts
    /// connections again.
    pub fn restart(&self) {
        let out = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "-w", "-t", "60", "-l"])
            .arg(self.dir.path().join("server.log"))
            .arg("restart")
            .stdout(Stdio::piped())
            .output()
            .expect("run pg_ctl restart");
        assert!(
            out.status.success(),
            "pg_ctl restart failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
