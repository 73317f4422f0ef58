"""The audit and the metrics on the command line: `inspect --audit`, `compare`'s metric,
parity and audit tables, its Zipf plot, and `tokenize --html`'s unreachable tokens.

Expected values are docs/metrics.md's and docs/audit.md's hand-worked examples, or
tiktoken's (its own encoding of each token, as in tests/test_audit.py).
"""

from __future__ import annotations

import json
import re
import struct

import bytepair
import pytest
from bytepair import patterns
from cli_run import assert_usage_error, ok, run
from conftest import shared
from model_files import LLAMA3_PATTERN
from test_audit import tiktoken_unreachable

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.fixture(scope="module")
def ab_tok(tmp_path_factory):
    """docs/metrics.md's tokenizer (the bytes and a + b), saved as tokenizer.json."""
    path = tmp_path_factory.mktemp("ab") / "ab.json"
    bytepair.Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")]).save(path)
    return path


@pytest.fixture(scope="module")
def a_space_tok(tmp_path_factory):
    """docs/audit.md's tokenizer with one unreachable token, "a " (256)."""
    path = tmp_path_factory.mktemp("a_space") / "a_space.json"
    bytepair.Tokenizer(BYTES | {256: b"a "}, [(b"a", b" ")]).save(path)
    return path


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


# -- inspect --audit ------------------------------------------------------------------------


def test_inspect_audit_json_matches_tiktoken(tiktoken_encoding):
    enc = tiktoken_encoding("o200k_base")
    found = json.loads(ok(run("inspect", "o200k_base", "--audit", "--json")))
    expected = tiktoken_unreachable(enc)
    assert {u["id"]: u["encodes_as"] for u in found["unreachable"]} == expected
    assert bytes.fromhex(found["unreachable"][0]["hex"]) == enc.decode_single_token_bytes(3413)
    assert found["regular_tokens"] == len(enc._mergeable_ranks)
    assert found["counts"] is None and found["unused"] is None


def test_inspect_audit_of_llama3_needs_its_pattern():
    path = shared("fixtures", "tokenizers", "llama3", "tokenizer.model")
    found = json.loads(ok(run("inspect", path, "--audit", "--json", "--pattern", LLAMA3_PATTERN)))
    assert found["regular_tokens"] == 128_000
    assert found["unreachable"] == []  # tiktoken with the same pattern: tests/test_audit.py
    # The file does not store its pattern, but bytepair recognises it and gives it Llama 3's.
    assert json.loads(ok(run("inspect", path, "--audit", "--json"))) == found
    # With gpt2's, thousands of tokens are cut apart.
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(path))
    gpt2 = tiktoken.Encoding(
        "l3-gpt2", pat_str=patterns.resolve("gpt2"), mergeable_ranks=ranks, special_tokens={}
    )
    found = json.loads(ok(run("inspect", path, "--audit", "--json", "--pattern", "gpt2")))
    expected = tiktoken_unreachable(gpt2)
    assert {u["id"]: u["encodes_as"] for u in found["unreachable"]} == expected
    assert len(expected) > 20_000


def test_inspect_audit_with_a_corpus(tmp_path, a_space_tok):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"a a")  # a, " ", a: "a " never forms, 254 bytes never occur
    out = ok(run("inspect", a_space_tok, "--audit", "--corpus", corpus, "--show", 3))
    lines = out.split("audit of ")[1].splitlines()
    assert lines[0] == "257 regular tokens and 0 special tokens"
    assert lines[1].startswith("unreachable      1 ")
    assert lines[2].split() == ["256", "'a", "'", "->", "'a'", "+", "'", "'"]
    unused = next(line for line in lines if line.startswith("unused"))
    # 257 regular tokens, of which a (97), " " (32) occur: 255 unused, 254 single bytes.
    assert unused.startswith("unused           255 of 257 regular tokens (99.2%)")
    assert "3 tokens; 254 of them single bytes" in unused
    # The summary's counts in one column, the longest label's ("special as text") included.
    labels = ("unreachable", "undecodable", "duplicates", "special as text", "unused")
    summary = [line for line in lines if line.startswith(labels)]
    assert len(summary) == 5
    assert all(line[16] == " " and line[17] != " " for line in summary), summary


def test_inspect_audit_json_with_a_corpus(tmp_path, a_space_tok):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"a a")
    found = json.loads(ok(run("inspect", a_space_tok, "--audit", "--json", "--corpus", corpus)))
    assert found["counts"] == {"32": 1, "97": 2}
    assert [u["id"] for u in found["unused"]] == [i for i in range(257) if i not in (32, 97)]


def test_inspect_audit_errors(tmp_path, a_space_tok):
    assert_usage_error(run("inspect", a_space_tok, "--corpus", tmp_path / "c.txt"), "--audit")
    assert_usage_error(run("inspect", a_space_tok, "--json"), "--audit")
    missing = tmp_path / "missing.txt"
    assert_usage_error(run("inspect", a_space_tok, "--audit", "--corpus", missing), "missing.txt")
    assert_usage_error(run("inspect", "o200k_base", "--pattern", "gpt2"), "stores its own")
    assert_usage_error(run("inspect", a_space_tok, "--pattern", "gpt2"), "pattern")


