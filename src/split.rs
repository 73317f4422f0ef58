//! Pre-tokenization: cut text into the pieces BPE merges never cross.
//!
//! The built-in patterns (`gpt2`, `cl100k`, `o200k`) are tiktoken's exact regexes, run by
//! hand-written splitters on the bytes (`split/gpt2.rs`, ...: about 10x faster than the regex,
//! see `benches/split.rs`); differential tests (`split/differential.rs`) show they cut exactly
//! where fancy-regex does. Any other pattern string is compiled with fancy-regex, the engine
//! tiktoken uses.
//!
//! Input is bytes. Invalid UTF-8 is never dropped: each invalid byte is one character of the
//! punctuation class (not a letter, number, mark or whitespace), which is how Python's
//! `regex` module sees the lone surrogates that `errors="surrogateescape"` makes of them.

mod chars;
mod cl100k;
#[cfg(test)]
mod differential;
mod gpt2;
mod o200k;
mod unicode_tables;

use crate::Error;
use fancy_regex::Regex;

/// GPT-2's pattern as tiktoken ships it for `gpt2`, `r50k_base` and `p50k_base`.
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// cl100k_base's pattern, as tiktoken ships it.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// o200k_base's pattern, as tiktoken ships it.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// Maps a pattern name to its regex; any other string is returned as a custom regex.
pub fn resolve(pattern: &str) -> &str {
    match pattern {
        "gpt2" | "r50k" | "r50k_base" | "p50k" | "p50k_base" => GPT2_PATTERN,
        "cl100k" | "cl100k_base" => CL100K_PATTERN,
        "o200k" | "o200k_base" => O200K_PATTERN,
        other => other,
    }
}

/// A compiled pre-tokenizer. Immutable and `Sync`: build once, share across threads.
#[derive(Debug)]
pub struct Splitter {
    pattern: String,
    engine: Engine,
}

/// What runs a pattern: a hand-written splitter for a built-in regex, fancy-regex otherwise.
#[derive(Debug)]
enum Engine {
    Gpt2,
    Cl100k,
    O200k,
    Regex(Box<Regex>),
}

/// Stands in for an invalid UTF-8 byte when a regex runs: a noncharacter, so it is not a
/// letter, number, mark or whitespace, as a lone surrogate is not in Python's `regex`.
const INVALID_STAND_IN: char = '\u{10FFFF}';

impl Splitter {
    /// Compiles a pattern name (`gpt2`, `cl100k`, `o200k`, ...) or a custom regex. The
    /// built-in regexes, by name or spelled out exactly, get a hand-written splitter.
    pub fn new(pattern: &str) -> Result<Self, Error> {
        let engine = match resolve(pattern) {
            GPT2_PATTERN => Engine::Gpt2,
            CL100K_PATTERN => Engine::Cl100k,
            O200K_PATTERN => Engine::O200k,
            _ => return Self::with_regex(pattern),
        };
        Ok(Splitter {
            pattern: resolve(pattern).to_string(),
            engine,
        })
    }

    /// Compiles a pattern with fancy-regex even when it is a built-in one: the oracle the
    /// hand-written splitters are tested and benchmarked against.
    #[doc(hidden)]
    pub fn with_regex(pattern: &str) -> Result<Self, Error> {
        let regex_src = resolve(pattern);
        let regex = Regex::new(regex_src).map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Splitter {
            pattern: regex_src.to_string(),
            engine: Engine::Regex(Box::new(regex)),
        })
    }

    /// The regex this splitter implements.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Calls `f` on each piece of `text`, in order. The pieces concatenate to `text` exactly.
    pub fn for_each<'a, F: FnMut(&'a [u8])>(&self, text: &'a [u8], f: F) {
        match &self.engine {
            Engine::Gpt2 => tile(text, gpt2::piece_end, f),
            Engine::Cl100k => tile(text, cl100k::piece_end, f),
            Engine::O200k => tile(text, o200k::piece_end, f),
            Engine::Regex(regex) => regex_for_each(regex, text, f),
        }
    }

    /// The pieces of `text`, in order.
    pub fn split<'a>(&self, text: &'a [u8]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        self.for_each(text, |p| out.push(p));
        out
    }
}

/// Cuts `text` into the pieces `piece_end` finds, one after another (a hand-written splitter
/// matches at every position, so the pieces tile the text).
#[inline(always)]
fn tile<'a>(
    text: &'a [u8],
    piece_end: impl Fn(&[u8], usize) -> usize,
    mut f: impl FnMut(&'a [u8]),
) {
    let mut start = 0;
    while start < text.len() {
        let end = piece_end(text, start);
        f(&text[start..end]);
        start = end;
    }
}

/// Calls `f` on each piece `regex` cuts `text` into.
fn regex_for_each<'a>(regex: &Regex, text: &'a [u8], mut f: impl FnMut(&'a [u8])) {
    match std::str::from_utf8(text) {
        Ok(s) => regex_pieces(regex, s, |a, b| f(&text[a..b])),
        Err(_) => {
            // Slow path: replace each invalid byte with a stand-in, split, map offsets back.
            let (s, offsets) = with_stand_ins(text);
            regex_pieces(regex, &s, |a, b| f(&text[offsets[a]..offsets[b]]));
        }
    }
}

