"""Reading a JSON file with an error that names it (vocab.json, tokenizer.json)."""

from __future__ import annotations

import codecs
import json
import os

from bytepair import _core
from bytepair.errors import FormatError


def read_json(path: str | os.PathLike, expected: str) -> object:
    """The parsed JSON document of ``path`` (a UTF-8 byte order mark is skipped);
    ``FormatError`` naming the file and what was ``expected`` when it is not UTF-8 JSON."""
    raw = _read(path)
    # The core's parser where it gives what Python's gives (src/py/json.rs): twice as fast
    # on a 33 MB tokenizer.json; Python's for the rest, and for the error.
    doc = _core.json_loads(raw)
    return doc if doc is not None else _python_json(raw, path, expected)


def read_tokenizer_json(path: str | os.PathLike, expected: str) -> object:
    """``read_json`` of a tokenizer.json (or a Tekken file), but for its ``model.vocab`` (an
    object) and ``model.merges`` (an array): each is the core's ``ModelTables`` of the two,
    read from the file's bytes (src/py/tokenizer_json.rs: Qwen3.5's file, tables and their
    checks included, in 0.31-0.48 s against 1.0-1.1 s through Python objects)."""
    raw = _read(path)
    doc = _core.read_tokenizer_json(raw)
    if doc is not None:
        return doc
    doc = _python_json(raw, path, expected)
    try:
        tables = _core.model_tables(raw)
    except ValueError as e:  # JSON that Python reads and HuggingFace's reader refuses
        raise FormatError(f"{os.fspath(path)}: not valid JSON ({e}); expected {expected}") from None
    model = doc.get("model") if isinstance(doc, dict) else None
    if tables is not None and isinstance(model, dict):
        model["vocab"] = tables
        if tables.has_merges():
            model["merges"] = tables
    return doc


def _read(path: str | os.PathLike) -> bytes:
    """The file's bytes, without the UTF-8 byte order mark that Windows tools write: JSON
    parsers refuse it (HF tokenizers 0.22 too: "expected value at line 1 column 1"), and a
    file an editor saved would not load for one invisible character."""
    with open(path, "rb") as f:
        raw = f.read()
    return raw[len(codecs.BOM_UTF8) :] if raw.startswith(codecs.BOM_UTF8) else raw


def _python_json(raw: bytes, path: str | os.PathLike, expected: str) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"{os.fspath(path)}: not valid JSON ({e}); expected {expected}") from None
