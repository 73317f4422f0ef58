"""Shared test data: the corpora and fixtures in ../shared, tiktoken loading offline, a small
trained tokenizer and the reference's merges, and tokenizer files trained through the CLI.

The shared folder is beside the repository (CI has it). A test that needs it fails with a
clear message when it is missing; it is never skipped, because a skip is not a pass.
"""

from __future__ import annotations

import lzma
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from cli_run import CAT, ok, run
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared"))
CS336 = SHARED / "fixtures" / "cs336"
CORPORA = ("en-prose", "zh-prose", "code", "multilingual", "tinystories")
EOT = "<|endoftext|>"

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def shared(*parts: str) -> Path:
    """A path under ../shared; fails the test (not skips it) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"missing shared test data {path}; set BYTEPAIR_SHARED to the shared folder")
    return path


@cache
def corpus_sample(name: str, nbytes: int = 200_000) -> bytes:
    """The first `nbytes` of a shared corpus, cut back to a whole line."""
    with lzma.open(shared("corpora", f"{name}.txt.xz")) as f:
        data = f.read(nbytes)
    cut = data.rfind(b"\n")
    return data[: cut + 1] if cut > 0 else data


@cache
def _corpus_lines(name: str) -> list[bytes]:
    with lzma.open(shared("corpora", f"{name}.txt.xz")) as f:
        return f.read().splitlines(keepends=True)


@cache
def corpus_documents(name: str, count: int = 200, lines: int = 20) -> tuple[bytes, ...]:
    """`count` documents of `lines` lines drawn from across the whole of a shared corpus:
    the corpus's lines cut into `count` equal strata, one document starting at a seeded
    random line of each. `multilingual` is grouped by language, so a prefix would see only
    its first languages; strata see every part of every corpus."""
    import random

    all_lines = _corpus_lines(name)
    rng = random.Random(f"{name}/{count}/{lines}")
    stratum = max(1, (len(all_lines) - lines) // count)
    docs = []
    for i in range(count):
        start = min(i * stratum + rng.randrange(stratum), max(0, len(all_lines) - lines))
        docs.append(b"".join(all_lines[start : start + lines]))
    return tuple(docs)


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory) -> Path:
    """Makes tiktoken.get_encoding work offline for gpt2, r50k_base, cl100k_base, o200k_base."""
    cache_dir = tmp_path_factory.mktemp("tiktoken-cache")
    # TIKTOKEN_CACHE_DIR="" turns tiktoken's own cache off in the script: otherwise a
    # filled default cache (/tmp/data-gym-cache) is read instead and cache_dir stays empty.
    subprocess.run(
        [sys.executable, str(shared("fixtures", "tiktoken_offline.py")), str(cache_dir)],
        check=True,
        capture_output=True,
        env={**os.environ, "TIKTOKEN_CACHE_DIR": ""},
    )
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return cache_dir


@pytest.fixture(scope="session")
def tiktoken_encoding(tiktoken_cache):
    """get(name) -> tiktoken.Encoding, loaded offline from ../shared."""
    import tiktoken

    return tiktoken.get_encoding


# -- a small trained tokenizer and the reference's merges ------------------------------------


@cache
def small_tokenizer():
    """A small trained tokenizer with one special token: vocab 400, trained on 60 KB of
    English prose (the tests of edge inputs, ids, special tokens and damaged files)."""
    import bytepair

    data = corpus_sample("en-prose", 60_000).decode("utf-8")
    return bytepair.train([data], vocab_size=400, special_tokens=[EOT], progress=False)


def reference_merges(data: bytes, vocab_size: int, special_tokens=(), pattern="gpt2"):
    """The merges bytepair.reference learns from one document, warnings silenced."""
    import warnings

    from bytepair import reference
    from bytepair.errors import TrainingWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        counts = reference.count_pretokens(data, pattern, special_tokens)
        return reference.train_from_counts(counts, vocab_size - 256 - len(special_tokens))


# -- tiktoken's vocabularies, in tiktoken and in bytepair ------------------------------------


def non_ascii_tokens(ranks: dict[bytes, int]) -> list[str]:
    """The tokens of a rank table with a multi-byte character that are whole characters, as
    text."""
    out = []
    for token in ranks:
        if not token.isascii():
            try:
                out.append(token.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


@pytest.fixture(scope="session")
def tiktoken_pair(tiktoken_encoding):
    """pair(name) -> (tiktoken.Encoding, bytepair.Tokenizer on the same ranks, specials and
    pattern), each built once per session (o200k takes a second)."""
    from bytepair import Tokenizer

    built = {}

    def get(name):
        if name not in built:
            enc = tiktoken_encoding(name)
            vocab = {rank: token for token, rank in enc._mergeable_ranks.items()}
            tok = Tokenizer(vocab, None, special_tokens=enc._special_tokens, pattern=name)
            built[name] = (enc, tok)
        return built[name]

    return get


# -- tokenizer files trained through the CLI (tests/test_cli*.py) ---------------------------


@pytest.fixture(scope="module")
def en_corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "en.txt"
    path.write_bytes(corpus_sample("en-prose", 60_000))
    return path


@pytest.fixture(scope="module")
def en_tok(tmp_path_factory, en_corpus) -> Path:
    """A 320-token tokenizer trained through the CLI on English prose, with a special token."""
    out = tmp_path_factory.mktemp("tok") / "en.json"
    ok(
        run(
            "train",
            en_corpus,
            "-o",
            out,
            "--vocab-size",
            320,
            "--special-token",
            "<|endoftext|>",
            "--quiet",
        )
    )
    return out


@pytest.fixture(scope="module")
def cat_tok(tmp_path_factory) -> Path:
    """The tutorial's five-merge tokenizer, trained through the CLI."""
    d = tmp_path_factory.mktemp("cat")
    (d / "cat.txt").write_text(CAT)
    ok(run("train", d / "cat.txt", "-o", d / "cat.json", "--vocab-size", 261, "--holdout", 0, "-q"))
    return d / "cat.json"
