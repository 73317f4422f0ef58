"""Corpora as they come (plain text, JSON Lines, Parquet; files, directories, globs) to ids
on disk: one .npy (encode_file) or shards with a document index (token_shards), resumable.
The oracle is tiktoken encoding each document on its own."""

from __future__ import annotations

import contextlib
import json
import os

import numpy
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bytepair import (
    CorpusError,
    DisallowedSpecialError,
    SpecialTokenError,
    corpus_ids,
    documents,
    token_shards,
)
from conftest import corpus_documents

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def o200k(tiktoken_pair):
    return tiktoken_pair("o200k_base")


@pytest.fixture(scope="module")
def docs() -> list[str]:
    """Documents from across four corpora, with an empty one and one holding the separator."""
    picked = []
    for name in ("en-prose", "zh-prose", "code", "multilingual"):
        picked += [d.decode("utf-8", "surrogateescape") for d in corpus_documents(name, 15, 8)]
    picked[3:3] = ["", f"a document {EOT} with the separator inside"]
    return picked


def _expected(enc, texts, separator=None) -> list[int]:
    ids = []
    for text in texts:
        ids += enc.encode(text, allowed_special="all")
        if separator is not None:
            ids.append(separator)
    return ids


def _jsonl(path, texts, field="text"):
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"id": i, field: text}) + "\n")


def _parquet(path, texts, field="text", row_group_size=7):
    table = pa.table({"id": list(range(len(texts))), field: texts})
    pq.write_table(table, path, row_group_size=row_group_size)


def test_jsonl_parquet_and_text_files_give_tiktoken_ids(tmp_path, o200k, docs):
    enc, tok = o200k
    half = len(docs) // 2
    src = tmp_path / "corpus"
    src.mkdir()
    _jsonl(src / "a.jsonl", docs[:half])
    _parquet(src / "b.parquet", docs[half:])
    (src / "c.txt").write_text(docs[0] + docs[1], encoding="utf-8")
    for name, texts in [("a.jsonl", docs[:half]), ("b.parquet", docs[half:])]:
        out = tmp_path / f"{name}.npy"
        n = tok.encode_file(src / name, out, progress=False)
        got = numpy.load(out)
        assert got.dtype == numpy.uint32  # o200k's ids pass 65,535
        assert got.tolist() == _expected(enc, texts) and n == len(got), name
    sep = enc.eot_token
    n = tok.encode_file(src, tmp_path / "all.npy", document_separator=EOT, progress=False)
    want = _expected(enc, docs, sep) + _expected(enc, [docs[0] + docs[1]], sep)
    got = numpy.load(tmp_path / "all.npy").tolist()
    assert n == len(want) and got == want  # a directory: its files sorted, a .txt is one document


def test_small_chunks_and_row_groups_change_nothing(tmp_path, o200k, docs, monkeypatch):
    enc, tok = o200k
    _jsonl(tmp_path / "a.jsonl", docs)
    _parquet(tmp_path / "b.parquet", docs, row_group_size=3)
    monkeypatch.setattr(documents, "CHUNK_BYTES", 1000)
    for name in ("a.jsonl", "b.parquet"):
        chunks = list(documents.read_chunks(str(tmp_path / name)))
        assert len(chunks) > 5
        assert [t for c in chunks for t in c.texts] == docs
        tok.encode_file(tmp_path / name, tmp_path / "o.npy", document_separator=EOT)
        assert numpy.load(tmp_path / "o.npy").tolist() == _expected(enc, docs, enc.eot_token)


