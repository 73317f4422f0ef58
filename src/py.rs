//! The only PyO3 file: frozen wrappers over the core, the GIL released for real work, and
//! core errors mapped to Python exceptions.

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
    Ok(())
}
