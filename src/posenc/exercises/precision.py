"""Checkers for precision: where float32 angles go wrong, positions in bfloat16."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from .._checks import check_base, check_size, is_real
from ..builder import DEFAULT_BASE
from .feedback import (
    CORRECT,
    MISTAKE,
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
# float32's rounding step, relative: a float32 result is within _U of the exact value times its size.
_U = 2.0**-24
# Positions scanned at once.
_BLOCK = 4096


def _exact_denominators(d_model: int, base: float) -> torch.Tensor:
    return base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


class _Measure:
    """One way of measuring the angle error: `error(positions (n, 1), columns (k,))` gives the (n, k) errors, and
    `rate` holds per column a number r with error <= r x position at every position, so that no position below
    threshold / r passes threshold.
    """

    def __init__(self, error: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], rate: torch.Tensor) -> None:
        self.error, self.rate = error, rate * 1.001  # the float64 reference's own rounding, with room to spare


def _scan(measures: tuple[_Measure, ...], threshold: float, stop: Callable[[torch.Tensor], int]) -> torch.Tensor:
    """Per measure and per column, the first position whose error passes `threshold`: shape (measures, columns),
    MAX_ERROR_POSITION where none does before the scan ends.

    Positions are scanned block by block, each block only in the columns that can pass in it (by their rate) and
    have not passed yet, until a block would start at or after `stop(first)`: no answer lies beyond it.
    """
    soonest = torch.stack([threshold / measure.rate for measure in measures])  # no position before it passes
    first = torch.full(soonest.shape, MAX_ERROR_POSITION)
    start = min(int(soonest.min()), MAX_ERROR_POSITION)
    while start < min(stop(first), MAX_ERROR_POSITION):
        end = min(start + _BLOCK, MAX_ERROR_POSITION)
        positions = torch.arange(start, end, dtype=torch.float32)[:, None]
        for k, measure in enumerate(measures):
            live = ((soonest[k] < end) & (first[k] == MAX_ERROR_POSITION)).nonzero().flatten()
            if len(live):
                past = measure.error(positions, live) > threshold
                found = past.any(dim=0)
                first[k, live[found]] = start + past.int().argmax(dim=0)[found]
        start = end
    return first


def _angle_measure(denominator32: torch.Tensor, exact: torch.Tensor) -> _Measure:
    """|position / denominator32 in float32 - the exact angle|: the quotient's rounding and the denominator's."""
    return _Measure(lambda p, c: ((p / denominator32[c]).double() - p.double() / exact[c]).abs(),
                    (1 / denominator32.double() - 1 / exact).abs() + _U / denominator32.double())


@functools.lru_cache(maxsize=8)
def _crossings(d_model: int, base: float, threshold: float) -> tuple[int, frozenset[int]]:
    """The answer (float32 denominators rounded to nearest), and every answer that float32 denominators each one of the
    two float32 numbers around the exact one give (MAX_ERROR_POSITION if no position passes `threshold`).

    With a choice of two denominators per column, a position is a possible answer if it is one column's crossing for
    one of its choices and every other column has a choice that crosses no earlier: only positions up to the earliest
    "later of a column's two crossings" can be answers, and the scan looks no further.
    """
    exact = _exact_denominators(d_model, base)
    nearest = exact.float()
    infinity = torch.tensor(float("inf"))
    above = torch.where(nearest.double() < exact, torch.nextafter(nearest, infinity), nearest)
    below = torch.where(nearest.double() > exact, torch.nextafter(nearest, -infinity), nearest)
    low, high = _scan((_angle_measure(below, exact), _angle_measure(above, exact)), threshold,
                      lambda first: int(first.max(dim=0).values.min()))
    latest = int(torch.maximum(low, high).min())
    answer = int(torch.where(below == nearest, low, high).min())
    return answer, frozenset(p for p in torch.cat([low, high]).tolist() if p <= latest and p < MAX_ERROR_POSITION)


def _angle_error(position: int, d_model: int, base: float) -> float:
    """The largest |float32 angle - exact angle| over the columns at one position."""
    exact = _exact_denominators(d_model, base)
    angle32 = torch.tensor(float(position), dtype=torch.float32) / exact.float()
    return float((angle32.double() - position / exact).abs().max())


@functools.lru_cache(maxsize=8)
def _other_crossing(kind: str, d_model: int, base: float, threshold: float) -> int | None:
    """The first position past `threshold` for an error measured another way than the exercise asks (None: none)."""
    exact = _exact_denominators(d_model, base)
    nearest = exact.float()
    angle = _angle_measure(nearest, exact)
    if kind == "multiplied":  # pos x (1 / denominator): two roundings
        reciprocal = (1 / exact).float()
        measure = _Measure(lambda p, c: ((p * reciprocal[c]).double() - p.double() / exact[c]).abs(),
                           (reciprocal.double() - 1 / exact).abs() + _U * reciprocal.double())
    elif kind == "in float32":  # both angles in float32: the exact one rounded too
        measure = _Measure(lambda p, c: (p / nearest[c] - (p.double() / exact[c]).float()).abs(),
                           (angle.rate + _U / exact) * (1 + 2 * _U))
    else:  # "sine": the sine and cosine values, which move no more than the angle
        def sine_error(p: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
            angle32, exact_angle = (p / nearest[c]).double(), p.double() / exact[c]
            return torch.maximum((angle32.sin() - exact_angle.sin()).abs(), (angle32.cos() - exact_angle.cos()).abs())
        measure = _Measure(sine_error, angle.rate)
    first = int(_scan((measure,), threshold, lambda first: int(first.min())).min())
    return first if first < MAX_ERROR_POSITION else None


@exercise("where float32 angles go wrong")
def check_error_position(answer: int | None, *, d_model: int, threshold: float = 1e-3,
                         base: float = DEFAULT_BASE) -> Feedback:
    """The first position whose float32 angles pos / denominator (largest over the columns) are off by more than
    `threshold` from the exact angle.

    The float32 angles are computed as the stepwise notebooks do: positions and denominators in float32, one
    division, which IEEE arithmetic rounds the same way on every CPU. The answer is exact, not "about": near the
    crossing the error stays just under the threshold for hundreds of positions (at d_model = 64 it reaches 0.99837e-3
    at 17,345 and first passes 1e-3 at 17,428), so a window around it would accept positions where the error has not
    passed. What may differ between right computations is a float32 denominator: base^(2i / d_model) rounded to
    nearest (float64 rounded to float32, which the checker uses) or, from a float32 `pow` accurate to one unit in the
    last place, the float32 number on the other side of the exact value. One such step moves the crossing by
    thousands of positions (the error grows as position x the denominator's rounding), so each answer those
    denominators give is accepted, and named as such: at d_model = 64, 14,050 and 15,411 besides 17,428.
    """
    d_model = check_size("d_model", d_model, maximum=1024)
    base = check_base("base", base)
    if not is_real(threshold) or not 1e-6 <= threshold <= 0.1:
        raise ValueError(f"threshold must be a number from 1e-6 to 0.1, got {threshold!r}")
    threshold, base = float(threshold), float(base)
    expected, possible = _crossings(d_model, base, threshold)
    if expected >= MAX_ERROR_POSITION:
        raise ValueError(f"threshold={threshold} is not passed before position {MAX_ERROR_POSITION} for d_model={d_model}: "
                         "choose a smaller threshold or a larger d_model")
    if answer is None:
        return not_attempted("a position (a whole number)")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a position, a whole number, got {describe(answer)}.")
    if number == expected:
        return Feedback(CORRECT, f"Correct: the float32 angles first miss by more than {threshold:g} at position "
                                 f"{expected:,}.")
    if number in possible:
        return Feedback(CORRECT, "Correct for your float32 denominators, though one of them is not the float32 number "
                                 "nearest to base^(2i / d_model) but the one on the other side of it (a float32 pow "
                                 "accurate to one unit in the last place may return either). One such step moves the "
                                 "crossing by thousands of positions: the error grows as position x the denominator's "
                                 "rounding. With every denominator rounded to nearest (float64, then .float()), it is "
                                 f"{expected:,}.")
    if number < 0:
        return Feedback(WRONG, f"Positions run from 0; got {number}.")
    ways = [("multiplied", "the angle is computed as pos x (1 / denominator), two roundings where the exercise "
                           "asks for one division"),
            ("in float32", "the error is measured in float32, which rounds the exact angle too: subtract in "
                           "float64"),
            ("sine", "the sine and cosine values are compared, not the angles")]
    named = [what for kind, what in ways if _other_crossing(kind, d_model, base, threshold) == number]
    if named:
        return Feedback(MISTAKE, f"{number:,} is where the error first passes {threshold:g} when "
                                 f"{'; or when '.join(named)}. The exercise asks for the first position whose angle "
                                 f"pos / denominator, in float32, is off by more than {threshold:g} from the float64 "
                                 "angle.")
    if number < expected:
        return Feedback(WRONG, f"Too early: at position {number:,} the largest angle error is "
                               f"{_angle_error(number, d_model, base):.4e}, still not above {threshold:g}.")
    return Feedback(WRONG, f"Too late: the error already passed {threshold:g} before position {number:,}; look for "
                           "the first position where it does (e.g. (error > threshold).nonzero()[0]).")


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
    """
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=_MAX_BFLOAT16_POSITIONS)
    expected, up = _bfloat16_distinct(max_sequence_length)
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
    if max_sequence_length > 512:
        above = expected - 256 - up  # the values from 256 up to the last position, 128 per power of two
        mistakes.append((f"{number:,} counts 256 numbers from each power of two to the next. bfloat16's 8 significant "
                         "bits start with a 1, so only 7 can vary: 2^7 = 128 numbers per stretch. Expected "
                         f"{expected:,}.", 256 + 2 * above + up))
    if up:
        mistakes.append((f"One short: the last position, {max_sequence_length - 1:,}, is not a bfloat16 number and "
                         f"rounds up to {max_sequence_length:,}, a value above every position, which counts too. "
                         f"Expected {expected:,}.", expected - 1))
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    if abs(number - expected) <= 2:
        return Feedback(WRONG, f"Close: {number:,}, expected {expected:,}. Check the ends of each stretch: 256 and 512 "
                               "count once, and a position halfway between two values goes to the one whose last "
                               "significant bit is 0 (257 to 256, 514 to 512).")
    return Feedback(WRONG, f"Got {number:,}, expected {expected:,}: count every whole number up to 256, then every 2nd "
                           "up to 512, then every 4th up to 1024, and so on, up to the last position.")
