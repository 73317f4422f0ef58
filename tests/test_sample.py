"""Training on a sample of documents: bytepair.sample (reservoir sampling) and
bytepair.train(..., sample_documents=N, seed=S, document_separator=T).

The oracles: the documents cut by hand (bytes.split), Vitter's Algorithm R written out
from its definition with random.Random(seed), frequencies over many seeds (each document
in the sample with probability N/D, each N-subset equally likely), and
bytepair.reference's pure-Python counting and merge loop on exactly those documents.
"""

from __future__ import annotations

import importlib
import itertools
import json
import random
import tracemalloc
from collections import Counter

import bytepair
import pytest
from bytepair import documents, reference, sample
from bytepair.shards import Shard
from conftest import corpus_documents

EOT = "<|endoftext|>"


def _documents_by_hand(data: bytes, separator: bytes) -> list[bytes]:
    return [piece for piece in data.split(separator) if piece]


def _algorithm_r(items: list, n: int, seed: int) -> list:
    """Vitter's Algorithm R from its definition: the first n fill the reservoir; item i
    (from 0) then replaces slot j = randrange(i + 1) when j < n. Returned in input order."""
    rng = random.Random(seed)
    reservoir: list[tuple[int, object]] = []
    for i, item in enumerate(items):
        if i < n:
            reservoir.append((i, item))
        else:
            j = rng.randrange(i + 1)
            if j < n:
                reservoir[j] = (i, item)
    return [item for _, item in sorted(reservoir, key=lambda kept: kept[0])]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """120 multilingual documents of 3 lines (their own <|endoftext|> taken out),
    separated by <|endoftext|> and newlines (the TinyStories layout): 121 documents, the
    last one the newline after the last <|endoftext|>."""
    docs = [d.replace(EOT.encode(), b"") for d in corpus_documents("multilingual", 120, 3)]
    data = b"".join(doc + b"\n" + EOT.encode() + b"\n" for doc in docs)
    path = tmp_path_factory.mktemp("sample") / "corpus.txt"
    path.write_bytes(data)
    return path, data


def test_documents_are_the_pieces_between_separators(corpus):
    path, data = corpus
    everything = sample.sample([path], None, separator=EOT)
    expected = _documents_by_hand(data, EOT.encode())
    assert len(expected) == 121 and expected[-1] == b"\n"
    assert everything.documents() == expected
    assert everything.seen == len(everything) == 121


def test_n_at_least_the_documents_gives_all_of_them(corpus):
    path, data = corpus
    expected = _documents_by_hand(data, EOT.encode())
    for n in (121, 122, 10**9):
        got = sample.sample([path], n, seed=7, separator=EOT)
        assert got.documents() == expected and got.seen == 121
    assert len(sample.sample([path], 120, seed=7, separator=EOT).documents()) == 120


def test_the_sample_is_algorithm_r_with_the_seed(corpus):
    path, data = corpus
    docs = _documents_by_hand(data, EOT.encode())
    for seed in (0, 1, 12345):
        assert sample.sample([path], 17, seed=seed, separator=EOT).documents() == _algorithm_r(
            docs, 17, seed
        )


def test_same_seed_same_sample_different_seeds_differ(corpus):
    path, _ = corpus
    samples = [
        tuple(sample.sample([path], 10, seed=s, separator=EOT).documents()) for s in range(8)
    ]
    again = [tuple(sample.sample([path], 10, seed=s, separator=EOT).documents()) for s in range(8)]
    assert samples == again
    assert len(set(samples)) == 8  # C(121, 10) samples: 8 seeds colliding would be a bug
    assert all(len(s) == 10 and len(set(s)) == 10 for s in samples)  # without replacement


