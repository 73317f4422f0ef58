//! Surrogates, which UTF-8 cannot hold, as tiktoken treats them: the text goes to UTF-16
//! and back (Python's `text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`),
//! so a high surrogate followed by a low one becomes the character the pair encodes, and
//! every other surrogate becomes U+FFFD.

/// Appends the UTF-8 of the code points `units` (surrogates among them) by that rule.
pub(super) fn write_replaced(units: impl Iterator<Item = u32>, out: &mut Vec<u8>) {
    const HIGH: std::ops::Range<u32> = 0xD800..0xDC00;
    const LOW: std::ops::Range<u32> = 0xDC00..0xE000;
    let mut units = units.peekable();
    while let Some(u) = units.next() {
        let c = if HIGH.contains(&u) {
            match units.next_if(|next| LOW.contains(next)) {
                Some(low) => 0x1_0000 + ((u - 0xD800) << 10) + (low - 0xDC00),
                None => 0xFFFD,
            }
        } else {
            u
        };
        let c = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaced(units: &[u32]) -> String {
        let mut out = Vec::new();
        write_replaced(units.iter().copied(), &mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    /// Python's round trip on each case (CPython 3.11), written out by hand.
    #[test]
    fn a_pair_joins_and_every_other_surrogate_is_replaced() {
        assert_eq!(replaced(&[0xD800, 0x61]), "\u{FFFD}a");
        assert_eq!(replaced(&[0xD800, 0xD800, 0xDC00]), "\u{FFFD}\u{10000}");
        assert_eq!(replaced(&[0x61, 0xDC00]), "a\u{FFFD}");
        assert_eq!(replaced(&[0xDBFF]), "\u{FFFD}");
        assert_eq!(replaced(&[0xD800, 0xDC00, 0xDC00]), "\u{10000}\u{FFFD}");
        assert_eq!(replaced(&[0xDBFF, 0xDFFF, 0xE9]), "\u{10FFFF}é");
        assert_eq!(replaced(&[0x1F600, 0xDFFF]), "😀\u{FFFD}");
    }
}
