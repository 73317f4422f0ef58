//! The classes of 64 bytes as bit masks (bit `k` for byte `k`), made 16 bytes at a time with
//! SSE2, which every x86-64 CPU has, or 64 at a time with AVX-512BW where the CPU has it
//! (detected at run time); byte by byte on other CPUs.
//!
//! The wide masks are one compare each straight into a mask register, where the narrow ones
//! take four compares, four `pmovmskb` and the shifts that join them: with them the window
//! splitters encode new code 1.11x as fast and new English 1.06x (o200k, paired runs).

/// The classes of 64 bytes that the window splitters ask for.
pub(super) struct Classes {
    /// `A-Z`.
    pub upper: u64,
    /// `a-z`.
    pub lower: u64,
    /// `0-9`.
    pub digit: u64,
    /// `\s` in ASCII: `\t`, `\n`, `\x0b`, `\x0c`, `\r`, space.
    pub ws: u64,
    /// `\r` or `\n`.
    pub newline: u64,
    pub lf: u64,
    pub space: u64,
    pub slash: u64,
    pub apostrophe: u64,
    /// `0x21..=0x7e`.
    pub visible: u64,
}

/// Whether this CPU makes the wide masks (`WIDE = true` below).
#[inline(always)]
pub(super) fn wide_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The first `avail` bytes of `rest` (at most 64, at most `rest.len()`), zero after them.
///
/// # Safety
/// With `WIDE`, the CPU has AVX-512BW ([`wide_available`]).
#[inline(always)]
pub(super) unsafe fn load<const WIDE: bool>(rest: &[u8], avail: usize) -> [u8; 64] {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        return wide::load(rest, avail);
    }
    let mut bytes = [0u8; 64];
    bytes[..avail].copy_from_slice(&rest[..avail]);
    bytes
}

/// The bytes of 0x80 and up.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub(super) unsafe fn high_bits<const WIDE: bool>(bytes: &[u8; 64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if WIDE {
            return wide::high_bits(bytes);
        }
        narrow::lanes(bytes, |x| x)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bits(bytes, |b| b >= 0x80)
    }
}

impl Classes {
    /// # Safety
    /// As [`load`].
    #[inline(always)]
    pub(super) unsafe fn of<const WIDE: bool>(bytes: &[u8; 64]) -> Classes {
        #[cfg(target_arch = "x86_64")]
        if WIDE {
            return wide::classes(bytes);
        }
        let lf = narrow_eq_mask(bytes, b'\n', 0);
        let cr = narrow_eq_mask(bytes, b'\r', 0);
        let space = narrow_eq_mask(bytes, b' ', 0);
        Classes {
            upper: range_mask(bytes, b'A', b'Z'),
            lower: range_mask(bytes, b'a', b'z'),
            digit: range_mask(bytes, b'0', b'9'),
            ws: range_mask(bytes, b'\t', b'\r') | space,
            newline: lf | cr,
            lf,
            space,
            slash: narrow_eq_mask(bytes, b'/', 0),
            apostrophe: narrow_eq_mask(bytes, b'\'', 0),
            visible: range_mask(bytes, 0x21, 0x7E),
        }
    }
}

/// The bytes `b` with `b | fold == value`.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub(super) unsafe fn eq_mask<const WIDE: bool>(bytes: &[u8; 64], value: u8, fold: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        return wide::eq_mask(bytes, value, fold);
    }
    narrow_eq_mask(bytes, value, fold)
}

#[inline(always)]
fn narrow_eq_mask(bytes: &[u8; 64], value: u8, fold: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the loads read 16 of the 64 bytes each.
        unsafe {
            let v = _mm_set1_epi8(value as i8);
            let f = _mm_set1_epi8(fold as i8);
            narrow::lanes(bytes, |x| _mm_cmpeq_epi8(_mm_or_si128(x, f), v))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bits(bytes, |b| b | fold == value)
    }
}

/// The bytes in `lo..=hi`.
#[inline(always)]
fn range_mask(bytes: &[u8; 64], lo: u8, hi: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: as in `eq_mask`. Bytes are compared as signed after flipping the top bit,
        // which orders them as unsigned.
        unsafe {
            let flip = _mm_set1_epi8(i8::MIN);
            let below_lo = _mm_set1_epi8((lo ^ 0x80) as i8);
            let above_hi = _mm_set1_epi8((hi ^ 0x80) as i8);
            narrow::lanes(bytes, |x| {
                let x = _mm_xor_si128(x, flip);
                _mm_andnot_si128(
                    _mm_or_si128(_mm_cmplt_epi8(x, below_lo), _mm_cmpgt_epi8(x, above_hi)),
                    _mm_set1_epi8(-1),
                )
            })
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bits(bytes, |b| (lo..=hi).contains(&b))
    }
}

#[cfg(target_arch = "x86_64")]
mod narrow {
    use std::arch::x86_64::*;

    /// The 64 bits of a per-byte comparison made 16 bytes at a time.
    #[inline(always)]
    pub(super) unsafe fn lanes(bytes: &[u8; 64], cmp: impl Fn(__m128i) -> __m128i) -> u64 {
        let mut out = 0u64;
        for (k, chunk) in bytes.chunks_exact(16).enumerate() {
            let x = _mm_loadu_si128(chunk.as_ptr().cast());
            out |= u64::from(_mm_movemask_epi8(cmp(x)) as u16) << (16 * k);
        }
        out
    }
}

/// The same masks, 64 bytes at a time. Each function is inlined only into callers compiled
/// for AVX-512BW (`split::window`'s wide entry).
#[cfg(target_arch = "x86_64")]
mod wide {
    use super::Classes;
    use std::arch::x86_64::*;

