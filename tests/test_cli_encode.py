"""`bytepair encode` and `bytepair decode`: byte-exact round trips through pipes and files,
the special-token policy, `.npy` output through encode_file, input streamed in 1 MB chunks,
and the errors a user meets (not an id, a closed pipe)."""

from __future__ import annotations

import os
import subprocess
import sys

import bytepair
from cli_run import assert_not_replaced, assert_usage_error, ok, run

ROUND_TRIP = (
    "Hello, wörld! 你好，世界。 Ünïcödé ✓ emoji 🙂\r\n"
    "tabs\tand   spaces  \n\n  trailing spaces   \n"
).encode() + b"invalid utf-8: \xff\xfe \xe4\xbd and the end without newline"


def test_encode_decode_pipe_round_trips_bytes_exactly(en_tok):
    ids = run("encode", "-t", en_tok, input=ROUND_TRIP)
    text = ok(ids)
    assert text.endswith("\n") and text.count("\n") == 1, "ids are one line"
    numbers = [int(x) for x in text.split(" ")]
    assert all(0 <= i < 320 for i in numbers)
    assert len(numbers) < len(ROUND_TRIP), "a trained tokenizer merges something"
    back = run("decode", "-t", en_tok, input=ids.stdout)
    ok(back)
    assert back.stdout == ROUND_TRIP


def test_encode_decode_files(tmp_path, en_tok):
    src = tmp_path / "in.txt"
    src.write_bytes(ROUND_TRIP)
    ok(run("encode", "-t", en_tok, src, "-o", tmp_path / "ids.txt"))
    ok(run("decode", "-t", en_tok, tmp_path / "ids.txt", "-o", tmp_path / "out.txt"))
    assert (tmp_path / "out.txt").read_bytes() == ROUND_TRIP
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


def test_encode_refuses_special_token_text_unless_told(en_tok):
    text = b"one<|endoftext|>two"
    assert_usage_error(
        run("encode", "-t", en_tok, input=text),
        "<|endoftext|>",
        "--allow-special",
        "--special-as-text",
    )
    allowed = [
        int(x) for x in ok(run("encode", "-t", en_tok, "--allow-special", input=text)).split()
    ]
    assert allowed.count(319) == 1  # the special token's id: the last one
    as_text = run("encode", "-t", en_tok, "--special-as-text", input=text)
    assert 319 not in [int(x) for x in ok(as_text).split()]
    assert ok(run("decode", "-t", en_tok, input=as_text.stdout)).encode() == text


def test_a_special_token_in_a_corpus_file_is_placed_by_line(tmp_path, en_tok):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "one"}\n{"text": "two<|endoftext|>"}\n')
    out = run("encode", "-t", en_tok, corpus, "-o", tmp_path / "c.npy")
    assert_usage_error(out, "c.jsonl:2: the input contains the special token", "--allow-special")


def test_every_output_follows_the_special_flags(tmp_path, en_tok):
    """stdout, a text file, a .npy array and shards: special-token text is an error without
    a flag, the special token with --allow-special, plain text with --special-as-text."""
    import json

    import numpy

    tok = bytepair.Tokenizer.load(en_tok)
    text = "one<|endoftext|>two"
    src = tmp_path / "in.txt"
    src.write_text(text)
    want = {
        "--allow-special": tok.encode(text, allowed_special="all"),
        "--special-as-text": tok.encode(text, disallowed_special=()),
    }
    assert want["--allow-special"].count(319) == 1 and 319 not in want["--special-as-text"]

    def stdout(proc, _):
        return [int(x) for x in ok(proc).split()]

    def text_file(proc, out):
        ok(proc)
        return [int(x) for x in out.read_text().split()]

    def npy(proc, out):
        ok(proc)
        return numpy.load(out).tolist()

    def shards(proc, out):
        ok(proc)
        index = json.loads((out / "index.json").read_text())
        return numpy.concatenate([numpy.load(out / s["file"]) for s in index["shards"]]).tolist()

    outputs = [
        (stdout, [], None),
        (text_file, ["-o"], "ids.txt"),
        (npy, ["-o"], "ids.npy"),
        (shards, ["--shard-tokens", 4, "-q", "-o"], "shards"),
    ]
    for read, args, name in outputs:
        base = ["encode", "-t", en_tok, src, *args]
        target = [tmp_path / f"none-{name}"] if name else []
        assert_usage_error(run(*base, *target), "<|endoftext|>", "--allow-special")
        for flag, ids in want.items():
            out = tmp_path / f"{flag[2:]}-{name}" if name else None
            got = read(run(*base, *([out] if out else []), flag), out)
            assert got == ids, (read.__name__, flag)


