"""Directory corpora: every file under the directory, through symbolic links to directories
(each real directory once), and a directory that cannot be read is an error naming it,
never a corpus silently missing its files."""

from __future__ import annotations

import os

import pytest
from bytepair import CorpusError, Tokenizer, documents


def _names(paths, root) -> list[str]:
    return [os.path.relpath(p, root) for p in paths]


def test_symbolic_links_to_directories_are_followed_once(tmp_path):
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (data / "a.txt").write_text("a")
    (data / "sub" / "b.txt").write_text("b")
    (tmp_path / "elsewhere" / "c.txt").write_text("c")
    (data / "linked").symlink_to(tmp_path / "elsewhere")
    (data / "sub" / "up").symlink_to(data)  # a cycle
    (data / "again").symlink_to(data / "sub")  # a second name for a directory
    # Directories are walked in sorted order: "again" is the first name of data/sub.
    got = _names(documents.corpus_paths(data), data)
    assert got == ["a.txt", "again/b.txt", "linked/c.txt"]


def test_an_unreadable_subdirectory_is_an_error_naming_it(tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "locked").mkdir(parents=True)
    (data / "a.txt").write_text("a")
    (data / "locked" / "b.txt").write_text("b")
    scandir = os.scandir

    def refusing(path="."):  # as for a directory without read permission (root reads all)
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(CorpusError, match=r"corpus directory '.*/data/locked' cannot be read"):
        documents.corpus_paths(data)
    with pytest.raises(CorpusError, match="cannot be read"):
        Tokenizer({i: bytes([i]) for i in range(256)}, []).encode_file(data, tmp_path / "ids.npy")
    with pytest.raises(CorpusError, match=r"corpus directory '.*/locked' cannot be read"):
        documents.corpus_paths(data / "locked")  # not "a directory that holds no files"
    assert not (tmp_path / "ids.npy").exists()


def test_a_pipe_or_dangling_link_in_a_corpus_is_an_error_naming_it(tmp_path):
    """A named pipe under a corpus directory (or matched by its glob) was listed as a file
    and reading it waited forever for a writer; a symbolic link to nothing failed later
    with the bare OSError of whoever touched it first. Each is a CorpusError naming it,
    never a file silently left out; a pipe named alone is not said not to exist."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text("a")
    os.mkfifo(data / "b.txt")
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    for corpus in (data, data / "*.txt"):
        with pytest.raises(CorpusError, match=r"'.*/data/b\.txt' is not a regular file"):
            documents.corpus_paths(corpus)
        with pytest.raises(CorpusError, match=r"'.*/data/b\.txt' is not a regular file"):
            tok.encode_file(corpus, tmp_path / "ids.npy")
    with pytest.raises(CorpusError, match=r"'.*/data/b\.txt' is not a regular file.*a pipe"):
        documents.corpus_paths(data / "b.txt")
    os.unlink(data / "b.txt")
    (data / "c.txt").symlink_to(tmp_path / "gone.txt")
    with pytest.raises(CorpusError, match=r"'.*/data/c\.txt' is a symbolic link to nothing"):
        documents.corpus_paths(data)
    assert not (tmp_path / "ids.npy").exists()
