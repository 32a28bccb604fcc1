"""The tiny Transformers, trained live on the CPU, and the one training loop they share.

    TinyTransformer   embedding, pre-norm attention blocks, a read-out; one position scheme ("none", "learned",
                      "sinusoidal", "rotary", "alibi"), in its one `Attention` layer
    train, compare    the previous-token experiment (`task.previous_token_batch`): one model per scheme,
                      scored at the trained length and beyond (`accuracy`)
    fit, predictions  the one training loop (AdamW) and the one evaluation every experiment uses
    copy_model, ...   the same model as a causal RoPE decoder on "repeat the block" (`task.repeat_block_batch`):
                      `train_copy`, `stretched` (a rule from `rope_scaling` replaces its frequencies), `fine_tune`,
                      `copy_accuracy`
    TinyDecoder       a one-layer decoder called as transformers' decoders are (attention mask, position ids,
                      a KV cache), and `decode_with_cache`, which generates one token per call

Every model's attention is `attention.attend`; every rotation `schemes.rotate_pairs`. Everything is seeded and
trains on one thread, so a run gives the same numbers on any number of cores (the last digits can still move with
the CPU's kernels).
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from torch import nn

from ._validate import (
    check_attention_layer,
    check_copy_model,
    check_copy_scoring,
    check_copy_settings,
    check_decoder,
    check_decoder_cache,
    check_decoder_ids,
    check_decoder_mask,
    check_decoder_positions,
    check_fine_tune,
    check_fit,
    check_flag,
    check_layer_input,
    check_longest_block,
    check_model_ids,
    check_progress,
    check_rotary_columns,
    check_settings,
    check_settings_fields,
    check_size,
    check_tiny_model,
    one_of,
    short,
)
from .attention import attend, causal_mask, merge_heads, multi_head_weights, split_heads
from .builder import DEFAULT_BASE
from .encoding import PositionalEncoding
from .positions import position_ids as mask_position_ids
from .rope_scaling import SCALINGS, rope_frequencies, yarn_attention_factor
from .schemes import (
    LearnedPositionalEmbedding,
    alibi_bias,
    alibi_slopes,
    apply_rotary,
    linear_bias,
    rotary_angles,
    rotate_pairs,
)
from .task import previous_token_batch, repeat_block_batch

__all__ = [
    "SCHEMES", "Settings", "TinyTransformer", "evaluation_batch", "attention_weights",
    "previous_token_head", "Result", "train", "fit", "predictions", "accuracy", "compare", "Comparison",
    "CopySettings", "copy_model", "train_copy", "stretched", "fine_tune", "copy_accuracy", "rotary_dim_of",
    "DECODER_SCHEMES", "KVCache", "DecoderOutput", "TinyDecoder", "decode_with_cache",
]

SCHEMES = ("none", "learned", "sinusoidal", "rotary", "alibi")
# Far larger than any sequence here: the formula-based schemes have no real limit.
FORMULA_LENGTH = 4096
# Sequences scored at once by `accuracy`.
EVALUATION_CHUNK = 16
# `fine_tune`'s batches: a seed of their own, apart from `copy_accuracy`'s evaluation seed (1) and the
# training seeds (CopySettings.seed), so that no fine-tuning batch shares its random stream with the inputs scored.
FINE_TUNE_SEED = 1000
# Longest block `copy_accuracy` and `fine_tune` accept (inputs of twice this): the tiny model's formula limit.
LONGEST_BLOCK = 1024
# The decoder with a KV cache: each scheme that gives positions (what it shows is how each is told one).
DECODER_SCHEMES = ("sinusoidal", "learned", "rotary", "alibi")


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
        check_settings_fields(self)


class Attention(nn.Module):
    """Multi-head self-attention with one position scheme, as the tiny models' blocks use it.

    `forward` is written to be read (a notebook prints it): the queries, keys and values
    of every head, then the two places a scheme can act inside attention, then `attention.attend`, the
    package's one attention core. "rotary" rotates the queries and keys by their positions (RoPE,
    Su et al. 2021); "alibi" adds `-m * distance` to the scores (Press et al. 2022). With `causal=True`
    no query sees a key after it. The attention weights of the last call, (batch, num_heads, seq, seq),
    are kept in `last_weights` (what `attention_weights` reads).

    RoPE's `frequencies` are numbers the layer holds (rotary_dim // 2 angles per position, from
    `rope_scaling.rope_frequencies`; plain RoPE's base^(-2i/rotary_dim) until a rule replaces them, as
    `stretched` does). They turn the first `rotary_dim` columns of each query and key (all of
    them by default); the other columns pass unchanged (partial RoPE). `attention_factor` multiplies the
    turned columns, as transformers multiplies cos and sin by YaRN's factor (`LlamaRotaryEmbedding.forward`),
    so that the part of each score RoPE touches grows by its square (DeepSeek-V3's reference code instead
    multiplies its whole softmax scale by the square, the columns without RoPE too; with the whole head
    turned the two agree). `head_dim` (default d_model // num_heads) may make the heads wider.
    """

    def __init__(self, *, scheme: str, d_model: int, num_heads: int, causal: bool, head_dim: int | None = None,
                 rotary_dim: int | None = None, base: float = DEFAULT_BASE) -> None:
        super().__init__()
        self.scheme, self.d_model, self.num_heads, self.causal, head_dim, self.rotary_dim = check_attention_layer(
            scheme, d_model, num_heads, causal, head_dim, rotary_dim, base)
        self.qkv = nn.Linear(d_model, 3 * num_heads * head_dim)  # W_Q, W_K and W_V side by side: one product for all
        self.out = nn.Linear(num_heads * head_dim, d_model)
        self.frequencies = rope_frequencies(head_dim=self.rotary_dim, base=base) if scheme == "rotary" else None
        self.attention_factor = 1.0
        self.last_weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = check_layer_input(x, self.qkv.weight.dtype, self.d_model)
        q, k, v = split_heads(self.qkv(x), num_heads=3 * self.num_heads).chunk(3, dim=1)  # num_heads heads each
        if self.scheme == "rotary":  # RoPE: turn every query and key by an angle that grows with its position
            q, k = self.rotate(q), self.rotate(k)
        bias = None
        if self.scheme == "alibi":  # ALiBi: a penalty on each score, growing with the distance to the key
            bias = alibi_bias(num_heads=self.num_heads, max_sequence_length=length, causal=self.causal)
        keep = causal_mask(sequence_length=length) if self.causal else None  # a decoder: no later key
        output, weights, _ = attend(q, k, v, bias=bias, keep=keep)
        self.last_weights = weights.detach()
        return self.out(merge_heads(output))

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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
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
    RoPE, RoPE's base): the copy task's model (`copy_model`) is built with them.
    """

    def __init__(self, *, scheme: str, settings: Settings | None = None, head_dim: int | None = None,
                 rotary_dim: int | None = None, base: float = DEFAULT_BASE) -> None:
        super().__init__()
        self.scheme = one_of(SCHEMES)("scheme", scheme)
        self.settings = s = check_settings(settings, Settings)
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
        check_model_ids(ids, self.settings, self.max_sequence_length, self.scheme)
        x = self.embedding(ids) * self.embedding_scale  # sqrt(d_model), or 1 with scale_embeddings=False
        if self.position is not None:  # "learned" or "sinusoidal": add the table's rows 0 .. seq - 1
            x = self.position(x)
        return x

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch, seq, vocab_size) for token ids of shape (batch, seq)."""
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.read_out(self.norm(x))


def evaluation_batch(*, length: int, settings: Settings | None = None, batch_size: int = 256,
                     seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed inputs and answers every model is scored on at `length` (a seed of its own, not training's)."""
    settings, seed = check_settings(settings, Settings), check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    return previous_token_batch(batch_size=batch_size, length=length, vocab_size=settings.vocab_size,
                                generator=torch.Generator().manual_seed(seed))


