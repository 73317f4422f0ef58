//! [`Hot`]: a small direct-mapped cache of counts in front of the count table.
//!
//! English follows Zipf's law: a few thousand pre-tokens make up most of the text, but the
//! 100K+ distinct ones make the table several MB, so nearly every table lookup misses the
//! L2 cache. A slot holds one key and the occurrences seen since it was loaded; a hit is one
//! compare and an add in a 384 KiB array that stays in L2. A miss flushes the slot's count
//! into the table and takes the slot (the newest pre-token wins, so frequent ones come back
//! at once). Counts are exact: everything is flushed into the table at the end.

use super::pretoken_counts::Map;
use crate::pretoken_key::pack;

pub(super) struct Hot {
    slots: Box<[Slot]>,
    /// `slots.len() == 1 << bits`.
    bits: u32,
}

/// A key as two `u64` halves (a `u128` would pad the slot to 32 bytes) and its count since
/// the slot was loaded (0: empty).
#[derive(Clone, Copy)]
struct Slot {
    key: [u64; 2],
    count: u64,
}

/// At most 2^14 slots of 24 bytes: 384 KiB, inside the 1 MiB L2 of this machine's cores.
/// 2^14 direct-mapped slots catch 90% of gpt2 pre-tokens on English (2^12: 82%, 2^16: 94%).
const HOT_BITS: u32 = 14;

impl Hot {
    /// A cache sized for counting about `bytes` of text: one slot per 64 bytes (about 14
    /// pre-tokens), 16 to 2^14 slots, so a call with one short text does not pay for
    /// zeroing and flushing 384 KiB.
    pub(super) fn for_bytes(bytes: usize) -> Self {
        let bits = (bytes / 64).max(1).ilog2().clamp(4, HOT_BITS);
        let empty = Slot {
            key: [0; 2],
            count: 0,
        };
        Hot {
            slots: vec![empty; 1 << bits].into_boxed_slice(),
            bits,
        }
    }

    /// Adds one occurrence of `pretoken`.
    ///
    /// Not inlined: inlined into the splitter's loop it cost more (cachegrind, gpt2, 8 MB of
    /// en-prose: 460 M instructions as a call, up to 498 M inlined with a bigger body), and
    /// the call measured faster in CPU time (120 vs 106 MB/s, medians of 3 alternations).
    #[inline(never)]
    pub(super) fn bump(&mut self, map: &mut Map, pretoken: &[u8]) {
        let Some(k) = pack(pretoken) else {
            return bump_long(map, pretoken);
        };
        let key = [k as u64, (k >> 64) as u64];
        // Multiply-xor of the two halves; the top bits pick the slot.
        let h = (key[0] ^ key[1].rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = &mut self.slots[(h >> (64 - self.bits)) as usize];
        if slot.key == key && slot.count != 0 {
            slot.count += 1;
        } else {
            slot.replace(map, key);
        }
    }

    /// Moves every cached count into `map`.
    pub(super) fn flush(&mut self, map: &mut Map) {
        for slot in self.slots.iter_mut() {
            slot.spill(map);
            slot.count = 0;
        }
    }
}

/// The rare path of [`Hot::bump`] (pre-tokens over 15 bytes), out of line to keep `bump`
/// small.
#[cold]
#[inline(never)]
fn bump_long(map: &mut Map, pretoken: &[u8]) {
    map.bump(pretoken, 1);
}

impl Slot {
    /// Spills this slot into `map` and loads `key` with one occurrence (out of line, as
    /// [`bump_long`]; 10% of pre-tokens on English).
    #[inline(never)]
    fn replace(&mut self, map: &mut Map, key: [u64; 2]) {
        self.spill(map);
        *self = Slot { key, count: 1 };
    }

    /// Adds this slot's count to `map` (nothing if empty).
    #[inline]
    fn spill(&self, map: &mut Map) {
        if self.count != 0 {
            let k = self.key[0] as u128 | (self.key[1] as u128) << 64;
            *map.short.entry(k).or_insert(0) += self.count;
        }
    }
}
