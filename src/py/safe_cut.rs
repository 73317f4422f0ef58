//! `safe_cuts` and `special_cuts`: where counting may cut a text into chunks
//! ([`crate::safe_cut`], and the starts of special tokens), for the Python code that cuts
//! corpora into parts.

use super::errors::to_py;
use crate::count::Counter;
use crate::special::SpecialMatcher;
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;

/// For each offset in `near`, the first offset at or after it (and after 0) where counting
/// may cut `data` under `pattern` and `special_tokens` without changing a count, or
/// `len(data)` when there is none. `data` is any contiguous buffer of bytes (`bytes`,
/// `mmap`): it is read in place, the GIL released.
#[pyfunction]
#[pyo3(signature = (pattern, data, near, special_tokens=Vec::new()))]
pub(super) fn safe_cuts(
    py: Python<'_>,
    pattern: &str,
    data: PyBuffer<u8>,
    near: Vec<usize>,
    special_tokens: Vec<String>,
) -> PyResult<Vec<usize>> {
    let counter =
        Counter::new(pattern, &special_tokens, None, None).map_err(|e| to_py(py, e, 0))?;
    if !data.is_c_contiguous() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "safe_cuts needs a contiguous buffer of bytes",
        ));
    }
    let cuts = with_bytes(py, &data, |bytes| {
        near.iter()
            .map(|&n| counter.next_cut(bytes, n).unwrap_or(bytes.len()))
            .collect()
    });
    drop(data);
    Ok(cuts)
}

/// For each offset in `near`, the first offset at or after it (and after 0) where a special
/// token starts that no other occurrence straddles, or `len(data)` when there is none: cuts
/// that hold for every pattern, since training splits at special tokens first.
#[pyfunction]
pub(super) fn special_cuts(
    py: Python<'_>,
    data: PyBuffer<u8>,
    near: Vec<usize>,
    special_tokens: Vec<String>,
) -> PyResult<Vec<usize>> {
    if !data.is_c_contiguous() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "special_cuts needs a contiguous buffer of bytes",
        ));
    }
    let matcher = SpecialMatcher::new(&special_tokens);
    let cuts = with_bytes(py, &data, |bytes| {
        near.iter()
            .map(|&n| {
                matcher
                    .next_clean_start(bytes, n.max(1), bytes.len())
                    .unwrap_or(bytes.len())
            })
            .collect()
    });
    drop(data);
    Ok(cuts)
}

/// Runs `f` on the buffer's bytes with the GIL released.
fn with_bytes<T: Send>(
    py: Python<'_>,
    data: &PyBuffer<u8>,
    f: impl FnOnce(&[u8]) -> T + Send,
) -> T {
    // SAFETY: the buffer is held (and its exporter keeps the memory) until `data` drops,
    // after this call; it is contiguous (checked by the callers), `len_bytes` long, and
    // only read.
    let bytes: &[u8] =
        unsafe { std::slice::from_raw_parts(data.buf_ptr() as *const u8, data.len_bytes()) };
    py.detach(|| f(bytes))
}
