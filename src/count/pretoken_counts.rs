//! [`PretokenCounts`]: the distinct pre-tokens and how often each occurs, and their
//! serialization.

use crate::pretoken_key::{pack, unpack};
use crate::Error;
use rustc_hash::FxHashMap;

/// Counts by pre-token: a pre-token of up to 15 bytes by its [`crate::pretoken_key`], stored
/// inline in the table; a longer one by its boxed bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Map {
    pub(super) short: FxHashMap<u128, u64>,
    pub(super) long: FxHashMap<Box<[u8]>, u64>,
}

/// A pre-token as [`PretokenCounts`] yields it: a short one rebuilt from its key, a long one
/// as its bytes (`L` is `&[u8]` when borrowed from the table, `Box<[u8]>` when owned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pretoken<L> {
    Short([u8; 16]),
    Long(L),
}

impl<L: AsRef<[u8]>> AsRef<[u8]> for Pretoken<L> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Pretoken::Short(b) => &b[..b[15] as usize],
            Pretoken::Long(p) => p.as_ref(),
        }
    }
}

impl Map {
    pub(super) fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    fn get(&self, pretoken: &[u8]) -> Option<u64> {
        match pack(pretoken) {
            Some(k) => self.short.get(&k).copied(),
            None => self.long.get(pretoken).copied(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (Pretoken<&[u8]>, u64)> {
        let short = self
            .short
            .iter()
            .map(|(&k, &v)| (Pretoken::Short(unpack(k)), v));
        let long = self.long.iter().map(|(k, &v)| (Pretoken::Long(&k[..]), v));
        short.chain(long)
    }

    /// Adds `count` occurrences of `pretoken`.
    #[inline]
    pub(super) fn bump(&mut self, pretoken: &[u8], count: u64) {
        // Look up by borrowed slice first: most pre-tokens are repeats, so the owned key is
        // allocated only for new ones.
        if let Some(k) = pack(pretoken) {
            *self.short.entry(k).or_insert(0) += count;
        } else if let Some(v) = self.long.get_mut(pretoken) {
            *v += count;
        } else {
            self.long.insert(pretoken.into(), count);
        }
    }

    /// Merges the smaller map into the larger.
    pub(super) fn merge(a: Map, b: Map) -> Map {
        let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        for (k, v) in small.short {
            *big.short.entry(k).or_insert(0) += v;
        }
        for (k, v) in small.long {
            *big.long.entry(k).or_insert(0) += v;
        }
        big
    }
}

/// Distinct pre-tokens and how often each occurs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PretokenCounts {
    pub(super) map: Map,
}

const MAGIC: &[u8; 5] = b"BPWC1";

impl PretokenCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of distinct pre-tokens.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// Adds `count` occurrences of `pretoken`.
    pub fn add(&mut self, pretoken: &[u8], count: u64) {
        self.map.bump(pretoken, count);
    }

    /// Adds every count of `other` into `self`.
    pub fn merge(&mut self, other: PretokenCounts) {
        self.map = Map::merge(std::mem::take(&mut self.map), other.map);
    }

    /// The count of `pretoken` (0 when absent).
    pub fn get(&self, pretoken: &[u8]) -> u64 {
        self.map.get(pretoken).unwrap_or(0)
    }

    /// Total number of pre-tokens counted.
    pub fn total(&self) -> u64 {
        self.map.short.values().sum::<u64>() + self.map.long.values().sum::<u64>()
    }

    pub fn iter(&self) -> impl Iterator<Item = (Pretoken<&[u8]>, u64)> {
        self.map.iter()
    }

    /// Consumes the counts, yielding `(pretoken, count)` in no particular order. The trainer
    /// reads the pre-tokens into its own arena this way instead of from a copy: on 1 GB of
    /// mixed corpora (2.45M distinct pre-tokens) a `Vec<(Box<[u8]>, u64)>` copy would be 140
    /// MB beside it.
    pub fn into_pretokens(self) -> impl Iterator<Item = (Pretoken<Box<[u8]>>, u64)> {
        let Map { short, long } = self.map;
        let short = short
            .into_iter()
            .map(|(k, c)| (Pretoken::Short(unpack(k)), c));
        short.chain(long.into_iter().map(|(p, c)| (Pretoken::Long(p), c)))
    }

    /// Entries sorted by pre-token: a deterministic order for output and tests.
    pub fn sorted(&self) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<_> = self.iter().map(|(p, c)| (p.as_ref().to_vec(), c)).collect();
        v.sort_unstable();
        v
    }

    /// Serializes to `BPWC1`, then little-endian: u64 entry count, and per entry sorted by
    /// pre-token, u32 length, the bytes, u64 count. Equal counts give equal bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let sorted = self.sorted();
        let size: usize = sorted.iter().map(|(p, _)| p.len() + 12).sum();
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + size);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(sorted.len() as u64).to_le_bytes());
        for (p, c) in sorted {
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(&p);
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// Reads what [`PretokenCounts::to_bytes`] wrote.
    pub fn from_bytes(data: &[u8]) -> Result<Self, Error> {
        let bad = |reason: String| Error::InvalidCounts { reason };
        let rest = data
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| bad("does not start with BPWC1".into()))?;
        let mut r = Reader { data: rest, pos: 0 };
        let n = r.u64().ok_or_else(|| bad("truncated header".into()))?;
        let mut map = Map::default();
        for i in 0..n {
            let trunc = || bad(format!("truncated at entry {i} of {n}"));
            let len = r.u32().ok_or_else(trunc)? as usize;
            let pretoken = r.take(len).ok_or_else(trunc)?;
            let count = r.u64().ok_or_else(trunc)?;
            map.bump(pretoken, count);
        }
        if r.pos != r.data.len() {
            return Err(bad(format!(
                "{} bytes left over after {n} entries",
                r.data.len() - r.pos
            )));
        }
        Ok(PretokenCounts { map })
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.data.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::tests::{serial, SAMPLE};
    use crate::count::Counter;

    #[test]
    fn serialization_round_trips_and_rejects_garbage() {
        let c = Counter::new("gpt2", &[] as &[&str], Some(1), None).unwrap();
        let wc = serial(&c, SAMPLE);
        let bytes = wc.to_bytes();
        assert_eq!(PretokenCounts::from_bytes(&bytes).unwrap(), wc);
        assert!(PretokenCounts::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(PretokenCounts::from_bytes(b"nope").is_err());
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(PretokenCounts::from_bytes(&extra).is_err());
    }

    #[test]
    fn into_pretokens_yields_every_pretoken_once_with_its_count() {
        let mut wc = PretokenCounts::new();
        let long = b"a pre-token longer than fifteen bytes".as_slice();
        for (p, c) in [
            (b"".as_slice(), 1),
            (b"ab", 2),
            (b"x", 3),
            (long, 4),
            (b"ab", 5),
        ] {
            wc.add(p, c);
        }
        let want = wc.sorted();
        let mut got: Vec<(Vec<u8>, u64)> = wc
            .into_pretokens()
            .map(|(p, c)| (p.as_ref().to_vec(), c))
            .collect();
        got.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(
            want,
            vec![
                (b"".to_vec(), 1),
                (long.to_vec(), 4),
                (b"ab".to_vec(), 7),
                (b"x".to_vec(), 3)
            ]
        );
    }
}
