//! Building an encoder: the vocab checked, the pair table from merges (or from ranks, see
//! `rank_table`), the decoder's bytes, and the whole-token tables.

use super::chars::CharStart;
use super::pair_table::{PairTable, NONE};
use super::pretoken_cache::short_key;
use super::staged;
use super::Encoder;
use crate::special::SpecialMatcher;
use crate::split::Splitter;
use crate::{Error, TokenId};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use thread_local::ThreadLocal;

/// Ids at or above this are refused: the decoder keeps a dense table indexed by id.
const MAX_ID: usize = 1 << 26;

/// The merges an encoder is built from, in priority order.
#[derive(Clone, Copy)]
pub(super) enum Merges<'a> {
    /// Each merge's left and right bytes.
    Bytes(&'a [(Vec<u8>, Vec<u8>)]),
    /// Each merge's left, right and join as the ids of tokens of the vocab, as a reader
    /// that looked them up gives them: Qwen3.5's 248,000 merges looked up again by their
    /// bytes took 0.19 s of a 0.47 s build.
    Ids(&'a [(TokenId, TokenId, TokenId)]),
}

/// What an encoder is built for, which decides two of its tables.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// Encoding text: the tables of BPE from whole characters, and no whole-token maps but
    /// of the tokens BPE does not rebuild (see `Encoder::encode_uncached`).
    Text,
    /// [`Encoder::bpe_looked_up`] of distinct pieces: the whole-token maps, without BPE from
    /// whole characters.
    Pieces,
}

