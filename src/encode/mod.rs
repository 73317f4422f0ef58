//! The BPE encoder and decoder.
//!
//! One algorithm serves both kinds of vocabulary. A *pair table* maps two adjacent token ids
//! to `(priority, merged id)`; encoding a pre-token starts from its bytes and repeatedly
//! merges the adjacent pair with the lowest priority, leftmost on ties.
//! - merges mode (GPT-2, bytepair's own training): priority = the merge's index in the list.
//! - rank mode (tiktoken's rank tables): tiktoken merges the adjacent pair whose concatenation
//!   has the lowest rank. Every part is always a token, so this is the same rule over a table
//!   holding *every* split `(a, b)` of every token `t = a + b` where `a` and `b` are tokens,
//!   with priority = rank(t). That table is built here, once.
//!
//! Ids are whatever the vocab says: GPT-2's vocab does not put the bytes at 0..255.
//!
//! Speed comes from short-cuts that never change the result:
//! - a pre-token that is itself a token whose BPE is itself is one hash look-up (most words);
//! - a pre-token with multi-byte characters starts BPE from its characters' tokens where
//!   that provably gives the same ids (see `chars`: most Chinese under o200k and cl100k);
//! - short pre-tokens run a scan over a stack array (tiktoken's algorithm, fast for n < 64);
//! - long ones use a linked list plus a min-heap with lazy invalidation: O(n log n), so a
//!   1 MB pre-token of one repeated letter takes milliseconds, not hours.
//!
//! A small two-way set-associative per-thread cache remembers the ids of recent short
//! pre-tokens.

use crate::{Error, TokenId};
use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;
use thread_local::ThreadLocal;

use crate::split::{Splitter, TileLoop};

mod batch;
mod chars;
mod filter;
pub use batch::{
    encode_batch, encode_batch_each, encode_file, is_safe_cut, npy_header, pool, Block, Stream,
};
use chars::{CharStart, Scratch};

/// No pair / no priority.
const NONE: u32 = u32::MAX;
/// Pre-tokens up to this many bytes use the array scan; longer ones the heap. The scan is
/// quadratic but allocation-free (128 was no faster on Chinese under o200k, whose runs of
/// Han characters are often 30-120 bytes).
const SHORT: usize = 64;
/// Stack arrays for the scan come in two sizes, so short pieces (nearly all) do not pay for
/// initialising 128-entry arrays.
const TINY: usize = 24;
/// Cached pre-tokens hold at most this many ids (inline, so the cache never allocates).
const CACHE_IDS: usize = 4;
/// log2 of the cache's sets: 65536 sets of two 32-byte slots (one cache line), 4 MB a
/// thread that encodes, per encoder, made at its first encode. The whole-token table of
/// o200k is 8 MB: a look-up there is a cache miss (a third of the time of the cache's
/// misses), and BPE's pair look-ups are more; a hit that comes from L3 still costs less.
/// 4096 slots of 48 bytes first (see [`Slot`]); 32-byte slots, 4096 or 8192, ran 1.0-1.3x
/// as fast on documents (paired runs, median 1.07x). Then 2-way sets of a cache line each
/// (see [`Set`]): 8192 of them over 4096, paired runs of 20-line documents, medians of
/// 15-21: English 1.04-1.07x (gpt2, cl100k, o200k), Chinese 0.96-1.02x. In the fifth
/// session (o200k English, one pass of 3 MB: misses 58.7k at 8192 sets, 47.6k at 16384,
/// 42.6k at 32768; 40k are first sightings), 16384 over 8192: the benchmark's 3 MB again
/// and again, English 1.07-1.12x, Chinese 0.99-1.03x, code 1.06x; a stream of new 3 MB
/// slices, English 1.05-1.12x, Chinese 1.01x, code 1.02x. Then 32768 over 16384: repeated,
/// o200k English 1.14x, Chinese 1.01x; a stream, English 1.06x (o200k), 1.04x (cl100k),
/// code 1.02x, Chinese 1.02x. Sixth session, 65536 over 32768 (simulated on a stream of
/// o200k English, misses per 3 MB slice 23k -> 15k): repeated, o200k English 1.14-1.16x,
/// code 1.08x, cl100k English 1.05x, Chinese 0.98-1.03x; a stream, o200k English
/// 1.04-1.05x, code 1.03x, cl100k English 1.04x, Chinese 0.94-0.96x (gpt2's 0.94-0.99x).
const CACHE_BITS: u32 = 16;
/// log2 of the per-thread pair cache's slots: 16384 slots of 16 bytes, 256 KB, in L2 (1 MB
/// here) next to the piece cache, while o200k's pair table is 4 MB.
const PAIR_CACHE_BITS: u32 = 14;
/// Ids at or above this are refused: the decoder keeps a dense table indexed by id.
const MAX_ID: usize = 1 << 26;

/// A 2-way set-associative cache of short pre-tokens (by [`short_key`]) and their ids.
/// Recent pieces, whole tokens included, are answered from L2; a new piece evicts the less
/// recently used of its set.
struct PieceCache {
    sets: Vec<Set>,
    /// Recent pair look-ups, `(left << 32 | right, priority, merged)`, direct-mapped, absent
    /// pairs included (see [`Encoder::hot_pair`]).
    pairs: Vec<(u64, u32, TokenId)>,
    /// The arrays of BPE from whole characters.
    scratch: Scratch,
}

/// One piece-cache slot, 32 bytes (two to a cache line): the piece's key with the number of
/// ids in its top 4 bits (a key's length byte uses only the low 4), and up to 4 ids. Key 0
/// is an empty slot (no pre-token is empty). The count had a field of its own before, which
/// made slots 48 bytes (a u128 aligns to 16).
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u128,
    ids: [TokenId; CACHE_IDS],
}

const _: () = assert!(std::mem::size_of::<Slot>() == 32);

/// Two slots on one cache line, the most recently used first. Direct-mapped slots before:
/// the allocation starts 16 bytes into a page, so half of them straddled two lines, and
/// two pieces with one slot evicted each other (simulated on 3 MB of o200k English, hits
/// 86.1% -> 88.5%, look-ups in the whole-token table 9.0% -> 6.9% of the pieces).
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Set([Slot; 2]);

/// The bits of [`Slot::key`] that hold the count of ids.
const COUNT_SHIFT: u32 = 124;

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache {
            sets: vec![Set::default(); 1 << CACHE_BITS],
            pairs: vec![(u64::MAX, NONE, NONE); 1 << PAIR_CACHE_BITS],
            scratch: Scratch::default(),
        }
    }
}

