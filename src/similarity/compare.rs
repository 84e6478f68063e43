//! The index over the cohort and the pair scores.
//!
//! 1. Each submission's distinct fingerprints, minus every k-gram of the template (all of
//!    them, not only the template's winnowed ones: winnowing near the edge of a copied block
//!    may select a k-gram the template's own winnowing did not).
//! 2. Fingerprints found in more than `max(2, max_share × cohort)` submissions are common code
//!    and never count; what is left is each submission's *own* fingerprints.
//! 3. An inverted index (fingerprint → submissions) gives, for every pair at once, the number
//!    of own fingerprints they share; `a_in_b` = shared / own(a), `b_in_a` = shared / own(b),
//!    `similarity` = 2·shared / (own(a) + own(b)).
//! 4. Pairs at or above the threshold get the details: the tokens each side has in shared
//!    k-grams (`shared_tokens`: the smaller side), and the shared fragments — runs of shared
//!    fingerprints in the same order and spacing in both submissions (a gap of at most
//!    [`MAX_GAP`] fingerprints that do not count), in one file on each side — with their
//!    `path:line` ranges; the longest one's length in tokens. Such a pair is flagged, unless
//!    it shares fewer than [`Options::min_shared_tokens`] tokens (a few lines are no finding).

use super::winnow::Print;
use super::{Fingerprints, K};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Settings of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// A pair at or above this similarity (0..=1) is flagged for review.
    pub threshold: f64,
    /// Fingerprints in more than this share of the cohort (and more than 2 submissions) are
    /// common code and never count.
    pub max_share: f64,
    /// A pair sharing fewer tokens is never flagged.
    pub min_shared_tokens: u64,
    /// Fragments listed per flagged pair (longest first).
    pub max_fragments: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: 0.5,
            max_share: 0.2,
            min_shared_tokens: 100,
            max_fragments: 20,
        }
    }
}

/// One submission to compare.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    pub id: &'a str,
    pub commit: Option<&'a str>,
    pub fp: &'a Fingerprints,
}

/// How the comparison was made (the JSON's `method`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Method {
    pub tokens: String,
    pub k: usize,
    pub window: usize,
    pub threshold: f64,
    pub max_share: f64,
    /// Fingerprints in more submissions than this are common code.
    pub common_above: usize,
    pub min_shared_tokens: u64,
    /// The template repository, as shown (credentials removed), if one was given.
    pub template: Option<String>,
    /// Distinct k-grams of the template (all of them count as starter code).
    pub template_kgrams: usize,
}

