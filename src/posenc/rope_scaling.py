"""Stretching RoPE past the length it was trained on: the frequencies of each rule.

RoPE turns pair i of a head by `position * theta_i`, with theta_i = base^(-2i / head_dim)
(`schemes.apply_rotary`). A model trained on L positions has seen, for each pair, only the
angles 0 .. (L - 1) * theta_i. The rules below change the theta_i so that a longer input
meets (mostly) angles the model has seen; s is `factor`, the ratio of the new length to L:

    None      theta_i                                   plain RoPE
    linear    theta_i / s                               position interpolation (Chen et al. 2023,
                                                        arXiv 2306.15595): every position divided by s
    ntk       (base * s^(d / (d - 2)))^(-2i / d)        "NTK-aware": a larger base (YaRN paper,
                                                        Peng et al. 2023, arXiv 2309.00071, section 3)
    yarn      a ramp between theta_i / s and theta_i    YaRN's "NTK-by-parts" (same paper, section 3):
                                                        slow pairs interpolated, fast pairs kept; the ramp
                                                        is linear in the pair index i, as in the reference
                                                        code and transformers (the paper's eq. 18 is linear
                                                        in the turns r, a different curve)
    llama3    the same idea with wavelength bounds      Llama 3.1 (meta-llama/llama-models,
                                                        models/llama3/model.py, `apply_scaling`)

YaRN also scales the attention logits (`yarn_attention_factor`). The "linear", "yarn" and
"llama3" formulas are the ones of transformers' `modeling_rope_utils.py` (`ROPE_INIT_FUNCTIONS`),
which tests/test_rope_scaling.py checks this module against; this module computes in float64,
transformers in float32. transformers has no "ntk" rule with a fixed base: its "dynamic" rule is
plain RoPE up to max_position_embeddings L and, for an input of l > L tokens, uses the base
base * (s * l / L - (s - 1))^(d / (d - 2)). "ntk" here is the YaRN paper's equation 16 with a fixed
s, as in the YaRN repository's `scaled_rope/LlamaNTKScaledRotaryEmbedding.py` (jquesnelle/yarn);
the tests check it against rotary-embedding-torch's `theta_rescale_factor`.
"""

from __future__ import annotations

import math

import torch

from ._checks import BASE, POSITIVE, check_size, checked, one_of, optional_size, real
from .builder import frequencies

__all__ = ["SCALINGS", "rope_frequencies", "yarn_attention_factor"]

SCALINGS = (None, "linear", "ntk", "yarn", "llama3")
# transformers' defaults for YaRN's ramp ("as suggested in the paper", its comment says): beta_fast 32, beta_slow 1.
YARN_BETA_FAST = 32.0
YARN_BETA_SLOW = 1.0
# Llama 3.1's published setting (llama-models, `apply_scaling`; transformers' "llama3" parameters).
LLAMA3_LOW_FREQ_FACTOR = 1.0
LLAMA3_HIGH_FREQ_FACTOR = 4.0
# A larger factor means nothing for any model, and keeps base * factor^(d / (d - 2)) a finite float.
MAX_FACTOR = 1e6


def _head_dim(name: str, value: object) -> int:
    if check_size(name, value, minimum=2, maximum=2**20) % 2:
        raise ValueError(f"{name} must be even: RoPE turns pairs of columns, got {value}")
    return value


# The factor s that stretches a context, often the new length over the trained one: < 1 would shrink it.
_factor = real(1, MAX_FACTOR)


@checked(head_dim=_head_dim, base=BASE, scaling=one_of(SCALINGS), factor=_factor,
         original_max_position_embeddings=optional_size(maximum=2**53))
def rope_frequencies(*, head_dim: int, base: float = 10000.0, scaling: str | None = None, factor: float = 1.0,
                     original_max_position_embeddings: int | None = None) -> torch.Tensor:
    """The angle per position of each pair of a RoPE head, shape (head_dim // 2,), float64.

    Entry i is the angle pair i turns by from one position to the next (plain RoPE:
    base^(-2i / head_dim)), after the stretching rule `scaling` (None, "linear", "ntk",
    "yarn" or "llama3"; see the module's docstring) with `factor` s >= 1, the ratio of the
    new context length to the trained one. "yarn" and "llama3" also need
    `original_max_position_embeddings`, the trained length L; the other rules do not use it.
    Pass the result to `schemes.apply_rotary(x, frequencies=...)`.

    >>> rope_frequencies(head_dim=8, scaling="linear", factor=2.0) * 2 == rope_frequencies(head_dim=8)
    tensor([True, True, True, True])
    """
    if scaling is None and factor != 1.0:
        raise ValueError(f"factor={factor!r} needs a scaling rule (None is plain RoPE): one of {SCALINGS[1:]}, or factor=1.0")
    if scaling == "ntk" and head_dim == 2:
        raise ValueError("head_dim must be at least 4 for scaling='ntk': its base grows by factor^(d / (d - 2))")
    if scaling in ("yarn", "llama3") and original_max_position_embeddings is None:
        raise ValueError(f"scaling={scaling!r} needs original_max_position_embeddings, the length trained on (an int >= 1)")
    if scaling is None:
        return _plain(head_dim, base)
    if scaling == "linear":
        return _linear(head_dim, base, factor)
    if scaling == "ntk":
        return _ntk(head_dim, base, factor)
    if scaling == "yarn":
        return _yarn(head_dim, base, factor, original_max_position_embeddings)
    return _llama3(head_dim, base, factor, original_max_position_embeddings)


