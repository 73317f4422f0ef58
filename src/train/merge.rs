//! One merge applied to the pre-tokens that hold its pair: rewritten in place, with the
//! pair counts and the pair -> pre-tokens lists updated as it goes.
//!
//! Every pair a merge creates holds the merged symbol. When that symbol is new (nearly
//! always: its bytes were no symbol before), so are all those pairs, and their counts are
//! final once the rewrite is done: they are gathered and counted at the end
//! ([`Trainer::count_gained`]) instead of one hash update each in the table of every pair.
//! SuperBPE's second stage on 100 MB of English creates 3.0M pairs in 20,000 merges, and
//! all but a few thousand stay far below the top.

use super::heap::Entry;
use super::pair_counts::PairCounts;
use super::symbols::Symbol;
use super::trainer::{fits, pretoken_count, Trainer};
use crate::prefetch::prefetch;
use rustc_hash::FxHashMap;

impl<S: Symbol> Trainer<S> {
    /// Merges `(a, b)` into `new` in every pre-token of `pretokens`, updating the counts and
    /// lists of the pairs it removes; the pairs it creates go to `gained`.
    pub(super) fn rewrite(
        &mut self,
        pretokens: &[u32],
        (a, b): (S, S),
        new: S,
        gained: &mut Gained<'_, S>,
    ) {
        let Trainer {
            syms,
            arena,
            meta,
            big_counts,
            counts,
            lists,
            floor,
            max_len,
            ..
        } = self;
        let (floor, max_len) = (*floor, *max_len);
        let fits = |x: S, y: S| fits(syms, max_len, x, y);
        for (j, &wi) in pretokens.iter().enumerate() {
            // Visiting a pre-token is two cache misses (its record, its symbols): `perf` put
            // them at two thirds of the loop. The list is known ahead, so fetch ahead.
            if let Some(&ahead) = pretokens.get(j + 16) {
                prefetch(&meta[ahead as usize]);
            }
            if let Some(&ahead) = pretokens.get(j + 8) {
                prefetch(arena.as_ptr().wrapping_add(meta[ahead as usize].start));
            }
            let m = &mut meta[wi as usize];
            let c = pretoken_count(m, wi, big_counts);
            let w = &mut arena[m.start..m.start + m.len as usize];
            // Rewrite in place, left to right, non-overlapping (as the reference does).
            let n = w.len();
            let (mut i, mut out) = (0, 0);
            let mut changed = false;
            // The last symbol written is a merge made in this pass: its left pair was
            // already accounted for by the previous occurrence.
            let mut prev_merged = false;
            while i < n {
                if i + 1 < n && w[i] == a && w[i + 1] == b {
                    changed = true;
                    if out > 0 {
                        if prev_merged {
                            // "a b a b" -> "new new": (b, a) was removed by the previous
                            // occurrence; the pair between the two merges is (new, new).
                            if fits(new, new) {
                                gained.add(counts, lists, (new, new), c, wi);
                            }
                        } else {
                            let left = w[out - 1];
                            dec(counts, lists, floor, (left, a), c);
                            if fits(left, new) {
                                gained.add(counts, lists, (left, new), c, wi);
                            }
                        }
                    }
                    if i + 2 < n {
                        let right = w[i + 2];
                        dec(counts, lists, floor, (b, right), c);
                        let next_merges = i + 3 < n && right == a && w[i + 3] == b;
                        if !next_merges && fits(new, right) {
                            gained.add(counts, lists, (new, right), c, wi);
                        }
                    }
                    w[out] = new;
                    prev_merged = true;
                    i += 2;
                } else {
                    w[out] = w[i];
                    prev_merged = false;
                    i += 1;
                }
                out += 1;
            }
            if changed {
                m.len = out as u32;
            }
        }
    }
}

#[inline]
pub(super) fn dec<S: Symbol>(
    counts: &mut PairCounts<S>,
    lists: &mut FxHashMap<(S, S), Vec<u32>>,
    floor: u64,
    pair: (S, S),
    c: u64,
) {
    if let Some((before, after)) = counts.sub(pair, c) {
        // At 0 no pre-token holds the pair any more (counts are exact). Below the floor it
        // leaves the index: a refill lists it again if it is ever near the top.
        if after == 0 || (after < floor && before >= floor) {
            lists.remove(&pair);
        }
    }
}

