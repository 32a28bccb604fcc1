"""posenc.schemes against independent implementations and the papers' own numbers."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rotary_embedding_torch import RotaryEmbedding

from posenc import attention, encoding, schemes
from posenc.builder import sinusoidal_encoding

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


@pytest.mark.parametrize("seq,d,base,offset",
                         [(10, 6, 10000.0, 0), (7, 16, 10000.0, 3), (5, 2, 100.0, 1000), (12, 64, 500000.0, 0)])
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


def rotate_half_neox(x: torch.Tensor, *, base: float = 10000.0) -> torch.Tensor:
    """GPT-NeoX's `rotate_half` / `apply_rotary_pos_emb` (megatron/model/positional_embeddings.py), which Hugging
    Face's LLaMA port copies: pair i is (i, i + d/2); cos and sin repeated over both halves."""
    seq, d = x.shape[-2:]
    frequencies = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.arange(seq, dtype=torch.float64)[:, None] * frequencies
    angles = torch.cat([angles, angles], dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * angles.cos() + torch.cat([-x2, x1], dim=-1) * angles.sin()


def rope_meta_llama(x: torch.Tensor, *, base: float = 10000.0) -> torch.Tensor:
    """Meta's LLaMA code (meta-llama/llama, llama/model.py, `precompute_freqs_cis` and `apply_rotary_emb`), in
    float64: neighbouring columns (2i, 2i+1) become one complex number, multiplied by e^(i * position * frequency)."""
    seq, d = x.shape[-2:]
    frequencies = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64)[: d // 2] / d))
    angles = torch.outer(torch.arange(seq, dtype=torch.float64), frequencies)
    turns = torch.polar(torch.ones_like(angles), angles)  # complex128
    pairs = torch.view_as_complex(x.to(torch.float64).reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * turns).flatten(-2)


def hf_permute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """`permute` of Hugging Face's convert_llama_weights_to_hf.py (transformers 4.42.4), written from its definition:
    the rows (outputs) of a (dim1, dim2) Linear weight, head by head, viewed as (head_dim / 2, 2) and transposed to
    (2, head_dim / 2)."""
    dim1, dim2 = w.shape
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def test_hf_permute_is_what_the_pinned_transformers_does_in_permute_for_rope():
    # The pinned transformers (5.23.0) has no convert_llama_weights_to_hf.py; its PermuteForRope (core_model_loading.py,
    # "to convert complex RoPE weights to the split sin/cos format") reorders the rows the same way.
    from types import SimpleNamespace

    from transformers.core_model_loading import PermuteForRope

    w = torch.randn(48, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    theirs = PermuteForRope()._permute_for_rope(w, SimpleNamespace(num_attention_heads=4))
    assert torch.equal(theirs, hf_permute(w, 4))


def test_meta_llama_code_pairs_neighbours_like_roformer():
    x = torch.randn(2, 11, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    assert torch.allclose(schemes.apply_rotary(x), rope_meta_llama(x), rtol=0, atol=1e-12)
    assert not torch.allclose(schemes.apply_rotary(x, layout="half_split"), rope_meta_llama(x), atol=1e-3)


def test_half_split_layout_is_the_neox_code_and_a_column_permutation_of_interleaved():
    x = torch.randn(3, 9, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    permutation = schemes.half_split_permutation(d=12)
    assert permutation.tolist() == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]
    half = schemes.apply_rotary(x, layout="half_split")
    assert torch.allclose(half, rotate_half_neox(x), rtol=0, atol=1e-12)
    assert torch.allclose(schemes.apply_rotary(x[..., permutation], layout="half_split"),
                          schemes.apply_rotary(x)[..., permutation], rtol=0, atol=1e-12)
    table = sinusoidal_encoding(max_sequence_length=4, d_model=12)
    assert torch.equal(table[:, permutation], encoding.to_concatenated(table))


@pytest.mark.parametrize("n_heads,head_dim,base", [(1, 2, 10000.0), (2, 8, 10000.0), (4, 16, 500000.0)])
def test_llama_weight_conversion_gives_half_split_rope_the_scores_of_interleaved_rope(n_heads, head_dim, base):
    # Meta's weights with Meta's (interleaved) RoPE, against the converted weights with Hugging Face's (half-split)
    # RoPE: every head's scores agree, and the rotated queries are Meta's with each head's columns reordered.
    d_model, seq = n_heads * head_dim, 13
    generator = torch.Generator().manual_seed(n_heads * head_dim)
    x = torch.randn(seq, d_model, dtype=torch.float64, generator=generator)
    wq, wk = torch.randn(2, d_model, d_model, dtype=torch.float64, generator=generator)  # Linear weights: out x in

    def heads(x, w):  # (n_heads, seq, head_dim): each head's queries or keys, as both codes split them
        return (x @ w.T).view(seq, n_heads, head_dim).transpose(0, 1)

    q_meta, k_meta = rope_meta_llama(heads(x, wq), base=base), rope_meta_llama(heads(x, wk), base=base)
    q_hf = rotate_half_neox(heads(x, hf_permute(wq, n_heads)), base=base)
    k_hf = rotate_half_neox(heads(x, hf_permute(wk, n_heads)), base=base)
    torch.testing.assert_close(q_hf @ k_hf.transpose(-1, -2), q_meta @ k_meta.transpose(-1, -2), rtol=1e-10, atol=1e-9)
    # The reordering HF's permute applies inside each head is posenc's half_split_permutation ...
    rows = hf_permute(torch.arange(d_model, dtype=torch.float64)[:, None], n_heads)[:, 0].long()
    order = schemes.half_split_permutation(d=head_dim)
    assert rows.tolist() == [h * head_dim + int(i) for h in range(n_heads) for i in order]
    torch.testing.assert_close(q_hf, q_meta[..., order], rtol=0, atol=1e-10)
    # ... and posenc's two layouts reproduce both codes.
    torch.testing.assert_close(schemes.apply_rotary(heads(x, wq), base=base), q_meta, rtol=0, atol=1e-10)
    torch.testing.assert_close(schemes.apply_rotary(heads(x, hf_permute(wq, n_heads)), base=base, layout="half_split"),
                               q_hf, rtol=0, atol=1e-10)
    if head_dim > 2:  # with one pair per head there is nothing to reorder
        wrong = rotate_half_neox(heads(x, wq), base=base) @ rotate_half_neox(heads(x, wk), base=base).transpose(-1, -2)
        unconverted = q_meta @ k_meta.transpose(-1, -2)
        assert not torch.allclose(wrong, unconverted, atol=1e-3), "unconverted weights must differ"


@pytest.mark.parametrize("d_model,base", [(6, 10000.0), (16, 10000.0), (64, 100.0)])
@pytest.mark.parametrize("k", [1, 3, 17])
def test_the_sinusoids_shift_is_the_rope_rotation_applied_to_rows(d_model, base, k):
    # Notebook 10's shift and notebook 13's R_k are one matrix: PE[p] @ R_k = PE[p + k] (a row, from the right).
    # From the left it moves the other way: R_k @ PE[p] = PE[p - k], since R_k^T = R_(-k).
    PE = sinusoidal_encoding(max_sequence_length=60, d_model=d_model, base=base, dtype=torch.float64)
    R = schemes.rotation_matrix(position=k, d=d_model, base=base)
    torch.testing.assert_close(PE[:-k] @ R, PE[k:], rtol=0, atol=1e-12)
    torch.testing.assert_close((R @ PE[k:].T).T, PE[:-k], rtol=0, atol=1e-12)
    # Each block: [[cos wk, -sin wk], [sin wk, cos wk]], by the angle-addition identities on the pair (sin, cos).
    w = base ** (-2 * torch.arange(d_model // 2, dtype=torch.float64) / d_model)
    c, s = torch.cos(w * k), torch.sin(w * k)
    blocks = torch.block_diag(*[torch.stack([torch.stack([c[i], -s[i]]), torch.stack([s[i], c[i]])])
                                for i in range(d_model // 2)])
    torch.testing.assert_close(R, blocks, rtol=0, atol=1e-15)


def test_rope_angles_are_the_sinusoidal_encodings_angles():
    angles = schemes.rotary_angles(max_sequence_length=10, d=6)
    table = sinusoidal_encoding(max_sequence_length=10, d_model=6, dtype=torch.float64)
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
    (lambda: schemes.apply_rotary(torch.zeros(3, 5)), "d even"),
    (lambda: schemes.apply_rotary(torch.zeros(5)), "(..., seq, d)"),
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


def bloom_slopes(n: int) -> list[float]:
    """BLOOM's slopes as Hugging Face's `_get_alibi_slopes` (models/bloom/modeling_bloom.py) computes them."""
    closest = 2 ** math.floor(math.log2(n))
    base = 2 ** (-(2 ** -(math.log2(closest) - 3)))
    slopes = [base**power for power in range(1, closest + 1)]
    extra_base = 2 ** (-(2 ** -(math.log2(2 * closest) - 3)))
    return slopes + [extra_base**power for power in range(1, 1 + 2 * min(closest, n - closest), 2)]


@pytest.mark.parametrize("num_heads", [1, 3, 6, 12, 16, 24, 100, 112])
def test_alibi_slopes_follow_blooms_code(num_heads):
    # BLOOM (176B) has 112 heads a layer (bigscience-workshop/bigscience, train/tr11-176B-ml/README.md): 64 + 48.
    ours = schemes.alibi_slopes(num_heads=num_heads, dtype=torch.float64)
    assert torch.allclose(ours, torch.tensor(bloom_slopes(num_heads), dtype=torch.float64), rtol=1e-14)


@pytest.mark.parametrize("num_heads", [1, 3, 6, 12, 16, 24, 100, 112])
def test_alibi_slopes_equal_blooms_in_the_pinned_transformers(num_heads):
    # transformers 5.23.0 computes BLOOM's slopes in _get_alibi_slopes, in float32; build_alibi_tensor calls it.
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    theirs = _get_alibi_slopes(num_heads, torch.device("cpu"))
    assert torch.allclose(theirs.double(), schemes.alibi_slopes(num_heads=num_heads, dtype=torch.float64), rtol=1e-6)


def test_alibi_slopes_for_six_heads_are_not_in_decreasing_order():
    assert schemes.alibi_slopes(num_heads=6, dtype=torch.float64).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8,
                                                                                 2.0**-1, 2.0**-3]


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


@pytest.mark.parametrize("heads", [4, 6])
def test_alibi_causal_weights_equal_those_of_the_papers_code_which_adds_slope_times_key(heads):
    # ofirpress/attention_with_linear_biases, TransformerDecoder.__init__ and buffered_future_mask in
    # fairseq/models/transformer.py: slopes * arange(maxpos) (+m j, the same row for every query) added to the
    # -inf future mask. BLOOM's build_alibi_tensor does the same. It differs from -m (i - j) by m i per query row.
    length = 9
    scores = torch.randn(heads, length, length, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    slopes = torch.tensor(bloom_slopes(heads), dtype=torch.float64)
    future = torch.triu(torch.full((length, length), -math.inf, dtype=torch.float64), 1)
    papers_code = future + slopes[:, None, None] * torch.arange(length, dtype=torch.float64)[None, None, :]
    ours = schemes.alibi_bias(num_heads=heads, max_sequence_length=length, dtype=torch.float64)
    assert not torch.allclose(ours[:, -1], papers_code[:, -1]), "the biases themselves differ"
    assert torch.allclose(torch.softmax(scores + ours, dim=-1), torch.softmax(scores + papers_code, dim=-1), atol=1e-12)


def test_alibi_causal_bias_gives_future_keys_zero_weight():
    weights = torch.softmax(torch.zeros(2, 5, 5) + schemes.alibi_bias(num_heads=2, max_sequence_length=5), dim=-1)
    assert torch.equal(weights.triu(1), torch.zeros(2, 5, 5))
    assert torch.allclose(weights.sum(-1), torch.ones(2, 5))


# Learned ---------------------------------------------------------------------------------------


def test_learned_table_adds_its_rows_and_trains():
    torch.manual_seed(0)
    learned = schemes.LearnedPositionalEmbedding(max_sequence_length=10, d_model=6)
    assert learned.weight.shape == (10, 6) and learned.weight.requires_grad
    assert 0.01 < float(learned.weight.detach().std()) < 0.03  # std 0.02: nanoGPT's and Hugging Face's GPT-2 choice
    x = torch.randn(3, 4, 6)
    assert torch.equal(learned(x, offset=2), x + learned.weight[2:6])
    learned(x).sum().backward()
    assert learned.weight.grad[:4].abs().sum() > 0 and learned.weight.grad[4:].abs().sum() == 0
    assert [name for name, _ in learned.named_parameters()] == ["weight"]


def test_learned_table_has_no_row_beyond_its_length():
    learned = schemes.LearnedPositionalEmbedding(max_sequence_length=8, d_model=4)
    with pytest.raises(ValueError, match=r"x reaches position 8, but this learned table has rows only for positions 0 "
                                         r"to 7 \(max_sequence_length=8\)\. Train a larger table"):
        learned(torch.zeros(9, 4))
    # The start of x is named as a position, not as an "offset" (a key's offset from its query in notebook 13).
    with pytest.raises(ValueError, match="x, from position 5, reaches position 8, but") as raised:
        learned(torch.zeros(4, 4), offset=5)
    assert "offset" not in str(raised.value)


# One word at every position ---------------------------------------------------------------------


def test_same_word_scores_are_the_written_out_products():
    d_model = 8
    weights = attention.projection_weights(d_model=d_model, seed=3)
    word = torch.randn(d_model, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    PE = sinusoidal_encoding(max_sequence_length=40, d_model=d_model, dtype=torch.float64)
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
    scores = {scheme: torch.stack([schemes.same_word_scores(word, weights, scheme=scheme, query_position=p,
                                                            offsets=range(-10, 11))
                                   for p in (10, 50, 300)])
              for scheme in schemes.SCORE_SCHEMES}
    torch.testing.assert_close(scores["rotary"][1:], scores["rotary"][:1].expand(2, -1))
    assert (scores["sinusoidal"][1:] - scores["sinusoidal"][:1]).abs().max() > 1.0


@pytest.mark.parametrize("change,message", [
    ({"scheme": "alibi"}, "scheme must be one of"),
    ({"offsets": [3, -11]}, r"offsets\[1\] must be an int from -10"),
    ({"offsets": []}, "non-empty"),
    ({"offsets": "0"}, "offsets must be a non-empty list"),
    ({"query_position": -1}, "query_position"),
    ({"word": torch.zeros(6)}, "d_model=6"),
    ({"weights": (torch.zeros(8, 8),) * 3}, "ProjectionWeights"),
])
def test_same_word_scores_refuse_what_they_cannot_score(change, message):
    arguments = {"word": torch.zeros(8), "weights": attention.projection_weights(d_model=8), "scheme": "rotary",
                 "query_position": 10, "offsets": [0, 1]} | change
    with pytest.raises((TypeError, ValueError), match=message):
        schemes.same_word_scores(arguments.pop("word"), arguments.pop("weights"), **arguments)


# The checkers and the figure of notebooks 10 and 13 ----------------------------------------------


@pytest.mark.parametrize("k", [3, -3, 7, -1])
def test_rotation_matrix_moves_a_row_of_pe_and_its_transpose_moves_it_back(k):
    PE = sinusoidal_encoding(max_sequence_length=30, d_model=6, dtype=torch.float64)
    R = schemes.rotation_matrix(position=abs(k), d=6)
    M = R if k > 0 else R.T  # a rotation's inverse is its transpose (10's Exercise 1)
    rows = PE[max(0, -k) : 30 - max(0, k)]
    torch.testing.assert_close(rows @ M, PE[max(0, k) : 30 + min(0, k)])


@pytest.mark.parametrize("answer,words", [
    (sorted(2.0**-e for e in (2, 4, 6, 8, 1, 3))[::-1], "sorted"),
    ([2.0 ** (-8 * k / 6) for k in range(1, 7)], "code uses it only for a power of two"),
    ([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-2, 2.0**-4], "2nd, 4th"),
    ([2.0**-k for k in range(1, 7)], "first 6 slopes of 8 heads"),
    ([2.0**-e for e in (3, 1, 8, 6, 4, 2)], "Reversed"),
])
def test_the_alibi_checker_names_the_mistakes_for_six_heads(answer, words):
    from posenc import exercises

    assert exercises.check_alibi_slopes(lambda n: [2.0**-e for e in (2, 4, 6, 8, 1, 3)], head_counts=(6,)).correct
    feedback = exercises.check_alibi_slopes(lambda n: answer, head_counts=(6,))
    assert feedback.status == "mistake" and words in feedback.message, feedback


def test_check_choice_explains_the_choice_made_and_keeps_the_answer_out_of_progress():
    from posenc import exercises

    options = {"a": "Why a is wrong.", "b": "Why b is right."}
    check = lambda answer: exercises.check_choice(answer, options=options, correct="b", question="which one?")  # noqa: E731
    assert check(" B ").correct and "Why b is right." in check("b").message
    wrong = check("a")
    assert wrong.status == "mistake" and "Why a is wrong." in wrong.message and "Why b is right." in wrong.message
    assert check(None).status == "not attempted"
    assert check("c").status == "wrong" and check(2).status == "wrong"
    listed = str(exercises.progress())
    assert "which one?" in listed and "correct" not in listed and "'b'" not in listed
    with pytest.raises(ValueError, match="correct must be one of"):
        exercises.check_choice("a", options=options, correct="z", question="q")
    with pytest.raises(TypeError, match="options must be a dict"):
        exercises.check_choice("a", options={"a": "only one"}, correct="a", question="q")


def test_score_by_offset_draws_one_panel_per_scheme_in_its_colour():
    from matplotlib.colors import to_hex

    from posenc import plots

    offsets = list(range(-5, 6))
    scores = {"sinusoidal": {"query at 10": [float(k) for k in offsets], "query at 20": [0.0] * 11},
              "rotary": {"query at 10": [1.0] * 11}}
    fig = plots.score_by_offset(offsets, scores, title="t", titles={"rotary": "RoPE"})
    panels = [ax for ax in fig.axes if ax.get_legend() is not None]
    assert [ax.get_title() for ax in panels] == ["sinusoidal", "RoPE"]
    for ax, scheme in zip(panels, scores, strict=True):
        assert {to_hex(line.get_color()) for line in ax.get_lines() if line.get_label() in scores[scheme]} == \
            {plots.SCHEME_COLOURS[scheme].lower()}


def test_score_by_offset_marks_scores_and_the_peak_on_the_first_line():
    from posenc import plots

    offsets = list(range(-5, 6))
    scores = {"rotary": {"query at 10": [float(-(k - 3) ** 2) for k in offsets], "query at 20": [0.0] * 11},
              "sinusoidal": {"query at 10": [float(k) for k in offsets]}}
    fig = plots.score_by_offset(offsets, scores, title="t", marks={"rotary": [0], "sinusoidal": [2]}, peak="rotary")
    top, bottom = fig.axes[:2]
    assert {t.get_text() for t in top.texts} == {"-9.00 at offset 0", "peak at offset +3"}
    assert {t.get_text() for t in bottom.texts} == {"2.00 at offset +2"}
    assert [line.get_xydata().tolist() for line in bottom.get_lines() if line.get_marker() == "o"
            and line.get_color() == "black"] == [[[2.0, 2.0]]]
    # Unnamed, the dots stay out of the legend; named, each panel's dots get one entry.
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == ["query at 10"]
    named = plots.score_by_offset(offsets, scores, title="t", marks={"rotary": [0, 1], "sinusoidal": [2]},
                                  mark_labels={"rotary": "the word-word term"})
    top, bottom = named.axes[:2]
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["query at 10", "query at 20", "the word-word term"]
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == ["query at 10"]