def attention_weights(model: TinyTransformer, ids: torch.Tensor, *, layer: int = 0) -> torch.Tensor:
    """What block `layer` of `model` attends to for `ids`: its attention weights, (batch, num_heads, seq, seq).

    Row i of head h holds how much query i takes from each key j; every row sums to 1.
    A model that names the previous token well has a head whose weight sits on j = i - 1.
    """
    check_tiny_model(model, TinyTransformer)
    layer = check_size("layer", layer, minimum=0, maximum=len(model.blocks) - 1)
    with one_thread(), torch.no_grad():
        model(ids)
    return model.blocks[layer].attention.last_weights.clone()


def previous_token_head(model: TinyTransformer, ids: torch.Tensor) -> tuple[int, int]:
    """(layer, head): the head of `model` that gives the previous token the most weight (layer = block index).

    The weight query t gives key t - 1, averaged over the sequences of `ids` and over
    the queries t = 1 .. settings.longest - 1 (the positions the model was trained on).
    """
    check_tiny_model(model, TinyTransformer, ids=ids)
    trained = min(ids.shape[1], model.settings.longest)
    with one_thread(), torch.no_grad():
        model(ids)
    # Entry t - 1 of the diagonal just below the main one is query t's weight on key t - 1.
    looks_back = torch.stack([block.attention.last_weights.diagonal(offset=-1, dim1=-2, dim2=-1)[..., : trained - 1]
                              .mean(dim=(0, 2)) for block in model.blocks])  # (layers, heads)
    layer, head = divmod(int(looks_back.argmax()), model.settings.num_heads)
    return layer, head


