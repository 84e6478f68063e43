//! Text normalisation, sentence segmentation and chunking. Pure functions over page strings.
//!
//! Real reports come out of PDFium with `\r\n` line ends, ligatures, curly quotes, words
//! hyphenated across lines, paths split after a `/`, and sometimes one word per line. Every page
//! goes through [`normalise_page`] before anything else reads it.

use serde::{Deserialize, Serialize};

/// A chunk of report text with the page it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub page: u32,
    pub text: String,
}

/// How to cut pages into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkBy {
    /// Windows of about `size` characters overlapping by `overlap`, never crossing a page.
    Chars { size: usize, overlap: usize },
    /// One chunk per page.
    Page,
}

impl Default for ChunkBy {
    fn default() -> Self {
        ChunkBy::Chars {
            size: 800,
            overlap: 150,
        }
    }
}

/// A sentence (or list item / heading) of a page, with how it was laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub page: u32,
    pub text: String,
    /// A bullet or numbered list item, a heading or a short fragment rather than running prose.
    pub list_or_title: bool,
    /// A heading line (short, no terminal punctuation, followed by a new paragraph).
    pub heading: bool,
    /// The block it belongs to (a paragraph, a list item or a heading), numbered across the
    /// document: sentences of one paragraph share it.
    pub block: u32,
    /// Part of a bullet or numbered list item.
    pub item: bool,
}

fn map_char(c: char, out: &mut String) {
    match c {
        '\u{FB00}' => out.push_str("ff"),
        '\u{FB01}' => out.push_str("fi"),
        '\u{FB02}' => out.push_str("fl"),
        '\u{FB03}' => out.push_str("ffi"),
        '\u{FB04}' => out.push_str("ffl"),
        '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => out.push('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => out.push('"'),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2212}' => out.push('-'),
        '\u{2013}' | '\u{2014}' | '\u{2015}' => out.push_str(" - "),
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\t' => {
            out.push(' ')
        }
        // soft hyphen, PDFium's line-end hyphen marker, zero-width characters, BOM/FFFE
        '\u{00AD}' | '\u{0002}' | '\u{200B}'..='\u{200D}' | '\u{FEFF}' | '\u{FFFE}' => {
            out.push('\u{00AD}')
        }
        '\r' => {}
        '\u{2028}' | '\u{2029}' | '\u{000B}' | '\u{000C}' => out.push('\n'),
        c if c.is_control() && c != '\n' => out.push(' '),
        c => out.push(c),
    }
}

