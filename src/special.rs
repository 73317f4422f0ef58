//! Special tokens: found leftmost-longest, so `<|a|><|a|>` is two tokens and a longer token
//! that contains a shorter one wins where both match. The same matcher also lists every
//! occurrence, overlapping ones included (to refuse a disallowed token wherever it occurs),
//! and tells whether an occurrence overlaps a range of bytes (so a cut never splits one).

use aho_corasick::{AhoCorasick, MatchKind};
use std::sync::OnceLock;

/// A part of text cut by [`SpecialMatcher::for_each_segment`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Ordinary text between special tokens.
    Plain(&'a [u8]),
    /// The special token with this index into [`SpecialMatcher::tokens`].
    Special(usize),
}

/// Finds special tokens in text. Immutable and `Sync`.
#[derive(Debug, Clone)]
pub struct SpecialMatcher {
    tokens: Vec<Vec<u8>>,
    /// Leftmost-longest, for cutting text into segments.
    ac: Option<AhoCorasick>,
    /// Every occurrence, overlapping ones included; built at its first use, so a matcher
    /// that only cuts segments (the counter's, a policy's subset) never builds it.
    any: OnceLock<AhoCorasick>,
    max_len: usize,
}

impl SpecialMatcher {
    /// Builds a matcher over `tokens` (empty strings are ignored).
    pub fn new<T: AsRef<[u8]>>(tokens: &[T]) -> Self {
        let tokens: Vec<Vec<u8>> = tokens
            .iter()
            .map(|t| t.as_ref().to_vec())
            .filter(|t| !t.is_empty())
            .collect();
        let ac = if tokens.is_empty() {
            None
        } else {
            Some(automaton(&tokens, MatchKind::LeftmostLongest))
        };
        let max_len = tokens.iter().map(Vec::len).max().unwrap_or(0);
        SpecialMatcher {
            tokens,
            ac,
            any: OnceLock::new(),
            max_len,
        }
    }

    /// The tokens, in the order given.
    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The longest token, in bytes (0 when there are none).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Yields the next match at or after `from` as `(start, end, index into tokens)`.
    pub fn find_at(&self, text: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        let ac = self.ac.as_ref()?;
        let input = aho_corasick::Input::new(text).span(from..text.len());
        ac.find(input)
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
    }

    /// Cuts `text` into plain runs and special tokens, in order. Empty plain runs are skipped.
    pub fn for_each_segment<'a>(&self, text: &'a [u8], mut f: impl FnMut(Segment<'a>)) {
        let mut pos = 0;
        while let Some((s, e, idx)) = self.find_at(text, pos) {
            if s > pos {
                f(Segment::Plain(&text[pos..s]));
            }
            f(Segment::Special(idx));
            pos = e;
        }
        if pos < text.len() {
            f(Segment::Plain(&text[pos..]));
        }
    }

    /// Every occurrence of every token as `(start, end, index into tokens)`, overlapping
    /// ones included, in the order of their ends.
    pub fn occurrences<'a>(
        &'a self,
        text: &'a [u8],
    ) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
        let any = (!self.tokens.is_empty()).then(|| {
            self.any
                .get_or_init(|| automaton(&self.tokens, MatchKind::Standard))
        });
        any.into_iter().flat_map(move |ac| {
            ac.find_overlapping_iter(text)
                .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
        })
    }

    /// The first start in `from..before` of an occurrence that no other occurrence
    /// straddles: where text may be cut at a special token without splitting another one.
    pub fn next_clean_start(&self, text: &[u8], mut from: usize, before: usize) -> Option<usize> {
        // An occurrence starting before `before` ends before `end`: search no further.
        let end = (before + self.max_len).min(text.len());
        while from < before {
            let (s, _, _) = self.find_at(&text[..end], from)?;
            if s >= before {
                return None;
            }
            if !self.overlaps(text, s, s) {
                return Some(s);
            }
            from = s + 1;
        }
        None
    }

    /// Whether an occurrence of a token shares a byte with `text[from..to]`, or, for
    /// `from == to`, straddles that offset (starts before it and ends after it). Looks only
    /// at the bytes within [`SpecialMatcher::max_len`] of the range.
    pub fn overlaps(&self, text: &[u8], from: usize, to: usize) -> bool {
        let lo = from.saturating_sub(self.max_len);
        let hi = (to + self.max_len).min(text.len());
        if lo >= hi {
            return false;
        }
        self.occurrences(&text[lo..hi])
            .any(|(s, e, _)| lo + s < to && lo + e > from)
    }
}

fn automaton(tokens: &[Vec<u8>], kind: MatchKind) -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(kind)
        .build(tokens)
        .expect("special tokens are few and short")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_wins_and_adjacent_tokens_are_separate() {
        let m = SpecialMatcher::new(&["<|a|>", "<|a|><|b|>"]);
        let mut seen = Vec::new();
        m.for_each_segment(b"x<|a|><|b|><|a|>y", |seg| match seg {
            Segment::Plain(p) => seen.push(format!("p:{}", String::from_utf8_lossy(p))),
            Segment::Special(i) => seen.push(format!("s:{i}")),
        });
        assert_eq!(seen, vec!["p:x", "s:1", "s:0", "p:y"]);
    }

    #[test]
    fn occurrences_include_overlapping_ones() {
        let m = SpecialMatcher::new(&["<s>", "<s><s>"]);
        let got: Vec<_> = m.occurrences(b"x<s><s>").collect();
        assert_eq!(got, vec![(1, 4, 0), (1, 7, 1), (4, 7, 0)]);
        assert_eq!(SpecialMatcher::new(&[""; 0]).occurrences(b"<s>").count(), 0);
    }

    #[test]
    fn overlaps_a_range_or_straddles_an_offset() {
        let m = SpecialMatcher::new(&["<|x|>"]);
        let t = b"ab<|x|>cd";
        // The token is bytes 2..7.
        assert!(m.overlaps(t, 6, 8) && m.overlaps(t, 0, 3) && m.overlaps(t, 3, 3));
        assert!(!m.overlaps(t, 7, 9) && !m.overlaps(t, 0, 2));
        // An offset at either edge of the token does not straddle it.
        assert!(!m.overlaps(t, 2, 2) && !m.overlaps(t, 7, 7));
        assert!(!SpecialMatcher::new(&[""; 0]).overlaps(t, 3, 3));
    }
}
