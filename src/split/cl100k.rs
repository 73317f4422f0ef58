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
    byte_class, byte_run, char_after, char_at, contraction, is_punct, letters, letters_after, run,
    run_max, whitespace, LETTER, NUMBER, PREFIX, WS,
};

/// The end of the piece that starts at `i` (`i < text.len()`).
///
/// Letters, numbers, punctuation and whitespace are disjoint classes, so past the ASCII fast
/// path and the contraction, the class of the character at `i` (and of the next one, after a
/// possible prefix) picks the alternative; each is decoded once.
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    if let Some(start) = ascii_word_start(text, i) {
        return letters(text, start);
    }
    if let Some(end) = contraction(text, i, true) {
        return end;
    }
    let (class, len) = char_at(text, i);
    if class & LETTER != 0 {
        return letters_after(text, i + len, len);
    }
    if class & NUMBER != 0 {
        // `\p{N}{1,3}+`.
        return run_max(text, i + len, 2, |c| c & NUMBER != 0);
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
        if next_class & LETTER != 0 {
            return letters_after(text, i + len + next_len, next_len);
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
        None => whitespace_end(text, i),
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
