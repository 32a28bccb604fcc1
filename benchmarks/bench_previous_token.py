"""The "previous token" experiment (`posenc.models`) over seeds, with every claim its notebook makes asserted.

    .venv/bin/python benchmarks/bench_previous_token.py          train, save, then assert (a few minutes, one thread)
    .venv/bin/python benchmarks/bench_previous_token.py --check  only assert the claims on the saved results
    .venv/bin/python benchmarks/bench_previous_token.py --encoder-heads  retrain only the encoders whose heads the
                                                                         notebook draws, and rewrite those heads
    .venv/bin/python benchmarks/bench_previous_token.py --pair-peaks      retrain only the rotary encoders and
                                                                          decoders, and write where each RoPE
                                                                          pair's part of their head peaks
    .venv/bin/python benchmarks/bench_previous_token.py --embedding-rows  retrain only the sinusoidal models of the
                                                                          embedding-factor runs, and write how long
                                                                          their token rows are

Trained with `transformer.Settings` defaults (seeds 0-2), each scheme both ways:

    encoder   no causal mask (causal=False), the notebook's first five models
    decoder   causal=True, every scheme (the notebook trains all five live, seed 0)

Each model is scored (`training.accuracy`: 256 inputs, evaluation seed 1) at 8 and 16 tokens (trained) and
32 and 64 (2x and 4x) after 250 steps, the notebook's setting, and after 500 (the "more steps" its
"Try it yourself" offers); the decoder without positions also after 1,000 and 2,000 steps. A checkpoint is
the same model `training.train` returns for that many steps (the learning rate is constant; the script
checks it once). Also: the previous-token head's weights (`training.previous_token_head`) of the encoders
at 32 tokens and of the rotary decoder at 64; and the embedding factor of the notebook's exercise 4,
sinusoidal over seeds 0-9 and rotary over seeds 0-2, with and without `scale_embeddings` (and, for sinusoidal,
the mean length of the trained token rows, factor included).

Writes benchmarks/results/previous_token.json (lists over seeds, rounded to 3 decimals; no timestamps,
no paths), then asserts each claim with its margin, printing the worst seed against the bound, and
exits with status 1 if any claim fails.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

from posenc import task
from posenc.models import training, transformer

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "benchmarks" / "results" / "previous_token.json"
SEEDS = (0, 1, 2)
SCALE_SEEDS = tuple(range(10))
LENGTHS = (8, 16, 32, 64)
CHECKPOINTS = (250, 500)
NONE_CHECKPOINTS = (250, 500, 1000, 2000)
UNSEEN = 15   # the largest offset between two trained positions


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def train_with_checkpoints(scheme: str, settings: transformer.Settings, checkpoints: tuple[int, ...]) -> dict:
    """{steps: accuracies at LENGTHS} and {steps: model} at each checkpoint, for a model trained as
    `training.train` trains it. `training.fit` draws one batch per step, so the batch
    function is where step k has just ended: it scores the model there, then draws the next batch."""
    settings = dataclasses.replace(settings, steps=max(checkpoints))
    scores: dict[int, dict[int, float | None]] = {}
    models: dict[int, transformer.TinyTransformer] = {}
    steps_done = 0

    def score() -> dict[int, float | None]:
        return {n: _rounded(training.accuracy(model, length=n)) for n in LENGTHS}

    def batch(length: int, generator: torch.Generator):
        nonlocal steps_done
        if steps_done in checkpoints:
            scores[steps_done] = score()
            models[steps_done] = copy.deepcopy(model).eval()
        steps_done += 1
        return task.previous_token_batch(batch_size=settings.batch_size, length=length,
                                               vocab_size=settings.vocab_size, generator=generator)

    # What `training.train` does, with the batch function above.
    torch.manual_seed(settings.seed)
    model = transformer.TinyTransformer(scheme=scheme, settings=settings)
    result = training.fit(model, name=scheme, batch=batch, steps=settings.steps, shortest=settings.shortest,
                            longest=settings.longest, learning_rate=settings.learning_rate, seed=settings.seed,
                            progress=None)
    scores[settings.steps] = score()
    models[settings.steps] = result.model
    return {"accuracy": scores, "models": models, "losses": result.losses}


def previous_token_weights(model: transformer.TinyTransformer, length: int) -> tuple[str, torch.Tensor, torch.Tensor]:
    """The previous-token head (chosen on the trained positions), its weight on key i - 1 for each query i
    (mean over the 256 evaluation inputs), and its weights (inputs, query, key), at `length` tokens."""
    ids, _ = training.evaluation_batch(length=length, settings=model.settings)
    layer, head = training.previous_token_head(model, ids)
    weights = training.attention_map(model, ids, layer=layer)[:, head]
    back = weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=0)  # entry i - 1 is query i's weight on i - 1
    return f"layer {layer}, head {head}", back, weights


def encoder_heads(model: transformer.TinyTransformer) -> dict:
    """What the notebook's attention figure reads, at 32 tokens: the head's weight on i - 1 by query; and, at 64
    tokens, the head's weight on offset -1 from queries 48-63 (the encoder's line beside the rotary decoder's)."""
    name, back, weights = previous_token_weights(model, 32)
    others = weights.mean(dim=0)  # (query, key): the mean weight, then key i - 1 of each query i left out
    others[torch.arange(1, 32), torch.arange(31)] = -1.0
    long_ids, _ = training.evaluation_batch(length=64, settings=model.settings)
    late = training.weight_by_offset(model, long_ids, queries=range(48, 64))
    return {"head": name, "min_1_31": _rounded(back.min()), "mean_1_8": _rounded(back[:8].mean()),
            "mean_17_31": _rounded(back[16:].mean()), "min_1_7": _rounded(back[:7].min()),
            "max_17_31": _rounded(back[16:].max()), "back_48_63_at_64": _rounded(late.get(-1, 0.0)),
            # queries 1-15: the weight on key i - 1 less the most on any other key, at its smallest
            "lead_1_15": _rounded((back[:15] - others[1:16].max(dim=-1).values).min())}


