//! The BPE kernels: merge the adjacent pair with the lowest priority, leftmost on ties,
//! until none is left. Short pre-tokens run tiktoken's scan over stack arrays; long ones a
//! linked list and a min-heap (O(n log n)); pre-tokens with multi-byte characters may start
//! from whole characters (see `chars`).

use super::chars::Scratch;
use super::monotone_heap::MonotoneHeap;
use super::pair_table::NONE;
use super::Encoder;
use crate::TokenId;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The shortest pre-token `bpe_long` gives the radix queue.
const RADIX: usize = 4096;

/// The min-queue `bpe_long` runs on.
trait Queue {
    fn push(&mut self, key: u64);
    fn pop(&mut self) -> Option<u64>;
}

struct MinHeap(BinaryHeap<Reverse<u64>>);

impl Queue for MinHeap {
    #[inline(always)]
    fn push(&mut self, key: u64) {
        self.0.push(Reverse(key));
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        self.0.pop().map(|Reverse(k)| k)
    }
}

impl Queue for MonotoneHeap {
    #[inline(always)]
    fn push(&mut self, key: u64) {
        MonotoneHeap::push(self, key)
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        MonotoneHeap::pop(self)
    }
}

/// Pre-tokens up to this many bytes use the array scan; longer ones the heap. The scan is
/// quadratic but allocation-free (128 is no faster on Chinese under o200k, whose runs of
/// Han characters are often 30-120 bytes).
pub(super) const SHORT: usize = 64;
/// Stack arrays for the scan come in two sizes, so short pre-tokens (nearly all) do not pay
/// for initialising 128-entry arrays.
const TINY: usize = 24;
/// Pre-tokens up to this many bytes take [`Encoder::bpe_fixed`], 8 wide up to 8 bytes (16
/// wide for all: 15% more instructions in BPE on new English under o200k).
const FIXED: usize = 16;

impl Encoder {
    #[inline]
    pub(super) fn bpe_short(&self, pretoken: &[u8], out: &mut Vec<TokenId>) {
        self.bpe_short_with(pretoken, out, |a, b| self.pair(a, b))
    }

    #[inline]
    pub(super) fn bpe_short_with(
        &self,
        pretoken: &[u8],
        out: &mut Vec<TokenId>,
        pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) {
        if pretoken.len() <= FIXED / 2 {
            self.bpe_fixed::<{ FIXED / 2 }, FIXED>(pretoken, out, pair)
        } else if pretoken.len() <= FIXED {
            self.bpe_fixed::<FIXED, { 2 * FIXED }>(pretoken, out, pair)
        } else if pretoken.len() <= TINY {
            self.bpe_scan::<TINY>(pretoken, out, pair)
        } else {
            self.bpe_scan::<SHORT>(pretoken, out, pair)
        }
    }

