"""X + PE -> Q, K, V -> scaled dot-product scores -> heads and masks: what attention reads.

Each row of `X' = X + PE` (one word, with its position mixed in) is multiplied by
three learned matrices W_Q, W_K, W_V of shape `(d_model, d_k)`, giving that word's
query, key and value. The score of word r attending to word c is
`Q[r] . K[c] / sqrt(d_k)`; a softmax over each row turns scores into weights.

Multi-head attention ("Attention Is All You Need", section 3.2.2) cuts the columns of
Q, K and V into `num_heads` blocks of `head_dim = d_model / num_heads` columns, runs the
same attention in each block, puts the heads' outputs side by side again and
multiplies by a fourth matrix W_O.

One mask convention throughout: a bool mask is True where a query may look at a key
(a real token; a key at or before the query for the causal mask), as in
`torch.nn.functional.scaled_dot_product_attention`'s `attn_mask`.
`torch.nn.MultiheadAttention` uses the opposite (True = hidden) for both its masks.

Tensors of two floating dtypes are computed in the wider one (float32 with float64
gives float64). NaN and inf propagate as in any torch arithmetic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import NamedTuple

import torch

from ._checks import (
    SEED,
    SIZE,
    check_flag,
    check_floating_tensor,
    check_size,
    check_str_list,
    check_table_fits,
    check_tensor,
    checked,
    instance_of,
    list_of,
    optional_size,
    short,
)
from .positions import check_document_ids, position_ids

__all__ = [
    "ProjectionWeights",
    "QKV",
    "MultiHeadWeights",
    "Attended",
    "attend",
    "projection_weights",
    "multi_head_weights",
    "project_qkv",
    "scaled_dot_product_scores",
    "attention_weights",
    "padding_mask",
    "causal_mask",
    "document_ids_from_lengths",
    "packed_mask",
    "packed_position_ids",
    "split_heads",
    "merge_heads",
    "self_attention",
    "shuffle_gap",
    "side_by_side",
    "multi_head_attention",
]


class ProjectionWeights(NamedTuple):
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor


class QKV(NamedTuple):
    Q: torch.Tensor
    K: torch.Tensor
    V: torch.Tensor


class MultiHeadWeights(NamedTuple):
    """W_Q, W_K, W_V of shape `(d_model, d_model)`, used as `x @ W`, and W_O that mixes the heads' outputs."""

    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor


def _seeded_matrices(count: int, *, rows: int, columns: int, seed: int) -> list[torch.Tensor]:
    """`count` matrices drawn one after the other from one seeded generator, from N(0, 1/rows).

    The scale 1/sqrt(rows) keeps `x @ W` at about the size of x instead of growing with rows.
    """
    generator = torch.Generator().manual_seed(seed)
    scale = 1.0 / math.sqrt(rows)
    return [torch.randn(rows, columns, generator=generator) * scale for _ in range(count)]


@checked(d_model=SIZE, d_k=optional_size(), seed=SEED)
def projection_weights(*, d_model: int, d_k: int | None = None, seed: int = 0) -> ProjectionWeights:
    """Seeded W_Q, W_K, W_V, each `(d_model, d_k)` (d_k defaults to d_model).

    Drawn from N(0, 1/d_model), so that Q, K and V have entries of about the same
    size as X' instead of growing with d_model.
    """
    d_k = d_model if d_k is None else d_k
    check_table_fits((3, d_model, d_k), torch.float32, name="W_Q, W_K and W_V", arguments="d_model or d_k")
    return ProjectionWeights(*_seeded_matrices(3, rows=d_model, columns=d_k, seed=seed))


@checked(d_model=SIZE, seed=SEED)
def multi_head_weights(*, d_model: int, seed: int = 0) -> MultiHeadWeights:
    """Seeded W_Q, W_K, W_V and W_O for multi-head attention, each `(d_model, d_model)`.

    They do not depend on the number of heads: heads read blocks of columns of the same
    matrices, so h heads of `d_model / h` columns hold as many parameters as one head
    of d_model columns. W_Q, W_K and W_V are those of `projection_weights(d_model=d_model,
    seed=seed)` (drawn first, from the same generator), so a notebook's single-head Q, K
    and V are the multi-head ones before the split.
    """
    check_table_fits((4, d_model, d_model), torch.float32, name="W_Q, W_K, W_V and W_O", arguments="d_model")
    return MultiHeadWeights(*_seeded_matrices(4, rows=d_model, columns=d_model, seed=seed))


