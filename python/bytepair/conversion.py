"""Converting a tokenizer file to another format: read it (any format), build the
Tokenizer (which checks it), write it in the target format.

>>> import bytepair, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).save(folder / "t.json")
>>> convert(folder / "t.json", folder / "t.tiktoken", to="tiktoken").vocab_size
256
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from bytepair import formats
from bytepair.errors import FormatError
from bytepair.tokenizer import Tokenizer


def convert(
    in_path: str | os.PathLike,
    out_path: str | os.PathLike,
    to: str = "huggingface",
    *,
    special_tokens: Sequence[str] | Mapping[str, int] | None = None,
    pattern: str | None = None,
) -> Tokenizer:
    """Loads ``in_path`` (any format) and saves it to ``out_path`` as ``to``; returns the
    Tokenizer, so a caller can report what a format leaves out (tiktoken's special tokens)."""
    if to not in formats.FORMATS:
        raise FormatError(f"unknown format {to!r}; expected one of {', '.join(formats.FORMATS)}")
    tok = Tokenizer.load(in_path, special_tokens=special_tokens, pattern=pattern)
    tok.save(out_path, format=to)
    return tok
