//! `Encoder`: encode, decode, batches and files, the GIL released for real work.

use super::encoder_ahead::{self, Request};
use super::errors::{to_py, typed};
use super::ids::{ids_array, ids_list, numpy_ready, with_ids_buffer};
use super::ints::Ints;
use super::model_tables::PyModelTables;
use super::progress::ProgressBridge;
use super::stream::PyStream;
use super::text::{checked_str, str_bytes, str_list, str_units, with_str_bytes};
use crate::encode::{self, Stream};
use crate::encode::{char_spans, Encoder, SpecialPolicy};
use crate::utf8::Units;
use crate::{Error, TokenId};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A file removed when this is dropped, if it is still there: `encode_file`'s temporary
/// file, after an error or a panic (after the rename, there is nothing left to remove).
struct RemovedOnDrop<'a>(&'a std::path::Path);

impl Drop for RemovedOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// A batch's ids and the offsets where each text's ids start.
type IdsAndOffsets<'py> = (Bound<'py, PyArray1<TokenId>>, Bound<'py, PyArray1<i64>>);

/// Texts shorter than this are encoded without releasing the GIL: releasing costs more
/// than encoding them.
const DETACH_BYTES: usize = 2048;

/// Runs `encode` on `bytes` into `ids` (room reserved first), without the GIL unless
/// the text is short.
fn detached<R: Send>(
    py: Python<'_>,
    bytes: &[u8],
    ids: &mut Vec<TokenId>,
    encode: impl FnOnce(&[u8], &mut Vec<TokenId>) -> R + Send,
) -> R {
    ids.reserve(bytes.len() / 3 + 1);
    if bytes.len() < DETACH_BYTES {
        encode(bytes, ids)
    } else {
        py.detach(|| encode(bytes, ids))
    }
}

/// A byte-level BPE encoder/decoder (see `bytepair.Tokenizer`, which wraps it).
#[pyclass(frozen, name = "Encoder", module = "bytepair._core")]
pub struct PyEncoder {
    pub(super) inner: Arc<Encoder>,
    /// Each special token's index in the policy masks, by name: a scan of the names for
    /// each name of a set was 0.8 ms a call for DeepSeek's 1,230 disallowed tokens.
    names: FxHashMap<String, usize>,
    /// The Python int of every id below vocab_size (see `ints.rs`), made at construction
    /// (6.4 MB and 10 ms for o200k, once per process), not lazily: `encode_iterable` must
    /// not allocate them under a tight address-space limit.
    pub(super) ints: Ints,
    /// tiktoken's default: no special token allowed, all disallowed (`encode` without a
    /// policy), built once instead of from two Python sets per call.
    default_policy: SpecialPolicy,
}

/// The tables' tokens `(id, bytes)` and merges (ids of left, right and join) with ids as
/// the core takes them, refused as the constructor's conversion of a Python int to an id
/// refuses it.
pub(super) fn encoder_input(
    (tokens, merges): encoder_ahead::Input<'_>,
) -> Result<encoder_ahead::Owned, String> {
    let id = |i: u64| TokenId::try_from(i).map_err(|e| e.to_string());
    let mut vocab = Vec::with_capacity(tokens.len());
    for (i, b) in tokens {
        vocab.push((id(i)?, b.to_vec()));
    }
    let merges = merges
        .into_iter()
        .map(|(a, b, ab)| Ok((id(a)?, id(b)?, id(ab)?)))
        .collect::<Result<Vec<_>, String>>()?;
    Ok((vocab, merges))
}

/// Merges as a list of `(bytes, bytes)` tuples.
fn pairs_list<'py>(py: Python<'py>, pairs: Vec<(&[u8], &[u8])>) -> PyResult<Bound<'py, PyList>> {
    let items: Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> = pairs
        .iter()
        .map(|(a, b)| (PyBytes::new(py, a), PyBytes::new(py, b)))
        .collect();
    PyList::new(py, items)
}

