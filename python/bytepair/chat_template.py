"""Chat templates: a conversation rendered by a Jinja2 template exactly as transformers
renders it, then encoded, with the assistant mask that supervised fine-tuning needs.

The environment is transformers': sandboxed and immutable, ``trim_blocks`` and
``lstrip_blocks``, the ``loopcontrols`` extension, a ``tojson`` that does not escape HTML,
``raise_exception`` and ``strftime_now``, and the tokenizer's bos/eos/pad/unk tokens as
variables. ``{% generation %} ... {% endgeneration %}`` marks what the model generates.

>>> text, spans = render(CHATML, [{"role": "assistant", "content": "Hi"}], track=True)
>>> text
'<|im_start|>assistant\\nHi<|im_end|>\\n'
>>> [text[s:e] for s, e in spans]
['Hi<|im_end|>']
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime

from bytepair.errors import ChatTemplateError

#: The built-in template, ChatML as transformers' classic default renders it, with the
#: assistant's content and its ``<|im_end|>`` marked as generated.
CHATML = (
    "{% for message in messages %}"
    r"{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}"
    r"{{ '\n' }}"
    "{% endfor %}"
    r"{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
#: The special tokens CHATML needs the tokenizer to have.
CHATML_TOKENS = ("<|im_start|>", "<|im_end|>")

Message = Mapping[str, object]

_TRACKING = threading.Lock()


def template_of(configured, special_tokens: Mapping[str, int]):
    """A tokenizer's template: its config's (a string or named templates), else CHATML
    when it has CHATML's special tokens, else None."""
    if configured is not None:
        return configured
    if all(t in special_tokens for t in CHATML_TOKENS):
        return CHATML
    return None


def select(configured, chat_template: str | None, special_tokens: Mapping[str, int]) -> str:
    """The template to render, as transformers picks it: ``chat_template`` (a template, or
    the name of one of the config's), else the config's (its ``default`` when it has
    several), else CHATML."""
    named = configured if isinstance(configured, Mapping) else {}
    if chat_template is not None:
        if not isinstance(chat_template, str):
            raise TypeError(f"chat_template must be a str, got {type(chat_template).__name__}")
        return named.get(chat_template, chat_template)
    if named:
        if "default" not in named:
            raise ChatTemplateError(
                f"the tokenizer_config.json has several chat templates ({sorted(named)}) and "
                "none is named 'default': pass chat_template= one of those names"
            )
        return named["default"]
    template = template_of(configured, special_tokens)
    if template is None:
        raise ChatTemplateError(
            "this tokenizer has no chat template: no tokenizer_config.json gives one, and it "
            f"lacks the special tokens {' and '.join(CHATML_TOKENS)} of the built-in ChatML "
            "template. Pass chat_template= (bytepair tokenize: --chat-template), or train with "
            "those special tokens"
        )
    return template


# -- rendering ------------------------------------------------------------------------------


@functools.cache
def _environment():
    try:
        import jinja2
        import jinja2.ext
        import jinja2.nodes
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as e:
        raise ImportError(
            "chat templates need Jinja2: pip install 'bytepair[chat]' (or jinja2)"
        ) from e

    class Generation(jinja2.ext.Extension):
        """``{% generation %}``: records the span of what it renders in the output."""

        tags = frozenset({"generation"})

        def __init__(self, environment):
            super().__init__(environment)
            environment.extend(track_generation=self.track)
            self._blocks = None
            self._spans = None

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_record")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _record(self, caller):
            text = caller()
            if self._spans is not None:
                # The output so far is the blocks the template has yielded (transformers'
                # rule, so spans agree with its assistant mask).
                start = sum(map(len, self._blocks))
                self._spans.append((start, start + len(text)))
            return text

        @contextlib.contextmanager
        def track(self, blocks: list[str], spans: list[tuple[int, int]]):
            self._blocks, self._spans = blocks, spans
            try:
                yield
            finally:
                self._blocks = self._spans = None

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # Jinja's own tojson escapes <, >, & and ' for HTML; templates expect plain JSON.
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env, jinja2.TemplateError


@functools.lru_cache(maxsize=16)
def _compiled(template: str):
    env, template_error = _environment()
    try:
        return env.from_string(template)
    except template_error as e:
        where = f" (line {e.lineno})" if getattr(e, "lineno", None) else ""
        raise ChatTemplateError(f"the chat template does not compile{where}: {e}") from None


