"""Checkers for the wavelengths and relative positions: the first position where a column is negative, a function
for any column's wavelength, a function for the last column that completes a full turn within a table, the positions a
table needs before half its columns make a full turn, the position least like 10 by the slowest pair, the shift as a
rotation, the pairs that still turn with LoFTR's scale."""

from __future__ import annotations

import inspect
import math

import torch

from .. import encoding as steps
from .. import example
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

__all__ = ["check_first_negative", "check_half_turn_length", "check_last_full_turn_function", "show_column",
           "show_half_turn_lengths", "check_least_alike_by_slowest_pair", "show_least_alike", "check_loftr_turning_pairs"]


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
        return Feedback(WRONG, f"Expected a whole position, got {number!r}.", readable=False)

    def near(value: float) -> set[int]:
        return {math.floor(value), round(value), math.ceil(value)}

    def entry(pos: int) -> str:
        return f"at pos = {pos} the angle is {pos / denominator:.4f}, and {name} = {wave(pos / denominator):+.4f}"

    mistakes = [
        (f"One too early: {entry(expected - 1)}, not yet below zero. The angle passes {limit_name} only after "
         f"{crossing:.2f}.", {expected - 1}),
        (f"That is a whole wavelength, 2 pi x {denominator:.6g}, where the wave is back where it started; "
         + ("a sine is negative only from half a wavelength to a whole one." if sine else
          "a cosine is negative only from a quarter to three quarters of a wavelength."),
         near(2 * math.pi * denominator)),
        (f"There the sine is at its peak ({entry(round(math.pi / 2 * denominator))}): it falls to zero only at an "
         "angle of pi.", near(math.pi / 2 * denominator) if sine else set()),
        (f"That is where a sine would turn negative (angle pi); a cosine, {name}, starts at 1 and first turns "
         "negative at angle pi / 2.", set() if sine else near(math.pi * denominator)),
        (f"That is the denominator {base:g}^({two_i}/{d_model}) itself, where the angle is 1 radian; "
         f"{'a sine' if sine else 'a cosine'} turns negative at {limit_name}.", near(denominator)),
        (f"That uses {base:g}^({column}/{d_model}) as the denominator. A cosine column j shares the denominator of "
         f"the sine column before it, {base:g}^(({column} - 1)/{d_model}) = {denominator:.6g}.",
         set() if sine else near(limit * base ** (column / d_model))),
        (f"That takes i = j = {column}, so the denominator {base:g}^({2 * column}/{d_model}). But i counts pairs: "
         f"column {column} is in pair i = {column // 2}, whose denominator is {base:g}^({two_i}/{d_model}) = "
         f"{denominator:.6g}.", near(limit * base ** (2 * column / d_model))),
    ]
    if column < example.D_MODEL != d_model:  # the column at the width the learner has on screen
        other = base ** (two_i / example.D_MODEL)
        mistakes.append((f"That is column {column} at the running example's d_model = {example.D_MODEL}, "
                         f"{'sin' if sine else 'cos'}(pos / {other:.6g}). Here d_model = {d_model}, so the column is "
                         f"{name}.", {math.floor(limit * other) + 1}))
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


def show_half_turn_lengths(prediction: object, *, d_models: tuple[int, ...]) -> None:
    """Print, for each d_model, the last column of the first half, its wavelength and the fewest positions for half the
    columns to make a full turn, then the next column's wavelength: the run after the half-turn prediction. It holds the
    line that would compute the answer, so it prints only once a checker has judged `prediction` (see `predicted`)."""
    if not predicted(prediction):
        return
    header = ["d_model", "last column of the first half", "its wavelength", "positions needed", "next column's wavelength"]
    print("   ".join(header))
    widths = [len(name) for name in header]
    for d_model in d_models:
        d_model = check_size("d_model", d_model, minimum=4, maximum=100_000)
        half, needed, wavelength = _half_turn_length(d_model, DEFAULT_BASE)
        cells = [d_model, half - 1, f"{wavelength:.1f}", needed, f"{float(_column_wavelengths(d_model, DEFAULT_BASE)[half]):.1f}"]
        print("   ".join(f"{cell:>{width}}" for cell, width in zip(cells, widths)))
    if all(d_model % 4 == 0 for d_model in d_models):
        print("The next column is in pair d_model / 4, where 2i/d_model = 1/2. It turns once every 2π · 10000^(1/2) = "
              f"{2 * math.pi * DEFAULT_BASE ** 0.5:.1f} positions, at every d_model above.")


