//! The pair table: two adjacent token ids -> `(priority, merged id)`, the one structure BPE
//! reads. Beside it, a 256x256 table for pairs of single bytes and a per-thread cache of
//! recent look-ups, both small enough for L2.

use super::packed_pairs::{PackedPairs, PACKED_IDS};
use super::Encoder;
use crate::TokenId;
use rustc_hash::FxHashMap;

/// No pair / no priority.
pub(super) const NONE: u32 = u32::MAX;
/// log2 of the per-thread pair cache's slots: 16384 slots of 16 bytes, 256 KB, in L2 (1 MB
/// here) next to the pre-token cache, while o200k's pair table is 2 MB packed, 4 MB unpacked.
pub(super) const PAIR_CACHE_BITS: u32 = 14;

/// The pair table's key: `(a, b)` packed, then mixed with murmur3's finalizer (a bijection,
/// so keys stay unique). FxHash alone on the packed pair probes long chains: building the
/// o200k encoder takes 1.6 s without the mix, 0.2 s with it.
#[inline]
fn pair_key(a: TokenId, b: TokenId) -> u64 {
    let mut k = ((a as u64) << 32) | b as u64;
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// The pair of a [`pair_key`]: the finalizer's steps undone (the multipliers' inverses
/// modulo 2^64), so the table needs no second copy of its pairs.
fn pair_of_key(mut k: u64) -> (TokenId, TokenId) {
    k ^= k >> 33;
    k = k.wrapping_mul(0x9cb4_b2f8_1293_37db);
    k ^= k >> 33;
    k = k.wrapping_mul(0x4f74_430c_22a5_4005);
    k ^= k >> 33;
    ((k >> 32) as TokenId, k as TokenId)
}

/// The pair table, `(left, right)` -> `(priority, merged id)`, keyed by [`pair_key`] while
/// it is built; then packed where it can be (see [`PackedPairs`]). Where it cannot (merged
/// ids that do not follow priorities), hashbrown beats open addressing of 16-byte slots:
/// most look-ups on Chinese are of pairs that are not there, which hashbrown answers from
/// its 1-byte control array (256 KB for o200k, in L2) without touching the 4 MB of slots;
/// o200k Chinese ran at 14-17 MB/s with open addressing, 20 MB/s with hashbrown.
#[derive(Default)]
pub(super) struct PairTable {
    map: FxHashMap<u64, (u32, TokenId)>,
    packed: Option<PackedPairs>,
    /// A packed pair's merged id less its priority, the same for every pair.
    offset: u32,
}

impl PairTable {
    #[inline]
    pub(super) fn get(&self, a: TokenId, b: TokenId) -> (u32, TokenId) {
        if let Some(packed) = &self.packed {
            return match packed.get(a, b) {
                Some(id) => (id.wrapping_sub(self.offset), id),
                None => (NONE, NONE),
            };
        }
        match self.map.get(&pair_key(a, b)) {
            Some(&p) => p,
            None => (NONE, NONE),
        }
    }

    /// Starts loading where the look-up of `(a, b)` reads (packed tables only).
    #[inline(always)]
    pub(super) fn prefetch(&self, a: TokenId, b: TokenId) {
        if let Some(packed) = &self.packed {
            packed.prefetch(a, b);
        }
    }

    /// An empty table with room for `n` pairs.
    pub(super) fn with_room(n: usize) -> PairTable {
        let mut table = PairTable::default();
        table.map.reserve(n);
        table
    }

    /// An empty table for a rank table's pairs (merged id = priority, at most `n` of them),
    /// packed from the start when every id (below `ids`) fits: building o200k's rank table
    /// runs BPE of each token over it, and a look-up is then one load instead of two
    /// (hashbrown's control bytes, then its slot), and no map is held beside the packed copy.
    pub(super) fn for_ranks(n: usize, ids: usize) -> PairTable {
        let mut table = PairTable::default();
        if ids <= PACKED_IDS {
            table.packed = Some(PackedPairs::with_capacity(n));
        } else {
            table.map.reserve(n);
        }
        table
    }

    /// Whether the table is packed (see [`PackedPairs`]).
    pub(super) fn is_packed(&self) -> bool {
        self.packed.is_some()
    }

    pub(super) fn len(&self) -> usize {
        self.packed
            .as_ref()
            .map_or(self.map.len(), PackedPairs::len)
    }

    /// Packs a finished table when each pair's merged id is its priority plus one offset
    /// for all (0 in rank mode; 256 for GPT-2's merges, 259 for DeepSeek's, whose ids follow
    /// their merges) and every id of the encoder is below [`PACKED_IDS`] (`ids` is one past
    /// the largest).
    pub(super) fn pack(&mut self, ids: usize) {
        if self.packed.is_some() {
            return;
        }
        let Some(&(p, m)) = self.map.values().next() else {
            return;
        };
        let offset = m.wrapping_sub(p);
        if ids > PACKED_IDS || self.map.values().any(|&(p, m)| m.wrapping_sub(p) != offset) {
            return;
        }
        self.offset = offset;
        let pairs = self.map.iter().map(|(&k, &(_, m))| {
            let (a, b) = pair_of_key(k);
            (a, b, m)
        });
        self.packed = Some(PackedPairs::new(pairs));
        self.map = FxHashMap::default();
    }

    /// Whether every pair ranks after every pair that makes one of its parts: then BPE's new
    /// pairs never rank before the merge that made them, and a monotone queue serves
    /// (`bpe_long`). True of every trained merge list; a rank table extended after its
    /// training (Llama 3's, Qwen3.5's) may break it.
    pub(super) fn is_monotone(&self) -> bool {
        // made[id]: 1 + the highest priority of a pair that makes `id` (0 for none). A Vec
        // by id: a map of o200k's 200k ids was 4 MB more of the build's peak.
        let ids = self
            .iter()
            .map(|(_, (_, m))| m as usize + 1)
            .max()
            .unwrap_or(0);
        let mut made = vec![0u64; ids];
        for (_, (p, m)) in self.iter() {
            let e = &mut made[m as usize];
            *e = (*e).max(p as u64 + 1);
        }
        self.iter().all(|((a, b), (p, _))| {
            let below = |t: TokenId| made.get(t as usize).is_none_or(|&m| m <= p as u64);
            below(a) && below(b)
        })
    }

    /// Every entry: `((left, right), (priority, merged id))`.
    pub(super) fn iter(&self) -> impl Iterator<Item = ((TokenId, TokenId), (u32, TokenId))> + '_ {
        let packed = self.packed.iter().flat_map(|p| p.iter());
        let packed = packed.map(|(a, b, id)| ((a, b), (id.wrapping_sub(self.offset), id)));
        self.map
            .iter()
            .map(|(&k, &v)| (pair_of_key(k), v))
            .chain(packed)
    }

    /// Inserts unless the pair is there already (a repeated merge keeps its first priority);
    /// whether it inserted.
    pub(super) fn insert_first(&mut self, a: TokenId, b: TokenId, value: (u32, TokenId)) -> bool {
        if let Some(packed) = &mut self.packed {
            debug_assert_eq!(value.1.wrapping_sub(value.0), self.offset);
            return packed.insert_first(a, b, value.1);
        }
        match self.map.entry(pair_key(a, b)) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(value);
                true
            }
        }
    }
}