def test_globs_and_lists_expand_in_order(tmp_path, o200k):
    enc, tok = o200k
    for i in (2, 1, 3):
        _jsonl(tmp_path / f"part-{i}.jsonl", [f"document {i}"])
    (tmp_path / "notes.md").write_text("not matched")
    got = [os.path.basename(p) for p in documents.corpus_paths(str(tmp_path / "part-*.jsonl"))]
    assert got == ["part-1.jsonl", "part-2.jsonl", "part-3.jsonl"]
    tok.encode_file(tmp_path / "part-*.jsonl", tmp_path / "o.npy")
    want = _expected(enc, ["document 1", "document 2", "document 3"])
    assert numpy.load(tmp_path / "o.npy").tolist() == want


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json}", "c.jsonl:2: not valid JSON"),
        ('["a list"]', "c.jsonl:2: a JSON array, expected an object"),
        ('{"body": "x", "id": 1}', "c.jsonl:2: no field 'text'; the object has 'body', 'id'"),
        ('{"text": 7}', "c.jsonl:2: field 'text' is a JSON number, expected a string"),
        ('{"text": null}', "c.jsonl:2: field 'text' is a JSON null, expected a string"),
        ('{"text": false}', "c.jsonl:2: field 'text' is a JSON boolean, expected a string"),
        ('{"text": {"a": 1}}', "c.jsonl:2: field 'text' is a JSON object, expected a string"),
        ("7", "c.jsonl:2: a JSON number, expected an object"),
    ],
)
def test_a_bad_json_line_names_file_and_line(tmp_path, o200k, line, message):
    _, tok = o200k
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "fine"}\n' + line + '\n{"text": "after"}\n')
    with pytest.raises(CorpusError, match=message.replace("[", r"\[")):
        tok.encode_file(path, tmp_path / "o.npy")
    assert not (tmp_path / "o.npy").exists()  # nothing half-written
    assert os.listdir(tmp_path) == ["c.jsonl"]  # and no temporary left behind


def test_a_json_line_that_is_not_utf8_is_named_as_such(tmp_path, o200k):
    # JSON Lines are UTF-8 (jsonlines.org); json.loads on bytes would guess UTF-16 from
    # the first bytes and report a UTF-16 decoding error instead.
    _, tok = o200k
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "fine"}\n\xff\xfe{"text": "x"}\n')
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: not valid UTF-8 at byte 0 of the line"):
        tok.encode_file(path, tmp_path / "o.npy")
    # A UTF-8 byte order mark before the first line is read as without it, as by json.load.
    path.write_bytes(b'\xef\xbb\xbf{"text": "one"}\n{"text": "two"}\n')
    tok.encode_file(path, tmp_path / "o.npy")
    enc, _ = o200k
    assert numpy.load(tmp_path / "o.npy").tolist() == _expected(enc, ["one", "two"])


def test_encode_file_takes_a_list_of_files_directories_and_globs(tmp_path, o200k):
    # As train does, and bytepair encode with several corpora: the files in the order given.
    enc, tok = o200k
    (tmp_path / "a.txt").write_text("first file")
    _jsonl(tmp_path / "b.jsonl", ["second", "third"])
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "c.txt").write_text("fourth")
    corpus = [tmp_path / "b.jsonl", str(tmp_path / "a.txt"), tmp_path / "d"]
    tok.encode_file(corpus, tmp_path / "o.npy", document_separator=EOT)
    want = _expected(enc, ["second", "third", "first file", "fourth"], enc.eot_token)
    assert numpy.load(tmp_path / "o.npy").tolist() == want
    tok.encode_file([tmp_path / "a.txt"], tmp_path / "one.npy")  # one text file, in a list
    assert numpy.load(tmp_path / "one.npy").tolist() == enc.encode("first file")
    with pytest.raises(CorpusError, match="is the input file"):
        tok.encode_file(corpus, tmp_path / "a.txt")
    assert (tmp_path / "a.txt").read_text() == "first file"


def test_a_disallowed_special_token_is_placed_in_its_file(tmp_path):
    # Found in a terabyte of files, the token alone does not say where to look.
    from bytepair import Tokenizer

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>", "<t>"])
    (tmp_path / "a.txt").write_text("fine\nstill fine\nnot <t> fine\n<t>\n")
    _jsonl(tmp_path / "b.jsonl", ["ok", "ok <t", "x <t> y"])
    _parquet(tmp_path / "c.parquet", ["ok", "ok", "<t>"], row_group_size=2)
    refused = {"allowed_special": {"<s>"}, "disallowed_special": "all"}
    for name, where in [("a.txt", "a.txt:3"), ("b.jsonl", "b.jsonl:3"), ("c.parquet", "row 2")]:
        with pytest.raises(DisallowedSpecialError, match=rf"{where}\b.*special token '<t>'"):
            tok.encode_file(
                [tmp_path / name], tmp_path / "o.npy", document_separator="<s>", **refused
            )
    assert not (tmp_path / "o.npy").exists()


