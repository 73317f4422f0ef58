//! A window of ASCII text that starts at a piece boundary and ends at a safe cut
//! ([`crate::safe_cut`]) or at the end of the text, with its bytes' classes as bit masks
//! (bit `k` for byte `k`). The safe cut makes the window a text of its own: its pieces are
//! the whole text's pieces there, so a splitter can find all of them from the masks
//! (`split/o200k_window.rs`) instead of one branchy scan per piece.

use super::byte_classes::{self, Classes};

/// The longest window: 63 bytes, so that bit 63 of every mask is free and a carry out of a
/// run of bits never leaves the word.
pub const MAX_WINDOW: usize = 63;

/// The fewest ASCII bytes ahead worth a window's classes, unless the text ends sooner.
const MIN_ASCII: usize = 16;

/// A window's length and the classes of its bytes. Bits at and past `len` are clear.
pub(super) struct Window {
    pub len: usize,
    /// `A-Z`.
    pub upper: u64,
    /// `a-z`.
    pub lower: u64,
    /// `0-9`.
    pub digit: u64,
    /// `\s` in ASCII: `\t`, `\n`, `\x0b`, `\x0c`, `\r`, space.
    pub ws: u64,
    /// `\r` or `\n`.
    pub newline: u64,
    pub space: u64,
    pub slash: u64,
    pub apostrophe: u64,
    /// The window's bytes, zero past `len`, for the classes asked for later.
    bytes: [u8; 64],
    /// Whether its masks are made 64 bytes at a time (AVX-512BW), as later ones are then.
    wide: bool,
}

impl Window {
    /// The window of the text from `i` (a piece boundary), or, when there is none (the text
    /// from `i` has a non-ASCII byte before any safe cut, or no safe cut in reach), the
    /// offset before which no window will start: past that non-ASCII byte, else `i + 1`.
    ///
    /// # Safety
    /// With `WIDE`, the CPU has AVX-512BW (see [`byte_classes`]).
    #[inline(always)]
    unsafe fn at<const WIDE: bool>(text: &[u8], i: usize) -> Result<Window, usize> {
        let rest = &text[i..];
        let avail = rest.len().min(64);
        let bytes = byte_classes::load::<WIDE>(rest, avail);
        // A non-ASCII byte close ahead leaves too short a window to be worth its classes
        // (over any window, o200k split zh-prose at 0.82x, 25 languages at 0.73x).
        let non_ascii = byte_classes::high_bits::<WIDE>(&bytes) & below(avail);
        let ascii_end = (non_ascii.trailing_zeros() as usize).min(avail);
        if ascii_end < MIN_ASCII.min(rest.len()) {
            return Err(i + ascii_end + 1);
        }
        let c = Classes::of::<WIDE>(&bytes);
        // Bits of the bytes present before the first non-ASCII one.
        let ascii = below(ascii_end);
        let len = if rest.len() <= MAX_WINDOW && ascii_end == rest.len() {
            rest.len()
        } else {
            // `safe_cut`'s three cases, for ASCII bytes: a space after visible ASCII, `\n`
            // after a letter or digit, visible ASCII but `/` after one `\n` after visible
            // ASCII. A cut at `k > 0` needs the bytes before `k` ASCII; byte `k` is ASCII
            // in each case, so `k` is below `ascii_end`, itself at most `avail`.
            let alnum = c.upper | c.lower | c.digit;
            let cuts = (c.space & c.visible << 1)
                | (c.lf & alnum << 1)
                | (c.visible & !c.slash & c.lf << 1 & c.visible << 2);
            let cuts = cuts & ascii & !1;
            if cuts == 0 {
                return Err(i + 1 + if ascii_end < avail { ascii_end } else { 0 });
            }
            63 - cuts.leading_zeros() as usize
        };
        let valid = below(len);
        Ok(Window {
            len,
            upper: c.upper & valid,
            lower: c.lower & valid,
            digit: c.digit & valid,
            ws: c.ws & valid,
            newline: c.newline & valid,
            space: c.space & valid,
            slash: c.slash & valid,
            apostrophe: c.apostrophe & valid,
            bytes,
            wide: WIDE,
        })
    }

    /// `\p{L}` in ASCII.
    #[inline(always)]
    pub(super) fn letter(&self) -> u64 {
        self.upper | self.lower
    }

    /// `[^\s\p{L}\p{N}]` in ASCII: punctuation, symbols and controls.
    #[inline(always)]
    pub(super) fn punct(&self) -> u64 {
        below(self.len) & !(self.letter() | self.digit | self.ws)
    }

