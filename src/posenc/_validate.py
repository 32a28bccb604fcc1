"""Argument checks shared by every module.

Each check raises TypeError (wrong kind of value) or ValueError (right kind, wrong
value) with a message that names the argument, shows the value and says what is
allowed. They are plain `if`s, not `assert`s, so `python -O` cannot remove them.

Sizes are checked against this machine's memory before anything is allocated: a
size itself is capped at the length of the longest float64 vector this machine can
hold (`check_size`), and a table of several sizes by its bytes (`check_table_fits`),
so a huge size is a ValueError, never the allocator's error.

Two predicates name the kinds of value most checks start from: `is_real` (a real
number, not a bool) and `is_sequence` (a list or tuple, not a str).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence

import torch

__all__ = ["short", "is_real", "is_sequence", "check_size", "check_flag", "check_str", "check_device", "check_base",
           "check_float_dtype", "check_tensor", "check_floating_tensor", "check_finite", "common_dtype",
           "check_table_fits", "check_rows_to_add", "positions_beyond", "check_ids",
           "check_matrix_to_draw", "check_attention_mask"]


def short(value: object) -> str:
    """A value as an error message shows it: tensors by shape and dtype, long reprs cut."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_real(value: object, *, whole: bool = False) -> bool:
    """True for a real number (a whole one with whole=True); False for a bool, which Python counts as an int."""
    return not isinstance(value, bool) and isinstance(value, numbers.Integral if whole else numbers.Real)


