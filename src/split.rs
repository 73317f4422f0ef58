//! Pre-tokenization: cut text into the pieces BPE merges never cross.
//!
//! The built-in patterns (`gpt2`, `cl100k`, `o200k`) are tiktoken's exact regexes, run by
//! hand-written splitters on the bytes (`split/gpt2.rs`, ...: about 10x faster than the regex,
//! see `benches/split.rs`); differential tests (`split/differential.rs`) show they cut exactly
//! where fancy-regex does. `deepseek` is three regexes applied in turn, which no one regex
//! expresses: its pattern string is a marker that only its splitter runs. SuperBPE's
//! stage-2 regex (`superword`: numbers in threes from the right, everything else in one
//! piece) has a hand-written splitter too (`split/superword.rs`, 3.3-20x fancy-regex on the
//! shared corpora), picked by its name or its exact string. Any other pattern string is
//! compiled with fancy-regex, the engine tiktoken uses.
//!
//! Input is bytes. Invalid UTF-8 is never dropped: each invalid byte is one character of the
//! punctuation class (not a letter, number, mark or whitespace), which is how Python's
//! `regex` module sees the lone surrogates that `errors="surrogateescape"` makes of them.

mod byte_classes;
mod chars;
mod cl100k;
mod cl100k_window;
mod deepseek;
#[cfg(test)]
pub(crate) mod differential;
mod gpt2;
mod gpt2_window;
mod o200k;
mod o200k_window;
mod superword;
mod unicode_tables;
mod window;

pub use window::MAX_WINDOW;

use crate::safe_cut::CutRule;
use crate::Error;
use fancy_regex::Regex;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// GPT-2's pattern as tiktoken ships it for `gpt2`, `r50k_base` and `p50k_base`.
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// cl100k_base's pattern, as tiktoken ships it.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// Llama 3's pattern, as Meta's tokenizer.py has it (runs a cl100k-family splitter).
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen's pattern (Qwen, Qwen2, Qwen2.5, Qwen3): Llama 3's with single digits.
pub const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen3.5's pattern: Qwen2's with marks (`\p{M}`) among the letters.
pub const QWEN3_5_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

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

/// Mistral's Tekken pattern (`tekken_240718.json`, `tekken_240911.json`): o200k's without
/// the contractions and with single digits.
pub const TEKKEN_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    "|",
    r"\p{N}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// DeepSeek's pre-tokenizer, as its models' `tokenizer.json` has it: three isolated Splits,
/// each splitting every piece of the one before (`split/deepseek.rs`).
pub const DEEPSEEK_SPLITS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

/// The pattern string of [`DEEPSEEK_SPLITS`], which are not one regex: a marker, not a regex
/// (fancy-regex, Python's `regex` and Oniguruma all refuse `(?d`), so no regex path can take
/// it for one; only the hand-written splitter runs it.
pub const DEEPSEEK_PATTERN: &str = "(?deepseek)";

/// SuperBPE's stage-2 pattern (Liu et al. 2025), as bytepair trains it and saves it in
/// `tokenizer.json`: runs of numbers in threes from the right, everything else, spaces and
/// newlines included, in one piece.
pub const SUPERWORD_PATTERN: &str = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|[^\p{N}]+";

