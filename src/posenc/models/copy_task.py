"""The copy-task stretching experiment: a causal RoPE TinyTransformer on "repeat the block", stretched past its length.

    CopySettings      the experiment's sizes: blocks of shortest_block..longest_block symbols, RoPE's base and share
    copy_model        the untrained model (a causal "rotary" TinyTransformer); `train_copy` trains it
    stretched         a copy whose RoPE frequencies follow a rule of `rope_scaling` (PI, NTK, YaRN, Llama 3.1)
    fine_tune         a stretched copy trained a few more steps at the longer length
    copy_accuracy     the share of the repeat the model gets right, at any even length
    saved_results     the experiment over seeds 0-5, as benchmarks/bench_stretching.py saved it

Inputs are `task.repeat_block_batch`: a block of random symbols, then the block again; the repeat is scored.
"""

from __future__ import annotations

import copy
import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import torch

from .._checks import SEED, check_base, checked, instance_of, one_of, optional_size, real, size
from ..rope_scaling import SCALINGS, rope_frequencies, yarn_attention_factor
from ..task import repeat_block_batch
from .training import Progress, Result, _finish, _progress_lines, _progress_rule, fit, one_thread, predictions
from .transformer import Settings, TinyTransformer, _check_fields, _settings_or_default

__all__ = ["CopySettings", "copy_model", "train_copy", "stretched", "fine_tune", "copy_accuracy", "rotary_dim_of",
           "saved_results"]

# `fine_tune`'s batches: a seed of their own, apart from `copy_accuracy`'s evaluation seed (1) and the
# training seeds (CopySettings.seed), so that no fine-tuning batch shares its random stream with the inputs scored.
FINE_TUNE_SEED = 1000
# Longest block `copy_accuracy` and `fine_tune` accept (inputs of twice this): the tiny model's formula limit.
LONGEST_BLOCK = 1024


# Each block size of `CopySettings`: (field, minimum, maximum).
_BLOCK_SIZES = (("shortest_block", 2, 256), ("longest_block", "shortest_block", 256))


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
        _check_fields(self, _BLOCK_SIZES)
        _model_settings(self)  # the model's own sizes, checked by the Settings they make
        optional_size(maximum=512)("head_dim", self.head_dim)
        check_base("base", self.base)
        real(0, 1, low_open=True)("partial_rotary_factor", self.partial_rotary_factor)  # the share of a head RoPE turns
        rotary_dim_of(self)  # an even number of columns to turn


def _model_settings(settings: CopySettings) -> Settings:
    """The TinyTransformer's settings: a decoder (causal) trained on inputs of 2 * shortest_block .. 2 * longest_block."""
    return Settings(vocab_size=settings.vocab_size, shortest=2 * settings.shortest_block,
                    longest=2 * settings.longest_block, d_model=settings.d_model, num_heads=settings.num_heads,
                    num_layers=settings.num_layers, steps=settings.steps, batch_size=settings.batch_size,
                    learning_rate=settings.learning_rate, causal=True, seed=settings.seed)


def _head_dim(settings: CopySettings) -> int:
    return settings.d_model // settings.num_heads if settings.head_dim is None else settings.head_dim


def rotary_dim_of(settings: CopySettings) -> int:
    """The columns of each head RoPE turns: int(head_dim * partial_rotary_factor), as transformers computes it."""
    head_dim, factor = _head_dim(settings), settings.partial_rotary_factor
    rotary_dim = int(head_dim * factor)
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"partial_rotary_factor={factor!r} turns {rotary_dim} of {head_dim} columns; it must be even, >= 2")
    return rotary_dim


def _copy_model_rule(name: str, value: object) -> TinyTransformer:
    if not isinstance(value, TinyTransformer) or not isinstance(getattr(value, "copy_settings", None), CopySettings):
        raise TypeError(f"{name} must be a model from copy_task.copy_model or train_copy, got {type(value).__name__}")
    return value


# The factor s a context is stretched by: from 1 to LONGEST_BLOCK (fine_tune's blocks must still fit).
_stretch_factor = real(1, LONGEST_BLOCK)


@checked(settings=_settings_or_default(CopySettings))
def copy_model(settings: CopySettings | None = None) -> TinyTransformer:
    """An untrained causal RoPE TinyTransformer for the copy task, seeded by `settings.seed`.

    Its weights are those of `TinyTransformer(scheme="rotary")` with the same
    sizes and seed; its heads are `head_dim` wide and turn their first `rotary_dim_of(settings)`
    columns. The CopySettings are kept as `model.copy_settings`.
    """
    torch.manual_seed(settings.seed)
    model = TinyTransformer(scheme="rotary", settings=_model_settings(settings), head_dim=_head_dim(settings),
                            rotary_dim=rotary_dim_of(settings), base=settings.base)
    model.copy_settings = settings
    return model


