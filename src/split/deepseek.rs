//! DeepSeek's pre-tokenizer (its models' `tokenizer.json`), hand-written on UTF-8 bytes. It is
//! not one regex but three isolated Splits in a row, each splitting every piece the one before
//! made (its matches and the gaps between them are pieces):
//!
//! ```text
//! 1. \p{N}{1,3}
//! 2. [一-龥぀-ゟ゠-ヿ]+                      U+4E00-U+9FA5, U+3040-U+309F, U+30A0-U+30FF
//! 3. [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
//!    | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! The first two steps cut the text into segments: runs of numbers (in pieces of up to three),
//! runs of step 2's kana and ideographs, and the text between them. No number is in step 2's
//! set, and step 3 matches nothing in a run of numbers (a number is none of `\p{L}`, `\p{M}`,
//! `\p{P}`, `\p{S}`, `\s`: a test checks), so those pieces stay whole. Step 3 splits each other
//! segment on its own, as if it were the whole text: its runs stop at the segment's end, and
//! `\s+(?!\S)` takes a whitespace run that reaches it whole. The kana segments need it too:
//! `・` and `゛` are punctuation there, and U+3040 is unassigned.
//!
//! A piece is decided by the segment from its start on (no step looks behind), so, as for the
//! one-regex splitters, the end of the piece that starts at `i` is a function of `text` and `i`;
//! the segment a character is in follows from the character itself. The differential tests
//! (`split/differential.rs`) run this against three fancy-regex splits composed.

use super::chars::{
    ascii_run, byte_run, char_at, run_max, whitespace, LETTER, LOWER, NUMBER, UPPER, WS,
};

// Step 3's classes, of a character in the segment being split. Disjoint: Unicode's general
// categories are, and `\s` is in none of `L`, `M`, `P`, `S`.

/// `\p{L}`.
const L: u8 = 1;
/// `\p{M}`.
const M: u8 = 2;
/// `[\p{P}\p{S}]`.
const PS: u8 = 4;
/// `\s`.
const SPACE: u8 = 8;
/// None of the above: controls that are not whitespace, format characters, private use,
/// unassigned code points, invalid bytes.
const OTHER: u8 = 0;
/// Not in the segment (a number, or a character on the other side of step 2's set), or the end
/// of the text: where step 3 sees the end of its text.
const END: u8 = 16;

/// The end of DeepSeek's piece that starts at `i` (`i < text.len()`).
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    let b = text[i];
    if b < 0x80 {
        return ascii_piece_end(text, i);
    }
    // Ideographs first: most of Chinese text.
    let han = han_run(text, i);
    if han > i {
        return letters::<true>(text, han);
    }
    let (class, len) = char_at(text, i);
    if class & NUMBER != 0 {
        return run_max(text, i + len, 2, |c| c & NUMBER != 0);
    }
    if in_step2_set(text, i, len) {
        step3::<true>(text, i)
    } else {
        step3::<false>(text, i)
    }
}

/// [`piece_end`] at an ASCII byte: the commonest pieces, `word`, ` word`, `.word` and digits,
/// without step 3's general path.
#[inline(always)]
fn ascii_piece_end(text: &[u8], i: usize) -> usize {
    let b = text[i];
    let next_is_letter = || text.get(i + 1).is_some_and(u8::is_ascii_alphabetic);
    match ASCII[b as usize] {
        L => word_from(text, i + 1),
        END => run_max(text, i + 1, 2, |c| c & NUMBER != 0),
        // `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+`: ASCII letters only.
        PS if next_is_letter() => ascii_run(text, i + 2, b'a', b'z', true),
        SPACE if b == b' ' && next_is_letter() => word_from(text, i + 2),
        _ => step3::<false>(text, i),
    }
}

