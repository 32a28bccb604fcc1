"""Notebook 12's claims about its five tables, at its sizes (100,000 positions, d_model 64), with their margins.

These were the notebook's check cell; the reading path now shows the figures and says each result once.
"""

import torch

from posenc import builder, encoding

LENGTH, D_MODEL = 100_000, 64
BF16_HALF_GAP, F32_HALF_GAP = 2.0**-9, 2.0**-25  # half a gap for values from 0.5 to 1, where the worst sines sit


def test_the_five_recipes_stay_where_notebook_12_says():
    reference = builder.sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL, dtype=torch.float64)
    f32 = encoding.stepwise_encoding(max_sequence_length=LENGTH, d_model=D_MODEL)
    differences = {name: (table.double() - reference).abs().amax(dim=1) for name, table in
                   {"f32": f32, "f32→bf16": f32.to(torch.bfloat16), "f64→bf16": reference.to(torch.bfloat16),
                    "f64→f32": reference.float()}.items()}
    # A cast after float32 stays within half a bfloat16 gap plus f32's drift.
    assert (differences["f32→bf16"] <= BF16_HALF_GAP + differences["f32"] + 1e-12).all()
    # torch casts float64 to bfloat16 through float32: up to 2^-25 over one rounding.
    assert differences["f64→bf16"].max() <= BF16_HALF_GAP + F32_HALF_GAP
    assert (differences["f64→f32"] <= F32_HALF_GAP).all()
    # The drift is small below 1,000 positions and passes a whole bfloat16 gap by 100,000 (here 0.03 and 3.50 of
    # 2^-9; one ulp more or less in float32's pow, as on another CPU, moves where it crosses, not these bounds).
    worst = differences["f32"].cummax(dim=0).values
    assert worst[999] < 0.25 * BF16_HALF_GAP and worst[-1] > 2 * BF16_HALF_GAP


def test_the_package_tables_round_once():
    reference = builder.sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL, dtype=torch.float64)
    float32 = builder.sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL)
    bfloat16 = builder.sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL, dtype=torch.bfloat16)
    assert float((float32.double() - reference).abs().max()) < 2e-7
    assert float((bfloat16.double() - reference).abs().max()) < BF16_HALF_GAP + 2e-7


def test_pair_7_goes_most_wrong_at_8000_and_pair_1_stays_under_its_drift_bound():
    # Notebook 12 names pair 7 as the worst bfloat16 sine at position 8,000, and bounds pair 1's float32 angle error by
    # 2^-23 x 0.75 x p (two roundings of about 2^-24 each; pair 1's denominator is off by 0.67 x 2^-24).
    denominator_64 = 1 / builder.frequencies(d_model=D_MODEL)
    exact = 8000 / denominator_64
    angle = (torch.tensor(8000.0, dtype=torch.bfloat16) / denominator_64.to(torch.bfloat16)).double()
    assert int((angle.sin() - exact.sin()).abs().argmax()) == 7
    angles_f32 = (encoding.positions(max_sequence_length=LENGTH) / encoding.even_denominator(d_model=D_MODEL)).double()
    angles_exact = torch.arange(LENGTH, dtype=torch.float64)[:, None] * builder.frequencies(d_model=D_MODEL)
    error = (angles_f32 - angles_exact)[:, 1].abs().cummax(dim=0).values
    bound = 2.0**-23 * 0.75 * torch.arange(1, LENGTH + 1, dtype=torch.float64)
    for p in (1_000, 10_000, 100_000):
        assert error[p - 1] < bound[p - 1]
    denominator_32 = float(encoding.even_denominator(d_model=D_MODEL).flatten()[1])
    assert abs(denominator_32 - float(denominator_64[1])) / float(denominator_64[1]) < 2.0**-24
