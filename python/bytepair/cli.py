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
Colours and progress bars appear only on a terminal, and never with ``--quiet`` or NO_COLOR.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from bytepair import __version__, audit, compare, holdout, metrics, report, show, zipf
from bytepair.errors import BytepairError, DisallowedSpecialError, TokenizerNotFoundError
from bytepair.tokenizer import Tokenizer
from bytepair.training_report import documents_line, peak_memory_mb

EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake on the command line; main() prints it as one line and exits with 2."""


# -- loading and saving -------------------------------------------------------------------


def load_tokenizer(spec: str) -> Tokenizer:
    """A tokenizer from a file (any supported format) or a tiktoken encoding name."""
    try:
        return Tokenizer.load(spec)
    except ImportError:
        raise UsageError(
            f"-t {spec}: loading tiktoken encodings needs tiktoken: pip install tiktoken"
        ) from None
    except TokenizerNotFoundError as e:
        raise UsageError(str(e)) from None


def format_for(path: str, given: str | None) -> str:
    """The output format: as given, else from the name (``.tiktoken`` -> tiktoken, a
    directory or a name ending in / -> gpt2, anything else -> huggingface)."""
    if given:
        return given
    if path.endswith(".tiktoken"):
        return "tiktoken"
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        return "gpt2"
    return "huggingface"


# -- terminal behaviour -------------------------------------------------------------------


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


def write_output(path: str | None, data: bytes | Iterable[bytes]) -> None:
    """Writes to stdout, or atomically to a file (temp file + rename). ``data`` may come in
    parts, written as they come: to stdout, a failure midway leaves what came before it; to a
    file, it leaves nothing."""
    parts = [data] if isinstance(data, bytes) else data
    if path in (None, "-"):
        for part in parts:
            sys.stdout.buffer.write(part)
        sys.stdout.buffer.flush()
        return
    from bytepair.formats.atomic import write_parts

    write_parts(path, parts)


def check_output(path: str | None) -> None:
    """Fails before the slow work, not after it, when an output's folder does not exist."""
    if path in (None, "-"):
        return
    parent = Path(path.rstrip("/" + os.sep) or ".").resolve().parent
    if not parent.is_dir():
        raise UsageError(f"cannot write {path}: the folder {parent} does not exist")


def special_policy(args) -> dict:
    """encode()'s keyword arguments for --allow-special / --special-as-text."""
    if args.allow_special:
        return {"allowed_special": "all"}
    if args.special_as_text:
        return {"disallowed_special": ()}
    return {}


# -- subcommands ----------------------------------------------------------------------------


def cmd_train(args) -> int:
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
    for p in [] if ray else args.files:
        if not os.path.isfile(p):
            raise UsageError(f"training file {p!r} does not exist or is not a file")
    fmt = format_for(args.output, args.format)
    check_output(args.output)
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
        f"{_plural(len(tok.special_tokens), 'special token')})",
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
    print("\n".join(lines))
    return 0


def cmd_encode(args) -> int:
    check_output(args.output)
    tok = load_tokenizer(args.tokenizer)
    if args.output and args.output.endswith(".npy"):
        if args.input in (None, "-"):
            raise UsageError("encode -o FILE.npy needs an input file, not stdin")
        tok.encode_file(args.input, args.output, progress=show_progress(args))
        info(args, f"wrote {args.output}")
        return 0
    # Read, encode and write 1 MB at a time, so input of any size fits in memory: the stream
    # keeps only the text after its last safe cut (docs/design.md).
    stdin = args.input in (None, "-")
    with contextlib.nullcontext(sys.stdin.buffer) if stdin else open(args.input, "rb") as src:
        blocks = iter(lambda: src.read(1 << 20), b"")
        ids = tok.encode_iterable(blocks, **special_policy(args))

        def lines():
            sep = b""
            while part := list(itertools.islice(ids, 1 << 16)):
                yield sep + " ".join(map(str, part)).encode("ascii")
                sep = b" "
            yield b"\n"

        try:
            write_output(args.output, lines())
        except DisallowedSpecialError as e:
            raise UsageError(
                f"the input contains the special token {e.token!r}: pass --allow-special to "
                f"encode it as a special token, or --special-as-text to encode it as text"
            ) from None
    return 0


def parse_ids(data: bytes, source: str) -> list[int]:
    ids = []
    for n, word in enumerate(data.split()):
        try:
            ids.append(int(word))
        except ValueError:
            raise UsageError(
                f"{source}: item {n + 1} is {word.decode('utf-8', 'replace')!r}, not a token id "
                "(decode expects whitespace-separated integers, as encode writes them)"
            ) from None
    return ids


