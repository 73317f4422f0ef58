"""The measures papers compare tokenizers by, on a corpus: bytes per token, fertility
(tokens per word), Rényi efficiency (Zouhar et al. 2023), the share of the vocabulary used,
and the parity of token counts across corpora that say the same thing (Petrov et al.
2023). docs/metrics.md gives each formula with an example worked by hand.

>>> import bytepair
>>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
>>> tok = bytepair.Tokenizer(vocab, [(b"a", b"b")])
>>> m = measure(tok, b"ab abab")  # "ab" | " " "ab" "ab": 4 tokens, 2 words
>>> m.tokens, m.bytes_per_token, m.fertility
(4, 1.75, 2.0)
"""

from __future__ import annotations

import io
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from bytepair.errors import CorpusError
from bytepair.progress import Bar, shown
from bytepair.text_table import grid
from bytepair.tokenizer import Tokenizer

#: Zouhar et al. 2023 find alpha = 2.5 the order that best predicts BLEU.
RENYI_ALPHA = 2.5


@dataclass(frozen=True)
class Metrics:
    """One tokenizer on one corpus. ``counts``: id -> occurrences."""

    bytes: int
    words: int
    vocab_size: int
    counts: Mapping[int, int]
    alpha: float = RENYI_ALPHA

    @property
    def tokens(self) -> int:
        """How many tokens the corpus encodes to."""
        return sum(self.counts.values())

    @property
    def bytes_per_token(self) -> float:
        """UTF-8 bytes per token (higher: fewer tokens for the same text)."""
        return self.bytes / self.tokens

    @property
    def fertility(self) -> float:
        """Tokens per whitespace-separated word (NaN for a corpus without words)."""
        return self.tokens / self.words if self.words else math.nan

    @property
    def renyi_efficiency(self) -> float:
        """Rényi entropy of order ``alpha`` of the token distribution over log |V|."""
        return renyi_efficiency(self.counts.values(), self.vocab_size, self.alpha)

    @property
    def vocab_used(self) -> float:
        """The share of the vocabulary's tokens that occur at least once."""
        return sum(1 for n in self.counts.values() if n) / self.vocab_size


#: The bytes of text handed to the encoder at a time: ids are counted as they come.
BLOCK = 1 << 20


def read_blocks(f, bar: Bar | None = None) -> Iterator[bytes]:
    """The bytes of the binary file ``f``, ``BLOCK`` at a time, each counted on ``bar``
    once it is handed on."""
    while block := f.read(BLOCK):
        yield block
        if bar is not None:
            bar.update(bar.done + len(block))


def token_counts(tok: Tokenizer, blocks: Iterable[bytes]) -> Counter[int]:
    """How often each id occurs in ``blocks`` encoded as one text, as training data
    (special tokens allowed, invalid UTF-8 kept). The ids are counted 64k at a time, so
    memory follows the vocabulary, not the text: a list of every id of a 300 MB corpus
    holds about 70M Python ints.

    >>> import bytepair
    >>> token_counts(bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []), [b"ab", b"a"])
    Counter({97: 2, 98: 1})
    """
    counts: Counter[int] = Counter()
    ids = tok.encode_iterable(blocks, allowed_special="all")
    while part := list(itertools.islice(ids, 1 << 16)):
        counts.update(part)
    return counts


def measure(
    tok: Tokenizer, data: bytes, alpha: float = RENYI_ALPHA, bar: Bar | None = None
) -> Metrics:
    """The metrics of ``tok`` on ``data``, encoded as training data (special-token text as
    special tokens, invalid UTF-8 kept as bytes, as ``bytes_per_token`` does), ``BLOCK``
    bytes at a time; ``bar`` follows them.

    >>> import bytepair
    >>> measure(bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []), b"a b").counts
    {97: 1, 32: 1, 98: 1}
    """
    if not data:
        raise CorpusError("the corpus is empty: there is nothing to measure")
    counts = token_counts(tok, read_blocks(io.BytesIO(data), bar))
    return Metrics(
        bytes=len(data),
        words=count_words(data),
        vocab_size=len(tok.vocab),
        counts=dict(counts),
        alpha=alpha,
    )


def count_words(data: bytes) -> int:
    """Words as fertility counts them: runs of text between Unicode whitespace.

    >>> count_words("a b\\u3000c\\n".encode())
    3
    """
    return len(data.decode("utf-8", "surrogateescape").split())