def test_blank_json_lines_hold_no_document(tmp_path, o200k):
    enc, tok = o200k
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "one"}\n\n  \t\r\n{"text": "two"}\n\n')
    tok.encode_file(path, tmp_path / "o.npy", document_separator=EOT)
    want = _expected(enc, ["one", "two"], enc.eot_token)
    assert numpy.load(tmp_path / "o.npy").tolist() == want
    path.write_text('{"text": "one"}\n\n \n{"text": 2}\n')
    with pytest.raises(CorpusError, match=r"c\.jsonl:4: field 'text' is a JSON number"):
        tok.encode_file(path, tmp_path / "o.npy")


def test_parquet_errors_name_the_column(tmp_path, o200k):
    _, tok = o200k
    pq.write_table(pa.table({"body": ["a"], "n": [1]}), tmp_path / "a.parquet")
    named = r"the columns are 'body', 'n' \(name the text column with text_field=, or --text-"
    with pytest.raises(CorpusError, match="no column 'text'; " + named):
        tok.encode_file(tmp_path / "a.parquet", tmp_path / "o.npy")
    with pytest.raises(CorpusError, match="column 'n' holds int64, expected strings"):
        tok.encode_file(tmp_path / "a.parquet", tmp_path / "o.npy", text_field="n")
    pq.write_table(pa.table({"text": ["a", None]}), tmp_path / "b.parquet")
    with pytest.raises(CorpusError, match="row 1 has no text"):
        tok.encode_file(tmp_path / "b.parquet", tmp_path / "o.npy")
    (tmp_path / "c.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(CorpusError, match=r"c\.parquet: not a readable Parquet file"):
        tok.encode_file(tmp_path / "c.parquet", tmp_path / "o.npy")


def test_parquet_text_as_dictionary_or_string_view_is_read(tmp_path, o200k):
    # pandas writes a category column as dictionary<string>; newer writers use
    # string_view. Both hold strings, read as the plain column.
    enc, tok = o200k
    texts = ["the cat", "sat", "the cat"]
    columns = {
        "dict": pa.array(texts).dictionary_encode(),
        "view": pa.array(texts, type=pa.string_view()),
        "large": pa.array(texts, type=pa.large_string()),
    }
    for name, column in columns.items():
        pq.write_table(pa.table({"text": column}), tmp_path / f"{name}.parquet")
        tok.encode_file(tmp_path / f"{name}.parquet", tmp_path / f"{name}.npy")
        assert numpy.load(tmp_path / f"{name}.npy").tolist() == _expected(enc, texts), name
    numbers = pa.array([1, 2]).dictionary_encode()  # Parquet keeps a dictionary of strings only
    pq.write_table(pa.table({"text": numbers}), tmp_path / "n.parquet")
    with pytest.raises(CorpusError, match="column 'text' holds int64, expected strings"):
        tok.encode_file(tmp_path / "n.parquet", tmp_path / "n.npy")


def test_text_field_and_separator_are_checked(tmp_path, o200k):
    enc, tok = o200k
    _jsonl(tmp_path / "a.jsonl", ["x", "y"], field="content")
    tok.encode_file(tmp_path / "a.jsonl", tmp_path / "o.npy", text_field="content")
    assert numpy.load(tmp_path / "o.npy").tolist() == _expected(enc, ["x", "y"])
    with pytest.raises(SpecialTokenError, match="'<sep>' is not a special token"):
        tok.encode_file(tmp_path / "a.jsonl", tmp_path / "o.npy", document_separator="<sep>")
    with pytest.raises(CorpusError, match="matches no files"):
        tok.encode_file(tmp_path / "*.parquet", tmp_path / "o.npy")
    with pytest.raises(TypeError, match="text_field must be a str naming the field, got 5"):
        tok.encode_file(tmp_path / "a.jsonl", tmp_path / "o.npy", text_field=5)


def _shard(tok, src, out, n, **kw):
    return token_shards.write(tok, src, out, n, document_separator=EOT, progress=False, **kw)


def test_shards_concatenate_to_the_ids_and_index_every_document(tmp_path, o200k, docs):
    enc, tok = o200k
    _jsonl(tmp_path / "a.jsonl", docs[:30])
    _parquet(tmp_path / "b.parquet", docs[30:])
    (tmp_path / "c.txt").write_text(docs[5], encoding="utf-8")
    src = [tmp_path / "a.jsonl", tmp_path / "b.parquet", tmp_path / "c.txt"]
    index = _shard(tok, src, tmp_path / "out", 1000)
    texts = [*docs, docs[5]]
    want = _expected(enc, texts, enc.eot_token)
    shards = [numpy.load(tmp_path / "out" / s["file"]) for s in index["shards"]]
    assert numpy.concatenate(shards).tolist() == want
    assert [len(s) for s in shards[:-1]] == [1000] * (len(shards) - 1)
    assert 0 < len(shards[-1]) <= 1000 and index["tokens"] == len(want)
    lengths = [len(enc.encode(t, allowed_special="all")) + 1 for t in texts]
    starts = numpy.load(tmp_path / "out" / "documents.npy")
    assert starts.tolist() == numpy.cumsum([0, *lengths[:-1]]).tolist()
    assert index["documents"] == len(texts)
    for d in (0, 7, len(texts) - 1):  # a loader seeks to document d through the index
        s = int(starts[d])
        assert shards[s // 1000][s % 1000] == want[s]
    assert sorted(os.listdir(tmp_path / "out")) == sorted(
        [*(s["file"] for s in index["shards"]), "documents.npy", "index.json"]
    )
    assert json.loads((tmp_path / "out" / "index.json").read_text()) == index


def test_a_killed_run_resumes_and_skips_finished_shards(tmp_path, o200k, docs, monkeypatch):
    _, tok = o200k
    _jsonl(tmp_path / "a.jsonl", docs[:25])
    (tmp_path / "b.txt").write_text("".join(docs[25:35]), encoding="utf-8")
    _parquet(tmp_path / "c.parquet", docs[35:], row_group_size=4)
    src = [tmp_path / "a.jsonl", tmp_path / "b.txt", tmp_path / "c.parquet"]
    monkeypatch.setattr(documents, "CHUNK_BYTES", 2000)
    monkeypatch.setattr(corpus_ids, "TEXT_SLICE", 500)  # the text file's document in slices
    whole = _shard(tok, src, tmp_path / "whole", 700)
    real = corpus_ids.stream

    resumed_at = []
    for stop_after in (2, 5, 9):  # in the .jsonl, in the text file's slices, in the .parquet
        out = tmp_path / f"run{stop_after}"

        def dying(*a, stop_after=stop_after, **kw):
            for i, piece in enumerate(real(*a, **kw)):
                if i == stop_after:
                    raise KeyboardInterrupt
                yield piece

        monkeypatch.setattr(corpus_ids, "stream", dying)
        with pytest.raises(KeyboardInterrupt):
            _shard(tok, src, out, 700)
        assert not (out / "index.json").exists()
        state = json.loads((out / ".progress.json").read_text())["next"]
        resumed_at.append((state["file"], state["skip"] > 0))
        finished = {n: os.stat(out / n).st_ino for n in os.listdir(out) if n.startswith("shard_")}
        monkeypatch.setattr(corpus_ids, "stream", real)
        again = _shard(tok, src, out, 700)
        assert again == whole
        for name in (s["file"] for s in whole["shards"]):
            assert numpy.array_equal(numpy.load(out / name), numpy.load(tmp_path / "whole" / name))
        recorded = json.loads((tmp_path / "whole" / "index.json").read_text())["shards"]
        assert len(recorded) == len(whole["shards"])
        assert numpy.array_equal(
            numpy.load(out / "documents.npy"), numpy.load(tmp_path / "whole" / "documents.npy")
        )
        assert not [n for n in os.listdir(out) if n.startswith(".")]  # no state, no temporaries
        state_kept = [n for n in finished if os.stat(out / n).st_ino == finished[n]]
        assert state_kept, "a resumed run rewrote every shard"
    assert (1, True) in resumed_at and {f for f, _ in resumed_at} == {0, 1, 2}, resumed_at
    assert _shard(tok, src, tmp_path / "whole", 700) == whole  # finished: nothing to do


def test_another_runs_directory_is_refused(tmp_path, o200k):
    _, tok = o200k
    _jsonl(tmp_path / "a.jsonl", ["one", "two"])
    _shard(tok, [tmp_path / "a.jsonl"], tmp_path / "out", 2)
    with pytest.raises(CorpusError, match="another run \\(its 'shard_tokens' differs\\)"):
        _shard(tok, [tmp_path / "a.jsonl"], tmp_path / "out", 3)
    _jsonl(tmp_path / "a.jsonl", ["one", "two", "three"])
    with pytest.raises(CorpusError, match="'sources' differs"):
        _shard(tok, [tmp_path / "a.jsonl"], tmp_path / "out", 2)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "shard_00000.npy").write_bytes(b"x")
    with pytest.raises(CorpusError, match=r"holds shard_00000\.npy but no index\.json"):
        _shard(tok, [tmp_path / "a.jsonl"], tmp_path / "other", 2)
    assert (tmp_path / "other" / "shard_00000.npy").read_bytes() == b"x"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "documents.npy").write_bytes(b"the user's")
    with pytest.raises(CorpusError, match=r"holds documents\.npy but no index\.json"):
        _shard(tok, [tmp_path / "a.jsonl"], tmp_path / "mine", 2)
    assert os.listdir(tmp_path / "mine") == ["documents.npy"]
    assert (tmp_path / "mine" / "documents.npy").read_bytes() == b"the user's"


