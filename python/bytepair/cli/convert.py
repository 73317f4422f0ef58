"""``bytepair convert``: a tokenizer file from one format to another."""

from __future__ import annotations

import os

from bytepair import conversion, documents
from bytepair.cli import arguments
from bytepair.cli.io import UsageError, check_output, format_for, info, tokenizer_files


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``convert``."""
    p = sub.add_parser(
        "convert",
        parents=[parents.common, parents.load],
        help="convert between tokenizer formats",
    )
    p.add_argument("input", metavar="IN", help="the tokenizer file to read, in any format")
    p.add_argument(
        "output", metavar="OUT", help="where to write it: a file, or dir/ for GPT-2 files"
    )
    p.add_argument(
        "--to",
        "--format",  # train's name for the same choice
        dest="to",
        choices=["huggingface", "tiktoken", "gpt2"],
        help="output format (default: from OUT's name)",
    )
    p.set_defaults(run=run)


def run(args) -> int:
    if not os.path.exists(args.input):
        raise UsageError(f"tokenizer file {args.input!r} does not exist")
    fmt = format_for(args.output, args.to)
    written = tokenizer_files(args.output, fmt)
    for path in written:  # first: --force would not make these writable
        documents.check_output([args.input], path)
    check_output(args, args.output, "OUT", written, stream=False)
    # Only for inputs that do not store them (.tiktoken, GPT-2 files): formats.load says so.
    conversion.convert(args.input, args.output, to=fmt, **arguments.load_options(args))
    info(args, f"wrote {args.output} ({fmt})")
    return 0
