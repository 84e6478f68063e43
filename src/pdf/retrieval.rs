//! BM25 retrieval over report chunks: judges get the few excerpts relevant to their criterion,
//! never the whole report.

use super::ingest::Chunk;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words too common to rank anything.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "this", "to", "was",
    "were", "will", "with", "which", "what", "does", "do", "how", "not", "but", "they", "we",
    "our", "can", "all", "any", "each", "there", "these", "those", "than", "then", "so",
];

/// Lower-cased alphanumeric terms (paths split into their parts), stop words removed.
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A very light stemmer: plural and common verb endings, so `judges`/`judge` and
/// `synchronized`/`synchronize` meet.
fn stem(w: &str) -> String {
    let mut s = w;
    let owned;
    if s.len() > 4 && s.ends_with("ies") {
        owned = format!("{}y", &s[..s.len() - 3]);
        return owned;
    }
    for suf in ["ing", "ed", "s"] {
        if s.len() > suf.len() + 3 && s.ends_with(suf) && !s.ends_with("ss") {
            s = &s[..s.len() - suf.len()];
            break;
        }
    }
    if s.len() > 3 && s.ends_with('e') {
        s = &s[..s.len() - 1];
    }
    s.to_string()
}

/// An inverted index over chunks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bm25Index {
    /// term → (chunk index, term frequency)
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    avg_len: f64,
}

impl Bm25Index {
    pub fn build(chunks: &[Chunk]) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(chunks.len());
        let mut tf: HashMap<String, u32> = HashMap::new();
        for (i, c) in chunks.iter().enumerate() {
            tf.clear();
            let toks = tokenize(&c.text);
            doc_len.push(toks.len() as u32);
            for t in toks {
                *tf.entry(t).or_insert(0) += 1;
            }
            for (t, n) in tf.drain() {
                postings.entry(t).or_default().push((i as u32, n));
            }
        }
        let total: u64 = doc_len.iter().map(|&l| l as u64).sum();
        let avg_len = if doc_len.is_empty() {
            0.0
        } else {
            total as f64 / doc_len.len() as f64
        };
        Bm25Index {
            postings,
            doc_len,
            avg_len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Chunk indices with their scores, best first; only chunks sharing a term with the query.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let n = self.doc_len.len() as f64;
        if n == 0.0 {
            return Vec::new();
        }
        let mut terms = tokenize(query);
        terms.sort();
        terms.dedup();
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for t in &terms {
            let Some(post) = self.postings.get(t) else {
                continue;
            };
            let df = post.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, f) in post {
                let f = f as f64;
                let len = self.doc_len[doc as usize] as f64;
                let norm = K1 * (1.0 - B + B * len / self.avg_len.max(1.0));
                *scores.entry(doc).or_insert(0.0) += idf * f * (K1 + 1.0) / (f + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> =
            scores.into_iter().map(|(d, s)| (d as usize, s)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        ranked
    }
}

/// The best excerpts for `question`, in rank order, with pages; total text at most `max_chars`
/// (the last excerpt is cut at a word boundary when needed).
pub fn excerpts(
    index: &Bm25Index,
    chunks: &[Chunk],
    question: &str,
    max_chars: usize,
) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut budget = max_chars;
    for (i, _) in index.search(question, 20) {
        let Some(c) = chunks.get(i) else { continue };
        if budget < 40 {
            break;
        }
        let len = c.text.chars().count();
        if len <= budget {
            budget -= len;
            out.push((c.page, c.text.clone()));
        } else {
            let cut: String = c.text.chars().take(budget.saturating_sub(1)).collect();
            let cut = match cut.rfind(' ') {
                Some(p) if p > 0 => &cut[..p],
                _ => cut.as_str(),
            };
            out.push((c.page, format!("{cut}…")));
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(texts: &[&str]) -> Vec<Chunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Chunk {
                page: i as u32 + 1,
                text: t.to_string(),
            })
            .collect()
    }

    #[test]
    fn ranks_the_chunk_about_the_question_first() {
        let c = chunks(&[
            "The repository is cloned into a temporary directory with git.",
            "Three judges, Prosecutor, Defense and TechLead, score each criterion in parallel.",
            "The chief justice synthesises the judges' opinions with deterministic rules.",
        ]);
        let idx = Bm25Index::build(&c);
        let r = idx.search("parallel judges", 3);
        assert_eq!(r[0].0, 1);
        assert!(r.iter().all(|(i, _)| *i != 0), "{r:?}");
        assert!(idx.search("kubernetes", 3).is_empty());
    }

    #[test]
    fn excerpts_are_bounded_and_carry_pages() {
        let long = "judges ".repeat(200);
        let c = chunks(&["nothing here", &long, "judges again"]);
        let idx = Bm25Index::build(&c);
        let ex = excerpts(&idx, &c, "judges", 300);
        let total: usize = ex.iter().map(|(_, t)| t.chars().count()).sum();
        assert!(total <= 300, "{total}");
        assert!(!ex.is_empty());
        assert!(ex.iter().all(|(p, _)| *p == 2 || *p == 3));
    }

    #[test]
    fn stemming_meets_plural_and_singular() {
        assert_eq!(
            tokenize("Judges synchronized"),
            tokenize("judge synchronize")
        );
    }
}
