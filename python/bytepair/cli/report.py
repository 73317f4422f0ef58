"""Plain-text reports on a tokenizer: what ``bytepair inspect`` and ``bytepair train`` print.

>>> import bytepair
>>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"th", 257: b"the"}
>>> tok = bytepair.Tokenizer(vocab, [(b"t", b"h"), (b"th", b"e")])
>>> longest_tokens(tok, 1)
[(257, b'the')]
>>> length_histogram(tok)
{1: 256, 2: 1, 3: 1}
>>> bytes_per_token(tok, b"the the")
2.3333333333333335
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from bytepair import patterns
from bytepair.cli import unicode_scripts
from bytepair.token_text import token_repr
from bytepair.tokenizer import Tokenizer


def regular_tokens(tok: Tokenizer) -> dict[int, bytes]:
    """Id to bytes for every token that is not a special token."""
    special = set(tok.special_tokens.values())
    return {i: b for i, b in tok.vocab.items() if i not in special}


def longest_tokens(tok: Tokenizer, n: int = 10) -> list[tuple[int, bytes]]:
    """The ``n`` longest regular tokens by byte length (ties: the later id first, the rarer)."""
    items = sorted(regular_tokens(tok).items(), key=lambda kv: (len(kv[1]), kv[0]), reverse=True)
    return items[:n]


def length_histogram(tok: Tokenizer) -> dict[int, int]:
    """Byte length to the number of regular tokens that long."""
    return dict(sorted(Counter(len(b) for b in regular_tokens(tok).values()).items()))


def bytes_per_token(tok: Tokenizer, data: bytes) -> float:
    """Compression on ``data``: bytes in over tokens out (higher is better). Special-token
    text in the data counts as special tokens (as in training data)."""
    if not data:
        return 0.0
    return len(data) / max(1, len(tok.encode_bytes(data, allowed_special="all")))


def bar(count: int, largest: int, width: int = 40) -> str:
    """A text bar of ``count`` scaled so that ``largest`` fills ``width``."""
    if largest <= 0 or count <= 0:
        return ""
    return "#" * max(1, round(width * count / largest))


def _table(rows: Mapping[str, int], total: int) -> list[str]:
    largest = max(rows.values(), default=0)
    width = max((len(k) for k in rows), default=0)
    return [
        f"  {k:<{width}}  {v:>7,}  {100 * v / total:5.1f}%  {bar(v, largest)}"
        for k, v in rows.items()
    ]


def inspect_report(tok: Tokenizer, n: int = 10) -> str:
    """Everything ``bytepair inspect`` prints, as one string."""
    regular = regular_tokens(tok)
    merges = tok.merges
    lines = [
        f"vocab size      {tok.vocab_size:,} ({len(regular):,} regular tokens, "
        f"{len(tok.special_tokens)} special)",
        f"merges          {len(merges):,}",
        f"pattern         {_pattern_line(tok)}",
        "special tokens  " + _specials_line(tok.special_tokens),
        *_pipeline_lines(tok),
        "",
        f"first {min(n, len(merges))} merges:",
    ]
    lines += [f"  {k:>6}  {token_repr(a)} + {token_repr(b)}" for k, (a, b) in enumerate(merges[:n])]
    start = max(n, len(merges) - n)
    lines.append(f"last {len(merges) - start} merges:")
    lines += [
        f"  {k:>6}  {token_repr(a)} + {token_repr(b)}"
        for k, (a, b) in enumerate(merges[start:], start)
    ]
    lines.append(f"longest {n} tokens:")
    lines += [f"  {i:>6}  {len(b):>3} bytes  {token_repr(b)}" for i, b in longest_tokens(tok, n)]
    histogram = length_histogram(tok)
    # Lengths past 16 bytes are rare and would make a long tail of one-token rows.
    folded: Counter[str] = Counter()
    for length, count in histogram.items():
        folded[str(length) if length < 16 else "16+"] += count
    lines.append("token length (bytes):")
    lines += _table(dict(folded), len(regular))
    lines.append("tokens by script (approximated from Unicode names; see unicode_scripts.py):")
    scripts = unicode_scripts.coverage(regular.values())
    lines += _table(dict(scripts.most_common()), len(regular))
    return "\n".join(lines)


def _pattern_line(tok: Tokenizer) -> str:
    pipeline = getattr(tok, "pipeline", None)
    if pipeline is not None and pipeline.core_pattern() is None:
        return "(the pre-tokenizer steps below, applied in order)"
    return patterns.name_of(tok.pattern) or tok.pattern


def _specials_line(specials: dict[str, int], shown: int = 12) -> str:
    items = [f"{t!r}={i}" for t, i in specials.items()]
    if len(items) > shown:
        items = [*items[:shown], f"... {len(items) - shown} more"]
    return ", ".join(items) or "(none)"


def _pipeline_lines(tok: Tokenizer) -> list[str]:
    """A loaded tokenizer.json's stages: normalizer, pre-tokenizer steps, template, and the
    added tokens with their flags."""
    pipeline = getattr(tok, "pipeline", None)
    if pipeline is None:
        return []
    lines = [f"{stage:<15} {text}" for stage, text in pipeline.describe()]
    added = pipeline.added_tokens
    if added:
        flagged = [
            f"{t.content!r}={t.id} "
            + "+".join(
                f
                for f, on in (
                    ("special", t.special),
                    ("normalized", t.normalized),
                    ("lstrip", t.lstrip),
                    ("rstrip", t.rstrip),
                    ("single_word", t.single_word),
                )
                if on
            )
            for t in added
        ]
        special = sum(t.special for t in added)
        shown = flagged if len(flagged) <= 12 else [*flagged[:12], f"... {len(flagged) - 12} more"]
        lines.append(f"added tokens    {len(added)} ({special} special): " + ", ".join(shown))
    return lines
