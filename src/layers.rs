//! The layers of `ARCHITECTURE.md`, checked: every `crate::` path in the product code (tests
//! aside) points down the list, or sideways only where the table allows it; clap only in the
//! command layer; no circle of imports between the files of one folder.

use std::collections::BTreeMap;
use std::path::Path;

/// Top-level modules by layer, bottom up (the table in ARCHITECTURE.md).
const LAYERS: &[&[&str]] = &[
    &[
        "exit", "model", "files", "alloc", "words", "text", "console", "family",
    ],
    &["rubric", "tally", "telemetry", "interrupt"],
    &["llm", "repo", "pdf", "similarity"],
    &["judges", "vision", "report", "justice"],
    &["audit"],
    &["actors"],
    &["launch"],
    &[
        "batch",
        "calibrate",
        "review",
        "sample",
        "testkit",
        "flags",
        "cli",
    ],
];

/// Imports allowed within a layer (importer, imported).
const SIDEWAYS: &[(&str, &str)] = &[
    ("model", "words"),
    ("interrupt", "telemetry"),
    ("interrupt", "exit"),
    ("pdf", "repo"),
    ("similarity", "repo"),
    ("justice", "report"),
    // the remediation of a criterion no check fails says what the next level of its table asks
    ("justice", "judges"),
    ("calibrate", "batch"),
    ("cli", "batch"),
    ("cli", "flags"),
    ("batch", "flags"),
    ("review", "batch"),
    ("review", "flags"),
    ("cli", "review"),
    ("cli", "calibrate"),
    ("cli", "sample"),
    ("testkit", "sample"),
];

/// Imports the rank order would allow but the table forbids: shared data imports `model` only.
const NEVER: &[(&str, &str)] = &[
    ("rubric", "exit"),
    ("rubric", "files"),
    ("rubric", "alloc"),
    ("tally", "exit"),
    ("tally", "files"),
    ("tally", "alloc"),
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The product code of a file: without comments, and without a trailing `#[cfg(test)]` module.
fn product_code(text: &str) -> String {
    let end = text
        .find("#[cfg(test)]\nmod tests")
        .or_else(|| text.find("#[cfg(test)]\npub(crate) mod tests"))
        .unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `crate::x` paths of a piece of code (`use crate::{x, y::z}` too): the distinct `x`.
fn crate_imports(code: &str) -> Vec<String> {
    imports_after(code, "crate::")
}

/// The first name after each `prefix` (`prefix{x, y::z}` too): the distinct names.
fn imports_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out: Vec<String> = Vec::new();
    for (i, m) in code.match_indices(prefix) {
        let before = &code[..i];
        if before.ends_with('$')
            || before.ends_with("::")
            || before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[i + m.len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                // the first name of each top-level item of the group
                let mut depth = 0;
                let mut item_start = true;
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if item_start && !c.is_whitespace() => {
                            out.push(ident(&group[j..]));
                            item_start = false;
                        }
                        _ => {}
                    }
                }
            }
            None => out.push(ident(rest)),
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out.sort();
    out.dedup();
    out
}

/// Why `importer` may not import `imported`, if it may not.
fn violation(importer: &str, imported: &str) -> Option<String> {
    if importer == imported {
        return None;
    }
    let (Some(a), Some(b)) = (rank(importer), rank(imported)) else {
        return Some(format!(
            "{importer} -> {imported}: a module missing from the layer table"
        ));
    };
    if NEVER.contains(&(importer, imported)) {
        return Some(format!("{importer} -> {imported}: forbidden by the table"));
    }
    match a.cmp(&b) {
        std::cmp::Ordering::Greater => None,
        std::cmp::Ordering::Equal if SIDEWAYS.contains(&(importer, imported)) => None,
        std::cmp::Ordering::Equal => {
            Some(format!("{importer} -> {imported}: sideways in one layer"))
        }
        std::cmp::Ordering::Less => Some(format!(
            "{importer} -> {imported}: a lower layer imports a higher one"
        )),
    }
}

