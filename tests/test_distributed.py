"""engine="ray": chunks (byte ranges of the input files), checkpoints, and training and
encoding on a local Ray cluster.

The cluster is started once for the module (about 10 s on the 2-core machine). Expected
results come from the local engine, and counts from ``bytepair.reference``.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections import Counter
from pathlib import Path

import bytepair
import pytest
from bytepair import checkpoint, distributed, reference
from bytepair.errors import CorpusError, FormatError
from bytepair.shards import expand_inputs, plan_shards
from conftest import corpus_sample
from hypothesis import given
from hypothesis import strategies as st

EOT = "<|endoftext|>"


def write(path, data: bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def shard_counts(shards, pattern="gpt2", special_tokens=()) -> Counter:
    total: Counter = Counter()
    for s in shards:
        with open(s.path, "rb") as f:
            f.seek(s.start)
            total.update(reference.count_pretokens(f.read(s.nbytes), pattern, special_tokens))
    return total


# -- chunks --------------------------------------------------------------------------------


def test_chunks_cover_each_file_and_cut_before_special_tokens(tmp_path):
    data = corpus_sample("en-prose", 150_000).replace(b"\n\n\n", b"\n" + EOT.encode())
    path = write(tmp_path / "a.txt", data)
    shards = plan_shards([path], [EOT], shard_bytes=10_000)
    assert len(shards) > 5
    assert shards[0].start == 0 and shards[-1].end == len(data)
    assert all(a.end == b.start for a, b in itertools.pairwise(shards))
    assert all(data[s.start :].startswith(EOT.encode()) for s in shards[1:])
    assert shard_counts(shards, "gpt2", [EOT]) == reference.count_pretokens(data, "gpt2", [EOT])


def test_a_cut_never_splits_a_longer_special_token():
    # "ab" at 2 straddles offset 3, where "bc" starts: the matcher takes "ab" there, so 3 is
    # no boundary; "bc" at 7 is the first safe cut at or after offset 3.
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = write(os.path.join(d, "x.txt"), b"xxabcxxbcx")
        assert [(s.start, s.end) for s in plan_shards([path], ["ab", "bc"], 3)] == [
            (0, 7),
            (7, 10),
        ]


def test_newline_cuts_keep_counts_without_special_tokens(tmp_path):
    data = corpus_sample("code", 120_000) + b"\xff\xfe tail  \n\n  x\n"
    path = write(tmp_path / "code.py", data)
    shards = plan_shards([path], [], shard_bytes=7_000)
    assert len(shards) > 5
    for pattern in ("gpt2", "cl100k", "o200k"):
        assert shard_counts(shards, pattern) == reference.count_pretokens(data, pattern)
    assert len(plan_shards([path], [], shard_bytes=7_000, pattern=r"\S+|\s+")) == 1


def test_superword_shards_cut_only_at_digits(tmp_path):
    # Its pieces span spaces and newlines: the built-in rule's cuts would change counts.
    data = corpus_sample("en-prose", 120_000) + b" 12345\xff 6 \n\n"
    path = write(tmp_path / "prose.txt", data)
    shards = plan_shards([path], [], shard_bytes=7_000, pattern="superword")
    assert len(shards) > 5
    for s in shards[1:]:
        assert (data[s.start - 1 : s.start].isdigit()) != (data[s.start : s.start + 1].isdigit())
    pattern = bytepair.patterns.SUPERWORD
    assert shard_counts(shards, pattern) == reference.count_pretokens(data, pattern)


@given(st.text(alphabet="ab \n\t!<|>é", max_size=300), st.integers(1, 40))
def test_chunk_counts_equal_whole_counts(text, shard_bytes):
    import tempfile

    data = text.replace("<|", "<|e|>").encode("utf-8")
    with tempfile.TemporaryDirectory() as d:
        path = write(os.path.join(d, "t.txt"), data)
        for specials in ([], ["<|e|>", "<|e|><|e|>", "|>"]):
            shards = plan_shards([path], specials, shard_bytes)
            assert shard_counts(shards, "gpt2", specials) == reference.count_pretokens(
                data, "gpt2", specials
            )


def test_inputs_expand_directories_and_globs(tmp_path):
    a = write(tmp_path / "d" / "a.txt", b"a")
    b = write(tmp_path / "d" / "sub" / "b.txt", b"b")
    write(tmp_path / "d" / ".hidden", b"h")
    c = write(tmp_path / "c.md", b"c")
    assert expand_inputs([tmp_path / "d"]) == sorted([a, b])
    assert expand_inputs(str(tmp_path / "*.md")) == [c]
    assert expand_inputs([c, str(tmp_path / "**" / "*.txt")]) == sorted([a, b, c])


def test_missing_inputs_are_corpus_errors(tmp_path):
    with pytest.raises(CorpusError, match=r"nope\.txt"):
        expand_inputs([tmp_path / "nope.txt"])
    with pytest.raises(CorpusError, match=r"\*\.zip"):
        expand_inputs([str(tmp_path / "*.zip")])


def header_of(path) -> dict:
    raw = Path(path).read_bytes()
    return json.loads(raw[16 : 16 + int.from_bytes(raw[12:16], "little")])


# -- checkpoints ---------------------------------------------------------------------------

KEY = {"path": "/c/a.txt", "start": 0, "end": 99, "pattern": "x", "special_tokens": []}


def test_checkpoint_round_trip_layout_and_no_temp_files(tmp_path):
    path = checkpoint.write(tmp_path, KEY, b"\x00counts\xff", words=7)
    assert os.listdir(tmp_path) == [os.path.basename(path)]
    assert path.endswith(".counts") and len(os.path.basename(path)) == 64 + len(".counts")
    raw = Path(path).read_bytes()
    assert raw[:8] == b"BPCOUNT\n" and raw[8:12] == (1).to_bytes(4, "little")
    hlen = int.from_bytes(raw[12:16], "little")
    header = json.loads(raw[16 : 16 + hlen])
    assert header["key"] == KEY and header["words"] == 7 and header["payload_bytes"] == 8
    assert raw[16 + hlen :] == b"\x00counts\xff"
    assert checkpoint.read(path, KEY) == (b"\x00counts\xff", header)


def test_checkpoint_name_depends_on_every_key_field():
    names = {checkpoint.file_name(KEY)}
    for field, value in [("path", "/c/b.txt"), ("start", 1), ("end", 98), ("pattern", "y")]:
        names.add(checkpoint.file_name({**KEY, field: value}))
    names.add(checkpoint.file_name({**KEY, "special_tokens": [EOT]}))
    assert len(names) == 6


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda raw: b"NOTMAGIC" + raw[8:], "not a bytepair checkpoint"),
        (lambda raw: raw[:8] + (2).to_bytes(4, "little") + raw[12:], "version 2"),
        (lambda raw: raw[:-1], "truncated or damaged"),
        (lambda raw: raw[:-1] + b"X", "truncated or damaged"),
    ],
)
def test_damaged_checkpoints_are_format_errors(tmp_path, damage, message):
    path = checkpoint.write(tmp_path, KEY, b"payload", words=1)
    raw = Path(path).read_bytes()
    with open(path, "wb") as f:
        f.write(damage(raw))
    with pytest.raises(FormatError, match=message):
        checkpoint.read(path, KEY)


def test_checkpoint_of_another_key_is_rejected(tmp_path):
    path = checkpoint.write(tmp_path, KEY, b"payload", words=1)
    with pytest.raises(FormatError, match="expected"):
        checkpoint.read(path, {**KEY, "end": 100})


def test_missing_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install bytepair\[ray\]"):
        distributed.require_ray()


# -- on a local Ray cluster ----------------------------------------------------------------


class Killed(Exception):
    """Stands for the driver dying mid-run."""


@pytest.fixture(scope="module")
def ray_cluster():
    import logging

    ray = distributed.require_ray()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory) -> Path:
    """Four files of three corpora; en-prose with a document separator at each blank line
    run, zh-prose with invalid UTF-8 mixed in."""
    d = tmp_path_factory.mktemp("corpus")
    en = corpus_sample("en-prose", 240_000).replace(b"\n\n\n", b"\n" + EOT.encode())
    write(d / "en" / "a.txt", en[:120_000])
    write(d / "en" / "b.txt", en[120_000:])
    write(d / "code.py", corpus_sample("code", 60_000))
    zh = corpus_sample("zh-prose", 60_000)
    write(d / "zh.txt", zh[:30_000] + b"\xff\xc3(" + EOT.encode() + zh[30_001:])
    return d


def local_merges(corpus_dir, vocab_size=500):
    tok = bytepair.train(expand_inputs([corpus_dir]), vocab_size, [EOT], progress=False)
    return tok.merges


def test_ray_counts_equal_local_counts_byte_for_byte(ray_cluster, corpus_dir):
    from bytepair import _core

    files = expand_inputs([corpus_dir])
    shards = plan_shards(files, [EOT], 20_000)
    assert len(shards) > len(files) + 5  # byte ranges, not only whole files
    local = _core.PretokenCounts()
    _core.PretokenCounter(reference_pattern(), [EOT]).count_files(local, files)
    for fan_in in (2, 5):
        ray_counts = distributed.count(
            [corpus_dir], "gpt2", [EOT], shard_bytes=20_000, fan_in=fan_in, progress=False
        )
        assert ray_counts.to_bytes() == local.to_bytes()


def reference_pattern() -> str:
    from bytepair import patterns

    return patterns.resolve("gpt2")


def test_engine_ray_gives_the_local_engines_merges(ray_cluster, corpus_dir):
    tok = bytepair.train([corpus_dir], 500, [EOT], progress=False, engine="ray")
    assert len(tok.merges) == 500 - 257
    assert tok.merges == local_merges(corpus_dir)
    assert tok.special_tokens == {EOT: 499}
    text = "The cat sat.\n"
    assert tok.decode(tok.encode(text)) == text


def test_a_killed_run_resumes_counting_only_the_unfinished_chunks(
    ray_cluster, corpus_dir, tmp_path
):
    ck = tmp_path / "checkpoints"
    opts = {"shard_bytes": 30_000, "progress": False, "checkpoint_dir": ck}
    shards = plan_shards([corpus_dir], [EOT], 30_000)
    assert len(shards) >= 8
    first: list = []

    def die_after_three(report):
        first.append(report)
        if len(first) == 3:
            raise Killed

    with pytest.raises(Killed):
        distributed.train(
            [corpus_dir], 500, [EOT], on_shard=die_after_three, max_in_flight=1, **opts
        )
    assert len(os.listdir(ck)) == 3  # one task in flight: exactly the three that finished

    second: list = []
    tok = distributed.train([corpus_dir], 500, [EOT], on_shard=second.append, **opts)
    loaded = {r.shard for r in second if not r.counted}
    counted = {r.shard for r in second if r.counted}
    assert loaded == {r.shard for r in first}
    assert counted == set(shards) - loaded
    assert tok.merges == local_merges(corpus_dir)
    assert len(os.listdir(ck)) == len(shards)

    # A changed file invalidates exactly its own checkpoints; a damaged one is recounted.
    code = corpus_dir / "code.py"
    os.utime(code, ns=(os.stat(code).st_atime_ns, os.stat(code).st_mtime_ns + 1))
    victim = next(p for p in sorted(ck.iterdir()) if header_of(p)["key"]["path"] != str(code))
    victim.write_bytes(victim.read_bytes()[:-1])
    third: list = []
    with pytest.warns(UserWarning, match="truncated or damaged"):
        tok = distributed.train([corpus_dir], 500, [EOT], on_shard=third.append, **opts)
    recounted = [r for r in third if r.counted]
    assert {r.shard.path for r in recounted if not r.rejected_checkpoint} == {str(code)}
    assert len([r for r in recounted if r.rejected_checkpoint]) == 1
    assert tok.merges == local_merges(corpus_dir)


def test_checkpoints_depend_on_pattern_and_special_tokens(ray_cluster, corpus_dir, tmp_path):
    opts = {"shard_bytes": 60_000, "progress": False, "checkpoint_dir": tmp_path}
    distributed.count([corpus_dir], "gpt2", [EOT], **opts)
    for pattern, specials in [("cl100k", [EOT]), ("gpt2", [])]:
        reports: list = []
        distributed.count([corpus_dir], pattern, specials, on_shard=reports.append, **opts)
        assert reports and all(r.counted for r in reports)


def test_engine_ray_rejects_text_input_and_bad_vocab_size_before_counting(ray_cluster):
    with pytest.raises(CorpusError, match="engine='local'"):
        bytepair.train(["just some text"], 300, engine="ray", progress=False)
    with pytest.raises(bytepair.VocabSizeError):
        bytepair.train(["/nonexistent"], 100, engine="ray", progress=False)


def test_encode_files_writes_one_npy_per_input_and_a_manifest(ray_cluster, corpus_dir, tmp_path):
    import numpy as np

    tok = bytepair.train(expand_inputs([corpus_dir]), 400, [EOT], progress=False)
    out = tmp_path / "out"
    entries = distributed.encode_files(tok, [corpus_dir], out, engine="ray")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"] == entries
    assert sorted(e["file"] for e in entries) == expand_inputs([corpus_dir])
    assert {e["out"] for e in entries} == {
        "en/a.txt.npy",
        "en/b.txt.npy",
        "code.py.npy",
        "zh.txt.npy",
    }
    for e in entries:
        ids = np.load(out / e["out"])
        expected = tok.encode_bytes(Path(e["file"]).read_bytes(), allowed_special="all")
        assert ids.tolist() == expected
        assert e["tokens"] == len(expected) and e["dtype"] == "uint16"
    assert distributed.encode_files(tok, [corpus_dir], tmp_path / "o2", engine="local") == entries


def test_encode_files_keeps_a_rank_table_tokenizer_in_rank_mode(ray_cluster, tmp_path):
    import numpy as np

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    tok = bytepair.Tokenizer(vocab, None, special_tokens=["<s>"])
    rebuilt = distributed._rebuild(distributed._portable(tok))  # the core's encoder: no pickle
    assert rebuilt._rank_mode and rebuilt.vocab == tok.vocab
    assert rebuilt.special_tokens == tok.special_tokens == {"<s>": 259}
    path = write(tmp_path / "in" / "t.txt", b"abc abcd<s>zabc")
    entries = distributed.encode_files(tok, [path], tmp_path / "out", engine="ray")
    ids = np.load(tmp_path / "out" / entries[0]["out"]).tolist()
    assert ids == tok.encode_bytes(b"abc abcd<s>zabc", allowed_special="all")
    assert 259 in ids


def test_cli_train_engine_ray_with_checkpoints(ray_cluster, corpus_dir, tmp_path, capsys):
    from bytepair import cli

    out, ck = tmp_path / "tok.json", tmp_path / "ck"
    argv = ["train", str(corpus_dir), "-o", str(out), "--vocab-size", "500"]
    argv += ["--special-token", EOT, "--engine", "ray", "--checkpoint-dir", str(ck), "-q"]
    assert cli.main(argv) == 0
    assert bytepair.Tokenizer.load(out).merges == local_merges(corpus_dir)
    assert len(os.listdir(ck)) == len(plan_shards([corpus_dir], [EOT]))  # one per file
    assert cli.main([*argv[:6], "--checkpoint-dir", str(ck)]) == 2
    assert "--checkpoint-dir needs --engine ray" in capsys.readouterr().err