def test_encode_to_npy_uses_encode_file(tmp_path, en_tok, en_corpus):
    import numpy

    out = tmp_path / "ids.npy"
    # The corpus separates its documents with <|endoftext|>.
    ok(run("encode", "-t", en_tok, en_corpus, "-o", out, "-q", "--allow-special"))
    ids = numpy.load(out)
    assert ids.dtype == numpy.uint16  # 320 tokens fit
    assert bytepair.Tokenizer.load(en_tok).decode_bytes(ids.tolist()) == en_corpus.read_bytes()
    decoded = run("decode", "-t", en_tok, out)
    ok(decoded)
    assert decoded.stdout == en_corpus.read_bytes()


def test_encode_streams_input_larger_than_its_chunks(tmp_path, en_tok, en_corpus):
    """encode reads 1 MB chunks: ids across chunk boundaries (characters split between them)
    equal encode_bytes of the whole, and memory does not grow with the input."""
    tok = bytepair.Tokenizer.load(en_tok)
    unit = en_corpus.read_bytes() + "中文，一个字符。\n".encode() + b"\xff"
    peaks = []
    # Both inputs span several 1 MB chunks (a copy is 60 KB), so their peaks differ by what
    # grows with the input, not by the working set of a chunk in flight (about 15 MB).
    for copies in (100, 400):
        src = tmp_path / f"in{copies}.txt"
        src.write_bytes(unit * copies)
        proc = subprocess.run(
            [sys.executable, "-c", PEAK_OF_CLI, "encode", "-t", en_tok, "--allow-special", src],
            capture_output=True,
            timeout=300,
        )
        out, peak = proc.stdout.rsplit(b"\n", 2)[0], int(proc.stdout.rsplit(b"\n", 2)[1])
        assert proc.returncode == 0, proc.stderr.decode()
        want = tok.encode_bytes(src.read_bytes(), allowed_special="all")
        if copies == 100:
            assert [int(x) for x in out.split()] == want
        else:  # the same chunks again: the count suffices, and parsing 8M ids takes long
            assert out.count(b" ") + 1 == len(want)
        peaks.append(peak)
    # 4x the input (18 MB more of it) may cost 10 MB more (it costs about 4 MB); reading 6 MB
    # whole cost 287 MB more.
    assert peaks[1] <= peaks[0] + 10_000, peaks


# Runs the CLI in this process, then prints its peak RSS in KB on a line of its own: VmHWM,
# not ru_maxrss, which keeps the peak of the process that forked it (pytest's, which grew
# as earlier tests and this one parsed ids).
PEAK_OF_CLI = """
import re, sys
from bytepair.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
status = open("/proc/self/status").read()
print("\\n" + re.search(r"VmHWM:\\s+(\\d+)", status).group(1))
sys.exit(code)
"""


def test_decode_rejects_what_is_not_an_id(en_tok):
    assert_usage_error(run("decode", "-t", en_tok, input=b"1 2 cat 3\n"), "'cat'")
    assert_usage_error(run("decode", "-t", en_tok, input=b"1 99999\n"), "99999")
    # Ids are decimal digits, as encode writes them: not what else Python's int() reads.
    for word in ("1_0", "+7", "-1", "\u0663", "0x1f"):
        proc = run("decode", "-t", en_tok, input=f"104 {word} 105".encode())
        assert_usage_error(proc, f"item 2 is {word!r}, not a token id")


def test_decode_names_a_npy_array_that_is_not_a_row_of_ids(tmp_path, en_tok):
    """A 2-D array of ids in range ([[104, 105]]) was refused as "unknown token id
    [104, 105]", and floats as unknown ids: the file, not an id, is what is wrong."""
    import numpy

    for name, array, words in (
        ("rows.npy", numpy.array([[104, 105], [104, 105]]), ["2-D"]),
        ("floats.npy", numpy.array([104.0, 105.0]), ["float64"]),
    ):
        numpy.save(tmp_path / name, array)
        proc = run("decode", "-t", en_tok, tmp_path / name)
        assert_usage_error(proc, name, "1-D array of integer token ids", *words)


def test_encode_into_a_closed_pipe_is_not_an_error(en_tok, en_corpus):
    proc = subprocess.run(
        f"{sys.executable} -m bytepair encode -t {en_tok} --allow-special {en_corpus} | head -c 10",
        shell=True,
        capture_output=True,
        timeout=300,
    )
    assert len(proc.stdout) == 10
    assert b"Traceback" not in proc.stderr and b"Error" not in proc.stderr, proc.stderr


