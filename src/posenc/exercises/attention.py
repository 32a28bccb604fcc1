"""Checkers for attention, masks and heads: masked weights, heads folded into the batch."""

from __future__ import annotations

import torch

from .._checks import check_floating_tensor, check_tensor
from ..attention import attention_weights, split_heads
from .feedback import (
    CORRECT,
    WRONG,
    Feedback,
    as_tensor,
    close,
    describe,
    exercise,
    first_mistake,
)

__all__ = ["check_masked_weights", "check_folded_heads"]


@exercise("masked attention weights")
def check_masked_weights(answer: torch.Tensor | None, *, scores: torch.Tensor, key_mask: torch.Tensor) -> Feedback:
    """softmax over each row of the scores, with the padded keys set to -inf first."""
    check_floating_tensor("scores", scores, ndim=(2, 3))
    check_tensor("key_mask", key_mask, ndim=(1, 2))  # attention_weights checks the rest (dtype, length, batch)
    scores = scores.detach().double()
    expected = attention_weights(scores, key_mask=key_mask)
    # The softmax down the wrong axis gives NaN where a whole column is masked: keep NaN to recognise it.
    answer = as_tensor(answer, "the masked attention weights", allow_nan=True)
    if isinstance(answer, Feedback):
        return answer
    answer = torch.nan_to_num(answer.double(), nan=0.0, posinf=0.0, neginf=0.0) if answer.is_floating_point() else answer
    keep = key_mask.unsqueeze(-2)
    if close(answer, expected):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}, padding gets weight 0, every row sums to 1.")
    mistakes = [
        ("No mask: the padded keys still get weight. Set their scores to -inf before the softmax.",
         lambda: torch.softmax(scores, dim=-1)),
        ("The mask came after the softmax: zeroing weights afterwards leaves rows that no longer sum to 1. "
         "Divide each row by its new sum, or mask the scores with -inf first, then take the softmax.",
         lambda: torch.softmax(scores, dim=-1) * keep),
        ("The padded scores were set to 0, not -inf: exp(0) = 1, so padding still gets weight. Use float('-inf').",
         lambda: torch.softmax(scores.masked_fill(~keep, 0.0), dim=-1)),
        ("The mask hides rows (queries) instead of columns (keys): it is the padded keys no word may look at, "
         "so the mask is broadcast over the rows, key_mask[..., None, :].",
         lambda: torch.softmax(scores.masked_fill(~key_mask.unsqueeze(-1), float("-inf")), dim=-1)),
        ("The softmax ran down the columns (dim=-2): each query's row must sum to 1, so use dim=-1.",
         lambda: torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-2)),
    ]
    mistake = first_mistake(lambda weights: close(answer, torch.nan_to_num(weights, nan=0.0)), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected softmax(scores with padded keys at -inf), "
                           f"shape {tuple(expected.shape)}.")


@exercise("heads folded into the batch")
def check_folded_heads(answer: torch.Tensor | None, *, x: torch.Tensor, num_heads: int) -> Feedback:
    """x, `(batch, seq, d_model)`, cut into heads and folded into the batch, `(batch * num_heads, seq, head_dim)`:
    sequence b's head h at index b * num_heads + h, as nn.MultiheadAttention holds them inside (its 3-D attn_mask
    has that layout). view, transpose(1, 2), then reshape."""
    check_tensor("x", x, ndim=(3,))
    x = x.detach()
    split = split_heads(x, num_heads=num_heads)  # checks num_heads, and that it divides d_model
    batch, length, d_model = x.shape
    head_dim = d_model // num_heads
    folded = (batch * num_heads, length, head_dim)
    expected = split.reshape(folded)
    answer = as_tensor(answer, f"the heads folded into the batch, a {folded} tensor")
    if isinstance(answer, Feedback):
        return answer
    if close(answer, expected, atol=1e-6):
        return Feedback(CORRECT, f"Correct: shape {folded}; entry b * {num_heads} + h holds columns h * {head_dim} to "
                                 f"h * {head_dim} + {head_dim - 1} of every token of sequence b.")
    mistakes = [
        (f"Same shape, other numbers: view{folded} reads the numbers in the order they are stored, token after token, "
         f"so entry 0 gets whole rows of sequence 0's first tokens instead of columns 0 to {head_dim - 1} of each of "
         f"its tokens. Cut the last dimension first, view{(batch, length, num_heads, head_dim)}, put the heads in "
         "front of the tokens with transpose(1, 2), then fold with reshape.", lambda: x.reshape(folded)),
        (f"The heads are cut and in front, {tuple(split.shape)}, but not folded into the batch yet: reshape to "
         f"{folded}.", split),
        (f"Folded head-major: entry h * {batch} + b holds sequence b's head h. The layout is b * {num_heads} + h, "
         "each sequence's heads together: fold (batch, num_heads), in that order, as transpose(1, 2) leaves them.",
         lambda: split.transpose(0, 1).reshape(folded)),
        ("Each head got every num_heads-th column instead of a block of head_dim neighbouring columns: the last "
         "dimension was cut as (head_dim, num_heads). Cut it as (num_heads, head_dim).",
         lambda: x.reshape(batch, length, head_dim, num_heads).movedim(-1, 1).reshape(folded)),
        ("Each head's matrix is transposed, (head_dim, seq) instead of (seq, head_dim): swap the token and head "
         "dimensions, not the last two.", lambda: split.transpose(-2, -1).reshape(batch * num_heads, head_dim, length)),
        ("That is x itself, not cut into heads.", x),
    ]
    mistake = first_mistake(lambda heads: close(answer, heads, atol=1e-6), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected x cut into {num_heads} heads and folded into the batch, "
                           f"shape {folded}.")
