"""Training and evaluation: the one training loop every experiment uses, and the previous-token experiment.

    fit, predictions        the one training loop (AdamW, one thread) and the one evaluation
    train, compare          the previous-token experiment (`task.previous_token_batch`): one model per scheme,
                            scored at the trained length and beyond (`accuracy`, on `evaluation_batch`)
    attention_map           what a trained model's block attends to; `previous_token_head` finds the head
                            that looks back one token, `weight_by_offset` how far back that head looks, and
                            `score_by_pair` each RoPE pair's part of its scores

Everything is seeded and trains on one thread, so a run gives the same numbers on any number of cores (the last
digits can still move with the CPU's kernels).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from .._checks import FLAG, SEED, check_size, check_tensor, checked, instance_of, is_real, list_of, one_of, short, size
from ..task import previous_token_batch
from .transformer import FORMULA_LENGTH, SCHEMES, Settings, TinyTransformer, _settings_or_default

__all__ = ["Result", "fit", "predictions", "train", "accuracy", "evaluation_batch", "Comparison",
           "compare", "attention_map", "previous_token_head", "weight_by_offset", "score_by_pair"]

# Sequences scored at once by `accuracy`.
EVALUATION_CHUNK = 16
_MODEL = instance_of(TinyTransformer)
Progress = Callable[[str, int, int, float], None]


def _progress_rule(*, flag: bool) -> Callable[[str, object], object]:
    """The rule for `progress`: a function or None (with flag=True, also True or False)."""
    def rule(name: str, value: object) -> object:
        if not (value is None or callable(value) or (flag and isinstance(value, bool))):
            raise TypeError(f"{name} must be a function or None{', or True or False' if flag else ''}, got {short(value)}")
        return value
    return rule


def _at_least_two_positions(name: str, value: object) -> torch.Tensor:
    if check_tensor(name, value, ndim=(2,)).shape[1] < 2:
        raise ValueError(f"{name} must have 2 positions or more (a query with a previous token), got {tuple(value.shape)}")
    return value


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


@dataclass
class Result:
    """A trained model, its loss per step, the seconds training took and its parameters before training."""

    scheme: str
    model: TinyTransformer
    losses: list[float] = field(repr=False)
    seconds: float
    initial_state: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)


def fit(model: TinyTransformer, *, name: str, batch: Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]],
        steps: int, shortest: int, longest: int, learning_rate: float, seed: int, progress: Progress | None = None
        ) -> Result:
    """`steps` AdamW steps on one thread, each on `batch(length, generator)` with a length drawn from shortest..longest.

    The one training loop of the package: `train` (previous token), `copy_task.train_copy` and `copy_task.fine_tune`
    (repeat the block) call it, and check what they pass. `batch(length, generator)` returns (ids, targets), targets
    -100 where nothing is scored; `progress(name, step, steps, loss)` is called every 20 steps and at the end.
    """
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
            ids, targets = batch(length, generator)  # (B, T) each
            logits = model(ids)  # (B, T, V)
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


def predictions(model: TinyTransformer, ids: torch.Tensor) -> torch.Tensor:
    """The token `model` names at every position of ids, `(batch, seq)`: the evaluation `accuracy` and
    `copy_task.copy_accuracy` share, on one thread, a few sequences at a time (the scores of long inputs are large)."""
    with one_thread(), torch.no_grad():
        return torch.cat([model(chunk).argmax(dim=-1) for chunk in ids.split(EVALUATION_CHUNK)])


@checked(scheme=one_of(SCHEMES), settings=_settings_or_default(Settings), progress=_progress_rule(flag=False))
def train(scheme: str, *, settings: Settings | None = None, progress: Progress | None = None) -> Result:
    """Train a `TinyTransformer` with `scheme` on the previous-token task, seeded, on one thread.

    Every step draws a batch of one length from `settings.shortest..settings.longest`.
    `progress(scheme, step, steps, loss)` is called every 20 steps and at the end.
    """
    with one_thread():
        torch.manual_seed(settings.seed)
        model = TinyTransformer(scheme=scheme, settings=settings)

    def batch(length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return previous_token_batch(batch_size=settings.batch_size, length=length, vocab_size=settings.vocab_size,
                                    generator=generator)

    return fit(model, name=scheme, batch=batch, steps=settings.steps, shortest=settings.shortest,
               longest=settings.longest, learning_rate=settings.learning_rate, seed=settings.seed, progress=progress)


@checked(settings=_settings_or_default(Settings), seed=SEED)
def evaluation_batch(*, length: int, settings: Settings | None = None, batch_size: int = 256,
                     seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed inputs and answers every model is scored on at `length` (a seed of its own, not training's)."""
    return previous_token_batch(batch_size=batch_size, length=length, vocab_size=settings.vocab_size,
                                generator=torch.Generator().manual_seed(seed))


