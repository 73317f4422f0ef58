"""Running the `bytepair` command as a user does: in a subprocess, with its exit status,
stdout and stderr; and the tutorial's corpus whose merges are derived by hand."""

from __future__ import annotations

import os
import subprocess
import sys

CAT = "the cat in the hat sat on the mat"


# The five merges of CAT, derived by hand in docs/tutorial.md.
CAT_MERGES = [(b"a", b"t"), (b"t", b"h"), (b"th", b"e"), (b" ", b"the"), (b"s", b"at")]


def run(*args, input: bytes | None = None, env: dict | None = None, cwd=None):
    """Runs `python -m bytepair ARGS`; returns the CompletedProcess (bytes out/err)."""
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "bytepair", *map(str, args)],
        input=input,
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=300,
    )


def ok(proc) -> str:
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    return proc.stdout.decode("utf-8", "surrogateescape")


def assert_usage_error(proc, *words: str) -> str:
    """Exit 2, exactly one line on stderr, no traceback, naming the given words."""
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("bytepair: error: "), err
    for w in words:
        assert w in err, (w, err)
    return err


def assert_not_replaced(path, *args) -> str:
    """`bytepair ARGS` with ``path`` already there: a usage error naming it and --force (its
    line is returned), and ``path`` byte for byte as it was."""
    with open(path, "rb") as f:
        before = f.read()
    err = assert_usage_error(run(*args), f"{path} exists", "pass --force")
    with open(path, "rb") as f:
        assert f.read() == before
    return err
