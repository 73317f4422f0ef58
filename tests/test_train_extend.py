"""train(..., base=tokenizer): extending a tokenizer keeps every id, merge and special
token; a rank-table base (cl100k, Llama 3) stays a rank table that tiktoken encodes as
bytepair does; extending equals training on (HF's BpeTrainer for compat="huggingface");
and the Rust trainer equals reference.train_from_counts with the same base."""

from __future__ import annotations

import json
import warnings
from collections import Counter

import bytepair
import bytepair.compat
import bytepair.extend
import pytest
import tiktoken
from bytepair import Tokenizer, _core, reference
from bytepair.errors import TrainingWarning, VocabSizeError
from conftest import corpus_documents, shared
from hypothesis import given
from hypothesis import strategies as st
from model_files import LLAMA3_PATTERN, LLAMA3_SPECIALS
from test_train_compat import SPECIALS, documents, hf_trained


def texts(name: str, count: int, lines: int = 20) -> list[str]:
    """Documents of a corpus without its `<|endoftext|>` separator lines."""
    docs = corpus_documents(name, count, lines)
    return [d.decode("utf-8", "replace").replace("<|endoftext|>\n", "") for d in docs]


def as_tiktoken(tok: Tokenizer, pattern: str) -> tiktoken.Encoding:
    """tiktoken built from the result's ranks: the oracle for a rank table."""
    ranks = {b: i for i, b in tok._vocab.items()}
    return tiktoken.Encoding(
        "extended", pat_str=pattern, mergeable_ranks=ranks, special_tokens=tok.special_tokens
    )


def reference_merges(base: Tokenizer, docs: list[str], num: int, compat="cs336") -> list:
    """reference.train_from_counts from the base's encoding of each pre-token."""
    counts: Counter[bytes] = Counter()
    for d in docs:  # each text its own document, as bytepair.train counts texts
        counts.update(
            reference.count_pretokens(d.encode(), base.pattern, list(base.special_tokens))
        )
    return reference_merges_from_counts(base, counts, num, compat)


def test_extending_a_rank_table_keeps_it_one_that_tiktoken_encodes(tiktoken_encoding):
    enc = tiktoken_encoding("cl100k_base")
    base = Tokenizer.from_tiktoken(enc)
    docs = texts("zh-prose", 150)
    tok = bytepair.train(docs, base.vocab_size + 400, base=base, progress=False)
    assert tok.vocab_size == base.vocab_size + 400 == 100_677
    assert tok.special_tokens == base.special_tokens
    assert all(tok._vocab[i] == b for i, b in base._vocab.items())
    assert sorted(set(tok._vocab) - set(base._vocab)) == list(range(100_277, 100_677))
    extended = as_tiktoken(tok, enc._pat_str)
    held_out = texts("zh-prose", 30, 5) + texts("multilingual", 30, 5)
    for text in held_out:
        assert tok.encode(text, allowed_special="all") == extended.encode(
            text, allowed_special="all"
        )
    zh = "".join(texts("zh-prose", 30, 5)[:30])
    assert len(tok.encode(zh, disallowed_special=())) < len(base.encode(zh, disallowed_special=()))
    assert tok.merges[-400:] == reference_merges(base, docs, 400)


def test_extending_llama3_keeps_its_ids_and_tiktoken_agrees():
    specials = {t: 128000 + i for i, t in enumerate(LLAMA3_SPECIALS)}
    base = Tokenizer.load(
        shared("fixtures", "tokenizers", "llama3", "tokenizer.model"),
        special_tokens=specials,
        pattern=LLAMA3_PATTERN,
    )
    docs = texts("code", 120)
    tok = bytepair.train(
        docs, base.vocab_size + 300, base=base, compat="huggingface", progress=False
    )
    assert tok.special_tokens == specials
    assert sorted(set(tok._vocab) - set(base._vocab)) == list(range(128_256, 128_556))
    extended = as_tiktoken(tok, LLAMA3_PATTERN)
    for text in texts("code", 40, 5) + texts("multilingual", 20, 5):
        assert tok.encode(text, allowed_special="all") == extended.encode(
            text, allowed_special="all"
        )
    assert tok.merges[-300:] == reference_merges(base, docs, 300, compat="huggingface")


