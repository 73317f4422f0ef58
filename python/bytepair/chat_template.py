"""Chat templates: a conversation rendered by a Jinja2 template exactly as transformers
renders it, then encoded, with the assistant mask that supervised fine-tuning needs.

The environment is transformers': sandboxed and immutable, ``trim_blocks`` and
``lstrip_blocks``, the ``loopcontrols`` extension, a ``tojson`` that does not escape HTML,
``raise_exception`` and ``strftime_now``, and the tokenizer's bos/eos/pad/unk tokens as
variables, with ``tools``, ``documents`` and the caller's own (``enable_thinking``) over them.
``{% generation %} ... {% endgeneration %}`` marks what the model generates.

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


def named_templates(configured) -> Mapping[str, str]:
    """A config's templates by name: none when it has one unnamed template, or none.

    >>> named_templates({"default": "{{ x }}"})
    {'default': '{{ x }}'}
    """
    return configured if isinstance(configured, Mapping) else {}


def select(
    configured, chat_template: str | None, special_tokens: Mapping[str, int], tools=None
) -> str:
    """The template to render, as transformers picks it: ``chat_template`` (a template, or
    the name of one of the config's), else the config's (its ``tool_use`` when ``tools``
    are given and it has several, else its ``default``), else CHATML."""
    named = named_templates(configured)
    if chat_template is not None:
        if not isinstance(chat_template, str):
            raise TypeError(f"chat_template must be a str, got {type(chat_template).__name__}")
        return named.get(chat_template, chat_template)
    if tools is not None and "tool_use" in named:
        return named["tool_use"]
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


def _is_list(value) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _checked_messages(messages: Sequence[Message]) -> list[Message]:
    """The messages, each a dict with a role; other keys (content, tool_calls, ...) are the
    template's to read, as in transformers."""
    if not _is_list(messages):
        raise ChatTemplateError(
            f"messages must be a list of {{'role': ..., 'content': ...}} dicts, got "
            f"{type(messages).__name__}"
        )
    for n, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message:
            batch = _is_list(message) and all(isinstance(m, Mapping) for m in message)
            raise ChatTemplateError(
                f"messages[{n}] is {message!r}; expected a dict with a 'role' (and the "
                "'content', 'tool_calls' or other keys the template reads)"
                + ("; pass one conversation at a time" if batch else "")
            )
    return list(messages)


def tool_schemas(tools) -> list | None:
    """``tools`` as transformers passes them to the template: a list of JSON-schema dicts
    (``{"type": "function", "function": {"name": ..., ...}}``), as given. A Python function
    is refused: transformers converts it with ``transformers.utils.get_json_schema``, which
    bytepair does not have.

    >>> tool_schemas([{"type": "function", "function": {"name": "f"}}])
    [{'type': 'function', 'function': {'name': 'f'}}]
    """
    if tools is None:
        return None
    if not _is_list(tools):
        raise TypeError(f"tools must be a list of JSON-schema dicts, got {type(tools).__name__}")
    for n, tool in enumerate(tools):
        if isinstance(tool, Mapping):
            continue
        if callable(tool):
            name = getattr(tool, "__name__", repr(tool))
            raise TypeError(
                f"tools[{n}] is the function {name}; bytepair takes tools as JSON-schema dicts "
                f"only: pass transformers.utils.get_json_schema({name}), the dict transformers "
                "makes from it"
            )
        raise TypeError(f"tools[{n}] is {tool!r}; expected a JSON-schema dict")
    return list(tools)


def checked_documents(documents) -> list | None:
    """``documents`` (retrieval-augmented generation): a list of dicts, as transformers takes
    them (it recommends 'title' and 'text' keys)."""
    if documents is None:
        return None
    if not _is_list(documents) or not all(isinstance(d, Mapping) for d in documents):
        raise TypeError(
            f"documents must be a list of dicts with 'title' and 'text' keys, got {documents!r}"
        )
    return list(documents)


# What transformers appends to the final message for continue_final_message, then cuts the
# rendered text at.
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _tagged(messages: list[Message]) -> tuple[list[Message], str]:
    """The messages with the tag after the final message's text (its last text block), and
    that text."""
    if not messages:
        raise ChatTemplateError("continue_final_message=True needs a final message; got none")
    last = dict(messages[-1])
    content = last.get("content")
    text = None
    if isinstance(content, str):
        text = content
        last["content"] = content + _CONTINUE_TAG
    elif _is_list(content):
        blocks = list(content)
        for i in reversed(range(len(blocks))):
            if isinstance(blocks[i], Mapping) and "text" in blocks[i]:
                text = blocks[i]["text"]
                if isinstance(text, str):
                    blocks[i] = {**blocks[i], "text": text + _CONTINUE_TAG}
                    last["content"] = blocks
                break
    if not isinstance(text, str):
        raise ChatTemplateError(
            f"continue_final_message=True, but the final message has no text to continue: "
            f"its content is {content!r}; expected a str, or a list of blocks with a 'text'"
        )
    return [*messages[:-1], last], text


def _cut_at_tag(rendered: str, final: str) -> str:
    """The rendered text up to where the final message ends, as transformers cuts it."""
    tag = _CONTINUE_TAG.strip()
    if final.strip() not in rendered or tag not in rendered:
        raise ChatTemplateError(
            "continue_final_message=True, but the template does not render the final message "
            "as given (it drops or changes part of it), so there is no end to continue from"
        )
    at = rendered.rindex(tag)
    # A template that strips the message's trailing space also strips the tag's.
    return rendered[:at] if rendered.startswith(_CONTINUE_TAG, at) else rendered[:at].rstrip()


def render(
    template: str,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = False,
    continue_final_message: bool = False,
    variables: Mapping[str, object] | None = None,
    track: bool = False,
) -> tuple[str, list[tuple[int, int]]]:
    """The rendered conversation and, with ``track``, the character spans of its
    ``{% generation %}`` blocks. ``variables`` are the template's others (the special
    tokens, ``tools``, ``documents``, ``enable_thinking``, ...). With
    ``continue_final_message``, the text ends where the final message does."""
    compiled = _compiled(template)
    messages = _checked_messages(messages)
    if continue_final_message:
        messages, final = _tagged(messages)
    _, template_error = _environment()
    context = {
        "tools": None,
        "documents": None,
        **(variables or {}),
        "messages": messages,
        "add_generation_prompt": add_generation_prompt,
    }
    blocks: list[str] = []
    spans: list[tuple[int, int]] = []
    try:
        if track:
            # The marks' extension lives on the shared environment: one tracked render at a
            # time.
            with _TRACKING, compiled.environment.track_generation(blocks, spans):
                blocks.extend(compiled.generate(**context))
            text = "".join(blocks)
        else:
            text = compiled.render(**context)
    except template_error as e:
        raise ChatTemplateError(f"the chat template failed: {e}") from None
    return (_cut_at_tag(text, final) if continue_final_message else text), spans


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


# transformers' apply_chat_template arguments that shape what its tokenizer returns. bytepair
# returns ids, so each is refused: passed on, the template would receive it unread.
_PAD_INSTEAD = "render with tokenize=False, then pad or cut the texts with encode_batch_padded"
_NOT_TEMPLATE_VARIABLES = {
    "return_assistant_tokens_mask": "pass return_assistant_mask=True for (ids, mask)",
    "return_dict": "bytepair returns the ids, or (ids, mask) with return_assistant_mask=True",
    "return_tensors": "bytepair returns a list of ids (numpy.array(ids) makes an array)",
    "padding": _PAD_INSTEAD,
    "truncation": _PAD_INSTEAD,
    "max_length": _PAD_INSTEAD,
    "tokenizer_kwargs": _PAD_INSTEAD,
}


def apply(
    tok,
    messages: Sequence[Message],
    *,
    chat_template: str | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool = False,
    tokenize: bool = True,
    return_assistant_mask: bool = False,
    tools=None,
    documents=None,
    **template_variables,
):
    """``Tokenizer.apply_chat_template``: the ids, (ids, mask), or the text."""
    for name in template_variables:
        if name in _NOT_TEMPLATE_VARIABLES:
            raise TypeError(
                f"apply_chat_template does not take transformers' {name}=: "
                f"{_NOT_TEMPLATE_VARIABLES[name]}"
            )
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError(
            "continue_final_message=True leaves the final message open for the model to "
            "continue, add_generation_prompt=True starts a new assistant turn: pass one of them"
        )
    if return_assistant_mask and (continue_final_message or not tokenize):
        raise ChatTemplateError(
            "return_assistant_mask=True needs tokenize=True and continue_final_message=False "
            "(as transformers' return_assistant_tokens_mask): the mask is of a whole "
            "conversation's tokens"
        )
    config = tok.config
    template = select(config.chat_template, chat_template, tok.special_tokens, tools)
    # transformers' order: the special tokens, then the caller's variables over them.
    variables = {
        **config.tokens(),
        **template_variables,
        "tools": tool_schemas(tools),
        "documents": checked_documents(documents),
    }
    marked = return_assistant_mask and has_generation_marks(template)
    text, spans = render(
        template,
        messages,
        add_generation_prompt=add_generation_prompt,
        continue_final_message=continue_final_message,
        variables=variables,
        track=marked,
    )
    if not tokenize:
        return text
    # transformers encodes the rendered text with every added token matched.
    if not return_assistant_mask:
        return tok.encode(text, allowed_special="all")
    if not marked:
        spans = spans_from_prefixes(template, messages, text, variables, list(tok.special_tokens))
    ids, offsets = tok.encode_with_offsets(text, allowed_special="all")
    return ids, mask_from_spans(offsets, spans)
