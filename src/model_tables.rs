//! The tables of a byte-level BPE model as HuggingFace's tokenizer.json stores them:
//! `model.vocab` (token text to id) and `model.merges` (`["a", "b"]` or `"a b"`), read from
//! the JSON text and spelt back from GPT-2's byte alphabet to bytes. Qwen3.5's 33 MB file
//! (248,000 tokens and merges) reads with these tables in 0.31-0.48 s, where its document
//! as Python objects, then the checks of their ids, texts and merges took 1.0-1.1 s.
//!
//! A table that breaks a rule is kept as an error naming the JSON path of the first entry
//! that breaks it, for the reader to report where the file's other checks come in turn.

use crate::byte_alphabet;
use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::hash::BuildHasher;

/// A merge as bytes, left then right.
pub type Merge = (Vec<u8>, Vec<u8>);

/// `model.vocab`: each key's text and id in the order Python's `json.loads` gives (a key
/// given twice keeps its first place and its last id), and the bytes each text spells.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    pub entries: Vec<(String, u64)>,
    /// The bytes of `entries[i]`'s text, `None` where a character is not in the alphabet.
    pub bytes: Vec<Option<Vec<u8>>>,
    /// Each key's place in `entries`, hashed by its text: a map of its own copies of the
    /// keys made DeepSeek's 128,000 allocations twice.
    index: HashTable<usize>,
}

impl PartialEq for Vocab {
    fn eq(&self, other: &Vocab) -> bool {
        self.entries == other.entries && self.bytes == other.bytes
    }
}

impl Eq for Vocab {}

/// The hash of a key's text in [`Vocab`]'s index.
fn text_hash(text: &str) -> u64 {
    FxBuildHasher.hash_one(text)
}

/// What breaks a rule of the tables, with the JSON text of the value where it is the
/// value that is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableError {
    /// `model.vocab[text]` is not an integer >= 0.
    NotAnId { text: String, value: String },
    /// `model.vocab[text]` has the id of a key before it.
    ReusedId { text: String, id: u64 },
    /// `model.merges[index]` is neither `"a b"` nor a list of texts.
    NotAMerge { index: usize, value: String },
    /// `model.merges[index]` is not two non-empty texts.
    NotTwoTokens { index: usize, value: String },
    /// A text of `model.merges[index]` has a character outside GPT-2's alphabet.
    NotByteLevel { index: usize, text: String },
    /// `model.merges[index]` needs `part` (a side or the join), which no token spells.
    NotInVocab {
        index: usize,
        merge: Merge,
        part: Vec<u8>,
    },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::NotAnId { text, value } => {
                write!(
                    f,
                    "model.vocab[{text:?}] is {value}; expected an integer >= 0"
                )
            }
            TableError::ReusedId { text, id } => {
                write!(
                    f,
                    "model.vocab[{text:?}] reuses id {id}; ids must be unique"
                )
            }
            TableError::NotAMerge { index, value } => {
                write!(
                    f,
                    "model.merges[{index}] is {value}; expected \"a b\" or [\"a\", \"b\"]"
                )
            }
            TableError::NotTwoTokens { index, value } => {
                write!(f, "model.merges[{index}] is {value}; expected two tokens")
            }
            TableError::NotByteLevel { index, text } => write!(
                f,
                "model.merges[{index}]: token {text:?} is not spelt in GPT-2's byte alphabet"
            ),
            TableError::NotInVocab { index, part, .. } => write!(
                f,
                "model.merges[{index}] needs {:?}, which is not in the vocab",
                String::from_utf8_lossy(part)
            ),
        }
    }
}

impl std::error::Error for TableError {}

