//! A JSON document straight to Python objects, for `bytepair.formats.jsonfile`: Qwen3.5's
//! 33 MB tokenizer.json takes 0.8 s through Python's `json`. It gives what `json.loads`
//! gives (a key given twice keeps its first place and its last value), or `None` where
//! the two could differ: a number that is not an integer of 64 bits, or anything
//! `serde_json` refuses (Python's parser then says what is wrong, or reads what it
//! accepts beyond the standard, such as NaN and lone surrogates).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The document of `raw`, or `None` (see the module).
#[pyfunction]
pub fn json_loads<'py>(py: Python<'py>, raw: &[u8]) -> Option<Bound<'py, PyAny>> {
    let mut de = serde_json::Deserializer::from_slice(raw);
    let value = PyValue(py).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Builds the Python object of one JSON value.
#[derive(Clone, Copy)]
pub(super) struct PyValue<'py>(pub(super) Python<'py>);

impl<'de, 'py> DeserializeSeed<'de> for PyValue<'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn py_err<E: serde::de::Error>(e: PyErr) -> E {
    E::custom(e)
}

impl<'de, 'py> Visitor<'de> for PyValue<'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        let Ok(b) = v.into_pyobject(self.0);
        Ok(b.to_owned().into_any())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        let Ok(n) = v.into_pyobject(self.0);
        Ok(n.into_any())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        let Ok(n) = v.into_pyobject(self.0);
        Ok(n.into_any())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        // A fraction, an exponent or an integer past 64 bits: Python's parser reads those.
        Err(E::custom("not an integer of 64 bits"))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0, v).into_any())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.None().into_bound(self.0))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(PyList::new(self.0, items).map_err(py_err)?.into_any())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.0);
        while let Some(key) = map.next_key_seed(self)? {
            let value = map.next_value_seed(self)?;
            dict.set_item(key, value).map_err(py_err)?;
        }
        Ok(dict.into_any())
    }
}