@dataclass
class Result:
    """A trained model, its loss per step, the seconds training took and its parameters before training."""

    scheme: str
    model: TinyTransformer
    losses: list[float] = field(repr=False)
    seconds: float
    initial_state: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)


def train(scheme: str, *, settings: Settings | None = None,
          progress: Callable[[str, int, int, float], None] | None = None) -> Result:
    """Train a `TinyTransformer` with `scheme` on the previous-token task, seeded, on one thread.

    Every step draws a batch of one length from `settings.shortest..settings.longest`.
    `progress(scheme, step, steps, loss)` is called every 20 steps and at the end.
    """
    scheme, settings = one_of(SCHEMES)("scheme", scheme), check_settings(settings, Settings)
    with one_thread():
        torch.manual_seed(settings.seed)
        model = TinyTransformer(scheme=scheme, settings=settings)

    def batch(length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return previous_token_batch(batch_size=settings.batch_size, length=length, vocab_size=settings.vocab_size,
                                    generator=generator)

    return fit(model, name=scheme, batch=batch, steps=settings.steps, shortest=settings.shortest,
               longest=settings.longest, learning_rate=settings.learning_rate, seed=settings.seed, progress=progress)


def fit(model: TinyTransformer, *, name: str, batch: Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]],
        steps: int, shortest: int, longest: int, learning_rate: float, seed: int,
        progress: Callable[[str, int, int, float], None] | None = None) -> Result:
    """`steps` AdamW steps on one thread, each on `batch(length, generator)` with a length drawn from shortest..longest.

    The one training loop of the package: `train` (previous token), `train_copy` and `fine_tune` (repeat the block) call it.
    `batch(length, generator)` returns (ids, targets), targets -100 where nothing is scored;
    `progress(name, step, steps, loss)` is called every 20 steps and at the end.
    """
    check_fit(model, TinyTransformer, name, batch, steps, shortest, longest, learning_rate, seed, progress)
    vocab_size = model.settings.vocab_size
    with one_thread():
        initial_state = {key: value.detach().clone() for key, value in model.state_dict().items()}
        # foreach: one call updates every parameter (the same arithmetic, bit for bit, with less Python per step).
        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, foreach=True)
        generator = torch.Generator().manual_seed(seed)
        losses = []
        start = time.perf_counter()
        model.train()
        for step in range(1, steps + 1):
            length = int(torch.randint(shortest, longest + 1, (), generator=generator))
            ids, targets = batch(length, generator)
            logits = model(ids)
            loss = nn.functional.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if progress is not None and (step % 20 == 0 or step == steps):
                progress(name, step, steps, losses[-1])
        seconds = time.perf_counter() - start
    model.eval()
    return Result(name, model, losses, seconds, initial_state)


