"""A corpus encoded into ``.npy`` shards of ``shard_tokens`` ids each, with an index a
training loader can seek by: the layout pretraining pipelines read.

``DIR/shard_00000.npy, shard_00001.npy, ...`` hold the ids in order, every shard exactly
``shard_tokens`` long but the last (uint16 when the vocab fits). ``DIR/documents.npy``
holds where each document starts, as an int64 offset into the concatenated ids: document
d begins in shard ``starts[d] // shard_tokens``. ``DIR/index.json`` names the shards and
the run, and is written last: a directory with an index is complete.

A run that stops (killed, out of disk) resumes: ``DIR/.progress.json`` records, after
each finished shard, the document and id the next shard starts at; a rerun with the same
tokenizer, corpus and settings starts there, and a rerun of a finished run returns its
index at once, after checking that the shards it records are whole. A directory holding
another run's shards is refused, never overwritten; so is one whose state or recorded
shards were damaged (deleted, truncated, edited), with a CorpusError naming the file.

>>> import bytepair, numpy, pathlib, tempfile
>>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["<s>"])
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "c.jsonl").write_text('{"text": "abc"}\\n{"text": "de"}\\n')
>>> index = write(tok, [d / "c.jsonl"], d / "out", 3, document_separator="<s>", progress=False)
>>> [s["tokens"] for s in index["shards"]], numpy.load(d / "out" / "documents.npy").tolist()
([3, 3, 1], [0, 4])
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from collections.abc import Iterable

from bytepair import corpus_check, corpus_ids, documents, npy_file
from bytepair.corpus_ids import Position
from bytepair.errors import CorpusError
from bytepair.formats import atomic
from bytepair.formats.atomic import write_files
from bytepair.npy_file import NpyWriter, ids_dtype
from bytepair.progress import Bar, shown
from bytepair.special import SpecialSet

INDEX = "index.json"
PROGRESS = ".progress.json"
DOCUMENTS = "documents.npy"
_STARTS = ".documents.partial"  # int64 starts, raw, appended as documents begin


def shard_name(number: int) -> str:
    """The file of shard ``number``.

    >>> shard_name(7)
    'shard_00007.npy'
    """
    return f"shard_{number:05d}.npy"


def write(
    tok,
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    out_dir: str | os.PathLike,
    shard_tokens: int,
    *,
    text_field: str = "text",
    document_separator: str | None = None,
    threads: int | None = None,
    progress: bool | None = None,
    allowed_special: SpecialSet = "all",
    disallowed_special: SpecialSet = (),
) -> dict:
    """Encodes ``corpus`` (files, directories, globs; text, ``.jsonl``, ``.parquet``) into
    shards under ``out_dir`` and returns the index (``index.json``'s content).
    Special-token text is encoded as ``encode_file`` does: ``allowed_special`` and
    ``disallowed_special`` as in ``Tokenizer.encode``, every special token allowed by
    default."""
    import numpy

    if isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int) or shard_tokens < 1:
        raise ValueError(f"shard_tokens must be a positive int, got {shard_tokens!r}")
    paths = documents.corpus_paths(corpus)
    corpus_check.check_read_as_text(paths, stacklevel=3)  # the caller's line
    separator = corpus_ids.separator_id(tok, document_separator)
    policy = tok._policy(allowed_special, disallowed_special)
    out_dir = os.fspath(out_dir)
    documents.check_output(corpus, out_dir)
    os.makedirs(out_dir, exist_ok=True)
    atomic.remove_stale_temps(out_dir)  # what a killed run left: a shard, staged ids
    run = _run(tok, paths, shard_tokens, text_field, document_separator, policy)
    dtype = ids_dtype(tok.vocab_size)
    done = _finished(out_dir, run, dtype)
    if done is not None:
        return done
    state = _resumable(out_dir, run, dtype)
    shards: list[dict] = state["shards"] if state else []
    written = sum(s["tokens"] for s in shards)
    start = Position(**state["next"]) if state else Position()
    starts_path = os.path.join(out_dir, _STARTS)
    recorded = state["documents"] if state else 0
    with open(starts_path, "r+b" if state else "wb") as starts_file:
        starts_file.truncate(recorded * 8)
        starts_file.seek(0, os.SEEK_END)
        total_bytes = sum(os.path.getsize(p) for p in paths)
        show = shown(progress)
        shard = None
        recorded_state = state is not None

        def close(shard: NpyWriter) -> None:
            """Renames a whole shard into place; the first of a new run only once a state
            is recorded, so that a run stopped right after it (before the next ids, or the
            index) resumes, rather than leave a shard that looks like another run's."""
            nonlocal recorded_state
            if not recorded_state:
                _save_state(out_dir, run, [], 0, start)
                recorded_state = True
            shard.__exit__(None, None, None)

        try:
            with Bar("encoding", total=total_bytes, unit="B", enabled=show) as bar:
                pending = False  # a shard closed; the next one's first position is not known
                for piece in corpus_ids.stream(
                    tok,
                    paths,
                    text_field=text_field,
                    separator=separator,
                    policy=policy,
                    threads=threads or 0,
                    start=start,
                    on_progress=bar,
                    scratch_for=os.path.join(out_dir, DOCUMENTS),
                ):
                    ids = piece.ids
                    doc_starts = [0, *piece.ends[:-1]]
                    begins = [
                        written + s
                        for s, p in zip(doc_starts, piece.positions, strict=True)
                        if p.skip == 0 or s > 0
                    ]
                    starts_file.write(numpy.asarray(begins, dtype=numpy.int64).tobytes())
                    at = 0
                    while at < len(ids):
                        if pending:
                            # On disk before the state that counts them, so that a run
                            # cut off by a power loss resumes instead of being refused.
                            starts_file.flush()
                            os.fsync(starts_file.fileno())
                            below = recorded + bisect.bisect_left(begins, written)
                            _save_state(out_dir, run, shards, below, _position_of(piece, at))
                            pending = False
                        if shard is None:
                            path = os.path.join(out_dir, shard_name(len(shards)))
                            shard = NpyWriter(path, dtype).__enter__()
                        take = min(len(ids) - at, shard_tokens - shard.count)
                        shard.write(ids[at : at + take])
                        at += take
                        written += take
                        if shard.count == shard_tokens:
                            close(shard)
                            shards.append(_shard_entry(len(shards), shard_tokens, written))
                            shard, pending = None, True
                    recorded += len(begins)
                if shard is not None:
                    close(shard)
                    shards.append(_shard_entry(len(shards), shard.count, written))
                    shard = None
        except BaseException as e:
            if shard is not None:
                shard.__exit__(type(e), e, e.__traceback__)
            raise
        starts_file.flush()
    index = {**run, "dtype": numpy.dtype(dtype).name, "tokens": written, "shards": shards}
    starts = numpy.fromfile(starts_path, dtype=numpy.int64)
    index["documents"] = len(starts)
    with NpyWriter(os.path.join(out_dir, DOCUMENTS), numpy.int64) as out:
        out.write(starts)
    write_files({os.path.join(out_dir, INDEX): _json(index)})
    for name in (PROGRESS, _STARTS):
        if os.path.exists(os.path.join(out_dir, name)):
            os.unlink(os.path.join(out_dir, name))
    return index


def _shard_entry(number: int, tokens: int, written: int) -> dict:
    return {"file": shard_name(number), "tokens": tokens, "first_token": written - tokens}


def _position_of(piece: corpus_ids.Piece, at: int) -> Position:
    """The position of ``piece.ids[at]``: its document, and how many of its ids precede.
    Where documents begin at ``at``, the first of them: an empty one (no ids, no
    separator) comes before the next, as ``write`` counts the documents begun."""
    begins = [0, *piece.ends[:-1]]
    j = bisect.bisect_left(begins, at)
    if j == len(begins) or begins[j] != at:  # inside the document before
        j -= 1
    p = piece.positions[j]
    return Position(p.file, p.start, p.document, (p.skip if j == 0 else 0) + at - begins[j])


def _run(tok, paths, shard_tokens, text_field, separator, policy) -> dict:
    """What makes two runs produce the same shards: the tokenizer, the corpus as it is on
    disk, and the settings."""
    digest = hashlib.sha256()
    for token_id, token in sorted(tok.vocab.items()):
        digest.update(token_id.to_bytes(4, "little") + len(token).to_bytes(2, "little") + token)
    for a, b in tok.merges:
        digest.update(b"m" + len(a).to_bytes(2, "little") + a + b)
    digest.update(json.dumps([sorted(tok.special_tokens.items()), tok.pattern]).encode())
    digest.update(repr(tok.pipeline).encode())
    sources = []
    for path in paths:
        st = os.stat(path)
        sources.append(
            {"path": os.path.abspath(path), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}
        )
    return {
        "format": "bytepair-shards",
        "version": 1,
        "tokenizer": digest.hexdigest(),
        "vocab_size": tok.vocab_size,
        "shard_tokens": shard_tokens,
        "text_field": text_field,
        "document_separator": separator,
        "allowed_special": sorted(policy[0]),
        "disallowed_special": sorted(policy[1]),
        "sources": sources,
    }


def _json(obj) -> bytes:
    return (json.dumps(obj, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _damaged(path: str, out_dir: str, what: str) -> CorpusError:
    return CorpusError(
        f"{path}: {what}; it is not what bytepair wrote, so the run cannot go on from it: "
        f"remove the directory {out_dir} to start over"
    )


def _not_as_recorded(path: str, what: str, where: str, recorded: str, out_dir: str):
    """The error for a file of the run (``path``, which ``what``) that is not as ``where``
    (the index or the progress) records it (``recorded``)."""
    return CorpusError(
        f"{path} {what}, but {where} records {recorded}: remove the directory {out_dir} to "
        "start over"
    )


def _read(path: str, out_dir: str) -> dict:
    """A JSON object that a run wrote (index.json, .progress.json)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise _damaged(path, out_dir, f"unreadable ({e})") from None
    if not isinstance(doc, dict):
        raise _damaged(path, out_dir, f"a JSON {documents.json_type(doc)}, expected an object")
    return doc


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_shards(out_dir: str, where: str, shards: object, dtype) -> None:
    """The shards ``where`` records are listed as ``write`` lists them, and on disk whole."""
    first = 0
    for number, entry in enumerate(shards if isinstance(shards, list) else [None]):
        if not (
            isinstance(entry, dict)
            and entry.keys() == {"file", "tokens", "first_token"}
            and entry["file"] == shard_name(number)
            and _count(entry["tokens"])
            and entry["first_token"] == first
        ):
            raise _damaged(where, out_dir, f"shard entry {number} is {entry!r}")
        first += entry["tokens"]
        shard = os.path.join(out_dir, entry["file"])
        problem = npy_file.problem(shard, dtype, entry["tokens"])
        if problem is not None:
            raise _not_as_recorded(shard, problem, where, "it as finished", out_dir)


def _differs(old: dict, run: dict) -> str | None:
    for key, value in run.items():
        if old.get(key) != value:
            return key
    return None


def _finished(out_dir: str, run: dict, dtype) -> dict | None:
    """The index of a finished run (checked: its shards and documents.npy whole), or None."""
    import numpy

    path = os.path.join(out_dir, INDEX)
    if not os.path.exists(path):
        return None
    index = _read(path, out_dir)
    key = _differs(index, run)
    if key is not None:
        raise CorpusError(
            f"{out_dir} already holds shards of another run (its {key!r} differs); "
            f"choose another output directory or remove this one"
        )
    _check_shards(out_dir, path, index.get("shards"), dtype)
    if not _count(index.get("documents")):
        raise _damaged(path, out_dir, f"'documents' is {index.get('documents')!r}")
    starts = os.path.join(out_dir, DOCUMENTS)
    problem = npy_file.problem(starts, numpy.int64, index["documents"])
    if problem is not None:
        raise _not_as_recorded(starts, problem, path, "the run as finished", out_dir)
    return index


def _resumable(out_dir: str, run: dict, dtype) -> dict | None:
    """The state of an unfinished run to go on from (checked: the shards it records whole,
    the document starts it counts there), or None."""
    path = os.path.join(out_dir, PROGRESS)
    if not os.path.exists(path):
        # The files a run writes, from another run or the user's: never replaced.
        taken = sorted(
            n
            for n in os.listdir(out_dir)
            if n == DOCUMENTS or (n.startswith("shard_") and n.endswith(".npy"))
        )
        if taken:
            raise CorpusError(
                f"{out_dir} holds {', '.join(taken[:2])}{', ...' if len(taken) > 2 else ''} "
                f"but no {INDEX} or {PROGRESS}: choose another output directory or remove them"
            )
        return None
    state = _read(path, out_dir)
    if state.keys() != {"run", "shards", "documents", "next"}:
        raise _damaged(path, out_dir, f"its keys are {sorted(state)}")
    position = state["next"]
    if not (
        isinstance(state["run"], dict)
        and _count(state["documents"])
        and isinstance(position, dict)
        and position.keys() == {"file", "start", "document", "skip"}
        and all(map(_count, position.values()))
    ):
        raise _damaged(path, out_dir, "its 'run', 'documents' or 'next' is malformed")
    key = _differs(state["run"], run)
    if key is not None:
        raise CorpusError(
            f"{out_dir} holds an unfinished run whose {key!r} differs from this one; "
            f"rerun it with the same tokenizer, corpus and settings, or remove the directory"
        )
    _check_shards(out_dir, path, state["shards"], dtype)
    starts = os.path.join(out_dir, _STARTS)
    have = os.path.getsize(starts) // 8 if os.path.isfile(starts) else None
    if have is None or have < state["documents"]:
        held = "is missing" if have is None else f"holds {have:,} document starts"
        raise _not_as_recorded(starts, held, path, f"{state['documents']:,}", out_dir)
    return state


def _save_state(out_dir, run, shards, documents_count, position: Position) -> None:
    state = {
        "run": run,
        "shards": list(shards),
        "documents": documents_count,
        "next": {
            "file": position.file,
            "start": position.start,
            "document": position.document,
            "skip": position.skip,
        },
    }
    write_files({os.path.join(out_dir, PROGRESS): _json(state)})
