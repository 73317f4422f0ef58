"""HuggingFace ``tokenizer.json``: byte-level BPE, read and written exactly.

bytepair writes the pattern as a ``Split`` pre-tokenizer (isolated, not inverted) followed
by ``ByteLevel`` without its own regex, so ``tokenizers`` splits text exactly as bytepair
does. Reading accepts GPT-2's file (``ByteLevel`` with its built-in regex) and any byte-level
BPE file, and refuses anything bytepair could not encode identically.

>>> hf_regex(patterns.CL100K) == patterns.CL100K
False
>>> pattern_from_hf(hf_regex(patterns.CL100K)) == patterns.CL100K
True
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

from bytepair import patterns
from bytepair.errors import FormatError, PatternError, SpecialTokenError, VocabError
from bytepair.formats.atomic import write_files
from bytepair.formats.gpt2 import to_bytes, to_text
from bytepair.formats.jsonfile import read_json

# Oniguruma, HF's regex engine, reads `X{1,3}+` as `(?:X{1,3})+`, not as a possessive
# interval (that is Java syntax only): cl100k's `\p{N}{1,3}+` split "1894" as one piece
# instead of "189" + "4" on en-prose. Nothing follows it in its alternative, so the greedy
# `\p{N}{1,3}` is the same match. The `++` and `?+` possessives mean the same in both
# engines, and `\s++$` only meets `$` at the very end (the possessive run has eaten every
# newline), so onig's end-of-line `$` agrees too: tests/test_formats_hf.py checks every
# built-in pattern on every corpus.
_HF_REWRITES = {patterns.CL100K: patterns.CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")}
_FROM_HF = {hf: tiktoken_form for tiktoken_form, hf in _HF_REWRITES.items()}

# HF's ByteLevel pre-tokenizer regex (use_regex=true) is GPT-2's original pattern, which
# splits exactly as tiktoken's gpt2 pattern (test_gpt2_tokenizer_json_matches_tiktoken).
_BYTELEVEL_REGEX_PATTERN = patterns.GPT2


_POSSESSIVE_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}\+")


def hf_regex(pattern: str) -> str:
    """The pattern in a form Oniguruma matches exactly as fancy-regex matches ``pattern``."""
    if pattern in _HF_REWRITES:
        return _HF_REWRITES[pattern]
    if _POSSESSIVE_INTERVAL.search(pattern):
        raise PatternError(
            f"pattern {pattern!r} has a possessive interval (`{{n,m}}+`), which HuggingFace's "
            "regex engine reads as a repetition: rewrite it with an atomic group `(?>X{n,m})`"
        )
    return pattern


def pattern_from_hf(hf_pattern: str) -> str:
    """Inverse of ``hf_regex``: the built-in pattern a written regex stands for."""
    return _FROM_HF.get(hf_pattern, hf_pattern)


# -- writing ------------------------------------------------------------------------------


def _bytelevel(kind: str) -> dict:
    return {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": kind != "post",
        "use_regex": False,
    }


def to_json(tok) -> dict:
    """The tokenizer.json document for ``tok`` (see docs/formats.md for each rule)."""
    specials = tok.special_tokens
    special_ids = set(specials.values())
    vocab: dict[str, int] = {}
    for i in sorted(tok.vocab):
        if i not in special_ids:
            vocab[to_text(tok.vocab[i])] = i
    for token, i in specials.items():
        vocab.setdefault(token, i)
    # A rank table (a .tiktoken vocabulary) encodes a pre-token that is itself a token as
    # that token; HF's `ignore_merges` is the same shortcut.
    rank_mode = getattr(tok, "_rank_mode", False)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": token,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for token, i in specials.items()
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": hf_regex(tok.pattern)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                _bytelevel("pre"),
            ],
        },
        "post_processor": _bytelevel("post"),
        "decoder": _bytelevel("decoder"),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": bool(rank_mode),
            "vocab": vocab,
            "merges": [[to_text(a), to_text(b)] for a, b in tok.merges],
        },
    }


def write(tok, path: str | os.PathLike) -> None:
    """Writes ``tok`` as tokenizer.json, atomically."""
    text = json.dumps(to_json(tok), ensure_ascii=False, indent=2)
    write_files({path: (text + "\n").encode("utf-8")})


# -- reading ------------------------------------------------------------------------------


def read(path: str | os.PathLike):
    """Loads a byte-level BPE tokenizer.json as a Tokenizer, or raises FormatError."""
    return from_json(read_json(path, "a tokenizer.json"), os.fspath(path))


def _get(obj: Mapping, key: str, where: str, kind: type | tuple[type, ...]):
    if key not in obj:
        raise FormatError(f"{where}: missing key {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FormatError(f"{where}: key {key!r} is {value!r}; expected a JSON {names}")
    return value


def _refuse(where: str, what: str, why: str) -> FormatError:
    return FormatError(
        f"{where}: {what} is not supported: {why}. bytepair reads byte-level BPE only, and "
        "refuses what it could not encode exactly as HuggingFace does"
    )


def _check_bytelevel(node: Mapping, where: str, *, regex_allowed: bool) -> bool:
    """Validates a ByteLevel pre-tokenizer; returns whether it applies GPT-2's regex."""
    if node.get("add_prefix_space", False):
        raise _refuse(
            where, "ByteLevel with add_prefix_space=true", "it inserts a space before the text"
        )
    use_regex = node.get("use_regex", True)
    if use_regex and not regex_allowed:
        raise _refuse(
            where,
            "ByteLevel with use_regex=true after a Split",
            "it splits each piece a second time",
        )
    return bool(use_regex)