/// The special tokens as the core takes them: (bytes, id).
pub(super) fn specials_bytes(special_tokens: &[(String, TokenId)]) -> Vec<(Vec<u8>, TokenId)> {
    special_tokens
        .iter()
        .map(|(s, i)| (s.as_bytes().to_vec(), *i))
        .collect()
}

impl PyEncoder {
    /// The Python encoder of a built core encoder, with `special_tokens`' names and the
    /// default policy.
    pub(super) fn wrap(
        py: Python<'_>,
        built: Result<Encoder, Error>,
        special_tokens: &[(String, TokenId)],
    ) -> PyResult<Self> {
        let inner = built.map_err(|e| to_py(py, e, 0))?;
        let mut names = FxHashMap::default();
        for (i, (s, _)) in special_tokens.iter().enumerate() {
            names.entry(s.clone()).or_insert(i);
        }
        let ints = Ints::new(py, inner.vocab_size())?;
        let default_policy = SpecialPolicy {
            allowed: vec![false; special_tokens.len()],
            disallowed: vec![true; special_tokens.len()],
        };
        Ok(PyEncoder {
            inner: Arc::new(inner),
            names,
            ints,
            default_policy,
        })
    }

    pub(super) fn err(&self, py: Python<'_>, e: Error) -> PyErr {
        to_py(py, e, self.inner.vocab_size())
    }

    /// The policy of `encode(text, allowed, disallowed)`: tiktoken's default, built at
    /// construction, when neither is given.
    fn policy_or_default(
        &self,
        py: Python<'_>,
        allowed: Option<&Bound<'_, PyAny>>,
        disallowed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Cow<'_, SpecialPolicy>> {
        Ok(match (allowed, disallowed) {
            (None, None) => Cow::Borrowed(&self.default_policy),
            (a, d) => {
                let empty = pyo3::types::PyTuple::empty(py).into_any();
                Cow::Owned(self.policy(a.unwrap_or(&empty), d.unwrap_or(&empty))?)
            }
        })
    }

    fn policy(
        &self,
        allowed: &Bound<'_, PyAny>,
        disallowed: &Bound<'_, PyAny>,
    ) -> PyResult<SpecialPolicy> {
        let mut policy = SpecialPolicy::none(self.default_policy.allowed.len());
        for (set, mask) in [
            (allowed, &mut policy.allowed),
            (disallowed, &mut policy.disallowed),
        ] {
            for name in set.try_iter()? {
                let name = name?;
                let name = name.cast::<PyString>()?.to_str()?;
                // Names were checked by Tokenizer._special_policy; others are ignored.
                if let Some(&i) = self.names.get(name) {
                    mask[i] = true;
                }
            }
        }
        Ok(policy)
    }

    fn ids(&self, ids: &Bound<'_, PyAny>) -> PyResult<Vec<TokenId>> {
        let py = ids.py();
        let bad = |item: &Bound<'_, PyAny>| -> PyErr {
            typed(py, "UnknownIdError", (item, self.inner.vocab_size()))
        };
        let mut out = Vec::new();
        if let Ok(n) = ids.len() {
            out.reserve(n);
        }
        for item in ids.try_iter()? {
            let item = item?;
            if item.is_instance_of::<PyBool>() {
                return Err(bad(&item));
            }
            match item.extract::<i64>() {
                Ok(i) if (0..=TokenId::MAX as i64).contains(&i) => out.push(i as TokenId),
                _ => return Err(bad(&item)),
            }
        }
        Ok(out)
    }
}

