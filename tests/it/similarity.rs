//! Cohort code similarity through the real binary: a fixture cohort of git repositories (one
//! submission, a copy of it with every identifier renamed and the functions reordered, one
//! with only the shared template, two unrelated ones), compared by `auditor similarity` and by
//! `auditor batch`.

use crate::batch_support::StoreView;
use crate::pg_support::Pg;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const TEMPLATE: &str = include_str!("../fixtures/similarity/template_state.py");
const ORIGINAL: &str = include_str!("../fixtures/similarity/own_original.py");
const UNRELATED1: &str = include_str!("../fixtures/similarity/own_unrelated1.py");
const UNRELATED2: &str = include_str!("../fixtures/similarity/own_unrelated2.py");

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The same code with its top-level definitions in reverse order and every identifier
/// renamed (consistently), as someone hiding a copy would.
fn rename_and_reorder(src: &str) -> String {
    let mut header = String::new();
    let mut chunks: Vec<String> = Vec::new();
    for line in src.lines() {
        let top = line.starts_with("def ") || line.starts_with("class ");
        if top {
            chunks.push(String::new());
        }
        match chunks.last_mut() {
            Some(c) => {
                c.push_str(line);
                c.push('\n');
            }
            None => {
                header.push_str(line);
                header.push('\n');
            }
        }
    }
    chunks.reverse();
    let reordered = header + &chunks.join("\n");
    let ident = regex::Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*\b").unwrap();
    let mut names: HashMap<String, String> = HashMap::new();
    ident
        .replace_all(&reordered, |c: &regex::Captures| {
            let w = &c[0];
            if KEYWORDS.contains(&w) {
                return w.to_string();
            }
            let n = names.len();
            names
                .entry(w.to_string())
                .or_insert_with(|| format!("renamed_{n}"))
                .clone()
        })
        .into_owned()
}

/// A git repository at `dir` with the given files, in two commits.
fn git_repo(dir: &Path, files: &[(&str, &str)]) {
    let repo = git2::Repository::init(dir).unwrap();
    let mut parent: Option<git2::Oid> = None;
    for (i, part) in files.chunks(files.len().div_ceil(2).max(1)).enumerate() {
        let mut index = repo.index().unwrap();
        for (path, text) in part {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, text).unwrap();
            index.add_path(Path::new(path)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::new(
            "s",
            "s@example.org",
            &git2::Time::new(1_760_000_000 + i as i64 * 3600, 0),
        )
        .unwrap();
        let parents: Vec<git2::Commit> = parent
            .map(|p| vec![repo.find_commit(p).unwrap()])
            .unwrap_or_default();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        parent = Some(
            repo.commit(Some("HEAD"), &sig, &sig, &format!("step {i}"), &tree, &refs)
                .unwrap(),
        );
    }
}

struct Cohort {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    manifest: PathBuf,
    template: PathBuf,
}

fn cohort() -> Cohort {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let copy = rename_and_reorder(ORIGINAL);
    assert!(!copy.contains("clone_repository") && copy.contains("renamed_"));
    let subs: [(&str, Vec<(&str, &str)>); 5] = [
        (
            "orig",
            vec![
                ("src/state.py", TEMPLATE),
                ("src/nodes/detectives.py", ORIGINAL),
            ],
        ),
        (
            "copy",
            vec![("src/state.py", TEMPLATE), ("src/agent/core.py", &copy)],
        ),
        ("tplonly", vec![("src/state.py", TEMPLATE)]),
        (
            "other1",
            vec![
                ("src/state.py", TEMPLATE),
                ("src/nodes/judges.py", UNRELATED1),
            ],
        ),
        (
            "other2",
            vec![
                ("src/state.py", TEMPLATE),
                ("src/nodes/justice.py", UNRELATED2),
            ],
        ),
    ];
    let mut lines = vec!["id,repo,pdf".to_string()];
    for (id, files) in &subs {
        git_repo(&root.join("repos").join(id), files);
        lines.push(format!("{id},repos/{id},"));
    }
    let template = root.join("template");
    git_repo(&template, &[("src/state.py", TEMPLATE)]);
    let manifest = root.join("cohort.csv");
    std::fs::write(&manifest, lines.join("\n") + "\n").unwrap();
    Cohort {
        _tmp: tmp,
        root,
        manifest,
        template,
    }
}

fn auditor(root: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_auditor"));
    c.current_dir(root)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AUDITOR_STORE")
        .stdin(Stdio::null());
    c
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("similarity.json")).unwrap()).unwrap()
}