impl Vocab {
    /// The vocab of a JSON object's text (`model.vocab`, or a whole `vocab.json`).
    pub fn read(json: &str) -> Result<Vocab, TableError> {
        let raw: Vec<(String, Id)> = serde_json::from_str::<Entries>(json)
            .expect("the reader hands over a JSON object it has parsed")
            .0;
        let mut entries: Vec<(String, u64)> = Vec::with_capacity(raw.len());
        let mut values: Vec<Id> = Vec::with_capacity(raw.len());
        let mut index: HashTable<usize> = HashTable::with_capacity(raw.len());
        for (text, id) in raw {
            let hash = text_hash(&text);
            let place = index.find(hash, |&i| entries[i].0 == text);
            match place {
                Some(&i) => values[i] = id,
                None => {
                    index.insert_unique(hash, entries.len(), |&i| text_hash(&entries[i].0));
                    entries.push((text, 0));
                    values.push(id);
                }
            }
        }
        let mut seen = FxHashSet::default();
        seen.reserve(entries.len());
        for ((text, slot), id) in entries.iter_mut().zip(&values) {
            let Id::Id(id) = *id else {
                return Err(TableError::NotAnId {
                    text: text.clone(),
                    value: last_value_of(json, text),
                });
            };
            if !seen.insert(id) {
                return Err(TableError::ReusedId {
                    text: text.clone(),
                    id,
                });
            }
            *slot = id;
        }
        let bytes = entries.iter().map(|(text, _)| spelt(text)).collect();
        Ok(Vocab {
            entries,
            bytes,
            index,
        })
    }

    /// The id of the key `text`.
    pub fn id_of(&self, text: &str) -> Option<u64> {
        self.index
            .find(text_hash(text), |&i| self.entries[i].0 == text)
            .map(|&i| self.entries[i].1)
    }
}

/// The merges of a JSON array's text, or the first of the wrong form or spelling.
pub fn read_merges(json: &str) -> Result<Vec<Merge>, TableError> {
    let items = serde_json::from_str::<Items>(json)
        .expect("the reader hands over a JSON array it has parsed")
        .0;
    let mut merges = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let (a, b) = match item {
            Item::Pair(a, b) if !a.is_empty() && !b.is_empty() => (a, b),
            Item::Pair(..) | Item::NotTwo => {
                let value = item_text(json, index);
                return Err(TableError::NotTwoTokens { index, value });
            }
            Item::NotAMerge => {
                let value = item_text(json, index);
                return Err(TableError::NotAMerge { index, value });
            }
        };
        let mut sides = [a, b].into_iter().map(|text| match spelt(&text) {
            Some(bytes) => Ok(bytes),
            None => Err(TableError::NotByteLevel {
                index,
                text: text.into_owned(),
            }),
        });
        let (a, b) = (sides.next().unwrap()?, sides.next().unwrap()?);
        merges.push((a, b));
    }
    Ok(merges)
}

/// The vocab entries (indices into `vocab.entries`) of each merge's left, right and join,
/// or the first merge that needs bytes (its left, its right or their join) that no token
/// has.
pub fn merge_entries(
    merges: &[Merge],
    vocab: &Vocab,
) -> Result<Vec<(usize, usize, usize)>, TableError> {
    let mut tokens: FxHashMap<&[u8], usize> = FxHashMap::default();
    tokens.reserve(vocab.bytes.len());
    for (i, b) in vocab.bytes.iter().enumerate() {
        if let Some(b) = b {
            tokens.entry(b.as_slice()).or_insert(i);
        }
    }
    // Looked up on all cores, then the first merge with a part missing looked at again:
    // the look-ups were most of the 22 ms DeepSeek's 128,000 merges took on one.
    let found: Vec<Option<(usize, usize, usize)>> = merges
        .par_iter()
        .map_init(Vec::new, |joined, (a, b)| {
            joined.clear();
            joined.extend_from_slice(a);
            joined.extend_from_slice(b);
            let at = |part: &[u8]| tokens.get(part).copied();
            Some((at(a)?, at(b)?, at(joined)?))
        })
        .collect();
    if let Some(index) = found.iter().position(Option::is_none) {
        let (a, b) = &merges[index];
        let joined = [a.as_slice(), b.as_slice()].concat();
        let part = [a.as_slice(), b.as_slice(), joined.as_slice()]
            .into_iter()
            .find(|part| !tokens.contains_key(part))
            .expect("a part of the merge is missing");
        return Err(TableError::NotInVocab {
            index,
            merge: (a.clone(), b.clone()),
            part: part.to_vec(),
        });
    }
    Ok(found.into_iter().flatten().collect())
}

