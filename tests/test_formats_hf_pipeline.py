"""Each tokenizer.json stage bytepair reads, against HuggingFace tokenizers on the same file:
normalizers, pre-tokenizer steps (every Split behavior, inverted or not), added tokens with
each flag, on corpus text and on random text built to hit the edges."""

from __future__ import annotations

import copy
import json

import bytepair
import pytest
from bytepair.formats import huggingface as hf_format
from conftest import CORPORA, corpus_documents
from formats_data import SPECIAL, trained
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

BL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
BL_REGEX = BL | {"use_regex": True}


def split(pattern, behavior="Isolated", invert=False, kind="Regex"):
    return {"type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert}


def seq(*steps):
    return {"type": "Sequence", "pretokenizers": list(steps)}


WORDS = r"'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

NORMALIZERS = {
    "NFC": {"type": "NFC"},
    "NFD": {"type": "NFD"},
    "NFKC": {"type": "NFKC"},
    "NFKD": {"type": "NFKD"},
    "Lowercase": {"type": "Lowercase"},
    "Replace string": {"type": "Replace", "pattern": {"String": " "}, "content": "_"},
    "Replace regex": {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
    "Strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "Strip left": {"type": "Strip", "strip_left": True, "strip_right": False},
    "Prepend": {"type": "Prepend", "prepend": "▁"},
    "Sequence": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
    "empty Sequence": {"type": "Sequence", "normalizers": []},
}

PRE_TOKENIZERS = {
    "ByteLevel regex": BL_REGEX,
    "ByteLevel regex prefix": BL_REGEX | {"add_prefix_space": True},
    "Split + ByteLevel prefix": seq(split(WORDS), BL | {"add_prefix_space": True}),
    "Split + ByteLevel regex": seq(split(r"\p{N}+|\P{N}+"), BL_REGEX),
    "Split string": seq(split(" ", kind="String"), BL),
    "Split empty-matching": seq(split(r"\s*"), BL),
    "Digits": seq({"type": "Digits", "individual_digits": False}, BL_REGEX),
    "Digits individual": seq({"type": "Digits", "individual_digits": True}, BL_REGEX),
    "Punctuation": seq({"type": "Punctuation", "behavior": "Isolated"}, BL_REGEX),
    "Punctuation contiguous": seq({"type": "Punctuation", "behavior": "Contiguous"}, BL),
    "Whitespace": seq({"type": "Whitespace"}, BL),
    "WhitespaceSplit": seq({"type": "WhitespaceSplit"}, BL),
    "Metaspace always": seq(
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}, BL
    ),
    "Metaspace first": seq(
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}, BL
    ),
    "Metaspace never, no split": seq(
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False}, BL
    ),
    "DeepSeek-like": seq(split(r"\p{N}{1,3}"), split("[一-龥぀-ゟ゠-ヿ]+"), split(WORDS), BL),
}
for behavior in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
    for invert in (False, True):
        PRE_TOKENIZERS[f"Split {behavior}{' inverted' if invert else ''}"] = seq(
            split(r"\s+|\p{P}", behavior, invert), BL
        )


def _added(content, **flags):
    base = {
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }
    return base | flags


ADDED = {
    "lstrip": [_added("<mask>", lstrip=True)],
    "rstrip": [_added("<mask>", rstrip=True)],
    "lstrip+rstrip": [_added("<mask>", lstrip=True, rstrip=True)],
    "single_word": [_added("ab", single_word=True, special=False)],
    "normalized": [_added("Ab", normalized=True, special=False)],
    # Text in the byte alphabet: HF's ByteLevel decoder maps it back to those bytes.
    "byte-alphabet text": [_added("éé", special=False), _added("ĠéĠ")],
    "mixed passes": [
        _added("<mask>", lstrip=True),
        _added("sk>x", normalized=True, special=False),
        _added("ab", normalized=True, special=False, single_word=True),
    ],
}

ALPHABET = [
    *"aAbB  \n\t.,!?-'019",
    "<mask>",
    "ΣΑΣ",
    "ﬁ",
    "Ａ",
    "é",
    "e\u0301",
    "中文",
    "ひら",
    "١٢",
    "\u00a0",
    "\u2028",
    "\x1c",
    SPECIAL,
    "_",
    "x",
    "▁",
]
TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join)


def _file(tmp_path, name, normalizer=None, pre_tokenizer=None, added=None):
    doc = copy.deepcopy(hf_format.to_json(trained()))
    if normalizer is not None:
        doc["normalizer"] = normalizer
    if pre_tokenizer is not None:
        doc["pre_tokenizer"] = pre_tokenizer
    if added is not None:
        next_id = len(doc["model"]["vocab"])
        for tok in added:
            assert tok["content"] not in doc["model"]["vocab"]
            doc["added_tokens"].append(tok | {"id": next_id})
            next_id += 1
    path = tmp_path / f"{abs(hash(name))}.json"
    path.write_text(json.dumps(doc), "utf-8")
    return bytepair.Tokenizer.load(path), HFTokenizer.from_file(str(path))


def _agree(tok, hf, text):
    expected = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == expected, repr(text)


def _agree_on_corpora_and_fuzz(tok, hf) -> None:
    """Documents from across every corpus, then generated texts."""
    for name in CORPORA:
        for doc in corpus_documents(name, 12, 4):
            _agree(tok, hf, doc.decode("utf-8"))

    @given(TEXTS)
    def check(text):
        _agree(tok, hf, text)

    check()


@pytest.mark.parametrize("name", NORMALIZERS)
def test_normalizer_is_hfs(tmp_path_factory, name):
    tok, hf = _file(tmp_path_factory.mktemp("n"), name, normalizer=NORMALIZERS[name])
    _agree_on_corpora_and_fuzz(tok, hf)


@pytest.mark.parametrize("name", PRE_TOKENIZERS)
def test_pre_tokenizer_is_hfs(tmp_path_factory, name):
    tok, hf = _file(tmp_path_factory.mktemp("p"), name, pre_tokenizer=PRE_TOKENIZERS[name])
    _agree_on_corpora_and_fuzz(tok, hf)


@pytest.mark.parametrize("name", ADDED)
@pytest.mark.parametrize("normalizer", [None, "Lowercase"])
def test_added_token_flags_are_hfs(tmp_path_factory, name, normalizer):
    tok, hf = _file(
        tmp_path_factory.mktemp("a"),
        name + str(normalizer),
        normalizer=NORMALIZERS.get(normalizer),
        added=ADDED[name],
    )

    @given(TEXTS)
    def check(text):
        _agree(tok, hf, text)
        ids = hf.encode(text).ids
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(
                ids, skip_special_tokens=skip
            )

    check()
    for text in ("a <mask> b", "ab abc ab", "xab ab_ ab", "  <mask>  ", "<mask>x"):
        _agree(tok, hf, text)


def test_non_special_added_tokens_match_under_every_policy(tmp_path):
    tok, hf = _file(tmp_path, "ns", added=[_added("ab", special=False)])
    text = f"xaby {SPECIAL}"
    ab = hf.token_to_id("ab")
    assert ab in tok.encode(text, disallowed_special=())
    assert ab in tok.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == hf.encode(text).ids
    with pytest.raises(bytepair.DisallowedSpecialError):
        tok.encode(text)
