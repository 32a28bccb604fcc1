"""Heads and the causal mask (posenc.attention), checked against PyTorch's own attention.

Two independent implementations: `torch.nn.functional.scaled_dot_product_attention`
(its boolean `attn_mask` is True where a key takes part, the convention of this
package) and `torch.nn.MultiheadAttention` (whose boolean masks are True where a key
is hidden, the opposite), given the same weights. Everything is compared to 1e-6 in float32.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import attention, builder, plots
from posenc import example as posenc_example

ATOL = 1e-6


def example(*, batch=3, length=7, d_model=12, seed=0):
    """x, weights and a right-padded key mask (sequence lengths 7, 5 and 1 of 7)."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, length, d_model, generator=generator)
    key_mask = torch.arange(length) < torch.tensor([length, 5, 1][:batch])[:, None]
    return x, attention.multi_head_weights(d_model=d_model, seed=seed), key_mask


def torch_module(weights, num_heads):
    """nn.MultiheadAttention holding `weights`: it computes x @ W^T, so it stores the transposes,
    W_Q, W_K and W_V stacked in that order along dimension 0 of `in_proj_weight`."""
    d_model = weights.W_Q.shape[0]
    module = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.cat([weights.W_Q.T, weights.W_K.T, weights.W_V.T]))
        module.out_proj.weight.copy_(weights.W_O.T)
    return module.eval()


def torch_sdpa(x, weights, num_heads, **kwargs):
    """The heads through F.scaled_dot_product_attention, then merged and multiplied by W_O."""
    Q, K, V = (attention.split_heads(x @ W, num_heads=num_heads) for W in weights[:3])
    return attention.merge_heads(F.scaled_dot_product_attention(Q, K, V, **kwargs)) @ weights.W_O


# Splitting and merging ----------------------------------------------------------------------------


def test_split_heads_shapes_and_columns():
    x = torch.arange(2 * 5 * 6, dtype=torch.float32).reshape(2, 5, 6)
    heads = attention.split_heads(x, num_heads=2)
    assert heads.shape == (2, 2, 5, 3)
    # Head h is an ordinary (seq, head_dim) matrix: columns h*3 .. h*3+2 of x, every token in its row.
    assert torch.equal(heads[:, 0], x[..., 0:3]) and torch.equal(heads[:, 1], x[..., 3:6])
    assert attention.split_heads(x[0], num_heads=3).shape == (3, 5, 2)


def test_split_heads_is_view_then_transpose_as_the_references_write_it():
    # The Annotated Transformer and LLMs-from-scratch: x.view(batch, seq, num_heads, head_dim).transpose(1, 2).
    x = torch.randn(4, 9, 8, generator=torch.Generator().manual_seed(0))
    assert torch.equal(attention.split_heads(x, num_heads=4), x.view(4, 9, 4, 2).transpose(1, 2))
    # The tempting shortcut view(batch, num_heads, seq, head_dim) has the same shape and other numbers.
    assert not torch.equal(attention.split_heads(x, num_heads=4), x.view(4, 4, 9, 2))


def test_split_heads_takes_non_contiguous_input():
    x = torch.randn(6, 5, 4, generator=torch.Generator().manual_seed(1)).transpose(0, 1)  # (5, 6, 4), not contiguous
    assert torch.equal(attention.split_heads(x, num_heads=2), attention.split_heads(x.contiguous(), num_heads=2))


@settings(max_examples=60, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 6), num_heads=st.integers(1, 4), head_dim=st.integers(1, 4),
       batched=st.booleans())
def test_merge_heads_undoes_split_heads(batch, length, num_heads, head_dim, batched):
    x = torch.randn(batch, length, num_heads * head_dim, generator=torch.Generator().manual_seed(length))
    x = x if batched else x[0]
    heads = attention.split_heads(x, num_heads=num_heads)
    assert heads.shape == x.shape[:-2] + (num_heads, length, head_dim)
    assert torch.equal(attention.merge_heads(heads), x)


# The causal mask --------------------------------------------------------------------------------------


