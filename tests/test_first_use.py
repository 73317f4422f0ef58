"""What surprised a new user (issue 18, item 7), each checked as that user met it: the CLI
and bytepair.train agree, tiktoken names load in Python, a missing tokenizer is a
FileNotFoundError, written files get the umask's mode, GPT-2 files take their names,
non-UTF-8 and special-token-shaped corpora warn, messages say what is true, plain
`tokenize` output is unambiguous, the HTML view has CJK fonts, and train() reports its
time and peak memory.

Oracles: tiktoken (encodings by name), HF tokenizers' BPE.from_file (GPT-2 files),
bytepair.reference (merges), the umask, and hand-derived outputs.
"""

from __future__ import annotations

import os
import pickle
import re
import warnings

import bytepair
import pytest
from bytepair.cli import show
from bytepair.errors import CorpusWarning, TrainingWarning
from conftest import corpus_documents, corpus_sample
from test_cli import assert_usage_error, ok, run

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("first-use") / "en.txt"
    path.write_bytes(corpus_sample("en-prose", 40_000))
    return path


# -- the CLI trains what bytepair.train trains ------------------------------------------


def test_cli_and_python_train_the_same_tokenizer_by_default(tmp_path, corpus):
    out = tmp_path / "cli.json"
    text = ok(run("train", corpus, "-o", out, "--vocab-size", 400, "--special-token", EOT, "-q"))
    in_python = bytepair.train([corpus], 400, special_tokens=[EOT], progress=False)
    assert bytepair.Tokenizer.load(out).merges == in_python.merges
    assert "held out" not in text and "--holdout 0.01" in text


def test_cli_sample_documents_equals_python(tmp_path):
    docs = [d.replace(EOT.encode(), b"") for d in corpus_documents("multilingual", 60, 3)]
    path = tmp_path / "docs.txt"
    path.write_bytes(EOT.encode().join(docs))
    out = tmp_path / "s.json"
    text = ok(
        run(
            "train", path, "-o", out, "--vocab-size", 400, "--special-token", EOT,
            "--sample-documents", 20, "--seed", 3, "-q",
        )
    )  # fmt: skip
    assert "trained on      20 of 60 documents (a random sample), seed 3" in text, text
    in_python = bytepair.train(
        [path], 400, special_tokens=[EOT], sample_documents=20, seed=3, progress=False
    )
    assert bytepair.Tokenizer.load(out).merges == in_python.merges
    text = ok(run("train", path, "-o", out, "--vocab-size", 300, "--special-token", EOT,
                  "--sample-documents", 100, "-q"))  # fmt: skip
    assert "trained on      all 60 documents" in text, text


def test_cli_seed_without_a_sample_is_refused(tmp_path, corpus):
    proc = run("train", corpus, "-o", tmp_path / "t.json", "--vocab-size", 300, "--seed", 4)
    assert_usage_error(proc, "--seed", "--sample-documents")


def test_cli_ray_engine_refuses_what_it_cannot_do(tmp_path, corpus):
    train = ("train", corpus, "-o", tmp_path / "t.json", "--vocab-size", 300, "--engine", "ray")
    assert_usage_error(run(*train, "--holdout", 0.01), "--holdout needs --engine local")
    assert_usage_error(
        run(*train, "--sample-documents", 5), "--sample-documents needs --engine local"
    )


def test_cli_vocab_size_names_its_minimum(tmp_path, corpus):
    for value in (-5, 0, 255):
        err = assert_usage_error(
            run("train", corpus, "-o", tmp_path / "t.json", "--vocab-size", value), str(value)
        )
        assert "at least 256" in err and "> 0" not in err


# -- loading ----------------------------------------------------------------------------


def test_load_takes_a_tiktoken_name(tiktoken_encoding):
    text = "strawberry 1234567 你好 <|endoftext|>"
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        tok = bytepair.Tokenizer.load(name)
        expected = tiktoken_encoding(name).encode(text, allowed_special="all")
        assert tok.encode(text, allowed_special="all") == expected, name