/// Every product `.rs` file below `dir`, by top-level module.
fn files_by_module(src: &Path) -> BTreeMap<String, Vec<std::path::PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut by = BTreeMap::<String, Vec<_>>::new();
    for f in files {
        let rel = f.strip_prefix(src).expect("below src");
        let first = rel
            .components()
            .next()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .unwrap_or_default();
        by.entry(first).or_default().push(f);
    }
    by
}

#[test]
fn every_import_points_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (module, files) in files_by_module(&src) {
        if matches!(module.as_str(), "lib" | "main" | "layers") {
            continue;
        }
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read a source file");
            for imported in crate_imports(&product_code(&text)) {
                if let Some(why) = violation(&module, &imported) {
                    wrong.push(format!("{}: {why}", f.display()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against ARCHITECTURE.md's layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_upward_sideways_and_unknown_imports() {
    assert_eq!(violation("actors", "judges"), None);
    assert_eq!(violation("justice", "report"), None);
    assert!(violation("llm", "judges").unwrap().contains("lower layer"));
    assert!(violation("batch", "cli").unwrap().contains("sideways"));
    assert!(violation("judges", "justice").unwrap().contains("sideways"));
    assert!(violation("tally", "exit").unwrap().contains("forbidden"));
    assert!(violation("newthing", "model").unwrap().contains("missing"));
    let code = product_code(
        "use crate::model::X;\n// crate::cli in a comment\nfn f() { crate::llm::ask(); }\n#[cfg(test)]\nmod tests {\n    use crate::batch::Y;\n}\n",
    );
    assert_eq!(crate_imports(&code), ["llm", "model"]);
    assert_eq!(
        crate_imports("use crate::{\n    actors::A,\n    cli::{B, C},\n};"),
        ["actors", "cli"]
    );
}

/// The layers that hold commands: the only ones that may use clap.
const COMMAND_LAYER: usize = LAYERS.len() - 1;

#[test]
fn clap_only_in_the_command_layer() {
    assert!(LAYERS[COMMAND_LAYER].contains(&"cli"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (module, files) in files_by_module(&src) {
        if rank(&module) == Some(COMMAND_LAYER) || matches!(module.as_str(), "main" | "layers") {
            continue;
        }
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read a source file");
            if uses_clap(&product_code(&text)) {
                wrong.push(f.display().to_string());
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "clap below the command layer (take a plain configuration, converted in the command):\n{}",
        wrong.join("\n")
    );
}

fn uses_clap(code: &str) -> bool {
    !imports_after(code, "clap::").is_empty()
}

/// The files of each folder below `src` (a sub-folder counts as one file of its parent; a
/// folder's `mod.rs` is the folder itself, not one of its files), with the sibling files each
/// one imports (`super::x`, or `crate::<folder>::x`).
fn folder_graphs(src: &Path) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    fn walk(dir: &Path, rel: &str, out: &mut BTreeMap<String, BTreeMap<String, Vec<String>>>) {
        let mut nodes: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
        for entry in std::fs::read_dir(dir).expect("read src").flatten() {
            let path = entry.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().trim_end_matches(".rs").to_string())
                .unwrap_or_default();
            if path.is_dir() {
                let child = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                walk(&path, &child, out);
                // the sub-folder is one file of this folder: its mod.rs and the files beside it
                let inner: Vec<std::path::PathBuf> = std::fs::read_dir(&path)
                    .expect("read src")
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                    .collect();
                nodes.insert(name, inner);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !matches!(name.as_str(), "mod" | "tests" | "lib" | "main")
            {
                nodes.entry(name).or_default().push(path);
            }
        }
        if rel.is_empty() {
            return; // the top level: the layer table's business
        }
        let crate_prefix = format!("crate::{}::", rel.replace('/', "::"));
        let mut graph = BTreeMap::new();
        for (name, files) in &nodes {
            let mut to = Vec::new();
            for f in files {
                let Ok(text) = std::fs::read_to_string(f) else {
                    continue;
                };
                let code = product_code(&text);
                // this folder's files (and a sub-folder's mod.rs) reach their siblings through
                // `super::`; the other files of a sub-folder through `super::super::`
                let in_sub = f.parent() != Some(dir);
                let sup = if in_sub && !f.ends_with("mod.rs") {
                    "super::super::"
                } else {
                    "super::"
                };
                let mut found = imports_after(&code, sup);
                found.extend(imports_after(&code, &crate_prefix));
                to.extend(
                    found
                        .into_iter()
                        .filter(|n| n != name && nodes.contains_key(n)),
                );
            }
            to.sort();
            to.dedup();
            graph.insert(name.clone(), to);
        }
        out.insert(rel.to_string(), graph);
    }
    let mut out = BTreeMap::new();
    walk(src, "", &mut out);
    out
}

/// The circles of a graph: each set of two or more nodes that reach one another, sorted.
fn circles(graph: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| -> std::collections::BTreeSet<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, std::collections::BTreeSet<String>> =
        graph.keys().map(|k| (k, reach(k))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (k, r) in &reached {
        if !r.contains(*k) {
            continue;
        }
        let mut circle: Vec<String> = r
            .iter()
            .filter(|m| reached.get(m).is_some_and(|back| back.contains(*k)))
            .cloned()
            .collect();
        circle.sort();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

#[test]
fn no_circle_inside_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (folder, graph) in folder_graphs(&src) {
        for circle in circles(&graph) {
            wrong.push(format!("src/{folder}: {}", circle.join(" <-> ")));
        }
    }
    assert!(
        wrong.is_empty(),
        "circles of imports inside a folder (move what the files share to the lower one):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checks_see_clap_and_circles() {
    assert!(uses_clap("use clap::Args;"));
    assert!(uses_clap("#[derive(clap::ValueEnum)]\nenum E {}"));
    assert!(!uses_clap("fn myclap::x() {}"));
    let graph = |edges: &[(&str, &[&str])]| -> BTreeMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(a, to)| (a.to_string(), to.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    assert!(circles(&graph(&[("a", &["b"]), ("b", &["c"]), ("c", &[])])).is_empty());
    assert_eq!(
        circles(&graph(&[
            ("a", &["b"]),
            ("b", &["c"]),
            ("c", &["a"]),
            ("d", &["a"])
        ])),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert_eq!(
        imports_after(
            "use super::{cache::X, store::{A, B}};\nsuper::super::y",
            "super::"
        ),
        ["cache", "store", "super"]
    );
}

/// The file without its `#[cfg(test)]` items (the attribute, then the item up to its `;` or its
/// closing brace), as `scripts/error-counts` reads it.
fn without_test_items(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(j) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..j]);
        let item = &rest[j + "#[cfg(test)]".len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// How many places of `code` flatten an error to text: `Result<_, String>`, a `map_err` that
/// makes a string of the cause, `Err(format!(..))`.
/// How many `Result<_, String>` the code names: a `Result` whose second type argument is
/// `String` (`Result<BTreeMap<String, String>, E>` is not one).
fn results_of_string(code: &str) -> usize {
    let result = regex::Regex::new(r"\bResult<").expect("a regex");
    let mut n = 0;
    for m in result.find_iter(code) {
        let rest = &code[m.end()..];
        let (mut depth, mut start, mut args) = (0usize, 0, Vec::new());
        let mut prev = ' ';
        for (k, c) in rest.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if prev == '-' => {}
                '>' | ')' | ']' if depth > 0 => depth -= 1,
                '>' => {
                    args.push(rest[start..k].trim());
                    args.retain(|a| !a.is_empty()); // a trailing comma
                    n += usize::from(args.len() == 2 && args[1] == "String");
                    break;
                }
                ',' if depth == 0 => {
                    args.push(rest[start..k].trim());
                    start = k + 1;
                }
                ';' | '{' | '}' => break,
                _ => {}
            }
            prev = c;
        }
    }
    n
}

fn string_errors(code: &str) -> [usize; 3] {
    let err_format = regex::Regex::new(r"Err\(\s*format!").expect("a regex");
    let map_err = regex::Regex::new(r"\bmap_err\(").expect("a regex");
    let mut flattening = 0;
    for m in map_err.find_iter(code) {
        let mut depth = 1;
        let mut end = code.len();
        for (k, c) in code[m.end()..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = m.end() + k;
                break;
            }
        }
        if map_err_flattens(code[m.end()..end].trim()) {
            flattening += 1;
        }
    }
    [
        results_of_string(code),
        flattening,
        err_format.find_iter(code).count(),
    ]
}

/// Whether a `map_err` argument makes a string of the error: `String::from`,
/// `ToString::to_string`, or a closure that calls `to_string`/`to_owned` on its argument, passes
/// it to `String::from`, or formats (`format!`) an argument it names or drops.
fn map_err_flattens(arg: &str) -> bool {
    if matches!(
        arg,
        "String::from" | "ToString::to_string" | "str::to_string"
    ) {
        return true;
    }
    let closure =
        regex::Regex::new(r"^\|\s*([A-Za-z_][A-Za-z0-9_]*|\(\))\s*(?::[^|]*)?\|").expect("a regex");
    let Some(c) = closure.captures(arg) else {
        return false;
    };
    let param = &c[1];
    let body = &arg[c[0].len()..];
    if matches!(param, "_" | "()") {
        return body.contains("format!");
    }
    let p = regex::escape(param);
    let found = |pattern: String| regex::Regex::new(&pattern).expect("a regex").is_match(body);
    found(format!(r"\b{p}\s*\.\s*(to_string|to_owned)\(\)"))
        || found(format!(r"String::from\(\s*{p}\s*\)"))
        || (body.contains("format!") && found(format!(r"(\{{{p}[}}:]|\b{p}\b)")))
}

#[test]
fn no_string_errors_below_the_command_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (module, files) in files_by_module(&src) {
        if matches!(module.as_str(), "cli" | "main" | "layers" | "testkit") {
            continue;
        }
        for f in files {
            let rel = f
                .strip_prefix(&src)
                .expect("below src")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&f).expect("read a source file");
            let now = string_errors(&without_test_items(&text));
            if now != [0; 3] {
                wrong.push(format!(
                    "src/{rel}: {now:?} (Result<_, String>, map_err to a string, Err(format!))"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "errors flattened to text below the command layer (return a typed error, the cause \
         kept as #[source]):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_string_errors() {
    let code = "fn f() -> Result<u8, String> { x.map_err(|e| e.to_string())?; \
                y.map_err(|e| format!(\"bad: {e}\"))?; z.map_err(String::from)?; \
                w.map_err(|source| Typed { shown: shown.to_string(), source })?; \
                v.map_err(|_| format!(\"gone\"))?; Err(format!(\"no\")) }\n\
                #[cfg(test)]\nmod tests { fn g() -> Result<(), String> { Err(format!(\"t\")) } }";
    assert_eq!(string_errors(&without_test_items(code)), [1, 4, 1]);
    assert_eq!(
        string_errors("fn ok() -> Result<(), Typed> { Ok(()) }"),
        [0; 3]
    );
    assert_eq!(
        results_of_string(
            "fn a() -> Result<BTreeMap<String, String>, E>;\n\
             fn b() -> Result<(String, u8), Vec<String>>;\n\
             fn c() -> Result<Box<dyn Fn(u8) -> u8>, String>;\n\
             fn d() -> Result<\n    Vec<(u8, String)>,\n    String,\n>;\n\
             fn e() -> io::Result<String>;"
        ),
        2
    );
}

/// The test fixture builders are compiled for tests and benchmarks only: `lib.rs` declares
/// `testkit` under the `testkit` feature (which the crate's dev-dependency on itself turns on).
#[test]
fn testkit_only_in_tests() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read src/lib.rs");
    assert!(
        testkit_gated(&lib),
        "src/lib.rs must declare `pub mod testkit;` right after `#[cfg(feature = \"testkit\")]`"
    );
    assert!(!testkit_gated("pub mod sample;\npub mod testkit;\n"));
}

fn testkit_gated(lib: &str) -> bool {
    let lines: Vec<&str> = lib.lines().map(str::trim).collect();
    lines.iter().enumerate().any(|(i, l)| {
        *l == "pub mod testkit;" && i > 0 && lines[i - 1] == "#[cfg(feature = \"testkit\")]"
    }) && lines.iter().filter(|l| l.ends_with("mod testkit;")).count() == 1
}
