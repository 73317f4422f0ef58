"""The assistant mask of `apply_chat_template` maps the rendered text's character spans
through `encode_with_offsets`: a surrogate pair (one character, two code units of the str)
before or inside an assistant message must not shift it."""

from __future__ import annotations

import bytepair

CHATML = ["<|im_start|>", "<|im_end|>"]


def test_mask_after_a_surrogate_pair_covers_the_assistant_content():
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], CHATML)
    messages = [
        {"role": "user", "content": "\ud83d\ude00\ud83d\ude00 hi"},
        {"role": "assistant", "content": "ok \ud83d\ude00!"},
    ]
    ids, mask = tok.apply_chat_template(messages, return_assistant_mask=True)
    masked = [i for i, m in zip(ids, mask, strict=True) if m]
    assert tok.decode(masked) == "ok \U0001f600!<|im_end|>"
