//! The straddling tokens of BPE from whole characters, found at the character boundaries of a
//! pre-token: a filter of the bytes around a boundary where one can occur, then the candidates
//! of that window compared in place.

use rustc_hash::FxHashMap;

/// Where a straddler occurs. A straddler `t` has a non-continuation byte after its first;
/// the first such, `t[k]`, sits on a character boundary of any valid UTF-8 text holding `t`.
/// So an occurrence puts `t[k-1], t[k], t[k+1]` (or `t[k-1], t[k]` when `t` ends at `k`)
/// around some boundary of the pre-token, and starts inside the character before it (the bytes
/// `t[1..k]` are continuation bytes). Checking each boundary against the filter is a few
/// instructions per character; the straddlers of a window that passes are then compared at
/// that boundary. Every occurrence is found where phase 1 reaches its boundary, so phase 1
/// runs once: in the 25-language corpus 61% of o200k's pre-tokens with a multi-byte character
/// hold one (mostly a space and the first byte of a letter, ` \xd8`), and a search over the
/// whole pre-token with a second phase 1 costs 17% more instructions on new text (callgrind,
/// o200k, 2 MB: 327M against 279M).
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
    /// [`Windows::hit`] at a boundary between a multi-byte character and a 2-byte one
    /// (Cyrillic, Greek, Arabic, Hebrew, Armenian), as one bit of the 17 that vary: the low 6
    /// bits of the byte before, the low 5 of the first byte, the low 6 of the next.
    before_two: Box<[u64; 1 << 11]>,
    /// Each window's straddlers, as a range of `straddlers`; the key is [`window`]'s, or
    /// [`TWO`] with the two bytes for a straddler that ends at `k`.
    candidates: FxHashMap<u32, (u32, u32)>,
    /// The straddlers, each with its `k`, grouped by window.
    straddlers: Vec<(Box<[u8]>, usize)>,
    /// Bit `a << 8 | b` of the two-byte windows whose one straddler is `a, b` itself: the
    /// commonest in the 25-language corpus (` \xd8`, ` \xec`, ` \xce`), found without a
    /// compare.
    exact_two: Box<[u64; 1 << 10]>,
}

/// Marks the key of a window of two bytes in [`Windows::candidates`].
const TWO: u32 = 1 << 25;

impl Windows {
    pub(super) fn new(straddlers: &[&[u8]]) -> Self {
        let mut keys = Vec::new();
        let mut two = vec![0u64; 1 << 10];
        let mut keyed: Vec<(u32, &[u8], usize)> = Vec::new();
        for t in straddlers {
            let Some(k) = (1..t.len()).find(|&k| t[k] & 0xC0 != 0x80) else {
                continue;
            };
            match t.get(k + 1) {
                Some(&next) => {
                    keys.push(window(t[k - 1], t[k], next));
                    keyed.push((window(t[k - 1], t[k], next), t, k));
                }
                None => {
                    let bit = (t[k - 1] as usize) << 8 | t[k] as usize;
                    two[bit >> 6] |= 1 << (bit & 63);
                    keyed.push((TWO | bit as u32, t, k));
                }
            }
        }
        keyed.sort_unstable();
        let mut candidates = FxHashMap::default();
        for (i, &(key, _, _)) in keyed.iter().enumerate() {
            let range = candidates.entry(key).or_insert((i as u32, i as u32));
            range.1 = i as u32 + 1;
        }
        let mut exact_two = Box::new([0u64; 1 << 10]);
        for (&key, &(from, to)) in &candidates {
            if key & TWO != 0 && to == from + 1 && keyed[from as usize].1.len() == 2 {
                let bit = (key & 0xFFFF) as usize;
                exact_two[bit >> 6] |= 1 << (bit & 63);
            }
        }
        let straddlers = keyed
            .into_iter()
            .map(|(_, t, k)| (Box::from(t), k))
            .collect();
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
            before_two: Box::new([0; 1 << 11]),
            candidates,
            straddlers,
            exact_two,
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
        for bits in 0..1usize << 17 {
            let window = [
                0x80 | (bits >> 11) as u8,
                0xC0 | (bits >> 6 & 0x1F) as u8,
                0x80 | (bits & 0x3F) as u8,
            ];
            if windows.hit(&window, 1) {
                windows.before_two[bits >> 6] |= 1 << (bits & 63);
            }
        }
        windows
    }

    /// [`Windows::hit`] before the 2-byte character spelt `lead, next` that follows `before`,
    /// the last byte of a multi-byte character.
    #[inline]
    pub(super) fn before_two(&self, before: u8, lead: u8, next: u8) -> bool {
        let bits =
            (before as usize & 0x3F) << 11 | (lead as usize & 0x1F) << 6 | (next as usize & 0x3F);
        self.before_two[bits >> 6] >> (bits & 63) & 1 != 0
    }

    /// The end of the longest straddler occurrence in `pretoken` whose first character
    /// boundary is `i` (`0 < i`, a boundary); 0 if there is none. Called where
    /// [`Windows::hit`] holds (else there is none).
    #[inline(never)]
    pub(super) fn occurrence_end(&self, pretoken: &[u8], i: usize) -> usize {
        let (a, b) = (pretoken[i - 1], pretoken[i]);
        // The end of the longest occurrence among the straddlers of window `key`.
        let found = |key: u32| {
            let (from, to) = self.candidates[&key];
            let mut end = 0;
            for (t, k) in &self.straddlers[from as usize..to as usize] {
                let Some(start) = i.checked_sub(*k) else {
                    continue;
                };
                if pretoken.get(start..start + t.len()) == Some(&t[..]) {
                    end = end.max(start + t.len());
                }
            }
            end
        };
        let bit = (a as usize) << 8 | b as usize;
        let mut end = 0;
        if self.two[bit >> 6] >> (bit & 63) & 1 != 0 {
            end = if self.exact_two[bit >> 6] >> (bit & 63) & 1 != 0 {
                i + 1
            } else {
                found(TWO | bit as u32)
            };
        }
        if let Some(&c) = pretoken.get(i + 1) {
            let key = window(a, b, c);
            if self.has_three(key) {
                end = end.max(found(key));
            }
        }
        end
    }

    /// Whether `pretoken` holds a straddler, by a plain search: the tests' oracle.
    #[cfg(test)]
    pub(super) fn holds_straddler(&self, pretoken: &[u8]) -> bool {
        self.straddlers
            .iter()
            .any(|(t, _)| pretoken.windows(t.len()).any(|w| w == &t[..]))
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
        self.has_three(window(a, b, c))
    }

    /// Whether a straddler has the three-byte window `key` ([`window`]'s).
    #[inline]
    fn has_three(&self, key: u32) -> bool {
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
