//! UTF-8 written from a str's own code units (Latin-1, UCS-2 or UCS-4, as CPython stores
//! it), for a str that is not ASCII: [`Units::utf8`].
//!
//! Asking Python for it (`PyUnicode_AsUTF8AndSize`) encodes into a new bytes object, copies
//! that into a buffer kept with the str for the str's life, and frees the bytes: 10.5M of
//! the 90.9M instructions of `encode_ordinary` per document on 1 MB of new Chinese (o200k,
//! callgrind), 6.8M of 58.1M on English (whose documents with one curly quote are UCS-2).
//! Here the code units go straight into the caller's buffer: eight at a time where the CPU
//! allows (`lanes`), the rest one character or a run of ASCII at a time. The tests run both
//! ways on every CPU, so the loops that other CPUs (ARM) run alone are checked here too.
//!
//! Each character is one four-byte little-endian store of its UTF-8, of which its length
//! counts, into room reserved for the longest output and [`SLACK`] bytes more.

mod lanes;
mod surrogates;

/// A surrogate code point, which UTF-8 cannot hold ([`Units::utf8`] replaces it as
/// tiktoken does).
#[derive(Debug)]
struct Surrogate;

/// A text as it is stored: UTF-8, or the Latin-1, UCS-2 or UCS-4 code units of a CPython
/// str. Borrowed code units can be written as UTF-8 on any thread, so a batch's texts are
/// written by the threads that encode them.
#[derive(Clone, Copy, Debug)]
pub enum Units<'a> {
    Utf8(&'a [u8]),
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

impl<'a> Units<'a> {
    /// The text's UTF-8 if it is stored as such (UTF-8, or Latin-1 that is all ASCII);
    /// otherwise `None`, its UTF-8 appended to `out`, surrogates replaced as tiktoken does
    /// (see `surrogates`).
    ///
    /// ```
    /// use bytepair::utf8::Units;
    /// let mut out = Vec::new();
    /// assert_eq!(Units::Latin1(b"abc").utf8(&mut out), Some(&b"abc"[..]));
    /// assert_eq!(Units::Ucs2(&[0x63, 0xE9, 0xD800]).utf8(&mut out), None);
    /// assert_eq!(out, "c\u{e9}\u{fffd}".as_bytes());
    /// ```
    pub fn utf8(&self, out: &mut Vec<u8>) -> Option<&'a [u8]> {
        match *self {
            Units::Utf8(bytes) => return Some(bytes),
            Units::Latin1(units) if units.is_ascii() => return Some(units),
            Units::Latin1(units) => latin1(units, out),
            Units::Ucs2(units) => {
                if ucs2(units, out).is_err() {
                    surrogates::write_replaced(units.iter().map(|&u| u.into()), out)
                }
            }
            Units::Ucs4(units) => {
                if ucs4(units, out).is_err() {
                    surrogates::write_replaced(units.iter().copied(), out)
                }
            }
        }
        None
    }

    /// The bytes the code units take (UTF-8's length for ASCII and Latin-1 text, within a
    /// factor of two for the rest): what sizes a batch's chunks.
    pub fn stored_len(&self) -> usize {
        match *self {
            Units::Utf8(b) | Units::Latin1(b) => b.len(),
            Units::Ucs2(u) => 2 * u.len(),
            Units::Ucs4(u) => 4 * u.len(),
        }
    }

    /// [`Units::utf8`] as one slice: the text's own bytes, or those written into `buf`
    /// (cleared first).
    pub fn utf8_in<'b>(&'b self, buf: &'b mut Vec<u8>) -> &'b [u8] {
        buf.clear();
        match self.utf8(buf) {
            Some(bytes) => bytes,
            None => buf,
        }
    }
}

/// Bytes past the longest output that a store may touch: a character's four-byte store, 3;
/// `lanes`' second 16-byte store of a block of eight units, 8. That store starts where the
/// block's first four units end, at most 8 bytes in for Latin-1 (12 for UCS-2), so it
/// reaches 24 bytes past the block's start (28), where the block's eight units have room
/// for 16 (24).
const SLACK: usize = 8;