def is_sequence(value: object) -> bool:
    """True for a list, a tuple or another sequence of items; False for a str or bytes, a sequence of characters."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def check_size(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return `value` as an int if it is a whole number in [minimum, maximum] (bool is refused).

    Without a `maximum`, a size is capped at the longest float64 vector this machine's
    memory holds: a list of `value` indices or numbers then needs no check of its own.
    """
    allowed = f"an int >= {minimum}" if maximum is None else f"an int from {minimum} to {maximum}"
    if not is_real(value, whole=True):
        raise TypeError(f"{name} must be {allowed}, got {short(value)} of type {type(value).__name__}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if maximum is None and value * ENTRY_BYTES > _memory_bytes():
        raise ValueError(f"{name}={value!r} is too large: a list that long, at {ENTRY_BYTES} bytes an entry, needs "
                         f"{value * ENTRY_BYTES} bytes, more than this machine's {_memory_bytes()} bytes of memory")
    return int(value)


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {short(value)} of type {type(value).__name__}")
    return value


def check_str(name: str, value: object, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        allowed = "a str or None" if optional else "a str"
        raise TypeError(f"{name} must be {allowed}, got {short(value)} of type {type(value).__name__}")
    return value


def check_device(value: object) -> torch.device | None:
    """None, or a device this machine has ("cpu", or "cuda:0" where there is a GPU)."""
    if value is None:
        return None
    if not isinstance(value, (str, torch.device)):
        raise TypeError(f"device must be None, a str such as 'cpu', or a torch.device, got {short(value)}")
    try:
        device = torch.device(value)
        torch.empty(0, device=device)
    except (RuntimeError, ValueError, AssertionError) as error:  # AssertionError: torch's "not compiled with CUDA"
        raise ValueError(f"device must be one this machine has, such as 'cpu'; {value!r} is not ({error})") from None
    return device


def check_base(value: object) -> float:
    """The base of the geometric progression of wavelengths: a real number > 1."""
    if not is_real(value):
        raise TypeError(f"base must be a real number > 1, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not value > 1.0 or value == float("inf"):
        # base <= 1 makes every wavelength equal (1) or shrink instead of grow.
        raise ValueError(f"base must be a finite number > 1, got {value!r}")
    return value




def check_float_dtype(name: str, value: object) -> torch.dtype:
    """`value` if it is a floating-point torch.dtype."""
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype such as torch.float32, got {value!r}")
    if not value.is_floating_point:
        raise ValueError(f"{name} must be a floating-point dtype (float16, bfloat16, float32, float64), got {value}")
    return value


def check_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.is_meta:
        raise ValueError(f"{name} is a tensor on the 'meta' device, which holds no numbers; pass one on 'cpu'")
    if ndim is not None and value.dim() not in ndim:
        allowed = " or ".join(f"{n}-D" for n in ndim)
        raise ValueError(f"{name} must be {allowed}, got shape {tuple(value.shape)}")
    return value


def check_floating_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    value = check_tensor(name, value, ndim=ndim)
    if not value.is_floating_point():
        raise TypeError(f"{name} must hold floating-point numbers, got dtype {value.dtype}")
    return value


def check_finite(name: str, value: torch.Tensor) -> torch.Tensor:
    """For pictures: a NaN or inf has no colour and no place on an axis."""
    if value.numel() and not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name} must hold finite numbers to be drawn, got NaN or inf in {short(value)}")
    return value


def common_dtype(**tensors: torch.Tensor) -> torch.dtype:
    """The dtype two or more floating tensors are computed in: the widest of theirs (torch's promotion)."""
    dtype = None
    for tensor in tensors.values():
        dtype = tensor.dtype if dtype is None else torch.promote_types(dtype, tensor.dtype)
    return dtype


# The widest entry a list of `size` numbers has in this package: float64.
ENTRY_BYTES = 8


def _memory_bytes() -> int:
    """This machine's memory: the largest table a size check lets through (tests lower it)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return 64 * 2**30


def check_table_fits(shape: tuple[int, ...], dtype: torch.dtype | int, *, name: str = "table",
                     arguments: str = "max_sequence_length or d_model") -> int:
    """Refuse, before allocating, a tensor larger than this machine's memory.

    `dtype` is the tensor's dtype, or the bytes per entry of a non-tensor (a list);
    `arguments` names the sizes the caller can lower.
    """
    if any(n >= 2**62 for n in shape):  # even an empty tensor cannot have a side this long
        raise ValueError(f"a {name} of shape {shape} has a side longer than a tensor can have; use a smaller {arguments}")
    count = 1
    for n in shape:
        count *= n
    each = dtype.itemsize if isinstance(dtype, torch.dtype) else int(dtype)
    size = count * each
    available = _memory_bytes()
    if size > available:
        raise ValueError(
            f"a {name} of shape {shape} at {each} bytes an entry needs {size} bytes ({size / 2**30:.1f} GiB), "
            f"more than this machine's {available} bytes of memory; use a smaller {arguments}"
        )
    return size


def check_rows_to_add(x: object, *, d_model: int, offset: object) -> tuple[int, int]:
    """For a module that adds one row per position to x: x checked ((seq, d_model) or (batch, seq, d_model),
    floating point) and `offset` checked; returns (offset, number of positions in x)."""
    check_floating_tensor("x", x, ndim=(2, 3))
    if x.shape[-1] != d_model:
        raise ValueError(f"x must have d_model={d_model} features in its last dimension, got shape {tuple(x.shape)}")
    return check_size("offset", offset, minimum=0), x.shape[-2]


def positions_beyond(*, offset: int, length: int, max_sequence_length: int) -> str:
    """The positions of rows `offset .. offset + length - 1` that a table of max_sequence_length rows does not have,
    in words ("position 10", "positions 10 to 11"); "" when it has them all. For the error message of a module
    that adds one table row per position."""
    first, last = max(offset, max_sequence_length), offset + length - 1
    if first > last:
        return ""
    return f"position {first}" if first == last else f"positions {first} to {last}"


def check_ids(name: str, ids: object) -> list[int]:
    """A list of ints >= 0 (indices or token ids given to a function, not a learner's answer)."""
    if not is_sequence(ids) or not all(is_real(i, whole=True) and i >= 0 for i in ids):
        raise TypeError(f"{name} must be a list of ints >= 0, got {short(ids)}")
    return [int(i) for i in ids]


def check_matrix_to_draw(name: str, value: object) -> torch.Tensor:
    """A non-empty, finite, floating 2-D tensor to draw, detached and as float32."""
    check_floating_tensor(name, value, ndim=(2,))
    if not value.numel():
        raise ValueError(f"{name} must have at least one row and one column to be drawn, got shape {tuple(value.shape)}")
    return check_finite(name, value.detach().float())


def check_attention_mask(value: object, *, ndim: tuple[int, ...] = (2,)) -> torch.Tensor:
    """An `attention_mask` as tokenizers return it (bool or integer, 1 for a real token, 0 for padding) as a LongTensor."""
    check_tensor("attention_mask", value, ndim=ndim)
    if value.is_floating_point() or value.is_complex():
        raise TypeError(f"attention_mask must be a bool or integer tensor of 0s and 1s, got dtype {value.dtype}")
    mask = value.long()
    if not bool(((mask == 0) | (mask == 1)).all()):
        others = sorted(set(mask[(mask != 0) & (mask != 1)].tolist()))[:5]
        raise ValueError(f"attention_mask must hold only 0 (padding) and 1 (a real token), got also {others}")
    return mask
