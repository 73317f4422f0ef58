"""A corpus as a stream of ids, document after document, in bounded memory: what
``encode_file`` writes to one ``.npy`` and ``token_shards`` to many.

Documents come from ``documents``: each line of a ``.jsonl``, each row of a ``.parquet``,
each plain-text file whole (encoded by the core, memory-mapped and on all threads, into
a temporary ``.npy`` read back in slices, not mapped). With a ``separator`` id, each
document's ids are followed by it. Every document has a ``Position`` a stream can resume from.

>>> import bytepair, pathlib, tempfile
>>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.jsonl"
>>> _ = path.write_text('{"text": "hi"}\\n{"text": "yo"}\\n')
>>> [p.ids.tolist() for p in stream(tok, [str(path)], separator=256)]
[[104, 105, 256, 121, 111, 256]]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bytepair import documents, flat_batch
from bytepair.errors import DisallowedSpecialError, SpecialTokenError
from bytepair.formats import atomic
from bytepair.npy_file import NpyReader

#: Ids per slice read back from a plain-text file's array: 4 MB of uint32, a few copies of
#: which are what the slices cost in memory, whatever the file's size.
TEXT_SLICE = 1 << 20


@dataclass(frozen=True)
class Position:
    """A document of the corpus: ``file`` (its index in the paths), ``start`` (where it
    begins in that file, as ``documents.read_chunks`` counts), ``document`` (its number in
    the whole corpus) and ``skip`` (how many of its ids are already written)."""

    file: int = 0
    start: int = 0
    document: int = 0
    skip: int = 0


@dataclass(frozen=True)
class Piece:
    """Ids of consecutive documents: document i is ``ids[ends[i-1]:ends[i]]`` (from 0 for
    the first) and sits at ``positions[i]``. The first may be the rest of a document whose
    first ``positions[0].skip`` ids came before; the last continues in the next piece
    unless ``complete``."""

    ids: object  # numpy uint32 array
    ends: list[int]
    positions: list[Position]
    complete: bool = True


def separator_id(tok, separator: str | None) -> int | None:
    """The id of the special token that ends each document, or None."""
    if separator is None:
        return None
    specials = tok.special_tokens
    if separator not in specials:
        raise SpecialTokenError(
            f"document_separator {separator!r} is not a special token of this tokenizer "
            f"(it has {sorted(specials)!r}); add it with special_tokens= when training"
        )
    return specials[separator]


def stream(
    tok,
    paths: list[str],
    *,
    text_field: str = "text",
    separator: int | None = None,
    policy: tuple[frozenset[str], frozenset[str]] | None = None,
    threads: int = 0,
    start: Position = Position(),
    on_progress: Callable[[int], object] | None = None,
    scratch_for: str | None = None,
) -> Iterator[Piece]:
    """The ids of ``paths`` from ``start`` on. ``policy`` is the (allowed, disallowed)
    special tokens, default all allowed (training data); ``on_progress(bytes done)``
    follows the files' sizes on disk; a plain-text file's ids are staged in a temporary
    file of ``scratch_for`` (the output; default: the text file), named as
    ``formats.atomic`` names them, so that the next write there removes what a killed
    run left."""
    if policy is None:
        policy = tok._policy("all", ())
    weights = [os.path.getsize(p) for p in paths]
    done_before = sum(weights[: start.file])
    first = start
    for index in range(start.file, len(paths)):
        path = paths[index]
        extent = max(documents.size(path), 1)

        def report(reached: int, before=done_before, weight=weights[index], extent=extent):
            """Progress at position ``reached`` of this file (a byte, or a Parquet row)."""
            if on_progress is not None:
                on_progress(before + weight * min(reached, extent) // extent)

        if documents.kind(path) == "text":
            pieces = _text_file(tok, path, first, separator, policy, threads, scratch_for, report)
        else:
            pieces = _document_file(tok, path, first, text_field, separator, policy, threads)
        following = first.document
        try:
            for piece, reached in pieces:
                yield piece
                following = piece.positions[-1].document + 1
                report(reached)
        except DisallowedSpecialError as e:
            if e.where is not None:
                raise
            where = documents.place_of(path, e.token, text_field)
            raise DisallowedSpecialError(e.token, where) from None
        done_before += weights[index]
        first = Position(index + 1, 0, following)


def _document_file(tok, path, first, text_field, separator, policy, threads):
    import numpy

    skip, number = first.skip, first.document
    for chunk in documents.read_chunks(path, text_field, start=first.start):
        ids, offsets = flat_batch.encode(tok, chunk.texts, policy=policy, threads=threads)
        if separator is not None:
            ids = numpy.insert(ids, offsets[1:], numpy.uint32(separator))
            offsets = offsets + numpy.arange(len(offsets), dtype=numpy.int64)
        ends = offsets[1:].tolist()
        positions = [Position(first.file, s, number + i) for i, s in enumerate(chunk.starts)]
        if skip:
            ids, ends = ids[skip:], [e - skip for e in ends]
            positions[0] = Position(first.file, chunk.starts[0], number, skip)
            skip = 0
        number += len(chunk.texts)
        yield Piece(ids, ends, positions), chunk.end


def _text_file(tok, path, first, separator, policy, threads, scratch_for, report):
    import numpy

    allowed, disallowed = policy
    scratch = atomic.temp_path(scratch_for or path)
    try:
        # The core reports its bytes as it encodes them (a large file is most of a run);
        # the slices read back after it are of a file already encoded.
        def progress(done: int, total: int) -> None:
            report(done)

        tok._encode_text_file(path, scratch, allowed, disallowed, threads or None, progress)
        with NpyReader(scratch) as ids:
            total = len(ids) + (separator is not None)
            done = first.skip
            while True:
                end = min(done + TEXT_SLICE, total)
                part = ids.read(done, min(end, len(ids))).astype(numpy.uint32)
                if separator is not None and end == total:
                    part = numpy.append(part, numpy.uint32(separator))
                position = Position(first.file, 0, first.document, done)
                last = end == total
                yield Piece(part, [len(part)], [position], last), os.path.getsize(path)
                if last:
                    break
                done = end
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)


def write_npy(
    tok,
    paths: list[str],
    out_path: str,
    *,
    text_field: str = "text",
    separator: int | None = None,
    policy: tuple[frozenset[str], frozenset[str]] | None = None,
    threads: int = 0,
    progress: bool | None = None,
) -> int:
    """All of ``paths``' ids in one ``.npy`` (atomic, uint16 when the vocab fits); returns
    how many."""
    from bytepair.npy_file import NpyWriter, ids_dtype
    from bytepair.progress import Bar, shown

    total = sum(os.path.getsize(p) for p in paths)
    show = shown(progress)
    with Bar("encoding", total=total, unit="B", enabled=show) as bar:
        with NpyWriter(out_path, ids_dtype(tok.vocab_size)) as out:
            for piece in stream(
                tok,
                paths,
                text_field=text_field,
                separator=separator,
                policy=policy,
                threads=threads,
                on_progress=bar,
                scratch_for=out_path,
            ):
                out.write(piece.ids)
    return out.count
