"""SuperBPE against plain BPE at the same vocab: held-out bytes per token and training time,
one run per corpus, side by side.

    python benches/superbpe.py [--mb 10] [--vocab 32000] [--transition 0.9] [--runs 3]
        [--corpus en-prose ...] [--file]

Trains on the first MB of each shared corpus (``../shared/corpora``, documents cut at
``<|endoftext|>``) and measures on the 1 MB after the training text. ``--file`` trains
from that text written to a file (read in Rust, as ``bytepair train`` does) instead of
from a str.
"""

from __future__ import annotations

import argparse
import lzma
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import bytepair

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "corpora"
EOT = "<|endoftext|>"


def text_of(name: str, start: int, nbytes: int) -> str:
    with lzma.open(SHARED / f"{name}.txt.xz") as f:
        f.seek(start)
        data = f.read(nbytes)
    return data.decode("utf-8", "ignore")


def timed(f, *args, **kwargs):
    """``f(*args, **kwargs)``, its wall time and its process CPU time (all threads): on a
    shared host the CPU time moves less."""
    w, c = time.perf_counter(), time.process_time()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=10, help="MB of training text per corpus")
    p.add_argument("--vocab", type=int, default=32_000)
    p.add_argument("--transition", type=float, default=0.9, help="t as a fraction of vocab")
    p.add_argument("--corpus", action="append", help="default: en-prose, zh-prose, code")
    p.add_argument("--runs", type=int, default=3, help="paired rounds: plain, then SuperBPE")
    p.add_argument("--file", action="store_true", help="train from a file, not a str")
    args = p.parse_args()
    warnings.simplefilter("ignore", bytepair.errors.TrainingWarning)
    t = int(args.vocab * args.transition)
    print(
        f"vocab {args.vocab:,}, SuperBPE transition {t:,}, {args.mb} MB of training text, "
        f"{args.runs} paired rounds (medians of times and of the rounds' ratios of wall time "
        f"and of CPU time, all threads), from {'a file' if args.file else 'a str'}"
    )
    scratch = tempfile.TemporaryDirectory()
    for name in args.corpus or ["en-prose", "zh-prose", "code"]:
        train_text = text_of(name, 0, args.mb * 1_000_000)
        held = text_of(name, args.mb * 1_000_000, 1_000_000)
        nbytes = len(held.encode("utf-8"))
        docs = [train_text]
        if args.file:
            docs = Path(scratch.name) / f"{name}.txt"
            docs.write_text(train_text, encoding="utf-8")
        rounds = []
        for _ in range(args.runs):
            plain, pw, pc = timed(bytepair.train, docs, args.vocab, [EOT], progress=False)
            sup, sw, sc = timed(
                bytepair.train, docs, args.vocab, [EOT], superword_transition=t, progress=False
            )
            rounds.append((pw, sw, sw / pw, sc / pc))
        plain_s, sup_s, wall, cpu = (statistics.median(r[i] for r in rounds) for i in range(4))
        encodings = [timed(sup.encode, held, allowed_special="all") for _ in range(3)]
        sup_ids = len(encodings[0][0])
        enc_s = statistics.median(e[2] for e in encodings)
        plain_bpt = nbytes / len(plain.encode(held, allowed_special="all"))
        sup_bpt = nbytes / sup_ids
        # A corpus too small for the vocab stops early (TrainingWarning): say where.
        sizes = (
            ""
            if plain.vocab_size == sup.vocab_size == args.vocab
            else (f" (vocab {plain.vocab_size:,} plain, {sup.vocab_size:,} SuperBPE)")
        )
        print(
            f"  {name:<9}{sizes} bytes/token plain {plain_bpt:.3f}, SuperBPE {sup_bpt:.3f} "
            f"({1 - plain_bpt / sup_bpt:.1%} fewer tokens); training {plain_s:.1f} s vs "
            f"{sup_s:.1f} s ({wall:.1f}x wall, {cpu:.1f}x CPU); SuperBPE encodes "
            f"{nbytes / enc_s / 1e6:.1f} MB/s (one thread, CPU time)"
        )


if __name__ == "__main__":
    main()