    /// [`Encoder::bpe_scan`] for a pre-token of at most `W` bytes, with loops of fixed
    /// length: the search for the lowest pair always runs over `W` pairs (those past the
    /// last part are none), and the shifts after a merge always move `W - 1` entries, so
    /// no loop's end depends on the pre-token or the merge's place. On 1 MB of new English
    /// under o200k (callgrind, branch simulation) BPE of the cache's misses mispredicts 224k
    /// branches this way against 434k with the scan's loops, for 4% more instructions.
    fn bpe_fixed<const W: usize, const W2: usize>(
        &self,
        pretoken: &[u8],
        out: &mut Vec<TokenId>,
        mut pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) {
        let mut n = pretoken.len();
        if n == 0 {
            return;
        }
        // A pair as one word, priority above merged id: the same priority is the same merge,
        // so the lowest word is the lowest priority, and `u64::MAX` is no pair.
        let word = |(p, m): (u32, TokenId)| (p as u64) << 32 | m as u64;
        // `W2` is twice `W`: a shift reads `W - 1` entries from past the merged pair. Every
        // pair from `n - 1` on is none: shifts only ever move those leftwards.
        let mut ids = [0 as TokenId; W2];
        let mut pairs = [u64::MAX; W2];
        for (slot, &b) in ids.iter_mut().zip(pretoken) {
            *slot = self.byte_ids[b as usize];
        }
        for (i, w) in pretoken.windows(2).enumerate() {
            pairs[i] = word(self.byte_pair(w[0], w[1]));
        }
        // Starts loading the pairs that merging the pair at `i` would look up (the merged part
        // with each neighbour), so that when that merge comes they are in cache: a look-up of
        // a pair the thread has not seen lately is a load from L3 or memory (o200k's table is
        // 2 MB), and each merge's waits on the merge before. On new text, 1.05-1.14x on English and
        // code and 1.05x on the 25 languages (o200k, cl100k, GPT-2; paired runs); the same in
        // the longer kernels and from whole characters was no faster.
        let ahead = |ids: &[TokenId; W2], pairs: &[u64; W2], i: usize, n: usize| {
            let m = pairs[i];
            if m != u64::MAX {
                if i > 0 {
                    self.pairs.prefetch(ids[i - 1], m as TokenId);
                }
                if i + 2 < n {
                    self.pairs.prefetch(m as TokenId, ids[i + 2]);
                }
            }
        };
        for i in 0..n - 1 {
            ahead(&ids, &pairs, i, n);
        }
        loop {
            let (mut best, mut at) = (u64::MAX, 0);
            for (i, &p) in pairs[..W].iter().enumerate() {
                // Strictly lower: leftmost on ties.
                let lower = p < best;
                best = if lower { p } else { best };
                at = if lower { i } else { at };
            }
            if best == u64::MAX {
                break;
            }
            // The parts after the merged pair move one to the left; so do their pairs.
            ids[at] = best as TokenId;
            ids.copy_within(at + 2..at + 1 + W, at + 1);
            pairs.copy_within(at + 2..at + 1 + W, at + 1);
            n -= 1;
            pairs[at] = if at + 1 < n {
                word(pair(ids[at], ids[at + 1]))
            } else {
                u64::MAX
            };
            ahead(&ids, &pairs, at, n);
            if at > 0 {
                pairs[at - 1] = word(pair(ids[at - 1], ids[at]));
                ahead(&ids, &pairs, at - 1, n);
            }
        }
        out.extend_from_slice(&ids[..n]);
    }

    /// tiktoken's scan: find the lowest pair, merge, update its neighbours. O(n * merges),
    /// fastest for short pre-tokens since everything stays in two small stack arrays.
    fn bpe_scan<const N: usize>(
        &self,
        pretoken: &[u8],
        out: &mut Vec<TokenId>,
        pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) {
        let n = pretoken.len();
        if n == 0 {
            return;
        }
        let mut ids = [0 as TokenId; N];
        // prio[i] is the pair (ids[i], ids[i + 1]).
        let mut prio = [(NONE, NONE); N];
        for (slot, &b) in ids.iter_mut().zip(pretoken) {
            *slot = self.byte_ids[b as usize];
        }
        for i in 0..n - 1 {
            prio[i] = self.byte_pair(pretoken[i], pretoken[i + 1]);
        }
        let n = merge_scan(&mut ids, &mut prio, n, pair);
        out.extend_from_slice(&ids[..n]);
    }

    /// Linked list of parts plus a min-queue of (priority, position) with lazy invalidation:
    /// an entry is stale when the pair at its position has another priority.
    /// Positions are byte offsets, so queue order on ties is leftmost first. O(n log n).
    /// A monotone pair table takes the radix queue for pre-tokens of `RADIX` bytes or more:
    /// 3.9x faster than the binary heap on 2 MB pre-tokens (SuperBPE's, gpt2 merges, 8k
    /// vocab), while its 65 buckets cost more than they save on a Han run of 100 bytes.
    pub(super) fn bpe_long(&self, pretoken: &[u8], out: &mut Vec<TokenId>) {
        let ids = pretoken
            .iter()
            .map(|&b| self.byte_ids[b as usize])
            .collect();
        let pairs = pretoken
            .windows(2)
            .map(|w| self.byte_pair(w[0], w[1]))
            .collect();
        self.heap_merge_from(ids, pairs, |a, b| self.pair(a, b), out)
    }

    /// BPE from the parts `ids` by `pair`, on the heap.
    pub(super) fn heap_merge(
        &self,
        ids: Vec<TokenId>,
        pair: impl Fn(TokenId, TokenId) -> (u32, TokenId),
        out: &mut Vec<TokenId>,
    ) {
        let pairs = ids.windows(2).map(|w| pair(w[0], w[1])).collect();
        self.heap_merge_from(ids, pairs, pair, out)
    }

