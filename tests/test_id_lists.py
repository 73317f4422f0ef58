"""The id lists and ints the core hands to Python: lists the cyclic GC does not track,
one int object per id that outlives its tokenizer (src/py/ints.rs), and a buffer of ids
that a finalizer encoding on the same thread cannot disturb."""

from __future__ import annotations

import pickle

import pytest


@pytest.fixture(scope="session")
def pair(tiktoken_pair):
    return tiktoken_pair


def test_id_lists_are_not_tracked_by_the_cyclic_gc(pair):
    """Lists of ids hold only ints, so the core leaves them out of the cyclic GC (its young
    collections walked every id again); they must still behave as ordinary lists."""
    import gc

    _, tok = pair("gpt2")
    lists = [
        tok.encode("a b"),
        tok.encode_ordinary("a b"),
        tok.encode_bytes(b"a b"),
        *tok.encode_batch(["a b", "c"]),
        tok.encode_with_offsets("a b")[0],
    ]
    for ids in lists:
        assert type(ids) is list and not gc.is_tracked(ids)
    ids = lists[0]
    ids.append(7)
    ids.extend([8, 9])
    assert ids[-3:] == [7, 8, 9] and ids[: len(lists[1])] == lists[1]
    assert pickle.loads(pickle.dumps(ids)) == ids


_INTS_SCRIPT = r"""
import gc, pickle, sys
from bytepair import Tokenizer

def tokenizer(letters):
    vocab = {i: bytes([i]) for i in range(256)}
    pairs = [(a + b).encode() for a in letters for b in letters]
    vocab.update({256 + k: p for k, p in enumerate(pairs)})
    return Tokenizer(vocab)  # ranks only: "ab" is one token

text = "ab cd ef " * 3
small = tokenizer("abcdefghij")  # 356 ids: the first block
ids = small.encode(text)
assert any(i >= 257 for i in ids), ids
want = [int(str(i)) for i in ids]  # fresh ints of the same values
assert small.encode(text)[0] is ids[0]  # one int per id, not one per call
del small
gc.collect()
big = tokenizer("abcdefghijklmnopqrstuvwxyz")  # 932 ids: a second, larger block
for _ in range(1000):  # references taken and dropped many times over
    big.encode(text)
junk = [bytearray(64) for _ in range(100_000)]  # reuse any memory freed by mistake
assert ids == want and [type(i) for i in ids] == [int] * len(ids)
assert [hash(i) for i in ids] == [hash(i) for i in want]
assert [i + 1 for i in ids] == [i + 1 for i in want] and str(ids) == str(want)
assert pickle.loads(pickle.dumps(ids)) == want
assert min(sys.getrefcount(i) for i in ids if i >= 257) > 2**30
small_id = big.encode(",")[0]
assert small_id is int("44")  # ids below 257 are Python's own small ints
print("ok")
"""


def test_id_ints_are_ordinary_ints_that_outlive_their_tokenizer():
    """The ints of id lists are byte copies of ints in a block the process never frees
    (src/py/ints.rs). They must behave as ints, be one object per id, and stay valid after
    their tokenizer is gone and a larger vocab has replaced the block. In a fresh process, so
    that no earlier tokenizer has made the block already."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _INTS_SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_encode_called_from_a_finalizer_while_a_list_is_built(pair):
    """The core reuses one buffer of ids per thread; a `__del__` the cyclic GC runs while a
    list is being made (the list's allocation can start a collection) may encode again on
    the same thread, and must get a buffer of its own."""
    import gc

    _, tok = pair("gpt2")
    text = "hello world, " * 50
    want = tok.encode_ordinary(text)
    seen = []

    class Garbage:
        def __init__(self):
            self.me = self  # a cycle: only the cyclic GC frees it

        def __del__(self):
            try:
                seen.append(tok.encode_ordinary("nested") == tok.encode_ordinary("nested"))
            except BaseException as e:  # exceptions in __del__ are only printed
                seen.append(e)

    core = tok._encoder  # called directly: nothing is allocated before the list
    old = gc.get_threshold()
    keep = []
    try:
        for call in [core.encode_ordinary, core.encode] * 25:
            keep.append([[] for _ in range(100)])  # CPython's free list of lists is empty
            gc.collect(0)  # the young generation's count starts again at 0
            gc.set_threshold(1)  # so the second tracked allocation collects
            Garbage()  # the first: unreachable at once, collected by the list's allocation
            ids = call(text)
            gc.set_threshold(*old)
            assert ids == want
    finally:
        gc.set_threshold(*old)
    gc.collect()  # any Garbage a collection elsewhere left behind
    assert seen == [True] * 50