def test_encode_jsonl_to_npy_and_to_resumable_shards(tmp_path, en_tok):
    """`encode CORPUS -o FILE.npy` and `encode CORPUS... --shard-tokens N -o DIR` give the
    ids of each document (as Tokenizer.encode gives them) with the separator after each."""
    import json

    import numpy

    tok = bytepair.Tokenizer.load(en_tok)
    sep = next(iter(tok.special_tokens))
    texts = ["The first document.\n", "", "A second one, longer than the first. " * 9]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"t": t}) + "\n" for t in texts))
    (tmp_path / "b.txt").write_text("Plain text is one document.")
    want_jsonl = []
    for t in texts:
        want_jsonl += [*tok.encode(t, allowed_special="all"), tok.special_tokens[sep]]
    plain = [*tok.encode("Plain text is one document."), tok.special_tokens[sep]]
    want = want_jsonl + plain
    common = ["--text-field", "t", "--document-separator", sep, "-q"]
    ok(run("encode", "-t", en_tok, tmp_path / "a.jsonl", "-o", tmp_path / "a.npy", *common))
    assert numpy.load(tmp_path / "a.npy").tolist() == want_jsonl
    args = ["encode", "-t", en_tok, tmp_path / "a.jsonl", tmp_path / "b.txt"]
    ok(run(*args, "--shard-tokens", 16, "-o", tmp_path / "out", *common))
    index = json.loads((tmp_path / "out" / "index.json").read_text())
    got = [numpy.load(tmp_path / "out" / s["file"]) for s in index["shards"]]
    assert numpy.concatenate(got).tolist() == want
    assert all(len(g) == 16 for g in got[:-1]) and index["documents"] == 4
    ok(run(*args, "--shard-tokens", 16, "-o", tmp_path / "out", *common))  # done: no work
    ok(run(*args, "-o", tmp_path / "x.npy", *common))  # several inputs, in their order
    assert numpy.load(tmp_path / "x.npy").tolist() == want
    assert_usage_error(run("encode", "-t", en_tok, "-o", tmp_path / "s.npy"), "not stdin")
    assert_usage_error(run(*args, "--shard-tokens", 16, *common), "-o DIR")
    # Without --text-field the field is missing: the error names the line, the fields there
    # and the option.
    no_field = run("encode", "-t", en_tok, tmp_path / "a.jsonl", "-o", tmp_path / "y.npy", "-q")
    assert_usage_error(no_field, "a.jsonl:1: no field 'text'", "has 't'", "--text-field")
    assert not (tmp_path / "y.npy").exists()


def test_encode_and_decode_refuse_to_write_over_their_input(tmp_path, en_tok):
    src = tmp_path / "in.txt"
    src.write_bytes(b"precious text\n")
    assert_usage_error(run("encode", "-t", en_tok, src, "-o", src), "is the input file")
    assert src.read_bytes() == b"precious text\n"
    ids = tmp_path / "ids.txt"
    ok(run("encode", "-t", en_tok, src, "-o", ids))
    kept = ids.read_bytes()
    assert_usage_error(run("decode", "-t", en_tok, ids, "-o", ids), "is the input file")
    assert ids.read_bytes() == kept


def test_encode_and_decode_replace_an_existing_output_only_with_force(tmp_path, en_tok):
    """ids as text, ids as .npy, decoded text: an output that exists is an error naming it,
    and left as it was; --force replaces it with the new output."""
    import numpy

    tok = bytepair.Tokenizer.load(en_tok)
    src = tmp_path / "in.txt"
    src.write_bytes(ROUND_TRIP)
    want = tok.encode_bytes(ROUND_TRIP)
    kept = b"a file the user wants to keep\n"
    ids_txt, ids_npy, text = tmp_path / "ids.txt", tmp_path / "ids.npy", tmp_path / "out.txt"
    for path in (ids_txt, ids_npy, text):
        path.write_bytes(kept)
    for out in (ids_txt, ids_npy):
        assert_not_replaced(out, "encode", "-t", en_tok, src, "-o", out, "-q")
        ok(run("encode", "-t", en_tok, src, "-o", out, "-q", "--force"))
    assert [int(x) for x in ids_txt.read_text().split()] == want
    assert numpy.load(ids_npy).tolist() == want
    assert_not_replaced(text, "decode", "-t", en_tok, ids_txt, "-o", text)
    ok(run("decode", "-t", en_tok, ids_txt, "-o", text, "--force"))
    assert text.read_bytes() == ROUND_TRIP


def test_stdout_is_never_refused(tmp_path, en_tok):
    """`-o -` is stdout, even beside a file named "-", which stays as it was."""
    (tmp_path / "-").write_bytes(b"not an output\n")
    ids = run("encode", "-t", en_tok, "-o", "-", input=b"the cat", cwd=tmp_path)
    assert [int(x) for x in ok(ids).split()] == bytepair.Tokenizer.load(en_tok).encode("the cat")
    back = run("decode", "-t", en_tok, "-o", "-", input=ids.stdout, cwd=tmp_path)
    assert ok(back) == "the cat"
    assert (tmp_path / "-").read_bytes() == b"not an output\n"
    # /dev/stdout is stdout too, when the shell points it at a file (which then exists).
    with open(tmp_path / "redirected", "wb") as out:
        cmd = [sys.executable, "-m", "bytepair", "decode", "-t", str(en_tok), "-o", "/dev/stdout"]
        done = subprocess.run(cmd, input=ids.stdout, stdout=out, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "redirected").read_bytes() == b"the cat"