def test_causal_mask_is_the_lower_triangle_and_the_complement_of_triu():
    mask = attention.causal_mask(sequence_length=5)
    assert mask.dtype == torch.bool and mask.shape == (5, 5)
    hidden = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    assert torch.equal(mask, ~hidden)
    for r in range(5):
        for c in range(5):
            assert bool(mask[r, c]) == (c <= r)  # a query sees itself and the keys before it


def test_causal_mask_is_what_sdpa_builds_for_is_causal():
    generator = torch.Generator().manual_seed(2)
    Q, K, V = torch.randn(3, 2, 6, 4, generator=generator)
    torch.testing.assert_close(
        F.scaled_dot_product_attention(Q, K, V, attn_mask=attention.causal_mask(sequence_length=6)),
        F.scaled_dot_product_attention(Q, K, V, is_causal=True), atol=ATOL, rtol=0)


def test_uniform_scores_under_the_causal_mask_give_one_over_t_plus_one():
    # "A causal model can count": equal scores spread each row over the t + 1 keys it may see.
    weights = attention.attention_weights(torch.zeros(6, 6), causal=True)
    for t in range(6):
        torch.testing.assert_close(weights[t, : t + 1], torch.full((t + 1,), 1 / (t + 1)))
        assert float(weights[t, t + 1:].abs().sum()) == 0.0
    # Without the mask every row is the same: nothing tells the positions apart.
    assert torch.equal(attention.attention_weights(torch.zeros(6, 6)), torch.full((6, 6), 1 / 6))


def test_causal_weights_hide_later_keys_and_combine_with_padding():
    scores = torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(3))
    key_mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    weights = attention.attention_weights(scores, key_mask=key_mask, causal=True)
    keep = key_mask[:, None, :] & attention.causal_mask(sequence_length=5)
    assert float(weights.masked_select(~keep).abs().max()) == 0.0
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 5))
    expected = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    torch.testing.assert_close(weights, expected, atol=0, rtol=0)


# Multi-head attention against PyTorch ----------------------------------------------------------------


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 6, 12])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_attention_equals_nn_multihead_attention(num_heads, causal, masked):
    x, weights, key_mask = example()
    ours, ours_weights = attention.multi_head_attention(x, weights, num_heads=num_heads, causal=causal,
                                                        key_mask=key_mask if masked else None)
    module = torch_module(weights, num_heads)
    # nn.MultiheadAttention's boolean masks say where NOT to look: the complements of this package's.
    with torch.no_grad():
        theirs, theirs_weights = module(
            x, x, x, key_padding_mask=~key_mask if masked else None,
            attn_mask=~attention.causal_mask(sequence_length=x.shape[1]) if causal else None,
            need_weights=True, average_attn_weights=False)
    assert ours.shape == x.shape and ours_weights.shape == (3, num_heads, 7, 7)
    torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=0)
    torch.testing.assert_close(ours_weights, theirs_weights, atol=ATOL, rtol=0)


