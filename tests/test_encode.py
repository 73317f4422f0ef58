"""Encoding is exact: the same ids as tiktoken on its own vocabularies, in rank mode and (for
GPT-2's published vocab.json + merges.txt) in merges mode."""

from __future__ import annotations

import json
import subprocess
import sys

import bytepair
import pytest
from bytepair import DisallowedSpecialError, Tokenizer, reference
from conftest import CORPORA, corpus_documents, corpus_sample, non_ascii_tokens, shared
from fuzz_inputs import PATTERNS, assigned, outcome, raw_bytes, tokenizers
from fuzz_inputs import texts as fuzz_texts
from hypothesis import assume, given
from hypothesis import strategies as st

NAMES = ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]
PATTERN = {"gpt2": "gpt2", "r50k_base": "gpt2", "cl100k_base": "cl100k", "o200k_base": "o200k"}


@pytest.fixture(scope="session")
def pair(tiktoken_pair):
    return tiktoken_pair


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable stand-ins for the 256 bytes (from its encoder.py, rewritten here)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    out, extra = {}, 0
    for b in range(256):
        if b in printable:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


@pytest.fixture(scope="session")
def gpt2_merges_tokenizer():
    """GPT-2 from the CS336 vocab.json + merges.txt, in merges mode (ids are not bytes)."""
    decoder = {c: b for b, c in _bytes_to_unicode().items()}

    def to_bytes(s: str) -> bytes:
        return bytes(decoder[c] for c in s)

    with open(shared("fixtures", "cs336", "gpt2_vocab.json"), encoding="utf-8") as f:
        vocab = {i: to_bytes(s) for s, i in json.load(f).items()}
    merges = []
    with open(shared("fixtures", "cs336", "gpt2_merges.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ")
            if len(parts) == 2 and not line.startswith("#version"):
                merges.append((to_bytes(parts[0]), to_bytes(parts[1])))
    return Tokenizer(vocab, merges, special_tokens=["<|endoftext|>"], pattern="gpt2")


def sample_text(name: str, nbytes: int = 60_000) -> str:
    """About `nbytes` of 20-line documents drawn from across the corpus (not a prefix)."""
    docs = corpus_documents(name, max(20, nbytes // 1500))
    return b"".join(docs).decode("utf-8", errors="replace")


# -- every vocabulary, every corpus -----------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_corpora_equal_tiktoken(pair, name):
    enc, tok = pair(name)
    for corpus in CORPORA:
        text = sample_text(corpus)
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), corpus
        # With special-token text inserted between documents.
        text = "<|endoftext|>".join([text[:5000], text[5000:9000], ""])
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


def test_gpt2_merges_mode_equals_tiktoken(pair, gpt2_merges_tokenizer):
    enc, _ = pair("gpt2")
    assert gpt2_merges_tokenizer.special_tokens == {"<|endoftext|>": 50256}
    for corpus in CORPORA:
        text = sample_text(corpus)
        assert gpt2_merges_tokenizer.encode_ordinary(text) == enc.encode_ordinary(text), corpus


# Text that stresses pre-tokenization and BPE: whitespace runs, digits, CJK, emoji, marks,
# contractions, long single pre-tokens (the heap path) and lone surrogates.
_pieces = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=" \t\n\r\u00a0\u3000\u2003", max_size=12),
    st.text(alphabet="0123456789٣", max_size=40),
    st.text(
        alphabet="的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要", max_size=90
    ),
    st.text(alphabet="😀👍🏽🇺🇸\u200d❤️é́ñ", max_size=20),
    st.sampled_from(
        ["'s", "'LL", "'re", " don't", "'ve", "I'm", "<|endoftext|>", "<|endofprompt|>"]
    ),
    st.sampled_from(["\ud800", "\udfff", "\udbff\udc00", "\ud83d"]),
    st.integers(65, 300).map(lambda n: "a" * n),
    st.integers(65, 300).map(lambda n: " 7" * n),
)
texts = st.lists(_pieces, max_size=12).map("".join)


@pytest.mark.parametrize("name", NAMES)
@given(text=texts)
def test_property_random_text_equals_tiktoken(pair, name, text):
    enc, tok = pair(name)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


