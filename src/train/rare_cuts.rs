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

use super::encoded::Encoded;
use super::extend::{check_symbols, start_symbols};
use super::pair_counts::PairCounts;
use super::symbols::Symbol;
use super::trainer::{fits, push_pretoken, Arena, PretokenMeta, Trainer};
use super::{Merge, Rules, Stop};
use crate::{Error, Progress};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

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
        let n = 256 + tokens.len() as u32;
        for (w, _) in pretokens.iter() {
            check_symbols(w, n)?;
        }
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
    Trainer::<S>::encoded(tokens, pretokens.iter(), rules)?.run(num_merges, progress)
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
    let mut t = cut_trainer::<S>(tokens, (pretokens, bounds, tau), rules)?;
    t.track_ends();
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

/// The trainer of the pre-tokens cut between every pair of start symbols adjacent fewer
/// than `tau` times (or not counted at all, see `Rules::max_token_length`), where no merge
/// of a kept run joins (see the module).
fn cut_trainer<S: Symbol>(
    tokens: &[Vec<u8>],
    (pretokens, bounds, tau): (&Encoded, &PairBounds, u64),
    rules: &Rules,
) -> Result<Trainer<S>, Error> {
    let syms = start_symbols(tokens.to_vec(), rules)?;
    let below = bounds.below(tau);
    let max_len = rules.max_token_length.unwrap_or(usize::MAX);
    let counted =
        |a: u32, b: u32| !below.holds(a, b) && fits(&syms, max_len, S::from_id(a), S::from_id(b));
    let counts = counts_at_least(pretokens, &counted, tau);
    let arena = cut::<S>(pretokens, &below, &counts);
    let mut pair_counts = PairCounts::default();
    for ((a, b), c) in counts {
        pair_counts.add((S::from_id(a), S::from_id(b)), c);
    }
    Ok(Trainer::with_counts(syms, arena, pair_counts, rules))
}

