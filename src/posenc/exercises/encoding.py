"""Checkers for notebooks 03, 04, 08, 10, 11 and 12: denominators, the table, a module, a wavelength, the columns that
repeat within a table, the shift, float32 angles, positions in bfloat16."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch

from .._validate import check_base, check_float_dtype, check_size, is_real
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_number,
    as_tensor,
    close,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_denominators", "check_encoding", "check_positional_module", "check_wavelength", "check_repeating_columns",
           "check_shift_matrix", "check_error_position", "MAX_ERROR_POSITION", "check_bfloat16_positions"]


@exercise("the denominators")
def check_denominators(answer: torch.Tensor | None, *, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """base^(2i / d_model) for i = 0 .. ceil(d_model / 2) - 1."""
    d_model, base = check_size("d_model", d_model, maximum=100_000), check_base(base)
    answer = as_tensor(answer, "the tensor of denominators")
    if isinstance(answer, Feedback):
        return answer
    pairs = torch.arange((d_model + 1) // 2, dtype=torch.float64)
    expected = 1 / frequencies(d_model=d_model, base=base)
    if close(answer, expected, atol=1e-3):
        return Feedback(CORRECT, f"Correct: {answer.numel()} denominators, from 1 to {float(expected[-1]):.4g}.")
    if close(answer, base ** (pairs / d_model), atol=1e-3):
        return Feedback(MISTAKE, "Exponent i / d_model: it must be 2i / d_model, with 2i the even column index.")
    if close(answer, 1 / expected, atol=1e-6):
        return Feedback(MISTAKE, "These are 1 / denominator: the angle is pos divided by base^(2i/d_model).")
    if base != DEFAULT_BASE and close(answer, DEFAULT_BASE ** (2 * pairs / d_model), atol=1e-3):
        return Feedback(MISTAKE, f"The base is {DEFAULT_BASE:g} here; this exercise asks for base {base:g}: "
                                 f"{base:g}^(2i / d_model).")
    if answer.numel() == d_model:
        return Feedback(MISTAKE, f"{d_model} values: one denominator per (sin, cos) pair, {expected.numel()} in all.")
    return Feedback(WRONG, f"Got {describe(answer)}; expected {expected.numel()} values starting 1, {float(expected[1]) if len(expected) > 1 else 1:.4g}, ...")


def _variant(length: int, d_model: int, base: float, *, exponent: Callable[[torch.Tensor], torch.Tensor],
             first_position: int = 0, swap: bool = False, size_in_denominator: int | None = None,
             multiply: bool = False, degrees: bool = False) -> torch.Tensor:
    """The table built with one deliberate mistake, in float64, interleaved."""
    position = torch.arange(first_position, first_position + length, dtype=torch.float64)[:, None]
    column = torch.arange(d_model, dtype=torch.float64)
    denominator = base ** (exponent(column) / (size_in_denominator or d_model))
    angle = position * denominator if multiply else position / denominator
    if degrees:
        angle = torch.deg2rad(angle)
    sine, cosine = torch.sin(angle), torch.cos(angle)
    even = column % 2 == 0
    return torch.where(even ^ swap, sine, cosine)


def _pair_exponent(column: torch.Tensor) -> torch.Tensor:
    return 2 * torch.div(column, 2, rounding_mode="floor")  # 2i for columns 2i and 2i + 1


def _dropped_column(answer: torch.Tensor, length: int, d_model: int, base: float) -> int | None:
    """For an odd d_model: the column k < d_model whose removal from the d_model + 1 columns of stack + flatten gives
    the answer, or None. (Removing column d_model, the extra cosine, is the right answer, checked before.)"""
    naive = _variant(length, d_model + 1, base, exponent=_pair_exponent, size_in_denominator=d_model)
    matches = [torch.allclose(answer[:, j].double(), naive[:, j], atol=1e-4, rtol=0) for j in range(d_model)]
    k = matches.index(False) if False in matches else d_model  # the first column that differs is the one removed
    if k < d_model and close(answer[:, k:], naive[:, k + 1:]):
        return k
    return None


def _wrong_dtype(got: torch.dtype, wanted: torch.dtype) -> str:
    """What a table with the right numbers in the wrong dtype says: the dtype, and its usual cause."""
    head = f"The numbers are right, but the dtype is {got}, not {wanted}."
    if got == torch.float64:
        return (f"{head} The usual cause: positions made in float64 (dtype=float, or a NumPy array, whose default is "
                "float64) divided by a float32 denominator; PyTorch gives the result the wider dtype. Make the "
                f"positions {wanted}.")
    if got in (torch.float16, torch.bfloat16):
        digits = 3 if got == torch.float16 else 2
        return (f"{head} {got} keeps about {digits} significant digits; leave out the conversion "
                f"(.half() or .bfloat16()) and keep the table {wanted}.")
    return f"{head} Build the table in {wanted}."


@exercise("the positional-encoding table")
def check_encoding(answer: torch.Tensor | None, *, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE,
                   dtype: torch.dtype = torch.float32) -> Feedback:
    """The full (max_sequence_length, d_model) table, columns sin, cos, sin, cos, ..."""
    # The diagnosis rebuilds the table with each known mistake: exercise-sized tables only.
    L = check_size("max_sequence_length", max_sequence_length, maximum=4096)
    d = check_size("d_model", d_model, maximum=4096)
    base, dtype = check_base(base), check_float_dtype("dtype", dtype)
    given = answer
    answer = as_tensor(answer, "your (max_sequence_length, d_model) table")
    if isinstance(answer, Feedback):
        return answer
    expected = sinusoidal_encoding(max_sequence_length=L, d_model=d, base=base, dtype=torch.float64)
    if answer.shape == (d, L) and L != d and close(answer.T, expected):
        return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}; rows are positions and columns dimensions, "
                                 f"so the table is (max_sequence_length, d_model) = ({L}, {d}).")
    if L != d and answer.shape in ((d, L), (L, d)):
        # The sizes swapping roles (the slide code of notebook 11): d rows for positions 0 .. d - 1, L columns, and the
        # exponent 2i / d. With L == d the mistake gives the right table, so there is nothing to name.
        roles_swapped = _variant(d, L, base, exponent=_pair_exponent, size_in_denominator=d)
        build = (f"make {L} rows (torch.zeros(max_sequence_length, d_model)), positions "
                 f"torch.arange(max_sequence_length), and one denominator per pair of the {d} columns "
                 "(torch.arange(0, d_model, 2))")
        if answer.shape == (d, L) and close(answer, roles_swapped):
            what = f"the first {L} columns of a d_model = {d} table" if L < d else f"with the exponents 2i / {d}"
            return Feedback(MISTAKE, f"Positions and columns swapped roles: {d} rows for positions 0 to {d - 1} and "
                                     f"{L} columns, {what}. The table is (max_sequence_length, d_model) = ({L}, {d}): "
                                     f"{build}.")
        if answer.shape == (L, d) and close(answer, roles_swapped.T):
            return Feedback(MISTAKE, "The right shape, but the numbers of the table whose positions and columns "
                                     f"swapped roles, transposed: its rows are still its {L} columns and its columns "
                                     f"its {d} positions. `.T` moves numbers, it does not recompute them: {build}.")
    if d % 2 == 1 and answer.shape == (L, d + 1) and close(answer[:, :d], expected):
        return Feedback(MISTAKE, f"{d + 1} columns for d_model = {d}: with an odd d_model, stack + flatten pairs the last "
                                 "sine column with an extra cosine column. Keep the first d_model columns.")
    if answer.shape == (d, L) and L != d:
        return Feedback(WRONG, f"Shape {tuple(answer.shape)}: the two sizes in each other's places. The table is "
                               f"(max_sequence_length, d_model) = ({L}, {d}): one row per position.")
    if answer.shape != (L, d):
        return Feedback(WRONG, f"Shape {tuple(answer.shape)}, expected (max_sequence_length, d_model) = ({L}, {d}).")
    if not answer.is_floating_point():
        return Feedback(WRONG, f"dtype {answer.dtype}: the encoding holds fractions, use a floating-point dtype.")
    # A table rounded to float16 or bfloat16 misses 1e-4; within a few of its own rounding steps, the dtype is at fault.
    rounding = 4 * torch.finfo(answer.dtype).eps
    rounded_only = answer.dtype != dtype and rounding > 1e-4 and close(answer, expected, atol=rounding)
    if close(answer, expected) or rounded_only:
        if isinstance(given, (list, tuple)):
            return Feedback(MISTAKE, "The numbers are right, but as a Python list, which has no dtype: the checker "
                                     f"cannot tell whether your table is {dtype}. Pass the tensor itself.")
        if answer.dtype != dtype:
            return Feedback(MISTAKE, _wrong_dtype(answer.dtype, dtype))
        note = (" (You gave a NumPy array; the table is meant as a torch tensor: torch.from_numpy turns one into the "
                "other.)" if not isinstance(given, torch.Tensor) else "")
        return Feedback(CORRECT, f"Correct: a ({L}, {d}) table, sin and cos interleaved, matching the formula to "
                                 f"1e-4.{note}")
    mistakes = [
        ("sine and cosine are swapped: even columns (2i) take sin, odd columns (2i + 1) take cos.",
         lambda: _variant(L, d, base, exponent=_pair_exponent, swap=True)),
        ("the exponent uses i instead of 2i: the denominator is base^(2i / d_model).",
         lambda: _variant(L, d, base, exponent=lambda j: torch.div(j, 2, rounding_mode="floor"))),
        ("the odd columns use their own index in the exponent: column 2i + 1 shares the denominator of column 2i, "
         "base^(2i / d_model), i.e. (j - 1) / d_model for odd j.", lambda: _variant(L, d, base, exponent=lambda j: j)),
        ("the halves are concatenated [sin..., cos...] instead of interleaved sin, cos, sin, cos: "
         "stack on dim=2, then flatten.", lambda: torch.cat([expected[:, 0::2], expected[:, 1::2]], dim=1)),
        ("the positions start at 1: the first token is position 0 (torch.arange(max_sequence_length)).",
         lambda: _variant(L, d, base, exponent=_pair_exponent, first_position=1)),
        (f"the exponent divides by max_sequence_length={L} instead of d_model={d}: the denominator is "
         "base^(2i / d_model).",
         lambda: _variant(L, d, base, exponent=_pair_exponent, size_in_denominator=L)),
        ("the position was multiplied by the denominator: the angle is pos / base^(2i / d_model) (or pos times "
         "its reciprocal, exp(-2i ln(base) / d_model)).",
         lambda: _variant(L, d, base, exponent=_pair_exponent, multiply=True)),
        ("the angle was taken in degrees (converted with pi / 180): torch.sin and torch.cos read radians, and the "
         "formula's angle pos / base^(2i / d_model) is in radians already.",
         lambda: _variant(L, d, base, exponent=_pair_exponent, degrees=True)),
    ]
    if base != DEFAULT_BASE:
        mistakes.append((f"this is the table for base {DEFAULT_BASE:g}; the exercise asks for base {base:g}.",
                         lambda: sinusoidal_encoding(max_sequence_length=L, d_model=d, dtype=torch.float64)))
    mistake = first_mistake(lambda table: close(answer, table), [("Not quite: " + m, build) for m, build in mistakes])
    if mistake:
        return mistake
    dropped = _dropped_column(answer, L, d, base) if d % 2 else None
    if dropped is not None:
        kind = "sine" if dropped % 2 == 0 else "cosine"
        return Feedback(MISTAKE, f"Not quite: this is stack + flatten's {d + 1}-column table with column {dropped} "
                                 f"(the {kind} of pair {dropped // 2}) removed. Remove column {d} instead, the extra "
                                 f"cosine that stack paired with the last sine column: table[:, :{d}].")
    worst = (answer.double() - expected).abs()
    row, column = divmod(int(worst.argmax()), d)
    return Feedback(WRONG, f"Not the sinusoidal table: the largest difference, {float(worst.max()):.3g}, is at "
                           f"position {row}, column {column}.")


def _forward(module: torch.nn.Module, x: torch.Tensor) -> tuple[str, object]:
    """Call the learner's module on a copy of x: ("returned", output) or ("raised", the exception)."""
    try:
        return "returned", module(x.clone())
    except (Exception, SystemExit) as error:  # the learner's code: whatever it raises is part of the answer
        return "raised", error


