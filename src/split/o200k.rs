//! o200k_base's pre-tokenizer, hand-written on UTF-8 bytes:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! As in the regex, the first alternative that matches at a position wins. Every character
//! starts a match of some alternative, so the pieces tile the text. Unlike the other two
//! patterns nothing here is possessive, and the classes overlap (`Lm`, `Lo` and marks are in
//! both letter classes, and a mark is also a prefix character), so the word alternatives follow
//! the backtracking the regex does; their comments say how.

use super::chars::{
    ascii_class, char_at, class_at, contraction, digits, punctuation_then, run, whitespace, LETTER,
    LOWER, NUMBER, UPPER,
};

/// The end of the piece that starts at `i` (`i < text.len()`).
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    if let Some(end) = ascii_word(text, i) {
        return end;
    }
    word_ending_lower(text, i)
        .or_else(|| word_starting_upper(text, i))
        .or_else(|| digits(text, i))
        .or_else(|| punctuation_then(text, i, b"\r\n/"))
        .unwrap_or_else(|| whitespace_end(text, i))
}

/// A fast path for the commonest pieces, `word`, ` Word`, `(WORD's`, when they lie in ASCII:
/// `[A-Z]*[a-z]+` for the first alternative, else `[A-Z]+` for the second, after an optional
/// ASCII prefix, then the contraction. `None` (take the general path) when the word does not
/// start with ASCII or stops at a non-ASCII byte, which may continue it. Saves 7% of the
/// instructions per byte of en-prose (cachegrind: 28.7 against 30.8).
#[inline(always)]
fn ascii_word(text: &[u8], i: usize) -> Option<usize> {
    let class = ascii_class(text, i)?;
    let start = if class & LETTER != 0 {
        i
    } else if class & NUMBER == 0
        && !matches!(text[i], b'\r' | b'\n')
        && ascii_class(text, i + 1)? & LETTER != 0
    {
        i + 1
    } else {
        return None;
    };
    let upper_end = start
        + text[start..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase())
            .count();
    let end = upper_end
        + text[upper_end..]
            .iter()
            .take_while(|b| b.is_ascii_lowercase())
            .count();
    if ascii_class(text, end).is_none() && end < text.len() {
        return None;
    }
    Some(contraction(text, end, true).unwrap_or(end))
}

/// `[^\r\n\p{L}\p{N}]`: the length of the optional character before a word, if the character
/// at `i` is one.
#[inline(always)]
fn prefix_len(text: &[u8], i: usize) -> Option<usize> {
    let (class, len) = char_at(text, i);
    (class & (LETTER | NUMBER) == 0 && !matches!(text[i], b'\r' | b'\n')).then_some(len)
}

/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?`
/// (`Hello`, ` world`, `don't`, `ʰ` of `ʰA`): the greedy `?` first takes the prefix character;
/// when the rest fails after it, the regex backtracks to an empty prefix, which matters only
/// when that character is a mark.
#[inline(always)]
fn word_ending_lower(text: &[u8], i: usize) -> Option<usize> {
    prefix_len(text, i)
        .and_then(|len| upper_then_lower(text, i + len))
        .or_else(|| upper_then_lower(text, i))
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` and the contraction, at `i`.
/// The greedy `*` takes the whole uppercase-class run; if no lowercase-class character follows
/// it, the regex gives characters back until `+` can start on one: the run's last character
/// that is in both classes (`Lm`, `Lo`, a mark), and `+` then takes just that one, since the
/// characters after it in the run are `Lu`/`Lt`.
#[inline(always)]
fn upper_then_lower(text: &[u8], i: usize) -> Option<usize> {
    let mut end = i;
    let mut last_in_both_end = None;
    while end < text.len() {
        let (class, len) = char_at(text, end);
        if class & UPPER == 0 {
            break;
        }
        end += len;
        if class & LOWER != 0 {
            last_in_both_end = Some(end);
        }
    }
    let lower_end = if class_at(text, end).is_some_and(|c| c & LOWER != 0) {
        run(text, end, |c| c & LOWER != 0)
    } else {
        last_in_both_end?
    };
    Some(contraction(text, lower_end, true).unwrap_or(lower_end))
}

/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?`
/// (`HTML`, ` IBM's`): tried only when the alternative above fails, so nothing after the
/// uppercase-class run is lowercase-class.
#[inline(always)]
fn word_starting_upper(text: &[u8], i: usize) -> Option<usize> {
    prefix_len(text, i)
        .and_then(|len| upper_then_any(text, i + len))
        .or_else(|| upper_then_any(text, i))
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` and the contraction, at `i`.
#[inline(always)]
fn upper_then_any(text: &[u8], i: usize) -> Option<usize> {
    let upper_end = run(text, i, |c| c & UPPER != 0);
    if upper_end == i {
        return None;
    }
    let lower_end = run(text, upper_end, |c| c & LOWER != 0);
    Some(contraction(text, lower_end, true).unwrap_or(lower_end))
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