    /// The bytes `b` with `b | fold == value`.
    ///
    /// # Safety
    /// With `WIDE`, the CPU has AVX-512BW.
    #[inline(always)]
    unsafe fn bytes_of<const WIDE: bool>(&self, value: u8, fold: u8) -> u64 {
        byte_classes::eq_mask::<WIDE>(&self.bytes, value, fold) & below(self.len)
    }
}

/// A splitter's pieces of a window: the bytes where a piece starts (bit 0 always), or
/// `None` to leave the window to the scanning splitter. A trait rather than a closure so
/// that the call inlines into [`window_of_wide`] (through `Fn::call`, LLVM left it a call).
pub(super) trait WindowStarts: Copy {
    fn starts(self, w: &Window) -> Option<u64>;
}

/// `PieceEnds::window` of a splitter whose pieces of a window `starts` finds.
#[inline(always)]
pub(super) fn window_starts(
    text: &[u8],
    i: usize,
    starts: impl WindowStarts,
) -> Result<(u64, usize), usize> {
    // In text of other scripts most pieces have a non-ASCII byte in their first 16, and the
    // window would be too short to be worth its classes: scan past it.
    if let Some(non_ascii) = first_non_ascii_of_16(text, i) {
        return Err(i + non_ascii + 1);
    }
    if byte_classes::wide_available() {
        // SAFETY: the CPU has AVX-512BW.
        return unsafe { window_of_wide(text, i, starts) };
    }
    window_of(text, i, starts)
}

/// [`window_starts`] past its first test: a call of its own, so that the scanning loop it
/// sits in stays small (inlined, o200k split Chinese at 0.92x).
#[inline(never)]
fn window_of(text: &[u8], i: usize, starts: impl WindowStarts) -> Result<(u64, usize), usize> {
    // SAFETY: the narrow masks need nothing past x86-64's SSE2.
    let w = unsafe { Window::at::<false>(text, i)? };
    Ok((starts.starts(&w).ok_or(i + 1)?, w.len))
}

/// [`window_of`] compiled for AVX-512BW, so that the wide masks inline into it.
///
/// # Safety
/// The CPU has AVX-512BW.
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx512bw"))]
#[inline(never)]
unsafe fn window_of_wide(
    text: &[u8],
    i: usize,
    starts: impl WindowStarts,
) -> Result<(u64, usize), usize> {
    let w = Window::at::<true>(text, i)?;
    Ok((starts.starts(&w).ok_or(i + 1)?, w.len))
}

/// Of the apostrophes `at`, those that start a contraction (`'s`, `'t`, `'m`, `'d`, `'re`,
/// `'ve`, `'ll`; in either case when `fold`), and the contractions' letters. A call of its
/// own, in the masks' width of the window: most windows have no apostrophe.
#[inline(always)]
pub(super) fn contractions(w: &Window, at: u64, fold: bool) -> (u64, u64) {
    if w.wide {
        // SAFETY: a wide window was made where the CPU has AVX-512BW.
        unsafe { contractions_wide(w, at, fold) }
    } else {
        contractions_narrow(w, at, fold)
    }
}

#[inline(never)]
fn contractions_narrow(w: &Window, at: u64, fold: bool) -> (u64, u64) {
    // SAFETY: the narrow masks need nothing past x86-64's SSE2.
    unsafe { contractions_of::<false>(w, at, fold) }
}

/// # Safety
/// The CPU has AVX-512BW.
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx512bw"))]
#[inline(never)]
unsafe fn contractions_wide(w: &Window, at: u64, fold: bool) -> (u64, u64) {
    contractions_of::<true>(w, at, fold)
}

/// # Safety
/// With `WIDE`, the CPU has AVX-512BW.
#[inline(always)]
unsafe fn contractions_of<const WIDE: bool>(w: &Window, at: u64, fold: bool) -> (u64, u64) {
    let fold = if fold { 0x20 } else { 0 };
    let [s, t, m, d, r, v, l, e] =
        [b's', b't', b'm', b'd', b'r', b'v', b'l', b'e'].map(|c| w.bytes_of::<WIDE>(c, fold));
    let one = at & (s | t | m | d) >> 1;
    let two = at & ((r | v) >> 1 & e >> 2 | l >> 1 & l >> 2);
    let starts = one | two;
    (starts, starts << 1 | two << 2)
}

/// The contractions of the cl100k family and GPT-2, pieces of their own wherever a piece
/// starts at an apostrophe: not inside a run of `punct`, nor after a space (` ?` takes the
/// apostrophe into punctuation). Their apostrophes and letters, as [`contractions`].
#[inline(always)]
pub(super) fn contraction_pieces(w: &Window, punct: u64, fold: bool) -> (u64, u64) {
    if w.apostrophe == 0 {
        return (0, 0);
    }
    contractions(w, w.apostrophe & !((punct | w.space) << 1), fold)
}