/// How often each pair of start symbols for which `counted` holds is adjacent in
/// `pretokens`, for those adjacent `tau` times or more; one table per core, summed.
///
/// These are the pairs the trainer keeps: a pair adjacent fewer than `tau` times is never
/// merged nor compared in a run that is kept (its count rises only if a merge rebuilds one
/// of its symbols, and a start symbol rebuilt is a symbol with other ends, which fails the
/// run), and a pair that is not counted (`max_token_length`) never is either. The bounds
/// spare the table every pair they put below `tau` (100 MB of English at 200,000 tokens:
/// 66,000 pairs kept of 355,000).
fn counts_at_least(
    pretokens: &Encoded,
    counted: &(impl Fn(u32, u32) -> bool + Sync),
    tau: u64,
) -> FxHashMap<(u32, u32), u64> {
    let tables = pretokens.per_core(FxHashMap::default, |table, share| {
        for (w, c) in share.iter() {
            for p in w.windows(2) {
                if counted(p[0], p[1]) {
                    *table.entry((p[0], p[1])).or_default() += c;
                }
            }
        }
    });
    let mut tables = tables.into_iter();
    let mut counts = tables.next().unwrap_or_default();
    for table in tables {
        for (pair, c) in table {
            *counts.entry(pair).or_default() += c;
        }
    }
    counts.retain(|_, c| *c >= tau);
    counts.shrink_to_fit();
    counts
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
        let init = || vec![0u32; 1 << Self::LOG_BUCKETS];
        let tables = pretokens.per_core(init, |b, share| {
            for (w, c) in share.iter() {
                let c = c.min(u32::MAX as u64) as u32;
                for p in w.windows(2) {
                    let x = &mut b[Self::bucket(p[0], p[1])];
                    *x = x.saturating_add(c);
                }
            }
        });
        let buckets = tables
            .into_iter()
            .reduce(|mut a, b| {
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

/// Pieces of at most this many symbols are counted as equal pieces; longer ones are kept as
/// they come. 100 MB of English cut for SuperBPE from 180,000 to 200,000 tokens: pieces of
/// 2-4 symbols occur 2.29M times as 1.1M distinct ones, pieces of 5 or more 1.62M times as
/// 1.58M, so hashing them would save 1.5% of the trainer's symbols at a third of the cut's time.
const SHORT_PIECE: usize = 4;

/// The pre-tokens cut between every two symbols whose pair is not in `counts` (`below`
/// answers first for most of those), as the trainer's arena: equal short pieces once, with
/// their counts summed (see [`SHORT_PIECE`]), long ones as they come. Each core writes its
/// long pieces straight into an arena of its own and keeps the short ones as keys; the keys
/// are then sorted, so that equal ones sit together. A table of short pieces found by
/// their symbols costs three cache misses a piece (its slot, its record, its symbols): with
/// it, SuperBPE to 200,000 tokens on 100 MB of English took 2.5% more wall time and 5% more
/// CPU time.
fn cut<S: Symbol>(
    pretokens: &Encoded,
    below: &Below,
    counts: &FxHashMap<(u32, u32), u64>,
) -> Arena<S> {
    let total = pretokens.num_symbols();
    let mut parts = pretokens.per_core(
        || Part::new(total),
        |part, share| {
            for (w, c) in share.iter().filter(|&(_, c)| c > 0) {
                let mut start = 0;
                for i in 1..=w.len() {
                    if i < w.len()
                        && !below.holds(w[i - 1], w[i])
                        && counts.contains_key(&(w[i - 1], w[i]))
                    {
                        continue;
                    }
                    if i - start >= 2 {
                        part.add(&w[start..i], c);
                    }
                    start = i;
                }
            }
        },
    );
    // The largest part becomes the arena, the others follow it, then the short pieces.
    parts.sort_by_key(|p| std::cmp::Reverse(p.syms.len()));
    let mut short: Vec<(u128, u64)> = Vec::with_capacity(parts.iter().map(|p| p.short.len()).sum());
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Default::default();
    };
    let (mut arena, mut meta, mut big_counts) = (first.syms, first.pieces, first.big);
    short.extend(first.short);
    for part in parts {
        let (at, first) = (arena.len(), meta.len() as u32);
        big_counts.extend(part.big.into_iter().map(|(i, c)| (first + i, c)));
        meta.extend(part.pieces.into_iter().map(|m| PretokenMeta {
            start: at + m.start,
            ..m
        }));
        arena.extend_from_slice(&part.syms);
        short.extend(part.short);
    }
    short.par_sort_unstable_by_key(|&(k, _)| k);
    let mut short = short.into_iter().peekable();
    while let Some((key, mut c)) = short.next() {
        while let Some((_, more)) = short.next_if(|&(k, _)| k == key) {
            c += more;
        }
        push_pretoken(
            &mut arena,
            &mut meta,
            &mut big_counts,
            unpack(key).map(S::from_id),
            c,
        );
    }
    arena.shrink_to_fit();
    meta.shrink_to_fit();
    (arena, meta, big_counts)
}

/// A short piece as one number: symbol `j` plus one in bits `32 j..`, so that no piece is 0
/// and the length is where the zeros start. `None` for a piece that does not fit (longer
/// than [`SHORT_PIECE`], or holding `u32::MAX`).
fn pack(piece: &[u32]) -> Option<u128> {
    if piece.len() > SHORT_PIECE || piece.contains(&u32::MAX) {
        return None;
    }
    Some(
        piece
            .iter()
            .enumerate()
            .fold(0u128, |k, (j, &s)| k | ((s as u128 + 1) << (32 * j))),
    )
}

/// The symbols of a [`pack`]ed piece.
fn unpack(key: u128) -> impl ExactSizeIterator<Item = u32> {
    let len = (0..SHORT_PIECE)
        .take_while(|j| (key >> (32 * j)) as u32 != 0)
        .count();
    (0..len).map(move |j| ((key >> (32 * j)) as u32) - 1)
}

/// One core's pieces: the long ones as an arena of its own, the short ones as keys.
struct Part<S> {
    syms: Vec<S>,
    pieces: Vec<PretokenMeta>,
    big: FxHashMap<u32, u64>,
    short: Vec<(u128, u64)>,
}

impl<S: Symbol> Part<S> {
    /// Room for `total` symbols and as many pieces as they can make: pages never written are
    /// never mapped, and a Vec that grows copies itself.
    fn new(total: usize) -> Self {
        Part {
            syms: Vec::with_capacity(total),
            pieces: Vec::with_capacity(total / 2),
            big: FxHashMap::default(),
            short: Vec::new(),
        }
    }

    /// Adds `piece`, counted `c` times.
    fn add(&mut self, piece: &[u32], c: u64) {
        match pack(piece) {
            Some(key) => self.short.push((key, c)),
            None => push_pretoken(
                &mut self.syms,
                &mut self.pieces,
                &mut self.big,
                piece.iter().map(|&s| S::from_id(s)),
                c,
            ),
        }
    }
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
        let pretokens: Vec<(Vec<u32>, u64)> = (0..5 + next(40))
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
            .collect();
        Encoded::new(pretokens)
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
        let mut t = Trainer::<u16>::encoded(tokens(), p.iter(), rules).unwrap();
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
                            let mut t = cut_trainer::<u16>(&tokens(), cut_at, &rules).unwrap();
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
        let run = |p: Vec<(Vec<u32>, u64)>| {
            let mut t = Trainer::<u16>::encoded(vec![b"ab".to_vec()], p, &Rules::cs336(1));
            let t = t.as_mut().unwrap();
            t.track_ends();
            t.run(1, &mut |_, _| true).unwrap();
            t.ambiguous
        };
        assert!(run(vec![(vec![a, b], 5), (vec![256, c], 1)]));
        assert!(!run(vec![(vec![256, c], 5), (vec![a, b], 1)]));
    }

    /// The cut holds each piece between pairs adjacent fewer than `tau` times with its
    /// total count, as a map of pieces would (short pieces summed, long ones as
    /// many times as they come), and the counts it keeps are exact.
    #[test]
    fn cut_counts_every_piece() {
        for seed in 0..60 {
            let p = long_pretokens(seed);
            let mut pairs: BTreeMap<(u32, u32), u64> = BTreeMap::new();
            for (w, c) in p.iter() {
                for q in w.windows(2) {
                    *pairs.entry((q[0], q[1])).or_default() += c;
                }
            }
            let bounds = PairBounds::new(&p);
            for tau in [1, 2, 5, 21, u64::MAX] {
                let rare = |a: u32, b: u32| pairs[&(a, b)] < tau;
                let mut want: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
                for (w, c) in p.iter() {
                    let mut start = 0;
                    for i in 1..=w.len() {
                        if i == w.len() || rare(w[i - 1], w[i]) {
                            if i - start >= 2 {
                                *want.entry(w[start..i].to_vec()).or_default() += c;
                            }
                            start = i;
                        }
                    }
                }
                let below = bounds.below(tau);
                let counts = counts_at_least(&p, &|a, b| !below.holds(a, b), tau);
                let kept: BTreeMap<(u32, u32), u64> = pairs
                    .iter()
                    .filter(|(_, &c)| c >= tau)
                    .map(|(&q, &c)| (q, c))
                    .collect();
                assert_eq!(counts.into_iter().collect::<BTreeMap<_, _>>(), kept);
                let counts: FxHashMap<(u32, u32), u64> = kept.into_iter().collect();
                let (arena, meta, big) = cut::<u32>(&p, &below, &counts);
                assert!(big.is_empty());
                let mut got: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
                let mut short: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
                for m in &meta {
                    let s = arena[m.start..m.start + m.len as usize].to_vec();
                    if s.len() <= SHORT_PIECE {
                        *short.entry(s.clone()).or_default() += 1;
                    }
                    *got.entry(s).or_default() += m.count as u64;
                }
                assert_eq!(got, want, "seed {seed}, tau {tau}");
                assert!(short.values().all(|&n| n == 1), "seed {seed}");
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
            for (w, c) in p.iter() {
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
