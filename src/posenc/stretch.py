"""Stretching the context: a tiny causal RoPE model, trained live, read at lengths it never saw.

The model is `experiment.TinyTransformer` with the "rotary" scheme and a decoder's causal
mask, whose attention (`RopeAttention`) takes its RoPE frequencies as numbers, so that a
rule from `rope_scaling` (position interpolation, NTK-aware, YaRN, Llama 3.1's) can be
swapped in after training (`stretched`), and can rotate only part of each head (partial
RoPE, `CopySettings.partial_rotary_factor`). It learns `task.repeat_block_batch`, whose
needed offsets grow with the input: `train_copy` trains it, `copy_accuracy` scores the
repeated half, `fine_tune` trains a stretched copy briefly at a longer length, as the
position interpolation paper does (Chen et al. 2023, arXiv 2306.15595: "minimal
fine-tuning (within 1000 steps)", its abstract says).

Seeded and run on one thread, like `experiment`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from ._progress import ProgressLines
from ._threads import one_thread
from ._validate import check_base, check_size, check_str, is_real, short
from .attention import causal_mask, merge_heads, split_heads
from .experiment import Attention, Result, Settings, TinyTransformer, _fit
from .rope_scaling import SCALINGS, rope_frequencies, yarn_attention_factor
from .schemes import apply_rotary
from .task import repeat_block_batch

__all__ = ["CopySettings", "RopeAttention", "copy_model", "train_copy", "stretched", "fine_tune", "copy_accuracy",
           "rotary_dim_of"]

# Sequences scored at once by `copy_accuracy`: the scores of long inputs are large.
EVALUATION_CHUNK = 16
# `fine_tune`'s batches: a seed of their own, apart from `copy_accuracy`'s evaluation seed (1) and the
# training seeds (CopySettings.seed), so that no fine-tuning batch shares its random stream with the inputs scored.
FINE_TUNE_SEED = 1000
# Longest block `copy_accuracy` and `fine_tune` accept (inputs of twice this): the tiny model's formula limit.
LONGEST_BLOCK = 1024


@dataclass(frozen=True)
class CopySettings:
    """The copy experiment's sizes: blocks of shortest_block..longest_block symbols, so inputs up to 2 * longest_block.

    `partial_rotary_factor` is the share of each head that RoPE turns (GPT-NeoX's
    `rotary_pct`, transformers' `partial_rotary_factor`): its first
    int(head_dim * factor) columns; the rest carry no position. `head_dim` None means
    d_model // num_heads.

    Blocks start at 8 symbols and are drawn from 32 symbols, choices measured with seeds
    0 and 7: with blocks of 4 to 16 of 10 symbols, 500 steps left this model at a loss
    near 1.5 and 0.27 accuracy at length 32 (it learned the short blocks by position
    alone); blocks of 8 to 16 of 10 symbols reached 0.66-0.86, and of 32 symbols 0.96-0.97,
    where a token seldom occurs twice in a block, so the earlier copy is easy to find.
    """

    vocab_size: int = 32
    shortest_block: int = 8
    longest_block: int = 16
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    head_dim: int | None = None
    steps: int = 500
    batch_size: int = 32
    learning_rate: float = 3e-3
    base: float = 10000.0
    partial_rotary_factor: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        check_size("shortest_block", self.shortest_block, minimum=2, maximum=256)
        check_size("longest_block", self.longest_block, minimum=self.shortest_block, maximum=256)
        check_base(self.base)
        factor = self.partial_rotary_factor
        if not is_real(factor) or not 0 < factor <= 1:
            raise ValueError(f"partial_rotary_factor must be a number in (0, 1], the share of each head RoPE turns, "
                             f"got {short(factor)}")
        # The model's own sizes are checked by the Settings they make; the rotary columns by rotary_dim_of.
        rotary_dim_of(self)


def _model_settings(settings: CopySettings) -> Settings:
    """The TinyTransformer's settings: a decoder (causal) trained on inputs of 2 * shortest_block .. 2 * longest_block."""
    return Settings(vocab_size=settings.vocab_size, shortest=2 * settings.shortest_block,
                    longest=2 * settings.longest_block, d_model=settings.d_model, num_heads=settings.num_heads,
                    num_layers=settings.num_layers, steps=settings.steps, batch_size=settings.batch_size,
                    learning_rate=settings.learning_rate, causal=True, seed=settings.seed)


def rotary_dim_of(settings: CopySettings) -> int:
    """The columns of each head RoPE turns: int(head_dim * partial_rotary_factor), as transformers computes it."""
    if not isinstance(settings, CopySettings):
        raise TypeError(f"settings must be a posenc.stretch.CopySettings, got {type(settings).__name__}")
    head_dim = _head_dim(settings)
    rotary_dim = int(head_dim * settings.partial_rotary_factor)
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"partial_rotary_factor={settings.partial_rotary_factor!r} of head_dim={head_dim} gives "
                         f"{rotary_dim} columns to turn: it must be an even number >= 2")
    return rotary_dim


