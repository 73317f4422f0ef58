//! Extending a tokenizer: training from pre-tokens already encoded as its tokens, from a
//! base tokenizer's vocabulary and merges ([`Base`]).

use super::rules::{check_ids, Rules};
use super::symbols::{Symbol, Symbols};
use super::trainer::{PretokenMeta, Trainer, BIG_COUNT};
use super::{Merge, Stop};
use crate::count::PretokenCounts;
use crate::encode::Encoder;
use crate::{Error, Progress};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

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
        Trainer::<u16>::encoded(tokens, pretokens, rules)?.run(num_merges, progress)
    } else {
        Trainer::<u32>::encoded(tokens, pretokens, rules)?.run(num_merges, progress)
    }
}

impl<S: Symbol> Trainer<S> {
    /// See [`train_encoded`].
    pub(super) fn encoded(
        tokens: Vec<Vec<u8>>,
        pretokens: impl IntoIterator<Item = (Vec<u32>, u64)>,
        rules: &Rules,
    ) -> Result<Self, Error> {
        let mut syms = Symbols::new(rules.ids.as_deref(), rules.reuse);
        for (i, t) in tokens.into_iter().enumerate() {
            if syms.ids.contains_key(t.as_slice()) {
                return Err(Error::InvalidVocab {
                    reason: format!("start token {t:?} is given twice"),
                });
            }
            syms.push(t, rules.ids.as_ref().map(|ids| ids[256 + i]));
        }
        let n = syms.bytes.len() as u32;
        let (mut arena, mut meta, mut big_counts) = (Vec::new(), Vec::new(), FxHashMap::default());
        for (w, c) in pretokens {
            if let Some(&bad) = w.iter().find(|&&s| s >= n) {
                return Err(Error::InvalidVocab {
                    reason: format!("a pre-token holds symbol {bad}, but there are only {n}"),
                });
            }
            if w.len() >= 2 && c > 0 {
                if c >= BIG_COUNT as u64 {
                    big_counts.insert(meta.len() as u32, c);
                }
                meta.push(PretokenMeta {
                    start: arena.len(),
                    count: c.min(BIG_COUNT as u64) as u32,
                    len: w.len() as u32,
                });
                arena.extend(w.iter().map(|&s| S::from_id(s)));
            }
        }
        Ok(Self::assemble(syms, arena, meta, big_counts, rules))
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
    symbol: FxHashMap<u32, u32>,
    encoder: Encoder,
    /// A rank table encodes a pre-token that is a token as that token (tiktoken).
    whole: Option<FxHashMap<Vec<u8>, u32>>,
}

impl Base {
    pub fn new(
        mut vocab: Vec<(u32, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
    ) -> Result<Self, Error> {
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
        let encoder = Encoder::new(vocab, merges, Vec::new(), "gpt2")?;
        Ok(Base {
            tokens,
            ids,
            symbol,
            encoder,
            whole,
        })
    }

    /// Each pre-token as the base encodes it, as symbols; on all cores.
    fn encode(&self, pretokens: PretokenCounts) -> Vec<(Vec<u32>, u64)> {
        let pretokens: Vec<_> = pretokens.into_pretokens().collect();
        pretokens
            .into_par_iter()
            .map(|(p, c)| {
                let p = p.as_ref();
                let mut ids = Vec::with_capacity(p.len());
                match self.whole.as_ref().and_then(|m| m.get(p)) {
                    Some(&id) => ids.push(id),
                    None => self.encoder.bpe(p, &mut ids),
                }
                (ids.iter().map(|i| self.symbol[i]).collect(), c)
            })
            .collect()
    }
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
    train_encoded(base.tokens, encoded, num_merges, &rules, progress)
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
}