@pytest.mark.parametrize("num_heads", [1, 2, 4])
def test_multi_head_attention_equals_sdpa_with_is_causal(num_heads):
    x, weights, _ = example(seed=4)
    ours, _ = attention.multi_head_attention(x, weights, num_heads=num_heads, causal=True)
    torch.testing.assert_close(ours, torch_sdpa(x, weights, num_heads, is_causal=True), atol=ATOL, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_equals_sdpa_with_a_boolean_mask(causal):
    # sdpa's boolean attn_mask is True where a key takes part: this package's key_mask, broadcast over
    # heads and queries as (batch, 1, 1, seq), and with the causal mask combined by "and".
    x, weights, key_mask = example(seed=5)
    attn_mask = key_mask[:, None, None, :]
    if causal:
        attn_mask = attn_mask & attention.causal_mask(sequence_length=x.shape[1])
    ours, _ = attention.multi_head_attention(x, weights, num_heads=3, key_mask=key_mask, causal=causal)
    torch.testing.assert_close(ours, torch_sdpa(x, weights, 3, attn_mask=attn_mask), atol=ATOL, rtol=0)
    # Passing the mask with the opposite convention is a different computation, not an error: a real bug to avoid.
    flipped = torch_sdpa(x[:1], weights, 3, attn_mask=~key_mask[:1, None, None, :] | torch.eye(7, dtype=torch.bool))
    assert not torch.allclose(ours[:1], flipped, atol=1e-3)


def test_sdpa_on_this_build_takes_a_mask_and_is_causal_together():
    # The documentation says attn_mask with is_causal=True raises; torch 2.13 on a CPU, given 4-D inputs
    # (batch, heads, L, head_dim), takes another code path that combines them. 07's side note teaches neither: it
    # passes the combined mask as attn_mask, without is_causal. If this fails, PyTorch now does what its documentation says.
    x, weights, key_mask = example(seed=6)
    ours, _ = attention.multi_head_attention(x, weights, num_heads=3, key_mask=key_mask, causal=True)
    real = key_mask[:, :, None].expand(-1, -1, x.shape[-1])  # the <PAD> rows differ: a row with no key is NaN or not
    combined = torch_sdpa(x, weights, 3, attn_mask=key_mask[:, None, None, :], is_causal=True)
    torch.testing.assert_close(ours[real], combined[real], atol=ATOL, rtol=0)


def test_sdpa_on_this_build_refuses_a_mask_and_is_causal_for_3d_inputs_and_the_math_kernel():
    # The other half (a round-34 reader found it): 3-D inputs (batch, L, d), as 06's Q, K and V, raise
    # the documented error, and so do 4-D inputs once the plain math kernel is forced.
    from torch.nn.attention import SDPBackend, sdpa_kernel

    x, weights, key_mask = example(seed=6)
    Q, K, V = (x @ W for W in weights[:3])  # (batch, L, d_model): no heads axis
    refused = "attn_mask should not be set when is_causal=True"
    with pytest.raises(RuntimeError, match=refused):
        F.scaled_dot_product_attention(Q, K, V, attn_mask=key_mask[:, None, :], is_causal=True)
    with sdpa_kernel(SDPBackend.MATH), pytest.raises(RuntimeError, match=refused):
        torch_sdpa(x, weights, 3, attn_mask=key_mask[:, None, None, :], is_causal=True)


def test_each_head_is_single_head_attention_on_its_block_of_columns():
    # Concat(head_1, ..., head_h) W_O with head_i = Attention(x W_Q_i, x W_K_i, x W_V_i): written head by head.
    x, weights, key_mask = example(seed=6)
    num_heads, head_dim = 4, 3
    heads = []
    for h in range(num_heads):
        columns = slice(h * head_dim, (h + 1) * head_dim)
        block = attention.ProjectionWeights(weights.W_Q[:, columns], weights.W_K[:, columns], weights.W_V[:, columns])
        heads.append(attention.self_attention(x, block, key_mask=key_mask, causal=True)[0])
    expected = torch.cat(heads, dim=-1) @ weights.W_O
    ours, _ = attention.multi_head_attention(x, weights, num_heads=num_heads, key_mask=key_mask, causal=True)
    torch.testing.assert_close(ours, expected, atol=ATOL, rtol=0)


def test_one_sequence_without_a_batch_dimension():
    x, weights, key_mask = example(seed=7)
    ours, ours_weights = attention.multi_head_attention(x[1], weights, num_heads=2, key_mask=key_mask[1], causal=True)
    batched, batched_weights = attention.multi_head_attention(x, weights, num_heads=2, key_mask=key_mask, causal=True)
    assert ours.shape == (7, 12) and ours_weights.shape == (2, 7, 7)
    torch.testing.assert_close(ours, batched[1], atol=ATOL, rtol=0)
    torch.testing.assert_close(ours_weights, batched_weights[1], atol=ATOL, rtol=0)


def test_one_head_is_the_single_head_attention_followed_by_w_o():
    x, weights, key_mask = example(seed=8)
    single, single_weights = attention.self_attention(x, attention.ProjectionWeights(*weights[:3]), key_mask=key_mask)
    ours, ours_weights = attention.multi_head_attention(x, weights, num_heads=1, key_mask=key_mask)
    torch.testing.assert_close(ours, single @ weights.W_O, atol=ATOL, rtol=0)
    torch.testing.assert_close(ours_weights[:, 0], single_weights, atol=ATOL, rtol=0)


def test_a_causal_output_does_not_depend_on_later_tokens():
    x, weights, _ = example(seed=9)
    changed = x.clone()
    changed[:, 4:] = torch.randn(3, 3, 12, generator=torch.Generator().manual_seed(10))
    before, _ = attention.multi_head_attention(x, weights, num_heads=3, causal=True)
    after, _ = attention.multi_head_attention(changed, weights, num_heads=3, causal=True)
    assert torch.equal(before[:, :4], after[:, :4])
    assert not torch.allclose(before[:, 4:], after[:, 4:])
    # Without the mask every row reads the changed tokens.
    assert not torch.allclose(attention.multi_head_attention(x, weights, num_heads=3)[0][:, :4],
                              attention.multi_head_attention(changed, weights, num_heads=3)[0][:, :4])


def test_weights_sum_to_one_and_float64_is_kept():
    x, weights, key_mask = example(seed=11)
    out, attended = attention.multi_head_attention(x.double(), weights, num_heads=6, key_mask=key_mask, causal=True)
    assert out.dtype == attended.dtype == torch.float64
    torch.testing.assert_close(attended.sum(-1), torch.ones(3, 6, 7, dtype=torch.float64))


# (The running example's width and seed 0: 07 draws the W_Q, W_K and W_V of 05 this way, then W_O.)
@pytest.mark.parametrize(("d_model", "seed"), [(6, 3), (posenc_example.D_MODEL, 0)])
def test_multi_head_weights_extend_the_single_head_ones(d_model, seed):
    single = attention.projection_weights(d_model=d_model, seed=seed)
    multi = attention.multi_head_weights(d_model=d_model, seed=seed)
    for a, b in zip(single, multi[:3], strict=True):
        assert torch.equal(a, b)
    assert multi.W_O.shape == (d_model, d_model) and not torch.equal(multi.W_O, multi.W_V)
    assert torch.equal(attention.multi_head_weights(d_model=d_model, seed=seed).W_O, multi.W_O)  # seeded


# Bad input ----------------------------------------------------------------------------------------------

X, WEIGHTS, KEY_MASK = example()


@pytest.mark.parametrize("call,error,words", [
    (lambda: attention.split_heads(torch.zeros(2, 5, 6), num_heads=4), ValueError, ["num_heads=4", "d_model=6"]),
    (lambda: attention.split_heads(torch.zeros(2, 5, 0), num_heads=1), ValueError, ["d_model=0"]),
    (lambda: attention.split_heads(torch.zeros(5), num_heads=1), ValueError, ["x", "(5,)"]),
    (lambda: attention.split_heads(torch.zeros(2, 5, 6), num_heads=0), ValueError, ["num_heads", "0"]),
    (lambda: attention.split_heads(torch.zeros(2, 5, 6), num_heads=2.0), TypeError, ["num_heads", "float"]),
    (lambda: attention.merge_heads(torch.zeros(5, 6)), ValueError, ["x", "(5, 6)"]),
    (lambda: attention.merge_heads([[1.0]]), TypeError, ["x", "list"]),
    (lambda: attention.causal_mask(sequence_length=0), ValueError, ["sequence_length", "0"]),
    (lambda: attention.causal_mask(sequence_length=True), TypeError, ["sequence_length"]),
    (lambda: attention.causal_mask(sequence_length=10**6), ValueError, ["sequence_length", "memory"]),
    (lambda: attention.multi_head_weights(d_model=0), ValueError, ["d_model", "0"]),
    (lambda: attention.multi_head_weights(d_model=6, seed=-1), ValueError, ["seed", "-1"]),
    (lambda: attention.multi_head_attention(X, WEIGHTS, num_heads=5), ValueError, ["num_heads=5", "12"]),
    (lambda: attention.multi_head_attention(X, attention.projection_weights(d_model=12), num_heads=2), TypeError,
     ["weights", "MultiHeadWeights", "ProjectionWeights"]),
    (lambda: attention.multi_head_attention(X[0], WEIGHTS, num_heads=2, key_mask=KEY_MASK), ValueError,
     ["key_mask", "1-D", "(3, 7)"]),
    (lambda: attention.multi_head_attention(X, WEIGHTS, num_heads=2, key_mask=KEY_MASK[:2]), ValueError,
     ["key_mask", "one row per sequence", "(2, 7)"]),
    (lambda: attention.multi_head_attention(X, WEIGHTS, num_heads=2, causal=1), TypeError, ["causal"]),
    (lambda: attention.attention_weights(torch.zeros(3, 4), causal=True), ValueError, ["scores", "square", "(3, 4)"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), key_mask=torch.tensor([False, True, True]), causal=True),
     ValueError, ["key_mask", "at least one", "first token"]),
    (lambda: attention.scaled_dot_product_scores(torch.zeros(2, 3, 4, 5), torch.zeros(2, 4, 5)), ValueError,
     ["Q", "K", "(2, 3, 4, 5)", "(2, 4, 5)"]),
])
def test_bad_input_is_refused_with_a_message_naming_it(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value), f"{word!r} not in: {raised.value}"


