"""The documents of a corpus, in the forms training data comes in: plain text, JSON Lines
and Parquet, named by files, directories or globs.

A ``.jsonl`` file holds one JSON object per line, the text in ``text_field``; a
``.parquet`` file holds the text in the column ``text_field`` and is read one row group
at a time, never whole; any other file is plain text, one document, which the core reads
memory-mapped.
Nothing is skipped: a line that is not an object with a string in ``text_field`` is a
``CorpusError`` naming the file and line. A blank line (spaces only) holds no document.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.jsonl"
>>> _ = path.write_text('{"text": "hi"}\\n{"text": "there", "id": 2}\\n')
>>> [chunk.texts for chunk in read_chunks(str(path))]
[['hi', 'there']]
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bytepair.errors import CorpusError

#: Text per chunk handed to the encoder at once: enough for every thread to have long
#: runs (the core splits a chunk across threads), small enough to keep memory flat.
CHUNK_BYTES = 8 << 20


def kind(path: str) -> str:
    """``"jsonl"``, ``"parquet"`` or ``"text"``, from the file's name.

    >>> kind("a/b.jsonl"), kind("b.parquet"), kind("c.txt")
    ('jsonl', 'parquet', 'text')
    """
    name = path.lower()
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    return "text"


def corpus_paths(corpus: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The files a corpus names, in order: a file, a directory (every file under it, sorted,
    hidden ones excluded, symbolic links to directories followed) or a glob
    (``data/*.jsonl``, sorted; ``**`` recursive; a matching directory stands for its files),
    or a list of these. A directory that cannot be read is a CorpusError naming it.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "b.txt").write_text("b"), (d / "a.txt").write_text("a")
    >>> [pathlib.Path(p).name for p in corpus_paths(d)]
    ['a.txt', 'b.txt']
    """
    paths: list[str] = []
    for path in _items(corpus):
        if os.path.isfile(path):
            paths.append(path)
        elif os.path.isdir(path):
            found = _files_under(path)
            if not found:
                raise CorpusError(f"corpus {path!r} is a directory that holds no files")
            paths.extend(found)
        elif glob.has_magic(path):
            found = []
            for match in sorted(glob.glob(path, recursive=True)):
                found.extend(_files_under(match) if os.path.isdir(match) else [match])
            if not found:
                raise not_found(path)
            paths.extend(found)
        else:
            paths.append(path)
    for path in paths:
        _check_regular(path)
    return paths


def _check_regular(path: str) -> None:
    """A CorpusError unless ``path`` is a regular file (or a link to one): a pipe, socket
    or device would be waited on or misread, a dangling link fail in whatever touched it."""
    if os.path.isfile(path):
        return
    if os.path.islink(path) and not os.path.exists(path):
        raise CorpusError(
            f"corpus file {path!r} is a symbolic link to nothing ({os.readlink(path)!r}): "
            f"fix the link or remove it"
        )
    if not os.path.exists(path):
        raise not_found(path)
    mode = os.stat(path).st_mode
    what = "a pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    raise CorpusError(
        f"corpus file {path!r} is not a regular file but {what}, which a corpus cannot be "
        f"read from (its files are measured, memory-mapped and resumed): write it to a file "
        f"first, or stream it to text ids with bytepair encode and no -o FILE.npy"
    )


def not_found(path: str) -> CorpusError:
    """The error for a corpus path that names nothing: a glob that matches no file, or a
    file that does not exist.

    >>> str(not_found("data/*.zzz")), str(not_found("data/a.txt"))
    ("corpus glob 'data/*.zzz' matches no files", "corpus file 'data/a.txt' does not exist")
    """
    if glob.has_magic(path):
        return CorpusError(f"corpus glob {path!r} matches no files")
    return CorpusError(f"corpus file {path!r} does not exist")


