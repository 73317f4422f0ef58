"""The `bytepair` command line, driven as a user drives it: through a subprocess.

Expected values come from hand derivations (the "the cat in the hat" merges of
docs/tutorial.md), from tiktoken (for `-t gpt2`), or from round trips (decode gives the
input back byte for byte).
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import bytepair
import pytest
from cli_run import CAT, CAT_MERGES, assert_not_replaced, assert_usage_error, ok, run

# -- the entry points ---------------------------------------------------------------------


def test_help_lists_every_subcommand():
    out = ok(run("--help"))
    for command in ("train", "encode", "decode", "tokenize", "inspect", "compare", "convert"):
        assert command in out


@pytest.mark.parametrize(
    "command", ["train", "encode", "decode", "tokenize", "inspect", "compare", "convert"]
)
def test_help_explains_every_argument(command):
    """Each argument line of `bytepair COMMAND --help` has a description after its name:
    `--vocab-size VOCAB_SIZE`, `--threads THREADS`, `FILE` or `IN OUT` alone told a new
    user nothing (not their meaning, their default, or which is which)."""
    lines = ok(run(command, "--help")).splitlines()
    listed = lines[lines.index("positional arguments:") :]
    bare = []
    for i, line in enumerate(listed):
        # An argument line is indented by 2; its help follows on it (after 2+ spaces) or
        # on the next line, indented further.
        if not line.startswith("  ") or line.startswith("   "):
            continue
        follows = listed[i + 1] if i + 1 < len(listed) else ""
        if "  " not in line.strip() and not follows.startswith("   "):
            bare.append(line.strip())
    assert bare == []


def test_console_script_and_module_agree():
    script = Path(sys.executable).parent / "bytepair"
    assert script.exists(), "the bytepair console script is not installed"
    by_script = subprocess.run([script, "--version"], capture_output=True, check=True).stdout
    assert by_script == run("--version").stdout == f"bytepair {bytepair.__version__}\n".encode()


def _typed_errors():
    """One instance of every error class bytepair raises (each subclass of BytepairError)."""
    from bytepair import errors

    made = {
        errors.DisallowedSpecialError: lambda: errors.DisallowedSpecialError("<|x|>"),
        errors.UnknownIdError: lambda: errors.UnknownIdError(7, 5),
        errors.TokenizerNotFoundError: lambda: errors.TokenizerNotFoundError("t.json", "why"),
    }
    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.BytepairError)
    ]
    assert len(classes) >= 11
    return [made.get(c, lambda c=c: c("what went wrong\nand why"))() for c in classes]


@pytest.mark.parametrize("error", _typed_errors(), ids=lambda e: type(e).__name__)
def test_every_typed_error_is_one_line_and_status_2(monkeypatch, capsys, error):
    import warnings

    from bytepair import cli
    from bytepair.cli import inspect

    def fail(args):
        raise error

    monkeypatch.setattr(inspect, "run", fail)  # the parser is built per call of main()
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    assert cli.main(["inspect", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bytepair: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


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


def test_compare_without_a_corpus_shows_the_vocabulary_overlap(tmp_path):
    """The Qwen3.5 tutorial compares two trainings by the share of tokens they have in
    common, which needs no corpus. Hand count: A holds the 256 bytes and "ab", B those and
    "abc": 257 shared, all of A's and 257/258 = 99.6% of B's."""
    byte_vocab = {i: bytes([i]) for i in range(256)}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    bytepair.Tokenizer(byte_vocab | {256: b"ab"}, [(b"a", b"b")]).save(a)
    merges = [(b"a", b"b"), (b"ab", b"c")]
    bytepair.Tokenizer(byte_vocab | {256: b"ab", 257: b"abc"}, merges).save(b)
    out = ok(run("compare", a, b))
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:4]}
    assert out.startswith("vocabulary overlap")
    assert rows == {
        "a.json": ["257", "100.0%", "257", "100.0%"],
        "b.json": ["257", "99.6%", "258", "100.0%"],
    }
    for needs in (["--audit"], ["--plot", tmp_path / "p.png"], ["--reference", a]):
        assert_usage_error(run("compare", a, b, *needs), "--corpus")


def test_compare_labels_two_trainings_by_their_folders(tmp_path, cat_tok, en_tok):
    """Two tokenizer.json files in two folders: each column is named by its folder, the
    same way; so are corpora of one name."""
    for name, tok in (("A", cat_tok), ("B", en_tok)):
        (tmp_path / name).mkdir()
        bytepair.Tokenizer.load(tok).save(tmp_path / name / "tokenizer.json")
        (tmp_path / name / "c.txt").write_text("the cat sat on the mat\n")
    a, b = tmp_path / "A" / "tokenizer.json", tmp_path / "B" / "tokenizer.json"
    corpora = [tmp_path / "A" / "c.txt", tmp_path / "B" / "c.txt"]
    out = ok(run("compare", a, b, "--corpus", *corpora, cwd=tmp_path))
    header = out.splitlines()[1].split()
    assert header == ["corpus", "A/tokenizer.json", "B/tokenizer.json"]
    rows = [line.split()[0] for line in out.splitlines()[2:4]]
    assert rows == ["A/c.txt", "B/c.txt"]
    assert_usage_error(run("compare", a, a, "--corpus", corpora[0]), "given twice")


@pytest.mark.parametrize("name", ["chart.svg", "chart.pdf", "chart.txt"])
def test_compare_plot_is_refused_under_a_name_that_is_not_png(tmp_path, cat_tok, name):
    """--plot OUT.png draws a PNG: under another suffix it wrote PNG bytes that a viewer
    opens as SVG or PDF and fails on. Refused before any work; nothing is written."""
    corpus = tmp_path / "c.txt"
    corpus.write_text(CAT)
    assert_usage_error(run("compare", cat_tok, "--corpus", corpus, "--plot", tmp_path / name))
    assert not (tmp_path / name).exists()


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
    # A rank file stores no pattern: GPT-2's is en_tok's, given here so that none is guessed.
    options = {"pattern": "gpt2"} if name.endswith(".tiktoken") else {}
    after = bytepair.Tokenizer.load(out, **options)
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


def test_convert_takes_format_as_train_does(tmp_path, cat_tok):
    """train names the output format --format; convert called it only --to, so the same
    flag was a usage error there. Both now work. The tiktoken file's lines are checked
    against the format itself: base64 of the token's bytes, then its rank (ids 0-255 are the
    single bytes, then CAT's five merges in order)."""
    out = tmp_path / "cat.ranks"
    ok(run("convert", cat_tok, out, "--format", "tiktoken"))
    lines = out.read_bytes().splitlines()
    tokens = [bytes([i]) for i in range(256)] + [a + b for a, b in CAT_MERGES]
    assert lines == [base64.b64encode(t) + b" %d" % i for i, t in enumerate(tokens)]


