//! `safe_cuts`: where counting may cut a text into chunks ([`crate::safe_cut`], and the
//! starts of special tokens), for the Python code that cuts corpora into parts.

use super::errors::to_py;
use crate::count::Counter;
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
    // SAFETY: the buffer is held (and its exporter keeps the memory) until `data` drops at
    // the end of this call; it is contiguous, `len_bytes` long, and only read.
    let bytes: &[u8] =
        unsafe { std::slice::from_raw_parts(data.buf_ptr() as *const u8, data.len_bytes()) };
    let cuts = py.detach(|| {
        near.iter()
            .map(|&n| counter.next_cut(bytes, n).unwrap_or(bytes.len()))
            .collect()
    });
    drop(data);
    Ok(cuts)
}
