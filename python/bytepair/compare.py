"""Tokenizers side by side: bytes/token on each corpus and shared vocabulary, as tables and
a bar chart. What ``bytepair compare`` prints.

>>> import bytepair
>>> base = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
>>> print(bytes_per_token_table(measure({"bytes": base}, {"en": b"hello"})))
corpus  bytes
en       1.00
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from bytepair.corpus_files import open_corpus
from bytepair.errors import BytepairError
from bytepair.report import bytes_per_token, regular_tokens
from bytepair.tokenizer import Tokenizer


def read_corpus(path: str | os.PathLike, max_bytes: int | None) -> bytes:
    """The first ``max_bytes`` of a corpus (``.xz``, ``.gz``, ``.bz2`` are decompressed),
    cut back to a whole line so that the last word is not cut in two."""
    with open_corpus(path) as f:
        data = f.read() if max_bytes is None else f.read(max_bytes)
    if max_bytes is not None and len(data) == max_bytes:
        cut = data.rfind(b"\n")
        if cut > 0:
            data = data[: cut + 1]
    return data


def measure(
    tokenizers: Mapping[str, Tokenizer], corpora: Mapping[str, bytes]
) -> dict[str, dict[str, float]]:
    """corpus name -> tokenizer name -> bytes/token."""
    return {
        c: {t: bytes_per_token(tok, data) for t, tok in tokenizers.items()}
        for c, data in corpora.items()
    }


def _grid(corner: str, rows: list[str], columns: list[str], cell) -> str:
    cells = [[corner, *columns]] + [[r, *(cell(r, c) for c in columns)] for r in rows]
    widths = [max(len(row[k]) for row in cells) for k in range(len(columns) + 1)]
    lines = []
    for row in cells:
        first = row[0].ljust(widths[0])
        rest = (v.rjust(w) for v, w in zip(row[1:], widths[1:], strict=True))
        lines.append("  ".join([first, *rest]).rstrip())
    return "\n".join(lines)


def bytes_per_token_table(table: Mapping[str, Mapping[str, float]]) -> str:
    """:func:`measure`'s result as text: one row per corpus, one column per tokenizer."""
    columns = list(next(iter(table.values()))) if table else []
    return _grid("corpus", list(table), columns, lambda r, c: f"{table[r][c]:.2f}")


def overlap_table(tokenizers: Mapping[str, Tokenizer]) -> str:
    """Shared regular tokens (by bytes) between each pair, and that as a percentage of the
    row tokenizer's vocabulary.

    >>> import bytepair
    >>> a = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    >>> b = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
    >>> print(overlap_table({"a": a, "b": b}))
    shared           a           b
    a       256 100.0%  256 100.0%
    b       256  99.6%  257 100.0%
    """
    sets = {name: set(regular_tokens(tok).values()) for name, tok in tokenizers.items()}
    names = list(tokenizers)

    def cell(r: str, c: str) -> str:
        shared = len(sets[r] & sets[c])
        return f"{shared:,} {100 * shared / max(1, len(sets[r])):5.1f}%"

    return _grid("shared", names, names, cell)


def check_plotting() -> None:
    """Raises a clear error when matplotlib (the ``plot`` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise BytepairError(
            "--plot needs matplotlib, which is not installed: pip install 'bytepair[plot]'"
        ) from None


def plot(
    table: Mapping[str, Mapping[str, float]],
    path: str | os.PathLike,
    panel: Callable[[Any], None] | None = None,
) -> None:
    """A grouped bar chart of bytes/token (one group per corpus, one bar per tokenizer);
    ``panel`` draws a second plot beside it on the axes it is given (``--audit``'s Zipf
    plot, ``bytepair.zipf.panel``)."""
    check_plotting()
    import matplotlib

    matplotlib.use("Agg")  # no display needed: we only write a file
    import matplotlib.pyplot as plt

    corpora = list(table)
    names = list(next(iter(table.values()))) if table else []
    width = 0.8 / max(1, len(names))
    width_in = max(6, 1.5 * len(corpora) * max(1, len(names)) ** 0.5)
    if panel is None:
        fig, ax = plt.subplots(figsize=(width_in, 4))
    else:
        fig, (ax, right) = plt.subplots(1, 2, figsize=(width_in + 6, 4.5))
        panel(right)
    for k, name in enumerate(names):
        xs = [c + (k - (len(names) - 1) / 2) * width for c in range(len(corpora))]
        ax.bar(xs, [table[c][name] for c in corpora], width, label=name)
    ax.set_xticks(range(len(corpora)), corpora)
    ax.set_ylabel("bytes per token (higher = better compression)")
    ax.set_title("bytepair compare")
    ax.legend()
    fig.tight_layout()
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}.png"
    try:
        fig.savefig(tmp, dpi=120)
        os.replace(tmp, path)  # atomic: a crash never leaves half a picture
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
