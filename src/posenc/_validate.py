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

A function that teaches a formula declares its checks in one line, `@checked(d_model=SIZE, base=BASE)`, so that its
body is the formula alone; the rules (SIZE, BASE, ...) are at the end of this module.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import numbers
import os
from collections.abc import Callable, Iterable, Sequence

import torch

__all__ = ["short", "is_real", "is_sequence", "check_size", "check_flag", "check_str", "check_device", "check_base",
           "check_float_dtype", "check_tensor", "check_floating_tensor", "check_finite", "common_dtype",
           "check_table_fits", "check_rows_to_add", "positions_beyond", "check_ids", "check_matrix_to_draw",
           "check_attention_mask", "check_halves", "check_projection", "check_lookup", "check_str_list",
           "check_vocabulary", "check_length", "check_id_list", "check_rope_rule",
           # @checked and its rules
           "checked", "SIZE", "SEED", "FLAG", "STR", "FLOAT_DTYPE", "MATRIX", "BASE", "DEVICE", "DTYPE", "PROBABILITY",
           "POSITIVE", "ROPE_HEAD_DIM", "str_list", "one_of", "optional_size", "instance_of", "stretch_factor"]


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


def check_device(value: object, name: str = "device") -> torch.device | None:
    """None, or a device this machine has ("cpu", or "cuda:0" where there is a GPU)."""
    if value is None:
        return None
    if not isinstance(value, (str, torch.device)):
        raise TypeError(f"{name} must be None, a str such as 'cpu', or a torch.device, got {short(value)}")
    try:
        device = torch.device(value)
        torch.empty(0, device=device)
    except (RuntimeError, ValueError, AssertionError) as error:  # AssertionError: torch's "not compiled with CUDA"
        raise ValueError(f"{name} must be one this machine has, such as 'cpu'; {value!r} is not ({error})") from None
    return device


def check_base(value: object, name: str = "base") -> float:
    """The base of the geometric progression of wavelengths: a real number > 1."""
    if not is_real(value):
        raise TypeError(f"{name} must be a real number > 1, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not value > 1.0 or value == float("inf"):
        # base <= 1 makes every wavelength equal (1) or shrink instead of grow.
        raise ValueError(f"{name} must be a finite number > 1, got {value!r}")
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


@functools.cache
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


def check_rows_to_add(x: object, *, d_model: int, offset: object,
                      max_sequence_length: int | None = None) -> tuple[int, int]:
    """For a module that adds one row per position to x: x checked ((seq, d_model) or (batch, seq, d_model),
    floating point) and `offset` checked; returns (offset, number of positions in x). With `max_sequence_length`,
    the rows of a table built from a formula, x must also stay within them."""
    check_floating_tensor("x", x, ndim=(2, 3))
    if x.shape[-1] != d_model:
        raise ValueError(f"x must have d_model={d_model} features in its last dimension, got shape {tuple(x.shape)}")
    offset, length = check_size("offset", offset, minimum=0), x.shape[-2]
    if max_sequence_length is None:
        return offset, length
    beyond = positions_beyond(offset=offset, length=length, max_sequence_length=max_sequence_length)
    if beyond:
        raise ValueError(
            f"x reaches {beyond}, beyond the table's rows 0 to {max_sequence_length - 1} "
            f"(max_sequence_length={max_sequence_length}; x has {length} positions, offset={offset}); "
            "build the module with a larger max_sequence_length"
        )
    return offset, length


def positions_beyond(*, offset: int, length: int, max_sequence_length: int) -> str:
    """The positions of rows `offset .. offset + length - 1` that a table of max_sequence_length rows does not have,
    in words ("position 10", "positions 10 to 11"); "" when it has them all. For the error message of a module
    that adds one table row per position."""
    first, last = max(offset, max_sequence_length), offset + length - 1
    if first > last:
        return ""
    return f"position {first}" if first == last else f"positions {first} to {last}"


def check_halves(even_PE: object, odd_PE: object) -> None:
    """The sine and cosine halves of a table, to interleave: 2-D floating tensors of L rows, with as many cosine
    columns as sine columns or one fewer (odd d_model)."""
    check_floating_tensor("even_PE", even_PE, ndim=(2,))
    check_floating_tensor("odd_PE", odd_PE, ndim=(2,))
    rows, n_even = even_PE.shape
    if odd_PE.shape[0] != rows or odd_PE.shape[1] not in (n_even, n_even - 1):
        raise ValueError(
            f"odd_PE must have shape ({rows}, {n_even}) or ({rows}, {n_even - 1}) to pair with even_PE of shape "
            f"{tuple(even_PE.shape)}, got {tuple(odd_PE.shape)}"
        )


def check_projection(one_hot_rows: object, W_E: object) -> None:
    """For `one_hot_rows @ W_E`: floating tensors, as many one-hot columns as W_E has rows (vocab_size)."""
    check_floating_tensor("one_hot_rows", one_hot_rows, ndim=(2, 3))
    check_floating_tensor("W_E", W_E, ndim=(2,))
    if one_hot_rows.shape[-1] != W_E.shape[0]:
        raise ValueError(
            f"one_hot_rows has {one_hot_rows.shape[-1]} columns but W_E has {W_E.shape[0]} rows; "
            "both must equal vocab_size"
        )


def check_lookup(ids: object, W_E: object) -> None:
    """For `W_E[ids]`: an integer tensor of ids, each a row of the floating matrix W_E."""
    check_tensor("ids", ids, ndim=(1, 2))
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"ids must hold integers, got dtype {ids.dtype}")
    check_floating_tensor("W_E", W_E, ndim=(2,))
    vocab_size = W_E.shape[0]
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got values from {int(ids.min())} to {int(ids.max())}")


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


