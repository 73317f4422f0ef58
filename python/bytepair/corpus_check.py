"""Warnings about a corpus that would train silently into a useless tokenizer: text that is
mostly not UTF-8 (GBK, Latin-1, UTF-16: the hint names the likely one), special-token
text (``<|endoftext|>``) that is not a special token, so it would be learned as ordinary
text, and files read as plain text that are not: compressed (``.gz``, ``.xz``...) or
JSON Lines under another name (``data.json``), whose keys and quotes would be learned.
Encoding checks the last two (``check_read_as_text``): its ids would be of those bytes.

Only a sample is read, so the check costs milliseconds on any corpus: ``BLOCKS`` blocks of
``BLOCK_BYTES`` spread over each file (of at most ``MAX_FILES`` files), and the first
``BLOCKS * BLOCK_BYTES`` of texts.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     check(["中文".encode("gbk") * 4000], "texts", [])
>>> "not valid UTF-8" in str(seen[0].message)
True
"""

from __future__ import annotations

import itertools
import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence

from bytepair import documents
from bytepair.errors import CorpusWarning
from bytepair.shards import Shard

#: 4 blocks of 256 KiB: the start, a quarter, the middle and three quarters of a file, so a
#: file whose head is an ASCII licence and whose body is GBK is still caught.
BLOCKS = 4
BLOCK_BYTES = 256 << 10

#: Files checked of a long list (a directory of shards): 8 files of 1 MB or more cost
#: 0.15 s, while checking each of 10,000 would take minutes.
MAX_FILES = 8

#: Less than this much text says too little to warn about (a unit test's few lines).
MIN_BYTES = 4 << 10

#: More than 1% invalid bytes is another encoding: Latin-1 French has ~3% (each accented
#: letter), GBK Chinese ~90%, while UTF-8 web text with stray damage stays under 0.01%.
MAX_INVALID = 0.01

#: Invalid bytes that stand alone (between valid UTF-8) this often are a single-byte Latin
#: encoding's accented letters: Latin-1 French 97% alone, where GBK, Big5, Shift JIS,
#: EUC-KR and Windows-1251 text has them alone 0-60% of the time, in runs.
SINGLE_BYTE_RUNS = 0.8

#: More than 10% NUL bytes is UTF-16 (or UTF-32), whose ASCII half is valid UTF-8.
MAX_NUL = 0.10

#: Special-token-shaped text (``<|endoftext|>``, ``<|im_start|>``), seen at least this often.
_SPECIAL_SHAPE = re.compile(rb"<\|[A-Za-z0-9_]{1,40}\|>")
MIN_SPECIAL_HITS = 3

_INVALID = re.compile("[\udc80-\udcff]+")

#: The magic numbers compressed files begin with (gzip RFC 1952, xz, bzip2, zstd RFC 8878),
#: and the command that decompresses each.
_COMPRESSED = {
    b"\x1f\x8b": ("gzip", "gunzip"),
    b"\xfd7zXZ\x00": ("xz", "unxz"),
    b"BZh": ("bzip2", "bunzip2"),
    b"\x28\xb5\x2f\xfd": ("zstd", "unzstd"),
}


def head(texts: Iterable[str | bytes]) -> tuple[list[str | bytes], Iterator[str | bytes]]:
    """The first texts, ``BLOCKS * BLOCK_BYTES`` or a little more, to ``check``; and all
    the texts, those first ones included, to train on.

    >>> first, every = head(iter(["a", "b"]))
    >>> first, list(every)
    (['a', 'b'], ['a', 'b'])
    """
    it = iter(texts)
    first: list[str | bytes] = []
    size = 0
    for t in it:
        first.append(t)
        size += len(t)
        if size >= BLOCKS * BLOCK_BYTES:
            break
    return first, itertools.chain(first, it)