/// The bytes `text` spells in GPT-2's alphabet.
fn spelt(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    byte_alphabet::decode(text, &mut out).then_some(out)
}

/// The JSON text of the last value of key `text` in the object `json` (for an error).
fn last_value_of(json: &str, text: &str) -> String {
    let all: Vec<(String, &RawValue)> = serde_json::from_str::<RawEntries>(json)
        .map(|e| e.0)
        .unwrap_or_default();
    all.into_iter()
        .rev()
        .find(|(t, _)| t == text)
        .map_or_else(String::new, |(_, v)| v.get().to_owned())
}

/// The JSON text of item `index` of the array `json` (for an error).
fn item_text(json: &str, index: usize) -> String {
    serde_json::from_str::<Vec<&RawValue>>(json)
        .ok()
        .and_then(|all| all.get(index).map(|v| v.get().to_owned()))
        .unwrap_or_default()
}

/// A vocab value: an id, or anything else (the error reads its text again).
#[derive(Clone, Copy)]
enum Id {
    Id(u64),
    Other,
}

/// One merge as read: its two texts, a list of another length, or not texts at all.
enum Item<'a> {
    Pair(Cow<'a, str>, Cow<'a, str>),
    NotTwo,
    NotAMerge,
}

struct Entries(Vec<(String, Id)>);
struct RawEntries<'a>(Vec<(String, &'a RawValue)>);
struct Items<'a>(Vec<Item<'a>>);

/// Any JSON value, kept as `Some` text when it is a string.
struct MaybeText<'a>(Option<Cow<'a, str>>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(1 << 16));
                while let Some(text) = map.next_key::<String>()? {
                    let id = map.next_value::<MaybeId>()?.0;
                    out.push((text, id));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> serde::Deserialize<'de> for RawEntries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawEntries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(text) = map.next_key::<String>()? {
                    out.push((text, map.next_value::<&RawValue>()?));
                }
                Ok(RawEntries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A vocab value read as [`Id`].
struct MaybeId(Id);

impl<'de> serde::Deserialize<'de> for MaybeId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyValue(|v: Option<u64>| {
            MaybeId(v.map_or(Id::Other, Id::Id))
        }))
    }
}

impl<'de> serde::Deserialize<'de> for Items<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Items<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(1 << 16));
                while let Some(item) = seq.next_element_seed(ItemSeed)? {
                    out.push(item);
                }
                Ok(Items(out))
            }
        }
        d.deserialize_seq(V)
    }
}

struct ItemSeed;

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Item<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Item<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed {
    type Value = Item<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Item<'de>, E> {
        Ok(line(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Item<'de>, E> {
        Ok(line(Cow::Owned(v.to_owned())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item<'de>, A::Error> {
        let mut texts = Vec::with_capacity(2);
        let mut all_texts = true;
        while let Some(MaybeText(t)) = seq.next_element()? {
            match t {
                Some(t) if all_texts => texts.push(t),
                _ => all_texts = false,
            }
        }
        Ok(match (all_texts, texts.len()) {
            (false, _) => Item::NotAMerge,
            (true, 2) => {
                let b = texts.pop().unwrap();
                Item::Pair(texts.pop().unwrap(), b)
            }
            _ => Item::NotTwo,
        })
    }
    fn visit_bool<E>(self, _: bool) -> Result<Item<'de>, E> {
        Ok(Item::NotAMerge)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Item<'de>, E> {
        Ok(Item::NotAMerge)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Item<'de>, E> {
        Ok(Item::NotAMerge)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Item<'de>, E> {
        Ok(Item::NotAMerge)
    }
    fn visit_unit<E>(self) -> Result<Item<'de>, E> {
        Ok(Item::NotAMerge)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Item::NotAMerge)
    }
}

