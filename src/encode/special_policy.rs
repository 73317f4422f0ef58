//! Which special tokens are encoded as specials, which raise, which are plain text.

/// Which special tokens are encoded as specials (`allowed`) and which raise (`disallowed`);
/// the others are plain text. Indexed like
/// [`Encoder::special_tokens`](super::Encoder::special_tokens).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecialPolicy {
    pub allowed: Vec<bool>,
    pub disallowed: Vec<bool>,
}

impl SpecialPolicy {
    /// All special tokens allowed.
    pub fn all(n: usize) -> Self {
        SpecialPolicy {
            allowed: vec![true; n],
            disallowed: vec![false; n],
        }
    }
    /// All special tokens are plain text.
    pub fn none(n: usize) -> Self {
        SpecialPolicy {
            allowed: vec![false; n],
            disallowed: vec![false; n],
        }
    }
    pub(super) fn any_allowed(&self) -> bool {
        self.allowed.iter().any(|&a| a)
    }
    pub(super) fn any_disallowed(&self) -> bool {
        self.disallowed.iter().any(|&d| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Encoder;
    use crate::{Error, TokenId};

    #[test]
    fn specials_policy() {
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        vocab.push((256, b"ab".to_vec()));
        let enc = Encoder::new(
            vocab,
            Some(&[(b"a".to_vec(), b"b".to_vec())]),
            vec![(b"<s>".to_vec(), 300), (b"<s><s>".to_vec(), 301)],
            "gpt2",
        )
        .unwrap();
        let all = SpecialPolicy::all(2);
        assert_eq!(
            enc.encode(b"ab<s><s><s>", &all).unwrap(),
            vec![256, 301, 300]
        );
        let strict = SpecialPolicy {
            allowed: vec![false, false],
            disallowed: vec![false, true],
        };
        let err = enc.encode(b"x<s><s>", &strict).unwrap_err();
        assert_eq!(
            err,
            Error::DisallowedSpecial {
                token: "<s><s>".into()
            }
        );
        assert_eq!(
            enc.encode(b"x<s>", &strict).unwrap(),
            enc.encode_ordinary(b"x<s>")
        );
        assert_eq!(enc.decode_bytes(&[256, 301]).unwrap(), b"ab<s><s>");
        assert_eq!(enc.decode_bytes(&[299]), Err(Error::UnknownId { id: 299 }));
    }
}