def test_uint16_shards_when_the_vocab_fits(tmp_path, tiktoken_pair):
    enc, tok = tiktoken_pair("gpt2")
    _jsonl(tmp_path / "a.jsonl", ["hello world", "again"])
    index = _shard(tok, [tmp_path / "a.jsonl"], tmp_path / "out", 3)
    assert index["dtype"] == "uint16"
    ids = numpy.concatenate([numpy.load(tmp_path / "out" / s["file"]) for s in index["shards"]])
    assert ids.dtype == numpy.uint16
    assert ids.tolist() == _expected(enc, ["hello world", "again"], enc.eot_token)


def test_shards_follow_the_special_token_policy(tmp_path, tiktoken_pair):
    enc, tok = tiktoken_pair("gpt2")
    _jsonl(tmp_path / "a.jsonl", [f"one{EOT}two"])
    (tmp_path / "b.txt").write_text(f"three{EOT}")
    src = [tmp_path / "a.jsonl", tmp_path / "b.txt"]

    def ids(out, **policy):
        index = token_shards.write(tok, src, tmp_path / out, 100, progress=False, **policy)
        return numpy.concatenate([numpy.load(tmp_path / out / s["file"]) for s in index["shards"]])

    texts = [f"one{EOT}two", f"three{EOT}"]
    as_special = [i for t in texts for i in enc.encode(t, allowed_special="all")]
    as_text = [i for t in texts for i in enc.encode(t, disallowed_special=())]
    assert enc.eot_token in as_special and enc.eot_token not in as_text
    assert ids("default").tolist() == as_special
    assert ids("text", allowed_special=set(), disallowed_special=()).tolist() == as_text
    with pytest.raises(DisallowedSpecialError, match="<\\|endoftext\\|>"):
        ids("refused", allowed_special=set(), disallowed_special="all")
    with pytest.raises(CorpusError, match="'allowed_special' differs"):
        ids("default", allowed_special=set(), disallowed_special=())


