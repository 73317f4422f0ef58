"""Training speed and memory: bytepair vs HuggingFace tokenizers vs rustbpe vs gigatoken,
same corpus, same pattern (GPT-2's), same number of merges, each trainer in its own
subprocess (peak RSS: the child's own VmHWM). bytepair also runs in each peer's mode
(``compat="huggingface"``, ``compat="rustbpe"``: that peer's exact merges, checked here) and
extending a tokenizer (``base=``: the first half of the vocab trained untimed, then the
rest) and SuperBPE (``superword_transition=`` at 90% of the vocab, against plain training).
gigatoken's ``train_bpe`` runs with ``tie_breaking="raw_token_ids"``, whose merges are
rustbpe's (ties to the smaller pair of ids).

    python benches/train.py                       # 50 MB of en-prose, vocab 32000, 3 runs
    python benches/train.py --mb 10 --runs 1      # quick
    python benches/train.py --corpus my.txt --vocab-size 50000

Prints the median wall time, MB/s and peak RSS of each trainer and bytepair's ratios to the
others, plus bytepair's two phases (pre-tokenize + count, merge) timed separately.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import lzma
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared"))
EOT = "<|endoftext|>"
TRAINERS = (
    "bytepair",
    "hf",
    "rustbpe",
    "gigatoken",
    "bytepair-hf",
    "bytepair-rustbpe",
    "bytepair-extend",
    "bytepair-superbpe",
)
#: (bytepair row, peer row) pairs whose ratio is printed: each peer against plain bytepair,
#: and each mode against the trainers whose merges it makes (checked equal).
PAIRS = [("bytepair", "hf"), ("bytepair", "rustbpe"), ("bytepair", "gigatoken")]
PAIRS += [("bytepair-hf", "hf"), ("bytepair-rustbpe", "rustbpe")]
PAIRS += [("bytepair-rustbpe", "gigatoken")]
#: The pairs whose merges must be the same: each mode's, not plain bytepair's.
SAME_MERGES = {(ours, peer) for ours, peer in PAIRS if ours != "bytepair"}


def corpus_path(mb: int, out_dir: Path) -> Path:
    """The first `mb` MB of en-prose (cut at a newline), from /work/data if it is unpacked
    there, else decompressed from ../shared into out_dir."""
    out = out_dir / f"en-prose-{mb}MB.txt"
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    unpacked = Path("/work/data/en-prose.txt")
    if unpacked.exists():
        with open(unpacked, "rb") as f:
            data = f.read(mb * 1_000_000)
    else:
        with lzma.open(SHARED / "corpora" / "en-prose.txt.xz") as f:
            data = f.read(mb * 1_000_000)
    data = data[: data.rfind(b"\n") + 1]
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return out


# -- what each child process runs ------------------------------------------------------------


def learned(tokens) -> str:
    """A digest of the new tokens in the order a trainer learned them, to tell in the parent
    whether two trainers made the same merges."""
    h = hashlib.sha256()
    for t in tokens:
        h.update(len(t).to_bytes(4, "little") + t)
    return h.hexdigest()


@contextlib.contextmanager
def stdout_to_stderr():
    """A peer's own prints (gigatoken's, from Rust) go to stderr: stdout is the result."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def run_bytepair(path: str, vocab_size: int, compat: str = "cs336") -> dict:
    import bytepair

    t = time.perf_counter()
    tok = bytepair.train(
        path, vocab_size=vocab_size, special_tokens=[EOT], progress=False, compat=compat
    )
    wall = time.perf_counter() - t
    return {
        "wall": wall,
        "merges": len(tok.merges),
        "learned": learned(a + b for a, b in tok.merges),
    }