impl PieceCache {
    #[inline]
    fn set(key: u128) -> usize {
        let h = ((key as u64) ^ ((key >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - CACHE_BITS)) as usize
    }
}

/// A pre-token of up to 15 bytes as one integer: its bytes, zero-padded, and its length in
/// the last byte (so the key is unique). Look-ups then hash two words and compare two words
/// instead of hashing bytes and calling memcmp: the whole-token look-up was 35% of encoding
/// time on English before (gpt2, with memcmp), most of it in those two.
///
/// Built from two overlapping loads instead of copying into a buffer: the copy was a call
/// to memcpy for every piece (16 M of 140 M instructions on English under o200k).
#[inline]
fn short_key(piece: &[u8]) -> Option<u128> {
    let n = piece.len();
    let u64_at = |i: usize| u64::from_le_bytes(piece[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(piece[i..i + 4].try_into().expect("4 bytes"));
    // The bytes from 8 (resp. 4) on are the top bytes of the load that ends at `n`.
    let bytes: u128 = match n {
        16.. => return None,
        9..=15 => u64_at(0) as u128 | ((u64_at(n - 8) >> (8 * (16 - n))) as u128) << 64,
        8 => u64_at(0) as u128,
        5..=7 => (u32_at(0) as u64 | ((u32_at(n - 4) >> (8 * (8 - n))) as u64) << 32) as u128,
        4 => u32_at(0) as u128,
        // Pieces of one to three bytes (`,`, ` a`, `\n\n`) are common: no loop for them
        // (callgrind, o200k: English -3.3% instructions, code -5.1%).
        3 => (u16::from_le_bytes([piece[0], piece[1]]) as u32 | (piece[2] as u32) << 16) as u128,
        2 => u16::from_le_bytes([piece[0], piece[1]]) as u128,
        1 => piece[0] as u128,
        _ => 0,
    };
    Some(bytes | (n as u128) << 120)
}
/// Takes the ids of [`Encoder::encode_in_steps`] so far and how many bytes they cover.
pub type IdSink<'a> = dyn FnMut(&mut Vec<TokenId>, usize) -> Result<(), Error> + 'a;

/// A token's `(start, end)` byte offsets in the text it came from.
pub type Span = (usize, usize);

/// Which special tokens are encoded as specials (`allowed`) and which raise (`disallowed`);
/// the others are plain text. Indexed like [`Encoder::special_tokens`].
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
    fn any_allowed(&self) -> bool {
        self.allowed.iter().any(|&a| a)
    }
    fn any_disallowed(&self) -> bool {
        self.disallowed.iter().any(|&d| d)
    }
}

/// A byte-level BPE encoder and decoder. Immutable and `Sync`: build once, share across threads.
pub struct Encoder {
    byte_ids: [TokenId; 256],
    /// `(left, right)` -> `(priority, merged id)`.
    pairs: PairTable,
    /// The pair table for two single bytes, indexed by `(byte << 8) | byte`: the first
    /// pass over a pre-token's bytes reads this 512 KB table, which stays in L2, instead of
    /// the big one (o200k's is 4 MB).
    byte_pairs: Vec<(u32, TokenId)>,
    /// Tokens whose BPE is themselves: a pre-token equal to one is a single look-up.
    /// Up to 15 bytes keyed by [`short_key`], longer ones by their bytes.
    whole: FxHashMap<u128, TokenId>,
    whole_long: FxHashMap<Vec<u8>, TokenId>,
    /// The tokens of `whole` and `whole_long` that BPE of their bytes does not rebuild (rank
    /// mode only: tiktoken's rule gives them to a pre-token equal to them; Llama 3 has some).
    /// BPE rebuilds every other token, so a piece can skip the whole-token table for these.
    unbuilt: FxHashMap<u128, TokenId>,
    unbuilt_long: FxHashMap<Vec<u8>, TokenId>,
    /// Decoder: token bytes are `bytes[spans[id].0..spans[id].1]`; absent ids have start > end.
    bytes: Vec<u8>,
    spans: Vec<(u32, u32)>,
    specials: Vec<(Vec<u8>, TokenId)>,
    /// Leftmost-longest over all special tokens (for the all-allowed case).
    special_longest: Option<AhoCorasick>,
    /// Every occurrence of every special token (for the disallowed check and safe cuts).
    special_any: Option<AhoCorasick>,
    max_special_len: usize,
    splitter: Splitter,
    builtin_pattern: bool,
    rank_mode: bool,
    /// TokenId mode: the canonical merges, as ids, in rank order.
    rank_merges: Vec<(TokenId, TokenId)>,
    /// BPE from whole characters (see [`Encoder::bpe_chars`]); `None` when the pair table's
    /// priorities are not monotone.
    chars: Option<CharStart>,
    cache: ThreadLocal<RefCell<PieceCache>>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("tokens", &self.whole.len())
            .field("pairs", &self.pairs.map.len())
            .field("unbuilt", &(self.unbuilt.len() + self.unbuilt_long.len()))
            .field("specials", &self.specials.len())
            .field("pattern", &self.splitter.pattern())
            .finish()
    }
}

/// The pair table's key: `(a, b)` packed, then mixed with murmur3's finalizer (a bijection,
/// so keys stay unique). FxHash alone on the packed pair probes long chains: building the
/// o200k encoder took 1.6 s before the mix, 0.2 s after.
#[inline]
fn pair_key(a: TokenId, b: TokenId) -> u64 {
    let mut k = ((a as u64) << 32) | b as u64;
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// The pair table, `(left, right)` -> `(priority, merged id)`, keyed by [`pair_key`].
/// hashbrown beats a plain open-addressing table (16-byte slots, at most half full) here:
/// most look-ups on Chinese are of pairs that are not there, which hashbrown answers from
/// its 1-byte control array (256 KB for o200k, in L2) without touching the 4 MB of slots;
/// o200k Chinese ran at 14-17 MB/s with open addressing, 20 MB/s with hashbrown.
#[derive(Default)]
struct PairTable {
    map: FxHashMap<u64, (u32, TokenId)>,
}

impl PairTable {
    #[inline]
    fn get(&self, a: TokenId, b: TokenId) -> (u32, TokenId) {
        match self.map.get(&pair_key(a, b)) {
            Some(&p) => p,
            None => (NONE, NONE),
        }
    }

    /// Inserts unless the pair is there already (a repeated merge keeps its first priority).
    fn insert_first(&mut self, a: TokenId, b: TokenId, value: (u32, TokenId)) {
        self.map.entry(pair_key(a, b)).or_insert(value);
    }
}

impl Encoder {
    /// Builds an encoder.
    ///
    /// `vocab` holds the regular tokens (id, bytes): all 256 single bytes and unique bytes.
    /// `merges` in priority order, or `None` for a rank table (tiktoken's rule).
    /// `specials` are (token bytes, id); `pattern` a name or a regex (see `split`).
    pub fn new(
        vocab: Vec<(TokenId, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
        specials: Vec<(Vec<u8>, TokenId)>,
        pattern: &str,
    ) -> Result<Self, Error> {
        Self::build(vocab, merges, specials, pattern, false)
    }

    /// [`Encoder::new`], and with `ignore_merges` (HuggingFace's BPE option, Llama 3's
    /// tokenizer.json) a pre-token that is itself a token is that token before any merge,
    /// in merges mode too; rank mode always does so (tiktoken's rule).
    pub fn build(
        vocab: Vec<(TokenId, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
        specials: Vec<(Vec<u8>, TokenId)>,
        pattern: &str,
        ignore_merges: bool,
    ) -> Result<Self, Error> {
        let splitter = Splitter::new(pattern)?;
        let builtin_pattern = splitter.is_builtin();

        let mut ids: FxHashMap<&[u8], TokenId> = FxHashMap::default();
        ids.reserve(vocab.len());
        let mut max_id = 0usize;
        for (id, b) in &vocab {
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

        let mut pairs = PairTable::default();
        // TokenId mode: filled below, in rank order, with each token's canonical merge.
        if let Some(merges) = merges {
            let mut ab = Vec::new();
            for (prio, (a, b)) in merges.iter().enumerate() {
                ab.clear();
                ab.extend_from_slice(a);
                ab.extend_from_slice(b);
                // A merge into a special token's bytes cannot apply: specials are never
                // part of a merge.
                let (Some(&ia), Some(&ib), Some(&iab)) = (
                    ids.get(a.as_slice()),
                    ids.get(b.as_slice()),
                    ids.get(ab.as_slice()),
                ) else {
                    continue;
                };
                // A repeated merge keeps its first (highest) priority.
                pairs.insert_first(ia, ib, (prio as u32, iab));
            }
        }

        let mut bytes = Vec::new();
        let mut spans = vec![(1u32, 0u32); max_id + 1];
        for (id, b) in &vocab {
            spans[*id as usize] = (bytes.len() as u32, (bytes.len() + b.len()) as u32);
            bytes.extend_from_slice(b);
        }
        for (t, id) in &specials {
            spans[*id as usize] = (bytes.len() as u32, (bytes.len() + t.len()) as u32);
            bytes.extend_from_slice(t);
        }

        let max_special_len = specials.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
        let (special_longest, special_any) = if specials.is_empty() {
            (None, None)
        } else {
            let pats: Vec<&[u8]> = specials.iter().map(|(t, _)| t.as_slice()).collect();
            (
                Some(build_ac(&pats, MatchKind::LeftmostLongest)),
                Some(build_ac(&pats, MatchKind::Standard)),
            )
        };

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
            special_longest,
            special_any,
            max_special_len,
            splitter,
            builtin_pattern,
            rank_mode: merges.is_none(),
            rank_merges: Vec::new(),
            chars: None,
            cache: ThreadLocal::new(),
        };
        // Merges mode: the whole-token short-cut is exact only for tokens that BPE rebuilds
        // from their bytes. TokenId mode and `ignore_merges`: the rule *is* the short-cut first
        // (a pre-token that is a token is that token), even for tokens no merge reaches;
        // Llama 3's rank table has such tokens.
        enc.fill_byte_pairs();
        // Each token's last merge (left, right, priority) if BPE of its bytes is itself.
        let splits: Vec<Option<(TokenId, TokenId, u32)>> = match merges {
            None => enc.build_rank_table(&vocab),
            Some(_) => vocab.iter().map(|(id, t)| enc.last_merge(*id, t)).collect(),
        };
        let valid: Vec<bool> = vocab
            .iter()
            .zip(&splits)
            .map(|((_, t), split)| t.len() == 1 || split.is_some())
            .collect();
        enc.chars = CharStart::new(&enc, &vocab, &splits, &valid, merges);
        let mut whole = FxHashMap::default();
        whole.reserve(vocab.len());
        let mut whole_long = FxHashMap::default();
        let (mut unbuilt, mut unbuilt_long) = (FxHashMap::default(), FxHashMap::default());
        for ((id, t), built) in vocab.into_iter().zip(valid) {
            // Merges mode: only tokens BPE rebuilds take the short-cut (see above).
            if !built && merges.is_some() && !ignore_merges {
                continue;
            }
            match short_key(&t) {
                Some(k) => {
                    if !built {
                        unbuilt.insert(k, id);
                    }
                    whole.insert(k, id);
                }
                None => {
                    if !built {
                        unbuilt_long.insert(t.clone(), id);
                    }
                    whole_long.insert(t, id);
                }
            }
        }
        enc.whole = whole;
        enc.whole_long = whole_long;
        enc.unbuilt = unbuilt;
        enc.unbuilt_long = unbuilt_long;
        Ok(enc)
    }

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
    fn build_rank_table(
        &mut self,
        vocab: &[(TokenId, Vec<u8>)],
    ) -> Vec<Option<(TokenId, TokenId, u32)>> {
        let mut splits = vec![None; vocab.len()];
        let mut order: Vec<(usize, TokenId, &[u8], usize)> = vocab
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| t.len() > 1)
            .map(|(i, (id, t))| (t.len(), *id, t.as_slice(), i))
            .collect();
        order.sort_unstable();
        let mut parts = Vec::new();
        for (_, id, t, i) in order {
            parts.clear();
            self.bpe(t, &mut parts);
            // Fewer than two parts cannot happen (t is not in the table yet).
            if let [a, b] = parts[..] {
                self.pairs.insert_first(a, b, (id, id));
                if t.len() == 2 {
                    self.byte_pairs[(t[0] as usize) << 8 | t[1] as usize] = (id, id);
                }
                splits[i] = Some((a, b, id));
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

    /// Merges mode: the last merge `(left, right, priority)` of BPE on `token`'s bytes, if
    /// that BPE ends in `id` itself (single bytes have none). Runs the scan until two parts
    /// are left: one more merge ends BPE, and only if it makes `id` is the token valid.
    fn last_merge(&self, id: TokenId, token: &[u8]) -> Option<(TokenId, TokenId, u32)> {
        let mut ids: Vec<TokenId> = token.iter().map(|&b| self.byte_ids[b as usize]).collect();
        while ids.len() > 2 {
            let (p, at) = (0..ids.len() - 1)
                .map(|i| (self.pair(ids[i], ids[i + 1]).0, i))
                .min()?;
            if p == NONE {
                return None;
            }
            ids[at] = self.pair(ids[at], ids[at + 1]).1;
            ids.remove(at + 1);
        }
        let [a, b] = ids[..] else { return None };
        let (p, m) = self.pair(a, b);
        (m == id && p != NONE).then_some((a, b, p))
    }

    /// This encoder without BPE from whole characters (`on == false`), to compare the two
    /// in tests and profiles; the ids are the same either way.
    #[doc(hidden)]
    pub fn with_char_start(mut self, on: bool) -> Self {
        if !on {
            self.chars = None;
        }
        self
    }

    /// The special tokens (bytes, id), in the order given.
    pub fn special_tokens(&self) -> &[(Vec<u8>, TokenId)] {
        &self.specials
    }

    /// Whether the pattern is a built-in one (its safe cut points are known; see `stream`).
    pub fn builtin_pattern(&self) -> bool {
        self.builtin_pattern
    }

    /// The longest special token, in bytes (0 when there are none).
    pub fn max_special_len(&self) -> usize {
        self.max_special_len
    }

    /// Every occurrence of any special token, for code that must not cut through one.
    pub fn special_occurrences(&self) -> Option<&AhoCorasick> {
        self.special_any.as_ref()
    }

    /// One more than the largest id.
    pub fn vocab_size(&self) -> usize {
        self.spans.len()
    }

    /// Whether this encoder follows tiktoken's rank rule.
    pub fn rank_mode(&self) -> bool {
        self.rank_mode
    }

    #[inline]
    fn pair(&self, a: TokenId, b: TokenId) -> (u32, TokenId) {
        self.pairs.get(a, b)
    }

    /// The pair table's entry for two single bytes.
    #[inline]
    fn byte_pair(&self, x: u8, y: u8) -> (u32, TokenId) {
        self.byte_pairs[(x as usize) << 8 | y as usize]
    }

    /// Fills `byte_pairs` from `pairs` (merges mode; rank mode adds them as it goes).
    fn fill_byte_pairs(&mut self) {
        for x in 0..=255u8 {
            for y in 0..=255u8 {
                self.byte_pairs[(x as usize) << 8 | y as usize] = self
                    .pairs
                    .get(self.byte_ids[x as usize], self.byte_ids[y as usize]);
            }
        }
    }

    /// BPE of one pre-token, appended to `out`: no short-cuts, no cache.
    pub fn bpe(&self, piece: &[u8], out: &mut Vec<TokenId>) {
        if piece.len() <= SHORT {
            self.bpe_short(piece, out)
        } else {
            self.bpe_long(piece, out)
        }
    }

    #[inline]
    fn bpe_short(&self, piece: &[u8], out: &mut Vec<TokenId>) {
        self.bpe_short_with(piece, out, |a, b| self.pair(a, b))
    }

    #[inline]
    fn bpe_short_with(
        &self,
        piece: &[u8],
        out: &mut Vec<TokenId>,
        pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) {
        if piece.len() <= TINY {
            self.bpe_scan::<TINY>(piece, out, pair)
        } else {
            self.bpe_scan::<SHORT>(piece, out, pair)
        }
    }

    /// A pair look-up through the thread's pair cache. Long Chinese pre-tokens (o200k's
    /// runs of Han characters) make several look-ups per character, most of them in the
    /// 4 MB table, missing L2; the few thousand pairs of common characters are answered
    /// from here instead. Only for a finished table: absent pairs are cached too.
    #[inline]
    fn hot_pair(&self, hot: &mut [(u64, u32, TokenId)], a: TokenId, b: TokenId) -> (u32, TokenId) {
        let key = ((a as u64) << 32) | b as u64;
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PAIR_CACHE_BITS)) as usize;
        let slot = &mut hot[i];
        if slot.0 != key {
            let (p, m) = self.pair(a, b);
            *slot = (key, p, m);
        }
        (slot.1, slot.2)
    }

    /// tiktoken's scan: find the lowest pair, merge, update its neighbours. O(n * merges),
    /// fastest for short pieces since everything stays in two small stack arrays.
    fn bpe_scan<const N: usize>(
        &self,
        piece: &[u8],
        out: &mut Vec<TokenId>,
        pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) {
        let n = piece.len();
        if n == 0 {
            return;
        }
        let mut ids = [0 as TokenId; N];
        // prio[i] is the pair (ids[i], ids[i + 1]).
        let mut prio = [(NONE, NONE); N];
        for (slot, &b) in ids.iter_mut().zip(piece) {
            *slot = self.byte_ids[b as usize];
        }
        for i in 0..n - 1 {
            prio[i] = self.byte_pair(piece[i], piece[i + 1]);
        }
        let n = merge_scan(&mut ids, &mut prio, n, pair);
        out.extend_from_slice(&ids[..n]);
    }

    /// Linked list of parts plus a min-heap of (priority, position) with lazy invalidation:
    /// an entry is stale when the pair now at its position has another priority.
    /// Positions are byte offsets, so heap order on ties is leftmost first. O(n log n).
    fn bpe_long(&self, piece: &[u8], out: &mut Vec<TokenId>) {
        let n = piece.len();
        let end = n as u32;
        let mut ids: Vec<TokenId> = piece.iter().map(|&b| self.byte_ids[b as usize]).collect();
        let mut next: Vec<u32> = (1..=end).collect();
        let mut prev: Vec<u32> = (0..end).map(|i| i.wrapping_sub(1)).collect();
        let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            let (p, _) = self.byte_pair(piece[i], piece[i + 1]);
            if p != NONE {
                heap.push(Reverse(((p as u64) << 32) | i as u64));
            }
        }
        while let Some(Reverse(entry)) = heap.pop() {
            let (p, at) = ((entry >> 32) as u32, (entry & 0xffff_ffff) as usize);
            let right = next[at];
            // Dead nodes have next == NONE; the last node has next == end.
            if right >= end {
                continue;
            }
            let (cur, merged) = self.pair(ids[at], ids[right as usize]);
            if cur != p {
                continue;
            }
            ids[at] = merged;
            let after = next[right as usize];
            next[right as usize] = NONE;
            next[at] = after;
            if after < end {
                prev[after as usize] = at as u32;
                let (q, _) = self.pair(merged, ids[after as usize]);
                if q != NONE {
                    heap.push(Reverse(((q as u64) << 32) | at as u64));
                }
            }
            let before = prev[at];
            if before != NONE {
                let (q, _) = self.pair(ids[before as usize], merged);
                if q != NONE {
                    heap.push(Reverse(((q as u64) << 32) | before as u64));
                }
            }
        }
        let mut i = 0;
        while i < n {
            out.push(ids[i]);
            i = next[i] as usize;
        }
    }

    /// BPE from whole characters when the piece qualifies (see `chars`); `false` if not.
    #[inline]
    fn bpe_chars(
        &self,
        piece: &[u8],
        hot: &mut [(u64, u32, TokenId)],
        scratch: &mut Scratch,
        out: &mut Vec<TokenId>,
    ) -> bool {
        match &self.chars {
            // Only pieces with a multi-byte character gain.
            Some(cs) if !piece.is_ascii() => {
                cs.bpe(self, piece, out, scratch, |a, b| self.hot_pair(hot, a, b))
            }
            _ => false,
        }
    }

    /// Encodes one pre-token: the cache, then the whole-token look-up, then BPE (pieces with
    /// a multi-byte character skip the look-up, and those that start with a CJK ideograph
    /// the cache too: see [`Encoder::encode_non_ascii`]). Only the cache's hit is inlined
    /// into the splitter's loop; the rest is a call of its own.
    #[inline(always)]
    fn encode_piece(&self, piece: &[u8], cache: &mut PieceCache, out: &mut Vec<TokenId>) {
        let Some(key) = short_key(piece) else {
            return self.encode_long_piece(piece, cache, out);
        };
        // Pieces that start with a CJK ideograph skip the cache (see `encode_non_ascii`).
        if matches!(piece[0], 0xE4..=0xE9) && self.chars.is_some() {
            return self.encode_non_ascii(piece, Some(key), cache, out);
        }
        let index = PieceCache::set(key);
        let set = &mut cache.sets[index].0;
        let unlabelled = |slot: &Slot| slot.key & !(0xF << COUNT_SHIFT);
        if unlabelled(&set[0]) != key {
            if unlabelled(&set[1]) != key {
                return self.encode_missed_piece(piece, key, index, cache, out);
            }
            set.swap(0, 1);
        }
        let slot = &set[0];
        // Fixed-size copies: a variable-length one is a call to memcpy.
        match (slot.key >> COUNT_SHIFT) as usize {
            1 => out.push(slot.ids[0]),
            2 => out.extend_from_slice(&slot.ids[..2]),
            3 => out.extend_from_slice(&slot.ids[..3]),
            _ => out.extend_from_slice(&slot.ids),
        }
    }

    /// A short piece the cache does not hold: the whole-token table, else BPE; then cached
    /// in the front slot of its set.
    #[inline(never)]
    fn encode_missed_piece(
        &self,
        piece: &[u8],
        key: u128,
        index: usize,
        cache: &mut PieceCache,
        out: &mut Vec<TokenId>,
    ) {
        let start = out.len();
        // Any byte of the piece (the length byte is below 16) at 0x80 or above.
        const HIGH: u128 = 0x0080_8080_8080_8080_8080_8080_8080_8080;
        if key & HIGH != 0 && self.chars.is_some() {
            self.encode_non_ascii(piece, Some(key), cache, out);
        } else {
            match self.whole.get(&key) {
                Some(&id) => out.push(id),
                None => self.bpe_uncached(piece, cache, out),
            }
        }
        let got = &out[start..];
        if got.len() <= CACHE_IDS {
            let set = &mut cache.sets[index].0;
            set[1] = set[0];
            set[0].key = key | (got.len() as u128) << COUNT_SHIFT;
            set[0].ids[..got.len()].copy_from_slice(got);
        }
    }

    /// A piece of 16 bytes or more: never cached.
    #[inline(never)]
    fn encode_long_piece(&self, piece: &[u8], cache: &mut PieceCache, out: &mut Vec<TokenId>) {
        if self.chars.is_some() && !piece.is_ascii() {
            return self.encode_non_ascii(piece, None, cache, out);
        }
        match self.whole_long.get(piece) {
            Some(&id) => out.push(id),
            None => self.bpe_uncached(piece, cache, out),
        }
    }

    /// A piece with a multi-byte character, by BPE from whole characters without a look-up
    /// in the whole-token table: BPE rebuilds every token but the `unbuilt` ones (none in
    /// tiktoken's vocabularies), so the result is the same, and the table's cache miss (8 MB
    /// under o200k) is saved while BPE from characters starts from a table in L2 (256 KB).
    /// Paired, against the look-up first, pieces of up to 15 bytes: Chinese 1.02-1.04x, the
    /// multilingual corpus 1.01-1.03x; then longer pieces too: o200k Chinese 1.05-1.13x,
    /// gpt2 1.02x, multilingual 1.00x.
    ///
    /// Pieces that start with a CJK ideograph (lead bytes 0xE4-0xE9: U+4000-U+9FFF) come
    /// here without trying the piece cache. Chinese has tens of thousands of distinct short
    /// pieces, so a hit is mostly a load from L3, and BPE from characters costs less: most
    /// Han characters are one token and few pairs merge (0.3 a piece under o200k). Paired:
    /// gpt2 Chinese 1.26x, cl100k 1.12x, o200k 1.13x; a stream of new Chinese 1.17x (o200k),
    /// 1.27x (gpt2); the multilingual corpus 0.99-1.02x, English unchanged. Every non-ASCII
    /// piece past the cache instead ran the multilingual corpus at 0.82x (o200k) and 0.88x
    /// (cl100k): in Arabic, Cyrillic or Hangul a piece merges many times, and a hit pays.
    #[inline(never)]
    fn encode_non_ascii(
        &self,
        piece: &[u8],
        key: Option<u128>,
        cache: &mut PieceCache,
        out: &mut Vec<TokenId>,
    ) {
        let unbuilt = match key {
            Some(k) => self.unbuilt.get(&k),
            None => self.unbuilt_long.get(piece),
        };
        match unbuilt {
            Some(&id) => out.push(id),
            None => self.bpe_uncached(piece, cache, out),
        }
    }

    /// BPE of a piece that is not one token: from whole characters when it qualifies, else
    /// the scan or (long pieces) the heap, with pair look-ups through the thread's cache.
    #[inline(always)]
    fn bpe_uncached(&self, piece: &[u8], cache: &mut PieceCache, out: &mut Vec<TokenId>) {
        if self.bpe_chars(piece, &mut cache.pairs, &mut cache.scratch, out) {
            return;
        }
        if piece.len() <= SHORT {
            let hot = &mut cache.pairs;
            self.bpe_short_with(piece, out, |a, b| self.hot_pair(hot, a, b))
        } else {
            self.bpe_long(piece, out)
        }
    }

    /// Encodes text, treating special-token text as plain text. Appends to `out`.
    pub fn encode_ordinary_into(&self, text: &[u8], out: &mut Vec<TokenId>) {
        let mut cache = self.cache.get_or_default().borrow_mut();
        let tiled = EncodeTiles {
            encoder: self,
            text,
            cache: &mut cache,
            out,
        };
        if self.splitter.with_piece_end(tiled).is_none() {
            self.splitter
                .for_each(text, |piece| self.encode_piece(piece, &mut cache, out));
        }
    }

    /// Encodes text, treating special-token text as plain text.
    pub fn encode_ordinary(&self, text: &[u8]) -> Vec<TokenId> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_ordinary_into(text, &mut out);
        out
    }

    /// The first occurrence of a disallowed special token, as an error.
    pub fn check_disallowed(&self, text: &[u8], policy: &SpecialPolicy) -> Result<(), Error> {
        let Some(ac) = &self.special_any else {
            return Ok(());
        };
        if !policy.any_disallowed() {
            return Ok(());
        }
        for m in ac.find_overlapping_iter(text) {
            let i = m.pattern().as_usize();
            if policy.disallowed[i] {
                return Err(Error::DisallowedSpecial {
                    token: String::from_utf8_lossy(&self.specials[i].0).into_owned(),
                });
            }
        }
        Ok(())
    }

    /// Calls `f` on each plain run and each allowed special token (by index), in order:
    /// allowed tokens are found leftmost-longest; the others stay plain text.
    pub fn for_each_segment<'a>(
        &self,
        text: &'a [u8],
        policy: &SpecialPolicy,
        mut f: impl FnMut(Result<&'a [u8], usize>),
    ) {
        let ac_owned;
        let ac = if !policy.any_allowed() {
            None
        } else if policy.allowed.iter().all(|&a| a) {
            self.special_longest.as_ref()
        } else {
            let pats: Vec<&[u8]> = self
                .specials
                .iter()
                .zip(&policy.allowed)
                .filter(|(_, &a)| a)
                .map(|((t, _), _)| t.as_slice())
                .collect();
            ac_owned = build_ac(&pats, MatchKind::LeftmostLongest);
            Some(&ac_owned)
        };
        let Some(ac) = ac else {
            if !text.is_empty() {
                f(Ok(text));
            }
            return;
        };
        let index: Vec<usize> = (0..self.specials.len())
            .filter(|&i| policy.allowed[i])
            .collect();
        let mut pos = 0;
        for m in ac.find_iter(text) {
            if m.start() > pos {
                f(Ok(&text[pos..m.start()]));
            }
            f(Err(index[m.pattern().as_usize()]));
            pos = m.end();
        }
        if pos < text.len() {
            f(Ok(&text[pos..]));
        }
    }

    /// Encodes text with the special-token policy. Appends to `out`.
    pub fn encode_into(
        &self,
        text: &[u8],
        policy: &SpecialPolicy,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        self.check_disallowed(text, policy)?;
        if !policy.any_allowed() {
            self.encode_ordinary_into(text, out);
            return Ok(());
        }
        self.for_each_segment(text, policy, |seg| match seg {
            Ok(plain) => self.encode_ordinary_into(plain, out),
            Err(i) => out.push(self.specials[i].1),
        });
        Ok(())
    }

    /// Encodes text with the special-token policy.
    pub fn encode(&self, text: &[u8], policy: &SpecialPolicy) -> Result<Vec<TokenId>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, policy, &mut out)?;
        Ok(out)
    }

