//! An encoder built ahead, on a thread of its own, while the reader makes the tokens' Python
//! objects and checks them. Of a tokenizer.json's tables: `ModelTables.prepare_encoder`
//! starts it, and `Encoder.from_tables` takes it when asked for the same special tokens,
//! pattern and `ignore_merges` (else it builds anew, as without it). Of a rank file's
//! tokens: `rank_file` starts it, and `EncoderAhead.take` gives it, or `None` (then the
//! caller builds anew, and meets any error there).

use super::encoder::{encoder_input, specials_bytes, PyEncoder};
use crate::encode::Encoder;
use crate::{Error, TokenId};
use pyo3::prelude::*;
use std::sync::{mpsc, Arc, Mutex};

/// What an encoder of the tables is built with, besides the tables.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) special_tokens: Vec<(String, TokenId)>,
    pub(super) pattern: String,
    pub(super) ignore_merges: bool,
}

/// A built encoder, or the message of an id that is too large for one (an `OverflowError`).
pub(super) type Built = Result<Result<Encoder, Error>, String>;

/// The tables as an encoder takes them: `(id, bytes)` of each token and each merge's ids.
pub(super) type Input<'a> = (Vec<(u64, &'a [u8])>, Vec<(u64, u64, u64)>);

/// The tables with ids and bytes of their own, as [`encoder_input`] gives them.
pub(super) type Owned = (Vec<(TokenId, Vec<u8>)>, Vec<(TokenId, TokenId, TokenId)>);

/// The encoder of `input` for `request`.
pub(super) fn build(input: Input<'_>, request: &Request) -> Built {
    Ok(encoder_of(encoder_input(input)?, request))
}

fn encoder_of((vocab, merges): Owned, request: &Request) -> Result<Encoder, Error> {
    Encoder::build_resolved(
        vocab,
        &merges,
        specials_bytes(&request.special_tokens),
        &request.pattern,
        request.ignore_merges,
    )
}

/// A build under way.
pub(super) struct EncoderAhead {
    request: Request,
    built: mpsc::Receiver<Built>,
}

impl EncoderAhead {
    /// Starts building the encoder of `input` for `request`: the tables' ids and bytes are
    /// copied here, the rest is built on a thread of its own.
    pub(super) fn start(input: Input<'_>, request: Request) -> Self {
        let owned = encoder_input(input);
        Self::spawn(request, move |asked| {
            owned.map(|owned| encoder_of(owned, asked))
        })
    }

    /// Starts building the encoder of a rank table's `tokens` for `request`, reading them
    /// where they are while the caller goes on with them.
    pub(super) fn start_ranks(tokens: Arc<Vec<(TokenId, Vec<u8>)>>, request: Request) -> Self {
        Self::spawn(request, move |asked| {
            let specials = specials_bytes(&asked.special_tokens);
            Ok(Encoder::of_ranks(&tokens, specials, &asked.pattern))
        })
    }

    /// Runs `build` for `request` on a thread of its own. Where no thread can be started (a
    /// process at its limit of threads or of address space) nothing is built ahead: `take`
    /// gives `None`, and the caller builds as it would without.
    fn spawn(request: Request, build: impl FnOnce(&Request) -> Built + Send + 'static) -> Self {
        let (send, built) = mpsc::sync_channel(1);
        let asked = request.clone();
        let _ = std::thread::Builder::new()
            .name("bytepair-build".into())
            .spawn(move || {
                // Dropped unasked (its tables or reader's data gone): nobody waits for it.
                let _ = send.send(build(&asked));
            });
        EncoderAhead { request, built }
    }

    /// The encoder, if it was built for `request` (waits for it: call without the GIL).
    pub(super) fn take(self, request: &Request) -> Option<Built> {
        if self.request != *request {
            return None;
        }
        self.built.recv().ok()
    }
}

/// A rank file's encoder being built (see the module).
#[pyclass(frozen, name = "EncoderAhead", module = "bytepair._core")]
pub struct PyEncoderAhead {
    pub(super) ahead: Mutex<Option<EncoderAhead>>,
}

#[pymethods]
impl PyEncoderAhead {
    /// The encoder, if it was built for these special tokens, pattern and `ignore_merges`
    /// and the build succeeded; else `None`. Only once.
    #[pyo3(signature = (special_tokens, pattern, ignore_merges=false))]
    fn take(
        &self,
        py: Python<'_>,
        special_tokens: Vec<(String, TokenId)>,
        pattern: String,
        ignore_merges: bool,
    ) -> PyResult<Option<PyEncoder>> {
        let request = Request {
            special_tokens,
            pattern,
            ignore_merges,
        };
        let ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner()).take();
        match py.detach(|| ahead.and_then(|a| a.take(&request))) {
            Some(Ok(Ok(built))) => Ok(Some(PyEncoder::wrap(
                py,
                Ok(built),
                &request.special_tokens,
            )?)),
            _ => Ok(None),
        }
    }
}
