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

from typing import NamedTuple

import torch
from torch import nn

from ._validate import (
    check_decoder,
    check_decoder_cache,
    check_decoder_ids,
    check_decoder_mask,
    check_decoder_positions,
    check_flag,
    check_size,
    short,
)
from .attention import attend, causal_mask, merge_heads, multi_head_weights, split_heads
from .encoding import PositionalEncoding
from .positions import position_ids as mask_position_ids
from .schemes import LearnedPositionalEmbedding, alibi_slopes, linear_bias, rotary_angles, rotate_pairs

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
        self.scheme, self.vocab_size, self.d_model, self.num_heads, self.max_sequence_length, seed = check_decoder(
            scheme, SCHEMES, vocab_size, d_model, num_heads, max_sequence_length, seed)
        self.head_dim = d_model // num_heads
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
        ids = check_decoder_ids(ids, self.vocab_size)
        batch, seq = ids.shape
        offset = 0 if cache is None else check_decoder_cache(cache, KVCache, batch, self.num_heads, self.head_dim)
        mask = check_decoder_mask(attention_mask, cache, batch, offset, seq)
        positions = check_decoder_positions(position_ids, batch, offset, seq, self.scheme, self.max_sequence_length,
                                            self.position_embedding is not None)
        x = self.W_E[ids]
        if self.position_embedding is not None:
            # One row per position id: the module's forward(x, offset=k) adds rows k, k + 1, ... (a row per token here).
            embedding = self.position_embedding
            rows = embedding.table if self.scheme == "sinusoidal" else embedding.weight
            x = x + rows[positions].to(x.dtype)
        W_Q, W_K, W_V, W_O = self.attention_weights
        q, k, v = (split_heads(x @ W, num_heads=self.num_heads) for W in (W_Q, W_K, W_V))
        if self.scheme == "rotary":  # each token turned by its own position id (a left-padded row starts later)
            angles = rotary_angles(max_sequence_length=int(positions.max()) + 1, d=self.head_dim)[positions][:, None]
            q, k = rotate_pairs(q, angles), rotate_pairs(k, angles)
        if cache is not None:
            k, v = torch.cat([cache.keys, k], dim=-2), torch.cat([cache.values, v], dim=-2)
        bias = None
        if self.scheme == "alibi":
            key_positions = mask_position_ids(mask)  # (batch, cached + seq): each real token's place among the real ones
            query_positions = key_positions[:, offset:]
            distance = query_positions[:, None, :, None] - key_positions[:, None, None, :]
            bias = linear_bias(self.slopes, distance.to(x.dtype))
        # A query looks at the real keys at or before it, and at itself: a padded query gets a row with a key.
        keep = causal_mask(sequence_length=offset + seq)[offset:] & mask[:, None, None, :]
        keep = keep | torch.eye(offset + seq, dtype=torch.bool)[offset:]
        output, weights, scores = attend(q, k, v, bias=bias, keep=keep)
        hidden = x + merge_heads(output) @ W_O
        return DecoderOutput(hidden @ self.W_out, scores, weights, KVCache(k, v, mask))


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
    ids = check_decoder_ids(ids, model.vocab_size)
    batch, seq = ids.shape
    prefill = check_size("prefill", prefill, maximum=seq)
    forget_offset = check_flag("forget_offset", forget_offset)
    mask = check_decoder_mask(attention_mask, None, batch, 0, seq)
    positions = mask_position_ids(mask)
    logits, cache = [], None
    for start, end in [(0, prefill)] + [(t, t + 1) for t in range(prefill, seq)]:
        chunk = mask_position_ids(length=end - start) if forget_offset else positions[:, start:end]
        output = model(ids[:, start:end], attention_mask=mask[:, :end], position_ids=chunk, cache=cache)
        logits.append(output.logits)
        cache = output.cache
    return torch.cat(logits, dim=1)
