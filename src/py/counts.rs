//! `PretokenCounts`: the counted pre-tokens, shared between counting and training.

use super::errors::to_py;
use crate::count::PretokenCounts;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Mutex;

/// Distinct pre-tokens (bytes) and their counts (u64).
#[pyclass(frozen, name = "PretokenCounts", module = "bytepair._core")]
pub struct PyPretokenCounts {
    inner: Mutex<PretokenCounts>,
}

impl PyPretokenCounts {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, PretokenCounts> {
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

    /// The count of the pre-token `word` (0 when absent).
    fn get(&self, word: &[u8]) -> u64 {
        self.lock().get(word)
    }

    /// Adds `count` occurrences of the pre-token `word`.
    #[pyo3(signature = (word, count=1))]
    fn add(&self, word: &[u8], count: u64) {
        self.lock().add(word, count);
    }

    /// `(pre-token, count)` pairs sorted by pre-token.
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
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let wc = PretokenCounts::from_bytes(data).map_err(|e| to_py(py, e, 0))?;
        Ok(PyPretokenCounts {
            inner: Mutex::new(wc),
        })
    }
}