def cmd_decode(args) -> int:
    check_output(args.output)
    tok = load_tokenizer(args.tokenizer)
    if args.input and args.input.endswith(".npy"):
        try:
            import numpy
        except ImportError:
            raise UsageError("decoding a .npy file needs numpy: pip install numpy") from None
        ids = numpy.load(args.input).tolist()
    else:
        ids = parse_ids(read_input(args.input), args.input or "stdin")
    write_output(args.output, tok.decode_bytes(ids))
    return 0


def cmd_tokenize(args) -> int:
    if args.chat is not None:
        return tokenize_chat(args)
    if args.file is not None and args.text is not None:
        raise UsageError("tokenize takes TEXT or --file, not both")
    check_output(args.html)
    tok = load_tokenizer(args.tokenizer)
    if args.file is not None:
        data = read_input(args.file)
    elif args.text is not None:
        data = os.fsencode(args.text)  # undoes argv's surrogateescape: invalid bytes survive
    else:
        data = read_input(None)
    ids = tok.encode_bytes(data, allowed_special="all")
    tokens = [tok.vocab[i] for i in ids]
    special = set(tok.special_tokens.values())
    summary = (
        f"{len(ids):,} tokens, {len(data):,} bytes, {len(data) / max(1, len(ids)):.2f} bytes/token"
    )
    if args.html:
        # Only the tokens on the page are checked, not the whole vocabulary (1 s for o200k).
        shown = {i: tok.vocab[i] for i in set(ids) if i not in special}
        unreachable = audit.unreachable(tok, shown)
        page = show.html_page(
            tokens,
            ids,
            special,
            title=f"bytepair: {args.tokenizer}",
            summary=summary,
            unreachable=unreachable,
        )
        write_output(args.html, page.encode("utf-8"))
        info(args, f"wrote {args.html}")
    if use_colour(sys.stdout, args.color):
        body = show.coloured(tokens, ids if args.ids else None, special)
        print(body)
    else:
        print(show.plain(tokens))
        if args.ids:
            print(" ".join(map(str, ids)))
    if not args.quiet:
        print(summary)
    return 0


def tokenize_chat(args) -> int:
    """``tokenize --chat FILE``: a conversation (a JSON list of messages, or an object
    with "messages") through the tokenizer's chat template, roles and assistant mask."""
    import json

    from bytepair import chat_view

    if args.file is not None or args.text is not None or args.html:
        raise UsageError(
            "tokenize --chat takes the conversation file only (no TEXT, --file, --html)"
        )
    try:
        doc = json.loads(read_input(args.chat).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"--chat {args.chat}: not valid JSON ({e})") from None
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    tok = load_tokenizer(args.tokenizer)
    template = args.chat_template
    if template is not None and os.path.isfile(template):
        template = Path(template).read_text(encoding="utf-8")
    colour = use_colour(sys.stdout, args.color)
    print(chat_view.chat_view(tok, messages, colour=colour, chat_template_arg=template))
    return 0


def cmd_inspect(args) -> int:
    spec = args.tokenizer_file or args.tokenizer
    if spec is None:
        raise UsageError("inspect needs a tokenizer: bytepair inspect TOKENIZER")
    if (args.corpus or args.json) and not args.audit:
        raise UsageError("inspect: --corpus and --json go with --audit")
    if args.pattern is None:
        tok = load_tokenizer(spec)
    elif os.path.isfile(spec):
        from bytepair import formats

        tok = formats.load(spec, pattern=args.pattern)  # a tokenizer.json refuses it, named
    else:
        raise UsageError(
            f"--pattern is for a rank file (.tiktoken, .model); {spec!r} is not a file"
        )
    if not args.audit:
        print(report.inspect_report(tok, args.show))
        return 0
    info(args, "auditing" + (f" on {len(args.corpus)} corpus files" if args.corpus else ""))
    found = tok.audit(args.corpus or None)
    if args.json:
        print(json.dumps(found.to_json()))
        return 0
    print(report.inspect_report(tok, args.show))
    print()
    print(audit.render(found, args.show))
    return 0