#[pymethods]
impl PyEncoder {
    /// `vocab`: id -> bytes of the regular tokens; `merges`: (bytes, bytes) in priority
    /// order, or None for a rank table; `special_tokens`: (text, id) pairs.
    /// `ignore_merges`: a pre-token that is a token is that token (HF's BPE option).
    #[new]
    #[pyo3(signature = (vocab, merges, special_tokens, pattern, ignore_merges=false))]
    fn new(
        py: Python<'_>,
        vocab: &Bound<'_, PyDict>,
        merges: Option<&Bound<'_, PyAny>>,
        special_tokens: Vec<(String, TokenId)>,
        pattern: &str,
        ignore_merges: bool,
    ) -> PyResult<Self> {
        let mut v = Vec::with_capacity(vocab.len());
        for (k, b) in vocab.iter() {
            v.push((
                k.extract::<TokenId>()?,
                b.cast::<PyBytes>()?.as_bytes().to_vec(),
            ));
        }
        let merges = match merges {
            None => None,
            Some(m) => {
                let mut out = Vec::new();
                for pair in m.try_iter()? {
                    let pair = pair?;
                    let pair = pair.cast::<PyTuple>()?;
                    out.push((
                        pair.get_item(0)?.cast::<PyBytes>()?.as_bytes().to_vec(),
                        pair.get_item(1)?.cast::<PyBytes>()?.as_bytes().to_vec(),
                    ));
                }
                Some(out)
            }
        };
        let built = py.detach(|| {
            Encoder::build(
                v,
                merges.as_deref(),
                specials_bytes(&special_tokens),
                pattern,
                ignore_merges,
            )
        });
        PyEncoder::wrap(py, built, &special_tokens)
    }

    /// The encoder of a tokenizer.json's `ModelTables` (the `vocab` and `merges` that
    /// `ModelTables.tokens` gives), built from the core's tables: Qwen3.5's 248,000 tokens
    /// and merges read back out of Python objects took 0.15 s of a 0.48 s build. The build
    /// `ModelTables.prepare_encoder` started for the same arguments is taken instead.
    #[staticmethod]
    #[pyo3(signature = (tables, special_tokens, pattern, ignore_merges=false))]
    fn from_tables(
        py: Python<'_>,
        tables: &Bound<'_, PyModelTables>,
        special_tokens: Vec<(String, TokenId)>,
        pattern: &str,
        ignore_merges: bool,
    ) -> PyResult<Self> {
        let request = Request {
            special_tokens,
            pattern: pattern.to_owned(),
            ignore_merges,
        };
        let ahead = tables.get().take_ahead();
        let built = match py.detach(|| ahead.and_then(|a| a.take(&request))) {
            Some(built) => built,
            None => {
                let input = tables.get().model()?;
                py.detach(|| encoder_ahead::build(input, &request))
            }
        };
        match built {
            Ok(built) => PyEncoder::wrap(py, built, &request.special_tokens),
            Err(e) => Err(pyo3::exceptions::PyOverflowError::new_err(e)),
        }
    }

