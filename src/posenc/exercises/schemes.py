"""Checkers for the position schemes beyond the sinusoid: RoPE by hand, a cos/sin table made for the other layout,
ALiBi's slopes, which schemes fail on longer inputs."""

from __future__ import annotations

import re

import torch

from .._validate import check_base, check_floating_tensor, check_size, is_real, short
from ..builder import DEFAULT_BASE, frequencies
from ..schemes import alibi_slopes, apply_rotary, rotate_pairs
from .feedback import CORRECT, WRONG, Feedback, as_tensor, close, describe, exercise, first_mistake, not_attempted

__all__ = ["check_rotary", "check_rotary_tables", "check_alibi_slopes", "check_length_prediction"]


@exercise("RoPE by hand")
def check_rotary(answer: torch.Tensor | None, *, x: torch.Tensor, base: float = DEFAULT_BASE) -> Feedback:
    """RoPE of x (seq, d): pair (2i, 2i+1) at position p turned by p * base^(-2i/d), counter-clockwise."""
    check_floating_tensor("x", x, ndim=(2,))
    if x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(f"x must have an even, non-zero number of columns d, got shape {tuple(x.shape)}")
    base = check_base(base)
    x = x.detach().double()
    expected = apply_rotary(x, base=base)
    answer = as_tensor(answer, f"the rotated tensor of shape {tuple(x.shape)}")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; a rotation keeps x's shape, {tuple(x.shape)}.")
    if close(answer, expected):
        return Feedback(CORRECT, f"Correct: each pair (2i, 2i+1) of row p turned by p * {base:g}^(-2i/{x.shape[1]}).")
    seq, d = x.shape

    def with_angles(angles: torch.Tensor) -> torch.Tensor:  # the package's rotation, with a mistaken angle
        return rotate_pairs(x, angles)

    position = torch.arange(seq, dtype=torch.float64)[:, None]
    pair = torch.arange(d // 2, dtype=torch.float64)[None, :]
    angle_per_position = frequencies(d_model=d, base=base)[None, :]
    mistakes = [
        ("Nothing was rotated: every row equals x. Row p turns by the angle p * base^(-2i/d).", lambda: x),
        ("Turned the wrong way: (x1 cos + x2 sin, -x1 sin + x2 cos) is a rotation by -angle. "
         "RoPE's is (x1 cos - x2 sin, x1 sin + x2 cos).", lambda: with_angles(-position * angle_per_position)),
        ("Pairs (i, i + d/2): that is the half-split layout of GPT-NeoX's code and of Hugging Face's LLaMA port. "
         "This exercise pairs neighbours, (2i, 2i+1), as the RoFormer paper and Meta's LLaMA code do; the two "
         "differ by a column permutation (schemes.half_split_permutation).",
         lambda: apply_rotary(x, base=base, layout="half_split")),
        ("Positions start at 1 here; the first row is position 0 and stays as it is.",
         lambda: apply_rotary(x, base=base, offset=1)),
        ("The exponent used i instead of 2i: the angle is p * base^(-2i/d), where 2i is the pair's first column.",
         lambda: with_angles(position * base ** (-pair / d))),
        ("Multiplied by base^(2i/d) instead of dividing: the angle is p / base^(2i/d) = p * base^(-2i/d).",
         lambda: with_angles(position * base ** (2 * pair / d))),
    ]
    mistake = first_mistake(lambda rotated: close(answer, rotated), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected each pair (2i, 2i+1) of row p turned by the angle "
                           f"p * {base:g}^(-2i/{d}).")


def _turn_by_columns(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """`x * cos + swapped * sin` for interleaved pairs, one angle per column: (x_2i, x_2i+1) -> (-x_2i+1, x_2i)."""
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + swapped * sin


@exercise("a cos/sin table for interleaved pairs")
def check_rotary_tables(answer: torch.Tensor | None, *, x: torch.Tensor, base: float = DEFAULT_BASE) -> Feedback:
    """RoPE of x (seq, d), interleaved pairs, as `x * cos + swapped * sin` with one angle per column.

    The bug to fix: tables of d angles per position built for the half-split layout,
    `torch.cat([angles, angles], dim=-1)` (column j gets pair j mod d/2's angle, as GPT-NeoX's code builds them),
    used with interleaved pairs, which need each pair's angle twice in place (`repeat_interleave(2, dim=-1)`).
    """
    check_floating_tensor("x", x, ndim=(2,))
    if x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(f"x must have an even, non-zero number of columns d, got shape {tuple(x.shape)}")
    base = check_base(base)
    x = x.detach().double()
    expected = apply_rotary(x, base=base)
    answer = as_tensor(answer, f"x turned by RoPE, a tensor of shape {tuple(x.shape)}")
    if isinstance(answer, Feedback):
        return answer
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got shape {tuple(answer.shape)}; a rotation keeps x's shape, {tuple(x.shape)}.")
    if close(answer, expected):
        return Feedback(CORRECT, "Correct: both columns of pair (2i, 2i+1) now turn by pair i's angle, "
                                 "the table's angles repeated in place, not the two halves side by side.")
    seq, d = x.shape
    angles = torch.arange(seq, dtype=torch.float64)[:, None] * frequencies(d_model=d, base=base)[None, :]
    halves, in_place = torch.cat([angles, angles], dim=-1), angles.repeat_interleave(2, dim=-1)
    mistakes = [
        ("That is the bug's own result. torch.cat([angles, angles]) gives column j the angle of pair j mod d/2: right "
         "for the half-split pairs (i, i + d/2), but here pair i is the columns (2i, 2i+1), which then get the angles "
         "of pairs 2i and 2i+1 (mod d/2): two different angles, so no pair is rotated. Repeat each angle twice in "
         "place.",
         lambda: _turn_by_columns(x, halves.cos(), halves.sin())),
        ("cos is right now, but sin still comes from torch.cat([angles, angles]): both tables need each pair's "
         "angle twice in place.", lambda: _turn_by_columns(x, in_place.cos(), halves.sin())),
        ("sin is right now, but cos still comes from torch.cat([angles, angles]): both tables need each pair's "
         "angle twice in place.", lambda: _turn_by_columns(x, halves.cos(), in_place.sin())),
        ("That turns the pairs (i, i + d/2), the half-split layout: right for weights stored that way (GPT-NeoX), "
         "but these queries come from a model trained with interleaved pairs (2i, 2i+1). Keep the pairs; fix the "
         "table.", lambda: apply_rotary(x, base=base, layout="half_split")),
        ("Nothing was turned: every row equals x. Row p turns by the angles of position p.", lambda: x),
        ("Turned the wrong way: the sign of sin is flipped. Keep x * cos + swapped * sin with swapped = "
         "(-x_2i+1, x_2i).", lambda: _turn_by_columns(x, in_place.cos(), -in_place.sin())),
        ("Positions start at 1 here; row 0 is position 0 and is not turned.",
         lambda: apply_rotary(x, base=base, offset=1)),
    ]
    mistake = first_mistake(lambda turned: close(answer, turned), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected each pair (2i, 2i+1) of row p turned by the angle "
                           f"p * {base:g}^(-2i/{d}), both of its columns by the same angle.")


@exercise("ALiBi's slopes")
def check_alibi_slopes(answer: object, *, num_heads: int) -> Feedback:
    """ALiBi's slopes for num_heads heads (a list, array or tensor of numbers, head 0 first).

    For a head count that is not a power of two, the rule of the paper's code (`schemes.alibi_slopes`):
    the slopes of c heads, c the largest power of two below num_heads, then the 1st, 3rd, ... slopes of 2c heads.
    """
    num_heads = check_size("num_heads", num_heads, maximum=1024)
    expected = alibi_slopes(num_heads=num_heads, dtype=torch.float64)
    answer = as_tensor(answer, f"the {num_heads} slopes, e.g. a list")
    if isinstance(answer, Feedback):
        return answer
    answer = answer.double().flatten() if answer.dim() <= 1 else answer.double()
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got {describe(answer)}; expected {num_heads} slopes, one per head.")
    closest = 2 ** (num_heads.bit_length() - 1)  # the largest power of two <= num_heads
    power_of_two = closest == num_heads
    first = f"2^(-8/{closest}) = {float(expected[0]):.4g}"
    if close(answer, expected, atol=1e-6):
        if power_of_two:
            return Feedback(CORRECT, f"Correct: {num_heads} slopes from {float(expected[0]):.4g} down to "
                                     f"{float(expected[-1]):.4g}.")
        return Feedback(CORRECT, f"Correct: the {closest} slopes of {closest} heads, then the 1st, 3rd, ... of "
                                 f"{2 * closest} heads: {', '.join(f'{float(v):.4g}' for v in expected)}.")
    k = torch.arange(num_heads, dtype=torch.float64)
    rule = (f"For {num_heads} heads, not a power of two, the paper's code takes the {closest} slopes of {closest} "
            f"heads, then every other slope of {2 * closest} heads, starting with the first, until there are "
            f"{num_heads}.")
    mistakes = [
        (f"One step too early: the first slope is {first}, not 1; the sequence starts at its ratio.",
         expected / expected[0]),
        ("The exponents' sign: slopes are below 1 and shrink, 2^(-8k/n) for k = 1 .. n.", 1 / expected),
        ("Reversed: head 0 gets the first slope, " + first + ".", expected.flip(0)),
    ]
    if power_of_two:
        mistakes.append((f"That is 2^(-k) for k = 1 .. {num_heads}: right for 8 heads only. For n heads the ratio "
                         "is 2^(-8/n).", 2.0 ** -(k + 1)))
    else:
        doubled = alibi_slopes(num_heads=2 * closest, dtype=torch.float64)
        mistakes += [
            (f"That is 2^(-8k/{num_heads}), the paper's formula for a power of two. {rule}", 2.0 ** (-8 * (k + 1) / num_heads)),
            ("The right slopes, but sorted: the code does not sort them. It lists the slopes of "
             f"{closest} heads first, then the ones taken from {2 * closest} heads.", expected.sort(descending=True).values),
            (f"The 2nd, 4th, ... slopes of {2 * closest} heads are the {closest}-head slopes again; the code takes the "
             f"1st, 3rd, ... ({2 * closest}-head slopes [0::2]).",
         torch.cat([expected[:closest], doubled[1::2][: num_heads - closest]])),
            (f"Those are the first {num_heads} slopes of {2 * closest} heads. {rule}", doubled[:num_heads]),
            (f"That is 2^(-k) for k = 1 .. {num_heads}: the 8-head sequence continued. {rule}", 2.0 ** -(k + 1)),
        ]
    mistake = first_mistake(lambda slopes: close(answer, slopes, atol=1e-6), mistakes)
    if mistake:
        return mistake
    if power_of_two:
        return Feedback(WRONG, f"Got {describe(answer)}; expected the geometric sequence that starts at {first} with "
                               "that ratio.")
    return Feedback(WRONG, f"Got {describe(answer)}; expected {', '.join(f'{float(v):.4g}' for v in expected)}. {rule}")


# What a scheme did, as the learner names it (lower case, spaces collapsed) -> the outcome.
NEVER_LEARNS, FAILS, CARRIES_OVER = "never learns", "fails", "carries over"
_OUTCOME_WORDS = {
    NEVER_LEARNS: ("never learns", "never learned", "never learn", "never"),
    FAILS: ("fails", "fail", "failed", "falls", "fell"),
    CARRIES_OVER: ("carries over", "carry over", "carried over", "carries", "holds", "held"),
}


def _outcome(value: object, length: int) -> str | None:
    """The outcome a learner's word names ("fails at 32" is "fails"), or None if it names none."""
    if not isinstance(value, str):
        return None
    words = " ".join(value.lower().replace("_", " ").replace("-", " ").split()).strip(" .!")
    words = re.sub(rf"\s+(at|by)?\s*(length\s*)?{length}$", "", words) if words.startswith(("fail", "fell")) else words
    for outcome, spellings in _OUTCOME_WORDS.items():
        if words in spellings:
            return outcome
    return None


@exercise("what each scheme does on longer inputs")
def check_length_prediction(answer: object, *, accuracies: dict, length: int, threshold: float = 0.9) -> Feedback:
    """The learner's prediction, for each scheme, of what it does at `length`: a dict scheme -> outcome.

    The outcomes: "never learns" (below `threshold` at every length measured, the trained
    ones included), "fails at <length>" (reached the threshold somewhere, but is below it
    at `length`, or has no answer there: a learned table without rows) and "carries over"
    (at least the threshold at `length`). `accuracies` is `models.compare`'s result.
    Scheme names and outcomes are read in any case ("fails" for "fails at 32", "holds"
    for "carries over"). Telling "never learns" from the other two matters: a scheme that
    never learned the task says nothing about longer inputs, so a learner who expects it
    to carry over is told so. The feedback names the schemes predicted wrong, not the
    measured numbers (those move a little with the CPU).
    """
    length = check_size("length", length)
    if not isinstance(accuracies, dict) or not accuracies or not all(
            isinstance(v, dict) and length in v and all(a is None or is_real(a) for a in v.values())
            for v in accuracies.values()):
        raise ValueError(f"accuracies must be models.compare's result, with length {length} measured, "
                         f"got {short(accuracies)}")
    if not is_real(threshold) or not 0 < threshold < 1:
        raise ValueError(f"threshold must be a number in (0, 1), got {threshold!r}")

    def below(value: object) -> bool:
        return value is None or value < threshold

    measured = {}
    for scheme, by_length in accuracies.items():
        if all(below(a) for a in by_length.values()):
            measured[scheme] = NEVER_LEARNS
        else:
            measured[scheme] = FAILS if below(by_length[length]) else CARRIES_OVER
    outcomes = f'"{NEVER_LEARNS}", "fails at {length}" or "{CARRIES_OVER}"'
    if answer is None:
        return not_attempted(f"a dict giving each scheme one of {outcomes}")
    if not isinstance(answer, dict):
        return Feedback(WRONG, f"Expected a dict from each scheme's name to one of {outcomes}; "
                               f"got {describe(answer)}.")
    names = {str(s).lower(): s for s in accuracies}
    keys = {key: key.strip().lower() if isinstance(key, str) else None for key in answer}
    unknown = sorted(key if isinstance(key, str) else short(key) for key, name in keys.items() if name not in names)
    if unknown:
        return Feedback(WRONG, f"Unknown scheme names {unknown}; the schemes are {sorted(accuracies)}.")
    predicted = {names[keys[key]]: value for key, value in answer.items()}
    missing = sorted(set(accuracies) - set(predicted))
    if missing:
        return Feedback(WRONG, f"No prediction for {', '.join(missing)}: give every scheme one of {outcomes}.")
    unreadable = sorted(s for s, value in predicted.items() if _outcome(value, length) is None)
    if unreadable:
        return Feedback(WRONG, f"Could not read the prediction for {', '.join(unreadable)} "
                               f"({', '.join(short(predicted[s]) for s in unreadable)}): use {outcomes}.")

    said = {NEVER_LEARNS: "never learns", FAILS: f"fails at {length}", CARRIES_OVER: "carries over"}
    did = {NEVER_LEARNS: f"never learned it (below {threshold:g} at every length, the trained ones too)",
           FAILS: f"failed at {length} (below {threshold:g} there, or no answer)",
           CARRIES_OVER: f"carried over (at least {threshold:g} at {length})"}
    wrong = [f"{s}: you said {said[_outcome(predicted[s], length)]}, it {did[measured[s]]}"
             for s in sorted(accuracies) if _outcome(predicted[s], length) != measured[s]]
    if wrong:
        return Feedback(WRONG, "Not quite. " + "; ".join(wrong) + ". The plot above shows why.")
    groups = {o: sorted(s for s in accuracies if measured[s] == o) for o in (CARRIES_OVER, FAILS, NEVER_LEARNS)}
    return Feedback(CORRECT, "Correct: " + "; ".join(f"{', '.join(schemes)} {did[o]}" for o, schemes in groups.items()
                                                     if schemes) + ".")
