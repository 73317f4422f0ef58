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
//! Per-thread caches remember the ids of recent pre-tokens: two-way set-associative ones for
//! pre-tokens of up to 64 bytes, and an arena for longer ones.
//!
//! Data flow: text -> segments (special tokens cut out by the policy, `special_policy`) ->
//! pre-tokens (the splitter, `crate::split`) -> each pre-token through the cache, the
//! tokens BPE does not rebuild and BPE (`pretoken`) -> ids. Files, one concept each:
//! - `mod.rs`: the [`Encoder`] type and its public methods, but for two that belong to a
//!   concept below (`encode_with_spans` in `offsets.rs`, `encode_in_chunks` in `file.rs`);
//! - `build.rs`: construction (vocab checks, pair table from merges, decoder bytes,
//!   whole-token tables); `rank_table.rs`: the pair table and canonical merges of a rank table;
//! - `pair_table.rs`: the pair table, the single-byte pair table and the per-thread pair cache;
//! - `bpe.rs`: the kernels (scan, heap); `staged.rs`: superword tokenizers' long pre-tokens
//!   in two stages; `chars/`: BPE from whole characters (`mod.rs`, the
//!   proof and the kernel; `build.rs`, its tables; `windows.rs`, where a straddling token can
//!   occur), with `filter.rs`, the Bloom filter of its pairs;
//! - `pretoken_cache.rs`: the per-thread cache of short pre-tokens and their u128 key;
//!   `long_pretoken_cache.rs`: the one of pre-tokens of 16-64 bytes, keyed by their bytes;
//!   `arena_pretoken_cache.rs`: the one of longer pre-tokens, records in a bounded arena;
//!   `pretoken.rs`: one pre-token's road through cache, unbuilt tokens and BPE, and the
//!   loops over a built-in splitter's pre-tokens (one prefetches cache sets ahead);
//! - `special_policy.rs`: which special tokens are allowed, disallowed or plain text;
//! - `offsets.rs`: tokens' byte spans and Python-string offsets;
//! - `batch.rs`: many texts on a thread pool; `cut.rs`: where a text may be cut without
//!   changing its ids; `stream.rs`: a streaming encoder; `file.rs`: files in chunks to
//!   `.npy`, and one long text in chunks; `npy.rs`: the `.npy` header.

use crate::safe_cut::CutRule;
use crate::special::{Segment, SpecialMatcher};
use crate::split::Splitter;
use crate::{Error, TokenId};
use build::Purpose::{Pieces, Text};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::convert::Infallible;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use thread_local::ThreadLocal;

mod arena_pretoken_cache;
mod batch;
mod bpe;
mod build;
mod chars;
mod cut;
mod file;
pub(crate) mod filter;
mod long_pretoken_cache;
mod monotone_heap;
mod npy;
mod offsets;
mod packed_pairs;
mod pair_table;
mod pretoken;
mod pretoken_cache;
mod rank_table;
mod special_policy;
mod staged;
mod stream;
#[cfg(test)]
mod test_vocab;
mod write_behind;
mod zeroed_table;

pub use batch::{encode_batch, encode_batch_each, pool, ChunkIds};
pub use cut::is_safe_cut;
pub use file::encode_file;
pub use npy::npy_header;
pub use offsets::char_spans;
pub use special_policy::SpecialPolicy;
pub use stream::Stream;

use bpe::SHORT;
use chars::CharStart;
use pair_table::PairTable;
use pretoken::EncodeTiles;
use pretoken_cache::PretokenCache;

/// Takes the ids of [`Encoder::encode_in_chunks`] so far and how many bytes they cover.
pub type IdSink<'a> = dyn FnMut(&mut Vec<TokenId>, usize) -> Result<(), Error> + 'a;

/// A token's `(start, end)` byte offsets in the text it came from.
pub type Span = (usize, usize);

/// A matcher of some of the special tokens, and each one's index in `Encoder::specials`.
struct PartialMatcher {
    index: Vec<usize>,
    matcher: SpecialMatcher,
}

