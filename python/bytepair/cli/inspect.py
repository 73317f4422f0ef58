"""``bytepair inspect``: a tokenizer's vocab, merges, longest tokens, token lengths and
scripts; with ``--audit``, its unreachable, undecodable, duplicated and unused tokens."""

from __future__ import annotations

import json

from bytepair import audit
from bytepair.cli import arguments, report
from bytepair.cli.io import UsageError, info, load_tokenizer, show_progress
from bytepair.text_table import plural


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``inspect``."""
    p = sub.add_parser(
        "inspect",
        parents=[parents.common, parents.load],
        help="vocab size, merges, longest tokens, lengths, scripts",
    )
    p.add_argument(
        "tokenizer_file",
        nargs="?",
        metavar="TOKENIZER",
        help="a tokenizer file in any format, or a tiktoken encoding name",
    )
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
        help="with --audit: count the tokens on these files (directories, globs, .jsonl "
        "and .parquet as train reads them) and list the unused ones",
    )
    p.add_argument("--json", action="store_true", help="with --audit: print the audit as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.tokenizer_file is not None and args.tokenizer is not None:
        # Both name the one tokenizer inspected: one of them would be silently ignored.
        raise UsageError("inspect takes TOKENIZER or -t TOKENIZER, not both")
    spec = args.tokenizer_file or args.tokenizer
    if spec is None:
        raise arguments.no_tokenizer(
            "inspect needs a tokenizer: bytepair inspect TOKENIZER", args.corpus
        )
    if (args.corpus or args.json) and not args.audit:
        raise UsageError("inspect: --corpus and --json go with --audit")
    # A wrong --pattern for a rank file makes thousands of tokens look unreachable.
    tok = load_tokenizer(spec, arguments.load_options(args))
    if not args.audit:
        print(report.inspect_report(tok, args.show))
        return 0
    on = f" on {plural(len(args.corpus), 'corpus file')}" if args.corpus else ""
    info(args, "auditing" + on)
    found = tok.audit(args.corpus or None, progress=show_progress(args))
    if args.json:
        print(json.dumps(found.to_json()))
        return 0
    print(report.inspect_report(tok, args.show))
    print()
    print(audit.render(found, args.show))
    return 0