    /// One more than the largest id.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// Every id's bytes, by id: the vocab's, and each special token's at its id.
    fn token_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let table = PyDict::new(py);
        for id in 0..self.inner.vocab_size() as TokenId {
            if let Some(bytes) = self.inner.token_bytes(id) {
                table.set_item(id, PyBytes::new(py, bytes))?;
            }
        }
        Ok(table)
    }

    /// How many pairs the pair table holds (see `Encoder::pair_count`).
    #[getter]
    fn pair_count(&self) -> usize {
        self.inner.pair_count()
    }

    /// The pair table's pairs, by priority: in merges mode with none repeated or dropped,
    /// the merges given.
    fn table_merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        pairs_list(py, py.detach(|| self.inner.pairs_by_priority()))
    }

    /// The canonical merge list (rank tables: each token's last merge under rank-BPE).
    fn merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        pairs_list(py, py.detach(|| self.inner.merges_from_ranks()))
    }

    /// Encodes a str; without `allowed` and `disallowed`, with tiktoken's default policy
    /// (no special token allowed, all disallowed). A non-str raises TypeError.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed: Option<&Bound<'py, PyAny>>,
        disallowed: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_ids_buffer(|ids| {
            self.encode_str(py, text, allowed, disallowed, ids)?;
            ids_list(py, &self.ints, ids)
        })
    }

    /// Encodes a str like `encode`, into a NumPy `uint32` array: no Python int per id (each
    /// costs a reference-count write, often a cache miss, and another at the list's
    /// release), one copy of 4 bytes each.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn encode_to_array<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed: Option<&Bound<'py, PyAny>>,
        disallowed: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray1<TokenId>>> {
        with_ids_buffer(|ids| {
            self.encode_str(py, text, allowed, disallowed, ids)?;
            ids_array(py, ids)
        })
    }

    /// `encode_to_array` treating special-token text as plain text, without a policy to
    /// read: the call of `encode_to_numpy(text, disallowed_special=())`.
    fn encode_ordinary_to_array<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<TokenId>>> {
        self.with_ordinary_ids(py, text, |ids| ids_array(py, ids))
    }

    /// Encodes a str, special-token text as plain text. A non-str raises TypeError.
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with_ordinary_ids(py, text, |ids| ids_list(py, &self.ints, ids))
    }

    fn encode_bytes<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed, disallowed)?;
        self.encode_policy(py, data, &policy)
    }

    #[pyo3(signature = (texts, allowed, disallowed, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed, disallowed)?;
        let strs = str_list(texts)?;
        let units: Vec<Units<'_>> = strs.iter().map(str_units).collect::<PyResult<_>>()?;
        // Lists are built block by block while other threads encode the next blocks
        // (encode_batch_each has the figures).
        let mut lists: Vec<Option<Py<PyList>>> = (0..units.len()).map(|_| None).collect();
        let mut py_error = None;
        let result = py.detach(|| {
            encode::encode_batch_each(&self.inner, &units, &policy, threads, &mut |(
                start,
                block,
            )| {
                Python::attach(|py| {
                    for (i, ids) in block.iter().enumerate() {
                        match ids_list(py, &self.ints, ids) {
                            Ok(list) => lists[start + i] = Some(list.unbind()),
                            Err(e) => {
                                py_error = Some(e);
                                return Err(Error::Interrupted);
                            }
                        }
                    }
                    Ok(())
                })
            })
        });
        match (result, py_error) {
            (_, Some(e)) => Err(e),
            (Err(e), None) => Err(self.err(py, e)),
            (Ok(()), None) => PyList::new(
                py,
                lists
                    .into_iter()
                    .map(|l| l.expect("every block handed over")),
            ),
        }
    }

    /// Encodes texts on `threads` threads into two NumPy arrays: every text's `uint32` ids
    /// one after the other, and the `int64` offsets where
    /// each text's ids start (one more than the texts: the last is the total). No Python
    /// int is made per id, and the GIL is released for the whole batch.
    #[pyo3(signature = (texts, allowed, disallowed, threads=0))]
    fn encode_batch_to_arrays<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        threads: usize,
    ) -> PyResult<IdsAndOffsets<'py>> {
        numpy_ready(py)?;
        let policy = self.policy(allowed, disallowed)?;
        let strs = str_list(texts)?;
        let units: Vec<Units<'_>> = strs.iter().map(str_units).collect::<PyResult<_>>()?;
        let (ids, offsets) = py
            .detach(|| encode::encode_batch(&self.inner, &units, &policy, threads))
            .map_err(|e| self.err(py, e))?;
        let offsets: Vec<i64> = offsets.into_iter().map(|o| o as i64).collect();
        let ids = PyArray1::from_vec(py, ids);
        let offsets = PyArray1::from_vec(py, offsets);
        Ok((ids, offsets))
    }

    /// (ids, [(start, end), ...]) with character offsets into `text`.
    fn encode_with_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let policy = self.policy(allowed, disallowed)?;
        let bytes = str_bytes(text)?;
        let (ids, spans) = py
            .detach(|| {
                let (ids, spans) = self.inner.encode_with_spans(&bytes, &policy)?;
                Ok((ids, char_spans(&bytes, &spans)))
            })
            .map_err(|e| self.err(py, e))?;
        Ok((ids_list(py, &self.ints, &ids)?, PyList::new(py, spans)?))
    }

    /// A streaming encoder with this special-token policy.
    fn stream(
        slf: &Bound<'_, Self>,
        allowed: &Bound<'_, PyAny>,
        disallowed: &Bound<'_, PyAny>,
    ) -> PyResult<PyStream> {
        let me = slf.get();
        Ok(PyStream {
            encoder: slf.clone().unbind(),
            policy: me.policy(allowed, disallowed)?,
            state: Mutex::new(Stream::default()),
        })
    }

    /// Encodes a file to `.npy`; `progress(done_bytes, total_bytes)` is called now and then.
    /// The array goes to a temporary file that `bytepair.formats.atomic` names and renames
    /// over `out_path` (a symbolic link's target, keeping the replaced file's permissions),
    /// so that every atomic write follows one rule; a failure leaves no temporary file.
    #[pyo3(signature = (path, out_path, allowed, disallowed, threads=0, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_file(
        &self,
        py: Python<'_>,
        path: PathBuf,
        out_path: PathBuf,
        allowed: &Bound<'_, PyAny>,
        disallowed: &Bound<'_, PyAny>,
        threads: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<u64> {
        let policy = self.policy(allowed, disallowed)?;
        let atomic = py.import("bytepair.formats.atomic")?;
        let (tmp, target): (PathBuf, PathBuf) =
            atomic.call_method1("temp_for", (&out_path,))?.extract()?;
        let _removed = RemovedOnDrop(&tmp);
        let out = std::fs::OpenOptions::new()
            .write(true)
            .open(&tmp)
            .map_err(|e| {
                let reason = e.to_string();
                self.err(
                    py,
                    Error::Io {
                        path: out_path.display().to_string(),
                        reason,
                    },
                )
            })?;
        let mut bridge = ProgressBridge::new(&progress);
        let result = py.detach(|| {
            let mut report = |done, total| bridge.report(done, total);
            encode::encode_file(
                &self.inner,
                &path,
                out,
                &out_path,
                &policy,
                threads,
                &mut report,
            )
        });
        let count = result.map_err(|e| bridge.error(py, e, self.inner.vocab_size()))?;
        atomic.call_method1("commit", (&tmp, &target, &out_path))?;
        Ok(count)
    }

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = self.ids(ids)?;
        let bytes = self.inner.decode_bytes(&ids).map_err(|e| self.err(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }
}

