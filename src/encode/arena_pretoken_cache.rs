//! The per-thread cache of pre-tokens over `LONG_MAX` (64) bytes, too long for the fixed
//! slots of the other two, and of shorter ones whose ids outgrow those slots. Each one's
//! bytes and ids go into an arena of bounded size, found through an open-addressing index;
//! when the arena is full, everything is dropped at once and the cache starts again, so
//! memory stays bounded without eviction bookkeeping.
//!
//! Such pre-tokens are rarely repeated within new text (98% of the bytes of the 25-language
//! corpus's pre-tokens over 64 bytes are first occurrences), but each costs thousands of
//! instructions of BPE, so a look-up and a copy cost little beside it, and text encoded again
//! (a corpus read twice, a prompt resent) is answered without BPE: 1.18-1.19x on the 25
//! languages seen before under o200k (Thai and Khmer runs, long words), level on new Chinese
//! (paired runs).

use super::zeroed_table::ZeroedTable;
use crate::TokenId;

/// log2 of the index's slots: 65536 (512 KB), at most half of them used. 2 MB of the 25
/// languages hold 2.1k distinct pre-tokens over 64 bytes.
const INDEX_BITS: u32 = 16;
/// The most entries before the cache starts again (half the index: short probe runs).
const MAX_ENTRIES: usize = 1 << (INDEX_BITS - 1);
/// The most bytes of records before the cache starts again: 2 MB of the 25 languages need
/// 0.5 MB. New text fills it and starts again, so it is all resident on a long run: 8 MB
/// was 15 MB more peak RSS on 2 threads (100 MB of English to a file), 2 MB 3 MB more.
const MAX_RECORDS: usize = 2 << 20;
/// Longer pre-tokens are not cached: one would take a large share of the arena.
const MAX_PRETOKEN: usize = 64 << 10;

/// See the module's documentation. Its tables are mapped with the other caches of the
/// thread, so encoding never grows the address space (a stream runs under a tight limit:
/// `tests/test_encode_stream.py`); the kernel gives them pages as they are written.
pub(super) struct ArenaPretokenCache {
    /// At each slot, the high 32 bits of an entry's hash above 1 + where its record starts
    /// in `records`; 0 for an empty slot. Linear probing from the hash. The tag settles most
    /// probes of other pre-tokens without reading their records.
    index: ZeroedTable<u64>,
    /// One record per entry, each one read from a single place: the pre-token's length and
    /// count of ids (u32 each), its ids, then its bytes. `used` bytes of it are written.
    records: ZeroedTable<u8>,
    used: usize,
    entries: usize,
    /// Bit `hash % MARK_BITS` of each entry that overflowed the short or long cache's slots
    /// (see [`ArenaPretokenCache::get_overflow`]).
    marks: Box<[u64]>,
}

impl Default for ArenaPretokenCache {
    fn default() -> Self {
        ArenaPretokenCache {
            index: ZeroedTable::new(1 << INDEX_BITS),
            records: ZeroedTable::new(MAX_RECORDS),
            used: 0,
            entries: 0,
            marks: vec![0; MARK_BITS / 64].into_boxed_slice(),
        }
    }
}

/// The bits of [`ArenaPretokenCache::marks`]: 8 KB, in L1 or L2.
const MARK_BITS: usize = 1 << 16;

/// The word of [`ArenaPretokenCache::marks`] and the bit in it that mark `hash`.
#[inline(always)]
fn mark(hash: u64) -> (usize, u64) {
    let bit = hash as usize % MARK_BITS;
    (bit / 64, 1 << (bit % 64))
}

