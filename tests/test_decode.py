"""Decoding: bytes first, then UTF-8; ids may be NumPy integers; unknown ids are named."""

from __future__ import annotations

import numpy as np
import pytest
from bytepair import Tokenizer, UnknownIdError
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def tok(tiktoken_pair):
    return tiktoken_pair("cl100k_base")[1]


@given(text=st.text())
def test_property_decode_inverts_encode(tok, text):
    assert tok.decode(tok.encode(text, disallowed_special=())) == text


def test_decode_agrees_with_tiktoken(tiktoken_pair):
    enc, tok = tiktoken_pair("cl100k_base")
    ids = [*range(0, 100_000, 7), 100257]
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)


@pytest.mark.parametrize("bad", [-1, 100_256, 10**12, "a", 1.0, True, None])
def test_unknown_or_bad_ids_are_named(tok, bad):
    with pytest.raises(UnknownIdError) as e:
        tok.decode([1, bad])
    assert repr(bad) in str(e.value)
    assert isinstance(e.value, KeyError)


def test_numpy_ids(tok):
    ids = tok.encode("hello world, 你好")
    assert tok.decode(np.array(ids, dtype=np.int64)) == "hello world, 你好"
    assert tok.decode(np.array(ids, dtype=np.uint32)) == "hello world, 你好"
    assert tok.decode([np.int32(ids[0])]) == "hello"


def test_incremental_decoder_waits_for_whole_characters():
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    text = "a€😀b"
    ids = tok.encode(text)
    d = tok.decoder()
    outs = [d.feed(i) for i in ids]
    assert outs == ["a", "", "", "€", "", "", "", "😀", "b"]
    assert d.flush() == ""
    d = tok.decoder()
    assert d.feed(ids[:2]) == "a"
    assert d.flush() == "\ufffd"


@given(text=st.text())
def test_property_incremental_decoder_equals_decode(tok, text):
    ids = tok.encode(text, disallowed_special=())
    d = tok.decoder()
    assert "".join(d.feed(i) for i in ids) + d.flush() == tok.decode(ids)
