"""Typed stubs for the Rust extension bytepair._core."""

from collections.abc import Callable, Sequence
from os import PathLike

def core_version() -> str: ...

# --- training (src/count.rs, src/train.rs) -------------------------------------------------

Progress = Callable[[int, int], object]

class WordCounts:
    """Distinct pre-tokens (bytes) and their u64 counts."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def total(self) -> int: ...
    def get(self, word: bytes) -> int: ...
    def add(self, word: bytes, count: int = 1) -> None: ...
    def items(self) -> list[tuple[bytes, int]]: ...
    def merge(self, other: WordCounts) -> None: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> WordCounts: ...

class PretokenCounter:
    """Counts pre-tokens with one pattern and set of special tokens, on all cores."""

    def __init__(
        self,
        pattern: str,
        special_tokens: Sequence[str],
        threads: int | None = None,
        chunk_size: int | None = None,
    ) -> None: ...
    def count_files(
        self,
        counts: WordCounts,
        paths: Sequence[str | PathLike[str]],
        progress: Progress | None = None,
    ) -> None: ...
    def count_texts(
        self,
        counts: WordCounts,
        texts: Sequence[str | bytes],
        progress: Progress | None = None,
    ) -> None: ...

def train_merges(
    counts: WordCounts,
    num_merges: int,
    min_frequency: int = 1,
    progress: Progress | None = None,
) -> list[tuple[bytes, bytes]]: ...
