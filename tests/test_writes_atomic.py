"""Writes that replace a file: every writer (the format writers, ``encode_file``'s core and
corpus paths, shards) checks its destinations first, names the destination (not its
temporary file) when it fails, leaves no temporary file, keeps the permissions of the file
it replaces, writes through a symbolic link to its target, and removes the temporary files
of a writer that was killed."""

from __future__ import annotations

import itertools
import os
import signal
import stat
import subprocess
import sys
import time

import numpy
import pytest
from bytepair import Tokenizer
from bytepair.formats import atomic

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.fixture
def tok():
    return Tokenizer(BYTES, [], special_tokens=["<s>"])


def hidden(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith("."))


def test_a_pair_with_a_directory_in_it_replaces_neither_file(tmp_path, tok):
    (tmp_path / "v.json").write_text("old vocab")
    (tmp_path / "m.txt").mkdir()
    with pytest.raises(IsADirectoryError, match="directory") as e:
        tok.save((tmp_path / "v.json", tmp_path / "m.txt"))
    assert e.value.filename == str(tmp_path / "m.txt")
    assert (tmp_path / "v.json").read_text() == "old vocab"
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("name", ["a.txt", "a.jsonl"])
def test_encode_file_onto_a_directory_names_it_and_leaves_no_temporary(tmp_path, tok, name):
    (tmp_path / "a.txt").write_text("hi")
    (tmp_path / "a.jsonl").write_text('{"text": "hi"}\n')
    (tmp_path / "outdir").mkdir()
    with pytest.raises(IsADirectoryError) as e:
        tok.encode_file(tmp_path / name, tmp_path / "outdir")
    assert e.value.filename == str(tmp_path / "outdir")
    assert ".tmp" not in str(e.value)
    assert hidden(tmp_path) == [] and os.listdir(tmp_path / "outdir") == []


@pytest.mark.parametrize("name", ["a.txt", "a.jsonl"])
def test_a_missing_folder_names_the_destination(tmp_path, tok, name):
    # JSON in a .txt would be warned of (JSON Lines read as plain text): plain text there.
    (tmp_path / name).write_text('{"text": "hi"}\n' if name.endswith(".jsonl") else "hi\n")
    with pytest.raises(FileNotFoundError, match="folder does not exist") as e:
        tok.encode_file(tmp_path / name, tmp_path / "missing" / "x.npy")
    assert e.value.filename == str(tmp_path / "missing" / "x.npy")
    assert hidden(tmp_path) == []


def test_saving_to_an_empty_name_fails_and_leaves_nothing(tmp_path, tok, monkeypatch):
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    with pytest.raises(FileNotFoundError, match="no file name"):
        tok.save("")
    assert os.listdir(tmp_path) == ["work"] and os.listdir(tmp_path / "work") == []


def _writes(tok, tmp_path):
    """Each writer, as a function of its destination."""
    (tmp_path / "in.txt").write_text("hi")
    (tmp_path / "in.jsonl").write_text('{"text": "hi"}\n')
    return {
        "save": lambda out: tok.save(out),
        "encode_file": lambda out: tok.encode_file(tmp_path / "in.txt", out),
        "encode_file jsonl": lambda out: tok.encode_file(tmp_path / "in.jsonl", out),
        "write_parts": lambda out: atomic.write_parts(out, [b"x"]),
    }


def test_replacing_a_file_keeps_its_permissions(tmp_path, tok):
    umask = os.umask(0o022)
    os.umask(umask)
    for name, write in _writes(tok, tmp_path).items():
        kept = tmp_path / f"{name}.private"
        kept.write_bytes(b"old")
        kept.chmod(0o600)
        write(kept)
        assert kept.read_bytes() != b"old"
        assert oct(kept.stat().st_mode & 0o777) == oct(0o600), name
        new = tmp_path / f"{name}.new"
        write(new)
        assert oct(new.stat().st_mode & 0o777) == oct(0o666 & ~umask), name


def test_writing_onto_a_symbolic_link_replaces_its_target(tmp_path, tok):
    for name, write in _writes(tok, tmp_path).items():
        real = tmp_path / f"{name}.real"
        real.write_bytes(b"old")
        link = tmp_path / f"{name}.link"
        link.symlink_to(real.name)
        write(link)
        assert link.is_symlink() and os.readlink(link) == real.name, name
        assert real.read_bytes() != b"old", name
    assert hidden(tmp_path) == []


