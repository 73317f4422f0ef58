//! The PyO3 side (with `py/ints.rs`, the ints of the ids): frozen wrappers over the core,
//! the GIL released for real work, and core errors mapped to Python exceptions.

mod ints;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The Rust core's version, to check that the extension and the package match.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

// --- split: pre-tokenization -------------------------------------------------------------

/// The pieces `pattern` (a name such as "gpt2", or a regex) cuts `text` into, as bytes. Invalid
/// UTF-8 bytes are kept, as punctuation. For tests and inspection: training and encoding split
/// inside the core.
#[pyfunction]
fn split_pieces<'py>(
    py: Python<'py>,
    pattern: &str,
    text: &[u8],
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let splitter =
        crate::split::Splitter::new(pattern).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let ends = py.detach(|| {
        let mut ends = Vec::new();
        let mut end = 0;
        splitter.for_each(text, |piece| {
            end += piece.len();
            ends.push(end);
        });
        ends
    });
    let mut start = 0;
    Ok(ends
        .into_iter()
        .map(|end| {
            let piece = PyBytes::new(py, &text[start..end]);
            start = end;
            piece
        })
        .collect())
}

// --- end split -----------------------------------------------------------------------------

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(split_pieces, m)?)?;
    training::register(m)?;
    encoder::register(m)?;
    Ok(())
}

// --- encoder: encode, decode, batches, streams, files ------------------------------------

