"""bytepair: byte-level BPE tokenizers. Train on your corpus, encode fast, convert formats.

>>> import bytepair
>>> tok = bytepair.train(["the cat in the hat sat on the mat"] * 10, vocab_size=260, progress=False)
>>> tok.decode(tok.encode("the cat"))
'the cat'
"""

from bytepair.errors import (
    BytepairError,
    ChatTemplateError,
    CorpusError,
    CorpusWarning,
    DisallowedSpecialError,
    FormatError,
    FormatWarning,
    PatternError,
    SpecialTokenError,
    TokenizerNotFoundError,
    TrainingWarning,
    UnknownIdError,
    VocabError,
    VocabSizeError,
)
from bytepair.formats.tokenizer_config import TokenizerConfig
from bytepair.tokenizer import Tokenizer
from bytepair.trainer import train, train_bpe

__all__ = [
    "BytepairError",
    "ChatTemplateError",
    "CorpusError",
    "CorpusWarning",
    "DisallowedSpecialError",
    "FormatError",
    "FormatWarning",
    "PatternError",
    "SpecialTokenError",
    "Tokenizer",
    "TokenizerConfig",
    "TokenizerNotFoundError",
    "TrainingWarning",
    "UnknownIdError",
    "VocabError",
    "VocabSizeError",
    "train",
    "train_bpe",
]
__version__ = "0.1.0"
