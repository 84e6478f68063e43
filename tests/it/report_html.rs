//! The HTML rendering written beside the Markdown, read back with a real HTML parser
//! (html5ever, through `scraper`): well-formed, self-contained (no script, nothing fetched:
//! no external `src`/`href`, no `url(...)` or `@import` in the CSS), one table with every
//! criterion, and hostile text from the submission shown as text, never as markup.
//! Also the exit code of a complete offline run (0: the diagram criterion left out by the
//! choice of running without a vision model is reported, not a failure).

use auditor::testkit::{git, pdf};
use scraper::{Html, Selector};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn auditor(cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_auditor"));
    cmd.current_dir(cwd);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AUDITOR_VISION_MODEL",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "RUST_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// Everything a browser would fetch or run from the page, or an empty list.
fn external_references(doc: &Html) -> Vec<String> {
    let mut found = Vec::new();
    for el in doc.select(&sel("*")) {
        let name = el.value().name();
        if matches!(
            name,
            "script" | "iframe" | "object" | "embed" | "link" | "img" | "base" | "form"
        ) {
            found.push(format!("<{name}>"));
        }
        for (attr, value) in el.value().attrs() {
            let v = value.trim().to_ascii_lowercase();
            match attr {
                "href" if !v.starts_with('#') => found.push(format!("href={value}")),
                "src" | "srcset" | "action" | "formaction" | "poster" | "data" => {
                    found.push(format!("{attr}={value}"))
                }
                a if a.starts_with("on") => found.push(format!("{a}={value}")),
                "style" if v.contains("url(") => found.push(format!("style={value}")),
                _ => {}
            }
        }
    }
    for style in doc.select(&sel("style")) {
        let css = style.text().collect::<String>().to_ascii_lowercase();
        for bad in ["url(", "@import", "@font-face"] {
            if css.contains(bad) {
                found.push(format!("css {bad}"));
            }
        }
    }
    found
}

/// Parses the page and fails on any parse error the HTML5 parser reports.
fn parse_well_formed(html: &str) -> Html {
    let doc = Html::parse_document(html);
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    doc
}

#[test]
fn the_html_report_is_well_formed_self_contained_and_has_every_criterion() {
    let ws = tempfile::tempdir().unwrap();
    git::build_repo(&ws.path().join("repo"), &git::sample_langgraph_project()).unwrap();
    std::fs::write(
        ws.path().join("report.pdf"),
        pdf::build_pdf(&pdf::sample_report()).unwrap(),
    )
    .unwrap();
    let out = auditor(ws.path())
        .args(["--repo", "repo", "--pdf", "report.pdf"])
        .args(["--output", "out/report.md"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A complete offline run: the diagram criterion is not assessed only because the run has
    // no vision model, by choice. It is reported, one line, and the exit code stays 0.
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Architectural Diagram Analysis: not assessed: "))
        .unwrap_or_else(|| panic!("no line for the diagram criterion:\n{stdout}"));
    assert!(line.contains("no vision model"), "{line}");
    assert!(stdout.contains("HTML:   "), "{stdout}");

    let html_path = ws.path().join("out/report.html");
    let html = std::fs::read_to_string(&html_path).expect("report.html beside report.md");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&html_path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }
    let doc = parse_well_formed(&html);
    assert_eq!(external_references(&doc), Vec::<String>::new());
    assert!(
        html.contains("@media print"),
        "prints well: a print stylesheet"
    );

    let side: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("out/report.json")).unwrap())
            .unwrap();
    let criteria = side["report"]["criteria"].as_array().unwrap();
    assert_eq!(criteria.len(), 10);
    // one table of criteria, a row for each, in order, with its final score
    let tables: Vec<_> = doc.select(&sel("table.criteria")).collect();
    assert_eq!(tables.len(), 1);
    let rows: Vec<_> = tables[0].select(&sel("tbody tr")).collect();
    assert_eq!(rows.len(), criteria.len());
    for (row, c) in rows.iter().zip(criteria) {
        let cells: Vec<String> = row
            .select(&sel("td"))
            .map(|td| td.text().collect::<String>())
            .collect();
        assert_eq!(cells[1], c["dimension_name"].as_str().unwrap());
        let expected = match c["final_score"].as_u64() {
            Some(s) if c["status"] == "assessed" => format!("{s}/5"),
            _ => "not assessed".to_string(),
        };
        assert_eq!(cells[2], expected, "{cells:?}");
    }
    // every criterion has its section, with its judges and all its evidence folded
    let articles: Vec<_> = doc.select(&sel("article")).collect();
    assert_eq!(articles.len(), criteria.len());
    for (a, c) in articles.iter().zip(criteria) {
        let text = a.text().collect::<String>();
        assert!(text.contains(c["dimension_name"].as_str().unwrap()));
        let evidence = side["evidence"][c["dimension_id"].as_str().unwrap()]
            .as_array()
            .map_or(0, Vec::len);
        let folded: usize = a.select(&sel("details ul.evidence li")).map(|_| 1).sum();
        assert_eq!(folded, evidence, "{}", c["dimension_id"]);
    }
    // the table's links lead to the sections
    for a in tables[0].select(&sel("a")) {
        let target = a.value().attr("href").unwrap().trim_start_matches('#');
        assert_eq!(
            doc.select(&sel(&format!("article#{target}"))).count(),
            1,
            "{target}"
        );
    }
}

const EVIL: &str = "<script>alert(1)</script><img src=x onerror=alert(2)> \"><a href=\"https://evil.example/x\">click</a> <style>body{background:url(https://evil.example/p.png)}</style> ]]> <!-- x";

#[test]
fn hostile_text_from_the_submission_is_text_in_the_html() {
    let ws = tempfile::tempdir().unwrap();
    let evil_name = "src/\"><img src=x onerror=alert(3)>.py";
    let commits: Vec<git::FixtureCommit> = (0..3)
        .map(|i| {
            git::FixtureCommit::new(format!("{EVIL} {i}"), 1_700_000_000 + i * 60)
                .file(evil_name, format!("import os\nos.system(x{i})\n"))
                .file(
                    "src/graph.py",
                    format!(
                        "from langgraph.graph import StateGraph\n# {EVIL}\nb = StateGraph(dict)\n"
                    ),
                )
        })
        .collect();
    git::build_repo(&ws.path().join("repo"), &commits).unwrap();
    let out = auditor(ws.path())
        .args(["--repo", "repo", "--judges", "offline"])
        .args(["--output", "out/report.md"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(ws.path().join("out/report.html")).unwrap();
    assert!(
        html.contains("onerror"),
        "the crafted text reaches the HTML (else this test proves nothing)"
    );
    let doc = parse_well_formed(&html);
    assert_eq!(external_references(&doc), Vec::<String>::new());
    assert_eq!(
        doc.select(&sel("style")).count(),
        1,
        "only the page's own CSS"
    );
    // it is there as text
    let text = doc.root_element().text().collect::<String>();
    assert!(text.contains("<img src=x onerror=alert(3)>"), "{text}");
}
