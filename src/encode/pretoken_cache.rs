//! The per-thread cache of short pre-tokens and their ids, and the key it is indexed by.

use super::arena_pretoken_cache::ArenaPretokenCache;
use super::chars::Scratch;
use super::long_pretoken_cache::{LongPretokenCache, LONG_MAX};
use super::pair_table::{NONE, PAIR_CACHE_BITS};
use super::zeroed_table::{Zeroed, ZeroedTable};
use crate::prefetch::prefetch;
use crate::TokenId;

/// Cached pre-tokens hold at most this many ids (inline, so the cache never allocates).
pub(super) const CACHE_IDS: usize = 4;
/// log2 of the cache's sets: 131072 sets of one 64-byte line, 8 MB per encoding thread and
/// encoder. With the sets prefetched a chunk ahead (`EncodeTiles`), over 65536 sets o200k
/// ran 1.15x as fast on repeated 3 MB of English, 1.07x on code, 1.04x on Chinese and 1.06x
/// on new English (paired runs): fewer sets that three hot pre-tokens share.
const CACHE_BITS: u32 = 17;

/// log2 of [`PretokenCache::victims`]' slots: 16384, 512 KB.
const VICTIM_BITS: u32 = 14;

/// A 2-way set-associative cache of short pre-tokens (by [`short_key`]) and their ids.
/// Recent pre-tokens, whole tokens included, are answered without BPE; a new pre-token evicts
/// the less recently used of its set into a table of victims, which a miss then asks.
pub(super) struct PretokenCache {
    pub(super) sets: ZeroedTable<Set>,
    /// The pre-tokens too long for a key (see [`LongPretokenCache`]).
    pub(super) long: LongPretokenCache,
    /// The pre-tokens over 64 bytes (see [`ArenaPretokenCache`]).
    pub(super) arena: ArenaPretokenCache,
    /// The slots that sets evicted, direct-mapped by other bits of the key's hash. 2 MB of
    /// the 25 languages hold 68k distinct short pre-tokens, of which 2.1k sets drew three or
    /// more: encoded again, the text met them in turn, each evicting the next (6.7k misses
    /// a pass, each BPE from whole characters). With these, that text runs 1.14x as fast
    /// under o200k and English 1.04x; new text is level (paired runs).
    victims: ZeroedTable<Slot>,
    /// Recent pair look-ups, `(left << 32 | right, priority, merged)`, direct-mapped, absent
    /// pairs included (see `Encoder::hot_pair`).
    pub(super) pairs: Vec<(u64, u32, TokenId)>,
    /// The arrays of BPE from whole characters.
    pub(super) scratch: Scratch,
}

/// One cache slot, 32 bytes (two to a cache line): the pre-token's key with the number of
/// ids in its top 4 bits (a key's length byte uses only the low 4), and up to 4 ids. Key 0
/// is an empty slot (no pre-token is empty). The count shares the key's word because a
/// field of its own would make slots 48 bytes (a u128 aligns to 16).
#[derive(Clone, Copy, Default)]
pub(super) struct Slot {
    pub(super) key: u128,
    pub(super) ids: [TokenId; CACHE_IDS],
}

const _: () = assert!(std::mem::size_of::<Slot>() == 32);

/// Two slots on one cache line, the most recently used first: over direct-mapped slots,
/// which straddled two lines half the time and evicted each other, hits on 3 MB of o200k
/// English go from 86.1% to 88.5% (simulated).
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(super) struct Set(pub(super) [Slot; 2]);

// SAFETY: a zeroed slot is empty (key 0).
unsafe impl Zeroed for Slot {}
// SAFETY: a zeroed set is two empty slots (key 0).
unsafe impl Zeroed for Set {}

/// The bits of [`Slot::key`] that hold the count of ids.
pub(super) const COUNT_SHIFT: u32 = 124;

