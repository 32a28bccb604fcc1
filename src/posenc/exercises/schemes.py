"""Checkers for the position schemes beyond the sinusoid: RoPE undone by hand (either layout), RoPE's cos/sin tables
column by column, ALiBi's slopes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from .. import schemes
from .._checks import check_base, check_floating_tensor, check_size
from .._provenance import calls_any, loaded_library_functions, made_by
from ..builder import DEFAULT_BASE, frequencies
from ..schemes import alibi_slopes, apply_rotary, rotate_pairs
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_function,
    as_tensor,
    close,
    describe,
    error_line,
    exercise,
    first_mistake,
    not_attempted,
)
from .predictions import check_prediction

__all__ = ["check_rotary_undone", "check_rotary_tables", "check_alibi_slopes", "check_constant_score_terms"]


_OTHER_LAYOUT = {"interleaved": "half_split", "half_split": "interleaved"}


def _pairs(layout: str, d: int) -> str:
    """How a layout pairs the columns, as the learner reads it."""
    return "(2i, 2i+1)" if layout == "interleaved" else f"(i, i + {d // 2})"


@exercise("undoing RoPE")
def check_rotary_undone(answer: Callable | None, *, turned: torch.Tensor, base: float = DEFAULT_BASE,
                        layout: str = "interleaved") -> Feedback:
    """RoPE undone: a function `answer(turned)` that turns row p of `turned` (seq, d), whose pairs are those of
    `layout` ("interleaved": (2i, 2i+1); "half_split": (i, i + d/2)), back by the angles RoPE turned it by. A function
    that calls the package's rotations (`schemes.rotate_pairs`, `apply_rotary`, `rotation_matrix`) is named: the
    exercise is to write the turn pair by pair; so is one that calls transformers' `rotate_half` or
    `apply_rotary_pos_emb` (Llama's and its copies'), or rotary_embedding_torch's `rotate_half` or
    `apply_rotary_emb`, if loaded."""
    check_floating_tensor("turned", turned, ndim=(2,))
    if turned.shape[-1] % 2 or turned.shape[-1] == 0:
        raise ValueError(f"turned must have an even, non-zero number of columns d, got shape {tuple(turned.shape)}")
    base = check_base("base", base)
    if layout not in _OTHER_LAYOUT:
        raise ValueError(f"layout must be 'interleaved' or 'half_split', got {layout!r}")
    y = turned.detach().double()
    refused = as_function(answer, signature="my_unturn(turned)",
                          when_a_tensor="Wrap your lines in def my_unturn(turned): ... and return the rows.")
    if refused:
        return refused
    function = answer
    package = [schemes.rotate_pairs, schemes.apply_rotary, schemes.rotation_matrix, schemes._rotate]  # and the helper under them
    if calls_any(lambda: function(turned.clone()), package):
        return Feedback(MISTAKE, "It calls the package's own rotation (schemes.rotate_pairs, apply_rotary or "
                                 "rotation_matrix): turn each pair (a, b) back yourself, with cos and sin of its angle.")
    for library, names, owner in _LIBRARY_ROTARY:
        theirs = loaded_library_functions(lambda name, names=names: name in names, libraries=(library,))
        if theirs and calls_any(lambda: function(turned.clone()), theirs):
            found = ", ".join(sorted({theirs_function.__name__ for theirs_function in theirs}))
            return Feedback(MISTAKE, f"It calls {owner} own RoPE ({library}: {found}): pair the columns yourself "
                                     "and turn each pair (a, b) back, with cos and sin of its angle.")
    try:
        answer = function(turned.clone())
    except Exception as error:  # the learner's code: whatever it raises is part of the answer
        return Feedback(WRONG, f"my_unturn(turned) raised {error_line(error)}.")
    if answer is None:  # a written function that forgot its return is attempted, not "not attempted"
        return Feedback(WRONG, "my_unturn(turned) returned None: end it with return and the rows turned back.")
    seq, d = y.shape
    pairs, other = _pairs(layout, d), _OTHER_LAYOUT[layout]
    position = torch.arange(seq, dtype=torch.float64)[:, None]
    pair = torch.arange(d // 2, dtype=torch.float64)[None, :]
    angles = position * frequencies(d_model=d, base=base)[None, :]
    expected = rotate_pairs(y, -angles, layout=layout)
    answer = as_tensor(answer, f"the rows turned back, a tensor of shape {tuple(y.shape)}")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; a rotation keeps the shape, {tuple(y.shape)}.")
    if close(answer, expected):
        return _general(function, turned, angles, layout) or Feedback(
            CORRECT, f"Correct: each pair {pairs} of row p turned back by the angle p * {base:g}^(-2i/{d}).")

    def back_by(wrong_angles: torch.Tensor) -> torch.Tensor:  # the right undoing, with a mistaken angle
        return rotate_pairs(y, -wrong_angles, layout=layout)

    def one_sine_flipped(first_back: bool) -> torch.Tensor:  # one output of each pair turned back, the other turned on
        back, on = rotate_pairs(y, -angles, layout=layout), rotate_pairs(y, angles, layout=layout)
        first = torch.arange(0, d, 2) if layout == "interleaved" else torch.arange(d // 2)  # each pair's a
        mixed = (on if first_back else back).clone()
        mixed[:, first] = (back if first_back else on)[:, first]
        return mixed

    called = "schemes.apply_rotary(turned)" if layout == "interleaved" else \
        'schemes.apply_rotary(turned, layout="half_split")'
    mistakes = [
        ("Nothing was undone: every row equals turned. Row p must turn back by the angle p * base^(-2i/d).",
         lambda: y),
        (f"That turns each row on by R_p once more, as {called} does, not back. Undoing a "
         "rotation is its transpose, R_p^T: the same angle, turned the other way (the sign of sin flipped).",
         lambda: apply_rotary(y, base=base, layout=layout)),
        (f"Pairs {_pairs(other, d)}: that is the {other.replace('_', '-')} layout. These rows were turned in pairs "
         f"{pairs}: undo the same pairs.", lambda: rotate_pairs(y, -angles, layout=other)),
        ("Positions start at 1 here; the first row is position 0 and was not turned.",
         lambda: back_by(angles + frequencies(d_model=d, base=base)[None, :])),
        ("The exponent used i instead of 2i: the angle is p * base^(-2i/d), for pair i.",
         lambda: back_by(position * base ** (-pair / d))),
        ("Multiplied by base^(2i/d) instead of dividing: the angle is p / base^(2i/d) = p * base^(-2i/d).",
         lambda: back_by(position * base ** (2 * pair / d))),
        (f"The exponent's d is the head size, {d}, not the number of pairs, {d // 2}: the angle is "
         f"p / base^(2i/{d}).", lambda: back_by(position * base ** (-2 * pair / (d // 2)))),
        *[("Only one sin changed sign. Turning back is R_p^T, so both do: each pair (a, b) becomes "
           "(a cos t + b sin t, -a sin t + b cos t).", lambda first_back=first_back: one_sine_flipped(first_back))
          for first_back in (True, False)],
    ]
    mistake = first_mistake(lambda candidate: close(answer, candidate), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"The shape is right, but the values are not. Each pair {pairs} of row p must turn back by "
                           f"the angle p * {base:g}^(-2i/{d}), the angle R_p turned it by, the other way.")


def _general(function: Callable, turned: torch.Tensor, angles: torch.Tensor, layout: str) -> Feedback | None:
    """None if `function`, right on `turned`, also turns back other rows of its shape; else why not (a function that
    returns rows worked out beforehand, e.g. with the package's rotation outside it, is right on `turned` only)."""
    other = torch.randn(turned.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(11)).to(turned.dtype)
    try:
        again = function(other.clone())
    except Exception as error:  # the learner's code: whatever it raises is part of the answer
        return Feedback(WRONG, f"my_unturn(turned) is right, but on other rows of the same shape it raised "
                               f"{error_line(error)}.")
    again = as_tensor(again, "the rows turned back")
    if isinstance(again, Feedback) or not close(again, rotate_pairs(other.double(), -angles, layout=layout)):
        return Feedback(WRONG, "my_unturn(turned) is right, but other rows of the same shape do not come back: it must "
                               "turn back the rows it is given, not rows worked out before it is called.")
    return None


@exercise("RoPE column by column")
def check_rotary_tables(answer: object, *, x: torch.Tensor, base: float = DEFAULT_BASE) -> Feedback:
    """The tables `(cos, sin)`, each (seq, d), that turn x (seq, d) by RoPE, interleaved pairs, column by column:
    `x * cos + swapped * sin`, with `swapped` taking each pair (a, b) to (-b, a)."""
    check_floating_tensor("x", x, ndim=(2,))
    if x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(f"x must have an even, non-zero number of columns d, got shape {tuple(x.shape)}")
    base = check_base("base", base)
    seq, d = x.shape
    what = f"two tables (cos, sin), each of shape {(seq, d)}"
    if answer is None:
        return not_attempted(what)
    if isinstance(answer, (torch.Tensor, np.ndarray)) or not isinstance(answer, (list, tuple)) or len(answer) != 2:
        # A tuple of tables, only too many or too few, is not the turned queries.
        tables = isinstance(answer, (list, tuple)) and all(isinstance(t, (torch.Tensor, np.ndarray)) for t in answer)
        queries = "" if tables else " The answer is the tables, not the turned queries."
        return Feedback(WRONG, f"Expected {what}, as a tuple; got {describe(answer)}.{queries}", readable=False)
    tables = [as_tensor(table, f"the {name} table, a tensor of shape {(seq, d)}")
              for table, name in zip(answer, ("cos", "sin"))]
    for table in tables:
        if isinstance(table, Feedback):
            return table
    cos, sin = (table.double() for table in tables)
    for table, name in ((cos, "cos"), (sin, "sin")):
        if table.shape == (seq, d // 2) and d > 2:
            return Feedback(WRONG, f"The {name} table has shape {(seq, d // 2)}: one entry per pair. Turning column "
                                   f"by column needs one per column, {(seq, d)}.")
        if table.shape != (seq, d):
            return Feedback(WRONG, f"The {name} table has shape {tuple(table.shape)}; expected {(seq, d)}: a row per "
                                   "position, an entry per column.")
    angles = torch.arange(seq, dtype=torch.float64)[:, None] * frequencies(d_model=d, base=base)[None, :]
    halves, in_place = torch.cat([angles, angles], dim=-1), angles.repeat_interleave(2, dim=-1)
    per_column = torch.arange(seq, dtype=torch.float64)[:, None] * base ** (-torch.arange(d, dtype=torch.float64) / d)

    def are(right_cos: torch.Tensor, right_sin: torch.Tensor) -> bool:
        return close(cos, right_cos) and close(sin, right_sin)

    if are(in_place.cos(), in_place.sin()):
        return Feedback(CORRECT, "Correct: both columns of pair (2i, 2i+1) get pair i's angle. The torch.cat tables "
                                 "suit the half-split layout instead.")
    mistakes = [
        ("These equal the tables of the first cell of this exercise. Print the angle that columns 0 and 1 get at position 1. "
         "The two columns are one pair: should their angles differ?", lambda: are(halves.cos(), halves.sin())),
        ("cos is right now, but sin still comes from torch.cat([pair_angles, pair_angles]): both tables need each pair's "
         "angle in both of its columns.", lambda: are(in_place.cos(), halves.sin())),
        ("sin is right now, but cos still comes from torch.cat([pair_angles, pair_angles]): both tables need each pair's "
         "angle in both of its columns.", lambda: are(halves.cos(), in_place.sin())),
        ("The right tables in the wrong order: give (cos, sin).", lambda: are(in_place.sin(), in_place.cos())),
        (f"Each column j got its own angle, p / {base:g}^(j/{d}), so column 2i + 1 turns at another rate than column "
         "2i. The two columns are one pair and should share pair i's angle.", lambda: are(per_column.cos(), per_column.sin())),
        ("Those are the angles themselves: take their cos and their sin.", lambda: are(in_place, in_place)),
        ("The sign of sin is flipped: that turns the wrong way. The formula is x * cos + swapped * sin with "
         "swapped = (-b, a).", lambda: are(in_place.cos(), -in_place.sin())),
        ("Positions start at 1 here; row 0 is position 0, where cos is 1 and sin 0.",
         lambda: are((in_place + in_place[1:2]).cos(), (in_place + in_place[1:2]).sin()) if seq > 1 else False),
        ("The tables are transposed: a row per position, a column per column of x.",
         lambda: seq == d and are(in_place.cos().T, in_place.sin().T)),
    ]
    mistake = first_mistake(lambda found: found, mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got tables that are not RoPE's: entry [p, j] should be the cos (and sin) of position p's "
                           f"angle for the pair that column j belongs to, p * {base:g}^(-2i/{d}) for pair i.")


_HALF_4TH_DECIMAL = 0.5e-4 + 1e-12  # half a unit of the 4th decimal (and a float's rounding of 0.00005)


def _differences(answer: torch.Tensor, expected: torch.Tensor) -> str:
    """Both lists, at the fewest significant digits (4 or more) at which the first wrong slope visibly differs."""
    wrong = ((answer - expected).abs() > torch.maximum(torch.full_like(expected, _HALF_4TH_DECIMAL),
                                                       1e-3 * expected.abs())).nonzero()
    k = int(wrong[0, 0]) if len(wrong) else 0
    digits = next((n for n in range(4, 18) if f"{float(answer[k]):.{n}g}" != f"{float(expected[k]):.{n}g}"), 17)

    def listed(values: torch.Tensor) -> str:
        return ", ".join(f"{float(v):.{digits}g}" for v in values)

    # Only the first wrong slope's expected value: the whole expected list would be an answer to copy.
    return (f"Got {listed(answer)}. The first slope that differs is head {k}'s: "
            f"{float(answer[k]):.{digits}g}, not {float(expected[k]):.{digits}g}.")


# Three head counts that are not a power of two, and one that is, none of them the notebook's examples (6 and 12
# heads). By default the checker adds one more that its messages never name, so a table of the four named counts
# does not pass. It is fixed, not drawn, so that every run of a notebook checks the same cases.
_HEAD_COUNTS = (16, 20, 24, 48)
_UNNAMED_HEAD_COUNT = 37


def _call_slopes(function: Callable, num_heads: int) -> tuple[str, object]:
    """Call the learner's my_slopes with num_heads, positionally or by keyword: ("returned", slopes) or ("raised", error)."""
    try:
        return "returned", function(num_heads)
    except TypeError as error:
        try:
            return "returned", function(num_heads=num_heads)
        except (Exception, SystemExit):  # the learner's code: the first error is the one to report
            return "raised", error
    except (Exception, SystemExit) as error:
        return "raised", error


def _transformers_alibi() -> list[Callable]:
    """The ALiBi functions of Hugging Face's transformers that are loaded now (`_get_alibi_slopes`,
    `build_alibi_tensor` and the like of BLOOM, Falcon, MPT...)."""
    return loaded_library_functions(lambda name: "alibi" in name.lower())


# Other libraries' RoPE helpers, refused when loaded: (library, function names, whose). Hugging Face's are Llama's and
# the models that copy it; rotary_embedding_torch's `apply_rotary_emb` takes the angles as an argument, so negative
# angles undo the turn. Each `rotate_half` maps (a, b) of a pair to (-b, a), the step the exercise asks for.
_LIBRARY_ROTARY = (
    ("transformers", ("rotate_half", "apply_rotary_pos_emb"), "Hugging Face's"),
    ("rotary_embedding_torch", ("rotate_half", "apply_rotary_emb"), "rotary-embedding-torch's"),
)


@exercise("ALiBi's slopes")
def check_alibi_slopes(answer: Callable | None, *, head_counts: tuple[int, ...] | None = None) -> Feedback:
    """A function `answer(num_heads)` that returns ALiBi's slopes (a list, array or tensor, head 0 first), tried on
    each of `head_counts`. For a head count that is not a power of two, the rule of the paper's code
    (`schemes.alibi_slopes`), which the exercise generalises from two examples (6 and 12 heads): two
    rows, because 6 heads alone also fit rules that 12 heads rule out (the odd powers of 1/2, or twice the first
    slopes), and those rules are named. A function that calls the package's
    `alibi_slopes` or `alibi_bias`, or an ALiBi function of transformers (BLOOM's `_get_alibi_slopes`,
    `build_alibi_tensor`...), is named.
    Without `head_counts`: 16, 20, 24, 48 and one more count that no message names."""
    unnamed = head_counts is None
    head_counts = _HEAD_COUNTS + (_UNNAMED_HEAD_COUNT,) if unnamed else head_counts
    head_counts = tuple(check_size("head_counts", n, maximum=1024) for n in head_counts)
    refused = as_function(answer, signature="my_slopes(num_heads)",
                          when_a_tensor="Wrap your lines in def my_slopes(num_heads): ... and return the slopes, so "
                                        "that the checker can try other head counts.")
    if refused:
        return refused
    if calls_any(lambda: [_call_slopes(answer, n) for n in head_counts],
                 [alibi_slopes, schemes._slopes, schemes.alibi_bias]):
        return Feedback(MISTAKE, "It calls the package's own ALiBi (schemes.alibi_slopes or alibi_bias): compute "
                                 "the slopes from the rule yourself.")
    theirs = _transformers_alibi()
    if theirs and calls_any(lambda: [_call_slopes(answer, n) for n in head_counts], theirs):
        names = ", ".join(sorted({function.__name__ for function in theirs}))
        return Feedback(MISTAKE, f"It calls Hugging Face's own ALiBi (transformers: {names}): compute the slopes "
                                 "yourself, from the 6- and 12-head examples.")
    verdicts = {}
    for n in head_counts:
        kind, slopes = _call_slopes(answer, n)
        if unnamed and n == head_counts[-1]:  # the unnamed count: messages name neither it nor its slopes
            fails = ("it raised " + type(slopes).__name__ if kind == "raised" else "it returned None" if slopes is None
                     else None if (verdict := _judge_slopes(slopes, n)).correct else "the slopes are not right")
            if fails:
                return Feedback(WRONG if kind == "raised" or slopes is None else verdict.status,
                                f"Right for {', '.join(map(str, head_counts[:-2]))} and {head_counts[-2]} heads, but for "
                                f"one more head count, which the checker keeps to itself, {fails}. The rule must work "
                                "for any count.")
            verdicts[n] = verdict
            continue
        if kind == "raised":
            return Feedback(WRONG, f"my_slopes({n}) raised {error_line(slopes)}.")
        if slopes is None:  # a written function that forgot its return is attempted, not "not attempted"
            return Feedback(WRONG, f"my_slopes({n}) returned None: end it with return and the {n} slopes.")
        verdicts[n] = _judge_slopes(slopes, n)
        if not verdicts[n].correct:
            return Feedback(verdicts[n].status, f"For {n} heads: {verdicts[n].message}")
    shown = head_counts[:-1] if unnamed else head_counts
    counts = " and ".join(", ".join(map(str, shown)).rsplit(", ", 1)) + (" heads, and one more the checker keeps "
                                                                         "to itself" if unnamed else " heads")
    example = next((n for n in head_counts if n & (n - 1)), head_counts[0])  # the first that is not a power of two
    return Feedback(CORRECT, f"Correct for {counts}. For {example}: {verdicts[example].message}")


def _judge_slopes(answer: object, num_heads: int) -> Feedback:
    """The verdict on the slopes one call returned, for num_heads heads."""
    if made_by(answer) == "schemes.alibi_slopes":
        return Feedback(MISTAKE, "That is the package's own schemes.alibi_slopes: compute the slopes from the rule.")
    expected = alibi_slopes(num_heads=num_heads, dtype=torch.float64)
    given = answer
    if not isinstance(answer, (list, tuple, np.ndarray, torch.Tensor)):
        return Feedback(WRONG, f"Expected the {num_heads} slopes as a list or a tensor, got "
                               f"{describe(answer)}.", readable=False)
    answer = as_tensor(answer, f"the {num_heads} slopes")
    if isinstance(answer, Feedback):
        return answer
    # A column or a row of slopes, (n, 1) or (1, n), is still n slopes.
    answer = answer.double().flatten() if answer.numel() == max(answer.shape, default=1) else answer.double()
    if answer.shape != expected.shape:  # named as the learner wrote it: a list is no float64 tensor
        if answer.dim() == 1:
            got = f"{answer.numel()} slopes"
        elif isinstance(given, (torch.Tensor, np.ndarray)):
            got = describe(given)
        else:
            got = f"a {type(given).__name__} of shape {tuple(answer.shape)}"
        return Feedback(WRONG, f"Got {got}; expected {num_heads} slopes, one per head.")
    closest = 2 ** (num_heads.bit_length() - 1)  # the largest power of two <= num_heads
    power_of_two = closest == num_heads
    first = f"2^(-8/{closest}) = {float(expected[0]):.4g}"

    def near(slopes: torch.Tensor) -> bool:
        # Right as typed from a printout: 4 decimals, as torch prints the slopes (0.0312 for 0.03125: half a unit of
        # the 4th decimal), or 4 significant digits (0.003906 for 2^-8).
        return answer.shape == slopes.shape and bool(
            ((answer - slopes).abs() <= torch.maximum(torch.full_like(slopes, _HALF_4TH_DECIMAL), 1e-3 * slopes.abs())).all())

    if near(expected):
        if power_of_two:
            return Feedback(CORRECT, f"{num_heads} slopes from {float(expected[0]):.4g} down to "
                                     f"{float(expected[-1]):.4g}.")
        return Feedback(CORRECT, f"the {closest} slopes of {closest} heads, then the 1st, 3rd, ... of "
                                 f"{2 * closest} heads: {', '.join(f'{float(v):.4g}' for v in expected)}.")
    k = torch.arange(num_heads, dtype=torch.float64)
    hint = ("Hint: the 6-head row starts with the 4 slopes of 4 heads. Where do its last two, 2^-1 and 2^-3, sit "
            "among the 8 slopes of 8 heads? The 12-head row does the same with 8 and 16."
            + (f" For {num_heads} heads, {closest} plays the part of 4." if closest not in (4, 8) else ""))
    extra = torch.arange(1, num_heads - closest + 1, dtype=torch.float64)  # the extra heads, 1 .. n - c
    mistakes = [
        (f"One step too early: the first slope is {first}, not 1; the sequence starts at its ratio.",
         expected / expected[0]),
        ("The exponents' sign: slopes are below 1 and shrink, 2^(-8k/n) for k = 1 .. n.", 1 / expected),
        ("Reversed: head 0 gets the first slope, " + first + ".", expected.flip(0)),
    ]
    if power_of_two:
        mistakes.append((f"That is 2^(-k) for k = 1 .. {num_heads}: right for 8 heads only. For n heads the ratio "
                         "is 2^(-8/n).", 2.0 ** -(k + 1)))
        if num_heads > 1:
            mistakes.append((f"{num_heads} is itself a power of two: its slopes are the sequence from {first} with "
                             f"that ratio, not the {num_heads // 2}-head slopes followed by others.",
                             torch.cat([alibi_slopes(num_heads=num_heads // 2, dtype=torch.float64), expected[0::2]])))
    else:
        doubled = alibi_slopes(num_heads=2 * closest, dtype=torch.float64)
        mistakes += [
            (f"That is 2^(-8k/{num_heads}), the paper's formula; the authors' code uses it only for a power of two. {hint}",
             2.0 ** (-8 * (k + 1) / num_heads)),
            (f"The right slopes, but sorted: the rule lists the {closest}-head slopes first, then the ones taken "
             f"from {2 * closest} heads, as the 6- and 12-head rows do. Do not sort.", expected.sort(descending=True).values),
            (f"The 2nd, 4th, ... slopes of {2 * closest} heads are the {closest}-head slopes again; the rule takes the "
             f"1st, 3rd, ... ({2 * closest}-head slopes [0::2]).",
         torch.cat([expected[:closest], doubled[1::2][: num_heads - closest]])),
            (f"Those are the first {num_heads} slopes of {2 * closest} heads. {hint}", doubled[:num_heads]),
            # Two rules that fit the 6-head row alone, where they equal the right one; the 12-head row rules them out.
            ("The extra slopes are the odd powers of 1/2: that fits the 6-head row, but not the 12-head row, whose "
             f"extra slopes start at 2^-0.5. {hint}", torch.cat([expected[:closest], 2.0 ** -(2 * extra - 1)])),
            ("The extra slopes are twice the first ones: that fits the 6-head row, but not the 12-head row, whose "
             f"extra slopes start at 2^-0.5, not 2 × 1/2. {hint}",
             torch.cat([expected[:closest], 2 * expected[: num_heads - closest]])),
            (f"That is 2^(-k) for k = 1 .. {num_heads}: the 8-head sequence continued. {hint}", 2.0 ** -(k + 1)),
        ]
    mistake = first_mistake(near, mistakes)
    if mistake:
        return mistake
    if power_of_two:
        return Feedback(WRONG, f"{_differences(answer, expected)} The slopes are the geometric sequence that starts "
                               f"at {first} with that ratio.")
    return Feedback(WRONG, f"{_differences(answer, expected)} {hint}")


def check_constant_score_terms(answer: object, *, word: torch.Tensor, W_QK: torch.Tensor, PE: torch.Tensor,
                               placements: Sequence[tuple[int, int]]) -> Feedback:
    """A prediction: one word at (p, q) placements all at one offset, through W_QK = W_Q W_K^T: how many of the score's
    four terms (word-word, word-pos, pos-word, pos-pos) are the same at every placement? The checker computes the
    terms itself, so the cells a learner reads before predicting do not."""
    word, M, PE = (t.detach().cpu().double() for t in (word, W_QK, PE))
    terms = [[word @ M @ word for _ in placements], [word @ M @ PE[q] for _, q in placements],
             [PE[p] @ M @ word for p, _ in placements], [PE[p] @ M @ PE[q] for p, q in placements]]
    actual = sum(all(torch.allclose(value, values[0]) for value in values) for values in terms)
    pos_pos = all(torch.allclose(value, terms[3][0]) for value in terms[3])
    count_words = ("zero", "one", "two", "three", "four")  # "one" typed as a word is the count 1
    if isinstance(answer, str) and answer.strip().lower() in count_words:
        answer = count_words.index(answer.strip().lower())
    given = as_count(answer)
    if answer is not None and given not in range(len(terms) + 1):  # 1.5 or -1 is no count of four terms
        return Feedback(WRONG, f"Expected a count from 0 to {len(terms)}, got {describe(answer)}.", readable=False)
    # The two likeliest wrong counts, each with what it missed.
    slips = {0: "word-word reads the same word through the same W_QK at every placement. "}
    if not pos_pos:
        slips[actual + 1] = ("That counts pos-pos too, as PE[p] . PE[q] alone would be. Here W_QK sits between the two rows, "
                             "and this W_QK leaves pos-pos not a function of q - p alone. ")
    slip = slips.get(given, "") if given is not None and given != actual else ""
    stays = ("word-word and pos-pos stay: this W_QK only turns and scales within each pair, so pos-pos reads q - p alone."
             if pos_pos else "Only word-word stays" + ("." if given == 0 else ", since the word is the same at every "
                                                        "placement."))  # the slip for 0 already says why
    if given == actual:  # the verdict alone: the run's table shows each term, and the cells after it explain pos-pos
        return check_prediction(answer, actual=actual, question="the score terms that stay the same at one offset",
                                explanation=stays)
    # Said once: the slip for 2 already names pos-pos.
    moves = "" if pos_pos or "pos-pos" in slip else (" pos-pos changes too: through this W_QK, the score at one offset "
                                                      "depends on where the two positions sit.")
    return check_prediction(answer, actual=actual, question="the score terms that stay the same at one offset",
                            explanation=slip + stays + " word-pos and pos-word each read one position." + moves)
