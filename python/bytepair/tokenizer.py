"""class Tokenizer: a byte-level BPE vocabulary with its merges, special tokens and pattern.

>>> from bytepair import Tokenizer
>>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"<|end|>"}
>>> tok = Tokenizer(vocab, [(b"a", b"b")], special_tokens=["<|end|>"])
>>> tok.encode("abc<|end|>", allowed_special="all")
[256, 99, 257]
>>> tok.decode([256, 99])
'abc'
"""

from __future__ import annotations

import array
import bisect
import codecs
import functools
import gc
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Literal

from bytepair import _core, corpus_check, corpus_ids, documents, patterns, special
from bytepair import pipeline as pipeline_mod
from bytepair import progress as progress_rule
from bytepair.errors import BytepairError, FormatError, VocabError
from bytepair.formats import tokenizer_config, tokenizer_data
from bytepair.formats.tokenizer_config import TokenizerConfig
from bytepair.formats.tokenizer_data import TokenizerData
from bytepair.progress import Bar
from bytepair.special import SpecialSet
from bytepair.vocab import MAX_VOCAB_SIZE

if TYPE_CHECKING:
    import numpy

    from bytepair.audit import Audit
    from bytepair.pipeline import Pipeline
    from bytepair.training_report import TrainingReport

Merge = tuple[bytes, bytes]


#: How many (allowed_special, disallowed_special) pairs a Tokenizer keeps the sets of.
_POLICIES_KEPT = 64
# A high surrogate then a low one: UTF-16's two code units of one character, which the core
# joins (tiktoken's rule) and whose tokens' offsets must span both units.
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


