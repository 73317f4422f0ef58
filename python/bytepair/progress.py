"""A one-line progress bar on stderr, shown only when stderr is a terminal.

>>> import io
>>> out = io.StringIO()
>>> with Bar("counting", total=2_000_000, unit="B", stream=out) as bar:
...     bar.update(1_000_000)
>>> "counting:  50%" in out.getvalue()
True
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def wanted(progress: bool) -> bool:
    """Progress bars are drawn only when asked for and stderr is a terminal (not a log)."""
    return bool(progress) and sys.stderr.isatty()


class Bar:
    """Redraws ``desc: pct done/total rate`` in place, at most every 0.1 s.

    ``unit="B"`` shows megabytes; any other unit is shown as a plain count.
    ``update(done)`` takes the absolute amount done, which is what the core reports.
    """

    def __init__(
        self,
        desc: str,
        total: int | None = None,
        unit: str = "B",
        stream: TextIO | None = None,
        enabled: bool = True,
    ):
        self.desc, self.total, self.unit = desc, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.start = time.perf_counter()
        self.done = 0
        self._last_draw = 0.0
        self._drawn = False

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __call__(self, done: int, total: int | None = None) -> None:
        """The callback shape the core calls: ``(done, total)``."""
        self.update(done, total)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.perf_counter()
        if self.enabled and (now - self._last_draw >= 0.1 or not self._drawn):
            self._last_draw = now
            self._draw(now)

    def close(self) -> None:
        if self.enabled and self._drawn:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()

    def _amount(self, n: float) -> str:
        return f"{n / 1e6:.1f}" if self.unit == "B" else f"{n:,.0f}"

    def _draw(self, now: float) -> None:
        elapsed = max(now - self.start, 1e-9)
        unit = "MB" if self.unit == "B" else self.unit
        parts = [f"{self.desc}:"]
        if self.total:
            parts.append(f"{100 * self.done / self.total:3.0f}%")
            parts.append(f"{self._amount(self.done)}/{self._amount(self.total)} {unit}")
        else:
            parts.append(f"{self._amount(self.done)} {unit}")
        parts.append(f"{self._amount(self.done / elapsed)} {unit}/s, {elapsed:.1f} s")
        self.stream.write("\r" + " ".join(parts) + "\x1b[K")
        self.stream.flush()
        self._drawn = True