/// Maps a pattern name to its regex; any other string is returned as a custom regex.
pub fn resolve(pattern: &str) -> &str {
    match pattern {
        "gpt2" | "r50k" | "r50k_base" | "p50k" | "p50k_base" => GPT2_PATTERN,
        "cl100k" | "cl100k_base" => CL100K_PATTERN,
        "o200k" | "o200k_base" => O200K_PATTERN,
        "llama3" => LLAMA3_PATTERN,
        "qwen2" => QWEN2_PATTERN,
        "qwen3.5" => QWEN3_5_PATTERN,
        "tekken" => TEKKEN_PATTERN,
        "deepseek" => DEEPSEEK_PATTERN,
        "superword" => SUPERWORD_PATTERN,
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
    Llama3,
    Qwen2,
    Qwen35,
    O200k,
    Tekken,
    DeepSeek,
    Superword,
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
            LLAMA3_PATTERN => Engine::Llama3,
            QWEN2_PATTERN => Engine::Qwen2,
            QWEN3_5_PATTERN => Engine::Qwen35,
            O200K_PATTERN => Engine::O200k,
            TEKKEN_PATTERN => Engine::Tekken,
            DEEPSEEK_PATTERN => Engine::DeepSeek,
            SUPERWORD_PATTERN => Engine::Superword,
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
        if regex_src == DEEPSEEK_PATTERN {
            return Err(Error::InvalidPattern {
                pattern: pattern.to_string(),
                reason: "DeepSeek's pre-tokenizer is three splits, not one regex: only its \
                         hand-written splitter runs it"
                    .to_string(),
            });
        }
        let regex = Regex::new(regex_src).map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Splitter {
            pattern: regex_src.to_string(),
            engine: Engine::Regex(Box::new(regex)),
        })
    }

    /// The regex this splitter implements ([`DEEPSEEK_PATTERN`] for DeepSeek's splits).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether a hand-written splitter runs it.
    pub fn is_hand_written(&self) -> bool {
        !matches!(self.engine, Engine::Regex(_))
    }

    /// The rule for where `text` may be cut without changing its pieces
    /// ([`crate::safe_cut`]), or `None` when no cut is provably safe: a custom regex.
    pub fn cut_rule(&self) -> Option<CutRule> {
        match self.engine {
            Engine::Regex(_) => None,
            Engine::Superword => Some(CutRule::Superword),
            _ => Some(CutRule::BuiltIn),
        }
    }

    /// Calls `f` on each piece of `text`, in order. The pieces concatenate to `text` exactly.
    pub fn for_each<'a, F: FnMut(&'a [u8])>(&self, text: &'a [u8], mut f: F) {
        let _ = self.try_for_each(text, |p| {
            f(p);
            ControlFlow::<Infallible>::Continue(())
        });
    }

    /// [`Splitter::for_each`] that stops at the first piece for which `f` breaks: a long
    /// text can be abandoned midway (`encode_file` on Ctrl-C) instead of split to its end.
    #[inline(always)]
    pub fn try_for_each<'a, B>(
        &self,
        text: &'a [u8],
        f: impl FnMut(&'a [u8]) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        match &self.engine {
            Engine::Gpt2 => tile(text, gpt2_window::Gpt2Windows, f),
            Engine::Cl100k => tile(text, cl100k_window::CL100K, f),
            Engine::Llama3 => tile(text, cl100k_window::LLAMA3, f),
            Engine::Qwen2 => tile(text, cl100k_window::QWEN2, f),
            Engine::Qwen35 => tile(text, cl100k_window::QWEN3_5, f),
            Engine::O200k => tile(text, o200k_window::O200K, f),
            Engine::Tekken => tile(text, o200k_window::TEKKEN, f),
            Engine::DeepSeek => tile(text, deepseek::piece_end, f),
            Engine::Superword => tile(text, superword::piece_end, f),
            Engine::Regex(regex) => regex_for_each(regex, text, f),
        }
    }

    /// [`Splitter::try_for_each`] on text already known to be UTF-8, so a regex does not
    /// validate it again: validating reads the whole text before the first piece, which on
    /// a memory-mapped file maps all of it at once.
    pub fn try_for_each_str<'a, B>(
        &self,
        text: &'a str,
        mut f: impl FnMut(&'a [u8]) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        match &self.engine {
            Engine::Regex(regex) => regex_pieces(regex, text, |a, b| f(&text.as_bytes()[a..b])),
            _ => self.try_for_each(text.as_bytes(), f),
        }
    }

    /// Runs `body` with the hand-written splitter's `piece_end` (the end of the piece that
    /// starts at a given offset), or returns `None` for a regex. A loop written around it
    /// inlines its work per piece, which a closure passed to [`Splitter::for_each`] did not:
    /// the call per piece was 7% of o200k's instructions on English.
    #[inline(always)]
    pub fn with_piece_end<L: TileLoop>(&self, body: L) -> Option<L::Output> {
        match &self.engine {
            Engine::Gpt2 => Some(body.run(gpt2_window::Gpt2Windows)),
            Engine::Cl100k => Some(body.run(cl100k_window::CL100K)),
            Engine::Llama3 => Some(body.run(cl100k_window::LLAMA3)),
            Engine::Qwen2 => Some(body.run(cl100k_window::QWEN2)),
            Engine::Qwen35 => Some(body.run(cl100k_window::QWEN3_5)),
            Engine::O200k => Some(body.run(o200k_window::O200K)),
            Engine::Tekken => Some(body.run(o200k_window::TEKKEN)),
            Engine::DeepSeek => Some(body.run(deepseek::piece_end)),
            Engine::Superword => Some(body.run(superword::piece_end)),
            Engine::Regex(_) => None,
        }
    }

    /// The pieces of `text`, in order.
    pub fn split<'a>(&self, text: &'a [u8]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        self.for_each(text, |p| out.push(p));
        out
    }
}

