//! GPT-2's byte alphabet: the printable character that stands for each byte value in the
//! token texts of `vocab.json`, `merges.txt` and byte-level `tokenizer.json` files. The
//! printable Latin-1 bytes stand for themselves; the other 68 (controls, space, 0x7F-0xA0,
//! 0xAD) take U+0100 to U+0143, in byte order.

/// The 68 bytes that are not printable Latin-1 characters, in order: U+0100 + i stands for
/// `OTHER[i]`.
const OTHER: [u8; 68] = {
    let mut out = [0u8; 68];
    let (mut b, mut i) = (0usize, 0usize);
    while b < 256 {
        if !printable(b as u32) {
            out[i] = b as u8;
            i += 1;
        }
        b += 1;
    }
    out
};

/// Whether byte value `b` stands for itself.
const fn printable(b: u32) -> bool {
    matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The byte that `c` stands for, or `None` when `c` is not in the alphabet.
#[inline]
pub fn byte_of(c: char) -> Option<u8> {
    match c as u32 {
        b if printable(b) => Some(b as u8),
        u @ 0x100..=0x143 => Some(OTHER[(u - 0x100) as usize]),
        _ => None,
    }
}

/// Appends the bytes `text` spells to `out`; `false` (with `out` cut back) when a character
/// of `text` is not in the alphabet.
pub fn decode(text: &str, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    for c in text.chars() {
        match byte_of(c) {
            Some(b) => out.push(b),
            None => {
                out.truncate(start);
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_byte_has_one_character() {
        let mut seen = [false; 256];
        for c in (0..0x200).filter_map(char::from_u32) {
            if let Some(b) = byte_of(c) {
                assert!(!seen[b as usize], "{c:?}");
                seen[b as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        // GPT-2's encoder.json: "Ġ" is the space, "Ċ" the newline, "Ń" the soft hyphen.
        assert_eq!(byte_of('Ġ'), Some(b' '));
        assert_eq!(byte_of('Ċ'), Some(b'\n'));
        assert_eq!(byte_of('Ń'), Some(0xAD));
        assert_eq!(
            (byte_of('a'), byte_of(' '), byte_of('中')),
            (Some(b'a'), None, None)
        );
        let mut out = b"x".to_vec();
        assert!(decode("Ġhi", &mut out) && out == b"x hi");
        assert!(!decode("Ġh i", &mut out) && out == b"x hi");
    }
}
