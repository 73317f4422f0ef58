"""Atomic writes: a crash or a full disk never leaves half a file in place.

Each file is written to a temporary file beside its destination (so the rename stays on
one filesystem), flushed to disk, then renamed over the destination, and the directory
flushed too, so that the new name survives a power cut. Replacing an existing
file keeps its permission bits; a symbolic link has its target replaced, not the link. A
failure removes the temporary file and names the destination, not the temporary.

A temporary file is named ``.<name>.tmp-<pid>-<random>``: a process killed mid-write (out
of memory, SIGKILL) leaves it behind, and the next write to the same destination removes
it once no process has that pid.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> write_files({path: b"hello"})
>>> path.read_bytes()
b'hello'
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO

_TEMP = re.compile(r"\.(.+)\.tmp-(\d+)(?:-[0-9a-f]+)?")


def _named(e: OSError, path: str | os.PathLike) -> OSError:
    """``e`` as the same kind of error about ``path``, the file the caller asked for."""
    return type(e)(e.errno, e.strerror, os.fspath(path))


def _of_temp(e: BaseException, tmp: str) -> bool:
    """Whether ``e`` is the operating system's error about the temporary file (a full
    disk), not one the caller's code raised (a CorpusError about its input, say)."""
    return isinstance(e, OSError) and e.errno is not None and e.filename in (None, tmp)


def target(path: str | os.PathLike) -> str:
    """The file a write to ``path`` replaces: ``path``, or the file a symbolic link points
    to. A directory, a device, a pipe or a socket (renamed over, ``/dev/null`` would become a
    regular file), or no name at all, is an OSError naming ``path``.

    >>> target("/no/such/dir/x.json")
    '/no/such/dir/x.json'
    >>> try:
    ...     target("/dev/null")
    ... except OSError as e:
    ...     print(e.strerror)
    a device, pipe or socket, which an atomic write would replace: name a regular file
    """
    name = os.fspath(path)
    if not name:
        raise FileNotFoundError(errno.ENOENT, "no file name given; name a file to write", name)
    real = os.path.realpath(name)
    if os.path.isdir(real):
        raise IsADirectoryError(errno.EISDIR, "it is a directory, not a file to write", name)
    if is_special(real):
        raise OSError(errno.EINVAL, NOT_A_FILE, name)
    return real


NOT_A_FILE = "a device, pipe or socket, which an atomic write would replace: name a regular file"


def is_special(path: str | os.PathLike) -> bool:
    """Whether ``path`` exists and is no regular file nor directory: a device such as
    ``/dev/null``, a pipe or a socket, which is written into, never replaced.

    >>> is_special("/dev/null"), is_special("/no/such/file")
    (True, False)
    """
    return os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)


def temp_owner(name: str, base: str | None = None) -> int | None:
    """The pid of the process that writes the temporary file ``name`` (a file name, in a
    directory), or None if ``name`` is no temporary file (of destination ``base``, if
    given; a temporary file of one of its temporary files counts: the ids a corpus's
    text file stages beside the output are one).

    >>> temp_owner(".ids.npy.tmp-4242-0a1b"), temp_owner(".ids.npy.tmp-4242", "ids.npy")
    (4242, 4242)
    >>> temp_owner("..ids.npy.tmp-7-0a1b.tmp-7-2c3d", "ids.npy")
    7
    >>> temp_owner("ids.npy"), temp_owner(".ids.npy.tmp-4242", "other.npy")
    (None, None)
    """
    match = _TEMP.fullmatch(name)
    if match is None:
        return None
    if base is not None and match[1] != base and temp_owner(match[1], base) is None:
        return None
    return int(match[2])


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if pid <= 0 or os.name != "posix":  # os.kill on Windows would end the process
        return pid > 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process, or no pid at all
        return True
    return True


def remove_stale_temps(directory: str | os.PathLike, base: str | None = None) -> None:
    """Removes the temporary files in ``directory`` (of destination ``base``, if given)
    whose writer has died: what a killed run leaves."""
    directory = os.fspath(directory) or "."
    try:
        names = os.listdir(directory)
    except OSError:
        return  # a folder that cannot be listed: the write itself reports the problem
    for name in names:
        pid = temp_owner(name, base)
        if pid is not None and not _alive(pid):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, name))