def test_a_missing_tokenizer_is_a_file_not_found_error(tmp_path):
    missing = tmp_path / "tokenizer.json"
    with pytest.raises(FileNotFoundError) as err:
        bytepair.Tokenizer.load(missing)
    assert isinstance(err.value, bytepair.TokenizerNotFoundError)
    assert not isinstance(err.value, bytepair.CorpusError)
    assert err.value.filename == str(missing)
    assert str(err.value).startswith(f"{missing}: no such tokenizer file")
    assert "o200k_base" in str(err.value)  # the names it could have been
    again = pickle.loads(pickle.dumps(err.value))  # as Ray or multiprocessing send it
    assert (type(again), str(again)) == (type(err.value), str(err.value))
    assert_usage_error(run("encode", "-t", missing, input=b"hi"), "tokenizer.json")


# -- writing ----------------------------------------------------------------------------


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def test_written_files_have_the_umask_mode(tmp_path, corpus):
    tok_path = tmp_path / "tok.json"
    ok(run("train", corpus, "-o", tok_path, "--vocab-size", 300, "-q"))
    html = tmp_path / "view.html"
    ids = tmp_path / "ids.txt"
    ok(run("tokenize", "-t", tok_path, "the cat", "--html", html, "-q"))
    ok(run("encode", "-t", tok_path, "-o", ids, input=b"the cat"))
    tok = bytepair.Tokenizer.load(tok_path)
    tok.save(tmp_path / "t.tiktoken", format="tiktoken")
    tok.save(tmp_path / "gpt2", format="gpt2")
    for path in (tok_path, html, ids, tmp_path / "t.tiktoken", tmp_path / "gpt2" / "vocab.json"):
        assert path.stat().st_mode & 0o777 == _umask_mode(), path


