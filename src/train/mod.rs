//! The incremental merge loop: learn BPE merges from counted pre-tokens.
//!
//! Words are symbol arrays with counts. Pair counts are kept in one hash map and updated
//! incrementally: merging `(a, b)` touches only the words listed under that pair in the
//! pair -> words index, never the whole corpus. Only pairs near the top are indexed and
//! queued (see `Trainer`): that keeps memory near the words themselves (1 GB of mixed
//! corpora, vocab 32,000: peak anonymous memory of the merge phase 885 -> 189 MB, below
//! counting's 255 MB). A lazy max-heap orders the queued
//! pairs by `(count, bytes(left), bytes(right))`; a popped entry whose count is stale is
//! pushed back with its current count, so the heap never needs a decrease-key.
//!
//! Exactness (DESIGN "Training"):
//! - ties go to the lexicographically greater `(bytes(left), bytes(right))`, as Python
//!   compares tuples of bytes (slices compare the same way);
//! - a merge whose bytes already exist as a symbol reuses that symbol: symbols are
//!   identified by their bytes, so counts of equal tokens combine;
//! - counts are u64: a pair seen more than 2^32 times still orders correctly.
//!
//! The result depends only on the multiset of (word, count), not on hash or input order.
//!
//! [`Rules`] also reproduce the peers' trainers (`reference.py` states each rule): ties to
//! the smaller pair of ids (HuggingFace's `BpeTrainer`, rustbpe), a new token for every
//! merge (rustbpe), stopping at a number of new tokens (HuggingFace fills its vocab) and
//! HuggingFace's `max_token_length`. [`train_encoded`] starts from words already encoded
//! with an existing tokenizer's tokens, to extend it.

use crate::Error;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::hash_map::Entry as MapEntry;
use std::time::{Duration, Instant};

/// A distinct word: where its symbols are in the arena, and its count. 16 bytes, not 24
/// (2.45M words on 1 GB of mixed corpora: 20 MB): a count >= `BIG_COUNT` is kept in
/// [`Trainer::big_counts`] instead. A word listed twice under a pair is simply visited
/// twice: the second visit finds no occurrence left and changes nothing.
#[derive(Clone, Copy)]
struct WordMeta {
    start: usize,
    count: u32,
    len: u32,
}

/// `WordMeta::count` saying "look in `big_counts`".
const BIG_COUNT: u32 = u32::MAX;

/// A learned merge: the bytes of its left and right parts.
pub type Merge = (Vec<u8>, Vec<u8>);

/// Why training stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `num_merges` merges were learned.
    Done,
    /// No pair had count >= `min_frequency` (or no pair was left at all).
    NoPairs,
}

/// Symbols by id; ids 0..256 are the single bytes. Equal bytes get the same id, unless
/// `reuse` is off (rustbpe's rule: every merge is a new token).
struct Symbols {
    bytes: Vec<Box<[u8]>>,
    ids: FxHashMap<Box<[u8]>, u32>,
    /// Per symbol: its first 7 bytes big-endian, zero-padded, then min(len, 255) in the low
    /// byte. Comparing keys orders symbols as their bytes whenever the top 7 bytes differ
    /// or both are at most 7 bytes long. When ties go to the smaller id ([`Rules::ids`]),
    /// the top 56 bits are instead `ID_KEY - id`, which always decide.
    keys: Vec<u64>,
    /// The id the next new symbol takes when ties go by ids, else `None`.
    next_id: Option<u64>,
    reuse: bool,
}

/// The key of id 0 when ties go by ids: a smaller id has a greater key.
const ID_KEY: u64 = (1 << 56) - 1;

impl Symbols {
    /// The 256 bytes; `ids[b]` is byte b's id when ties go by ids.
    fn new(ids: Option<&[u64]>, reuse: bool) -> Self {
        let mut s = Symbols {
            bytes: Vec::with_capacity(1 << 16),
            ids: FxHashMap::default(),
            keys: Vec::with_capacity(1 << 16),
            next_id: ids.map(|_| 0),
            reuse,
        };
        for b in 0..=255u8 {
            s.push(vec![b], ids.map(|ids| ids[b as usize]));
        }
        s
    }

    /// The symbol of a merge's bytes: the existing one when `reuse`, else a new one.
    fn intern(&mut self, bytes: Vec<u8>) -> u32 {
        if self.reuse {
            if let Some(&id) = self.ids.get(bytes.as_slice()) {
                return id;
            }
        }
        let id = self.next_id;
        self.push(bytes, id)
    }

    /// A new symbol; `id` is its id when ties go by ids.
    fn push(&mut self, bytes: Vec<u8>, id: Option<u64>) -> u32 {
        let sym = self.bytes.len() as u32;
        let key = match id {
            Some(id) => {
                self.next_id = Some(self.next_id.unwrap_or(0).max(id + 1));
                (ID_KEY - id) << 8 | 1
            }
            None => {
                let mut key = 0u64;
                for i in 0..7 {
                    key = (key << 8) | u64::from(bytes.get(i).copied().unwrap_or(0));
                }
                (key << 8) | bytes.len().min(255) as u64
            }
        };
        self.keys.push(key);
        let bytes = bytes.into_boxed_slice();
        self.ids.insert(bytes.clone(), sym);
        self.bytes.push(bytes);
        sym
    }

    fn get(&self, id: usize) -> &[u8] {
        &self.bytes[id]
    }
}

/// A heap entry: a pair, the count it had when pushed (possibly stale), and each side's
/// sort key ([`Symbols::key`]), so most ties are settled without touching symbol bytes.
/// Late in training nearly every entry has count 1 or 2, so almost every heap comparison
/// is a tie.
#[derive(Clone, Copy)]
struct Entry<S> {
    count: u64,
    left_key: u64,
    right_key: u64,
    pair: (S, S),
}

impl<S: Symbol> Entry<S> {
    fn new(count: u64, pair: (S, S), syms: &Symbols) -> Self {
        Entry {
            count,
            left_key: syms.keys[pair.0.id()],
            right_key: syms.keys[pair.1.id()],
            pair,
        }
    }
}

/// A binary max-heap whose order needs the symbol table (long ties compare symbol bytes),
/// so it cannot be `std`'s `BinaryHeap` over a plain `Ord` key.
struct PairHeap<S> {
    items: Vec<Entry<S>>,
}

