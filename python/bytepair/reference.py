"""Byte-level BPE in plain Python: the algorithm, readable, and the oracle for the fast paths.

Training turns a corpus into a list of merges, in five steps:

1. Read bytes. Invalid UTF-8 is kept: ``surrogateescape`` turns each bad byte into a lone
   surrogate (a punctuation-class character for the regex) and back into the same byte.
2. Cut the text at the special tokens, which are never counted and never merged.
3. Pre-tokenize each segment (the text between special tokens) with a regex (GPT-2's by
   default) and count each distinct pre-token: merges never cross a pre-token boundary,
   so a pre-token that occurs a million times is processed once, with weight one million.
4. Repeatedly merge the most frequent adjacent pair of symbols everywhere, updating the
   pair counts incrementally (only the pre-tokens containing the pair are touched).
5. Give each new token the next id.

>>> merges = train_from_counts(count_pretokens(b"low lower lowest"), 2)
>>> merges  # (o, w) and (l, o) both occur 3 times: the tie goes to the greater pair
[(b'o', b'w'), (b'l', b'ow')]
>>> vocab = build_vocab(merges, ["<|endoftext|>"])
>>> vocab[256], vocab[257], vocab[258]
(b'ow', b'low', b'<|endoftext|>')
>>> enc = Encoder(vocab, merges, {"<|endoftext|>": 258}, "gpt2")
>>> enc.encode("lowly<|endoftext|>", allowed_special="all")
[257, 108, 121, 258]
>>> enc.decode([257, 108, 121, 258])
'lowly<|endoftext|>'

Encoding repeats the training merges inside each pre-token, earliest-learned first.

Character classes (``\\p{L}``, ``\\p{N}``, ``\\s``) come from the installed ``regex`` module.
The Rust splitters, like tiktoken's fancy-regex, use Unicode 16; ``regex`` 2025.10 and
later use Unicode 17, where for instance U+323B0 (CJK Extension J) became a letter, so
text with characters new in Unicode 17 pre-tokenizes differently here. The tests pin
``regex<2025.10`` (pyproject's ``dev`` extra).
"""

from __future__ import annotations

import heapq
import math
import os
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

import regex

from bytepair import patterns
from bytepair.errors import (
    CorpusError,
    DisallowedSpecialError,
    SpecialTokenError,
    TrainingWarning,
    UnknownIdError,
    VocabError,
    VocabSizeError,
)

Pair = tuple[bytes, bytes]

# ---------------------------------------------------------------------------------------
# Pre-tokenization
# ---------------------------------------------------------------------------------------


class _Splits:
    """Isolated splits in turn, each cutting every piece of the one before into its matches
    and the text between them (DeepSeek's pre-tokenizer)."""

    def __init__(self, splits: tuple[str, ...]):
        self.splits = [regex.compile(s) for s in splits]

    def findall(self, text: str) -> list[str]:
        pieces = [text]
        for split in self.splits:
            cut = []
            for piece in pieces:
                at = 0
                for m in split.finditer(piece):
                    cut += [piece[at : m.start()], m.group()] if m.start() > at else [m.group()]
                    at = m.end()
                if at < len(piece):
                    cut.append(piece[at:])
            pieces = cut
        return pieces


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> regex.Pattern | _Splits:
    """Compiles a pattern name or regex, once per pattern."""
    resolved = patterns.resolve(pattern)
    if resolved == patterns.DEEPSEEK:
        return _Splits(patterns.DEEPSEEK_SPLITS)
    return regex.compile(resolved)


def pretokenize(text: str, pattern: str = "gpt2") -> list[str]:
    """Cuts text into pre-tokens, the units BPE merges inside.

    >>> pretokenize("Hello, world!  It's 2024")
    ['Hello', ',', ' world', '!', ' ', ' It', "'s", ' 2024']
    >>> pretokenize("价格1234元 ok", "deepseek")
    ['价格', '123', '4', '元', ' ok']
    """
    return _compiled(pattern).findall(text)


