"""The check primitives every module uses: sizes, flags, tensors, the memory guard, and `@checked`.

A check raises TypeError (wrong kind of value) or ValueError (right kind, wrong value) with a message that names the
argument, shows the value and says what is allowed. Checks are plain `if`s, not `assert`s, so `python -O` keeps them.
A function's own rules (how its arguments relate) sit beside it in its module; this module imports nothing from the
package, so any module can use it.

A learner-facing function declares its checks in one line, `@checked(d_model=SIZE, base=BASE)`, so that its body
is the formula alone. A size is capped at what this machine's memory can hold, and `fits=` refuses a table larger
than memory before anything is allocated: a huge size is a ValueError, never the allocator's error.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable, Sequence

import torch

# The widest entry a list of `size` numbers has in this package: float64.
ENTRY_BYTES = 8


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
    """`value` as an int if it is a whole number in [minimum, maximum]; without a maximum, one this machine can
    hold as a list of float64 (so a list of `value` numbers needs no check of its own)."""
    allowed = f"an int >= {minimum}" if maximum is None else f"an int from {minimum} to {maximum}"
    if not is_real(value, whole=True):
        raise TypeError(f"{name} must be {allowed}, got {short(value)} of type {type(value).__name__}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if maximum is None and value * ENTRY_BYTES > memory_bytes():
        raise ValueError(f"{name}={value!r} is too large: a list that long, at {ENTRY_BYTES} bytes an entry, needs "
                         f"{value * ENTRY_BYTES} bytes, more than this machine's {memory_bytes()} bytes of memory")
    return int(value)


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {short(value)} of type {type(value).__name__}")
    return value


def check_str(name: str, value: object, *, optional: bool = False) -> str | None:
    if not isinstance(value, str) and not (value is None and optional):
        allowed = "a str or None" if optional else "a str"
        raise TypeError(f"{name} must be {allowed}, got {short(value)} of type {type(value).__name__}")
    return value


def check_str_list(name: str, value: object, *, if_str: str = "") -> tuple[str, ...]:
    """A list or tuple of str, as a tuple; `if_str` is the hint for a single str passed instead of a list."""
    if not is_sequence(value) or not all(isinstance(item, str) for item in value):
        hint = f"; {if_str}" if isinstance(value, str) and if_str else ""
        raise TypeError(f"{name} must be a list of str, got {short(value)} of type {type(value).__name__}{hint}")
    return tuple(value)


def check_float_dtype(name: str, value: object, *, floating: bool = True) -> torch.dtype:
    """A torch.dtype (a floating-point one unless `floating=False`)."""
    if not isinstance(value, torch.dtype) or (floating and not value.is_floating_point):
        raise (ValueError if isinstance(value, torch.dtype) else TypeError)(
            f"{name} must be a torch.dtype such as torch.float32{', floating-point' if floating else ''}, got {value!r}")
    return value


def check_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None, kind: str = "") -> torch.Tensor:
    """A tensor with numbers in it (not on 'meta'), of one of the dimensions `ndim`; `kind` "floating-point",
    "integer" (not bool) or "bool" also asks for that dtype."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.is_meta:
        raise ValueError(f"{name} is a tensor on the 'meta' device, which holds no numbers; pass one on 'cpu'")
    if ndim is not None and value.dim() not in ndim:
        raise ValueError(f"{name} must be {' or '.join(f'{n}-D' for n in ndim)}, got shape {tuple(value.shape)}")
    integer = not (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool)
    if not {"floating-point": value.is_floating_point(), "integer": integer, "bool": value.dtype == torch.bool}.get(kind, 1):
        raise TypeError(f"{name} must hold {kind} values, got dtype {value.dtype}")
    return value


check_floating_tensor = functools.partial(check_tensor, kind="floating-point")


