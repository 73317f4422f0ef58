"""GPT-2 vocab.json + merges.txt: lossless for every byte, validated on read."""

from __future__ import annotations

import json
import os
import re

import bytepair
import pytest
import regex
from bytepair import patterns
from bytepair.errors import FormatError
from bytepair.formats import gpt2
from conftest import EOT, corpus_sample, shared
from formats_data import SPECIAL, samples, tiktoken_file, trained
from hypothesis import given
from hypothesis import strategies as st


def test_alphabet_is_a_bijection_of_printable_characters():
    chars = list(gpt2.BYTE_TO_CHAR.values())
    assert len(set(chars)) == 256
    assert all(c.isprintable() and not c.isspace() for c in chars)
    assert gpt2.to_bytes(gpt2.to_text(bytes(range(256))), "x") == bytes(range(256))


def test_alphabet_matches_gpt2_encoder_json():
    # GPT-2's own encoder.json lists the 256 byte characters as ids 0..255 in its order.
    encoder = json.loads(shared("fixtures", "cs336", "gpt2_vocab.json").read_text("utf-8"))
    singles = {gpt2.to_bytes(t, "encoder.json"): i for t, i in encoder.items() if len(t) == 1}
    assert len(singles) == 256
    assert gpt2.to_bytes("Ġthe", "x") == b" the" and encoder["Ġthe"] == 262


def test_reads_gpt2_files_and_encodes_like_tiktoken(tiktoken_encoding):
    vocab, merges = gpt2.read(
        shared("fixtures", "cs336", "gpt2_vocab.json"),
        shared("fixtures", "tiktoken", "gpt2_vocab.bpe"),  # with its #version line
    )
    assert len(vocab) == 50257 and len(merges) == 50000
    tok = bytepair.Tokenizer.from_files(
        shared("fixtures", "cs336", "gpt2_vocab.json"),
        shared("fixtures", "cs336", "gpt2_merges.txt"),  # without it
        special_tokens=[SPECIAL],
    )
    enc = tiktoken_encoding("gpt2")
    for text in samples().values():
        assert tok.encode(text[:20_000], allowed_special="all") == enc.encode(
            text[:20_000], allowed_special="all"
        )


def test_round_trip(tmp_path):
    tok = trained()
    tok.save(tmp_path / "out", format="gpt2")
    merges_txt = (tmp_path / "out" / "merges.txt").read_text("utf-8")
    assert merges_txt.startswith("#version: 0.2\n")
    back = bytepair.Tokenizer.load(tmp_path / "out")
    assert dict(back.vocab) == dict(tok.vocab)
    assert back.merges == tok.merges
    assert back.special_tokens == tok.special_tokens == {SPECIAL: 599}
    for text in samples().values():
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_every_byte_value_survives(tmp_path):
    # Tokens made of control bytes, space, 0x7f-0xa0, 0xad and invalid UTF-8.
    odd = [b"\x00\x01", b" \n", b"\x7f\xa0", b"\xad\xff", b"\xe2\x82"]
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for k, t in enumerate(odd):
        vocab[256 + k] = t
        merges.append((t[:1], t[1:]))
    tok = bytepair.Tokenizer(vocab, merges)
    tok.save(tmp_path / "odd", format="gpt2")
    back = bytepair.Tokenizer.load(tmp_path / "odd")
    assert dict(back.vocab) == vocab and back.merges == merges


