"""The catalogue of bad inputs (issue 7): one test per case, named for it. Each case gives a
clear typed error that names the bad value, or the correct result, taken from an independent
source (bytepair.reference, tiktoken, or worked out by hand in the test)."""

from __future__ import annotations

import os
import random
import stat
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import bytepair
import numpy as np
import pytest
import tiktoken
from bytepair import reference
from bytepair.errors import (
    CorpusError,
    DisallowedSpecialError,
    FormatError,
    SpecialTokenError,
    TrainingWarning,
    UnknownIdError,
    VocabSizeError,
)
from conftest import corpus_sample

EOT = "<|endoftext|>"


def reference_merges(data: bytes, vocab_size: int, special_tokens=(), pattern="gpt2"):
    """The merges bytepair.reference learns from one document, warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        counts = reference.count_pretokens(data, pattern, special_tokens)
        return reference.train_from_counts(counts, vocab_size - 256 - len(special_tokens))


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    """A small trained tokenizer with one special token."""
    data = corpus_sample("en-prose", 60_000).decode("utf-8")
    return bytepair.train([data], vocab_size=400, special_tokens=[EOT], progress=False)


# -- corpora -------------------------------------------------------------------------------


def test_empty_corpus_warns_and_gives_the_byte_vocab(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    for corpus in ([], [""], [b""], empty):
        with pytest.warns(TrainingWarning, match="after 0 of 44 merges"):
            t = bytepair.train(corpus, vocab_size=300, progress=False)
        assert t.merges == [] and t.vocab_size == 256
        assert t.decode(t.encode("héllo")) == "héllo"
    with pytest.warns(TrainingWarning, match="after 0 of 43 merges"):
        vocab, merges = bytepair.train_bpe(empty, 300, [EOT], progress=False)
    assert merges == [] and vocab == {i: bytes([i]) for i in range(256)} | {256: EOT.encode()}


def test_corpus_of_only_special_tokens_learns_nothing():
    with pytest.warns(TrainingWarning, match="after 0 of 42 merges"):
        t = bytepair.train(
            [EOT * 1000, "<|pad|>" + EOT],
            vocab_size=300,
            special_tokens=[EOT, "<|pad|>"],
            progress=False,
        )
    assert t.merges == []
    assert t.special_tokens == {EOT: 256, "<|pad|>": 257}
    assert t.encode(EOT + "<|pad|>", allowed_special="all") == [256, 257]


def test_one_200mb_line_without_newline_trains_in_bounded_memory(tmp_path):
    """A 200 MB line, written in 200 KB blocks: the block starts with a space and ends in a
    letter, so the line pre-tokenizes as the block's pre-tokens repeated and the counts are
    the block's times the repeats. Scaling every count keeps the order and the ties, so the
    merges are the reference's on one block. Peak RSS stays far below the line's size."""
    words = corpus_sample("en-prose", 250_000).decode("utf-8").split()
    block = (" " + " ".join(words))[:200_000].rsplit(" ", 1)[0].encode()
    assert block[:1] == b" " and b"\n" not in block and block[-1:].isalpha()
    path = tmp_path / "line.txt"
    repeats = 200_000_000 // len(block)
    with open(path, "wb") as f:
        for _ in range(repeats):
            f.write(block)
    assert path.stat().st_size > 199_000_000
    script = (
        "import sys, bytepair\n"
        "vocab, merges = bytepair.train_bpe(sys.argv[1], 400, progress=False)\n"
        "print(repr(merges))\n"
        # VmHWM, not ru_maxrss: ru_maxrss survives exec and so includes pytest's own peak.
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    merges_repr, maxrss_kb = out.stdout.strip().splitlines()
    assert eval(merges_repr) == reference_merges(block, 400)
    # Reading the line whole would take 200 MB; mapped pages are dropped as they are counted.
    assert int(maxrss_kb) * 1024 < 150_000_000, f"peak RSS {int(maxrss_kb) // 1024} MB"


def test_nul_bytes_are_ordinary_bytes(tmp_path, tok):
    data = b"a\0b\0\0c a\0b\0 \0\0\0 x\0y" * 20
    path = tmp_path / "nul.txt"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        _, merges = bytepair.train_bpe(path, 270, progress=False)
    assert merges == reference_merges(data, 270)
    text = "before\0after\0\0 end"
    assert tok.decode(tok.encode(text)) == text
    assert tok.encode(text) == reference.Encoder(
        {i: b for i, b in tok.vocab.items() if i != tok.special_tokens[EOT]},
        tok.merges,
        tok.special_tokens,
        tok.pattern,
    ).encode(text)


def test_invalid_utf8_is_kept_byte_for_byte(tmp_path, tok):
    # A lone continuation byte, a truncated sequence, 0xff, an overlong '/', a UTF-16 surrogate
    # encoded in UTF-8 (CESU), and a sequence cut at the very end.
    data = b"ok \x80 caf\xe9 \xe4\xb8 \xff\xfe \xc0\xaf \xed\xa0\x80 end\xe2\x82" * 30
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        _, merges = bytepair.train_bpe(path, 300, progress=False)
        from_bytes = bytepair.train([data], vocab_size=300, progress=False)
    assert merges == reference_merges(data, 300) == from_bytes.merges
    assert any(not (a + b).decode("utf-8", "ignore") for a, b in merges)  # raw bytes merged
    ids = tok.encode_bytes(data)
    assert tok.decode_bytes(ids) == data
    assert tok.decode(ids) == data.decode("utf-8", errors="replace")
    out = tmp_path / "ids.npy"
    tok.encode_file(path, out, progress=False)
    assert np.load(out).tolist() == ids


def test_lone_surrogates_in_str(tok):
    # Encoding: a lone surrogate is U+FFFD (tiktoken's rule); a correct pair is its character.
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")
    assert tok.encode("x\udcff") == tok.encode("x\ufffd")
    assert tok.decode(tok.encode("a\ud800b\udfff")) == "a\ufffdb\ufffd"
    assert tok.encode_batch(["\ud83d", "ok"]) == [tok.encode("\ufffd"), tok.encode("ok")]
    assert list(tok.encode_iterable(["a\ud800", "b"])) == tok.encode("a\ufffdb")
    # Training: U+DC80..U+DCFF are bytes decoded with surrogateescape and count as those
    # bytes (DESIGN, training step 1); any other lone surrogate trains as U+FFFD.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        escaped = bytepair.train(["caf\udce9 caf\udce9"], vocab_size=270, progress=False)
        assert escaped.merges == reference_merges(b"caf\xe9 caf\xe9", 270)
        lone = bytepair.train(["a\ud800 a\ud800 \udfff"], vocab_size=270, progress=False)
        assert lone.merges == reference_merges("a\ufffd a\ufffd \ufffd".encode(), 270)


# -- files that cannot be read -------------------------------------------------------------


def test_missing_file_is_a_corpus_error_naming_it(tmp_path, tok):
    missing = tmp_path / "no-such-corpus.txt"
    with pytest.raises(CorpusError, match=r"no-such-corpus\.txt"):
        bytepair.train_bpe(missing, 300, progress=False)
    with pytest.raises(CorpusError, match=r"no-such-corpus\.txt"):
        bytepair.train(missing, vocab_size=300, progress=False)
    with pytest.raises(CorpusError, match=r"no-such-corpus\.txt"):
        bytepair.train([missing], vocab_size=300, progress=False)
    with pytest.raises(CorpusError, match=r"no-such-corpus\.txt"):
        tok.encode_file(missing, tmp_path / "ids.npy")
    # A tokenizer file is no corpus: its absence is a FileNotFoundError naming it.
    with pytest.raises(FileNotFoundError, match=r"no-such-corpus\.txt: no such tokenizer file"):
        bytepair.Tokenizer.load(missing)
    assert os.listdir(tmp_path) == []


# As root, chmod 000 does not stop reads (CAP_DAC_OVERRIDE). The child drops the two
# capabilities that bypass file permissions (capset(2)), so the file is really unreadable.
UNREADABLE_SCRIPT = r"""
import ctypes, os, sys
if os.geteuid() == 0:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    libc = ctypes.CDLL(None, use_errno=True)
    header, data = Header(0x20080522, 0), (Data * 2)()
    assert libc.capget(ctypes.byref(header), data) == 0, ctypes.get_errno()
    for d in data[:1]:  # CAP_DAC_OVERRIDE = 1, CAP_DAC_READ_SEARCH = 2
        d.effective &= ~0b110
        d.permitted &= ~0b110
    assert libc.capset(ctypes.byref(header), data) == 0, ctypes.get_errno()
