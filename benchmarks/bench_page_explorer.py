"""Key press to picture on screen, for the encoding explorer live in the site page (no kernel), in headless Chromium.

Builds the site page of notebooks/08_explore.ipynb (tools/build_site.py, that notebook only), makes its encoding
explorer live (tools/web/explorer/embed.py), serves it on 127.0.0.1 and opens it at 1280 x 720. For each case it
presses ArrowRight and ArrowLeft in turn on one slider, timing in the page from the keydown event to the first
animation frame after the explorer repainted its canvas (the same measure as benchmarks/browser_latency.py uses
for the kernel-bound explorer in JupyterLab), and the repaint itself (compute + draw, inside the input event).

Writes benchmarks/results/page_explorer.json with the median and 90th percentile of each. The target of issue 21:
a median of at most 16 ms (one frame at 60 Hz).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the browser and the page come from the tests' support
import lab_browser  # noqa: E402
from explorer_page import build_page, press_and_time  # noqa: E402

# (name, settings to start from, slider pressed, what a press recomputes in the page)
CASES = [
    ("heatmap, position", {"view": "heatmap"}, "position", "the two lines (the table and its image are kept)"),
    ("heatmap, d_model", {"view": "heatmap"}, "d_model", "a new 64 x 128 table and its image"),
    ("heatmap, d_model at 256 x 256", {"view": "heatmap", "max_sequence_length": 256, "d_model": 255}, "d_model",
     "a new 256 x 256 table and its image: the most the sliders ask for"),
    ("heatmap and concatenated layout, base", {"view": "heatmap", "compare_layouts": True}, "base",
     "a new table and two images"),
    ("curves, dimension", {"view": "curves"}, "dimension", "two columns of 400 + 64 points"),
    ("wavelengths, base", {"view": "wavelengths"}, "base", "a new table and the 128 wavelengths"),
    ("similarity, position", {"view": "similarity"}, "position", "one row of the kept similarity matrix"),
    ("similarity, d_model", {"view": "similarity"}, "d_model", "a new table and 64 x 64 similarity matrix"),
    ("similarity, d_model at 256 x 256", {"view": "similarity", "max_sequence_length": 256, "d_model": 255}, "d_model",
     "a new 256 x 256 table and 256 x 256 similarity matrix"),
]
START = {"max_sequence_length": 64, "d_model": 128, "base": 10_000, "position": 10, "dimension": 20,
         "compare_layouts": False}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "page_explorer.json")
    args = parser.parse_args()

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        build_page(workdir / "site")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                 functools.partial(QuietHandler, directory=str(workdir / "site")))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with lab_browser.chromium(workdir) as browser:
                page = browser.new_page()
                page.set_viewport_size({"width": 1280, "height": 720})
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/notebooks/08_explore.html", wait_until="load")
                page.wait_for_function("window.posencExplorer !== undefined")
                page.evaluate("document.querySelector('.posenc-live-explorer').scrollIntoView({block: 'start'})")
                for name, settings, slider, work in CASES:
                    page.evaluate("s => window.posencExplorer.set(s)", {**START, **settings})
                    samples = press_and_time(page, slider, args.presses)
                    totals, paints = [s["total"] for s in samples], [s["paint"] for s in samples]
                    results[name] = {"median_ms": round(statistics.median(totals), 2),
                                     "p90_ms": round(percentile(totals, 0.9), 2),
                                     "repaint_median_ms": round(statistics.median(paints), 2),
                                     "repaint_p90_ms": round(percentile(paints, 0.9), 2), "presses": len(samples),
                                     "slider": slider, "page_work": work}
                    print(f"{name:<40} median {results[name]['median_ms']:5.1f} ms  p90 {results[name]['p90_ms']:5.1f} ms  "
                          f"(repaint {results[name]['repaint_median_ms']:4.1f} ms)", flush=True)
        finally:
            with contextlib.suppress(Exception):
                server.shutdown()
    report = {"what": "keydown on a slider of the live encoding explorer in the site page of notebook 08 to the first "
                      "animation frame after its canvas was repainted, headless Chromium at 1280 x 720, no kernel; "
                      "repaint = computing and drawing inside the input event",
              "target_median_ms": 16, "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end",
              "cases": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
