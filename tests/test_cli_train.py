"""`bytepair train` on the command line: it trains what bytepair.train trains (by default,
on a sample of documents), its --compat/--base/--max-token-length flags reach
bytepair.train, and its mistakes are one-line usage errors."""

from __future__ import annotations

import bytepair
import pytest
import rustbpe
from bytepair import patterns
from conftest import EOT, corpus_documents, corpus_sample
from test_cli import assert_usage_error, ok, run

# -- bytepair train agrees with bytepair.train ---------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("first-use") / "en.txt"
    path.write_bytes(corpus_sample("en-prose", 40_000))
    return path


def test_cli_and_python_train_the_same_tokenizer_by_default(tmp_path, corpus):
    out = tmp_path / "cli.json"
    text = ok(run("train", corpus, "-o", out, "--vocab-size", 400, "--special-token", EOT, "-q"))
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
            "--sample-documents", 20, "--seed", 3, "-q",
        )
    )  # fmt: skip
    assert "trained on      20 of 60 documents (a random sample), seed 3" in text, text
    in_python = bytepair.train(
        [path], 400, special_tokens=[EOT], sample_documents=20, seed=3, progress=False
    )
    assert bytepair.Tokenizer.load(out).merges == in_python.merges
    text = ok(run("train", path, "-o", out, "--vocab-size", 300, "--special-token", EOT,
                  "--sample-documents", 100, "-q"))  # fmt: skip
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
