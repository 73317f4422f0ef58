"""Mistral's Tekken files (``tekken_*.json``): a tiktoken rank table behind control tokens.

A Tekken file holds ``config`` (the pattern, ``default_vocab_size``,
``default_num_special_tokens``, ``version``), ``vocab`` (``rank``, ``token_bytes`` in base64)
and, from v7 on, ``special_tokens``. mistral-common's ``Tekkenizer`` gives the first
``default_num_special_tokens`` ids to the control tokens (the file's, then ``<SPECIAL_n>``
fillers; older files without the list get its 20 built-in ones), cuts the rank table to
``default_vocab_size - default_num_special_tokens`` entries and shifts each rank by the
number of control tokens. Its ``encode`` never matches control-token text: bytepair's
``encode(text, disallowed_special=())`` is ``Tekkenizer.encode(text, bos=False, eos=False)``.

This module returns plain data (``read_data``); ``formats.load`` wraps it as ``TokenizerData``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping

from bytepair import patterns
from bytepair.errors import FormatError
from bytepair.formats import tokenizer_data
from bytepair.formats.atomic import write_files
from bytepair.vocab import MAX_VOCAB_SIZE

#: mistral-common's control tokens for files without a ``special_tokens`` list (<= v7).
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
FILLER = "<SPECIAL_{id}>"


def is_tekken(doc: object) -> bool:
    """A parsed JSON document that is a Tekken file (not a tokenizer.json)."""
    return isinstance(doc, dict) and "model" not in doc and "config" in doc and "vocab" in doc


def _get(obj: Mapping, key: str, where: str, kind: type):
    if key not in obj:
        raise FormatError(f"{where}: missing key {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        names = {dict: "object", list: "array", str: "string", int: "integer"}
        raise FormatError(f"{where}.{key} is {value!r}"[:200] + f"; expected a JSON {names[kind]}")
    return value


def _version_number(version: str, where: str) -> int:
    if not (version.startswith("v") and version[1:].isdigit()):
        raise FormatError(f"{where}.version: {version!r}; expected v1, v2, v3, v7, v11, ...")
    return int(version[1:])


def read_data(doc: Mapping, name: str):
    """(vocab id -> bytes, special token -> id, pattern) as mistral-common assigns them."""
    config = _get(doc, "config", name, dict)
    cwhere = f"{name}: config"
    pattern = _get(config, "pattern", cwhere, str)
    vocab_size = _get(config, "default_vocab_size", cwhere, int)
    num_special = _get(config, "default_num_special_tokens", cwhere, int)
    version = _version_number(_get(config, "version", cwhere, str), cwhere)
    entries = _get(doc, "vocab", name, list)

    listed = doc.get("special_tokens")
    if listed is None:
        if version > 7:
            raise FormatError(
                f"{name}: missing key 'special_tokens' (a Tekken file after v7 lists them)"
            )
        names = list(DEPRECATED_SPECIAL_TOKENS)
    else:
        if not isinstance(listed, list):
            raise FormatError(f"{name}: special_tokens is {listed!r}"[:200] + "; expected a list")
        names = []
        for n, entry in enumerate(listed):
            where = f"{name}: special_tokens[{n}]"
            if not isinstance(entry, dict):
                raise FormatError(f"{where}: expected an object, got {entry!r}")
            token = _get(entry, "token_str", where, str)
            rank = _get(entry, "rank", where, int)
            if rank != n:
                raise FormatError(f"{where}.rank: {rank}; control tokens are numbered 0, 1, ...")
            names.append(token)
    if len(set(names)) != len(names):
        raise FormatError(f"{name}: special_tokens: a control token is listed twice")
    if len(names) > num_special:
        raise FormatError(
            f"{cwhere}.default_num_special_tokens: {num_special}, fewer than the "
            f"{len(names)} control tokens listed"
        )
    # Both sizes checked before the fillers are made: a damaged count would make millions.
    if vocab_size > MAX_VOCAB_SIZE:
        raise FormatError(
            f"{cwhere}.default_vocab_size: {vocab_size}; ids must be below {MAX_VOCAB_SIZE:,} "
            "(2**26)"
        )
    inner = vocab_size - num_special
    if not 256 <= inner <= len(entries):
        raise FormatError(
            f"{cwhere}.default_vocab_size: {vocab_size} leaves {inner} regular tokens after "
            f"default_num_special_tokens={num_special}; expected 256 to {len(entries)} (the "
            "vocab's length)"
        )
    names += [FILLER.format(id=i) for i in range(len(names), num_special)]
    if len(set(names)) != num_special:
        raise FormatError(f"{name}: special_tokens: a control token repeats a filler's name")
    vocab: dict[int, bytes] = {}
    for rank, entry in enumerate(entries[:inner]):
        where = f"{name}: vocab[{rank}]"
        if not isinstance(entry, dict):
            raise FormatError(f"{where}: expected an object, got {entry!r}")
        if _get(entry, "rank", where, int) != rank:
            raise FormatError(f"{where}.rank: {entry['rank']}; expected {rank}")
        try:
            token = base64.b64decode(_get(entry, "token_bytes", where, str), validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f"{where}.token_bytes: not base64") from None
        if rank < 256 and token != bytes([rank]):
            raise FormatError(f"{where}.token_bytes: rank {rank} must be the byte {rank}")
        vocab[rank + num_special] = token
    specials = {token: i for i, token in enumerate(names)}
    return vocab, specials, pattern


def write(data, path: str | os.PathLike, version: str = "v7") -> None:
    """Writes ``data`` (a ``TokenizerData``, or a Tokenizer) as a Tekken file: its special
    tokens must hold ids 0..n-1 and its vocab the ids after them, as a rank table
    (mistral-common's layout)."""
    data = tokenizer_data.of(data)
    if data.pattern == patterns.DEEPSEEK:
        raise FormatError(
            f"{os.fspath(path)}: a Tekken file holds one regex, and DeepSeek's pattern is three "
            "splits; save it as huggingface (tokenizer.json) instead"
        )
    vocab = data.with_specials()
    specials = sorted(data.special_tokens.items(), key=lambda kv: kv[1])
    n = len(specials)
    if [i for _, i in specials] != list(range(n)):
        raise FormatError(
            f"{os.fspath(path)}: Tekken puts the control tokens at ids 0..{n - 1}; this "
            "tokenizer's special tokens have other ids"
        )
    if data.merges and not data.rank_table:
        raise FormatError(
            f"{os.fspath(path)}: Tekken holds a rank table; this tokenizer encodes by its merge "
            "list (save it as huggingface instead)"
        )
    regular = sorted(i for i in vocab if i >= n)
    if regular != list(range(n, n + len(regular))):
        raise FormatError(f"{os.fspath(path)}: Tekken needs dense ids after the control tokens")
    doc = {
        "config": {
            "pattern": data.pattern,
            "num_vocab_tokens": len(regular),
            "default_vocab_size": n + len(regular),
            "default_num_special_tokens": n,
            "version": version,
        },
        "vocab": [
            {
                "rank": i - n,
                "token_bytes": base64.b64encode(vocab[i]).decode("ascii"),
                "token_str": vocab[i].decode("utf-8", errors="replace"),
            }
            for i in regular
        ],
        "special_tokens": [
            {"rank": i, "token_str": token, "is_control": True} for token, i in specials
        ],
    }
    write_files({path: json.dumps(doc, ensure_ascii=False).encode("utf-8")})