@contextlib.contextmanager
def _stopped_at_piece(n: int, monkeypatch):
    """Runs the block with corpus_ids.stream interrupted (Ctrl-C) before its piece ``n``,
    and expects the KeyboardInterrupt; the real stream is back afterwards."""
    real = corpus_ids.stream

    def dying(*a, **kw):
        for i, piece in enumerate(real(*a, **kw)):
            if i == n:
                raise KeyboardInterrupt
            yield piece

    monkeypatch.setattr(corpus_ids, "stream", dying)
    with pytest.raises(KeyboardInterrupt):
        yield
    monkeypatch.setattr(corpus_ids, "stream", real)


def _interrupted_run(tok, src, out, monkeypatch):
    """Shards of ``src`` under ``out`` from a run stopped after two shards were recorded."""
    monkeypatch.setattr(documents, "CHUNK_BYTES", 20)
    with _stopped_at_piece(6, monkeypatch):
        _shard(tok, src, out, 8)
    assert len(json.loads((out / ".progress.json").read_text())["shards"]) >= 2


DAMAGES = {
    "progress {}": (".progress.json", lambda p: p.write_text("{}")),
    "progress []": (".progress.json", lambda p: p.write_text("[]")),
    "progress key": (
        ".progress.json",
        lambda p: p.write_text(
            json.dumps({**json.loads(p.read_text()), "next": {"file": 0, "extra": 1}})
        ),
    ),
    "progress run": (
        ".progress.json",
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "run": []})),
    ),
    "partial missing": (".documents.partial", lambda p: p.unlink()),
    "partial truncated": (".documents.partial", lambda p: p.write_bytes(p.read_bytes()[:8])),
    "shard deleted": ("shard_00001.npy", lambda p: p.unlink()),
    "shard truncated": ("shard_00001.npy", lambda p: p.write_bytes(p.read_bytes()[:-2])),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_resume_state_is_refused_naming_the_file(tmp_path, o200k, monkeypatch, damage):
    _, tok = o200k
    _jsonl(tmp_path / "a.jsonl", [f"document number {i} of twelve" for i in range(12)])
    out = tmp_path / "out"
    _interrupted_run(tok, [tmp_path / "a.jsonl"], out, monkeypatch)
    name, edit = DAMAGES[damage]
    edit(out / name)
    with pytest.raises(CorpusError, match=f"{name}.*remove the directory .*out to start over"):
        _shard(tok, [tmp_path / "a.jsonl"], out, 8)
    assert not (out / "index.json").exists()


