"""``bytepair inspect``: a tokenizer's vocab, merges, longest tokens, token lengths and
scripts; with ``--audit``, its unreachable, undecodable, duplicated and unused tokens."""

from __future__ import annotations

import json
import os

from bytepair import audit
from bytepair.cli import arguments, report
from bytepair.cli.io import UsageError, info, load_tokenizer
from bytepair.tokenizer import Tokenizer


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``inspect``."""
    p = sub.add_parser(
        "inspect",
        parents=[parents.common],
        help="vocab size, merges, longest tokens, lengths, scripts",
    )
    p.add_argument("tokenizer_file", nargs="?", metavar="TOKENIZER")
    p.add_argument("-t", "--tokenizer", help="same as TOKENIZER")
    p.add_argument(
        "--show", type=arguments.positive, default=10, help="how many merges/tokens to list"
    )
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
    p.set_defaults(run=run)


def run(args) -> int:
    spec = args.tokenizer_file or args.tokenizer
    if spec is None:
        raise UsageError("inspect needs a tokenizer: bytepair inspect TOKENIZER")
    if (args.corpus or args.json) and not args.audit:
        raise UsageError("inspect: --corpus and --json go with --audit")
    if args.pattern is None:
        tok = load_tokenizer(spec)
    elif os.path.isfile(spec):
        tok = Tokenizer.load(spec, pattern=args.pattern)  # a tokenizer.json refuses it, named
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