/// The submission another one is most similar to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nearest {
    pub id: String,
    pub similarity: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmissionSummary {
    pub id: String,
    pub commit: Option<String>,
    pub files: usize,
    pub tokens: u64,
    /// Distinct fingerprints, and those that count (not template, not common).
    pub fingerprints: usize,
    pub own_fingerprints: usize,
    pub nearest: Option<Nearest>,
    /// The submissions it forms a flagged pair with.
    pub flagged_with: Vec<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotCompared {
    pub id: String,
    pub reason: String,
}

/// One side of a fragment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub path: String,
    pub line_from: u32,
    pub line_to: u32,
    /// The lines, quoted (bounded), when the texts were at hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fragment {
    /// Tokens the fragment covers (the smaller side).
    pub tokens: u64,
    pub a: Span,
    pub b: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub similarity: f64,
    pub a_in_b: f64,
    pub b_in_a: f64,
    pub shared_fingerprints: usize,
    pub shared_tokens: u64,
    pub longest_fragment_tokens: u64,
    pub flagged: bool,
    /// The longest fragments (at most [`Options::max_fragments`]), longest first.
    pub fragments: Vec<Fragment>,
    pub fragments_total: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The result for a cohort: what `similarity.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CohortReport {
    pub method: Method,
    pub submissions: Vec<SubmissionSummary>,
    pub not_compared: Vec<NotCompared>,
    /// Distinct fingerprints left out as template code, and as common code.
    pub ignored_template: usize,
    pub ignored_common: usize,
    /// Pairs sharing at least one own fingerprint.
    pub pairs_sharing: usize,
    /// Pairs at or above the threshold, most similar first (flagged or not, see `flagged`).
    pub pairs: Vec<Pair>,
}

impl CohortReport {
    pub fn flagged(&self) -> impl Iterator<Item = &Pair> {
        self.pairs.iter().filter(|p| p.flagged)
    }
}

/// Every k-gram hash of a template's files (not winnowed).
pub fn template_kgrams(
    sources: &[super::SourceFile],
    limits: &super::Limits,
) -> Result<HashSet<u64>, super::ParseError> {
    let mut parser = super::tokens::parser()?;
    let mut out = HashSet::new();
    let mut budget = limits.max_tokens;
    for s in sources {
        if budget == 0 {
            break;
        }
        if let Some(toks) = super::tokens::tokenize(&mut parser, &s.text, budget) {
            budget -= toks.len();
            out.extend(super::winnow::kgram_hashes(&toks, K));
        }
    }
    Ok(out)
}

/// Matched fingerprint pairs searched per pair of submissions at most.
const MAX_MATCHES: usize = 1_000_000;
/// Fingerprints a fragment may skip (not shared, or common code) and go on.
const MAX_GAP: usize = 4;
/// Occurrences of one fingerprint in a submission used to build fragments.
const MAX_OCCURRENCES: usize = 64;

/// Compares the cohort. `template`: the template's k-grams and how it is shown.
pub fn compare(
    entries: &[Entry<'_>],
    template: Option<(&HashSet<u64>, String)>,
    not_compared: Vec<NotCompared>,
    opts: &Options,
) -> CohortReport {
    let empty = HashSet::new();
    let (tpl, tpl_shown) = match &template {
        Some((set, shown)) => (*set, Some(shown.clone())),
        None => (&empty, None),
    };
    let cohort = Cohort::new(entries, tpl, opts.max_share);
    let shared = cohort.shared_counts();
    let scores = cohort.scores(&shared, opts.threshold);
    let mut pairs: Vec<Pair> = scores
        .candidates
        .iter()
        .map(|candidate| cohort.pair(entries, candidate, opts))
        .collect();
    pairs.sort_by(|x, y| {
        y.similarity
            .total_cmp(&x.similarity)
            .then(y.shared_tokens.cmp(&x.shared_tokens))
            .then_with(|| (&x.a, &x.b).cmp(&(&y.a, &y.b)))
    });
    let submissions = cohort.summaries(entries, &pairs, &scores.nearest);
    CohortReport {
        method: Method {
            tokens: "tree-sitter-python leaves; identifiers, strings and numbers normalised; comments dropped".into(),
            k: K,
            window: super::WINDOW,
            threshold: opts.threshold,
            max_share: opts.max_share,
            common_above: cohort.common_above,
            min_shared_tokens: opts.min_shared_tokens,
            template: tpl_shown,
            template_kgrams: tpl.len(),
        },
        submissions,
        not_compared,
        ignored_template: cohort.ignored_template,
        ignored_common: cohort.ignored_common,
        pairs_sharing: scores.pairs_sharing,
        pairs,
    }
}

/// Steps 1 and 2: each submission's distinct and own fingerprints, and what was left out.
struct Cohort {
    /// Each submission's distinct fingerprints, sorted.
    distinct: Vec<Vec<u64>>,
    /// Each submission's fingerprints that count (not template, not common), sorted.
    own: Vec<Vec<u64>>,
    /// The number of submissions each fingerprint outside the template is found in.
    df: HashMap<u64, u32>,
    /// Fingerprints in more submissions than this are common code.
    common_above: usize,
    /// Distinct fingerprints left out as template code, and as common code.
    ignored_template: usize,
    ignored_common: usize,
}

/// A pair at or above the threshold: `a < b`, their shared own fingerprints, their similarity.
struct Candidate {
    a: usize,
    b: usize,
    shared: u32,
    similarity: f64,
}

/// Step 3's scores over every pair.
struct Scores {
    /// Each submission's most similar other one, and their similarity.
    nearest: Vec<Option<(usize, f64)>>,
    /// The pairs at or above the threshold, in index order.
    candidates: Vec<Candidate>,
    /// Pairs sharing at least one own fingerprint.
    pairs_sharing: usize,
}

/// The index of the pair `a < b` in a triangular table.
fn tri(a: usize, b: usize) -> usize {
    b * (b - 1) / 2 + a
}

impl Cohort {
    fn new(entries: &[Entry<'_>], tpl: &HashSet<u64>, max_share: f64) -> Self {
        let distinct: Vec<Vec<u64>> = entries
            .iter()
            .map(|e| {
                let mut v: Vec<u64> = e.fp.prints.iter().map(|p| p.hash).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let mut ignored_template: HashSet<u64> = HashSet::new();
        let mut df: HashMap<u64, u32> = HashMap::new();
        for hs in &distinct {
            for h in hs {
                if tpl.contains(h) {
                    ignored_template.insert(*h);
                } else {
                    *df.entry(*h).or_default() += 1;
                }
            }
        }
        let common_above = ((max_share * entries.len() as f64).floor() as usize).max(2);
        let ignored_common = df.values().filter(|c| **c as usize > common_above).count();
        let mut cohort = Cohort {
            distinct,
            own: Vec::new(),
            df,
            common_above,
            ignored_template: ignored_template.len(),
            ignored_common,
        };
        cohort.own = cohort
            .distinct
            .iter()
            .map(|hs| hs.iter().copied().filter(|h| cohort.counted(h)).collect())
            .collect();
        cohort
    }

    /// Whether a fingerprint counts: neither template nor common code.
    fn counted(&self, h: &u64) -> bool {
        self.df
            .get(h)
            .is_some_and(|c| (*c as usize) <= self.common_above)
    }

    /// The own fingerprints each pair shares (a triangular table, [`tri`]), through the
    /// postings of the fingerprints two or more submissions share.
    fn shared_counts(&self) -> Vec<u32> {
        let n = self.own.len();
        let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
        for (i, hs) in self.own.iter().enumerate() {
            for h in hs {
                if self.df.get(h).is_some_and(|c| *c >= 2) {
                    postings.entry(*h).or_default().push(i as u32);
                }
            }
        }
        let mut shared = vec![0u32; n * n.saturating_sub(1) / 2];
        for subs in postings.values() {
            for (x, &b) in subs.iter().enumerate() {
                for &a in &subs[..x] {
                    shared[tri(a as usize, b as usize)] += 1;
                }
            }
        }
        shared
    }

    /// The similarity of a pair sharing `s` own fingerprints: 2·shared / (own(a) + own(b)).
    fn dice(&self, a: usize, b: usize, s: u32) -> f64 {
        let total = self.own[a].len() + self.own[b].len();
        if total == 0 {
            0.0
        } else {
            2.0 * f64::from(s) / total as f64
        }
    }

    /// Every pair's similarity: each submission's nearest, the pairs at or above `threshold`.
    fn scores(&self, shared: &[u32], threshold: f64) -> Scores {
        let n = self.own.len();
        let mut nearest: Vec<Option<(usize, f64)>> = vec![None; n];
        let mut candidates = Vec::new();
        let mut pairs_sharing = 0;
        for b in 1..n {
            for a in 0..b {
                let s = shared[tri(a, b)];
                if s == 0 {
                    continue;
                }
                pairs_sharing += 1;
                let d = self.dice(a, b, s);
                for (me, other) in [(a, b), (b, a)] {
                    if nearest[me].is_none_or(|(_, best)| d > best) {
                        nearest[me] = Some((other, d));
                    }
                }
                if d >= threshold {
                    candidates.push(Candidate {
                        a,
                        b,
                        shared: s,
                        similarity: d,
                    });
                }
            }
        }
        Scores {
            nearest,
            candidates,
            pairs_sharing,
        }
    }

    /// Step 4: a candidate pair with its details, scores and whether it is flagged.
    fn pair(&self, entries: &[Entry<'_>], c: &Candidate, opts: &Options) -> Pair {
        let (a, b, s) = (c.a, c.b, c.shared);
        let own_a = self.own[a].len().max(1) as f64;
        let own_b = self.own[b].len().max(1) as f64;
        let mut p = details(entries[a].fp, entries[b].fp, &|h| self.counted(h), opts);
        p.a = entries[a].id.to_string();
        p.b = entries[b].id.to_string();
        p.similarity = c.similarity;
        p.a_in_b = f64::from(s) / own_a;
        p.b_in_a = f64::from(s) / own_b;
        p.shared_fingerprints = s as usize;
        p.flagged = p.shared_tokens >= opts.min_shared_tokens;
        p
    }

    /// Each submission's summary: its figures, its nearest, the flagged pairs it is in.
    fn summaries(
        &self,
        entries: &[Entry<'_>],
        pairs: &[Pair],
        nearest: &[Option<(usize, f64)>],
    ) -> Vec<SubmissionSummary> {
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| SubmissionSummary {
                id: e.id.to_string(),
                commit: e.commit.map(str::to_string),
                files: e.fp.files.len(),
                tokens: e.fp.tokens,
                fingerprints: self.distinct[i].len(),
                own_fingerprints: self.own[i].len(),
                nearest: nearest[i].map(|(o, d)| Nearest {
                    id: entries[o].id.to_string(),
                    similarity: d,
                }),
                flagged_with: flagged_with(pairs, e.id),
                notes: e.fp.notes.clone(),
            })
            .collect()
    }
}

/// The submissions `id` forms a flagged pair with, in the pairs' order.
fn flagged_with(pairs: &[Pair], id: &str) -> Vec<String> {
    let mut out: Vec<String> = pairs
        .iter()
        .filter(|p| p.flagged)
        .filter_map(|p| {
            if p.a == id {
                Some(p.b.clone())
            } else if p.b == id {
                Some(p.a.clone())
            } else {
                None
            }
        })
        .collect();
    out.dedup();
    out
}

/// Union length of the intervals `[s, s + K)`.
fn covered(mut starts: Vec<u32>) -> u64 {
    starts.sort_unstable();
    starts.dedup();
    let mut total = 0u64;
    let mut end = 0u64;
    for s in starts {
        let (s, e) = (u64::from(s), u64::from(s) + K as u64);
        if s >= end {
            total += e - s;
        } else if e > end {
            total += e - end;
        }
        end = end.max(e);
    }
    total
}

struct Run {
    a_first: usize,
    a_last: usize,
    b_first: usize,
    b_last: usize,
}

fn span(fp: &Fingerprints, first: usize, last: usize) -> Span {
    let (f, l) = (&fp.prints[first], &fp.prints[last]);
    Span {
        path: fp
            .files
            .get(f.file as usize)
            .map(|x| x.path.clone())
            .unwrap_or_default(),
        line_from: f.line_from,
        line_to: l.line_to.max(f.line_from),
        excerpt: None,
    }
}

fn tokens_of(prints: &[Print], first: usize, last: usize) -> u64 {
    u64::from(prints[last].pos.saturating_sub(prints[first].pos)) + K as u64
}

/// Shared tokens and fragments of a pair (ids and scores filled in by the caller).
fn details(
    a: &Fingerprints,
    b: &Fingerprints,
    counted: &dyn Fn(&u64) -> bool,
    opts: &Options,
) -> Pair {
    let occ = occurrences(b, counted);
    let matched = match_runs(a, b, &occ);
    let shared_tokens = covered(matched.a_starts).min(covered(matched.b_starts));
    let (longest, fragments) = listed_fragments(a, b, &matched.runs, opts.max_fragments);
    Pair {
        a: String::new(),
        b: String::new(),
        similarity: 0.0,
        a_in_b: 0.0,
        b_in_a: 0.0,
        shared_fingerprints: 0,
        shared_tokens,
        longest_fragment_tokens: longest,
        flagged: false,
        fragments,
        fragments_total: matched.runs.len(),
        notes: matched.notes,
    }
}

/// Where each counted fingerprint occurs in a submission (at most [`MAX_OCCURRENCES`] places).
fn occurrences(fp: &Fingerprints, counted: &dyn Fn(&u64) -> bool) -> HashMap<u64, Vec<u32>> {
    let mut occ: HashMap<u64, Vec<u32>> = HashMap::new();
    for (j, p) in fp.prints.iter().enumerate() {
        if counted(&p.hash) {
            let v = occ.entry(p.hash).or_default();
            if v.len() < MAX_OCCURRENCES {
                v.push(j as u32);
            }
        }
    }
    occ
}

/// The matched fingerprints of a pair: where they start on each side, and their runs.
struct Matched {
    a_starts: Vec<u32>,
    b_starts: Vec<u32>,
    runs: Vec<Run>,
    notes: Vec<String>,
}

/// Matches `a`'s fingerprints against their occurrences in `b` (`occ`), in `a`'s order, and
/// joins the matches into runs (at most [`MAX_MATCHES`] matches; a note says when it stopped).
fn match_runs(a: &Fingerprints, b: &Fingerprints, occ: &HashMap<u64, Vec<u32>>) -> Matched {
    let mut notes = Vec::new();
    let mut a_starts = Vec::new();
    let mut b_starts = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    // The last run on each diagonal (j - i): a matched pair extends it when it is at most
    // MAX_GAP fingerprints further on both sides, in the same files.
    let mut diagonals: HashMap<i64, usize> = HashMap::new();
    let mut matches = 0usize;
    'outer: for (i, p) in a.prints.iter().enumerate() {
        let Some(js) = occ.get(&p.hash) else {
            continue;
        };
        a_starts.push(p.pos);
        for &j in js {
            matches += 1;
            if matches > MAX_MATCHES {
                notes.push(format!(
                    "fragment search stopped after {MAX_MATCHES} matched fingerprints (repetitive code)"
                ));
                break 'outer;
            }
            let ju = j as usize;
            b_starts.push(b.prints[ju].pos);
            let diagonal = ju as i64 - i as i64;
            let extends = diagonals.get(&diagonal).copied().filter(|&r| {
                let run = &runs[r];
                i - run.a_last <= MAX_GAP
                    && a.prints[run.a_last].file == p.file
                    && b.prints[run.b_last].file == b.prints[ju].file
            });
            let r = match extends {
                Some(r) => {
                    runs[r].a_last = i;
                    runs[r].b_last = ju;
                    r
                }
                None => {
                    runs.push(Run {
                        a_first: i,
                        a_last: i,
                        b_first: ju,
                        b_last: ju,
                    });
                    runs.len() - 1
                }
            };
            diagonals.insert(diagonal, r);
        }
    }
    Matched {
        a_starts,
        b_starts,
        runs,
        notes,
    }
}

/// The longest fragment's tokens, and the fragments listed: the longest first, skipping one
/// that overlaps a listed fragment on both sides, at most `max_fragments`.
fn listed_fragments(
    a: &Fingerprints,
    b: &Fingerprints,
    runs: &[Run],
    max_fragments: usize,
) -> (u64, Vec<Fragment>) {
    let mut frags: Vec<(u64, &Run)> = runs
        .iter()
        .map(|r| {
            (
                tokens_of(&a.prints, r.a_first, r.a_last)
                    .min(tokens_of(&b.prints, r.b_first, r.b_last)),
                r,
            )
        })
        .collect();
    frags.sort_by(|x, y| {
        y.0.cmp(&x.0)
            .then(x.1.a_first.cmp(&y.1.a_first))
            .then(x.1.b_first.cmp(&y.1.b_first))
    });
    let longest = frags.first().map(|f| f.0).unwrap_or(0);
    let mut listed: Vec<&Run> = Vec::new();
    let mut fragments = Vec::new();
    for (t, r) in &frags {
        if fragments.len() >= max_fragments {
            break;
        }
        let overlaps = listed.iter().any(|l| {
            r.a_first <= l.a_last
                && l.a_first <= r.a_last
                && r.b_first <= l.b_last
                && l.b_first <= r.b_last
        });
        if overlaps {
            continue;
        }
        listed.push(r);
        fragments.push(Fragment {
            tokens: *t,
            a: span(a, r.a_first, r.a_last),
            b: span(b, r.b_first, r.b_last),
        });
    }
    (longest, fragments)
}

/// Lines quoted per side of a fragment at most, and characters per line.
const MAX_EXCERPT_LINES: usize = 60;
const MAX_LINE_CHARS: usize = 240;

/// The lines `from..=to` of a text, bounded.
pub fn excerpt(text: &str, from: u32, to: u32) -> String {
    let from = from.max(1) as usize;
    let to = (to as usize).max(from);
    let mut out = String::new();
    let wanted = to - from + 1;
    for (n, line) in text
        .lines()
        .skip(from - 1)
        .take(wanted.min(MAX_EXCERPT_LINES))
        .enumerate()
    {
        if n > 0 {
            out.push('\n');
        }
        let mut chars = line.chars();
        out.extend(chars.by_ref().take(MAX_LINE_CHARS));
        if chars.next().is_some() {
            out.push('…');
        }
    }
    if wanted > MAX_EXCERPT_LINES {
        out.push_str(&format!("\n… ({} more lines)", wanted - MAX_EXCERPT_LINES));
    }
    out
}

/// Quotes the fragments of the flagged pairs: `texts(id)` gives a submission's fingerprints
/// with their texts (read again from the store or the sources).
pub fn quote(report: &mut CohortReport, texts: &mut dyn FnMut(&str) -> Option<Fingerprints>) {
    let mut cache: HashMap<String, Option<Fingerprints>> = HashMap::new();
    let ids: HashSet<String> = report
        .flagged()
        .flat_map(|p| [p.a.clone(), p.b.clone()])
        .collect();
    for id in ids {
        let fp = texts(&id).filter(|f| f.texts.is_some());
        cache.insert(id, fp);
    }
    let fill = |span: &mut Span, fp: Option<&Fingerprints>| {
        let Some(fp) = fp else {
            return;
        };
        let Some(i) = fp.files.iter().position(|f| f.path == span.path) else {
            return;
        };
        if let Some(t) = fp.texts.as_ref().and_then(|t| t.get(i)) {
            span.excerpt = Some(excerpt(t, span.line_from, span.line_to));
        }
    };
    for p in report.pairs.iter_mut().filter(|p| p.flagged) {
        let (fa, fb) = (
            cache.get(&p.a).and_then(Option::as_ref),
            cache.get(&p.b).and_then(Option::as_ref),
        );
        for f in &mut p.fragments {
            fill(&mut f.a, fa);
            fill(&mut f.b, fb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::{Limits, SourceFile, fingerprint};

    fn fp(files: &[(&str, &str)]) -> Fingerprints {
        fingerprint(
            files
                .iter()
                .map(|(p, t)| SourceFile {
                    path: p.to_string(),
                    text: t.to_string(),
                })
                .collect(),
            &Limits::default(),
            Vec::new(),
        )
        .unwrap()
    }

    /// A function of distinct structure per seed (`n` statements).
    fn func(name: &str, seed: usize, n: usize) -> String {
        let mut s = format!("def {name}(a, b):\n");
        let mut x = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let line = match x % 6 {
                0 => "    a = a + b * 2\n".to_string(),
                1 => "    if a > b:\n        b = [a, b]\n".to_string(),
                2 => "    for x in range(a):\n        b += x\n".to_string(),
                3 => "    a = f(a, b)[0]\n".to_string(),
                4 => "    while a < 3:\n        a -= 1\n".to_string(),
                _ => "    b = {'k': a}.get('k', None)\n".to_string(),
            };
            s.push_str(&line);
        }
        s.push_str("    return a\n\n");
        s
    }

    #[test]
    fn a_renamed_reordered_copy_is_the_top_pair_and_template_code_never_counts() {
        let template = "class State(TypedDict):\n    x: int\n\n".to_string()
            + &func("tpl_one", 100, 30)
            + &func("tpl_two", 101, 30);
        let original = template.clone() + &func("alpha", 1, 40) + &func("beta", 2, 40);
        let copy = template.clone()
            + &func("second_thing", 2, 40).replace("a", "q")
            + &func("first_thing", 1, 40).replace("a", "q");
        let other = template.clone() + &func("gamma", 3, 25) + &func("delta", 5, 12);
        let subs = [
            ("orig", fp(&[("main.py", &original)])),
            ("copy", fp(&[("src/app.py", &copy)])),
            ("tpl", fp(&[("main.py", &template)])),
            ("other", fp(&[("x.py", &other)])),
        ];
        let entries: Vec<Entry> = subs
            .iter()
            .map(|(id, fp)| Entry {
                id,
                commit: None,
                fp,
            })
            .collect();
        let tpl_src = [SourceFile {
            path: "t.py".into(),
            text: template.clone(),
        }];
        let tset = template_kgrams(&tpl_src, &Limits::default()).unwrap();
        let r = compare(
            &entries,
            Some((&tset, "template".into())),
            vec![],
            &Options::default(),
        );
        let top = &r.pairs[0];
        assert_eq!((top.a.as_str(), top.b.as_str()), ("orig", "copy"));
        assert!(top.flagged && top.similarity > 0.8, "{top:?}");
        assert_eq!(r.flagged().count(), 1, "{:?}", r.pairs);
        let tpl = r.submissions.iter().find(|s| s.id == "tpl").unwrap();
        assert_eq!(tpl.own_fingerprints, 0);
        assert!(tpl.flagged_with.is_empty());
        // the fragments point at both files, and the longest is about a function
        let f = &top.fragments[0];
        assert_eq!(
            (f.a.path.as_str(), f.b.path.as_str()),
            ("main.py", "src/app.py")
        );
        assert!(top.longest_fragment_tokens >= 150, "{top:?}");
        assert!(top.shared_tokens > 400, "{top:?}");
        // without the template, the template code is still common to the whole cohort
        let r = compare(&entries, None, vec![], &Options::default());
        let tpl = r.submissions.iter().find(|s| s.id == "tpl").unwrap();
        assert!(tpl.flagged_with.is_empty(), "{:?}", r.pairs);
        assert_eq!(r.flagged().count(), 1);
    }

    #[test]
    fn quoting_and_coverage_are_bounded() {
        assert_eq!(covered(vec![0, 5, 100]), 23 + 5 + 23);
        let text: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        let e = excerpt(&text, 3, 4);
        assert_eq!(e, "line 3\nline 4");
        let e = excerpt(&text, 1, 200);
        assert!(e.ends_with("(140 more lines)"), "{e}");
        let long = "x".repeat(1000);
        assert_eq!(excerpt(&long, 1, 1).chars().count(), MAX_LINE_CHARS + 1);
    }

    #[test]
    fn repetitive_junk_does_not_blow_up_a_pair() {
        let junk = "x = [1, 2, 3]\n".repeat(30_000);
        let a = fp(&[("a.py", &junk)]);
        let b = fp(&[("b.py", &junk)]);
        let entries = [
            Entry {
                id: "a",
                commit: None,
                fp: &a,
            },
            Entry {
                id: "b",
                commit: None,
                fp: &b,
            },
        ];
        let r = compare(&entries, None, vec![], &Options::default());
        assert!(r.pairs.len() <= 1);
    }
}
