"""SuperBPE against plain BPE at the same vocab: held-out bytes per token and training time,
one run per corpus, side by side.

    python benches/superbpe.py [--mb 10] [--vocab 32000] [--transition 0.9] [--corpus en-prose ...]

Trains on the first MB of each shared corpus (``../shared/corpora``, documents cut at
``<|endoftext|>``) and measures on the 1 MB after the training text.
"""

from __future__ import annotations

import argparse
import lzma
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=10, help="MB of training text per corpus")
    p.add_argument("--vocab", type=int, default=32_000)
    p.add_argument("--transition", type=float, default=0.9, help="t as a fraction of vocab")
    p.add_argument("--corpus", action="append", help="default: en-prose, zh-prose, code")
    args = p.parse_args()
    warnings.simplefilter("ignore", bytepair.errors.TrainingWarning)
    t = int(args.vocab * args.transition)
    print(f"vocab {args.vocab:,}, SuperBPE transition {t:,}, {args.mb} MB of training text")
    for name in args.corpus or ["en-prose", "zh-prose", "code"]:
        train_text = text_of(name, 0, args.mb * 1_000_000)
        held = text_of(name, args.mb * 1_000_000, 1_000_000)
        nbytes = len(held.encode("utf-8"))
        docs = [train_text]
        s = time.perf_counter()
        plain = bytepair.train(docs, args.vocab, [EOT], progress=False)
        plain_s = time.perf_counter() - s
        s = time.perf_counter()
        sup = bytepair.train(docs, args.vocab, [EOT], superword_transition=t, progress=False)
        sup_s = time.perf_counter() - s
        s = time.perf_counter()
        sup_ids = len(sup.encode(held, allowed_special="all"))
        enc_s = time.perf_counter() - s
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
            f"{sup_s:.1f} s ({sup_s / plain_s:.1f}x); SuperBPE encodes "
            f"{nbytes / enc_s / 1e6:.1f} MB/s"
        )


if __name__ == "__main__":
    main()
