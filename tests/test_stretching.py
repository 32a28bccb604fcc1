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
    "accuracy_over_seeds, seeds that did not learn marked": lambda: plots.accuracy_over_seeds(
        {"64 tokens": {"rotary": [0.3, 0.4, 0.5], "yarn": [0.7, 0.6, 0.2]}}, seeds=[3, 4, 5], learned=[3, 4]),
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


def test_accuracy_over_seeds_marks_the_seeds_that_did_not_learn_and_leaves_them_out_of_the_median():
    fig = plots.accuracy_over_seeds({"64": {"yarn": [0.7, 0.6, 0.2, 0.5]}}, learned=[0, 1, 3])
    ax = fig.axes[0]
    dots = [line for line in ax.lines if line.get_linestyle() == "None"]
    hollow = [line for line in dots if line.get_fillstyle() == "none"]
    assert len(dots) == 4 and len(hollow) == 1 and float(hollow[0].get_ydata()[0]) == 0.2
    bar = [line for line in ax.lines if line.get_linestyle() != "None"]
    assert [float(y) for y in bar[0].get_ydata()] == [0.6, 0.6]  # the median of 0.7, 0.6 and 0.5
    assert sorted(t.get_text() for t in ax.texts) == ["0", "1", "2", "3"]
    assert "seed 2, which did not learn" in fig._suptitle.get_text()


@pytest.mark.parametrize("kwargs", [{"seeds": [0, 1]}, {"seeds": [0, 0, 1]}, {"learned": [7]}, {"learned": []},
                                    {"seeds": "abc"}, {"learned": [0.5]}])
def test_accuracy_over_seeds_refuses_seeds_that_do_not_fit(kwargs):
    with pytest.raises((TypeError, ValueError), match="seeds|learned"):
        plots.accuracy_over_seeds({"64": {"pi": [0.1, 0.2, 0.3]}}, **kwargs)


def test_the_reference_lines_are_not_dashed_like_a_rule():
    fig = plots.frequencies_before_after(PLAIN, {"pi": RULES["pi"]}, trained_length=8192, factor=4)
    ax = fig.axes[0]
    references = [line for line in ax.lines if line.get_label().startswith("_")]
    assert {line.get_linestyle() for line in references} == {"-"}
    assert {t.get_text() for t in ax.texts} == {"L", "4L"}


def test_the_ratio_axis_says_it_is_a_log_scale():
    ax = plots.frequency_ratios(PLAIN, RULES, factor=4).axes[0]
    assert ax.get_yscale() == "log" and "log scale" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1/4: interpolated", "1/2", "1: kept"]


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
    ("full", "llama3_fine_tuned_reloaded", "64", 3, 0.90),  # reloaded without its rule, no longer failing at 2x
    ("full", "llama3_fine_tuned_reloaded", "32", 5, 0.70),  # ... or failing at 1x too
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


# GPT-NeoX-20B's slowest turned pair: partial RoPE ------------------------------------------------------------------

NEOX = {"head_dim": 24, "base": 10_000.0, "whole_head_dim": 96}  # rotary_pct 0.25 of 6144 / 64 = 96 columns


def test_slowest_turned_pair_is_computed_over_the_turned_columns():
    right = 2 * math.pi * 10_000 ** (22 / 24)
    assert 29_100 < right < 29_200
    assert exercises.check_slowest_wavelength(right, **NEOX).status == CORRECT
    assert exercises.check_slowest_wavelength(round(right), **NEOX).status == CORRECT
    assert math.isclose(right, 2 * math.pi / float(schemes.rope_frequencies(head_dim=24)[-1]))


@pytest.mark.parametrize("answer,words", [
    (2 * math.pi * 10_000 ** (94 / 96), "whole 96-column head"),
    (2 * math.pi * 10_000 ** (22 / 96), "denominator"),
    (10_000 ** (22 / 24), "2 pi is missing"),
    (2 * math.pi * 10_000 ** (11 / 24), "uses i"),
])
def test_slowest_turned_pair_names_the_mistake(answer, words):
    feedback = exercises.check_slowest_wavelength(answer, **NEOX)
    assert feedback.status == MISTAKE and words in feedback.message, feedback


