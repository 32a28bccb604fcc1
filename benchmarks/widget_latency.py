"""How long an explorer takes from a slider change to an updated picture, against two references.

Run with `make bench`. All three are measured in one process on the same figure
(the heatmap of a d_model 128 x 64-position table, 8 x 4.6 inches at 100 dpi),
interleaved round by round:

    floor     update the existing image artist (`set_data`) and draw the canvas with Agg:
              what any in-place redraw pays, before the picture is even encoded
    naive     what an `interact` example does: a new table and a new figure on every change,
              then the PNG that the inline backend sends
    explorer  posenc.explorers.EncodingExplorer: from setting a slider's value to new PNG bytes
              in its Image widget (a position step, a d_model step, a base step)

Writes benchmarks/results/widget_latency.json with medians and ratios.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from pathlib import Path

import matplotlib
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg

from posenc import plots
from posenc.encoding import sinusoidal_encoding
from posenc.explorers import EncodingExplorer

ROOT = Path(__file__).resolve().parent.parent
D_MODEL, LENGTH = 128, 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "widget_latency.json")
    args = parser.parse_args()

    table = sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL)
    floor_figure = plots.encoding_heatmap(table, annotate=False)
    floor_canvas = FigureCanvasAgg(floor_figure)
    floor_image = floor_figure.axes[0].images[0]

    def floor(step: int) -> None:
        floor_image.set_data((table * (1 if step % 2 else -1)).numpy())
        floor_canvas.draw()

    def naive(step: int) -> None:
        fig = plots.encoding_heatmap(sinusoidal_encoding(max_sequence_length=LENGTH, d_model=D_MODEL - step % 2),
                                     annotate=False)
        fig.savefig(io.BytesIO(), format="png", dpi=plots.DPI)

    explorer = EncodingExplorer(d_model=D_MODEL, max_sequence_length=LENGTH, position=10)

    def explorer_position(step: int) -> None:
        explorer.position.value = 11 - step % 2  # always a new value

    def explorer_d_model(step: int) -> None:
        explorer.d_model.value = D_MODEL - 1 + step % 2

    def explorer_base(step: int) -> None:
        explorer.base.value = 1000.0 if step % 2 == 0 else 10000.0

    contenders = {"floor": floor, "naive": naive, "explorer_position": explorer_position,
                  "explorer_d_model": explorer_d_model, "explorer_base": explorer_base}
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for step in range(args.rounds + 3):
        for name, change in contenders.items():
            before = explorer.redraws
            start = time.perf_counter()
            change(step)
            elapsed = time.perf_counter() - start
            if name.startswith("explorer") and explorer.redraws != before + 1:
                raise RuntimeError(f"{name}: the explorer did not redraw exactly once")
            if step >= 3:  # the first rounds warm caches and fonts
                samples[name].append(elapsed)

    medians = {name: statistics.median(values) for name, values in samples.items()}
    explorer_names = [n for n in contenders if n.startswith("explorer")]
    report = {
        "figure": {"d_model": D_MODEL, "max_sequence_length": LENGTH, "inches": list(floor_figure.get_size_inches()),
                   "dpi": plots.DPI},
        "matplotlib": matplotlib.__version__,
        "torch": torch.__version__,
        "rounds": args.rounds,
        "median_ms": {name: 1e3 * value for name, value in medians.items()},
        "p90_ms": {name: 1e3 * sorted(values)[int(0.9 * len(values))] for name, values in samples.items()},
        "explorer_over_floor": {n: medians[n] / medians["floor"] for n in explorer_names},
        "naive_over_explorer": {n: medians["naive"] / medians[n] for n in explorer_names},
        "targets": {"explorer_over_floor_at_most": 1.5, "naive_over_explorer_at_least": 2.0},
    }
    for name in contenders:
        print(f"{name:<18} median {report['median_ms'][name]:7.1f} ms   p90 {report['p90_ms'][name]:7.1f} ms")
    for name in explorer_names:
        print(f"{name:<18} {report['explorer_over_floor'][name]:.2f}x the floor, "
              f"{report['naive_over_explorer'][name]:.2f}x faster than naive")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
