//! `ModelTables`: a tokenizer.json's `model.vocab` and `model.merges` as the core read them
//! (`crate::model_tables`), for `bytepair.formats.huggingface`, which reports their errors
//! in the order of the file's other checks and takes the tables as Python objects, and for
//! `Encoder.from_tables`, which builds on them without those objects.

use super::encoder_ahead::{EncoderAhead, Input, Request};
use crate::model_tables::{self, Merge, TableError, Vocab};
use crate::TokenId;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use rustc_hash::FxHashSet;
use std::sync::Mutex;

/// The merges as read (or the first of the wrong form or spelling): each one's bytes, and
/// the vocab entries of its sides and join (or the first that needs bytes no token has).
type Merges = Result<(Vec<Merge>, Result<Vec<(usize, usize, usize)>, TableError>), TableError>;

/// A key of the vocab: its text, its id and the bytes it spells.
type Key<'py> = (String, u64, Option<Bound<'py, PyBytes>>);

#[pyclass(frozen, name = "ModelTables", module = "bytepair._core")]
pub struct PyModelTables {
    vocab: Result<Vocab, TableError>,
    /// `None` when `model.merges` is not an array (the document holds what it is).
    merges: Option<Merges>,
    /// The encoder `prepare_encoder` started.
    ahead: Mutex<Option<EncoderAhead>>,
}

impl Drop for PyModelTables {
    /// The tables freed on the thread pool: a load drops them as it returns, and freeing
    /// DeepSeek's 128,000 keys, spellings and merges took 10 ms.
    fn drop(&mut self) {
        let vocab = std::mem::replace(&mut self.vocab, Ok(Vocab::default()));
        let merges = self.merges.take();
        rayon::spawn(move || drop((vocab, merges)));
    }
}

impl PyModelTables {
    /// The tables of `model.vocab`'s JSON text (an object) and `model.merges`' (an array,
    /// if it is one), read without the GIL: the two on two cores, then the merges against
    /// the vocab.
    pub(super) fn read(py: Python<'_>, vocab: &str, merges: Option<&str>) -> Self {
        py.detach(|| {
            let (vocab, merges) = rayon::join(
                || Vocab::read(vocab),
                || merges.map(model_tables::read_merges),
            );
            let merges = merges.map(|m| {
                let m = m?;
                let entries = match &vocab {
                    Ok(v) => model_tables::merge_entries(&m, v),
                    Err(_) => Ok(Vec::new()),
                };
                Ok((m, entries))
            });
            PyModelTables {
                vocab,
                merges,
                ahead: Mutex::new(None),
            }
        })
    }

    /// The build `prepare_encoder` started, if any (taken: an encoder is built once).
    pub(super) fn take_ahead(&self) -> Option<EncoderAhead> {
        self.ahead.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn vocab(&self) -> PyResult<&Vocab> {
        self.vocab
            .as_ref()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    /// What an encoder is built from: `(id, bytes)` of every key spelt in the alphabet, in
    /// the file's order (the vocab `tokens` gives), and the ids of each merge's left, right
    /// and join; a `ValueError` where a table breaks a rule (the reader refuses such a
    /// file first).
    pub(super) fn model(&self) -> PyResult<Input<'_>> {
        let v = self.vocab()?;
        let merges = match &self.merges {
            Some(Ok((_, Ok(entries)))) => {
                let id = |i: usize| v.entries[i].1;
                entries
                    .iter()
                    .map(|&(a, b, ab)| (id(a), id(b), id(ab)))
                    .collect()
            }
            Some(Ok((_, Err(e)))) | Some(Err(e)) => {
                return Err(pyo3::exceptions::PyValueError::new_err(e.to_string()))
            }
            None => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "model.merges is not an array",
                ))
            }
        };
        let tokens = v
            .entries
            .iter()
            .zip(&v.bytes)
            .filter_map(|((_, id), b)| b.as_deref().map(|b| (*id, b)))
            .collect();
        Ok((tokens, merges))
    }
}

