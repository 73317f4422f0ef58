//! o200k_base's pre-tokenizer, hand-written on UTF-8 bytes:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! Mistral's Tekken pattern is the same without the contractions and with `\p{N}` for
//! `\p{N}{1,3}`: `tekken_piece_end`, the same code with two constants changed.
//!
//! As in the regex, the first alternative that matches at a position wins. Every character
//! starts a match of some alternative, so the pieces tile the text. Unlike the other two
//! patterns nothing here is possessive, and the classes overlap (`Lm`, `Lo` and marks are in
//! both letter classes, and a mark is also a prefix character), so the word alternatives follow
//! the backtracking the regex does; their comments say how.

use super::chars::{
    ascii_run, byte_class, byte_run, char_after, char_at, contraction, han_run, is_punct, run,
    run_max, whitespace, LETTER, LOWER, NUMBER, PREFIX, UPPER,
};

/// The end of o200k's piece that starts at `i` (`i < text.len()`).
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    piece_end_of::<true, 3>(text, i)
}

/// The end of Tekken's piece that starts at `i`: no contractions, one digit per piece.
#[inline]
pub(super) fn tekken_piece_end(text: &[u8], i: usize) -> usize {
    piece_end_of::<false, 1>(text, i)
}

/// The end of the piece at `i`, with the contraction suffixes when `CONTRACTIONS`, and
/// digits in runs of up to `DIGITS`.
///
/// Past the ASCII fast path, the character at `i` and, when it can be the words' prefix, the
/// next one are decoded once, and their classes pick the alternatives to try, in the regex's
/// order (trying each alternative in turn decoded a punctuation mark up to nine times).
#[inline(always)]
fn piece_end_of<const CONTRACTIONS: bool, const DIGITS: usize>(text: &[u8], i: usize) -> usize {
    if let Some(end) = ascii_word::<CONTRACTIONS>(text, i) {
        return end;
    }
    let first = char_at(text, i);
    let (class, len) = first;
    // `[^\r\n\p{L}\p{N}]`: the optional prefix of both word alternatives.
    let next = if class & (LETTER | NUMBER) == 0 && !matches!(text[i], b'\r' | b'\n') {
        char_after(text, i + len)
    } else {
        None
    };
    // Each word alternative first with the prefix, then (the greedy `?` backtracking) without.
    // In `if`s, not an `or_else` chain, which LLVM left a call of its own in the encoder's
    // loop: new text under o200k takes 2.2% fewer instructions on the 25 languages and 4.6%
    // fewer on Chinese (callgrind); new Chinese 1.03x (paired runs).
    if let Some(n) = next {
        if let Some(end) = upper_then_lower::<CONTRACTIONS>(text, i + len, n) {
            return end;
        }
    }
    if let Some(end) = upper_then_lower::<CONTRACTIONS>(text, i, first) {
        return end;
    }
    if let Some(n) = next {
        if let Some(end) = upper_then_any::<CONTRACTIONS>(text, i + len, n) {
            return end;
        }
    }
    if let Some(end) = upper_then_any::<CONTRACTIONS>(text, i, first) {
        return end;
    }
    if class & NUMBER != 0 {
        // `\p{N}{1,3}` (o200k) or `\p{N}` (Tekken).
        return run_max(text, i + len, DIGITS - 1, |c| c & NUMBER != 0);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`.
    let punct_start = match next {
        Some((next_class, next_len)) if text[i] == b' ' && is_punct(next_class) => {
            Some(i + 1 + next_len)
        }
        _ if is_punct(class) => Some(i + len),
        _ => None,
    };
    match punct_start {
        Some(start) => byte_run(text, run(text, start, is_punct), b"\r\n/"),
        None => whitespace_end(text, i),
    }
}

/// A fast path for the commonest pieces, `word`, ` Word`, `(WORD's`, when they lie in ASCII:
/// `[A-Z]*[a-z]+` for the first alternative, else `[A-Z]+` for the second, after an optional
/// ASCII prefix, then the contraction. `None` (take the general path) when the word does not
/// start with ASCII or stops at a non-ASCII byte, which may continue it. Saves 7% of the
/// instructions per byte of en-prose (cachegrind: 28.7 against 30.8).
#[inline(always)]
fn ascii_word<const CONTRACTIONS: bool>(text: &[u8], i: usize) -> Option<usize> {
    let class = byte_class(text, i)?;
    let start = if class & LETTER != 0 {
        i
    } else if class & PREFIX != 0 && byte_class(text, i + 1)? & LETTER != 0 {
        i + 1
    } else {
        return None;
    };
    // Most words start lowercase: one test of the first letter instead of a run of
    // uppercase (callgrind, o200k: -4.6% instructions on en-prose, -2.4% on code; splitting
    // alone 466 -> 557 MB/s on English).
    let upper_end = if text[start].is_ascii_uppercase() {
        ascii_run(text, start + 1, b'A', b'Z', false)
    } else {
        start
    };
    let end = ascii_run(text, upper_end, b'a', b'z', false);
    match text.get(end) {
        Some(b'\'') if CONTRACTIONS => Some(contraction(text, end, true).unwrap_or(end)),
        Some(b) if !b.is_ascii() => None,
        _ => Some(end),
    }
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` and the contraction, at `i`,
/// where the character is `first` (its class and length). The greedy `*` takes the whole
/// uppercase-class run; if no lowercase-class character follows it, the regex gives characters
/// back until `+` can start on one: the run's last character that is in both classes (`Lm`,
/// `Lo`, a mark), and `+` then takes just that one, since the characters after it in the run
/// are `Lu`/`Lt`.
#[inline(always)]
fn upper_then_lower<const CONTRACTIONS: bool>(
    text: &[u8],
    i: usize,
    first: (u8, usize),
) -> Option<usize> {
    let (mut class, mut len) = first;
    if class & (UPPER | LOWER) == 0 {
        return None;
    }
    let mut end = i;
    let mut last_in_both_end = None;
    // `class` is that of the character at `end` (0 at the end of the text).
    while class & UPPER != 0 {
        end += len;
        if class & LOWER != 0 {
            // CJK ideographs are in both classes.
            end = han_run(text, end);
            last_in_both_end = Some(end);
        }
        (class, len) = char_after(text, end).unwrap_or((0, 0));
    }
    let lower_end = if class & LOWER != 0 {
        run(text, end + len, |c| c & LOWER != 0)
    } else {
        last_in_both_end?
    };
    Some(with_contraction::<CONTRACTIONS>(text, lower_end))
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` and the contraction, at `i`,
/// where the character is `first`. Tried only when the alternative above fails (`HTML`,
/// ` IBM's`), so nothing after the uppercase-class run is lowercase-class.
#[inline(always)]
fn upper_then_any<const CONTRACTIONS: bool>(
    text: &[u8],
    i: usize,
    first: (u8, usize),
) -> Option<usize> {
    let (class, len) = first;
    if class & UPPER == 0 {
        return None;
    }
    let upper_end = run(text, i + len, |c| c & UPPER != 0);
    let lower_end = run(text, upper_end, |c| c & LOWER != 0);
    Some(with_contraction::<CONTRACTIONS>(text, lower_end))
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a word that ends at `end`, when the pattern has it.
#[inline(always)]
fn with_contraction<const CONTRACTIONS: bool>(text: &[u8], end: usize) -> usize {
    if CONTRACTIONS {
        contraction(text, end, true).unwrap_or(end)
    } else {
        end
    }
}

/// `\s*[\r\n]+|\s+(?!\S)|\s+`: whitespace up to the run's last newline; else the whole run at
/// the end of the text; else all of it but its last character, left to start the next piece;
/// else one character.
#[inline]
fn whitespace_end(text: &[u8], i: usize) -> usize {
    let ws = whitespace(text, i);
    if let Some(end) = ws.newline_end {
        end
    } else if ws.end == text.len() || ws.last == i {
        ws.end
    } else {
        ws.last
    }
}
