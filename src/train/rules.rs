//! [`Rules`]: the compat modes of the trainer (ties, reuse, stopping, pair lengths).

use super::symbols::ID_KEY;
use crate::Error;

/// How ties are broken, what a merge makes, when training stops and which pairs count.
/// `reference.py` (`train_from_counts`) states the same rules for each `compat` mode.
#[derive(Clone, Debug)]
pub struct Rules {
    /// Only a pair with count >= this is merged (0 is treated as 1).
    pub min_frequency: u64,
    /// `None`: ties go to the greater `(bytes(left), bytes(right))` (CS336). `Some(ids)`:
    /// ties go to the smaller `(id(left), id(right))`, where `ids[s]` is start symbol s's
    /// id (the 256 bytes, then [`train_encoded`]'s tokens) and each new token takes the
    /// next id after the largest so far (HuggingFace's `BpeTrainer`, rustbpe).
    pub ids: Option<Vec<u64>>,
    /// A merge whose bytes already exist yields that token (CS336, HuggingFace); `false`:
    /// every merge is a new token, even with the bytes of an existing one (rustbpe).
    pub reuse: bool,
    /// Stop after this many new tokens rather than this many merges: HuggingFace fills its
    /// vocab, and a merge that rebuilds an existing token adds none.
    pub count_tokens: bool,
    /// HuggingFace's `max_token_length`: a pair counts only if its two bytes lengths sum
    /// to less than this, or both are single bytes (HF counts every initial pair).
    pub max_token_length: Option<usize>,
}

impl Rules {
    /// CS336's rules (bytepair's default).
    pub fn cs336(min_frequency: u64) -> Self {
        Rules {
            min_frequency,
            ids: None,
            reuse: true,
            count_tokens: false,
            max_token_length: None,
        }
    }
}

pub(super) fn check_ids(rules: &Rules, tokens: usize) -> Result<(), Error> {
    match &rules.ids {
        Some(ids) if ids.len() != 256 + tokens => Err(Error::InvalidVocab {
            reason: format!(
                "{} ids for {} start symbols: give one per byte and per token",
                ids.len(),
                256 + tokens
            ),
        }),
        Some(ids) if ids.iter().any(|&id| id >= ID_KEY) => Err(Error::InvalidVocab {
            reason: format!(
                "ids must be below 2^56, got {}",
                ids.iter().max().unwrap_or(&0)
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::train::tests::pairs;
    use crate::train::{train_encoded, train_with, Merge, Stop};

    pub(in crate::train) fn by_ids(reuse: bool, count_tokens: bool, tokens: usize) -> Rules {
        Rules {
            min_frequency: 1,
            ids: Some((0..256 + tokens as u64).collect()),
            reuse,
            count_tokens,
            max_token_length: None,
        }
    }

    fn strings(merges: &[Merge]) -> Vec<(String, String)> {
        merges
            .iter()
            .map(|(a, b)| {
                (
                    String::from_utf8_lossy(a).into_owned(),
                    String::from_utf8_lossy(b).into_owned(),
                )
            })
            .collect()
    }

    /// Ties by ids go to the smaller pair: (a, b) = (97, 98) before (b, a) = (98, 97),
    /// where bytes order them the other way.
    #[test]
    pub(super) fn ties_by_ids_prefer_smaller_ids() {
        let pretokens: Vec<(&[u8], u64)> = vec![(b"ab", 3), (b"ba", 3)];
        let (m, _) = train_with(
            pretokens.iter().map(|(w, c)| (*w, *c)),
            2,
            &by_ids(true, false, 0),
            &mut |_, _| true,
        )
        .unwrap();
        assert_eq!(strings(&m), pairs(&[("a", "b"), ("b", "a")]));
        // Larger ids for a smaller byte: give b the id 0, and (b, a) wins.
        let mut rules = by_ids(true, false, 0);
        rules.ids.as_mut().unwrap().swap(0, b'b' as usize);
        let (m, _) = train_with(
            pretokens.iter().map(|(w, c)| (*w, *c)),
            1,
            &rules,
            &mut |_, _| true,
        )
        .unwrap();
        assert_eq!(strings(&m), pairs(&[("b", "a")]));
    }

    /// Start token "ab" (256) in [ab, c] x2, and [a, b, c] x3. (a, b) = 3 ties (b, c) = 3
    /// and has the smaller ids. Reusing, it rebuilds 256 and (ab, c) = 5 is one merge;
    /// rustbpe's way it is a new token 257, so (257, c) = 3 and (256, c) = 2 are two.
    #[test]
    pub(super) fn a_rebuilt_token_is_reused_or_new() {
        let pretokens = || vec![(vec![256, b'c' as u32], 2), (vec![97, 98, 99], 3)];
        let run = |rules: &Rules| {
            let (m, stop) =
                train_encoded(vec![b"ab".to_vec()], pretokens(), 10, rules, &mut |_, _| {
                    true
                })
                .unwrap();
            assert_eq!(stop, Stop::NoPairs);
            strings(&m)
        };
        assert_eq!(
            run(&by_ids(true, false, 1)),
            pairs(&[("a", "b"), ("ab", "c")])
        );
        assert_eq!(
            run(&by_ids(false, false, 1)),
            pairs(&[("a", "b"), ("ab", "c"), ("ab", "c")])
        );
    }

    /// Counting new tokens, a merge that rebuilds a start token does not count.
    #[test]
    pub(super) fn count_tokens_skips_rebuilt_tokens() {
        let pretokens = || vec![(vec![97, 98], 3), (vec![99, 100], 1)];
        let run = |count_tokens| {
            let rules = by_ids(true, count_tokens, 1);
            let (m, _) =
                train_encoded(vec![b"ab".to_vec()], pretokens(), 1, &rules, &mut |_, _| {
                    true
                })
                .unwrap();
            strings(&m)
        };
        assert_eq!(run(false), pairs(&[("a", "b")]));
        assert_eq!(run(true), pairs(&[("a", "b"), ("c", "d")]));
    }

    /// HF's max_token_length 3: a pair counts only if shorter than 3 bytes (or two single
    /// bytes). "abcd": (a, b) first (smallest ids); (ab, c) is 3 bytes, so (c, d); then
    /// (ab, cd) is 4: nothing is left.
    #[test]
    pub(super) fn max_token_length_leaves_long_pairs_uncounted() {
        let mut rules = by_ids(true, true, 0);
        rules.max_token_length = Some(3);
        let pretokens: Vec<(&[u8], u64)> = vec![(b"abcd", 5)];
        let (m, stop) = train_with(
            pretokens.iter().map(|(w, c)| (*w, *c)),
            10,
            &rules,
            &mut |_, _| true,
        )
        .unwrap();
        assert_eq!(strings(&m), pairs(&[("a", "b"), ("c", "d")]));
        assert_eq!(stop, Stop::NoPairs);
    }
}
