//! The PyO3 side, the extension `bytepair._core`: frozen wrappers over the core, one file per
//! wrapped type, the GIL released for real work, core errors mapped to Python exceptions in
//! one place (`errors.rs`) and progress reported through one bridge (`progress.rs`).

mod counter;
mod counts;
mod encoder;
mod encoder_ahead;
mod errors;
mod ids;
mod ints;
mod json;
mod model_tables;
mod model_tokens;
mod progress;
mod safe_cut;
mod split;
mod stream;
mod text;
mod tokenizer_json;
mod trainer;

use pyo3::prelude::*;

/// The Rust core's version, to check that the extension and the package match.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Gives the heap's free memory back to the system: glibc keeps what a tokenizer's
/// construction freed (its temporary tables) for later allocations that may never come.
#[pyfunction]
fn trim_heap(py: Python<'_>) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it takes no pointers.
    py.detach(|| unsafe {
        libc::malloc_trim(0);
    });
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = py;
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(trim_heap, m)?)?;
    m.add_function(wrap_pyfunction!(split::split_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(safe_cut::safe_cuts, m)?)?;
    m.add_function(wrap_pyfunction!(safe_cut::special_cuts, m)?)?;
    m.add_class::<encoder::PyEncoder>()?;
    m.add_class::<stream::PyStream>()?;
    m.add_class::<counts::PyPretokenCounts>()?;
    m.add_class::<counter::PyCounter>()?;
    m.add_function(wrap_pyfunction!(trainer::train_merges, m)?)?;
    m.add_function(wrap_pyfunction!(json::json_loads, m)?)?;
    m.add_function(wrap_pyfunction!(model_tokens::byte_level_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(model_tokens::merges_in_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(model_tokens::vocab_check, m)?)?;
    m.add_function(wrap_pyfunction!(model_tokens::rank_file, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer_json::read_tokenizer_json, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer_json::model_tables, m)?)?;
    m.add_class::<model_tables::PyModelTables>()?;
    m.add_class::<encoder_ahead::PyEncoderAhead>()?;
    Ok(())
}
