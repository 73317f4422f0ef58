//! Python text as the core's bytes: batches of str, a str's UTF-8, and the TypeError for
//! anything else.

use crate::utf8;
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
    Ok(match utf8_or_write(s, &mut out)? {
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
    BYTES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            let result = match utf8_or_write(s, &mut buf) {
                Ok(Some(ascii)) => f(ascii),
                Ok(None) => f(&buf),
                Err(e) => Err(e),
            };
            if buf.capacity() > 1 << 18 {
                *buf = Vec::new();
            }
            result
        }
        Err(_) => {
            let mut buf = Vec::new();
            match utf8_or_write(s, &mut buf)? {
                Some(ascii) => f(ascii),
                None => f(&buf),
            }
        }
    })
}

/// An ASCII str's own characters, which are its UTF-8; any other str's UTF-8 is written to
/// `out` from its code units (the core's `utf8`), and a str with a surrogate takes Python's round
/// trip (see [`str_bytes`]). Python's own UTF-8 (`PyUnicode_AsUTF8AndSize`) is not asked
/// for: it would be made and then kept with the str for the str's life.
fn utf8_or_write<'a>(s: &'a Bound<'_, PyString>, out: &mut Vec<u8>) -> PyResult<Option<&'a [u8]>> {
    // SAFETY: `data` reads the str's code units in place (readying a legacy str first);
    // the str is immutable and outlives the borrow.
    let written = match unsafe { s.data() }? {
        PyStringData::Ucs1(units) if units.is_ascii() => return Ok(Some(units)),
        PyStringData::Ucs1(units) => {
            utf8::latin1(units, out);
            Ok(())
        }
        PyStringData::Ucs2(units) => utf8::ucs2(units, out),
        PyStringData::Ucs4(units) => utf8::ucs4(units, out),
    };
    if written.is_err() {
        let fixed = s
            .call_method1("encode", ("utf-16", "surrogatepass"))?
            .call_method1("decode", ("utf-16", "replace"))?;
        out.extend_from_slice(fixed.cast::<PyString>()?.to_str()?.as_bytes());
    }
    Ok(None)
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