impl ArenaPretokenCache {
    /// A pre-token's hash: its 8-byte words folded by multiply and rotate, then its length.
    #[inline]
    pub(super) fn hash(pretoken: &[u8]) -> u64 {
        const K: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut words = pretoken.chunks_exact(8);
        let mut h = pretoken.len() as u64;
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            h = (h.rotate_left(23) ^ w).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        h = (h.rotate_left(23) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
        h ^ (h >> 29)
    }

    /// The index's first slot for `hash`.
    #[inline]
    fn slot(hash: u64) -> usize {
        (hash.wrapping_mul(0xff51_afd7_ed55_8ccd) >> (64 - INDEX_BITS)) as usize
    }

    /// The u32 at `at` in the records.
    #[inline]
    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.records[at..at + 4].try_into().expect("4 bytes"))
    }

    /// The cached ids of `pretoken` (of hash `hash`) appended to `out`; `false` on a miss.
    #[inline]
    pub(super) fn get(&self, pretoken: &[u8], hash: u64, out: &mut Vec<TokenId>) -> bool {
        let (mask, tag) = (self.index.len() - 1, hash >> 32);
        let mut slot = Self::slot(hash);
        loop {
            let entry = self.index[slot];
            if entry == 0 {
                return false;
            }
            if entry >> 32 == tag {
                let at = (entry as u32 - 1) as usize;
                let (len, count) = (self.u32_at(at) as usize, self.u32_at(at + 4) as usize);
                let bytes = at + 8 + 4 * count;
                if len == pretoken.len() && &self.records[bytes..bytes + len] == pretoken {
                    let ids = self.records[at + 8..bytes].chunks_exact(4);
                    out.extend(ids.map(|id| TokenId::from_le_bytes(id.try_into().expect("4"))));
                    return true;
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// [`ArenaPretokenCache::get`] for a pre-token of 64 bytes or fewer that the short or
    /// long cache missed: the arena is asked only when the pre-token's mark is set. Such
    /// pre-tokens (a Tamil word of five tokens, a Thai one of sixteen) are 2% of the
    /// 25-language corpus's bytes under o200k and were BPE'd again at every occurrence; the
    /// mark keeps new text, whose misses are mostly not here, from probing the index.
    #[inline]
    pub(super) fn get_overflow(&self, pretoken: &[u8], hash: u64, out: &mut Vec<TokenId>) -> bool {
        let (word, bit) = mark(hash);
        self.marks[word] & bit != 0 && self.get(pretoken, hash, out)
    }

    /// [`ArenaPretokenCache::insert`] of a pre-token whose ids outgrow the slots of the cache
    /// it missed, with its mark set.
    pub(super) fn insert_overflow(&mut self, pretoken: &[u8], hash: u64, ids: &[TokenId]) {
        self.insert(pretoken, hash, ids);
        let (word, bit) = mark(hash);
        self.marks[word] |= bit;
    }

    /// Caches `pretoken`'s `ids` (`pretoken` not cached yet), first dropping everything if the
    /// arena is full; nothing for a pre-token over [`MAX_PRETOKEN`] bytes.
    pub(super) fn insert(&mut self, pretoken: &[u8], hash: u64, ids: &[TokenId]) {
        if pretoken.len() > MAX_PRETOKEN {
            return;
        }
        let size = 8 + 4 * ids.len() + pretoken.len();
        if self.entries == MAX_ENTRIES || self.used + size > MAX_RECORDS {
            self.index.fill(0);
            self.marks.fill(0);
            self.used = 0;
            self.entries = 0;
        }
        let mask = self.index.len() - 1;
        let mut slot = Self::slot(hash);
        while self.index[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        // Fits: the records stay under MAX_RECORDS, far below u32::MAX.
        let at = self.used;
        self.index[slot] = (hash >> 32) << 32 | (at as u64 + 1);
        self.entries += 1;
        let record = &mut self.records[at..at + size];
        record[..4].copy_from_slice(&(pretoken.len() as u32).to_le_bytes());
        record[4..8].copy_from_slice(&(ids.len() as u32).to_le_bytes());
        for (slot, id) in record[8..].chunks_exact_mut(4).zip(ids) {
            slot.copy_from_slice(&id.to_le_bytes());
        }
        record[8 + 4 * ids.len()..].copy_from_slice(pretoken);
        self.used += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Lcg;

    #[test]
    fn answers_what_was_inserted_through_restarts() {
        // Far more pre-tokens than the cache holds, many differing only in their last byte
        // or their length: every answer is the ids inserted for exactly those bytes, and a
        // pre-token inserted since the last restart is always found.
        let mut cache = ArenaPretokenCache::default();
        let mut rng = Lcg(7);
        let mut since_restart: Vec<(Vec<u8>, Vec<TokenId>)> = Vec::new();
        let mut restarts = 0;
        for i in 0..250_000u32 {
            let len = 65 + rng.below(80);
            let mut p: Vec<u8> = (0..len).map(|_| b"ab"[rng.below(2)]).collect();
            p.extend_from_slice(&i.to_le_bytes());
            let ids: Vec<TokenId> = (0..1 + rng.below(40))
                .map(|_| rng.below(1000) as TokenId)
                .collect();
            let h = ArenaPretokenCache::hash(&p);
            let mut got = Vec::new();
            assert!(!cache.get(&p, h, &mut got), "never inserted");
            let before = cache.entries;
            cache.insert(&p, h, &ids);
            if cache.entries == 1 && before > 0 {
                restarts += 1;
                since_restart.clear();
            }
            since_restart.push((p, ids));
            if rng.below(50) == 0 {
                let (p, ids) = &since_restart[rng.below(since_restart.len())];
                let mut got = vec![9];
                assert!(cache.get(p, ArenaPretokenCache::hash(p), &mut got));
                assert_eq!(got[1..], ids[..]);
            }
        }
        for (p, ids) in &since_restart {
            let mut got = Vec::new();
            assert!(cache.get(p, ArenaPretokenCache::hash(p), &mut got));
            assert_eq!(&got, ids);
        }
        assert!(restarts >= 2, "{restarts} restarts");
    }

    #[test]
    fn encoder_answers_equal_bpe_through_the_arena() {
        // Pre-tokens over 64 bytes, of a, b, c or of 中 and 文 (BPE from whole characters): each
        // is encoded through the arena cache three times over (restarts included, as they are
        // more than it holds), and must equal plain BPE.
        use crate::encode::pretoken_cache::PretokenCache;
        use crate::encode::test_vocab::{byte_merges_encoder, plain_bpe};
        let enc = byte_merges_encoder(&[
            (b"a", b"b"),
            (b"ab", b"c"),
            (b"\xe4\xb8", b"\xad"),
            ("中".as_bytes(), "文".as_bytes()),
            (b"ab", b"ab"),
        ]);
        assert!(enc.chars.is_some());
        let mut cache = PretokenCache::default();
        let mut rng = Lcg(5);
        let pretokens: Vec<Vec<u8>> = (0..60_000)
            .map(|i| {
                let cjk = i % 3 == 0;
                let (units, len): (&[&[u8]], usize) = if cjk {
                    (&["中".as_bytes(), "文".as_bytes()], 65 + rng.below(120))
                } else {
                    (&[b"a", b"b", b"c"], 65 + rng.below(200))
                };
                let mut p = Vec::new();
                while p.len() < len {
                    p.extend_from_slice(units[rng.below(units.len())]);
                }
                p
            })
            .collect();
        for i in rng.visits(pretokens.len(), 3) {
            let pretoken = &pretokens[i];
            let mut cached = Vec::new();
            enc.encode_pretoken(pretoken, &mut cache, &mut cached);
            assert_eq!(
                cached,
                plain_bpe(&enc, pretoken),
                "{:?}",
                String::from_utf8_lossy(pretoken)
            );
        }
        assert!(
            cache.arena.entries > 1000,
            "{} entries",
            cache.arena.entries
        );
    }

    /// Pre-tokens of up to 64 bytes whose ids outgrow their slots (more than 4 for 1-15
    /// bytes, more than 15 for 16-64) are kept here after their first BPE and answered from
    /// here after, equal to plain BPE; those that fit are not, and neither is any before its
    /// first encoding.
    #[test]
    fn overflowing_pretokens_are_answered_from_here() {
        use crate::encode::pretoken_cache::PretokenCache;
        use crate::encode::test_vocab::{byte_merges_encoder, plain_bpe};
        let enc = byte_merges_encoder(&[(b"a", b"b"), (b"ab", b"ab"), (b"c", b"d")]);
        let mut cache = PretokenCache::default();
        let mut rng = Lcg(33);
        let pretokens = rng.distinct_words(3000, 1..65, b"abcd");
        let mut overflowing = 0;
        for round in 0..3 {
            for p in &pretokens {
                let want = plain_bpe(&enc, p);
                let limit = if p.len() < 16 { 4 } else { 15 };
                let h = ArenaPretokenCache::hash(p);
                let held = cache.arena.get_overflow(p, h, &mut Vec::new());
                assert_eq!(
                    held,
                    round > 0 && want.len() > limit,
                    "round {round}: {p:?}"
                );
                overflowing += usize::from(round == 0 && want.len() > limit);
                let mut got = Vec::new();
                enc.encode_pretoken(p, &mut cache, &mut got);
                assert_eq!(got, want, "round {round}: {p:?}");
            }
        }
        assert!(overflowing > 500, "{overflowing} overflowing pre-tokens");
        // Runs of Han characters, after a comma or not, are left out (new Chinese rarely
        // meets one twice); other text with as many ids is held.
        let enc = byte_merges_encoder(&[(b"\xe4\xb8", b"\xad")]);
        assert!(enc.chars.is_some());
        let mut cache = PretokenCache::default();
        for (text, held) in [(",中中中中", false), ("中中中中a", false), ("ééééé", true)]
        {
            let p = text.as_bytes();
            for _ in 0..2 {
                let mut got = Vec::new();
                enc.encode_pretoken(p, &mut cache, &mut got);
                assert_eq!(got, plain_bpe(&enc, p), "{text}");
                assert!(got.len() > 4, "{text}");
            }
            let h = ArenaPretokenCache::hash(p);
            assert_eq!(
                cache.arena.get_overflow(p, h, &mut Vec::new()),
                held,
                "{text}"
            );
        }
    }

    #[test]
    fn a_pretoken_past_the_bound_is_not_cached() {
        let mut cache = ArenaPretokenCache::default();
        let p = vec![b'a'; MAX_PRETOKEN + 1];
        let h = ArenaPretokenCache::hash(&p);
        cache.insert(&p, h, &[1, 2]);
        assert!(!cache.get(&p, h, &mut Vec::new()));
    }
}
