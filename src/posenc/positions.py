"""Position ids: the position each token is given, by one function with its three variants as arguments.

    length=n              0, 1, ..., n - 1: the slot of each token (a row with no padding)
    attention_mask=m      each real token's place among the real tokens of its row (left padding)
    document_ids=d        each token's place within its own document (several documents packed in a row)

`offset=k` adds k to every id: the number of tokens a decoder has already read (its KV cache),
so that the next token is told its position and not 0 again.
"""

from __future__ import annotations

import torch

from ._validate import check_position_variant
from .attention import packed_mask

__all__ = ["position_ids"]


def position_ids(attention_mask: torch.Tensor | None = None, *, document_ids: torch.Tensor | None = None,
                 length: int | None = None, offset: int = 0) -> torch.Tensor:
    """Each token's position, a LongTensor: pass exactly one of `attention_mask`, `document_ids` or `length`.

    length: `offset + 0, 1, ..., length - 1`, shape `(length,)`.

    attention_mask: `(batch, seq)` or `(seq,)`, bool or integer, 1 (True) for a real token and 0 for padding, as
    `attention.padding_mask` returns it and a Hugging Face tokenizer's `attention_mask`:
    `attention_mask.cumsum(-1) - 1`, padding 0. With left padding, `[[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]`
    gives `[[0, 0, 0, 1, 2], [0, 1, 2, 3, 4]]`: the first real token is at position 0 in every row, as when the
    row is run alone. A padded slot gets position 0, as in Hugging Face transformers' generation
    (transformers 5.23, generation/utils.py, `_prepare_position_ids_for_generation`:
    `position_ids.masked_fill(attention_mask == 0, 0)`; some of its models fill 1 instead). Any value would do:
    no query looks at a padded key, and a padded query's output is thrown away. 0 is a row every learned table
    has, whereas cumsum - 1 alone would give -1 to the left padding.

    document_ids: `(seq,)` or `(batch, seq)` integers, one per token (`attention.document_ids_from_lengths`):
    positions restart at 0 where a document starts, `[0, 0, 0, 1, 1]` gives `[0, 1, 2, 0, 1]`, the number of
    earlier tokens of the row with the same id. With these positions and `attention.packed_mask`, each
    document's outputs are those of the document run alone.
    """
    variant, value, offset = check_position_variant(attention_mask, document_ids, length, offset)
    if variant == "length":
        return torch.arange(value) + offset
    if variant == "attention_mask":
        positions = (value.cumsum(-1) - 1).masked_fill(value == 0, 0)
    else:
        positions = packed_mask(value, causal=True).sum(-1) - 1  # the token itself is in its own row of the mask
    return positions + offset
