//! SuperBPE's stage-2 pre-tokenizer (Liu et al. 2025), hand-written on UTF-8 bytes:
//!
//! ```text
//! \p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|[^\p{N}]+
//! ```
//!
//! Every character is a number or not, so the two alternatives tile the text: a run of
//! non-numbers is one piece, spaces and newlines included, and a run of `n` numbers is cut
//! into threes from the right. The lookahead lets the first piece of a run take only the
//! `n mod 3` numbers (three when that is 0) that leave a multiple of three after them, and
//! every later piece of the run then takes three. An invalid UTF-8 byte is not a number, so
//! it joins the run of non-numbers it is in.
//!
//! The regex decides the first piece of a run by reading the run to its end, and every
//! later piece by reading the rest of it again: quadratic, 5.7 s for a run of 40,000 digits
//! under fancy-regex (0.4 ms here). Here only a run's first piece reads the run; a piece
//! that starts right after a number is inside a run, where a multiple of three numbers
//! remains, so it takes three.

use super::chars::{ascii_run, ascii_run_outside, char_after, char_at, han_run, run_max, NUMBER};

/// The end of the piece that starts at `i` (`i < text.len()`), where `i` is 0 or the end of
/// the piece before: a start inside a run of numbers is taken to be where the split of the
/// whole text starts a piece (a multiple of three numbers from the run's end), as tiling
/// the text from its start makes it.
#[inline]
pub(super) fn piece_end(text: &[u8], i: usize) -> usize {
    let b = text[i];
    if b < 0x80 {
        if b.is_ascii_digit() {
            return numbers_end(text, i);
        }
    } else if char_at(text, i).0 & NUMBER != 0 {
        return numbers_end(text, i);
    }
    non_numbers_end(text, i)
}

/// `\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))` at `i` (a number).
#[inline]
fn numbers_end(text: &[u8], i: usize) -> usize {
    if number_ends_at(text, i) {
        return run_max(text, i, 3, |c| c & NUMBER != 0);
    }
    // The run's first piece: what is left of the run's length in threes, else three.
    let mut count = 0;
    let mut q = i;
    loop {
        let digits = ascii_run(text, q, b'0', b'9', false);
        count += digits - q;
        q = digits;
        match char_after(text, q) {
            Some((class, len)) if class & NUMBER != 0 => {
                count += 1;
                q += len;
            }
            _ => break,
        }
    }
    run_max(text, i, (count - 1) % 3 + 1, |c| c & NUMBER != 0)
}

/// Whether the character that ends at `i` (a character boundary) is a number. It starts at
/// the last byte before `i` that is not a continuation byte, when that byte begins a valid
/// character reaching `i`; otherwise the byte before `i` is an invalid byte of its own.
#[inline]
fn number_ends_at(text: &[u8], i: usize) -> bool {
    let Some(&last) = i.checked_sub(1).and_then(|p| text.get(p)) else {
        return false;
    };
    if last < 0x80 {
        return last.is_ascii_digit();
    }
    let lead = (i.saturating_sub(4)..i - 1)
        .rev()
        .find(|&s| text[s] & 0xC0 != 0x80);
    match lead {
        Some(s) if last & 0xC0 == 0x80 => {
            let (class, len) = char_at(text, s);
            s + len == i && class & NUMBER != 0
        }
        _ => false,
    }
}

/// `[^\p{N}]+` at `i` (not a number): ASCII eight bytes at a time, CJK ideographs (none a
/// number) three bytes at a time, any other character by its class.
#[inline]
fn non_numbers_end(text: &[u8], i: usize) -> usize {
    let mut q = i;
    loop {
        q = ascii_run_outside(text, q, b'0', b'9');
        q = han_run(text, q);
        match text.get(q) {
            None => return q,
            Some(b) if b.is_ascii_digit() => return q,
            Some(&b) if b < 0x80 => {}
            Some(_) => {
                let (class, len) = char_at(text, q);
                if class & NUMBER != 0 {
                    return q;
                }
                q += len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        crate::split::differential::pieces(text, piece_end)
    }

    #[test]
    fn numbers_go_in_threes_from_the_right() {
        assert_eq!(pieces("a 1 b"), ["a ", "1", " b"]);
        assert_eq!(pieces("12"), ["12"]);
        assert_eq!(pieces("1234"), ["1", "234"]);
        assert_eq!(pieces("12345"), ["12", "345"]);
        assert_eq!(pieces("123456"), ["123", "456"]);
        assert_eq!(pieces("x1234567y"), ["x", "1", "234", "567", "y"]);
    }

    #[test]
    fn other_numbers_count_as_digits_do() {
        // Fullwidth digits, a superscript, a Roman numeral, a circled number (Nd, No, Nl).
        assert_eq!(pieces("１２³Ⅻ①"), ["１２", "³Ⅻ①"]);
        assert_eq!(pieces("1²345 ①"), ["1²", "345", " ", "①"]);
    }

    #[test]
    fn a_number_ending_before_a_start_is_decoded_backwards() {
        assert!(number_ends_at("x²".as_bytes(), 3));
        assert!(number_ends_at("①".as_bytes(), 3));
        assert!(number_ends_at("\u{1d7d9}".as_bytes(), 4)); // 𝟙, four bytes
        assert!(!number_ends_at("é".as_bytes(), 2));
        assert!(!number_ends_at(b"", 0));
        // A continuation byte after a character that ends before it, and a cut-short one.
        assert!(!number_ends_at(b"\xc2\xb2\xb2", 3));
        assert!(!number_ends_at(b"\xe2\x91", 2));
        assert!(!number_ends_at(b"\x80\x80\x80\x80\x80", 5));
    }
}