/// Appends the UTF-8 of Latin-1 code units to `out`.
fn latin1(src: &[u8], out: &mut Vec<u8>) {
    latin1_with(src, out, lanes::available())
}

/// [`latin1`], eight units at a time first if `eight` (and the CPU has what that takes).
fn latin1_with(src: &[u8], out: &mut Vec<u8>, eight: bool) {
    let mut dst = Room::new(out, src.len(), 2);
    let mut i = dst.lanes(eight, |at| {
        // SAFETY: checked the CPU; `Room::new` reserved two bytes a unit.
        unsafe { lanes::latin1(src, at) }
    });
    while i < src.len() {
        if let Some(eight) = src.get(i..i + 8) {
            let word = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
            if word & 0x8080_8080_8080_8080 == 0 {
                dst.put8(word);
                i += 8;
                continue;
            }
        }
        dst.put(src[i] as u32);
        i += 1;
    }
    dst.keep(out);
}

/// Appends the UTF-8 of UCS-2 code units to `out`, or leaves it as it was at a surrogate.
fn ucs2(src: &[u16], out: &mut Vec<u8>) -> Result<(), Surrogate> {
    ucs2_with(src, out, lanes::available())
}

/// [`ucs2`], eight units at a time first if `eight` (and the CPU has what that takes).
fn ucs2_with(src: &[u16], out: &mut Vec<u8>, eight: bool) -> Result<(), Surrogate> {
    // Surrogates first, in one pass of whole vectors, so that the loop below tests none:
    // a test per character was 3 of a Chinese character's 25 instructions.
    if src
        .chunks(64)
        .any(|c| c.iter().fold(false, |any, &u| any | (u & 0xF800 == 0xD800)))
    {
        return Err(Surrogate);
    }
    let mut dst = Room::new(out, src.len(), 3);
    // SAFETY: checked the CPU and that no unit is a surrogate; `Room::new` reserved three
    // bytes a unit.
    let mut i = dst.lanes(eight, |at| unsafe { lanes::ucs2(src, at) });
    // Each run of characters of one UTF-8 length in a loop of its own (Cyrillic, Greek,
    // Arabic and Hebrew have two bytes; Chinese, Japanese, Korean, Indic scripts three):
    // 16 instructions a Chinese character instead of 22.
    while let Some(&c) = src.get(i) {
        if c < 0x80 {
            dst.put1(c as u32);
            i += 1;
            // A second ASCII character: the run eight units at a time (English with one
            // curly quote, where `lanes` cannot run). A space between words of other
            // scripts goes on at once.
            if src.get(i).is_some_and(|&u| u < 0x80) {
                while let Some(eight) = src.get(i..i + 8).and_then(|e| ascii8(e.try_into().ok()?)) {
                    dst.put8(eight);
                    i += 8;
                }
            }
        } else if c < 0x800 {
            while let Some(&u) = src.get(i).filter(|&&u| (0x80..0x800).contains(&u)) {
                dst.put2(u as u32);
                i += 1;
            }
        } else {
            while let Some(&u) = src.get(i).filter(|&&u| u >= 0x800) {
                dst.put3(u as u32);
                i += 1;
            }
        }
    }
    dst.keep(out);
    Ok(())
}

/// Eight UCS-2 units as their eight ASCII bytes, if they are all ASCII: one vector test
/// and pack, 12 instructions in the loop for eight units, where testing them one by one
/// took 21 before the pack.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ascii8(eight: &[u16; 8]) -> Option<u64> {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `eight`.
    unsafe {
        let v = _mm_loadu_si128(eight.as_ptr().cast());
        let high = _mm_and_si128(v, _mm_set1_epi16(0xFF80u16 as i16));
        if _mm_movemask_epi8(_mm_cmpeq_epi16(high, _mm_setzero_si128())) != 0xFFFF {
            return None;
        }
        Some(_mm_cvtsi128_si64(_mm_packus_epi16(v, v)) as u64)
    }
}

