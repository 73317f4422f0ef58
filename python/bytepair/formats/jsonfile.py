"""Reading a JSON file with an error that names it (vocab.json, tokenizer.json)."""

from __future__ import annotations

import json
import os

from bytepair import _core
from bytepair.errors import FormatError


def read_json(path: str | os.PathLike, expected: str) -> object:
    """The parsed JSON document of ``path``; ``FormatError`` naming the file and what was
    ``expected`` when it is not UTF-8 JSON."""
    with open(path, "rb") as f:
        raw = f.read()
    # The core's parser where it gives what Python's gives (src/py/json.rs): twice as fast
    # on a 33 MB tokenizer.json; Python's for the rest, and for the error.
    doc = _core.json_loads(raw)
    if doc is not None:
        return doc
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"{os.fspath(path)}: not valid JSON ({e}); expected {expected}") from None
