//! An encoder of a tokenizer.json's tables built ahead, on a thread of its own, while the
//! reader makes the tables' Python objects and checks them: `ModelTables.prepare_encoder`
//! starts it, and `Encoder.from_tables` takes it when asked for the same special tokens,
//! pattern and `ignore_merges` (else it builds anew, as without it).

use super::encoder::{encoder_input, specials_bytes};
use crate::encode::Encoder;
use crate::{Error, TokenId};
use std::sync::mpsc;

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
        let (send, built) = mpsc::sync_channel(1);
        let owned = encoder_input(input);
        let asked = request.clone();
        std::thread::spawn(move || {
            // The tables were dropped unasked: nobody waits for the encoder.
            let _ = send.send(owned.map(|owned| encoder_of(owned, &asked)));
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
