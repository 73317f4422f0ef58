//! The merge loop: the trainer's state, its construction from counted pre-tokens, and the
//! loop that pops the top pair, merges it and queues the pairs whose counts rose.

use super::heap::{Entry, PairHeap};
use super::merge::Gained;
use super::pair_counts::PairCounts;
use super::rules::Rules;
use super::symbols::{Symbol, Symbols};
use super::{Merge, Stop};
use crate::{Error, Progress};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

/// A distinct pre-token: where its symbols are in the arena, and its count. 16 bytes, not 24
/// (2.45M pre-tokens on 1 GB of mixed corpora: 20 MB): a count >= `BIG_COUNT` is kept in
/// [`Trainer::big_counts`] instead. A pre-token listed twice under a pair is simply visited
/// twice: the second visit finds no occurrence left and changes nothing.
#[derive(Clone, Copy)]
pub(super) struct PretokenMeta {
    pub(super) start: usize,
    pub(super) count: u32,
    pub(super) len: u32,
}

/// The pre-tokens' symbols, their records, and the counts of `BIG_COUNT` or more by record.
pub(super) type Arena<S> = (Vec<S>, Vec<PretokenMeta>, FxHashMap<u32, u64>);

/// `PretokenMeta::count` saying "look in `big_counts`".
pub(super) const BIG_COUNT: u32 = u32::MAX;

/// How far below the highest pair count the index floor goes at each refill (see
/// [`Trainer`]). A larger factor means fewer refills (each a pass over the arena) but more
/// pairs indexed at once: on 1 GB, 16 peaks higher than 4 (260 against 216 MB) and is no
/// faster.
pub(super) const FLOOR_DIVISOR: u64 = 4;

/// The merge loop's state.
///
/// Only pairs with count >= `floor` are in the heap and have a pre-token list. Most pairs never
/// come near the top: on 1 GB of mixed corpora at 32,000 tokens there are 3.2M pairs at
/// the end, 2.5M of them with count < 64, while the last merge has count ~600. Listing
/// every pair's pre-tokens (and queueing every pair) would be most of an 880 MB peak.
///
/// Exactness: every pair >= `floor` is queued, so the top of the heap is the top pair. A
/// list, where there is one, holds every pre-token with its pair: lists are made complete (by
/// a refill's pass, or for a pair first seen in this merge, from its first pre-token on) and
/// get every pre-token that gains the pair after that. A merged pair without a list finds its
/// pre-tokens by scanning the arena ([`Trainer::pretokens_with`]).
///
/// That scan is rare (never, on the 1 GB corpus): a pair's count only rises in the merge
/// that creates one of its symbols (all of a symbol's occurrences appear in the merge that
/// makes it), and that merge lists it. Only a merge whose bytes already exist as a symbol
/// (DESIGN's duplicate-bytes rule) can raise an unlisted pair. When no pair >= `floor` is
/// left, [`Trainer::refill`] lowers the floor to a quarter of the highest remaining count
/// and lists those pairs' pre-tokens in one pass over the arena: 8 refills on the 1 GB corpus,
/// 0.1-0.35 s each.
pub(super) struct Trainer<S: Symbol> {
    pub(super) syms: Symbols,
    /// All pre-tokens' symbols; each pre-token's metadata in one 16-byte record: rewriting a
    /// pre-token costs two cache misses instead of three or four (with a Vec per pre-token
    /// and separate count and `seen` arrays, those misses would be over half the loop's time).
    pub(super) arena: Vec<S>,
    pub(super) meta: Vec<PretokenMeta>,
    /// The counts of pre-tokens counted `BIG_COUNT` times or more, by pre-token id.
    pub(super) big_counts: FxHashMap<u32, u64>,
    /// Every pair with a nonzero count (a pair at 0 is removed).
    pub(super) counts: PairCounts<S>,
    /// The pre-tokens holding each pair with count >= `floor` (and, within a merge, each pair
    /// first seen in it): every pre-token with the pair is listed, some maybe twice or stale.
    pub(super) lists: FxHashMap<(S, S), Vec<u32>>,
    pub(super) heap: PairHeap<S>,
    pub(super) floor: u64,
    /// The floor goes to the highest count / `divisor` at each refill.
    pub(super) divisor: u64,
    /// Whether a refill lists pre-tokens; only tests turn it off, to make every merge take the
    /// arena-scan path.
    pub(super) index: bool,
    pub(super) min_frequency: u64,
    /// [`Rules::count_tokens`], and how many symbols there were before the first merge.
    pub(super) count_tokens: bool,
    pub(super) start_symbols: usize,
    /// [`Rules::max_token_length`]; `usize::MAX` when there is none.
    pub(super) max_len: usize,
    /// How many merged pairs had no list (see [`Trainer::pretokens_with`]), for tests.
    pub(super) scans: usize,
    /// Per symbol, the first and the last start symbol it is made of, kept when
    /// [`Trainer::track_ends`] asked (the proof of `rare_cuts.rs` needs them).
    pub(super) ends: Option<Vec<(u32, u32)>>,
    /// Whether a merge rebuilt an existing symbol (only while `ends` are kept).
    pub(super) ambiguous: bool,
    /// The loop stops (`gave_up`) before a merge counted below this, or once `ambiguous`
    /// when `ends` are kept: `rare_cuts.rs` then knows the run is of no use.
    pub(super) give_up_below: u64,
    pub(super) gave_up: bool,
    /// [`Trainer::count_gained`]'s sums by pair key (zero between merges), and the keys it
    /// set.
    pub(super) gained_sums: Vec<u64>,
    pub(super) gained_touched: Vec<u32>,
}