/// Python's own reading of a JSON value's text (an error's value, as `json.loads` gives it).
fn json_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

#[pymethods]
impl PyModelTables {
    /// `None`, or what breaks the vocab's rule: `("id", text, value)` for an id that is no
    /// integer >= 0, `("reused", text, id)`.
    fn vocab_error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        Ok(match &self.vocab {
            Ok(_) => None,
            Err(TableError::NotAnId { text, value }) => {
                Some(("id", text, json_value(py, value)?).into_pyobject(py)?)
            }
            Err(TableError::ReusedId { text, id }) => Some(
                ("reused", text, *id)
                    .into_pyobject(py)?
                    .into_any()
                    .cast_into()?,
            ),
            Err(e) => unreachable!("not a vocab error: {e}"),
        })
    }

    /// Starts building the encoder `Encoder.from_tables(self, special_tokens, pattern,
    /// ignore_merges)` gives, for the reader to go on with the tables' Python objects and
    /// checks meanwhile (tables that break a rule start nothing: `from_tables` refuses them).
    #[pyo3(signature = (special_tokens, pattern, ignore_merges=false))]
    fn prepare_encoder(
        &self,
        py: Python<'_>,
        special_tokens: Vec<(String, TokenId)>,
        pattern: String,
        ignore_merges: bool,
    ) {
        let Ok(input) = self.model() else { return };
        let request = Request {
            special_tokens,
            pattern,
            ignore_merges,
        };
        let ahead = py.detach(|| EncoderAhead::start(input, request));
        *self.ahead.lock().unwrap_or_else(|e| e.into_inner()) = Some(ahead);
    }

    /// Whether `model.merges` is an array (its table was read).
    pub(super) fn has_merges(&self) -> bool {
        self.merges.is_some()
    }

    /// `None`, or the first merge of the wrong form or spelling: `("form", index, value)`
    /// (not "a b" nor a list of texts), `("two", index, value)` (not two non-empty tokens),
    /// `("spelling", index, text)` (a text outside GPT-2's alphabet).
    fn merges_error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(Err(e)) = &self.merges else {
            return Ok(None);
        };
        // Checked by `merges_vocab_error`, where `checked_merges` would check.
        Ok(match e {
            TableError::NotAMerge { index, value } => {
                Some(("form", *index, json_value(py, value)?).into_pyobject(py)?)
            }
            TableError::NotTwoTokens { index, value } => {
                Some(("two", *index, json_value(py, value)?).into_pyobject(py)?)
            }
            TableError::NotByteLevel { index, text } => Some(
                ("spelling", *index, text)
                    .into_pyobject(py)?
                    .into_any()
                    .cast_into()?,
            ),
            _ => None,
        })
    }

    /// `None`, or the first merge that needs bytes no token has:
    /// `(index, left, right, part)`.
    fn merges_vocab_error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(Ok((_, Err(TableError::NotInVocab { index, merge, part })))) = &self.merges else {
            return Ok(None);
        };
        let b = |x: &[u8]| PyBytes::new(py, x);
        Ok(Some(
            (*index, b(&merge.0), b(&merge.1), b(part)).into_pyobject(py)?,
        ))
    }

    /// The number of keys.
    fn __len__(&self) -> PyResult<usize> {
        Ok(self.vocab()?.entries.len())
    }

    /// The id of the key `text`.
    fn get(&self, text: &str) -> PyResult<Option<u64>> {
        Ok(self.vocab()?.id_of(text))
    }

    /// Whether a key has the id `id`.
    fn has_id(&self, id: u64) -> PyResult<bool> {
        Ok(self.vocab()?.entries.iter().any(|&(_, i)| i == id))
    }

    /// `(text, id, bytes or None)` of each key whose id is in `ids`, in the file's order.
    fn at_ids<'py>(&self, py: Python<'py>, ids: FxHashSet<u64>) -> PyResult<Vec<Key<'py>>> {
        let v = self.vocab()?;
        Ok(v.entries
            .iter()
            .zip(&v.bytes)
            .filter(|((_, i), _)| ids.contains(i))
            .map(|((t, i), b)| (t.clone(), *i, b.as_ref().map(|b| PyBytes::new(py, b))))
            .collect())
    }

    /// The first key not spelt in GPT-2's alphabet whose id is not in `skip`.
    fn unspelt(&self, skip: FxHashSet<u64>) -> PyResult<Option<String>> {
        let v = self.vocab()?;
        Ok(v.entries
            .iter()
            .zip(&v.bytes)
            .find(|((_, i), b)| b.is_none() && !skip.contains(i))
            .map(|((t, _), _)| t.clone()))
    }

    /// `(vocab, merges)`: id to bytes of every key spelt in the alphabet, in the file's
    /// order, and the merges as `(bytes, bytes)` (the vocab's own objects), or `None` when
    /// `model.merges` is no array.
    fn tokens<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyList>>)> {
        // Python's collector paused while the tuples are made: it ran every 700 of them,
        // 20-40 ms of 0.10-0.13 s for Qwen3.5's 248,000 merges.
        let gc = py.import("gc")?;
        let enabled = gc.call_method0("isenabled")?.is_truthy()?;
        if enabled {
            gc.call_method0("disable")?;
        }
        let made = self.objects(py);
        if enabled {
            gc.call_method0("enable")?;
        }
        made
    }
}

