"""The sinusoidal positional encoding of "Attention Is All You Need".

    PE(pos, 2i)     = sin(pos / base^(2i / d_model))
    PE(pos, 2i + 1) = cos(pos / base^(2i / d_model))        base = 10000

Written with the column index itself (call it j), the same formula reads

    PE(pos, j) = sin(pos / base^(j / d_model))          j even
    PE(pos, j) = cos(pos / base^((j - 1) / d_model))    j odd

so an even column and the odd column after it share one denominator.

This module has three layers:

1. The steps exactly as the notebooks teach them (`even_indices`, `even_denominator`,
   `even_pe`, `interleave`, ...), in float32 as the usual implementations compute it, and
   `stepwise_encoding`, which chains them.
2. Two views of the finished table: `to_concatenated` (all sines, then all cosines) and
   `wavelengths`. The table the rest of the package uses is `builder.sinusoidal_encoding`:
   the same numbers, computed so that no float32 angle is ever formed.
3. `PositionalEncoding`, the `nn.Module` that adds the table to its input.

Every function takes its sizes as keyword arguments: code in the wild passes
`(d_model, max_sequence_length)` in some places and the reverse in others, and a
keyword cannot be swapped silently.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import BASE, MATRIX, PROBABILITY, SIZE, check_floating_tensor, check_size, checked
from ._provenance import marked
from .builder import DEFAULT_BASE, frequencies, sinusoidal_encoding

__all__ = [
    "even_indices",
    "odd_indices",
    "even_denominator",
    "odd_denominator",
    "positions",
    "even_pe",
    "odd_pe",
    "interleave",
    "stepwise_encoding",
    "to_concatenated",
    "wavelengths",
    "PositionalEncoding",
]

# 1. The steps, as the notebooks teach them ------------------------------------


@checked(d_model=SIZE)
def even_indices(*, d_model: int) -> torch.Tensor:
    """The even column indices 0, 2, 4, ... below d_model (the sine columns)."""
    return torch.arange(0, d_model, 2, dtype=torch.float32)


@checked(d_model=SIZE)
def odd_indices(*, d_model: int) -> torch.Tensor:
    """The odd column indices 1, 3, 5, ... below d_model (the cosine columns)."""
    return torch.arange(1, d_model, 2, dtype=torch.float32)


@checked(d_model=SIZE, base=BASE)
def even_denominator(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """`base^(j / d_model)` for every even column j: one value per sine column."""
    return torch.pow(base, even_indices(d_model=d_model) / d_model)


@checked(d_model=SIZE, base=BASE)
def odd_denominator(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """`base^((j - 1) / d_model)` for every odd column j: one value per cosine column.

    `j - 1` is the even column just before j, so these are the first
    `d_model // 2` values of `even_denominator`, the same numbers.
    """
    return torch.pow(base, (odd_indices(d_model=d_model) - 1) / d_model)


@checked(max_sequence_length=SIZE)
def positions(*, max_sequence_length: int) -> torch.Tensor:
    """The positions 0 .. max_sequence_length - 1 as a float32 column, shape (L, 1).

    float32 on purpose: a float64 column divided by a float32 denominator would
    silently turn the whole table into float64 (a common mistake, shown in the pitfalls notebook).
    """
    return torch.arange(max_sequence_length, dtype=torch.float32).reshape(max_sequence_length, 1)


@checked(max_sequence_length=SIZE, d_model=SIZE, base=BASE, fits=("max_sequence_length", "d_model"))
def even_pe(*, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The sine columns: shape `(max_sequence_length, ceil(d_model / 2))`."""
    return torch.sin(positions(max_sequence_length=max_sequence_length) / even_denominator(d_model=d_model, base=base))