impl Default for PretokenCache {
    fn default() -> Self {
        PretokenCache {
            sets: ZeroedTable::new(1 << CACHE_BITS),
            long: LongPretokenCache::default(),
            arena: ArenaPretokenCache::default(),
            victims: ZeroedTable::new(1 << VICTIM_BITS),
            pairs: vec![(u64::MAX, NONE, NONE); 1 << PAIR_CACHE_BITS],
            scratch: Scratch::default(),
        }
    }
}

impl PretokenCache {
    #[inline]
    pub(super) fn set(key: u128) -> usize {
        slot_of(key, CACHE_BITS)
    }

    /// The victim slot of `key`: the hash's bits below the set's.
    #[inline]
    fn victim(key: u128) -> usize {
        slot_of(key, CACHE_BITS + VICTIM_BITS) & ((1 << VICTIM_BITS) - 1)
    }

    /// Looks `key` up among the evicted slots; on a hit it comes back to the front of set
    /// `index`, whose back slot takes its place.
    #[inline]
    pub(super) fn recall(&mut self, key: u128, index: usize) -> Option<&Slot> {
        // A set that never filled evicted nothing.
        if self.sets[index].0[1].key == 0 {
            return None;
        }
        let v = Self::victim(key);
        if self.victims[v].key() != key {
            return None;
        }
        let slot = std::mem::take(&mut self.victims[v]);
        self.push_front(index, slot);
        Some(&self.sets[index].0[0])
    }

    /// Holds `ids` for the pre-token of `key` in front in set `index`.
    #[inline]
    pub(super) fn insert(&mut self, key: u128, index: usize, ids: &[TokenId]) {
        let mut slot = Slot::default();
        slot.store(key, ids);
        self.push_front(index, slot);
    }

    /// Puts `slot` in front in set `index`; its back slot's pre-token goes among the evicted.
    #[inline(always)]
    fn push_front(&mut self, index: usize, slot: Slot) {
        let set = &mut self.sets[index].0;
        let back = set[1];
        set[1] = set[0];
        set[0] = slot;
        if back.key != 0 {
            self.victims[Self::victim(back.key())] = back;
        }
    }

    /// Starts loading the set that the look-up of `pretoken` (of key `key`, `None` if too
    /// long for one) will read, in this cache or the long one: the caches are 8 MB each,
    /// and a set is mostly a load from L3.
    #[inline(always)]
    pub(super) fn prefetch_keyed(&self, pretoken: &[u8], key: Option<u128>) {
        match key {
            Some(key) => prefetch(&self.sets[Self::set(key)]),
            None if pretoken.len() <= LONG_MAX => {
                self.long.prefetch(LongPretokenCache::set_of(pretoken))
            }
            None => {}
        }
    }
}

/// The slot of `key` in a table of `2^bits` slots.
#[inline(always)]
pub(super) fn slot_of(key: u128, bits: u32) -> usize {
    let h = ((key as u64) ^ ((key >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - bits)) as usize
}

impl Slot {
    /// The pre-token key this slot holds, its count of ids left out.
    #[inline(always)]
    pub(super) fn key(&self) -> u128 {
        self.key & !(0xF << COUNT_SHIFT)
    }

    /// How many ids it holds.
    #[inline(always)]
    pub(super) fn count(&self) -> usize {
        (self.key >> COUNT_SHIFT) as usize
    }

    /// Appends its ids to `out`: all `CACHE_IDS` entries of `ids` copied, the length then
    /// set to the count, so that the copy does not branch on how many ids there are (a
    /// `match` on the count mispredicted 28k times per MB of English under o200k, callgrind).
    #[inline(always)]
    pub(super) fn append_to(&self, out: &mut Vec<TokenId>) {
        out.reserve(CACHE_IDS);
        let len = out.len();
        // SAFETY: `reserve` left room for `CACHE_IDS` more ids after `len`, and the slot
        // holds `count() <= CACHE_IDS` of them first; the ones copied past `len + count()`
        // stay outside the vector's length.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ids.as_ptr(), out.as_mut_ptr().add(len), CACHE_IDS);
            out.set_len(len + self.count());
        }
    }

    /// Holds `ids` (at most `CACHE_IDS`) for the pre-token of `key`.
    #[inline(always)]
    pub(super) fn store(&mut self, key: u128, ids: &[TokenId]) {
        self.key = key | (ids.len() as u128) << COUNT_SHIFT;
        self.ids[..ids.len()].copy_from_slice(ids);
    }
}