@pytest.mark.parametrize(
    "name, edit",
    [
        ("index.json", lambda p: p.write_text("[]")),
        ("index.json", lambda p: p.write_text("{not json")),
        ("shard_00001.npy", lambda p: p.unlink()),
        ("shard_00001.npy", lambda p: p.write_bytes(p.read_bytes()[:-2])),
        ("documents.npy", lambda p: p.write_bytes(p.read_bytes()[:-8])),
    ],
)
def test_a_damaged_finished_run_is_refused_naming_the_file(tmp_path, o200k, name, edit):
    _, tok = o200k
    _jsonl(tmp_path / "a.jsonl", [f"document number {i} of twelve" for i in range(12)])
    out = tmp_path / "out"
    index = _shard(tok, [tmp_path / "a.jsonl"], out, 8)
    assert len(index["shards"]) > 2
    edit(out / name)
    with pytest.raises(CorpusError, match=f"{name}.*remove the directory .*out to start over"):
        _shard(tok, [tmp_path / "a.jsonl"], out, 8)


# Encodes a text file as one document of a corpus (its ids staged in a temporary .npy and
# read back in slices, then the separator), then prints the peak RSS in KB: VmHWM, not
# ru_maxrss, which keeps the peak of the process that forked it (pytest's).
PEAK_OF_DOCUMENTS = """
import re, sys, bytepair
tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])
n = tok.encode_file(sys.argv[1], sys.argv[1] + ".npy", document_separator="<s>", progress=False)
status = open("/proc/self/status").read()
print(n, re.search(r"VmHWM:\\s+(\\d+)", status).group(1))
"""


def _count_and_peak(script: str, path) -> tuple[int, int]:
    """What ``script`` prints about ``path`` in a fresh process: a count and a peak."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    n, peak = map(int, out.stdout.split())
    return n, peak


def test_a_text_files_ids_are_read_back_in_flat_memory(tmp_path):
    """A text file's staged ids are read back slice by slice: 10x the file (36 MB more ids,
    which a mapping of the staged file would keep resident as it is read) may cost at most
    16 MB more."""
    peaks = []
    for mb in (4, 40):
        path = tmp_path / f"{mb}.txt"
        path.write_bytes(b"the ids of one byte each \n" * (mb * 40_000))
        n, peak = _count_and_peak(PEAK_OF_DOCUMENTS, path)
        # A byte-level vocab: one id per byte, then the separator.
        assert n == path.stat().st_size + 1
        peaks.append(peak)
    assert peaks[1] <= peaks[0] + 16_000, peaks


def test_progress_moves_through_a_text_file_as_it_is_encoded(tmp_path):
    """A text file in a corpus reports its bytes as the core encodes them (1 MB at a time),
    not once at the end: a bar over one large text file is not stuck at 0% for its whole
    run. The last report is the corpus's size on disk."""
    from bytepair import Tokenizer

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])
    (tmp_path / "a.jsonl").write_text('{"text": "first"}\n')
    (tmp_path / "b.txt").write_bytes(b"the ids of one byte each \n" * 160_000)  # 4.16 MB
    first = os.path.getsize(tmp_path / "a.jsonl")
    total = first + os.path.getsize(tmp_path / "b.txt")
    reports: list[int] = []
    paths = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.txt")]
    for _ in corpus_ids.stream(tok, paths, separator=256, on_progress=reports.append):
        pass
    inside = [r for r in reports if first < r < total]
    assert len(inside) >= 3, reports
    assert reports == sorted(reports) and reports[-1] == total, reports