/// Eight UCS-2 units as their eight ASCII bytes, if they are all ASCII.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn ascii8(eight: &[u16; 8]) -> Option<u64> {
    ascii8_portable(eight)
}

/// [`ascii8`] without vector instructions: other CPUs' `ascii8`, and the x86 one's check.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn ascii8_portable(eight: &[u16; 8]) -> Option<u64> {
    (eight.iter().fold(0, |a, &u| a | u) < 0x80).then(|| u64::from_le_bytes(eight.map(|u| u as u8)))
}

/// Appends the UTF-8 of UCS-4 code units to `out`, or leaves it as it was at a surrogate.
fn ucs4(src: &[u32], out: &mut Vec<u8>) -> Result<(), Surrogate> {
    let mut dst = Room::new(out, src.len(), 4);
    for &c in src {
        if (0xD800..0xE000).contains(&c) {
            return Err(Surrogate);
        }
        dst.put(c);
    }
    dst.keep(out);
    Ok(())
}

/// The spare room of a `Vec<u8>`, reserved for `per` bytes a code unit and [`SLACK`], and
/// how much of it is written. Its stores check nothing (a bounds check was three of the
/// 25 instructions of a Chinese character): each writes `SLACK` bytes at most past the
/// `per` a code unit of the ones it consumes, so never past the room.
struct Room {
    at: *mut u8,
    written: usize,
    #[cfg(debug_assertions)]
    room: usize,
}

impl Room {
    fn new(out: &mut Vec<u8>, units: usize, per: usize) -> Self {
        out.reserve(units * per + SLACK);
        Room {
            at: out.spare_capacity_mut().as_mut_ptr().cast(),
            written: 0,
            #[cfg(debug_assertions)]
            room: out.capacity() - out.len(),
        }
    }

    /// Stores `word`, of `width` bytes (4 or 8), and counts `n` of them written.
    #[inline(always)]
    fn store(&mut self, word: u64, width: usize, n: usize) {
        #[cfg(debug_assertions)]
        assert!(self.written + width <= self.room);
        // SAFETY: the store lies within the room (see the type), which `new` reserved.
        unsafe {
            let p = self.at.add(self.written);
            if width == 8 {
                p.cast::<u64>().write_unaligned(word);
            } else {
                p.cast::<u32>().write_unaligned(word as u32);
            }
        }
        self.written += n;
    }

    #[inline(always)]
    fn put1(&mut self, c: u32) {
        self.store(c as u64, 4, 1);
    }

    #[inline(always)]
    fn put8(&mut self, eight: u64) {
        self.store(eight, 8, 8);
    }

    /// Writes `c`, one of U+0080..U+07FF.
    #[inline(always)]
    fn put2(&mut self, c: u32) {
        self.store((0x80C0 | (c >> 6) | (c << 8 & 0x3F00)) as u64, 4, 2);
    }

    /// Writes `c`, one of U+0800..U+FFFF.
    #[inline(always)]
    fn put3(&mut self, c: u32) {
        let word = 0x80_80E0 | (c >> 12) | (c << 2 & 0x3F00) | (c << 16 & 0x3F_0000);
        self.store(word as u64, 4, 3);
    }

    /// Writes the UTF-8 of the scalar value `c`.
    #[inline(always)]
    fn put(&mut self, c: u32) {
        if c < 0x80 {
            self.put1(c);
        } else if c < 0x800 {
            self.put2(c);
        } else if c < 0x1_0000 {
            self.put3(c);
        } else {
            let word = 0x8080_80F0
                | (c >> 18)
                | (c >> 4 & 0x3F00)
                | (c << 10 & 0x3F_0000)
                | (c << 24 & 0x3F00_0000);
            self.store(word as u64, 4, 4);
        }
    }