def check_str_list(name: str, value: object, *, if_str: str = "") -> tuple[str, ...]:
    """A list or tuple of str, as a tuple; `if_str` is the hint for a single str passed instead of a list."""
    if isinstance(value, str) and if_str:
        raise TypeError(f"{name} must be a list of str, got a single str {short(value)}; {if_str}")
    if not is_sequence(value):
        raise TypeError(f"{name} must be a list of str, got {short(value)} of type {type(value).__name__}")
    for k, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{name} must be a list of str, but item {k} is {short(item)} of type {type(item).__name__}")
    return tuple(value)


def check_vocabulary(tokens: object, *, special: tuple[str, ...]) -> tuple[str, ...]:
    """A vocabulary's tokens: a list of str, each once, the `special` tokens among them."""
    tokens = check_str_list("tokens", tokens)
    missing = [t for t in special if t not in tokens]
    if missing:
        raise ValueError(f"tokens must contain the special tokens {special}, missing {missing}")
    if len(set(tokens)) != len(tokens):
        repeated = sorted({t for t in tokens if tokens.count(t) > 1})
        raise ValueError(f"tokens must be unique, repeated: {repeated}")
    return tokens


def check_length(tokens: Sequence[str], *, max_sequence_length: int) -> None:
    """A sentence of at most max_sequence_length tokens: a longer one is refused, not cut."""
    if len(tokens) > max_sequence_length:
        raise ValueError(
            f"the sentence has {len(tokens)} tokens, more than max_sequence_length={max_sequence_length}; "
            f"shorten it or raise max_sequence_length to at least {len(tokens)}"
        )


def check_id_list(ids: object, *, vocab_size: int) -> list[int]:
    """ids (a list of ints or a 1-D integer tensor) as a list of ints, each checked to lie in [0, vocab_size)."""
    if isinstance(ids, torch.Tensor):
        check_tensor("ids", ids, ndim=(1,))
        if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(f"ids must hold integers, got dtype {ids.dtype}")
        ids = ids.tolist()
    elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be a list of ints or a 1-D integer tensor, got {short(ids)}")
    ids = list(ids)
    for i in ids:
        if not is_real(i, whole=True):
            raise TypeError(f"ids must hold ints, got {short(i)} of type {type(i).__name__} among them")
        if not 0 <= i < vocab_size:
            raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got {i}")
    return [int(i) for i in ids]


# @checked: the checks of a function in one line above it ----------------------------------------


# True while the body of a checked function runs.
_checked_already = contextvars.ContextVar("checked_already", default=False)


