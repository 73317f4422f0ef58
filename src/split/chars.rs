//! Characters of UTF-8 bytes as the built-in splitters see them: a class (a few bits) and a
//! byte length. The classes come from regex-syntax's Unicode tables (Unicode 16), the same
//! ones fancy-regex matches `\s`, `\p{L}`, ... with; a test checks every code point.
//!
//! An invalid UTF-8 byte is one character with no class bit: punctuation, like the lone
//! surrogate Python's `surrogateescape` makes of it.

use super::unicode_tables::{BLOCK, BLOCKS, BLOCK_INDEX};

/// `\s`: Unicode White_Space.
pub(super) const WS: u8 = 1;
/// `\p{L}`.
pub(super) const LETTER: u8 = 2;
/// `\p{N}`.
pub(super) const NUMBER: u8 = 4;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub(super) const UPPER: u8 = 8;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub(super) const LOWER: u8 = 16;

/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls, invalid bytes.
#[inline(always)]
pub(super) fn is_punct(class: u8) -> bool {
    class & (WS | LETTER | NUMBER) == 0
}

/// The class bits of a code point.
#[inline(always)]
pub(super) fn class_of(cp: u32) -> u8 {
    let cp = cp as usize;
    BLOCKS[BLOCK_INDEX[cp / BLOCK] as usize][cp % BLOCK]
}

/// The class and byte length of the character at `i` (`i < text.len()`).
#[inline(always)]
pub(super) fn char_at(text: &[u8], i: usize) -> (u8, usize) {
    let b = text[i];
    if b < 0x80 {
        // ASCII is block 0 of the table: one load.
        return (BLOCKS[0][b as usize], 1);
    }
    match decode(text, i) {
        Some((cp, len)) => (class_of(cp), len),
        None => (0, 1),
    }
}

/// The end of the run of CJK Unified Ideographs (U+4E00 to U+9FFF, E4 B8 80 to E9 BF BF) from
/// `i`: all `Lo` (a test checks every one), most of Chinese text, so the letter runs skip them
/// without a code point or a table (o200k on zh-prose: 24.8 -> 19.3 instructions per byte).
/// Only in the runs: in [`char_at`], inlined at every call, it made the ASCII paths compile
/// worse (o200k on en-prose: 21.6 -> 24.3), and out of line the call cost all it saved.
#[inline(always)]
pub(super) fn han_run(text: &[u8], mut i: usize) -> usize {
    while let [b0 @ 0xE4..=0xE9, b1, b2, ..] = text[i..] {
        if (u16::from(b1) << 8 | u16::from(b2)) & 0xC0C0 != 0x8080 || (b0 == 0xE4 && b1 < 0xB8) {
            break;
        }
        i += 3;
    }
    i
}

/// The class and byte length of the character at `i`, or `None` at the end of the text.
#[inline(always)]
pub(super) fn char_after(text: &[u8], i: usize) -> Option<(u8, usize)> {
    (i < text.len()).then(|| char_at(text, i))
}

/// In [`BYTE`] only: the byte is 0x80 or more (it has no class bits there).
pub(super) const NON_ASCII: u8 = 32;
/// In [`BYTE`] only: an ASCII `[^\r\n\p{L}\p{N}]`, which may come before a word in cl100k and
/// o200k (` word`, `(word`).
pub(super) const PREFIX: u8 = 64;

/// Each byte's class as an ASCII character, with [`PREFIX`], or [`NON_ASCII`]: the splitters'
/// ASCII word paths test a byte with one load (o200k and cl100k on en-prose: 21.9 and 17.3 ->
/// 19.8 and 15.8 instructions per byte).
pub(super) static BYTE: [u8; 256] = {
    let mut table = [NON_ASCII; 256];
    let mut b = 0;
    while b < 0x80 {
        let class = BLOCKS[0][b];
        let prefix = class & (LETTER | NUMBER) == 0 && b != b'\r' as usize && b != b'\n' as usize;
        table[b] = class | if prefix { PREFIX } else { 0 };
        b += 1;
    }
    table
};