def test_each_document_and_each_subset_equally_likely():
    """10 documents, N=3, 6,000 seeds: each document is in 1,800 samples on average
    (sd 35.5), each of the C(10,3) = 120 subsets in 50. A sampler that favoured the first
    or last documents, or that drew with replacement, fails one of the bounds."""
    text = "|".join(f"doc{i}" for i in range(10))
    runs = 6000
    per_doc: Counter = Counter()
    per_subset: Counter = Counter()
    for seed in range(runs):
        docs = sample.sample([text], 3, seed=seed, separator="|").documents()
        assert len(set(docs)) == 3
        per_doc.update(docs)
        per_subset[tuple(docs)] += 1
    for i in range(10):
        assert abs(per_doc[f"doc{i}"] - 1800) < 180, per_doc  # 5 standard deviations
    subsets = list(itertools.combinations([f"doc{i}" for i in range(10)], 3))
    assert set(per_subset) == set(subsets)
    expected = runs / len(subsets)
    chi2 = sum((per_subset[s] - expected) ** 2 / expected for s in subsets)
    # 119 degrees of freedom: mean 119, sd 15.4; 220 is beyond 6.5 sd.
    assert chi2 < 220, chi2


def test_files_texts_and_byte_ranges_give_the_same_documents(corpus, tmp_path):
    path, data = corpus
    as_file = sample.sample([path], 30, seed=3, separator=EOT).documents()
    as_bytes = sample.sample([data], 30, seed=3, separator=EOT).documents()
    as_str = sample.sample([data.decode()], 30, seed=3, separator=EOT).documents()
    assert as_file == as_bytes == [d.encode() for d in as_str]
    # A byte range stops short of the file's end: its documents are the range's.
    end = data.index(EOT.encode(), len(data) // 2)
    shard = Shard(str(path), 0, end, len(data), 0)
    assert sample.sample([shard], None, separator=EOT).documents() == _documents_by_hand(
        data[:end], EOT.encode()
    )


def test_documents_across_files_and_texts_in_order(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"one|two")
    b.write_bytes(b"three|| |")
    got = sample.sample([a, b, "four|five", b"six"], None, separator="|")
    assert got.documents() == [b"one", b"two", b"three", b" ", "four", "five", b"six"]
    # No separator: each file and each text is one document.
    assert sample.sample([a, "x|y"], None).documents() == [b"one|two", "x|y"]


@pytest.mark.parametrize("read_bytes", [1, 2, 5, 13, 64])
def test_separators_across_reads_are_found(tmp_path, monkeypatch, read_bytes):
    """A file is read a block at a time: a separator cut by a block's end, separators side
    by side and a range starting or ending inside one still give bytes.split's pieces."""
    monkeypatch.setattr(sample, "READ_BYTES", read_bytes)
    data = b"ab<|endoftext|>c<|endoftext|><|endoftext|>def<|endoftext|>g<|endoftext" * 3
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    sep = EOT.encode()
    assert sample.sample([path], None, separator=EOT).documents() == _documents_by_hand(data, sep)
    for start, end in [(3, len(data)), (0, 40), (20, 71), (5, 5)]:
        got = sample.sample([Shard(str(path), start, end, len(data), 0)], None, separator=EOT)
        assert got.documents() == _documents_by_hand(data[start:end], sep), (start, end)


def _with_peak(call):
    """``call()`` and the peak of Python's traced memory while it ran."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_grows_with_n_not_with_the_corpus(tmp_path):
    """20,000 documents (about 2 MB) from a file and from a generator: the sample of 5
    holds a few kB, whatever the corpus; keeping every document would take megabytes."""
    doc = b"the quick brown fox jumps over the lazy dog " * 2
    path = tmp_path / "big.txt"
    path.write_bytes((doc + EOT.encode()) * 20_000)
    for source in ([path], (doc.decode() + f" {i}" for i in range(20_000))):
        got, peak = _with_peak(lambda s=source: sample.sample(s, 5, seed=1, separator=EOT))
        assert got.seen == 20_000 and len(got) == 5
        assert peak < 200_000, peak


def test_training_on_a_sample_holds_the_sample_not_the_corpus(tmp_path, monkeypatch):
    """train(sample_documents=5) streams an iterator's texts and a .jsonl file's documents
    through the sample: 18 MB of either (20,000 documents) peak at a few MB of Python
    memory (the corpus check's first 1 MB and a 64 kB chunk of the file), not 18 MB."""
    monkeypatch.setattr(documents, "CHUNK_BYTES", 64 << 10)
    doc = "the quick brown fox jumps over the lazy dog " * 20
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"text": f"{doc}{i}"}) + "\n" for i in range(20_000)))
    for corpus in ((f"{doc}{i}" for i in range(20_000)), path):
        tok, peak = _with_peak(
            lambda c=corpus: bytepair.train(c, 270, sample_documents=5, progress=False)
        )
        assert tok.training_report.documents_in_corpus == 20_000
        assert peak < 4_000_000, (corpus, peak)


