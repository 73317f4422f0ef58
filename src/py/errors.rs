//! The one map from core errors to bytepair's typed Python exceptions
//! (`python/bytepair/errors.py`): each subclasses the built-in a caller would catch.

use crate::Error;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;

/// `bytepair.errors.<class>(*args)`, as an exception to raise.
pub(super) fn typed<'py>(
    py: Python<'py>,
    class: &str,
    args: impl pyo3::call::PyCallArgs<'py>,
) -> PyErr {
    let made = py
        .import("bytepair.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// The exception for a core error. `vocab_size` is the encoder's, for `UnknownIdError`'s
/// message (0 where no id is decoded). An unreadable input is a `CorpusError`, an `OSError`.
pub(super) fn to_py(py: Python<'_>, e: Error, vocab_size: usize) -> PyErr {
    match &e {
        Error::DisallowedSpecial { token } => {
            typed(py, "DisallowedSpecialError", (token.as_str(),))
        }
        Error::UnknownId { id } => typed(py, "UnknownIdError", (*id, vocab_size)),
        Error::InvalidCounts { .. } => PyValueError::new_err(e.to_string()),
        Error::InvalidVocab { .. } => typed(py, "VocabError", (e.to_string(),)),
        Error::InvalidPattern { .. } => typed(py, "PatternError", (e.to_string(),)),
        Error::Io { .. } => typed(py, "CorpusError", (e.to_string(),)),
        Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
    }
}
