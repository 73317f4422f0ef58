//! The per-thread cache of pre-tokens too long for a `u128` key (16 to 64 bytes), with their
//! bytes inline for the compare.
//!
//! In the 25-language corpus pre-tokens of 16-64 bytes are 28% of the bytes under o200k
//! (Cyrillic, Greek, Arabic, Armenian words of 8 letters or more, Devanagari and Tamil of 6 or
//! more); each is BPE from whole characters with several merges, 2,400 instructions on
//! average. Repeated ones are answered from here instead.

use super::zeroed_table::{Zeroed, ZeroedTable};
use crate::prefetch::prefetch;
use crate::TokenId;

/// The longest pre-token cached here (longer ones are rarely repeated: 98% of the bytes in
/// pre-tokens over 64 bytes of the 25-language corpus are in their first occurrence).
pub(super) const LONG_MAX: usize = 64;
/// Cached pre-tokens hold at most this many ids.
const LONG_IDS: usize = 15;
/// log2 of the cache's sets: 32768 sets of two 128-byte slots, 8 MB per encoding thread and
/// encoder. 2 MB of the 25 languages hold 24k distinct pre-tokens of 16-64 bytes, which
/// thrashed 8192 sets: over those, repeated text ran 1.28x as fast under Llama 3 (paired
/// runs; 16384 sets: 1.14x), and new text alike.
const LONG_BITS: u32 = 15;

/// One slot, two cache lines: the pre-token's bytes zero-padded, its length (0: empty) and
/// its ids.
#[derive(Clone, Copy)]
#[repr(C, align(128))]
struct LongSlot {
    bytes: [u8; LONG_MAX],
    len: u8,
    count: u8,
    ids: [TokenId; LONG_IDS],
}

const _: () = assert!(std::mem::size_of::<LongSlot>() == 128);

// SAFETY: a zeroed slot is empty (length 0).
unsafe impl Zeroed for LongSlot {}

/// A 2-way set-associative cache of pre-tokens of 16 to [`LONG_MAX`] bytes and their ids;
/// a new pre-token evicts the less recently used of its set, which the caller may keep
/// elsewhere (the arena cache).
pub(super) struct LongPretokenCache {
    sets: ZeroedTable<[LongSlot; 2]>,
}

impl Default for LongPretokenCache {
    fn default() -> Self {
        LongPretokenCache {
            sets: ZeroedTable::new(1 << LONG_BITS),
        }
    }
}

