"""Chat templates: ids and assistant masks equal transformers' `apply_chat_template` on the
same tokenizer files (bytepair saves them, AutoTokenizer loads them), for the built-in
ChatML, hand-written templates and templates from a tokenizer_config.json."""

from __future__ import annotations

import json
import random
import shutil

import bytepair
import pytest
from bytepair import chat_template as chat
from bytepair.errors import ChatTemplateError
from tutorial_tokenizer import auto_tokenizer, documents, tutorial_tokenizer

# ChatML as transformers' classic default template wrote it: no generation marks.
CLASSIC_CHATML = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# A Llama-3-like layout on ChatML's tokens: bos first, a blank line after each header,
# trimmed content, no newline after the end token; with and without generation marks.
HEADER = "{{ '<|im_start|>' + message['role'] + '\\n\\n' }}"
LLAMA_LIKE = (
    "{{ eos_token }}{% for message in messages %}" + HEADER + "{{ message['content'] | trim "
    "+ '<|im_end|>' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n\\n' }}{% endif %}"
)
LLAMA_LIKE_MARKED = (
    "{{ eos_token }}{% for message in messages %}" + HEADER + "{% if message['role'] == "
    "'assistant' %}{% generation %}{{ message['content'] | trim + '<|im_end|>' }}"
    "{% endgeneration %}{% else %}{{ message['content'] | trim + '<|im_end|>' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n\\n' }}{% endif %}"
)

# Jinja features real templates use: namespace, loop controls, tojson, whitespace control,
# the special-token variables, a system message pulled out of the list.
FEATURES = """{%- set ns = namespace(system='') -%}
{%- if messages[0]['role'] == 'system' -%}
  {%- set ns.system = messages[0]['content'] -%}{%- set messages = messages[1:] -%}
{%- endif -%}
{{ eos_token }}{{ ns.system | tojson }}
{% for m in messages %}
  {%- if m['role'] == 'skip' %}{% continue %}{% endif -%}
  {%- if m['role'] == 'stop' %}{% break %}{% endif -%}
  <|im_start|>{{ m['role'] | upper }}: {{ m['content'] }}{{ '<|im_end|>' if loop.last else '\\n' }}
{% endfor -%}
{%- if add_generation_prompt %}<|im_start|>ASSISTANT:{% endif %}"""

# Block tags on their own indented lines: trim_blocks and lstrip_blocks decide the output.
LAYOUT = """{% for m in messages %}
    {% if m['role'] == 'user' %}
<|im_start|>{{ m['content'] }}
    {% else %}
  {{ m['content'] }}<|im_end|>
    {% endif %}
{% endfor %}
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The tutorial tokenizer saved for transformers, and AutoTokenizer on it."""
    directory = tmp_path_factory.mktemp("chat") / "tok"
    tok = tutorial_tokenizer()
    tok.save(f"{directory}/")
    return tok, auto_tokenizer(directory), directory


def conversations(count: int, seed: int = 0):
    """Random conversations from the corpora's text, with spaces, newlines, multi-byte
    characters and special-token text at the edges of messages (where a token may cross a
    turn's boundary; transformers matches special tokens inside messages too)."""
    rng = random.Random(seed)
    docs = documents()
    edges = ["", " ", "\n", "  ", "é", "你", "\n\n", "", " ", "<pad>", "<|im_end|>"]
    for _ in range(count):
        messages = []
        if rng.random() < 0.4:
            messages.append({"role": "system", "content": rng.choice(docs)[: rng.randint(0, 200)]})
        for i in range(rng.randint(1, 6)):
            doc = rng.choice(docs)
            start = rng.randrange(len(doc) + 1)
            text = rng.choice(edges) + doc[start : start + rng.randint(0, 300)] + rng.choice(edges)
            messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
        yield messages, rng.random() < 0.5


def hf_ids_and_mask(hf, messages, **kw):
    out = hf.apply_chat_template(messages, tokenize=True, return_assistant_tokens_mask=True, **kw)
    return out["input_ids"], out["assistant_masks"]


def test_builtin_chatml_ids_and_mask_equal_transformers(saved):
    tok, hf, _ = saved
    assert hf.chat_template == chat.CHATML  # read from the tokenizer_config.json saved
    masked = 0
    for messages, prompt in conversations(150):
        expected = hf_ids_and_mask(hf, messages, add_generation_prompt=prompt)
        got = tok.apply_chat_template(
            messages, add_generation_prompt=prompt, return_assistant_mask=True
        )
        assert got == expected, messages
        assert tok.apply_chat_template(messages, add_generation_prompt=prompt) == expected[0]
        masked += sum(got[1])
    assert masked > 1000


