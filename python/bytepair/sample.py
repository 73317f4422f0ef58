"""A uniform random sample of a corpus's documents, drawn in one streaming pass.

A document is a piece of a file or of a text between two separators (each file and each
text also ends one); an empty piece (two separators in a row) is no document. A piece of
whitespace only (the newline after the last ``<|endoftext|>``) is one: dropping it would
change the counts, and all documents must train what the whole corpus trains. The sample
is reservoir sampling (Vitter's Algorithm R) with ``random.Random(seed)``: each of the D
documents is in it with probability N/D, the same seed gives the same sample, and
N >= D gives all of them. Memory grows with N, not with the corpus: a file's document is
kept as its byte range (read again once, after the pass), a text's as the text itself.

>>> s = sample(["a|b|c", "d||e"], 2, seed=1, separator="|")
>>> s.documents(), s.seen
(['b', 'd'], 5)
>>> sample(["a|b|c"], 10, separator="|").documents()
['a', 'b', 'c']
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bytepair.errors import CorpusError
from bytepair.progress import Bar
from bytepair.shards import Shard

#: The sampling bar moves every 1 MB, not every document: TinyStories has one per 900
#: bytes, so 42 MB of it would call tqdm 46,000 times instead of 40.
BAR_STEP = 1 << 20

#: A file is read this much at a time to find its separators: the pass holds two reads'
#: worth, whatever the file's size.
READ_BYTES = 64 << 10


@dataclass
class Sample:
    """The sampled documents (``documents()``, in corpus order) and ``seen``, how many
    documents the corpus holds."""

    seen: int = 0
    # (position in the corpus, document): a text's piece, or (path, start, end) of a file.
    _kept: list[tuple[int, str | bytes | tuple[str, int, int]]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self._kept)

    def size(self, below: int | None = None, files: bool | None = None) -> int:
        """The sampled documents' length (bytes of a file's, ``len`` of a text's); with
        ``below`` and ``files``, of those that ``iter_documents(below, files)`` yields."""
        return sum(
            _length(doc)
            for _, doc in self._kept
            if (below is None or _length(doc) < below) and _from(doc, files)
        )

    def documents(self) -> list[str | bytes]:
        """The sampled documents in corpus order (a file's as bytes, a text's as given)."""
        return list(self.iter_documents())

    def file_ranges(self, at_least: int) -> list[tuple[str, int, int]]:
        """``(path, start, end)`` of the sampled file documents of ``at_least`` bytes, in
        corpus order: to count in place, never read into memory whole."""
        return [
            doc
            for _, doc in sorted(self._kept, key=lambda kept: kept[0])
            if isinstance(doc, tuple) and _length(doc) >= at_least
        ]

    def iter_documents(
        self, below: int | None = None, files: bool | None = None
    ) -> Iterator[str | bytes]:
        """``documents()`` one at a time, reading each file once, front to back (a file's
        documents are next to each other in corpus order, so one file is open at a time).
        With ``below``, file documents of ``below`` bytes or more are left out (see
        ``file_ranges``); with ``files``, only the documents of files (True) or of texts
        (False)."""
        path, f = None, None
        try:
            for _, doc in sorted(self._kept, key=lambda kept: kept[0]):
                if not _from(doc, files):
                    continue
                if not isinstance(doc, tuple):
                    yield doc
                    continue
                if below is not None and _length(doc) >= below:
                    continue
                if doc[0] != path:
                    if f is not None:
                        f.close()
                    path, f = doc[0], open(doc[0], "rb")
                f.seek(doc[1])
                yield f.read(doc[2] - doc[1])
        finally:
            if f is not None:
                f.close()


def _from(doc: str | bytes | tuple[str, int, int], files: bool | None) -> bool:
    """Whether ``doc`` is of a file when ``files`` is True, of a text when False."""
    return files is None or isinstance(doc, tuple) == files


def _length(doc: str | bytes | tuple[str, int, int]) -> int:
    return doc[2] - doc[1] if isinstance(doc, tuple) else len(doc)


def sample(
    sources: Iterable[str | bytes | Shard | os.PathLike],
    n: int | None,
    seed: int = 0,
    separator: str | None = None,
    progress: bool = False,
) -> Sample:
    """Samples ``n`` documents (None: all) from texts, file paths (``os.PathLike``) and
    byte ranges of files (``Shard``), in that order of the corpus.

    A plain ``str`` is a text here; the caller (``bytepair.train``) has already told file
    names from texts.
    """
    check(n, seed, separator)
    rng = random.Random(seed)
    out = Sample()
    kept = out._kept

    def offer(doc) -> None:
        # Algorithm R: document i (from 0) replaces a random slot with probability n/(i+1).
        i = out.seen
        out.seen += 1
        if n is None or i < n:
            kept.append((i, doc))
            return
        j = rng.randrange(i + 1)
        if j < n:
            kept[j] = (i, doc)

    for source in sources:
        if isinstance(source, Shard):
            _offer_file(source.path, source.start, source.end, separator, offer, progress)
        elif isinstance(source, os.PathLike):
            path = os.fspath(source)
            _offer_file(path, 0, os.path.getsize(path), separator, offer, progress)
        elif isinstance(source, (str, bytes)):
            _offer_text(source, separator, offer)
        else:
            raise CorpusError(
                f"texts must be str or bytes, got {type(source).__name__}: {source!r:.60}"
            )
    return out


def check(n: int | None, seed: int, separator: str | None) -> None:
    """Raises ValueError for a bad ``sample_documents``, ``seed`` or ``document_separator``.

    >>> check(0, 0, None)
    Traceback (most recent call last):
    ...
    ValueError: sample_documents must be None (all documents) or an int >= 1, got 0
    """
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"sample_documents must be None (all documents) or an int >= 1, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if separator is not None and (not isinstance(separator, str) or not separator):
        raise ValueError(f"document_separator must be a non-empty str, got {separator!r}")


def _offer_text(text: str | bytes, separator: str | None, offer) -> None:
    if isinstance(text, bytes):
        pieces: Sequence = text.split(separator.encode("utf-8")) if separator else [text]
    else:
        pieces = text.split(separator) if separator else [text]
    for piece in pieces:
        if piece:
            offer(piece)


def _offer_file(
    path: str, start: int, end: int, separator: str | None, offer, progress: bool
) -> None:
    sep = separator.encode("utf-8") if separator else b""
    name = os.path.basename(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise CorpusError(f"cannot read the corpus: {e}") from None
    with f, Bar(f"sampling {name}", total=end - start, enabled=progress) as bar:
        pos = start  # where the current document begins
        for cut in _cuts(f, start, end, sep, bar) if sep else ():
            if cut > pos:
                offer((path, pos, cut))
            pos = cut + len(sep)
        if end > pos:
            offer((path, pos, end))


def _cuts(f, start: int, end: int, sep: bytes, bar: Bar) -> Iterator[int]:
    """Where ``sep`` begins in bytes ``start..end`` of ``f``, left to right, not
    overlapping: read ``READ_BYTES`` at a time, never mapped whole, so that the pass leaves
    no page of the file resident (a mapped 100 MB file stayed in RSS to the end)."""
    f.seek(start)
    buf, base = b"", start  # buf holds the file's bytes base..base + len(buf)
    while base + len(buf) < end:
        block = f.read(min(READ_BYTES, end - base - len(buf)))
        if not block:  # the file shrank under us: its documents end here
            return
        buf += block
        i = 0
        while (cut := buf.find(sep, i)) >= 0:
            yield base + cut
            i = cut + len(sep)
        # Keep only what may begin a separator that the next block completes.
        keep = max(i, len(buf) - len(sep) + 1)
        base, buf = base + keep, buf[keep:]
        if base - bar.done - start >= BAR_STEP or base + len(buf) >= end:
            bar.update(base + len(buf) - start)
