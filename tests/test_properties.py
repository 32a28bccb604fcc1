"""Properties of the table that hold for every size (hypothesis)."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.builder import sinusoidal_encoding
from posenc.encoding import stepwise_encoding, to_concatenated

lengths = st.integers(min_value=1, max_value=400)
d_models = st.integers(min_value=1, max_value=96)
even_d_models = st.integers(min_value=1, max_value=48).map(lambda n: 2 * n)
bases = st.sampled_from([2.0, 10.0, 100.0, 10000.0, 1e6])


@settings(max_examples=60, deadline=None)
@given(length=lengths, d_model=d_models, base=bases)
def test_every_value_is_in_minus_one_to_one(length, d_model, base):
    table = sinusoidal_encoding(max_sequence_length=length, d_model=d_model, base=base)
    assert table.shape == (length, d_model)
    assert table.abs().max() <= 1.0


@settings(max_examples=40, deadline=None)
@given(d_model=even_d_models, p=st.integers(0, 200), q=st.integers(0, 200), shift=st.integers(0, 200))
def test_dot_product_depends_only_on_the_offset(d_model, p, q, shift):
    table = sinusoidal_encoding(max_sequence_length=401, d_model=d_model, dtype=torch.float64)
    # sum_k sin(w p) sin(w q) + cos(w p) cos(w q) = sum_k cos(w (p - q))
    assert abs(float(table[p] @ table[q] - table[p + shift] @ table[q + shift])) < 1e-9


@settings(max_examples=40, deadline=None)
@given(d_model=even_d_models, p=st.integers(0, 200), k=st.integers(0, 200))
def test_shifting_by_k_is_a_fixed_block_diagonal_rotation(d_model, p, k):
    table = sinusoidal_encoding(max_sequence_length=401, d_model=d_model, dtype=torch.float64)
    # One 2 x 2 rotation per (sin, cos) pair, depending on k only, not on p.
    angle = table[k, 0::2].atan2(table[k, 1::2])
    cos, sin = torch.cos(angle), torch.sin(angle)
    rotation = torch.zeros(d_model, d_model, dtype=torch.float64)
    rotation[0::2, 0::2] = torch.diag(cos)
    rotation[0::2, 1::2] = torch.diag(sin)
    rotation[1::2, 0::2] = torch.diag(-sin)
    rotation[1::2, 1::2] = torch.diag(cos)
    torch.testing.assert_close(rotation @ table[p], table[p + k], atol=1e-9, rtol=0)


@settings(max_examples=40, deadline=None)
@given(length=lengths, d_model=d_models)
def test_interleaved_is_a_column_permutation_of_concatenated(length, d_model):
    table = sinusoidal_encoding(max_sequence_length=length, d_model=d_model)
    concatenated = to_concatenated(table)
    permutation = torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])
    assert sorted(permutation.tolist()) == list(range(d_model))
    assert torch.equal(concatenated, table[:, permutation])


@settings(max_examples=40, deadline=None)
@given(length=lengths, d_model=d_models)
def test_stepwise_and_fast_builder_agree(length, d_model):
    fast = sinusoidal_encoding(max_sequence_length=length, d_model=d_model)
    steps = stepwise_encoding(max_sequence_length=length, d_model=d_model)
    assert steps.shape == fast.shape
    assert (fast - steps).abs().max() <= 2e-6 + length * 2.0**-23
