//! bytepair core: byte-level BPE in pure Rust.
//!
//! Layers, one concept per file:
//! - `split`: pre-tokenization (hand-written splitters for the built-in patterns, fancy-regex otherwise)
//! - `special`: leftmost-longest matching of special tokens
//! - `count`: parallel counting of distinct pre-tokens over files and text batches
//! - `train`: the incremental merge loop
//! - `encode`: the BPE encoder and decoder; batches on a thread pool, bounded-memory streams,
//!   files to `.npy`
//! - `error`: one error type whose messages name the bad value
//! - `test_rng` (tests only): the deterministic generator the tests draw random input from
//!
//! Python bindings live only in `py.rs`, behind the `python` feature.

pub mod count;
pub mod encode;
pub mod error;
pub mod special;
pub mod split;
pub mod train;

#[cfg(feature = "python")]
mod py;

#[cfg(test)]
mod test_rng;

/// A token id. Ids are dense: 0..vocab_size. In a rank table a token's id is also its rank
/// (its merge priority, tiktoken's word); with merges the priority is the merge's index.
pub type TokenId = u32;

pub use error::Error;
