"""posenc.rope_scaling (re-exported by posenc.schemes): the frequencies of the rules that stretch RoPE, checked
against transformers' own implementations (pinned: 5.23.0), rotary-embedding-torch's NTK base, and the places the
rules agree with plain RoPE; apply_rotary with given frequencies and partial rotation, against transformers' code."""

from __future__ import annotations

import logging
import math

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from posenc import schemes
from posenc.rope_scaling import rope_frequencies, yarn_attention_factor
from posenc.schemes import apply_rotary

HEAD_DIMS = [4, 16, 64, 128]
BASES = [10_000.0, 500_000.0, 1_000_000.0]
FACTORS = [1.0, 2.0, 8.0, 40.0]
LENGTHS = [32, 8192]
# transformers computes in float32, this package in float64: they agree to float32's rounding.
FLOAT32 = dict(rtol=2e-6, atol=0.0)


@pytest.fixture(autouse=True)
def _quiet_transformers():
    logging.getLogger("transformers").setLevel(logging.ERROR)


def hf_frequencies(rule, *, head_dim, base, factor=1.0, original=None):
    """transformers' (inv_freq, attention_factor) for one rule, with a LlamaConfig of 4 heads of head_dim."""
    parameters = {"rope_type": rule, "rope_theta": base}
    if rule != "default":
        parameters["factor"] = factor
    if rule in ("yarn", "llama3"):
        parameters["original_max_position_embeddings"] = original
    if rule == "llama3":
        parameters.update(low_freq_factor=1.0, high_freq_factor=4.0)
    config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim,
                         max_position_embeddings=int(factor * (original or 64)), rope_parameters=parameters)
    if rule == "default":
        return LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    return ROPE_INIT_FUNCTIONS[rule](config, None)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
def test_plain_frequencies_are_transformers_default(head_dim, base):
    expected, attention_factor = hf_frequencies("default", head_dim=head_dim, base=base)
    torch.testing.assert_close(rope_frequencies(head_dim=head_dim, base=base), expected.double(), **FLOAT32)
    assert attention_factor == 1.0


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("factor", FACTORS)
def test_linear_is_transformers_linear(head_dim, base, factor):
    expected, _ = hf_frequencies("linear", head_dim=head_dim, base=base, factor=factor)
    torch.testing.assert_close(rope_frequencies(head_dim=head_dim, base=base, scaling="linear", factor=factor),
                               expected.double(), **FLOAT32)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("original", LENGTHS)
@pytest.mark.parametrize("rule", ["yarn", "llama3"])
def test_yarn_and_llama3_are_transformers_own(rule, head_dim, base, factor, original):
    expected, attention_factor = hf_frequencies(rule, head_dim=head_dim, base=base, factor=factor, original=original)
    ours = rope_frequencies(head_dim=head_dim, base=base, scaling=rule, factor=factor,
                            original_max_position_embeddings=original)
    torch.testing.assert_close(ours, expected.double(), **FLOAT32)
    if rule == "yarn":
        assert yarn_attention_factor(factor=factor) == pytest.approx(attention_factor, rel=1e-12)


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("factor", FACTORS)
def test_ntk_base_is_rotary_embedding_torchs_theta_rescale(head_dim, base, factor):
    import rotary_embedding_torch  # pinned in requirements-dev.lock
    theirs = rotary_embedding_torch.RotaryEmbedding(dim=head_dim, theta=base, theta_rescale_factor=factor).freqs
    torch.testing.assert_close(rope_frequencies(head_dim=head_dim, base=base, scaling="ntk", factor=factor),
                               theirs.detach().double(), **FLOAT32)


def test_the_published_settings():
    # Llama 3.1: base 500,000, factor 8 over 8,192 positions; its slowest pairs are divided by 8, its fastest kept.
    plain = rope_frequencies(head_dim=128, base=500_000.0)
    llama = rope_frequencies(head_dim=128, base=500_000.0, scaling="llama3", factor=8.0,
                             original_max_position_embeddings=8192)
    wavelength = 2 * math.pi / plain
    assert torch.equal(llama[wavelength < 8192 / 4], plain[wavelength < 8192 / 4])
    torch.testing.assert_close(llama[wavelength > 8192], plain[wavelength > 8192] / 8, rtol=1e-15, atol=0.0)
    assert yarn_attention_factor(factor=4.0) == pytest.approx(1.1386, abs=1e-4)
    assert yarn_attention_factor(factor=40.0) == pytest.approx(0.1 * math.log(40) + 1)


