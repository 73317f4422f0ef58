"""SuperBPE (Liu et al. 2025, arXiv 2503.13423): tokens that may span words.

Training runs in two stages over the same corpus. Stage 1 is plain BPE with the usual
pattern until the vocab holds ``transition`` tokens (the 256 bytes and the merges).
Stage 2 starts from those merges and goes on with a pattern that no longer splits at
whitespace, only around numbers, so the later merges join words into superwords
(``" of the"``, ``", and"``). The ids are DESIGN's layout: bytes, the merges of both
stages in order, then the special tokens. The tokenizer encodes with the stage-2
pattern, as HF ``tokenizers`` does with the saved ``tokenizer.json``.

>>> import bytepair
>>> text = ["the cat sat on the mat, and the cat sat on the hat"] * 5
>>> tok = bytepair.train(text, vocab_size=278, superword_transition=266, progress=False)
>>> [tok.decode([i]) for i in range(266, 269)]  # stage 2's first merges join words
[' the ', ' sat on', ' sat on the ']
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from bytepair import patterns

#: The paper's stage-2 pre-tokenization: numbers in groups of three from the right (as
#: its stage 1 keeps them), everything else, spaces and newlines included, in one piece
#: (the pattern named ``superword``).
SUPERWORD_PATTERN = patterns.SUPERWORD


def checked(
    transition: object, vocab_size: int, special_tokens: Sequence[str], compat: str, base
) -> int:
    """The transition point, validated against the other options."""
    if isinstance(transition, bool) or not isinstance(transition, int):
        raise TypeError(f"superword_transition must be an int, got {transition!r}")
    top = vocab_size - len(special_tokens)
    if not 256 <= transition <= top:
        raise ValueError(
            f"superword_transition={transition} must be between 256 (no subword merges) and "
            f"{top} (vocab_size minus the special tokens): it is the vocab size, bytes and "
            f"merges, where stage 2 starts"
        )
    if compat != "cs336" or base is not None:
        raise ValueError(
            "superword_transition trains with compat='cs336' and no base: stage 2 extends "
            "stage 1 itself"
        )
    return transition


def reusable(files_or_texts):
    """The corpus in a form both stages can read: paths as they are, texts as a list."""
    if isinstance(files_or_texts, (str, bytes, os.PathLike, Sequence)):
        return files_or_texts
    return list(files_or_texts)
