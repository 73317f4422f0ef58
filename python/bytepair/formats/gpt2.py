"""GPT-2's ``vocab.json`` + ``merges.txt``, in GPT-2's bytes-to-unicode alphabet.

Every byte value has a printable stand-in character, so any token (even a piece of a UTF-8
character) is a JSON string and a merge line never contains a real space.

>>> BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("a")], BYTE_TO_CHAR[0]
('Ġ', 'a', 'Ā')
>>> to_bytes("Ġhello", where="example")
b' hello'
"""

from __future__ import annotations

import json
import os
import re
import shlex
import warnings
from collections.abc import Mapping, Sequence

from bytepair import _core, patterns
from bytepair.errors import FormatError, FormatWarning, VocabError
from bytepair.formats import tokenizer_data
from bytepair.formats.atomic import write_files
from bytepair.formats.jsonfile import read_json
from bytepair.formats.tokenizer_data import TokenizerData

# GPT-2's rule (the core's `byte_alphabet`): the printable Latin-1 bytes stand for
# themselves; the other 68 bytes (controls, space, 0x7f-0xa0, 0xad) take the characters from
# U+0100 on, in byte order.
CHAR_TO_BYTE: dict[str, int] = {
    chr(c): b[0] for c in range(0x144) if (b := _core.byte_level_bytes(chr(c))) is not None
}
BYTE_TO_CHAR: dict[int, str] = {b: c for c, b in sorted(CHAR_TO_BYTE.items(), key=lambda x: x[1])}

#: The first line of merges.txt, as GPT-2's vocab.bpe and HF ``tokenizers`` write it.
VERSION_LINE = "#version: 0.2"

Merge = tuple[bytes, bytes]


def to_text(token: bytes) -> str:
    """Token bytes in the alphabet: ``to_text(b" hi") == "Ġhi"``."""
    return "".join(BYTE_TO_CHAR[b] for b in token)


def to_bytes(text: str, where: str) -> bytes:
    """Inverse of ``to_text``; ``where`` names the file and key for the error message."""
    token = _core.byte_level_bytes(text)
    if token is None:
        bad = next(c for c in text if c not in CHAR_TO_BYTE)
        raise FormatError(
            f"{where}: token {text!r} contains {bad!r}, which is not a character of "
            "GPT-2's byte alphabet (expected byte-level BPE tokens)"
        )
    return token


def read(
    vocab_path: str | os.PathLike,
    merges_path: str | os.PathLike,
    special_tokens: Sequence[str] = (),
) -> tuple[dict[int, bytes], list[Merge]]:
    """Reads and validates ``vocab.json`` and ``merges.txt``: (id -> bytes, merges).

    Special tokens stay in the vocab as ordinary entries (``<|endoftext|>`` is ASCII, so it
    reads as its own bytes). A token of several bytes that no merge builds must be one of
    ``special_tokens`` or look like one (``<|endoftext|>``, ``[CLS]``): any other means
    merges.txt lost lines, and is refused.
    """
    vocab = read_vocab(vocab_path)
    merges = read_merges(merges_path)
    ranks = {b: i for i, b in vocab.items()}
    for n, (a, b) in merges:
        for part in (a, b, a + b):
            if part not in ranks:
                raise FormatError(
                    f"{os.fspath(merges_path)}, line {n}: merge {to_text(a)} {to_text(b)} needs "
                    f"the token {to_text(part)!r}, which is not in {os.fspath(vocab_path)}"
                )
    merges = [m for _, m in merges]
    _check_complete(vocab, merges, special_tokens, vocab_path, merges_path)
    return vocab, merges


def _check_complete(vocab, merges, special_tokens, vocab_path, merges_path) -> None:
    made = {a + b for a, b in merges}
    given = {t.encode("utf-8") for t in special_tokens}
    odd = []
    for i in sorted(vocab):
        token = vocab[i]
        if len(token) < 2 or token in made or token in given:
            continue
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            odd.append(token)
            continue
        if not _SPECIAL_SHAPE.fullmatch(text):
            odd.append(text)
    if odd:
        raise FormatError(
            f"{os.fspath(merges_path)}: no merge builds {len(odd)} tokens of "
            f"{os.fspath(vocab_path)} (first: {odd[0]!r}); merges.txt looks truncated. If "
            "those are special tokens, pass special_tokens=[...] explicitly"
        )


def read_vocab(path: str | os.PathLike) -> dict[int, bytes]:
    """``vocab.json``: a JSON object of token (in the alphabet) -> unique id >= 0."""
    name = os.fspath(path)
    data = read_json(path, "a JSON object")
    if not isinstance(data, dict):
        raise FormatError(
            f"{name}: expected a JSON object of token -> id, got {type(data).__name__}"
        )
    return vocab_from_json(data, name)