def accuracy(model: TinyTransformer, *, length: int, batch_size: int = 256, seed: int = 1) -> float | None:
    """The share of positions t >= 1 where the model names the previous token, on fresh random inputs.

    None when the model has no positions for that length (a learned table shorter
    than `length`): there is no answer to score, which is the point.
    """
    check_tiny_model(model, TinyTransformer)
    length = check_size("length", length, minimum=2, maximum=FORMULA_LENGTH)
    batch_size = check_size("batch_size", batch_size, maximum=4096)
    seed = check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    if model.max_sequence_length is not None and length > model.max_sequence_length:
        return None
    ids, targets = evaluation_batch(length=length, settings=model.settings, batch_size=batch_size, seed=seed)
    return float((predictions(model, ids) == targets)[:, 1:].float().mean())


def predictions(model: TinyTransformer, ids: torch.Tensor) -> torch.Tensor:
    """The token `model` names at every position of ids, `(batch, seq)`: the evaluation `accuracy` and
    `copy_accuracy` share, on one thread, a few sequences at a time (the scores of long inputs are large)."""
    check_tiny_model(model, TinyTransformer)
    check_model_ids(ids, model.settings, model.max_sequence_length, model.scheme)
    with one_thread(), torch.no_grad():
        return torch.cat([model(chunk).argmax(dim=-1) for chunk in ids.split(EVALUATION_CHUNK)])


@dataclass
class Comparison:
    """What `compare` measured: accuracy per scheme and length, and each trained model."""

    accuracies: dict[str, dict[int, float | None]]
    results: dict[str, Result] = field(repr=False)
    settings: Settings

    def table(self) -> str:
        """The accuracies as a text table, one row per scheme ("no rows" where a learned table ends)."""
        lengths = list(next(iter(self.accuracies.values())))
        lines = ["scheme       " + "".join(f"{n:>10}" for n in lengths)]
        for scheme, by_length in self.accuracies.items():
            cells = ("   no rows" if a is None else f"{a:>10.2f}" for a in by_length.values())
            lines.append(f"{scheme:<13}" + "".join(cells))
        return "\n".join(lines)


def compare(schemes: Sequence[str] = SCHEMES, *, settings: Settings | None = None,
            lengths: Sequence[int] | None = None, progress: bool = True) -> Comparison:
    """Train one model per scheme and measure each at every length.

    `lengths` defaults to the longest trained length and 2x and 4x it. With
    `progress=True`, one line per model shows its step and loss while it trains (in
    Jupyter, updated in place), then the seconds it took.
    """
    if isinstance(schemes, str) or not isinstance(schemes, Sequence) or not schemes:
        raise TypeError(f"schemes must be a non-empty list of names from {SCHEMES}, got {schemes!r}")
    for scheme in schemes:
        if not isinstance(scheme, str) or scheme not in SCHEMES:
            raise ValueError(f"schemes must hold names from {SCHEMES}, got {scheme!r} among them")
    settings = check_settings(settings, Settings)
    if lengths is None:
        lengths = [settings.longest, 2 * settings.longest, 4 * settings.longest]
    if isinstance(lengths, str) or not isinstance(lengths, Sequence) or not lengths:
        raise TypeError(f"lengths must be a non-empty list of ints, got {lengths!r}")
    lengths = [check_size("lengths", n, minimum=2, maximum=FORMULA_LENGTH) for n in lengths]
    check_flag("progress", progress)

    lines = ProgressLines() if progress else None
    accuracies, results = {}, {}
    for scheme in schemes:
        results[scheme] = train(scheme, settings=settings, progress=lines.step if lines else None)
        if lines:
            lines.done(results[scheme])
        accuracies[scheme] = {n: accuracy(results[scheme].model, length=n) for n in lengths}
    return Comparison(accuracies, results, settings)

# --- The copy task's model: a causal RoPE decoder, stretched past its training length ---------------------------------


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
        check_copy_settings(self)
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
    check_settings(settings, CopySettings)
    head_dim = _head_dim(settings)
    return check_rotary_columns(head_dim, settings.partial_rotary_factor)


def _head_dim(settings: CopySettings) -> int:
    if settings.head_dim is None:
        return _model_settings(settings).d_model // settings.num_heads
    return settings.head_dim  # checked by the model's Attention


