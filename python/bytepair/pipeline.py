"""The stages HuggingFace ``tokenizers`` runs around a byte-level BPE model, as plain data,
and how bytepair applies them exactly as ``tokenizers`` does.

A ``tokenizer.json`` is a pipeline: added tokens are cut out of the text first (those with
``normalized: false`` from the raw text, then the others from the normalized rest), the
normalizer rewrites each remaining piece, the pre-tokenizer steps cut it into pre-tokens,
the BPE model encodes each pre-token, and the post-processor's template adds special ids
around the result. ``formats/huggingface.py`` parses a file into a ``Pipeline``; the
``Tokenizer`` hands it to a ``Runner``, which keeps the hot path in the Rust core: when the
pre-tokenizer is one regex, or DeepSeek's three Splits (a built-in splitter of the core), the
core splits with it (and matches the added tokens itself when HF's two passes reduce to one),
and NFC of text that is already NFC costs one ``unicodedata.is_normalized`` call. Other
pre-tokenizer steps are split here, with the ``regex`` module, and the pieces are encoded by
the core one call each.

>>> p = Pipeline(pre_tokenizers=(ByteLevel(add_prefix_space=False, use_regex=True),))
>>> p.core_pattern() == patterns.GPT2
True
>>> apply_split(Split(r"\\d+", True, "isolated"), "ab12cd")
['ab', '12', 'cd']
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import regex

from bytepair import patterns
from bytepair.errors import DisallowedSpecialError

# Rust's `char::is_whitespace` and its regex crate's Unicode `\s` and `\w`: HF's added-token
# flags and pre-tokenizers use them, and Python's own `\s`/`\w` differ (U+001C..U+001F).
SPACE = r"\p{White_Space}"
WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"

#: The pattern the core gets when the pipeline splits in Python: each piece is one pre-token.
WHOLE_PIECE = r"(?s).+"

BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")
UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")


# -- the stages, as data --------------------------------------------------------------------


@dataclass(frozen=True)
class AddedToken:
    """An entry of ``added_tokens``, with HF's matching flags."""

    content: str
    id: int
    special: bool = True
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False

    @property
    def plain(self) -> bool:
        """Matched as a bare string (no flag changes where or what it matches)."""
        return not (self.lstrip or self.rstrip or self.single_word)


@dataclass(frozen=True)
class UnicodeNormalizer:
    form: str  # NFC, NFD, NFKC or NFKD


@dataclass(frozen=True)
class Lowercase:
    pass


@dataclass(frozen=True)
class Replace:
    pattern: str
    is_regex: bool
    content: str


@dataclass(frozen=True)
class Strip:
    left: bool = True
    right: bool = True


@dataclass(frozen=True)
class Prepend:
    prepend: str


Normalizer = UnicodeNormalizer | Lowercase | Replace | Strip | Prepend


@dataclass(frozen=True)
class Split:
    pattern: str
    is_regex: bool
    behavior: str = "isolated"
    invert: bool = False


@dataclass(frozen=True)
class ByteLevel:
    add_prefix_space: bool = False
    use_regex: bool = True
    trim_offsets: bool = True


@dataclass(frozen=True)
class Digits:
    individual_digits: bool = False


@dataclass(frozen=True)
class Punctuation:
    behavior: str = "isolated"


@dataclass(frozen=True)
class Whitespace:
    pass


@dataclass(frozen=True)
class WhitespaceSplit:
    pass


@dataclass(frozen=True)
class Metaspace:
    replacement: str = "▁"
    prepend_scheme: str = "always"  # always, first or never
    split: bool = True


PreTokenizer = Split | ByteLevel | Digits | Punctuation | Whitespace | WhitespaceSplit | Metaspace


@dataclass(frozen=True)
class ByteLevelProcessor:
    """A ByteLevel post-processor: it trims offsets, and changes no id."""

    add_prefix_space: bool = False
    trim_offsets: bool = False
    use_regex: bool = True


