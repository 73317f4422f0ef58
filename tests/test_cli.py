"""The `bytepair` command line, driven as a user drives it: through a subprocess.

Expected values come from hand derivations (the "the cat in the hat" merges of
docs/tutorial.md), from tiktoken (for `-t gpt2`), or from round trips (decode gives the
input back byte for byte).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import bytepair
import pytest
from bytepair.cli import report
from conftest import corpus_sample

CAT = "the cat in the hat sat on the mat"
# The five merges of CAT, derived by hand in docs/tutorial.md.
CAT_MERGES = [(b"a", b"t"), (b"t", b"h"), (b"th", b"e"), (b" ", b"the"), (b"s", b"at")]


def run(*args, input: bytes | None = None, env: dict | None = None, cwd=None):
    """Runs `python -m bytepair ARGS`; returns the CompletedProcess (bytes out/err)."""
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        input=input,
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=300,
    )


def ok(proc) -> str:
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    return proc.stdout.decode("utf-8", "surrogateescape")


def assert_usage_error(proc, *words: str) -> str:
    """Exit 2, exactly one line on stderr, no traceback, naming the given words."""
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("bytepair: error: "), err
    for w in words:
        assert w in err, (w, err)
    return err


@pytest.fixture(scope="module")
def en_corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "en.txt"
    path.write_bytes(corpus_sample("en-prose", 60_000))
    return path


@pytest.fixture(scope="module")
def en_tok(tmp_path_factory, en_corpus) -> Path:
    """A 320-token tokenizer trained through the CLI on English prose, with a special token."""
    out = tmp_path_factory.mktemp("tok") / "en.json"
    ok(
        run(
            "train",
            en_corpus,
            "-o",
            out,
            "--vocab-size",
            320,
            "--special-token",
            "<|endoftext|>",
            "--quiet",
        )
    )
    return out


@pytest.fixture(scope="module")
def cat_tok(tmp_path_factory) -> Path:
    """The tutorial's five-merge tokenizer, trained through the CLI."""
    d = tmp_path_factory.mktemp("cat")
    (d / "cat.txt").write_text(CAT)
    ok(run("train", d / "cat.txt", "-o", d / "cat.json", "--vocab-size", 261, "--holdout", 0, "-q"))
    return d / "cat.json"


# -- the entry points ---------------------------------------------------------------------


def test_help_lists_every_subcommand():
    out = ok(run("--help"))
    for command in ("train", "encode", "decode", "tokenize", "inspect", "compare", "convert"):
        assert command in out


def test_console_script_and_module_agree():
    script = Path(sys.executable).parent / "bytepair"
    assert script.exists(), "the bytepair console script is not installed"
    by_script = subprocess.run([script, "--version"], capture_output=True, check=True).stdout
    assert by_script == run("--version").stdout == f"bytepair {bytepair.__version__}\n".encode()


# -- train ----------------------------------------------------------------------------------


def test_train_writes_the_hand_derived_merges(cat_tok):
    tok = bytepair.Tokenizer.load(cat_tok)
    assert tok.merges == CAT_MERGES
    assert tok.vocab_size == 261


def test_train_summary(tmp_path, en_corpus):
    out = tmp_path / "tok.json"
    args = ("--vocab-size", 300, "--special-token", "<|x|>", "--holdout", 0.01)
    text = ok(run("train", en_corpus, "-o", out, *args))
    for line in (
        "saved",
        "wall time",
        "peak memory",
        "vocab size      300",
        "bytes/token",
        "held out of training",
        "longest tokens",
    ):
        assert line in text, text
    tok = bytepair.Tokenizer.load(out)
    assert tok.vocab_size == 300
    assert tok.special_tokens == {"<|x|>": 299}
    # The summary lists the saved tokenizer's longest token (ties: the latest learned).
    _, longest = max((len(b), i) for i, b in tok.vocab.items() if i != 299)
    assert len(tok.vocab[longest]) >= 2
    shown = next(line for line in text.splitlines() if line.startswith("longest tokens"))
    assert report.token_repr(tok.vocab[longest]) in shown  # long ones are cut with …


