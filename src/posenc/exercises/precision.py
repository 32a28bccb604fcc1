"""Checkers for precision: a table whose angles no longer drift, positions in bfloat16."""

from __future__ import annotations

import re
from collections.abc import Callable

import torch

from .._checks import check_size
from .._provenance import calls_any, loaded_library_functions
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_function,
    close,
    describe,
    error_line,
    exercise,
    first_mistake,
    not_attempted,
    run_learner,
)
from .signature import refuses

__all__ = ["check_drift_fix", "check_bfloat16_positions"]


# The sizes a fixed builder is run on, none of them the notebook's: a long table, where a float32 step shows as an
# error that grows with the position, and a short one.
_DRIFT_CASES = ((30_000, 16), (5, 10))
# A float32 table from exact angles is off by at most half a float32 gap below 1 (2^-25) plus the sine's own rounding:
# the notebook prints such an error as "<1e-6".
_FIXED = 1e-6


def _exact_denominators(d_model: int) -> torch.Tensor:
    return DEFAULT_BASE ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def _table(angle: torch.Tensor) -> torch.Tensor:
    """The interleaved table of sines and cosines of `angle`, (positions, pairs), in the angle's dtype."""
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(-2)


def _drifting_tables(length: int, d_model: int) -> list[tuple[str, torch.Tensor]]:
    """The tables the usual half-fixes give: each still rounds one step to float32 before sin and cos.

    A float32 denominator is built both as the learner's code builds it (torch's float32 pow, whose last bit may
    differ from the nearest float32 number) and as the float64 one rounded to nearest: one bit moves the angle at
    position 100,000 by thousands of times the tolerance.
    """
    position = torch.arange(length, dtype=torch.float64)[:, None]
    denominator = _exact_denominators(d_model)
    float32_denominators = (DEFAULT_BASE ** (torch.arange(0, d_model, 2) / d_model), denominator.float())
    # The message does not name the denominator: finding the step is the exercise.
    still_float32 = ("Some value is still rounded to float32 before the division. A later cast to float64 cannot bring "
                     "the lost digits back. Print the dtype of each intermediate.")
    float32_angles = ("The angles are float32, as in stack + flatten: every position and denominator must be float64 "
                      "before the division.")
    return [
        *[(still_float32, lambda d=d: _table(position / d).float()) for d in float32_denominators],
        *[(float32_angles, lambda d=d: _table(position.float() / d)) for d in float32_denominators],
        ("The angles are rounded to float32 before sin and cos, each by up to angle x 2^-24: a drift like the f32 line's. "
         "Find the step that stores them in float32: only the finished table should be cast.",
         lambda: _table((position / denominator).float())),
    ]