def test_a_pipe_as_output_is_written_into_not_replaced(tmp_path, en_tok):
    """`-o FIFO` (as `-o /dev/null` or `-o /dev/stdout`) streams the ids into it without
    --force, and it stays a FIFO; a .npy cannot be streamed, and says so."""
    import stat
    import threading

    fifo = tmp_path / "ids"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    ok(run("encode", "-t", en_tok, "-o", fifo, input=b"the cat"))
    reader.join()
    assert [int(x) for x in got[0].split()] == bytepair.Tokenizer.load(en_tok).encode("the cat")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    os.mkfifo(tmp_path / "ids.npy")
    (tmp_path / "in.txt").write_bytes(b"the cat")
    failed = run("encode", "-t", en_tok, tmp_path / "in.txt", "-o", tmp_path / "ids.npy")
    assert failed.returncode != 0 and b"an atomic write would replace" in failed.stderr
    assert b"Traceback" not in failed.stderr
    assert stat.S_ISFIFO(os.stat(tmp_path / "ids.npy").st_mode)


def test_a_sharded_encode_reruns_into_its_directory_without_force(tmp_path, en_tok):
    """Resuming is not replacing: a rerun into the same directory needs no --force and
    changes nothing; a directory of another run is refused, --force or not."""
    src = tmp_path / "in.txt"
    src.write_bytes(ROUND_TRIP)
    out = tmp_path / "shards"
    encode = ["encode", "-t", en_tok, src, "-o", out, "-q"]
    ok(run(*encode, "--shard-tokens", 8))
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "index.json" in files and "shard_00000.npy" in files
    ok(run(*encode, "--shard-tokens", 8))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files
    for force in ([], ["--force"]):
        other = run(*encode, "--shard-tokens", 9, *force)
        assert_usage_error(other, "shards of another run", "'shard_tokens' differs")
        assert {p.name: p.read_bytes() for p in out.iterdir()} == files


def test_encode_warns_of_a_compressed_file_read_as_plain_text(tmp_path, en_tok):
    """Every output of `encode` (stdout, .npy, shards) warns, in one line, that a .jsonl.gz
    (gzip's magic bytes 1f 8b) would be encoded as its compressed bytes."""
    import gzip

    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(b'{"text": "a document"}\n' * 40))
    path = tmp_path / "c.jsonl.gz"
    for out in ([], ["-o", tmp_path / "ids.npy"], ["--shard-tokens", 64, "-o", tmp_path / "d"]):
        proc = run("encode", "-t", en_tok, path, *out, "-q")
        ok(proc)
        err = proc.stderr.decode()
        assert err.startswith("bytepair: warning: c.jsonl.gz is gzip-compressed"), err
        assert "gunzip" in err and err.count("\n") == 1, err


def test_a_directory_or_glob_streamed_as_text_is_a_usage_error_naming_the_fix(tmp_path, en_tok):
    """`encode DIR` or `encode 'DIR/*.txt'` to stdout or a text file: the input is not one
    file to stream, so the error names the outputs that take it (not 'Is a directory')."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("one document")
    for corpus in (tmp_path / "data", tmp_path / "data" / "*.txt"):
        for out in ([], ["-o", tmp_path / "ids.txt"]):
            proc = run("encode", "-t", en_tok, corpus, *out)
            assert_usage_error(proc, str(corpus), "-o FILE.npy", "--shard-tokens N -o DIR")
    assert not (tmp_path / "ids.txt").exists()


def test_a_pipe_as_input_streams_every_byte(tmp_path, en_tok):
    """`encode <(zcat c.gz)`, a pipe named as the input, streams like stdin: the ids decode
    to every byte written into it (the check for compressed files must not read it first:
    what it read would be gone)."""
    import contextlib
    import threading

    data = ROUND_TRIP * 200
    fifo = tmp_path / "in.txt"
    os.mkfifo(fifo)

    def feed():
        with contextlib.suppress(BrokenPipeError):  # a reader that gave up
            fifo.write_bytes(data)

    writer = threading.Thread(target=feed)
    writer.start()
    cmd = [sys.executable, "-m", "bytepair", "encode", "-t", str(en_tok), str(fifo)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # A second open of the pipe, after the writer has closed it, would wait forever.
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        if writer.is_alive():  # never opened: a reader of our own lets the writer go
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join()
    assert proc.returncode == 0, err.decode()
    assert bytepair.Tokenizer.load(en_tok).decode_bytes(map(int, out.split())) == data