fn csv_rows(out: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(out.join("similarity.csv")).unwrap();
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "a",
            "b",
            "similarity",
            "shared_tokens",
            "longest_fragment_tokens"
        ]
    );
    r.records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// The copy is the top pair, far above every other pair; the template-only submission is
/// flagged with nobody; nothing calls it plagiarism.
fn check_cohort_result(out: &Path, stdout: &str) {
    let rows = csv_rows(out);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let mut pair = [rows[0][0].as_str(), rows[0][1].as_str()];
    pair.sort_unstable();
    assert_eq!(pair, ["copy", "orig"]);
    let top: f64 = rows[0][2].parse().unwrap();
    assert!(top >= 0.7, "{rows:?}");
    let shared: u64 = rows[0][3].parse().unwrap();
    let longest: u64 = rows[0][4].parse().unwrap();
    assert!(shared >= 500 && longest >= 100, "{rows:?}");
    let j = json(out);
    for s in j["submissions"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        if let Some(n) = s["nearest"].as_object()
            && !matches!(id, "orig" | "copy")
        {
            let other = n["similarity"].as_f64().unwrap();
            assert!(other < 0.25 && top - other > 0.5, "{id}: {s}");
        }
        if id == "tplonly" {
            assert_eq!(s["flagged_with"].as_array().unwrap().len(), 0, "{s}");
        }
    }
    let pair = &j["pairs"][0];
    let frag = &pair["fragments"][0];
    let (o, c) = if pair["a"] == "orig" {
        (&frag["a"], &frag["b"])
    } else {
        (&frag["b"], &frag["a"])
    };
    assert_eq!(o["path"], "src/nodes/detectives.py");
    assert_eq!(c["path"], "src/agent/core.py");
    assert!(o["line_from"].as_u64().unwrap() >= 1);
    let o_text = o["excerpt"].as_str().unwrap();
    let c_text = c["excerpt"].as_str().unwrap();
    assert!(c_text.contains("renamed_") && !o_text.contains("renamed_"));
    let html = std::fs::read_to_string(out.join("similarity.html")).unwrap();
    assert!(html.contains("src/agent/core.py:"), "{html}");
    for t in [
        html.as_str(),
        &std::fs::read_to_string(out.join("similarity.json")).unwrap(),
        stdout,
    ] {
        assert!(!t.to_lowercase().contains("plagiar"));
    }
}

#[test]
fn the_cli_finds_the_renamed_reordered_copy_and_leaves_the_template_out() {
    let c = cohort();
    let out = c.root.join("with-template");
    let o = auditor(&c.root)
        .arg("similarity")
        .arg(&c.manifest)
        .arg("--out")
        .arg(&out)
        .arg("--template")
        .arg(&c.template)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(stdout.contains("orig and copy"), "{stdout}");
    check_cohort_result(&out, &stdout);
    let j = json(&out);
    let tpl = j["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "tplonly")
        .unwrap()
        .clone();
    assert_eq!(tpl["own_fingerprints"], 0, "{tpl}");
    assert!(j["ignored_template"].as_u64().unwrap() > 10);

    // Without the template, the template's code is common to the cohort: the same result.
    let out = c.root.join("no-template");
    let o = auditor(&c.root)
        .arg("similarity")
        .arg(&c.manifest)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    check_cohort_result(&out, &String::from_utf8_lossy(&o.stdout));
    // fingerprints were stored in --out's store and are reused
    let o = auditor(&c.root)
        .arg("similarity")
        .arg(&c.manifest)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 fingerprinted now, 5 from the store"),
        "{}",
        text(&o)
    );

    // A directory of working trees: each subdirectory is a submission.
    let out = c.root.join("trees-out");
    let o = auditor(&c.root)
        .arg("similarity")
        .arg(c.root.join("repos"))
        .arg("--out")
        .arg(&out)
        .arg("--template")
        .arg(&c.template)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    check_cohort_result(&out, &String::from_utf8_lossy(&o.stdout));
}