def temp_path(path: str | os.PathLike) -> str:
    """A new name beside ``path`` for a temporary file of it (see the module docstring).

    >>> os.path.basename(temp_path("out/ids.npy")).startswith(f".ids.npy.tmp-{os.getpid()}-")
    True
    """
    directory, base = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{base}.tmp-{os.getpid()}-{secrets.token_hex(6)}")


def temp_for(path: str | os.PathLike) -> tuple[str, str]:
    """``(temporary, target)``: an empty temporary file for another writer to fill (the
    core's ``encode_file``), and the file it is to replace (see ``target``); ``commit``
    renames one to the other. Stale temporaries of the same target are removed first.
    """
    real = target(path)
    directory, base = os.path.split(real)
    remove_stale_temps(directory, base)
    tmp = temp_path(real)
    try:
        # 0o666 lets the umask decide the mode of a new file, as a plain open() would;
        # mkstemp's 0o600 would make a saved tokenizer unreadable to everyone else.
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    except FileNotFoundError as e:
        raise FileNotFoundError(e.errno, "its folder does not exist", os.fspath(path)) from None
    except OSError as e:
        raise _named(e, path) from None
    try:
        with contextlib.suppress(FileNotFoundError):
            os.fchmod(fd, stat.S_IMODE(os.stat(real).st_mode))
    finally:
        os.close(fd)
    return tmp, real


def commit(tmp: str, real: str, path: str | os.PathLike) -> None:
    """Renames the temporary file ``tmp`` over ``real`` (``temp_for``'s pair); on failure
    removes it and raises an OSError naming ``path``."""
    try:
        os.replace(tmp, real)
    except OSError as e:
        discard(tmp)
        raise _named(e, path) from None
    _sync_directory(os.path.dirname(real), path)


def _sync_directory(directory: str, path: str | os.PathLike) -> None:
    """Makes a rename in ``directory`` durable: the file's own fsync does not record its
    new name, and after a power cut the directory could still list the old file."""
    fd = os.open(directory or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as e:
        raise _named(e, path) from None
    finally:
        os.close(fd)


def discard(tmp: str) -> None:
    """Removes a temporary file that will not be committed."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


def _write_temp(path: str | os.PathLike, parts: Iterable[bytes]) -> tuple[str, str]:
    tmp, real = temp_for(path)
    try:
        with open(tmp, "r+b") as f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
    except BaseException as e:
        discard(tmp)
        if _of_temp(e, tmp):
            raise _named(e, path) from None
        raise
    return tmp, real


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
    tmp, real = temp_for(path)
    try:
        with open(tmp, "r+b") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
    except BaseException as e:
        discard(tmp)
        if _of_temp(e, tmp):
            raise _named(e, path) from None
        raise
    commit(tmp, real, path)


def write_parts(path: str | os.PathLike, parts: Iterable[bytes]) -> None:
    """Writes ``parts`` to ``path`` as they come, atomically: a failure midway (in the
    writing, or in the code producing the parts) leaves the old file, or none.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "b.txt"
    >>> write_parts(path, iter([b"he", b"llo"]))
    >>> path.read_bytes()
    b'hello'
    """
    commit(*_write_temp(path, parts), path)


def write_files(files: Mapping[str | os.PathLike, bytes]) -> None:
    """Writes every file or none: every destination is checked and every temporary
    complete before the first rename.

    Between two renames a crash could leave one new file beside one old one; readers of a
    pair (GPT-2's vocab.json + merges.txt) check that every merge's tokens are in the vocab,
    which catches such a mix.
    """
    for path in files:
        target(path)
    temps: list[tuple[str, str, str | os.PathLike]] = []
    try:
        for path, data in files.items():
            temps.append((*_write_temp(path, [data]), path))
        while temps:
            commit(*temps[0])
            temps.pop(0)
    finally:
        for tmp, _, _ in temps:
            discard(tmp)
