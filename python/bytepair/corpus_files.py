"""Corpus files as the audit and ``bytepair compare`` read them: paths checked up front,
``.xz``, ``.gz`` and ``.bz2`` decompressed on the fly.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
>>> _ = path.write_bytes(b"hi")
>>> with open_corpus(checked_paths(path)[0]) as f:
...     f.read()
b'hi'
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from collections.abc import Iterable
from typing import BinaryIO

from bytepair.errors import CorpusError

_OPENERS = {".xz": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def open_corpus(path: str | os.PathLike) -> BinaryIO:
    """The file opened for reading bytes, decompressed when its name ends in .xz/.gz/.bz2."""
    opener = _OPENERS.get(os.path.splitext(os.fspath(path))[1], open)
    return opener(path, "rb")


def checked_paths(corpus: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """A path or a list of paths, as a list of paths of existing files (else CorpusError)."""
    items = [corpus] if isinstance(corpus, (str, bytes, os.PathLike)) else list(corpus)
    if not items:
        raise CorpusError("the corpus is an empty list: pass one or more file paths")
    paths = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise CorpusError(
                f"the corpus must be file paths, got {type(item).__name__}: {item!r:.60}"
            )
        path = os.fspath(item)
        if os.path.isdir(path):
            raise CorpusError(f"corpus {path!r} is a directory; pass the files inside it")
        if not os.path.isfile(path):
            raise CorpusError(f"corpus file {path!r} does not exist")
        paths.append(path)
    return paths
