"""Checkers for stretching the context: YaRN's attention factor, the slowest pair's wavelength,
scores under position interpolation with a cache, and an ordering predicted before training."""

from __future__ import annotations

import functools
import math

import torch

from .._validate import check_base, check_floating_tensor, check_size, check_str, is_real, is_sequence, short
from ..rope_scaling import rope_frequencies
from ..schemes import rotate_pairs
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_number,
    as_tensor,
    close,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_attention_factor", "check_slowest_wavelength", "check_interpolated_scores", "check_ordering",
           "buggy_interpolated_scores"]


def _near(number: float, value: float, tolerance: float = 1e-3) -> bool:
    return abs(number - value) <= tolerance * abs(value)


@exercise("YaRN's attention factor")
def check_attention_factor(answer: float | None, *, factor: float) -> Feedback:
    """YaRN's factor on the rotated q and k for scale factor s = `factor`: sqrt(1/t) = 0.1 ln(s) + 1 (paper, eq. 22)."""
    if not is_real(factor) or not 1 < factor <= 1e6:
        raise ValueError(f"factor must be a number above 1 and at most 1e6, got {short(factor)}")
    factor = float(factor)
    expected = 0.1 * math.log(factor) + 1
    if answer is None:
        return not_attempted("a number, the factor on q and k")
    number = as_number(answer)
    if number is None or not math.isfinite(number):
        return Feedback(WRONG, f"Expected a number, got {describe(answer)}.")
    if _near(number, expected):
        return Feedback(CORRECT, f"Correct: 0.1 ln({factor:g}) + 1 = {expected:.4f}. It multiplies both q and k, so "
                                 f"the logits grow by its square, {expected**2:.4f}.")
    mistakes = [
        (f"That is its square, {expected**2:.4f}: what the logits are multiplied by, since q and k are both "
         "scaled. The factor itself is 0.1 ln(s) + 1.", expected**2),
        ("That used log base 10; the paper's ln is the natural logarithm (math.log).", 0.1 * math.log10(factor) + 1),
        ("That used log base 2; the paper's ln is the natural logarithm (math.log).", 0.1 * math.log2(factor) + 1),
        ("The + 1 is missing: the factor is 0.1 ln(s) + 1, so that a factor of 1 changes nothing.",
         0.1 * math.log(factor)),
        ("The 0.1 is missing: the factor is 0.1 ln(s) + 1.", math.log(factor) + 1),
        ("That is the temperature t itself, 1 / (0.1 ln(s) + 1)^2; the factor on q and k is sqrt(1/t) = "
         "0.1 ln(s) + 1.", 1 / expected**2),
        ("That is 1 / (0.1 ln(s) + 1); the factor is 0.1 ln(s) + 1 itself, above 1: it sharpens the softmax.",
         1 / expected),
    ]
    mistake = first_mistake(lambda value: _near(number, value), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"You said {number:.6g}; YaRN's factor for s = {factor:g} is 0.1 ln(s) + 1 "
                           "(section 3.4 of the paper, equation 22).")


@exercise("the wavelength of the slowest pair")
def check_slowest_wavelength(answer: float | None, *, head_dim: int, base: float) -> Feedback:
    """The wavelength, in positions, of the slowest pair i = head_dim / 2 - 1: 2 pi base^((head_dim - 2) / head_dim)."""
    head_dim = check_size("head_dim", head_dim, minimum=4, maximum=2**16)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even: RoPE turns pairs of columns, got {head_dim}")
    base = check_base(base)
    slowest = head_dim // 2 - 1
    expected = 2 * math.pi / float(rope_frequencies(head_dim=head_dim, base=base)[slowest])
    if answer is None:
        return not_attempted("a number of positions")
    number = as_number(answer)
    if number is None or not math.isfinite(number):
        return Feedback(WRONG, f"Expected a number of positions, got {describe(answer)}.")
    exponent = f"{head_dim - 2}/{head_dim}"
    if _near(number, expected):
        return Feedback(CORRECT, f"Correct: pair {slowest} turns once every 2 pi x {base:,g}^({exponent}) = "
                                 f"{expected:,.0f} positions.")
    mistakes = [
        (f"2 pi is missing: {base:,g}^({exponent}) is the positions per radian; a full turn is 2 pi radians.",
         expected / (2 * math.pi)),
        (f"The slowest pair is i = {slowest}, whose exponent is 2i/d = {exponent}, not d/d = 1: pairs count from 0.",
         2 * math.pi * base),
        (f"The exponent is 2i/d = {exponent}, with 2i the pair's first column; {slowest}/{head_dim} uses i.",
         2 * math.pi * base ** (slowest / head_dim)),
        ("That is the fastest pair, i = 0, which turns every 2 pi positions; the slowest is the last pair.", 2 * math.pi),
        ("360 x: that is a period in degrees; the angle is in radians, whose full turn is 2 pi.",
         360 * expected / (2 * math.pi)),
        ("That is the angle per position (the frequency), not the wavelength: the wavelength is 2 pi over it.",
         2 * math.pi / expected),
    ]
    if base != 10_000:
        mistakes.append((f"That is the wavelength for base 10,000; this one asks for base {base:,g}.",
                         2 * math.pi * 10_000 ** ((head_dim - 2) / head_dim)))
    mistake = first_mistake(lambda value: _near(number, value), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"You said {number:,.6g}; pair {slowest}'s wavelength is 2 pi x {base:,g}^({exponent}).")