def project_qkv(x: torch.Tensor, weights: ProjectionWeights) -> QKV:
    """`Q = x @ W_Q`, `K = x @ W_K`, `V = x @ W_V`: one query, key and value per row of x."""
    # W_Q, W_K and W_V come from projection_weights, in one shape.
    instance_of(ProjectionWeights, "a posenc.attention.ProjectionWeights")("weights", weights)
    if check_floating_tensor("x", x, ndim=(2, 3)).shape[-1] != weights.W_Q.shape[0]:
        raise ValueError(f"x must have d_model={weights.W_Q.shape[0]} features in its last dimension, got {tuple(x.shape)}")
    dtype = common_dtype(x, *weights)
    x = x.to(dtype)
    return QKV(*(x @ matrix.to(dtype) for matrix in weights))


def scaled_dot_product_scores(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """`Q @ K^T / sqrt(d_k)`: shape `(..., seq, seq)`, row r = how much word r looks at each word.

    Q and K are `(seq, d_k)`, `(batch, seq, d_k)` or, split into heads,
    `(batch, num_heads, seq, head_dim)`; a 2-D one is shared by every sequence.

    Without the division, the dot product of two d_k-long vectors with unit-size
    entries has a spread of about sqrt(d_k); the softmax of such large scores is
    almost one-hot, and its gradients vanish.
    """
    check_floating_tensor("Q", Q, ndim=(2, 3, 4))
    check_floating_tensor("K", K, ndim=(2, 3, 4))
    if Q.shape[-1] != K.shape[-1] or (Q.dim() > 2 and K.dim() > 2 and Q.shape[:-2] != K.shape[:-2]):
        raise ValueError(f"Q and K must share d_k and their sequences (and heads), got {tuple(Q.shape)} and {tuple(K.shape)}")
    dtype = common_dtype(Q, K)
    return _scores(Q.to(dtype), K.to(dtype))


def padding_mask(ids: torch.Tensor, *, pad_id: int) -> torch.Tensor:
    """True where a token is real, False where it is padding: shape of ids."""
    check_tensor("ids", ids, ndim=(1, 2))
    pad_id = check_size("pad_id", pad_id, minimum=0, maximum=2**62)  # an index into the vocabulary
    return ids != pad_id


@checked(sequence_length=SIZE, fits=("sequence_length", "sequence_length"))
def causal_mask(*, sequence_length: int) -> torch.Tensor:
    """`(sequence_length, sequence_length)` bool: True where query r may look at key c, that is c <= r.

    A decoder predicts token r + 1 from tokens 0..r, so no query may look at a later key
    ("Attention Is All You Need", section 3.2.3). The same convention as `padding_mask`
    (True = may be looked at): the hidden keys are `~causal_mask(...)`, the upper triangle
    `torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)`, which is what
    `torch.nn.MultiheadAttention` takes as its `attn_mask`.
    """
    return torch.ones(sequence_length, sequence_length, dtype=torch.bool).tril()


def attention_weights(scores: torch.Tensor, *, key_mask: torch.Tensor | None = None,
                      causal: bool = False, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over each row of scores; keys where `key_mask` is False get weight 0, and with
    `causal=True` so do the keys after the query.

    scores: `(seq, seq)`, `(batch, seq, seq)` or `(batch, num_heads, seq, seq)`.
    key_mask: `(seq,)` for every row, or `(batch, seq)`, one row per sequence (True = a real token).
    mask: a bool `(seq, seq)` for every sequence, or `(batch, seq, seq)`, True where query r may look
    at key c (such as `packed_mask`'s); combined with the other two.
    Padding carries no meaning, so no word should attend to it; a decoder must not see
    the words it is about to predict.
    """
    check_floating_tensor("scores", scores, ndim=(2, 3, 4))
    return _softmax(scores, _keep(scores.shape, key_mask=key_mask, causal=check_flag("causal", causal), mask=mask))


def _keep(shape: torch.Size, *, key_mask: object, causal: bool, mask: object) -> torch.Tensor | None:
    """The keys each query may look at under the three masks, shaped to broadcast over scores of `shape` (None:
    every key). The masks are checked as they are combined; a row that keeps no key is refused."""
    keep = None
    if mask is not None:
        check_tensor("mask", mask, ndim=(2, 3), kind="bool")
        if mask.shape[-2:] != shape[-2:] or (mask.dim() == 3 and (len(shape) == 2 or mask.shape[0] != shape[0])):
            raise ValueError(f"mask must be (seq, seq) or (batch, seq, seq) for scores {tuple(shape)}, got {tuple(mask.shape)}")
        keep = mask[:, None] if mask.dim() == 3 and len(shape) == 4 else mask  # the same mask for every head
    if key_mask is not None:
        check_tensor("key_mask", key_mask, ndim=(1, 2), kind="bool")
        if key_mask.shape[-1] != shape[-1] or (key_mask.dim() == 2 and len(shape) > 2 and key_mask.shape[0] != shape[0]):
            raise ValueError(f"key_mask must have {shape[-1]} entries per row, one row per sequence, got {tuple(key_mask.shape)}")
        # (batch, seq) -> (batch, 1, ..., 1, seq): the same keys hidden for every head and every query.
        middle = (1,) * max(len(shape) - key_mask.dim(), 1)
        real = key_mask.reshape(key_mask.shape[:-1] + middle + key_mask.shape[-1:])
        keep = real if keep is None else keep & real
    if causal and shape[-2] != shape[-1]:
        raise ValueError(f"scores must be square (a row and a column per token) for causal=True, got {tuple(shape)}")
    if causal and shape[-1]:
        visible = causal_mask(sequence_length=shape[-1])
        keep = visible if keep is None else keep & visible
    if keep is not None and not bool(keep.any(dim=-1).all()):
        names = "key_mask" if mask is None else "mask" if key_mask is None else "key_mask and mask together"
        raise ValueError(f"{names} must keep at least one key in every row{' (causal: a real first token)' if causal else ''}")
    return keep


# The core: every attention of the package, the teaching functions' and the tiny models', runs these lines ------


class Attended(NamedTuple):
    """What `attend` computes: the output, the attention weights, and the scores before the mask."""

    output: torch.Tensor
    weights: torch.Tensor
    scores: torch.Tensor


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, bias: torch.Tensor | None = None,
           keep: torch.Tensor | None = None) -> Attended:
    """`softmax(q k^T / sqrt(d_k) + bias)` over the keys where `keep` is True, then the weighted sum of the values.

    q: `(..., queries, d_k)`, k: `(..., keys, d_k)`, v: `(..., keys, d_v)`, in one dtype. bias (a position
    scheme's, such as ALiBi's) and keep (bool, True = query r may look at key c) broadcast to the scores'
    `(..., queries, keys)`; a row that keeps no key gives NaN weights. Returns (output, weights, scores),
    the scores with the bias and before the mask.
    """
    scores = _scores(q, k) if bias is None else _scores(q, k) + bias
    weights = _softmax(scores, keep)
    return Attended(weights @ v, weights, scores)


def common_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """The dtype floating tensors are computed in together: the widest of theirs (torch's promotion)."""
    return functools.reduce(torch.promote_types, (t.dtype for t in tensors))


def _scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def _softmax(scores: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))  # a hidden key: e^-inf = 0, weight 0
    return torch.softmax(scores, dim=-1)


# Packing: several documents in one row ---------------------------------------------------------


def document_ids_from_lengths(lengths: Sequence[int]) -> torch.Tensor:
    """The document each token of a packed row belongs to: `lengths=[3, 2]` gives `[0, 0, 0, 1, 1]`.

    Packing puts several short documents one after the other in one row instead of padding
    each to the longest; `packed_mask` and `packed_position_ids` read these ids.
    """
    lengths = list_of(check_size)("lengths", lengths)  # one length per document
    check_table_fits((sum(lengths),), torch.int64, name="row of document ids", arguments="lengths")
    return torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))


def packed_mask(document_ids: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    """True where query r may look at key c: the same document and, with `causal=True`, c <= r.

    document_ids: `(seq,)` or `(batch, seq)` integers, one per token (`document_ids_from_lengths`);
    a document is every token of its row with its id. Returns a bool `(seq, seq)` or `(batch, seq, seq)`:
    for documents one after the other, block diagonal (a triangle per document when causal), so no
    token sees another document, and each document is attended to as if it were alone in its row.
    Pass it to `attention_weights(scores, mask=...)` or `multi_head_attention(..., mask=...)`.
    """
    document_ids = check_document_ids(document_ids)
    causal = check_flag("causal", causal)
    same = document_ids[..., :, None] == document_ids[..., None, :]
    if causal:
        same = same & causal_mask(sequence_length=document_ids.shape[-1])
    return same


def packed_position_ids(document_ids: torch.Tensor) -> torch.Tensor:
    """Each token's position within its own document: positions restart at 0 where a document starts.

    `document_ids = [0, 0, 0, 1, 1]` gives `[0, 1, 2, 0, 1]`. `(seq,)` or `(batch, seq)`; a LongTensor of
    that shape. With these positions and `packed_mask`, each document's outputs are those of the document run
    alone.
    """
    return position_ids(document_ids=document_ids)


def split_heads(x: torch.Tensor, *, num_heads: int) -> torch.Tensor:
    """`(batch, seq, d_model)` -> `(batch, num_heads, seq, head_dim)`: head h gets columns
    `h * head_dim` to `(h + 1) * head_dim - 1` of x.

    A 2-D `(seq, d_model)` gives `(num_heads, seq, head_dim)`. The last dimension is cut
    into `(num_heads, head_dim)`; moving the head dimension before `seq` makes each head
    a `(seq, head_dim)` matrix of its own, so one batched matmul computes every head.
    """
    d_model, num_heads = check_tensor("x", x, ndim=(2, 3)).shape[-1], check_size("num_heads", num_heads)
    if d_model == 0 or d_model % num_heads:
        raise ValueError(f"x's d_model={d_model} must be a positive multiple of num_heads={num_heads}, got {tuple(x.shape)}")
    # reshape, not view: x may be a non-contiguous tensor (a transposed or sliced one).
    return x.reshape(x.shape[:-1] + (num_heads, d_model // num_heads)).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """`(batch, num_heads, seq, head_dim)` -> `(batch, seq, num_heads * head_dim)`: the heads side by side.

    The inverse of `split_heads` ("Concat(head_1, ..., head_h)" in section 3.2.2 of the paper).
    A 3-D `(num_heads, seq, head_dim)` gives `(seq, num_heads * head_dim)`.
    """
    heads_last = check_tensor("x", x, ndim=(3, 4)).transpose(-3, -2)  # (..., seq, num_heads, head_dim)
    return heads_last.reshape(heads_last.shape[:-2] + (heads_last.shape[-2] * heads_last.shape[-1],))


def self_attention(
    x: torch.Tensor, weights: ProjectionWeights, *, key_mask: torch.Tensor | None = None, causal: bool = False,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention head over x (= X + PE): returns (output, attention weights). Masks as in `attention_weights`."""
    Q, K, V = project_qkv(x, weights)
    keep = _keep(Q.shape[:-1] + K.shape[-2:-1], key_mask=key_mask, causal=check_flag("causal", causal), mask=mask)
    output, weights_matrix, _ = attend(Q, K, V, keep=keep)
    return output, weights_matrix


def shuffle_gap(x: torch.Tensor, order: torch.Tensor, weights: ProjectionWeights, *, added: torch.Tensor | float = 0.0,
                causal: bool = False) -> float:
    """The shuffle test: the largest gap between self-attention on `x[order] + added` and on `x + added`, its rows then
    put in the same order. 0 when attention is permutation-equivariant for this input."""
    x = check_floating_tensor("x", x, ndim=(2,))
    order = check_tensor("order", order, ndim=(1,), kind="integer")
    if sorted(order.tolist()) != list(range(x.shape[0])):
        raise ValueError(f"order must list each of x's {x.shape[0]} rows once, got {short(order)}")
    if isinstance(added, bool) or not isinstance(added, (int, float, torch.Tensor)):
        raise TypeError(f"added must be a number or a tensor, got {short(added)}")
    if isinstance(added, torch.Tensor):
        try:
            fits = torch.broadcast_shapes(added.shape, x.shape) == x.shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"added must broadcast to x's shape {tuple(x.shape)}, got {tuple(added.shape)}")
    output, _ = self_attention(x + added, weights, causal=causal)
    shuffled_output, _ = self_attention(x[order] + added, weights, causal=causal)
    return float((shuffled_output - output[order]).abs().max())


@checked(words=list_of(check_str_list), outputs=list_of(functools.partial(check_floating_tensor, ndim=(2,))),
         decimals=functools.partial(check_size, minimum=0, maximum=12))
def side_by_side(words: Sequence[Sequence[str]], outputs: Sequence[torch.Tensor], *, decimals: int = 3) -> str:
    """Two sentences' attention outputs as one table: a line per position, each token beside its output row."""
    word_counts, row_counts = [len(sentence) for sentence in words], [len(output) for output in outputs]
    if word_counts != row_counts:
        raise ValueError(f"outputs must hold one row per word of each sentence in words: words has {word_counts} "
                         f"words, outputs {row_counts} rows")
    columns = []
    for sentence, output in zip(words, outputs, strict=True):
        rows = [f"{token:5}(" + ", ".join(f"{v:{decimals + 3}.{decimals}f}" for v in row) + ")"
                for token, row in zip(sentence, output.tolist(), strict=True)]
        lines = [" ".join(sentence)] + rows
        width = max(len(line) for line in lines) + 6
        columns.append([f"{line:{width}}" for line in lines])
    return "\n".join("".join(line).rstrip() for line in zip(*columns, strict=True))


def multi_head_attention(
    x: torch.Tensor, weights: MultiHeadWeights, *, num_heads: int, key_mask: torch.Tensor | None = None,
    causal: bool = False, mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-head self-attention over x: returns (output, attention weights of every head).

    x: `(seq, d_model)` or `(batch, seq, d_model)`; output: the shape of x; weights:
    `(num_heads, seq, seq)` or `(batch, num_heads, seq, seq)`. key_mask as in
    `attention_weights` (True = a real token; `(seq,)`, or `(batch, seq)` for a batch), and so is
    mask (`(seq, seq)` or `(batch, seq, seq)`, True = query r may look at key c, e.g. `packed_mask`'s).
    `MultiHead(x) = Concat(head_1, ..., head_h) W_O` with
    `head_i = Attention(x W_Q_i, x W_K_i, x W_V_i)`, where W_Q_i is the i-th block of head_dim
    columns of W_Q ("Attention Is All You Need", section 3.2.2).
    """
    instance_of(MultiHeadWeights, "a posenc.attention.MultiHeadWeights (see multi_head_weights)")("weights", weights)
    if getattr(x, "ndim", 0) == 2 and any(isinstance(m, torch.Tensor) and m.dim() != n for m, n in ((key_mask, 1), (mask, 2))):
        # the heads take the place of a batch: a 3-D mask would be read as one per head
        raise ValueError(f"for one sequence x, key_mask must be 1-D and mask 2-D, got {short(key_mask)} and {short(mask)}")
    Q, K, V = project_qkv(x, ProjectionWeights(weights.W_Q, weights.W_K, weights.W_V))
    Q, K, V = (split_heads(matrix, num_heads=num_heads) for matrix in (Q, K, V))
    keep = _keep(Q.shape[:-1] + K.shape[-2:-1], key_mask=key_mask, causal=check_flag("causal", causal), mask=mask)
    output, weights_matrix, _ = attend(Q, K, V, keep=keep)
    dtype = common_dtype(output, weights.W_O)
    return merge_heads(output).to(dtype) @ weights.W_O.to(dtype), weights_matrix
