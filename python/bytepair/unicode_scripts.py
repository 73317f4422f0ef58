"""Which writing system a token belongs to, approximated from Unicode character names.

Python's ``unicodedata`` has no Script property (Unicode's Scripts.txt), so this module
derives one from the character's name, whose first words name the script for nearly
every letter: "LATIN SMALL LETTER A", "CYRILLIC CAPITAL LETTER ZHE", "CJK UNIFIED
IDEOGRAPH-4E2D", "HANGUL SYLLABLE GA". The approximation, and where it departs from
Scripts.txt:

* only letters (category L*) decide; digits, punctuation, symbols, spaces and combining
  marks are "Common" (Scripts.txt puts marks under their base's script or "Inherited",
  and some digits, e.g. Devanagari ones, under their script);
* a few name prefixes are mapped by hand (CJK -> Han, HIRAGANA/KATAKANA -> Japanese kana,
  FULLWIDTH LATIN -> Latin, MODIFIER LETTER -> Common); any other letter takes the first
  word of its name ("GEORGIAN LETTER AN" -> Georgian), which is right for the scripts one
  meets in practice and wrong for a few letters named after something else;
* a token whose letters come from two scripts is "Mixed"; a token that is a piece of a
  UTF-8 character (not decodable on its own) is "partial UTF-8".

>>> script_of_char("a"), script_of_char("Ж"), script_of_char("中"), script_of_char("7")
('Latin', 'Cyrillic', 'Han', 'Common')
>>> token_script(b" hello"), token_script("日本".encode()), token_script(b"\\xe4\\xb8")
('Latin', 'Han', 'partial UTF-8')
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

# Name prefixes whose first word is not the script's name (longest prefix first).
_PREFIXES = (
    ("CJK ", "Han"),
    ("KANGXI RADICAL", "Han"),
    ("IDEOGRAPHIC", "Han"),
    ("HIRAGANA", "Kana"),
    ("KATAKANA", "Kana"),
    ("HALFWIDTH KATAKANA", "Kana"),
    ("HALFWIDTH HANGUL", "Hangul"),
    ("FULLWIDTH LATIN", "Latin"),
    ("MODIFIER LETTER", "Common"),
    ("OLD ", None),  # OLD ITALIC, OLD PERSIAN...: two words name the script
    ("NEW ", None),
)


@lru_cache(maxsize=65536)
def script_of_char(ch: str) -> str:
    """The script of one character, by the approximation above."""
    if not unicodedata.category(ch).startswith("L"):
        return "Common"
    name = unicodedata.name(ch, "")
    if not name:
        return "Unknown"
    for prefix, script in _PREFIXES:
        if name.startswith(prefix):
            return script if script else " ".join(name.split()[:2]).title()
    return name.split()[0].title()


def token_script(token: bytes) -> str:
    """The script of a token: its letters' script, "Common", "Mixed" or "partial UTF-8"."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return "partial UTF-8"
    scripts = {script_of_char(ch) for ch in text} - {"Common"}
    if not scripts:
        return "Common"
    return scripts.pop() if len(scripts) == 1 else "Mixed"


def coverage(tokens: Iterable[bytes]) -> Counter[str]:
    """How many tokens each script has.

    >>> sorted(coverage([b"a", b" the", b"\\xd0\\x96", b"12"]).items())
    [('Common', 1), ('Cyrillic', 1), ('Latin', 2)]
    """
    return Counter(token_script(t) for t in tokens)