# Pictures of weights: one 0-to-1 scale ---------------------------------------------------------------------

SCORES = torch.randn(5, 5, generator=torch.Generator().manual_seed(12))


def _colour_limits(fig):
    return fig.axes[0].images[0].get_clim()


def test_attention_weights_are_drawn_on_a_fixed_zero_to_one_scale():
    weights = attention.attention_weights(SCORES, causal=True)  # its largest weight is 1, its smallest 0
    part = weights[2:, :3] * 0.5  # values between 0 and 0.5 only
    assert _colour_limits(plots.matrix_figure(part, title="w", value_range=(0, 1))) == (0.0, 1.0)
    assert _colour_limits(plots.matrices_figure({"a": part, "b": part}, value_range=(0.0, 1.0))) == (0.0, 1.0)
    # Without it the scale follows the data, so the same colour means different weights in two pictures.
    assert _colour_limits(plots.matrices_figure({"a": part}, symmetric=False)) != (0.0, 1.0)



# Packing: several documents in one row ---------------------------------------------------------------------


def test_packed_mask_is_block_diagonal_and_causal_and_positions_restart():
    ids = attention.document_ids_from_lengths([3, 2, 1])
    assert ids.tolist() == [0, 0, 0, 1, 1, 2]
    assert attention.packed_position_ids(ids).tolist() == [0, 1, 2, 0, 1, 0]
    expected = torch.block_diag(*(torch.ones(n, n).tril() for n in (3, 2, 1))).bool()
    assert torch.equal(attention.packed_mask(ids), expected)
    assert torch.equal(attention.packed_mask(ids, causal=False), torch.block_diag(*(torch.ones(n, n) for n in (3, 2, 1))).bool())
    batch = torch.stack([ids, torch.zeros(6, dtype=torch.long)])
    assert attention.packed_mask(batch).shape == (2, 6, 6)
    assert torch.equal(attention.packed_mask(batch)[1], attention.causal_mask(sequence_length=6))
    assert attention.packed_position_ids(batch).tolist() == [[0, 1, 2, 0, 1, 0], [0, 1, 2, 3, 4, 5]]


