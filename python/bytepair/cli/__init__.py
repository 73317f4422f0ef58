"""The ``bytepair`` command line (also ``python -m bytepair``).

    bytepair train corpus.txt -o tok.json --vocab-size 8000 --special-token '<|endoftext|>'
    bytepair encode -t tok.json < text.txt > ids.txt     # ids: one line, space-separated
    bytepair decode -t tok.json < ids.txt                # the text back, byte for byte
    bytepair encode -t tok.json corpus.txt -o corpus.npy # uint16/uint32 array (encode_file)
    bytepair tokenize -t o200k_base "strawberry"         # token boundaries in colour
    bytepair tokenize -t tok/ --chat conversation.json   # by role; the assistant mask
    bytepair inspect tok.json --audit --corpus train.txt # unreachable and unused tokens
    bytepair compare gpt2 o200k_base tok.json --corpus en.txt zh.txt --plot out.png
    bytepair compare o200k_base --corpus en.txt de.txt --reference en.txt --audit --plot out.png
    bytepair convert tok.json tok.tiktoken

``-t`` takes a tokenizer file in any supported format or a tiktoken encoding name
(``gpt2``, ``r50k_base``, ``p50k_base``, ``cl100k_base``, ``o200k_base``; needs tiktoken).
Errors a user can fix print one line to stderr and exit with status 2, never a traceback.
No command replaces a file that exists unless given ``--force``.
Colours and progress bars appear only on a terminal, and never with ``--quiet`` or NO_COLOR.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence

from bytepair import __version__
from bytepair.cli import arguments, compare, convert, encode, inspect, tokenize, train
from bytepair.cli.io import EXIT_USAGE, UsageError
from bytepair.errors import BytepairError

__all__ = ["main"]


def build_parser() -> arguments.Parser:
    """The ``bytepair`` parser: one subcommand per module of this package."""
    parents = arguments.parents()
    parser = arguments.Parser(
        prog="bytepair",
        description="Byte-level BPE tokenizers: train, encode, "
        "decode, look at tokens, compare tokenizers, convert formats.",
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=arguments.Parser)
    sub.required = True
    for command in (train, encode, tokenize, inspect, compare, convert):
        command.add_parsers(sub, parents)
    return parser


def _warning_line(message, category, filename, lineno, line=None) -> str:
    return f"bytepair: warning: {message}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI; returns the exit status (0 ok, 2 a mistake the user can fix).

    BYTEPAIR_DEBUG=1 lets errors through with their traceback, for bug reports.
    """
    warnings.formatwarning = _warning_line
    if os.environ.get("BYTEPAIR_DEBUG"):
        args = build_parser().parse_args(argv)
        return args.run(args)
    try:
        args = build_parser().parse_args(argv)
        return args.run(args)
    except UsageError as e:
        return _fail(str(e))
    except (BytepairError, OSError, ValueError, KeyError, ImportError) as e:
        # Our typed errors name the bad value; OSError names the file; ImportError the
        # optional package to install (jinja2 for chat templates, tiktoken, pyarrow).
        if isinstance(e, BrokenPipeError):  # `bytepair encode ... | head`: not an error
            # Point stdout at /dev/null so that flushing it at exit cannot fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        if isinstance(e, OSError) and e.filename is not None and e.strerror:
            return _fail(f"{e.filename}: {e.strerror}")
        if isinstance(e, (BytepairError, ImportError)):
            return _fail(str(e))
        return _fail(f"{type(e).__name__}: {e}")
    except KeyboardInterrupt:
        return _fail("interrupted", status=130)


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    # One line, always: a multi-line message is folded so scripts can grep it.
    print("bytepair: error: " + " ".join(message.split()), file=sys.stderr)
    return status