    /// Runs `run` (a function of `lanes`) at the room's start if `eight` and the CPU has
    /// what it needs, counting the bytes it wrote; the code units it consumed (0 if not run).
    #[inline(always)]
    fn lanes(&mut self, eight: bool, run: impl FnOnce(*mut u8) -> (usize, usize)) -> usize {
        debug_assert_eq!(self.written, 0);
        if eight && lanes::available() {
            let (units, written) = run(self.at);
            self.written = written;
            return units;
        }
        0
    }

    /// Makes the bytes written part of `out`, the Vec this room was made from.
    fn keep(self, out: &mut Vec<u8>) {
        // SAFETY: every byte below `written` of the spare room was stored (each store
        // starts where the bytes kept so far end), and the room is `out`'s, not moved since.
        unsafe { out.set_len(out.len() + self.written) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Lcg;

    /// Code points drawn near every edge of UTF-8's lengths and of the runs the loops take
    /// (ASCII, two bytes, three, four), in runs of one kind up to 40 long so that blocks of
    /// eight and sixteen units are all one kind or mixed.
    fn text(rng: &mut Lcg, max: u32) -> Vec<char> {
        const EDGES: [u32; 12] = [
            0, 0x41, 0x7F, 0x80, 0xFF, 0x100, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000,
        ];
        let mut out = Vec::new();
        for _ in 0..rng.below(12) {
            let edge = EDGES[rng.below(EDGES.len())].min(max);
            for _ in 0..1 + rng.below(40) {
                let c = (edge + rng.below(3) as u32).saturating_sub(1).min(max);
                out.extend(char::from_u32(c));
            }
        }
        out
    }

    /// Latin-1, UCS-2 and UCS-4 units give Rust's own UTF-8 of the same characters, both with
    /// the eight-unit lanes (where this CPU has them) and with the scalar loops alone, which
    /// are all that other CPUs run; a surrogate leaves the output as it was.
    #[test]
    fn every_unit_width_gives_the_characters_utf8_either_way() {
        let mut rng = Lcg(8);
        for _ in 0..4000 {
            for eight in [false, true] {
                let chars = text(&mut rng, 0xFF);
                let want: String = chars.iter().collect();
                let units: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
                let mut got = b"x".to_vec();
                latin1_with(&units, &mut got, eight);
                assert_eq!(got[1..], *want.as_bytes(), "latin1 {chars:?}");

                let chars = text(&mut rng, 0xFFFF);
                let want: String = chars.iter().collect();
                let units: Vec<u16> = chars.iter().map(|&c| c as u16).collect();
                let mut got = b"x".to_vec();
                assert!(ucs2_with(&units, &mut got, eight).is_ok());
                assert_eq!(got[1..], *want.as_bytes(), "ucs2 {chars:?}");
                let mut with_surrogate = units.clone();
                with_surrogate.insert(rng.below(units.len() + 1), 0xD800 + rng.below(2048) as u16);
                let mut got = b"x".to_vec();
                assert!(ucs2_with(&with_surrogate, &mut got, eight).is_err());
                assert_eq!(got, b"x");

                let chars = text(&mut rng, 0x10_FFFF);
                let want: String = chars.iter().collect();
                let units: Vec<u32> = chars.iter().map(|&c| c as u32).collect();
                let mut got = b"x".to_vec();
                assert!(ucs4(&units, &mut got).is_ok());
                assert_eq!(got[1..], *want.as_bytes(), "ucs4 {chars:?}");
            }
        }
    }

    /// The x86 `ascii8` (vector compare and pack) agrees with the portable one other CPUs
    /// run, on units at and around the ASCII bound.
    #[test]
    fn ascii8_agrees_with_the_portable_one() {
        let mut rng = Lcg(4);
        let near = [
            0u16, 0x20, 0x7E, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFF80, 0xFFFF,
        ];
        for _ in 0..100_000 {
            let mut eight = [0u16; 8];
            for u in &mut eight {
                *u = if rng.below(4) == 0 {
                    near[rng.below(near.len())]
                } else {
                    rng.below(0x80) as u16
                };
            }
            assert_eq!(ascii8(&eight), ascii8_portable(&eight), "{eight:x?}");
        }
    }
}
