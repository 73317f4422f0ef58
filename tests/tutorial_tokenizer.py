"""The tutorials' tokenizer for the tests of chat templates, padded batches and saving for
transformers: trained on documents from across every shared corpus, with the special
tokens the tutorials use (`<|endoftext|>`, `<pad>`, `<unk>`, ChatML's two)."""

from __future__ import annotations

from functools import cache

import bytepair
from conftest import CORPORA, corpus_documents

SPECIAL_TOKENS = ["<|endoftext|>", "<pad>", "<unk>", "<|im_start|>", "<|im_end|>"]
EOT = "<|endoftext|>"


@cache
def documents(count: int = 30) -> tuple[str, ...]:
    """`count` 20-line documents of each corpus, as text (without `<|endoftext|>`, so that
    they encode under the default policy)."""
    out = []
    for name in CORPORA:
        for doc in corpus_documents(name, count):
            out.append(doc.decode("utf-8", errors="replace").replace(EOT, ""))
    return tuple(out)


@cache
def tutorial_tokenizer() -> bytepair.Tokenizer:
    return bytepair.train(
        list(documents()), vocab_size=1200, special_tokens=SPECIAL_TOKENS, progress=False
    )


def auto_tokenizer(directory):
    """transformers' AutoTokenizer on a folder bytepair saved: the oracle."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(directory))
