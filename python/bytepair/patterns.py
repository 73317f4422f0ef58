"""Named pre-tokenization patterns: tiktoken's exact regexes, SuperBPE's stage-2 regex, and a
marker for DeepSeek's three Splits, which are not one regex.

>>> resolve("gpt2") == GPT2
True
>>> resolve(r"\\w+|\\W")
'\\\\w+|\\\\W'
"""

from __future__ import annotations

import re

import regex

from bytepair.errors import PatternError

#: GPT-2's pattern as tiktoken ships it for ``gpt2``, ``r50k_base`` and ``p50k_base``.
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

#: ``cl100k_base``'s pattern.
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

#: ``o200k_base``'s pattern.
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: Llama 3's pattern, as Meta's tokenizer.py has it.
LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Qwen's pattern (Qwen, Qwen2, Qwen2.5, Qwen3): Llama 3's with single digits.
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")

#: Qwen3.5's pattern: marks (``\p{M}``) among the letters.
QWEN3_5 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Mistral's Tekken pattern: o200k's without the contractions, with single digits.
TEKKEN = O200K.replace(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?", "").replace(r"\p{N}{1,3}", r"\p{N}")

#: DeepSeek's pre-tokenizer, as its models' tokenizer.json has it: three isolated Splits, each
#: splitting every piece of the one before.
DEEPSEEK_SPLITS = (
    r"\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)

#: The pattern string of ``DEEPSEEK_SPLITS``: a marker, not a regex (Python's ``regex``,
#: fancy-regex and Oniguruma all refuse ``(?d``), so that no regex path takes it for one; only
#: the core's hand-written splitter runs it.
DEEPSEEK = "(?deepseek)"

#: SuperBPE's stage-2 pattern (``bytepair.superbpe``): numbers in groups of three from the
#: right, everything else, spaces and newlines included, in one piece. The core runs it, by
#: this name or spelled out exactly (as ``tokenizer.json`` saves it), with a hand-written
#: splitter; written any other way it is a custom regex.
SUPERWORD = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|[^\p{N}]+"

#: Pattern names and the regex each stands for.
PATTERNS: dict[str, str] = {
    "gpt2": GPT2,
    "r50k": GPT2,
    "r50k_base": GPT2,
    "p50k": GPT2,
    "p50k_base": GPT2,
    "cl100k": CL100K,
    "cl100k_base": CL100K,
    "o200k": O200K,
    "o200k_base": O200K,
    "llama3": LLAMA3,
    "qwen2": QWEN2,
    "qwen3.5": QWEN3_5,
    "tekken": TEKKEN,
    "deepseek": DEEPSEEK,
    "superword": SUPERWORD,
}

#: The names `name_of` gives back and error messages list.
NAMES = (
    "gpt2",
    "cl100k",
    "o200k",
    "llama3",
    "qwen2",
    "qwen3.5",
    "tekken",
    "deepseek",
    "superword",
)

_LOOKS_LIKE_A_NAME = re.compile(r"[a-z][a-z0-9_]*")


def resolve(pattern: str) -> str:
    """Returns the regex for a pattern name, or checks and returns a custom regex.

    A lowercase identifier that is not a known name is an error rather than a regex that
    matches itself literally: ``"gtp2"`` is a typo far more often than a pattern.
    """
    if not isinstance(pattern, str):
        raise PatternError(
            f"pattern must be a str (a name or a regex), got {type(pattern).__name__}"
        )
    if pattern in PATTERNS:
        return PATTERNS[pattern]
    if pattern == DEEPSEEK:  # the marker spelled out, which no regex engine compiles
        return pattern
    if _LOOKS_LIKE_A_NAME.fullmatch(pattern):
        names = ", ".join(NAMES)
        raise PatternError(
            f"unknown pattern name {pattern!r}: use one of {names}, or a regex "
            f"(to match the literal text, write (?:{pattern}))"
        )
    if pattern == "":
        raise PatternError(f"pattern is empty: use a name ({', '.join(NAMES)}) or a regex")
    try:
        regex.compile(pattern)
    except regex.error as e:
        raise PatternError(f"invalid pattern regex {pattern!r}: {e}") from None
    return pattern


def name_of(pattern_regex: str) -> str | None:
    """The canonical name of a built-in regex (one of ``NAMES``), else None."""
    for name in NAMES:
        if PATTERNS[name] == pattern_regex:
            return name
    return None
