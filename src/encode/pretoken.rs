//! Encoding one pre-token: the per-thread caches, then the tokens BPE does not rebuild, then
//! BPE; and the loop that feeds a built-in splitter's pre-tokens to it, a chunk of them at a
//! time.

use super::arena_pretoken_cache::ArenaPretokenCache;
use super::bpe::SHORT;
use super::long_pretoken_cache::{LongPretokenCache, LONG_MAX};
use super::pretoken_cache::{short_key, PretokenCache, CACHE_IDS};
use super::Encoder;
use crate::pretoken_key::pack_within;
use crate::split::{EndSink, PieceEnds, TileLoop, MAX_WINDOW};
use crate::TokenId;
use std::convert::Infallible;
use std::mem::MaybeUninit;
use std::ops::ControlFlow;

impl Encoder {
    /// Encodes one pre-token: the cache, then the tokens BPE does not rebuild, then BPE. Only
    /// the cache's hit is inlined into the splitter's loop; the rest is a call of its own.
    #[inline(always)]
    pub(super) fn encode_pretoken(
        &self,
        pretoken: &[u8],
        cache: &mut PretokenCache,
        out: &mut Vec<TokenId>,
    ) {
        self.encode_keyed(pretoken, short_key(pretoken), cache, out)
    }

    /// [`Encoder::encode_pretoken`] with the pre-token's [`short_key`].
    #[inline(always)]
    pub(super) fn encode_keyed(
        &self,
        pretoken: &[u8],
        key: Option<u128>,
        cache: &mut PretokenCache,
        out: &mut Vec<TokenId>,
    ) {
        let Some(key) = key else {
            return self.encode_long_pretoken(pretoken, cache, out);
        };
        let index = PretokenCache::set(key);
        let set = &mut cache.sets[index].0;
        if set[0].key() != key {
            if set[1].key() != key {
                return self.encode_missed_pretoken(pretoken, key, index, cache, out);
            }
            set.swap(0, 1);
        }
        set[0].append_to(out);
    }

    /// A short pre-token the cache does not hold: one of the tokens BPE does not rebuild
    /// (none in tiktoken's vocabularies), else BPE; then cached in the front slot of its set.
    ///
    /// BPE rebuilds every other token, so a look-up among all tokens would only be a
    /// short-cut, and it would not pay: the misses of new text are mostly first sightings, of
    /// which 84% are not one token (o200k English), and the table of all tokens is 8 MB, so a
    /// look-up is mostly a load from memory. Without it, new English ran 1.04x as fast under
    /// o200k and 1.02x under cl100k, code 1.02x, and encode_file of 200 MB of English 1.05x
    /// (paired runs).
    #[inline(never)]
    pub(super) fn encode_missed_pretoken(
        &self,
        pretoken: &[u8],
        key: u128,
        index: usize,
        cache: &mut PretokenCache,
        out: &mut Vec<TokenId>,
    ) {
        if let Some(slot) = cache.recall(key, index) {
            return slot.append_to(out);
        }
        let hash = self.overflow_hash(pretoken);
        if hash.is_some_and(|h| cache.arena.get_overflow(pretoken, h, out)) {
            return;
        }
        let start = out.len();
        self.encode_uncached(pretoken, Some(key), cache, out);
        let got = &out[start..];
        if got.len() <= CACHE_IDS {
            cache.insert(key, index, got);
        } else if let Some(hash) = hash {
            cache.arena.insert_overflow(pretoken, hash, got);
        }
    }

