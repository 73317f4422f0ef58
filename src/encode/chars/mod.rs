//! BPE that starts from whole characters instead of bytes.
//!
//! In Chinese under o200k most characters are one token made by two merges, and the scan
//! spends most of its time building them: 3 parts per character to scan and 2 merges of
//! 2 pair look-ups each. When the result provably equals BPE from bytes, starting from the
//! characters' tokens skips all that.
//!
//! Phase 1 turns each character into the BPE of its bytes alone (one token for most; a rare
//! character may stay two or three), phase 2 runs BPE from there. For a pre-token of valid UTF-8
//! this equals BPE from bytes when
//! 1. the pair table is *monotone at characters*: a pair's priority is above the priority of
//!    the merge that made each of its parts that is one whole multi-byte character (checked
//!    at construction; extended vocabularies such as Qwen3.5's build tokens of several
//!    characters from later ones, which this allows), and
//! 2. no valid token that *straddles* a character boundary while starting or ending inside a
//!    character occurs in the pre-token (an Aho-Corasick search over those tokens).
//!
//! Why. Call a part *aligned* when it starts and ends on character boundaries (its bytes tell:
//! it starts with a non-continuation byte and ends with a whole character). Every part BPE
//! ever forms is a valid token (BPE restricted to a part's span is BPE of those bytes alone).
//! A merge across a character boundary with an unaligned part would form, or take as a part,
//! a valid straddling token that is a substring of the pre-token; (2) rules that out. So every
//! merge of BPE from bytes (call it R) is inside one character, where it runs as BPE of that
//! character alone, or joins two aligned parts. The aligned parts of R and of BPE from phase
//! 1 (P) differ only in the characters R has not finished yet. Take R's k-th merge across
//! characters, of priority p, with the same merges across characters before it in R and P
//! (induction). A pair P sees there is either there in R too (R chose the lowest, leftmost)
//! or has a part that is a character `c` R has not finished; `c`'s last merge (priority
//! made(c)) is still to come in R, so p <= made(c), and by (1) the pair's priority is above
//! made(c). Equal priorities mean the same pair, so ties go the same way. When R ends, every
//! character is finished and P is in R's final state, with no pair left to merge.
//!
//! Files: this one holds [`CharStart`] and phase 1 and 2; `build.rs` the check of (1) and the
//! tables; `windows.rs` where the straddling tokens of (2) occur in a pre-token.

use super::bpe::{lowest_pair, merge_at, merge_scan};
use super::filter::PairFilter;
use super::pair_table::NONE;
use super::Encoder;
use crate::TokenId;
use windows::Windows;

mod build;
mod windows;

/// Pre-tokens of up to this many parts after phase 1 start from characters; longer ones go
/// to the heap from bytes. Chinese merges few pairs (0.3 a pre-token under o200k), so the
/// scan stays cheap on long runs of Han characters: with 256, 46 pre-tokens of 4 MB of
/// Chinese go to the heap under o200k (4.5 M instructions), with 64, 244 (8.7 M).
const PARTS: usize = 256;

/// Phase 2 runs on the heap (O(n log n)) instead of the scan (O(n) a merge) from this many
/// parts on, when the parts times the pairs that merge at the start reach `HEAP_WORK`: Thai,
/// written without spaces, has pre-tokens of 60 to 200 characters that merge most of their
/// pairs (a third of the parts times merges of the 25-language corpus under o200k); with the
/// heap there, 2 MB of it take 3.7% fewer instructions (callgrind: 336.4M against 323.8M).
const HEAP_PARTS: usize = 24;
const HEAP_WORK: usize = 256;

/// Marks an entry of [`CharStart::bmp`] as an index into `multi` (ids are below 2^26); such
/// an entry is also one part of phase 1, tagged `UNALIGNED`, expanded only at the end.
const MULTI: TokenId = 1 << 31;
/// Tags on a part while [`CharStart::bpe`] runs: a fragment of a character (never merges
/// again), a part made of ASCII bytes only, a part made from byte units that is not whole
/// characters (its pairs are not in the filter: they go to the pair table), and one made
/// from byte units that is (see [`CharStart::aligned`]).
const UNALIGNED: TokenId = 1 << 30;
const ASCII: TokenId = 1 << 29;
const RAW: TokenId = 1 << 28;
const BYTES: TokenId = 1 << 27;
/// The id under the tags.
const ID: TokenId = BYTES - 1;

