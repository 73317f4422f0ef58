"""Random inputs for the differential fuzz tests (test_train, test_encode,
test_formats_damaged): text and bytes biased toward what the patterns and the merge loop
treat specially, the small tokenizers they encode with, and the outcome they compare.
`make fuzz` runs every `test_fuzz_*` with the `fuzz` hypothesis profile; docs/fuzzing.md
says how to reproduce a failure."""

from __future__ import annotations

import unicodedata
import warnings
from functools import cache

import bytepair
from bytepair.errors import DisallowedSpecialError, SpecialTokenError, TrainingWarning
from conftest import corpus_sample
from hypothesis import strategies as st

PATTERNS = ("gpt2", "cl100k", "o200k")
SPECIALS = ["<|endoftext|>", "<|a|>", "<|a", "|>", "ab", "\xff", "é"]


# Text biased toward what the patterns and the merge loop treat specially: contractions,
# digits, runs of spaces and newlines, non-Latin scripts, and special-token fragments.
pieces = st.one_of(
    st.sampled_from(
        [
            "a",
            "b",
            "ab",
            "ba",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\t",
            "'s",
            "'LL",
            "12",
            "3456",
            "é",
            "中文",
            "ß",
            ".",
            "!?",
            "<|a|>",
            "<|endoftext|>",
            "<|",
            "|>",
            "\u00a0",
            "🙂",
            "\u0301",
        ]
    ),
    # Code points this Python's Unicode (unicodedata) leaves unassigned are left out: the
    # regex module and the core's tables may be newer and disagree on them (U+12550: N in
    # one, unassigned in the other). Lone surrogates (Cs) stay in.
    st.text(st.characters(exclude_categories=["Cn"]), max_size=4),
)


texts = st.lists(pieces, max_size=40).map("".join)


raw_bytes = st.lists(
    st.one_of(
        pieces.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(min_size=1, max_size=3)
    ),
    max_size=40,
).map(b"".join)


def assigned(data: bytes) -> bool:
    """No code point that is unassigned in this Python's Unicode (see `pieces`)."""
    return all(unicodedata.category(c) != "Cn" for c in data.decode("utf-8", "ignore"))


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        return f(*args, **kwargs)


def outcome(f, *args, **kwargs):
    """(kind, value): the result, or the error class and whether it names a token."""
    try:
        return "ok", quiet(f, *args, **kwargs)
    except (SpecialTokenError, DisallowedSpecialError) as e:
        return type(e).__name__, None


@cache
def tokenizers() -> dict[str, bytepair.Tokenizer]:
    """One small tokenizer per pattern, trained on a little of two corpora (with bad bytes),
    with special tokens that overlap and are prefixes of each other."""
    data = corpus_sample("en-prose", 30_000) + b"\xff\xfe\x80 " + corpus_sample("zh-prose", 10_000)
    specials = ["<|endoftext|>", "<|a|>", "<|a"]
    return {
        p: quiet(
            bytepair.train,
            [data],
            vocab_size=700,
            special_tokens=specials,
            pattern=p,
            progress=False,
        )
        for p in PATTERNS
    }
