//! BPE that starts from whole characters instead of bytes.
//!
//! In Chinese under o200k most characters are one token made by two merges, and the scan
//! spends most of its time building them: 3 parts per character to scan and 2 merges of
//! 2 pair look-ups each. When the result provably equals BPE from bytes, starting from the
//! characters' tokens skips all that.
//!
//! Phase 1 turns each character into the BPE of its bytes alone (one token for most; a rare
//! character may stay two or three), phase 2 runs BPE from there. For a piece of valid UTF-8
//! this equals BPE from bytes when
//! 1. the pair table is *monotone*: a pair's priority is above the priorities of the merges
//!    that made its two parts (rank tables: a part's rank is below the token's; a merges list
//!    is checked at construction), and
//! 2. no valid token that *straddles* a character boundary while starting or ending inside a
//!    character occurs in the piece (an Aho-Corasick search over those tokens).
//!
//! Why. Call a part *aligned* when it starts and ends on character boundaries (its bytes tell:
//! it starts with a non-continuation byte and ends with a whole character). Every part BPE
//! ever forms is a valid token (BPE restricted to a part's span is BPE of those bytes alone).
//! A merge across a character boundary with an unaligned part would form, or take as a part,
//! a valid straddling token that is a substring of the piece; (2) rules that out. So every
//! merge of BPE from bytes (call it R) is inside one character, where it runs as BPE of that
//! character alone, or joins two aligned parts, made of characters that each became one
//! token. Under (1) R runs its merges in non-decreasing priority (a pair that appears after a
//! merge of priority p and later merges has priority above p, being made of that merge's
//! result). Then R's merges across characters are, in order, the merges of BPE from phase 1
//! (P): at such a merge (priority p), each pair P sees is either there in R too (R chose the
//! lowest, leftmost) or has a part that R forms later, at priority >= p, so by (1) the pair's
//! priority is above p. Equal priorities mean the same pair, so ties go the same way. When R
//! ends, P is in R's final state, with no pair left to merge.

use super::{merge_scan, Encoder, NONE, SHORT};
use crate::Rank;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// Marks an entry of [`CharStart::bmp`] as an index into `multi` (ids are below 2^26).
const MULTI: Rank = 1 << 31;

/// What BPE from characters needs, built once per encoder.
pub(super) struct CharStart {
    /// For each code point below U+10000 (surrogates aside): its token if its UTF-8 bytes
    /// are one valid token, else `MULTI | i` for `multi[i]` (256 KB, in L2; a whole-token
    /// look-up for o200k is a cache miss). Other characters run BPE on their bytes.
    bmp: Vec<Rank>,
    /// The BPE of the other characters below U+10000 (two or three tokens, then `NONE`), at
    /// `bmp[c] & !MULTI`.
    multi: Vec<[Rank; 3]>,
    /// Every valid token that could straddle a character boundary unaligned: not valid UTF-8,
    /// with a non-continuation byte after its first (`None` if there are none).
    straddlers: Option<AhoCorasick>,
    /// The bytes around the first character boundary inside each straddler (see [`Windows`]):
    /// a piece with none of them at its boundaries holds no straddler, without the search.
    windows: Windows,
}

/// Where a straddler can occur. A straddler `t` has a non-continuation byte after its first;
/// the first such, `t[k]`, sits on a character boundary of any valid UTF-8 text holding `t`.
/// So an occurrence puts `t[k-1], t[k], t[k+1]` (or `t[k-1], t[k]` when `t` ends at `k`)
/// around some boundary of the piece. Checking each boundary here is a few instructions per
/// character; the Aho-Corasick search then runs on 6% of o200k's Chinese pieces with a
/// multi-byte character instead of all (5.7% really hold a straddler).
struct Windows {
    /// `1 + (t[k-1] << 16 | t[k] << 8 | t[k+1])`, open addressing, 0 = empty.
    three: Vec<u32>,
    /// Bit `t[k-1] << 8 | t[k]` of straddlers that end at `k`.
    two: Vec<u64>,
}

