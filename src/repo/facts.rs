//! `auditor evidence` output: the JSON object that goes under `"repo"` (key layout of issue
//! 3) and a human-readable listing.

use super::RepoFacts;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// The JSON for `auditor evidence --json` under the key `repo`.
pub fn facts_json(f: &RepoFacts) -> Value {
    let h = &f.history;
    let p = &f.python;
    let main = p.graphs.first();
    let graph = json!({
        "nodes": main.map(|g| g.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>()).unwrap_or_default(),
        "edges": main.map(|g| g.edges.iter().map(|e| json!({"from": e.from, "to": e.to, "conditional": e.conditional, "line": e.line})).collect::<Vec<_>>()).unwrap_or_default(),
        "fan_out": main.map(|g| g.fan_out.iter().map(|x| json!({"from": x.from, "to": x.to, "via": x.via, "location": x.location})).collect::<Vec<_>>()).unwrap_or_default(),
        "fan_in": main.map(|g| g.fan_in.iter().map(|x| json!({"to": x.to, "from": x.from, "synchronized": x.synchronized, "location": x.location})).collect::<Vec<_>>()).unwrap_or_default(),
        "linear": main.map(|g| g.linear),
        "path": main.map(|g| g.path.clone()),
        "line": main.map(|g| g.line),
        "state_type": main.and_then(|g| g.state_type.clone()),
        "undefined_nodes": main.map(|g| serde_json::to_value(&g.undefined_nodes).unwrap_or(Value::Null)),
        "unresolved": main.map(|g| g.unresolved.clone()).unwrap_or_default(),
        "defects": main.map(|g| serde_json::to_value(&g.defects).unwrap_or(Value::Null)).unwrap_or_else(|| json!([])),
        "runtime_notes": main.map(|g| g.runtime_notes.clone()).unwrap_or_default(),
        "graph_count": p.graphs.len(),
        "graphs": serde_json::to_value(&p.graphs).unwrap_or(Value::Null),
    });
    json!({
        "url": f.url,
        "commit": f.commit,
        "ref": f.git_ref,
        "file_count": f.files.len(),
        "notes": f.notes,
        "unscanned_python": f.unscanned_python,
        "finding_counts": f.finding_counts,
        "history": {
            "commit_count": h.commit_count,
            "merge_count": h.merge_count,
            "pattern": h.pattern,
            "lines_counted": h.lines_counted,
            "lines_added": h.lines_added,
            "largest_commit_share": h.largest_commit_share,
            "top2_share": h.top2_share,
            "bulk_deliveries": h.bulk_deliveries,
            "staged_sessions": h.staged,
            "staged_share": h.staged_share,
            "burst_share": h.burst_share,
            "clustered": h.clustered,
            "span_seconds": h.span_seconds,
            "progression": h.progression,
            "commits": h.commits.iter().map(|c| {
                let mut v = json!({
                    "hash": c.hash,
                    "timestamp": c.timestamp,
                    "date": c.date,
                    "message": c.message,
                    "files_changed": c.files_changed,
                    "insertions": c.insertions,
                    "deletions": c.deletions,
                    "code_lines_added": c.code_lines_added,
                    "python_lines_added": c.python_lines_added,
                    "merge": c.merge,
                    "phases": c.phases,
                });
                if !c.not_diffed.is_empty() {
                    v["not_diffed"] = json!(c.not_diffed);
                }
                v
            }).collect::<Vec<_>>(),
        },
        "graph": graph,
        "state": {
            "typed_dicts": p.state.typed_dicts,
            "pydantic_models": p.state.pydantic_models,
            "reducers": p.state.reducers,
        },
        "security": {
            "findings": p.security.findings,
            "sandboxed_clone": p.security.sandboxed_clone,
            "clone_calls": p.security.clone_calls,
        },
        "structured_output": {
            "calls": p.structured_output.calls,
            "used": p.structured_output.used,
        },
        "personas": p.personas,
        "justice": p.justice,
        "python_files": p.files_parsed,
        "files_with_syntax_errors": p.files_with_syntax_errors,
    })
}

/// Human-readable listing for `auditor evidence` without `--json`: the repository, then one
/// section per family of facts, then the notes.
pub fn summary_text(f: &RepoFacts) -> String {
    let mut s = String::new();
    header(&mut s, f);
    history_section(&mut s, &f.history);
    graph_section(&mut s, &f.python);
    state_section(&mut s, &f.python);
    security_section(&mut s, &f.python);
    structured_section(&mut s, &f.python);
    personas_section(&mut s, &f.python);
    justice_section(&mut s, &f.python);
    notes_section(&mut s, f);
    s
}

/// The repository, its commit and how many files were read.
fn header(s: &mut String, f: &RepoFacts) {
    let _ = writeln!(
        s,
        "Repository {} at {}",
        f.url,
        if f.commit.is_empty() {
            "(no commit)"
        } else {
            &f.commit
        }
    );
    let _ = writeln!(
        s,
        "  {} files, {} Python files analysed",
        f.files.len(),
        f.python.files_parsed
    );
}