@given(text=texts)
def test_property_gpt2_merges_mode_equals_tiktoken(pair, gpt2_merges_tokenizer, text):
    enc, _ = pair("gpt2")
    assert gpt2_merges_tokenizer.encode_ordinary(text) == enc.encode_ordinary(text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_long_single_pretokens_equal_tiktoken(pair, name):
    # Long enough for the heap path, short enough for tiktoken's quadratic loop.
    enc, tok = pair(name)
    for text in ["a" * 3000, "1" * 3000, "的" * 1500, "ab" * 1500, "\u00e9" * 2000]:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text[:3]


@pytest.mark.parametrize("name", NAMES)
def test_every_non_ascii_token_alone_equals_tiktoken(pair, name):
    """Pre-tokens with a multi-byte character skip bytepair's whole-token table (BPE rebuilds
    those tokens anyway), and pre-tokens that start with a CJK ideograph skip its pre-token
    cache: each such token as a text of its own, twice (the cache's miss, then its hit), as
    tiktoken does."""
    enc, tok = pair(name)
    texts = non_ascii_tokens(enc._mergeable_ranks)
    assert len(texts) > 500
    want = [enc.encode_ordinary(t) for t in texts]
    assert [tok.encode_ordinary(t) for t in texts] == want
    assert [tok.encode_ordinary(t) for t in texts] == want


def test_lone_surrogates_encode_as_replacement_character(pair):
    _, tok = pair("cl100k_base")
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")


# Characters at the edges of UTF-8's lengths and of CPython's three ways to store a str
# (Latin-1, UCS-2, UCS-4), surrogates, and ASCII runs across the 8- and 16-unit steps.
_edges = "\x00\x7f\x80\xff\u0100\u07ff\u0800\ud7ff\ue000\uffff\U00010000\U0010ffff"
_utf8_texts = st.lists(
    st.one_of(
        st.text(alphabet=_edges, max_size=20),
        st.text(alphabet="\ud800\udbff\udc00\udfff", max_size=3),
        st.integers(1, 40).map(lambda n: "a" * n),
        st.text(max_size=20),
    ),
    max_size=10,
).map("".join)


@given(text=_utf8_texts)
def test_property_a_str_is_encoded_from_its_utf8(text):
    """The core writes a str's UTF-8 from its code units itself: with one id per byte, the
    ids are the bytes of Python's UTF-8 of the str, lone surrogates replaced as tiktoken
    does, whichever call takes the str."""
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    want = list(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode())
    assert tok.encode_ordinary(text) == want
    assert tok.encode(text) == want
    assert tok.encode_to_numpy(text).tolist() == want
    assert tok.encode_batch([text, text]) == [want, want]
    ids, offsets = tok.encode_batch_to_numpy([text, "", text])
    assert (ids.tolist(), offsets.tolist()) == (
        want + want,
        [0, len(want), len(want), 2 * len(want)],
    )
    assert tok.encode_with_offsets(text)[0] == want


# -- merges derived from ranks ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "o200k_base"])
def test_merges_from_ranks_give_the_same_encoding(pair, name):
    """The derived merge list, used in merges mode, reproduces rank-mode encoding."""
    enc, tok = pair(name)
    merges = tok.merges
    assert len(merges) == len(enc._mergeable_ranks) - 256
    vocab = {rank: token for token, rank in enc._mergeable_ranks.items()}
    via_merges = Tokenizer(vocab, merges, pattern=name)
    for corpus in CORPORA:
        text = sample_text(corpus, 20_000)
        assert via_merges.encode_ordinary(text) == enc.encode_ordinary(text), corpus


def test_gpt2_merges_from_ranks_equal_the_published_merges(pair, gpt2_merges_tokenizer):
    _, tok = pair("gpt2")
    assert tok.merges == gpt2_merges_tokenizer.merges


# -- special tokens --------------------------------------------------------------------------


# -- batch -----------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_batch_equals_a_loop(pair, threads):
    _, tok = pair("o200k_base")
    # 270 KB: a 64 KB chunk of the core, then its 8 KB chunks of the tail, handed over as they
    # finish.
    docs = [sample_text(c, 100_000)[i * 997 : i * 997 + 900] for c in CORPORA for i in range(100)]
    docs += ["", "<|endoftext|>", "a\ud800"]
    want = [tok.encode(d, allowed_special="all") for d in docs]
    assert tok.encode_batch(docs, allowed_special="all", threads=threads) == want
    with pytest.raises(DisallowedSpecialError):
        tok.encode_batch(docs, threads=threads)


def test_batch_rejects_a_bare_string(pair):
    _, tok = pair("gpt2")
    with pytest.raises(TypeError, match="list of str"):
        tok.encode_batch("abc")
    with pytest.raises(ValueError, match="threads"):
        tok.encode_batch(["abc"], threads=0)


def test_encode_rejects_bytes_with_a_hint():
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    with pytest.raises(TypeError, match="encode_bytes"):
        tok.encode(b"abc")


def test_encode_bytes_keeps_invalid_utf8(pair):
    _, tok = pair("gpt2")
    ids = tok.encode_bytes(b"caf\xe9 \xff\xfe ok")
    assert tok.decode_bytes(ids) == b"caf\xe9 \xff\xfe ok"


# -- offsets ---------------------------------------------------------------------------------


@given(text=texts)
def test_property_offsets_cover_the_tokens(pair, text):
    _, tok = pair("cl100k_base")
    ids, offsets = tok.encode_with_offsets(text, allowed_special="all")
    assert ids == tok.encode(text, allowed_special="all")
    assert len(offsets) == len(ids)
    for i, (s, e) in zip(ids, offsets, strict=True):
        # Offsets index `text` itself: a surrogate pair is one character of two code units.
        piece = text[s:e].encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        # The token's bytes lie within the characters its span names.
        assert tok.decode_bytes([i]) in piece.encode("utf-8")
    if offsets:
        assert offsets[0][0] == 0 and offsets[-1][1] == len(text)


def test_offsets_of_a_split_character():
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    ids, offsets = tok.encode_with_offsets("a€b")
    assert ids == [97, 0xE2, 0x82, 0xAC, 98]
    assert offsets == [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)]