    /// A masked load: the bytes past `avail` are not read (no fault past the slice's end)
    /// and come in as zero.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    pub(super) unsafe fn load(rest: &[u8], avail: usize) -> [u8; 64] {
        let mask = if avail >= 64 {
            u64::MAX
        } else {
            (1u64 << avail) - 1
        };
        let x = _mm512_maskz_loadu_epi8(mask, rest.as_ptr().cast());
        std::mem::transmute::<__m512i, [u8; 64]>(x)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    pub(super) unsafe fn eq_mask(bytes: &[u8; 64], value: u8, fold: u8) -> u64 {
        let x = _mm512_loadu_si512(bytes.as_ptr().cast());
        let x = _mm512_or_si512(x, _mm512_set1_epi8(fold as i8));
        _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(value as i8))
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    pub(super) unsafe fn high_bits(bytes: &[u8; 64]) -> u64 {
        _mm512_movepi8_mask(_mm512_loadu_si512(bytes.as_ptr().cast()))
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    pub(super) unsafe fn classes(bytes: &[u8; 64]) -> Classes {
        let x = _mm512_loadu_si512(bytes.as_ptr().cast());
        let eq = |v: u8| _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(v as i8));
        // `lo..=hi` as one unsigned compare: bytes below `lo` wrap round to above `hi - lo`.
        let range = |lo: u8, hi: u8| {
            _mm512_cmple_epu8_mask(
                _mm512_sub_epi8(x, _mm512_set1_epi8(lo as i8)),
                _mm512_set1_epi8((hi - lo) as i8),
            )
        };
        let lf = eq(b'\n');
        let cr = eq(b'\r');
        let space = eq(b' ');
        Classes {
            upper: range(b'A', b'Z'),
            lower: range(b'a', b'z'),
            digit: range(b'0', b'9'),
            ws: range(b'\t', b'\r') | space,
            newline: lf | cr,
            lf,
            space,
            slash: eq(b'/'),
            apostrophe: eq(b'\''),
            visible: range(0x21, 0x7E),
        }
    }
}

/// The 64 bits of a per-byte test made one byte at a time: other CPUs' masks, and the
/// tests' check of the vector ones.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn bits(bytes: &[u8; 64], keep: impl Fn(u8) -> bool) -> u64 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |acc, (k, &b)| acc | u64::from(keep(b)) << k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value's classes, by both widths where the CPU has the wide one.
    #[test]
    fn classes_are_the_bytes_classes() {
        let mut bytes = [0u8; 64];
        for start in (0..256).step_by(64) {
            for (k, b) in bytes.iter_mut().enumerate() {
                *b = (start + k) as u8;
            }
            let check = |c: Classes, high: u64| {
                for (k, &b) in bytes.iter().enumerate() {
                    let bit = |m: u64| m >> k & 1 == 1;
                    assert_eq!(bit(high), b >= 0x80, "{b:#x}");
                    assert_eq!(bit(c.upper), b.is_ascii_uppercase(), "{b:#x}");
                    assert_eq!(bit(c.lower), b.is_ascii_lowercase(), "{b:#x}");
                    assert_eq!(bit(c.digit), b.is_ascii_digit(), "{b:#x}");
                    // Unicode White_Space in ASCII (not Rust's is_ascii_whitespace: no \x0b).
                    assert_eq!(bit(c.ws), matches!(b, 9..=13 | 32), "{b:#x}");
                    assert_eq!(bit(c.newline), matches!(b, b'\r' | b'\n'), "{b:#x}");
                    assert_eq!(bit(c.lf), b == b'\n', "{b:#x}");
                    assert_eq!(bit(c.space), b == b' ', "{b:#x}");
                    assert_eq!(bit(c.slash), b == b'/', "{b:#x}");
                    assert_eq!(bit(c.apostrophe), b == b'\'', "{b:#x}");
                    assert_eq!(bit(c.visible), b.is_ascii_graphic(), "{b:#x}");
                }
            };
            // SAFETY: narrow masks need only SSE2; wide ones are asked for where detected.
            unsafe {
                check(Classes::of::<false>(&bytes), high_bits::<false>(&bytes));
                if wide_available() {
                    check(Classes::of::<true>(&bytes), high_bits::<true>(&bytes));
                }
            }
            // The byte-at-a-time masks that other CPUs run give the same bits.
            // SAFETY: as above.
            assert_eq!(
                unsafe { high_bits::<false>(&bytes) },
                bits(&bytes, |b| b >= 0x80)
            );
            for (value, fold) in [(b's', 0x20), (b'\n', 0), (b'\'', 0)] {
                let want = bits(&bytes, |b| b | fold == value);
                // SAFETY: as above.
                unsafe {
                    assert_eq!(eq_mask::<false>(&bytes, value, fold), want);
                    if wide_available() {
                        assert_eq!(eq_mask::<true>(&bytes, value, fold), want);
                    }
                }
            }
            let visible = bits(&bytes, |b| (0x21..=0x7E).contains(&b));
            assert_eq!(range_mask(&bytes, 0x21, 0x7E), visible);
            assert_eq!(range_mask(&bytes, 0, 0xFF), u64::MAX);
        }
    }

    /// Both widths load a slice's first bytes and nothing after them, at every length.
    #[test]
    fn loads_stop_at_avail() {
        let text: Vec<u8> = (1..=80).collect();
        for avail in 0..=64 {
            let want: Vec<u8> = (0..64)
                .map(|k| if k < avail { text[k] } else { 0 })
                .collect();
            // SAFETY: as in `classes_are_the_bytes_classes`.
            unsafe {
                assert_eq!(load::<false>(&text[..avail], avail).to_vec(), want);
                if wide_available() {
                    assert_eq!(load::<true>(&text[..avail], avail).to_vec(), want);
                }
            }
        }
    }
}