def test_training_on_a_sample_equals_the_reference_on_those_documents(corpus):
    """bytepair.train(file, sample_documents=N, seed=S) learns exactly the merges that
    bytepair.reference learns from the documents Algorithm R picks."""
    path, data = corpus
    chosen = _algorithm_r(_documents_by_hand(data, EOT.encode()), 40, seed=5)
    counts: Counter = Counter()
    for doc in chosen:
        counts.update(reference.count_pretokens(doc, "gpt2", [EOT]))
    expected = reference.train_from_counts(counts, 200)

    tok = bytepair.train(
        [path], 457, special_tokens=[EOT], sample_documents=40, seed=5, progress=False
    )
    assert tok.merges == expected
    assert tok.training_report.documents == 40
    assert tok.training_report.documents_in_corpus == 121
    assert tok.training_report.seconds > 0 and tok.training_report.peak_memory_mb > 0
    # The same documents given as texts train the same tokenizer.
    direct = bytepair.train(iter(chosen), 457, special_tokens=[EOT], progress=False)
    assert direct.vocab == tok.vocab


def test_long_documents_counted_in_place_train_the_same(corpus, monkeypatch):
    """Sampled file documents of IN_PLACE_BYTES or more are counted in place (memory-
    mapped ranges), the rest read as texts: with the threshold inside the documents'
    sizes, both ways meet in one run and still give the reference's merges."""
    path, data = corpus
    docs = _documents_by_hand(data, EOT.encode())
    sizes = sorted(len(d) for d in docs)
    train_module = importlib.import_module("bytepair.trainer")
    monkeypatch.setattr(train_module, "IN_PLACE_BYTES", sizes[len(sizes) // 2])
    chosen = _algorithm_r(docs, 60, seed=11)
    assert len({len(d) >= train_module.IN_PLACE_BYTES for d in chosen}) == 2  # both ways
    counts: Counter = Counter()
    for doc in chosen:
        counts.update(reference.count_pretokens(doc, "gpt2", [EOT]))
    tok = bytepair.train(
        [path], 457, special_tokens=[EOT], sample_documents=60, seed=11, progress=False
    )
    assert tok.merges == reference.train_from_counts(counts, 200)


def test_all_documents_train_what_the_whole_corpus_trains(corpus):
    path, _ = corpus
    whole = bytepair.train([path], 500, special_tokens=[EOT], progress=False)
    sampled = bytepair.train(
        [path], 500, special_tokens=[EOT], sample_documents=10**6, progress=False
    )
    assert sampled.merges == whole.merges
    assert sampled.training_report.documents == 121
    assert whole.training_report.documents is None  # not cut into documents


def test_document_separator_that_is_not_a_special_token():
    texts = ["aa bb||aa bb||cc dd||aa bb"]
    tok = bytepair.train(
        texts, 258, document_separator="||", sample_documents=2, seed=0, progress=False
    )
    chosen = _algorithm_r(["aa bb", "aa bb", "cc dd", "aa bb"], 2, seed=0)
    counts: Counter = Counter()
    for doc in chosen:
        counts.update(reference.count_pretokens(doc.encode(), "gpt2", []))
    assert tok.merges == reference.train_from_counts(counts, 2)
    assert b"|" not in b"".join(a + b for a, b in tok.merges)  # the separator is cut out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sample_documents": 0}, "sample_documents must be None"),
        ({"sample_documents": -3}, "sample_documents must be None"),
        ({"sample_documents": True}, "sample_documents must be None"),
        ({"sample_documents": "5"}, "sample_documents must be None"),
        ({"sample_documents": 5, "seed": "x"}, "seed must be an int"),
        ({"sample_documents": 5, "document_separator": ""}, "must be a non-empty str"),
        ({"sample_documents": 5, "engine": "ray"}, "need engine='local'"),
    ],
)
def test_bad_sampling_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        bytepair.train(["a b"], 260, progress=False, **options)
