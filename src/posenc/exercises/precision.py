"""Checkers for notebook 12: where float32 angles go wrong, positions in bfloat16."""

from __future__ import annotations

import functools

import torch

from .._validate import check_base, check_size, is_real
from ..builder import DEFAULT_BASE
from .feedback import (
    CORRECT,
    WRONG,
    Feedback,
    as_count,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_error_position", "check_bfloat16_positions", "MAX_ERROR_POSITION"]


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