/// Where [`Trainer::rewrite`] puts the occurrences of the pairs it creates.
pub(super) enum Gained<'a, S> {
    /// Counted and listed at once (the merged symbol existed already, so its pairs may be
    /// counted and listed already); every pair whose count rose is noted.
    Counted(&'a mut Vec<(S, S)>),
    /// Gathered as `(key, pre-token, count)` for [`Trainer::count_gained`], where the key
    /// says which pair of the new symbol (see [`gained_key`]).
    Gathered(S, &'a mut Vec<(u32, u32, u64)>),
}

/// A pair of the new symbol `new` as a number below twice the number of symbols: `2x` for
/// `(x, new)` (`(new, new)` included), `2y + 1` for `(new, y)`.
#[inline]
fn gained_key<S: Symbol>(new: S, (x, y): (S, S)) -> u32 {
    if y == new {
        2 * x.id() as u32
    } else {
        2 * y.id() as u32 + 1
    }
}

/// The pair of a [`gained_key`].
#[inline]
fn gained_pair<S: Symbol>(new: S, key: u32) -> (S, S) {
    let other = S::from_id(key / 2);
    if key & 1 == 0 {
        (other, new)
    } else {
        (new, other)
    }
}

impl<S: Symbol> Gained<'_, S> {
    /// One more occurrence of `pair` in pre-token `wi`, counted `c` times.
    #[inline]
    fn add(
        &mut self,
        counts: &mut PairCounts<S>,
        lists: &mut FxHashMap<(S, S), Vec<u32>>,
        pair: (S, S),
        c: u64,
        wi: u32,
    ) {
        match self {
            Gained::Gathered(new, gathered) => gathered.push((gained_key(*new, pair), wi, c)),
            Gained::Counted(increased) => {
                if counts.add(pair, c) {
                    // First seen in this merge, which visits all its pre-tokens: its list is
                    // complete.
                    lists.insert(pair, vec![wi]);
                } else if let Some(list) = lists.get_mut(&pair) {
                    if list.last() != Some(&wi) {
                        list.push(wi);
                    }
                }
                increased.push(pair);
            }
        }
    }
}

/// A listed pair's sum in [`Trainer::count_gained`].
const LISTED: u64 = u64::MAX;

impl<S: Symbol> Trainer<S> {
    /// Counts the pairs the merge that made the new symbol `new` gathered (all new, all
    /// final), summed in an array by key (a sort of the occurrences took 6% of SuperBPE's
    /// time): a pair below `keep_from` is dropped; one at the floor or above is listed and
    /// queued.
    pub(super) fn count_gained(
        &mut self,
        new: S,
        gathered: &mut Vec<(u32, u32, u64)>,
        keep_from: u64,
    ) {
        let sums = &mut self.gained_sums;
        if sums.len() < 2 * self.syms.bytes.len() {
            sums.resize(2 * self.syms.bytes.len(), 0);
        }
        let touched = &mut self.gained_touched;
        for &(key, _, c) in gathered.iter() {
            let sum = &mut sums[key as usize];
            if *sum == 0 {
                touched.push(key);
            }
            *sum += c;
        }
        let mut listed = false;
        for &key in touched.iter() {
            let count = sums[key as usize];
            if count < keep_from {
                continue;
            }
            let pair = gained_pair(new, key);
            self.counts.add(pair, count);
            if count >= self.floor {
                self.lists.insert(pair, Vec::new());
                self.heap
                    .push(Entry::new(count, pair, &self.syms), &self.syms);
                sums[key as usize] = LISTED;
                listed = true;
            }
        }
        if listed {
            for &(key, wi, _) in gathered.iter() {
                if sums[key as usize] == LISTED {
                    let list = self
                        .lists
                        .get_mut(&gained_pair(new, key))
                        .expect("listed pair");
                    if list.last() != Some(&wi) {
                        list.push(wi);
                    }
                }
            }
        }
        for &key in touched.iter() {
            sums[key as usize] = 0;
        }
        touched.clear();
        gathered.clear();
    }
}
