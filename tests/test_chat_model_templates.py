"""Chat templates of the kinds models ship, on Qwen3.5's and Llama 3's tokenizer.json: bytepair's
text and ids equal transformers' ``apply_chat_template`` on the same folder, for tools, assistant
tool calls without content, tool results, the template's own variables (``enable_thinking``),
``continue_final_message`` and ``tokenize=False``; and the assistant mask.

Two templates are written here in the style of the models' own: CHATML_TOOLS as Qwen3's (tools
as JSON schemas in the system turn, calls as ``<tool_call>`` JSON, results as a user turn of
``<tool_response>`` blocks, reasoning in ``<think>`` after the last user turn only,
``enable_thinking``) and HEADERS as Llama 3's (header tokens, trimmed contents, the bos token).
Both mark the assistant's turns with ``{% generation %}``; ``unmarked`` drops the marks.
mistral_common's templates for its tokenizer versions (tool-call ids, merged turns, macros,
``raise_exception``) come from its own ``generate_chat_template``, read from the installed package.
"""

from __future__ import annotations

import json
import random
import shutil
import string

import bytepair
import pytest
from model_files import build_llama3, build_qwen35
from tutorial_tokenizer import auto_tokenizer, documents

CHATML_TOOLS = r"""
{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content ~ '\n\n' }}
    {%- endif %}
    {{- '# Tools\n\nYou may call these functions, given as JSON schemas:\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' ~ tool | tojson }}
    {%- endfor %}
    {{- '\n</tools>\n\nCall one as <tool_call>\n{"name": <name>, "arguments": <object>}\n' }}
    {{- '</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' ~ messages[0].content ~ '<|im_end|>\n' }}
{%- endif %}
{%- set ns = namespace(last_query=-1) %}
{%- for message in messages %}
    {%- if message.role == 'user' %}
        {%- set ns.last_query = loop.index0 %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- set content = message.content if message.content is string else '' %}
    {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
        {{- '<|im_start|>' ~ message.role ~ '\n' ~ content ~ '<|im_end|>\n' }}
    {%- elif message.role == 'assistant' %}
        {%- set reasoning = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning = message.reasoning_content %}
        {%- endif %}
        {%- if '</think>' in content %}
            {%- set reasoning = reasoning or content.split('</think>')[0].split('<think>')[-1] %}
            {%- set content = content.split('</think>')[-1].lstrip('\n') %}
        {%- endif %}
        {{- '<|im_start|>assistant\n' }}
        {%- generation %}
        {%- if loop.index0 > ns.last_query and (reasoning or loop.last) %}
            {{- '<think>\n' ~ reasoning.strip('\n') ~ '\n</think>\n\n' }}
        {%- endif %}
        {{- content }}
        {%- for call in message.tool_calls or [] %}
            {%- set fn = call.function or call %}
            {%- if content or not loop.first %}
                {{- '\n' }}
            {%- endif %}
            {{- '<tool_call>\n{"name": "' ~ fn.name ~ '", "arguments": ' }}
            {{- fn.arguments if fn.arguments is string else fn.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>' }}
        {%- endgeneration %}
        {{- '\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or loop.previtem.role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' ~ content ~ '\n</tool_response>' }}
        {%- if loop.last or loop.nextitem.role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}
"""

HEADERS = r"""
{{- bos_token }}
{%- for message in messages %}
    {{- '<|start_header_id|>' ~ message.role ~ '<|end_header_id|>\n\n' }}
    {%- if message.role == 'assistant' %}
        {%- generation %}
        {{- message.content | trim ~ '<|eot_id|>' }}
        {%- endgeneration %}
    {%- else %}
        {{- message.content | trim ~ '<|eot_id|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
"""


def unmarked(template: str) -> str:
    """The template without its ``{% generation %}`` lines (each tag is on a line of its own,
    and the next tag strips the whitespace before it)."""
    lines = template.splitlines(keepends=True)
    plain = "".join(line for line in lines if "generation %}" not in line)
    assert len(lines) - len(plain.splitlines(keepends=True)) == 2 and "generation %}" not in plain
    return plain


MISTRAL_VERSIONS = ["v3", "v7", "v11", "v13"]


def mistral_template(version: str) -> str:
    """mistral_common's template for a Tekken tokenizer of this version (v13's with its
    [THINK] chunks), bos and eos as the tokenizer's variables."""
    from mistral_common.integrations.chat_templates.chat_templates import generate_chat_template
    from mistral_common.tokens.tokenizers.base import TokenizerVersion

    return generate_chat_template(
        spm=False,
        tokenizer_version=TokenizerVersion(version),
        image_support=False,
        audio_support=False,
        thinking_support=version == "v13",
        default_system_prompt=None,
        plain_thinking_support=False,
        use_special_token_variables=True,
        model_settings_fields=None,
        reasoning_effort_values=None,
        reasoning_effort_default=None,
    )