def test_a_device_or_pipe_is_never_replaced(tmp_path, tok):
    """Renamed over, a FIFO (or /dev/null) would become a regular file: each writer
    refuses it, named, directly or through a symbolic link, and leaves it a FIFO."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to("pipe")
    for name, write in _writes(tok, tmp_path).items():
        for out in (fifo, tmp_path / "link"):
            with pytest.raises(OSError, match="an atomic write would replace") as e:
                write(out)
            assert e.value.filename == str(out), name
            assert stat.S_ISFIFO(os.stat(fifo).st_mode), name
    assert hidden(tmp_path) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_write_removes_the_temporaries_a_killed_writer_left(tmp_path, tok):
    dead = _dead_pid()
    stale = [
        f".ids.npy.tmp-{dead}",
        f".ids.npy.tmp-{dead}-0123456789ab",
        f"..ids.npy.tmp-{dead}-0123456789ab.tmp-{dead}-ba9876543210",  # staged ids' own
    ]
    kept = [f".ids.npy.tmp-{os.getppid()}-0123456789ab", f".other.npy.tmp-{dead}-0123456789ab"]
    for name in stale + kept:
        (tmp_path / name).write_bytes(b"half an array")
    (tmp_path / "in.txt").write_text("hi")
    tok.encode_file(tmp_path / "in.txt", tmp_path / "ids.npy")
    assert numpy.load(tmp_path / "ids.npy").tolist() == [104, 105]
    assert hidden(tmp_path) == sorted(kept)  # a live writer's, another destination's


def test_sigkill_leaves_a_temporary_that_the_next_run_removes(tmp_path):
    src = tmp_path / "big.txt"
    src.write_bytes(b"the cat sat on the mat. " * 4_000_000)  # 96 MB: seconds to encode
    script = (
        "import sys, bytepair\n"
        "tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])\n"
        "print('go', flush=True)\n"
        "tok.encode_file(sys.argv[1], sys.argv[2], threads=1, progress=False)\n"
    )
    out = tmp_path / "out" / "ids.npy"
    out.parent.mkdir()
    with subprocess.Popen(
        [sys.executable, "-c", script, str(src), str(out)], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout.readline().strip() == "go"
        deadline = time.monotonic() + 30
        while not hidden(out.parent) and time.monotonic() < deadline:
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    left = hidden(out.parent)
    assert len(left) == 1 and left[0].startswith(f".ids.npy.tmp-{child.pid}-"), left
    (tmp_path / "small.txt").write_text("hi")
    Tokenizer(BYTES, []).encode_file(tmp_path / "small.txt", out)
    assert os.listdir(out.parent) == ["ids.npy"]


def test_every_rename_is_made_durable_by_syncing_its_directory(tmp_path, tok, monkeypatch):
    # A file's fsync does not record its new name: after a power cut the directory could
    # still list the old file. Each writer's rename must be followed by the directory's.
    events = []
    real_replace, real_fsync = os.replace, os.fsync

    def replace(src, dst):
        real_replace(src, dst)
        events.append(("rename", os.path.abspath(dst)))

    def fsync(fd):
        real_fsync(fd)
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "fsync", fsync)
    (tmp_path / "in.txt").write_text("hello there <s> and more\n" * 50)
    tok.save(tmp_path / "t.json")
    tok.encode_file(tmp_path / "in.txt", tmp_path / "ids.npy", progress=False)
    from bytepair import token_shards

    shards = tmp_path / "shards"
    token_shards.write(tok, tmp_path / "in.txt", shards, 300, progress=False)
    renames = [i for i, (kind, _) in enumerate(events) if kind == "rename"]
    assert len(renames) >= 6  # t.json, ids.npy, progress, shards, documents.npy, index.json
    for i in renames:
        directory = os.path.dirname(events[i][1])
        assert events[i + 1] == ("fsync", directory), events[i : i + 2]
    # The document starts are on disk before each state that counts them: every state
    # after the first (0 documents) follows an fsync of the starts since the one before.
    progress = str(shards / ".progress.json")
    states = [i for i in renames if events[i][1] == progress]
    assert len(states) >= 3
    starts = ("fsync", str(shards / ".documents.partial"))
    for before, state in itertools.pairwise(states):
        assert starts in events[before:state]
