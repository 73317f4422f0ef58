//! The tokens of a byte-level BPE model given as Python objects, for the loaders in
//! `bytepair.formats` and `bytepair.vocab`: a text spelt back to bytes, and merges checked
//! against the vocab (Qwen3.5's 248,000 merges in 0.19-0.24 s against 0.51-0.59 s as a
//! Python loop; anything irregular is left to the loop, which says what is wrong).

use crate::byte_alphabet;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

/// Whether every merge is a tuple of two `bytes` whose parts and join are keys of `ranks`.
#[pyfunction]
pub fn merges_in_vocab(
    py: Python<'_>,
    merges: &Bound<'_, PyList>,
    ranks: &Bound<'_, PyDict>,
) -> PyResult<bool> {
    let mut joined = Vec::new();
    for m in merges.iter() {
        let Ok(pair) = m.cast::<PyTuple>() else {
            return Ok(false);
        };
        if pair.len() != 2 {
            return Ok(false);
        }
        let (a, b) = (pair.get_item(0)?, pair.get_item(1)?);
        let (Ok(x), Ok(y)) = (a.cast::<PyBytes>(), b.cast::<PyBytes>()) else {
            return Ok(false);
        };
        joined.clear();
        joined.extend_from_slice(x.as_bytes());
        joined.extend_from_slice(y.as_bytes());
        if !(ranks.contains(&a)?
            && ranks.contains(&b)?
            && ranks.contains(PyBytes::new(py, &joined))?)
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The bytes `text` spells in GPT-2's byte alphabet, or `None` when it is not spelt in it.
#[pyfunction]
pub fn byte_level_bytes<'py>(py: Python<'py>, text: &str) -> Option<Bound<'py, PyBytes>> {
    let mut buf = Vec::with_capacity(text.len());
    byte_alphabet::decode(text, &mut buf).then(|| PyBytes::new(py, &buf))
}