@pytest.mark.parametrize("whole", [24, 10, "96", 1.5])
def test_slowest_turned_pair_refuses_a_whole_head_no_larger_than_its_turned_part(whole):
    with pytest.raises((TypeError, ValueError), match="whole_head_dim"):
        exercises.check_slowest_wavelength(1.0, head_dim=24, base=1e4, whole_head_dim=whole)


# GPT-NeoX-20B's columns that turn fully within its 2,048 training positions: partial RoPE ---------------------------

NEOX_HEAD = {"head_dim": 96, "rotary_dim": 24, "base": 10_000.0, "length": 2048}


def test_turning_columns_counts_two_columns_per_fast_turned_pair():
    wavelengths = [2 * math.pi * 10_000 ** (2 * i / 24) for i in range(12)]  # over the 24 turned columns
    assert wavelengths[7] < 2047 < wavelengths[8]  # pairs 0 to 7 turn fully: 16 columns
    for answer in (16, 16.0, torch.tensor(16), np.int64(16)):
        assert exercises.check_turning_columns(answer, **NEOX_HEAD).status == CORRECT
    assert "pair 8 turns once every 2,916" in exercises.check_turning_columns(16, **NEOX_HEAD).message


def test_turning_columns_reads_the_largest_offset_as_length_minus_one():
    # pair 1 of a 4-column turned part at base 100 turns every 2 pi 100^(2/4) = 62.8 positions: offsets up to 62
    # (length 63) fall short of a turn, up to 63 (length 64) make one
    kwargs = {"head_dim": 8, "rotary_dim": 4, "base": 100.0}
    assert exercises.check_turning_columns(2, length=63, **kwargs).status == CORRECT
    assert exercises.check_turning_columns(4, length=64, **kwargs).status == CORRECT


@pytest.mark.parametrize("answer,words", [
    (8, "counts pairs"),
    (24, "not over the whole head's 96"),
    (62, "turns the whole head"),
    (80, "never make a full turn"),
    (88, "unturned columns carry no angle"),
])
def test_turning_columns_names_the_mistake(answer, words):
    feedback = exercises.check_turning_columns(answer, **NEOX_HEAD)
    assert feedback.status == MISTAKE and words in feedback.message, feedback


def test_turning_columns_says_both_reasons_when_two_mistakes_give_every_turned_column():
    message = exercises.check_turning_columns(24, **NEOX_HEAD).message
    assert "not every turned pair makes a full turn" in message


@pytest.mark.parametrize("answer", [None, "16", 15.5, float("nan"), np.array([16, 16]), 3])
def test_turning_columns_answers_anything(answer):
    assert exercises.check_turning_columns(answer, **NEOX_HEAD).status in (NOT_ATTEMPTED, WRONG)


@pytest.mark.parametrize("change", [{"head_dim": 95}, {"rotary_dim": 25}, {"rotary_dim": 128}, {"base": 1.0},
                                    {"length": 1}, {"length": "2048"}])
def test_turning_columns_refuses_bad_arguments(change):
    with pytest.raises((TypeError, ValueError), match="head_dim|rotary_dim|base|length"):
        exercises.check_turning_columns(16, **{**NEOX_HEAD, **change})


# The two rules that carry the copy model to 4x, over the saved seeds ----------------------------------------------

def _at_4x():
    saved = _saved()
    full = saved["accuracy"]["full"]
    learned = [k for k, a in enumerate(full["none"]["32"]) if a >= 0.9]
    return {rule: full[rule]["128"] for rule in exercises.stretching.BEST_TWO_RULES}, learned


