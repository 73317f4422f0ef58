"""Arguments a caller gets wrong, each refused by a typed error that names the value and
what is allowed: vocab ids, special-token policies, what encode_bytes takes, merges."""

from __future__ import annotations

import bytepair
import pytest
from bytepair import Tokenizer
from bytepair.errors import VocabError

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.mark.parametrize("big", [2**26, 2**32, 2**40, 2**64, 2**70])
def test_a_vocab_id_past_2_to_the_26_is_a_vocab_error_naming_it(big):
    # The core numbers tokens below 2**26 (src/encode/build.rs), in u32 before that check.
    with pytest.raises(VocabError, match=rf"vocab id {big} \(b'ab'\).*below 67,108,864"):
        Tokenizer(BYTES | {big: b"ab"}, [])
    assert Tokenizer(BYTES | {2**26 - 1: b"ab"}, []).vocab_size == 2**26
    assert bytepair.VocabError is VocabError