@checked(max_sequence_length=SIZE, d_model=SIZE, base=BASE, fits=("max_sequence_length", "d_model"))
def odd_pe(*, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The cosine columns: shape `(max_sequence_length, d_model // 2)`."""
    return torch.cos(positions(max_sequence_length=max_sequence_length) / odd_denominator(d_model=d_model, base=base))


@marked("encoding.interleave")  # so a checker can tell the package's table from one built by hand
def interleave(even_PE: torch.Tensor, odd_PE: torch.Tensor) -> torch.Tensor:
    """Put the sine and cosine columns side by side: sin, cos, sin, cos, ...

    `torch.stack([even_PE, odd_PE], dim=2)` pairs column k of each, shape (L, n, 2);
    `flatten(start_dim=1, end_dim=2)` reads each pair in turn, shape (L, 2n).
    For odd d_model the last sine column has no cosine partner: it is paired with
    a placeholder column that is cut off again, so the result has exactly
    d_model columns (not d_model + 1, as the plain stack/flatten would give).
    Two dtypes give the wider one (float32 with float64 gives float64).
    """
    rows, n_even = MATRIX("even_PE", even_PE).shape
    if MATRIX("odd_PE", odd_PE).shape[0] != rows or odd_PE.shape[1] not in (n_even, n_even - 1):
        raise ValueError(f"odd_PE must be ({rows}, {n_even}) or ({rows}, {n_even - 1}) for even_PE, got {tuple(odd_PE.shape)}")
    d_model = even_PE.shape[1] + odd_PE.shape[1]
    if odd_PE.shape[1] < even_PE.shape[1]:
        odd_PE = torch.cat([odd_PE, torch.zeros_like(even_PE[:, :1])], dim=1)
    stacked = torch.stack([even_PE, odd_PE], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)[:, :d_model]


# The two halves and the interleaved copy are alive together: about twice the table.
@checked(max_sequence_length=SIZE, d_model=SIZE, base=BASE, fits=(2, "max_sequence_length", "d_model"))
def stepwise_encoding(*, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The whole table built from the teaching steps: float32, `(max_sequence_length, d_model)`."""
    even_PE = even_pe(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
    odd_PE = odd_pe(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
    return interleave(even_PE, odd_PE)


# 2. Two views of the finished table ------------------------------------------


@checked(table=MATRIX)
def to_concatenated(table: torch.Tensor) -> torch.Tensor:
    """Reorder interleaved columns (sin, cos, sin, cos, ...) into [all sines, all cosines].

    Some implementations use this layout; it holds the same numbers, in a
    different column order, and a model cannot tell the two apart.
    """
    return torch.cat([table[:, 0::2], table[:, 1::2]], dim=1)


def wavelengths(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The wavelength of every column, in positions: `2 pi base^(2i / d_model)`.

    A geometric progression from 2 pi (columns 0 and 1) up to
    `2 pi base^((d_model - 2) / d_model)` for even d_model (2916 for d_model = 6),
    which approaches but never reaches `2 pi base`.
    """
    per_pair = 2 * math.pi / frequencies(d_model=d_model, base=base)
    return per_pair.repeat_interleave(2)[:d_model]  # columns 2i and 2i + 1 share pair i's wavelength


# 3. The module -----------------------------------------------------------------


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to its input.

    The table is computed once and kept as a non-persistent buffer: it follows
    `.to(device)` and `.to(dtype)` but is not saved in the state dict, since it is
    a formula, not a learned weight.

    `dropout` is the probability with which each entry of `x + PE` is zeroed while the
    module is in training mode (the paper applies dropout to these sums, rate 0.1
    for its base model: "Attention Is All You Need", section 5.4). In evaluation
    mode (`.eval()`) nothing is dropped. The default, 0, leaves `x + PE` as it is.

    >>> pe = PositionalEncoding(d_model=6, max_sequence_length=10)
    >>> pe(torch.zeros(10, 6)).shape
    torch.Size([10, 6])
    """

    table: torch.Tensor

    @checked(d_model=SIZE, max_sequence_length=SIZE, base=BASE, dropout=PROBABILITY)
    def __init__(self, *, d_model: int, max_sequence_length: int, base: float = DEFAULT_BASE, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_model, self.max_sequence_length, self.base, self.dropout = d_model, max_sequence_length, base, dropout
        table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
        self.register_buffer("table", table, persistent=False)

    def forward(self, x: torch.Tensor, *, offset: int = 0) -> torch.Tensor:
        """`x + PE[offset : offset + seq]` for x of shape (seq, d_model) or (batch, seq, d_model).

        `offset` is the position of x's first row, e.g. when tokens arrive one at
        a time during generation. The result has x's dtype.
        """
        offset, length = rows_to_add(x, d_model=self.d_model, offset=offset)
        rows = self.max_sequence_length
        if offset + length > rows:
            raise ValueError(f"x reaches {positions_beyond(offset, length, rows)}, beyond the table's rows 0 to {rows - 1} "
                             f"(max_sequence_length={rows}; x has {length} positions, offset={offset}): use a larger one")
        return nn.functional.dropout(x + self.table[offset : offset + length].to(x.dtype), self.dropout, self.training)

    def extra_repr(self) -> str:
        dropout = f", dropout={self.dropout:g}" if self.dropout else ""
        return f"d_model={self.d_model}, max_sequence_length={self.max_sequence_length}, base={self.base:g}{dropout}"


def rows_to_add(x: object, *, d_model: int, offset: object) -> tuple[int, int]:
    """For a module that adds one table row per position to x, (seq, d_model) or (batch, seq, d_model) floats:
    (offset, number of positions in x)."""
    if check_floating_tensor("x", x, ndim=(2, 3)).shape[-1] != d_model:
        raise ValueError(f"x must have d_model={d_model} features in its last dimension, got shape {tuple(x.shape)}")
    return check_size("offset", offset, minimum=0), x.shape[-2]


def positions_beyond(offset: int, length: int, max_sequence_length: int) -> str:
    """The positions `offset .. offset + length - 1` a table of max_sequence_length rows lacks, in words."""
    first, last = max(offset, max_sequence_length), offset + length - 1
    return f"position {first}" if first == last else f"positions {first} to {last}"