@pytest.mark.parametrize("rule", [None, "linear", "ntk", "yarn", "llama3"])
@pytest.mark.parametrize("head_dim", [4, 16, 128])
def test_factor_one_is_plain_rope(rule, head_dim):
    plain = rope_frequencies(head_dim=head_dim)
    ours = rope_frequencies(head_dim=head_dim, scaling=rule, factor=1.0, original_max_position_embeddings=64)
    torch.testing.assert_close(ours, plain, rtol=1e-15, atol=0.0)
    assert yarn_attention_factor(factor=1.0) == 1.0 and yarn_attention_factor(factor=0.5) == 1.0


@pytest.mark.parametrize("factor", [2.0, 4.0, 16.0])
@pytest.mark.parametrize("base", BASES)
def test_what_each_rule_does_to_the_fastest_and_the_slowest_pairs(factor, base):
    head_dim, original = 128, 4096
    plain = rope_frequencies(head_dim=head_dim, base=base)
    turns = original * plain / (2 * math.pi)  # turns of each pair within the trained length
    linear = rope_frequencies(head_dim=head_dim, base=base, scaling="linear", factor=factor)
    ntk = rope_frequencies(head_dim=head_dim, base=base, scaling="ntk", factor=factor)
    yarn = rope_frequencies(head_dim=head_dim, base=base, scaling="yarn", factor=factor,
                            original_max_position_embeddings=original)
    llama = rope_frequencies(head_dim=head_dim, base=base, scaling="llama3", factor=factor,
                             original_max_position_embeddings=original)
    torch.testing.assert_close(linear, plain / factor, rtol=1e-15, atol=0.0)
    # NTK-aware: the first pair unchanged, the last divided by exactly the factor, every pair in between less.
    assert ntk[0] == plain[0]
    torch.testing.assert_close(ntk[-1], plain[-1] / factor, rtol=1e-12, atol=0.0)
    assert bool(((ntk <= plain) & (ntk >= plain / factor * (1 - 1e-12))).all())
    # YaRN: pairs with more than beta_fast = 32 turns kept, fewer than beta_slow = 1 divided by the factor
    # (the ramp's bounds are rounded outwards to whole pair indices: a margin of one pair on each side).
    fast, slow = turns > 32 * base ** (2 / head_dim), turns < 1 / base ** (2 / head_dim)
    assert torch.equal(yarn[fast], plain[fast])
    torch.testing.assert_close(yarn[slow], plain[slow] / factor, rtol=1e-15, atol=0.0)
    assert bool(((yarn <= plain) & (yarn >= plain / factor * (1 - 1e-12))).all())
    # Llama 3.1: wavelengths below L / 4 kept, above L divided by the factor.
    assert torch.equal(llama[turns > 4], plain[turns > 4])
    torch.testing.assert_close(llama[turns < 1], plain[turns < 1] / factor, rtol=1e-15, atol=0.0)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="head_dim"):
        rope_frequencies(head_dim=7)
    with pytest.raises(TypeError, match="head_dim"):
        rope_frequencies(head_dim=8.0)
    with pytest.raises(ValueError, match="scaling"):
        rope_frequencies(head_dim=8, scaling="dynamic", factor=2.0)
    with pytest.raises(TypeError, match="scaling"):
        rope_frequencies(head_dim=8, scaling=2)
    with pytest.raises(ValueError, match="factor"):
        rope_frequencies(head_dim=8, scaling="linear", factor=0.5)
    with pytest.raises(TypeError, match="factor"):
        rope_frequencies(head_dim=8, scaling="linear", factor="2")
    with pytest.raises(ValueError, match="factor"):
        rope_frequencies(head_dim=8, factor=2.0)  # no rule to apply it with
    with pytest.raises(ValueError, match="original_max_position_embeddings"):
        rope_frequencies(head_dim=8, scaling="yarn", factor=2.0)
    with pytest.raises(ValueError, match="head_dim"):
        rope_frequencies(head_dim=2, scaling="ntk", factor=2.0)
    with pytest.raises(ValueError, match="base"):
        rope_frequencies(head_dim=8, base=1.0)
    with pytest.raises(ValueError, match="factor"):
        yarn_attention_factor(factor=float("nan"))
    with pytest.raises(TypeError, match="factor"):
        yarn_attention_factor(factor=True)


# apply_rotary with given frequencies and partial rotation -------------------------------------------