/// Orders two different symbols by their bytes, using their keys when they decide.
#[inline]
fn sym_cmp<S: Symbol>(ka: u64, kb: u64, a: S, b: S, syms: &Symbols) -> Ordering {
    if ka >> 8 != kb >> 8 {
        return (ka >> 8).cmp(&(kb >> 8));
    }
    let (la, lb) = (ka & 0xff, kb & 0xff);
    if la <= 7 && lb <= 7 {
        // Equal zero-padded prefixes and both short: the shorter is a prefix of the other.
        return la.cmp(&lb);
    }
    syms.get(a.id()).cmp(syms.get(b.id()))
}

/// `a` ranks above `b`: higher count, then greater (bytes(left), bytes(right)).
#[inline]
fn above<S: Symbol>(syms: &Symbols, a: &Entry<S>, b: &Entry<S>) -> bool {
    if a.count != b.count {
        return a.count > b.count;
    }
    if a.pair.0 != b.pair.0 {
        return sym_cmp(a.left_key, b.left_key, a.pair.0, b.pair.0, syms) == Ordering::Greater;
    }
    if a.pair.1 != b.pair.1 {
        return sym_cmp(a.right_key, b.right_key, a.pair.1, b.pair.1, syms) == Ordering::Greater;
    }
    false
}

impl<S: Symbol> PairHeap<S> {
    fn from_vec(items: Vec<Entry<S>>, syms: &Symbols) -> Self {
        let mut h = PairHeap { items };
        for i in (0..h.items.len() / 2).rev() {
            h.sift_down(i, syms);
        }
        h
    }

    fn push(&mut self, e: Entry<S>, syms: &Symbols) {
        self.items.push(e);
        let mut i = self.items.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !above(syms, &self.items[i], &self.items[parent]) {
                break;
            }
            self.items.swap(i, parent);
            i = parent;
        }
    }

    fn pop(&mut self, syms: &Symbols) -> Option<Entry<S>> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.items[0], last);
        self.sift_down(0, syms);
        Some(top)
    }

    fn sift_down(&mut self, mut i: usize, syms: &Symbols) {
        let n = self.items.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let child = if r < n && above(syms, &self.items[r], &self.items[l]) {
                r
            } else {
                l
            };
            if !above(syms, &self.items[child], &self.items[i]) {
                break;
            }
            self.items.swap(i, child);
            i = child;
        }
    }
}

/// Learns up to `num_merges` merges from `(word bytes, count)` pairs.
///
/// Stops early when no pair has count >= `min_frequency` (0 is treated as 1).
/// `progress(merges_done)` is called about every 100 ms; returning `false` stops training
/// with [`Error::Interrupted`].
pub fn train<W: AsRef<[u8]>>(
    words: &[(W, u64)],
    num_merges: usize,
    min_frequency: u64,
    progress: &mut dyn FnMut(usize) -> bool,
) -> Result<(Vec<Merge>, Stop), Error> {
    train_from(
        words.iter().map(|(w, c)| (w, *c)),
        num_merges,
        min_frequency,
        progress,
    )
}

/// [`train`] over any iterator of `(word, count)`, so the caller need not copy its count
/// table into a slice first: on 1 GB of mixed corpora (2.45M distinct words) that copy was
/// 140 MB of the peak. The iterator is dropped once the words are in the trainer's arena.
pub fn train_from<W: AsRef<[u8]>>(
    words: impl IntoIterator<Item = (W, u64)>,
    num_merges: usize,
    min_frequency: u64,
    progress: &mut dyn FnMut(usize) -> bool,
) -> Result<(Vec<Merge>, Stop), Error> {
    train_with(words, num_merges, &Rules::cs336(min_frequency), progress)
}

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

/// [`train_from`] under any [`Rules`].
pub fn train_with<W: AsRef<[u8]>>(
    words: impl IntoIterator<Item = (W, u64)>,
    num_merges: usize,
    rules: &Rules,
    progress: &mut dyn FnMut(usize) -> bool,
) -> Result<(Vec<Merge>, Stop), Error> {
    check_ids(rules, 0)?;
    // Symbol ids are at most 255 + num_merges: with u16 ids the arena, the largest
    // structure, takes half the memory (1 GB of mixed corpora: 39M symbols, 156 -> 78 MB).
    if 256 + num_merges <= 1 << 16 {
        Trainer::<u16>::with_rules(words, rules).run(num_merges, progress)
    } else {
        Trainer::<u32>::with_rules(words, rules).run(num_merges, progress)
    }
}

/// Continues training from words already encoded as symbols: 0..256 are the single
/// bytes, `256 + i` is `tokens[i]` (an existing tokenizer's multi-byte tokens). Merges
/// take up where those tokens leave off, under `rules` ([`Rules::ids`] then holds one id
/// per start symbol). Words of one symbol are skipped.
pub fn train_encoded(
    tokens: Vec<Vec<u8>>,
    words: impl IntoIterator<Item = (Vec<u32>, u64)>,
    num_merges: usize,
    rules: &Rules,
    progress: &mut dyn FnMut(usize) -> bool,
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
        Trainer::<u16>::encoded(tokens, words, rules)?.run(num_merges, progress)
    } else {
        Trainer::<u32>::encoded(tokens, words, rules)?.run(num_merges, progress)
    }
}

