//! A tiny deterministic generator for the tests (no dependency needed for it).

/// A 64-bit linear congruential generator (Knuth's MMIX constants), seeded by its field.
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    /// A number in `0..n`, from the generator's high bits.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    /// Indices of `n` items for `rounds` rounds of look-ups: the first round each in order,
    /// the later ones `n` drawn at random, so a cache meets new items, then items it still
    /// holds and items it has evicted.
    pub(crate) fn visits(&mut self, n: usize, rounds: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for _ in 1..rounds {
            for _ in 0..n {
                order.push(self.below(n));
            }
        }
        order
    }

    /// Up to `n` distinct words of bytes from `alphabet`, each of a length drawn from
    /// `lens`, sorted.
    pub(crate) fn distinct_words(
        &mut self,
        n: usize,
        lens: std::ops::Range<usize>,
        alphabet: &[u8],
    ) -> Vec<Vec<u8>> {
        let mut words: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                (0..lens.start + self.below(lens.len()))
                    .map(|_| alphabet[self.below(alphabet.len())])
                    .collect()
            })
            .collect();
        words.sort();
        words.dedup();
        words
    }
}