    /// Encodes one long text in steps, for files that cannot be cut: after the piece that
    /// ends at or past each `step` bytes, `sink(ids, done)` gets the ids so far (to take
    /// them away) and how many bytes of `text` they cover; it stops the work by returning
    /// an error. Memory stays bounded by `step` whatever the length of `text`.
    /// `text_utf8`, when given, is `text` known to be UTF-8, so a custom regex does not
    /// validate it again. Unlike [`Encoder::encode`], this does not look for disallowed
    /// special tokens: call [`Encoder::check_disallowed`] first (in steps of its own, if
    /// the text is a memory-mapped file, as `encode_file` does).
    pub fn encode_in_steps(
        &self,
        text: &[u8],
        text_utf8: Option<&str>,
        policy: &SpecialPolicy,
        step: usize,
        sink: &mut IdSink,
    ) -> Result<(), Error> {
        let base = text.as_ptr() as usize;
        let mut out = Vec::new();
        let mut next = step;
        let mut stop = None;
        let mut cache = self.cache.get_or_default().borrow_mut();
        // Encode one piece; hand the ids over once past the next step.
        let mut piece = |p: &[u8], out: &mut Vec<TokenId>| {
            self.encode_piece(p, &mut cache, out);
            let done = p.as_ptr() as usize - base + p.len();
            if done >= next {
                next = done + step;
                if let Err(e) = sink(out, done) {
                    return ControlFlow::Break(e);
                }
            }
            ControlFlow::Continue(())
        };
        self.for_each_segment(text, policy, |seg| {
            if stop.is_some() {
                return;
            }
            let flow = match seg {
                Err(i) => {
                    out.push(self.specials[i].1);
                    ControlFlow::Continue(())
                }
                Ok(plain) => {
                    let from = plain.as_ptr() as usize - base;
                    match text_utf8.and_then(|s| s.get(from..from + plain.len())) {
                        Some(s) => self.splitter.try_for_each_str(s, |p| piece(p, &mut out)),
                        None => self.splitter.try_for_each(plain, |p| piece(p, &mut out)),
                    }
                }
            };
            if let ControlFlow::Break(e) = flow {
                stop = Some(e);
            }
        });
        match stop {
            Some(e) => Err(e),
            None => sink(&mut out, text.len()),
        }
    }