@dataclass(frozen=True)
class Template:
    """TemplateProcessing: ``single`` and ``pair`` are (kind, name, type_id) items, kind
    ``special`` (a name of ``special_tokens``) or ``sequence`` (``A`` or ``B``);
    ``special_tokens`` maps a name to its ids and token strings."""

    single: tuple[tuple[str, str, int], ...]
    pair: tuple[tuple[str, str, int], ...]
    special_tokens: tuple[tuple[str, tuple[int, ...], tuple[str, ...]], ...]

    def apply(self, ids: list[int]) -> list[int]:
        """The ids of ``encode(text, add_special_tokens=True)`` for one sequence."""
        table = {name: list(tids) for name, tids, _ in self.special_tokens}
        out: list[int] = []
        for kind, name, _ in self.single:
            out.extend(ids if kind == "sequence" else table[name])
        return out


PostProcessor = ByteLevelProcessor | Template


@dataclass(frozen=True)
class ByteLevelDecoder:
    add_prefix_space: bool = False
    trim_offsets: bool = True
    use_regex: bool = True


@dataclass(frozen=True)
class Pipeline:
    """A tokenizer.json's stages around its BPE model. Each ``*_sequence`` flag records
    whether the file wrapped that stage in a ``Sequence``, so that it is written back the same
    way; ``model_vocab_extra`` holds the model vocab's entries that are added tokens written
    as their text (DeepSeek's ``<｜begin▁of▁sentence｜>``), which only a round trip needs."""

    normalizers: tuple[Normalizer, ...] = ()
    pre_tokenizers: tuple[PreTokenizer, ...] = ()
    post_processors: tuple[PostProcessor, ...] = ()
    decoders: tuple[ByteLevelDecoder, ...] = ()
    added_tokens: tuple[AddedToken, ...] = ()
    ignore_merges: bool = False
    normalizer_sequence: bool = False
    pre_tokenizer_sequence: bool = False
    post_processor_sequence: bool = False
    decoder_sequence: bool = False
    model_vocab_extra: tuple[tuple[str, int], ...] = field(default=())

    @property
    def template(self) -> Template | None:
        for p in self.post_processors:
            if isinstance(p, Template):
                return p
        return None

    def core_pattern(self) -> str | None:
        """The pattern the core splits text with as the pre-tokenizer does, or None.

        ``Split(regex, isolated) + ByteLevel(use_regex=false)`` is its regex;
        ``ByteLevel(use_regex=true)`` alone is GPT-2's pattern; DeepSeek's three Splits,
        exactly, and ``ByteLevel(use_regex=false)`` are ``patterns.DEEPSEEK``.
        ``add_prefix_space`` is applied around the core (a space before each piece between
        added tokens), so it is allowed on a ByteLevel that comes first (it then runs before
        the regex)."""
        steps = self.pre_tokenizers
        if len(steps) == 1 and isinstance(steps[0], ByteLevel) and steps[0].use_regex:
            return patterns.GPT2
        if steps[:-1] == _DEEPSEEK_STEPS and _plain_byte_level(steps[-1]):
            return patterns.DEEPSEEK
        if (
            len(steps) == 2
            and isinstance(steps[0], Split)
            and steps[0].is_regex
            and steps[0].behavior == "isolated"
            and not steps[0].invert
            and _plain_byte_level(steps[1])
        ):
            return steps[0].pattern
        return None

    @property
    def prefix_space(self) -> bool:
        """A ByteLevel alone with ``add_prefix_space``: a space before each piece."""
        steps = self.pre_tokenizers
        return len(steps) == 1 and isinstance(steps[0], ByteLevel) and steps[0].add_prefix_space

    def describe(self) -> list[tuple[str, str]]:
        """(stage, description) lines for ``bytepair inspect``."""
        out = [("normalizer", ", ".join(_describe(n) for n in self.normalizers) or "none")]
        for n, step in enumerate(self.pre_tokenizers):
            out.append((f"pre-tokenizer {n + 1}", _describe(step)))
        template = self.template
        if template is not None:
            words = [name if kind == "special" else f"${name}" for kind, name, _ in template.single]
            out.append(("template", " ".join(words)))
        out.append(("ignore_merges", str(self.ignore_merges).lower()))
        return out


#: DeepSeek's pre-tokenizer steps before its ByteLevel, as its tokenizer.json has them.
_DEEPSEEK_STEPS = tuple(Split(p, True, "isolated", False) for p in patterns.DEEPSEEK_SPLITS)


def _plain_byte_level(step: PreTokenizer) -> bool:
    """A ByteLevel that only maps the pieces to bytes, which the core does."""
    return isinstance(step, ByteLevel) and not step.use_regex and not step.add_prefix_space


