//! Where a text may be cut without changing its ids (streams and files are cut into chunks
//! encoded separately): at a safe cut of the pattern (`crate::safe_cut`: the built-in
//! patterns' rule, which looks at the four bytes before `c` at most, or the superword
//! pattern's, which looks at `c - 1` and `c`), where no occurrence of a special token
//! touches bytes `c - 4 .. c + 1`. A custom pattern has no provable cut.

use super::Encoder;

/// Whether cutting `text` at `c` provably leaves the ids unchanged (see the module docs).
/// Needs `2 <= c < text.len()` and, to see every special token that could touch the cut,
/// `max_special_len` bytes of `text` after `c`.
pub fn is_safe_cut(enc: &Encoder, text: &[u8], c: usize) -> bool {
    let Some(rule) = enc.cut_rule() else {
        return false;
    };
    if c < 2 || !rule.is_safe_cut(text, c) {
        return false;
    }
    !enc.special_matcher()
        .overlaps(text, c.saturating_sub(4), c + 1)
}

/// The first safe cut at or after `from`, or the end of the text.
pub(super) fn next_cut(enc: &Encoder, text: &[u8], from: usize) -> usize {
    if enc.cut_rule().is_none() {
        return text.len();
    }
    let last = text.len().saturating_sub(enc.max_special_len() + 1);
    (from..last)
        .find(|&c| is_safe_cut(enc, text, c))
        .unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::test_vocab::bytes_encoder;
    use crate::test_rng::Lcg;

    #[test]
    fn safe_cuts_follow_the_rule() {
        let enc = bytes_encoder("gpt2", &["<|x|>"]);
        let t = b"ab cd\nef \ng<|x|> h";
        assert!(is_safe_cut(&enc, t, 2)); // "b| "
        assert!(is_safe_cut(&enc, t, 6)); // "d\n|e"
        assert!(!is_safe_cut(&enc, t, 10)); // " \n|g": gpt2 would differ
        assert!(!is_safe_cut(&enc, t, 16)); // ">| h": touches the special token
        assert!(!is_safe_cut(&bytes_encoder(r"\S+|\s+", &[]), t, 2)); // custom pattern
    }

    #[test]
    fn safe_cuts_are_where_the_splitters_cut() {
        // Splitting at a safe cut must give the pre-tokens of the whole text, for every
        // built-in pattern, on text dense in the characters the rules look at.
        let parts: [&[u8]; 12] = [
            b"a",
            b"Z",
            b".",
            b"/",
            b" ",
            b"\n",
            b"\r",
            b"'s",
            b"1",
            b"\t",
            b"\xc3\xa9",
            b"(",
        ];
        let mut rng = Lcg(7);
        let mut text = Vec::new();
        for _ in 0..20_000 {
            text.extend_from_slice(parts[rng.below(parts.len())]);
        }
        for pattern in crate::split::differential::hand_written() {
            let enc = bytes_encoder(pattern, &[]);
            let splitter = crate::split::Splitter::new(pattern).unwrap();
            let whole = splitter.split(&text);
            let mut cuts = 0;
            for c in 0..text.len() {
                if is_safe_cut(&enc, &text, c) {
                    cuts += 1;
                    let mut two = splitter.split(&text[..c]);
                    two.extend(splitter.split(&text[c..]));
                    assert_eq!(
                        two,
                        whole,
                        "{pattern}: cut at {c} in {:?}",
                        String::from_utf8_lossy(&text[c.saturating_sub(4)..c + 2])
                    );
                }
            }
            assert!(cuts > 1000, "{pattern}: only {cuts} safe cuts");
        }
    }
}
