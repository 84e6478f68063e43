//! One home for shortening and naming text, for every text the tool writes: a line shortened at
//! a word ([`short`]), a text cut at a byte or char budget ([`cut`], [`cut_marked`]), a file-name
//! stem ([`file_stem`]) and an identifier ([`ident`]) made from any text. Imports nothing from
//! the crate.

/// One line, at most `max` characters, with an ellipsis when cut. The cut falls at a word
/// boundary (never mid-word) unless the text's first word alone is longer than `max`; a
/// single over-long word is cut on a char boundary.
pub fn short(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    let next_is_space = one_line[cut.len()..].starts_with(' ');
    let kept = if next_is_space {
        cut.as_str()
    } else {
        match cut.rfind(' ') {
            Some(i) if i > 0 => &cut[..i],
            _ => cut.as_str(),
        }
    };
    let kept = without_open_parenthesis(kept).trim_end_matches([' ', ',', ';', ':']);
    format!("{kept}…")
}

/// A shortened text never ends inside a parenthesis it opened ("reachable (full…"): the cut
/// moves before the last unclosed "(" when enough text stays before it.
fn without_open_parenthesis(kept: &str) -> &str {
    let mut open: Vec<usize> = Vec::new();
    for (i, c) in kept.char_indices() {
        match c {
            '(' => open.push(i),
            ')' => {
                open.pop();
            }
            _ => {}
        }
    }
    match open.first() {
        Some(&i) if i >= kept.len() / 3 => kept[..i].trim_end(),
        _ => kept,
    }
}

/// `s` cut to at most `max` bytes (on a char boundary), "…" marking the cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `text` cut to at most `max` characters, "… [truncated]" marking the cut.
pub fn cut_marked(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}… [truncated]", &text[..i]),
        None => text.to_string(),
    }
}

/// Longest stem a name derived from the input keeps; a longer one is cut and told apart by a
/// hash of the whole (`report-<stem>-<time>.html` stays far below the 255 bytes of a name).
const MAX_STEM: usize = 80;

/// A file-name stem from `name`: ASCII letters, digits, `-` and `_` kept, every other character
/// `-`; "repo" when nothing is left; a stem over [`MAX_STEM`] bytes cut and told apart by a
/// hash of the whole.
pub fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() {
        return "repo".into();
    }
    if s.len() <= MAX_STEM {
        return s;
    }
    use sha2::Digest;
    let hash = hex::encode(&sha2::Sha256::digest(s.as_bytes())[..4]);
    // ASCII only (every other character became '-'): any byte index is a boundary
    format!("{}-{hash}", &s[..MAX_STEM - 9])
}

/// An identifier from any text: lower-case ASCII letters and digits, every run of other
/// characters one `_`, none at either end (`"State Graph (LangGraph)"` → `state_graph_langgraph`).
pub fn ident(s: &str) -> String {
    let mut out = String::new();
    for c in s.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortened_text_never_ends_inside_an_open_parenthesis() {
        let t = "49 commits (19 merges) reachable from the audited commit (full history walked, nothing skipped)";
        assert_eq!(
            short(t, 75),
            "49 commits (19 merges) reachable from the audited commit…"
        );
        // an early parenthesis is kept: cutting before it would leave too little
        assert_eq!(short("a (b c d e f g h i j k l", 12), "a (b c d e…");
        // closed parentheses are untouched
        assert_eq!(short("one (two) three four five", 16), "one (two) three…");
    }

    #[test]
    fn cuts_keep_char_boundaries_and_mark_the_cut() {
        assert_eq!(cut("héllo", 2), "h…");
        assert_eq!(cut("hello", 5), "hello");
        assert_eq!(cut_marked("ééé", 2), "éé… [truncated]");
        assert_eq!(cut_marked("éé", 2), "éé");
    }

    #[test]
    fn stems_and_identifiers() {
        assert_eq!(file_stem("my repo"), "my-repo");
        assert_eq!(file_stem(""), "repo");
        let long = file_stem(&"a".repeat(200));
        assert_eq!(long.len(), MAX_STEM);
        assert_ne!(long, file_stem(&"a".repeat(201)));
        assert_eq!(ident("State Graph (LangGraph)"), "state_graph_langgraph");
    }
}