def _error_line(error: BaseException) -> str:
    """An exception as a traceback's last line shows it, cut to one short line."""
    try:
        text = str(error)
    except Exception:  # a learner's exception class whose __str__ fails: the name alone still says what it was
        text = ""
    text = text if len(text) <= 80 else text[:79] + "…"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


@exercise("a positional-encoding module")
def check_positional_module(module: object, *, d_model: int = 6, max_sequence_length: int = 10) -> Feedback:
    """A module whose forward adds the table to (batch, seq, d_model) inputs up to max_sequence_length positions,
    and refuses a longer input with ValueError.

    It is called on a batch of exactly max_sequence_length positions, on a shorter one, and on one
    with a position more than the table has: the fix of notebook 04's Exercise 2 must accept the
    first two (the `<` off-by-one refuses the first) and refuse the third with ValueError (an
    `assert` disappears under `python -O`; a deleted check leaves only the shapes failing to add;
    a cut input is a silent loss).
    """
    L = check_size("max_sequence_length", max_sequence_length, maximum=4096)
    d = check_size("d_model", d_model, maximum=4096)
    expected = sinusoidal_encoding(max_sequence_length=L, d_model=d)
    if module is None:
        return not_attempted("an instance of your module")
    if not isinstance(module, torch.nn.Module):
        return Feedback(WRONG, f"Expected an nn.Module instance, got {describe(module)}.")
    x = torch.randn(2, L + 1, d, generator=torch.Generator().manual_seed(0))
    full, too_long = x[:, :L], x

    # Exactly max_sequence_length positions fit: the source's `x < max` refuses them.
    kind, out = _forward(module, full)
    refused = kind == "raised" and isinstance(out, (AssertionError, ValueError))
    if refused and _forward(module, full[:, :-1])[0] == "returned":  # one position fewer passes: `<` instead of `<=`
        also = (" And raise ValueError instead of asserting: `python -O` removes every assert."
                if isinstance(out, AssertionError) else "")
        return Feedback(MISTAKE, f"forward refuses a sequence of exactly max_sequence_length={L} positions "
                                 f"({_error_line(out)}): the check uses < where it needs <=. The table has {L} rows, "
                                 f"so {L} positions fit; refuse only more than {L}.{also}")
    if kind == "raised":
        return Feedback(WRONG, f"forward raised {_error_line(out)} for {L} positions, a sequence that fits.")
    if not isinstance(out, torch.Tensor) or out.shape != full.shape:
        return Feedback(WRONG, f"forward should return x's shape {tuple(full.shape)}, got "
                               f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}.")
    if close(out, expected.expand_as(full)):
        return Feedback(MISTAKE, "forward returns the table alone: add it to x.")
    if not close(out, full + expected):
        return Feedback(WRONG, "forward(x) should equal x + PE for every batch entry.")

    kind, out = _forward(module, full[:, :3])
    if kind == "raised":
        return Feedback(MISTAKE, f"forward fails on a shorter sequence ({_error_line(out)}): slice the table to x's "
                                 "length, table[: x.shape[-2]].")
    if not isinstance(out, torch.Tensor) or not close(out, full[:, :3] + expected[:3]):
        return Feedback(WRONG, "for a shorter sequence, forward should add the table's first rows.")

    # One position more than the table has: refused with ValueError, never cut, never left to the shapes.
    kind, out = _forward(module, too_long)
    if kind == "returned":
        if isinstance(out, torch.Tensor) and out.shape == full.shape:
            return Feedback(MISTAKE, f"For {L + 1} positions forward returned {L}: it cut the input without a word, "
                                     f"and position {L} is lost. Check the length first and raise ValueError.")
        return Feedback(MISTAKE, f"forward accepted {L + 1} positions, one more than max_sequence_length={L}, and "
                                 f"returned {describe(out)}: the table has {L} rows, so refuse a longer x with "
                                 "ValueError.")
    if isinstance(out, AssertionError):
        return Feedback(MISTAKE, f"An assert refuses {L + 1} positions, but `python -O` removes every assert, and then "
                                 "nothing does (11 Pitfalls, section 3): check with `if` and raise ValueError.")
    if isinstance(out, ValueError):
        return Feedback(CORRECT, f"Correct: forward adds the table for {L} and for 3 positions, and refuses {L + 1} "
                                 f"({_error_line(out)}).")
    if isinstance(out, RuntimeError):
        return Feedback(MISTAKE, f"Nothing checks the length: for {L + 1} positions forward failed only when adding "
                                 f"({_error_line(out)}), an error about shapes that does not say what is wrong. Check "
                                 "x.shape[-2] before adding and raise ValueError that names the length and the limit.")
    return Feedback(MISTAKE, f"For {L + 1} positions forward raised {_error_line(out)}: raise ValueError, Python's "
                             "error for a value outside what is allowed, so that a caller can catch exactly that.")