@pytest.mark.parametrize("num_heads", [1, 3])
def test_a_packed_row_gives_each_document_the_outputs_it_has_alone(num_heads):
    lengths = [3, 2, 4]
    x = torch.randn(sum(lengths), 12, generator=torch.Generator().manual_seed(5))
    weights = attention.multi_head_weights(d_model=12, seed=5)
    ids = attention.document_ids_from_lengths(lengths)
    packed, packed_weights = attention.multi_head_attention(x, weights, num_heads=num_heads, mask=attention.packed_mask(ids))
    starts = [0, 3, 5]
    for start, n in zip(starts, lengths):
        alone, _ = attention.multi_head_attention(x[start:start + n], weights, num_heads=num_heads, causal=True)
        assert torch.allclose(packed[start:start + n], alone, atol=ATOL)
    # Without the mask (causal only), the second and third documents see the first.
    leaky, _ = attention.multi_head_attention(x, weights, num_heads=num_heads, causal=True)
    assert not torch.allclose(leaky[3:5], packed[3:5], atol=1e-3)
    # The same mask through scaled_dot_product_attention (True = takes part, this package's convention).
    assert torch.allclose(packed_weights.sum(-1), torch.ones(num_heads, sum(lengths)))
    q, k, v = (attention.split_heads(x @ w, num_heads=num_heads) for w in weights[:3])
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=attention.packed_mask(ids))
    assert torch.allclose(packed, attention.merge_heads(reference) @ weights.W_O, atol=ATOL)


