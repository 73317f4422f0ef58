//! The pair table of a rank table (tiktoken's rule), and its canonical merges.

use super::Encoder;
use crate::TokenId;
use rayon::prelude::*;

impl Encoder {
    /// The rank-mode pair table. tiktoken's rule is BPE over the *full* table: every split
    /// `(a, b)` of every token `t = a + b` where `a` and `b` are tokens, with priority
    /// rank(t). Only one split per token is ever merged, its *canonical* one: the last merge
    /// of full-table BPE on `t`'s bytes alone. When `(a', b')` merges into `t` inside a
    /// longer pre-token, no part ever crossed `t`'s edges, so the merges inside `t` ran as in
    /// BPE of `t` alone (each was the lowest, leftmost pair inside `t`); that run ends in
    /// `(a', b')`. So BPE over the canonical splits equals BPE over the full table, and the
    /// table is 6x smaller for o200k (1.2 M -> 0.2 M pairs, cache-friendly).
    ///
    /// Full-table BPE on `t` before its last merge only forms tokens shorter than `t`, whose
    /// canonical splits are known when tokens are taken shortest first. The parts may have
    /// higher ranks than `t`: extended vocabularies have them (Qwen3.5's `いっぱい`, rank
    /// 206716, is `いっぱ` (247989) + `い`), so taking tokens in rank order would miss them.
    /// A token whose BPE ends in more than two parts is unreachable: no merge makes it, in
    /// any pre-token; only a pre-token equal to it is it (the whole-token rule).
    /// Returns, for each vocab entry, its canonical split and rank if it has one.
    pub(super) fn build_rank_table(
        &mut self,
        vocab: &[(TokenId, Vec<u8>)],
    ) -> Vec<Option<(TokenId, TokenId, u32)>> {
        let mut splits = vec![None; vocab.len()];
        // (length, id, entry) of each multi-byte token, shortest first (ties by id): 12 bytes
        // an entry, where the bytes' slice too made this o200k's largest table while built.
        let mut order: Vec<(u32, TokenId, u32)> = Vec::with_capacity(vocab.len());
        order.extend(
            vocab
                .iter()
                .enumerate()
                .filter(|(_, (_, t))| t.len() > 1)
                .map(|(i, (id, t))| (t.len() as u32, *id, i as u32)),
        );
        order.sort_unstable();
        // The tokens of one length on all cores: BPE of a token forms only shorter ones, so
        // none of them needs another's split (on 2 cores Qwen3.5's encoder builds in
        // 0.16-0.18 s instead of 0.22-0.24, o200k's in 0.11-0.14 instead of 0.17-0.19).
        for group in order.chunk_by(|x, y| x.0 == y.0) {
            let this = &*self;
            let found: Vec<Option<(TokenId, TokenId)>> = group
                .par_iter()
                .map_init(Vec::new, |parts, &(_, _, i)| {
                    parts.clear();
                    this.bpe(&vocab[i as usize].1, parts);
                    // Fewer than two parts cannot happen (the token is not in the table yet).
                    match parts[..] {
                        [a, b] => Some((a, b)),
                        _ => None,
                    }
                })
                .collect();
            for (&(_, id, i), found) in group.iter().zip(found) {
                let Some((a, b)) = found else { continue };
                let t = &vocab[i as usize].1;
                self.pairs.insert_first(a, b, (id, id));
                if t.len() == 2 {
                    self.byte_pairs[(t[0] as usize) << 8 | t[1] as usize] = (id, id);
                }
                splits[i as usize] = Some((a, b, id));
            }
        }
        let mut merges: Vec<(TokenId, TokenId, TokenId)> = splits
            .iter()
            .flatten()
            .map(|&(a, b, id)| (id, a, b))
            .collect();
        merges.sort_unstable();
        self.rank_merges = merges.into_iter().map(|(_, a, b)| (a, b)).collect();
        splits
    }
}

#[cfg(test)]
mod tests {
    use crate::encode::Encoder;
    use crate::test_rng::Lcg;
    use crate::TokenId;
    use rustc_hash::FxHashMap;

    #[test]
    fn rank_mode_merges_lowest_concatenation() {
        // Ranks: bytes 0..255, then "ab" 256, "bc" 257, "abc" 258.
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        vocab.extend([
            (256, b"ab".to_vec()),
            (257, b"bc".to_vec()),
            (258, b"abc".to_vec()),
        ]);
        let enc = Encoder::new(vocab, None, vec![], r"\S+|\s+").unwrap();
        assert_eq!(enc.encode_ordinary(b"abc"), vec![258]);
        // a b c b c: ab (256) first, then the second bc (257), then ab+c (258).
        assert_eq!(enc.encode_ordinary(b"abcbc"), vec![258, 257]);
        let merges = enc.merges_from_ranks();
        let want: Vec<(&[u8], &[u8])> = vec![(b"a", b"b"), (b"b", b"c"), (b"ab", b"c")];
        assert_eq!(merges, want);
    }