    /// A pre-token of 16 bytes or more: through the long pre-token cache up to
    /// [`LONG_MAX`] bytes, but for those that start with a CJK ideograph: Chinese runs of
    /// Han characters are mostly new, and BPE from characters merges few pairs in them (the
    /// arena cache for them ran new Chinese at 0.95x under o200k and cl100k, paired runs).
    /// Longer ones go through the arena cache.
    #[inline(never)]
    pub(super) fn encode_long_pretoken(
        &self,
        pretoken: &[u8],
        cache: &mut PretokenCache,
        out: &mut Vec<TokenId>,
    ) {
        if pretoken.len() > LONG_MAX {
            let hash = ArenaPretokenCache::hash(pretoken);
            if cache.arena.get(pretoken, hash, out) {
                return;
            }
            let start = out.len();
            self.encode_uncached(pretoken, None, cache, out);
            return cache.arena.insert(pretoken, hash, &out[start..]);
        }
        if self.han_run(pretoken) {
            return self.encode_uncached(pretoken, None, cache, out);
        }
        let set = LongPretokenCache::set_of(pretoken);
        if cache.long.get(set, pretoken, out) {
            return;
        }
        let hash = self.overflow_hash(pretoken);
        if hash.is_some_and(|h| cache.arena.get_overflow(pretoken, h, out)) {
            return;
        }
        let start = out.len();
        self.encode_uncached(pretoken, None, cache, out);
        let (ids, arena) = (&out[start..], &mut cache.arena);
        // What the set drops waits in the arena, as a pre-token whose ids overflow does:
        // 2 MB of the 25 languages hold 24k distinct pre-tokens of 16-64 bytes, and
        // encoded again 1.8k a pass had been dropped from their sets by others (o200k).
        let held = cache.long.insert(set, pretoken, ids, |bytes, ids| {
            if let Some(hash) = self.overflow_hash(bytes) {
                arena.insert_overflow(bytes, hash, ids)
            }
        });
        if let (false, Some(hash)) = (held, hash) {
            arena.insert_overflow(pretoken, hash, ids);
        }
    }

    /// Whether `pretoken` starts with a CJK ideograph (U+4000-U+9FFF) and BPE from whole
    /// characters runs: the runs of Han characters that skip the long cache, since new
    /// Chinese rarely meets one twice and its BPE merges little.
    #[inline(always)]
    fn han_run(&self, pretoken: &[u8]) -> bool {
        matches!(pretoken[0], 0xE4..=0xE9) && self.chars.is_some()
    }

    /// The arena's hash of a pre-token whose ids may have outgrown its slot, for the arena to
    /// hold or answer; `None` for a [`Encoder::han_run`] or one that ends with a CJK
    /// ideograph (after a comma or a quote), which skip the arena: 3 MB of Chinese hold 7.8k
    /// distinct such pre-tokens of 2-15 bytes that start with punctuation, and with them in
    /// the arena new Chinese ran at 0.9x under o200k.
    #[inline(always)]
    fn overflow_hash(&self, pretoken: &[u8]) -> Option<u64> {
        let n = pretoken.len();
        let han = self.han_run(pretoken) || n >= 3 && self.han_run(&pretoken[n - 3..]);
        (!han).then(|| ArenaPretokenCache::hash(pretoken))
    }

    /// A pre-token (of key `key`, `None` if too long for one) that no cache holds: one of the
    /// `unbuilt` tokens, else BPE (from whole characters when it qualifies). The result is
    /// the same as a look-up among all tokens first, as tiktoken's rule has it: BPE rebuilds
    /// every token but the `unbuilt` ones.
    #[inline(never)]
    fn encode_uncached(
        &self,
        pretoken: &[u8],
        key: Option<u128>,
        cache: &mut PretokenCache,
        out: &mut Vec<TokenId>,
    ) {
        let unbuilt = match key {
            Some(k) => self.unbuilt.get(&k),
            None => self.unbuilt_long.get(pretoken),
        };
        match unbuilt {
            Some(&id) => out.push(id),
            None => self.bpe_uncached(pretoken, cache, out),
        }
    }

    /// BPE of a pre-token that is not one token: from whole characters when it qualifies, else
    /// the scan or (long pre-tokens) the heap, with pair look-ups through the thread's cache.
    #[inline(always)]
    pub(super) fn bpe_uncached(
        &self,
        pretoken: &[u8],
        cache: &mut PretokenCache,
        out: &mut Vec<TokenId>,
    ) {
        // A superword tokenizer's long pre-tokens take the stages first: BPE from whole
        // characters would run over a whole sentence with a curly quote in it.
        if pretoken.len() > SHORT {
            if let Some(st) = &self.stages {
                if self.bpe_staged(st, pretoken, out) {
                    return;
                }
            }
        }
        if self.bpe_chars(pretoken, &mut cache.pairs, &mut cache.scratch, out) {
            return;
        }
        if pretoken.len() <= SHORT {
            // A packed table's look-up is one load, which the scan starts ahead of the merge
            // that needs it (`Encoder::bpe_fixed`); the thread's pair cache in front of it
            // is one more load that nothing starts early, and on new text it mostly misses
            // L2: half of the scan's samples waited on it (perf, o200k English). Without it
            // new English ran 1.00-1.06x as fast under o200k, code 1.00-1.10x (paired runs).
            if self.pairs.is_packed() {
                return self.bpe_short(pretoken, out);
            }
            let hot = &mut cache.pairs;
            self.bpe_short_with(pretoken, out, |a, b| self.hot_pair(hot, a, b))
        } else {
            self.bpe_long(pretoken, out)
        }
    }
}