fn check_ids(rules: &Rules, tokens: usize) -> Result<(), Error> {
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

/// How far below the highest pair count the index floor goes at each refill (see
/// [`Trainer`]). A larger factor means fewer refills (each a pass over the arena) but more
/// pairs indexed at once: on 1 GB, 16 peaked at 260 MB against 4's 216 MB (before the
/// 8-byte pair counts) and was no faster.
const FLOOR_DIVISOR: u64 = 4;

/// The merge loop's state.
///
/// Only pairs with count >= `floor` are in the heap and have a word list. Most pairs never
/// come near the top: on 1 GB of mixed corpora at 32,000 tokens there are 3.2M pairs at
/// the end, 2.5M of them with count < 64, while the last merge has count ~600. Listing
/// every pair's words (and queueing every pair) was most of the 880 MB peak.
///
/// Exactness: every pair >= `floor` is queued, so the top of the heap is the top pair. A
/// list, where there is one, holds every word with its pair: lists are made complete (by
/// a refill's pass, or for a pair first seen in this step, from its first word on) and
/// get every word that gains the pair after that. A merged pair without a list finds its
/// words by scanning the arena ([`Trainer::words_with`]).
///
/// That scan is rare (never, on the 1 GB corpus): a pair's count only rises in the step
/// that creates one of its symbols (all of a symbol's occurrences appear in the step that
/// merges it), and that step lists it. Only a merge whose bytes already exist as a symbol
/// (DESIGN's duplicate-bytes rule) can raise an unlisted pair. When no pair >= `floor` is
/// left, [`Trainer::refill`] lowers the floor to a quarter of the highest remaining count
/// and lists those pairs' words in one pass over the arena: 8 refills on the 1 GB corpus,
/// 0.1-0.35 s each.
struct Trainer<S: Symbol> {
    syms: Symbols,
    /// All words' symbols; each word's metadata in one 16-byte record: rewriting a word
    /// costs two cache misses instead of three or four (with a Vec per word and separate
    /// count and `seen` arrays, those misses were over half the loop's time).
    arena: Vec<S>,
    meta: Vec<WordMeta>,
    /// The counts of words counted `BIG_COUNT` times or more, by word id.
    big_counts: FxHashMap<u32, u64>,
    /// Every pair with a nonzero count (a pair at 0 is removed).
    counts: PairCounts<S>,
    /// The words holding each pair with count >= `floor` (and, within a step, each pair
    /// first seen in it): every word with the pair is listed, some maybe twice or stale.
    lists: FxHashMap<(S, S), Vec<u32>>,
    heap: PairHeap<S>,
    floor: u64,
    /// The floor goes to the highest count / `divisor` at each refill.
    divisor: u64,
    /// Whether a refill lists words; only tests turn it off, to make every merge take the
    /// arena-scan path.
    index: bool,
    min_frequency: u64,
    /// [`Rules::count_tokens`], and how many symbols there were before the first merge.
    count_tokens: bool,
    start_symbols: usize,
    /// [`Rules::max_token_length`]; `usize::MAX` when there is none.
    max_len: usize,
    /// How many merged pairs had no list (see [`Trainer::words_with`]), for tests.
    scans: usize,
}

/// Whether pair `(x, y)` is counted: always, unless a maximum token length
/// ([`Rules::max_token_length`]) rules it out.
#[inline]
fn fits<S: Symbol>(syms: &Symbols, max_len: usize, x: S, y: S) -> bool {
    if max_len == usize::MAX {
        return true;
    }
    let (lx, ly) = (syms.get(x.id()).len(), syms.get(y.id()).len());
    (lx == 1 && ly == 1) || lx + ly < max_len
}

/// A symbol id in the arena: u16 when every id fits, else u32.
trait Symbol: Copy + Eq + Ord + std::hash::Hash + std::fmt::Debug {
    fn from_id(id: u32) -> Self;
    fn id(self) -> usize;
}

impl Symbol for u16 {
    #[inline]
    fn from_id(id: u32) -> Self {
        debug_assert!(id <= u16::MAX as u32);
        id as u16
    }
    #[inline]
    fn id(self) -> usize {
        self as usize
    }
}

impl Symbol for u32 {
    #[inline]
    fn from_id(id: u32) -> Self {
        id
    }
    #[inline]
    fn id(self) -> usize {
        self as usize
    }
}

impl<S: Symbol> Trainer<S> {
    #[cfg(test)]
    fn new<W: AsRef<[u8]>>(words: impl IntoIterator<Item = (W, u64)>, min_frequency: u64) -> Self {
        Self::with_rules(words, &Rules::cs336(min_frequency))
    }

    fn with_rules<W: AsRef<[u8]>>(
        words: impl IntoIterator<Item = (W, u64)>,
        rules: &Rules,
    ) -> Self {
        // What counting freed (its per-thread tables) need not stay beside the arena.
        release_free_memory();
        let words = words.into_iter();
        // Words of one byte have no pair and never change: leave them out. The words are
        // gathered as bytes and widened to symbols only once the caller's table is gone:
        // the table, the bytes and the word records peak lower than the table beside the
        // symbols (1 GB of mixed corpora: 39 MB of bytes, 78 MB of u16 symbols).
        let mut bytes: Vec<u8> = Vec::new();
        let mut meta: Vec<WordMeta> = Vec::with_capacity(words.size_hint().0);
        let mut big_counts = FxHashMap::default();
        for (w, c) in words {
            let w = w.as_ref();
            if w.len() >= 2 && c > 0 {
                if c >= BIG_COUNT as u64 {
                    big_counts.insert(meta.len() as u32, c);
                }
                meta.push(WordMeta {
                    start: bytes.len(),
                    count: c.min(BIG_COUNT as u64) as u32,
                    len: w.len() as u32,
                });
                bytes.extend_from_slice(w);
            }
        }
        meta.shrink_to_fit();
        // The iterator, and with it the caller's count table when it was consumed, is gone.
        release_free_memory();
        let arena: Vec<S> = bytes.iter().map(|&b| S::from_id(b as u32)).collect();
        drop(bytes);
        let syms = Symbols::new(rules.ids.as_deref(), rules.reuse);
        Self::assemble(syms, arena, meta, big_counts, rules)
    }

    /// See [`train_encoded`].
    fn encoded(
        tokens: Vec<Vec<u8>>,
        words: impl IntoIterator<Item = (Vec<u32>, u64)>,
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
        for (w, c) in words {
            if let Some(&bad) = w.iter().find(|&&s| s >= n) {
                return Err(Error::InvalidVocab {
                    reason: format!("a word holds symbol {bad}, but there are only {n}"),
                });
            }
            if w.len() >= 2 && c > 0 {
                if c >= BIG_COUNT as u64 {
                    big_counts.insert(meta.len() as u32, c);
                }
                meta.push(WordMeta {
                    start: arena.len(),
                    count: c.min(BIG_COUNT as u64) as u32,
                    len: w.len() as u32,
                });
                arena.extend(w.iter().map(|&s| S::from_id(s)));
            }
        }
        Ok(Self::assemble(syms, arena, meta, big_counts, rules))
    }

    /// The trainer over words in the arena: counts their pairs.
    fn assemble(
        syms: Symbols,
        arena: Vec<S>,
        meta: Vec<WordMeta>,
        big_counts: FxHashMap<u32, u64>,
        rules: &Rules,
    ) -> Self {
        let max_len = rules.max_token_length.unwrap_or(usize::MAX);
        let mut counts = PairCounts::default();
        for (wi, m) in meta.iter().enumerate() {
            let c = word_count(m, wi as u32, &big_counts);
            for p in arena[m.start..m.start + m.len as usize].windows(2) {
                if fits(&syms, max_len, p[0], p[1]) {
                    counts.add((p[0], p[1]), c);
                }
            }
        }
        Trainer {
            start_symbols: syms.bytes.len(),
            syms,
            arena,
            meta,
            big_counts,
            counts,
            lists: FxHashMap::default(),
            heap: PairHeap { items: Vec::new() },
            floor: u64::MAX,
            divisor: FLOOR_DIVISOR,
            index: true,
            min_frequency: rules.min_frequency.max(1),
            count_tokens: rules.count_tokens,
            max_len,
            scans: 0,
        }
    }

    fn run(
        &mut self,
        num_merges: usize,
        progress: &mut dyn FnMut(usize) -> bool,
    ) -> Result<(Vec<Merge>, Stop), Error> {
        let mut increased: Vec<(S, S)> = Vec::new();
        let mut merges: Vec<Merge> = Vec::with_capacity(num_merges);
        let mut last_report = Instant::now();
        let report_every = Duration::from_millis(100);

        let made = |t: &Self, merges: &Vec<Merge>| {
            if t.count_tokens {
                t.syms.bytes.len() - t.start_symbols
            } else {
                merges.len()
            }
        };
        while made(self, &merges) < num_merges {
            if last_report.elapsed() >= report_every {
                last_report = Instant::now();
                if !progress(merges.len()) {
                    return Err(Error::Interrupted);
                }
            }
            let Some(top) = self.heap.pop(&self.syms) else {
                if self.refill() {
                    continue;
                }
                return finish(merges, Stop::NoPairs, progress);
            };
            let current = self.counts.get(&top.pair);
            if current != top.count {
                // Stale: re-queue with the true count (a pair whose count rose was pushed
                // again when it rose, so this only ever re-queues lower counts or duplicates).
                if current >= self.floor && current < top.count {
                    self.heap
                        .push(Entry::new(current, top.pair, &self.syms), &self.syms);
                }
                continue;
            }
            // Every pair in the heap has count >= floor >= min_frequency, and every pair
            // outside it has count < floor: `top` is the highest pair.

            let (a, b) = top.pair;
            let (ab, bb) = (self.syms.get(a.id()), self.syms.get(b.id()));
            let merged = [ab, bb].concat();
            merges.push((ab.to_vec(), bb.to_vec()));
            let new = S::from_id(self.syms.intern(merged));

            let words_with_pair = match self.lists.remove(&top.pair) {
                Some(list) => list,
                None => {
                    self.scans += 1;
                    self.words_with(top.pair)
                }
            };
            self.rewrite(&words_with_pair, top.pair, new, &mut increased);
            // The merged pair is gone everywhere: drop it (its count was never decremented).
            self.counts.remove(&top.pair);

            increased.sort_unstable();
            increased.dedup();
            for &pair in &increased {
                match self.counts.get(&pair) {
                    c if c >= self.floor => {
                        self.heap.push(Entry::new(c, pair, &self.syms), &self.syms);
                    }
                    // A pair first seen in this step but below the floor: unlisted.
                    _ => {
                        self.lists.remove(&pair);
                    }
                }
            }
            increased.clear();
        }
        finish(merges, Stop::Done, progress)
    }

    /// Merges `(a, b)` into `new` in every word of `words`, updating pair counts and lists; every pair whose count rose goes into `increased`.
    fn rewrite(&mut self, words: &[u32], (a, b): (S, S), new: S, increased: &mut Vec<(S, S)>) {
        let Trainer {
            syms,
            arena,
            meta,
            big_counts,
            counts,
            lists,
            floor,
            max_len,
            ..
        } = self;
        let (floor, max_len) = (*floor, *max_len);
        let fits = |x: S, y: S| fits(syms, max_len, x, y);
        for (j, &wi) in words.iter().enumerate() {
            // Visiting a word is two cache misses (its record, its symbols): `perf` put
            // them at two thirds of the loop. The list is known ahead, so fetch ahead.
            if let Some(&ahead) = words.get(j + 16) {
                prefetch(&meta[ahead as usize]);
            }
            if let Some(&ahead) = words.get(j + 8) {
                prefetch(arena.as_ptr().wrapping_add(meta[ahead as usize].start));
            }
            let m = &mut meta[wi as usize];
            let c = word_count(m, wi, big_counts);
            let w = &mut arena[m.start..m.start + m.len as usize];
            // Rewrite in place, left to right, non-overlapping (as the reference does).
            let n = w.len();
            let (mut i, mut out) = (0, 0);
            let mut changed = false;
            // The last symbol written is a merge made in this pass: its left pair was
            // already accounted for by the previous occurrence.
            let mut prev_merged = false;
            while i < n {
                if i + 1 < n && w[i] == a && w[i + 1] == b {
                    changed = true;
                    if out > 0 {
                        if prev_merged {
                            // "a b a b" -> "new new": (b, a) was removed by the previous
                            // occurrence; the pair between the two merges is (new, new).
                            if fits(new, new) {
                                inc(counts, lists, increased, (new, new), c, wi);
                            }
                        } else {
                            let left = w[out - 1];
                            dec(counts, lists, floor, (left, a), c);
                            if fits(left, new) {
                                inc(counts, lists, increased, (left, new), c, wi);
                            }
                        }
                    }
                    if i + 2 < n {
                        let right = w[i + 2];
                        dec(counts, lists, floor, (b, right), c);
                        let next_merges = i + 3 < n && right == a && w[i + 3] == b;
                        if !next_merges && fits(new, right) {
                            inc(counts, lists, increased, (new, right), c, wi);
                        }
                    }
                    w[out] = new;
                    prev_merged = true;
                    i += 2;
                } else {
                    w[out] = w[i];
                    prev_merged = false;
                    i += 1;
                }
                out += 1;
            }
            if changed {
                m.len = out as u32;
            }
        }
    }

    /// The words holding `pair`, by scanning the arena: for a merged pair without a list,
    /// which only a duplicate-bytes merge can make (see [`Trainer`]).
    fn words_with(&self, pair: (S, S)) -> Vec<u32> {
        let mut found = Vec::new();
        for (wi, m) in self.meta.iter().enumerate() {
            let w = &self.arena[m.start..m.start + m.len as usize];
            if w.windows(2).any(|p| (p[0], p[1]) == pair) {
                found.push(wi as u32);
            }
        }
        found
    }

    /// The heap is empty, so every pair has count < `floor`: lowers the floor to a quarter
    /// of the highest count (not below `min_frequency`), queues the pairs at or above it
    /// and lists their words, in one pass that also compacts the arena (merges shrink
    /// words in place; 1 GB of mixed corpora: 39M symbols at the start, 24M after 2,000
    /// merges) and drops words left with one symbol. `false` when no pair reaches
    /// `min_frequency`.
    fn refill(&mut self) -> bool {
        let Some(highest) = self.counts.iter().map(|(_, c)| c).max() else {
            return false;
        };
        if highest < self.min_frequency {
            return false;
        }
        self.floor = (highest / self.divisor).max(self.min_frequency);
        let floor = self.floor;
        let entries: Vec<Entry<S>> = self
            .counts
            .iter()
            .filter(|&(_, c)| c >= floor)
            .map(|(pair, c)| Entry::new(c, pair, &self.syms))
            .collect();
        // Lists exist only for pairs >= the old floor, and none is left: start afresh (word
        // ids change below).
        self.lists = if self.index {
            entries.iter().map(|e| (e.pair, Vec::new())).collect()
        } else {
            FxHashMap::default()
        };
        self.heap = PairHeap::from_vec(entries, &self.syms);
        // Most pair occurrences are of pairs not listed: a bit per hash skips their
        // lookups (the pass over 39M symbols went from about 0.4 s to 0.1 s).
        let filter = PairFilter::new(self.lists.keys().copied());

        let (mut out, mut kept) = (0usize, 0usize);
        let mut big_counts = FxHashMap::default();
        for wi in 0..self.meta.len() {
            let m = self.meta[wi];
            let len = m.len as usize;
            if len < 2 {
                continue;
            }
            self.arena.copy_within(m.start..m.start + len, out);
            self.meta[kept] = WordMeta { start: out, ..m };
            let id = kept as u32;
            if m.count == BIG_COUNT {
                big_counts.insert(id, self.big_counts[&(wi as u32)]);
            }
            for p in self.arena[out..out + len].windows(2) {
                if !filter.may_hold((p[0], p[1])) {
                    continue;
                }
                if let Some(list) = self.lists.get_mut(&(p[0], p[1])) {
                    if list.last() != Some(&id) {
                        list.push(id);
                    }
                }
            }
            out += len;
            kept += 1;
        }
        self.arena.truncate(out);
        self.arena.shrink_to_fit();
        self.meta.truncate(kept);
        self.meta.shrink_to_fit();
        self.big_counts = big_counts;
        for list in self.lists.values_mut() {
            list.shrink_to_fit();
        }
        release_free_memory();
        true
    }
}

#[inline]
fn word_count(m: &WordMeta, wi: u32, big_counts: &FxHashMap<u32, u64>) -> u64 {
    if m.count == BIG_COUNT {
        big_counts[&wi]
    } else {
        m.count as u64
    }
}

/// A set of pairs that may answer "yes" wrongly but never "no" wrongly: one bit per hash,
/// 2^20 bits (128 KiB, inside L2).
struct PairFilter {
    bits: Vec<u64>,
}

impl PairFilter {
    const LOG_BITS: u32 = 20;

    fn new<S: Symbol>(pairs: impl Iterator<Item = (S, S)>) -> Self {
        let mut f = PairFilter {
            bits: vec![0; 1 << (Self::LOG_BITS - 6)],
        };
        for p in pairs {
            let h = Self::hash(p);
            f.bits[h >> 6] |= 1 << (h & 63);
        }
        f
    }

    #[inline]
    fn hash<S: Symbol>((a, b): (S, S)) -> usize {
        let x = ((a.id() as u64) << 32) | b.id() as u64;
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - Self::LOG_BITS)) as usize
    }

    #[inline]
    fn may_hold<S: Symbol>(&self, p: (S, S)) -> bool {
        let h = Self::hash(p);
        self.bits[h >> 6] & (1 << (h & 63)) != 0
    }
}