/// A loop over pieces for [`Splitter::with_piece_end`]: generic over the splitter, so each
/// built-in splitter gets its own copy of the loop, with the work per piece inlined in it.
/// (`piece_end` itself stays a call in the extension; inlining it too ran 0.87-0.92x.)
pub trait TileLoop {
    type Output;
    fn run(self, pieces: impl PieceEnds) -> Self::Output;
}

/// A hand-written splitter as the loops over pieces see it: the end of the piece at an
/// offset, and, for those that have one, all the pieces of an ASCII window at once.
pub trait PieceEnds: Copy {
    /// The end of the piece that starts at `i` (`i < text.len()`).
    fn piece_end(self, text: &[u8], i: usize) -> usize;

    /// The window of text from `i` (a piece boundary), as the bytes where its pieces start
    /// (bit `k` for `i + k`; bit 0 set) and its length; or, to scan instead, the offset
    /// (at most `i + MAX_WINDOW + 1`) to scan pieces up to before trying a window again.
    #[inline(always)]
    fn window(self, _text: &[u8], i: usize) -> Result<(u64, usize), usize> {
        Err(i + 1)
    }

    /// Gives `sink` the end of each piece of one window from `start` (a piece boundary
    /// before the end of `text`), or of the pieces scanned where there is no window (at
    /// most `MAX_WINDOW + 1` ends in all); returns the last end. The loop every caller of a
    /// hand-written splitter runs.
    #[inline(always)]
    fn next_ends<B>(
        self,
        text: &[u8],
        start: usize,
        sink: &mut impl EndSink<B>,
    ) -> ControlFlow<B, usize> {
        match self.window(text, start) {
            Ok((starts, len)) => {
                let mut rest = starts & !1;
                while rest != 0 {
                    sink.end(start + rest.trailing_zeros() as usize)?;
                    rest &= rest - 1;
                }
                sink.end(start + len)?;
                ControlFlow::Continue(start + len)
            }
            Err(scan_to) => {
                let mut end = start;
                loop {
                    end = self.piece_end(text, end);
                    sink.end(end)?;
                    if end >= scan_to || end >= text.len() {
                        return ControlFlow::Continue(end);
                    }
                }
            }
        }
    }
}

/// What takes the ends of pieces from [`PieceEnds::next_ends`]: a trait rather than a
/// closure, whose call at each of the two places it is made was not inlined (16% of
/// encoding English under o200k went to that call).
pub trait EndSink<B> {
    fn end(&mut self, end: usize) -> ControlFlow<B>;
}

impl<F: Fn(&[u8], usize) -> usize + Copy> PieceEnds for F {
    #[inline(always)]
    fn piece_end(self, text: &[u8], i: usize) -> usize {
        self(text, i)
    }
}

/// Cuts `text` into the pieces `pieces` finds, one after another (a hand-written splitter
/// matches at every position, so the pieces tile the text).
#[inline(always)]
fn tile<'a, B>(
    text: &'a [u8],
    pieces: impl PieceEnds,
    f: impl FnMut(&'a [u8]) -> ControlFlow<B>,
) -> ControlFlow<B> {
    struct Pieces<'a, F> {
        text: &'a [u8],
        from: usize,
        f: F,
    }
    impl<'a, B, F: FnMut(&'a [u8]) -> ControlFlow<B>> EndSink<B> for Pieces<'a, F> {
        #[inline(always)]
        fn end(&mut self, end: usize) -> ControlFlow<B> {
            let piece = &self.text[self.from..end];
            self.from = end;
            (self.f)(piece)
        }
    }
    let mut sink = Pieces { text, from: 0, f };
    let mut start = 0;
    while start < text.len() {
        start = pieces.next_ends(text, start, &mut sink)?;
    }
    ControlFlow::Continue(())
}

/// Calls `f` on each piece `regex` cuts `text` into.
fn regex_for_each<'a, B>(
    regex: &Regex,
    text: &'a [u8],
    mut f: impl FnMut(&'a [u8]) -> ControlFlow<B>,
) -> ControlFlow<B> {
    match std::str::from_utf8(text) {
        Ok(s) => regex_pieces(regex, s, |a, b| f(&text[a..b])),
        Err(_) => {
            // Slow path: replace each invalid byte with a stand-in, split, map offsets back.
            let (s, stand_ins) = with_stand_ins(text);
            let mut at = StandIns::new(&stand_ins);
            regex_pieces(regex, &s, |a, b| {
                f(&text[at.text_offset(a)..at.text_offset(b)])
            })
        }
    }
}

