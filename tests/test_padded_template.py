"""`encode_batch_padded` on a tokenizer.json whose post-processor adds tokens (a template
`<|im_start|> $A <|endoftext|>`), against transformers' `tokenizer(texts, ...)` on the same
folder: truncation cuts the text's ids and keeps the template's, as transformers does."""

from __future__ import annotations

import json
import warnings

import bytepair
import numpy
import pytest
from bytepair.errors import DisallowedSpecialError
from tutorial_tokenizer import EOT, auto_tokenizer, documents, tutorial_tokenizer

START = "<|im_start|>"
TEMPLATE = {
    "type": "TemplateProcessing",
    "single": [
        {"SpecialToken": {"id": START, "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}},
        {"SpecialToken": {"id": EOT, "type_id": 0}},
    ],
    "pair": [
        {"SpecialToken": {"id": START, "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}},
        {"Sequence": {"id": "B", "type_id": 1}},
    ],
    "special_tokens": {
        name: {"id": name, "ids": [tutorial_tokenizer().special_tokens[name]], "tokens": [name]}
        for name in (START, EOT)
    },
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    directory = tmp_path_factory.mktemp("template")
    tutorial_tokenizer().save(directory)
    path = directory / "tokenizer.json"
    doc = json.loads(path.read_text("utf-8"))
    doc["post_processor"] = TEMPLATE
    path.write_text(json.dumps(doc), "utf-8")
    return directory


def texts():
    return [t[: (53 * n) % 400] for n, t in enumerate(documents(4))] + ["a", ""]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("padding", ["longest", "max_length"])
@pytest.mark.parametrize("max_length", [2, 3, 5, 40])
def test_truncation_keeps_the_template_tokens(folder, max_length, padding, side):
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    hf = auto_tokenizer(folder)
    hf.padding_side = side
    kw = {"padding": padding, "truncation": True, "max_length": max_length}
    expected = hf(texts(), return_tensors="np", **kw)
    got = tok.encode_batch_padded(texts(), add_special_tokens=True, padding_side=side, **kw)
    for key in ("input_ids", "attention_mask"):
        assert numpy.array_equal(got[key], expected[key]), key
    # Every row, cut or not, starts with <|im_start|> and ends with <|endoftext|>.
    ids = tok.special_tokens
    for row, mask in zip(got["input_ids"], got["attention_mask"], strict=True):
        kept = row[mask == 1].tolist()
        assert kept[0] == ids[START] and kept[-1] == ids[EOT] and len(kept) <= max_length


def test_a_max_length_below_the_template_is_refused(folder):
    # transformers subtracts the template's 2 tokens from max_length=1 in unsigned
    # arithmetic, wraps around and truncates nothing; bytepair says why it cannot.
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    with pytest.raises(ValueError, match=r"max_length=1 .* 2 tokens .*template"):
        tok.encode_batch_padded(["abc"], add_special_tokens=True, truncation=True, max_length=1)
    cut = tok.encode_batch_padded(["abc"], add_special_tokens=False, truncation=True, max_length=1)
    assert cut["input_ids"].tolist() == [tok.encode("abc")[:1]]


@pytest.mark.parametrize(
    "kw",
    [
        {},  # transformers' tokenizer(texts) adds the template's tokens by default
        {"padding": True},
        {"padding": True, "truncation": True, "max_length": 6},
        {"padding": "longest", "max_length": 4},  # max_length pads nothing without truncation
        {"padding": True, "truncation": True},  # no model_max_length: nothing is cut
        {"padding": False, "truncation": True, "max_length": 4},  # every row has 4 ids
        {"padding": False, "truncation": True, "max_length": 4, "pad_to_multiple_of": 3},
        # transformers' names of its truncation strategies: the first two cut, the last not.
        {"padding": True, "truncation": "longest_first", "max_length": 6},
        {"padding": True, "truncation": "only_first", "max_length": 6},
        {"padding": True, "truncation": "do_not_truncate", "max_length": 6},
    ],
)
def test_the_options_of_transformers_give_its_arrays(folder, kw):
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    hf = auto_tokenizer(folder)
    long = [t for t in texts() if len(tok.encode(t)) > 10]
    hf_kw = {"padding": "longest", **kw}
    with warnings.catch_warnings():
        # padding=True with max_length and no truncation: "max_length is ignored".
        warnings.simplefilter("ignore", UserWarning)
        expected = hf(long, return_tensors="np", **hf_kw)
    got = tok.encode_batch_padded(long, **kw)
    for key in ("input_ids", "attention_mask"):
        assert got[key].dtype == numpy.int64
        assert numpy.array_equal(got[key], expected[key]), key


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"padding": False}, r"padding=False leaves rows of different lengths \(text 0 has 5"),
        (
            {"padding": "max_length", "max_length": 3},
            r"text 0 has 5 tokens, more than max_length=3.*truncation=True",
        ),
    ],
)
def test_ragged_rows_are_refused(folder, kw, match):
    # transformers returns an object array of row arrays here; an int64 rectangle cannot
    # hold them.
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    texts = ["\x00\x01\x02", "\x00"]  # control bytes: no merge joins them
    hf_rows = auto_tokenizer(folder)(texts, **kw)["input_ids"]
    assert [len(row) for row in hf_rows] == [5, 3]  # each with the template's 2 ids
    with pytest.raises(ValueError, match=match):
        tok.encode_batch_padded(texts, **kw)


def test_a_truncation_strategy_for_pairs_is_refused(folder):
    # "only_second" cuts the second text of a pair; a batch of single texts has none.
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    with pytest.raises(ValueError, match="truncation must be True, False or one of"):
        tok.encode_batch_padded(["abc"], truncation="only_second", max_length=3)


def test_no_padding_needs_no_pad_token():
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], [EOT])
    batch = tok.encode_batch_padded(["ab", "cd"], padding=False)
    assert batch["input_ids"].tolist() == [[97, 98], [99, 100]]
    assert batch["attention_mask"].tolist() == [[1, 1], [1, 1]]


