//! The safe-cut rule: byte offsets where the built-in splitters (`gpt2`, `cl100k`, `o200k`,
//! `llama3`, `qwen2`, `qwen3.5`, `tekken`, `deepseek`) provably split, so that splitting `text[..c]` and
//! `text[c..]` apart gives the pre-tokens of the whole text.
//!
//! Counting cuts its input into chunks counted on all cores, encoding cuts streams and
//! files, and the splitters cut ASCII text into windows they split at once
//! (`split/window.rs`); all cut only at safe cuts, so the cut never changes a count or an id. Special
//! tokens are the caller's business: no occurrence may straddle the cut (the text between
//! special tokens is split on its own, so a cut at a special token's start is safe for
//! every pattern, a fact counting uses and encoding, which must not cut inside one, need
//! not).
//!
//! A cut at `c` (with `0 < c < text.len()`) is safe when
//! 1. `text[c]` is a space and `text[c-1]` is visible ASCII (0x21..=0x7E), or
//! 2. `text[c]` is `\n` and `text[c-1]` is an ASCII letter or digit, or
//! 3. `text[c]` is visible ASCII other than `/`, or a first byte 0xE4-0xE9 (U+4000-U+9FFF:
//!    CJK letters and symbols, never whitespace), and `text[..c]` ends in one `\n` after a
//!    character that is not whitespace (visible ASCII, or a 3-byte character outside the
//!    whitespace blocks U+1680, U+2000-U+205F and U+3000).
//!
//! Why: none of the patterns' alternatives that contain a non-space character continues
//! into a following space (the optional space is only ever a prefix; the punctuation runs
//! of `cl100k` and its family continue only into `\r` and `\n`, `o200k`'s also into `/`);
//! letters and digits never continue into `\n`; no alternative continues from `\n` into a
//! non-space character but `o200k`'s `[\r\n/]*` (hence no `/`); no alternative's optional
//! prefix character may be `\n`; and none of the patterns has a lookbehind, so the scan
//! restarted at `c` sees what the whole-text scan sees. The lookaheads (`(?!\S)`, `$`) are
//! on whitespace runs only, and the character before the cut decides them the same way in
//! both texts: a longer run before rule 3's newline would not (gpt2's `\s++$` makes `" \n"`
//! one pre-token at the end of a text, but `" "`, `"\n"` before a letter). Rule 3 is what
//! cuts Chinese prose, whose lines end in "。\n": without it 20 MB of zh-prose had almost
//! no cut. DeepSeek's three splits keep the rule too: one side of every safe cut is a space
//! or `\n`, neither a number nor in its second step's kana and ideographs, so its first two
//! steps cut both halves as they cut the whole text, and its third step, run on each piece
//! between theirs, is a pattern of the cl100k family (its punctuation runs continue only into
//! `\r` and `\n`). A custom regex gives no such guarantee: it is never cut by this rule.
//!
//! SuperBPE's stage-2 pattern (`superword`) keeps spaces and newlines inside its pieces, so
//! this rule does not hold for it ("a b" is one piece); it has a rule of its own
//! (`safe_cut/superword.rs`, [`CutRule::Superword`]). [`crate::split::Splitter::cut_rule`]
//! says which rule a splitter has, if any.

mod superword;

/// Which cuts provably leave a splitter's pieces unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutRule {
    /// The built-in patterns' rule (the module docs).
    BuiltIn,
    /// SuperBPE's stage-2 pattern: between an ASCII digit and another ASCII byte
    /// (`safe_cut/superword.rs`).
    Superword,
}

impl CutRule {
    /// Whether a splitter with this rule provably splits `text` at byte `c`. `false` for
    /// `c == 0` and `c >= text.len()`.
    #[inline]
    pub fn is_safe_cut(self, text: &[u8], c: usize) -> bool {
        match self {
            CutRule::BuiltIn => is_safe_cut(text, c),
            CutRule::Superword => superword::is_safe_cut(text, c),
        }
    }

    /// The first safe cut in `from..text.len()`, if any.
    pub fn next_safe_cut(self, text: &[u8], from: usize) -> Option<usize> {
        (from.max(1)..text.len()).find(|&c| self.is_safe_cut(text, c))
    }
}

/// Whether the built-in splitters provably split `text` at byte `c` (module docs). `false`
/// for `c == 0` and `c >= text.len()`.
///
/// ```
/// use bytepair::safe_cut::is_safe_cut;
/// assert!(is_safe_cut(b"ab cd", 2)); // "ab| cd"
/// assert!(!is_safe_cut(b"ab  cd", 3)); // inside a run of spaces
/// ```
#[inline]
pub fn is_safe_cut(text: &[u8], c: usize) -> bool {
    if c == 0 || c >= text.len() {
        return false;
    }
    let (prev, cur) = (text[c - 1], text[c]);
    let visible = |b: u8| (0x21..=0x7e).contains(&b);
    (cur == b' ' && visible(prev))
        || (cur == b'\n' && prev.is_ascii_alphanumeric())
        || ((visible(cur) && cur != b'/' || (0xe4..=0xe9).contains(&cur))
            && lone_newline_before(text, c))
}

/// The first safe cut in `from..text.len()`, if any.
///
/// ```
/// use bytepair::safe_cut::next_safe_cut;
/// assert_eq!(next_safe_cut(b"  ab cd", 0), Some(4)); // "  ab| cd"
/// ```
pub fn next_safe_cut(text: &[u8], from: usize) -> Option<usize> {
    (from.max(1)..text.len()).find(|&c| is_safe_cut(text, c))
}

