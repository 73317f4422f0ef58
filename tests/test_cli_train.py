"""`bytepair train` on the command line: it trains what bytepair.train trains (by default,
on a sample of documents), its --compat/--base/--max-token-length flags reach
bytepair.train, and its mistakes are one-line usage errors."""

from __future__ import annotations

import os

import bytepair
import pytest
import rustbpe
from bytepair import patterns
from bytepair.cli import report
from cli_run import CAT, CAT_MERGES, assert_not_replaced, assert_usage_error, ok, run
from conftest import EOT, corpus_documents, corpus_sample

# -- train: merges, summary, held-out tail, progress ----------------------------------------


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
    assert proc.stderr == b"" and proc.stdout == b""  # no summary either
    assert bytepair.Tokenizer.load(tmp_path / "t.json").vocab_size == 280


def test_train_shows_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, en_corpus):
    proc = run("train", en_corpus, "-o", tmp_path / "t.json", "--vocab-size", 280)
    ok(proc)
    assert b"\r" not in proc.stderr and b"\x1b[" not in proc.stderr


def test_train_never_writes_over_or_into_its_corpus(tmp_path):
    """The corpus itself as -o is refused, --force or not, and the corpus is kept; so is
    an output that a later run on the same directory or glob would read as text."""
    corpus = tmp_path / "data" / "cat.txt"
    corpus.parent.mkdir()
    corpus.write_text(CAT)
    train = ["train", "--vocab-size", 261, "--holdout", 0, "-q", "--force"]
    err = assert_usage_error(run(*train, corpus, "-o", corpus), "is the input file")
    assert "choose another output" in err and corpus.read_text() == CAT
    assert_usage_error(run(*train, corpus.parent, "-o", corpus.parent / "t.json"), "inside")
    assert_usage_error(run(*train, f"{corpus.parent}/*", "-o", corpus.parent / "t.json"), "glob")
    assert os.listdir(corpus.parent) == ["cat.txt"]
    ok(run(*train, corpus.parent, "-o", tmp_path / "t.json"))


def test_train_replaces_an_existing_output_only_with_force(tmp_path):
    corpus = tmp_path / "cat.txt"
    corpus.write_text(CAT)
    out = tmp_path / "tok.json"
    out.write_bytes(b"a file the user wants to keep\n")
    train = ["train", corpus, "--vocab-size", 261, "--holdout", 0, "-q", "-o"]
    assert_not_replaced(out, *train, out)
    ok(run(*train, out, "--force"))
    assert bytepair.Tokenizer.load(out).merges == CAT_MERGES
    # A folder of GPT-2 files: the files written in it count, not the folder.
    (tmp_path / "gpt2").mkdir()
    merges = tmp_path / "gpt2" / "merges.txt"
    merges.write_bytes(b"#version: 0.2\n")
    assert_not_replaced(merges, *train, f"{tmp_path / 'gpt2'}/")
    assert not (tmp_path / "gpt2" / "vocab.json").exists()
    ok(run(*train, f"{tmp_path / 'gpt2'}/", "--force"))
    saved = bytepair.Tokenizer.load((tmp_path / "gpt2" / "vocab.json", merges))
    assert saved.merges == CAT_MERGES


# -- bytepair train agrees with bytepair.train ---------------------------------------------


def test_train_to_stdout_is_refused_and_keeps_a_file_named_dash(tmp_path):
    """`-o -` is stdout (README), which a tokenizer file, written atomically, cannot go to:
    train used to write a file named `-`, replacing one without --force."""
    (tmp_path / "c.txt").write_text(CAT)
    keep = b"a file the user wants to keep\n"
    (tmp_path / "-").write_bytes(keep)
    proc = run("train", "c.txt", "-o", "-", "--vocab-size", 261, cwd=tmp_path)
    assert_usage_error(proc, "-o -", "stdout")
    assert proc.stdout == b""
    assert (tmp_path / "-").read_bytes() == keep


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("first-use") / "en.txt"
    path.write_bytes(corpus_sample("en-prose", 40_000))
    return path


def test_cli_and_python_train_the_same_tokenizer_by_default(tmp_path, corpus):
    out = tmp_path / "cli.json"
    text = ok(run("train", corpus, "-o", out, "--vocab-size", 400, "--special-token", EOT))
    in_python = bytepair.train([corpus], 400, special_tokens=[EOT], progress=False)
    assert bytepair.Tokenizer.load(out).merges == in_python.merges
    assert "held out" not in text and "--holdout 0.01" in text


def test_cli_sample_documents_equals_python(tmp_path):
    docs = [d.replace(EOT.encode(), b"") for d in corpus_documents("multilingual", 60, 3)]
    path = tmp_path / "docs.txt"
    path.write_bytes(EOT.encode().join(docs))
    out = tmp_path / "s.json"
    text = ok(
        run(
            "train", path, "-o", out, "--vocab-size", 400, "--special-token", EOT,
            "--sample-documents", 20, "--seed", 3,
        )
    )  # fmt: skip
    assert "trained on      20 of 60 documents (a random sample), seed 3" in text, text
    in_python = bytepair.train(
        [path], 400, special_tokens=[EOT], sample_documents=20, seed=3, progress=False
    )
    assert bytepair.Tokenizer.load(out).merges == in_python.merges
    text = ok(run("train", path, "-o", tmp_path / "all.json", "--vocab-size", 300,
                  "--special-token", EOT, "--sample-documents", 100))  # fmt: skip
    assert "trained on      all 60 documents" in text, text


