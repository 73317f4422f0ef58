"""HuggingFace ``tokenizer.json``: byte-level BPE, read and written exactly.

bytepair writes a trained tokenizer's pattern as a ``Split`` pre-tokenizer (isolated, not
inverted) followed by ``ByteLevel`` without its own regex, so ``tokenizers`` splits text
exactly as bytepair does. Reading takes the whole byte-level BPE pipeline (normalizers,
pre-tokenizer steps, added tokens and their flags, templates, decoders: see
``bytepair.pipeline`` and docs/formats.md) into a ``Pipeline``, which a loaded tokenizer
writes back as it was read; anything else is refused with the JSON path of what is not
supported, never approximated.

>>> hf_regex(patterns.CL100K) == patterns.CL100K
False
>>> pattern_from_hf(hf_regex(patterns.CL100K)) == patterns.CL100K
True
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping

import regex

from bytepair import _core, patterns
from bytepair import pipeline as pl
from bytepair.errors import FormatError, PatternError, SpecialTokenError, VocabError
from bytepair.formats import tokenizer_data
from bytepair.formats.atomic import write_files
from bytepair.formats.gpt2 import to_bytes, to_text
from bytepair.formats.jsonfile import read_tokenizer_json
from bytepair.formats.tokenizer_data import TokenizerData
from bytepair.vocab import MAX_VOCAB_SIZE, merge_not_in_vocab

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


_BEHAVIOR_JSON = {
    "removed": "Removed",
    "isolated": "Isolated",
    "merged_with_previous": "MergedWithPrevious",
    "merged_with_next": "MergedWithNext",
    "contiguous": "Contiguous",
}


def _pattern_json(pattern: str, is_regex: bool) -> dict:
    return {"Regex": pattern} if is_regex else {"String": pattern}


def _step_json(step) -> dict:
    """One pipeline stage as tokenizer.json writes it."""
    if isinstance(step, pl.UnicodeNormalizer):
        return {"type": step.form}
    if isinstance(step, pl.Lowercase):
        return {"type": "Lowercase"}
    if isinstance(step, pl.Replace):
        return {
            "type": "Replace",
            "pattern": _pattern_json(step.pattern, step.is_regex),
            "content": step.content,
        }
    if isinstance(step, pl.Strip):
        return {"type": "Strip", "strip_left": step.left, "strip_right": step.right}
    if isinstance(step, pl.Prepend):
        return {"type": "Prepend", "prepend": step.prepend}
    if isinstance(step, pl.Split):
        return {
            "type": "Split",
            "pattern": _pattern_json(step.pattern, step.is_regex),
            "behavior": _BEHAVIOR_JSON[step.behavior],
            "invert": step.invert,
        }
    if isinstance(step, (pl.ByteLevel, pl.ByteLevelProcessor, pl.ByteLevelDecoder)):
        return {
            "type": "ByteLevel",
            "add_prefix_space": step.add_prefix_space,
            "trim_offsets": step.trim_offsets,
            "use_regex": step.use_regex,
        }
    if isinstance(step, pl.Digits):
        return {"type": "Digits", "individual_digits": step.individual_digits}
    if isinstance(step, pl.Punctuation):
        return {"type": "Punctuation", "behavior": _BEHAVIOR_JSON[step.behavior]}
    if isinstance(step, pl.Whitespace):
        return {"type": "Whitespace"}
    if isinstance(step, pl.WhitespaceSplit):
        return {"type": "WhitespaceSplit"}
    if isinstance(step, pl.Metaspace):
        return {
            "type": "Metaspace",
            "replacement": step.replacement,
            "prepend_scheme": step.prepend_scheme,
            "split": step.split,
        }
    if isinstance(step, pl.Template):

        def items(template):
            return [
                {"SpecialToken" if kind == "special" else "Sequence": {"id": n, "type_id": t}}
                for kind, n, t in template
            ]

        out = {"type": "TemplateProcessing", "single": items(step.single)}
        if step.pair:
            out["pair"] = items(step.pair)
        out["special_tokens"] = {
            name: {"id": name, "ids": list(ids), "tokens": list(tokens)}
            for name, ids, tokens in step.special_tokens
        }
        return out
    raise TypeError(f"no tokenizer.json form for {step!r}")  # pragma: no cover


def _stage_json(steps, sequence: bool, key: str):
    if not steps and not sequence:
        return None
    if len(steps) == 1 and not sequence:
        return _step_json(steps[0])
    return {"type": "Sequence", key: [_step_json(s) for s in steps]}


def _pipeline_json(data: TokenizerData) -> dict:
    """A loaded tokenizer.json written back: the same pipeline, model vocab and merges."""
    p = data.pipeline
    vocab = {to_text(b): i for i, b in data.vocab.items()}
    vocab.update(dict(p.model_vocab_extra))
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": t.id,
                "content": t.content,
                "single_word": t.single_word,
                "lstrip": t.lstrip,
                "rstrip": t.rstrip,
                "normalized": t.normalized,
                "special": t.special,
            }
            for t in p.added_tokens
        ],
        "normalizer": _stage_json(p.normalizers, p.normalizer_sequence, "normalizers"),
        "pre_tokenizer": _stage_json(p.pre_tokenizers, p.pre_tokenizer_sequence, "pretokenizers"),
        "post_processor": _stage_json(p.post_processors, p.post_processor_sequence, "processors"),
        "decoder": _stage_json(p.decoders, p.decoder_sequence, "decoders"),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": p.ignore_merges or data.rank_table,
            "vocab": dict(sorted(vocab.items(), key=lambda kv: kv[1])),
            "merges": [[to_text(a), to_text(b)] for a, b in data.merges],
        },
    }


def to_json(data) -> dict:
    """The tokenizer.json document for ``data`` (a ``TokenizerData``, or a Tokenizer; see
    docs/formats.md for each rule)."""
    data = tokenizer_data.of(data)
    if data.pipeline is not None:
        return _pipeline_json(data)
    specials = dict(data.special_tokens)
    special_ids = set(specials.values())
    all_ids = data.with_specials()
    vocab: dict[str, int] = {}
    for i in sorted(all_ids):
        if i not in special_ids:
            vocab[to_text(all_ids[i])] = i
    for token, i in specials.items():
        vocab.setdefault(token, i)
    # A rank table (a .tiktoken vocabulary) encodes a pre-token that is itself a token as
    # that token; HF's `ignore_merges` is the same shortcut.
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
                    "pattern": {"Regex": hf_regex(split)},
                    "behavior": "Isolated",
                    "invert": False,
                }
                # DeepSeek's pattern is its three Splits, each one splitting the last's pieces.
                for split in (
                    patterns.DEEPSEEK_SPLITS
                    if data.pattern == patterns.DEEPSEEK
                    else [data.pattern]
                )
            ]
            + [_bytelevel("pre")],
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
            "ignore_merges": data.rank_table,
            "vocab": vocab,
            "merges": [[to_text(a), to_text(b)] for a, b in data.merges],
        },
    }


def render(data) -> bytes:
    """``data`` (a ``TokenizerData``, or a Tokenizer) as the bytes of a tokenizer.json."""
    return (json.dumps(to_json(data), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def write(data, path: str | os.PathLike) -> None:
    """Writes ``data`` (a ``TokenizerData``, or a Tokenizer) as tokenizer.json, atomically."""
    write_files({path: render(data)})


# -- reading ------------------------------------------------------------------------------


def read(path: str | os.PathLike) -> TokenizerData:
    """Reads a byte-level BPE tokenizer.json, or raises FormatError."""
    return from_json(read_tokenizer_json(path, "a tokenizer.json"), os.fspath(path))


def _get(obj: Mapping, key: str, where: str, kind: type | tuple[type, ...]):
    if key not in obj:
        raise FormatError(f"{where}: missing key {key!r}")
    return _typed(obj[key], f"{where}: key {key!r}", kind)


def _opt(obj: Mapping, key: str, where: str, kind: type | tuple[type, ...], default):
    """An optional key (absent or null: ``default``), type-checked."""
    if obj.get(key) is None:
        return default
    return _typed(obj[key], f"{where}.{key}", kind)


def _typed(value, where: str, kind: type | tuple[type, ...]):
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(_JSON_NAMES.get(k, k.__name__) for k in kinds)
        raise FormatError(f"{where} is {value!r}; expected a JSON {names}")
    return value


_JSON_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}


def _refuse(where: str, what: str, why: str) -> FormatError:
    return FormatError(
        f"{where}: {what} is not supported: {why}. bytepair reads byte-level BPE only, and "
        "refuses what it could not encode exactly as HuggingFace does"
    )


def _kind(node, where: str, stage: str) -> str:
    if not isinstance(node, dict):
        raise FormatError(f"{where}: expected a {stage} object, got {node!r}"[:300])
    return _get(node, "type", where, str)


_NORMALIZERS = "NFC, NFD, NFKC, NFKD, Lowercase, Replace, Strip, Prepend and Sequence"
_PRE_TOKENIZERS = (
    "Split, ByteLevel, Digits, Punctuation, Whitespace, WhitespaceSplit, Metaspace and Sequence"
)
_BEHAVIOR_NAMES = {
    "Removed": "removed",
    "Isolated": "isolated",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}


def _pattern_of(node: Mapping, where: str) -> tuple[str, bool]:
    """A Split's or Replace's ``{"Regex": ...}`` or ``{"String": ...}``: (text, is_regex)."""
    pat = _get(node, "pattern", where, dict)
    if len(pat) != 1 or not ({"Regex", "String"} & pat.keys()):
        raise FormatError(
            f'{where}.pattern: {pat!r}; expected {{"Regex": "..."}} or {{"String": "..."}}'
        )
    is_regex = "Regex" in pat
    text = _typed(pat["Regex" if is_regex else "String"], f"{where}.pattern", str)
    if is_regex:
        try:
            regex.compile(text)
        except regex.error as e:
            raise FormatError(f"{where}.pattern: invalid pattern regex {text!r}: {e}") from None
    return text, is_regex


def _normalizer_steps(node, where: str) -> tuple[list, bool]:
    """(steps, whether the file wrapped them in a Sequence)."""
    if node is None:
        return [], False
    kind = _kind(node, where, "normalizer")
    if kind == "Sequence":
        steps = []
        for n, sub in enumerate(_get(node, "normalizers", where, list)):
            inner, _ = _normalizer_steps(sub, f"{where}.normalizers[{n}]")
            steps.extend(inner)
        return steps, True
    if kind in pl.UNICODE_FORMS:
        return [pl.UnicodeNormalizer(kind)], False
    if kind == "Lowercase":
        return [pl.Lowercase()], False
    if kind == "Replace":
        text, is_regex = _pattern_of(node, where)
        if is_regex and regex.compile(text).fullmatch(""):
            raise _refuse(
                f"{where}.pattern",
                f"a Replace regex that matches the empty string ({text!r})",
                "HF's encode applies it differently from its own normalize_str",
            )
        return [pl.Replace(text, is_regex, _get(node, "content", where, str))], False
    if kind == "Strip":
        left = _opt(node, "strip_left", where, bool, True)
        right = _opt(node, "strip_right", where, bool, True)
        return [pl.Strip(left, right)], False
    if kind == "Prepend":
        return [pl.Prepend(_get(node, "prepend", where, str))], False
    raise _refuse(
        f"{where}.type", f"normalizer {kind!r}", f"the normalizers read are {_NORMALIZERS}"
    )


def _behavior(node: Mapping, where: str, default: str | None = None) -> str:
    if "behavior" not in node and default is not None:
        return default
    value = _get(node, "behavior", where, str)
    if value not in _BEHAVIOR_NAMES:
        raise _refuse(
            f"{where}.behavior",
            f"behavior {value!r}",
            f"HF's behaviors are {', '.join(_BEHAVIOR_NAMES)}",
        )
    return _BEHAVIOR_NAMES[value]


def _pre_steps(node, where: str) -> tuple[list, bool]:
    kind = _kind(node, where, "pre-tokenizer")
    if kind == "Sequence":
        steps = []
        for n, sub in enumerate(_get(node, "pretokenizers", where, list)):
            inner, _ = _pre_steps(sub, f"{where}.pretokenizers[{n}]")
            steps.extend((s, w) for s, w in inner)
        return steps, True
    if kind == "Split":
        text, is_regex = _pattern_of(node, where)
        step = pl.Split(
            text, is_regex, _behavior(node, where), _opt(node, "invert", where, bool, False)
        )
    elif kind == "ByteLevel":
        prefix, trim, use_regex = _byte_level(node, where)
        step = pl.ByteLevel(prefix, use_regex, trim)
    elif kind == "Digits":
        step = pl.Digits(_opt(node, "individual_digits", where, bool, False))
    elif kind == "Punctuation":
        step = pl.Punctuation(_behavior(node, where, "isolated"))
    elif kind == "Whitespace":
        step = pl.Whitespace()
    elif kind == "WhitespaceSplit":
        step = pl.WhitespaceSplit()
    elif kind == "Metaspace":
        replacement = _get(node, "replacement", where, str)
        if len(replacement) != 1:
            raise FormatError(f"{where}.replacement: {replacement!r}; expected one character")
        scheme = _opt(node, "prepend_scheme", where, str, "always")
        if scheme not in ("always", "first", "never"):
            raise _refuse(
                f"{where}.prepend_scheme",
                f"prepend_scheme {scheme!r}",
                "expected always, first or never",
            )
        step = pl.Metaspace(replacement, scheme, _opt(node, "split", where, bool, True))
    else:
        raise _refuse(
            f"{where}.type",
            f"pre-tokenizer {kind!r}",
            f"the pre-tokenizers read are {_PRE_TOKENIZERS}",
        )
    return [(step, where)], False


def _pre_tokenizer(node, where: str) -> tuple[tuple, bool]:
    if node is None:
        raise FormatError(
            f"{where}: expected an object, got None (a byte-level BPE needs a ByteLevel "
            "pre-tokenizer)"
        )
    steps, wrapped = _pre_steps(node, where)
    levels = [n for n, (s, _) in enumerate(steps) if isinstance(s, pl.ByteLevel)]
    if levels != [len(steps) - 1]:
        last_where = steps[-1][1] if steps else where
        raise _refuse(
            last_where if not levels else steps[levels[0]][1],
            "a pre-tokenizer without exactly one ByteLevel, as its last step",
            "the BPE model then sees text that is not mapped to bytes (ByteLevel maps it; a "
            "step after it would split the mapped text)",
        )
    return tuple(s for s, _ in steps), wrapped


def _byte_level(node: Mapping, where: str) -> tuple[bool, bool, bool]:
    """``(add_prefix_space, trim_offsets, use_regex)`` of a ByteLevel node: HF gives its
    pre-tokenizer, post-processor and decoder the same fields and defaults."""
    return (
        _opt(node, "add_prefix_space", where, bool, True),
        _opt(node, "trim_offsets", where, bool, True),
        _opt(node, "use_regex", where, bool, True),
    )


def _post_processor(node, where: str, known: Callable[[int], bool]) -> tuple[tuple, bool]:
    if node is None:
        return (), False
    kind = _kind(node, where, "post-processor")
    if kind == "Sequence":
        out = []
        for n, sub in enumerate(_get(node, "processors", where, list)):
            inner, _ = _post_processor(sub, f"{where}.processors[{n}]", known)
            out.extend(inner)
        if sum(isinstance(p, pl.Template) for p in out) > 1:
            raise _refuse(where, "two TemplateProcessing steps", "HF applies only one template")
        return tuple(out), True
    if kind == "ByteLevel":
        return (pl.ByteLevelProcessor(*_byte_level(node, where)),), False
    if kind == "TemplateProcessing":
        return (_template(node, where, known),), False
    raise _refuse(
        f"{where}.type",
        f"post-processor {kind!r}",
        "the post-processors read are ByteLevel, TemplateProcessing and Sequence",
    )


def _template_items(node: Mapping, key: str, where: str) -> tuple[tuple[str, str, int], ...]:
    items = []
    for n, item in enumerate(_get(node, key, where, list)):
        here = f"{where}.{key}[{n}]"
        if (
            not isinstance(item, dict)
            or len(item) != 1
            or not ({"SpecialToken", "Sequence"} & item.keys())
        ):
            raise FormatError(
                f'{here}: {item!r}; expected {{"SpecialToken": ...}} or {{"Sequence": ...}}'
            )
        kind = "special" if "SpecialToken" in item else "sequence"
        body = _typed(item["SpecialToken" if kind == "special" else "Sequence"], here, dict)
        name = _get(body, "id", here, str)
        type_id = _opt(body, "type_id", here, int, 0)
        if kind == "sequence" and name not in ("A", "B"):
            raise FormatError(f"{here}.id: {name!r}; a sequence is A or B")
        items.append((kind, name, type_id))
    return tuple(items)


def _template(node: Mapping, where: str, known: Callable[[int], bool]) -> pl.Template:
    single = _template_items(node, "single", where)
    pair = _template_items(node, "pair", where) if "pair" in node else ()
    table = _get(node, "special_tokens", where, dict)
    specials = []
    for name, entry in table.items():
        here = f"{where}.special_tokens[{name!r}]"
        entry = _typed(entry, here, dict)
        tids = _get(entry, "ids", here, list)
        tokens = _get(entry, "tokens", here, list)
        for k, i in enumerate(tids):
            _typed(i, f"{here}.ids[{k}]", int)
            if not known(i):
                raise FormatError(f"{here}.ids[{k}]: id {i} is not in the vocabulary")
        specials.append((name, tuple(tids), tuple(_typed(t, here, str) for t in tokens)))
    names = {name for name, _, _ in specials}
    for key, items in (("single", single), ("pair", pair)):
        for n, (kind, name, _) in enumerate(items):
            if kind == "special" and name not in names:
                raise FormatError(
                    f"{where}.{key}[{n}]: the template names the special token {name!r}, which "
                    f"its special_tokens do not define (they define {sorted(names)!r})"
                )
    if any(kind == "sequence" and name == "B" for kind, name, _ in single):
        raise FormatError(f"{where}.single: names the sequence B; a single template has only A")
    return pl.Template(single, pair, tuple(specials))


def _decoders(node, where: str) -> tuple[tuple, bool]:
    if node is None:
        return (), False
    kind = _kind(node, where, "decoder")
    if kind == "Sequence":
        out = []
        for n, sub in enumerate(_get(node, "decoders", where, list)):
            inner, _ = _decoders(sub, f"{where}.decoders[{n}]")
            out.extend(inner)
        return tuple(out), True
    if kind == "ByteLevel":
        return (pl.ByteLevelDecoder(*_byte_level(node, where)),), False
    raise _refuse(
        f"{where}.type",
        f"decoder {kind!r}",
        "bytepair decodes by concatenating token bytes (ByteLevel, alone or in a Sequence)",
    )


def _tables(model: Mapping, mwhere: str) -> _core.ModelTables:
    """The vocab and merges the core read (``jsonfile.read_tokenizer_json``), or the type
    error of a vocab that is no object; an id that breaks the rule raises, naming its key."""
    tables = model.get("vocab")
    if not isinstance(tables, _core.ModelTables):
        vocab = _get(model, "vocab", mwhere, dict)
        raise TypeError(
            f"{mwhere}.vocab: {type(vocab).__name__}; from_json takes a document "
            "that jsonfile.read_tokenizer_json read"
        )
    error = tables.vocab_error()
    if error is not None:
        kind, text, value = error
        where = f"{mwhere}.vocab"
        if kind == "id":
            raise FormatError(
                f"{where}: key {text!r} has id {value!r}; expected an integer >= 0 and below "
                f"{MAX_VOCAB_SIZE:,} (2**26)"
            )
        raise FormatError(f"{where}: key {text!r} reuses id {value}; ids must be unique")
    return tables


def _check_merges(model: Mapping, mwhere: str, tables: _core.ModelTables) -> None:
    """Refuses merges that are no array, or one that is not two tokens of GPT-2's alphabet."""
    if not tables.has_merges():
        _get(model, "merges", mwhere, list)
    error = tables.merges_error()
    if error is None:
        return
    kind, n, m = error
    here = f"{mwhere}.merges[{n}]"
    if kind == "form":
        raise FormatError(f'{here}: {m!r}; expected "a b" or ["a", "b"]')
    if kind == "two":
        raise FormatError(f"{here}: {m!r} is not a merge; expected two tokens")
    to_bytes(m, here)  # raises: a text outside the alphabet