def _describe(step) -> str:
    if isinstance(step, UnicodeNormalizer):
        return step.form
    if isinstance(step, (Split, Replace)):
        shown = step.pattern if len(step.pattern) <= 100 else step.pattern[:97] + "..."
        kind = "regex" if step.is_regex else "string"
        if isinstance(step, Replace):
            return f"Replace({kind} {shown!r} -> {step.content!r})"
        inv = ", invert" if step.invert else ""
        return f"Split({kind} {shown!r}, {step.behavior}{inv})"
    fields = ", ".join(f"{k}={v!r}" for k, v in step.__dict__.items())
    return f"{type(step).__name__}({fields})"


# -- normalizers ------------------------------------------------------------------------------

_LSTRIP = regex.compile(rf"\A[{SPACE}]+")
_RSTRIP = regex.compile(rf"[{SPACE}]+\Z")


def normalize(steps: Sequence[Normalizer], text: str) -> str:
    """``text`` after the normalizer steps, as HF's NormalizedString computes it."""
    for step in steps:
        if isinstance(step, UnicodeNormalizer):
            if not unicodedata.is_normalized(step.form, text):
                text = unicodedata.normalize(step.form, text)
        elif isinstance(step, Lowercase):
            # Rust lowercases char by char: no final-sigma rule, which str.lower applies.
            text = "".join(c.lower() for c in text) if "Σ" in text else text.lower()
        elif isinstance(step, Replace):
            if step.is_regex:
                text = _replace_regex(_compiled(step.pattern), text, step.content)
            elif step.pattern:  # HF: an empty string pattern matches nothing
                text = text.replace(step.pattern, step.content)
        elif isinstance(step, Strip):
            if step.left:
                text = _LSTRIP.sub("", text)
            if step.right:
                text = _RSTRIP.sub("", text)
        elif isinstance(step, Prepend):
            if text:
                text = step.prepend + text
        else:  # pragma: no cover - the parser builds only the types above
            raise TypeError(f"unknown normalizer {step!r}")
    return text


def _segment_safe(steps: Sequence[Normalizer]) -> bool:
    """Whether being the identity on a text means being the identity on each of its
    substrings, so that one check on the whole text covers every piece HF normalizes."""
    return all(
        isinstance(s, (UnicodeNormalizer, Lowercase)) or (isinstance(s, Replace) and not s.is_regex)
        for s in steps
    )


def _replace_regex(compiled, text: str, content: str) -> str:
    out, prev = [], 0
    for start, end in _find_iter(compiled, text):
        out.append(text[prev:start])
        out.append(content)
        prev = end
    out.append(text[prev:])
    return "".join(out)


# -- pre-tokenizers ---------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _compiled(pattern: str):
    return regex.compile(pattern)


@lru_cache(maxsize=64)
def _splitter(pattern: str, is_regex: bool):
    """``(pattern)``, whose split() interleaves gaps and matches; None when the pattern has
    groups of its own (they would show up in split()'s output)."""
    source = pattern if is_regex else regex.escape(pattern)
    if regex.compile(source).groups:
        return None
    try:
        return regex.compile(f"({source})")
    except regex.error:  # pragma: no cover - a global flag that must stay first
        return None


@lru_cache(maxsize=64)
def _literal(pattern: str):
    return regex.compile(regex.escape(pattern))


def _find_iter(compiled, text: str) -> Iterable[tuple[int, int]]:
    """Oniguruma's find_iter, which HF uses: an empty match right where the previous match
    ended is skipped (Python's finditer keeps it)."""
    pos, last_end, n = 0, None, len(text)
    while pos <= n:
        m = compiled.search(text, pos)
        if m is None:
            return
        start, end = m.span()
        if start == end and last_end == end:
            pos += 1
            continue
        pos = last_end = end
        yield start, end


def _regex_matches(compiled, text: str) -> list[tuple[int, int, bool]]:
    """HF's Pattern::find_matches for a regex: (start, end, is_match) covering ``text``."""
    if not text:
        return [(0, 0, False)]
    out, prev = [], 0
    for start, end in _find_iter(compiled, text):
        if prev != start:
            out.append((prev, start, False))
        out.append((start, end, True))
        prev = end
    if prev != len(text):
        out.append((prev, len(text), False))
    return out