def cmd_compare(args) -> int:
    names = args.tokenizers + ([args.tokenizer] if args.tokenizer else [])
    if not names:
        raise UsageError("compare needs at least one tokenizer: bytepair compare T1 T2 --corpus F")
    if args.plot:
        compare.check_plotting()  # before the slow part, not after it
        check_output(args.plot)
    tokenizers: dict[str, Tokenizer] = {}
    for spec in names:
        info(args, f"loading {spec}")
        tokenizers[_short_name(spec, tokenizers)] = load_tokenizer(spec)
    # Parity compares translations: cut at --max-bytes they would stop at different places.
    limit = None if args.max_bytes <= 0 or args.reference else args.max_bytes
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
        name = _short_name(path, corpora)
        corpora[name] = compare.read_corpus(path, limit)
        if path == args.reference:
            reference = name
    info(args, "encoding " + ", ".join(f"{k} ({len(v):,} bytes)" for k, v in corpora.items()))
    results = metrics.compare(tokenizers, corpora)
    table = {c: {t: m.bytes_per_token for t, m in row.items()} for c, row in results.items()}
    print("bytes per token (higher = fewer tokens for the same text):")
    print(compare.bytes_per_token_table(table))
    print()
    print("vocabulary overlap (shared regular tokens, % of the row's vocabulary):")
    print(compare.overlap_table(tokenizers))
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
        compare.plot(table, args.plot, panel)
        info(args, f"wrote {args.plot}")
    return 0


def _short_name(spec: str, taken) -> str:
    """A file's name for a table column, or the whole path when that name is taken."""
    name = Path(spec).name if os.path.exists(spec) else spec
    return spec if name in taken else name


def cmd_convert(args) -> int:
    from bytepair import formats

    if not os.path.exists(args.input):
        raise UsageError(f"tokenizer file {args.input!r} does not exist")
    fmt = format_for(args.output, args.to)
    check_output(args.output)
    # Only for inputs that do not store them (.tiktoken, GPT-2 files): formats.load says so.
    extra = {}
    if args.special_token:
        extra["special_tokens"] = args.special_token
    if args.pattern:
        extra["pattern"] = args.pattern
    formats.convert(args.input, args.output, to=fmt, **extra)
    info(args, f"wrote {args.output} ({fmt})")
    return 0


# -- the parser -------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (its default prints the whole usage first)."""

    def error(self, message: str):
        command = self.prog.partition(" ")[2]  # "bytepair train" -> "train"
        where = f"{command}: " if command else ""
        raise UsageError(f"{where}{message} (see {self.prog} --help)")


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be > 0")
    return value


def _vocab_size(text: str) -> int:
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


