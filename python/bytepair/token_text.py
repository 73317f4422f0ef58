"""A token's bytes as people read them: text when they are valid UTF-8 on their own, hex
when they are part of a character.

>>> label(b" the"), label(b"\\xe4")
(' the', '<e4>')
"""

from __future__ import annotations


def is_text(token: bytes) -> bool:
    """Whether the token is valid UTF-8 on its own (not a piece of a character)."""
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def label(token: bytes) -> str:
    """The token as text, or its bytes in hex when they are not valid UTF-8 on their own."""
    return token.decode("utf-8") if is_text(token) else "<" + token.hex(" ") + ">"


def token_repr(token: bytes, width: int = 40) -> str:
    """A token for a report line: quoted text with escapes, or hex for a piece of a
    character; past ``width`` characters it is cut, and the cut marked with an ellipsis
    outside the quotes (o200k has a token of 128 spaces).

    >>> token_repr(b" the"), token_repr(b"\\xe4"), token_repr(b"-" * 50, width=10)
    ("' the'", '<e4>', "'-------'…")
    """
    text = repr(label(token)) if is_text(token) else label(token)
    return text if len(text) <= width else text[: width - 2] + text[-1] + "…"