def run_bytepair_extend(path: str, vocab_size: int) -> dict:
    """Extends a tokenizer of half the vocab (trained first, untimed) to vocab_size."""
    import bytepair

    half = 256 + (vocab_size - 256) // 2
    base = bytepair.train(path, vocab_size=half, special_tokens=[EOT], progress=False)
    base_peak = peak_rss_mb()  # the next train() resets VmHWM to measure its own peak
    t = time.perf_counter()
    tok = bytepair.train(path, vocab_size=vocab_size, base=base, progress=False)
    return {
        "wall": time.perf_counter() - t,
        "merges": len(tok.merges) - len(base.merges),
        "rss_floor_mb": base_peak,
    }


def run_bytepair_superbpe(path: str, vocab_size: int) -> dict:
    """SuperBPE with the transition at 90% of the vocab (the paper's 180k of 200k)."""
    import bytepair

    t = time.perf_counter()
    transition = vocab_size * 9 // 10
    tok = bytepair.train(path, vocab_size, [EOT], progress=False, superword_transition=transition)
    return {"wall": time.perf_counter() - t, "merges": len(tok.merges)}


def run_bytepair_phases(path: str, vocab_size: int) -> dict:
    from bytepair import _core

    t0 = time.perf_counter()
    counter = _core.PretokenCounter("gpt2", [EOT])
    counts = _core.PretokenCounts()
    counter.count_files(counts, [path])
    t1 = time.perf_counter()
    merges = _core.train_merges(counts, vocab_size - 257)
    t2 = time.perf_counter()
    return {"count": t1 - t0, "merge": t2 - t1, "words": len(counts), "merges": len(merges)}


def run_hf(path: str, vocab_size: int) -> dict:
    from bytepair import patterns
    from bytepair.formats.gpt2 import to_bytes
    from bytepair.formats.huggingface import hf_regex
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    t = time.perf_counter()
    tok = Tokenizer(models.BPE())
    # The pattern as Oniguruma reads it the way bytepair does: what compat="huggingface"
    # reproduces (and writes into tokenizer.json).
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(hf_regex(patterns.resolve("gpt2"))), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([path], trainer)
    wall = time.perf_counter() - t
    merges = json.loads(tok.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    new = (to_bytes(a + b, "HF's merges") for a, b in pairs)
    return {"wall": wall, "merges": len(tok.get_vocab()) - 257, "learned": learned(new)}


def run_rustbpe(path: str, vocab_size: int) -> dict:
    import rustbpe
    from bytepair.patterns import GPT2

    t = time.perf_counter()
    tok = rustbpe.Tokenizer()
    # rustbpe takes str only: invalid UTF-8 (if any) becomes U+FFFD. It has no special
    # tokens, so it gets the documents between them, as bytepair counts them (read a line at
    # a time: the file whole would double its peak RSS); and its vocab_size one less, for
    # the same number of merges.
    with open(path, encoding="utf-8", errors="replace") as f:
        tok.train_from_iterator(documents_of(f), vocab_size - 1, pattern=GPT2)
    wall = time.perf_counter() - t
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda token_rank: token_rank[1])
    new = (bytes(token) for token, rank in ranks if rank >= 256)
    return {"wall": wall, "merges": tok.vocab_size - 256, "learned": learned(new)}


def documents_of(lines):
    """The texts between the special tokens of a text read a line at a time."""
    held: list[str] = []
    for line in lines:
        while EOT in line:
            head, line = line.split(EOT, 1)
            held.append(head)
            yield "".join(held)
            held = []
        held.append(line)
    if held:
        yield "".join(held)


def run_gigatoken(path: str, vocab_size: int) -> dict:
    import gigatoken

    t = time.perf_counter()
    with stdout_to_stderr():
        _, merges = gigatoken.train_bpe(path, vocab_size, [EOT], tie_breaking="raw_token_ids")
    wall = time.perf_counter() - t
    return {"wall": wall, "merges": len(merges), "learned": learned(a + b for a, b in merges)}


