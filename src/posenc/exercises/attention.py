"""Checkers for attention, masks, heads and why positions matter: scores, a padding mask, masked weights, causal
weights, heads (cut, and folded into the batch), an entry of the scores, shuffled weights."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from .._validate import check_floating_tensor, check_ids, check_size, check_str, check_tensor, is_sequence, short
from ..attention import attention_weights, split_heads
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_number,
    as_tensor,
    close,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_scores", "check_padding_mask", "check_masked_weights", "check_causal_weights", "check_split_heads",
           "check_folded_heads", "check_score_entry", "check_permuted_weights"]


@exercise("scaled dot-product scores")
def check_scores(answer: torch.Tensor | None, *, Q: torch.Tensor, K: torch.Tensor) -> Feedback:
    """Q @ K^T / sqrt(d_k)."""
    check_floating_tensor("Q", Q, ndim=(2, 3))
    check_floating_tensor("K", K, ndim=(2, 3))
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got {tuple(Q.shape)} and {tuple(K.shape)}")
    Q, K = Q.detach().double(), K.detach().double()
    answer = as_tensor(answer, "the score matrix")
    if isinstance(answer, Feedback):
        return answer
    raw = Q @ K.transpose(-2, -1)
    d_k = Q.shape[-1]
    if close(answer, raw / math.sqrt(d_k)):
        return Feedback(CORRECT, f"Correct: Q @ K^T / sqrt({d_k}), shape {tuple(answer.shape)}.")
    if close(answer, raw):
        return Feedback(MISTAKE, f"Divide by sqrt(d_k) = {math.sqrt(d_k):.4g}: unscaled scores make the softmax nearly one-hot.")
    if close(answer, raw / d_k):
        return Feedback(MISTAKE, f"Divided by d_k = {d_k}; the scale is its square root, sqrt(d_k).")
    if close(answer, K @ Q.transpose(-2, -1) / math.sqrt(d_k)):
        return Feedback(MISTAKE, "Transposed: rows are queries (the word looking), so Q @ K^T, not K @ Q^T.")
    scale = _scale_of(answer, raw)
    if scale is not None and scale.startswith("Multiplied"):
        return Feedback(MISTAKE, f"{scale}: divide by sqrt(d_k) = sqrt({d_k}) = {math.sqrt(d_k):.4g} instead.")
    if scale is not None:
        return Feedback(MISTAKE, f"{scale}: the scale is sqrt(d_k) = sqrt({d_k}) = {math.sqrt(d_k):.4g}, with d_k = "
                                 f"{d_k} the width of these queries and keys (Q.shape[-1]), not d_model or another "
                                 "head's size. A variable d_k set in an earlier cell may hold another number.")
    return Feedback(WRONG, f"Got {describe(answer)}; expected Q @ K^T / sqrt(d_k), shape {tuple(raw.shape)}.")


def _scale_of(answer: torch.Tensor, raw: torch.Tensor) -> str | None:
    """If the answer is the raw scores Q @ K^T times one positive number c: what it did, in words ("Divided by
    sqrt(6) = 2.449"), naming sqrt(n) where 1/c or c is the square root of a whole number; otherwise None."""
    if answer.shape != raw.shape or not answer.is_floating_point() or raw.numel() == 0:
        return None
    values = answer.double()
    norm = float((raw * raw).sum())
    if not norm > 0:
        return None
    c = float((values * raw).sum()) / norm  # the least-squares factor
    if not (c > 0 and math.isfinite(c)) or not close(values, raw * c):
        return None
    for inverse, verb in ((1 / c, "Divided by"), (c, "Multiplied by")):
        if not inverse * inverse < 2**53:
            continue
        square = round(inverse * inverse)
        if square >= 1 and abs(inverse - math.sqrt(square)) <= 1e-4 * inverse:
            return f"{verb} sqrt({square}) = {math.sqrt(square):.4g}"
    return f"Divided by {1 / c:.4g}" if c < 1 else f"Multiplied by {c:.4g}"


@exercise("a padding mask")
def check_padding_mask(answer: torch.Tensor | None, *, ids: torch.Tensor, pad_id: int) -> Feedback:
    """True where a token is real, False where it is padding: a bool tensor of ids' shape."""
    check_tensor("ids", ids, ndim=(1, 2))
    pad_id = check_size("pad_id", pad_id, minimum=0, maximum=2**62)
    expected = ids != pad_id
    answer = as_tensor(answer, "the (batch, max_sequence_length) mask")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape == expected.shape[::-1] and answer.shape != expected.shape and torch.equal(answer.T.bool(), expected):
        return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}, expected one row per sentence, "
                                 f"{tuple(expected.shape)}.")
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; the mask has the shape of ids, {tuple(expected.shape)}.")
    if torch.equal(answer.bool(), ~expected) and bool(((answer == 0) | (answer == 1)).all()):
        return Feedback(MISTAKE, "Inverted: True marks the padding here. That is the convention of PyTorch's "
                                 "nn.MultiheadAttention (key_padding_mask, True = ignore); this suite's mask is True "
                                 "where a token is real: ids != pad_id.")
    if torch.equal(answer.bool(), expected) and bool(((answer == 0) | (answer == 1)).all()):
        if answer.dtype != torch.bool:
            return Feedback(MISTAKE, f"The right 0s and 1s, but dtype {answer.dtype}: masked_fill and ~ need a bool "
                                     "mask (compare ids != pad_id gives one).")
        return Feedback(CORRECT, f"Correct: {int(expected.sum())} real tokens, {int((~expected).sum())} padding.")
    return Feedback(WRONG, f"Got {describe(answer)} that marks other places; expected True exactly where ids != {pad_id}.")


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


