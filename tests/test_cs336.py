"""CS336 assignment 1's signature: `Tokenizer(vocab, merges, special_tokens=None)`,
`from_files(..., special_tokens=None)`, and the README's five-line `get_tokenizer` adapter,
checked against tiktoken's GPT-2 encoding (the assignment's own oracle)."""

from __future__ import annotations

import re

import bytepair
import pytest
from bytepair.errors import DisallowedSpecialError
from bytepair.formats import gpt2
from conftest import CS336, ROOT, shared

EOT = "<|endoftext|>"


def gpt2_vocab_merges():
    return gpt2.read(shared("fixtures", "cs336", "gpt2_vocab.json"), CS336 / "gpt2_merges.txt")


def readme_get_tokenizer():
    """The README's adapter, executed as written."""
    readme = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"<!-- cs336-adapter[^\n]*\n```python\n(.*?)```", readme, re.S)
    assert block, "README.md lost its CS336 adapter block"
    code = block.group(1)
    assert len([line for line in code.splitlines() if line.startswith("    ")]) == 4
    namespace: dict = {}
    exec(code, namespace)
    return namespace["get_tokenizer"]


def test_special_tokens_none_is_no_special_tokens(tiktoken_encoding):
    vocab, merges = gpt2_vocab_merges()
    text = (CS336 / "address.txt").read_text("utf-8")
    tok = bytepair.Tokenizer(vocab, merges, special_tokens=None)
    assert tok.special_tokens == {}
    assert tok.encode(text) == tiktoken_encoding("gpt2").encode_ordinary(text)
    files = bytepair.Tokenizer.from_files(
        CS336 / "gpt2_vocab.json", CS336 / "gpt2_merges.txt", special_tokens=None
    )
    assert files.special_tokens == {}
    assert files.encode(text) == tok.encode(text)


def test_readme_adapter_encodes_special_tokens_as_cs336_does(tiktoken_encoding):
    vocab, merges = gpt2_vocab_merges()
    text = (CS336 / "tinystories_sample.txt").read_text("utf-8")
    assert text.count(EOT) >= 2
    expected = tiktoken_encoding("gpt2").encode(text, allowed_special={EOT})
    tok = readme_get_tokenizer()(vocab, merges, [EOT])
    assert tok.encode(text) == expected
    lines = text.splitlines(keepends=True)
    assert list(tok.encode_iterable(lines)) == expected
    assert tok.decode(expected) == text
    # Without the adapter, bytepair keeps tiktoken's rule.
    with pytest.raises(DisallowedSpecialError, match=re.escape(EOT)):
        bytepair.Tokenizer(vocab, merges, [EOT]).encode(text)


def test_readme_adapter_with_none_and_overlapping_special_tokens():
    vocab, merges = gpt2_vocab_merges()
    get_tokenizer = readme_get_tokenizer()
    assert get_tokenizer(vocab, merges).encode("Héllo") == get_tokenizer(
        vocab, merges, None
    ).encode("Héllo")
    # CS336's test_overlapping_special_tokens: the longer token wins where both match.
    double = EOT + EOT
    tok = get_tokenizer(vocab, merges, [EOT, double])
    ids = tok.encode(f"Hello, how {double} are you?{EOT}")
    double_id, eot_id = tok.special_tokens[double], tok.special_tokens[EOT]
    assert eot_id == 50256  # the vocab's own <|endoftext|>
    assert ids.count(double_id) == 1 and ids.count(eot_id) == 1
    assert ids[-1] == eot_id
