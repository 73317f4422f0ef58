"""bytepair's one progress bar: tqdm's, with a bar, a rate and an ETA, on stderr.

Every long job (counting, sampling, merging, ``encode_file``, the Ray engine, the tests'
reference counter) draws through ``Bar``, so they all look alike and obey the same rule
(``shown``): ``progress=None`` (the default) draws a bar when stderr is a terminal, not
into a log file; ``True`` always (a notebook's stderr is no terminal); ``False`` never.

>>> import io
>>> out = io.StringIO()
>>> with Bar("counting", total=2_000_000, unit="B", stream=out) as bar:
...     bar.update(1_000_000)
>>> "counting:  50%" in out.getvalue()
True
"""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from tqdm import tqdm


class _Tqdm(tqdm):
    # No monitor thread (tqdm's default starts one per process): a bar must not leave a
    # thread running after its job, nor through Ctrl-C.
    monitor_interval = 0


#: Redraw at most every 0.1 s: smooth to the eye, and at ~30 µs a redraw under 0.1% of
#: a job's time.
MIN_INTERVAL = 0.1


def shown(progress: bool | None) -> bool:
    """Whether a job's ``progress`` argument draws a bar: None only when stderr is a
    terminal, True always (into a log or a notebook too), False never.

    >>> shown(True), shown(False)
    (True, False)
    """
    return sys.stderr.isatty() if progress is None else bool(progress)


class Bar:
    """``desc: pct|bar| done/total [elapsed<eta, rate]``, redrawn in place.

    ``unit="B"`` shows bytes with SI prefixes (kB, MB, GB); any other unit a plain count.
    ``update(done)`` takes the absolute amount done, which is what the core reports; a
    ``Bar`` is also the ``(done, total)`` callback the core calls. ``enabled=False`` draws
    nothing and costs one attribute store per update.
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
        self.enabled = enabled
        self.done = 0
        self._bar: _Tqdm | None = None
        if enabled:
            # The terminal's size when the bar starts; one that reports 0 x 0 (a pty under
            # `script`, some IDE consoles) gets 100 x 24: tqdm would hide the bar there.
            size = shutil.get_terminal_size((100, 24))
            self._bar = _Tqdm(
                desc=desc,
                total=total or None,
                unit=unit,
                unit_scale=unit == "B",
                unit_divisor=1000,
                file=stream if stream is not None else sys.stderr,
                mininterval=MIN_INTERVAL,
                ncols=size.columns,
                nrows=size.lines,
            )

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __call__(self, done: int, total: int | None = None) -> None:
        """The callback shape the core calls: ``(done, total)``."""
        self.update(done, total)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if self._bar is None:
            return
        if total is not None and total != self.total:
            self.total = total
            self._bar.total = total or None
        self._bar.update(done - self._bar.n)

    def note(self, text: str) -> None:
        """A short remark drawn after the figures (``3 of 8 chunks from checkpoints``)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