    /// Encodes text and gives each token's byte span `(start, end)` in `text`.
    pub fn encode_with_spans(
        &self,
        text: &[u8],
        policy: &SpecialPolicy,
    ) -> Result<(Vec<TokenId>, Vec<Span>), Error> {
        self.check_disallowed(text, policy)?;
        let mut ids = Vec::new();
        let mut spans = Vec::new();
        let base = text.as_ptr() as usize;
        let mut cache = self.cache.get_or_default().borrow_mut();
        self.for_each_segment(text, policy, |seg| match seg {
            Ok(plain) => self.splitter.for_each(plain, |piece| {
                let mut at = piece.as_ptr() as usize - base;
                let from = ids.len();
                self.encode_piece(piece, &mut cache, &mut ids);
                for &id in &ids[from..] {
                    let (s, e) = self.spans[id as usize];
                    let len = (e - s) as usize;
                    spans.push((at, at + len));
                    at += len;
                }
            }),
            Err(i) => {
                let start = spans.last().map_or(0, |s: &(usize, usize)| s.1);
                // Specials sit right after the previous token (or a plain run's end).
                let start = find_from(text, &self.specials[i].0, start);
                spans.push((start, start + self.specials[i].0.len()));
                ids.push(self.specials[i].1);
            }
        });
        Ok((ids, spans))
    }