/// The starts of words and of punctuation runs under the o200k and cl100k families'
/// `[^\r\n\p{L}\p{N}]?` before a word and ` ?` before punctuation, from the words' bodies'
/// starts and the punctuation (less contractions' apostrophes and trailers): the byte before a
/// word joins it when not a letter, digit or newline and a piece would start there, which for
/// whitespace is always (a run of whitespace leaves its last byte to what follows) and for
/// punctuation is unless the byte before it is punctuation (a run is one piece) or a space
/// (` ?` takes it first); a run of punctuation starts at the space before it, if any.
#[inline(always)]
pub(super) fn word_and_punct_starts(w: &Window, body_start: u64, punct: u64) -> u64 {
    let before_body = body_start >> 1;
    let ws_prefix = before_body & w.ws & !w.newline;
    let punct_prefix = before_body & punct & !((punct | w.space) << 1);
    let prefix = ws_prefix | punct_prefix;
    let word_starts = body_start & !(prefix << 1) | prefix;
    let run = punct & !punct_prefix;
    let run_start = run & !(run << 1);
    word_starts | run_start & !(w.space << 1) | run_start >> 1 & w.space
}

/// The starts of whitespace pieces under the o200k and cl100k families, `ws` the window's
/// whitespace less trailers' newlines: each run; after its last newline, its last run of
/// other whitespace; its last byte, when not a newline and not the text's last (a piece of
/// its own or the start of the next). With `END_FIRST` (cl100k's `\s++$`), a run that ends
/// the text is one piece.
#[inline(always)]
pub(super) fn ws_starts<const END_FIRST: bool>(w: &Window, ws: u64) -> u64 {
    let run_start = ws & !(ws << 1);
    let other = ws & !w.newline;
    let other_end = other & !(other >> 1) & !(ws >> 1);
    let last_other = fill_left(other_end, other);
    let after_newline = last_other & !(last_other << 1);
    let last = other & !(ws >> 1) & below(w.len - 1);
    let at_end = if END_FIRST {
        fill_left(ws & 1 << (w.len - 1), ws)
    } else {
        0
    };
    run_start | (after_newline | last) & !at_end
}

