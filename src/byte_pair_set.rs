//! A set of byte pairs, one bit for each of the 65,536: where a merge may join two bytes
//! (the trainer's base encoding, the encoder's first stage), 8 KB that stay in L1.

/// A set of byte pairs `(x, y)`.
///
/// ```
/// use bytepair::byte_pair_set::BytePairSet;
/// let mut s = BytePairSet::default();
/// s.insert(b'a', b' ');
/// assert!(s.holds(b'a', b' ') && !s.holds(b' ', b'a'));
/// ```
#[derive(Clone)]
pub struct BytePairSet {
    bits: Vec<u64>,
}

impl Default for BytePairSet {
    fn default() -> Self {
        BytePairSet {
            bits: vec![0; 1 << 10],
        }
    }
}

impl BytePairSet {
    /// Adds `(x, y)`.
    pub fn insert(&mut self, x: u8, y: u8) {
        let i = (x as usize) << 8 | y as usize;
        self.bits[i >> 6] |= 1 << (i & 63);
    }

    /// Whether `(x, y)` is in the set.
    #[inline]
    pub fn holds(&self, x: u8, y: u8) -> bool {
        let i = (x as usize) << 8 | y as usize;
        self.bits[i >> 6] & (1 << (i & 63)) != 0
    }
}