def test_convert_replaces_an_existing_output_only_with_force(tmp_path, en_tok):
    out = tmp_path / "t.tiktoken"
    out.write_bytes(b"a file the user wants to keep\n")
    assert "choose another OUT" in assert_not_replaced(out, "convert", en_tok, out)
    ok(run("convert", en_tok, out, "--force"))
    text = "Hello, wörld! the end"
    after = bytepair.Tokenizer.load(out, pattern="gpt2")
    assert after.encode(text) == bytepair.Tokenizer.load(en_tok).encode(text)


@pytest.mark.parametrize("option", ["--html", "--plot"])
def test_a_page_or_plot_replaces_an_existing_file_only_with_force(tmp_path, en_tok, option):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n")
    command = {
        "--html": ["tokenize", "-t", en_tok, "the cat", "--color", "never"],
        "--plot": ["compare", en_tok, "--corpus", corpus],
    }[option]
    out = tmp_path / ("page.html" if option == "--html" else "chart.png")
    out.write_bytes(b"a file the user wants to keep\n")
    assert f"choose another {option}" in assert_not_replaced(out, *command, option, out)
    ok(run(*command, option, out, "--force"))
    start = {"--html": b"<!DOCTYPE html>", "--plot": b"\x89PNG\r\n\x1a\n"}[option]
    assert out.read_bytes().startswith(start)


def test_a_page_or_plot_never_replaces_its_own_text(tmp_path, en_tok):
    """tokenize --file F --html F and compare --corpus F --plot F are refused, --force or
    not, and F is kept."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n")
    for command in (
        ["tokenize", "-t", en_tok, "--file", corpus, "--html", corpus],
        ["compare", en_tok, "--corpus", corpus, "--plot", corpus],
    ):
        assert_usage_error(run(*command, "--force"), "is the input file")
        assert corpus.read_text() == "the cat sat on the mat\n"


def test_convert_never_writes_over_its_input(tmp_path, en_tok):
    """convert IN IN, even to another format and with --force, is refused; IN is kept."""
    tok = tmp_path / "tok.json"
    tok.write_bytes(en_tok.read_bytes())
    before = tok.read_bytes()
    command = ["convert", tok, tok, "--to", "tiktoken", "--force"]
    assert_usage_error(run(*command), "is the input file")
    assert tok.read_bytes() == before


@pytest.mark.parametrize("out", ["-", "/dev/stdout"])
def test_convert_to_stdout_is_refused_and_keeps_a_file_named_dash(tmp_path, en_tok, out):
    """`-` and /dev/stdout are stdout (README), which a tokenizer file, written atomically,
    cannot go to: convert used to write a file named `-`, replacing one without --force,
    and to say of /dev/stdout on a pipe that "its folder does not exist"."""
    keep = b"a file the user wants to keep\n"
    (tmp_path / "-").write_bytes(keep)
    proc = run("convert", en_tok, out, cwd=tmp_path)
    assert_usage_error(proc, f"OUT {out}", "stdout")
    assert proc.stdout == b""
    assert (tmp_path / "-").read_bytes() == keep
    assert sorted(p.name for p in tmp_path.iterdir()) == ["-"]


def test_every_command_takes_force():
    for command in ("train", "encode", "decode", "tokenize", "inspect", "compare", "convert"):
        assert "--force" in ok(run(command, "--help")), command


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