def _checked_messages(messages: Sequence[Message]) -> list[Message]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ChatTemplateError(
            f"messages must be a list of {{'role': ..., 'content': ...}} dicts, got "
            f"{type(messages).__name__}"
        )
    for n, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ChatTemplateError(
                f"messages[{n}] is {message!r}; expected a dict with 'role' and 'content'"
            )
    return list(messages)


def render(
    template: str,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = False,
    variables: Mapping[str, object] | None = None,
    track: bool = False,
) -> tuple[str, list[tuple[int, int]]]:
    """The rendered conversation and, with ``track``, the character spans of its
    ``{% generation %}`` blocks."""
    compiled = _compiled(template)
    messages = _checked_messages(messages)
    _, template_error = _environment()
    context = {
        **(variables or {}),
        "messages": messages,
        "tools": None,
        "documents": None,
        "add_generation_prompt": add_generation_prompt,
    }
    blocks: list[str] = []
    spans: list[tuple[int, int]] = []
    try:
        if not track:
            return compiled.render(**context), spans
        # The marks' extension lives on the shared environment: one tracked render at a time.
        with _TRACKING, compiled.environment.track_generation(blocks, spans):
            blocks.extend(compiled.generate(**context))
    except template_error as e:
        raise ChatTemplateError(f"the chat template failed: {e}") from None
    return "".join(blocks), spans


# -- the assistant mask ---------------------------------------------------------------------


def has_generation_marks(template: str) -> bool:
    """Whether the template marks what the model generates.

    >>> has_generation_marks(CHATML)
    True
    """
    import re

    return re.search(r"\{%-?\s*generation\s*-?%\}", template) is not None


def spans_from_prefixes(
    template: str,
    messages: Sequence[Message],
    text: str,
    variables: Mapping[str, object],
    special_tokens: Sequence[str],
) -> list[tuple[int, int]]:
    """What each assistant message adds to the conversation, for a template without
    ``{% generation %}``: the text between the conversation before it with the generation
    prompt and the conversation up to it, cut after the last special token in it (its
    closing end token; the template's newline after that is not generated).

    Raises ChatTemplateError when a shorter conversation is not a prefix of the longer:
    the template renders a turn differently once others follow, so only marks can say
    what the model generates."""
    spans = []
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before, _ = render(template, messages[:k], add_generation_prompt=True, variables=variables)
        upto, _ = render(template, messages[: k + 1], variables=variables)
        if not (upto.startswith(before) and text.startswith(upto)):
            raise ChatTemplateError(
                f"cannot tell what assistant message {k} adds: this template renders the "
                "conversation before it (with the generation prompt), or up to it, as "
                "something other than the start of the whole. Add {% generation %} ... "
                "{% endgeneration %} around what the model generates"
            )
        added = upto[len(before) :]
        end = max((added.rfind(t) + len(t) for t in special_tokens if t in added), default=0)
        spans.append((len(before), len(before) + (end or len(added))))
    return spans


def mask_from_spans(
    offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]
) -> list[int]:
    """1 on every token from the one holding a span's first character to the one holding
    its last, as transformers maps its generation spans (``char_to_token``: the first token
    whose offsets hold the character).

    >>> mask_from_spans([(0, 2), (2, 3), (3, 5)], [(1, 3)])
    [1, 1, 0]
    """
    mask = [0] * len(offsets)
    ends = [e for _, e in offsets]

    def token_at(char: int) -> int | None:
        i = bisect.bisect_right(ends, char)
        return i if i < len(offsets) and offsets[i][0] <= char else None

    for start, end in spans:
        if end <= start:
            continue
        first, last = token_at(start), token_at(end - 1)
        if first is None or last is None:
            continue
        for i in range(first, last + 1):
            mask[i] = 1
    return mask


def apply(
    tok,
    messages: Sequence[Message],
    *,
    chat_template: str | None = None,
    add_generation_prompt: bool = False,
    return_assistant_mask: bool = False,
):
    """``Tokenizer.apply_chat_template``: the ids, or (ids, mask)."""
    config = tok.config
    template = select(config.chat_template, chat_template, tok.special_tokens)
    variables = config.tokens()
    marked = return_assistant_mask and has_generation_marks(template)
    text, spans = render(
        template,
        messages,
        add_generation_prompt=add_generation_prompt,
        variables=variables,
        track=marked,
    )
    # transformers encodes the rendered text with every added token matched.
    if not return_assistant_mask:
        return tok.encode(text, allowed_special="all")
    if not marked:
        spans = spans_from_prefixes(template, messages, text, variables, list(tok.special_tokens))
    ids, offsets = tok.encode_with_offsets(text, allowed_special="all")
    return ids, mask_from_spans(offsets, spans)
