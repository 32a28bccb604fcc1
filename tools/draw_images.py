"""Redraw every figure in images/ from posenc.plots (run by `make images`).

The PNGs carry no date or software stamp, so running this twice changes nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from posenc import plots

ROOT = Path(__file__).resolve().parent.parent

FIGURES = {
    # The pipeline with the running example's sizes (posenc.tokens.EXAMPLE_*), whole and with each notebook's steps.
    "pipeline.png": lambda: plots.pipeline_diagram(),
    "pipeline_tokens.png": lambda: plots.pipeline_diagram(highlight=("sentence", "pad", "one-hot")),
    "pipeline_embedding.png": lambda: plots.pipeline_diagram(highlight=("one-hot", "X")),
    "pipeline_encoding.png": lambda: plots.pipeline_diagram(highlight=("X + PE",)),
    "pipeline_attention.png": lambda: plots.pipeline_diagram(highlight=("X + PE", "Q, K, V", "attention")),
    "pipeline_heads.png": lambda: plots.pipeline_diagram(highlight=("Q, K, V", "attention"),
                                                         note="Q, K, V and attention, cut into heads"),
    "transformer.png": lambda: plots.transformer_diagram(),
    "stack_flatten.png": lambda: plots.interleave_diagram(d_model=6, rows=3),
    "stack_flatten_odd.png": lambda: plots.interleave_diagram(d_model=7, rows=3),
    # From the committed measurements (`make bench` measures anew and redraws it).
    "benchmark_encoding.png": lambda: plots.benchmark_figure(
        json.loads((ROOT / "benchmarks" / "results" / "encoding.json").read_text())),
}


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name, draw in FIGURES.items():
        plots.save_png(draw(), out / name)
        print(out / name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "images")
