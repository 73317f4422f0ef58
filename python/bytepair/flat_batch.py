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


def one_text_error(name: str) -> TypeError:
    """The error for one str where a batch method wants a list of texts."""
    return TypeError(f"{name} takes a list of str; for one text, call encode")


def not_a_text_error(texts: Sequence[object], name: str) -> TypeError | None:
    """After the core refused a batch: an error naming the method and the first item that
    is no str (a tutorial's batch of id lists, handed over to be padded), since the core's
    own message names neither; None when every item is a str (the error was another).

    >>> str(not_a_text_error(["a", [1, 2]], "encode_batch"))
    'encode_batch encodes texts: item 1 is of type list, not str'
    """
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            return TypeError(
                f"{name} encodes texts: item {i} is of type {type(text).__name__}, not str"
            )
    return None


def encode(
    tok,
    texts: Sequence[str],
    *,
    policy=None,
    threads: int = 0,
    name: str = "encode_batch_to_numpy",
):
    """(ids uint32, offsets int64): text i is ``ids[offsets[i]:offsets[i + 1]]``.

    ``policy`` is the (allowed, disallowed) pair of special tokens, None for the default.
    ``threads`` 0 means all cores; the core encodes the whole batch with the GIL released
    and writes both arrays' bytes itself. A loaded tokenizer.json whose pipeline the core
    does not run alone (a normalizer, several pre-tokenizer steps) encodes through that
    pipeline first. No template tokens are added (``padded_batch`` adds them). ``name``
    is the method the user called, for the errors.
    """
    if isinstance(texts, str):
        raise one_text_error(name)
    allowed, disallowed = tok._default_policy if policy is None else policy
    run = getattr(tok, "_run", None)
    try:
        if run is None:
            return tok._encoder.encode_batch_to_arrays(texts, allowed, disallowed, threads)
        lists = run.encode_many(list(texts), allowed, disallowed, threads)
    except TypeError:
        error = not_a_text_error(texts, name)
        if error is None:
            raise
        raise error from None
    from bytepair.tokenizer import numpy_module

    numpy = numpy_module()
    offsets = numpy.zeros(len(lists) + 1, dtype=numpy.int64)
    numpy.cumsum([len(x) for x in lists], out=offsets[1:])
    flat = numpy.fromiter((i for x in lists for i in x), numpy.uint32, int(offsets[-1]))
    return flat, offsets
