//! Training on long pre-tokens cut where no merge can reach: the pre-tokens of SuperBPE's
//! second stage are as long as sentences, and the merge loop rewrites a whole pre-token for
//! each merge it holds (20 MB of English, 20,130 pre-tokens of ~1,000 bytes: 2.2 s for 3,200
//! merges). Cut into the pieces a merge can span and counted as equal pieces, they train
//! as fast as words (0.29 s, the cut included).
//!
//! The cut, and why it changes no merge. Let `count0(x, y)` be how often start symbols
//! `x y` are adjacent before any merge, and cut every pre-token between each adjacent `x y`
//! with `count0(x, y) < tau`. A symbol is made of start symbols; call its first and last
//! ones its ends. As long as every symbol has one pair of ends (no merge rebuilt an existing
//! symbol's bytes from other ends: the trainer reports one that did as `ambiguous`), every
//! occurrence of a pair `(X, Y)` sits where `last(X) first(Y)` were adjacent, so
//! `count(X, Y) <= count0(last(X), first(Y))`. A pair with an occurrence at a cut therefore
//! counts less than `tau`, in the cut pre-tokens and in the whole ones alike, and a pair
//! without one counts the same in both. So while the top pair counts `tau` or more it is the
//! same pair in both, with the same count and the same ties, and merging it changes both the
//! same way. A run whose every merge counted `tau` or more, with no ambiguous symbol, is the
//! run on the whole pre-tokens; any other is rerun with a lower `tau`, and at last uncut.

use super::symbols::Symbol;
use super::trainer::{PretokenMeta, Trainer, BIG_COUNT};
use super::{Merge, Rules, Stop};
use crate::{Error, Progress};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Pre-tokens of start symbols, with their counts.
pub(super) type Encoded = Vec<(Vec<u32>, u64)>;

/// Below this mean length (start symbols per pre-token) pre-tokens are trained whole: words
/// (a mean of 2-3 symbols after encoding) gain nothing from a cut.
const LONG: u64 = 4;

/// How many times as many distinct pairs as merges stay joinable at the first try. SuperBPE
/// from 28,800 to 32,000 tokens on 20 MB: the first threshold is 41 (English), 32 (Chinese),
/// 48 (code), the last merge counts 72, 62, 126; from 180,000 to 200,000 on 100 MB of
/// English 31 and 56. At 2 the threshold there is 62, and the run fails at merge 18,334.
const PAIRS_PER_MERGE: usize = 4;

/// The trainer's floor divisor (see `FLOOR_DIVISOR`) in a cut run.
const ATTEMPT_FLOOR_DIVISOR: u64 = 64;

/// Learns up to `num_merges` merges from `pretokens` as [`Trainer::encoded`] would, cutting
/// long pre-tokens first when that is proven to change nothing (see the module).
pub(super) fn train<S: Symbol>(
    tokens: Vec<Vec<u8>>,
    pretokens: Encoded,
    num_merges: usize,
    rules: &Rules,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    let (symbols, weight) = pretokens.iter().fold((0u64, 0u64), |(s, n), (w, c)| {
        (s + w.len() as u64 * c, n + c)
    });
    if symbols >= LONG * weight.max(1) {
        let bounds = PairBounds::new(&pretokens);
        let mut tau = bounds.first_tau(num_merges);
        while tau > 1 {
            let cut = (&pretokens, &bounds, tau);
            if let Some(done) = attempt::<S>(&tokens, cut, num_merges, rules, progress)? {
                return Ok(done);
            }
            tau /= 2;
        }
    }
    Trainer::<S>::encoded(tokens, pretokens, rules)?.run(num_merges, progress)
}

