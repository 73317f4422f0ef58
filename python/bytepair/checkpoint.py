"""Checkpoints of a distributed run: the counts of one finished shard in one file.

A run given ``checkpoint_dir`` writes one file per counted shard; a run over the same
corpus with the same directory loads those files instead of counting their shards again.
The format (version 1, specified in docs/distributed.md):

====================  ===============================================================
bytes                 content
====================  ===============================================================
8                     magic ``b"BPCOUNT\\n"``
4                     format version, u32 little-endian (1)
4                     header length ``h``, u32 little-endian
``h``                 header: UTF-8 JSON ``{"key": ..., "words": n, "payload_bytes": m,
                      "payload_sha256": hex}``; ``words`` is the number of distinct
                      pre-tokens (the key's name is part of the file format)
``m``                 payload: the counts as ``PretokenCounts.to_bytes()`` writes them
====================  ===============================================================

The file is named ``<sha256 of the key>.counts``. The key is everything the counts
depend on: the file's absolute path, size and mtime, the byte range, the pattern (the
regex itself, not its name) and the special tokens. Change any of them and the name
changes, so a stale checkpoint is never read. Writes go to a temporary file in the same
directory, then ``os.replace``: a run killed mid-write leaves no half file.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> key = {"path": "/data/a.txt", "start": 0, "end": 10}
>>> path = write(d, key, b"payload", words=3)
>>> payload, header = read(path, key)
>>> payload, header["words"]
(b'payload', 3)
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from typing import Any

from bytepair.errors import FormatError
from bytepair.formats.atomic import write_parts

MAGIC = b"BPCOUNT\n"
VERSION = 1
SUFFIX = ".counts"
_PREFIX = struct.Struct("<8sII")


def file_name(key: dict[str, Any]) -> str:
    """``<sha256 of the canonical JSON of key>.counts``."""
    canonical = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest() + SUFFIX


def path_for(directory: str | os.PathLike, key: dict[str, Any]) -> str:
    return os.path.join(os.fspath(directory), file_name(key))


def write(directory: str | os.PathLike, key: dict[str, Any], payload: bytes, words: int) -> str:
    """Writes the checkpoint of ``key`` atomically into ``directory``; returns its path."""
    header = json.dumps(
        {
            "key": key,
            "words": words,
            "payload_bytes": len(payload),
            "payload_sha256": hashlib.sha256(payload).hexdigest(),
        },
        sort_keys=True,
    ).encode("utf-8")
    path = path_for(directory, key)
    write_parts(path, [_PREFIX.pack(MAGIC, VERSION, len(header)), header, payload])
    return path


def read(path: str | os.PathLike, key: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """The payload and header of a checkpoint, checked against ``key`` and the payload's
    checksum. A file that is
    not a version-1 checkpoint of ``key``, or whose payload is damaged, is a FormatError
    naming the file and what is wrong."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < _PREFIX.size or data[:8] != MAGIC:
        raise FormatError(f"{path}: not a bytepair checkpoint (no {MAGIC!r} magic at byte 0)")
    _, version, hlen = _PREFIX.unpack_from(data)
    if version != VERSION:
        raise FormatError(
            f"{path}: checkpoint format version {version}, this bytepair reads version "
            f"{VERSION}; delete the file to count its shard again"
        )
    try:
        header = json.loads(data[_PREFIX.size : _PREFIX.size + hlen])
    except ValueError as e:
        raise FormatError(f"{path}: checkpoint header is not JSON ({e})") from None
    if header.get("key") != key:
        raise FormatError(f"{path}: checkpoint of {header.get('key')!r}, expected {key!r}")
    payload = data[_PREFIX.size + hlen :]
    if len(payload) != header.get("payload_bytes") or hashlib.sha256(
        payload
    ).hexdigest() != header.get("payload_sha256"):
        raise FormatError(
            f"{path}: checkpoint payload is truncated or damaged ({len(payload)} bytes, "
            f"header says {header.get('payload_bytes')}); delete the file to count again"
        )
    return payload, header