/// Step 3 at `i`, the start of one of its pieces in a kana segment (`KANA`) or the text
/// between segments; the character at `i` is in that segment.
#[inline(always)]
fn step3<const KANA: bool>(text: &[u8], i: usize) -> usize {
    let (class, len) = class_at::<KANA>(text, i);
    let after = i + len;
    // `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+`: the set is ASCII's `[\p{P}\p{S}]`,
    // and an invalid byte is OTHER, so one byte of PS is in it.
    if !KANA && class == PS && len == 1 && text.get(after).is_some_and(u8::is_ascii_alphabetic) {
        return ascii_run(text, after + 1, b'a', b'z', true);
    }
    // `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`. A mark may be the prefix or the first of the run:
    // the same end either way.
    if class & (L | M) != 0 {
        return letters::<KANA>(text, after);
    }
    let (next, next_len) = class_at::<KANA>(text, after);
    let prefix = class == OTHER || class == SPACE && !matches!(text[i], b'\r' | b'\n');
    if prefix && next & (L | M) != 0 {
        return letters::<KANA>(text, after + next_len);
    }
    // ` ?[\p{P}\p{S}]+[\r\n]*`. A kana segment holds no `\r` or `\n`.
    let punct_start = if class == PS {
        Some(after)
    } else if text[i] == b' ' && next == PS {
        Some(after + next_len)
    } else {
        None
    };
    if let Some(start) = punct_start {
        let end = run_of::<KANA>(text, start, PS);
        return if KANA {
            end
        } else {
            byte_run(text, end, b"\r\n")
        };
    }
    if class == SPACE {
        return whitespace_end(text, i);
    }
    // No alternative matches here: the gap runs to where one does, or to the segment's end.
    let mut q = after;
    loop {
        let (class, len) = class_at::<KANA>(text, q);
        if class != OTHER || class_at::<KANA>(text, q + len).0 & (L | M) != 0 {
            return q;
        }
        q += len;
    }
}

/// `\s*[\r\n]+|\s+(?!\S)|\s+` at `i` (whitespace), in the text between segments: up to the
/// run's last newline; else the whole run where the segment ends; else all but its last
/// character, left to start the next piece; else one character.
#[inline(never)]
fn whitespace_end(text: &[u8], i: usize) -> usize {
    // Whitespace is never a number or in step 2's set: the run stays in the segment.
    let ws = whitespace(text, i);
    if let Some(end) = ws.newline_end {
        end
    } else if ws.last == i || class_at::<false>(text, ws.end).0 == END {
        ws.end
    } else {
        ws.last
    }
}

/// The end of the run of `[\p{L}\p{M}]` in the segment from `i`: ASCII letters eight at a
/// time between segments, ideographs three bytes at a time in kana segments.
#[inline(always)]
fn letters<const KANA: bool>(text: &[u8], mut i: usize) -> usize {
    loop {
        if KANA {
            i = han_run(text, i);
        } else if text.get(i).is_some_and(u8::is_ascii_alphabetic) {
            // Only where an ASCII letter follows: before each letter of other scripts the
            // eight-byte step finds nothing (callgrind, splitting 2 MB of multilingual:
            // 59.6M -> 54.6M instructions).
            i = ascii_run(text, i + 1, b'a', b'z', true);
        }
        if !KANA && text.get(i).is_none_or(u8::is_ascii) {
            return i;
        }
        let (class, len) = class_at::<KANA>(text, i);
        if class & (L | M) == 0 {
            return i;
        }
        i += len;
    }
}

/// [`letters`] between segments from `i`, where ASCII letters are likely: the eight-byte
/// step first, without the test for an ASCII letter.
#[inline(always)]
fn word_from(text: &[u8], i: usize) -> usize {
    let end = ascii_run(text, i, b'a', b'z', true);
    if text.get(end).is_none_or(u8::is_ascii) {
        end
    } else {
        letters::<false>(text, end)
    }
}

/// The end of the run of characters of `class` in the segment from `i`.
#[inline(always)]
fn run_of<const KANA: bool>(text: &[u8], mut i: usize, class: u8) -> usize {
    loop {
        let (c, len) = class_at::<KANA>(text, i);
        if c != class {
            return i;
        }
        i += len;
    }
}

/// Step 3's class and the byte length of the character at `i`, for a kana segment (`KANA`)
/// or the text between segments; `(END, 0)` at the end of the text.
#[inline(always)]
fn class_at<const KANA: bool>(text: &[u8], i: usize) -> (u8, usize) {
    let Some(&b) = text.get(i) else {
        return (END, 0);
    };
    if b < 0x80 {
        return (if KANA { END } else { ASCII[b as usize] }, 1);
    }
    let (class, len) = char_at(text, i);
    if in_step2_set(text, i, len) != KANA || class & NUMBER != 0 {
        return (END, len);
    }
    let step3 = if class & LETTER != 0 {
        L
    } else if class & (UPPER | LOWER) != 0 {
        // The marks: in both of o200k's letter classes, and no letter.
        M
    } else if class & WS != 0 {
        SPACE
    } else if len > 1 && is_punct_or_symbol(code_point(text, i, len)) {
        PS
    } else {
        // Other characters, and an invalid byte (one byte, no class).
        OTHER
    };
    (step3, len)
}