@lru_cache(maxsize=64)
def _special_regex(special_tokens: tuple[str, ...]) -> regex.Pattern:
    if any(not isinstance(token, str) or not token for token in special_tokens):
        # An empty token would match everywhere, cutting the text into characters.
        raise SpecialTokenError(
            f"special tokens must be non-empty strings, got {list(special_tokens)!r}"
        )
    # Longest first: at a given position the regex takes the first alternative that
    # matches, so `<|a|><|b|>` must be tried before `<|a|>`.
    alternatives = sorted(special_tokens, key=len, reverse=True)
    return regex.compile("|".join(regex.escape(token) for token in alternatives))


def split_on_special(text: str, special_tokens: Sequence[str]) -> list[tuple[str, bool]]:
    """Cuts text at special tokens (leftmost match, longest at a position) into
    ``(text, is_special)`` pairs, segments and special tokens in order; empty segments
    are dropped.

    >>> split_on_special("a<|x|><|x|>b", ["<|x|>"])
    [('a', False), ('<|x|>', True), ('<|x|>', True), ('b', False)]
    """
    if not special_tokens:
        return [(text, False)] if text else []
    parts = []
    start = 0
    for match in _special_regex(tuple(special_tokens)).finditer(text):
        if match.start() > start:
            parts.append((text[start : match.start()], False))
        parts.append((match.group(), True))
        start = match.end()
    if start < len(text):
        parts.append((text[start:], False))
    return parts


# ---------------------------------------------------------------------------------------
# Counting pre-tokens
# ---------------------------------------------------------------------------------------


def count_pretokens(
    data: bytes, pattern: str = "gpt2", special_tokens: Sequence[str] = ()
) -> Counter[bytes]:
    """Counts the pre-tokens of a corpus, as bytes. Special tokens are not counted.

    >>> count_pretokens(b"the cat<|endoftext|>the\\xff", special_tokens=["<|endoftext|>"])
    Counter({b'the': 2, b' cat': 1, b'\\xff': 1})
    """
    # surrogateescape maps each invalid byte to a lone surrogate and back, so no byte of
    # the corpus is ever lost or replaced.
    text = data.decode("utf-8", errors="surrogateescape")
    counts: Counter[str] = Counter()
    for segment, is_special in split_on_special(text, special_tokens):
        if not is_special:
            counts.update(pretokenize(segment, pattern))
    # Count the str pre-tokens first, then encode each distinct one once: most repeat.
    out: Counter[bytes] = Counter()
    for token, n in counts.items():
        out[token.encode("utf-8", errors="surrogateescape")] += n
    return out


# ---------------------------------------------------------------------------------------
# Training: the merge loop
# ---------------------------------------------------------------------------------------


class _Greatest:
    """A heap key that makes heapq (a min-heap) pop the greatest pair first."""

    __slots__ = ("pair",)

    def __init__(self, pair: Pair):
        self.pair = pair

    def __lt__(self, other: _Greatest) -> bool:
        return self.pair > other.pair


#: The training rules each ``compat`` mode names; see train_from_counts.
COMPAT = ("cs336", "huggingface", "rustbpe")


def huggingface_byte_order() -> list[int]:
    """The bytes in the order of HuggingFace's ids for them: its ``ByteLevel`` alphabet
    (each byte as one character: printable Latin-1 as itself, the others as U+0100 + n),
    which ``BpeTrainer`` sorts by code point.

    >>> order = huggingface_byte_order()
    >>> order[:3], order[94], order[-1]
    ([33, 34, 35], 161, 173)
    """
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    return printable + [b for b in range(256) if b not in printable]


Start = tuple[dict[int, bytes], Callable[[bytes], list[int]]]