    /// The bytes of one token, or `None` for an unknown id.
    #[inline]
    pub fn token_bytes(&self, id: TokenId) -> Option<&[u8]> {
        let &(s, e) = self.spans.get(id as usize)?;
        if s > e {
            return None;
        }
        Some(&self.bytes[s as usize..e as usize])
    }

    /// Concatenates the tokens' bytes; an unknown id is an error naming it.
    pub fn decode_bytes(&self, ids: &[TokenId]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let b = self
                .token_bytes(id)
                .ok_or(Error::UnknownId { id: id as u64 })?;
            out.extend_from_slice(b);
        }
        Ok(out)
    }

    /// The canonical merge list of a rank table: for each multi-byte token in rank order, the
    /// two parts tiktoken's BPE of its bytes ends in before it makes the token (see
    /// [`Encoder::build_rank_table`]). A token that does not end in two parts (unreachable by
    /// merges) gets no merge. Empty in merges mode.
    pub fn merges_from_ranks(&self) -> Vec<(&[u8], &[u8])> {
        self.rank_merges
            .iter()
            .map(|&(a, b)| {
                (
                    self.token_bytes(a).expect("a merge part is a token"),
                    self.token_bytes(b).expect("a merge part is a token"),
                )
            })
            .collect()
    }
}

