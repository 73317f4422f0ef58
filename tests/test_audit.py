"""tok.audit(): unreachable, undecodable, duplicated and unused tokens.

The oracle on real vocabularies is tiktoken itself, run on each of its own tokens: a token
is reachable when tiktoken encodes its text (or, for a piece of a character, its bytes) to
exactly that token. The small cases are derived by hand in docs/audit.md.
"""

from __future__ import annotations

import doctest
import lzma
from collections import Counter

import bytepair
import pytest
from bytepair import audit
from bytepair.cli import show
from bytepair.errors import CorpusError
from conftest import ROOT, corpus_sample, shared
from model_files import published


def tiktoken_unreachable(enc) -> dict[int, list[int]]:
    """Each token of a tiktoken encoding that tiktoken does not encode back to itself."""
    texts, pieces = [], []
    for token, rank in enc._mergeable_ranks.items():
        assert enc.encode_single_token(token) == rank
        (texts if show.is_text(token) else pieces).append((rank, token))
    found = {}
    for rank, token in texts:
        # One call per token: tiktoken's batch runs a Python thread pool, 20x slower here.
        ids = enc.encode_ordinary(token.decode("utf-8"))
        if ids != [rank]:
            found[rank] = ids
    for rank, token in pieces:
        ids = enc._encode_bytes(token)
        if ids != [rank]:
            found[rank] = ids
    return dict(sorted(found.items()))


@pytest.mark.parametrize("name", ["llama3", "qwen", "qwen3.5"])
def test_published_rank_files_match_tiktoken(name):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path, pattern, specials = published(name)
    ranks = load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    report = bytepair.Tokenizer.load(path, pattern=pattern, special_tokens=specials).audit()
    assert report.unreachable == tiktoken_unreachable(enc)
    assert report.undecodable == sorted(r for t, r in ranks.items() if not show.is_text(t))
    one_token = {t: enc.encode_ordinary(t) for t in specials}
    assert report.special_as_text == {t: ids[0] for t, ids in one_token.items() if len(ids) == 1}
    assert report.duplicates == []
    assert report.regular_size == len(ranks)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_unreachable_and_undecodable_match_tiktoken(tiktoken_pair, name):
    enc, tok = tiktoken_pair(name)
    expected = tiktoken_unreachable(enc)
    report = tok.audit()
    assert report.unreachable == expected
    undecodable = sorted(r for t, r in enc._mergeable_ranks.items() if not show.is_text(t))
    assert report.undecodable == undecodable
    assert report.duplicates == []
    assert report.special_as_text == {}
    assert report.counts is None and report.unused is None


def test_o200k_has_unreachable_tokens_and_cl100k_none(tiktoken_pair):
    # The figures the issue quotes, from tiktoken alone: a dozen for o200k, none for cl100k.
    o200k = tiktoken_unreachable(tiktoken_pair("o200k_base")[0])
    assert len(o200k) == 12
    assert o200k[3413] == [357, 6]  # " I'" is cut by o200k's pattern into " I" and "'"
    assert tiktoken_unreachable(tiktoken_pair("cl100k_base")[0]) == {}


