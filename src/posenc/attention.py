"""X + PE -> Q, K, V -> scaled dot-product scores: what attention reads.

Each row of `X' = X + PE` (one word, with its position mixed in) is multiplied by
three learned matrices W_Q, W_K, W_V of shape `(d_model, d_k)`, giving that word's
query, key and value. The score of word r attending to word c is
`Q[r] . K[c] / sqrt(d_k)`; a softmax over each row turns scores into weights.

Tensors of two floating dtypes are computed in the wider one (float32 with float64
gives float64). NaN and inf propagate as in any torch arithmetic.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from ._validate import check_floating_tensor, check_size, check_table_fits, check_tensor, common_dtype

__all__ = [
    "ProjectionWeights",
    "QKV",
    "projection_weights",
    "project_qkv",
    "scaled_dot_product_scores",
    "attention_weights",
    "padding_mask",
    "self_attention",
]


class ProjectionWeights(NamedTuple):
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor


class QKV(NamedTuple):
    Q: torch.Tensor
    K: torch.Tensor
    V: torch.Tensor


def projection_weights(*, d_model: int, d_k: int | None = None, seed: int = 0) -> ProjectionWeights:
    """Seeded W_Q, W_K, W_V, each `(d_model, d_k)` (d_k defaults to d_model).

    Drawn from N(0, 1/d_model), so that Q, K and V have entries of about the same
    size as X' instead of growing with d_model.
    """
    d_model = check_size("d_model", d_model)
    d_k = d_model if d_k is None else check_size("d_k", d_k)
    seed = check_size("seed", seed, minimum=0, maximum=2**64 - 1)
    check_table_fits((3, d_model, d_k), torch.float32, name="W_Q, W_K and W_V", arguments="d_model or d_k")
    generator = torch.Generator().manual_seed(seed)
    scale = 1.0 / math.sqrt(d_model)
    W_Q, W_K, W_V = (torch.randn(d_model, d_k, generator=generator) * scale for _ in range(3))
    return ProjectionWeights(W_Q, W_K, W_V)


def project_qkv(x: torch.Tensor, weights: ProjectionWeights) -> QKV:
    """`Q = x @ W_Q`, `K = x @ W_K`, `V = x @ W_V`: one query, key and value per row of x."""
    check_floating_tensor("x", x, ndim=(2, 3))
    if not isinstance(weights, ProjectionWeights):
        raise TypeError(f"weights must be a posenc.attention.ProjectionWeights, got {type(weights).__name__}")
    for name, matrix in zip(weights._fields, weights):
        check_floating_tensor(f"weights.{name}", matrix, ndim=(2,))
        if matrix.shape != weights.W_Q.shape:
            raise ValueError(f"weights' three matrices must have one shape, got W_Q {tuple(weights.W_Q.shape)} "
                             f"and {name} {tuple(matrix.shape)}")
    d_model = weights.W_Q.shape[0]
    if x.shape[-1] != d_model:
        raise ValueError(f"x must have d_model={d_model} features in its last dimension, got shape {tuple(x.shape)}")
    dtype = common_dtype(x=x, W_Q=weights.W_Q, W_K=weights.W_K, W_V=weights.W_V)
    x = x.to(dtype)
    return QKV(*(x @ matrix.to(dtype) for matrix in weights))


def scaled_dot_product_scores(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """`Q @ K^T / sqrt(d_k)`: shape `(..., seq, seq)`, row r = how much word r looks at each word.

    Without the division, the dot product of two d_k-long vectors with unit-size
    entries has a spread of about sqrt(d_k); the softmax of such large scores is
    almost one-hot, and its gradients vanish.
    """
    check_floating_tensor("Q", Q, ndim=(2, 3))
    check_floating_tensor("K", K, ndim=(2, 3))
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got {tuple(Q.shape)} and {tuple(K.shape)}")
    _check_batches("Q", Q, "K", K)
    dtype = common_dtype(Q=Q, K=K)
    return Q.to(dtype) @ K.to(dtype).transpose(-2, -1) / math.sqrt(Q.shape[-1])


def _check_batches(name_a: str, a: torch.Tensor, name_b: str, b: torch.Tensor) -> None:
    """Two 3-D tensors must hold the same number of sequences (a 2-D one is shared by every sequence)."""
    if a.dim() == 3 and b.dim() == 3 and a.shape[0] != b.shape[0]:
        raise ValueError(f"{name_a} and {name_b} must hold the same number of sequences (batch size), got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")


def padding_mask(ids: torch.Tensor, *, pad_id: int) -> torch.Tensor:
    """True where a token is real, False where it is padding: shape of ids."""
    check_tensor("ids", ids, ndim=(1, 2))
    pad_id = check_size("pad_id", pad_id, minimum=0, maximum=2**62)  # an index into the vocabulary
    return ids != pad_id


def attention_weights(scores: torch.Tensor, *, key_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over each row of scores; keys where `key_mask` is False get weight 0.

    Padding carries no meaning, so no word should attend to it.
    """
    check_floating_tensor("scores", scores, ndim=(2, 3))
    if key_mask is not None:
        check_tensor("key_mask", key_mask, ndim=(1, 2))
        if key_mask.dtype != torch.bool:
            raise TypeError(f"key_mask must be a bool tensor, got dtype {key_mask.dtype}")
        if key_mask.shape[-1] != scores.shape[-1]:
            raise ValueError(f"key_mask must have {scores.shape[-1]} entries per row, got shape {tuple(key_mask.shape)}")
        _check_batches("scores", scores, "key_mask", key_mask.unsqueeze(-2))
        if not bool(key_mask.any(dim=-1).all()):
            raise ValueError("key_mask must keep at least one key in every row, or the softmax has nothing to weigh")
        scores = scores.masked_fill(~key_mask.unsqueeze(-2), float("-inf"))
    return torch.softmax(scores, dim=-1)


def self_attention(
    x: torch.Tensor, weights: ProjectionWeights, *, key_mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention head over x (= X + PE): returns (output, attention weights)."""
    Q, K, V = project_qkv(x, weights)
    weights_matrix = attention_weights(scaled_dot_product_scores(Q, K), key_mask=key_mask)
    return weights_matrix @ V, weights_matrix
