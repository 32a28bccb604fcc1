"""Notebook 10's head set by hand: W_K turns each key forward one position, W_Q keeps the queries, on PE alone.

The notebook's settings: d_model 64, base 10000, 128 positions, W_Q = 3 I, W_K = sqrt(d_model) R_1, no
mask. Measured there (and recomputed from the sum of cosines without the package): every query p >= 1 puts its
largest weight on key p - 1; that weight is at least 0.928, and it beats the next largest by at least 0.892. The
thresholds below leave about 0.005 of room. With two pairs (d_model 4) far keys nearly tie with p - 1, and the same
check fails: key p - 1 still takes the most weight, but only 0.04 to 0.06 (measured 0.038 to 0.055).
"""

import json
import math
import re
from pathlib import Path

import torch

from posenc import attention, builder, schemes

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "10_relative_positions.ipynb"
D_MODEL, LENGTH, SHARPNESS = 64, 128, 3.0
LEAST_WEIGHT, LEAST_MARGIN = 0.92, 0.885  # measured: 0.928 and 0.892


def hand_set_head(*, d_model: int, length: int = LENGTH, sharpness: float = SHARPNESS) -> torch.Tensor:
    """The head's attention weights on the table alone, with no mask, `(length, length)`."""
    table = builder.sinusoidal_encoding(max_sequence_length=length, d_model=d_model, dtype=torch.float64)
    forward = schemes.rotation_matrix(position=1, d=d_model)  # R_1: PE[j] @ forward = PE[j + 1]
    identity = torch.eye(d_model, dtype=torch.float64)
    weights = attention.ProjectionWeights(W_Q=sharpness * identity, W_K=math.sqrt(d_model) * forward, W_V=identity)
    Q, K, _ = attention.project_qkv(table, weights)
    return attention.attention_weights(attention.scaled_dot_product_scores(Q, K))


def previous_token_check(head: torch.Tensor) -> tuple[bool, float, float]:
    """For the queries p >= 1: is the largest weight on p - 1 in every row, the least such weight, the least margin."""
    top = head[1:].topk(2, dim=-1)
    on_previous = bool((top.indices[:, 0] == torch.arange(head.shape[0] - 1)).all())
    return on_previous, float(top.values[:, 0].min()), float((top.values[:, 0] - top.values[:, 1]).min())


def test_the_notebook_uses_the_settings_tested_here():
    code = "\n".join("".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code")
    assert re.search(rf"^d_model, max_sequence_length = {D_MODEL}, {LENGTH}$", code, re.M)
    assert re.search(rf"^sharpness = {SHARPNESS}$", code, re.M)


def test_every_position_looks_one_back_with_its_margin():
    head = hand_set_head(d_model=D_MODEL)
    on_previous, least_weight, least_margin = previous_token_check(head)
    assert on_previous
    assert least_weight >= LEAST_WEIGHT, least_weight
    assert least_margin >= LEAST_MARGIN, least_margin
    assert float(head[0, 0]) > 0.999  # position 0 has no previous token: its best key is itself, one step closer than key 1
    assert float(head.diagonal(1).max()) < 1e-3  # with no mask, the key one ahead gets almost nothing all the same


def test_the_check_fails_where_far_keys_nearly_tie():
    # Two pairs: the sum of cosines comes within 0.03 of its peak 19 steps away, so the weight spreads out.
    offsets = torch.arange(1, LENGTH, dtype=torch.float64)
    sums = torch.cos(offsets[:, None] * builder.frequencies(d_model=4)).sum(dim=-1)
    assert 2 - float(sums.max()) < 0.03 and int(sums.argmax()) + 1 == 19
    head = hand_set_head(d_model=4)
    on_previous, least_weight, least_margin = previous_token_check(head)
    assert least_weight < LEAST_WEIGHT and least_margin < LEAST_MARGIN
    # The notebook's side note: key p - 1 still keeps the most weight at every query, but only 0.04 to 0.06.
    weights_on_previous = head.diagonal(-1)  # query p, key p - 1, for p >= 1 (measured 0.038 to 0.055)
    assert on_previous and round(float(weights_on_previous.min()), 2) == 0.04
    assert round(float(weights_on_previous.max()), 2) == 0.06
    # ... and keys 18 or more positions away get almost as much: each row's runner-up is that far (0.035 to 0.051).
    runner_up = head[1:].topk(2, dim=-1)
    distance = (runner_up.indices[:, 1] - torch.arange(1, LENGTH)).abs()
    assert int(distance.min()) >= 18 and float((weights_on_previous - runner_up.values[:, 1]).max()) < 0.01


def test_the_side_note_row_64_at_two_pairs_and_why():
    # The notebook's side note: with d_model = 4, row 64 gives key 63 only 0.038, and the keys 6, 19 and 25 steps to
    # either side of it 0.0336 to 0.0349 (the next best keys of the row, apart from 63).
    row = hand_set_head(d_model=4)[64]
    assert round(float(row[63]), 3) == 0.038 and int(row.argmax()) == 63
    near = [float(row[63 + side * step]) for step in (6, 19, 25) for side in (-1, 1)]
    assert all(0.0335 <= weight < 0.0350 for weight in near), near
    assert set(row.topk(7).indices.tolist()) == {63} | {63 + side * step for step in (6, 19, 25) for side in (-1, 1)}
    # Why: those offsets are close to whole turns of pair 0 (w = 1), 2 pi, 6 pi and 8 pi, and pair 1 (w = 0.01)
    # turns by at most a quarter of a radian over 25 steps.
    assert all(abs(step - turns * 2 * math.pi) < 0.3 for step, turns in ((6, 1), (19, 3), (25, 4)))
    assert float(builder.frequencies(d_model=4)[1]) * 25 <= 0.25 + 1e-12


def test_notebook_10s_head_by_hand_matches_the_package_and_its_printed_weight():
    # The notebook builds the head without the package's attention; these were its check cell.
    table = builder.sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL, dtype=torch.float64)
    R_1 = schemes.rotation_matrix(position=1, d=D_MODEL)
    W_Q, W_K = SHARPNESS * torch.eye(D_MODEL, dtype=torch.float64), math.sqrt(D_MODEL) * R_1
    head = torch.softmax((table @ W_Q) @ (table @ W_K).T / math.sqrt(D_MODEL), dim=-1)
    assert torch.allclose(head, hand_set_head(d_model=D_MODEL))
    assert torch.allclose(table[:-1] @ R_1, table[1:])
    assert torch.allclose(W_Q @ W_K.T / math.sqrt(D_MODEL), SHARPNESS * R_1.T)  # a rotation and a scaling
    assert torch.allclose(head.diagonal(offset=-1)[1:], torch.tensor(0.928, dtype=torch.float64), atol=5e-4)


def test_same_word_scores_is_the_four_term_score():
    # Notebook 10's Exercise 2: one word at query 100 and key 105, through seed 0's W_Q W_K^T.
    table = builder.sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL, dtype=torch.float64)
    weights = attention.projection_weights(d_model=D_MODEL, seed=0)
    word = torch.randn(D_MODEL, generator=torch.Generator().manual_seed(1)).double()
    W_QK = weights.W_Q.double() @ weights.W_K.double().T
    package = schemes.same_word_scores(word, weights, scheme="sinusoidal", query_position=100, offsets=[5])
    assert torch.allclose(package, (word + table[100]) @ W_QK @ (word + table[105]))