/// [`Encoder::encode_ordinary_into`]'s loop over the pieces of a built-in splitter.
struct EncodeTiles<'a> {
    encoder: &'a Encoder,
    text: &'a [u8],
    cache: &'a mut PieceCache,
    out: &'a mut Vec<TokenId>,
}

impl TileLoop for EncodeTiles<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self, piece_end: impl Fn(&[u8], usize) -> usize + Copy) {
        let text = self.text;
        let mut start = 0;
        while start < text.len() {
            let end = piece_end(text, start);
            self.encoder
                .encode_piece(&text[start..end], self.cache, self.out);
            start = end;
        }
    }
}

/// The scan's merge loop over `n` parts `ids[..n]` whose pairs are `prio[..n - 1]`
/// (`(priority, merged id)`): merges the lowest pair, leftmost on ties, until none is left;
/// returns the number of parts.
#[inline]
fn merge_scan<const N: usize>(
    ids: &mut [TokenId; N],
    prio: &mut [(u32, TokenId); N],
    mut n: usize,
    mut pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
) -> usize {
    while n > 1 {
        let (best, at) = lowest_pair(&prio[..n - 1]);
        if best == NONE {
            break;
        }
        n = merge_at(ids, prio, n, at, &mut pair);
    }
    n
}

/// The lowest priority among `prio` and its position, leftmost on ties (`NONE` if none).
#[inline(always)]
fn lowest_pair(prio: &[(u32, TokenId)]) -> (u32, usize) {
    let (mut best, mut at) = (NONE, 0);
    for (i, p) in prio.iter().enumerate() {
        if p.0 < best {
            best = p.0;
            at = i;
        }
    }
    (best, at)
}