@pytest.mark.parametrize("answer", [["yarn", "llama3"], ("llama3", "YaRN"), "yarn, llama3", "Llama 3.1 and yarn",
                                    {"yarn", "llama3"}, ["yarn ", "llama3.1"]])
def test_best_two_accepts_yarn_and_llama3_in_any_order_and_form(answer):
    by_seed, learned = _at_4x()
    feedback = exercises.check_best_two(answer, by_seed=by_seed, learned=learned)
    assert feedback.status == CORRECT and "keeps pair 0" in feedback.message, feedback


@pytest.mark.parametrize("answer,words", [
    (["yarn", "ntk"], "Not ntk"), (["pi", "llama3"], "PI divides pair 0 too"), (["none", "pi"], "Not none"),
    (["yarn_paper", "llama3"], "keeps no pair"), ("yarn (paper's ramp), yarn", "Not yarn_paper"),
])
def test_best_two_names_what_each_wrong_rule_does(answer, words):
    by_seed, learned = _at_4x()
    feedback = exercises.check_best_two(answer, by_seed=by_seed, learned=learned)
    assert feedback.status == MISTAKE and words in feedback.message and "yarn and llama3" in feedback.message, feedback


def test_best_two_names_both_wrong_rules():
    by_seed, learned = _at_4x()
    message = exercises.check_best_two(["none", "pi"], by_seed=by_seed, learned=learned).message
    assert "Not none" in message and "Not pi" in message


@pytest.mark.parametrize("answer,words", [(None, "Not attempted"), (["yarn"], "two different"),
                                          (["yarn", "yarn"], "two different"), (["alibi", "yarn"], "not one of"),
                                          (42, "Expected two rule names"), ([1, 2], "Expected two rule names"),
                                          (["yarn", "ntk", "pi"], "two different")])
def test_best_two_answers_anything(answer, words):
    by_seed, learned = _at_4x()
    feedback = exercises.check_best_two(answer, by_seed=by_seed, learned=learned)
    assert feedback.status in (NOT_ATTEMPTED, WRONG) and words in feedback.message, feedback


def test_best_two_refuses_seeds_whose_two_best_differ():
    by_seed, _ = _at_4x()
    with pytest.raises(ValueError, match="by_seed"):  # seeds 2 and 5 did not learn: their two best are others
        exercises.check_best_two(["yarn", "llama3"], by_seed=by_seed, learned=list(range(6)))


@pytest.mark.parametrize("kwargs", [{"by_seed": {"yarn": [0.5], "llama3": [0.4]}, "learned": [0]},
                                    {"by_seed": {"yarn": [0.5], "llama3": [0.4], "alibi": [0.1]}, "learned": [0]},
                                    {"by_seed": {"yarn": [0.5], "llama3": [0.4], "pi": [0.1, 0.2]}, "learned": [0]},
                                    {"by_seed": {"yarn": [0.5], "llama3": [0.4], "pi": ["x"]}, "learned": [0]},
                                    {"by_seed": {"yarn": [0.5], "llama3": [0.4], "pi": [0.1]}, "learned": [3]},
                                    {"by_seed": {"yarn": [0.5], "llama3": [0.4], "pi": [0.1]}, "learned": []}])
def test_best_two_refuses_bad_arguments(kwargs):
    with pytest.raises((TypeError, ValueError), match="by_seed|learned"):
        exercises.check_best_two(["yarn", "llama3"], **kwargs)


# A model tuned with Llama 3.1's rule, reloaded without it ---------------------------------------------------------

def _tuned_state():
    from posenc import models

    settings = models.CopySettings(d_model=16, num_heads=1, num_layers=1)  # heads of 16 columns, L = 32
    tuned = models.copy_model(settings)
    with torch.no_grad():
        for parameter in tuned.parameters():
            parameter.add_(0.01)  # weights the fresh model does not have
    return models, settings, tuned.state_dict()


def _reloaded(models, settings, state):
    model = models.copy_model(settings)
    model.load_state_dict(state)
    return model


