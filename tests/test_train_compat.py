"""compat="huggingface" and compat="rustbpe": the same merges and ids as HuggingFace's
BpeTrainer and rustbpe, trained on the same real documents; and the Rust trainer equals
reference.train_from_counts in every mode."""

from __future__ import annotations

import json
from contextlib import nullcontext

import bytepair
import pytest
import rustbpe
from bytepair import _core, compat, patterns, reference
from bytepair.errors import TrainingWarning, VocabError
from bytepair.formats.huggingface import hf_regex
from conftest import corpus_documents
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

SPECIALS = ["<|endoftext|>", "<pad>", "<｜end▁of▁sentence｜>"]


def documents(count: int = 120) -> list[str]:
    """Real documents of three kinds (prose in two scripts and code), with special tokens
    in some of them (HF counts their text; rustbpe has no special tokens)."""
    docs = []
    for name in ("en-prose", "zh-prose", "code"):
        for i, d in enumerate(corpus_documents(name, count, 20)):
            text = d.decode("utf-8", "replace")
            docs.append(text + "<|endoftext|>" if i % 3 == 0 else text)
    return docs


def hf_trained(docs, vocab_size, pattern="gpt2", files=(), **options) -> Tokenizer:
    """HF's BpeTrainer with the pre-tokenizer bytepair writes to tokenizer.json (the
    pattern in the form Oniguruma reads as bytepair does), on the texts ``docs``
    (``train_from_iterator``) or else on the text files ``files`` (``train``)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(hf_regex(patterns.resolve(pattern))), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        **options,
    )
    if files:
        tok.train([str(f) for f in files], trainer)
    else:
        tok.train_from_iterator(docs, trainer)
    return tok


def saved_json(tok: bytepair.Tokenizer, tmp_path) -> dict:
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    return json.loads(path.read_text())


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k"])
def test_huggingface_mode_makes_hfs_vocab_and_merges(pattern, tmp_path):
    docs = documents()
    hf = hf_trained(docs, 1500, pattern)
    tok = bytepair.train(
        docs, 1500, SPECIALS, pattern=pattern, compat="huggingface", progress=False
    )
    want, got = json.loads(hf.to_str())["model"], saved_json(tok, tmp_path)["model"]
    assert len(want["merges"]) > 1000
    assert got["merges"] == want["merges"]
    assert got["vocab"] == want["vocab"]
    assert {t: hf.token_to_id(t) for t in SPECIALS} == tok.special_tokens


def test_huggingface_mode_file_encodes_as_hfs(tmp_path):
    docs = documents()
    hf = hf_trained(docs, 1200)
    tok = bytepair.train(docs, 1200, SPECIALS, compat="huggingface", progress=False)
    tok.save(tmp_path / "tokenizer.json")
    loaded = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    held_out = [d.decode("utf-8", "replace") for d in corpus_documents("multilingual", 40, 5)]
    for text in held_out:
        want = hf.encode(text).ids
        assert loaded.encode(text).ids == want
        assert tok.encode(text, allowed_special="all") == want


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k"])
def test_huggingface_mode_reads_text_files_line_by_line_as_hf_does(pattern, tmp_path):
    # HF's train(files) counts each line on its own, so "\n\n" and "\n    " runs never form
    # across a line end; counted whole, they do (GPT-2's pattern: a different merge 97 on
    # English prose). Blank lines, indented code, CRLF lines and a special token's text.
    docs = documents(60)
    files = []
    for i in range(0, len(docs), 60):
        path = tmp_path / f"part{i}.txt"
        text = "\n\n".join(docs[i : i + 60]) + "\r\n  \r\n\tend\n\n\n"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        files.append(path)
    want = json.loads(hf_trained([], 1500, pattern, files=files).to_str())["model"]
    tok = bytepair.train(
        files, 1500, SPECIALS, pattern=pattern, compat="huggingface", progress=False
    )
    got = saved_json(tok, tmp_path)["model"]
    assert len(want["merges"]) > 1000
    assert got["merges"] == want["merges"]
    assert got["vocab"] == want["vocab"]


def test_huggingface_mode_counts_sampled_file_documents_line_by_line(tmp_path):
    # Documents of a file (cut at the separator) are each counted line by line in this
    # mode: the same merges as HF over every document's lines. The sample takes them all.
    docs = [d.replace("<|endoftext|>", "") for d in documents(40)]
    path = tmp_path / "corpus.txt"
    path.write_text("<sep>".join(docs), encoding="utf-8")
    lines = [line for d in docs for line in d.splitlines(keepends=True)]
    assert any(line == "\n" for line in lines)
    want = json.loads(hf_trained(lines, 1200).to_str())["model"]
    tok = bytepair.train(
        [path],
        1200,
        SPECIALS,
        compat="huggingface",
        document_separator="<sep>",
        sample_documents=len(docs),
        progress=False,
    )
    got = saved_json(tok, tmp_path)["model"]
    assert got["merges"] == want["merges"]


@pytest.mark.parametrize(
    "options", [{"min_frequency": 40}, {"max_token_length": 5}, {"max_token_length": 2}]
)
def test_huggingface_options_mean_what_they_mean_in_hf(options, tmp_path):
    docs = documents(60)
    hf = hf_trained(docs, 3000, **options)
    want = json.loads(hf.to_str())["model"]
    stopped = len(want["vocab"]) < 3000  # HF ran out of pairs: bytepair warns
    with pytest.warns(TrainingWarning, match="new tokens") if stopped else nullcontext():
        tok = bytepair.train(docs, 3000, SPECIALS, compat="huggingface", progress=False, **options)
    got = saved_json(tok, tmp_path)["model"]
    assert got["merges"] == want["merges"]
    assert got["vocab"] == want["vocab"]
    if "max_token_length" in options:
        specials = {s.encode() for s in SPECIALS}
        longest = max(len(b) for b in tok.vocab.values() if b not in specials)
        assert longest == max(2, options["max_token_length"] - 1)  # HF compares with `<`


def test_rustbpe_mode_makes_rustbpes_ranks():
    docs = [d.replace("<|endoftext|>", "") for d in documents()]
    peer = rustbpe.Tokenizer()
    peer.train_from_iterator(iter(docs), 1800, pattern=patterns.resolve("cl100k"))
    want = {rank: token for token, rank in peer.get_mergeable_ranks()}
    tok = bytepair.train(docs, 1800, pattern="cl100k", compat="rustbpe", progress=False)
    assert len(want) == 1800
    assert dict(tok.vocab) == want
    held_out = [d.decode("utf-8", "replace") for d in corpus_documents("multilingual", 40, 5)]
    for text in held_out:
        assert tok.encode(text) == peer.encode(text)


def test_a_merge_that_rebuilds_bytes_reuses_the_id_except_in_rustbpe():
    # Hand-derived: (a, b) makes 256 "ab", (ab, c) 257 "abc", (b, c) 258 "bc"; (a, bc)
    # rebuilds "abc". HF and CS336 yield 257 again; rustbpe would give "abc" id 259.
    start = {i: bytes([i]) for i in range(256)}
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")]
    assert compat.new_ids("huggingface", start, merges, 256) == {
        256: b"ab",
        257: b"abc",
        258: b"bc",
    }
    with pytest.raises(VocabError, match=r"merge 3 \(b'a', b'bc'\) rebuilds b'abc'.*at most 259"):
        compat.new_ids("rustbpe", start, merges, 256)


def test_modes_are_checked():
    with pytest.raises(ValueError, match="compat must be one of"):
        bytepair.train(["ab"], 257, compat="sentencepiece", progress=False)
    with pytest.raises(ValueError, match="needs compat='huggingface'"):
        bytepair.train(["ab"], 257, max_token_length=4, progress=False)
    with pytest.raises(ValueError, match="max_token_length must be an int"):
        bytepair.train(["ab"], 257, compat="huggingface", max_token_length=0, progress=False)


# -- the Rust trainer equals the reference in every mode ------------------------------------


def rust_merges(counts: dict[bytes, int], num: int, mode: str, max_token_length=None, **kw):
    wc = _core.PretokenCounts()
    for word, n in counts.items():
        wc.add(word, n)
    base = None
    if mode == "huggingface":
        base = (list(compat.huggingface_start([]).items()), [])
    rules = compat.core_rules(mode, max_token_length)
    return _core.train_merges(wc, num, kw.get("min_frequency", 1), base=base, **rules)


words = st.dictionaries(
    st.binary(min_size=1, max_size=8).map(lambda b: bytes(x % 4 + 97 for x in b)),
    st.integers(1, 50),
    max_size=25,
)


@given(words, st.sampled_from(compat.COMPAT), st.sampled_from([None, 3, 4, 6]), st.integers(1, 3))
def test_rust_equals_reference_in_every_mode(counts, mode, max_token_length, min_frequency):
    if mode != "huggingface":
        max_token_length = None
    want = reference_quiet(counts, 60, mode, max_token_length, min_frequency)
    got = rust_merges(counts, 60, mode, max_token_length, min_frequency=min_frequency)
    assert got == want


def reference_quiet(counts, num, mode, max_token_length, min_frequency):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        return reference.train_from_counts(
            counts, num, min_frequency, compat=mode, max_token_length=max_token_length
        )


def test_training_twice_gives_the_same_tokenizer():
    docs = documents(40)
    for mode in compat.COMPAT:
        # The documents hold '<|endoftext|>' text and no special token is declared.
        with pytest.warns(bytepair.CorpusWarning, match="not a special token"):
            a = bytepair.train(docs, 900, compat=mode, progress=False)
        with pytest.warns(bytepair.CorpusWarning, match="not a special token"):
            b = bytepair.train(list(reversed(docs)), 900, compat=mode, progress=False)
        assert dict(a.vocab) == dict(b.vocab) and a.merges == b.merges, mode


def test_huggingface_counts_special_token_text_as_hf_does(tmp_path):
    # With a pattern that keeps "<pad>" whole, HF learns the special token's text, and the
    # merge that rebuilds it yields the special token's id (1), adding no token.
    # 8 merges make 7 new tokens (259 + 7 = 266 ids); asked for 267, both stop there.
    docs = ["<pad> hello"] * 50
    hf = hf_trained(docs, 267, pattern=r"\S+|\s+")
    with pytest.warns(TrainingWarning, match="after 7 of 8 new tokens"):
        tok = bytepair.train(
            docs, 267, SPECIALS, pattern=r"\S+|\s+", compat="huggingface", progress=False
        )
    want = json.loads(hf.to_str())["model"]
    assert "<pad>" in {a + b for a, b in want["merges"]}
    assert len(want["merges"]) == len(want["vocab"]) - 259 + 1
    got = saved_json(tok, tmp_path)["model"]
    assert got["merges"] == want["merges"]
    assert got["vocab"] == want["vocab"]
    assert tok.encode("<pad>", allowed_special="all") == [1] == hf.encode("<pad>").ids
