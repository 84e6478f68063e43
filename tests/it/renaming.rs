//! Names the student chose never decide a fact: a property test. A fixture submission (its
//! history and its PDF report, built by the test as a real git repository and a real PDF) is
//! audited offline as written and again with every identifier the student chose renamed
//! consistently, for several seeds of a renaming generator, over three fixtures (the sample
//! project, a weak submission, a submission whose roles only behaviour tells).
//!
//! What a renaming touches (the student's choices):
//! - functions, classes, methods (where defined and where called as `obj.method(...)`),
//!   variables, parameters, constants;
//! - module files and directories, with the imports that name them, and the report's paths;
//! - the code's names the report gives as code (`evidence_aggregator`, `state.opinions`, and
//!   `DocAnalyst`, the CamelCase of the node `doc_analyst`): the report names the same parts;
//! - graph node names (`add_node("x", ...)` and every string naming them) and the state's own
//!   keys (the fields of the graph's state class): the challenge does not fix them, and the
//!   detectors read a key by the type the state declares for it;
//! - comments and docstrings, replaced by neutral text of the same number of lines.
//!
//! Every fixture's list must hold every function, class and node it defines (checked).
//!
//! What it leaves (not the student's choice, or prose the rubric asks to read): the LangGraph,
//! LangChain, pydantic and Python APIs (`StateGraph`, `add_edge`, `with_structured_output`,
//! `operator.add`, `timeout=`, attribute names of API objects, keyword-argument names); the
//! fields of the challenge's models (`goal`, `found`, `score`, `judge`, ...); the persona
//! labels of the rubric (`"Prosecutor"`); files whose names the tooling fixes
//! (`pyproject.toml`); commit messages and the report's prose (read as what the student says).
//! A fixture therefore calls its own functions without keyword arguments.
//!
//! New names are drawn by a seeded generator (SplitMix64; a failure names its seed): the same
//! length as the old name (text cut at a width cuts at the same place), the same case style,
//! never a Python keyword or a word of the submission, many built from misleading stems
//! (`judge_..`, `router_..`, `error_..`, `chief_justice_..` given to a node that is none).
//!
//! Asserted: the offline audit's sidecar (every fact: id, found, location, statement, measure;
//! every criterion's final score, the three judges' scores, the rules applied, the remediation)
//! is the same once the new names are mapped back. Normalised on both sides: the order of
//! arrays and of lists inside statements (an order that follows the names is no fact), a word
//! cut by a width limit. Left out: code excerpts (`content`, they quote the rewritten
//! comments) and the commit ids (renamed files make new commits).
//!
//! `RENAME_SEEDS=n` runs n seeds per fixture (default 8).

use assert_cmd::Command;
use auditor::testkit::git::{FixtureCommit, build_repo, sample_langgraph_project};
use auditor::testkit::pdf::{self, PageSpec};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A submission: its commits (oldest first) and its report's pages.
struct Submission {
    commits: Vec<FixtureCommit>,
    pages: Vec<PageSpec>,
    /// Identifiers (and module / directory names, node names, state keys) the student chose.
    names: Vec<&'static str>,
}

/// SplitMix64: a seeded generator, so a failure names the seed that reproduces it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Stems for the new names: neutral ones, and words the detectors might be tempted to read
/// (a node renamed `judge_..` is not a judge because of it).
const STEMS: &[&str] = &[
    "alpha",
    "node",
    "step",
    "task",
    "worker",
    "helper",
    "util",
    "judge",
    "prosecutor",
    "defense",
    "tech_lead",
    "detective",
    "investigator",
    "doc_analyst",
    "vision",
    "aggregator",
    "chief_justice",
    "justice",
    "synthesis",
    "router",
    "error",
    "retry",
    "fallback",
    "missing",
    "security",
    "timeout",
    "validate_url",
    "parallel",
    "dissent",
    "variance",
    "persona",
    "prompt",
    "structured",
    "evidence",
    "opinion",
    "state",
    "graph",
    "tools",
];

/// A consistent renaming: old name -> new name, one-to-one.
struct Renaming {
    map: BTreeMap<String, String>,
    back: BTreeMap<String, String>,
    /// Methods the student defines in a class: renamed where they are called as attributes
    /// (`Bench().settle(state)`) too; any other attribute name belongs to an API.
    methods: BTreeSet<String>,
    /// The CamelCase a report writes a snake_case name in (`DocAnalyst` for the node
    /// `doc_analyst`), renamed to the new name's CamelCase.
    prose: BTreeMap<String, String>,
}

