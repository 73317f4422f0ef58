//! Symbols: the trainer's tokens by id (0..256 the single bytes), each with a sort key
//! that settles most comparisons of their bytes, and the id type of the arena.

use rustc_hash::FxHashMap;

/// Symbols by id; ids 0..256 are the single bytes. Equal bytes get the same id, unless
/// `reuse` is off (rustbpe's rule: every merge is a new token).
pub(super) struct Symbols {
    pub(super) bytes: Vec<Box<[u8]>>,
    pub(super) ids: FxHashMap<Box<[u8]>, u32>,
    /// Per symbol: its first 7 bytes big-endian, zero-padded, then min(len, 255) in the low
    /// byte. Comparing keys orders symbols as their bytes whenever the top 7 bytes differ
    /// or both are at most 7 bytes long. When ties go to the smaller id ([`Rules::ids`]),
    /// the top 56 bits are instead `ID_KEY - id`, which always decide.
    pub(super) keys: Vec<u64>,
    /// The id the next new symbol takes when ties go by ids, else `None`.
    pub(super) next_id: Option<u64>,
    pub(super) reuse: bool,
}

/// The key of id 0 when ties go by ids: a smaller id has a greater key.
pub(super) const ID_KEY: u64 = (1 << 56) - 1;

impl Symbols {
    /// The 256 bytes; `ids[b]` is byte b's id when ties go by ids.
    pub(super) fn new(ids: Option<&[u64]>, reuse: bool) -> Self {
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
    pub(super) fn intern(&mut self, bytes: Vec<u8>) -> u32 {
        if self.reuse {
            if let Some(&id) = self.ids.get(bytes.as_slice()) {
                return id;
            }
        }
        let id = self.next_id;
        self.push(bytes, id)
    }

    /// A new symbol; `id` is its id when ties go by ids.
    pub(super) fn push(&mut self, bytes: Vec<u8>, id: Option<u64>) -> u32 {
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

    pub(super) fn get(&self, id: usize) -> &[u8] {
        &self.bytes[id]
    }
}

/// A symbol id in the arena: u16 when every id fits, else u32.
pub(super) trait Symbol:
    Copy + Eq + Ord + std::hash::Hash + std::fmt::Debug + Send + Sync
{
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
