//! BPE of long pre-tokens in two stages, for tokenizers whose later merges join words into
//! superwords (SuperBPE): their pre-tokens are as long as sentences, and the heap over every
//! byte of one runs at 8 MB/s on English.
//!
//! Why it is exact. BPE merges the lowest-priority pair first, so while a pair below
//! priority `first` is left, it merges one, the one BPE restricted to those merges would
//! merge. So BPE is: the merges below `first` until none is left, then all merges from
//! there. In the first stage no merge joins two bytes that no merge below `first` has at its
//! junction (the last byte of its left part, the first of its right), so that stage runs on
//! the pieces between such bytes, each alone: short, like words. The second stage runs on
//! the first stage's tokens, several bytes each.
//!
//! `first` is the lowest priority of a merge joining an ASCII letter, digit or punctuation
//! mark to a following space: a word to the next (SuperBPE's first superword merge). A tokenizer
//! with few such merges (every tokenizer trained on words) has no stages.

use super::bpe::{merge_scan, SHORT};
use super::pair_table::NONE;
use super::pretoken_cache::{short_key, slot_of, Slot, CACHE_IDS};
use super::Encoder;
use crate::byte_pair_set::BytePairSet;
use crate::TokenId;
use std::cell::RefCell;
use thread_local::ThreadLocal;

/// log2 of the slots of the per-thread cache of first-stage pieces: 32768 of 32 bytes, 1 MB.
const PIECE_CACHE_BITS: u32 = 15;

/// The first stage's priorities, and the byte pairs it may join.
pub(super) struct Stages {
    first: u32,
    /// The byte pairs `x, y` some merge below `first` has at its junction.
    joins: BytePairSet,
    /// Recent pieces of up to 15 bytes and their first-stage ids, direct-mapped: the pieces
    /// are words, and most repeat (SuperBPE at 200,000 tokens, 1 MB of English: 90% hits,
    /// 16.9 MB/s without, 23.6 MB/s with).
    pieces: ThreadLocal<RefCell<Vec<Slot>>>,
}

impl Stages {
    /// The stages of `enc`'s pair table, if it has merges joining words to spaces.
    pub(super) fn new(enc: &Encoder) -> Option<Stages> {
        let mut lowest = vec![NONE; 1 << 16];
        let mut word_space = 0usize;
        for ((a, b), (p, _)) in enc.pairs.iter() {
            let (Some(a), Some(b)) = (enc.token_bytes(a), enc.token_bytes(b)) else {
                continue;
            };
            let (Some(&x), Some(&y)) = (a.last(), b.first()) else {
                continue;
            };
            let j = &mut lowest[(x as usize) << 8 | y as usize];
            *j = (*j).min(p);
            word_space += (y == b' ' && x.is_ascii_graphic()) as usize;
        }
        // Tokenizers trained on words have a few such merges (2 of cl100k's 100,000 pairs,
        // 6 of o200k's 199,742), a superword tokenizer hundreds (642 of 7,744 at 8,000
        // tokens from 7,000): below one in a thousand, stages would only cost a scan.
        if word_space == 0 || word_space * 1000 < enc.pairs.len() {
            return None;
        }
        // ASCII letters, digits and punctuation only: a word tokenizer's whitespace runs hold
        // U+00A0 then a space (its last byte 0xA0 then 0x20: rank 41,448 of SuperBPE's
        // 200,000 tokens, where its first superword merge is 180,000).
        let first = (0x21..=0x7Eu8)
            .map(|x| lowest[(x as usize) << 8 | b' ' as usize])
            .min()?;
        let mut joins = BytePairSet::default();
        for (i, &p) in lowest.iter().enumerate() {
            if p < first {
                joins.insert((i >> 8) as u8, i as u8);
            }
        }
        Some(Stages {
            first,
            joins,
            pieces: ThreadLocal::new(),
        })
    }
}

impl Encoder {
    /// BPE of a pre-token longer than `SHORT`: in stages when the tokenizer has them and they
    /// cut it, else the heap.
    pub(super) fn bpe_long_staged(&self, pretoken: &[u8], out: &mut Vec<TokenId>) {
        match &self.stages {
            Some(st) if self.bpe_staged(st, pretoken, out) => {}
            _ => self.bpe_long(pretoken, out),
        }
    }