/// The loop over the pre-tokens of a built-in splitter ([`Encoder::encode_ordinary_into`],
/// `encode_in_chunks`), in two passes over each [`CHUNK`] pre-tokens: the splitter finds
/// them and their keys, starting the load of each one's cache set; then each is encoded,
/// its set in L1 or L2 by then. A set is mostly a load from L3 (the cache is 8 MB), and one
/// pass waited on it for every pre-token: repeated English under o200k ran at 217 MB/s
/// over 50 KB of text, whose sets stay in L2, and at 110 MB/s over 4 MB; in two passes,
/// 1.26-1.33x as fast on 3 MB of English or code, 1.07x on Chinese and 1.11x on the 25
/// languages (new text, paired runs).
pub(super) struct EncodeTiles<'a, H> {
    pub(super) encoder: &'a Encoder,
    pub(super) text: &'a [u8],
    pub(super) cache: &'a mut PretokenCache,
    pub(super) out: &'a mut Vec<TokenId>,
    /// Called after each chunk with the end of its last pre-token in `text`, and the ids:
    /// `encode_in_chunks` hands them over there; a break stops the loop.
    pub(super) after_chunk: H,
}

/// The pre-tokens [`EncodeTiles`] finds ahead of encoding them (32 to 256 ran alike).
pub(super) const CHUNK: usize = 64;

impl<B, H: FnMut(usize, &mut Vec<TokenId>) -> ControlFlow<B>> TileLoop for EncodeTiles<'_, H> {
    type Output = ControlFlow<B>;
    #[inline(never)]
    fn run(mut self, pieces: impl PieceEnds) -> ControlFlow<B> {
        let (encoder, text) = (self.encoder, self.text);
        // The chunk's pre-tokens end at ends[..n] and have keys[..n], 0 for a pre-token too
        // long for a key (a key holds the length, never 0). Room for a window's worth past
        // `CHUNK`. Left uninitialized: zeroing them was a memset per call, 7% of a call on a
        // short text.
        let mut ends = [MaybeUninit::<usize>::uninit(); CHUNK + MAX_WINDOW + 1];
        let mut keys = [MaybeUninit::<u128>::uninit(); CHUNK + MAX_WINDOW + 1];
        let mut start = 0;
        while start < text.len() {
            let first = start;
            let mut chunk = Chunk {
                text,
                cache: self.cache,
                ends: &mut ends,
                keys: &mut keys,
                n: 0,
                from: start,
            };
            while chunk.n < CHUNK && start < text.len() {
                let ControlFlow::Continue(next) = pieces.next_ends(text, start, &mut chunk);
                start = next;
            }
            let n = chunk.n;
            let mut from = first;
            for (end, key) in ends[..n].iter().zip(&keys[..n]) {
                // SAFETY: the first pass wrote `ends[..n]` and `keys[..n]`.
                let (end, key) = unsafe { (end.assume_init(), key.assume_init()) };
                let key = (key != 0).then_some(key);
                encoder.encode_keyed(&text[from..end], key, self.cache, self.out);
                from = end;
            }
            (self.after_chunk)(start, self.out)?;
        }
        ControlFlow::Continue(())
    }
}

/// The first pass's record of a chunk's pre-tokens, taken from the splitter.
struct Chunk<'a, 'b> {
    text: &'a [u8],
    cache: &'b PretokenCache,
    ends: &'b mut [MaybeUninit<usize>],
    keys: &'b mut [MaybeUninit<u128>],
    /// Pre-tokens recorded.
    n: usize,
    /// Where the next pre-token starts.
    from: usize,
}

