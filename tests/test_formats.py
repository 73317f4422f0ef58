"""Format detection, load/save/convert, loading by name, a missing or unreadable tokenizer
file, atomic writes and the mode of written files."""

from __future__ import annotations

import json
import os
import pickle
import warnings

import bytepair
import pytest
from bytepair import conversion, formats
from bytepair.errors import FormatError, FormatWarning
from bytepair.formats import atomic
from cli_run import assert_usage_error, ok, run
from conftest import corpus_sample, shared
from formats_data import SPECIAL, sample_text, trained
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer


def test_detects_each_format(tmp_path):
    tok = trained()
    tok.save(tmp_path / "t.json")
    with pytest.warns(FormatWarning, match="not the special tokens"):
        tok.save(tmp_path / "t.tiktoken", format="tiktoken")
    tok.save(tmp_path / "g", format="gpt2")
    assert formats.detect(tmp_path / "t.json") == "huggingface"
    assert formats.detect(tmp_path / "t.tiktoken") == "tiktoken"
    assert formats.detect(tmp_path / "g") == "gpt2"
    assert formats.detect(tmp_path / "g" / "vocab.json") == "gpt2"
    assert formats.load(tmp_path / "g" / "vocab.json").merges == tok.merges
    assert formats.detect(shared("fixtures", "tokenizers", "llama3", "tokenizer.model")) == (
        "tiktoken"
    )
    assert formats.detect(shared("fixtures", "tokenizers", "gpt2", "tokenizer.json")) == (
        "huggingface"
    )


def test_detection_refuses_what_it_does_not_know(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match=r"expected vocab.json and merges.txt"):
        formats.load(tmp_path / "empty")
    (tmp_path / "notes.txt").write_text("hello world\n", "utf-8")
    with pytest.raises(FormatError, match=r"notes.txt: unknown tokenizer format"):
        formats.load(tmp_path / "notes.txt")
    with pytest.raises(FileNotFoundError, match=r"missing\.json: no such tokenizer file"):
        formats.load(tmp_path / "missing.json")


def test_hf_file_refuses_out_of_band_settings(tmp_path):
    trained().save(tmp_path / "t.json")
    with pytest.raises(FormatError, match="stores its own special tokens"):
        formats.load(tmp_path / "t.json", pattern="cl100k")


@pytest.mark.parametrize("to", formats.FORMATS)
def test_convert_between_every_pair(tmp_path, to):
    tok = trained()
    text = sample_text("en-prose")[:5_000] + SPECIAL
    expected = tok.encode(text, allowed_special="all")
    for source in formats.FORMATS:
        src = tmp_path / f"src-{source}"
        with warnings.catch_warnings():  # a rank file leaves out the special token
            warnings.simplefilter("ignore", FormatWarning)
            tok.save(src, format=source)
        out = tmp_path / f"{source}-to-{to}"
        given = {} if source != "tiktoken" else {"special_tokens": [SPECIAL], "pattern": "gpt2"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FormatWarning)
            conversion.convert(src, out, to=to, **given)
        back = (
            bytepair.Tokenizer.load(out, special_tokens=[SPECIAL], pattern="gpt2")
            if to == "tiktoken"
            else (bytepair.Tokenizer.load(out))
        )
        assert back.encode(text, allowed_special="all") == expected, (source, to)
        assert back.special_tokens == tok.special_tokens


def test_unknown_format_name(tmp_path):
    with pytest.raises(FormatError, match="unknown format 'sentencepiece'"):
        trained().save(tmp_path / "x", format="sentencepiece")
    assert not (tmp_path / "x").exists()


def test_failed_write_leaves_the_old_file_and_no_temporaries(tmp_path, monkeypatch):
    path = tmp_path / "tokenizer.json"
    path.write_text("old", "utf-8")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        trained().save(path)
    assert path.read_text("utf-8") == "old"
    assert os.listdir(tmp_path) == ["tokenizer.json"]


