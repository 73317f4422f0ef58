"""Qwen3's and Llama 3's own chat templates on Qwen3.5's and Llama 3's tokenizer.json: bytepair's
text and ids equal transformers' ``apply_chat_template`` on the same folder, for tools, assistant
tool calls without content, tool results, the template's own variables (``enable_thinking``),
``continue_final_message`` and ``tokenize=False``; and the assistant mask.

The templates in tests/test_chat_templates/ are TRL's verbatim copies (huggingface/trl,
trl/chat_templates/): ``qwen3.jinja`` and ``llama3.jinja`` as the models ship them, and their
``*_training.jinja`` variants, which add ``{% generation %}`` marks.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import bytepair
import pytest
from model_files import build_llama3, build_qwen35
from tutorial_tokenizer import auto_tokenizer, documents

TEMPLATES = Path(__file__).resolve().parent / "test_chat_templates"
SHA256 = {
    "qwen3": "a55ee1b1660128b7098723e0abcd92caa0788061051c62d51cbe87d9cf1974d8",
    "qwen3_training": "60135ba8d8fa1fec902b8e617c137a92959ac92e8d725d1fe192f7e26d4f9e40",
    "llama3": "ba03a121d097859c7b5b9cd03af99aafe95275210d2876f642ad9929a150f122",
    "llama3_training": "9dce981e2954cf77d4d0ad2dbacf8006a5fda34a0bdf4923075a933d08b69470",
}

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


def template(name: str) -> str:
    data = (TEMPLATES / f"{name}.jinja").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256[name], f"{name}.jinja was changed"
    return data.decode("utf-8")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """get(name) -> (bytepair.Tokenizer, transformers' AutoTokenizer), both loaded from one
    folder: the model's tokenizer.json and a tokenizer_config.json with its template."""
    built = {}

    def get(name):
        if name not in built:
            folder = tmp_path_factory.mktemp(name)
            if name == "qwen3":
                build_qwen35(folder / "tokenizer.json")
                config = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
            else:
                build_llama3(folder / "tokenizer.json")
                config = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
            config["chat_template"] = template(name)
            config["tokenizer_class"] = "PreTrainedTokenizerFast"
            (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
            built[name] = (bytepair.Tokenizer.load(folder), auto_tokenizer(folder))
        return built[name]

    return get


def _texts(rng: random.Random):
    docs = documents()

    def text(limit: int = 200) -> str:
        doc = rng.choice(docs)
        start = rng.randrange(len(doc) + 1)
        return doc[start : start + rng.randint(0, limit)]

    return text


def tool_conversations(count: int, seed: int):
    """Conversations with tool rounds: an assistant turn of tool calls (most without a
    'content' key; arguments as a dict or a JSON string), a 'tool' message per call, then an
    answer (some with reasoning, as 'reasoning_content' or inside <think>)."""
    rng = random.Random(seed)
    text = _texts(rng)
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
                    calls.append({"type": "function", "function": call})
                turn = {"role": "assistant", "tool_calls": calls}
                if rng.random() < 0.3:
                    turn["content"] = text()
                messages.append(turn)
                messages.extend({"role": "tool", "content": text()} for _ in calls)
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


def test_the_templates_are_the_published_ones():
    qwen3 = template("qwen3")
    assert "enable_thinking is defined and enable_thinking is false" in qwen3
    assert "tool_call.arguments | tojson" in qwen3
    assert template("llama3").startswith("{% set loop_messages = messages %}")
    for name in ("qwen3_training", "llama3_training"):
        assert "{% generation %}" in template(name).replace("{%- generation", "{% generation")


def test_qwen3_tools_and_tool_calls_equal_transformers(model):
    tok, hf = model("qwen3")
    rng = random.Random(7)
    calls = without_content = 0
    for messages in tool_conversations(40, seed=0):
        for tools in (TOOLS, None):
            kw = {"tools": tools, "add_generation_prompt": rng.random() < 0.5}
            kw.update(rng.choice([{}, {"enable_thinking": False}, {"enable_thinking": True}]))
            text = hf.apply_chat_template(messages, tokenize=False, **kw)
            assert tok.apply_chat_template(messages, tokenize=False, **kw) == text
            expected = hf.apply_chat_template(messages, return_dict=False, **kw)
            assert tok.apply_chat_template(messages, **kw) == expected
            assert ("<tools>" in text) == (tools is not None)
            calls += text.count("<tool_call>\n{")
        without_content += sum(1 for m in messages if "content" not in m)
    assert calls > 20 and without_content > 10


def test_qwen3_enable_thinking_false_closes_an_empty_think_block(model):
    tok, hf = model("qwen3")
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


def test_qwen3_tool_call_turn_without_content(model):
    tok, _ = model("qwen3")
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


def test_qwen3_assistant_mask_with_tools_equals_transformers(model):
    tok, hf = model("qwen3")
    marked = template("qwen3_training")
    masked = 0
    for n, messages in enumerate(tool_conversations(30, seed=1)):
        kw = {"chat_template": marked, "tools": TOOLS, "add_generation_prompt": n % 2 == 1}
        if n % 3 == 0:
            kw["enable_thinking"] = False
        out = hf.apply_chat_template(messages, return_assistant_tokens_mask=True, **kw)
        got = tok.apply_chat_template(messages, return_assistant_mask=True, **kw)
        assert got == (out["input_ids"], out["assistant_masks"]), messages
        masked += sum(got[1])
    assert masked > 1000


@pytest.mark.parametrize("name", ["qwen3", "llama3"])
def test_continue_final_message_equals_transformers(model, name):
    tok, hf = model(name)
    rng = random.Random(3)
    text = _texts(rng)
    prefixes = ["The weather in Paris is", "The weather in Paris is ", "Sure:\n", "", "你好"]
    for prefix in prefixes + [text() for _ in range(20)]:
        messages = [
            {"role": "user", "content": text()},
            {"role": "assistant", "content": prefix},
        ]
        kw = {"continue_final_message": True}
        expected_text = hf.apply_chat_template(messages, tokenize=False, **kw)
        assert tok.apply_chat_template(messages, tokenize=False, **kw) == expected_text
        assert expected_text.rstrip().endswith(prefix.strip())
        expected = hf.apply_chat_template(messages, return_dict=False, **kw)
        assert tok.apply_chat_template(messages, **kw) == expected


def test_llama3_equals_transformers_and_its_mask_the_marked_template(model):
    tok, hf = model("llama3")
    marked = template("llama3_training")
    masked = 0
    for n, messages in enumerate(plain_conversations(60, seed=2)):
        prompt = n % 2 == 0
        text = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=prompt)
        assert text.startswith("<|begin_of_text|><|start_header_id|>")
        assert tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=prompt) == (
            text
        )
        # The published template has no marks: bytepair's prefix rule finds each assistant
        # turn, and transformers' marks in TRL's marked copy say the same.
        out = hf.apply_chat_template(
            messages,
            chat_template=marked,
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
