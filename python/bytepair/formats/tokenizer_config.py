"""HuggingFace's ``tokenizer_config.json``: the bos, eos, pad and unk tokens and the chat
template that transformers reads beside a ``tokenizer.json``.

A tokenizer loaded from a ``tokenizer.json`` takes the config beside it; otherwise each
token is the special token with the conventional name (``<pad>``, ``<unk>``, ...), when the
tokenizer has one:

>>> inferred({"<|endoftext|>": 256, "<pad>": 257})
TokenizerConfig(bos_token=None, eos_token='<|endoftext|>', pad_token='<pad>', unk_token=None, chat_template=None, model_max_length=None)
"""  # noqa: E501

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping

from bytepair.errors import FormatError
from bytepair.formats import tokenizer_data
from bytepair.formats.jsonfile import read_json

CONFIG_NAME = "tokenizer_config.json"
TOKENIZER_NAME = "tokenizer.json"
#: transformers (v4.43 on) saves a single template in this file beside the config.
JINJA_NAME = "chat_template.jinja"
#: ... and the named others as <name>.jinja in this folder (the one above is "default").
JINJA_DIR = "additional_chat_templates"

TOKEN_KEYS = ("bos_token", "eos_token", "pad_token", "unk_token")

# The names by which the tutorials' tokenizers and common model files spell each token.
_CONVENTIONAL = {
    "bos_token": ("<s>", "<bos>", "<|begin_of_text|>", "<|startoftext|>"),
    "eos_token": ("<|endoftext|>", "</s>", "<eos>", "<|end_of_text|>"),
    "pad_token": ("<pad>", "<|pad|>", "[PAD]", "<|padding|>"),
    "unk_token": ("<unk>", "<|unk|>", "[UNK]"),
}


@dataclasses.dataclass(frozen=True)
class TokenizerConfig:
    """The tokens transformers names and the chat template: a template string, or a dict
    of name to template (a config's list of named templates)."""

    bos_token: str | None = None
    eos_token: str | None = None
    pad_token: str | None = None
    unk_token: str | None = None
    chat_template: str | Mapping[str, str] | None = None
    #: transformers' default limit for truncation and padding="max_length" (None: none).
    model_max_length: int | None = None

    def tokens(self) -> dict[str, str]:
        """The tokens that are set, by key, as a chat template sees them.

        >>> TokenizerConfig(eos_token="</s>").tokens()
        {'eos_token': '</s>'}
        """
        return {k: getattr(self, k) for k in TOKEN_KEYS if getattr(self, k) is not None}


def inferred(special_tokens: Mapping[str, int]) -> TokenizerConfig:
    """The config a tokenizer without a tokenizer_config.json has: each token is the first
    conventionally named special token it has, and no chat template."""
    found = {}
    for key, names in _CONVENTIONAL.items():
        found[key] = next((n for n in names if n in special_tokens), None)
    return TokenizerConfig(**found)


def effective(given: TokenizerConfig | None, special_tokens: Mapping[str, int]) -> TokenizerConfig:
    """``given`` (a loaded config), each missing token filled in as ``inferred`` finds it."""
    guess = inferred(special_tokens)
    if given is None:
        return guess
    filled = {k: getattr(given, k) or getattr(guess, k) for k in TOKEN_KEYS}
    return dataclasses.replace(given, **filled)


# -- reading ------------------------------------------------------------------------------


def _token(value: object, where: str) -> str | None:
    """A token as a config stores it: a string, or an AddedToken object with "content"."""
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"] or None
    raise FormatError(
        f'{where}: {value!r} is not a token; expected a string or an object with a "content" string'
    )


def _template(value: object, where: str) -> str | dict[str, str] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        named = {}
        for n, item in enumerate(value):
            if not (
                isinstance(item, dict)
                and isinstance(item.get("name"), str)
                and isinstance(item.get("template"), str)
            ):
                raise FormatError(
                    f"{where}[{n}]: {item!r}; expected an object with a string "
                    '"name" and a string "template"'
                )
            named[item["name"]] = item["template"]
        return named
    raise FormatError(
        f"{where}: {type(value).__name__}; expected a Jinja template string or a list of "
        '{"name": ..., "template": ...} objects'
    )


