//! Small vocabularies the encoder's tests build encoders from.

use super::pretoken_cache::PretokenCache;
use super::Encoder;
use crate::TokenId;

pub(super) fn bytes_vocab() -> Vec<(TokenId, Vec<u8>)> {
    // Deliberately not identity: byte b gets id 255 - b.
    (0..256u32).map(|b| (255 - b, vec![b as u8])).collect()
}

pub(super) fn merges_encoder(merges: &[(&str, &str)], extra: &[(TokenId, &str)]) -> Encoder {
    let mut vocab = bytes_vocab();
    for (id, t) in extra {
        vocab.push((*id, t.as_bytes().to_vec()));
    }
    let merges: Vec<(Vec<u8>, Vec<u8>)> = merges
        .iter()
        .map(|(a, b)| (a.as_bytes().to_vec(), b.as_bytes().to_vec()))
        .collect();
    Encoder::new(vocab, Some(&merges), vec![], r"\S+|\s+").unwrap()
}

/// [`bytes_vocab`] and `merges` of byte strings (not always whole characters), the i-th
/// merge's token at id 300 + i.
pub(super) fn byte_merges_encoder(merges: &[(&[u8], &[u8])]) -> Encoder {
    let merges: Vec<(Vec<u8>, Vec<u8>)> = merges
        .iter()
        .map(|(x, y)| (x.to_vec(), y.to_vec()))
        .collect();
    let mut vocab = bytes_vocab();
    for (i, (x, y)) in merges.iter().enumerate() {
        vocab.push((300 + i as TokenId, [&x[..], &y[..]].concat()));
    }
    Encoder::new(vocab, Some(&merges), vec![], r"\S+|\s+").unwrap()
}

/// Single bytes as ids 0..255, no merges, and `specials` as ids from 1000.
pub(super) fn bytes_encoder(pattern: &str, specials: &[&str]) -> Encoder {
    let vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
    let specials = specials
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_bytes().to_vec(), 1000 + i as TokenId))
        .collect();
    Encoder::new(vocab, Some(&[]), specials, pattern).unwrap()
}

/// BPE as the encoder's module docs state it, one pair at a time: merge the lowest pair,
/// leftmost on ties, until none is left. The oracle the fast kernels are checked against.
pub(super) fn plain_bpe(enc: &Encoder, text: &[u8]) -> Vec<TokenId> {
    let mut ids: Vec<TokenId> = text.iter().map(|&b| enc.byte_ids[b as usize]).collect();
    loop {
        let best = (0..ids.len().saturating_sub(1))
            .map(|i| (enc.pair(ids[i], ids[i + 1]), i))
            .min_by_key(|((p, _), i)| (*p, *i));
        match best {
            Some(((p, m), i)) if p != super::pair_table::NONE => {
                ids[i] = m;
                ids.remove(i + 1);
            }
            _ => return ids,
        }
    }
}

/// Encodes `pretoken` through `cache`, asserts the ids equal the encoder's BPE of it alone,
/// and returns them: the caches' tests' check of each look-up.
pub(super) fn assert_cached_is_bpe(
    enc: &Encoder,
    cache: &mut PretokenCache,
    pretoken: &[u8],
) -> Vec<TokenId> {
    let (mut cached, mut plain) = (Vec::new(), Vec::new());
    enc.encode_pretoken(pretoken, cache, &mut cached);
    enc.bpe(pretoken, &mut plain);
    assert_eq!(cached, plain, "{:?}", String::from_utf8_lossy(pretoken));
    plain
}
