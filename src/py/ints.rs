//! The Python int of each id, for the lists of ids the encoder returns.
//!
//! Python would allocate a new int per id (only -5..=256 are cached), so every list of ids
//! would cost an allocation and a free per token (0.64-0.78x in paired runs). Instead each
//! id below the encoder's vocab size gets one int object for the life of the process, and a
//! list takes new references to them.
//!
//! Those ints are laid out in one block, `32 * id` bytes from its start, so finding an id's
//! int is arithmetic, not a load from a table of pointers: with a table (1.6 MB of pointers
//! for o200k, on top of the 6.4 MB of ints), two cache misses per rare id instead of one.
//! Paired runs of 20-line documents, medians of 15: o200k English 1.11x, Chinese 1.06x.
//!
//! Each int in the block is a byte copy of an int Python made for that value, so its layout
//! is the running interpreter's own, with a reference count no program can bring to zero (on
//! 3.12 and later, the immortal count `None` has): Python never frees it, as it never frees
//! its static objects. The block is leaked, shared by all encoders of the process and only
//! replaced by a larger one (the old one stays: lists may hold its ints), so at most twice
//! the largest vocab's ints, 6.4 MB for o200k. Builds whose object header is not just the
//! reference count and the type (free-threaded, `Py_TRACE_REFS`) get a fresh int per id.

use crate::TokenId;
use pyo3::prelude::*;
use pyo3::{ffi, IntoPyObjectExt};
use std::sync::Mutex;

/// Ids below this are Python's own cached small ints.
const SMALL: usize = 257;
/// Ids at or above this get a new int per use: a vocab with sparse huge ids would otherwise
/// cost gigabytes.
pub const MAX_IDS: usize = 1 << 20;
/// Bytes per int in the block: a one-digit int is 28 bytes (header 16, size 8, digit 4).
const STRIDE: usize = 32;

/// One int's place in the block, aligned so that two share a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot([u8; STRIDE]);

/// The current block: its address and how many ids it covers (0: none yet).
static BLOCK: Mutex<(usize, usize)> = Mutex::new((0, 0));

/// The ints of ids `0..len`; other ids get a new int per use.
pub struct Ints {
    small: Vec<Py<PyAny>>,
    /// The addresses of `small`, so that an id's int is a select between two addresses,
    /// not a branch on `id < SMALL`, a coin toss where byte tokens and others mix (43% of
    /// cl100k's ids on Chinese are below 257): more instructions (`ids_list` on 1 MB of new
    /// Chinese, cl100k: 11.7M -> 13.4M) but 1.12x in paired runs (median of 27, 0.99-1.31).
    small_addr: Box<[usize; SMALL]>,
    /// Address of the block (ids `SMALL..len`), or 0 when the interpreter's layout is not
    /// the one the block needs.
    base: usize,
    len: usize,
}

impl Ints {
    /// The ints of ids `0..len` (at most [`MAX_IDS`]), from the shared block (made or grown
    /// now, under the GIL).
    pub fn new(py: Python<'_>, len: usize) -> PyResult<Self> {
        let len = len.min(MAX_IDS);
        let small: Vec<Py<PyAny>> = (0..SMALL as u64)
            .map(|id| id.into_py_any(py))
            .collect::<PyResult<_>>()?;
        let mut small_addr = Box::new([0; SMALL]);
        for (addr, int) in small_addr.iter_mut().zip(&small) {
            *addr = int.as_ptr() as usize;
        }
        let (base, len) = match block(py, len)? {
            Some(base) => (base, len),
            None => (0, 0),
        };
        Ok(Ints {
            small,
            small_addr,
            base,
            len,
        })
    }

