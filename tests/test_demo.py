"""`make demo` (python -m bytepair.cli.demo): trains on the standard library or given files,
saves the tokenizer, prints the figures it promises and a passing round-trip check."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import bytepair
from bytepair.cli import demo
from conftest import corpus_sample


def run_demo(*args, cwd) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "bytepair.cli.demo", *map(str, args)],
        capture_output=True,
        cwd=cwd,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    return proc.stdout.decode()


def test_demo_on_the_standard_library(tmp_path):
    out = run_demo("--vocab-size", 300, "--max-bytes", 150_000, cwd=tmp_path)
    assert "standard library" in out
    for line in (
        "training time",
        "vocab size         300",
        "bytes/token",
        "held-out",
        "sample:",
        "def read_config(path):",
    ):
        assert line in out, out
    assert out.rstrip().endswith("OK"), out
    tok = bytepair.Tokenizer.load(tmp_path / "demo-out" / "tokenizer.json")
    assert tok.vocab_size == 300
    assert tok.special_tokens == {"<|endoftext|>": 299}
    # The sample's ids, as printed, decode to the sample.
    lines = out.splitlines()
    ids_line = lines[lines.index(next(x for x in lines if x.startswith("sample:"))) + 3]
    assert tok.decode([int(x) for x in ids_line.split()]) == demo.SAMPLE


def test_demo_on_given_files(tmp_path):
    corpus = tmp_path / "prose.txt"
    corpus.write_bytes(corpus_sample("en-prose", 80_000))
    out = run_demo(corpus, "--vocab-size", 290, "--out", tmp_path / "here", cwd=tmp_path)
    assert str(corpus) in out
    assert "def read_config" not in out  # the sample comes from the held-out prose
    assert out.rstrip().endswith("OK"), out
    assert bytepair.Tokenizer.load(tmp_path / "here" / "tokenizer.json").vocab_size == 290


def test_demo_rejects_a_missing_file(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bytepair.cli.demo", str(tmp_path / "nope.txt")],
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert b"nope.txt" in proc.stderr and b"Traceback" not in proc.stderr


def test_stdlib_selection_is_the_standard_library_code():
    root = Path(sysconfig.get_paths()["stdlib"])
    files = demo.stdlib_files()
    assert len(files) > 100
    assert all(f.suffix == ".py" and root in f.parents for f in files)
    assert not any({"site-packages", "test"} & set(f.relative_to(root).parts) for f in files)
    chosen = demo.pick(files, 200_000)
    assert chosen == demo.pick(files, 200_000), "the subset is fixed"
    total = sum(os.path.getsize(f) for f in chosen)
    assert 180_000 <= total <= 200_000
