//! GPT-2's pieces of an ASCII [`Window`], all at once from its byte classes, as
//! `o200k_window.rs` does for o200k. In ASCII the rules are:
//!
//! - **Contractions** (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, lowercase only) are pieces
//!   of their own wherever a piece starts at an apostrophe: not inside a run of punctuation,
//!   nor after a space (` ?` takes the apostrophe into punctuation).
//! - **Runs** of letters, of digits and of punctuation are pieces, each with the space before
//!   it, if any.
//! - **Whitespace**: a run is one piece but for its last byte, which is a piece of its own or
//!   the space of the next; a run that ends the text is one piece (`\s++$`).

use super::gpt2;
use super::window::{below, contraction_pieces, window_starts, Window, WindowStarts};
use super::PieceEnds;

/// GPT-2's splitter: windows of masks, the scanning splitter elsewhere.
#[derive(Clone, Copy)]
pub(super) struct Gpt2Windows;

impl PieceEnds for Gpt2Windows {
    #[inline(always)]
    fn piece_end(self, text: &[u8], i: usize) -> usize {
        gpt2::piece_end(text, i)
    }

    #[inline(always)]
    fn window(self, text: &[u8], i: usize) -> Result<(u64, usize), usize> {
        window_starts(text, i, self)
    }
}

impl WindowStarts for Gpt2Windows {
    #[inline(always)]
    fn starts(self, w: &Window) -> Option<u64> {
        starts(w)
    }
}

/// The bytes of `w` where a piece starts (bit 0 always). Never `None`.
#[inline(always)]
fn starts(w: &Window) -> Option<u64> {
    let punct = w.punct();

    let (contraction, contraction_letters) = contraction_pieces(w, punct, false);

    // Runs, and the space before each.
    let body = w.letter() & !contraction_letters;
    let punct = punct & !contraction;
    let runs = body & !(body << 1) | w.digit & !(w.digit << 1) | punct & !(punct << 1);
    let spaced = runs >> 1 & w.space;
    let run_starts = runs & !(spaced << 1) | spaced;

    // Whitespace: each run, and its last byte unless it ends the text.
    let ws_starts = w.ws & !(w.ws << 1) | w.ws & !(w.ws >> 1) & below(w.len - 1);

    // The byte after a contraction starts a piece by the rules above.
    Some(1 | contraction | run_starts | ws_starts)
}

#[cfg(test)]
mod tests {
    use super::super::window::assert_windows_scan_alike;
    use super::*;

    #[test]
    fn windows_cut_where_scanning_does() {
        assert_windows_scan_alike("gpt2", Gpt2Windows);
    }
}