def _train(model: TinyTransformer, *, name: str, steps: int, shortest_block: int, longest_block: int,
           seed: int, progress: Progress | None) -> Result:
    """`steps` AdamW steps on the copy task, each on one block length drawn from shortest_block..longest_block."""
    s = model.copy_settings

    def batch(block_length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return repeat_block_batch(batch_size=s.batch_size, block_length=block_length, vocab_size=s.vocab_size,
                                  generator=generator)  # (B, 2 * block_length) each

    return fit(model, name=name, batch=batch, steps=steps, shortest=shortest_block, longest=longest_block,
               learning_rate=s.learning_rate, seed=seed, progress=progress)


@checked(settings=_settings_or_default(CopySettings), progress=_progress_rule(flag=True))
def train_copy(*, settings: CopySettings | None = None, progress: bool | Progress | None = None) -> Result:
    """Train `copy_model(settings)` on "repeat the block", seeded, on one thread; a `Result`.

    Every step draws one block length from shortest_block..longest_block and a batch of
    batch_size blocks; the loss is cross-entropy on the repeated half (`repeat_block_batch`).
    A function `progress(name, step, steps, loss)` is called every 20 steps and at the
    end; `progress=True` shows one line, updated in place in Jupyter, as `compare` does.
    """
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
    # Not @checked: `rope_frequencies` checks factor and the trained length, which it would not do inside a checked body.
    model, scaling = _copy_model_rule("model", model), one_of(SCALINGS)("scaling", scaling)
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


@checked(model=_copy_model_rule, scaling=one_of(SCALINGS), factor=_stretch_factor, steps=size(1, 100_000), seed=SEED,
         progress=_progress_rule(flag=True))
def fine_tune(model: TinyTransformer, *, scaling: str | None = "linear", factor: float = 2.0, steps: int = 100,
              seed: int = FINE_TUNE_SEED, progress: bool | Progress | None = None) -> Result:
    """`stretched(model, scaling=scaling, factor=factor)`, trained `steps` more steps at the longer length.

    The blocks are drawn from shortest_block..int(factor * longest_block), so inputs up to
    factor times the trained length. This is how position interpolation is meant to be
    used: its paper fine-tunes after interpolating, "within 1000 steps" (Chen et al.
    2023, abstract). `model` is not changed; training draws its batches with `seed`.
    `progress` as in `train_copy`. With `scaling=None` the frequencies stay plain RoPE's and
    `factor` sets only the longer inputs: the control, the same fine-tuning without a rule.
    """
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


@checked(model=_copy_model_rule, length=size(4, 2 * LONGEST_BLOCK), batch_size=size(1, 4096), seed=SEED)
def copy_accuracy(model: TinyTransformer, *, length: int, batch_size: int = 256, seed: int = 1) -> float:
    """The share of the scored tokens of the repeat that `model` predicts, on fresh inputs of `length` tokens.

    `length` (even) is twice the block: blocks of length // 2 random symbols, each repeated;
    scored are the tokens of the repeat after its first (`repeat_block_batch`). The inputs
    come from their own generator, seeded by `seed`: every model is scored on the same ones.
    """
    if length % 2:
        raise ValueError(f"length must be even, a block and its repeat, got {length}")
    ids, targets = repeat_block_batch(batch_size=batch_size, block_length=length // 2,
                                      vocab_size=model.copy_settings.vocab_size,
                                      generator=torch.Generator().manual_seed(seed))  # (B, length) each
    scored = targets != -100
    return float((predictions(model, ids) == targets)[scored].float().mean())


# Where `saved_results` finds the saved runs: in the repository (a checkout, found from the working directory or this
# file), else the copy committed on GitHub (the package installed alone, as on Colab).
RESULTS = Path("benchmarks") / "results" / "stretching.json"
RESULTS_URL = "https://raw.githubusercontent.com/posenc/posenc/main/benchmarks/results/stretching.json"


def saved_results() -> dict:
    """The stretching experiment over seeds 0-5, as `benchmarks/bench_stretching.py` saved it.

    `["accuracy"][rotation][rule][length]` is a list over `["seeds"]` ("full" or "partial" rotation; lengths
    as strings, "32", "64", "128"); the rules by the package's names, plain RoPE "none" and PI "linear".
    `["one_token_match"][length]` is the baseline's accuracy.
    """
    for root in (Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents):
        if (root / RESULTS).is_file():
            return json.loads((root / RESULTS).read_text())
    with urllib.request.urlopen(RESULTS_URL, timeout=30) as response:  # noqa: S310  a fixed https address
        return json.loads(response.read())


def _saved_results(name: str, value: object) -> dict:
    """The rule for what `saved_results()` returns: a dict with the runs' accuracies, seeds and one-token match."""
    instance_of(dict, "the dict saved_results() returns")(name, value)
    if not {"accuracy", "seeds", "one_token_match"} <= value.keys() or not isinstance(value["accuracy"], dict) \
            or not {"full", "partial"} <= value["accuracy"].keys():
        raise ValueError(f"{name} must be the dict saved_results() returns, with 'accuracy' ('full' and 'partial'), "
                         "'seeds' and 'one_token_match'")
    return value


@checked(saved=_saved_results)
def head_width_comparison(saved: dict) -> dict:
    """Keyword arguments for `plots.accuracy_over_seeds`: plain RoPE, PI and YaRN with whole and with half heads.

    `saved` is `saved_results()`. Panels at 64 tokens (2x, `factor` 2) and 128 (4x, `factor` 4), the one-token match
    and chance as reference lines; only the seeds at 0.90 or more at 32 tokens with both head widths count as learned.
    """
    heads = {"whole": saved["accuracy"]["full"], "half": saved["accuracy"]["partial"]}
    rules = {"plain": "none", "PI": "linear", "YaRN": "yarn"}
    lengths = {"64 tokens (2x)": "64", "128 tokens (4x)": "128"}
    learned = [seed for k, seed in enumerate(saved["seeds"]) if min(t["none"]["32"][k] for t in heads.values()) >= 0.9]
    panels = {title: {f"{name}, {kind}": table[rule][n] for name, rule in rules.items() for kind, table in heads.items()}
              for title, n in lengths.items()}
    references = {"one-token match": {title: saved["one_token_match"][n] for title, n in lengths.items()},
                  "chance, 1/32": {title: 1 / 32 for title in lengths}}
    return {"panels": panels, "seeds": saved["seeds"], "learned": learned, "references": references,
            "shaded": [f"{name}, half" for name in rules], "shaded_are": "half heads",
            "others_are": "learned with one head width only, not in the medians",
            "tags": {"one-token match": "one-token match"}}