def copy_model(settings: CopySettings | None = None) -> TinyTransformer:
    """An untrained causal RoPE TinyTransformer for the copy task, seeded by `settings.seed`.

    Its weights are those of `TinyTransformer(scheme="rotary")` with the same
    sizes and seed; its heads are `head_dim` wide and turn their first `rotary_dim_of(settings)`
    columns. The CopySettings are kept as `model.copy_settings`.
    """
    settings = check_settings(settings, CopySettings)
    torch.manual_seed(settings.seed)
    model = TinyTransformer(scheme="rotary", settings=_model_settings(settings), head_dim=_head_dim(settings),
                            rotary_dim=rotary_dim_of(settings), base=settings.base)
    model.copy_settings = settings
    return model


def _train(model: TinyTransformer, *, name: str, steps: int, shortest_block: int, longest_block: int,
           seed: int, progress: Callable[[str, int, int, float], None] | None) -> Result:
    """`steps` AdamW steps on the copy task, each on one block length drawn from shortest_block..longest_block."""
    s = model.copy_settings

    def batch(block_length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return repeat_block_batch(batch_size=s.batch_size, block_length=block_length, vocab_size=s.vocab_size,
                                  generator=generator)

    return fit(model, name=name, batch=batch, steps=steps, shortest=shortest_block, longest=longest_block,
                learning_rate=s.learning_rate, seed=seed, progress=progress)


def _progress_lines(progress: object) -> tuple[Callable[[str, int, int, float], None] | None, ProgressLines | None]:
    """The step callback `progress` asks for, and the progress lines to finish (progress=True), if any."""
    if progress is True:
        lines = ProgressLines()
        return lines.step, lines
    if progress is None or progress is False:
        return None, None
    return check_progress(progress, flag=True), None


def _finish(result: Result, lines: ProgressLines | None) -> Result:
    if lines is not None:
        lines.done(result)
    return result


def train_copy(*, settings: CopySettings | None = None,
               progress: bool | Callable[[str, int, int, float], None] | None = None) -> Result:
    """Train `copy_model(settings)` on "repeat the block", seeded, on one thread; a `Result`.

    Every step draws one block length from shortest_block..longest_block and a batch of
    batch_size blocks; the loss is cross-entropy on the repeated half (`repeat_block_batch`).
    A function `progress(name, step, steps, loss)` is called every 20 steps and at the
    end; `progress=True` shows one line, updated in place in Jupyter, as `compare` does.
    """
    settings = check_settings(settings, CopySettings)
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
    model = check_copy_model(model, TinyTransformer, CopySettings)
    scaling = one_of(SCALINGS)("scaling", scaling)
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
    model = check_copy_model(model, TinyTransformer, CopySettings)
    steps, seed = check_fine_tune(steps, seed, scaling, factor, LONGEST_BLOCK)
    step, lines = _progress_lines(progress)
    # without a rule, plain RoPE (stretched refuses factor != 1 with scaling None)
    tuned = stretched(model, scaling=scaling, factor=factor if scaling is not None else 1.0)
    s = tuned.copy_settings
    longest_block = check_longest_block(int(factor * s.longest_block), factor, LONGEST_BLOCK)
    name = f"{scaling or 'none'} x{factor:g} tuned"
    return _finish(_train(tuned, name=name, steps=steps, shortest_block=s.shortest_block, longest_block=longest_block,
                          seed=seed, progress=step), lines)


def copy_accuracy(model: TinyTransformer, *, length: int, batch_size: int = 256, seed: int = 1) -> float:
    """The share of the scored tokens of the repeat that `model` predicts, on fresh inputs of `length` tokens.

    `length` (even) is twice the block: blocks of length // 2 random symbols, each repeated;
    scored are the tokens of the repeat after its first (`repeat_block_batch`). The inputs
    come from their own generator, seeded by `seed`: every model is scored on the same ones.
    """
    model = check_copy_model(model, TinyTransformer, CopySettings)
    length, batch_size, seed = check_copy_scoring(length, 2 * LONGEST_BLOCK, batch_size, seed)
    ids, targets = repeat_block_batch(batch_size=batch_size, block_length=length // 2,
                                      vocab_size=model.copy_settings.vocab_size,
                                      generator=torch.Generator().manual_seed(seed))
    scored = targets != -100
    return float((predictions(model, ids) == targets)[scored].float().mean())

# --- A decoder that generates one token at a time: position ids and the KV cache --------------------------------------


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
            scheme, DECODER_SCHEMES, vocab_size, d_model, num_heads, max_sequence_length, seed)
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
                      prefill: int = 1, forget_offset: bool = False,
                      position_ids: torch.Tensor | None = None) -> torch.Tensor:
    """The logits of every token of ids, computed as generation does: the first `prefill` tokens in one call,
    then one token per call, each reading the cache of the tokens before it.

    The position of each new token is the number of real tokens before it: `tokens.position_ids` of
    the attention mask so far (without a mask, the number of tokens cached: the offset). With
    `forget_offset=True`, each call starts again at position 0, the bug this function is there to show.
    `position_ids` ((batch, seq) or (seq,)) gives each token the position it is fed with instead, right or
    wrong: a decoding loop's own positions, to compare with the full pass (not with `forget_offset=True`).
    Returns `(batch, seq, vocab_size)`, to compare with `model(ids, ...).logits`, the full pass.
    """
    if not isinstance(model, TinyDecoder):
        raise TypeError(f"model must be a posenc.models.TinyDecoder, got {short(model)}")
    ids = check_decoder_ids(ids, model.vocab_size)
    batch, seq = ids.shape
    prefill = check_size("prefill", prefill, maximum=seq)
    forget_offset = check_flag("forget_offset", forget_offset)
    mask = check_decoder_mask(attention_mask, None, batch, 0, seq)
    if position_ids is None:
        positions = mask_position_ids(mask)
    elif forget_offset:
        raise ValueError("give position_ids or forget_offset=True, not both: forgetting the offset sets the positions")
    else:
        positions = check_decoder_positions(position_ids, batch, 0, seq, model.scheme, model.max_sequence_length,
                                            model.position_embedding is not None)
    logits, cache = [], None
    for start, end in [(0, prefill)] + [(t, t + 1) for t in range(prefill, seq)]:
        chunk = mask_position_ids(length=end - start) if forget_offset else positions[:, start:end]
        output = model(ids[:, start:end], attention_mask=mask[:, :end], position_ids=chunk, cache=cache)
        logits.append(output.logits)
        cache = output.cache
    return torch.cat(logits, dim=1)


