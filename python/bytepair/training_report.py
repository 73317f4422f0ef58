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
    """``seconds`` of wall time; ``peak_memory_mb``, the process's peak resident memory so
    far (None where the OS does not say: Windows); ``documents`` trained on and
    ``documents_in_corpus`` (both None unless documents were cut: ``sample_documents`` or
    ``document_separator``)."""

    seconds: float
    peak_memory_mb: float | None
    documents: int | None = None
    documents_in_corpus: int | None = None

    def __str__(self) -> str:
        """One line for a log.

        >>> str(TrainingReport(1.5, 120.0, 2, 3))
        'trained in 1.50 s, peak memory 120 MB, on 2 of 3 documents (a random sample)'
        """
        memory = "n/a" if self.peak_memory_mb is None else f"{self.peak_memory_mb:,.0f} MB"
        line = f"trained in {self.seconds:.2f} s, peak memory {memory}"
        if self.documents is not None:
            line += f", on {documents_line(self.documents, self.documents_in_corpus)}"
        return line


def documents_line(used: int, in_corpus: int | None) -> str:
    """``22,000 of 2,119,719 documents (a random sample)``, or ``all 3 documents``.

    >>> documents_line(3, 3)
    'all 3 documents'
    """
    if in_corpus is None or used >= in_corpus:
        return f"all {used:,} documents"
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