def train_from_counts(
    counts: Mapping[bytes, int],
    num_merges: int,
    min_frequency: int = 1,
    compat: str = "cs336",
    base: Start | None = None,
    max_token_length: int | None = None,
) -> list[Pair]:
    """Learns up to num_merges merges from pre-token counts.

    Each step merges the adjacent pair with the highest count. ``compat`` names the rules
    for the rest:

    - ``"cs336"``: ties go to the greater ``(left, right)`` as Python compares tuples of
      bytes; a merge whose bytes already exist yields that token.
    - ``"huggingface"`` (``BpeTrainer``): ties go to the smaller ``(id(left), id(right))``,
      the bytes' ids in ``huggingface_byte_order()`` and each new token the next id; a
      merge whose bytes exist yields that token, and num_merges counts new tokens (HF
      fills its vocab). With ``max_token_length`` a pair counts only if both parts are
      single bytes or their lengths sum to less than it.
    - ``"rustbpe"``: ties go to the smaller pair of ids, bytes first (id = byte value);
      every merge is a new token, even with the bytes of an existing one.

    ``base=(vocab, encode)`` extends a tokenizer: its regular tokens by id, and a function
    giving the ids it encodes a pre-token to. Each pre-token starts as that encoding, the
    ids break ties in the id modes, and new tokens take ids after the largest.

    >>> train_from_counts({b"abab": 3, b"ba": 1}, 3)
    [(b'a', b'b'), (b'ab', b'ab'), (b'b', b'a')]
    >>> train_from_counts({b"ab": 2, b"ba": 2}, 1, compat="rustbpe")  # ids 97, 98 < 98, 97
    [(b'a', b'b')]
    """
    if compat not in COMPAT:
        raise ValueError(f"compat must be one of {', '.join(COMPAT)}; got {compat!r}")
    # Symbols are ids; tokens[id] is a symbol's bytes.
    if base is not None:
        tokens, encode = dict(base[0]), base[1]
    else:
        order = huggingface_byte_order() if compat == "huggingface" else range(256)
        tokens = {i: bytes([b]) for i, b in enumerate(order)}
        ids_of_bytes = {bytes([b]): i for i, b in enumerate(order)}

        def encode(pretoken: bytes) -> list[int]:
            return [ids_of_bytes[pretoken[i : i + 1]] for i in range(len(pretoken))]

    reuse = compat != "rustbpe"
    known = {b: i for i, b in tokens.items()}
    pretokens = [encode(pretoken) for pretoken in counts]
    weights = list(counts.values())
    first_new = next_id = max(tokens) + 1

    def made() -> int:
        return next_id - first_new if compat == "huggingface" else len(merges)

    def counted(pair: tuple[int, int]) -> bool:
        if max_token_length is None:
            return True
        a, b = len(tokens[pair[0]]), len(tokens[pair[1]])
        return a == b == 1 or a + b < max_token_length

    def key(pair: tuple[int, int]):
        # The heap pops the smallest key first: the greatest bytes, or the smallest ids.
        return _Greatest((tokens[pair[0]], tokens[pair[1]])) if compat == "cs336" else pair

    # Step 1: count every adjacent pair, and remember which pre-tokens contain it.
    pair_counts: dict[tuple[int, int], int] = {}
    pair_pretokens: dict[tuple[int, int], set[int]] = {}
    for index, pretoken in enumerate(pretokens):
        for pair in filter(counted, pairwise(pretoken)):
            pair_counts[pair] = pair_counts.get(pair, 0) + weights[index]
            pair_pretokens.setdefault(pair, set()).add(index)

    # Step 2: a lazy heap of (-count, key, pair). Entries go stale as counts change; a
    # popped entry is used only if its count is still the current one. After each merge
    # we push the new count of every pair that changed, so every live pair has an entry.
    heap = [(-n, key(pair), pair) for pair, n in pair_counts.items()]
    heapq.heapify(heap)

    # Step 3: merge the best pair everywhere, until num_merges or no pair is frequent enough.
    merges: list[Pair] = []
    while made() < num_merges:
        pair = _pop_best(heap, pair_counts, min_frequency)
        if pair is None:
            break
        merged = tokens[pair[0]] + tokens[pair[1]]
        merges.append((tokens[pair[0]], tokens[pair[1]]))
        new = known.get(merged) if reuse else None
        if new is None:
            new, next_id = next_id, next_id + 1
            tokens[new] = merged
            known.setdefault(merged, new)
        changed = _merge_everywhere(
            pair, new, pretokens, weights, pair_counts, pair_pretokens, counted
        )
        for p in changed:
            if p in pair_counts:  # (a count that fell to 0 needs no entry)
                heapq.heappush(heap, (-pair_counts[p], key(p), p))

    if made() < num_merges:
        warnings.warn(
            f"training stopped after {made()} of {num_merges} merges: no pair of "
            f"tokens occurs at least min_frequency={min_frequency} times; the vocab is "
            f"smaller than asked (lower min_frequency or use a larger corpus)",
            TrainingWarning,
            stacklevel=2,
        )
    return merges


