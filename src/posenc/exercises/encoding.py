"""Checkers for the positional-encoding table and its pitfalls: the table, the shape of a table built with its two
sizes swapped."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np
import torch

from .. import _provenance
from .. import encoding as steps
from .._checks import check_base, check_float_dtype, check_size
from .._provenance import calls_any, made_by
from ..builder import DEFAULT_BASE, sinusoidal_encoding
from ..encoding import PositionalEncoding
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_shape,
    as_tensor,
    close,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_encoding", "check_table_shape",
           "check_encoding_function"]


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


def _wrong_dtype(got: torch.dtype, wanted: torch.dtype | None) -> str:
    """What a table with the right numbers in the wrong dtype says: the dtype, and its usual cause."""
    if wanted is None:  # no dtype asked: only a table rounded to a format too narrow for it is wrong
        digits = 3 if got == torch.float16 else 2
        return (f"The numbers are right to {got}'s precision, but {got} keeps only about {digits} significant digits: "
                "leave out the conversion (.half() or .bfloat16()) and keep the table float32.")
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


def _tolerance(length: int, base: float) -> torch.Tensor:
    """Per position (a column vector), how far a right table's entries may be from the exact formula.

    1e-4, plus what float32 arithmetic leaves in a right table: its angle pos / base^(2i / d_model) is off by up to
    about (ln(base) + 4) float32 rounding steps (2^-23, relative) of the position (the denominator's rounding, the
    division's, and, for the form exp(2i x (-ln(base) / d_model)), the rounding of the exponent, which is up to
    ln(base) in size). At the exercises' ten positions that adds about 1e-5; at 4,096 positions, about 6e-3.
    """
    per_position = (math.log(base) + 4) * 2.0**-23
    return 1e-4 + per_position * torch.arange(length, dtype=torch.float64)[:, None]


def _matches(answer: torch.Tensor, table: torch.Tensor, tolerance: torch.Tensor) -> bool:
    """Whether the answer has the table's shape and every entry within its row's tolerance."""
    return answer.shape == table.shape and bool(((answer.double() - table).abs() <= tolerance).all())


def _shown(tolerance: torch.Tensor | float) -> str:
    """The (largest) tolerance as one significant digit: 1e-4, 6e-3."""
    largest = float(tolerance.max()) if isinstance(tolerance, torch.Tensor) else float(tolerance)
    mantissa, exponent = f"{largest:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


# The package's builders as the learner meets them (the tensor a checker is given records its maker).
_MAKERS = {"builder.sinusoidal_encoding": "builder.sinusoidal_encoding (PositionalEncoding keeps it as .table)",
           "a copy of builder.sinusoidal_encoding": "builder.sinusoidal_encoding, copied to float64 (.double() or "
                                                   ".tolist() keep its float32 numbers exactly)",
           "encoding.interleave": "encoding.interleave (the last step of encoding.stepwise_encoding)"}


def _copied_from_builder(given: object, answer: torch.Tensor, length: int, d_model: int, base: float) -> str | None:
    """The maker of the package's table that `given` shares memory with (.detach() keeps the memory, not the mark),
    or "a copy of builder.sinusoidal_encoding" for its float32 table widened to float64 (.double(), .tolist(),
    np.array(table.tolist())); else None.

    A float32 copy (.clone(), torch.tensor(table)) is not told: a table built by hand in float64 and rounded to
    float32 has the builder's bits too, and a right answer must pass. Widened, the builder's numbers are all float32
    numbers, which a float64 table built by hand is not.
    """
    if isinstance(given, torch.Tensor) and not given.is_meta:
        memory = given.untyped_storage().data_ptr()
        for reference, maker in list(_provenance._MADE.values()):
            tensor = reference()
            if memory and tensor is not None and not tensor.is_meta and tensor.untyped_storage().data_ptr() == memory:
                return maker
    if answer.dtype != torch.float64 or not torch.equal(answer.float().double(), answer):
        return None
    if not torch.equal(answer.float(), sinusoidal_encoding(max_sequence_length=length, d_model=d_model, base=base)):
        return None
    by_hand = sinusoidal_encoding(max_sequence_length=length, d_model=d_model, base=base, dtype=torch.float64)
    if torch.equal(by_hand.float().double(), by_hand):
        return None  # so few positions that the float64 table holds only float32 numbers (0 and 1): nothing to tell
    return "a copy of builder.sinusoidal_encoding"


@exercise("the positional-encoding table")
def check_encoding(answer: torch.Tensor | None, *, max_sequence_length: int, d_model: int, base: float = DEFAULT_BASE,
                   dtype: torch.dtype | None = None) -> Feedback:
    """The full (max_sequence_length, d_model) table, columns sin, cos, sin, cos, ...

    `dtype`: the dtype the exercise asks for (the table then must have it: float64 where float32 was asked is a
    named mistake). None, the default, accepts the right numbers in any form precise enough to hold them: a float32
    or float64 tensor, a NumPy array, a list. Right means within 1e-4 of the exact formula, plus float32's rounding
    of the angle, which grows with the position (see `_tolerance`). The package's own table (from
    `sinusoidal_encoding` or `interleave`, or a view of one) is named as not the exercise, which asks for it by hand.
    """
    # The diagnosis rebuilds the table with each known mistake: exercise-sized tables only.
    L = check_size("max_sequence_length", max_sequence_length, maximum=4096)
    d = check_size("d_model", d_model, maximum=4096)
    base = check_base("base", base)
    dtype = None if dtype is None else check_float_dtype("dtype", dtype)
    given = answer
    answer = as_tensor(answer, "your (max_sequence_length, d_model) table")
    if isinstance(answer, Feedback):
        return answer
    expected = sinusoidal_encoding(max_sequence_length=L, d_model=d, base=base, dtype=torch.float64)
    tolerance = _tolerance(L, base)
    if answer.shape == (d, L) and L != d and close(answer.T, expected):
        return Feedback(MISTAKE, f"Transposed: shape {tuple(answer.shape)}; rows are positions and columns dimensions, "
                                 f"so the table is (max_sequence_length, d_model) = ({L}, {d}).")
    if L != d and answer.shape in ((d, L), (L, d)):
        # The sizes swapping roles (a common slide's code): d rows for positions 0 .. d - 1, L columns,
        # and the exponent 2i / d. With L == d the mistake gives the right table, so there is nothing to name.
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
        # Both sizes in each other's places wherever they are used (`d, L = X.shape` for X of shape (L, d)): the
        # table of d positions and d_model = L, exponent 2i / L included.
        both_swapped = _variant(d, L, base, exponent=_pair_exponent)
        if answer.shape == (d, L) and close(answer, both_swapped):
            return Feedback(MISTAKE, f"The two sizes in each other's places: this is the table of {d} positions with "
                                     f"d_model = {L}. The table is (max_sequence_length, d_model) = ({L}, {d}): set the "
                                     f"sizes the right way round where they are made (X.shape is (max_sequence_length, "
                                     "d_model)) and build it again.")
        if answer.shape == (L, d) and close(answer, both_swapped.T):
            return Feedback(MISTAKE, f"The right shape, but `.T` of the table with the two sizes in each other's places "
                                     f"({d} positions, d_model = {L}): its rows are still its {L} columns and its "
                                     f"columns its {d} positions. `.T` moves numbers, it does not recompute them: set "
                                     "the sizes the right way round where they are made and build the table again.")
    if d % 2 == 1 and answer.shape == (L, d + 1) and _matches(answer[:, :d], expected, tolerance):
        return Feedback(MISTAKE, f"{d + 1} columns for d_model = {d}: with an odd d_model, stack + flatten pairs the last "
                                 "sine column with an extra cosine column. Keep the first d_model columns.")
    if answer.shape == (d, L) and L != d:
        return Feedback(WRONG, f"Shape {tuple(answer.shape)}: the two sizes in each other's places. The table is "
                               f"(max_sequence_length, d_model) = ({L}, {d}): one row per position.")
    if answer.shape != (L, d):
        return Feedback(WRONG, f"Shape {tuple(answer.shape)}, expected (max_sequence_length, d_model) = ({L}, {d}).")
    if not answer.is_floating_point():
        return Feedback(WRONG, f"dtype {answer.dtype}: the encoding holds fractions, use a floating-point dtype.")
    # A table rounded to float16 or bfloat16 misses 1e-4; within a few of its own rounding steps, its dtype is at fault
    # (or it is the dtype asked for).
    rounding = 4 * torch.finfo(answer.dtype).eps
    rounded = rounding > 1e-4 and _matches(answer, expected, tolerance + rounding)
    if _matches(answer, expected, tolerance) or rounded:
        maker = made_by(given) or _copied_from_builder(given, answer, L, d, base)
        if maker is not None:
            return Feedback(MISTAKE, f"The numbers are right, but the table is the package's own, from "
                                     f"{_MAKERS.get(maker, maker)}. The exercise asks you to build it yourself: "
                                     "positions, denominators, torch.sin and torch.cos.")
        if dtype is not None and isinstance(given, (list, tuple)):
            return Feedback(MISTAKE, "The numbers are right, but as a Python list, which has no dtype: the checker "
                                     f"cannot tell whether your table is {dtype}. Pass the tensor itself.")
        if (dtype is None and rounded) or (dtype is not None and answer.dtype != dtype):
            return Feedback(MISTAKE, _wrong_dtype(answer.dtype, dtype))
        note = (" (You gave a NumPy array; the table is meant as a torch tensor: torch.from_numpy turns one into the "
                "other.)" if isinstance(given, np.ndarray) else "")
        return Feedback(CORRECT, f"Correct: a ({L}, {d}) table, sin and cos interleaved, matching the formula to "
                                 f"{_shown(tolerance)}.{note}")
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
    mistake = first_mistake(lambda table: _matches(answer, table, tolerance),
                            [("Not quite: " + m, build) for m, build in mistakes])
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


@exercise("the shape of a table built from X.shape", prediction=True)
def check_table_shape(answer: object, *, max_sequence_length: int, d_model: int) -> Feedback:
    """The shape of the table that stack + flatten builds when `d, L = X.shape` reads X of shape
    (max_sequence_length, d_model) the wrong way round. A tuple, a list or a torch.Size is read."""
    L = check_size("max_sequence_length", max_sequence_length, maximum=100_000)
    d = check_size("d_model", d_model, maximum=100_000)
    expected = (d, 2 * ((L + 1) // 2))
    if answer is None:
        return not_attempted("a pair (rows, columns)")
    shape = as_shape(answer)
    if shape is None or len(shape) != 2:
        return Feedback(WRONG, f"Expected a pair (rows, columns) such as (4, 7), got {describe(answer)}.", readable=False)
    read = (f"`d, L = X.shape` unpacks X's shape ({L}, {d}) in order, so d = {L} and L = {d}: the code makes L = {d} "
            f"positions and one (sin, cos) pair per even number below d = {L}, {expected[1]} columns")
    if shape == expected:
        return Feedback(CORRECT, f"Correct: {expected}. `d, L = X.shape` makes d = {L} and L = {d}.")
    if shape == (L, d) and (L, d) != expected:
        return Feedback(MISTAKE, f"{(L, d)} is the shape the code means to build. But {read}.")
    if shape == expected[::-1]:
        return Feedback(MISTAKE, f"The right sizes in the wrong order: rows are positions. {read}.")
    if shape == (d, L) and L % 2:
        return Feedback(MISTAKE, f"Stack + flatten makes two columns per denominator: with d = {L}, odd, that is "
                                 f"{expected[1]} columns, one more than d. The rows are right: L = {d} positions.")
    if shape[0] == expected[0]:
        pairs = expected[1] // 2
        counted = " You counted the denominators, not the columns." if shape[1] == pairs else ""
        return Feedback(MISTAKE, f"{expected[0]} rows is right: L = {d} positions.{counted} The code makes {pairs} "
                                 f"denominators, one per even number below d = {L}. `stack` pairs each one's sine with "
                                 f"its cosine, and `flatten` makes 2 columns per pair: {expected[1]}.")
    return Feedback(WRONG, f"You said {shape}. Read the first line as Python does: which number lands in d, which in L?")


# The last two have one pair: d_model // 2 - 1 = 0 steps in the exponent, and tensor2tensor's one denominator is 1.
_FUNCTION_SIZES = ((10, 5), (6, 8), (4, 9), (7, 12), (5, 2), (3, 3))


def _t2t(length: int, d_model: int, *, exponent_steps: int | None = None, first_position: int = 0,
         multiply: bool = False) -> torch.Tensor:
    """tensor2tensor's table (get_timing_signal_1d), in float64: d_model // 2 denominators, geometric from 1 to
    10000 with both ends included (one pair: the denominator 1, as its max(num_timescales - 1, 1)); all sines,
    then all cosines, then one column of zeros for an odd d_model.
    The keywords build one deliberate mistake each."""
    n = d_model // 2
    steps_to_base = max(n - 1, 1) if exponent_steps is None else exponent_steps
    denominator = DEFAULT_BASE ** (torch.arange(n, dtype=torch.float64) / steps_to_base)
    position = torch.arange(first_position, first_position + length, dtype=torch.float64)[:, None]
    angle = position * denominator if multiply else position / denominator
    return torch.cat([torch.sin(angle), torch.cos(angle), torch.zeros(length, d_model % 2, dtype=torch.float64)], dim=1)


def _judge_t2t(table: object, length: int, d_model: int) -> Feedback | None:
    """None if `table` is tensor2tensor's (length, d_model) table (within check_encoding's tolerance), else why not."""
    L, d = length, d_model
    n = d // 2
    columns = "column" if n == 1 else "columns"
    layout = f"{n} sine {columns}, then {n} cosine {columns}" + (", then one column of zeros" if d % 2 else "")
    answer = as_tensor(table, f"a ({L}, {d}) table") if table is not None else Feedback(WRONG, "return the table")
    if n == 1 and isinstance(table, torch.Tensor) and table.is_floating_point() and bool(table.isnan().any()):
        return Feedback(MISTAKE, f"The table holds nan. With d_model = {d} there is one pair, so pairs - 1 = 0 and the "
                                 "exponent divides by zero, as in tensor2tensor's 2017 code. Since 2018 it divides by "
                                 "max(pairs - 1, 1), so its one denominator is 1.")
    if isinstance(answer, Feedback):
        return Feedback(WRONG, f"my_encoding({L}, {d}) returned {describe(table)}, not "
                               f"a table of numbers: {answer.message}")
    expected = _t2t(L, d)
    tolerance = _tolerance(L, DEFAULT_BASE)
    shape = tuple(answer.shape)
    if answer.is_complex() or answer.is_meta:
        return Feedback(WRONG, f"Got {describe(table)}; expected a real ({L}, {d}) table.")
    if shape == (d, L) and L != d:
        if _matches(answer.T, expected, tolerance):
            return Feedback(MISTAKE, f"Transposed: shape {shape}, expected ({L}, {d}). Rows are positions.")
        return Feedback(WRONG, f"Shape {shape}, expected (max_sequence_length, d_model) = ({L}, {d}): one row per "
                               "position.")
    if d % 2 == 1 and shape in ((L, d - 1), (L, d + 1)):
        return Feedback(MISTAKE, f"{shape[1]} columns for d_model = {d}. The layout is {layout}.")
    if shape != (L, d):
        return Feedback(WRONG, f"Shape {shape}, expected (max_sequence_length, d_model) = ({L}, {d}).")
    if not answer.is_floating_point():
        return Feedback(WRONG, f"dtype {answer.dtype}: the encoding holds fractions, use a floating-point dtype.")
    rounding = 4 * torch.finfo(answer.dtype).eps
    if _matches(answer, expected, tolerance):
        return None
    if rounding > 1e-4 and _matches(answer, expected, tolerance + rounding):
        return Feedback(MISTAKE, _wrong_dtype(answer.dtype, None))
    zeros = expected[:, 2 * n:]

    def paper() -> torch.Tensor:
        angle = torch.arange(L, dtype=torch.float64)[:, None] / DEFAULT_BASE ** (2 * torch.arange(n) / d)
        return torch.cat([torch.sin(angle), torch.cos(angle), zeros], dim=1)

    def one_denominator(denominator: float) -> torch.Tensor:
        angle = torch.arange(L, dtype=torch.float64)[:, None] / torch.full((n,), denominator, dtype=torch.float64)
        return torch.cat([torch.sin(angle), torch.cos(angle), zeros], dim=1)

    def interleaved() -> torch.Tensor:
        pairs = torch.stack([expected[:, :n], expected[:, n:2 * n]], dim=2)
        return torch.cat([torch.flatten(pairs, 1, 2), zeros], dim=1)

    step = ("with 2 pairs, the second is the first times 10000" if n == 2
            else f"each is the one before times 10000^(1 / {max(n - 1, 1)})")
    mistakes = [
        (f"those are the paper's denominators, 10000^(2i / d_model), and the last is short of 10000. tensor2tensor's "
         f"denominators run from 1 to exactly 10000: {step}.", paper),
        (f"the denominators stop one step short of 10000. With both ends included, {n} denominators take "
         f"{n - 1} step{'s' if n != 2 else ''}, not {n}.", lambda: _t2t(L, d, exponent_steps=n)),
        (f"that is the interleaved layout, sin, cos, sin, cos. tensor2tensor's is {layout}.", interleaved),
        (f"the cosines come first. The layout is {layout}.",
         lambda: torch.cat([expected[:, n:2 * n], expected[:, :n], zeros], dim=1)),
        (f"the column of zeros goes last. The layout is {layout}.",
         lambda: torch.cat([zeros, expected[:, :2 * n]], dim=1)),
        (f"that is our table's odd layout, {(d + 1) // 2} sines and {n} cosine{'s' if n != 1 else ''}. "
         f"tensor2tensor's is {layout}.",
         lambda: (lambda t: torch.cat([t[:, 0::2], t[:, 1::2]], dim=1))(
             sinusoidal_encoding(max_sequence_length=L, d_model=d, dtype=torch.float64))),
        ("the positions start at 1: the first token is position 0 (torch.arange(max_sequence_length)).",
         lambda: _t2t(L, d, first_position=1)),
        ("the position was multiplied by the denominator: the angle is pos / denominator.",
         lambda: _t2t(L, d, multiply=True)),
    ] + ([("with one pair, the one denominator is 1 (tensor2tensor divides the exponent by max(pairs - 1, 1)), not "
           "10000.", lambda: one_denominator(DEFAULT_BASE))] if n == 1 else [])
    mistake = first_mistake(lambda built: _matches(answer, built, tolerance),
                            [("Not quite: " + m, build) for m, build in mistakes])
    if mistake:
        return mistake
    difference = (answer.double() - expected).abs()
    difference = torch.where(torch.isnan(difference), torch.full_like(difference, math.inf), difference)
    row, column = divmod(int(difference.argmax()), d)
    kind = (f"the sine of pair {column}" if column < n else f"the cosine of pair {column - n}" if column < 2 * n
            else "the column of zeros")
    return Feedback(WRONG, f"Not tensor2tensor's table ({layout}). Row {row}, column {column} ({kind}) is "
                           f"{float(answer[row, column]):.4f}, expected {float(expected[row, column]):.4f}.")


@exercise("tensor2tensor's table for any d_model")
def check_encoding_function(function: object) -> Feedback:
    """A function `function(max_sequence_length, d_model)` that builds tensor2tensor's table with torch alone
    (d_model // 2 denominators, geometric from 1 to 10000; all sines, all cosines, then a zero column for an odd
    d_model), for sizes of the checker's own: the first wrong table is named, with what it got and expected. A
    function that calls the package's steps or builders (even_denominator, to_concatenated, ...) is named. It is
    called with the sizes in that order, not by name, as the wavelength checker calls its function: the learner may
    name the parameters as they like."""
    if function is None:
        return not_attempted("a function my_encoding(max_sequence_length, d_model)")
    if isinstance(function, (torch.Tensor, np.ndarray, list, tuple)):
        return Feedback(MISTAKE, f"That is a table, {describe(function)}, not a function. Write `def my_encoding("
                                 "max_sequence_length, d_model):` that builds and returns the table for any sizes.")
    if not callable(function):
        return Feedback(WRONG, f"Expected a function, got {describe(function)}.", readable=False)
    package = [getattr(steps, name) for name in steps.__all__ if inspect.isfunction(getattr(steps, name))]
    package += [sinusoidal_encoding, PositionalEncoding.forward]
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # no signature to read: calling the function will tell
        signature = None
    L, d = _FUNCTION_SIZES[0]
    try:
        signature is None or signature.bind(L, d)
    except TypeError as error:
        return Feedback(MISTAKE, f"The checker calls my_encoding({L}, {d}), max_sequence_length first, but your "
                                 f"function cannot take those two ({error}). Give it two parameters, "
                                 "max_sequence_length and d_model, in that order.")
    if calls_any(lambda: [function(L, d) for L, d in _FUNCTION_SIZES], package):
        return Feedback(MISTAKE, "Your function calls the package's own steps or builders. Build the table with torch "
                                 "alone: positions, denominators from the formula, torch.sin and torch.cos.")
    for L, d in _FUNCTION_SIZES:
        try:
            table = function(L, d)
        except (Exception, SystemExit) as error:  # the learner's code: whatever it raises is part of the answer
            text = str(error)[:100]
            one_pair = (f" With d_model = {d} there is one pair, so pairs - 1 = 0: its one denominator is 1."
                        if d // 2 == 1 else "")
            return Feedback(WRONG, f"my_encoding({L}, {d}), for max_sequence_length={L} and d_model={d}, raised "
                                   f"{type(error).__name__}: {text}. It must work for any sizes, odd d_model "
                                   f"included.{one_pair}")
        verdict = _judge_t2t(table, L, d)
        if verdict is not None:
            return Feedback(verdict.status, f"For max_sequence_length={L}, d_model={d}: {verdict.message}")
    tried = ", ".join(f"({L}, {d})" for L, d in _FUNCTION_SIZES)
    return Feedback(CORRECT, f"Correct: tensor2tensor's table for each (max_sequence_length, d_model) tried: "
                             f"{tried}.")

