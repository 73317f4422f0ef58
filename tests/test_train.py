"""bytepair.train and the Rust training core, checked against bytepair.reference (the
oracle) on every shared corpus and on fuzzed small corpora, the CS336 reference merges,
and small cases derived by hand; vocab_size's checks, the warnings and the training
report."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import bytepair
import pytest
import reference_files
from bytepair import _core, reference
from bytepair.errors import (
    CorpusError,
    PatternError,
    SpecialTokenError,
    TrainingWarning,
    VocabSizeError,
)
from conftest import CORPORA, corpus_documents, corpus_sample, reference_merges, shared
from fuzz_inputs import SPECIALS, assigned, outcome, quiet, raw_bytes, texts
from hypothesis import assume, given
from hypothesis import strategies as st

EOT = "<|endoftext|>"
PATTERNS = ("gpt2", "cl100k", "o200k")


def rust_counts(data: bytes, pattern: str, special_tokens=(), chunk_size=None) -> Counter:
    counter = _core.PretokenCounter(pattern, list(special_tokens), 2, chunk_size)
    counts = _core.PretokenCounts()
    counter.count_texts(counts, [data])
    return Counter(dict(counts.items()))


def rust_merges(counts: Counter, num_merges: int, min_frequency: int = 1):
    wc = _core.PretokenCounts()
    for word, n in counts.items():
        wc.add(word, n)
    return _core.train_merges(wc, num_merges, min_frequency)


def with_specials_and_bad_bytes(data: bytes) -> bytes:
    """Puts <|endoftext|> between some lines and invalid UTF-8 into others: a lone
    continuation byte, a truncated 3-byte sequence, 0xff, an overlong encoding."""
    bad = [b"\x80", b"\xe4\xb8", b"\xff", b"\xc0\xaf"]
    lines = data.split(b"\n")
    for i in range(0, len(lines), 7):
        lines[i] = lines[i] + bad[i % len(bad)] + b" x" + bad[(i + 1) % len(bad)]
    for i in range(3, len(lines), 11):
        lines[i] = lines[i] + EOT.encode()
    return b"\n".join(lines)


# -- identical to the reference on every shared corpus -------------------------------------


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("specials", [(), (EOT,)], ids=["plain", "eot"])
def test_counts_and_merges_equal_the_reference(corpus, pattern, specials):
    data = corpus_sample(corpus, 120_000)
    if specials:
        data = with_specials_and_bad_bytes(data)
    want_counts = reference.count_pretokens(data, pattern, specials)
    got_counts = rust_counts(data, pattern, specials)
    assert got_counts == want_counts
    # Tiny chunks: every cut the core takes must leave the counts unchanged.
    assert rust_counts(data, pattern, specials, chunk_size=64) == want_counts
    assert rust_merges(got_counts, 400) == reference.train_from_counts(want_counts, 400)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_files_texts_and_reference_count_the_same(tmp_path, pattern):
    data = with_specials_and_bad_bytes(corpus_sample("multilingual", 80_000))
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    want = reference.count_pretokens(data, pattern, [EOT])
    for chunk_size in (None, 1, 300):
        counter = _core.PretokenCounter(pattern, [EOT], 2, chunk_size)
        from_file, from_text = _core.PretokenCounts(), _core.PretokenCounts()
        counter.count_files(from_file, [str(path)])
        counter.count_texts(from_text, [data])
        assert Counter(dict(from_file.items())) == want
        assert Counter(dict(from_text.items())) == want


@pytest.mark.parametrize("pattern", PATTERNS)
def test_byte_ranges_of_files_count_like_those_bytes(tmp_path, pattern):
    """A Shard (a byte range of a file) is counted in place, as its own document: like the
    reference on exactly those bytes, cut anywhere (mid-character too)."""
    from bytepair.shards import Shard

    data = with_specials_and_bad_bytes(corpus_sample("multilingual", 80_000))
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    ranges = [(0, len(data)), (1, 40_001), (12_345, 12_346), (70_000, 70_000)]
    for chunk_size in (None, 300):
        counter = _core.PretokenCounter(pattern, [EOT], 2, chunk_size)
        got = _core.PretokenCounts()
        counter.count_files(got, [str(path)] * len(ranges), ranges=ranges)
        want = Counter()
        for a, b in ranges:
            want.update(reference.count_pretokens(data[a:b], pattern, [EOT]))
        assert Counter(dict(got.items())) == +want
    with pytest.raises(ValueError, match="2 ranges for 1 paths"):
        counter.count_files(_core.PretokenCounts(), [str(path)], ranges=[(0, 1), (1, 2)])
    # Through bytepair.train: the same merges as training on a copy of the range.
    copy = tmp_path / "copy.txt"
    copy.write_bytes(data[:40_000])
    part = Shard(str(path), 0, 40_000, len(data), 0)
    # No special tokens here: both runs warn that <|endoftext|> is learned as text.
    with pytest.warns(bytepair.CorpusWarning, match=r"'<\|endoftext\|>' \d+ times"):
        on_range = bytepair.train([part], vocab_size=400, pattern=pattern, progress=False)
        on_copy = bytepair.train([str(copy)], vocab_size=400, pattern=pattern, progress=False)
    assert on_range.merges == on_copy.merges
    with pytest.raises(bytepair.CorpusError, match="not within"):
        bytepair.train([Shard(str(path), 5, len(data) + 1, 0, 0)], vocab_size=300, progress=False)


def test_custom_pattern_equals_the_reference():
    data = with_specials_and_bad_bytes(corpus_sample("code", 60_000))
    pattern = r"\w+|\s+|[^\w\s]+"
    want = reference.count_pretokens(data, pattern, [EOT])
    assert rust_counts(data, pattern, [EOT]) == want
    assert rust_counts(data, pattern, [EOT], chunk_size=50) == want


# -- the CS336 reference output ------------------------------------------------------------


def gpt2_bytes(token: str) -> bytes:
    """Inverts GPT-2's bytes-to-unicode: printable bytes stand for themselves, the other
    68 take code points 256, 257, ... in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in printable]
    table.update({chr(256 + n): b for n, b in enumerate(others)})
    return bytes(table[ch] for ch in token)


