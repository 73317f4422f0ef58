//! The incremental merge loop: learn BPE merges from counted pre-tokens.
//!
//! Pre-tokens are symbol arrays with counts. Pair counts are kept in one hash map and updated
//! incrementally: merging `(a, b)` touches only the pre-tokens listed under that pair in the
//! pair -> pre-tokens index, never the whole corpus. Only pairs near the top are indexed and
//! queued (see `Trainer`): that keeps memory near the pre-tokens themselves (1 GB of mixed
//! corpora, vocab 32,000: peak anonymous memory of the merge phase 189 MB, below counting's
//! 255 MB). A lazy max-heap (`heap.rs`) orders the queued pairs by `(count, bytes(left),
//! bytes(right))`.
//!
//! Files: `trainer.rs` the state and the loop, `merge.rs` one merge applied, `refill.rs`
//! the index, `pair_counts.rs`, `heap.rs`, `symbols.rs`, `rules.rs` (the compat modes),
//! `extend.rs` (training from an existing tokenizer), `rare_cuts.rs` (long pre-tokens cut
//! where no merge can reach).
//!
//! Exactness (DESIGN "Training"):
//! - ties go to the lexicographically greater `(bytes(left), bytes(right))`, as Python
//!   compares tuples of bytes (slices compare the same way);
//! - a merge whose bytes already exist as a symbol reuses that symbol: symbols are
//!   identified by their bytes, so counts of equal tokens combine;
//! - counts are u64: a pair seen more than 2^32 times still orders correctly.
//!
//! The result depends only on the multiset of (pre-token, count), not on hash or input order.
//!
//! [`Rules`] also reproduce the peers' trainers (`reference.py` states each rule): ties to
//! the smaller pair of ids (HuggingFace's `BpeTrainer`, rustbpe), a new token for every
//! merge (rustbpe), stopping at a number of new tokens (HuggingFace fills its vocab) and
//! HuggingFace's `max_token_length`. [`train_encoded`] starts from pre-tokens already encoded
//! with an existing tokenizer's tokens, to extend it.

mod encoded;
mod extend;
mod heap;
mod merge;
mod pair_counts;
mod piece_cache;
mod rare_cuts;
mod refill;
mod rules;
mod symbols;
mod trainer;

pub use extend::{train_encoded, train_from_base, Base};
pub use rules::Rules;

use crate::{Error, Progress};
use rules::check_ids;
use trainer::Trainer;

/// A learned merge: the bytes of its left and right parts.
pub type Merge = (Vec<u8>, Vec<u8>);

/// Why training stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `num_merges` merges were learned.
    Done,
    /// No pair had count >= `min_frequency` (or no pair was left at all).
    NoPairs,
}

/// Learns up to `num_merges` merges from `(pre-token bytes, count)` pairs.
///
/// Stops early when no pair has count >= `min_frequency` (0 is treated as 1).
/// `progress(merges_done, num_merges)` is called about every 100 ms and once at the end;
/// returning `false` stops training with [`Error::Interrupted`].
pub fn train<W: AsRef<[u8]>>(
    pretokens: &[(W, u64)],
    num_merges: usize,
    min_frequency: u64,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    train_from(
        pretokens.iter().map(|(w, c)| (w, *c)),
        num_merges,
        min_frequency,
        progress,
    )
}

/// [`train`] over any iterator of `(pre-token, count)`, so the caller need not copy its count
/// table into a slice first: on 1 GB of mixed corpora (2.45M distinct pre-tokens) that copy
/// would add 140 MB to the peak. The iterator is dropped once the pre-tokens are in the
/// trainer's arena.
pub fn train_from<W: AsRef<[u8]>>(
    pretokens: impl IntoIterator<Item = (W, u64)>,
    num_merges: usize,
    min_frequency: u64,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    train_with(
        pretokens,
        num_merges,
        &Rules::cs336(min_frequency),
        progress,
    )
}

