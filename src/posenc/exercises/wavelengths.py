"""Checkers for the wavelengths and relative positions: the first position where a column is negative, a function
for any column's wavelength, a function for the last column that completes a full turn within a table, the columns
that make a full turn within a table, the shift as a rotation, the pairs that still turn with LoFTR's scale."""

from __future__ import annotations

import inspect
import math

import torch

from .. import encoding as steps
from .._checks import check_base, check_size
from .._provenance import calls_any
from ..builder import DEFAULT_BASE, frequencies, sinusoidal_encoding
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_number,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)
from .predictions import check_prediction, predicted

__all__ = ["check_first_negative", "check_last_full_turn_function", "check_repeating_columns", "show_column",
           "show_least_alike", "show_turning_columns", "check_loftr_turning_pairs"]


@exercise("where a column first turns negative", prediction=True)
def check_first_negative(answer: int | None, *, column: int, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """The first whole position at which column `column` of the table is below zero.

    The checker computes it from the column's own formula; this help gives no worked case, since an exercise asks for
    one. The usual mistakes are named (tests/test_checkers_encoding.py lists them).
    """
    d_model = check_size("d_model", d_model, maximum=100_000)
    column = check_size("column", column, minimum=0, maximum=d_model - 1)
    base = check_base("base", base)
    two_i = column - column % 2
    denominator = 1 / float(frequencies(d_model=d_model, base=base)[column // 2])
    sine = column % 2 == 0
    wave, limit, limit_name = (math.sin, math.pi, "pi") if sine else (math.cos, math.pi / 2, "pi / 2")
    crossing = limit * denominator  # where the angle pos / denominator reaches the limit
    expected = math.floor(crossing) + 1
    name = f"{'sin' if sine else 'cos'}(pos / {denominator:.6g})"
    if answer is None:
        return not_attempted("a whole position")
    number = as_number(answer)
    if number is None or not math.isfinite(number):
        return Feedback(WRONG, f"Expected a whole position, got {describe(answer)}.", readable=False)
    if number == expected:
        return Feedback(CORRECT, f"Correct: position {expected}. {name} turns negative once its angle passes "
                                 f"{limit_name}, at pos = {limit_name} x {denominator:.6g} = {crossing:.2f}; the first "
                                 f"whole position past that is {expected}.")
    if abs(number - crossing) < 0.01:
        return Feedback(MISTAKE, f"{number:g} is where the angle reaches {limit_name}, between two positions: the table "
                                 f"has a row for whole positions only, and the first one past {crossing:.2f} is the answer.")
    if not float(number).is_integer():
        return Feedback(WRONG, f"Expected a whole position, got {number:g}.", readable=False)

    def near(value: float) -> set[int]:
        return {math.floor(value), round(value), math.ceil(value)}

    def entry(pos: int) -> str:
        return f"at pos = {pos} the angle is {pos / denominator:.4f}, and {name} = {wave(pos / denominator):+.4f}"

    mistakes = [
        (f"One too early: {entry(expected - 1)}, not yet below zero. The angle passes {limit_name} only after "
         f"{crossing:.2f}.", {expected - 1}),
        (f"That is a whole wavelength, 2 pi x {denominator:.6g}, where the wave is back where it started; "
         f"{'a sine' if sine else 'a cosine'} is negative from {'half' if sine else 'a quarter of'} a wavelength on.",
         near(2 * math.pi * denominator)),
        (f"There the sine is at its peak ({entry(round(math.pi / 2 * denominator))}): it falls to zero only at an "
         "angle of pi.", near(math.pi / 2 * denominator) if sine else set()),
        (f"That is where a sine would turn negative (angle pi); a cosine, {name}, starts at 1 and is negative from "
         "angle pi / 2 on.", set() if sine else near(math.pi * denominator)),
        (f"That is the denominator {base:g}^({two_i}/{d_model}) itself, where the angle is 1 radian; "
         f"{'a sine' if sine else 'a cosine'} turns negative at {limit_name}.", near(denominator)),
        (f"That uses {base:g}^({column}/{d_model}) as the denominator. A cosine column j shares the denominator of "
         f"the sine column before it, {base:g}^(({column} - 1)/{d_model}) = {denominator:.6g}.",
         set() if sine else near(limit * base ** (column / d_model))),
        (f"That takes i = j = {column}, so the denominator {base:g}^({2 * column}/{d_model}). But i counts pairs: "
         f"column {column} is in pair i = {column // 2}, whose denominator is {base:g}^({two_i}/{d_model}) = "
         f"{denominator:.6g}.", near(limit * base ** (2 * column / d_model))),
    ]
    mistake = first_mistake(lambda values: number in values and number != expected, mistakes)
    if mistake:
        return mistake
    number = int(number)
    hint = f"Work out the column's denominator, then where its angle passes {limit_name}."
    if not 0 <= number <= 10**9:
        return Feedback(WRONG, f"You said {number:g}, which is no position of a table: positions count up from 0. {hint}")
    if number < expected:
        where = "not yet below zero"
    elif wave(number / denominator) < 0:
        where = "below zero, but it already was at an earlier position"
    else:
        where = "not below zero; the first negative stretch comes earlier"
    return Feedback(WRONG, f"You said {number}: there column {column} is {wave(number / denominator):+.4f}, {where}. {hint}")


# The last case turns every column (pair 1's wavelength, 628, fits in 99,999 steps): a function must stop at the
# table's last column.
_FULL_TURN_CASES = ((10, 6), (20, 8), (63, 8), (64, 16), (64, 128), (100, 512), (1000, 64), (100_000, 4))


def show_column(prediction: object, *, column: int, d_model: int, positions: int, base: float = DEFAULT_BASE) -> None:
    """Print one column of the table, positions 0 to `positions` - 1: the run cell of an exercise that asks for a
    prediction about it, so that the cell shows the numbers without the one line that would compute them.

    It prints only once a checker has judged `prediction` (see `predicted`); until then it says what it waits for.
    """
    if not predicted(prediction):
        return
    d_model = check_size("d_model", d_model, maximum=100_000)
    column = check_size("column", column, minimum=0, maximum=d_model - 1)
    positions = check_size("positions", positions, maximum=100_000)
    base = check_base("base", base)
    table = sinusoidal_encoding(max_sequence_length=positions, d_model=d_model, base=base)
    print(f"column {column} at d_model = {d_model}, positions 0 to {positions - 1}:")
    print(table[:, column])


def _column_wavelengths(d_model: int, base: float) -> torch.Tensor:
    """Each column's wavelength, 2 pi / frequency: columns 2i and 2i + 1 share pair i's."""
    return (2 * math.pi / frequencies(d_model=d_model, base=base)).repeat_interleave(2)[:d_model]


def show_turning_columns(prediction: object, *, d_models: tuple[int, ...], max_sequence_length: int) -> None:
    """Print, for each d_model, how many columns make a full turn within positions 0 to max_sequence_length - 1, and
    their share, then the share's limit as d_model grows: the run after the full-turn count prediction. It holds the
    line that would compute the answer, so it prints only once a checker has judged `prediction` (see `predicted`)."""
    if not predicted(prediction):
        return
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, minimum=2, maximum=10**9)
    last = max_sequence_length - 1
    header = f"columns that turn within positions 0 to {last}"
    print(f"d_model   {header}   share")
    for d_model in d_models:
        d_model = check_size("d_model", d_model, maximum=100_000)
        count = int((_column_wavelengths(d_model, DEFAULT_BASE) <= last).sum())
        print(f"{d_model:7}   {count:^{len(header)}}   {count / d_model:.3f}")
    limit = math.log(last / (2 * math.pi)) / math.log(DEFAULT_BASE)
    print(f"Pair i turns when 2π · 10000^(2i/d_model) <= {last}, that is when 2i/d_model <= log({last} / 2π) / "
          f"log(10000) = {limit:.3f}.\nSo the share tends to {limit:.3f} as d_model grows.")


def show_least_alike(prediction: object, *, bases: tuple[float, ...], position: int = 10, d_model: int = 128,
                     max_sequence_length: int = 64) -> None:
    """Print, for each base, the longest wavelength, the position least like `position` by the slowest pair alone
    (the smallest cos(w (q - position)) for its w), and by all pairs (the smallest dot product PE[q] . PE[position]):
    the run after the least-alike prediction. It holds the lines that would compute the answer, so it prints only once
    a checker has judged `prediction` (see `predicted`)."""
    if not predicted(prediction):
        return
    alone, together = "by the slowest pair alone", "by all pairs"
    print(f"{'':6}   {'':18}   position least like {position}")
    print(f"  base   longest wavelength   {alone}   {together}")
    positions = torch.arange(max_sequence_length, dtype=torch.float64)
    for base in bases:
        table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base)
        slowest = float(frequencies(d_model=d_model, base=base).min())
        by_slowest = int(torch.cos(slowest * (positions - position)).argmin())
        print(f"{base:>6,g}   {2 * math.pi / slowest:18.1f}   {by_slowest:>{len(alone)}}   "
              f"{int((table @ table[position]).argmin()):>{len(together)}}")


def _last_full_turn(max_sequence_length: int, d_model: int, steps: float | None = None) -> int:
    """The last column whose wavelength fits in `steps` (by default max_sequence_length - 1), or -1 if none does."""
    steps = max_sequence_length - 1 if steps is None else steps
    fits = [j for j in range(d_model) if 2 * math.pi * DEFAULT_BASE ** ((j - j % 2) / d_model) <= steps]
    return fits[-1] if fits else -1


@exercise("the last column that completes a full turn within the table")
def check_last_full_turn_function(function: object) -> Feedback:
    """A function `function(max_sequence_length, d_model)` that returns the last column j whose wave completes at
    least one full turn within positions 0 to max_sequence_length - 1: its wavelength is at most
    max_sequence_length - 1. It is called on cases of the checker's own (even d_model, at least one turn in each).
    A function that calls the package's steps or builders is named, and so are the usual mistakes
    (tests/test_checkers_encoding.py lists them)."""
    if function is None:
        return not_attempted("a function my_last_full_turn(max_sequence_length, d_model)")
    if not callable(function):
        return Feedback(WRONG, f"Expected a function, got {describe(function)}.", readable=False)
    package = [getattr(steps, name) for name in steps.__all__ if inspect.isfunction(getattr(steps, name))]
    package += [sinusoidal_encoding, frequencies, steps.PositionalEncoding.forward]
    if calls_any(lambda: [function(length, d) for length, d in _FULL_TURN_CASES], package):
        return Feedback(MISTAKE, "Your function calls the package's own steps or builders. Solve the wavelength "
                                 "2π · 10000^(2i/d_model) <= max_sequence_length - 1 yourself, with math.")
    got = []
    for length, d in _FULL_TURN_CASES:
        try:
            value = function(length, d)
        except (Exception, SystemExit) as error:  # the learner's code: whatever it raises is part of the answer
            return Feedback(WRONG, f"my_last_full_turn({length}, {d}) raised {type(error).__name__}: "
                                   f"{str(error)[:100]}.")
        number = as_count(value)
        if number is None:
            return Feedback(WRONG, f"my_last_full_turn({length}, {d}) returned {describe(value)}, not a whole "
                                   "column number.")
        got.append(number)

    def matches(rule) -> bool:
        return all(number == rule(length, d) for number, (length, d) in zip(got, _FULL_TURN_CASES))

    if matches(_last_full_turn):
        return Feedback(CORRECT, "Correct on every case tried, d_model = 4 to 512: the last pair i with "
                                 "2π · 10000^(2i/d_model) <= max_sequence_length - 1, and its cosine column 2i + 1. "
                                 "For example, 64 positions at d_model = 128 give column 33.")
    mistakes = [
        ("that puts the column j in the exponent, 10000^(j/d_model). Columns 2i and 2i + 1 share the pair's "
         "10000^(2i/d_model), so use 2i for both.",
         lambda length, d: max((j for j in range(d) if 2 * math.pi * DEFAULT_BASE ** (j / d) <= length - 1), default=-1)),
        ("that is the pair number i. The column asked for is its cosine, 2i + 1, which shares its wavelength.",
         lambda length, d: _last_full_turn(length, d) // 2),
        ("that is the pair's sine column, 2i. Its cosine partner, 2i + 1, shares the wavelength and comes after it.",
         lambda length, d: _last_full_turn(length, d) - 1),
        ("that is one past the last column that turns: either the count of columns, or the first column that "
         "does not turn. Columns start at 0, so the last one that turns is one less.",
         lambda length, d: _last_full_turn(length, d) + 1),
        ("a full turn must fit between position 0 and the last position, max_sequence_length - 1. You let it take "
         "max_sequence_length steps. With 63 positions and d_model = 8, column 3's wavelength, 62.83, does not fit.",
         lambda length, d: _last_full_turn(length, d, steps=length)),
        ("that compares the denominator with the table's length. One turn takes 2π times the denominator.",
         lambda length, d: _last_full_turn(length, d, steps=2 * math.pi * (length - 1))),
        (f"when every column turns, the answer is the table's last column, d_model - 1. my_last_full_turn(100000, 4) "
         f"returned {got[-1]}, past column 3: keep i at most d_model / 2 - 1.",
         lambda length, d: 2 * math.floor(d / 2 * math.log((length - 1) / (2 * math.pi)) / math.log(DEFAULT_BASE)) + 1),
    ]
    for message, rule in mistakes:
        if matches(rule):
            return Feedback(MISTAKE, "Not quite: " + message)
    for number, (length, d) in zip(got, _FULL_TURN_CASES):
        expected = _last_full_turn(length, d)
        if number != expected:
            return Feedback(WRONG, f"my_last_full_turn({length}, {d}) returned {number}; the last column that "
                                   f"completes a full turn is {expected}.")
    return Feedback(WRONG, "Not the last column.")  # not reached: some case differs


@exercise("columns that make a full turn within max_sequence_length positions", prediction=True)
def check_repeating_columns(answer: int | None, *, d_model: int, max_sequence_length: int,
                            base: float = DEFAULT_BASE) -> Feedback:
    """How many of d_model columns make a full turn within positions 0 to max_sequence_length - 1: their wavelength
    at `base` is at most max_sequence_length - 1 positions. In the explorer's wavelengths view, the dots on or below the
    dashed line at the last position."""
    d_model = check_size("d_model", d_model, maximum=100_000)
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=10**9)
    base = check_base("base", base)
    last = max_sequence_length - 1

    def column_wavelengths(at_base: float) -> torch.Tensor:
        return _column_wavelengths(d_model, at_base)

    def count(at_base: float) -> int:
        return int((column_wavelengths(at_base) <= last).sum())

    def count_at_width(width: int) -> int:
        # The same count at another d_model (the explorer's slider stops at 256).
        return int((_column_wavelengths(width, base) <= last).sum())

    lengths = column_wavelengths(base)
    expected = count(base)
    if answer is None:
        return not_attempted("a number of columns")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a whole number of columns, got {describe(answer)}.", readable=False)
    if number == expected:
        edge = [f" Column {j} turns once every {float(lengths[j]):,.1f} positions." for j in (expected - 1, expected)
                if 0 <= j < d_model]
        return Feedback(CORRECT, "Correct." + "".join(edge))
    what_to_count = (f"count the columns whose wavelength, 2 pi x {base:,g}^(2i/{d_model}), is at most {last} "
                     f"positions, the table's last position")
    pairs, positions = d_model // 2, max_sequence_length
    mistakes = [
        (f"A full turn must fit between position 0 and the last position, {last}. You counted the wavelengths shorter "
         f"than {max_sequence_length}.", int((lengths < max_sequence_length).sum())),
        (f"That doubles the count at d_model = {d_model // 2}, which is close but not exact. d_model = {d_model} has "
         f"one more pair between every two pairs of d_model = {d_model // 2}, and the last of them may fall on either "
         f"side of the line: {what_to_count}.", lambda: 2 * count_at_width(d_model // 2) if d_model >= 4 else None),
        (f"That is four times the count at d_model = {d_model // 4}, which is close but not exact: the count grows a "
         f"little slower than d_model: {what_to_count}.", lambda: 4 * count_at_width(d_model // 4) if d_model >= 8 else None),
        ("That counts pairs: a sin column and its cos partner share one wavelength, so every pair that turns is "
         "two columns.", expected // 2 if expected > 1 else None),
        ("That is the number of the last column that turns in time; counting from column 0, there is one column more.",
         expected - 1),
        (f"That is the count at d_model = {d_model // 2}. The question asks about d_model = {d_model}.",
         lambda: count_at_width(d_model // 2) if d_model >= 4 else None),
        (f"That is the count at d_model = {d_model // 4}. The question asks about d_model = {d_model}.",
         lambda: count_at_width(d_model // 4) if d_model >= 8 else None),
        ("Those are the columns that do not make a full turn within the table.", d_model - expected),
        (f"Not every column: at base {base:,g} the slowest columns make one turn only after about {float(lengths[-1]):,.0f} "
         f"positions, beyond the table's last position, {last}.", d_model),
        (f"Not a single column? Column 0's wavelength is 2 pi = 6.28 positions, less than the table's last position, "
         f"{last}: its stripes come back down the heatmap's left edge.", 0 if lengths[0] <= last else None),
        (f"{pairs} is half of d_model = {d_model} (the number of sin/cos pairs) and also max_sequence_length (the "
         f"number of positions); the count asked for is neither: {what_to_count}.",
         pairs if pairs == positions else None),
        (f"{pairs} is the number of sin/cos pairs, half of d_model = {d_model}; not every pair makes a full turn within the "
         f"table: {what_to_count}.", pairs if pairs > 0 else None),
        (f"{positions} is max_sequence_length, the number of positions; the question counts columns: {what_to_count}.",
         positions),
        (f"That counts the columns whose denominator, {base:,g}^(2i/{d_model}), is at most {last}: "
         "sin(pos / denominator) makes one turn as pos grows by 2 pi x denominator, so compare the wavelength, 2 pi times "
         "the denominator.", lambda: int((lengths / (2 * math.pi) <= last).sum())),
    ] + [(f"That is the count at base {other:,g}; this question asks about base {base:,g}.", lambda other=other: count(other))
         for other in (10.0, DEFAULT_BASE) if other != base]
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    if number % 2 and not expected % 2 and abs(number - expected) <= 4:
        return Feedback(WRONG, f"You said {number}, which is close but odd. A sin column and its cos partner share one "
                               "wavelength, so the columns that turn come in pairs and the count is even.")
    if abs(number - expected) <= 4:
        return Feedback(WRONG, f"You said {number}, which is close. Compute the wavelength 2 pi x {base:,g}^(2i/{d_model}) "
                               f"of each pair and count the pairs whose wavelength is at most {last}. Both columns of a pair "
                               "count, since they share one wavelength.")
    if not 0 <= number <= d_model:
        return Feedback(WRONG, f"You said {number}; the table has {d_model} columns, so the count is between 0 and "
                               f"{d_model}: {what_to_count}.")
    return Feedback(WRONG, f"You said {number}, which is too {'many' if number > expected else 'few'}: "
                           f"{what_to_count}.")


def check_loftr_turning_pairs(answer: object) -> Feedback:
    """A prediction: LoFTR's scale without brackets is -1 (d_model = 256, 64 pairs per axis, positions 1 to 256), so
    pair j's frequency is exp(-2j). How many pairs' angles pass 0.1 radian by position 256? The checker counts them."""
    reached = [256 * math.exp(-2 * j) for j in range(64)]
    actual = sum(angle > 0.1 for angle in reached)
    slips = {actual - 1: "Off by one: pair 0 counts too. ",
             actual + 1: f"Off by one: pair {actual} falls just short. ",
             55: "55 is the count with the brackets. "}
    given = as_count(answer)
    if answer is not None and given not in range(len(reached) + 1):  # "c", 1.5 or -1 is no count of 64 pairs
        return Feedback(WRONG, f"Expected a count of pairs from 0 to {len(reached)}, got {describe(answer)}.",
                        readable=False)
    return check_prediction(answer, actual=actual, question="the pairs that still turn without the brackets, d_model = 256",
                            explanation=(slips.get(given, "") if given != actual else "")
                            + f"Pair j reaches 256 e^(-2j) radian at position 256. Pair {actual - 1} reaches "
                              f"{reached[actual - 1]:.2f}, pair {actual} only {reached[actual]:.3f}. So pairs 0 to "
                              f"{actual - 1} pass 0.1.")