def test_a_batched_mask_and_key_mask_combine():
    x, weights, _ = example()
    key_mask = torch.arange(7) < torch.tensor([7, 6, 6])[:, None]  # every document keeps a real first token
    ids = torch.tensor([0, 0, 1, 1, 1, 2, 2]).expand(3, 7)
    ours, _ = attention.multi_head_attention(x, weights, num_heads=3, key_mask=key_mask, mask=attention.packed_mask(ids))
    hidden = attention.packed_mask(ids) & key_mask[:, None, :]
    q, k, v = (attention.split_heads(x @ w, num_heads=3) for w in weights[:3])
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=hidden[:, None])
    assert torch.allclose(ours, attention.merge_heads(reference) @ weights.W_O, atol=ATOL)


@pytest.mark.parametrize("call,error,words", [
    (lambda: attention.document_ids_from_lengths([3, 0]), ValueError, ["lengths[1]", "0"]),
    (lambda: attention.document_ids_from_lengths([]), TypeError, ["lengths"]),
    (lambda: attention.document_ids_from_lengths(3), TypeError, ["lengths", "3"]),
    (lambda: attention.packed_mask(torch.tensor([0.0, 1.0])), TypeError, ["document_ids", "float32"]),
    (lambda: attention.packed_mask(torch.zeros(1, 2, 3, dtype=torch.long)), ValueError, ["document_ids", "(1, 2, 3)"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), mask=torch.ones(3, 3)), TypeError, ["mask", "bool"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), mask=torch.ones(4, 4, dtype=torch.bool)), ValueError,
     ["mask", "(4, 4)"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), mask=torch.ones(2, 3, 3, dtype=torch.bool)), ValueError,
     ["mask", "(2, 3, 3)", "(3, 3)"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), mask=torch.zeros(3, 3, dtype=torch.bool)), ValueError,
     ["mask", "at least one"]),
    (lambda: attention.multi_head_attention(X[0], WEIGHTS, num_heads=3, mask=torch.ones(3, 7, 7, dtype=torch.bool)),
     ValueError, ["mask", "2-D", "(3, 7, 7)"]),
])
def test_packing_bad_input_is_refused_with_a_message_naming_it(call, error, words):
    with pytest.raises(error) as raised:
        call()
    for word in words:
        assert word in str(raised.value), f"{word!r} not in: {raised.value}"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(2, 12))
def test_minus_1e9_gives_the_weights_of_minus_inf_where_a_row_has_a_real_key(seed, length):
    # 07's side note (a row with no key): the Annotated Transformer's -1e9 and -inf agree wherever a row sees a real key.
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(3, length, length, generator=generator) * 4
    keep = torch.rand(3, 1, length, generator=generator) < 0.6
    keep[..., 0] = True  # every row sees at least one key
    assert torch.equal(torch.softmax(scores.masked_fill(~keep, -1e9), dim=-1),
                       torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1))