def pair_peaks(model: transformer.TinyTransformer) -> dict:
    """At 64 tokens, the offset (key - query, -31 to 31: one turn of RoPE pair 1) where each pair's part of the
    previous-token head's score, averaged over the inputs and over every query with a key there, is largest. The part
    is taken before the causal mask, so a decoder has one for keys ahead too."""
    ids, _ = training.evaluation_batch(length=64, settings=model.settings)
    layer, head = training.previous_token_head(model, ids)
    block = model.blocks[layer]
    with torch.no_grad():
        x = model.embed(ids)
        for earlier in model.blocks[:layer]:
            x = earlier(x)
        qkv = block.attention.qkv(block.norm1(x)).unflatten(-1, (3, block.attention.num_heads, -1))
        q, k = (block.attention.rotate(qkv[:, :, part, head]) for part in (0, 1))
        by_pair = (q[:, :, None] * k[:, None]).unflatten(-1, (-1, 2)).sum(-1).mean(0)  # [query, key, pair]
    parts = torch.stack([by_pair.diagonal(offset=o).mean(-1) for o in range(-31, 32)])  # [offset + 31, pair]
    return {"head": f"layer {layer}, head {head}", "peak_offsets": [int(i) - 31 for i in parts.argmax(dim=0)]}


def refresh_pair_peaks(record: dict) -> dict:
    """Retrain the rotary encoders and decoders (250 steps, each seed) and write where each pair's part of their
    previous-token head peaks; their saved heads must come out the same, so the peaks describe the same models."""
    peaks: dict = {"encoder": [], "decoder": []}
    for k, seed in enumerate(SEEDS):
        encoder = training.train("rotary", settings=transformer.Settings(seed=seed)).model
        assert encoder_heads(encoder) == record["heads"]["encoder"]["rotary"][k], seed
        decoder = training.train("rotary", settings=transformer.Settings(causal=True, seed=seed)).model
        assert decoder_heads(decoder) == record["heads"]["decoder_rotary"][k], seed
        peaks["encoder"].append(pair_peaks(encoder))
        peaks["decoder"].append(pair_peaks(decoder))
    record["pair_peaks_rotary"] = peaks
    return record