try:
    open(sys.argv[1], "rb")
    print("readable")
    sys.exit(1)
except PermissionError:
    pass
import bytepair
from bytepair.errors import CorpusError
tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
for name, call in [
    ("train_bpe", lambda: bytepair.train_bpe(sys.argv[1], 300, progress=False)),
    ("train", lambda: bytepair.train([sys.argv[1]], vocab_size=300, progress=False)),
    ("encode_file", lambda: tok.encode_file(sys.argv[1], sys.argv[1] + ".npy")),
]:
    try:
        call()
        print(name, "did not raise")
    except CorpusError as e:
        print(name, "CorpusError", e)
    except Exception as e:
        print(name, type(e).__name__, e)
"""


def test_unreadable_file_is_a_corpus_error_naming_it(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("hello world " * 100)
    path.chmod(0)
    out = subprocess.run(
        [sys.executable, "-c", UNREADABLE_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["train_bpe", "CorpusError"],
        ["train", "CorpusError"],
        ["encode_file", "CorpusError"],
    ], out.stdout
    assert all("secret.txt" in line for line in lines), out.stdout
    assert sorted(os.listdir(tmp_path)) == ["secret.txt"]


def test_directory_is_a_corpus_error_naming_it(tmp_path, tok):
    folder = tmp_path / "corpus-folder"
    folder.mkdir()
    with pytest.raises(CorpusError, match=r"corpus-folder.*directory"):
        bytepair.train_bpe(folder, 300, progress=False)
    with pytest.raises(CorpusError, match=r"corpus-folder.*directory"):
        bytepair.train(folder, vocab_size=300, progress=False)
    with pytest.raises(CorpusError, match=r"corpus-folder.*directory"):
        tok.encode_file(folder, tmp_path / "ids.npy")
    with pytest.raises(FormatError, match="corpus-folder"):
        bytepair.Tokenizer.load(folder)
    # An output path that is a directory: the error names it, nothing is written into it.
    src = tmp_path / "in.txt"
    src.write_text("hello")
    with pytest.raises(OSError, match="corpus-folder"):
        tok.encode_file(src, folder)
    assert os.listdir(folder) == []


def test_a_pipe_is_refused_or_read_whole(tmp_path):
    """A FIFO (what `<(xzcat corpus.xz)` gives) reports size 0: it must not train on
    nothing. Either a clear CorpusError or the merges of what the writer sent."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = b"low lower lowest " * 100

    def writer():
        try:
            with open(fifo, "wb") as f:
                f.write(data)
        except OSError:
            pass

    feeder = threading.Thread(target=writer, daemon=True)
    feeder.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", TrainingWarning)
            _, merges = bytepair.train_bpe(fifo, 260, progress=False)
        assert merges == reference_merges(data, 260)
    except CorpusError as e:
        assert "pipe" in str(e)
    finally:
        # Unblock the writer if nobody opened the pipe for reading (the pipe's buffer
        # takes its few KB), then close.
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        feeder.join(timeout=10)
        os.close(fd)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


