"""``make demo``: train a tokenizer on a corpus every Python install has, and show it off.

    python -m bytepair.cli.demo                  # the standard library's own .py files
    python -m bytepair.cli.demo a.txt b.txt      # your files instead
    python -m bytepair.cli.demo --vocab-size 4000 --max-bytes 4000000

The files are joined with ``<|endoftext|>`` between them (one document each), the end of
the corpus is held out of training, and the tokenizer is saved to
``demo-out/tokenizer.json``. It prints the training time, the vocab size, bytes/token on
the held-out slice, one sample sentence cut into tokens, and a decode round-trip check.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import bytepair
from bytepair.cli import holdout, report, show

SPECIAL = "<|endoftext|>"
#: Shown token by token when the corpus is the standard library.
SAMPLE = "def read_config(path):  # Load the settings, or return {} if the file is missing."
#: Folders of the standard library that are not its code: installed packages, and test
#: data that is deliberately odd (invalid encodings, huge literals).
SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"}


def stdlib_files() -> list[Path]:
    """The standard library's .py files, in a fixed order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found += [Path(folder) / f for f in sorted(files) if f.endswith(".py")]
    return found


def pick(files: list[Path], max_bytes: int) -> list[Path]:
    """A fixed pseudo-random subset of about ``max_bytes``: a spread of modules rather than
    the alphabetical first few (all of asyncio, say)."""
    files = list(files)
    random.Random(0).shuffle(files)
    chosen, total = [], 0
    for f in files:
        size = f.stat().st_size
        if total + size > max_bytes and chosen:
            continue
        chosen.append(f)
        total += size
        if total >= max_bytes:
            break
    return chosen


def sample_line(held_out: bytes) -> str:
    """A line of the held-out slice to show token by token: the first with some words."""
    for line in held_out.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if 30 <= len(line) <= 120 and sum(ch.isalpha() for ch in line) > len(line) / 2:
            return line
    return "The quick brown fox jumps over the lazy dog."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bytepair.cli.demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="text files to train on (default: the standard library's .py files)",
    )
    # The whole standard library (12 MB of .py files on CPython 3.11) at 16,000 tokens
    # trains in about 0.6 s with the Rust core on a 2-core machine.
    parser.add_argument("--vocab-size", type=int, default=16_000)
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=100_000_000,
        help="how much of the standard library to train on (default 100 MB: all of it)",
    )
    parser.add_argument(
        "--holdout",
        type=float,
        default=0.05,
        help="fraction held out of training (default 0.05, at most 1 MB)",
    )
    parser.add_argument("--out", default="demo-out", help="output folder (default demo-out)")
    args = parser.parse_args(argv)

    if args.files:
        files = [Path(f) for f in args.files]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            parser.error(f"not a file: {', '.join(missing)}")
        where = ", ".join(str(f) for f in files[:3]) + (" ..." if len(files) > 3 else "")
    else:
        files = pick(stdlib_files(), args.max_bytes)
        where = f"Python files of the standard library ({sysconfig.get_paths()['stdlib']})"
    tty = sys.stderr.isatty()

    with tempfile.TemporaryDirectory(prefix="bytepair-demo-") as workdir:
        corpus = Path(workdir) / "corpus.txt"
        with open(corpus, "wb") as out:
            for n, f in enumerate(files):
                if n:
                    out.write(SPECIAL.encode())
                out.write(f.read_bytes())
        size = corpus.stat().st_size
        print(
            f"training a {args.vocab_size:,}-token byte-level BPE on {len(files):,} files, "
            f"{size / 1e6:.1f} MB: {where}"
        )
        paths, held_out = holdout.carve([corpus], args.holdout)
        start = time.perf_counter()
        tok = bytepair.train(
            paths, vocab_size=args.vocab_size, special_tokens=[SPECIAL], progress=tty
        )
        seconds = time.perf_counter() - start

    os.makedirs(args.out, exist_ok=True)
    saved = os.path.join(args.out, "tokenizer.json")
    tok.save(saved)

    ids = tok.encode_bytes(held_out, allowed_special="all")
    print(f"training time      {seconds:.1f} s")
    print(
        f"vocab size         {tok.vocab_size:,} ({len(tok.merges):,} merges + 256 bytes "
        f"+ {SPECIAL})"
    )
    print(f"saved to           {saved}")
    print(
        f"bytes/token        {len(held_out) / max(1, len(ids)):.2f} on {len(held_out):,} "
        "held-out bytes (1.00 before training)"
    )
    print(
        "longest tokens     "
        + "  ".join(report.token_repr(b) for _, b in report.longest_tokens(tok, 5))
    )

    sample = SAMPLE if not args.files else sample_line(held_out)
    sample_ids = tok.encode(sample)
    tokens = [tok.vocab[i] for i in sample_ids]
    print(f"\nsample: {sample!r}\n{len(sample_ids)} tokens for {len(sample.encode())} bytes:")
    if tty and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        print(show.coloured(tokens))
    else:
        print(show.plain(tokens))
    print(" ".join(map(str, sample_ids)))

    ok = tok.decode(sample_ids) == sample and tok.decode_bytes(ids) == held_out
    print(
        f"\ndecode(encode(text)) == text on the sample and the held-out slice: "
        f"{'OK' if ok else 'FAILED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
