"""bytepair.metrics: the hand-worked examples of docs/metrics.md, and real tokenizers on real
text against tiktoken's own token counts (the formulas applied with NumPy to tiktoken's ids).
"""

from __future__ import annotations

import doctest
import math

import bytepair
import numpy
import pytest
from bytepair import metrics
from bytepair.errors import CorpusError
from conftest import ROOT, corpus_documents, corpus_sample

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.fixture(scope="module")
def ab():
    """docs/metrics.md's tokenizer: the 256 bytes and the merge a + b (|V| = 257)."""
    return bytepair.Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")])


def test_every_example_in_docs_metrics_runs():
    result = doctest.testfile(
        str(ROOT / "docs" / "metrics.md"), module_relative=False, raise_on_error=False
    )
    assert result.attempted >= 10, "docs/metrics.md lost its examples"
    assert result.failed == 0, f"{result.failed} examples in docs/metrics.md failed"


def test_the_hand_worked_example(ab):
    # "ab abab" -> ab | " " ab ab: 7 bytes, 4 tokens, 2 words, tokens 256 (x3) and 32 (x1).
    m = metrics.measure(ab, b"ab abab")
    assert (m.bytes, m.tokens, m.words) == (7, 4, 2)
    assert m.bytes_per_token == 7 / 4
    assert m.fertility == 2.0
    assert m.vocab_used == 2 / 257
    # (3/4)^2.5 + (1/4)^2.5 = 0.518389; log2 of it over -1.5 = 0.631928 bits; / log2(257).
    assert m.renyi_efficiency == pytest.approx(0.078936, abs=5e-7)


def test_renyi_by_hand():
    assert metrics.renyi_efficiency([2, 2], 256) == 0.125  # 1 bit out of 8
    assert metrics.renyi_efficiency([5], 256) == 0.0  # one token: no uncertainty
    assert metrics.renyi_efficiency([1] * 256, 256) == pytest.approx(1.0)  # uniform: all of it
    # alpha = 1 is Shannon's entropy: H(3/4, 1/4) = 0.811278 bits.
    assert metrics.renyi_efficiency([3, 1], 257, alpha=1) == pytest.approx(0.811278 / 8.005625)


def test_parity_by_hand(ab):
    # "ab" is one token; "a b" is three (a, " ", b): " b" is not a token.
    tokens = {
        "ref": metrics.measure(ab, b"ab").tokens,
        "spaced": metrics.measure(ab, b"a b").tokens,
    }
    assert metrics.parity(tokens, "ref") == {"ref": 1.0, "spaced": 3.0}


def test_words_are_split_on_unicode_whitespace():
    assert metrics.count_words("one two\u3000three\u00a0four\n".encode()) == 4
    assert metrics.count_words(b"\xff \xfe") == 2  # invalid UTF-8 is still a word


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_real_tokenizers_match_tiktoken_counts(tiktoken_pair, name, monkeypatch):
    enc, tok = tiktoken_pair(name)
    # The corpus reaches the encoder in blocks (ids counted as they come): odd-sized ones
    # here, so that words and characters straddle them.
    monkeypatch.setattr(metrics, "BLOCK", 4099)
    # en-prose's first 100 KB: drawing documents from all of it would decompress 300 MB.
    corpora = {c: b"".join(corpus_documents(c, 40)) for c in ("zh-prose", "multilingual")}
    corpora["en-prose"] = corpus_sample("en-prose", 100_000)
    table = metrics.compare({name: tok}, corpora)
    size = len(enc._mergeable_ranks) + len(enc._special_tokens)
    for corpus, data in corpora.items():
        text = data.decode("utf-8")
        ids = enc.encode(text, allowed_special="all")
        _, counts = numpy.unique(ids, return_counts=True)
        p = counts / counts.sum()
        renyi = numpy.log(numpy.sum(p**2.5)) / (1 - 2.5) / numpy.log(size)
        m = table[corpus][name]
        assert m.tokens == len(ids)
        assert m.bytes_per_token == len(data) / len(ids)
        assert m.fertility == len(ids) / len(text.split())
        assert m.vocab_used == len(counts) / size
        assert m.renyi_efficiency == pytest.approx(renyi, rel=1e-12)


def test_parity_of_translations_follows_tiktoken(tiktoken_pair):
    # The same sentences, once plain and once with each line said twice: parity near 2,
    # exactly tiktoken's ratio of the two token counts.
    enc, tok = tiktoken_pair("cl100k_base")
    lines = corpus_documents("multilingual", 10)[0].splitlines(keepends=True)
    doubled = b"".join(line * 2 for line in lines)
    table = metrics.compare({"cl100k": tok}, {"en": b"".join(lines), "en2": doubled})
    tokens = {c: table[c]["cl100k"].tokens for c in table}
    expected = len(enc.encode(doubled.decode())) / len(enc.encode(b"".join(lines).decode()))
    assert metrics.parity(tokens, "en") == {"en": 1.0, "en2": expected}
    assert 1.9 < expected < 2.1


def test_bad_input_is_a_clear_error(ab):
    with pytest.raises(CorpusError, match="empty"):
        metrics.measure(ab, b"")
    with pytest.raises(CorpusError, match=r"'de'.*empty"):
        metrics.compare({"ab": ab}, {"en": b"ab", "de": b""})
    with pytest.raises(CorpusError, match="reference corpus 'fr'"):
        metrics.parity({"en": 3}, "fr")
    with pytest.raises(ValueError, match="alpha"):
        metrics.renyi_efficiency([1, 2], 256, alpha=0)
    assert math.isnan(metrics.measure(ab, b"  \n").fertility)  # no words: no fertility
