"""``bytepair encode`` and ``bytepair decode``: text to ids (one line of space-separated
ids, or a ``.npy`` array) and back, byte for byte.

>>> parse_ids(b"1 2  3", "stdin")
[1, 2, 3]
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import stat
import sys

from bytepair import corpus_check, documents, token_shards
from bytepair.cli import arguments
from bytepair.cli.io import (
    UsageError,
    check_output,
    info,
    is_stdout,
    load_tokenizer,
    read_input,
    show_progress,
    special_policy,
    write_output,
)
from bytepair.errors import DisallowedSpecialError
from bytepair.progress import Bar


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``encode`` and ``decode``."""
    p = sub.add_parser(
        "encode",
        parents=[parents.common, parents.tokenizer, parents.specials],
        help="text to ids: one line of space-separated ids (or .npy)",
    )
    p.add_argument(
        "input",
        nargs="*",
        help="input files, directories or globs: text, .jsonl, .parquet (default: stdin)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="output file (default: stdout); .npy uses encode_file; a directory with "
        "--shard-tokens",
    )
    p.add_argument(
        "--shard-tokens",
        type=arguments.positive,
        metavar="N",
        help="write DIR/shard_00000.npy, ... of N ids each, documents.npy and index.json "
        "(resumable: a rerun skips finished shards)",
    )
    p.add_argument(
        "--text-field", default="text", help="the JSON field or Parquet column of the text"
    )
    p.add_argument(
        "--document-separator",
        metavar="TOKEN",
        help="a special token to put after each document's ids (a text file is one "
        "document); added whatever --allow-special / --special-as-text say of the input",
    )
    p.set_defaults(run=run_encode)

    p = sub.add_parser(
        "decode",
        parents=[parents.common, parents.tokenizer],
        help="ids (whitespace-separated, or a .npy file) to text",
    )
    p.add_argument("input", nargs="?", help="input file (default: stdin)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.set_defaults(run=run_decode)


def run_encode(args) -> int:
    try:
        return _encode(args)
    except DisallowedSpecialError as e:
        raise UsageError(
            (f"{e.where}: " if e.where else "")
            + f"the input contains the special token {e.token!r}: pass --allow-special to "
            f"encode it as a special token, or --special-as-text to encode it as text"
        ) from None


def _encode(args) -> int:
    inputs = [] if args.input in ([], ["-"]) else args.input
    if args.shard_tokens is not None:
        if not args.output or not inputs:
            raise UsageError("encode --shard-tokens N needs input files and -o DIR")
        tok = load_tokenizer(args.tokenizer, arguments.load_options(args))
        index = token_shards.write(
            tok,
            inputs,
            args.output,
            args.shard_tokens,
            **special_policy(args),
            text_field=args.text_field,
            document_separator=args.document_separator,
            progress=show_progress(args),
        )
        info(
            args,
            f"wrote {len(index['shards'])} shards, {index['tokens']:,} ids of "
            f"{index['documents']:,} documents, to {args.output}",
        )
        return 0
    if not is_stdout(args.output) and inputs:
        documents.check_output(inputs, args.output)  # ids written over the text they encode
    check_output(args, args.output)  # second: --force would not make the above writable
    tok = load_tokenizer(args.tokenizer, arguments.load_options(args))
    if args.output and args.output.endswith(".npy"):
        if not inputs:
            raise UsageError(
                "encode -o FILE.npy reads files, directories or quoted globs, not stdin"
            )
        n = tok.encode_file(
            inputs,
            args.output,
            **special_policy(args),
            progress=show_progress(args),
            text_field=args.text_field,
            document_separator=args.document_separator,
        )
        info(args, f"wrote {n:,} ids to {args.output}")
        return 0
    if (
        len(inputs) > 1
        or args.document_separator
        or (inputs and documents.kind(inputs[0]) != "text")
    ):
        raise UsageError(
            "several inputs, .jsonl/.parquet files and --document-separator need "
            "-o FILE.npy or --shard-tokens N -o DIR"
        )
    if (
        inputs
        and not os.path.isfile(inputs[0])
        and (os.path.isdir(inputs[0]) or glob.has_magic(inputs[0]))
    ):
        # Not one file to stream: a directory or glob is a corpus, as encode_file reads it.
        raise UsageError(
            f"{inputs[0]} is a {'directory' if os.path.isdir(inputs[0]) else 'glob'}: a "
            "corpus of files needs -o FILE.npy or --shard-tokens N -o DIR; ids as text "
            "stream one file or stdin"
        )
    # Read, encode and write 1 MB at a time, so input of any size fits in memory: the stream
    # keeps only the text after its last safe cut (docs/design.md).
    args.input = inputs[0] if inputs else None
    stdin = args.input is None
    if not stdin:
        corpus_check.check_read_as_text([args.input])
    # A bar over the input's bytes on stderr, unless the ids go to that terminal too.
    show = show_progress(args) and not (is_stdout(args.output) and sys.stdout.isatty())
    with contextlib.nullcontext(sys.stdin.buffer) if stdin else open(args.input, "rb") as src:
        name = "stdin" if stdin else os.path.basename(args.input)
        with Bar(name, total=_regular_size(src), unit="B", enabled=show) as bar:

            def chunks():
                done = 0
                while block := src.read(1 << 20):
                    done += len(block)
                    bar.update(done)
                    yield block

            _write_ids(args.output, tok.encode_iterable(chunks(), **special_policy(args)))
    return 0


def _regular_size(src) -> int | None:
    """The size of the file ``src`` reads, or None for a pipe or terminal (no ETA then)."""
    try:
        st = os.fstat(src.fileno())
    except (OSError, ValueError):  # no descriptor (a stream in memory)
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _write_ids(output: str | None, ids) -> None:
    """``ids`` as one line of space-separated decimals, written as they come."""

    def lines():
        sep = b""
        while part := list(itertools.islice(ids, 1 << 16)):
            yield sep + " ".join(map(str, part)).encode("ascii")
            sep = b" "
        yield b"\n"

    write_output(output, lines())


def parse_ids(data: bytes, source: str) -> list[int]:
    """The ids of ``data``: decimal digits only (``int`` would also take ``1_0`` and ``+7``).

    >>> parse_ids(b"7 +7", "stdin")
    Traceback (most recent call last):
    ...
    bytepair.cli.io.UsageError: stdin: item 2 is '+7', not a token id ...
    """
    ids = []
    for n, word in enumerate(data.split()):
        if not word.isdigit():  # bytes: ASCII digits only
            raise UsageError(
                f"{source}: item {n + 1} is {word.decode('utf-8', 'replace')!r}, not a token id "
                "(decode expects whitespace-separated decimal integers, as encode writes them)"
            )
        ids.append(int(word))
    return ids


def run_decode(args) -> int:
    if not is_stdout(args.output) and args.input not in (None, "-"):
        documents.check_output([args.input], args.output)  # text written over its ids
    check_output(args, args.output)
    tok = load_tokenizer(args.tokenizer, arguments.load_options(args))
    if args.input and args.input.endswith(".npy"):
        try:
            import numpy
        except ImportError:
            raise UsageError("decoding a .npy file needs numpy: pip install numpy") from None
        array = numpy.load(args.input)
        # Else a row of ids ([104, 105]) or a float was refused as an "unknown token id".
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise UsageError(
                f"{args.input}: a {array.ndim}-D {array.dtype} array; decode takes a 1-D "
                "array of integer token ids, as encode -o FILE.npy writes"
            )
        ids = array.tolist()
    else:
        ids = parse_ids(read_input(args.input), args.input or "stdin")
    write_output(args.output, tok.decode_bytes(ids))
    return 0
