"""SuperBPE (train(..., superword_transition=t)): stage 1 is plain BPE, stage 2 continues
from it with the superword pattern. Its first merges are plain BPE's, its later ones the
reference trainer's on the base's encoding, HF tokenizers encodes its tokenizer.json
identically, and held-out text takes fewer tokens than plain BPE at the same vocab."""

from __future__ import annotations

import warnings
from collections import Counter

import bytepair
import pytest
import regex
from bytepair import Tokenizer, _core, reference, superbpe
from bytepair.errors import TrainingWarning
from conftest import corpus_documents, corpus_sample

EOT = "<|endoftext|>"


def texts(name: str, count: int, lines: int) -> list[str]:
    docs = corpus_documents(name, count, lines)
    return [d.decode("utf-8", "replace").replace(EOT + "\n", "") for d in docs]


@pytest.fixture(scope="module")
def trained():
    docs = texts("tinystories", 80, 6)
    tok = bytepair.train(docs, 700, special_tokens=[EOT], superword_transition=500, progress=False)
    return docs, tok


def test_first_merges_are_plain_bpe_and_ids_follow_design(trained):
    docs, tok = trained
    plain = bytepair.train(docs, 500 + 1, special_tokens=[EOT], progress=False)
    assert tok.merges[:244] == plain.merges
    assert tok.vocab_size == 700 and tok.special_tokens == {EOT: 699}
    assert tok.pattern == superbpe.SUPERWORD_PATTERN
    assert all(tok._vocab[256 + i] == a + b for i, (a, b) in enumerate(tok.merges))


def reference_stage_two(docs: list[str], tok: Tokenizer, t: int) -> list[tuple[bytes, bytes]]:
    """The reference trainer's merges after the first ``t - 256`` of ``tok``, extending
    those on the superword pattern's pre-tokens."""
    stage1 = Tokenizer(
        reference.build_vocab(tok.merges[: t - 256], []), tok.merges[: t - 256], pattern="gpt2"
    )
    counts: Counter[bytes] = Counter()
    for d in docs:
        counts.update(reference.count_pretokens(d.encode(), superbpe.SUPERWORD_PATTERN, [EOT]))
    encoder = reference.Encoder(stage1._vocab, stage1._merges, {}, "gpt2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        return reference.train_from_counts(
            counts, tok.vocab_size - 1 - t, base=(dict(stage1._vocab), encoder._encode_piece)
        )


def test_stage_two_equals_the_reference_trainer_extending_stage_one(trained):
    docs, tok = trained
    want = reference_stage_two(docs, tok, 500)
    assert tok.merges[244:] == want
    assert any(b" " in a + b[1:] and regex.search(rb"\w \w", a + b) for a, b in want)


@pytest.mark.parametrize("name", ["en-prose", "zh-prose", "code", "multilingual"])
def test_stage_two_equals_the_reference_trainer_on_each_corpus(name):
    # Documents from across the corpus; stage two trains on their long pre-tokens cut where
    # no merge reaches (src/train/rare_cuts.rs), which must change no merge.
    docs = texts(name, 30, 8)
    tok = bytepair.train(docs, 900, special_tokens=[EOT], superword_transition=600, progress=False)
    assert tok.merges[344:] == reference_stage_two(docs, tok, 600)


def test_superword_pattern_splits_only_around_numbers():
    assert regex.findall(superbpe.SUPERWORD_PATTERN, "by the way, 1234567 and 89.\n") == [
        "by the way, ",
        "1",
        "234",
        "567",
        " and ",
        "89",
        ".\n",
    ]


def test_the_saved_pattern_picks_the_core_splitter_and_its_cuts(trained, tmp_path):
    # Only the core's hand-written superword splitter has safe cuts, where an ASCII digit
    # meets another ASCII byte (a custom regex has none, and the built-in patterns' cuts at
    # spaces fall inside its pieces): the string tokenizer.json saves, and the name, pick it.
    _, tok = trained
    tok.save(tmp_path / "tokenizer.json")
    saved = Tokenizer.load(tmp_path / "tokenizer.json").pattern
    assert saved == superbpe.SUPERWORD_PATTERN
    data = b"one two 12345 three"
    for pattern in (saved, "superword"):
        assert _core.safe_cuts(pattern, data, [1, 9]) == [8, 13]
        assert _core.split_pieces(pattern, data) == [b"one two ", b"12", b"345", b" three"]
    assert _core.safe_cuts(r"\S+|\s+", data, [1]) == [len(data)]


def test_files_and_streams_cut_at_digits_encode_as_one_text(trained, tmp_path):
    _, tok = trained
    # Past encode_file's 1 MB chunks, whose cuts are the pattern's safe cuts.
    text = corpus_sample("en-prose", 2_200_000).decode("utf-8", "replace")
    text += f"{EOT}in 1999, 12345 more\n" * 3
    want = tok.encode(text, allowed_special="all")
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size > 2 << 20
    n = tok.encode_file(path, tmp_path / "ids.npy", progress=False)
    import numpy

    assert numpy.load(tmp_path / "ids.npy").tolist() == want and n == len(want)
    parts = [text[i : i + 7_001] for i in range(0, len(text), 7_001)]
    assert list(tok.encode_iterable(parts, allowed_special="all")) == want


def test_hf_tokenizers_encodes_the_saved_file_identically(trained, tmp_path):
    from tokenizers import Tokenizer as HF

    _, tok = trained
    tok.save(tmp_path / "tokenizer.json")
    hf = HF.from_file(str(tmp_path / "tokenizer.json"))
    held = texts("tinystories", 40, 4) + texts("en-prose", 20, 4) + texts("code", 20, 4)
    for text in held:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text), text[:80]
    assert Tokenizer.load(tmp_path / "tokenizer.json").encode(held[0]) == tok.encode(held[0])


def test_held_out_text_takes_fewer_tokens_than_plain_bpe():
    train_docs = texts("tinystories", 300, 10)
    plain = bytepair.train(train_docs, 1000, progress=False)
    sup = bytepair.train(train_docs, 1000, superword_transition=850, progress=False)
    seen = {line for d in train_docs for line in d.splitlines()}
    held = [d for d in texts("tinystories", 61, 9) if not seen & set(d.splitlines())]
    assert len(held) > 20
    held = "".join(held)
    assert len(sup.encode(held)) < 0.95 * len(plain.encode(held))


def test_bad_options_are_refused_before_training():
    docs = ["a b c"]
    with pytest.raises(ValueError, match=r"between 256 .* and 300"):
        bytepair.train(docs, 300, superword_transition=300 + 1, progress=False)
    with pytest.raises(ValueError, match="compat='cs336' and no base"):
        bytepair.train(docs, 300, superword_transition=280, compat="rustbpe", progress=False)
    with pytest.raises(TypeError, match="must be an int"):
        bytepair.train(docs, 300, superword_transition="280", progress=False)