@checked(model=_MODEL, length=size(2, FORMULA_LENGTH), batch_size=size(1, 4096), seed=SEED)
def accuracy(model: TinyTransformer, *, length: int, batch_size: int = 256, seed: int = 1) -> float | None:
    """The share of positions t >= 1 where the model names the previous token, on fresh random inputs.

    None when the model has no positions for that length (a learned table shorter
    than `length`): there is no answer to score, which is the point.
    """
    if model.max_sequence_length is not None and length > model.max_sequence_length:
        return None
    ids, targets = evaluation_batch(length=length, settings=model.settings, batch_size=batch_size, seed=seed)
    return float((predictions(model, ids) == targets)[:, 1:].float().mean())


@dataclass
class Comparison:
    """What `compare` measured: accuracy per scheme and length, and each trained model."""

    accuracies: dict[str, dict[int, float | None]]
    results: dict[str, Result] = field(repr=False)
    settings: Settings

    def table(self, lengths: Sequence[int] | None = None) -> str:
        """The accuracies as a text table, one row per scheme ("no rows" where a learned table ends).

        `lengths` picks the columns, some of the measured lengths (by default all of them).
        """
        measured = list(next(iter(self.accuracies.values())))
        lengths = measured if lengths is None else list(lengths)
        if not set(lengths) <= set(measured):
            raise ValueError(f"lengths must be among the measured ones, {measured}; got {lengths}")
        lines = ["scheme       " + "".join(f"{n:>10}" for n in lengths)]
        for scheme, by_length in self.accuracies.items():
            cells = ("   no rows" if by_length[n] is None else f"{by_length[n]:>10.2f}" for n in lengths)
            lines.append(f"{scheme:<13}" + "".join(cells))
        return "\n".join(lines)


_LENGTHS = list_of(size(2, FORMULA_LENGTH))


@checked(schemes=list_of(one_of(SCHEMES)), settings=_settings_or_default(Settings),
         lengths=lambda name, value: None if value is None else _LENGTHS(name, value), progress=FLAG)
def compare(schemes: Sequence[str] = SCHEMES, *, settings: Settings | None = None,
            lengths: Sequence[int] | None = None, progress: bool = True) -> Comparison:
    """Train one model per scheme and measure each at every length.

    `lengths` defaults to the longest trained length and 2x and 4x it. With
    `progress=True`, one line per model shows its step and loss while it trains (in
    Jupyter, updated in place), then the seconds it took. The finished line leaves out
    the last loss, so it does not give away the accuracies an exercise asks about.
    """
    if lengths is None:
        lengths = [settings.longest, 2 * settings.longest, 4 * settings.longest]
    lines = ProgressLines(show_loss=False) if progress else None
    accuracies, results = {}, {}
    for scheme in schemes:
        results[scheme] = train(scheme, settings=settings, progress=lines.step if lines else None)
        if lines:
            lines.done(results[scheme])
        accuracies[scheme] = {n: accuracy(results[scheme].model, length=n) for n in lengths}
    return Comparison(accuracies, results, settings)


@checked(model=_MODEL)
def attention_map(model: TinyTransformer, ids: torch.Tensor, *, layer: int = 0) -> torch.Tensor:
    """What block `layer` of `model` attends to for `ids`: its attention weights, (batch, num_heads, seq, seq).

    Row i of head h holds how much query i takes from each key j; every row sums to 1.
    A model that names the previous token well has a head whose weight sits on j = i - 1.
    """
    layer = check_size("layer", layer, minimum=0, maximum=len(model.blocks) - 1)
    with one_thread(), torch.no_grad():
        model(ids)
    return model.blocks[layer].attention.last_weights.clone()


@checked(model=_MODEL, ids=_at_least_two_positions)
def previous_token_head(model: TinyTransformer, ids: torch.Tensor) -> tuple[int, int]:
    """(layer, head): the head of `model` that gives the previous token the most weight (layer = block index).

    The weight query t gives key t - 1, averaged over the sequences of `ids` and over
    the queries t = 1 .. settings.longest - 1 (the positions the model was trained on).
    """
    trained = min(ids.shape[1], model.settings.longest)
    with one_thread(), torch.no_grad():
        model(ids)
    # Entry t - 1 of the diagonal just below the main one is query t's weight on key t - 1.
    looks_back = torch.stack([block.attention.last_weights.diagonal(offset=-1, dim1=-2, dim2=-1)[..., : trained - 1]
                              .mean(dim=(0, 2)) for block in model.blocks])  # (layers, heads)
    layer, head = divmod(int(looks_back.argmax()), model.settings.num_heads)
    return layer, head


