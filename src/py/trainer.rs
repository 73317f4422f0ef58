//! `train_merges`: the merge loop over counted pre-tokens, the GIL released.

use super::counts::PyPretokenCounts;
use super::encoder::PyEncoder;
use super::progress::ProgressBridge;
use crate::train::{Base, Rules};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Learns up to `num_merges` merges from `counts`, the GIL released. Stops early when no
/// pair has count >= `min_frequency`. `progress(merges_done, num_merges)` is called
/// about every 100 ms. `consume=True` empties `counts` instead of copying it.
///
/// The rules (`crate::train::Rules`): `ties="bytes"` (CS336) or `"ids"`, with
/// `byte_ids` the ids of the 256 bytes (default: the byte values); `reuse`,
/// `count_tokens`, `max_token_length`. `base=(vocab, merges)` extends a tokenizer: its
/// regular tokens `(id, bytes)` and its merges (None for a rank table); each pre-token is
/// first encoded with it, and with `ties="ids"` its ids break ties. `base_encoder` is that
/// tokenizer's own encoder, if it has one, so it need not be built again.
#[pyfunction]
#[pyo3(signature = (
    counts, num_merges, min_frequency=1, progress=None, consume=false, ties="bytes",
    byte_ids=None, reuse=true, count_tokens=false, max_token_length=None, base=None,
    base_encoder=None
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
    base_encoder: Option<PyRef<'py, PyEncoder>>,
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
    let rules = Rules {
        min_frequency,
        ids: by_ids.then(|| byte_ids.unwrap_or_else(|| (0..256).collect())),
        reuse,
        count_tokens,
        max_token_length,
    };
    // The trainer reads the pre-tokens once, into its own arena. With `consume` it takes
    // the count table itself and frees it once read, so no copy of it ever exists (1 GB of
    // mixed corpora, 2.45M distinct pre-tokens, vocab 32,000: a copy would be 140 MB).
    let pretokens = {
        let mut table = counts.lock();
        if consume {
            std::mem::take(&mut *table)
        } else {
            table.clone()
        }
    };
    let encoder = base_encoder.map(|e| e.inner.clone());
    let mut bridge = ProgressBridge::new(&progress);
    let result = py.detach(|| {
        let mut report = |done, total| bridge.report(done, total);
        match base {
            None => crate::train::train_with(
                pretokens.into_pretokens(),
                num_merges,
                &rules,
                &mut report,
            ),
            Some((vocab, merges)) => {
                let base = match encoder {
                    Some(e) => Base::with_encoder(vocab, merges.as_deref(), e)?,
                    None => Base::new(vocab, merges.as_deref())?,
                };
                crate::train::train_from_base(base, pretokens, num_merges, &rules, &mut report)
            }
        }
    });
    let (merges, _) = result.map_err(|e| bridge.error(py, e, 0))?;
    Ok(merges
        .iter()
        .map(|(a, b)| (PyBytes::new(py, a), PyBytes::new(py, b)))
        .collect())
}
