"""class Tokenizer: a byte-level BPE vocabulary with its merges, special tokens and pattern.

>>> from bytepair import Tokenizer
>>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"<|end|>"}
>>> tok = Tokenizer(vocab, [(b"a", b"b")], special_tokens=["<|end|>"])
>>> tok.encode("abc<|end|>", allowed_special="all")
[256, 99, 257]
>>> tok.decode([256, 99])
'abc'
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Literal

from bytepair import patterns
from bytepair.errors import SpecialTokenError, UnknownIdError, VocabError

Merge = tuple[bytes, bytes]
SpecialSet = Literal["all"] | Collection[str]


class Tokenizer:
    """A byte-level BPE tokenizer.

    ``vocab`` maps ids to token bytes. ``merges`` lists the merges in the order learned
    (earliest = highest priority); ``merges=None`` means the vocab is a rank table, as in a
    ``.tiktoken`` file, and encoding follows tiktoken's rule (merge the adjacent pair whose
    concatenation has the lowest rank). ``special_tokens`` is a list (each token keeps the id
    its bytes already have in the vocab, or takes the next free id) or a dict of token to id.
    ``pattern`` is a name (``gpt2``, ``cl100k``, ``o200k``) or a custom regex.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[Merge] | None = None,
        special_tokens: Sequence[str] | Mapping[str, int] = (),
        pattern: str = "gpt2",
    ):
        self._pattern = patterns.resolve(pattern)
        self._vocab = _checked_vocab(vocab)
        self._ranks = {b: i for i, b in self._vocab.items()}
        self._special_tokens = _checked_special_tokens(special_tokens, self._ranks, self._vocab)
        self._rank_mode = merges is None
        if merges is None:
            from bytepair.reference import merges_from_ranks

            merges = merges_from_ranks(
                {b: i for b, i in self._ranks.items() if i not in self._special_ids()}
            )
        self._merges = _checked_merges(merges, self._ranks)
        self._decoder = dict(self._vocab)
        for token, i in self._special_tokens.items():
            self._decoder[i] = token.encode("utf-8")
        self._encoder = self._build_encoder()

    def _special_ids(self) -> set[int]:
        return set(self._special_tokens.values())

    def _build_encoder(self):
        from bytepair.reference import Encoder

        regular = {i: b for i, b in self._vocab.items() if i not in self._special_ids()}
        return Encoder(
            regular, None if self._rank_mode else self._merges, self._special_tokens, self._pattern
        )

    # -- what the tokenizer is ------------------------------------------------------------

    @property
    def vocab(self) -> Mapping[int, bytes]:
        """Id to token bytes, special tokens included (read-only)."""
        return MappingProxyType(self._decoder)

    @property
    def merges(self) -> list[Merge]:
        """The merges, earliest (highest priority) first."""
        return list(self._merges)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text to id, in the order given."""
        return dict(self._special_tokens)

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex."""
        return self._pattern

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``): the embedding table's size.

        For a vocabulary trained by bytepair, ids are dense and this is the number of tokens.
        """
        return max(self._decoder) + 1

    def __repr__(self) -> str:
        name = patterns.name_of(self._pattern) or "custom"
        return (
            f"Tokenizer(vocab_size={self.vocab_size}, merges={len(self._merges)}, "
            f"special_tokens={list(self._special_tokens)!r}, pattern={name!r})"
        )

    # -- encoding ---------------------------------------------------------------------------

    def _special_policy(
        self, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ) -> tuple[frozenset[str], frozenset[str]]:
        """tiktoken's policy: allowed tokens are encoded as specials, disallowed ones raise,
        the rest are plain text. ``"all"`` on the disallowed side means all not allowed."""
        specials = frozenset(self._special_tokens)
        if allowed_special == "all":
            allowed = specials
        else:
            allowed = frozenset(allowed_special)
            unknown = allowed - specials
            if unknown:
                raise SpecialTokenError(
                    f"allowed_special names {sorted(unknown)!r}, which are not special tokens of "
                    f"this tokenizer (it has {sorted(specials)!r})"
                )
        disallowed = specials - allowed if disallowed_special == "all" else frozenset(
            disallowed_special
        )
        return allowed, disallowed

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[int]:
        """Encodes text. Special-token text raises unless allowed (tiktoken's rule).

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> tok.encode("hi")
        [104, 105]
        """
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        return self._encoder.encode(text, allowed, disallowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text, treating special-token text as plain text."""
        return self._encoder.encode_ordinary(text)

    def encode_bytes(
        self,
        data: bytes,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[int]:
        """Encodes bytes; invalid UTF-8 is kept as raw bytes, exactly as training does."""
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        return self._encoder.encode_bytes(bytes(data), allowed, disallowed)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        threads: int | None = None,
    ) -> list[list[int]]:
        """Encodes many texts; the same result as encoding each in turn."""
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        return [self._encoder.encode(t, allowed, disallowed) for t in texts]

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> Iterator[int]:
        """Encodes a stream of text (lines of a file, say) lazily, in bounded memory.

        The ids are exactly those of encoding the concatenated text: a pre-token or a special
        token cut by a chunk boundary is carried over to the next chunk.
        """
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        carry = ""
        for chunk in iterable:
            text = carry + chunk
            head, carry = self._safe_cut(text)
            if head:
                yield from self._encoder.encode(head, allowed, disallowed)
        if carry:
            yield from self._encoder.encode(carry, allowed, disallowed)

    def _safe_cut(self, text: str) -> tuple[str, str]:
        """Splits text into a head whose encoding cannot change whatever follows, and a tail
        to carry: the last pre-token (it may grow) and any partial special token."""
        from bytepair.reference import pretokenize

        # A partial special token at the end must wait for the rest of it.
        hold = 0
        for token in self._special_tokens:
            for k in range(min(len(token) - 1, len(text)), 0, -1):
                if text.endswith(token[:k]):
                    hold = max(hold, k)
                    break
        body = text[: len(text) - hold]
        pieces = pretokenize(body, self._pattern)
        if len(pieces) <= 1:
            return "", text
        cut = len(body) - len(pieces[-1])
        return text[:cut], text[cut:]

    # -- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenates the tokens' bytes.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).decode_bytes([104, 105])
        b'hi'
        """
        out = []
        decoder = self._decoder
        for i in ids:
            try:
                out.append(decoder[i])
            except (KeyError, TypeError):
                raise UnknownIdError(i, self.vocab_size) from None
        return b"".join(out)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decodes ids to text: bytes first, then UTF-8 (invalid sequences become U+FFFD)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` as strings (a token that is partial UTF-8 shows U+FFFD).

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).tokenize("hi")
        ['h', 'i']
        """
        ids = self.encode(text, allowed_special="all")
        return [self._decoder[i].decode("utf-8", errors="replace") for i in ids]

    # -- files ------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike) -> Tokenizer:
        """Loads a tokenizer, detecting the format (tokenizer.json, .tiktoken, GPT-2 files)."""
        from bytepair import formats

        return formats.load(path)

    def save(self, path: str | os.PathLike, format: str = "huggingface") -> None:
        """Saves the tokenizer atomically: ``huggingface`` (default), ``tiktoken`` or ``gpt2``
        (a directory with vocab.json and merges.txt)."""
        from bytepair import formats

        formats.save(self, path, format=format)

    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike,
        merges_path: str | os.PathLike,
        special_tokens: Sequence[str] = (),
        pattern: str = "gpt2",
    ) -> Tokenizer:
        """Loads GPT-2 style ``vocab.json`` + ``merges.txt`` (CS336's ``from_files``)."""
        from bytepair.formats import gpt2

        vocab, merges = gpt2.read(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens=special_tokens, pattern=pattern)

    @classmethod
    def from_tiktoken(cls, encoding) -> Tokenizer:
        """Builds a Tokenizer from a ``tiktoken.Encoding``; ids stay exactly tiktoken's."""
        from bytepair.formats import tiktoken as tiktoken_format

        return tiktoken_format.from_encoding(encoding)

    def to_tiktoken(self, name: str = "bytepair"):
        """A ``tiktoken.Encoding`` that encodes exactly as this tokenizer."""
        from bytepair.formats import tiktoken as tiktoken_format

        return tiktoken_format.to_encoding(self, name=name)


