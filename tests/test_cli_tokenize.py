"""`bytepair tokenize`: token boundaries, ids and hex for pieces of a character, text from an
argument, a file or stdin, colour only when asked or on a terminal, a self-contained HTML
page, tiktoken's encodings by name, and the plain view's escaped separator."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

import bytepair
from cli_run import ok, run


def test_tokenize_shows_boundaries_ids_and_hex_for_partial_utf8(cat_tok):
    out = ok(run("tokenize", "-t", cat_tok, "the cat sat 你"))
    tokens_line, ids_line, summary = out.splitlines()
    # Hand-derived: see docs/tutorial.md. 你 is e4 bd a0, three single-byte tokens.
    assert tokens_line == "the| |c|at| |sat| |<e4>|<bd>|<a0>"
    assert ids_line == "258 32 99 256 32 260 32 228 189 160"
    assert summary.startswith("10 tokens, 15 bytes")


def test_tokenize_reads_a_file_or_stdin(tmp_path, cat_tok):
    f = tmp_path / "t.txt"
    f.write_text("the hat")
    by_file = ok(run("tokenize", "-t", cat_tok, "--file", f))
    by_stdin = ok(run("tokenize", "-t", cat_tok, input=b"the hat"))
    assert by_file == by_stdin
    assert by_file.splitlines()[0] == "the| |h|at"


def test_tokenize_colours_only_when_asked_or_on_a_terminal(cat_tok):
    piped = ok(run("tokenize", "-t", cat_tok, "the cat"))
    assert "\x1b[" not in piped
    forced = ok(run("tokenize", "-t", cat_tok, "the cat", "--color", "always"))
    assert "48;5;" in forced
    assert "|" not in forced.splitlines()[0]

    def on_a_terminal(env_extra: dict) -> bytes:
        leader, follower = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update(env_extra, TERM="xterm-256color")
        proc = subprocess.Popen(
            [sys.executable, "-m", "bytepair", "tokenize", "-t", str(cat_tok), "the cat"],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        return b"".join(chunks)

    assert b"\x1b[" in on_a_terminal({})
    assert b"\x1b[" not in on_a_terminal({"NO_COLOR": "1"})


def test_tokenize_html_page_is_self_contained(tmp_path, cat_tok):
    page_path = tmp_path / "view.html"
    ok(run("tokenize", "-t", cat_tok, "the cat <b>", "--html", page_path))
    page = page_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "src=" not in page and "href=" not in page
    assert page.count('<span class="t ') == 8  # the, ' ', c, at, ' ', <, b, >
    assert "&lt;" in page and "<b>" not in page  # the text is escaped
    assert 'title="id 258: b&#x27;the&#x27;"' in page


def test_tokenize_with_a_tiktoken_encoding_name_matches_tiktoken(tiktoken_encoding):
    text = "strawberry 1234567 你好 <|endoftext|>"
    expected = tiktoken_encoding("gpt2").encode(text, allowed_special="all")
    out = ok(run("tokenize", "-t", "gpt2", text))
    assert out.splitlines()[1] == " ".join(map(str, expected))
    encoded = ok(run("encode", "-t", "gpt2", "--allow-special", input=text.encode()))
    assert encoded == " ".join(map(str, expected)) + "\n"


def test_plain_tokenize_escapes_the_separator(tmp_path):
    # A byte-level tokenizer with the merge "|" + "|": "a||b" is a, ||, b.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"||"}
    tok = bytepair.Tokenizer(vocab, [(b"|", b"|")])
    path = tmp_path / "pipe.json"
    tok.save(path)
    out = ok(run("tokenize", "-t", path, "a||b \\|", "--color", "never", "-q"))
    tokens_line = out.splitlines()[0]
    # a | || | b | ' ' | \ | |   (the backslash and the lone pipe are escaped)
    assert tokens_line == "a|\\|\\||b| |\\\\|\\|", tokens_line
    # Every unescaped | is a boundary: splitting there gives the tokens back.
    pieces = re.split(r"(?<!\\)\|", tokens_line.replace("\\\\", "\0"))
    assert [p.replace("\0", "\\").replace("\\|", "|") for p in pieces] == [
        "a", "||", "b", " ", "\\", "|",
    ]  # fmt: skip


def test_tokenize_escapes_every_control_character(tmp_path):
    """C0 controls, DEL and C1 controls (ESC starts a terminal escape sequence, NEL and CSI
    are C1) are shown as escapes, as tab, newline and carriage return are, never raw."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: "\x85".encode(), 257: "\x9b".encode()}
    path = tmp_path / "c1.json"
    bytepair.Tokenizer(vocab, [(b"\xc2", b"\x85"), (b"\xc2", b"\x9b")]).save(path)
    text = "a\tb\x1b[31mc\x00d\x85e\x7f\x9b\r\n"
    (tmp_path / "in.txt").write_text(text, "utf-8")
    plain = ok(run("tokenize", "-t", path, "-f", tmp_path / "in.txt", "--no-ids"))
    assert plain.splitlines()[0] == r"a|\t|b|\x1b|[|3|1|m|c|\x00|d|\x85|e|\x7f|\x9b|\r|\n"
    coloured = ok(run("tokenize", "-t", path, "-f", tmp_path / "in.txt", "--color", "always"))
    # Only the colours' own escape sequences, and the newlines of the layout, are raw.
    bare = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert not [ch for ch in bare if ch != "\n" and (ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0)]
    assert bare.startswith(r"a\tb\x1b[31mc\x00d\x85e\x7f\x9b\r\n")