def test_train_bpe_reproduces_the_cs336_reference_merges():
    lines = shared("fixtures", "cs336", "train-bpe-reference-merges.txt").read_text("utf-8")
    want = [tuple(gpt2_bytes(t) for t in line.split(" ")) for line in lines.splitlines()]
    vocab, merges = bytepair.train_bpe(
        shared("fixtures", "cs336", "corpus.en"), 500, [EOT], progress=False
    )
    assert merges == want
    assert vocab == reference.build_vocab(want, [EOT])
    assert vocab[499] == EOT.encode()


def test_training_twice_gives_identical_output():
    path = shared("fixtures", "cs336", "corpus.en")
    first = pickle.dumps(bytepair.train_bpe(path, 700, [EOT], progress=False))
    second = pickle.dumps(bytepair.train_bpe(path, 700, [EOT], threads=1, progress=False))
    assert first == second


# -- random small corpora ------------------------------------------------------------------

corpus_text = st.lists(
    st.one_of(
        st.sampled_from(
            ["a", "b", "ab", " ", "  ", "\n", "\n\n", "'s", "1", "23", "é", "中", ".", "!"]
        ),
        st.binary(min_size=1, max_size=2),
    ),
    max_size=60,
).map(lambda parts: b"".join(p if isinstance(p, bytes) else p.encode() for p in parts))


@given(
    data=corpus_text,
    pattern=st.sampled_from(PATTERNS),
    specials=st.sampled_from([(), ("ab",), ("<|x|>", "a")]),
    num_merges=st.integers(0, 40),
    min_frequency=st.integers(1, 3),
    chunk_size=st.sampled_from([None, 1, 5]),
)
def test_property_core_equals_reference(
    data, pattern, specials, num_merges, min_frequency, chunk_size
):
    want_counts = reference.count_pretokens(data, pattern, specials)
    assert rust_counts(data, pattern, specials, chunk_size) == want_counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        want = reference.train_from_counts(want_counts, num_merges, min_frequency)
    assert rust_merges(want_counts, num_merges, min_frequency) == want


