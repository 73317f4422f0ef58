"""What a training run cost and what it trained on: ``tok.training_report`` after
``bytepair.train``, also logged at INFO on the ``bytepair`` logger.

>>> import bytepair
>>> tok = bytepair.train(["ab|ab|ab"], 257, document_separator="|", sample_documents=2,
...                      progress=False)
>>> tok.training_report.documents, tok.training_report.documents_in_corpus
(2, 3)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class TrainingReport:
    """``seconds`` of wall time; ``peak_memory_mb``, the peak resident memory of the
    process while it trained (``PeakMemory``; None where the OS does not say: Windows);
    ``documents`` trained on and ``documents_in_corpus`` (both None unless documents were
    cut: ``sample_documents`` or ``document_separator``). ``peak_memory_of`` is
    ``"training"``, or ``"process"`` where only the process's peak so far is known (not
    Linux, or a /proc that refuses the reset): it may then be from before training."""

    seconds: float
    peak_memory_mb: float | None
    documents: int | None = None
    documents_in_corpus: int | None = None
    peak_memory_of: str = "training"

    def __str__(self) -> str:
        """One line for a log.

        >>> str(TrainingReport(1.5, 120.0, 2, 3))
        'trained in 1.50 s, peak memory 120 MB, on 2 of 3 documents (a random sample)'
        >>> str(TrainingReport(1.5, 440.0, peak_memory_of="process"))
        "trained in 1.50 s, peak memory 440 MB (the process's, since it started)"
        """
        memory = "n/a" if self.peak_memory_mb is None else f"{self.peak_memory_mb:,.0f} MB"
        if self.peak_memory_mb is not None and self.peak_memory_of == "process":
            memory += " (the process's, since it started)"
        line = f"trained in {self.seconds:.2f} s, peak memory {memory}"
        if self.documents is not None:
            line += f", on {documents_line(self.documents, self.documents_in_corpus)}"
        return line


def documents_line(used: int, in_corpus: int | None) -> str:
    """``22,000 of 2,119,719 documents (a random sample)``, or ``all 3 documents``.

    >>> documents_line(3, 3), documents_line(1, 1)
    ('all 3 documents', 'the only document')
    """
    if in_corpus is None or used >= in_corpus:
        return "the only document" if used == 1 else f"all {used:,} documents"
    return f"{used:,} of {in_corpus:,} documents (a random sample)"


def peak_memory_mb() -> float | None:
    """Peak resident memory of this process and its finished children, in MB (Unix).

    >>> peak_memory_mb() > 0
    True
    """
    try:
        import resource
    except ImportError:  # Windows
        return None
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KB on Linux
    peak = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    return peak * scale / 1e6


class PeakMemory:
    """The peak resident memory of the work from ``PeakMemory()`` to ``mb()``.

    On Linux the process's peak (VmHWM) is reset to its current size when the work starts
    (``/proc/self/clear_refs``), so the peak read at the end is the work's, not that of
    whatever the process held and freed before. This moves VmHWM for every later reader
    too: one that wants the process's whole peak reads it before. Where the reset is
    refused, the work's peak is known only when it rose above the peak before it; else,
    and off Linux (ru_maxrss), ``of_process`` is True: the figure is the process's.

    >>> peak = PeakMemory()
    >>> peak.mb() > 0
    True
    """

    def __init__(self) -> None:
        self._before = _vm_hwm_mb()
        self.of_process = self._before is None or not _reset_vm_hwm()

    def mb(self) -> float | None:
        """The peak in MB so far (None where the OS does not say)."""
        after = _vm_hwm_mb()
        if after is None:
            return peak_memory_mb()
        if self.of_process and self._before is not None and after > self._before:
            self.of_process = False  # a new high for the process: reached during the work
        return after


def _vm_hwm_mb() -> float | None:
    """VmHWM, this process's peak resident memory, in MB (Linux; else None)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    return None


def _reset_vm_hwm() -> bool:
    """Sets VmHWM to the current resident size ("5": Linux 4.0 on); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True
