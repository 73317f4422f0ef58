//! Pre-tokenization, for tests and inspection: training and encoding split inside the core.

use super::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The pre-tokens `pattern` (a name such as "gpt2", or a regex) cuts `text` into, as bytes. Invalid
/// UTF-8 bytes are kept, as punctuation. For tests and inspection: training and encoding split
/// inside the core.
#[pyfunction]
pub(super) fn split_pieces<'py>(
    py: Python<'py>,
    pattern: &str,
    text: &[u8],
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let splitter = crate::split::Splitter::new(pattern).map_err(|e| to_py(py, e, 0))?;
    let ends = py.detach(|| {
        let mut ends = Vec::new();
        let mut end = 0;
        splitter.for_each(text, |pretoken| {
            end += pretoken.len();
            ends.push(end);
        });
        ends
    });
    let mut start = 0;
    Ok(ends
        .into_iter()
        .map(|end| {
            let pretoken = PyBytes::new(py, &text[start..end]);
            start = end;
            pretoken
        })
        .collect())
}
