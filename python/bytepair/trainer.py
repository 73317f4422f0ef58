"""train(), train_bpe(): check the inputs, count pre-tokens and learn merges in the Rust
core, show progress, build the vocab.

>>> tok = train(["ab ab ab"], vocab_size=258, progress=False)
>>> tok.merges
[(b'a', b'b'), (b' ', b'ab')]

Each file and each text is its own document: no pre-token spans two of them. The
counting runs on all cores (or ``threads``) with the GIL released; Ctrl-C stops it within
about 0.1 s.
"""

from __future__ import annotations

import concurrent.futures
import functools
import glob
import itertools
import logging
import os
import pathlib
import re
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence

from bytepair import _core, corpus_check, extend, patterns, sample, special, superbpe
from bytepair import compat as compat_mode
from bytepair import documents as corpus_docs
from bytepair.document_texts import DocumentTexts
from bytepair.errors import CorpusError, PatternError, TrainingWarning, VocabSizeError
from bytepair.formats.tokenizer_data import TokenizerData
from bytepair.progress import Bar, shown
from bytepair.shards import Shard
from bytepair.tokenizer import Tokenizer
from bytepair.training_report import PeakMemory, TrainingReport
from bytepair.vocab import build_vocab, checked_vocab_size

logger = logging.getLogger("bytepair")

Merge = tuple[bytes, bytes]

#: Texts from an iterable are handed to the core in chunks of about this many characters:
#: big enough to keep every core busy, small enough to bound the memory a chunk holds.
TEXT_CHUNK_CHARS = 16 << 20

#: A sampled document of a file this long or longer is counted in place (memory-mapped),
#: so that a long document is never copied into memory whole.
IN_PLACE_BYTES = 1 << 20