impl Renaming {
    /// Each new name has the length of the old one (a text cut at a width, a line of code
    /// quoted up to a limit, a report line wrapped at a margin, cut at the same place), keeps
    /// its case style (`CamelCase`, `UPPER_CASE`, `lower_case`, a leading `_`) and is neither a
    /// Python keyword nor any word of the submission.
    fn draw(names: &[&str], seed: u64, taken: &BTreeSet<String>) -> Renaming {
        const KEYWORDS: &[&str] = &[
            "and", "as", "def", "del", "for", "if", "in", "is", "not", "or", "try", "with", "None",
            "True", "False", "from", "pass", "elif", "else", "case", "type", "match", "self",
        ];
        let mut rng = Rng(seed);
        let mut map = BTreeMap::new();
        let mut used = BTreeSet::new();
        for n in names {
            let private = n.starts_with('_');
            let body = n.trim_start_matches('_');
            let len = body.chars().count();
            let upper =
                body.chars().all(|c| !c.is_lowercase()) && body.chars().any(char::is_uppercase);
            let camel = !upper && body.chars().next().is_some_and(char::is_uppercase);
            let mut tries = 0;
            loop {
                tries += 1;
                assert!(tries < 10_000, "no new name of length {len} for {n}");
                let letter = |rng: &mut Rng| (b'a' + rng.below(26) as u8) as char;
                let new: String = if len == 1 {
                    // a one-letter name becomes a letter that is no word of the prose
                    let c = ['q', 'z', 'j', 'k', 'w', 'y', 'h'][rng.below(7)];
                    c.to_string()
                } else if len <= 3 {
                    // a letter and digits: no English word
                    std::iter::once(letter(&mut rng))
                        .chain((1..len).map(|_| (b'0' + rng.below(10) as u8) as char))
                        .collect()
                } else {
                    let stem = STEMS[rng.below(STEMS.len())];
                    let keep = stem.len().min(len.saturating_sub(3));
                    let mut t: String = stem[..keep].trim_end_matches('_').to_string();
                    if !t.is_empty() {
                        t.push('_');
                    }
                    while t.len() < len {
                        t.push(letter(&mut rng));
                    }
                    t
                };
                let new = if upper {
                    new.to_uppercase()
                } else if camel {
                    // CamelCase: the underscores become capitals' places
                    let mut up = true;
                    new.chars()
                        .map(|c| {
                            // an inner capital, as CamelCase has (`PersonaXirols`)
                            let c = if c == '_' { 'X' } else { c };
                            let c = if up { c.to_ascii_uppercase() } else { c };
                            up = false;
                            c
                        })
                        .collect()
                } else {
                    new
                };
                let new = if private { format!("_{new}") } else { new };
                debug_assert_eq!(new.len(), n.len());
                if !taken.contains(&new)
                    && !KEYWORDS.contains(&new.as_str())
                    && !names.contains(&new.as_str())
                    && used.insert(new.clone())
                {
                    map.insert(n.to_string(), new);
                    break;
                }
            }
        }
        let mut back: BTreeMap<String, String> =
            map.iter().map(|(a, b)| (b.clone(), a.clone())).collect();
        let camel = |n: &str| -> String {
            n.split('_')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let mut c = p.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect()
        };
        let mut prose = BTreeMap::new();
        for (old, new) in &map {
            let body = old.trim_start_matches('_');
            if body.contains('_') && body.chars().all(|c| !c.is_uppercase()) {
                let (co, cn) = (camel(old), camel(new));
                if !map.contains_key(&co) && !back.contains_key(&cn) {
                    back.insert(cn.clone(), co.clone());
                    prose.insert(co, cn);
                }
            }
        }
        Renaming {
            map,
            back,
            methods: BTreeSet::new(),
            prose,
        }
    }

