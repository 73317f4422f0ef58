"""``bytepair train``: trains on files, saves the tokenizer, prints what it made (time,
memory, vocab, bytes/token on a held-out slice, the longest tokens)."""

from __future__ import annotations

import time

from bytepair import documents
from bytepair.cli import arguments, holdout, report
from bytepair.cli.io import (
    UsageError,
    check_output,
    format_for,
    load_tokenizer,
    options_for,
    show_progress,
    tokenizer_files,
)
from bytepair.errors import CorpusError
from bytepair.text_table import plural
from bytepair.training_report import documents_line, peak_memory_mb


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``train``."""
    p = sub.add_parser("train", parents=[parents.common], help="train a tokenizer on text files")
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="the corpus: text files, .jsonl, .parquet, directories or globs",
    )
    p.add_argument("-o", "--output", required=True, help="where to save the tokenizer")
    p.add_argument(
        "--vocab-size",
        type=arguments.vocab_size,
        required=True,
        help="ids in the trained vocab: the 256 bytes, the merges and the special tokens",
    )
    p.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="T",
        help="a special token (repeat for several)",
    )
    p.add_argument(
        "--pattern", default=None, help="gpt2 (default), cl100k, o200k or a regex; --base: its own"
    )
    p.add_argument(
        "--compat",
        choices=["cs336", "huggingface", "rustbpe"],
        default="cs336",
        help="whose rules and ids to reproduce exactly (default cs336; docs/tutorial.md)",
    )
    p.add_argument(
        "--base",
        metavar="TOKENIZER",
        help="extend this tokenizer (a file or a tiktoken name): keep its ids, add tokens "
        "up to --vocab-size",
    )
    p.add_argument(
        "--max-token-length",
        type=arguments.positive,
        default=None,
        help="with --compat huggingface: BpeTrainer's max_token_length",
    )
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="ray: count on a Ray cluster (RAY_ADDRESS, else a local one; FILE may be a "
        "directory or glob; needs pip install bytepair[ray])",
    )
    p.add_argument(
        "--checkpoint-dir",
        metavar="DIR",
        help="with --engine ray: keep each shard's counts in DIR and resume from them",
    )
    p.add_argument(
        "--min-frequency",
        type=arguments.positive,
        default=1,
        help="stop merging when the most frequent pair occurs fewer times (default 1)",
    )
    p.add_argument("--threads", type=arguments.positive, default=None, help="default: all cores")
    p.add_argument(
        "--format",
        choices=["huggingface", "tiktoken", "gpt2"],
        help="output format (default: from the name; .tiktoken, dir/, else json)",
    )
    p.add_argument(
        "--sample-documents",
        type=arguments.positive,
        metavar="N",
        help="train on a uniform random sample of N documents (all of them when there "
        "are N or fewer), cut at --document-separator",
    )
    p.add_argument(
        "--seed",
        type=arguments.seed,
        default=0,
        help="which sample --sample-documents draws (default 0)",
    )
    p.add_argument(
        "--document-separator",
        metavar="T",
        help="the text between documents (default: the first --special-token)",
    )
    p.add_argument(
        "--holdout",
        type=arguments.fraction,
        default=0.0,
        help="fraction of the corpus held out of training, at most 1 MB, cut from the end "
        "of the last file, to measure bytes/token on unseen text (default 0: train on "
        "everything, as bytepair.train does)",
    )
    p.add_argument(
        "--text-field", default="text", help="the JSON field or Parquet column of the text"
    )
    p.add_argument(
        "--superword-transition",
        type=arguments.positive,
        metavar="T",
        help="SuperBPE: plain BPE until T tokens (bytes and merges), then merges across "
        "whitespace (bytepair.superbpe)",
    )
    p.add_argument(
        "--superword-pattern", help="stage 2's pattern (default: split only around numbers)"
    )
    p.add_argument(
        "--show", type=arguments.positive, default=10, help="how many longest tokens to show"
    )
    p.set_defaults(run=run)


def run(args) -> int:
    import bytepair

    # --engine ray takes files, globs or directories that every node sees, and no byte
    # ranges, so it gets no held-out slice.
    ray = args.engine == "ray"
    if args.checkpoint_dir and not ray:
        raise UsageError("--checkpoint-dir needs --engine ray")
    if args.seed and not args.sample_documents:
        raise UsageError("--seed picks the sample of --sample-documents N: give both")
    for given, flag in ((args.holdout, "--holdout"), (args.sample_documents, "--sample-documents")):
        if ray and given:
            raise UsageError(f"{flag} needs --engine local: the ray engine counts whole files")
    given = list(args.files)
    if not ray:
        try:
            args.files = documents.corpus_paths(args.files)
        except CorpusError as e:
            raise UsageError(str(e)) from None
        if args.holdout and any(documents.kind(p) != "text" for p in args.files):
            raise UsageError("--holdout cuts plain-text files: not .jsonl or .parquet ones")
    fmt = format_for(args.output, args.format)
    written = tokenizer_files(args.output, fmt)
    for path in written:  # first: --force would not make these writable
        documents.check_output(given, path)
    check_output(args, args.output, files=written, stream=False)
    start = time.perf_counter()
    paths, held_out = (args.files, b"") if ray else holdout.carve(args.files, args.holdout)
    tok = bytepair.train(
        paths,
        vocab_size=args.vocab_size,
        special_tokens=args.special_token,
        pattern=args.pattern,
        min_frequency=args.min_frequency,
        threads=args.threads,
        progress=show_progress(args),
        engine=args.engine,
        checkpoint_dir=args.checkpoint_dir,
        sample_documents=args.sample_documents,
        seed=args.seed,
        document_separator=args.document_separator,
        compat=args.compat,
        base=_base(args),
        max_token_length=args.max_token_length,
        text_field=args.text_field,
        superword_transition=args.superword_transition,
        superword_pattern=args.superword_pattern,
    )
    wall = time.perf_counter() - start
    tok.save(args.output, format=fmt)
    memory = peak_memory_mb()
    trained = tok.training_report
    lines = [
        f"saved           {args.output} ({fmt})",
        f"wall time       {wall:.2f} s",
        f"peak memory     {memory:,.0f} MB" if memory is not None else "peak memory     n/a",
        f"vocab size      {tok.vocab_size:,} ({len(tok.merges):,} merges, "
        f"{plural(len(tok.special_tokens), 'special token')})",
    ]
    if trained is not None and trained.documents is not None:
        lines.append(
            f"trained on      {documents_line(trained.documents, trained.documents_in_corpus)}"
            + (f", seed {args.seed}" if args.sample_documents else "")
        )
    if held_out:
        lines.append(
            f"bytes/token     {report.bytes_per_token(tok, held_out):.3f} on the last "
            f"{len(held_out):,} bytes of {args.files[-1]}, held out of training"
        )
    else:
        lines.append(
            "bytes/token     n/a (--holdout 0.01 measures it on text kept out of training)"
        )
    lines.append(
        "longest tokens  "
        + "  ".join(report.token_repr(b) for _, b in report.longest_tokens(tok, args.show))
    )
    if not args.quiet:  # -q: nothing but errors and warnings
        print("\n".join(lines))
    return 0


def _base(args):
    """The tokenizer --base names; a rank file, which stores no pattern, takes --pattern."""
    if not args.base:
        return None
    given = {"pattern": args.pattern} if args.pattern else {}
    return load_tokenizer(args.base, options_for(args.base, given))