/// [`Encoder::build`]: checks the vocab, then fills the tables that `purpose` needs.
pub(super) fn encoder(
    vocab: &[(TokenId, Vec<u8>)],
    merges: Option<Merges<'_>>,
    specials: Vec<(Vec<u8>, TokenId)>,
    pattern: &str,
    ignore_merges: bool,
    purpose: Purpose,
) -> Result<Encoder, Error> {
    let splitter = Splitter::new(pattern)?;
    let cut_rule = splitter.cut_rule();

    let mut ids: FxHashMap<&[u8], TokenId> = FxHashMap::default();
    ids.reserve(vocab.len());
    let mut max_id = 0usize;
    for (id, b) in vocab {
        if b.is_empty() {
            return Err(Error::InvalidVocab {
                reason: format!("id {id} has empty bytes"),
            });
        }
        if let Some(other) = ids.insert(b.as_slice(), *id) {
            return Err(Error::InvalidVocab {
                reason: format!("ids {other} and {id} both map to {b:?}"),
            });
        }
        max_id = max_id.max(*id as usize);
    }
    for (t, id) in &specials {
        if t.is_empty() {
            return Err(Error::InvalidVocab {
                reason: format!("special token id {id} is empty"),
            });
        }
        max_id = max_id.max(*id as usize);
    }
    if max_id >= MAX_ID {
        return Err(Error::InvalidVocab {
            reason: format!("id {max_id} is too large: ids must be below {MAX_ID}"),
        });
    }
    let mut byte_ids = [NONE; 256];
    for (b, slot) in byte_ids.iter_mut().enumerate() {
        *slot = *ids.get(&[b as u8][..]).ok_or_else(|| Error::InvalidVocab {
            reason: format!(
                "the vocab lacks the single byte {b:#04x}; a byte-level vocab needs all 256"
            ),
        })?;
    }

    // Rank mode: a pair a token at most. Reserved at once, so that no growth holds the old
    // table beside the new one.
    let mut pairs = match merges {
        Some(Merges::Bytes(m)) => PairTable::with_room(m.len()),
        Some(Merges::Ids(m)) => PairTable::with_room(m.len()),
        None => PairTable::for_ranks(vocab.len(), max_id + 1),
    };
    // Merges mode: the pairs of the table (left, right, priority), for `CharStart`.
    let mut merged = Vec::new();
    // A repeated merge keeps its first (highest) priority.
    let mut add = |prio: usize, (ia, ib, iab): (TokenId, TokenId, TokenId)| {
        if pairs.insert_first(ia, ib, (prio as u32, iab)) {
            merged.push((ia, ib, prio as u32));
        }
    };
    // Rank mode: filled below, in rank order, with each token's canonical merge.
    match merges {
        Some(Merges::Bytes(merges)) => {
            let mut ab = Vec::new();
            for (prio, (a, b)) in merges.iter().enumerate() {
                ab.clear();
                ab.extend_from_slice(a);
                ab.extend_from_slice(b);
                // A merge into a special token's bytes cannot apply: specials are never
                // part of a merge.
                if let (Some(&ia), Some(&ib), Some(&iab)) = (
                    ids.get(a.as_slice()),
                    ids.get(b.as_slice()),
                    ids.get(ab.as_slice()),
                ) {
                    add(prio, (ia, ib, iab));
                }
            }
        }
        Some(Merges::Ids(merges)) => {
            for (prio, &m) in merges.iter().enumerate() {
                add(prio, m);
            }
        }
        None => {}
    }
    // Freed before the tables are built: o200k's index is 6.6 MB of the build's peak.
    drop(ids);

    let mut bytes = Vec::new();
    let mut spans = vec![(1u32, 0u32); max_id + 1];
    for (id, b) in vocab {
        spans[*id as usize] = (bytes.len() as u32, (bytes.len() + b.len()) as u32);
        bytes.extend_from_slice(b);
    }
    for (t, id) in &specials {
        spans[*id as usize] = (bytes.len() as u32, (bytes.len() + t.len()) as u32);
        bytes.extend_from_slice(t);
    }

    let special_matcher = SpecialMatcher::new(&specials.iter().map(|(t, _)| t).collect::<Vec<_>>());

    let mut enc = Encoder {
        byte_ids,
        pairs,
        byte_pairs: vec![(NONE, NONE); 1 << 16],
        whole: FxHashMap::default(),
        whole_long: FxHashMap::default(),
        unbuilt: FxHashMap::default(),
        unbuilt_long: FxHashMap::default(),
        bytes,
        spans,
        specials,
        special_matcher,
        partial: Mutex::new(None),
        splitter,
        cut_rule,
        rank_mode: merges.is_none(),
        rank_merges: Vec::new(),
        chars: None,
        monotone: false,
        stages: None,
        cache: ThreadLocal::new(),
    };
    // Merges mode: the whole-token short-cut is exact only for tokens that BPE rebuilds
    // from their bytes. Rank mode and `ignore_merges`: the rule *is* the short-cut first
    // (a pre-token that is a token is that token), even for tokens no merge reaches;
    // Llama 3's rank table has such tokens.
    // Merges mode: the table is complete, and packed before the BPE of every token below
    // reads it (a look-up is one load then: see `PairTable::for_ranks`).
    if merges.is_some() {
        enc.pairs.pack(enc.spans.len());
    }
    enc.fill_byte_pairs();
    // Each token's last merge (left, right, priority) if BPE of its bytes is itself.
    let splits: Vec<Option<(TokenId, TokenId, u32)>> = match merges {
        None => enc.build_rank_table(vocab),
        // Each token's BPE on its own, on all cores: 180,000 trained tokens build in
        // 0.24 s instead of 0.26 s.
        Some(_) => vocab
            .par_iter()
            .map(|(id, t)| enc.last_merge(*id, t))
            .collect(),
    };
    let valid: Vec<bool> = vocab
        .iter()
        .zip(&splits)
        .map(|((_, t), split)| t.len() == 1 || split.is_some())
        .collect();
    // The three are independent, on two cores (DeepSeek's: 16, 17 and 5 ms). `CharStart`
    // sees the tables as they are so far (no stages, no whole tokens), as it did before the
    // other two.
    let merged = merges.is_some().then_some(merged.as_slice());
    let build_chars = || {
        (purpose == Purpose::Text)
            .then(|| CharStart::new(&enc, vocab, &splits, &valid, merged))
            .flatten()
    };
    let build_rest = || {
        rayon::join(
            || (enc.pairs.is_monotone(), staged::Stages::new(&enc)),
            || {
                let built_only = merges.is_some() && !ignore_merges;
                whole_tokens(vocab, &valid, built_only, purpose == Purpose::Pieces)
            },
        )
    };
    let (chars, ((monotone, stages), whole)) = rayon::join(build_chars, build_rest);
    enc.chars = chars;
    enc.monotone = monotone;
    enc.stages = stages;
    (enc.whole, enc.whole_long, enc.unbuilt, enc.unbuilt_long) = whole;
    Ok(enc)
}