/// The run on the pre-tokens cut at `tau`, or `None` when it is not proven to be the run on
/// the whole ones.
fn attempt<S: Symbol>(
    tokens: &[Vec<u8>],
    (pretokens, bounds, tau): (&Encoded, &PairBounds, u64),
    num_merges: usize,
    rules: &Rules,
    progress: &mut Progress<'_>,
) -> Result<Option<(Vec<Merge>, Stop)>, Error> {
    let pieces = cut(pretokens, bounds, tau);
    let mut t = Trainer::<S>::encoded(tokens.to_vec(), pieces.iter().map(|(p, c)| (p, *c)), rules)?;
    t.track_ends();
    // A pair of start symbols below tau stays below it in a run that is kept: its count
    // rises only if a merge rebuilds one of its symbols, and a start symbol rebuilt is a
    // symbol with other ends, which fails the run. So it is never merged nor compared:
    // dropped, it leaves a table small enough for the cache (100 MB of English at 200,000
    // tokens: 66,000 of 355,000 pairs are kept).
    t.counts.retain_at_least(tau);
    t.cut_at_dropped_pairs();
    // A merge below tau, or an ambiguous symbol, fails the run: stop there. A run that does
    // not give up made every merge at tau or more; only its last merge may be ambiguous.
    // Likewise the pairs a merge creates: their counts rise only in the merge that makes
    // one of their symbols (or in a rebuild, which fails the run), so one counted below tau
    // then is never merged, and the trainer drops it (`Trainer::count_gained`).
    t.give_up_below = tau;
    // The floor never goes below tau, so fewer refills reach it: SuperBPE from 180,000 to
    // 200,000 tokens on 100 MB of English refills twice instead of six times (0.46 s
    // against 0.61 s of passes over the pieces).
    t.divisor = ATTEMPT_FLOOR_DIVISOR;
    let (merges, stop) = t.run(num_merges, progress)?;
    // Stopping early for want of pairs is the whole run's stop too only if no cut pair
    // could have reached min_frequency.
    let complete = stop == Stop::Done || tau <= rules.min_frequency.max(1);
    Ok((!t.gave_up && !t.ambiguous && complete).then_some((merges, stop)))
}

impl<S: Symbol> Trainer<S> {
    /// Cuts the pre-tokens again where a pair is not counted (below `tau`, or too long for
    /// `max_token_length`), now that the counts are exact: no merge of a kept run joins
    /// across it, by the module's argument with the exact counts as bounds (100 MB of English
    /// at 200,000 tokens: 16.9M symbols before, 16.0M after).
    fn cut_at_dropped_pairs(&mut self) {
        // Four shares a core, each cut into its own arena, then joined: a look-up of every
        // pair is most of the pass (100 MB of English: 0.29 s on one core).
        let share = self
            .meta
            .len()
            .div_ceil(4 * rayon::current_num_threads())
            .max(1);
        let (arena, counts, big) = (&self.arena, &self.counts, &self.big_counts);
        type Part<S> = (Vec<S>, Vec<PretokenMeta>, Vec<(usize, u64)>);
        let parts: Vec<Part<S>> = self
            .meta
            .par_chunks(share)
            .enumerate()
            .map(|(k, part)| {
                let (mut syms, mut meta, mut bigs) = (Vec::new(), Vec::new(), Vec::new());
                for (j, m) in part.iter().enumerate() {
                    let w = &arena[m.start..m.start + m.len as usize];
                    let mut start = 0;
                    for i in 1..=w.len() {
                        if i < w.len() && counts.get(&(w[i - 1], w[i])) > 0 {
                            continue;
                        }
                        if i - start >= 2 {
                            if m.count == BIG_COUNT {
                                bigs.push((meta.len(), big[&((k * share + j) as u32)]));
                            }
                            meta.push(PretokenMeta {
                                start: syms.len(),
                                len: (i - start) as u32,
                                ..*m
                            });
                            syms.extend_from_slice(&w[start..i]);
                        }
                        start = i;
                    }
                }
                (syms, meta, bigs)
            })
            .collect();
        self.arena = Vec::new(); // freed before the joined one is allocated
        let mut arena = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        let mut meta = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
        let mut big_counts = FxHashMap::default();
        for (syms, part, bigs) in parts {
            let (at, first) = (arena.len(), meta.len());
            big_counts.extend(bigs.into_iter().map(|(i, c)| ((first + i) as u32, c)));
            meta.extend(part.into_iter().map(|m| PretokenMeta {
                start: at + m.start,
                ..m
            }));
            arena.extend_from_slice(&syms);
        }
        (self.arena, self.meta, self.big_counts) = (arena, meta, big_counts);
    }
}