/// Normalises one page of extracted text: ligatures, quotes, dashes, spaces; words hyphenated
/// across lines joined; paths split after `/`, `\` or `_` joined; one-word-per-line layouts
/// rejoined into lines. Lines are kept (they carry list and heading structure); runs of spaces
/// are collapsed; blank lines mark paragraph breaks.
pub fn normalise_page(raw: &str) -> String {
    let mut mapped = String::with_capacity(raw.len());
    for c in raw.chars() {
        map_char(c, &mut mapped);
    }
    // Collapse spaces within lines, trim lines.
    let mut lines: Vec<String> = mapped
        .split('\n')
        .map(|l| {
            l.split(' ')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();

    // One word per line: rejoin the words of each paragraph into one line.
    let non_empty: Vec<&String> = lines.iter().filter(|l| !l.is_empty()).collect();
    let single = non_empty.iter().filter(|l| !l.contains(' ')).count();
    if non_empty.len() >= 8 && single * 10 >= non_empty.len() * 7 {
        let mut rejoined = Vec::new();
        let mut cur = String::new();
        for l in &lines {
            if l.is_empty() {
                if !cur.is_empty() {
                    rejoined.push(std::mem::take(&mut cur));
                }
                rejoined.push(String::new());
            } else {
                join_fragment(&mut cur, l);
            }
        }
        if !cur.is_empty() {
            rejoined.push(cur);
        }
        lines = rejoined;
    }

    // Join lines broken inside a word or a path.
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for line in lines {
        if let Some(prev) = out.last_mut()
            && !prev.is_empty()
            && !line.is_empty()
            && continues(prev, &line)
        {
            join_fragment(prev, &line);
            continue;
        }
        out.push(line);
    }
    let mut text = out.join("\n");
    // Remaining soft hyphens inside a line are invisible characters.
    text.retain(|c| c != '\u{00AD}');
    // Collapse runs of blank lines.
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    text.trim().to_string()
}

/// Whether `next` continues the word or path at the end of `prev` (no space between them).
fn continues(prev: &str, next: &str) -> bool {
    let Some(first) = next.chars().next() else {
        return false;
    };
    if prev.ends_with('\u{00AD}') {
        return true;
    }
    let mut rev = prev.chars().rev();
    let last = rev.next().unwrap_or(' ');
    let before = rev.next().unwrap_or(' ');
    match last {
        // `synchro-` + `nization`: a lower-case word hyphenated across the line break.
        '-' => before.is_lowercase() && first.is_lowercase() && !prev.ends_with(" -"),
        // `src/nodes/` + `judges.py`, `repo_` + `tools.py`
        '/' | '\\' | '_' => {
            let tail = prev.rsplit(' ').next().unwrap_or("");
            tail.len() > 1 && (first.is_alphanumeric() || first == '_')
        }
        _ => false,
    }
}

fn join_fragment(cur: &mut String, next: &str) {
    if cur.is_empty() {
        cur.push_str(next);
        return;
    }
    if cur.ends_with('\u{00AD}') || (cur.ends_with('-') && continues(cur, next)) {
        cur.pop();
        cur.push_str(next);
    } else if (cur.ends_with('/') || cur.ends_with('\\') || cur.ends_with('_'))
        && continues(cur, next)
    {
        cur.push_str(next);
    } else {
        cur.push(' ');
        cur.push_str(next);
    }
}

fn is_bullet_line(line: &str) -> bool {
    let t = line.trim_start();
    let mut chars = t.chars();
    match chars.next() {
        Some('•' | '◦' | '▪' | '●' | '○' | '■' | '□' | '➢' | '✓' | '✔' | '*' | '·') => {
            true
        }
        Some('-') => chars.next() == Some(' '),
        Some(c) if c.is_ascii_digit() => {
            let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
            let rest = &t[digits.len()..];
            (rest.starts_with(". ") || rest.starts_with(") ")) && digits.len() <= 2
        }
        _ => false,
    }
}

/// Whether a line is a label followed by the start of a sentence ("Three Judge Personas: The
/// system instantiates three"): two or more lower-case words after the colon say it is prose
/// wrapped at the line end, not a title ("Fan-Out Pattern 1: Detective Layer").
fn label_then_prose(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(_, rest)| {
        rest.split_whitespace()
            .filter(|w| w.chars().next().is_some_and(char::is_lowercase))
            .count()
            >= 2
    })
}

fn ends_sentence(line: &str) -> bool {
    line.ends_with(['.', '!', '?', ':', ';'])
}

/// Splits normalised pages into sentences, list items and headings.
pub fn sentences(pages: &[String]) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut block_no: u32 = 0;
    for (i, page) in pages.iter().enumerate() {
        let page_no = i as u32 + 1;
        // Build blocks: a paragraph of prose, or one list item / heading.
        let mut blocks: Vec<(String, bool, bool)> = Vec::new();
        let mut cur = String::new();
        let mut cur_is_item = false;
        let lines: Vec<&str> = page.lines().collect();
        for (li, line) in lines.iter().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                if !cur.is_empty() {
                    blocks.push((std::mem::take(&mut cur), cur_is_item, false));
                }
                cur_is_item = false;
                continue;
            }
            let bullet = is_bullet_line(line);
            let next = lines.get(li + 1).map(|l| l.trim()).unwrap_or("");
            let prev = if li > 0 { lines[li - 1].trim() } else { "" };
            // A paragraph or list item ends where the previous line ended a sentence, or (for
            // a list item) where the previous line was short, i.e. not wrapped.
            let starts_lower = line.chars().next().is_some_and(char::is_lowercase);
            if !cur.is_empty() && !bullet {
                let ended = ends_sentence(prev) && !starts_lower;
                let item_ended = cur_is_item && !starts_lower && prev.chars().count() < 60;
                if ended || item_ended {
                    blocks.push((std::mem::take(&mut cur), cur_is_item, false));
                    cur_is_item = false;
                }
            }
            // A numbered heading ("2.1 Dialectical Synthesis (Thesis - Antithesis -
            // Synthesis)") may be longer; dashes are no words.
            let numbered = line.split_whitespace().next().is_some_and(|w| {
                w.chars().next().is_some_and(|c| c.is_ascii_digit())
                    && w.chars().all(|c| c.is_ascii_digit() || c == '.')
            });
            let heading_words = line
                .split_whitespace()
                .filter(|w| w.chars().any(char::is_alphanumeric))
                .count();
            // An upper-case title may end with a colon ("CRITERION BREAKDOWN:").
            let shouted = line.ends_with(':')
                && line.chars().filter(|c| c.is_alphabetic()).count() >= 4
                && !line.chars().any(char::is_lowercase);
            let heading = !bullet
                && (heading_words <= 7 || (numbered && heading_words <= 12))
                && (numbered || !label_then_prose(line))
                && (!ends_sentence(line) || shouted)
                && !line.ends_with(',')
                && !starts_lower
                && (next.is_empty()
                    || next
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_uppercase() || c == '"' || c.is_ascii_digit())
                    || is_bullet_line(next))
                && cur.is_empty();
            if bullet || heading {
                if !cur.is_empty() {
                    blocks.push((std::mem::take(&mut cur), cur_is_item, false));
                }
                if heading {
                    blocks.push((line.to_string(), true, true));
                    cur_is_item = false;
                    continue;
                }
                cur_is_item = true;
                cur.push_str(line);
                continue;
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(line);
        }
        if !cur.is_empty() {
            blocks.push((cur, cur_is_item, false));
        }
        for (block, item, heading) in blocks {
            for s in split_sentences(&block) {
                let short = s.split_whitespace().count() < 6;
                out.push(Sentence {
                    page: page_no,
                    list_or_title: (item && s.split_whitespace().count() <= 12) || short,
                    heading,
                    block: block_no,
                    item: item && !heading,
                    text: s,
                });
            }
            block_no += 1;
        }
    }
    out
}

