"""The reference's counting over a file, in parallel: chunks cut at safe cuts, counted by
a process pool with bytepair.reference.count_pretokens, with a progress bar. The tests
check that chunked counts equal the whole file's; ``train_bpe`` is
``bytepair.reference.train_bpe`` on this counting.

"""

from __future__ import annotations

import mmap
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import regex
from bytepair import reference
from bytepair.progress import Bar, shown

Pair = tuple[bytes, bytes]
Progress = bool | None | Callable[[int, int], None]

#: Target size of a chunk that count_file hands to one worker process.
CHUNK_BYTES = 4 << 20


def count_file(
    path: str | os.PathLike,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    num_processes: int | None = None,
    progress: Progress = False,
) -> Counter[bytes]:
    """count_pretokens over a file, in parallel over chunks of about CHUNK_BYTES.

    The result is exactly count_pretokens(whole file): chunks are cut only where the
    whole-text pipeline has a boundary too (see ``_is_safe_cut``). ``progress=None`` draws a
    line on stderr when it is a terminal, ``True`` always; a callable gets
    ``(bytes_done, bytes_total)``.
    Worker processes start with multiprocessing's default method; where that is spawn
    (macOS, Windows) call this under ``if __name__ == "__main__":``.
    """
    path = reference.checked_corpus_path(path)
    reference.pretokenize("", pattern)  # a bad pattern fails here, not in a worker
    specials = [token.encode("utf-8") for token in special_tokens]
    with open(path, "rb") as f, _mapped(f) as data:
        bounds = _chunk_bounds(data, specials, CHUNK_BYTES)
    jobs = [(path, start, end, pattern, tuple(special_tokens)) for start, end in bounds]
    total = bounds[-1][1] if bounds else 0
    report = _progress_reporter(progress, total)

    counts: Counter[bytes] = Counter()
    processes = min(num_processes or os.cpu_count() or 1, len(jobs))
    if processes <= 1:
        # One process: no pool to start (that costs ~0.2 s per worker).
        results: Iterable[tuple[int, Counter[bytes]]] = map(_count_chunk, jobs)
        for size, chunk_counts in results:
            counts.update(chunk_counts)
            report(size)
    else:
        # The platform's default start method: fork on Linux (cheap, and works from a
        # script without an `if __name__ == "__main__":` guard, which spawn and
        # forkserver need).
        with multiprocessing.Pool(processes) as pool:
            for size, chunk_counts in pool.imap_unordered(_count_chunk, jobs):
                counts.update(chunk_counts)
                report(size)
    return counts


def _count_chunk(job: tuple) -> tuple[int, Counter[bytes]]:
    """One worker's job: read bytes [start, end) of the file and count them."""
    path, start, end, pattern, special_tokens = job
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return len(data), reference.count_pretokens(data, pattern, special_tokens)


class _mapped:
    """mmap of a file that also works for an empty file (mmap refuses length 0)."""

    def __init__(self, f):
        self.map = (
            mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            if os.fstat(f.fileno()).st_size
            else None
        )

    def __enter__(self) -> bytes | mmap.mmap:
        return self.map if self.map is not None else b""

    def __exit__(self, *exc) -> None:
        if self.map is not None:
            self.map.close()


def _chunk_bounds(data, specials: list[bytes], chunk_bytes: int) -> list[tuple[int, int]]:
    """[start, end) offsets of chunks of about chunk_bytes, each cut at a safe point."""
    bounds = []
    start = 0
    while start < len(data):
        end = _next_safe_cut(data, start + chunk_bytes, specials)
        bounds.append((start, end))
        start = end
    return bounds


def _next_safe_cut(data, position: int, specials: list[bytes]) -> int:
    """The first safe cut at or after position, or len(data).

    Candidates are the start of each special token and the byte after each newline, in
    order of position; we remember where each needle occurs next, so that rejecting a
    candidate never re-scans the file for the others.
    """
    needles = [(token, 0) for token in specials] + [(b"\n", 1)]  # (bytes, cut offset)
    found = [data.find(needle, position) for needle, _ in needles]
    while any(i >= 0 for i in found):
        k = min((i, k) for k, i in enumerate(found) if i >= 0)[1]
        cut = found[k] + needles[k][1]
        if _is_safe_cut(data, cut, specials):
            return cut
        found[k] = data.find(needles[k][0], found[k] + 1)
    return len(data)


_LETTER_OR_NUMBER = regex.compile(r"[\p{L}\p{N}]")


def _is_safe_cut(data, cut: int, specials: list[bytes]) -> bool:
    r"""Whether counting data[:cut] and data[cut:] apart gives the counts of the whole.

    No occurrence of a special token may straddle the cut. Then, at the start of a
    special token, the leftmost-longest scan of the whole text starts a match exactly
    there, so both halves split the same way. (Special tokens are valid UTF-8, so the cut
    is a character boundary too.)

    Elsewhere we cut right after a newline that follows a non-space character and comes
    before a letter or number: every built-in pattern ends a pre-token there. (Not before
    a space: gpt2 joins "\n\t" into one pre-token; not after one: "x \n" splits
    differently at the end of a text; not before "/": o200k joins ".\n/".) A custom
    pattern that joins such a newline to its neighbours gets slightly different counts
    in parallel; count with num_processes=1 to be exact.
    """
    for token in specials:
        window_end = cut + len(token) - 1
        i = data.find(token, max(0, cut - len(token) + 1), window_end)
        while 0 <= i < cut:
            if i + len(token) > cut:
                return False  # this occurrence straddles the cut
            i = data.find(token, i + 1, window_end)
    if any(data[cut : cut + len(token)] == token for token in specials):
        return True
    before = bytes(data[max(0, cut - 5) : cut]).decode("utf-8", "surrogateescape")
    after = bytes(data[cut : cut + 4]).decode("utf-8", "surrogateescape")
    return (
        len(before) >= 2
        and before[-1] == "\n"
        and not before[-2].isspace()
        and _LETTER_OR_NUMBER.match(after) is not None
    )


def _progress_reporter(progress: Progress, total: int) -> Callable[[int], None]:
    """A function to call with each finished chunk's size."""
    if callable(progress):
        draw = progress
    elif shown(progress):  # None: a progress line in a log file is just noise
        bar = Bar("counting pre-tokens", total=total)

        def draw(done: int, total: int) -> None:
            bar.update(done, total)
            if done >= total:
                bar.close()
    else:
        return lambda size: None

    done = 0

    def report(size: int) -> None:
        nonlocal done
        done += size
        draw(done, total)

    return report


def train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 1,
    num_processes: int | None = None,
    progress: Progress = False,
) -> tuple[dict[int, bytes], list[Pair]]:
    """``reference.train_bpe`` with the counting done by ``count_file``: the same vocab
    and merges, from ``num_processes`` workers."""
    special_tokens, num_merges = reference.checked_options(vocab_size, special_tokens, pattern)
    counts = count_file(input_path, pattern, special_tokens, num_processes, progress)
    merges = reference.train_from_counts(counts, num_merges, min_frequency)
    return reference.build_vocab(merges, special_tokens), merges