@exercise("a table whose angles no longer drift")
def check_drift_fix(answer: Callable | None) -> Feedback:
    """A function `answer(*, max_sequence_length, d_model)` that builds the sinusoidal table, (max_sequence_length,
    d_model) in float32, within 1e-6 of the exact table at every position: its angles computed in float64 from float64
    positions and denominators, cast only at the end.

    It is run on sizes of its own, none of them the notebook's: 30,000 x 16, where a step still in float32 shows
    as an error that grows with the position, and 5 x 10. A function that calls the package's own
    `builder.sinusoidal_encoding` or `builder.frequencies` is named: the exercise is to fix the code by hand. So is
    one that calls transformers' `create_sinusoidal_embeddings` (XLM's, Flaubert's, DistilBERT's: it builds the table
    in NumPy float64), if loaded.
    """
    if (not_a_function := as_function(
            answer, signature="my_builder(*, max_sequence_length, d_model)",
            when_a_tensor="The checker runs your builder on new sizes: give it the parameters "
                          "(*, max_sequence_length, d_model) and return the table.")):
        return not_a_function
    if calls_any(lambda: run_learner(answer, max_sequence_length=5, d_model=10), [sinusoidal_encoding]):
        return Feedback(MISTAKE, "It calls the package's own builder.sinusoidal_encoding, which gets this right by "
                                 "another route: fix the function above by hand, so that each angle is computed in "
                                 "float64.")
    if calls_any(lambda: run_learner(answer, max_sequence_length=5, d_model=10), [frequencies]):
        return Feedback(MISTAKE, "It calls the package's builder.frequencies, directly or through another package "
                                 "function built on it (such as rope_scaling.rope_frequencies): fix the function above "
                                 "by hand, by finding the step of still_drifts that rounds to float32.")
    # XLM's function, and Marian's method (the sine and cosine halves side by side, which a permutation reorders).
    theirs = loaded_library_functions(lambda name: name in ("create_sinusoidal_embeddings", "create_weight"))
    if theirs and calls_any(lambda: run_learner(answer, max_sequence_length=5, d_model=10), theirs):
        return Feedback(MISTAKE, "It calls Hugging Face's sinusoidal table (transformers' create_sinusoidal_embeddings or "
                                 "Marian's create_weight), which builds the table in float64 by another route: fix the function "
                                 "above by hand, by finding the step of still_drifts that rounds to float32.")
    worst = 0.0
    for length, d_model in _DRIFT_CASES:
        sizes = f"max_sequence_length={length:,}, d_model={d_model}"
        kind, result = run_learner(answer, max_sequence_length=length, d_model=d_model)
        if kind == "raised":
            if refuses(result, answer, max_sequence_length=length, d_model=d_model):
                return Feedback(WRONG, f"Calling my_builder({sizes}) failed with {error_line(result)}: give the function "
                                       "the parameters (*, max_sequence_length, d_model).")
            return Feedback(WRONG, f"For {sizes} it raised {error_line(result)}.")
        if not isinstance(result, torch.Tensor):
            return Feedback(WRONG, f"For {sizes} it returned {describe(result)}; expected the table, a tensor.")
        if result.is_meta or result.is_complex() or not result.is_floating_point():
            return Feedback(WRONG, f"For {sizes} it returned {describe(result)}; expected a float32 table.")
        table = result.detach().cpu()
        if tuple(table.shape) != (length, d_model):
            if tuple(table.shape) == (d_model, length):
                return Feedback(MISTAKE, f"For {sizes} it returned the table transposed, {tuple(table.shape)}: one "
                                         "row per position, (max_sequence_length, d_model).")
            return Feedback(WRONG, f"For {sizes} it returned shape {tuple(table.shape)}, expected {(length, d_model)}: "
                                   "build the table for the sizes the function is given.")
        exact = _table(torch.arange(length, dtype=torch.float64)[:, None] / _exact_denominators(d_model))
        error = (table.double() - exact).abs().amax(dim=1)  # per position, the worst column
        if table.dtype not in (torch.float32, torch.float64):
            return Feedback(MISTAKE, f"For {sizes} it returned a {table.dtype} table: the exercise asks for float32, "
                                     "cast at the end.")
        if not bool(error.isfinite().all()):
            first = int((~error.isfinite()).nonzero()[0])
            return Feedback(WRONG, f"For {sizes} the table holds NaN or inf, first at position {first:,}.")
        if float(error.max()) > _FIXED:
            mistake = first_mistake(lambda built, table=table: close(table.float(), built, atol=1e-6),
                                    _drifting_tables(length, d_model))
            if mistake:
                return mistake
            grows = length > 1000 and float(error[:100].max()) <= 1e-5 < float(error.max())
            if grows:
                return Feedback(WRONG, f"For {sizes} the error still grows with the position: "
                                       f"{float(error[:100].max()):.0e} up to position 100, {float(error.max()):.0e} up "
                                       f"to {length:,}. Some step still rounds to float32 before the angle is finished.")
            first = int((error > _FIXED).nonzero()[0])
            return Feedback(WRONG, f"For {sizes} the table is off by {float(error.max()):.2g} at most, already "
                                   f"{float(error[first]):.2g} at position {first}: check the formula, "
                                   "sin(pos / 10000^(2i/d_model)) in column 2i and cos in column 2i + 1.")
        if table.dtype != torch.float32:
            return Feedback(MISTAKE, f"The numbers are right, but the table is {table.dtype}: cast the finished table "
                                     "to float32, the model's dtype, with .float().")
        worst = max(worst, float(error.max()))
    return Feedback(CORRECT, f"Correct: for {' and '.join(f'{n:,} x {d}' for n, d in _DRIFT_CASES)} the float32 table "
                             f"is within {worst:.0e} of the exact one at every position.")


