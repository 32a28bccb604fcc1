"""Checkers for stretching the context: a pair's wavelength growth with the base, the pairs YaRN keeps, the columns of a
partly turned head whose pair turns fully within a length, and the two rules that carry the copy model furthest."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import torch

from .._checks import check_base, check_size, is_real, is_sequence, short
from .._provenance import calls_any, loaded_library_functions
from ..builder import frequencies
from ..models.copy_task import CopySettings, rotary_dim_of
from ..rope_scaling import _yarn, rope_frequencies
from .feedback import (
    CORRECT,
    MISTAKE,
    WRONG,
    Feedback,
    as_count,
    as_function,
    as_number,
    describe,
    error_line,
    exercise,
    first_mistake,
    not_attempted,
    run_learner,
)

__all__ = ["check_wavelength_growth", "check_yarn_kept", "check_turning_columns", "check_best_two"]


@exercise("how much a pair's wavelength grows with the base")
def check_wavelength_growth(answer: float | None, *, pair: int, head_dim: int, base: float, new_base: float) -> Feedback:
    """How many times longer pair `pair`'s wavelength, on a head of `head_dim` columns, gets when the base goes from
    `base` to `new_base`, to two decimal places (within 0.005). 2.7 may be 2.66 rounded or 50^(32/126) = 2.70: told both.
    Named: the bases' own ratio, the frequency's factor (its inverse), a wrong exponent, the wavelength itself at either
    base, and another pair's factor; the exponent over head_dim - 2 and another pair only within 0.02% (not a guess).
    """
    head_dim = check_size("head_dim", head_dim, minimum=2, maximum=2**16)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even: RoPE turns pairs of columns, got {head_dim}")
    pair = check_size("pair", pair, minimum=0, maximum=head_dim // 2 - 1)
    base, new_base = float(check_base("base", base)), float(check_base("new_base", new_base))
    ratio = new_base / base

    def factor(i: int) -> float:
        return ratio ** (2 * i / head_dim)

    expected = factor(pair)
    if answer is None:
        return not_attempted("a factor, a number")
    number = as_number(answer)
    if number is None or not math.isfinite(number):
        return Feedback(WRONG, f"Expected a number (how many times longer), got {describe(answer)}.", readable=False)
    why = f"Pair i's wavelength is 2 pi base^(2i/{head_dim}), so it grows by the bases' ratio to that power."  # nothing to copy
    if abs(number - expected) <= 0.005 + 1e-9 * expected:  # the question asks two decimal places: 2.65 is not 2.66
        return Feedback(CORRECT, f"Correct: {expected:.2f}. {why[:-1]}: {ratio:g}^({2 * pair}/{head_dim}) = {expected:.2f}.")
    if math.isclose(number, float(f"{expected:.2g}"), rel_tol=1e-6):  # 2.7: 2.66 rounded, or 50^(32/126) = 2.70
        slip = (f" If you worked it out as {number:.2f}, check the exponent: 2i/{head_dim}, i the pair."
                if head_dim > 2 and round(ratio ** (2 * pair / (head_dim - 2)), 2) == round(number, 2) else "")
        return Feedback(WRONG, f"Not yet: to two decimal places, the factor is not {number:.2f}. If you rounded "
                               f"to fewer places, give two.{slip}")  # no number given away: a retry must not copy it
    old, new = 2 * math.pi * base ** (2 * pair / head_dim), 2 * math.pi * new_base ** (2 * pair / head_dim)
    mistakes = [
        (f"{ratio:g} is the bases' own ratio. A pair's wavelength grows by it to the power 2i/{head_dim}, which is "
         "below 1 for every pair: the slowest comes closest.", ratio),
        ("That is the factor of the pair's frequency, which falls as the base grows. The wavelength is 2 pi over the "
         "frequency, so it grows by the inverse.", 1 / expected),
        (f"The exponent is 2i / head_dim with i the pair: {2 * pair}/{head_dim}, not {pair}/{head_dim}.",
         ratio ** (pair / head_dim)),
        (f"That is the wavelength itself at base {new_base:,.0f}, in positions. The question asks how many times the "
         f"wavelength at base {base:,.0f}, {old:,.1f} positions, it is.", new),
        (f"That is the wavelength at base {base:,.0f}, in positions, before the base grows.", old),
    ]
    mistake = first_mistake(lambda value: abs(number - value) <= 0.01 * abs(value), mistakes)
    if mistake:
        return Feedback(MISTAKE, f"{mistake.message} {why}")
    if head_dim > 2 and abs(number - ratio ** (2 * pair / (head_dim - 2))) <= 2e-4 * number:
        return Feedback(MISTAKE, f"The exponent is 2i / head_dim: {2 * pair}/{head_dim}, not {2 * pair}/{head_dim - 2}. {why}")
    other = next((i for i in range(head_dim // 2) if i != pair and abs(number - factor(i)) <= 2e-4 * factor(i)), None)
    if other is not None:
        column = (f" (column {other} is in pair {other // 2}: pair i holds columns 2i and 2i + 1)"
                  if other == 2 * pair else "")
        return Feedback(MISTAKE, f"That is pair {other}'s factor{' (base^0 = 1 at any base)' if other == 0 else ''}, "
                                 f"not pair {pair}'s{column}. {why}")
    if abs(number - math.floor(expected * 100) / 100) <= 1e-9:  # 2.65 for 2.659: truncated, not rounded
        return Feedback(WRONG, f"You gave {number:g}; round to two decimal places, do not truncate. {why}")
    return Feedback(WRONG, f"You gave {number:g}; to two decimal places, the wavelength does not grow that many times. {why}")


@exercise("the pairs YaRN keeps")
def check_yarn_kept(answer: object, *, head_dim: int, base: float, factor: float = 4.0, original_length: int,
                    example_length: int | None = None) -> Feedback:
    """A function `answer(L)`: how many pairs YaRN (its code's ramp, as `rope_frequencies(scaling="yarn")` computes
    it) keeps unchanged on a head of `head_dim` columns at `base`, stretched by `factor` over a trained length `L`.
    Judged at `original_length` first, then at lengths of the checker's own (a count typed for one length fails).

    Computed here, so that the notebook shows no line the learner could paste; no message gives the count at the
    checker's own lengths away. Named: one short, NTK-aware's exponent, the pairs not divided by `factor`, divided or
    blended, and the count at `example_length` (the notebook's other L) if given at every length. A function that
    calls `rope_frequencies` (or a transformers function with "yarn" in its name) is named: count from the formula.
    """
    head_dim = check_size("head_dim", head_dim, minimum=2, maximum=2**16)
    original_length = check_size("original_length", original_length, minimum=2, maximum=2**40)
    example_length = None if example_length is None else check_size("example_length", example_length, minimum=2, maximum=2**40)
    plain = rope_frequencies(head_dim=head_dim, base=base)

    def kept_at(length: int) -> int:
        yarn = rope_frequencies(head_dim=head_dim, base=base, scaling="yarn", factor=factor,
                                original_max_position_embeddings=length)
        return int((yarn == plain).sum())

    if (not_a_function := as_function(answer, signature="my_kept(L)", when_a_tensor="The checker tries trained lengths "
                                      "of its own: put your line in def my_kept(L): and return the count.")):
        return not_a_function
    # The checker's own lengths: 4x shorter, 2x and 4x longer (at 2x, NTK's exponent 2i / (head_dim - 2) gives another
    # count than 2i / head_dim), where some pair makes more than 32 turns (below that, the code's clamp keeps pair 0).
    own = [length for length in (original_length // 4, original_length * 2, original_length * 4)
           if length >= 2 and length * float(plain[0]) / (2 * math.pi) > 32 and length != example_length]
    lengths = [original_length, *own]
    runs = {length: run_learner(answer, length) for length in lengths}  # example_length's count, named if at every L
    example = (example_length, kept_at(example_length)) if example_length and all(
        kind != "raised" and as_count(result) == kept_at(example_length) for kind, result in runs.values()) else None
    verdicts = []
    for length in lengths:
        kind, result = runs[length]
        if kind == "raised":
            return Feedback(WRONG, f"my_kept({length:,}) raised {error_line(result)}.")
        feedback = _judge_kept(result, head_dim=head_dim, factor=factor, length=length, plain=plain,
                               kept=kept_at(length), divided_at=lambda n: _divided(plain, head_dim, base, factor, n),
                               example=example, reveal=length == original_length)
        if feedback.status != CORRECT:
            return feedback if length == original_length else Feedback(
                feedback.status, f"Right at L = {original_length:,}, but at a length of the checker's own, "
                                 f"my_kept({length:,}): {feedback.message}")
        verdicts.append(feedback)
    borrowed = [_yarn, *loaded_library_functions(lambda name: "yarn" in name.lower())]
    if calls_any(lambda: [run_learner(answer, length) for length in lengths], borrowed):
        return Feedback(MISTAKE, "Right counts, but through the package's rope_frequencies(scaling=\"yarn\") (or "
                                 "transformers' YaRN code), which applies the rule for you. The exercise asks you to "
                                 "count the pairs with more than 32 turns within L yourself.")
    return verdicts[0]  # the verdict at original_length


def _divided(plain: torch.Tensor, head_dim: int, base: float, factor: float, length: int) -> int:
    """How many pairs YaRN divides by `factor` at trained length `length`."""
    yarn = rope_frequencies(head_dim=head_dim, base=base, scaling="yarn", factor=factor, original_max_position_embeddings=length)
    return int(torch.isclose(yarn, plain / factor, rtol=1e-12, atol=0).sum())


def _judge_kept(answer: object, *, head_dim: int, factor: float, length: int, plain: torch.Tensor, kept: int,
                divided_at, example: tuple[int, int] | None, reveal: bool = True) -> Feedback:
    """The verdict on one count for trained length `length`; without `reveal`, no message gives the count away."""
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"my_kept({length:,}) returned {describe(answer)}: expected a number of pairs, a whole number.")
    why = (f"A pair is kept if it makes more than 32 turns within L = {length:,}, a wavelength under "
           f"{length / 32:,g} positions" + (f": pairs 0 to {kept - 1}." if reveal else "."))
    if length * float(plain[0]) / (2 * math.pi) <= 32:  # the code clamps its ramp's low bound to pair 0
        why = f"No pair makes 32 turns within L = {length:,}, but the code's ramp still keeps pair 0."
    if number == kept:
        return Feedback(CORRECT, f"Correct: {kept}. {why}")
    divided = divided_at(length) if divided_at else 0
    blended = head_dim // 2 - kept - divided
    # NTK-aware's exponent 2i / (head_dim - 2), shown just before, gives the count or one less: then both are named.
    slip, four = int((plain > 32 / length).sum()), int((length * plain / (2 * math.pi) > 4).sum())  # named if they differ
    ntk, exponent = int((2 * math.pi * plain ** (-head_dim / max(head_dim - 2, 1)) < length / 32).sum()), (
        f"NTK-aware's exponent 2i/{head_dim - 2} instead of RoPE's 2i/{head_dim}")
    mistakes = [
        (f"One short{', or ' + exponent if ntk == kept - 1 else ''}." + reveal * f" Pairs 0 to {kept - 1} are {kept} "
         "pairs.", kept - 1),
        (f"That counts every pair not divided by {factor:g}, the{reveal * f' {blended}'} blended ones too.", kept + blended),
        (f"That counts the pairs divided by {factor:g}, those with less than one turn within L.", divided),
        ("That counts the blended pairs, between 1 and 32 turns within L.", blended),
        ("That counts the pairs YaRN changes.", head_dim // 2 - kept),
        ("That takes 1 / theta for the wavelength, not 2 pi / theta.", slip if slip != four else None),
        ("That keeps the pairs over 4 turns within L, Llama 3.1's bound. YaRN's is 32.", four if slip != four else None),
        ("That bounds the wavelength by L x 32, not L / 32.", int((2 * math.pi / plain < 32 * length).sum())),
    ]
    if example is not None and example[0] != length:
        mistakes.insert(0, (f"That is the count at L = {example[0]:,}, where a kept pair's wavelength is under "
                            f"{example[0] / 32:,g} positions. The bound grows with L.", example[1]))
    mistake = first_mistake(lambda value: number == value, mistakes)
    if mistake:
        return Feedback(MISTAKE, f"{mistake.message} {why}")
    return Feedback(WRONG, f"Got {number}{reveal * f', expected {kept}'}. {why}")


@exercise("the columns whose pair makes a full turn")
def check_turning_columns(answer: object, *, head_dim: int = 96, rotary_dim: int = 24, base: float = 10_000.0,
                          length: int = 2048) -> Feedback:
    """A function `answer(rotary_dim)`: how many of a head's `head_dim` columns belong to a pair that makes a full
    turn within `length` positions, when only the first `rotary_dim` turn, with frequencies over those columns
    (GPT-NeoX's `rotary_ndims`). Judged at `rotary_dim`, then at widths of the checker's own. Named: pairs counted,
    frequencies over the whole head, the whole head turned, every turned column, 1/theta taken for a wavelength (if
    the next width confirms it), the unturned columns, and frequencies taken ready-made (posenc's or transformers').
    No wrong-answer message gives the count away. The defaults are GPT-NeoX-20B's head and trained length.
    """
    head_dim = check_size("head_dim", head_dim, minimum=4, maximum=2**16)
    rotary_dim = check_size("rotary_dim", rotary_dim, minimum=2, maximum=head_dim)
    if head_dim % 2 or rotary_dim % 2:
        raise ValueError(f"head_dim and rotary_dim must be even (RoPE turns pairs), got {head_dim} and {rotary_dim}")
    base = check_base("base", base)
    length = check_size("length", length, minimum=2, maximum=2**40)
    if (not_a_function := as_function(answer, signature="my_columns(rotary_dim)", when_a_tensor="The checker tries "
                                      "widths of its own: put your lines in def my_columns(rotary_dim): and return the count.")):
        return not_a_function
    widths = [rotary_dim, *sorted({w for w in (rotary_dim + 8, head_dim) if w <= head_dim and w != rotary_dim})]
    verdicts = []
    for width in widths:
        kind, result = run_learner(answer, width)
        if kind == "raised":
            return Feedback(WRONG, f"my_columns({width}) raised {error_line(result)}.")
        feedback = _judge_columns(result, head_dim=head_dim, rotary_dim=width, base=base, length=length)
        if width == rotary_dim and len(widths) > 1 and as_count(result) == _radians(width, base, length):
            again = run_learner(answer, widths[1])  # another slip can give the same count at one width (8,191 at 24)
            if again[0] == "raised" or as_count(again[1]) != _radians(widths[1], base, length):
                feedback = _judge_columns(result, head_dim=head_dim, rotary_dim=width, base=base, length=length, radians=False)
        verdicts.append(feedback)
        if feedback.status != CORRECT:
            if width == rotary_dim:
                return feedback
            return Feedback(feedback.status, f"Right at rotary_dim = {rotary_dim}, but at a width of the checker's "  # no count
                                             f"own, my_columns({width}) gave {short(result)}, not the count there. Check "
                                             "that your exponent is 2i/rotary_dim, i the pair, with the argument rotary_dim.")
    # The package's frequencies (rope_frequencies, rotary_angles: all of them builder.frequencies) or transformers'.
    borrowed = [frequencies, *loaded_library_functions(lambda name: "rope" in name.lower() and "param" in name.lower())]
    if calls_any(lambda: [run_learner(answer, width) for width in widths], borrowed):
        return Feedback(MISTAKE, "Right counts, but your function takes its frequencies ready-made, from posenc or "
                                 "from transformers. Write them from the formula, theta_i = base^(-2i/rotary_dim). "
                                 "The width in that exponent is the point of this exercise.")
    return verdicts[0]  # the verdict at rotary_dim


def _turning_pairs(over: int, pairs: int, *, base: float, length: int) -> int:
    """How many of the first `pairs` pairs, with frequencies over `over` columns, turn fully within `length`."""
    wavelengths = 2 * math.pi / rope_frequencies(head_dim=over, base=base)[:pairs]
    return int((wavelengths <= length - 1).sum())


def _radians(rotary_dim: int, base: float, length: int) -> int:
    """The count when 1/theta, radians per position, is taken for a wavelength and compared with the largest offset."""
    return 2 * int((1 / rope_frequencies(head_dim=rotary_dim, base=base) <= length - 1).sum())


def _judge_columns(answer: object, *, head_dim: int, rotary_dim: int, base: float, length: int, radians=True) -> Feedback:
    """The verdict on one count of columns, for `rotary_dim` turned columns (`radians`: may name 1/theta)."""
    def turning_pairs(over: int, pairs: int) -> int:
        return _turning_pairs(over, pairs, base=base, length=length)

    pairs = turning_pairs(rotary_dim, rotary_dim // 2)
    expected = 2 * pairs
    number = as_count(answer)
    if number is None:
        return Feedback(WRONG, f"my_columns({rotary_dim}) returned {describe(answer)}: expected a number of columns, "
                               "a whole number.")
    wavelengths = 2 * math.pi / rope_frequencies(head_dim=rotary_dim, base=base)
    slower = (f"; pair {pairs} turns once every {float(wavelengths[pairs]):,.0f} positions" if pairs < rotary_dim // 2
              else "")
    unturned = head_dim - rotary_dim
    if number == expected:
        fast = (f"pairs 0 to {pairs - 1} of the {rotary_dim // 2} turned pairs" if pairs else
                f"none of the {rotary_dim // 2} turned pairs")
        return Feedback(CORRECT, f"Correct: {expected} columns, {fast}, two columns each{slower}.")
    over_head = turning_pairs(head_dim, rotary_dim // 2)
    exponent = f"2i/{rotary_dim}"
    mistakes = [
        ("That counts pairs: each pair that turns is two columns." if pairs != rotary_dim - expected else "That counts "
         "pairs, or the turned columns whose pair does not turn fully. Count two columns per pair that turns.", pairs),
        (f"The turned columns' frequencies are computed over those {rotary_dim} columns, exponent {exponent}, not over "
         f"the whole head's {head_dim}: over {head_dim}, {over_head} of the {rotary_dim // 2} turned pairs would turn.",
         2 * over_head),
        (f"That is every turned column, but a turned pair makes a full turn only if its wavelength is at most "
         f"{length - 1:,} positions.", rotary_dim),
        (f"That turns the whole head; only the first {rotary_dim} of its {head_dim} columns turn, and their "
         f"frequencies are computed over those {rotary_dim}.", 2 * turning_pairs(head_dim, head_dim // 2)),
        ("That counts the columns whose pair never makes a full turn; the question asks for those whose pair does.",
         head_dim - expected),
        (f"The {unturned} unturned columns carry no angle at all: they never turn.", expected + unturned),
        (f"That compares 1/theta, radians per position, with {length - 1:,}. A full turn is 2 pi radians: compare the "
         "wavelength 2 pi / theta.", _radians(rotary_dim, base, length) if radians else None),
    ]
    if 2 * over_head == rotary_dim:  # several mistakes give every turned column (and i/rotary_dim): say what to check
        mistakes[1] = (f"That is every turned column, but not every turned pair makes a full turn within {length - 1:,} "
                       f"positions. Check the exponent, {exponent}, over the {rotary_dim} turned columns.", rotary_dim)
    mistake = first_mistake(lambda value: number == value != expected, mistakes)
    if mistake:
        return mistake
    # Not the count itself: one wrong try must not give the answer away.
    return Feedback(WRONG, f"Got {number:,}. Expected two columns for each of the {rotary_dim // 2} turned pairs "
                           f"(frequencies base^(-{exponent})) whose wavelength 2 pi base^({exponent}) is at most "
                           f"{length - 1:,} positions.")


# The two best rules over several seeds ---------------------------------------------------------------------------

# The six rules of the copy experiment (benchmarks/bench_stretching.py's names), what the learner may call them,
# how they are shown, and what each does to the copy model's heads (16 columns, trained on 32 positions).
BEST_TWO_RULES = ("none", "linear", "ntk", "yarn", "yarn_paper", "llama3")
# Each name as `_normal` writes it: lower case, "-" and "_" as spaces, "'s" and "rule" dropped.
_RULE_NAMES = {"none": "none", "plain": "none", "plain rope": "none", "rotary": "none", "rope": "none", "no": "none",
               "pi": "linear", "linear": "linear", "position interpolation": "linear", "position interpolation (pi)": "linear",
               "ntk": "ntk", "ntk aware": "ntk", "ntk aware interpolation": "ntk", "yarn": "yarn", "yarn (code)": "yarn",
               "yarn (code ramp)": "yarn", "yarn paper": "yarn_paper", "yarn (paper ramp)": "yarn_paper",
               "yarn (paper)": "yarn_paper", "yarn with paper ramp": "yarn_paper", "llama3": "llama3", "llama 3": "llama_3",
               "llama 3.1": "llama3", "llama3.1": "llama3", "llama31": "llama3", "llama": "llama3", "paper": "yarn_paper"}


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _copy_turns() -> list[float]:
    """How many turns each pair of the copy model's heads makes within the trained length, 32."""
    settings = CopySettings()
    trained = 2 * settings.longest_block  # the longest input it was trained on
    return [trained * float(w) / (2 * math.pi)
            for w in rope_frequencies(head_dim=rotary_dim_of(settings), base=settings.base)]


def _ntk_new_angles(factor: float = 4.0) -> str:
    """The pairs NTK-aware, at `factor`, takes to angles never met: under one turn within the trained length, and
    divided by less than `factor` (the slowest, divided by exactly `factor`, stays within the angles it met)."""
    settings = CopySettings()
    head_dim, trained = rotary_dim_of(settings), 2 * settings.longest_block
    plain = rope_frequencies(head_dim=head_dim, base=settings.base)
    ntk = rope_frequencies(head_dim=head_dim, base=settings.base, scaling="ntk", factor=factor)
    pairs = [i for i, turns in enumerate(_copy_turns()) if turns < 1 and float(plain[i] / ntk[i]) < factor * (1 - 1e-9)]
    shown = f"pairs {pairs[0]} to {pairs[-1]}" if len(pairs) > 2 else _listed([f"pair {i}" for i in pairs])
    return f"{shown}, which turn less than once within the {trained} trained positions"


def _fast_pairs() -> tuple[str, str]:
    """The pairs of the copy model's heads that turn more than once within its trained length, and their turns."""
    trained = 2 * CopySettings().longest_block  # the longest input it was trained on
    fast = [(i, t) for i, t in enumerate(_copy_turns()) if t > 1]
    which = "the one pair that turns" if len(fast) == 1 else "the pairs that turn"
    return (_listed([f"pair {i}" for i, _ in fast]),
            f"{which} more than once within the {trained} trained positions "
            f"({_listed([f'{t:.2f}' for _, t in fast])} turns)")


_FAST_PAIRS, _FAST_TURNS = _fast_pairs()
_SHOWN = {"none": "plain", "linear": "PI", "ntk": "NTK-aware", "yarn": "YaRN", "yarn_paper": "YaRN (paper)",  # lesson's names
          "llama3": "Llama 3.1"}
_WHAT_IT_DOES = {
    "none": "plain RoPE, no rule: every pair turns as in training, so the slow pairs reach angles the model never met",
    "linear": f"PI divides every pair by s, {_FAST_PAIRS} too, {_FAST_TURNS}",
    "ntk": f"NTK-aware keeps pair 0. Of the pairs it slows, {_ntk_new_angles()}, slow by less than s and reach angles never met",
    "yarn_paper": "the paper's ramp keeps no pair of these heads (none makes 32 turns within 32 positions) and divides "
                  "pair 0 nearly as PI does",
    "yarn": f"YaRN, as its code computes it, keeps pair 0, divides pair 1 (it too turns more than once within the "
            f"{2 * CopySettings().longest_block} trained positions) by less than s, and the slower pairs by s",
    "llama3": "Llama 3.1's rule keeps pair 0, divides pair 1 by less than s, and the slower pairs by s",
}
# The right answer's feedback leaves open which of their changes carries them: the section after the figure says.


def _normal(name: str) -> str:
    """A rule's name as `_RULE_NAMES` holds it: "Llama-3.1's rule" -> "llama 3.1", "NTK_aware" -> "ntk aware"."""
    name = re.sub(r"[\u2018\u2019`\"]", "'", name.strip().lower()).replace("'s", "").replace("'", "")
    name = re.sub(r"\brules?\b", " ", re.sub(r"[-_]", " ", name))
    return " ".join(name.split())


def _split_names(text: str) -> list[str]:
    """The names in one str: "yarn, llama3", "YaRN and Llama 3.1's rule", "yarn llama3", "['yarn', 'llama3']"."""
    parts = re.split(r",|;|/|&|\+|\band\b|\bor\b|\[|\]|\n", text.lower())
    names = []
    for part in parts:
        words = _normal(part).split()
        while words:  # the longest known name first: "llama 3.1" before "llama"
            size = next((n for n in range(len(words), 0, -1) if " ".join(words[:n]) in _RULE_NAMES), 0)
            if not size:
                names.append(" ".join(words))  # unknown: named as given
                break
            names.append(" ".join(words[:size]))
            words = words[size:]
    return names


def _rule_names(answer: object, offered) -> list[str] | Feedback:
    """The learner's rule names, read from a list, tuple or set of str, or one str such as "yarn, llama3";
    an unknown name is told the `offered` rules."""
    if isinstance(answer, str):
        answer = _split_names(answer)
    if isinstance(answer, (set, frozenset)):
        answer = sorted(answer, key=str)
    if not is_sequence(answer) or not all(isinstance(name, str) for name in answer):
        return Feedback(WRONG, f"Expected two rule names, such as [\"PI\", \"NTK-aware\"]; got {short(answer)}.", readable=False)
    names = [_RULE_NAMES.get(_normal(name)) for name in answer]
    unknown = [given for given, name in zip(answer, names) if name is None]
    if unknown:
        listed = ", ".join(repr(_SHOWN[rule]) for rule in offered)
        return Feedback(WRONG, f"{', '.join(repr(u) for u in unknown)}: not one of {listed}.")
    return names


@exercise("the two rules that score best at 4x, over the seeds", prediction=True)
def check_best_two(answer: object, *, by_seed: dict[str, Sequence[float]], learned: Sequence[int]) -> Feedback:
    """The two rules of `by_seed` (rule -> one accuracy per seed) that score highest in every seed of `learned`.

    The rules are those of `BEST_TWO_RULES`; `learned` holds the indices of the seeds that learned the task. Raises
    ValueError if the two best differ between those seeds: the question then has no one answer.
    """
    if not isinstance(by_seed, dict) or not 2 < len(by_seed) <= len(BEST_TWO_RULES) or not set(by_seed) <= set(BEST_TWO_RULES):
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
    names = _rule_names(answer, by_seed)
    if isinstance(names, Feedback):
        return names
    if len(names) != 2 or len(set(names)) != 2:
        return Feedback(WRONG, f"Name two different rules of {listed}; got {short(answer)}.")
    if any(name not in by_seed for name in names):  # "Llama 3" too
        no_rule = " Llama 3 ships no rule (its use_scaled_rope is False); Llama 3.1 does." * ("llama_3" in names)
        return Feedback(WRONG, f"Name two of {listed}; got {short(answer)}.{no_rule}")

    def scores(rule: str) -> str:
        values = [float(by_seed[rule][k]) for k in learned]
        return f"{_SHOWN[rule]} {min(values):.2f} to {max(values):.2f}"

    ordered = sorted(best, key=BEST_TWO_RULES.index)
    right, measured = " and ".join(_SHOWN[rule] for rule in ordered), "; ".join(map(scores, ordered))
    if set(names) == best:
        # No numbers: the figure after the check shows them; no pair named: the section after it asks which carries them.
        return Feedback(CORRECT, "Correct: in every seed that learned the task, these two score highest.")
    wrong = [name for name in names if name not in best]
    why = " ".join(f"Not {_SHOWN[rule]} ({scores(rule)}): {_WHAT_IT_DOES[rule]}." for rule in wrong)
    return Feedback(MISTAKE, f"{why} The two best in every seed that learned the task: {right} ({measured}).")
