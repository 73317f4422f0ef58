//! o200k's (and Tekken's) pieces of an ASCII [`Window`], all at once from its byte classes:
//! a mask of the bytes where a piece starts. In ASCII the pattern's alternatives come down to
//! these rules (bit `k` is byte `k`; "the byte before" of bit 0 is nothing, the window
//! being a text of its own):
//!
//! - **Words**: letters, a new piece at an uppercase letter after a lowercase one (`[A-Z]*`
//!   `[a-z]+` and `[A-Z]+[a-z]*`: `camelCase` is `camel`, `Case`; `HTMLParser` one piece).
//!   A contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, either case) after a letter
//!   ends the word it follows.
//! - **The prefix**: the byte before a word that is not a letter, digit or newline joins it
//!   when a piece would start there: always for whitespace (a run of whitespace leaves its
//!   last byte to what follows), and for punctuation unless the byte before it is
//!   punctuation (a run of it is one piece) or a space (` ?` takes it first).
//! - **Punctuation**: a run of it is one piece, with a space before it, and the run of
//!   `\r`, `\n` and `/` after it (the trailer).
//! - **Digits**: runs cut in threes from the left (Tekken: one each).
//! - **Whitespace** (not a trailer's newlines): a run is cut after its last newline, and its
//!   last byte, when not a newline and not the text's last, is a piece of its own or the
//!   start of the next.
//!
//! A contraction's letter right before another apostrophe (`x's's`) chains the rules from
//! piece to piece; such a window is left to the scanning splitter (`None`). The differential
//! tests hold these masks to fancy-regex on random text and every corpus, and
//! `windows_cut_where_scanning_does` to `o200k.rs` on random ASCII.

use super::o200k;
use super::window::{below, digit_starts, fill_left, fill_right, window_starts, Window};
use super::PieceEnds;

/// o200k's splitter, through windows where it can.
pub(super) const O200K: O200kWindows<true, 3> = O200kWindows;
/// Tekken's.
pub(super) const TEKKEN: O200kWindows<false, 1> = O200kWindows;

/// The o200k family's splitter: windows of masks, the scanning splitter elsewhere.
#[derive(Clone, Copy)]
pub(super) struct O200kWindows<const CONTRACTIONS: bool, const DIGITS: u32>;

impl<const C: bool, const D: u32> PieceEnds for O200kWindows<C, D> {
    #[inline(always)]
    fn piece_end(self, text: &[u8], i: usize) -> usize {
        if C {
            o200k::piece_end(text, i)
        } else {
            o200k::tekken_piece_end(text, i)
        }
    }

    #[inline(always)]
    fn window(self, text: &[u8], i: usize) -> Result<(u64, usize), usize> {
        window_starts(text, i, starts::<C, D>)
    }
}

/// The bytes of `w` where a piece starts (bit 0 always), under o200k (`CONTRACTIONS`,
/// `DIGITS = 3`) or Tekken; `None` for a window left to the scanning splitter.
#[inline(always)]
pub(super) fn starts<const CONTRACTIONS: bool, const DIGITS: u32>(w: &Window) -> Option<u64> {
    let letter = w.upper | w.lower;
    let punct = below(w.len) & !(letter | w.digit | w.ws);

    // Contractions: the apostrophes that start one, and their letters.
    let (contraction, contraction_letters) = if CONTRACTIONS && w.apostrophe & letter << 1 != 0 {
        contractions(w, letter)?
    } else {
        (0, 0)
    };

    // Word bodies: a letter not after one, or uppercase after lowercase.
    let body = letter & !contraction_letters;
    let body_start = body & !(body << 1) | w.upper & (w.lower & body) << 1;

    // Trailers: from a newline right after punctuation, the run of `\r`, `\n`, `/`.
    let punct = punct & !contraction;
    let trailer = fill_right(w.newline & punct << 1, w.newline | w.slash);
    let punct = punct & !trailer;

    // Prefixes.
    let before_body = body_start >> 1;
    let ws_prefix = before_body & w.ws & !w.newline;
    let punct_prefix = before_body & punct & !((punct | w.space) << 1);
    let prefix = ws_prefix | punct_prefix;
    let word_starts = body_start & !(prefix << 1) | prefix;

    // Punctuation runs, from the space before one.
    let run = punct & !punct_prefix;
    let run_start = run & !(run << 1);
    let punct_starts = run_start & !(w.space << 1) | run_start >> 1 & w.space;

    // Digits, in threes from each run's start.
    let digit_starts = digit_starts::<DIGITS>(w.digit);

    // Whitespace.
    let ws = w.ws & !trailer;
    let ws_run_start = ws & !(ws << 1);
    // After a run's last newline: its last run of other whitespace, if it ends the run.
    let other = ws & !w.newline;
    let other_end = other & !(other >> 1) & !(ws >> 1);
    let last_other = fill_left(other_end, other);
    let after_newline = last_other & !(last_other << 1);
    let ws_last = other & !(ws >> 1) & below(w.len - 1);
    let ws_starts = ws_run_start | after_newline | ws_last;

    Some(1 | word_starts | punct_starts | digit_starts | ws_starts)
}

/// The apostrophes that start a contraction after a letter, and the contractions' letters;
/// `None` when one may follow another's letters (`x's's`: then the second apostrophe is a
/// word's prefix, not a contraction).
#[inline(never)]
fn contractions(w: &Window, letter: u64) -> Option<(u64, u64)> {
    let after_letter = w.apostrophe & letter << 1;
    let [s, t, m, d, r, v, l, e] =
        [b's', b't', b'm', b'd', b'r', b'v', b'l', b'e'].map(|c| w.letter_either_case(c));
    let one = after_letter & (s | t | m | d) >> 1;
    let two = after_letter & !one & ((r | v) >> 1 & e >> 2 | l >> 1 & l >> 2);
    let starts = one | two;
    if starts & (w.apostrophe << 2 | w.apostrophe << 3) != 0 {
        return None;
    }
    Some((starts, starts << 1 | two << 2))
}

#[cfg(test)]
mod tests {
    use super::super::window::assert_windows_scan_alike;
    use super::*;

    #[test]
    fn windows_cut_where_scanning_does() {
        assert_windows_scan_alike("o200k", starts::<true, 3>, o200k::piece_end);
        assert_windows_scan_alike("tekken", starts::<false, 1>, o200k::tekken_piece_end);
    }
}
