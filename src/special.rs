//! Special tokens: found leftmost-longest, so `<|a|><|a|>` is two tokens and a longer token
//! that contains a shorter one wins where both match.

use aho_corasick::{AhoCorasick, MatchKind};

/// A piece of text cut by [`SpecialMatcher::for_each_segment`].
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
    ac: Option<AhoCorasick>,
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
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&tokens)
                    .expect("special tokens are few and short"),
            )
        };
        SpecialMatcher { tokens, ac }
    }

    /// The tokens, in the order given.
    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
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
}