#[test]
fn hostile_names_stay_text_and_bad_settings_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let trees = tmp.path().join("trees");
    let copy = rename_and_reorder(ORIGINAL);
    for (name, code) in [
        ("=SUM(1+1)", ORIGINAL),
        ("<b>x<", copy.as_str()),
        ("plain", UNRELATED2),
    ] {
        let d = trees.join(name).join("src");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("<img src=x>.py"), code).unwrap();
    }
    let out = tmp.path().join("out");
    let o = auditor(tmp.path())
        .arg("similarity")
        .arg(&trees)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join("similarity.csv")).unwrap();
    assert!(csv.contains("'=SUM(1+1)"), "{csv}");
    let html = std::fs::read_to_string(out.join("similarity.html")).unwrap();
    assert!(!html.contains("<b>x<") && html.contains("&lt;b&gt;x&lt;"));
    // escaped as every page the tool writes (handlebars: `=` too)
    assert!(!html.contains("<img") && html.contains("&lt;img src&#x3D;x&gt;.py:"));

    for bad in [
        vec!["--threshold", "1.5"],
        vec!["--max-share", "-1"],
        vec!["--template", "/definitely/not/here"],
    ] {
        let o = auditor(tmp.path())
            .arg("similarity")
            .arg(&trees)
            .arg("--out")
            .arg(&out)
            .args(&bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o));
    }
    // a plain directory needs --out
    let o = auditor(tmp.path())
        .arg("similarity")
        .arg(&trees)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

fn grades(out: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(out.join("grades.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|x| {
            h.iter()
                .cloned()
                .zip(x.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

fn batch(c: &Cohort, out: &Path, extra: &[&str]) -> Output {
    auditor(&c.root)
        .arg("batch")
        .arg(&c.manifest)
        .arg("--out")
        .arg(out)
        .args(["--judges", "offline", "--no-progress"])
        .arg("--template")
        .arg(&c.template)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_batch_flags_the_pair_for_review_changes_no_score_and_fingerprints_once() {
    let c = cohort();
    let out = c.root.join("batch");
    let o = batch(&c, &out, &[]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        stdout.contains("similarity.html (1 pair flagged"),
        "{stdout}"
    );
    check_cohort_result(&out, &stdout);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("<h2 id=\"similarity\">Code similarity</h2>"));
    assert!(index.contains("similarity.html#pair-1"));
    let rows = grades(&out);
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap().clone();
    assert!(row("orig")["flags"].contains("similar_code_with=copy"));
    assert!(row("copy")["flags"].contains("similar_code_with=orig"));
    assert_eq!(row("orig")["needs_human_review"], "true");
    for id in ["tplonly", "other1", "other2"] {
        assert!(!row(id)["flags"].contains("similar_code"), "{id}");
    }
    let view = StoreView::open(&out).unwrap();
    let stored: i64 = view
        .0
        .query_row("SELECT count(*) FROM similarity_fingerprints", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(stored, 5);

    // Resumed: nothing is fingerprinted again.
    let o = batch(&c, &out, &[]);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("fingerprinting"),
        "{}",
        text(&o)
    );
    check_cohort_result(&out, &String::from_utf8_lossy(&o.stdout));
    // A graded cohort's directory: the stored fingerprints.
    let o = auditor(&c.root)
        .arg("similarity")
        .arg(&out)
        .arg("--template")
        .arg(&c.template)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 fingerprinted now, 5 from the store"),
        "{}",
        text(&o)
    );

    // The same cohort without the step: the very same scores, no similarity flag.
    let plain = c.root.join("plain");
    let o = batch(&c, &plain, &["--no-similarity"]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o));
    assert!(!plain.join("similarity.csv").exists());
    let (with, without) = (grades(&out), grades(&plain));
    assert_eq!(with.len(), without.len());
    for (a, b) in with.iter().zip(&without) {
        for (k, v) in a {
            if !matches!(k.as_str(), "flags" | "needs_human_review") {
                assert_eq!(v, &b[k], "{k} of {}", a["id"]);
            }
        }
        assert!(!b["flags"].contains("similar_code"));
    }
}

#[test]
fn the_postgresql_store_keeps_fingerprints() {
    use auditor::batch::store::BatchStore;
    use auditor::batch::store::postgres::{PgOptions, PgStore};
    let Some(pg) = Pg::start() else { return };
    let url: tokio_postgres::Config = pg.create_db("fingerprints").parse().unwrap();
    let opts = PgOptions {
        lease: std::time::Duration::from_secs(60),
        worker: "w".into(),
        retry_for: std::time::Duration::from_secs(10),
    };
    {
        let s = PgStore::connect(&url, "pg", opts.clone()).unwrap();
        assert_eq!(s.fingerprints("a", "c1", "v1").unwrap(), None);
        s.save_fingerprints("a", "c1", "v1", b"one").unwrap();
        s.save_fingerprints("a", "c1", "v1", b"two\0").unwrap();
    }
    let s = PgStore::connect(&url, "pg", opts).unwrap();
    assert_eq!(
        s.fingerprints("a", "c1", "v1").unwrap().as_deref(),
        Some(&b"two\0"[..])
    );
    assert_eq!(s.fingerprints("a", "c2", "v1").unwrap(), None);
}
