"""An audit of a tokenizer's tokens: the ones worth looking at before training a model.

Land & Bartolo 2024 ("Fishing for Magikarp") find under-trained "glitch" tokens in two
steps; the first needs only the tokenizer: a token is *unreachable* when its own text does
not encode to it, so it occurs only inside longer text, if at all. The second counts the
tokens on the model's training data: a token that never occurs there (*unused*) keeps its
random embedding. docs/audit.md defines every field.

>>> import bytepair
>>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
>>> merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
>>> report = audit(bytepair.Tokenizer(vocab, merges))
>>> report.unreachable  # "abc" merges b+c first, and no merge joins a + bc
{258: [97, 256]}
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bytepair import _core, metrics
from bytepair import documents as corpus_docs
from bytepair.corpus_files import is_compressed, open_corpus
from bytepair.progress import Bar, shown
from bytepair.text_table import grid, plural
from bytepair.token_text import is_text, token_repr
from bytepair.tokenizer import Tokenizer

# A pattern that makes the whole input one pre-token: a token that is part of a character
# only ever occurs inside a longer stretch of valid text, never cut out by the pattern (which
# would see its stray bytes as punctuation), so its bytes are encoded whole, by merges only.
_ONE_PRETOKEN = r"[\s\S]+"


@dataclass(frozen=True)
class Audit:
    """What :func:`audit` found. Ids are sorted; every field is plain data (``to_json``).

    ``unreachable``: regular token id -> the ids its own bytes encode to instead.
    ``undecodable``: regular token ids whose bytes are not valid UTF-8 on their own.
    ``duplicates``: groups of ids (special tokens included) that share the same bytes.
    ``special_as_text``: special token -> the one regular id its text encodes to as plain
    text (``encode_ordinary``), for the special tokens whose text is also one token.
    ``counts`` / ``unused``: with a corpus, how often each id occurs, and the regular ids
    that never occur (None without a corpus).
    """

    vocab: Mapping[int, bytes] = field(repr=False)
    special_ids: frozenset[int] = field(repr=False)
    unreachable: dict[int, list[int]]
    undecodable: list[int]
    duplicates: list[list[int]]
    special_as_text: dict[str, int]
    counts: dict[int, int] | None = None
    unused: list[int] | None = None

    @property
    def regular_size(self) -> int:
        """How many regular (not special) tokens the vocabulary has."""
        return sum(1 for i in self.vocab if i not in self.special_ids)

    def to_json(self) -> dict:
        """The audit as JSON-ready data, each token's bytes given as hex beside its id.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> audit(tok).to_json()["undecodable"][:2]
        [{'id': 128, 'hex': '80'}, {'id': 129, 'hex': '81'}]
        """

        def token(i: int) -> dict:
            return {"id": i, "hex": self.vocab[i].hex()}

        out: dict = {
            "regular_tokens": self.regular_size,
            "special_tokens": len(self.special_ids),
            "unreachable": [{**token(i), "encodes_as": ids} for i, ids in self.unreachable.items()],
            "undecodable": [token(i) for i in self.undecodable],
            "duplicates": self.duplicates,
            "special_as_text": self.special_as_text,
            "counts": None,
            "unused": None,
        }
        if self.counts is not None and self.unused is not None:
            out["counts"] = {str(i): n for i, n in sorted(self.counts.items())}
            out["unused"] = [token(i) for i in self.unused]
        return out


def audit(
    tok: Tokenizer,
    corpus: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    *,
    threads: int | None = None,
    progress: bool | None = None,
) -> Audit:
    """Audits every token of ``tok``; with ``corpus`` (files, directories, globs or a list
    of these, as ``train`` takes them: a ``.jsonl`` or ``.parquet`` file's documents in
    their ``text`` field; ``.xz``, ``.gz``, ``.bz2`` are decompressed), also counts the
    tokens on it, with a bar over each file (``progress``: None on a terminal only, True
    always, False never).

    >>> import bytepair
    >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    >>> audit(bytepair.Tokenizer(vocab, [(b"a", b"b")], special_tokens={"ab": 257})).duplicates
    [[256, 257]]
    """
    special = frozenset(tok.special_tokens.values())
    regular = {i: b for i, b in tok.vocab.items() if i not in special}
    counts = None if corpus is None else count_tokens(tok, corpus, progress)
    return Audit(
        vocab=tok.vocab,
        special_ids=special,
        unreachable=unreachable(tok, regular, threads=threads),
        undecodable=sorted(i for i, b in regular.items() if not is_text(b)),
        duplicates=duplicates(tok.vocab),
        special_as_text=special_as_text(tok),
        counts=counts,
        unused=None if counts is None else unused(tok, counts),
    )


def unused(tok: Tokenizer, counts: Mapping[int, int]) -> list[int]:
    """The regular tokens that ``counts`` (id -> occurrences) never saw, by id.

    >>> import bytepair
    >>> unused(bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []), {0: 3})[:2]
    [1, 2]
    """
    special = set(tok.special_tokens.values())
    return [i for i in sorted(tok.vocab) if i not in special and not counts.get(i)]


def unreachable(
    tok: Tokenizer, tokens: Mapping[int, bytes], *, threads: int | None = None
) -> dict[int, list[int]]:
    """The tokens (id -> bytes) whose own bytes do not encode to them, with what they encode
    to. Text goes through the whole pipeline (``encode_batch``, special-token text as
    plain text); a token that is part of a character gets its bytes encoded as one piece.

    >>> import bytepair
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"a "}, [(b"a", b" ")])
    >>> unreachable(tok, {256: b"a "})  # the gpt2 pattern cuts "a " into "a" and " "
    {256: [97, 32]}
    """
    texts = [(i, b) for i, b in tokens.items() if is_text(b)]
    pieces = [(i, b) for i, b in tokens.items() if not is_text(b)]
    found: dict[int, list[int]] = {}
    encoded = tok.encode_batch(
        [b.decode("utf-8") for _, b in texts], disallowed_special=(), threads=threads
    )
    for (i, _), ids in zip(texts, encoded, strict=True):
        if ids != [i]:
            found[i] = ids
    if pieces:
        whole = _one_pretoken_encoder(tok)
        none: frozenset[str] = frozenset()
        for i, b in pieces:
            ids = whole.encode_bytes(b, none, none)
            if ids != [i]:
                found[i] = ids
    return dict(sorted(found.items()))


def _one_pretoken_encoder(tok: Tokenizer) -> _core.Encoder:
    """The core encoder of ``tok``'s vocab and merges with a pattern that never splits."""
    # Built on the Tokenizer's own tables (a rank table stays a rank table): 0.2 s for o200k.
    merges = None if tok._rank_mode else tok._merges
    return _core.Encoder(dict(tok._vocab), merges, [], _ONE_PRETOKEN)