def test_offsets_index_a_str_holding_a_surrogate_pair(pair):
    # "\ud83d\ude00" is U+1F600 in two code units (a str from UTF-16): it is encoded as the
    # one character, and its tokens span both units; what follows keeps its own indices.
    enc, tok = pair("cl100k_base")
    text = "\ud83d\ude00 x"
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == enc.encode("\U0001f600 x")
    assert [text[s:e] for s, e in offsets] == ["\ud83d\ude00", "\ud83d\ude00", " x"]
    bytewise = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    ids, offsets = bytewise.encode_with_offsets("a\ud800\ud83d\ude00b\udc00")
    # a, U+FFFD (3 bytes), U+1F600 (4 bytes), b, U+FFFD: units 0, 1, 2-3, 4, 5.
    assert offsets == [(0, 1)] + [(1, 2)] * 3 + [(2, 4)] * 4 + [(4, 5)] + [(5, 6)] * 3


# -- the pure-Python reference ---------------------------------------------------------------


@pytest.fixture(scope="session")
def reference_encoders(pair, gpt2_merges_tokenizer):
    """bytepair.reference.Encoder over the same vocabularies: the textbook algorithm."""
    from bytepair import reference

    enc, tok = pair("cl100k_base")
    ranks = {i: b for b, i in enc._mergeable_ranks.items()}
    cl100k = reference.Encoder(ranks, None, enc._special_tokens, tok.pattern)
    g = gpt2_merges_tokenizer
    regular = {i: b for i, b in g.vocab.items() if i not in g.special_tokens.values()}
    gpt2 = reference.Encoder(regular, g.merges, g.special_tokens, g.pattern)
    return {"cl100k_base": (cl100k, tok), "gpt2-merges": (gpt2, g)}