def _items(corpus) -> list[str]:
    items = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    if not items:
        raise CorpusError(
            "the corpus is an empty list: pass one or more files, directories or globs"
        )
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise CorpusError(
                f"the corpus must be file paths, got {type(item).__name__}: {item!r:.60}"
            )
    return [os.fspath(item) for item in items]


def _walk(directory: str) -> Iterator[tuple[str, list[str]]]:
    """Each directory under ``directory`` (itself first) and the names of its files, hidden
    ones left out; symbolic links to directories are followed, each real directory once
    (under its first name in sorted order)."""
    seen: set[str] = set()

    def unreadable(e: OSError) -> None:
        raise CorpusError(
            f"corpus directory {e.filename!r} cannot be read ({e.strerror}): its files would "
            f"be left out; fix its permissions or leave it out of the corpus"
        )

    for root, dirs, names in os.walk(directory, onerror=unreadable, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # a link back up the tree, or a second link to one directory
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        yield root, [n for n in names if not n.startswith(".")]


def _files_under(directory: str) -> list[str]:
    return sorted(os.path.join(root, n) for root, names in _walk(directory) for n in names)


def check_output(
    corpus: str | os.PathLike | Iterable[str | os.PathLike], out_path: str | os.PathLike
) -> None:
    """Refuses an output that would destroy or join its own input: one of the corpus's
    files (by any name), or a path inside a directory of the corpus or matched by one of
    its globs, which a later run would read as input. A CorpusError names both paths.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("a")
    >>> check_output(d, d.parent / "ids.npy")
    >>> check_output(d, d / "ids.npy")
    Traceback (most recent call last):
    ...
    bytepair.errors.CorpusError: ...
    """
    out = os.fspath(out_path)
    real_out = os.path.realpath(out)
    for path in _items(corpus):
        if os.path.isdir(path):
            inside = [root for root, _ in _walk(path) if _within(real_out, root)]
            if inside:
                raise CorpusError(
                    f"output {out!r} is inside the corpus directory {path!r}: a later run "
                    f"would read it as input; write it outside {path!r}"
                )
        elif glob.has_magic(path) and not os.path.isfile(path):
            matched = [m for m in glob.glob(path, recursive=True) if os.path.isdir(m)]
            if _glob_matches(path, out) or any(_within(real_out, m) for m in matched):
                raise CorpusError(
                    f"output {out!r} is matched by the corpus glob {path!r}: a later run "
                    f"would read it as input; write it elsewhere or narrow the glob"
                )
    if not os.path.exists(out):
        return
    out_stat = os.stat(out)
    for path in corpus_paths(corpus):
        if os.path.samestat(out_stat, os.stat(path)):
            raise CorpusError(
                f"output {out!r} is the input file {path!r}: writing it would destroy the "
                f"input; choose another output path"
            )


def _within(real_path: str, directory: str) -> bool:
    """Whether ``real_path`` (a real path) is ``directory`` or under it."""
    real_dir = os.path.realpath(directory)
    return os.path.commonpath([real_path, real_dir]) == real_dir


def _glob_matches(pattern: str, path: str) -> bool:
    """Whether ``glob.glob(pattern, recursive=True)`` would list ``path`` (or a directory
    holding it) were it there: component by component, ``**`` standing for any number."""
    want = os.path.abspath(pattern).split(os.sep)
    have = os.path.abspath(path).split(os.sep)

    def match(i: int, j: int) -> bool:
        if i == len(want):
            return True  # the pattern names this path, or a directory above it
        if want[i] == "**":
            return any(match(i + 1, k) for k in range(j, len(have) + 1))
        return j < len(have) and fnmatch.fnmatchcase(have[j], want[i]) and match(i + 1, j + 1)

    return match(0, 0)


@dataclass(frozen=True)
class Chunk:
    """Consecutive documents of one file. ``starts[i]`` is where document i begins (a byte
    offset in a ``.jsonl`` or text file, a row in a ``.parquet`` file) and ``end`` where
    the next document begins: positions ``read_chunks(..., start=)`` resumes from."""

    texts: list[str]
    starts: list[int]
    end: int


def read_chunks(
    path: str, text_field: str = "text", start: int = 0, chunk_bytes: int | None = None
) -> Iterator[Chunk]:
    """The documents of ``path`` from position ``start`` on, about ``chunk_bytes`` of text
    per chunk (default ``CHUNK_BYTES``)."""
    reader = {"jsonl": _jsonl, "parquet": _parquet}.get(kind(path))
    if reader is None:  # plain text is read by the core, memory-mapped
        raise ValueError(f"{path} is plain text: read_chunks reads .jsonl and .parquet files")
    if not isinstance(text_field, str):
        raise TypeError(f"text_field must be a str naming the field, got {text_field!r}")
    return reader(path, text_field, start, chunk_bytes or CHUNK_BYTES)


def size(path: str) -> int:
    """Where a file's last document ends: its length in bytes, or its rows for Parquet."""
    if kind(path) == "parquet":
        return _parquet_file(path).metadata.num_rows
    return os.path.getsize(path)


def _jsonl(path: str, text_field: str, start: int, chunk_bytes: int) -> Iterator[Chunk]:
    texts: list[str] = []
    starts: list[int] = []
    held = 0
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        # Line numbers count from the start of the file, also when resuming mid-file.
        lineno = line_of(path, start) if start else 1
        for line in f:
            if line.strip():  # a blank line holds no document, as pandas and datasets read it
                text = _jsonl_text(path, lineno, line, text_field)
                texts.append(text)
                starts.append(pos)
                held += len(text)
            pos += len(line)
            lineno += 1
            if held >= chunk_bytes:
                yield Chunk(texts, starts, pos)
                texts, starts, held = [], [], 0
    if texts:
        yield Chunk(texts, starts, pos)


def place_of(path: str, needle: str, text_field: str = "text") -> str:
    """Where ``needle`` first occurs in the documents of ``path``, as an error names it: the
    line of a text or ``.jsonl`` file, the row of a ``.parquet`` file. Read 1 MB at a time.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = path.write_text("one\\ntwo <s>\\n")
    >>> place_of(str(path), "<s>").endswith("a.txt:2")
    True
    """
    if kind(path) == "text":
        found = _offset_in_file(path, needle.encode("utf-8"))
        return path if found is None else f"{path}:{line_of(path, found)}"
    parquet = kind(path) == "parquet"
    for chunk in read_chunks(path, text_field):
        for text, start in zip(chunk.texts, chunk.starts, strict=True):
            if needle in text:  # a start is a Parquet row, or a .jsonl line's offset
                if parquet:
                    return f"{path}: row {start}"
                return f"{path}:{line_of(path, start)}"
    return path


def _offset_in_file(path: str, needle: bytes) -> int | None:
    """The byte offset of ``needle``'s first occurrence in the file, if any."""
    block = 1 << 20
    with open(path, "rb") as f:
        at, tail = 0, b""  # ``tail``: the end of the last block, a needle may straddle it
        while data := f.read(block):
            found = (tail + data).find(needle)
            if found >= 0:
                return at - len(tail) + found
            tail = data[-(len(needle) - 1) :] if len(needle) > 1 else b""
            at += len(data)
    return None


def line_of(path: str, offset: int) -> int:
    """The line number at byte ``offset``, counted 1 MB at a time: memory stays flat when a
    run resumes deep in a large file."""
    lines = 1
    with open(path, "rb") as f:
        while offset > 0:
            block = f.read(min(offset, 1 << 20))
            if not block:
                break
            lines += block.count(b"\n")
            offset -= len(block)
    return lines


#: How a caller names the field or column that holds the text, in Python and on the CLI.
_NAMED_BY = "with text_field=, or --text-field on the command line"


def _jsonl_text(path: str, lineno: int, line: bytes, text_field: str) -> str:
    where = f"{path}:{lineno}"
    # Decoded here, not by json.loads: given bytes it guesses UTF-16 or UTF-32 from the
    # first bytes, and JSON Lines are UTF-8 (a byte order mark allowed before the first).
    try:
        line = line.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(
            f"{where}: not valid UTF-8 at byte {e.start} of the line; JSON Lines are UTF-8"
        ) from None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise CorpusError(f"{where}: not valid JSON ({e}); expected one object per line") from None
    if not isinstance(obj, dict):
        raise CorpusError(f"{where}: a JSON {json_type(obj)}, expected an object")
    if text_field not in obj:
        present = ", ".join(repr(k) for k in obj) or "none"
        raise CorpusError(
            f"{where}: no field {text_field!r}; the object has {present} "
            f"(name the field that holds the text {_NAMED_BY})"
        )
    text = obj[text_field]
    if not isinstance(text, str):
        raise CorpusError(
            f"{where}: field {text_field!r} is a JSON {json_type(text)}, expected a string"
        )
    return text


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type.

    >>> [json_type(v) for v in (None, True, 1.5, [], {}, "x")]
    ['null', 'boolean', 'number', 'array', 'object', 'string']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {list: "array", dict: "object", str: "string"}[type(value)]


def _parquet_file(path: str):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(
            f"{path}: reading Parquet needs pyarrow: pip install 'bytepair[parquet]'"
        ) from None
    try:
        return pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises its own ArrowInvalid for a broken file
        raise CorpusError(f"{path}: not a readable Parquet file ({e})") from None


#: Rows per batch read from a Parquet row group: a few MB of typical documents.
_BATCH_ROWS = 1024


def _holds_strings(column_type) -> bool:
    """Whether a Parquet column's values read as Python strings: the string types, and a
    dictionary of strings (what pandas writes for a category column)."""
    import pyarrow as pa

    if pa.types.is_dictionary(column_type):
        column_type = column_type.value_type
    return (
        pa.types.is_string(column_type)
        or pa.types.is_large_string(column_type)
        # string_view came in pyarrow 16; the extra asks for 14 or later.
        or getattr(pa.types, "is_string_view", lambda _: False)(column_type)
    )


def _parquet(path: str, text_field: str, start: int, chunk_bytes: int) -> Iterator[Chunk]:
    pf = _parquet_file(path)
    schema = pf.schema_arrow
    if text_field not in schema.names:
        raise CorpusError(
            f"{path}: no column {text_field!r}; the columns are "
            f"{', '.join(map(repr, schema.names))} (name the text column {_NAMED_BY})"
        )
    column_type = schema.field(text_field).type
    if not _holds_strings(column_type):
        raise CorpusError(f"{path}: column {text_field!r} holds {column_type}, expected strings")
    row = 0
    for group in range(pf.metadata.num_row_groups):
        rows = pf.metadata.row_group(group).num_rows
        if row + rows <= start:
            row += rows
            continue
        texts: list[str] = []
        starts: list[int] = []
        held = 0
        at = row  # the row of the batch's first value
        # In batches, not the group's column as Python strings at once: pyarrow writes up
        # to 1M rows to a group by default, gigabytes of web text, and the strings cost
        # several times the group (tests/test_corpus_to_ids.py).
        batches = pf.iter_batches(_BATCH_ROWS, row_groups=[group], columns=[text_field])
        for batch in batches:
            first = max(start - at, 0)
            values = batch.column(0).to_pylist() if first < batch.num_rows else []
            for i in range(first, len(values)):
                text = values[i]
                if text is None:
                    raise CorpusError(
                        f"{path}: row {at + i} has no text (null) in column {text_field!r}"
                    )
                texts.append(text)
                starts.append(at + i)
                held += len(text)
                if held >= chunk_bytes:
                    yield Chunk(texts, starts, at + i + 1)
                    texts, starts, held = [], [], 0
            at += batch.num_rows
        if texts:
            yield Chunk(texts, starts, row + rows)
        row += rows