/// [`train_from`] under any [`Rules`].
pub fn train_with<W: AsRef<[u8]>>(
    pretokens: impl IntoIterator<Item = (W, u64)>,
    num_merges: usize,
    rules: &Rules,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    check_ids(rules, 0)?;
    // Symbol ids are at most 255 + num_merges: with u16 ids the arena, the largest
    // structure, takes half the memory (1 GB of mixed corpora: 39M symbols, 78 MB against 156 MB).
    if 256 + num_merges <= 1 << 16 {
        Trainer::<u16>::with_rules(pretokens, rules).run(num_merges, progress)
    } else {
        Trainer::<u32>::with_rules(pretokens, rules).run(num_merges, progress)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn run(pretokens: &[(&[u8], u64)], n: usize) -> Vec<(String, String)> {
        let (m, _) = train(pretokens, n, 1, &mut |_, _| true).unwrap();
        m.into_iter()
            .map(|(a, b)| {
                (
                    String::from_utf8_lossy(&a).into_owned(),
                    String::from_utf8_lossy(&b).into_owned(),
                )
            })
            .collect()
    }

    pub(in crate::train) fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// Hand-derived: the CS336 handout's example ("low low low low low lower lower widest
    /// widest widest newest newest newest newest newest newest", pre-tokenized on spaces).
    #[test]
    fn handout_example() {
        let pretokens: Vec<(&[u8], u64)> =
            vec![(b"low", 5), (b"lower", 2), (b"widest", 3), (b"newest", 6)];
        let got = run(&pretokens, 6);
        let want = pairs(&[
            ("s", "t"),
            ("e", "st"),
            ("o", "w"),
            ("l", "ow"),
            ("w", "est"),
            ("n", "e"),
        ]);
        assert_eq!(got, want);
    }

    /// Overlapping runs merge left to right: "aaa" -> [aa, a]; "aaaa" -> [aa, aa].
    #[test]
    fn runs_merge_left_to_right() {
        let pretokens: Vec<(&[u8], u64)> = vec![(b"aaaa", 1), (b"aaa", 1)];
        // Pairs: aa x5. After (a,a): "aaaa" -> [aa,aa], "aaa" -> [aa,a]; pairs (aa,aa)=1,
        // (aa,a)=1; tie -> greater (bytes): (aa,aa) > (aa,a).
        let got = run(&pretokens, 3);
        assert_eq!(got, pairs(&[("a", "a"), ("aa", "aa"), ("aa", "a")]));
    }

    /// Ties go to the greater (left, right) bytes, comparing left first.
    #[test]
    fn ties_prefer_greater_bytes() {
        let pretokens: Vec<(&[u8], u64)> = vec![(b"ab", 3), (b"ba", 3), (b"zz", 1)];
        assert_eq!(run(&pretokens, 2), pairs(&[("b", "a"), ("a", "b")]));
    }

    /// A pair seen more than 2^32 times outranks one seen 10 times. With 32-bit counts,
    /// 2^32 + 1 would wrap to 1 and (c, d) would come first.
    #[test]
    fn counts_above_u32_keep_their_order() {
        let big = (1u64 << 32) + 1;
        let pretokens: Vec<(&[u8], u64)> = vec![(b"ab", big), (b"cd", 10), (b"xab", 3)];
        // (a,b) = 2^32 + 4 after adding "xab"; then (c,d) = 10 vs (x,ab) = 3.
        assert_eq!(
            run(&pretokens, 3),
            pairs(&[("a", "b"), ("c", "d"), ("x", "ab")])
        );
        // A pair count that passes 2^32 only as a sum over pre-tokens (2^31 + 2^31 would wrap
        // to 0 in a u32) also wins.
        let half = 1u64 << 31;
        let pretokens: Vec<(&[u8], u64)> = vec![(b"ab", half), (b"ab", half), (b"cd", 5)];
        assert_eq!(run(&pretokens, 2), pairs(&[("a", "b"), ("c", "d")]));
    }

    #[test]
    fn min_frequency_stops_early() {
        let pretokens: Vec<(&[u8], u64)> = vec![(b"ab", 5), (b"cd", 2)];
        let (m, stop) = train(&pretokens, 10, 3, &mut |_, _| true).unwrap();
        assert_eq!(m, vec![(b"a".to_vec(), b"b".to_vec())]);
        assert_eq!(stop, Stop::NoPairs);
    }

    #[test]
    fn output_does_not_depend_on_input_order() {
        let mut pretokens: Vec<(Vec<u8>, u64)> = (0..500u32)
            .map(|i| {
                (
                    format!("w{}x{}", i % 37, i % 11).into_bytes(),
                    (i % 7 + 1) as u64,
                )
            })
            .collect();
        let (a, _) = train(&pretokens, 100, 1, &mut |_, _| true).unwrap();
        pretokens.reverse();
        let (b, _) = train(&pretokens, 100, 1, &mut |_, _| true).unwrap();
        assert_eq!(a, b);
    }
}
