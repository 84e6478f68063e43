//! k-gram hashes selected by winnowing (Schleimer, Wilkerson, Aiken, SIGMOD 2003): of every
//! window of `w` consecutive k-gram hashes the minimum is kept (the rightmost one on a tie),
//! each selected position once. Any run of at least `w + k - 1` tokens two files share yields
//! at least one common fingerprint; runs shorter than `k` tokens never do.

use super::tokens::Token;

/// A selected k-gram of a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Print {
    pub hash: u64,
    /// Index of the file in the submission's file list.
    pub file: u32,
    /// Index of the k-gram's first token in the submission's token stream (files in order).
    pub pos: u32,
    /// Line of the k-gram's first token, and of its last one.
    pub line_from: u32,
    pub line_to: u32,
}

/// splitmix64's finaliser: spreads the rolling hash so that minima are chosen at random
/// places, as winnowing assumes.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const BASE: u64 = 0x0100_0000_01b3;

/// Hashes of every k-gram of `tokens` (a polynomial rolling hash, mixed).
pub fn kgram_hashes(tokens: &[Token], k: usize) -> Vec<u64> {
    if k == 0 || tokens.len() < k {
        return Vec::new();
    }
    let mut pow = 1u64; // BASE^(k-1)
    for _ in 1..k {
        pow = pow.wrapping_mul(BASE);
    }
    let mut h = 0u64;
    let mut out = Vec::with_capacity(tokens.len() + 1 - k);
    for (i, t) in tokens.iter().enumerate() {
        if i >= k {
            h = h.wrapping_sub(pow.wrapping_mul(u64::from(tokens[i - k].value) + 1));
        }
        h = h.wrapping_mul(BASE).wrapping_add(u64::from(t.value) + 1);
        if i + 1 >= k {
            out.push(mix(h));
        }
    }
    out
}

/// Indices of the k-gram hashes winnowing selects with window `w`. A sequence shorter than a
/// window selects its minimum once.
pub fn winnow(hashes: &[u64], w: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if hashes.is_empty() {
        return out;
    }
    let w = w.max(1).min(hashes.len());
    // Monotone deque of candidate indices: hashes increasing from front to back; the front is
    // the window's minimum, the rightmost on ties.
    let mut dq: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut last: Option<usize> = None;
    for i in 0..hashes.len() {
        while dq.back().is_some_and(|&b| hashes[b] >= hashes[i]) {
            dq.pop_back();
        }
        dq.push_back(i);
        if i + 1 < w {
            continue;
        }
        let start = i + 1 - w;
        while dq.front().is_some_and(|&f| f < start) {
            dq.pop_front();
        }
        if let Some(&m) = dq.front()
            && last != Some(m)
        {
            out.push(m);
            last = Some(m);
        }
    }
    out
}

/// The fingerprints of one file's tokens: `offset` is the index of its first token in the
/// submission's stream.
pub fn fingerprint_file(
    tokens: &[Token],
    file: u32,
    offset: u32,
    k: usize,
    w: usize,
    out: &mut Vec<Print>,
) {
    let hashes = kgram_hashes(tokens, k);
    for i in winnow(&hashes, w) {
        out.push(Print {
            hash: hashes[i],
            file,
            pos: offset.saturating_add(i as u32),
            line_from: tokens[i].line,
            line_to: tokens[i + k - 1].line,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(vals: &[u16]) -> Vec<Token> {
        vals.iter()
            .enumerate()
            .map(|(i, v)| Token {
                value: *v,
                line: i as u32 + 1,
            })
            .collect()
    }

    #[test]
    fn kgrams_are_position_independent() {
        let a = kgram_hashes(&toks(&[1, 2, 3, 4, 5]), 3);
        let b = kgram_hashes(&toks(&[9, 9, 1, 2, 3, 4, 5]), 3);
        assert_eq!(a.len(), 3);
        assert_eq!(&b[2..], &a[..]);
        assert_ne!(a[0], a[1]);
        assert!(kgram_hashes(&toks(&[1, 2]), 3).is_empty());
    }

    #[test]
    fn winnowing_keeps_window_minima_once_and_rightmost_on_ties() {
        let h = [5, 3, 7, 3, 9, 8, 1, 4];
        // windows of 3: [5,3,7]→1, [3,7,3]→3 (rightmost), [7,3,9]→3, [3,9,8]→3, [9,8,1]→6, [8,1,4]→6
        assert_eq!(winnow(&h, 3), vec![1, 3, 6]);
        assert_eq!(winnow(&[4, 2, 8], 10), vec![1]);
        assert!(winnow(&[], 4).is_empty());
        // density about 2/(w+1) on random hashes
        let hashes: Vec<u64> = (0..100_000u64).map(mix).collect();
        let n = winnow(&hashes, 17).len();
        assert!((9_000..13_500).contains(&n), "{n}");
    }

    #[test]
    fn a_shared_run_of_w_plus_k_minus_1_tokens_always_shares_a_fingerprint() {
        let k = 5;
        let w = 4;
        let common: Vec<u16> = (100..100 + (w + k - 1) as u16).collect();
        for pad in 0..20u16 {
            let mut a: Vec<u16> = (0..pad).collect();
            a.extend(&common);
            let mut b: Vec<u16> = (1000..1000 + 7).collect();
            b.extend(&common);
            b.extend(2000..2000 + pad);
            let (mut pa, mut pb) = (Vec::new(), Vec::new());
            fingerprint_file(&toks(&a), 0, 0, k, w, &mut pa);
            fingerprint_file(&toks(&b), 0, 0, k, w, &mut pb);
            assert!(
                pa.iter().any(|p| pb.iter().any(|q| q.hash == p.hash)),
                "pad {pad}"
            );
        }
    }
}