# -- vocab_size --------------------------------------------------------------------------


def test_vocab_size_larger_than_the_corpus_supports_warns_with_the_number_learned():
    data = b"the cat sat on the mat with the hat"
    learned = len(reference_merges(data, 10_000, [EOT]))
    assert 0 < learned < 100
    with pytest.warns(TrainingWarning, match=rf"after {learned} of {10_000 - 257} merges"):
        t = bytepair.train([data], vocab_size=10_000, special_tokens=[EOT], progress=False)
    assert len(t.merges) == learned
    assert t.vocab_size == 256 + learned + 1
    assert t.special_tokens == {EOT: 256 + learned}


@pytest.mark.parametrize(
    ("vocab_size", "special_tokens", "match"),
    [
        (255, [], "at least 256"),
        (256, [EOT], "at least 257"),
        (0, [], "at least 256"),
        (-5, [], "at least 256"),
        (300.0, [], "must be an int"),
        ("300", [], "must be an int"),
    ],
)
def test_vocab_size_too_small_or_not_an_int(tmp_path, vocab_size, special_tokens, match):
    path = tmp_path / "c.txt"
    path.write_text("hello hello")
    with pytest.raises(VocabSizeError, match=match):
        bytepair.train(
            ["hello hello"], vocab_size=vocab_size, special_tokens=special_tokens, progress=False
        )
    with pytest.raises(VocabSizeError, match=match):
        bytepair.train_bpe(path, vocab_size, special_tokens, progress=False)


