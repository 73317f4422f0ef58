"""Training and encoding on a Ray cluster: ``bytepair.train(..., engine="ray")``.

Counting pre-tokens is a map-reduce; the merge loop that follows needs only the table of
distinct pre-tokens, which is small (a 290 MB corpus has about 0.4 M of them), so it runs on
the driver. The plan:

1. the corpus is cut into shards (``bytepair.shards``), about 64 MiB each;
2. each shard is counted by one Ray task running the same Rust counting as the local
   engine (one thread per task: Ray gives each task one CPU);
3. the partial tables are merged in a tree: whenever ``fan_in`` partials are ready, one
   reduce task merges them, one at a time, into one, so a reduce task holds its running
   table plus the one partial it is adding, and the driver holds none (only references);
4. the driver fetches the one table left and runs the merge loop.

With ``checkpoint_dir``, every count task writes its shard's table there (format in
``bytepair.checkpoint``) before it returns, and a later run loads those instead of
counting again. On a multi-machine cluster the directory must be one every node sees
(NFS or a similar shared mount), like the corpus itself.

Ray is optional: ``pip install bytepair[ray]``. With ``RAY_ADDRESS`` set, or ``address``
given, the run joins that cluster; otherwise it starts a local one (and leaves it up for
the rest of the process, so a second call does not pay the ~9 s start again).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bytepair import checkpoint, patterns, trainer
from bytepair.errors import FormatError
from bytepair.formats.tokenizer_data import TokenizerData
from bytepair.progress import Bar, shown
from bytepair.shards import DEFAULT_SHARD_BYTES, Shard, plan_shards
from bytepair.tokenizer import Tokenizer

#: Partials merged by one reduce task. 4 keeps the tree shallow (log4 of 16k shards is 7
#: levels) while a reduce task holds at most its running table plus one incoming one.
DEFAULT_FAN_IN = 4


@dataclass(frozen=True)
class ShardReport:
    """What happened to one shard: ``counted`` (False: loaded from its checkpoint)."""

    shard: Shard
    counted: bool
    words: int
    seconds: float
    rejected_checkpoint: str | None = None


def require_ray():
    """The ``ray`` module, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "engine='ray' needs Ray, which is not installed: pip install bytepair[ray]"
        ) from e
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Joins the cluster at ``address`` (or ``RAY_ADDRESS``), else starts a local one
    quietly; reuses a connection the caller already made with ``ray.init``."""
    ray = require_ray()
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(
                num_cpus=num_cpus,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
    return ray


# -- training ------------------------------------------------------------------------------


def train(
    corpus: Iterable[str | os.PathLike] | str | os.PathLike,
    vocab_size: int = 32_000,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 1,
    threads: int | None = None,
    progress: bool | None = None,
    *,
    checkpoint_dir: str | os.PathLike | None = None,
    **options: Any,
):
    """``bytepair.train(..., engine="ray")``: counts on the cluster (``count``, which takes
    the ``options``), then runs the merge loop here. ``threads`` is the CPU count of a
    local cluster this starts (default: all); it is ignored when joining a cluster."""
    special_tokens = list(special_tokens)
    trainer._check_options(vocab_size, special_tokens, min_frequency, threads)  # before counting
    counts = count(
        corpus,
        pattern,
        special_tokens,
        checkpoint_dir=checkpoint_dir,
        num_cpus=threads,
        progress=progress,
        **options,
    )
    return trainer._tokenizer_from_counts(
        counts, vocab_size, special_tokens, pattern, min_frequency, progress
    )


# -- counting ------------------------------------------------------------------------------


def shard_key(shard: Shard, pattern: str, special_tokens: Sequence[str]) -> dict[str, Any]:
    """Everything a shard's counts depend on: the checkpoint's identity."""
    return {
        "format": checkpoint.VERSION,
        "path": shard.path,
        "size": shard.size,
        "mtime_ns": shard.mtime_ns,
        "start": shard.start,
        "end": shard.end,
        "pattern": pattern,
        "special_tokens": list(special_tokens),
    }


def count_shard(
    shard: Shard, pattern: str, special_tokens: Sequence[str], checkpoint_dir: str | None
) -> tuple[bytes, ShardReport]:
    """Counts one shard (or loads its checkpoint); returns the serialized table."""

    t0 = time.perf_counter()
    rejected = None
    if checkpoint_dir is not None:
        key = shard_key(shard, pattern, special_tokens)
        path = checkpoint.path_for(checkpoint_dir, key)
        if os.path.exists(path):
            try:
                payload, header = checkpoint.read(path, key)
                report = ShardReport(shard, False, header["words"], time.perf_counter() - t0)
                return payload, report
            except FormatError as e:
                rejected = str(e)
    counts = _count(shard, pattern, special_tokens)
    payload = counts.to_bytes()
    if checkpoint_dir is not None:
        checkpoint.write(checkpoint_dir, key, payload, words=len(counts))
    report = ShardReport(shard, True, len(counts), time.perf_counter() - t0, rejected)
    return payload, report


def _count(shard: Shard, pattern: str, special_tokens: Sequence[str]):
    """The local engine's counting on one shard, on one thread (Ray gives the task one CPU)."""
    from bytepair import _core

    counter = trainer._counter(pattern, list(special_tokens), 1)
    counts = _core.PretokenCounts()
    # Memory-mapped, never read whole; a range of a file is counted in place.
    counter.count_files(counts, [shard.path], ranges=[(shard.start, shard.end)])
    return counts