/// Upper bounds of `count0`, how often each pair of start symbols is adjacent: counts in
/// 2^20 buckets by a hash of the pair. A bound that is too high only cuts less, and a flat
/// array costs a third of a hash map of the pairs (20 MB of English, 996,409 distinct pairs:
/// 103 ms as a map).
pub(super) struct PairBounds {
    /// `u32::MAX` stands for that many or more.
    buckets: Vec<u32>,
}

impl PairBounds {
    const LOG_BUCKETS: u32 = 20;

    /// One table per core, summed.
    fn new(pretokens: &Encoded) -> Self {
        let share = pretokens
            .len()
            .div_ceil(rayon::current_num_threads())
            .max(1);
        let buckets = pretokens
            .par_chunks(share)
            .map(|part| {
                let mut b = vec![0u32; 1 << Self::LOG_BUCKETS];
                for (w, c) in part {
                    let c = (*c).min(u32::MAX as u64) as u32;
                    for p in w.windows(2) {
                        let x = &mut b[Self::bucket(p[0], p[1])];
                        *x = x.saturating_add(c);
                    }
                }
                b
            })
            .reduce_with(|mut a, b| {
                a.iter_mut()
                    .zip(&b)
                    .for_each(|(x, y)| *x = x.saturating_add(*y));
                a
            })
            .unwrap_or_default();
        PairBounds { buckets }
    }

