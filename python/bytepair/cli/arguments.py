"""The parser's parts that every command shares: the one-line usage error, the parent
parsers (``-q``, ``--force``, ``-t``, the special-token flags) and the argument types.

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


def seed(text: str) -> int:
    """An integer, written as Python writes one (``32_000``)."""
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def positive(text: str) -> int:
    value = seed(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be > 0")
    return value


def non_negative(text: str) -> int:
    """A count where 0 has a meaning (``--max-bytes 0``: all of it); below 0, none."""
    value = seed(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} must be >= 0")
    return value


def vocab_size(text: str) -> int:
    value = seed(text)
    if value < 256:
        raise argparse.ArgumentTypeError(
            f"{text} is too small: the vocab holds the 256 single bytes (plus one id per "
            "special token), so at least 256"
        )
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be in [0, 1)")
    return value


def no_tokenizer(message: str, corpus: list) -> UsageError:
    """The error of a command given no tokenizer. ``--corpus FILE ...`` takes every name
    after it, so a tokenizer written there was read as a corpus: the error says so."""
    if corpus:
        message += (
            f"; --corpus takes every name after it ({' '.join(map(str, corpus))}): "
            "put the tokenizer before --corpus"
        )
    return UsageError(message)


def load_options(args) -> dict:
    """``Tokenizer.load``'s keyword arguments from ``--pattern`` and ``--special-token``
    (``TEXT`` or ``TEXT=ID``): for a tokenizer file that does not store them.

    >>> from types import SimpleNamespace as Args
    >>> load_options(Args(pattern="llama3", special_token=["<|a|>=7", "<|b|>=9"]))
    {'pattern': 'llama3', 'special_tokens': {'<|a|>': 7, '<|b|>': 9}}
    >>> load_options(Args(pattern=None, special_token=["<s>", "</s>"]))
    {'special_tokens': ['<s>', '</s>']}
    """
    options: dict = {}
    if args.pattern is not None:
        options["pattern"] = args.pattern
    if args.special_token:
        split = [token.rpartition("=") for token in args.special_token]
        numbered = [bool(text and id.isascii() and id.isdigit()) for text, _, id in split]
        if all(numbered):
            options["special_tokens"] = {text: int(id) for text, _, id in split}
        elif any(numbered):
            raise UsageError(
                "--special-token: give every special token an id (TEXT=ID), or none of them "
                "(their ids then follow the file's last one)"
            )
        else:
            options["special_tokens"] = list(args.special_token)
    return options


@dataclass(frozen=True)
class Parents:
    """The parent parsers a subcommand picks from: ``common``, ``-q`` and ``--force``;
    ``-t TOKENIZER`` (with ``load``); ``load``: ``--pattern`` and ``--special-token`` of a
    tokenizer file that does not store them (`load_options`); and ``--allow-special`` /
    ``--special-as-text``."""

    common: argparse.ArgumentParser
    tokenizer: argparse.ArgumentParser
    load: argparse.ArgumentParser
    specials: argparse.ArgumentParser


def parents() -> Parents:
    """The shared parent parsers, built afresh for each top-level parser."""
    common = Parser(add_help=False)
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars, status lines or summary (errors and warnings still show)",
    )
    common.add_argument(
        "--force",
        action="store_true",
        help="replace an output file that exists (without it, such an output is an error)",
    )
    load = Parser(add_help=False)
    load.add_argument(
        "--pattern",
        help="the pattern of a tokenizer file that does not store one (a .tiktoken or .model "
        "rank file, GPT-2 files): a name (gpt2, cl100k, o200k, llama3, qwen2, qwen3.5, ...) "
        "or a regex. The published rank files bytepair recognises (tiktoken's, Llama 3's, "
        "Qwen's) need none",
    )
    load.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="T",
        help="a special token of such a file: TEXT, or TEXT=ID to give its id (repeat for "
        "several; without ids they follow the file's last id)",
    )
    tokenizer = Parser(add_help=False, parents=[load])
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
    return Parents(common, tokenizer, load, specials)