@given(st.dictionaries(st.binary(min_size=1, max_size=6), st.integers(1, 2**40), max_size=30))
def test_property_merges_equal_the_reference_for_any_counts(counts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        want = reference.train_from_counts(counts, 30)
    assert rust_merges(Counter(counts), 30) == want


# -- random corpora, fuzzed ----------------------------------------------------------------


@given(
    docs=st.lists(
        st.one_of(texts.map(lambda t: t.encode("utf-8", "surrogatepass")), raw_bytes),
        min_size=0,
        max_size=4,
    ),
    pattern=st.sampled_from(PATTERNS),
    specials=st.lists(st.sampled_from(SPECIALS), max_size=3, unique=True),
    extra=st.integers(0, 60),
)
def test_fuzz_train_equals_reference(docs, pattern, specials, extra):
    """bytepair.train on a file and on texts (each text its own document) against the
    reference's count + merge loop + vocab."""
    vocab_size = 256 + len(specials) + extra
    data = b"".join(docs)
    assume(assigned(data))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "corpus.txt"
        path.write_bytes(data)
        want = outcome(
            reference_files.train_bpe, path, vocab_size, specials, pattern, num_processes=1
        )
        got = outcome(bytepair.train_bpe, path, vocab_size, specials, pattern, progress=False)
    assert got == want
    counts: dict[bytes, int] = {}
    for doc in docs:
        for word, n in reference.count_pretokens(doc, pattern, specials).items():
            counts[word] = counts.get(word, 0) + n
    merges = quiet(reference.train_from_counts, counts, extra)
    got = outcome(bytepair.train, docs, vocab_size, specials, pattern, progress=False)
    if got[0] == "ok":
        assert got[1].merges == merges
        assert dict(got[1].vocab) == reference.build_vocab(merges, specials)


# -- hand-derived cases --------------------------------------------------------------------


def test_counts_past_2_to_the_32_keep_the_order():
    # (a, b) occurs 2^32 + 1 times: a 32-bit count would wrap to 1 and lose to (c, d).
    assert rust_merges(Counter({b"ab": 2**32 + 1, b"cd": 10}), 2) == [(b"a", b"b"), (b"c", b"d")]


def test_each_text_is_its_own_document():
    # Together "a\n" + "\nb" would hold the pre-token "\n\n"; apart they never do.
    with pytest.warns(TrainingWarning, match="after 0 of 1 merges"):
        tok = bytepair.train(["a\n", "\nb"], vocab_size=257, progress=False)
    assert tok.merges == []
    counter = _core.PretokenCounter("gpt2", [])
    counts = _core.PretokenCounts()
    counter.count_texts(counts, ["x\n", "\n y", b"\xff"])
    assert dict(counts.items()) == {b"x": 1, b"\n": 2, b" y": 1, b"\xff": 1}


def test_train_accepts_paths_texts_and_generators(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("low low lower lowest")
    want = [(b"o", b"w"), (b"l", b"ow")]  # (o,w) ties (l,o) at 4; "o" > "l"
    kwargs = dict(vocab_size=258, progress=False)
    assert bytepair.train(path, **kwargs).merges == want
    assert bytepair.train(str(path), **kwargs).merges == want
    assert bytepair.train([path], **kwargs).merges == want
    assert bytepair.train([str(path)], **kwargs).merges == want
    assert bytepair.train(["low low lower lowest"], **kwargs).merges == want
    assert bytepair.train((t for t in ["low low lower lowest"]), **kwargs).merges == want
    vocab, merges = bytepair.train_bpe(path, 258, progress=False)
    assert merges == want and vocab[256] == b"ow" and vocab[257] == b"low"


def test_lone_surrogates_count_as_their_bytes():
    text = b"caf\xe9 caf\xe9".decode("utf-8", "surrogateescape")
    counter = _core.PretokenCounter("gpt2", [])
    counts = _core.PretokenCounts()
    counter.count_texts(counts, [text])
    assert dict(counts.items()) == reference.count_pretokens(b"caf\xe9 caf\xe9")


def test_pretoken_counts_merge_and_serialize():
    a, b = _core.PretokenCounts(), _core.PretokenCounts()
    a.add(b"the", 3)
    b.add(b"the", 2)
    b.add(b"\xff", 2**40)
    a.merge(b)
    assert a.items() == [(b"the", 5), (b"\xff", 2**40)]
    assert len(a) == 2 and a.total() == 5 + 2**40 and a.get(b"nope") == 0
    again = _core.PretokenCounts.from_bytes(a.to_bytes())
    assert again.items() == a.items() and again.to_bytes() == a.to_bytes()
    with pytest.raises(ValueError, match="truncated"):
        _core.PretokenCounts.from_bytes(a.to_bytes()[:-1])


def test_a_raising_progress_callback_stops_the_work(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"hello world\n" * 1000)

    def stop(done, total):
        raise RuntimeError(f"stop at {done}/{total}")

    counter = _core.PretokenCounter("gpt2", [])
    with pytest.raises(RuntimeError, match="stop at"):
        counter.count_files(_core.PretokenCounts(), [str(path)], progress=stop)
    counts = _core.PretokenCounts()
    counts.add(b"abc", 5)
    with pytest.raises(RuntimeError, match="stop at"):
        _core.train_merges(counts, 10, progress=stop)


# -- errors and warnings -------------------------------------------------------------------


def test_too_few_pairs_warns_with_the_number_learned():
    with pytest.warns(TrainingWarning, match=r"after 2 of 10 merges"):
        tok = bytepair.train(["abc"], vocab_size=266, progress=False)
    assert tok.merges == [(b"b", b"c"), (b"a", b"bc")]
    with pytest.warns(TrainingWarning, match="min_frequency=3"):
        bytepair.train(["ab ab ab cd cd"], vocab_size=300, min_frequency=3, progress=False)


def test_early_stop_warning_suggests_what_can_help():
    with pytest.warns(TrainingWarning) as seen:
        bytepair.train(["ab ab"], 300, progress=False)
    message = str(seen[0].message)
    assert "lower min_frequency" not in message and "smaller vocab_size" in message
    with pytest.warns(TrainingWarning, match="lower min_frequency"):
        bytepair.train(["ab ab cd cd cd"], 300, min_frequency=3, progress=False)


def test_bad_arguments_raise_typed_errors(tmp_path):
    with pytest.raises(VocabSizeError, match="at least 257"):
        bytepair.train(["abc"], vocab_size=256, special_tokens=[EOT], progress=False)
    with pytest.raises(VocabSizeError, match="must be an int"):
        bytepair.train(["abc"], vocab_size=300.0, progress=False)
    with pytest.raises(SpecialTokenError, match="given twice"):
        bytepair.train(["abc"], vocab_size=300, special_tokens=[EOT, EOT], progress=False)
    with pytest.raises(SpecialTokenError, match="same bytes as a regular token"):
        bytepair.train(["abc"], vocab_size=300, special_tokens=["a"], progress=False)
    with pytest.raises(SpecialTokenError, match="list of strings"):
        bytepair.train(["abc"], vocab_size=300, special_tokens=EOT, progress=False)
    with pytest.raises(PatternError, match="gtp2"):
        bytepair.train(["abc"], vocab_size=300, pattern="gtp2", progress=False)
    with pytest.raises(PatternError, match=r"unclosed|missing"):
        bytepair.train(["abc"], vocab_size=300, pattern="(a", progress=False)
    missing = tmp_path / "missing.txt"
    with pytest.raises(CorpusError, match=r"missing\.txt"):
        bytepair.train(missing, vocab_size=300, progress=False)
    with pytest.raises(CorpusError, match="directory"):
        bytepair.train_bpe(tmp_path, 300, progress=False)
    with pytest.raises(CorpusError, match="int"):
        bytepair.train([1, 2], vocab_size=300, progress=False)
    with pytest.raises(ValueError, match="min_frequency"):
        bytepair.train(["abc"], vocab_size=300, min_frequency=0, progress=False)
    assert issubclass(CorpusError, OSError) and isinstance(missing, Path)


@pytest.mark.parametrize("corpus", [["/no/such/dir/corpus.txt"], ["corpus-typo.txt"]])
def test_a_missing_corpus_path_is_an_error_not_text(corpus, tmp_path, monkeypatch):
    # Strings that look like file names must not be trained on as their own text.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        bytepair.CorpusError, match="does not exist; to train on these strings as text"
    ):
        bytepair.train(corpus, vocab_size=300, progress=False)


@pytest.mark.parametrize("text", ["the cat sat on the mat", "a [story]\n<|endoftext|>\n" * 5000])
def test_one_text_in_place_of_a_path_says_to_pass_a_list(text, tmp_path, monkeypatch):
    # The Qwen3.5 tutorial's loader returns the sampled documents joined into one str: a
    # user hands that to train. It is no file name (spaces, newlines, 130 KB), so the error
    # says how to train on it, and quotes only its start, not 130 KB of it.
    monkeypatch.chdir(tmp_path)
    for train in (bytepair.train, bytepair.train_bpe):
        with pytest.raises(bytepair.CorpusError, match=r"pass a list of texts") as e:
            train(text, 300, ["<|endoftext|>"], progress=False)
        assert len(str(e.value)) < 400


def test_one_missing_path_among_files_is_named(tmp_path):
    good = tmp_path / "a.txt"
    good.write_text("hello world")
    with pytest.raises(bytepair.CorpusError, match=r"b\.txt"):
        bytepair.train([str(good), str(tmp_path / "b.txt")], vocab_size=300, progress=False)


def test_train_bpe_given_a_glob_that_matches_says_how_many_files(tmp_path):
    """train_bpe takes one file: a glob that matches two is refused as such, not said to
    match no files."""
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("hello world")
    with pytest.raises(bytepair.CorpusError, match=r"is a glob that matches 2 files.*train"):
        bytepair.train_bpe(str(tmp_path / "*.txt"), 300, progress=False)
    with pytest.raises(bytepair.CorpusError, match="matches no files"):
        bytepair.train_bpe(str(tmp_path / "*.zzz"), 300, progress=False)


def test_sentences_are_texts():
    tok = bytepair.train(["the cat sat", "on the mat"] * 5, vocab_size=260, progress=False)
    assert tok.decode(tok.encode("the cat")) == "the cat"


def test_consuming_the_counts_gives_the_same_merges_and_empties_them():
    counts = reference.count_pretokens(corpus_sample("tinystories", 50_000))
    wc = _core.PretokenCounts()
    for word, n in counts.items():
        wc.add(word, n)
    kept = _core.train_merges(wc, 200)
    assert len(wc) == len(counts)
    consumed = _core.train_merges(wc, 200, consume=True)
    assert consumed == kept == reference.train_from_counts(counts, 200)
    assert len(wc) == 0


# -- vocab_size ----------------------------------------------------------------------------


def test_vocab_size_larger_than_the_corpus_supports_warns_with_the_number_learned():
    data = b"the cat sat on the mat with the hat"
    learned = len(reference_merges(data, 10_000, [EOT]))
    assert 0 < learned < 100
    with pytest.warns(TrainingWarning, match=rf"after {learned} of {10_000 - 257} merges"):
        t = bytepair.train([data], vocab_size=10_000, special_tokens=[EOT], progress=False)
    assert len(t.merges) == learned
    assert t.vocab_size == 256 + learned + 1
    assert t.special_tokens == {EOT: 256 + learned}


@pytest.mark.parametrize(
    ("vocab_size", "special_tokens", "match"),
    [
        (255, [], "at least 256"),
        (256, [EOT], "at least 257"),
        (0, [], "at least 256"),
        (-5, [], "at least 256"),
        (300.0, [], "must be an int"),
        ("300", [], "must be an int"),
    ],
)
def test_vocab_size_too_small_or_not_an_int(tmp_path, vocab_size, special_tokens, match):
    path = tmp_path / "c.txt"
    path.write_text("hello hello")
    with pytest.raises(VocabSizeError, match=match):
        bytepair.train(
            ["hello hello"], vocab_size=vocab_size, special_tokens=special_tokens, progress=False
        )
    with pytest.raises(VocabSizeError, match=match):
        bytepair.train_bpe(path, vocab_size, special_tokens, progress=False)


@pytest.mark.parametrize(
    "options",
    [{}, {"superword_transition": 300}, {"base": "base"}],
    ids=["plain", "superbpe", "base"],
)
def test_vocab_size_past_the_cores_id_limit_raises_before_training(tmp_path, options):
    # The core takes ids below 2**26 (src/encode/build.rs); the merge list of a larger
    # vocab_size is allocated up front, and its failure aborts the process.
    path = tmp_path / "c.txt"
    path.write_text("hello world")
    if "base" in options:
        options = {"base": bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])}
    for vocab_size in (10**9, 2**26 + 1):
        with pytest.raises(VocabSizeError, match=r"too large: .* at most 67,108,864"):
            bytepair.train(["hello world"], vocab_size=vocab_size, progress=False, **options)
    with pytest.raises(VocabSizeError, match="at most 67,108,864"):
        bytepair.train_bpe(path, 10**12, progress=False)


