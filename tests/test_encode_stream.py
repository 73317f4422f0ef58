"""Streams and files are cut into chunks encoded separately; the ids never change."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest
from bytepair import CorpusError, DisallowedSpecialError, Tokenizer
from conftest import CORPORA, corpus_sample
from hypothesis import example, given
from hypothesis import strategies as st

# An alphabet that hits every cut rule: spaces and newlines next to letters, digits,
# punctuation, apostrophes (contractions), other whitespace, CJK and special-token text.
_alphabet = st.sampled_from(
    [
        " ",
        "  ",
        "\n",
        "\n\n",
        " \n",
        "\r\n",
        "\t",
        "a",
        "B",
        "z",
        "'",
        "'s",
        "'ll",
        "7",
        "42",
        ".",
        "!",
        "/",
        "é",
        "的",
        "\u00a0",
        "\u3000",
        "<|endoftext|>",
        "<|endof",
        "text|>",
    ]
)
texts = st.lists(_alphabet, max_size=40).map("".join)


@pytest.fixture(scope="session")
def toks(tiktoken_pair):
    return {name: tiktoken_pair(name)[1] for name in ("gpt2", "cl100k_base", "o200k_base")}


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@given(text=texts, cuts=st.lists(st.integers(0, 400), max_size=8))
# Found by the fuzz profile: o200k glues "/" to the newline after punctuation (".\n/").
@example(text=".\n/   <|endoftext|>", cuts=[])
def test_property_stream_equals_whole(toks, name, text, cuts):
    tok = toks[name]
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    want = tok.encode(text, allowed_special="all")
    assert list(tok.encode_iterable(chunks, allowed_special="all")) == want
    # One character per chunk: every position is offered as a cut.
    assert list(tok.encode_iterable(list(text), allowed_special="all")) == want


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_stream_of_corpus_lines_equals_whole(toks, name):
    tok = toks[name]
    for corpus in CORPORA:
        text = corpus_sample(corpus, 40_000).decode("utf-8", errors="replace")
        lines = text.splitlines(keepends=True)
        got = list(tok.encode_iterable(lines, allowed_special="all"))
        assert got == tok.encode(text, allowed_special="all"), corpus


@pytest.mark.parametrize("name", ["gpt2", "o200k_base"])
def test_stream_of_byte_blocks_equals_encode_bytes(toks, name):
    """Blocks of a binary file: characters split between blocks, invalid UTF-8 kept."""
    tok = toks[name]
    data = b"".join(corpus_sample(c, 3_000) for c in CORPORA)
    data = data[:1000] + b"\xff\xfe \xe4\xbd" + data[1000:] + b"\xf0\x9f"
    want = tok.encode_bytes(data, allowed_special="all")
    for size in (1, 2, 3, 7, 1000):
        blocks = [data[i : i + size] for i in range(0, len(data), size)]
        assert list(tok.encode_iterable(blocks, allowed_special="all")) == want, size


def test_stream_joins_a_surrogate_pair_split_between_chunks(tiktoken_pair):
    # A str from UTF-16 (JSON "\\ud83d\\ude00", a Windows API) may hold U+1F600 as two
    # code units; tiktoken joins such a pair into the one character before encoding.
    enc, tok = tiktoken_pair("cl100k_base")
    want = enc.encode("\U0001f600 x")
    assert enc.encode("\ud83d\ude00 x") == want
    assert list(tok.encode_iterable(["\ud83d", "\ude00 x"])) == want
    assert list(tok.encode_iterable(["a \ud83d", "", "\ude00 x"])) == enc.encode("a \U0001f600 x")
    # A high surrogate with no low one after it stays lone: U+FFFD, at the end or before bytes.
    assert list(tok.encode_iterable(["x\ud83d"])) == enc.encode("x\ufffd")
    assert list(tok.encode_iterable(["x\ud83d", b"y"])) == enc.encode("x\ufffdy")


def test_stream_with_a_custom_pattern(toks):
    tok = Tokenizer(
        {i: bytes([i]) for i in range(256)} | {256: b"ab"},
        [(b"a", b"b")],
        pattern=r"\w+|\s+|[^\w\s]+",
    )
    text = "ab abab\nab, ab"
    assert list(tok.encode_iterable(list(text))) == tok.encode(text)


def test_stream_disallowed_special_across_chunks_raises(toks):
    tok = toks["cl100k_base"]
    with pytest.raises(DisallowedSpecialError):
        list(tok.encode_iterable(["hello <|endof", "text|> world"]))


def test_stream_runs_under_a_tight_address_space_limit(tmp_path):
    """As CS336's memory test means to: no thread pool, no whole-text buffer, so the address
    space may grow by at most 4 MB while streaming a 5 MB file (a pool of two threads needs 16 MB of
    stacks alone; Python itself takes 1 MB arenas)."""
    data = b"".join(corpus_sample(c, 1_000_000) for c in CORPORA)
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    script = f"""
import resource, sys
from bytepair import Tokenizer
vocab = {{i: bytes([i]) for i in range(256)}} | {{256: b"th", 257: b"the", 258: b" the"}}
tok = Tokenizer(vocab, [(b"t", b"h"), (b"th", b"e"), (b" ", b"the")], ["<|endoftext|>"])
want = tok.encode_bytes(open({str(path)!r}, "rb").read()[:2000], disallowed_special=())
def vm():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
limit = vm() + 4_000_000
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
n = 0
with open({str(path)!r}, encoding="utf-8", errors="replace") as f:
    for _ in tok.encode_iterable(f, disallowed_special=()):
        n += 1
print(n)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout) > len(data) // 4


# -- encode_file -----------------------------------------------------------------------------


