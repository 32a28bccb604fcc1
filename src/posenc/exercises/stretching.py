"""Checkers for stretching the context: YaRN's attention factor, the slowest pair's wavelength (of a whole head or
of its turned part), the columns of a partly turned head that make a full turn within a length, scores under
position interpolation with a cache, an ordering predicted before training, the two
rules that carry the copy model furthest over several seeds, and a tuned model reloaded without its rule."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import torch

from .._validate import check_base, check_floating_tensor, check_size, check_str, is_real, is_sequence, short
from ..models import CopySettings, TinyTransformer, copy_model, rotary_dim_of
from ..rope_scaling import rope_frequencies, yarn_attention_factor
from ..schemes import rotate_pairs
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_number,
    as_tensor,
    close,
    describe,
    exercise,
    first_mistake,
    not_attempted,
)

__all__ = ["check_attention_factor", "check_slowest_wavelength", "check_turning_columns", "check_interpolated_scores",
           "check_ordering",
           "check_best_two", "check_rule_restored", "buggy_interpolated_scores"]


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
def check_slowest_wavelength(answer: float | None, *, head_dim: int, base: float,
                             whole_head_dim: int | None = None) -> Feedback:
    """The wavelength, in positions, of the slowest pair i = head_dim / 2 - 1: 2 pi base^((head_dim - 2) / head_dim).

    With partial RoPE, `head_dim` is the number of turned columns and `whole_head_dim` the head's: the frequencies
    are computed over the turned columns (GPT-NeoX's `rotary_ndims`, transformers' `partial_rotary_factor`), and an
    answer computed over the whole head is named.
    """
    head_dim = check_size("head_dim", head_dim, minimum=4, maximum=2**16)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even: RoPE turns pairs of columns, got {head_dim}")
    base = check_base(base)
    if whole_head_dim is not None:
        whole_head_dim = check_size("whole_head_dim", whole_head_dim, minimum=head_dim + 1, maximum=2**16)
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
    if whole_head_dim is not None:
        mistakes[:0] = [
            (f"That is the slowest pair of a whole {whole_head_dim}-column head. Only the first {head_dim} columns "
             f"turn, and their frequencies are computed over those {head_dim}: the last turned pair is i = {slowest}, "
             f"exponent {exponent}.", 2 * math.pi * base ** ((whole_head_dim - 2) / whole_head_dim)),
            (f"The exponent's denominator is the number of turned columns, {head_dim}, not the whole head's "
             f"{whole_head_dim}: 2i/{head_dim} = {exponent}.", 2 * math.pi * base ** ((head_dim - 2) / whole_head_dim)),
        ]
    mistake = first_mistake(lambda value: _near(number, value), mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"You said {number:,.6g}; pair {slowest}'s wavelength is 2 pi x {base:,g}^({exponent}).")


@exercise("the columns that make a full turn")
def check_turning_columns(answer: int | None, *, head_dim: int, rotary_dim: int, base: float, length: int) -> Feedback:
    """How many of a head's `head_dim` columns make at least one full turn within `length` positions, when only the
    first `rotary_dim` turn, with frequencies computed over those columns (GPT-NeoX's `rotary_ndims`, transformers'
    `partial_rotary_factor`).

    The largest offset within `length` positions is length - 1: a pair makes a full turn if its wavelength is at most
    that. Each such pair is two columns; the unturned columns never turn. Named: pairs counted instead of columns,
    frequencies over the whole head, the whole head turned, every turned column, the columns that do not turn.
    """
    head_dim = check_size("head_dim", head_dim, minimum=4, maximum=2**16)
    rotary_dim = check_size("rotary_dim", rotary_dim, minimum=2, maximum=head_dim)
    if head_dim % 2 or rotary_dim % 2:
        raise ValueError(f"head_dim and rotary_dim must be even: RoPE turns pairs of columns, got {head_dim} and "
                         f"{rotary_dim}")
    base = check_base(base)
    length = check_size("length", length, minimum=2, maximum=2**40)

    def turning_pairs(over: int, pairs: int) -> int:
        """How many of the first `pairs` pairs, with frequencies over `over` columns, turn fully within `length`."""
        wavelengths = 2 * math.pi / rope_frequencies(head_dim=over, base=base)[:pairs]
        return int((wavelengths <= length - 1).sum())

    pairs = turning_pairs(rotary_dim, rotary_dim // 2)
    expected = 2 * pairs
    if answer is None:
        return not_attempted("a number of columns (a whole number)")
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"Expected a number of columns, a whole number, got {describe(answer)}.")
    wavelengths = 2 * math.pi / rope_frequencies(head_dim=rotary_dim, base=base)
    if pairs < rotary_dim // 2:
        slower = f"; pair {pairs} turns once every {float(wavelengths[pairs]):,.0f} positions"
    else:
        slower = ""
    unturned = head_dim - rotary_dim
    if number == expected:
        fast = (f"pairs 0 to {pairs - 1} of the {rotary_dim // 2} turned pairs" if pairs else
                f"none of the {rotary_dim // 2} turned pairs")
        return Feedback(CORRECT, f"Correct: {expected} columns, {fast}, two columns each{slower}; the {unturned} "
                                 "unturned columns never turn.")
    over_head = turning_pairs(head_dim, rotary_dim // 2)
    exponent = f"2i/{rotary_dim}"
    mistakes = [
        (f"That counts pairs: each of the {pairs} pairs that turn is two columns.", pairs),
        (f"The turned columns' frequencies are computed over those {rotary_dim} columns, exponent {exponent}, not over "
         f"the whole head's {head_dim}: over {head_dim}, {over_head} of the {rotary_dim // 2} turned pairs would turn.",
         2 * over_head),
        (f"That is every turned column, but a turned pair makes a full turn only if its wavelength is at most "
         f"{length - 1:,} positions{slower}.", rotary_dim),
        (f"That turns the whole head; only the first {rotary_dim} of its {head_dim} columns turn, and their "
         f"frequencies are computed over those {rotary_dim}.", 2 * turning_pairs(head_dim, head_dim // 2)),
        ("That counts the columns that never make a full turn; the question asks for those that do.",
         head_dim - expected),
        (f"The {unturned} unturned columns carry no angle at all: they never turn.", expected + unturned),
    ]
    if 2 * over_head == rotary_dim:  # both mistakes give every turned column: say both
        mistakes[1] = (mistakes[1][0] + f" And not every turned pair makes a full turn within {length:,} positions"
                       f"{slower}.", rotary_dim)
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    return Feedback(WRONG, f"Got {number:,}, expected {expected}: of the {rotary_dim // 2} turned pairs (frequencies "
                           f"base^(-{exponent})), count those whose wavelength 2 pi base^({exponent}) is at most "
                           f"{length - 1:,}, two columns each.")


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


# The two best rules over several seeds ---------------------------------------------------------------------------

# The six rules of the copy experiment (benchmarks/bench_stretching.py's names), what the learner may call them,
# how they are shown, and what each does to the copy model's heads (16 columns, trained on 32 positions).
BEST_TWO_RULES = ("none", "linear", "ntk", "yarn", "yarn_paper", "llama3")
_RULE_NAMES = {"none": "none", "plain": "none", "rotary": "none", "rope": "none", "no rule": "none",
               "pi": "linear", "linear": "linear", "position interpolation": "linear",
               "ntk": "ntk", "ntk-aware": "ntk", "yarn": "yarn", "yarn_paper": "yarn_paper",
               "yarn (paper's ramp)": "yarn_paper", "paper": "yarn_paper", "llama3": "llama3", "llama 3.1": "llama3",
               "llama3.1": "llama3", "llama 3.1's rule": "llama3", "llama 3": "llama3"}
_SHOWN = {"none": "none", "linear": "pi", "ntk": "ntk", "yarn": "yarn", "yarn_paper": "yarn_paper", "llama3": "llama3"}
_WHAT_IT_DOES = {
    "none": "no rule: every pair turns as in training, so the slow pairs reach angles the model never met",
    "linear": "PI divides pair 0 too, the one pair that turns more than once within the 32 trained positions",
    "ntk": "NTK-aware keeps pair 0 but divides every pair but the slowest by less than s, so they still reach angles "
           "never met",
    "yarn_paper": "the paper's ramp keeps no pair of these heads (none makes 32 turns within 32 positions) and divides "
                  "pair 0 nearly as PI does",
    "yarn": "YaRN, as its code computes it, keeps pair 0 and divides the slower pairs by s (pair 1 partly)",
    "llama3": "Llama 3.1's rule keeps pair 0 and divides the slower pairs by s (pair 1 partly)",
}


def _rule_names(answer: object) -> list[str] | Feedback:
    """The learner's rule names, read from a list, tuple or set of str, or one str such as "yarn, llama3"."""
    if isinstance(answer, str):
        answer = [part.strip() for part in answer.replace(" and ", ",").replace("&", ",").replace("+", ",").split(",")
                  if part.strip()]
    if isinstance(answer, (set, frozenset)):
        answer = sorted(answer, key=str)
    if not is_sequence(answer) or not all(isinstance(name, str) for name in answer):
        return Feedback(WRONG, f"Expected two rule names, such as [\"pi\", \"ntk\"]; got {short(answer)}.")
    names = [_RULE_NAMES.get(name.strip().lower()) for name in answer]
    unknown = [given for given, name in zip(answer, names) if name is None]
    if unknown:
        listed = ", ".join(repr(_SHOWN[rule]) for rule in BEST_TWO_RULES)
        return Feedback(WRONG, f"{', '.join(repr(u) for u in unknown)}: not one of {listed}.")
    return names