/// Splits a paragraph at `. `, `! `, `? ` followed by an upper-case letter (file names like
/// `judges.py` have no space after the dot and are never split).
pub fn split_sentences(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = block.chars().collect();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, '.' | '!' | '?')
            && i + 2 < bytes.len()
            && bytes[i + 1] == ' '
            && (bytes[i + 2].is_uppercase() || bytes[i + 2] == '"' || bytes[i + 2] == '`')
            && !is_abbreviation(&bytes[start..=i])
        {
            let s: String = bytes[start..=i].iter().collect();
            out.push(s.trim().to_string());
            start = i + 2;
        }
        i += 1;
    }
    let s: String = bytes[start.min(bytes.len())..].iter().collect();
    if !s.trim().is_empty() {
        out.push(s.trim().to_string());
    }
    out
}

fn is_abbreviation(s: &[char]) -> bool {
    let tail: String = s
        .iter()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let tail = tail.to_lowercase();
    ["e.g.", "i.e.", "etc.", " vs.", "fig.", " al.", " no."]
        .iter()
        .any(|a| tail.ends_with(a))
}

/// Cuts normalised pages into chunks with page numbers.
pub fn chunk(pages: &[String], by: ChunkBy) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let page_no = i as u32 + 1;
        let text = page.trim();
        if text.is_empty() {
            continue;
        }
        match by {
            ChunkBy::Page => out.push(Chunk {
                page: page_no,
                text: text.to_string(),
            }),
            ChunkBy::Chars { size, overlap } => {
                let size = size.max(50);
                let step = size.saturating_sub(overlap.min(size / 2)).max(1);
                let chars: Vec<(usize, char)> = text.char_indices().collect();
                let n = chars.len();
                let mut s = 0;
                loop {
                    let mut e = (s + size).min(n);
                    // End on whitespace when possible so words stay whole.
                    if e < n {
                        let back = (s + size * 3 / 4).min(e);
                        if let Some(ws) = (back..e).rev().find(|&k| chars[k].1.is_whitespace()) {
                            e = ws;
                        }
                    }
                    let from = chars[s].0;
                    let to = if e < n { chars[e].0 } else { text.len() };
                    out.push(Chunk {
                        page: page_no,
                        text: text[from..to].trim().to_string(),
                    });
                    if e >= n {
                        break;
                    }
                    let mut next = (s + step).min(e);
                    // Start on a word boundary.
                    while next < e && !chars[next.saturating_sub(1)].1.is_whitespace() {
                        next += 1;
                    }
                    s = if next <= s { e } else { next };
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ligatures_quotes_and_spaces_are_normalised() {
        let t = normalise_page(
            "The \u{FB01}nal  \u{201C}judge\u{201D}\u{2019}s  e\u{FB03}cient\r\nnext",
        );
        assert_eq!(t, "The final \"judge\"'s efficient\nnext");
    }

    #[test]
    fn hyphenation_across_lines_is_joined_but_compounds_are_kept() {
        assert_eq!(
            normalise_page("State synchro-\r\nnization is done"),
            "State synchronization is done"
        );
        assert_eq!(normalise_page("Fan-\nOut"), "Fan-\nOut");
        assert_eq!(normalise_page("soft\u{00AD}\nhyphen"), "softhyphen");
    }

    #[test]
    fn paths_split_after_a_separator_are_joined() {
        assert_eq!(
            normalise_page("see src/nodes/\njudges.py for it"),
            "see src/nodes/judges.py for it"
        );
        assert_eq!(
            normalise_page("src/tools/repo_\ntools.py"),
            "src/tools/repo_tools.py"
        );
        // a lone slash is not a path
        assert_eq!(normalise_page("and /\nor"), "and /\nor");
    }

    #[test]
    fn one_word_per_line_is_rejoined() {
        let raw = "The\nparallel\njudges\nlive\nin\nsrc/nodes/judges.py.\nThey\nrun\nconcurrently.";
        assert_eq!(
            normalise_page(raw),
            "The parallel judges live in src/nodes/judges.py. They run concurrently."
        );
    }

    #[test]
    fn sentences_split_on_terminators_not_on_file_names() {
        let s = split_sentences("We use src/graph.py. The judges run, e.g. in parallel. Done");
        assert_eq!(
            s,
            vec![
                "We use src/graph.py.",
                "The judges run, e.g. in parallel.",
                "Done"
            ]
        );
    }

    #[test]
    fn list_items_and_headings_are_marked() {
        let pages = vec![
            "Key Concepts\n• Metacognition\n• Dialectical Synthesis\n\nThe graph fans out to three judges that each score the evidence independently before the chief justice merges them.".to_string(),
        ];
        let s = sentences(&pages);
        let flags: Vec<(&str, bool)> = s
            .iter()
            .map(|s| (s.text.as_str(), s.list_or_title))
            .collect();
        assert_eq!(flags[0], ("Key Concepts", true));
        assert_eq!(flags[1], ("• Metacognition", true));
        assert_eq!(flags[2], ("• Dialectical Synthesis", true));
        assert!(!flags[3].1);
    }

    /// A label opening a wrapped sentence is prose, not a heading; a label over a title is one.
    #[test]
    fn a_label_that_opens_a_wrapped_sentence_is_no_heading() {
        let pages = vec![
            "Dialectical Synthesis\nThree Judge Personas: The system instantiates three\nJudgeAgent objects, each configured with distinct system prompts.\nFan-Out Pattern 1: Detective Layer\nThe node fans out.".to_string(),
        ];
        let s = sentences(&pages);
        let headings: Vec<&str> = s
            .iter()
            .filter(|s| s.heading)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(
            headings,
            vec![
                "Dialectical Synthesis",
                "Fan-Out Pattern 1: Detective Layer"
            ]
        );
        assert!(s.iter().any(|s| s.text
            == "Three Judge Personas: The system instantiates three JudgeAgent objects, each configured with distinct system prompts."));
    }

    #[test]
    fn chunks_overlap_keep_pages_and_cover_the_text() {
        let page1 = (0..300)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let pages = vec![page1.clone(), "second page".to_string()];
        let chunks = chunk(
            &pages,
            ChunkBy::Chars {
                size: 200,
                overlap: 50,
            },
        );
        assert!(chunks.len() > 5);
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 200));
        assert_eq!(chunks.last().unwrap().page, 2);
        // every word of page 1 is in some chunk of page 1
        for w in page1.split(' ') {
            assert!(
                chunks
                    .iter()
                    .any(|c| c.page == 1 && c.text.split(' ').any(|x| x == w)),
                "{w}"
            );
        }
        // consecutive chunks overlap
        assert!(
            chunks[1]
                .text
                .starts_with(chunks[0].text.split(' ').rev().nth(3).unwrap())
                || chunks[0]
                    .text
                    .contains(chunks[1].text.split(' ').next().unwrap())
        );
        let by_page = chunk(&pages, ChunkBy::Page);
        assert_eq!(by_page.len(), 2);
    }
}