def _least_alike(base: float, position: int = 10, d_model: int = 128, max_sequence_length: int = 64) -> tuple[int, int, float]:
    """(by the slowest pair alone, by all pairs, the slowest pair's wavelength): the position least like `position`."""
    table = sinusoidal_encoding(max_sequence_length=max_sequence_length, d_model=d_model, base=base).double()
    slowest = float(frequencies(d_model=d_model, base=base).min())
    by_slowest = int(torch.cos(slowest * (torch.arange(max_sequence_length, dtype=torch.float64) - position)).argmin())
    return by_slowest, int((table @ table[position]).argmin()), 2 * math.pi / slowest


@exercise("the position least like 10 by the slowest pair alone, base 10", prediction=True)
def check_least_alike_by_slowest_pair(answer: object) -> Feedback:
    """A prediction (d_model = 128, 64 positions, row 10, base 10): by the slowest pair alone, whose share of
    PE[q] . PE[10] is cos(w (q - 10)), the position q least like 10. It is lowest half a turn past 10, at 10 + 30.3:
    position 40 (40.3 is taken too). The usual slips are named (tests/test_checkers_encoding.py lists them)."""
    expected, by_all, wavelength = _least_alike(10.0)
    half, end, base_wavelength = wavelength / 2, 63, _least_alike(DEFAULT_BASE)[2]
    why = (f"The slowest pair adds cos(w (q - 10)) to the dot product. It is lowest half a turn past 10: "
           f"10 + {half:.1f} = {10 + half:.1f}, and the nearest position is {expected}.")
    if answer is None:
        return not_attempted("a position from 0 to 63")
    number = as_number(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a position, a number from 0 to 63, got {describe(answer)}.", readable=False)
    if abs(number - expected) < 0.5:
        return Feedback(CORRECT, f"Correct: {expected}. {why}")
    mistakes = [
        (f"That is half the wavelength, {half:.1f}: how far past 10 the pair is least alike. Add it to 10.",
         lambda n: abs(n - half) <= 1),
        (f"That is one whole wavelength, {wavelength:.1f}. After a full turn the pair is back where it started, as alike "
         "as it gets. Least alike is half a turn on.", lambda n: abs(n - wavelength) <= 1),
        (f"That is a full turn past 10, {10 + wavelength:.1f}. There the pair is back where it started, and it is past "
         f"the last position, {end}.", lambda n: abs(n - 10 - wavelength) <= 1),
        (f"That is half a turn before 10, {10 - half:.1f}, before position 0. Look half a turn after 10.",
         lambda n: abs(n - 10 + half) <= 1),
        (f"That is the last position. It was the answer at base 10,000, where the slowest pair turns once every "
         f"{base_wavelength:,.1f} positions. At base 10 it turns within the table.", lambda n: n == end),
        (f"{by_all} is the least-alike position by all pairs together, as the slider's caption shows at base 10. The "
         "question asks about the slowest pair alone.", lambda n: n == by_all),
        (f"Close: half a turn past 10 is {10 + half:.1f}, and the nearest position is {expected}.",
         lambda n: abs(n - 10 - half) < 1.5),
    ]
    for message, slip in mistakes:
        if slip(number):
            return Feedback(MISTAKE, f"{message} {why}" if not message.startswith("Close") else message)
    return Feedback(WRONG, f"You predicted {number:g}; by the slowest pair alone, the position least like 10 is "
                           f"{expected}. {why}")


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
        number = None if isinstance(value, (str, bytes)) else as_count(value)  # "33" is text, not a column
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
        ("that uses 10000^(i/d_model), so your denominators are the square roots of the right ones. The exponent "
         "is 2i/d_model.",
         lambda length, d: max((2 * i + 1 for i in range(d // 2) if 2 * math.pi * DEFAULT_BASE ** (i / d) <= length - 1),
                               default=-1)),
    ]
    for message, rule in mistakes:
        if matches(rule):
            return Feedback(MISTAKE, "Not quite: " + message)
    for number, (length, d) in zip(got, _FULL_TURN_CASES):
        expected = _last_full_turn(length, d)
        if number != expected:
            # Say which way it misses, not the expected column: eight messages must not fill a lookup table.
            verdict = (f"is not a column of a table with d_model = {d}" if not 0 <= number < d else
                       "does not complete a full turn there" if number > expected else
                       "turns, but a later column does too")
            return Feedback(WRONG, f"my_last_full_turn({length}, {d}) returned {number}. That column {verdict}.")
    return Feedback(WRONG, "Not the last column.")  # not reached: some case differs


def _half_turn_length(d_model: int, base: float) -> tuple[int, int, float]:
    """(h, the fewest positions, w): half the columns, h = ceil(d_model / 2), make a full turn within positions 0 to
    max_sequence_length - 1 once the last position reaches w, the wavelength of column h - 1 (the slowest of them)."""
    half = (d_model + 1) // 2
    wavelength = float(_column_wavelengths(d_model, base)[half - 1])
    return half, math.ceil(wavelength) + 1, wavelength


@exercise("positions a table needs before half its columns make a full turn", prediction=True)
def check_half_turn_length(answer: int | None, *, d_model: int, base: float = DEFAULT_BASE) -> Feedback:
    """The fewest positions, max_sequence_length, a table needs so that half of its d_model columns make a full turn
    within positions 0 to max_sequence_length - 1: the slowest of columns 0 to d_model / 2 - 1 has a wavelength of at
    most the last position. The usual mistakes are named (tests/test_checkers_encoding.py lists them)."""
    d_model = check_size("d_model", d_model, minimum=2, maximum=100_000)
    base = check_base("base", base)
    half, expected, wavelength = _half_turn_length(d_model, base)
    column, pair = half - 1, (half - 1) // 2
    lengths = _column_wavelengths(d_model, base)
    if answer is None:
        return not_attempted("a number of positions")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a whole number of positions, got {describe(answer)}.", readable=False)
    if number == expected:
        return Feedback(CORRECT, f"Correct: {expected}. Half of {d_model} columns is columns 0 to {column}. The last of "
                                 f"them, in pair {pair}, turns once every {wavelength:.1f} positions, so the table's last "
                                 f"position must be at least {expected - 1}. Positions 0 to {expected - 1} make "
                                 f"{expected}.")

    def near(value: float) -> set[int]:
        return {math.floor(value), math.ceil(value), math.ceil(value) + 1}

    denominator = base ** (2 * pair / d_model)
    mistakes = [
        (f"{expected - 1} is the last position the table needs, since column {column} turns once every "
         f"{wavelength:.1f} positions. How many positions is that, counting position 0?", {expected - 1}),
        (f"That is column {column}'s wavelength, {wavelength:.1f} positions, as a whole number. A full turn must fit "
         "between position 0 and the table's last position, max_sequence_length - 1.",
         {math.floor(wavelength), math.ceil(wavelength)} - {expected - 1}),
        (f"That is near column {column}'s denominator, {base:,g}^({2 * pair}/{d_model}) = {denominator:.1f}. One turn "
         "takes 2π times the denominator.", near(denominator)),
        (f"That puts the column, {column}, in the exponent. Columns 2i and 2i + 1 share pair i's "
         f"{base:,g}^(2i/{d_model}), and column {column} is in pair {pair}.",
         near(2 * math.pi * base ** (column / d_model)) if column % 2 else set()),
        (f"That takes column {column} for pair {column}. Column {column} is in pair {pair}, with "
         f"2i = {2 * pair}.", near(2 * math.pi * base ** (2 * column / d_model)) if column else set()),
    ]
    mistake = first_mistake(lambda values: number in values and number != expected, mistakes)
    if mistake:
        return mistake
    if number < 1 or number > 10**12:
        return Feedback(WRONG, f"You said {number}, which is no table's number of positions. Find the slowest of the "
                               f"first {half} columns, then the fewest positions whose last position reaches its "
                               "wavelength.")
    turned = int((lengths <= number - 1).sum())
    if turned >= half:
        more = "more than half" if turned > half else "half, but fewer positions would do"
        return Feedback(WRONG, f"With {number} positions, {turned} of the {d_model} columns make a full turn: {more}.")
    return Feedback(WRONG, f"With {number} positions, {turned} of the {d_model} columns make a full turn, fewer than "
                           f"half. Find the slowest of the first {half} columns, then the fewest positions whose last "
                           "position reaches its wavelength.")


def check_loftr_turning_pairs(answer: object) -> Feedback:
    """A prediction: LoFTR's scale without brackets is -1 (d_model = 256, 64 pairs per axis, a table of positions 1 to
    256), so pair i's frequency is exp(-2i). How many pairs' angles pass 0.1 radian by position 256? The checker counts them."""
    reached = [256 * math.exp(-2 * i) for i in range(64)]
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
                            + f"Pair i reaches 256 e^(-2i) radian at position 256. Pair {actual - 1} reaches "
                              f"{reached[actual - 1]:.2f}, pair {actual} only {reached[actual]:.3f}.")
