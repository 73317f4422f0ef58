//! A streaming encoder: text fed in parts, ids out as soon as they can no longer change.
//! A custom pattern has no provable cut (see `cut`): its stream holds the text until
//! [`Stream::finish`].

use super::cut::is_safe_cut;
use super::{Encoder, SpecialPolicy};
use crate::{Error, TokenId};

/// A streaming encoder: feed text, get the ids that can no longer change. Holds only the text
/// after the last safe cut; never starts a thread.
#[derive(Debug, Default)]
pub struct Stream {
    buf: Vec<u8>,
    /// Positions below this were already searched for a cut without success.
    searched: usize,
}

impl Stream {
    /// Appends `chunk`; returns the ids of the text before the last safe cut.
    pub fn feed(
        &mut self,
        enc: &Encoder,
        chunk: &[u8],
        policy: &SpecialPolicy,
    ) -> Result<Vec<TokenId>, Error> {
        self.buf.extend_from_slice(chunk);
        // A cut needs max_special_len bytes after it, to see special tokens through it.
        let limit = self.buf.len().saturating_sub(enc.max_special_len() + 1);
        let mut cut = None;
        let mut c = limit;
        while c > self.searched.max(1) {
            if is_safe_cut(enc, &self.buf, c) {
                cut = Some(c);
                break;
            }
            c -= 1;
        }
        let Some(cut) = cut else {
            self.searched = self.searched.max(limit);
            return Ok(Vec::new());
        };
        let ids = enc.encode(&self.buf[..cut], policy)?;
        self.buf.drain(..cut);
        self.searched = limit - cut;
        Ok(ids)
    }

    /// Encodes what is left.
    pub fn finish(&mut self, enc: &Encoder, policy: &SpecialPolicy) -> Result<Vec<TokenId>, Error> {
        let ids = enc.encode(&self.buf, policy)?;
        self.buf.clear();
        self.searched = 0;
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::test_vocab::bytes_encoder;

    #[test]
    fn stream_equals_whole() {
        let enc = bytes_encoder("gpt2", &["<|x|>"]);
        let text = b"hello world\nthe end <|x|> of it  \n\nnext line\nlast".repeat(5);
        let policy = SpecialPolicy::all(1);
        let want = enc.encode(&text, &policy).unwrap();
        for size in [1, 3, 7, 64] {
            let mut s = Stream::default();
            let mut got = Vec::new();
            for c in text.chunks(size) {
                got.extend(s.feed(&enc, c, &policy).unwrap());
            }
            got.extend(s.finish(&enc, &policy).unwrap());
            assert_eq!(got, want, "parts of {size} bytes");
        }
    }
}
