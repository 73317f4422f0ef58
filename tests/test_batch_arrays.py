"""Batches as NumPy arrays: `encode_batch_to_numpy` (flat ids + offsets) against tiktoken,
and `encode_batch_padded` against transformers' `tokenizer(texts, padding=...,
return_tensors="np")` on the files bytepair saves."""

from __future__ import annotations

import bytepair
import numpy
import pytest
from bytepair.errors import DisallowedSpecialError, SpecialTokenError
from tutorial_tokenizer import EOT, auto_tokenizer, documents, tutorial_tokenizer


def flat_expected(lists):
    lengths = [len(x) for x in lists]
    return [i for x in lists for i in x], [0, *numpy.cumsum(lengths).tolist()]


@pytest.mark.parametrize("join", [1, 8])  # 20-line documents, and 160-line ones
def test_flat_arrays_equal_tiktoken(tiktoken_pair, join):
    # 160-line documents are past the core's 2 KB detach threshold: they take the threaded
    # path; 20-line ones (about 1 KB) the serial one.
    enc, tok = tiktoken_pair("cl100k_base")
    docs = list(documents())
    texts = ["".join(docs[i : i + join]) for i in range(0, len(docs), join)]
    for threads in (None, 1, 2):
        ids, offsets = tok.encode_batch_to_numpy(texts, threads=threads)
        assert ids.dtype == numpy.uint32 and offsets.dtype == numpy.int64
        want_ids, want_offsets = flat_expected(enc.encode_ordinary_batch(texts))
        assert ids.tolist() == want_ids
        assert offsets.tolist() == want_offsets
    assert tok.encode_batch_to_numpy(texts[:3])[0].flags.writeable


def test_flat_arrays_keep_the_special_token_policy(tiktoken_pair):
    enc, tok = tiktoken_pair("cl100k_base")
    texts = ["a" + EOT + "b", "", EOT]
    ids, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert (ids.tolist(), offsets.tolist()) == flat_expected(
        [enc.encode(t, allowed_special="all") for t in texts]
    )
    ids, _ = tok.encode_batch_to_numpy(texts, disallowed_special=())
    assert ids.tolist() == flat_expected([enc.encode_ordinary(t) for t in texts])[0]
    with pytest.raises(DisallowedSpecialError, match="endoftext"):
        tok.encode_batch_to_numpy(texts)
    with pytest.raises(TypeError, match="list of str"):
        tok.encode_batch_to_numpy("one text")
    ids, offsets = tok.encode_batch_to_numpy([])
    assert ids.tolist() == [] and offsets.tolist() == [0]


@pytest.fixture(scope="module")
def hf(tmp_path_factory):
    directory = tmp_path_factory.mktemp("padded")
    tutorial_tokenizer().save(directory)
    return auto_tokenizer(directory)


CASES = [
    {},
    {"max_length": 64, "truncation": True},
    {"max_length": 300, "truncation": True, "padding": "max_length"},
    {"pad_to_multiple_of": 64},
    {"max_length": 128, "truncation": True, "pad_to_multiple_of": 64},
    {"padding": "max_length", "max_length": 2000, "pad_to_multiple_of": 48},
]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("case", CASES)
def test_padded_batch_equals_transformers(hf, case, side):
    tok = tutorial_tokenizer()
    texts = [t[: (37 * n) % 1500] for n, t in enumerate(documents())]  # lengths 0 to ~1500
    hf.padding_side = side
    hf_kw = dict(case)
    hf_kw["padding"] = hf_kw.get("padding", "longest")
    expected = hf(texts, return_tensors="np", **hf_kw)
    got = tok.encode_batch_padded(texts, padding_side=side, **case)
    assert set(got) == {"input_ids", "attention_mask"}
    for key in got:
        assert got[key].dtype == expected[key].dtype == numpy.int64
        assert numpy.array_equal(got[key], expected[key]), key


def test_hand_derived_left_padding():
    vocab = {i: bytes([i]) for i in range(256)}
    tok = bytepair.Tokenizer(vocab, [], ["<pad>"])
    batch = tok.encode_batch_padded(["abc", "d", ""], padding_side="left", pad_to_multiple_of=4)
    assert batch["input_ids"].tolist() == [
        [256, 97, 98, 99],
        [256, 256, 256, 100],
        [256, 256, 256, 256],
    ]
    assert batch["attention_mask"].tolist() == [[0, 1, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
    by_id = tok.encode_batch_padded(["ab", "c"], pad_token=0, max_length=1, truncation=True)
    assert by_id["input_ids"].tolist() == [[97], [99]]
    by_text = tok.encode_batch_padded(["bb", "b"], pad_token="a")  # an ordinary token
    assert by_text["input_ids"].tolist() == [[98, 98], [98, 97]]


def test_no_pad_token_is_a_clear_error():
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], [EOT])
    with pytest.raises(SpecialTokenError, match=r"no pad token.*pad_token="):
        tok.encode_batch_padded(["a"])
    with pytest.raises(SpecialTokenError, match="'<pad>' is not a token"):
        tok.encode_batch_padded(["a"], pad_token="<pad>")
    assert tok.encode_batch_padded(["ab", "a"], pad_token=EOT)["input_ids"].tolist() == [
        [97, 98],
        [97, 256],
    ]


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (
            {"padding": "max_length", "max_length": 2},
            "text 0 has 3 tokens, more than max_length=2.*truncation=True",
        ),
        ({"padding": "max_length"}, "padding='max_length' needs max_length.*model_max_length"),
        ({"padding": "middle"}, "padding must be True, False or one of"),
        ({"padding_side": "top"}, "padding_side must be"),
        ({"max_length": 0}, "max_length must be at least 1"),
        ({"max_length": 10, "truncation": True, "pad_to_multiple_of": 4}, "not a multiple"),
    ],
)
def test_bad_options_are_refused(kw, match):
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"])
    with pytest.raises(ValueError, match=match):
        tok.encode_batch_padded(["abc", "d"], **kw)


def test_a_batch_of_ids_or_one_text_says_what_a_batch_is():
    """The Qwen3.5 tutorial pads a batch of id lists ([[101, 2003, ...], ...]); handed to
    encode_batch_padded, such a batch raised the core's "'list' object cannot be cast as
    'str'", naming neither the row nor the method, and one str named encode_batch_to_numpy,
    which the user never called. Each method names itself and the first row that is no str."""
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"])
    ids = [[101, 2003, 102], [101, 102]]
    calls = {
        "encode_batch_padded": tok.encode_batch_padded,
        "encode_batch_to_numpy": tok.encode_batch_to_numpy,
        "encode_batch": tok.encode_batch,
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{name} takes a list of str; .*call encode$"):
            call("one text")
        with pytest.raises(TypeError, match=rf"^{name} encodes texts: item 0 is of type list"):
            call(ids)
        with pytest.raises(TypeError, match=rf"^{name} encodes texts: item 1 is of type int"):
            call(["a", 3])