    /// [`Encoder::heap_merge`] where `pairs[i]` is the pair at `i` before any merge
    /// (`(priority, merged id)`, one fewer than the parts).
    pub(super) fn heap_merge_from(
        &self,
        ids: Vec<TokenId>,
        pairs: Vec<(u32, TokenId)>,
        pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
        out: &mut Vec<TokenId>,
    ) {
        if ids.len() < 2 {
            out.extend_from_slice(&ids);
        } else if self.monotone && ids.len() >= RADIX {
            heap_merge_with(ids, pairs, pair, out, MonotoneHeap::new())
        } else {
            let heap = MinHeap(BinaryHeap::with_capacity(ids.len()));
            heap_merge_with(ids, pairs, pair, out, heap)
        }
    }

    /// BPE from whole characters when the pre-token qualifies (see `chars`); `false` if not.
    #[inline]
    pub(super) fn bpe_chars(
        &self,
        pretoken: &[u8],
        hot: &mut [(u64, u32, TokenId)],
        scratch: &mut Scratch,
        out: &mut Vec<TokenId>,
    ) -> bool {
        match &self.chars {
            // Only pre-tokens with a multi-byte character gain.
            Some(cs) if !pretoken.is_ascii() => cs.bpe(self, pretoken, out, scratch, |a, b| {
                self.hot_pair(hot, a, b)
            }),
            _ => false,
        }
    }
}