/// Merges the pair at `at` of `n` parts: the merged id replaces the left part, the rest
/// shift left, and the merged part's pairs with its neighbours are looked up. Returns the
/// new number of parts.
#[inline(always)]
fn merge_at<const N: usize>(
    ids: &mut [TokenId; N],
    prio: &mut [(u32, TokenId); N],
    mut n: usize,
    at: usize,
    pair: &mut impl FnMut(TokenId, TokenId) -> (u32, TokenId),
) -> usize {
    ids[at] = prio[at].1;
    // Element by element: the pieces are short, and copy_within is a call to memmove
    // (11 M of 140 M instructions on English under o200k).
    for i in at + 1..n - 1 {
        ids[i] = ids[i + 1];
    }
    for i in at + 1..n.saturating_sub(2) {
        prio[i] = prio[i + 1];
    }
    n -= 1;
    if at + 1 < n {
        prio[at] = pair(ids[at], ids[at + 1]);
    }
    if at > 0 {
        prio[at - 1] = pair(ids[at - 1], ids[at]);
    }
    n
}

fn build_ac(pats: &[&[u8]], kind: MatchKind) -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(kind)
        .build(pats)
        .expect("special tokens are few and short")
}

/// The first position at or after `from` where `needle` occurs (it is known to occur).
fn find_from(text: &[u8], needle: &[u8], from: usize) -> usize {
    (from..=text.len() - needle.len())
        .find(|&i| text[i..].starts_with(needle))
        .unwrap_or(from)
}