/// A pre-token of up to 15 bytes as one integer (`crate::pretoken_key::pack`: its bytes,
/// zero-padded, and its length in the last byte). Look-ups then hash two words and compare
/// two words instead of hashing bytes and calling memcmp, which made the whole-token look-up
/// 35% of encoding time on English (gpt2).
#[inline(always)]
pub(super) fn short_key(pretoken: &[u8]) -> Option<u128> {
    crate::pretoken_key::pack(pretoken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::test_vocab::{assert_cached_is_bpe, merges_encoder};
    use crate::test_rng::Lcg;

    #[test]
    fn pretoken_cache_answers_equal_bpe_through_evictions() {
        // Pre-tokens of 1-15 bytes from a small alphabet: many more than the cache holds, so
        // sets fill, evict and swap their two slots; each answer must be plain BPE's.
        let enc = merges_encoder(
            &[
                ("a", "b"),
                ("ab", "c"),
                ("c", "a"),
                ("d", "d"),
                ("dd", "ab"),
                ("b", "b"),
            ],
            &[
                (300, "ab"),
                (301, "abc"),
                (302, "ca"),
                (303, "dd"),
                (304, "ddab"),
                (305, "bb"),
            ],
        );
        let mut cache = PretokenCache::default();
        let mut rng = Lcg(12345);
        let pretokens: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                (0..1 + rng.below(15))
                    .map(|_| b"abcd"[rng.below(4)])
                    .collect()
            })
            .collect();
        // Later rounds revisit pre-tokens out of order, so some are still cached.
        for i in rng.visits(pretokens.len(), 3) {
            assert_cached_is_bpe(&enc, &mut cache, &pretokens[i]);
        }
    }

    /// Three pre-tokens of one set, met in turn: each is evicted by the third before it
    /// comes back, and answered from the victims then, its ids plain BPE's.
    #[test]
    fn an_evicted_pretoken_is_recalled() {
        let enc = merges_encoder(&[("a", "b"), ("ab", "c")], &[(300, "ab"), (301, "abc")]);
        let mut cache = PretokenCache::default();
        let mut rng = Lcg(77);
        let set = |w: &[u8]| PretokenCache::set(short_key(w).expect("short"));
        // Words of four bytes (so at most four ids: a slot holds them) until three share a set.
        let mut by_set: std::collections::HashMap<usize, Vec<Vec<u8>>> = Default::default();
        let three = loop {
            let w: Vec<u8> = (0..4).map(|_| b'a' + rng.below(26) as u8).collect();
            let same = by_set.entry(set(&w)).or_default();
            if !same.contains(&w) {
                same.push(w);
            }
            if same.len() == 3 {
                break same.clone();
            }
        };
        for w in &three {
            assert_cached_is_bpe(&enc, &mut cache, w);
        }
        for round in 0..3 {
            for w in &three {
                let (key, index) = (short_key(w).expect("short"), set(w));
                let held = cache.sets[index].0.iter().any(|s| s.key() == key);
                assert!(
                    held || cache.recall(key, index).is_some(),
                    "round {round}: {:?} neither in its set nor recalled",
                    String::from_utf8_lossy(w)
                );
                assert_cached_is_bpe(&enc, &mut cache, w);
            }
        }
    }

    #[test]
    fn short_key_is_the_bytes_zero_padded_then_the_length() {
        let text: Vec<u8> = (1..=20).collect();
        for start in 0..4 {
            for n in 0..=16 {
                let pretoken = &text[start..start + n];
                let mut buf = [0u8; 16];
                if n <= 15 {
                    buf[..n].copy_from_slice(pretoken);
                    buf[15] = n as u8;
                }
                let want = (n <= 15).then(|| u128::from_le_bytes(buf));
                assert_eq!(short_key(pretoken), want, "n = {n}");
            }
        }
    }
}
