//! The pair table, packed: one `u64` a pair, in one array, so a look-up reads one cache line.
//! When a pair's merged id tells its priority (in rank mode they are equal; in GPT-2's and
//! DeepSeek's merges the id is the priority plus one offset) and ids are below 2^21, the
//! pair and its id fit one word. hashbrown reads its control bytes and then the slot
//! they point to, two dependent loads, mostly from L3 or memory for o200k's 4.3 MB. Paired
//! runs, o200k, new text: 1.04x on the 25 languages, 1.05x on English.
//!
//! The table is up to four fifths full, not half: random reads here find about 4 MB of L3
//! (a pointer chase over 4 MB took 18 ns a load, over 8 MB 129 ns), so o200k's pairs in
//! 2 MB (76% full) stay there beside the pre-token caches where 4 MB did not. The longer
//! probes cost instructions (cachegrind: look-ups 1.5x the instructions, 18% fewer misses
//! of a 4 MB last level), and time is still saved: with short BPE reading the table
//! directly (`Encoder::bpe_uncached`), new text ran 1.04-1.08x as fast under o200k and
//! cl100k on English, code and the 25 languages, 1.02x on Chinese (paired runs).

use super::zeroed_table::{Zeroed, ZeroedTable};
use crate::TokenId;

/// Ids must be below this to be packed.
pub(super) const PACKED_IDS: usize = 1 << ID_BITS;
const ID_BITS: u32 = 21;
const VALUE: u64 = (1 << ID_BITS) - 1;
/// Marks a used slot: `(0, 0) -> 0` would otherwise read as empty.
const USED: u64 = 1 << 63;

// SAFETY: a zeroed word is the empty slot.
unsafe impl Zeroed for u64 {}

/// `(left, right) -> merged id` by linear probing in a power-of-two array at most four
/// fifths full (o200k: 2^18 slots, 2 MB on a 2 MB page, 76% full).
pub(super) struct PackedPairs {
    slots: ZeroedTable<u64>,
    shift: u32,
    len: usize,
}

impl PackedPairs {
    /// The table of `pairs` (`(left, right, merged id)`, distinct pairs), every id below
    /// [`PACKED_IDS`].
    pub(super) fn new(pairs: impl ExactSizeIterator<Item = (TokenId, TokenId, TokenId)>) -> Self {
        let mut table = PackedPairs::with_capacity(pairs.len());
        for (a, b, id) in pairs {
            table.insert_first(a, b, id);
        }
        table
    }

    /// An empty table for up to `n` pairs, at most four fifths full then.
    pub(super) fn with_capacity(n: usize) -> Self {
        let bits = (n + n / 4).max(64).next_power_of_two().trailing_zeros();
        PackedPairs {
            slots: ZeroedTable::new(1 << bits),
            shift: 64 - bits,
            len: 0,
        }
    }

    /// Inserts `(a, b) -> id` unless the pair is there already; whether it inserted. Ids
    /// must be below [`PACKED_IDS`], and the pairs no more than the capacity.
    pub(super) fn insert_first(&mut self, a: TokenId, b: TokenId, id: TokenId) -> bool {
        debug_assert!((a.max(b).max(id) as usize) < PACKED_IDS);
        assert!(
            5 * self.len < 4 * self.slots.len(),
            "a packed pair table is full"
        );
        let (want, mask) = (key(a, b), self.slots.len() - 1);
        let mut i = self.index(a, b);
        while self.slots[i] != 0 {
            if self.slots[i] & !VALUE == want {
                return false;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = want | id as u64;
        self.len += 1;
        true
    }

    #[inline(always)]
    fn index(&self, a: TokenId, b: TokenId) -> usize {
        (((a as u64) << 32 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The merged id of `(a, b)`, if they merge. An id past [`PACKED_IDS`] (none is in the
    /// table) would spill into the other fields of the key.
    #[inline]
    pub(super) fn get(&self, a: TokenId, b: TokenId) -> Option<TokenId> {
        if (a | b) as usize >= PACKED_IDS {
            return None;
        }
        let want = key(a, b);
        let mask = self.slots.len() - 1;
        let mut i = self.index(a, b);
        loop {
            let s = self.slots[i];
            if s & !VALUE == want {
                return Some((s & VALUE) as TokenId);
            }
            if s == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Starts loading the slot where `(a, b)` would be.
    #[inline(always)]
    pub(super) fn prefetch(&self, a: TokenId, b: TokenId) {
        crate::prefetch::prefetch(self.slots.as_ptr().wrapping_add(self.index(a, b)));
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Every pair: `(left, right, merged id)`.
    pub(super) fn iter(&self) -> impl Iterator<Item = (TokenId, TokenId, TokenId)> + '_ {
        self.slots.iter().filter(|&&s| s != 0).map(|&s| {
            let id = |shift: u32| ((s >> shift) & VALUE) as TokenId;
            (id(2 * ID_BITS), id(ID_BITS), id(0))
        })
    }
}

#[inline(always)]
fn key(a: TokenId, b: TokenId) -> u64 {
    USED | (a as u64) << (2 * ID_BITS) | (b as u64) << ID_BITS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Lcg;
    use rustc_hash::FxHashMap;

    #[test]
    fn answers_every_pair_it_holds_and_none_other() {
        let mut rng = Lcg(5);
        let mut want = FxHashMap::default();
        while want.len() < 50_000 {
            // Small ids, so absent pairs below share slots' neighbourhoods; and the largest.
            let (a, b) = (rng.below(3000) as TokenId, rng.below(3000) as TokenId);
            want.insert((a, b), rng.below(PACKED_IDS) as TokenId);
        }
        want.insert((0, 0), 0);
        let top = PACKED_IDS as TokenId - 1;
        want.insert((top, top), top);
        let mut table = PackedPairs::new(want.iter().map(|(&(a, b), &id)| (a, b, id)));
        assert_eq!(table.len(), want.len());
        // A pair already there keeps its first id (a repeated merge keeps its priority).
        assert!(!table.insert_first(top, top, 7));
        assert!(!table.insert_first(0, 0, 7));
        assert_eq!(table.len(), want.len());
        for (&(a, b), &id) in &want {
            assert_eq!(table.get(a, b), Some(id), "({a}, {b})");
        }
        for a in 0..3000 {
            for b in [0, 1, 2999, 3000, top, top + 1, TokenId::MAX] {
                assert_eq!(table.get(a, b), want.get(&(a, b)).copied(), "({a}, {b})");
            }
        }
        // Ids past the table's spill: (MAX, MAX) has (top, top)'s key, so `get` turns them
        // away before probing.
        assert_eq!(key(TokenId::MAX, TokenId::MAX), key(top, top));
        assert_eq!(table.get(TokenId::MAX, TokenId::MAX), None);
        assert_eq!(table.get(top + 1, top), None);
        let mut all: Vec<_> = table.iter().collect();
        let mut expected: Vec<_> = want.iter().map(|(&(a, b), &id)| (a, b, id)).collect();
        all.sort_unstable();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }
}