def token_row_length(model: transformer.TinyTransformer) -> float:
    """The mean length of the token rows the first block reads, the factor included (a PE row is sqrt(d_model / 2))."""
    return float((model.embedding.weight.detach() * model.embedding_scale).norm(dim=1).mean())


def refresh_embedding_rows(record: dict) -> dict:
    """Retrain the sinusoidal models of the embedding-factor runs (250 steps, each seed, with and without the factor)
    and write their token rows' mean length; their accuracies must come out as saved, so the lengths describe the
    same models."""
    scale = record["embedding_scale"]
    for scaled in (True, False):
        key = "scaled" if scaled else "unscaled"
        lengths = []
        for k, seed in enumerate(scale["seeds"]["sinusoidal"]):
            model = training.train("sinusoidal", settings=transformer.Settings(seed=seed, scale_embeddings=scaled)).model
            for n in (16, 32):
                assert _rounded(training.accuracy(model, length=n)) == scale["accuracy"]["sinusoidal"][key][str(n)][k], \
                    (key, seed, n)
            lengths.append(_rounded(token_row_length(model)))
        scale.setdefault("token_row_length", {}).setdefault("sinusoidal", {})[key] = lengths
    return record


def refresh_encoder_heads(record: dict) -> dict:
    """Retrain the sinusoidal and rotary encoders (250 steps, each seed) and rewrite their heads in `record`; the
    fields saved before must come out the same, so the new ones describe the same models."""
    for scheme in ("sinusoidal", "rotary"):
        fresh = [encoder_heads(training.train(scheme, settings=transformer.Settings(seed=seed)).model) for seed in SEEDS]
        for old, new in zip(record["heads"]["encoder"][scheme], fresh):
            assert all(new[key] == value for key, value in old.items()), (scheme, old, new)
        record["heads"]["encoder"][scheme] = fresh
    return record


def decoder_heads(model: transformer.TinyTransformer) -> dict:
    """The causal rotary model at 64 tokens: per-position accuracy, and where its previous-token head looks."""
    name, back, weights = previous_token_weights(model, 64)
    ids, targets = training.evaluation_batch(length=64, settings=model.settings)
    with torch.no_grad():
        right = torch.cat([model(chunk).argmax(dim=-1) for chunk in ids.split(16)]) == targets
    by_position = right.float().mean(dim=0)  # entry t: query t (t = 0 is not scored)
    offsets = torch.arange(64)[:, None] - torch.arange(64)[None, :]
    late = weights[:, 48:].mean(dim=0)  # (queries 48-63, keys)
    late_offsets = offsets[48:]
    per_offset = torch.zeros(64).index_add_(0, late_offsets.clamp(min=0).flatten(),
                                            (late * (late_offsets >= 0)).flatten()) / 16
    top = per_offset.argsort(descending=True)[:2]
    return {"head": name,
            "accuracy_1_31": _rounded(by_position[1:32].mean()), "accuracy_48_63": _rounded(by_position[48:].mean()),
            "first_position_below_0.9": int(next(t for t in range(1, 64) if by_position[t] < 0.9)),
            "back_1_15": _rounded(back[:15].mean()), "back_48_63": _rounded(back[47:].mean()),
            # Query 39, the first with a key 39 back (key 0): its weight there and on the key just before it.
            "query_39_on_39_back": _rounded(weights[:, 39, 0].mean()), "query_39_on_1_back": _rounded(back[38]),
            "unseen_offsets_48_63": _rounded(per_offset[UNSEEN + 1:].sum()),
            "top_offsets_48_63": {str(int(o)): _rounded(per_offset[o]) for o in top}}  # keys by how far back (query - key)