# Heads and the causal mask ---------------------------------------------------------------------------------


@exercise("causal attention weights")
def check_causal_weights(answer: torch.Tensor | None, *, scores: torch.Tensor) -> Feedback:
    """softmax over each row of the scores, with every key after its query set to -inf first."""
    check_floating_tensor("scores", scores, ndim=(2, 3))
    if scores.shape[-2] != scores.shape[-1]:
        raise ValueError(f"scores must be square (one row and one column per token), got shape {tuple(scores.shape)}")
    scores = scores.detach().double()
    expected = attention_weights(scores, causal=True)
    # Hiding the diagonal too leaves row 0 with no key at all (NaN): keep NaN to recognise it.
    answer = as_tensor(answer, "the causal attention weights", allow_nan=True)
    if isinstance(answer, Feedback):
        return answer
    shown = describe(answer)
    if answer.is_floating_point():
        answer = torch.nan_to_num(answer.double(), nan=0.0, posinf=0.0, neginf=0.0)
    if close(answer, expected):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}; query r looks at keys 0 to r only, and "
                                 "every row sums to 1.")
    ones = torch.ones(scores.shape[-2:], dtype=torch.bool)
    hidden = torch.triu(ones, diagonal=1)  # the keys after their query

    def softmax_hiding(mask: torch.Tensor, fill: float = float("-inf"), dim: int = -1) -> torch.Tensor:
        return torch.softmax(scores.masked_fill(mask, fill), dim=dim)

    mistakes = [
        ("No mask: every query still sees the keys after it. Set those scores to -inf before the softmax, "
         "scores.masked_fill(torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1), float('-inf')).",
         lambda: torch.softmax(scores, dim=-1)),
        ("The diagonal is hidden too (diagonal=0): a query may look at itself, and without it row 0 has no key left "
         "(its softmax is NaN). Use torch.triu(..., diagonal=1).", lambda: softmax_hiding(torch.triu(ones))),
        ("The mask came after the softmax: zeroing weights afterwards leaves rows that no longer sum to 1. "
         "Mask the scores with -inf first, then take the softmax.", lambda: torch.softmax(scores, dim=-1) * ~hidden),
        ("The later keys' scores were set to 0, not -inf: exp(0) = 1, so they still get weight. Use float('-inf').",
         lambda: softmax_hiding(hidden, fill=0.0)),
        ("The lower triangle is hidden instead of the upper one: each query sees itself and the keys AFTER it. "
         "A decoder hides the future: torch.triu(..., diagonal=1), True above the diagonal.",
         lambda: softmax_hiding(torch.tril(ones, diagonal=-1))),
        ("The mask is inverted: the keys each query may see are hidden and the later ones kept. masked_fill puts "
         "-inf where its mask is True, so give it the keys to hide, torch.triu(..., diagonal=1), which is "
         "~attention.causal_mask(...).", lambda: softmax_hiding(~hidden)),
        ("The softmax ran down the columns (dim=-2): each query's row must sum to 1, so use dim=-1.",
         lambda: softmax_hiding(hidden, dim=-2)),
    ]
    mistake = first_mistake(lambda weights: close(answer, torch.nan_to_num(weights, nan=0.0)), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {shown}; expected softmax(scores with the keys after each query at -inf), "
                           f"shape {tuple(expected.shape)}.")


