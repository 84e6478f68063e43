//! Python source → a stream of normalised tree-sitter tokens.
//!
//! Every leaf of the syntax tree is a token, named by its grammar symbol: keywords and
//! punctuation stay what they are (`def`, `(`, `+=`), every identifier is the same token,
//! every string literal (f-strings and implicit concatenations included, whatever they hold)
//! is one token, every number is one token. Comments are not tokens. So renaming variables,
//! functions or classes, or changing a literal, changes nothing; changing the code's
//! structure does.

use tree_sitter::{Node, Parser};

/// One token: its normalised value and the line (1-based) it starts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub value: u16,
    pub line: u32,
}

/// The token every identifier becomes.
const IDENT: u16 = u16::MAX;
/// The token every string literal becomes.
const STRING: u16 = u16::MAX - 1;
/// The token every number becomes.
const NUMBER: u16 = u16::MAX - 2;

fn class(node: &Node<'_>) -> Option<u16> {
    match node.kind() {
        "identifier" | "keyword_identifier" => Some(IDENT),
        "string" | "concatenated_string" => Some(STRING),
        "integer" | "float" => Some(NUMBER),
        _ => None,
    }
}

/// A Python parser for tokenising (tree-sitter's allocator set first, as everywhere in this
/// crate).
pub fn parser() -> Result<Parser, crate::repo::python::syntax::ParseError> {
    crate::repo::python::syntax::new_parser()
}

/// The tokens of one file, at most `max` of them (`None` when tree-sitter gave up). The walk
/// is iterative: a deeply nested file cannot exhaust the stack.
pub fn tokenize(parser: &mut Parser, source: &str, max: usize) -> Option<Vec<Token>> {
    let tree = parser.parse(source.as_bytes(), None)?;
    let mut out = Vec::new();
    let mut cursor = tree.root_node().walk();
    'walk: loop {
        let node = cursor.node();
        let collapsed = class(&node);
        let leaf = collapsed.is_some() || node.child_count() == 0;
        if leaf {
            let skip = node.kind() == "comment" || (node.is_missing() && collapsed.is_none());
            // A zero-width node (a token tree-sitter inserted to recover) is no code.
            if !skip && node.end_byte() > node.start_byte() {
                if out.len() >= max {
                    break 'walk;
                }
                out.push(Token {
                    value: collapsed.unwrap_or_else(|| node.kind_id()),
                    line: (node.start_position().row as u32).saturating_add(1),
                });
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(src: &str) -> Vec<u16> {
        let mut p = parser().unwrap();
        tokenize(&mut p, src, usize::MAX)
            .unwrap()
            .iter()
            .map(|t| t.value)
            .collect()
    }

    #[test]
    fn names_and_literals_are_normalised_structure_is_not() {
        let a = values("def f(x):\n    return x + 1  # one\n");
        let b = values("def grow(total):\n    return total + 42\n");
        assert_eq!(a, b);
        assert_ne!(a, values("def f(x):\n    return x - 1\n"));
        assert_eq!(
            values("s = 'a' 'b'\nt = f\"{x!r}\"\n"),
            values("q = \"zzz\"\nu = 'w'\n")
        );
    }

    #[test]
    fn lines_are_recorded_and_the_count_is_bounded() {
        let mut p = parser().unwrap();
        let toks = tokenize(&mut p, "a = 1\n\n# c\nb = 2\n", usize::MAX).unwrap();
        assert_eq!(toks.len(), 6);
        assert_eq!(toks[0].line, 1);
        assert_eq!(toks[3].line, 4);
        assert_eq!(tokenize(&mut p, "a = 1\nb = 2\n", 4).unwrap().len(), 4);
        // deep nesting is walked without recursion
        let deep = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
        assert!(tokenize(&mut p, &deep, usize::MAX).unwrap().len() > 10_000);
    }
}
