"""Memory stays bounded: encode_iterable under an address-space limit of current usage + 1 MB
(CS336's test), training and encode_file peak RSS that does not grow with the input (10 MB
against 100 MB of shuffled corpus lines: the distinct pre-tokens stay bounded), and one
200 MB line without a newline trained in far less than its size."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from conftest import CORPORA, corpus_sample, reference_merges, shared

EOT = "<|endoftext|>"

STREAM = """
import resource, sys, zlib
import bytepair
tok = bytepair.Tokenizer.from_files(sys.argv[2], sys.argv[3], special_tokens=[sys.argv[4]])
list(tok.encode_iterable(["warm up the stream ", "and the allocator\\n"] * 100))
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
limit = rss() + 1_000_000
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
n, crc = 0, 0
with open(sys.argv[1], encoding="utf-8") as f:
    for i in tok.encode_iterable(f, allowed_special="all"):
        n += 1
        crc = zlib.crc32(i.to_bytes(4, "little"), crc)
print(n, crc)
if sys.argv[5] == "whole":
    try:
        tok.encode(open(sys.argv[1], encoding="utf-8").read(), allowed_special="all")
        print("whole file fit")
    except MemoryError:
        print("whole file: MemoryError")
"""


def test_encode_iterable_under_an_address_space_limit_of_usage_plus_1mb(tmp_path):
    import zlib

    import tiktoken  # noqa: F401 (the gpt2 files are tiktoken's vocabulary)
    from bytepair import Tokenizer

    vocab, merges = (
        shared("fixtures", "cs336", "gpt2_vocab.json"),
        shared("fixtures", "cs336", "gpt2_merges.txt"),
    )
    data = b"".join(corpus_sample(c, 1_000_000) for c in ("en-prose", "tinystories", "code"))
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    tok = Tokenizer.from_files(vocab, merges, special_tokens=[EOT])
    want = tok.encode(data.decode("utf-8"), allowed_special="all")
    crc = 0
    for i in want:
        crc = zlib.crc32(i.to_bytes(4, "little"), crc)
    out = subprocess.run(
        [sys.executable, "-c", STREAM, str(path), str(vocab), str(merges), EOT, "whole"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n")
    assert lines[0] == f"{len(want)} {crc}"
    # The limit bites: the whole file (3 MB of text, 12 MB of ids) does not fit under it.
    assert lines[1] == "whole file: MemoryError"


def write_varied(path, nbytes: int, seed: int = 0) -> None:
    """Shuffled lines of every corpus, a <|endoftext|> every 40 lines (documents)."""
    rng = random.Random(seed)
    lines = [line for c in CORPORA for line in corpus_sample(c, 400_000).splitlines(True)]
    written = 0
    with open(path, "wb") as f:
        while written < nbytes:
            rng.shuffle(lines)
            docs = [b"".join(lines[i : i + 40]) for i in range(0, len(lines), 40)]
            block = (EOT.encode()).join(docs)
            if len(block) > nbytes - written:
                # Cut at a character boundary: the file is valid UTF-8.
                block = block[: nbytes - written].decode("utf-8", "ignore").encode()
                f.write(block)
                break
            f.write(block)
            written += len(block)


PEAK = """
import sys, threading, time, bytepair
peak_anon = 0
def sample():
    global peak_anon
    while True:
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                peak_anon = max(peak_anon, int(line.split()[1]))
        time.sleep(0.005)
threading.Thread(target=sample, daemon=True).start()
time.sleep(0.05)
if sys.argv[1] == "train":
    bytepair.train_bpe(sys.argv[2], 2000, ["<|endoftext|>"], progress=False)
elif sys.argv[1] == "train_sample":
    # 200 documents of 40 lines: the sample is the same size in both inputs.
    bytepair.train(sys.argv[2], 2000, ["<|endoftext|>"], sample_documents=200, progress=False)
else:
    # encode_file_custom: a custom pattern, which has no safe cut, so no parallel chunks.
    pattern = r"\\S+|\\s+" if sys.argv[1] == "encode_file_custom" else "gpt2"
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}
                             | {256: b"th", 257: b"the"}, [(b"t", b"h"), (b"th", b"e")],
                             special_tokens=["<|endoftext|>"], pattern=pattern)
    tok.encode_file(sys.argv[2], sys.argv[2] + ".npy", progress=False)
time.sleep(0.05)
# VmHWM, not ru_maxrss: ru_maxrss survives exec and so includes pytest's own peak.
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(hwm, peak_anon)
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("sizes")
    write_varied(d / "small.txt", 10_000_000)
    write_varied(d / "large.txt", 100_000_000)
    return d / "small.txt", d / "large.txt"


_peaks: dict[tuple[str, str], tuple[int, int]] = {}


def peaks(what, path) -> tuple[int, int]:
    """(peak RSS, peak anonymous RSS) in MB of a child running `what` on `path`."""
    key = (what, str(path))
    if key not in _peaks:
        out = subprocess.run(
            [sys.executable, "-c", PEAK, what, str(path)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        rss_kb, anon_kb = map(int, out.stdout.split())
        _peaks[key] = (rss_kb // 1024, anon_kb // 1024)
    return _peaks[key]


def describe(what, inputs) -> str:
    (rss_small, anon_small), (rss_large, anon_large) = (peaks(what, p) for p in inputs)
    return (
        f"{what}: 10 MB -> {rss_small} MB RSS ({anon_small} anon); "
        f"100 MB -> {rss_large} MB RSS ({anon_large} anon)"
    )


@pytest.mark.parametrize("what", ["train", "train_sample", "encode_file", "encode_file_custom"])
def test_peak_heap_does_not_grow_with_input_size(inputs, what):
    """The anonymous memory (heap, stacks: what cannot be paged back to the file) must not
    grow with the input: the distinct pre-tokens are the same."""
    (_, anon_small), (_, anon_large) = (peaks(what, p) for p in inputs)
    assert anon_large <= anon_small + 16, describe(what, inputs)


@pytest.mark.parametrize("what", ["train", "train_sample", "encode_file", "encode_file_custom"])
def test_peak_rss_does_not_grow_with_input_size(inputs, what):
    """Nor may the mapped file pages: 10x the input may cost at most 32 MB more in all
    (the sampling pass over the file included: its memory grows with the sample)."""
    (rss_small, _), (rss_large, _) = (peaks(what, p) for p in inputs)
    assert rss_large <= rss_small + 32, describe(what, inputs)


# -- one long line -------------------------------------------------------------------------


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