def checked(*, fits: tuple[str | int, ...] = (), **rules: Callable[[str, object], object]) -> Callable:
    """Check a function's arguments before its body runs, so that the body is the formula alone.

    Each keyword names a parameter and its rule: a function `rule(name=..., value=...)` that raises a TypeError or
    ValueError naming the parameter and returns the value as the body uses it (a size as an int, a base as a float).
    `fits` is the shape of a table that must fit in this machine's memory before the body runs, each side a size
    parameter's name or an int, at the function's `dtype` (float32 if it has none). A call Python itself refuses
    (a missing or an unexpected argument) gets Python's own TypeError.

    A value is checked once, where the learner passes it: a checked function called from the body of another is not
    checked again, since the outer one passes on only values it checked or computed. So a checked function gives
    every argument its body passes on a rule, and never calls code a learner wrote.
    """
    def decorate(function: Callable) -> Callable:
        parameters = inspect.signature(function).parameters
        positional = [name for name, p in parameters.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
        defaults = {name: p.default for name, p in parameters.items() if p.default is not p.empty}

        @functools.wraps(function)
        def with_checks(*args, **kwargs):
            if _checked_already.get():
                return function(*args, **kwargs)
            given = {**dict(zip(positional, args)), **kwargs}
            values = {**defaults, **given}
            # Too many, repeated, unknown or missing arguments: Python's own TypeError says which.
            if len(args) > len(positional) or len(given) < len(args) + len(kwargs) or values.keys() != parameters.keys():
                return function(*args, **kwargs)
            for name, rule in rules.items():
                values[name] = rule(name=name, value=values[name])
            if fits:
                shape = tuple(values[side] if isinstance(side, str) else side for side in fits)
                check_table_fits(shape, values.get("dtype", torch.float32), name=f"table {tuple(fits)}".replace("'", ""),
                                 arguments=" or ".join(side for side in fits if isinstance(side, str)))
            inside = _checked_already.set(True)
            try:
                return function(**values)
            finally:
                _checked_already.reset(inside)

        return with_checks

    return decorate


# The rules, each `rule(name=..., value=...) -> value`: in capitals a rule, in lower case a function that makes one.
SIZE = check_size  # an int >= 1
SEED = functools.partial(check_size, minimum=0, maximum=2**64 - 1)
FLAG = check_flag
STR = check_str
FLOAT_DTYPE = check_float_dtype
MATRIX = functools.partial(check_floating_tensor, ndim=(2,))  # a 2-D floating tensor
BASE = check_base  # a finite real number > 1
DEVICE = check_device  # None or a device this machine has


def DTYPE(name: str, value: object) -> torch.dtype:
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype such as torch.float32, got {short(value)}")
    return value


def PROBABILITY(name: str, value: object) -> float:
    if not is_real(value) or not 0 <= value < 1:
        raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
    return float(value)


def str_list(*, if_str: str = "") -> Callable[[str, object], tuple[str, ...]]:
    """The rule for a list of str; `if_str` is the hint for a single str passed instead of a list."""
    return functools.partial(check_str_list, if_str=if_str)


def one_of(choices: tuple) -> Callable[[str, object], object]:
    """The rule for one of `choices` (str, or None if it is among them)."""
    def rule(name: str, value: object) -> object:
        check_str(name, value, optional=None in choices)
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {value!r}")
        return value
    return rule


def optional_size(*, maximum: int | None = None) -> Callable[[str, object], int | None]:
    """The rule for None or an int from 1 to `maximum`."""
    return lambda name, value: None if value is None else check_size(name, value, maximum=maximum)


def instance_of(cls: type) -> Callable[[str, object], object]:
    """The rule for an instance of `cls`."""
    def rule(name: str, value: object) -> object:
        if not isinstance(value, cls):
            raise TypeError(f"{name} must be a {cls.__module__}.{cls.__qualname__}, got {type(value).__name__}")
        return value
    return rule


def POSITIVE(name: str, value: object) -> float:
    """A finite real number > 0, as a float."""
    if not is_real(value):
        raise TypeError(f"{name} must be a real number > 0, got {short(value)} of type {type(value).__name__}")
    if not 0.0 < float(value) < float("inf"):
        raise ValueError(f"{name} must be a finite number > 0, got {float(value)!r}")
    return float(value)


# RoPE's stretching rules (rope_scaling).


def ROPE_HEAD_DIM(name: str, value: object) -> int:
    value = check_size(name, value, minimum=2, maximum=2**20)
    if value % 2:
        raise ValueError(f"{name} must be even: RoPE turns pairs of columns, got {value}")
    return value


def stretch_factor(maximum: float) -> Callable[[str, object], float]:
    """The rule for the factor s that stretches a context: a real number from 1 to `maximum`."""
    def rule(name: str, value: object) -> float:
        if not is_real(value):
            raise TypeError(f"{name} must be a real number from 1 to {maximum:g}, got {short(value)} of type "
                            f"{type(value).__name__}")
        if not 1.0 <= float(value) <= maximum:
            # factor < 1 would shrink the context, not stretch it; transformers refuses it too.
            raise ValueError(f"{name} must be a number from 1 to {maximum:g} (the new length over the trained one), "
                             f"got {float(value)!r}")
        return float(value)
    return rule


def check_rope_rule(scaling: str | None, head_dim: int, factor: float, original_max_position_embeddings: int | None,
                    *, scalings: tuple) -> None:
    """What each stretching rule needs beyond the checks of each argument."""
    if scaling is None and factor != 1.0:
        raise ValueError(f"factor={factor!r} needs a scaling rule: with scaling=None the frequencies are plain RoPE's; "
                         f"pass scaling as one of {scalings[1:]}, or factor=1.0")
    if scaling == "ntk" and head_dim == 2:
        raise ValueError("head_dim must be at least 4 for scaling='ntk': its base grows by factor^(head_dim / "
                         "(head_dim - 2)), which has no value at head_dim=2")
    if scaling in ("yarn", "llama3") and original_max_position_embeddings is None:
        raise ValueError(f"scaling={scaling!r} needs original_max_position_embeddings, the length the model was trained "
                         "on (an int >= 1): its rule treats pairs by how many turns they make within that length")