/// Python-string offsets: the character index of each byte span's start and end, where a
/// token that starts or ends inside a multi-byte character gets that whole character.
pub fn char_spans(text: &[u8], spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // char_of[b] = index of the character that byte b belongs to; one pass over the text.
    let mut char_of = Vec::with_capacity(text.len() + 1);
    let mut c = 0usize;
    for (i, &b) in text.iter().enumerate() {
        // A UTF-8 continuation byte belongs to the character before it (invalid bytes
        // never reach here: Python strings are valid UTF-8 once surrogates are replaced).
        if i > 0 && (b & 0xC0) != 0x80 {
            c += 1;
        }
        char_of.push(c);
    }
    let n_chars = if text.is_empty() { 0 } else { c + 1 };
    spans
        .iter()
        .map(|&(s, e)| {
            if s >= e {
                let at = if s < text.len() { char_of[s] } else { n_chars };
                return (at, at);
            }
            (char_of[s], char_of[e - 1] + 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Lcg;

    fn bytes_vocab() -> Vec<(TokenId, Vec<u8>)> {
        // Deliberately not identity: byte b gets id 255 - b.
        (0..256u32).map(|b| (255 - b, vec![b as u8])).collect()
    }

    fn merges_encoder(merges: &[(&str, &str)], extra: &[(TokenId, &str)]) -> Encoder {
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

    #[test]
    fn merges_apply_by_priority_not_position() {
        // "abc": (b, c) has priority 0, so it wins over (a, b).
        let enc = merges_encoder(&[("b", "c"), ("a", "b")], &[(300, "bc"), (301, "ab")]);
        assert_eq!(enc.encode_ordinary(b"abc"), vec![255 - 97, 300]);
        assert_eq!(enc.encode_ordinary(b"ab"), vec![301]);
    }

    #[test]
    fn ties_go_leftmost() {
        // "aaa" with one merge (a, a): the left pair merges first, leaving [aa, a].
        let enc = merges_encoder(&[("a", "a")], &[(400, "aa")]);
        assert_eq!(enc.encode_ordinary(b"aaa"), vec![400, 255 - 97]);
    }

    #[test]
    fn a_token_not_reachable_by_merges_is_not_a_shortcut() {
        // "abc" is in the vocab but no merge builds it: BPE gives [ab, c].
        let enc = merges_encoder(&[("a", "b")], &[(300, "ab"), (301, "abc")]);
        assert_eq!(enc.encode_ordinary(b"abc"), vec![300, 255 - 99]);
    }

    #[test]
    fn long_path_equals_short_path() {
        let enc = merges_encoder(
            &[("a", "a"), ("aa", "aa"), ("a", "b"), ("aaaa", "ab")],
            &[(300, "aa"), (301, "aaaa"), (302, "ab"), (303, "aaaaab")],
        );
        for n in [1, 2, 3, 5, 17, 63, 64, 65, 200, 1001] {
            let mut piece = vec![b'a'; n];
            piece.extend_from_slice(b"ab");
            let (mut short, mut long) = (Vec::new(), Vec::new());
            if piece.len() <= SHORT {
                enc.bpe_short(&piece, &mut short);
            } else {
                // The scan works for any length; compare it with the heap on long inputs too.
                let mut ids: Vec<TokenId> =
                    piece.iter().map(|&b| enc.byte_ids[b as usize]).collect();
                loop {
                    let best = (0..ids.len().saturating_sub(1))
                        .map(|i| (enc.pair(ids[i], ids[i + 1]), i))
                        .min_by_key(|((p, _), i)| (*p, *i));
                    match best {
                        Some(((p, m), i)) if p != NONE => {
                            ids[i] = m;
                            ids.remove(i + 1);
                        }
                        _ => break,
                    }
                }
                short = ids;
            }
            enc.bpe_long(&piece, &mut long);
            assert_eq!(short, long, "n = {n}");
        }
    }

    #[test]
    fn piece_cache_answers_equal_bpe_through_evictions() {
        // Pieces of 1-15 bytes from a small alphabet: many more than the cache holds, so
        // sets fill, evict and swap their two slots; each answer must be plain BPE's.
        let enc = merges_encoder(
            &[
                ("a", "b"),
                ("ab", "c"),
                ("c", "a"),
                ("d", "d"),
                ("dd", "ab"),
                ("b", "b"),
            ],
            &[
                (300, "ab"),
                (301, "abc"),
                (302, "ca"),
                (303, "dd"),
                (304, "ddab"),
                (305, "bb"),
            ],
        );
        let mut cache = PieceCache::default();
        let mut rng = Lcg(12345);
        let pieces: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                (0..1 + rng.below(15))
                    .map(|_| b"abcd"[rng.below(4)])
                    .collect()
            })
            .collect();
        for round in 0..3 {
            for i in 0..pieces.len() {
                // Later rounds revisit pieces out of order, so some are still cached.
                let piece = &pieces[if round == 0 {
                    i
                } else {
                    rng.below(pieces.len())
                }];
                let (mut cached, mut plain) = (Vec::new(), Vec::new());
                enc.encode_piece(piece, &mut cache, &mut cached);
                enc.bpe(piece, &mut plain);
                assert_eq!(cached, plain, "{:?}", String::from_utf8_lossy(piece));
            }
        }
    }

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
        let enc = Encoder::new(vocab, None, vec![], r"\S+|\s+").unwrap();
        assert_eq!(enc.encode_ordinary(b"xyz"), vec![256]);
        assert_eq!(enc.encode_ordinary(b"xyzw"), vec![120, 121, 122, 119]);
        assert!(enc.merges_from_ranks().is_empty());
    }

    /// tiktoken's algorithm as it is written: merge the adjacent pair whose concatenation
    /// has the lowest rank, leftmost on ties, until none is a token.
    fn tiktoken_bpe(ranks: &FxHashMap<Vec<u8>, TokenId>, piece: &[u8]) -> Vec<TokenId> {
        if let Some(&id) = ranks.get(piece) {
            return vec![id];
        }
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
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

    #[test]
    fn non_ascii_pieces_take_a_whole_token_only_where_tiktoken_does() {
        // TokenId mode: no merge builds these (the vocab has no token of two bytes), but
        // tiktoken's rule gives a pre-token equal to one its id. Non-ASCII pieces skip the
        // whole-token table, so this checks the road they take instead, for a piece that
        // starts with a CJK ideograph (no piece cache), another short one (through the
        // cache, twice: miss then hit) and one past 15 bytes.
        let long = "中文中文中文".as_bytes();
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        vocab.extend([
            (256, "中文".as_bytes().to_vec()),
            (257, "éé".as_bytes().to_vec()),
            (258, long.to_vec()),
        ]);
        let enc = Encoder::new(vocab, None, vec![], r"\S+|\s+").unwrap();
        assert!(enc.chars.is_some());
        assert_eq!(enc.encode_ordinary("中文".as_bytes()), vec![256]);
        assert_eq!(enc.encode_ordinary("éé".as_bytes()), vec![257]);
        assert_eq!(enc.encode_ordinary("éé".as_bytes()), vec![257]);
        assert_eq!(enc.encode_ordinary(long), vec![258]);
        // Inside a longer piece no merge makes them: bytes.
        let bytes = |s: &str| s.bytes().map(TokenId::from).collect::<Vec<_>>();
        assert_eq!(enc.encode_ordinary("中文中".as_bytes()), bytes("中文中"));
        assert_eq!(enc.encode_ordinary("ééé".as_bytes()), bytes("ééé"));

        // Merges mode: a token no merge builds is never a short-cut, non-ASCII or not.
        let enc = merges_encoder(&[], &[(300, "中文"), (301, "éé"), (302, "中文中文中文")]);
        let bytes = |s: &str| {
            s.bytes()
                .map(|b| 255 - TokenId::from(b))
                .collect::<Vec<_>>()
        };
        for s in ["中文", "éé", "中文中文中文"] {
            assert_eq!(enc.encode_ordinary(s.as_bytes()), bytes(s), "{s}");
        }
    }

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

    #[test]
    fn short_key_is_the_bytes_zero_padded_then_the_length() {
        let text: Vec<u8> = (1..=20).collect();
        for start in 0..4 {
            for n in 0..=16 {
                let piece = &text[start..start + n];
                let mut buf = [0u8; 16];
                if n <= 15 {
                    buf[..n].copy_from_slice(piece);
                    buf[15] = n as u8;
                }
                let want = (n <= 15).then(|| u128::from_le_bytes(buf));
                assert_eq!(short_key(piece), want, "n = {n}");
            }
        }
    }

    #[test]
    fn char_spans_cover_multibyte_chars() {
        let text = "aé€".as_bytes(); // 1 + 2 + 3 bytes, 3 chars
        let spans = char_spans(text, &[(0, 1), (1, 3), (3, 4), (4, 6)]);
        assert_eq!(spans, vec![(0, 1), (1, 2), (2, 3), (2, 3)]);
    }
}