impl PyEncoder {
    fn encode_policy<'py>(
        &self,
        py: Python<'py>,
        bytes: &[u8],
        policy: &SpecialPolicy,
    ) -> PyResult<Bound<'py, PyList>> {
        with_ids_buffer(|ids| {
            self.encode_detached(py, bytes, policy, ids)?;
            ids_list(py, &self.ints, ids)
        })
    }

    /// The ids of `encode(text, allowed, disallowed)`, for a list or an array, appended
    /// to `ids`.
    fn encode_str(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        allowed: Option<&Bound<'_, PyAny>>,
        disallowed: Option<&Bound<'_, PyAny>>,
        ids: &mut Vec<TokenId>,
    ) -> PyResult<()> {
        let text = checked_str(text)?;
        let policy = self.policy_or_default(py, allowed, disallowed)?;
        with_str_bytes(text, |bytes| self.encode_detached(py, bytes, &policy, ids))
    }

    /// The ids of a str encoded with special-token text as plain text, handed to `f`. A
    /// non-str raises TypeError.
    fn with_ordinary_ids<R>(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        f: impl FnOnce(&[TokenId]) -> PyResult<R>,
    ) -> PyResult<R> {
        with_str_bytes(checked_str(text)?, |bytes| {
            with_ids_buffer(|ids| {
                detached(py, bytes, ids, |b, ids| {
                    self.inner.encode_ordinary_into(b, ids)
                });
                f(ids)
            })
        })
    }

    /// `Encoder::encode_into` through [`detached`].
    fn encode_detached(
        &self,
        py: Python<'_>,
        bytes: &[u8],
        policy: &SpecialPolicy,
        ids: &mut Vec<TokenId>,
    ) -> PyResult<()> {
        detached(py, bytes, ids, |b, ids| {
            self.inner.encode_into(b, policy, ids)
        })
        .map_err(|e| self.err(py, e))
    }
}