def _pattern(pre, where: str) -> str:
    """The pattern a pre_tokenizer stands for, or a FormatError."""
    if not isinstance(pre, dict):
        raise FormatError(
            f"{where}: expected an object, got {pre!r} (a byte-level BPE needs "
            "a ByteLevel pre-tokenizer)"
        )
    kind = pre.get("type")
    if kind == "ByteLevel":
        _check_bytelevel(pre, where, regex_allowed=True)
        if not pre.get("use_regex", True):
            raise _refuse(
                where,
                "ByteLevel with use_regex=false alone",
                "without a Split the whole text is one piece",
            )
        return _BYTELEVEL_REGEX_PATTERN
    if kind != "Sequence":
        raise _refuse(where, f"pre-tokenizer {kind!r}", "it is not byte-level")
    steps = _get(pre, "pretokenizers", where, list)
    if len(steps) == 1 and isinstance(steps[0], dict) and steps[0].get("type") == "ByteLevel":
        return _pattern(steps[0], f"{where}.pretokenizers[0]")
    if len(steps) != 2 or not all(isinstance(s, dict) for s in steps):
        raise _refuse(
            where, f"a Sequence of {len(steps)} pre-tokenizers", "expected [Split, ByteLevel]"
        )
    split, bytelevel = steps
    split_where, bl_where = f"{where}.pretokenizers[0]", f"{where}.pretokenizers[1]"
    if split.get("type") != "Split":
        raise _refuse(split_where, f"pre-tokenizer {split.get('type')!r}", "expected Split")
    if bytelevel.get("type") != "ByteLevel":
        raise _refuse(bl_where, f"pre-tokenizer {bytelevel.get('type')!r}", "expected ByteLevel")
    _check_bytelevel(bytelevel, bl_where, regex_allowed=False)
    if split.get("behavior") != "Isolated" or split.get("invert", False):
        raise _refuse(
            split_where,
            f"Split with behavior={split.get('behavior')!r}, invert={split.get('invert')!r}",
            "expected Isolated, invert=false",
        )
    pat = _get(split, "pattern", split_where, dict)
    if "Regex" not in pat or not isinstance(pat["Regex"], str):
        raise _refuse(split_where, f"pattern {pat!r}", 'expected {"Regex": "..."}')
    try:
        return patterns.resolve(pattern_from_hf(pat["Regex"]))
    except PatternError as e:
        raise FormatError(f"{split_where}.pattern: {e}") from None


def _merges(model: Mapping, where: str) -> list[tuple[bytes, bytes]]:
    out = []
    for n, m in enumerate(_get(model, "merges", where, list)):
        here = f"{where}.merges[{n}]"
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list) and all(isinstance(p, str) for p in m):
            parts = m
        else:
            raise FormatError(f'{here}: {m!r}; expected "a b" or ["a", "b"]')
        if len(parts) != 2 or not all(parts):
            raise FormatError(f"{here}: {m!r} is not a merge; expected two tokens")
        out.append((to_bytes(parts[0], here), to_bytes(parts[1], here)))
    return out


