//! The token texts of a byte-level BPE model (`tokenizer.json`'s `model.vocab` and
//! `model.merges`) as bytes, for the loaders in `bytepair.formats`. Qwen3.5's 248,000
//! merges are a few dictionary look-ups each: read in 0.31 s here against 0.43-0.56 s as a
//! Python loop, checked against the vocab in 0.19-0.24 s against 0.51-0.59 s. Anything
//! irregular is left to the Python loops, which say what is wrong.

use crate::byte_alphabet;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

/// The merges as `(bytes, bytes)` when every one is `"a b"` or `[a, b]` with both texts in
/// `known` (text to bytes); `None` at the first that is not.
#[pyfunction]
pub fn known_merges<'py>(
    py: Python<'py>,
    merges: &Bound<'py, PyList>,
    known: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let mut out = Vec::with_capacity(merges.len());
    for m in merges.iter() {
        let parts = if let Ok(pair) = m.cast::<PyList>() {
            if pair.len() != 2 {
                return Ok(None);
            }
            (pair.get_item(0)?, pair.get_item(1)?)
        } else if let Ok(line) = m.cast::<PyString>() {
            let Some((a, b)) = line.to_str()?.split_once(' ') else {
                return Ok(None);
            };
            if b.contains(' ') {
                return Ok(None);
            }
            (
                PyString::new(py, a).into_any(),
                PyString::new(py, b).into_any(),
            )
        } else {
            return Ok(None);
        };
        let (Some(a), Some(b)) = (known.get_item(&parts.0)?, known.get_item(&parts.1)?) else {
            return Ok(None);
        };
        if a.len()? == 0 || b.len()? == 0 {
            return Ok(None);
        }
        out.push(PyTuple::new(py, [a, b])?);
    }
    Ok(Some(PyList::new(py, out)?))
}

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
