"""What a tokenizer file holds, as plain data: the readers return it, the writers take it,
and ``Tokenizer`` builds from it and hands it out (``Tokenizer.load`` / ``save``).

>>> data = TokenizerData({i: bytes([i]) for i in range(256)}, None, {"<s>": 256})
>>> data.rank_table, data.with_specials()[256]
(True, b'<s>')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bytepair import _core, patterns, special
from bytepair.errors import BytepairError, FormatError, VocabError
from bytepair.vocab import checked_merges, checked_vocab

if TYPE_CHECKING:
    from bytepair.formats.tokenizer_config import TokenizerConfig
    from bytepair.pipeline import Pipeline

Merge = tuple[bytes, bytes]


@dataclass(frozen=True)
class TokenizerData:
    """A tokenizer as a file stores it.

    ``vocab`` maps ids to token bytes (a special token's bytes only where the file's vocab
    holds them). ``merges`` is the merge list, earliest first; ``None`` means ``vocab`` is a
    rank table, encoded by tiktoken's rule. Data taken from a rank-table ``Tokenizer`` has
    both: the merges derived from the ranks, and ``rank_table=True``.
    ``special_tokens`` is a list (ids from the vocab, else the next free ones) or a dict of
    token to id. ``pipeline`` is a tokenizer.json's HuggingFace stages, ``config`` the
    tokenizer_config.json beside it.
    ``error_names`` says which file (or part of one) to name when building a Tokenizer
    from the data fails: ``(error type, name)`` pairs, first match wins; an error of no
    listed type propagates as it is.
    ``tables`` are the core's tables that ``vocab`` and ``merges`` were made from (a
    tokenizer.json's), for ``Tokenizer`` to build its encoder on without reading those
    objects back, or the encoder of a rank file's ``vocab`` being built ahead; data given
    other vocab or merges must not keep them.
    """

    vocab: Mapping[int, bytes]
    merges: Sequence[Merge] | None
    special_tokens: Sequence[str] | Mapping[str, int] | None = None
    pattern: str = "gpt2"
    pipeline: Pipeline | None = None
    config: TokenizerConfig | None = None
    rank_table: bool = False
    error_names: tuple[tuple[type[BytepairError], str], ...] = ()
    #: Set by ``checked``: the vocab is a checked dict, the special tokens a dict of ids,
    #: the merges pairs of bytes, the pattern resolved.
    is_checked: bool = False
    tables: _core.ModelTables | _core.EncoderAhead | None = field(
        default=None, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.merges is None:
            object.__setattr__(self, "rank_table", True)

    def with_specials(self) -> dict[int, bytes]:
        """Id to bytes with each special token's bytes at its id (``special_tokens`` must be
        a dict): what ``Tokenizer.vocab`` shows."""
        out = dict(self.vocab)
        for token, i in dict(self.special_tokens or {}).items():
            out[i] = token.encode("utf-8")
        return out

    def error_name(self, error: BytepairError) -> str | None:
        """The name a FormatError built from ``error`` starts with, or None."""
        return next((name for kind, name in self.error_names if isinstance(error, kind)), None)


def checked(data: TokenizerData, merges_error: VocabError | bool | None = False) -> TokenizerData:
    """``data`` with the pattern resolved, the vocab, special tokens and merges checked
    (``bytepair.vocab``, ``bytepair.special``) and the special tokens given their ids.
    An error raises as it is, or as a FormatError naming the file (``error_names``).
    A reader that checked the merges itself (tokenizer.json's, in the core) gives what it
    found as ``merges_error``: the error, raised where ``checked_merges`` would raise it,
    or None for merges that are a list of pairs of the vocab's bytes.

    >>> data = checked(TokenizerData({i: bytes([i]) for i in range(256)}, [], ["<s>"]))
    >>> data.special_tokens
    {'<s>': 256}
    """
    try:
        pattern = patterns.resolve(data.pattern)
        vocab = checked_vocab(data.vocab)
        specials = special.with_ids(data.special_tokens, vocab)
        merges = None
        if merges_error is not False:
            if merges_error is not None:
                raise merges_error
            merges = data.merges
        elif data.merges is not None:
            merges = checked_merges(data.merges, {b: i for i, b in vocab.items()})
    except BytepairError as e:
        where = data.error_name(e)
        if where is None:
            raise
        raise FormatError(f"{where}: {e}") from None
    return dataclasses.replace(
        data, vocab=vocab, merges=merges, special_tokens=specials, pattern=pattern, is_checked=True
    )


def of(source: TokenizerData | object) -> TokenizerData:
    """The data of ``source``: itself, or what its ``data`` property gives (a Tokenizer's),
    so a writer takes either.

    >>> data = TokenizerData({i: bytes([i]) for i in range(256)}, [])
    >>> of(data) is data
    True
    """
    return source if isinstance(source, TokenizerData) else source.data