/// Appends a pre-token (or piece) counted `c` times to an arena: its record in `meta`, its
/// count in `big` when the record cannot hold it.
pub(super) fn push_pretoken<T>(
    arena: &mut Vec<T>,
    meta: &mut Vec<PretokenMeta>,
    big: &mut FxHashMap<u32, u64>,
    pretoken: impl ExactSizeIterator<Item = T>,
    c: u64,
) {
    if c >= BIG_COUNT as u64 {
        big.insert(meta.len() as u32, c);
    }
    meta.push(PretokenMeta {
        start: arena.len(),
        count: c.min(BIG_COUNT as u64) as u32,
        len: pretoken.len() as u32,
    });
    arena.extend(pretoken);
}

/// Whether pair `(x, y)` is counted: always, unless a maximum token length
/// ([`Rules::max_token_length`]) rules it out.
#[inline]
pub(super) fn fits<S: Symbol>(syms: &Symbols, max_len: usize, x: S, y: S) -> bool {
    if max_len == usize::MAX {
        return true;
    }
    let (lx, ly) = (syms.get(x.id()).len(), syms.get(y.id()).len());
    (lx == 1 && ly == 1) || lx + ly < max_len
}

impl<S: Symbol> Trainer<S> {
    #[cfg(test)]
    pub(super) fn new<W: AsRef<[u8]>>(
        pretokens: impl IntoIterator<Item = (W, u64)>,
        min_frequency: u64,
    ) -> Self {
        Self::with_rules(pretokens, &Rules::cs336(min_frequency))
    }

    pub(super) fn with_rules<W: AsRef<[u8]>>(
        pretokens: impl IntoIterator<Item = (W, u64)>,
        rules: &Rules,
    ) -> Self {
        // What counting freed (its per-thread tables) need not stay beside the arena.
        release_free_memory();
        let pretokens = pretokens.into_iter();
        // Pre-tokens of one byte have no pair and never change: leave them out. The pre-tokens are
        // gathered as bytes and widened to symbols only once the caller's table is gone:
        // the table, the bytes and the pre-token records peak lower than the table beside the
        // symbols (1 GB of mixed corpora: 39 MB of bytes, 78 MB of u16 symbols).
        let mut bytes: Vec<u8> = Vec::new();
        let mut meta: Vec<PretokenMeta> = Vec::with_capacity(pretokens.size_hint().0);
        let mut big_counts = FxHashMap::default();
        for (w, c) in pretokens {
            let w = w.as_ref();
            if w.len() >= 2 && c > 0 {
                push_pretoken(&mut bytes, &mut meta, &mut big_counts, w.iter().copied(), c);
            }
        }
        meta.shrink_to_fit();
        // The iterator, and with it the caller's count table when it was consumed, is gone.
        release_free_memory();
        let arena: Vec<S> = bytes.iter().map(|&b| S::from_id(b as u32)).collect();
        drop(bytes);
        let syms = Symbols::new(rules.ids.as_deref(), rules.reuse);
        Self::assemble(syms, arena, meta, big_counts, rules)
    }

