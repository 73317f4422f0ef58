"""A conversation as its chat template encodes it, for ``bytepair tokenize --chat``: one
line per message, its role, its tokens, and which of them the assistant mask trains on.

>>> import bytepair
>>> vocab = {i: bytes([i]) for i in range(256)}
>>> tok = bytepair.Tokenizer(vocab, [], ["<|im_start|>", "<|im_end|>"])
>>> print(chat_view(tok, [{"role": "assistant", "content": "Hi"}], colour=False))
assistant  <\\|im_start\\|>|a|s|s|i|s|t|a|n|t|\\n|H|i|<\\|im_end\\|>|\\n
           mask: 0 0 0 0 0 0 0 0 0 0 0 1 1 1 0
15 tokens, 3 in the assistant mask
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence

from bytepair import chat_template
from bytepair.cli import show

_DIM = "\x1b[2m"  # faint: the tokens the mask leaves out
_RESET = "\x1b[0m"


def _one_line(tokens: Sequence[bytes]) -> str:
    """show.plain without the newlines it keeps after each visible ``\\n``: a message's
    tokens stay on its row."""
    return show.plain(tokens).replace("\n", "")


def message_starts(tok, messages: Sequence[Mapping], chat_template_arg: str | None, text: str):
    """The character where each message's part of ``text`` starts (the conversation up to
    the message before, rendered alone), or None when the template renders a shorter
    conversation as something other than the start of the whole."""
    config = tok.config
    template = chat_template.select(config.chat_template, chat_template_arg, tok.special_tokens)
    starts = []
    for k in range(len(messages)):
        before, _ = chat_template.render(template, messages[:k], variables=config.tokens())
        if not text.startswith(before):
            return None
        starts.append(len(before))
    return starts


def chat_view(
    tok,
    messages: Sequence[Mapping],
    *,
    colour: bool,
    chat_template_arg: str | None = None,
    add_generation_prompt: bool = False,
) -> str:
    """The lines ``tokenize --chat`` prints: per message, its role and tokens; the tokens
    in the assistant mask in colour (the others dimmed), or without colour a mask line."""
    kw = {"chat_template": chat_template_arg, "add_generation_prompt": add_generation_prompt}
    ids, mask = tok.apply_chat_template(messages, return_assistant_mask=True, **kw)
    text = tok.decode(ids)
    _, offsets = tok.encode_with_offsets(text, allowed_special="all")
    starts = message_starts(tok, messages, chat_template_arg, text)
    token_starts = [s for s, _ in offsets]
    if starts is None:
        rows = [("conversation", 0, len(ids))]
    else:
        firsts = [bisect.bisect_left(token_starts, s) for s in starts] + [len(ids)]
        rows = [(str(m["role"]), firsts[k], firsts[k + 1]) for k, m in enumerate(messages)]
        rows[0] = (rows[0][0], 0, rows[0][2])
    width = max(len(role) for role, _, _ in rows) + 2
    lines = []
    for role, first, last in rows:
        tokens = [tok.vocab[i] for i in ids[first:last]]
        if colour:
            # Runs of masked tokens in show's alternating colours, so that their boundaries
            # show; the unmasked runs faint, tokens apart by show.plain's separator.
            body = []
            for masked, run in itertools.groupby(
                zip(tokens, mask[first:last], strict=True), lambda p: p[1]
            ):
                run_tokens = [t for t, _ in run]
                if masked:
                    body.append(show.coloured(run_tokens).replace("\n", ""))
                else:
                    body.append(_DIM + _one_line(run_tokens) + _RESET)
            lines.append(role.ljust(width) + "".join(body))
        else:
            lines.append(role.ljust(width) + _one_line(tokens))
            if any(mask[first:last]):
                marks = " ".join(map(str, mask[first:last]))
                lines.append(" " * width + "mask: " + marks)
    lines.append(f"{len(ids):,} tokens, {sum(mask):,} in the assistant mask")
    return "\n".join(lines)
