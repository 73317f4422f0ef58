"""Inputs at the edges, for training and encoding alike: an empty corpus, a corpus of only
special tokens, NUL bytes, invalid UTF-8, lone surrogates, files that cannot be read
(missing, unreadable, a directory, a pipe), and corpora that would train a useless
tokenizer (not UTF-8, special-token text that is no special token), which warn. Each case
gives a clear typed error or warning that names the bad value, or the correct result,
taken from an independent source (bytepair.reference, tiktoken, or worked out by hand)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import stat
import subprocess
import sys
import threading
import warnings

import bytepair
import numpy as np
import pytest
from bytepair import reference
from bytepair.errors import CorpusError, CorpusWarning, FormatError, TrainingWarning
from conftest import EOT, corpus_documents, corpus_sample, reference_merges, small_tokenizer


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    """A small trained tokenizer with one special token."""
    return small_tokenizer()


# -- corpora -------------------------------------------------------------------------------


def test_empty_corpus_warns_and_gives_the_byte_vocab(tmp_path):
    # A warning, not an error: CS336's train_bpe (and the reference) give the byte vocab.
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    for corpus in ([], [""], [b""], empty):
        with pytest.warns(TrainingWarning, match="after 0 of 44 merges: the corpus is empty"):
            t = bytepair.train(corpus, vocab_size=300, progress=False)
        assert t.merges == [] and t.vocab_size == 256
        assert t.decode(t.encode("héllo")) == "héllo"
    with pytest.warns(TrainingWarning, match="after 0 of 43 merges: the corpus is empty"):
        vocab, merges = bytepair.train_bpe(empty, 300, [EOT], progress=False)
    assert merges == [] and vocab == {i: bytes([i]) for i in range(256)} | {256: EOT.encode()}


def test_corpus_of_only_special_tokens_learns_nothing():
    with pytest.warns(TrainingWarning, match=r"0 of 42 merges: .*no text outside the special"):
        t = bytepair.train(
            [EOT * 1000, "<|pad|>" + EOT],
            vocab_size=300,
            special_tokens=[EOT, "<|pad|>"],
            progress=False,
        )
    assert t.merges == []
    assert t.special_tokens == {EOT: 256, "<|pad|>": 257}
    assert t.encode(EOT + "<|pad|>", allowed_special="all") == [256, 257]


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


def test_a_glob_that_matches_nothing_says_so_for_train_as_for_encode_file(tmp_path, tok):
    glob = str(tmp_path / "*.zzz")
    for call in (
        lambda: bytepair.train(glob, vocab_size=300, progress=False),
        lambda: bytepair.train([glob], vocab_size=300, progress=False),
        lambda: tok.encode_file(glob, tmp_path / "ids.npy"),
    ):
        with pytest.raises(CorpusError, match=r"corpus glob '.*\*\.zzz' matches no files"):
            call()


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


# -- corpora that train into a useless tokenizer -------------------------------------------


def test_a_gbk_corpus_warns(tmp_path):
    zh = corpus_sample("zh-prose", 30_000).decode("utf-8", "ignore")
    path = tmp_path / "gbk.txt"
    path.write_bytes(zh.encode("gbk", "ignore"))
    with pytest.warns(CorpusWarning, match=r"gbk\.txt are not valid UTF-8.*iconv") as seen:
        bytepair.train([path], 300, special_tokens=[EOT], progress=False)
    # Its bad bytes come in runs (two-byte characters): no Latin-1 hint.
    assert "another encoding (GBK" in str(seen[0].message)
    assert "CP1252" not in str(seen[0].message)
    with pytest.warns(CorpusWarning, match="not valid UTF-8"):
        bytepair.train(iter([zh.encode("gbk", "ignore")]), 300, [EOT], progress=False)


def test_of_many_files_the_first_and_last_are_checked(tmp_path):
    zh = corpus_sample("zh-prose", 30_000).decode("utf-8", "ignore")
    paths = []
    for n in range(20):
        paths.append(tmp_path / f"part{n:02}.txt")
        paths[-1].write_bytes(zh.encode("gbk", "ignore") if n == 19 else zh.encode())
    with pytest.warns(CorpusWarning, match=r"part19\.txt are not valid UTF-8"):
        bytepair.train(paths, 300, special_tokens=[EOT], progress=False)


def test_a_latin1_corpus_warns_and_utf8_does_not(tmp_path):
    text = "Le cœur a ses raisons que la raison ne connaît point. Déjà vu, été, à bientôt.\n"
    latin1 = tmp_path / "fr.txt"
    latin1.write_bytes(text.replace("œ", "oe").encode("latin-1") * 100)
    # Each accented letter is one bad byte between ASCII ones: the hint says Latin-1.
    with pytest.warns(
        CorpusWarning, match=r"fr\.txt are not valid UTF-8: it looks like Latin-1.*-f CP1252"
    ):
        bytepair.train([latin1], 280, progress=False)
    utf8 = tmp_path / "fr8.txt"
    utf8.write_bytes(text.encode() * 100 + b"\xff")  # one stray byte is no other encoding
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bytepair.train([utf8], 280, progress=False)


def test_a_utf16_corpus_warns(tmp_path):
    path = tmp_path / "u16.txt"
    path.write_bytes(corpus_sample("en-prose", 10_000).decode().encode("utf-16"))
    with pytest.warns(CorpusWarning, match="looks like UTF-16"):
        bytepair.train([path], 300, progress=False)


@pytest.mark.parametrize(
    "suffix, compress, name",
    [(".gz", gzip.compress, "gzip"), (".xz", lzma.compress, "xz"), (".bz2", bz2.compress, "bzip2")],
)
def test_a_compressed_corpus_warns_that_it_is_compressed(tmp_path, suffix, compress, name):
    """A compressed file is read as it is, so it trains on compressed bytes: the warning
    says so and how to fix it, not that the text is in another encoding (iconv)."""
    path = tmp_path / f"c.txt{suffix}"
    path.write_bytes(compress(corpus_sample("en-prose", 200_000)))
    with pytest.warns(CorpusWarning, match=rf"c\.txt\{suffix} is {name}-compressed.*decompress"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingWarning)
            bytepair.train([path], 300, progress=False)


def test_json_lines_in_a_file_read_as_plain_text_warns(tmp_path):
    """JSON Lines under another name (data.json) is plain text: trained as it is, the
    tokenizer would learn its keys and quotes; the warning says to name it .jsonl."""
    docs = [d.decode() for d in corpus_documents("en-prose", 50, 3)]
    lines = "".join(json.dumps({"text": d, "id": i}) + "\n" for i, d in enumerate(docs))
    (tmp_path / "data.json").write_text(lines)
    with pytest.warns(CorpusWarning, match=r"data\.json holds JSON Lines.*name it \.jsonl"):
        bytepair.train([tmp_path / "data.json"], 300, progress=False)
    (tmp_path / "data.jsonl").write_text(lines)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bytepair.train([tmp_path / "data.jsonl"], 300, progress=False)
        # Text whose lines are not all JSON objects is text.
        (tmp_path / "code.txt").write_text('{"a": 1}\nprint(1)\n' * 500)
        bytepair.train([tmp_path / "code.txt"], 260, progress=False)


def test_special_token_text_that_is_no_special_token_warns(tmp_path):
    docs = corpus_documents("multilingual", 30, 3)
    data = b"".join(d.replace(EOT.encode(), b"") + EOT.encode() for d in docs)
    path = tmp_path / "docs.txt"
    path.write_bytes(data)
    with pytest.warns(CorpusWarning, match=r"'<\|endoftext\|>' 30 times.*--special-token"):
        bytepair.train([path], 300, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bytepair.train([path], 300, special_tokens=[EOT], progress=False)
        # A document separator is cut out too: its text is expected.
        bytepair.train([path], 300, document_separator=EOT, progress=False)
