"""The one progress bar (bytepair.progress, drawn by tqdm): a bar, a rate and an ETA; no
bar with progress=False, by default (None) one only when stderr is a terminal, and with
progress=True always, for training as for encode_file."""

from __future__ import annotations

import io
import os
import re
import sys
import threading

import bytepair
from bytepair import progress
from bytepair.progress import Bar


def _bytes_tokenizer() -> bytepair.Tokenizer:
    return bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])


def test_bar_shows_percent_bar_eta_and_rate():
    out = io.StringIO()
    with Bar("counting", total=4_000_000, unit="B", stream=out) as bar:
        bar.update(1_000_000)
        bar(3_000_000, 4_000_000)
    last = out.getvalue().rstrip("\n").split("\r")[-1]
    # 3 of 4 MB: 75 %, amounts with SI prefixes, and [elapsed<remaining, rate].
    assert last.startswith("counting:  75%|"), last
    assert "3.00M/4.00M" in last, last
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d, [\d.]+[kMG]?B/s\]", last), last


def test_bar_of_a_count_names_its_unit():
    out = io.StringIO()
    with Bar("merging", total=10, unit="merges", stream=out) as bar:
        bar(4, 10)
    last = out.getvalue().rstrip("\n").split("\r")[-1]
    assert last.startswith("merging:  40%|") and "4/10" in last and "merges/s" in last, last


def test_disabled_bar_draws_nothing_and_starts_no_thread():
    out = io.StringIO()
    before = threading.active_count()
    with Bar("counting", total=10, stream=out, enabled=False) as bar:
        bar(5, 10)
        assert bar.done == 5
    assert out.getvalue() == ""
    with Bar("counting", total=10, stream=out) as bar:
        bar(5, 10)
        assert threading.active_count() == before  # tqdm's monitor thread is off


def test_training_bars_by_default_on_a_terminal_only_and_always_when_asked(capsys):
    # capsys's stderr is no terminal (a log; a notebook's is none either).
    assert not progress.shown(None) and progress.shown(True) and not progress.shown(False)
    for default in ({}, {"progress": None}):
        bytepair.train(["ab ab ab"] * 10, vocab_size=258, **default)
        assert capsys.readouterr().err == ""
    bytepair.train(["ab ab ab"] * 10, vocab_size=258, progress=False)
    assert capsys.readouterr().err == ""
    bytepair.train(["ab ab ab"] * 10, vocab_size=258, progress=True)
    err = capsys.readouterr().err
    assert "counting: 100%|" in err and "merging: 100%|" in err, err


