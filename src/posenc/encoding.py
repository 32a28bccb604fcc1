"""The sinusoidal positional encoding of "Attention Is All You Need".

    PE(pos, 2i)     = sin(pos / base^(2i / d_model))
    PE(pos, 2i + 1) = cos(pos / base^(2i / d_model))        base = 10000

Written with the column index itself (call it j), the same formula reads

    PE(pos, j) = sin(pos / base^(j / d_model))          j even
    PE(pos, j) = cos(pos / base^((j - 1) / d_model))    j odd

so an even column and the odd column after it share one denominator.

This module has three layers:

1. The steps exactly as the notebooks teach them (`even_indices`, `even_denominator`,
   `even_pe`, `interleave`, ...), in float32 like the source material, and
   `stepwise_encoding`, which chains them.
2. `sinusoidal_encoding`, the builder the rest of the package uses: the same numbers,
   computed so that no float32 angle is ever formed (see its docstring).
3. `PositionalEncoding`, the `nn.Module` that adds the table to its input.

Every function takes its sizes as keyword arguments: the source material passes
`(d_model, max_sequence_length)` in some places and the reverse in others, and a
keyword cannot be swapped silently.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from ._validate import check_base, check_device, check_float_dtype, check_floating_tensor, check_rows_to_add, check_size, check_table_fits

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
    "sinusoidal_encoding",
    "to_concatenated",
    "wavelengths",
    "PositionalEncoding",
]

DEFAULT_BASE = 10000.0


# 1. The steps, as the notebooks teach them ------------------------------------


def even_indices(*, d_model: int) -> torch.Tensor:
    """The even column indices 0, 2, 4, ... below d_model (the sine columns)."""
    d_model = check_size("d_model", d_model)
    check_table_fits(((d_model + 1) // 2,), torch.float32, name="column index list", arguments="d_model")
    return torch.arange(0, d_model, 2, dtype=torch.float32)


def odd_indices(*, d_model: int) -> torch.Tensor:
    """The odd column indices 1, 3, 5, ... below d_model (the cosine columns)."""
    d_model = check_size("d_model", d_model)
    check_table_fits((d_model // 2,), torch.float32, name="column index list", arguments="d_model")
    return torch.arange(1, d_model, 2, dtype=torch.float32)


def even_denominator(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """`base^(j / d_model)` for every even column j: one value per sine column."""
    base = check_base(base)
    return torch.pow(base, even_indices(d_model=d_model) / check_size("d_model", d_model))


def odd_denominator(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """`base^((j - 1) / d_model)` for every odd column j: one value per cosine column.

    `j - 1` is the even column just before j, so these are the first
    `d_model // 2` values of `even_denominator`, the same numbers.
    """
    base = check_base(base)
    return torch.pow(base, (odd_indices(d_model=d_model) - 1) / check_size("d_model", d_model))


def positions(*, max_sequence_length: int) -> torch.Tensor:
    """The positions 0 .. max_sequence_length - 1 as a float32 column, shape (L, 1).

    float32 on purpose: a float64 column divided by a float32 denominator would
    silently turn the whole table into float64 (a mistake in the source material).
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length)
    check_table_fits((max_sequence_length, 1), torch.float32, name="position column", arguments="max_sequence_length")
    return torch.arange(max_sequence_length, dtype=torch.float32).reshape(max_sequence_length, 1)


