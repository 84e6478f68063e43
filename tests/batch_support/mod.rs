//! Fixtures for the batch tests: student repositories built with git2 in temporary
//! directories (several dated commits), manifests, and a reader for the batch store.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Creates a small LangGraph-like student repository with three dated commits; returns the
/// HEAD commit.
pub fn student_repo(dir: &Path, name: &str) -> String {
    let repo = git2::Repository::init(dir).expect("init fixture repo");
    let files: [(&str, String); 3] = [
        (
            "src/state.py",
            format!("# {name}\nfrom typing import Annotated\nimport operator\n"),
        ),
        (
            "src/graph.py",
            "from langgraph.graph import StateGraph, START, END\nbuilder = StateGraph(dict)\n"
                .to_string(),
        ),
        ("README.md", format!("# {name}\n")),
    ];
    let mut parent: Option<git2::Oid> = None;
    for (i, (path, text)) in files.iter().enumerate() {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, text).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new(path)).unwrap();
        index.write().unwrap();
        let tree_id = index.write_tree().unwrap();
        let tree = repo.find_tree(tree_id).unwrap();
        let when = git2::Time::new(1_760_000_000 + (i as i64) * 3600, 0);
        let sig = git2::Signature::new(name, &format!("{name}@example.org"), &when).unwrap();
        let parents: Vec<git2::Commit> = parent
            .map(|p| vec![repo.find_commit(p).unwrap()])
            .unwrap_or_default();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        let oid = repo
            .commit(Some("HEAD"), &sig, &sig, &format!("step {i}"), &tree, &refs)
            .unwrap();
        parent = Some(oid);
    }
    parent.unwrap().to_string()
}

/// Adds one more commit to a fixture repository; returns it.
pub fn new_commit(dir: &Path) -> String {
    let repo = git2::Repository::open(dir).unwrap();
    std::fs::write(dir.join("src/extra.py"), "x = 1\n").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("src/extra.py")).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    let sig =
        git2::Signature::new("s", "s@example.org", &git2::Time::new(1_770_000_000, 0)).unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "more", &tree, &[&head])
        .unwrap()
        .to_string()
}

/// `n` student repositories under `root`, and a CSV manifest listing them (ids s0..).
pub fn cohort(root: &Path, n: usize) -> (PathBuf, Vec<String>) {
    let mut lines = vec!["id,repo,pdf".to_string()];
    let mut commits = Vec::new();
    for i in 0..n {
        let dir = root.join(format!("repos/s{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        commits.push(student_repo(&dir, &format!("s{i}")));
        lines.push(format!("s{i},repos/s{i},"));
    }
    let manifest = root.join("cohort.csv");
    std::fs::write(&manifest, lines.join("\n") + "\n").unwrap();
    (manifest, commits)
}

/// Reads the batch store of an output directory.
pub struct StoreView(pub rusqlite::Connection);

impl StoreView {
    pub fn open(out: &Path) -> Option<StoreView> {
        let p = out.join("batch.sqlite");
        if !p.exists() {
            return None;
        }
        let c =
            rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .ok()?;
        c.busy_timeout(std::time::Duration::from_secs(5)).ok()?;
        Some(StoreView(c))
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.0.query_row(sql, [], |r| r.get(0)).unwrap_or(-1)
    }

    pub fn jobs_with_status(&self, status: &str) -> i64 {
        self.0
            .query_row(
                "SELECT COUNT(*) FROM jobs WHERE status = ?1",
                [status],
                |r| r.get(0),
            )
            .unwrap_or(-1)
    }

    /// (total asked, distinct keys asked, keys asked more than once)
    pub fn asked(&self) -> (i64, i64, i64) {
        (
            self.count("SELECT COALESCE(SUM(asked),0) FROM requests"),
            self.count("SELECT COUNT(*) FROM requests"),
            self.count("SELECT COUNT(*) FROM requests WHERE asked > 1"),
        )
    }
}

/// grades.csv as (header, rows).
pub fn grades(out: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rd = csv::Reader::from_path(out.join("grades.csv")).expect("grades.csv");
    let header = rd.headers().unwrap().iter().map(String::from).collect();
    let rows = rd
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

pub fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// Number of criteria in the rubric built into the binary.
pub fn rubric_len() -> usize {
    auditor::rubric::Rubric::load(None)
        .expect("embedded rubric")
        .rubric
        .dimensions
        .len()
}
