"""Tokenizers side by side: bytes/token on each corpus and shared vocabulary, as tables and
a bar chart, with ``--audit`` a Zipf plot: the ``bytepair compare`` command.

>>> import bytepair
>>> base = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
>>> print(bytes_per_token_table(measure({"bytes": base}, {"en": b"hello"})))
corpus  bytes
en       1.00
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bytepair import audit, documents, metrics
from bytepair.cli import arguments, zipf
from bytepair.cli.io import (
    UsageError,
    check_output,
    info,
    is_stdout,
    load_tokenizer,
    options_for,
    show_progress,
    write_output,
)
from bytepair.cli.report import bytes_per_token, regular_tokens
from bytepair.corpus_files import open_corpus
from bytepair.errors import BytepairError
from bytepair.text_table import grid
from bytepair.tokenizer import Tokenizer


def read_corpus(path: str | os.PathLike, max_bytes: int | None) -> bytes:
    """The first ``max_bytes`` of a corpus (``.xz``, ``.gz``, ``.bz2`` are decompressed),
    cut back to a whole line so that the last word is not cut in two."""
    with open_corpus(path) as f:
        data = f.read() if max_bytes is None else f.read(max_bytes)
    if max_bytes is not None and len(data) == max_bytes:
        cut = data.rfind(b"\n")
        if cut > 0:
            data = data[: cut + 1]
    return data


def measure(
    tokenizers: Mapping[str, Tokenizer], corpora: Mapping[str, bytes]
) -> dict[str, dict[str, float]]:
    """corpus name -> tokenizer name -> bytes/token."""
    return {
        c: {t: bytes_per_token(tok, data) for t, tok in tokenizers.items()}
        for c, data in corpora.items()
    }


def bytes_per_token_table(table: Mapping[str, Mapping[str, float]]) -> str:
    """:func:`measure`'s result as text: one row per corpus, one column per tokenizer."""
    columns = list(next(iter(table.values()))) if table else []
    return grid("corpus", list(table), columns, lambda r, c: f"{table[r][c]:.2f}")


def overlap_table(tokenizers: Mapping[str, Tokenizer]) -> str:
    """Shared regular tokens (by bytes) between each pair, and that as a percentage of the
    row tokenizer's vocabulary.

    >>> import bytepair
    >>> a = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    >>> b = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
    >>> print(overlap_table({"a": a, "b": b}))
    shared           a           b
    a       256 100.0%  256 100.0%
    b       256  99.6%  257 100.0%
    """
    sets = {name: set(regular_tokens(tok).values()) for name, tok in tokenizers.items()}
    names = list(tokenizers)

    def cell(r: str, c: str) -> str:
        shared = len(sets[r] & sets[c])
        return f"{shared:,} {100 * shared / max(1, len(sets[r])):5.1f}%"

    return grid("shared", names, names, cell)


def check_plotting() -> None:
    """Raises a clear error when matplotlib (the ``plot`` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise BytepairError(
            "--plot needs matplotlib, which is not installed: pip install 'bytepair[plot]'"
        ) from None


def plot(
    table: Mapping[str, Mapping[str, float]],
    path: str | os.PathLike,
    panel: Callable[[Any], None] | None = None,
) -> None:
    """A grouped bar chart of bytes/token (one group per corpus, one bar per tokenizer);
    ``panel`` draws a second plot beside it on the axes it is given (``--audit``'s Zipf
    plot, ``bytepair.zipf.panel``)."""
    check_plotting()
    import matplotlib

    matplotlib.use("Agg")  # no display needed: we only write a file
    import matplotlib.pyplot as plt

    corpora = list(table)
    names = list(next(iter(table.values()))) if table else []
    width = 0.8 / max(1, len(names))
    width_in = max(6, 1.5 * len(corpora) * max(1, len(names)) ** 0.5)
    if panel is None:
        fig, ax = plt.subplots(figsize=(width_in, 4))
    else:
        fig, (ax, right) = plt.subplots(1, 2, figsize=(width_in + 6, 4.5))
        panel(right)
    for k, name in enumerate(names):
        xs = [c + (k - (len(names) - 1) / 2) * width for c in range(len(corpora))]
        ax.bar(xs, [table[c][name] for c in corpora], width, label=name)
    ax.set_xticks(range(len(corpora)), corpora)
    ax.set_ylabel("bytes per token (higher = better compression)")
    ax.set_title("bytepair compare")
    ax.legend()
    fig.tight_layout()
    png = io.BytesIO()
    try:
        fig.savefig(png, format="png", dpi=120)
    finally:
        plt.close(fig)
    write_output(os.fspath(path), png.getvalue())


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``compare``."""
    p = sub.add_parser(
        "compare",
        parents=[parents.common, parents.load],
        help="bytes/token per tokenizer per corpus, and vocabulary overlap (--pattern and "
        "--special-token: of those that do not store them)",
    )
    p.add_argument(
        "tokenizers",
        nargs="*",
        metavar="TOKENIZER",
        help="tokenizer files in any format, or tiktoken encoding names",
    )
    p.add_argument("-t", "--tokenizer", help="one more tokenizer")
    p.add_argument(
        "--corpus",
        nargs="+",
        default=[],
        metavar="FILE",
        help="text files (.xz, .gz, .bz2 are decompressed); without them, only the "
        "vocabulary overlap is shown",
    )
    p.add_argument(
        "--max-bytes",
        type=arguments.non_negative,
        default=1_000_000,
        help="read at most this much of each corpus (default 1 MB; 0: all)",
    )
    p.add_argument(
        "--reference",
        metavar="FILE",
        help="a corpus that says what the others say (translations): adds a parity table "
        "of token counts relative to it; the corpora are then read whole",
    )
    p.add_argument(
        "--audit",
        action="store_true",
        help="count unreachable, undecodable and unused tokens; with --plot, add a Zipf plot",
    )
    p.add_argument("--plot", metavar="OUT.png", help="draw a bar chart (needs matplotlib)")
    p.set_defaults(run=run)