def test_a_run_killed_once_its_first_shard_is_whole_resumes(tmp_path, monkeypatch):
    """A run stopped after its first shard was renamed into place, before the next ids came
    (the shard ended with a piece), left shard_00000.npy and no state: the rerun refused the
    directory as another run's. It resumes, to the documents' bytes each followed by <s>."""
    from bytepair import Tokenizer

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])
    texts = ["abcd", "efgh", "ij"]
    _jsonl(tmp_path / "a.jsonl", texts)
    real = corpus_ids.stream

    def one_piece(*a, **kw):
        yield next(real(*a, **kw))
        raise KeyboardInterrupt

    monkeypatch.setattr(documents, "CHUNK_BYTES", 1)  # a piece per document: 5 ids
    monkeypatch.setattr(corpus_ids, "stream", one_piece)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        token_shards.write(tok, tmp_path / "a.jsonl", out, 5, document_separator="<s>")
    assert (out / "shard_00000.npy").exists()
    monkeypatch.setattr(corpus_ids, "stream", real)
    index = token_shards.write(tok, tmp_path / "a.jsonl", out, 5, document_separator="<s>")
    got = numpy.concatenate([numpy.load(out / s["file"]) for s in index["shards"]])
    assert got.tolist() == [*b"abcd", 256, *b"efgh", 256, *b"ij", 256]
    assert numpy.load(out / "documents.npy").tolist() == [0, 5, 10]


def test_an_empty_document_at_a_shard_boundary_keeps_its_start_on_resume(tmp_path, monkeypatch):
    """Without a separator an empty document has no ids. One that begins a shard was left
    out of the resume state's position (the next document's) while its start was not yet
    counted, so a resumed run lost it from documents.npy. By hand: 4, 4, 0, 2, 2 bytes."""
    from bytepair import Tokenizer

    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    _jsonl(tmp_path / "a.jsonl", ["abcd", "efgh", "", "ij", "kl"])
    monkeypatch.setattr(documents, "CHUNK_BYTES", 1)
    out = tmp_path / "out"
    # Pieces: [abcd], [efgh], ["", ij], [kl]; stopped before the last.
    with _stopped_at_piece(3, monkeypatch):
        token_shards.write(tok, tmp_path / "a.jsonl", out, 8)
    index = token_shards.write(tok, tmp_path / "a.jsonl", out, 8)
    assert numpy.load(out / "documents.npy").tolist() == [0, 4, 8, 8, 10]
    assert index["documents"] == 5


# Reads every document of a Parquet file (sys.argv[1]), then prints how many and the peak
# RSS in KB: VmHWM, not ru_maxrss, which keeps the peak of the process that forked it.
PEAK_OF_PARQUET = """
import re, sys
from bytepair import documents
n = sum(len(chunk.texts) for chunk in documents.read_chunks(sys.argv[1]))
status = open("/proc/self/status").read()
print(n, re.search(r"VmHWM:\\s+(\\d+)", status).group(1))
"""


def test_a_large_row_group_is_read_in_batches(tmp_path):
    """pyarrow writes up to 1M rows to a row group by default: gigabytes of web text. The
    rows of one 40 MB group, read as Python strings all at once, cost ~4x the group;
    read in batches, less than the group more than the same rows in 40 groups."""
    texts = [f"document {i} " + "lorem ipsum dolor sit amet " * 40 for i in range(40_000)]
    size = sum(map(len, texts))
    assert size > 40_000_000
    peaks = []
    for groups in (40, 1):
        path = tmp_path / f"{groups}.parquet"
        pq.write_table(pa.table({"text": texts}), path, row_group_size=len(texts) // groups)
        assert pq.ParquetFile(path).metadata.num_row_groups == groups
        n, peak = _count_and_peak(PEAK_OF_PARQUET, path)
        assert n == len(texts)
        peaks.append(peak)
    assert peaks[1] <= peaks[0] + size // 1000, (peaks, size)