def _char_matches(char_class, text: str) -> list[tuple[int, int, bool]]:
    """HF's Pattern::find_matches for a char predicate: each matching char is one match."""
    if not text:
        return [(0, 0, False)]
    out = []
    for m in char_class.finditer(text):
        out.append((m.start(), m.end(), m.group(1) is not None))
    return out


def _apply_behavior(text: str, matches, behavior: str) -> list[str]:
    """NormalizedString::split: the pieces kept for a SplitDelimiterBehavior (empty ones
    dropped, as PreTokenizedString::split drops them)."""
    if behavior == "isolated":
        spans = [(s, e) for s, e, _ in matches]
    elif behavior == "removed":
        spans = [(s, e) for s, e, is_match in matches if not is_match]
    elif behavior == "contiguous":
        spans, prev = [], False
        for s, e, is_match in matches:
            if is_match == prev and spans:
                spans[-1] = (spans[-1][0], e)
            else:
                spans.append((s, e))
            prev = is_match
    elif behavior == "merged_with_previous":
        spans, prev = [], False
        for s, e, is_match in matches:
            if is_match and not prev and spans:
                spans[-1] = (spans[-1][0], e)
            else:
                spans.append((s, e))
            prev = is_match
    elif behavior == "merged_with_next":
        spans, prev = [], False
        for s, e, is_match in reversed(matches):
            if is_match and not prev and spans:
                spans[-1] = (s, spans[-1][1])
            else:
                spans.append((s, e))
            prev = is_match
        spans.reverse()
    else:  # pragma: no cover - the parser checks behaviors
        raise ValueError(behavior)
    return [text[s:e] for s, e in spans if e > s]


def apply_split(step: Split, text: str) -> list[str]:
    """One Split on one piece."""
    compiled = _compiled(step.pattern) if step.is_regex else _literal(step.pattern)
    if step.behavior == "isolated" and not step.invert:
        # The common case, in one C call: the pattern in a group, so that split() keeps the
        # matches between the gaps. An empty match (Oniguruma skips some that Python keeps)
        # takes the exact path below.
        splitter = _splitter(step.pattern, step.is_regex)
        if splitter is not None:
            parts = splitter.split(text)
            if all(parts[1::2]):
                return [p for p in parts if p]
            return _apply_behavior(text, _regex_matches(compiled, text), "isolated")
        out, prev = [], 0
        for m in compiled.finditer(text):
            start, end = m.span()
            if start == end:
                return _apply_behavior(text, _regex_matches(compiled, text), "isolated")
            if prev != start:
                out.append(text[prev:start])
            out.append(text[start:end])
            prev = end
        if prev != len(text):
            out.append(text[prev:])
        return out
    if not step.is_regex and not step.pattern:
        matches = [(0, len(text), False)]
    else:
        matches = _regex_matches(compiled, text)
    if step.invert:
        matches = [(s, e, not m) for s, e, m in matches]
    return _apply_behavior(text, matches, step.behavior)


_DIGIT = regex.compile(r"(\p{N})|\P{N}+")
# Rust's is_ascii_punctuation or a Unicode punctuation category.
_PUNCT = regex.compile(r"""([\p{P}!-/:-@\[-`{-~])|[^\p{P}!-/:-@\[-`{-~]+""")
_WS_CHAR = regex.compile(rf"([{SPACE}])|[^{SPACE}]+")
_WHITESPACE = regex.compile(rf"[{WORD}]+|[^{WORD}{SPACE}]+")


def _pre_tokenize_piece(step: PreTokenizer, piece: str, at_start: bool) -> list[str]:
    if isinstance(step, Split):
        return apply_split(step, piece)
    if isinstance(step, ByteLevel):
        if step.add_prefix_space and not piece.startswith(" "):
            piece = " " + piece
        if step.use_regex:
            return [m.group() for m in _compiled(patterns.GPT2).finditer(piece)]
        return [piece]
    if isinstance(step, Digits):
        behavior = "isolated" if step.individual_digits else "contiguous"
        return _apply_behavior(piece, _char_matches(_DIGIT, piece), behavior)
    if isinstance(step, Punctuation):
        return _apply_behavior(piece, _char_matches(_PUNCT, piece), step.behavior)
    if isinstance(step, Whitespace):
        return _WHITESPACE.findall(piece)
    if isinstance(step, WhitespaceSplit):
        return _apply_behavior(piece, _char_matches(_WS_CHAR, piece), "removed")
    if isinstance(step, Metaspace):
        rep = step.replacement
        piece = piece.replace(" ", rep)
        if not piece.startswith(rep) and (
            step.prepend_scheme == "always" or (step.prepend_scheme == "first" and at_start)
        ):
            piece = rep + piece
        if not step.split:
            return [piece]
        return _apply_behavior(
            piece, _char_matches(_literal_char_class(rep), piece), "merged_with_next"
        )
    raise TypeError(f"unknown pre-tokenizer {step!r}")  # pragma: no cover


