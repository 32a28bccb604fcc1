"""The copy experiment of notebook 16, "Stretching the context", over seeds 0-5 instead of the notebook's one.

Run with `.venv/bin/python benchmarks/bench_stretching.py` (about 5 minutes on one thread; `--no-partial`
skips the second pass, `--seeds 0 1` picks seeds). For each seed, `posenc.stretch` with its
defaults (`CopySettings(seed=seed)`): train the model on inputs up to 32 tokens, then score the
repeat (`copy_accuracy`, 256 inputs, evaluation seed 1) at 1x / 2x / 4x the trained length
(32 / 64 / 128 tokens) with each stretching rule applied at inference:

    none                  plain RoPE, the trained frequencies
    linear                position interpolation (PI)
    ntk                   "NTK-aware" (a larger base)
    yarn                  YaRN: NTK-by-parts frequencies and its attention factor
    yarn_no_temperature   the same frequencies, attention factor 1 (what the factor is worth)
    llama3                Llama 3.1's rule

and two 100-step fine-tunes at inputs up to 64 tokens (`fine_tune`, factor 2): with PI
(`linear_fine_tuned`) and, as the control, without any rule (`none_fine_tuned`).
A second pass repeats none and yarn with half of each head rotated (partial_rotary_factor 0.5).
At 1x every rule is factor 1, plain RoPE: the one number is stored under every rule.

Also, without training: `one_token_match`, the accuracy of a strategy that uses no position at all,
on 4,096 random inputs per length (its expected accuracy on each, computed exactly): at each scored
token, pick one of the earlier places holding the current token at random, and predict the token
that followed it there.

Writes benchmarks/results/stretching.json, after every seed (so a cut run leaves what it finished):
accuracy[rotation][rule][length] is a list over `seeds`, rounded to 3 decimals. No timestamps, no paths.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import torch

from posenc import stretch
from posenc.task import repeat_block_batch

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "benchmarks" / "results" / "stretching.json"
SEEDS = (0, 1, 2, 3, 4, 5)
FACTORS = (1, 2, 4)
RULES = ("none", "linear", "ntk", "yarn", "yarn_no_temperature", "llama3")
PARTIAL_RULES = ("none", "yarn")
PARTIAL_ROTARY_FACTOR = 0.5
FINE_TUNE_STEPS = 100
FINE_TUNE_FACTOR = 2
MATCH_INPUTS = 4096
MATCH_SEED = 2


def _rounded(x: float) -> float:
    return round(float(x), 3)


def _model_for(model, rule: str, factor: int):
    """`model` with `rule` applied at inference for an input `factor` times the trained length."""
    if factor == 1 or rule == "none":
        return model
    if rule == "yarn_no_temperature":
        copied = stretch.stretched(model, scaling="yarn", factor=float(factor))
        for block in copied.blocks:
            block.attention.attention_factor = 1.0
        return copied
    return stretch.stretched(model, scaling=rule, factor=float(factor))


def one_seed(seed: int, *, rules: tuple[str, ...], partial_rotary_factor: float, fine_tunes: bool) -> dict:
    settings = stretch.CopySettings(seed=seed, partial_rotary_factor=partial_rotary_factor)
    result = stretch.train_copy(settings=settings)
    trained_length = 2 * settings.longest_block
    out: dict[str, dict[str, float]] = {}
    at_1x = stretch.copy_accuracy(result.model, length=trained_length)
    for rule in rules:
        out[rule] = {str(trained_length): _rounded(at_1x)}
        for factor in FACTORS[1:]:
            length = factor * trained_length
            out[rule][str(length)] = _rounded(stretch.copy_accuracy(_model_for(result.model, rule, factor), length=length))
    if fine_tunes:
        for rule, scaling in (("linear_fine_tuned", "linear"), ("none_fine_tuned", None)):
            # scaling None is the control: the same steps on the same longer inputs, plain RoPE
            tuned = stretch.fine_tune(result.model, scaling=scaling, factor=float(FINE_TUNE_FACTOR),
                                      steps=FINE_TUNE_STEPS)
            out[rule] = {str(length): _rounded(stretch.copy_accuracy(tuned.model, length=length))
                         for length in (trained_length, FINE_TUNE_FACTOR * trained_length)}
    out["final_loss"] = _rounded(result.losses[-1])
    return out


def one_token_match(length: int, *, vocab_size: int, inputs: int, generator: torch.Generator) -> float:
    """Expected accuracy of "predict what followed the current token at a random earlier place of it": no position."""
    ids, targets = repeat_block_batch(batch_size=inputs, block_length=length // 2, vocab_size=vocab_size,
                                      generator=generator)
    correct, total = 0.0, 0
    for chunk_ids, chunk_targets in zip(ids.split(256), targets.split(256), strict=True):
        positions = torch.arange(length)
        # earlier[b, t, p]: place p < t holds the current token x_t; what followed it, x_(p+1), was seen (p + 1 <= t)
        earlier = (chunk_ids[:, None, :] == chunk_ids[:, :, None]) & (positions[None, :] < positions[:, None])
        followers = torch.nn.functional.one_hot(chunk_ids.roll(-1, dims=1), vocab_size).float()
        counts = earlier.float() @ followers  # (batch, t, symbol): how often each symbol followed x_t before
        scored = chunk_targets != -100  # every scored x_t occurs earlier (in the block), so counts.sum > 0 there
        # one earlier place picked at random: right with probability (places followed by the answer) / (places)
        hit = counts.gather(-1, chunk_targets.clamp(min=0)[..., None])[..., 0] / counts.sum(dim=-1).clamp(min=1)
        correct += float(hit[scored].sum())
        total += int(scored.sum())
    return correct / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--no-partial", action="store_true", help="skip the partial-rotation pass")
    parser.add_argument("--match-only", action="store_true",
                        help="only (re)compute one_token_match, into the existing JSON (no training)")
    args = parser.parse_args()
    seeds = list(args.seeds)
    defaults = stretch.CopySettings()
    trained_length = 2 * defaults.longest_block
    record: dict = {
        "what": "copy_accuracy on the repeat (256 inputs, evaluation seed 1) per rule and input length, "
                "a list over seeds; posenc.stretch defaults, one thread",
        "command": ".venv/bin/python benchmarks/bench_stretching.py",
        "torch": torch.__version__.split("+")[0],
        "settings": dataclasses.asdict(defaults),
        "seeds": seeds,
        "lengths": [f * trained_length for f in FACTORS],
        "fine_tune": {"steps": FINE_TUNE_STEPS, "factor": FINE_TUNE_FACTOR, "seed": stretch.FINE_TUNE_SEED,
                      "control": "none_fine_tuned: the same steps on the same longer inputs, plain RoPE"},
        "partial_rotary_factor": PARTIAL_ROTARY_FACTOR,
        "accuracy": {},
        "final_loss": {},
    }
    if args.match_only:
        record = json.loads(OUTPUT.read_text())
        _add_match(record, vocab_size=defaults.vocab_size, trained_length=trained_length)
        OUTPUT.write_text(json.dumps(record, indent=1) + "\n")
        return
    passes = [("full", RULES, 1.0, True)]
    if not args.no_partial:
        passes.append(("partial", PARTIAL_RULES, PARTIAL_ROTARY_FACTOR, False))
    for rotation, rules, factor, fine_tunes in passes:
        table: dict[str, dict[str, list[float]]] = {}
        record["accuracy"][rotation] = table
        record["final_loss"][rotation] = []
        for seed in seeds:
            out = one_seed(seed, rules=rules, partial_rotary_factor=factor, fine_tunes=fine_tunes)
            record["final_loss"][rotation].append(out.pop("final_loss"))
            for rule, by_length in out.items():
                for length, value in by_length.items():
                    table.setdefault(rule, {}).setdefault(length, []).append(value)
            print(rotation, "seed", seed, json.dumps(out), flush=True)
            OUTPUT.write_text(json.dumps(record, indent=1) + "\n")
    _add_match(record, vocab_size=defaults.vocab_size, trained_length=trained_length)
    OUTPUT.write_text(json.dumps(record, indent=1) + "\n")


def _add_match(record: dict, *, vocab_size: int, trained_length: int) -> None:
    generator = torch.Generator().manual_seed(MATCH_SEED)
    record["one_token_match"] = {str(f * trained_length): _rounded(one_token_match(
        f * trained_length, vocab_size=vocab_size, inputs=MATCH_INPUTS, generator=generator)) for f in FACTORS}
    print("one-token match (no position):", record["one_token_match"], flush=True)


if __name__ == "__main__":
    main()