    /// A new reference to the int of `id`, as the raw pointer a list's item takes.
    #[inline(always)]
    pub fn new_ref(&self, py: Python<'_>, id: TokenId) -> *mut ffi::PyObject {
        let i = id as usize;
        if i >= self.len {
            return match self.small.get(i) {
                Some(int) => int.clone_ref(py).into_ptr(),
                None => id.into_pyobject(py).expect("an int").into_ptr(),
            };
        }
        // `len > SMALL` here (a block covers more than the small ints), so `i` is either a
        // small int or one of the block's, computed both ways and selected.
        let small = self.small_addr[i.min(SMALL - 1)];
        let block = self.base + STRIDE * i;
        let int = std::hint::select_unpredictable(i < SMALL, small, block) as *mut ffi::PyObject;
        // SAFETY: `int` is a live int: one of `small`, held by `self`, or of the block,
        // which is never freed (see `block`).
        unsafe { ffi::Py_INCREF(int) };
        int
    }
}

/// The address of a block holding the ints of at least `len` ids, or `None` when this
/// interpreter's objects cannot be copied into one.
fn block(py: Python<'_>, len: usize) -> PyResult<Option<usize>> {
    if len <= SMALL {
        return Ok(None);
    }
    let mut current = BLOCK.lock().unwrap_or_else(|e| e.into_inner());
    if current.1 >= len {
        // A block is only made for ids that copy (below).
        return Ok(Some(current.0));
    }
    // Grow by doubling at least, so a process loading ever larger vocabs leaks at most
    // about twice the largest block; the check is on the ids actually copied.
    let grown = len.max((2 * current.1).min(MAX_IDS));
    let (len, size) = match (copy_size(py, grown)?, copy_size(py, len)?) {
        (Some(size), _) => (grown, size),
        (None, Some(size)) => (len, size),
        (None, None) => return Ok(None),
    };
    let refcount = never_zero(py);
    let slots: &'static mut [Slot] = Box::leak(vec![Slot([0; STRIDE]); len].into_boxed_slice());
    for (id, slot) in slots.iter_mut().enumerate().skip(SMALL) {
        let int = (id as u64).into_pyobject(py)?;
        // SAFETY: `int` is a live int of `size` bytes (every id of the block has that size:
        // see `copy_size`), `slot` is `STRIDE >= size` bytes of our own, and a default
        // build's reference count is the object's first word.
        unsafe {
            let dst = slot.0.as_mut_ptr();
            std::ptr::copy_nonoverlapping(int.as_ptr().cast::<u8>(), dst, size);
            dst.cast::<isize>().write(refcount);
        }
    }
    let base = slots.as_mut_ptr() as usize;
    *current = (base, len);
    Ok(Some(base))
}

/// The size every int of an id in `SMALL..len` has, if they can be copied into slots: the
/// object header is a reference count and a type pointer only (not a free-threaded or
/// `Py_TRACE_REFS` build), the smallest and the largest of those ints have the same size
/// (ints grow with their value), and it fits in `STRIDE` bytes.
fn copy_size(py: Python<'_>, len: usize) -> PyResult<Option<usize>> {
    let header: usize = py
        .import("builtins")?
        .getattr("object")?
        .call0()?
        .call_method0("__sizeof__")?
        .extract()?;
    let size = int_size(py, len - 1)?;
    let fits = header == 2 * std::mem::size_of::<usize>()
        && int_size(py, SMALL)? == size
        && size <= STRIDE;
    Ok(fits.then_some(size))
}

/// The bytes of the int `value`.
fn int_size(py: Python<'_>, value: usize) -> PyResult<usize> {
    (value as u64)
        .into_pyobject(py)?
        .call_method0("__sizeof__")?
        .extract()
}

/// A reference count Python never brings to zero: the immortal count on 3.12 and later
/// (read from `None`, immortal there), under which `Py_INCREF` and `Py_DECREF` do not even
/// write; before 3.12, 2^60, which no program can count down.
fn never_zero(py: Python<'_>) -> isize {
    if py.version_info() >= (3, 12) {
        // SAFETY: `Py_None` is a live object whose first word is its reference count.
        unsafe { ffi::Py_None().cast::<isize>().read() }
    } else {
        1 << 60
    }
}
