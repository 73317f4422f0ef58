//! One merge applied to the pre-tokens that hold its pair: rewritten in place, with the
//! pair counts and the pair -> pre-tokens lists updated as it goes.

use super::pair_counts::PairCounts;
use super::symbols::Symbol;
use super::trainer::{fits, pretoken_count, Trainer};
use crate::prefetch::prefetch;
use rustc_hash::FxHashMap;

impl<S: Symbol> Trainer<S> {
    /// Merges `(a, b)` into `new` in every pre-token of `pretokens`, updating pair counts and
    /// lists; every pair whose count rose goes into `increased`.
    pub(super) fn rewrite(
        &mut self,
        pretokens: &[u32],
        (a, b): (S, S),
        new: S,
        increased: &mut Vec<(S, S)>,
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
                                inc(counts, lists, increased, (new, new), c, wi);
                            }
                        } else {
                            let left = w[out - 1];
                            dec(counts, lists, floor, (left, a), c);
                            if fits(left, new) {
                                inc(counts, lists, increased, (left, new), c, wi);
                            }
                        }
                    }
                    if i + 2 < n {
                        let right = w[i + 2];
                        dec(counts, lists, floor, (b, right), c);
                        let next_merges = i + 3 < n && right == a && w[i + 3] == b;
                        if !next_merges && fits(new, right) {
                            inc(counts, lists, increased, (new, right), c, wi);
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

#[inline]
pub(super) fn inc<S: Symbol>(
    counts: &mut PairCounts<S>,
    lists: &mut FxHashMap<(S, S), Vec<u32>>,
    increased: &mut Vec<(S, S)>,
    pair: (S, S),
    c: u64,
    wi: u32,
) {
    if counts.add(pair, c) {
        // First seen in this merge, which visits all its pre-tokens: its list is complete.
        lists.insert(pair, vec![wi]);
    } else if let Some(list) = lists.get_mut(&pair) {
        if list.last() != Some(&wi) {
            list.push(wi);
        }
    }
    increased.push(pair);
}