class Tokenizer:
    """A byte-level BPE tokenizer.

    ``vocab`` maps ids to token bytes. ``merges`` lists the merges in the order learned
    (earliest = highest priority); ``merges=None`` means the vocab is a rank table, as in a
    ``.tiktoken`` file, and encoding follows tiktoken's rule (merge the adjacent pair whose
    concatenation has the lowest rank). ``special_tokens`` is a list (each token keeps the id
    its bytes already have in the vocab, or takes the next free id) or a dict of token to id;
    None means none (CS336's ``get_tokenizer`` passes None).
    ``pattern`` is a name (``gpt2``, ``cl100k``, ``o200k``, ``llama3``, ``qwen2``, ``qwen3.5``:
    ``bytepair.patterns.NAMES``) or a custom regex.
    ``pipeline`` (a ``bytepair.pipeline.Pipeline``, which a loaded tokenizer.json carries)
    adds HuggingFace's stages around the model: normalizer, pre-tokenizer steps, added tokens
    and their flags, the post-processor's template; ``pattern`` is then the one regex the core
    splits with (``pipeline.WHOLE_PIECE`` when the pipeline splits in Python).
    """

    #: Time, peak memory and documents of the run that trained it (``bytepair.train``).
    training_report: TrainingReport | None = None

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[Merge] | None = None,
        special_tokens: Sequence[str] | Mapping[str, int] | None = None,
        pattern: str = "gpt2",
        pipeline: Pipeline | None = None,
    ):
        self._init(
            tokenizer_data.checked(TokenizerData(vocab, merges, special_tokens, pattern, pipeline))
        )

    def _init(self, data: TokenizerData) -> None:
        """Builds the encoder of checked data (``tokenizer_data.checked``)."""
        self._pattern = data.pattern
        self._pipeline = data.pipeline
        self._special_tokens = data.special_tokens
        self._rank_mode = data.rank_table
        merges = None if data.rank_table else data.merges
        self._vocab_size = max(max(data.vocab, default=-1), *self._special_ids(), -1) + 1
        # Checked here, where the largest id is at hand (Qwen3.5's vocab: 3 ms a pass).
        if self._vocab_size > MAX_VOCAB_SIZE:
            top = self._vocab_size - 1
            raise VocabError(
                f"vocab id {top} ({data.vocab.get(top)!r}) is too large: ids must be below "
                f"{MAX_VOCAB_SIZE:,} (2**26)"
            )
        specials = self._core_specials()
        self._encoder = self._build_encoder(data.vocab, merges, specials, data.tables)
        # The vocab is not kept here: the encoder holds every token's bytes, and `_vocab`
        # reads them back on first use (o200k: 24 MB of Python objects a tokenizer). The
        # encoder's table gives each special token's id its bytes, so what differs from the
        # vocab is kept: the ids only special tokens have, and the vocab's bytes at the
        # others.
        special_ids = {i for _, i in specials}
        self._vocab_at_specials = {i: data.vocab[i] for i in special_ids if i in data.vocab}
        self._special_only = frozenset(special_ids - self._vocab_at_specials.keys())
        # Nor the merges, when the encoder can give them back: each merge one pair of its
        # table (none repeated, none dropped), its parts' bytes as the vocab has them
        # (Qwen3.5's tokenizer.json: 500,709 merges, 35 MB of Python objects). Else kept.
        same_bytes = all(
            self._vocab_at_specials.get(i, t.encode()) == t.encode() for t, i in specials
        )
        if merges is None or not same_bytes or self._encoder.pair_count != len(merges):
            self._merges = merges
        self._run = (
            None if data.pipeline is None else pipeline_mod.runner(data.pipeline, self._encoder)
        )
        self._special_set = frozenset(self._special_tokens)
        self._policies: dict[tuple, tuple[frozenset[str], frozenset[str]]] = {}
        self._default_policy = self._special_policy(frozenset(), "all")
        self._config: TokenizerConfig | None = None  # a loaded tokenizer_config.json
        # The tables' construction frees most of what it keeps again, which glibc holds on
        # to: o200k's encoder takes a process from 51 to 100 MB of RSS, 78 MB once this
        # gives it back (in 2-3 ms).
        _core.trim_heap()

    @functools.cached_property
    def _decoder(self) -> dict[int, bytes]:
        """Id to bytes, special tokens included, made on first use: 10 MB for o200k, which
        encoding does not need."""
        return self._encoder.token_table()

    @functools.cached_property
    def _vocab(self) -> dict[int, bytes]:
        """Id to bytes of the vocab the tokenizer was built from, read back from the
        encoder on first use (``_init``)."""
        vocab = self._encoder.token_table()
        for i in self._special_only:
            del vocab[i]
        vocab.update(self._vocab_at_specials)
        return vocab

    @functools.cached_property
    def _merges(self) -> list[Merge] | None:
        """The merges the tokenizer was built from, read back from the encoder on first
        use (``_init`` keeps them where it cannot)."""
        return [tuple(m) for m in self._encoder.table_merges()]

    @functools.cached_property
    def _ranks(self) -> dict[bytes, int]:
        """Token bytes to id, made on first use: 32 ms for Qwen3.5's 248,000 tokens, which a
        load does not need."""
        return {b: i for i, b in self._vocab.items()}

    def _special_ids(self) -> set[int]:
        return set(self._special_tokens.values())

    def _build_encoder(
        self,
        vocab: dict[int, bytes],
        merges: Sequence[Merge] | None,
        specials: list[tuple[str, int]],
        tables: _core.ModelTables | None = None,
    ) -> _core.Encoder:
        # The whole vocab, special tokens' bytes included: a special token that equals a
        # learned token (GPT-2's vocab.json style) keeps that id, and plain text still
        # merges into it, as tiktoken does when a special token is also a mergeable rank.
        # The core's tables, where the data has them, hold the same vocab and merges; a rank
        # file's reader may have started this very encoder (taken if it was asked for the
        # same special tokens and pattern).
        extra = {"ignore_merges": True} if self.ignore_merges else {}
        if isinstance(tables, _core.ModelTables):
            return _core.Encoder.from_tables(tables, specials, self._pattern, **extra)
        if isinstance(tables, _core.EncoderAhead) and merges is None:
            built = tables.take(specials, self._pattern, **extra)
            if built is not None:
                return built
        return _core.Encoder(vocab, merges, specials, self._pattern, **extra)

    def _core_specials(self) -> list[tuple[str, int]]:
        if self._pipeline is None:
            return list(self._special_tokens.items())
        return pipeline_mod.core_specials(self._pipeline, self._special_tokens)

    @property
    def pipeline(self) -> Pipeline | None:
        """The HuggingFace stages around the model (None: the pattern and special tokens are
        the whole pipeline)."""
        return self._pipeline

    @property
    def ignore_merges(self) -> bool:
        """HF's ``ignore_merges``: a pre-token that is itself a token is that token."""
        return self._pipeline is not None and self._pipeline.ignore_merges

    # -- what the tokenizer is ------------------------------------------------------------

    @property
    def vocab(self) -> Mapping[int, bytes]:
        """Id to token bytes, special tokens included (read-only)."""
        return MappingProxyType(self._decoder)

    @property
    def merges(self) -> list[Merge]:
        """The merges, earliest (highest priority) first.

        For a rank table (``merges=None``) they are derived once, in Rust: each multi-byte
        token's merge is the last step of tiktoken's BPE on its bytes (its parts may rank
        above it in an extended vocab), in the order of the tokens' ranks; a token no merge
        reaches has none.
        """
        if self._merges is None:
            self._merges = [tuple(m) for m in self._encoder.merges()]
        return list(self._merges)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text to id, in the order given."""
        return dict(self._special_tokens)

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex."""
        return self._pattern

    @property
    def config(self) -> TokenizerConfig:
        """The bos/eos/pad/unk tokens and chat template that transformers reads from
        tokenizer_config.json: those of the config beside a loaded tokenizer.json, each
        missing token being the conventionally named special token (``<pad>``, ``<unk>``,
        ...). Set it to change them; ``save`` writes it.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"]).config.pad_token
        '<pad>'
        """
        return tokenizer_config.effective(self._config, self._special_tokens)

    @config.setter
    def config(self, value: TokenizerConfig) -> None:
        if not isinstance(value, TokenizerConfig):
            raise TypeError(f"config must be a TokenizerConfig, got {type(value).__name__}")
        self._config = value

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``): the embedding table's size.

        For a vocabulary trained by bytepair, ids are dense and this is the number of tokens.
        """
        return self._vocab_size

    def __repr__(self) -> str:
        name = patterns.name_of(self._pattern) or "custom"
        if self._pipeline is not None and self._pipeline.core_pattern() is None:
            name = "pipeline"
        specials = list(self._special_tokens)
        shown = repr(specials) if len(specials) <= 8 else f"[{len(specials)} tokens]"
        return (
            f"Tokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)}, "
            f"special_tokens={shown}, pattern={name!r})"
        )

    # -- encoding ---------------------------------------------------------------------------

    def _special_policy(
        self, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ) -> tuple[frozenset[str], frozenset[str]]:
        # Kept per argument pair: DeepSeek's 1,283 added tokens made the sets of
        # allowed_special="all" three times the cost of encoding a 20-line document.
        key = (allowed_special, disallowed_special)
        try:
            return self._policies[key]
        except KeyError:
            pass
        except TypeError:  # a set is no key: read it again on every call
            return special.policy(self._special_set, allowed_special, disallowed_special)
        got = special.policy(self._special_set, allowed_special, disallowed_special)
        if len(self._policies) < _POLICIES_KEPT:
            self._policies[key] = got
        return got

    def _policy(
        self, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ) -> tuple[frozenset[str], frozenset[str]]:
        if not allowed_special and disallowed_special == "all":
            return self._default_policy
        return self._special_policy(allowed_special, disallowed_special)

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
    ) -> list[int]:
        """Encodes text. Special-token text raises unless allowed (tiktoken's rule).

        Unlike tiktoken, ``allowed_special`` and ``disallowed_special`` name only special
        tokens of this tokenizer (another name raises ``SpecialTokenError``), so that a
        misspelt name cannot silently switch the check off.

        Lone surrogates in ``text`` are encoded as U+FFFD, as tiktoken does.
        ``add_special_tokens=True`` applies a loaded tokenizer.json's template (Llama 3's
        ``<|begin_of_text|> $A``), as HuggingFace's ``encode(text)`` does; with
        ``allowed_special="all"`` the ids are those of HF's ``encode``.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> tok.encode("hi")
        [104, 105]
        """
        if self._run is not None:
            allowed, disallowed = self._policy(allowed_special, disallowed_special)
            return self._run.encode(text, allowed, disallowed, add_special_tokens)
        if not allowed_special and disallowed_special == "all":
            # tiktoken's default policy, kept in the core (and the str check there too): the
            # common call costs one method call, not three plus two sets passed and read.
            return self._encoder.encode(text)
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        return self._encoder.encode(text, allowed, disallowed)  # the core checks text is a str

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> numpy.ndarray:
        """Encodes text like ``encode``, into a NumPy ``uint32`` array (tiktoken's method):
        no Python int per id, so about twice as fast as ``encode`` on long texts.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).encode_to_numpy("hi")
        array([104, 105], dtype=uint32)
        """
        if self._run is not None:
            ids = self.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
            numpy = numpy_module()
            return numpy.frombuffer(array.array("I", ids), numpy.uint32)
        if not allowed_special:
            if not disallowed_special and not isinstance(disallowed_special, str):
                return self._encoder.encode_ordinary_to_array(text)
            if disallowed_special == "all":
                return self._encoder.encode_to_array(text)
        allowed, disallowed = self._special_policy(allowed_special, disallowed_special)
        return self._encoder.encode_to_array(text, allowed, disallowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text, treating special-token text as plain text.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<s>"])
        >>> tok.encode_ordinary("<s>")
        [60, 115, 62]
        """
        if self._run is not None:
            return self._run.encode(text, frozenset(), frozenset())
        return self._encoder.encode_ordinary(text)  # the core checks that it is a str

    def encode_bytes(
        self,
        data: bytes,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[int]:
        """Encodes bytes; invalid UTF-8 is kept as raw bytes, exactly as training does.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).encode_bytes(b"a\\xff")
        [97, 255]
        """
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        if not isinstance(data, bytes):
            try:  # bytes(5) would be five zero bytes
                data = bytes(memoryview(data))
            except TypeError:
                hint = "; for a str, call encode" if isinstance(data, str) else ""
                raise TypeError(
                    f"encode_bytes takes bytes (or a bytearray, memoryview), got "
                    f"{type(data).__name__}{hint}"
                ) from None
        if self._run is not None:
            if not self._run.core_exact:
                return self._run.encode(pipeline_mod.utf8(data), allowed, disallowed)
            allowed = allowed | self._run.always
        return self._encoder.encode_bytes(data, allowed, disallowed)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        threads: int | None = None,
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """Encodes many texts in parallel (``threads`` workers, default all cores), with the
        GIL released; the same result as encoding each in turn.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).encode_batch(["a", "b"])
        [[97], [98]]
        """
        from bytepair import flat_batch

        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        if isinstance(texts, str):
            raise flat_batch.one_text_error("encode_batch")
        try:
            if self._run is not None:
                return self._run.encode_many(
                    list(texts), allowed, disallowed, _threads(threads), add_special_tokens
                )
            return self._encoder.encode_batch(texts, allowed, disallowed, _threads(threads))
        except TypeError:
            error = flat_batch.not_a_text_error(texts, "encode_batch")
            if error is None:
                raise
            raise error from None

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        threads: int | None = None,
    ) -> tuple[numpy.ndarray, numpy.ndarray]:
        """Encodes many texts into one flat ``uint32`` array of ids and ``int64`` offsets:
        text i is ``ids[offsets[i]:offsets[i + 1]]``. No Python int is made per id.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> ids, offsets = tok.encode_batch_to_numpy(["hi", "a"])
        >>> ids.tolist(), offsets.tolist()
        ([104, 105, 97], [0, 2, 3])
        """
        from bytepair import flat_batch

        policy = self._policy(allowed_special, disallowed_special)
        return flat_batch.encode(self, texts, policy=policy, threads=_threads(threads))

    def encode_batch_padded(
        self,
        texts: Sequence[str],
        *,
        pad_token: str | int | None = None,
        max_length: int | None = None,
        truncation: bool | Literal["longest_first", "only_first", "do_not_truncate"] = False,
        padding: bool | Literal["longest", "max_length", "do_not_pad"] = "longest",
        padding_side: Literal["right", "left"] = "right",
        pad_to_multiple_of: int | None = None,
        add_special_tokens: bool = True,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        threads: int | None = None,
    ) -> dict[str, numpy.ndarray]:
        """Encodes a batch into ``{"input_ids", "attention_mask"}``, int64 arrays of shape
        (texts, length), equal to transformers' ``tokenizer(texts, padding=...,
        truncation=..., max_length=..., return_tensors="np")`` with the same arguments.

        ``padding``: ``"longest"`` (or True, the default here) pads to the longest row,
        ``"max_length"`` to ``max_length``, False (``"do_not_pad"``) not at all, and then
        the rows must have one length: ragged rows, which transformers returns as an object
        array of arrays, raise ``ValueError``, as does a row longer than ``max_length`` with
        ``padding="max_length"`` and no truncation. Without truncation, ``max_length`` does
        not cut and ``"longest"`` ignores it. ``truncation=True`` (or
        ``"longest_first"``/``"only_first"``; ``"do_not_truncate"`` is False) cuts each
        text's ids to ``max_length`` (from the end); without ``max_length`` the limit is
        the config's ``model_max_length``, and with none known nothing is cut, as in
        transformers.
        ``pad_token`` defaults to the tokenizer's (``config``).

        ``add_special_tokens`` (True, as in transformers) adds what the tokenizer's
        post-processor adds: a loaded tokenizer.json's template (Llama 3's
        ``<|begin_of_text|>``), nothing for the tokenizers bytepair trains (a ByteLevel
        post-processor). As in transformers, truncation cuts the text's ids to leave room for
        the template's tokens, so a cut row keeps its end token; a ``max_length`` smaller
        than the template is an error.

        Where bytepair differs from transformers: ``padding`` defaults to ``"longest"``
        (transformers' to False), and special-token text raises
        ``DisallowedSpecialError`` unless ``allowed_special`` lets it through, as in every
        ``encode`` (text from users cannot smuggle in control tokens; transformers encodes
        it as the token); ``truncation`` is False unless given (transformers also truncates
        when only ``max_length`` is given with ``padding=False``).

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"])
        >>> tok.encode_batch_padded(["hi", "a"], padding_side="left")["input_ids"].tolist()
        [[104, 105], [256, 97]]
        """
        from bytepair import padded_batch

        return padded_batch.encode(
            self,
            texts,
            pad_token=pad_token,
            max_length=max_length,
            truncation=truncation,
            padding=padding,
            padding_side=padding_side,
            pad_to_multiple_of=pad_to_multiple_of,
            policy=self._policy(allowed_special, disallowed_special),
            threads=_threads(threads),
            add_special_tokens=add_special_tokens,
        )

    def pad(
        self,
        batch: Sequence[Sequence[int]] | Mapping[str, Sequence[Sequence[int]]],
        *,
        pad_token: str | int | None = None,
        padding: bool | Literal["longest", "max_length", "do_not_pad"] = "longest",
        max_length: int | None = None,
        padding_side: Literal["right", "left"] = "right",
        pad_to_multiple_of: int | None = None,
    ) -> dict[str, numpy.ndarray]:
        """Pads ids already encoded (lists of ids, or a mapping with ``input_ids``, whose
        ``attention_mask``, if any, is kept and padded with zeros) into
        ``{"input_ids", "attention_mask"}``, int64 arrays equal to transformers'
        ``tokenizer.pad(..., return_tensors="np")`` with the same arguments. Never
        truncates: a row longer than ``max_length`` with ``padding="max_length"`` is a
        ``ValueError``. ``pad_token`` (a token or an id) defaults to the tokenizer's.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"])
        >>> tok.pad([[104, 105, 33], [97]])["input_ids"].tolist()
        [[104, 105, 33], [97, 256, 256]]
        """
        from bytepair import padded_batch

        return padded_batch.pad(
            self,
            batch,
            pad_token=pad_token,
            padding=padding,
            max_length=max_length,
            padding_side=padding_side,
            pad_to_multiple_of=pad_to_multiple_of,
        )

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
        tokenize: bool = True,
        return_assistant_mask: bool = False,
        tools: Sequence[Mapping[str, object]] | None = None,
        documents: Sequence[Mapping[str, object]] | None = None,
        **template_variables: object,
    ) -> list[int] | tuple[list[int], list[int]] | str:
        """Renders a conversation with a Jinja2 chat template and encodes it: the ids of
        transformers' ``apply_chat_template(messages, tokenize=True)``.

        The template is ``chat_template`` (a template, or the name of one of the config's),
        else the config's (its ``tool_use`` one when ``tools`` are given), else the built-in
        ChatML (which needs the special tokens ``<|im_start|>`` and ``<|im_end|>``).

        As in transformers, ``tools`` (JSON-schema dicts; for a Python function pass
        ``transformers.utils.get_json_schema(f)``), ``documents`` and every other keyword
        (``enable_thinking=False``) are variables of the template, messages may lack
        ``content`` (an assistant turn of ``tool_calls``), ``continue_final_message=True``
        ends the text where the final message does (no end-of-turn; not with
        ``add_generation_prompt``), and ``tokenize=False`` returns the rendered text.
        transformers' ``return_dict``, ``return_tensors``, ``padding``, ``truncation``,
        ``max_length`` and ``tokenizer_kwargs`` raise TypeError: this returns ids.

        With ``return_assistant_mask=True``, returns ``(ids, mask)``: 1 on the tokens of
        each assistant message's content and its closing end token, the loss mask of
        supervised fine-tuning. A template's ``{% generation %}`` marks say what that is, as
        in transformers; without marks, it is what each assistant message adds to the
        rendered conversation after the generation prompt, up to its last special token.
        Needs Jinja2.

        >>> import bytepair
        >>> vocab = {i: bytes([i]) for i in range(256)}
        >>> tok = bytepair.Tokenizer(vocab, [], ["<|im_start|>", "<|im_end|>"])
        >>> ids, mask = tok.apply_chat_template(
        ...     [{"role": "assistant", "content": "Hi"}], return_assistant_mask=True
        ... )
        >>> tok.decode([i for i, m in zip(ids, mask) if m])
        'Hi<|im_end|>'
        >>> prefill = [{"role": "assistant", "content": "Hel"}]
        >>> tok.apply_chat_template(prefill, continue_final_message=True, tokenize=False)
        '<|im_start|>assistant\\nHel'
        """
        from bytepair import chat_template as chat

        return chat.apply(
            self,
            messages,
            chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            tokenize=tokenize,
            return_assistant_mask=return_assistant_mask,
            tools=tools,
            documents=documents,
            **template_variables,
        )

    def encode_iterable(
        self,
        iterable: Iterable[str] | Iterable[bytes],
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> Iterator[int]:
        """Encodes a stream of text (lines of a file, say) lazily, in bounded memory. Chunks
        may be ``str``, or ``bytes`` (chunks of a binary file: invalid UTF-8 is kept, as in
        ``encode_bytes``, and a character may be split between chunks).

        The ids are exactly those of encoding the concatenated text (a surrogate pair split
        between two ``str`` chunks is joined, as ``encode`` joins it): the core keeps only the
        text after the last point where the pattern provably splits (for the built-in
        patterns a space or a newline between visible characters, for ``superword`` an ASCII
        digit next to an ASCII non-digit; see ``docs/design.md``), so memory stays flat however long
        the stream. It starts no threads. A custom pattern has no provable cut points, so its
        text is held until the end.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> list(tok.encode_iterable(["a ", "b"]))
        [97, 32, 98]
        """
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        if self._run is not None:
            if not self._run.core_exact:  # normalization needs the whole text
                yield from self._run.encode(pipeline_mod.joined(iterable), allowed, disallowed)
                return
            allowed = allowed | self._run.always
        stream = self._encoder.stream(allowed, disallowed)
        held = ""  # a high surrogate whose low half may start the next chunk
        for chunk in iterable:
            if isinstance(chunk, str):
                chunk, held = held + chunk, ""
                if chunk and "\ud800" <= chunk[-1] <= "\udbff":
                    chunk, held = chunk[:-1], chunk[-1]
            elif held:
                yield from stream.feed(held)
                held = ""
            ids = stream.feed(chunk)
            if ids:
                yield from ids
        if held:
            yield from stream.feed(held)
        yield from stream.finish()

    def encode_file(
        self,
        path: str | os.PathLike | Iterable[str | os.PathLike],
        out_path: str | os.PathLike,
        *,
        allowed_special: SpecialSet = "all",
        disallowed_special: SpecialSet = (),
        threads: int | None = None,
        progress: bool | Callable[[int, int], object] | None = None,
        text_field: str = "text",
        document_separator: str | None = None,
    ) -> int:
        """Encodes a file into a NumPy ``.npy`` array of ids and returns the number of ids.

        ``path`` may also be a ``.jsonl`` file (one JSON object per line, the text in
        ``text_field``), a ``.parquet`` file (the column ``text_field``, read a row group at
        a time), a directory or a glob (every file, sorted), or a list of these (in its
        order); the files' ids are concatenated. With
        ``document_separator`` (a special token), each document's ids are followed by its
        id; a plain-text file is one document.

        Unlike ``encode``, special tokens are **allowed by default**: this prepares training
        data, where they separate documents. The input is read as bytes (invalid UTF-8 kept
        as raw bytes), memory-mapped and encoded in parallel (``threads``, default all cores)
        in chunks cut where the pattern provably splits, so the ids equal ``encode_bytes`` of
        the whole file. A custom pattern has no provable cut: such a file is encoded on one
        thread, in steps, still in bounded memory. The array is uint16 when
        ``vocab_size <= 65536``, else uint32; it is written to a temporary file and renamed,
        so a crash never leaves half an array. An existing ``out_path`` is replaced (a
        symbolic link's target, keeping its permissions), but never one of the input files
        nor a file inside an input directory or glob: that is a ``CorpusError``.
        ``progress``: None shows a bar on stderr when it is a terminal; True always, False
        never; or a function called with (bytes done, bytes total).

        >>> import bytepair, numpy, pathlib, tempfile
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "in.txt").write_text("hi")
        >>> tok.encode_file(d / "in.txt", d / "ids.npy")
        2
        >>> numpy.load(d / "ids.npy").tolist()
        [104, 105]
        """
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        out_path = os.fspath(out_path)
        documents.check_output(path, out_path)
        paths = documents.corpus_paths(path)
        corpus_check.check_read_as_text(paths, stacklevel=3)  # the caller's line
        if document_separator is not None or not (
            len(paths) == 1 and os.path.isfile(paths[0]) and documents.kind(paths[0]) == "text"
        ):
            if callable(progress):
                raise TypeError("progress= takes a bool here: a callback needs one text file")
            return corpus_ids.write_npy(
                self,
                paths,
                out_path,
                text_field=text_field,
                separator=corpus_ids.separator_id(self, document_separator),
                policy=(allowed, disallowed),
                threads=_threads(threads),
                progress=progress,
            )
        return self._encode_text_file(paths[0], out_path, allowed, disallowed, threads, progress)

    def _encode_text_file(
        self,
        path: str,
        out_path: str,
        allowed: frozenset[str],
        disallowed: frozenset[str],
        threads: int | None,
        progress: bool | Callable[[int, int], object] | None,
    ) -> int:
        """``encode_file`` of one plain-text file, its checks done: also how a corpus's text
        files are encoded (``corpus_ids``), which checks the corpus once, not each file."""
        if self._run is not None:
            if not self._run.core_exact:
                return pipeline_mod.encode_file(self, path, out_path, allowed, disallowed)
            allowed = allowed | self._run.always
        if callable(progress):
            return self._encoder.encode_file(
                path, out_path, allowed, disallowed, _threads(threads), progress
            )
        show = progress_rule.shown(progress)
        with Bar(os.path.basename(path), unit="B", enabled=show) as bar:
            return self._encoder.encode_file(
                path, out_path, allowed, disallowed, _threads(threads), bar
            )

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Encodes text and gives each token's (start, end) character offsets in ``text``.

        A token that holds only part of a multi-byte character (a byte-level vocab splits
        rare characters) gets that whole character's span, so neighbouring tokens may share
        it. Offsets index ``text`` itself: a lone surrogate (encoded as U+FFFD) is one code
        unit, a surrogate pair (encoded as the one character it stands for) two.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> tok.encode_with_offsets("aé")
        ([97, 195, 169], [(0, 1), (1, 2), (1, 2)])
        """
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        if self._run is not None:
            text = self._run.offsets_text(_checked_str(text))
            allowed = allowed | self._run.always
        ids, offsets = self._encoder.encode_with_offsets(_checked_str(text), allowed, disallowed)
        return ids, _code_unit_offsets(text, offsets)

    # -- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenates the tokens' bytes. Ids may be Python or NumPy integers.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).decode_bytes([104, 105])
        b'hi'
        """
        if self._run is not None and self._run.decode_overrides:
            return self._run.decode_bytes(ids)
        return self._encoder.decode_bytes(ids)

    def decode(
        self, ids: Iterable[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Decodes ids to text: bytes first, then UTF-8 (invalid sequences become U+FFFD).
        ``skip_special_tokens`` leaves the special tokens out, as HuggingFace's does.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).decode([104, 105])
        'hi'
        """
        if skip_special_tokens:
            specials = self._special_ids()
            ids = [i for i in ids if int(i) not in specials]
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decoder(self, errors: str = "replace") -> IncrementalDecoder:
        """An incremental decoder for streaming generation: feed ids as they come, get text
        as soon as its UTF-8 is complete.

        >>> import bytepair
        >>> d = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).decoder()
        >>> d.feed(0xC3), d.feed(0xA9), d.flush()
        ('', 'é', '')
        """
        return IncrementalDecoder(self, errors)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` as strings (a token that is partial UTF-8 shows U+FFFD).

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).tokenize("hi")
        ['h', 'i']
        """
        ids = self.encode(text, allowed_special="all")
        return [self._decoder[i].decode("utf-8", errors="replace") for i in ids]

    def audit(
        self,
        corpus: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
        *,
        threads: int | None = None,
        progress: bool | None = None,
    ) -> Audit:
        """The tokens worth looking at: unreachable, undecodable, duplicated, and with a
        corpus (paths) the unused ones, counted with a bar (``progress``). See
        ``bytepair.audit`` and docs/audit.md.

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).audit().unreachable
        {}
        """
        from bytepair import audit

        return audit.audit(self, corpus, threads=threads, progress=progress)

    # -- files ------------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        path: str | os.PathLike | tuple[str | os.PathLike, str | os.PathLike],
        *,
        special_tokens: Sequence[str] | Mapping[str, int] | None = None,
        pattern: str | None = None,
    ) -> Tokenizer:
        """Loads a tokenizer, detecting the format (tokenizer.json, .tiktoken, GPT-2 files: a
        directory, or the pair ``(vocab_path, merges_path)`` that ``save`` writes).

        ``special_tokens`` and ``pattern`` are for formats that do not store them (.tiktoken,
        GPT-2 files). A rank file that is not a published one bytepair recognises (tiktoken's,
        Llama 3's, Qwen's), loaded without ``pattern``, gets GPT-2's and a ``FormatWarning``.
        A tiktoken encoding name (``"o200k_base"``, ``"gpt2"``) that is no file loads
        through tiktoken. A missing file raises ``TokenizerNotFoundError``, a
        ``FileNotFoundError``.
        """
        from bytepair import formats

        # The arguments' own errors, whatever the format (a reader may hand them to the core).
        special.checked(special_tokens)
        if pattern is not None:
            patterns.resolve(pattern)
        tok = cls.from_data(formats.load(path, special_tokens=special_tokens, pattern=pattern))
        # The reader's data is freed by now, after the trim of `_init`. Collected and given
        # back too (14 ms), a process that loaded DeepSeek's tokenizer.json holds 74-84 MB
        # of RSS instead of 112-114, and one that loaded o200k's rank file 56-64 MB instead
        # of 88-96 (with `_vocab` read back on demand).
        gc.collect()
        _core.trim_heap()
        return tok

    def save(
        self,
        path: str | os.PathLike | tuple[str | os.PathLike, str | os.PathLike],
        format: str | None = None,
    ) -> None:
        """Saves the tokenizer atomically: ``huggingface`` (the default, but for a name
        ending in ``.tiktoken``: tiktoken), ``tiktoken``, ``tekken`` or ``gpt2`` (a directory
        with vocab.json and merges.txt; or the pair of names ``(vocab_path, merges_path)``,
        as CS336 writes them; or ``x-vocab.json``, with ``x-merges.txt`` beside it).

        ``huggingface`` into a folder (``save("dir/")``) writes ``tokenizer.json`` and
        ``tokenizer_config.json`` (``config``'s tokens and chat template) in it, the files
        ``transformers.AutoTokenizer.from_pretrained("dir")`` reads; a file named
        ``tokenizer.json`` gets its config beside it, a file of another name none. A config
        already there is merged into: its bos/eos/pad/unk tokens become this tokenizer's,
        its other keys stay, and so does its chat template unless ``config`` has one."""
        from bytepair import formats

        formats.save(self.data, path, format=format)

    @classmethod
    def from_data(cls, data: TokenizerData) -> Tokenizer:
        """The Tokenizer of a reader's data; a vocab, special token or pattern the data's
        file got wrong raises FormatError naming the file.

        >>> from bytepair.formats.tokenizer_data import TokenizerData
        >>> Tokenizer.from_data(TokenizerData({i: bytes([i]) for i in range(256)}, [])).vocab_size
        256
        """
        tok = cls.__new__(cls)
        try:
            tok._init(data if data.is_checked else tokenizer_data.checked(data))
        except BytepairError as e:  # the core refused the data (a pattern its engine rejects)
            where = data.error_name(e)
            if where is None:
                raise
            raise FormatError(f"{where}: {e}") from None
        if data.config is not None:
            tok.config = data.config
        return tok

    @property
    def data(self) -> TokenizerData:
        """What the tokenizer files hold, as plain data (what the format writers take).

        >>> import bytepair
        >>> bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).data.rank_table
        False
        """
        return TokenizerData(
            dict(self._vocab),  # a copy: the data must not reach into this tokenizer
            self.merges,
            self.special_tokens,
            self._pattern,
            self._pipeline,
            self.config,
            rank_table=self._rank_mode,
            # Built from checked data: a rebuild need not (and for tiktoken's shared ids
            # must not) check it again.
            is_checked=True,
        )

    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike,
        merges_path: str | os.PathLike,
        special_tokens: Sequence[str] | None = None,
        pattern: str = "gpt2",
    ) -> Tokenizer:
        """Loads GPT-2 style ``vocab.json`` + ``merges.txt`` (CS336's ``from_files``);
        ``special_tokens=None`` means none. A token that no merge builds must be one of
        ``special_tokens`` or look like a special token (``<|endoftext|>``, ``[CLS]``):
        otherwise merges.txt looks truncated (FormatError)."""
        from bytepair.formats import gpt2

        named = list(special.checked(special_tokens))
        vocab, merges = gpt2.read(vocab_path, merges_path, named)
        # gpt2.read checked the merges against the vocab: a VocabError left is the vocab's.
        names = ((VocabError, os.fspath(vocab_path)),)
        return cls.from_data(
            TokenizerData(vocab, merges, special_tokens, pattern, error_names=names)
        )

    @classmethod
    def from_tiktoken(cls, encoding) -> Tokenizer:
        """Builds a Tokenizer from a ``tiktoken.Encoding``; ids stay exactly tiktoken's."""
        from bytepair.formats import tiktoken as tiktoken_format

        return cls.from_data(tiktoken_format.from_encoding(encoding))

    def to_tiktoken(self, name: str = "bytepair"):
        """A ``tiktoken.Encoding`` that encodes exactly as this tokenizer."""
        from bytepair.formats import tiktoken as tiktoken_format

        return tiktoken_format.to_encoding(self.data, name=name)