impl Windows {
    fn new(straddlers: &[&[u8]]) -> Self {
        let mut keys = Vec::new();
        let mut two = vec![0u64; 1 << 10];
        for t in straddlers {
            let Some(k) = (1..t.len()).find(|&k| t[k] & 0xC0 != 0x80) else {
                continue;
            };
            match t.get(k + 1) {
                Some(&next) => keys.push(window(t[k - 1], t[k], next)),
                None => {
                    let bit = (t[k - 1] as usize) << 8 | t[k] as usize;
                    two[bit >> 6] |= 1 << (bit & 63);
                }
            }
        }
        // At most a quarter full: a look-up of an absent window (nearly all) ends at once.
        let mut three = vec![0u32; (keys.len() * 4).next_power_of_two().max(64)];
        for key in keys {
            let mut i = Self::slot(key, three.len());
            while three[i] != 0 && three[i] != key {
                i = (i + 1) & (three.len() - 1);
            }
            three[i] = key;
        }
        Windows { three, two }
    }

    #[inline]
    fn slot(key: u32, len: usize) -> usize {
        (key.wrapping_mul(0x9E37_79B1) >> (32 - len.trailing_zeros())) as usize
    }

    /// Whether a straddler could occur across the boundary before `piece[i]` (`0 < i`).
    #[inline]
    fn hit(&self, piece: &[u8], i: usize) -> bool {
        let (a, b) = (piece[i - 1], piece[i]);
        let bit = (a as usize) << 8 | b as usize;
        if self.two[bit >> 6] >> (bit & 63) & 1 != 0 {
            return true;
        }
        let Some(&c) = piece.get(i + 1) else {
            return false;
        };
        let key = window(a, b, c);
        let mut j = Self::slot(key, self.three.len());
        loop {
            match self.three[j] {
                0 => return false,
                k if k == key => return true,
                _ => j = (j + 1) & (self.three.len() - 1),
            }
        }
    }
}

#[inline]
fn window(a: u8, b: u8, c: u8) -> u32 {
    1 + ((a as u32) << 16 | (b as u32) << 8 | c as u32)
}