impl EndSink<Infallible> for Chunk<'_, '_> {
    #[inline(always)]
    fn end(&mut self, end: usize) -> ControlFlow<Infallible> {
        let key = pack_within(self.text, self.from, end);
        self.cache.prefetch_keyed(&self.text[self.from..end], key);
        self.ends[self.n].write(end);
        self.keys[self.n].write(key.unwrap_or(0));
        self.from = end;
        self.n += 1;
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use crate::encode::test_vocab::merges_encoder;
    use crate::encode::Encoder;
    use crate::TokenId;

    #[test]
    fn a_token_not_reachable_by_merges_is_not_a_shortcut() {
        // "abc" is in the vocab but no merge builds it: BPE gives [ab, c].
        let enc = merges_encoder(&[("a", "b")], &[(300, "ab"), (301, "abc")]);
        assert_eq!(enc.encode_ordinary(b"abc"), vec![300, 255 - 99]);
    }

    #[test]
    fn pretokens_take_a_whole_token_only_where_tiktoken_does() {
        // Rank mode: no merge builds these (the vocab has no token of two bytes), but
        // tiktoken's rule gives a pre-token equal to one its id. Encoding looks up only such
        // tokens, not all: this checks that road for ASCII and non-ASCII pre-tokens, short
        // ones (through the cache, twice: miss then hit), ones of 16-64 bytes (the long cache)
        // and one past 64 (the arena).
        let long = "中文中文中文".as_bytes();
        let ascii_long = b"abcdefghijklmnopqrst";
        let ascii_longer = [b'q'; 70];
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..256u32).map(|b| (b, vec![b as u8])).collect();
        vocab.extend([
            (256, "中文".as_bytes().to_vec()),
            (257, "éé".as_bytes().to_vec()),
            (258, long.to_vec()),
            (259, b"xyz".to_vec()),
            (260, ascii_long.to_vec()),
            (261, ascii_longer.to_vec()),
        ]);
        let enc = Encoder::new(vocab, None, vec![], r"\S+|\s+").unwrap();
        assert!(enc.chars.is_some());
        let texts: [(&[u8], TokenId); 6] = [
            ("中文".as_bytes(), 256),
            ("éé".as_bytes(), 257),
            (long, 258),
            (b"xyz", 259),
            (ascii_long, 260),
            (&ascii_longer, 261),
        ];
        for (text, id) in texts {
            assert_eq!(enc.encode_ordinary(text), vec![id], "{text:?}");
            assert_eq!(enc.encode_ordinary(text), vec![id], "{text:?} again");
        }
        // Inside a longer pre-token no merge makes them: bytes.
        let bytes = |s: &str| s.bytes().map(TokenId::from).collect::<Vec<_>>();
        for s in ["中文中", "ééé", "xyzx", "abcdefghijklmnopqrstu"] {
            assert_eq!(enc.encode_ordinary(s.as_bytes()), bytes(s), "{s}");
        }

        // Merges mode: a token no merge builds is never a short-cut, non-ASCII or not.
        let words = ["中文", "éé", "中文中文中文", "xyz", "abcdefghijklmnopqrst"];
        let vocab: Vec<(TokenId, &str)> = (300..).zip(words).collect();
        let enc = merges_encoder(&[], &vocab);
        let bytes = |s: &str| {
            s.bytes()
                .map(|b| 255 - TokenId::from(b))
                .collect::<Vec<_>>()
        };
        for s in words {
            assert_eq!(enc.encode_ordinary(s.as_bytes()), bytes(s), "{s}");
        }
    }

    /// The loop in chunks encodes each pre-token once, in order, to its end: the same ids as
    /// plain BPE of each pre-token, for texts of zero pre-tokens to several chunks of them
    /// (long ones, past a key, too), through cache misses and hits.
    #[test]
    fn the_loop_in_chunks_encodes_every_pretoken_in_order() {
        use super::CHUNK;
        use crate::split::Splitter;
        use crate::test_rng::Lcg;
        let enc = merges_encoder(
            &[("é", "é"), ("a", "é"), (" ", "é"), ("ч", "т"), ("éé", "a")],
            &[
                (300, "éé"),
                (301, "aé"),
                (302, " é"),
                (303, "чт"),
                (304, "ééa"),
            ],
        );
        let enc = Encoder {
            splitter: Splitter::new("o200k").unwrap(),
            ..enc
        };
        let words = [
            "é",
            "éé",
            " éé",
            "aé",
            "чт",
            " чтé",
            "ééaé",
            " a",
            "\n",
            "12",
            "!",
            " ééééééééééé",
            " aaaaaaaaaaaaaaaaaaaaaa",
        ];
        let mut rng = Lcg(21);
        let mut chunks = 0;
        for round in 0..300 {
            let text: String = (0..round % (3 * CHUNK))
                .map(|_| words[rng.below(words.len())])
                .collect();
            let text = text.as_bytes();
            let mut want = Vec::new();
            let mut pretokens = 0usize;
            enc.splitter.for_each(text, |p| {
                pretokens += 1;
                want.extend(super::super::test_vocab::plain_bpe(&enc, p))
            });
            chunks += pretokens.div_ceil(CHUNK);
            assert_eq!(
                enc.encode_ordinary(text),
                want,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(chunks > 400, "{chunks} chunks in 300 texts");
    }
}
