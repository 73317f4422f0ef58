//! A tokenizer.json read in one pass: the document as Python objects (as `json_loads` gives
//! it) but for `model.vocab` and `model.merges`, which stay JSON text for the core's tables
//! (`ModelTables`): Qwen3.5's 33 MB file in 0.31-0.48 s, tables included, against
//! 0.51-0.61 s for the document alone as Python objects.

use super::json::PyValue;
use super::model_tables::PyModelTables;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// The document with `model.vocab` (an object) and `model.merges` (an array) replaced by
/// the tables read from them; `None` where `json_loads` would give `None` (Python's reader
/// then says what the document is, and `model_tables` reads the tables).
#[pyfunction]
pub fn read_tokenizer_json<'py>(
    py: Python<'py>,
    raw: &[u8],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut found = Found::default();
    let Ok(doc) = read(raw, Some(py), &mut found) else {
        return Ok(None);
    };
    let doc = doc.expect("objects were built");
    let tables = tables(py, &found)?;
    let model = match doc.cast::<PyDict>() {
        Ok(top) => top.get_item("model")?,
        Err(_) => None,
    };
    if let Some(model) = model.as_ref().and_then(|m| m.cast::<PyDict>().ok()) {
        match &tables {
            Some(t) => {
                model.set_item("vocab", t)?;
                if t.get().has_merges() {
                    model.set_item("merges", t)?;
                }
            }
            // The vocab is no object: the merges as Python objects too, for the reader.
            None => {
                if let Some(merges) = found.merges {
                    let mut de = serde_json::Deserializer::from_str(merges.get());
                    match PyValue(py).deserialize(&mut de) {
                        Ok(value) => model.set_item("merges", value)?,
                        Err(_) => return Ok(None),
                    }
                }
            }
        }
    }
    Ok(Some(doc))
}

/// The tables of a document that `read_tokenizer_json` left to Python's reader, read
/// alone; a `ValueError` (serde's message) where the core cannot read the document.
#[pyfunction]
pub fn model_tables<'py>(
    py: Python<'py>,
    raw: &[u8],
) -> PyResult<Option<Bound<'py, PyModelTables>>> {
    let mut found = Found::default();
    read(raw, None, &mut found)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    tables(py, &found)
}

/// `raw` read through [`Doc`], to its end: the document as Python objects when `py` is
/// given, and the tables' JSON text in `found`.
fn read<'de, 'py>(
    raw: &'de [u8],
    py: Option<Python<'py>>,
    found: &mut Found<'de>,
) -> serde_json::Result<Option<Bound<'py, PyAny>>> {
    let mut de = serde_json::Deserializer::from_slice(raw);
    let doc = Doc { py, found }.deserialize(&mut de)?;
    de.end()?;
    Ok(doc)
}

fn tables<'py>(py: Python<'py>, found: &Found<'_>) -> PyResult<Option<Bound<'py, PyModelTables>>> {
    let Some(vocab) = found.vocab.filter(|v| v.get().starts_with('{')) else {
        return Ok(None);
    };
    let merges = found
        .merges
        .filter(|m| m.get().starts_with('['))
        .map(RawValue::get);
    Bound::new(py, PyModelTables::read(py, vocab.get(), merges)).map(Some)
}

/// The JSON text of the last `model.vocab` and `model.merges` (as `json.loads`, the last
/// of a repeated key).
#[derive(Default)]
struct Found<'de> {
    vocab: Option<&'de RawValue>,
    merges: Option<&'de RawValue>,
}

/// The document: Python objects when `py` is given, else only `found` filled in.
struct Doc<'a, 'de, 'py> {
    py: Option<Python<'py>>,
    found: &'a mut Found<'de>,
}

/// Where a map is in the document: the top, `model`, or elsewhere.
#[derive(Clone, Copy, PartialEq)]
enum At {
    Top,
    Model,
}