def _checked_vocab(vocab: Mapping[int, bytes]) -> dict[int, bytes]:
    if not isinstance(vocab, Mapping):
        raise VocabError(f"vocab must be a dict of id -> bytes, got {type(vocab).__name__}")
    if not vocab:
        raise VocabError("vocab is empty: it needs at least the 256 single bytes")
    out: dict[int, bytes] = {}
    seen: dict[bytes, int] = {}
    for i, b in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise VocabError(f"vocab id {i!r} is not a non-negative integer")
        if not isinstance(b, (bytes, bytearray)) or not b:
            raise VocabError(f"vocab id {i} maps to {b!r}; expected non-empty bytes")
        b = bytes(b)
        if b in seen:
            raise VocabError(f"vocab ids {seen[b]} and {i} both map to {b!r}; bytes must be unique")
        seen[b] = i
        out[i] = b
    missing = [x for x in range(256) if bytes([x]) not in seen]
    if missing:
        raise VocabError(
            f"vocab lacks {len(missing)} single bytes (first: {bytes([missing[0]])!r}); a "
            "byte-level BPE vocab must hold all 256 so that every input can be encoded"
        )
    return out


def _checked_special_tokens(
    special_tokens: Sequence[str] | Mapping[str, int],
    ranks: dict[bytes, int],
    vocab: dict[int, bytes],
) -> dict[str, int]:
    if isinstance(special_tokens, str):
        raise SpecialTokenError(
            f"special_tokens must be a list of strings, got the string {special_tokens!r}; "
            f"write [{special_tokens!r}]"
        )
    given = special_tokens.items() if isinstance(special_tokens, Mapping) else (
        (t, None) for t in special_tokens
    )
    out: dict[str, int] = {}
    next_id = max(vocab) + 1
    for token, i in given:
        if not isinstance(token, str) or not token:
            raise SpecialTokenError(f"special token {token!r} must be a non-empty string")
        if token in out:
            raise SpecialTokenError(f"special token {token!r} is given twice")
        if i is None:
            i = ranks.get(token.encode("utf-8"))
            if i is None:
                i, next_id = next_id, next_id + 1
        elif isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise SpecialTokenError(f"special token {token!r} has id {i!r}; expected an int >= 0")
        elif i in vocab and vocab[i] != token.encode("utf-8"):
            raise SpecialTokenError(
                f"special token {token!r} has id {i}, which the vocab gives to {vocab[i]!r}"
            )
        out[token] = i
    return out


def _checked_merges(merges: Sequence[Merge], ranks: dict[bytes, int]) -> list[Merge]:
    out = []
    for n, pair in enumerate(merges):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise VocabError(f"merge {n} is {pair!r}; expected a pair (bytes, bytes)")
        a, b = bytes(pair[0]), bytes(pair[1])
        for part in (a, b, a + b):
            if part not in ranks:
                raise VocabError(
                    f"merge {n} ({a!r}, {b!r}) needs {part!r}, which is not in the vocab"
                )
        out.append((a, b))
    return out
