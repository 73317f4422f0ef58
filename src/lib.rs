//! bytepair core: byte-level BPE in pure Rust.
//!
//! Layers, one concept per file:
//! - `split`: pre-tokenization (hand-written splitters for the built-in patterns, fancy-regex otherwise)
//! - `special`: leftmost-longest matching of special tokens
//! - `safe_cut`: where the built-in splitters provably split, so text may be cut there
//! - `pretoken_key`: a short pre-token as one `u128` key
//! - `count`: parallel counting of distinct pre-tokens over files and text batches
//! - `train`: the incremental merge loop
//! - `encode`: the BPE encoder and decoder; batches on a thread pool, bounded-memory streams,
//!   files to `.npy`
//! - `model_tables`: a tokenizer.json's `model.vocab` and `model.merges` read from its text
//! - `utf8`: UTF-8 written from Latin-1, UCS-2 or UCS-4 code units (a str's own storage),
//!   lone surrogates replaced as tiktoken does
//! - `error`: one error type whose messages name the bad value
//! - `test_rng` (tests only): the deterministic generator the tests draw random input from
//!
//! Python bindings live only in `py/`, behind the `python` feature.

pub mod byte_alphabet;
pub mod byte_pair_set;
pub mod count;
pub mod encode;
pub mod error;
pub mod model_tables;
mod prefetch;
pub mod pretoken_key;
pub mod rank_file;
pub mod safe_cut;
pub mod special;
pub mod split;
pub mod train;
pub mod utf8;

#[cfg(feature = "python")]
mod py;

#[cfg(test)]
mod test_rng;

/// A token id. Ids are dense: 0..vocab_size. In a rank table a token's id is also its rank
/// (its merge priority, tiktoken's word); with merges the priority is the merge's index.
pub type TokenId = u32;

/// The one progress contract of long work (counting, training, encoding a file):
/// `progress(done, total)`, called on the calling thread about every 100 ms and once at the
/// end with `done == total`; returning `false` stops the work with [`Error::Interrupted`].
/// Counting and encoding count bytes, training counts merges.
pub type Progress<'a> = dyn FnMut(u64, u64) -> bool + 'a;

pub use error::Error;
