"""engine="ray" on a local cluster against the default engine, on the same shards.

    python benches/train_distributed.py                 # 64 MB of en-prose in 8 files
    python benches/train_distributed.py --mb 100 --files 16 --repeat 3
    python benches/train_distributed.py --growth        # distinct words vs corpus size

Prints per-phase wall times (cluster start, counting, merge loop), the count table's size
(distinct words and serialized bytes) and the ratios. ``--growth`` counts prefixes of
en-prose (10/50/100/290 MB) and times the merge loop on each table: the figures
docs/distributed.md extrapolates from.

The corpus is /work/data/en-prose.txt (or --corpus), else the shared en-prose.txt.xz.
"""

from __future__ import annotations

import argparse
import importlib
import lzma
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bytepair
from bytepair import _core, distributed, patterns

ROOT = Path(__file__).resolve().parent.parent
EOT = "<|endoftext|>"
CANDIDATES = [
    Path("/work/data/en-prose.txt"),
    Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared")) / "corpora/en-prose.txt.xz",
]


def read_prefix(path: Path | None, nbytes: int) -> bytes:
    for p in [path] if path else CANDIDATES:
        if p and p.exists():
            opener = lzma.open if p.suffix == ".xz" else open
            with opener(p, "rb") as f:
                data = f.read(nbytes)
            return data[: data.rfind(b"\n") + 1]
    sys.exit(f"no corpus: pass --corpus or unpack en-prose to {CANDIDATES[0]}")


def write_shards(data: bytes, files: int, directory: str) -> list[str]:
    """Cuts data into `files` files at line ends (each a separate document, as on disk)."""
    paths, start = [], 0
    for i in range(files):
        end = len(data) if i == files - 1 else data.find(b"\n", (i + 1) * len(data) // files) + 1
        path = os.path.join(directory, f"shard-{i:03}.txt")
        with open(path, "wb") as f:
            f.write(data[start:end])
        paths.append(path)
        start = end
    return paths


def count_local(files: list[str], pattern: str):
    """The default engine's counting: the core on all cores, as train() sets it up."""
    counts = _core.PretokenCounts()
    importlib.import_module("bytepair.trainer")._counter(pattern, [EOT], None).count_files(
        counts, files
    )
    return counts


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def median_of(repeat: int, fn):
    results = [timed(fn) for _ in range(repeat)]
    return results[-1][0], statistics.median(t for _, t in results)


def compare(args) -> None:
    data = read_prefix(args.corpus, args.mb * 1_000_000)
    pattern = patterns.resolve("gpt2")
    num_merges = args.vocab_size - 256 - 1
    with tempfile.TemporaryDirectory(dir=args.tmp) as d:
        files = write_shards(data, args.files, d)
        print(
            f"corpus: {len(data) / 1e6:.1f} MB of en-prose in {len(files)} files, gpt2, "
            f"vocab {args.vocab_size}, median of {args.repeat}"
        )

        local_counts, t_local_count = median_of(args.repeat, lambda: count_local(files, pattern))
        _, t_merge = median_of(args.repeat, lambda: _core.train_merges(local_counts, num_merges))
        tok_local, t_local = median_of(
            args.repeat,
            lambda: bytepair.train(files, args.vocab_size, [EOT], progress=False),
        )

        ray = distributed.require_ray()
        _, t_start = timed(lambda: distributed.connect(num_cpus=args.cpus))
        ray_counts, t_ray_count = median_of(
            args.repeat,
            lambda: distributed.count(
                files, pattern, [EOT], shard_bytes=args.shard_mb << 20, progress=False
            ),
        )
        tok_ray, t_ray = median_of(
            args.repeat,
            lambda: bytepair.train(files, args.vocab_size, [EOT], progress=False, engine="ray"),
        )
        with tempfile.TemporaryDirectory(dir=args.tmp) as ck:
            _, t_ckpt = timed(
                lambda: distributed.count(files, pattern, [EOT], checkpoint_dir=ck, progress=False)
            )
            _, t_resume = timed(
                lambda: distributed.count(files, pattern, [EOT], checkpoint_dir=ck, progress=False)
            )
        ray.shutdown()

    same = tok_ray.merges == tok_local.merges and len(ray_counts) == len(local_counts)
    table = len(local_counts.to_bytes())
    mb = len(data) / 1e6
    rows = [
        ("local: count (Rust, all cores)", t_local_count),
        ("local: merge loop", t_merge),
        ("local: train() end to end", t_local),
        ("ray: cluster start (once)", t_start),
        ("ray: count (tasks + tree reduce)", t_ray_count),
        ("ray: train() end to end, warm cluster", t_ray),
        ("ray: count writing checkpoints", t_ckpt),
        ("ray: count resumed from checkpoints", t_resume),
    ]
    for name, t in rows:
        rate = "" if "start" in name else f"  {mb / t:8.1f} MB/s"
        print(f"  {name:<40} {t:8.2f} s{rate}")
    print(
        f"  count table: {len(local_counts):,} distinct words, {table / 1e6:.1f} MB serialized "
        f"({table / len(local_counts):.1f} B/word), {table / len(data):.2%} of the corpus"
    )
    print(
        f"  ratio ray/local: count {t_ray_count / t_local_count:.2f}x, "
        f"train {t_ray / t_local:.2f}x (cluster start excluded), "
        f"resume/count {t_resume / t_ckpt:.2f}x"
    )
    print(f"  identical merges: {same}")


def growth(args) -> None:
    data = read_prefix(args.corpus, max(args.sizes) * 1_000_000)
    pattern = patterns.resolve("gpt2")
    print(
        f"distinct pre-tokens vs corpus size (en-prose, gpt2, {EOT} separators); "
        f"merge loop for {args.vocab_size - 257} merges"
    )
    with tempfile.TemporaryDirectory(dir=args.tmp) as d:
        for mb in args.sizes:
            cut = (
                data.rfind(b"\n", 0, mb * 1_000_000) + 1
                if mb * 1_000_000 < len(data)
                else len(data)
            )
            path = os.path.join(d, "prefix.txt")
            with open(path, "wb") as f:
                f.write(data[:cut])
            counts, t_count = timed(lambda p=path: count_local([p], pattern))
            _, t_merge = timed(lambda c=counts: _core.train_merges(c, args.vocab_size - 257))
            table = len(counts.to_bytes())
            print(
                f"  {cut / 1e6:6.0f} MB: {len(counts):>9,} distinct words, table "
                f"{table / 1e6:6.1f} MB, count {t_count:6.2f} s, merge loop {t_merge:6.2f} s"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--shard-mb", type=int, default=distributed.DEFAULT_SHARD_BYTES >> 20)
    ap.add_argument("--vocab-size", type=int, default=32_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpus", type=int, default=None, help="local cluster CPUs (all)")
    ap.add_argument("--tmp", default=None, help="directory for the shard files")
    ap.add_argument("--growth", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 290])
    args = ap.parse_args()
    growth(args) if args.growth else compare(args)


if __name__ == "__main__":
    main()
