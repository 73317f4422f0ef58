"""The documents of ``.jsonl`` and ``.parquet`` files as one stream of texts for training,
with a progress bar through the files' bytes.

Training counts these documents as texts (``bytepair.documents`` reads them). A text's
length says nothing of how much of the corpus is left, so the bar follows where the
reading is in the files instead: a ``.jsonl`` file's byte offset, a ``.parquet`` file's
row as a share of its size. That gives the bar a total, so a percentage and an ETA.

The bar is drawn once the job that reads the texts takes its first one, not before: the
corpus check reads the first documents early, and a bar drawn then would sit beside those
of the plain-text files, counted or sampled first.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.jsonl"
>>> _ = path.write_text('{"text": "hi"}\\n{"text": "there"}\\n')
>>> texts = DocumentTexts([str(path)], "text")
>>> list(texts), texts.total
(['hi', 'there'], 33)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from bytepair import documents
from bytepair.progress import Bar


class DocumentTexts:
    """The texts of ``paths`` (``.jsonl`` and ``.parquet`` files), ``text_field`` of each
    document, in order; ``total`` is the files' size in bytes."""

    def __init__(self, paths: list[str], text_field: str):
        self.paths, self.text_field = paths, text_field
        self.total = sum(os.path.getsize(p) for p in paths)
        self._done = 0  # the bytes of the files read so far
        self._bar: Bar | None = None

    def __iter__(self) -> Iterator[str]:
        read = 0  # the bytes of the files before this one
        for path in self.paths:
            size, end = os.path.getsize(path), documents.size(path)
            for chunk in documents.read_chunks(path, self.text_field):
                yield from chunk.texts
                self._moved(read + size * chunk.end // max(end, 1))
            read += size
            self._moved(read)

    def with_bar(self, texts: Iterable[str], desc: str, show: bool) -> Iterator[str]:
        """``texts``, this stream or what is left of it, with the bar ``desc`` drawn from
        the first one taken on, until the last."""
        with Bar(desc, total=self.total, unit="B", enabled=show) as bar:
            bar.update(self._done)
            self._bar = bar
            try:
                yield from texts
            finally:
                self._bar = None

    def _moved(self, done: int) -> None:
        self._done = done
        if self._bar is not None:
            self._bar.update(done)