    /// BPE of `pretoken` in two stages (see the module); `false`, with nothing written, when
    /// the first stage would not cut it.
    pub(super) fn bpe_staged(&self, st: &Stages, pretoken: &[u8], out: &mut Vec<TokenId>) -> bool {
        let below = |(p, m): (u32, TokenId)| if p < st.first { (p, m) } else { (NONE, NONE) };
        let mut cache = st
            .pieces
            .get_or(|| RefCell::new(vec![Slot::default(); 1 << PIECE_CACHE_BITS]))
            .borrow_mut();
        let mut ids: Vec<TokenId> = Vec::with_capacity(pretoken.len() / 2);
        let mut start = 0;
        for i in 1..=pretoken.len() {
            if i < pretoken.len() && st.joins.holds(pretoken[i - 1], pretoken[i]) {
                continue;
            }
            if start == 0 && i == pretoken.len() {
                return false;
            }
            let piece = &pretoken[start..i];
            start = i;
            let key = short_key(piece);
            let slot = key.map(|k| slot_of(k, PIECE_CACHE_BITS));
            if let (Some(k), Some(at)) = (key, slot) {
                let s = &cache[at];
                if s.key() == k {
                    ids.extend_from_slice(&s.ids[..s.count()]);
                    continue;
                }
            }
            let before = ids.len();
            if piece.len() <= SHORT {
                let mut part = [0 as TokenId; SHORT];
                let mut prio = [(NONE, NONE); SHORT];
                for (slot, &b) in part.iter_mut().zip(piece) {
                    *slot = self.byte_ids[b as usize];
                }
                for k in 0..piece.len() - 1 {
                    prio[k] = below(self.byte_pair(piece[k], piece[k + 1]));
                }
                let n = merge_scan(&mut part, &mut prio, piece.len(), |a, b| {
                    below(self.pair(a, b))
                });
                ids.extend_from_slice(&part[..n]);
            } else {
                let parts = piece.iter().map(|&b| self.byte_ids[b as usize]).collect();
                self.heap_merge(parts, |a, b| below(self.pair(a, b)), &mut ids);
            }
            let made = &ids[before..];
            if let (Some(k), Some(at), true) = (key, slot, made.len() <= CACHE_IDS) {
                cache[at].store(k, made);
            }
        }
        self.heap_merge(ids, |a, b| self.pair(a, b), out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::PretokenCounts;
    use crate::encode::test_vocab::plain_bpe as plain;
    use crate::test_rng::Lcg;
    use crate::train::{train, train_from_base, Base, Rules};

    /// A sentence of words of `a`-`d` after single spaces, some ending in a comma.
    fn sentence(rng: &mut Lcg, words: usize) -> Vec<u8> {
        let mut s = Vec::new();
        for w in 0..words {
            if w > 0 {
                s.push(b' ');
            }
            for _ in 0..1 + rng.below(5) {
                s.push(b"abcd"[rng.below(4)]);
            }
            if rng.below(6) == 0 {
                s.push(b',');
            }
        }
        s
    }

    /// A SuperBPE-like merge list: 60 merges on words, then 80 on whole sentences
    /// extending them, as a merges encoder and as a rank table. Long sentences encode in
    /// stages exactly as plain BPE does, in both modes.
    #[test]
    fn stages_give_plain_bpe() {
        let mut rng = Lcg(11);
        let texts: Vec<Vec<u8>> = (0..150)
            .map(|_| {
                let n = 2 + rng.below(6);
                sentence(&mut rng, n)
            })
            .collect();
        let mut words = PretokenCounts::new();
        let mut sentences = PretokenCounts::new();
        for t in &texts {
            sentences.add(t, 3);
            for (i, w) in t.split(|&b| b == b' ').enumerate() {
                words.add(&[&b" "[..(i > 0) as usize], w].concat(), 3);
            }
        }
        let (subwords, _) = train(&words.sorted(), 60, 1, &mut |_, _| true).unwrap();
        let mut vocab: Vec<(TokenId, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        for (a, b) in &subwords {
            vocab.push((vocab.len() as u32, [a.as_slice(), b].concat()));
        }
        let base = Base::new(vocab.clone(), Some(&subwords)).unwrap();
        let (superwords, _) =
            train_from_base(base, sentences, 80, &Rules::cs336(1), &mut |_, _| true).unwrap();
        let merges = [subwords, superwords].concat();
        vocab.truncate(256);
        for (a, b) in &merges {
            let t = [a.as_slice(), b].concat();
            if !vocab.iter().any(|(_, v)| *v == t) {
                vocab.push((vocab.len() as u32, t));
            }
        }
        let by_merges = Encoder::new(vocab.clone(), Some(&merges), vec![], "gpt2").unwrap();
        let by_ranks = Encoder::new(vocab, None, vec![], "gpt2").unwrap();
        for enc in [&by_merges, &by_ranks] {
            let st = enc
                .stages
                .as_ref()
                .expect("a merge joins a word to a space");
            let mut staged = 0;
            for _ in 0..300 {
                let n = 5 + rng.below(60);
                let text = sentence(&mut rng, n);
                let mut got = Vec::new();
                if enc.bpe_staged(st, &text, &mut got) {
                    staged += 1;
                    assert_eq!(
                        got,
                        plain(enc, &text),
                        "{:?}",
                        String::from_utf8_lossy(&text)
                    );
                }
                let mut long = Vec::new();
                enc.bpe_long(&text, &mut long);
                assert_eq!(long, plain(enc, &text));
            }
            assert!(staged > 250, "{staged} of 300 staged");
        }
    }

    /// A tokenizer trained on words has no stages: no merge joins a word to a space.
    #[test]
    fn word_tokenizers_have_no_stages() {
        let enc = crate::encode::test_vocab::merges_encoder(
            &[("a", "b"), (" ", "ab")],
            &[(300, "ab"), (301, " ab")],
        );
        assert!(enc.stages.is_none());
    }
}
