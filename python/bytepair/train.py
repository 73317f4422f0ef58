"""train(), train_bpe(): placeholder over bytepair.reference until the Rust core lands."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence

from bytepair import reference
from bytepair.tokenizer import Tokenizer


def train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 1,
    progress: bool = False,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    return reference.train_bpe(
        input_path, vocab_size, special_tokens, pattern=pattern, min_frequency=min_frequency
    )


def train(
    corpus: Iterable[str | os.PathLike] | str,
    vocab_size: int = 32_000,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 1,
    threads: int | None = None,
    progress: bool = True,
) -> Tokenizer:
    items = list(corpus)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "corpus.txt")
        with open(path, "wb") as f:
            for item in items:
                if isinstance(item, str) and not os.path.exists(item):
                    f.write(item.encode("utf-8", "surrogateescape"))
                else:
                    with open(item, "rb") as g:
                        f.write(g.read())
        vocab, merges = train_bpe(path, vocab_size, special_tokens, pattern, min_frequency)
    return Tokenizer(vocab, merges, special_tokens=list(special_tokens), pattern=pattern)