    #[test]
    fn rank_mode_builds_a_token_from_a_later_one() {
        // "abc" ranks below "ab": an extended vocab (Qwen3.5's いっぱい is いっぱ + い, the
        // part added later). tiktoken merges "ab" (257) when nothing lower is left, then
        // "ab" + "c" (256). Expected ids from tiktoken on the same ranks.
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        vocab.extend([(256, b"abc".to_vec()), (257, b"ab".to_vec())]);
        let enc = Encoder::new(vocab, None, vec![], r"\S+|\s+").unwrap();
        assert_eq!(enc.encode_ordinary(b"abc"), vec![256]);
        assert_eq!(enc.encode_ordinary(b"abcd"), vec![256, 100]);
        let want: Vec<(&[u8], &[u8])> = vec![(b"ab", b"c"), (b"a", b"b")];
        assert_eq!(enc.merges_from_ranks(), want);
    }

    #[test]
    fn rank_mode_takes_a_whole_token_even_if_unreachable() {
        // No pair of "xyz" is a token: no merge builds it, only a pre-token equal to it
        // (tiktoken: "xyz" -> [256], "xyzw" -> the four bytes).
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        vocab.push((256, b"xyz".to_vec()));
        let enc = Encoder::new(vocab.clone(), None, vec![], r"\S+|\s+").unwrap();
        assert_eq!(enc.encode_ordinary(b"xyz"), vec![256]);
        assert_eq!(enc.encode_ordinary(b"xyzw"), vec![120, 121, 122, 119]);
        assert!(enc.merges_from_ranks().is_empty());
        // An encoder of text keeps only the token BPE does not rebuild.
        assert!(enc.whole.is_empty() && enc.whole_long.is_empty());
        assert_eq!(enc.unbuilt.len(), 1);
        // An encoder of pieces holds every token BPE rebuilds, the bytes, not this one: a
        // look-up before BPE gives only those.
        let pieces = Encoder::for_pieces(vocab, None).unwrap();
        assert_eq!(pieces.whole.len(), 256);
        let (mut looked_up, mut bpe) = (Vec::new(), Vec::new());
        pieces.bpe_looked_up(b"xyz", &mut looked_up);
        pieces.bpe(b"xyz", &mut bpe);
        assert_eq!((looked_up, bpe), (vec![120, 121, 122], vec![120, 121, 122]));
    }

    /// tiktoken's algorithm as it is written: merge the adjacent pair whose concatenation
    /// has the lowest rank, leftmost on ties, until none is a token.
    fn tiktoken_bpe(ranks: &FxHashMap<Vec<u8>, TokenId>, pretoken: &[u8]) -> Vec<TokenId> {
        if let Some(&id) = ranks.get(pretoken) {
            return vec![id];
        }
        let mut parts: Vec<Vec<u8>> = pretoken.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| {
                    ranks
                        .get(&[&parts[i][..], &parts[i + 1][..]].concat())
                        .map(|&r| (r, i))
                })
                .min();
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| ranks[p]).collect()
    }

    #[test]
    fn rank_mode_equals_tiktokens_algorithm_on_extended_vocabularies() {
        // Random rank tables over a 4-letter alphabet: each new token joins two or three
        // earlier ones (or letters), then the added tokens' ranks are shuffled, so a token
        // can be built from a later one and reached in several ways.
        let letters = b"abcd";
        let mut rng = Lcg(7);
        for round in 0..300 {
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            let grow = 10 + rng.below(60);
            while tokens.len() < 256 + grow {
                let mut t = Vec::new();
                for _ in 0..2 + rng.below(2) {
                    let added = tokens.len() - 256;
                    if added == 0 || rng.below(3) == 0 {
                        t.push(letters[rng.below(4)]);
                    } else {
                        t.extend_from_slice(&tokens[256 + rng.below(added)].clone());
                    }
                }
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
            for i in (257..tokens.len()).rev() {
                let j = 256 + rng.below(i - 255);
                tokens.swap(i, j);
            }
            let vocab: Vec<(TokenId, Vec<u8>)> = (0..).zip(tokens).collect();
            let ranks: FxHashMap<Vec<u8>, TokenId> =
                vocab.iter().map(|(i, t)| (t.clone(), *i)).collect();
            let enc = Encoder::new(vocab, None, vec![], r"\S+|\s+").unwrap();
            for _ in 0..30 {
                let word: Vec<u8> = (0..1 + rng.below(40))
                    .map(|_| letters[rng.below(4)])
                    .collect();
                assert_eq!(
                    enc.encode_ordinary(&word),
                    tiktoken_bpe(&ranks, &word),
                    "round {round}: {}",
                    String::from_utf8_lossy(&word)
                );
            }
        }
    }
}
