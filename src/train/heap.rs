//! The lazy max-heap of pairs: ordered by `(count, bytes(left), bytes(right))`; a popped
//! entry whose count is stale is pushed back with its current count, so the heap never
//! needs a decrease-key.

use super::symbols::{Symbol, Symbols};
use std::cmp::Ordering;

/// A heap entry: a pair, the count it had when pushed (possibly stale), and each side's
/// sort key ([`Symbols::key`]), so most ties are settled without touching symbol bytes.
/// Late in training nearly every entry has count 1 or 2, so almost every heap comparison
/// is a tie.
#[derive(Clone, Copy)]
pub(super) struct Entry<S> {
    pub(super) count: u64,
    pub(super) left_key: u64,
    pub(super) right_key: u64,
    pub(super) pair: (S, S),
}

impl<S: Symbol> Entry<S> {
    pub(super) fn new(count: u64, pair: (S, S), syms: &Symbols) -> Self {
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
pub(super) struct PairHeap<S> {
    pub(super) items: Vec<Entry<S>>,
}

/// Orders two different symbols by their bytes, using their keys when they decide.
#[inline]
pub(super) fn sym_cmp<S: Symbol>(ka: u64, kb: u64, a: S, b: S, syms: &Symbols) -> Ordering {
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
pub(super) fn above<S: Symbol>(syms: &Symbols, a: &Entry<S>, b: &Entry<S>) -> bool {
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
    pub(super) fn from_vec(items: Vec<Entry<S>>, syms: &Symbols) -> Self {
        let mut h = PairHeap { items };
        for i in (0..h.items.len() / 2).rev() {
            h.sift_down(i, syms);
        }
        h
    }

    pub(super) fn push(&mut self, e: Entry<S>, syms: &Symbols) {
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

    pub(super) fn pop(&mut self, syms: &Symbols) -> Option<Entry<S>> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.items[0], last);
        self.sift_down(0, syms);
        Some(top)
    }

    pub(super) fn sift_down(&mut self, mut i: usize, syms: &Symbols) {
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