impl Encoder {
    #[inline]
    pub(super) fn pair(&self, a: TokenId, b: TokenId) -> (u32, TokenId) {
        self.pairs.get(a, b)
    }

    /// The pair table's entry for two single bytes.
    #[inline]
    pub(super) fn byte_pair(&self, x: u8, y: u8) -> (u32, TokenId) {
        self.byte_pairs[(x as usize) << 8 | y as usize]
    }

    /// Fills `byte_pairs` from `pairs` (merges mode; rank mode adds them as it goes).
    pub(super) fn fill_byte_pairs(&mut self) {
        for x in 0..=255u8 {
            for y in 0..=255u8 {
                self.byte_pairs[(x as usize) << 8 | y as usize] = self
                    .pairs
                    .get(self.byte_ids[x as usize], self.byte_ids[y as usize]);
            }
        }
    }

    /// A pair look-up through the thread's pair cache. Long Chinese pre-tokens (o200k's
    /// runs of Han characters) make several look-ups per character, most of them in the
    /// 2 MB table, missing L2; the few thousand pairs of common characters are answered
    /// from here instead. Only for a finished table: absent pairs are cached too.
    #[inline]
    pub(super) fn hot_pair(
        &self,
        hot: &mut [(u64, u32, TokenId)],
        a: TokenId,
        b: TokenId,
    ) -> (u32, TokenId) {
        let key = ((a as u64) << 32) | b as u64;
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PAIR_CACHE_BITS)) as usize;
        let slot = &mut hot[i];
        if slot.0 != key {
            let (p, m) = self.pair(a, b);
            *slot = (key, p, m);
        }
        (slot.1, slot.2)
    }
}

#[cfg(test)]
mod tests {
    use super::{pair_key, pair_of_key, PairTable, NONE};
    use crate::test_rng::Lcg;
    use crate::TokenId;

    /// Packing keeps every answer, present pairs and absent ones, when merged ids are
    /// priorities plus one offset (0, as in rank mode, or 259); with a second offset in the
    /// table it stays unpacked and answers the same.
    #[test]
    fn packing_keeps_every_answer() {
        let mut rng = Lcg(9);
        for (offset, mixed) in [(0, false), (259, false), (259, true)] {
            let mut table = PairTable::default();
            let mut pairs = Vec::new();
            for prio in 0..20_000u32 {
                let (a, b) = (rng.below(600) as TokenId, rng.below(600) as TokenId);
                let shift = if mixed && prio == 7_000 { 1 } else { offset };
                if table.insert_first(a, b, (prio, prio + shift)) {
                    pairs.push((a, b, (prio, prio + shift)));
                }
            }
            let before: Vec<_> = (0..700)
                .flat_map(|a| (0..30).map(move |b| (a, b * 20)))
                .collect();
            let answers: Vec<_> = before.iter().map(|&(a, b)| table.get(a, b)).collect();
            table.pack(20_000 + 260);
            assert_eq!(table.packed.is_some(), !mixed, "offset {offset}");
            assert_eq!(table.len(), pairs.len());
            for &(a, b, value) in &pairs {
                assert_eq!(table.get(a, b), value, "({a}, {b})");
            }
            for (&(a, b), &want) in before.iter().zip(&answers) {
                assert_eq!(table.get(a, b), want, "({a}, {b})");
            }
            assert!(answers.contains(&(NONE, NONE)));
            let mut all: Vec<_> = table.iter().map(|((a, b), v)| (a, b, v)).collect();
            all.sort_unstable();
            pairs.sort_unstable();
            assert_eq!(all, pairs);
        }
    }

    #[test]
    fn pair_of_key_undoes_pair_key() {
        let mut rng = Lcg(3);
        for _ in 0..10_000 {
            let (a, b) = (rng.below(1 << 30) as u32, rng.below(1 << 30) as u32);
            assert_eq!(pair_of_key(pair_key(a, b)), (a, b));
        }
        assert_eq!(pair_of_key(pair_key(u32::MAX, 0)), (u32::MAX, 0));
    }
}