@exercise("the two rules that carry the copy model to 4x, over the seeds")
def check_best_two(answer: object, *, by_seed: dict[str, Sequence[float]], learned: Sequence[int]) -> Feedback:
    """The two rules of `by_seed` (rule -> one accuracy per seed) that score highest in every seed of `learned`.

    The rules are those of `BEST_TWO_RULES`; `learned` holds the indices of the seeds that learned the task. Raises
    ValueError if the two best differ between those seeds: the question then has no one answer.
    """
    if not isinstance(by_seed, dict) or not 2 < len(by_seed) <= len(BEST_TWO_RULES) or not set(by_seed) <= set(
            BEST_TWO_RULES):
        raise TypeError(f"by_seed must be a dict of 3 to 6 of {BEST_TWO_RULES} -> accuracies, got {short(by_seed)}")
    seeds = None
    for rule, values in by_seed.items():
        if not is_sequence(values) or not values or not all(is_real(v) and math.isfinite(v) for v in values):
            raise TypeError(f"by_seed[{rule!r}] must be a list of finite accuracies, one per seed, got {short(values)}")
        if seeds is not None and len(values) != seeds:
            raise ValueError(f"by_seed must hold as many seeds for every rule, {rule!r} has {len(values)}")
        seeds = len(values)
    if not is_sequence(learned) or not learned or not all(is_real(k, whole=True) and 0 <= k < seeds for k in learned) \
            or len(set(learned)) != len(learned):
        raise ValueError(f"learned must be distinct seed indices from 0 to {seeds - 1}, got {short(learned)}")
    tops = {frozenset(sorted(by_seed, key=lambda rule: -by_seed[rule][k])[:2]) for k in learned}
    if len(tops) != 1:
        raise ValueError(f"by_seed: the two best rules differ between the learned seeds ({short(sorted(map(sorted, tops)))})")
    best = next(iter(tops))
    listed = ", ".join(repr(_SHOWN[rule]) for rule in by_seed)
    if answer is None:
        return not_attempted(f"two of {listed}")
    names = _rule_names(answer)
    if isinstance(names, Feedback):
        return names
    if len(names) != 2 or len(set(names)) != 2:
        return Feedback(WRONG, f"Name two different rules of {listed}; got {short(answer)}.")
    if any(name not in by_seed for name in names):
        return Feedback(WRONG, f"Name two of {listed}; got {short(answer)}.")

    def scores(rule: str) -> str:
        values = [float(by_seed[rule][k]) for k in learned]
        return f"{_SHOWN[rule]} {min(values):.2f} to {max(values):.2f}"

    ordered = sorted(best, key=BEST_TWO_RULES.index)
    right, measured = " and ".join(_SHOWN[rule] for rule in ordered), "; ".join(map(scores, ordered))
    if set(names) == best:
        what = " ".join(f"{_WHAT_IT_DOES[rule][0].upper()}{_WHAT_IT_DOES[rule][1:]}." for rule in ordered)
        return Feedback(CORRECT, f"Correct: {right}, in every seed that learned the task ({measured}). {what}")
    wrong = [name for name in names if name not in best]
    why = " ".join(f"Not {_SHOWN[rule]} ({scores(rule)}): {_WHAT_IT_DOES[rule]}." for rule in wrong)
    return Feedback(MISTAKE, f"{why} The two best in every seed that learned the task: {right} ({measured}).")