/// What BPE from characters needs, built once per encoder.
pub(super) struct CharStart {
    /// For each code point below U+10000 (surrogates aside): its token if its UTF-8 bytes
    /// are one valid token, else `MULTI | i` for `multi[i]` (256 KB, in L2; a whole-token
    /// look-up for o200k is a cache miss). Other characters run BPE on their bytes.
    bmp: Box<[TokenId; 1 << 16]>,
    /// The BPE of the other characters below U+10000 (two or three tokens, then `NONE`), at
    /// `bmp[c] & !MULTI`.
    multi: Vec<[TokenId; 3]>,
    /// Every valid token that could straddle a character boundary unaligned (not valid UTF-8,
    /// with a non-continuation byte after its first), by the bytes around its first character
    /// boundary (see [`Windows`]).
    windows: Windows,
    /// The pairs of the table whose parts are valid UTF-8 and not both ASCII: phase 2 looks
    /// up no other pair of a non-ASCII part.
    filter: PairFilter,
    /// Bit `id` of each token whose bytes are valid UTF-8 with a non-ASCII byte: a part made
    /// from byte units that is such a token is whole characters (a substring of valid UTF-8
    /// that is valid UTF-8 starts and ends on boundaries), so its pairs are the filter's
    /// again (see [`CharStart::aligned`]).
    text: Vec<u64>,
}

impl CharStart {
    /// BPE of `pretoken` from its characters' tokens, appended to `out`; `false` (and nothing
    /// appended) when the pre-token does not qualify: not valid UTF-8, or more than [`PARTS`]
    /// parts after phase 1. `pair` gives `(priority, merged id)`. The result is right for any
    /// pre-token; the caller passes only pre-tokens with a non-ASCII byte, the only ones that
    /// gain.
    ///
    /// Phase 2 looks up only pairs of *aligned* parts (whole characters and what they merge
    /// into): a part that is a fragment of a character never merges again. Inside its character
    /// its pairs are final (BPE of the character alone stopped there), and a merge across the
    /// character's edge would make a straddling token, which the pre-token does not hold; so the
    /// merges of phase 2, all of which join aligned parts (see the module docs), run the same
    /// with those pairs left out. Parts carry tags in their high bits while this runs. A pair
    /// of aligned parts not both ASCII is looked up only when the [`PairFilter`] may hold it
    /// (under o200k, 86k of the 578k such pairs in 4 MB of Chinese).
    ///
    /// A pre-token that holds straddlers starts from bytes in the characters they touch (and from
    /// whole characters elsewhere): the argument of the module docs holds for any split of
    /// the pre-token into *units* that no token occurrence crosses from inside a unit, and a
    /// straddler then starts and ends on byte units. Under o200k 5% of Chinese pre-tokens hold
    /// one (mostly a space and the first two bytes of a Han character, ` \xe6\x9f`), and 61% of
    /// the 25-language corpus's (a space and the first byte of a letter, ` \xd8`).
    #[inline]
    pub(super) fn bpe(
        &self,
        enc: &Encoder,
        pretoken: &[u8],
        out: &mut Vec<TokenId>,
        scratch: &mut Scratch,
        mut pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) -> bool {
        let Some(start) = self.start(enc, pretoken, scratch, &mut pair) else {
            return false;
        };
        let Scratch {
            ids,
            prio,
            expanded,
        } = scratch;
        let multi = start.multi;
        let n = if start.on_heap() {
            self.merge_on_heap(enc, ids, prio, start.n, &mut pair)
        } else {
            merge_live(ids, prio, start, |a, b| self.aligned(&mut pair, a, b))
        };
        if !multi {
            out.extend(ids[..n].iter().map(|&t| t & ID));
            return true;
        }
        // Expanded into the scratch's third array, then copied at once: a push per id checks
        // the capacity each time.
        let mut m = 0;
        for &t in &ids[..n] {
            if t & MULTI == 0 {
                expanded[m] = t & ID;
                m += 1;
            } else {
                let three = &self.multi[(t & ID) as usize];
                expanded[m..m + 3].copy_from_slice(three);
                m += if three[2] == NONE { 2 } else { 3 };
            }
        }
        out.extend_from_slice(&expanded[..m]);
        true
    }