/// The last progress report (so a caller sees the final count and a callback error is
/// not lost), then the result.
fn finish(
    merges: Vec<Merge>,
    stop: Stop,
    progress: &mut dyn FnMut(usize) -> bool,
) -> Result<(Vec<Merge>, Stop), Error> {
    if !progress(merges.len()) {
        return Err(Error::Interrupted);
    }
    Ok((merges, stop))
}

/// Hands freed heap pages back to the OS. glibc keeps freed small blocks resident: after
/// the count table's 2.45M words (1 GB of mixed corpora) were read into the arena and
/// freed, 40 MB stayed in RssAnon, and after counting 30 MB more. Costs a few ms.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointers; it only returns unused pages to the OS.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Asks the CPU to start loading the cache line at `p` (a hint: never faults).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never dereferences in a way that can fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[inline]
fn dec<S: Symbol>(
    counts: &mut PairCounts<S>,
    lists: &mut FxHashMap<(S, S), Vec<u32>>,
    floor: u64,
    pair: (S, S),
    c: u64,
) {
    if let Some((before, after)) = counts.sub(pair, c) {
        // At 0 no word holds the pair any more (counts are exact). Below the floor it
        // leaves the index: a refill lists it again if it is ever near the top.
        if after == 0 || (after < floor && before >= floor) {
            lists.remove(&pair);
        }
    }
}

