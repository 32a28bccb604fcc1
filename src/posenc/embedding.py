"""The W_E projection: one-hot rows (vocab_size wide) -> word vectors (d_model wide).

`X = one_hot @ W_E` is a linear layer with no bias and `vocab_size * d_model`
learnable parameters. Because each one-hot row has a single 1, the product just
picks row `id` of W_E: the same numbers as the lookup `W_E[ids]`, which is what
`torch.nn.Embedding` does without ever building the one-hot matrix.
"""

from __future__ import annotations

import torch

from ._checks import FLOAT_DTYPE, MATRIX, SEED, SIZE, check_floating_tensor, check_tensor, checked

__all__ = ["embedding_matrix", "project", "embedding_lookup", "parameter_count"]


@checked(vocab_size=SIZE, d_model=SIZE, seed=SEED, dtype=FLOAT_DTYPE, fits=("vocab_size", "d_model"))
def embedding_matrix(*, vocab_size: int, d_model: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A seeded W_E of shape `(vocab_size, d_model)`, drawn from N(0, 1) like nn.Embedding."""
    # A private generator: the notebook's other random draws do not shift these numbers.
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(vocab_size, d_model, generator=generator, dtype=dtype)


def project(one_hot_rows: torch.Tensor, W_E: torch.Tensor) -> torch.Tensor:
    """`X = one_hot_rows @ W_E`: shape `(max_sequence_length, d_model)`.

    Two dtypes are computed in the wider one (float32 @ float64 gives float64).
    """
    check_floating_tensor("one_hot_rows", one_hot_rows, ndim=(2, 3))
    if one_hot_rows.shape[-1] != MATRIX("W_E", W_E).shape[0]:
        raise ValueError(f"one_hot_rows has {one_hot_rows.shape[-1]} columns, W_E {W_E.shape[0]} rows: both must be vocab_size")
    dtype = torch.promote_types(one_hot_rows.dtype, W_E.dtype)
    return one_hot_rows.to(dtype) @ W_E.to(dtype)


def embedding_lookup(ids: torch.Tensor, W_E: torch.Tensor) -> torch.Tensor:
    """Row `id` of W_E for every id: equal to `project(one_hot(ids), W_E)`."""
    check_tensor("ids", ids, ndim=(1, 2), kind="integer")
    vocab_size = MATRIX("W_E", W_E).shape[0]
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got values from {int(ids.min())} to {int(ids.max())}")
    return W_E[ids]


@checked(vocab_size=SIZE, d_model=SIZE)
def parameter_count(*, vocab_size: int, d_model: int) -> int:
    """Learnable numbers in W_E: one d_model-wide row per vocabulary entry."""
    return vocab_size * d_model