def test_builtin_chatml_renders_as_the_classic_chatml(saved):
    tok, hf, _ = saved
    for messages, prompt in conversations(50, seed=1):
        expected = hf.apply_chat_template(
            messages, chat_template=CLASSIC_CHATML, add_generation_prompt=prompt, return_dict=False
        )
        assert tok.apply_chat_template(messages, add_generation_prompt=prompt) == expected


def test_mask_of_the_hand_derived_example(saved):
    tok, _, _ = saved
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello there"},
    ]
    ids, mask = tok.apply_chat_template(messages, return_assistant_mask=True)
    assert tok.decode(ids) == (
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello there<|im_end|>\n"
    )
    assert tok.decode([i for i, m in zip(ids, mask, strict=True) if m]) == "Hello there<|im_end|>"
    assert mask[-1] == 0  # the template's newline after <|im_end|> is not generated


@pytest.mark.parametrize(
    ("plain", "marked"), [(CLASSIC_CHATML, chat.CHATML), (LLAMA_LIKE, LLAMA_LIKE_MARKED)]
)
def test_mask_without_marks_equals_the_marked_templates(saved, plain, marked):
    # Two ways to the same mask: bytepair's prefix rule on the unmarked template, and
    # transformers' generation marks on the marked one.
    tok, hf, _ = saved
    for messages, prompt in conversations(60, seed=2):
        ids, mask = hf_ids_and_mask(
            hf, messages, chat_template=marked, add_generation_prompt=prompt
        )
        got = tok.apply_chat_template(
            messages, chat_template=plain, add_generation_prompt=prompt, return_assistant_mask=True
        )
        assert got == (ids, mask), messages


def test_marked_template_given_as_argument_equals_transformers(saved):
    tok, hf, _ = saved
    for messages, prompt in conversations(40, seed=3):
        kw = {"chat_template": LLAMA_LIKE_MARKED, "add_generation_prompt": prompt}
        assert tok.apply_chat_template(messages, return_assistant_mask=True, **kw) == (
            hf_ids_and_mask(hf, messages, **kw)
        )


def test_block_layout_renders_as_in_transformers(saved):
    tok, hf, _ = saved
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]
    assert hf.apply_chat_template(messages, chat_template=LAYOUT, tokenize=False) == (
        "<|im_start|>Hi\n  Yo<|im_end|>\n"
    )
    expected = hf.apply_chat_template(messages, chat_template=LAYOUT, return_dict=False)
    assert tok.apply_chat_template(messages, chat_template=LAYOUT) == expected


def test_jinja_features_render_as_in_transformers(saved):
    tok, hf, _ = saved
    messages = [
        {"role": "system", "content": 'Be "brief" & <kind>'},
        {"role": "user", "content": "Hi"},
        {"role": "skip", "content": "never shown"},
        {"role": "assistant", "content": "Hello"},
        {"role": "stop", "content": "ends the loop"},
        {"role": "user", "content": "after the stop"},
    ]
    for prompt in (False, True):
        text = hf.apply_chat_template(
            messages, chat_template=FEATURES, tokenize=False, add_generation_prompt=prompt
        )
        assert '"Be \\"brief\\" & <kind>"' in text and "never shown" not in text
        expected = hf.apply_chat_template(
            messages, chat_template=FEATURES, add_generation_prompt=prompt, return_dict=False
        )
        got = tok.apply_chat_template(
            messages, chat_template=FEATURES, add_generation_prompt=prompt
        )
        assert got == expected


def with_named_templates(saved, folder, **templates):
    """``folder`` holding the saved tokenizer, its config naming ``templates``."""
    _, _, directory = saved
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(directory / name, folder / name)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["chat_template"] = [{"name": n, "template": t} for n, t in templates.items()]
    config_path.write_text(json.dumps(config), "utf-8")
    return folder


def test_templates_from_a_tokenizer_config(saved, tmp_path):
    with_named_templates(saved, tmp_path, default=LLAMA_LIKE, plain=CLASSIC_CHATML)
    loaded = bytepair.Tokenizer.load(tmp_path)
    hf = auto_tokenizer(tmp_path)
    messages, _ = next(conversations(1, seed=4))
    assert loaded.apply_chat_template(messages) == hf.apply_chat_template(
        messages, return_dict=False
    )
    assert loaded.apply_chat_template(messages, chat_template="plain") == hf.apply_chat_template(
        messages, chat_template="plain", return_dict=False
    )
    # A single template in chat_template.jinja (transformers' own layout since v4.43).
    config_path = tmp_path / "tokenizer_config.json"
    config = json.loads(config_path.read_text("utf-8"))
    del config["chat_template"]
    config_path.write_text(json.dumps(config), "utf-8")
    (tmp_path / "chat_template.jinja").write_text(LLAMA_LIKE_MARKED, "utf-8")
    loaded = bytepair.Tokenizer.load(tmp_path / "tokenizer.json")
    hf = auto_tokenizer(tmp_path)
    assert loaded.apply_chat_template(messages, return_assistant_mask=True) == hf_ids_and_mask(
        hf, messages
    )


