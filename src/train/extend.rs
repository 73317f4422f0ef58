//! Extending a tokenizer: training from pre-tokens already encoded as its tokens, from a
//! base tokenizer's vocabulary and merges ([`Base`]).

use super::encoded::{Encoded, Share};
use super::piece_cache::PieceCache;
use super::rare_cuts;
use super::rules::{check_ids, Rules};
use super::symbols::{Symbol, Symbols};
use super::trainer::{push_pretoken, Trainer};
use super::{Merge, Stop};
use crate::byte_pair_set::BytePairSet;
use crate::count::PretokenCounts;
use crate::encode::Encoder;
use crate::{Error, Progress};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;
use thread_local::ThreadLocal;

/// Continues training from pre-tokens already encoded as symbols: 0..256 are the single
/// bytes, `256 + i` is `tokens[i]` (an existing tokenizer's multi-byte tokens). Merges
/// take up where those tokens leave off, under `rules` ([`Rules::ids`] then holds one id
/// per start symbol). Pre-tokens of one symbol are skipped.
pub fn train_encoded(
    tokens: Vec<Vec<u8>>,
    pretokens: impl IntoIterator<Item = (Vec<u32>, u64)>,
    num_merges: usize,
    rules: &Rules,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    train_shares(tokens, Encoded::new(pretokens), num_merges, rules, progress)
}

/// [`train_encoded`] of pre-tokens held in shares.
fn train_shares(
    tokens: Vec<Vec<u8>>,
    pretokens: Encoded,
    num_merges: usize,
    rules: &Rules,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    check_ids(rules, tokens.len())?;
    let start = 256 + tokens.len();
    for (i, t) in tokens.iter().enumerate() {
        if t.len() < 2 {
            return Err(Error::InvalidVocab {
                reason: format!("start token {i} is {t:?}; the single bytes come first"),
            });
        }
    }
    if start + num_merges <= 1 << 16 {
        rare_cuts::train::<u16>(tokens, pretokens, num_merges, rules, progress)
    } else {
        rare_cuts::train::<u32>(tokens, pretokens, num_merges, rules, progress)
    }
}

impl<S: Symbol> Trainer<S> {
    /// See [`train_encoded`].
    pub(super) fn encoded<W: AsRef<[u32]>>(
        tokens: Vec<Vec<u8>>,
        pretokens: impl IntoIterator<Item = (W, u64)>,
        rules: &Rules,
    ) -> Result<Self, Error> {
        let syms = start_symbols(tokens, rules)?;
        let n = syms.bytes.len() as u32;
        let (mut arena, mut meta, mut big_counts) = (Vec::new(), Vec::new(), FxHashMap::default());
        for (w, c) in pretokens {
            let w = w.as_ref();
            check_symbols(w, n)?;
            if w.len() >= 2 && c > 0 {
                let syms = w.iter().map(|&s| S::from_id(s));
                push_pretoken(&mut arena, &mut meta, &mut big_counts, syms, c);
            }
        }
        Ok(Self::assemble(syms, arena, meta, big_counts, rules))
    }
}

/// The trainer's start symbols: the 256 bytes, then `tokens` as symbols 256.. .
pub(super) fn start_symbols(tokens: Vec<Vec<u8>>, rules: &Rules) -> Result<Symbols, Error> {
    let mut syms = Symbols::new(rules.ids.as_deref(), rules.reuse);
    for (i, t) in tokens.into_iter().enumerate() {
        if syms.ids.contains_key(t.as_slice()) {
            return Err(Error::InvalidVocab {
                reason: format!("start token {t:?} is given twice"),
            });
        }
        syms.push(t, rules.ids.as_ref().map(|ids| ids[256 + i]));
    }
    Ok(syms)
}

/// An error unless every symbol of `w` is one of the `n` start symbols.
pub(super) fn check_symbols(w: &[u32], n: u32) -> Result<(), Error> {
    match w.iter().find(|&&s| s >= n) {
        Some(&bad) => Err(Error::InvalidVocab {
            reason: format!("a pre-token holds symbol {bad}, but there are only {n}"),
        }),
        None => Ok(()),
    }
}

