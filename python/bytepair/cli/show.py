"""Token boundaries made visible: in a terminal (alternating colours) and as an HTML page.

A token is shown as its text when its bytes are valid UTF-8 on their own, and as hex when
they are a piece of a character (byte-level BPE cuts rare characters into such pieces):

>>> label(b" cat")
' cat'
>>> label("你".encode()[:2])
'<e4 bd>'
>>> plain([b"the", b" cat", b"\\n"], sep="|")
'the| cat|\\\\n\\n'
"""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence

from bytepair.token_text import is_text, label

# Background colours that alternate token by token; two would do, four make runs of
# short tokens (digits, punctuation) easier to tell apart. 256-colour codes, dark text.
_TERM_BACKGROUNDS = (153, 223, 194, 218)
_HTML_BACKGROUNDS = ("#bfdcf5", "#fce1bd", "#c8ecc8", "#f7c6dc")

# Font stacks with CJK fallbacks: a browser whose default monospace font lacks CJK (most
# Western setups) would show boxes, so the stacks name the CJK fonts of macOS (PingFang,
# Hiragino), Windows (Microsoft YaHei, Yu Gothic, Malgun Gothic) and Linux (Noto CJK,
# Source Han) before the generic family.
_CJK = (
    '"Noto Sans Mono CJK SC", "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", '
    '"Hiragino Sans", "Microsoft YaHei", "Yu Gothic", "Malgun Gothic"'
)
_MONO = f'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", {_CJK}, monospace'
_SANS = f'system-ui, "Segoe UI", Roboto, "Helvetica Neue", Arial, {_CJK}, sans-serif'

# Every control character gets a visible stand-in: C0, DEL and C1 would vanish, move the
# cursor or (ESC, C1's CSI) start a terminal escape sequence taken from the text. The
# newline is kept after its symbol so the layout of the text survives.
_VISIBLE = {chr(c): f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {
    "\n": "\\n\n",
    "\t": "\\t",
    "\r": "\\r",
}
_VISIBLE_TABLE = str.maketrans(_VISIBLE)


def _visible(text: str) -> str:
    r"""``text`` with its control characters escaped.

    >>> print(_visible("a\tb\x1b[31mc\x00\x85\x7f"))
    a\tb\x1b[31mc\x00\x85\x7f
    """
    return text.translate(_VISIBLE_TABLE)


def plain(tokens: Sequence[bytes], sep: str = "|") -> str:
    r"""Tokens joined by a separator, for terminals without colour (or NO_COLOR).

    A separator or a backslash inside a token is escaped (``\|``, ``\\``), so that every
    unescaped separator is a boundary:

    >>> print(plain([b"a|b", b"|", b"\\"]))
    a\|b|\||\\
    """
    escapes = {"\\": "\\\\", sep: "\\" + sep}
    return sep.join(
        "".join(escapes.get(ch) or _VISIBLE.get(ch, ch) for ch in label(t)) for t in tokens
    )


def _style(n: int, is_special: bool) -> str:
    if is_special:
        return "7"  # reverse video: special tokens stand out from the colour cycle
    return f"38;5;16;48;5;{_TERM_BACKGROUNDS[n % len(_TERM_BACKGROUNDS)]}"


def coloured(
    tokens: Sequence[bytes], ids: Sequence[int] | None = None, special: Collection[int] = ()
) -> str:
    """Tokens on alternating ANSI background colours; special tokens in reverse video.

    With ``ids``, a second block lists the ids, each on its token's colour.

    >>> coloured([b"a", b"b"])
    '\\x1b[38;5;16;48;5;153ma\\x1b[0m\\x1b[38;5;16;48;5;223mb\\x1b[0m'
    """
    out = []
    for n, token in enumerate(tokens):
        style = _style(n, ids is not None and ids[n] in special)
        # A newline inside a coloured span would paint the rest of the line: close first.
        pieces = _visible(label(token)).split("\n")
        out.append("\n".join(f"\x1b[{style}m{p}\x1b[0m" if p else "" for p in pieces))
    text = "".join(out)
    if ids is None:
        return text
    id_line = " ".join(f"\x1b[{_style(n, i in special)}m{i}\x1b[0m" for n, i in enumerate(ids))
    return text + "\n" + id_line


def html_page(
    tokens: Sequence[bytes],
    ids: Sequence[int],
    special: Collection[int] = (),
    title: str = "bytepair tokens",
    summary: str = "",
    unreachable: Collection[int] = (),
) -> str:
    """A self-contained HTML page (no scripts, no external files) showing the tokens.

    Each token is a coloured span whose tooltip gives its id and bytes; pieces of a
    character are shown in hex, special tokens with a dark background, ``unreachable``
    tokens (whose own text encodes as other tokens, docs/audit.md) with a dashed red frame.

    >>> page = html_page([b"hi", b"\\xe4"], [1, 2])
    >>> '<span class="t c0" title="id 1: b&#x27;hi&#x27;">hi</span>' in page
    True
    >>> '<span class="t c1 hex" title="id 2: b&#x27;\\\\xe4&#x27;">&lt;e4&gt;</span>' in page
    True
    >>> '<span class="t c0 unreachable"' in html_page([b"a "], [256], unreachable={256})
    True
    """
    spans = []
    for n, (token, i) in enumerate(zip(tokens, ids, strict=True)):
        text = label(token)
        classes = ["t", f"c{n % len(_HTML_BACKGROUNDS)}"]
        if i in special:
            classes.append("special")
        elif not is_text(token):
            classes.append("hex")
        tip = f"id {i}: {token!r}"
        if i in unreachable and i not in special:
            classes.append("unreachable")
            tip += " (unreachable: its own text encodes as other tokens)"
        tip = html.escape(tip)
        body = html.escape(text).replace("\n", "\u21b5\n")
        spans.append(f'<span class="{" ".join(classes)}" title="{tip}">{body}</span>')
    colours = "\n".join(f".c{n} {{ background: {c}; }}" for n, c in enumerate(_HTML_BACKGROUNDS))
    id_list = " ".join(str(i) for i in ids)
    marked = len({i for i in ids if i in unreachable and i not in special})
    legend = (
        f'<p><span class="unreachable">framed</span>: {marked} unreachable '
        f"token{'' if marked == 1 else 's'}, whose own text encodes as other tokens: a model "
        "sees them rarely, if ever.</p>\n"
        if marked
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: {_SANS}; margin: 2em; max-width: 60em; }}
.tokens {{ font-family: {_MONO}; font-size: 1.1em; white-space: pre-wrap; line-height: 1.9; }}
.t {{ border-radius: 3px; padding: 1px 0; }}
{colours}
.hex {{ font-style: italic; color: #8a1c1c; }}
.special {{ background: #333; color: #fff; }}
.unreachable {{ outline: 2px dashed #c00; outline-offset: -1px; }}
.ids {{ font-family: {_MONO}; color: #555; word-break: break-all; }}
</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(summary)}</p>
{legend}<div class="tokens">{"".join(spans)}</div>
<h2>Ids</h2>
<p class="ids">{id_list}</p>
</body>
</html>
"""
