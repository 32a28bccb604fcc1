"""Other ways to give attention positions: a learned table, rotary (RoPE) and ALiBi.

    learned      a trainable (max_sequence_length, d_model) table added to X
                 (BERT, GPT-2); it has no row beyond its length.
    sinusoidal   the formula of `posenc.encoding`, added to X (the 2017 Transformer).
    rotary       RoPE: rotate the pairs (2i, 2i+1) of q and k by an angle that grows
                 with the position, so that q_m . k_n depends on m - n only
                 (Su et al., "RoFormer", 2021; LLaMA, Mistral, Qwen). In a model with
                 several heads, d is the head size: each head rotates its own
                 head_dim columns with the same angles.
    alibi        ALiBi: nothing is added to X; a bias -slope * (i - j) is added to the
                 attention scores, one slope per head (Press, Smith, Lewis,
                 "Train Short, Test Long", ICLR 2022; BLOOM, MPT).

Sizes are keyword-only and checked like the rest of the package: a bad value is a
TypeError or ValueError that names the argument, shows the value and says what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from ._checks import (
    BASE,
    FLAG,
    FLOAT_DTYPE,
    SIZE,
    check_floating_tensor,
    check_size,
    check_table_fits,
    checked,
    instance_of,
    list_of,
    one_of,
    size,
)
from ._provenance import marked
from .attention import ProjectionWeights, causal_mask
from .builder import DEFAULT_BASE, sinusoidal_encoding
from .builder import frequencies as _sinusoid_frequencies
from .encoding import positions_beyond, rows_to_add
from .positions import MAX_POSITION, position_ids

__all__ = [
    "LearnedPositionalEmbedding",
    "rotary_angles",
    "apply_rotary",
    "rotate_pairs",
    "LAYOUTS",
    "rotation_matrix",
    "half_split_permutation",
    "alibi_slopes",
    "alibi_bias",
    "linear_bias",
    "same_word_scores",
]

LAYOUTS = ("interleaved", "half_split")



class LearnedPositionalEmbedding(nn.Module):
    """A trainable table of one row per position, added to its input (BERT, GPT-2).

    The rows start as small random numbers (normal, standard deviation 0.02) from torch's
    global generator: call `torch.manual_seed` first for the same table every time. 0.02 is
    the choice of nanoGPT (karpathy/nanoGPT, model.py, `GPT._init_weights`) and of Hugging
    Face's GPT-2 (`GPT2Config.initializer_range`); OpenAI's own GPT-2 code (openai/gpt-2,
    src/model.py, `model`) draws its position table `wpe` with 0.01 and its token table
    `wte` with 0.02. Training moves each row on its own, so a row is only as
    good as the training data that reached its position, and there is no row at all
    beyond `max_sequence_length - 1`.

    >>> learned = LearnedPositionalEmbedding(max_sequence_length=10, d_model=6)
    >>> learned(torch.zeros(10, 6)).shape
    torch.Size([10, 6])
    """

    @checked(max_sequence_length=SIZE, d_model=SIZE, fits=("max_sequence_length", "d_model"))
    def __init__(self, *, max_sequence_length: int, d_model: int) -> None:
        super().__init__()
        self.max_sequence_length, self.d_model = max_sequence_length, d_model
        self.weight = nn.Parameter(torch.empty(self.max_sequence_length, self.d_model))
        nn.init.normal_(self.weight, mean=0.0, std=0.02)

    def forward(self, x: torch.Tensor, *, offset: int = 0) -> torch.Tensor:
        """`x + table[offset : offset + seq]` for x of shape (seq, d_model) or (batch, seq, d_model)."""
        offset, length = rows_to_add(x, d_model=self.d_model, offset=offset)
        rows = self.max_sequence_length
        if offset + length > rows:
            start = f", from position {offset}," if offset else ""  # where x starts, when not at 0
            raise ValueError(f"x{start} reaches {positions_beyond(offset, length, rows)}, but this learned table has rows "
                             f"only for positions 0 to {rows - 1} (max_sequence_length={rows}). Train a larger table, or "
                             "use a scheme with a formula (sinusoidal, rotary, ALiBi).")
        return x + self.weight[offset : offset + length].to(x.dtype)

    def extra_repr(self) -> str:
        return f"max_sequence_length={self.max_sequence_length}, d_model={self.d_model}"


# Rotary (RoPE) ------------------------------------------------------------------------------


def _even_d(name: str, d: object) -> int:
    if check_size(name, d) % 2:
        raise ValueError(f"{name} must be even: rotary encoding turns pairs of columns, and {name}={d} leaves one alone")
    return d


@checked(max_sequence_length=size(0), d=_even_d, base=BASE, fits=("max_sequence_length", "d"))
def rotary_angles(*, max_sequence_length: int, d: int, base: float = DEFAULT_BASE, offset: int = 0,
                  frequencies: torch.Tensor | None = None) -> torch.Tensor:
    """The angle each pair is turned by: `(offset + p) * base^(-2i / d)`, shape (max_sequence_length, d // 2), float64.

    Row p is position `offset + p`, column i the pair (2i, 2i + 1). These are the
    sinusoidal encoding's own angles (`encoding`'s `pos / base^(2i / d_model)`):
    RoPE turns them into rotations instead of adding their sines and cosines.
    With `frequencies` (d // 2 angles per position, e.g. from `rope_frequencies` with a
    stretching rule), the angles are `(offset + p) * frequencies[i]` and `base` is not used.
    """
    offset = check_size("offset", offset, minimum=0, maximum=MAX_POSITION - max_sequence_length)
    return _angles(max_sequence_length, d, base, offset, _frequencies(frequencies, d // 2, "d // 2"))


def _frequencies(frequencies: object, pairs: int, name: str) -> torch.Tensor | None:
    """Given frequencies as float64: a 1-D floating tensor of `pairs` finite angles per position (or None)."""
    if frequencies is None:
        return None
    if check_floating_tensor("frequencies", frequencies, ndim=(1,)).shape[0] != pairs or not torch.isfinite(frequencies).all():
        raise ValueError(f"frequencies must hold one finite angle per pair, {name} = {pairs}, got {frequencies}")
    return frequencies.detach().to(torch.float64)


def _angles(length: int, d: int, base: float, offset: int, frequencies: torch.Tensor | None) -> torch.Tensor:
    # Without frequencies, the sinusoid's own, base^(-2i/d): one place computes them for the whole package.
    theta = _sinusoid_frequencies(d_model=d, base=base) if frequencies is None else frequencies
    positions = position_ids(length=length, offset=offset).double()
    return positions[:, None] * theta[None, :]


@marked("schemes.apply_rotary")
def apply_rotary(x: torch.Tensor, *, base: float = DEFAULT_BASE, offset: int = 0, layout: str = "interleaved",
                 frequencies: torch.Tensor | None = None, rotary_dim: int | None = None) -> torch.Tensor:
    """Rotary position embedding (RoPE) of `x`, shape (..., seq, d) with d even.

    Row p of x sits at position `offset + p`; in a model with several heads, x is one
    head's queries or keys and d is head_dim. With `layout="interleaved"`, the columns
    (2i, 2i+1) form pair i and turn by the angle t = position * base^(-2i/d):

        (x1, x2) -> (x1 cos t - x2 sin t,  x1 sin t + x2 cos t)

    This is RoFormer's layout (Su et al. 2021, section 3.4.2, equation 34), the one of
    Meta's LLaMA code (meta-llama/llama, llama/model.py, `apply_rotary_emb`: neighbouring
    columns become one complex number) and of `rotary-embedding-torch`.

    With `layout="half_split"`, pair i is the columns (i, i + d/2) instead: the
    `rotate_half` code of GPT-NeoX (EleutherAI/gpt-neox, megatron/model/positional_embeddings.py)
    and of Hugging Face's LLaMA port (transformers, models/llama/modeling_llama.py). The two
    are the same rotation with the columns listed in another order:
    `apply_rotary(x[..., P], layout="half_split")` equals `apply_rotary(x)[..., P]` for
    `P = half_split_permutation(d=d)`. So a model trained with one layout gives the same
    scores with the other once the output columns of its W_Q and W_K are reordered by P,
    head by head: what Hugging Face's conversion of Meta's LLaMA weights does.

    `frequencies` replaces base^(-2i/d) by given angles per position, one per pair (a
    tensor from `rope_frequencies`, with a rule for stretching the context); `base` is then
    not used. `rotary_dim` (even, at most d) rotates only the first rotary_dim columns of
    each head and passes the others through unchanged, as GPT-NeoX does with `rotary_pct`
    (transformers, models/gpt_neox/modeling_gpt_neox.py, `apply_rotary_pos_emb`:
    `q[..., :rotary_dim]` turns, `q[..., rotary_dim:]` passes); the layout then applies within
    those columns, and the default angles are base^(-2i/rotary_dim), i < rotary_dim / 2, as
    there. Neither given: the rotation of the whole head described above, unchanged.

    The angles, their cosines and sines are computed in float64 and rounded to x's
    dtype once; the result has x's dtype and shape. NaN or inf in x stay NaN or inf
    in the rows they are in (a rotation mixes only the two numbers of a pair).
    """
    check_floating_tensor("x", x)
    one_of(LAYOUTS)("layout", layout)
    if x.dim() < 2 or x.shape[-1] % 2:
        raise ValueError(f"x must be (..., seq, d) with d even (RoPE turns pairs of columns), got {tuple(x.shape)}")
    turned = x.shape[-1] if rotary_dim is None else check_size("rotary_dim", rotary_dim, minimum=2, maximum=max(x.shape[-1], 2))
    if turned % 2 or turned > x.shape[-1]:
        raise ValueError(f"rotary_dim must be an even number from 2 to x's last dimension d={x.shape[-1]}, got {rotary_dim}")
    name = "x's last dimension d // 2" if rotary_dim is None else "rotary_dim // 2"
    frequencies, base = _frequencies(frequencies, turned // 2, name), BASE("base", base)
    offset = check_size("offset", offset, minimum=0, maximum=MAX_POSITION - x.shape[-2])
    if frequencies is not None and not turned:  # an empty head (d = 0): one pair's table, of which it uses none
        frequencies = frequencies.new_zeros(1)
    angles = _angles(x.shape[-2], max(turned, 2), base, offset, frequencies)[:, : turned // 2]
    if turned < x.shape[-1]:  # partial RoPE: the first `turned` columns turn, the others pass unchanged
        return torch.cat([_rotate(x[..., :turned], angles, layout), x[..., turned:]], dim=-1)
    return _rotate(x, angles, layout)


def rotate_pairs(x: torch.Tensor, angles: torch.Tensor, *, layout: str = "interleaved") -> torch.Tensor:
    """Turn each pair of columns of x by its angle: `(x1, x2) -> (x1 cos t - x2 sin t, x1 sin t + x2 cos t)`.

    The one rotation of the package: `apply_rotary` calls it with the angles of positions
    `offset, offset + 1, ...`, a decoder with each token's own position id. angles: one per pair,
    broadcasting to `(..., seq, d // 2)`; their cosines and sines are rounded to x's dtype once.
    The pairs are the columns (2i, 2i+1) with `layout="interleaved"`, (i, i + d/2) with "half_split".
    """
    return _rotate(x, angles, layout)


def _rotate(x: torch.Tensor, angles: torch.Tensor, layout: str) -> torch.Tensor:
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if layout == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def rotation_matrix(*, position: int, d: int, base: float = DEFAULT_BASE,
                    frequencies: torch.Tensor | None = None) -> torch.Tensor:
    """RoPE at one position as a matrix: RoFormer's R_p (section 3.2.2), shape (d, d), float64.

    Block-diagonal: its 2 x 2 block i is [[cos t, -sin t], [sin t, cos t]] with
    t = position * base^(-2i/d). It acts on a column vector from the left, as the paper
    writes it: `R_p @ x` turns the pair (x[2i], x[2i+1]) by +t. On a row from the right
    it turns by -t, since `row @ R = (R^T @ row^T)^T`. That is the shift of the sinusoidal
    table, whose pairs are stored as (sin, cos): `PE[p] @ rotation_matrix(position=k, d=d_model)`
    equals `PE[p + k]` for every p.

    With `frequencies` (d // 2 angles per position, e.g. from `rope_frequencies`), t is
    position * frequencies[i] and `base` is not used.

    For reading and checking only: `apply_rotary` applies the same rotation pair by pair
    without building a matrix that is almost all zeros.
    """
    position, d = check_size("position", position, minimum=0, maximum=MAX_POSITION - 1), _even_d("d", d)
    check_table_fits((d, d), torch.float64, name="rotation matrix", arguments="d")
    angles = rotary_angles(max_sequence_length=1, d=d, base=base, offset=position, frequencies=frequencies)[0]
    cos, sin = angles.cos(), angles.sin()
    R = torch.zeros(d, d, dtype=torch.float64)
    even = torch.arange(0, d, 2)
    R[even, even], R[even, even + 1] = cos, -sin
    R[even + 1, even], R[even + 1, even + 1] = sin, cos
    return R


def half_split_permutation(*, d: int) -> torch.Tensor:
    """The column order that takes interleaved pairs to the half-split layout: [0, 2, 4, ..., 1, 3, 5, ...].

    It is `encoding.to_concatenated`'s reordering (all sines, then all cosines):
    `x[..., half_split_permutation(d=d)]` puts column 2i at i and column 2i+1 at i + d/2.
    Hugging Face's conversion of Meta's LLaMA weights (transformers 4.42.4,
    models/llama/convert_llama_weights_to_hf.py, `permute`; the installed 5.23.0 has no such
    file, and its `PermuteForRope` in core_model_loading.py does the same) reorders each head's
    rows of W_Q and W_K (PyTorch stores a Linear layer's weight as out x in) in exactly this order.
    """
    d = _even_d("d", d)
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])


# ALiBi ---------------------------------------------------------------------------------------


@marked("schemes.alibi_slopes")
@checked(num_heads=SIZE, dtype=FLOAT_DTYPE)
def alibi_slopes(*, num_heads: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """One slope per head, shape (num_heads,), as in "Train Short, Test Long" (Press et al., 2022, section 3).

    For a power of two n, the geometric sequence that starts at 2^(-8/n) and has that
    ratio: 8 heads get 1/2, 1/4, ..., 1/256. The paper trains only such n. For other n,
    the rule of the paper's code (ofirpress/attention_with_linear_biases,
    fairseq/models/transformer.py, `get_slopes`), which BLOOM's code follows (transformers 5.23.0,
    models/bloom/modeling_bloom.py, `_get_alibi_slopes`), built from the slopes of powers of
    two: then not in decreasing order. (An exercise asks for this rule, so its steps are
    left to the code and to tests/test_schemes.py.)
    """
    return _slopes(num_heads).to(dtype)


def _slopes(num_heads: int) -> torch.Tensor:
    closest = 2 ** int(math.floor(math.log2(num_heads)))
    exponents = torch.arange(1, closest + 1, dtype=torch.float64) * (8.0 / closest)
    if closest < num_heads:
        # 2c heads would have exponents 8k/(2c); the odd k are the ones between the c slopes above.
        odd = torch.arange(1, 2 * (num_heads - closest), 2, dtype=torch.float64) * (8.0 / (2 * closest))
        exponents = torch.cat([exponents, odd])
    return torch.exp2(-exponents)


@checked(num_heads=SIZE, max_sequence_length=SIZE, causal=FLAG, dtype=FLOAT_DTYPE,
         fits=("num_heads", "max_sequence_length", "max_sequence_length"))
def alibi_bias(*, num_heads: int, max_sequence_length: int, causal: bool = True,
               dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The bias ALiBi adds to the attention scores, shape (num_heads, L, L), before the softmax.

    Entry [h, i, j] (query i, key j) is `-slope_h * (i - j)` for j <= i: the further
    back a key, the larger the penalty, at a rate set per head. With `causal=True` (the
    paper's language models) a key after the query gets -inf, so the softmax gives it
    weight 0. The paper defines only this causal form. With `causal=False` the bias is
    `-slope_h * |i - j|`, this package's choice for attention without the causal mask (one
    of the changes suggested in issue 5 of ofirpress/attention_with_linear_biases):
    symmetric, it says how far a key is but not on which side.

    The paper's code (`TransformerDecoder` in its fairseq/models/transformer.py) adds `+slope_h * j` instead. That
    differs from `-slope_h * (i - j)` by `slope_h * i`, the same for every key of query i, so the softmax is unchanged.
    """
    length = max_sequence_length
    positions = position_ids(length=length).double()
    distance = positions[:, None] - positions[None, :]  # i - j: > 0 for keys before the query
    bias = _linear_bias(_slopes(num_heads), distance.abs())
    if causal:
        bias = bias.masked_fill(~causal_mask(sequence_length=length), float("-inf"))  # keys after the query
    return bias.to(dtype)