impl CharStart {
    /// `splits[i]` is vocab entry `i`'s last merge `(left, right, priority)` when it is a valid
    /// multi-byte token; `valid[i]` whether it is valid. `None` if the table is not monotone.
    pub(super) fn new(
        enc: &Encoder,
        vocab: &[(Rank, Vec<u8>)],
        splits: &[Option<(Rank, Rank, u32)>],
        valid: &[bool],
        merges: Option<&[(Vec<u8>, Vec<u8>)]>,
    ) -> Option<Self> {
        // The priority of the merge that makes each valid token (`LEAF` for single bytes,
        // `NONE` for tokens BPE never forms: pairs with such a part never merge).
        const LEAF: u32 = NONE - 1;
        let mut made = vec![NONE; enc.vocab_size()];
        for (((id, t), split), ok) in vocab.iter().zip(splits).zip(valid) {
            made[*id as usize] = match split {
                _ if t.len() == 1 => LEAF,
                Some((_, _, p)) if *ok => *p,
                _ => NONE,
            };
        }
        let monotone = |a: Rank, b: Rank, p: u32| {
            let (ma, mb) = (made[a as usize], made[b as usize]);
            ma == NONE || mb == NONE || ((ma == LEAF || ma < p) && (mb == LEAF || mb < p))
        };
        match merges {
            // Rank mode: the table holds exactly the canonical splits.
            None => {
                if !splits.iter().flatten().all(|&(a, b, p)| monotone(a, b, p)) {
                    return None;
                }
            }
            // Merges mode: every merge in the table (a repeated one keeps its first priority).
            Some(merges) => {
                let ids: rustc_hash::FxHashMap<&[u8], Rank> =
                    vocab.iter().map(|(id, t)| (t.as_slice(), *id)).collect();
                for (p, (a, b)) in merges.iter().enumerate() {
                    let (Some(&ia), Some(&ib)) = (ids.get(a.as_slice()), ids.get(b.as_slice()))
                    else {
                        continue;
                    };
                    let (q, _) = enc.pair(ia, ib);
                    if q == p as u32 && !monotone(ia, ib, q) {
                        return None;
                    }
                }
            }
        }

        let mut bmp = vec![NONE; 1 << 16];
        let mut straddlers: Vec<&[u8]> = Vec::new();
        for ((id, t), &ok) in vocab.iter().zip(valid) {
            if !ok {
                continue;
            }
            match std::str::from_utf8(t) {
                Ok(s) => {
                    let mut cs = s.chars();
                    if let (Some(c), None) = (cs.next(), cs.next()) {
                        if (c as u32) < 1 << 16 {
                            bmp[c as usize] = *id;
                        }
                    }
                }
                Err(_) => {
                    if t[1..].iter().any(|&b| b & 0xC0 != 0x80) {
                        straddlers.push(t);
                    }
                }
            }
        }
        let windows = Windows::new(&straddlers);
        let straddlers = (!straddlers.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&straddlers)
                .expect("straddling tokens are short")
        });
        let mut multi = Vec::new();
        let mut buf = [0u8; 4];
        let mut parts = Vec::new();
        for c in (0..1u32 << 16).filter_map(char::from_u32) {
            if bmp[c as usize] == NONE {
                parts.clear();
                enc.bpe(c.encode_utf8(&mut buf).as_bytes(), &mut parts);
                // BPE of a valid token's bytes is that token, already in `bmp`.
                debug_assert!((2..=3).contains(&parts.len()));
                let mut three = [NONE; 3];
                three[..parts.len()].copy_from_slice(&parts);
                bmp[c as usize] = MULTI | multi.len() as Rank;
                multi.push(three);
            }
        }
        Some(CharStart {
            bmp,
            multi,
            straddlers,
            windows,
        })
    }

    /// BPE of `piece` from its characters' tokens, appended to `out`; `false` (and nothing
    /// appended) when the piece does not qualify: no multi-byte character, not valid UTF-8,
    /// more than [`SHORT`] parts after phase 1, or a straddling token in it. `pair` gives
    /// `(priority, merged id)`.
    #[inline]
    pub(super) fn bpe(
        &self,
        enc: &Encoder,
        piece: &[u8],
        out: &mut Vec<Rank>,
        mut pair: impl FnMut(Rank, Rank) -> (u32, Rank),
    ) -> bool {
        let mut ids = [0 as Rank; SHORT];
        let mut n = 0;
        let mut i = 0;
        let mut multi = false;
        let mut maybe_straddler = false;
        while i < piece.len() {
            let len = match char_len(&piece[i..]) {
                Some(len) => len,
                None => return false,
            };
            if i > 0 {
                maybe_straddler |= self.windows.hit(piece, i);
            }
            let c = &piece[i..i + len];
            let t = match len {
                1 => enc.byte_ids[c[0] as usize],
                2 => self.bmp[((c[0] as usize & 0x1F) << 6) | (c[1] as usize & 0x3F)],
                3 => {
                    let cp = (c[0] as usize & 0x0F) << 12
                        | (c[1] as usize & 0x3F) << 6
                        | (c[2] as usize & 0x3F);
                    self.bmp[cp]
                }
                _ => NONE,
            };
            if t & MULTI == 0 {
                if n == SHORT {
                    return false;
                }
                ids[n] = t;
                n += 1;
            } else if t != NONE {
                if n + 3 > SHORT {
                    return false;
                }
                let three = self.multi[(t & !MULTI) as usize];
                let m = if three[2] != NONE { 3 } else { 2 };
                ids[n..n + m].copy_from_slice(&three[..m]);
                n += m;
            } else {
                // BPE of the character alone: at most 4 parts.
                if n + len > SHORT {
                    return false;
                }
                let mut parts = [0 as Rank; 4];
                let mut prio = [(NONE, NONE); 4];
                for (k, &b) in c.iter().enumerate() {
                    parts[k] = enc.byte_ids[b as usize];
                    if k + 1 < len {
                        prio[k] = enc.byte_pair(b, c[k + 1]);
                    }
                }
                let m = merge_scan(&mut parts, &mut prio, len, &mut pair);
                ids[n..n + m].copy_from_slice(&parts[..m]);
                n += m;
            }
            multi |= len > 1;
            i += len;
        }
        if !multi
            || maybe_straddler
                && self
                    .straddlers
                    .as_ref()
                    .is_some_and(|ac| ac.is_match(piece))
        {
            return false;
        }
        let mut prio = [(NONE, NONE); SHORT];
        for k in 0..n - 1 {
            prio[k] = pair(ids[k], ids[k + 1]);
        }
        let n = merge_scan(&mut ids, &mut prio, n, pair);
        out.extend_from_slice(&ids[..n]);
        true
    }
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
    use crate::Rank;

    /// A tiny deterministic generator (no dependency needed for a test).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    const ALPHABET: [&str; 8] = ["a", "b", " ", "é", "è", "中", "文", "😀"];

    fn random_text(rng: &mut Lcg, chars: usize) -> Vec<u8> {
        (0..chars)
            .flat_map(|_| ALPHABET[rng.below(ALPHABET.len())].bytes())
            .collect()
    }

    fn bytes_vocab() -> Vec<(Rank, Vec<u8>)> {
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
                    .map(|(i, t)| (256 + i as Rank, t)),
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

    fn vocab_of(merges: &[(Vec<u8>, Vec<u8>)]) -> Vec<(Rank, Vec<u8>)> {
        let mut vocab = bytes_vocab();
        for (i, (a, b)) in merges.iter().enumerate() {
            vocab.push((256 + i as Rank, [a.as_slice(), b.as_slice()].concat()));
        }
        vocab
    }

    /// Both modes, many random vocabularies and texts: the start from characters gives the
    /// ids of BPE from bytes, and it is really taken (else this test would prove nothing).
    #[test]
    fn char_start_equals_bpe_from_bytes() {
        let mut rng = Lcg(7);
        let mut taken = 0;
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
                    let chars = 1 + rng.below(30);
                    let text = random_text(&mut rng, chars);
                    let mut out = Vec::new();
                    let mut pairs = vec![(u64::MAX, super::NONE, super::NONE); 1 << 14];
                    let start = fast.chars.as_ref().unwrap();
                    if start.bpe(&fast, &text, &mut out, |a, b| {
                        fast.hot_pair(&mut pairs, a, b)
                    }) {
                        taken += 1;
                        let mut want = Vec::new();
                        slow.bpe(&text, &mut want);
                        assert_eq!(out, want, "{:?}", String::from_utf8_lossy(&text));
                    }
                    assert_eq!(fast.encode_ordinary(&text), slow.encode_ordinary(&text));
                }
            }
        }
        assert!(taken > 1000, "the start from characters ran {taken} times");
    }

    /// The window filter has no false negatives (a piece holding a straddler has a window at
    /// one of its character boundaries), and it does clear pieces (else it saves nothing).
    #[test]
    fn windows_flag_every_piece_that_holds_a_straddler() {
        let mut rng = Lcg(11);
        let (mut held, mut cleared) = (0, 0);
        for round in 0..20 {
            let merges = random_merges(&mut rng, 20 + 4 * round);
            let enc = Encoder::new(vocab_of(&merges), None, vec![], r"(?s).+").unwrap();
            let start = enc.chars.as_ref().unwrap();
            for _ in 0..200 {
                let chars = 1 + rng.below(20);
                let text = random_text(&mut rng, chars);
                let holds = start
                    .straddlers
                    .as_ref()
                    .is_some_and(|ac| ac.is_match(&text));
                let flagged = (1..text.len())
                    .filter(|&i| text[i] & 0xC0 != 0x80)
                    .any(|i| start.windows.hit(&text, i));
                assert!(flagged || !holds, "{:?}", String::from_utf8_lossy(&text));
                held += holds as usize;
                cleared += !flagged as usize;
            }
        }
        assert!(
            held > 100 && cleared > 100,
            "held {held}, cleared {cleared}"
        );
    }

    /// `\xa9\xc3` (the end of é and the start of the next é) merges first: BPE of "éé" is
    /// [\xc3, \xa9\xc3, \xa9], not [é, é]. The straddling token must stop the short-cut.
    #[test]
    fn a_straddling_token_stops_the_char_start() {
        let merges = vec![
            (b"\xa9".to_vec(), b"\xc3".to_vec()),
            (b"\xc3".to_vec(), b"\xa9".to_vec()),
        ];
        let enc = Encoder::new(vocab_of(&merges), Some(&merges), vec![], r"(?s).+").unwrap();
        let (c3, a9) = (255 - 0xc3, 255 - 0xa9);
        assert_eq!(enc.encode_ordinary("éé".as_bytes()), vec![c3, 256, a9]);
        assert_eq!(
            enc.encode_ordinary("éaé".as_bytes()),
            vec![257, 255 - 97, 257]
        );
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
