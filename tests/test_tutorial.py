"""docs/tutorial.md runs: every `>>>` example in it is executed, and its pre-tokenization
examples are checked against an independent oracle, tiktoken's own regexes."""

from __future__ import annotations

import ast
import doctest
import re

import regex
from conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"
# tutorial pattern name -> the tiktoken encoding whose regex it must equal
TIKTOKEN_NAMES = {"gpt2": "gpt2", "cl100k": "cl100k_base", "o200k": "o200k_base"}


def test_every_example_in_the_tutorial_runs():
    result = doctest.testfile(
        str(TUTORIAL),
        module_relative=False,
        optionflags=doctest.ELLIPSIS,
        raise_on_error=False,
        verbose=False,
    )
    assert result.attempted >= 15, "the tutorial lost its examples"
    assert result.failed == 0, f"{result.failed} tutorial examples failed (see output above)"


def test_pretokenization_examples_match_tiktoken(tiktoken_encoding):
    examples = doctest.DocTestParser().get_examples(TUTORIAL.read_text(encoding="utf-8"))
    sentence = None
    checked = set()
    for ex in examples:
        if ex.source.startswith("sentence = "):
            sentence = ast.literal_eval(ex.source.split("=", 1)[1].strip())
        m = re.fullmatch(r'pretokenize\(sentence, patterns\.resolve\("(\w+)"\)\).*\n', ex.source)
        if m:
            oracle = tiktoken_encoding(TIKTOKEN_NAMES[m.group(1)])._pat_str
            assert ast.literal_eval(ex.want.strip()) == regex.findall(oracle, sentence), m.group(1)
            checked.add(m.group(1))
    assert sentence == "I'll pay $1234.50 for the cat's   hat!!"
    assert checked == set(TIKTOKEN_NAMES)