#[inline]
fn inc<S: Symbol>(
    counts: &mut PairCounts<S>,
    lists: &mut FxHashMap<(S, S), Vec<u32>>,
    increased: &mut Vec<(S, S)>,
    pair: (S, S),
    c: u64,
    wi: u32,
) {
    if counts.add(pair, c) {
        // First seen in this step, which visits all its words: its list is complete.
        lists.insert(pair, vec![wi]);
    } else if let Some(list) = lists.get_mut(&pair) {
        if list.last() != Some(&wi) {
            list.push(wi);
        }
    }
    increased.push(pair);
}

/// Every pair with a nonzero count, in 8 bytes a pair of u16 symbols instead of 16: the
/// count is a u32, and a count of `BIG_PAIR` or more lives in `big`. Late on 1 GB of mixed
/// corpora this holds 2.3M pairs, the largest structure then, and growing into a
/// 2^22-bucket table holds both tables for a moment (`examples/train_memory.rs` on those
/// counts: peak 193 -> 170 MB).
struct PairCounts<S: Symbol> {
    small: FxHashMap<(S, S), u32>,
    big: FxHashMap<(S, S), u64>,
}

/// `PairCounts::small` saying "look in `big`".
const BIG_PAIR: u32 = u32::MAX;

impl<S: Symbol> Default for PairCounts<S> {
    fn default() -> Self {
        PairCounts {
            small: FxHashMap::default(),
            big: FxHashMap::default(),
        }
    }
}