def test_a_merges_file_matches_hf_tokenizers():
    # GPT-2's tokenizer.json is a merge list (not a rank table): HF tokenizers is the oracle.
    import tokenizers

    path = shared("fixtures", "tokenizers", "gpt2", "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = bytepair.Tokenizer.load(path)
    special = set(tok.special_tokens.values())
    expected = {}
    for i, token in tok.vocab.items():
        if i not in special and show.is_text(token):
            ids = hf.encode(token.decode("utf-8"), add_special_tokens=False).ids
            if ids != [i]:
                expected[i] = ids
    report = tok.audit()
    texts = {i: ids for i, ids in report.unreachable.items() if show.is_text(tok.vocab[i])}
    assert texts == expected
    assert len(report.undecodable) == sum(not show.is_text(t) for t in tok.vocab.values())


def test_corpus_counts_match_tiktoken(tiktoken_pair, tmp_path):
    enc, tok = tiktoken_pair("cl100k_base")
    data = corpus_sample("en-prose", 150_000) + b"<|endoftext|>" + corpus_sample("code", 50_000)
    cut = data.index(b"\n", 120_000) + 1
    plain = tmp_path / "corpus.txt"
    plain.write_bytes(data[:cut])
    packed = tmp_path / "corpus.txt.xz"
    packed.write_bytes(lzma.compress(data[cut:]))
    report = tok.audit([plain, packed])
    expected = Counter(enc.encode(data[:cut].decode("utf-8"), allowed_special="all"))
    expected.update(enc.encode(data[cut:].decode("utf-8"), allowed_special="all"))
    assert report.counts == dict(expected)
    # Each special token is counted as one token, never as its text's pieces.
    assert report.counts[enc.eot_token] == data.count(b"<|endoftext|>") >= 1
    regular = set(enc._mergeable_ranks.values())
    assert report.unused == sorted(regular - set(expected))


# -- hand-derived cases (docs/audit.md) --------------------------------------------------------

BYTES = {i: bytes([i]) for i in range(256)}


def test_merges_order_makes_a_token_unreachable():
    # "abc" is learned as ab + c, but b + c comes first: "abc" encodes as a, bc.
    vocab = BYTES | {256: b"bc", 257: b"ab", 258: b"abc"}
    tok = bytepair.Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")])
    assert tok.audit().unreachable == {258: [97, 256]}


def test_pattern_makes_a_token_unreachable():
    # The gpt2 pattern cuts "a " into "a" and " ", so the merge a + " " never applies.
    tok = bytepair.Tokenizer(BYTES | {256: b"a "}, [(b"a", b" ")])
    assert tok.audit().unreachable == {256: [97, 32]}


def test_a_rank_table_reaches_each_whole_pretoken_as_tiktoken_does():
    # Rank-BPE on "abcd" would stop at a, bc, d (no "abc", no "bcd"); tiktoken, and so
    # bytepair, encode a pre-token that is itself a token as that token.
    import tiktoken

    ranks = {bytes([i]): i for i in range(256)} | {b"bc": 256, b"abcd": 257}
    enc = tiktoken.Encoding("abcd", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert enc.encode("abcd") == [257] and enc.encode("xabcd") == [120, 97, 256, 100]
    tok = bytepair.Tokenizer({r: t for t, r in ranks.items()}, None, pattern=r"\S+|\s+")
    assert tok.audit().unreachable == tiktoken_unreachable(enc) == {}


def test_a_piece_of_a_character_is_encoded_as_one_piece():
    # c3 a9 c3 ("é" then a lead byte) is learned as é + c3, but a9 + c3 comes first.
    vocab = BYTES | {256: b"\xa9\xc3", 257: b"\xc3\xa9", 258: b"\xc3\xa9\xc3"}
    merges = [(b"\xa9", b"\xc3"), (b"\xc3", b"\xa9"), (b"\xc3\xa9", b"\xc3")]
    report = bytepair.Tokenizer(vocab, merges).audit()
    assert report.unreachable == {258: [0xC3, 256]}
    assert report.undecodable == [*range(128, 256), 256, 258]


def test_special_token_that_is_also_a_learned_token():
    vocab = BYTES | {256: b"eo", 257: b"eos"}
    merges = [(b"e", b"o"), (b"eo", b"s")]
    same_id = bytepair.Tokenizer(vocab, merges, special_tokens=["eos"]).audit()
    assert same_id.special_as_text == {"eos": 257}
    assert same_id.duplicates == []
    own_id = bytepair.Tokenizer(vocab, merges, special_tokens={"eos": 258}).audit()
    assert own_id.special_as_text == {"eos": 257}
    assert own_id.duplicates == [[257, 258]]
    apart = bytepair.Tokenizer(vocab, merges, special_tokens=["<|end|>"]).audit()
    assert apart.special_as_text == {} and apart.duplicates == []
    header = audit.render(apart).splitlines()[0]
    assert header == "audit of 258 regular tokens and 1 special token"


def test_unused_lists_regular_tokens_only(tmp_path):
    tok = bytepair.Tokenizer(BYTES | {256: b"ab"}, [(b"a", b"b")], special_tokens=["<|end|>"])
    path = tmp_path / "c.txt"
    path.write_bytes(b"abab<|end|>ba")
    report = tok.audit(path)
    assert report.counts == {98: 1, 97: 1, 256: 2, 257: 1}
    assert report.unused == [i for i in range(256) if i not in (97, 98)]
    assert report.to_json()["unused"][0] == {"id": 0, "hex": "00"}


def test_the_corpus_is_named_as_train_takes_it(tmp_path):
    # docs/audit.md: the corpus is "paths as train takes them", and the model's training
    # data comes as directories, globs and JSON Lines. Hand counts on a byte tokenizer:
    # "abba" + "ab" is a, b three times each; a .jsonl counts its records' text only.
    tok = bytepair.Tokenizer(BYTES, [])
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_bytes(b"abba")
    (data / "b.txt").write_bytes(b"ab")
    assert tok.audit(data).counts == {97: 3, 98: 3}
    assert tok.audit(str(data / "*.txt")).counts == {97: 3, 98: 3}
    records = tmp_path / "c.jsonl"
    records.write_text('{"text": "ab"}\n{"text": "a", "id": 2}\n')
    assert tok.audit([records, data / "b.txt"]).counts == {97: 3, 98: 2}


@pytest.mark.parametrize(
    ("corpus", "message"),
    [
        ("missing.txt", "does not exist"),
        ("missing-*.txt", "matches no files"),
        ([], "empty list"),
        ([3], "int"),
    ],
)
def test_bad_corpus_is_a_clear_error(corpus, message):
    tok = bytepair.Tokenizer(BYTES, [])
    with pytest.raises(CorpusError, match=message):
        tok.audit(corpus)


def test_every_example_in_docs_audit_runs():
    result = doctest.testfile(
        str(ROOT / "docs" / "audit.md"), module_relative=False, raise_on_error=False
    )
    assert result.attempted >= 10, "docs/audit.md lost its examples"
    assert result.failed == 0, f"{result.failed} examples in docs/audit.md failed"