@functools.cache
def memory_bytes() -> int:
    """This machine's memory: the largest table a size check lets through (tests lower it)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return 64 * 2**30


def check_table_fits(shape: tuple[int, ...], dtype: torch.dtype | int, *, name: str = "table",
                     arguments: str = "max_sequence_length or d_model") -> int:
    """Refuse, before allocating, a tensor larger than this machine's memory; `dtype` may be bytes per entry, and
    `arguments` names the sizes the caller can lower."""
    if any(n >= 2**62 for n in shape):  # even an empty tensor cannot have a side this long
        raise ValueError(f"a {name} of shape {shape} has a side longer than a tensor can have; use a smaller {arguments}")
    each = dtype.itemsize if isinstance(dtype, torch.dtype) else int(dtype)
    size = each * math.prod(shape)
    if size > memory_bytes():
        raise ValueError(f"a {name} of shape {shape} at {each} bytes an entry needs {size} bytes ({size / 2**30:.1f} GiB), "
                         f"more than this machine's {memory_bytes()} bytes of memory; use a smaller {arguments}")
    return size


# @checked: a function's checks in one line above it ----------------------------------------------

# True while the body of a checked function runs.
_checked_already = contextvars.ContextVar("checked_already", default=False)


def checked(*, fits: tuple[str | int, ...] = (), **rules: Callable[[str, object], object]) -> Callable:
    """Check a function's arguments before its body runs, so that the body is the formula alone.

    Each keyword names a parameter and its rule, `rule(name, value)`, which raises a TypeError or ValueError naming
    the parameter and returns the value as the body uses it (a size as an int). `fits` is the shape of a table that
    must fit in memory, each side a parameter's name or an int, at the function's `dtype` (float32 if it has none).
    A call Python itself refuses (a missing or unexpected argument) gets Python's own TypeError. A checked function
    called from the body of another is not checked again: the outer one passes on only values it checked.
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
            if len(args) > len(positional) or len(given) < len(args) + len(kwargs) or values.keys() != parameters.keys():
                return function(*args, **kwargs)  # Python's own TypeError says what is wrong with the call
            for name, rule in rules.items():
                values[name] = rule(name, values[name])
            if fits:
                shape = tuple(values[side] if isinstance(side, str) else side for side in fits)
                check_table_fits(shape, values.get("dtype", torch.float32), name=f"table {tuple(fits)}".replace("'", ""),
                                 arguments=" or ".join(dict.fromkeys(side for side in fits if isinstance(side, str))))
            inside = _checked_already.set(True)
            try:
                return function(**values)
            finally:
                _checked_already.reset(inside)

        return with_checks

    return decorate


# The rules, each `rule(name, value) -> value`: in capitals a rule, in lower case a function that makes one.
SIZE = check_size  # an int >= 1
SEED = functools.partial(check_size, minimum=0, maximum=2**64 - 1)
FLAG = check_flag
STR = check_str
FLOAT_DTYPE = check_float_dtype
MATRIX = functools.partial(check_floating_tensor, ndim=(2,))  # a 2-D floating tensor


def real(low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False
         ) -> Callable[[str, object], float]:
    """The rule for a finite real number from `low` to `high` (either end left out with `low_open` / `high_open`)."""
    allowed = (f"> {low:g}" if low_open else f">= {low:g}") if high == math.inf else \
        f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"

    def rule(name: str, value: object) -> float:
        if not is_real(value):
            raise TypeError(f"{name} must be a real number {allowed}, got {short(value)} of type {type(value).__name__}")
        number = float(value) if abs(value) < 1e308 else math.inf  # an int too large for a float, and NaN, are not finite
        if not ((low < number if low_open else low <= number) and (number < high if high_open else number <= high)
                and math.isfinite(number)):
            raise ValueError(f"{name} must be a finite number {allowed}, got {short(value)}")
        return number
    return rule


BASE = check_base = real(1, low_open=True)  # the base of the wavelengths' progression: <= 1 would not make it grow
PROBABILITY = real(0, 1, high_open=True)
POSITIVE = real(0, low_open=True)


def size(minimum: int = 1, maximum: int | None = None) -> Callable[[str, object], int]:
    """The rule for an int from `minimum` to `maximum`; `optional_size` also lets None through."""
    return functools.partial(check_size, minimum=minimum, maximum=maximum)


def optional_size(*, maximum: int | None = None) -> Callable[[str, object], int | None]:
    return lambda name, value: None if value is None else check_size(name, value, maximum=maximum)


def str_list(*, if_str: str = "") -> Callable[[str, object], tuple[str, ...]]:
    return functools.partial(check_str_list, if_str=if_str)


def list_of(rule: Callable[[str, object], object]) -> Callable[[str, object], list]:
    """The rule for a non-empty list or tuple whose items each follow `rule`."""
    def check(name: str, value: object) -> list:
        if not is_sequence(value) or not value:
            raise TypeError(f"{name} must be a non-empty list, got {short(value)} of type {type(value).__name__}")
        return [rule(f"{name}[{n}]", item) for n, item in enumerate(value)]
    return check


DTYPE = functools.partial(check_float_dtype, floating=False)


def one_of(choices: tuple) -> Callable[[str, object], object]:
    """The rule for one of `choices` (str, or None if it is among them)."""
    def rule(name: str, value: object) -> object:
        check_str(name, value, optional=None in choices)
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {value!r}")
        return value
    return rule


def instance_of(cls: type, what: str = "") -> Callable[[str, object], object]:
    """The rule for an instance of `cls`; `what` says where one comes from."""
    def rule(name: str, value: object) -> object:
        if not isinstance(value, cls):
            raise TypeError(f"{name} must be {what or f'a {cls.__module__}.{cls.__qualname__}'}, got {type(value).__name__}")
        return value
    return rule
