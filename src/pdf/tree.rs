//! Directory trees drawn in a report (the output of `tree`, or one written by hand:
//! `├── src/`, `│ └── graph.py`, `|-- nodes/`), read back into the repository paths their
//! entries stand for.
//!
//! Page text keeps the lines but not the runs of spaces, so an entry's depth is read from its
//! `│` rails: an entry at depth `d` carries one rail per ancestor that is not the last of its
//! siblings (a last ancestor, `└──`, leaves spaces, which extraction collapses). The depth is
//! the one that accounts for the rails seen and for the entries above it (nothing follows a
//! last sibling at its own depth; only a directory has children). When more than one depth, or
//! none, fits, the rest of that tree is left unread here (the ordinary path extraction still
//! sees its lines): a path is only built when the drawing allows one reading.
//!
//! A directory entry's comment that lists file names (`├── core/ # state (state.py), graph
//! (graph.py)`) names files of that directory. A tree drawn under a header line naming one of
//! the repository's usual top-level folders (`src/`) is read inside it; any other header (the
//! project's name, `.`) is the repository's root.

use super::file_names::{REPO_DIRS, file_name_in};

/// One file a tree names: its repository path and the byte range of the page line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeFile {
    pub path: String,
    /// The line of the page the entry is drawn on (byte offsets into the page text).
    pub line: std::ops::Range<usize>,
}

/// What a page's trees yield: the files they name, and the byte ranges of every tree line read
/// (the ordinary extraction skips those lines: their names are claimed with their full path).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Trees {
    pub files: Vec<TreeFile>,
    pub lines: Vec<std::ops::Range<usize>>,
}

impl Trees {
    /// Whether byte offset `at` of the page lies on a tree line that was read.
    pub fn covers(&self, at: usize) -> bool {
        // `lines` are in page order and do not overlap.
        let i = self.lines.partition_point(|r| r.end <= at);
        self.lines.get(i).is_some_and(|r| r.contains(&at))
    }
}

/// An entry drawn on one line: its rails, whether it is the last sibling, its name and comment.
struct Drawn<'a> {
    rails: usize,
    last: bool,
    name: &'a str,
    comment: Option<&'a str>,
}

/// The entry drawn on `line`, if the line is a tree entry (rails and spaces, then a branch).
fn drawn(line: &str) -> Option<Drawn<'_>> {
    const BRANCHES: [(&str, bool); 5] = [
        ("├─", false),
        ("└─", true),
        ("|--", false),
        ("+--", false),
        ("`--", true),
    ];
    let (at, len, last) = BRANCHES
        .iter()
        .filter_map(|(b, last)| line.find(b).map(|i| (i, b.len(), *last)))
        .min_by_key(|(i, _, _)| *i)?;
    let prefix = &line[..at];
    if !prefix.chars().all(|c| c == '│' || c == '|' || c == ' ') {
        return None;
    }
    let rails = prefix.chars().filter(|&c| c == '│' || c == '|').count();
    let rest = line[at + len..].trim_start_matches(['─', '-', ' ']);
    let (entry, comment) = match rest.find('#') {
        Some(i) => (&rest[..i], Some(rest[i + 1..].trim())),
        None => (rest, None),
    };
    let name = entry.split_whitespace().next()?;
    Some(Drawn {
        rails,
        last,
        name,
        comment,
    })
}

/// Deeper entries are not read (a real project tree is a few levels deep; the bound keeps the
/// work per line small whatever a page draws).
const MAX_DEPTH: usize = 24;

/// An entry placed in the tree.
struct Placed {
    name: String,
    last: bool,
    /// Ends with `/` or has no dot: it may have children.
    may_be_dir: bool,
}

