"""The exceptions and warnings bytepair raises.

Every error subclasses the built-in a caller would already catch (ValueError, KeyError,
OSError), names the bad value, and says how to fix it.
"""

from __future__ import annotations


class BytepairError(Exception):
    """Base class of every bytepair error."""


class PatternError(BytepairError, ValueError):
    """A pre-tokenization pattern that is neither a known name nor a valid regex."""


class SpecialTokenError(BytepairError, ValueError):
    """An unusable list of special tokens (empty or duplicate tokens)."""


class DisallowedSpecialError(BytepairError, ValueError):
    """Text contains special-token text that the caller did not allow.

    tiktoken's rule: a user's text must not smuggle in control tokens. The message says
    how to allow the token, or how to encode it as plain text.
    """

    def __init__(self, token: str, where: str | None = None):
        self.token, self.where = token, where
        super().__init__(
            (f"{where}: " if where else "")
            + f"text contains the special token {token!r}, which is not allowed. "
            f"Pass allowed_special={{{token!r}}} (or allowed_special='all') to encode it as a "
            f"special token, or disallowed_special=() to encode it as plain text."
        )


class VocabSizeError(BytepairError, ValueError):
    """A vocab_size that cannot hold the 256 bytes plus the special tokens."""


class UnknownIdError(BytepairError, KeyError):
    """A token id that is not in the vocabulary."""

    def __init__(self, token_id: object, vocab_size: int):
        self.token_id = token_id
        super().__init__(
            f"unknown token id {token_id!r}: ids must be integers in 0..{vocab_size - 1}"
        )

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0])


class FormatError(BytepairError, ValueError):
    """A malformed tokenizer file. The message names the file, the line or key, and what
    was expected."""


class CorpusError(BytepairError, OSError):
    """A training or encoding input that cannot be read (missing, a directory, unreadable)."""


class TokenizerNotFoundError(BytepairError, FileNotFoundError):
    """A tokenizer to load that is neither a file nor a tiktoken encoding name."""

    def __init__(self, path: str, why: str):
        import errno

        super().__init__(errno.ENOENT, why, path)

    def __str__(self) -> str:  # OSError would print "[Errno 2] ..."
        return f"{self.filename}: {self.strerror}"

    def __reduce__(self):  # OSError's would call __init__ with (errno, strerror, filename)
        return type(self), (self.filename, self.strerror)


class CorpusWarning(UserWarning):
    """A corpus that trains, but into a tokenizer unfit for its use: mostly not UTF-8, or
    full of special-token text that is not a special token."""


class FormatWarning(UserWarning):
    """A tokenizer file that holds less than the tokenizer: a rank file (``.tiktoken``) has
    no pattern and no special tokens, so one loaded without them, or a tokenizer saved into
    one, encodes differently unless they are passed to ``Tokenizer.load``."""


class TrainingWarning(UserWarning):
    """Training stopped before vocab_size (no pair left with count >= min_frequency)."""


class VocabError(BytepairError, ValueError):
    """A vocabulary or merge list that is inconsistent (a merge of unknown tokens, repeated
    bytes, a negative id)."""


class ChatTemplateError(BytepairError, ValueError):
    """A chat template that cannot be used: no template, a Jinja syntax error, a template
    that raises (``raise_exception``), or messages it cannot render."""