/// Step 3's class of each ASCII character between segments (digits are numbers: END).
static ASCII: [u8; 128] = {
    let mut table = [OTHER; 128];
    let mut b = 0u8;
    while b < 0x80 {
        table[b as usize] = match b {
            b'a'..=b'z' | b'A'..=b'Z' => L,
            b'0'..=b'9' => END,
            b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => SPACE,
            0x21..=0x7E => PS,
            _ => OTHER,
        };
        b += 1;
    }
    table
};

/// Whether the valid character of `len` bytes at `i` is in step 2's `[一-龥぀-ゟ゠-ヿ]`
/// (U+3040-U+30FF: E3 81 80 to E3 83 BF; U+4E00-U+9FA5: E4 B8 80 to E9 BE A5).
#[inline(always)]
fn in_step2_set(text: &[u8], i: usize, len: usize) -> bool {
    if len != 3 || !(0xE3..=0xE9).contains(&text[i]) {
        return false;
    }
    let cp = code_point(text, i, 3);
    (0x3040..=0x30FF).contains(&cp) || (0x4E00..=0x9FA5).contains(&cp)
}

/// The end of the run of ideographs U+4E00-U+9FA5 of step 2's set from `i`, three bytes at a
/// time without a class lookup. (The split module's own run goes on to U+9FFF, past `龥`.)
#[inline(always)]
fn han_run(text: &[u8], mut i: usize) -> usize {
    while let [b0 @ 0xE4..=0xE9, b1, b2, ..] = text[i..] {
        if (u16::from(b1) << 8 | u16::from(b2)) & 0xC0C0 != 0x8080 {
            break;
        }
        let cp = u32::from(b0 & 0x0F) << 12 | u32::from(b1 & 0x3F) << 6 | u32::from(b2 & 0x3F);
        if !(0x4E00..=0x9FA5).contains(&cp) {
            break;
        }
        i += 3;
    }
    i
}

/// The code point of the valid multi-byte character of `len` bytes at `i`.
#[inline(always)]
fn code_point(text: &[u8], i: usize, len: usize) -> u32 {
    let low6 = |k: usize| u32::from(text[i + k] & 0x3F);
    match len {
        2 => u32::from(text[i] & 0x1F) << 6 | low6(1),
        3 => u32::from(text[i] & 0x0F) << 12 | low6(1) << 6 | low6(2),
        _ => u32::from(text[i] & 0x07) << 18 | low6(1) << 12 | low6(2) << 6 | low6(3),
    }
}

/// `[\p{P}\p{S}]`, asked only of a non-ASCII character that is no letter, mark, number or
/// whitespace: the rest is controls, format characters, private use and unassigned ones.
#[inline]
fn is_punct_or_symbol(cp: u32) -> bool {
    let k = PUNCT_OR_SYMBOL.partition_point(|&(start, _)| start <= cp);
    k > 0 && cp <= PUNCT_OR_SYMBOL[k - 1].1
}

