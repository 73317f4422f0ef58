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

import os
import secrets
from collections.abc import Iterable, Mapping


def _write_temp(path: str, parts: Iterable[bytes]) -> str:
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as a plain open() would; mkstemp's
    # 0o600 would make a saved tokenizer unreadable to everyone else.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


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
