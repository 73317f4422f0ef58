//! The tokens of a byte-level BPE model given as Python objects, for the loaders in
//! `bytepair.formats` and `bytepair.vocab`: a text spelt back to bytes, the vocab's form
//! checked, merges checked against the vocab (Qwen3.5's 248,000 merges in 0.19-0.24 s
//! against 0.51-0.59 s as a Python loop), a rank file read; anything irregular is left to
//! the Python loop, which says what is wrong.

use super::encoder_ahead::{EncoderAhead, PyEncoderAhead, Request};
use crate::byte_alphabet;
use crate::TokenId;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyTuple};
use rustc_hash::FxHashSet;
use std::sync::{Arc, Mutex};

/// A `.tiktoken` file's ranks, `{rank: token}` in file order, if the file is regular
/// (`rank_file::parse`); else `None`, for the Python reader to say what is wrong. With
/// `ahead` (special tokens and pattern), the encoder of the ranks is built meanwhile on a
/// thread of its own and handed out beside the dict (o200k's load: the build's 0.1 s
/// beside making the dict and checking it).
#[pyfunction]
#[pyo3(signature = (raw, ahead=None))]
pub fn rank_file<'py>(
    py: Python<'py>,
    raw: &[u8],
    ahead: Option<(Vec<(String, TokenId)>, String)>,
) -> PyResult<Option<(Bound<'py, PyDict>, Option<PyEncoderAhead>)>> {
    let Some(ranks) = py.detach(|| crate::rank_file::parse(raw)) else {
        return Ok(None);
    };
    let ranks = Arc::new(ranks);
    let ahead = ahead.map(|(special_tokens, pattern)| {
        let request = Request {
            special_tokens,
            pattern,
            ignore_merges: false,
        };
        PyEncoderAhead {
            ahead: Mutex::new(Some(EncoderAhead::start_ranks(ranks.clone(), request))),
        }
    });
    let dict = PyDict::new(py);
    for (rank, token) in ranks.iter() {
        dict.set_item(rank, PyBytes::new(py, token))?;
    }
    Ok(Some((dict, ahead)))
}

/// Whether `vocab` is regular (each id an `int` from 0 to 2**64 - 1, each token non-empty
/// `bytes`, no token twice), and the single bytes that no token of `bytes` is.
#[pyfunction]
pub fn vocab_check(vocab: &Bound<'_, PyDict>) -> (bool, Vec<u8>) {
    let mut regular = true;
    let mut tokens = Vec::with_capacity(vocab.len());
    for (id, token) in vocab.iter() {
        regular &= id.is_exact_instance_of::<PyInt>() && id.extract::<u64>().is_ok();
        match token.cast_into_exact::<PyBytes>() {
            Ok(token) => tokens.push(token),
            Err(_) => regular = false,
        }
    }
    let mut seen = FxHashSet::default();
    seen.reserve(tokens.len());
    let mut single = [false; 256];
    for token in &tokens {
        let token = token.as_bytes();
        regular &= !token.is_empty() && seen.insert(token);
        if let &[b] = token {
            single[b as usize] = true;
        }
    }
    let missing = (0..=255u8).filter(|&b| !single[b as usize]).collect();
    (regular, missing)
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
