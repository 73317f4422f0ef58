//! The per-thread cache of [`Base::encode`]: each piece a pre-token is cut into, encoded by
//! the base once.

use super::extend::Base;
use crate::prefetch::prefetch;
use rustc_hash::FxHashMap;

/// The symbols of the pieces a thread has met. Pieces of up to 15 bytes go by their u128
/// key in a table of their own, each with where its symbols are in `done` (a piece of one
/// symbol holds it inline): comparing slices was 8% of SuperBPE's second stage (memcmp), and
/// a boxed encoding is a pointer to chase. A pre-token's pieces are found a block at a time,
/// and each one's slot fetched before any is read: 100 MB of English meet 288,000 distinct
/// pieces 18.6M times, and a hash map's probe was a third of the time, waiting on memory.
#[derive(Default)]
pub(super) struct PieceCache {
    short: PieceTable,
    long: FxHashMap<Box<[u8]>, Encoded>,
    done: Vec<u32>,
    ids: Vec<u32>,
    /// A block of pieces: start, end and key.
    block: Vec<(u32, u32, Option<u128>)>,
}

/// Pieces found (and their slots fetched) before the first of them is looked up.
const BLOCK: usize = 32;

impl PieceCache {
    /// Appends the symbols of pre-token `p` as `base` encodes it, piece by piece.
    pub(super) fn encode_pretoken(&mut self, base: &Base, p: &[u8], symbols: &mut Vec<u32>) {
        let n = p.len();
        let mut start = 0;
        while start < n {
            self.block.clear();
            while start < n && self.block.len() < BLOCK {
                let mut end = start + 1;
                while end < n && base.adjacent.holds(p[end - 1], p[end]) {
                    end += 1;
                }
                let key = crate::pretoken_key::pack(&p[start..end]);
                if let Some(k) = key {
                    self.short.prefetch(k);
                }
                self.block.push((start as u32, end as u32, key));
                start = end;
            }
            for j in 0..self.block.len() {
                let (s, e, key) = self.block[j];
                match &p[s as usize..e as usize] {
                    [b] => symbols.push(*b as u32),
                    piece => self.encode(base, piece, key, symbols),
                }
            }
        }
    }

    /// Appends the symbols of `piece` (of key `key`) as `base` encodes it.
    #[inline]
    fn encode(&mut self, base: &Base, piece: &[u8], key: Option<u128>, symbols: &mut Vec<u32>) {
        let e = match key {
            Some(k) => match self.short.get(k) {
                Some(e) => e,
                None => {
                    let e = self.encoded(base, piece);
                    self.short.insert(k, e);
                    e
                }
            },
            None => match self.long.get(piece) {
                Some(&e) => e,
                None => {
                    let e = self.encoded(base, piece);
                    self.long.insert(piece.into(), e);
                    e
                }
            },
        };
        match e {
            Encoded::One(s) => symbols.push(s),
            Encoded::Many(at, n) => {
                symbols.extend_from_slice(&self.done[at as usize..(at + n) as usize])
            }
        }
    }

    /// `piece` encoded by `base`, its symbols kept in `done` unless it is one.
    fn encoded(&mut self, base: &Base, piece: &[u8]) -> Encoded {
        self.ids.clear();
        base.encoder.bpe_looked_up(piece, &mut self.ids);
        match self.ids[..] {
            [id] => Encoded::One(base.symbol[&id]),
            _ => {
                let at = self.done.len() as u32;
                self.done.extend(self.ids.iter().map(|i| base.symbol[i]));
                Encoded::Many(at, self.ids.len() as u32)
            }
        }
    }
}

/// Short pieces' encodings by key: open addressing, linear probing, 32-byte slots, so that
/// a look-up is the one cache line [`PieceTable::prefetch`] asked for. Key 0 marks an empty
/// slot (a key holds its piece's length, never 0).
struct PieceTable {
    slots: Vec<(u128, Encoded)>,
    bits: u32,
    len: usize,
}

impl Default for PieceTable {
    fn default() -> Self {
        Self::with_bits(12)
    }
}

impl PieceTable {
    fn with_bits(bits: u32) -> Self {
        PieceTable {
            slots: vec![(0, Encoded::One(0)); 1 << bits],
            bits,
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.bits)) as usize
    }

    #[inline]
    fn prefetch(&self, key: u128) {
        prefetch(&self.slots[self.slot(key)]);
    }

    #[inline]
    fn get(&self, key: u128) -> Option<Encoded> {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                (k, e) if k == key => return Some(e),
                (0, _) => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Adds a key that is not in the table; at three quarters full it doubles.
    fn insert(&mut self, key: u128, e: Encoded) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            let mut bigger = PieceTable::with_bits(self.bits + 1);
            for &(k, e) in self.slots.iter().filter(|(k, _)| *k != 0) {
                bigger.insert(k, e);
            }
            *self = bigger;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        while self.slots[i].0 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (key, e);
        self.len += 1;
    }
}

/// A piece's symbols as [`Base::encode`] caches them.
#[derive(Clone, Copy)]
enum Encoded {
    One(u32),
    /// Where they start in the cache's list, and how many.
    Many(u32, u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key put in stays found through the table's growth, with its own encoding, and
    /// a key never put in is absent.
    #[test]
    fn piece_table_finds_what_it_holds() {
        let mut t = PieceTable::default();
        let key = |i: u64| crate::pretoken_key::pack(&(i * 7919).to_le_bytes()[..]).unwrap();
        for i in 0..20_000u64 {
            t.insert(key(i), Encoded::Many(i as u32, 2));
            if i % 1000 == 0 {
                assert!((0..=i)
                    .all(|j| matches!(t.get(key(j)), Some(Encoded::Many(a, 2)) if a == j as u32)));
            }
        }
        assert!(t.slots.len() > 20_000 * 4 / 3);
        assert!((20_000..40_000).all(|i| t.get(key(i)).is_none()));
    }
}
