"""posenc.schemes against independent implementations and the papers' own numbers."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rotary_embedding_torch import RotaryEmbedding

from posenc import attention, encoding, schemes


# RoPE ------------------------------------------------------------------------------------------


def rope_loop(x: torch.Tensor, *, base: float = 10000.0, offset: int = 0) -> torch.Tensor:
    """RoFormer, equation (34): R_theta,m x with theta_i = base^(-2(i-1)/d), pair by pair, in float64."""
    out = torch.empty_like(x, dtype=torch.float64)
    seq, d = x.shape
    for p in range(seq):
        for i in range(d // 2):
            angle = (offset + p) * base ** (-2 * i / d)
            x1, x2 = float(x[p, 2 * i]), float(x[p, 2 * i + 1])
            out[p, 2 * i] = x1 * math.cos(angle) - x2 * math.sin(angle)
            out[p, 2 * i + 1] = x1 * math.sin(angle) + x2 * math.cos(angle)
    return out


@pytest.mark.parametrize("seq,d,base,offset", [(10, 6, 10000.0, 0), (7, 16, 10000.0, 3), (5, 2, 100.0, 1000), (12, 64, 500000.0, 0)])
def test_rope_matches_the_equations_written_as_a_loop(seq, d, base, offset):
    x = torch.randn(seq, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seq * d))
    assert torch.allclose(schemes.apply_rotary(x, base=base, offset=offset), rope_loop(x, base=base, offset=offset),
                          rtol=0, atol=1e-12)


@pytest.mark.parametrize("offset", [0, 5])
def test_rope_matches_rotary_embedding_torch(offset):
    peer = RotaryEmbedding(dim=32)  # interleaved pairs, base 10000, like apply_rotary's default
    x = torch.randn(2, 4, 20, 32, generator=torch.Generator().manual_seed(1))
    ours = schemes.apply_rotary(x, offset=offset)
    theirs = peer.rotate_queries_or_keys(x, seq_dim=-2, offset=offset)
    assert ours.dtype == torch.float32 and ours.shape == x.shape
    assert torch.allclose(ours, theirs, rtol=0, atol=1e-5)


def rotate_half_llama(x: torch.Tensor, *, base: float = 10000.0) -> torch.Tensor:
    """The GPT-NeoX / LLaMA way: pair i is (i, i + d/2); cos and sin repeated over both halves."""
    seq, d = x.shape[-2:]
    frequencies = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.arange(seq, dtype=torch.float64)[:, None] * frequencies
    angles = torch.cat([angles, angles], dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * angles.cos() + torch.cat([-x2, x1], dim=-1) * angles.sin()


def test_half_split_layout_is_the_llama_code_and_a_column_permutation_of_interleaved():
    x = torch.randn(3, 9, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    permutation = schemes.half_split_permutation(d=12)
    assert permutation.tolist() == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]
    half = schemes.apply_rotary(x, layout="half_split")
    assert torch.allclose(half, rotate_half_llama(x), rtol=0, atol=1e-12)
    assert torch.allclose(schemes.apply_rotary(x[..., permutation], layout="half_split"),
                          schemes.apply_rotary(x)[..., permutation], rtol=0, atol=1e-12)
    table = encoding.sinusoidal_encoding(max_sequence_length=4, d_model=12)
    assert torch.equal(table[:, permutation], encoding.to_concatenated(table))


def test_rope_angles_are_the_sinusoidal_encodings_angles():
    angles = schemes.rotary_angles(max_sequence_length=10, d=6)
    table = encoding.sinusoidal_encoding(max_sequence_length=10, d_model=6, dtype=torch.float64)
    assert torch.allclose(angles.sin(), table[:, 0::2], atol=1e-12)
    assert torch.allclose(angles.cos(), table[:, 1::2], atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(0, 5000), n=st.integers(0, 5000), shift=st.integers(-5000, 5000), d=st.sampled_from([2, 6, 64]),
       seed=st.integers(0, 2**16))
def test_rope_score_depends_only_on_the_offset(m, n, shift, d, seed):
    shift = max(shift, -min(m, n))
    generator = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, d, dtype=torch.float64, generator=generator)

    def score(p, r):
        return float(schemes.apply_rotary(q, offset=p) @ schemes.apply_rotary(k, offset=r).T)

    assert score(m, n) == pytest.approx(score(m + shift, n + shift), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("position,d,base", [(0, 2, 10000.0), (3, 6, 10000.0), (1000, 16, 500000.0)])
def test_rotation_matrix_is_the_block_diagonal_of_the_paper(position, d, base):
    R = schemes.rotation_matrix(position=position, d=d, base=base)
    # Column j of R is R applied to the unit vector e_j: the loop's rotation of each e_j.
    columns = [rope_loop(e[None], base=base, offset=position)[0] for e in torch.eye(d, dtype=torch.float64)]
    torch.testing.assert_close(R, torch.stack(columns, dim=1))
    torch.testing.assert_close(R.T @ R, torch.eye(d, dtype=torch.float64))


def test_rotation_matrices_compose_to_the_offset():
    d = 8
    for p, q in [(0, 5), (7, 3), (100, 140)]:
        R_p, R_q = (schemes.rotation_matrix(position=n, d=d) for n in (p, q))
        # R_p^T R_q = R_(q-p); a negative offset is the transpose of the positive one.
        R_offset = schemes.rotation_matrix(position=abs(q - p), d=d)
        torch.testing.assert_close(R_p.T @ R_q, R_offset if q >= p else R_offset.T)


@settings(max_examples=40, deadline=None)
@given(offset=st.integers(0, 10**6), seed=st.integers(0, 2**16))
def test_rope_keeps_every_pairs_length(offset, seed):
    x = torch.randn(6, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    rotated = schemes.apply_rotary(x, offset=offset)
    assert torch.allclose(rotated.view(6, 5, 2).norm(dim=-1), x.view(6, 5, 2).norm(dim=-1), rtol=1e-12)


def test_rope_keeps_dtype_and_lets_gradients_through():
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        x = torch.randn(4, 8).to(dtype)
        assert schemes.apply_rotary(x).dtype == dtype
    x = torch.randn(4, 8, requires_grad=True)
    schemes.apply_rotary(x).sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


def test_rope_position_zero_is_left_as_it_is():
    x = torch.randn(1, 8)
    assert torch.equal(schemes.apply_rotary(x), x)


@pytest.mark.parametrize("call,message", [
    (lambda: schemes.apply_rotary(torch.zeros(3, 5)), "must be even"),
    (lambda: schemes.apply_rotary(torch.zeros(5)), "at least 2 dimensions"),
    (lambda: schemes.apply_rotary(torch.zeros(3, 4), layout="llama"), "layout must be one of"),
    (lambda: schemes.apply_rotary(torch.zeros(3, 4, dtype=torch.int64)), "floating-point"),
    (lambda: schemes.rotary_angles(max_sequence_length=3, d=7), "d=7"),
    (lambda: schemes.half_split_permutation(d=3), "d=3"),
])
def test_rope_refuses_what_it_cannot_rotate(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


# ALiBi -----------------------------------------------------------------------------------------


def paper_slopes(n: int) -> list[float]:
    """The slopes as the paper's code computes them (ofirpress/attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + paper_slopes(2 * closest)[0::2][: n - closest]


