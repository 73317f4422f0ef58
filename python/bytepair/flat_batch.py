"""Many texts encoded into one flat NumPy array of ids with document offsets: no Python int
per id, the layout a training pipeline writes to disk.

>>> import bytepair
>>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
>>> ids, offsets = encode(tok, ["hi", "", "abc"])
>>> ids.tolist(), offsets.tolist()
([104, 105, 97, 98, 99], [0, 2, 2, 5])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

# The core releases the GIL only for texts of at least 2,048 bytes (DETACH_BYTES in
# src/py.rs); below that a second thread would only wait for the first. Texts are measured
# in characters here, which is at most their UTF-8 length.
_DETACHED_CHARS = 2048


def encode(tok, texts: Sequence[str], *, policy=None, threads: int = 0):
    """(ids uint32, offsets int64): text i is ``ids[offsets[i]:offsets[i + 1]]``.

    ``policy`` is the (allowed, disallowed) pair of special tokens, None for the default.
    ``threads`` 0 means all cores; texts are cut into that many contiguous runs.
    """
    import numpy

    if isinstance(texts, str):
        raise TypeError("encode_batch_to_numpy takes a list of str; for one text, call encode")
    texts = list(texts)
    encode_one = tok._encoder.encode_to_array
    args = () if policy is None else policy

    def run(part: Sequence[str]) -> list[bytearray]:
        return [encode_one(t, *args) for t in part]

    workers = min(threads or os.cpu_count() or 1, len(texts))
    long_texts = texts and sum(map(len, texts)) >= _DETACHED_CHARS * len(texts)
    if workers > 1 and long_texts:
        step = -(-len(texts) // workers)
        with ThreadPoolExecutor(workers) as pool:
            runs = list(pool.map(run, [texts[i : i + step] for i in range(0, len(texts), step)]))
        buffers = [b for part in runs for b in part]
    else:
        buffers = run(texts)
    offsets = numpy.zeros(len(buffers) + 1, dtype=numpy.int64)
    numpy.cumsum([len(b) // 4 for b in buffers], out=offsets[1:])
    ids = numpy.frombuffer(bytearray().join(buffers), dtype=numpy.uint32)
    return ids, offsets