def from_json(doc, name: str = "tokenizer.json"):
    """A Tokenizer from a parsed tokenizer.json; ``name`` is used in error messages."""
    from bytepair.tokenizer import Tokenizer

    if not isinstance(doc, dict):
        raise FormatError(f"{name}: expected a JSON object, got {type(doc).__name__}")
    model = _get(doc, "model", name, dict)
    mwhere = f"{name}: model"
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise FormatError(
            f"{name}: model.type is {kind!r}, not 'BPE': bytepair reads byte-level BPE "
            "tokenizers only (GPT-2, Llama 3, Qwen, ...); load a WordPiece, Unigram or "
            "WordLevel model with HuggingFace tokenizers or transformers"
        )
    if model.get("dropout") not in (None, 0, 0.0):
        raise _refuse(
            f"{mwhere}.dropout", f"dropout={model['dropout']!r}", "it makes encoding random"
        )
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _refuse(f"{mwhere}.{key}", f"{key}={model[key]!r}", "it marks word pieces")
    if model.get("byte_fallback"):
        raise _refuse(
            f"{mwhere}.byte_fallback",
            "byte_fallback=true",
            "it is SentencePiece-style, not byte-level",
        )
    if doc.get("normalizer") is not None:
        raise _refuse(
            f"{name}: normalizer",
            f"normalizer {doc['normalizer'].get('type')!r}"
            if isinstance(doc["normalizer"], dict)
            else "a normalizer",
            "it changes the text before encoding",
        )
    pattern = _pattern(doc.get("pre_tokenizer"), f"{name}: pre_tokenizer")
    decoder = doc.get("decoder")
    if decoder is not None and not (
        isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"
    ):
        raise _refuse(
            f"{name}: decoder",
            f"decoder {decoder!r}"[:80],
            "bytepair decodes by concatenating token bytes (ByteLevel)",
        )

    specials = _added_tokens(doc, name)
    raw_vocab = _get(model, "vocab", mwhere, dict)
    special_ids = set(specials.values())
    vocab: dict[int, bytes] = {}
    for text, i in raw_vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise FormatError(f"{mwhere}.vocab: key {text!r} has id {i!r}; expected an int >= 0")
        if i in vocab:
            raise FormatError(f"{mwhere}.vocab: key {text!r} reuses id {i}; ids must be unique")
        if i in special_ids:
            continue  # an added special token: its text is in added_tokens, not the alphabet
        vocab[i] = to_bytes(text, f"{mwhere}.vocab: key {text!r}")
    for token, i in specials.items():
        vocab[i] = token.encode("utf-8")
    merges = _merges(model, mwhere)

    try:
        if model.get("ignore_merges"):
            # A rank table: valid only if the merges are exactly those the ranks imply.
            tok = Tokenizer(vocab, None, special_tokens=specials, pattern=pattern)
            if tok.merges != merges:
                raise _refuse(
                    f"{mwhere}.ignore_merges",
                    "ignore_merges=true with merges that are not implied by the ids' order",
                    "the shortcut then differs from BPE on the merges",
                )
            return tok
        return Tokenizer(vocab, merges, special_tokens=specials, pattern=pattern)
    except (VocabError, SpecialTokenError) as e:
        raise FormatError(f"{mwhere}: {e}") from None
    except PatternError as e:  # valid for Python's regex, refused by the core's engine
        raise FormatError(f"{name}: pre_tokenizer: {e}") from None


def _added_tokens(doc: Mapping, name: str) -> dict[str, int]:
    specials: dict[str, int] = {}
    for n, added in enumerate(doc.get("added_tokens") or []):
        where = f"{name}: added_tokens[{n}]"
        if not isinstance(added, dict):
            raise FormatError(f"{where}: expected an object, got {added!r}")
        content = _get(added, "content", where, str)
        i = _get(added, "id", where, int)
        if not added.get("special", False):
            raise _refuse(
                where,
                f"non-special added token {content!r}",
                "HF matches it before pre-tokenization, which bytepair does only for "
                "special tokens",
            )
        for flag in ("single_word", "lstrip", "rstrip"):
            if added.get(flag):
                raise _refuse(
                    where, f"{flag}=true on {content!r}", "it changes how the token matches"
                )
        if content in specials:
            raise FormatError(f"{where}: {content!r} is listed twice")
        specials[content] = i
    return specials