/// The bits of `runs` reachable from a bit of `seeds` (in `runs`) going up through `runs`.
/// Adding a run's lowest bit carries through the run; several seeds in one run would carry
/// into each other, so they are spread one bit at a time (trailers are a byte or two).
#[inline(always)]
pub(super) fn fill_right(seeds: u64, runs: u64) -> u64 {
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
pub(super) fn fill_left(ends: u64, runs: u64) -> u64 {
    let (ends, runs) = (ends.reverse_bits(), runs.reverse_bits());
    (runs & !runs.wrapping_add(ends)).reverse_bits()
}

/// The starts of digit pieces: runs cut in `DIGITS` from the left.
#[inline(always)]
pub(super) fn digit_starts<const DIGITS: u32>(digit: u64) -> u64 {
    if DIGITS == 1 {
        return digit;
    }
    let mut starts = digit & !(digit << 1);
    let mut full = digit;
    for k in 1..DIGITS {
        full &= digit << k;
    }
    let mut step = starts;
    while step != 0 {
        step = step << DIGITS & full;
        starts |= step;
    }
    starts
}

/// The offset of the first non-ASCII byte of the 16 from `i`, when there are 16 and one is.
#[inline(always)]
pub(super) fn first_non_ascii_of_16(text: &[u8], i: usize) -> Option<usize> {
    let bytes: &[u8; 16] = text.get(i..i + 16)?.try_into().expect("16 bytes");
    let high = u128::from_le_bytes(*bytes) & u128::from_le_bytes([0x80; 16]);
    (high != 0).then(|| high.trailing_zeros() as usize / 8)
}

/// The bits below `n` (`n <= 64`).
#[inline(always)]
pub(super) fn below(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Asserts that the splitter `pieces`, through its windows where it takes them, cuts random
/// ASCII text, rich in what the patterns treat specially, exactly where its scanning
/// `piece_end` alone does; and that both widths of masks give the same windows (the cuts
/// above take the wide ones where the CPU has them).
#[cfg(test)]
pub(super) fn assert_windows_scan_alike(name: &str, pieces: impl super::PieceEnds + WindowStarts) {
    use super::EndSink;
    use crate::test_rng::Lcg;
    use std::convert::Infallible;
    use std::ops::ControlFlow;
    struct Ends(Vec<usize>);
    impl EndSink<Infallible> for Ends {
        fn end(&mut self, end: usize) -> ControlFlow<Infallible> {
            self.0.push(end);
            ControlFlow::Continue(())
        }
    }
    let through_windows = |text: &[u8]| {
        let mut ends = Ends(Vec::new());
        let mut i = 0;
        while i < text.len() {
            let ControlFlow::Continue(next) = pieces.next_ends(text, i, &mut ends);
            i = next;
        }
        ends.0
    };
    let scanned = |text: &[u8]| {
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            i = pieces.piece_end(text, i);
            out.push(i);
        }
        out
    };
    let atoms: [&[u8]; 31] = [
        b"a", b"b", b"s", b"t", b"l", b"e", b"r", b"v", b"Z", b"S", b"L", b"7", b"12345", b" ",
        b"  ", b"\n", b"\r\n", b"\t", b"\x0b", b"/", b"//", b".", b"(", b"'", b"'s", b"'ll",
        b"'Re", b"\x00", b"\x1c", b"\x7f", b"'ve",
    ];
    let mut rng = Lcg(11);
    let mut windows = 0;
    for round in 0..200_000 {
        let n = 1 + rng.below(if round % 4 == 0 { 120 } else { 40 });
        let text: Vec<u8> = (0..n)
            .flat_map(|_| atoms[rng.below(atoms.len())].iter().copied())
            .collect();
        // SAFETY: the narrow masks need nothing past x86-64's SSE2.
        windows += usize::from(unsafe { Window::at::<false>(&text, 0) }.is_ok());
        let show = String::from_utf8_lossy(&text);
        if byte_classes::wide_available() {
            for i in 0..text.len() {
                // SAFETY: the CPU has AVX-512BW.
                let wide = unsafe { window_of_wide(&text, i, pieces) };
                assert_eq!(
                    window_of(&text, i, pieces),
                    wide,
                    "{name} {show:?} from {i}"
                );
            }
        }
        assert_eq!(through_windows(&text), scanned(&text), "{name} {show:?}");
    }
    // Most texts start a window: the comparison is not of scanning with itself.
    assert!(windows > 150_000, "{name}: {windows} windows");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safe_cut::is_safe_cut;

    #[test]
    fn fills_take_whole_runs() {
        assert_eq!(fill_right(0b0001_0010, 0b0111_0110), 0b0111_0110);
        assert_eq!(fill_right(0b0100_0000, 0b0111_0110), 0b0100_0000);
        assert_eq!(fill_left(0b0100_0000, 0b0111_0110), 0b0111_0000);
        assert_eq!(fill_left(0b0000_0100, 0b0111_0110), 0b0000_0110);
    }

    /// The window ends at the last safe cut in reach (or at the text's end), never past a
    /// non-ASCII byte, and is `None` only when there is no such cut or a non-ASCII byte
    /// comes within `MIN_ASCII` bytes. Cuts are those of the
    /// text from the window's start (a safe cut there is one of the whole text: the rule
    /// looks only at the bytes before the cut).
    #[test]
    fn window_ends_at_the_last_safe_cut_in_reach() {
        use crate::test_rng::Lcg;
        let atoms: [&[u8]; 12] = [
            b"a",
            b"Z",
            b"7",
            b" ",
            b"\n",
            b"/",
            b".",
            b"'",
            b"\t",
            b"\r",
            "é".as_bytes(),
            b"ab",
        ];
        let mut rng = Lcg(5);
        for _ in 0..20_000 {
            let text: Vec<u8> = (0..rng.below(90))
                .flat_map(|_| atoms[rng.below(atoms.len())].iter().copied())
                .collect();
            for i in 0..text.len() {
                let rest = &text[i..];
                let ascii_end = rest.iter().position(|&b| b >= 0x80).unwrap_or(rest.len());
                let want = if ascii_end < MIN_ASCII.min(rest.len()) {
                    None
                } else if rest.len() <= MAX_WINDOW && ascii_end == rest.len() {
                    Some(rest.len())
                } else {
                    (1..=MAX_WINDOW.min(ascii_end))
                        .rev()
                        .find(|&c| is_safe_cut(rest, c))
                };
                let show = String::from_utf8_lossy(&text);
                // SAFETY: the wide masks are asked for where the CPU has them.
                let got = unsafe { Window::at::<false>(&text, i) }.map(|w| w.len).ok();
                assert_eq!(got, want, "{show:?} from {i}");
                if byte_classes::wide_available() {
                    let got = unsafe { Window::at::<true>(&text, i) }.map(|w| w.len).ok();
                    assert_eq!(got, want, "wide: {show:?} from {i}");
                }
            }
        }
    }
}
