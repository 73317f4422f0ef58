"""Many texts encoded into one flat NumPy array of ids with document offsets: no Python int
per id, the layout a training pipeline writes to disk.

>>> import bytepair
>>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
>>> ids, offsets = encode(tok, ["hi", "", "abc"])
>>> ids.tolist(), offsets.tolist()
([104, 105, 97, 98, 99], [0, 2, 2, 5])
"""

from __future__ import annotations

from collections.abc import Sequence


def encode(tok, texts: Sequence[str], *, policy=None, threads: int = 0):
    """(ids uint32, offsets int64): text i is ``ids[offsets[i]:offsets[i + 1]]``.

    ``policy`` is the (allowed, disallowed) pair of special tokens, None for the default.
    ``threads`` 0 means all cores; the core encodes the whole batch with the GIL released
    and writes both arrays' bytes itself. A loaded tokenizer.json whose pipeline the core
    does not run alone (a normalizer, several pre-tokenizer steps) encodes through that
    pipeline first. No template tokens are added (``padded_batch`` adds them).
    """
    if isinstance(texts, str):
        raise TypeError("encode_batch_to_numpy takes a list of str; for one text, call encode")
    allowed, disallowed = tok._default_policy if policy is None else policy
    run = getattr(tok, "_run", None)
    if run is not None:
        from bytepair.tokenizer import numpy_module

        numpy = numpy_module()
        lists = run.encode_many(list(texts), allowed, disallowed, threads)
        offsets = numpy.zeros(len(lists) + 1, dtype=numpy.int64)
        numpy.cumsum([len(x) for x in lists], out=offsets[1:])
        flat = numpy.fromiter((i for x in lists for i in x), numpy.uint32, int(offsets[-1]))
        return flat, offsets
    return tok._encoder.encode_batch_to_arrays(texts, allowed, disallowed, threads)