/// `"a b"`: split at its one space, as Python's `str.split(" ")` into exactly two.
fn line(text: Cow<'_, str>) -> Item<'_> {
    let halves = |t: &str| {
        t.split_once(' ')
            .filter(|(_, b)| !b.contains(' '))
            .map(|(a, b)| (a.len(), b.len()))
    };
    let Some((la, _)) = halves(&text) else {
        return Item::NotTwo;
    };
    match text {
        Cow::Borrowed(t) => Item::Pair(Cow::Borrowed(&t[..la]), Cow::Borrowed(&t[la + 1..])),
        Cow::Owned(t) => Item::Pair(
            Cow::Owned(t[..la].to_owned()),
            Cow::Owned(t[la + 1..].to_owned()),
        ),
    }
}

impl<'de> serde::Deserialize<'de> for MaybeText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A visitor of any JSON value that gives `make(Some(n))` for an integer `n >= 0` and
/// `make(None)` for anything else.
struct AnyValue<F>(F);

impl<'de, T, F: FnOnce(Option<u64>) -> T> Visitor<'de> for AnyValue<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok((self.0)(Some(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok((self.0)(u64::try_from(v).ok()))
    }
    fn visit_bool<E>(self, _: bool) -> Result<T, E> {
        Ok((self.0)(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok((self.0)(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<T, E> {
        Ok((self.0)(None))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok((self.0)(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok((self.0)(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok((self.0)(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(json: &str) -> Vocab {
        Vocab::read(json).unwrap()
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_id() {
        let v = vocab(r#"{"b": 1, "a": 2, "b": 3}"#);
        assert_eq!(v.entries, [("b".to_owned(), 3), ("a".to_owned(), 2)]);
        assert_eq!((v.id_of("a"), v.id_of("c")), (Some(2), None));
    }

    #[test]
    fn texts_are_spelt_back_to_bytes() {
        let v = vocab(r#"{"Ġa": 0, "中": 1}"#);
        assert_eq!(v.bytes, [Some(b" a".to_vec()), None]);
    }

    #[test]
    fn a_bad_id_is_named_with_its_text() {
        for (json, want) in [
            (
                r#"{"a": 0, "b": "1"}"#,
                TableError::NotAnId {
                    text: "b".into(),
                    value: r#""1""#.into(),
                },
            ),
            (
                r#"{"a": -1}"#,
                TableError::NotAnId {
                    text: "a".into(),
                    value: "-1".into(),
                },
            ),
            (
                r#"{"a": 0, "b": 0}"#,
                TableError::ReusedId {
                    text: "b".into(),
                    id: 0,
                },
            ),
        ] {
            assert_eq!(Vocab::read(json), Err(want));
        }
    }

    #[test]
    fn merges_read_in_both_forms_and_are_checked() {
        let v = vocab(r#"{"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġa": 4}"#);
        let merges = read_merges(r#"[["a", "b"], "Ġ a"]"#).unwrap();
        assert_eq!(
            merges,
            [
                (b"a".to_vec(), b"b".to_vec()),
                (b" ".to_vec(), b"a".to_vec())
            ]
        );
        assert_eq!(merge_entries(&merges, &v), Ok(vec![(0, 1, 2), (3, 0, 4)]));
        let err = |json: &str| {
            read_merges(json)
                .and_then(|m| merge_entries(&m, &v))
                .unwrap_err()
        };
        assert_eq!(
            err(r#"["a b c"]"#),
            TableError::NotTwoTokens {
                index: 0,
                value: r#""a b c""#.into()
            }
        );
        assert_eq!(
            err(r#"[["a", "b"], [1, 2]]"#),
            TableError::NotAMerge {
                index: 1,
                value: "[1, 2]".into()
            }
        );
        assert_eq!(
            err(r#"[["a", ""]]"#),
            TableError::NotTwoTokens {
                index: 0,
                value: r#"["a", ""]"#.into()
            }
        );
        assert_eq!(
            err(r#"["a 中"]"#),
            TableError::NotByteLevel {
                index: 0,
                text: "中".into()
            }
        );
        assert_eq!(
            err(r#"[["b", "a"]]"#),
            TableError::NotInVocab {
                index: 0,
                merge: (b"b".to_vec(), b"a".to_vec()),
                part: b"ba".to_vec()
            }
        );
    }
}