@exercise("cut into heads")
def check_split_heads(answer: torch.Tensor | None, *, x: torch.Tensor, num_heads: int) -> Feedback:
    """x, `(batch, seq, d_model)`, cut into `(batch, num_heads, seq, head_dim)`: view, then transpose(1, 2)."""
    check_tensor("x", x, ndim=(2, 3))
    expected = split_heads(x.detach(), num_heads=num_heads)  # checks num_heads, and that it divides d_model
    answer = as_tensor(answer, "the heads, a (batch, num_heads, seq, head_dim) tensor")
    if isinstance(answer, Feedback):
        return answer
    x = x.detach()
    *batch, length, d_model = x.shape
    batch, head_dim = tuple(batch), d_model // num_heads
    if close(answer, expected, atol=1e-6):
        return Feedback(CORRECT, f"Correct: shape {tuple(expected.shape)}; head h holds columns h * {head_dim} to "
                                 f"h * {head_dim} + {head_dim - 1} of every token.")
    mistakes = [
        (f"Same shape, other numbers: view{batch + (num_heads, length, head_dim)} reads the numbers in the order they "
         f"are stored, token after token, so 'head 0' gets whole rows of the first tokens instead of columns 0 to "
         f"{head_dim - 1} of every token. Cut the last dimension first, view{batch + (length, num_heads, head_dim)}, "
         f"then put the heads in front with transpose.", lambda: x.reshape(batch + (num_heads, length, head_dim))),
        (f"The cut is right but the heads are not in front yet: shape {batch + (length, num_heads, head_dim)}. "
         f"transpose the token and head dimensions, so that each head is a (seq, head_dim) matrix of its own.",
         lambda: x.reshape(batch + (length, num_heads, head_dim))),
        ("Each head got every num_heads-th column instead of a block of head_dim neighbouring columns: the last "
         "dimension was cut as (head_dim, num_heads). Cut it as (num_heads, head_dim).",
         lambda: x.reshape(batch + (length, head_dim, num_heads)).movedim(-1, -3)),
        ("Each head's matrix is transposed, (head_dim, seq) instead of (seq, head_dim): swap the token and head "
         "dimensions, not the last two.", lambda: x.reshape(batch + (length, num_heads, head_dim)).movedim(-3, -1)),
        ("That is x itself, not cut into heads.", lambda: x),
    ]
    mistake = first_mistake(lambda heads: close(answer, heads, atol=1e-6), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected x cut into {num_heads} heads, shape "
                           f"{tuple(expected.shape)}.")


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


