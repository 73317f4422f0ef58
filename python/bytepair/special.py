"""Special tokens on the Python side: the names' checks, the ids they take in a vocab, and
tiktoken's allowed/disallowed policy. The core matches them in text (``special.rs``).

>>> with_ids(["<s>"], {i: bytes([i]) for i in range(256)})
{'<s>': 256}
>>> policy(frozenset({"<s>", "</s>"}), {"<s>"}, "all")
(frozenset({'<s>'}), frozenset({'</s>'}))
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Literal

from bytepair.errors import SpecialTokenError
from bytepair.vocab import MAX_VOCAB_SIZE

SpecialSet = Literal["all"] | Collection[str]


def checked_names(special_tokens: Sequence[str]) -> list[str]:
    """The special tokens as a list; raises SpecialTokenError for a bare string, or an
    empty, non-string or repeated token.

    >>> checked_names(("<s>", "</s>"))
    ['<s>', '</s>']
    """
    if isinstance(special_tokens, str):
        raise SpecialTokenError(
            f"special_tokens must be a list of strings, got the string {special_tokens!r}; "
            f"write [{special_tokens!r}]"
        )
    tokens = list(special_tokens)
    seen: set[str] = set()
    for token in tokens:
        _check_name(token, seen)
        seen.add(token)
    return tokens


def _check_name(token: object, seen: Collection[str]) -> None:
    if not isinstance(token, str) or not token:
        raise SpecialTokenError(f"special token {token!r} must be a non-empty string")
    if token in seen:
        raise SpecialTokenError(f"special token {token!r} is given twice; give it once")
    try:
        token.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate: a token is matched by its UTF-8 bytes
        raise SpecialTokenError(
            f"special token {token!r} holds the lone surrogate {token[e.start]!r}, which has "
            "no UTF-8 bytes; use text that is valid Unicode"
        ) from None


def checked(special_tokens: Sequence[str] | Mapping[str, int] | None) -> dict[str, int | None]:
    """The special tokens as a dict of token to id (None for the tokens of a list, which
    ``with_ids`` numbers), checked as far as they can be without a vocab: SpecialTokenError
    for what ``checked_names`` refuses, an id that is no int the core takes, or one id
    given to two tokens.

    >>> checked(["<s>"]), checked({"<s>": 5})
    ({'<s>': None}, {'<s>': 5})
    """
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        return {token: None for token in checked_names(special_tokens)}
    out: dict[str, int | None] = {}
    for token, i in special_tokens.items():
        _check_name(token, out)
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < MAX_VOCAB_SIZE:
            raise SpecialTokenError(
                f"special token {token!r} has id {i!r}; expected an int >= 0 and below "
                f"{MAX_VOCAB_SIZE:,} (2**26)"
            )
        out[token] = i
    # One token an id: decoding could not tell two apart. (A tiktoken encoding that names
    # an id twice keeps both names: formats.tiktoken.from_encoding.)
    refuse_shared_ids(out, "give each special token its own id")
    return out


def shared_ids(special_tokens: Mapping[str, int]) -> dict[int, list[str]]:
    """The ids that several special tokens have, each with its tokens in order (tiktoken's
    o200k_harmony gives 200018 to ``<|endofprompt|>`` and ``<|reserved_200018|>``).

    >>> shared_ids({"<a>": 300, "<b>": 301, "<c>": 300})
    {300: ['<a>', '<c>']}
    """
    tokens: dict[int, list[str]] = {}
    for token, i in special_tokens.items():
        tokens.setdefault(i, []).append(token)
    return {i: names for i, names in tokens.items() if len(names) > 1}


def refuse_shared_ids(special_tokens: Sequence[str] | Mapping[str, int] | None, fix: str) -> None:
    """SpecialTokenError naming two special tokens that have one id, and ``fix``, what to do
    instead; nothing for a list (its tokens take ids later) or None."""
    shared = shared_ids(special_tokens) if isinstance(special_tokens, Mapping) else {}
    if shared:
        i, names = next(iter(shared.items()))
        raise SpecialTokenError(
            f"special tokens {names[0]!r} and {names[1]!r} both have id {i}; {fix}"
        )


def with_ids(
    special_tokens: Sequence[str] | Mapping[str, int] | None, vocab: Mapping[int, bytes]
) -> dict[str, int]:
    """Each special token's id (``checked``): a dict's own (checked against ``vocab``), or
    for a list the id its bytes already have in ``vocab``, else the next free id."""
    ranks = None  # bytes -> id, made only for a token without an id (a dict has them all)
    out: dict[str, int] = {}
    next_id = max(vocab) + 1
    for token, i in checked(special_tokens).items():
        if i is None:
            if ranks is None:
                ranks = {b: i for i, b in vocab.items()}
            i = ranks.get(token.encode("utf-8"))
            if i is None:
                i, next_id = next_id, next_id + 1
        elif i in vocab and vocab[i] != token.encode("utf-8"):
            raise SpecialTokenError(
                f"special token {token!r} has id {i}, which the vocab gives to {vocab[i]!r}"
            )
        out[token] = i
    return out


def policy(
    specials: frozenset[str], allowed_special: SpecialSet, disallowed_special: SpecialSet
) -> tuple[frozenset[str], frozenset[str]]:
    """tiktoken's policy as the (allowed, disallowed) sets: allowed tokens are encoded as
    specials, disallowed ones raise, the rest are plain text. ``"all"`` on the allowed
    side is every special token; on the disallowed side, every one not allowed (the
    default, with nothing allowed). ``None`` is no token, as tiktoken reads a
    ``disallowed_special=None``. Each side names special tokens of ``specials``: a typo
    would otherwise turn the check off silently.

    >>> policy(frozenset({"<s>"}), None, None)
    (frozenset(), frozenset())
    """
    allowed = (
        specials
        if allowed_special == "all"
        else _named(specials, allowed_special, "allowed_special")
    )
    disallowed = (
        specials - allowed
        if disallowed_special == "all"
        else _named(specials, disallowed_special, "disallowed_special")
    )
    return allowed, disallowed


def _named(specials: frozenset[str], tokens: object, argument: str) -> frozenset[str]:
    """The special tokens one side of the policy names, or the error of a bare string, of
    what is no collection, or of names that are no special tokens."""
    if tokens is None:
        return frozenset()
    example = repr(next(iter(sorted(specials)), "<|endoftext|>"))
    if isinstance(tokens, str):
        example = repr(tokens) if tokens in specials else example
        raise SpecialTokenError(
            f"{argument}={tokens!r} is a string; pass a set of special tokens, e.g. "
            f"{{{example}}}, or 'all'"
        )
    try:
        named = frozenset(tokens)
    except TypeError:
        raise TypeError(
            f"{argument} must be a set of special tokens or 'all', got {type(tokens).__name__}"
        ) from None
    unknown = named - specials
    if unknown:
        shown = sorted(specials)
        listed = repr(shown) if len(shown) <= 10 else f"{len(shown)}, such as {shown[:10]!r}"
        raise SpecialTokenError(
            f"{argument} names {sorted(unknown, key=repr)!r}, which are not special tokens of "
            f"this tokenizer (it has {listed})"
        )
    return named
