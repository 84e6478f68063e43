//! Fixtures for the review tests: a graded batch (real git repositories built with git2, the
//! real `auditor batch` binary with the offline judges), and `auditor serve` started on a free
//! port, its URL and token read from its first stdout line, killed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A commit message and a student name that would run script if a page took them as HTML.
pub const SCRIPT: &str = "<script>alert('pwned')</script>";

/// A student repository whose last commit message carries [`SCRIPT`].
pub fn repo_with_script_message(dir: &Path) -> String {
    crate::batch_support::student_repo(dir, "s-script");
    let repo = git2::Repository::open(dir).unwrap();
    std::fs::write(
        dir.join("src/nodes.py"),
        "def node(state):\n    return {}\n",
    )
    .unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("src/nodes.py")).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    let sig =
        git2::Signature::new("s", "s@example.org", &git2::Time::new(1_770_000_000, 0)).unwrap();
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        &format!("add nodes {SCRIPT}"),
        &tree,
        &[&head],
    )
    .unwrap()
    .to_string()
}

/// A cohort of `n` students (the first one's last commit message carries script), its
/// manifest with the student columns, graded by `auditor batch --judges offline` into
/// `root/out` (with `store`, when given). Returns the output directory.
pub fn graded_batch(root: &Path, n: usize, store: Option<&str>) -> PathBuf {
    let mut lines = vec!["id,repo,pdf,name,email,section".to_string()];
    for i in 0..n {
        let dir = root.join(format!("repos/s{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        if i == 0 {
            repo_with_script_message(&dir);
        } else {
            crate::batch_support::student_repo(&dir, &format!("s{i}"));
        }
        let name = if i == 0 {
            format!("\"Student {SCRIPT}\"")
        } else {
            format!("\"Doe, Student {i}\"")
        };
        lines.push(format!(
            "s{i},repos/s{i},none,{name},s{i}@example.org,{}",
            if i % 2 == 0 { "A" } else { "B" }
        ));
    }
    let manifest = root.join("cohort.csv");
    std::fs::write(&manifest, lines.join("\n") + "\n").unwrap();
    let out = root.join("out");
    batch(root, &manifest, &out, store, &[]);
    out
}

/// Runs `auditor batch` with the offline judges; asserts it graded (exit 0 or 3).
pub fn batch(root: &Path, manifest: &Path, out: &Path, store: Option<&str>, extra: &[&str]) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_auditor"));
    c.current_dir(root)
        .arg("batch")
        .arg(manifest)
        .arg("--out")
        .arg(out)
        .args(["--judges", "offline", "--no-progress"])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AUDITOR_STORE")
        .stdin(Stdio::null());
    if let Some(s) = store {
        c.args(["--store", s]);
    }
    let o = c.output().expect("run auditor batch");
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "auditor batch: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `auditor ARGS…` (no store from the environment); returns (exit code, stdout, stderr).
pub fn auditor(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_auditor"))
        .args(args)
        .env_remove("AUDITOR_STORE")
        .stdin(Stdio::null())
        .output()
        .expect("run auditor");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `auditor serve DIR --bind 127.0.0.1:0`, running.
pub struct Serve {
    child: Child,
    /// The first stdout line: `http://127.0.0.1:PORT/?token=TOKEN`.
    pub url: String,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub token: String,
}

impl Serve {
    pub fn start(dir: &Path, store: Option<&str>) -> Serve {
        let mut c = Command::new(env!("CARGO_BIN_EXE_auditor"));
        c.arg("serve")
            .arg(dir)
            .args(["--bind", "127.0.0.1:0"])
            .env_remove("AUDITOR_STORE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(s) = store {
            c.args(["--store", s]);
        }
        let mut child = c.spawn().expect("start auditor serve");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        let (base, token) = url.split_once("/?token=").expect("a token in the URL");
        Serve {
            base: base.to_string(),
            token: token.to_string(),
            url,
            child,
        }
    }

    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client()
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    pub fn post_json(&self, path: &str, body: serde_json::Value) -> reqwest::RequestBuilder {
        self.client()
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
