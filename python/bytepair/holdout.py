"""A held-out slice: the tail of a corpus kept out of training, to measure bytes/token on
text the tokenizer has never seen (the honest number; on training text it flatters).

>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.txt").write_bytes(b"one\\ntwo\\nthree\\nfour\\n")
>>> train_paths, held_out = carve([d / "a.txt"], fraction=0.3, workdir=d / "w")
>>> held_out, pathlib.Path(train_paths[0]).read_bytes()
(b'four\\n', b'one\\ntwo\\nthree\\n')
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from bytepair.errors import CorpusError

#: The held-out slice is at most this long: 1 MB measures bytes/token to three digits,
#: and anything more would slow the closing summary for no gain.
MAX_BYTES = 1 << 20


def carve(
    paths: Sequence[str | os.PathLike],
    fraction: float,
    workdir: str | os.PathLike,
    max_bytes: int = MAX_BYTES,
) -> tuple[list[str], bytes]:
    """Cuts the last ``fraction`` of the corpus (at most ``max_bytes``) off the end of the
    last file, at a line start when there is one.

    Returns the paths to train on and the held-out bytes. Only the last file is copied
    (into ``workdir``, without its tail); the others are used in place.
    """
    paths = [os.fspath(p) for p in paths]
    if not 0 <= fraction < 1:
        raise ValueError(f"held-out fraction {fraction} must be in [0, 1)")
    try:
        sizes = [os.path.getsize(p) for p in paths]
    except OSError as e:
        raise CorpusError(f"cannot read training file {e.filename}: {e.strerror}") from None
    want = min(int(sum(sizes) * fraction), max_bytes, sizes[-1] // 2) if paths else 0
    if want <= 0:
        return paths, b""
    last = paths[-1]
    with open(last, "rb") as f:
        # Read one byte more, to see whether the slice already starts at a line start.
        f.seek(sizes[-1] - want - 1)
        before, tail = f.read(1), f.read()
        # Else start it at the next line start, so that it does not begin mid-word.
        newline = tail.find(b"\n")
        if before != b"\n" and 0 <= newline < len(tail) - 1:
            tail = tail[newline + 1 :]
        keep = sizes[-1] - len(tail)
        f.seek(0)
        os.makedirs(workdir, exist_ok=True)
        copy = os.path.join(workdir, Path(last).name)
        with open(copy, "wb") as out:
            _copy_prefix(f, out, keep)
    return [*paths[:-1], copy], tail


def _copy_prefix(src, dst, n: int) -> None:
    chunk = 1 << 22
    while n > 0:
        block = src.read(min(chunk, n))
        if not block:
            break
        dst.write(block)
        n -= len(block)
