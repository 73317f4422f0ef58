"""Atomic writes: a crash or a full disk never leaves half a tokenizer file in place.

Each file is written to a temporary file in the destination's directory (so the rename
stays on one filesystem), flushed to disk, then renamed over the destination.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> write_files({path: b"hello"})
>>> path.read_bytes()
b'hello'
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO


def _open_temp(path: str) -> tuple[str, BinaryIO]:
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as a plain open() would; mkstemp's
    # 0o600 would make a saved tokenizer unreadable to everyone else.
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    return tmp, os.fdopen(fd, "w+b")


def _write_temp(path: str, parts: Iterable[bytes]) -> str:
    tmp, f = _open_temp(path)
    try:
        with f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A new file to write (and seek in) that replaces ``path`` when the block ends, and
    vanishes if the block raises: for files written in pieces, such as a ``.npy`` whose
    header is patched last.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.bin"
    >>> with replacing(path) as f:
    ...     _ = f.write(b"xyz"), f.seek(0), f.write(b"a")
    >>> path.read_bytes()
    b'ayz'
    """
    tmp, f = _open_temp(os.fspath(path))
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, path)


def write_parts(path: str | os.PathLike, parts: Iterable[bytes]) -> None:
    """Writes ``parts`` to ``path`` as they come, atomically: a failure midway (in the
    writing, or in the code producing the parts) leaves the old file, or none.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "b.txt"
    >>> write_parts(path, iter([b"he", b"llo"]))
    >>> path.read_bytes()
    b'hello'
    """
    os.replace(_write_temp(os.fspath(path), parts), path)


def write_files(files: Mapping[str | os.PathLike, bytes]) -> None:
    """Writes every file or none: all temporaries are complete before the first rename.

    Between two renames a crash could leave one new file beside one old one; readers of a
    pair (GPT-2's vocab.json + merges.txt) check that every merge's tokens are in the vocab,
    which catches such a mix.
    """
    temps: list[tuple[str, str]] = []
    try:
        for path, data in files.items():
            temps.append((_write_temp(os.fspath(path), [data]), os.fspath(path)))
    except BaseException:
        for tmp, _ in temps:
            os.unlink(tmp)
        raise
    for tmp, path in temps:
        os.replace(tmp, path)
