//! A `.tiktoken` rank file read in one pass: a line per token, `base64(token) SPACE rank`.
//!
//! This is the loaders' fast road. It takes only a regular file (ASCII; each line two
//! fields; strict base64 with its padding; a rank of decimal digits; no token or rank
//! twice; blank lines skipped) and gives up on anything else, which the Python reader
//! (`bytepair.formats.tiktoken`) then reads again to name the line and what is wrong.
//! o200k's 200,000 lines to a Python dict: 40-50 ms this way, 210-230 ms in Python.

use crate::TokenId;
use rustc_hash::FxHashSet;

/// The `(rank, token)` of each line, in file order; `None` for a file that is not regular
/// or has no line.
///
/// ```
/// use bytepair::rank_file::parse;
/// assert_eq!(parse(b"YQ== 0\r\nYmM= 1\n\n"), Some(vec![(0, b"a".to_vec()), (1, b"bc".to_vec())]));
/// assert_eq!(parse(b"YQ== 0\nYQ== 1\n"), None); // a token twice
/// ```
pub fn parse(raw: &[u8]) -> Option<Vec<(TokenId, Vec<u8>)>> {
    let mut out = Vec::with_capacity(raw.len() / 12);
    for line in raw.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let space = line.iter().position(|&b| b == b' ')?;
        let (b64, rank) = (&line[..space], &line[space + 1..]);
        out.push((decimal(rank)?, base64(b64)?));
    }
    if out.is_empty() {
        return None;
    }
    let mut ranks = FxHashSet::default();
    let mut tokens = FxHashSet::default();
    ranks.reserve(out.len());
    tokens.reserve(out.len());
    for (rank, token) in &out {
        if !ranks.insert(*rank) || !tokens.insert(token.as_slice()) {
            return None;
        }
    }
    Some(out)
}

/// A rank: one or more ASCII digits, below 2^32.
fn decimal(text: &[u8]) -> Option<TokenId> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0 as TokenId, |n, &c| {
        let digit = c.checked_sub(b'0').filter(|&d| d < 10)?;
        n.checked_mul(10)?.checked_add(digit as TokenId)
    })
}

/// Standard base64 with `=` padding to a multiple of four characters, unused bits zero, at
/// least one byte out.
fn base64(text: &[u8]) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(4) {
        return None;
    }
    let pad = text.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let body = &text[..text.len() - pad];
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in body {
        acc = acc << 6 | sextet(c)? as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // The characters left over carry 2 or 4 bits, which must be zero: one spelling a token.
    (acc == 0 && !out.is_empty()).then_some(out)
}

fn sextet(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte string up to 5 bytes of a few values, encoded by hand, decodes back; the
    /// same text with its padding cut, a character past the alphabet, or spare bits set
    /// is refused.
    #[test]
    fn base64_decodes_what_it_should_and_nothing_else() {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let encode = |data: &[u8]| -> Vec<u8> {
            let mut out = Vec::new();
            for chunk in data.chunks(3) {
                let n =
                    chunk.iter().fold(0u32, |a, &b| a << 8 | b as u32) << (8 * (3 - chunk.len()));
                for k in 0..=chunk.len() {
                    out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize]);
                }
                out.extend(std::iter::repeat_n(b'=', 3 - chunk.len()));
            }
            out
        };
        let values = [0u8, 1, 0x3f, 0x80, 0xfe, 0xff];
        let mut data = vec![];
        for len in 1..=5usize {
            for k in 0..values.len().pow(len as u32) {
                data.clear();
                let mut k = k;
                for _ in 0..len {
                    data.push(values[k % values.len()]);
                    k /= values.len();
                }
                let text = encode(&data);
                assert_eq!(base64(&text).as_deref(), Some(data.as_slice()), "{text:?}");
                if text.ends_with(b"=") {
                    let cut = text.strip_suffix(b"=").unwrap();
                    assert_eq!(base64(cut), None);
                    // The last character before the padding with its lowest bit set.
                    let mut spare = text.clone();
                    let last = spare.iter().rposition(|&c| c != b'=').unwrap();
                    let s = sextet(spare[last]).unwrap();
                    spare[last] = ALPHABET[(s | 1) as usize];
                    assert_eq!(base64(&spare), None, "{spare:?}");
                }
                let mut bad = text.clone();
                bad[0] = b'-';
                assert_eq!(base64(&bad), None);
            }
        }
        assert_eq!(base64(b""), None);
        assert_eq!(base64(b"===="), None);
        assert_eq!(base64(b"QQ=A"), None);
    }

    #[test]
    fn irregular_files_are_left_to_the_reader() {
        assert_eq!(parse(b"YQ== 0\nYg== 1").map(|v| v.len()), Some(2));
        for raw in [
            &b"YQ== 0\nYg== 0\n"[..], // a rank twice
            b"YQ== 0 1\n",            // three fields
            b"YQ==\n",                // one
            b"YQ== -1\n",             // not digits
            b"YQ== \n",               // no rank
            b"YQ== 4294967296\n",     // past 2^32
            b"YQ== 1\xc3\xa9\n",      // not ASCII
            b"YQ 0\n",                // no padding
        ] {
            assert_eq!(parse(raw), None, "{raw:?}");
        }
    }
}