/// Non-ASCII `[\p{P}\p{S}]` (regex-syntax's Unicode 16 tables, which fancy-regex matches
/// with), as ranges that may also hold letters, marks, numbers and whitespace, which
/// [`is_punct_or_symbol`] is never asked about: 221 ranges instead of 345. A test checks every
/// code point.
#[rustfmt::skip]
static PUNCT_OR_SYMBOL: [(u32, u32); 221] = [
    (0x00A1, 0x00AC), (0x00AE, 0x0375), (0x037E, 0x037E), (0x0384, 0x0387),
    (0x03F6, 0x0482), (0x055A, 0x058A), (0x058D, 0x058F), (0x05BE, 0x05C6),
    (0x05F3, 0x05F4), (0x0606, 0x061B), (0x061D, 0x06D4), (0x06DE, 0x070D),
    (0x07F6, 0x07F9), (0x07FE, 0x07FF), (0x0830, 0x083E), (0x085E, 0x085E),
    (0x0888, 0x0888), (0x0964, 0x0970), (0x09F2, 0x09FD), (0x0A76, 0x0A76),
    (0x0AF0, 0x0AF1), (0x0B70, 0x0B70), (0x0BF3, 0x0BFA), (0x0C77, 0x0C84),
    (0x0D4F, 0x0D4F), (0x0D79, 0x0D79), (0x0DF4, 0x0DF4), (0x0E3F, 0x0E5B),
    (0x0F01, 0x0F3D), (0x0F85, 0x0F85), (0x0FBE, 0x0FCC), (0x0FCE, 0x0FDA),
    (0x104A, 0x109F), (0x10FB, 0x10FB), (0x1360, 0x1368), (0x1390, 0x1399),
    (0x1400, 0x169C), (0x16EB, 0x16ED), (0x1735, 0x1736), (0x17D4, 0x17DB),
    (0x1800, 0x180A), (0x1940, 0x1940), (0x1944, 0x1945), (0x19DE, 0x19FF),
    (0x1A1E, 0x1A1F), (0x1AA0, 0x1AAD), (0x1B4E, 0x1B7F), (0x1BFC, 0x1BFF),
    (0x1C3B, 0x1C3F), (0x1C7E, 0x1C7F), (0x1CC0, 0x1CC7), (0x1CD3, 0x1CD3),
    (0x1FBD, 0x1FC1), (0x1FCD, 0x1FCF), (0x1FDD, 0x1FEF), (0x1FFD, 0x1FFE),
    (0x2010, 0x2027), (0x2030, 0x205E), (0x207A, 0x208E), (0x20A0, 0x20C0),
    (0x2100, 0x218B), (0x2190, 0x2429), (0x2440, 0x244A), (0x249C, 0x2B73),
    (0x2B76, 0x2B95), (0x2B97, 0x2CEA), (0x2CF9, 0x2CFF), (0x2D70, 0x2D70),
    (0x2E00, 0x2E5D), (0x2E80, 0x2E99), (0x2E9B, 0x2EF3), (0x2F00, 0x2FD5),
    (0x2FF0, 0x303F), (0x309B, 0x30FB), (0x3190, 0x31E5), (0x31EF, 0x321E),
    (0x322A, 0x4DFF), (0xA490, 0xA4C6), (0xA4FE, 0xA60F), (0xA673, 0xA6F7),
    (0xA700, 0xA78A), (0xA828, 0xA82B), (0xA836, 0xA839), (0xA874, 0xA877),
    (0xA8CE, 0xA8CF), (0xA8F8, 0xA92F), (0xA95F, 0xA95F), (0xA9C1, 0xA9CD),
    (0xA9DE, 0xA9DF), (0xAA5C, 0xAA79), (0xAADE, 0xAAF1), (0xAB5B, 0xAB6B),
    (0xABEB, 0xABEB), (0xFB29, 0xFB29), (0xFBB2, 0xFBC2), (0xFD3E, 0xFD4F),
    (0xFDCF, 0xFDCF), (0xFDFC, 0xFE19), (0xFE30, 0xFE52), (0xFE54, 0xFE66),
    (0xFE68, 0xFE6B), (0xFF01, 0xFF65), (0xFFE0, 0xFFE6), (0xFFE8, 0xFFEE),
    (0xFFFC, 0xFFFD), (0x10100, 0x10102), (0x10137, 0x1018E), (0x10190, 0x1019C),
    (0x101A0, 0x101A0), (0x101D0, 0x101FC), (0x1039F, 0x1039F), (0x103D0, 0x103D0),
    (0x1056F, 0x1056F), (0x10857, 0x10878), (0x1091F, 0x1091F), (0x1093F, 0x1093F),
    (0x10A50, 0x10A58), (0x10A7F, 0x10A7F), (0x10AC8, 0x10AC8), (0x10AF0, 0x10AF6),
    (0x10B39, 0x10B3F), (0x10B99, 0x10B9C), (0x10D6E, 0x10D6E), (0x10D8E, 0x10D8F),
    (0x10EAD, 0x10EAD), (0x10F55, 0x10F59), (0x10F86, 0x10F89), (0x11047, 0x1104D),
    (0x110BB, 0x110BC), (0x110BE, 0x110C1), (0x11140, 0x11143), (0x11174, 0x11175),
    (0x111C5, 0x111DF), (0x11238, 0x1123D), (0x112A9, 0x112A9), (0x113D4, 0x113D5),
    (0x113D7, 0x113D8), (0x1144B, 0x1145B), (0x1145D, 0x1145D), (0x114C6, 0x114C6),
    (0x115C1, 0x115D7), (0x11641, 0x11643), (0x11660, 0x1166C), (0x116B9, 0x116B9),
    (0x1173C, 0x1173F), (0x1183B, 0x1183B), (0x11944, 0x11946), (0x119E2, 0x119E2),
    (0x11A3F, 0x11A46), (0x11A9A, 0x11AA2), (0x11B00, 0x11B09), (0x11BE1, 0x11BE1),
    (0x11C41, 0x11C45), (0x11C70, 0x11C71), (0x11EF7, 0x11EF8), (0x11F43, 0x11F4F),
    (0x11FD5, 0x11FF1), (0x11FFF, 0x11FFF), (0x12470, 0x12474), (0x12FF1, 0x12FF2),
    (0x16A6E, 0x16A6F), (0x16AF5, 0x16AF5), (0x16B37, 0x16B45), (0x16D6D, 0x16D6F),
    (0x16E97, 0x16E9A), (0x16FE2, 0x16FE2), (0x1BC9C, 0x1BC9F), (0x1CC00, 0x1CCEF),
    (0x1CD00, 0x1CEB3), (0x1CF50, 0x1CFC3), (0x1D000, 0x1D0F5), (0x1D100, 0x1D126),
    (0x1D129, 0x1D16C), (0x1D183, 0x1D1EA), (0x1D200, 0x1D245), (0x1D300, 0x1D356),
    (0x1D6C1, 0x1D7C3), (0x1D800, 0x1DA8B), (0x1E14F, 0x1E14F), (0x1E2FF, 0x1E2FF),
    (0x1E5FF, 0x1E5FF), (0x1E95E, 0x1E95F), (0x1ECAC, 0x1ECB0), (0x1ED2E, 0x1ED2E),
    (0x1EEF0, 0x1EEF1), (0x1F000, 0x1F02B), (0x1F030, 0x1F093), (0x1F0A0, 0x1F0AE),
    (0x1F0B1, 0x1F0BF), (0x1F0C1, 0x1F0CF), (0x1F0D1, 0x1F0F5), (0x1F10D, 0x1F1AD),
    (0x1F1E6, 0x1F202), (0x1F210, 0x1F23B), (0x1F240, 0x1F248), (0x1F250, 0x1F251),
    (0x1F260, 0x1F265), (0x1F300, 0x1F6D7), (0x1F6DC, 0x1F6EC), (0x1F6F0, 0x1F6FC),
    (0x1F700, 0x1F776), (0x1F77B, 0x1F7D9), (0x1F7E0, 0x1F7EB), (0x1F7F0, 0x1F7F0),
    (0x1F800, 0x1F80B), (0x1F810, 0x1F847), (0x1F850, 0x1F859), (0x1F860, 0x1F887),
    (0x1F890, 0x1F8AD), (0x1F8B0, 0x1F8BB), (0x1F8C0, 0x1F8C1), (0x1F900, 0x1FA53),
    (0x1FA60, 0x1FA6D), (0x1FA70, 0x1FA7C), (0x1FA80, 0x1FA89), (0x1FA8F, 0x1FAC6),
    (0x1FACE, 0x1FADC), (0x1FADF, 0x1FAE9), (0x1FAF0, 0x1FAF8), (0x1FB00, 0x1FB92),
    (0x1FB94, 0x1FBEF),
];

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::hir::{Class, HirKind};

    /// Every code point of the class `pattern`, by regex-syntax.
    fn members(pattern: &str) -> Vec<bool> {
        let hir = regex_syntax::Parser::new().parse(pattern).unwrap();
        let mut set = vec![false; 0x11_0000];
        match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => {
                for r in class.ranges() {
                    for cp in r.start() as u32..=r.end() as u32 {
                        set[cp as usize] = true;
                    }
                }
            }
            other => panic!("{pattern} is not a class: {other:?}"),
        }
        set
    }

    #[test]
    fn step3_classes_agree_with_regex_syntax_on_every_code_point() {
        let letter = members(r"\p{L}");
        let mark = members(r"\p{M}");
        let punct = members(r"[\p{P}\p{S}]");
        let space = members(r"\s");
        let number = members(r"\p{N}");
        let step2 = members("[一-龥぀-ゟ゠-ヿ]");
        for cp in 0..0x11_0000u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let s = c.to_string();
            let (bytes, k) = (s.as_bytes(), cp as usize);
            let want = if number[k] {
                END
            } else if letter[k] {
                L
            } else if mark[k] {
                M
            } else if punct[k] {
                PS
            } else if space[k] {
                SPACE
            } else {
                OTHER
            };
            let (kana, between) = if step2[k] { (want, END) } else { (END, want) };
            assert_eq!(
                class_at::<true>(bytes, 0),
                (kana, bytes.len()),
                "U+{cp:04X}"
            );
            assert_eq!(
                class_at::<false>(bytes, 0),
                (between, bytes.len()),
                "U+{cp:04X}"
            );
            assert_eq!(in_step2_set(bytes, 0, bytes.len()), step2[k], "U+{cp:04X}");
            assert_eq!(
                han_run(bytes, 0) > 0,
                (0x4E00..=0x9FA5).contains(&cp),
                "U+{cp:04X}"
            );
        }
    }

    #[test]
    fn numbers_are_in_no_class_of_steps_2_and_3() {
        // So steps 2 and 3 leave a piece of numbers whole: step 3's alternatives each need a
        // letter, mark, punctuation, symbol or whitespace.
        let number = members(r"\p{N}");
        let others = members(r"[\p{L}\p{M}\p{P}\p{S}\s一-龥぀-ゟ゠-ヿ]");
        let both: Vec<u32> = (0..0x11_0000u32)
            .filter(|&cp| number[cp as usize] && others[cp as usize])
            .collect();
        assert!(both.is_empty(), "{both:X?}");
    }

    #[test]
    fn the_first_alternatives_set_is_asciis_punctuation_and_symbols() {
        // The class that starts step 3's pattern.
        let class = crate::split::DEEPSEEK_SPLITS[2]
            .split("[A-Za-z]")
            .next()
            .unwrap();
        let set = members(class);
        let punct = members(r"[\p{P}\p{S}]");
        for b in 0..0x80u8 {
            assert_eq!(set[b as usize], punct[b as usize], "{:?}", b as char);
            assert_eq!(set[b as usize], ASCII[b as usize] == PS, "{:?}", b as char);
        }
    }

    #[test]
    fn invalid_bytes_are_other_characters_of_one_byte() {
        for bytes in [
            &b"\xff"[..],
            b"\x80",
            b"\xe4\xb8",
            b"\xe3\x81",
            b"\xed\xa0\x80",
        ] {
            assert_eq!(class_at::<false>(bytes, 0), (OTHER, 1), "{bytes:02x?}");
            assert_eq!(class_at::<true>(bytes, 0), (END, 1), "{bytes:02x?}");
            assert_eq!(han_run(bytes, 0), 0, "{bytes:02x?}");
        }
    }

    fn pieces(text: &str) -> Vec<&str> {
        crate::split::differential::pieces(text, piece_end)
    }

    #[test]
    fn hand_derived_pieces() {
        // Numbers in threes from the start of their run; step 3 never joins them to a word.
        assert_eq!(pieces("abc12345x"), ["abc", "123", "45", "x"]);
        // Step 2's set ends at 龥 (U+9FA5): U+9FA6 is a letter step 3 joins to the word.
        assert_eq!(pieces("ab中文cd\u{9fa6}"), ["ab", "中文", "cd\u{9fa6}"]);
        // Step 3 splits a kana segment: `・` is punctuation, and nothing joins it across the
        // segment's end ("・\n" would be one piece of the third step alone).
        assert_eq!(pieces("東京・大阪\n"), ["東京", "・", "大阪", "\n"]);
        assert_eq!(pieces("・\n"), ["・", "\n"]);
        // ASCII punctuation takes ASCII letters only; a space takes any letters.
        assert_eq!(pieces("(café) naïve"), ["(caf", "é", ")", " naïve"]);
        assert_eq!(pieces("don't"), ["don", "'t"]);
        // Whitespace before a number or an ideograph is at the end of its segment: whole.
        assert_eq!(pieces("a  1"), ["a", "  ", "1"]);
        assert_eq!(pieces("a  b"), ["a", " ", " b"]);
        assert_eq!(pieces("a  中"), ["a", "  ", "中"]);
        assert_eq!(pieces(" \n\n x"), [" \n\n", " x"]);
        // A control character prefixes a word, or stays a piece of its own.
        assert_eq!(
            pieces("\u{0}\u{0}ab\u{0}!"),
            ["\u{0}", "\u{0}ab", "\u{0}", "!"]
        );
    }
}