@pytest.mark.parametrize("command", [["inspect", "--audit"], ["compare"]])
def test_a_tokenizer_after_corpus_is_named_in_the_error(tmp_path, a_space_tok, command):
    # --corpus takes every file after it, so `--corpus c.txt tok.json` reads tok.json as a
    # corpus; "needs a tokenizer" alone told the user who had given one nothing.
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"a a")
    proc = run(*command, "--corpus", corpus, a_space_tok)
    assert_usage_error(proc, "tokenizer:", "before --corpus", str(a_space_tok))


def test_inspect_refuses_two_tokenizers(a_space_tok, ab_tok):
    # TOKENIZER and -t name the one tokenizer to inspect: given both, one was ignored.
    assert_usage_error(run("inspect", a_space_tok, "-t", ab_tok), "TOKENIZER", "-t")


# -- compare: metrics, parity, audit, Zipf plot ---------------------------------------------------


def test_compare_metrics_and_parity_by_hand(tmp_path, ab_tok):
    ref = tmp_path / "ref.txt"
    ref.write_bytes(b"ab")
    spaced = tmp_path / "spaced.txt"
    spaced.write_bytes(b"a b")
    text = tmp_path / "text.txt"
    text.write_bytes(b"ab abab")
    out = ok(run("compare", ab_tok, "--corpus", text, spaced, "--reference", ref))
    block = out.split("on text.txt (7 bytes, 2 words):\n")[1].splitlines()
    header = ["tokenizer", "tokens", "bytes/token", "tokens/word", "Rényi", "eff.", "vocab", "used"]
    assert block[0].split() == header
    # docs/metrics.md: 4 tokens, 7/4 bytes/token, 2 tokens/word, 0.078936, 2/257 used.
    assert block[1].split() == ["ab.json", "4", "1.75", "2.00", "0.0789", "0.78%"]
    parity = out.split("parity (token count over ref.txt's")[1].splitlines()
    assert parity[1].split() == ["tokenizer", "ref.txt", "text.txt", "spaced.txt"]
    # ref "ab" is 1 token, "ab abab" 4, "a b" 3.
    assert parity[2].split() == ["ab.json", "1.00", "4.00", "3.00"]


def test_compare_reference_among_the_corpora_is_not_read_twice(tmp_path, ab_tok):
    (tmp_path / "ref.txt").write_bytes(b"ab")
    (tmp_path / "spaced.txt").write_bytes(b"a b")
    corpora = [tmp_path / "spaced.txt", tmp_path / "ref.txt"]
    out = ok(run("compare", ab_tok, "--corpus", *corpora, "--reference", f"{tmp_path}/./ref.txt"))
    parity = out.split("parity (token count over ref.txt's")[1].splitlines()
    assert parity[1].split() == ["tokenizer", "spaced.txt", "ref.txt"]
    assert parity[2].split() == ["ab.json", "3.00", "1.00"]


def test_compare_audit_and_zipf_plot(tmp_path, ab_tok):
    text = tmp_path / "text.txt"
    text.write_bytes(b"ab abab")
    plain, zipf = tmp_path / "plain.png", tmp_path / "zipf.png"
    ok(run("compare", ab_tok, "--corpus", text, "--plot", plain))
    out = ok(run("compare", ab_tok, "--corpus", text, "--audit", "--plot", zipf))
    audit = out.split("audit (unused")[1].splitlines()
    # 257 regular tokens; "ab abab" uses 256 and 32, so 255 are unused.
    assert audit[2].split() == ["ab.json", "257", "0", "128", "255", "(99.2%)"]
    assert png_size(zipf)[0] > png_size(plain)[0]  # the Zipf panel beside the bars


@pytest.mark.parametrize("value", ["-5", "1MB"])
def test_compare_max_bytes_must_be_a_count(tmp_path, ab_tok, value):
    # Help: "default 1 MB; 0: all"; a negative count of bytes means nothing.
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"ab ab")
    err = assert_usage_error(run("compare", ab_tok, "--corpus", corpus, "--max-bytes", value))
    assert "--max-bytes" in err and value in err


def test_compare_rejects_an_empty_corpus(tmp_path, ab_tok):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert_usage_error(run("compare", ab_tok, "--corpus", empty), "empty")


# -- tokenize --html ------------------------------------------------------------------------------


def test_tokenize_html_frames_unreachable_tokens(tmp_path, tiktoken_encoding):
    enc = tiktoken_encoding("o200k_base")
    ids = enc.encode(" I'M here")
    assert ids[0] == 3413 and enc.encode(" I'") != [3413]  # unreachable, yet it occurs here
    page_path = tmp_path / "t.html"
    ok(run("tokenize", "-t", "o200k_base", " I'M here", "--html", page_path, "-q"))
    page = page_path.read_text(encoding="utf-8")
    spans = re.findall(r'<span class="([^"]*)" title="id (\d+): ', page)
    assert [int(i) for _, i in spans] == ids
    assert [int(i) for classes, i in spans if "unreachable" in classes.split()] == [3413]
    assert "1 unreachable token," in page