def test_encode_file_bar_when_asked_even_off_a_terminal(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_bytes(b"hello world\n" * 1000)
    tok = _bytes_tokenizer()
    tok.encode_file(src, tmp_path / "a.npy")  # progress=None: only on a terminal
    assert capsys.readouterr().err == ""
    tok.encode_file(src, tmp_path / "b.npy", progress=False)
    assert capsys.readouterr().err == ""
    tok.encode_file(src, tmp_path / "c.npy", progress=True)
    err = capsys.readouterr().err
    assert "in.txt: 100%|" in err and "12.0k/12.0k" in err, err


def test_training_bars_know_their_totals(capsys):
    """Counting a list of texts, a sample of documents and merging all show a percentage
    (so an ETA)."""
    texts = ["the cat sat on the mat|a dog|the end"] * 200
    bytepair.train(texts, vocab_size=270, progress=True)
    err = capsys.readouterr().err
    assert "counting: 100%|" in err and "merging: 100%|" in err, err
    bytepair.train(
        texts, vocab_size=270, document_separator="|", sample_documents=50, progress=True
    )
    err = capsys.readouterr().err
    assert "counting: 100%|" in err, err


def test_training_bars_on_jsonl_and_parquet_know_their_totals(tmp_path, capsys):
    """Counting and sampling .jsonl and .parquet files (several row groups) move through
    the files' bytes: a percentage and an ETA, ending at their size on disk."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [f"the cat sat on the mat {i} times" for i in range(300)]
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    parquet = tmp_path / "b.parquet"
    pq.write_table(pa.table({"text": texts}), parquet, row_group_size=70)
    total = os.path.getsize(jsonl) + os.path.getsize(parquet)
    done = f"{total / 1000:.1f}k/{total / 1000:.1f}k"  # tqdm's SI form of the total
    for options, phase in (({}, "counting"), ({"sample_documents": 100}, "sampling")):
        bytepair.train([jsonl, parquet], vocab_size=270, progress=True, **options)
        err = capsys.readouterr().err
        assert f"{phase}: 100%|" in err and done in err, err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_bars_on_a_terminal_and_never_with_quiet(tmp_path, monkeypatch):
    import warnings

    from bytepair import cli

    # main() installs its one-line warning format: put the test process's back afterwards.
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    src = tmp_path / "in.txt"
    src.write_bytes(b"hello world\n" * 1000)
    tok = tmp_path / "tok.json"
    _bytes_tokenizer().save(tok)
    for quiet, expected in ((["-q"], False), ([], True)):
        out = tmp_path / ("quiet" if quiet else "shown")  # the CLI replaces no output
        err = _Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        assert cli.main(["encode", "-t", str(tok), str(src), "-o", f"{out}.npy", *quiet]) == 0
        assert ("in.txt: 100%|" in err.getvalue()) == expected, err.getvalue()
        err = _Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        train = ["train", str(src), "-o", f"{out}.json", "--vocab-size", "260"]
        assert cli.main([*train, *quiet]) == 0
        assert ("merging: 100%|" in err.getvalue()) == expected, err.getvalue()


def _drain(fd: int) -> bytes:
    """Everything the pty holds: one read may return only the first write (the bar's 0%
    line) while the rest is still in flight."""
    import select

    shown = b""
    while select.select([fd], [], [], 1.0)[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        shown += chunk
    return shown


def test_bar_shows_on_a_terminal_that_reports_no_size(monkeypatch):
    """A new pty (as under `script`) reports 0 x 0; tqdm would hide its bar there (row 0
    is past 0 rows), so Bar falls back to 100 x 24."""
    import pty

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    leader, follower = pty.openpty()
    assert os.get_terminal_size(follower) == (0, 0)
    # shutil reads stdout's size: make it this terminal's too.
    real_size = os.get_terminal_size
    monkeypatch.setattr(os, "get_terminal_size", lambda *fd: real_size(follower))
    with open(follower, "w", encoding="utf-8") as stream:
        monkeypatch.setattr(sys, "stderr", stream)  # tqdm measures only stderr and stdout
        with Bar("counting", total=10, unit="merges") as bar:
            bar(5, 10)
        stream.flush()
        shown = _drain(leader).decode("utf-8", "replace")
    os.close(leader)
    assert "counting:  50%|" in shown, repr(shown)


def test_cli_streaming_encode_draws_a_bar_over_its_input(tmp_path, monkeypatch):
    """`bytepair encode FILE -o ids.txt` (and stdin redirected from a file) streams the file
    through encode_iterable: on a terminal, a bar over the file's bytes, to 100% of its
    size (12,000 bytes: 12.0k); with -q none."""
    import warnings

    from bytepair import cli

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    src = tmp_path / "in.txt"
    src.write_bytes(b"hello world\n" * 1000)
    tok = tmp_path / "tok.json"
    _bytes_tokenizer().save(tok)
    for name, quiet, stdin in (("a", [], False), ("b", ["-q"], False), ("c", [], True)):
        err = _Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        args = ["encode", "-t", str(tok), "-o", str(tmp_path / f"{name}.txt"), *quiet]
        with open(src, "rb") as f:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(f))
            assert cli.main(args if stdin else [*args, str(src)]) == 0
        shown = err.getvalue()
        assert ("100%|" in shown and "12.0k/12.0k" in shown) == (not quiet), shown
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "c.txt").read_bytes()


def test_audit_counting_a_corpus_draws_a_bar_over_its_bytes(tmp_path, capsys, monkeypatch):
    """A glitch-token audit encodes the whole training corpus (290 MB of en-prose took 7.5 s
    with nothing on the screen): a bar over each file's bytes, 12,000 of them (12.0k), as
    encode_file draws; off a terminal only when asked, and on one under bytepair inspect
    unless -q."""
    from bytepair import cli

    src = tmp_path / "in.txt"
    src.write_bytes(b"hello world\n" * 1000)
    tok = _bytes_tokenizer()
    tok.audit(src)  # progress=None: only on a terminal
    tok.audit(src, progress=False)
    assert capsys.readouterr().err == ""
    tok.audit(src, progress=True)
    err = capsys.readouterr().err
    assert "in.txt: 100%|" in err and "12.0k/12.0k" in err, err
    path = tmp_path / "tok.json"
    tok.save(path)
    for quiet in ([], ["-q"]):
        term = _Terminal()
        monkeypatch.setattr(sys, "stderr", term)
        assert cli.main(["inspect", str(path), "--audit", "--corpus", str(src), *quiet]) == 0
        shown = term.getvalue()
        assert ("in.txt: 100%|" in shown and "12.0k/12.0k" in shown) == (not quiet), shown


def test_compare_draws_a_bar_for_each_corpus_and_tokenizer(capsys):
    """bytepair compare --max-bytes 0 encodes whole corpora (338 MB took 33 s with one
    status line): a bar for each corpus and tokenizer over its bytes."""
    from bytepair import metrics

    tok = _bytes_tokenizer()
    corpora = {"en": b"hello world\n" * 1000, "zh": "\u4f60\u597d\n".encode() * 500}
    metrics.compare({"bytes": tok}, corpora)  # progress=False by default
    assert capsys.readouterr().err == ""
    table = metrics.compare({"bytes": tok}, corpora, progress=True)
    err = capsys.readouterr().err
    assert "en, bytes: 100%|" in err and "12.0k/12.0k" in err, err
    assert "zh, bytes: 100%|" in err and "3.50k/3.50k" in err, err
    assert table["en"]["bytes"].tokens == 12_000  # one byte a token
