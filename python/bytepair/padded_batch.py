"""A batch of texts as padded rectangles, the ``input_ids`` and ``attention_mask`` NumPy
arrays that transformers' ``tokenizer(texts, padding=..., return_tensors="np")`` returns.

>>> import bytepair
>>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<pad>"])
>>> batch = encode(tok, ["hi", "a"], pad_token="<pad>")
>>> batch["input_ids"].tolist(), batch["attention_mask"].tolist()
([[104, 105], [97, 256]], [[1, 1], [1, 0]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bytepair import flat_batch
from bytepair.errors import SpecialTokenError

#: transformers' padding strategies; its padding=True is "longest", False "do_not_pad".
PADDINGS = ("longest", "max_length", "do_not_pad")
SIDES = ("right", "left")


def pad_id(tok, pad_token: str | int | None) -> int:
    """The id to pad with: ``pad_token`` (a token's text or an id), else the tokenizer's
    pad token (its tokenizer_config.json's, else its ``<pad>`` special token)."""
    if pad_token is None:
        pad_token = tok.config.pad_token
        if pad_token is None:
            raise SpecialTokenError(
                "this tokenizer has no pad token (no <pad> special token, and no "
                "tokenizer_config.json naming one): pass pad_token= (a token or an id), or "
                "train with special_tokens=[..., '<pad>']"
            )
    if isinstance(pad_token, bool) or not isinstance(pad_token, (str, int)):
        raise TypeError(f"pad_token must be a token (str) or an id (int), got {pad_token!r}")
    if isinstance(pad_token, int):
        if pad_token not in tok.vocab:
            raise SpecialTokenError(f"pad_token id {pad_token} is not in the vocab")
        return pad_token
    if pad_token in tok.special_tokens:
        return tok.special_tokens[pad_token]
    i = tok._ranks.get(pad_token.encode("utf-8"))  # an ordinary token may pad too
    if i is None:
        raise SpecialTokenError(
            f"pad token {pad_token!r} is not a token of this tokenizer (special tokens: "
            f"{sorted(tok.special_tokens)!r})"
        )
    return i


def target_length(
    lengths,
    padding: str,
    max_length: int | None,
    pad_to_multiple_of: int | None,
    rows: str = "text",
) -> int:
    """The common length: the longest text's (``longest``) or ``max_length``, rounded up to
    a multiple of ``pad_to_multiple_of`` (transformers' rule for both); with ``do_not_pad``,
    the rows' own length, which they must share (an array holds no ragged rows). ``rows``
    names a row in errors: a "text" can be truncated, a "row" of ids (``pad``) cannot."""
    if padding == "do_not_pad":
        if len(lengths) and lengths.min() != lengths.max():
            short, long = int(lengths.argmin()), int(lengths.argmax())
            raise ValueError(
                f"padding=False leaves rows of different lengths ({rows} {long} has "
                f"{int(lengths[long])} tokens, {rows} {short} has {int(lengths[short])}), "
                "which one int64 array cannot hold: pass padding=True to pad them"
                + (", or call encode_batch for lists" if rows == "text" else "")
            )
        return int(lengths.max(initial=0))
    length = max_length if padding == "max_length" else int(lengths.max(initial=0))
    if pad_to_multiple_of and length % pad_to_multiple_of:
        length += pad_to_multiple_of - length % pad_to_multiple_of
    if len(lengths) and lengths.max() > length:  # only max_length without truncation
        n = int(lengths.argmax())
        fix = "pass truncation=True to cut such texts" if rows == "text" else "cut it first"
        raise ValueError(
            f"{rows} {n} has {int(lengths[n])} tokens, more than max_length={max_length}: "
            f"{fix} (transformers keeps it whole, in rows of different lengths that one "
            "int64 array cannot hold)"
        )
    return length


def text_budget(template, max_length: int) -> int:
    """How many of a text's ids fit in ``max_length`` beside the template's tokens:
    transformers cuts the text first, then adds them, so a cut row keeps its end token."""
    added = 0 if template is None else len(template.apply([]))
    if max_length < added:
        # transformers' unsigned subtraction wraps here and it truncates nothing at all.
        raise ValueError(
            f"max_length={max_length} leaves no room for the {added} tokens the tokenizer's "
            "template adds: pass max_length of at least that, or add_special_tokens=False"
        )
    return max_length - added


def templated(template, ids, offsets, lengths):
    """(ids, offsets) of each text's first ``lengths`` ids with the template applied."""
    import numpy

    rows = [
        template.apply(ids[start : start + n].tolist())
        for start, n in zip(offsets[:-1].tolist(), lengths.tolist(), strict=True)
    ]
    new_offsets = numpy.zeros(len(rows) + 1, dtype=numpy.int64)
    numpy.cumsum([len(r) for r in rows], out=new_offsets[1:])
    flat = numpy.fromiter((i for r in rows for i in r), numpy.int64, int(new_offsets[-1]))
    return flat, new_offsets


def strategy(padding: bool | str) -> str:
    """transformers' name of a ``padding`` argument: True is "longest", False "do_not_pad"."""
    if isinstance(padding, bool):
        return "longest" if padding else "do_not_pad"
    if padding not in PADDINGS:
        raise ValueError(f"padding must be True, False or one of {PADDINGS}, got {padding!r}")
    return padding


#: transformers' truncation strategies that cut a single text; "do_not_truncate" is False.
TRUNCATIONS = ("longest_first", "only_first", "do_not_truncate")


def truncating(truncation: bool | str) -> bool:
    """Whether ``truncation`` (a bool, or transformers' name of a strategy) cuts: a name is
    a true str, so "do_not_truncate" must be read, not tested for truth."""
    if isinstance(truncation, bool):
        return truncation
    if truncation not in TRUNCATIONS:
        # "only_second" cuts a pair's second text, which a batch of single texts has not.
        raise ValueError(
            f"truncation must be True, False or one of {TRUNCATIONS}, got {truncation!r}"
        )
    return truncation != "do_not_truncate"


def default_max_length(tok, padding: str) -> int | None:
    """transformers' limit when ``max_length`` is not given: the config's model_max_length,
    else none (truncation then cuts nothing; padding to max_length is refused)."""
    limit = tok.config.model_max_length
    if limit is None and padding == "max_length":
        raise ValueError(
            "padding='max_length' needs max_length= (the tokenizer's config names no "
            "model_max_length)"
        )
    return limit


def _checked_options(padding, padding_side, max_length, truncation, pad_to_multiple_of):
    if padding_side not in SIDES:
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    for name, value in (("max_length", max_length), ("pad_to_multiple_of", pad_to_multiple_of)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"{name} must be an int or None, got {value!r}")
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    padded = padding != "do_not_pad"
    if truncation and padded and pad_to_multiple_of and max_length % pad_to_multiple_of:
        # A truncated text would be padded past max_length (transformers refuses it too).
        raise ValueError(
            f"max_length={max_length} is not a multiple of pad_to_multiple_of="
            f"{pad_to_multiple_of}, so truncated texts could not be padded to it"
        )


def encode(
    tok,
    texts: Sequence[str],
    *,
    pad_token: str | int | None = None,
    max_length: int | None = None,
    truncation: bool | str = False,
    padding: bool | str = "longest",
    padding_side: str = "right",
    pad_to_multiple_of: int | None = None,
    policy=None,
    threads: int = 0,
    add_special_tokens: bool = True,
) -> dict:
    """``Tokenizer.encode_batch_padded``: {"input_ids", "attention_mask"}, int64 arrays of
    shape (len(texts), length), as transformers returns them."""
    import numpy

    padding = strategy(padding)
    truncation = truncating(truncation)
    if max_length is None and (truncation or padding == "max_length"):
        max_length = default_max_length(tok, padding)
        truncation = truncation and max_length is not None
    _checked_options(padding, padding_side, max_length, truncation, pad_to_multiple_of)
    pad = pad_id(tok, pad_token) if padding != "do_not_pad" else 0
    template = tok.pipeline.template if add_special_tokens and tok.pipeline is not None else None
    ids, offsets = flat_batch.encode(
        tok, texts, policy=policy, threads=threads, name="encode_batch_padded"
    )
    lengths = numpy.diff(offsets)
    if truncation:
        lengths = numpy.minimum(lengths, text_budget(template, max_length))
    if template is not None:
        ids, offsets = templated(template, ids, offsets, lengths)
        lengths = numpy.diff(offsets)
    width = target_length(lengths, padding, max_length, pad_to_multiple_of)
    return _rectangle(ids, offsets, lengths, width, pad, padding_side)


def pad(
    tok,
    batch,
    *,
    pad_token: str | int | None = None,
    padding: bool | str = "longest",
    max_length: int | None = None,
    padding_side: str = "right",
    pad_to_multiple_of: int | None = None,
) -> dict:
    """``Tokenizer.pad``: lists of ids (or a mapping with ``input_ids``) padded into
    {"input_ids", "attention_mask"}, as transformers' ``tokenizer.pad(...,
    return_tensors="np")``; it never truncates."""

    import numpy

    rows = batch["input_ids"] if isinstance(batch, Mapping) else batch
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__len__"):  # a 2-D array is fine
        raise TypeError(f"pad takes a list of lists of ids, got {type(rows).__name__}")
    for n, row in enumerate(rows):
        if isinstance(row, (str, bytes, int)) or not hasattr(row, "__len__"):
            raise TypeError(
                f"pad takes a list of lists of ids; row {n} is {type(row).__name__} "
                f"{row!r:.40}: for texts, call encode_batch_padded"
            )
    padding = strategy(padding)
    if max_length is None and padding == "max_length":
        max_length = default_max_length(tok, padding)
    _checked_options(padding, padding_side, max_length, False, pad_to_multiple_of)
    pad = pad_id(tok, pad_token) if padding != "do_not_pad" else 0
    lengths = numpy.fromiter(map(len, rows), numpy.int64, len(rows))
    offsets = numpy.zeros(len(rows) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths, out=offsets[1:])
    ids = _flat(rows, int(offsets[-1]), "pad takes lists of int ids")
    width = target_length(lengths, padding, max_length, pad_to_multiple_of, rows="row")
    mask = _given_mask(batch, lengths) if isinstance(batch, Mapping) else None
    return _rectangle(ids, offsets, lengths, width, pad, padding_side, mask)


def _given_mask(batch: Mapping, lengths):
    """The batch's own ``attention_mask``, flat (None when it has none): transformers pads
    it with zeros rather than replacing it, so a masked id stays masked."""
    rows = batch.get("attention_mask")
    if rows is None:
        return None
    if len(rows) != len(lengths):
        raise ValueError(
            f"attention_mask has {len(rows)} rows, input_ids has {len(lengths)}: pass one "
            "mask row for each row of ids"
        )
    for n, (row, length) in enumerate(zip(rows, lengths.tolist(), strict=True)):
        if len(row) != length:
            raise ValueError(
                f"attention_mask row {n} has {len(row)} values, input_ids row {n} has {length}"
            )
    return _flat(rows, int(lengths.sum()), "attention_mask takes lists of ints")


def _flat(rows, total: int, expected: str):
    """The ``total`` values of ``rows`` one after the other, as int64; a TypeError that
    starts with ``expected`` when one is no int."""
    import itertools

    import numpy

    try:
        return numpy.fromiter(itertools.chain.from_iterable(rows), numpy.int64, total)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{expected}: {e}") from None


def _rectangle(ids, offsets, lengths, width: int, pad: int, padding_side: str, mask=None) -> dict:
    """Rows ``ids[offsets[i] : offsets[i] + lengths[i]]`` in a (rows, ``width``) int64
    array filled with ``pad`` on ``padding_side``, and the mask of the ids' places (there,
    ``mask``'s values when given: a flat mask laid out as ``ids``)."""
    import numpy

    rows = len(lengths)
    input_ids = numpy.full((rows, width), pad, dtype=numpy.int64)
    attention = numpy.zeros((rows, width), dtype=numpy.int64)
    # Every kept id's row and column at once: no Python loop over texts or ids.
    row = numpy.repeat(numpy.arange(rows), lengths)
    kept_starts = numpy.concatenate(([0], numpy.cumsum(lengths)[:-1])) if rows else lengths
    within = numpy.arange(int(lengths.sum())) - numpy.repeat(kept_starts, lengths)
    source = numpy.repeat(offsets[:-1], lengths) + within
    column = within if padding_side == "right" else within + numpy.repeat(width - lengths, lengths)
    input_ids[row, column] = ids[source]
    attention[row, column] = 1 if mask is None else mask[source]
    return {"input_ids": input_ids, "attention_mask": attention}
