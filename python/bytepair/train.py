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
    engine: str = "local",
    checkpoint_dir: str | os.PathLike | None = None,
) -> Tokenizer:
    if engine != "local" or checkpoint_dir is not None:
        return _train_on_engine(
            corpus,
            vocab_size,
            special_tokens,
            pattern,
            min_frequency,
            threads,
            progress,
            engine,
            checkpoint_dir,
        )
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


# ---------------------------------------------------------------------------------------
# engine="ray" (owner: ray): counting on a cluster, then the merge loop here.
# ---------------------------------------------------------------------------------------


def _train_on_engine(
    corpus,
    vocab_size,
    special_tokens,
    pattern,
    min_frequency,
    threads,
    progress,
    engine,
    checkpoint_dir,
) -> Tokenizer:
    """``engine="ray"``: see bytepair.distributed. Checkpoints need it (``engine="local"``
    counts in one process, where there is nothing to resume)."""
    if engine != "ray":
        raise ValueError(
            f"engine must be 'local' or 'ray', got {engine!r}"
            if engine != "local"
            else "checkpoint_dir needs engine='ray': the local engine has no checkpoints"
        )
    from bytepair import distributed

    return distributed.train(
        corpus,
        vocab_size,
        special_tokens,
        pattern,
        min_frequency,
        threads,
        progress,
        checkpoint_dir=checkpoint_dir,
    )


def _num_merges(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """Merges to learn for vocab_size; raises VocabSizeError/SpecialTokenError up front."""
    from bytepair.errors import VocabSizeError

    special_tokens = reference.checked_special_tokens(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise VocabSizeError(f"vocab_size must be an int, got {vocab_size!r}")
    num_merges = vocab_size - 256 - len(special_tokens)
    if num_merges < 0:
        raise VocabSizeError(
            f"vocab_size={vocab_size} is too small: it must hold the 256 single bytes and "
            f"the {len(special_tokens)} special tokens, so at least {256 + len(special_tokens)}"
        )
    return num_merges


def _tokenizer_from_counts(
    counts,
    num_merges: int,
    special_tokens: Sequence[str],
    pattern: str,
    min_frequency: int,
    progress: bool,
) -> Tokenizer:
    """The merge loop on already-counted pre-tokens (a ``_core.WordCounts``), then the
    Tokenizer: what train() does after counting."""
    import warnings

    from bytepair import _core
    from bytepair.errors import TrainingWarning

    merges = [
        (bytes(a), bytes(b)) for a, b in _core.train_merges(counts, num_merges, min_frequency)
    ]
    if len(merges) < num_merges:
        warnings.warn(
            f"training stopped after {len(merges)} of {num_merges} merges: no pair of tokens "
            f"occurs at least min_frequency={min_frequency} times; the vocab is smaller than "
            f"asked (lower min_frequency or use a larger corpus)",
            TrainingWarning,
            stacklevel=3,
        )
    vocab = reference.build_vocab(merges, special_tokens)
    return Tokenizer(vocab, merges, special_tokens=list(special_tokens), pattern=pattern)