impl<S: Symbol> PairCounts<S> {
    /// The count of `pair` (0 when absent).
    #[inline]
    fn get(&self, pair: &(S, S)) -> u64 {
        match self.small.get(pair) {
            None => 0,
            Some(&BIG_PAIR) => self.big[pair],
            Some(&n) => n as u64,
        }
    }

    /// Adds `c` to `pair`'s count; `true` when the pair was absent.
    #[inline]
    fn add(&mut self, pair: (S, S), c: u64) -> bool {
        match self.small.entry(pair) {
            MapEntry::Occupied(mut e) => {
                let v = e.get_mut();
                if *v == BIG_PAIR {
                    *self.big.get_mut(&pair).expect("big pair count") += c;
                } else if *v as u64 + c >= BIG_PAIR as u64 {
                    self.big.insert(pair, *v as u64 + c);
                    *v = BIG_PAIR;
                } else {
                    *v += c as u32;
                }
                false
            }
            MapEntry::Vacant(e) => {
                if c >= BIG_PAIR as u64 {
                    self.big.insert(pair, c);
                    e.insert(BIG_PAIR);
                } else {
                    e.insert(c as u32);
                }
                true
            }
        }
    }

    /// Takes `c` (at most the count) from `pair`'s count, removing the pair at 0; the
    /// count before and after, or `None` when the pair is absent.
    #[inline]
    fn sub(&mut self, pair: (S, S), c: u64) -> Option<(u64, u64)> {
        let v = self.small.get_mut(&pair)?;
        let before = if *v == BIG_PAIR {
            self.big[&pair]
        } else {
            *v as u64
        };
        debug_assert!(before >= c, "{pair:?}");
        let after = before - c;
        if after == 0 {
            self.remove(&pair);
        } else if after >= BIG_PAIR as u64 {
            self.big.insert(pair, after);
        } else {
            *v = after as u32;
            if before >= BIG_PAIR as u64 {
                self.big.remove(&pair);
            }
        }
        Some((before, after))
    }

    fn remove(&mut self, pair: &(S, S)) {
        if self.small.remove(pair) == Some(BIG_PAIR) {
            self.big.remove(pair);
        }
    }

