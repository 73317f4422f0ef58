//! Where the counter cuts its input into chunks: at safe cuts about `chunk_size` apart
//! ([`crate::safe_cut`]: the built-in patterns' rule, or the superword pattern's), and at
//! the starts of special tokens that no other occurrence straddles (the text between
//! special tokens is split on its own, so those hold for every pattern).

use super::Counter;
use std::ops::Range;

/// One contiguous span of one source (a file or a text) to count.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub(super) src: usize,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl Counter {
    #[cfg(test)]
    pub(super) fn cuts(&self, text: &[u8]) -> Vec<usize> {
        self.cuts_releasing(text, &mut |_, _| {})
    }

    /// Offsets where `text` may be cut, about `chunk_size` apart, ending with `text.len()`.
    /// Calls `release(start, end)` on each span it has finished probing, so a file's mapped
    /// pages can be dropped as planning goes: one probe per chunk, and the kernel maps a
    /// whole large folio around each (100 MB of input grew RSS by 40 MB).
    fn cuts_releasing(&self, text: &[u8], release: &mut dyn FnMut(usize, usize)) -> Vec<usize> {
        let mut cuts = Vec::with_capacity(text.len() / self.chunk_size + 1);
        let mut target = self.chunk_size;
        let mut released = 0;
        while target < text.len() {
            match self.next_cut(text, target) {
                Some(c) => {
                    cuts.push(c);
                    // Everything up to the next probe: the kernel maps a whole large
                    // folio around a probe (up to 2 MB on ext4), reaching past `c`.
                    let next = (c + self.chunk_size).min(text.len());
                    release(released, next);
                    released = next;
                    target = c + self.chunk_size;
                }
                None => break,
            }
        }
        cuts.push(text.len());
        release(released.min(text.len()), text.len());
        cuts
    }

    /// The first offset in `from..text.len()` where counting may cut `text`: a safe cut
    /// no special token straddles, or the start of a special token no other straddles.
    pub fn next_cut(&self, text: &[u8], from: usize) -> Option<usize> {
        let Some(rule) = self.cut_rule else {
            return self.next_special_cut(text, from, text.len());
        };
        // The first safe cut, then a special-token cut only if one starts before it:
        // searching for special tokens to the end of the text at every cut made planning
        // quadratic (and touched every page) when the tokens are rare or absent.
        let mut pos = from;
        let builtin_at = loop {
            match rule.next_safe_cut(text, pos) {
                Some(c) if self.straddled(text, c) => pos = c + 1,
                found => break found,
            }
        };
        let before = builtin_at.unwrap_or(text.len());
        self.next_special_cut(text, from, before).or(builtin_at)
    }

    /// The first start of a special token in `[from, before)` (and after 0) not strictly
    /// inside another occurrence.
    fn next_special_cut(&self, text: &[u8], from: usize, before: usize) -> Option<usize> {
        self.specials.next_clean_start(text, from.max(1), before)
    }

    /// Some special-token occurrence starts before `c` and ends after it.
    pub(super) fn straddled(&self, text: &[u8], c: usize) -> bool {
        self.specials.overlaps(text, c, c)
    }

    /// Cuts each source into spans and groups consecutive spans into chunks of about
    /// `chunk_size` bytes (many small texts share one chunk), each chunk a range of spans.
    /// `release(source, start, end)` is called on spans planning has finished probing.
    pub(super) fn plan(
        &self,
        sources: &[&[u8]],
        release: &dyn Fn(usize, usize, usize),
    ) -> (Vec<Span>, Vec<Range<usize>>) {
        let mut spans = Vec::new();
        for (i, text) in sources.iter().enumerate() {
            let mut start = 0;
            for c in self.cuts_releasing(text, &mut |a, b| release(i, a, b)) {
                if c > start {
                    spans.push(Span {
                        src: i,
                        start,
                        end: c,
                    });
                }
                start = c;
            }
        }
        let mut chunks = Vec::new();
        let (mut first, mut bytes) = (0, 0);
        for (i, s) in spans.iter().enumerate() {
            bytes += s.end - s.start;
            if bytes >= self.chunk_size {
                chunks.push(first..i + 1);
                first = i + 1;
                bytes = 0;
            }
        }
        if first < spans.len() {
            chunks.push(first..spans.len());
        }
        (spans, chunks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::tests::{chunked, serial};
    use crate::safe_cut::is_safe_cut;

    /// "a\n\n b" must count "\n\n" once: cutting between the newlines would count two "\n".
    #[test]
    fn cuts_avoid_whitespace_runs_and_special_tokens() {
        let c = Counter::new("gpt2", &["<|x|>", "x|><|y"], Some(1), Some(1)).unwrap();
        let text = b"a\n\n b <|x|><|y|> c.\nd";
        for cut in &c.cuts(text)[..c.cuts(text).len() - 1] {
            let special = text[*cut..].starts_with(b"<|x|>");
            assert!(is_safe_cut(text, *cut) || special, "bad cut at {cut}");
            assert!(!c.straddled(text, *cut));
        }
        assert_eq!(chunked(&c, text), serial(&c, text));
        assert_eq!(chunked(&c, text).get(b"\n\n"), 1);
    }
}
