"""A held-out slice: the tail of a corpus kept out of training, to measure bytes/token on
text the tokenizer has never seen (the honest number; on training text it flatters).

>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.txt").write_bytes(b"one\\ntwo\\nthree\\nfour\\n")
>>> train_on, held_out = carve([d / "a.txt"], fraction=0.3)
>>> held_out, (train_on[0].start, train_on[0].end)
(b'four\\n', (0, 14))
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from bytepair.errors import CorpusError
from bytepair.shards import Shard

#: The held-out slice is at most this long: 1 MB measures bytes/token to three digits,
#: and anything more would slow the closing summary for no gain.
MAX_BYTES = 1 << 20


def carve(
    paths: Sequence[str | os.PathLike],
    fraction: float,
    max_bytes: int = MAX_BYTES,
) -> tuple[list[str | Shard], bytes]:
    """Cuts the last ``fraction`` of the corpus (at most ``max_bytes``) off the end of the
    last file, at a line start when there is one.

    Returns what to train on, for ``bytepair.train``, and the held-out bytes. The last file
    becomes a byte range (a ``Shard``) that stops before the held-out tail: it is counted in
    place, never copied (a copy of a file bigger than the temp folder, or than memory when
    the temp folder is a RAM disk, would fail).
    """
    paths = [os.fspath(p) for p in paths]
    if not 0 <= fraction < 1:
        raise ValueError(f"held-out fraction {fraction} must be in [0, 1)")
    try:
        stats = [os.stat(p) for p in paths]
    except OSError as e:
        raise CorpusError(f"cannot read training file {e.filename}: {e.strerror}") from None
    sizes = [st.st_size for st in stats]
    want = min(int(sum(sizes) * fraction), max_bytes, sizes[-1] // 2) if paths else 0
    if want <= 0:
        return list(paths), b""
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
    part = Shard(last, 0, keep, sizes[-1], stats[-1].st_mtime_ns)
    return [*paths[:-1], part], tail