def test_a_token_across_characters_stops_the_start_from_whole_characters():
    """b"\\xa9\\xc3" (the end of one é and the start of the next) merges first, so "éé"
    is [\\xc3, \\xa9\\xc3, \\xa9], not [é, é]: the encoder starts BPE from whole characters
    only where no such token occurs (the reference runs the textbook algorithm)."""
    from bytepair import reference

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"\xa9\xc3", 257: "é".encode()}
    merges = [(b"\xa9", b"\xc3"), (b"\xc3", b"\xa9")]
    tok = Tokenizer(vocab, merges)
    ref = reference.Encoder(vocab, merges, {}, tok.pattern)
    assert tok.encode_ordinary("éé") == [0xC3, 256, 0xA9]
    for text in ["éé", "é é", "éaé", "aéé中", "中éé"]:
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text), text


@pytest.mark.parametrize("which", ["cl100k_base", "gpt2-merges"])
@given(text=texts)
def test_property_equals_reference(reference_encoders, which, text):
    ref, tok = reference_encoders[which]
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)


def test_merges_from_ranks_equal_the_reference(pair):
    """On a prefix of GPT-2's rank table (itself a rank table): the reference is slow."""
    from bytepair import reference

    enc, _ = pair("gpt2")
    prefix = {b: r for b, r in enc._mergeable_ranks.items() if r < 8000}
    tok = Tokenizer({r: b for b, r in prefix.items()}, None)
    assert tok.merges == reference.merges_from_ranks(prefix)


def test_bytes_input_equals_reference(reference_encoders):
    ref, tok = reference_encoders["gpt2-merges"]
    data = corpus_sample("multilingual", 20_000) + b"\xff\xfe abc \xc3( \xe2\x82"
    assert tok.encode_bytes(data, disallowed_special=()) == ref.encode_bytes(data)


# -- the default policy's fast path (kept in the core) ------------------------------------------


def test_default_policy_equals_the_explicit_one(pair):
    """`encode(text)` goes straight to the core's stored policy; it must behave exactly as
    tiktoken's default (nothing allowed, everything disallowed) spelt out."""
    enc, tok = pair("o200k_base")
    text = sample_text("en-prose", 20_000).replace("<|endoftext|>", "")
    assert tok.encode(text) == enc.encode(text)
    names = list(tok.special_tokens)
    assert tok.encode(text) == tok.encode(text, disallowed_special=set(names))
    for special in ("<|endoftext|>", "<|endofprompt|>"):
        with pytest.raises(DisallowedSpecialError, match="endof"):
            tok.encode("a " + special + " b")
        with pytest.raises(DisallowedSpecialError):
            tok._encoder.encode("a " + special, frozenset(), frozenset(names))
    # Only one side given to the core: the missing side is empty.
    assert tok._encoder.encode("<|endoftext|>", frozenset(names)) == [enc.eot_token]


def test_encode_and_encode_ordinary_reject_non_str_with_a_hint():
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])
    for call in (tok.encode, tok.encode_ordinary):
        with pytest.raises(TypeError, match="got bytes; for bytes, call encode_bytes"):
            call(b"abc")
        with pytest.raises(TypeError, match="got bytearray; for bytes"):
            call(bytearray(b"abc"))
        with pytest.raises(TypeError, match=r"expected a str to encode, got int$"):
            call(3)
    with pytest.raises(TypeError, match="got NoneType"):
        tok.encode(None, allowed_special="all")


# -- encode_to_numpy ---------------------------------------------------------------------------


