"""Checkers for notebooks 13 and 14: RoPE by hand, ALiBi's slopes, which schemes fail on longer inputs."""

from __future__ import annotations

import re

import torch

from .._validate import check_base, check_floating_tensor, check_size, is_real, short
from ..builder import DEFAULT_BASE, frequencies
from ..schemes import alibi_slopes, apply_rotary
from .feedback import CORRECT, WRONG, Feedback, as_tensor, close, describe, exercise, first_mistake, not_attempted

__all__ = ["check_rotary", "check_alibi_slopes", "check_length_prediction"]


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

    def with_angles(angles: torch.Tensor) -> torch.Tensor:
        cos, sin = angles.cos(), angles.sin()
        x1, x2 = x[:, 0::2], x[:, 1::2]
        return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)

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


@exercise("which schemes fail on longer inputs")
def check_length_prediction(answer: object, *, accuracies: dict, length: int, threshold: float = 0.9) -> Feedback:
    """The schemes the learner predicted to fall below `threshold` accuracy (or have no answer) at `length`.

    `accuracies` is `experiment.compare`'s result. The answer is a list of scheme names or
    one string of them ("learned, sinusoidal"), in any case. A scheme below the threshold
    at every length measured never learned the task, so it fails at `length` for another
    reason than the length: the answer is right with it or without it. The feedback names
    the schemes predicted right and wrong, not the measured numbers (those move a little
    with the CPU).
    """
    length = check_size("length", length)
    if not isinstance(accuracies, dict) or not accuracies or not all(
            isinstance(v, dict) and length in v and all(a is None or is_real(a) for a in v.values())
            for v in accuracies.values()):
        raise ValueError(f"accuracies must be experiment.compare's result, with length {length} measured, "
                         f"got {short(accuracies)}")
    if not is_real(threshold) or not 0 < threshold < 1:
        raise ValueError(f"threshold must be a number in (0, 1), got {threshold!r}")

    def below(value: object) -> bool:
        return value is None or value < threshold

    failing = {s for s, v in accuracies.items() if below(v[length])}
    never_learned = {s for s, v in accuracies.items() if all(below(a) for a in v.values())}
    if answer is None:
        return not_attempted("a list of the scheme names you expect to fail")
    if isinstance(answer, str):
        answer = re.split(r"[\s,]+", answer)
    if not isinstance(answer, (list, tuple, set, frozenset)) or not all(isinstance(a, str) for a in answer):
        return Feedback(WRONG, f"Expected a list of scheme names such as ['none'], got {describe(answer)}.")
    predicted = {a.strip().lower() for a in answer} - {""}
    names = {str(s).lower(): s for s in accuracies}
    unknown = sorted(predicted - set(names))
    if unknown:
        return Feedback(WRONG, f"Unknown scheme names {unknown}; the schemes are {sorted(accuracies)}.")
    predicted = {names[a] for a in predicted}
    either_way = ""
    if never_learned:
        either_way = (f" {', '.join(sorted(never_learned))} fell below {threshold:g} at every length, so "
                      f"{'it counts' if len(never_learned) == 1 else 'they count'} either way.")
    if predicted - never_learned == failing - never_learned:
        return Feedback(CORRECT, f"Correct: at length {length}, {', '.join(sorted(failing)) or 'none of them'} "
                                 f"fell below {threshold:g} (or had no answer).{either_way}")
    parts = []
    if failing - predicted - never_learned:
        parts.append(f"also failing: {', '.join(sorted(failing - predicted - never_learned))}")
    if predicted - failing:
        parts.append(f"held up (at least {threshold:g}): {', '.join(sorted(predicted - failing))}")
    return Feedback(WRONG, f"Not quite, at length {length}: " + "; ".join(parts) + f".{either_way} "
                           "The plot above shows why.")
