"""The Zipf plot of ``bytepair compare --audit``: how often each token occurs, by rank, on
log-log axes, with the tokens that never occur (count 0, which a log axis cannot show)
marked as a band below the curve.

>>> counts = {"bytes": {97: 3, 98: 1}}
>>> ranked(counts["bytes"])
[3, 1]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# Count 0 cannot sit on a log axis: the unused tokens are drawn as bands below the lowest
# possible count (1), the first at 0.5 and each next tokenizer's lower, so none hides another.
_UNUSED_Y = 0.5
_UNUSED_STEP = 0.7


def ranked(counts: Mapping[int, int]) -> list[int]:
    """The nonzero counts, largest first: the y values of a rank-frequency plot."""
    return sorted((n for n in counts.values() if n > 0), reverse=True)


def panel(
    counts: Mapping[str, Mapping[int, int]], unused: Mapping[str, int]
) -> Callable[[Any], None]:
    """A function that draws, on the matplotlib axes it is given, one rank-frequency curve
    per tokenizer (``counts``: tokenizer -> id -> occurrences) and, after each curve's last
    rank, a band as long as that tokenizer's ``unused`` regular tokens."""

    def draw(ax) -> None:
        lowest = _UNUSED_Y
        for k, (name, by_id) in enumerate(counts.items()):
            ys = ranked(by_id)
            (line,) = ax.plot(range(1, len(ys) + 1), ys, label=f"{name}", linewidth=1.2)
            if unused.get(name):
                start = len(ys) + 1
                lowest = _UNUSED_Y * _UNUSED_STEP**k
                ax.hlines(
                    lowest,
                    start,
                    start + unused[name] - 1,
                    colors=line.get_color(),
                    linewidth=6,
                    label=f"{name}: {unused[name]:,} unused tokens",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(bottom=lowest * _UNUSED_STEP)
        ax.set_xlabel("rank of the token by count")
        ax.set_ylabel("occurrences (unused tokens: bands below 1)")
        ax.set_title("token counts (Zipf plot)")
        ax.legend(fontsize="small")

    return draw