/// The whole-token maps (`whole`, `whole_long`, `unbuilt`, `unbuilt_long`): with `pieces`,
/// the tokens BPE rebuilds; and the tokens it does not that a pre-token equal to one still
/// gets (rank mode and `ignore_merges`, not `built_only`).
type WholeTokens = (
    FxHashMap<u128, TokenId>,
    FxHashMap<Vec<u8>, TokenId>,
    FxHashMap<u128, TokenId>,
    FxHashMap<Vec<u8>, TokenId>,
);

/// [`WholeTokens`] of `vocab`, `valid[i]` saying whether BPE rebuilds token `i`.
fn whole_tokens(
    vocab: &[(TokenId, Vec<u8>)],
    valid: &[bool],
    built_only: bool,
    pieces: bool,
) -> WholeTokens {
    let mut whole = FxHashMap::default();
    if pieces {
        whole.reserve(vocab.len());
    }
    let mut whole_long = FxHashMap::default();
    let (mut unbuilt, mut unbuilt_long) = (FxHashMap::default(), FxHashMap::default());
    for ((id, t), &built) in vocab.iter().zip(valid) {
        // Merges mode: only tokens BPE rebuilds take the short-cut (see `encoder`).
        if !built && built_only || built && !pieces {
            continue;
        }
        match (short_key(t), built) {
            (Some(k), true) => whole.insert(k, *id),
            (Some(k), false) => unbuilt.insert(k, *id),
            (None, true) => whole_long.insert(t.clone(), *id),
            (None, false) => unbuilt_long.insert(t.clone(), *id),
        };
    }
    (whole, whole_long, unbuilt, unbuilt_long)
}

impl Encoder {
    /// Merges mode: the last merge `(left, right, priority)` of BPE on `token`'s bytes, if
    /// that BPE ends in `id` itself (single bytes have none). Runs the scan until two parts
    /// are left: one more merge ends BPE, and only if it makes `id` is the token valid.
    /// Each pair is looked up once (the bytes' in the byte-pair table), and after a merge
    /// only the two pairs beside it: looking every pair up again on each step was 15% of
    /// DeepSeek's load.
    pub(super) fn last_merge(&self, id: TokenId, token: &[u8]) -> Option<(TokenId, TokenId, u32)> {
        let mut ids: Vec<TokenId> = token.iter().map(|&b| self.byte_ids[b as usize]).collect();
        let mut pairs: Vec<(u32, TokenId)> = token
            .windows(2)
            .map(|w| self.byte_pair(w[0], w[1]))
            .collect();
        while ids.len() > 2 {
            let (p, at) = pairs.iter().enumerate().map(|(i, &(p, _))| (p, i)).min()?;
            if p == NONE {
                return None;
            }
            ids[at] = pairs[at].1;
            ids.remove(at + 1);
            pairs.remove(at);
            if at > 0 {
                pairs[at - 1] = self.pair(ids[at - 1], ids[at]);
            }
            if at + 1 < ids.len() {
                pairs[at] = self.pair(ids[at], ids[at + 1]);
            }
        }
        let (&[a, b], &[(p, m)]) = (&ids[..], &pairs[..]) else {
            return None;
        };
        (m == id && p != NONE).then_some((a, b, p))
    }
}