def linear_bias(slopes: torch.Tensor, distance: torch.Tensor) -> torch.Tensor:
    """ALiBi's bias, `-slope_h * distance`: slopes `(num_heads,)`, distance `(..., queries, keys)` (query position
    minus key position); shape `(..., num_heads, queries, keys)` once broadcast. The one ALiBi bias of the package:
    `alibi_bias` calls it with the distances of positions 0, 1, ..., a decoder with those of its position ids."""
    return _linear_bias(slopes, distance)


def _linear_bias(slopes: torch.Tensor, distance: torch.Tensor) -> torch.Tensor:
    return -slopes[:, None, None] * distance + 0.0  # + 0.0: no -0.0 where the distance is 0


# One word at every position: what each scheme lets position add to a score ------------------

SCORE_SCHEMES = ("sinusoidal", "rotary")
# Beyond this many positions the comparison is no longer something to look at, and the table grows.
MAX_SCORE_POSITION = 2**20


def same_word_scores(word: torch.Tensor, weights: ProjectionWeights, *, scheme: str, query_position: int,
                     offsets: Sequence[int], base: float = DEFAULT_BASE) -> torch.Tensor:
    """The score of one word at `query_position` with the same word at `query_position + k`, for each k in `offsets`.

    Only the positions differ, so the scores show what the scheme lets position add:

        sinusoidal   (word + PE[p]) W_Q W_K^T (word + PE[q])^T   (the encoding added to X)
        rotary       RoPE_p(word W_Q) . RoPE_q(word W_K)          (q and k rotated)

    with p = query_position and q = p + k. Computed in float64; a float64 tensor of
    len(offsets) scores. The scores are not divided by sqrt(d_k): the comparison is the same.
    """
    d_model = check_floating_tensor("word", word, ndim=(1,)).shape[0]
    instance_of(ProjectionWeights, "attention.projection_weights(...)'s ProjectionWeights")("weights", weights)
    if weights.W_Q.shape[0] != d_model or weights.W_K.shape != weights.W_Q.shape:
        raise ValueError(f"weights must map the word's d_model={d_model} features, got W_Q {tuple(weights.W_Q.shape)}")
    if one_of(SCORE_SCHEMES)("scheme", scheme) == "rotary" and weights.W_Q.shape[1] % 2:
        raise ValueError(f"rotary needs an even d_k to turn pairs of columns, got W_Q of shape {tuple(weights.W_Q.shape)}")
    query_position = check_size("query_position", query_position, minimum=0, maximum=MAX_SCORE_POSITION)
    # A key sits at query_position + k, which must be a position from 0 on.
    offsets = list_of(size(-query_position, MAX_SCORE_POSITION - query_position))("offsets", offsets)
    key_positions = torch.tensor(offsets, dtype=torch.int64) + query_position
    length = int(max(key_positions.max(), query_position)) + 1
    W_Q, W_K = weights.W_Q.to(torch.float64), weights.W_K.to(torch.float64)
    word = word.to(torch.float64)
    if scheme == "sinusoidal":
        rows = word + sinusoidal_encoding(max_sequence_length=length, d_model=d_model, base=base, dtype=torch.float64)
        return (rows[query_position] @ W_Q) @ (rows[key_positions] @ W_K).T
    queries = apply_rotary((word @ W_Q)[None], base=base, offset=query_position)[0]
    keys = apply_rotary((word @ W_K).expand(length, -1), base=base)[key_positions]
    return keys @ queries