def merge_payloads(refs: list) -> tuple[bytes, int]:
    """Reduce task body: merges the tables behind ``refs`` one at a time."""
    import ray

    from bytepair import _core

    total = None
    for ref in refs:
        part = _core.PretokenCounts.from_bytes(ray.get(ref))
        if total is None:
            total = part
        else:
            total.merge(part)
        del part
    return total.to_bytes(), len(total)


def count(
    inputs: Iterable[str | os.PathLike] | str | os.PathLike,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    *,
    checkpoint_dir: str | os.PathLike | None = None,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    fan_in: int = DEFAULT_FAN_IN,
    max_in_flight: int | None = None,
    address: str | None = None,
    num_cpus: int | None = None,
    progress: bool | None = None,
    on_shard: Callable[[ShardReport], None] | None = None,
):
    """Counts the pre-tokens of a corpus on Ray; returns the core's ``PretokenCounts``.

    ``max_in_flight`` bounds the count tasks submitted at once (default: twice the
    cluster's CPUs), which also bounds the finished partials waiting for a reduce.
    ``on_shard`` is called on the driver as each shard finishes; if it raises, the
    unfinished tasks are cancelled and the error propagates (checkpoints already written
    stay, so the next run resumes).
    """
    from bytepair import _core

    if fan_in < 2:
        raise ValueError(f"fan_in must be at least 2, got {fan_in}")
    pattern = patterns.resolve(pattern)
    special_tokens = list(special_tokens)
    # Build one counter here: a pattern the core rejects fails now, not in every task.
    trainer._counter(pattern, special_tokens, 1)
    shards = plan_shards(inputs, special_tokens, shard_bytes, pattern)
    ckpt = None
    if checkpoint_dir is not None:
        os.makedirs(checkpoint_dir, exist_ok=True)
        ckpt = os.path.abspath(os.fspath(checkpoint_dir))
    ray = connect(address, num_cpus)
    count_task = ray.remote(num_cpus=1, num_returns=2, max_retries=0)(count_shard)
    reduce_task = ray.remote(num_cpus=1, num_returns=2, max_retries=0)(merge_payloads)
    if max_in_flight is None:
        max_in_flight = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))

    todo = list(reversed(shards))
    counting: dict[Any, Any] = {}  # report ref -> table ref
    reducing: dict[Any, Any] = {}  # distinct-count ref -> table ref
    ready: list[Any] = []  # finished table refs not yet reduced
    show = shown(progress)
    bar = Bar("counting on ray", total=sum(s.nbytes for s in shards), enabled=show)
    bytes_done = loaded = 0
    try:
        while todo or counting or reducing or len(ready) > 1:
            while todo and len(counting) < max_in_flight:
                table, report = count_task.remote(todo.pop(), pattern, special_tokens, ckpt)
                counting[report] = table
            while len(ready) >= fan_in or (
                len(ready) > 1 and not todo and not counting and not reducing
            ):
                group, ready = ready[:fan_in], ready[fan_in:]
                table, distinct = reduce_task.remote(group)
                reducing[distinct] = table
            if not counting and not reducing:
                continue
            done, _ = ray.wait([*counting, *reducing], num_returns=1)
            for ref in done:
                if ref in counting:
                    report = _get(ray, ref)
                    ready.append(counting.pop(ref))
                    if report.rejected_checkpoint:
                        warnings.warn(
                            f"counted a shard again: {report.rejected_checkpoint}", stacklevel=2
                        )
                    bytes_done += report.shard.nbytes
                    if not report.counted:
                        loaded += 1
                        bar.note(f"{loaded} of {len(shards)} chunks from checkpoints")
                    bar.update(bytes_done)
                    if on_shard is not None:
                        on_shard(report)
                else:
                    _get(ray, ref)
                    ready.append(reducing.pop(ref))
    except BaseException:
        # Ctrl-C or a failed shard: stop our own tasks now (force: a task deep in the Rust
        # counter would not see a polite cancel until it finished its shard).
        for ref in [*counting.values(), *reducing.values()]:
            ray.cancel(ref, force=True)
        raise
    finally:
        bar.close()
    if not ready:
        return _core.PretokenCounts()
    return _core.PretokenCounts.from_bytes(_get(ray, ready[0]))


