"""The parser's parts that every command shares: the one-line usage error, the parent
parsers (``-q``, ``-t``, the special-token flags) and the argument types.

>>> vocab_size("32_000")
32000
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from bytepair.cli.io import UsageError


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (its default prints the whole usage first)."""

    def error(self, message: str):
        command = self.prog.partition(" ")[2]  # "bytepair train" -> "train"
        where = f"{command}: " if command else ""
        raise UsageError(f"{where}{message} (see {self.prog} --help)")


def positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be > 0")
    return value


def vocab_size(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 256:
        raise argparse.ArgumentTypeError(
            f"{text} is too small: the vocab holds the 256 single bytes (plus one id per "
            "special token), so at least 256"
        )
    return value


def seed(text: str) -> int:
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be in [0, 1)")
    return value


@dataclass(frozen=True)
class Parents:
    """The parent parsers a subcommand picks from: ``-q``; ``-t TOKENIZER``; and
    ``--allow-special`` / ``--special-as-text``."""

    common: argparse.ArgumentParser
    tokenizer: argparse.ArgumentParser
    specials: argparse.ArgumentParser


def parents() -> Parents:
    """The shared parent parsers, built afresh for each top-level parser."""
    common = Parser(add_help=False)
    common.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars or status lines"
    )
    tokenizer = Parser(add_help=False)
    tokenizer.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        help="a tokenizer file (tokenizer.json, .tiktoken, GPT-2 directory) "
        "or a tiktoken encoding name (gpt2, cl100k_base, o200k_base, ...)",
    )
    specials = Parser(add_help=False)
    group = specials.add_mutually_exclusive_group()
    group.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text in the input as special tokens (without this or "
        "--special-as-text, such text is an error, for every output)",
    )
    group.add_argument(
        "--special-as-text",
        action="store_true",
        help="encode special-token text in the input as ordinary text",
    )
    return Parents(common, tokenizer, specials)
