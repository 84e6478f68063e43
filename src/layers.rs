//! The layers of `ARCHITECTURE.md`, checked: every `crate::` path in the product code (tests
//! aside) points down the list, or sideways only where the table allows it.

use std::collections::BTreeMap;
use std::path::Path;

/// Top-level modules by layer, bottom up (the table in ARCHITECTURE.md).
const LAYERS: &[&[&str]] = &[
    &[
        "exit", "model", "files", "alloc", "words", "console", "family",
    ],
    &["rubric", "tally", "telemetry", "interrupt"],
    &["llm", "repo", "pdf", "similarity"],
    &["judges", "vision", "report", "justice"],
    &["actors"],
    &["launch"],
    &["batch", "calibrate", "review", "testkit", "cli"],
];

/// Imports allowed within a layer (importer, imported).
const SIDEWAYS: &[(&str, &str)] = &[
    ("model", "words"),
    ("interrupt", "telemetry"),
    ("interrupt", "exit"),
    ("pdf", "repo"),
    ("similarity", "repo"),
    ("justice", "report"),
    ("calibrate", "batch"),
    ("cli", "batch"),
    ("review", "batch"),
    ("cli", "review"),
    ("cli", "calibrate"),
    ("cli", "testkit"),
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
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out: Vec<String> = Vec::new();
    for (i, m) in code.match_indices("crate::") {
        if code[..i].ends_with('$') {
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