def test_special_token_text_is_refused_unless_allowed(folder):
    # bytepair's rule for every encode, unlike transformers: user text cannot smuggle in
    # a control token.
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    with pytest.raises(DisallowedSpecialError, match="endoftext"):
        tok.encode_batch_padded(["a" + EOT])
    hf = auto_tokenizer(folder)
    got = tok.encode_batch_padded(["a" + EOT, "b"], allowed_special="all")
    assert numpy.array_equal(got["input_ids"], hf(["a" + EOT, "b"], padding=True)["input_ids"])


def test_truncation_without_max_length_uses_model_max_length(folder, tmp_path):
    import shutil

    shutil.copytree(folder, tmp_path / "m")
    path = tmp_path / "m" / "tokenizer_config.json"
    config = json.loads(path.read_text("utf-8"))
    config["model_max_length"] = 4
    path.write_text(json.dumps(config), "utf-8")
    tok = bytepair.Tokenizer.load(tmp_path / "m" / "tokenizer.json")
    hf = auto_tokenizer(tmp_path / "m")
    expected = hf(texts(), padding=True, truncation=True, return_tensors="np")
    got = tok.encode_batch_padded(texts(), truncation=True)
    assert numpy.array_equal(got["input_ids"], expected["input_ids"])
    assert got["input_ids"].shape[1] == 4


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"padding_side": "left"},
        {"padding": "max_length", "max_length": 12},
        {"padding": True, "pad_to_multiple_of": 8},
        {"padding": "max_length", "max_length": 11, "padding_side": "left"},
    ],
)
def test_pad_gives_transformers_arrays_for_ids_already_encoded(folder, kw):
    # The tutorial's padding step: lists of ids of different lengths, padded after encoding.
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    hf = auto_tokenizer(folder)
    rows = [tok.encode(t) for t in ["a cat", "the cat sat on the mat", "", "sat"]]
    side = kw.pop("padding_side", "right")
    hf.padding_side = side
    expected = hf.pad({"input_ids": rows}, return_tensors="np", **{"padding": True, **kw})
    for batch in (rows, {"input_ids": rows}):
        got = tok.pad(batch, padding_side=side, **kw)
        for key in ("input_ids", "attention_mask"):
            assert got[key].dtype == numpy.int64
            assert numpy.array_equal(got[key], expected[key]), key
    # The tutorial pads with id 0; an id pads as a token's text does.
    zero = tok.pad([[101, 7592, 102], [101, 2023, 2003, 102]], pad_token=0)
    assert zero["input_ids"].tolist() == [[101, 7592, 102, 0], [101, 2023, 2003, 102]]
    square = tok.pad(numpy.array([[5, 6], [7, 8]]))  # rows of one length, as an array
    assert square["input_ids"].tolist() == [[5, 6], [7, 8]]


@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_keeps_the_attention_mask_it_is_given(folder, side):
    # A batch from an earlier step (a collator's, or one with a masked prefix) has its own
    # mask: transformers pads it with zeros, it does not replace it with ones.
    tok = bytepair.Tokenizer.load(folder / "tokenizer.json")
    hf = auto_tokenizer(folder)
    hf.padding_side = side
    batch = {"input_ids": [[5, 6, 7], [8], [9, 10]], "attention_mask": [[0, 1, 1], [1], [1, 0]]}
    expected = hf.pad(batch, return_tensors="np")
    got = tok.pad(batch, padding_side=side)
    for key in ("input_ids", "attention_mask"):
        assert numpy.array_equal(got[key], expected[key]), key
    with pytest.raises(
        ValueError, match="attention_mask row 1 has 2 values, input_ids row 1 has 1"
    ):
        tok.pad({"input_ids": [[5, 6], [8]], "attention_mask": [[1, 1], [1, 1]]})


def test_pad_refuses_what_no_rectangle_holds():
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"])
    with pytest.raises(ValueError, match=r"row 0 has 3 tokens, more than max_length=2: cut it"):
        tok.pad([[1, 2, 3], [4]], padding="max_length", max_length=2)
    with pytest.raises(TypeError, match="row 1 is str 'hello': for texts, call encode_batch_pa"):
        tok.pad([[1], "hello"])
    with pytest.raises(TypeError, match="pad takes lists of int ids"):
        tok.pad([[1, "x"]])
