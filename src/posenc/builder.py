"""The builder the package uses: the sinusoidal table without a single float32 angle.

`encoding` teaches the table step by step, in float32 as the usual implementations do.
In float32 the angle `pos / base^(2i / d_model)` is itself rounded (by about
`pos * 2^-24`), so that way drifts as positions grow. `sinusoidal_encoding` here
computes the same numbers within 2e-7 of the exact value at every position, by the
angle-addition identities (see its docstring); `frequencies` is the one place the
angle per position of each column is computed.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ._checks import BASE, FLOAT_DTYPE, SIZE, checked
from ._provenance import marked

__all__ = ["DEFAULT_BASE", "frequencies", "sinusoidal_encoding"]

DEFAULT_BASE = 10000.0

# Below this many entries the table is computed directly (one float64 angle per
# entry); above it, by rotating a small table of offsets, which needs no angle table.
_DIRECT_LIMIT = 1 << 16
# Up to this many entries, a rounding overshoot past +-1 is cheaper to clamp in the
# finished table (it is in cache) than to prevent in the factors; above, the reverse.
_CLAMP_LIMIT = 1 << 21


@checked(d_model=SIZE, base=BASE)
def frequencies(*, d_model: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """`1 / base^(2i / d_model)` for each (sin, cos) pair i, in float64: the angle per position of columns 2i and 2i + 1.

    Column j turns by `frequencies[j // 2]` radians per position, so its wavelength is
    `2 pi / frequencies[j // 2]` positions. The one place these numbers are computed:
    the builder, the wavelengths, the figures and the explorers all read them here.
    Callers only read the result (it is cached).
    """
    return _frequencies(d_model, base).clone()


@functools.lru_cache(maxsize=64)
def _frequencies(d_model: int, base: float) -> torch.Tensor:
    # Cached: small tables are rebuilt often (explorers, tests) and this is a third of their cost.
    pair = torch.arange((d_model + 1) // 2, dtype=torch.float64)
    return torch.pow(base, -2.0 * pair / d_model)


def _pairs_to_columns(sin_part: torch.Tensor, cos_part: torch.Tensor, d_model: int) -> torch.Tensor:
    """Interleave two (..., n) tensors into (..., d_model) columns sin, cos, sin, ..."""
    return torch.stack([sin_part, cos_part], dim=-1).flatten(-2)[..., :d_model]


@marked("builder.sinusoidal_encoding")  # so a checker can tell the package's table from one built by hand
@checked(max_sequence_length=SIZE, d_model=SIZE, base=BASE, dtype=FLOAT_DTYPE, fits=("max_sequence_length", "d_model"))
def sinusoidal_encoding(
    *,
    max_sequence_length: int,
    d_model: int,
    base: float = DEFAULT_BASE,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The positional-encoding table, shape `(max_sequence_length, d_model)`.

    Same formula as `stepwise_encoding`, built to stay within 2e-7 of the exact value for long tables. In
    float32 the angle `pos / base^(2i/d_model)` is itself rounded (by about
    `pos * 2^-24`), so the usual implementations drift as positions grow: about
    1e-2 at position 100000. Here every position is split as `pos = a * B + b`
    with `B ~ sqrt(max_sequence_length)`, and the angle-addition identities

        sin(w(aB + b)) = sin(wb) cos(waB) + cos(wb) sin(waB)
        cos(w(aB + b)) = cos(wb) cos(waB) - sin(wb) sin(waB)

    build row `aB + b` from two small tables computed in float64, one of the B
    offsets `b` and one of the block starts `aB`. No angle larger than about
    `sqrt(max_sequence_length)` is ever rounded to float32, so the error stays
    below 2e-7 (a few float32 rounding steps) at every position. The two identities are
    exactly a complex multiplication, `(sin + i cos)(wb) * (cos - i sin)(waB)`, so
    for even d_model the whole table is one broadcast complex multiply written
    straight into the output: each entry is written once, and the only memory
    beyond the output is the two small tables.
    """
    angle_per_position = _frequencies(d_model, base)
    if max_sequence_length * d_model <= _DIRECT_LIMIT:
        angles = torch.outer(torch.arange(max_sequence_length, dtype=torch.float64), angle_per_position)
        table = torch.empty(max_sequence_length, d_model, dtype=dtype)
        torch.sin(angles, out=table[:, 0::2])
        torch.cos(angles[:, : d_model // 2], out=table[:, 1::2])
    else:
        # float16 and bfloat16 are built in float32 and rounded once at the end.
        work_dtype = torch.float64 if dtype == torch.float64 else torch.float32
        table = _rotated_table(max_sequence_length, d_model, angle_per_position, work_dtype).to(dtype)
    return table  # on the CPU: `.to(device)` moves it, as `PositionalEncoding(...).to(device)` moves its buffer


def _rotated_table(length: int, d_model: int, angle_per_position: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    block = max(1, math.isqrt(length))
    blocks = length // block  # full blocks; the rows after them are done last
    full = blocks * block
    table = torch.empty(length, d_model, dtype=dtype)
    # The two small tables of angles: the offsets b * w and the block starts a * B * w.
    angle_per_position = angle_per_position.numpy()
    offsets = np.outer(np.arange(block, dtype=np.float64), angle_per_position)
    starts = np.outer(np.arange(blocks + 1, dtype=np.float64), angle_per_position * block)

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