impl<'de, 'py> DeserializeSeed<'de> for Doc<'_, 'de, 'py> {
    type Value = Option<Bound<'py, PyAny>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(Level {
            doc: self,
            at: At::Top,
        })
    }
}

/// The top of the document, or `model`: a map whose keys are looked at.
struct Level<'a, 'de, 'py> {
    doc: Doc<'a, 'de, 'py>,
    at: At,
}

impl<'de, 'py> Level<'_, 'de, 'py> {
    /// Any value below this level, built as `json_loads` builds it (or skipped).
    fn other<D: serde::Deserializer<'de>>(
        py: Option<Python<'py>>,
        d: D,
    ) -> Result<Option<Bound<'py, PyAny>>, D::Error> {
        match py {
            Some(py) => PyValue(py).deserialize(d).map(Some),
            None => IgnoredAny::deserialize(d).map(|_| None),
        }
    }
}

use serde::Deserialize;

impl<'de, 'py> Visitor<'de> for Level<'_, 'de, 'py> {
    type Value = Option<Bound<'py, PyAny>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let py = self.doc.py;
        let dict = py.map(PyDict::new);
        let found = self.doc.found;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let value = match (self.at, key.as_ref()) {
                (At::Top, "model") => {
                    *found = Found::default();
                    map.next_value_seed(ModelSeed {
                        doc: Doc {
                            py,
                            found: &mut *found,
                        },
                    })?
                }
                (At::Model, "vocab") => {
                    let raw = map.next_value::<&'de RawValue>()?;
                    found.vocab = Some(raw);
                    raw_value(py, raw, '{').map_err(serde::de::Error::custom)?
                }
                (At::Model, "merges") => {
                    let raw = map.next_value::<&'de RawValue>()?;
                    found.merges = Some(raw);
                    raw_value(py, raw, '[').map_err(serde::de::Error::custom)?
                }
                _ => map.next_value_seed(Other(py))?,
            };
            if let (Some(dict), Some(value)) = (&dict, value) {
                let py = dict.py();
                dict.set_item(PyString::new(py, &key), value)
                    .map_err(serde::de::Error::custom)?;
            }
        }
        Ok(dict.map(Bound::into_any))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let d = serde::de::value::SeqAccessDeserializer::new(seq);
        Level::other(self.doc.py, d)
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Level::other(self.doc.py, serde::de::value::BoolDeserializer::new(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Level::other(self.doc.py, serde::de::value::I64Deserializer::new(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Level::other(self.doc.py, serde::de::value::U64Deserializer::new(v))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom("not an integer of 64 bits"))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Level::other(self.doc.py, serde::de::value::StrDeserializer::new(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Level::other(self.doc.py, serde::de::value::UnitDeserializer::new())
    }
}

/// `model`'s value: a map whose `vocab` and `merges` are kept as text.
struct ModelSeed<'a, 'de, 'py> {
    doc: Doc<'a, 'de, 'py>,
}

impl<'de, 'py> DeserializeSeed<'de> for ModelSeed<'_, 'de, 'py> {
    type Value = Option<Bound<'py, PyAny>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(Level {
            doc: self.doc,
            at: At::Model,
        })
    }
}

/// A value below the levels looked at.
struct Other<'py>(Option<Python<'py>>);

impl<'de, 'py> DeserializeSeed<'de> for Other<'py> {
    type Value = Option<Bound<'py, PyAny>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Level::other(self.0, d)
    }
}

/// A kept value as Python objects where it is not a table (`model.vocab` not an object,
/// `model.merges` not an array: `table` is `{` or `[`), for the reader's type error; a
/// placeholder otherwise.
fn raw_value<'py>(
    py: Option<Python<'py>>,
    raw: &RawValue,
    table: char,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(py) = py else { return Ok(None) };
    let text = raw.get();
    if text.starts_with(table) {
        return Ok(Some(py.None().into_bound(py)));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    PyValue(py)
        .deserialize(&mut de)
        .map(Some)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}