def _pop_best(heap: list, pair_counts: dict, min_frequency: int):
    """The current most frequent pair, or None when none has count >= min_frequency."""
    while heap:
        negative_count, _, pair = heapq.heappop(heap)
        if pair_counts.get(pair) != -negative_count:
            continue  # stale: the pair's count changed after this entry was pushed
        if -negative_count < min_frequency:
            return None
        return pair
    return None


def _merge_everywhere(pair, new, pretokens, weights, pair_counts, pair_pretokens, counted) -> list:
    """Merges pair into symbol new in every pre-token that contains it; returns the pairs
    whose count changed.

    For each touched pre-token we subtract its old pairs and add its new ones: simpler than
    patching the neighbours of each occurrence (think of "a a a a"), and still only the
    pre-tokens that contain the pair are visited. Summing the changes first means a pair that
    the merge leaves alone (most of them) costs no dict or heap update.
    """
    delta: dict = {}
    for index in pair_pretokens.pop(pair):
        old = pretokens[index]
        merged = _merge_pretoken(old, pair, new)
        pretokens[index] = merged
        weight = weights[index]
        for p in filter(counted, pairwise(old)):
            delta[p] = delta.get(p, 0) - weight
        for p in filter(counted, pairwise(merged)):
            delta[p] = delta.get(p, 0) + weight
        # Keep pair_pretokens exact: this pre-token no longer holds the pairs the merge destroyed.
        new_pairs = set(pairwise(merged))
        for p in set(pairwise(old)) - new_pairs - {pair}:
            pair_pretokens.get(p, set()).discard(index)
        for p in filter(counted, new_pairs):
            pair_pretokens.setdefault(p, set()).add(index)

    changed = []
    for p, d in delta.items():
        if d:
            n = pair_counts.get(p, 0) + d
            if n:
                pair_counts[p] = n
            else:
                del pair_counts[p]
            changed.append(p)
    return changed


def _merge_pretoken(pretoken: list[int], pair: tuple[int, int], new: int) -> list[int]:
    """Replaces each occurrence of pair, left to right, by new.

    >>> _merge_pretoken([97, 97, 97], (97, 97), 256)
    [256, 97]
    """
    merged = []
    i = 0
    while i < len(pretoken):
        if i + 1 < len(pretoken) and pretoken[i] == pair[0] and pretoken[i + 1] == pair[1]:
            merged.append(new)
            i += 2
        else:
            merged.append(pretoken[i])
            i += 1
    return merged