def train(
    files_or_texts: str | os.PathLike | Iterable[str | bytes | os.PathLike],
    vocab_size: int = 32_000,
    special_tokens: Sequence[str] = (),
    pattern: str | None = None,
    min_frequency: int = 1,
    threads: int | None = None,
    progress: bool | None = None,
    engine: str = "local",
    checkpoint_dir: str | os.PathLike | None = None,
    sample_documents: int | None = None,
    seed: int = 0,
    document_separator: str | None = None,
    compat: str = "cs336",
    base: Tokenizer | str | os.PathLike | None = None,
    max_token_length: int | None = None,
    text_field: str = "text",
    superword_transition: int | None = None,
    superword_pattern: str | None = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on files or texts.

    ``files_or_texts`` is a path, or an iterable of paths (``os.PathLike``, or ``str`` when
    every one of them names an existing file, a directory or a glob; or byte ranges of
    files, ``shards.Shard``, counted in place) or of texts (``str`` or ``bytes``). A
    directory stands for every file under it and a glob for the files it matches, sorted;
    a ``.jsonl`` or ``.parquet`` file is read document by document, the text in
    ``text_field`` (``bytepair.documents``); any other file is plain text.
    ``vocab_size`` counts the 256 bytes, the merges and the special tokens.
    ``pattern`` is ``gpt2`` unless given (with ``base``: the base's).
    ``compat`` picks whose rules and ids to reproduce exactly: ``"cs336"`` (default),
    ``"huggingface"`` (``BpeTrainer``; with its ``max_token_length``) or ``"rustbpe"``; see
    ``bytepair.compat``. ``base`` (a Tokenizer or a tokenizer file) extends that tokenizer
    to ``vocab_size`` ids, keeping all its ids: see ``bytepair.extend``.
    ``engine="ray"`` counts on a Ray cluster (files, globs or directories; resumable with
    ``checkpoint_dir``) and runs the merge loop here: see docs/distributed.md.
    ``sample_documents=N`` trains on a uniform random sample of N documents (``seed``
    picks it; N at least the number of documents takes them all), documents being cut at
    ``document_separator`` (default: the first special token; without either, each file
    and each text is one document): one streaming pass, memory growing with N, not with
    the corpus (``bytepair.sample``). ``tok.training_report`` gives the time, the peak
    memory of the training and the number of documents.
    ``superword_transition=t`` trains SuperBPE: plain BPE until the bytes and merges make
    ``t`` tokens, then on with ``superword_pattern`` (default: split only around numbers),
    so later tokens may span words (``bytepair.superbpe``).
    ``progress``: None draws bars on stderr when it is a terminal, True always (a
    notebook's stderr is no terminal), False never.

    >>> tok = train(["low low lower"], vocab_size=258, progress=False)
    >>> tok.merges
    [(b'o', b'w'), (b'l', b'ow')]
    >>> train(["low low lower"], vocab_size=258, compat="rustbpe", progress=False).merges
    [(b'l', b'o'), (b'lo', b'w')]
    """
    start, peak = time.perf_counter(), PeakMemory()
    checked_vocab_size(vocab_size)  # every engine, base and stage: before any allocation
    special_tokens = special.checked_names(special_tokens)
    compat = compat_mode.checked(compat, max_token_length)
    if base is not None:
        base = extend.checked_base(base, pattern)
        pattern = base.pattern
    pattern = "gpt2" if pattern is None else pattern
    cut = sample_documents is not None or document_separator is not None
    sample.check(sample_documents, seed, document_separator)
    drawn = None
    if engine != "local" or checkpoint_dir is not None:
        if _has_documents(files_or_texts):
            raise ValueError(
                "engine='ray' counts plain-text files; train on .jsonl or .parquet files "
                "with engine='local'"
            )
        if compat != "cs336" or base is not None:
            raise ValueError(
                "engine='ray' trains with compat='cs336' and no base; count locally "
                "(engine='local') for compat or base"
            )
        if cut:
            raise ValueError(
                "sample_documents and document_separator need engine='local': the "
                f"{engine!r} engine counts whole files"
            )
        tok = _train_on_engine(
            files_or_texts,
            vocab_size,
            special_tokens,
            pattern,
            min_frequency,
            threads,
            progress,
            engine,
            checkpoint_dir,
        )
    else:
        separator = document_separator or (special_tokens[0] if special_tokens else None)
        documents = (sample_documents, seed, separator) if cut else None
        learn = functools.partial(
            _learn,
            min_frequency=min_frequency,
            threads=threads,
            progress=progress,
            documents=documents,
            compat=compat,
            max_token_length=max_token_length,
            text_field=text_field,
        )
        if superword_transition is None:
            merges, drawn = learn(files_or_texts, vocab_size, special_tokens, pattern, base=base)
            tok = _tokenizer(merges, special_tokens, pattern, compat, base)
        else:
            t = superbpe.checked(superword_transition, vocab_size, special_tokens, compat, base)
            superword = patterns.resolve(superword_pattern or superbpe.SUPERWORD_PATTERN)
            corpus = superbpe.reusable(files_or_texts)
            subwords, more, drawn = _superbpe(
                corpus, vocab_size, t, special_tokens, pattern, superword, learn.keywords
            )
            tok = _tokenizer([*subwords, *more], special_tokens, superword)
    tok.training_report = TrainingReport(
        time.perf_counter() - start,
        peak.mb(),
        None if drawn is None else len(drawn),
        None if drawn is None else drawn.seen,
        "process" if peak.of_process else "training",
    )
    logger.info("%s", tok.training_report)
    return tok


def _superbpe(corpus, vocab_size, transition, special_tokens, pattern, superword, options):
    """SuperBPE's two stages (``bytepair.superbpe``): the merges of each, and stage 2's
    sample; ``options`` are ``_learn``'s keywords. Stage 2 counts while stage 1 merges on
    one core (100 MB of English at 200,000 tokens: 0.12 s of 4.6 s hidden)."""
    min_frequency, threads = options["min_frequency"], options["threads"]
    merging = functools.partial(
        _merges_from_counts,
        special_tokens=special_tokens,
        min_frequency=min_frequency,
        show=shown(options["progress"]),
        max_token_length=options["max_token_length"],
    )
    keys = ("threads", "progress", "documents", "compat", "text_field")
    counting = functools.partial(_counting, corpus, special_tokens, **{k: options[k] for k in keys})
    # Stage 1 cuts the special tokens out but holds none: they take the last ids.
    first = transition + len(special_tokens)
    _check_options(first, special_tokens, min_frequency, threads)
    counts, _ = counting(pattern)()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        later = pool.submit(counting(superword))
        subwords = merging(counts, first)
        del counts
        counts, drawn = later.result()
    return subwords, merging(counts, vocab_size, stage1=subwords), drawn


def _tokenizer(
    merges: list[Merge],
    special_tokens: list[str],
    pattern: str,
    compat: str = "cs336",
    base: Tokenizer | None = None,
) -> Tokenizer:
    """The Tokenizer of learned merges, with the ids of the compat mode (DESIGN's: bytes,
    merges, special tokens), or the base's ids then the new ones."""
    if base is not None:
        start = dict(base._vocab)
        new = compat_mode.new_ids(compat, start, merges, base.vocab_size)
        return extend.extended(base, new, merges, special_tokens)
    if compat == "huggingface":
        start = compat_mode.huggingface_start(special_tokens)
        new = compat_mode.new_ids(compat, start, merges, len(special_tokens) + 256)
        specials = {token: i for i, token in enumerate(special_tokens)}
        return _trained(start | new, merges, specials, pattern)
    if compat == "rustbpe":
        compat_mode.new_ids(compat, {i: bytes([i]) for i in range(256)}, merges, 256)
    return _trained(build_vocab(merges, special_tokens), merges, special_tokens, pattern)


def _trained(
    vocab: dict[int, bytes],
    merges: list[Merge],
    special_tokens: list[str] | dict[str, int],
    pattern: str,
) -> Tokenizer:
    """The Tokenizer of the trainer's own vocab and merges. The checks a given vocab and
    merges get are skipped: every merge's parts and result are in the vocab by construction
    (200,000 merges: 0.3 s of checks); the special tokens get their ids as ``Tokenizer``
    gives them."""
    specials = special.with_ids(special_tokens, vocab)
    data = TokenizerData(vocab, merges, specials, patterns.resolve(pattern), is_checked=True)
    return Tokenizer.from_data(data)


def train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 1,
    threads: int | None = None,
    progress: bool | None = None,
) -> tuple[dict[int, bytes], list[Merge]]:
    """Trains on one file and returns ``(vocab, merges)``: CS336's ``train_bpe`` shape.

    Ids 0..255 are the bytes, merges take 256.. in order (a merge whose bytes already
    exist reuses that id), then the special tokens follow.
    """
    if not isinstance(input_path, (str, os.PathLike)):
        raise CorpusError(f"input_path must be a path, got {type(input_path).__name__}")
    special_tokens = special.checked_names(special_tokens)
    merges, _ = _learn(
        [_checked_path(input_path)],
        vocab_size,
        special_tokens,
        pattern,
        min_frequency,
        threads,
        progress,
    )
    return build_vocab(merges, special_tokens), merges


def _learn(
    files_or_texts,
    vocab_size: int,
    special_tokens: list[str],
    pattern: str,
    min_frequency: int,
    threads: int | None,
    progress: bool | None,
    documents: tuple[int | None, int, str | None] | None = None,
    compat: str = "cs336",
    base: Tokenizer | None = None,
    max_token_length: int | None = None,
    text_field: str = "text",
) -> tuple[list[Merge], sample.Sample | None]:
    """The merges, and the sample of documents when ``documents`` is ``(sample_documents,
    seed, separator)``: then only the sampled documents are counted, each as a text."""
    _check_options(vocab_size, special_tokens, min_frequency, threads, base)
    count = _counting(
        files_or_texts,
        special_tokens,
        pattern,
        threads,
        progress,
        documents,
        compat,
        base,
        text_field=text_field,
    )
    counts, drawn = count()
    merges = _merges_from_counts(
        counts,
        vocab_size,
        special_tokens,
        min_frequency,
        shown(progress),
        compat=compat,
        base=base,
        max_token_length=max_token_length,
    )
    return merges, drawn


def _counting(
    files_or_texts,
    special_tokens: list[str],
    pattern: str,
    threads: int | None,
    progress: bool | None,
    documents: tuple[int | None, int, str | None] | None = None,
    compat: str = "cs336",
    base: Tokenizer | None = None,
    text_field: str = "text",
):
    """Checks the corpus now and returns the call that counts its pre-tokens: ``(counts,
    sample)``, the sample as ``_learn`` says."""
    cut = [*(base.special_tokens if base is not None else ()), *special_tokens]
    cut = list(dict.fromkeys(cut)) if compat_mode.cuts_special_tokens(compat) else []
    counter = _counter(pattern, cut, threads)
    lines = compat_mode.reads_lines(compat)
    file_counter = _counter(pattern, cut, threads, lines=True) if lines else counter
    show = shown(progress)
    paths, texts = _sources(files_or_texts)
    # A list of texts has a known size, so its bar has an ETA; an iterator's has none.
    text_total = (
        sum(len(x) for x in files_or_texts if isinstance(x, (str, bytes)))
        if texts is not None and isinstance(files_or_texts, Sequence)
        else None
    )
    paths, docs = _with_documents(paths, text_field)
    # The separator is cut out like a special token: its text is no surprise in the corpus.
    declared = [*(base.special_tokens if base is not None else ()), *special_tokens]
    cut_out = [*declared, *([documents[2]] if documents and documents[2] else [])]
    # stacklevel 5: the warnings point at the caller of train() or train_bpe().
    corpus_check.check_files(paths, cut_out, stacklevel=5)
    if texts is not None:
        first, texts = corpus_check.head(texts)
        corpus_check.check(first, "the texts", cut_out, stacklevel=5)
    if docs is not None:
        # The documents read here stay in ``rest``: the files are read once.
        first, rest = corpus_check.head(docs)
        where = os.path.basename(docs.paths[0]) if len(docs.paths) == 1 else "the documents"
        corpus_check.check(first, where, cut_out, stacklevel=5)
        docs = (docs, rest)
    counters = (counter, file_counter)
    return functools.partial(_count, counters, paths, texts, text_total, docs, documents, show)


def _count(counters, paths, texts, text_total, docs, documents, show):
    """``_counting``'s count: ``counters`` is the counter of texts and that of text files
    (line by line in HF's mode, see ``bytepair.compat``); ``docs`` the ``DocumentTexts``
    of .jsonl and .parquet files and what is left of them to read."""
    counter, file_counter = counters
    counts = _core.PretokenCounts()
    drawn = None
    # (counter, texts, their size, whether this loop draws their bar) to count as texts:
    # the documents of files draw their own, through the files' bytes.
    text_jobs = [] if texts is None else [(counter, texts, text_total, True)]
    if documents is not None:
        n, seed, separator = documents
        sources = [p if isinstance(p, Shard) else pathlib.Path(p) for p in paths]
        # Chained, never listed: the sample's memory grows with n, not with the corpus.
        more = [] if docs is None else [docs[0].with_bar(docs[1], "sampling", show)]
        corpus = itertools.chain(sources, texts or (), *more)
        drawn = sample.sample(corpus, n, seed, separator, show)
        # Long documents are counted in place, short ones read and counted as texts: a
        # range costs the core ~40 µs (22,000 ranges of TinyStories: 0.93 s, as texts 0.35 s).
        paths = [_whole_range(*doc) for doc in drawn.file_ranges(IN_PLACE_BYTES)]
        below = IN_PLACE_BYTES
        # Files' documents apart from texts' only where their counters differ (HF's mode).
        kinds = (
            [(counter, None)]
            if file_counter is counter
            else [(file_counter, True), (counter, False)]
        )
        text_jobs = [
            (c, drawn.iter_documents(below=below, files=f), drawn.size(below=below, files=f), True)
            for c, f in kinds
        ]
    elif docs is not None:
        text_jobs.append((counter, docs[0].with_bar(docs[1], "counting", show), None, False))
    if paths:
        # A Shard is a byte range of a file, counted in place (a held-out tail stays out).
        ranges = [(p.start, p.end) if isinstance(p, Shard) else (0, 2**64 - 1) for p in paths]
        files = [p.path if isinstance(p, Shard) else p for p in paths]
        with Bar("counting", unit="B", enabled=show) as bar:
            try:
                file_counter.count_files(counts, files, progress=bar, ranges=ranges)
            except OSError as e:
                raise CorpusError(f"cannot read the corpus: {e}") from None
    for job_counter, job_texts, job_total, bar_here in text_jobs:
        if job_total == 0:  # a sample with no documents of this kind
            continue
        with Bar("counting", total=job_total, unit="B", enabled=show and bar_here) as bar:
            done = 0
            for chunk, size in _chunks(job_texts):
                job_counter.count_texts(counts, chunk)
                done += size
                bar.update(done)
    return counts, drawn


def _whole_range(path: str, start: int, end: int) -> Shard:
    st = os.stat(path)
    return Shard(path, start, end, st.st_size, st.st_mtime_ns)


def _check_options(
    vocab_size: int,
    special_tokens: list[str],
    min_frequency: int,
    threads: int | None,
    base: Tokenizer | None = None,
) -> None:
    """Raises for a bad option before any counting (a distributed run may count for hours)."""
    checked_vocab_size(vocab_size)
    if base is None:
        _num_merges(vocab_size, special_tokens)
    else:
        extend.num_new_tokens(base, vocab_size, special_tokens)
    # Special-token text is cut out before counting, so no merge can rebuild a special
    # token's bytes: only a one-byte special token collides, and it fails here, early.
    build_vocab([], special_tokens)
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an int >= 1, got {min_frequency!r}")
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise ValueError(f"threads must be None (all cores) or an int >= 1, got {threads!r}")


def _merges_from_counts(
    counts,
    vocab_size: int,
    special_tokens: list[str],
    min_frequency: int,
    show: bool,
    stacklevel: int = 4,
    compat: str = "cs336",
    base: Tokenizer | None = None,
    max_token_length: int | None = None,
    stage1: list[Merge] | None = None,
) -> list[Merge]:
    """The merge loop over counted pre-tokens (a ``_core.PretokenCounts``), with its bar and
    the early-stop warning: the same code after local counting and after ``engine="ray"``.
    ``stage1``: the merges of SuperBPE's first stage, which this extends as it would a base
    (the core builds their encoder, for its one use)."""
    encoder = None if base is None else base._encoder  # built already: not again
    if base is not None:
        wanted_new = extend.num_new_tokens(base, vocab_size, special_tokens)
        start = extend.start(base)
    elif stage1 is not None:
        vocab = build_vocab(stage1)
        wanted_new = vocab_size - len(vocab) - len(special_tokens)
        start = (list(vocab.items()), stage1)
    else:
        wanted_new = _num_merges(vocab_size, special_tokens)
        start = None
        if compat == "huggingface":
            # HF's ids for the bytes and special tokens break its ties (bytepair.compat).
            start = (list(compat_mode.huggingface_start(special_tokens).items()), [])
    empty = len(counts) == 0  # read before the merge loop consumes the counts
    rules = compat_mode.core_rules(compat, max_token_length)
    with Bar("merging", total=wanted_new, unit="merges", enabled=show) as bar:
        # consume: the merge loop builds its own pre-token table; freeing the counts' copy
        # keeps the peak down on big corpora.
        merges = _core.train_merges(
            counts,
            wanted_new,
            min_frequency,
            progress=bar,
            consume=True,
            base=start,
            base_encoder=encoder,
            **rules,
        )
    made, unit = len(merges), "merges"
    if compat == "huggingface":  # HF counts new tokens: a merge may rebuild an old one
        made = len(compat_mode.new_ids(compat, dict(start[0]), merges, 1 << 40))
        unit = "new tokens"
    if made < wanted_new and empty:
        warnings.warn(
            f"training stopped after 0 of {wanted_new} {unit}: the corpus is empty (no "
            f"text outside the special tokens), so the vocab has {vocab_size - wanted_new} "
            f"tokens instead of {vocab_size}; check the files or texts passed",
            TrainingWarning,
            stacklevel=stacklevel,
        )
    elif made < wanted_new:
        # min_frequency=1 stops only when no pair is left at all: a lower one cannot help.
        fix = (
            "use a larger corpus or a lower min_frequency"
            if min_frequency > 1
            else "every pre-token is a single token already: use a larger corpus or a "
            "smaller vocab_size"
        )
        warnings.warn(
            f"training stopped after {made} of {wanted_new} {unit}: no pair of tokens "
            f"occurs at least min_frequency={min_frequency} times, so the vocab has "
            f"{vocab_size - wanted_new + made} or fewer tokens instead of "
            f"{vocab_size} ({fix})",
            TrainingWarning,
            stacklevel=stacklevel,
        )
    return merges


def _num_merges(vocab_size: int, special_tokens: list[str]) -> int:
    num_merges = checked_vocab_size(vocab_size) - 256 - len(special_tokens)
    if num_merges < 0:
        raise VocabSizeError(
            f"vocab_size={vocab_size} is too small: it must hold the 256 single bytes and "
            f"the {len(special_tokens)} special tokens, so at least "
            f"{256 + len(special_tokens)}"
        )
    return num_merges


def _counter(pattern: str, special_tokens: list[str], threads: int | None, lines: bool = False):
    regex = patterns.resolve(pattern)  # raises PatternError for typos and bad regexes
    # Hand built-in patterns over by name so the core picks its fast splitter.
    name = patterns.name_of(regex)
    try:
        return _core.PretokenCounter(name or regex, special_tokens, threads, lines=lines)
    except ValueError as e:
        raise PatternError(
            f"pattern {pattern!r} is valid for Python's regex module but not for "
            f"fancy-regex, the engine the core uses: {e}"
        ) from None


def _checked_path(path: str | os.PathLike) -> str:
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if os.path.isdir(path):
        raise CorpusError(f"corpus {path!r} is a directory; pass the files inside it")
    if not os.path.exists(path) and (
        "\n" in path or len(path) > 255 or (" " in path and not _looks_like_path(path))
    ):
        # One str is a path, but this one reads as text (a line break, longer than a file
        # name may be, or words: a tutorial's sampled documents joined into one str): say
        # how to train on it, quoting its start only, since a corpus of megabytes would
        # otherwise fill the terminal.
        raise CorpusError(
            f"corpus file {path[:60]!r}{'...' if len(path) > 60 else ''} ({len(path):,} "
            "characters) does not exist: a str is a file path; to train on it as text, "
            "pass a list of texts to bytepair.train ([text])"
        )
    if not os.path.exists(path) and glob.has_magic(path):
        matched = [p for p in glob.glob(path, recursive=True) if os.path.isfile(p)]
        if matched:  # train_bpe's one file: not_found would say it matches none
            raise CorpusError(
                f"corpus {path!r} is a glob that matches {len(matched):,} files; pass one "
                "file, or train on the glob with bytepair.train"
            )
    if not os.path.exists(path):
        raise corpus_docs.not_found(path)
    if not os.path.isfile(path):
        # A pipe (`<(xzcat corpus.xz)`), socket or device reports size 0 and cannot be
        # memory-mapped: counting it would silently learn nothing.
        raise CorpusError(
            f"corpus {path!r} is not a regular file (a pipe or a device); write it to a file "
            "first, or pass its text (an iterable of str)"
        )
    if not os.access(path, os.R_OK):
        raise CorpusError(f"corpus file {path!r} is not readable (check its permissions)")
    return path


def _sources(files_or_texts) -> tuple[list[str | Shard], Iterable[str | bytes] | None]:
    """Splits the input into file paths (or byte ranges of files: ``shards.Shard``) and an
    iterable of texts (None when no texts). Directories and globs stand for their files."""
    if isinstance(files_or_texts, (str, os.PathLike)):
        if _is_corpus_name(os.fspath(files_or_texts)):
            return corpus_docs.corpus_paths(files_or_texts), None
        return [_checked_path(files_or_texts)], None
    if isinstance(files_or_texts, (bytes, bytearray)):
        return [], [bytes(files_or_texts)]
    if not isinstance(files_or_texts, Iterable):
        raise CorpusError(
            f"files_or_texts must be a path or an iterable of paths or texts, got "
            f"{type(files_or_texts).__name__}"
        )
    if isinstance(files_or_texts, Sequence):
        items = list(files_or_texts)
        if any(isinstance(x, Shard) for x in items):
            return [
                _checked_range(x) if isinstance(x, Shard) else _checked_path(x) for x in items
            ], None
        if items and all(isinstance(x, os.PathLike) for x in items):
            return [p for x in items for p in _expanded(x)], None
        # A list of str names files when every one of them is a file, directory or glob.
        if items and all(
            isinstance(x, str) and (_is_file_name(x) or _is_corpus_name(x)) for x in items
        ):
            return [p for x in items for p in _expanded(x)], None
        # A typo in one path must not train on the path's own text: when the strings look
        # like file names (or some of them are files), the missing ones are an error.
        strings = [x for x in items if isinstance(x, str)]
        if strings and (
            any(_is_file_name(x) for x in strings) or all(_looks_like_path(x) for x in strings)
        ):
            missing = [x for x in strings if not _is_file_name(x)]
            raise CorpusError(
                f"{corpus_docs.not_found(missing[0])}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                + "; to train on these strings as text, pass an iterator: iter([...])"
            )
        return [], _texts(items)
    return [], _texts(files_or_texts)


def _checked_range(shard: Shard) -> Shard:
    _checked_path(shard.path)
    size = os.path.getsize(shard.path)
    if not 0 <= shard.start <= shard.end <= size:
        raise CorpusError(
            f"byte range {shard.start}..{shard.end} of {shard.path!r} is not within its "
            f"{size:,} bytes: plan the shards again (plan_shards) if the file changed"
        )
    return shard


def _is_corpus_name(s: str) -> bool:
    """A directory, or a glob that matches files: the corpus is the files they name."""
    if isinstance(s, bytes) or not 0 < len(s) < 4096 or "\n" in s or "\0" in s:
        return False
    return os.path.isdir(s) or (glob.has_magic(s) and any(map(os.path.isfile, glob.iglob(s))))


def _expanded(path: str | os.PathLike) -> list[str]:
    if _is_corpus_name(os.fspath(path)):
        return corpus_docs.corpus_paths(path)
    return [_checked_path(path)]


def _has_documents(files_or_texts) -> bool:
    """Whether the corpus names a .jsonl or .parquet file, itself or inside a directory or
    glob it names."""
    items = [files_or_texts] if isinstance(files_or_texts, (str, os.PathLike)) else None
    if items is None and isinstance(files_or_texts, Sequence):
        items = [x for x in files_or_texts if isinstance(x, (str, os.PathLike))]
    paths = [
        p
        for x in items or ()
        for p in (corpus_docs.corpus_paths(x) if _is_corpus_name(os.fspath(x)) else [x])
    ]
    return any(corpus_docs.kind(os.fspath(p)) != "text" for p in paths)


def _with_documents(
    paths: list[str | Shard], text_field: str
) -> tuple[list[str | Shard], DocumentTexts | None]:
    """Plain-text files and byte ranges stay files, counted in place; the documents of
    ``.jsonl`` and ``.parquet`` files become texts, one per document (None when none)."""
    readable = [p for p in paths if isinstance(p, Shard) or corpus_docs.kind(p) == "text"]
    structured = [p for p in paths if not isinstance(p, Shard) and corpus_docs.kind(p) != "text"]
    return readable, DocumentTexts(structured, text_field) if structured else None


def _is_file_name(s: str) -> bool:
    return 0 < len(s) < 4096 and "\n" not in s and "\0" not in s and os.path.isfile(s)


_PATH_LIKE = re.compile(r"[^\s]*(/|\\)[^\s]*|[^\s/\\]+\.[A-Za-z0-9]{1,6}")


def _looks_like_path(s: str) -> bool:
    """One word with a directory separator, or a name with an extension (corpus.txt)."""
    return len(s) < 4096 and _PATH_LIKE.fullmatch(s) is not None


def _texts(items: Iterable) -> Iterator[str | bytes]:
    for x in items:
        if isinstance(x, os.PathLike):
            raise CorpusError(
                f"got a path ({os.fspath(x)!r}) among texts: pass either paths or texts"
            )
        if not isinstance(x, (str, bytes)):
            raise CorpusError(f"texts must be str or bytes, got {type(x).__name__}: {x!r:.60}")
        yield x


def _chunks(texts: Iterable[str | bytes]) -> Iterator[tuple[list[str | bytes], int]]:
    chunk: list[str | bytes] = []
    size = 0
    for t in texts:
        chunk.append(t)
        size += len(t)
        if size >= TEXT_CHUNK_CHARS:
            yield chunk, size
            chunk, size = [], 0
    if chunk:
        yield chunk, size


# ---------------------------------------------------------------------------------------
# engine="ray": count on a cluster (bytepair.distributed), merge loop here.
# ---------------------------------------------------------------------------------------


def _train_on_engine(
    corpus,
    vocab_size,
    special_tokens,
    pattern,
    min_frequency,
    threads,
    progress,
    engine,
    checkpoint_dir,
) -> Tokenizer:
    if engine != "ray":
        raise ValueError(
            f"engine must be 'local' or 'ray', got {engine!r}"
            if engine != "local"
            else "checkpoint_dir needs engine='ray': the local engine has no checkpoints"
        )
    from bytepair import distributed

    return distributed.train(
        corpus,
        vocab_size,
        special_tokens,
        pattern,
        min_frequency,
        threads,
        progress,
        checkpoint_dir=checkpoint_dir,
    )


def _tokenizer_from_counts(
    counts,
    vocab_size: int,
    special_tokens: list[str],
    pattern: str,
    min_frequency: int,
    progress: bool | None,
) -> Tokenizer:
    """What train() does after counting: the merge loop, the vocab, the Tokenizer."""
    # stacklevel 6: the warning points at the caller of bytepair.train(..., engine="ray").
    show = shown(progress)
    merges = _merges_from_counts(counts, vocab_size, special_tokens, min_frequency, show, 6)
    return _tokenizer(merges, special_tokens, pattern)