def read(path: str | os.PathLike) -> TokenizerConfig:
    """A tokenizer_config.json's tokens and chat template (other keys are not used)."""
    name = os.fspath(path)
    doc = read_json(path, "a tokenizer_config.json object")
    if not isinstance(doc, dict):
        raise FormatError(f"{name}: expected a JSON object, got {type(doc).__name__}")
    tokens = {k: _token(doc.get(k), f"{name}: {k}") for k in TOKEN_KEYS}
    limit = doc.get("model_max_length")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))):
        raise FormatError(f"{name}: model_max_length: {limit!r}; expected a number")
    # transformers reads anything above 1e20 (it saves 1e30 for no limit) as no limit.
    limit = None if limit is None or limit > 10**20 else int(limit)
    return TokenizerConfig(
        **tokens,
        chat_template=_template(doc.get("chat_template"), f"{name}: chat_template"),
        model_max_length=limit,
    )


def beside(tokenizer_json: str | os.PathLike) -> TokenizerConfig | None:
    """The config in the folder of a file named tokenizer.json, or None when there is none
    (or the file has another name: see ``config_file``). Templates in ``chat_template.jinja``
    and ``additional_chat_templates/*.jinja`` there beat the config's, as in transformers."""
    if os.path.basename(os.fspath(tokenizer_json)) != TOKENIZER_NAME:
        return None
    folder = os.path.dirname(os.path.abspath(tokenizer_json))
    config_path = os.path.join(folder, CONFIG_NAME)
    files = _template_files(folder)
    if not os.path.isfile(config_path) and not files:
        return None
    config = read(config_path) if os.path.isfile(config_path) else TokenizerConfig()
    if files:
        # transformers' rule: the files replace the config's template; "default" alone is
        # the one unnamed template.
        template = files["default"] if list(files) == ["default"] else files
        config = dataclasses.replace(config, chat_template=template)
    return config


def _template_paths(folder: str) -> dict[str, str]:
    """The files in which transformers saves templates in ``folder``, by template name."""
    paths = {}
    if os.path.isfile(os.path.join(folder, JINJA_NAME)):
        paths["default"] = os.path.join(folder, JINJA_NAME)
    named = os.path.join(folder, JINJA_DIR)
    if os.path.isdir(named):
        for name in sorted(os.listdir(named)):
            path = os.path.join(named, name)
            if name.endswith(".jinja") and os.path.isfile(path):
                paths[name.removesuffix(".jinja")] = path
    return paths


def _template_files(folder: str) -> dict[str, str]:
    """The templates transformers saves as files in ``folder``, by name."""
    templates = {}
    for name, path in _template_paths(folder).items():
        with open(path, encoding="utf-8") as f:
            templates[name] = f.read()
    return templates


# -- writing ------------------------------------------------------------------------------


def to_json(config: TokenizerConfig) -> dict:
    """The tokenizer_config.json document that transformers' AutoTokenizer loads.

    ``PreTrainedTokenizerFast`` runs the tokenizer.json as written; spaces before
    punctuation are kept on decode (``clean_up_tokenization_spaces``), as bytepair does.

    >>> to_json(TokenizerConfig(pad_token="<pad>"))["pad_token"]
    '<pad>'
    """
    doc: dict = {"tokenizer_class": "PreTrainedTokenizerFast"}
    doc["clean_up_tokenization_spaces"] = False
    doc.update(config.tokens())
    if config.model_max_length is not None:
        doc["model_max_length"] = config.model_max_length
    template = config.chat_template
    if isinstance(template, Mapping):
        doc["chat_template"] = [{"name": k, "template": v} for k, v in template.items()]
    elif template is not None:
        doc["chat_template"] = template
    return doc


def tokenizer_json_path(path: str | os.PathLike) -> str:
    """Where ``save`` writes the tokenizer.json: inside ``path`` when it is a folder or ends
    with a slash (created if missing), else ``path`` itself."""
    name = os.fspath(path)
    if name.endswith(("/", os.sep)) or os.path.isdir(name):
        os.makedirs(name, exist_ok=True)
        return os.path.join(name, TOKENIZER_NAME)
    return name