def test_train_holds_the_tail_out(tmp_path):
    # The last third of the corpus has a word found nowhere else; held out, it is never
    # merged. Without the hold-out it is.
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab ab ab ab\n" * 60 + "xy xy xy xy\n" * 30)
    held = tmp_path / "held.json"
    ok(run("train", corpus, "-o", held, "--vocab-size", 262, "--holdout", 0.34, "-q"))
    merges = bytepair.Tokenizer.load(held).merges
    assert (b"a", b"b") in merges
    assert not any(b"x" in a + b or b"y" in a + b for a, b in merges), merges
    full = tmp_path / "full.json"
    ok(run("train", corpus, "-o", full, "--vocab-size", 262, "--holdout", 0, "-q"))
    assert (b"x", b"y") in bytepair.Tokenizer.load(full).merges


def test_train_is_quiet_when_asked(tmp_path, en_corpus):
    proc = run("train", en_corpus, "-o", tmp_path / "t.json", "--vocab-size", 280, "--quiet")
    ok(proc)
    assert proc.stderr == b""


def test_train_shows_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, en_corpus):
    proc = run("train", en_corpus, "-o", tmp_path / "t.json", "--vocab-size", 280)
    ok(proc)
    assert b"\r" not in proc.stderr and b"\x1b[" not in proc.stderr


# -- encode / decode --------------------------------------------------------------------------


ROUND_TRIP = (
    "Hello, wörld! 你好，世界。 Ünïcödé ✓ emoji 🙂\r\n"
    "tabs\tand   spaces  \n\n  trailing spaces   \n"
).encode() + b"invalid utf-8: \xff\xfe \xe4\xbd and the end without newline"


def test_encode_decode_pipe_round_trips_bytes_exactly(en_tok):
    ids = run("encode", "-t", en_tok, input=ROUND_TRIP)
    text = ok(ids)
    assert text.endswith("\n") and text.count("\n") == 1, "ids are one line"
    numbers = [int(x) for x in text.split(" ")]
    assert all(0 <= i < 320 for i in numbers)
    assert len(numbers) < len(ROUND_TRIP), "a trained tokenizer merges something"
    back = run("decode", "-t", en_tok, input=ids.stdout)
    ok(back)
    assert back.stdout == ROUND_TRIP


def test_encode_decode_files(tmp_path, en_tok):
    src = tmp_path / "in.txt"
    src.write_bytes(ROUND_TRIP)
    ok(run("encode", "-t", en_tok, src, "-o", tmp_path / "ids.txt"))
    ok(run("decode", "-t", en_tok, tmp_path / "ids.txt", "-o", tmp_path / "out.txt"))
    assert (tmp_path / "out.txt").read_bytes() == ROUND_TRIP
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


def test_encode_refuses_special_token_text_unless_told(en_tok):
    text = b"one<|endoftext|>two"
    assert_usage_error(
        run("encode", "-t", en_tok, input=text),
        "<|endoftext|>",
        "--allow-special",
        "--special-as-text",
    )
    allowed = [
        int(x) for x in ok(run("encode", "-t", en_tok, "--allow-special", input=text)).split()
    ]
    assert allowed.count(319) == 1  # the special token's id: the last one
    as_text = run("encode", "-t", en_tok, "--special-as-text", input=text)
    assert 319 not in [int(x) for x in ok(as_text).split()]
    assert ok(run("decode", "-t", en_tok, input=as_text.stdout)).encode() == text


def test_encode_to_npy_uses_encode_file(tmp_path, en_tok, en_corpus):
    import numpy

    out = tmp_path / "ids.npy"
    ok(run("encode", "-t", en_tok, en_corpus, "-o", out, "-q"))
    ids = numpy.load(out)
    assert ids.dtype == numpy.uint16  # 320 tokens fit
    assert bytepair.Tokenizer.load(en_tok).decode_bytes(ids.tolist()) == en_corpus.read_bytes()
    decoded = run("decode", "-t", en_tok, out)
    ok(decoded)
    assert decoded.stdout == en_corpus.read_bytes()


def test_encode_streams_input_larger_than_its_blocks(tmp_path, en_tok, en_corpus):
    """encode reads 1 MB blocks: ids across block boundaries (characters split between them)
    equal encode_bytes of the whole, and memory does not grow with the input."""
    tok = bytepair.Tokenizer.load(en_tok)
    unit = en_corpus.read_bytes() + "中文，一个字符。\n".encode() + b"\xff"
    peaks = []
    # Both inputs span several 1 MB blocks (a copy is 60 KB), so their peaks differ by what
    # grows with the input, not by the working set of a block in flight (about 15 MB).
    for copies in (100, 400):
        src = tmp_path / f"in{copies}.txt"
        src.write_bytes(unit * copies)
        proc = subprocess.run(
            [sys.executable, "-c", PEAK_OF_CLI, "encode", "-t", en_tok, "--allow-special", src],
            capture_output=True,
            timeout=300,
        )
        out, peak = proc.stdout.rsplit(b"\n", 2)[0], int(proc.stdout.rsplit(b"\n", 2)[1])
        assert proc.returncode == 0, proc.stderr.decode()
        want = tok.encode_bytes(src.read_bytes(), allowed_special="all")
        if copies == 100:
            assert [int(x) for x in out.split()] == want
        else:  # the same blocks again: the count suffices, and parsing 8M ids takes long
            assert out.count(b" ") + 1 == len(want)
        peaks.append(peak)
    # 4x the input (18 MB more of it) may cost 10 MB more (it costs about 4 MB); reading 6 MB
    # whole cost 287 MB more.
    assert peaks[1] <= peaks[0] + 10_000, peaks