RUNNERS = {
    "bytepair": run_bytepair,
    "bytepair-phases": run_bytepair_phases,
    "hf": run_hf,
    "rustbpe": run_rustbpe,
    "gigatoken": run_gigatoken,
    "bytepair-hf": lambda path, vocab_size: run_bytepair(path, vocab_size, "huggingface"),
    "bytepair-rustbpe": lambda path, vocab_size: run_bytepair(path, vocab_size, "rustbpe"),
    "bytepair-extend": run_bytepair_extend,
    "bytepair-superbpe": run_bytepair_superbpe,
}


def child(name: str, path: Path, vocab_size: int) -> dict:
    """Runs one trainer in a fresh process, which reports its own peak RSS (MB)."""
    cmd = [sys.executable, __file__, "--child", name, "--corpus", str(path)]
    cmd += ["--vocab-size", str(vocab_size)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed with exit code {proc.returncode}")
    return json.loads(proc.stdout)


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM). Not wait4's ru_maxrss: that one survives exec, so a
    child forked from this (corpus-holding) parent would report the parent's size."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="a text file (default: en-prose prefix)")
    ap.add_argument("--mb", type=int, default=50, help="MB of en-prose when no --corpus")
    ap.add_argument("--vocab-size", type=int, default=32_000)
    ap.add_argument("--runs", type=int, default=3, help="median of this many runs")
    ap.add_argument("--trainers", default=",".join(TRAINERS))
    ap.add_argument("--out-dir", type=Path, default=ROOT / "bench-out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        result = RUNNERS[args.child](str(args.corpus), args.vocab_size)
        result["rss_mb"] = max(peak_rss_mb(), result.pop("rss_floor_mb", 0.0))
        print(json.dumps(result))
        return

    path = args.corpus or corpus_path(args.mb, args.out_dir)
    mb = path.stat().st_size / 1e6
    print(
        f"corpus {path} ({mb:.1f} MB), vocab_size {args.vocab_size}, GPT-2 pattern, "
        f"{EOT}, {os.cpu_count()} cores, median of {args.runs} run(s)"
    )
    results = {}
    for name in [*args.trainers.split(","), "bytepair-phases"]:
        runs = [child(name, path, args.vocab_size) for _ in range(args.runs)]
        results[name] = {
            k: statistics.median(r[k] for r in runs) if k != "learned" else runs[0][k]
            for k in runs[0]
        }

    print(f"\n{'trainer':<16} {'wall s':>8} {'MB/s':>8} {'peak RSS MB':>12} {'merges':>8}")
    for name in args.trainers.split(","):
        r = results[name]
        print(
            f"{name:<16} {r['wall']:8.2f} {mb / r['wall']:8.1f} {r['rss_mb']:12.0f} "
            f"{r['merges']:8.0f}"
        )
    ph = results["bytepair-phases"]
    print(
        f"\nbytepair phases: pre-tokenize + count {ph['count']:.2f} s "
        f"({mb / ph['count']:.1f} MB/s, {mb / ph['count'] / (os.cpu_count() or 1):.1f} MB/s "
        f"per core, {ph['words']:.0f} distinct pre-tokens); merge {ph['merge']:.2f} s "
        f"for {ph['merges']:.0f} merges"
    )
    if "bytepair-superbpe" in results:
        cost = results["bytepair-superbpe"]["wall"] / results["bytepair"]["wall"]
        print(f"bytepair-superbpe costs {cost:.1f}x plain bytepair training")
    for ours, peer in PAIRS:
        if ours in results and peer in results:
            a, b = results[ours], results[peer]
            same = ""
            if (ours, peer) in SAME_MERGES:
                same = ", the same merges" if a["learned"] == b["learned"] else ", OTHER MERGES"
            print(
                f"{ours} vs {peer}: {b['wall'] / a['wall']:.1f}x faster, "
                f"{b['rss_mb'] / a['rss_mb']:.2f}x less peak RSS{same}"
            )


if __name__ == "__main__":
    main()
