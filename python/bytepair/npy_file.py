"""A ``.npy`` array of ids written in pieces, as they are encoded, and read back in slices:
memory stays flat whatever the corpus, and the file appears only when complete.

The header is written first with room for any length, and patched with the real length
when the writer closes; until then the data lives in a temporary file beside ``path``.

>>> import numpy, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "ids.npy"
>>> with NpyWriter(path, numpy.uint16) as out:
...     out.write(numpy.array([1, 2], numpy.uint32))
...     out.write(numpy.array([3], numpy.uint32))
>>> numpy.load(path).tolist()
[1, 2, 3]
"""

from __future__ import annotations

import os

from bytepair.formats.atomic import replacing

# The header's room: any length up to 20 digits, padded to numpy's 64-byte alignment.
_MAX_DIGITS = 20


def ids_dtype(vocab_size: int):
    """uint16 when every id fits, else uint32: half the disk for vocabularies up to 65,536.

    >>> ids_dtype(50257).__name__, ids_dtype(200019).__name__
    ('uint16', 'uint32')
    """
    import numpy

    return numpy.uint16 if vocab_size <= 1 << 16 else numpy.uint32


def _header(dtype, n: int) -> bytes:
    import numpy

    descr = numpy.dtype(dtype).str
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}"
    room = len(text.replace(str(n), "9" * _MAX_DIGITS))
    total = -(-(10 + room + 1) // 64) * 64  # magic, version and length: 10 bytes
    text = text + " " * (total - 10 - len(text) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + (total - 10).to_bytes(2, "little") + text.encode("latin-1")


def problem(path: str | os.PathLike, dtype, count: int) -> str | None:
    """What keeps ``path`` from being a complete 1-D ``.npy`` of ``count`` values of
    ``dtype`` (missing, unreadable, another shape or type, truncated), or None.

    >>> import numpy, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ids.npy"
    >>> numpy.save(path, numpy.arange(3, dtype=numpy.uint16))
    >>> problem(path, numpy.uint16, 3), problem(path, numpy.uint16, 4)
    (None, 'holds 3 values of uint16, expected 4 of uint16')
    """
    import numpy

    want = numpy.dtype(dtype)
    try:
        with open(path, "rb") as f:
            shape, got = _read_header(f)
            header = f.tell()
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        return "is missing"
    except (OSError, ValueError) as e:
        return f"is not a readable .npy file ({e})"
    if shape != (count,) or got != want:
        n = shape[0] if len(shape) == 1 else shape
        return f"holds {n} values of {got}, expected {count} of {want}"
    if size != header + count * want.itemsize:
        return (
            f"is truncated or damaged: {size:,} bytes, expected {header + count * want.itemsize:,}"
        )
    return None


def _read_header(f) -> tuple[tuple, object]:
    """The shape and dtype of the ``.npy`` open as ``f``, which is left at its data."""
    from numpy.lib import format as npy

    if npy.read_magic(f) == (2, 0):  # a header too long for version 1's 16-bit length
        shape, _, dtype = npy.read_array_header_2_0(f)
    else:
        shape, _, dtype = npy.read_array_header_1_0(f)
    return shape, dtype


class NpyReader:
    """Slices of a 1-D ``.npy``, read from the file rather than mapped: a mapping keeps every
    page it has read resident, so memory would grow with the file, not the slice."""

    def __init__(self, path: str | os.PathLike):
        self._file = open(path, "rb")
        try:
            shape, self.dtype = _read_header(self._file)
        except BaseException:
            self._file.close()
            raise
        if len(shape) != 1:
            self._file.close()
            raise ValueError(f"{os.fspath(path)}: a .npy of shape {shape}, expected 1-D")
        self._data = self._file.tell()
        self._length = shape[0]

    def __len__(self) -> int:
        return self._length

    def read(self, start: int, stop: int):
        """Values ``start:stop`` (within the array) as a new array."""
        import numpy

        self._file.seek(self._data + start * self.dtype.itemsize)
        return numpy.fromfile(self._file, self.dtype, stop - start)

    def __enter__(self) -> NpyReader:
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()


class NpyWriter:
    """Appends id arrays to one 1-D ``.npy`` of ``dtype``; ``count`` ids so far."""

    def __init__(self, path: str | os.PathLike, dtype):
        self.path, self.dtype, self.count = os.fspath(path), dtype, 0
        self._replacing = replacing(self.path)
        self._file = None

    def __enter__(self) -> NpyWriter:
        self._file = self._replacing.__enter__()
        self._file.write(_header(self.dtype, 0))
        return self

    def write(self, ids) -> None:
        """Appends ``ids`` (any integer array whose values fit ``dtype``)."""
        self._file.write(ids.astype(self.dtype, copy=False).tobytes())
        self.count += len(ids)

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self._file.seek(0)
            self._file.write(_header(self.dtype, self.count))
        self._replacing.__exit__(*exc)