def run() -> dict:
    torch.set_num_threads(1)
    defaults = transformer.Settings()
    record: dict = {
        "what": "previous-token accuracy (training.accuracy: 256 inputs, evaluation seed 1), a list over seeds; "
                "transformer.Settings defaults, one thread",
        "command": ".venv/bin/python benchmarks/bench_previous_token.py",
        "torch": torch.__version__.split("+")[0],
        "settings": dataclasses.asdict(defaults),
        "seeds": list(SEEDS),
        "lengths": list(LENGTHS),
        "order_blind": {},
        "accuracy": {"encoder": {}, "decoder": {}},
        "heads": {"encoder": {}, "decoder_rotary": []},
        "embedding_scale": {"seeds": {"sinusoidal": list(SCALE_SEEDS), "rotary": list(SEEDS)}, "accuracy": {}},
    }
    for mode, causal in (("encoder", False), ("decoder", True)):
        record["order_blind"][mode] = {str(n): _rounded(task.order_blind_accuracy(
            *training.evaluation_batch(length=n, settings=defaults), causal=causal)) for n in LENGTHS}
    start = time.perf_counter()
    for mode, causal in (("encoder", False), ("decoder", True)):
        table = record["accuracy"][mode]
        for scheme in transformer.SCHEMES:
            checkpoints = NONE_CHECKPOINTS if causal and scheme == "none" else CHECKPOINTS
            for seed in SEEDS:
                settings = transformer.Settings(causal=causal, seed=seed)
                out = train_with_checkpoints(scheme, settings, checkpoints)
                for steps, by_length in out["accuracy"].items():
                    for n, value in by_length.items():
                        table.setdefault(str(steps), {}).setdefault(scheme, {}).setdefault(str(n), []).append(value)
                if mode == "decoder" and scheme == "none" and seed == SEEDS[0]:
                    # A checkpoint is the model training.train returns for that many steps: check it once.
                    plain = training.train(scheme, settings=dataclasses.replace(settings, steps=CHECKPOINTS[0]))
                    assert plain.losses == out["losses"][: CHECKPOINTS[0]], "the checkpointed run left train's path"
                    assert {n: _rounded(training.accuracy(plain.model, length=n)) for n in LENGTHS} == \
                        out["accuracy"][CHECKPOINTS[0]], "a checkpoint scores differently from train's model"
                model_250 = out["models"][250]  # the notebook's models
                if scheme in ("sinusoidal", "rotary") and mode == "encoder":
                    record["heads"]["encoder"].setdefault(scheme, []).append(encoder_heads(model_250))
                if scheme == "rotary" and mode == "decoder":
                    record["heads"]["decoder_rotary"].append(decoder_heads(model_250))
                if scheme == "rotary":
                    record.setdefault("pair_peaks_rotary", {"encoder": [], "decoder": []})[mode].append(
                        pair_peaks(model_250))
                print(f"{mode} {scheme} seed {seed}: {json.dumps(out['accuracy'])} "
                      f"({time.perf_counter() - start:.0f} s so far)", flush=True)
    scale = record["embedding_scale"]["accuracy"]
    for scheme, seeds in (("sinusoidal", SCALE_SEEDS), ("rotary", SEEDS)):
        for scaled in (True, False):
            for seed in seeds:
                settings = transformer.Settings(seed=seed, scale_embeddings=scaled)
                model = training.train(scheme, settings=settings).model
                for n in (16, 32):
                    scale.setdefault(scheme, {}).setdefault("scaled" if scaled else "unscaled", {}).setdefault(
                        str(n), []).append(_rounded(training.accuracy(model, length=n)))
                if scheme == "sinusoidal":
                    record["embedding_scale"].setdefault("token_row_length", {}).setdefault(scheme, {}).setdefault(
                        "scaled" if scaled else "unscaled", []).append(_rounded(token_row_length(model)))
        print(f"embedding scale {scheme}: {json.dumps(scale[scheme])} ({time.perf_counter() - start:.0f} s so far)",
              flush=True)
    print(f"{time.perf_counter() - start:.0f} s of training and scoring", flush=True)
    return record


# The claims ------------------------------------------------------------------------------------------------

