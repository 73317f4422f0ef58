//! Pre-tokens encoded as start symbols, with their counts, held flat: a few shares, each
//! one run of symbols and the pre-tokens' ends, so that passes over them run a share a
//! thread. With a `Vec` per pre-token, a third of the base's encoding of SuperBPE's second
//! stage went to page faults (100 MB of English: 0.6 of 1.9 s CPU).

use rayon::prelude::*;
use std::cell::RefCell;
use thread_local::ThreadLocal;

/// Pre-tokens of start symbols, with their counts, in shares.
#[derive(Clone, Debug, Default)]
pub(super) struct Encoded {
    shares: Vec<Share>,
}

/// Pre-tokens one after another: their symbols, and where each ends with its count.
#[derive(Clone, Debug, Default)]
pub(super) struct Share {
    symbols: Vec<u32>,
    ends: Vec<(usize, u64)>,
}

impl Share {
    /// Room for `symbols` symbols in `pretokens` pre-tokens: pages never written are never
    /// mapped, and a Vec that grows copies itself (0.3 s of the 1.9 s CPU that the base takes
    /// to encode 100 MB of English).
    pub(super) fn with_capacity(symbols: usize, pretokens: usize) -> Self {
        Share {
            symbols: Vec::with_capacity(symbols),
            ends: Vec::with_capacity(pretokens),
        }
    }

    /// Gives back the room [`Share::with_capacity`] took and did not use.
    pub(super) fn shrink_to_fit(&mut self) {
        self.symbols.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Appends `symbols` to the pre-token being written.
    pub(super) fn symbols(&mut self) -> &mut Vec<u32> {
        &mut self.symbols
    }

    /// Ends the pre-token being written (the symbols since the last end), counted `count`
    /// times.
    pub(super) fn end(&mut self, count: u64) {
        self.ends.push((self.symbols.len(), count));
    }

    /// The pre-tokens with their counts.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u32], u64)> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|&(e, _)| e));
        starts
            .zip(&self.ends)
            .map(|(s, &(e, c))| (&self.symbols[s..e], c))
    }
}

impl Encoded {
    /// `pretokens` in shares of about a quarter core's worth each, for passes on all cores.
    pub(super) fn new<W: AsRef<[u32]>>(pretokens: impl IntoIterator<Item = (W, u64)>) -> Self {
        let all: Vec<(W, u64)> = pretokens.into_iter().collect();
        let share = all.len().div_ceil(4 * rayon::current_num_threads()).max(1);
        let shares = all
            .chunks(share)
            .map(|part| {
                let mut s = Share::default();
                for (w, c) in part {
                    s.symbols.extend_from_slice(w.as_ref());
                    s.end(*c);
                }
                s
            })
            .collect();
        Encoded { shares }
    }

    /// The encoding written share by share.
    pub(super) fn from_shares(shares: Vec<Share>) -> Self {
        Encoded { shares }
    }

    /// One `T` per core that took part, each made by `init` and given every share that core
    /// took: four shares a core, so a busy core's are taken up by the others, and one
    /// accumulator a core, so that no more of them are made, filled and summed than cores
    /// (the pair bounds' is 4 MB).
    pub(super) fn per_core<T: Send>(
        &self,
        init: impl Fn() -> T + Sync,
        add: impl Fn(&mut T, &Share) + Sync,
    ) -> Vec<T> {
        let cores = ThreadLocal::<RefCell<T>>::new();
        self.shares.par_iter().for_each(|share| {
            add(
                &mut cores.get_or(|| RefCell::new(init())).borrow_mut(),
                share,
            );
        });
        cores.into_iter().map(RefCell::into_inner).collect()
    }

    /// Every pre-token with its count, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u32], u64)> + '_ {
        self.shares.iter().flat_map(Share::iter)
    }

    /// The start symbols in all, counted once per pre-token.
    pub(super) fn num_symbols(&self) -> usize {
        self.shares.iter().map(|s| s.symbols.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_hold_the_pretokens_in_order() {
        for n in [0usize, 1, 7, 100] {
            let want: Vec<(Vec<u32>, u64)> = (0..n)
                .map(|i| ((0..i as u32 % 5).collect(), 1 + i as u64))
                .collect();
            let e = Encoded::new(want.clone());
            let got: Vec<(Vec<u32>, u64)> = e.iter().map(|(w, c)| (w.to_vec(), c)).collect();
            assert_eq!(got, want);
            let sum: usize = want.iter().map(|(w, _)| w.len()).sum();
            assert_eq!(e.num_symbols(), sum);
            assert!(e.shares.len() <= 4 * rayon::current_num_threads());
            let per_core = e.per_core(|| 0, |n, share| *n += share.iter().count());
            assert!(per_core.len() <= rayon::current_num_threads().max(1) + 1);
            assert_eq!(per_core.iter().sum::<usize>(), n);
        }
    }
}
