//! The cl100k family's pieces of an ASCII [`Window`] (cl100k, Llama 3, Qwen2, Qwen3.5, which
//! are alike in ASCII but for the digits and cl100k's `\s++$`), all at once from its byte
//! classes, as `o200k_window.rs` does for o200k. In ASCII the rules are:
//!
//! - **Contractions** (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, either case) are pieces of
//!   their own, tried first wherever a piece starts at an apostrophe: not inside a run of
//!   punctuation, nor after a space (` ?` takes the apostrophe into punctuation).
//! - **Words**: runs of letters, no cut at case.
//! - **The prefix**, **punctuation** and **digits** as in o200k, but the trailer after
//!   punctuation is `\r` and `\n` only, and Qwen's digits are one each.
//! - **Whitespace** as in o200k, but for cl100k a run that reaches the text's end is one
//!   piece (`\s++$` comes before `\s*[\r\n]`).

use super::cl100k;
use super::window::{
    contraction_pieces, digit_starts, fill_right, window_starts, word_and_punct_starts, ws_starts,
    Window, WindowStarts,
};
use super::PieceEnds;

/// cl100k_base's splitter, through windows where it can.
pub(super) const CL100K: Cl100kWindows<0> = Cl100kWindows;
/// Llama 3's.
pub(super) const LLAMA3: Cl100kWindows<1> = Cl100kWindows;
/// Qwen2's.
pub(super) const QWEN2: Cl100kWindows<2> = Cl100kWindows;
/// Qwen3.5's.
pub(super) const QWEN3_5: Cl100kWindows<3> = Cl100kWindows;

/// A splitter of the cl100k family (`PATTERN` one of the four above): windows of masks, the
/// scanning splitter elsewhere.
#[derive(Clone, Copy)]
pub(super) struct Cl100kWindows<const PATTERN: u8>;

impl<const P: u8> PieceEnds for Cl100kWindows<P> {
    #[inline(always)]
    fn piece_end(self, text: &[u8], i: usize) -> usize {
        match P {
            0 => cl100k::piece_end(text, i),
            1 => cl100k::llama3_piece_end(text, i),
            2 => cl100k::qwen2_piece_end(text, i),
            _ => cl100k::qwen35_piece_end(text, i),
        }
    }

    #[inline(always)]
    fn window(self, text: &[u8], i: usize) -> Result<(u64, usize), usize> {
        window_starts(text, i, self)
    }
}

impl<const P: u8> WindowStarts for Cl100kWindows<P> {
    #[inline(always)]
    fn starts(self, w: &Window) -> Option<u64> {
        match P {
            0 => starts::<3, true>(w),
            1 => starts::<3, false>(w),
            _ => starts::<1, false>(w),
        }
    }
}

/// The bytes of `w` where a piece starts (bit 0 always), with digits in runs of up to
/// `DIGITS` and, when `END_FIRST`, cl100k's `\s++$`. Never `None`.
#[inline(always)]
fn starts<const DIGITS: u32, const END_FIRST: bool>(w: &Window) -> Option<u64> {
    let punct = w.punct();

    let (contraction, contraction_letters) = contraction_pieces(w, punct, true);

    // Words.
    let body = w.letter() & !contraction_letters;
    let body_start = body & !(body << 1);

    // Trailers: the run of `\r` and `\n` after punctuation.
    let punct = punct & !contraction;
    let trailer = fill_right(w.newline & punct << 1, w.newline);

    let word_punct_starts = word_and_punct_starts(w, body_start, punct);
    let digit_starts = digit_starts::<DIGITS>(w.digit);

    let ws_starts = ws_starts::<END_FIRST>(w, w.ws & !trailer);

    // The byte after a contraction starts a piece by the rules above (it is not a body
    // letter after one, nor punctuation after punctuation).
    Some(1 | contraction | word_punct_starts | digit_starts | ws_starts)
}

#[cfg(test)]
mod tests {
    use super::super::window::assert_windows_scan_alike;
    use super::*;

    #[test]
    fn windows_cut_where_scanning_does() {
        assert_windows_scan_alike("cl100k", CL100K);
        assert_windows_scan_alike("llama3", LLAMA3);
        assert_windows_scan_alike("qwen2", QWEN2);
        assert_windows_scan_alike("qwen3.5", QWEN3_5);
    }
}
