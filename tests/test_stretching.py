"""Notebook 16's checkers and figures: each checker names the usual mistakes, each figure can be read."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posenc import exercises, plots, schemes
from posenc.exercises.feedback import CORRECT, MISTAKE, NOT_ATTEMPTED, WRONG
from test_figures import check_figure

# YaRN's attention factor ------------------------------------------------------------------------


def test_attention_factor_for_factor_4_is_the_papers():
    # YaRN (arXiv 2309.00071), eq. 22: sqrt(1/t) = 0.1 ln(s) + 1; for s = 4 that is 1.1386.
    assert exercises.check_attention_factor(1.1386, factor=4).status == CORRECT
    assert exercises.check_attention_factor(torch.tensor(1.1386294), factor=4.0).status == CORRECT
    assert exercises.check_attention_factor(0.1 * math.log(8) + 1, factor=8).status == CORRECT  # the paper's 1.208


@pytest.mark.parametrize("answer,words", [
    (1.1386**2, "square"),
    (0.1 * math.log10(4) + 1, "base 10"),
    (1.2, "base 2"),
    (0.1386, "+ 1 is missing"),
    (math.log(4) + 1, "0.1 is missing"),
    (1 / 1.1386**2, "temperature"),
    (1 / 1.1386, "above 1"),
])
def test_attention_factor_names_the_mistake(answer, words):
    feedback = exercises.check_attention_factor(answer, factor=4)
    assert feedback.status == MISTAKE and words in feedback.message


@pytest.mark.parametrize("answer", [None, "1.1", float("nan"), [1, 2], 3.0])
def test_attention_factor_answers_anything(answer):
    feedback = exercises.check_attention_factor(answer, factor=4)
    assert feedback.status in (NOT_ATTEMPTED, WRONG)


@pytest.mark.parametrize("factor", [1, 0.5, "4", float("inf")])
def test_attention_factor_refuses_a_bad_factor(factor):
    with pytest.raises((TypeError, ValueError), match="factor"):
        exercises.check_attention_factor(1.0, factor=factor)


# The slowest pair's wavelength ------------------------------------------------------------------

LLAMA3 = {"head_dim": 128, "base": 500_000.0}
SLOWEST = 2 * math.pi * 500_000 ** (126 / 128)  # pair 63 of 64


def test_slowest_wavelength_at_llama_3s_base():
    assert 2.55e6 < SLOWEST < 2.57e6
    assert exercises.check_slowest_wavelength(SLOWEST, **LLAMA3).status == CORRECT
    assert exercises.check_slowest_wavelength(round(SLOWEST), **LLAMA3).status == CORRECT
    assert math.isclose(SLOWEST, 2 * math.pi / float(schemes.rope_frequencies(head_dim=128, base=5e5)[-1]))


@pytest.mark.parametrize("answer,words", [
    (500_000 ** (126 / 128), "2 pi is missing"),
    (2 * math.pi * 500_000, "count from 0"),
    (2 * math.pi * 500_000 ** (63 / 128), "uses i"),
    (2 * math.pi, "fastest"),
    (360 * 500_000 ** (126 / 128), "degrees"),
    (1 / 500_000 ** (126 / 128), "frequency"),
    (2 * math.pi * 10_000 ** (126 / 128), "base 10,000"),
])
def test_slowest_wavelength_names_the_mistake(answer, words):
    feedback = exercises.check_slowest_wavelength(answer, **LLAMA3)
    assert feedback.status == MISTAKE and words in feedback.message


@pytest.mark.parametrize("answer", [None, "2.5e6", float("inf"), 1.0, np.array([1.0, 2.0])])
def test_slowest_wavelength_answers_anything(answer):
    assert exercises.check_slowest_wavelength(answer, **LLAMA3).status in (NOT_ATTEMPTED, WRONG)


@pytest.mark.parametrize("kwargs", [{"head_dim": 7, "base": 1e4}, {"head_dim": 2, "base": 1e4},
                                    {"head_dim": 128, "base": 1.0}, {"head_dim": "128", "base": 1e4}])
def test_slowest_wavelength_refuses_bad_sizes(kwargs):
    with pytest.raises((TypeError, ValueError), match="head_dim|base"):
        exercises.check_slowest_wavelength(1.0, **kwargs)


# Position interpolation with a cache ------------------------------------------------------------

GENERATOR = torch.Generator().manual_seed(16)
QUERY = torch.randn(8, generator=GENERATOR)
KEYS = torch.randn(6, 8, generator=GENERATOR)


def reference_scores(query_scale: float, key_scale: float, factor_of_sqrt: bool = True,
                     half_split: bool = False) -> torch.Tensor:
    """RoPE written as 2 x 2 rotations pair by pair, in float64: pair i is columns (2i, 2i + 1), apply_rotary's
    interleaved pairs, or with `half_split` columns (i, i + d/2), Hugging Face's rotate_half."""
    d, n = QUERY.shape[0], KEYS.shape[0]

    def turn(x: torch.Tensor, position: float) -> torch.Tensor:
        out = x.double().clone()
        for i in range(d // 2):
            angle = position * 10_000 ** (-2 * i / d)
            first, second = (i, i + d // 2) if half_split else (2 * i, 2 * i + 1)
            a, b = float(x[first]), float(x[second])
            out[first], out[second] = a * math.cos(angle) - b * math.sin(angle), a * math.sin(angle) + b * math.cos(angle)
        return out

    q = turn(QUERY, n * query_scale)
    scores = torch.stack([turn(KEYS[j], j * key_scale) @ q for j in range(n)])
    return scores / math.sqrt(d) if factor_of_sqrt else scores


def test_interpolated_scores_accepts_every_position_divided():
    assert exercises.check_interpolated_scores(reference_scores(0.25, 0.25), q=QUERY, cached_keys=KEYS,
                                               factor=4).status == CORRECT
    assert exercises.check_interpolated_scores(reference_scores(0.25, 0.25).float().tolist(), q=QUERY, cached_keys=KEYS,
                                               factor=4).status == CORRECT


def test_interpolated_scores_accepts_the_half_split_layout_and_says_so():
    # Hugging Face's rotate_half pairs column i with i + d/2: the same PI fix gives other numbers, and is right.
    half_split = reference_scores(0.25, 0.25, half_split=True)
    assert not torch.allclose(half_split, reference_scores(0.25, 0.25), atol=1e-4)
    feedback = exercises.check_interpolated_scores(half_split, q=QUERY, cached_keys=KEYS, factor=4)
    assert feedback.status == CORRECT and "half-split layout" in feedback.message, feedback
    # Its mistakes are named in that layout too.
    bug = exercises.check_interpolated_scores(reference_scores(1.0, 0.25, half_split=True), q=QUERY, cached_keys=KEYS,
                                              factor=4)
    assert bug.status == MISTAKE and "This is the bug" in bug.message


def test_interpolated_scores_depend_only_on_the_offset():
    # The point of the exercise: with both interpolated, shifting every position by the same amount changes nothing.
    theta = schemes.rope_frequencies(head_dim=8, scaling="linear", factor=4.0)
    q, k = QUERY.double()[None], KEYS.double()[:1]
    def score(query_position, key_position):
        angles = torch.tensor([[query_position]], dtype=torch.float64) * theta, torch.tensor([[key_position]]) * theta
        turned = [torch.stack([x[:, 0::2] * a.cos() - x[:, 1::2] * a.sin(), x[:, 0::2] * a.sin() + x[:, 1::2] * a.cos()],
                              dim=-1).flatten(-2) for x, a in ((q, angles[0]), (k, angles[1]))]
        return float(turned[0] @ turned[1].T)
    assert math.isclose(score(9, 2), score(107, 100), rel_tol=1e-9)


@pytest.mark.parametrize("scales,words", [
    ((1.0, 0.25), "This is the bug"),
    ((0.25, 1.0), "keys were not"),
    ((1.0, 1.0), "Nothing was interpolated"),
    ((4.0, 4.0), "multiplied"),
])
def test_interpolated_scores_names_the_mistake(scales, words):
    feedback = exercises.check_interpolated_scores(reference_scores(*scales), q=QUERY, cached_keys=KEYS, factor=4)
    assert feedback.status == MISTAKE and words in feedback.message


def test_interpolated_scores_names_a_missing_sqrt():
    feedback = exercises.check_interpolated_scores(reference_scores(0.25, 0.25, factor_of_sqrt=False), q=QUERY,
                                                   cached_keys=KEYS, factor=4)
    assert feedback.status == MISTAKE and "sqrt" in feedback.message


@pytest.mark.parametrize("answer", [None, "scores", torch.zeros(5), torch.zeros(6), torch.full((6,), float("nan")),
                                    torch.zeros(6, device="meta"), [[1, 2], [3]]])
def test_interpolated_scores_answers_anything(answer):
    feedback = exercises.check_interpolated_scores(answer, q=QUERY, cached_keys=KEYS, factor=4)
    assert feedback.status in (NOT_ATTEMPTED, WRONG)


@pytest.mark.parametrize("kwargs", [{"q": torch.zeros(7), "cached_keys": torch.zeros(3, 7), "factor": 2},
                                    {"q": QUERY, "cached_keys": torch.zeros(3, 6), "factor": 2},
                                    {"q": QUERY, "cached_keys": KEYS, "factor": 1},
                                    {"q": QUERY, "cached_keys": KEYS, "factor": 2, "base": -1.0}])
def test_interpolated_scores_refuses_bad_inputs(kwargs):
    with pytest.raises((TypeError, ValueError), match="q|cached_keys|factor|base"):
        exercises.check_interpolated_scores(None, **kwargs)


# An ordering, predicted before training ----------------------------------------------------------

SCORES = {"none": 0.13, "pi": 0.10, "ntk": 0.24, "yarn": 0.47}


@pytest.mark.parametrize("answer", [["yarn", "ntk", "none", "pi"], ["yarn", "ntk", "pi", "none"],
                                    ("YaRN", " ntk", "PI", "none"), "yarn > ntk > pi > none", "yarn, ntk, none, pi"])
def test_ordering_accepts_the_run_and_its_ties(answer):
    assert exercises.check_ordering(answer, measured=SCORES, question="4x").status == CORRECT


def test_ordering_names_an_upside_down_order_and_a_swap():
    upside_down = exercises.check_ordering(["pi", "none", "ntk", "yarn"], measured=SCORES, question="4x")
    assert upside_down.status == MISTAKE and "worst first" in upside_down.message
    swapped = exercises.check_ordering(["ntk", "yarn", "none", "pi"], measured=SCORES, question="4x")
    assert swapped.status == WRONG and "ntk above yarn" in swapped.message


@pytest.mark.parametrize("answer,words", [(None, "Not attempted"), (["yarn", "ntk", "pi"], "missing: 'none'"),
                                          (["yarn", "yarn", "ntk", "pi"], "once"), (["alibi"], "not one of"),
                                          (42, "Expected a list"), ([1, 2], "Expected a list")])
def test_ordering_answers_anything(answer, words):
    feedback = exercises.check_ordering(answer, measured=SCORES, question="4x")
    assert feedback.status in (NOT_ATTEMPTED, WRONG) and words in feedback.message


@pytest.mark.parametrize("kwargs", [{"measured": {"a": 1.0}, "question": "q"},
                                    {"measured": {"a": 1.0, "b": "x"}, "question": "q"},
                                    {"measured": SCORES, "question": 3},
                                    {"measured": SCORES, "question": "q", "tolerance": 2}])
def test_ordering_refuses_bad_arguments(kwargs):
    with pytest.raises((TypeError, ValueError), match="measured|question|tolerance"):
        exercises.check_ordering(["a"], **kwargs)


# Figures ---------------------------------------------------------------------------------------

PLAIN = schemes.rope_frequencies(head_dim=128, base=500_000.0)
RULES = {"pi": schemes.rope_frequencies(head_dim=128, base=500_000.0, scaling="linear", factor=4.0),
         "ntk": schemes.rope_frequencies(head_dim=128, base=500_000.0, scaling="ntk", factor=4.0),
         "yarn": schemes.rope_frequencies(head_dim=128, base=500_000.0, scaling="yarn", factor=4.0,
                                          original_max_position_embeddings=8192),
         "llama3": schemes.rope_frequencies(head_dim=128, base=500_000.0, scaling="llama3", factor=4.0,
                                            original_max_position_embeddings=8192)}
FIGURES = {
    "wavelengths_by_base": lambda: plots.wavelengths_by_base(
        {f"base {b:,.0f}": 2 * math.pi / schemes.rope_frequencies(head_dim=128, base=b) for b in (1e4, 5e5, 1e6)},
        context_length=8192),
    "unseen_angles": lambda: plots.unseen_angles(PLAIN, trained_length=8192),
    "frequencies_before_after": lambda: plots.frequencies_before_after(PLAIN, RULES, trained_length=8192, factor=4),
    "frequencies_before_after, one rule": lambda: plots.frequencies_before_after(PLAIN, {"pi": RULES["pi"]},
                                                                                 trained_length=8192, factor=4),
    "frequencies_before_after, three rules": lambda: plots.frequencies_before_after(
        PLAIN, {k: RULES[k] for k in ("pi", "ntk", "yarn")}, trained_length=8192, factor=4),
    "frequency_ratios": lambda: plots.frequency_ratios(PLAIN, RULES, factor=4),
    "accuracy_over_seeds": lambda: plots.accuracy_over_seeds(
        {"64 tokens": {"rotary": [0.3, 0.4, 0.5], "pi": [0.2, 0.4, 0.1], "yarn": [0.7, 0.6, 0.2]},
         "128 tokens": {"rotary": [0.1, 0.0, 0.2], "pi": [0.1, 0.1, 0.1], "yarn": [0.6, 0.5, 0.2]}}),
    "accuracy_over_seeds, one seed": lambda: plots.accuracy_over_seeds({"64": {"ntk": [0.5], "llama3": [0.7]}}),
    "loss_curve": lambda: plots.loss_curve({"train": [2.0 * 0.99**k + 0.01 for k in range(300)],
                                            "fine-tune": [0.5 * 0.98**k + 0.01 for k in range(50)]}),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_stretching_figure_can_be_read(name):
    problems = check_figure(FIGURES[name]())
    assert not problems, "\n".join(problems)


def test_every_stretching_figure_is_drawn_here():
    drawn = {name.split(",")[0] for name in FIGURES}
    assert set(plots.frequencies.__all__) <= drawn


def test_the_rules_keep_their_colours():
    fig = plots.frequency_ratios(PLAIN, RULES, factor=4)
    colours = {line.get_label(): line.get_color() for line in fig.axes[0].lines if not line.get_label().startswith("_")}
    assert colours == {rule: plots.SCHEME_COLOURS[rule] for rule in RULES}


def test_ratios_sit_between_1_over_factor_and_1():
    fig = plots.frequency_ratios(PLAIN, RULES, factor=4)
    for line in fig.axes[0].lines:
        if not line.get_label().startswith("_"):
            assert min(line.get_ydata()) >= 0.25 - 1e-12 and max(line.get_ydata()) <= 1 + 1e-12


def test_unseen_angles_marks_the_pairs_that_never_turned_fully():
    fig = plots.unseen_angles(PLAIN, trained_length=8192, factors=(2, 4))
    trained = fig.axes[0].lines[0].get_ydata()
    # A pair whose wavelength is shorter than the trained length has seen every angle: share 1.
    wavelengths = 2 * math.pi / PLAIN
    assert all((share == 1.0) == bool(w <= 8191) for share, w in zip(trained, wavelengths.tolist()))


@pytest.mark.parametrize("call", [
    lambda: plots.wavelengths_by_base({}, context_length=10),
    lambda: plots.wavelengths_by_base({"a": [1.0, -2.0]}, context_length=10),
    lambda: plots.wavelengths_by_base({"a": [1.0]}, context_length=0),
    lambda: plots.unseen_angles([0.1, 0.0], trained_length=10),
    lambda: plots.unseen_angles([0.1], trained_length=10, factors=(4, 2)),
    lambda: plots.frequencies_before_after([1.0, 0.1], {"pi": [0.5]}, trained_length=10, factor=2),
    lambda: plots.frequencies_before_after([1.0], {str(k): [1.0] for k in range(5)}, trained_length=10, factor=2),
    lambda: plots.frequency_ratios([1.0], {"pi": [0.5]}, factor=1),
    lambda: plots.loss_curve({"a": []}),
    lambda: plots.loss_curve({"a": [1.0]}, window=0),
])
def test_figures_refuse_bad_input(call):
    with pytest.raises((TypeError, ValueError)):
        call()


def test_the_buggy_exhibit_is_the_bug_the_checker_names():
    buggy = exercises.buggy_interpolated_scores(QUERY, KEYS, factor=4)
    assert torch.allclose(buggy, reference_scores(1.0, 0.25), atol=1e-10, rtol=0)
    feedback = exercises.check_interpolated_scores(buggy, q=QUERY, cached_keys=KEYS, factor=4)
    assert feedback.status == MISTAKE and "This is the bug" in feedback.message


@pytest.mark.parametrize("kwargs", [{"q": torch.zeros(7), "cached_keys": torch.zeros(3, 7), "factor": 2},
                                    {"q": QUERY, "cached_keys": KEYS, "factor": 0.5},
                                    {"q": "q", "cached_keys": KEYS, "factor": 2}])
def test_the_buggy_exhibit_refuses_bad_inputs(kwargs):
    with pytest.raises((TypeError, ValueError), match="q|cached_keys|factor"):
        exercises.buggy_interpolated_scores(**kwargs)


# posenc.models: the fine-tune control (no rule) and its seed ----------------------------------------------

TINY_COPY = dict(steps=2, d_model=8, num_heads=2, num_layers=1, batch_size=4, shortest_block=2, longest_block=4)


def test_fine_tune_without_a_rule_keeps_plain_rope_and_trains_on_the_longer_inputs():
    from posenc import models

    model = models.train_copy(settings=models.CopySettings(**TINY_COPY)).model
    seen = []
    tuned = models.fine_tune(model, scaling=None, factor=2.0, steps=3,
                              progress=lambda name, step, steps, loss: seen.append(name))
    assert tuned.scheme == "none x2 tuned" and len(tuned.losses) == 3 and seen == ["none x2 tuned"]
    for block in tuned.model.blocks:
        assert torch.equal(block.attention.frequencies, model.blocks[0].attention.frequencies)
        assert block.attention.attention_factor == 1.0


@pytest.mark.parametrize("factor, error", [("2", TypeError), (None, TypeError), (0.5, ValueError),
                                           (float("nan"), ValueError), (1e9, ValueError)])
def test_fine_tune_without_a_rule_refuses_a_bad_factor(factor, error):
    from posenc import models

    model = models.copy_model(models.CopySettings(**TINY_COPY))
    with pytest.raises(error, match="factor"):
        models.fine_tune(model, scaling=None, factor=factor, steps=1)


def test_fine_tune_draws_its_batches_apart_from_the_evaluation_inputs():
    from posenc import models

    # copy_accuracy scores inputs drawn with seed 1; fine_tune's default seed is another
    assert models.FINE_TUNE_SEED != 1
    assert inspect_default(models.fine_tune, "seed") == models.FINE_TUNE_SEED


def inspect_default(function, name):
    import inspect

    return inspect.signature(function).parameters[name].default


@pytest.mark.parametrize("panels, error", [
    ({}, TypeError), ([1], TypeError), ({"a": {"pi": [0.1, 0.2]}, "b": {"pi": [0.1]}}, ValueError),
    ({"a": {"pi": [1.5]}}, ValueError), ({"a": {"pi": ["x"]}}, TypeError), ({"a": {"pi": [float("nan")]}}, ValueError),
])
def test_accuracy_over_seeds_refuses_bad_panels(panels, error):
    with pytest.raises(error, match="panels"):
        plots.accuracy_over_seeds(panels)


# benchmarks/bench_stretching.py: the saved six-seed results and the claims the notebook makes from them -------------

def _bench():
    import sys
    from pathlib import Path

    benchmarks = str(Path(__file__).resolve().parent.parent / "benchmarks")
    if benchmarks not in sys.path:
        sys.path.insert(0, benchmarks)
    import bench_stretching

    return bench_stretching


def _saved():
    import json

    return json.loads(_bench().OUTPUT.read_text())


def test_every_claim_the_notebook_makes_holds_on_the_saved_seeds(capsys):
    assert _bench().check_claims(_saved()) == []
    assert "every claim holds" in capsys.readouterr().out


@pytest.mark.parametrize("rotation, rule, length, seed, value", [
    ("full", "yarn", "128", 3, 0.10),                 # YaRN no longer among the two best in a learned seed
    ("full", "linear_fine_tuned_then_linear", "128", 5, 0.10),  # the PI-tuned model below the control in one seed
    ("full", "yarn_paper", "128", 1, 0.30),           # the paper's ramp far from PI
    ("partial", "none", "64", 2, 0.20),               # half-turned plain RoPE not at chance
    ("full", "pi_keep_pair0", "64", 4, 0.60),         # PI with pair 0 kept no longer above YaRN and Llama 3.1's rule
    ("full", "yarn_pair0_paper", "64", 0, 0.60),      # YaRN without pair 0 kept no longer far below YaRN
])
def test_a_claim_that_no_longer_holds_is_caught(rotation, rule, length, seed, value, capsys):
    record = _saved()
    record["accuracy"][rotation][rule][length][seed] = value
    assert len(_bench().check_claims(record)) >= 1
    assert "✘" in capsys.readouterr().out


def test_the_papers_ramp_keeps_fast_pairs_interpolates_slow_ones_and_is_linear_in_the_turns():
    from posenc.rope_scaling import rope_frequencies

    bench = _bench()
    # head_dim 128, base 10,000, L = 4,096 (Llama 2): pairs with more than 32 turns kept, fewer than 1 divided by s
    plain = rope_frequencies(head_dim=128)
    paper = bench.paper_yarn_frequencies(head_dim=128, base=10_000.0, factor=4.0, original_length=4096)
    turns = 4096 * plain / (2 * math.pi)
    assert torch.equal(paper[turns > 32], plain[turns > 32])
    torch.testing.assert_close(paper[turns < 1], plain[turns < 1] / 4, rtol=1e-15, atol=0.0)
    between = (turns >= 1) & (turns <= 32)
    gamma = (paper[between] / plain[between] - 0.25) / 0.75  # eq. 20 solved for gamma
    torch.testing.assert_close(gamma, (turns[between] - 1) / 31, rtol=1e-12, atol=1e-12)  # eq. 18
    # the copy model's heads (head_dim 16, L = 32): no pair makes 32 turns, so none is kept; pair 0 makes 32 / 2 pi
    small = bench.paper_yarn_frequencies(head_dim=16, base=10_000.0, factor=2.0, original_length=32)
    gamma0 = (32 / (2 * math.pi) - 1) / 31
    assert float(small[0]) == pytest.approx((1 - gamma0) / 2 + gamma0, rel=1e-12)
    assert bool((small < rope_frequencies(head_dim=16)).all())


def test_the_ablations_change_only_what_they_name():
    from posenc import models
    from posenc.rope_scaling import rope_frequencies

    bench = _bench()
    model = models.copy_model(models.CopySettings())
    plain = rope_frequencies(head_dim=16)
    paper = bench.paper_yarn_frequencies(head_dim=16, base=10_000.0, factor=2.0, original_length=32)
    yarn = bench._model_for(model, "yarn", 2)
    keep = bench._model_for(model, "pi_keep_pair0", 2)
    not_kept = bench._model_for(model, "yarn_pair0_paper", 2)
    for block, yarn_block, other in zip(keep.blocks, yarn.blocks, not_kept.blocks, strict=True):
        # PI but pair 0: pair 0 plain, every other pair divided by 2, no attention factor
        assert float(block.attention.frequencies[0]) == float(plain[0])
        torch.testing.assert_close(block.attention.frequencies[1:], plain[1:] / 2, rtol=1e-15, atol=0.0)
        assert block.attention.attention_factor == 1.0
        # the code's YaRN with pair 0 alone at the paper's value, its attention factor kept
        assert float(other.attention.frequencies[0]) == float(paper[0]) < float(plain[0])
        assert torch.equal(other.attention.frequencies[1:], yarn_block.attention.frequencies[1:])
        assert other.attention.attention_factor == yarn_block.attention.attention_factor > 1.0
    # the model itself is not changed
    assert all(torch.equal(b.attention.frequencies, plain) for b in model.blocks)