# -- usage errors --------------------------------------------------------------------------


def test_cli_seed_without_a_sample_is_refused(tmp_path, corpus):
    proc = run("train", corpus, "-o", tmp_path / "t.json", "--vocab-size", 300, "--seed", 4)
    assert_usage_error(proc, "--seed", "--sample-documents")


def test_cli_ray_engine_refuses_what_it_cannot_do(tmp_path, corpus):
    train = ("train", corpus, "-o", tmp_path / "t.json", "--vocab-size", 300, "--engine", "ray")
    assert_usage_error(run(*train, "--holdout", 0.01), "--holdout needs --engine local")
    assert_usage_error(
        run(*train, "--sample-documents", 5), "--sample-documents needs --engine local"
    )


def test_cli_vocab_size_names_its_minimum(tmp_path, corpus):
    for value in (-5, 0, 255):
        err = assert_usage_error(
            run("train", corpus, "-o", tmp_path / "t.json", "--vocab-size", value), str(value)
        )
        assert "at least 256" in err and "> 0" not in err


def test_compat_rustbpe_writes_rustbpes_ranks(tmp_path):
    text = corpus_sample("en-prose", 40_000).decode("utf-8", "replace")
    corpus = tmp_path / "en.txt"
    corpus.write_text(text)
    out = tmp_path / "tok.tiktoken"
    args = ["--vocab-size", 700, "--pattern", "cl100k", "--holdout", 0, "-q"]
    ok(run("train", corpus, "-o", out, "--compat", "rustbpe", *args))
    peer = rustbpe.Tokenizer()
    peer.train_from_iterator(iter([text]), 700, pattern=patterns.resolve("cl100k"))
    tok = bytepair.Tokenizer.load(out, pattern="cl100k")
    assert {b: i for i, b in tok.vocab.items()} == dict(peer.get_mergeable_ranks())


def test_base_extends_a_tokenizer_file(tmp_path):
    corpus = tmp_path / "en.txt"
    corpus.write_bytes(corpus_sample("en-prose", 40_000))
    base, out = tmp_path / "base.json", tmp_path / "out.json"
    ok(run("train", corpus, "-o", base, "--vocab-size", 400, "--holdout", 0, "-q"))
    ok(run("train", corpus, "-o", out, "--vocab-size", 600, "--base", base, "--holdout", 0))
    small, big = bytepair.Tokenizer.load(base), bytepair.Tokenizer.load(out)
    assert big.vocab_size == 600 and big.merges[:144] == small.merges
    direct = bytepair.train(corpus, 600, progress=False)
    assert big.merges == direct.merges


def test_flag_mistakes_are_usage_errors(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab ab ab\n")
    out = tmp_path / "o.json"
    proc = run("train", corpus, "-o", out, "--vocab-size", 300, "--max-token-length", 4)
    assert_usage_error(proc, "max_token_length", "compat='huggingface'")
    proc = run("train", corpus, "-o", out, "--vocab-size", 300, "--compat", "spm")
    assert proc.returncode == 2 and b"invalid choice: 'spm'" in proc.stderr


def test_base_takes_a_tiktoken_name_and_hf_encodes_the_result(tmp_path, tiktoken_cache):
    from tokenizers import Tokenizer

    text = corpus_sample("code", 60_000)
    corpus = tmp_path / "code.txt"
    corpus.write_bytes(text)
    out = tmp_path / "ext.json"
    ok(run("train", corpus, "-o", out, "--vocab-size", 100_400, "--base", "cl100k_base", "-q"))
    tok, hf = bytepair.Tokenizer.load(out), Tokenizer.from_file(str(out))
    assert tok.vocab_size == 100_400 and tok.special_tokens["<|endoftext|>"] == 100_257
    sample = text.decode("utf-8", "replace")[:20_000]
    assert tok.encode(sample, allowed_special="all") == hf.encode(sample).ids


def test_train_superbpe_and_jsonl_from_the_command_line(tmp_path):
    """--superword-transition and --text-field reach bytepair.train: the saved file is the
    tokenizer the Python call trains."""
    import json

    docs = ["the cat sat on the mat, and the dog sat on the log\n"] * 40
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"body": d}) + "\n" for d in docs))
    out = tmp_path / "t.json"
    args = ["--text-field", "body", "--superword-transition", 270, "-q"]
    ok(run("train", path, "-o", out, "--vocab-size", 282, *args))
    want = bytepair.train(docs, 282, superword_transition=270, progress=False)
    got = bytepair.Tokenizer.load(out)
    assert got.merges == want.merges and got.pattern == want.pattern
    assert_usage_error(run("train", path, "-o", out, "--vocab-size", 282, "--holdout", 0.1))
