"""Subword tokens: a byte-level BPE trained on the suite's own text, feeding the same pipeline.

`tokens.tokenize` cuts a sentence into words; real models cut it into pieces from a
vocabulary learned on a corpus. Byte-pair encoding (BPE; Sennrich, Haddow, Birch, "Neural
Machine Translation of Rare Words with Subword Units", ACL 2016; their code,
rsennrich/subword-nmt, subword_nmt/learn_bpe.py) starts from single symbols and repeatedly
merges the most frequent adjacent pair into a new symbol. GPT-2 runs it on the bytes of the
UTF-8 text (openai/gpt-2, src/encoder.py: `bytes_to_unicode` gives each of the 256 bytes a
printable character, and BPE works on those), so any text is covered and no word is unknown.

A frequent word then is one token and a rare one several: positions count pieces, not
words, so a sentence takes more of `max_sequence_length` than its number of words.

The tokenizer is Hugging Face `tokenizers` (`Tokenizer(models.BPE())` with the `ByteLevel`
pre-tokenizer, GPT-2's scheme), trained here offline on `NOTEBOOK_TEXT`, a frozen copy of the
notebooks' markdown. A space becomes part of the piece after it, written `Ġ` (the character
`bytes_to_unicode` gives the space byte): " name" is the piece `Ġname`. The special tokens
`<PAD>` and `<UNK>` get ids 0 and 1, as in `tokens.Vocabulary`, so `subword_vocabulary`
turns the tokenizer into a `Vocabulary` and padding, ids and one-hot rows work unchanged.
"""

from __future__ import annotations

import functools
from importlib.resources import files

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from ._checks import check_size, check_str, instance_of
from .tokens import SPECIAL_TOKENS, Vocabulary, pad

__all__ = ["NOTEBOOK_TEXT", "DEFAULT_VOCAB_SIZE", "MIN_VOCAB_SIZE", "train_bpe", "subword_tokens", "subword_ids",
           "subword_vocabulary", "pieces_by_word"]

# The markdown cells of every notebook up to "Does position matter?", frozen at commit 0c443ff (2026-11-23; each
# notebook's markdown cells in order, each cell's source stripped, joined by blank lines), so that the tokenizer trained
# on it, and every number the real-pipeline notebook shows about it, stays the same when the notebooks change. Package
# data, installed with the package.
NOTEBOOK_TEXT = files("posenc").joinpath("data", "notebook_text.md").read_text(encoding="utf-8")

# Enough merges that the suite's frequent words ("name", "positional") are one piece each, few enough that
# names and rare words are cut: measured on NOTEBOOK_TEXT (about 0.1 s to train).
DEFAULT_VOCAB_SIZE = 2000
# The 2 special tokens and the 256 bytes come before any merge.
MIN_VOCAB_SIZE = len(SPECIAL_TOKENS) + 256
MAX_VOCAB_SIZE = 2**20


def train_bpe(text: str | None = None, *, vocab_size: int = DEFAULT_VOCAB_SIZE) -> Tokenizer:
    """A byte-level BPE tokenizer trained on `text` (default: `NOTEBOOK_TEXT`) until it has `vocab_size` tokens.

    Ids 0 and 1 are `<PAD>` and `<UNK>`, 2-257 the 256 bytes, then one token per merge, in the
    order learned; a pair is merged only if it occurs at least twice, so a small text may stop short of
    vocab_size. Deterministic: the same text and vocab_size give the same tokenizer in every process
    (tests/test_real_pipeline.py trains it in two processes with different hash seeds and compares).
    Each line of text is one training sequence. Returns a `tokenizers.Tokenizer`:
    `tokenizer.encode("My name is John").tokens` are the pieces.
    """
    text = NOTEBOOK_TEXT if text is None else check_str("text", text)
    vocab_size = check_size("vocab_size", vocab_size, minimum=MIN_VOCAB_SIZE, maximum=MAX_VOCAB_SIZE)
    tokenizer = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS[1]))
    # GPT-2's setting: no space added before the first word, so "My" at the start and " My" inside differ.
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(text.split("\n"), trainer=trainer)
    return tokenizer


_check_tokenizer = functools.partial(instance_of(Tokenizer, "a tokenizers.Tokenizer (see train_bpe)"), "tokenizer")


def subword_tokens(sentence: str, tokenizer: Tokenizer) -> list[str]:
    """The pieces the tokenizer cuts `sentence` into, in order; `Ġ` marks a space before a piece.

    The subword counterpart of `tokens.tokenize`: pass the pieces to `tokens.pad` and a
    `subword_vocabulary(tokenizer)` as you would words.
    """
    check_str("sentence", sentence)
    return _check_tokenizer(tokenizer).encode(sentence).tokens


def pieces_by_word(sentence: str, tokenizer: Tokenizer) -> list[list[str]]:
    """The pieces of `sentence`, grouped by the word (pre-tokenizer cut) they come from, as `plots.subword_figure` takes
    them; each piece is the sentence's own characters, so a space before a piece is a real space, not `Ġ`."""
    check_str("sentence", sentence)
    encoded = _check_tokenizer(tokenizer).encode(sentence)
    words: dict[int, list[str]] = {}
    for word, (start, end) in zip(encoded.word_ids, encoded.offsets):
        words.setdefault(word, []).append(sentence[start:end])
    return list(words.values())


def subword_ids(sentence: str, tokenizer: Tokenizer, *, max_sequence_length: int) -> torch.Tensor:
    """Pieces, padded with `<PAD>` to `max_sequence_length`, as ids: the subword `tokens.sentence_to_ids`.

    A sentence of more pieces than max_sequence_length is refused (as `tokens.pad` refuses it),
    even if it has fewer words.
    """
    pieces = subword_tokens(sentence, tokenizer)
    padded = pad(pieces, max_sequence_length=max_sequence_length)
    return torch.tensor(subword_vocabulary(tokenizer).ids(padded), dtype=torch.long)


def subword_vocabulary(tokenizer: Tokenizer) -> Vocabulary:
    """The tokenizer's tokens as a `tokens.Vocabulary`, each at its own id: `<PAD>` 0, `<UNK>` 1, then the rest.

    A `Vocabulary` gives a token's id by its place in the list; listing the tokenizer's tokens in
    the order of their ids makes the two agree, so `Vocabulary.ids(pieces)` equals
    `tokenizer.encode(sentence).ids`.
    """
    vocabulary = _check_tokenizer(tokenizer).get_vocab(with_added_tokens=True)
    ordered = sorted(vocabulary, key=vocabulary.__getitem__)
    if [vocabulary[token] for token in ordered] != list(range(len(ordered))) or tuple(ordered[:2]) != SPECIAL_TOKENS:
        raise ValueError(f"tokenizer must number its tokens 0, 1, ... with {SPECIAL_TOKENS} first, as train_bpe makes it")
    return Vocabulary(tuple(ordered))
