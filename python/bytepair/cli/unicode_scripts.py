"""Which writing system a token belongs to, approximated from Unicode character names.

Python's ``unicodedata`` has no Script property (Unicode's Scripts.txt), so this module
derives one from the character's name, which for nearly every letter names the script
before the word LETTER, SYLLABLE, LIGATURE, CHARACTER or IDEOGRAPH: "LATIN SMALL LETTER
A", "CYRILLIC CAPITAL LETTER ZHE", "HANGUL SYLLABLE GA", "TAI LE LETTER KA", "THAI
CHARACTER KO KAI". The approximation, and where it departs from Scripts.txt:

* only letters (category L*) decide; digits, punctuation, symbols, spaces and combining
  marks are "Common" (Scripts.txt puts marks under their base's script or "Inherited",
  and some digits, e.g. Devanagari ones, under their script);
* a few names are mapped by prefix: CJK and IDEOGRAPHIC -> Han, HIRAGANA -> Hiragana,
  KATAKANA (also halfwidth) -> Katakana, HANGUL -> Hangul, FULLWIDTH LATIN -> Latin;
* letters whose name has none of those words ("FEMININE ORDINAL INDICATOR", "KELVIN
  SIGN", "MODIFIER LETTER SMALL H", mathematical letters) are "Common", where Scripts.txt
  says Latin for a few of them;
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

# Name prefixes that decide the script on their own (checked first).
_PREFIXES = (
    ("CJK ", "Han"),
    ("IDEOGRAPHIC ", "Han"),
    ("HIRAGANA ", "Hiragana"),
    ("KATAKANA", "Katakana"),
    ("HALFWIDTH KATAKANA ", "Katakana"),
    ("HANGUL ", "Hangul"),  # the jamo: "HANGUL CHOSEONG KIYEOK"
    ("FULLWIDTH LATIN ", "Latin"),
    ("MODIFIER LETTER ", "Common"),
)
# The word after the script's name; "IDEOGRAPH-4E00" and the like count too.
_KEYWORDS = {"LETTER", "SYLLABLE", "SYLLABICS", "LIGATURE", "CHARACTER", "IDEOGRAPH"}
_CASE_WORDS = {"SMALL", "CAPITAL"}


@lru_cache(maxsize=65536)
def script_of_char(ch: str) -> str:
    """The script of one character, by the approximation above."""
    if not unicodedata.category(ch).startswith("L"):
        return "Common"
    name = unicodedata.name(ch, "")
    for prefix, script in _PREFIXES:
        if name.startswith(prefix):
            return script
    words = name.split()
    for k, word in enumerate(words):
        if word.split("-")[0] in _KEYWORDS:
            head = [w for w in words[:k] if w not in _CASE_WORDS]
            return " ".join(head).title() if head else "Common"
    return "Common"


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