def vocab_from_json(data: Mapping[str, object], where: str) -> dict[int, bytes]:
    """Validates token -> id (tokens in the alphabet) and returns id -> bytes."""
    check_not_inverted(data, where)
    check_json_ids(data, where)
    return {i: to_bytes(text, f"{where}: a key") for text, i in data.items()}


def check_not_inverted(data: Mapping[str, object], where: str) -> None:
    """FormatError for a map of id -> token (``{"0": "!", ...}``), the inverse of
    vocab.json, as tutorials save it with ``token.decode("utf-8", errors="replace")``.

    Such a file cannot be read exactly: every token that is not whole UTF-8 (the 128 bytes
    from 0x80 on, pieces of characters) has become U+FFFD, and its merges file, raw text
    joined by a space, cannot say where a token with a space or a newline ends.

    >>> try:
    ...     check_not_inverted({"0": "!", "1": "?"}, "v.json")
    ... except FormatError as e:
    ...     print(str(e)[:60])
    v.json: maps ids to tokens ({'0': '!', ...}), the inverse of
    """
    if not data or not all(
        isinstance(k, str) and k.isascii() and k.isdigit() and isinstance(v, str)
        for k, v in data.items()
    ):
        return
    lost = [k for k, v in data.items() if "\ufffd" in v]
    first_key, first = next(iter(data.items()))
    what = (
        f"{len(lost)} of its tokens (first: id {lost[0]!r}) are U+FFFD, their bytes lost to a "
        "decode(errors='replace'), so it cannot be read exactly"
        if lost
        else "its merges, raw text joined by a space, cannot say where a token with a space "
        "ends, so it is not read"
    )
    raise FormatError(
        f"{where}: maps ids to tokens ({{{first_key!r}: {first!r}, ...}}), the inverse of "
        f"GPT-2's vocab.json (token -> id); {what}. Build bytepair.Tokenizer(vocab, merges) "
        "from the vocab and merges in memory and save it: tok.save(('vocab.json', "
        "'merges.txt'))"
    )


def check_json_ids(data: Mapping[str, object], where: str) -> None:
    """A JSON vocab's ids (GPT-2's vocab.json, a tokenizer.json's model.vocab): each an
    integer >= 0, none given twice; FormatError names the first bad key.

    >>> check_json_ids({"a": 0, "b": 1}, "vocab.json")
    """
    seen: set[int] = set()
    for text, i in data.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise FormatError(f"{where}: key {text!r} has id {i!r}; expected an integer >= 0")
        if i in seen:
            raise FormatError(f"{where}: key {text!r} reuses id {i}; ids must be unique")
        seen.add(i)


