"""An output never destroys or joins its own input: encode_file and token_shards refuse an
output that is one of the input files (by any name), or that lies inside a corpus directory
or under a corpus glob, where the next run would read it as input."""

from __future__ import annotations

import json
import os

import pytest
from bytepair import CorpusError, Tokenizer, documents, token_shards


@pytest.fixture
def tok():
    return Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])


def test_encode_file_refuses_its_own_input(tmp_path, tok):
    (tmp_path / "in.txt").write_text("precious")
    (tmp_path / "in.jsonl").write_text('{"text": "precious"}\n')
    (tmp_path / "alias.txt").symlink_to("in.txt")
    for src, out in [("in.txt", "in.txt"), ("in.jsonl", "in.jsonl"), ("in.txt", "alias.txt")]:
        with pytest.raises(CorpusError, match=f"output .*{out}' is the input file .*{src}'"):
            tok.encode_file(tmp_path / src, tmp_path / out)
    assert (tmp_path / "in.txt").read_text() == "precious"
    assert (tmp_path / "in.jsonl").read_text() == '{"text": "precious"}\n'


def test_encode_file_refuses_an_output_inside_its_corpus(tmp_path, tok):
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "a.txt").write_text("the cat")
    for out in (data / "ids.npy", data / "sub" / "ids.npy"):
        with pytest.raises(CorpusError, match="is inside the corpus directory"):
            tok.encode_file(data, out)
    for out in (data / "ids.npy", data / "sub" / "ids.npy"):
        with pytest.raises(CorpusError, match="is matched by the corpus glob"):
            tok.encode_file(data / "*", out)
    assert sorted(os.listdir(data)) == ["a.txt", "sub"]
    assert tok.encode_file(data / "*.txt", data / "ids.npy") == 7  # the glob leaves it out
    assert tok.encode_file(data / "*.txt", data / "ids.npy") == 7


@pytest.mark.parametrize(
    "corpus, out, refused",
    [
        ("data", "data/ids.npy", True),
        ("data", "data/sub/deeper/ids.npy", True),
        ("data", "data-ids.npy", False),
        ("data/", "ids.npy", False),
        ("data/*.txt", "data/ids.npy", False),
        ("data/*", "data/ids.npy", True),
        ("data/**/*.npy", "data/x/y/ids.npy", True),
        ("data/**/*.txt", "data/x/y/ids.npy", False),
        ("data/s*", "data/sub/ids.npy", True),
        ("data/a.txt", "data/a.txt", True),
        ("data/a.txt", "data/b.txt", False),
        ("data/linked", "elsewhere/ids.npy", True),
    ],
)
def test_check_output(tmp_path, monkeypatch, corpus, out, refused):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "sub").mkdir(parents=True)
    (tmp_path / "data" / "a.txt").write_text("a")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "data" / "linked").symlink_to(tmp_path / "elsewhere")
    if refused:
        with pytest.raises(CorpusError, match=f"output '{out}'"):
            documents.check_output(corpus, out)
    else:
        documents.check_output(corpus, out)


def test_shards_refuse_an_output_directory_inside_the_corpus(tmp_path, tok):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("the cat")
    for out in ("data", "data/shards"):
        with pytest.raises(CorpusError, match="inside the corpus directory"):
            token_shards.write(tok, tmp_path / "data", tmp_path / out, 10, progress=False)
    assert os.listdir(tmp_path / "data") == ["a.txt"]
    index = token_shards.write(tok, tmp_path / "data", tmp_path / "shards", 10, progress=False)
    assert index["tokens"] == 7
    assert json.loads((tmp_path / "shards" / "index.json").read_text())["tokens"] == 7
