//! The safe-cut rule of SuperBPE's stage-2 pattern,
//! `\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|[^\p{N}]+`: a cut at `c` (with `0 < c < text.len()`)
//! is safe when `text[c - 1]` and `text[c]` are both ASCII and exactly one of them is a digit.
//!
//! Why: an ASCII byte is a character of its own in the text and in either half (a valid
//! multi-byte character holds no ASCII byte, so the bytes before `c` decode alike in `text`
//! and `text[..c]`, and those from `c` alike in `text` and `text[c..]`). The only numbers in
//! ASCII are the digits, so `c` is where a run of numbers meets a run of non-numbers. Every
//! piece lies within one such run: a run of non-numbers is one piece, and a run of numbers
//! is cut by its length alone, into threes from its right end (the lookahead's `(?!\p{N})`
//! holds at the run's end whether a non-number or the end of the text follows). The run that
//! ends at `c` is the same run in `text[..c]`, the one that starts at `c` the same in
//! `text[c..]`, and the pattern looks at nothing before a piece's start. So the halves'
//! pieces are the whole text's.
//!
//! The built-in rule's cuts, at spaces and newlines, fall inside this pattern's pieces. Any
//! cut where a number meets a non-number would be safe, but one beside a non-ASCII
//! character needs it decoded backwards; ASCII alone gives enough cuts (of the ends of
//! number runs in 2 MB, 99.9% are between two ASCII bytes in en-prose, 79% in zh-prose:
//! 3,400 cuts per MB there, where counting cuts chunks of 1 MB).

/// Whether the superword splitter provably splits `text` at byte `c` (module docs).
#[inline]
pub(super) fn is_safe_cut(text: &[u8], c: usize) -> bool {
    if c == 0 || c >= text.len() {
        return false;
    }
    let (prev, cur) = (text[c - 1], text[c]);
    prev.is_ascii() && cur.is_ascii() && prev.is_ascii_digit() != cur.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::super::CutRule;
    use crate::split::{Splitter, SUPERWORD_PATTERN};
    use proptest::prelude::*;

    /// The hand-written splitter and fancy-regex: the cut halves must split as the whole
    /// text does under both.
    fn splitters() -> [Splitter; 2] {
        [
            Splitter::new("superword").unwrap(),
            Splitter::with_regex(SUPERWORD_PATTERN).unwrap(),
        ]
    }

    /// Every safe cut of `text` splits it into the pieces of the whole text; returns how
    /// many safe cuts there were.
    fn assert_cuts_split_like_whole(splitters: &[Splitter], text: &[u8]) -> usize {
        let cuts: Vec<usize> = (0..=text.len())
            .filter(|&c| CutRule::Superword.is_safe_cut(text, c))
            .collect();
        for splitter in splitters {
            let whole = splitter.split(text);
            for &c in &cuts {
                let mut two = splitter.split(&text[..c]);
                two.extend(splitter.split(&text[c..]));
                assert_eq!(
                    two,
                    whole,
                    "cut at {c} in {:?}",
                    String::from_utf8_lossy(&text[c.saturating_sub(6)..(c + 4).min(text.len())])
                );
            }
        }
        cuts.len()
    }

    /// Numbers of every kind, ASCII next to them, characters cut short and invalid bytes.
    fn atom() -> impl Strategy<Value = Vec<u8>> {
        let fixed: Vec<&'static [u8]> = vec![
            b"0",
            b"1",
            b"7",
            b"9",
            b"123",
            b"4567",
            b"a",
            b" ",
            b"\n",
            b".",
            b"/",
            b":",
            b"\xff",
            b"\x80",
            b"\xc2",
            b"\xe2\x91",
            b"\xef\xbc",
        ];
        let chars: Vec<char> = vec![
            '²', '³', '¹', '½', '٣', '۴', '५', '０', '９', 'Ⅻ', 'ⅰ', '①', '⑳', '〇', '𝟙', '𐄇', 'é',
            '中', '。', '\u{a0}', '\u{3000}', '\u{301}',
        ];
        prop_oneof![
            4 => prop::sample::select(fixed).prop_map(|b| b.to_vec()),
            3 => prop::sample::select(chars).prop_map(|c| c.to_string().into_bytes()),
            1 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn safe_cuts_split_like_the_whole_text(atoms in prop::collection::vec(atom(), 0..60)) {
            assert_cuts_split_like_whole(&splitters(), &atoms.concat());
        }
    }

    #[test]
    fn safe_cuts_split_like_the_whole_text_on_edge_cases() {
        let texts: [&[u8]; 8] = [
            b"in 2024, 1234567 people",
            "x1²2 ³45６7".as_bytes(),
            "①23 4① ١٢٣4".as_bytes(),
            b"a\xc2\xb21 2\xe2\x91\xa03",
            b"\xff1\x802\xe2\x914",
            b"12\n34 5678a9",
            b"0",
            b"a1",
        ];
        let splitters = splitters();
        let cuts: usize = texts
            .iter()
            .map(|t| assert_cuts_split_like_whole(&splitters, t))
            .sum();
        assert!(cuts > 12, "only {cuts} safe cuts");
    }

    #[test]
    fn safe_cuts_split_like_the_whole_text_on_corpus_documents() {
        // Stories for children hold few digits: the cuts are counted over all corpora.
        let splitters = splitters();
        let mut cuts = 0;
        for path in crate::split::differential::corpora() {
            for doc in crate::split::differential::documents(&path, 40) {
                cuts += assert_cuts_split_like_whole(&splitters, &doc);
            }
        }
        assert!(cuts > 200, "only {cuts} safe cuts");
    }

    #[test]
    fn the_built_in_rule_does_not_hold_for_superword_pieces() {
        let splitter = Splitter::new("superword").unwrap();
        let text = b"one two\nthree";
        let cut = CutRule::BuiltIn.next_safe_cut(text, 0).unwrap();
        assert_eq!(cut, 3);
        let mut two = splitter.split(&text[..cut]);
        two.extend(splitter.split(&text[cut..]));
        assert_ne!(two, splitter.split(text));
        assert_eq!(CutRule::Superword.next_safe_cut(text, 0), None);
    }
}
