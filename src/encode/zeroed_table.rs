//! Fixed-size tables of plain-data entries that start zeroed, on 2 MB pages where the kernel
//! gives them (Linux's transparent huge pages, asked for with `madvise`). The per-thread
//! caches of pre-tokens are read at random over 8 MB each: on 4 KB pages a look-up also
//! missed the TLB, and the prefetch of a set waited on the page walk.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// The size and alignment of a transparent huge page on x86-64 and most AArch64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Types for which all-zero bytes are a valid value (the empty entry of a table).
///
/// # Safety
/// A value of all zero bytes must be a valid `Self`.
pub(super) unsafe trait Zeroed: Copy {}

// SAFETY: an array of valid zeroed values is all zeros.
unsafe impl<T: Zeroed, const N: usize> Zeroed for [T; N] {}
// SAFETY: a zeroed byte is a byte.
unsafe impl Zeroed for u8 {}

/// `len` entries of `T`, zeroed, in an anonymous mapping aligned to a huge page.
pub(super) struct ZeroedTable<T> {
    map: memmap2::MmapMut,
    /// Where the aligned table starts in `map`.
    offset: usize,
    len: usize,
    entries: PhantomData<T>,
}

impl<T: Zeroed> ZeroedTable<T> {
    pub(super) fn new(len: usize) -> Self {
        let layout = std::alloc::Layout::array::<T>(len).expect("a table that fits in memory");
        let bytes = layout.size();
        let map = memmap2::MmapMut::map_anon(bytes + HUGE_PAGE)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(layout));
        let addr = map.as_ptr() as usize;
        let offset = addr.next_multiple_of(HUGE_PAGE) - addr;
        // A hint: where the kernel has no huge page to give, the table is on 4 KB pages.
        #[cfg(target_os = "linux")]
        let _ = map.advise_range(memmap2::Advice::HugePage, offset, bytes);
        ZeroedTable {
            map,
            offset,
            len,
            entries: PhantomData,
        }
    }
}

impl<T: Zeroed> Deref for ZeroedTable<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the mapping holds `len` entries from `offset`, aligned (to a huge page,
        // which is a multiple of any `T`'s alignment here), zeroed by the kernel or written
        // through `deref_mut` since, and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(self.offset).cast(), self.len) }
    }
}

impl<T: Zeroed> DerefMut for ZeroedTable<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe {
            std::slice::from_raw_parts_mut(self.map.as_mut_ptr().add(self.offset).cast(), self.len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    #[repr(align(64))]
    struct Entry([u64; 8]);
    // SAFETY: plain integers.
    unsafe impl Zeroed for Entry {}

    #[test]
    fn starts_zeroed_aligned_and_keeps_what_is_written() {
        let mut table = ZeroedTable::<Entry>::new(100_000);
        assert_eq!(table.len(), 100_000);
        assert_eq!(table.as_ptr() as usize % HUGE_PAGE, 0);
        assert!(table.iter().all(|e| e.0 == [0; 8]));
        for (i, e) in table.iter_mut().enumerate() {
            e.0[i % 8] = i as u64 + 1;
        }
        for (i, e) in table.iter().enumerate() {
            assert_eq!(e.0.iter().sum::<u64>(), i as u64 + 1);
        }
    }
}