def renyi_efficiency(counts: Iterable[int], vocab_size: int, alpha: float = RENYI_ALPHA) -> float:
    """H_alpha(p) / log |V|, where p is the unigram distribution of the ``counts`` and
    H_alpha(p) = log(sum p_i^alpha) / (1 - alpha); alpha = 1 is Shannon's entropy.

    Two tokens seen equally often in a vocabulary of 256 carry 1 bit out of 8:

    >>> renyi_efficiency([2, 2], 256)
    0.125
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    if vocab_size < 2:
        raise ValueError(f"vocab_size must be >= 2 for log |V| > 0, got {vocab_size!r}")
    counts = [n for n in counts if n > 0]
    total = sum(counts)
    if not total:
        raise ValueError("no token occurs: the efficiency of an empty distribution is undefined")
    probs = [n / total for n in counts]
    if alpha == 1:
        entropy = -math.fsum(p * math.log2(p) for p in probs)
    else:
        entropy = math.log2(math.fsum(p**alpha for p in probs)) / (1 - alpha)
    return entropy / math.log2(vocab_size)


def parity(tokens: Mapping[str, int], reference: str) -> dict[str, float]:
    """Each corpus's token count over the reference corpus's: the corpora must say the
    same thing (translations of each other), as in Petrov et al. 2023.

    >>> parity({"en": 10, "de": 14}, "en")
    {'en': 1.0, 'de': 1.4}
    """
    if reference not in tokens:
        raise CorpusError(
            f"the reference corpus {reference!r} is not among the corpora {sorted(tokens)!r}"
        )
    return {name: n / tokens[reference] for name, n in tokens.items()}


def compare(
    tokenizers: Mapping[str, Tokenizer],
    corpora: Mapping[str, bytes],
    alpha: float = RENYI_ALPHA,
    progress: bool | None = False,
) -> dict[str, dict[str, Metrics]]:
    """corpus name -> tokenizer name -> :class:`Metrics` (what ``bytepair compare`` shows);
    ``progress`` draws a bar for each corpus and tokenizer (None: when stderr is a terminal).

    >>> import bytepair
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    >>> compare({"bytes": tok}, {"en": b"abab"})["en"]["bytes"].renyi_efficiency
    0.125
    """
    for name, data in corpora.items():
        if not data:
            raise CorpusError(f"corpus {name!r} is empty: there is nothing to measure")
    show = shown(progress)
    results: dict[str, dict[str, Metrics]] = {}
    for c, data in corpora.items():
        results[c] = {}
        for t, tok in tokenizers.items():
            with Bar(f"{c}, {t}", len(data), unit="B", enabled=show) as bar:
                results[c][t] = measure(tok, data, alpha, bar)
    return results


_COLUMNS = {
    "tokens": lambda m: f"{m.tokens:,}",
    "bytes/token": lambda m: f"{m.bytes_per_token:.2f}",
    "tokens/word": lambda m: "n/a" if math.isnan(m.fertility) else f"{m.fertility:.2f}",
    "Rényi eff.": lambda m: f"{m.renyi_efficiency:.4f}",
    "vocab used": lambda m: f"{100 * m.vocab_used:.2f}%",
}


def table(results: Mapping[str, Mapping[str, Metrics]]) -> str:
    """:func:`compare`'s result as text: per corpus, one row per tokenizer.

    >>> import bytepair
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    >>> print(table(compare({"bytes": tok}, {"en": b"abab"})))
    on en (4 bytes, 1 word):
    tokenizer  tokens  bytes/token  tokens/word  Rényi eff.  vocab used
    bytes           4         1.00         4.00      0.1250       0.78%
    """
    blocks = []
    for corpus, row in results.items():
        first = next(iter(row.values()))
        words = f"{first.words:,} word" + ("" if first.words == 1 else "s")
        title = f"on {corpus} ({first.bytes:,} bytes, {words}):"
        body = grid(
            "tokenizer", list(row), list(_COLUMNS), lambda t, c, row=row: _COLUMNS[c](row[t])
        )
        blocks.append(f"{title}\n{body}")
    return "\n\n".join(blocks)


def parity_table(results: Mapping[str, Mapping[str, Metrics]], reference: str) -> str:
    """Each tokenizer's :func:`parity` on every corpus, relative to ``reference``.

    >>> import bytepair
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    >>> print(parity_table(compare({"bytes": tok}, {"en": b"ab", "de": b"abc"}), "en"))
    tokenizer    en    de
    bytes      1.00  1.50
    """
    corpora = list(results)
    names = list(next(iter(results.values()))) if results else []
    ratios = {t: parity({c: results[c][t].tokens for c in corpora}, reference) for t in names}
    return grid("tokenizer", names, corpora, lambda t, c: f"{ratios[t][c]:.2f}")
