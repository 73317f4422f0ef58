"""``compat=``: train exactly as another trainer does. This module turns a mode into the
core's arguments and the trained merges into that trainer's ids;
``reference.train_from_counts`` spells out each mode's rules in plain Python.

- ``"cs336"`` (default): ties go to the greater bytes; ids are the bytes, the merges,
  then the special tokens (DESIGN).
- ``"huggingface"``: ``tokenizers``' ``BpeTrainer`` with a ``Split(pattern, "isolated")`` +
  ``ByteLevel(add_prefix_space=False, use_regex=False)`` pre-tokenizer and
  ``initial_alphabet=ByteLevel.alphabet()``: special tokens take ids 0.., the 256 bytes the
  next ids in HF's alphabet order, then the new tokens; HF counts special-token text in
  the corpus as ordinary text, and so does this mode. ``Tokenizer.train(files)`` reads a
  text file line by line, each line (``\n`` kept) a text of its own, so a pre-token never
  spans two lines; this mode reads text files so too (texts given in memory, JSON Lines
  records and Parquet rows are each one text, as with ``train_from_iterator``).
- ``"rustbpe"``: ``rustbpe.Tokenizer.train_from_iterator``: ids 0-255 the bytes, then one
  new id per merge.

Both peers count pairs in 32-bit signed integers; bytepair counts in 64 bits, so past
2^31 occurrences of one pair (corpora of many GB) the peers' counts wrap and bytepair's
do not. HF's heap entries carry the pre-tokens they cover: when a merge rebuilds an existing
token (rare: none in 31,741 merges on 12 MB of the multilingual corpus), a pair beside it
can be queued twice with different pre-tokens, and HF may then merge that pair in two steps;
bytepair merges it everywhere in one.

>>> core_rules("rustbpe", None)
{'ties': 'ids', 'reuse': False, 'count_tokens': False, 'max_token_length': None}
"""

from __future__ import annotations

from collections.abc import Sequence

from bytepair.errors import VocabError
from bytepair.formats.gpt2 import BYTE_TO_CHAR

Merge = tuple[bytes, bytes]

#: The modes ``compat=`` accepts.
COMPAT = ("cs336", "huggingface", "rustbpe")


def huggingface_byte_order() -> list[int]:
    """The bytes in the order of HuggingFace's ids for them: ``BpeTrainer`` sorts the
    ``ByteLevel`` alphabet (GPT-2's byte-to-character table) by code point.

    >>> order = huggingface_byte_order()
    >>> order[:3], order[94], order[-1]
    ([33, 34, 35], 161, 173)
    """
    return sorted(range(256), key=BYTE_TO_CHAR.__getitem__)


def checked(compat: object, max_token_length: object) -> str:
    """The mode, or a ValueError naming the choices; max_token_length is HF's option."""
    if compat not in COMPAT:
        raise ValueError(f"compat must be one of {', '.join(map(repr, COMPAT))}; got {compat!r}")
    if max_token_length is not None:
        if compat != "huggingface":
            raise ValueError(
                f"max_token_length is HuggingFace BpeTrainer's option; it needs "
                f"compat='huggingface', got compat={compat!r}"
            )
        if (
            isinstance(max_token_length, bool)
            or not isinstance(max_token_length, int)
            or max_token_length < 1
        ):
            raise ValueError(f"max_token_length must be an int >= 1, got {max_token_length!r}")
    return compat  # type: ignore[return-value]


def core_rules(compat: str, max_token_length: int | None) -> dict:
    """Keyword arguments of ``_core.train_merges`` for a mode."""
    return {
        "ties": "bytes" if compat == "cs336" else "ids",
        "reuse": compat != "rustbpe",
        "count_tokens": compat == "huggingface",
        "max_token_length": max_token_length,
    }


def reads_lines(compat: str) -> bool:
    """Whether a text file is counted line by line (HF's ``Tokenizer.train(files)``)."""
    return compat == "huggingface"


def cuts_special_tokens(compat: str) -> bool:
    """Whether special-token text is cut out of the corpus before counting (HF counts it)."""
    return compat != "huggingface"


def huggingface_start(special_tokens: Sequence[str]) -> dict[int, bytes]:
    """HF's first ids: the special tokens, then the 256 bytes in its alphabet order.

    A special token of printable ASCII is also what HF's ByteLevel makes of its bytes, so a
    merge that rebuilds those bytes yields the special token's id, as in HF; any other
    special token only reserves its id.

    >>> start = huggingface_start(["<s>"])
    >>> start[0], start[1], start[256]
    (b'<s>', b'!', b'\\xad')
    """
    start = {
        i: token.encode()
        for i, token in enumerate(special_tokens)
        if all(33 <= ord(c) < 127 for c in token)
    }
    n = len(special_tokens)
    start.update({n + i: bytes([b]) for i, b in enumerate(huggingface_byte_order())})
    return start


def new_ids(
    compat: str, start: dict[int, bytes], merges: Sequence[Merge], first_id: int
) -> dict[int, bytes]:
    """The ids of the tokens the merges make, from first_id on: a merge whose bytes exist
    yields that token, except in rustbpe, where it would be a second id for the same bytes,
    which a vocab cannot hold (a tiktoken rank table keys ranks by bytes)."""
    known = {b: i for i, b in start.items()}
    out: dict[int, bytes] = {}
    for n, (left, right) in enumerate(merges):
        token = left + right
        if token in known:
            if compat == "rustbpe":
                raise VocabError(
                    f"merge {n} ({left!r}, {right!r}) rebuilds {token!r}, which already has "
                    f"id {known[token]}: rustbpe would give these bytes a second id, which "
                    f"no vocab (and no tiktoken file) can hold. Train with a vocab_size of "
                    f"at most {first_id + n}, or with compat='cs336' or 'huggingface', "
                    f"which reuse the id"
                )
            continue
        known[token] = out_id = first_id + len(out)
        out[out_id] = token
    return out
