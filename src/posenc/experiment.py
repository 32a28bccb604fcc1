"""Does position matter? A tiny Transformer encoder, trained live on the CPU, with each position scheme.

The task, "previous token": the model reads random tokens and must output, at every
position t >= 1, the token at position t - 1. It is pure order: the same tokens in
another order have other answers.

Attention without any position information is permutation-equivariant (notebook 09):
the output at position t can depend only on the token at t and on the multiset of all
tokens, not on where they are. The best such a model can do is the *order-blind
guess*: the token that occurs most often among the others (`order_blind_accuracy`).
Every scheme that gives positions can beat it; how far each carries over to inputs
longer than it was trained on is what `compare` measures.

Everything is seeded and runs on one thread, so a run gives the same numbers on any
number of cores (the last digits can still move with the CPU's kernels).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
from torch import nn

from ._validate import check_flag, check_size, check_str, check_table_fits, check_tensor
from .encoding import PositionalEncoding
from .schemes import LearnedPositionalEmbedding, alibi_bias, apply_rotary

__all__ = [
    "SCHEMES",
    "Settings",
    "TinyTransformer",
    "previous_token_batch",
    "evaluation_batch",
    "order_blind_accuracy",
    "train",
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
    seed: int = 0

    def __post_init__(self) -> None:
        check_size("vocab_size", self.vocab_size, minimum=2, maximum=1000)
        check_size("shortest", self.shortest, minimum=2, maximum=512)
        check_size("longest", self.longest, minimum=self.shortest, maximum=512)
        check_size("d_model", self.d_model, minimum=2, maximum=512)
        check_size("num_heads", self.num_heads, minimum=1, maximum=64)
        check_size("num_layers", self.num_layers, minimum=1, maximum=12)
        check_size("steps", self.steps, minimum=1, maximum=100_000)
        check_size("batch_size", self.batch_size, minimum=1, maximum=4096)
        check_size("seed", self.seed, minimum=0, maximum=2**63 - 1)
        check_flag("causal", self.causal)
        if self.d_model % self.num_heads or (self.d_model // self.num_heads) % 2:
            raise ValueError(
                f"d_model must be num_heads times an even head size (rotary turns pairs of columns), "
                f"got d_model={self.d_model}, num_heads={self.num_heads}"
            )
        rate = self.learning_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < 1:
            raise ValueError(f"learning_rate must be a number in (0, 1), got {rate!r}")


def _check_scheme(scheme: object) -> str:
    scheme = check_str("scheme", scheme)
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    return scheme


def _check_settings(settings: object) -> Settings:
    if not isinstance(settings, Settings):
        raise TypeError(f"settings must be a posenc.experiment.Settings, got {type(settings).__name__}")
    return settings


class _Attention(nn.Module):
    def __init__(self, scheme: str, d_model: int, num_heads: int, causal: bool) -> None:
        super().__init__()
        self.scheme, self.num_heads, self.causal = scheme, num_heads, causal
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, d_model = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        if self.scheme == "rotary":  # rotate queries and keys, never values
            q, k = apply_rotary(q), apply_rotary(k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if self.scheme == "alibi":
            scores = scores + alibi_bias(num_heads=self.num_heads, max_sequence_length=length, causal=self.causal)
        elif self.causal:
            scores = scores.masked_fill(torch.ones(length, length, dtype=torch.bool).triu(1), float("-inf"))
        mixed = torch.softmax(scores, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, length, d_model))


class _Block(nn.Module):
    def __init__(self, scheme: str, d_model: int, num_heads: int, causal: bool) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attention = _Attention(scheme, d_model, num_heads, causal)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """Embedding, a few pre-norm attention blocks and a linear read-out, with one position scheme.

    "none", "learned" and "sinusoidal" act on the embeddings X (added before the first
    block); "rotary" rotates the queries and keys in every block; "alibi" adds its bias
    to the scores in every block. A learned table has `settings.longest` rows: the
    longest input it was trained on.
    """

    def __init__(self, *, scheme: str, settings: Settings | None = None) -> None:
        super().__init__()
        self.scheme = _check_scheme(scheme)
        self.settings = Settings() if settings is None else _check_settings(settings)
        s = self.settings
        self.embedding = nn.Embedding(s.vocab_size, s.d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)  # GPT-2's initialisation, the same as the learned table
        if self.scheme == "learned":
            self.position = LearnedPositionalEmbedding(max_sequence_length=s.longest, d_model=s.d_model)
        elif self.scheme == "sinusoidal":
            self.position = PositionalEncoding(d_model=s.d_model, max_sequence_length=FORMULA_LENGTH)
        else:
            self.position = None
        self.blocks = nn.ModuleList(_Block(self.scheme, s.d_model, s.num_heads, s.causal) for _ in range(s.num_layers))
        self.norm = nn.LayerNorm(s.d_model)
        self.read_out = nn.Linear(s.d_model, s.vocab_size)

    @property
    def max_sequence_length(self) -> int | None:
        """The longest input this model has positions for: the learned table's length, else None (no limit)."""
        return self.settings.longest if self.scheme == "learned" else None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch, seq, vocab_size) for token ids of shape (batch, seq)."""
        check_tensor("ids", ids, ndim=(2,))
        if ids.dtype != torch.int64:
            raise TypeError(f"ids must be an int64 tensor of token ids, got dtype {ids.dtype}")
        if ids.numel() and not (0 <= int(ids.min()) and int(ids.max()) < self.settings.vocab_size):
            raise ValueError(f"ids must be token ids from 0 to {self.settings.vocab_size - 1}, got values up to {int(ids.max())}")
        limit = FORMULA_LENGTH if self.max_sequence_length is None else self.max_sequence_length
        if not 1 <= ids.shape[1] <= limit:
            raise ValueError(f"ids must have 1 to {limit} positions for the {self.scheme!r} scheme, got shape {tuple(ids.shape)}")
        check_table_fits((ids.shape[0], self.settings.num_heads, ids.shape[1], ids.shape[1]), torch.float32,
                         name="attention scores", arguments="batch or sequence length")
        x = self.embedding(ids)
        if self.position is not None:
            x = self.position(x)
        for block in self.blocks:
            x = block(x)
        return self.read_out(self.norm(x))


def previous_token_batch(*, batch_size: int, length: int, vocab_size: int,
                         generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Random token ids of shape (batch_size, length) and the answers: the token one position back.

    The answer at position 0 does not exist; it is -100, the index
    `nn.functional.cross_entropy` ignores.
    """
    batch_size = check_size("batch_size", batch_size, maximum=2**20)
    length = check_size("length", length, minimum=2, maximum=2**20)
    vocab_size = check_size("vocab_size", vocab_size, minimum=2, maximum=2**31)
    if batch_size * length > 2**24:
        raise ValueError(f"batch_size * length must be at most {2**24} token ids, got batch_size={batch_size}, length={length}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    ids = torch.randint(vocab_size, (batch_size, length), generator=generator)
    targets = torch.full_like(ids, -100)
    targets[:, 1:] = ids[:, :-1]
    return ids, targets


def evaluation_batch(*, length: int, settings: Settings | None = None, batch_size: int = 256,
                     seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed inputs and answers every model is scored on at `length` (a seed of its own, not training's)."""
    settings = Settings() if settings is None else _check_settings(settings)
    seed = check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    return previous_token_batch(batch_size=batch_size, length=length, vocab_size=settings.vocab_size,
                                generator=torch.Generator().manual_seed(seed))


def order_blind_accuracy(ids: torch.Tensor, targets: torch.Tensor) -> float:
    """How often the best guess that ignores order is right: the most frequent token among the others.

    At position t, a model without positions knows the token at t and how often each
    token occurs, nothing else. The previous token is then most likely the token that
    occurs most often once the one at t is set aside (ties are counted as a fair
    share). No order-blind model can do better on average; positions with target -100
    are not counted.
    """
    check_tensor("ids", ids, ndim=(2,))
    check_tensor("targets", targets, ndim=(2,))
    if ids.shape != targets.shape or ids.dtype != torch.int64 or targets.dtype != torch.int64:
        raise ValueError(f"ids and targets must be int64 tensors of one shape, got {tuple(ids.shape)} {ids.dtype} "
                         f"and {tuple(targets.shape)} {targets.dtype}")
    if ids.numel() == 0 or bool((ids < 0).any()) or int(ids.max()) >= 2**16:
        raise ValueError("ids must hold token ids from 0 to 65535, and at least one")
    vocab_size = int(ids.max()) + 1
    counts = nn.functional.one_hot(ids, vocab_size).sum(dim=1, keepdim=True)  # (batch, 1, vocab)
    others = counts - nn.functional.one_hot(ids, vocab_size)                  # (batch, seq, vocab)
    best = others == others.max(dim=-1, keepdim=True).values
    scored = targets != -100
    if not bool(scored.any()):
        raise ValueError("targets must have at least one position that is not -100")
    if bool((targets[scored] < 0).any()) or bool((targets[scored] >= vocab_size).any()):
        raise ValueError("targets must be token ids that occur in ids, or -100")
    hit = best.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1).float() / best.sum(-1)
    return float(hit[scored].mean())


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
    scheme = _check_scheme(scheme)
    settings = Settings() if settings is None else _check_settings(settings)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a function or None, got {type(progress).__name__}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(settings.seed)
        model = TinyTransformer(scheme=scheme, settings=settings)
        initial_state = {name: value.detach().clone() for name, value in model.state_dict().items()}
        optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
        generator = torch.Generator().manual_seed(settings.seed)
        losses = []
        start = time.perf_counter()
        model.train()
        for step in range(1, settings.steps + 1):
            length = int(torch.randint(settings.shortest, settings.longest + 1, (), generator=generator))
            ids, targets = previous_token_batch(batch_size=settings.batch_size, length=length,
                                                vocab_size=settings.vocab_size, generator=generator)
            logits = model(ids)
            loss = nn.functional.cross_entropy(logits.reshape(-1, settings.vocab_size), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if progress is not None and (step % 20 == 0 or step == settings.steps):
                progress(scheme, step, settings.steps, losses[-1])
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    model.eval()
    return Result(scheme, model, losses, seconds, initial_state)


def accuracy(model: TinyTransformer, *, length: int, batch_size: int = 256, seed: int = 1) -> float | None:
    """The share of positions t >= 1 where the model names the previous token, on fresh random inputs.

    None when the model has no positions for that length (a learned table shorter
    than `length`): there is no answer to score, which is the point.
    """
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model must be a posenc.experiment.TinyTransformer, got {type(model).__name__}")
    length = check_size("length", length, minimum=2, maximum=FORMULA_LENGTH)
    batch_size = check_size("batch_size", batch_size, maximum=4096)
    seed = check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    if model.max_sequence_length is not None and length > model.max_sequence_length:
        return None
    ids, targets = evaluation_batch(length=length, settings=model.settings, batch_size=batch_size, seed=seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():  # a few sequences at a time: the scores of long inputs are large
            predictions = torch.cat([model(chunk).argmax(dim=-1) for chunk in ids.split(EVALUATION_CHUNK)])
    finally:
        torch.set_num_threads(threads)
    return float((predictions == targets)[:, 1:].float().mean())


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
            lines.append(f"{scheme:<13}" + "".join("   no rows" if a is None else f"{a:>10.2f}" for a in by_length.values()))
        return "\n".join(lines)


def compare(schemes: Sequence[str] = SCHEMES, *, settings: Settings | None = None,
            lengths: Sequence[int] | None = None, progress: bool = True) -> Comparison:
    """Train one model per scheme and measure each at every length.

    `lengths` defaults to the longest trained length and 2x and 4x it. With
    `progress=True`, one line per model shows the step and the loss while it trains,
    then the seconds it took.
    """
    if isinstance(schemes, str) or not isinstance(schemes, Sequence) or not schemes:
        raise TypeError(f"schemes must be a non-empty list of names from {SCHEMES}, got {schemes!r}")
    for scheme in schemes:
        if not isinstance(scheme, str) or scheme not in SCHEMES:
            raise ValueError(f"schemes must hold names from {SCHEMES}, got {scheme!r} among them")
    settings = Settings() if settings is None else _check_settings(settings)
    if lengths is None:
        lengths = [settings.longest, 2 * settings.longest, 4 * settings.longest]
    if isinstance(lengths, str) or not isinstance(lengths, Sequence) or not lengths:
        raise TypeError(f"lengths must be a non-empty list of ints, got {lengths!r}")
    lengths = [check_size("lengths", n, minimum=2, maximum=FORMULA_LENGTH) for n in lengths]
    check_flag("progress", progress)

    def show(scheme: str, step: int, steps: int, loss: float) -> None:
        print(f"\r{scheme:<11} step {step:>4}/{steps}  loss {loss:.3f}", end="", flush=True)

    accuracies, results = {}, {}
    for scheme in schemes:
        results[scheme] = train(scheme, settings=settings, progress=show if progress else None)
        if progress:
            print(f"  trained in {results[scheme].seconds:.1f} s")
        accuracies[scheme] = {n: accuracy(results[scheme].model, length=n) for n in lengths}
    return Comparison(accuracies, results, settings)
