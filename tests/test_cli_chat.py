"""`bytepair tokenize -t FILE --chat conversation.json`: roles, tokens and the assistant
mask, the mask checked against transformers on the same saved tokenizer."""

from __future__ import annotations

import json

import pytest
from bytepair.cli import main
from tutorial_tokenizer import auto_tokenizer, tutorial_tokenizer

CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Name a colour"},
    {"role": "assistant", "content": "Blue, 蓝色."},
    {"role": "user", "content": "Another?"},
    {"role": "assistant", "content": " Red\nand green "},
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli-chat")
    tutorial_tokenizer().save(directory)
    (directory / "conversation.json").write_text(json.dumps(CONVERSATION), "utf-8")
    return directory


def test_tokenize_chat_shows_roles_and_the_mask(folder, capsys):
    code = main(["tokenize", "-t", str(folder), "--chat", str(folder / "conversation.json")])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    roles = [line.split()[0] for line in lines if not line.startswith(" ")][:-1]
    assert roles == [m["role"] for m in CONVERSATION]
    shown = [int(x) for line in lines if line.strip().startswith("mask:") for x in line.split()[1:]]
    hf = auto_tokenizer(folder).apply_chat_template(
        CONVERSATION, tokenize=True, return_assistant_tokens_mask=True
    )
    # Mask lines are printed for the assistant rows only; their ones are all of the mask.
    assert sum(shown) == sum(hf["assistant_masks"]) > 0
    assert lines[-1] == (
        f"{len(hf['input_ids'])} tokens, {sum(hf['assistant_masks'])} in the assistant mask"
    )


def test_tokenize_chat_with_a_template_file(folder, tmp_path, capsys):
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m['content'] }}|{% endfor %}", "utf-8")
    args = ["tokenize", "-t", str(folder), "--chat", str(folder / "conversation.json")]
    assert main([*args, "--chat-template", str(template)]) == 0
    out = capsys.readouterr().out
    # Unmarked, the mask is what each assistant turn adds; the same template with marks
    # around that, through transformers, is the oracle.
    marked = (
        "{% for m in messages %}{% if m['role'] == 'assistant' %}{% generation %}"
        "{{ m['content'] }}|{% endgeneration %}{% else %}{{ m['content'] }}|{% endif %}"
        "{% endfor %}"
    )
    hf = auto_tokenizer(folder).apply_chat_template(
        CONVERSATION, chat_template=marked, return_assistant_tokens_mask=True
    )
    expected = f"{len(hf['input_ids'])} tokens, {sum(hf['assistant_masks'])} in the assistant mask"
    assert out.splitlines()[-1] == expected


def test_tokenize_chat_errors_are_one_line(folder, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[{", "utf-8")
    assert main(["tokenize", "-t", str(folder), "--chat", str(bad)]) == 2
    assert "bad.json: not valid JSON" in capsys.readouterr().err
    bad.write_text(json.dumps({"messages": [{"content": "hi"}]}), "utf-8")
    assert main(["tokenize", "-t", str(folder), "--chat", str(bad)]) == 2
    assert "messages[0]" in capsys.readouterr().err
    # A message without the content the template reads fails in the template, as in
    # transformers.
    bad.write_text(json.dumps({"messages": [{"role": "user"}]}), "utf-8")
    assert main(["tokenize", "-t", str(folder), "--chat", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the chat template failed" in err and "content" in err
    # A template path that does not exist is an error, not template text.
    args = ["tokenize", "-t", str(folder), "--chat", str(folder / "conversation.json")]
    missing = str(tmp_path / "missing.jinja")
    assert main([*args, "--chat-template", missing]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--chat-template {missing}: no such file" in err


def test_chat_without_jinja2_is_one_line_saying_what_to_install(folder, tmp_path):
    import subprocess
    import sys

    from cli_run import assert_usage_error

    code = (
        "import sys; sys.modules['jinja2'] = None\n"
        "from bytepair.cli import main\n"
        "sys.exit(main(sys.argv[1:]))"
    )
    args = ["tokenize", "-t", str(folder), "--chat", str(folder / "conversation.json")]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, timeout=300)
    assert_usage_error(proc, "pip install 'bytepair[chat]'")


def test_chat_template_without_chat_is_an_error(folder, tmp_path, capsys):
    # --chat-template is read only with --chat: without it, tokenize used to ignore it (even
    # a missing file) and show the text as if no template had been asked for.
    missing = str(tmp_path / "missing.jinja")
    assert main(["tokenize", "-t", str(folder), "--chat-template", missing, "hi"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "--chat-template" in captured.err
    assert "--chat" in captured.err.replace("--chat-template", "")