def _head_dim(settings: CopySettings) -> int:
    if settings.head_dim is None:
        return _model_settings(settings).d_model // settings.num_heads
    return check_size("head_dim", settings.head_dim, minimum=2, maximum=512)


class RopeAttention(Attention):
    """Causal multi-head attention with RoPE whose frequencies are numbers it holds.

    `frequencies` (rotary_dim // 2 angles per position, from `rope_scaling.rope_frequencies`)
    turn the first `rotary_dim` columns of each query and key; the other columns pass
    unchanged (partial RoPE). `attention_factor` multiplies the turned columns, as
    transformers multiplies cos and sin by YaRN's factor (`LlamaRotaryEmbedding.forward`),
    so that the part of each score RoPE touches grows by its square (DeepSeek-V3's reference
    code instead multiplies its whole softmax scale by the square, the columns without RoPE
    too; with the whole head turned the two agree). Plain RoPE over the whole head gives the
    same numbers as `experiment.Attention` with the "rotary" scheme.
    """

    def __init__(self, *, d_model: int, num_heads: int, rotary_dim: int, base: float = 10000.0,
                 head_dim: int | None = None) -> None:
        super().__init__(scheme="rotary", d_model=d_model, num_heads=num_heads, causal=True)
        if head_dim is not None:
            head_dim = check_size("head_dim", head_dim, minimum=2, maximum=512)
            if head_dim != self.d_model // self.num_heads:  # heads wider than d_model / num_heads
                self.qkv = nn.Linear(d_model, 3 * num_heads * head_dim)
                self.out = nn.Linear(num_heads * head_dim, d_model)
        head_dim = self.d_model // self.num_heads if head_dim is None else head_dim
        self.rotary_dim = check_size("rotary_dim", rotary_dim, minimum=2, maximum=max(head_dim, 2))
        if self.rotary_dim % 2 or self.rotary_dim > head_dim:
            raise ValueError(f"rotary_dim must be an even number from 2 to head_dim={head_dim}, got {rotary_dim}")
        self.frequencies = rope_frequencies(head_dim=self.rotary_dim, base=base)
        self.attention_factor = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = self._check_input(x)
        q, k, v = split_heads(self.qkv(x), num_heads=3 * self.num_heads).chunk(3, dim=1)  # num_heads heads each
        # RoPE with this layer's frequencies, on the first rotary_dim columns of each head only
        q = apply_rotary(q, frequencies=self.frequencies, rotary_dim=self.rotary_dim)
        k = apply_rotary(k, frequencies=self.frequencies, rotary_dim=self.rotary_dim)
        # YaRN: the turned columns times its attention factor (1 for every other rule)
        scale = torch.ones(q.shape[-1])
        scale[: self.rotary_dim] = self.attention_factor
        q, k = q * scale, k * scale
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~causal_mask(sequence_length=length), float("-inf"))  # a decoder
        weights = torch.softmax(scores, dim=-1)
        self.last_weights = weights.detach()
        return self.out(merge_heads(weights @ v))