def check(
    sample: Iterable[bytes | str], where: str, special_tokens: Sequence[str], stacklevel: int = 2
) -> None:
    """Warns (``CorpusWarning``) when ``sample``, some of the text of ``where`` (a file's
    name, or "texts"), is mostly not UTF-8, or holds special-token text that is not one of
    ``special_tokens``."""
    data = b"".join(x.encode("utf-8", "surrogatepass") if isinstance(x, str) else x for x in sample)
    if len(data) < MIN_BYTES:
        return
    runs = [len(m.group()) for m in _INVALID.finditer(data.decode("utf-8", "surrogateescape"))]
    invalid = sum(runs)
    nul = data.count(0)
    if nul > MAX_NUL * len(data) or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        _warn(
            f"{where} looks like UTF-16 ({nul / len(data):.0%} of the bytes read are NUL): "
            "bytepair trains on bytes, so the tokenizer would fit UTF-16, not UTF-8 text; "
            "convert it first (iconv -f UTF-16 -t UTF-8)",
            stacklevel,
        )
    elif invalid > MAX_INVALID * len(data):
        if runs.count(1) >= SINGLE_BYTE_RUNS * len(runs):
            guess = (
                "it looks like Latin-1 or Windows-1252 (its bad bytes stand alone, like the "
                "accented letters of a one-byte encoding)"
            )
            fix = "iconv -f CP1252 -t UTF-8"
        else:
            guess = "it is in another encoding (GBK, Big5, Shift JIS, EUC-KR, Windows-1251...)"
            fix = "iconv -f <its encoding> -t UTF-8"
        _warn(
            f"{invalid / len(data):.0%} of the {len(data):,} bytes read from {where} are not "
            f"valid UTF-8: {guess}, and a tokenizer trained on it would fit that encoding, "
            f"not UTF-8 text; convert it first ({fix})",
            stacklevel,
        )
    known = {t.encode("utf-8") for t in special_tokens}
    hits: dict[bytes, int] = {}
    for m in _SPECIAL_SHAPE.finditer(data):
        if m.group() not in known:
            hits[m.group()] = hits.get(m.group(), 0) + 1
    if hits:
        token, count = max(hits.items(), key=lambda kv: kv[1])
        if count >= MIN_SPECIAL_HITS:
            text = token.decode("ascii")
            _warn(
                f"{where} holds {text!r} {count:,} times in the {len(data):,} bytes read, but "
                f"it is not a special token: it will be learned as ordinary text. Pass "
                f"special_tokens=[{text!r}] (CLI: --special-token '{text}') to keep it whole "
                "and out of the merges",
                stacklevel,
            )


def _spread(paths: Sequence):
    """At most ``MAX_FILES`` of ``paths``, spread over the list, the first and last among them."""
    if len(paths) > MAX_FILES:
        return [paths[k * (len(paths) - 1) // (MAX_FILES - 1)] for k in range(MAX_FILES)]
    return paths


def check_files(
    paths: Sequence[str | Shard], special_tokens: Sequence[str], stacklevel: int = 2
) -> None:
    """``check`` on blocks spread over each file (a ``Shard`` reads its byte range), for
    at most ``MAX_FILES`` files spread over the list."""
    for p in _spread(paths):
        path, start, end = (p.path, p.start, p.end) if isinstance(p, Shard) else (p, 0, None)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size if end is None else end
                if size - start <= BLOCKS * BLOCK_BYTES:
                    f.seek(start)
                    blocks = [f.read(size - start)]
                else:
                    blocks = []
                    for k in range(BLOCKS):
                        f.seek(start + (size - start) * k // BLOCKS)
                        blocks.append(f.read(BLOCK_BYTES))
        except OSError:
            continue  # counting reports an unreadable file, with its own error
        where = os.path.basename(path)
        # Only a file's own start says what it is; a byte range may begin anywhere.
        if start == 0 and not _read_as_it_is(blocks[0], where, stacklevel + 1):
            continue  # compressed: its bytes say nothing of its text's encoding
        check(blocks, where, special_tokens, stacklevel + 1)


def check_read_as_text(paths: Sequence[str], stacklevel: int = 2) -> None:
    """Warns when a corpus file read as plain text (not ``.jsonl`` nor ``.parquet``) is
    compressed or JSON Lines, for at most ``MAX_FILES`` of them spread over the list:
    encoding's check, whose ids are the file's bytes as they are (training checks the same
    in ``check_files``, with the text's encoding)."""
    # Regular files only: reading the head of a pipe (``<(zcat c.gz)``) would consume it.
    text = [p for p in paths if documents.kind(p) == "text" and os.path.isfile(p)]
    for path in _spread(text):
        try:
            with open(path, "rb") as f:
                head = f.read(BLOCK_BYTES)
        except OSError:
            continue  # encoding reports an unreadable file, with its own error
        _read_as_it_is(head, os.path.basename(path), stacklevel + 1)


def _read_as_it_is(head: bytes, where: str, stacklevel: int) -> bool:
    """Warns when a file read as plain text begins as a compressed file, or is JSON Lines
    (every whole line of ``head``, its first block, a JSON object). False if compressed."""
    for magic, (name, command) in _COMPRESSED.items():
        if head.startswith(magic):
            _warn(
                f"{where} is {name}-compressed: bytepair reads a file as it is, so it "
                f"would train on or encode the compressed bytes, not the text; decompress "
                f"it first ({command} {where})",
                stacklevel,
            )
            return False
    lines = [line for line in head.split(b"\n")[:-1] if line.strip()]  # the last may be cut
    if lines and all(_is_json_object(line) for line in lines):
        _warn(
            f"{where} holds JSON Lines (one object per line) but is read as plain text, so "
            f"its keys and quotes would be trained on or encoded with the text; name it "
            f".jsonl (or .ndjson) to read the text in text_field (--text-field)",
            stacklevel,
        )
    return True


def _is_json_object(line: bytes) -> bool:
    if not line.lstrip().startswith(b"{"):  # most text fails here, without a parse
        return False
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:  # UnicodeDecodeError too
        return False


def _warn(message: str, stacklevel: int) -> None:
    warnings.warn(message, CorpusWarning, stacklevel=stacklevel + 1)