def _seed(text: str) -> int:
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be in [0, 1)")
    return value


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars or status lines"
    )
    with_tok = _Parser(add_help=False)
    with_tok.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        help="a tokenizer file (tokenizer.json, .tiktoken, GPT-2 directory) "
        "or a tiktoken encoding name (gpt2, cl100k_base, o200k_base, ...)",
    )
    specials = _Parser(add_help=False)
    group = specials.add_mutually_exclusive_group()
    group.add_argument(
        "--allow-special", action="store_true", help="encode special-token text as special tokens"
    )
    group.add_argument(
        "--special-as-text", action="store_true", help="encode special-token text as ordinary text"
    )

    parser = _Parser(
        prog="bytepair",
        description="Byte-level BPE tokenizers: train, encode, "
        "decode, look at tokens, compare tokenizers, convert formats.",
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("train", parents=[common], help="train a tokenizer on text files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("-o", "--output", required=True, help="where to save the tokenizer")
    p.add_argument("--vocab-size", type=_vocab_size, required=True)
    p.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="T",
        help="a special token (repeat for several)",
    )
    p.add_argument("--pattern", default="gpt2", help="gpt2, cl100k, o200k or a regex")
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
    p.add_argument("--min-frequency", type=_positive, default=1)
    p.add_argument("--threads", type=_positive, default=None)
    p.add_argument(
        "--format",
        choices=["huggingface", "tiktoken", "gpt2"],
        help="output format (default: from the name; .tiktoken, dir/, else json)",
    )
    p.add_argument(
        "--sample-documents",
        type=_positive,
        metavar="N",
        help="train on a uniform random sample of N documents (all of them when there "
        "are N or fewer), cut at --document-separator",
    )
    p.add_argument(
        "--seed", type=_seed, default=0, help="which sample --sample-documents draws (default 0)"
    )
    p.add_argument(
        "--document-separator",
        metavar="T",
        help="the text between documents (default: the first --special-token)",
    )
    p.add_argument(
        "--holdout",
        type=_fraction,
        default=0.0,
        help="fraction of the corpus held out of training, at most 1 MB, cut from the end "
        "of the last file, to measure bytes/token on unseen text (default 0: train on "
        "everything, as bytepair.train does)",
    )
    p.add_argument("--show", type=_positive, default=10, help="how many longest tokens to show")
    p.set_defaults(run=cmd_train)

    p = sub.add_parser(
        "encode",
        parents=[common, with_tok, specials],
        help="text to ids: one line of space-separated ids (or .npy)",
    )
    p.add_argument("input", nargs="?", help="input file (default: stdin)")
    p.add_argument("-o", "--output", help="output file (default: stdout); .npy uses encode_file")
    p.set_defaults(run=cmd_encode)

    p = sub.add_parser(
        "decode",
        parents=[common, with_tok],
        help="ids (whitespace-separated, or a .npy file) to text",
    )
    p.add_argument("input", nargs="?", help="input file (default: stdin)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.set_defaults(run=cmd_decode)

    p = sub.add_parser(
        "tokenize", parents=[common, with_tok], help="show token boundaries in colour, with ids"
    )
    p.add_argument("text", nargs="?", help="the text (default: --file, or stdin)")
    p.add_argument("-f", "--file", help="read the text from a file")
    p.add_argument("--html", metavar="OUT.html", help="also write a self-contained HTML page")
    p.add_argument("--no-ids", dest="ids", action="store_false", help="hide the ids")
    p.add_argument("--color", "--colour", choices=["auto", "always", "never"], default="auto")
    p.add_argument(
        "--chat",
        metavar="CONVERSATION.json",
        help="a JSON list of {role, content} messages: show its chat-template tokens by role, "
        "the assistant mask in colour",
    )
    p.add_argument(
        "--chat-template",
        help="with --chat: a Jinja2 template file, or the name of one of the tokenizer's",
    )
    p.set_defaults(run=cmd_tokenize)

    p = sub.add_parser(
        "inspect", parents=[common], help="vocab size, merges, longest tokens, lengths, scripts"
    )
    p.add_argument("tokenizer_file", nargs="?", metavar="TOKENIZER")
    p.add_argument("-t", "--tokenizer", help="same as TOKENIZER")
    p.add_argument("--show", type=_positive, default=10, help="how many merges/tokens to list")
    p.add_argument(
        "--audit",
        action="store_true",
        help="list unreachable, undecodable and duplicated tokens (docs/audit.md)",
    )
    p.add_argument(
        "--corpus",
        nargs="+",
        default=[],
        metavar="FILE",
        help="with --audit: count the tokens on these files and list the unused ones",
    )
    p.add_argument("--json", action="store_true", help="with --audit: print the audit as JSON")
    p.add_argument(
        "--pattern",
        help="the pattern of a rank file, which does not store it (Llama 3's tokenizer.model): "
        "a wrong one makes thousands of tokens look unreachable",
    )
    p.set_defaults(run=cmd_inspect)

    p = sub.add_parser(
        "compare",
        parents=[common],
        help="bytes/token per tokenizer per corpus, and vocabulary overlap",
    )
    p.add_argument("tokenizers", nargs="*", metavar="TOKENIZER")
    p.add_argument("-t", "--tokenizer", help="one more tokenizer")
    p.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        metavar="FILE",
        help="text files (.xz, .gz, .bz2 are decompressed)",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
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
    p.set_defaults(run=cmd_compare)

    p = sub.add_parser("convert", parents=[common], help="convert between tokenizer formats")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument(
        "--to",
        choices=["huggingface", "tiktoken", "gpt2"],
        help="output format (default: from OUT's name)",
    )
    p.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="T",
        help="special tokens of an input that does not store them (.tiktoken, GPT-2)",
    )
    p.add_argument("--pattern", help="pattern of an input that does not store it")
    p.set_defaults(run=cmd_convert)
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
    except (BytepairError, OSError, ValueError, KeyError) as e:
        # Our typed errors name the bad value; OSError names the file.
        if isinstance(e, BrokenPipeError):  # `bytepair encode ... | head`: not an error
            # Point stdout at /dev/null so that flushing it at exit cannot fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        if isinstance(e, OSError) and e.filename is not None and e.strerror:
            return _fail(f"{e.filename}: {e.strerror}")
        if isinstance(e, BytepairError):
            return _fail(str(e))
        return _fail(f"{type(e).__name__}: {e}")
    except KeyboardInterrupt:
        return _fail("interrupted", status=130)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    # One line, always: a multi-line message is folded so scripts can grep it.
    print("bytepair: error: " + " ".join(message.split()), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
