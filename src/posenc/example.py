"""The walkthrough's running example: one sentence, its corpus, and the sizes it is padded and embedded to.

Change a value here, then `make notebooks` for the walkthrough (docs/adapting.md says which): each of its notebooks
reads these values, prints the ones it uses, and draws its pictures from them. tests/test_prose_numbers.py (in
`make check`) then names each sentence of their prose whose number no longer matches what they compute.
"""

from __future__ import annotations

import torch

from . import embedding, encoding, tokens
from ._checks import SIZE, STR, checked

# The sentence the walkthrough follows. At least four tokens: the batch of masks and heads reads its first four.
SENTENCE = "My name is John"
# The small corpus the vocabulary is built from. The sentence is its first line, so none of its words is <UNK>.
CORPUS = (SENTENCE, "My name is Grant", "What is your name?", "John is my friend")
# The most tokens the model reads at once: the rows of the position table. At least the sentence's token count.
MAX_SEQUENCE_LENGTH = 10
# The width of each token's vector, X's columns and the table's. Even: an odd d_model is a pitfall of its own.
D_MODEL = 6

__all__ = ["SENTENCE", "CORPUS", "MAX_SEQUENCE_LENGTH", "D_MODEL", "vocabulary", "sentence_rows"]


def vocabulary() -> tokens.Vocabulary:
    """The running example's vocabulary, built from CORPUS: <PAD>, <UNK>, then each new token in order."""
    return tokens.build_vocabulary(CORPUS)


@checked(sentence=STR, d_model=SIZE)
def sentence_rows(sentence: str, *, d_model: int) -> tuple[list[str], torch.Tensor, torch.Tensor]:
    """Another sentence's words, its `X` and `X + PE`, unpadded: its vocabulary is built from it alone and its W_E is
    `embedding.embedding_matrix` with seed 0, so equal words get equal rows of X."""
    words = tokens.tokenize(sentence)
    vocabulary = tokens.build_vocabulary([sentence])
    ids = tokens.sentence_to_ids(sentence, vocabulary, max_sequence_length=len(words))
    X = embedding.embedding_lookup(ids, embedding.embedding_matrix(vocab_size=vocabulary.vocab_size, d_model=d_model))
    return words, X, encoding.PositionalEncoding(d_model=d_model, max_sequence_length=len(words))(X)