    /// Phase 1 into `scratch`: each character's BPE, tagged, then the pairs between parts
    /// (see [`CharStart::aligned`]). The characters that a straddler occurrence touches start
    /// from their bytes instead, tagged [`RAW`] or [`BYTES`]: an occurrence is found at its
    /// first boundary (see [`Windows`]), where it covers the character before, which is then
    /// pushed again as bytes, and the characters up to its end. `None` when the pre-token is not valid UTF-8 or has
    /// more than [`PARTS`] parts. The pairs of two aligned parts are looked up after the
    /// decoding loop: inside it they made it spill registers.
    #[inline(always)]
    fn start(
        &self,
        enc: &Encoder,
        pretoken: &[u8],
        scratch: &mut Scratch,
        pair: &mut impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) -> Option<Start> {
        let Scratch { ids, prio, .. } = scratch;
        let mut n = 0;
        let mut i = 0;
        // Characters that start before `raw_until` start from their bytes; the last character
        // pushed started at byte `last` with part `last_n`, from its bytes if `last_raw`.
        let (mut raw_until, mut last, mut last_n, mut last_raw) = (0, 0, 0, false);
        macro_rules! push {
            ($t:expr) => {{
                ids[n] = $t;
                n += 1;
            }};
        }
        // A character that is not one token (`bmp` entry `t`) is one part until the end:
        // none of its tokens merges again, so its pairs are none (`UNALIGNED`).
        let mut multi = false;
        macro_rules! multi {
            ($t:expr) => {{
                push!($t | UNALIGNED);
                multi = true;
            }};
        }
        while i < pretoken.len() {
            // One slice pattern per length (strict UTF-8: one spelling per character), and
            // whether a straddler may have its first boundary here.
            let (t, len, hit) = match pretoken[i..] {
                [b0 @ 0xE0..=0xEF, b1, b2, ..]
                    if ((b1 as u16) << 8 | b2 as u16) & 0xC0C0 == 0x8080
                        && !(b0 == 0xE0 && b1 < 0xA0 || b0 == 0xED && b1 >= 0xA0) =>
                {
                    let cp = (b0 as usize & 0x0F) << 12
                        | (b1 as usize & 0x3F) << 6
                        | (b2 as usize & 0x3F);
                    let hit = i > 0 && {
                        let before = pretoken[i - 1];
                        if before >= 0x80 {
                            self.windows.after_multi(before, cp, b0, b1)
                        } else {
                            self.windows.hit(pretoken, i)
                        }
                    };
                    (self.bmp[cp], 3, hit)
                }
                [b0 @ 0..=0x7F, ..] => (
                    enc.byte_ids[b0 as usize] | ASCII,
                    1,
                    i > 0 && self.windows.hit(pretoken, i),
                ),
                [b0 @ 0xC2..=0xDF, b1, ..] if b1 & 0xC0 == 0x80 => {
                    let hit = i > 0 && {
                        let before = pretoken[i - 1];
                        if before >= 0x80 {
                            self.windows.before_two(before, b0, b1)
                        } else {
                            self.windows.hit(pretoken, i)
                        }
                    };
                    (
                        self.bmp[(b0 as usize & 0x1F) << 6 | (b1 as usize & 0x3F)],
                        2,
                        hit,
                    )
                }
                _ => match char_len(&pretoken[i..]) {
                    Some(4) => (NONE, 4, i > 0 && self.windows.hit(pretoken, i)),
                    _ => return None,
                },
            };
            if hit {
                let end = self.windows.occurrence_end(pretoken, i);
                if end > i {
                    if !last_raw {
                        n = last_n;
                        for &b in &pretoken[last..i] {
                            push!(byte_unit(enc, b));
                        }
                    }
                    raw_until = raw_until.max(end);
                }
            }
            if n + len > PARTS {
                return None;
            }
            (last, last_n, last_raw) = (i, n, i < raw_until);
            if last_raw {
                for &b in &pretoken[i..i + len] {
                    push!(byte_unit(enc, b));
                }
            } else if t & MULTI == 0 {
                push!(t);
            } else if t != NONE {
                multi!(t);
            } else {
                // A 4-byte character: BPE of its bytes alone.
                let c = &pretoken[i..i + 4];
                let mut parts = [0 as TokenId; 4];
                let mut byte_prio = [(NONE, NONE); 4];
                for (k, &b) in c.iter().enumerate() {
                    parts[k] = enc.byte_ids[b as usize];
                    if k + 1 < 4 {
                        byte_prio[k] = enc.byte_pair(b, c[k + 1]);
                    }
                }
                let m = merge_scan(&mut parts, &mut byte_prio, 4, &mut *pair);
                if m == 1 {
                    push!(parts[0]);
                } else {
                    for &part in &parts[..m] {
                        push!(part | UNALIGNED);
                    }
                }
            }
            i += len;
            // The rest of a run of 3-byte characters (Han, kana, Hangul, CJK punctuation:
            // E1 to EC need no check beyond continuation bytes), in a loop of its own:
            // the byte before each is the last of the one before. A character where a
            // straddler may start, or that one covers, goes back to the loop above.
            if len == 3 && !last_raw {
                while let [b0 @ 0xE1..=0xEC, b1, b2, ..] = pretoken[i..] {
                    if ((b1 as u16) << 8 | b2 as u16) & 0xC0C0 != 0x8080 || n + 3 > PARTS {
                        break;
                    }
                    let cp = (b0 as usize & 0x0F) << 12
                        | (b1 as usize & 0x3F) << 6
                        | (b2 as usize & 0x3F);
                    if i < raw_until || self.windows.after_multi(pretoken[i - 1], cp, b0, b1) {
                        break;
                    }
                    (last, last_n) = (i, n);
                    let t = self.bmp[cp];
                    if t & MULTI == 0 {
                        push!(t);
                    } else {
                        multi!(t);
                    }
                    i += 3;
                }
            }
        }
        let (mut live, mut best) = (0, (NONE, 0));
        for (k, (p, ab)) in prio.iter_mut().zip(ids[..n].windows(2)).enumerate() {
            *p = self.aligned(pair, ab[0], ab[1]);
            live += (p.0 != NONE) as usize;
            if p.0 < best.0 {
                best = (p.0, k);
            }
        }
        Some(Start {
            n,
            multi,
            live,
            first: best.1,
        })
    }
}

