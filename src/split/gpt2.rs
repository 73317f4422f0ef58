//! GPT-2's pre-tokenizer (`gpt2`, `r50k_base`, `p50k_base`), hand-written on UTF-8 bytes:
//!
//! ```text
//! '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
//! ```
//!
//! As in the regex, the first alternative that matches at a position wins. Every character
//! starts a match of some alternative, so the pieces tile the text.
//!
//! No separate ASCII path: `char_at`'s ASCII branch is enough here (one for ` word` cost 7%
//! more instructions per byte of en-prose, by cachegrind).

use super::chars::{
    char_after, char_at, contraction, is_punct, letters_after, run, whitespace, LETTER, NUMBER, WS,
};

/// The end of the piece that starts at `i` (`i < text.len()`).
///
/// Letters, numbers, punctuation and whitespace are disjoint classes, so the class of one
/// character picks the alternative: that of the character at `i`, or after a space, of the
/// next one. Each character is decoded once here (trying the alternatives one by one decoded
/// the first character up to four times).
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    if let Some(end) = contraction(text, i, false) {
        return end;
    }
    // ` ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++`: a space joins the run after it, if any.
    let (class, len, start) = if text[i] == b' ' {
        match char_after(text, i + 1) {
            Some((class, len)) if class & WS == 0 => (class, len, i + 1 + len),
            _ => return whitespace_end(text, i),
        }
    } else {
        let (class, len) = char_at(text, i);
        (class, len, i + len)
    };
    if class & LETTER != 0 {
        letters_after(text, start, len)
    } else if class & NUMBER != 0 {
        run(text, start, |c| c & NUMBER != 0)
    } else if is_punct(class) {
        run(text, start, is_punct)
    } else {
        whitespace_end(text, i)
    }
}

/// `\s++$|\s+(?!\S)|\s`: whitespace to the end of the text; else all of a run but its last
/// character, which is left to start the next piece (` word`); else one character.
#[inline]
fn whitespace_end(text: &[u8], i: usize) -> usize {
    let ws = whitespace(text, i);
    if ws.end == text.len() || ws.last == i {
        ws.end
    } else {
        ws.last
    }
}