def even_pe(*, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The sine columns: shape `(max_sequence_length, ceil(d_model / 2))`."""
    _check_half_fits(max_sequence_length, d_model, sines=True)
    return torch.sin(positions(max_sequence_length=max_sequence_length) / even_denominator(d_model=d_model, base=base))


def odd_pe(*, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The cosine columns: shape `(max_sequence_length, d_model // 2)`."""
    _check_half_fits(max_sequence_length, d_model, sines=False)
    return torch.cos(positions(max_sequence_length=max_sequence_length) / odd_denominator(d_model=d_model, base=base))


def _check_half_fits(max_sequence_length: object, d_model: object, *, sines: bool) -> None:
    length = check_size("max_sequence_length", max_sequence_length)
    d_model = check_size("d_model", d_model)
    columns = (d_model + 1) // 2 if sines else d_model // 2
    check_table_fits((length, columns), torch.float32, name="sine half" if sines else "cosine half")


def interleave(even_PE: torch.Tensor, odd_PE: torch.Tensor) -> torch.Tensor:
    """Put the sine and cosine columns side by side: sin, cos, sin, cos, ...

    `torch.stack([even_PE, odd_PE], dim=2)` pairs column k of each, shape (L, n, 2);
    `flatten(start_dim=1, end_dim=2)` reads each pair in turn, shape (L, 2n).
    For odd d_model the last sine column has no cosine partner: it is paired with
    a placeholder column that is cut off again, so the result has exactly
    d_model columns (not d_model + 1, as the plain stack/flatten would give).
    """
    check_floating_tensor("even_PE", even_PE, ndim=(2,))
    check_floating_tensor("odd_PE", odd_PE, ndim=(2,))
    rows, n_even = even_PE.shape
    if odd_PE.shape[0] != rows or odd_PE.shape[1] not in (n_even, n_even - 1):
        raise ValueError(
            f"odd_PE must have shape ({rows}, {n_even}) or ({rows}, {n_even - 1}) to pair with even_PE of shape "
            f"{tuple(even_PE.shape)}, got {tuple(odd_PE.shape)}"
        )
    if odd_PE.dtype != even_PE.dtype:
        raise TypeError(f"even_PE and odd_PE must have one dtype, got {even_PE.dtype} and {odd_PE.dtype}")
    d_model = n_even + odd_PE.shape[1]
    if odd_PE.shape[1] < n_even:
        odd_PE = torch.cat([odd_PE, torch.zeros_like(even_PE[:, :1])], dim=1)
    stacked = torch.stack([even_PE, odd_PE], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)[:, :d_model]


def stepwise_encoding(*, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The whole table built from the teaching steps: float32, `(max_sequence_length, d_model)`."""
    length, d_model = check_size("max_sequence_length", max_sequence_length), check_size("d_model", d_model)
    # The two halves and the interleaved copy are alive together: about twice the table.
    check_table_fits((2, length, d_model + 1), torch.float32, name="table and its halves")
    even_PE = even_pe(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
    odd_PE = odd_pe(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
    return interleave(even_PE, odd_PE)


# 2. The builder ----------------------------------------------------------------

# Below this many entries the table is computed directly (one float64 angle per
# entry); above it, by rotating a small table of offsets, which needs no angle table.
_DIRECT_LIMIT = 1 << 16
# Up to this many entries, a rounding overshoot past +-1 is cheaper to clamp in the
# finished table (it is in cache) than to prevent in the factors; above, the reverse.
_CLAMP_LIMIT = 1 << 21


@functools.lru_cache(maxsize=64)
def _frequencies(d_model: int, base: float) -> torch.Tensor:
    """1 / base^(2k / d_model) for each (sin, cos) pair k, in float64.

    Cached: small tables are rebuilt often (widgets, tests) and this is a third of
    their cost. Callers only read the result.
    """
    pair = torch.arange((d_model + 1) // 2, dtype=torch.float64)
    return torch.pow(base, -2.0 * pair / d_model)


def _pairs_to_columns(sin_part: torch.Tensor, cos_part: torch.Tensor, d_model: int) -> torch.Tensor:
    """Interleave two (..., n) tensors into (..., d_model) columns sin, cos, sin, ..."""
    return torch.stack([sin_part, cos_part], dim=-1).flatten(-2)[..., :d_model]


def sinusoidal_encoding(
    *,
    max_sequence_length: int,
    d_model: int,
    base: float = DEFAULT_BASE,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The positional-encoding table, shape `(max_sequence_length, d_model)`.

    Same formula as `stepwise_encoding`, built to stay exact for long tables. In
    float32 the angle `pos / base^(2i/d_model)` is itself rounded (by about
    `pos * 2^-24`), so the usual implementations drift as positions grow: about
    1e-2 at position 100000. Here every position is split as `pos = a * B + b`
    with `B ~ sqrt(max_sequence_length)`, and the angle-addition identities

        sin(w(aB + b)) = sin(wb) cos(waB) + cos(wb) sin(waB)
        cos(w(aB + b)) = cos(wb) cos(waB) - sin(wb) sin(waB)

    build row `aB + b` from two small tables computed in float64, one of the B
    offsets `b` and one of the block starts `aB`. No angle larger than about
    `sqrt(max_sequence_length)` is ever rounded to float32, so the error stays at
    float32's own rounding (below 2e-7) at every position. The two identities are
    exactly a complex multiplication, `(sin + i cos)(wb) * (cos - i sin)(waB)`, so
    for even d_model the whole table is one broadcast complex multiply written
    straight into the output: each entry is written once, and the only memory
    beyond the output is the two small tables.
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length)
    d_model = check_size("d_model", d_model)
    base = check_base(base)
    dtype = check_float_dtype(dtype)
    device = check_device(device)
    check_table_fits((max_sequence_length, d_model), dtype, name="positional-encoding table")

    frequencies = _frequencies(d_model, base)
    if max_sequence_length * d_model <= _DIRECT_LIMIT:
        angles = torch.outer(torch.arange(max_sequence_length, dtype=torch.float64), frequencies)
        table = torch.empty(max_sequence_length, d_model, dtype=dtype)
        torch.sin(angles, out=table[:, 0::2])
        torch.cos(angles[:, : d_model // 2], out=table[:, 1::2])
    else:
        # float16 and bfloat16 are built in float32 and rounded once at the end.
        work_dtype = torch.float64 if dtype == torch.float64 else torch.float32
        table = _rotated_table(max_sequence_length, d_model, frequencies, work_dtype).to(dtype)
    return table if device is None else table.to(device)


def _rotated_table(length: int, d_model: int, frequencies: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    block = max(1, math.isqrt(length))
    blocks = length // block  # full blocks; the rows after them are done last
    full = blocks * block
    table = torch.empty(length, d_model, dtype=dtype)
    # The two small tables of angles: the offsets b * w and the block starts a * B * w.
    frequencies = frequencies.numpy()
    offsets = np.outer(np.arange(block, dtype=np.float64), frequencies)
    starts = np.outer(np.arange(blocks + 1, dtype=np.float64), frequencies * block)

    if d_model % 2 == 0:
        clamp = dtype == torch.float64 or length * d_model <= _CLAMP_LIMIT
        fine, turn = _rotation_factors(offsets, starts, dtype, inside_circle=not clamp)
        del offsets, starts  # only the two factors stay alive while the table is written
        # Each row's (sin, cos) pairs, seen as complex numbers: real = sin, imag = cos.
        pairs = torch.view_as_complex(table.view(length, d_model // 2, 2))
        torch.mul(fine[None], turn[:blocks, None], out=pairs[:full].view(blocks, block, d_model // 2))
        if full < length:
            torch.mul(fine[: length - full], turn[blocks], out=pairs[full:])
        if clamp:
            table.clamp_(-1.0, 1.0)  # rounding can give 1.0000001 (float32) or 1 + 2e-16 (float64)
        return table

    # Odd d_model: rows are not whole (sin, cos) pairs, so no complex view; the
    # same identities as a multiply and a multiply-add per block of rows.
    (cos_b, sin_b), (cos_a, sin_a) = (tuple(map(torch.from_numpy, _cos_sin(x))) for x in (offsets, starts))
    fine = _pairs_to_columns(sin_b, cos_b, d_model).to(dtype)
    turned = _pairs_to_columns(cos_b, -sin_b, d_model).to(dtype)
    cos_cols = _pairs_to_columns(cos_a, cos_a, d_model).to(dtype)
    sin_cols = _pairs_to_columns(sin_a, sin_a, d_model).to(dtype)
    for a, start in enumerate(range(0, length, block)):
        rows = table[start : start + block]
        torch.mul(fine[: len(rows)], cos_cols[a], out=rows)
        rows.addcmul_(turned[: len(rows)], sin_cols[a]).clamp_(-1.0, 1.0)  # rounding can give 1.0000001
    return table


def _rotation_factors(offsets: np.ndarray, starts: np.ndarray, dtype: torch.dtype, *,
                      inside_circle: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """sin + i cos of the offset angles and cos - i sin of the block-start angles, as complex tensors.

    Rounded to float32, a point of the unit circle can land a hair outside it, and
    a product of two such points a hair beyond +-1 (1.0000001). With
    inside_circle=True each such point is moved in by one unit in the last place
    of the coordinate that rounding pushed outward; with both factors inside the
    circle, every product stays within [-1, 1] after float32 rounding. (The check
    is numpy, not torch: these tables are small, and numpy's per-call cost is a
    fraction of torch's.)
    """
    if dtype == torch.float64:
        (cos_b, sin_b), (cos_a, sin_a) = _cos_sin(offsets), _cos_sin(starts)
        return torch.from_numpy(sin_b + 1j * cos_b), torch.from_numpy(cos_a - 1j * sin_a)
    factors = []
    for angles, rotate in ((offsets, False), (starts, True)):
        result = np.empty(angles.shape, dtype=np.complex64)
        # A few rows at a time: the float64 scratch stays small.
        for start in range(0, len(angles), 128):
            rows = slice(start, start + 128)
            cos, sin = _cos_sin(angles[rows])
            cos32, sin32 = _inside_unit_circle(cos, sin) if inside_circle else (cos, sin)
            if rotate:
                result.real[rows], result.imag[rows] = cos32, -sin32
            else:
                result.real[rows], result.imag[rows] = sin32, cos32
        factors.append(torch.from_numpy(result))
    return factors[0], factors[1]


def _cos_sin(angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # torch's float64 sin and cos are vectorised; numpy's are several times slower.
    angles = torch.from_numpy(angles)
    return torch.cos(angles).numpy(), torch.sin(angles).numpy()


def _inside_unit_circle(cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 (cos, sin) with cos^2 + sin^2 <= 1, each within one unit in the last place of the exact value."""
    cos32, sin32 = cos.astype(np.float32), sin.astype(np.float32)
    for _ in range(4):  # one pass almost always suffices
        outside = np.square(cos32, dtype=np.float64) + np.square(sin32, dtype=np.float64) > 1.0
        if not outside.any():
            break
        # Shorten the coordinate that rounding moved outward the most. For a float32
        # x != 0, one unit in the last place towards zero is its bit pattern minus 1.
        cos_moved_out = np.abs(cos32) - np.abs(cos) >= np.abs(sin32) - np.abs(sin)
        cos32.view(np.int32)[...] -= outside & cos_moved_out
        sin32.view(np.int32)[...] -= outside & ~cos_moved_out
    return cos32, sin32


def to_concatenated(table: torch.Tensor) -> torch.Tensor:
    """Reorder interleaved columns (sin, cos, sin, cos, ...) into [all sines, all cosines].

    Some implementations use this layout; it holds the same numbers, in a
    different column order, and a model cannot tell the two apart.
    """
    check_floating_tensor("table", table, ndim=(2,))
    return torch.cat([table[:, 0::2], table[:, 1::2]], dim=1)


def wavelengths(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The wavelength of every column, in positions: `2 pi base^(2i / d_model)`.

    A geometric progression from 2 pi (columns 0 and 1) up to
    `2 pi base^((d_model - 2) / d_model)` for even d_model (2916 for d_model = 6),
    which approaches but never reaches `2 pi base`.
    """
    d_model = check_size("d_model", d_model)
    base = check_base(base)
    check_table_fits((2, d_model), torch.float64, name="wavelength list", arguments="d_model")
    per_pair = 2 * math.pi / _frequencies(d_model, base)
    return _pairs_to_columns(per_pair, per_pair, d_model)


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

    def __init__(self, *, d_model: int, max_sequence_length: int, base: float = DEFAULT_BASE, dropout: float = 0.0) -> None:
        super().__init__()
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
            raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
        self.dropout = float(dropout)
        self.d_model = check_size("d_model", d_model)
        self.max_sequence_length = check_size("max_sequence_length", max_sequence_length)
        self.base = check_base(base)
        table = sinusoidal_encoding(max_sequence_length=self.max_sequence_length, d_model=self.d_model, base=self.base)
        self.register_buffer("table", table, persistent=False)

    def forward(self, x: torch.Tensor, *, offset: int = 0) -> torch.Tensor:
        """`x + PE[offset : offset + seq]` for x of shape (seq, d_model) or (batch, seq, d_model).

        `offset` is the position of x's first row, e.g. when tokens arrive one at
        a time during generation. The result has x's dtype.
        """
        offset, length = check_rows_to_add(x, d_model=self.d_model, offset=offset)
        if offset + length > self.max_sequence_length:
            raise ValueError(
                f"positions {offset} to {offset + length - 1} are beyond the table's max_sequence_length="
                f"{self.max_sequence_length} (x has {length} positions, offset={offset}); "
                "build the module with a larger max_sequence_length"
            )
        return nn.functional.dropout(x + self.table[offset : offset + length].to(x.dtype), self.dropout, self.training)

    def extra_repr(self) -> str:
        dropout = f", dropout={self.dropout:g}" if self.dropout else ""
        return f"d_model={self.d_model}, max_sequence_length={self.max_sequence_length}, base={self.base:g}{dropout}"
