"""``base=``: extend an existing tokenizer, as Llama 3's vocab extends cl100k's.

Every id, merge and special token of the base stays. Each pre-token of the new corpus
starts as the base encodes it, merging goes on under the same rules, and new tokens take
the ids after the base's largest. A rank table (a ``.tiktoken`` file, Llama 3's
``tokenizer.model``) stays a rank table, so tiktoken loads the result.

>>> import bytepair
>>> base = bytepair.train(["ab ab ab"], vocab_size=257, progress=False)
>>> tok = bytepair.train(["abc abc"], vocab_size=258, base=base, progress=False)
>>> tok.merges
[(b'a', b'b'), (b'ab', b'c')]
"""

from __future__ import annotations

import os

from bytepair.errors import VocabSizeError
from bytepair.tokenizer import Tokenizer

Merge = tuple[bytes, bytes]


def checked_base(base: object, pattern: str | None) -> Tokenizer:
    """The base as a Tokenizer (a path is loaded, in any format bytepair reads)."""
    if isinstance(base, (str, os.PathLike)):
        base = Tokenizer.load(base)
    if not isinstance(base, Tokenizer):
        raise TypeError(
            f"base must be a bytepair.Tokenizer or the path of a tokenizer file, got "
            f"{type(base).__name__}"
        )
    if pattern is not None and pattern != base.pattern and pattern not in _names_of(base):
        raise ValueError(
            f"pattern={pattern!r} differs from the base's pattern ({base.pattern!r}): an "
            f"extended tokenizer pre-tokenizes as its base does; leave pattern out"
        )
    return base


def _names_of(base: Tokenizer) -> tuple[str, ...]:
    from bytepair import patterns

    name = patterns.name_of(base.pattern)
    return (name,) if name else ()


def start(base: Tokenizer) -> tuple[list[tuple[int, bytes]], list[Merge] | None]:
    """The core's ``base=``: the base's tokens ``(id, bytes)`` and its merges (None for a
    rank table, which encodes as tiktoken does)."""
    return list(base._vocab.items()), None if base._rank_mode else list(base._merges or [])


def num_new_tokens(base: Tokenizer, vocab_size: int, special_tokens: list[str]) -> int:
    """How many tokens to learn so that the vocab has vocab_size ids."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise VocabSizeError(f"vocab_size must be an int, got {vocab_size!r}")
    new_special = [t for t in special_tokens if t not in base.special_tokens]
    least = base.vocab_size + len(new_special)
    if vocab_size < least:
        raise VocabSizeError(
            f"vocab_size={vocab_size} is smaller than the base's {base.vocab_size:,} ids"
            + (f" and {len(new_special)} new special tokens" if new_special else "")
            + f": an extended vocab keeps every id, so give at least {least}"
        )
    return vocab_size - least


def extended(
    base: Tokenizer, new_tokens: dict[int, bytes], merges: list[Merge], special_tokens: list[str]
) -> Tokenizer:
    """The base with the new tokens (ids after its largest), its merges then the new ones
    (a rank table stays one), and its special tokens then any new ones."""
    vocab = dict(base._vocab) | new_tokens
    specials = base.special_tokens
    next_id = max(max(vocab), *specials.values(), base.vocab_size - 1) + 1
    for token in special_tokens:
        if token not in specials:
            specials[token], next_id = next_id, next_id + 1
    tok = Tokenizer(
        vocab,
        None if base._rank_mode else [*base.merges, *merges],
        special_tokens=specials,
        pattern=base.pattern,
    )
    tok._config = base._config  # bos/eos/pad tokens and chat template stay the base's
    return tok