def _check_model(model: Mapping, mwhere: str) -> bool:
    """Refuses what the byte-level BPE model does not do; returns ignore_merges."""
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise FormatError(
            f"{mwhere}.type is {kind!r}, not 'BPE': bytepair reads byte-level BPE "
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
    return bool(_opt(model, "ignore_merges", mwhere, bool, False))


def _added_tokens(doc: Mapping, name: str, model_vocab: _core.ModelTables) -> list[pl.AddedToken]:
    """The added tokens with the ids HF gives them: a token already in the model's vocab
    keeps that id, the others are numbered from the model's size on, in order (HF ignores the
    file's ids, so a file whose ids differ is refused rather than read two ways)."""
    # A top-level key: "file: added_tokens", not _opt's "where.key" ("file.json.added_tokens").
    raw = doc.get("added_tokens")
    raw = [] if raw is None else _typed(raw, f"{name}: added_tokens", list)
    out: list[pl.AddedToken] = []
    seen: dict[str, int] = {}
    next_id = len(model_vocab)
    for n, added in enumerate(raw):
        where = f"{name}: added_tokens[{n}]"
        if not isinstance(added, dict):
            raise FormatError(f"{where}: expected an object, got {added!r}")
        content = _get(added, "content", where, str)
        i = _get(added, "id", where, int)
        if not content:
            raise FormatError(f"{where}.content: an empty added token matches nothing")
        if content in seen:
            raise FormatError(f"{where}: {content!r} is listed twice")
        flags = {
            key: _opt(added, key, where, bool, default)
            for key, default in (
                ("special", False),
                ("lstrip", False),
                ("rstrip", False),
                ("single_word", False),
                ("normalized", not added.get("special", False)),
            )
        }
        hf_id = model_vocab.get(content)
        if hf_id is None:
            hf_id, next_id = next_id, next_id + 1
        if i != hf_id:
            raise FormatError(
                f"{where}.id: {content!r} has id {i}, but HuggingFace gives it {hf_id} (a token "
                "in the model's vocab keeps that id; the others follow the model's "
                f"{len(model_vocab)} tokens in order)"
            )
        seen[content] = i
        out.append(pl.AddedToken(content, i, **flags))
    return out


def from_json(doc, name: str = "tokenizer.json") -> TokenizerData:
    """The data of a tokenizer.json as ``jsonfile.read_tokenizer_json`` reads it (its
    model's vocab and merges as the core's tables); ``name`` is used in error messages."""
    if not isinstance(doc, dict):
        raise FormatError(f"{name}: expected a JSON object, got {type(doc).__name__}")
    model = _get(doc, "model", name, dict)
    mwhere = f"{name}: model"
    ignore_merges = _check_model(model, mwhere)
    for key in ("truncation", "padding"):
        if doc.get(key) is not None:
            raise _refuse(f"{name}: {key}", f"{key}={doc[key]!r}"[:120], "it cuts or pads the ids")
    normalizers, norm_seq = _normalizer_steps(doc.get("normalizer"), f"{name}: normalizer")
    pre, pre_seq = _pre_tokenizer(doc.get("pre_tokenizer"), f"{name}: pre_tokenizer")
    decoders, dec_seq = _decoders(doc.get("decoder"), f"{name}: decoder")

    tables = _tables(model, mwhere)
    added = _added_tokens(doc, name, tables)
    added_by_id = {t.id: t for t in added}
    extra: list[tuple[str, int]] = []
    for text, i, as_bytes in tables.at_ids(set(added_by_id)):
        # An added token that is also in the model's vocab: the model can reach it only
        # if its text is byte-level (GPT-2's <|endoftext|>); DeepSeek's
        # <｜begin▁of▁sentence｜> is not, and stays an added token only.
        tok = added_by_id[i]
        if as_bytes is not None and as_bytes != tok.content.encode("utf-8"):
            raise _refuse(
                f"{name}: added_tokens[{added.index(tok)}]",
                f"the added token {tok.content!r}, which is the model's token {text!r} "
                f"(bytes {as_bytes!r}) under another text",
                "HF then matches the text and gives the byte token's id",
            )
        if as_bytes is None:
            extra.append((text, i))
    unspelt = tables.unspelt(set(added_by_id))
    if unspelt is not None:
        to_bytes(unspelt, f"{mwhere}.vocab: a key")  # raises: a text outside the alphabet
    added_ids = {t.id for t in added}
    post, post_seq = _post_processor(
        doc.get("post_processor"),
        f"{name}: post_processor",
        lambda i: i in added_ids or (0 <= i < 2**64 and tables.has_id(i)),
    )
    _check_merges(model, mwhere, tables)
    pipeline = pl.Pipeline(
        normalizers=tuple(normalizers),
        pre_tokenizers=pre,
        post_processors=post,
        decoders=decoders,
        added_tokens=tuple(added),
        ignore_merges=ignore_merges,
        normalizer_sequence=norm_seq,
        pre_tokenizer_sequence=pre_seq,
        post_processor_sequence=post_seq,
        decoder_sequence=dec_seq,
        model_vocab_extra=tuple(extra),
    )
    core_pattern = pipeline.core_pattern()
    where = f"{name}: pre_tokenizer"
    try:
        pattern = (
            pl.WHOLE_PIECE
            if core_pattern is None
            else patterns.resolve(pattern_from_hf(core_pattern))
        )
    except PatternError as e:
        raise FormatError(f"{where}: {e}") from None
    specials = {t.content: t.id for t in added if t.special}
    # The encoder the Tokenizer asks for, built while the tables' objects are made and
    # checked (DeepSeek's load: 0.22 -> 0.20 s).
    tables.prepare_encoder(pl.core_specials(pipeline, specials), pattern, ignore_merges)
    vocab, merges = tables.tokens()
    # A pattern valid for Python's regex may still be refused by the core's engine.
    data = TokenizerData(
        vocab,
        merges,
        specials,
        pattern,
        pipeline,
        error_names=((VocabError, mwhere), (SpecialTokenError, mwhere), (PatternError, where)),
        tables=tables,
    )
    return tokenizer_data.checked(data, merges_error=_merges_vocab_error(tables))


def _merges_vocab_error(tables: _core.ModelTables) -> VocabError | None:
    """The core's check that each merge's parts and join are tokens, as ``checked_merges``
    says it."""
    error = tables.merges_vocab_error()
    return None if error is None else merge_not_in_vocab(*error)
