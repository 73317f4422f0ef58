"""Differential fuzzing (issue 7): the Rust trainer against bytepair.reference on random
small corpora, the Rust encoder against bytepair.reference and tiktoken on random Unicode
and random bytes, and damaged tokenizer files. `make fuzz` runs these with the `fuzz`
hypothesis profile; docs/fuzzing.md says how to reproduce a failure."""

from __future__ import annotations

import tempfile
import unicodedata
import warnings
from pathlib import Path

import bytepair
import pytest
import reference_files
from bytepair import reference
from bytepair.errors import DisallowedSpecialError, FormatError, SpecialTokenError, TrainingWarning
from conftest import corpus_sample
from hypothesis import assume, given
from hypothesis import strategies as st

PATTERNS = ("gpt2", "cl100k", "o200k")
SPECIALS = ["<|endoftext|>", "<|a|>", "<|a", "|>", "ab", "\xff", "é"]

# Text biased toward what the patterns and the merge loop treat specially: contractions,
# digits, runs of spaces and newlines, non-Latin scripts, and special-token fragments.
pieces = st.one_of(
    st.sampled_from(
        [
            "a",
            "b",
            "ab",
            "ba",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\t",
            "'s",
            "'LL",
            "12",
            "3456",
            "é",
            "中文",
            "ß",
            ".",
            "!?",
            "<|a|>",
            "<|endoftext|>",
            "<|",
            "|>",
            "\u00a0",
            "🙂",
            "\u0301",
        ]
    ),
    # Code points this Python's Unicode (unicodedata) leaves unassigned are left out: the
    # regex module and the core's tables may be newer and disagree on them (U+12550: N in
    # one, unassigned in the other). Lone surrogates (Cs) stay in.
    st.text(st.characters(exclude_categories=["Cn"]), max_size=4),
)
texts = st.lists(pieces, max_size=40).map("".join)
raw_bytes = st.lists(
    st.one_of(
        pieces.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(min_size=1, max_size=3)
    ),
    max_size=40,
).map(b"".join)


def assigned(data: bytes) -> bool:
    """No code point that is unassigned in this Python's Unicode (see `pieces`)."""
    return all(unicodedata.category(c) != "Cn" for c in data.decode("utf-8", "ignore"))


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        return f(*args, **kwargs)


def outcome(f, *args, **kwargs):
    """(kind, value): the result, or the error class and whether it names a token."""
    try:
        return "ok", quiet(f, *args, **kwargs)
    except (SpecialTokenError, DisallowedSpecialError) as e:
        return type(e).__name__, None


# -- training ----------------------------------------------------------------------------


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


# -- encoding ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained() -> dict[str, bytepair.Tokenizer]:
    """One small tokenizer per pattern, trained on a little of two corpora (with bad bytes),
    with special tokens that overlap and are prefixes of each other."""
    data = corpus_sample("en-prose", 30_000) + b"\xff\xfe\x80 " + corpus_sample("zh-prose", 10_000)
    specials = ["<|endoftext|>", "<|a|>", "<|a"]
    return {
        p: quiet(
            bytepair.train,
            [data],
            vocab_size=700,
            special_tokens=specials,
            pattern=p,
            progress=False,
        )
        for p in PATTERNS
    }


def reference_encoder(tok) -> reference.Encoder:
    return reference.Encoder(dict(tok.vocab), tok.merges, tok.special_tokens, tok.pattern)


@given(
    text=texts,
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


@given(text=texts, name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]))
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


# -- damaged tokenizer files ---------------------------------------------------------------


@pytest.fixture(scope="module")
def saved_files(trained) -> dict[str, bytes]:
    tok = trained["gpt2"]
    with tempfile.TemporaryDirectory() as d:
        tok.save(Path(d) / "tokenizer.json")
        tok.save(Path(d) / "t.tiktoken", format="tiktoken")
        tok.save(Path(d) / "gpt2", format="gpt2")
        return {
            name: (Path(d) / name).read_bytes()
            for name in ("tokenizer.json", "t.tiktoken", "gpt2/vocab.json", "gpt2/merges.txt")
        }


@given(
    name=st.sampled_from(["tokenizer.json", "t.tiktoken", "gpt2/vocab.json"]),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=3),
)
def test_fuzz_damaged_tokenizer_file_is_a_format_error_or_loads(
    trained, saved_files, name, cut, flips
):
    """A truncated or garbled file gives a FormatError naming the file, or (a byte flip
    that still spells a valid file) a tokenizer that round-trips text."""
    data = bytearray(saved_files[name][: max(0, int(len(saved_files[name]) * cut))])
    for where, value in flips:
        if data:
            data[min(len(data) - 1, int(len(data) * where))] = value
    with tempfile.TemporaryDirectory() as d:
        for other, content in saved_files.items():
            (Path(d) / other).parent.mkdir(exist_ok=True)
            (Path(d) / other).write_bytes(bytes(data) if other == name else content)
        target = Path(d) / name
        try:
            if name.endswith(".tiktoken"):
                tok = bytepair.Tokenizer.load(target, special_tokens=trained["gpt2"].special_tokens)
            else:
                tok = bytepair.Tokenizer.load(target.parent if "gpt2" in name else target)
        except FormatError as e:
            assert Path(name).name in str(e)
            return
    text = "Hello, wörld! 12345 中文"
    assert tok.decode(tok.encode_ordinary(text)) == text