def _get(ray, ref):
    """``ray.get`` that re-raises a task's own exception (CorpusError, ...) unwrapped."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        raise e.as_instanceof_cause() from None


# -- encoding many files -------------------------------------------------------------------

MANIFEST = "manifest.json"


def encode_files(
    tok,
    inputs: Iterable[str | os.PathLike] | str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    engine: str = "ray",
    address: str | None = None,
    num_cpus: int | None = None,
) -> list[dict[str, Any]]:
    """Encodes every input file to its own ``.npy`` with ``tok.encode_file``, one task per
    file, and writes ``out_dir/manifest.json``: one entry per input, ``{"file": input path,
    "out": .npy path relative to out_dir, "tokens": count, "dtype": "uint16"|"uint32"}``.
    Outputs mirror the inputs' directory tree under ``out_dir`` (``a/b.txt`` ->
    ``a/b.txt.npy``). Special tokens in the files are encoded as special tokens, as
    ``encode_file`` does. Returns the manifest's entries.
    """
    from bytepair.shards import expand_inputs

    files = expand_inputs(inputs)
    root = os.path.commonpath([os.path.dirname(f) for f in files])
    out_dir = os.path.abspath(os.fspath(out_dir))
    jobs = [(f, os.path.relpath(f, root) + ".npy") for f in files]
    if engine == "local":
        entries = [_encode_one(tok, f, out_dir, rel) for f, rel in jobs]
    elif engine == "ray":
        ray = connect(address, num_cpus)
        task = ray.remote(num_cpus=1, max_retries=0)(_encode_one)
        tok_ref = ray.put(_portable(tok))
        entries = [_get(ray, r) for r in [task.remote(tok_ref, f, out_dir, rel) for f, rel in jobs]]
    else:
        raise ValueError(f"engine must be 'local' or 'ray', got {engine!r}")
    _write_json(os.path.join(out_dir, MANIFEST), {"format": 1, "files": entries})
    return entries


def _encode_one(tok, path: str, out_dir: str, rel: str) -> dict[str, Any]:
    import numpy as np

    if isinstance(tok, TokenizerData):
        tok = _rebuild(tok)
    out = os.path.join(out_dir, rel)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tok.encode_file(path, out, threads=1, progress=False)  # Ray gives the task one CPU
    ids = np.load(out, mmap_mode="r")
    return {"file": path, "out": rel, "tokens": int(ids.shape[0]), "dtype": str(ids.dtype)}


def _portable(tok):
    """The tokenizer itself if it pickles, else its data (``Tokenizer.data``: the core's
    encoder does not pickle), from which a worker rebuilds it exactly; a rank table's
    merges are left out, since the rebuilt rank table derives them again."""
    import pickle

    try:
        pickle.dumps(tok)
        return tok
    except TypeError:
        data = tok.data
        return dataclasses.replace(data, merges=None) if data.rank_table else data


def _rebuild(data: TokenizerData) -> Tokenizer:
    return Tokenizer.from_data(data)


def _write_json(path: str, obj: Any) -> None:
    import json

    from bytepair.formats.atomic import write_parts

    write_parts(path, [json.dumps(obj, indent=1).encode("utf-8"), b"\n"])
