//! The index of the merge loop: lowering the floor and listing the pre-tokens of the pairs
//! above it (a refill), and the scan for a merged pair without a list.

use super::heap::{Entry, PairHeap};
use super::symbols::Symbol;
use super::trainer::{release_free_memory, PretokenMeta, Trainer, BIG_COUNT};
use rustc_hash::FxHashMap;

impl<S: Symbol> Trainer<S> {
    /// The pre-tokens holding `pair`, by scanning the arena: for a merged pair without a list,
    /// which only a duplicate-bytes merge can make (see [`Trainer`]).
    pub(super) fn pretokens_with(&self, pair: (S, S)) -> Vec<u32> {
        let mut found = Vec::new();
        for (wi, m) in self.meta.iter().enumerate() {
            let w = &self.arena[m.start..m.start + m.len as usize];
            if w.windows(2).any(|p| (p[0], p[1]) == pair) {
                found.push(wi as u32);
            }
        }
        found
    }

    /// The heap is empty, so every pair has count < `floor`: lowers the floor to the highest
    /// count / `divisor` (not below `min_frequency`, nor below `give_up_below`, where a run
    /// gives up), queues the pairs at or above it and lists their pre-tokens, in one pass
    /// that also compacts the arena (merges shrink pre-tokens in place; 1 GB of mixed
    /// corpora: 39M symbols at the start, 24M after 2,000 merges) and drops pre-tokens left
    /// with one symbol. `false` when no pair reaches `min_frequency` (or `give_up_below`:
    /// the run gives up).
    pub(super) fn refill(&mut self) -> bool {
        let Some(highest) = self.counts.iter().map(|(_, c)| c).max() else {
            return false;
        };
        if highest < self.min_frequency {
            return false;
        }
        if highest < self.give_up_below {
            self.gave_up = true;
            return false;
        }
        self.floor = (highest / self.divisor)
            .max(self.min_frequency)
            .max(self.give_up_below);
        let floor = self.floor;
        let entries: Vec<Entry<S>> = self
            .counts
            .iter()
            .filter(|&(_, c)| c >= floor)
            .map(|(pair, c)| Entry::new(c, pair, &self.syms))
            .collect();
        // Lists exist only for pairs >= the old floor, and none is left: start afresh (pre-token
        // ids change below).
        self.lists = if self.index {
            entries.iter().map(|e| (e.pair, Vec::new())).collect()
        } else {
            FxHashMap::default()
        };
        self.heap = PairHeap::from_vec(entries, &self.syms);
        // Most pair occurrences are of pairs not listed: a bit per hash skips their
        // lookups (the pass over 39M symbols went from about 0.4 s to 0.1 s).
        let filter = FixedPairFilter::new(self.lists.keys().copied());

        let (mut out, mut kept) = (0usize, 0usize);
        let mut big_counts = FxHashMap::default();
        for wi in 0..self.meta.len() {
            let m = self.meta[wi];
            let len = m.len as usize;
            if len < 2 {
                continue;
            }
            self.arena.copy_within(m.start..m.start + len, out);
            self.meta[kept] = PretokenMeta { start: out, ..m };
            let id = kept as u32;
            if m.count == BIG_COUNT {
                big_counts.insert(id, self.big_counts[&(wi as u32)]);
            }
            for p in self.arena[out..out + len].windows(2) {
                if !filter.may_hold((p[0], p[1])) {
                    continue;
                }
                if let Some(list) = self.lists.get_mut(&(p[0], p[1])) {
                    if list.last() != Some(&id) {
                        list.push(id);
                    }
                }
            }
            out += len;
            kept += 1;
        }
        self.arena.truncate(out);
        self.arena.shrink_to_fit();
        self.meta.truncate(kept);
        self.meta.shrink_to_fit();
        self.big_counts = big_counts;
        for list in self.lists.values_mut() {
            list.shrink_to_fit();
        }
        release_free_memory();
        true
    }
}

/// A set of pairs that may answer "yes" wrongly but never "no" wrongly: one bit per hash in
/// a fixed 2^20 bits (128 KiB, inside L2), however many pairs it holds.
///
/// Not the encoder's `PairFilter` (the same hash), which sizes itself at 16 bits a pair for
/// a table fixed at build: a refill lists from a few pairs to millions, and its pass tests
/// every pair occurrence in the arena (39M on 1 GB of mixed corpora), so a filter sparse
/// while few pairs are listed skips nearly every lookup (1,000 pairs: 0.1% false "yes",
/// against 6% at 16 bits a pair).
pub(super) struct FixedPairFilter {
    bits: Vec<u64>,
}

impl FixedPairFilter {
    const LOG_BITS: u32 = 20;

    pub(super) fn new<S: Symbol>(pairs: impl Iterator<Item = (S, S)>) -> Self {
        let mut f = FixedPairFilter {
            bits: vec![0; 1 << (Self::LOG_BITS - 6)],
        };
        for p in pairs {
            let h = Self::hash(p);
            f.bits[h >> 6] |= 1 << (h & 63);
        }
        f
    }

    #[inline]
    fn hash<S: Symbol>((a, b): (S, S)) -> usize {
        let x = ((a.id() as u64) << 32) | b.id() as u64;
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - Self::LOG_BITS)) as usize
    }

    #[inline]
    pub(super) fn may_hold<S: Symbol>(&self, p: (S, S)) -> bool {
        let h = Self::hash(p);
        self.bits[h >> 6] & (1 << (h & 63)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn pretokens_with_finds_exactly_the_words_holding_a_pair() {
        let pretokens: Vec<(&[u8], u64)> = vec![(b"abc", 1), (b"bca", 2), (b"ab", 3), (b"xaxb", 4)];
        let t = Trainer::<u16>::new(pretokens.iter().map(|(w, c)| (*w, *c)), 1);
        let (a, b, x) = (b'a' as u16, b'b' as u16, b'x' as u16);
        assert_eq!(t.pretokens_with((a, b)), vec![0, 2]);
        assert_eq!(t.pretokens_with((x, a)), vec![3]);
        assert_eq!(t.pretokens_with((b, a)), Vec::<u32>::new());
    }

    /// No false "no"; few false "yes" (1,000 pairs set 1,000 of 2^20 bits, so about 0.1%).
    #[test]
    pub(super) fn pair_filter_holds_its_pairs_and_few_others() {
        let held: Vec<(u32, u32)> = (0..1000u32).map(|i| (i * 7, i * 13 + 1)).collect();
        let f = FixedPairFilter::new(held.iter().copied());
        assert!(held.iter().all(|&p| f.may_hold(p)));
        let wrong = (0..100_000u32)
            .map(|i| (i + 70_000, i))
            .filter(|&p| f.may_hold(p))
            .count();
        assert!(wrong < 1000, "{wrong} false yes of 100,000");
    }
}