def test_gpt2_files_take_the_names_given(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = bytepair.train(
        [corpus_sample("en-prose", 20_000)], 400, special_tokens=[EOT], progress=False
    )
    vocab, merges = tmp_path / "my_vocab.json", tmp_path / "my_merges.txt"
    tok.save((vocab, merges), format="gpt2")
    tok.save(tmp_path / "sub" / "cs336-vocab.json", format="gpt2")
    assert (tmp_path / "sub" / "cs336-merges.txt").read_bytes() == merges.read_bytes()
    assert (tmp_path / "sub" / "cs336-vocab.json").read_bytes() == vocab.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["my_merges.txt", "my_vocab.json", "sub"]
    reference = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    reference.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2's regex
    text = "The tokenizer's merges, in order: 12345 and naïve café."
    assert tok.encode(text) == reference.encode(text).ids
    assert bytepair.Tokenizer.from_files(vocab, merges, [EOT]).encode(text) == tok.encode(text)
    with pytest.raises(bytepair.FormatError, match="must hold 'vocab'"):
        tok.save(tmp_path / "tokens.json", format="gpt2")


# -- corpora that train into a useless tokenizer ----------------------------------------


def test_a_gbk_corpus_warns(tmp_path):
    zh = corpus_sample("zh-prose", 30_000).decode("utf-8", "ignore")
    path = tmp_path / "gbk.txt"
    path.write_bytes(zh.encode("gbk", "ignore"))
    with pytest.warns(CorpusWarning, match=r"gbk\.txt are not valid UTF-8.*iconv"):
        bytepair.train([path], 300, special_tokens=[EOT], progress=False)
    with pytest.warns(CorpusWarning, match="not valid UTF-8"):
        bytepair.train(iter([zh.encode("gbk", "ignore")]), 300, [EOT], progress=False)


def test_of_many_files_the_first_and_last_are_checked(tmp_path):
    zh = corpus_sample("zh-prose", 30_000).decode("utf-8", "ignore")
    paths = []
    for n in range(20):
        paths.append(tmp_path / f"part{n:02}.txt")
        paths[-1].write_bytes(zh.encode("gbk", "ignore") if n == 19 else zh.encode())
    with pytest.warns(CorpusWarning, match=r"part19\.txt are not valid UTF-8"):
        bytepair.train(paths, 300, special_tokens=[EOT], progress=False)


def test_a_latin1_corpus_warns_and_utf8_does_not(tmp_path):
    text = "Le cœur a ses raisons que la raison ne connaît point. Déjà vu, été, à bientôt.\n"
    latin1 = tmp_path / "fr.txt"
    latin1.write_bytes(text.replace("œ", "oe").encode("latin-1") * 100)
    with pytest.warns(CorpusWarning, match=r"fr\.txt are not valid UTF-8"):
        bytepair.train([latin1], 280, progress=False)
    utf8 = tmp_path / "fr8.txt"
    utf8.write_bytes(text.encode() * 100 + b"\xff")  # one stray byte is no other encoding
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bytepair.train([utf8], 280, progress=False)


def test_a_utf16_corpus_warns(tmp_path):
    path = tmp_path / "u16.txt"
    path.write_bytes(corpus_sample("en-prose", 10_000).decode().encode("utf-16"))
    with pytest.warns(CorpusWarning, match="looks like UTF-16"):
        bytepair.train([path], 300, progress=False)


def test_special_token_text_that_is_no_special_token_warns(tmp_path):
    docs = corpus_documents("multilingual", 30, 3)
    data = b"".join(d.replace(EOT.encode(), b"") + EOT.encode() for d in docs)
    path = tmp_path / "docs.txt"
    path.write_bytes(data)
    with pytest.warns(CorpusWarning, match=r"'<\|endoftext\|>' 30 times.*--special-token"):
        bytepair.train([path], 300, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bytepair.train([path], 300, special_tokens=[EOT], progress=False)
        # A document separator is cut out too: its text is expected.
        bytepair.train([path], 300, document_separator=EOT, progress=False)


# -- messages ---------------------------------------------------------------------------


def test_early_stop_warning_suggests_what_can_help():
    with pytest.warns(TrainingWarning) as seen:
        bytepair.train(["ab ab"], 300, progress=False)
    message = str(seen[0].message)
    assert "lower min_frequency" not in message and "smaller vocab_size" in message
    with pytest.warns(TrainingWarning, match="lower min_frequency"):
        bytepair.train(["ab ab cd cd cd"], 300, min_frequency=3, progress=False)


def test_wordpiece_refusal_says_what_to_use(tmp_path):
    from tokenizers import Tokenizer, models

    path = tmp_path / "bert.json"
    Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]")).save(str(path))
    with pytest.raises(bytepair.FormatError) as err:
        bytepair.Tokenizer.load(path)
    message = str(err.value)
    assert message == (
        f"{path}: model.type is 'WordPiece', not 'BPE': bytepair reads byte-level BPE "
        "tokenizers only (GPT-2, Llama 3, Qwen, ...); load a WordPiece, Unigram or WordLevel "
        "model with HuggingFace tokenizers or transformers"
    )


# -- showing tokens ---------------------------------------------------------------------


def test_plain_tokenize_escapes_the_separator(tmp_path):
    # A byte-level tokenizer with the merge "|" + "|": "a||b" is a, ||, b.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"||"}
    tok = bytepair.Tokenizer(vocab, [(b"|", b"|")])
    path = tmp_path / "pipe.json"
    tok.save(path)
    out = ok(run("tokenize", "-t", path, "a||b \\|", "--color", "never", "-q"))
    tokens_line = out.splitlines()[0]
    # a | || | b | ' ' | \ | |   (the backslash and the lone pipe are escaped)
    assert tokens_line == "a|\\|\\||b| |\\\\|\\|", tokens_line
    # Every unescaped | is a boundary: splitting there gives the tokens back.
    pieces = re.split(r"(?<!\\)\|", tokens_line.replace("\\\\", "\0"))
    assert [p.replace("\0", "\\").replace("\\|", "|") for p in pieces] == [
        "a", "||", "b", " ", "\\", "|",
    ]  # fmt: skip


def test_html_view_names_cjk_fonts_before_the_generic_family():
    page = show.html_page([b"\xe4\xbd\xa0"], [1])
    tokens_css = re.search(r"\.tokens \{ font-family: ([^;]+);", page).group(1)
    fonts = [f.strip().strip('"') for f in tokens_css.split(",")]
    assert fonts[-1] == "monospace"
    assert {"Noto Sans Mono CJK SC", "PingFang SC", "Microsoft YaHei"} <= set(fonts)


# -- figures ----------------------------------------------------------------------------


def test_train_reports_time_and_peak_memory(caplog):
    with caplog.at_level("INFO", logger="bytepair"):
        tok = bytepair.train([corpus_sample("en-prose", 20_000)], 300, progress=False)
    report = tok.training_report
    assert 0 < report.seconds < 60
    assert report.peak_memory_mb > 10  # a Python process with NumPy loaded
    assert report.documents is None
    assert re.fullmatch(r"trained in [\d.]+ s, peak memory [\d,]+ MB", caplog.messages[-1])