def template(name: str) -> str:
    if name.startswith("mistral_"):
        return mistral_template(name.removeprefix("mistral_"))
    return unmarked({"chatml_tools": CHATML_TOOLS, "headers": HEADERS}[name])


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city, in °C",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. Zürich"},
                    "unit": {"type": "string", "enum": ["c", "f"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": 'Searches the web: <fast> & "exact"',
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    },
]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """get(tokenizer, template) -> (bytepair.Tokenizer, transformers' AutoTokenizer), both
    loaded from one folder: Qwen3.5's or Llama 3's tokenizer.json and a tokenizer_config.json
    with the template."""
    built = {}
    files = {}

    def get(tokenizer, name):
        if (tokenizer, name) not in built:
            if tokenizer not in files:
                build = build_qwen35 if tokenizer == "qwen35" else build_llama3
                files[tokenizer] = build(tmp_path_factory.mktemp(tokenizer) / "tokenizer.json")
            folder = tmp_path_factory.mktemp(f"{tokenizer}_{name}")
            shutil.copy(files[tokenizer], folder / "tokenizer.json")
            if tokenizer == "qwen35":
                config = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
            else:
                config = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
            config["chat_template"] = template(name)
            config["tokenizer_class"] = "PreTrainedTokenizerFast"
            (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
            built[tokenizer, name] = (bytepair.Tokenizer.load(folder), auto_tokenizer(folder))
        return built[tokenizer, name]

    return get


def _texts(rng: random.Random, shortest: int = 0):
    docs = [d for d in documents() if len(d) >= shortest]

    def text(limit: int = 200) -> str:
        doc = rng.choice(docs)
        start = rng.randrange(len(doc) - shortest + 1)
        return doc[start : start + rng.randint(shortest, max(shortest, limit))]

    return text


def tool_conversations(count: int, seed: int, *, content_with_calls=True, shortest=0):
    """Conversations with tool rounds: an assistant turn of tool calls (most without a
    'content' key, none with one unless content_with_calls; arguments as a dict or a JSON
    string; each call with a 9-character id), a 'tool' message per call (its tool_call_id; some
    results numbers), then an answer (some with reasoning, as 'reasoning_content' or inside
    <think>). Texts have at least ``shortest`` characters."""
    rng = random.Random(seed)
    text = _texts(rng, shortest)
    for _ in range(count):
        messages = []
        if rng.random() < 0.5:
            messages.append({"role": "system", "content": text()})
        for _ in range(rng.randint(1, 3)):
            messages.append({"role": "user", "content": text()})
            for _ in range(rng.randint(0, 2)):
                calls = []
                for _ in range(rng.randint(1, 2)):
                    if rng.random() < 0.5:
                        call = {"name": "get_weather", "arguments": {"city": text(30)}}
                    else:
                        query = json.dumps({"query": text(30)}, ensure_ascii=False)
                        call = {"name": "search", "arguments": query}
                    call_id = "".join(rng.choices(string.ascii_letters + string.digits, k=9))
                    calls.append({"id": call_id, "type": "function", "function": call})
                turn = {"role": "assistant", "tool_calls": calls}
                if content_with_calls and rng.random() < 0.3:
                    turn["content"] = text()
                messages.append(turn)
                for call in calls:
                    result = text() if rng.random() < 0.8 else rng.choice(["21", "-3.5", "007"])
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            answer = {"role": "assistant", "content": text()}
            r = rng.random()
            if r < 0.3:
                answer["reasoning_content"] = text()
            elif r < 0.5:
                answer["content"] = f"<think>\n{text()}\n</think>\n\n{answer['content']}"
            messages.append(answer)
        if rng.random() < 0.5:
            messages.pop()  # ends on the user's message or the tools' results
        yield messages


def plain_conversations(count: int, seed: int):
    """system?, then user and assistant turns, starting with the user."""
    rng = random.Random(seed)
    text = _texts(rng)
    for _ in range(count):
        messages = [{"role": "system", "content": text()}] if rng.random() < 0.4 else []
        for i in range(rng.randint(1, 6)):
            role = "user" if i % 2 == 0 else "assistant"
            messages.append({"role": role, "content": rng.choice(["", " ", "\n"]) + text()})
        yield messages


def same_as_transformers(tok, hf, messages, **kw) -> str:
    """Asserts bytepair's rendered text and ids equal transformers' for one call; the text."""
    text = hf.apply_chat_template(messages, tokenize=False, **kw)
    assert tok.apply_chat_template(messages, tokenize=False, **kw) == text
    expected = hf.apply_chat_template(messages, return_dict=False, **kw)
    assert tok.apply_chat_template(messages, **kw) == expected
    return text


def test_tools_and_tool_calls_equal_transformers(model):
    tok, hf = model("qwen35", "chatml_tools")
    rng = random.Random(7)
    calls = without_content = 0
    for messages in tool_conversations(40, seed=0):
        for tools in (TOOLS, None):
            kw = {"tools": tools, "add_generation_prompt": rng.random() < 0.5}
            kw.update(rng.choice([{}, {"enable_thinking": False}, {"enable_thinking": True}]))
            text = same_as_transformers(tok, hf, messages, **kw)
            assert ("<tools>" in text) == (tools is not None)
            calls += text.count("<tool_call>\n{")
        without_content += sum(1 for m in messages if "content" not in m)
    assert calls > 20 and without_content > 10


def test_enable_thinking_false_closes_an_empty_think_block(model):
    tok, hf = model("qwen35", "chatml_tools")
    messages = [{"role": "user", "content": "Hi"}]
    text = tok.apply_chat_template(
        messages, add_generation_prompt=True, enable_thinking=False, tokenize=False
    )
    assert text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, enable_thinking=False)
    assert ids == hf.apply_chat_template(
        messages, add_generation_prompt=True, enable_thinking=False, return_dict=False
    )
    assert tok.decode(ids) == text
    assert tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False) == (
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )


def test_tool_call_turn_without_content(model):
    tok, _ = model("qwen35", "chatml_tools")
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": "21"},
    ]
    text = tok.apply_chat_template(messages, tools=TOOLS, tokenize=False)
    assert text.endswith(
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\n21\n</tool_response><|im_end|>\n"
    )
    assert json.dumps(TOOLS[1], ensure_ascii=False) in text  # tojson as json.dumps, unescaped


def test_assistant_mask_with_tools_equals_transformers(model):
    tok, hf = model("qwen35", "chatml_tools")
    masked = 0
    for n, messages in enumerate(tool_conversations(30, seed=1)):
        kw = {"chat_template": CHATML_TOOLS, "tools": TOOLS, "add_generation_prompt": n % 2 == 1}
        if n % 3 == 0:
            kw["enable_thinking"] = False
        out = hf.apply_chat_template(messages, return_assistant_tokens_mask=True, **kw)
        got = tok.apply_chat_template(messages, return_assistant_mask=True, **kw)
        assert got == (out["input_ids"], out["assistant_masks"]), messages
        masked += sum(got[1])
    assert masked > 1000


@pytest.mark.parametrize(
    ("tokenizer", "name"),
    [("qwen35", "chatml_tools"), ("llama3", "headers"), ("llama3", "mistral_v13")],
)
def test_continue_final_message_equals_transformers(model, tokenizer, name):
    tok, hf = model(tokenizer, name)
    rng = random.Random(3)
    text = _texts(rng, shortest=1)
    prefixes = ["The weather in Paris is", "The weather in Paris is ", "Sure:\n", "", "你好"]
    for prefix in prefixes + [text() for _ in range(20)]:
        messages = [
            {"role": "user", "content": text()},
            {"role": "assistant", "content": prefix},
        ]
        rendered = same_as_transformers(tok, hf, messages, continue_final_message=True)
        assert rendered.rstrip().endswith(prefix.strip())


def test_headers_equal_transformers_and_their_mask_the_marked_template(model):
    tok, hf = model("llama3", "headers")
    masked = 0
    for n, messages in enumerate(plain_conversations(60, seed=2)):
        prompt = n % 2 == 0
        text = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=prompt)
        assert text.startswith("<|begin_of_text|><|start_header_id|>")
        assert tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=prompt) == (
            text
        )
        # The configured template has no marks: bytepair's prefix rule finds each assistant
        # turn, and transformers' marks in the marked one say the same.
        out = hf.apply_chat_template(
            messages,
            chat_template=HEADERS,
            add_generation_prompt=prompt,
            return_assistant_tokens_mask=True,
        )
        got = tok.apply_chat_template(
            messages, add_generation_prompt=prompt, return_assistant_mask=True
        )
        assert got == (out["input_ids"], out["assistant_masks"]), messages
        assert got[0] == hf.apply_chat_template(
            messages, add_generation_prompt=prompt, return_dict=False
        )
        masked += sum(got[1])
    assert masked > 500


@pytest.mark.parametrize("version", MISTRAL_VERSIONS)
def test_mistral_common_templates_equal_transformers(model, version):
    tok, hf = model("llama3", f"mistral_{version}")
    rng = random.Random(5)
    calls = 0
    # v3's template refuses an assistant turn with both content and tool calls; all refuse
    # empty contents.
    conversations = tool_conversations(30, seed=4, content_with_calls=version != "v3", shortest=1)
    for messages in conversations:
        for tools in (TOOLS, None):
            kw = {"tools": tools, "add_generation_prompt": rng.random() < 0.5}
            text = same_as_transformers(tok, hf, messages, **kw)
            assert ("[AVAILABLE_TOOLS]" in text) == (tools is not None)
            calls += text.count("[TOOL_CALLS]")
    assert calls > 20
