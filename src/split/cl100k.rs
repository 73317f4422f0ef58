//! cl100k_base's pre-tokenizer, hand-written on UTF-8 bytes:
//!
//! ```text
//! '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
//! |\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! ```
//!
//! As in the regex, the first alternative that matches at a position wins. Every character
//! starts a match of some alternative, so the pieces tile the text.

use super::chars::{
    ascii_class, char_at, class_at, contraction, digits, punctuation_then, run, whitespace, LETTER,
    NUMBER,
};

/// The end of the piece that starts at `i` (`i < text.len()`).
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    if let Some(start) = ascii_word_start(text, i) {
        return run(text, start, |c| c & LETTER != 0);
    }
    contraction(text, i, true)
        .or_else(|| prefixed_letters(text, i))
        .or_else(|| digits(text, i))
        .or_else(|| punctuation_then(text, i, b"\r\n"))
        .unwrap_or_else(|| whitespace_end(text, i))
}

/// A fast path for the commonest pieces, `word`, ` word` and `(word`, when they start in ASCII:
/// where `[^\r\n\p{L}\p{N}]?+\p{L}++` starts its run of letters. An apostrophe is left to the
/// general path, as it may start a contraction. Skipping the contraction test this way saves
/// 8% of the instructions per byte of en-prose (cachegrind: 24.3 against 26.6).
#[inline(always)]
fn ascii_word_start(text: &[u8], i: usize) -> Option<usize> {
    let class = ascii_class(text, i)?;
    if class & LETTER != 0 {
        Some(i)
    } else if class & NUMBER == 0
        && !matches!(text[i], b'\r' | b'\n' | b'\'')
        && ascii_class(text, i + 1)? & LETTER != 0
    {
        Some(i + 1)
    } else {
        None
    }
}

/// `[^\r\n\p{L}\p{N}]?+\p{L}++`: a run of letters, with the one character before it when that
/// is neither a newline, letter nor number (` word`, `"word`, `\tword`).
#[inline(always)]
fn prefixed_letters(text: &[u8], i: usize) -> Option<usize> {
    let (class, len) = char_at(text, i);
    let start = if class & LETTER != 0 {
        i
    } else if class & NUMBER == 0
        && !matches!(text[i], b'\r' | b'\n')
        && class_at(text, i + len).is_some_and(|c| c & LETTER != 0)
    {
        i + len
    } else {
        return None;
    };
    Some(run(text, start, |c| c & LETTER != 0))
}

/// `\s++$|\s*[\r\n]|\s+(?!\S)|\s`: whitespace to the end of the text; else up to the run's
/// last newline; else all of the run but its last character, left to start the next piece;
/// else one character.
#[inline]
fn whitespace_end(text: &[u8], i: usize) -> usize {
    let ws = whitespace(text, i);
    if ws.end == text.len() {
        ws.end
    } else if let Some(end) = ws.newline_end {
        end
    } else if ws.last == i {
        ws.end
    } else {
        ws.last
    }
}
