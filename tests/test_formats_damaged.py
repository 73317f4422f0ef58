"""Damaged tokenizer files, in every format: a truncated or garbled file is a FormatError
naming the file, or (a byte flip that still spells a valid file) a tokenizer that
round-trips text; a cut merges.txt may load as a prefix of the merges."""

from __future__ import annotations

import random
import tempfile
import warnings
from pathlib import Path

import bytepair
import pytest
from bytepair.errors import FormatError
from conftest import small_tokenizer
from fuzz_inputs import tokenizers
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    """A small trained tokenizer with one special token."""
    return small_tokenizer()


@pytest.fixture(scope="module")
def saved(tmp_path_factory, tok) -> dict[str, Path]:
    """The same tokenizer in every format."""
    d = tmp_path_factory.mktemp("saved")
    tok.save(d / "tokenizer.json")
    with warnings.catch_warnings():  # that it stores no special tokens: _load gives them
        warnings.simplefilter("ignore")
        tok.save(d / "bytepair.tiktoken", format="tiktoken")
    tok.save(d / "gpt2", format="gpt2")
    return {
        "tokenizer.json": d / "tokenizer.json",
        "tiktoken": d / "bytepair.tiktoken",
        "vocab.json": d / "gpt2" / "vocab.json",
        "merges.txt": d / "gpt2" / "merges.txt",
    }


def _load(path: Path, tok):
    """Loads what `path` belongs to, giving .tiktoken its special tokens and pattern back."""
    if path.suffix == ".tiktoken":
        return bytepair.Tokenizer.load(path, special_tokens=tok.special_tokens, pattern=tok.pattern)
    return bytepair.Tokenizer.load(path.parent if path.parent.name == "gpt2" else path)


def damaged(data: bytes, how: str) -> bytes:
    rng = random.Random(how)
    if how == "empty":
        return b""
    if how == "first byte":
        return data[:1]
    if how == "half":
        return data[: len(data) // 2]
    if how == "last bytes cut":  # cut inside the last line or the closing brace
        return data.rstrip()[:-2]
    if how == "binary junk":
        return bytes(rng.randrange(256) for _ in range(2000))
    if how == "not utf-8":
        return data.replace(b"a", b"\xff", 3)
    raise AssertionError(how)


@pytest.mark.parametrize("fmt", ["tokenizer.json", "tiktoken", "vocab.json", "merges.txt"])
@pytest.mark.parametrize(
    "how", ["empty", "first byte", "half", "last bytes cut", "binary junk", "not utf-8"]
)
def test_truncated_or_garbled_tokenizer_file_is_a_format_error_naming_it(
    request, saved, tok, fmt, how
):
    path = saved[fmt]
    original = path.read_bytes()
    try:
        path.write_bytes(damaged(original, how))
        try:
            loaded = _load(path, tok)
        except FormatError as e:
            assert path.name in str(e)
        else:
            # A cut merges.txt can still be a whole file (a prefix of the merges). Then the
            # tokenizer must be that prefix, with the original special tokens only.
            assert fmt == "merges.txt", loaded
            assert loaded.merges == tok.merges[: len(loaded.merges)]
            assert loaded.special_tokens == tok.special_tokens
    finally:
        path.write_bytes(original)


# -- random damage, fuzzed -----------------------------------------------------------------


@pytest.fixture(scope="module")
def trained() -> dict[str, bytepair.Tokenizer]:
    """One small tokenizer per pattern (fuzz_inputs.tokenizers)."""
    return tokenizers()


@pytest.fixture(scope="module")
def saved_files(trained) -> dict[str, bytes]:
    tok = trained["gpt2"]
    with tempfile.TemporaryDirectory() as d:
        tok.save(Path(d) / "tokenizer.json")
        with warnings.catch_warnings():  # that it stores no special tokens: given on load
            warnings.simplefilter("ignore")
            tok.save(Path(d) / "t.tiktoken", format="tiktoken")
        tok.save(Path(d) / "gpt2", format="gpt2")
        return {
            name: (Path(d) / name).read_bytes()
            for name in ("tokenizer.json", "t.tiktoken", "gpt2/vocab.json", "gpt2/merges.txt")
        }


@given(
    name=st.sampled_from(["tokenizer.json", "t.tiktoken", "gpt2/vocab.json"]),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=3),
)
def test_fuzz_damaged_tokenizer_file_is_a_format_error_or_loads(
    trained, saved_files, name, cut, flips
):
    """A truncated or garbled file gives a FormatError naming the file, or (a byte flip
    that still spells a valid file) a tokenizer that round-trips text."""
    data = bytearray(saved_files[name][: max(0, int(len(saved_files[name]) * cut))])
    for where, value in flips:
        if data:
            data[min(len(data) - 1, int(len(data) * where))] = value
    with tempfile.TemporaryDirectory() as d:
        for other, content in saved_files.items():
            (Path(d) / other).parent.mkdir(exist_ok=True)
            (Path(d) / other).write_bytes(bytes(data) if other == name else content)
        target = Path(d) / name
        try:
            if name.endswith(".tiktoken"):
                given = trained["gpt2"]
                tok = bytepair.Tokenizer.load(
                    target, special_tokens=given.special_tokens, pattern=given.pattern
                )
            else:
                tok = bytepair.Tokenizer.load(target.parent if "gpt2" in name else target)
        except FormatError as e:
            assert Path(name).name in str(e)
            return
    text = "Hello, wörld! 12345 中文"
    assert tok.decode(tok.encode_ordinary(text)) == text


# -- ids past the core's range -------------------------------------------------------------


@pytest.mark.parametrize("big", [2**26, 2**32, 2**40, 2**64])
def test_a_file_id_past_2_to_the_26_is_a_format_error_naming_the_file_and_the_limit(
    saved, tok, tmp_path, big
):
    # The core numbers tokens below 2**26 (src/encode/build.rs); past 2**32 its u32
    # conversion overflowed before any check.
    import json

    last = tok.vocab_size - 2  # a merged token, not the special token
    hf = json.loads(saved["tokenizer.json"].read_text())
    key = next(k for k, i in hf["model"]["vocab"].items() if i == last)
    hf["model"]["vocab"][key] = big
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "tokenizer.json").write_text(json.dumps(hf))
    vocab = json.loads(saved["vocab.json"].read_text())
    vocab[key] = big
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    calls = [
        ("tokenizer.json", lambda: bytepair.Tokenizer.load(tmp_path / "hf" / "tokenizer.json")),
        (
            "vocab.json",
            lambda: bytepair.Tokenizer.from_files(tmp_path / "vocab.json", saved["merges.txt"]),
        ),
    ]
    for name, call in calls:
        with pytest.raises(FormatError) as e:
            call()
        message = str(e.value)
        assert name in message and str(big) in message and "below 67,108,864" in message
