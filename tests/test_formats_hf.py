"""HuggingFace tokenizer.json: tokenizers and transformers load what bytepair writes and
encode identically; bytepair loads byte-level BPE files and refuses the rest."""

from __future__ import annotations

import copy
import json

import bytepair
import pytest
import regex
from bytepair import patterns
from bytepair.errors import FormatError
from bytepair.formats import gpt2
from bytepair.formats import huggingface as hf
from conftest import shared
from formats_data import SPECIAL, samples, tiktoken_file, trained
from tokenizers import Regex, Tokenizer, pre_tokenizers

BUILT_IN = {"gpt2": patterns.GPT2, "cl100k": patterns.CL100K, "o200k": patterns.O200K}


def _hf_ids(hf_tok, text):
    return hf_tok.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("name", BUILT_IN)
def test_split_regex_splits_like_tiktoken_on_every_corpus(name):
    # HF's regex engine is Oniguruma; bytepair's and tiktoken's is fancy-regex / `regex`.
    pattern = BUILT_IN[name]
    split = pre_tokenizers.Split(Regex(hf.hf_regex(pattern)), behavior="isolated", invert=False)
    for corpus, text in samples().items():
        text += "tail  \n\n  "  # whitespace at the very end: the `\s++$` branch
        assert [s for s, _ in split.pre_tokenize_str(text)] == regex.findall(pattern, text), corpus


def test_bytelevel_regex_is_the_gpt2_pattern():
    # GPT-2's tokenizer.json has no Split: ByteLevel(use_regex=true) applies HF's built-in
    # GPT-2 regex, which bytepair reads as the gpt2 pattern.
    bytelevel = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    for corpus, text in samples().items():
        text += "tail  \n\n  "
        pieces = [gpt2.to_bytes(s, "hf").decode() for s, _ in bytelevel.pre_tokenize_str(text)]
        assert pieces == regex.findall(patterns.GPT2, text), corpus


def test_possessive_interval_needs_the_rewrite():
    # Why hf_regex exists: Oniguruma reads `\p{N}{1,3}+` as `(?:\p{N}{1,3})+`.
    split = pre_tokenizers.Split(Regex(patterns.CL100K), behavior="isolated", invert=False)
    assert [s for s, _ in split.pre_tokenize_str("1894")] == ["1894"]
    assert regex.findall(patterns.CL100K, "1894") == ["189", "4"]


def test_custom_possessive_interval_is_refused():
    with pytest.raises(bytepair.PatternError, match="atomic group"):
        hf.hf_regex(r"\d{1,2}+|\D")


@pytest.mark.parametrize("name", BUILT_IN)
def test_tokenizers_loads_what_bytepair_writes_and_agrees(tmp_path, name):
    base = trained()
    tok = (
        base
        if name == "gpt2"
        else bytepair.Tokenizer(
            dict(base.vocab), base.merges, special_tokens=base.special_tokens, pattern=name
        )
    )
    tok.save(tmp_path / "tokenizer.json")
    doc = json.loads((tmp_path / "tokenizer.json").read_text("utf-8"))
    assert doc["model"]["merges"][0] == list(doc["model"]["merges"][0])  # ["a", "b"] pairs
    hf_tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf_tok.get_vocab_size() == tok.vocab_size
    for corpus, text in samples().items():
        text = text + SPECIAL + " the end"
        assert _hf_ids(hf_tok, text) == tok.encode(text, allowed_special="all"), corpus
    assert hf_tok.decode(tok.encode("héllo wörld"), skip_special_tokens=False) == "héllo wörld"


def test_transformers_loads_what_bytepair_writes(tmp_path):
    from transformers import PreTrainedTokenizerFast

    tok = trained()
    tok.save(tmp_path / "tokenizer.json")
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    assert len(fast) == tok.vocab_size
    for corpus, text in samples().items():
        text = text[:10_000]
        assert fast.encode(text, add_special_tokens=False) == tok.encode(
            text, allowed_special="all"
        ), corpus


