"""Test data for the format tests: corpus samples as text and one small trained tokenizer."""

from __future__ import annotations

from functools import cache

import bytepair
from conftest import CORPORA, corpus_documents, corpus_sample, shared

#: Bytes per corpus sample: enough for every script and pattern branch, small enough for
#: the pure-Python reference encoder.
SAMPLE_BYTES = 50_000
SPECIAL = "<|endoftext|>"


@cache
def sample_text(name: str) -> str:
    """About ``SAMPLE_BYTES`` of 8-line documents drawn from across the corpus (not a
    prefix): the texts the format tests encode."""
    docs = corpus_documents(name, 100, 8)
    step = -(-sum(map(len, docs)) // SAMPLE_BYTES)  # every step-th: all strata, in budget
    return b"".join(docs[::step]).decode("utf-8")


def samples() -> dict[str, str]:
    return {name: sample_text(name) for name in CORPORA}


@cache
def trained() -> bytepair.Tokenizer:
    """A tokenizer trained on a slice of every corpus: vocab 600, one special token."""
    texts = [corpus_sample(name, SAMPLE_BYTES).decode("utf-8")[:8_000] for name in CORPORA]
    return bytepair.train(texts, vocab_size=600, special_tokens=[SPECIAL], progress=False)


@cache
def tiktoken_file(name: str) -> bytepair.Tokenizer:
    """tiktoken's published rank file ``name`` (r50k_base, cl100k_base, o200k_base), loaded
    once per session: deriving the merges of 100k+ ranks is the slow part."""
    return bytepair.Tokenizer.load(shared("fixtures", "tiktoken", f"{name}.tiktoken"))