def duplicates(vocab: Mapping[int, bytes]) -> list[list[int]]:
    """Groups of ids that share the same bytes (a converted file can give a special token
    an id of its own while its text is also a learned token).

    >>> duplicates({0: b"a", 1: b"b", 2: b"a"})
    [[0, 2]]
    """
    by_bytes: dict[bytes, list[int]] = {}
    for i, b in vocab.items():
        by_bytes.setdefault(b, []).append(i)
    return sorted(sorted(ids) for ids in by_bytes.values() if len(ids) > 1)


def special_as_text(tok: Tokenizer) -> dict[str, int]:
    """Special tokens whose text, encoded as plain text, is one regular token: the id a
    user's text reaches when special tokens are not parsed (``encode_ordinary``).

    >>> import bytepair
    >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"eo", 257: b"eos"}
    >>> tok = bytepair.Tokenizer(vocab, [(b"e", b"o"), (b"eo", b"s")], special_tokens=["eos"])
    >>> special_as_text(tok)  # "eos" is both the special token and learned token 257
    {'eos': 257}
    """
    out = {}
    for text in tok.special_tokens:
        ids = tok.encode_ordinary(text)
        if len(ids) == 1:
            out[text] = ids[0]
    return out


def count_tokens(
    tok: Tokenizer,
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    progress: bool | None = None,
) -> dict[int, int]:
    """How often each id occurs when the corpus is encoded as training data (special
    tokens allowed, invalid UTF-8 kept), plain text read 1 MB at a time.

    >>> import bytepair, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = path.write_bytes(b"abba")
    >>> count_tokens(bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []), path)
    {97: 2, 98: 2}
    """
    counts: Counter[int] = Counter()
    # The files as train names them (directories, globs), and a .jsonl or .parquet file's
    # documents, not its JSON: the unused tokens are the ones the training data lacks.
    # A training corpus takes minutes to encode: a bar over each file, in its bytes (a
    # Parquet file's in rows; a compressed file's text has no known total).
    show = shown(progress)
    for path in corpus_docs.corpus_paths(corpus):
        kind = corpus_docs.kind(path)
        total = None if is_compressed(path) else corpus_docs.size(path)
        name = os.path.basename(path)
        with Bar(name, total, unit="rows" if kind == "parquet" else "B", enabled=show) as bar:
            if kind != "text":
                for chunk in corpus_docs.read_chunks(path):
                    for ids in tok.encode_batch(chunk.texts, allowed_special="all"):
                        counts.update(ids)
                    bar.update(chunk.end)
                continue
            with open_corpus(path) as f:
                counts.update(metrics.token_counts(tok, metrics.read_blocks(f, bar)))
    return dict(sorted(counts.items()))