@checked(model=_MODEL, ids=_at_least_two_positions)
def weight_by_offset(model: TinyTransformer, ids: torch.Tensor, *, queries: range) -> dict[int, float]:
    """Where the `previous_token_head` of `model` looks from `queries`: {offset: weight}, the largest weight first.

    The offset is the key's position minus the query's, as the schemes notebook counts it (-1: the previous token;
    positive: the key is ahead). The weights are averaged over the sequences of `ids` and over the queries, so they add up to
    1. Offsets that get no weight at all (keys a causal mask hides) are left out.
    """
    layer, head = previous_token_head(model, ids)
    rows = torch.tensor(list(queries))
    weights = attention_map(model, ids, layer=layer)[:, head].mean(dim=0)[rows]  # (queries, keys)
    length = ids.shape[1]
    offsets = torch.arange(length)[None, :] - rows[:, None] + length - 1  # index o + length - 1 holds offset o
    by_offset = torch.zeros(2 * length - 1).index_add_(0, offsets.flatten(), weights.flatten()) / len(rows)
    return {int(i) - length + 1: float(by_offset[i]) for i in by_offset.argsort(descending=True) if by_offset[i] > 0}


def _back(name: str, value: object) -> int:
    """A whole number of places back; negative for a key ahead of its query."""
    if not is_real(value, whole=True):
        raise TypeError(f"{name} must be a whole number of places back (negative: a key ahead), got {short(value)}")
    return int(value)


@checked(model=_MODEL, ids=_at_least_two_positions, backs=list_of(_back))
def score_by_pair(model: TinyTransformer, ids: torch.Tensor, *, backs: Sequence[int]) -> dict[int, torch.Tensor]:
    """Each RoPE pair's part of the `previous_token_head`'s score for a key `back` places before its query.
    A negative `back` is a key ahead; the part is taken before any causal mask, so a decoder has one there too.

    The score is q . k / sqrt(head_dim), before the softmax, and q . k is a sum over the head's column pairs.
    {back: one part per pair}, each averaged over the sequences of `ids` and over every query with a key `back`
    before it, so the parts of one `back` add up to the head's average score there. `model` must be a rotary one.
    """
    if model.scheme != "rotary" or max(abs(back) for back in backs) >= ids.shape[1]:
        raise ValueError(f"score_by_pair needs a rotary model and backs shorter than the {ids.shape[1]} positions of "
                         f"ids, got a {model.scheme!r} model and backs={short(backs)}")
    layer, head = previous_token_head(model, ids)
    block = model.blocks[layer]
    with one_thread(), torch.no_grad():
        x = model.embed(ids)
        for earlier in model.blocks[:layer]:
            x = earlier(x)
        # W_Q, W_K and W_V side by side, as Attention.forward splits them: (B, T, 3, heads, head_dim)
        qkv = block.attention.qkv(block.norm1(x)).unflatten(-1, (3, block.attention.num_heads, -1))
        q, k = (block.attention.rotate(qkv[:, :, part, head]) for part in (0, 1))  # each (B, T, head_dim)
        # [i, j, p]: pair p's part of query i's score for key j, averaged over the sequences
        by_pair = (q[:, :, None] * k[:, None]).unflatten(-1, (-1, 2)).sum(-1).mean(0) / q.shape[-1] ** 0.5
    return {back: by_pair.diagonal(offset=-back).mean(-1) for back in backs}


# A progress line per model ------------------------------------------------------------------------------------------


class ProgressLines:
    """One line per model: its step and loss while it trains, then what training took.

    In a Jupyter kernel the lines are one display, replaced in place at every update, so
    a learner watches them move and the saved notebook keeps only the finished lines.
    Anywhere else only the finished lines are printed, one per model.
    """

    def __init__(self, show_loss: bool = True) -> None:
        self.show_loss = show_loss  # whether the finished line ends with the last loss
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
        line = f"{result.scheme:<11} trained in {result.seconds:.1f} s: {len(result.losses)} steps"
        if self.show_loss:
            line += f", last loss {result.losses[-1]:.3f}"
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


def _progress_lines(progress: object) -> tuple[Progress | None, ProgressLines | None]:
    """The step callback `progress` asks for (True, False, None or a function), and the lines to finish, if any."""
    if progress is True:
        lines = ProgressLines()
        return lines.step, lines
    if progress is None or progress is False:
        return None, None
    return progress, None


def _finish(result: Result, lines: ProgressLines | None) -> Result:
    if lines is not None:
        lines.done(result)
    return result