def _rotate(x: torch.Tensor, positions: torch.Tensor, theta: torch.Tensor, layout: str = "interleaved") -> torch.Tensor:
    """x (n, d) with row j turned by positions[j] * theta[i] in pair i: columns (2i, 2i+1) with the interleaved layout
    (apply_rotary's default, RoFormer's and Meta's LLaMA code's), columns (i, i + d/2) with the half-split one
    (GPT-NeoX's and Hugging Face's `rotate_half`)."""
    return rotate_pairs(x, positions[:, None] * theta[None, :], layout=layout)


@exercise("scores under position interpolation, with a cache")
def check_interpolated_scores(answer: torch.Tensor | None, *, q: torch.Tensor, cached_keys: torch.Tensor, factor: float,
                              base: float = 10_000.0) -> Feedback:
    """The scores of a new query `q` at position n = len(cached_keys) against the cached keys at positions 0 .. n - 1.

    Position interpolation with factor s: every position p is turned as p / s, the query's and the
    keys' alike. The score of key j is (rotated query) . (rotated key j) / sqrt(head_dim); the answer
    holds the n scores. Either layout of RoPE's pairs is right: the exhibit's interleaved pairs (2i, 2i + 1), or
    the half-split pairs (i, i + head_dim / 2) of Hugging Face's `rotate_half`; each mistake is recognised in both.
    """
    query = check_floating_tensor("q", q, ndim=(1,)).detach().double()
    keys = check_floating_tensor("cached_keys", cached_keys, ndim=(2,)).detach().double()
    head_dim = query.shape[0]
    if head_dim == 0 or head_dim % 2 or keys.shape[1] != head_dim or keys.shape[0] == 0:
        raise ValueError(f"q must have an even, non-zero size d and cached_keys the shape (n, d), n >= 1; got q "
                         f"{tuple(query.shape)} and cached_keys {tuple(keys.shape)}")
    if not torch.isfinite(query).all() or not torch.isfinite(keys).all():
        raise ValueError("q and cached_keys must hold finite numbers")
    if not is_real(factor) or not 1 < factor <= 1e6:
        raise ValueError(f"factor must be a number above 1 and at most 1e6, got {short(factor)}")
    base = check_base(base)
    n = keys.shape[0]
    theta = rope_frequencies(head_dim=head_dim, base=base)
    key_positions = torch.arange(n, dtype=torch.float64)
    query_position = torch.tensor([float(n)], dtype=torch.float64)

    def scores(query_scale: float, key_scale: float, divide: bool = True, layout: str = "interleaved") -> torch.Tensor:
        q = _rotate(query[None, :], query_position * query_scale, theta, layout)[0]
        k = _rotate(keys, key_positions * key_scale, theta, layout)
        return k @ q / (math.sqrt(head_dim) if divide else 1.0)

    expected = scores(1 / factor, 1 / factor)
    answer = as_tensor(answer, f"the {n} scores, one per cached key")
    if isinstance(answer, Feedback):
        return answer
    answer = answer.double().flatten() if answer.dim() <= 2 and answer.numel() == n else answer.double()
    if answer.shape != expected.shape:
        return Feedback(WRONG, f"Got {describe(answer)}; expected {n} scores, one per cached key.")
    if close(answer, expected):
        return Feedback(CORRECT, f"Correct: the query at position {n} and every key turned as position / {factor:g}, "
                                 "so each score depends only on the offset, as in training.")
    if close(answer, scores(1 / factor, 1 / factor, layout="half_split")):
        return Feedback(CORRECT, f"Correct, in the half-split layout (pair i is columns i and i + {head_dim // 2}, as "
                                 f"in Hugging Face's rotate_half): the query at position {n} and every key turned as "
                                 f"position / {factor:g}, so each score depends only on the offset. The exhibit pairs "
                                 "neighbouring columns (2i, 2i + 1), which gives other numbers for the same q and k; "
                                 "either is right as long as queries and keys use the same one.")
    mistakes = [
        (f"This is the bug: the keys were turned as position / {factor:g} but the new query at its full position "
         f"{n}. The angle between them is then ({n} - j / {factor:g}) x theta, which is no function of the offset "
         f"{n} - j: the query must be interpolated too.",
         lambda layout: scores(1.0, 1 / factor, layout=layout)),
        (f"The query was interpolated but the keys were not: every position, the cached keys' too, is turned as "
         f"position / {factor:g}.", lambda layout: scores(1 / factor, 1.0, layout=layout)),
        ("Nothing was interpolated: that is plain RoPE at positions beyond training. Divide every position by the "
         "factor.", lambda layout: scores(1.0, 1.0, layout=layout)),
        (f"Positions multiplied by {factor:g} instead of divided: interpolation squeezes the long input into the "
         "trained range.", lambda layout: scores(factor, factor, layout=layout)),
        ("The division by sqrt(head_dim) is missing.",
         lambda layout: scores(1 / factor, 1 / factor, divide=False, layout=layout)),
    ]
    for layout in ("interleaved", "half_split"):
        mistake = first_mistake(lambda value: close(answer, value),
                                [(message, functools.partial(build, layout)) for message, build in mistakes])
        if mistake:
            return mistake
    return Feedback(WRONG, f"Got {describe(answer)}; expected the query at position {n} and key j at position j, all "
                           f"divided by {factor:g}, turned with RoPE, then q . k / sqrt({head_dim}).")


