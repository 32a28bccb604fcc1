"""Generating one token at a time: a tiny decoder, its position ids, and the KV cache.

A decoder generates a token, appends it, and runs again. Only the new token's query is
needed, and the keys and values of the earlier tokens do not change (a causal layer never
lets them see later tokens), so they are kept: the KV cache. The new token then has to be
told its position: the number of tokens already in the cache (the `offset` that
`encoding.PositionalEncoding` and `schemes.apply_rotary` take). Forget it and the new token
sits at position 0 again.

`TinyDecoder` is a one-layer decoder: token embedding, a position scheme, one causal
multi-head self-attention layer with a residual connection, and a projection to
`vocab_size` logits. Each position scheme acts where the literature puts it:

    sinusoidal   the table of `encoding.PositionalEncoding`, row per position, added to X
    learned      `schemes.LearnedPositionalEmbedding`'s rows, added to X
    rotary       q and k rotated by their positions (RoPE, interleaved pairs, `schemes.rotary_angles`)
    alibi        `-slope_h * (query position - key position)` added to the scores (`schemes.alibi_slopes`),
                 the positions counted from the attention mask, as BLOOM does (transformers 5.23,
                 models/bloom/modeling_bloom.py, `build_alibi_tensor`: key positions
                 `(attention_mask.cumsum(-1) - 1) * attention_mask`); it reads no position ids, so there
                 is no offset to forget. BLOOM adds only `slope_h * key position`, shape
                 `(batch * num_heads, 1, key_length)`, and its docstring relies on the softmax not changing
                 when a row gets a constant added; this decoder adds the whole `-slope_h * (i - j)`

Its call mirrors Hugging Face transformers' decoders (`LlamaForCausalLM(ids, attention_mask=...,
position_ids=..., past_key_values=...)`): the attention mask covers the cached tokens and the
new ones (1 = a real token), and position ids left out are `offset + 0, 1, 2, ...` whatever the
mask says, as in transformers 5.23's `LlamaModel.forward` (models/llama/modeling_llama.py):
with left padding that puts the first real token at the number of pads, not at 0. Pass
`tokens.position_ids(attention_mask)` to count only the real tokens.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from ._validate import check_flag, check_size, check_str, check_table_fits, check_tensor, short
from .attention import merge_heads, multi_head_weights, split_heads
from .encoding import PositionalEncoding
from .schemes import LearnedPositionalEmbedding, alibi_slopes, rotary_angles
from .tokens import position_ids as mask_position_ids

__all__ = ["SCHEMES", "KVCache", "DecoderOutput", "TinyDecoder", "decode_with_cache"]

SCHEMES = ("sinusoidal", "learned", "rotary", "alibi")


class KVCache(NamedTuple):
    """What a decoder keeps of the tokens it has read: per layer, their keys (already rotated for RoPE) and values.

    keys, values: `(batch, num_heads, cached, head_dim)`; key_mask: `(batch, cached)` bool, True for a
    real token. `cached = keys.shape[-2]` is the offset: the position of the next token when there is
    no padding.
    """

    keys: torch.Tensor
    values: torch.Tensor
    key_mask: torch.Tensor


class DecoderOutput(NamedTuple):
    """logits `(batch, seq, vocab_size)`; scores and weights `(batch, num_heads, seq, cached + seq)` (scores before
    the mask, with ALiBi's bias); cache: the cache with this call's tokens appended."""

    logits: torch.Tensor
    scores: torch.Tensor
    weights: torch.Tensor
    cache: KVCache


class TinyDecoder(nn.Module):
    """Token embedding, a position scheme, one causal multi-head self-attention layer (+ residual), logits.

    Seeded: the same arguments give the same weights, without touching torch's global generator.
    W_Q, W_K, W_V, W_O are `attention.multi_head_weights(d_model=d_model, seed=seed)`. Call it as
    `model(ids, attention_mask=..., position_ids=..., cache=...)`; see `forward`.
    """

    def __init__(self, *, scheme: str, vocab_size: int, d_model: int = 16, num_heads: int = 4,
                 max_sequence_length: int = 64, seed: int = 0) -> None:
        super().__init__()
        self.scheme = check_str("scheme", scheme)
        if scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
        self.vocab_size = check_size("vocab_size", vocab_size, maximum=2**20)
        self.d_model = check_size("d_model", d_model, maximum=2**12)
        self.num_heads = check_size("num_heads", num_heads, maximum=d_model)
        if d_model % num_heads or (scheme == "rotary" and (d_model // num_heads) % 2):
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}" +
                             (" into heads of an even head_dim (RoPE turns pairs)" if scheme == "rotary" else ""))
        self.head_dim = d_model // num_heads
        self.max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=2**16)
        seed = check_size("seed", seed, minimum=0, maximum=2**32 - 1)
        # W_E, W_out and a position table: (2 vocab_size + max_sequence_length) rows of d_model.
        check_table_fits((2 * self.vocab_size + self.max_sequence_length, self.d_model), torch.float32,
                         arguments="vocab_size, max_sequence_length or d_model")
        self.attention_weights = nn.ParameterList(multi_head_weights(d_model=self.d_model, seed=seed))
        # W_E and W_out continue multi_head_weights' generator past its 4 matrices, so no two matrices share draws.
        # (A seed of its own would not do: torch's CPU generator keeps only the low 32 bits of a seed.)
        generator = torch.Generator().manual_seed(seed)
        torch.randn(4 * self.d_model * self.d_model, generator=generator)
        self.W_E = nn.Parameter(torch.randn(self.vocab_size, self.d_model, generator=generator))
        # 1/d_model rather than 1/sqrt(d_model): logits of about 1, whose float32 rounding stays below 1e-6.
        self.W_out = nn.Parameter(torch.randn(self.d_model, self.vocab_size, generator=generator) / self.d_model)
        self.position_embedding = None
        if scheme == "sinusoidal":
            self.position_embedding = PositionalEncoding(d_model=self.d_model, max_sequence_length=self.max_sequence_length)
        elif scheme == "learned":
            with torch.random.fork_rng(devices=[]):  # the table's own seed, the global generator left as it was
                torch.manual_seed(seed)
                self.position_embedding = LearnedPositionalEmbedding(max_sequence_length=self.max_sequence_length,
                                                                     d_model=self.d_model)
                # 0.02 (GPT-2's initial scale) would make positions nearly invisible next to unit-size embeddings.
                self.position_embedding.weight.data.normal_(0.0, 1.0)
        if scheme == "alibi":
            self.register_buffer("slopes", alibi_slopes(num_heads=self.num_heads), persistent=False)

    def extra_repr(self) -> str:
        return (f"scheme={self.scheme!r}, vocab_size={self.vocab_size}, d_model={self.d_model}, "
                f"num_heads={self.num_heads}, max_sequence_length={self.max_sequence_length}")

    def forward(self, ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None, cache: KVCache | None = None) -> DecoderOutput:
        """Logits for every token of ids `(batch, seq)`, reading the cache's tokens before them.

        attention_mask: `(batch, cached + seq)` 0/1 (or bool): the cached tokens' and the new ones'; left out,
        the cache's own and 1 for every new token. position_ids: `(batch, seq)` or `(seq,)`; left out,
        `cached + 0, 1, ..., seq - 1` (the offset); ALiBi does not read them (it counts the mask).
        A query looks at the real keys at or before it, and at itself: so a padded query, which with left
        padding has no real key before it, still has one key (its output means nothing and is not used).
        """
        ids = self._check_ids(ids)
        batch, seq = ids.shape
        offset = 0 if cache is None else self._check_cache(cache, batch)
        mask = self._check_mask(attention_mask, cache, batch, offset, seq)
        positions = self._check_positions(position_ids, batch, offset, seq)
        x = self.W_E[ids]
        if self.position_embedding is not None:
            # One row per position id: the module's forward(x, offset=k) adds rows k, k + 1, ... (a row per token here).
            embedding = self.position_embedding
            rows = embedding.table if self.scheme == "sinusoidal" else embedding.weight
            x = x + rows[positions].to(x.dtype)
        W_Q, W_K, W_V, W_O = self.attention_weights
        q, k, v = (split_heads(x @ W, num_heads=self.num_heads) for W in (W_Q, W_K, W_V))
        if self.scheme == "rotary":
            q, k = _rotate(q, positions), _rotate(k, positions)
        if cache is not None:
            k, v = torch.cat([cache.keys, k], dim=-2), torch.cat([cache.values, v], dim=-2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.scheme == "alibi":
            key_positions = mask_position_ids(mask)  # (batch, cached + seq): each real token's place among the real ones
            query_positions = key_positions[:, offset:]
            distance = (query_positions[:, None, :, None] - key_positions[:, None, None, :]).to(scores.dtype)
            scores = scores - self.slopes[None, :, None, None] * distance
        query_slot = torch.arange(offset, offset + seq)[:, None]
        key_slot = torch.arange(offset + seq)[None, :]
        visible = (key_slot <= query_slot) & mask[:, None, None, :]
        visible = visible | (key_slot == query_slot)  # a padded query sees itself: no row without a key
        weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
        hidden = x + merge_heads(weights @ v) @ W_O
        new_cache = KVCache(k, v, mask)
        return DecoderOutput(hidden @ self.W_out, scores, weights, new_cache)

    def _check_ids(self, ids: object) -> torch.Tensor:
        check_tensor("ids", ids, ndim=(2,))
        if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(f"ids must be an integer tensor of token ids, got dtype {ids.dtype}")
        if ids.shape[1] == 0:
            raise ValueError(f"ids must hold at least one token per row, got shape {tuple(ids.shape)}")
        if ids.numel() and not bool(((ids >= 0) & (ids < self.vocab_size)).all()):
            raise ValueError(f"ids must lie in [0, vocab_size={self.vocab_size}), got values from {int(ids.min())} "
                             f"to {int(ids.max())}")
        return ids.long()

    def _check_cache(self, cache: object, batch: int) -> int:
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache (the cache of an earlier call) or None, got {short(cache)}")
        cached = cache.keys.shape[-2] if isinstance(cache.keys, torch.Tensor) and cache.keys.dim() == 4 else -1
        expected = (batch, self.num_heads, cached, self.head_dim)
        if (not all(isinstance(t, torch.Tensor) for t in cache) or tuple(cache.keys.shape) != expected
                or cache.values.shape != cache.keys.shape or tuple(cache.key_mask.shape) != (batch, cached)):
            raise ValueError(f"cache must come from this model on a batch of {batch} (keys {expected}), "
                             f"got keys of shape {tuple(getattr(cache.keys, 'shape', ()))}")
        return cache.keys.shape[-2]

    def _check_mask(self, attention_mask: object, cache: KVCache | None, batch: int, offset: int, seq: int) -> torch.Tensor:
        if attention_mask is None:
            new = torch.ones(batch, seq, dtype=torch.bool)
            return new if cache is None else torch.cat([cache.key_mask, new], dim=-1)
        mask_position_ids(attention_mask)  # checks a 0/1 mask of bool or integers
        if tuple(attention_mask.shape) != (batch, offset + seq):
            raise ValueError(f"attention_mask must be (batch, cached + seq) = {(batch, offset + seq)}: the cached tokens' "
                             f"and the new ones', got shape {tuple(attention_mask.shape)}")
        return attention_mask.bool()

    def _check_positions(self, position_ids: object, batch: int, offset: int, seq: int) -> torch.Tensor:
        if position_ids is None:
            return (torch.arange(seq) + offset).expand(batch, seq)
        check_tensor("position_ids", position_ids, ndim=(1, 2))
        if position_ids.is_floating_point() or position_ids.is_complex() or position_ids.dtype == torch.bool:
            raise TypeError(f"position_ids must be an integer tensor, got dtype {position_ids.dtype}")
        if position_ids.shape[-1] != seq or (position_ids.dim() == 2 and position_ids.shape[0] != batch):
            raise ValueError(f"position_ids must be (batch, seq) = {(batch, seq)} or (seq,), got shape "
                             f"{tuple(position_ids.shape)}")
        limit = self.max_sequence_length if self.position_embedding is not None else 2**24  # float32 counts whole numbers to 2^24
        if position_ids.numel() and not bool(((position_ids >= 0) & (position_ids < limit)).all()):
            raise ValueError(f"position_ids must lie in [0, {limit}) for scheme {self.scheme!r} "
                             f"(max_sequence_length={self.max_sequence_length}), got values from "
                             f"{int(position_ids.min())} to {int(position_ids.max())}")
        return position_ids.long().expand(batch, seq)


def _rotate(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """RoPE with interleaved pairs at any positions: x `(batch, heads, seq, d)`, positions `(batch, seq)`.

    `schemes.apply_rotary(x, offset=k)` for positions k, k + 1, ...; here each token has its own
    (a left-padded row starts later). Angles in float64 from `schemes.rotary_angles`, rounded once.
    """
    d = x.shape[-1]
    table = rotary_angles(max_sequence_length=int(positions.max()) + 1, d=d)
    angles = table[positions][:, None]  # (batch, 1, seq, d/2): the same angles for every head
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def decode_with_cache(model: TinyDecoder, ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                      prefill: int = 1, forget_offset: bool = False) -> torch.Tensor:
    """The logits of every token of ids, computed as generation does: the first `prefill` tokens in one call,
    then one token per call, each reading the cache of the tokens before it.

    The position of each new token is the number of real tokens before it: `tokens.position_ids` of
    the attention mask so far (without a mask, the number of tokens cached: the offset). With
    `forget_offset=True`, each call starts again at position 0, the bug this function is there to show.
    Returns `(batch, seq, vocab_size)`, to compare with `model(ids, ...).logits`, the full pass.
    """
    if not isinstance(model, TinyDecoder):
        raise TypeError(f"model must be a posenc.generation.TinyDecoder, got {short(model)}")
    ids = model._check_ids(ids)
    batch, seq = ids.shape
    prefill = check_size("prefill", prefill, maximum=seq)
    forget_offset = check_flag("forget_offset", forget_offset)
    mask = model._check_mask(attention_mask, None, batch, 0, seq)
    positions = mask_position_ids(mask)
    logits, cache = [], None
    for start, end in [(0, prefill)] + [(t, t + 1) for t in range(prefill, seq)]:
        chunk = torch.arange(end - start) if forget_offset else positions[:, start:end]
        output = model(ids[:, start:end], attention_mask=mask[:, :end], position_ids=chunk, cache=cache)
        logits.append(output.logits)
        cache = output.cache
    return torch.cat(logits, dim=1)
