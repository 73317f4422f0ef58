"""Mistral's Tekken files: detected by Tokenizer.load, ids as mistral-common assigns them, and
encodings identical to Tekkenizer.encode(text, bos=False, eos=False) on every corpus."""

from __future__ import annotations

import base64
import copy
import json

import bytepair
import pytest
from bytepair import formats
from bytepair.errors import FormatError
from conftest import CORPORA, corpus_documents
from model_files import tekken_json

VERSIONS = ["240718", "240911"]


@pytest.fixture(scope="module")
def pair():
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    cache = {}

    def get(version):
        if version not in cache:
            path = tekken_json(version)
            cache[version] = (bytepair.Tokenizer.load(path), Tekkenizer.from_file(path))
        return cache[version]

    return get


@pytest.mark.parametrize("version", VERSIONS)
def test_encodes_as_mistral_common_on_every_corpus(pair, version):
    tok, ref = pair(version)
    assert formats.detect(tekken_json(version)) == "tekken"
    for name in CORPORA:
        for doc in corpus_documents(name, 60):
            text = doc.decode("utf-8", "replace")
            assert tok.encode(text, disallowed_special=()) == ref.encode(
                text, bos=False, eos=False
            ), name


@pytest.mark.parametrize("version", VERSIONS)
def test_ids_are_mistral_commons(pair, version):
    tok, ref = pair(version)
    assert tok.vocab_size == ref.n_words
    assert tok.special_tokens["<s>"] == ref.bos_id == 1
    assert tok.special_tokens["</s>"] == ref.eos_id
    assert tok.special_tokens["[INST]"] == ref.get_special_token("[INST]")
    assert tok.special_tokens["<SPECIAL_999>"] == 999
    assert len(tok.special_tokens) == ref.num_special_tokens
    text = "Hello, wörld! 中文 123"
    ids = tok.encode(text)
    assert tok.decode(ids) == ref.decode(ids) == text
    assert [ref.id_to_byte_piece(i) for i in ids] == [tok.vocab[i] for i in ids]
    # Control tokens: allowed, they are the ids mistral-common gives them.
    assert tok.encode("[INST]hi", allowed_special="all")[0] == ref.get_special_token("[INST]")


def test_writer_round_trips_through_mistral_common(pair, tmp_path):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tok, ref = pair("240911")
    tok.save(tmp_path / "tekken_copy.json", format="tekken")
    back = Tekkenizer.from_file(tmp_path / "tekken_copy.json")
    again = bytepair.Tokenizer.load(tmp_path / "tekken_copy.json")
    for doc in corpus_documents("multilingual", 20):
        text = doc.decode("utf-8", "replace")
        expected = ref.encode(text, bos=False, eos=False)
        assert back.encode(text, bos=False, eos=False) == expected
        assert again.encode(text, disallowed_special=()) == expected


def _small():
    vocab = [
        {"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": ""}
        for i in range(256)
    ]
    return {
        "config": {
            "pattern": r"\S+|\s+",
            "num_vocab_tokens": 256,
            "default_vocab_size": 256 + 4,
            "default_num_special_tokens": 4,
            "version": "v7",
        },
        "vocab": vocab,
        "special_tokens": [
            {"rank": 0, "token_str": "<unk>", "is_control": True},
            {"rank": 1, "token_str": "<s>", "is_control": True},
        ],
    }


def test_small_file_fills_the_control_tokens(tmp_path):
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(_small()), "utf-8")
    tok = bytepair.Tokenizer.load(path)
    assert tok.special_tokens == {"<unk>": 0, "<s>": 1, "<SPECIAL_2>": 2, "<SPECIAL_3>": 3}
    assert tok.encode("ab") == [97 + 4, 98 + 4]


def _edit(path, value):
    def edit(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return doc

    return edit


TEKKEN_MALFORMED = [
    ("no pattern", _edit(["config", "pattern"], KeyError), "config: missing key 'pattern'"),
    ("pattern type", _edit(["config", "pattern"], 3), "config.pattern is 3"),
    ("bad pattern", _edit(["config", "pattern"], "(a"), "invalid pattern regex"),
    ("version", _edit(["config", "version"], "seven"), "config.version: 'seven'"),
    ("vocab type", _edit(["vocab"], {}), "vocab is \\{\\}; expected a JSON array"),
    ("rank order", _edit(["vocab", 3, "rank"], 9), r"vocab\[3\].rank: 9; expected 3"),
    ("base64", _edit(["vocab", 3, "token_bytes"], "!!"), r"vocab\[3\].token_bytes: not base64"),
    ("byte rank", _edit(["vocab", 3, "token_bytes"], "AA=="), r"rank 3 must be the byte 3"),
    (
        "too many specials",
        _edit(["config", "default_num_special_tokens"], 1),
        "default_num_special_tokens: 1, fewer than the 2",
    ),
    ("vocab size", _edit(["config", "default_vocab_size"], 9999), "default_vocab_size: 9999"),
    (
        "a billion specials",
        _edit(["config", "default_num_special_tokens"], 10**9),
        "default_vocab_size: 260 leaves -999999740 regular tokens after "
        "default_num_special_tokens=1000000000",
    ),
    (
        "ids past 2**26",
        lambda d: _edit(["config", "default_vocab_size"], 10**9 + 256)(
            _edit(["config", "default_num_special_tokens"], 10**9)(d)
        ),
        r"default_vocab_size: 1000000256; ids must be below 67,108,864",
    ),
    ("special rank", _edit(["special_tokens", 1, "rank"], 5), r"special_tokens\[1\].rank: 5"),
    (
        "special twice",
        _edit(["special_tokens", 1, "token_str"], "<unk>"),
        "a control token is listed twice",
    ),
    (
        "no special list after v7",
        lambda d: _edit(["config", "version"], "v11")(_edit(["special_tokens"], KeyError)(d)),
        "missing key 'special_tokens'",
    ),
]


@pytest.mark.parametrize(
    ("case", "edit", "message"), TEKKEN_MALFORMED, ids=[m[0] for m in TEKKEN_MALFORMED]
)
def test_malformed_tekken_files_are_refused(tmp_path, case, edit, message):
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(edit(copy.deepcopy(_small()))), "utf-8")
    with pytest.raises(FormatError, match=message) as err:
        bytepair.Tokenizer.load(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("version", VERSIONS)
def test_tekken_pattern_is_the_built_in_one(version):
    """Mistral's own pattern string is the one bytepair's hand-written `tekken` splitter
    implements (src/split/differential.rs proves the splitter equal to the regex)."""
    from bytepair import patterns

    pattern = json.loads(tekken_json(version).read_text())["config"]["pattern"]
    assert patterns.name_of(pattern) == "tekken"
