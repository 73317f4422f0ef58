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


# -- what encode_bytes, special_tokens and merges take ---------------------------------------


def test_encode_bytes_takes_bytes_like_objects_only():
    tok = Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")])
    assert tok.encode_bytes(bytearray(b"abc")) == [256, 99]
    assert tok.encode_bytes(memoryview(b"abc")) == [256, 99]
    with pytest.raises(TypeError, match=r"encode_bytes takes bytes .*got int$"):
        tok.encode_bytes(5)  # bytes(5) is five zero bytes
    with pytest.raises(TypeError, match="got str; for a str, call encode"):
        tok.encode_bytes("ab")


def test_a_special_token_with_a_lone_surrogate_is_a_special_token_error():
    for specials in (["\ud800"], {"a\udfffb": 300}):
        with pytest.raises(SpecialTokenError, match=r"lone surrogate '\\u?d[8f]..'"):
            Tokenizer(BYTES, [], special_tokens=specials)
    with pytest.raises(SpecialTokenError, match="lone surrogate"):
        bytepair.train(["abc"], 300, special_tokens=["<\ud800>"], progress=False)


def test_merges_of_str_are_told_to_be_bytes():
    vocab = BYTES | {256: b"ab"}
    for merges in ([("a", "b")], [(b"a", "b")]):
        with pytest.raises(VocabError, match=r"merges are pairs of bytes.*\.encode\('utf-8'\)"):
            Tokenizer(vocab, merges)
    with pytest.raises(VocabError, match=r"merge 0 is 5; merges are pairs of bytes"):
        Tokenizer(vocab, [5])
