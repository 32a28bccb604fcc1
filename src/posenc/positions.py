"""Position ids: the position each token is given, by one function with its three variants as arguments.

    length=n              0, 1, ..., n - 1: the slot of each token (a row with no padding)
    attention_mask=m      each real token's position as if its row ran alone, without its padding
    document_ids=d        each token's place within its own document (several documents packed in a row)

`offset=k` adds k to every id: the number of tokens a decoder has already read (its KV cache),
so that the next token is told its position and not 0 again.
"""

from __future__ import annotations

import torch

from ._checks import check_size, check_table_fits, check_tensor, short
from ._provenance import marked

__all__ = ["position_ids"]

# Positions are exact in float64 up to 2**53; an angle p * frequency beyond that means nothing.
MAX_POSITION = 2**53


@marked("positions.position_ids")
def position_ids(attention_mask: torch.Tensor | None = None, *, document_ids: torch.Tensor | None = None,
                 length: int | None = None, offset: int = 0) -> torch.Tensor:
    """Each token's position, a LongTensor: pass exactly one of `attention_mask`, `document_ids` or `length`.

    length: `offset + 0, 1, ..., length - 1`, shape `(length,)`.

    attention_mask: `(batch, seq)` or `(seq,)`, bool or integer, 1 (True) for a real token and 0 for padding, as
    `attention.padding_mask` returns it and a Hugging Face tokenizer's `attention_mask`. Returns the mask's shape:
    each real token gets the position it has when its row runs alone, without its padding, on either side. A padded
    slot gets position 0, as in Hugging Face transformers' generation (transformers 5.23, generation/utils.py,
    `_prepare_position_ids_for_generation`; some of its models fill 1 instead). Any value would do: no query looks
    at a padded key, and a padded query's output is thrown away. 0 is a row every learned table has.

    document_ids: `(seq,)` or `(batch, seq)` integers, one per token (`attention.document_ids_from_lengths`):
    positions restart at 0 where a document starts, `[0, 0, 0, 1, 1]` gives `[0, 1, 2, 0, 1]`. With these
    positions and `attention.packed_mask`, each document's outputs are those of the document run alone.

    offset: added to every position, e.g. the number of tokens already in a KV cache (default 0).
    """
    given = [name for name, value in (("attention_mask", attention_mask), ("document_ids", document_ids),
                                      ("length", length)) if value is not None]
    if len(given) != 1:
        raise TypeError(f"position_ids takes one of attention_mask, document_ids or length, got {given or 'none'}")
    offset = check_size("offset", offset, minimum=0, maximum=MAX_POSITION)
    if length is not None:
        length = check_size("length", length, minimum=0, maximum=MAX_POSITION)
        check_table_fits((length,), torch.int64, name="row of position ids", arguments="length")
        return torch.arange(length) + offset
    if attention_mask is not None:
        mask = check_attention_mask(attention_mask, ndim=(1, 2))
        return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0) + offset
    document_ids = check_document_ids(document_ids)
    # The earlier tokens of the row with the same id, and the token itself: `packed_mask`'s row, summed.
    same_document_so_far = (document_ids[..., :, None] == document_ids[..., None, :]).tril()
    return same_document_so_far.sum(-1) - 1 + offset


def check_attention_mask(value: object, *, ndim: tuple[int, ...] = (2,)) -> torch.Tensor:
    """An `attention_mask` as tokenizers return it (bool or integer, 1 for a real token, 0 for padding) as a LongTensor."""
    check_tensor("attention_mask", value, ndim=ndim)
    if value.is_floating_point() or value.is_complex():
        raise TypeError(f"attention_mask must be a bool or integer tensor of 0s and 1s, got dtype {value.dtype}")
    mask = value.long()
    if (others := mask[(mask < 0) | (mask > 1)].unique()[:5].tolist()):
        raise ValueError(f"attention_mask must hold only 0 (padding) and 1 (a real token), got also {others}")
    return mask


def check_document_ids(document_ids: object) -> torch.Tensor:
    """One document id per token, `(seq,)` or `(batch, seq)`, whose (seq, seq) mask fits in memory."""
    check_tensor("document_ids", document_ids, ndim=(1, 2), kind="integer")
    if document_ids.shape[-1] == 0:
        raise ValueError(f"document_ids must hold one document id per token, at least one, got {short(document_ids)}")
    check_table_fits(tuple(document_ids.shape) + document_ids.shape[-1:], torch.bool, name="mask", arguments="document_ids")
    return document_ids