# -- encoding and decoding helpers ----------------------------------------------------------


class IncrementalDecoder:
    """Turns ids into text as they arrive (streaming generation): text comes out only once
    its UTF-8 is complete, so a character split over two tokens is never garbled.

    The concatenated output equals ``tok.decode(all_ids)``.
    """

    def __init__(self, tokenizer: Tokenizer, errors: str = "replace"):
        run = tokenizer._run
        plain = run is None or not run.decode_overrides
        self._decode_bytes = tokenizer._encoder.decode_bytes if plain else tokenizer.decode_bytes
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def feed(self, ids: int | Iterable[int]) -> str:
        """Adds one id (or several); returns the text completed so far."""
        if not isinstance(ids, Iterable):
            ids = (ids,)
        return self._utf8.decode(self._decode_bytes(ids))

    def flush(self) -> str:
        """Ends the stream: an incomplete character at the end becomes U+FFFD."""
        return self._utf8.decode(b"", final=True)


def numpy_module() -> ModuleType:
    """NumPy, for the methods that return arrays: it is optional, and without it the
    ImportError says how to get it (the core's arrays say the same)."""
    try:
        import numpy
    except ImportError as e:
        raise ImportError("NumPy arrays need NumPy: pip install numpy") from e
    return numpy


def _code_unit_offsets(text: str, offsets: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``offsets`` into ``text`` with each surrogate pair joined into one character, as
    indices of ``text`` itself, where the pair is two code units."""
    if text.isascii():  # O(1); the search below reads the whole text (6 ms a MB)
        return offsets
    # Where each pair's character sits once the pairs before it are joined.
    joined = [m.start() - k for k, m in enumerate(_SURROGATE_PAIR.finditer(text))]
    if not joined:
        return offsets
    shift = functools.partial(bisect.bisect_left, joined)
    return [(s + shift(s), e + shift(e)) for s, e in offsets]


def _checked_str(text: object) -> str:
    if not isinstance(text, str):
        hint = "; for bytes, call encode_bytes" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"expected a str to encode, got {type(text).__name__}{hint}")
    return text


def _threads(threads: int | None) -> int:
    """0 means all cores (the core's convention)."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int or None (all cores), got {threads!r}")
    return threads