def test_gpt2_pair_is_all_or_nothing(tmp_path, monkeypatch):
    out = tmp_path / "g"
    out.mkdir()
    (out / "vocab.json").write_text("old vocab", "utf-8")
    (out / "merges.txt").write_text("old merges", "utf-8")
    real = atomic._write_temp
    calls = []

    def second_fails(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(path, data)

    monkeypatch.setattr(atomic, "_write_temp", second_fails)
    with pytest.raises(OSError, match="disk full"):
        trained().save(out, format="gpt2")
    assert (out / "vocab.json").read_text("utf-8") == "old vocab"
    assert (out / "merges.txt").read_text("utf-8") == "old merges"
    assert sorted(os.listdir(out)) == ["merges.txt", "vocab.json"]


def test_no_pickle_or_eval_in_readers():
    import bytepair.formats as pkg

    folder = os.path.dirname(pkg.__file__)
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                source = f.read()
            for banned in ("pickle", "eval(", "exec(", "marshal"):
                assert banned not in source, (name, banned)


def test_saved_files_get_the_usual_permissions(tmp_path):
    (tmp_path / "plain").write_bytes(b"")
    trained().save(tmp_path / "tokenizer.json")
    mode = (tmp_path / "tokenizer.json").stat().st_mode & 0o777
    assert mode == (tmp_path / "plain").stat().st_mode & 0o777


# -- loading: a tiktoken name, a missing file, a model bytepair does not read --------------


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


# -- written files take the umask's mode ---------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("first-use") / "en.txt"
    path.write_bytes(corpus_sample("en-prose", 40_000))
    return path


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


def _typed(v):
    """``v`` with the type of every value spelt out, so that True and 1 differ."""
    if isinstance(v, dict):
        return ("dict", [(k, _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_typed(x) for x in v])
    return (type(v).__name__, v)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(st.characters(codec="utf-8") | st.sampled_from('\ud800"\\\n')),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(_JSON, st.booleans(), st.binary(max_size=3))
def test_core_json_reads_what_python_reads_property(value, ascii_only, junk):
    # The core's reader gives Python's document, or leaves the text to Python's reader.
    for raw in (json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"), junk):
        got = bytepair._core.json_loads(raw)
        if got is None:
            continue
        assert _typed(got) == _typed(json.loads(raw.decode("utf-8")))


def test_core_json_keeps_a_repeated_key_where_python_does():
    raw = b'{"b": 1, "a": 2, "b": 3}'
    assert list(bytepair._core.json_loads(raw).items()) == list(json.loads(raw).items())
    assert bytepair._core.json_loads(b'{"x": [1, 2.5]}') is None  # a float: Python's reader


def test_a_tokenizer_json_with_a_byte_order_mark_loads_as_the_json_reader_promises(tmp_path):
    # Windows editors write a UTF-8 BOM; the JSON reader skips it, so detection must too
    # (it said "unknown tokenizer format" of a tokenizer.json). Ids: HF's on the file itself.
    source = shared("fixtures", "tokenizers", "gpt2", "tokenizer.json")
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
    assert formats.detect(path) == "huggingface"
    text = "Hello wörld<|endoftext|> 12345"
    expected = HFTokenizer.from_file(str(source)).encode(text, add_special_tokens=False).ids
    assert bytepair.Tokenizer.load(path).encode(text, allowed_special="all") == expected


def test_a_gpt2_folder_missing_one_file_names_the_missing_one(tmp_path):
    # A folder with vocab.json but no merges.txt (a download that stopped half way) must say
    # which file is missing, not only that both are expected.
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "vocab.json").write_bytes(shared("fixtures", "cs336", "gpt2_vocab.json").read_bytes())
    with pytest.raises(FormatError, match=r"gpt2: .*no merges\.txt"):
        bytepair.Tokenizer.load(folder)
    (folder / "vocab.json").rename(folder / "merges.txt")
    with pytest.raises(FormatError, match=r"gpt2: .*no vocab\.json"):
        bytepair.Tokenizer.load(folder)


def test_a_folder_with_a_pair_under_other_names_says_how_to_load_it(tmp_path):
    # CS336's files are gpt2_vocab.json and gpt2_merges.txt: a folder of them is no
    # vocab.json + merges.txt, and the error names the pair to pass instead.
    for name in ("gpt2_vocab.json", "gpt2_merges.txt"):
        (tmp_path / name).write_bytes(shared("fixtures", "cs336", name).read_bytes())
    with pytest.raises(FormatError, match=r"it has gpt2_vocab\.json and gpt2_merges\.txt: load"):
        bytepair.Tokenizer.load(tmp_path)
    pair = (tmp_path / "gpt2_vocab.json", tmp_path / "gpt2_merges.txt")
    assert bytepair.Tokenizer.load(pair).vocab_size == 50257  # the count in gpt2_vocab.json