/// What phase 1 found: `n` parts, how many pairs merge and where the first merge is (when one
/// does).
struct Start {
    n: usize,
    /// Whether a part stands for the tokens of a character in `multi`.
    multi: bool,
    live: usize,
    first: usize,
}

impl Start {
    /// Whether phase 2 runs on the heap (see [`HEAP_PARTS`]).
    fn on_heap(&self) -> bool {
        self.n >= HEAP_PARTS && self.n * self.live >= HEAP_WORK
    }
}

/// The scan's merge loop (as [`merge_scan`]) over phase 1's parts, counting the pairs that
/// merge: it ends when none is left instead of scanning once more to find none, and it
/// takes the first merge from phase 1. Under o200k most Chinese pre-tokens merge once or not at
/// all, so most pre-tokens scan for the lowest pair never or once.
#[inline(always)]
fn merge_live(
    ids: &mut [TokenId; PARTS],
    prio: &mut [(u32, TokenId); PARTS],
    start: Start,
    mut pair: impl FnMut(TokenId, TokenId) -> (u32, TokenId),
) -> usize {
    let (mut n, mut live, mut at) = (start.n, start.live, start.first);
    let mut scan = false;
    while live > 0 {
        if scan {
            at = lowest_pair(&prio[..n - 1]).1;
        }
        scan = true;
        // The merged pair and its neighbours' pairs go; the neighbours' new pairs come.
        live -= 1;
        if at + 2 < n {
            live -= (prio[at + 1].0 != NONE) as usize;
        }
        if at > 0 {
            live -= (prio[at - 1].0 != NONE) as usize;
        }
        n = merge_at(ids, prio, n, at, &mut pair);
        if at + 1 < n {
            live += (prio[at].0 != NONE) as usize;
        }
        if at > 0 {
            live += (prio[at - 1].0 != NONE) as usize;
        }
    }
    n
}

/// The scan's arrays for [`CharStart::bpe`], kept per thread: a fresh pair of stack arrays
/// cost a 768-byte fill per pre-token.
pub(super) struct Scratch {
    ids: [TokenId; PARTS],
    prio: [(u32, TokenId); PARTS],
    /// The ids, with each character of `multi` expanded to its tokens.
    expanded: [TokenId; 3 * PARTS],
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            ids: [0; PARTS],
            prio: [(NONE, NONE); PARTS],
            expanded: [0; 3 * PARTS],
        }
    }
}

