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

use super::chars::{char_at, class_at, contraction, is_punct, run, whitespace, LETTER, NUMBER};

/// The end of the piece that starts at `i` (`i < text.len()`).
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    contraction(text, i, false)
        .or_else(|| space_then_run(text, i, |c| c & LETTER != 0))
        .or_else(|| space_then_run(text, i, |c| c & NUMBER != 0))
        .or_else(|| space_then_run(text, i, is_punct))
        .unwrap_or_else(|| whitespace_end(text, i))
}

/// ` ?\p{L}++`, ` ?\p{N}++` and ` ?[^\s\p{L}\p{N}]++`: an optional space, then a run of one
/// class (possessive: the run never gives characters back).
#[inline(always)]
fn space_then_run(text: &[u8], i: usize, class: impl Fn(u8) -> bool + Copy) -> Option<usize> {
    let start = if text[i] == b' ' && class_at(text, i + 1).is_some_and(class) {
        i + 1
    } else if class(char_at(text, i).0) {
        i
    } else {
        return None;
    };
    Some(run(text, start, class))
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