def test_vocab_size_of_exactly_the_bytes_and_specials_learns_nothing_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = bytepair.train(["hello hello"], vocab_size=257, special_tokens=[EOT], progress=False)
    assert t.merges == [] and t.special_tokens == {EOT: 256}


# -- the training report -------------------------------------------------------------------


def test_train_reports_time_and_peak_memory(caplog):
    with caplog.at_level("INFO", logger="bytepair"):
        tok = bytepair.train([corpus_sample("en-prose", 20_000)], 300, progress=False)
    report = tok.training_report
    assert 0 < report.seconds < 60
    assert report.peak_memory_mb > 10  # a Python process with NumPy loaded
    assert report.documents is None
    assert re.fullmatch(r"trained in [\d.]+ s, peak memory [\d,]+ MB", caplog.messages[-1])


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's /proc only")
def test_the_peak_memory_is_the_trainings_not_the_processs():
    # 300 MB held and freed before training: the process's peak keeps them, the training's
    # (a few words) is the size of the Python process with bytepair loaded.
    script = (
        "import bytepair\n"
        "held = b'x' * 300_000_000\n"
        "del held\n"
        "tok = bytepair.train(['the cat sat on the mat'] * 9, 260, progress=False)\n"
        "print(tok.training_report.peak_memory_mb, tok.training_report.peak_memory_of)\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    peak, of = out.stdout.split()
    assert 5 < float(peak) < 200 and of == "training"


def test_a_peak_memory_that_cannot_be_reset_is_labelled_the_processs(monkeypatch):
    from bytepair import training_report

    monkeypatch.setattr(training_report, "_reset_vm_hwm", lambda: False)
    monkeypatch.setattr(training_report, "_vm_hwm_mb", lambda: 440.0)  # a peak from before
    with pytest.warns(TrainingWarning):
        tok = bytepair.train(["ab"], 300, progress=False)
    report = tok.training_report
    assert report.peak_memory_of == "process" and report.peak_memory_mb == 440.0
    assert str(report).endswith("peak memory 440 MB (the process's, since it started)")
    # A peak that rose during the work is the work's, reset or not.
    highs = iter([440.0, 500.0])
    monkeypatch.setattr(training_report, "_vm_hwm_mb", lambda: next(highs))
    peak = training_report.PeakMemory()
    assert peak.mb() == 500.0 and not peak.of_process
    monkeypatch.setattr(training_report, "_vm_hwm_mb", lambda: None)  # not Linux
    peak = training_report.PeakMemory()
    assert peak.of_process and peak.mb() == training_report.peak_memory_mb()


def test_jsonl_parquet_directories_and_globs_train_as_their_documents(tmp_path):
    """A .jsonl/.parquet file trains as the list of its documents (each its own text),
    a directory or glob as its files, sorted; text_field names the field."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = [d.decode() for d in corpus_documents("tinystories", 60, 6)]
    src = tmp_path / "corpus"
    src.mkdir()
    with open(src / "a.jsonl", "w", encoding="utf-8") as f:
        for d in docs[:30]:
            f.write(json.dumps({"body": d}) + "\n")
    pq.write_table(pa.table({"body": docs[30:50]}), src / "b.parquet", row_group_size=6)
    (src / "c.txt").write_text("".join(docs[50:]), encoding="utf-8")
    kw = dict(vocab_size=400, special_tokens=[EOT], progress=False)
    want = bytepair.train(iter([*docs[:50], "".join(docs[50:])]), **kw).merges
    assert bytepair.train(src, text_field="body", **kw).merges == want
    assert bytepair.train(str(src / "*"), text_field="body", **kw).merges == want
    jsonl_only = bytepair.train(iter(docs[:30]), **kw).merges
    assert bytepair.train(src / "a.jsonl", text_field="body", **kw).merges == jsonl_only
    with pytest.raises(CorpusError, match=r"a\.jsonl:1: no field 'text'; the object has 'body'"):
        bytepair.train(src / "a.jsonl", **kw)


def test_the_ray_engine_refuses_jsonl_even_inside_a_directory(tmp_path):
    """engine='ray' counts plain text: a .jsonl it would count as text is refused, named
    directly or found inside a directory."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.jsonl").write_text('{"text": "x"}\n')
    for corpus in (tmp_path / "d" / "a.jsonl", tmp_path / "d", [str(tmp_path / "d" / "*")]):
        with pytest.raises(ValueError, match="engine='ray' counts plain-text files"):
            bytepair.train(corpus, 300, engine="ray", progress=False)
