//! The window filter of BPE from whole characters: the bytes around a character boundary
//! where a straddling token can occur, so most pre-tokens skip the search for straddlers.

/// Where a straddler can occur. A straddler `t` has a non-continuation byte after its first;
/// the first such, `t[k]`, sits on a character boundary of any valid UTF-8 text holding `t`.
/// So an occurrence puts `t[k-1], t[k], t[k+1]` (or `t[k-1], t[k]` when `t` ends at `k`)
/// around some boundary of the pre-token. Checking each boundary here is a few instructions per
/// character; the Aho-Corasick search then runs on 6% of o200k's Chinese pre-tokens with a
/// multi-byte character instead of all (5.7% really hold a straddler).
pub(super) struct Windows {
    /// `1 + (t[k-1] << 16 | t[k] << 8 | t[k+1])`, open addressing, 0 = empty.
    three: Vec<u32>,
    /// Bit `t[k-1] << 8 | t[k]` of straddlers that end at `k`.
    two: Vec<u64>,
    /// [`Windows::hit`] at a boundary between a multi-byte character and a 3-byte one (most
    /// of Chinese), as one bit of the 16 that vary: the low 6 bits of the byte before, the
    /// low 4 of its first byte, the low 6 of the next.
    after_multi: Box<[u64; 1 << 10]>,
    /// Bit `cp >> 6` of each 3-byte character `cp` that some bit of `after_multi` has (the
    /// first byte and the next are the code point's top 10 bits): under o200k 26 of the 384
    /// blocks of 64 Han characters, so most Han characters skip `after_multi`.
    blocks: [u64; 16],
}

impl Windows {
    pub(super) fn new(straddlers: &[&[u8]]) -> Self {
        let mut keys = Vec::new();
        let mut two = vec![0u64; 1 << 10];
        for t in straddlers {
            let Some(k) = (1..t.len()).find(|&k| t[k] & 0xC0 != 0x80) else {
                continue;
            };
            match t.get(k + 1) {
                Some(&next) => keys.push(window(t[k - 1], t[k], next)),
                None => {
                    let bit = (t[k - 1] as usize) << 8 | t[k] as usize;
                    two[bit >> 6] |= 1 << (bit & 63);
                }
            }
        }
        // At most a quarter full: a look-up of an absent window (nearly all) ends at once.
        let mut three = vec![0u32; (keys.len() * 4).next_power_of_two().max(64)];
        for key in keys {
            let mut i = Self::slot(key, three.len());
            while three[i] != 0 && three[i] != key {
                i = (i + 1) & (three.len() - 1);
            }
            three[i] = key;
        }
        let mut windows = Windows {
            three,
            two,
            after_multi: Box::new([0; 1 << 10]),
            blocks: [0; 16],
        };
        for bits in 0..1usize << 16 {
            let window = [
                0x80 | (bits >> 10) as u8,
                0xE0 | (bits >> 6 & 0xF) as u8,
                0x80 | (bits & 0x3F) as u8,
            ];
            if windows.hit(&window, 1) {
                windows.after_multi[bits >> 6] |= 1 << (bits & 63);
                let block = bits & 0x3FF;
                windows.blocks[block >> 6] |= 1 << (block & 63);
            }
        }
        windows
    }

    /// [`Windows::hit`] before the 3-byte character `cp` spelt `lead, next, _` that follows
    /// `before`, the last byte of a multi-byte character.
    #[inline]
    pub(super) fn after_multi(&self, before: u8, cp: usize, lead: u8, next: u8) -> bool {
        if self.blocks[cp >> 12] >> (cp >> 6 & 63) & 1 == 0 {
            return false;
        }
        let bits =
            (before as usize & 0x3F) << 10 | (lead as usize & 0xF) << 6 | (next as usize & 0x3F);
        self.after_multi[bits >> 6] >> (bits & 63) & 1 != 0
    }

    #[inline]
    fn slot(key: u32, len: usize) -> usize {
        (key.wrapping_mul(0x9E37_79B1) >> (32 - len.trailing_zeros())) as usize
    }

    /// Whether a straddler could occur across the boundary before `pretoken[i]` (`0 < i`).
    #[inline]
    pub(super) fn hit(&self, pretoken: &[u8], i: usize) -> bool {
        let (a, b) = (pretoken[i - 1], pretoken[i]);
        let bit = (a as usize) << 8 | b as usize;
        if self.two[bit >> 6] >> (bit & 63) & 1 != 0 {
            return true;
        }
        let Some(&c) = pretoken.get(i + 1) else {
            return false;
        };
        let key = window(a, b, c);
        let mut j = Self::slot(key, self.three.len());
        loop {
            match self.three[j] {
                0 => return false,
                k if k == key => return true,
                _ => j = (j + 1) & (self.three.len() - 1),
            }
        }
    }
}

#[inline]
fn window(a: u8, b: u8, c: u8) -> u32 {
    1 + ((a as u32) << 16 | (b as u32) << 8 | c as u32)
}