def test_round_trip(tmp_path):
    tok = trained()
    tok.save(tmp_path / "tokenizer.json")
    back = bytepair.Tokenizer.load(tmp_path / "tokenizer.json")
    assert dict(back.vocab) == dict(tok.vocab)
    assert back.merges == tok.merges
    assert back.special_tokens == tok.special_tokens
    assert back.pattern == tok.pattern
    for text in samples().values():
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_rank_table_through_hf_matches_tiktoken(tmp_path, tiktoken_encoding):
    enc = tiktoken_encoding("cl100k_base")
    tok = tiktoken_file("cl100k_base")
    tok.save(tmp_path / "tokenizer.json")
    doc = json.loads((tmp_path / "tokenizer.json").read_text("utf-8"))
    assert doc["model"]["ignore_merges"] is True  # tiktoken's whole-pre-token shortcut
    hf_tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    back = bytepair.Tokenizer.load(tmp_path / "tokenizer.json")
    assert back.special_tokens == enc._special_tokens and back.pattern == enc._pat_str
    for corpus, text in samples().items():
        text = text[:20_000]
        expected = enc.encode(text, allowed_special="all")
        assert _hf_ids(hf_tok, text) == expected, corpus
        assert back.encode(text, allowed_special="all") == expected, corpus


def test_gpt2_tokenizer_json_matches_tiktoken_and_tokenizers(tiktoken_encoding):
    path = shared("fixtures", "tokenizers", "gpt2", "tokenizer.json")
    tok = bytepair.Tokenizer.load(path)
    assert tok.pattern == patterns.GPT2
    assert tok.special_tokens == {SPECIAL: 50256}
    enc = tiktoken_encoding("gpt2")
    hf_tok = Tokenizer.from_file(str(path))
    for corpus, text in samples().items():
        text = text[:20_000]
        expected = enc.encode(text, allowed_special="all")
        assert tok.encode(text, allowed_special="all") == expected, corpus
        assert _hf_ids(hf_tok, text) == expected, corpus
    # GPT-2's ids are its merge order, so it converts to tiktoken's own gpt2 ranks.
    assert tok.to_tiktoken()._mergeable_ranks == enc._mergeable_ranks


@pytest.mark.parametrize("use_regex", [True, False])
def test_bytepair_loads_what_tokenizers_trains(tmp_path, use_regex):
    from tokenizers import decoders, models, trainers

    hf_tok = Tokenizer(models.BPE())
    if use_regex:  # GPT-2's classic setup: ByteLevel with its own regex
        hf_tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        hf_tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(hf.hf_regex(patterns.O200K)), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    hf_tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=[SPECIAL],
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    hf_tok.train_from_iterator([t[:8_000] for t in samples().values()], trainer)
    hf_tok.save(str(tmp_path / "tokenizer.json"))
    tok = bytepair.Tokenizer.load(tmp_path / "tokenizer.json")
    assert tok.special_tokens == {SPECIAL: 0}
    assert tok.pattern == (patterns.GPT2 if use_regex else patterns.O200K)
    for corpus, text in samples().items():
        text = text[:20_000] + SPECIAL + "!"
        assert tok.encode(text, allowed_special="all") == _hf_ids(hf_tok, text), corpus


def test_reads_legacy_string_merges(tmp_path):
    doc = hf.to_json(trained())
    doc["model"]["merges"] = [" ".join(m) for m in doc["model"]["merges"]]
    del doc["model"]["type"]
    (tmp_path / "old.json").write_text(json.dumps(doc), "utf-8")
    assert bytepair.Tokenizer.load(tmp_path / "old.json").merges == trained().merges


def _minimal():
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    return hf.to_json(bytepair.Tokenizer(vocab, [(b"a", b"b")], special_tokens=["<s>"]))


def _set(path, value):
    def edit(doc):
        *head, last = path
        node = doc
        for key in head:
            node = node[key]
        node[last] = value
        return doc

    return edit


