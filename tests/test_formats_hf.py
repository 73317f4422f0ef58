"""HuggingFace tokenizer.json: tokenizers and transformers load what bytepair writes and
encode identically; bytepair loads byte-level BPE files and refuses the rest."""

from __future__ import annotations

import copy
import json
import types

import bytepair
import pytest
import regex
from bytepair import patterns
from bytepair.errors import FormatError
from bytepair.formats import gpt2
from bytepair.formats import huggingface as hf
from conftest import shared
from formats_data import SPECIAL, samples, tiktoken_file, trained
from hypothesis import given
from hypothesis import strategies as st
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


def _pre(*steps):
    return _set(["pre_tokenizer"], {"type": "Sequence", "pretokenizers": list(steps)})


_BL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
_SPLIT = {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": False}


def _template(single, specials):
    return _set(
        ["post_processor"],
        {"type": "TemplateProcessing", "single": single, "special_tokens": specials},
    )


_BOS = {"SpecialToken": {"id": "<s>", "type_id": 0}}
_A = {"Sequence": {"id": "A", "type_id": 0}}


# (case, edit, message): each message names the JSON path of what is wrong.
def _added_entry(content, i):
    flags = dict.fromkeys(("single_word", "lstrip", "rstrip", "normalized", "special"), False)
    return {"id": i, "content": content, **flags}


MALFORMED = [
    ("model WordPiece", _set(["model", "type"], "WordPiece"), "model.type is 'WordPiece'"),
    ("model Unigram", _set(["model", "type"], "Unigram"), "model.type is 'Unigram'"),
    ("model WordLevel", _set(["model", "type"], "WordLevel"), "model.type is 'WordLevel'"),
    ("no model", lambda d: {k: v for k, v in d.items() if k != "model"}, "missing key 'model'"),
    ("model not object", _set(["model"], []), "key 'model' is \\[\\]"),
    (
        "unknown normalizer",
        _set(["normalizer"], {"type": "BertNormalizer"}),
        "normalizer.type: normalizer 'BertNormalizer' is not supported",
    ),
    (
        "unknown normalizer in a sequence",
        _set(
            ["normalizer"],
            {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Precompiled"}]},
        ),
        r"normalizer.normalizers\[1\].type: normalizer 'Precompiled'",
    ),
    ("normalizer not object", _set(["normalizer"], "NFC"), "normalizer: expected a normalizer"),
    ("normalizer no type", _set(["normalizer"], {}), "normalizer: missing key 'type'"),
    (
        "normalizers not a list",
        _set(["normalizer"], {"type": "Sequence", "normalizers": {}}),
        "normalizer: key 'normalizers' is \\{\\}; expected a JSON array",
    ),
    (
        "replace without content",
        _set(["normalizer"], {"type": "Replace", "pattern": {"String": "a"}}),
        "normalizer: missing key 'content'",
    ),
    (
        "replace bad regex",
        _set(["normalizer"], {"type": "Replace", "pattern": {"Regex": "("}, "content": ""}),
        "normalizer.pattern: invalid pattern regex",
    ),
    (
        "replace empty-matching regex",
        _set(["normalizer"], {"type": "Replace", "pattern": {"Regex": "x*"}, "content": "-"}),
        "normalizer.pattern: a Replace regex that matches the empty string",
    ),
    (
        "replace pattern kind",
        _set(["normalizer"], {"type": "Replace", "pattern": {"Glob": "*"}, "content": ""}),
        'normalizer.pattern: .*expected \\{"Regex"',
    ),
    (
        "strip flag type",
        _set(["normalizer"], {"type": "Strip", "strip_left": "yes", "strip_right": True}),
        "normalizer.strip_left is 'yes'; expected a JSON boolean",
    ),
    ("prepend missing", _set(["normalizer"], {"type": "Prepend"}), "missing key 'prepend'"),
    (
        "prepend type",
        _set(["normalizer"], {"type": "Prepend", "prepend": 1}),
        "key 'prepend' is 1; expected a JSON string",
    ),
    (
        "whitespace alone",
        _set(["pre_tokenizer"], {"type": "Whitespace"}),
        "pre_tokenizer: a pre-tokenizer without exactly one ByteLevel",
    ),
    (
        "unknown pre-tokenizer",
        _pre({"type": "BertPreTokenizer"}, _BL),
        r"pre_tokenizer.pretokenizers\[0\].type: pre-tokenizer 'BertPreTokenizer'",
    ),
    (
        "unicode scripts",
        _pre({"type": "UnicodeScripts"}, _BL),
        "pre-tokenizer 'UnicodeScripts' is not supported",
    ),
    ("no pre_tokenizer", _set(["pre_tokenizer"], None), "pre_tokenizer: expected an object"),
    (
        "bytelevel not last",
        _pre(_BL, _SPLIT),
        r"pretokenizers\[0\]: a pre-tokenizer without exactly one ByteLevel, as its last step",
    ),
    ("two bytelevels", _pre(_BL, _BL), "without exactly one ByteLevel"),
    (
        "split behavior",
        _pre(_SPLIT | {"behavior": "Sideways"}, _BL),
        r"pretokenizers\[0\].behavior: behavior 'Sideways' is not supported",
    ),
    (
        "split behavior type",
        _pre(_SPLIT | {"behavior": 3}, _BL),
        r"pretokenizers\[0\]: key 'behavior' is 3; expected a JSON string",
    ),
    (
        "split invert type",
        _pre(_SPLIT | {"invert": "no"}, _BL),
        r"pretokenizers\[0\].invert is 'no'; expected a JSON boolean",
    ),
    (
        "split string",
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Strings": " "}),
        'expected \\{"Regex"',
    ),
    (
        "split pattern type",
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": 5}),
        r"pretokenizers\[0\].pattern is 5; expected a JSON string",
    ),
    (
        "bad regex",
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": "(a"}),
        "invalid pattern regex",
    ),
    (
        "bytelevel flag type",
        _pre(_SPLIT, _BL | {"add_prefix_space": "no"}),
        r"pretokenizers\[1\].add_prefix_space is 'no'",
    ),
    (
        "digits flag type",
        _pre({"type": "Digits", "individual_digits": 1}, _BL),
        r"pretokenizers\[0\].individual_digits is 1; expected a JSON boolean",
    ),
    (
        "punctuation behavior",
        _pre({"type": "Punctuation", "behavior": "Nope"}, _BL),
        r"pretokenizers\[0\].behavior: behavior 'Nope'",
    ),
    (
        "metaspace scheme",
        _pre({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}, _BL),
        r"pretokenizers\[0\].prepend_scheme: prepend_scheme 'sometimes'",
    ),
    (
        "metaspace replacement",
        _pre({"type": "Metaspace", "replacement": "▁▁"}, _BL),
        r"pretokenizers\[0\].replacement: '▁▁'; expected one character",
    ),
    ("dropout", _set(["model", "dropout"], 0.1), "model.dropout: dropout=0.1"),
    ("byte fallback", _set(["model", "byte_fallback"], True), "model.byte_fallback"),
    ("suffix", _set(["model", "end_of_word_suffix"], "</w>"), "model.end_of_word_suffix"),
    (
        "ignore_merges type",
        _set(["model", "ignore_merges"], "yes"),
        "model.ignore_merges is 'yes'; expected a JSON boolean",
    ),
    ("truncation", _set(["truncation"], {"max_length": 8}), "truncation: truncation="),
    ("padding", _set(["padding"], {"strategy": "BatchLongest"}), "padding: padding="),
    ("decoder", _set(["decoder"], {"type": "WordPiece"}), "decoder.type: decoder 'WordPiece'"),
    (
        "decoder in a sequence",
        _set(["decoder"], {"type": "Sequence", "decoders": [_BL, {"type": "Fuse"}]}),
        r"decoder.decoders\[1\].type: decoder 'Fuse'",
    ),
    (
        "post-processor",
        _set(["post_processor"], {"type": "BertProcessing", "sep": ["</s>", 2]}),
        "post_processor.type: post-processor 'BertProcessing'",
    ),
    (
        "template names a missing token",
        _template([_BOS, _A], {}),
        r"post_processor.single\[0\]: the template names the special token '<s>'",
    ),
    (
        "template id not in vocab",
        _template([_BOS, _A], {"<s>": {"id": "<s>", "ids": [99999], "tokens": ["<s>"]}}),
        r"special_tokens\['<s>'\].ids\[0\]: id 99999 is not in the vocabulary",
    ),
    (
        "template single with B",
        _template([{"Sequence": {"id": "B", "type_id": 1}}], {}),
        "a single template has only A",
    ),
    ("template item", _template(["$A"], {}), r"single\[0\]: '\$A'; expected"),
    (
        "template sequence name",
        _template([{"Sequence": {"id": "C", "type_id": 0}}], {}),
        r"single\[0\].id: 'C'; a sequence is A or B",
    ),
    (
        "two templates",
        _set(
            ["post_processor"],
            {
                "type": "Sequence",
                "processors": [
                    {"type": "TemplateProcessing", "single": [_A], "special_tokens": {}},
                    {"type": "TemplateProcessing", "single": [_A], "special_tokens": {}},
                ],
            },
        ),
        "post_processor: two TemplateProcessing steps",
    ),
    ("one-token merge", _set(["model", "merges"], [["a"]]), r"merges\[0\]: \['a'\] is not a merge"),
    ("string merge", _set(["model", "merges"], ["a b c"]), r"merges\[0\]: 'a b c' is not a merge"),
    ("merge type", _set(["model", "merges"], [3]), r"merges\[0\]: 3"),
    ("unknown merge token", _set(["model", "merges"], [["a", "c"]]), "merge 0 .* needs b'ac'"),
    ("id type", _set(["model", "vocab", "ab"], "256"), "key 'ab' has id '256'"),
    ("duplicate id", _set(["model", "vocab", "ab"], 97), "key 'ab' reuses id 97"),
    ("not byte alphabet", _set(["model", "vocab", "a b"], 300), "not a character of GPT-2's"),
    ("missing byte", lambda d: (d["model"]["vocab"].pop("Ā"), d)[1], "lacks 1 single bytes"),
    (
        "added flag type",
        _set(["added_tokens", 0, "lstrip"], "x"),
        r"added_tokens\[0\].lstrip is 'x'; expected a JSON boolean",
    ),
    ("added id type", _set(["added_tokens", 0, "id"], "x"), "key 'id' is 'x'"),
    (
        "added id not HF's",
        _set(["added_tokens", 0, "id"], 300),
        r"added_tokens\[0\].id: '<s>' has id 300, but HuggingFace gives it 257",
    ),
    ("added empty", _set(["added_tokens", 0, "content"], ""), "empty added token"),
    (
        "added alias of a byte token",
        lambda d: (d["added_tokens"].append(_added_entry("é", 233)), d)[1],
        r"added_tokens\[1\]: the added token 'é', which is the model's token 'é'",
    ),
    (
        "added twice",
        lambda d: (d["added_tokens"].append(dict(d["added_tokens"][0])), d)[1],
        r"added_tokens\[1\]: '<s>' is listed twice",
    ),
    (
        "added not object",
        _set(["added_tokens", 0], "<s>"),
        r"added_tokens\[0\]: expected an object",
    ),
    ("vocab not object", _set(["model", "vocab"], []), "key 'vocab' is \\[\\]"),
    # the file's name, then the key: not "tokenizer.json.added_tokens"
    ("added not array", _set(["added_tokens"], {"<s>": 1}), r"\.json: added_tokens is \{"),
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


# Texts of a few tokens in GPT-2's alphabet, a few outside it, and merge lines built of them.
_TEXTS = st.sampled_from(["a", "b", "ab", "Ġ", "Ġa", "abĠ", "x y", "中", ""])
_MERGE = st.one_of(
    st.lists(_TEXTS, min_size=1, max_size=3),
    st.builds(lambda a, b: f"{a} {b}", _TEXTS, _TEXTS),
    _TEXTS,
    st.integers(0, 3),
)


def _merges_rule(merges, vocab: set[bytes]):
    """The merges the rule reads, or the start of the error it gives (``model.merges[n]``)."""
    out = []
    for n, m in enumerate(merges):
        here = f"model.merges[{n}]"
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list) and all(isinstance(p, str) for p in m):
            parts = m
        else:
            return f'{here}: {m!r}; expected "a b" or ["a", "b"]'
        if len(parts) != 2 or not all(parts):
            return f"{here}: {m!r} is not a merge; expected two tokens"
        for p in parts:
            if any(c not in gpt2.CHAR_TO_BYTE for c in p):
                return f"{here}: token {p!r} contains"
        out.append((gpt2.to_bytes(parts[0], ""), gpt2.to_bytes(parts[1], "")))
    for n, (a, b) in enumerate(out):
        for part in (a, b, a + b):
            if part not in vocab:
                return f"model: merge {n} ({a!r}, {b!r}) needs {part!r}"
    return out


@given(st.lists(_MERGE, max_size=6), st.sets(_TEXTS))
def test_merges_are_read_by_the_rule_property(tmp_path_factory, merges, vocab_texts):
    # The core reads the merges of the file's text as the rule says, or refuses the first
    # that breaks it with the rule's message.
    doc = _minimal()
    extra = sorted(t for t in vocab_texts if " " not in t and "中" not in t and len(t) > 1)
    for text in extra:
        doc["model"]["vocab"].setdefault(text, len(doc["model"]["vocab"]))
    doc["model"]["merges"] = merges
    path = tmp_path_factory.mktemp("merges") / "tokenizer.json"
    path.write_text(json.dumps(doc), "utf-8")
    vocab = {t.encode() if t == "<s>" else gpt2.to_bytes(t, "") for t in doc["model"]["vocab"]}
    want = _merges_rule(merges, vocab)
    try:
        got = bytepair.formats.load(path).merges
    except FormatError as e:
        assert isinstance(want, str), e
        assert str(e).startswith(f"{path}: {want}")
    else:
        assert got == want


@given(st.lists(st.tuples(st.binary(max_size=2), st.binary(max_size=2)), max_size=6))
def test_merges_checked_by_the_core_are_the_python_loops_property(merges):
    from bytepair.errors import VocabError
    from bytepair.vocab import checked_merges

    ranks = {bytes([b]): b for b in range(3)} | {b"\x00\x01": 3, b"\x01\x01\x01": 4}
    outcomes = []
    for table in (ranks, types.MappingProxyType(ranks)):  # the core's check, then the loop's
        try:
            outcomes.append(checked_merges(merges, table))
        except VocabError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


def test_add_prefix_space_is_not_dropped_by_the_other_formats(tmp_path):
    # GPT-2's tokenizer.json with ByteLevel's add_prefix_space: HF puts a space before the
    # text, which neither a rank file nor a vocab.json + merges.txt can say.
    doc = json.loads(shared("fixtures", "tokenizers", "gpt2", "tokenizer.json").read_text("utf-8"))
    doc["pre_tokenizer"]["add_prefix_space"] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), "utf-8")
    expected = _hf_ids(Tokenizer.from_file(str(path)), "Hello world")
    assert expected == _hf_ids(Tokenizer.from_file(str(path)), " Hello world")
    tok = bytepair.Tokenizer.load(path)
    assert tok.encode("Hello world") == expected
    for fmt in ("gpt2", "tiktoken", "tekken"):
        with pytest.raises(FormatError, match=r"add_prefix_space.*save it as huggingface"):
            tok.save(tmp_path / "out" / f"tok.{fmt}", format=fmt)
    assert not (tmp_path / "out").exists()


def test_a_template_is_dropped_by_the_rank_formats_with_a_warning(tmp_path):
    # GPT-2's tokenizer.json with a template that puts <|endoftext|> first: HF adds it only
    # with add_special_tokens; a rank file keeps every other id and says what it drops.
    doc = json.loads(shared("fixtures", "tokenizers", "gpt2", "tokenizer.json").read_text("utf-8"))
    eot = {"id": "<|endoftext|>", "type_id": 0}
    doc["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": eot}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": eot}, {"Sequence": {"id": "A", "type_id": 0}}],
        "special_tokens": {
            "<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256], "tokens": ["<|endoftext|>"]}
        },
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), "utf-8")
    hf_tok = Tokenizer.from_file(str(path))
    text = "Hello world, again"
    plain = hf_tok.encode(text, add_special_tokens=False).ids
    assert hf_tok.encode(text).ids == [50256, *plain]
    tok = bytepair.Tokenizer.load(path)
    out = tmp_path / "gpt2.tiktoken"
    with pytest.warns(bytepair.FormatWarning, match="post-processor template") as caught:
        tok.save(out, format="tiktoken")
    assert [w.filename for w in caught if "template" in str(w.message)] == [__file__]
    again = bytepair.Tokenizer.load(out, pattern="gpt2", special_tokens={"<|endoftext|>": 50256})
    assert again.encode(text) == plain