def _mixed_corpus(nbytes_each: int) -> bytes:
    parts = [corpus_sample(c, nbytes_each) for c in CORPORA]
    # Special tokens between documents, invalid UTF-8, and long lines with no newline.
    return b"<|endoftext|>".join(parts) + b"\xff\xfe tail \xc3" + b" word" * 30_000


@pytest.mark.parametrize(
    ("name", "dtype"), [("gpt2", np.uint16), ("cl100k_base", np.uint32), ("o200k_base", np.uint32)]
)
def test_encode_file_equals_encode_bytes(toks, tmp_path, name, dtype):
    tok = toks[name]
    data = _mixed_corpus(500_000)  # > 2 MB: several 1 MB chunks, cut in parallel
    src, out = tmp_path / "in.txt", tmp_path / "ids.npy"
    src.write_bytes(data)
    seen = []
    n = tok.encode_file(src, out, threads=2, progress=lambda done, total: seen.append(done))
    ids = np.load(out)
    assert ids.dtype == dtype
    want = tok.encode_bytes(data, allowed_special="all")
    assert n == len(want)
    assert ids.tolist() == want
    assert seen[-1] == len(data)
    assert sorted(os.listdir(tmp_path)) == ["ids.npy", "in.txt"]  # no temp file left


def test_encode_file_with_a_custom_pattern_has_no_cuts(tmp_path):
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern=r"\S+|\s+")
    src, out = tmp_path / "in.txt", tmp_path / "ids.npy"
    src.write_bytes(b"a b\n" * 400_000)
    tok.encode_file(src, out, progress=False)
    assert np.load(out).tolist() == list(b"a b\n" * 400_000)


def test_encode_file_encodes_a_long_uncut_stretch_in_chunks(toks, tmp_path):
    """More than 4 MB without a safe cut ("中文 ": no visible ASCII before the spaces) is
    encoded in 1 MB chunks on one thread: the same ids, progress inside the stretch."""
    stretch = "中文 ".encode() * 600_000 + b"<|endoftext|>\xff" + "字 ".encode() * 600_000
    data = corpus_sample("en-prose", 300_000) + stretch + corpus_sample("code", 300_000)
    src, out = tmp_path / "in.txt", tmp_path / "ids.npy"
    src.write_bytes(data)
    for name in ("gpt2", "o200k_base"):
        seen: list[int] = []
        toks[name].encode_file(src, out, threads=2, progress=lambda d, t, seen=seen: seen.append(d))
        assert np.load(out).tolist() == toks[name].encode_bytes(data, allowed_special="all")
        assert seen == sorted(seen) and seen[-1] == len(data)
        inside = [d for d in seen if 300_000 < d < 300_000 + len(stretch)]
        assert len(inside) >= 4, seen


@pytest.mark.parametrize("bad_utf8", [False, True], ids=["utf8", "invalid-utf8"])
def test_encode_file_with_a_custom_pattern_in_chunks(tmp_path, bad_utf8):
    """A custom pattern has no safe cut at all: 5 MB, specials and all, in chunks."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"th", 257: b"the"}
    tok = Tokenizer(vocab, [(b"t", b"h"), (b"th", b"e")], ["<|endoftext|>"], r"\w+|\s+|[^\w\s]+")
    data = b"<|endoftext|>".join(corpus_sample(c, 1_200_000) for c in CORPORA)
    if bad_utf8:
        data = data[:2_500_000] + b"\xe4\xb8 \xff" + data[2_500_000:]
    src, out = tmp_path / "in.txt", tmp_path / "ids.npy"
    src.write_bytes(data)
    seen = []
    n = tok.encode_file(src, out, progress=lambda d, t: seen.append(d))
    want = tok.encode_bytes(data, allowed_special="all")
    assert n == len(want) and np.load(out).tolist() == want
    assert len(seen) >= 5 and seen[-1] == len(data)
    # A disallowed special token anywhere, even past the first chunks, raises and writes nothing.
    with pytest.raises(DisallowedSpecialError):
        tok.encode_file(src, tmp_path / "no.npy", allowed_special=(), disallowed_special="all")
    assert sorted(os.listdir(tmp_path)) == ["ids.npy", "in.txt"]


def test_encode_file_reports_the_first_disallowed_special_token(toks, tmp_path):
    """Two threads encode the chunks out of order; the error is the first disallowed token
    in the file's order (in the second chunk, another in the fourth), and no file is left."""

    def plain(corpus: str, n: int) -> bytes:
        return corpus_sample(corpus, n).replace(b"<|endoftext|>", b"")

    data = (
        plain("en-prose", 1_500_000)
        + b"<|fim_prefix|>"
        + plain("code", 2_000_000)
        + b"<|endoftext|>"
        + plain("zh-prose", 2_000_000)
    )
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    with pytest.raises(DisallowedSpecialError, match="fim_prefix"):
        toks["cl100k_base"].encode_file(
            src, tmp_path / "no.npy", allowed_special=(), disallowed_special="all", threads=2
        )
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]


def test_encode_file_empty_and_errors(tmp_path):
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    src, out = tmp_path / "empty.txt", tmp_path / "ids.npy"
    src.write_bytes(b"")
    assert tok.encode_file(src, out, progress=False) == 0
    assert np.load(out).shape == (0,)
    with pytest.raises(CorpusError, match=r"missing\.txt"):
        tok.encode_file(tmp_path / "missing.txt", out)
    with pytest.raises(FileNotFoundError, match=r"folder does not exist: .*no-such-dir/ids"):
        tok.encode_file(src, tmp_path / "no-such-dir" / "ids.npy")
    assert sorted(os.listdir(tmp_path)) == ["empty.txt", "ids.npy"]
