//! A min-queue of `u64` keys for keys that never go below the last one popped (a radix
//! heap): BPE's queue when every merge's pairs rank after the merges that made their parts,
//! as in every trained merge list. A push is one `Vec::push`; a pop moves keys only toward
//! the minimum, each at most 64 times, so memory is read in runs instead of a binary heap's
//! scattered sift-downs over millions of entries.

/// Keys in 65 buckets by the highest bit in which they differ from `last` (bucket 0: equal).
pub(super) struct MonotoneHeap {
    last: u64,
    len: usize,
    buckets: [Vec<u64>; 65],
}

#[inline(always)]
fn bucket_of(last: u64, key: u64) -> usize {
    (u64::BITS - (key ^ last).leading_zeros()) as usize
}

impl MonotoneHeap {
    pub(super) fn new() -> Self {
        MonotoneHeap {
            last: 0,
            len: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
        }
    }

    /// Adds `key`, which must be at least the last key popped.
    #[inline(always)]
    pub(super) fn push(&mut self, key: u64) {
        debug_assert!(
            key >= self.last,
            "key {key} below the last popped {}",
            self.last
        );
        self.buckets[bucket_of(self.last, key)].push(key);
        self.len += 1;
    }

    /// Removes and returns the smallest key.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = (1..65).find(|&i| !self.buckets[i].is_empty())?;
            let keys = std::mem::take(&mut self.buckets[i]);
            self.last = *keys.iter().min()?;
            for &k in &keys {
                self.buckets[bucket_of(self.last, k)].push(k);
            }
            // Keep the allocation for the next redistribution from this bucket.
            let mut keys = keys;
            keys.clear();
            self.buckets[i] = keys;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

#[cfg(test)]
mod tests {
    use super::MonotoneHeap;
    use crate::test_rng::Lcg;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn pops_in_order_like_a_binary_heap_under_monotone_pushes() {
        let mut rng = Lcg(11);
        for _ in 0..200 {
            let (mut ours, mut theirs) = (MonotoneHeap::new(), BinaryHeap::new());
            let mut floor = 0u64;
            for _ in 0..rng.below(300) + 1 {
                let k = floor + rng.below(1 << 20) as u64;
                ours.push(k);
                theirs.push(Reverse(k));
            }
            while let Some(Reverse(want)) = theirs.pop() {
                assert_eq!(ours.pop(), Some(want));
                floor = want;
                // Pushes at or above the last pop, as BPE's new pairs are.
                for _ in 0..rng.below(3) {
                    let k = floor + rng.below(1 << 12) as u64;
                    ours.push(k);
                    theirs.push(Reverse(k));
                }
            }
            assert_eq!(ours.pop(), None);
        }
    }
}