# Runs the CLI in this process, then prints its peak RSS in KB on a line of its own: VmHWM,
# not ru_maxrss, which keeps the peak of the process that forked it (pytest's, which grew
# as earlier tests and this one parsed ids).
PEAK_OF_CLI = """
import re, sys
from bytepair.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
status = open("/proc/self/status").read()
print("\\n" + re.search(r"VmHWM:\\s+(\\d+)", status).group(1))
sys.exit(code)
"""


def test_decode_rejects_what_is_not_an_id(en_tok):
    assert_usage_error(run("decode", "-t", en_tok, input=b"1 2 cat 3\n"), "'cat'")
    assert_usage_error(run("decode", "-t", en_tok, input=b"1 99999\n"), "99999")


def test_encode_into_a_closed_pipe_is_not_an_error(en_tok, en_corpus):
    proc = subprocess.run(
        f"{sys.executable} -m bytepair encode -t {en_tok} --allow-special {en_corpus} | head -c 10",
        shell=True,
        capture_output=True,
        timeout=300,
    )
    assert len(proc.stdout) == 10
    assert b"Traceback" not in proc.stderr and b"Error" not in proc.stderr, proc.stderr


# -- tokenize ---------------------------------------------------------------------------------


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


# -- inspect ----------------------------------------------------------------------------------


def test_inspect_reports_the_hand_derived_tokenizer(cat_tok):
    out = ok(run("inspect", cat_tok))
    assert "vocab size      261" in out
    assert "merges          5" in out
    assert "pattern         gpt2" in out
    assert "special tokens  (none)" in out
    first = out.split("first 5 merges:\n")[1].splitlines()[:5]
    assert [" ".join(line.split()[1:]) for line in first] == [
        "'a' + 't'",
        "'t' + 'h'",
        "'th' + 'e'",
        "' ' + 'the'",
        "'s' + 'at'",
    ]
    longest = out.split("longest 10 tokens:\n")[1].splitlines()[0]
    assert longest.split() == ["259", "4", "bytes", "'", "the'"]
    # Lengths: 256 single bytes; at, th; the, sat; ' the'.
    histogram = out.split("token length (bytes):\n")[1].splitlines()[:4]
    assert [line.split()[:2] for line in histogram] == [
        ["1", "256"],
        ["2", "2"],
        ["3", "2"],
        ["4", "1"],
    ]


def test_inspect_script_counts(cat_tok):
    # The 128 bytes >= 0x80 are partial UTF-8; the 52 ASCII letters and the 5 merged
    # tokens are Latin; the other 76 ASCII bytes (digits, punctuation, space) are Common.
    out = ok(run("inspect", cat_tok))
    rows = out.split("tokens by script")[1].splitlines()[1:]
    table = {}
    for row in rows:
        name, count = row.rsplit("%", 1)[0].rsplit(None, 2)[:2]
        table[name.strip()] = int(count.replace(",", ""))
    assert table == {"partial UTF-8": 128, "Common": 76, "Latin": 57}


def test_inspect_accepts_a_tiktoken_name(tiktoken_encoding):
    tiktoken_encoding("gpt2")  # makes it load offline
    out = ok(run("inspect", "gpt2", "--show", 3))
    assert "vocab size      50,257" in out
    assert "'<|endoftext|>'=50256" in out


# -- compare ----------------------------------------------------------------------------------


