//! Extending a tokenizer: training from pre-tokens already encoded as its tokens, from a
//! base tokenizer's vocabulary and merges ([`Base`]).

use super::rare_cuts;
use super::rules::{check_ids, Rules};
use super::symbols::{Symbol, Symbols};
use super::trainer::{PretokenMeta, Trainer, BIG_COUNT};
use super::{Merge, Stop};
use crate::byte_pair_set::BytePairSet;
use crate::count::PretokenCounts;
use crate::encode::Encoder;
use crate::prefetch::prefetch;
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
    check_ids(rules, tokens.len())?;
    let start = 256 + tokens.len();
    for (i, t) in tokens.iter().enumerate() {
        if t.len() < 2 {
            return Err(Error::InvalidVocab {
                reason: format!("start token {i} is {t:?}; the single bytes come first"),
            });
        }
    }
    let pretokens: Vec<_> = pretokens.into_iter().collect();
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
            let w = w.as_ref();
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
    encoder: Arc<Encoder>,
    /// A rank table encodes a pre-token that is a token as that token (tiktoken).
    whole: Option<FxHashMap<Vec<u8>, u32>>,
    /// Where a merge may join two bytes: only inside a token.
    adjacent: BytePairSet,
}

impl Base {
    /// The base of `vocab` and its `merges` (`None` for a rank table).
    pub fn new(
        vocab: Vec<(u32, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
    ) -> Result<Self, Error> {
        let encoder = Encoder::new(vocab.clone(), merges, Vec::new(), "gpt2")?;
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
    fn encode(&self, pretokens: PretokenCounts) -> Vec<(Vec<u32>, u64)> {
        let pretokens: Vec<_> = pretokens.into_pretokens().collect();
        // One cache per thread, not per share: rayon's shares are small (four a core, so
        // that a busy core's are taken up by the others), and a cache for each would meet
        // every word anew.
        let caches = ThreadLocal::<RefCell<PieceCache>>::new();
        let share = pretokens
            .len()
            .div_ceil(4 * rayon::current_num_threads())
            .max(1);
        let encoded = pretokens.par_chunks(share).map(|part| {
            let mut cache = caches.get_or_default().borrow_mut();
            let mut out = Vec::with_capacity(part.len());
            for (p, c) in part {
                let p = p.as_ref();
                if let Some(&id) = self.whole.as_ref().and_then(|m| m.get(p)) {
                    out.push((vec![self.symbol[&id]], *c));
                    continue;
                }
                let mut symbols = Vec::with_capacity(p.len() / 2);
                cache.encode_pretoken(self, p, &mut symbols);
                out.push((symbols, *c));
            }
            out
        });
        encoded.flatten_iter().collect()
    }
}

/// The symbols of the pieces a thread has met. Pieces of up to 15 bytes go by their u128
/// key in a table of their own, each with where its symbols are in `done` (a piece of one
/// symbol holds it inline): comparing slices was 8% of SuperBPE's second stage (memcmp), and
/// a boxed encoding is a pointer to chase. A pre-token's pieces are found a block at a time,
/// and each one's slot fetched before any is read: 100 MB of English meet 288,000 distinct
/// pieces 18.6M times, and a hash map's probe was a third of the time, waiting on memory.
#[derive(Default)]
struct PieceCache {
    short: PieceTable,
    long: FxHashMap<Box<[u8]>, Encoded>,
    done: Vec<u32>,
    ids: Vec<u32>,
    /// A block of pieces: start, end and key.
    block: Vec<(u32, u32, Option<u128>)>,
}

/// Pieces found (and their slots fetched) before the first of them is looked up.
const BLOCK: usize = 32;

impl PieceCache {
    /// Appends the symbols of pre-token `p` as `base` encodes it, piece by piece.
    fn encode_pretoken(&mut self, base: &Base, p: &[u8], symbols: &mut Vec<u32>) {
        let n = p.len();
        let mut start = 0;
        while start < n {
            self.block.clear();
            while start < n && self.block.len() < BLOCK {
                let mut end = start + 1;
                while end < n && base.adjacent.holds(p[end - 1], p[end]) {
                    end += 1;
                }
                let key = crate::pretoken_key::pack(&p[start..end]);
                if let Some(k) = key {
                    self.short.prefetch(k);
                }
                self.block.push((start as u32, end as u32, key));
                start = end;
            }
            for j in 0..self.block.len() {
                let (s, e, key) = self.block[j];
                match &p[s as usize..e as usize] {
                    [b] => symbols.push(*b as u32),
                    piece => self.encode(base, piece, key, symbols),
                }
            }
        }
    }

    /// Appends the symbols of `piece` (of key `key`) as `base` encodes it.
    #[inline]
    fn encode(&mut self, base: &Base, piece: &[u8], key: Option<u128>, symbols: &mut Vec<u32>) {
        let e = match key {
            Some(k) => match self.short.get(k) {
                Some(e) => e,
                None => {
                    let e = self.encoded(base, piece);
                    self.short.insert(k, e);
                    e
                }
            },
            None => match self.long.get(piece) {
                Some(&e) => e,
                None => {
                    let e = self.encoded(base, piece);
                    self.long.insert(piece.into(), e);
                    e
                }
            },
        };
        match e {
            Encoded::One(s) => symbols.push(s),
            Encoded::Many(at, n) => {
                symbols.extend_from_slice(&self.done[at as usize..(at + n) as usize])
            }
        }
    }

    /// `piece` encoded by `base`, its symbols kept in `done` unless it is one.
    fn encoded(&mut self, base: &Base, piece: &[u8]) -> Encoded {
        self.ids.clear();
        base.encoder.bpe_looked_up(piece, &mut self.ids);
        match self.ids[..] {
            [id] => Encoded::One(base.symbol[&id]),
            _ => {
                let at = self.done.len() as u32;
                self.done.extend(self.ids.iter().map(|i| base.symbol[i]));
                Encoded::Many(at, self.ids.len() as u32)
            }
        }
    }
}

/// Short pieces' encodings by key: open addressing, linear probing, 32-byte slots, so that
/// a look-up is the one cache line [`PieceTable::prefetch`] asked for. Key 0 marks an empty
/// slot (a key holds its piece's length, never 0).
struct PieceTable {
    slots: Vec<(u128, Encoded)>,
    bits: u32,
    len: usize,
}

impl Default for PieceTable {
    fn default() -> Self {
        Self::with_bits(12)
    }
}

impl PieceTable {
    fn with_bits(bits: u32) -> Self {
        PieceTable {
            slots: vec![(0, Encoded::One(0)); 1 << bits],
            bits,
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.bits)) as usize
    }

    #[inline]
    fn prefetch(&self, key: u128) {
        prefetch(&self.slots[self.slot(key)]);
    }

    #[inline]
    fn get(&self, key: u128) -> Option<Encoded> {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                (k, e) if k == key => return Some(e),
                (0, _) => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Adds a key that is not in the table; at three quarters full it doubles.
    fn insert(&mut self, key: u128, e: Encoded) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            let mut bigger = PieceTable::with_bits(self.bits + 1);
            for &(k, e) in self.slots.iter().filter(|(k, _)| *k != 0) {
                bigger.insert(k, e);
            }
            *self = bigger;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        while self.slots[i].0 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (key, e);
        self.len += 1;
    }
}

/// A piece's symbols as [`Base::encode`] caches them.
#[derive(Clone, Copy)]
enum Encoded {
    One(u32),
    /// Where they start in the cache's list, and how many.
    Many(u32, u32),
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

    /// Encoding in pieces between bytes no token holds side by side, with a cache, gives
    /// what encoding each pre-token whole gives: for a merges base and a rank table, on
    /// long pre-tokens of a few letters and spaces.
    /// Every key put in stays found through the table's growth, with its own encoding, and
    /// a key never put in is absent.
    #[test]
    fn piece_table_finds_what_it_holds() {
        let mut t = PieceTable::default();
        let key = |i: u64| crate::pretoken_key::pack(&(i * 7919).to_le_bytes()[..]).unwrap();
        for i in 0..20_000u64 {
            t.insert(key(i), Encoded::Many(i as u32, 2));
            if i % 1000 == 0 {
                assert!((0..=i)
                    .all(|j| matches!(t.get(key(j)), Some(Encoded::Many(a, 2)) if a == j as u32)));
            }
        }
        assert!(t.slots.len() > 20_000 * 4 / 3);
        assert!((20_000..40_000).all(|i| t.get(key(i)).is_none()));
    }

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
            let mut got = base.encode(counts.clone());
            want.sort();
            got.sort();
            assert_eq!(got, want, "rank table: {rank_table}");
            assert!(got.iter().any(|(w, _)| w.len() > 20));
        }
    }
}