@checked(factor=POSITIVE)
def yarn_attention_factor(*, factor: float) -> float:
    """YaRN's factor on cos and sin, 0.1 ln(factor) + 1, and 1.0 for factor <= 1.

    The YaRN paper (arXiv 2309.00071, section 3) divides the attention logits by a
    temperature t with sqrt(1/t) = 0.1 ln(s) + 1, applied by scaling the rotated q and k
    both by sqrt(1/t): so the logits grow by the square of this factor.
    transformers does the same (`_compute_yarn_parameters`'s `get_mscale`; the rotary
    embedding multiplies cos and sin by it).

    >>> round(yarn_attention_factor(factor=4.0), 4)
    1.1386
    """
    if factor <= 1.0:
        return 1.0
    return 0.1 * math.log(factor) + 1.0


# One function per rule: the line that is the formula holds nothing else. -----------------------


def _plain(head_dim: int, base: float) -> torch.Tensor:
    # base^(-2i / head_dim): the sinusoid's frequencies, computed in one place for the whole package (builder).
    return frequencies(d_model=head_dim, base=base)


def _linear(head_dim: int, base: float, factor: float) -> torch.Tensor:
    # Position interpolation: position m becomes m / s, and m / s * theta_i = m * (theta_i / s).
    return _plain(head_dim, base) / factor


def _ntk(head_dim: int, base: float, factor: float) -> torch.Tensor:
    # The slowest pair (i = d/2 - 1) ends up divided by exactly s; the fastest (i = 0) is unchanged.
    ntk_base = base * factor ** (head_dim / (head_dim - 2))
    return _plain(head_dim, ntk_base)


def _yarn(head_dim: int, base: float, factor: float, original_length: int) -> torch.Tensor:
    theta = _plain(head_dim, base)
    # Pair i makes L / (2 pi base^(2i/d)) turns within the trained length L; the pair index at which it makes
    # r turns is d ln(L / (2 pi r)) / (2 ln base). Pairs with more than beta_fast turns keep theta_i,
    # pairs with fewer than beta_slow are interpolated, and a ramp linear in i joins the two (bounds
    # rounded outwards, as YaRN's reference code and transformers do).
    low = max(math.floor(_pair_making(YARN_BETA_FAST, head_dim, base, original_length)), 0)
    high = min(math.ceil(_pair_making(YARN_BETA_SLOW, head_dim, base, original_length)), head_dim - 1)
    if low == high:
        high += 0.001  # the guard against dividing by zero in YaRN's code and in transformers'
    ramp = ((torch.arange(head_dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0.0, 1.0)
    # ramp 0: keep theta_i (extrapolate); ramp 1: theta_i / s (interpolate).
    return theta / factor * ramp + theta * (1.0 - ramp)


def _pair_making(turns: float, head_dim: int, base: float, original_length: int) -> float:
    """The (fractional) pair index whose wavelength fits `turns` times into the trained length."""
    return head_dim * math.log(original_length / (turns * 2 * math.pi)) / (2 * math.log(base))


def _llama3(head_dim: int, base: float, factor: float, original_length: int) -> torch.Tensor:
    theta = _plain(head_dim, base)
    wavelength = 2 * math.pi / theta
    low_freq_wavelength = original_length / LLAMA3_LOW_FREQ_FACTOR
    high_freq_wavelength = original_length / LLAMA3_HIGH_FREQ_FACTOR
    # Between the two wavelengths, a blend whose weight is linear in the turns within L.
    smooth = (original_length / wavelength - LLAMA3_LOW_FREQ_FACTOR) / (LLAMA3_HIGH_FREQ_FACTOR - LLAMA3_LOW_FREQ_FACTOR)
    blended = (1 - smooth) * theta / factor + smooth * theta
    # Short wavelengths (many turns within L) are kept, long ones divided by s.
    return torch.where(wavelength < high_freq_wavelength, theta,
                       torch.where(wavelength > low_freq_wavelength, theta / factor, blended))
