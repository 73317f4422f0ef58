//! The only PyO3 file: frozen wrappers over the core, the GIL released for real work, and
//! core errors mapped to Python exceptions.

use pyo3::prelude::*;

/// The Rust core's version, to check that the extension and the package match.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    training::register(m)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Training: pre-token counting and the merge loop (owner: train).
// ---------------------------------------------------------------------------------------

mod training {
    use crate::count::{Counter, WordCounts};
    use crate::Error;
    use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyString};
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
    #[pyclass(frozen, name = "WordCounts", module = "bytepair._core")]
    pub struct PyWordCounts {
        inner: Mutex<WordCounts>,
    }

    impl PyWordCounts {
        fn lock(&self) -> std::sync::MutexGuard<'_, WordCounts> {
            self.inner.lock().expect("WordCounts lock")
        }
    }

    #[pymethods]
    impl PyWordCounts {
        #[new]
        fn new() -> Self {
            PyWordCounts {
                inner: Mutex::new(WordCounts::new()),
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
                .map(|(w, c)| (PyBytes::new(py, w), c))
                .collect()
        }

        /// Adds every count of `other` into this one.
        fn merge(&self, other: &PyWordCounts) {
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
            let wc = WordCounts::from_bytes(data).map_err(|e| to_py(e, None))?;
            Ok(PyWordCounts {
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
        /// `progress(bytes_done, bytes_total)` is called about every 100 ms.
        #[pyo3(signature = (counts, paths, progress=None))]
        fn count_files(
            &self,
            py: Python<'_>,
            counts: &PyWordCounts,
            paths: Vec<PathBuf>,
            progress: Option<Py<PyAny>>,
        ) -> PyResult<()> {
            let pending = Mutex::new(None);
            let result = py.detach(|| {
                let mut local = WordCounts::new();
                let mut report = reporter(&progress, &pending);
                self.inner
                    .count_files(&paths, &mut local, &mut report)
                    .map(|()| local)
            });
            let local = result.map_err(|e| to_py(e, take(pending)))?;
            counts.lock().merge(local);
            Ok(())
        }

        /// Counts each text (str or bytes; each its own document) into `counts`, the GIL
        /// released. A str with lone surrogates is encoded with surrogateescape, so bytes
        /// decoded that way count as the original bytes.
        #[pyo3(signature = (counts, texts, progress=None))]
        fn count_texts(
            &self,
            py: Python<'_>,
            counts: &PyWordCounts,
            texts: Vec<Bound<'_, PyAny>>,
            progress: Option<Py<PyAny>>,
        ) -> PyResult<()> {
            // Re-encoded strs must outlive the borrowed slices.
            let mut encoded: Vec<Bound<'_, PyBytes>> = Vec::new();
            let mut owner: Vec<usize> = Vec::with_capacity(texts.len());
            for t in &texts {
                if let Ok(s) = t.cast::<PyString>() {
                    if s.to_str().is_err() {
                        let b = s.call_method1("encode", ("utf-8", "surrogateescape"))?;
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
            let pending = Mutex::new(None);
            let result = py.detach(|| {
                let mut local = WordCounts::new();
                let mut report = reporter(&progress, &pending);
                self.inner
                    .count_texts(&slices, &mut local, &mut report)
                    .map(|()| local)
            });
            let local = result.map_err(|e| to_py(e, take(pending)))?;
            counts.lock().merge(local);
            Ok(())
        }
    }

    /// Learns up to `num_merges` merges from `counts`, the GIL released. Stops early when no
    /// pair has count >= `min_frequency`. `progress(merges_done, num_merges)` is called
    /// about every 100 ms.
    #[pyfunction]
    #[pyo3(signature = (counts, num_merges, min_frequency=1, progress=None))]
    pub fn train_merges<'py>(
        py: Python<'py>,
        counts: &PyWordCounts,
        num_merges: usize,
        min_frequency: u64,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let words: Vec<(Box<[u8]>, u64)> =
            counts.lock().iter().map(|(w, c)| (w.into(), c)).collect();
        let pending = Mutex::new(None);
        let result = py.detach(|| {
            let mut report = reporter(&progress, &pending);
            let total = num_merges as u64;
            crate::train::train(&words, num_merges, min_frequency, &mut |done| {
                report(done as u64, total)
            })
        });
        let (merges, _) = result.map_err(|e| to_py(e, take(pending)))?;
        Ok(merges
            .iter()
            .map(|(a, b)| (PyBytes::new(py, a), PyBytes::new(py, b)))
            .collect())
    }

    pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_class::<PyWordCounts>()?;
        m.add_class::<PyCounter>()?;
        m.add_function(wrap_pyfunction!(train_merges, m)?)?;
        Ok(())
    }
}
