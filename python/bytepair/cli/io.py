"""What every command reads and writes: the tokenizer a ``-t`` names, input from a file or
stdin, output to a file (atomically) or stdout, and the terminal's colour and progress.

>>> format_for("tok.tiktoken", None), format_for("tok.json", None)
('tiktoken', 'huggingface')
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from bytepair.errors import BytepairError, TokenizerNotFoundError
from bytepair.tokenizer import Tokenizer

#: The exit status of a mistake the user can fix.
EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake on the command line; main() prints it as one line and exits with 2."""


def load_tokenizer(spec: str, options: Mapping[str, object] | None = None) -> Tokenizer:
    """A tokenizer from a file (any supported format) or a tiktoken encoding name;
    ``options`` (``arguments.load_options``) for a file that does not store them."""
    try:
        return Tokenizer.load(spec, **(options or {}))
    except ImportError:
        raise UsageError(
            f"-t {spec}: loading tiktoken encodings needs tiktoken: pip install tiktoken"
        ) from None
    except TokenizerNotFoundError as e:
        raise UsageError(str(e)) from None


def options_for(spec: str, options: Mapping[str, object]) -> Mapping[str, object]:
    """``options`` if ``spec`` is a tokenizer that does not store its pattern and special
    tokens (a rank file, GPT-2 files), else none: for commands that load several."""
    from bytepair import formats

    if not options:
        return options
    try:
        stored = formats.stores_settings(spec)
    except (BytepairError, OSError):
        return options  # loading it names what is wrong
    return {} if stored else options


def format_for(path: str, given: str | None) -> str:
    """The output format: as given, else a directory or a name ending in / -> gpt2, else
    as ``Tokenizer.save`` would (``.tiktoken`` -> tiktoken, anything else -> huggingface)."""
    from bytepair import formats

    if given:
        return given
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        return "gpt2"
    return formats.save_format(path)


def use_colour(stream, choice: str = "auto") -> bool:
    """Colour when asked to, or (auto) on a terminal without NO_COLOR (https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def show_progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()


def info(args, message: str) -> None:
    """A status line on stderr, only on a terminal and without --quiet (like progress)."""
    if show_progress(args):
        print(message, file=sys.stderr)


def read_input(path: str | None) -> bytes:
    """The bytes of a file, or of stdin when the path is None or ``-``."""
    if path in (None, "-"):
        return sys.stdin.buffer.read()
    return Path(path).read_bytes()


def is_stdout(path: str | None) -> bool:
    """Whether an output names stdout: none, ``-``, or ``/dev/stdout``, which is stdout
    whatever the shell points it at (a regular file there is written, not refused).

    >>> is_stdout("-"), is_stdout("/dev/stdout"), is_stdout("ids.txt")
    (True, True, False)
    """
    return path in (None, "-", "/dev/stdout")


def write_output(path: str | None, data: bytes | Iterable[bytes]) -> None:
    """Writes to stdout, into a device or pipe (``/dev/null``, ``/dev/stdout``, a FIFO), or
    atomically to a file (temp file + rename). ``data`` may come in parts, written as they
    come: to a stream, a failure midway leaves what came before it; to a file, it leaves
    nothing."""
    from bytepair.formats.atomic import is_special, write_parts

    parts = [data] if isinstance(data, bytes) else data
    if is_stdout(path):
        for part in parts:
            sys.stdout.buffer.write(part)
        sys.stdout.buffer.flush()
        return
    if is_special(path):
        with open(path, "ab") as stream:  # "ab": a device or pipe has no content to truncate
            for part in parts:
                stream.write(part)
        return
    write_parts(path, parts)


def tokenizer_files(path: str, fmt: str) -> list[str]:
    """The files ``Tokenizer.save(path, format=fmt)`` writes: ``path`` itself, or those it
    puts in the folder ``path`` names (a tokenizer_config.json beside a tokenizer.json is
    merged into, not replaced, so it is not one of them).

    >>> tokenizer_files("out/", "gpt2"), tokenizer_files("out/", "huggingface")
    (['out/vocab.json', 'out/merges.txt'], ['out/tokenizer.json'])
    """
    from bytepair.errors import FormatError
    from bytepair.formats import gpt2, tokenizer_config

    if fmt == "gpt2":
        try:
            return list(gpt2.paths(path))
        except FormatError:
            return [path]  # saving names what is wrong with the name
    if fmt == "huggingface" and (path.endswith(("/", os.sep)) or os.path.isdir(path)):
        return [os.path.join(path, tokenizer_config.TOKENIZER_NAME)]
    return [path]


def check_output(
    args,
    path: str | None,
    option: str = "-o",
    files: Iterable[str] | None = None,
    stream: bool = True,
) -> None:
    """Fails before the slow work, not after it, when an output's folder does not exist, or
    when the output (or one of ``files``, those the command writes for it) exists and
    ``--force`` was not given: nothing is replaced without the user's say. ``option`` is
    where the output was named, for the error. ``stream=False``: an output written only
    atomically (a tokenizer file), which stdout cannot take unless it is a regular file."""
    if is_stdout(path):
        # Else `-` became a file named "-" (replaced without --force), and /dev/stdout on a
        # pipe failed in the rename saying that its folder does not exist.
        if not stream and (path == "-" or not os.path.isfile(path)):
            raise UsageError(
                f"{option} {path}: a tokenizer file cannot be written to stdout; name a file"
            )
        return
    parent = Path(path.rstrip("/" + os.sep) or ".").resolve().parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {path}: the folder {parent} does not exist")
    if args.force:
        return
    # A regular file only: a device (/dev/null) or a named pipe is written into, not replaced.
    for target in [path] if files is None else files:
        if os.path.isfile(target):
            raise UsageError(
                f"{target} exists: pass --force to replace it, or choose another {option}"
            )


def special_policy(args) -> dict:
    """The keyword arguments of encode(), encode_file() and token_shards.write() for
    --allow-special / --special-as-text; without either, special-token text in the input is
    an error (spelled out: encode_file's own default allows it)."""
    if args.allow_special:
        return {"allowed_special": "all", "disallowed_special": ()}
    if args.special_as_text:
        return {"allowed_special": frozenset(), "disallowed_special": ()}
    return {"allowed_special": frozenset(), "disallowed_special": "all"}
