//! A short pre-token as one `u128` key: its bytes zero-padded, then its length in byte 15.
//!
//! Pre-tokens of up to 15 bytes (nearly all of them) are stored and looked up by this key
//! inline in a hash table: one cache line and an integer compare, where a boxed key costs a
//! hash probe, then a `memcmp` that misses on the separately allocated bytes (two thirds of
//! the counting time in a `perf` profile).

/// The longest pre-token with a key.
pub const MAX_LEN: usize = 15;

/// The key of a pre-token of at most [`MAX_LEN`] bytes (little-endian: byte `i` of the
/// pre-token is bits `8i..8i+8`, the length bits `120..128`); `None` for a longer one.
///
/// ```
/// use bytepair::pretoken_key::pack;
/// assert_eq!(pack(b"ab"), Some(0x6261 | 2 << 120));
/// ```
///
/// Built from two overlapping fixed-size loads instead of `copy_from_slice`, whose
/// variable length compiles to a `memmove` call: 15 of the ~160 instructions per
/// pre-token of counting (cachegrind, gpt2, 8 MB of en-prose).
#[inline(always)]
pub fn pack(pretoken: &[u8]) -> Option<u128> {
    let n = pretoken.len();
    let u64_at = |i: usize| u64::from_le_bytes(pretoken[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(pretoken[i..i + 4].try_into().expect("4 bytes"));
    // The bytes from 8 (resp. 4) on are the top bytes of the load that ends at `n`.
    let bytes: u128 = match n {
        16.. => return None,
        9..=15 => u64_at(0) as u128 | ((u64_at(n - 8) >> (8 * (16 - n))) as u128) << 64,
        8 => u64_at(0) as u128,
        5..=7 => (u32_at(0) as u64 | ((u32_at(n - 4) >> (8 * (8 - n))) as u64) << 32) as u128,
        4 => u32_at(0) as u128,
        // Pre-tokens of one to three bytes (`,`, ` a`, `\n\n`) are common: no loop for them
        // (callgrind, o200k encoding: English -3.3% instructions, code -5.1%).
        3 => {
            (u16::from_le_bytes([pretoken[0], pretoken[1]]) as u32 | (pretoken[2] as u32) << 16)
                as u128
        }
        2 => u16::from_le_bytes([pretoken[0], pretoken[1]]) as u128,
        1 => pretoken[0] as u128,
        _ => 0,
    };
    Some(bytes | (n as u128) << 120)
}

/// [`pack`] of `text[start..end]`: where 16 bytes of `text` follow `start` (all but the
/// end of a text), one load masked to the length instead of `pack`'s jump on the length.
///
/// ```
/// use bytepair::pretoken_key::{pack, pack_within};
/// let text = b"a word, then more words";
/// assert_eq!(pack_within(text, 1, 6), pack(b" word"));
/// ```
#[inline(always)]
pub fn pack_within(text: &[u8], start: usize, end: usize) -> Option<u128> {
    let n = end - start;
    if n > MAX_LEN {
        return None;
    }
    match text.get(start..start + 16) {
        Some(wide) => {
            let bytes = u128::from_le_bytes(wide.try_into().expect("16 bytes"));
            Some(bytes & KEEP[n] | (n as u128) << 120)
        }
        None => pack(&text[start..end]),
    }
}

/// `KEEP[n]`: the low `n` bytes of a `u128`, as a table: a u128 shift by a variable amount
/// compiles to shld, shifts and cmovs, 3 instructions more per pre-token (callgrind, o200k,
/// new English: the encoding loop 2.3% fewer instructions with the table).
const KEEP: [u128; MAX_LEN + 1] = {
    let mut keep = [0u128; MAX_LEN + 1];
    let mut n = 1;
    while n <= MAX_LEN {
        keep[n] = (1u128 << (8 * n)) - 1;
        n += 1;
    }
    keep
};

/// The pre-token of a key, as 16 bytes: the pre-token, zero-padded, then its length.
#[inline]
pub fn unpack(key: u128) -> [u8; 16] {
    key.to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pack` against its plain definition, on every length and every offset of a text
    /// with all byte values (zero bytes too, so padding and data can't be confused).
    #[test]
    fn pack_puts_bytes_then_length() {
        let text: Vec<u8> = (0..=255u8).rev().chain(0..=255).collect();
        for len in 0..=16 {
            for start in 0..text.len() - len {
                let pretoken = &text[start..start + len];
                let want = (len <= MAX_LEN).then(|| {
                    let mut b = [0u8; 16];
                    b[..len].copy_from_slice(pretoken);
                    b[15] = len as u8;
                    u128::from_le_bytes(b)
                });
                assert_eq!(pack(pretoken), want, "{pretoken:?}");
                assert_eq!(pack_within(&text, start, start + len), want, "{pretoken:?}");
                if let Some(key) = want {
                    assert_eq!(&unpack(key)[..len], pretoken);
                }
            }
        }
    }
}