/// `text[..c]` ends in one `\n` after a character that is not whitespace (visible ASCII or
/// a 3-byte character outside the whitespace blocks U+1680, U+2000-U+205F, U+3000). A
/// longer whitespace run would be cut differently: gpt2's `\s+(?!\S)` gives up the run's
/// last character only when a non-space follows.
fn lone_newline_before(text: &[u8], c: usize) -> bool {
    if c < 2 || text[c - 1] != b'\n' {
        return false;
    }
    let p = text[c - 2];
    if (0x21..=0x7e).contains(&p) {
        return true;
    }
    if c < 4 || !(0xe0..=0xef).contains(&text[c - 4]) {
        return false;
    }
    let (lead, second) = (text[c - 4], text[c - 3]);
    let continuation = |b: u8| (0x80..=0xbf).contains(&b);
    let maybe_space = match (lead, second) {
        (0xe1, 0x9a) | (0xe2, 0x80 | 0x81) => true,
        (0xe3, 0x80) => p == 0x80,
        _ => false,
    };
    continuation(second) && continuation(p) && !maybe_space
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::differential::BUILT_IN;
    use crate::split::Splitter;
    use proptest::prelude::*;

    /// Every safe cut of `text` splits it, under every built-in splitter, into the
    /// pre-tokens of the whole text; returns how many safe cuts there were.
    fn assert_cuts_split_like_whole(splitters: &[Splitter], text: &[u8]) -> usize {
        let cuts: Vec<usize> = (0..=text.len()).filter(|&c| is_safe_cut(text, c)).collect();
        for splitter in splitters {
            let whole = splitter.split(text);
            for &c in &cuts {
                let mut two = splitter.split(&text[..c]);
                two.extend(splitter.split(&text[c..]));
                assert_eq!(
                    two,
                    whole,
                    "{}: cut at {c} in {:?}",
                    splitter.pattern(),
                    String::from_utf8_lossy(&text[c.saturating_sub(6)..(c + 4).min(text.len())])
                );
            }
        }
        cuts.len()
    }

    fn splitters() -> Vec<Splitter> {
        BUILT_IN.iter().map(|p| Splitter::new(p).unwrap()).collect()
    }

    /// The characters the rule and the patterns care about, as UTF-8 (and invalid) bytes.
    fn atom() -> impl Strategy<Value = Vec<u8>> {
        let fixed: Vec<&'static [u8]> = vec![
            b"a",
            b"Z",
            b"q",
            b"1",
            b"7",
            b".",
            b",",
            b"!",
            b"/",
            b"(",
            b"'",
            b"'s",
            b"'ll",
            b" ",
            b" ",
            b"\n",
            b"\n",
            b"\r",
            b"\t",
            b"\x0b",
            b"\x0c",
            b"\xff",
            b"\x80",
            b"\xe4",
            b"\xe4\xb8",
            b"\xc3",
        ];
        let chars: Vec<char> = vec![
            'é', 'ß', 'α', 'Д', '\u{301}', '中', '文', '。', '\u{4dc0}', '\u{4e00}', '\u{9fff}',
            '\u{a0}', '\u{85}', '\u{1680}', '\u{3000}', '\u{2028}', '\u{2029}', '\u{202f}',
            '\u{205f}', '١', 'Ⅻ', '😀', 'か', '・', '\u{3099}', '\u{3040}', '\u{9fa5}', '\u{9fa6}',
            '\u{4dff}', '\u{200b}', '«',
        ];
        prop_oneof![
            4 => prop::sample::select(fixed).prop_map(|b| b.to_vec()),
            2 => prop::sample::select(chars).prop_map(|c| c.to_string().into_bytes()),
            1 => (0x2000u32..=0x205f).prop_map(|c| char::from_u32(c).unwrap().to_string().into_bytes()),
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

    /// Texts a generator rarely makes: each edge of each rule.
    #[test]
    fn safe_cuts_split_like_the_whole_text_on_edge_cases() {
        let texts: [&[u8]; 14] = [
            b"ab cd\nef \ng h",
            "中文。\n中文。\n/路径。\n\u{3000}\u{3000}第一 。\n\n中\u{3000}\n中\u{2028}\n中 \n中\r\n中"
                .as_bytes(),
            b"x.\n/y a\n\n b a\n\tb",
            b"it's 12345 don't\n'll x\r\ny",
            "é\na \u{a0}b \u{85}\nc".as_bytes(),
            "\u{1680}\nx\u{2000}\ny\u{205f}\nz\u{3000}\nw".as_bytes(),
            b"\xe4\xb8\n\xe4\n\xff\nx\x80\ny",
            "a\u{301}\nb\u{301} c".as_bytes(),
            b"1\n2 3\n\n4",
            b"x \n",
            b"\nx",
            b"a!\n?b",
            "12 34\n56中 文\n中7\n\u{9fa6}\nか・\n・x".as_bytes(),
            "x\n\u{3099}a 'b\n(c".as_bytes(),
        ];
        let splitters = splitters();
        let cuts: usize = texts
            .iter()
            .map(|t| assert_cuts_split_like_whole(&splitters, t))
            .sum();
        assert!(cuts > 20, "only {cuts} safe cuts");
    }

    #[test]
    fn safe_cuts_split_like_the_whole_text_on_corpus_documents() {
        let splitters = splitters();
        for path in crate::split::differential::corpora() {
            let cuts: usize = crate::split::differential::documents(&path, 40)
                .iter()
                .map(|doc| assert_cuts_split_like_whole(&splitters, doc))
                .sum();
            assert!(cuts > 40, "{}: only {cuts} safe cuts", path.display());
        }
    }
}