def run(args) -> int:
    names = args.tokenizers + ([args.tokenizer] if args.tokenizer else [])
    if not names:
        raise arguments.no_tokenizer(
            "compare needs at least one tokenizer: bytepair compare T1 T2 --corpus F", args.corpus
        )
    if not args.corpus and (args.audit or args.plot or args.reference):
        raise UsageError("compare: --audit, --plot and --reference measure --corpus FILE ...")
    if args.plot:
        check_plotting()  # before the slow part, not after it
        if not is_stdout(args.plot):
            documents.check_output(args.corpus, args.plot)  # the picture over its text
            if Path(args.plot).suffix.lower() not in ("", ".png"):
                # The chart is always a PNG: named .svg or .pdf, a viewer fails to open it.
                raise UsageError(f"--plot {args.plot}: the chart is a PNG; name it .png")
        check_output(args, args.plot, "--plot")
    options = arguments.load_options(args)
    per_spec = {spec: options_for(spec, options) for spec in names}
    if options and not any(per_spec.values()):
        raise UsageError(
            "--pattern and --special-token are for a tokenizer file that does not store them "
            "(a rank file, GPT-2 files), and none of these is one"
        )
    tokenizers: dict[str, Tokenizer] = {}
    for spec, label in zip(names, labels(names, "tokenizer"), strict=True):
        info(args, f"loading {spec}")
        tokenizers[label] = load_tokenizer(spec, per_spec[spec])
    if not args.corpus:
        # Two trainings' shared tokens need no text (the tutorial's vocabulary overlap).
        print("vocabulary overlap (shared regular tokens, % of the row's vocabulary):")
        print(overlap_table(tokenizers))
        return 0
    # Parity compares translations: cut at --max-bytes they would stop at different places.
    limit = None if args.max_bytes == 0 or args.reference else args.max_bytes
    paths = list(args.corpus)
    if args.reference is not None:
        same = [p for p in paths if os.path.realpath(p) == os.path.realpath(args.reference)]
        if same:
            args.reference = same[0]
        else:
            paths.insert(0, args.reference)
    corpora = {}
    reference = None
    for path in paths:
        if not os.path.isfile(path):
            raise UsageError(f"corpus {path!r} does not exist or is not a file")
    for path, name in zip(paths, labels(paths, "corpus"), strict=True):
        corpora[name] = read_corpus(path, limit)
        if path == args.reference:
            reference = name
    info(args, "encoding " + ", ".join(f"{k} ({len(v):,} bytes)" for k, v in corpora.items()))
    results = metrics.compare(tokenizers, corpora, progress=show_progress(args))
    table = {c: {t: m.bytes_per_token for t, m in row.items()} for c, row in results.items()}
    print("bytes per token (higher = fewer tokens for the same text):")
    print(bytes_per_token_table(table))
    print()
    print("vocabulary overlap (shared regular tokens, % of the row's vocabulary):")
    print(overlap_table(tokenizers))
    print()
    print(
        "metrics (tokens/word: fertility; Rényi efficiency of order 2.5; share of the "
        "vocabulary used; see docs/metrics.md):"
    )
    print(metrics.table(results))
    if reference is not None:
        print()
        print(f"parity (token count over {reference}'s, which must say the same thing):")
        print(metrics.parity_table(results, reference))
    panel = None
    if args.audit:
        counts = {
            t: dict(sum((Counter(row[t].counts) for row in results.values()), Counter()))
            for t in tokenizers
        }
        print()
        print("audit (unused: regular tokens that none of the corpora above uses):")
        print(audit.summary_table(tokenizers, counts))
        never = {t: len(audit.unused(tok, counts[t])) for t, tok in tokenizers.items()}
        panel = zipf.panel(counts, never)
    if args.plot:
        plot(table, args.plot, panel)
        info(args, f"wrote {args.plot}")
    return 0


def labels(specs: list[str], what: str) -> list[str]:
    """Column and row names: a file's shortest path suffix that no other's shares (names
    of tiktoken encodings as given); UsageError for one given twice.

    >>> labels(["a/tokenizer.json", "b/tokenizer.json", "o200k_base"], "tokenizer")
    ['a/tokenizer.json', 'b/tokenizer.json', 'o200k_base']
    >>> labels(["runs/x/en.txt", "runs/y/en.txt", "zh.txt"], "corpus")
    ['x/en.txt', 'y/en.txt', 'zh.txt']
    """
    parts = [Path(s).parts for s in specs]
    for i, p in enumerate(parts):
        if p in parts[:i]:
            raise UsageError(f"compare: {what} {specs[i]!r} is given twice")
    take = [1] * len(specs)
    while True:
        shown = [str(Path(*p[-k:])) for p, k in zip(parts, take, strict=True)]
        clashes = [i for i, label in enumerate(shown) if shown.count(label) > 1]
        grow = [i for i in clashes if take[i] < len(parts[i])]
        if not grow:  # distinct paths part at last: a whole path against a longer one's suffix
            return shown
        for i in grow:
            take[i] += 1
