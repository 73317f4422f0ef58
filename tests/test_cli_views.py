"""The CLI's views: token rendering (show), script coverage (unicode_scripts),
held-out slices (holdout) and corpus reading (compare). Expected values are hand-derived,
or taken from Unicode's Scripts.txt for the script names."""

from __future__ import annotations

import gzip
import re

import pytest
from bytepair.cli import compare, holdout, show, unicode_scripts

# -- show -------------------------------------------------------------------------------------


def test_label_shows_text_or_hex_for_pieces_of_a_character():
    ni = "你".encode()  # e4 bd a0
    assert show.label(ni) == "你"
    assert show.label(ni[:1]) == "<e4>"
    assert show.label(ni[1:]) == "<bd a0>"
    assert show.label(b"\xff") == "<ff>"
    assert show.label(b" caf\xc3\xa9") == " café"


def test_plain_marks_boundaries_and_makes_control_whitespace_visible():
    assert show.plain([b"a", b"\t", b"b\r\n", b"c"]) == "a|\\t|b\\r\\n\n|c"


def test_coloured_alternates_and_never_spans_a_newline():
    text = show.coloured([b"a", b"b", b"\n", b"c"], [1, 2, 3, 4], special={4})
    token_part, ids_part = text.rsplit("\n", 1)
    assert "\x1b[38;5;16;48;5;153ma\x1b[0m" in token_part
    assert "\x1b[38;5;16;48;5;223mb\x1b[0m" in token_part
    assert "\x1b[7mc\x1b[0m" in token_part  # the special token, in reverse video
    for line in token_part.split("\n"):
        assert line.count("\x1b[0m") == line.count("\x1b[") / 2  # every span closed
    assert ids_part.split(" ")[0] == "\x1b[38;5;16;48;5;153m1\x1b[0m"


def test_html_page_escapes_text_and_marks_hex_and_special_tokens():
    page = show.html_page([b"<a>", b"\xe4", b"&"], [7, 8, 9], special={9}, title="t & t")
    assert "<title>t &amp; t</title>" in page
    assert '<span class="t c0" title="id 7: b&#x27;&lt;a&gt;&#x27;">&lt;a&gt;</span>' in page
    assert '<span class="t c1 hex" title="id 8: b&#x27;\\xe4&#x27;">&lt;e4&gt;</span>' in page
    assert '<span class="t c2 special" title="id 9: b&#x27;&amp;&#x27;">&amp;</span>' in page
    assert '<p class="ids">7 8 9</p>' in page


def test_html_view_names_cjk_fonts_before_the_generic_family():
    page = show.html_page([b"\xe4\xbd\xa0"], [1])
    tokens_css = re.search(r"\.tokens \{ font-family: ([^;]+);", page).group(1)
    fonts = [f.strip().strip('"') for f in tokens_css.split(",")]
    assert fonts[-1] == "monospace"
    assert {"Noto Sans Mono CJK SC", "PingFang SC", "Microsoft YaHei"} <= set(fonts)


# -- unicode_scripts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ch", "script"),  # Scripts.txt's values (Canadian_Aboriginal shortened by the names)
    [
        ("a", "Latin"),
        ("ü", "Latin"),
        ("ﬁ", "Latin"),
        ("Ａ", "Latin"),
        ("α", "Greek"),
        ("Ж", "Cyrillic"),
        ("ب", "Arabic"),
        ("א", "Hebrew"),
        ("क", "Devanagari"),
        ("ก", "Thai"),
        ("ა", "Georgian"),
        ("Ա", "Armenian"),
        ("中", "Han"),
        ("々", "Han"),
        ("ひ", "Hiragana"),
        ("カ", "Katakana"),
        ("ｶ", "Katakana"),
        ("한", "Hangul"),
        ("ᄀ", "Hangul"),
        ("𐌰", "Gothic"),
        ("ᥐ", "Tai Le"),
        ("ᐁ", "Canadian"),
        ("7", "Common"),
        (" ", "Common"),
        ("!", "Common"),
        ("\u0301", "Common"),
    ],
)
def test_script_of_char(ch, script):
    assert unicode_scripts.script_of_char(ch) == script


def test_token_script_mixed_common_and_partial():
    assert unicode_scripts.token_script("aЖ".encode()) == "Mixed"
    assert unicode_scripts.token_script(b" 123!") == "Common"
    assert unicode_scripts.token_script(" Москва".encode()) == "Cyrillic"
    assert unicode_scripts.token_script("中".encode()[:2]) == "partial UTF-8"


# -- holdout ----------------------------------------------------------------------------------


def _bytes_of(part) -> bytes:
    with open(part.path, "rb") as f:
        f.seek(part.start)
        return f.read(part.end - part.start)


def test_carve_takes_the_tail_of_the_last_file_only(tmp_path):
    first, last = tmp_path / "first.txt", tmp_path / "last.txt"
    first.write_bytes(b"a\n" * 500)
    last.write_bytes(b"line one\nline two\nline three\n")
    paths, held = holdout.carve([first, last], 0.015)
    # 1.5% of 1,029 bytes is 15, capped at half the last file (14): "wo\nline three\n",
    # cut forward to the line start.
    assert held == b"line three\n"
    assert paths[0] == str(first)
    # The rest of the last file is a byte range of it, not a copy.
    assert paths[1].path == str(last)
    assert _bytes_of(paths[1]) == b"line one\nline two\n"
    assert last.read_bytes() == b"line one\nline two\nline three\n"  # the input is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.txt", "last.txt"]


def test_carve_with_nothing_to_hold_out(tmp_path):
    f = tmp_path / "c.txt"
    f.write_bytes(b"x" * 100)
    assert holdout.carve([f], 0) == ([str(f)], b"")
    paths, held = holdout.carve([f], 0.1)  # no newline: a plain cut
    assert held == b"x" * 10 and _bytes_of(paths[0]) == b"x" * 90


def test_carve_caps_the_slice(tmp_path):
    f = tmp_path / "c.txt"
    f.write_bytes(b"word\n" * 1000)
    _, held = holdout.carve([f], 0.5, max_bytes=100)
    assert held == b"word\n" * 20  # 100 bytes back: already a line start


# -- compare ----------------------------------------------------------------------------------


def test_read_corpus_decompresses_and_cuts_at_a_line(tmp_path):
    path = tmp_path / "c.txt.gz"
    path.write_bytes(gzip.compress(b"first line\nsecond line\n"))
    assert compare.read_corpus(path, None) == b"first line\nsecond line\n"
    assert compare.read_corpus(path, 15) == b"first line\n"
