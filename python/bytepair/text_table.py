"""Text for reports: counts with their nouns, and tables of aligned columns, as ``bytepair
compare`` and ``inspect --audit`` print them."""

from __future__ import annotations

from collections.abc import Callable


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an s unless ``n`` is 1.

    >>> plural(2, "merge"), plural(1, "special token")
    ('2 merges', '1 special token')
    """
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def grid(corner: str, rows: list[str], columns: list[str], cell: Callable[[str, str], str]) -> str:
    """Rows by columns, ``cell(row, column)`` in each: the first column left-aligned, the
    others right-aligned, two spaces apart.

    >>> print(grid("corpus", ["en", "zh"], ["gpt2"], lambda r, c: f"{len(r) / 3:.2f}"))
    corpus  gpt2
    en      0.67
    zh      0.67
    """
    cells = [[corner, *columns]] + [[r, *(cell(r, c) for c in columns)] for r in rows]
    widths = [max(len(row[k]) for row in cells) for k in range(len(columns) + 1)]
    lines = []
    for row in cells:
        first = row[0].ljust(widths[0])
        rest = (v.rjust(w) for v, w in zip(row[1:], widths[1:], strict=True))
        lines.append("  ".join([first, *rest]).rstrip())
    return "\n".join(lines)
