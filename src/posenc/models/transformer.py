"""The tiny Transformer: embedding, pre-norm attention blocks, a read-out, and one position scheme.

    Settings          one experiment's sizes (the defaults train in a few seconds on one CPU thread)
    Attention         multi-head self-attention with the scheme: "rotary" turns the queries and keys,
                      "alibi" adds its bias to the scores; then `attention.attend`, the package's one core
    TinyTransformer   token ids -> embeddings (+ the "learned" or "sinusoidal" table) -> blocks -> logits

Shapes in the comments: B batch, T sequence, C d_model, H heads, D head_dim, V vocab_size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .._checks import (
    BASE,
    check_flag,
    check_size,
    check_table_fits,
    check_tensor,
    checked,
    instance_of,
    one_of,
    optional_size,
    real,
    short,
)
from ..attention import attend, causal_mask, merge_heads, split_heads
from ..builder import DEFAULT_BASE
from ..encoding import PositionalEncoding
from ..rope_scaling import rope_frequencies
from ..schemes import LearnedPositionalEmbedding, alibi_bias, apply_rotary

__all__ = ["SCHEMES", "Settings", "TinyTransformer"]

SCHEMES = ("none", "learned", "sinusoidal", "rotary", "alibi")
# Far larger than any sequence here: the formula-based schemes have no real limit.
FORMULA_LENGTH = 4096


def _check_fields(settings: object, sizes: tuple) -> None:
    """Each (field, minimum, maximum) of a settings dataclass, in order; a minimum may name an earlier field."""
    for name, low, high in sizes:
        low = getattr(settings, low) if isinstance(low, str) else low
        check_size(name, getattr(settings, name), minimum=low, maximum=high)


# Each size of `Settings`: (field, minimum, maximum); a minimum may name an earlier field.
_SETTINGS_SIZES = (("vocab_size", 2, 1000), ("shortest", 2, 512), ("longest", "shortest", 512), ("d_model", 2, 512),
                   ("num_heads", 1, 64), ("num_layers", 1, 12), ("steps", 1, 100_000), ("batch_size", 1, 4096),
                   ("seed", 0, 2**63 - 1))


def _settings_or_default(cls: type):
    """The rule for a `settings` argument: an instance of `cls`, or None for the defaults `cls()`."""
    what = f"a {cls.__module__}.{cls.__qualname__} or None"
    return lambda name, value: cls() if value is None else instance_of(cls, what)(name, value)


@dataclass(frozen=True)
class Settings:
    """One experiment's sizes. The defaults train a model in a few seconds on one CPU thread."""

    vocab_size: int = 10
    shortest: int = 8          # training lengths are drawn from shortest..longest
    longest: int = 16
    d_model: int = 32
    num_heads: int = 4
    num_layers: int = 2
    steps: int = 250
    batch_size: int = 32
    learning_rate: float = 3e-3
    causal: bool = False       # True: every position sees only itself and earlier ones (a decoder)
    scale_embeddings: bool = True  # token embeddings times sqrt(d_model): "Attention Is All You Need", section 3.4
    seed: int = 0

    def __post_init__(self) -> None:
        _check_fields(self, _SETTINGS_SIZES)
        for flag in ("causal", "scale_embeddings"):
            check_flag(flag, getattr(self, flag))
        if self.d_model % self.num_heads or (self.d_model // self.num_heads) % 2:  # rotary turns pairs of columns
            raise ValueError(f"d_model must be num_heads times an even head size, got {self.d_model} and {self.num_heads}")
        real(0, 1, low_open=True, high_open=True)("learning_rate", self.learning_rate)


class Attention(nn.Module):
    """Multi-head self-attention with one position scheme, as the tiny models' blocks use it.

    `forward` is written to be read (a notebook prints it): the queries, keys and values
    of every head, then the two places a scheme can act inside attention, then `attention.attend`, the
    package's one attention core. "rotary" rotates the queries and keys by their positions (RoPE,
    Su et al. 2021); "alibi" adds `-m * distance` to the scores (Press et al. 2022). With `causal=True`
    no query sees a key after it. The attention weights of the last call, (batch, num_heads, seq, seq),
    are kept in `last_weights` (what `training.attention_map` reads).

    RoPE's `frequencies` are numbers the layer holds (rotary_dim // 2 angles per position, from
    `rope_scaling.rope_frequencies`; plain RoPE's base^(-2i/rotary_dim) until a rule replaces them, as
    `copy_task.stretched` does). They turn the first `rotary_dim` columns of each query and key (all of
    them by default); the other columns pass unchanged (partial RoPE). `attention_factor` multiplies the
    turned columns, as transformers multiplies cos and sin by YaRN's factor (`LlamaRotaryEmbedding.forward`),
    so that the part of each score RoPE touches grows by its square (DeepSeek-V3's reference code instead
    multiplies its whole softmax scale by the square, the columns without RoPE too; with the whole head
    turned the two agree). `head_dim` (default d_model // num_heads) may make the heads wider.

    A layer of `TinyTransformer`, which checks its arguments: this one trusts them.
    """

    def __init__(self, *, scheme: str, d_model: int, num_heads: int, causal: bool, head_dim: int | None = None,
                 rotary_dim: int | None = None, base: float = DEFAULT_BASE) -> None:
        super().__init__()
        head_dim = d_model // num_heads if head_dim is None else head_dim
        self.scheme, self.d_model, self.num_heads, self.causal = scheme, d_model, num_heads, causal
        self.rotary_dim = head_dim if rotary_dim is None else rotary_dim
        self.qkv = nn.Linear(d_model, 3 * num_heads * head_dim)  # W_Q, W_K and W_V side by side: one product for all
        self.out = nn.Linear(num_heads * head_dim, d_model)
        self.frequencies = rope_frequencies(head_dim=self.rotary_dim, base=base) if scheme == "rotary" else None
        self.attention_factor = 1.0
        self.last_weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.shape[1]  # x: (B, T, C)
        q, k, v = split_heads(self.qkv(x), num_heads=3 * self.num_heads).chunk(3, dim=1)  # each (B, H, T, D)
        if self.scheme == "rotary":  # RoPE: turn every query and key by an angle that grows with its position
            q, k = self.rotate(q), self.rotate(k)
        bias = None
        if self.scheme == "alibi":  # ALiBi: a penalty on each score, growing with the distance to the key
            bias = alibi_bias(num_heads=self.num_heads, max_sequence_length=length, causal=self.causal)  # (H, T, T)
        keep = causal_mask(sequence_length=length) if self.causal else None  # a decoder: no later key
        output, weights, _ = attend(q, k, v, bias=bias, keep=keep)  # (B, H, T, D), (B, H, T, T)
        self.last_weights = weights.detach()
        return self.out(merge_heads(output))  # (B, T, H * D) -> (B, T, C)

    def rotate(self, x: torch.Tensor) -> torch.Tensor:
        """RoPE with this layer's frequencies on the first rotary_dim columns of each head, times its attention factor."""
        x = apply_rotary(x, frequencies=self.frequencies, rotary_dim=self.rotary_dim)
        if self.attention_factor != 1.0:  # YaRN: the turned columns times its attention factor
            scale = torch.ones(x.shape[-1])
            scale[: self.rotary_dim] = self.attention_factor
            x = x * scale
        return x


class _Block(nn.Module):
    """A pre-norm Transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, d_model: int, **attention: object) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attention = Attention(d_model=d_model, **attention)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, C) -> (B, T, C)
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """Embedding, a few pre-norm attention blocks and a linear read-out, with one position scheme.

    "none", "learned" and "sinusoidal" act on the embeddings X (`embed`: the table is
    added before the first block); "rotary" rotates the queries and keys in every block;
    "alibi" adds its bias to the scores in every block (`Attention.forward`). A learned
    table has `settings.longest` rows: the longest input it was trained on.

    Token embeddings start small: normal, std 0.02, as OpenAI's GPT-2 draws its token
    table (`wte` in openai/gpt-2, src/model.py, `model`). With `settings.scale_embeddings`
    (the default) they are multiplied by sqrt(d_model), as "Attention Is All You Need"
    does (section 3.4). Neither source does both: GPT-2 adds its tables unscaled, and the
    paper's code (tensor2tensor, `get_weights` in layers/modalities.py) starts the token
    table with std d_model ** -0.5, so that its scaled rows are about sqrt(d_model) long.
    Here a scaled row is about 0.02 * d_model long (0.64 at d_model 32), unscaled 0.02 *
    sqrt(d_model) (0.11), against sqrt(d_model / 2) = 4 for a row of the sinusoidal table:
    a small word next to a large position, the balance the live-training notebook varies.

    Every scheme draws the same numbers for the same seed: the token table, the blocks
    and the read-out first, in that order, and a learned position table last, so that
    the models differ only in their position scheme.

    `head_dim`, `rotary_dim` and `base` shape every block's `Attention` (wider heads, partial
    RoPE, RoPE's base): the copy task's model (`copy_task.copy_model`) is built with them.
    """

    @checked(scheme=one_of(SCHEMES), settings=_settings_or_default(Settings), head_dim=optional_size(maximum=512),
             rotary_dim=optional_size(maximum=512), base=BASE)
    def __init__(self, *, scheme: str, settings: Settings | None = None, head_dim: int | None = None,
                 rotary_dim: int | None = None, base: float = DEFAULT_BASE) -> None:
        super().__init__()
        self.scheme, self.settings = scheme, settings
        s = settings
        width = head_dim or s.d_model // s.num_heads
        if (rotary_dim or width) % 2 or (rotary_dim or width) > width:
            raise ValueError(f"rotary_dim must be an even number from 2 to head_dim={width}, got {rotary_dim or width}")
        self.embedding = nn.Embedding(s.vocab_size, s.d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)
        self.embedding_scale = math.sqrt(s.d_model) if s.scale_embeddings else 1.0
        self.blocks = nn.ModuleList(_Block(s.d_model, scheme=self.scheme, num_heads=s.num_heads, causal=s.causal,
                                           head_dim=head_dim, rotary_dim=rotary_dim, base=base)
                                    for _ in range(s.num_layers))
        self.norm = nn.LayerNorm(s.d_model)
        self.read_out = nn.Linear(s.d_model, s.vocab_size)
        # Last: only the learned table draws random numbers, and drawn earlier it would change the weights above.
        if self.scheme == "learned":
            self.position = LearnedPositionalEmbedding(max_sequence_length=s.longest, d_model=s.d_model)
        elif self.scheme == "sinusoidal":
            self.position = PositionalEncoding(d_model=s.d_model, max_sequence_length=FORMULA_LENGTH)
        else:
            self.position = None

    @property
    def max_sequence_length(self) -> int | None:
        """The longest input this model has positions for: the learned table's length, else None (no limit)."""
        return self.settings.longest if self.scheme == "learned" else None

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """What the first block reads, (batch, seq, d_model): the tokens' embeddings, plus the scheme's table if any."""
        self._check_ids(ids)
        x = self.embedding(ids) * self.embedding_scale  # (B, T, C); times sqrt(d_model), or 1 (scale_embeddings=False)
        if self.position is not None:  # "learned" or "sinusoidal": add the table's rows 0 .. T - 1
            x = self.position(x)
        return x

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch, seq, vocab_size) for token ids of shape (batch, seq)."""
        x = self.embed(ids)  # (B, T) -> (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.read_out(self.norm(x))  # (B, T, V)

    def _check_ids(self, ids: object) -> None:
        """Token ids this model can read: (batch, seq) int64, in its vocabulary, no longer than its positions."""
        s, limit = self.settings, self.max_sequence_length or FORMULA_LENGTH
        if check_tensor("ids", ids, ndim=(2,)).dtype != torch.int64 or not 1 <= ids.shape[1] <= limit or (
                ids.numel() and not 0 <= int(ids.min()) <= int(ids.max()) < s.vocab_size):
            raise ValueError(f"ids must be int64 token ids in [0, {s.vocab_size}), 1 to {limit} positions, got {short(ids)}")
        check_table_fits((len(ids), s.num_heads) + ids.shape[1:] * 2, torch.float32, name="scores", arguments="ids")