@exercise("read an entry of the scores")
def check_score_entry(answer: float | None, *, scores: torch.Tensor, tokens: Sequence[str], query: str,
                      key: str) -> Feedback:
    """The entry of `scores` where the token `query` (a row) looks at the token `key` (a column)."""
    check_floating_tensor("scores", scores, ndim=(2,))
    if not is_sequence(tokens) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must be a list of str, got {short(tokens)}")
    if len(tokens) != scores.shape[0] or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"scores must be square with one row per token, got shape {tuple(scores.shape)} "
                         f"for {len(tokens)} tokens")
    for name, word in (("query", query), ("key", key)):
        if check_str(name, word) not in tokens:
            raise ValueError(f"{name} must be one of the tokens {list(tokens)}, got {word!r}")
    scores = scores.detach().cpu().double()
    row, column = list(tokens).index(query), list(tokens).index(key)
    if answer is None:
        return not_attempted("one number from scores")
    number = as_number(answer)
    if number is None:
        return Feedback(WRONG, f"Expected one number from scores, got {describe(answer)}.")

    def at(r: int, c: int) -> bool:
        return 0 <= r < scores.shape[0] and 0 <= c < scores.shape[1] and abs(float(scores[r, c]) - number) <= 1e-6

    if at(row, column):
        return Feedback(CORRECT, f"Correct: scores[{row}, {column}]: row {row} ({query}) looks, column {column} ({key}) "
                                 "is looked at.")
    if at(column, row):
        return Feedback(MISTAKE, f"That is scores[{column}, {row}], how much {key} attends to {query}. Rows are the words "
                                 f"looking (queries), columns the words looked at (keys): {query} is row {row}.")
    if at(row + 1, column + 1):
        return Feedback(MISTAKE, f"That is scores[{row + 1}, {column + 1}]: indices count from 0, so {query} is row {row}.")
    found = [(r, c) for r in range(scores.shape[0]) for c in range(scores.shape[1]) if at(r, c)]
    if found:
        r, c = found[0]
        return Feedback(WRONG, f"That is scores[{r}, {c}]: how much {tokens[r]} attends to {tokens[c]}. "
                               f"You want the row of {query} and the column of {key}.")
    return Feedback(WRONG, f"{number:.4g} is not an entry of scores: pick one with scores[row, column].")


@exercise("attention weights of a shuffled sentence")
def check_permuted_weights(answer: torch.Tensor | None, *, weights: torch.Tensor, order: Sequence[int]) -> Feedback:
    """The attention weights of the input reordered by `order`, from `weights` alone: weights[order][:, order]."""
    check_floating_tensor("weights", weights, ndim=(2,))
    n = weights.shape[0]
    order = check_ids("order", order)
    if weights.shape[1] != n or sorted(order) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1} for a square weights matrix, got {order} "
                         f"and shape {tuple(weights.shape)}")
    weights = weights.detach().cpu().double()
    answer = as_tensor(answer, f"the ({n}, {n}) matrix of shuffled weights")
    if isinstance(answer, Feedback):
        return answer
    index = torch.tensor(order)
    inverse = torch.argsort(index)
    if close(answer, weights[index][:, index], atol=1e-6):
        return Feedback(CORRECT, "Correct: rows and columns move together, weights[order][:, order] (P A P^T).")
    if close(answer, weights, atol=1e-6) and order != sorted(order):
        return Feedback(MISTAKE, "Unchanged: the words moved, so their rows (who looks) and columns (who is looked at) move.")
    moved = weights[index][:, index]
    mistakes = [
        ("Only the rows moved: each word's row does, but so does its column (the word as a key). "
         "Permute both: weights[order][:, order].", weights[index]),
        ("Only the columns moved: permute the rows too, weights[order][:, order].", weights[:, index]),
        ("The inverse permutation: position k of the new sentence holds word order[k], "
         "so index with order itself, not with argsort(order).", weights[inverse][:, inverse]),
        ("Transposed: rows are queries (the word looking) and columns keys (the words looked at); yours has them the "
         "other way round. weights[order][:, order], without .T.", moved.T),
        (f"weights[order, order] picks {n} single entries, (order[k], order[k]) for each k: the diagonal in the new "
         "order. Index the rows, then the columns: weights[order][:, order].", weights[index, index]),
    ]
    mistake = first_mistake(lambda wrong: close(answer, wrong, atol=1e-6), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected the weights with rows and columns reordered by {order}.")