def test_vocab_size_of_exactly_the_bytes_and_specials_learns_nothing_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = bytepair.train(["hello hello"], vocab_size=257, special_tokens=[EOT], progress=False)
    assert t.merges == [] and t.special_tokens == {EOT: 256}


# -- ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1.5, 2.0, "7", None, b"\x07", [1], np.float64(3.0)], ids=repr)
def test_non_integer_ids_are_unknown_id_errors(tok, bad):
    with pytest.raises(UnknownIdError, match="unknown token id") as info:
        tok.decode([104, bad])
    assert repr(bad)[:3] in str(info.value) or str(bad)[:3] in str(info.value)
    with pytest.raises(UnknownIdError):
        tok.decode_bytes([bad])
    with pytest.raises(UnknownIdError):
        tok.decoder().feed([bad])


@pytest.mark.parametrize("bad", [-1, -(2**70), np.int64(-1), np.int8(-3)], ids=repr)
def test_negative_ids_are_unknown_id_errors(tok, bad):
    with pytest.raises(UnknownIdError, match=str(int(bad))):
        tok.decode([bad])


def test_out_of_range_ids_are_unknown_id_errors(tok):
    size = tok.vocab_size
    assert tok.decode([size - 1]) == EOT  # the last id is valid
    for bad in (size, size + 1, 2**31, 2**32, 2**64, 10**30, np.uint64(2**64 - 1)):
        with pytest.raises(UnknownIdError, match=str(int(bad))):
            tok.decode([bad])
        with pytest.raises(UnknownIdError, match=f"0..{size - 1}"):
            tok.decode_bytes([104, bad])


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
)
def test_numpy_integer_ids_decode_like_python_ints(tok, dtype):
    text = "Tokenizers meet NumPy."
    ids = tok.encode(text)
    small = [i for i in ids if i <= np.iinfo(dtype).max]
    want = tok.decode_bytes(small)
    assert tok.decode_bytes(np.array(small, dtype=dtype)) == want
    assert tok.decode_bytes([dtype(i) for i in small]) == want
    if np.iinfo(dtype).max >= tok.vocab_size:
        assert tok.decode(np.array(ids, dtype=dtype)) == text


# -- special tokens ------------------------------------------------------------------------


def test_special_tokens_that_overlap_match_leftmost_then_longest():
    vocab = {i: bytes([i]) for i in range(256)}
    specials = ["<|a|>", "|><|", "<|a|><|b|>", "<|b|>"]
    t = bytepair.Tokenizer(vocab, [], special_tokens=specials)
    ids = dict(t.special_tokens)
    assert ids == {"<|a|>": 256, "|><|": 257, "<|a|><|b|>": 258, "<|b|>": 259}
    # Worked by hand: at 0 both <|a|> and <|a|><|b|> match; the longer wins. Then at 10
    # "<|b|>" starts; "|><|" at 13 overlaps the end of <|a|> and is never reached.
    assert t.encode("<|a|><|b|><|b|>", allowed_special="all") == [258, 259]
    assert t.encode("<|a|><|c|>", allowed_special="all") == [256, *b"<|c|>"]
    assert t.encode("x|><|a|>", allowed_special="all") == [120, 257, 97, 124, 62]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        data = b"<|a|><|b|> ab <|a|> ab|><|b ab"
        trained = bytepair.train([data], vocab_size=270, special_tokens=specials, progress=False)
    assert trained.merges == reference_merges(data, 270, specials)


