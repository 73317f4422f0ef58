"""encode_file never writes its ids over its own input, nor into the corpus it reads."""

from __future__ import annotations

import os

import pytest
from bytepair import CorpusError, Tokenizer


def test_encode_file_refuses_its_input_and_a_path_inside_its_corpus(tmp_path):
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    text = tmp_path / "in.txt"
    text.write_text("precious\n")
    with pytest.raises(CorpusError, match="is the input file"):
        tok.encode_file(text, text)
    assert text.read_text() == "precious\n"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("the cat")
    with pytest.raises(CorpusError, match="inside the corpus directory"):
        tok.encode_file(tmp_path / "data", tmp_path / "data" / "ids.npy")
    assert os.listdir(tmp_path / "data") == ["a.txt"]
    assert tok.encode_file(tmp_path / "data", tmp_path / "ids.npy", progress=False) == 7
