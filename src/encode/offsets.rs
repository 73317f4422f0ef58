//! Token offsets: where a special token sits after the ids before it, and byte spans as
//! Python-string character offsets.

use super::{Encoder, Span, SpecialPolicy};
use crate::special::Segment;
use crate::{Error, TokenId};

impl Encoder {
    /// Encodes text and gives each token's byte span `(start, end)` in `text`.
    pub fn encode_with_spans(
        &self,
        text: &[u8],
        policy: &SpecialPolicy,
    ) -> Result<(Vec<TokenId>, Vec<Span>), Error> {
        self.check_disallowed(text, policy)?;
        let mut ids = Vec::new();
        let mut spans = Vec::new();
        let base = text.as_ptr() as usize;
        let mut cache = self.cache.get_or_default().borrow_mut();
        self.for_each_segment(text, policy, |seg| match seg {
            Segment::Plain(plain) => self.splitter.for_each(plain, |pretoken| {
                let mut at = pretoken.as_ptr() as usize - base;
                let from = ids.len();
                self.encode_pretoken(pretoken, &mut cache, &mut ids);
                for &id in &ids[from..] {
                    let (s, e) = self.spans[id as usize];
                    let len = (e - s) as usize;
                    spans.push((at, at + len));
                    at += len;
                }
            }),
            Segment::Special(i) => {
                let start = spans.last().map_or(0, |s: &(usize, usize)| s.1);
                // Specials sit right after the previous token (or a plain run's end).
                let start = find_from(text, &self.specials[i].0, start);
                spans.push((start, start + self.specials[i].0.len()));
                ids.push(self.specials[i].1);
            }
        });
        Ok((ids, spans))
    }
}

/// The first position at or after `from` where `needle` occurs (it is known to occur).
fn find_from(text: &[u8], needle: &[u8], from: usize) -> usize {
    (from..=text.len() - needle.len())
        .find(|&i| text[i..].starts_with(needle))
        .unwrap_or(from)
}

/// Python-string offsets: the character index of each byte span's start and end, where a
/// token that starts or ends inside a multi-byte character gets that whole character.
pub fn char_spans(text: &[u8], spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // char_of[b] = index of the character that byte b belongs to; one pass over the text.
    let mut char_of = Vec::with_capacity(text.len() + 1);
    let mut c = 0usize;
    for (i, &b) in text.iter().enumerate() {
        // A UTF-8 continuation byte belongs to the character before it (invalid bytes
        // never reach here: Python strings are valid UTF-8 once surrogates are replaced).
        if i > 0 && (b & 0xC0) != 0x80 {
            c += 1;
        }
        char_of.push(c);
    }
    let n_chars = if text.is_empty() { 0 } else { c + 1 };
    spans
        .iter()
        .map(|&(s, e)| {
            if s >= e {
                let at = if s < text.len() { char_of[s] } else { n_chars };
                return (at, at);
            }
            (char_of[s], char_of[e - 1] + 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_spans_cover_multibyte_chars() {
        let text = "aé€".as_bytes(); // 1 + 2 + 3 bytes, 3 chars
        let spans = char_spans(text, &[(0, 1), (1, 3), (3, 4), (4, 6)]);
        assert_eq!(spans, vec![(0, 1), (1, 2), (2, 3), (2, 3)]);
    }
}