fn regex_pieces(regex: &Regex, s: &str, mut f: impl FnMut(usize, usize)) {
    let mut pos = 0;
    for m in regex.find_iter(s) {
        // A regex that hits its backtrack limit yields Err: keep the rest as one piece so
        // no byte is lost.
        let Ok(m) = m else { break };
        if m.start() > pos {
            // Bytes no alternative matched: they stay a piece of their own.
            f(pos, m.start());
        }
        if m.end() > m.start() {
            f(m.start(), m.end());
        }
        pos = m.end();
    }
    if pos < s.len() {
        f(pos, s.len());
    }
}

/// Builds a `String` in which every invalid UTF-8 byte of `text` is [`INVALID_STAND_IN`], and
/// the map from each of its byte offsets (and its end) to the offset in `text`.
fn with_stand_ins(text: &[u8]) -> (String, Vec<usize>) {
    let mut s = String::with_capacity(text.len() + 8);
    let mut offsets = Vec::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < text.len() {
        match std::str::from_utf8(&text[i..]) {
            Ok(valid) => {
                s.push_str(valid);
                offsets.extend(i..i + valid.len());
                i = text.len();
            }
            Err(e) => {
                let good = e.valid_up_to();
                s.push_str(std::str::from_utf8(&text[i..i + good]).expect("validated prefix"));
                offsets.extend(i..i + good);
                i += good;
                // One invalid byte becomes one stand-in character (4 bytes in `s`).
                s.push(INVALID_STAND_IN);
                offsets.extend(std::iter::repeat_n(i, INVALID_STAND_IN.len_utf8()));
                i += 1;
            }
        }
    }
    offsets.push(text.len());
    (s, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: &str, t: &[u8]) -> Vec<Vec<u8>> {
        Splitter::new(p)
            .unwrap()
            .split(t)
            .into_iter()
            .map(|x| x.to_vec())
            .collect()
    }

    #[test]
    fn gpt2_splits_contractions_and_spaces() {
        let got = pieces("gpt2", b"I'll pay  $1234.50!");
        let want: Vec<&[u8]> = vec![
            b"I", b"'ll", b" pay", b" ", b" $", b"1234", b".", b"50", b"!",
        ];
        assert_eq!(got, want.iter().map(|x| x.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn invalid_bytes_are_kept_and_act_as_punctuation() {
        let got = pieces("gpt2", b"a\xff\xfe b");
        let want: Vec<&[u8]> = vec![b"a", b"\xff\xfe", b" b"];
        assert_eq!(got, want.iter().map(|x| x.to_vec()).collect::<Vec<_>>());
    }

    fn strs(p: &str, t: &str) -> Vec<String> {
        pieces(p, t.as_bytes())
            .into_iter()
            .map(|x| String::from_utf8(x).unwrap())
            .collect()
    }

    #[test]
    fn trailing_whitespace_differs_between_cl100k_and_o200k() {
        // cl100k tries `\s++$` first; o200k tries `\s*[\r\n]+` first.
        assert_eq!(strs("cl100k", "a  \n  "), ["a", "  \n  "]);
        assert_eq!(strs("o200k", "a  \n  "), ["a", "  \n", "  "]);
        assert_eq!(strs("gpt2", "a  \n  b"), ["a", "  \n ", " b"]);
    }

    #[test]
    fn contractions_fold_case_in_cl100k_only() {
        // `(?i)s` also matches U+017F LATIN SMALL LETTER LONG S.
        assert_eq!(strs("cl100k", "'S'ſ"), ["'S", "'ſ"]);
        assert_eq!(strs("gpt2", "'S'ſ"), ["'", "S", "'", "ſ"]);
    }

    #[test]
    fn o200k_words_backtrack_like_the_regex() {
        // `[Lu Lt Lm Lo M]*[Ll Lm Lo M]+`: with no lowercase after the run, the regex gives back
        // characters until the last one in both classes, so `ʰA` is cut after `ʰ`.
        assert_eq!(strs("o200k", "ʰA"), ["ʰ", "A"]);
        assert_eq!(strs("o200k", "\u{301}A"), ["\u{301}", "A"]);
        assert_eq!(strs("o200k", "HTMLParser's"), ["HTMLParser's"]);
        assert_eq!(strs("o200k", "helloWORLD"), ["hello", "WORLD"]);
    }

    #[test]
    fn built_in_regex_spelled_out_gets_the_hand_written_splitter() {
        let s = Splitter::new(CL100K_PATTERN).unwrap();
        assert!(matches!(s.engine, Engine::Cl100k));
        assert_eq!(s.pattern(), CL100K_PATTERN);
    }

    #[test]
    fn bad_custom_pattern_names_itself() {
        let err = Splitter::new("(unclosed").unwrap_err().to_string();
        assert!(err.contains("(unclosed"), "{err}");
    }
}
