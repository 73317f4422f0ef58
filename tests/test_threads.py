"""One Tokenizer used from 8 Python threads at once gives exactly the sequential results,
with no deadlock. The core releases the GIL, so the threads really overlap."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import bytepair
import numpy as np
import pytest
from conftest import CORPORA, corpus_sample

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    data = [corpus_sample(c, 40_000).decode("utf-8") for c in CORPORA]
    return bytepair.train(data, vocab_size=1000, special_tokens=[EOT], progress=False)


def work(tok, texts, tmp_path, n):
    """Every public entry point, on texts that differ per thread."""
    out = []
    for i, text in enumerate(texts):
        out.append(tok.encode(text, allowed_special="all"))
        out.append(tok.encode_ordinary(text))
        out.append(tok.encode_bytes(text.encode() + b"\xff", allowed_special="all"))
        out.append(tok.encode_batch([text, text[:100]], disallowed_special=(), threads=2))
        out.append(list(tok.encode_iterable(text.splitlines(keepends=True), allowed_special="all")))
        out.append(tok.encode_with_offsets(text, allowed_special="all"))
        out.append(tok.decode(out[0]))
        decoder = tok.decoder()
        out.append("".join(decoder.feed(t) for t in out[0]) + decoder.flush())
        src, dst = tmp_path / f"in-{n}-{i}.txt", tmp_path / f"ids-{n}-{i}.npy"
        src.write_text(text)
        seen = []
        tok.encode_file(
            src, dst, threads=2, progress=lambda done, total, seen=seen: seen.append(done)
        )
        out.append(np.load(dst).tolist())
        out.append(seen[-1] if seen else None)
    return out


def test_one_tokenizer_from_8_threads_gives_the_sequential_results(tok, tmp_path):
    samples = [corpus_sample(c, 120_000).decode("utf-8") for c in CORPORA]
    jobs = []
    for n in range(8):
        s = samples[n % len(samples)]
        jobs.append([s[n * 997 : n * 997 + 40_000] + EOT + s[:500], s[-20_000:]])
    want = [work(tok, texts, tmp_path, n) for n, texts in enumerate(jobs)]
    for _ in range(2):
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(work, tok, texts, tmp_path, n) for n, texts in enumerate(jobs)]
            # A deadlock fails here instead of hanging the suite.
            got = [f.result(timeout=120) for f in futures]
        assert got == want