def test_a_row_with_no_key_gives_nan_or_0_depending_on_the_call():
    # 07's side note, on the torch this suite pins: a plain softmax and nn.MultiheadAttention with need_weights=True
    # (which runs a plain softmax) give NaN; F.scaled_dot_product_attention, and the module with need_weights=False
    # (which calls it), give 0 (PyTorch 2.5.0 and later); -1e9 for -inf gives equal weights.
    generator = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 10, 3, generator=generator)  # (batch, heads, L, head_dim)
    x = torch.randn(1, 10, 6, generator=generator)
    no_key = torch.zeros(1, 1, 1, 10, dtype=torch.bool)
    scores = q @ k.transpose(-2, -1) / 3**0.5
    assert torch.softmax(scores.masked_fill(~no_key, float("-inf")), dim=-1).isnan().all()
    assert torch.equal(F.scaled_dot_product_attention(q, k, v, attn_mask=no_key), torch.zeros_like(v))
    assert torch.equal(torch.softmax(scores.masked_fill(~no_key, -1e9), dim=-1), torch.full_like(scores, 0.1))
    module = torch.nn.MultiheadAttention(6, 2, bias=False, batch_first=True)
    with torch.no_grad():
        hidden = module(x, x, x, key_padding_mask=torch.ones(1, 10, dtype=torch.bool), need_weights=True)[0]
        assert hidden.isnan().all()
        hidden = module(x, x, x, key_padding_mask=torch.ones(1, 10, dtype=torch.bool), need_weights=False)[0]
        assert torch.equal(hidden, torch.zeros_like(x))
    # The same module with biases, in eval() under no_grad(), takes the fast path (torch._native_multi_head_attention):
    # NaN again, even with need_weights=False (torch 2.13, CPU). 07's sources once said this; the test keeps it.
    module = torch.nn.MultiheadAttention(6, 2, batch_first=True).eval()
    with torch.no_grad():
        assert module(x, x, x, key_padding_mask=torch.ones(1, 10, dtype=torch.bool), need_weights=False)[0].isnan().all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_unmasking_moves_each_output_toward_the_pad_values_by_the_weight_on_pad(seed):
    # 05's leak table: with w the weight on <PAD> without the mask, p the <PAD> values averaged with those weights
    # and m the masked output, the unmasked output is m + w (p - m).
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(7, 7, generator=generator, dtype=torch.float64)
    V = torch.randn(7, 3, generator=generator, dtype=torch.float64)
    key_mask = torch.tensor([True] * 4 + [False] * 3)
    masked = torch.softmax(scores.masked_fill(~key_mask, float("-inf")), dim=-1) @ V
    leaky_weights = torch.softmax(scores, dim=-1)
    on_pad = leaky_weights[:, ~key_mask]
    w = on_pad.sum(dim=-1, keepdim=True)
    p = on_pad @ V[~key_mask] / w
    torch.testing.assert_close(leaky_weights @ V, masked + w * (p - masked))


def test_shuffle_gap_is_zero_without_pe_and_not_with_it():
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))
    weights = attention.projection_weights(d_model=6, seed=0)
    order = torch.tensor([3, 2, 0, 1])
    table = builder.sinusoidal_encoding(max_sequence_length=4, d_model=6)
    assert attention.shuffle_gap(x, order, weights) < 1e-6
    assert attention.shuffle_gap(x, order, weights, added=table[1]) < 1e-6  # one row at every position moves with no word
    assert attention.shuffle_gap(x, order, weights, added=table) > 0.01
    assert attention.shuffle_gap(x, order, weights, causal=True) > 0.01
    with pytest.raises(ValueError, match="added must broadcast"):
        attention.shuffle_gap(x, order, weights, added=torch.zeros(x.shape[0] + 1, x.shape[1]))


def test_side_by_side_puts_each_token_beside_its_output_row():
    table = attention.side_by_side([["a", "b"], ["b", "a"]], [torch.tensor([[1.0, -2.0], [0.5, 0.25]]),
                                                             torch.tensor([[0.5, 0.25], [1.0, -2.0]])])
    lines = table.splitlines()
    assert lines[0].split() == ["a", "b", "b", "a"]
    assert lines[1].split() == ["a", "(", "1.000,", "-2.000)", "b", "(", "0.500,", "0.250)"]
    assert len({line.index("(", 6) for line in lines[1:]}) == 1  # the second column lines up
