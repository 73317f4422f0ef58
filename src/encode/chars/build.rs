//! Building [`CharStart`]: the monotonicity check, the characters' tokens, the straddling
//! tokens and the pair filter.

use super::windows::Windows;
use super::{CharStart, MULTI};
use crate::encode::filter::PairFilter;
use crate::encode::pair_table::NONE;
use crate::encode::Encoder;
use crate::TokenId;

impl CharStart {
    /// `splits[i]` is vocab entry `i`'s last merge `(left, right, priority)` when it is a valid
    /// multi-byte token; `valid[i]` whether it is valid; `merged` the pair table's entries
    /// `(left, right, priority)` in merges mode (`None`: rank mode, where the table holds
    /// exactly the splits). `None` if the table is not monotone at characters (see the
    /// module docs).
    pub(in crate::encode) fn new(
        enc: &Encoder,
        vocab: &[(TokenId, Vec<u8>)],
        splits: &[Option<(TokenId, TokenId, u32)>],
        valid: &[bool],
        merged: Option<&[(TokenId, TokenId, u32)]>,
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
        // Whether each id is one whole multi-byte character (its `made` is then checked), and
        // whether its bytes are UTF-8 and ASCII: a pair of two texts, not both ASCII, goes in
        // the filter.
        let mut character = vec![false; enc.vocab_size()];
        let mut text = vec![(false, false); enc.vocab_size()];
        for (id, t) in vocab {
            if let Ok(s) = std::str::from_utf8(t) {
                character[*id as usize] = t.len() > 1 && s.chars().nth(1).is_none();
                text[*id as usize] = (true, t.is_ascii());
            }
        }
        let below = |part: TokenId, p: u32| {
            let m = made[part as usize];
            !character[part as usize] || m == LEAF || m < p
        };
        let monotone = |a: TokenId, b: TokenId, p: u32| {
            let (ma, mb) = (made[a as usize], made[b as usize]);
            ma == NONE || mb == NONE || (below(a, p) && below(b, p))
        };
        // Every entry of the pair table (rank mode: exactly the canonical splits).
        let canonical: Vec<(TokenId, TokenId, u32)>;
        let table = match merged {
            Some(t) => t,
            None => {
                canonical = splits.iter().flatten().copied().collect();
                &canonical
            }
        };
        if !table.iter().all(|&(a, b, p)| monotone(a, b, p)) {
            return None;
        }
        let kept = |&&(a, b, _): &&(TokenId, TokenId, u32)| {
            let ((ua, aa), (ub, ab)) = (text[a as usize], text[b as usize]);
            ua && ub && !(aa && ab)
        };
        let filtered: Vec<(TokenId, TokenId)> =
            table.iter().filter(kept).map(|&(a, b, _)| (a, b)).collect();
        let filter = PairFilter::new(&filtered);
        let mut whole_text = vec![0u64; enc.vocab_size().div_ceil(64)];
        for (id, &(utf8, ascii)) in text.iter().enumerate() {
            if utf8 && !ascii {
                whole_text[id >> 6] |= 1 << (id & 63);
            }
        }

        let mut bmp = Box::new([NONE; 1 << 16]);
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
                bmp[c as usize] = MULTI | multi.len() as TokenId;
                multi.push(three);
            }
        }
        Some(CharStart {
            bmp,
            multi,
            windows,
            filter,
            text: whole_text,
        })
    }
}