@lru_cache(maxsize=8)
def _literal_char_class(char: str):
    c = regex.escape(char)
    return regex.compile(rf"({c})|[^{c}]+")


def pre_tokenize(steps: Sequence[PreTokenizer], text: str, at_start: bool = True) -> list[str]:
    """The pre-tokens of one piece of normalized text. ``at_start``: the piece begins the
    input (Metaspace's ``first`` scheme prepends only there)."""
    pieces = [text] if text else []
    # A final ByteLevel without regex or prefix space only maps the pieces to bytes, which
    # the core does.
    steps = [
        s
        for s in steps
        if not (isinstance(s, ByteLevel) and not s.use_regex and not s.add_prefix_space)
    ]
    if not any(isinstance(s, Metaspace) and s.prepend_scheme == "first" for s in steps):
        for step in steps:  # no step asks where a piece starts
            new: list[str] = []
            for piece in pieces:
                new.extend(_pre_tokenize_piece(step, piece, False))
            pieces = new
        return pieces
    firsts = [at_start] if text else []
    for step in steps:
        new, new_firsts = [], []
        for piece, first in zip(pieces, firsts, strict=True):
            out = _pre_tokenize_piece(step, piece, first)
            new.extend(out)
            new_firsts.extend([first] + [False] * (len(out) - 1) if out else [])
        pieces, firsts = new, new_firsts
    return pieces


# -- added tokens -----------------------------------------------------------------------------

_ENDS_WITH_WORD = regex.compile(rf"[{WORD}]\Z")
_STARTS_WITH_WORD = regex.compile(rf"[{WORD}]")
_SPACE_CHAR = regex.compile(rf"[{SPACE}]")
_SPACES_AT = regex.compile(rf"[{SPACE}]*")


class _Matcher:
    """Leftmost-longest search over a set of strings (HF's Aho-Corasick), with the tokens."""

    def __init__(self, tokens: Sequence[tuple[str, AddedToken]]):
        self.by_text: dict[str, AddedToken] = {}
        for text, tok in tokens:
            self.by_text.setdefault(text, tok)

    @cached_property
    def regex(self):
        """The search, compiled on the first split: a pipeline whose core matches the added
        tokens never splits here, and DeepSeek's 1,237 raw tokens took 0.1 s to compile the
        first time in a process."""
        alternatives = sorted(self.by_text, key=len, reverse=True)
        return (
            regex.compile("|".join(regex.escape(t) for t in alternatives)) if alternatives else None
        )

    def split(self, sentence: str, allowed: frozenset[str]) -> list[str | int]:
        """AddedVocabulary::find_matches: the text cut into plain strings and token ids.
        A special token that is not in ``allowed`` is passed over, as HF passes over special
        tokens with ``encode_special_tokens``."""
        if self.regex is None or not sentence:
            return [sentence] if sentence else []
        out: list[str | int] = []
        start_offset, n = 0, len(sentence)
        for m in self.regex.finditer(sentence):
            start, stop = m.span()
            tok = self.by_text[m.group()]
            if tok.special and tok.content not in allowed:
                continue
            if tok.single_word:
                start_space = start == 0 or not _ENDS_WITH_WORD.search(sentence, 0, start)
                stop_space = stop == n or not _STARTS_WITH_WORD.match(sentence, stop)
                if not (start_space and stop_space):
                    continue
            if tok.lstrip:
                newstart = start
                while newstart > 0 and _SPACE_CHAR.match(sentence[newstart - 1]):
                    newstart -= 1
                start = max(newstart, start_offset)
            if tok.rstrip:
                stop = _SPACES_AT.match(sentence, stop).end()
            if start_offset < start:
                out.append(sentence[start_offset:start])
            out.append(tok.id)
            start_offset = stop
        if start_offset != n:
            out.append(sentence[start_offset:])
        return out