def test_compare_tables_and_plot(tmp_path, cat_tok, en_tok):
    corpus = tmp_path / "cats.txt"
    corpus.write_text("the cat sat on the mat\n")
    plot = tmp_path / "chart.png"
    out = ok(run("compare", cat_tok, en_tok, "--corpus", corpus, "--plot", plot))
    rows = dict(line.split(None, 1) for line in out.splitlines() if line.startswith("cats.txt"))
    # Hand-derived with the tutorial's merges: the| |c|at| |sat| |o|n| the| |m|at|\n is
    # 14 tokens for 23 bytes.
    assert rows["cats.txt"].split()[0] == f"{23 / 14:.2f}"
    overlap = out.split("vocabulary overlap")[1]
    cat_row = next(line for line in overlap.splitlines() if line.startswith("cat.json"))
    assert cat_row.split()[1:3] == ["261", "100.0%"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_plot_without_matplotlib_says_how_to_install(tmp_path, cat_tok):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat\n")
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from bytepair.cli import main\n"
        f"sys.exit(main(['compare', {str(cat_tok)!r}, '--corpus', {str(corpus)!r},"
        f" '--plot', {str(tmp_path / 'x.png')!r}]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert_usage_error(proc, "matplotlib", "bytepair[plot]")
    assert not (tmp_path / "x.png").exists()


def test_compare_reads_compressed_corpora(tmp_path, cat_tok):
    import lzma

    (tmp_path / "c.txt.xz").write_bytes(lzma.compress(b"the cat sat on the mat\n"))
    out = ok(run("compare", cat_tok, "--corpus", tmp_path / "c.txt.xz"))
    assert f"{23 / 14:.2f}" in out


# -- convert ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["out.tiktoken", "gpt2-dir/"])
def test_convert_then_load_encodes_the_same(tmp_path, en_tok, name):
    out = str(tmp_path / name)
    ok(run("convert", en_tok, out, "-q"))
    text = "Hello, wörld! 你好 the end"
    before = bytepair.Tokenizer.load(en_tok)
    after = bytepair.Tokenizer.load(out)
    assert after.encode(text) == before.encode(text)


def test_convert_gives_a_tiktoken_file_its_special_tokens_back(tmp_path, en_tok):
    # A .tiktoken file stores ranks only: the special token comes back through the option.
    ok(run("convert", en_tok, tmp_path / "t.tiktoken"))
    ok(
        run(
            "convert",
            tmp_path / "t.tiktoken",
            tmp_path / "back.json",
            "--special-token",
            "<|endoftext|>",
        )
    )
    back = bytepair.Tokenizer.load(tmp_path / "back.json")
    assert back.special_tokens == {"<|endoftext|>": 319}
    text = "one<|endoftext|>two"
    original = bytepair.Tokenizer.load(en_tok)
    assert back.encode(text, allowed_special="all") == original.encode(text, allowed_special="all")


# -- mistakes -------------------------------------------------------------------------------


def test_bad_arguments_give_one_line_and_status_2(tmp_path, en_tok, en_corpus):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    out = tmp_path / "o.json"
    cases = [
        ([], ["COMMAND"]),
        (["frob"], ["frob"]),
        (["train"], ["required"]),
        (["train", tmp_path / "missing.txt", "-o", out, "--vocab-size", 300], ["missing.txt"]),
        (["train", en_corpus, "-o", out, "--vocab-size", "lots"], ["lots"]),
        (["train", en_corpus, "-o", out, "--vocab-size", 100], ["100"]),
        (["train", en_corpus, "-o", out, "--vocab-size", 300, "--pattern", "gtp2"], ["gtp2"]),
        (["train", en_corpus, "-o", out, "--vocab-size", 300, "--holdout", 2], ["2"]),
        (["encode", "-t", "nope"], ["nope"]),
        (["encode", "-t", en_tok, tmp_path / "missing.txt"], ["missing.txt"]),
        (["inspect", tmp_path / "missing.json"], ["missing.json"]),
        (["inspect", garbage], ["garbage.json"]),
        (["compare", en_tok, "--corpus", tmp_path / "missing.txt"], ["missing.txt"]),
        (["convert", tmp_path / "missing.json", out], ["missing.json"]),
        (["tokenize", "-t", en_tok, "--file", tmp_path / "missing.txt"], ["missing.txt"]),
        (["tokenize", "-t", en_tok, "--file", en_corpus, "text"], ["not both"]),
        (
            ["train", en_corpus, "-o", tmp_path / "no" / "such" / "t.json", "--vocab-size", 300],
            ["no/such"],
        ),
        (
            ["compare", en_tok, "--corpus", en_corpus, "--plot", tmp_path / "nodir" / "p.png"],
            ["nodir"],
        ),
    ]
    for args, words in cases:
        assert_usage_error(run(*args, input=b""), *words)
    assert not out.exists()