@pytest.mark.parametrize(
    ("vocab_text", "merges_text", "message"),
    [
        ('{"a": 0, "b": 1', "", "not valid JSON"),
        ('["a", "b"]', "", "expected a JSON object"),
        ('{"a": "0"}', "", "key 'a' has id '0'"),
        ('{"a": -1}', "", "key 'a' has id -1"),
        ('{"a": 0, "b": 0}', "", "reuses id 0"),
        ('{"a b": 0}', "", "not a character of GPT-2's byte alphabet"),
        ('{"a": 0, "b": 1, "ab": 2}', "#version: 0.2\na\n", "line 2: 'a' is not a merge"),
        ('{"a": 0, "b": 1, "ab": 2}', "a b c\n", "line 1: 'a b c' is not a merge"),
        ('{"a": 0, "b": 1, "ab": 2}', "a  b\n", "line 1"),
        ('{"a": 0, "b": 1, "ab": 2}', "a b\na c\n", "line 2: merge a c needs the token 'c'"),
        ('{"a": 0, "b": 1}', "a b\n", "line 1: merge a b needs the token 'ab'"),
        ('{"a": 0, "b": 1, "ab": 2}', "a \u3042\n", "line 1"),
    ],
)
def test_malformed_files_are_refused(tmp_path, vocab_text, merges_text, message):
    (tmp_path / "vocab.json").write_text(vocab_text, "utf-8")
    (tmp_path / "merges.txt").write_text(merges_text, "utf-8")
    with pytest.raises(FormatError, match=message) as err:
        gpt2.read(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert str(tmp_path) in str(err.value)


def test_non_utf8_merges_file_is_refused(tmp_path):
    (tmp_path / "vocab.json").write_text('{"a": 0}', "utf-8")
    (tmp_path / "merges.txt").write_bytes(b"a \xff\n")
    with pytest.raises(FormatError, match=r"merges.txt: not UTF-8"):
        gpt2.read(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_rank_table_with_unmergeable_tokens_is_refused(tmp_path):
    # Llama 3's ranks hold tokens that no merge produces; tiktoken emits them only as whole
    # pre-tokens, a rule GPT-2 files cannot carry.
    tok = bytepair.Tokenizer.load(shared("fixtures", "tokenizers", "llama3", "tokenizer.model"))
    with pytest.raises(bytepair.VocabError, match="tokens that no merge produces"):
        tok.save(tmp_path / "llama", format="gpt2")
    assert not (tmp_path / "llama").exists()


def test_rank_table_without_them_round_trips(tmp_path, tiktoken_encoding):
    enc = tiktoken_encoding("r50k_base")
    tok = tiktoken_file("r50k_base")
    tok.save(tmp_path / "r50k", format="gpt2")
    back = bytepair.Tokenizer.load(tmp_path / "r50k")
    assert back.special_tokens == enc._special_tokens
    for text in samples().values():
        text = text[:10_000]
        assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


def test_cs336_reference_pair_reads_and_writes_back_line_for_line(tmp_path):
    # CS336's reference training output is a GPT-2 pair written by someone else: the special
    # token has id 0, and no merges.txt version line.
    vocab_path = shared("fixtures", "cs336", "train-bpe-reference-vocab.json")
    merges_path = shared("fixtures", "cs336", "train-bpe-reference-merges.txt")
    vocab, merges = gpt2.read(vocab_path, merges_path)
    assert len(vocab) == 500 and vocab[0] == SPECIAL.encode()
    assert gpt2.special_candidates(vocab, merges) == [SPECIAL]
    tok = bytepair.Tokenizer(vocab, merges, special_tokens=[SPECIAL])
    tok.save(tmp_path / "out", format="gpt2")
    written = (tmp_path / "out" / "merges.txt").read_text("utf-8").splitlines()
    assert written[0] == "#version: 0.2"
    assert written[1:] == merges_path.read_text("utf-8").splitlines()
    assert json.loads((tmp_path / "out" / "vocab.json").read_text("utf-8")) == json.loads(
        vocab_path.read_text("utf-8")
    )


@given(st.lists(st.binary(min_size=1, max_size=6), max_size=20))
def test_alphabet_round_trips_any_bytes_property(tokens):
    for token in tokens:
        text = gpt2.to_text(token)
        assert " " not in text and "\n" not in text
        assert gpt2.to_bytes(text, "x") == token


@given(st.text(alphabet=st.characters(max_codepoint=0x17F), max_size=8))
def test_text_outside_the_alphabet_is_refused_property(text):
    # The oracle is GPT-2's own table, as transformers ships it.
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    char_to_byte = {c: b for b, c in bytes_to_unicode().items()}
    if all(c in char_to_byte for c in text):
        assert gpt2.to_bytes(text, "x") == bytes(char_to_byte[c] for c in text)
    else:
        bad = next(c for c in text if c not in char_to_byte)
        with pytest.raises(FormatError, match=f"contains {re.escape(repr(bad))}"):
            gpt2.to_bytes(text, "x")


def test_gpt2_files_take_the_names_given(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = bytepair.train(
        [corpus_sample("en-prose", 20_000)], 400, special_tokens=[EOT], progress=False
    )
    vocab, merges = tmp_path / "my_vocab.json", tmp_path / "my_merges.txt"
    tok.save((vocab, merges), format="gpt2")
    tok.save(tmp_path / "sub" / "cs336-vocab.json", format="gpt2")
    assert (tmp_path / "sub" / "cs336-merges.txt").read_bytes() == merges.read_bytes()
    assert (tmp_path / "sub" / "cs336-vocab.json").read_bytes() == vocab.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["my_merges.txt", "my_vocab.json", "sub"]
    reference = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    reference.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2's regex
    text = "The tokenizer's merges, in order: 12345 and naïve café."
    assert tok.encode(text) == reference.encode(text).ids
    assert bytepair.Tokenizer.from_files(vocab, merges, [EOT]).encode(text) == tok.encode(text)
    with pytest.raises(bytepair.FormatError, match="must hold 'vocab'"):
        tok.save(tmp_path / "tokens.json", format="gpt2")


def test_load_reads_the_pair_save_writes(tmp_path):
    tok = trained()
    pair = (tmp_path / "v.json", tmp_path / "m.txt")
    tok.save(pair)
    back = bytepair.Tokenizer.load(pair)
    assert dict(back.vocab) == dict(tok.vocab) and back.merges == tok.merges
    assert back.special_tokens == tok.special_tokens
    # Alone, the vocab is no tokenizer.json: the message says what it is and how to load it.
    with pytest.raises(FormatError, match=r"looks like a GPT-2 vocab.json") as err:
        bytepair.Tokenizer.load(pair[0])
    assert "Tokenizer.load((" in str(err.value) and "missing key" not in str(err.value)


def test_from_files_refuses_a_truncated_merges_txt_as_load_does(tmp_path):
    tok = trained()
    tok.save(tmp_path / "d", format="gpt2")
    merges = tmp_path / "d" / "merges.txt"
    lines = merges.read_text("utf-8").splitlines(keepends=True)
    merges.write_text("".join(lines[:4]), "utf-8")  # the version line and three merges
    # 600 tokens, 256 bytes, 1 special token, 3 merges left: 340 tokens no merge builds.
    for load in (
        lambda: bytepair.Tokenizer.from_files(tmp_path / "d" / "vocab.json", merges),
        lambda: bytepair.Tokenizer.load(tmp_path / "d"),
    ):
        with pytest.raises(FormatError, match=r"no merge builds 340 tokens.*looks truncated"):
            load()


def _save_as_the_tutorial_does(vocab, merges, vocab_path, merges_path):
    # The Qwen tutorial's save_vocab_and_merges, statement for statement.
    vocab_str = {idx: token.decode("utf-8", errors="replace") for idx, token in vocab.items()}
    with open(vocab_path, "w", encoding="utf-8") as f:
        json.dump(vocab_str, f, ensure_ascii=False, indent=2)
    with open(merges_path, "w", encoding="utf-8") as f:
        for merge in merges:
            part1 = merge[0].decode("utf-8", errors="replace")
            part2 = merge[1].decode("utf-8", errors="replace")
            f.write(f"{part1} {part2}\n")


def test_a_vocab_saved_as_the_tutorial_saves_it_is_called_inverted(tmp_path):
    """id -> text, decoded with errors='replace': every token that is not whole UTF-8 lost
    its bytes, so the files are refused, saying why, rather than read into another
    tokenizer."""
    text = corpus_sample("en-prose", 20_000) + corpus_sample("zh-prose", 20_000)
    tok = bytepair.train([text], 600, special_tokens=[EOT], progress=False)
    vocab = dict(tok.vocab)
    lost = []
    for i, token in sorted(vocab.items()):
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            lost.append(i)
    assert len(lost) > 128  # the bytes from 0x80 on, and pieces of Chinese characters
    pair = (tmp_path / "gpt2_vocab.json", tmp_path / "gpt2_merges.txt")
    _save_as_the_tutorial_does(vocab, tok.merges, *pair)
    for load in (
        lambda: bytepair.Tokenizer.from_files(*pair),
        lambda: bytepair.Tokenizer.load(pair),
    ):
        with pytest.raises(FormatError) as err:
            load()
        message = str(err.value)
        assert message.startswith(f"{pair[0]}: maps ids to tokens")
        assert f"{len(lost)} of its tokens (first: id '{lost[0]}') are U+FFFD" in message
        assert "tok.save(('vocab.json', 'merges.txt'))" in message


def test_gpt2s_own_vocab_json_loaded_alone_is_named_a_vocab(tmp_path, tiktoken_encoding):
    # GPT-2's vocab holds the token "model" (tiktoken's gpt2 gives it id 19849), which made
    # the file look like a tokenizer.json with a broken "model" key.
    assert tiktoken_encoding("gpt2").encode_single_token("model") == 19849
    vocab = tmp_path / "vocab.json"
    vocab.write_bytes(shared("fixtures", "cs336", "gpt2_vocab.json").read_bytes())
    assert json.loads(vocab.read_text("utf-8"))["model"] == 19849
    with pytest.raises(FormatError, match=r"looks like a GPT-2 vocab.json.*merges.txt"):
        bytepair.Tokenizer.load(vocab)


def test_a_pattern_the_files_cannot_hold_is_warned_about(tmp_path, tiktoken_encoding):
    # vocab.json + merges.txt store no pattern (the reader gives gpt2's), as a rank file
    # stores none: the writer says so and how to give it back, as the tiktoken writer does.
    text = "Order 1234567 shipped in 2024, 12345 units\n"
    # tiktoken's own patterns: o200k cuts digits in threes, gpt2 keeps the run whole.
    o200k, gpt2_enc = tiktoken_encoding("o200k_base"), tiktoken_encoding("gpt2")
    assert regex.findall(o200k._pat_str, "1234567") == ["123", "456", "7"]
    assert regex.findall(gpt2_enc._pat_str, " 1234567") == [" 1234567"]
    tok = bytepair.train([text * 50], vocab_size=270, pattern="o200k", progress=False)
    with pytest.warns(bytepair.FormatWarning, match=r"no pattern.*pattern='o200k'.*--pattern"):
        tok.save(tmp_path / "g", format="gpt2")
    assert bytepair.Tokenizer.load(tmp_path / "g", pattern="o200k").encode(text) == tok.encode(text)
    assert bytepair.Tokenizer.load(tmp_path / "g").pattern == patterns.GPT2


def test_a_pair_saved_by_a_windows_editor_reads_as_saved(tmp_path, tiktoken_encoding):
    # Notepad saves UTF-8 with a byte order mark and CRLF line ends. The vocab.json reader
    # skipped the mark but merges.txt took it for part of its first token (or version line).
    bom = b"\xef\xbb\xbf"
    vocab = shared("fixtures", "cs336", "gpt2_vocab.json").read_bytes()
    merges = b"#version: 0.2\n" + shared("fixtures", "cs336", "gpt2_merges.txt").read_bytes()
    for name, head in (("with-version", merges), ("without", merges.split(b"\n", 1)[1])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "vocab.json").write_bytes(bom + vocab)
        (folder / "merges.txt").write_bytes(bom + head.replace(b"\n", b"\r\n"))
        text = samples()["en-prose"][:5_000]
        expected = tiktoken_encoding("gpt2").encode(text)
        assert bytepair.Tokenizer.load(folder).encode(text) == expected, name
