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
    # The pipeline with the running example's values (posenc.example), for the site's front page. Notebooks 00-07 draw
    # theirs in a cell, from their own values, so that a change of the example reaches their pictures too.
    "pipeline.png": lambda: plots.pipeline_diagram(),
    "transformer.png": lambda: plots.transformer_diagram(),
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