@exercise("an ordering, predicted before the run")
def check_ordering(answer: object, *, measured: dict[str, float], question: str, tolerance: float = 0.05) -> Feedback:
    """The learner's names of `measured`, best (highest score) first, against the measured scores.

    Two names whose scores differ by at most `tolerance` count as a tie: either order is right.
    """
    if not isinstance(measured, dict) or not 2 <= len(measured) <= 20 or not all(
            isinstance(name, str) and name and is_real(value) and math.isfinite(value) for name, value in measured.items()):
        raise TypeError(f"measured must be a dict of 2 to 20 names (str) -> finite numbers, got {short(measured)}")
    scores = {name: float(value) for name, value in measured.items()}
    check_str("question", question)
    if not is_real(tolerance) or not 0 <= tolerance < 1:
        raise ValueError(f"tolerance must be a number in [0, 1), got {short(tolerance)}")
    listed = ", ".join(repr(name) for name in scores)
    if answer is None:
        return not_attempted(f"a list of {listed}, best first")
    if isinstance(answer, str):
        answer = [part.strip() for part in answer.replace(">", ",").split(",") if part.strip()]
    if not is_sequence(answer) or not all(isinstance(name, str) for name in answer):
        return Feedback(WRONG, f"Expected a list of names, best first, such as {list(scores)}; got {short(answer)}.")
    names = [name.strip().lower() for name in answer]
    known = {name.lower(): name for name in scores}
    unknown = [name for name in names if name not in known]
    if unknown:
        return Feedback(WRONG, f"{', '.join(repr(u) for u in unknown)}: not one of {listed}.")
    if len(set(names)) != len(names):
        return Feedback(WRONG, f"Each name once, please: {short(answer)} repeats one.")
    missing = [name for name in scores if name.lower() not in names]
    if missing:
        return Feedback(WRONG, f"Order all {len(scores)} of them; missing: {', '.join(repr(m) for m in missing)}.")
    order = [known[name] for name in names]
    wrong_pairs = [(a, b) for k, a in enumerate(order) for b in order[k + 1:] if scores[b] > scores[a] + tolerance]
    measured = sorted(scores, key=lambda name: -scores[name])
    shown = ", ".join(f"{name} {scores[name]:.2f}" for name in measured)
    if not wrong_pairs:
        return Feedback(CORRECT, f"Correct: your order agrees with the run (scores within {tolerance:g} of each other "
                                 "count either way).")
    comparable = [(a, b) for k, a in enumerate(order) for b in order[k + 1:] if abs(scores[a] - scores[b]) > tolerance]
    if comparable and len(wrong_pairs) == len(comparable):
        return Feedback(MISTAKE, f"Upside down: you put the worst first. The run: {shown}.")
    a, b = wrong_pairs[0]
    return Feedback(WRONG, f"You put {a} above {b}, but {b} scored higher. The run: {shown}.")


def buggy_interpolated_scores(q: torch.Tensor, cached_keys: torch.Tensor, *, factor: float,
                              base: float = 10_000.0) -> torch.Tensor:
    """Exercise 4's exhibit: position interpolation with a cache, WITH A BUG to find (do not use it).

    The new query `q` (head_dim,) sits at position n = len(cached_keys), after the cached keys
    (n, head_dim) at positions 0 .. n - 1; returns the n scores q . k / sqrt(head_dim) after RoPE.
    """
    check_floating_tensor("q", q, ndim=(1,))
    check_floating_tensor("cached_keys", cached_keys, ndim=(2,))
    n, head_dim = cached_keys.shape
    if head_dim == 0 or head_dim % 2 or q.shape[0] != head_dim or n == 0:
        raise ValueError(f"q must have an even, non-zero size d and cached_keys the shape (n, d), n >= 1; got q "
                         f"{tuple(q.shape)} and cached_keys {tuple(cached_keys.shape)}")
    if not is_real(factor) or not 1 < factor <= 1e6:
        raise ValueError(f"factor must be a number above 1 and at most 1e6, got {short(factor)}")
    theta = rope_frequencies(head_dim=head_dim, base=check_base(base))
    key_positions = torch.arange(n, dtype=torch.float64) / factor   # the cached keys: positions divided by factor
    query_position = torch.tensor([float(n)], dtype=torch.float64)  # the new query
    keys = _rotate(cached_keys.detach().double(), key_positions, theta)
    query = _rotate(q.detach().double()[None, :], query_position, theta)[0]
    return keys @ query / math.sqrt(head_dim)
