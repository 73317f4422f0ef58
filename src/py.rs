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
    Ok(())
}
