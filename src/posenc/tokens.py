"""Sentence -> tokens -> padded tokens -> ids -> one-hot rows.

The first step of the Transformer's input side: the model reads a fixed-size
matrix, so every sentence becomes exactly `max_sequence_length` tokens, each an
index into a vocabulary of `vocab_size` entries, each index a one-hot row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import torch

from ._checks import (
    DTYPE,
    FLAG,
    SIZE,
    STR,
    check_str,
    check_str_list,
    check_table_fits,
    check_tensor,
    checked,
    instance_of,
    is_real,
    list_of,
    short,
    str_list,
)

PAD_TOKEN = "<PAD>"
UNK_TOKEN = "<UNK>"
SPECIAL_TOKENS = (PAD_TOKEN, UNK_TOKEN)

# A word (letters, digits, apostrophes inside it) or a single punctuation mark.
_TOKEN_PATTERN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")

__all__ = [
    "PAD_TOKEN",
    "UNK_TOKEN",
    "SPECIAL_TOKENS",
    "Vocabulary",
    "tokenize",
    "build_vocabulary",
    "pad",
    "one_hot",
    "sentence_to_ids",
    "batch_ids",
]


@checked(sentence=STR, lowercase=FLAG)
def tokenize(sentence: str, *, lowercase: bool = True) -> list[str]:
    """Split a sentence into words and punctuation marks.

    >>> tokenize("My name is John.")
    ['my', 'name', 'is', 'john', '.']
    """
    if lowercase:
        # "My" and "my" are one word to this model; a real tokenizer would decide too.
        sentence = sentence.lower()
    return _TOKEN_PATTERN.findall(sentence)


@dataclass(frozen=True)
class Vocabulary:
    """An ordered list of tokens; a token's id is its position in the list.

    The special tokens come first, so `<PAD>` is id 0 and `<UNK>` id 1 in every
    vocabulary built here. Words that are not in the vocabulary map to `<UNK>`.
    """

    tokens: tuple[str, ...]
    _ids: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tokens = check_str_list("tokens", self.tokens)
        if not set(SPECIAL_TOKENS) <= set(tokens):
            raise ValueError(f"tokens must contain the special tokens {SPECIAL_TOKENS}, got {short(tokens)}")
        if len(set(tokens)) != len(tokens):
            raise ValueError(f"tokens must be unique, repeated: {sorted({t for t in tokens if tokens.count(t) > 1})}")
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "_ids", {token: i for i, token in enumerate(tokens)})

    @classmethod
    @checked(sentences=str_list(if_str="wrap it in a list"), lowercase=FLAG)
    def from_sentences(cls, sentences: Sequence[str], *, lowercase: bool = True) -> Vocabulary:
        """Special tokens, then every token of `sentences` in order of first appearance."""
        seen = dict.fromkeys(SPECIAL_TOKENS)
        for sentence in sentences:
            seen.update(dict.fromkeys(tokenize(sentence, lowercase=lowercase)))
        return cls(tuple(seen))

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    @property
    def pad_id(self) -> int:
        return self._ids[PAD_TOKEN]

    @property
    def unk_id(self) -> int:
        return self._ids[UNK_TOKEN]

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and token in self._ids

    def id_of(self, token: str) -> int:
        """The token's id, or `<UNK>`'s id for a token the vocabulary does not know."""
        return self._ids.get(check_str("token", token), self.unk_id)

    def ids(self, tokens: Sequence[str]) -> list[int]:
        return [self._ids.get(t, self.unk_id) for t in check_str_list("tokens", tokens)]

    def decode(self, ids: Iterable[int] | torch.Tensor) -> list[str]:
        """The tokens of these ids: a list of ints, or a 1-D integer tensor."""
        return [self.tokens[i] for i in _id_list(ids, vocab_size=self.vocab_size)]


def build_vocabulary(sentences: Sequence[str], *, lowercase: bool = True) -> Vocabulary:
    """Shorthand for `Vocabulary.from_sentences`."""
    return Vocabulary.from_sentences(sentences, lowercase=lowercase)


@checked(tokens=str_list(if_str="call tokenize(sentence) first"), max_sequence_length=SIZE, pad_token=STR)
def pad(tokens: Sequence[str], *, max_sequence_length: int, pad_token: str = PAD_TOKEN) -> list[str]:
    """Append `pad_token` until there are exactly `max_sequence_length` tokens.

    A sentence longer than `max_sequence_length` is refused rather than cut: silently
    dropping words is a decision the caller should make, not this function.
    """
    if len(tokens) > max_sequence_length:
        raise ValueError(f"the sentence has {len(tokens)} tokens, more than max_sequence_length={max_sequence_length}; "
                         f"shorten it or raise max_sequence_length to at least {len(tokens)}")
    return list(tokens) + [pad_token] * (max_sequence_length - len(tokens))


@checked(vocab_size=SIZE, dtype=DTYPE)
def one_hot(ids: Sequence[int] | torch.Tensor, *, vocab_size: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """One row per id, a single 1 in column `id`: shape `(len(ids), vocab_size)`."""
    ids = torch.tensor(_id_list(ids, vocab_size=vocab_size), dtype=torch.long)
    check_table_fits((ids.numel(), vocab_size), dtype, name="one-hot matrix", arguments="vocab_size or fewer ids")
    rows = torch.zeros(ids.numel(), vocab_size, dtype=dtype)
    rows[torch.arange(ids.numel()), ids] = 1
    return rows


@checked(sentence=STR, vocabulary=instance_of(Vocabulary), max_sequence_length=SIZE)
def sentence_to_ids(sentence: str, vocabulary: Vocabulary, *, max_sequence_length: int) -> torch.Tensor:
    """Tokenize, pad to `max_sequence_length` and look up ids: a 1-D LongTensor."""
    padded = pad(tokenize(sentence), max_sequence_length=max_sequence_length)
    return torch.tensor(vocabulary.ids(padded), dtype=torch.long)


def batch_ids(sentences: Sequence[str], vocabulary: Vocabulary, *, max_sequence_length: int) -> torch.Tensor:
    """Several sentences as one `(batch, max_sequence_length)` LongTensor: each padded, then stacked.

    Padding is what lets sentences of different lengths share one tensor; attention
    must then be told to ignore it (`attention.padding_mask`).
    """
    list_of(check_str)("sentences", sentences)
    return torch.stack([sentence_to_ids(s, vocabulary, max_sequence_length=max_sequence_length) for s in sentences])


def _id_list(ids: object, *, vocab_size: int) -> list[int]:
    """ids (a list of ints or a 1-D integer tensor) as a list of ints, each in [0, vocab_size)."""
    if isinstance(ids, torch.Tensor):
        ids = check_tensor("ids", ids, ndim=(1,), kind="integer").tolist()
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"ids must be a list of ints or a 1-D integer tensor, got {short(ids)}")
    ids = list(ids)
    for i in ids:
        if not is_real(i, whole=True):
            raise TypeError(f"ids must hold ints, got {short(i)} of type {type(i).__name__} among them")
        if not 0 <= i < vocab_size:
            raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got {i}")
    return [int(i) for i in ids]