/// A byte-level BPE encoder and decoder. `Sync`: build once, share across threads.
pub struct Encoder {
    byte_ids: [TokenId; 256],
    /// `(left, right)` -> `(priority, merged id)`.
    pairs: PairTable,
    /// The pair table for two single bytes, indexed by `(byte << 8) | byte`: the first
    /// pass over a pre-token's bytes reads this 512 KB table, which stays in L2, instead of
    /// the big one (o200k's is 2 MB).
    byte_pairs: Vec<(u32, TokenId)>,
    /// Tokens whose BPE is themselves, for [`Encoder::bpe_looked_up`] (empty in an encoder
    /// of text): a piece equal to one is a single look-up. Up to 15 bytes keyed by
    /// `short_key`, longer ones by their bytes.
    whole: FxHashMap<u128, TokenId>,
    whole_long: FxHashMap<Vec<u8>, TokenId>,
    /// The tokens that BPE of their bytes does not rebuild (rank mode only: tiktoken's rule
    /// gives them to a pre-token equal to them; Llama 3 has some). BPE rebuilds every other
    /// token, so these are the only whole tokens that encoding text looks up.
    unbuilt: FxHashMap<u128, TokenId>,
    unbuilt_long: FxHashMap<Vec<u8>, TokenId>,
    /// Decoder: token bytes are `bytes[spans[id].0..spans[id].1]`; absent ids have start > end.
    bytes: Vec<u8>,
    spans: Vec<(u32, u32)>,
    specials: Vec<(Vec<u8>, TokenId)>,
    /// Finds the special tokens in text; its indices are those of `specials`.
    special_matcher: SpecialMatcher,
    /// The matcher of the last policy that allowed only some special tokens, with its
    /// tokens' indices in `specials`: building one costs 0.5 ms for DeepSeek's 53
    /// always-matched tokens, against 10 us to encode a 1 KB document, and callers repeat
    /// one policy.
    partial: Mutex<Option<(Vec<bool>, Arc<PartialMatcher>)>>,
    splitter: Splitter,
    cut_rule: Option<CutRule>,
    rank_mode: bool,
    /// Rank mode: the canonical merges, as ids, in rank order.
    rank_merges: Vec<(TokenId, TokenId)>,
    /// BPE from whole characters (see [`Encoder::bpe_chars`]); `None` when the pair table's
    /// priorities are not monotone.
    chars: Option<CharStart>,
    /// Whether the pair table is monotone ([`PairTable::is_monotone`]): long pre-tokens
    /// then take the monotone queue.
    monotone: bool,
    /// The two stages of BPE for long pre-tokens of a superword tokenizer (`staged`).
    stages: Option<staged::Stages>,
    cache: ThreadLocal<RefCell<PretokenCache>>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("vocab_size", &self.vocab_size())
            .field("pairs", &self.pairs.len())
            .field("unbuilt", &(self.unbuilt.len() + self.unbuilt_long.len()))
            .field("specials", &self.specials.len())
            .field("pattern", &self.splitter.pattern())
            .finish()
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
        let merges = merges.map(build::Merges::Bytes);
        build::encoder(&vocab, merges, specials, pattern, ignore_merges, Text)
    }

    /// [`Encoder::build`] of merges given as the ids of their left, right and join, each a
    /// token of `vocab` (a reader that looked them up, `crate::model_tables`).
    pub fn build_resolved(
        vocab: Vec<(TokenId, Vec<u8>)>,
        merges: &[(TokenId, TokenId, TokenId)],
        specials: Vec<(Vec<u8>, TokenId)>,
        pattern: &str,
        ignore_merges: bool,
    ) -> Result<Self, Error> {
        let merges = Some(build::Merges::Ids(merges));
        build::encoder(&vocab, merges, specials, pattern, ignore_merges, Text)
    }

    /// [`Encoder::new`] of a rank table (tiktoken's rule), reading `vocab` where it is, so
    /// that the caller may go on reading it meanwhile (a rank file's reader makes its
    /// Python objects from the same tokens).
    pub fn of_ranks(
        vocab: &[(TokenId, Vec<u8>)],
        specials: Vec<(Vec<u8>, TokenId)>,
        pattern: &str,
    ) -> Result<Self, Error> {
        build::encoder(vocab, None, specials, pattern, false, Text)
    }

    /// An encoder for [`Encoder::bpe_looked_up`] alone, without BPE from whole characters:
    /// extending a tokenizer encodes each distinct piece of text once, and the tables of
    /// that start (`chars`) took 0.11 s of a 0.24 s build at 180,000 merges.
    pub(crate) fn for_pieces(
        vocab: Vec<(TokenId, Vec<u8>)>,
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
    ) -> Result<Self, Error> {
        let merges = merges.map(build::Merges::Bytes);
        build::encoder(&vocab, merges, Vec::new(), "gpt2", false, Pieces)
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

    /// Where the pattern provably allows a cut (`None` for a custom regex; see `cut`).
    pub fn cut_rule(&self) -> Option<CutRule> {
        self.cut_rule
    }

    /// The longest special token, in bytes (0 when there are none).
    pub fn max_special_len(&self) -> usize {
        self.special_matcher.max_len()
    }

    /// The matcher over the special tokens, for code that must not cut through one.
    pub fn special_matcher(&self) -> &SpecialMatcher {
        &self.special_matcher
    }

    /// One more than the largest id.
    pub fn vocab_size(&self) -> usize {
        self.spans.len()
    }

    /// Whether this encoder follows tiktoken's rank rule.
    pub fn rank_mode(&self) -> bool {
        self.rank_mode
    }

    /// BPE of one pre-token, appended to `out`: no short-cuts, no cache.
    pub fn bpe(&self, pretoken: &[u8], out: &mut Vec<TokenId>) {
        if pretoken.len() <= SHORT {
            self.bpe_short(pretoken, out)
        } else {
            self.bpe_long_staged(pretoken, out)
        }
    }

    /// [`Encoder::bpe`], with one look-up first in an encoder built for pieces
    /// (`for_pieces`; an encoder of text has no table of all tokens, and this is then
    /// `bpe`): bytes that are a token BPE rebuilds from them are that token (extending a
    /// tokenizer meets its words over and over: a look-up costs a tenth of their BPE).
    /// Tokens BPE does not rebuild (rank tables and `ignore_merges` give them to a
    /// pre-token equal to them) are left to BPE.
    pub fn bpe_looked_up(&self, pretoken: &[u8], out: &mut Vec<TokenId>) {
        let hit = match crate::pretoken_key::pack(pretoken) {
            Some(k) => self.whole.get(&k),
            None => self.whole_long.get(pretoken),
        };
        match hit {
            Some(&id) => out.push(id),
            None => self.bpe(pretoken, out),
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
            after_chunk: |_, _: &mut Vec<TokenId>| ControlFlow::<Infallible>::Continue(()),
        };
        if self.splitter.with_piece_end(tiled).is_none() {
            self.splitter.for_each(text, |pretoken| {
                self.encode_pretoken(pretoken, &mut cache, out)
            });
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
        if !policy.any_disallowed() {
            return Ok(());
        }
        for (_, _, i) in self.special_matcher.occurrences(text) {
            if policy.disallowed[i] {
                return Err(Error::DisallowedSpecial {
                    token: String::from_utf8_lossy(&self.specials[i].0).into_owned(),
                });
            }
        }
        Ok(())
    }

    /// Calls `f` on each plain run and each allowed special token (by index into
    /// [`Encoder::special_tokens`]), in order: allowed tokens are found leftmost-longest; the
    /// others stay plain text.
    pub fn for_each_segment<'a>(
        &self,
        text: &'a [u8],
        policy: &SpecialPolicy,
        mut f: impl FnMut(Segment<'a>),
    ) {
        if !policy.any_allowed() {
            if !text.is_empty() {
                f(Segment::Plain(text));
            }
        } else if policy.allowed.iter().all(|&a| a) {
            self.special_matcher.for_each_segment(text, f);
        } else {
            let m = self.partial_matcher(&policy.allowed);
            m.matcher.for_each_segment(text, |seg| match seg {
                Segment::Special(i) => f(Segment::Special(m.index[i])),
                plain => f(plain),
            });
        }
    }

    /// The matcher of the special tokens `allowed` marks, and their indices in `specials`.
    fn partial_matcher(&self, allowed: &[bool]) -> Arc<PartialMatcher> {
        let mut last = self.partial.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((a, m)) = last.as_ref() {
            if a.as_slice() == allowed {
                return Arc::clone(m);
            }
        }
        let (index, tokens): (Vec<usize>, Vec<&[u8]>) = self
            .specials
            .iter()
            .enumerate()
            .filter(|&(i, _)| allowed[i])
            .map(|(i, (t, _))| (i, t.as_slice()))
            .unzip();
        let m = Arc::new(PartialMatcher {
            index,
            matcher: SpecialMatcher::new(&tokens),
        });
        *last = Some((allowed.to_vec(), Arc::clone(&m)));
        m
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
            Segment::Plain(plain) => self.encode_ordinary_into(plain, out),
            Segment::Special(i) => out.push(self.specials[i].1),
        });
        Ok(())
    }

    /// Encodes text with the special-token policy.
    pub fn encode(&self, text: &[u8], policy: &SpecialPolicy) -> Result<Vec<TokenId>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, policy, &mut out)?;
        Ok(out)
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

    /// How many pairs the pair table holds: in merges mode, the merges given less those
    /// repeated or that join no token.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// The pair table's pairs as bytes, by priority: in merges mode, the merges given when
    /// none was repeated or dropped ([`Encoder::pair_count`] says).
    pub fn pairs_by_priority(&self) -> Vec<(&[u8], &[u8])> {
        let mut pairs: Vec<(u32, TokenId, TokenId)> = self
            .pairs
            .iter()
            .map(|((a, b), (p, _))| (p, a, b))
            .collect();
        pairs.sort_unstable();
        pairs
            .into_iter()
            .map(|(_, a, b)| self.pair_bytes(a, b))
            .collect()
    }

    /// The bytes of a merge's two parts.
    fn pair_bytes(&self, a: TokenId, b: TokenId) -> (&[u8], &[u8]) {
        (
            self.token_bytes(a).expect("a merge part is a token"),
            self.token_bytes(b).expect("a merge part is a token"),
        )
    }

    /// The canonical merge list of a rank table: for each multi-byte token in rank order, the
    /// two parts tiktoken's BPE of its bytes ends in before it makes the token (see
    /// `rank_table`). A token that does not end in two parts (unreachable by
    /// merges) gets no merge. Empty in merges mode.
    pub fn merges_from_ranks(&self) -> Vec<(&[u8], &[u8])> {
        self.rank_merges
            .iter()
            .map(|&(a, b)| self.pair_bytes(a, b))
            .collect()
    }
}