/// The files every tree of `text` names, and the lines read.
pub(crate) fn read(text: &str) -> Trees {
    let mut out = Trees::default();
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for l in text.split('\n') {
        lines.push((at, l));
        at += l.len() + 1;
    }
    let mut i = 0;
    while i < lines.len() {
        if drawn(lines[i].1).is_none() {
            i += 1;
            continue;
        }
        let root = root_folder(i.checked_sub(1).map(|j| lines[j].1));
        let mut stack: Vec<Placed> = Vec::new();
        let mut readable = true;
        while i < lines.len() {
            let (start, line) = lines[i];
            let Some(d) = drawn(line) else { break };
            i += 1;
            if !readable {
                continue;
            }
            let Some(depth) = depth(&stack, &d) else {
                readable = false;
                continue;
            };
            if depth >= MAX_DEPTH {
                readable = false;
                continue;
            }
            stack.truncate(depth);
            let name = d.name.trim_end_matches('/');
            if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                readable = false;
                continue;
            }
            let dir: Vec<&str> = root
                .iter()
                .copied()
                .chain(stack.iter().map(|p| p.name.as_str()))
                .collect();
            let join = |file: &str| {
                let mut parts = dir.clone();
                parts.push(file);
                parts.join("/")
            };
            let range = start..start + line.len();
            out.lines.push(range.clone());
            let is_dir = d.name.ends_with('/');
            if !is_dir && file_name_in(name) == Some(name) {
                out.files.push(TreeFile {
                    path: join(name),
                    line: range.clone(),
                });
            }
            let may_be_dir = is_dir || !name.contains('.');
            if may_be_dir && let Some(comment) = d.comment {
                let here = join(name);
                for word in comment.split(|c: char| c.is_whitespace() || ",;()[]&".contains(c)) {
                    let word = word.trim_matches(['`', '"', '\'', '.', ':']);
                    if !word.contains('/') && file_name_in(word) == Some(word) {
                        out.files.push(TreeFile {
                            path: format!("{here}/{word}"),
                            line: range.clone(),
                        });
                    }
                }
            }
            stack.push(Placed {
                name: name.to_string(),
                last: d.last,
                may_be_dir,
            });
        }
    }
    out
}

/// The folder a tree is drawn inside: its header line when that names one of the repository's
/// usual top-level folders (`src/`); `None` for the root (a project name, `.`, no header).
fn root_folder(header: Option<&str>) -> Option<&str> {
    let h = header?.trim();
    let name = h.strip_suffix('/')?;
    (!name.contains(['/', ' ']) && REPO_DIRS.contains(&name.to_ascii_lowercase().as_str()))
        .then_some(name)
}

/// The one depth at which `d` can be drawn below `stack` (the path to the previous entry), or
/// `None` when no depth or several fit.
fn depth(stack: &[Placed], d: &Drawn) -> Option<usize> {
    let mut fits = (0..=stack.len()).filter(|&k| {
        let rails = stack[..k].iter().filter(|p| !p.last).count();
        let parent_ok = k == 0 || stack[k - 1].may_be_dir;
        // a sibling drawn after the last one of its depth is not a reading
        let sibling_ok = k == stack.len() || !stack[k].last;
        rails == d.rails && parent_ok && sibling_ok
    });
    let first = fits.next()?;
    fits.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str) -> Vec<String> {
        read(text).files.into_iter().map(|f| f.path).collect()
    }

    #[test]
    fn a_tree_with_collapsed_spaces_is_read_back_into_paths() {
        // `tree` output after PDF extraction collapsed the runs of spaces.
        let text = "automaton-auditor/\n├── src/\n│ ├── graph.py\n│ └── nodes/\n│ ├── judges.py\n│ └── justice.py\n├── tests/\n│ └── test_graph.py\n└── README.md";
        assert_eq!(
            files(text),
            vec![
                "src/graph.py",
                "src/nodes/judges.py",
                "src/nodes/justice.py",
                "tests/test_graph.py",
                "README.md"
            ]
        );
    }

    #[test]
    fn names_in_a_directory_comment_are_its_files() {
        let text = "├── src/\n│ ├── agents/ # Nodes (detectives.py, judges.py)\n│ └── main.py # CLI\n├── rubric/ # The rubric (rubric.json)\n└── Dockerfile # image";
        assert_eq!(
            files(text),
            vec![
                "src/agents/detectives.py",
                "src/agents/judges.py",
                "src/main.py",
                "rubric/rubric.json",
                "Dockerfile"
            ]
        );
    }

    #[test]
    fn a_tree_under_a_top_level_folder_is_read_inside_it() {
        let text = "src/\n|-- graph.py\n`-- nodes/\n    |-- judges.py";
        assert_eq!(files(text), vec!["src/graph.py", "src/nodes/judges.py"]);
    }

    #[test]
    fn an_ambiguous_drawing_builds_no_path() {
        // Three rails under one entry that is not last: no ancestor accounts for them.
        let text = "├── a/\n│ │ │ └── x.py";
        assert!(files(text).is_empty());
        let t = read(text);
        assert_eq!(t.lines.len(), 1, "only the readable line is taken");
    }

    #[test]
    fn prose_and_diagram_boxes_are_not_trees() {
        assert!(files("The graph: └─────┬─────┘ and ├── fan-out").is_empty());
        assert!(read("no tree here\njust text").lines.is_empty());
    }
}
