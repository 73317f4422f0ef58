//! A Bloom filter over the pairs that phase 2 of BPE from whole characters looks up.
//!
//! Chinese has many distinct character pairs and few of them merge: under o200k 11% of the
//! look-ups in phase 2 find a pair and the pair cache misses on 70% of them, each a probe
//! of the 2 MB pair table. Every pair of the table whose parts are both valid UTF-8, not
//! both ASCII, is in the filter, so a pair it rejects has no merge; the others go to the
//! pair cache. One bit per pair, 16 bits of filter per pair (6% false hits): two bits per
//! pair in one word (1.2%) take more instructions to test than the extra false hits cost
//! (o200k Chinese, 275 M instructions per 2 MB with one bit, 279 M with two).

use crate::TokenId;

pub(crate) struct PairFilter {
    words: Vec<u64>,
    /// `64 - log2(bits)`: the bit is the hash's top bits.
    shift: u32,
}

impl PairFilter {
    /// A filter holding `pairs`, about 16 bits a pair (o200k's 61k pairs: 128 KB).
    pub(crate) fn new(pairs: &[(TokenId, TokenId)]) -> Self {
        let words = (pairs.len() * 16 / 64).next_power_of_two().max(8);
        let mut filter = PairFilter {
            words: vec![0; words],
            shift: 64 - 6 - words.trailing_zeros(),
        };
        for &(a, b) in pairs {
            let (i, m) = filter.bits(a, b);
            filter.words[i] |= m;
        }
        filter
    }

    #[inline]
    fn bits(&self, a: TokenId, b: TokenId) -> (usize, u64) {
        let h = ((a as u64) << 32 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let bit = (h >> self.shift) as usize;
        (bit >> 6, 1 << (bit & 63))
    }

    /// `false` when `(a, b)` is certainly not in the filter.
    #[inline]
    pub(crate) fn may_hold(&self, a: TokenId, b: TokenId) -> bool {
        let (i, m) = self.bits(a, b);
        self.words[i] & m == m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_every_pair_and_rejects_most_others() {
        let pairs: Vec<(TokenId, TokenId)> =
            (0..5000).map(|i| (i * 7 + 3, i * 13 % 4099)).collect();
        let f = PairFilter::new(&pairs);
        assert!(pairs.iter().all(|&(a, b)| f.may_hold(a, b)));
        let false_hits = (0..10_000).filter(|&i| f.may_hold(100_000 + i, i)).count();
        assert!(false_hits < 500, "{false_hits} false hits in 10000");
    }
}
