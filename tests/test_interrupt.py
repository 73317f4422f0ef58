"""Ctrl-C (SIGINT) during train or encode_file returns promptly and leaves no partial output
and no temporary file. Each run is a child process that prints "go" just before
the long call; the test signals it a moment later and times the exit."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
from conftest import CORPORA, corpus_sample

PROMPT_SECONDS = 5.0
# encode_file checks for Ctrl-C after every 1 MB chunk, whatever the pattern: far below the
# 2.6 s that the 80 MB file still needs to encode after the signal when there are no chunks.
ENCODE_FILE_PROMPT_SECONDS = 1.5

TRAIN = """
import sys, bytepair
print("go", flush=True)
tok = bytepair.train([sys.argv[1]], vocab_size=60_000, special_tokens=["<|endoftext|>"],
                     progress=False)
tok.save(sys.argv[2])
print("finished", flush=True)
"""

ENCODE_FILE = """
import sys, bytepair
tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern=sys.argv[3])
print("go", flush=True)
tok.encode_file(sys.argv[1], sys.argv[2], progress=False)
print("finished", flush=True)
"""


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory):
    """80 MB of shuffled corpus lines in a folder of its own."""
    rng = random.Random(7)
    lines = [line for c in CORPORA for line in corpus_sample(c, 400_000).splitlines(True)]
    path = tmp_path_factory.mktemp("corpus") / "big.txt"
    with open(path, "wb") as f:
        for _ in range(40):
            rng.shuffle(lines)
            f.write(b"".join(lines))
    return path


def interrupt(script, args, delay):
    child = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "go"
    time.sleep(delay)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    return time.monotonic() - sent, child.returncode, out, err


@pytest.fixture(scope="module")
def distinct_words(tmp_path_factory):
    """5 MB of 600,000 random words: counted in a moment, merged for seconds."""
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = (
        "".join(rng.choice(letters) for _ in range(rng.randint(3, 12))) for _ in range(600_000)
    )
    path = tmp_path_factory.mktemp("words") / "words.txt"
    path.write_text(" ".join(words))
    return path


@pytest.mark.parametrize("phase", ["counting", "merging"])
def test_sigint_during_train_stops_promptly_and_saves_nothing(
    big_corpus, distinct_words, tmp_path, phase
):
    out_path = tmp_path / "tokenizer.json"
    corpus, delay = (big_corpus, 0.3) if phase == "counting" else (distinct_words, 1.5)
    elapsed, code, out, err = interrupt(TRAIN, [corpus, out_path], delay)
    assert "finished" not in out, "training ended before the signal: make the corpus bigger"
    assert code != 0 and "KeyboardInterrupt" in err, err[-2000:]
    assert elapsed < PROMPT_SECONDS, f"took {elapsed:.1f} s after SIGINT"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("pattern", ["gpt2", r"\S+|\s+"], ids=["builtin", "custom"])
def test_sigint_during_encode_file_stops_promptly_and_leaves_no_file(big_corpus, tmp_path, pattern):
    out_path = tmp_path / "ids.npy"
    elapsed, code, out, err = interrupt(ENCODE_FILE, [big_corpus, out_path, pattern], 0.3)
    assert "finished" not in out, "encoding ended before the signal: make the corpus bigger"
    assert code != 0 and "KeyboardInterrupt" in err, err[-2000:]
    assert elapsed < ENCODE_FILE_PROMPT_SECONDS, f"took {elapsed:.1f} s after SIGINT"
    assert os.listdir(tmp_path) == []