    #[inline]
    fn bucket(a: u32, b: u32) -> usize {
        let x = (a as u64) << 32 | b as u64;
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - Self::LOG_BUCKETS)) as usize
    }

    #[cfg(test)]
    fn bound(&self, a: u32, b: u32) -> u64 {
        match self.buckets[Self::bucket(a, b)] {
            u32::MAX => u64::MAX,
            c => c as u64,
        }
    }

    /// The buckets bounded below `tau`, a bit each: 128 KB, where the counts take 4 MB, so
    /// that the cut's look-up of every pair stays in L2.
    fn below(&self, tau: u64) -> Below {
        let mut bits = vec![0u64; self.buckets.len().div_ceil(64)];
        for (i, &c) in self.buckets.iter().enumerate() {
            if (c as u64) < tau && c != u32::MAX {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        Below(bits)
    }

    /// The first threshold: the `PAIRS_PER_MERGE * num_merges`-th highest bound (a run fails
    /// when its merges go below it, so this leaves room for the counts to fall).
    fn first_tau(&self, num_merges: usize) -> u64 {
        let mut counts: Vec<u32> = self.buckets.iter().copied().filter(|&c| c > 0).collect();
        let k = PAIRS_PER_MERGE.saturating_mul(num_merges.max(1));
        if k >= counts.len() {
            return 1;
        }
        counts.select_nth_unstable_by(k, |a, b| b.cmp(a));
        counts[k] as u64
    }
}

/// [`PairBounds::below`]: whether a pair's bound is below the threshold.
struct Below(Vec<u64>);

impl Below {
    #[inline]
    fn holds(&self, a: u32, b: u32) -> bool {
        let i = PairBounds::bucket(a, b);
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
}

/// A piece of a cut pre-token: up to [`SHORT_PIECE`] symbols held inline, or a longer one
/// borrowed from its pre-token.
pub(super) enum Piece<'a> {
    Short([u32; SHORT_PIECE], u8),
    Long(&'a [u32]),
}

impl AsRef<[u32]> for Piece<'_> {
    fn as_ref(&self) -> &[u32] {
        match self {
            Piece::Short(s, n) => &s[..*n as usize],
            Piece::Long(s) => s,
        }
    }
}

/// Pieces of at most this many symbols are counted as equal pieces; longer ones are kept as
/// they come. 100 MB of English cut for SuperBPE from 180,000 to 200,000 tokens: pieces of
/// 2-4 symbols occur 2.29M times as 1.1M distinct ones, pieces of 5 or more 1.62M times as
/// 1.58M, so hashing them would save 1.5% of the trainer's symbols at a third of the cut's time.
const SHORT_PIECE: usize = 4;

/// The pre-tokens cut between every pair bounded below `tau`: equal short pieces counted as
/// one, long ones as they come (see [`SHORT_PIECE`]); on all cores.
fn cut<'a>(pretokens: &'a Encoded, bounds: &PairBounds, tau: u64) -> Vec<(Piece<'a>, u64)> {
    let below = bounds.below(tau);
    // Four shares a core: a busy core's share is taken up by the others.
    let share = pretokens
        .len()
        .div_ceil(4 * rayon::current_num_threads())
        .max(1);
    type Part<'a> = (Vec<(u128, u64)>, Vec<(Piece<'a>, u64)>);
    let parts: Vec<Part<'a>> = pretokens
        .par_chunks(share)
        .map(|part| {
            let (mut short, mut long) = (Vec::new(), Vec::new());
            for (w, c) in part {
                let mut start = 0;
                for i in 1..=w.len() {
                    if i == w.len() || below.holds(w[i - 1], w[i]) {
                        match &w[start..i] {
                            [] | [_] => {}
                            p if p.len() <= SHORT_PIECE && !p.contains(&u32::MAX) => {
                                let key = p
                                    .iter()
                                    .enumerate()
                                    .fold(0u128, |k, (j, &s)| k | ((s as u128 + 1) << (32 * j)));
                                short.push((key, *c));
                            }
                            p => long.push((Piece::Long(p), *c)),
                        }
                        start = i;
                    }
                }
            }
            (short, long)
        })
        .collect();
    let mut short: Vec<(u128, u64)> = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let mut pieces = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
    for (s, l) in parts {
        short.extend(s);
        pieces.extend(l);
    }
    // Sorted, equal keys sit together: a sort on both cores beats a hash table per share
    // merged into one (2.29M short pieces, 1.1M distinct).
    short.par_sort_unstable_by_key(|&(k, _)| k);
    let mut last = 0;
    for (k, c) in short {
        if k == last {
            if let Some((_, n)) = pieces.last_mut() {
                *n += c;
            }
            continue;
        }
        last = k;
        let (mut s, mut n) = ([0u32; SHORT_PIECE], 0);
        while n < SHORT_PIECE && (k >> (32 * n)) as u32 != 0 {
            s[n] = ((k >> (32 * n)) as u32) - 1;
            n += 1;
        }
        pieces.push((Piece::Short(s, n as u8), c));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::rules::tests::by_ids;
    use std::collections::BTreeMap;

    /// The start tokens of [`long_pretokens`]: symbols 256 and 257.
    const TOKENS: [&[u8]; 2] = [b"ab", b"ba"];

    /// Long pre-tokens over 2-4 letters and [`TOKENS`]: many equal pairs, and merges that
    /// rebuild a start token from other ends ((a, b) and the token "ab").
    fn long_pretokens(seed: u64) -> Encoded {
        let mut rng = crate::test_rng::Lcg(seed);
        let mut next = move |m: u64| rng.below(m as usize) as u64;
        let letters = 2 + next(3);
        (0..5 + next(40))
            .map(|_| {
                let len = 1 + next(120) as usize;
                let w = (0..len)
                    .map(|_| match next(letters + 1) {
                        0 => 256 + next(2) as u32,
                        l => b'a' as u32 + l as u32 - 1,
                    })
                    .collect();
                (w, 1 + next(6))
            })
            .collect()
    }

    fn rule_sets() -> Vec<Rules> {
        let short = Rules {
            max_token_length: Some(4),
            ..Rules::cs336(1)
        };
        vec![
            Rules::cs336(1),
            Rules::cs336(4),
            by_ids(true, false, TOKENS.len()),
            by_ids(false, true, TOKENS.len()),
            short,
        ]
    }

    fn tokens() -> Vec<Vec<u8>> {
        TOKENS.iter().map(|t| t.to_vec()).collect()
    }

    fn whole(p: &Encoded, n: usize, rules: &Rules) -> (Vec<Merge>, Stop) {
        let mut t = Trainer::<u16>::encoded(tokens(), p.clone(), rules).unwrap();
        t.run(n, &mut |_, _| true).unwrap()
    }

    /// On 120 random corpora under five rule sets and seven thresholds, every cut run the
    /// checks accept is the whole run, and `train` always returns the whole run. The checks
    /// are needed: some runs they refuse differ from the whole run.
    #[test]
    fn every_accepted_cut_run_is_the_whole_run() {
        let (mut accepted, mut refused_differ) = (0, 0);
        for seed in 0..120 {
            let p = long_pretokens(seed);
            let bounds = PairBounds::new(&p);
            for rules in rule_sets() {
                let want = whole(&p, 60, &rules);
                for tau in [2, 3, 5, 8, 13, 21, 55] {
                    let cut_at = (&p, &bounds, tau);
                    match attempt::<u16>(&tokens(), cut_at, 60, &rules, &mut |_, _| true).unwrap() {
                        Some(got) => {
                            assert_eq!(got, want, "seed {seed}, tau {tau}");
                            accepted += 1;
                        }
                        None => {
                            let pieces = cut(&p, &bounds, tau);
                            let mut t = Trainer::<u16>::encoded(tokens(), pieces, &rules).unwrap();
                            refused_differ += (t.run(60, &mut |_, _| true).unwrap() != want) as u32;
                        }
                    }
                }
                let got = train::<u16>(tokens(), p.clone(), 60, &rules, &mut |_, _| true).unwrap();
                assert_eq!(got, want, "seed {seed}");
            }
        }
        assert!(accepted > 300, "{accepted} accepted");
        assert!(refused_differ > 150, "{refused_differ} refused runs differ");
    }

    /// A merge that rebuilds a start token from other ends is seen: start token "ab" ends
    /// in itself, the merge (a, b) rebuilds it with ends a and b. A merge of new bytes is not.
    #[test]
    fn a_symbol_rebuilt_from_other_ends_is_ambiguous() {
        let (a, b, c) = (b'a' as u32, b'b' as u32, b'c' as u32);
        let run = |p: Encoded| {
            let mut t = Trainer::<u16>::encoded(vec![b"ab".to_vec()], p, &Rules::cs336(1));
            let t = t.as_mut().unwrap();
            t.track_ends();
            t.run(1, &mut |_, _| true).unwrap();
            t.ambiguous
        };
        assert!(run(vec![(vec![a, b], 5), (vec![256, c], 1)]));
        assert!(!run(vec![(vec![256, c], 5), (vec![a, b], 1)]));
    }

    /// The cut holds each piece between pairs bounded below `tau` with its total count, as
    /// a map of pieces would: short pieces (some with the largest symbol) summed, long ones
    /// as many times as they come.
    #[test]
    fn cut_counts_every_piece() {
        for seed in 0..60 {
            let mut p = long_pretokens(seed);
            if seed % 3 == 0 {
                p.push((vec![u32::MAX, 7, u32::MAX], 2));
                p.push((vec![u32::MAX, 7, u32::MAX], 3));
            }
            let bounds = PairBounds::new(&p);
            for tau in [1, 2, 5, 21, u64::MAX] {
                let mut want: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
                for (w, c) in &p {
                    let mut start = 0;
                    for i in 1..=w.len() {
                        if i == w.len() || bounds.bound(w[i - 1], w[i]) < tau {
                            if i - start >= 2 {
                                *want.entry(w[start..i].to_vec()).or_default() += c;
                            }
                            start = i;
                        }
                    }
                }
                let mut got: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
                let mut short = std::collections::BTreeSet::new();
                for (piece, c) in cut(&p, &bounds, tau) {
                    let s = piece.as_ref().to_vec();
                    if s.len() <= SHORT_PIECE && !s.contains(&u32::MAX) {
                        assert!(short.insert(s.clone()), "seed {seed}: {s:?} twice");
                    }
                    *got.entry(s).or_default() += c;
                }
                assert_eq!(got, want, "seed {seed}, tau {tau}");
            }
        }
    }

    /// Upper bounds never fall below the true counts, and the first threshold is one of them.
    #[test]
    fn bounds_are_at_least_the_counts() {
        for seed in 0..50 {
            let p = long_pretokens(seed);
            let bounds = PairBounds::new(&p);
            let mut counts: rustc_hash::FxHashMap<(u32, u32), u64> = Default::default();
            for (w, c) in &p {
                for q in w.windows(2) {
                    *counts.entry((q[0], q[1])).or_default() += c;
                }
            }
            for (&(a, b), &c) in &counts {
                assert!(bounds.bound(a, b) >= c, "seed {seed}");
            }
        }
    }
}
