//! A textual scan for dangerous calls in Python files too large to parse.
//!
//! A submission can pad a `.py` file past the single-file limit to hide `os.system`,
//! `shell=True` or `eval` from the tree-sitter analysis. Such a file is still scanned, line by
//! line, for the same calls the security analysis reports (`os_system`, `os_popen`,
//! `subprocess_shell`, `eval`, `exec`). Without a parse, strings cannot be told from code, so
//! every finding says it came from a textual scan. Comment lines are skipped. Linear in the
//! file's size, at most [`MAX_FINDINGS_PER_FILE`] findings kept (the rest counted).

use super::python::safety::Finding;

/// Findings kept per scanned file; the others are counted in the note.
pub const MAX_FINDINGS_PER_FILE: usize = 20;

/// The findings of one scanned file, and how many matches were found in all.
#[derive(Debug, Default)]
pub struct Scan {
    pub findings: Vec<Finding>,
    pub matches: usize,
}

/// Scans `text` (the content of `path`).
pub fn scan(path: &str, text: &[u8]) -> Scan {
    let mut out = Scan::default();
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        let trimmed = line.trim_ascii_start();
        if trimmed.starts_with(b"#") || trimmed.is_empty() {
            continue;
        }
        for (kind, detail) in line_findings(line) {
            out.matches += 1;
            if out.findings.len() < MAX_FINDINGS_PER_FILE {
                out.findings.push(Finding {
                    kind: kind.to_string(),
                    path: path.to_string(),
                    line: i + 1,
                    snippet: snippet(line),
                    detail: format!(
                        "{detail} (found by a textual scan: the file is too large to parse)"
                    ),
                });
            }
        }
    }
    out
}

fn snippet(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(&line[..line.len().min(400)]);
    let s = s.trim();
    s.chars().take(200).collect()
}

/// The dangerous calls on one line.
fn line_findings(line: &[u8]) -> Vec<(&'static str, &'static str)> {
    let mut v = Vec::new();
    if contains(line, b"os.system(") {
        v.push(("os_system", "os.system runs its argument through the shell"));
    }
    if contains(line, b"os.popen(") {
        v.push(("os_popen", "os.popen runs its argument through the shell"));
    }
    if shell_true(line)
        || contains(line, b"getoutput(")
        || contains(line, b"getstatusoutput(")
        || contains(line, b"create_subprocess_shell(")
    {
        v.push((
            "subprocess_shell",
            "a subprocess call runs its command through the shell",
        ));
    }
    if builtin_call(line, b"eval(") {
        v.push(("eval", "eval executes a string as Python code"));
    }
    if builtin_call(line, b"exec(") {
        v.push(("exec", "exec executes a string as Python code"));
    }
    v
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find_all(hay, needle).next().is_some()
}

fn find_all<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    hay.windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(|(i, _)| i)
}

/// `shell=True`, `shell = True`.
fn shell_true(line: &[u8]) -> bool {
    find_all(line, b"shell").any(|i| {
        let before_ok = i == 0 || !is_ident(line[i - 1]);
        let rest = line[i + 5..].trim_ascii_start();
        before_ok
            && rest.starts_with(b"=")
            && !rest.starts_with(b"==")
            && rest[1..].trim_ascii_start().starts_with(b"True")
    })
}

/// `eval(` not preceded by an identifier character or a dot (`ast.literal_eval(`,
/// `model.eval(` are not the builtin).
fn builtin_call(line: &[u8], call: &[u8]) -> bool {
    find_all(line, call).any(|i| i == 0 || !(is_ident(line[i - 1]) || line[i - 1] == b'.'))
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_calls_are_found_by_line() {
        let text = b"x = 1\n# os.system('in a comment')\nimport os\nos.system(cmd)\n\
            subprocess.run(c, shell = True)\nast.literal_eval(s)\nmodel.eval()\ny = eval(s)\n\
            exec(code)\nflag = shell == True\n";
        let s = scan("big.py", text);
        let got: Vec<(&str, usize)> = s
            .findings
            .iter()
            .map(|f| (f.kind.as_str(), f.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("os_system", 4),
                ("subprocess_shell", 5),
                ("eval", 8),
                ("exec", 9)
            ]
        );
        assert!(s.findings[0].detail.contains("textual scan"));
    }

    #[test]
    fn findings_are_capped_and_counted() {
        let text = "os.system('x')\n".repeat(1000);
        let s = scan("big.py", text.as_bytes());
        assert_eq!(s.findings.len(), MAX_FINDINGS_PER_FILE);
        assert_eq!(s.matches, 1000);
    }
}
