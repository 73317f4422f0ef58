//! Lists of ids for Python: built from the shared ints (`ints.rs`), from a buffer reused
//! from call to call.

use super::ints::Ints;
use crate::TokenId;
use numpy::PyArray1;
use pyo3::exceptions::PyImportError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;

/// Runs `f` with this thread's empty buffer for ids, reused from call to call: a new
/// `Vec` per call was a malloc and a free of a few KB, 3% of a profile of `encode` per
/// document (paired runs, o200k: 1.03x English, 1.05x Chinese and code). A fresh one if
/// the buffer is in use (a `__del__` run by the GC while a list is built may encode). A
/// buffer grown past 256 KB is given back: for long texts the allocation is nothing, and
/// memory must not stay at the largest text's size.
pub(super) fn with_ids_buffer<R>(f: impl FnOnce(&mut Vec<TokenId>) -> R) -> R {
    thread_local! {
        static IDS: std::cell::RefCell<Vec<TokenId>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    IDS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut ids) => {
            ids.clear();
            let result = f(&mut ids);
            if ids.capacity() > 1 << 16 {
                *ids = Vec::new();
            }
            result
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// A Python list of the ids: new references to the encoder's ints (see `ints.rs`), written
/// straight into the new list's items (through `PyList::new`'s fallible iterator, 2 more
/// instructions an id: callgrind, cl100k, 1 MB of new Chinese, 12.7M -> 11.7M).
pub(super) fn ids_list<'py>(
    py: Python<'py>,
    ints: &Ints,
    ids: &[TokenId],
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: `PyList_New` returns a new list of `ids.len()` null items (or null with an
    // exception set, which `from_owned_ptr_or_err` turns into the error), its own array
    // that nothing else sees yet; each item is set once, to a new reference.
    let list = unsafe {
        let list = ffi::PyList_New(ids.len() as ffi::Py_ssize_t);
        let list = Bound::from_owned_ptr_or_err(py, list)?.cast_into_unchecked::<PyList>();
        let items = (*list.as_ptr().cast::<ffi::PyListObject>()).ob_item;
        let items = std::slice::from_raw_parts_mut(items, ids.len());
        for (item, &id) in items.iter_mut().zip(ids) {
            *item = ints.new_ref(py, id);
        }
        list
    };
    // Untracked by the cyclic GC, as CPython itself untracks tuples and dicts that hold
    // only atomic values: a list of ints cannot be part of a cycle, yet every young
    // collection walked each new list and read every int's header (13% of a profile of
    // `encode` per document). Paired runs, 20-line documents: 1.12-1.23x on o200k and
    // cl100k, English and Chinese. The cost: a cycle the caller later builds through
    // the list (`ids.append(ids)`) is never collected.
    // SAFETY: `list` is a live list this function just made; untracking a tracked
    // container is always valid, and its deallocation untracks only if still tracked.
    unsafe { ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
    Ok(list)
}

/// A NumPy `uint32` array of the ids, made through NumPy's C API:
/// `numpy.frombuffer` on a bytearray cost 0.98 us a call here, a third of `encode_to_numpy`
/// on a 20-line document of code.
pub(super) fn ids_array<'py>(
    py: Python<'py>,
    ids: &[TokenId],
) -> PyResult<Bound<'py, PyArray1<TokenId>>> {
    numpy_ready(py)?;
    Ok(PyArray1::from_slice(py, ids))
}

/// Whether NumPy can be imported, asked once: it is optional, and without it the C API's
/// functions would panic; the ImportError says how to get it.
pub(super) fn numpy_ready(py: Python<'_>) -> PyResult<()> {
    static NUMPY: PyOnceLock<bool> = PyOnceLock::new();
    if *NUMPY.get_or_init(py, || py.import("numpy").is_ok()) {
        Ok(())
    } else {
        Err(PyImportError::new_err(
            "NumPy arrays need NumPy: pip install numpy",
        ))
    }
}