    fn path(&self, p: &str) -> String {
        let segs: Vec<&str> = p.split('/').collect();
        let last = segs.len() - 1;
        segs.iter()
            .enumerate()
            .map(|(i, s)| {
                if i < last {
                    return self.map.get(*s).cloned().unwrap_or_else(|| s.to_string());
                }
                match s.split_once('.') {
                    Some((stem, ext)) if ext == "py" => match self.map.get(stem) {
                        Some(n) => format!("{n}.{ext}"),
                        None => s.to_string(),
                    },
                    _ => s.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// A word of the report that names code as the code writes it (a snake_case, CamelCase,
    /// dotted or called name: `doc_analyst`, `DocAnalyst`, `state.opinions`): each of its names
    /// renamed. A plain word (`state`, `evidence`) is prose and stays.
    fn code_word(&self, core: &str) -> String {
        let inner_capital = core
            .chars()
            .zip(core.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        if !(core.contains(['_', '.', '(']) || inner_capital) {
            return core.to_string();
        }
        let mut out = String::with_capacity(core.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            let new = self
                .map
                .get(word.as_str())
                .or_else(|| self.prose.get(word.as_str()));
            out.push_str(new.map_or(word.as_str(), String::as_str));
            word.clear();
        };
        for c in core.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }

    /// Every identifier-like token of `text` that is a new name, mapped back.
    fn undo(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            out.push_str(self.back.get(word.as_str()).unwrap_or(word));
            word.clear();
        };
        for c in text.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

/// Renames the student's identifiers in one Python source: identifier tokens (not attribute
/// or keyword-argument names, which belong to the API called), strings whose whole text is a
/// renamed name (node names, state keys), comments and docstrings replaced by neutral text of
/// the same number of lines (every line number stays).
fn rename_python(src: &str, r: &Renaming) -> String {
    auditor::alloc::tree_sitter_to_mimalloc();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let tree = parser.parse(src, None).unwrap();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        let text = &src[n.byte_range()];
        match n.kind() {
            "identifier" => {
                let parent = n.parent();
                let api_name = parent.is_some_and(|p| {
                    (p.kind() == "attribute"
                        && p.child_by_field_name("attribute").map(|a| a.id()) == Some(n.id())
                        && !r.methods.contains(text))
                        || (p.kind() == "keyword_argument"
                            && p.child_by_field_name("name").map(|a| a.id()) == Some(n.id()))
                });
                if let Some(new) = r.map.get(text).filter(|_| !api_name) {
                    edits.push((n.start_byte(), n.end_byte(), new.clone()));
                }
                continue;
            }
            "comment" => {
                edits.push((n.start_byte(), n.end_byte(), "# noted".into()));
                continue;
            }
            "string" => {
                let parts: Vec<_> = (0..n.named_child_count())
                    .filter_map(|i| n.named_child(i as u32))
                    .collect();
                let contents: Vec<_> = parts
                    .iter()
                    .filter(|c| c.kind() == "string_content")
                    .collect();
                let interpolated = parts.iter().any(|c| c.kind() == "interpolation");
                if docstring(n) {
                    for c in &contents {
                        let t = &src[c.byte_range()];
                        let neutral: Vec<&str> = t.split('\n').map(|_| "text").collect();
                        edits.push((c.start_byte(), c.end_byte(), neutral.join("\n")));
                    }
                } else if !interpolated
                    && let [c] = contents.as_slice()
                    && let Some(new) = r.map.get(&src[c.byte_range()])
                {
                    edits.push((c.start_byte(), c.end_byte(), new.clone()));
                }
                continue;
            }
            _ => {}
        }
        for i in 0..n.child_count() {
            if let Some(c) = n.child(i) {
                stack.push(c);
            }
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = src.to_string();
    for (a, b, new) in edits {
        out.replace_range(a..b, &new);
    }
    out
}

/// A string that is the first statement of a module, class or function body.
fn docstring(n: tree_sitter::Node<'_>) -> bool {
    let Some(stmt) = n.parent().filter(|p| p.kind() == "expression_statement") else {
        return false;
    };
    let Some(body) = stmt.parent() else {
        return false;
    };
    let first = (0..body.named_child_count())
        .filter_map(|i| body.named_child(i as u32))
        .find(|c| c.kind() != "comment");
    first.map(|c| c.id()) == Some(stmt.id())
        && matches!(body.kind(), "module" | "block")
        && (body.kind() == "module"
            || body
                .parent()
                .is_some_and(|p| matches!(p.kind(), "function_definition" | "class_definition")))
}

fn rename_submission(s: &Submission, r: &Renaming) -> (Vec<FixtureCommit>, Vec<PageSpec>) {
    let commits = s
        .commits
        .iter()
        .map(|c| {
            let mut n = FixtureCommit::new(c.message.clone(), c.author_time);
            for (p, bytes) in &c.files {
                let np = r.path(p);
                let content = match std::str::from_utf8(bytes) {
                    Ok(t) if p.ends_with(".py") => rename_python(t, r).into_bytes(),
                    _ => bytes.clone(),
                };
                n = n.file(np, content);
            }
            for p in &c.deletes {
                n = n.delete(r.path(p));
            }
            n
        })
        .collect();
    // the report names the files by their new paths, and the directories of the paths it
    // claims by their new names (a file it invents keeps its own name); the code's names it
    // gives (`evidence_aggregator`, `DocAnalyst` for the node `doc_analyst`) by their new names
    let pages = s
        .pages
        .iter()
        .map(|p| {
            let mut p = p.clone();
            for l in &mut p.lines {
                *l = l
                    .split(' ')
                    .map(|w| {
                        let core = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
                        if core.contains('/') {
                            w.replace(core, &r.path(core))
                        } else if core.is_empty() {
                            w.to_string()
                        } else {
                            w.replace(core, &r.code_word(core))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
            }
            p
        })
        .collect();
    (commits, pages)
}

/// Every word-like token of the submission: new names never collide with one of them.
fn tokens(s: &Submission) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    let mut add = |t: &str| {
        for w in t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            all.insert(w.to_string());
        }
    };
    for c in &s.commits {
        for (p, b) in &c.files {
            add(p);
            add(&String::from_utf8_lossy(b));
        }
    }
    for p in &s.pages {
        for l in &p.lines {
            add(l);
        }
    }
    all
}

/// The offline audit of a submission: its JSON sidecar.
fn audit(commits: &[FixtureCommit], pages: &[PageSpec], dir: &Path) -> Value {
    let repo = dir.join("repo");
    build_repo(&repo, commits).unwrap();
    let pdf_path = dir.join("report.pdf");
    std::fs::write(&pdf_path, pdf::build_pdf(pages).unwrap()).unwrap();
    let out = dir.join("out/report.md");
    let o = Command::cargo_bin("auditor")
        .unwrap()
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AUDITOR_VISION_MODEL")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .arg("--repo")
        .arg(&repo)
        .arg("--pdf")
        .arg(&pdf_path)
        .arg("--output")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.with_extension("json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    // what differs between two runs whatever the names: where the copies live, the commits
    let r = git2::Repository::open(&repo).unwrap();
    let mut walk = r.revwalk().unwrap();
    walk.push_head().unwrap();
    let ids: Vec<String> = walk.map(|id| id.unwrap().to_string()).collect();
    let mut swaps: Vec<(String, String)> = vec![
        (repo.display().to_string(), "<repo>".into()),
        (pdf_path.display().to_string(), "<pdf>".into()),
        (dir.display().to_string(), "<dir>".into()),
    ];
    for (i, id) in ids.iter().enumerate() {
        swaps.push((id.clone(), format!("<commit{i}>")));
        swaps.push((id[..7].to_string(), format!("<c{i}>")));
    }
    strip(&mut v, &swaps);
    v
}

/// Drops what is not a fact (excerpts, timings, the run's metadata) and the run's own paths
/// and commit ids.
fn strip(v: &mut Value, swaps: &[(String, String)]) {
    match v {
        Value::Object(m) => {
            for k in ["content", "snippet", "metadata", "duration_ms", "excerpts"] {
                m.remove(k);
            }
            for x in m.values_mut() {
                strip(x, swaps);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| strip(x, swaps)),
        Value::String(s) => {
            for (a, b) in swaps {
                if s.contains(a.as_str()) {
                    *s = s.replace(a.as_str(), b);
                }
            }
        }
        _ => {}
    }
}

/// Maps the new names back everywhere (keys too) and sorts every array: an order that
/// follows the names (files sorted by path, nodes by name) is not a fact.
fn canonical(v: &Value, r: Option<&Renaming>) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (r.map_or_else(|| k.clone(), |r| r.undo(k)), canonical(x, r)))
                .collect(),
        ),
        Value::Array(a) => {
            let mut items: Vec<Value> = a.iter().map(|x| canonical(x, r)).collect();
            // facts by their id, anything else by its text
            items.sort_by_key(|x| match x.get("id") {
                Some(id) => format!("0{id}"),
                None => format!("1{x}"),
            });
            Value::Array(items)
        }
        Value::String(s) => {
            let s = r.map_or_else(|| s.clone(), |r| r.undo(s));
            Value::String(sorted_lists(&cut_words(&s)))
        }
        other => other.clone(),
    }
}

/// The differences between two JSON values (at most 40), each a path and both sides.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    if out.len() >= 40 {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differences(p, q, &format!("{at}.{k}"), out),
                    (p, q) => out.push(format!("{at}.{k}: {p:?} vs {q:?}")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{at}[{i}]"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{at}:\n  as written: {a}\n  renamed:    {b}")),
    }
}

/// A text cut at a width may cut inside a name (`src/nodes/justi…`): the cut word is left out
/// on both sides (its new name's prefix cannot be mapped back).
fn cut_words(s: &str) -> String {
    use std::sync::OnceLock;
    static CUT: OnceLock<regex::Regex> = OnceLock::new();
    CUT.get_or_init(|| regex::Regex::new(r"\w+…").unwrap())
        .replace_all(s, "…")
        .into_owned()
}

/// A list in a statement (`defense, prosecutor and tech_lead`, `a|b|c`, `x or to y`) as its
/// sorted items and its sorted separators: an order that follows the names (sorted by name)
/// is no fact, and the same items listed in another order keep their separators.
fn sorted_lists(s: &str) -> String {
    use std::sync::OnceLock;
    static LIST: OnceLock<regex::Regex> = OnceLock::new();
    static SEP: OnceLock<regex::Regex> = OnceLock::new();
    let sep =
        SEP.get_or_init(|| regex::Regex::new(r", and |, or |, | and | or to | or |\|").unwrap());
    let re = LIST.get_or_init(|| {
        regex::Regex::new(
            r"[\w./:`'#*-]+(?:(?:, and |, or |, | and | or to | or |\|)[\w./:`'#*-]+)+",
        )
        .unwrap()
    });
    re.replace_all(s, |c: &regex::Captures<'_>| {
        let text = &c[0];
        let mut items: Vec<&str> = sep.split(text).collect();
        let mut seps: Vec<&str> = sep.find_iter(text).map(|m| m.as_str()).collect();
        items.sort_unstable();
        seps.sort_unstable();
        format!("[{}|{}]", items.join(" "), seps.join(""))
    })
    .into_owned()
}

fn seeds() -> u64 {
    std::env::var("RENAME_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8)
}

/// The names a fixture's Python defines that its list must hold: every function, class and
/// graph node (`add_node("x", ...)`), so a fixture cannot leave one of them as written.
fn defined_names(s: &Submission) -> BTreeSet<String> {
    auditor::alloc::tree_sitter_to_mimalloc();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let mut out = BTreeSet::new();
    for c in &s.commits {
        for (p, bytes) in &c.files {
            if !p.ends_with(".py") {
                continue;
            }
            let src = std::str::from_utf8(bytes).unwrap();
            let tree = parser.parse(src, None).unwrap();
            let mut stack = vec![tree.root_node()];
            while let Some(n) = stack.pop() {
                match n.kind() {
                    "function_definition" | "class_definition" => {
                        if let Some(name) = n.child_by_field_name("name") {
                            out.insert(src[name.byte_range()].to_string());
                        }
                    }
                    "call" => {
                        let f = n
                            .child_by_field_name("function")
                            .map(|f| &src[f.byte_range()])
                            .unwrap_or("");
                        if f.ends_with(".add_node")
                            && let Some(args) = n.child_by_field_name("arguments")
                            && let Some(first) = args.named_child(0)
                            && first.kind() == "string"
                        {
                            let t = &src[first.byte_range()];
                            out.insert(t.trim_matches(|c| c == '"' || c == '\'').to_string());
                        }
                    }
                    _ => {}
                }
                for i in 0..n.child_count() {
                    if let Some(c) = n.child(i) {
                        stack.push(c);
                    }
                }
            }
        }
    }
    out.retain(|n| !n.starts_with("__"));
    out
}

/// Checks every seed's renaming against the audit as written, and returns that audit.
/// The methods the fixture's classes define (dunder methods left out).
fn defined_methods(s: &Submission) -> BTreeSet<String> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let mut out = BTreeSet::new();
    for c in &s.commits {
        for (p, bytes) in &c.files {
            if !p.ends_with(".py") {
                continue;
            }
            let src = std::str::from_utf8(bytes).unwrap();
            let tree = parser.parse(src, None).unwrap();
            let mut stack = vec![tree.root_node()];
            while let Some(n) = stack.pop() {
                if n.kind() == "function_definition"
                    && n.parent().and_then(|b| b.parent()).map(|c| c.kind())
                        == Some("class_definition")
                    && let Some(name) = n.child_by_field_name("name")
                {
                    out.insert(src[name.byte_range()].to_string());
                }
                for i in 0..n.child_count() {
                    if let Some(c) = n.child(i) {
                        stack.push(c);
                    }
                }
            }
        }
    }
    out.retain(|n| !n.starts_with("__"));
    out
}

fn check(name: &str, s: &Submission) -> Value {
    let missing: Vec<String> = defined_names(s)
        .into_iter()
        .filter(|n| !s.names.contains(&n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{name}: the fixture defines names its list does not rename: {missing:?}"
    );
    let methods = defined_methods(s);
    let dir = tempfile::tempdir().unwrap();
    let as_written = canonical(&audit(&s.commits, &s.pages, &dir.path().join("a")), None);
    let taken = tokens(s);
    for seed in 0..seeds() {
        let mut r = Renaming::draw(&s.names, seed * 7919 + name.len() as u64, &taken);
        r.methods = methods.clone();
        let (commits, pages) = rename_submission(s, &r);
        let sub = dir.path().join(format!("s{seed}"));
        let renamed = canonical(&audit(&commits, &pages, &sub), Some(&r));
        let mut diffs = Vec::new();
        differences(&as_written, &renamed, "", &mut diffs);
        assert!(
            diffs.is_empty(),
            "{name}, seed {seed}: a renaming changed the audit:\n{}\nrenaming: {:?}",
            diffs.join("\n"),
            r.map
        );
    }
    as_written
}

/// Whether the audit holds the fact `id` (`repo.graph.judges_fan_out`) with `found` true.
fn holds(audit: &Value, id: &str) -> bool {
    audit["evidence"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(Value::as_array)
        .flatten()
        .any(|e| e["id"] == id && e["found"] == true)
}

/// The renamer itself: identifiers, node names and module paths change; API names, attribute
/// names, keyword arguments, prose and line numbers do not.
#[test]
fn the_renamer_renames_only_the_students_names() {
    let src = "\"\"\"Judges run in parallel.\nTwo lines.\"\"\"\nfrom src.nodes.judges import prosecutor  # the judge\nfrom langgraph.graph import StateGraph\n\ndef build(state):\n    g = StateGraph(dict)\n    g.add_node(\"prosecutor\", prosecutor)\n    x = state[\"opinions\"]\n    return tmp.name, run(timeout=3), f\"prosecutor {x}\", \"Prosecutor\"\n";
    let names = [
        "src",
        "nodes",
        "judges",
        "prosecutor",
        "build",
        "state",
        "g",
        "opinions",
        "name",
        "timeout",
    ];
    let r = Renaming::draw(&names, 1, &BTreeSet::new());
    let out = rename_python(src, &r);
    let n = |k: &str| r.map[k].clone();
    assert_eq!(out.lines().count(), src.lines().count(), "{out}");
    assert!(out.starts_with("\"\"\"text\ntext\"\"\""), "{out}");
    assert!(
        out.contains(&format!(
            "from {}.{}.{} import {}  # noted",
            n("src"),
            n("nodes"),
            n("judges"),
            n("prosecutor")
        )),
        "{out}"
    );
    assert!(
        out.contains("from langgraph.graph import StateGraph"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{}.add_node(\"{}\", {})",
            n("g"),
            n("prosecutor"),
            n("prosecutor")
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("{}[\"{}\"]", n("state"), n("opinions"))),
        "{out}"
    );
    assert!(
        out.contains("tmp.name, run(timeout=3), f\"prosecutor {x}\", \"Prosecutor\""),
        "{out}"
    );
    assert_eq!(
        r.path("src/nodes/judges.py"),
        format!("{}/{}/{}.py", n("src"), n("nodes"), n("judges"))
    );
    assert_eq!(
        r.path("src/nodes/__init__.py"),
        format!("{}/{}/__init__.py", n("src"), n("nodes"))
    );
    assert_eq!(
        r.undo(&format!("`{}` at {}/x.py", n("prosecutor"), n("src"))),
        "`prosecutor` at src/x.py"
    );
}

/// The sample project: strong, parallel detectives and judges, typed state with reducers,
/// distinct persona prompts, structured output with retry, Chief Justice rules in code.
#[test]
fn renaming_the_sample_project_changes_no_fact_and_no_score() {
    check(
        "sample",
        &Submission {
            commits: sample_langgraph_project(),
            pages: pdf::sample_report(),
            names: vec![
                // modules and directories
                "src",
                "state",
                "tools",
                "repo_tools",
                "doc_tools",
                "nodes",
                "detectives",
                "graph",
                "judges",
                "justice",
                // classes
                "CloneError",
                "AgentState",
                "Evidence",
                "JudicialOpinion",
                // functions
                "clone_repo",
                "extract_git_history",
                "list_python_files",
                "load_chunks",
                "query",
                "repo_investigator",
                "doc_analyst",
                "vision_inspector",
                "evidence_aggregator",
                "route_after_aggregation",
                "handle_missing_evidence",
                "route_after_judges",
                "handle_judge_failure",
                "judges_done",
                "build_graph",
                "_judge",
                "prosecutor",
                "defense",
                "tech_lead",
                "_re_evaluate",
                "_final_score",
                "chief_justice",
                // variables, parameters and constants
                "repo_url",
                "tmp",
                "exc",
                "path",
                "result",
                "commits",
                "line",
                "sha",
                "date",
                "message",
                "pdf_path",
                "size",
                "reader",
                "text",
                "chunks",
                "terms",
                "lowered",
                "hits",
                "evidence",
                "missing",
                "DETECTIVES",
                "JUDGES",
                "builder",
                "PROSECUTOR_PROMPT",
                "DEFENSE_PROMPT",
                "TECH_LEAD_PROMPT",
                "MAX_ATTEMPTS",
                "llm",
                "persona",
                "system_prompt",
                "structured",
                "opinions",
                "dimension",
                "messages",
                "attempt",
                "opinion",
                "REPORT_PATH",
                "final",
                "scores",
                "evidences",
                "notes",
                "lines",
                "breakdown",
                "remediation",
                "cid",
                "report",
                "criterion_id",
                // state keys
                "rubric_dimensions",
                "errors",
                "final_report",
            ],
        },
    );
}

const WEAK_AGENT: &str = r####"import json
import os
from typing import TypedDict

from langchain_openai import ChatOpenAI
from langgraph.graph import END, StateGraph


class GraphState(TypedDict):
    repo: str
    findings: list
    verdicts: list
    report: str


model = ChatOpenAI(model="gpt-4o")
SYSTEM = "You are a judge. Score the submission from 1 to 5 and explain why in a few words."


def investigate(state: GraphState) -> dict:
    os.system("git clone " + state["repo"] + " /tmp/checkout")
    out = os.popen("git -C /tmp/checkout log --oneline").read()
    return {"findings": out.splitlines()}


def judge(state: GraphState) -> dict:
    reply = model.invoke(SYSTEM + "\n" + "\n".join(state["findings"]))
    try:
        data = json.loads(reply.content)
    except Exception:
        data = {"score": 3}
    return {"verdicts": [data]}


def summarize(state: GraphState) -> dict:
    scores = [v["score"] for v in state["verdicts"]]
    return {"report": f"average {sum(scores) / len(scores)}"}


workflow = StateGraph(GraphState)
workflow.add_node("investigate", investigate)
workflow.add_node("judge", judge)
workflow.add_node("summarize", summarize)
workflow.set_entry_point("investigate")
workflow.add_edge("investigate", "judge")
workflow.add_edge("judge", "summarize")
workflow.add_edge("summarize", END)
app = workflow.compile()
"####;

/// A weak submission: a linear graph, raw shell calls, untyped state, one shared prompt,
/// free text parsed with `json.loads`, an average for a verdict, delivered in one bulk commit.
#[test]
fn renaming_a_weak_submission_changes_no_fact_and_no_score() {
    check(
        "weak",
        &Submission {
            commits: vec![
                FixtureCommit::new("init", 1_770_022_800).file("README.md", "# auditor\n"),
                FixtureCommit::new("add everything", 1_770_026_400)
                    .file("agent/__init__.py", "")
                    .file("agent/main.py", WEAK_AGENT),
            ],
            pages: vec![PageSpec::text(&[
                "Interim report",
                "",
                "The graph in agent/main.py runs the investigate step, then a judge, then a summary.",
                "We plan to add parallel judges later.",
            ])],
            names: vec![
                "agent",
                "main",
                "GraphState",
                "repo",
                "findings",
                "verdicts",
                "report",
                "model",
                "SYSTEM",
                "investigate",
                "judge",
                "summarize",
                "state",
                "out",
                "reply",
                "data",
                "scores",
                "v",
                "workflow",
                "app",
            ],
        },
    );
}

const COURT_SCHEMA: &str = r####"import operator
from typing import Annotated, Dict, List, Literal, TypedDict

from pydantic import BaseModel, Field


class Finding(BaseModel):
    goal: str
    found: bool
    content: str = ""
    location: str
    rationale: str
    confidence: float = Field(ge=0, le=1)


class Verdict(BaseModel):
    judge: Literal["Prosecutor", "Defense", "TechLead"]
    criterion_id: str
    score: int = Field(ge=1, le=5)
    argument: str
    cited_evidence: List[str]


class CourtState(TypedDict):
    repo_url: str
    findings: Annotated[Dict[str, List[Finding]], operator.ior]
    verdicts: Annotated[List[Verdict], operator.add]
    errors: Annotated[List[str], operator.add]
    result: str
"####;

const COURT_TOOLS: &str = r####"import subprocess
import tempfile
from urllib.parse import urlparse


def fetch(repo_url: str) -> str:
    parsed = urlparse(repo_url)
    if parsed.scheme != "https":
        raise ValueError("only https")
    workdir = tempfile.mkdtemp()
    done = subprocess.run(
        ["git", "clone", repo_url, workdir], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return workdir
"####;

const COURT_NODES: &str = r####"from langchain_openai import ChatOpenAI

from src.core.schema import CourtState, Finding, Verdict
from src.agents.tools import fetch

client = ChatOpenAI(model="gpt-4o", max_retries=3)

STRICT = """You are the Prosecutor. Trust nothing: look for gaps, security flaws and lazy shortcuts,
and charge every missing requirement. Cite the evidence ids you rely on."""
KIND = """You are the Defense. Reward effort and intent, read the history for the struggle behind
the code, and give the benefit of the doubt where the spirit of the rubric is met."""
PRACTICAL = """You are the TechLead. Ask whether it actually works: is the graph sound, is the state
typed, would you merge it? Weigh maintainability over style."""


def safe(step, label, fallback):
    def run(state: CourtState) -> dict:
        try:
            return step(state)
        except Exception as exc:
            return {**fallback, "errors": [label + ": " + str(exc)]}
    return run


def scan_repo(state: CourtState) -> dict:
    where = fetch(state["repo_url"])
    item = Finding(goal="clone", found=True, location=where, rationale="cloned", confidence=0.9)
    return {"findings": {"repo": [item]}}


def scan_doc(state: CourtState) -> dict:
    item = Finding(goal="report", found=False, location="-", rationale="none", confidence=0.5)
    return {"findings": {"doc": [item]}}


def gather(state: CourtState) -> dict:
    return {"result": ""}


def deliberate(state: CourtState, persona: str, brief: str) -> dict:
    bound = client.with_structured_output(Verdict)
    shown = "\n".join(f.rationale for fs in state["findings"].values() for f in fs)
    reply = bound.invoke([("system", brief), ("user", shown)])
    return {"verdicts": [reply]}


def strict(state: CourtState) -> dict:
    return deliberate(state, "Prosecutor", STRICT)


def kind(state: CourtState) -> dict:
    return deliberate(state, "Defense", KIND)


def practical(state: CourtState) -> dict:
    return deliberate(state, "TechLead", PRACTICAL)
"####;

const COURT_BENCH: &str = r####"from src.core.schema import CourtState


class Bench:
    def settle(self, state: CourtState) -> dict:
        scores = [v.score for v in state["verdicts"]]
        final = round(sum(scores) / len(scores))
        if any("os.system" in f.content for fs in state["findings"].values() for f in fs):
            final = min(final, 3)
        note = ""
        if max(scores) - min(scores) > 2:
            note = f"dissent: scores spread from {min(scores)} to {max(scores)}"
        return {"result": f"{final} {note}"}


def sit(state: CourtState) -> dict:
    return Bench().settle(state)
"####;

const COURT_GRAPH: &str = r####"from langgraph.graph import END, START, StateGraph

from src.core.schema import CourtState
from src.agents.nodes import gather, kind, practical, safe, scan_doc, scan_repo, strict
from src.agents.bench import sit


def after_gather(state: CourtState):
    if state["errors"]:
        return "halt"
    return ["strict", "kind", "practical"]


def halt(state: CourtState) -> dict:
    return {"result": "stopped"}


def assemble():
    flow = StateGraph(CourtState)
    flow.add_node("scan_repo", safe(scan_repo, "repo", {"findings": {}}))
    flow.add_node("scan_doc", safe(scan_doc, "doc", {"findings": {}}))
    flow.add_node("gather", gather)
    flow.add_node("strict", safe(strict, "Prosecutor", {"verdicts": []}))
    flow.add_node("kind", safe(kind, "Defense", {"verdicts": []}))
    flow.add_node("practical", safe(practical, "TechLead", {"verdicts": []}))
    flow.add_node("halt", halt)
    flow.add_node("sit", sit)
    flow.add_edge(START, "scan_repo")
    flow.add_edge(START, "scan_doc")
    flow.add_edge(["scan_repo", "scan_doc"], "gather")
    flow.add_conditional_edges("gather", after_gather, ["strict", "kind", "practical", "halt"])
    flow.add_edge(["strict", "kind", "practical"], "sit")
    flow.add_edge("sit", END)
    flow.add_edge("halt", END)
    return flow.compile()
"####;

/// A submission whose roles can only be told by what the code does: detectives and judges
/// wrapped in place by a fallback wrapper (the judges bound to their persona by the label the
/// wrapper passes, and by the structured call they make), a Chief Justice class handed the
/// whole state, a failure exit beside the judges' fan-out, models and state keys named
/// nothing like the challenge's.
#[test]
fn renaming_a_submission_with_wrapped_nodes_changes_no_fact_and_no_score() {
    let audit = check(
        "court",
        &Submission {
            commits: vec![
                FixtureCommit::new("Set up the project", 1_770_022_800)
                    .file("pyproject.toml", "[project]\nname = \"court\"\n")
                    .file("src/__init__.py", "")
                    .file("src/core/__init__.py", "")
                    .file("src/core/schema.py", COURT_SCHEMA),
                FixtureCommit::new("Clone tool with a timeout", 1_770_030_000)
                    .file("src/agents/__init__.py", "")
                    .file("src/agents/tools.py", COURT_TOOLS),
                FixtureCommit::new("Detectives and judges", 1_770_040_000)
                    .file("src/agents/nodes.py", COURT_NODES)
                    .file("src/agents/bench.py", COURT_BENCH),
                FixtureCommit::new("Wire the graph", 1_770_050_000)
                    .file("src/flow.py", COURT_GRAPH),
            ],
            pages: vec![PageSpec::text(&[
                "Final report",
                "",
                "The graph in src/flow.py fans out to two detectives and, after they join, to three judges in parallel.",
                "The judges live in src/agents/nodes.py; the Chief Justice in src/agents/bench.py caps a score when a security finding exists.",
                "Fan-out and fan-in: the detectives run in parallel and join at one node before the judges.",
            ])],
            names: vec![
                // modules and directories
                "src",
                "core",
                "schema",
                "agents",
                "tools",
                "nodes",
                "bench",
                "flow",
                // classes
                "Finding",
                "Verdict",
                "CourtState",
                "Bench",
                // functions
                "fetch",
                "safe",
                "run",
                "scan_repo",
                "scan_doc",
                "gather",
                "deliberate",
                "strict",
                "kind",
                "practical",
                "settle",
                "sit",
                "after_gather",
                "halt",
                "assemble",
                // variables and parameters
                "repo_url",
                "parsed",
                "workdir",
                "done",
                "client",
                "STRICT",
                "KIND",
                "PRACTICAL",
                "step",
                "label",
                "fallback",
                "exc",
                "where",
                "item",
                "persona",
                "brief",
                "bound",
                "shown",
                "fs",
                "f",
                "reply",
                "scores",
                "final",
                "note",
                "v",
                // state keys
                "findings",
                "verdicts",
                "errors",
                "result",
            ],
        },
    );
    // what the fixture is for: roles read from what the nodes do are in the audit
    for id in [
        "repo.graph.detectives_fan_out",
        "repo.graph.judges_fan_out",
        "repo.justice.rule.security_override",
        "repo.justice.rule.dissent_requirement",
    ] {
        assert!(holds(&audit, id), "{id} not found as written:\n{audit:#}");
    }
}