/// The tokenizer to extend: its regular tokens as the trainer's symbols (0..256 the bytes,
/// then the longer tokens in id order) and an encoder of it.
pub struct Base {
    /// The longer tokens, symbols 256.. .
    tokens: Vec<Vec<u8>>,
    /// The tokenizer's id of each symbol.
    ids: Vec<u64>,
    /// Symbol of each of the tokenizer's ids.
    pub(super) symbol: FxHashMap<u32, u32>,
    pub(super) encoder: Arc<Encoder>,
    /// A rank table encodes a pre-token that is a token as that token (tiktoken).
    whole: Option<FxHashMap<Vec<u8>, u32>>,
    /// Where a merge may join two bytes: only inside a token.
    pub(super) adjacent: BytePairSet,
}

impl Base {
    /// The base of `vocab` and its `merges` (`None` for a rank table).
    pub fn new(
        vocab: Vec<(u32, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
    ) -> Result<Self, Error> {
        let encoder = Encoder::for_pieces(vocab.clone(), merges)?;
        Self::with_encoder(vocab, merges, Arc::new(encoder))
    }

    /// [`Base::new`] with the tokenizer's own encoder of `vocab` and `merges`, which
    /// SuperBPE's first stage has built already (200,000 tokens: 0.2 s to build again).
    pub fn with_encoder(
        mut vocab: Vec<(u32, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
        encoder: Arc<Encoder>,
    ) -> Result<Self, Error> {
        let largest = vocab
            .iter()
            .map(|(id, _)| *id as usize + 1)
            .max()
            .unwrap_or(0);
        if encoder.rank_mode() != merges.is_none() || encoder.vocab_size() < largest {
            return Err(Error::InvalidVocab {
                reason: "the base's encoder is not of its vocab and merges".into(),
            });
        }
        vocab.sort_unstable();
        let mut ids = vec![u64::MAX; 256];
        let mut symbol = FxHashMap::default();
        let mut tokens = Vec::new();
        for (id, b) in &vocab {
            if b.len() == 1 {
                ids[b[0] as usize] = *id as u64;
                symbol.insert(*id, b[0] as u32);
            }
        }
        if let Some(b) = ids.iter().position(|&i| i == u64::MAX) {
            return Err(Error::InvalidVocab {
                reason: format!("the base lacks the single byte {b:#04x}"),
            });
        }
        for (id, b) in &vocab {
            if b.len() > 1 {
                symbol.insert(*id, 256 + tokens.len() as u32);
                ids.push(*id as u64);
                tokens.push(b.clone());
            }
        }
        let whole = merges
            .is_none()
            .then(|| vocab.iter().map(|(i, b)| (b.clone(), *i)).collect());
        // A merge's result is a token too, but a merges file need not list it in the vocab.
        let joined = merges
            .into_iter()
            .flatten()
            .map(|(a, b)| [a.as_slice(), b].concat());
        let joined: Vec<Vec<u8>> = joined.collect();
        let adjacent = adjacent_bytes(
            vocab
                .iter()
                .map(|(_, b)| b.as_slice())
                .chain(joined.iter().map(|j| j.as_slice())),
        );
        Ok(Base {
            adjacent,
            tokens,
            ids,
            symbol,
            encoder,
            whole,
        })
    }

    /// Each pre-token as the base encodes it, as symbols; on all cores.
    ///
    /// A merge joins two tokens into one of the vocab, so it never joins across two
    /// adjacent bytes that no token holds side by side: each pre-token is encoded as the
    /// pieces between such bytes, and equal pieces once per thread (SuperBPE's second stage
    /// on 20 MB of English, 20,130 pre-tokens of ~1,000 bytes: 1.03 s whole, 0.15 s in pieces).
    fn encode(&self, pretokens: PretokenCounts) -> Encoded {
        let pretokens: Vec<_> = pretokens.into_pretokens().collect();
        // One cache per thread, not per share: rayon's shares are small (four a core, so
        // that a busy core's are taken up by the others), and a cache for each would meet
        // every word anew.
        let caches = ThreadLocal::<RefCell<PieceCache>>::new();
        let share = pretokens
            .len()
            .div_ceil(4 * rayon::current_num_threads())
            .max(1);
        let shares = pretokens.par_chunks(share).map(|part| {
            let mut cache = caches.get_or_default().borrow_mut();
            let bytes = part.iter().map(|(p, _)| p.as_ref().len()).sum();
            let mut out = Share::with_capacity(bytes, part.len());
            for (p, c) in part {
                let p = p.as_ref();
                match self.whole.as_ref().and_then(|m| m.get(p)) {
                    Some(&id) => out.symbols().push(self.symbol[&id]),
                    None => cache.encode_pretoken(self, p, out.symbols()),
                }
                out.end(*c);
            }
            out.shrink_to_fit();
            out
        });
        Encoded::from_shares(shares.collect())
    }
}

/// The byte pairs some token holds side by side.
fn adjacent_bytes<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> BytePairSet {
    let mut set = BytePairSet::default();
    for t in tokens {
        for p in t.windows(2) {
            set.insert(p[0], p[1]);
        }
    }
    set
}

/// Learns up to `num_merges` merges that extend `base`: each counted pre-token is first
/// encoded with it, then training continues from its tokens ([`train_encoded`]). When ties
/// go by ids, the base's ids break them.
pub fn train_from_base(
    base: Base,
    pretokens: PretokenCounts,
    num_merges: usize,
    rules: &Rules,
    progress: &mut Progress<'_>,
) -> Result<(Vec<Merge>, Stop), Error> {
    let mut rules = rules.clone();
    if rules.ids.is_some() {
        rules.ids = Some(base.ids.clone());
    }
    let encoded = base.encode(pretokens);
    train_shares(base.tokens, encoded, num_merges, &rules, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::rules::tests::by_ids;

    #[test]
    pub(super) fn bad_start_symbols_are_errors() {
        let none = Vec::<(Vec<u32>, u64)>::new;
        let rules = by_ids(true, false, 0); // ids for the bytes only, but one token given
        assert!(train_encoded(vec![b"ab".to_vec()], none(), 1, &rules, &mut |_, _| true).is_err());
        let rules = Rules::cs336(1);
        assert!(train_encoded(vec![b"a".to_vec()], none(), 1, &rules, &mut |_, _| true).is_err());
        let pretoken = vec![(vec![300u32, 1], 1)];
        assert!(train_encoded(vec![], pretoken, 1, &rules, &mut |_, _| true).is_err());
    }

    /// Encoding in pieces between bytes no token holds side by side, with a cache, gives
    /// what encoding each pre-token whole gives: for a merges base and a rank table, on
    /// long pre-tokens of a few letters and spaces.
    #[test]
    fn pieces_encode_as_the_whole_pretoken() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut text =
            |len: usize| -> Vec<u8> { (0..len).map(|_| b"ab c d\n"[next(7) as usize]).collect() };
        // Words as a pattern cuts them: letters after at most one space, so no token holds
        // a letter then a space, and the pre-tokens below are cut at each such pair.
        let words: Vec<(Vec<u8>, u64)> = (0..300)
            .map(|i| {
                let w: Vec<u8> = text(1 + i % 9)
                    .into_iter()
                    .filter(|b| b.is_ascii_alphabetic())
                    .collect();
                ([&b" "[..i % 2], &w].concat(), 1 + i as u64 % 5)
            })
            .collect();
        let (merges, _) = crate::train::train(&words, 40, 1, &mut |_, _| true).unwrap();
        let mut vocab: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        for (a, b) in &merges {
            vocab.push((vocab.len() as u32, [a.as_slice(), b].concat()));
        }
        let mut counts = PretokenCounts::new();
        for i in 0..200 {
            counts.add(&text(1 + i * 3), 1 + i as u64 % 3);
        }
        for rank_table in [false, true] {
            let base =
                Base::new(vocab.clone(), (!rank_table).then_some(merges.as_slice())).unwrap();
            assert!(base.adjacent.holds(b' ', b'a') && !base.adjacent.holds(b'a', b' '));
            let mut want: Vec<(Vec<u32>, u64)> = counts
                .iter()
                .map(|(p, c)| {
                    let p = p.as_ref();
                    let mut ids = Vec::new();
                    match base.whole.as_ref().and_then(|m| m.get(p)) {
                        Some(&id) => ids.push(id),
                        None => base.encoder.bpe(p, &mut ids),
                    }
                    (ids.iter().map(|i| base.symbol[i]).collect(), c)
                })
                .collect();
            let mut got: Vec<(Vec<u32>, u64)> = base
                .encode(counts.clone())
                .iter()
                .map(|(w, c)| (w.to_vec(), c))
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "rank table: {rank_table}");
            assert!(got.iter().any(|(w, _)| w.len() > 20));
        }
    }
}
