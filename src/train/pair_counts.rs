//! [`PairCounts`]: every pair with a nonzero count, in as few bytes as the counts allow.

use super::symbols::Symbol;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry as MapEntry;

/// Every pair with a nonzero count, in 8 bytes a pair of u16 symbols instead of 16: the
/// count is a u32, and a count of `BIG_PAIR` or more lives in `big`. Late on 1 GB of mixed
/// corpora this holds 2.3M pairs, the largest structure then, and growing into a
/// 2^22-bucket table holds both tables for a moment (`examples/train_memory.rs` on those
/// counts: peak 170 MB against 193 MB).
pub(super) struct PairCounts<S: Symbol> {
    pub(super) small: FxHashMap<(S, S), u32>,
    pub(super) big: FxHashMap<(S, S), u64>,
}

/// `PairCounts::small` saying "look in `big`".
pub(super) const BIG_PAIR: u32 = u32::MAX;

impl<S: Symbol> Default for PairCounts<S> {
    fn default() -> Self {
        PairCounts {
            small: FxHashMap::default(),
            big: FxHashMap::default(),
        }
    }
}

impl<S: Symbol> PairCounts<S> {
    /// The count of `pair` (0 when absent).
    #[inline]
    pub(super) fn get(&self, pair: &(S, S)) -> u64 {
        match self.small.get(pair) {
            None => 0,
            Some(&BIG_PAIR) => self.big[pair],
            Some(&n) => n as u64,
        }
    }

    /// Adds `c` to `pair`'s count; `true` when the pair was absent.
    #[inline]
    pub(super) fn add(&mut self, pair: (S, S), c: u64) -> bool {
        match self.small.entry(pair) {
            MapEntry::Occupied(mut e) => {
                let v = e.get_mut();
                if *v == BIG_PAIR {
                    *self.big.get_mut(&pair).expect("big pair count") += c;
                } else if *v as u64 + c >= BIG_PAIR as u64 {
                    self.big.insert(pair, *v as u64 + c);
                    *v = BIG_PAIR;
                } else {
                    *v += c as u32;
                }
                false
            }
            MapEntry::Vacant(e) => {
                if c >= BIG_PAIR as u64 {
                    self.big.insert(pair, c);
                    e.insert(BIG_PAIR);
                } else {
                    e.insert(c as u32);
                }
                true
            }
        }
    }

    /// Takes `c` (at most the count) from `pair`'s count, removing the pair at 0; the
    /// count before and after, or `None` when the pair is absent.
    #[inline]
    pub(super) fn sub(&mut self, pair: (S, S), c: u64) -> Option<(u64, u64)> {
        let v = self.small.get_mut(&pair)?;
        let before = if *v == BIG_PAIR {
            self.big[&pair]
        } else {
            *v as u64
        };
        debug_assert!(before >= c, "{pair:?}");
        let after = before - c;
        if after == 0 {
            self.remove(&pair);
        } else if after >= BIG_PAIR as u64 {
            self.big.insert(pair, after);
        } else {
            *v = after as u32;
            if before >= BIG_PAIR as u64 {
                self.big.remove(&pair);
            }
        }
        Some((before, after))
    }

    pub(super) fn remove(&mut self, pair: &(S, S)) {
        if self.small.remove(pair) == Some(BIG_PAIR) {
            self.big.remove(pair);
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = ((S, S), u64)> + '_ {
        self.small.iter().map(|(&pair, &n)| {
            let c = if n == BIG_PAIR {
                self.big[&pair]
            } else {
                n as u64
            };
            (pair, c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts cross 2^32 - 1 both ways and come back exactly; absent pairs read 0.
    #[test]
    pub(super) fn pair_counts_cross_the_u32_boundary() {
        let mut pc = PairCounts::<u16>::default();
        let (p, q) = ((1, 2), (3, 4));
        let big = u32::MAX as u64;
        assert!(pc.add(p, big - 1));
        assert!(!pc.add(p, 1));
        assert_eq!(pc.get(&p), big);
        assert!(!pc.add(p, big));
        assert_eq!(pc.get(&p), 2 * big);
        assert_eq!(pc.sub(p, big + 1), Some((2 * big, big - 1)));
        assert_eq!(pc.get(&p), big - 1);
        assert!(pc.big.is_empty());
        assert!(pc.add(q, 3 * big));
        assert_eq!(pc.sub(q, big), Some((3 * big, 2 * big)));
        let mut all: Vec<_> = pc.iter().collect();
        all.sort();
        assert_eq!(all, vec![(p, big - 1), (q, 2 * big)]);
        assert_eq!(pc.sub(q, 2 * big), Some((2 * big, 0)));
        assert_eq!(pc.get(&q), 0);
        assert_eq!((pc.small.len(), pc.big.len()), (1, 0));
        assert_eq!(pc.sub(q, 1), None);
    }
}