# bfloat16 keeps 8 significant bits, so its whole numbers are exact only up to 2^8 = 256: positions 0 .. 256.
_BFLOAT16_EXACT_POSITIONS = 257
# Counted from bfloat16's own numbers, not from the positions: any count up to here is instant.
_MAX_BFLOAT16_POSITIONS = 1 << 40


def _bfloat16_distinct(n: int) -> tuple[int, bool]:
    """How many distinct bfloat16 values the positions 0 .. n - 1 take, and whether n - 1 rounds up to a value above it.

    Rounding keeps the order, and from 256 on every bfloat16 number is a whole number: the values are the whole
    bfloat16 numbers up to n - 1 (each is its own position's value) and, if it rounds up, n - 1's value.
    """
    finite = torch.arange(0, 0x7F80, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).double()  # 0 .. max
    whole = int(((finite == finite.round()) & (finite <= n - 1)).sum())
    # n - 1 < 2^53 is exact in float64; torch goes to bfloat16 through float32, which rounds as the positions do
    up = float(torch.tensor(float(n - 1), dtype=torch.float64).to(torch.bfloat16)) > n - 1
    return whole + up, up


@exercise("positions in bfloat16")
def check_bfloat16_positions(answer: int | None, *, max_sequence_length: int) -> Feedback:
    """How many distinct values the positions 0 .. max_sequence_length - 1 take when stored in bfloat16.

    Counted from bfloat16's numbers, so a length too large to build as a tensor (2^32) is checked as quickly.
    It is a transfer exercise, not a prediction: a learner who recounts after a named mistake is done, so progress()
    keeps the latest answer per size. No message gives the expected count or how far off an answer is; only the
    slips it names (one per position, the exact positions alone, 256 per stretch, the top end) get a hint.
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=_MAX_BFLOAT16_POSITIONS)
    expected, up = _bfloat16_distinct(max_sequence_length)
    if answer is None:
        return not_attempted("a count (a whole number)")
    if isinstance(answer, str) and re.fullmatch(r"\s*\d{1,3}(,\d{3})+\s*", answer):
        answer = answer.replace(",", "")  # "3,329", written the way the notebooks print counts
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a count, a whole number, got {describe(answer)}.", readable=False)
    if number == expected:
        return Feedback(CORRECT, f"Correct: {max_sequence_length:,} positions, {expected:,} distinct bfloat16 values.")
    # No message gives the expected count, or how far off the answer is: either would be the answer to copy. Each
    # named mistake says which stretch to recount.
    mistakes = [
        (f"{number:,} is one value per position, as if each were stored exactly: too many. bfloat16 keeps 8 significant "
         "bits: above 256 only every 2nd whole number exists, above 512 every 4th.", max_sequence_length),
        (f"{number} counts only the exact positions 0 .. 256: too few. Above 256 bfloat16 still has every 2nd whole "
         "number, above 512 every 4th, and so on.", _BFLOAT16_EXACT_POSITIONS),
    ]
    if max_sequence_length > 512:
        above = expected - 256 - up  # the values from 256 up to the last position, 128 per power of two
        mistakes.append((f"{number:,} counts 256 numbers from each power of two to the next: too many. bfloat16's 8 "
                         "significant bits start with a 1, so only 7 can vary: 2^7 = 128 numbers per stretch.",
                         256 + 2 * above + up))
    if up:
        mistakes.append((f"Close. Check the top end: which bfloat16 number does the last position, "
                         f"{max_sequence_length - 1:,}, round to? Then the bottom: 0 to 255 is 256 values, and 256 "
                         "starts the first stretch.", expected - 1))
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    # Past the named mistakes, no message says which way the count is off: a direction would let a loop bisect to it.
    if abs(number - expected) <= 2:
        return Feedback(WRONG, f"Close, but not {number:,}. Check the ends of each stretch: 256 and 512 "
                               "count once, and a position halfway between two values goes to the one whose last "
                               "significant bit is 0 (257 to 256, 514 to 512).")
    return Feedback(WRONG, f"Got {number:,}, which is not the count. Count every whole number up to 256, then every 2nd up to "
                           "512, then every 4th up to 1024, and so on, up to the last position.")