impl CharStart {
    /// Phase 2 of `n` parts on the heap, the result back in `ids`; its number of parts. A
    /// call of its own: inlined, it made phase 1 spill registers (cl100k Chinese, 1.6% more
    /// instructions).
    #[inline(never)]
    fn merge_on_heap(
        &self,
        enc: &Encoder,
        ids: &mut [TokenId; PARTS],
        prio: &[(u32, TokenId); PARTS],
        n: usize,
        pair: &mut impl FnMut(TokenId, TokenId) -> (u32, TokenId),
    ) -> usize {
        let mut merged = Vec::with_capacity(n);
        let (parts, pairs) = (ids[..n].to_vec(), prio[..n - 1].to_vec());
        enc.heap_merge_from(parts, pairs, |a, b| self.aligned(pair, a, b), &mut merged);
        ids[..merged.len()].copy_from_slice(&merged);
        merged.len()
    }

    /// Whether `pretoken` runs phase 2 on the heap: the tests' check that they reach it.
    #[cfg(test)]
    fn takes_heap(&self, enc: &Encoder, pretoken: &[u8]) -> bool {
        let mut scratch = Scratch::default();
        let mut pair = |a, b| enc.pair(a, b);
        self.start(enc, pretoken, &mut scratch, &mut pair)
            .is_some_and(|s| s.on_heap())
    }

    /// The pair of two tagged parts of [`CharStart::bpe`]: none when a part is unaligned or
    /// the filter rules it out, else the pair table's; the merged part is ASCII when both
    /// parts are, and from byte units when either is.
    ///
    /// A part from byte units that is not whole characters (`RAW`) merges only with another
    /// part from byte units: a token it makes with a part `y` of whole characters that never
    /// were byte units is a straddler (it starts or ends inside a character, and crosses a
    /// boundary), and its occurrence covers `y`'s characters, which phase 1 would then have
    /// started from bytes. A merged part from byte units that is whole non-ASCII text
    /// (`BYTES`) pairs with the filter again. Under o200k 61% of the 25-language corpus's
    /// pre-tokens start some characters from bytes: with these two rules the corpus makes
    /// 3.04M look-ups in the pair cache and 465k in the table, where tagging every part
    /// made from bytes `RAW` made 3.57M and 681k.
    #[inline(always)]
    fn aligned(
        &self,
        pair: &mut impl FnMut(TokenId, TokenId) -> (u32, TokenId),
        a: TokenId,
        b: TokenId,
    ) -> (u32, TokenId) {
        if (a | b) & UNALIGNED != 0 {
            return (NONE, NONE);
        }
        if (a | b) & RAW != 0 {
            if a & (RAW | BYTES) == 0 || b & (RAW | BYTES) == 0 {
                return (NONE, NONE);
            }
            let (p, m) = pair(a & ID, b & ID);
            let whole = p != NONE && self.text[m as usize >> 6] >> (m & 63) & 1 != 0;
            return (p, m | if whole { BYTES } else { RAW });
        }
        let tag = a & b & ASCII | (a | b) & BYTES;
        let (a, b) = (a & ID, b & ID);
        if tag & ASCII == 0 && !self.filter.may_hold(a, b) {
            return (NONE, NONE);
        }
        let (p, m) = pair(a, b);
        (p, m | tag)
    }
}

/// A byte of a character that starts from its bytes: an ASCII byte is a whole character.
#[inline(always)]
fn byte_unit(enc: &Encoder, b: u8) -> TokenId {
    enc.byte_ids[b as usize] | if b < 0x80 { ASCII | BYTES } else { RAW }
}

