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


def _gzipped_jsonl(path):
    import gzip
    import json

    lines = "".join(json.dumps({"text": f"document {i}"}) + "\n" for i in range(50))
    path.write_bytes(gzip.compress(lines.encode()))
    return lines


@pytest.mark.parametrize("corpus", ["c.jsonl.gz", ".", "*.gz"])
def test_encode_file_warns_of_a_compressed_file_read_as_plain_text(tmp_path, corpus):
    """A .jsonl.gz (gzip's magic bytes 1f 8b, RFC 1952) is no .jsonl: read as plain text,
    its compressed bytes would become ids. The warning says so and how to fix it, as
    training's does, whether the file is named, in a directory or matched by a glob."""
    from bytepair import CorpusWarning

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    (tmp_path / "data").mkdir()
    _gzipped_jsonl(tmp_path / "data" / "c.jsonl.gz")
    with pytest.warns(CorpusWarning, match=r"c\.jsonl\.gz is gzip-compressed.*gunzip"):
        tok.encode_file(tmp_path / "data" / corpus, tmp_path / "ids.npy", progress=False)


def test_encode_file_warns_of_json_lines_read_as_plain_text(tmp_path):
    """JSON Lines named .json is plain text: its keys and quotes would become ids."""
    from bytepair import CorpusWarning

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    lines = _gzipped_jsonl(tmp_path / "unused.gz")
    (tmp_path / "data.json").write_text(lines)
    with pytest.warns(CorpusWarning, match=r"data\.json holds JSON Lines.*name it \.jsonl"):
        n = tok.encode_file(tmp_path / "data.json", tmp_path / "ids.npy", progress=False)
    assert n == len(lines.encode())  # a byte-level vocab: warned, still encoded as it is


def test_token_shards_warn_of_a_compressed_file_read_as_plain_text(tmp_path):
    from bytepair import CorpusWarning, token_shards

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    _gzipped_jsonl(tmp_path / "c.jsonl.gz")
    with pytest.warns(CorpusWarning, match=r"c\.jsonl\.gz is gzip-compressed.*gunzip"):
        token_shards.write(tok, [tmp_path / "c.jsonl.gz"], tmp_path / "out", 100, progress=False)
