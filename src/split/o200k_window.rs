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
use super::window::{
    contractions, digit_starts, fill_right, window_starts, word_and_punct_starts, ws_starts,
    Window, WindowStarts,
};
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
        window_starts(text, i, self)
    }
}

impl<const C: bool, const D: u32> WindowStarts for O200kWindows<C, D> {
    #[inline(always)]
    fn starts(self, w: &Window) -> Option<u64> {
        starts::<C, D>(w)
    }
}

/// The bytes of `w` where a piece starts (bit 0 always), under o200k (`CONTRACTIONS`,
/// `DIGITS = 3`) or Tekken; `None` for a window left to the scanning splitter.
#[inline(always)]
fn starts<const CONTRACTIONS: bool, const DIGITS: u32>(w: &Window) -> Option<u64> {
    let letter = w.letter();
    let punct = w.punct();

    // Contractions: the apostrophes after a letter that start one, and their letters. One
    // that may follow another's letters (`x's's`: the second apostrophe is then a word's
    // prefix) is left to scanning.
    let after_letter = w.apostrophe & letter << 1;
    let (contraction, contraction_letters) = if CONTRACTIONS && after_letter != 0 {
        contractions(w, after_letter, true)
    } else {
        (0, 0)
    };
    if contraction & (w.apostrophe << 2 | w.apostrophe << 3) != 0 {
        return None;
    }

    // Word bodies: a letter not after one, or uppercase after lowercase.
    let body = letter & !contraction_letters;
    let body_start = body & !(body << 1) | w.upper & (w.lower & body) << 1;

    // Trailers: from a newline right after punctuation, the run of `\r`, `\n`, `/`.
    let punct = punct & !contraction;
    let trailer = fill_right(w.newline & punct << 1, w.newline | w.slash);
    let punct = punct & !trailer;

    let word_punct_starts = word_and_punct_starts(w, body_start, punct);

    // Digits, in threes from each run's start.
    let digit_starts = digit_starts::<DIGITS>(w.digit);

    let ws_starts = ws_starts::<false>(w, w.ws & !trailer);

    Some(1 | word_punct_starts | digit_starts | ws_starts)
}

#[cfg(test)]
mod tests {
    use super::super::window::assert_windows_scan_alike;
    use super::*;

    #[test]
    fn windows_cut_where_scanning_does() {
        assert_windows_scan_alike("o200k", O200K);
        assert_windows_scan_alike("tekken", TEKKEN);
    }
}