class Claims:
    """Each claim: the values over seeds (and lengths), a bound, and the margin by which the worst one clears it."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def check(self, text: str, values: list[float | None], *, above: float | None = None,
              below: float | None = None) -> None:
        if any(v is None for v in values):
            self.rows.append({"claim": text, "holds": False, "worst": None, "bound": above if below is None else below,
                              "margin": None})
            return
        if above is not None:
            worst, margin, bound = min(values), min(values) - above, above
        else:
            worst, margin, bound = max(values), below - max(values), below
        self.rows.append({"claim": text, "holds": margin > 0, "worst": round(worst, 4), "bound": round(bound, 4),
                          "margin": round(margin, 4)})

    def report(self) -> bool:
        for row in self.rows:
            mark = "✔" if row["holds"] else "✘"
            print(f"{mark} {row['claim']}: worst {row['worst']} against {row['bound']} (margin {row['margin']})")
        failed = [row for row in self.rows if not row["holds"]]
        print(f"{len(self.rows) - len(failed)} of {len(self.rows)} claims hold")
        return not failed


def ceiling(length: int) -> float:
    """The symmetric-ALiBi encoder's best possible accuracy: 0.55 at a position with two neighbours, 1 at the last."""
    return ((length - 2) * 0.55 + 1) / (length - 1)