    /// The trainer over pre-tokens in the arena: counts their pairs.
    pub(super) fn assemble(
        syms: Symbols,
        arena: Vec<S>,
        meta: Vec<PretokenMeta>,
        big_counts: FxHashMap<u32, u64>,
        rules: &Rules,
    ) -> Self {
        let max_len = rules.max_token_length.unwrap_or(usize::MAX);
        let counts = count_pairs(&syms, max_len, &arena, &meta, &big_counts);
        Self::with_counts(syms, (arena, meta, big_counts), counts, rules)
    }

    /// The trainer over pre-tokens in the arena whose pairs are counted in `counts`.
    pub(super) fn with_counts(
        syms: Symbols,
        (arena, meta, big_counts): Arena<S>,
        counts: PairCounts<S>,
        rules: &Rules,
    ) -> Self {
        let max_len = rules.max_token_length.unwrap_or(usize::MAX);
        Trainer {
            start_symbols: syms.bytes.len(),
            syms,
            arena,
            meta,
            big_counts,
            counts,
            lists: FxHashMap::default(),
            heap: PairHeap { items: Vec::new() },
            floor: u64::MAX,
            divisor: FLOOR_DIVISOR,
            index: true,
            min_frequency: rules.min_frequency.max(1),
            count_tokens: rules.count_tokens,
            max_len,
            scans: 0,
            ends: None,
            ambiguous: false,
            give_up_below: 0,
            gave_up: false,
            gained_sums: Vec::new(),
            gained_touched: Vec::new(),
        }
    }

    /// Keeps each symbol's first and last start symbol from now on (before any merge).
    pub(super) fn track_ends(&mut self) {
        self.ends = Some((0..self.syms.bytes.len() as u32).map(|s| (s, s)).collect());
    }

    pub(super) fn run(
        &mut self,
        num_merges: usize,
        progress: &mut Progress<'_>,
    ) -> Result<(Vec<Merge>, Stop), Error> {
        let mut increased: Vec<(S, S)> = Vec::new();
        let mut gathered = Vec::new();
        let mut merges: Vec<Merge> = Vec::with_capacity(num_merges);
        let mut last_report = Instant::now();
        let report_every = Duration::from_millis(100);

        let made = |t: &Self, merges: &Vec<Merge>| {
            if t.count_tokens {
                t.syms.bytes.len() - t.start_symbols
            } else {
                merges.len()
            }
        };
        while made(self, &merges) < num_merges {
            if last_report.elapsed() >= report_every {
                last_report = Instant::now();
                if !progress(merges.len() as u64, num_merges as u64) {
                    return Err(Error::Interrupted);
                }
            }
            let Some(top) = self.heap.pop(&self.syms) else {
                if self.refill() {
                    continue;
                }
                return finish(merges, num_merges, Stop::NoPairs, progress);
            };
            let current = self.counts.get(&top.pair);
            if current != top.count {
                // Stale: re-queue with the true count (a pair whose count rose was pushed
                // again when it rose, so this only ever re-queues lower counts or duplicates).
                if current >= self.floor && current < top.count {
                    self.heap
                        .push(Entry::new(current, top.pair, &self.syms), &self.syms);
                }
                continue;
            }
            // Every pair in the heap has count >= floor >= min_frequency, and every pair
            // outside it has count < floor: `top` is the highest pair.
            if top.count < self.give_up_below || self.ambiguous {
                self.gave_up = true;
                return finish(merges, num_merges, Stop::Done, progress);
            }

            let (a, b) = top.pair;
            let (ab, bb) = (self.syms.get(a.id()), self.syms.get(b.id()));
            let merged = [ab, bb].concat();
            merges.push((ab.to_vec(), bb.to_vec()));
            let symbols_before = self.syms.bytes.len();
            let new = S::from_id(self.syms.intern(merged));
            let fresh = self.syms.bytes.len() > symbols_before;
            if let Some(ends) = &mut self.ends {
                let e = (ends[a.id()].0, ends[b.id()].1);
                // A rebuilt symbol fails the run: from other ends it breaks the bound of
                // `rare_cuts.rs`; from the same ends it gains occurrences, so its pairs'
                // counts rise again after pairs below the threshold were dropped.
                match ends.get(new.id()) {
                    Some(_) => self.ambiguous = true,
                    None => ends.push(e),
                }
            }

            let pretokens_with_pair = match self.lists.remove(&top.pair) {
                Some(list) => list,
                None => {
                    self.scans += 1;
                    self.pretokens_with(top.pair)
                }
            };
            let mut gained = if fresh {
                Gained::Gathered(new, &mut gathered)
            } else {
                Gained::Counted(&mut increased)
            };
            self.rewrite(&pretokens_with_pair, top.pair, new, &mut gained);
            // The merged pair is gone everywhere: drop it (its count was never decremented).
            self.counts.remove(&top.pair);
            if fresh {
                // A pair's count rises only in the merge that makes one of its symbols: one
                // counted below `give_up_below` now stays below it, and is never merged.
                self.count_gained(new, &mut gathered, self.give_up_below.max(1));
                continue;
            }

            increased.sort_unstable();
            increased.dedup();
            for &pair in &increased {
                match self.counts.get(&pair) {
                    c if c >= self.floor => {
                        self.heap.push(Entry::new(c, pair, &self.syms), &self.syms);
                    }
                    // A pair first seen in this merge but below the floor: unlisted.
                    _ => {
                        self.lists.remove(&pair);
                    }
                }
            }
            increased.clear();
        }
        finish(merges, num_merges, Stop::Done, progress)
    }
}

