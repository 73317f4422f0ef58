"""What decode takes as an id: Python ints and NumPy integers of every dtype; a non-integer,
a negative or an out-of-range id is an UnknownIdError naming it and the valid range."""

from __future__ import annotations

import bytepair
import numpy as np
import pytest
from bytepair.errors import UnknownIdError
from conftest import EOT, small_tokenizer


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    """A small trained tokenizer with one special token."""
    return small_tokenizer()


@pytest.mark.parametrize("bad", [1.5, 2.0, "7", None, b"\x07", [1], np.float64(3.0)], ids=repr)
def test_non_integer_ids_are_unknown_id_errors(tok, bad):
    with pytest.raises(UnknownIdError, match="unknown token id") as info:
        tok.decode([104, bad])
    assert repr(bad)[:3] in str(info.value) or str(bad)[:3] in str(info.value)
    with pytest.raises(UnknownIdError):
        tok.decode_bytes([bad])
    with pytest.raises(UnknownIdError):
        tok.decoder().feed([bad])


@pytest.mark.parametrize("bad", [-1, -(2**70), np.int64(-1), np.int8(-3)], ids=repr)
def test_negative_ids_are_unknown_id_errors(tok, bad):
    with pytest.raises(UnknownIdError, match=str(int(bad))):
        tok.decode([bad])


def test_out_of_range_ids_are_unknown_id_errors(tok):
    size = tok.vocab_size
    assert tok.decode([size - 1]) == EOT  # the last id is valid
    for bad in (size, size + 1, 2**31, 2**32, 2**64, 10**30, np.uint64(2**64 - 1)):
        with pytest.raises(UnknownIdError, match=str(int(bad))):
            tok.decode([bad])
        with pytest.raises(UnknownIdError, match=f"0..{size - 1}"):
            tok.decode_bytes([104, bad])


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_numpy_integer_ids_decode_like_python_ints(tok, dtype):
    text = "Tokenizers meet NumPy."
    ids = tok.encode(text)
    small = [i for i in ids if i <= np.iinfo(dtype).max]
    want = tok.decode_bytes(small)
    assert tok.decode_bytes(np.array(small, dtype=dtype)) == want
    assert tok.decode_bytes([dtype(i) for i in small]) == want
    if np.iinfo(dtype).max >= tok.vocab_size:
        assert tok.decode(np.array(ids, dtype=dtype)) == text
