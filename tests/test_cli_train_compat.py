"""`bytepair train --compat/--base/--max-token-length`: the flags reach bytepair.train and
their mistakes are one-line usage errors."""

from __future__ import annotations

import bytepair
import rustbpe
from bytepair import patterns
from conftest import corpus_sample
from test_cli import assert_usage_error, ok, run


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