/// Every pair's count, one table per core, merged. Pairs repeat far more than they differ:
/// from bytes there are at most 65,536, and SuperBPE's second stage on 100 MB of English
/// holds 14M pair occurrences of 355,000 distinct pairs, so the tables cost little memory and
/// merging them little time beside counting on one core (0.5 s there).
fn count_pairs<S: Symbol>(
    syms: &Symbols,
    max_len: usize,
    arena: &[S],
    meta: &[PretokenMeta],
    big_counts: &FxHashMap<u32, u64>,
) -> PairCounts<S> {
    let count = |first: usize, part: &[PretokenMeta]| {
        let mut counts = FxHashMap::<(S, S), u64>::default();
        for (i, m) in part.iter().enumerate() {
            let c = pretoken_count(m, (first + i) as u32, big_counts);
            for p in arena[m.start..m.start + m.len as usize].windows(2) {
                if fits(syms, max_len, p[0], p[1]) {
                    *counts.entry((p[0], p[1])).or_default() += c;
                }
            }
        }
        counts
    };
    let share = meta.len().div_ceil(rayon::current_num_threads()).max(1);
    let tables: Vec<_> = meta
        .par_chunks(share)
        .enumerate()
        .map(|(i, part)| count(i * share, part))
        .collect();
    let mut counts = PairCounts::default();
    for table in tables {
        for (pair, c) in table {
            counts.add(pair, c);
        }
    }
    counts
}

#[inline]
pub(super) fn pretoken_count(m: &PretokenMeta, wi: u32, big_counts: &FxHashMap<u32, u64>) -> u64 {
    if m.count == BIG_COUNT {
        big_counts[&wi]
    } else {
        m.count as u64
    }
}

/// The last progress report (so a caller sees the final count and a callback error is
/// not lost), then the result.
pub(super) fn finish(
    merges: Vec<Merge>,
    num_merges: usize,
    stop: Stop,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    if !progress(merges.len() as u64, num_merges as u64) {
        return Err(Error::Interrupted);
    }
    Ok((merges, stop))
}