def test_alibi_slopes_are_the_papers_for_8_and_16_heads():
    # Press et al. 2022, section 3: 8 heads 1/2^1 ... 1/2^8; 16 heads 1/2^0.5, 1/2^1, ..., 1/2^8.
    assert schemes.alibi_slopes(num_heads=8, dtype=torch.float64).tolist() == [2.0**-k for k in range(1, 9)]
    assert torch.allclose(schemes.alibi_slopes(num_heads=16, dtype=torch.float64),
                          torch.tensor([2.0 ** (-k / 2) for k in range(1, 17)], dtype=torch.float64), rtol=1e-15)


@pytest.mark.parametrize("num_heads", range(1, 41))
def test_alibi_slopes_follow_the_papers_code_for_any_head_count(num_heads):
    ours = schemes.alibi_slopes(num_heads=num_heads, dtype=torch.float64)
    assert ours.shape == (num_heads,)
    assert torch.allclose(ours, torch.tensor(paper_slopes(num_heads), dtype=torch.float64), rtol=1e-14)


@pytest.mark.parametrize("causal", [True, False])
def test_alibi_bias_matches_a_loop(causal):
    heads, length = 4, 7
    slopes = paper_slopes(heads)
    bias = schemes.alibi_bias(num_heads=heads, max_sequence_length=length, causal=causal, dtype=torch.float64)
    assert bias.shape == (heads, length, length)
    for h in range(heads):
        for i in range(length):
            for j in range(length):
                expected = -math.inf if causal and j > i else -slopes[h] * abs(i - j)
                assert bias[h, i, j].item() == pytest.approx(expected, rel=1e-15)
    assert not torch.signbit(bias[:, range(length), range(length)]).any(), "0 on the diagonal, not -0"