def render(report: Audit, n: int = 10) -> str:
    """The audit as ``bytepair inspect --audit`` prints it: each finding with a count and
    up to ``n`` examples.

    >>> import bytepair
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"a "}, [(b"a", b" ")])
    >>> print(render(audit(tok), 2).splitlines()[1])
    unreachable      1 (their own text encodes as other tokens)
    """
    vocab = report.vocab

    def show(i: int) -> str:
        return f"{i:>8}  {token_repr(vocab[i])}"

    lines = [
        f"audit of {report.regular_size:,} regular tokens and "
        f"{plural(len(report.special_ids), 'special token')}",
        f"unreachable      {len(report.unreachable):,} (their own text encodes as other tokens)",
    ]
    for i, ids in itertools.islice(report.unreachable.items(), n):
        lines.append(f"{show(i)}  ->  " + " + ".join(token_repr(vocab[j]) for j in ids))
    # The 128 bytes 80..ff are undecodable in every byte-level vocabulary: the examples are
    # the longer pieces, which say where the vocabulary cuts characters.
    pieces = [i for i in report.undecodable if len(vocab[i]) > 1]
    lines.append(
        f"undecodable      {len(report.undecodable):,} (not valid UTF-8 alone: pieces of "
        f"characters; {len(report.undecodable) - len(pieces):,} of them single bytes)"
    )
    lines += [show(i) for i in pieces[:n]]
    lines.append(f"duplicates       {len(report.duplicates):,} (ids that share their bytes)")
    lines += [
        "  " + ", ".join(str(i) for i in ids) + f"  {token_repr(vocab[ids[0]])}"
        for ids in report.duplicates[:n]
    ]
    lines.append(
        f"special as text  {len(report.special_as_text):,} "
        "(special tokens whose text is also one regular token)"
    )
    lines += [f"  {text!r} -> {i}" for text, i in list(report.special_as_text.items())[:n]]
    if report.counts is None or report.unused is None:
        lines.append("unused           (no corpus: pass --corpus FILES to count the tokens)")
        return "\n".join(lines)
    total = sum(report.counts.values())
    multi = [i for i in report.unused if len(vocab[i]) > 1]
    lines.append(
        f"unused           {len(report.unused):,} of {report.regular_size:,} regular tokens "
        f"({100 * len(report.unused) / max(1, report.regular_size):.1f}%) never occur in the "
        f"corpus's {total:,} tokens; {len(report.unused) - len(multi):,} of them single bytes"
    )
    # The earliest merges among them first: frequent in the tokenizer's training text, yet
    # absent from this corpus, the signature of SolidGoldMagikarp.
    lines += [show(i) for i in multi[:n]]
    lines.append("most frequent:")
    top = sorted(report.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    lines += [f"{show(i)}  {count:,}" for i, count in top]
    return "\n".join(lines)


def summary_table(
    tokenizers: Mapping[str, Tokenizer], counts: Mapping[str, Mapping[int, int]]
) -> str:
    """One row per tokenizer: its regular tokens, how many are unreachable or undecodable,
    and how many ``counts`` (tokenizer -> id -> occurrences) never saw.

    >>> import bytepair
    >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    >>> print(summary_table({"bytes": tok}, {"bytes": {97: 2}}))
    tokenizer  regular  unreachable  undecodable       unused
    bytes          256            0          128  255 (99.6%)
    """
    rows = {}
    for name, tok in tokenizers.items():
        found = audit(tok)
        never = unused(tok, counts[name])
        rows[name] = {
            "regular": f"{found.regular_size:,}",
            "unreachable": f"{len(found.unreachable):,}",
            "undecodable": f"{len(found.undecodable):,}",
            "unused": f"{len(never):,} ({100 * len(never) / max(1, found.regular_size):.1f}%)",
        }
    columns = ["regular", "unreachable", "undecodable", "unused"]
    return grid("tokenizer", list(rows), columns, lambda t, c: rows[t][c])
