"""Loading with arguments or files that other tools accept: a pattern given as "" is an
empty pattern whatever the format, and JSON files that start with a UTF-8 byte order mark
(as Windows tools write them) load as without it."""

from __future__ import annotations

import codecs
import warnings

import bytepair
import pytest
from bytepair import Tokenizer
from bytepair.errors import FormatError, PatternError
from bytepair.formats import huggingface

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer(BYTES | {256: b"ab", 257: b" ab"}, [(b"a", b"b"), (b" ", b"ab")])


def test_an_empty_pattern_is_refused_by_load_as_by_the_constructor(tok, tmp_path):
    path = tmp_path / "t.tiktoken"
    with warnings.catch_warnings():  # whether a rank file's lack of a pattern is noted
        warnings.simplefilter("ignore")
        tok.save(path)
    with pytest.raises(PatternError, match="pattern is empty"):
        Tokenizer(BYTES, [], pattern="")
    with pytest.raises(PatternError, match="pattern is empty"):
        Tokenizer.load(path, pattern="")


def test_json_files_with_a_utf8_byte_order_mark_read_as_without_it(tok, tmp_path):
    (tmp_path / "plain").mkdir()
    tok.save(tmp_path / "plain" / "tokenizer.json")
    tok.save(tmp_path / "gpt2", format="gpt2")
    (tmp_path / "bom").mkdir()
    for name, source in [
        ("tokenizer.json", tmp_path / "plain" / "tokenizer.json"),
        ("vocab.json", tmp_path / "gpt2" / "vocab.json"),
    ]:
        (tmp_path / "bom" / name).write_bytes(codecs.BOM_UTF8 + source.read_bytes())
    read = huggingface.read(tmp_path / "bom" / "tokenizer.json")
    assert dict(read.vocab) == dict(tok.vocab) and list(read.merges) == tok.merges
    again = Tokenizer.from_files(tmp_path / "bom" / "vocab.json", tmp_path / "gpt2" / "merges.txt")
    assert again.encode(" ab ab") == [257, 257]
    assert isinstance(again, bytepair.Tokenizer)


def test_from_files_takes_an_odd_token_named_as_special_for_a_special_token(tmp_path):
    # "END" is no merge's result and not shaped like <...>: unnamed, it looks like a cut
    # merges.txt; named in special_tokens, it is that special token.
    tok = Tokenizer(BYTES | {256: b"ab", 257: b"END"}, [(b"a", b"b")], special_tokens=["END"])
    tok.save((tmp_path / "vocab.json", tmp_path / "merges.txt"), format="gpt2")
    pair = (tmp_path / "vocab.json", tmp_path / "merges.txt")
    with pytest.raises(FormatError, match="looks truncated"):
        Tokenizer.from_files(*pair)
    again = Tokenizer.from_files(*pair, special_tokens=["END"])
    assert again.special_tokens == {"END": 257}
    assert again.encode("abEND", allowed_special="all") == [256, 257]
