"""Does position matter? A tiny Transformer, trained live on the CPU, with each position scheme.

The task, "previous token", and the order-blind guess that no model without positions
beats on average are in `posenc.task` (re-exported here). Every scheme that gives
positions can beat that guess; how far each carries over to inputs longer than it was
trained on is what `compare` measures.

Everything is seeded and runs on one thread, so a run gives the same numbers on any
number of cores (the last digits can still move with the CPU's kernels).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from ._progress import ProgressLines
from ._threads import one_thread
from ._validate import (
    check_attention_layer,
    check_fit,
    check_flag,
    check_layer_input,
    check_model_ids,
    check_settings,
    check_settings_fields,
    check_size,
    check_tiny_model,
    one_of,
)
from .attention import attend, causal_mask, merge_heads, split_heads
from .builder import DEFAULT_BASE
from .encoding import PositionalEncoding
from .rope_scaling import rope_frequencies
from .schemes import LearnedPositionalEmbedding, alibi_bias, apply_rotary
from .task import expected_order_blind_accuracy, order_blind_accuracy, previous_token_batch

__all__ = [
    "SCHEMES",
    "Settings",
    "TinyTransformer",
    "previous_token_batch",
    "evaluation_batch",
    "order_blind_accuracy",
    "expected_order_blind_accuracy",
    "attention_weights",
    "previous_token_head",
    "train",
    "fit",
    "predictions",
    "accuracy",
    "compare",
    "Result",
    "Comparison",
]

SCHEMES = ("none", "learned", "sinusoidal", "rotary", "alibi")
# Far larger than any sequence here: the formula-based schemes have no real limit.
FORMULA_LENGTH = 4096
# Sequences scored at once by `accuracy`.
EVALUATION_CHUNK = 16


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

    `forward` is written to be read (the live-training notebooks print it): the queries, keys and values
    of every head, then the two places a scheme can act inside attention, then `attention.attend`, the
    package's one attention core. "rotary" rotates the queries and keys by their positions (RoPE,
    Su et al. 2021); "alibi" adds `-m * distance` to the scores (Press et al. 2022). With `causal=True`
    no query sees a key after it. The attention weights of the last call, (batch, num_heads, seq, seq),
    are kept in `last_weights` (what `attention_weights` reads).

    RoPE's `frequencies` are numbers the layer holds (rotary_dim // 2 angles per position, from
    `rope_scaling.rope_frequencies`; plain RoPE's base^(-2i/rotary_dim) until a rule replaces them, as
    `stretch.stretched` does). They turn the first `rotary_dim` columns of each query and key (all of
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
    RoPE, RoPE's base): the copy task's model (`stretch.copy_model`) is built with them.
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

    The one training loop of the package: `train` (previous token) and `stretch` (repeat the block) call it.
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
    `stretch.copy_accuracy` share, on one thread, a few sequences at a time (the scores of long inputs are large)."""
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