def copy_model(settings: CopySettings | None = None) -> TinyTransformer:
    """An untrained causal RoPE TinyTransformer for the copy task, seeded by `settings.seed`.

    Its weights are those of `experiment.TinyTransformer(scheme="rotary")` with the same
    sizes and seed; every block's attention is a `RopeAttention` holding them. The
    CopySettings are kept as `model.copy_settings`.
    """
    settings = _check_settings(settings)
    torch.manual_seed(settings.seed)
    model = TinyTransformer(scheme="rotary", settings=_model_settings(settings))
    rotary_dim = rotary_dim_of(settings)
    with torch.random.fork_rng():  # the new layers' own first weights are replaced: they draw from a copy
        for block in model.blocks:
            rope = RopeAttention(d_model=settings.d_model, num_heads=settings.num_heads, rotary_dim=rotary_dim,
                                 base=settings.base, head_dim=_head_dim(settings))
            if rope.qkv.weight.shape == block.attention.qkv.weight.shape:
                rope.load_state_dict(block.attention.state_dict())
            block.attention = rope
    model.copy_settings = settings
    return model


def _check_settings(settings: object) -> CopySettings:
    if settings is None:
        return CopySettings()
    if not isinstance(settings, CopySettings):
        raise TypeError(f"settings must be a posenc.stretch.CopySettings or None, got {type(settings).__name__}")
    return settings


def _check_model(model: object) -> TinyTransformer:
    if not isinstance(model, TinyTransformer) or not isinstance(getattr(model, "copy_settings", None), CopySettings):
        raise TypeError(f"model must be a model from posenc.stretch.copy_model or train_copy, got {type(model).__name__}")
    return model