/// The length of the UTF-8 character `text` starts with, if it is one: strict (no overlong
/// forms, no surrogates, nothing above U+10FFFF), so a character has one spelling.
#[inline]
fn char_len(text: &[u8]) -> Option<usize> {
    let b = text[0];
    let len = match b {
        0x00..=0x7F => return Some(1),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let c = text.get(..len)?;
    if c[1..].iter().any(|&x| x & 0xC0 != 0x80) {
        return None;
    }
    let ok = match (b, c[1]) {
        (0xE0, x) => x >= 0xA0,
        (0xED, x) => x < 0xA0,
        (0xF0, x) => x >= 0x90,
        (0xF4, x) => x < 0x90,
        _ => true,
    };
    ok.then_some(len)
}

#[cfg(test)]
mod tests {
    use super::super::Encoder;
    use super::MULTI;
    use crate::test_rng::Lcg;
    use crate::TokenId;

    const ALPHABET: [&str; 8] = ["a", "b", " ", "é", "è", "中", "文", "😀"];

    fn random_text(rng: &mut Lcg, chars: usize) -> Vec<u8> {
        (0..chars)
            .flat_map(|_| ALPHABET[rng.below(ALPHABET.len())].bytes())
            .collect()
    }

    fn bytes_vocab() -> Vec<(TokenId, Vec<u8>)> {
        // Not the identity: byte b gets id 255 - b.
        (0..256u32).map(|b| (255 - b, vec![b as u8])).collect()
    }

    /// Merges grown like training does, from adjacent tokens of random texts: monotone, and
    /// full of tokens that straddle character boundaries (`\xa9\xc3`, `\xb8\xad\xe6`).
    fn random_merges(rng: &mut Lcg, n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut merges: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut known = std::collections::HashSet::new();
        while merges.len() < n {
            let mut vocab = bytes_vocab();
            vocab.extend(
                known
                    .iter()
                    .cloned()
                    .enumerate()
                    .map(|(i, t)| (256 + i as TokenId, t)),
            );
            let enc = Encoder::new(vocab, Some(&merges), vec![], r"(?s).+").unwrap();
            let text = random_text(rng, 12);
            let ids = enc.encode_ordinary(&text);
            if ids.len() < 2 {
                continue;
            }
            let i = rng.below(ids.len() - 1);
            let a = enc.token_bytes(ids[i]).unwrap().to_vec();
            let b = enc.token_bytes(ids[i + 1]).unwrap().to_vec();
            if known.insert([a.as_slice(), b.as_slice()].concat()) {
                merges.push((a, b));
            }
        }
        merges
    }

    fn vocab_of(merges: &[(Vec<u8>, Vec<u8>)]) -> Vec<(TokenId, Vec<u8>)> {
        let mut vocab = bytes_vocab();
        for (i, (a, b)) in merges.iter().enumerate() {
            vocab.push((256 + i as TokenId, [a.as_slice(), b.as_slice()].concat()));
        }
        vocab
    }

    /// Both modes, many random vocabularies and texts: the start from characters gives the
    /// ids of BPE from bytes, and it is really taken (else this test would prove nothing).
    #[test]
    fn char_start_equals_bpe_from_bytes() {
        let mut rng = Lcg(7);
        // Pre-tokens taken, and those of them holding a straddler (byte units) or a character of
        // several tokens: each path must run, else this test would prove nothing about it.
        let (mut taken, mut with_bytes, mut with_multi) = (0, 0, 0);
        for round in 0..30 {
            let merges = random_merges(&mut rng, 10 + 4 * round);
            let vocab = vocab_of(&merges);
            // Rank mode: ranks in merge order (bytes keep their ids below 256).
            for mode in [Some(merges.as_slice()), None] {
                let fast = Encoder::new(vocab.clone(), mode, vec![], r"(?s).+").unwrap();
                assert!(fast.chars.is_some(), "grown merges are monotone");
                let slow = Encoder::new(vocab.clone(), mode, vec![], r"(?s).+")
                    .unwrap()
                    .with_char_start(false);
                for _ in 0..200 {
                    // Up to 240 bytes: byte units past the first 64 bytes too.
                    let chars = 1 + rng.below(60);
                    let text = random_text(&mut rng, chars);
                    let mut out = Vec::new();
                    let mut pairs = vec![(u64::MAX, super::NONE, super::NONE); 1 << 14];
                    let mut scratch = super::Scratch::default();
                    let start = fast.chars.as_ref().unwrap();
                    if start.bpe(&fast, &text, &mut out, &mut scratch, |a, b| {
                        fast.hot_pair(&mut pairs, a, b)
                    }) {
                        taken += 1;
                        with_bytes += start.windows.holds_straddler(&text) as usize;
                        with_multi += std::str::from_utf8(&text)
                            .unwrap()
                            .chars()
                            .any(|c| (c as u32) < 1 << 16 && start.bmp[c as usize] & MULTI != 0)
                            as usize;
                        let mut want = Vec::new();
                        slow.bpe(&text, &mut want);
                        assert_eq!(out, want, "{:?}", String::from_utf8_lossy(&text));
                    }
                    assert_eq!(fast.encode_ordinary(&text), slow.encode_ordinary(&text));
                }
            }
        }
        assert!(
            taken > 1000 && with_bytes > 100 && with_multi > 100,
            "taken {taken}, with byte units {with_bytes}, with multi-token characters {with_multi}"
        );
    }

    /// TokenId tables extended as Qwen3.5's was: tokens of several whole characters appended in
    /// random order, so some are built from later ones. Start from characters stays on (the
    /// table is monotone at characters) and gives the ids of BPE from bytes.
    #[test]
    fn extended_rank_tables_keep_the_start_from_characters() {
        let mut rng = Lcg(13);
        let (mut on, mut later_parts) = (0, 0);
        for round in 0..20 {
            let merges = random_merges(&mut rng, 20 + 4 * round);
            let mut vocab = vocab_of(&merges);
            let base = Encoder::new(vocab.clone(), None, vec![], r"(?s).+").unwrap();
            let mut added: Vec<Vec<u8>> = Vec::new();
            for _ in 0..40 {
                let ids = base.encode_ordinary(&random_text(&mut rng, 8));
                for w in ids.windows(3) {
                    let parts: Vec<&[u8]> =
                        w.iter().map(|&i| base.token_bytes(i).unwrap()).collect();
                    if parts.iter().all(|p| std::str::from_utf8(p).is_ok()) {
                        for t in [parts.concat(), parts[..2].concat(), parts[1..].concat()] {
                            if !added.contains(&t) && vocab.iter().all(|(_, v)| *v != t) {
                                added.push(t);
                            }
                        }
                    }
                }
            }
            for i in (1..added.len()).rev() {
                added.swap(i, rng.below(i + 1));
            }
            let first = vocab.len() as TokenId;
            vocab.extend((first..).zip(added));
            let fast = Encoder::new(vocab.clone(), None, vec![], r"(?s).+").unwrap();
            let ids: rustc_hash::FxHashMap<&[u8], TokenId> =
                vocab.iter().map(|(i, t)| (t.as_slice(), *i)).collect();
            for (a, b) in fast.merges_from_ranks() {
                let t = ids[[a, b].concat().as_slice()];
                later_parts += (ids[a] > t || ids[b] > t) as usize;
            }
            let Some(_) = fast.chars else { continue };
            on += 1;
            let slow = Encoder::new(vocab, None, vec![], r"(?s).+")
                .unwrap()
                .with_char_start(false);
            for _ in 0..200 {
                let chars = 1 + rng.below(40);
                let text = random_text(&mut rng, chars);
                assert_eq!(
                    fast.encode_ordinary(&text),
                    slow.encode_ordinary(&text),
                    "{:?}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
        assert!(
            on >= 15 && later_parts > 100,
            "on {on} of 20, later parts {later_parts}"
        );
    }

    /// The window filter has no false negatives (a pre-token holding a straddler has a window at
    /// one of its character boundaries), it does clear pre-tokens (else it saves nothing), and
    /// at each boundary the occurrences found are those of a plain search: the end of the
    /// longest straddler whose first non-continuation byte after its first is there.
    #[test]
    fn windows_find_every_straddler_occurrence() {
        let mut rng = Lcg(11);
        let (mut held, mut cleared) = (0, 0);
        for round in 0..20 {
            let merges = random_merges(&mut rng, 20 + 4 * round);
            let vocab = vocab_of(&merges);
            let enc = Encoder::new(vocab.clone(), None, vec![], r"(?s).+").unwrap();
            let start = enc.chars.as_ref().unwrap();
            // The straddlers by their definition, from the vocab (every token of grown merges
            // is valid).
            let straddlers: Vec<&[u8]> = vocab
                .iter()
                .map(|(_, t)| t.as_slice())
                .filter(|t| {
                    std::str::from_utf8(t).is_err() && t[1..].iter().any(|&b| b & 0xC0 != 0x80)
                })
                .collect();
            for _ in 0..200 {
                let chars = 1 + rng.below(20);
                let text = random_text(&mut rng, chars);
                let boundaries = (1..text.len()).filter(|&i| text[i] & 0xC0 != 0x80);
                let mut holds = false;
                for i in boundaries.clone() {
                    let mut want = 0;
                    for t in &straddlers {
                        let k = (1..t.len()).find(|&k| t[k] & 0xC0 != 0x80).unwrap();
                        if i >= k && text.get(i - k..i - k + t.len()) == Some(t) {
                            want = want.max(i - k + t.len());
                        }
                    }
                    let hit = start.windows.hit(&text, i);
                    assert!(
                        hit || want == 0,
                        "{:?} at {i}",
                        String::from_utf8_lossy(&text)
                    );
                    let got = if hit {
                        start.windows.occurrence_end(&text, i)
                    } else {
                        0
                    };
                    assert_eq!(got, want, "{:?} at {i}", String::from_utf8_lossy(&text));
                    holds |= want > 0;
                }
                assert_eq!(start.windows.holds_straddler(&text), holds);
                held += holds as usize;
                cleared += !boundaries.into_iter().any(|i| start.windows.hit(&text, i)) as usize;
            }
        }
        assert!(
            held > 100 && cleared > 100,
            "held {held}, cleared {cleared}"
        );
    }

    /// `\xa9\xc3` (the end of é and the start of the next é) merges first: BPE of "éé" is
    /// [\xc3, \xa9\xc3, \xa9], not [é, é]. The characters that a straddling token touches
    /// start from their bytes; the others still start whole (the last é of "ééaé").
    #[test]
    fn a_straddling_token_makes_its_characters_start_from_bytes() {
        let merges = vec![
            (b"\xa9".to_vec(), b"\xc3".to_vec()),
            (b"\xc3".to_vec(), b"\xa9".to_vec()),
        ];
        let enc = Encoder::new(vocab_of(&merges), Some(&merges), vec![], r"(?s).+").unwrap();
        let (c3, a9, a) = (255 - 0xc3, 255 - 0xa9, 255 - 97);
        assert_eq!(enc.encode_ordinary("éé".as_bytes()), vec![c3, 256, a9]);
        assert_eq!(enc.encode_ordinary("éaé".as_bytes()), vec![257, a, 257]);
        let mut out = Vec::new();
        let start = enc.chars.as_ref().unwrap();
        let mut scratch = super::Scratch::default();
        let pair = |x, y| enc.pair(x, y);
        assert!(start.bpe(&enc, "ééaé".as_bytes(), &mut out, &mut scratch, pair));
        assert_eq!(out, vec![c3, 256, a9, a, 257]);
    }

    /// Long pre-tokens that merge most of their pairs (as Thai's, written without spaces) run
    /// phase 2 on the heap: the ids of BPE from bytes, and the path is really taken.
    #[test]
    fn long_pretokens_on_the_heap_equal_bpe_from_bytes() {
        let mut rng = Lcg(17);
        let mut heap = 0;
        for round in 0..10 {
            let merges = random_merges(&mut rng, 40 + 8 * round);
            let vocab = vocab_of(&merges);
            for mode in [Some(merges.as_slice()), None] {
                let fast = Encoder::new(vocab.clone(), mode, vec![], r"(?s).+").unwrap();
                let slow = Encoder::new(vocab.clone(), mode, vec![], r"(?s).+")
                    .unwrap()
                    .with_char_start(false);
                let start = fast.chars.as_ref().unwrap();
                for _ in 0..50 {
                    let chars = 24 + rng.below(60);
                    let text = random_text(&mut rng, chars);
                    heap += start.takes_heap(&fast, &text) as usize;
                    assert_eq!(
                        fast.encode_ordinary(&text),
                        slow.encode_ordinary(&text),
                        "{:?}",
                        String::from_utf8_lossy(&text)
                    );
                }
            }
        }
        assert!(heap > 200, "{heap} of 1000 on the heap");
    }

    /// A merge whose part is made by a later merge breaks the order argument: no short-cut.
    #[test]
    fn non_monotone_merges_turn_it_off() {
        let merges = vec![
            (b"x".to_vec(), "é".as_bytes().to_vec()),
            (b"\xc3".to_vec(), b"\xa9".to_vec()),
        ];
        let enc = Encoder::new(vocab_of(&merges), Some(&merges), vec![], r"(?s).+").unwrap();
        assert!(enc.chars.is_none());
        let monotone = vec![merges[1].clone(), merges[0].clone()];
        let enc = Encoder::new(vocab_of(&monotone), Some(&monotone), vec![], r"(?s).+").unwrap();
        assert!(enc.chars.is_some());
        assert_eq!(enc.encode_ordinary("xé".as_bytes()), vec![257]);
    }
}