def test_rule_restored_accepts_the_weights_with_llama3s_frequencies_however_they_are_set():
    models, settings, state = _tuned_state()
    kwargs = {"state": state, "settings": settings, "scaling": "llama3", "factor": 2.0}
    stretched = models.stretched(_reloaded(models, settings, state), scaling="llama3", factor=2.0)
    feedback = exercises.check_rule_restored(stretched, **kwargs)
    assert feedback.status == CORRECT and "not the rule" in feedback.message, feedback
    by_hand = _reloaded(models, settings, state)
    for block in by_hand.blocks:
        block.attention.frequencies = schemes.rope_frequencies(head_dim=16, scaling="llama3", factor=2,
                                                               original_max_position_embeddings=32).float()
    assert exercises.check_rule_restored(by_hand, **kwargs).status == CORRECT


@pytest.mark.parametrize("make,words", [
    (lambda m, s, st: _reloaded(m, s, st), "This is the bug"),
    (lambda m, s, st: m.stretched(_reloaded(m, s, st), scaling="llama3", factor=2.0, original_max_position_embeddings=64),
     "fine-tuned length"),
    (lambda m, s, st: m.stretched(_reloaded(m, s, st), scaling="linear", factor=2.0), "PI's"),
    (lambda m, s, st: m.stretched(_reloaded(m, s, st), scaling="yarn", factor=2.0), "YaRN's"),
    (lambda m, s, st: m.stretched(_reloaded(m, s, st), scaling="llama3", factor=4.0), "for factor 4"),
    (lambda m, s, st: m.stretched(_reloaded(m, s, st), scaling="llama3", factor=8.0), "for factor 8"),
    (lambda m, s, st: m.stretched(m.copy_model(s), scaling="llama3", factor=2.0), "weights are not the tuned"),
    (lambda m, s, st: m.copy_model(s), "The weights are not the tuned ones either"),
])
def test_rule_restored_names_the_mistake(make, words):
    models, settings, state = _tuned_state()
    feedback = exercises.check_rule_restored(make(models, settings, state), state=state, settings=settings,
                                             scaling="llama3", factor=2.0)
    assert feedback.status == MISTAKE and words in feedback.message, feedback


def test_rule_restored_answers_anything():
    models, settings, state = _tuned_state()
    kwargs = {"state": state, "settings": settings, "scaling": "llama3", "factor": 2.0}
    other = models.copy_model(models.CopySettings(d_model=16, num_heads=1, num_layers=1, seed=3))
    uneven = models.stretched(_reloaded(models, settings, state), scaling="llama3", factor=2.0)
    uneven.blocks[0].attention.frequencies = uneven.blocks[0].attention.frequencies[:3]
    for answer, words in [(None, "Not attempted"), (state, "state dict"), (torch.nn.Identity(), "Expected a model"),
                          (models.TinyTransformer(scheme="learned"), "Expected a model"), (other, "other settings"),
                          (uneven, "finite numbers"), ("model", "Expected a model")]:
        feedback = exercises.check_rule_restored(answer, **kwargs)
        assert feedback.status in (NOT_ATTEMPTED, WRONG) and words in feedback.message, (answer, feedback)


def test_rule_restored_leaves_torchs_generator_as_it_was():
    models, settings, state = _tuned_state()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    exercises.check_rule_restored(None, state=state, settings=settings, scaling="llama3", factor=2.0)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("change", [{"settings": None}, {"scaling": None}, {"scaling": "alibi"}, {"factor": 1.0},
                                    {"factor": "2"}, {"state": {}}])
def test_rule_restored_refuses_bad_arguments(change):
    models, settings, state = _tuned_state()
    kwargs = {"state": state, "settings": settings, "scaling": "llama3", "factor": 2.0, **change}
    with pytest.raises((TypeError, ValueError), match="state|settings|scaling|factor"):
        exercises.check_rule_restored(None, **kwargs)
