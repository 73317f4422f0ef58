"""bytepair.reference, the oracle, checked against independent sources: the CS336 reference
training output, tiktoken, GPT-2's own merges, and small cases derived by hand."""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter

import pytest
import reference_files
from bytepair import reference
from bytepair.errors import (
    CorpusError,
    DisallowedSpecialError,
    PatternError,
    SpecialTokenError,
    TrainingWarning,
    UnknownIdError,
    VocabSizeError,
)
from bytepair.patterns import GPT2
from conftest import CORPORA, corpus_sample, shared
from hypothesis import given
from hypothesis import strategies as st

EOT = "<|endoftext|>"


def gpt2_unicode_to_byte() -> dict[str, int]:
    """GPT-2's bytes-to-unicode table, inverted: printable bytes stand for themselves, the
    other 68 bytes take the code points 256, 257, ... in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in printable]
    table = {chr(b): b for b in printable}
    table.update({chr(256 + n): b for n, b in enumerate(others)})
    return table


UNICODE_TO_BYTE = gpt2_unicode_to_byte()


def gpt2_bytes(token: str) -> bytes:
    return bytes(UNICODE_TO_BYTE[ch] for ch in token)


def read_gpt2_merges(path) -> list[tuple[bytes, bytes]]:
    merges = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#version"):
            left, right = line.split(" ")
            merges.append((gpt2_bytes(left), gpt2_bytes(right)))
    return merges


def byte_vocab(special_tokens=()) -> dict[int, bytes]:
    return reference.build_vocab([], special_tokens)


# -- the CS336 reference training output ---------------------------------------------------


def test_train_bpe_reproduces_the_cs336_reference():
    vocab, merges = reference.train_bpe(shared("fixtures", "cs336", "corpus.en"), 500, [EOT])

    expected_merges = read_gpt2_merges(
        shared("fixtures", "cs336", "train-bpe-reference-merges.txt")
    )
    assert merges == expected_merges
    reference_vocab = json.loads(
        shared("fixtures", "cs336", "train-bpe-reference-vocab.json").read_text(encoding="utf-8")
    )
    assert set(vocab.values()) == {gpt2_bytes(token) for token in reference_vocab}
    # DESIGN's ids: bytes first (id = byte value), merges in order, special tokens last.
    assert [vocab[i] for i in range(256)] == [bytes([i]) for i in range(256)]
    assert [vocab[256 + n] for n in range(len(merges))] == [a + b for a, b in merges]
    assert vocab[499] == EOT.encode()
    assert sorted(vocab) == list(range(500))


# -- encoding equals tiktoken --------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_encoder() -> reference.Encoder:
    tokens = json.loads(shared("fixtures", "cs336", "gpt2_vocab.json").read_text(encoding="utf-8"))
    vocab = {i: gpt2_bytes(token) for token, i in tokens.items()}
    merges = read_gpt2_merges(shared("fixtures", "cs336", "gpt2_merges.txt"))
    return reference.Encoder(vocab, merges, {EOT: tokens[EOT]}, "gpt2")


@pytest.mark.parametrize("corpus", CORPORA)
def test_gpt2_merges_encode_like_tiktoken(corpus, gpt2_encoder, tiktoken_encoding):
    text = corpus_sample(corpus, 100_000).decode("utf-8", errors="replace")
    tiktoken_gpt2 = tiktoken_encoding("gpt2")

    assert gpt2_encoder.encode_ordinary(text) == tiktoken_gpt2.encode_ordinary(text)
    ids = gpt2_encoder.encode(text, allowed_special="all")
    assert ids == tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2_encoder.decode(ids) == text


@pytest.mark.parametrize("corpus", ["en-prose", "zh-prose", "code"])
def test_cl100k_ranks_encode_like_tiktoken(corpus, tiktoken_encoding):
    cl100k = tiktoken_encoding("cl100k_base")
    vocab = {rank: token for token, rank in cl100k._mergeable_ranks.items()}
    encoder = reference.Encoder(vocab, None, cl100k._special_tokens, "cl100k")
    text = corpus_sample(corpus, 50_000).decode("utf-8", errors="replace")

    assert encoder.encode(text, allowed_special="all") == cl100k.encode(text, allowed_special="all")


def test_merges_from_r50k_ranks_are_gpt2s_merges(tiktoken_encoding):
    ranks = tiktoken_encoding("r50k_base")._mergeable_ranks
    gpt2_merges = read_gpt2_merges(shared("fixtures", "cs336", "gpt2_merges.txt"))

    # The rank order is the merge order, so the list matches, not only the set.
    assert reference.merges_from_ranks(ranks) == gpt2_merges


def test_merges_from_ranks_skips_tokens_that_merging_cannot_build():
    import tiktoken

    ranks = {b"a": 0, b"b": 1, b"c": 2, b"abc": 3, b"bc": 4, b"ab": 5, b"cab": 6, b"ca": 7}
    # b"abc" (rank 3) is made from b"bc" (4), b"cab" (6) from b"ab" (5): an extended
    # vocabulary builds tokens from later ones, and tiktoken's rule reaches them.
    merges = reference.merges_from_ranks(ranks)
    assert merges == [(b"a", b"bc"), (b"b", b"c"), (b"a", b"b"), (b"c", b"ab"), (b"c", b"a")]
    # A token no merge reaches: b"xyz" with neither b"xy" nor b"yz" in the table.
    ranks2 = {bytes([i]): i for i in range(256)} | {b"xyz": 256, b"xz": 257}
    assert reference.merges_from_ranks(ranks2) == [(b"x", b"z")]
    # The oracle: tiktoken on the same ranks makes b"abc" and b"cab" inside longer pre-tokens,
    # and b"xyz" only as a whole pre-token.
    full = {bytes([i]): i for i in range(256)}
    full.update({t: 256 + r - 3 for t, r in ranks.items() if len(t) > 1})
    enc = tiktoken.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=full, special_tokens={})
    encoder = reference.Encoder({r: t for t, r in full.items()}, None, {}, r"\S+|\s+")
    for text in ["abcz", "zcab", "cabc", "abcab", "ccab", "bcab"]:
        assert encoder.encode_ordinary(text) == enc.encode_ordinary(text), text


@pytest.mark.parametrize("text", ["a\ud800b", "\ud83d\ude00!", "x\udfff", "\udc80\udcff"])
def test_lone_surrogates_encode_as_tiktoken_does(text, gpt2_encoder, tiktoken_encoding):
    assert gpt2_encoder.encode(text) == tiktoken_encoding("gpt2").encode(text)
    assert gpt2_encoder.encode_ordinary(text) == tiktoken_encoding("gpt2").encode_ordinary(text)


def test_lone_surrogate_is_u_fffd(gpt2_encoder):
    assert gpt2_encoder.encode("a\ud800b") == gpt2_encoder.encode("a\ufffdb")


# -- round trips with a small trained vocab -------------------------------------------------


@pytest.fixture(scope="module")
def small_encoder() -> reference.Encoder:
    # English for whole-word tokens, Arabic and more for tokens that hold part of a character.
    data = corpus_sample("en-prose", 30_000) + corpus_sample("multilingual", 30_000)
    counts = reference.count_pretokens(data, "gpt2", [EOT])
    merges = reference.train_from_counts(counts, 300)
    vocab = reference.build_vocab(merges, [EOT])
    return reference.Encoder(vocab, merges, {EOT: len(vocab) - 1}, "gpt2")


def test_small_encoder_actually_merges(small_encoder):
    # Without this the round trips below could pass with single bytes only.
    assert len(small_encoder.encode("the people of the world")) < len("the people of the world")


@given(st.binary(max_size=300))
def test_property_bytes_round_trip(small_encoder, data):
    assert small_encoder.decode_bytes(small_encoder.encode_bytes(data)) == data


@given(st.text(max_size=200))
def test_property_text_round_trip(small_encoder, text):
    assert small_encoder.decode(small_encoder.encode(text, disallowed_special=())) == text
    assert small_encoder.decode(small_encoder.encode_ordinary(text)) == text


@given(st.text(max_size=200))
def test_property_valid_text_encodes_like_its_bytes(small_encoder, text):
    assert small_encoder.encode_ordinary(text) == small_encoder.encode_bytes(text.encode())


@given(st.dictionaries(st.binary(min_size=1, max_size=8), st.integers(1, 5), max_size=8))
def test_property_training_never_rebuilds_a_token(counts):
    # A merge cannot rebuild bytes that an earlier merge made: the span of the second
    # occurrence would have been merged by then. So the vocab has one id per merge.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)  # it runs out of pairs, as asked
        merges = reference.train_from_counts(counts, 10**6)
    assert len({a + b for a, b in merges}) == len(merges)


# -- special tokens ------------------------------------------------------------------------


def test_adjacent_special_tokens():
    encoder = reference.Encoder(byte_vocab([EOT]), [], {EOT: 256}, "gpt2")
    ids = encoder.encode(f"a{EOT}{EOT}b", allowed_special="all")
    assert ids == [ord("a"), 256, 256, ord("b")]


def test_adjacent_special_tokens_like_tiktoken(gpt2_encoder, tiktoken_encoding):
    text = f"{EOT}{EOT} x{EOT}"
    expected = tiktoken_encoding("gpt2").encode(text, allowed_special="all")
    assert gpt2_encoder.encode(text, allowed_special="all") == expected


@pytest.mark.parametrize("order", [["<|a|>", "<|a|><|b|>"], ["<|a|><|b|>", "<|a|>"]])
def test_longest_special_token_wins(order):
    pieces = reference.split_on_special("x<|a|><|b|>y<|a|><|b", order)
    assert pieces == [
        ("x", False),
        ("<|a|><|b|>", True),
        ("y", False),
        ("<|a|>", True),
        ("<|b", False),
    ]


def test_split_on_special_drops_empty_segments():
    assert reference.split_on_special(EOT, [EOT]) == [(EOT, True)]
    assert reference.split_on_special("", [EOT]) == []
    assert reference.split_on_special("", []) == []
    assert reference.split_on_special("ab", []) == [("ab", False)]


def test_special_token_at_the_end():
    encoder = reference.Encoder(byte_vocab([EOT]), [], {EOT: 256}, "gpt2")
    assert encoder.encode(f"hi{EOT}", allowed_special={EOT}) == [104, 105, 256]


def test_longer_special_token_gets_its_own_id():
    specials = {"<|a|>": 256, "<|a|><|b|>": 257}
    encoder = reference.Encoder(byte_vocab(list(specials)), [], specials, "gpt2")
    assert encoder.encode("<|a|><|b|><|a|>", allowed_special="all") == [257, 256]


def test_disallowed_special_raises_naming_the_token():
    encoder = reference.Encoder(byte_vocab([EOT]), [], {EOT: 256}, "gpt2")
    with pytest.raises(DisallowedSpecialError, match=re.escape(EOT)):
        encoder.encode(f"hello {EOT}")
    # Allowing one special token still disallows the others.
    specials = {EOT: 256, "<|pad|>": 257}
    encoder = reference.Encoder(byte_vocab(list(specials)), [], specials, "gpt2")
    with pytest.raises(DisallowedSpecialError, match=re.escape("<|pad|>")):
        encoder.encode(f"{EOT}<|pad|>", allowed_special={EOT})


def test_disallowed_special_empty_encodes_as_text(gpt2_encoder, tiktoken_encoding):
    text = f"hello {EOT}"
    ids = gpt2_encoder.encode(text, disallowed_special=())
    assert ids == tiktoken_encoding("gpt2").encode(text, disallowed_special=())
    assert 50256 not in ids
    assert ids == gpt2_encoder.encode_ordinary(text)


def test_encode_bytes_allows_special_tokens_when_asked():
    encoder = reference.Encoder(byte_vocab([EOT]), [], {EOT: 256}, "gpt2")
    data = b"a" + EOT.encode() + b"\xff"
    assert encoder.encode_bytes(data, allowed_special={EOT}) == [97, 256, 255]
    assert 256 not in encoder.encode_bytes(EOT.encode())


def test_allowed_special_must_be_a_special_token():
    encoder = reference.Encoder(byte_vocab([EOT]), [], {EOT: 256}, "gpt2")
    with pytest.raises(SpecialTokenError, match=re.escape("<|nope|>")):
        encoder.encode("x", allowed_special={"<|nope|>"})


# -- counting pre-tokens -------------------------------------------------------------------


def test_invalid_utf8_is_kept_as_punctuation():
    counts = reference.count_pretokens(b"ab\xff\xfe cd")
    # The two bad bytes behave like one run of punctuation (DESIGN, training step 1).
    assert counts == Counter({b"ab": 1, b"\xff\xfe": 1, b" cd": 1})


def test_invalid_utf8_is_kept_through_training():
    merges = reference.train_from_counts(reference.count_pretokens(b"\xff\xfe \xff\xfe"), 1)
    assert merges == [(b"\xff", b"\xfe")]


def test_special_tokens_are_never_counted():
    data = f"x{EOT}y{EOT}{EOT}".encode()
    assert reference.count_pretokens(data, special_tokens=[EOT]) == Counter({b"x": 1, b"y": 1})
    # Not declared special, the same text is counted like any other text.
    assert b"endoftext" in reference.count_pretokens(data)


def test_count_file_parallel_chunks_equal_the_whole(tmp_path, monkeypatch):
    data = corpus_sample("tinystories", 40_000)
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    monkeypatch.setattr(reference_files, "CHUNK_BYTES", 5_000)
    assert len(reference_files._chunk_bounds(data, [EOT.encode()], 5_000)) > 4

    seen = []
    counts = reference_files.count_file(
        path, special_tokens=[EOT], num_processes=2, progress=lambda d, t: seen.append((d, t))
    )
    assert counts == reference.count_pretokens(data, special_tokens=[EOT])
    assert seen[-1] == (len(data), len(data))


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
@pytest.mark.parametrize("corpus", ["en-prose", "zh-prose", "code"])
def test_count_file_newline_chunks_equal_the_whole(tmp_path, monkeypatch, pattern, corpus):
    data = corpus_sample(corpus, 30_000)
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    monkeypatch.setattr(reference_files, "CHUNK_BYTES", 100)
    assert len(reference_files._chunk_bounds(data, [], 100)) > 2

    assert reference_files.count_file(path, pattern, num_processes=1) == reference.count_pretokens(
        data, pattern
    )


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_count_file_cuts_only_where_every_pattern_ends_a_pretoken(tmp_path, monkeypatch, pattern):
    # Newlines next to spaces, slashes, digits, CR, apostrophes and other newlines: cut
    # after the wrong one and a pre-token changes (o200k joins ".\n/", gpt2 "\n\t").
    lines = "x.\n/y\n\tz w \nq\r\nk\n\n9a\n's\nend.\n<|endoftext|>\n\u00e9t\u00e9\n\u4e2d\n"
    data = (lines * 50).encode()
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    monkeypatch.setattr(reference_files, "CHUNK_BYTES", 1)  # try a cut after every newline
    for specials in ([], [EOT]):
        expected = reference.count_pretokens(data, pattern, specials)
        assert reference_files.count_file(path, pattern, specials, num_processes=1) == expected
    assert len(reference_files._chunk_bounds(data, [], 1)) > 100


def test_count_file_never_cuts_inside_an_overlapping_special_token(tmp_path, monkeypatch):
    # "<|a|>" starts inside "end<|a|>": cutting there would count "end" as text.
    specials = ["<|a|>", "<|a|><|b|>", "end<|a|>"]
    data = b"".join(f"w{i} <|a|><|b|>{i % 7}<|a|> end<|a|>\n".encode() for i in range(300))
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    # Tiny chunks: a cut is tried at nearly every special token.
    monkeypatch.setattr(reference_files, "CHUNK_BYTES", 3)
    expected = reference.count_pretokens(data, special_tokens=specials)
    assert b" end" not in expected
    assert reference_files.count_file(path, special_tokens=specials, num_processes=1) == expected


def test_progress_line_only_on_a_terminal(tmp_path, capsys):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"hello world\n" * 100)
    reference_files.count_file(path, progress=None)  # capsys's stderr is not a terminal
    assert capsys.readouterr().err == ""
    reference_files.count_file(path, progress=True)  # asked for: drawn into a log too
    assert "counting pre-tokens: 100%|" in capsys.readouterr().err


def test_count_file_of_an_empty_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert reference_files.count_file(path) == Counter()


# -- training ------------------------------------------------------------------------------


def test_ties_go_to_the_greater_pair():
    # "ab" and " cd": (a,b), (" ",c) and (c,d) all occur once. (c,d) is the greatest; then
    # (a,b) beats (" ",cd) because b"a" > b" ".
    merges = reference.train_from_counts(reference.count_pretokens(b"ab cd"), 3)
    assert merges == [(b"c", b"d"), (b"a", b"b"), (b" ", b"cd")]
    # Same left symbol: the greater right symbol wins.
    assert reference.train_from_counts({b"ab": 1, b"ac": 1}, 1) == [(b"a", b"c")]


def test_count_beats_the_tie_break():
    assert reference.train_from_counts({b"ab": 2, b"zy": 1}, 2) == [(b"a", b"b"), (b"z", b"y")]


def test_repeated_symbols_merge_left_to_right():
    # "aaaa": (a,a) occurs 3 times; merging left to right gives [aa, aa], then (aa, aa).
    merges = reference.train_from_counts({b"aaaa": 1, b"aaa": 1}, 3)
    assert merges == [(b"a", b"a"), (b"aa", b"aa"), (b"aa", b"a")]


def test_min_frequency_stops_early_with_a_warning():
    # (a,b) occurs twice in "abab"; after merging it, every pair occurs once.
    with pytest.warns(TrainingWarning, match="after 1 of 5 merges"):
        merges = reference.train_from_counts({b"abab": 1, b"cd": 1}, 5, min_frequency=2)
    assert merges == [(b"a", b"b")]


def test_running_out_of_pairs_warns():
    with pytest.warns(TrainingWarning, match="after 1 of 4 merges"):
        assert reference.train_from_counts({b"ab": 3}, 4) == [(b"a", b"b")]


def test_train_bpe_min_frequency_warns(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"abab cd")
    with pytest.warns(TrainingWarning, match="after 1 of 10 merges"):
        vocab, merges = reference.train_bpe(path, 266, min_frequency=2)
    assert merges == [(b"a", b"b")]
    assert len(vocab) == 257


def test_a_rebuilt_token_reuses_its_id():
    # DESIGN rule 6, with merges from elsewhere (training from scratch cannot rebuild a
    # token, see test_property_training_never_rebuilds_a_token): a+bc and ab+c both make abc.
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")]
    vocab = reference.build_vocab(merges, [EOT])
    assert {i: vocab[i] for i in range(256, len(vocab))} == {
        256: b"ab",
        257: b"abc",
        258: b"bc",
        259: EOT.encode(),
    }
    encoder = reference.Encoder(vocab, merges, {EOT: 259}, "gpt2")
    # "abc": a+b first (merge 0), then ab+c (merge 1) -> 257. " bc": b+c -> 258.
    assert encoder.encode("abc bc") == [257, 32, 258]


def test_encoder_maps_bytes_through_the_vocab_not_by_value():
    # GPT-2's vocab does not give byte b the id b: ids here are shifted by 1000.
    vocab = {1000 + i: bytes([i]) for i in range(256)} | {2000: b"hi"}
    encoder = reference.Encoder(vocab, [(b"h", b"i")], {}, "gpt2")
    assert encoder.encode("hi!") == [2000, 1000 + ord("!")]
    assert encoder.decode([2000, 1000 + ord("!")]) == "hi!"


def test_rank_mode_merges_lowest_rank_first():
    # Ranks, not merge order: "abc" -> (b,c) has rank 256 < (a,b)'s 257 -> a, bc -> abc.
    vocab = byte_vocab() | {256: b"bc", 257: b"ab", 258: b"abc"}
    encoder = reference.Encoder(vocab, None, {}, "gpt2")
    assert encoder.encode("abc") == [258]
    assert encoder.encode("ab") == [257]


def test_rank_mode_takes_a_whole_pretoken_that_is_a_token():
    # b"abc" is a token, but neither b"ab" nor b"bc" is: merging cannot reach it.
    import tiktoken

    vocab = byte_vocab() | {256: b"abc"}
    ranks = {token: i for i, token in vocab.items()}
    tiktoken_abc = tiktoken.Encoding("abc", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={})
    assert tiktoken_abc.encode("abc abc") == [256, 32, 97, 98, 99]
    assert reference.Encoder(vocab, None, {}, "gpt2").encode("abc abc") == [256, 32, 97, 98, 99]
    # GPT-2's rule (merges given) has no such shortcut.
    assert reference.Encoder(vocab, [], {}, "gpt2").encode("abc") == [97, 98, 99]


# -- decoding ------------------------------------------------------------------------------


def test_decode_concatenates_bytes_before_decoding():
    encoder = reference.Encoder(byte_vocab(), [], {}, "gpt2")
    assert encoder.decode([0xE2, 0x82, 0xAC]) == "€"
    assert encoder.decode([0xE2]) == "\ufffd"
    assert encoder.decode_bytes([0xE2]) == b"\xe2"


@pytest.mark.parametrize("bad_id", [256, -1, "3", None])
def test_unknown_id_raises_naming_it(bad_id):
    encoder = reference.Encoder(byte_vocab(), [], {}, "gpt2")
    with pytest.raises(UnknownIdError, match=re.escape(repr(bad_id))):
        encoder.decode([1, bad_id])
    with pytest.raises(KeyError):
        encoder.decode_bytes([bad_id])


# -- bad input -----------------------------------------------------------------------------


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("the cat sat on the mat\n")
    return path


def test_vocab_size_too_small(corpus_file):
    with pytest.raises(VocabSizeError, match="257"):
        reference.train_bpe(corpus_file, 256, [EOT])
    vocab, merges = reference.train_bpe(corpus_file, 257, [EOT])
    assert merges == [] and vocab[256] == EOT.encode()


@pytest.mark.parametrize("special_tokens", [[""], [EOT, EOT], "<|x|>", ["\n"]])
def test_bad_special_tokens(corpus_file, special_tokens):
    with pytest.raises(SpecialTokenError):
        reference.train_bpe(corpus_file, 300, special_tokens)


def test_empty_special_token_is_refused_everywhere():
    with pytest.raises(SpecialTokenError):
        reference.split_on_special("abc", ["<|x|>", ""])
    with pytest.raises(SpecialTokenError):
        reference.count_pretokens(b"abc", special_tokens=[""])


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(CorpusError, match=re.escape("nope.txt")):
        reference.train_bpe(missing, 300)
    with pytest.raises(OSError):
        reference_files.count_file(missing)


def test_directory_is_not_a_corpus(tmp_path):
    with pytest.raises(CorpusError, match="directory"):
        reference.train_bpe(tmp_path, 300)


def test_unknown_pattern_name(corpus_file):
    with pytest.raises(PatternError, match="gtp2"):
        reference.train_bpe(corpus_file, 300, pattern="gtp2")
    with pytest.raises(PatternError):
        reference.pretokenize("x", "gtp2")


def test_invalid_regex(corpus_file):
    with pytest.raises(PatternError, match="invalid"):
        reference.train_bpe(corpus_file, 300, pattern=r"(\w+")
    with pytest.raises(PatternError):
        reference.Encoder(byte_vocab(), [], {}, r"[a-")


def test_custom_regex_pattern():
    assert reference.pretokenize("ab cd", r"\w+|\s") == ["ab", " ", "cd"]