@exercise("a wavelength")
def check_wavelength(answer: float | None, *, column: int, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """The wavelength, in positions, of column `column`: 2 pi base^(2i / d_model), with 2i = column rounded down to even."""
    d_model = check_size("d_model", d_model, maximum=100_000)
    column = check_size("column", column, minimum=0, maximum=d_model - 1)
    base = check_base(base)
    two_i = column - column % 2
    denominator = 1 / float(frequencies(d_model=d_model, base=base)[column // 2])
    expected = 2 * math.pi * denominator
    if answer is None:
        return not_attempted("a number of positions")
    number = as_number(answer)
    if number is None or not math.isfinite(number):
        return Feedback(WRONG, f"Expected a number of positions, got {describe(answer)}.")

    def near(value: float) -> bool:
        return abs(number - value) <= 1e-3 * abs(value)

    if near(expected):
        return Feedback(CORRECT, f"Correct: column {column} repeats every 2 pi x {base:g}^({two_i}/{d_model}) = "
                                 f"{expected:.1f} positions.")
    mistakes = [
        (f"That is the denominator {base:g}^({two_i}/{d_model}) alone: sin(pos / denominator) repeats when "
         "pos / denominator grows by 2 pi, so multiply by 2 pi.", denominator),
        ("360 x the denominator is a period in degrees: torch.sin reads radians, whose period is 2 pi.", 360 * denominator),
        ("1 / denominator is the angular frequency (radians per position); the wavelength is 2 pi over it.",
         1 / denominator),
        ("2 pi / denominator divides the wrong way: the wavelength is 2 pi x denominator.", 2 * math.pi / denominator),
    ]
    if column % 2:
        mistakes.append((f"Column {column} is a cosine column: it shares the denominator of column {two_i}, "
                         f"{base:g}^({two_i}/{d_model}), not {base:g}^({column}/{d_model}).",
                         2 * math.pi * base ** (column / d_model)))
    if base != DEFAULT_BASE:
        mistakes.append((f"That is the wavelength for base {DEFAULT_BASE:g}; this one asks for base {base:g}.",
                         2 * math.pi * DEFAULT_BASE ** (two_i / d_model)))
    mistake = first_mistake(near, mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"You said {number:.6g}; column {column}'s wavelength is 2 pi x {base:g}^({two_i}/{d_model}).")


@exercise("columns that repeat within the table")
def check_repeating_columns(answer: int | None, *, d_model: int, max_sequence_length: int,
                            base: float = DEFAULT_BASE) -> Feedback:
    """How many columns have a wavelength, 2 pi base^(2i / d_model), shorter than max_sequence_length positions:
    in the explorer's wavelengths view, the dots below the max_sequence_length line."""
    d_model = check_size("d_model", d_model, maximum=100_000)
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=10**9)
    base = check_base(base)

    def column_wavelengths(at_base: float) -> torch.Tensor:
        # Columns 2i and 2i + 1 share pair i's wavelength, 2 pi / frequency.
        return (2 * math.pi / frequencies(d_model=d_model, base=at_base)).repeat_interleave(2)[:d_model]

    def count(at_base: float) -> int:
        return int((column_wavelengths(at_base) < max_sequence_length).sum())

    lengths = column_wavelengths(base)
    expected = count(base)
    if answer is None:
        return not_attempted("a number of columns")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a whole number of columns, got {describe(answer)}.")
    if number == expected:
        edge = [f"column {j} repeats every {float(lengths[j]):,.1f} positions" for j in (expected - 1, expected)
                if 0 <= j < d_model]
        return Feedback(CORRECT, f"Correct: {expected} of the {d_model} columns ({', '.join(edge)}).")
    what_to_count = (f"count the columns whose wavelength, 2 pi x {base:,g}^(2i/{d_model}), is shorter than "
                     f"{max_sequence_length} positions: the dots below the dotted line in the wavelengths view")
    pairs, positions = d_model // 2, max_sequence_length
    mistakes = [
        ("That counts pairs: a sin column and its cos partner share one wavelength, so every pair below the line is "
         "two columns.", expected // 2 if expected > 1 else None),
        ("That is the number of the last column below the line; counting from column 0, there is one column more.",
         expected - 1),
        ("Those are the columns above the line, the ones that do not repeat within the table.", d_model - expected),
        (f"Not every column: at base {base:,g} the slowest columns repeat only after about {float(lengths[-1]):,.0f} "
         f"positions, beyond the table's {max_sequence_length}.", d_model),
        (f"Not a single column? Column 0's wavelength is 2 pi = 6.28 positions, shorter than the table's "
         f"{max_sequence_length}: its stripes repeat down the heatmap's left edge.",
         0 if lengths[0] < max_sequence_length else None),
        (f"{pairs} is half of d_model = {d_model} (the number of sin/cos pairs) and also max_sequence_length (the "
         f"number of positions); the count asked for is neither: {what_to_count}.",
         pairs if pairs == positions else None),
        (f"{pairs} is the number of sin/cos pairs, half of d_model = {d_model}; not every pair repeats within the "
         f"table: {what_to_count}.", pairs if pairs > 0 else None),
        (f"{positions} is max_sequence_length, the number of positions; the question counts columns: {what_to_count}.",
         positions),
        (f"That counts the columns whose denominator, {base:,g}^(2i/{d_model}), is below {max_sequence_length}: "
         "sin(pos / denominator) repeats when pos grows by 2 pi x denominator, so compare the wavelength, 2 pi times "
         "the denominator.", lambda: int((lengths / (2 * math.pi) < max_sequence_length).sum())),
    ] + [(f"That is the count at base {other:,g}; this question asks about base {base:,g}.", lambda other=other: count(other))
         for other in (10.0, DEFAULT_BASE) if other != base]
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    if abs(number - expected) <= 4:
        return Feedback(WRONG, "Close: look where the dots cross the dotted line; the two columns of a pair always lie "
                               "on the same side of it.")
    if not 0 <= number <= d_model:
        return Feedback(WRONG, f"You said {number}; the table has {d_model} columns, so the count is between 0 and "
                               f"{d_model}: {what_to_count}.")
    return Feedback(WRONG, f"You said {number}, which is too {'many' if number > expected else 'few'}: "
                           f"{what_to_count}.")


def _shift_blocks(k: float, d_model: int, base: float, *, degrees: bool = False) -> torch.Tensor:
    """The (d_model, d_model) matrix M with PE[p] @ M = PE[p + k]: blocks [[cos wk, -sin wk], [sin wk, cos wk]].

    For k >= 0 it is `schemes.rotation_matrix(position=k, d=d_model)`, RoPE's R_k; for k < 0 its transpose.
    """
    M = torch.zeros(d_model, d_model, dtype=torch.float64)
    angle_per_position = frequencies(d_model=d_model, base=base)
    for pair in range(d_model // 2):
        angle = k * float(angle_per_position[pair])
        angle = math.radians(angle) if degrees else angle
        c, s = math.cos(angle), math.sin(angle)
        M[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = torch.tensor([[c, -s], [s, c]], dtype=torch.float64)
    return M


@exercise("the shift as a rotation")
def check_shift_matrix(answer: torch.Tensor | None, *, k: int, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """The block-diagonal M with PE[p] @ M = PE[p + k] for every p (even d_model).

    A row of the table is multiplied from the right, as everywhere in the suite (X @ W_Q):
    M is `schemes.rotation_matrix(position=k, d=d_model)` for k >= 0 and its transpose for k < 0.
    """
    k = check_size("k", k, minimum=-2**20, maximum=2**20)
    d_model = check_size("d_model", d_model, maximum=512)
    if d_model % 2:
        raise ValueError(f"d_model must be even: every (sin, cos) pair turns as one block, got d_model={d_model}")
    base = check_base(base)
    answer = as_tensor(answer, f"the ({d_model}, {d_model}) matrix")
    if isinstance(answer, Feedback):
        return answer
    expected = _shift_blocks(k, d_model, base)
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; M maps a row of {d_model} numbers to another: "
                               f"({d_model}, {d_model}).")
    def moved(by: int) -> str:
        return f"PE[p {'-' if by < 0 else '+'} {abs(by)}]"

    if close(answer, expected):
        return Feedback(CORRECT, f"Correct: PE[p] @ M = {moved(k)} for every p, one 2 x 2 block per pair"
                                 + (f": the transpose of the shift by {-k}, since a rotation's inverse is its transpose."
                                    if k < 0 else "."))
    backwards = _shift_blocks(-k, d_model, base)
    mistakes = [
        (f"That matrix moves by {-k}, not {k}: PE[p] @ M = {moved(-k)}. It is the transpose of the one asked for (a "
         "rotation's inverse is its transpose). It would be right for M @ PE[p] with PE[p] as a column; the table's "
         "rows are multiplied from the right, PE[p] @ M, as in X @ W_Q.", backwards if k else None),
        (f"Every sign of the shift by {-k} flipped: that is not its inverse. Negating turns each pair a further half "
         f"turn, PE[p] @ M = -{moved(-k)}. Undoing a rotation is its transpose.", -backwards if k else None),
        (f"Every sign flipped: PE[p] @ M = -{moved(k)}. Negating turns each pair a further half turn.", -expected),
        ("That is the identity, the shift by k = 0.", torch.eye(d_model, dtype=torch.float64)),
        ("The angles were read as degrees: w k is in radians already.", lambda: _shift_blocks(k, d_model, base, degrees=True)),
    ]
    mistake = first_mistake(lambda matrix: matrix is not None and close(answer, matrix), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected blocks [[cos wk, -sin wk], [sin wk, cos wk]] with "
                           f"w = 1 / {base:g}^(2i/{d_model}) and k = {k}, so that PE[p] @ M = {moved(k)}.")


# Positions scanned by check_error_position: the angle error passes 1e-3 long before this.
MAX_ERROR_POSITION = 200_000


@functools.lru_cache(maxsize=4)
def _float32_angle_error(d_model: int, base: float) -> torch.Tensor:
    """Per position, the largest |float32 angle - exact angle| over the columns (positions 0 .. MAX_ERROR_POSITION - 1)."""
    denominator64 = base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    positions = torch.arange(MAX_ERROR_POSITION, dtype=torch.float32)[:, None]
    return ((positions / denominator64.float()).double() - positions.double() / denominator64).abs().amax(dim=1)


@exercise("where float32 angles go wrong")
def check_error_position(answer: int | None, *, d_model: int, threshold: float = 1e-3,
                         base: float = DEFAULT_BASE) -> Feedback:
    """The first position whose float32 angles pos / denominator (largest over the columns) are off by more than
    `threshold` from the exact angle.

    The float32 angles are computed as the stepwise notebooks do (positions and denominators
    in float32, one division, which IEEE arithmetic rounds the same way on every CPU); the
    denominators are rounded from float64, so the answer does not depend on the machine.
    An answer within 1% of the position is accepted: another way of computing the
    denominators can move it by a few positions.
    """
    d_model = check_size("d_model", d_model, maximum=1024)
    base = check_base(base)
    if not is_real(threshold) or not 1e-6 <= threshold <= 0.1:
        raise ValueError(f"threshold must be a number from 1e-6 to 0.1, got {threshold!r}")
    error = _float32_angle_error(d_model, float(base))
    past = (error > threshold).nonzero()
    if len(past) == 0:
        raise ValueError(f"threshold={threshold} is not passed before position {MAX_ERROR_POSITION} for d_model={d_model}: "
                         "choose a smaller threshold or a larger d_model")
    expected = int(past[0])
    if answer is None:
        return not_attempted("a position (a whole number)")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a position, a whole number, got {describe(answer)}.")
    if abs(number - expected) <= 0.01 * expected:
        return Feedback(CORRECT, f"Correct: the float32 angles first miss by more than {threshold:g} at position "
                                 f"{expected:,}.")
    if 0 <= number < MAX_ERROR_POSITION and number < expected:
        return Feedback(WRONG, f"Too early: at position {number:,} the largest angle error is {float(error[number]):.1e}, "
                               f"still below {threshold:g}.")
    if number > expected:
        return Feedback(WRONG, f"Too late: the error already passed {threshold:g} before position {number:,}; look for "
                               "the first position where it does (e.g. (error > threshold).nonzero()[0]).")
    return Feedback(WRONG, f"Positions run from 0; got {number}.")


# bfloat16 keeps 8 significant bits, so its whole numbers are exact only up to 2^8 = 256: positions 0 .. 256.
_BFLOAT16_EXACT_POSITIONS = 257
# Counting is one cast and one unique over max_sequence_length positions: fast up to here.
_MAX_BFLOAT16_POSITIONS = 1 << 20


@exercise("positions in bfloat16")
def check_bfloat16_positions(answer: int | None, *, max_sequence_length: int) -> Feedback:
    """How many distinct values the positions 0 .. max_sequence_length - 1 take when stored in bfloat16."""
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=_MAX_BFLOAT16_POSITIONS)
    expected = int(torch.arange(max_sequence_length).to(torch.bfloat16).unique().numel())
    if answer is None:
        return not_attempted("a count (a whole number)")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a count, a whole number, got {describe(answer)}.")
    if number == expected:
        return Feedback(CORRECT, f"Correct: {max_sequence_length:,} positions, {expected:,} distinct bfloat16 values.")
    mistakes = [
        (f"{number:,} is one value per position, as in float32. bfloat16 keeps 8 significant bits: above 256 only "
         f"every 2nd whole number exists, above 512 every 4th. Expected {expected:,}.", max_sequence_length),
        (f"{number} counts only the exact positions 0 .. 256. Above 256 bfloat16 still has every 2nd whole number, "
         f"above 512 every 4th, and so on. Expected {expected:,}.", _BFLOAT16_EXACT_POSITIONS),
    ]
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    if abs(number - expected) <= 2:
        return Feedback(WRONG, f"Close: {number:,}, expected {expected:,}. Check the ends of each stretch: 256 and 512 "
                               "count once, and a position halfway between two values goes to the one whose last "
                               "significant bit is 0 (257 to 256, 514 to 512).")
    return Feedback(WRONG, f"Got {number:,}, expected {expected:,}: count every whole number up to 256, then every 2nd "
                           "up to 512, then every 4th up to 1024, and so on, up to the last position.")