mod encoder {
    use super::ints::Ints;
    use crate::encode::{
        char_spans, encode_batch, encode_batch_each, encode_file, Encoder, SpecialPolicy, Stream,
    };
    use crate::{Error, TokenId};
    use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};
    use std::borrow::Cow;
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

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

    pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_class::<PyEncoder>()?;
        m.add_class::<PyStream>()?;
        Ok(())
    }

    /// Maps a core error to bytepair's typed Python exceptions.
    fn to_py(py: Python<'_>, e: Error, vocab_size: usize) -> PyErr {
        let errors = match py.import("bytepair.errors") {
            Ok(m) => m,
            Err(err) => return err,
        };
        let made = match &e {
            Error::DisallowedSpecial { token } => errors
                .getattr("DisallowedSpecialError")
                .and_then(|c| c.call1((token.as_str(),))),
            Error::UnknownId { id } => errors
                .getattr("UnknownIdError")
                .and_then(|c| c.call1((*id, vocab_size))),
            Error::InvalidCounts { .. } => return PyValueError::new_err(e.to_string()),
            Error::InvalidVocab { .. } => errors
                .getattr("VocabError")
                .and_then(|c| c.call1((e.to_string(),))),
            Error::InvalidPattern { .. } => errors
                .getattr("PatternError")
                .and_then(|c| c.call1((e.to_string(),))),
            Error::Io { .. } => errors
                .getattr("CorpusError")
                .and_then(|c| c.call1((e.to_string(),))),
            Error::Interrupted => return PyKeyboardInterrupt::new_err("interrupted"),
        };
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(err) => err,
        }
    }

    /// The items of an iterable of str (a batch's texts); anything else is a TypeError.
    fn str_list<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
        texts
            .try_iter()?
            .map(|t| Ok(t?.cast_into::<PyString>()?))
            .collect()
    }

    /// The UTF-8 bytes of a str. Lone surrogates become U+FFFD (tiktoken's rule: a round trip
    /// through UTF-16, which also joins a high and a low surrogate into one character).
    fn str_bytes<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
        match s.to_str() {
            Ok(v) => Ok(Cow::Borrowed(v.as_bytes())),
            Err(_) => {
                let fixed = s
                    .call_method1("encode", ("utf-16", "surrogatepass"))?
                    .call_method1("decode", ("utf-16", "replace"))?;
                Ok(Cow::Owned(fixed.extract::<String>()?.into_bytes()))
            }
        }
    }

    /// `text` as a str, or the TypeError `Tokenizer.encode` documents (a Python-side check
    /// was a function call per `encode`: 60 ns of its 170 ns overhead).
    fn checked_str<'a, 'py>(text: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyString>> {
        text.cast::<PyString>().map_err(|_| {
            let hint = if text.is_instance_of::<PyBytes>() || text.is_instance_of::<PyByteArray>() {
                "; for bytes, call encode_bytes"
            } else {
                ""
            };
            let name = text
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            PyTypeError::new_err(format!("expected a str to encode, got {name}{hint}"))
        })
    }

    /// Runs `f` with this thread's empty buffer for ids, reused from call to call: a new
    /// `Vec` per call was a malloc and a free of a few KB, 3% of a profile of `encode` per
    /// document (paired runs, o200k: 1.03x English, 1.05x Chinese and code). A fresh one if
    /// the buffer is in use (a `__del__` run by the GC while a list is built may encode). A
    /// buffer grown past 256 KB is given back: for long texts the allocation is nothing, and
    /// memory must not stay at the largest text's size.
    fn with_ids_buffer<R>(f: impl FnOnce(&mut Vec<TokenId>) -> R) -> R {
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

    /// A Python list of the ids: new references to the encoder's ints (see `ints.rs`).
    fn ids_list<'py>(
        py: Python<'py>,
        ints: &Ints,
        ids: &[TokenId],
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::new(py, ids.iter().map(|&id| ints.get(py, id)))?;
        // Untracked by the cyclic GC, as CPython itself untracks tuples and dicts that hold
        // only atomic values: a list of ints cannot be part of a cycle, yet every young
        // collection walked each new list and read every int's header (13% of a profile of
        // `encode` per document). Paired runs, 20-line documents: 1.12-1.23x on o200k and
        // cl100k, English and Chinese. The cost: a cycle the caller later builds through
        // the list (`ids.append(ids)`) is never collected.
        // SAFETY: `list` is a live list this function just made; untracking a tracked
        // container is always valid, and its deallocation untracks only if still tracked.
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
        Ok(list)
    }

    /// A byte-level BPE encoder/decoder (see `bytepair.Tokenizer`, which wraps it).
    #[pyclass(frozen, name = "Encoder", module = "bytepair._core")]
    pub struct PyEncoder {
        inner: Arc<Encoder>,
        names: Vec<String>,
        /// The Python int of every id below vocab_size (see `ints.rs`), made at construction
        /// (6.4 MB and 10 ms for o200k, once per process), not lazily: `encode_iterable` must
        /// not allocate them under a tight address-space limit.
        ints: Ints,
        /// tiktoken's default: no special token allowed, all disallowed (`encode` without a
        /// policy), built once instead of from two Python sets per call.
        default_policy: SpecialPolicy,
    }

    impl PyEncoder {
        fn err(&self, py: Python<'_>, e: Error) -> PyErr {
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
            let n = self.names.len();
            let mut policy = SpecialPolicy::none(n);
            for (set, mask) in [
                (allowed, &mut policy.allowed),
                (disallowed, &mut policy.disallowed),
            ] {
                for name in set.try_iter()? {
                    let name = name?;
                    let name = name.cast::<PyString>()?.to_str()?;
                    // Names were checked by Tokenizer._special_policy; others are ignored.
                    if let Some(i) = self.names.iter().position(|s| s == name) {
                        mask[i] = true;
                    }
                }
            }
            Ok(policy)
        }

        fn ids(&self, ids: &Bound<'_, PyAny>) -> PyResult<Vec<TokenId>> {
            let py = ids.py();
            let bad = |item: &Bound<'_, PyAny>| -> PyErr {
                match py
                    .import("bytepair.errors")
                    .and_then(|m| m.getattr("UnknownIdError"))
                    .and_then(|c| c.call1((item, self.inner.vocab_size())))
                {
                    Ok(exc) => PyErr::from_value(exc),
                    Err(err) => err,
                }
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
            let names: Vec<String> = special_tokens.iter().map(|(s, _)| s.clone()).collect();
            let specials = special_tokens
                .into_iter()
                .map(|(s, i)| (s.into_bytes(), i))
                .collect();
            let built = py
                .detach(|| Encoder::build(v, merges.as_deref(), specials, pattern, ignore_merges));
            let inner = built.map_err(|e| to_py(py, e, 0))?;
            let ints = Ints::new(py, inner.vocab_size())?;
            let default_policy = SpecialPolicy {
                allowed: vec![false; names.len()],
                disallowed: vec![true; names.len()],
            };
            Ok(PyEncoder {
                inner: Arc::new(inner),
                names,
                ints,
                default_policy,
            })
        }

        /// One more than the largest id.
        #[getter]
        fn vocab_size(&self) -> usize {
            self.inner.vocab_size()
        }

        /// The canonical merge list (rank tables: each token's last merge under rank-BPE).
        fn merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
            let merges = py.detach(|| self.inner.merges_from_ranks());
            let items: Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> = merges
                .iter()
                .map(|(a, b)| (PyBytes::new(py, a), PyBytes::new(py, b)))
                .collect();
            PyList::new(py, items)
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

        /// Encodes a str like `encode`, into a bytearray of native-endian u32 ids for
        /// `numpy.frombuffer`: no Python int per id (each costs a reference-count write,
        /// often a cache miss, and another at the list's release), one copy of 4 bytes each.
        #[pyo3(signature = (text, allowed=None, disallowed=None))]
        fn encode_to_array<'py>(
            &self,
            py: Python<'py>,
            text: &Bound<'py, PyAny>,
            allowed: Option<&Bound<'py, PyAny>>,
            disallowed: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyByteArray>> {
            with_ids_buffer(|ids| {
                self.encode_str(py, text, allowed, disallowed, ids)?;
                PyByteArray::new_with(py, ids.len() * 4, |buf| {
                    for (out, id) in buf.chunks_exact_mut(4).zip(ids.iter()) {
                        out.copy_from_slice(&id.to_ne_bytes());
                    }
                    Ok(())
                })
            })
        }

        /// Encodes a str, special-token text as plain text. A non-str raises TypeError.
        fn encode_ordinary<'py>(
            &self,
            py: Python<'py>,
            text: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyList>> {
            let bytes = str_bytes(checked_str(text)?)?;
            with_ids_buffer(|ids| {
                detached(py, &bytes, ids, |b, ids| {
                    self.inner.encode_ordinary_into(b, ids)
                });
                ids_list(py, &self.ints, ids)
            })
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
            let bytes: Vec<Cow<'_, [u8]>> = strs.iter().map(str_bytes).collect::<PyResult<_>>()?;
            // Lists are built block by block while other threads encode the next blocks
            // (encode_batch_each has the figures).
            let mut lists: Vec<Option<Py<PyList>>> = (0..bytes.len()).map(|_| None).collect();
            let mut py_error = None;
            let result = py.detach(|| {
                encode_batch_each(
                    &self.inner,
                    &bytes,
                    &policy,
                    threads,
                    &mut |(start, block)| {
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
                    },
                )
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

        /// Encodes texts on `threads` threads into two bytearrays for `numpy.frombuffer`:
        /// every text's native-endian u32 ids one after the other, and the i64 offsets where
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
        ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
            let policy = self.policy(allowed, disallowed)?;
            let strs = str_list(texts)?;
            let bytes: Vec<Cow<'_, [u8]>> = strs.iter().map(str_bytes).collect::<PyResult<_>>()?;
            let each = py
                .detach(|| encode_batch(&self.inner, &bytes, &policy, threads))
                .map_err(|e| self.err(py, e))?;
            let total: usize = each.iter().map(Vec::len).sum();
            let ids = PyByteArray::new_with(py, total * 4, |buf| {
                let mut out = buf.chunks_exact_mut(4);
                for id in each.iter().flatten() {
                    out.next()
                        .expect("room for every id")
                        .copy_from_slice(&id.to_ne_bytes());
                }
                Ok(())
            })?;
            let offsets = PyByteArray::new_with(py, (each.len() + 1) * 8, |buf| {
                let mut at = 0i64;
                let mut out = buf.chunks_exact_mut(8);
                for ids in std::iter::once(&[][..]).chain(each.iter().map(Vec::as_slice)) {
                    at += ids.len() as i64;
                    out.next()
                        .expect("room for every offset")
                        .copy_from_slice(&at.to_ne_bytes());
                }
                Ok(())
            })?;
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
            let mut py_error: Option<PyErr> = None;
            let result = py.detach(|| {
                let mut report = |done: u64, total: u64| -> Result<(), Error> {
                    Python::attach(|py| {
                        let r = py.check_signals().and_then(|_| match &progress {
                            Some(f) => f.call1(py, (done, total)).map(|_| ()),
                            None => Ok(()),
                        });
                        r.map_err(|e| {
                            py_error = Some(e);
                            Error::Interrupted
                        })
                    })
                };
                encode_file(&self.inner, &path, &out_path, &policy, threads, &mut report)
            });
            match (result, py_error) {
                (_, Some(e)) => Err(e),
                (Ok(n), None) => Ok(n),
                (Err(e), None) => Err(self.err(py, e)),
            }
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
            let bytes = str_bytes(checked_str(text)?)?;
            let policy = self.policy_or_default(py, allowed, disallowed)?;
            self.encode_detached(py, &bytes, &policy, ids)
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

    /// Incremental encoding for `Tokenizer.encode_iterable`: holds only the text after the
    /// last safe cut and starts no thread.
    #[pyclass(frozen, name = "Stream", module = "bytepair._core")]
    pub struct PyStream {
        encoder: Py<PyEncoder>,
        policy: SpecialPolicy,
        state: Mutex<Stream>,
    }

    #[pymethods]
    impl PyStream {
        /// Adds text; returns the ids that can no longer change.
        fn feed<'py>(
            &self,
            py: Python<'py>,
            text: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyList>> {
            let enc = self.encoder.get();
            let bytes = match text.cast::<PyString>() {
                Ok(s) => str_bytes(s)?.into_owned(),
                Err(_) => text.cast::<PyBytes>()?.as_bytes().to_vec(),
            };
            let mut state = self.state.lock().unwrap();
            let ids = state
                .feed(&enc.inner, &bytes, &self.policy)
                .map_err(|e| enc.err(py, e))?;
            ids_list(py, &enc.ints, &ids)
        }

        /// Encodes the rest.
        fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
            let enc = self.encoder.get();
            let mut state = self.state.lock().unwrap();
            let ids = state
                .finish(&enc.inner, &self.policy)
                .map_err(|e| enc.err(py, e))?;
            ids_list(py, &enc.ints, &ids)
        }
    }
}

// --- end encoder ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Training: pre-token counting and the merge loop (owner: train).
// ---------------------------------------------------------------------------------------

mod training {
    use crate::count::{Counter, PretokenCounts};
    use crate::encode::Encoder;
    use crate::train::Rules;
    use crate::Error;
    use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyString};
    use rayon::prelude::*;
    use rustc_hash::FxHashMap;
    use std::path::PathBuf;
    use std::sync::Mutex;

    fn to_py(e: Error, pending: Option<PyErr>) -> PyErr {
        match e {
            // The progress callback saw Ctrl-C or raised: re-raise exactly that.
            Error::Interrupted => {
                pending.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"))
            }
            Error::Io { .. } => PyOSError::new_err(e.to_string()),
            other => PyValueError::new_err(other.to_string()),
        }
    }

    /// A progress callback for the core: takes the GIL briefly (the core calls it about
    /// every 100 ms), checks for Ctrl-C, then calls `progress(done, total)` if given.
    fn reporter<'a>(
        progress: &'a Option<Py<PyAny>>,
        pending: &'a Mutex<Option<PyErr>>,
    ) -> impl FnMut(u64, u64) -> bool + 'a {
        move |done, total| {
            Python::attach(|py| {
                let result = py.check_signals().and_then(|()| match progress {
                    Some(cb) => cb.call1(py, (done, total)).map(|_| ()),
                    None => Ok(()),
                });
                match result {
                    Ok(()) => true,
                    Err(e) => {
                        *pending.lock().expect("progress lock") = Some(e);
                        false
                    }
                }
            })
        }
    }

    fn take(pending: Mutex<Option<PyErr>>) -> Option<PyErr> {
        pending.into_inner().expect("progress lock")
    }

    /// Distinct pre-tokens (bytes) and their counts (u64).
    #[pyclass(frozen, name = "PretokenCounts", module = "bytepair._core")]
    pub struct PyPretokenCounts {
        inner: Mutex<PretokenCounts>,
    }

    impl PyPretokenCounts {
        fn lock(&self) -> std::sync::MutexGuard<'_, PretokenCounts> {
            self.inner.lock().expect("PretokenCounts lock")
        }
    }

    #[pymethods]
    impl PyPretokenCounts {
        #[new]
        fn new() -> Self {
            PyPretokenCounts {
                inner: Mutex::new(PretokenCounts::new()),
            }
        }

        fn __len__(&self) -> usize {
            self.lock().len()
        }

        /// Total number of pre-tokens counted.
        fn total(&self) -> u64 {
            self.lock().total()
        }

        /// The count of `word` (0 when absent).
        fn get(&self, word: &[u8]) -> u64 {
            self.lock().get(word)
        }

        /// Adds `count` occurrences of `word`.
        #[pyo3(signature = (word, count=1))]
        fn add(&self, word: &[u8], count: u64) {
            self.lock().add(word, count);
        }

        /// `(word, count)` pairs sorted by word.
        fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
            self.lock()
                .sorted()
                .into_iter()
                .map(|(w, c)| (PyBytes::new(py, &w), c))
                .collect()
        }

        /// Adds every count of `other` into this one.
        fn merge(&self, other: &PyPretokenCounts) {
            let theirs = other.lock().clone();
            self.lock().merge(theirs);
        }

        /// A deterministic serialization (equal counts give equal bytes).
        fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
            let data = self.lock().to_bytes();
            PyBytes::new(py, &data)
        }

        #[staticmethod]
        fn from_bytes(data: &[u8]) -> PyResult<Self> {
            let wc = PretokenCounts::from_bytes(data).map_err(|e| to_py(e, None))?;
            Ok(PyPretokenCounts {
                inner: Mutex::new(wc),
            })
        }
    }

    /// Counts pre-tokens with one pattern and one set of special tokens, on `threads`
    /// threads (all cores when None). Built once: the regex and the matcher compile here.
    #[pyclass(frozen, name = "PretokenCounter", module = "bytepair._core")]
    pub struct PyCounter {
        inner: Counter,
    }

    #[pymethods]
    impl PyCounter {
        #[new]
        #[pyo3(signature = (pattern, special_tokens, threads=None, chunk_size=None))]
        fn new(
            pattern: &str,
            special_tokens: Vec<String>,
            threads: Option<usize>,
            chunk_size: Option<usize>,
        ) -> PyResult<Self> {
            let inner = Counter::new(pattern, &special_tokens, threads, chunk_size)
                .map_err(|e| to_py(e, None))?;
            Ok(PyCounter { inner })
        }

        /// Counts each file (memory-mapped) into `counts`, the GIL released.
        /// `progress(bytes_done, bytes_total)` is called about every 100 ms. `ranges`, when
        /// given, holds one `(start, end)` byte range per file: only that part is counted.
        #[pyo3(signature = (counts, paths, progress=None, ranges=None))]
        fn count_files(
            &self,
            py: Python<'_>,
            counts: &PyPretokenCounts,
            paths: Vec<PathBuf>,
            progress: Option<Py<PyAny>>,
            ranges: Option<Vec<(u64, u64)>>,
        ) -> PyResult<()> {
            let ranges: Option<Vec<std::ops::Range<u64>>> = match ranges {
                Some(r) if r.len() != paths.len() => {
                    return Err(PyValueError::new_err(format!(
                        "count_files got {} ranges for {} paths: give one (start, end) per path",
                        r.len(),
                        paths.len()
                    )))
                }
                r => r.map(|r| r.into_iter().map(|(a, b)| a..b).collect()),
            };
            self.count_into(py, counts, &progress, |c, local, report| {
                c.count_file_ranges(&paths, ranges.as_deref(), local, report)
            })
        }

        /// Counts each text (str or bytes; each its own document) into `counts`, the GIL
        /// released. A str with lone surrogates is encoded with surrogateescape, so bytes
        /// decoded that way count as the original bytes.
        #[pyo3(signature = (counts, texts, progress=None))]
        fn count_texts(
            &self,
            py: Python<'_>,
            counts: &PyPretokenCounts,
            texts: Vec<Bound<'_, PyAny>>,
            progress: Option<Py<PyAny>>,
        ) -> PyResult<()> {
            // Re-encoded strs must outlive the borrowed slices.
            let mut encoded: Vec<Bound<'_, PyBytes>> = Vec::new();
            let mut owner: Vec<usize> = Vec::with_capacity(texts.len());
            for t in &texts {
                if let Ok(s) = t.cast::<PyString>() {
                    if s.to_str().is_err() {
                        // U+DC80..U+DCFF are bytes decoded with surrogateescape; any other
                        // lone surrogate is not text and trains as U+FFFD, as encode does.
                        let b = s
                            .call_method1("encode", ("utf-8", "surrogateescape"))
                            .or_else(|_| {
                                s.call_method1("encode", ("utf-16", "surrogatepass"))?
                                    .call_method1("decode", ("utf-16", "replace"))?
                                    .call_method1("encode", ("utf-8",))
                            })?;
                        encoded.push(b.cast_into::<PyBytes>()?);
                        owner.push(encoded.len());
                        continue;
                    }
                } else if t.cast::<PyBytes>().is_err() {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "texts must be str or bytes, got {}",
                        t.get_type().name()?
                    )));
                }
                owner.push(0);
            }
            let mut slices: Vec<&[u8]> = Vec::with_capacity(texts.len());
            for (t, &o) in texts.iter().zip(&owner) {
                if o > 0 {
                    slices.push(encoded[o - 1].as_bytes());
                } else if let Ok(s) = t.cast::<PyString>() {
                    slices.push(s.to_str()?.as_bytes());
                } else {
                    slices.push(t.cast::<PyBytes>()?.as_bytes());
                }
            }
            self.count_into(py, counts, &progress, |c, local, report| {
                c.count_texts(&slices, local, report)
            })
        }
    }

    impl PyCounter {
        /// Runs `count` into a fresh table with the GIL released (progress reported as
        /// `reporter` does), then merges the table into `counts`.
        fn count_into(
            &self,
            py: Python<'_>,
            counts: &PyPretokenCounts,
            progress: &Option<Py<PyAny>>,
            count: impl FnOnce(
                    &Counter,
                    &mut PretokenCounts,
                    &mut dyn FnMut(u64, u64) -> bool,
                ) -> Result<(), Error>
                + Send,
        ) -> PyResult<()> {
            let pending = Mutex::new(None);
            let result = py.detach(|| {
                let mut local = PretokenCounts::new();
                let mut report = reporter(progress, &pending);
                count(&self.inner, &mut local, &mut report).map(|()| local)
            });
            let local = result.map_err(|e| to_py(e, take(pending)))?;
            counts.lock().merge(local);
            Ok(())
        }
    }

    /// Learns up to `num_merges` merges from `counts`, the GIL released. Stops early when no
    /// pair has count >= `min_frequency`. `progress(merges_done, num_merges)` is called
    /// about every 100 ms. `consume=True` empties `counts` instead of copying it.
    ///
    /// The rules (`crate::train::Rules`): `ties="bytes"` (CS336) or `"ids"`, with
    /// `byte_ids` the ids of the 256 bytes (default: the byte values); `reuse`,
    /// `count_tokens`, `max_token_length`. `base=(vocab, merges)` extends a tokenizer: its
    /// regular tokens `(id, bytes)` and its merges (None for a rank table); each word is
    /// first encoded with it, and with `ties="ids"` its ids break ties.
    #[pyfunction]
    #[pyo3(signature = (
        counts, num_merges, min_frequency=1, progress=None, consume=false, ties="bytes",
        byte_ids=None, reuse=true, count_tokens=false, max_token_length=None, base=None
    ))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub fn train_merges<'py>(
        py: Python<'py>,
        counts: &PyPretokenCounts,
        num_merges: usize,
        min_frequency: u64,
        progress: Option<Py<PyAny>>,
        consume: bool,
        ties: &str,
        byte_ids: Option<Vec<u64>>,
        reuse: bool,
        count_tokens: bool,
        max_token_length: Option<usize>,
        base: Option<(Vec<(u32, Vec<u8>)>, Option<Vec<(Vec<u8>, Vec<u8>)>>)>,
    ) -> PyResult<Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let by_ids = match ties {
            "bytes" => false,
            "ids" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "ties must be 'bytes' or 'ids', got {other:?}"
                )))
            }
        };
        let mut rules = Rules {
            min_frequency,
            ids: by_ids.then(|| byte_ids.unwrap_or_else(|| (0..256).collect())),
            reuse,
            count_tokens,
            max_token_length,
        };
        // The trainer reads the words once, into its own arena. With `consume` it takes the
        // count table itself and frees it once read, so no copy of it ever exists (1 GB of
        // mixed corpora, 2.45M distinct words, vocab 32,000: the copy was 140 MB).
        let words = {
            let mut table = counts.lock();
            if consume {
                std::mem::take(&mut *table)
            } else {
                table.clone()
            }
        };
        let pending = Mutex::new(None);
        let result = py.detach(|| {
            let mut report = reporter(&progress, &pending);
            let total = num_merges as u64;
            let mut report = |done: usize| report(done as u64, total);
            match base {
                None => {
                    crate::train::train_with(words.into_words(), num_merges, &rules, &mut report)
                }
                Some((vocab, merges)) => {
                    let start = Start::new(vocab, merges.as_deref())?;
                    if by_ids {
                        rules.ids = Some(start.ids.clone());
                    }
                    let encoded = start.encode(words);
                    crate::train::train_encoded(
                        start.tokens,
                        encoded,
                        num_merges,
                        &rules,
                        &mut report,
                    )
                }
            }
        });
        let (merges, _) = result.map_err(|e| to_py(e, take(pending)))?;
        Ok(merges
            .iter()
            .map(|(a, b)| (PyBytes::new(py, a), PyBytes::new(py, b)))
            .collect())
    }

    /// The start of extending a tokenizer: its regular tokens as the trainer's symbols
    /// (0..256 the bytes, then the longer tokens in id order) and an encoder of it.
    struct Start {
        /// The longer tokens, symbols 256.. .
        tokens: Vec<Vec<u8>>,
        /// The tokenizer's id of each symbol.
        ids: Vec<u64>,
        /// Symbol of each of the tokenizer's ids.
        symbol: FxHashMap<u32, u32>,
        encoder: Encoder,
        /// A rank table encodes a pre-token that is a token as that token (tiktoken).
        whole: Option<FxHashMap<Vec<u8>, u32>>,
    }

    impl Start {
        fn new(
            mut vocab: Vec<(u32, Vec<u8>)>,
            merges: Option<&[(Vec<u8>, Vec<u8>)]>,
        ) -> Result<Self, Error> {
            vocab.sort_unstable();
            let mut ids = vec![u64::MAX; 256];
            let mut symbol = FxHashMap::default();
            let mut tokens = Vec::new();
            for (id, b) in &vocab {
                if b.len() == 1 {
                    ids[b[0] as usize] = *id as u64;
                    symbol.insert(*id, b[0] as u32);
                }
            }
            if let Some(b) = ids.iter().position(|&i| i == u64::MAX) {
                return Err(Error::InvalidVocab {
                    reason: format!("the base lacks the single byte {b:#04x}"),
                });
            }
            for (id, b) in &vocab {
                if b.len() > 1 {
                    symbol.insert(*id, 256 + tokens.len() as u32);
                    ids.push(*id as u64);
                    tokens.push(b.clone());
                }
            }
            let whole = merges
                .is_none()
                .then(|| vocab.iter().map(|(i, b)| (b.clone(), *i)).collect());
            let encoder = Encoder::new(vocab, merges, Vec::new(), "gpt2")?;
            Ok(Start {
                tokens,
                ids,
                symbol,
                encoder,
                whole,
            })
        }

        /// Each word as the base encodes it, as symbols; on all cores.
        fn encode(&self, words: PretokenCounts) -> Vec<(Vec<u32>, u64)> {
            let words: Vec<_> = words.into_words().collect();
            words
                .into_par_iter()
                .map(|(w, c)| {
                    let w = w.as_ref();
                    let mut ids = Vec::with_capacity(w.len());
                    match self.whole.as_ref().and_then(|m| m.get(w)) {
                        Some(&id) => ids.push(id),
                        None => self.encoder.bpe(w, &mut ids),
                    }
                    (ids.iter().map(|i| self.symbol[i]).collect(), c)
                })
                .collect()
        }
    }

    pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_class::<PyPretokenCounts>()?;
        m.add_class::<PyCounter>()?;
        m.add_function(wrap_pyfunction!(train_merges, m)?)?;
        Ok(())
    }
}
