"""A decoder that generates one token at a time: position ids, the attention mask and the KV cache.

    TinyDecoder         token embedding, a position scheme, one causal multi-head self-attention layer
                        (+ residual), logits; called as transformers' decoders are:
                        `model(ids, attention_mask=..., position_ids=..., cache=...)`
    KVCache             what it keeps of the tokens it has read: per layer, their keys and values
    decode_with_cache   the logits of every token, computed as generation does: one token per call
    packing_differences one attention head on a packed row, four ways, against each document alone
    difference_text     how a largest difference is printed: "equal" below 1e-5, else two decimals

Shapes in the comments: B batch, T new tokens, P cached tokens (the offset), C d_model, H heads, D head_dim,
V vocab_size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import nn

from .._checks import (
    FLAG,
    SIZE,
    check_size,
    check_table_fits,
    check_tensor,
    checked,
    instance_of,
    list_of,
    one_of,
    real,
    short,
    size,
)
from .._provenance import marked
from ..attention import (
    attend,
    attention_weights,
    causal_mask,
    document_ids_from_lengths,
    merge_heads,
    multi_head_weights,
    packed_mask,
    packed_position_ids,
    project_qkv,
    projection_weights,
    scaled_dot_product_scores,
    split_heads,
)
from ..builder import sinusoidal_encoding
from ..embedding import embedding_matrix
from ..encoding import PositionalEncoding
from ..positions import check_attention_mask
from ..positions import position_ids as positions_of
from ..schemes import LearnedPositionalEmbedding, alibi_slopes, linear_bias, rotary_angles, rotate_pairs

__all__ = ["DECODER_SCHEMES", "KVCache", "DecoderOutput", "TinyDecoder", "decode_with_cache", "packing_differences",
           "packing_table", "difference_text", "difference_table"]

# Each scheme that gives positions (what the decoder shows is how each is told one).
DECODER_SCHEMES = ("sinusoidal", "learned", "rotary", "alibi")


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


def _check_attention_mask(value: object, shape: tuple[int, int]) -> torch.Tensor:
    """A tokenizer's attention_mask of `shape` (1 for a real token, 0 for padding, bool or integer), as bool."""
    if tuple(check_attention_mask(value, ndim=(1, 2)).shape) != shape:
        raise ValueError(f"attention_mask must be (batch, cached + seq) = {shape}, got {short(value)}")
    return value.bool()


