"""Corpus files as the audit and ``bytepair compare`` read them: ``.xz``, ``.gz`` and
``.bz2`` decompressed on the fly (the audit names its files as ``bytepair.documents`` does).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
>>> _ = path.write_bytes(b"hi")
>>> with open_corpus(path) as f:
...     f.read()
b'hi'
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from typing import BinaryIO

_OPENERS = {".xz": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def is_compressed(path: str | os.PathLike) -> bool:
    """Whether ``open_corpus`` decompresses the file (so its size on disk is not its text's).

    >>> is_compressed("a.txt.xz"), is_compressed("a.txt")
    (True, False)
    """
    return os.path.splitext(os.fspath(path))[1] in _OPENERS


def open_corpus(path: str | os.PathLike) -> BinaryIO:
    """The file opened for reading bytes, decompressed when its name ends in .xz/.gz/.bz2."""
    opener = _OPENERS.get(os.path.splitext(os.fspath(path))[1], open)
    return opener(path, "rb")
