//! One error type for the core. Every message names the bad value and says what was expected.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A pre-tokenization pattern that fancy-regex rejects.
    InvalidPattern { pattern: String, reason: String },
    /// Text contains a special token that the caller did not allow.
    DisallowedSpecial { token: String },
    /// A token id that is not in the vocabulary.
    UnknownId { id: u64 },
    /// A vocabulary or merge table that is inconsistent.
    InvalidVocab { reason: String },
    /// An I/O failure, with the path it concerns.
    Io { path: String, reason: String },
    /// Work stopped because the caller asked (Ctrl-C).
    Interrupted,
    /// Serialized pre-token counts that are not what `PretokenCounts::to_bytes` writes.
    InvalidCounts { reason: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPattern { pattern, reason } => {
                write!(f, "invalid pre-tokenization pattern {pattern:?}: {reason}")
            }
            Error::DisallowedSpecial { token } => write!(
                f,
                "text contains the special token {token:?}, which is not allowed; pass \
                 allowed_special={{{token:?}}} (or \"all\") to encode it as a special token, \
                 or disallowed_special=() to encode it as plain text"
            ),
            Error::UnknownId { id } => write!(f, "unknown token id {id}: not in the vocabulary"),
            Error::InvalidVocab { reason } => write!(f, "invalid vocabulary: {reason}"),
            Error::Io { path, reason } => write!(f, "{path}: {reason}"),
            Error::Interrupted => write!(f, "interrupted"),
            Error::InvalidCounts { reason } => {
                write!(f, "invalid serialized pre-token counts: {reason}")
            }
        }
    }
}

impl std::error::Error for Error {}