/// [`BYTE`] of the byte at `i`, or `None` past the end.
#[inline(always)]
pub(super) fn byte_class(text: &[u8], i: usize) -> Option<u8> {
    text.get(i).map(|&b| BYTE[b as usize])
}

/// The code point and length of the multi-byte character at `i`, or `None` when the byte at
/// `i` does not start a valid UTF-8 sequence (overlong forms, surrogates and values above
/// U+10FFFF are invalid, as `std::str::from_utf8` says).
///
/// Inlined, with one slice pattern per length (one length check, then plain loads): as a
/// called function with a bounds-checked `get` per byte it cost 39 instructions per
/// character, 32% of o200k's instructions on zh-prose (callgrind).
#[inline(always)]
fn decode(text: &[u8], i: usize) -> Option<(u32, usize)> {
    let cont = |b: u8| b & 0xC0 == 0x80;
    let low6 = |b: u8| u32::from(b & 0x3F);
    match text[i..] {
        // Three bytes first: CJK, the commonest non-ASCII text.
        [b0 @ 0xE0..=0xEF, b1, b2, ..] if cont(b1) && cont(b2) => {
            let cp = u32::from(b0 & 0x0F) << 12 | low6(b1) << 6 | low6(b2);
            (cp >= 0x800 && !(0xD800..=0xDFFF).contains(&cp)).then_some((cp, 3))
        }
        [b0 @ 0xC2..=0xDF, b1, ..] if cont(b1) => Some((u32::from(b0 & 0x1F) << 6 | low6(b1), 2)),
        [b0 @ 0xF0..=0xF4, b1, b2, b3, ..] if cont(b1) && cont(b2) && cont(b3) => {
            let cp = u32::from(b0 & 0x07) << 18 | low6(b1) << 12 | low6(b2) << 6 | low6(b3);
            (0x1_0000..=0x10_FFFF).contains(&cp).then_some((cp, 4))
        }
        _ => None,
    }
}

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_le_bytes([1; 8]);
/// The high bit of every byte of a word.
const HIGH: u64 = ONES * 0x80;

/// The high bit of each byte of `x` that is in `lo..=hi` (`hi < 0x80`), eight bytes at once.
/// Adding to each byte's low seven bits never carries into the next byte, so each byte's high
/// bit says whether it reached `lo` (or went past `hi`); bytes of 0x80 and up are never in.
#[inline(always)]
fn bytes_in(x: u64, lo: u8, hi: u8) -> u64 {
    let low7 = x & !HIGH;
    let reaches_lo = low7 + ONES * u64::from(0x80 - lo);
    let past_hi = low7 + ONES * u64::from(0x7F - hi);
    !x & reaches_lo & !past_hi & HIGH
}