def read_merges(path: str | os.PathLike) -> list[tuple[int, Merge]]:
    """``merges.txt``: optional ``#version`` line, then ``left right`` per line.

    Returns (line number, merge) pairs so that callers can name the line.
    """
    name = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        # utf-8-sig: a byte order mark (Windows editors write one) is skipped, as the
        # vocab.json reader skips it; U+FEFF is no character of the byte alphabet.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FormatError(f"{name}: not UTF-8 ({e}); expected text") from None
    out = []
    for n, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line or (n == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise FormatError(
                f"{name}, line {n}: {line!r} is not a merge; expected two tokens separated by "
                "one space"
            )
        where = f"{name}, line {n}"
        out.append((n, (to_bytes(parts[0], where), to_bytes(parts[1], where))))
    return out


def render(vocab: Mapping[int, bytes], merges: Sequence[Merge]) -> tuple[bytes, bytes]:
    """The two files' contents: vocab.json sorted by id, merges.txt with a version line."""
    vocab_json = json.dumps(
        {to_text(vocab[i]): i for i in sorted(vocab)}, ensure_ascii=False, indent=0
    )
    lines = [VERSION_LINE, *(f"{to_text(a)} {to_text(b)}" for a, b in merges)]
    return (vocab_json + "\n").encode("utf-8"), ("\n".join(lines) + "\n").encode("utf-8")


def write(data, path) -> None:
    """Writes ``data`` (a ``TokenizerData``, or a Tokenizer) as vocab.json and merges.txt:
    into a directory (created if missing), or to the names given as a pair ``(vocab_path,
    merges_path)``, or beside a vocab file's name (``out/tok-vocab.json`` writes
    ``out/tok-merges.txt``: the last ``vocab`` in the name becomes ``merges``, ``.json``
    becomes ``.txt``).

    Special tokens are written into vocab.json with their ids, as GPT-2 does with
    ``<|endoftext|>``; a reader tells them apart because no merge produces them.

    >>> paths("out/cs336_vocab.json")
    ('out/cs336_vocab.json', 'out/cs336_merges.txt')
    """
    data = tokenizer_data.of(data)
    vocab_path, merges_path = paths(path)
    if data.rank_table:
        _check_rank_table(data)
    for target in (vocab_path, merges_path):
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    vocab_json, merges_txt = render(data.with_specials(), data.merges)
    write_files({vocab_path: vocab_json, merges_path: merges_txt})
    regex = patterns.resolve(data.pattern)
    if regex != patterns.GPT2:
        # The files have no place for the pattern and the reader gives GPT-2's: say so, with
        # the argument that gives it back, as the tiktoken writer does.
        shown = patterns.name_of(regex) or regex
        warnings.warn(
            f"{vocab_path}: vocab.json + merges.txt store no pattern, and this tokenizer's "
            f"is {shown!r}; load them with Tokenizer.load(path, pattern={shown!r}) (at the "
            f"command line: --pattern {shlex.quote(shown)}), or they encode with GPT-2's",
            FormatWarning,
            stacklevel=2,
        )


def paths(path) -> tuple[str, str]:
    """Where ``write`` puts vocab.json and merges.txt for ``path`` (see ``write``)."""
    if isinstance(path, (tuple, list)):
        if len(path) != 2 or not all(isinstance(p, (str, os.PathLike)) for p in path):
            raise FormatError(
                f"GPT-2 files: expected a directory or a pair (vocab_path, merges_path), "
                f"got {path!r}"
            )
        vocab_path, merges_path = (os.fspath(p) for p in path)
        if os.path.abspath(vocab_path) == os.path.abspath(merges_path):
            raise FormatError(f"{vocab_path}: vocab.json and merges.txt need two names")
        return vocab_path, merges_path
    name = os.fspath(path)
    base = os.path.basename(name)
    if base.endswith(".json") and not os.path.isdir(name):
        stem = base[: -len(".json")]
        if "vocab" not in stem:
            raise FormatError(
                f"{name}: a vocab file's name must hold 'vocab' (tok-vocab.json) to name its "
                "merges file beside it; or pass the pair (vocab_path, merges_path)"
            )
        cut = stem.rindex("vocab")
        merges = stem[:cut] + "merges" + stem[cut + len("vocab") :] + ".txt"
        return name, os.path.join(os.path.dirname(name), merges)
    return os.path.join(name, "vocab.json"), os.path.join(name, "merges.txt")


def _check_rank_table(data: TokenizerData) -> None:
    """A rank table (from tiktoken) may hold tokens that no merge produces: tiktoken reaches
    them only when a whole pre-token is that token (Llama 3 has 678). vocab.json +
    merges.txt cannot say so, and the reader would even take them for special tokens."""

    special_ids = set(data.special_tokens.values())
    made = {a + b for a, b in data.merges}
    orphans = [
        b
        for i, b in data.with_specials().items()
        if i not in special_ids and len(b) > 1 and b not in made
    ]
    if orphans:
        raise VocabError(
            f"this rank table has {len(orphans)} tokens that no merge produces (first: "
            f"{orphans[0]!r}); tiktoken reaches them only as whole pre-tokens, which GPT-2 "
            "files cannot express. Save it as huggingface (ignore_merges) or tiktoken instead"
        )


_SPECIAL_SHAPE = re.compile(r"<[^<>\s]+>|\[[^\[\]\s]+\]")


def special_candidates(vocab: Mapping[int, bytes], merges: Sequence[Merge]) -> list[str]:
    """Tokens that only a special token can produce: longer than one byte, the result of
    no merge, and valid UTF-8. Encoding text can never reach them."""
    made = {a + b for a, b in merges}
    out = []
    for i in sorted(vocab):
        b = vocab[i]
        if len(b) > 1 and b not in made:
            try:
                out.append(b.decode("utf-8"))
            except UnicodeDecodeError:
                continue
    return out


def load(
    path,
    special_tokens: Sequence[str] | None = None,
    pattern: str = "gpt2",
) -> TokenizerData:
    """The data of a GPT-2 pair: ``path/vocab.json`` + ``path/merges.txt`` for a directory,
    else the files ``paths(path)`` names (a pair, or a vocab file with its merges beside).

    ``special_tokens=None`` takes every vocab entry that no merge produces (GPT-2's
    ``<|endoftext|>``) as a special token.
    """
    vocab_path, merges_path = paths(path)
    vocab, merges = read(vocab_path, merges_path, special_tokens or ())
    if special_tokens is None:
        # `read` let through only unbuilt tokens shaped like a control token.
        special_tokens = special_candidates(vocab, merges)
    # A damaged vocab.json (a byte missing, say) is named in the error.
    data = TokenizerData(
        vocab, merges, list(special_tokens), pattern, error_names=((VocabError, vocab_path),)
    )
    return tokenizer_data.checked(data)
