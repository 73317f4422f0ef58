//! Python text as the core's bytes: batches of str, a str's UTF-8, and the TypeError for
//! anything else.

use crate::utf8::Units;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyStringData};
use std::borrow::Cow;
use std::cell::RefCell;

/// The items of an iterable of str (a batch's texts); anything else is a TypeError.
pub(super) fn str_list<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    texts
        .try_iter()?
        .map(|t| Ok(t?.cast_into::<PyString>()?))
        .collect()
}

/// The UTF-8 bytes of a str. Lone surrogates become U+FFFD (tiktoken's rule: a round trip
/// through UTF-16, which also joins a high and a low surrogate into one character).
pub(super) fn str_bytes<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    let mut out = Vec::new();
    Ok(match str_units(s)?.utf8(&mut out) {
        Some(ascii) => Cow::Borrowed(ascii),
        None => Cow::Owned(out),
    })
}

/// Runs `f` on the UTF-8 bytes of a str (as [`str_bytes`]), written if need be into this
/// thread's buffer, reused from call to call as the ids' buffer is (`ids.rs`) and given
/// back past 256 KB; a fresh one if it is in use (a `__del__` run by the GC may encode).
pub(super) fn with_str_bytes<R>(
    s: &Bound<'_, PyString>,
    f: impl FnOnce(&[u8]) -> PyResult<R>,
) -> PyResult<R> {
    thread_local! {
        static BYTES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let units = str_units(s)?;
    BYTES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let result = f(units.utf8_in(&mut buf));
            if buf.capacity() > 1 << 18 {
                *buf = Vec::new();
            }
            result
        }
        Err(_) => f(units.utf8_in(&mut Vec::new())),
    })
}

/// A str's code units, read in place: an ASCII str's are its UTF-8, any other str's UTF-8
/// is written from them by the core (`utf8::Units`), on whichever thread encodes it.
/// Python's own UTF-8 (`PyUnicode_AsUTF8AndSize`) is not asked for: it would be made and
/// then kept with the str for the str's life.
pub(super) fn str_units<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Units<'a>> {
    // SAFETY: `data` reads the str's code units in place (readying a legacy str first);
    // the str is immutable and outlives the borrow.
    Ok(match unsafe { s.data() }? {
        PyStringData::Ucs1(units) => Units::Latin1(units),
        PyStringData::Ucs2(units) => Units::Ucs2(units),
        PyStringData::Ucs4(units) => Units::Ucs4(units),
    })
}

/// `text` as a str, or the TypeError `Tokenizer.encode` documents (a Python-side check
/// was a function call per `encode`: 60 ns of its 170 ns overhead).
pub(super) fn checked_str<'a, 'py>(
    text: &'a Bound<'py, PyAny>,
) -> PyResult<&'a Bound<'py, PyString>> {
    text.cast::<PyString>().map_err(|_| {
        let hint = if text.is_instance_of::<PyBytes>() || text.is_instance_of::<PyByteArray>() {
            "; for bytes, call encode_bytes"
        } else {
            ""
        };
        let name = text
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        PyTypeError::new_err(format!("expected a str to encode, got {name}{hint}"))
    })
}