def build_vocab(merges: Sequence[Pair], special_tokens: Sequence[str] = ()) -> dict[int, bytes]:
    """Ids 0..255 are the bytes; each merge with new bytes takes the next id; then the
    special tokens, in order.

    >>> merges = [(b"b", b"c"), (b"a", b"bc"), (b"a", b"b"), (b"ab", b"c")]
    >>> vocab = build_vocab(merges, ["<s>"])
    >>> [vocab[i] for i in range(256, len(vocab))]  # ab+c rebuilds abc: no new id
    [b'bc', b'abc', b'ab', b'<s>']
    """
    vocab = {i: bytes([i]) for i in range(256)}
    known = set(vocab.values())
    for left, right in merges:
        token = left + right
        if token not in known:  # DESIGN rule 6: rebuilt bytes reuse the existing id
            vocab[len(vocab)] = token
            known.add(token)
    for token in special_tokens:
        encoded = token.encode("utf-8")
        if encoded in known:
            raise SpecialTokenError(
                f"special token {token!r} has the same bytes as a regular token; bytes in "
                f"the vocab must be unique, so pick a longer text such as '<|{token}|>'"
            )
        vocab[len(vocab)] = encoded
        known.add(encoded)
    return vocab


def train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 1,
) -> tuple[dict[int, bytes], list[Pair]]:
    """Trains a byte-level BPE on a file: CS336's ``train_bpe``.

    ``vocab_size`` counts the 256 bytes, the merges and the special tokens.
    """
    special_tokens, num_merges = checked_options(vocab_size, special_tokens, pattern)
    with open(checked_corpus_path(input_path), "rb") as f:
        counts = count_pretokens(f.read(), pattern, special_tokens)
    merges = train_from_counts(counts, num_merges, min_frequency)
    return build_vocab(merges, special_tokens), merges