# -- running a pipeline -----------------------------------------------------------------------


def valid_text(text: str) -> str:
    """Lone surrogates become U+FFFD, as the core does (tiktoken's rule); a high and a low
    surrogate in a row become their character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def runner(pipeline: Pipeline, core) -> Runner | None:
    """The Runner of ``pipeline``, or None when the core alone is the whole pipeline (no
    normalizer, one regex, plain special tokens, no template: a file bytepair wrote, GPT-2's),
    so that every entry point keeps the core's own fast path."""
    run = Runner(pipeline, core)
    transparent = (
        run.core_exact and not run.always and pipeline.template is None and not run.decode_overrides
    )
    return None if transparent else run


class Runner:
    """Applies a Pipeline around a core encoder.

    ``core`` was built by the Tokenizer with ``core_specials()`` and with
    ``pipeline.core_pattern()`` (or ``WHOLE_PIECE`` when the pre-tokenizer is not one regex).
    """

    def __init__(self, pipeline: Pipeline, core):
        self.pipeline = pipeline
        self.core = core
        added = pipeline.added_tokens
        self.always = frozenset(t.content for t in added if not t.special)
        self._last_union: tuple[frozenset[str], frozenset[str]] | None = None
        self.specials = frozenset(t.content for t in added if t.special)
        self.special_ids = frozenset(t.id for t in added if t.special)
        norm = pipeline.normalizers
        self._raw = _Matcher([(t.content, t) for t in added if not t.normalized])
        self._normalized = _Matcher(
            [(normalize(norm, t.content), t) for t in added if t.normalized]
        )
        self.core_splits = pipeline.core_pattern() is not None
        # The core matches added tokens itself (one leftmost-longest pass) when HF's two
        # passes are one: no flag, and all tokens in the same pass, or no normalizer and no
        # normalized token that can win over a raw one (DeepSeek's).
        one_pass = (
            all(not t.normalized for t in added)
            or all(t.normalized and normalize(norm, t.content) == t.content for t in added)
            or (
                not norm
                and not _can_shadow(
                    [t.content for t in added if t.normalized],
                    [t.content for t in added if not t.normalized],
                )
            )
        )
        self.core_matches_added = one_pass and all(t.plain for t in added)
        self.fast = (
            self.core_splits
            and self.core_matches_added
            and not pipeline.prefix_space
            and _segment_safe(norm)
        )
        self._template = pipeline.template
        #: HF's ByteLevel decoder maps an added token's text back through the byte alphabet
        #: when every character is in it (an added "é" decodes to the byte 0xE9).
        self.decode_overrides: dict[int, bytes] = {}
        if pipeline.decoders:
            from bytepair.formats.gpt2 import CHAR_TO_BYTE

            for t in added:
                if all(c in CHAR_TO_BYTE for c in t.content):
                    as_bytes = bytes(CHAR_TO_BYTE[c] for c in t.content)
                    if as_bytes != t.content.encode("utf-8"):
                        self.decode_overrides[t.id] = as_bytes
        #: The core encodes any text (and bytes, streams, files) exactly as the pipeline,
        #: given the always-matched tokens as allowed.
        self.core_exact = self.fast and not norm
        # The first three characters of each added token: a text that holds none of them
        # holds no added token, and the core encodes it without a policy. A policy that
        # allows some tokens only makes the core build a matcher of them for each text:
        # 0.5 ms for DeepSeek's 53 always-matched tokens, against 10 us to encode a 1 KB
        # document. Two characters would pass the "<|" of "<|endoftext|>" (in 247 of 300
        # documents of zh-prose), three pass none.
        self._heads = frozenset(t.content[:3] for t in added)
        self._firsts = frozenset(h[:1] for h in self._heads)
        self._head_lengths = sorted({len(h) for h in self._heads})

    # -- encoding -------------------------------------------------------------------------------

    def identity(self, text: str) -> bool:
        """Whether the normalizer leaves ``text`` (and so each of its pieces) as it is."""
        return not self.pipeline.normalizers or normalize(self.pipeline.normalizers, text) == text

    def core_path(self, text: str) -> bool:
        """Whether the core alone encodes ``text`` exactly as the pipeline does."""
        return self.fast and self.identity(text)

    def _with_always(self, allowed: frozenset[str]) -> frozenset[str]:
        """``allowed`` and the added tokens HF always matches; the last union is kept (a
        tokenizer's policy sets are its own, so one set is met again and again)."""
        last = self._last_union
        if last is not None and last[0] is allowed:
            return last[1]
        union = allowed | self.always
        self._last_union = (allowed, union)
        return union

    def _may_hold_added(self, text: str) -> bool:
        """False when no added token can occur in ``text`` (see ``_heads``). Looks up the
        characters after each first character of a head: 1 us a document of zh-prose, where
        searching for each of DeepSeek's 23 heads took 7 us."""
        heads = self._heads
        for first in self._firsts:
            at = text.find(first)
            while at >= 0:
                if any(text[at : at + k] in heads for k in self._head_lengths):
                    return True
                at = text.find(first, at + 1)
        return False

    def encode(
        self,
        text: str,
        allowed: frozenset[str],
        disallowed: frozenset[str],
        add_special_tokens: bool = False,
    ) -> list[int]:
        if not isinstance(text, str):
            hint = "; for bytes, call encode_bytes" if isinstance(text, (bytes, bytearray)) else ""
            raise TypeError(f"expected a str to encode, got {type(text).__name__}{hint}")
        text = valid_text(text)
        if self.core_path(text):
            if self._may_hold_added(text):
                ids = self.core.encode(text, self._with_always(allowed), disallowed)
            else:  # no added token in the text: no policy to pass and read
                ids = self.core.encode_ordinary(text)
        else:
            if disallowed:
                _check_disallowed(text, disallowed)
            ids = self._encode_pieces(text, self._with_always(allowed))
        if add_special_tokens and self._template is not None:
            ids = self._template.apply(ids)
        return ids

    def encode_many(
        self,
        texts: Sequence[str],
        allowed: frozenset[str],
        disallowed: frozenset[str],
        threads: int,
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        texts = [valid_text(t) if isinstance(t, str) else t for t in texts]
        if all(isinstance(t, str) and self.core_path(t) for t in texts):
            # Texts that hold no added token in a batch of their own, without a policy.
            may_hold = [self._may_hold_added(t) for t in texts]
            held = [t for t, m in zip(texts, may_hold, strict=True) if m]
            free = [t for t, m in zip(texts, may_hold, strict=True) if not m]
            encode = self.core.encode_batch
            with_policy = iter(encode(held, self._with_always(allowed), disallowed, threads))
            without = iter(encode(free, frozenset(), frozenset(), threads))
            out = [next(with_policy if m else without) for m in may_hold]
            if add_special_tokens and self._template is not None:
                out = [self._template.apply(ids) for ids in out]
            return out
        return [self.encode(t, allowed, disallowed, add_special_tokens) for t in texts]

    def _segments(self, text: str, allowed: frozenset[str]) -> list[str | int]:
        """HF's extract_and_normalize: raw-matched tokens, then the normalized pieces and the
        tokens matched in them."""
        out: list[str | int] = []
        norm = self.pipeline.normalizers
        for seg in self._raw.split(text, allowed):
            if isinstance(seg, int):
                out.append(seg)
                continue
            out.extend(self._normalized.split(normalize(norm, seg), allowed))
        return out

    def _encode_pieces(self, text: str, allowed: frozenset[str]) -> list[int]:
        segments = self._segments(text, allowed)
        pieces: list[str] = []
        layout: list[int] = []  # >= 0: an added token's id; -n: n pieces from the core
        if self.core_splits:
            prefix = self.pipeline.prefix_space
            for seg in segments:
                if isinstance(seg, int):
                    layout.append(seg)
                else:
                    pieces.append(" " + seg if prefix and not seg.startswith(" ") else seg)
                    layout.append(-1)
        else:
            steps = self.pipeline.pre_tokenizers
            for k, seg in enumerate(segments):
                if isinstance(seg, int):
                    layout.append(seg)
                    continue
                found = pre_tokenize(steps, seg, at_start=k == 0)
                if found:
                    pieces.extend(found)
                    layout.append(-len(found))
        if not pieces:
            return [i for i in layout if i >= 0]
        # One call per piece: the core's batch call costs more per text than a tiny piece.
        encode = self.core.encode_ordinary
        encoded = [encode(p) for p in pieces]
        if len(segments) == 1:  # no added token: the common case
            return [i for ids in encoded for i in ids]
        ids: list[int] = []
        k = 0
        for item in layout:
            if item >= 0:
                ids.append(item)
            else:
                for ids_of_piece in encoded[k : k - item]:
                    ids.extend(ids_of_piece)
                k -= item
        return ids

    def offsets_text(self, text: str) -> str:
        """``text`` itself when the core encodes it as the pipeline does (so its offsets are
        the core's), else ValueError."""
        if not self.core_path(valid_text(text)):
            raise ValueError(
                "encode_with_offsets: this tokenizer.json's pipeline changes or re-splits this "
                "text (a normalizer that is not the identity on it, added-token flags, or "
                "pre-tokenizer steps that are not one regex); offsets are given only where the "
                "core encodes the text as it is"
            )
        return text

    # -- decoding -------------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The core's bytes, with the added tokens HF decodes through the byte alphabet."""
        overrides, decode = self.decode_overrides, self.core.decode_bytes
        out, run = [], []
        for i in ids:
            b = overrides.get(int(i))
            if b is None:
                run.append(i)
                continue
            if run:
                out.append(decode(run))
                run = []
            out.append(b)
        if run:
            out.append(decode(run))
        return b"".join(out)


def _can_shadow(normalized: Sequence[str], raw: Sequence[str]) -> bool:
    """Whether a normalized added token can win over a raw one in one leftmost-longest pass:
    it holds one (it starts first, or is longer from the same start), or it ends with one's
    start (it starts first).

    When none can, and the normalizer is the identity, HF's raw pass and then its normalized
    pass between the raw tokens find what one pass finds: a raw token that starts first, or is
    longer from the same start, wins in both, and a normalized one that starts inside a raw
    one loses to it in both (or, where the raw one is not matched, wins in both)."""
    if not normalized or not raw:
        return False
    if any(r in n for n in normalized for r in raw):
        return True
    heads = {r[:k] for r in raw for k in range(1, len(r))}
    return any(n[-k:] in heads for n in normalized for k in range(1, len(n)))


def _check_disallowed(text: str, disallowed: frozenset[str]) -> None:
    m = _disallowed_regex(disallowed).search(text)
    if m is not None:
        raise DisallowedSpecialError(m.group())


@lru_cache(maxsize=16)
def _disallowed_regex(disallowed: frozenset[str]):
    alternatives = sorted(disallowed, key=len, reverse=True)
    return regex.compile("|".join(regex.escape(t) for t in alternatives))


def core_specials(pipeline: Pipeline, special_tokens: dict[str, int]) -> list[tuple[str, int]]:
    """The tokens the core matches: the special tokens and the non-special added tokens
    (which HF matches in any text, so the Runner always allows them)."""
    out = list(special_tokens.items())
    for t in pipeline.added_tokens:
        if not t.special and t.content not in special_tokens:
            out.append((t.content, t.id))
    return out


# -- the Tokenizer's other entry points -------------------------------------------------------


def utf8(data: bytes) -> str:
    """Bytes as text for a pipeline: its normalizer and pre-tokenizer work on characters, as
    HF's do, so invalid UTF-8 is refused rather than guessed at."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"invalid UTF-8 at byte {e.start}: a tokenizer.json pipeline encodes text, as "
            "HuggingFace's does; decode the bytes first (errors='replace' or 'surrogateescape')"
        ) from None


def joined(chunks: Iterable[str] | Iterable[bytes]) -> str:
    """A stream's chunks as one text (a pipeline normalizes the whole text at once)."""
    parts = list(chunks)
    if parts and isinstance(parts[0], (bytes, bytearray)):
        return utf8(b"".join(parts))
    return "".join(parts)


def encode_file(tok, path: str, out_path: str, allowed, disallowed) -> int:
    """encode_file for a pipeline: the file is read whole, encoded, and written as .npy
    atomically (uint16 when the vocab fits)."""
    import io

    import numpy

    from bytepair.formats.atomic import write_files

    with open(path, "rb") as f:
        text = utf8(f.read())
    ids = tok._run.encode(text, allowed, disallowed)
    dtype = numpy.uint16 if tok.vocab_size <= 65536 else numpy.uint32
    buf = io.BytesIO()
    numpy.save(buf, numpy.asarray(ids, dtype=dtype))
    write_files({out_path: buf.getvalue()})
    return len(ids)