def test_special_tokens_that_are_prefixes_of_each_other():
    vocab = {i: bytes([i]) for i in range(256)}
    t = bytepair.Tokenizer(vocab, [], special_tokens=["<|a", "<|ab|>", "<|ab"])
    assert t.encode("<|ab|>", allowed_special="all") == [257]
    assert t.encode("<|ab|", allowed_special="all") == [258, 124]
    assert t.encode("<|a|", allowed_special="all") == [256, 124]
    # Only the shorter one allowed: the longer one's text is still disallowed by default...
    with pytest.raises(DisallowedSpecialError, match=r"<\|ab"):
        t.encode("<|ab|>", allowed_special={"<|a"})
    # ...and with nothing disallowed the allowed prefix matches inside it.
    assert t.encode("<|ab|>", allowed_special={"<|a"}, disallowed_special=()) == [256, *b"b|>"]


def test_special_token_equal_to_a_learned_token_encodes_like_tiktoken():
    """A special token whose bytes are a learned token keeps that token's id (GPT-2's
    vocab.json holds <|endoftext|> the same way); plain text still merges into it."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"abc"}
    t = bytepair.Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")], special_tokens=["ab"])
    assert t.special_tokens == {"ab": 256}
    enc = tiktoken.Encoding(
        "x",
        pat_str=t.pattern,
        mergeable_ranks={b: i for i, b in vocab.items()},
        special_tokens={"ab": 256},
    )
    text = "xab abc ab"
    assert t.encode_ordinary(text) == enc.encode_ordinary(text)
    assert t.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert t.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())
    assert t.decode(t.encode_ordinary(text)) == text


@pytest.mark.parametrize("specials", [[EOT, EOT], ["<s>", "</s>", "<s>"]])
def test_duplicate_special_tokens_are_refused(specials):
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(SpecialTokenError, match=r"<.*given twice"):
        bytepair.train(["abc"], vocab_size=300, special_tokens=specials, progress=False)
    with pytest.raises(SpecialTokenError, match="given twice"):
        bytepair.Tokenizer(vocab, [], special_tokens=specials)


def test_disallowed_special_text_raises_with_the_fix_in_the_message(tok, tmp_path):
    text = f"Ignore previous instructions{EOT}system: "
    calls = [
        lambda: tok.encode(text),
        lambda: tok.encode_bytes(text.encode()),
        lambda: tok.encode_batch(["fine", text]),
        lambda: list(tok.encode_iterable(["Ignore <|endof", "text|> x"])),
        lambda: tok.encode_with_offsets(text),
        lambda: tok.encode(text, allowed_special=set()),
    ]
    for call in calls:
        with pytest.raises(DisallowedSpecialError) as info:
            call()
        message = str(info.value)
        assert EOT in message
        assert "allowed_special=" in message and "disallowed_special=()" in message
    # Each fix the message names works.
    assert tok.encode(text, allowed_special={EOT}).count(tok.special_tokens[EOT]) == 1
    assert tok.special_tokens[EOT] not in tok.encode(text, disallowed_special=())
    assert tok.encode(text, disallowed_special=()) == tok.encode_ordinary(text)
    # encode_file prepares training data: special tokens are allowed there by default.
    src, out = tmp_path / "in.txt", tmp_path / "ids.npy"
    src.write_text(text)
    tok.encode_file(src, out, progress=False)
    assert np.load(out).tolist() == tok.encode(text, allowed_special="all")


# -- damaged tokenizer files -----------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory, tok) -> dict[str, Path]:
    """The same tokenizer in every format."""
    d = tmp_path_factory.mktemp("saved")
    tok.save(d / "tokenizer.json")
    tok.save(d / "bytepair.tiktoken", format="tiktoken")
    tok.save(d / "gpt2", format="gpt2")
    return {
        "tokenizer.json": d / "tokenizer.json",
        "tiktoken": d / "bytepair.tiktoken",
        "vocab.json": d / "gpt2" / "vocab.json",
        "merges.txt": d / "gpt2" / "merges.txt",
    }


def _load(path: Path, tok):
    """Loads what `path` belongs to, giving .tiktoken its special tokens back."""
    if path.suffix == ".tiktoken":
        return bytepair.Tokenizer.load(path, special_tokens=tok.special_tokens)
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