def test_several_templates_without_a_default_are_refused(saved):
    tok = tutorial_tokenizer()
    named = {"a": CLASSIC_CHATML, "b": LLAMA_LIKE}
    with pytest.raises(ChatTemplateError, match=r"\['a', 'b'\].*none is named 'default'"):
        chat.select(named, None, tok.special_tokens)
    assert chat.select(named, "b", tok.special_tokens) == LLAMA_LIKE


def test_no_template_and_no_chatml_tokens_is_a_clear_error():
    vocab = {i: bytes([i]) for i in range(256)}
    tok = bytepair.Tokenizer(vocab, [], ["<|endoftext|>"])
    with pytest.raises(ChatTemplateError, match=r"no chat template.*<\|im_start\|>"):
        tok.apply_chat_template([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize(
    ("template", "match"),
    [
        ("{% for m in messages %}{{ m['content'] }", "does not compile"),
        ("{{ raise_exception('roles must alternate') }}", "roles must alternate"),
        ("{{ ''.__class__.__mro__ }}", "failed"),
        ("{{ messages.append(1) }}", "failed"),
    ],
)
def test_template_errors_are_typed(template, match):
    tok = tutorial_tokenizer()
    with pytest.raises(ChatTemplateError, match=match):
        tok.apply_chat_template([{"role": "user", "content": "hi"}], chat_template=template)


@pytest.mark.parametrize("messages", ["hello", [{"content": "x"}], [("user", "hi")]])
def test_malformed_messages_name_the_message(messages):
    with pytest.raises(ChatTemplateError, match="messages"):
        tutorial_tokenizer().apply_chat_template(messages)


def test_a_batch_of_conversations_is_told_to_pass_one():
    batch = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "yo"}]]
    with pytest.raises(ChatTemplateError, match=r"messages\[0\].*one conversation at a time"):
        tutorial_tokenizer().apply_chat_template(batch)


# Reads what it finds: messages without content, tools, documents, and a caller's variable.
TOOLING = (
    "{% if tools is not none %}TOOLS {{ tools | tojson }}\n{% endif %}"
    "{% if documents is not none %}{% for d in documents %}DOC {{ d.title }}: {{ d.text }}\n"
    "{% endfor %}{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}"
    "{% if m.content is defined %}\n{{ m.content }}{% endif %}"
    "{% for c in m.tool_calls or [] %}\nCALL {{ c.function.name }}"
    "({{ c.function.arguments | tojson }}){% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if mood is defined %}({{ mood }}) {% endif %}{% endif %}{{ eos_token }}"
)
WEATHER = {
    "type": "function",
    "function": {"name": "weather", "description": "a < b & c", "parameters": {}},
}


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"tools": [WEATHER]},
        {"tools": []},
        {"documents": [{"title": "Zürich", "text": "Lake <and> hills"}]},
        {"add_generation_prompt": True, "mood": "brief"},
        {"add_generation_prompt": True, "eos_token": "<pad>"},  # over the tokenizer's
    ],
)
def test_tools_documents_and_variables_render_as_in_transformers(saved, kw):
    tok, hf, _ = saved
    messages = [
        {"role": "user", "content": "Weather in Zürich?"},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Zürich"}}}],
        },
        {"role": "tool", "content": "21 °C"},
    ]
    text = hf.apply_chat_template(messages, chat_template=TOOLING, tokenize=False, **kw)
    assert "CALL weather" in text
    assert tok.apply_chat_template(messages, chat_template=TOOLING, tokenize=False, **kw) == text
    expected = hf.apply_chat_template(messages, chat_template=TOOLING, return_dict=False, **kw)
    assert tok.apply_chat_template(messages, chat_template=TOOLING, **kw) == expected