def test_alibi_causal_bias_gives_future_keys_zero_weight():
    weights = torch.softmax(torch.zeros(2, 5, 5) + schemes.alibi_bias(num_heads=2, max_sequence_length=5), dim=-1)
    assert torch.equal(weights.triu(1), torch.zeros(2, 5, 5))
    assert torch.allclose(weights.sum(-1), torch.ones(2, 5))


# Learned ---------------------------------------------------------------------------------------


def test_learned_table_adds_its_rows_and_trains():
    torch.manual_seed(0)
    learned = schemes.LearnedPositionalEmbedding(max_sequence_length=10, d_model=6)
    assert learned.weight.shape == (10, 6) and learned.weight.requires_grad
    assert 0.01 < float(learned.weight.detach().std()) < 0.03  # GPT-2's initialisation, std 0.02
    x = torch.randn(3, 4, 6)
    assert torch.equal(learned(x, offset=2), x + learned.weight[2:6])
    learned(x).sum().backward()
    assert learned.weight.grad[:4].abs().sum() > 0 and learned.weight.grad[4:].abs().sum() == 0
    assert [name for name, _ in learned.named_parameters()] == ["weight"]


def test_learned_table_has_no_row_beyond_its_length():
    learned = schemes.LearnedPositionalEmbedding(max_sequence_length=8, d_model=4)
    with pytest.raises(ValueError, match="no row: a learned table has rows only for positions 0 to 7"):
        learned(torch.zeros(9, 4))
    with pytest.raises(ValueError, match="offset=5"):
        learned(torch.zeros(4, 4), offset=5)


# One word at every position ---------------------------------------------------------------------


def test_same_word_scores_are_the_written_out_products():
    d_model = 8
    weights = attention.projection_weights(d_model=d_model, seed=3)
    word = torch.randn(d_model, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    PE = encoding.sinusoidal_encoding(max_sequence_length=40, d_model=d_model, dtype=torch.float64)
    W_Q, W_K = weights.W_Q.double(), weights.W_K.double()
    p, offsets = 20, [-20, -3, 0, 7, 19]
    added = [float((word + PE[p]) @ W_Q @ W_K.T @ (word + PE[p + k])) for k in offsets]
    rotated = [float(rope_loop((word @ W_Q)[None], offset=p)[0] @ rope_loop((word @ W_K)[None], offset=p + k)[0])
               for k in offsets]
    for scheme, expected in [("sinusoidal", added), ("rotary", rotated)]:
        got = schemes.same_word_scores(word, weights, scheme=scheme, query_position=p, offsets=offsets)
        assert got.dtype == torch.float64 and got.shape == (len(offsets),)
        torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64))


def test_same_word_scores_move_with_position_only_when_the_sinusoid_is_added():
    weights = attention.projection_weights(d_model=32, seed=0)
    word = torch.randn(32, generator=torch.Generator().manual_seed(1))
    scores = {scheme: torch.stack([schemes.same_word_scores(word, weights, scheme=scheme, query_position=p, offsets=range(-10, 11))
                                   for p in (10, 50, 300)])
              for scheme in schemes.SCORE_SCHEMES}
    torch.testing.assert_close(scores["rotary"][1:], scores["rotary"][:1].expand(2, -1))
    assert (scores["sinusoidal"][1:] - scores["sinusoidal"][:1]).abs().max() > 1.0


@pytest.mark.parametrize("change,message", [
    ({"scheme": "alibi"}, "scheme must be one of"),
    ({"offsets": [3, -11]}, r"offsets\[1\] must be an int from -10"),
    ({"offsets": []}, "at least one offset"),
    ({"offsets": "0"}, "offsets must be a list"),
    ({"query_position": -1}, "query_position"),
    ({"word": torch.zeros(6)}, "d_model=6"),
    ({"weights": (torch.zeros(8, 8),) * 3}, "ProjectionWeights"),
])
def test_same_word_scores_refuse_what_they_cannot_score(change, message):
    arguments = {"word": torch.zeros(8), "weights": attention.projection_weights(d_model=8), "scheme": "rotary",
                 "query_position": 10, "offsets": [0, 1]} | change
    with pytest.raises((TypeError, ValueError), match=message):
        schemes.same_word_scores(arguments.pop("word"), arguments.pop("weights"), **arguments)
