"""``bytepair tokenize``: a text's tokens in colour (or plain, or as an HTML page), and
``--chat``: a conversation through the chat template, by role, with the assistant mask."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from bytepair import audit, chat_template, documents
from bytepair.cli import arguments, chat_view, show
from bytepair.cli.io import (
    UsageError,
    check_output,
    info,
    is_stdout,
    load_tokenizer,
    read_input,
    use_colour,
    write_output,
)


def add_parsers(sub, parents: arguments.Parents) -> None:
    """Registers ``tokenize``."""
    p = sub.add_parser(
        "tokenize",
        parents=[parents.common, parents.tokenizer],
        help="show token boundaries in colour, with ids",
    )
    p.add_argument("text", nargs="?", help="the text (default: --file, or stdin)")
    p.add_argument("-f", "--file", help="read the text from a file")
    p.add_argument("--html", metavar="OUT.html", help="also write a self-contained HTML page")
    p.add_argument("--no-ids", dest="ids", action="store_false", help="hide the ids")
    p.add_argument(
        "--color",
        "--colour",
        choices=["auto", "always", "never"],
        default="auto",
        help="auto (default): on a terminal without NO_COLOR; never: tokens split by |",
    )
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
    p.set_defaults(run=run)


def run(args) -> int:
    if args.chat is not None:
        return tokenize_chat(args)
    if args.chat_template is not None:
        # Only --chat renders a template: the text would be shown as if none had been asked for.
        raise UsageError("tokenize --chat-template goes with --chat CONVERSATION.json")
    if args.file is not None and args.text is not None:
        raise UsageError("tokenize takes TEXT or --file, not both")
    if args.file not in (None, "-") and not is_stdout(args.html):
        documents.check_output([args.file], args.html)  # the page written over its text
    check_output(args, args.html, "--html")
    tok = load_tokenizer(args.tokenizer, arguments.load_options(args))
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
    if args.file is not None or args.text is not None or args.html:
        raise UsageError(
            "tokenize --chat takes the conversation file only (no TEXT, --file, --html)"
        )
    try:
        doc = json.loads(read_input(args.chat).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"--chat {args.chat}: not valid JSON ({e})") from None
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    tok = load_tokenizer(args.tokenizer, arguments.load_options(args))
    template = args.chat_template
    if template is not None and os.path.isfile(template):
        template = Path(template).read_text(encoding="utf-8")
    elif template is not None:
        named = sorted(chat_template.named_templates(tok.config.chat_template))
        if template not in named:  # not taken as template text: a mistyped path is no template
            raise UsageError(
                f"--chat-template {template}: no such file, nor a template the tokenizer names"
                + (f" ({', '.join(named)})" if named else " (it names none)")
            )
    colour = use_colour(sys.stdout, args.color)
    print(chat_view.chat_view(tok, messages, colour=colour, chat_template_arg=template))
    return 0
