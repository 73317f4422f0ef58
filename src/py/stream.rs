//! `Stream`: incremental encoding for `Tokenizer.encode_iterable`.

use super::encoder::PyEncoder;
use super::ids::ids_list;
use super::text::str_bytes;
use crate::encode::SpecialPolicy;
use crate::encode::Stream;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use std::sync::Mutex;

/// Incremental encoding for `Tokenizer.encode_iterable`: holds only the text after the
/// last safe cut and starts no thread.
#[pyclass(frozen, name = "Stream", module = "bytepair._core")]
pub struct PyStream {
    pub(super) encoder: Py<PyEncoder>,
    pub(super) policy: SpecialPolicy,
    pub(super) state: Mutex<Stream>,
}

#[pymethods]
impl PyStream {
    /// Adds text; returns the ids that can no longer change.
    fn feed<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
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