@pytest.mark.parametrize("compat", ["cs336", "rustbpe"])
def test_extending_a_trained_tokenizer_is_training_on(compat, tmp_path):
    docs = documents(60)
    full = bytepair.train(docs, 1400, SPECIALS, compat=compat, progress=False)
    half = bytepair.train(docs, 800, SPECIALS, compat=compat, progress=False)
    half.save(tmp_path / "half.json")
    for base in (half, tmp_path / "half.json"):
        tok = bytepair.train(docs, 1400, SPECIALS, compat=compat, base=base, progress=False)
        assert tok.merges == full.merges
        # The base's special tokens keep their ids (after its merges); new tokens follow.
        assert tok.special_tokens == half.special_tokens
        new = [full.vocab[i] for i in range(800 - len(SPECIALS), 1400 - len(SPECIALS))]
        assert [tok.vocab[i] for i in range(800, 1400)] == new


def test_extending_an_hf_trained_tokenizer_is_what_hf_trains(tmp_path):
    docs = documents(60)
    base = bytepair.train(docs, 700, SPECIALS, compat="huggingface", progress=False)
    tok = bytepair.train(docs, 1400, base=base, compat="huggingface", progress=False)
    want = json.loads(hf_trained(docs, 1400).to_str())["model"]
    tok.save(tmp_path / "tokenizer.json")
    got = json.loads((tmp_path / "tokenizer.json").read_text())["model"]
    assert got["merges"] == want["merges"]
    assert got["vocab"] == want["vocab"]


def test_new_special_tokens_follow_the_new_tokens():
    base = bytepair.train(["ab ab ab"], 258, ["<s>"], progress=False)  # ab: 256, <s>: 257
    tok = bytepair.train(["abc abc<t>"], 260, ["<t>"], base=base, progress=False)
    assert tok.special_tokens == {"<s>": 257, "<t>": 259}
    assert tok.vocab[258] == b"abc"


def test_base_errors_name_the_fix():
    base = bytepair.train(["ab ab ab"], 258, progress=False)
    with pytest.raises(VocabSizeError, match="smaller than the base's 258 ids"):
        bytepair.train(["abc"], 257, base=base, progress=False)
    with pytest.raises(ValueError, match="differs from the base's pattern"):
        bytepair.train(["abc"], 260, base=base, pattern="o200k", progress=False)
    with pytest.raises(TypeError, match=r"bytepair\.Tokenizer or the path"):
        bytepair.train(["abc"], 260, base={"a": 1}, progress=False)
    with pytest.raises(ValueError, match="engine='ray' trains with compat='cs336' and no base"):
        bytepair.train(["abc"], 260, base=base, engine="ray", progress=False)


letters = st.binary(min_size=1, max_size=8).map(lambda b: bytes(x % 4 + 97 for x in b))


@given(
    st.dictionaries(letters, st.integers(1, 40), min_size=1, max_size=15),
    st.dictionaries(letters, st.integers(1, 40), max_size=15),
    st.sampled_from(["cs336", "huggingface", "rustbpe"]),
    st.booleans(),
)
def test_rust_extends_as_the_reference_does(first, second, compat, rank_table):
    """From a base trained on `first` (a merges list, or its rank table), the core's merges
    on `second` equal reference.train_from_counts from the same base."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        merges = reference.train_from_counts(first, 8)
    base = Tokenizer(reference.build_vocab(merges), None if rank_table else merges)
    want = reference_merges_from_counts(base, second, 20, compat)
    counts = _core.PretokenCounts()
    for word, n in second.items():
        counts.add(word, n)
    rules = bytepair.compat.core_rules(compat, None)
    got = _core.train_merges(counts, 20, base=bytepair.extend.start(base), **rules)
    assert got == want


def reference_merges_from_counts(base: Tokenizer, counts, num: int, compat: str) -> list:
    encoder = reference.Encoder(base._vocab, base._merges, {}, base.pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        return reference.train_from_counts(
            counts, num, compat=compat, base=(dict(base._vocab), encoder._encode_piece)
        )