def checked_options(
    vocab_size: int, special_tokens: Sequence[str], pattern: str
) -> tuple[list[str], int]:
    """train_bpe's checks, before any counting: the special tokens as a list and the
    number of merges that ``vocab_size`` leaves room for.

    >>> checked_options(300, ["<s>"], "gpt2")
    (['<s>'], 43)
    """
    special_tokens = _checked_special_tokens(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise VocabSizeError(f"vocab_size must be an int, got {vocab_size!r}")
    num_merges = vocab_size - 256 - len(special_tokens)
    if num_merges < 0:
        raise VocabSizeError(
            f"vocab_size={vocab_size} is too small: it must hold the 256 single bytes and "
            f"the {len(special_tokens)} special tokens, so at least "
            f"{256 + len(special_tokens)}"
        )
    # Text that matches a special token is cut out before counting, so no merge can make
    # a special token's bytes: only a one-byte special token collides, and fails here.
    build_vocab([], special_tokens)
    _compiled(pattern)  # a bad pattern fails even on an empty file
    return special_tokens, num_merges


def _checked_special_tokens(special_tokens: Sequence[str]) -> list[str]:
    """The special tokens as a list; raises SpecialTokenError for empty or repeated ones."""
    if isinstance(special_tokens, str):
        raise SpecialTokenError(
            f"special_tokens must be a list of strings, got the string {special_tokens!r}; "
            f"write [{special_tokens!r}]"
        )
    tokens = list(special_tokens)
    for n, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise SpecialTokenError(f"special token {token!r} must be a non-empty string")
        if token in tokens[:n]:
            raise SpecialTokenError(f"special token {token!r} is given twice; give it once")
    return tokens


def checked_corpus_path(path: str | os.PathLike) -> str:
    """The path as a str; CorpusError if it names a directory or nothing."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise CorpusError(f"corpus {path!r} is a directory; pass the files inside it")
    if not os.path.exists(path):
        raise CorpusError(f"corpus file {path!r} does not exist")
    return path


# ---------------------------------------------------------------------------------------
# From a rank table (tiktoken) back to merges
# ---------------------------------------------------------------------------------------


def merges_from_ranks(ranks: Mapping[bytes, int]) -> list[Pair]:
    """The merge that creates each multi-byte token of a tiktoken-style rank table.

    tiktoken merges the adjacent pair whose concatenation has the lowest rank. Run that on
    a token's bytes, short of making the token itself: it ends in the two parts the token
    is made of, whatever their ranks (an extended vocab can build a token from a later
    one). Merges come in the order of their tokens' ranks. A token for which it does not
    end in exactly two parts is never made by merging, so it has no merge and is skipped
    (a token added by hand, say); a pre-token equal to it is still that token.

    >>> merges_from_ranks({b"a": 0, b"b": 1, b"abb": 2, b"ab": 3})
    [(b'ab', b'b'), (b'a', b'b')]
    """
    merges = []
    for token, _ in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue

        def priority(left: bytes, right: bytes, token: bytes = token) -> float:
            joined = left + right
            return math.inf if joined == token else ranks.get(joined, math.inf)

        parts = _bpe(token, priority)
        if len(parts) == 2:
            merges.append((parts[0], parts[1]))
    return merges


def _bpe(pretoken: bytes, priority: Callable[[bytes, bytes], float]) -> list[bytes]:
    """Merges adjacent parts of pretoken, lowest priority value first (leftmost on ties),
    until no adjacent pair has a finite priority.

    ``priorities[i]`` belongs to the pair (parts[i], parts[i + 1]); after a merge only
    its two neighbours change, so each step costs one C-speed min() over a list.
    """
    parts = [pretoken[i : i + 1] for i in range(len(pretoken))]
    priorities = [priority(a, b) for a, b in pairwise(parts)]
    while priorities:
        best = min(priorities)
        if best == math.inf:
            break
        i = priorities.index(best)  # the leftmost of equal priorities
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        del priorities[i]
        if i > 0:
            priorities[i - 1] = priority(parts[i - 1], parts[i])
        if i < len(parts) - 1:
            priorities[i] = priority(parts[i], parts[i + 1])
    return parts


# ---------------------------------------------------------------------------------------
# Encoding and decoding
# ---------------------------------------------------------------------------------------


class Encoder:
    """Encodes text with a vocab and its merges (GPT-2's rule) or with a rank table.

    ``vocab`` maps ids to bytes; ids are arbitrary (GPT-2 does not give byte b the id b).
    With ``merges``, each pre-token is split into bytes and the adjacent pair that was
    merged earliest is merged, again and again. With ``merges=None`` the vocab is a rank
    table (tiktoken): a pre-token that is in the vocab is that token, any other has the
    adjacent pair whose concatenation has the lowest id merged, again and again.
    Both merge one pair at a time, leftmost on ties. ``special_tokens`` maps each special
    token to its id (it need not be in ``vocab``).
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[Pair] | None,
        special_tokens: Mapping[str, int],
        pattern: str,
    ):
        self.pattern = pattern
        self.special_tokens = dict(special_tokens)
        special_ids = set(self.special_tokens.values())
        # Special tokens are never reached by merging, even if their bytes are in vocab.
        self._ids = {b: i for i, b in vocab.items() if i not in special_ids}
        missing = [b for b in range(256) if bytes([b]) not in self._ids]
        if missing:
            raise VocabError(
                f"vocab lacks {len(missing)} of the 256 single bytes (first: "
                f"{bytes([missing[0]])!r}); a byte-level BPE vocab needs all of them"
            )
        self._decoder = dict(vocab)
        for token, i in self.special_tokens.items():
            self._decoder[i] = token.encode("utf-8")
        self._vocab_size = max(self._decoder) + 1

        self._rank_mode = merges is None
        if merges is None:
            self._priority = self._rank_priority
        else:
            self._merge_rank: dict[Pair, int] = {}
            for n, (left, right) in enumerate(merges):
                if left + right not in self._ids:
                    raise VocabError(
                        f"merge {n} ({left!r}, {right!r}) makes {left + right!r}, which is "
                        f"not in the vocab"
                    )
                self._merge_rank.setdefault((left, right), n)  # a repeat keeps the first
            self._priority = self._merge_priority
        self._cache: dict[bytes, list[int]] = {}
        self._cache_limit = 100_000  # pre-tokens; then start afresh, so memory stays bounded
        _compiled(pattern)  # a bad pattern fails now, not at the first encode

    def _merge_priority(self, left: bytes, right: bytes) -> float:
        return self._merge_rank.get((left, right), math.inf)

    def _rank_priority(self, left: bytes, right: bytes) -> float:
        return self._ids.get(left + right, math.inf)

    def _encode_piece(self, pretoken: bytes) -> list[int]:
        """The ids of one pre-token; cached, since most pre-tokens repeat."""
        ids = self._cache.get(pretoken)
        if ids is None and self._rank_mode and pretoken in self._ids:
            # tiktoken's rule: a pre-token that is itself a token is that token, even if
            # merging would not reach it (Llama 3's rank table has such tokens).
            ids = [self._ids[pretoken]]
        if ids is None:
            ids = [self._ids[part] for part in _bpe(pretoken, self._priority)]
            if len(self._cache) >= self._cache_limit:
                self._cache.clear()
            self._cache[pretoken] = ids
        return ids

    def _encode_plain(self, text: str) -> list[int]:
        ids = []
        for token in pretokenize(text, self.pattern):
            # surrogateescape: lone surrogates here came from invalid bytes (encode_bytes)
            ids.extend(self._encode_piece(token.encode("utf-8", errors="surrogateescape")))
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text with no special-token handling at all."""
        return self._encode_plain(_without_lone_surrogates(text))

    def encode(
        self,
        text: str,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[int]:
        """Encodes text; allowed special tokens become their ids (tiktoken's policy).

        Special-token text that is disallowed (by default: every special token not
        allowed) raises DisallowedSpecialError; ``disallowed_special=()`` encodes it as
        plain text.
        """
        return self._encode_text(
            _without_lone_surrogates(text), allowed_special, disallowed_special
        )

    def encode_bytes(
        self,
        data: bytes,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = (),
    ) -> list[int]:
        """Encodes bytes, keeping invalid UTF-8 exactly as training does."""
        return self._encode_text(
            data.decode("utf-8", errors="surrogateescape"), allowed_special, disallowed_special
        )

    def _encode_text(self, text: str, allowed_special, disallowed_special) -> list[int]:
        allowed = set(self.special_tokens) if allowed_special == "all" else set(allowed_special)
        unknown = allowed - set(self.special_tokens)
        if unknown:
            raise SpecialTokenError(
                f"allowed_special names {sorted(unknown)!r}, which are not special tokens "
                f"(these are: {sorted(self.special_tokens)!r})"
            )
        if disallowed_special == "all":
            disallowed = set(self.special_tokens) - allowed
        else:
            disallowed = set(disallowed_special)
        if disallowed:
            match = _special_regex(tuple(sorted(disallowed))).search(text)
            if match:
                raise DisallowedSpecialError(match.group())

        ids = []
        for part, is_special in split_on_special(text, sorted(allowed)):
            if is_special:
                ids.append(self.special_tokens[part])
            else:
                ids.extend(self._encode_plain(part))
        return ids

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenates the bytes of the tokens."""
        out = []
        for i in ids:
            try:
                out.append(self._decoder[i])
            except (KeyError, TypeError):  # TypeError: an unhashable "id"
                raise UnknownIdError(i, self._vocab_size) from None
        return b"".join(out)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decodes ids to text: bytes first, then UTF-8 (a token may hold part of a
        character, so decoding token by token would be wrong)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)


def _without_lone_surrogates(text: str) -> str:
    """text with each lone surrogate replaced by U+FFFD, exactly as tiktoken does.

    A str can hold surrogates, which UTF-8 cannot encode. tiktoken round-trips such text
    through UTF-16, which also joins a correctly ordered surrogate pair into its character.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