/// Hands freed heap pages back to the OS. glibc keeps freed small blocks resident: after
/// the count table's 2.45M pre-tokens (1 GB of mixed corpora) were read into the arena and
/// freed, 40 MB stayed in RssAnon, and after counting 30 MB more. Costs a few ms.
pub(super) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointers; it only returns unused pages to the OS.
        unsafe {
            malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain algorithm, written for clarity: recount every pair of every pre-token at each
    /// merge, take the highest (count, bytes(left), bytes(right)), merge left to right.
    /// Tokens are their bytes, so equal merges combine as DESIGN's duplicate-bytes rule says.
    pub(super) fn naive(pretokens: &[(Vec<u8>, u64)], n: usize, min_frequency: u64) -> Vec<Merge> {
        let mut ws: Vec<(Vec<Vec<u8>>, u64)> = pretokens
            .iter()
            .map(|(w, c)| (w.iter().map(|&b| vec![b]).collect(), *c))
            .collect();
        let mut merges = Vec::new();
        while merges.len() < n {
            let mut counts: std::collections::BTreeMap<(Vec<u8>, Vec<u8>), u64> =
                Default::default();
            for (w, c) in &ws {
                for p in w.windows(2) {
                    *counts.entry((p[0].clone(), p[1].clone())).or_default() += c;
                }
            }
            let Some((pair, count)) = counts
                .into_iter()
                .max_by(|x, y| (x.1, &x.0).cmp(&(y.1, &y.0)))
            else {
                break;
            };
            if count < min_frequency.max(1) {
                break;
            }
            for (w, _) in &mut ws {
                let mut out: Vec<Vec<u8>> = Vec::with_capacity(w.len());
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == pair.0 && w[i + 1] == pair.1 {
                        out.push([pair.0.as_slice(), &pair.1].concat());
                        i += 2;
                    } else {
                        out.push(w[i].clone());
                        i += 1;
                    }
                }
                *w = out;
            }
            merges.push(pair);
        }
        merges
    }

    /// A small random corpus: few letters (so merges often rebuild existing bytes, e.g.
    /// "aa"+"b" and "a"+"ab"), Zipf-like counts (so the index floor moves many times).
    pub(super) fn random_pretokens(seed: u64) -> Vec<(Vec<u8>, u64)> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let letters = 2 + next(3);
        (0..20 + next(120))
            .map(|_| {
                let len = 1 + next(10) as usize;
                let w = (0..len).map(|_| b'a' + next(letters) as u8).collect();
                let c = match next(10) {
                    0 => 1 + next(5000),
                    1..=3 => 1 + next(100),
                    _ => 1 + next(4),
                };
                (w, c)
            })
            .collect()
    }

    /// The floor-indexed loop matches the plain algorithm on 400 random corpora: with u16
    /// and u32 symbols, with the floor at the top count (a refill nearly every merge) and
    /// at `min_frequency` (every pair listed), and with no lists from refills (every merge
    /// finds its pre-tokens by scanning the arena, the path for a merged pair without a list).
    #[test]
    pub(super) fn matches_plain_algorithm_on_random_corpora() {
        for seed in 0..400u64 {
            let pretokens = random_pretokens(seed);
            let min_frequency = [1, 1, 2, 7][seed as usize % 4];
            let want = naive(&pretokens, 300, min_frequency);
            let iter = || pretokens.iter().map(|(w, c)| (w, *c));
            for (divisor, index) in [
                (FLOOR_DIVISOR, true),
                (1, true),
                (u64::MAX, true),
                (4, false),
            ] {
                let mut t = Trainer::<u16>::new(iter(), min_frequency);
                (t.divisor, t.index) = (divisor, index);
                let (got, _) = t.run(300, &mut |_, _| true).unwrap();
                assert_eq!(got, want, "seed {seed}, divisor {divisor}, index {index}");
                assert_eq!(t.scans > 0, !index && !want.is_empty(), "seed {seed}");
            }
            let mut t = Trainer::<u32>::new(iter(), min_frequency);
            let (got, _) = t.run(300, &mut |_, _| true).unwrap();
            assert_eq!(got, want, "u32, seed {seed}");
        }
    }

    /// Pre-token counts of 2^32 - 1 and more live outside the 16-byte pre-token record, and follow
    /// their pre-tokens when a refill renumbers them (pre-tokens merged down to one symbol go).
    #[test]
    pub(super) fn big_pretoken_counts_match_plain_algorithm() {
        for seed in 0..100u64 {
            let pretokens: Vec<(Vec<u8>, u64)> = random_pretokens(seed)
                .into_iter()
                .map(|(w, c)| (w, c * (u32::MAX as u64 / 2) + c % 3))
                .collect();
            assert!(pretokens.iter().any(|(_, c)| *c >= u32::MAX as u64));
            let want = naive(&pretokens, 300, 1);
            let mut t = Trainer::<u16>::new(pretokens.iter().map(|(w, c)| (w, *c)), 1);
            t.divisor = 1;
            let (got, _) = t.run(300, &mut |_, _| true).unwrap();
            assert_eq!(got, want, "seed {seed}");
        }
    }
}