impl LongPretokenCache {
    /// The set of a pre-token of 16 to [`LONG_MAX`] bytes: its first and last 16 bytes
    /// (which cover it) and its length, mixed. A collision costs a miss, never a wrong answer.
    #[inline]
    pub(super) fn set_of(pretoken: &[u8]) -> usize {
        let n = pretoken.len();
        let u64_at = |i: usize| u64::from_le_bytes(pretoken[i..i + 8].try_into().expect("8"));
        let h = (u64_at(0) ^ u64_at(8).rotate_left(17) ^ u64_at(n - 16).rotate_left(31))
            .wrapping_add(u64_at(n - 8).rotate_left(47) ^ n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - LONG_BITS)) as usize
    }

    /// Starts loading set `set`: its four cache lines, which a look-up reads.
    #[inline(always)]
    pub(super) fn prefetch(&self, set: usize) {
        let p = self.sets[set].as_ptr().cast::<u8>();
        for line in 0..4 {
            prefetch(p.wrapping_add(64 * line));
        }
    }

    /// The cached ids of `pretoken` (in set `set`), appended to `out`; `false` on a miss.
    #[inline]
    pub(super) fn get(&mut self, set: usize, pretoken: &[u8], out: &mut Vec<TokenId>) -> bool {
        let set = &mut self.sets[set];
        let n = pretoken.len();
        let holds = |slot: &LongSlot| slot.len as usize == n && &slot.bytes[..n] == pretoken;
        if !holds(&set[0]) {
            if !holds(&set[1]) {
                return false;
            }
            set.swap(0, 1);
        }
        let slot = &set[0];
        out.extend_from_slice(&slot.ids[..slot.count as usize]);
        true
    }

    /// Caches `pretoken`'s `ids` in the front slot of set `set`, handing the pre-token and
    /// ids that the set drops to `evicted`; `false` (and nothing cached) if they are too many
    /// for a slot.
    #[inline]
    pub(super) fn insert(
        &mut self,
        set: usize,
        pretoken: &[u8],
        ids: &[TokenId],
        evicted: impl FnOnce(&[u8], &[TokenId]),
    ) -> bool {
        if ids.len() > LONG_IDS {
            return false;
        }
        let set = &mut self.sets[set];
        let last = &set[1];
        if last.len != 0 {
            evicted(
                &last.bytes[..last.len as usize],
                &last.ids[..last.count as usize],
            );
        }
        set[1] = set[0];
        let slot = &mut set[0];
        slot.bytes = [0; LONG_MAX];
        slot.bytes[..pretoken.len()].copy_from_slice(pretoken);
        slot.len = pretoken.len() as u8;
        slot.count = ids.len() as u8;
        slot.ids[..ids.len()].copy_from_slice(ids);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::pretoken_cache::PretokenCache;
    use crate::encode::test_vocab::{assert_cached_is_bpe, byte_merges_encoder};
    use crate::test_rng::Lcg;

    #[test]
    fn long_cache_answers_equal_bpe_through_evictions() {
        // Pre-tokens of 16-80 bytes (some too long for the cache) from a small alphabet (é among them, so some take BPE from
        // whole characters): many more than the cache holds, so sets fill, evict and swap;
        // each answer must be plain BPE's.
        let enc = byte_merges_encoder(&[
            (b"a", b"b"),
            (b"ab", b"c"),
            (b"\xc3", b"\xa9"),
            (b"c", "é".as_bytes()),
            (b"ab", b"ab"),
        ]);
        assert!(enc.chars.is_some());
        let mut cache = PretokenCache::default();
        let mut rng = Lcg(99);
        let units: [&[u8]; 4] = [b"a", b"b", b"c", "é".as_bytes()];
        let pretokens: Vec<Vec<u8>> = (0..40_000)
            .map(|_| {
                let len = 16 + rng.below(LONG_MAX + 1);
                let mut p = Vec::new();
                while p.len() < len {
                    p.extend_from_slice(units[rng.below(4)]);
                }
                p
            })
            .collect();
        let mut held = 0;
        for i in rng.visits(pretokens.len(), 3) {
            let pretoken = &pretokens[i];
            let plain = assert_cached_is_bpe(&enc, &mut cache, pretoken);
            // The answer is cached, unless the pre-token or its ids are too long for a slot
            // (or the set dropped it for others: then the arena answered it).
            let mut again = Vec::new();
            let set = LongPretokenCache::set_of(pretoken);
            if pretoken.len() <= LONG_MAX
                && plain.len() <= LONG_IDS
                && cache.long.get(set, pretoken, &mut again)
            {
                assert_eq!(again, plain);
                held += 1;
            }
        }
        assert!(held > 10_000, "{held} cached");
    }

    /// Every pre-token of 16-64 bytes, once encoded, is answered by its set or, once the set
    /// has dropped it, by the arena, with plain BPE's ids; some are dropped. (Fewer
    /// pre-tokens than fill the arena, which would start over.)
    #[test]
    fn what_a_set_drops_waits_in_the_arena() {
        use crate::encode::arena_pretoken_cache::ArenaPretokenCache;
        use crate::encode::test_vocab::plain_bpe;
        let enc = byte_merges_encoder(&[(b"a", b"b"), (b"ab", b"c"), (b"c", b"c")]);
        let mut cache = PretokenCache::default();
        let mut rng = Lcg(7);
        // 16-18 bytes: even with no merge, their records fit the arena's 2 MB.
        let pretokens = rng.distinct_words(20_000, 16..19, b"abc");
        for p in &pretokens {
            assert_cached_is_bpe(&enc, &mut cache, p);
        }
        let mut dropped = 0;
        for p in &pretokens {
            let (want, mut got) = (plain_bpe(&enc, p), Vec::new());
            if !cache.long.get(LongPretokenCache::set_of(p), p, &mut got) {
                let hash = ArenaPretokenCache::hash(p);
                assert!(cache.arena.get_overflow(p, hash, &mut got), "{p:?}");
                dropped += usize::from(want.len() <= LONG_IDS);
            }
            assert_eq!(got, want, "{p:?}");
        }
        assert!(dropped > 300, "{dropped} dropped from their sets");
    }
}