def hf_rotate(x, frequencies, *, attention_scaling=1.0):
    """transformers' LLaMA RoPE (half-split, `rotate_half`) of x (batch, heads, seq, rotary_dim), computed its way."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    positions = torch.arange(x.shape[-2], dtype=torch.float32)
    angles = positions[:, None] * frequencies.float()[None, :]
    emb = torch.cat([angles, angles], dim=-1)
    cos, sin = emb.cos()[None] * attention_scaling, emb.sin()[None] * attention_scaling
    rotated, _ = apply_rotary_pos_emb(x, x, cos, sin)
    return rotated


@pytest.mark.parametrize("rule", [None, "linear", "ntk", "yarn", "llama3"])
def test_apply_rotary_with_a_rules_frequencies_is_transformers_rope(rule):
    factor = 1.0 if rule is None else 4.0
    theta = rope_frequencies(head_dim=16, scaling=rule, factor=factor, original_max_position_embeddings=32)
    x = torch.randn(2, 3, 50, 16, generator=torch.Generator().manual_seed(0))
    scale = yarn_attention_factor(factor=factor) if rule == "yarn" else 1.0
    ours = apply_rotary(x, frequencies=theta, layout="half_split") * scale
    torch.testing.assert_close(ours, hf_rotate(x, theta, attention_scaling=scale), rtol=1e-5, atol=1e-5)


def test_apply_rotary_is_unchanged_without_the_new_arguments():
    x = torch.randn(2, 7, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for layout in schemes.LAYOUTS:
        plain = apply_rotary(x, base=500.0, offset=3, layout=layout)
        assert torch.equal(apply_rotary(x, base=500.0, offset=3, layout=layout,
                                        frequencies=rope_frequencies(head_dim=12, base=500.0)), plain)
        assert torch.equal(apply_rotary(x, base=500.0, offset=3, layout=layout, rotary_dim=12), plain)
    theta = rope_frequencies(head_dim=12, scaling="linear", factor=3.0)
    torch.testing.assert_close(schemes.rotary_angles(max_sequence_length=7, d=12, offset=3, frequencies=theta),
                               schemes.rotary_angles(max_sequence_length=7, d=12, offset=3) / 3, rtol=1e-15, atol=0.0)
    # Position interpolation is the plain rotation at position / factor.
    torch.testing.assert_close(schemes.rotation_matrix(position=6, d=12, frequencies=theta),
                               schemes.rotation_matrix(position=2, d=12), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("rotary_dim", [2, 4, 8])
def test_partial_rotation_is_gpt_neoxs(rotary_dim):
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb
    x = torch.randn(2, 3, 20, 16, generator=torch.Generator().manual_seed(2))
    theta = rope_frequencies(head_dim=rotary_dim)  # GPT-NeoX: base^(-2i / rotary_dim)
    angles = torch.arange(20, dtype=torch.float32)[:, None] * theta.float()[None, :]
    emb = torch.cat([angles, angles], dim=-1)
    theirs, _ = apply_rotary_pos_emb(x, x, emb.cos()[None], emb.sin()[None])
    ours = apply_rotary(x, rotary_dim=rotary_dim, layout="half_split")
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    assert torch.equal(ours[..., rotary_dim:], x[..., rotary_dim:])


def test_apply_rotary_refuses_bad_frequencies_and_rotary_dim():
    x = torch.randn(5, 8)
    with pytest.raises(ValueError, match="frequencies"):
        apply_rotary(x, frequencies=torch.ones(3))
    with pytest.raises(TypeError, match="frequencies"):
        apply_rotary(x, frequencies=torch.ones(4, dtype=torch.int64))
    with pytest.raises(ValueError, match="frequencies"):
        apply_rotary(x, frequencies=torch.tensor([1.0, float("nan"), 1.0, 1.0]))
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rotary(x, rotary_dim=3)
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rotary(x, rotary_dim=10)
    with pytest.raises(ValueError, match="frequencies"):
        apply_rotary(x, rotary_dim=4, frequencies=torch.ones(4))  # 4 columns turned: 2 pairs


def test_casting_a_loaded_llama_to_bfloat16_rounds_its_frequencies():
    """Notebook 12's side note: `model.to(torch.bfloat16)` rounds `inv_freq` too, and some cos/sin are then off by 2."""
    config = LlamaConfig(hidden_size=256, num_attention_heads=2, head_dim=128, rope_theta=500_000.0,
                         max_position_embeddings=131_072,
                         rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    rotary = LlamaRotaryEmbedding(config)
    exact = rotary.inv_freq.double()
    rotary = rotary.to(torch.bfloat16)
    assert rotary.inv_freq.dtype == torch.bfloat16
    positions = torch.arange(131_072)
    cos, sin = rotary(torch.zeros(1, dtype=torch.bfloat16), positions[None])
    angle = positions.double()[:, None] * exact
    angle = torch.cat([angle, angle], dim=-1)
    worst = max(float((cos[0].double() - angle.cos()).abs().max()), float((sin[0].double() - angle.sin()).abs().max()))
    assert worst > 1.99  # a flipped sign