fn regex_pieces<B>(
    regex: &Regex,
    s: &str,
    mut f: impl FnMut(usize, usize) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut pos = 0;
    for m in regex.find_iter(s) {
        // A regex that hits its backtrack limit yields Err: keep the rest as one piece so
        // no byte is lost.
        let Ok(m) = m else { break };
        if m.start() > pos {
            // Bytes no alternative matched: they stay a piece of their own.
            f(pos, m.start())?;
        }
        if m.end() > m.start() {
            f(m.start(), m.end())?;
        }
        pos = m.end();
    }
    if pos < s.len() {
        f(pos, s.len())?;
    }
    ControlFlow::Continue(())
}

/// Builds a `String` in which every invalid UTF-8 byte of `text` is [`INVALID_STAND_IN`], and
/// the offsets in it of the stand-ins, in order. Only the stand-ins are listed, not every
/// offset: a list of all offsets cost 8 bytes per byte of text (800 MB for a 100 MB file).
fn with_stand_ins(text: &[u8]) -> (String, Vec<usize>) {
    let mut s = String::with_capacity(text.len() + 8);
    let mut stand_ins = Vec::new();
    for chunk in text.utf8_chunks() {
        s.push_str(chunk.valid());
        // Each invalid byte becomes one stand-in character (4 bytes in `s`).
        for _ in chunk.invalid() {
            stand_ins.push(s.len());
            s.push(INVALID_STAND_IN);
        }
    }
    (s, stand_ins)
}

/// Maps offsets in the stand-in string back to `text`, for offsets that only grow (pieces
/// come in order): each stand-in before an offset is 4 bytes there and 1 byte in `text`.
struct StandIns<'a> {
    at: &'a [usize],
    passed: usize,
}

impl<'a> StandIns<'a> {
    fn new(at: &'a [usize]) -> Self {
        StandIns { at, passed: 0 }
    }

    /// The offset in `text` of offset `a` of the stand-in string (a char boundary there).
    fn text_offset(&mut self, a: usize) -> usize {
        while self.passed < self.at.len() && self.at[self.passed] < a {
            self.passed += 1;
        }
        a - self.passed * (INVALID_STAND_IN.len_utf8() - 1)
    }
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
        let s = Splitter::new(SUPERWORD_PATTERN).unwrap();
        assert!(matches!(s.engine, Engine::Superword));
        assert_eq!(s.pattern(), SUPERWORD_PATTERN);
        assert_eq!(s.cut_rule(), Some(CutRule::Superword));
        assert_eq!(
            Splitter::new("superword").unwrap().pattern(),
            SUPERWORD_PATTERN
        );
        // Written another way, it is a custom regex: no hand-written splitter, no cuts.
        let s = Splitter::new(r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|\P{N}+").unwrap();
        assert!(!s.is_hand_written());
        assert_eq!(s.cut_rule(), None);
    }

    #[test]
    fn bad_custom_pattern_names_itself() {
        let err = Splitter::new("(unclosed").unwrap_err().to_string();
        assert!(err.contains("(unclosed"), "{err}");
    }

    #[test]
    fn try_for_each_stops_where_told_and_str_splits_like_bytes() {
        for p in ["gpt2", "cl100k", "o200k", r"\S+|\s+"] {
            let s = Splitter::new(p).unwrap();
            let text = "one two  three\n四五 six";
            let all = s.split(text.as_bytes());
            let mut seen = Vec::new();
            let flow = s.try_for_each(text.as_bytes(), |piece| {
                seen.push(piece);
                if seen.len() == 3 {
                    ControlFlow::Break(seen.len())
                } else {
                    ControlFlow::Continue(())
                }
            });
            assert_eq!(flow, ControlFlow::Break(3), "{p}");
            assert_eq!(seen, all[..3], "{p}");
            let mut from_str = Vec::new();
            let _ = s.try_for_each_str(text, |piece| {
                from_str.push(piece);
                ControlFlow::<()>::Continue(())
            });
            assert_eq!(from_str, all, "{p}");
        }
    }

    #[test]
    fn a_regex_maps_pieces_back_across_invalid_bytes() {
        // Each invalid byte is one punctuation character: it joins the punctuation run.
        let s = Splitter::new(r"\p{L}+|[^\p{L}\s]+|\s+").unwrap();
        let got = s.split(b"ab\xff!\xfe cd\xe4\xb8 \xff");
        let want: Vec<&[u8]> = vec![b"ab", b"\xff!\xfe", b" ", b"cd", b"\xe4\xb8", b" ", b"\xff"];
        assert_eq!(got, want);
    }
}