/// Linked list of parts plus a min-queue of (priority, position) with lazy invalidation:
/// an entry is stale when the pair at its position has another priority, which `pairs`
/// keeps beside the parts, so a pop looks nothing up. Positions are indices of the first
/// parts, so queue order on ties is leftmost first. O(n log n).
/// A monotone pair table takes the radix queue for pre-tokens of `RADIX` bytes or more:
/// 3.9x faster than the binary heap on 2 MB pre-tokens (SuperBPE's, gpt2 merges, 8k
/// vocab), while its 65 buckets cost more than they save on a Han run of 100 bytes.
#[inline(always)]
fn heap_merge_with(
    mut ids: Vec<TokenId>,
    mut pairs: Vec<(u32, TokenId)>,
    mut pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    out: &mut Vec<TokenId>,
    mut heap: impl Queue,
) {
    let n = ids.len();
    let end = n as u32;
    let mut next: Vec<u32> = (1..=end).collect();
    let mut prev: Vec<u32> = (0..end).map(|i| i.wrapping_sub(1)).collect();
    // pairs[i]: the pair of the part at `i` and the next, `(NONE, NONE)` for the last part.
    pairs.push((NONE, NONE));
    for (i, &(p, _)) in pairs.iter().enumerate() {
        if p != NONE {
            heap.push(((p as u64) << 32) | i as u64);
        }
    }
    while let Some(entry) = heap.pop() {
        let (p, at) = ((entry >> 32) as u32, (entry & 0xffff_ffff) as usize);
        let right = next[at];
        // Dead nodes have next == NONE; the last node has next == end.
        if right >= end || pairs[at].0 != p {
            continue;
        }
        let merged = pairs[at].1;
        ids[at] = merged;
        let after = next[right as usize];
        next[right as usize] = NONE;
        next[at] = after;
        pairs[at] = (NONE, NONE);
        if after < end {
            prev[after as usize] = at as u32;
            pairs[at] = pair(merged, ids[after as usize]);
            let q = pairs[at].0;
            if q != NONE {
                heap.push(((q as u64) << 32) | at as u64);
            }
        }
        let before = prev[at];
        if before != NONE {
            pairs[before as usize] = pair(ids[before as usize], merged);
            let q = pairs[before as usize].0;
            if q != NONE {
                heap.push(((q as u64) << 32) | before as u64);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}

/// The scan's merge loop over `n` parts `ids[..n]` whose pairs are `prio[..n - 1]`
/// (`(priority, merged id)`): merges the lowest pair, leftmost on ties, until none is left;
/// returns the number of parts.
#[inline]
pub(super) fn merge_scan<const N: usize>(
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
pub(super) fn lowest_pair(prio: &[(u32, TokenId)]) -> (u32, usize) {
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
pub(super) fn merge_at<const N: usize>(
    ids: &mut [TokenId; N],
    prio: &mut [(u32, TokenId); N],
    mut n: usize,
    at: usize,
    pair: &mut impl FnMut(TokenId, TokenId) -> (u32, TokenId),
) -> usize {
    ids[at] = prio[at].1;
    // Element by element: the pre-tokens are short, and copy_within is a call to memmove
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::test_vocab::merges_encoder;

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

    /// The fixed-width scan (up to `FIXED` bytes) and the scan (up to `SHORT`) give the
    /// oracle's BPE on random pre-tokens of every length up to `SHORT`, under random merge
    /// lists over a four-letter alphabet, where ties and merges at either end are common.
    #[test]
    fn short_kernels_equal_plain_bpe() {
        use crate::encode::test_vocab::plain_bpe;
        use crate::test_rng::Lcg;
        let mut rng = Lcg(19);
        let letters = ["a", "b", "c", "d"];
        for _ in 0..40 {
            let mut tokens: Vec<String> = letters.iter().map(|s| s.to_string()).collect();
            let mut merges = Vec::new();
            while merges.len() < 30 {
                let a = tokens[rng.below(tokens.len())].clone();
                let b = tokens[rng.below(tokens.len())].clone();
                if !tokens.contains(&(a.clone() + &b)) {
                    tokens.push(a.clone() + &b);
                    merges.push((a, b));
                }
            }
            let extra: Vec<(TokenId, String)> = tokens[4..]
                .iter()
                .enumerate()
                .map(|(i, t)| (300 + i as TokenId, t.clone()))
                .collect();
            let merges: Vec<(&str, &str)> = merges
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            let extra: Vec<(TokenId, &str)> = extra.iter().map(|(i, t)| (*i, t.as_str())).collect();
            let enc = merges_encoder(&merges, &extra);
            for len in 0..=SHORT {
                let pretoken: Vec<u8> = (0..len).map(|_| b'a' + rng.below(4) as u8).collect();
                let mut got = Vec::new();
                enc.bpe_short(&pretoken, &mut got);
                assert_eq!(
                    got,
                    plain_bpe(&enc, &pretoken),
                    "{:?}",
                    String::from_utf8_lossy(&pretoken)
                );
            }
        }
    }

    #[test]
    fn long_path_equals_short_path() {
        let enc = merges_encoder(
            &[("a", "a"), ("aa", "aa"), ("a", "b"), ("aaaa", "ab")],
            &[(300, "aa"), (301, "aaaa"), (302, "ab"), (303, "aaaaab")],
        );
        for n in [1, 2, 3, 5, 17, 63, 64, 65, 200, 1001] {
            let mut pretoken = vec![b'a'; n];
            pretoken.extend_from_slice(b"ab");
            let (mut short, mut long) = (Vec::new(), Vec::new());
            if pretoken.len() <= SHORT {
                enc.bpe_short(&pretoken, &mut short);
            } else {
                // The scan works for any length; compare it with the heap on long inputs too.
                short = crate::encode::test_vocab::plain_bpe(&enc, &pretoken);
            }
            enc.bpe_long(&pretoken, &mut long);
            assert_eq!(short, long, "n = {n}");
        }
    }
}

#[cfg(test)]
mod queue_tests {
    use super::*;
    use crate::encode::test_vocab::merges_encoder;
    use crate::test_rng::Lcg;

    /// The radix queue and the binary heap give the same BPE on long random pre-tokens of
    /// a monotone merge list, and the table is found monotone; one merge whose part is
    /// made by a later merge makes it not.
    #[test]
    fn radix_queue_equals_binary_heap() {
        let merges = [
            ("a", "b"),
            ("b", "a"),
            ("ab", "a"),
            ("a", "ba"),
            ("aba", "b"),
            ("b", "b"),
        ];
        let tokens = [
            (300, "ab"),
            (301, "ba"),
            (302, "aba"),
            (303, "aaba"),
            (304, "abab"),
        ];
        let enc = merges_encoder(&merges, &[tokens.as_slice(), &[(305, "bb")]].concat());
        assert!(enc.monotone);
        let mut rng = Lcg(5);
        for len in [RADIX, RADIX + 1, 3 * RADIX + 7] {
            let text: Vec<u8> = (0..len).map(|_| b"ab"[rng.below(2)]).collect();
            let (mut radix, mut heap) = (Vec::new(), Vec::new());
            let ids = || text.iter().map(|&b| enc.byte_ids[b as usize]).collect();
            let pairs = || text.windows(2).map(|w| enc.byte_pair(w[0], w[1])).collect();
            let pair = |a, b| enc.pair(a, b);
            heap_merge_with(ids(), pairs(), pair, &mut radix, MonotoneHeap::new());
            heap_merge_with(ids(), pairs(), pair, &mut heap, MinHeap(BinaryHeap::new()));
            assert_eq!(radix, heap, "length {len}");
            assert!(radix.len() < len * 3 / 4, "{} of {len}", radix.len());
        }
        let late = merges_encoder(&[("a", "ab"), ("a", "b")], &[(300, "aab"), (301, "ab")]);
        assert!(!late.monotone);
    }
}
