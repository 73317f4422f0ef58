"""The Rust splitters against Python's `regex` module, a second regex engine: the same pre-tokens
on a sample of every shared corpus, with invalid UTF-8 mixed in, and on random text. DeepSeek's
splitter runs against the Python reference path of its tokenizer.json's own three Splits
(`pipeline.pre_tokenize`).

Python sees invalid bytes as `surrogateescape` surrogates, which the patterns treat as
punctuation, as the core does (DeepSeek's third step, which tells punctuation from other
characters, treats both as other characters).
"""

from __future__ import annotations

import json
from functools import cache

import pytest
import regex
from bytepair import _core, pipeline
from bytepair.patterns import PATTERNS
from conftest import CORPORA, corpus_documents
from hypothesis import given
from hypothesis import strategies as st
from model_files import deepseek_json

NAMES = (
    "gpt2",
    "cl100k",
    "o200k",
    "llama3",
    "qwen2",
    "qwen3.5",
    "tekken",
    "deepseek",
    "superword",
)


@cache
def deepseek_splits() -> tuple[pipeline.Split, ...]:
    """The Split steps of DeepSeek's published tokenizer.json, read from the file itself."""
    with open(deepseek_json(), encoding="utf-8") as f:
        steps = json.load(f)["pre_tokenizer"]["pretokenizers"]
    splits = tuple(
        pipeline.Split(s["pattern"]["Regex"], True, s["behavior"].lower(), s["invert"])
        for s in steps
        if s["type"] == "Split"
    )
    assert len(splits) == 3 and [s["type"] for s in steps[3:]] == ["ByteLevel"]
    return splits


def regex_pieces(name: str, data: bytes) -> list[bytes]:
    text = data.decode("utf-8", errors="surrogateescape")
    if name == "deepseek":
        pieces = pipeline.pre_tokenize(deepseek_splits(), text)
    else:
        pieces = regex.findall(PATTERNS[name], text)
    return [p.encode("utf-8", errors="surrogateescape") for p in pieces]


def assert_same_pieces(name: str, data: bytes) -> None:
    got, want = _core.split_pieces(name, data), regex_pieces(name, data)
    assert b"".join(want) == data, "the regex left bytes unmatched"
    if got != want:
        first = next(i for i in range(len(want) + 1) if got[i : i + 1] != want[i : i + 1])
        offset = sum(map(len, got[:first]))
        pytest.fail(
            f"{name}: pieces differ from byte {offset} (piece {first}):\n"
            f"  rust  {got[first : first + 6]}\n  regex {want[first : first + 6]}"
        )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("corpus", CORPORA)
def test_corpus_documents_split_like_python_regex(corpus, name):
    # Documents from every part of the corpus (the 25-language one is grouped by language).
    assert_same_pieces(name, b"".join(corpus_documents(corpus, 200)))