MALFORMED = [
    ("model WordPiece", _set(["model", "type"], "WordPiece"), "model.type is 'WordPiece'"),
    ("model Unigram", _set(["model", "type"], "Unigram"), "model.type is 'Unigram'"),
    ("model WordLevel", _set(["model", "type"], "WordLevel"), "model.type is 'WordLevel'"),
    ("no model", lambda d: {k: v for k, v in d.items() if k != "model"}, "missing key 'model'"),
    ("model not object", _set(["model"], []), "key 'model' is \\[\\]"),
    ("normalizer", _set(["normalizer"], {"type": "NFC"}), "normalizer 'NFC'"),
    ("whitespace", _set(["pre_tokenizer"], {"type": "Whitespace"}), "pre-tokenizer 'Whitespace'"),
    (
        "metaspace",
        _set(["pre_tokenizer"], {"type": "Metaspace", "replacement": "▁"}),
        "pre-tokenizer 'Metaspace'",
    ),
    ("no pre_tokenizer", _set(["pre_tokenizer"], None), "pre_tokenizer: expected an object"),
    (
        "prefix space",
        _set(["pre_tokenizer"], {"type": "ByteLevel", "add_prefix_space": True}),
        "add_prefix_space=true",
    ),
    (
        "double regex",
        _set(["pre_tokenizer", "pretokenizers", 1, "use_regex"], True),
        "use_regex=true after a Split",
    ),
    (
        "split removed",
        _set(["pre_tokenizer", "pretokenizers", 0, "behavior"], "Removed"),
        "behavior='Removed'",
    ),
    (
        "split string",
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"String": " "}),
        'expected \\{"Regex"',
    ),
    (
        "bad regex",
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": "(a"}),
        "invalid pattern regex",
    ),
    ("dropout", _set(["model", "dropout"], 0.1), "dropout=0.1"),
    ("byte fallback", _set(["model", "byte_fallback"], True), "byte_fallback"),
    ("suffix", _set(["model", "end_of_word_suffix"], "</w>"), "end_of_word_suffix"),
    ("decoder", _set(["decoder"], {"type": "WordPiece"}), "decoder"),
    ("one-token merge", _set(["model", "merges"], [["a"]]), r"merges\[0\]: \['a'\] is not a merge"),
    ("string merge", _set(["model", "merges"], ["a b c"]), r"merges\[0\]: 'a b c' is not a merge"),
    ("merge type", _set(["model", "merges"], [3]), r"merges\[0\]: 3"),
    ("unknown merge token", _set(["model", "merges"], [["a", "c"]]), "merge 0 .* needs b'ac'"),
    ("id type", _set(["model", "vocab", "ab"], "256"), "key 'ab' has id '256'"),
    ("duplicate id", _set(["model", "vocab", "ab"], 97), "key 'ab' reuses id 97"),
    ("not byte alphabet", _set(["model", "vocab", "a b"], 300), "not a character of GPT-2's"),
    ("missing byte", lambda d: (d["model"]["vocab"].pop("Ā"), d)[1], "lacks 1 single bytes"),
    (
        "non-special added",
        _set(["added_tokens", 0, "special"], False),
        "non-special added token '<s>'",
    ),
    ("lstrip", _set(["added_tokens", 0, "lstrip"], True), "lstrip=true"),
    ("added id type", _set(["added_tokens", 0, "id"], "x"), "key 'id' is 'x'"),
    ("vocab not object", _set(["model", "vocab"], []), "key 'vocab' is \\[\\]"),
]


@pytest.mark.parametrize(("case", "edit", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files_are_refused(tmp_path, case, edit, message):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(edit(copy.deepcopy(_minimal()))), "utf-8")
    with pytest.raises(FormatError, match=message) as err:
        bytepair.Tokenizer.load(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("text", ['{"model": {"type": "BPE"', "[1, 2]", '"model"', "{"])
def test_broken_json_is_refused(tmp_path, text):
    path = tmp_path / "tokenizer.json"
    path.write_text(text, "utf-8")
    with pytest.raises(FormatError, match=r"tokenizer.json"):
        bytepair.Tokenizer.load(path)


def test_overlapping_special_tokens_match_alike(tmp_path):
    # Both sides take the leftmost, then longest, special token.
    base = trained()
    specials = [SPECIAL, "<|end", "<|endoftext|>!", "oft"]
    tok = bytepair.Tokenizer(
        {i: b for i, b in base.vocab.items() if i not in base.special_tokens.values()},
        base.merges,
        special_tokens=specials,
    )
    tok.save(tmp_path / "tokenizer.json")
    hf_tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = "a<|endoftext|>!b<|endoftext|> <|end c soft<|endof"
    ids = tok.encode(text, allowed_special="all")
    assert _hf_ids(hf_tok, text) == ids
    assert [tok.decode([i]) for i in ids if i >= 599][:3] == ["<|endoftext|>!", SPECIAL, "<|end"]