class TinyDecoder(nn.Module):
    """Token embedding, a position scheme, one causal multi-head self-attention layer (+ residual), logits.

    Seeded: the same arguments give the same weights, without touching torch's global generator.
    W_Q, W_K, W_V, W_O are `attention.multi_head_weights(d_model=d_model, seed=seed)`. Call it as
    `model(ids, attention_mask=..., position_ids=..., cache=...)`; see `forward`.
    """

    @checked(scheme=one_of(DECODER_SCHEMES), vocab_size=size(1, 2**20), d_model=size(1, 2**12), num_heads=size(1, 2**12),
             max_sequence_length=size(1, 2**16), seed=size(0, 2**32 - 1))
    def __init__(self, *, scheme: str, vocab_size: int, d_model: int = 16, num_heads: int = 4,
                 max_sequence_length: int = 64, seed: int = 0) -> None:
        super().__init__()
        if d_model % num_heads or (scheme == "rotary" and (d_model // num_heads) % 2):  # RoPE turns pairs
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model} (into even heads for rotary)")
        # W_E, W_out and a position table: (2 vocab_size + max_sequence_length) rows of d_model.
        check_table_fits((2 * vocab_size + max_sequence_length, d_model), torch.float32, arguments="the sizes")
        self.scheme, self.vocab_size, self.d_model, self.num_heads = scheme, vocab_size, d_model, num_heads
        self.max_sequence_length = max_sequence_length
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
        ids = self._check_ids(ids)
        batch, seq = ids.shape  # B, T
        offset = 0 if cache is None else self._check_cache(cache, batch)  # P
        if attention_mask is None:  # the cache's own mask, and 1 for every new token
            new = torch.ones(batch, seq, dtype=torch.bool)
            mask = new if cache is None else torch.cat([cache.key_mask, new], dim=-1)  # (B, P + T)
        else:
            mask = _check_attention_mask(attention_mask, (batch, offset + seq))
        if position_ids is None:  # offset + 0, 1, ..., T - 1: counted on from the tokens cached
            positions = positions_of(length=seq, offset=offset).expand(batch, seq)
        else:
            positions = self._check_positions(position_ids, batch, seq)  # (B, T)
        x = self.W_E[ids]  # (B, T, C)
        if self.position_embedding is not None:
            # One row per position id: the module's forward(x, offset=k) adds rows k, k + 1, ... (a row per token here).
            embedding = self.position_embedding
            rows = embedding.table if self.scheme == "sinusoidal" else embedding.weight
            x = x + rows[positions].to(x.dtype)
        W_Q, W_K, W_V, W_O = self.attention_weights
        q, k, v = (split_heads(x @ W, num_heads=self.num_heads) for W in (W_Q, W_K, W_V))  # each (B, H, T, D)
        if self.scheme == "rotary":  # each token turned by its own position id (a left-padded row starts later)
            angles = rotary_angles(max_sequence_length=int(positions.max()) + 1, d=self.head_dim)[positions][:, None]
            q, k = rotate_pairs(q, angles), rotate_pairs(k, angles)
        if cache is not None:
            k, v = torch.cat([cache.keys, k], dim=-2), torch.cat([cache.values, v], dim=-2)  # (B, H, P + T, D)
        bias = None
        if self.scheme == "alibi":
            key_positions = positions_of(mask)  # (B, P + T): each real token's place among the real ones
            query_positions = key_positions[:, offset:]
            distance = query_positions[:, None, :, None] - key_positions[:, None, None, :]
            bias = linear_bias(self.slopes, distance.to(x.dtype))  # (B, H, T, P + T)
        # A query looks at the real keys at or before it, and at itself: a padded query gets a row with a key.
        keep = causal_mask(sequence_length=offset + seq)[offset:] & mask[:, None, None, :]
        keep = keep | torch.eye(offset + seq, dtype=torch.bool)[offset:]
        output, weights, scores = attend(q, k, v, bias=bias, keep=keep)  # (B, H, T, D), (B, H, T, P + T) twice
        hidden = x + merge_heads(output) @ W_O  # (B, T, C)
        return DecoderOutput(hidden @ self.W_out, scores, weights, KVCache(k, v, mask))

    def _check_ids(self, ids: object) -> torch.Tensor:
        check_tensor("ids", ids, ndim=(2,), kind="integer")
        if ids.shape[1] == 0 or not bool(((ids >= 0) & (ids < self.vocab_size)).all()):
            raise ValueError(f"ids must be token ids in [0, vocab_size={self.vocab_size}), one or more a row, got {short(ids)}")
        return ids.long()

    def _check_cache(self, cache: object, batch: int) -> int:
        """The number of tokens the cache holds (the offset), once it is known to come from this model and batch."""
        error = ValueError if isinstance(cache, KVCache) else TypeError  # a cache of another batch, or no cache at all
        if error is TypeError or tuple(cache.key_mask.shape) != (batch, cache.keys.shape[2]):
            raise error(f"cache must be None or the KVCache of an earlier call on a batch of {batch}, got {short(cache)}")
        return cache.keys.shape[2]

    def _check_positions(self, position_ids: object, batch: int, seq: int) -> torch.Tensor:
        """`(batch, seq)` position ids, once they are known to fit: a learned or sinusoidal table has a row for each."""
        limit = self.max_sequence_length if self.position_embedding is not None else 2**24  # float32's whole numbers
        allowed = f"{(batch, seq)} or {(seq,)} in [0, {limit}) for {self.scheme}"
        inside = (check_tensor("position_ids", position_ids, ndim=(1, 2), kind="integer") >= 0) & (position_ids < limit)
        if tuple(position_ids.shape) not in ((seq,), (batch, seq)) or not bool(inside.all()):
            raise ValueError(f"position_ids must be {allowed}, got {short(position_ids)}")
        return position_ids.long().expand(batch, seq)


@marked("decoder.decode_with_cache")
@checked(model=instance_of(TinyDecoder), forget_offset=FLAG)
def decode_with_cache(model: TinyDecoder, ids: torch.Tensor, *, attention_mask: torch.Tensor | None = None,
                      prefill: int = 1, forget_offset: bool = False,
                      position_ids: torch.Tensor | None = None) -> torch.Tensor:
    """The logits of every token of ids, computed as generation does: the first `prefill` tokens in one call,
    then one token per call, each reading the cache of the tokens before it.

    Each new token gets the position it has when its row runs alone, without padding: `positions.position_ids`
    of the attention mask so far (without a mask, the number of tokens cached: the offset). With
    `forget_offset=True`, each call starts again at position 0, the bug this function is there to show.
    `position_ids` ((batch, seq) or (seq,)) gives each token the position it is fed with instead, right or
    wrong: a decoding loop's own positions, to compare with the full pass (not with `forget_offset=True`).
    Returns `(batch, seq, vocab_size)`, to compare with `model(ids, ...).logits`, the full pass.
    """
    ids = model._check_ids(ids)
    batch, seq = ids.shape
    prefill = check_size("prefill", prefill, maximum=seq)
    if attention_mask is None:
        mask = torch.ones(batch, seq, dtype=torch.bool)
    else:
        mask = _check_attention_mask(attention_mask, (batch, seq))
    if position_ids is None:
        positions = positions_of(mask)  # (B, T): each token's place among the real tokens
    elif forget_offset:
        raise ValueError("give position_ids or forget_offset=True, not both: forgetting the offset sets the positions")
    else:
        positions = model._check_positions(position_ids, batch, seq)
    logits, cache = [], None
    for start, end in [(0, prefill)] + [(t, t + 1) for t in range(prefill, seq)]:
        chunk = positions_of(length=end - start) if forget_offset else positions[:, start:end]
        output = model(ids[:, start:end], attention_mask=mask[:, :end], position_ids=chunk, cache=cache)
        logits.append(output.logits)
        cache = output.cache
    return torch.cat(logits, dim=1)


@checked(documents=list_of(list_of(size(minimum=0))), vocab_size=SIZE, fits=("vocab_size", 16))
def packing_differences(documents: Sequence[Sequence[int]], *, vocab_size: int) -> dict[str, dict[str, dict[str, float]]]:
    """One attention head on a packed row, run four ways, each against the documents run alone.

    documents: each document's token ids, packed one after the other in one row. The head (d_model 16, seed 0)
    has the sinusoid added to X ("sinusoid") or turns Q and K ("RoPE"). Its positions are "restarted" at each
    document or counted "along the row"; its mask is the "plain causal" one or the document mask, `packed_mask`.
    Returns `{scheme: {positions: {mask: difference}}}`: the largest difference of any document's outputs from
    its outputs alone (below 1e-5, rounding, when every document is kept apart).
    """
    if max(max(document) for document in documents) >= vocab_size:
        raise ValueError(f"documents must hold token ids below vocab_size={vocab_size}, got {short(documents)}")
    d_model, seq = 16, sum(len(document) for document in documents)
    W_E, weights = embedding_matrix(vocab_size=vocab_size, d_model=d_model), projection_weights(d_model=d_model)
    table = sinusoidal_encoding(max_sequence_length=seq, d_model=d_model)
    angles = rotary_angles(max_sequence_length=seq, d=d_model)

    def head(scheme: str, ids: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        q, k, v = project_qkv(W_E[ids] + (table[positions] if scheme == "sinusoid" else 0), weights)
        if scheme == "RoPE":  # each token's query and key turned by its own position
            q, k = rotate_pairs(q, angles[positions]), rotate_pairs(k, angles[positions])
        return attention_weights(scaled_dot_product_scores(q, k), mask=mask) @ v

    document_ids = document_ids_from_lengths([len(document) for document in documents])
    ids = torch.tensor([token for document in documents for token in document])
    positions = {"restarted": packed_position_ids(document_ids), "along the row": torch.arange(seq)}
    masks = {"plain causal": causal_mask(sequence_length=seq), "document mask": packed_mask(document_ids)}
    differences = {}
    for scheme in ("sinusoid", "RoPE"):
        alone = torch.cat([head(scheme, torch.tensor(document), torch.arange(len(document)),
                                causal_mask(sequence_length=len(document))) for document in documents])
        differences[scheme] = {name: {mask_name: float((head(scheme, ids, row, mask) - alone).abs().max())
                                      for mask_name, mask in masks.items()} for name, row in positions.items()}
    return differences


@checked(difference=real(0))
def difference_text(difference: float) -> str:
    """A largest difference of two results as printed: "equal" below 1e-5 (float32 rounding), else two decimals."""
    return "equal" if difference < 1e-5 else f"{difference:.2f}"


def packing_table(by_positions: dict[str, dict[str, float]], scheme: str) -> str:
    """One scheme's entry of `packing_differences` as a printed table: a row per kind of positions, a column per mask,
    each difference as `difference_text` gives it."""
    if not isinstance(scheme, str) or not isinstance(by_positions, dict) or not all(
            isinstance(row, dict) and set(row) == {"plain causal", "document mask"} for row in by_positions.values()):
        raise TypeError(f"by_positions must be one scheme's entry of packing_differences, got {short(by_positions)}")
    lines = [f"{scheme:<24}{'plain causal':>15}{'document mask':>16}"]
    for name, row in by_positions.items():
        lines.append(f"positions {name:<14}{difference_text(row['plain causal']):>15}"
                     f"{difference_text(row['document mask']):>16}")
    return "\n".join(lines)


def difference_table(differences: dict[str, dict[str, float]]) -> str:
    """Largest differences as a printed table: a row per outer key, a column per inner key (the same in every row),
    each entry as `difference_text` gives it, right-aligned under its column's name."""
    rows = list(differences.values()) if isinstance(differences, dict) else []
    if not rows or not all(isinstance(row, dict) and list(row) == list(rows[0]) for row in rows):
        raise TypeError(f"differences must map each row name to the same columns of differences, got {short(differences)}")
    label = max(len(str(name)) for name in differences) + 2
    widths = [max(len(str(column)), 5) + 3 for column in rows[0]]
    lines = [" " * label + "".join(f"{column:>{w}}" for column, w in zip(rows[0], widths))]
    for name, row in differences.items():
        lines.append(f"{name:<{label}}" + "".join(f"{difference_text(value):>{w}}" for value, w in zip(row.values(), widths)))
    return "\n".join(lines)
