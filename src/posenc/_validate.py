"""Argument checks shared by every module.

Each check raises TypeError (wrong kind of value) or ValueError (right kind, wrong
value) with a message that names the argument, shows the value and says what is
allowed. They are plain `if`s, not `assert`s, so `python -O` cannot remove them.
"""

from __future__ import annotations

import numbers
import os

import torch


def check_size(name: str, value: object, *, minimum: int = 1) -> int:
    """Return `value` as an int if it is a whole number >= minimum (bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}, got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_base(value: object) -> float:
    """The base of the geometric progression of wavelengths: a real number > 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"base must be a real number > 1, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not value > 1.0 or value == float("inf"):
        # base <= 1 makes every wavelength equal (1) or shrink instead of grow.
        raise ValueError(f"base must be a finite number > 1, got {value!r}")
    return value


def check_float_dtype(value: object, name: str = "dtype") -> torch.dtype:
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype such as torch.float32, got {value!r}")
    if not value.is_floating_point:
        raise ValueError(f"{name} must be a floating-point dtype (float16, bfloat16, float32, float64), got {value}")
    return value


def check_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if ndim is not None and value.dim() not in ndim:
        allowed = " or ".join(f"{n}-D" for n in ndim)
        raise ValueError(f"{name} must be {allowed}, got shape {tuple(value.shape)}")
    return value


def check_floating_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    value = check_tensor(name, value, ndim=ndim)
    if not value.is_floating_point():
        raise TypeError(f"{name} must hold floating-point numbers, got dtype {value.dtype}")
    return value


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return 64 * 2**30


def check_table_fits(shape: tuple[int, ...], dtype: torch.dtype, *, name: str = "table") -> int:
    """Refuse, before allocating, a tensor larger than this machine's memory."""
    count = 1
    for n in shape:
        count *= n
    size = count * dtype.itemsize
    available = _memory_bytes()
    if size > available:
        raise ValueError(
            f"a {name} of shape {shape} in {dtype} needs {size} bytes ({size / 2**30:.1f} GiB), "
            f"more than this machine's {available} bytes of memory; use a smaller max_sequence_length or d_model"
        )
    return size
