//! `PretokenCounter`: counting files and texts on all cores, the GIL released.

use super::counts::PyPretokenCounts;
use super::errors::to_py;
use super::progress::ProgressBridge;
use crate::count::{Counter, PretokenCounts};
use crate::{Error, Progress};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::path::PathBuf;

/// Counts pre-tokens with one pattern and one set of special tokens, on `threads`
/// threads (all cores when None). Built once: the regex and the matcher compile here.
#[pyclass(frozen, name = "PretokenCounter", module = "bytepair._core")]
pub struct PyCounter {
    pub(super) inner: Counter,
}

#[pymethods]
impl PyCounter {
    #[new]
    /// `lines`: each line is a text of its own, as HuggingFace's trainer reads a file.
    #[pyo3(signature = (pattern, special_tokens, threads=None, chunk_size=None, lines=false))]
    fn new(
        py: Python<'_>,
        pattern: &str,
        special_tokens: Vec<String>,
        threads: Option<usize>,
        chunk_size: Option<usize>,
        lines: bool,
    ) -> PyResult<Self> {
        let inner = Counter::new(pattern, &special_tokens, threads, chunk_size)
            .map_err(|e| to_py(py, e, 0))?;
        let inner = if lines { inner.line_by_line() } else { inner };
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
    /// Runs `count` into a fresh table with the GIL released (progress reported through
    /// the bridge), then merges the table into `counts`.
    fn count_into(
        &self,
        py: Python<'_>,
        counts: &PyPretokenCounts,
        progress: &Option<Py<PyAny>>,
        count: impl FnOnce(&Counter, &mut PretokenCounts, &mut Progress<'_>) -> Result<(), Error> + Send,
    ) -> PyResult<()> {
        let mut bridge = ProgressBridge::new(progress);
        let result = py.detach(|| {
            let mut local = PretokenCounts::new();
            let mut report = |done, total| bridge.report(done, total);
            count(&self.inner, &mut local, &mut report).map(|()| local)
        });
        let local = result.map_err(|e| bridge.error(py, e, 0))?;
        counts.lock().merge(local);
        Ok(())
    }
}
