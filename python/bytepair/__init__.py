"""bytepair: byte-level BPE tokenizers. Train on your corpus, encode fast, convert formats.

>>> import bytepair
>>> tok = bytepair.train(["the cat in the hat sat on the mat"] * 10, vocab_size=260, progress=False)
>>> tok.decode(tok.encode("the cat"))
'the cat'
"""

from bytepair.errors import (
    BytepairError,
    CorpusError,
    CorpusWarning,
    DisallowedSpecialError,
    FormatError,
    PatternError,
    SpecialTokenError,
    TokenizerNotFoundError,
    TrainingWarning,
    UnknownIdError,
    VocabError,
    VocabSizeError,
)
from bytepair.tokenizer import Tokenizer
from bytepair.train import train, train_bpe

__all__ = [
    "BytepairError",
    "CorpusError",
    "CorpusWarning",
    "DisallowedSpecialError",
    "FormatError",
    "PatternError",
    "SpecialTokenError",
    "Tokenizer",
    "TokenizerNotFoundError",
    "TrainingWarning",
    "UnknownIdError",
    "VocabError",
    "VocabSizeError",
    "train",
    "train_bpe",
]
__version__ = "0.1.0"
