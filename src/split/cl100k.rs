//! cl100k_base's pre-tokenizer and its descendants, hand-written on UTF-8 bytes:
//!
//! ```text
//! cl100k:  '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
//!          |\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//!          |\s*[\r\n]+|\s+(?!\S)|\s+
//! Qwen2:   Llama 3's with \p{N} for \p{N}{1,3}
//! Qwen3.5: Qwen2's with [\p{L}\p{M}] for \p{L} in the letters, and [^\s\p{L}\p{M}\p{N}] in
//!          the punctuation
//! ```
//!
//! As in the regex, the first alternative that matches at a position wins. Every character
//! starts a match of some alternative, so the pieces tile the text. The possessive
//! quantifiers of cl100k change no match (what follows each cannot match what it gave
//! back), and the contractions are the same set; what differs is whitespace at the end of
//! the text: cl100k's `\s++$` comes first, so `"\n "` there is one piece; Llama 3's
//! `\s*[\r\n]+` first makes it two. The differential tests run each against its regex.

use super::chars::{
    byte_class, byte_run, char_after, char_at, contraction, letters_after_in, letters_in, run,
    run_max, whitespace, LETTER, LETTER_OR_MARK, NUMBER, PREFIX, WS,
};

/// cl100k_base.
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    piece_end_of::<LETTER, 3, true>(text, i)
}

/// Llama 3.
#[inline]
pub(super) fn llama3_piece_end(text: &[u8], i: usize) -> usize {
    piece_end_of::<LETTER, 3, false>(text, i)
}

/// Qwen2, Qwen2.5 and Qwen3.
#[inline]
pub(super) fn qwen2_piece_end(text: &[u8], i: usize) -> usize {
    piece_end_of::<LETTER, 1, false>(text, i)
}

/// Qwen3.5.
#[inline]
pub(super) fn qwen35_piece_end(text: &[u8], i: usize) -> usize {
    piece_end_of::<LETTER_OR_MARK, 1, false>(text, i)
}

/// The end of the piece that starts at `i` (`i < text.len()`): `L` the letters' class bits,
/// `DIGITS` the longest run of numbers, `END_FIRST` whether whitespace that reaches the end
/// of the text is one piece before a newline ends one (cl100k's `\s++$`).
///
/// Letters, numbers, punctuation and whitespace are disjoint classes, so past the ASCII fast
/// path and the contraction, the class of the character at `i` (and of the next one, after a
/// possible prefix) picks the alternative; each is decoded once.
#[inline(always)]
fn piece_end_of<const L: u8, const DIGITS: usize, const END_FIRST: bool>(
    text: &[u8],
    i: usize,
) -> usize {
    // `[^\s\p{L}\p{N}]` (with marks: `[^\s\p{L}\p{M}\p{N}]`).
    let is_punct = |class: u8| class & (WS | L | NUMBER) == 0;
    if let Some(start) = ascii_word_start(text, i) {
        return letters_in::<L>(text, start);
    }
    if let Some(end) = contraction(text, i, true) {
        return end;
    }
    let (class, len) = char_at(text, i);
    if class & L != 0 {
        return letters_after_in::<L>(text, i + len, len);
    }
    if class & NUMBER != 0 {
        // `\p{N}{1,3}+` (or `\p{N}`).
        return run_max(text, i + len, DIGITS - 1, |c| c & NUMBER != 0);
    }
    // Punctuation or whitespace. `[^\r\n\p{L}\p{N}]?+\p{L}++`: it is a prefix unless it is a
    // newline; possessive, so if no letter follows, this alternative fails.
    let newline = matches!(text[i], b'\r' | b'\n');
    let next = if newline {
        None
    } else {
        char_after(text, i + len)
    };
    if let Some((next_class, next_len)) = next {
        if next_class & L != 0 {
            return letters_after_in::<L>(text, i + len + next_len, next_len);
        }
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`.
    let punct_end = match next {
        Some((next_class, next_len)) if text[i] == b' ' && is_punct(next_class) => {
            Some(i + 1 + next_len)
        }
        _ if class & WS == 0 => Some(i + len),
        _ => None,
    };
    match punct_end {
        Some(end) => byte_run(text, run(text, end, is_punct), b"\r\n"),
        None => whitespace_end::<END_FIRST>(text, i),
    }
}

/// A fast path for the commonest pieces, `word`, ` word` and `(word`, when they start in ASCII:
/// where `[^\r\n\p{L}\p{N}]?+\p{L}++` starts its run of letters. An apostrophe is left to the
/// general path, as it may start a contraction. Skipping the contraction test this way saves
/// 8% of the instructions per byte of en-prose (cachegrind: 24.3 against 26.6).
#[inline(always)]
fn ascii_word_start(text: &[u8], i: usize) -> Option<usize> {
    let class = byte_class(text, i)?;
    if class & LETTER != 0 {
        Some(i)
    } else if class & PREFIX != 0 && text[i] != b'\'' && byte_class(text, i + 1)? & LETTER != 0 {
        Some(i + 1)
    } else {
        None
    }
}

/// cl100k's `\s++$|\s*[\r\n]|\s+(?!\S)|\s`: whitespace to the end of the text; else up to
/// the run's last newline; else all of the run but its last character, left to start the
/// next piece; else one character. Llama 3's `\s*[\r\n]+|\s+(?!\S)|\s+` tries the newline
/// first (`END_FIRST` false); the rest is the same.
#[inline]
fn whitespace_end<const END_FIRST: bool>(text: &[u8], i: usize) -> usize {
    let ws = whitespace(text, i);
    if END_FIRST && ws.end == text.len() {
        ws.end
    } else if let Some(end) = ws.newline_end {
        end
    } else if ws.end == text.len() || ws.last == i {
        ws.end
    } else {
        ws.last
    }
}
