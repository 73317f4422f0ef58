"""Typed stubs for the Rust extension ``bytepair._core``. Each section belongs to the Rust
file it wraps; add yours in its own section."""

from collections.abc import Callable, Iterable, Sequence
from mmap import mmap
from os import PathLike

def core_version() -> str: ...
def rank_file(
    raw: bytes, ahead: tuple[list[tuple[str, int]], str] | None = None
) -> tuple[dict[int, bytes], EncoderAhead | None] | None: ...

class EncoderAhead:
    """A rank file's encoder being built on a thread of its own (``rank_file``)."""

    def take(
        self, special_tokens: list[tuple[str, int]], pattern: str, ignore_merges: bool = False
    ) -> Encoder | None: ...

# -- encoder (src/encode/, src/py/encoder.rs, src/py/stream.rs) -----------------------------

class Encoder:
    """A byte-level BPE encoder/decoder; ``bytepair.Tokenizer`` wraps it."""

    def __init__(
        self,
        vocab: dict[int, bytes],
        merges: Iterable[tuple[bytes, bytes]] | None,
        special_tokens: list[tuple[str, int]],
        pattern: str,
        ignore_merges: bool = False,
    ) -> None: ...
    @staticmethod
    def from_tables(
        tables: object,
        special_tokens: list[tuple[str, int]],
        pattern: str,
        ignore_merges: bool = False,
    ) -> Encoder: ...
    @property
    def vocab_size(self) -> int: ...
    def token_table(self) -> dict[int, bytes]: ...
    @property
    def pair_count(self) -> int: ...
    def table_merges(self) -> list[tuple[bytes, bytes]]: ...
    def merges(self) -> list[tuple[bytes, bytes]]: ...
    def encode(
        self,
        text: str,
        allowed: Iterable[str] | None = None,
        disallowed: Iterable[str] | None = None,
    ) -> list[int]: ...
    def encode_to_array(
        self,
        text: str,
        allowed: Iterable[str] | None = None,
        disallowed: Iterable[str] | None = None,
    ) -> bytearray: ...
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode_bytes(
        self, data: bytes, allowed: Iterable[str], disallowed: Iterable[str]
    ) -> list[int]: ...
    def encode_batch(
        self,
        texts: Iterable[str],
        allowed: Iterable[str],
        disallowed: Iterable[str],
        threads: int = 0,
    ) -> list[list[int]]: ...
    def encode_batch_to_arrays(
        self,
        texts: Iterable[str],
        allowed: Iterable[str],
        disallowed: Iterable[str],
        threads: int = 0,
    ) -> tuple[bytearray, bytearray]: ...
    def encode_with_offsets(
        self, text: str, allowed: Iterable[str], disallowed: Iterable[str]
    ) -> tuple[list[int], list[tuple[int, int]]]: ...
    def stream(self, allowed: Iterable[str], disallowed: Iterable[str]) -> Stream: ...
    def encode_file(
        self,
        path: str | PathLike[str],
        out_path: str | PathLike[str],
        allowed: Iterable[str],
        disallowed: Iterable[str],
        threads: int = 0,
        progress: Callable[[int, int], object] | None = None,
    ) -> int: ...
    def decode_bytes(self, ids: Iterable[int]) -> bytes: ...

class Stream:
    """Incremental encoding: holds only the text after the last safe cut."""

    def feed(self, text: str | bytes) -> list[int]: ...
    def finish(self) -> list[int]: ...

# --- training (src/count/, src/train/, src/safe_cut.rs; bindings in src/py/) ----------------

Progress = Callable[[int, int], object]

class PretokenCounts:
    """Distinct pre-tokens (bytes) and their u64 counts."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def total(self) -> int: ...
    def get(self, word: bytes) -> int: ...
    def add(self, word: bytes, count: int = 1) -> None: ...
    def items(self) -> list[tuple[bytes, int]]: ...
    def merge(self, other: PretokenCounts) -> None: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> PretokenCounts: ...

class PretokenCounter:
    """Counts pre-tokens with one pattern and set of special tokens, on all cores."""

    def __init__(
        self,
        pattern: str,
        special_tokens: Sequence[str],
        threads: int | None = None,
        chunk_size: int | None = None,
        lines: bool = False,
    ) -> None: ...
    def count_files(
        self,
        counts: PretokenCounts,
        paths: Sequence[str | PathLike[str]],
        progress: Progress | None = None,
        ranges: Sequence[tuple[int, int]] | None = None,
    ) -> None: ...
    def count_texts(
        self,
        counts: PretokenCounts,
        texts: Sequence[str | bytes],
        progress: Progress | None = None,
    ) -> None: ...

def train_merges(
    counts: PretokenCounts,
    num_merges: int,
    min_frequency: int = 1,
    progress: Progress | None = None,
    consume: bool = False,
    ties: str = "bytes",
    byte_ids: Sequence[int] | None = None,
    reuse: bool = True,
    count_tokens: bool = False,
    max_token_length: int | None = None,
    base: tuple[list[tuple[int, bytes]], list[tuple[bytes, bytes]] | None] | None = None,
    base_encoder: Encoder | None = None,
) -> list[tuple[bytes, bytes]]: ...
def safe_cuts(
    pattern: str,
    data: bytes | bytearray | memoryview | mmap,
    near: Sequence[int],
    special_tokens: Sequence[str] = (),
) -> list[int]:
    """For each offset in ``near``, the first offset at or after it where counting may cut
    ``data`` without changing a count (a safe cut of the pattern's rule, which a custom
    regex has none of, or the start of a special token no other occurrence straddles), or
    ``len(data)`` when there is none."""

def special_cuts(
    data: bytes | bytearray | memoryview | mmap,
    near: Sequence[int],
    special_tokens: Sequence[str],
) -> list[int]:
    """For each offset in ``near``, the first offset at or after it (and after 0) where a
    special token starts that no other occurrence straddles, or ``len(data)``."""
