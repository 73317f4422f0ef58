"""Cutting a corpus into shards: files, globs and directories become byte ranges of files.

A shard is the unit of work of a distributed run: one task counts one shard, and one
checkpoint file holds its counts. Large files are cut into byte ranges, only where the cut
provably changes no count:

- just before a special token that no other special-token occurrence straddles: training
  splits the text into segments at special tokens before it pre-tokenizes, so both sides of
  the cut are counted exactly as in one;
- with no special tokens, at a safe cut of the pattern (``_core.safe_cuts``,
  ``src/safe_cut.rs``): the built-in patterns share one rule, at spaces and newlines, so
  one plan serves them all; ``superword``, whose pieces span spaces and newlines, is cut
  only where an ASCII digit meets another ASCII byte. A custom pattern has no provable
  cut, so a file with a custom pattern and no special tokens is one shard.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "a.txt"), "wb") as f:
...     _ = f.write(b"one<|e|>two<|e|>three")
>>> [(s.start, s.end) for s in plan_shards([d], ["<|e|>"], shard_bytes=2)]
[(0, 3), (3, 11), (11, 21)]
"""

from __future__ import annotations

import itertools
import mmap
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bytepair import _core, documents
from bytepair.errors import CorpusError

#: 64 MiB per task: counting runs at ~100 MB/s per core, so a task takes about a second,
#: long enough that Ray's per-task overhead (a few ms) is noise, short enough that a killed
#: run loses little and 1 TB still makes 16k tasks to balance across a cluster.
DEFAULT_SHARD_BYTES = 64 << 20


@dataclass(frozen=True)
class Shard:
    """Bytes ``start..end`` of the file ``path`` as it was when planned (``size``, ``mtime_ns``)."""

    path: str
    start: int
    end: int
    size: int
    mtime_ns: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start


def expand_inputs(inputs: Iterable[str | os.PathLike] | str | os.PathLike) -> list[str]:
    """Files, globs and directories (``documents.corpus_paths``) as a sorted, duplicate-free
    list of absolute file paths: every node of a cluster sees the same list. A missing
    path or a glob that matches nothing is a CorpusError naming it."""
    try:
        paths = documents.corpus_paths(inputs)
    except CorpusError as e:
        raise CorpusError(
            f"{e}; the distributed engine takes paths, globs or directories, not text (use "
            f"engine='local' for in-memory text)"
        ) from None
    return sorted(set(map(os.path.abspath, paths)))


def plan_shards(
    inputs: Iterable[str | os.PathLike] | str | os.PathLike,
    special_tokens: Sequence[str] = (),
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    pattern: str = "gpt2",
) -> list[Shard]:
    """The shards of a corpus: each file cut into ranges of about ``shard_bytes`` at safe
    cuts of ``pattern`` (a name or a regex; see the module docstring)."""
    if shard_bytes < 1:
        raise ValueError(f"shard_bytes must be positive, got {shard_bytes}")
    tokens = sorted({t.encode("utf-8") for t in special_tokens if t})
    shards = []
    for path in expand_inputs(inputs):
        st = os.stat(path)
        cuts = _cuts(path, st.st_size, tokens, shard_bytes, pattern)
        bounds = [0, *cuts, st.st_size]
        shards.extend(
            Shard(path, a, b, st.st_size, st.st_mtime_ns) for a, b in itertools.pairwise(bounds)
        )
    return shards


def _cuts(path: str, size: int, tokens: list[bytes], shard_bytes: int, pattern: str) -> list[int]:
    """Offsets in (0, size) to cut the file at, about ``shard_bytes`` apart: starts of
    unstraddled special tokens, or (no special tokens) the pattern's safe cuts."""
    if size <= shard_bytes:
        return []
    cuts: list[int] = []
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        target = shard_bytes
        while target < size:
            cut = _next_safe_cut(data, target, tokens, pattern)
            if cut is None or cut >= size:
                break
            if cut > (cuts[-1] if cuts else 0):
                cuts.append(cut)
            target = cut + shard_bytes
    return cuts


def _next_safe_cut(data: mmap.mmap, pos: int, tokens: list[bytes], pattern: str) -> int | None:
    if tokens:
        # Starts of special tokens no other occurrence straddles: the core's matcher.
        cut = _core.special_cuts(data, [pos], [t.decode("utf-8") for t in tokens])[0]
    else:
        # The core knows which rule, if any, the pattern's splitter has.
        cut = _core.safe_cuts(pattern, data, [pos])[0]
    return cut if cut < len(data) else None