/// The end of the run of bytes from `i` in `lo..=hi` (`hi < 0x80`), with `fold` also their
/// other ASCII case (`lo..=hi` lowercase letters). Eight bytes per step: ASCII words, the
/// commonest pieces, were scanned byte by byte at about 10 instructions per byte.
#[inline(always)]
pub(super) fn ascii_run(text: &[u8], mut i: usize, lo: u8, hi: u8, fold: bool) -> usize {
    let case = if fold { ONES * 0x20 } else { 0 };
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let outside = !bytes_in(x | case, lo, hi) & HIGH;
        if outside != 0 {
            // Little-endian: the first byte is the lowest.
            return i + (outside.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    let case = if fold { 0x20 } else { 0 };
    while i < text.len() && (lo..=hi).contains(&(text[i] | case)) {
        i += 1;
    }
    i
}

/// The end of the run of ASCII bytes from `i` outside `lo..=hi` (`hi < 0x80`), eight bytes
/// per step: the run stops at a byte in `lo..=hi` or at one of 0x80 and up. SuperBPE's
/// pieces are whole lines of text between numbers, all of them scanned for a digit.
#[inline(always)]
pub(super) fn ascii_run_outside(text: &[u8], mut i: usize, lo: u8, hi: u8) -> usize {
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let stop = (bytes_in(x, lo, hi) | x) & HIGH;
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < text.len() && text[i] < 0x80 && !(lo..=hi).contains(&text[i]) {
        i += 1;
    }
    i
}

/// The end of the run of characters from `i` whose class satisfies `keep`.
#[inline(always)]
pub(super) fn run(text: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    while i < text.len() {
        let (class, len) = char_at(text, i);
        if !keep(class) {
            break;
        }
        i += len;
    }
    i
}

/// The end of the run of letters from `i`, their class given as class bits ([`LETTER`] for
/// `\p{L}`, or [`LETTER_OR_MARK`]): ASCII ones eight at a time, then any others one
/// character at a time.
#[inline(always)]
pub(super) fn letters_in<const L: u8>(text: &[u8], i: usize) -> usize {
    let end = ascii_run(text, i, b'a', b'z', true);
    if text.get(end).is_some_and(u8::is_ascii) {
        end
    } else {
        run(text, end, |c| c & L != 0)
    }
}

/// `[\p{L}\p{M}]` (Qwen3.5's letters) as class bits: marks are in o200k's [`UPPER`] and
/// [`LOWER`] classes, and every other character of those is a letter.
pub(super) const LETTER_OR_MARK: u8 = LETTER | UPPER | LOWER;

/// [`letters_in`] of `\p{L}` after a first letter of `first_len` bytes: after a 3-byte one, likely CJK,
/// the ideographs are skipped by [`han_run`] (gpt2 and cl100k on zh-prose: 23.9 and 22.0 ->
/// 19.5 and 17.3 instructions per byte; gpt2 on en-prose 14.2 -> 14.7, from code layout
/// alone, as English never gets here; after any non-ASCII letter, multilingual lost 9%).
#[inline(always)]
pub(super) fn letters_after(text: &[u8], i: usize, first_len: usize) -> usize {
    letters_after_in::<LETTER>(text, i, first_len)
}

/// [`letters_after`] of a letter class given as class bits (Han ideographs are `Lo`: in
/// both).
#[inline(always)]
pub(super) fn letters_after_in<const L: u8>(text: &[u8], i: usize, first_len: usize) -> usize {
    if first_len != 3 {
        return letters_in::<L>(text, i);
    }
    let mut end = i;
    loop {
        end = han_run(text, end);
        match char_after(text, end) {
            Some((class, len)) if class & L != 0 => end += len,
            _ => return end,
        }
    }
}

/// The end of at most `max` characters from `i` whose class satisfies `keep`.
#[inline(always)]
pub(super) fn run_max(text: &[u8], mut i: usize, max: usize, keep: impl Fn(u8) -> bool) -> usize {
    for _ in 0..max {
        if i >= text.len() {
            break;
        }
        let (class, len) = char_at(text, i);
        if !keep(class) {
            break;
        }
        i += len;
    }
    i
}

/// The end of the run of bytes from `i` that are in `set` (ASCII only).
#[inline(always)]
pub(super) fn byte_run(text: &[u8], mut i: usize, set: &[u8]) -> usize {
    while i < text.len() && set.contains(&text[i]) {
        i += 1;
    }
    i
}

/// The length of the character at `i` if it is `lower` (an ASCII lowercase letter) or, when
/// `fold` is set, a character `(?i)` matches with it: its uppercase, and `ſ` (U+017F) for `s`.
#[inline]
fn letter_at(text: &[u8], i: usize, lower: u8, fold: bool) -> Option<usize> {
    match text.get(i..).unwrap_or_default() {
        [b, ..] if *b == lower || (fold && *b == lower.to_ascii_uppercase()) => Some(1),
        [0xC5, 0xBF, ..] if fold && lower == b's' => Some(2),
        _ => None,
    }
}

/// `'(?:[sdmt]|ll|ve|re)` at `i` (`fold`: under `(?i:...)`), as o200k's
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` too: the alternatives begin with different letters, so their
/// order does not matter. Returns the end of the match.
#[inline]
pub(super) fn contraction(text: &[u8], i: usize, fold: bool) -> Option<usize> {
    if text.get(i) != Some(&b'\'') {
        return None;
    }
    let i = i + 1;
    for single in [b's', b'd', b'm', b't'] {
        if let Some(len) = letter_at(text, i, single, fold) {
            return Some(i + len);
        }
    }
    for [a, b] in [[b'l', b'l'], [b'v', b'e'], [b'r', b'e']] {
        if let Some(len) = letter_at(text, i, a, fold) {
            if let Some(len2) = letter_at(text, i + len, b, fold) {
                return Some(i + len + len2);
            }
        }
    }
    None
}

/// A maximal run of whitespace, as the whitespace alternatives of all three patterns need it.
pub(super) struct Whitespace {
    /// The end of the run.
    pub end: usize,
    /// Where the run's last character starts.
    pub last: usize,
    /// The end of the run's last `\r` or `\n`, if it has one.
    pub newline_end: Option<usize>,
}

/// The whitespace run at `i` (the character at `i` is whitespace). Not inlined: it is the
/// rarer path, and inlined it made the splitters' hot loops slower.
#[inline(never)]
pub(super) fn whitespace(text: &[u8], i: usize) -> Whitespace {
    let mut ws = Whitespace {
        end: i,
        last: i,
        newline_end: None,
    };
    while let Some(&b) = text.get(ws.end) {
        let len = match b {
            // Runs of spaces (indentation) eight bytes at a time: code.txt under o200k spent 16%
            // of its instructions here going character by character.
            b' ' if text.get(ws.end + 1) == Some(&b' ') => {
                ws.end = ascii_run(text, ws.end + 2, b' ', b' ', false);
                ws.last = ws.end - 1;
                continue;
            }
            b' ' | b'\t' | 0x0B | 0x0C => 1,
            b'\n' | b'\r' => {
                ws.newline_end = Some(ws.end + 1);
                1
            }
            0..=0x7F => break,
            _ => match char_at(text, ws.end) {
                (class, len) if class & WS != 0 => len,
                _ => break,
            },
        };
        ws.last = ws.end;
        ws.end += len;
    }
    ws
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::hir::{Class, HirKind};

    /// Every code point of `pattern`'s class, by regex-syntax (a path independent of the
    /// generated two-level table).
    fn members(pattern: &str) -> Vec<bool> {
        let hir = regex_syntax::Parser::new().parse(pattern).unwrap();
        let ranges: Vec<(u32, u32)> = match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            // A class of one character comes back as that character.
            HirKind::Literal(lit) => {
                let c = std::str::from_utf8(&lit.0).unwrap().chars().next().unwrap();
                vec![(c as u32, c as u32)]
            }
            other => panic!("{pattern} is not a class: {other:?}"),
        };
        let mut set = vec![false; 0x11_0000];
        for (start, end) in ranges {
            for cp in start..=end {
                set[cp as usize] = true;
            }
        }
        set
    }

    #[test]
    fn table_agrees_with_regex_syntax_on_every_code_point() {
        let classes = [
            (WS, r"\s"),
            (LETTER, r"\p{L}"),
            (NUMBER, r"\p{N}"),
            (UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
            (LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
        ];
        for (bit, pattern) in classes {
            let set = members(pattern);
            for cp in 0..0x11_0000u32 {
                let want = set[cp as usize];
                assert_eq!(class_of(cp) & bit != 0, want, "U+{cp:04X} in {pattern}");
                if let Some(c) = char::from_u32(cp) {
                    let mut buf = [0; 4];
                    let bytes = c.encode_utf8(&mut buf).as_bytes();
                    assert_eq!(char_at(bytes, 0), (class_of(cp), bytes.len()), "U+{cp:04X}");
                }
            }
        }
    }

    #[test]
    fn han_run_takes_exactly_the_cjk_unified_ideographs() {
        // `Lo`: a letter, in both of o200k's letter classes.
        const HAN: u8 = LETTER | UPPER | LOWER;
        let lo = members(r"\p{Lo}");
        let utf8 = |cp: u32| char::from_u32(cp).unwrap().to_string().into_bytes();
        for cp in 0x4E00..=0x9FFF {
            assert!(lo[cp as usize], "U+{cp:04X}");
            assert_eq!(class_of(cp), HAN, "U+{cp:04X}");
            assert_eq!(han_run(&utf8(cp), 0), 3, "U+{cp:04X}");
        }
        // Every other 3-byte code point with a first byte of E4 to E9 (U+4000 to U+4DFF: E4 80 80
        // to E4 B7 BF) is left to the general path, and so are the neighbours of the range.
        for cp in (0x4000..0x4E00).chain([0x3FFF, 0xA000, 0x3400]) {
            assert_eq!(han_run(&utf8(cp), 0), 0, "U+{cp:04X}");
        }
        // Cut short or with a bad continuation byte: not a character.
        for bytes in [&b"\xe4\xb8"[..], b"\xe9\xbf\xc0", b"\xe5\x41\x80", b"\xe4"] {
            assert_eq!(han_run(bytes, 0), 0, "{bytes:02x?}");
        }
        // A run stops at the first other character, and at the end.
        assert_eq!(han_run("中文ab".as_bytes(), 0), 6);
        assert_eq!(han_run("中\u{4dff}".as_bytes(), 0), 3);
        assert_eq!(han_run("中文".as_bytes(), 3), 6);
    }

    #[test]
    fn byte_table_is_the_ascii_classes_plus_prefix() {
        for b in 0..=0xFFu8 {
            let t = BYTE[b as usize];
            if b >= 0x80 {
                assert_eq!(t, NON_ASCII, "{b:#x}");
                continue;
            }
            let c = char::from(b);
            assert_eq!(t & !PREFIX, class_of(u32::from(b)), "{c:?}");
            let prefix = !c.is_alphanumeric() && c != '\r' && c != '\n';
            assert_eq!(t & PREFIX != 0, prefix, "{c:?}");
        }
    }

    #[test]
    fn whitespace_is_unicode_white_space_only() {
        // Hand-derived from the Unicode White_Space property: not the \x1c-\x1f separators
        // that Python's str.isspace() also accepts.
        for c in [
            '\t', '\n', '\x0b', '\x0c', '\r', ' ', '\u{85}', '\u{a0}', '\u{3000}',
        ] {
            assert_eq!(class_of(c as u32) & WS, WS, "{c:?}");
        }
        for c in ['\x1c', '\x1f', '\u{200b}', 'a', '\''] {
            assert_eq!(class_of(c as u32) & WS, 0, "{c:?}");
        }
    }

    #[test]
    fn decode_agrees_with_std_on_every_lead_and_second_byte() {
        for b0 in 0x80..=0xFFu8 {
            for b1 in 0..=0xFFu8 {
                for b2 in [0x00, 0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0] {
                    for b3 in [0x41, 0x80, 0xBF] {
                        let bytes = [b0, b1, b2, b3];
                        let valid = match std::str::from_utf8(&bytes) {
                            Ok(all) => all,
                            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap(),
                        };
                        let std_len = valid.chars().next().map(char::len_utf8);
                        let ours = decode(&bytes, 0).map(|(_, len)| len);
                        assert_eq!(ours, std_len, "{bytes:02x?}");
                    }
                }
            }
        }
    }

    #[test]
    fn contraction_letters_are_what_regex_syntax_case_folds() {
        for lower in [b's', b'd', b'm', b't', b'l', b'v', b'e', b'r'] {
            let folded = members(&format!("(?i){}", lower as char));
            let plain = members(&(lower as char).to_string());
            for cp in 0..0x11_0000u32 {
                let Some(c) = char::from_u32(cp) else {
                    continue;
                };
                let s = c.to_string();
                let bytes = s.as_bytes();
                let want = |set: &[bool]| set[cp as usize].then_some(bytes.len());
                assert_eq!(letter_at(bytes, 0, lower, true), want(&folded), "{c:?}");
                assert_eq!(letter_at(bytes, 0, lower, false), want(&plain), "{c:?}");
            }
        }
    }

    #[test]
    fn invalid_bytes_are_punctuation_of_one_byte() {
        for bytes in [
            &b"\xff"[..],
            b"\x80",
            b"\xc3",
            b"\xe2\x82",
            b"\xed\xa0\x80",
            b"\xf4\x90",
        ] {
            assert_eq!(char_at(bytes, 0), (0, 1), "{bytes:02x?}");
        }
    }
}