@pytest.mark.parametrize("name", NAMES)
def test_invalid_utf8_splits_like_python_regex(name):
    data = b"".join(corpus_documents("multilingual", 100))
    # Every 61st byte becomes invalid: a lone continuation, a truncated sequence, a surrogate.
    bad = [b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]
    mixed = b"".join(data[i : i + 61] + bad[(i // 61) % len(bad)] for i in range(0, len(data), 61))
    assert_same_pieces(name, mixed)


def test_hand_derived_pretokens():
    # Each expected split follows from reading the regex by hand.
    assert _core.split_pieces("gpt2", b"I'll  pay\n") == [b"I", b"'ll", b" ", b" pay", b"\n"]
    # cl100k: contractions ignore case, numbers go in threes, any non-letter prefixes a word.
    assert _core.split_pieces("cl100k", b"WE'LL 12345\"ok") == [
        b"WE",
        b"'LL",
        b" ",
        b"123",
        b"45",
        b'"ok',
    ]
    # o200k: a word ends where a capital follows a lowercase letter; `/` joins the tail.
    assert _core.split_pieces("o200k", b"helloWorld's ://x\n") == [
        b"hello",
        b"World's",
        b" ://",
        b"x",
        b"\n",
    ]
    assert _core.split_pieces("gpt2", b"a\xff\xfe b") == [b"a", b"\xff\xfe", b" b"]


def test_unknown_pattern_is_a_value_error():
    with pytest.raises(ValueError, match="unclosed"):
        _core.split_pieces("(unclosed", b"x")


INTERESTING = (
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u3000\x1c\u200b"
    "'’sSſtTdDlLvVeErRmM"
    "aZéÉßωΩдДǅᾈʰーᵃ中あאاก"
    "07٣५０²½Ⅻ①"
    "\u0301\u0308\u064b\u093f\u20dd"
    '.,!?/"-($€©_😀\u200d\ufe0f'
    # DeepSeek's second step, [一-龥぀-ゟ゠-ヿ]: its ranges' ends and their neighbours, and
    # the marks, symbols, punctuation and unassigned code points in them.
    "\u4dff一龥\u9fa6\u9fff\u303f\u3040ぁか\u3097\u3099\u309a゛ゝゟ゠ア・ヿ\u3100"
    # Punctuation and symbols beyond ASCII; controls and format characters.
    "、，「“«¨\x01\x1b\xad\u0600\u2060\ue000"
)

texts = st.text(
    st.one_of(
        st.sampled_from(INTERESTING),
        # Assigned characters only: the regex module may know a newer Unicode than the core.
        st.characters(exclude_categories=("Cn", "Cs")),
    ),
    max_size=40,
)


@given(texts, st.sampled_from(NAMES))
def test_property_random_text_splits_like_python_regex(text, name):
    assert_same_pieces(name, text.encode())


deepseek_texts = st.text(
    st.one_of(
        st.sampled_from(INTERESTING),
        st.sampled_from("0123456789 \n"),
        # Kana and the ends of DeepSeek's ideograph range, unassigned code points included.
        st.characters(min_codepoint=0x3030, max_codepoint=0x3110),
        st.characters(min_codepoint=0x9F98, max_codepoint=0x9FB0),
        st.characters(exclude_categories=("Cn", "Cs")),
    ),
    max_size=60,
)


@given(deepseek_texts)
def test_property_deepseek_splits_like_its_three_splits(text):
    assert_same_pieces("deepseek", text.encode())


def test_deepseek_hand_derived_pretokens():
    # Each expected split follows from reading the three Splits by hand: numbers in threes,
    # then runs of kana and ideographs (to 龥, U+9FA5), then the third regex on each piece.
    assert _core.split_pieces("deepseek", "x12345中文\u9fa6 東京・大阪\n".encode()) == [
        b"x",
        b"123",
        b"45",
        "中文".encode(),
        "\u9fa6".encode(),
        b" ",
        "東京".encode(),
        "・".encode(),
        "大阪".encode(),
        b"\n",
    ]


def test_regex_has_unicode_16(tiktoken_encoding):
    """The reference (Python `regex`) must classify characters as the Rust splitters and
    tiktoken do: U+323B0 is unassigned in Unicode 16 (a punctuation-class character) and a
    letter in Unicode 17, which `regex` 2025.10 adopted; pyproject's dev extra pins it below.
    Found by `make fuzz`: the reference split "\\U000323b0:A" as ["\\U000323b0", ":A"]."""
    from bytepair import Tokenizer

    text = "\U000323b0:A"
    want = ["\U000323b0:", "A"]
    enc = tiktoken_encoding("cl100k_base")
    # tiktoken (fancy-regex, Unicode 16) keeps ":" and "A" apart: no ":A" token (56748).
    ids = enc.encode_ordinary(text)
    assert enc.encode_single_token(":A") not in ids
    assert Tokenizer.from_tiktoken(enc).encode_ordinary(text) == ids
    assert [p.decode() for p in _core.split_pieces("cl100k", text.encode())] == want
    assert regex.findall(PATTERNS["cl100k"], text) == want, f"regex {regex.__version__}"