/// The history's figures and its first 50 commits.
fn history_section(s: &mut String, h: &super::history::HistoryFacts) {
    let _ = writeln!(
        s,
        "\nHistory: {} commits ({} merges), pattern {}, progression setup→tools→graph: {}{}",
        h.commit_count,
        h.merge_count,
        h.pattern,
        yes(h.progression),
        if h.clustered {
            ", clustered within 30 minutes"
        } else {
            ""
        }
    );
    for c in h.commits.iter().take(50) {
        let _ = writeln!(
            s,
            "  {} {} {}",
            c.hash.get(..7).unwrap_or(&c.hash),
            c.date,
            c.message
        );
    }
    if h.commits.len() > 50 {
        let _ = writeln!(s, "  ... {} more", h.commits.len() - 50);
    }
}

/// The main graph: its nodes, edges, fan-outs, fan-ins and undefined nodes.
fn graph_section(s: &mut String, p: &super::python::PythonFacts) {
    let Some(g) = p.graphs.first() else {
        let _ = writeln!(s, "\nGraph: none found");
        return;
    };
    let _ = writeln!(
        s,
        "\nGraph at {} (state {}): {} nodes, {} edges{}",
        g.location(),
        g.state_type.as_deref().unwrap_or("?"),
        g.nodes.len(),
        g.edges.len(),
        if g.linear { ", purely linear" } else { "" }
    );
    let _ = writeln!(
        s,
        "  nodes: {}",
        g.nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for e in &g.edges {
        let _ = writeln!(
            s,
            "  {} -> {}{}",
            e.from,
            e.to,
            if e.conditional { " (conditional)" } else { "" }
        );
    }
    for x in &g.fan_out {
        let _ = writeln!(
            s,
            "  fan-out: {} -> [{}] via {}",
            x.from,
            x.to.join(", "),
            x.via
        );
    }
    for x in &g.fan_in {
        let _ = writeln!(s, "  fan-in: [{}] -> {}", x.from.join(", "), x.to);
    }
    for u in &g.undefined_nodes {
        let _ = writeln!(s, "  undefined node {} ({}:{})", u.name, u.path, u.line);
    }
}

/// The state classes and their reducers.
fn state_section(s: &mut String, p: &super::python::PythonFacts) {
    let _ = writeln!(s, "\nState:");
    for c in p.state.typed_dicts.iter().chain(&p.state.pydantic_models) {
        let _ = writeln!(s, "  {} {} ({})", c.kind, c.name, c.location());
    }
    for r in &p.state.reducers {
        let _ = writeln!(
            s,
            "  reducer {}.{} = {} ({}:{})",
            r.class, r.field, r.reducer, r.path, r.line
        );
    }
}

/// Whether the clone is sandboxed, and the security findings.
fn security_section(s: &mut String, p: &super::python::PythonFacts) {
    let _ = writeln!(
        s,
        "\nSecurity: sandboxed clone: {}",
        yes(p.security.sandboxed_clone)
    );
    for x in &p.security.findings {
        let _ = writeln!(s, "  {} at {}:{}: {}", x.kind, x.path, x.line, x.snippet);
    }
    if p.security.findings.is_empty() {
        let _ = writeln!(s, "  no findings");
    }
}

/// Whether structured output is used, and its calls.
fn structured_section(s: &mut String, p: &super::python::PythonFacts) {
    let _ = writeln!(s, "\nStructured output: {}", yes(p.structured_output.used));
    for c in &p.structured_output.calls {
        let _ = writeln!(
            s,
            "  {}({}) at {}:{}{}",
            c.method,
            c.schema,
            c.path,
            c.line,
            if c.retry { ", with retry" } else { "" }
        );
    }
}

/// The judge persona prompts and how much text each pair shares.
fn personas_section(s: &mut String, p: &super::python::PythonFacts) {
    let _ = writeln!(s, "\nJudge personas:");
    for x in &p.personas.prompts {
        let _ = writeln!(
            s,
            "  {} at {}:{} ({} chars)",
            x.persona, x.path, x.line, x.chars
        );
    }
    for x in &p.personas.similarity {
        let _ = writeln!(s, "  {}/{} share {:.0}%", x.a, x.b, x.share * 100.0);
    }
}

/// Where the Chief Justice is, and which of its rules were found.
fn justice_section(s: &mut String, p: &super::python::PythonFacts) {
    let _ = writeln!(
        s,
        "\nChief Justice: {}",
        p.justice.location.as_deref().unwrap_or("not found")
    );
    for r in &p.justice.rules {
        let _ = writeln!(
            s,
            "  {}: {}{}",
            r.rule,
            yes(r.found),
            if r.found {
                format!(" ({})", r.location)
            } else {
                String::new()
            }
        );
    }
}

/// The notes, when there are any.
fn notes_section(s: &mut String, f: &RepoFacts) {
    if !f.notes.is_empty() {
        let _ = writeln!(s, "\nNotes:");
        for n in &f.notes {
            let _ = writeln!(s, "  {n}");
        }
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}
