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
//! `window_agrees_with_scanning` to `o200k.rs` on random ASCII.

use super::o200k;
use super::window::{below, first_non_ascii_of_16, Window};
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
        // In text of other scripts most pieces have a non-ASCII byte in their first 16, and
        // the window would be too short to be worth its classes: scan past it.
        if let Some(non_ascii) = first_non_ascii_of_16(text, i) {
            return Err(i + non_ascii + 1);
        }
        window_starts::<C, D>(text, i)
    }
}

/// [`PieceEnds::window`] past its first test: a call of its own, so that the scanning loop
/// it sits in stays small (inlined, Chinese split at 0.92x).
#[inline(never)]
fn window_starts<const C: bool, const D: u32>(
    text: &[u8],
    i: usize,
) -> Result<(u64, usize), usize> {
    let w = Window::at(text, i)?;
    Ok((starts::<C, D>(&w).ok_or(i + 1)?, w.len))
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
    let digit_starts = if DIGITS == 1 {
        w.digit
    } else {
        let mut starts = w.digit & !(w.digit << 1);
        let mut step = starts;
        let mut full = w.digit;
        for k in 1..DIGITS {
            full &= w.digit << k;
        }
        while step != 0 {
            step = step << DIGITS & full;
            starts |= step;
        }
        starts
    };

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

/// The bits of `runs` reachable from a bit of `seeds` (in `runs`) going up through `runs`.
/// Adding a run's lowest bit carries through the run; several seeds in one run would carry
/// into each other, so they are spread one bit at a time (trailers are a byte or two).
#[inline(always)]
fn fill_right(seeds: u64, runs: u64) -> u64 {
    let mut filled = seeds;
    loop {
        let next = filled | filled << 1 & runs;
        if next == filled {
            return filled;
        }
        filled = next;
    }
}

/// The runs of `runs` that contain a bit of `ends`, each the highest bit of its run: in
/// reversed bit order each is its run's lowest bit, and adding it carries through the run.
#[inline(always)]
fn fill_left(ends: u64, runs: u64) -> u64 {
    let (ends, runs) = (ends.reverse_bits(), runs.reverse_bits());
    (runs & !runs.wrapping_add(ends)).reverse_bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Lcg;

    /// The pieces of `text` from the masks, window after window, scanning where there is
    /// none; and from the scanning splitter alone.
    fn both<const C: bool, const D: u32>(
        text: &[u8],
        piece_end: fn(&[u8], usize) -> usize,
    ) -> (Vec<usize>, Vec<usize>) {
        let mut scanned = Vec::new();
        let mut i = 0;
        while i < text.len() {
            i = piece_end(text, i);
            scanned.push(i);
        }
        let mut masked = Vec::new();
        let mut i = 0;
        while i < text.len() {
            match Window::at(text, i)
                .ok()
                .and_then(|w| Some((starts::<C, D>(&w)?, w.len)))
            {
                Some((starts, len)) => {
                    let mut rest = starts & !1;
                    while rest != 0 {
                        masked.push(i + rest.trailing_zeros() as usize);
                        rest &= rest - 1;
                    }
                    i += len;
                    masked.push(i);
                }
                None => {
                    i = piece_end(text, i);
                    masked.push(i);
                }
            }
        }
        (masked, scanned)
    }

    #[test]
    fn window_agrees_with_scanning() {
        let atoms: [&[u8]; 30] = [
            b"a", b"b", b"s", b"t", b"l", b"e", b"r", b"v", b"Z", b"S", b"L", b"7", b"12345", b" ",
            b"  ", b"\n", b"\r\n", b"\t", b"\x0b", b"/", b"//", b".", b"(", b"'", b"'s", b"'ll",
            b"'Re", b"\x00", b"\x1c", b"\x7f",
        ];
        let mut rng = Lcg(11);
        for round in 0..200_000 {
            let n = 1 + rng.below(if round % 4 == 0 { 120 } else { 40 });
            let text: Vec<u8> = (0..n)
                .flat_map(|_| atoms[rng.below(atoms.len())].iter().copied())
                .collect();
            let show = || format!("{:?}", String::from_utf8_lossy(&text));
            let (a, b) = both::<true, 3>(&text, o200k::piece_end);
            assert_eq!(a, b, "o200k {}", show());
            let (a, b) = both::<false, 1>(&text, o200k::tekken_piece_end);
            assert_eq!(a, b, "tekken {}", show());
        }
    }

    #[test]
    fn fills_take_whole_runs() {
        assert_eq!(fill_right(0b0001_0010, 0b0111_0110), 0b0111_0110);
        assert_eq!(fill_right(0b0100_0000, 0b0111_0110), 0b0100_0000);
        assert_eq!(fill_left(0b0100_0000, 0b0111_0110), 0b0111_0000);
        assert_eq!(fill_left(0b0000_0100, 0b0111_0110), 0b0000_0110);
    }
}