def _train(model: TinyTransformer, *, name: str, steps: int, shortest_block: int, longest_block: int,
           seed: int, progress: Callable[[str, int, int, float], None] | None) -> Result:
    """`steps` AdamW steps on the copy task, each on one block length drawn from shortest_block..longest_block."""
    s = model.copy_settings

    def batch(block_length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return repeat_block_batch(batch_size=s.batch_size, block_length=block_length, vocab_size=s.vocab_size,
                                  generator=generator)

    return _fit(model, name=name, batch=batch, steps=steps, shortest=shortest_block, longest=longest_block,
                learning_rate=s.learning_rate, seed=seed, progress=progress)


def _progress_lines(progress: object) -> tuple[Callable[[str, int, int, float], None] | None, ProgressLines | None]:
    """The step callback `progress` asks for, and the progress lines to finish (progress=True), if any."""
    if progress is True:
        lines = ProgressLines()
        return lines.step, lines
    if progress is None or progress is False:
        return None, None
    if not callable(progress):
        raise TypeError(f"progress must be True, False, None or a function, got {type(progress).__name__}")
    return progress, None


def _finish(result: Result, lines: ProgressLines | None) -> Result:
    if lines is not None:
        lines.done(result)
    return result


def train_copy(*, settings: CopySettings | None = None,
               progress: bool | Callable[[str, int, int, float], None] | None = None) -> Result:
    """Train `copy_model(settings)` on "repeat the block", seeded, on one thread; an `experiment.Result`.

    Every step draws one block length from shortest_block..longest_block and a batch of
    batch_size blocks; the loss is cross-entropy on the repeated half (`repeat_block_batch`).
    A function `progress(name, step, steps, loss)` is called every 20 steps and at the
    end; `progress=True` shows one line, updated in place in Jupyter, as `experiment.compare` does.
    """
    settings = _check_settings(settings)
    step, lines = _progress_lines(progress)
    with one_thread():
        model = copy_model(settings)
    return _finish(_train(model, name="rotary", steps=settings.steps, shortest_block=settings.shortest_block,
                          longest_block=settings.longest_block, seed=settings.seed, progress=step), lines)


def stretched(model: TinyTransformer, *, scaling: str | None, factor: float = 1.0,
              original_max_position_embeddings: int | None = None) -> TinyTransformer:
    """A copy of `model` whose RoPE frequencies follow `scaling` with `factor` (the model itself is not changed).

    `scaling` is one of `rope_scaling.SCALINGS` (None: plain RoPE). The trained length
    `original_max_position_embeddings` defaults to the longest input the model was trained
    on, 2 * longest_block. With "yarn" the turned columns are also multiplied by
    `yarn_attention_factor(factor=factor)`. Frequencies are computed for the rotated
    columns, as transformers does with partial_rotary_factor (its `dim`).
    """
    model = _check_model(model)
    scaling = check_str("scaling", scaling, optional=True)
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    s = model.copy_settings
    if original_max_position_embeddings is None:
        original_max_position_embeddings = 2 * s.longest_block
    rotary_dim = rotary_dim_of(s)
    frequencies = rope_frequencies(head_dim=rotary_dim, base=s.base, scaling=scaling, factor=factor,
                                   original_max_position_embeddings=original_max_position_embeddings)
    attention_factor = yarn_attention_factor(factor=factor) if scaling == "yarn" else 1.0
    copied = copy.deepcopy(model)
    for block in copied.blocks:
        block.attention.frequencies = frequencies.clone()
        block.attention.attention_factor = attention_factor
    return copied


def fine_tune(model: TinyTransformer, *, scaling: str | None = "linear", factor: float = 2.0, steps: int = 100,
              seed: int = FINE_TUNE_SEED,
              progress: bool | Callable[[str, int, int, float], None] | None = None) -> Result:
    """`stretched(model, scaling=scaling, factor=factor)`, trained `steps` more steps at the longer length.

    The blocks are drawn from shortest_block..int(factor * longest_block), so inputs up to
    factor times the trained length. This is how position interpolation is meant to be
    used: its paper fine-tunes after interpolating, "within 1000 steps" (Chen et al.
    2023, abstract). `model` is not changed; training draws its batches with `seed`.
    `progress` as in `train_copy`. With `scaling=None` the frequencies stay plain RoPE's and
    `factor` sets only the longer inputs: the control, the same fine-tuning without a rule.
    """
    model = _check_model(model)
    steps = check_size("steps", steps, maximum=100_000)
    seed = check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    if scaling is None:
        if not is_real(factor):
            raise TypeError(f"factor must be a real number >= 1, got {short(factor)} of type {type(factor).__name__}")
        if not 1.0 <= float(factor) <= LONGEST_BLOCK:
            raise ValueError(f"factor must be a number from 1 to {LONGEST_BLOCK} (the longer inputs over the trained "
                             f"ones), got {factor!r}")
    step, lines = _progress_lines(progress)
    # without a rule, plain RoPE (stretched refuses factor != 1 with scaling None)
    tuned = stretched(model, scaling=scaling, factor=factor if scaling is not None else 1.0)
    s = tuned.copy_settings
    longest_block = int(factor * s.longest_block)
    if longest_block > LONGEST_BLOCK:
        raise ValueError(f"factor={factor!r} makes blocks of up to {longest_block} symbols, more than {LONGEST_BLOCK}")
    name = f"{scaling or 'none'} x{factor:g} tuned"
    return _finish(_train(tuned, name=name, steps=steps, shortest_block=s.shortest_block, longest_block=longest_block,
                          seed=seed, progress=step), lines)


def copy_accuracy(model: TinyTransformer, *, length: int, batch_size: int = 256, seed: int = 1) -> float:
    """The share of the scored tokens of the repeat that `model` predicts, on fresh inputs of `length` tokens.

    `length` (even) is twice the block: blocks of length // 2 random symbols, each repeated;
    scored are the tokens of the repeat after its first (`repeat_block_batch`). The inputs
    come from their own generator, seeded by `seed`: every model is scored on the same ones.
    """
    model = _check_model(model)
    length = check_size("length", length, minimum=4, maximum=2 * LONGEST_BLOCK)
    if length % 2:
        raise ValueError(f"length must be even, a block and its repeat, got {length}")
    batch_size = check_size("batch_size", batch_size, maximum=4096)
    seed = check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    ids, targets = repeat_block_batch(batch_size=batch_size, block_length=length // 2,
                                      vocab_size=model.copy_settings.vocab_size,
                                      generator=torch.Generator().manual_seed(seed))
    with one_thread(), torch.no_grad():
        predictions = torch.cat([model(chunk).argmax(dim=-1) for chunk in ids.split(EVALUATION_CHUNK)])
    scored = targets != -100
    return float((predictions == targets)[scored].float().mean())