def check_claims(record: dict) -> Claims:
    claims = Claims()
    lengths = record["lengths"]
    blind, causal_blind = record["order_blind"]["encoder"], record["order_blind"]["decoder"]

    def acc(mode: str, scheme: str, n: int, steps: int = 250) -> list[float | None]:
        return record["accuracy"][mode][str(steps)][scheme][str(n)]

    def minus(a: list, b: list | float) -> list:
        b = b if isinstance(b, list) else [b] * len(a)
        return [None if x is None or y is None else x - y for x, y in zip(a, b, strict=True)]

    for steps in (250, 500):
        s = f" ({steps} steps)"
        # The encoder: the first figure, its checks, "Distances without directions" and "Reading the picture".
        claims.check("encoder none: at most 0.05 above the order-blind guess, every length" + s,
                     [v for n in lengths for v in minus(acc("encoder", "none", n, steps), blind[str(n)])], below=0.05)
        claims.check("encoder learned, sinusoidal, rotary: above 0.95 at 8 and 16" + s,
                     [v for sch in ("learned", "sinusoidal", "rotary") for n in (8, 16)
                      for v in acc("encoder", sch, n, steps)], above=0.95)
        claims.check("learned: no rows (None) at 32 and 64" + s,
                     [0.0 if v is None else 1.0 for mode in ("encoder", "decoder") for n in (32, 64)
                      for v in acc(mode, "learned", n, steps)], below=0.5)
        claims.check("encoder sinusoidal: below 0.9 at 32" + s, acc("encoder", "sinusoidal", 32, steps), below=0.9)
        claims.check("encoder sinusoidal: at 64, more than 0.3 below its accuracy at 16" + s,
                     minus(acc("encoder", "sinusoidal", 64, steps), acc("encoder", "sinusoidal", 16, steps)),
                     below=-0.3)
        claims.check("encoder rotary: above 0.95 at 32 (carries over)" + s, acc("encoder", "rotary", 32, steps),
                     above=0.95)
        claims.check("encoder rotary: above 0.9 at 64 (carries over)" + s, acc("encoder", "rotary", 64, steps),
                     above=0.9)
        claims.check("encoder alibi (symmetric): between 0.4 and 0.7 at every length, low side" + s,
                     [v for n in lengths for v in acc("encoder", "alibi", n, steps)], above=0.4)
        claims.check("encoder alibi (symmetric): between 0.4 and 0.7 at every length, high side" + s,
                     [v for n in lengths for v in acc("encoder", "alibi", n, steps)], below=0.7)
        # The ceiling bounds the expected accuracy, not one sample's: at 8 tokens (256 x 7 = 1,792 scored positions,
        # a standard error of about 0.012) a model at the ceiling can score above it, as seed 2 does after 500 steps
        # (0.618 against 0.614). The notebook's claim is "below it at every length after 250 steps"; after 500 the
        # benchmark asserts it from 16 on.
        ceiling_lengths = lengths if steps == 250 else [n for n in lengths if n >= 16]
        claims.check(f"encoder alibi (symmetric): below its ceiling ((L-2) 0.55 + 1)/(L-1) at {ceiling_lengths}" + s,
                     [v for n in ceiling_lengths for v in minus(acc("encoder", "alibi", n, steps), ceiling(n))],
                     below=0.0)
        claims.check("exercise 1: encoder alibi at 16 is far above the order-blind guess (not option a)" + s,
                     minus(acc("encoder", "alibi", 16, steps), blind["16"]), above=0.2)
        # The summary: without positions, and with symmetric ALiBi, the encoder never learns the task.
        claims.check("encoder none and alibi: below 0.9 at every length (never learn)" + s,
                     [v for sch in ("none", "alibi") for n in lengths for v in acc("encoder", sch, n, steps)],
                     below=0.9)
        # The decoder.
        claims.check("decoder none: more than 0.3 above the causal order-blind guess at 16" + s,
                     minus(acc("decoder", "none", 16, steps), causal_blind["16"]), above=0.3)
        claims.check("decoder none: above 0.75 at 16 (most of the order)" + s, acc("decoder", "none", 16, steps),
                     above=0.75)
        claims.check("decoder none: between 0.45 and 0.8 at 32 (exercise 3, option b), low side" + s,
                     acc("decoder", "none", 32, steps), above=0.45)
        claims.check("decoder none: between 0.45 and 0.8 at 32 (exercise 3, option b), high side" + s,
                     acc("decoder", "none", 32, steps), below=0.8)
        claims.check("decoder none: more than 0.1 above the causal order-blind guess at every length" + s,
                     [v for n in lengths for v in minus(acc("decoder", "none", n, steps), causal_blind[str(n)])],
                     above=0.1)
        claims.check("decoder alibi: above 0.95 at every length, 4x included" + s,
                     [v for n in lengths for v in acc("decoder", "alibi", n, steps)], above=0.95)
        claims.check("decoder learned, sinusoidal, rotary: above 0.95 at 8 and 16" + s,
                     [v for sch in ("learned", "sinusoidal", "rotary") for n in (8, 16)
                      for v in acc("decoder", sch, n, steps)], above=0.95)
        claims.check("decoder rotary: above 0.95 at 32" + s, acc("decoder", "rotary", 32, steps), above=0.95)
        claims.check("decoder rotary: below 0.8 at 64 (falls at 4x)" + s, acc("decoder", "rotary", 64, steps),
                     below=0.8)
        claims.check("decoder sinusoidal: below 0.7 at 32" + s, acc("decoder", "sinusoidal", 32, steps), below=0.7)
        claims.check("decoder sinusoidal: below 0.45 at 64" + s, acc("decoder", "sinusoidal", 64, steps), below=0.45)
        claims.check("decoder none at 64: more than 0.05 above decoder sinusoidal" + s,
                     minus(acc("decoder", "none", 64, steps), acc("decoder", "sinusoidal", 64, steps)), above=0.05)
        claims.check("decoder none at 64: more than 0.1 below decoder rotary" + s,
                     minus(acc("decoder", "none", 64, steps), acc("decoder", "rotary", 64, steps)), below=-0.1)
        claims.check("decoder none at 64: more than 0.3 below decoder alibi" + s,
                     minus(acc("decoder", "none", 64, steps), acc("decoder", "alibi", 64, steps)), below=-0.3)
    # The decoder without positions, trained longer: the gap at the trained length is mostly too few steps.
    claims.check("decoder none at 16: below 0.9 after 250 steps", acc("decoder", "none", 16), below=0.9)
    claims.check("decoder none at 16: above 0.85 after 250 steps (exercise 3: 'nearly 9 times in 10')",
                 acc("decoder", "none", 16), above=0.85)
    claims.check("decoder none at 16: above 0.95 after 2,000 steps", acc("decoder", "none", 16, 2000), above=0.95)
    claims.check("decoder none at 16: 2,000 steps close more than half of the gap to 1 left after 250 (most of it)",
                 [(1 - late) / (1 - early) for early, late in zip(acc("decoder", "none", 16),
                                                                  acc("decoder", "none", 16, 2000), strict=True)],
                 below=0.5)
    claims.check("decoder none at 16: about 0.5 above the causal order-blind guess (0.45 to 0.55), low side",
                 minus(acc("decoder", "none", 16), causal_blind["16"]), above=0.45)
    claims.check("decoder none at 16: about 0.5 above the causal order-blind guess (0.45 to 0.55), high side",
                 minus(acc("decoder", "none", 16), causal_blind["16"]), below=0.55)
    claims.check("decoder none at 64: still more than 0.3 below decoder alibi (250 steps) after 2,000 steps",
                 minus(acc("decoder", "none", 64, 2000), acc("decoder", "alibi", 64)), below=-0.3)
    # Where the heads look.
    enc = record["heads"]["encoder"]
    claims.check("encoder rotary head: more than 0.8 on the previous token at every position up to 31",
                 [h["min_1_31"] for h in enc["rotary"]], above=0.8)
    claims.check("encoder rotary head: in layer 0, which reads tokens without positions (so its RoPE score is a function "
                 "of the two tokens and their offset)", [int(h["head"].split(",")[0].split()[1]) for h in enc["rotary"]],
                 below=0.5)
    claims.check("encoder sinusoidal head: more than 0.5 on the previous token at each position 1-7",
                 [h["min_1_7"] for h in enc["sinusoidal"]], above=0.5)
    claims.check("encoder sinusoidal head: at each position 1-15, more weight on the previous token than on any other key "
                 "(exercise 2, option a)", [h["lead_1_15"] for h in enc["sinusoidal"]], above=0.0)
    claims.check("encoder sinusoidal head: less than 0.3 on the previous token at each position 17-31",
                 [h["max_17_31"] for h in enc["sinusoidal"]], below=0.3)
    claims.check("encoder rotary head at 64 tokens: more than 0.8 on offset -1 from queries 48-63 (where the rotary "
                 "decoder's head puts less than 0.1)", [h["back_48_63_at_64"] for h in enc["rotary"]], above=0.8)
    dec = record["heads"]["decoder_rotary"]
    claims.check("decoder rotary: right at least 0.99 of the time at positions 1-31 of 64",
                 [h["accuracy_1_31"] for h in dec], above=0.99)
    claims.check("decoder rotary: right less than 0.2 of the time at positions 48-63",
                 [h["accuracy_48_63"] for h in dec], below=0.2)
    claims.check("decoder rotary: accuracy first below 0.9 at about position 39 (38 or later), before any key is 45 "
                 "back", [h["first_position_below_0.9"] for h in dec], above=37.5)
    claims.check("decoder rotary: accuracy first below 0.9 at about position 39 (39 or earlier)",
                 [h["first_position_below_0.9"] for h in dec], below=39.5)
    claims.check("decoder rotary head at query 39: more than 0.3 of its weight on the key 39 back (key 0)",
                 [h["query_39_on_39_back"] for h in dec], above=0.3)
    claims.check("decoder rotary head at query 39: the keys 1 and 39 back take more than 0.8 of its weight between them",
                 [h["query_39_on_39_back"] + h["query_39_on_1_back"] for h in dec], above=0.8)
    claims.check("decoder rotary head: more than 0.85 on the previous token at positions 1-15",
                 [h["back_1_15"] for h in dec], above=0.85)
    claims.check("decoder rotary head: less than 0.1 on the previous token at positions 48-63",
                 [h["back_48_63"] for h in dec], below=0.1)
    claims.check("decoder rotary head: more than 0.9 of its weight on offsets never seen in training (> 15), "
                 "positions 48-63", [h["unseen_offsets_48_63"] for h in dec], above=0.9)
    claims.check("decoder rotary head: keys 45 and 51 back (offsets -45 and -51, key - query) take more than half of "
                 "its weight at positions 48-63",
                 [sum(v for o, v in h["top_offsets_48_63"].items() if o in ("45", "51")) for h in dec], above=0.5)
    # Why the rotary decoder's far keys win and the encoder's do not: pair 1 (0.1 radian a token) turns once in about 63
    # tokens, so 49-51 back has the angle of a key 12-14 ahead. The decoder's pair 1 peaks there, at keys its mask hides;
    # the encoder, which sees keys up to 15 ahead, peaks next to offset 0.
    peaks = record["pair_peaks_rotary"]
    claims.check("decoder rotary head: pair 1's part peaks at a key 10 or more ahead, which the mask hides",
                 [p["peak_offsets"][1] for p in peaks["decoder"]], above=9.5)
    claims.check("decoder rotary head: pair 1's part peaks at most 15 ahead",
                 [p["peak_offsets"][1] for p in peaks["decoder"]], below=15.5)
    claims.check("encoder rotary head: pair 1's part peaks within 3 of offset 0",
                 [abs(p["peak_offsets"][1]) for p in peaks["encoder"]], below=3.5)
    # Exercise 4 (option a: sinusoidal loses more; rotary changes by less than 0.02) and the paragraph after it.
    scale = record["embedding_scale"]["accuracy"]
    gain = minus(scale["sinusoidal"]["scaled"]["32"], scale["sinusoidal"]["unscaled"]["32"])
    # What 14 and its Exercise 4 feedback rest on ("in every seed we tried"), with the margins the results file had when
    # the notebook printed them: gains 0.06 to 0.16, means 57% and 47%, at least 99.9% at 16 tokens.
    claims.check("sinusoidal: the factor raises accuracy at 32 in every seed 0-9, by 0.06 or more (rounded)", gain,
                 above=0.055)
    claims.check("sinusoidal: ... and by 0.16 or less (rounded)", gain, below=0.165)
    for scaled, percent in (("scaled", 57), ("unscaled", 47)):
        mean = sum(scale["sinusoidal"][scaled]["32"]) / len(scale["sinusoidal"][scaled]["32"])
        claims.check(f"sinusoidal, {scaled}: {percent}% on average at 32 over seeds 0-9, low side", [mean],
                     above=percent / 100 - 0.005)
        claims.check(f"sinusoidal, {scaled}: {percent}% on average at 32 over seeds 0-9, high side", [mean],
                     below=percent / 100 + 0.005)
    claims.check("sinusoidal: at least 0.999 at 16 with and without the factor",
                 scale["sinusoidal"]["scaled"]["16"] + scale["sinusoidal"]["unscaled"]["16"], above=0.9985)
    # Exercise 4's feedback: after training, a PE row (sqrt(d_model / 2) = 4 long) still outweighs the mean token row
    # "about two to one" with the factor and "four to one" without it (at the start: 0.6 and 0.1 long).
    pe_row = (record["settings"]["d_model"] / 2) ** 0.5
    rows = record["embedding_scale"]["token_row_length"]["sinusoidal"]
    for scaled, low, high in (("scaled", 1.5, 2.5), ("unscaled", 3.5, 4.75)):
        ratio = [pe_row / v for v in rows[scaled]]
        claims.check(f"sinusoidal, {scaled}: a PE row over the trained token rows' mean length, seeds 0-9, "
                     f"above {low}", ratio, above=low)
        claims.check(f"sinusoidal, {scaled}: ... and below {high}", ratio, below=high)
    rotary_change = minus(scale["rotary"]["scaled"]["32"], scale["rotary"]["unscaled"]["32"])
    claims.check("rotary: the factor changes accuracy at 32 by less than 0.02 (seeds 0-2)",
                 [abs(v) for v in rotary_change], below=0.02)
    claims.check("exercise 4: sinusoidal loses more than rotary without the factor, every seed",
                 minus(gain[: len(rotary_change)], rotary_change), above=0.0)
    return claims


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="assert the claims on the saved results, no training")
    parser.add_argument("--encoder-heads", action="store_true",
                        help="retrain only the sinusoidal and rotary encoders and rewrite their heads in the saved results")
    parser.add_argument("--pair-peaks", action="store_true",
                        help="retrain only the rotary encoders and decoders and write where each RoPE pair's part peaks")
    parser.add_argument("--embedding-rows", action="store_true",
                        help="retrain only the sinusoidal models of the embedding-factor runs and write their token rows' "
                             "lengths in the saved results")
    args = parser.parse_args()
    if args.check:
        record = json.loads(OUTPUT.read_text())
    elif args.encoder_heads or args.embedding_rows or args.pair_peaks:
        torch.set_num_threads(1)
        record = json.loads(OUTPUT.read_text())
        if args.encoder_heads:
            record = refresh_encoder_heads(record)
        if args.embedding_rows:
            record = refresh_embedding_rows(record)
        if args.pair_peaks:
            record = refresh_pair_peaks(record)
        OUTPUT.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {OUTPUT.relative_to(ROOT)}")
    else:
        record = run()
        OUTPUT.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0 if check_claims(record).report() else 1


if __name__ == "__main__":
    sys.exit(main())