def test_tools_pick_the_configs_tool_use_template(saved, tmp_path):
    with_named_templates(saved, tmp_path, default=CLASSIC_CHATML, tool_use=TOOLING)
    tok, hf = bytepair.Tokenizer.load(tmp_path), auto_tokenizer(tmp_path)
    messages = [{"role": "user", "content": "hi"}]
    for tools in (None, [WEATHER]):
        text = hf.apply_chat_template(messages, tools=tools, tokenize=False)
        assert ("TOOLS" in text) == (tools is not None)
        assert tok.apply_chat_template(messages, tools=tools, tokenize=False) == text


def test_a_function_as_a_tool_is_told_to_be_a_json_schema():
    def weather(city: str) -> str:
        """The weather.

        Args:
            city: a city
        """
        return city

    tok = tutorial_tokenizer()
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(TypeError, match=r"tools\[1\] is the function weather.*get_json_schema"):
        tok.apply_chat_template(messages, chat_template=TOOLING, tools=[WEATHER, weather])
    with pytest.raises(TypeError, match="tools must be a list"):
        tok.apply_chat_template(messages, chat_template=TOOLING, tools=WEATHER)
    with pytest.raises(TypeError, match="documents must be a list of dicts"):
        tok.apply_chat_template(messages, chat_template=TOOLING, documents=["text"])


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"return_assistant_tokens_mask": True}, "return_assistant_mask=True"),
        ({"return_dict": True}, "returns the ids"),
        ({"padding": True}, "encode_batch_padded"),
        ({"max_length": 8}, "encode_batch_padded"),
        ({"return_tensors": "np"}, "numpy"),
    ],
)
def test_transformers_tokenizer_arguments_are_refused_not_passed_to_the_template(kw, match):
    # transformers uses these itself; given to the template, they would be silently unread.
    with pytest.raises(TypeError, match=match):
        tutorial_tokenizer().apply_chat_template([{"role": "user", "content": "hi"}], **kw)


def test_continue_final_message_leaves_the_final_message_open(saved):
    tok, hf, _ = saved
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, "}]
    text = tok.apply_chat_template(messages, continue_final_message=True, tokenize=False)
    assert text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello, "
    assert text == hf.apply_chat_template(messages, continue_final_message=True, tokenize=False)
    assert tok.decode(tok.apply_chat_template(messages, continue_final_message=True)) == text
    # The text of a list of blocks: its last block with a "text".
    blocks = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}, {"type": "image"}]
    parts = "{% for m in messages %}{% for b in m.content %}[{{ b.text }}]{% endfor %}{% endfor %}"
    block_messages = [{"role": "assistant", "content": blocks}]
    kw = {"chat_template": parts, "continue_final_message": True, "tokenize": False}
    assert tok.apply_chat_template(block_messages, **kw) == "[Hel][lo"
    assert hf.apply_chat_template(block_messages, **kw) == "[Hel][lo"


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"add_generation_prompt": True}, "pass one of them"),
        ({"return_assistant_mask": True}, "return_assistant_mask=True needs"),
    ],
)
def test_continue_final_message_refuses_what_transformers_refuses(kw, match):
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    with pytest.raises(ChatTemplateError, match=match):
        tutorial_tokenizer().apply_chat_template(messages, continue_final_message=True, **kw)


def test_continue_final_message_needs_text_the_template_renders():
    tok = tutorial_tokenizer()
    no_text = [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]
    with pytest.raises(ChatTemplateError, match="no text to continue"):
        tok.apply_chat_template(no_text, chat_template=TOOLING, continue_final_message=True)
    with pytest.raises(ChatTemplateError, match="does not render the final message"):
        tok.apply_chat_template(
            [{"role": "user", "content": "Hi"}],
            chat_template="{{ messages[0].content[:1] }}",
            continue_final_message=True,
        )


def test_mask_needs_tokenize():
    with pytest.raises(ChatTemplateError, match="needs tokenize=True"):
        tutorial_tokenizer().apply_chat_template(
            [{"role": "user", "content": "Hi"}], tokenize=False, return_assistant_mask=True
        )


def test_mask_refused_when_turns_render_differently_later():
    # Only the last message is rendered in full, so no prefix rule can find its turn.
    template = (
        "{% for m in messages %}<|im_start|>{{ m['content'] if loop.last else '...' }}"
        "<|im_end|>{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    tok = tutorial_tokenizer()
    with pytest.raises(ChatTemplateError, match=r"assistant message 1.*\{% generation %\}"):
        tok.apply_chat_template(messages, chat_template=template, return_assistant_mask=True)
    assert tok.decode(tok.apply_chat_template(messages, chat_template=template)) == (
        "<|im_start|>...<|im_end|><|im_start|>...<|im_end|><|im_start|>c<|im_end|>"
    )