impl PyModelTables {
    /// [`PyModelTables::tokens`]' objects.
    fn objects<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyList>>)> {
        let v = self.vocab()?;
        let dict = presized_dict(py, v.entries.len())?;
        let mut objects: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(v.bytes.len());
        for ((_, id), b) in v.entries.iter().zip(&v.bytes) {
            let obj = b.as_ref().map(|b| PyBytes::new(py, b));
            if let Some(obj) = &obj {
                dict.set_item(*id, obj)?;
            }
            objects.push(obj);
        }
        let merges = match &self.merges {
            Some(Ok((_, Ok(entries)))) => {
                let side = |i: usize| objects[i].clone().expect("a merge side has bytes");
                let pairs = entries
                    .iter()
                    .map(|&(a, b, _)| merge_tuple(py, side(a), side(b)))
                    .collect::<PyResult<Vec<_>>>()?;
                Some(PyList::new(py, pairs)?)
            }
            // Merges that `merges_vocab_error` refuses: their own bytes.
            Some(Ok((merges, Err(_)))) => {
                let pairs = merges
                    .iter()
                    .map(|(a, b)| merge_tuple(py, PyBytes::new(py, a), PyBytes::new(py, b)))
                    .collect::<PyResult<Vec<_>>>()?;
                Some(PyList::new(py, pairs)?)
            }
            Some(Err(e)) => return Err(pyo3::exceptions::PyValueError::new_err(e.to_string())),
            None => None,
        };
        Ok((dict, merges))
    }
}

/// A merge `(left, right)` as a tuple that Python's collector does not track: two `bytes`
/// make no cycle, and the collections after a load walked DeepSeek's 128,000 tuples again
/// and again (the collector untracks such a tuple itself only when it first walks it).
fn merge_tuple<'py>(
    py: Python<'py>,
    a: Bound<'py, PyBytes>,
    b: Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyTuple>> {
    let pair = PyTuple::new(py, [a, b])?;
    // SAFETY: `pair` is a live tuple, tracked since it was made; untracking it only leaves
    // it out of cycle collection, which its items cannot take part in.
    unsafe { pyo3::ffi::PyObject_GC_UnTrack(pair.as_ptr().cast()) };
    Ok(pair)
}

/// An empty dict with room for `n` keys: grown key by key, the dict of DeepSeek's 128,000
/// was resized 15 times.
fn presized_dict(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyDict>> {
    // SAFETY: `_PyDict_NewPresized` returns a new reference to a dict, or null with an
    // exception set.
    unsafe {
        let dict = pyo3::ffi::_PyDict_NewPresized(n as pyo3::ffi::Py_ssize_t);
        Bound::from_owned_ptr_or_err(py, dict).map(|d| d.cast_into_unchecked())
    }
}