    fn iter(&self) -> impl Iterator<Item = ((S, S), u64)> + '_ {
        self.small.iter().map(|(&pair, &n)| {
            let c = if n == BIG_PAIR {
                self.big[&pair]
            } else {
                n as u64
            };
            (pair, c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(words: &[(&[u8], u64)], n: usize) -> Vec<(String, String)> {
        let (m, _) = train(words, n, 1, &mut |_| true).unwrap();
        m.into_iter()
            .map(|(a, b)| {
                (
                    String::from_utf8_lossy(&a).into_owned(),
                    String::from_utf8_lossy(&b).into_owned(),
                )
            })
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// Hand-derived: the CS336 handout's example ("low low low low low lower lower widest
    /// widest widest newest newest newest newest newest newest", pre-tokenized on spaces).
    #[test]
    fn handout_example() {
        let words: Vec<(&[u8], u64)> =
            vec![(b"low", 5), (b"lower", 2), (b"widest", 3), (b"newest", 6)];
        let got = run(&words, 6);
        let want = pairs(&[
            ("s", "t"),
            ("e", "st"),
            ("o", "w"),
            ("l", "ow"),
            ("w", "est"),
            ("n", "e"),
        ]);
        assert_eq!(got, want);
    }

    /// Overlapping runs merge left to right: "aaa" -> [aa, a]; "aaaa" -> [aa, aa].
    #[test]
    fn runs_merge_left_to_right() {
        let words: Vec<(&[u8], u64)> = vec![(b"aaaa", 1), (b"aaa", 1)];
        // Pairs: aa x5. After (a,a): "aaaa" -> [aa,aa], "aaa" -> [aa,a]; pairs (aa,aa)=1,
        // (aa,a)=1; tie -> greater (bytes): (aa,aa) > (aa,a).
        let got = run(&words, 3);
        assert_eq!(got, pairs(&[("a", "a"), ("aa", "aa"), ("aa", "a")]));
    }

    /// Ties go to the greater (left, right) bytes, comparing left first.
    #[test]
    fn ties_prefer_greater_bytes() {
        let words: Vec<(&[u8], u64)> = vec![(b"ab", 3), (b"ba", 3), (b"zz", 1)];
        assert_eq!(run(&words, 2), pairs(&[("b", "a"), ("a", "b")]));
    }

    /// A pair seen more than 2^32 times outranks one seen 10 times. With 32-bit counts,
    /// 2^32 + 1 would wrap to 1 and (c, d) would come first.
    #[test]
    fn counts_above_u32_keep_their_order() {
        let big = (1u64 << 32) + 1;
        let words: Vec<(&[u8], u64)> = vec![(b"ab", big), (b"cd", 10), (b"xab", 3)];
        // (a,b) = 2^32 + 4 after adding "xab"; then (c,d) = 10 vs (x,ab) = 3.
        assert_eq!(
            run(&words, 3),
            pairs(&[("a", "b"), ("c", "d"), ("x", "ab")])
        );
        // A pair count that passes 2^32 only as a sum over words (2^31 + 2^31 would wrap
        // to 0 in a u32) also wins.
        let half = 1u64 << 31;
        let words: Vec<(&[u8], u64)> = vec![(b"ab", half), (b"ab", half), (b"cd", 5)];
        assert_eq!(run(&words, 2), pairs(&[("a", "b"), ("c", "d")]));
    }

    #[test]
    fn min_frequency_stops_early() {
        let words: Vec<(&[u8], u64)> = vec![(b"ab", 5), (b"cd", 2)];
        let (m, stop) = train(&words, 10, 3, &mut |_| true).unwrap();
        assert_eq!(m, vec![(b"a".to_vec(), b"b".to_vec())]);
        assert_eq!(stop, Stop::NoPairs);
    }

    #[test]
    fn output_does_not_depend_on_input_order() {
        let mut words: Vec<(Vec<u8>, u64)> = (0..500u32)
            .map(|i| {
                (
                    format!("w{}x{}", i % 37, i % 11).into_bytes(),
                    (i % 7 + 1) as u64,
                )
            })
            .collect();
        let (a, _) = train(&words, 100, 1, &mut |_| true).unwrap();
        words.reverse();
        let (b, _) = train(&words, 100, 1, &mut |_| true).unwrap();
        assert_eq!(a, b);
    }

    /// The plain algorithm, written for clarity: recount every pair of every word at each
    /// step, take the highest (count, bytes(left), bytes(right)), merge left to right.
    /// Tokens are their bytes, so equal merges combine as DESIGN's duplicate-bytes rule says.
    fn naive(words: &[(Vec<u8>, u64)], n: usize, min_frequency: u64) -> Vec<Merge> {
        let mut ws: Vec<(Vec<Vec<u8>>, u64)> = words
            .iter()
            .map(|(w, c)| (w.iter().map(|&b| vec![b]).collect(), *c))
            .collect();
        let mut merges = Vec::new();
        while merges.len() < n {
            let mut counts: std::collections::BTreeMap<(Vec<u8>, Vec<u8>), u64> =
                Default::default();
            for (w, c) in &ws {
                for p in w.windows(2) {
                    *counts.entry((p[0].clone(), p[1].clone())).or_default() += c;
                }
            }
            let Some((pair, count)) = counts
                .into_iter()
                .max_by(|x, y| (x.1, &x.0).cmp(&(y.1, &y.0)))
            else {
                break;
            };
            if count < min_frequency.max(1) {
                break;
            }
            for (w, _) in &mut ws {
                let mut out: Vec<Vec<u8>> = Vec::with_capacity(w.len());
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == pair.0 && w[i + 1] == pair.1 {
                        out.push([pair.0.as_slice(), &pair.1].concat());
                        i += 2;
                    } else {
                        out.push(w[i].clone());
                        i += 1;
                    }
                }
                *w = out;
            }
            merges.push(pair);
        }
        merges
    }

    /// A small random corpus: few letters (so merges often rebuild existing bytes, e.g.
    /// "aa"+"b" and "a"+"ab"), Zipf-like counts (so the index floor moves many times).
    fn random_words(seed: u64) -> Vec<(Vec<u8>, u64)> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let letters = 2 + next(3);
        (0..20 + next(120))
            .map(|_| {
                let len = 1 + next(10) as usize;
                let w = (0..len).map(|_| b'a' + next(letters) as u8).collect();
                let c = match next(10) {
                    0 => 1 + next(5000),
                    1..=3 => 1 + next(100),
                    _ => 1 + next(4),
                };
                (w, c)
            })
            .collect()
    }

    /// The floor-indexed loop matches the plain algorithm on 400 random corpora: with u16
    /// and u32 symbols, with the floor at the top count (a refill nearly every step) and
    /// at `min_frequency` (every pair listed), and with no lists from refills (every merge
    /// finds its words by scanning the arena, the path for a merged pair without a list).
    #[test]
    fn matches_plain_algorithm_on_random_corpora() {
        for seed in 0..400u64 {
            let words = random_words(seed);
            let min_frequency = [1, 1, 2, 7][seed as usize % 4];
            let want = naive(&words, 300, min_frequency);
            let iter = || words.iter().map(|(w, c)| (w, *c));
            for (divisor, index) in [
                (FLOOR_DIVISOR, true),
                (1, true),
                (u64::MAX, true),
                (4, false),
            ] {
                let mut t = Trainer::<u16>::new(iter(), min_frequency);
                (t.divisor, t.index) = (divisor, index);
                let (got, _) = t.run(300, &mut |_| true).unwrap();
                assert_eq!(got, want, "seed {seed}, divisor {divisor}, index {index}");
                assert_eq!(t.scans > 0, !index && !want.is_empty(), "seed {seed}");
            }
            let mut t = Trainer::<u32>::new(iter(), min_frequency);
            let (got, _) = t.run(300, &mut |_| true).unwrap();
            assert_eq!(got, want, "u32, seed {seed}");
        }
    }

    /// Word counts of 2^32 - 1 and more live outside the 16-byte word record, and follow
    /// their words when a refill renumbers them (words merged down to one symbol go).
    #[test]
    fn big_word_counts_match_plain_algorithm() {
        for seed in 0..100u64 {
            let words: Vec<(Vec<u8>, u64)> = random_words(seed)
                .into_iter()
                .map(|(w, c)| (w, c * (u32::MAX as u64 / 2) + c % 3))
                .collect();
            assert!(words.iter().any(|(_, c)| *c >= u32::MAX as u64));
            let want = naive(&words, 300, 1);
            let mut t = Trainer::<u16>::new(words.iter().map(|(w, c)| (w, *c)), 1);
            t.divisor = 1;
            let (got, _) = t.run(300, &mut |_| true).unwrap();
            assert_eq!(got, want, "seed {seed}");
        }
    }

    #[test]
    fn words_with_finds_exactly_the_words_holding_a_pair() {
        let words: Vec<(&[u8], u64)> = vec![(b"abc", 1), (b"bca", 2), (b"ab", 3), (b"xaxb", 4)];
        let t = Trainer::<u16>::new(words.iter().map(|(w, c)| (*w, *c)), 1);
        let (a, b, x) = (b'a' as u16, b'b' as u16, b'x' as u16);
        assert_eq!(t.words_with((a, b)), vec![0, 2]);
        assert_eq!(t.words_with((x, a)), vec![3]);
        assert_eq!(t.words_with((b, a)), Vec::<u32>::new());
    }

    /// No false "no"; few false "yes" (1,000 pairs set 1,000 of 2^20 bits, so about 0.1%).
    #[test]
    fn pair_filter_holds_its_pairs_and_few_others() {
        let held: Vec<(u32, u32)> = (0..1000u32).map(|i| (i * 7, i * 13 + 1)).collect();
        let f = PairFilter::new(held.iter().copied());
        assert!(held.iter().all(|&p| f.may_hold(p)));
        let wrong = (0..100_000u32)
            .map(|i| (i + 70_000, i))
            .filter(|&p| f.may_hold(p))
            .count();
        assert!(wrong < 1000, "{wrong} false yes of 100,000");
    }

    fn by_ids(reuse: bool, count_tokens: bool, tokens: usize) -> Rules {
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
    fn ties_by_ids_prefer_smaller_ids() {
        let words: Vec<(&[u8], u64)> = vec![(b"ab", 3), (b"ba", 3)];
        let (m, _) = train_with(
            words.iter().map(|(w, c)| (*w, *c)),
            2,
            &by_ids(true, false, 0),
            &mut |_| true,
        )
        .unwrap();
        assert_eq!(strings(&m), pairs(&[("a", "b"), ("b", "a")]));
        // Larger ids for a smaller byte: give b the id 0, and (b, a) wins.
        let mut rules = by_ids(true, false, 0);
        rules.ids.as_mut().unwrap().swap(0, b'b' as usize);
        let (m, _) = train_with(words.iter().map(|(w, c)| (*w, *c)), 1, &rules, &mut |_| {
            true
        })
        .unwrap();
        assert_eq!(strings(&m), pairs(&[("b", "a")]));
    }

    /// Start token "ab" (256) in [ab, c] x2, and [a, b, c] x3. (a, b) = 3 ties (b, c) = 3
    /// and has the smaller ids. Reusing, it rebuilds 256 and (ab, c) = 5 is one merge;
    /// rustbpe's way it is a new token 257, so (257, c) = 3 and (256, c) = 2 are two.
    #[test]
    fn a_rebuilt_token_is_reused_or_new() {
        let words = || vec![(vec![256, b'c' as u32], 2), (vec![97, 98, 99], 3)];
        let run = |rules: &Rules| {
            let (m, stop) =
                train_encoded(vec![b"ab".to_vec()], words(), 10, rules, &mut |_| true).unwrap();
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
    fn count_tokens_skips_rebuilt_tokens() {
        let words = || vec![(vec![97, 98], 3), (vec![99, 100], 1)];
        let run = |count_tokens| {
            let rules = by_ids(true, count_tokens, 1);
            let (m, _) =
                train_encoded(vec![b"ab".to_vec()], words(), 1, &rules, &mut |_| true).unwrap();
            strings(&m)
        };
        assert_eq!(run(false), pairs(&[("a", "b")]));
        assert_eq!(run(true), pairs(&[("a", "b"), ("c", "d")]));
    }

    /// HF's max_token_length 3: a pair counts only if shorter than 3 bytes (or two single
    /// bytes). "abcd": (a, b) first (smallest ids); (ab, c) is 3 bytes, so (c, d); then
    /// (ab, cd) is 4: nothing is left.
    #[test]
    fn max_token_length_leaves_long_pairs_uncounted() {
        let mut rules = by_ids(true, true, 0);
        rules.max_token_length = Some(3);
        let words: Vec<(&[u8], u64)> = vec![(b"abcd", 5)];
        let (m, stop) = train_with(words.iter().map(|(w, c)| (*w, *c)), 10, &rules, &mut |_| {
            true
        })
        .unwrap();
        assert_eq!(strings(&m), pairs(&[("a", "b"), ("c", "d")]));
        assert_eq!(stop, Stop::NoPairs);
    }

    #[test]
    fn bad_start_symbols_are_errors() {
        let none = Vec::<(Vec<u32>, u64)>::new;
        let rules = by_ids(true, false, 0); // ids for the bytes only, but one token given
        assert!(train_encoded(vec![b"ab".to_vec()], none(), 1, &rules, &mut |_| true).is_err());
        let rules = Rules::cs336(1);
        assert!(train_encoded(vec![b"a".to_vec()], none(), 1, &rules, &mut |_| true).is_err());
        let word = vec![(vec![300u32, 1], 1)];
        assert!(train_encoded(vec![], word, 1, &rules, &mut |_| true).is_err());
    }

    /// Counts cross 2^32 - 1 both ways and come back exactly; absent pairs read 0.
    #[test]
    fn pair_counts_cross_the_u32_boundary() {
        let mut pc = PairCounts::<u16>::default();
        let (p, q) = ((1, 2), (3, 4));
        let big = u32::MAX as u64;
        assert!(pc.add(p, big - 1));
        assert!(!pc.add(p, 1));
        assert_eq!(pc.get(&p), big);
        assert!(!pc.add(p, big));
        assert_eq!(pc.get(&p), 2 * big);
        assert_eq!(pc.sub(p, big + 1), Some((2 * big, big - 1)));
        assert_eq!(pc.get(&p), big - 1);
        assert!(pc.big.is_empty());
        assert!(pc.add(q, 3 * big));
        assert_eq!(pc.sub(q, big), Some((3 * big, 2 * big)));
        let mut all: Vec<_> = pc.iter().collect();
        all.sort();
        assert_eq!(all, vec![(p, big - 1), (q, 2 * big)]);
        assert_eq!(pc.sub(q, 2 * big), Some((2 * big, 0)));
        assert_eq!(pc.get(&q), 0);
        assert_eq!((pc.small.len(), pc.big.len()), (1, 0));
        assert_eq!(pc.sub(q, 1), None);
    }
}