def config_file(data, tokenizer_json: str) -> dict[str, bytes]:
    """The tokenizer_config.json that ``save`` writes for ``data`` (a ``TokenizerData``, or
    a Tokenizer) beside a file named tokenizer.json (transformers' layout), as
    ``{path: content}`` for ``atomic.write_files`` with the tokenizer.json; a tokenizer.json
    saved under another name gets none, so that two tokenizers saved in one folder never
    share (and overwrite) one config.

    A config already there is merged into, not replaced: the keys bytepair writes are
    updated (the bos, eos, pad and unk tokens become ``to_save(data)``'s, set or left
    out), and every other key (``model_max_length``, ``add_bos_token``, ...) is kept, as is
    its chat template when ``data`` has none of its own.

    >>> import bytepair, pathlib, tempfile
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["</s>"])
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / CONFIG_NAME).write_text('{"model_max_length": 8, "pad_token": "<p>"}')
    >>> doc = json.loads(config_file(tok, str(folder / TOKENIZER_NAME))[str(folder / CONFIG_NAME)])
    >>> doc["model_max_length"], doc["eos_token"], "pad_token" in doc
    (8, '</s>', False)
    """
    data = tokenizer_data.of(data)
    config = to_save(data)
    own = effective(data.config, dict(data.special_tokens or {})).chat_template
    return _merged_beside(config, tokenizer_json, keep_template=own is None)


def _merged_beside(config: TokenizerConfig, tokenizer_json: str, keep_template: bool):
    if os.path.basename(tokenizer_json) != TOKENIZER_NAME:
        return {}
    folder = os.path.dirname(os.path.abspath(tokenizer_json))
    config_path = os.path.join(folder, CONFIG_NAME)
    doc = _existing(config_path)
    in_files = bool(_template_paths(folder))
    if keep_template and (in_files or doc.get("chat_template") is not None):
        config = dataclasses.replace(config, chat_template=None)  # the one there stays
    files = {}
    if in_files and config.chat_template is not None:
        # transformers reads template files before the config, so a template written only
        # to the config would be ignored: it goes into the files, as transformers saves it.
        files = _as_template_files(folder, config.chat_template)
        doc.pop("chat_template", None)
        config = dataclasses.replace(config, chat_template=None)
    for key in TOKEN_KEYS:
        doc.pop(key, None)
    doc.update(to_json(config))
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    return {config_path: text.encode("utf-8"), **files}


def _as_template_files(folder: str, template: str | Mapping[str, str]) -> dict[str, bytes]:
    """``template`` in transformers' files: the one template (or "default") in
    chat_template.jinja, each other named one in additional_chat_templates/."""
    named = template if isinstance(template, Mapping) else {"default": template}
    files = {}
    for name, text in named.items():
        if name == "default":
            path = os.path.join(folder, JINJA_NAME)
        else:
            os.makedirs(os.path.join(folder, JINJA_DIR), exist_ok=True)  # written into next
            path = os.path.join(folder, JINJA_DIR, f"{name}.jinja")
        files[path] = text.encode("utf-8")
    return files


def _existing(config_path: str) -> dict:
    """The config already at ``config_path`` to merge into (empty if none)."""
    if not os.path.exists(config_path):
        return {}
    doc = read_json(config_path, "a tokenizer_config.json object")
    if not isinstance(doc, dict):
        raise FormatError(
            f"{config_path}: expected a JSON object, got {type(doc).__name__}; saving keeps "
            "the keys of the config already there, so fix or remove this file first"
        )
    return doc


def to_save(data) -> TokenizerConfig:
    """The config ``save`` writes for ``data`` (a ``TokenizerData``, or a Tokenizer): its
    own, with the chat template it renders with (the built-in ChatML when it has ChatML's
    special tokens and no template)."""
    from bytepair import chat_template

    data = tokenizer_data.of(data)
    config = effective(data.config, dict(data.special_tokens or {}))
    template = chat_template.template_of(config.chat_template, data.special_tokens)
    return dataclasses.replace(config, chat_template=template)