# A model tuned with a rule, reloaded without it --------------------------------------------------------------------

_RULE_TITLES = {None: "plain RoPE's", "linear": "PI's", "ntk": "NTK-aware's", "yarn": "YaRN's", "llama3": "Llama 3.1's"}


@exercise("the tuned weights, read with their rule")
def check_rule_restored(answer: object, *, state: dict, settings: CopySettings, scaling: str, factor: float) -> Feedback:
    """A copy model holding the weights `state`, read with the rule `scaling` at `factor` it was fine-tuned with.

    The rule's frequencies are over the trained length L = 2 * settings.longest_block (what `models.stretched` and
    `fine_tune` use). The mistakes named: plain RoPE's frequencies (the bug: a state dict holds the weights, not the
    frequencies), the rule over the fine-tuned length, another rule or factor, the weights not loaded.
    """
    if not isinstance(settings, CopySettings):
        raise TypeError(f"settings must be a posenc.models.CopySettings, got {short(settings)}")
    if scaling not in ("linear", "ntk", "yarn", "llama3"):
        raise ValueError(f"scaling must be 'linear', 'ntk', 'yarn' or 'llama3', got {short(scaling)}")
    if not is_real(factor) or not 1 < factor <= 64:
        raise ValueError(f"factor must be a number above 1 and at most 64, got {short(factor)}")
    factor = float(factor)
    with torch.random.fork_rng():  # copy_model seeds torch's generator: the learner's own stays as it was
        fresh = copy_model(settings).state_dict()
    if not isinstance(state, dict) or set(state) != set(fresh) or not all(
            isinstance(state[k], torch.Tensor) and state[k].shape == fresh[k].shape for k in fresh):
        raise TypeError("state must be the state dict of a model made with these settings "
                        f"(models.copy_model(settings).state_dict()), got {short(state)}")
    trained = 2 * settings.longest_block
    rotary_dim = rotary_dim_of(settings)

    def rule(name: str | None, at: float, length: int = trained) -> torch.Tensor:
        if name is None:
            return rope_frequencies(head_dim=rotary_dim, base=settings.base)
        return rope_frequencies(head_dim=rotary_dim, base=settings.base, scaling=name, factor=at,
                                original_max_position_embeddings=length)

    if answer is None:
        return not_attempted("the model: the tuned weights, read with the rule they were tuned with")
    if isinstance(answer, dict):
        return Feedback(WRONG, "That is a state dict, weights only: load it into a model (models.copy_model(settings)"
                               ".load_state_dict(...)) and give the model its rule's frequencies.")
    if not isinstance(answer, TinyTransformer) or not isinstance(getattr(answer, "copy_settings", None), CopySettings):
        return Feedback(WRONG, f"Expected a model of posenc.models (copy_model, stretched), got {describe(answer)}.")
    if answer.copy_settings != settings:
        return Feedback(WRONG, f"That model has other settings ({answer.copy_settings}); the weights were tuned on "
                               f"{settings}.")
    blocks = [block.attention for block in answer.blocks]
    frequencies = [a.frequencies for a in blocks]
    if not all(isinstance(f, torch.Tensor) and f.shape == (rotary_dim // 2,) and not f.is_meta and f.is_floating_point()
               and bool(torch.isfinite(f).all()) for f in frequencies):
        return Feedback(WRONG, f"Each layer's frequencies must be {rotary_dim // 2} finite numbers, one per pair.")
    if not all(torch.equal(f, frequencies[0]) and a.attention_factor == blocks[0].attention_factor
               for f, a in zip(frequencies, blocks)):
        return Feedback(WRONG, "The layers read with different frequencies: give every layer the rule's.")
    got, got_factor = frequencies[0].detach().double(), float(blocks[0].attention_factor)
    own = answer.state_dict()
    weights_right = set(own) == set(state) and all(torch.equal(own[k].detach().cpu(), state[k].detach().cpu())
                                                   for k in state)

    def same(theta: torch.Tensor, attention: float = 1.0) -> bool:
        # float32 frequencies (as transformers keeps them) are right too: 1e-6 is float32's precision, far below
        # the difference between any two of the rules
        return bool(torch.allclose(got, theta, rtol=1e-6, atol=0.0)) and math.isclose(got_factor, attention,
                                                                                   rel_tol=1e-6)

    expected_factor = yarn_attention_factor(factor=factor) if scaling == "yarn" else 1.0
    title = _RULE_TITLES[scaling]
    if same(rule(scaling, factor), expected_factor):
        if weights_right:
            return Feedback(CORRECT, f"Correct: the tuned weights, read with {title} frequencies for factor {factor:g} "
                                     f"over L = {trained}. A state dict holds the weights, not the rule: the rule comes "
                                     "from the model's settings (in transformers, from its config).")
        return Feedback(MISTAKE, f"{title} frequencies are right, but the weights are not the tuned ones: load them "
                                 "(load_state_dict) into the model.")
    mistakes = [
        (f"This is the bug: load_state_dict restores the weights, not the frequencies, so the model reads with plain "
         f"RoPE, whose slow pairs turn {factor:g} times as fast as those the weights were tuned with. Give it "
         f"{title} frequencies again (models.stretched).", lambda: same(rule(None, 1.0))),
        (f"Those are {title} frequencies over L = {round(factor * trained)}, the fine-tuned length; L is the length "
         f"before stretching, {trained}, the one the rule's factor {factor:g} was counted from.",
         lambda: same(rule(scaling, factor, round(factor * trained)), expected_factor)),
    ]
    for other in ("linear", "ntk", "yarn", "llama3"):
        if other != scaling:
            other_factor = yarn_attention_factor(factor=factor) if other == "yarn" else 1.0
            mistakes.append((f"Those are {_RULE_TITLES[other]} frequencies; the weights were tuned with {title}.",
                             functools.partial(lambda o, f: same(rule(o, factor), f), other, other_factor)))
    for at in sorted({2 * factor, factor / 2, 8.0} - {factor}):
        if 1 < at <= 64:
            mistakes.append((f"{title} frequencies, but for factor {at:g}; the weights were tuned with factor "
                             f"{factor:g}.", functools.partial(lambda a: same(rule(scaling, a), expected_factor), at)))
    for message, matches in mistakes:
        if matches():
            if not weights_right:
                message += " The weights are not the tuned ones either: load them (load_state_dict)."
            return Feedback(MISTAKE, message)
    return Feedback(WRONG, f"Its frequencies are neither plain RoPE's nor {title} for factor {factor:g} over L = "
                           f"{trained}" + ("." if weights_right else ", and its weights are not the tuned ones."))


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
