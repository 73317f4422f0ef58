"""Arguments a caller gets wrong, each refused by a typed error that names the value and
what is allowed: vocab ids, special-token policies, what encode_bytes takes, merges."""

from __future__ import annotations

import bytepair
import pytest
from bytepair import Tokenizer
from bytepair.errors import SpecialTokenError, VocabError

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.mark.parametrize("big", [2**26, 2**32, 2**40, 2**64, 2**70])
def test_a_vocab_id_past_2_to_the_26_is_a_vocab_error_naming_it(big):
    # The core numbers tokens below 2**26 (src/encode/build.rs), in u32 before that check.
    with pytest.raises(VocabError, match=rf"vocab id {big} \(b'ab'\).*below 67,108,864"):
        Tokenizer(BYTES | {big: b"ab"}, [])
    assert Tokenizer(BYTES | {2**26 - 1: b"ab"}, []).vocab_size == 2**26
    assert bytepair.VocabError is VocabError


# -- allowed_special / disallowed_special ---------------------------------------------------

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def with_eot() -> Tokenizer:
    return Tokenizer(BYTES, [], special_tokens={EOT: 256})


@pytest.mark.parametrize("side", ["allowed_special", "disallowed_special"])
@pytest.mark.parametrize("method", ["encode", "encode_to_numpy", "encode_batch", "encode_bytes"])
def test_a_policy_side_must_name_special_tokens(with_eot, side, method):
    # A typo or a bare string on the disallowed side would otherwise turn the injection
    # check off without a word.
    text = "x" + EOT
    call = getattr(with_eot, method)
    arg = {"encode_batch": [text], "encode_bytes": text.encode()}.get(method, text)
    with pytest.raises(SpecialTokenError, match=rf"{side}=.*is a string; pass a set of special"):
        call(arg, **{side: EOT})
    with pytest.raises(SpecialTokenError, match=rf"{side} names \['<\|endoftxt\|>'\]"):
        call(arg, **{side: {"<|endoftxt|>"}})
    with pytest.raises(TypeError, match=rf"{side} must be a set of special tokens or 'all'"):
        call(arg, **{side: 5})


def test_disallowed_special_none_is_no_check_as_in_tiktoken(with_eot):
    # tiktoken 0.x: `if disallowed_special:` skips the check for None; the text is plain.
    text = "x" + EOT
    plain = [ord(c) for c in text]
    assert with_eot.encode(text, disallowed_special=None) == plain
    assert with_eot.encode_to_numpy(text, disallowed_special=None).tolist() == plain
    assert with_eot.encode(text, allowed_special={EOT}, disallowed_special=None) == [120, 256]