# --- What the training loop uses: one thread, and a progress line per model -------------------------------------------


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with torch on one thread, then restore the previous thread count (also after an error).

    One thread fixes the order of every reduction, so a seeded training run gives the same
    numbers on any machine, and leaves the other cores to the notebook's front end.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class ProgressLines:
    """One line per model: its step and loss while it trains, then what training took.

    In a Jupyter kernel the lines are one display, replaced in place at every update, so
    a learner watches them move and the saved notebook keeps only the finished lines.
    Anywhere else only the finished lines are printed, one per model.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.handle = None
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            return
        shell = get_ipython()
        if shell is not None and getattr(shell, "kernel", None) is not None:
            self.handle = display({"text/plain": "training ..."}, raw=True, display_id=True)

    def step(self, scheme: str, step: int, steps: int, loss: float) -> None:
        if not self.lines or not self.lines[-1].startswith(f"{scheme:<11} step"):  # a new model: a new line
            self.lines.append("")
        self.lines[-1] = f"{scheme:<11} step {step:>4}/{steps}  loss {loss:.3f}"
        self._show()

    def done(self, result: Result) -> None:
        line = (f"{result.scheme:<11} trained in {result.seconds:.1f} s: {len(result.losses)} steps, "
                f"last loss {result.losses[-1]:.3f}")
        if self.lines and self.lines[-1].startswith(f"{result.scheme:<11} step"):
            self.lines[-1] = line
        else:
            self.lines.append(line)
        if self.handle is None:
            print(line)
        self._show()

    def _show(self) -> None:
        if self.handle is not None:
            self.handle.update({"text/plain": "\n".join(self.lines)}, raw=True)