def test_encode_to_numpy_without_numpy_says_how_to_get_it():
    """NumPy is optional: with it missing, the arrays' methods raise an ImportError naming
    the fix, and the rest of the tokenizer works."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import bytepair\n"
        "tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])\n"
        "assert tok.encode('hi') == [104, 105]\n"
        "for call in (lambda: tok.encode_to_numpy('hi'),\n"
        "             lambda: tok.encode_to_numpy('hi', disallowed_special=()),\n"
        "             lambda: tok.encode_batch_to_numpy(['hi'])):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        assert 'pip install numpy' in str(e), e\n"
        "    else:\n"
        "        raise SystemExit('no ImportError')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", NAMES)
def test_encode_to_numpy_equals_tiktoken(pair, name):
    """Same ids as tiktoken's own `encode_to_numpy`, with its policies; uint32, writable."""
    import numpy

    enc, tok = pair(name)
    for corpus in CORPORA:
        text = sample_text(corpus, 20_000).replace("<|endoftext|>", "")
        got = tok.encode_to_numpy(text)
        assert got.dtype == numpy.uint32 and got.ndim == 1
        assert got.tolist() == enc.encode_to_numpy(text).tolist() == enc.encode(text)
        got[0] = 7  # an array of its own, not a view of something read-only
    text = "a <|endoftext|> b"
    assert (
        tok.encode_to_numpy(text, allowed_special="all").tolist()
        == enc.encode_to_numpy(text, allowed_special="all").tolist()
    )
    assert (
        tok.encode_to_numpy(text, disallowed_special=()).tolist()
        == enc.encode_to_numpy(text, disallowed_special=()).tolist()
    )
    with pytest.raises(DisallowedSpecialError, match="endoftext"):
        tok.encode_to_numpy(text)
    for plain in ({}, {"disallowed_special": ()}):  # the policy's road and the plain one
        with pytest.raises(TypeError, match="for bytes, call encode_bytes"):
            tok.encode_to_numpy(b"abc", **plain)
        assert tok.encode_to_numpy("", **plain).tolist() == []


@given(text=texts)
def test_property_encode_to_numpy_equals_encode(pair, text):
    _, tok = pair("o200k_base")
    assert tok.encode_to_numpy(text, disallowed_special=()).tolist() == tok.encode(
        text, disallowed_special=()
    )


# -- trained tokenizers and tiktoken's, fuzzed ---------------------------------------------


@pytest.fixture(scope="module")
def trained() -> dict[str, bytepair.Tokenizer]:
    """One small tokenizer per pattern (fuzz_inputs.tokenizers)."""
    return tokenizers()


def reference_encoder(tok) -> reference.Encoder:
    return reference.Encoder(dict(tok.vocab), tok.merges, tok.special_tokens, tok.pattern)


@given(
    text=fuzz_texts,
    pattern=st.sampled_from(PATTERNS),
    allowed=st.sampled_from([set(), {"<|a"}, {"<|a|>", "<|endoftext|>"}, "all"]),
)
def test_fuzz_encode_equals_reference(trained, text, pattern, allowed):
    tok = trained[pattern]
    ref = reference_encoder(tok)
    assert outcome(tok.encode, text, allowed_special=allowed) == outcome(
        ref.encode, text, allowed_special=allowed
    )
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    assert tok.encode(text, allowed_special=allowed, disallowed_special=()) == ref.encode(
        text, allowed_special=allowed, disallowed_special=()
    )
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@given(data=raw_bytes, pattern=st.sampled_from(PATTERNS))
def test_fuzz_encode_bytes_equals_reference(trained, data, pattern):
    assume(assigned(data))
    tok = trained[pattern]
    ids = tok.encode_bytes(data, disallowed_special=())
    assert ids == reference_encoder(tok).encode_bytes(data)
    assert tok.decode_bytes(ids) == data


@pytest.fixture(scope="module")
def tiktoken_pairs(tiktoken_encoding):
    out = {}
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        enc = tiktoken_encoding(name)
        out[name] = (bytepair.Tokenizer.from_tiktoken(enc), enc)
    return out


@given(text=fuzz_texts, name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]))
def test_fuzz_encode_equals_tiktoken(tiktoken_pairs, text, name):
    tok, enc = tiktoken_pairs[name]
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    both = [text, text[::-1]]
    assert tok.encode_batch(both, disallowed_special=()) == enc.encode_ordinary_batch(both)


@given(data=raw_bytes, name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]))
def test_fuzz_encode_bytes_round_trips_through_tiktoken(tiktoken_pairs, data, name):
    """Invalid UTF-8 has no tiktoken encoding to compare with; tiktoken must still decode
    bytepair's ids to the same bytes, and valid UTF-8 must encode as tiktoken does."""
    tok, enc = tiktoken_pairs[name]
    ids = tok.encode_bytes(data, disallowed_special=())
    assert enc.decode_bytes(ids) == data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert ids == enc.encode(text, disallowed_special=())
